/* Point-to-point entry points: blocking, nonblocking, persistent, probes. */
#include <mpi.h>
#include <stdlib.h>
#include <string.h>
#include "api/pt2pt_api.h"
#include "progress/progress.h"
#include "pt2pt/pt2pt.h"

#pragma weak MPI_Send = PMPI_Send
#pragma weak MPI_Ssend = PMPI_Ssend
#pragma weak MPI_Rsend = PMPI_Rsend
#pragma weak MPI_Bsend = PMPI_Bsend
#pragma weak MPI_Recv = PMPI_Recv
#pragma weak MPI_Isend = PMPI_Isend
#pragma weak MPI_Issend = PMPI_Issend
#pragma weak MPI_Irsend = PMPI_Irsend
#pragma weak MPI_Ibsend = PMPI_Ibsend
#pragma weak MPI_Irecv = PMPI_Irecv
#pragma weak MPI_Send_init = PMPI_Send_init
#pragma weak MPI_Ssend_init = PMPI_Ssend_init
#pragma weak MPI_Rsend_init = PMPI_Rsend_init
#pragma weak MPI_Bsend_init = PMPI_Bsend_init
#pragma weak MPI_Recv_init = PMPI_Recv_init
#pragma weak MPI_Sendrecv = PMPI_Sendrecv
#pragma weak MPI_Sendrecv_replace = PMPI_Sendrecv_replace
#pragma weak MPI_Probe = PMPI_Probe
#pragma weak MPI_Iprobe = PMPI_Iprobe
#pragma weak MPI_Mprobe = PMPI_Mprobe
#pragma weak MPI_Improbe = PMPI_Improbe
#pragma weak MPI_Mrecv = PMPI_Mrecv
#pragma weak MPI_Imrecv = PMPI_Imrecv

int plx_api_p2p_check(MPI_Comm comm, const void *buf, MPI_Aint count, MPI_Datatype dtype, int peer, int tag,
                      enum plx_p2p_dir dir, const char *fn, struct plx_comm **c_p, struct plx_datatype **dt_p)
{
    struct plx_comm *c = NULL;
    int rc = plx_api_comm(comm, &c, fn);
    if (rc)
        return rc;
    *c_p = c;
    if (plx_unlikely(count < 0))
        return plx_api_err(c, fn, MPI_ERR_COUNT, "argument 'count' is negative (%ld)", (long)count);
    struct plx_datatype *dt = plx_dt_lookup(dtype);
    if (plx_unlikely(!dt))
        return plx_api_err(c, fn, MPI_ERR_TYPE, "argument 'datatype' is %s (handle 0x%x)",
                           dtype == MPI_DATATYPE_NULL ? "MPI_DATATYPE_NULL" : "not a valid datatype",
                           (unsigned)dtype);
    *dt_p = dt;
    /* NULL is MPI_BOTTOM: legal with a derived type of absolute addresses */
    if (plx_unlikely(!buf && count > 0 && dt->size > 0 && dt->obj.builtin))
        return plx_api_err(c, fn, MPI_ERR_BUFFER, "argument 'buf' is NULL with count %ld of %s", (long)count,
                           dt->name);
    const char *what = dir == PLX_DIR_SEND ? "dest" : "source";
    if (plx_unlikely(peer < 0 || peer >= c->size)) {
        if (!(peer == MPI_PROC_NULL || (dir == PLX_DIR_RECV && peer == MPI_ANY_SOURCE)))
            return plx_api_err(c, fn, MPI_ERR_RANK, "argument '%s' is %d but communicator %s has %d ranks", what,
                               peer, c->name[0] ? c->name : "(unnamed)", c->size);
    }
    if (plx_unlikely(tag < 0)) {
        if (!(dir == PLX_DIR_RECV && tag == MPI_ANY_TAG))
            return plx_api_err(c, fn, MPI_ERR_TAG, "argument 'tag' is %d (valid tags are 0..MPI_TAG_UB%s)", tag,
                               dir == PLX_DIR_RECV ? " or MPI_ANY_TAG" : "");
    }
    return MPI_SUCCESS;
}

