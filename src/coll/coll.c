/*
 * Internal collectives over point-to-point (see coll.h). Simple, correct
 * algorithms: dissemination barrier, binomial-tree broadcast, linear gather;
 * they carry the library's own bookkeeping (a few words), not user data.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "coll/coll.h"
#include "core/config.h"
#include "core/datatype.h"
#include "core/errors.h"
#include "core/log.h"
#include "core/request.h"
#include "core/runtime.h"
#include "progress/progress.h"
#include "pt2pt/pt2pt.h"

static struct plx_request *plx_coll_start_ctx(int kind, void *buf, size_t n, int peer, int tag, struct plx_comm *c,
                                              int ctx)
{
    struct plx_request *r = plx_request_new(kind, c);
    r->rank = peer;
    r->tag = tag;
    r->ctx = ctx;
    r->buf = buf;
    r->count = (MPI_Aint)n;
    r->dt = plx_dt_lookup(MPI_BYTE);
    r->mode = PLX_MODE_STD;
    plx_status_t st = kind == PLX_REQ_SEND ? plx_pt2pt_send_start(r) : plx_pt2pt_recv_start(r);
    if (st != PLX_OK) {
        r->cc = 0;
        r->st_error = MPI_ERR_OTHER;
    }
    return r;
}

static struct plx_request *plx_coll_start(int kind, void *buf, size_t n, int peer, int tag, struct plx_comm *c)
{
    return plx_coll_start_ctx(kind, buf, n, peer, tag, c, c->context_id + 1);
}

/* Waits for r and frees it; PLX_ERR_* if it failed. */
static plx_status_t plx_coll_finish(struct plx_request *r)
{
    plx_progress_wait_req(r);
    plx_status_t st = r->st_error == MPI_SUCCESS                             ? PLX_OK
                      : plx_err_class(r->st_error) == MPIX_ERR_PROC_FAILED ? PLX_ERR_PROC_FAILED
                                                                             : PLX_ERR_INTERN;
    plx_request_free(r);
    return st;
}

struct plx_request *plx_coll_istart(int kind, void *buf, size_t n, int peer, int tag, struct plx_comm *c, int ctx)
{
    return plx_coll_start_ctx(kind, buf, n, peer, tag, c, ctx);
}

plx_status_t plx_coll_wait(struct plx_request *r)
{
    return plx_coll_finish(r);
}

static plx_status_t plx_coll_send(const void *buf, size_t n, int peer, int tag, struct plx_comm *c)
{
    return plx_coll_finish(plx_coll_start(PLX_REQ_SEND, (void *)buf, n, peer, tag, c));
}

static plx_status_t plx_coll_recv(void *buf, size_t n, int peer, int tag, struct plx_comm *c)
{
    return plx_coll_finish(plx_coll_start(PLX_REQ_RECV, buf, n, peer, tag, c));
}

plx_status_t plx_coll_sendrecv(const void *sbuf, size_t sn, void *rbuf, size_t rn, int peer, struct plx_comm *c,
                               int ctx, int tag)
{
    struct plx_request *s = plx_coll_start_ctx(PLX_REQ_SEND, (void *)sbuf, sn, peer, tag, c, ctx);
    struct plx_request *r = plx_coll_start_ctx(PLX_REQ_RECV, rbuf, rn, peer, tag, c, ctx);
    plx_status_t a = plx_coll_finish(s), b = plx_coll_finish(r);
    return a != PLX_OK ? a : b;
}

plx_status_t plx_coll_barrier(struct plx_comm *c, int tag)
{
    plx_status_t st = PLX_OK;
    for (int k = 1; k < c->size && st == PLX_OK; k <<= 1) {
        struct plx_request *s = plx_coll_start(PLX_REQ_SEND, NULL, 0, (c->rank + k) % c->size, tag, c);
        struct plx_request *r = plx_coll_start(PLX_REQ_RECV, NULL, 0, (c->rank - k + c->size) % c->size, tag, c);
        plx_status_t a = plx_coll_finish(s), b = plx_coll_finish(r);
        st = a != PLX_OK ? a : b;
    }
    return st;
}

plx_status_t plx_coll_bcast(void *buf, size_t nbytes, int root, struct plx_comm *c, int tag)
{
    int size = c->size, vrank = (c->rank - root + size) % size;
    plx_status_t st = PLX_OK;
    int mask = 1;
    while (mask < size) {                       /* receive from the parent */
        if (vrank & mask) {
            st = plx_coll_recv(buf, nbytes, (vrank - mask + root) % size, tag, c);
            break;
        }
        mask <<= 1;
    }
    mask >>= 1;
    if (st != PLX_OK)
        return st;                              /* nothing to pass on */
    while (mask > 0) {                          /* send to the children, all of them even if one is lost */
        if (vrank + mask < size) {
            plx_status_t s = plx_coll_send(buf, nbytes, (vrank + mask + root) % size, tag, c);
            if (st == PLX_OK)
                st = s;
        }
        mask >>= 1;
    }
    return st;
}

