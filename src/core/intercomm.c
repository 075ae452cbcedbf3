/*
 * Intercommunicator objects and the agreements between their two sides.
 *
 * An intercommunicator is a local group, a remote group and one context id
 * free on every member of both. Point-to-point addresses the remote group,
 * so the object's lpids/size are the remote group's and the unchanged
 * matching engine serves it: a sender puts its local rank in the header,
 * which is its rank in the receiver's remote group. Each side also holds an
 * intracommunicator over its local group (local_comm, its own context id)
 * on which collectives run their local parts.
 *
 * Agreements run over a "bridge": every member joins through an
 * intracommunicator over its side, and one leader per side talks to the
 * other leader (over MPI_Intercomm_create's peer communicator, or over an
 * existing intercommunicator's collective context). A context id is agreed
 * as for intracommunicators (core/comm.c): a bitwise AND of the free masks,
 * here per side and then between the leaders, with the same confirmation
 * round where threads or nonblocking agreements could race. Two ids are
 * taken at a time: the intercommunicator's and the new local_comm's (both
 * sides use the second for their own, disjoint, local_comm).
 */
#include <stdlib.h>
#include <string.h>
#include "coll/coll.h"
#include "core/lock.h"
#include "core/objects.h"

struct plx_comm *plx_comm_new_inter(struct plx_comm *parent, struct plx_group *lg, struct plx_group *rg, int ctx,
                                    struct plx_comm *local_comm)
{
    struct plx_comm *c = plx_comm_new(parent, lg, ctx);
    if (!c)
        return NULL;
    plx_group_addref(rg);
    c->remote_group = rg;
    c->lpids = rg->lpids;
    c->size = rg->size;
    c->rank = lg->rank;
    plx_comm_addref(local_comm);
    c->local_comm = local_comm;
    return c;
}

void plx_bridge_of(struct plx_comm *inter, struct plx_bridge *b)
{
    *b = (struct plx_bridge){ .local = inter->local_comm, .leader = 0, .peer = inter, .remote_leader = 0,
                              .ctx = inter->context_id + 1, .tag = PLX_COLL_TAG_DEFAULT };
}

plx_status_t plx_bridge_exchange(struct plx_bridge *b, const void *sbuf, size_t sn, void *rbuf, size_t rn)
{
    int leader = b->local->rank == b->leader;
    size_t words = (rn + sizeof(uint64_t) - 1) / sizeof(uint64_t);
    uint64_t *msg = plx_calloc(words + 1, sizeof(uint64_t));
    plx_status_t st = PLX_OK;
    if (leader) {
        st = b->xchg ? b->xchg(b->xarg, sbuf, sn, msg, rn)
                     : plx_coll_sendrecv(sbuf, sn, msg, rn, b->remote_leader, b->peer, b->ctx, b->tag);
        /* passed on even after a failure, with the failure in the last
         * word, so that no member waits for a broadcast that never comes */
        msg[words] = (uint64_t)(int64_t)st;
    }
    plx_status_t bst = plx_coll_bcast(msg, (words + 1) * sizeof(uint64_t), b->leader, b->local, PLX_COLL_TAG_DEFAULT);
    if (bst == PLX_OK)
        st = (plx_status_t)(int64_t)msg[words];
    else if (st == PLX_OK)
        st = bst;
    if (st == PLX_OK && rn)
        memcpy(rbuf, msg, rn);
    free(msg);
    return st;
}

/* Bitwise AND of n words over both sides. */
static plx_status_t plx_bridge_band(struct plx_bridge *b, uint64_t *buf, int n)
{
    plx_status_t st = plx_coll_allreduce_u64(buf, n, PLX_COLL_BAND, b->local, PLX_COLL_TAG_DEFAULT);
    if (PLX_IS_ERR(st))
        return st;
    uint64_t *other = plx_malloc((size_t)n * sizeof *other);
    st = plx_bridge_exchange(b, buf, (size_t)n * sizeof *buf, other, (size_t)n * sizeof *other);
    if (st == PLX_OK)
        for (int i = 0; i < n; i++)
            buf[i] &= other[i];
    free(other);
    return st;
}

plx_status_t plx_comm_alloc_context_bridge(struct plx_bridge *b, int n, int *ids)
{
    for (;;) {
        uint64_t mask[PLX_CTX_MASK_WORDS];
        plx_comm_ctx_snapshot(mask);
        plx_status_t st = plx_bridge_band(b, mask, PLX_CTX_MASK_WORDS);
        if (PLX_IS_ERR(st))
            return st;
        int took = plx_comm_ctx_take(mask, n, ids);
        if (took < 0)
            return PLX_ERR_NOSPACE;     /* both sides agree: too few common free ids */
        if (mask[PLX_CTX_MASK_WORDS - 1])    /* nobody could have raced us */
            return took ? PLX_OK : PLX_ERR_INTERN;
        uint64_t all = (uint64_t)took;
        st = plx_bridge_band(b, &all, 1);
        if (st == PLX_OK && all)
            return PLX_OK;
        if (took)
            for (int i = 0; i < n; i++)
                plx_comm_free_context(ids[i]);
        if (PLX_IS_ERR(st))
            return st;
        plx_lock_relax();
    }
}