struct plx_request *plx_api_p2p_request(int kind, struct plx_comm *c, const void *buf, MPI_Aint count,
                                        struct plx_datatype *dt, int peer, int tag, int mode)
{
    struct plx_request *r = plx_request_new(kind, c);
    r->buf = (void *)buf;
    r->count = count;
    r->dt = dt;
    plx_dt_addref(dt);          /* released by plx_request_free */
    r->rank = peer;
    r->tag = tag;
    r->ctx = c->context_id;
    r->mode = (uint8_t)mode;
    return r;
}

static int plx_api_start_failed(struct plx_request *r, const char *fn, plx_status_t st)
{
    r->cc = 0;
    r->st_error = plx_err_make(plx_status_to_class(st), "%s(rank %d): cannot reach rank %d of %s", fn,
                               plx_rt.world_rank, r->rank, r->comm->name[0] ? r->comm->name : "(unnamed)");
    return plx_api_err_code(r->comm, r->st_error);
}

int plx_api_send_start(struct plx_request *r, const char *fn)
{
    r->st_error = MPI_SUCCESS;
    r->st_cancelled = 0;
    r->cancel_pending = 0;
    r->data = NULL;
    if (r->mode == PLX_MODE_BUFFERED)
        return plx_bsend_start(r, fn);
    plx_status_t st = plx_pt2pt_send_start(r);
    return st == PLX_OK ? MPI_SUCCESS : plx_api_start_failed(r, fn, st);
}

int plx_api_recv_start(struct plx_request *r, const char *fn)
{
    r->st_cancelled = 0;
    r->tmp = NULL;
    r->data = NULL;
    /* such a receive fails unless a matching message is here: take in
     * what has arrived first, as the probes do */
    if (plx_unlikely(r->rank == MPI_ANY_SOURCE) && plx_pt2pt_wildcard_failing(r->comm))
        plx_progress_poll();
    plx_status_t st = plx_pt2pt_recv_start(r);
    return st == PLX_OK ? MPI_SUCCESS : plx_api_start_failed(r, fn, st);
}

int plx_api_wait_one(struct plx_request *r, MPI_Status *st, const char *fn)
{
    plx_progress_wait_req(r);
    return plx_api_request_done(r, st, 1);
}

static int plx_api_send(const void *buf, MPI_Count count, MPI_Datatype dtype, int dest, int tag, MPI_Comm comm,
                        int mode, const char *fn)
{
    struct plx_comm *c = NULL;
    struct plx_datatype *dt = NULL;
    plx_api_lock();
    int rc = plx_api_p2p_check(comm, buf, count, dtype, dest, tag, PLX_DIR_SEND, fn, &c, &dt);
    if (rc == MPI_SUCCESS && mode == PLX_MODE_STD && dt->contig && dest != MPI_PROC_NULL &&
        plx_pt2pt_send_inline(c, c->context_id, (const char *)buf + dt->true_lb, (size_t)count * (size_t)dt->size,
                              dest, tag) == PLX_OK) {
        plx_api_unlock();
        return MPI_SUCCESS;
    }
    if (rc == MPI_SUCCESS) {
        struct plx_request *r = plx_api_p2p_request(PLX_REQ_SEND, c, buf, count, dt, dest, tag, mode);
        rc = plx_api_send_start(r, fn);
        if (rc == MPI_SUCCESS)
            rc = plx_api_wait_one(r, MPI_STATUS_IGNORE, fn);
        else
            plx_request_free(r);
    }
    plx_api_unlock();
    return rc;
}

int PMPI_Send(const void *buf, int count, MPI_Datatype dtype, int dest, int tag, MPI_Comm comm)
{
    return plx_api_send(buf, count, dtype, dest, tag, comm, PLX_MODE_STD, "MPI_Send");
}

int PMPI_Ssend(const void *buf, int count, MPI_Datatype dtype, int dest, int tag, MPI_Comm comm)
{
    return plx_api_send(buf, count, dtype, dest, tag, comm, PLX_MODE_SYNC, "MPI_Ssend");
}

int PMPI_Rsend(const void *buf, int count, MPI_Datatype dtype, int dest, int tag, MPI_Comm comm)
{
    /* the receive is posted (the program's promise), so standard mode is exact */
    return plx_api_send(buf, count, dtype, dest, tag, comm, PLX_MODE_STD, "MPI_Rsend");
}

int PMPI_Bsend(const void *buf, int count, MPI_Datatype dtype, int dest, int tag, MPI_Comm comm)
{
    return plx_api_send(buf, count, dtype, dest, tag, comm, PLX_MODE_BUFFERED, "MPI_Bsend");
}