plx_status_t plx_coll_gather(const void *sbuf, size_t nbytes, void *rbuf, int root, struct plx_comm *c, int tag)
{
    if (c->rank != root)
        return plx_coll_send(sbuf, nbytes, root, tag, c);
    plx_status_t st = PLX_OK;
    struct plx_request **reqs = plx_calloc((size_t)c->size, sizeof *reqs);
    for (int r = 0; r < c->size; r++)
        if (r != root)
            reqs[r] = plx_coll_start(PLX_REQ_RECV, (char *)rbuf + (size_t)r * nbytes, nbytes, r, tag, c);
    if (sbuf != (char *)rbuf + (size_t)root * nbytes && nbytes)
        memcpy((char *)rbuf + (size_t)root * nbytes, sbuf, nbytes);
    for (int r = 0; r < c->size; r++)
        if (reqs[r]) {
            plx_status_t s = plx_coll_finish(reqs[r]);
            if (s != PLX_OK)
                st = s;
        }
    free(reqs);
    return st;
}

plx_status_t plx_coll_allgather(const void *sbuf, size_t nbytes, void *rbuf, struct plx_comm *c, int tag)
{
    plx_status_t st = plx_coll_gather(sbuf, nbytes, rbuf, 0, c, tag);
    if (st == PLX_OK)
        st = plx_coll_bcast(rbuf, nbytes * (size_t)c->size, 0, c, tag);
    return st;
}

plx_status_t plx_coll_alltoallv(const void *sbuf, const size_t *sbytes, const size_t *soff, void *rbuf,
                                const size_t *rbytes, const size_t *roff, struct plx_comm *c, int tag)
{
    int n = c->size, me = c->rank;
    struct plx_request **reqs = plx_calloc(2 * (size_t)n, sizeof *reqs);
    for (int r = 0; r < n; r++)
        if (r != me)
            reqs[r] = plx_coll_start(PLX_REQ_RECV, (char *)rbuf + roff[r], rbytes[r], r, tag, c);
    for (int r = 0; r < n; r++)
        if (r != me)
            reqs[n + r] = plx_coll_start(PLX_REQ_SEND, (char *)sbuf + soff[r], sbytes[r], r, tag, c);
    plx_status_t st = PLX_OK;
    if (sbytes[me] != rbytes[me])
        st = PLX_ERR_TRUNCATE;
    else if (sbytes[me])
        memcpy((char *)rbuf + roff[me], (const char *)sbuf + soff[me], sbytes[me]);
    for (int i = 0; i < 2 * n; i++)
        if (reqs[i]) {
            plx_status_t s = plx_coll_finish(reqs[i]);
            if (st == PLX_OK)
                st = s;
        }
    free(reqs);
    return st;
}

/* Gather to rank 0, combine, broadcast. Rank 0 broadcasts even when its
 * gather failed (a member was lost), with the failure in a last word, so
 * that every member that can still hear it leaves with the same result
 * instead of waiting for a broadcast that never comes. */
plx_status_t plx_coll_allreduce_u64(uint64_t *buf, int n, enum plx_coll_u64_op op, struct plx_comm *c, int tag)
{
    size_t bytes = (size_t)n * sizeof(uint64_t);
    uint64_t *all = c->rank == 0 ? plx_malloc(bytes * (size_t)c->size) : NULL;
    plx_status_t st = plx_coll_gather(buf, bytes, all, 0, c, tag);
    if (st != PLX_OK && c->rank != 0) {
        free(all);
        return st;              /* could not reach rank 0: nothing will come from it */
    }
    uint64_t *res = plx_malloc(bytes + sizeof(uint64_t));
    memcpy(res, buf, bytes);
    res[n] = (uint64_t)(int64_t)st;
    if (st == PLX_OK && c->rank == 0) {
        for (int r = 1; r < c->size; r++)
            for (int i = 0; i < n; i++) {
                uint64_t a = res[i], b = all[(size_t)r * (size_t)n + (size_t)i];
                switch (op) {
                case PLX_COLL_BAND: a &= b; break;
                case PLX_COLL_BOR: a |= b; break;
                case PLX_COLL_MAX: a = a > b ? a : b; break;
                case PLX_COLL_MIN: a = a < b ? a : b; break;
                case PLX_COLL_SUM: a += b; break;
                }
                res[i] = a;
            }
    }
    free(all);
    plx_status_t bst = plx_coll_bcast(res, bytes + sizeof(uint64_t), 0, c, tag);
    if (bst == PLX_OK)
        st = (plx_status_t)(int64_t)res[n];
    else if (st == PLX_OK)
        st = bst;
    if (st == PLX_OK)
        memcpy(buf, res, bytes);
    free(res);
    return st;
}

int plx_coll_node_oversubscribed(void)
{
    static int over = -1;
    if (over < 0) {
        const char *v = plx_config.coll_oversub;
        long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
        if (strcmp(v, "on") == 0)
            over = 1;
        else if (strcmp(v, "off") == 0)
            over = 0;
        else {
            if (strcmp(v, "auto") != 0)
                plx_warn("PLEXUS_COLL_OVERSUB=%s: expected on, off or auto; using auto", v);
            over = ncpu > 0 && plx_procs.nlocal > ncpu;
        }
    }
    return over;
}