static int plx_api_recv(void *buf, MPI_Count count, MPI_Datatype dtype, int source, int tag, MPI_Comm comm,
                        MPI_Status *status, const char *fn)
{
    struct plx_comm *c = NULL;
    struct plx_datatype *dt = NULL;
    plx_api_lock();
    int rc = plx_api_p2p_check(comm, buf, count, dtype, source, tag, PLX_DIR_RECV, fn, &c, &dt);
    if (rc == MPI_SUCCESS) {
        /* a blocking receive needs no handle: its request lives on the stack */
        struct plx_request r;
        plx_request_init_stack(&r, PLX_REQ_RECV, c);
        r.buf = buf;
        r.count = count;
        r.dt = dt;
        r.rank = source;
        r.tag = tag;
        r.ctx = c->context_id;
        int hold = plx_lock.needed;     /* the wait lets other threads in: one may */
        if (hold) {                     /* free the type or the communicator meanwhile */
            plx_dt_addref(dt);
            plx_comm_addref(c);
        }
        rc = plx_api_recv_start(&r, fn);
        if (rc == MPI_SUCCESS) {
            plx_request_block(&r);
            plx_progress_wait_req(&r);
            plx_request_unblock(&r);
            plx_request_status(&r, status);
            if (r.st_error != MPI_SUCCESS)
                rc = plx_api_err_code(c, r.st_error);
        }
        if (hold) {
            plx_dt_release(dt);
            plx_comm_release(c);
        }
    }
    plx_api_unlock();
    return rc;
}

int PMPI_Recv(void *buf, int count, MPI_Datatype dtype, int source, int tag, MPI_Comm comm, MPI_Status *status)
{
    return plx_api_recv(buf, count, dtype, source, tag, comm, status, "MPI_Recv");
}

static int plx_api_inonblock(int kind, const void *buf, MPI_Count count, MPI_Datatype dtype, int peer, int tag,
                             MPI_Comm comm, int mode, int persistent, MPI_Request *request, const char *fn)
{
    struct plx_comm *c = NULL;
    struct plx_datatype *dt = NULL;
    plx_api_lock();
    int rc = plx_api_p2p_check(comm, buf, count, dtype, peer, tag, kind == PLX_REQ_SEND ? PLX_DIR_SEND : PLX_DIR_RECV,
                               fn, &c, &dt);
    if (rc == MPI_SUCCESS && !request)
        rc = plx_api_null_arg(c, fn, "request");
    if (rc == MPI_SUCCESS) {
        struct plx_request *r = plx_api_p2p_request(kind, c, buf, count, dt, peer, tag, mode);
        r->persistent = (uint8_t)persistent;
        if (!persistent) {
            rc = kind == PLX_REQ_SEND ? plx_api_send_start(r, fn) : plx_api_recv_start(r, fn);
        }
        if (rc == MPI_SUCCESS) {
            *request = r->obj.handle;
        } else {
            plx_request_free(r);
            *request = MPI_REQUEST_NULL;
        }
    }
    plx_api_unlock();
    return rc;
}

int PMPI_Isend(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm, MPI_Request *req)
{
    return plx_api_inonblock(PLX_REQ_SEND, buf, count, dt, dest, tag, comm, PLX_MODE_STD, 0, req, "MPI_Isend");
}

int PMPI_Issend(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm, MPI_Request *req)
{
    return plx_api_inonblock(PLX_REQ_SEND, buf, count, dt, dest, tag, comm, PLX_MODE_SYNC, 0, req, "MPI_Issend");
}

int PMPI_Irsend(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm, MPI_Request *req)
{
    return plx_api_inonblock(PLX_REQ_SEND, buf, count, dt, dest, tag, comm, PLX_MODE_READY, 0, req, "MPI_Irsend");
}

int PMPI_Ibsend(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm, MPI_Request *req)
{
    return plx_api_inonblock(PLX_REQ_SEND, buf, count, dt, dest, tag, comm, PLX_MODE_BUFFERED, 0, req,
                             "MPI_Ibsend");
}

int PMPI_Irecv(void *buf, int count, MPI_Datatype dt, int source, int tag, MPI_Comm comm, MPI_Request *req)
{
    return plx_api_inonblock(PLX_REQ_RECV, buf, count, dt, source, tag, comm, 0, 0, req, "MPI_Irecv");
}

int PMPI_Send_init(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm,
                   MPI_Request *req)
{
    return plx_api_inonblock(PLX_REQ_SEND, buf, count, dt, dest, tag, comm, PLX_MODE_STD, 1, req, "MPI_Send_init");
}

int PMPI_Ssend_init(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm,
                    MPI_Request *req)
{
    return plx_api_inonblock(PLX_REQ_SEND, buf, count, dt, dest, tag, comm, PLX_MODE_SYNC, 1, req,
                             "MPI_Ssend_init");
}

int PMPI_Rsend_init(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm,
                    MPI_Request *req)
{
    return plx_api_inonblock(PLX_REQ_SEND, buf, count, dt, dest, tag, comm, PLX_MODE_READY, 1, req,
                             "MPI_Rsend_init");
}

int PMPI_Bsend_init(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm,
                    MPI_Request *req)
{
    return plx_api_inonblock(PLX_REQ_SEND, buf, count, dt, dest, tag, comm, PLX_MODE_BUFFERED, 1, req,
                             "MPI_Bsend_init");
}

int PMPI_Recv_init(void *buf, int count, MPI_Datatype dt, int source, int tag, MPI_Comm comm, MPI_Request *req)
{
    return plx_api_inonblock(PLX_REQ_RECV, buf, count, dt, source, tag, comm, 0, 1, req, "MPI_Recv_init");
}

static int plx_api_sendrecv(const void *sbuf, MPI_Count scount, MPI_Datatype stype, int dest, int stag, void *rbuf,
                            MPI_Count rcount, MPI_Datatype rtype, int source, int rtag, MPI_Comm comm,
                            MPI_Status *status, const char *fn)
{
    struct plx_comm *c = NULL;
    struct plx_datatype *sdt = NULL, *rdt = NULL;
    int rc = plx_api_p2p_check(comm, sbuf, scount, stype, dest, stag, PLX_DIR_SEND, fn, &c, &sdt);
    if (rc == MPI_SUCCESS)
        rc = plx_api_p2p_check(comm, rbuf, rcount, rtype, source, rtag, PLX_DIR_RECV, fn, &c, &rdt);
    if (rc != MPI_SUCCESS)
        return rc;
    struct plx_request *rr = plx_api_p2p_request(PLX_REQ_RECV, c, rbuf, rcount, rdt, source, rtag, 0);
    rc = plx_api_recv_start(rr, fn);
    if (rc != MPI_SUCCESS) {
        plx_request_free(rr);
        return rc;
    }
    struct plx_request *sr = plx_api_p2p_request(PLX_REQ_SEND, c, sbuf, scount, sdt, dest, stag, PLX_MODE_STD);
    rc = plx_api_send_start(sr, fn);
    int rc2 = MPI_SUCCESS;
    if (rc == MPI_SUCCESS)
        rc2 = plx_api_wait_one(sr, MPI_STATUS_IGNORE, fn);
    else
        plx_request_free(sr);
    int rc3 = plx_api_wait_one(rr, status, fn);
    return rc ? rc : rc2 ? rc2 : rc3;
}

int PMPI_Sendrecv(const void *sbuf, int scount, MPI_Datatype stype, int dest, int stag, void *rbuf, int rcount,
                  MPI_Datatype rtype, int source, int rtag, MPI_Comm comm, MPI_Status *status)
{
    plx_api_lock();
    int rc = plx_api_sendrecv(sbuf, scount, stype, dest, stag, rbuf, rcount, rtype, source, rtag, comm, status,
                              "MPI_Sendrecv");
    plx_api_unlock();
    return rc;
}

static int plx_api_sendrecv_replace(void *buf, MPI_Count count, MPI_Datatype dtype, int dest, int stag, int source,
                                    int rtag, MPI_Comm comm, MPI_Status *status, const char *fn)
{
    plx_api_lock();
    struct plx_comm *c = NULL;
    struct plx_datatype *dt = NULL;
    int rc = plx_api_p2p_check(comm, buf, count, dtype, dest, stag, PLX_DIR_SEND, fn, &c, &dt);
    if (rc == MPI_SUCCESS) {
        /* send a packed copy, receive into the buffer */
        size_t bytes = (size_t)count * (size_t)dt->size;
        void *copy = plx_malloc(bytes);
        plx_dt_pack(buf, count, dt, copy);
        rc = plx_api_sendrecv(copy, (MPI_Count)bytes, MPI_BYTE, dest, stag, buf, count, dtype, source, rtag, comm,
                              status, fn);
        free(copy);
    }
    plx_api_unlock();
    return rc;
}

int PMPI_Sendrecv_replace(void *buf, int count, MPI_Datatype dtype, int dest, int stag, int source, int rtag,
                          MPI_Comm comm, MPI_Status *status)
{
    return plx_api_sendrecv_replace(buf, count, dtype, dest, stag, source, rtag, comm, status,
                                    "MPI_Sendrecv_replace");
}

/* --- probes -------------------------------------------------------------- */

static int plx_api_probe_check(MPI_Comm comm, int source, int tag, const char *fn, struct plx_comm **c_p)
{
    struct plx_datatype *dt = NULL;
    return plx_api_p2p_check(comm, NULL, 0, MPI_BYTE, source, tag, PLX_DIR_RECV, fn, c_p, &dt);
}

static void plx_api_status_proc_null(MPI_Status *st)
{
    if (st == MPI_STATUS_IGNORE)
        return;
    st->MPI_SOURCE = MPI_PROC_NULL;
    st->MPI_TAG = MPI_ANY_TAG;
    st->count_lo = 0;
    st->count_hi_and_cancelled = 0;
}

struct plx_probe_arg {
    struct plx_comm *c;
    int src, tag, found;
    MPI_Status *st;
    const char *fn;
    int err;                    /* the source failed: nothing will come */
};

static int plx_probe_done(void *a)
{
    struct plx_probe_arg *p = a;
    plx_pt2pt_iprobe(p->c, p->c->context_id, p->src, p->tag, &p->found, p->st);
    if (!p->found)
        p->err = plx_pt2pt_probe_error(p->c, p->src, p->tag, p->st, p->fn);
    return p->found || p->err;
}

/* Waits until a message matches a (or the source failed). A stand-in on
 * the blocked list shows the wait in the --timeout dump. */
static void plx_probe_wait(struct plx_probe_arg *a)
{
    struct plx_request w;
    plx_request_init_stack(&w, PLX_REQ_PROBE, a->c);
    w.rank = a->src;
    w.tag = a->tag;
    w.ctx = a->c->context_id;
    w.cc = 1;
    plx_request_block(&w);
    plx_progress_wait(plx_probe_done, a);
    plx_request_unblock(&w);
}

int PMPI_Iprobe(int source, int tag, MPI_Comm comm, int *flag, MPI_Status *status)
{
    static const char fn[] = "MPI_Iprobe";
    struct plx_comm *c = NULL;
    plx_api_lock();
    int rc = plx_api_probe_check(comm, source, tag, fn, &c);
    if (rc == MPI_SUCCESS && !flag)
        rc = plx_api_null_arg(c, fn, "flag");
    if (rc == MPI_SUCCESS) {
        if (source == MPI_PROC_NULL) {
            *flag = 1;
            plx_api_status_proc_null(status);
        } else {
            plx_pt2pt_iprobe(c, c->context_id, source, tag, flag, status);
            if (!*flag) {
                plx_progress_test_poll();
                plx_pt2pt_iprobe(c, c->context_id, source, tag, flag, status);
            }
            int err = *flag ? MPI_SUCCESS : plx_pt2pt_probe_error(c, source, tag, status, fn);
            if (err)
                rc = plx_api_err_code(c, err);
        }
    }
    plx_api_unlock();
    return rc;
}

int PMPI_Probe(int source, int tag, MPI_Comm comm, MPI_Status *status)
{
    static const char fn[] = "MPI_Probe";
    struct plx_comm *c = NULL;
    plx_api_lock();
    int rc = plx_api_probe_check(comm, source, tag, fn, &c);
    if (rc == MPI_SUCCESS) {
        if (source == MPI_PROC_NULL) {
            plx_api_status_proc_null(status);
        } else {
            struct plx_probe_arg a = { c, source, tag, 0, status, fn, MPI_SUCCESS };
            plx_probe_wait(&a);
            if (a.err)
                rc = plx_api_err_code(c, a.err);
        }
    }
    plx_api_unlock();
    return rc;
}

static int plx_api_improbe(int source, int tag, MPI_Comm comm, int *flag, MPI_Message *message,
                           MPI_Status *status, int blocking, const char *fn)
{
    struct plx_comm *c = NULL;
    int rc = plx_api_probe_check(comm, source, tag, fn, &c);
    if (rc == MPI_SUCCESS && !message)
        rc = plx_api_null_arg(c, fn, "message");
    if (rc != MPI_SUCCESS)
        return rc;
    if (source == MPI_PROC_NULL) {
        *message = MPI_MESSAGE_NO_PROC;
        if (flag)
            *flag = 1;
        plx_api_status_proc_null(status);
        return MPI_SUCCESS;
    }
    struct plx_request *m = plx_pt2pt_improbe(c, c->context_id, source, tag);
    if (!m && !blocking) {
        plx_progress_test_poll();
        m = plx_pt2pt_improbe(c, c->context_id, source, tag);
    }
    while (!m && blocking) {
        struct plx_probe_arg a = { c, source, tag, 0, status, fn, MPI_SUCCESS };
        plx_probe_wait(&a);
        if (a.err) {
            *message = MPI_MESSAGE_NULL;
            return plx_api_err_code(c, a.err);
        }
        m = plx_pt2pt_improbe(c, c->context_id, source, tag);
    }
    if (!m && !blocking) {
        int err = plx_pt2pt_probe_error(c, source, tag, status, fn);
        if (err) {
            *flag = 0;
            *message = MPI_MESSAGE_NULL;
            return plx_api_err_code(c, err);
        }
    }
    if (flag)
        *flag = m != NULL;
    if (m) {
        *message = m->obj.handle;
        plx_request_status(m, status);
    } else {
        *message = MPI_MESSAGE_NULL;
    }
    return MPI_SUCCESS;
}

int PMPI_Improbe(int source, int tag, MPI_Comm comm, int *flag, MPI_Message *message, MPI_Status *status)
{
    plx_api_lock();
    int rc = flag ? plx_api_improbe(source, tag, comm, flag, message, status, 0, "MPI_Improbe")
                  : plx_api_null_arg(NULL, "MPI_Improbe", "flag");
    plx_api_unlock();
    return rc;
}

int PMPI_Mprobe(int source, int tag, MPI_Comm comm, MPI_Message *message, MPI_Status *status)
{
    plx_api_lock();
    int rc = plx_api_improbe(source, tag, comm, NULL, message, status, 1, "MPI_Mprobe");
    plx_api_unlock();
    return rc;
}

static int plx_api_imrecv(void *buf, MPI_Count count, MPI_Datatype dtype, MPI_Message *message,
                          struct plx_request **r_p, const char *fn)
{
    if (!message)
        return plx_api_null_arg(NULL, fn, "message");
    plx_api_check_init(fn);
    struct plx_request *m = NULL;
    if (*message != MPI_MESSAGE_NO_PROC) {
        m = plx_obj_lookup(&plx_request_tab, *message);
        if (!m || m->kind != PLX_REQ_MESSAGE)
            return plx_api_err(NULL, fn, MPI_ERR_REQUEST, "argument 'message' is not a matched message "
                               "(handle 0x%x)", (unsigned)*message);
    }
    struct plx_comm *c = m ? m->comm : plx_comm_self;
    struct plx_datatype *dt = NULL;
    int rc = plx_api_p2p_check(c->obj.handle, buf, count, dtype, m ? m->st_source : MPI_PROC_NULL, 0,
                               PLX_DIR_RECV, fn, &c, &dt);
    if (rc)
        return rc;
    struct plx_request *r = plx_api_p2p_request(PLX_REQ_RECV, c, buf, count, dt, m ? m->st_source : MPI_PROC_NULL,
                                                m ? m->st_tag : MPI_ANY_TAG, 0);
    r->st_error = MPI_SUCCESS;
    if (m) {
        plx_pt2pt_mrecv_start(r, m);
        plx_request_free(m);
    } else {
        struct plx_request none = { .msg = NULL };
        plx_pt2pt_mrecv_start(r, &none);
    }
    *message = MPI_MESSAGE_NULL;
    *r_p = r;
    return MPI_SUCCESS;
}

int PMPI_Mrecv(void *buf, int count, MPI_Datatype dtype, MPI_Message *message, MPI_Status *status)
{
    static const char fn[] = "MPI_Mrecv";
    plx_api_lock();
    struct plx_request *r;
    int rc = plx_api_imrecv(buf, count, dtype, message, &r, fn);
    if (rc == MPI_SUCCESS)
        rc = plx_api_wait_one(r, status, fn);
    plx_api_unlock();
    return rc;
}

int PMPI_Imrecv(void *buf, int count, MPI_Datatype dtype, MPI_Message *message, MPI_Request *request)
{
    static const char fn[] = "MPI_Imrecv";
    plx_api_lock();
    struct plx_request *r;
    int rc = request ? plx_api_imrecv(buf, count, dtype, message, &r, fn) : plx_api_null_arg(NULL, fn, "request");
    if (rc == MPI_SUCCESS)
        *request = r->obj.handle;
    plx_api_unlock();
    return rc;
}

/* --- large-count forms (MPI 4.0 `_c`) ----------------------------------- */

#pragma weak MPI_Bsend_c = PMPI_Bsend_c
#pragma weak MPI_Bsend_init_c = PMPI_Bsend_init_c
#pragma weak MPI_Ibsend_c = PMPI_Ibsend_c
#pragma weak MPI_Imrecv_c = PMPI_Imrecv_c
#pragma weak MPI_Irecv_c = PMPI_Irecv_c
#pragma weak MPI_Irsend_c = PMPI_Irsend_c
#pragma weak MPI_Isend_c = PMPI_Isend_c
#pragma weak MPI_Issend_c = PMPI_Issend_c
#pragma weak MPI_Mrecv_c = PMPI_Mrecv_c
#pragma weak MPI_Recv_c = PMPI_Recv_c
#pragma weak MPI_Recv_init_c = PMPI_Recv_init_c
#pragma weak MPI_Rsend_c = PMPI_Rsend_c
#pragma weak MPI_Rsend_init_c = PMPI_Rsend_init_c
#pragma weak MPI_Send_c = PMPI_Send_c
#pragma weak MPI_Send_init_c = PMPI_Send_init_c
#pragma weak MPI_Sendrecv_c = PMPI_Sendrecv_c
#pragma weak MPI_Sendrecv_replace_c = PMPI_Sendrecv_replace_c
#pragma weak MPI_Ssend_c = PMPI_Ssend_c
#pragma weak MPI_Ssend_init_c = PMPI_Ssend_init_c

int PMPI_Bsend_c(const void *buf, MPI_Count count, MPI_Datatype dtype, int dest, int tag, MPI_Comm comm)
{
    return plx_api_send(buf, count, dtype, dest, tag, comm, PLX_MODE_BUFFERED, "MPI_Bsend_c");
}

int PMPI_Bsend_init_c(const void *buf, MPI_Count count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm,
                      MPI_Request *req)
{
    return plx_api_inonblock(PLX_REQ_SEND, buf, count, dt, dest, tag, comm, PLX_MODE_BUFFERED, 1, req,
                             "MPI_Bsend_init_c");
}

int PMPI_Ibsend_c(const void *buf, MPI_Count count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm,
                  MPI_Request *req)
{
    return plx_api_inonblock(PLX_REQ_SEND, buf, count, dt, dest, tag, comm, PLX_MODE_BUFFERED, 0, req,
                             "MPI_Ibsend_c");
}

int PMPI_Imrecv_c(void *buf, MPI_Count count, MPI_Datatype dtype, MPI_Message *message, MPI_Request *request)
{
    static const char fn[] = "MPI_Imrecv_c";
    plx_api_lock();
    struct plx_request *r;
    int rc = request ? plx_api_imrecv(buf, count, dtype, message, &r, fn) : plx_api_null_arg(NULL, fn, "request");
    if (rc == MPI_SUCCESS)
        *request = r->obj.handle;
    plx_api_unlock();
    return rc;
}

int PMPI_Irecv_c(void *buf, MPI_Count count, MPI_Datatype dt, int source, int tag, MPI_Comm comm, MPI_Request *req)
{
    return plx_api_inonblock(PLX_REQ_RECV, buf, count, dt, source, tag, comm, 0, 0, req, "MPI_Irecv_c");
}

int PMPI_Irsend_c(const void *buf, MPI_Count count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm,
                  MPI_Request *req)
{
    return plx_api_inonblock(PLX_REQ_SEND, buf, count, dt, dest, tag, comm, PLX_MODE_READY, 0, req, "MPI_Irsend_c");
}

int PMPI_Isend_c(const void *buf, MPI_Count count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm,
                 MPI_Request *req)
{
    return plx_api_inonblock(PLX_REQ_SEND, buf, count, dt, dest, tag, comm, PLX_MODE_STD, 0, req, "MPI_Isend_c");
}

int PMPI_Issend_c(const void *buf, MPI_Count count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm,
                  MPI_Request *req)
{
    return plx_api_inonblock(PLX_REQ_SEND, buf, count, dt, dest, tag, comm, PLX_MODE_SYNC, 0, req, "MPI_Issend_c");
}

int PMPI_Mrecv_c(void *buf, MPI_Count count, MPI_Datatype dtype, MPI_Message *message, MPI_Status *status)
{
    static const char fn[] = "MPI_Mrecv_c";
    plx_api_lock();
    struct plx_request *r;
    int rc = plx_api_imrecv(buf, count, dtype, message, &r, fn);
    if (rc == MPI_SUCCESS)
        rc = plx_api_wait_one(r, status, fn);
    plx_api_unlock();
    return rc;
}

int PMPI_Recv_c(void *buf, MPI_Count count, MPI_Datatype dtype, int source, int tag, MPI_Comm comm,
                MPI_Status *status)
{
    return plx_api_recv(buf, count, dtype, source, tag, comm, status, "MPI_Recv_c");
}

int PMPI_Recv_init_c(void *buf, MPI_Count count, MPI_Datatype dt, int source, int tag, MPI_Comm comm,
                     MPI_Request *req)
{
    return plx_api_inonblock(PLX_REQ_RECV, buf, count, dt, source, tag, comm, 0, 1, req, "MPI_Recv_init_c");
}

int PMPI_Rsend_c(const void *buf, MPI_Count count, MPI_Datatype dtype, int dest, int tag, MPI_Comm comm)
{
    /* the receive is posted (the program's promise), so standard mode is exact */
    return plx_api_send(buf, count, dtype, dest, tag, comm, PLX_MODE_STD, "MPI_Rsend_c");
}

int PMPI_Rsend_init_c(const void *buf, MPI_Count count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm,
                      MPI_Request *req)
{
    return plx_api_inonblock(PLX_REQ_SEND, buf, count, dt, dest, tag, comm, PLX_MODE_READY, 1, req,
                             "MPI_Rsend_init_c");
}

int PMPI_Send_c(const void *buf, MPI_Count count, MPI_Datatype dtype, int dest, int tag, MPI_Comm comm)
{
    return plx_api_send(buf, count, dtype, dest, tag, comm, PLX_MODE_STD, "MPI_Send_c");
}

int PMPI_Send_init_c(const void *buf, MPI_Count count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm,
                     MPI_Request *req)
{
    return plx_api_inonblock(PLX_REQ_SEND, buf, count, dt, dest, tag, comm, PLX_MODE_STD, 1, req, "MPI_Send_init_c");
}

int PMPI_Sendrecv_c(const void *sbuf, MPI_Count scount, MPI_Datatype stype, int dest, int stag, void *rbuf,
                    MPI_Count rcount, MPI_Datatype rtype, int source, int rtag, MPI_Comm comm, MPI_Status *status)
{
    plx_api_lock();
    int rc = plx_api_sendrecv(sbuf, scount, stype, dest, stag, rbuf, rcount, rtype, source, rtag, comm, status,
                              "MPI_Sendrecv_c");
    plx_api_unlock();
    return rc;
}

int PMPI_Sendrecv_replace_c(void *buf, MPI_Count count, MPI_Datatype dtype, int dest, int stag, int source, int rtag,
                            MPI_Comm comm, MPI_Status *status)
{
    return plx_api_sendrecv_replace(buf, count, dtype, dest, stag, source, rtag, comm, status,
                                    "MPI_Sendrecv_replace_c");
}

int PMPI_Ssend_c(const void *buf, MPI_Count count, MPI_Datatype dtype, int dest, int tag, MPI_Comm comm)
{
    return plx_api_send(buf, count, dtype, dest, tag, comm, PLX_MODE_SYNC, "MPI_Ssend_c");
}

int PMPI_Ssend_init_c(const void *buf, MPI_Count count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm,
                      MPI_Request *req)
{
    return plx_api_inonblock(PLX_REQ_SEND, buf, count, dt, dest, tag, comm, PLX_MODE_SYNC, 1, req,
                             "MPI_Ssend_init_c");
}


