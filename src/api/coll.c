/*
 * Collective entry points, blocking and nonblocking. Each call checks its
 * arguments, builds the schedule of its algorithm (src/coll/algo.h) and
 * either runs it to completion or starts it and returns a request that the
 * progress engine completes. Blocking and nonblocking forms share one
 * implementation: `req` is NULL for the blocking one.
 */
#include <mpi.h>
#include <stdlib.h>
#include <string.h>
#include "api/api.h"
#include "api/count.h"
#include "coll/algo.h"
#include "coll/inter.h"
#include "coll/shmcoll.h"
#include "core/datatype.h"
#include "core/op.h"

/* The shared-memory collectives let go of the library lock while they wait
 * (other threads may need MPI meanwhile), so the types and the op they use
 * are held for the call: MPI_Type_free and MPI_Op_free of an object in use
 * only mark it. */
static void plx_cc_hold(struct plx_datatype *a, struct plx_datatype *b, struct plx_op *op)
{
    if (!plx_lock.needed)
        return;                 /* one thread: nothing can free them meanwhile */
    if (a)
        plx_dt_addref(a);
    if (b)
        plx_dt_addref(b);
    if (op)
        plx_op_addref(op);
}

static void plx_cc_unhold(struct plx_datatype *a, struct plx_datatype *b, struct plx_op *op)
{
    if (!plx_lock.needed)
        return;
    if (a)
        plx_dt_release(a);
    if (b)
        plx_dt_release(b);
    if (op)
        plx_op_release(op);
}

static int plx_cc_shm_bcast(struct plx_comm *c, void *buf, MPI_Aint count, struct plx_datatype *dt, int root)
{
    plx_cc_hold(dt, NULL, NULL);
    int done = plx_shmcoll_bcast(c, buf, count, dt, root);
    plx_cc_unhold(dt, NULL, NULL);
    return done;
}

/* Allgather or Alltoall through the shared segment (fn). */
static int plx_cc_shm_exchange(int (*fn)(struct plx_comm *, const void *, MPI_Aint, struct plx_datatype *, void *,
                                         MPI_Aint, struct plx_datatype *),
                               struct plx_comm *c, const void *sbuf, MPI_Aint scount, struct plx_datatype *sdt,
                               void *rbuf, MPI_Aint rcount, struct plx_datatype *rdt)
{
    plx_cc_hold(sdt, rdt, NULL);
    int done = fn(c, sbuf, scount, sdt, rbuf, rcount, rdt);
    plx_cc_unhold(sdt, rdt, NULL);
    return done;
}

static int plx_cc_shm_reduce(struct plx_comm *c, const void *sbuf, void *rbuf, MPI_Aint count,
                             struct plx_datatype *dt, struct plx_op *op, int root)
{
    plx_cc_hold(dt, NULL, op);
    int done = plx_shmcoll_reduce(c, sbuf, rbuf, count, dt, op, root);
    plx_cc_unhold(dt, NULL, op);
    return done;
}

#pragma weak MPI_Barrier = PMPI_Barrier
#pragma weak MPI_Bcast = PMPI_Bcast
#pragma weak MPI_Gather = PMPI_Gather
#pragma weak MPI_Gatherv = PMPI_Gatherv
#pragma weak MPI_Scatter = PMPI_Scatter
#pragma weak MPI_Scatterv = PMPI_Scatterv
#pragma weak MPI_Allgather = PMPI_Allgather
#pragma weak MPI_Allgatherv = PMPI_Allgatherv
#pragma weak MPI_Alltoall = PMPI_Alltoall
#pragma weak MPI_Alltoallv = PMPI_Alltoallv
#pragma weak MPI_Alltoallw = PMPI_Alltoallw
#pragma weak MPI_Reduce = PMPI_Reduce
#pragma weak MPI_Allreduce = PMPI_Allreduce
#pragma weak MPI_Reduce_scatter = PMPI_Reduce_scatter
#pragma weak MPI_Reduce_scatter_block = PMPI_Reduce_scatter_block
#pragma weak MPI_Scan = PMPI_Scan
#pragma weak MPI_Exscan = PMPI_Exscan
#pragma weak MPI_Ibarrier = PMPI_Ibarrier
#pragma weak MPI_Ibcast = PMPI_Ibcast
#pragma weak MPI_Igather = PMPI_Igather
#pragma weak MPI_Igatherv = PMPI_Igatherv
#pragma weak MPI_Iscatter = PMPI_Iscatter
#pragma weak MPI_Iscatterv = PMPI_Iscatterv
#pragma weak MPI_Iallgather = PMPI_Iallgather
#pragma weak MPI_Iallgatherv = PMPI_Iallgatherv
#pragma weak MPI_Ialltoall = PMPI_Ialltoall
#pragma weak MPI_Ialltoallv = PMPI_Ialltoallv
#pragma weak MPI_Ialltoallw = PMPI_Ialltoallw
#pragma weak MPI_Ireduce = PMPI_Ireduce
#pragma weak MPI_Iallreduce = PMPI_Iallreduce
#pragma weak MPI_Ireduce_scatter = PMPI_Ireduce_scatter
#pragma weak MPI_Ireduce_scatter_block = PMPI_Ireduce_scatter_block
#pragma weak MPI_Iscan = PMPI_Iscan
#pragma weak MPI_Iexscan = PMPI_Iexscan

/* --- argument checks --------------------------------------------------- */

static int plx_cc_comm(MPI_Comm comm, MPI_Request *req, struct plx_comm **c_p, const char *fn)
{
    int rc = plx_api_comm(comm, c_p, fn);
    if (rc == MPI_SUCCESS && req == (MPI_Request *)-1)
        rc = plx_api_null_arg(*c_p, fn, "request");
    return rc;
}

/* count >= 0, a valid committed type, a buffer when there is data. */
static int plx_cc_buf(struct plx_comm *c, const char *fn, const void *buf, MPI_Aint count, MPI_Datatype h,
                      struct plx_datatype **dt_p, const char *arg)
{
    if (count < 0)
        return plx_api_err(c, fn, MPI_ERR_COUNT, "count for '%s' is negative (%ld)", arg, (long)count);
    struct plx_datatype *dt = plx_dt_lookup(h);
    if (!dt)
        return plx_api_err(c, fn, MPI_ERR_TYPE, "datatype for '%s' is %s (handle 0x%x)", arg,
                           h == MPI_DATATYPE_NULL ? "MPI_DATATYPE_NULL" : "not a valid datatype", (unsigned)h);
    if (!dt->committed)
        return plx_api_err(c, fn, MPI_ERR_TYPE, "datatype for '%s' is not committed (call MPI_Type_commit)", arg);
    /* NULL is MPI_BOTTOM, legal with a derived type of absolute addresses */
    if (!buf && count > 0 && dt->size > 0 && dt->obj.builtin)
        return plx_api_err(c, fn, MPI_ERR_BUFFER, "argument '%s' is NULL with count %ld", arg, (long)count);
    *dt_p = dt;
    return MPI_SUCCESS;
}

/* Checks a v-collective's per-rank counts (and displacements, when displs_p
 * is not NULL) and hands them over widened: *counts_p (and *displs_p) are
 * plx_malloc'd on success, to be freed by the caller. */
static int plx_cc_counts(struct plx_comm *c, const char *fn, struct plx_vec counts, struct plx_vec displs,
                         MPI_Count **counts_p, MPI_Aint **displs_p, const char *arg)
{
    if (!counts.p || (displs_p && !displs.p))
        return plx_api_null_arg(c, fn, !counts.p ? arg : "displs");
    for (int i = 0; i < c->size; i++)
        if (plx_vec_at(counts, i) < 0)
            return plx_api_err(c, fn, MPI_ERR_COUNT, "%s[%d] is negative (%lld)", arg, i,
                               (long long)plx_vec_at(counts, i));
    *counts_p = plx_vec_counts(counts, c->size);
    if (displs_p)
        *displs_p = plx_vec_aints(displs, c->size);
    return MPI_SUCCESS;
}

static int plx_cc_root(struct plx_comm *c, int root, const char *fn)
{
    if (plx_comm_is_inter(c)) {
        if (root == MPI_ROOT || root == MPI_PROC_NULL || (root >= 0 && root < c->size))
            return MPI_SUCCESS;
        return plx_api_err(c, fn, MPI_ERR_ROOT,
                           "argument 'root' is %d on an intercommunicator: must be MPI_ROOT, MPI_PROC_NULL or a "
                           "rank of the remote group (0..%d)",
                           root, c->size - 1);
    }
    if (root < 0 || root >= c->size)
        return plx_api_err(c, fn, MPI_ERR_ROOT, "argument 'root' is %d but the communicator has %d ranks", root,
                           c->size);
    return MPI_SUCCESS;
}

static int plx_cc_op(struct plx_comm *c, const char *fn, MPI_Op h, struct plx_datatype *dt, struct plx_op **op_p)
{
    struct plx_op *op = plx_op_lookup(h);
    if (!op)
        return plx_api_err(c, fn, MPI_ERR_OP, "argument 'op' is %s (handle 0x%x)",
                           h == MPI_OP_NULL ? "MPI_OP_NULL" : "not a valid operation", (unsigned)h);
    if (!plx_op_valid_for(op, dt))
        return plx_api_err(c, fn, MPI_ERR_OP, "operation 0x%x is not defined for datatype %s", (unsigned)h,
                           dt->name[0] ? dt->name : "(a derived type)");
    *op_p = op;
    return MPI_SUCCESS;
}

static int plx_cc_alias(struct plx_comm *c, const char *fn, const void *sbuf, const void *rbuf, MPI_Aint count)
{
    if (sbuf == rbuf && sbuf && count > 0)
        return plx_api_err(c, fn, MPI_ERR_BUFFER, "sendbuf and recvbuf are the same buffer (use MPI_IN_PLACE)");
    return MPI_SUCCESS;
}

/* MPI_IN_PLACE has no meaning on an intercommunicator. */
static int plx_cc_inter_inplace(struct plx_comm *c, const char *fn, const void *sbuf, const void *rbuf)
{
    if (sbuf == MPI_IN_PLACE || rbuf == MPI_IN_PLACE)
        return plx_api_err(c, fn, MPI_ERR_BUFFER, "MPI_IN_PLACE is not allowed on an intercommunicator");
    return MPI_SUCCESS;
}

/* Runs (blocking) or starts (req != NULL) the schedule. */
static int plx_cc_go(struct plx_sched *s, MPI_Request *req, struct plx_comm *c, const char *fn)
{
    s->fn = fn;
    if (!req) {
        int err = plx_sched_run(s);
        return err == MPI_SUCCESS ? MPI_SUCCESS : plx_api_err_code(c, err);
    }
    if (plx_api_coll_persistent) {
        *req = plx_sched_persist(s)->obj.handle;
        return MPI_SUCCESS;
    }
    *req = plx_sched_start(s)->obj.handle;
    return MPI_SUCCESS;
}

/* Nonblocking calls pass their request pointer; NULL there is an error,
 * told apart from the blocking form's NULL by this marker. */
static MPI_Request *plx_cc_reqp(MPI_Request *req)
{
    return req ? req : (MPI_Request *)-1;
}

/* --- barrier, bcast ------------------------------------------------------ */

static int plx_barrier(MPI_Comm comm, MPI_Request *req, const char *fn)
{
    struct plx_comm *c = NULL;
    plx_api_lock();
    int rc = plx_cc_comm(comm, req, &c, fn);
    if (rc == MPI_SUCCESS && plx_comm_is_inter(c)) {
        struct plx_sched *s = plx_sched_new(c);
        plx_inter_barrier_sched(s);
        rc = plx_cc_go(s, req, c, fn);
    } else if (rc == MPI_SUCCESS && !(req == NULL && plx_shmcoll_barrier(c))) {
        struct plx_sched *s = plx_sched_new(c);
        plx_coll_barrier_sched(s);
        rc = plx_cc_go(s, req, c, fn);
    }
    plx_api_unlock();
    return rc;
}

int PMPI_Barrier(MPI_Comm comm)
{
    return plx_barrier(comm, NULL, "MPI_Barrier");
}

int PMPI_Ibarrier(MPI_Comm comm, MPI_Request *req)
{
    return plx_barrier(comm, plx_cc_reqp(req), "MPI_Ibarrier");
}

static int plx_bcast(void *buf, MPI_Count count, MPI_Datatype dtype, int root, MPI_Comm comm, MPI_Request *req,
                     const char *fn)
{
    struct plx_comm *c = NULL;
    struct plx_datatype *dt = NULL;
    plx_api_lock();
    int rc = plx_cc_comm(comm, req, &c, fn);
    if (rc == MPI_SUCCESS)
        rc = plx_cc_buf(c, fn, buf, root == MPI_PROC_NULL ? 0 : count, dtype, &dt, "buffer");
    if (rc == MPI_SUCCESS)
        rc = plx_cc_root(c, root, fn);
    if (rc == MPI_SUCCESS && plx_comm_is_inter(c)) {
        struct plx_sched *s = plx_sched_new(c);
        plx_inter_bcast_sched(s, buf, root == MPI_PROC_NULL ? 0 : count, dt, root);
        rc = plx_cc_go(s, req, c, fn);
    } else if (rc == MPI_SUCCESS && !(req == NULL && plx_cc_shm_bcast(c, buf, count, dt, root))) {
        struct plx_sched *s = plx_sched_new(c);
        plx_coll_bcast_sched(s, buf, count, dt, root);
        rc = plx_cc_go(s, req, c, fn);
    }
    plx_api_unlock();
    return rc;
}

int PMPI_Bcast(void *buf, int count, MPI_Datatype dtype, int root, MPI_Comm comm)
{
    return plx_bcast(buf, count, dtype, root, comm, NULL, "MPI_Bcast");
}

int PMPI_Ibcast(void *buf, int count, MPI_Datatype dtype, int root, MPI_Comm comm, MPI_Request *req)
{
    return plx_bcast(buf, count, dtype, root, comm, plx_cc_reqp(req), "MPI_Ibcast");
}

/* --- gather, scatter ---------------------------------------------------- */

/* kind: 0 gather, 1 gatherv, 2 scatter, 3 scatterv */
static int plx_gs(int kind, const void *sbuf, MPI_Count scount, struct plx_vec scounts_v, struct plx_vec sdispls_v,
                  MPI_Datatype stype, void *rbuf, MPI_Count rcount, struct plx_vec rcounts_v,
                  struct plx_vec rdispls_v, MPI_Datatype rtype, int root, MPI_Comm comm, MPI_Request *req,
                  const char *fn)
{
    struct plx_comm *c = NULL;
    struct plx_datatype *sdt = NULL, *rdt = NULL;
    MPI_Count *scounts = NULL, *rcounts = NULL;
    MPI_Aint *sdispls = NULL, *rdispls = NULL;
    plx_api_lock();
    int rc = plx_cc_comm(comm, req, &c, fn);
    if (rc == MPI_SUCCESS)
        rc = plx_cc_root(c, root, fn);
    if (rc)
        goto out;
    int inter = plx_comm_is_inter(c);
    int am_root = inter ? root == MPI_ROOT : c->rank == root, gather = kind < 2;
    /* MPI_PROC_NULL takes no part but still runs an (empty) schedule: every
     * member must draw the same collective tags */
    if (inter && root != MPI_PROC_NULL &&
        (rc = plx_cc_inter_inplace(c, fn, am_root ? NULL : sbuf, am_root ? NULL : rbuf)))
        goto out;
    if (inter && root == MPI_PROC_NULL) {
        /* nothing to check */
    } else if (inter && !am_root) {
        if (gather)
            rc = plx_cc_buf(c, fn, sbuf, scount, stype, &sdt, "sendbuf");
        else
            rc = plx_cc_buf(c, fn, rbuf, rcount, rtype, &rdt, "recvbuf");
    } else if (gather) {
        if (!(am_root && (sbuf == MPI_IN_PLACE || inter)))
            rc = plx_cc_buf(c, fn, sbuf, scount, stype, &sdt, "sendbuf");
        if (rc == MPI_SUCCESS && am_root) {
            if (kind == 1 &&
                (rc = plx_cc_counts(c, fn, rcounts_v, rdispls_v, &rcounts, &rdispls, "recvcounts")) == MPI_SUCCESS)
                rc = plx_cc_buf(c, fn, rbuf, 0, rtype, &rdt, "recvbuf");
            else if (kind == 0)
                rc = plx_cc_buf(c, fn, rbuf, rcount, rtype, &rdt, "recvbuf");
        }
    } else {
        if (!(am_root && (rbuf == MPI_IN_PLACE || inter)))
            rc = plx_cc_buf(c, fn, rbuf, rcount, rtype, &rdt, "recvbuf");
        if (rc == MPI_SUCCESS && am_root) {
            if (kind == 3 &&
                (rc = plx_cc_counts(c, fn, scounts_v, sdispls_v, &scounts, &sdispls, "sendcounts")) == MPI_SUCCESS)
                rc = plx_cc_buf(c, fn, sbuf, 0, stype, &sdt, "sendbuf");
            else if (kind == 2)
                rc = plx_cc_buf(c, fn, sbuf, scount, stype, &sdt, "sendbuf");
        }
    }
    if (rc)
        goto out;
    struct plx_sched *s = plx_sched_new(c);
    if (inter) {
        if (kind == 0)
            plx_inter_gather_sched(s, sbuf, scount, sdt, rbuf, rcount, rdt, root);
        else if (kind == 1)
            plx_inter_gatherv_sched(s, sbuf, scount, sdt, rbuf, rcounts, rdispls, rdt, root);
        else if (kind == 2)
            plx_inter_scatter_sched(s, sbuf, scount, sdt, rbuf, rcount, rdt, root);
        else
            plx_inter_scatterv_sched(s, sbuf, scounts, sdispls, sdt, rbuf, rcount, rdt, root);
        rc = plx_cc_go(s, req, c, fn);
        goto out;
    }
    switch (kind) {
    case 0:
        plx_coll_gather_sched(s, sbuf, scount, sdt, rbuf, rcount, rdt, root);
        break;
    case 1:
        plx_coll_gatherv_sched(s, sbuf, scount, sdt, rbuf, rcounts, rdispls, rdt, root);
        break;
    case 2:
        plx_coll_scatter_sched(s, sbuf, scount, sdt, rbuf, rcount, rdt, root);
        break;
    default:
        plx_coll_scatterv_sched(s, sbuf, scounts, sdispls, sdt, rbuf, rcount, rdt, root);
        break;
    }
    rc = plx_cc_go(s, req, c, fn);
out:
    free(scounts), free(sdispls), free(rcounts), free(rdispls);
    plx_api_unlock();
    return rc;
}

int PMPI_Gather(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount, MPI_Datatype rtype,
                int root, MPI_Comm comm)
{
    return plx_gs(0, sbuf, scount, PLX_VEC_NONE, PLX_VEC_NONE, stype, rbuf, rcount, PLX_VEC_NONE, PLX_VEC_NONE, rtype,
                  root, comm, NULL, "MPI_Gather");
}

int PMPI_Igather(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount, MPI_Datatype rtype,
                 int root, MPI_Comm comm, MPI_Request *req)
{
    return plx_gs(0, sbuf, scount, PLX_VEC_NONE, PLX_VEC_NONE, stype, rbuf, rcount, PLX_VEC_NONE, PLX_VEC_NONE, rtype,
                  root, comm, plx_cc_reqp(req), "MPI_Igather");
}

int PMPI_Gatherv(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, const int rcounts[],
                 const int displs[], MPI_Datatype rtype, int root, MPI_Comm comm)
{
    return plx_gs(1, sbuf, scount, PLX_VEC_NONE, PLX_VEC_NONE, stype, rbuf, 0, plx_vec_int(rcounts),
                  plx_vec_int(displs), rtype, root, comm, NULL, "MPI_Gatherv");
}

int PMPI_Igatherv(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, const int rcounts[],
                  const int displs[], MPI_Datatype rtype, int root, MPI_Comm comm, MPI_Request *req)
{
    return plx_gs(1, sbuf, scount, PLX_VEC_NONE, PLX_VEC_NONE, stype, rbuf, 0, plx_vec_int(rcounts),
                  plx_vec_int(displs), rtype, root, comm, plx_cc_reqp(req), "MPI_Igatherv");
}

int PMPI_Scatter(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount, MPI_Datatype rtype,
                 int root, MPI_Comm comm)
{
    return plx_gs(2, sbuf, scount, PLX_VEC_NONE, PLX_VEC_NONE, stype, rbuf, rcount, PLX_VEC_NONE, PLX_VEC_NONE, rtype,
                  root, comm, NULL, "MPI_Scatter");
}

int PMPI_Iscatter(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount, MPI_Datatype rtype,
                  int root, MPI_Comm comm, MPI_Request *req)
{
    return plx_gs(2, sbuf, scount, PLX_VEC_NONE, PLX_VEC_NONE, stype, rbuf, rcount, PLX_VEC_NONE, PLX_VEC_NONE, rtype,
                  root, comm, plx_cc_reqp(req), "MPI_Iscatter");
}

int PMPI_Scatterv(const void *sbuf, const int scounts[], const int displs[], MPI_Datatype stype, void *rbuf,
                  int rcount, MPI_Datatype rtype, int root, MPI_Comm comm)
{
    return plx_gs(3, sbuf, 0, plx_vec_int(scounts), plx_vec_int(displs), stype, rbuf, rcount, PLX_VEC_NONE,
                  PLX_VEC_NONE, rtype, root, comm, NULL, "MPI_Scatterv");
}

int PMPI_Iscatterv(const void *sbuf, const int scounts[], const int displs[], MPI_Datatype stype, void *rbuf,
                   int rcount, MPI_Datatype rtype, int root, MPI_Comm comm, MPI_Request *req)
{
    return plx_gs(3, sbuf, 0, plx_vec_int(scounts), plx_vec_int(displs), stype, rbuf, rcount, PLX_VEC_NONE,
                  PLX_VEC_NONE, rtype, root, comm, plx_cc_reqp(req), "MPI_Iscatterv");
}

/* --- allgather(v) --------------------------------------------------------- */

static int plx_allgather(const void *sbuf, MPI_Count scount, MPI_Datatype stype, void *rbuf, MPI_Count rcount, int v,
                         struct plx_vec rcounts_v, struct plx_vec displs_v, MPI_Datatype rtype, MPI_Comm comm,
                         MPI_Request *req, const char *fn)
{
    struct plx_comm *c = NULL;
    struct plx_datatype *sdt = NULL, *rdt = NULL;
    MPI_Count *rcounts = NULL;
    MPI_Aint *displs = NULL;
    plx_api_lock();
    int rc = plx_cc_comm(comm, req, &c, fn);
    int inter = rc == MPI_SUCCESS && plx_comm_is_inter(c);
    if (inter)
        rc = plx_cc_inter_inplace(c, fn, sbuf, rbuf);
    if (rc == MPI_SUCCESS && sbuf != MPI_IN_PLACE)
        rc = plx_cc_buf(c, fn, sbuf, scount, stype, &sdt, "sendbuf");
    if (rc == MPI_SUCCESS && v)
        rc = plx_cc_counts(c, fn, rcounts_v, displs_v, &rcounts, &displs, "recvcounts");
    if (rc == MPI_SUCCESS)
        rc = plx_cc_buf(c, fn, rbuf, v ? 0 : rcount, rtype, &rdt, "recvbuf");
    if (rc == MPI_SUCCESS && inter) {
        struct plx_sched *s = plx_sched_new(c);
        if (v)
            plx_inter_allgatherv_sched(s, sbuf, scount, sdt, rbuf, rcounts, displs, rdt);
        else
            plx_inter_allgather_sched(s, sbuf, scount, sdt, rbuf, rcount, rdt);
        rc = plx_cc_go(s, req, c, fn);
    } else if (rc == MPI_SUCCESS &&
        !(req == NULL && !v &&
          plx_cc_shm_exchange(plx_shmcoll_allgather, c, sbuf, scount, sdt, rbuf, rcount, rdt))) {
        struct plx_sched *s = plx_sched_new(c);
        if (v)
            plx_coll_allgatherv_sched(s, sbuf, scount, sdt, rbuf, rcounts, displs, rdt);
        else
            plx_coll_allgather_sched(s, sbuf, scount, sdt, rbuf, rcount, rdt);
        rc = plx_cc_go(s, req, c, fn);
    }
    free(rcounts), free(displs);
    plx_api_unlock();
    return rc;
}

int PMPI_Allgather(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount, MPI_Datatype rtype,
                   MPI_Comm comm)
{
    return plx_allgather(sbuf, scount, stype, rbuf, rcount, 0, PLX_VEC_NONE, PLX_VEC_NONE, rtype, comm, NULL,
                         "MPI_Allgather");
}

int PMPI_Iallgather(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount, MPI_Datatype rtype,
                    MPI_Comm comm, MPI_Request *req)
{
    return plx_allgather(sbuf, scount, stype, rbuf, rcount, 0, PLX_VEC_NONE, PLX_VEC_NONE, rtype, comm,
                         plx_cc_reqp(req), "MPI_Iallgather");
}

int PMPI_Allgatherv(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, const int rcounts[],
                    const int displs[], MPI_Datatype rtype, MPI_Comm comm)
{
    return plx_allgather(sbuf, scount, stype, rbuf, 0, 1, plx_vec_int(rcounts), plx_vec_int(displs), rtype, comm, NULL,
                         "MPI_Allgatherv");
}

int PMPI_Iallgatherv(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, const int rcounts[],
                     const int displs[], MPI_Datatype rtype, MPI_Comm comm, MPI_Request *req)
{
    return plx_allgather(sbuf, scount, stype, rbuf, 0, 1, plx_vec_int(rcounts), plx_vec_int(displs), rtype, comm,
                         plx_cc_reqp(req), "MPI_Iallgatherv");
}

/* --- alltoall(v/w) -------------------------------------------------------- */

static int plx_alltoall(const void *sbuf, MPI_Count scount, MPI_Datatype stype, void *rbuf, MPI_Count rcount,
                        MPI_Datatype rtype,
                        MPI_Comm comm, MPI_Request *req, const char *fn)
{
    struct plx_comm *c = NULL;
    struct plx_datatype *sdt = NULL, *rdt = NULL;
    plx_api_lock();
    int rc = plx_cc_comm(comm, req, &c, fn);
    int inter = rc == MPI_SUCCESS && plx_comm_is_inter(c);
    if (inter)
        rc = plx_cc_inter_inplace(c, fn, sbuf, rbuf);
    if (rc == MPI_SUCCESS && sbuf != MPI_IN_PLACE)
        rc = plx_cc_buf(c, fn, sbuf, scount, stype, &sdt, "sendbuf");
    if (rc == MPI_SUCCESS)
        rc = plx_cc_buf(c, fn, rbuf, rcount, rtype, &rdt, "recvbuf");
    if (rc == MPI_SUCCESS && inter) {
        /* the per-peer form: block j of sbuf goes to remote rank j */
        int p = c->size;
        MPI_Count *cnt = plx_malloc(2 * (size_t)p * sizeof *cnt);
        MPI_Aint *d = plx_malloc(2 * (size_t)p * sizeof *d);
        struct plx_datatype **t = plx_malloc(2 * (size_t)p * sizeof *t);
        for (int j = 0; j < p; j++) {
            cnt[j] = scount;
            cnt[p + j] = rcount;
            d[j] = (MPI_Aint)j * scount * sdt->extent;
            d[p + j] = (MPI_Aint)j * rcount * rdt->extent;
            t[j] = sdt;
            t[p + j] = rdt;
        }
        struct plx_sched *s = plx_sched_new(c);
        plx_inter_alltoallw_sched(s, sbuf, cnt, d, t, rbuf, cnt + p, d + p, t + p);
        rc = plx_cc_go(s, req, c, fn);
        free(cnt);
        free(d);
        free(t);
    } else if (rc == MPI_SUCCESS &&
        !(req == NULL && plx_cc_shm_exchange(plx_shmcoll_alltoall, c, sbuf, scount, sdt, rbuf, rcount, rdt))) {
        struct plx_sched *s = plx_sched_new(c);
        plx_coll_alltoall_sched(s, sbuf, scount, sdt, rbuf, rcount, rdt);
        rc = plx_cc_go(s, req, c, fn);
    }
    plx_api_unlock();
    return rc;
}

int PMPI_Alltoall(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount, MPI_Datatype rtype,
                  MPI_Comm comm)
{
    return plx_alltoall(sbuf, scount, stype, rbuf, rcount, rtype, comm, NULL, "MPI_Alltoall");
}

int PMPI_Ialltoall(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount, MPI_Datatype rtype,
                   MPI_Comm comm, MPI_Request *req)
{
    return plx_alltoall(sbuf, scount, stype, rbuf, rcount, rtype, comm, plx_cc_reqp(req), "MPI_Ialltoall");
}

/* Per-peer (count, byte displacement, type) arrays of one side of an
 * alltoallv/w, checked. w: displacements are bytes and types per peer. */
static int plx_cc_side(struct plx_comm *c, const char *fn, const void *buf, struct plx_vec counts_v,
                       struct plx_vec displs_v, const MPI_Datatype *types, MPI_Datatype type, int w, MPI_Count **cnt_p,
                       MPI_Aint *bd, struct plx_datatype **dts, const char *arg)
{
    MPI_Aint *displs = NULL;
    int rc = plx_cc_counts(c, fn, counts_v, displs_v, cnt_p, &displs, arg);
    if (rc == MPI_SUCCESS && w && !types)
        rc = plx_api_null_arg(c, fn, "types");
    for (int i = 0; rc == MPI_SUCCESS && i < c->size; i++) {
        rc = plx_cc_buf(c, fn, buf, (*cnt_p)[i], w ? types[i] : type, &dts[i], arg);
        if (rc == MPI_SUCCESS)
            bd[i] = w ? displs[i] : displs[i] * dts[i]->extent;
    }
    free(displs);
    return rc;
}

static int plx_alltoallw(const void *sbuf, struct plx_vec scounts_v, struct plx_vec sdispls,
                         const MPI_Datatype *stypes, MPI_Datatype stype, void *rbuf, struct plx_vec rcounts_v,
                         struct plx_vec rdispls, const MPI_Datatype *rtypes, MPI_Datatype rtype, int w, MPI_Comm comm,
                         MPI_Request *req, const char *fn)
{
    struct plx_comm *c = NULL;
    MPI_Count *scounts = NULL, *rcounts = NULL;
    plx_api_lock();
    int rc = plx_cc_comm(comm, req, &c, fn);
    if (rc) {
        plx_api_unlock();
        return rc;
    }
    int p = c->size;
    MPI_Aint *sd = plx_malloc(2 * (size_t)p * sizeof *sd), *rd = sd + p;
    struct plx_datatype **sdts = plx_malloc(2 * (size_t)p * sizeof *sdts), **rdts = sdts + p;
    if (plx_comm_is_inter(c))
        rc = plx_cc_inter_inplace(c, fn, sbuf, rbuf);
    if (rc == MPI_SUCCESS && sbuf != MPI_IN_PLACE)
        rc = plx_cc_side(c, fn, sbuf, scounts_v, sdispls, stypes, stype, w, &scounts, sd, sdts, "sendcounts");
    if (rc == MPI_SUCCESS)
        rc = plx_cc_side(c, fn, rbuf, rcounts_v, rdispls, rtypes, rtype, w, &rcounts, rd, rdts, "recvcounts");
    if (rc == MPI_SUCCESS) {
        struct plx_sched *s = plx_sched_new(c);
        if (plx_comm_is_inter(c))
            plx_inter_alltoallw_sched(s, sbuf, scounts, sd, sdts, rbuf, rcounts, rd, rdts);
        else
            plx_coll_alltoallw_sched(s, sbuf, scounts, sd, sdts, rbuf, rcounts, rd, rdts);
        rc = plx_cc_go(s, req, c, fn);
    }
    free(sd);
    free(sdts);
    free(scounts), free(rcounts);
    plx_api_unlock();
    return rc;
}

int PMPI_Alltoallv(const void *sbuf, const int scounts[], const int sdispls[], MPI_Datatype stype, void *rbuf,
                   const int rcounts[], const int rdispls[], MPI_Datatype rtype, MPI_Comm comm)
{
    return plx_alltoallw(sbuf, plx_vec_int(scounts), plx_vec_int(sdispls), NULL, stype, rbuf, plx_vec_int(rcounts),
                         plx_vec_int(rdispls), NULL, rtype, 0, comm, NULL,
                         "MPI_Alltoallv");
}

int PMPI_Ialltoallv(const void *sbuf, const int scounts[], const int sdispls[], MPI_Datatype stype, void *rbuf,
                    const int rcounts[], const int rdispls[], MPI_Datatype rtype, MPI_Comm comm, MPI_Request *req)
{
    return plx_alltoallw(sbuf, plx_vec_int(scounts), plx_vec_int(sdispls), NULL, stype, rbuf, plx_vec_int(rcounts),
                         plx_vec_int(rdispls), NULL, rtype, 0, comm,
                         plx_cc_reqp(req), "MPI_Ialltoallv");
}

int PMPI_Alltoallw(const void *sbuf, const int scounts[], const int sdispls[], const MPI_Datatype stypes[],
                   void *rbuf, const int rcounts[], const int rdispls[], const MPI_Datatype rtypes[], MPI_Comm comm)
{
    return plx_alltoallw(sbuf, plx_vec_int(scounts), plx_vec_int(sdispls), stypes, 0, rbuf, plx_vec_int(rcounts),
                         plx_vec_int(rdispls), rtypes, 0, 1, comm, NULL,
                         "MPI_Alltoallw");
}

int PMPI_Ialltoallw(const void *sbuf, const int scounts[], const int sdispls[], const MPI_Datatype stypes[],
                    void *rbuf, const int rcounts[], const int rdispls[], const MPI_Datatype rtypes[], MPI_Comm comm,
                    MPI_Request *req)
{
    return plx_alltoallw(sbuf, plx_vec_int(scounts), plx_vec_int(sdispls), stypes, 0, rbuf, plx_vec_int(rcounts),
                         plx_vec_int(rdispls), rtypes, 0, 1, comm,
                         plx_cc_reqp(req), "MPI_Ialltoallw");
}

/* --- reductions ---------------------------------------------------------- */

enum { PLX_RED_REDUCE, PLX_RED_ALLREDUCE, PLX_RED_SCAN, PLX_RED_EXSCAN, PLX_RED_SCATTER, PLX_RED_SCATTER_BLOCK };

/* The reductions on an intercommunicator: counts of Reduce_scatter are
 * per local rank, and both sides reduce vectors of the same length. */
static int plx_red_inter(int kind, struct plx_comm *c, const void *sbuf, void *rbuf, MPI_Count count,
                         const MPI_Count *rcounts,
                         MPI_Datatype dtype, MPI_Op oph, int root, MPI_Request *req, const char *fn)
{
    struct plx_datatype *dt = NULL;
    struct plx_op *op = NULL;
    int lsize = c->group->size;
    if (kind == PLX_RED_SCAN || kind == PLX_RED_EXSCAN)
        return plx_api_err(c, fn, MPI_ERR_COMM, "not defined on an intercommunicator");
    if (kind == PLX_RED_REDUCE && root == MPI_PROC_NULL)   /* takes no part, but draws a tag */
        return plx_cc_go(plx_sched_new(c), req, c, fn);
    int rc = plx_cc_inter_inplace(c, fn, sbuf, rbuf);
    if (rc)
        return rc;
    MPI_Aint total = count, rlen = count;
    if (kind == PLX_RED_SCATTER) {
        if (!rcounts)
            return plx_api_null_arg(c, fn, "recvcounts");
        total = 0;
        for (int i = 0; i < lsize; i++) {
            if (rcounts[i] < 0)
                return plx_api_err(c, fn, MPI_ERR_COUNT, "recvcounts[%d] is negative (%lld)", i,
                                   (long long)rcounts[i]);
            total += rcounts[i];
        }
        rlen = rcounts[c->rank];
    } else if (kind == PLX_RED_SCATTER_BLOCK) {
        total = (MPI_Aint)count * lsize;
    }
    int sends = kind != PLX_RED_REDUCE || root != MPI_ROOT;
    int recvs = kind != PLX_RED_REDUCE || root == MPI_ROOT;
    rc = plx_cc_buf(c, fn, recvs ? rbuf : (void *)1, recvs ? rlen : 0, dtype, &dt, "recvbuf");
    if (rc == MPI_SUCCESS && sends)
        rc = plx_cc_buf(c, fn, sbuf, total, dtype, &dt, "sendbuf");
    if (rc == MPI_SUCCESS)
        rc = plx_cc_op(c, fn, oph, dt, &op);
    if (rc)
        return rc;
    struct plx_sched *s = plx_sched_new(c);
    plx_sched_set_op(s, op);
    if (kind == PLX_RED_REDUCE) {
        plx_inter_reduce_sched(s, sbuf, rbuf, count, dt, root);
    } else if (kind == PLX_RED_ALLREDUCE) {
        plx_inter_allreduce_sched(s, sbuf, rbuf, count, dt);
    } else if (kind == PLX_RED_SCATTER) {
        plx_inter_reduce_scatter_sched(s, sbuf, rbuf, rcounts, dt);
    } else {
        MPI_Count *counts = plx_malloc((size_t)lsize * sizeof *counts);
        for (int i = 0; i < lsize; i++)
            counts[i] = count;
        plx_inter_reduce_scatter_sched(s, sbuf, rbuf, counts, dt);
        free(counts);
    }
    return plx_cc_go(s, req, c, fn);
}

static int plx_red(int kind, const void *sbuf, void *rbuf, MPI_Count count, struct plx_vec rcounts_v,
                   MPI_Datatype dtype, MPI_Op oph, int root, MPI_Comm comm, MPI_Request *req, const char *fn)
{
    struct plx_comm *c = NULL;
    MPI_Count *rcounts = NULL;
    struct plx_datatype *dt = NULL;
    struct plx_op *op = NULL;
    plx_api_lock();
    int rc = plx_cc_comm(comm, req, &c, fn);
    if (rc == MPI_SUCCESS && kind == PLX_RED_REDUCE)
        rc = plx_cc_root(c, root, fn);
    if (rc)
        goto out;
    if (kind == PLX_RED_SCATTER && rcounts_v.p)    /* checked below */
        rcounts = plx_vec_counts(rcounts_v, plx_comm_is_inter(c) ? c->group->size : c->size);
    if (plx_comm_is_inter(c)) {
        rc = plx_red_inter(kind, c, sbuf, rbuf, count, rcounts, dtype, oph, root, req, fn);
        goto out;
    }
    MPI_Count *counts = NULL;
    MPI_Aint total = count;
    if (kind == PLX_RED_SCATTER) {
        if (!rcounts) {
            rc = plx_api_null_arg(c, fn, "recvcounts");
            goto out;
        }
        total = 0;
        for (int i = 0; i < c->size; i++) {
            if (rcounts[i] < 0) {
                rc = plx_api_err(c, fn, MPI_ERR_COUNT, "recvcounts[%d] is negative (%lld)", i,
                                 (long long)rcounts[i]);
                goto out;
            }
            total += rcounts[i];
        }
    } else if (kind == PLX_RED_SCATTER_BLOCK) {
        total = (MPI_Aint)count * c->size;
    }
    int in_place = sbuf == MPI_IN_PLACE;
    if (in_place && kind == PLX_RED_REDUCE && c->rank != root)
        in_place = 0;   /* only the root may pass MPI_IN_PLACE; elsewhere it is just a pointer */
    MPI_Aint rlen = kind == PLX_RED_SCATTER ? rcounts[c->rank] : count;
    int has_rbuf = kind != PLX_RED_REDUCE || c->rank == root;
    rc = plx_cc_buf(c, fn, has_rbuf ? rbuf : (void *)1, has_rbuf ? (in_place ? total : rlen) : 0, dtype, &dt,
                    "recvbuf");
    if (rc == MPI_SUCCESS && !in_place)
        rc = plx_cc_buf(c, fn, sbuf, total, dtype, &dt, "sendbuf");
    if (rc == MPI_SUCCESS && !in_place && has_rbuf)
        rc = plx_cc_alias(c, fn, sbuf, rbuf, total);
    if (rc == MPI_SUCCESS)
        rc = plx_cc_op(c, fn, oph, dt, &op);
    if (rc)
        goto out;
    if (req == NULL && (kind == PLX_RED_REDUCE || kind == PLX_RED_ALLREDUCE) &&
        plx_cc_shm_reduce(c, sbuf, rbuf, count, dt, op, kind == PLX_RED_REDUCE ? root : -1))
        goto out;
    struct plx_sched *s = plx_sched_new(c);
    plx_sched_set_op(s, op);
    switch (kind) {
    case PLX_RED_REDUCE:
        plx_coll_reduce_sched(s, sbuf, rbuf, count, dt, root);
        break;
    case PLX_RED_ALLREDUCE:
        plx_coll_allreduce_sched(s, sbuf, rbuf, count, dt);
        break;
    case PLX_RED_SCAN:
    case PLX_RED_EXSCAN:
        plx_coll_scan_sched(s, sbuf, rbuf, count, dt, kind == PLX_RED_EXSCAN);
        break;
    case PLX_RED_SCATTER:
        plx_coll_reduce_scatter_sched(s, sbuf, rbuf, rcounts, dt);
        break;
    default:
        counts = plx_malloc((size_t)c->size * sizeof *counts);
        for (int i = 0; i < c->size; i++)
            counts[i] = count;
        plx_coll_reduce_scatter_sched(s, sbuf, rbuf, counts, dt);
        free(counts);
        break;
    }
    rc = plx_cc_go(s, req, c, fn);
out:
    free(rcounts);
    plx_api_unlock();
    return rc;
}

int PMPI_Reduce(const void *sbuf, void *rbuf, int count, MPI_Datatype dtype, MPI_Op op, int root, MPI_Comm comm)
{
    return plx_red(PLX_RED_REDUCE, sbuf, rbuf, count, PLX_VEC_NONE, dtype, op, root, comm, NULL, "MPI_Reduce");
}

int PMPI_Ireduce(const void *sbuf, void *rbuf, int count, MPI_Datatype dtype, MPI_Op op, int root, MPI_Comm comm,
                 MPI_Request *req)
{
    return plx_red(PLX_RED_REDUCE, sbuf, rbuf, count, PLX_VEC_NONE, dtype, op, root, comm, plx_cc_reqp(req),
                   "MPI_Ireduce");
}

int PMPI_Allreduce(const void *sbuf, void *rbuf, int count, MPI_Datatype dtype, MPI_Op op, MPI_Comm comm)
{
    return plx_red(PLX_RED_ALLREDUCE, sbuf, rbuf, count, PLX_VEC_NONE, dtype, op, 0, comm, NULL, "MPI_Allreduce");
}

int PMPI_Iallreduce(const void *sbuf, void *rbuf, int count, MPI_Datatype dtype, MPI_Op op, MPI_Comm comm,
                    MPI_Request *req)
{
    return plx_red(PLX_RED_ALLREDUCE, sbuf, rbuf, count, PLX_VEC_NONE, dtype, op, 0, comm, plx_cc_reqp(req),
                   "MPI_Iallreduce");
}

int PMPI_Scan(const void *sbuf, void *rbuf, int count, MPI_Datatype dtype, MPI_Op op, MPI_Comm comm)
{
    return plx_red(PLX_RED_SCAN, sbuf, rbuf, count, PLX_VEC_NONE, dtype, op, 0, comm, NULL, "MPI_Scan");
}

int PMPI_Iscan(const void *sbuf, void *rbuf, int count, MPI_Datatype dtype, MPI_Op op, MPI_Comm comm,
               MPI_Request *req)
{
    return plx_red(PLX_RED_SCAN, sbuf, rbuf, count, PLX_VEC_NONE, dtype, op, 0, comm, plx_cc_reqp(req), "MPI_Iscan");
}

int PMPI_Exscan(const void *sbuf, void *rbuf, int count, MPI_Datatype dtype, MPI_Op op, MPI_Comm comm)
{
    return plx_red(PLX_RED_EXSCAN, sbuf, rbuf, count, PLX_VEC_NONE, dtype, op, 0, comm, NULL, "MPI_Exscan");
}

int PMPI_Iexscan(const void *sbuf, void *rbuf, int count, MPI_Datatype dtype, MPI_Op op, MPI_Comm comm,
                 MPI_Request *req)
{
    return plx_red(PLX_RED_EXSCAN, sbuf, rbuf, count, PLX_VEC_NONE, dtype, op, 0, comm, plx_cc_reqp(req),
                   "MPI_Iexscan");
}

int PMPI_Reduce_scatter(const void *sbuf, void *rbuf, const int rcounts[], MPI_Datatype dtype, MPI_Op op,
                        MPI_Comm comm)
{
    return plx_red(PLX_RED_SCATTER, sbuf, rbuf, 0, plx_vec_int(rcounts), dtype, op, 0, comm, NULL,
                   "MPI_Reduce_scatter");
}

int PMPI_Ireduce_scatter(const void *sbuf, void *rbuf, const int rcounts[], MPI_Datatype dtype, MPI_Op op,
                         MPI_Comm comm, MPI_Request *req)
{
    return plx_red(PLX_RED_SCATTER, sbuf, rbuf, 0, plx_vec_int(rcounts), dtype, op, 0, comm, plx_cc_reqp(req),
                   "MPI_Ireduce_scatter");
}

int PMPI_Reduce_scatter_block(const void *sbuf, void *rbuf, int rcount, MPI_Datatype dtype, MPI_Op op,
                              MPI_Comm comm)
{
    return plx_red(PLX_RED_SCATTER_BLOCK, sbuf, rbuf, rcount, PLX_VEC_NONE, dtype, op, 0, comm, NULL,
                   "MPI_Reduce_scatter_block");
}

int PMPI_Ireduce_scatter_block(const void *sbuf, void *rbuf, int rcount, MPI_Datatype dtype, MPI_Op op,
                               MPI_Comm comm, MPI_Request *req)
{
    return plx_red(PLX_RED_SCATTER_BLOCK, sbuf, rbuf, rcount, PLX_VEC_NONE, dtype, op, 0, comm, plx_cc_reqp(req),
                   "MPI_Ireduce_scatter_block");
}

/* --- persistent collectives (MPI 4.0) ------------------------------------
 * MPI_X_init checks its arguments and builds the schedule of MPI_IX once,
 * keeping it in an inactive persistent request; every MPI_Start runs that
 * schedule again on the data then in the buffers (coll/sched.h). The info
 * hints are accepted and not used. */

_Thread_local int plx_api_coll_persistent;

int plx_api_coll_init_info(MPI_Comm comm, MPI_Info info, MPI_Request *request, const char *fn)
{
    struct plx_comm *c = NULL;
    struct plx_info *in;
    plx_api_lock();
    int rc = plx_api_comm(comm, &c, fn);
    if (rc == MPI_SUCCESS && info != MPI_INFO_NULL)
        rc = plx_api_info(c, info, &in, fn, "info");
    if (rc == MPI_SUCCESS && !request)
        rc = plx_api_null_arg(c, fn, "request");
    plx_api_unlock();
    return rc;
}

#define PLX_CC_INIT(call)                                                                          \
    do {                                                                                           \
        int rc_ = plx_api_coll_init_info(comm, info, req, fn);                                     \
        if (rc_)                                                                                   \
            return rc_;                                                                            \
        plx_api_coll_persistent = 1;                                                               \
        rc_ = (call);                                                                              \
        plx_api_coll_persistent = 0;                                                               \
        return rc_;                                                                                \
    } while (0)

#pragma weak MPI_Barrier_init = PMPI_Barrier_init
#pragma weak MPI_Bcast_init = PMPI_Bcast_init
#pragma weak MPI_Gather_init = PMPI_Gather_init
#pragma weak MPI_Gatherv_init = PMPI_Gatherv_init
#pragma weak MPI_Scatter_init = PMPI_Scatter_init
#pragma weak MPI_Scatterv_init = PMPI_Scatterv_init
#pragma weak MPI_Allgather_init = PMPI_Allgather_init
#pragma weak MPI_Allgatherv_init = PMPI_Allgatherv_init
#pragma weak MPI_Alltoall_init = PMPI_Alltoall_init
#pragma weak MPI_Alltoallv_init = PMPI_Alltoallv_init
#pragma weak MPI_Alltoallw_init = PMPI_Alltoallw_init
#pragma weak MPI_Reduce_init = PMPI_Reduce_init
#pragma weak MPI_Allreduce_init = PMPI_Allreduce_init
#pragma weak MPI_Reduce_scatter_init = PMPI_Reduce_scatter_init
#pragma weak MPI_Reduce_scatter_block_init = PMPI_Reduce_scatter_block_init
#pragma weak MPI_Scan_init = PMPI_Scan_init
#pragma weak MPI_Exscan_init = PMPI_Exscan_init

int PMPI_Barrier_init(MPI_Comm comm, MPI_Info info, MPI_Request *req)
{
    static const char fn[] = "MPI_Barrier_init";
    PLX_CC_INIT(plx_barrier(comm, req, fn));
}

int PMPI_Bcast_init(void *buf, int count, MPI_Datatype dtype, int root, MPI_Comm comm, MPI_Info info,
                    MPI_Request *req)
{
    static const char fn[] = "MPI_Bcast_init";
    PLX_CC_INIT(plx_bcast(buf, count, dtype, root, comm, req, fn));
}

int PMPI_Gather_init(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount, MPI_Datatype rtype,
                     int root, MPI_Comm comm, MPI_Info info, MPI_Request *req)
{
    static const char fn[] = "MPI_Gather_init";
    PLX_CC_INIT(plx_gs(0, sbuf, scount, PLX_VEC_NONE, PLX_VEC_NONE, stype, rbuf, rcount, PLX_VEC_NONE, PLX_VEC_NONE,
                       rtype, root, comm, req, fn));
}

int PMPI_Gatherv_init(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, const int rcounts[],
                      const int displs[], MPI_Datatype rtype, int root, MPI_Comm comm, MPI_Info info,
                      MPI_Request *req)
{
    static const char fn[] = "MPI_Gatherv_init";
    PLX_CC_INIT(plx_gs(1, sbuf, scount, PLX_VEC_NONE, PLX_VEC_NONE, stype, rbuf, 0, plx_vec_int(rcounts),
                       plx_vec_int(displs), rtype, root, comm, req, fn));
}

int PMPI_Scatter_init(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
                      MPI_Datatype rtype, int root, MPI_Comm comm, MPI_Info info, MPI_Request *req)
{
    static const char fn[] = "MPI_Scatter_init";
    PLX_CC_INIT(plx_gs(2, sbuf, scount, PLX_VEC_NONE, PLX_VEC_NONE, stype, rbuf, rcount, PLX_VEC_NONE, PLX_VEC_NONE,
                       rtype, root, comm, req, fn));
}

int PMPI_Scatterv_init(const void *sbuf, const int scounts[], const int displs[], MPI_Datatype stype, void *rbuf,
                       int rcount, MPI_Datatype rtype, int root, MPI_Comm comm, MPI_Info info, MPI_Request *req)
{
    static const char fn[] = "MPI_Scatterv_init";
    PLX_CC_INIT(plx_gs(3, sbuf, 0, plx_vec_int(scounts), plx_vec_int(displs), stype, rbuf, rcount, PLX_VEC_NONE,
                       PLX_VEC_NONE, rtype, root, comm, req, fn));
}

int PMPI_Allgather_init(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
                        MPI_Datatype rtype, MPI_Comm comm, MPI_Info info, MPI_Request *req)
{
    static const char fn[] = "MPI_Allgather_init";
    PLX_CC_INIT(plx_allgather(sbuf, scount, stype, rbuf, rcount, 0, PLX_VEC_NONE, PLX_VEC_NONE, rtype, comm, req, fn));
}

int PMPI_Allgatherv_init(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, const int rcounts[],
                         const int displs[], MPI_Datatype rtype, MPI_Comm comm, MPI_Info info, MPI_Request *req)
{
    static const char fn[] = "MPI_Allgatherv_init";
    PLX_CC_INIT(plx_allgather(sbuf, scount, stype, rbuf, 0, 1, plx_vec_int(rcounts), plx_vec_int(displs), rtype, comm,
                              req, fn));
}

int PMPI_Alltoall_init(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
                       MPI_Datatype rtype, MPI_Comm comm, MPI_Info info, MPI_Request *req)
{
    static const char fn[] = "MPI_Alltoall_init";
    PLX_CC_INIT(plx_alltoall(sbuf, scount, stype, rbuf, rcount, rtype, comm, req, fn));
}

int PMPI_Alltoallv_init(const void *sbuf, const int scounts[], const int sdispls[], MPI_Datatype stype,
                        void *rbuf, const int rcounts[], const int rdispls[], MPI_Datatype rtype, MPI_Comm comm,
                        MPI_Info info, MPI_Request *req)
{
    static const char fn[] = "MPI_Alltoallv_init";
    PLX_CC_INIT(plx_alltoallw(sbuf, plx_vec_int(scounts), plx_vec_int(sdispls), NULL, stype, rbuf, plx_vec_int(rcounts),
                         plx_vec_int(rdispls), NULL, rtype, 0, comm,
                              req, fn));
}

int PMPI_Alltoallw_init(const void *sbuf, const int scounts[], const int sdispls[], const MPI_Datatype stypes[],
                        void *rbuf, const int rcounts[], const int rdispls[], const MPI_Datatype rtypes[],
                        MPI_Comm comm, MPI_Info info, MPI_Request *req)
{
    static const char fn[] = "MPI_Alltoallw_init";
    PLX_CC_INIT(plx_alltoallw(sbuf, plx_vec_int(scounts), plx_vec_int(sdispls), stypes, 0, rbuf, plx_vec_int(rcounts),
                         plx_vec_int(rdispls), rtypes, 0, 1, comm, req,
                              fn));
}

int PMPI_Reduce_init(const void *sbuf, void *rbuf, int count, MPI_Datatype dtype, MPI_Op op, int root,
                     MPI_Comm comm, MPI_Info info, MPI_Request *req)
{
    static const char fn[] = "MPI_Reduce_init";
    PLX_CC_INIT(plx_red(PLX_RED_REDUCE, sbuf, rbuf, count, PLX_VEC_NONE, dtype, op, root, comm, req, fn));
}

int PMPI_Allreduce_init(const void *sbuf, void *rbuf, int count, MPI_Datatype dtype, MPI_Op op, MPI_Comm comm,
                        MPI_Info info, MPI_Request *req)
{
    static const char fn[] = "MPI_Allreduce_init";
    PLX_CC_INIT(plx_red(PLX_RED_ALLREDUCE, sbuf, rbuf, count, PLX_VEC_NONE, dtype, op, 0, comm, req, fn));
}

int PMPI_Reduce_scatter_init(const void *sbuf, void *rbuf, const int rcounts[], MPI_Datatype dtype, MPI_Op op,
                             MPI_Comm comm, MPI_Info info, MPI_Request *req)
{
    static const char fn[] = "MPI_Reduce_scatter_init";
    PLX_CC_INIT(plx_red(PLX_RED_SCATTER, sbuf, rbuf, 0, plx_vec_int(rcounts), dtype, op, 0, comm, req, fn));
}

int PMPI_Reduce_scatter_block_init(const void *sbuf, void *rbuf, int rcount, MPI_Datatype dtype, MPI_Op op,
                                   MPI_Comm comm, MPI_Info info, MPI_Request *req)
{
    static const char fn[] = "MPI_Reduce_scatter_block_init";
    PLX_CC_INIT(plx_red(PLX_RED_SCATTER_BLOCK, sbuf, rbuf, rcount, PLX_VEC_NONE, dtype, op, 0, comm, req, fn));
}

int PMPI_Scan_init(const void *sbuf, void *rbuf, int count, MPI_Datatype dtype, MPI_Op op, MPI_Comm comm,
                   MPI_Info info, MPI_Request *req)
{
    static const char fn[] = "MPI_Scan_init";
    PLX_CC_INIT(plx_red(PLX_RED_SCAN, sbuf, rbuf, count, PLX_VEC_NONE, dtype, op, 0, comm, req, fn));
}

int PMPI_Exscan_init(const void *sbuf, void *rbuf, int count, MPI_Datatype dtype, MPI_Op op, MPI_Comm comm,
                     MPI_Info info, MPI_Request *req)
{
    static const char fn[] = "MPI_Exscan_init";
    PLX_CC_INIT(plx_red(PLX_RED_EXSCAN, sbuf, rbuf, count, PLX_VEC_NONE, dtype, op, 0, comm, req, fn));
}

/* --- large-count forms (MPI 4.0 `_c`): MPI_Count counts, MPI_Aint displacements ------
 * The same implementations as the int forms above; only the width of what the
 * caller passes differs. */

#pragma weak MPI_Allgather_c = PMPI_Allgather_c
#pragma weak MPI_Allgather_init_c = PMPI_Allgather_init_c
#pragma weak MPI_Allgatherv_c = PMPI_Allgatherv_c
#pragma weak MPI_Allgatherv_init_c = PMPI_Allgatherv_init_c
#pragma weak MPI_Allreduce_c = PMPI_Allreduce_c
#pragma weak MPI_Allreduce_init_c = PMPI_Allreduce_init_c
#pragma weak MPI_Alltoall_c = PMPI_Alltoall_c
#pragma weak MPI_Alltoall_init_c = PMPI_Alltoall_init_c
#pragma weak MPI_Alltoallv_c = PMPI_Alltoallv_c
#pragma weak MPI_Alltoallv_init_c = PMPI_Alltoallv_init_c
#pragma weak MPI_Alltoallw_c = PMPI_Alltoallw_c
#pragma weak MPI_Alltoallw_init_c = PMPI_Alltoallw_init_c
#pragma weak MPI_Bcast_c = PMPI_Bcast_c
#pragma weak MPI_Bcast_init_c = PMPI_Bcast_init_c
#pragma weak MPI_Exscan_c = PMPI_Exscan_c
#pragma weak MPI_Exscan_init_c = PMPI_Exscan_init_c
#pragma weak MPI_Gather_c = PMPI_Gather_c
#pragma weak MPI_Gather_init_c = PMPI_Gather_init_c
#pragma weak MPI_Gatherv_c = PMPI_Gatherv_c
#pragma weak MPI_Gatherv_init_c = PMPI_Gatherv_init_c
#pragma weak MPI_Iallgather_c = PMPI_Iallgather_c
#pragma weak MPI_Iallgatherv_c = PMPI_Iallgatherv_c
#pragma weak MPI_Iallreduce_c = PMPI_Iallreduce_c
#pragma weak MPI_Ialltoall_c = PMPI_Ialltoall_c
#pragma weak MPI_Ialltoallv_c = PMPI_Ialltoallv_c
#pragma weak MPI_Ialltoallw_c = PMPI_Ialltoallw_c
#pragma weak MPI_Ibcast_c = PMPI_Ibcast_c
#pragma weak MPI_Iexscan_c = PMPI_Iexscan_c
#pragma weak MPI_Igather_c = PMPI_Igather_c
#pragma weak MPI_Igatherv_c = PMPI_Igatherv_c
#pragma weak MPI_Ireduce_c = PMPI_Ireduce_c
#pragma weak MPI_Ireduce_scatter_block_c = PMPI_Ireduce_scatter_block_c
#pragma weak MPI_Ireduce_scatter_c = PMPI_Ireduce_scatter_c
#pragma weak MPI_Iscan_c = PMPI_Iscan_c
#pragma weak MPI_Iscatter_c = PMPI_Iscatter_c
#pragma weak MPI_Iscatterv_c = PMPI_Iscatterv_c
#pragma weak MPI_Reduce_c = PMPI_Reduce_c
#pragma weak MPI_Reduce_init_c = PMPI_Reduce_init_c
#pragma weak MPI_Reduce_scatter_block_c = PMPI_Reduce_scatter_block_c
#pragma weak MPI_Reduce_scatter_block_init_c = PMPI_Reduce_scatter_block_init_c
#pragma weak MPI_Reduce_scatter_c = PMPI_Reduce_scatter_c
#pragma weak MPI_Reduce_scatter_init_c = PMPI_Reduce_scatter_init_c
#pragma weak MPI_Scan_c = PMPI_Scan_c
#pragma weak MPI_Scan_init_c = PMPI_Scan_init_c
#pragma weak MPI_Scatter_c = PMPI_Scatter_c
#pragma weak MPI_Scatter_init_c = PMPI_Scatter_init_c
#pragma weak MPI_Scatterv_c = PMPI_Scatterv_c
#pragma weak MPI_Scatterv_init_c = PMPI_Scatterv_init_c

int PMPI_Allgather_c(const void *sbuf, MPI_Count scount, MPI_Datatype stype, void *rbuf, MPI_Count rcount,
                     MPI_Datatype rtype, MPI_Comm comm)
{
    return plx_allgather(sbuf, scount, stype, rbuf, rcount, 0, PLX_VEC_NONE, PLX_VEC_NONE, rtype, comm, NULL,
                         "MPI_Allgather_c");
}

int PMPI_Allgather_init_c(const void *sbuf, MPI_Count scount, MPI_Datatype stype, void *rbuf, MPI_Count rcount,
                          MPI_Datatype rtype, MPI_Comm comm, MPI_Info info, MPI_Request *req)
{
    static const char fn[] = "MPI_Allgather_init_c";
    PLX_CC_INIT(plx_allgather(sbuf, scount, stype, rbuf, rcount, 0, PLX_VEC_NONE, PLX_VEC_NONE, rtype, comm, req,
                fn));
}

int PMPI_Allgatherv_c(const void *sbuf, MPI_Count scount, MPI_Datatype stype, void *rbuf, const MPI_Count rcounts[],
                      const MPI_Aint displs[], MPI_Datatype rtype, MPI_Comm comm)
{
    return plx_allgather(sbuf, scount, stype, rbuf, 0, 1, plx_vec_count(rcounts), plx_vec_aint(displs), rtype, comm,
                         NULL, "MPI_Allgatherv_c");
}

int PMPI_Allgatherv_init_c(const void *sbuf, MPI_Count scount, MPI_Datatype stype, void *rbuf,
                           const MPI_Count rcounts[], const MPI_Aint displs[], MPI_Datatype rtype, MPI_Comm comm,
                           MPI_Info info, MPI_Request *req)
{
    static const char fn[] = "MPI_Allgatherv_init_c";
    PLX_CC_INIT(plx_allgather(sbuf, scount, stype, rbuf, 0, 1, plx_vec_count(rcounts), plx_vec_aint(displs), rtype,
                comm, req, fn));
}

int PMPI_Allreduce_c(const void *sbuf, void *rbuf, MPI_Count count, MPI_Datatype dtype, MPI_Op op, MPI_Comm comm)
{
    return plx_red(PLX_RED_ALLREDUCE, sbuf, rbuf, count, PLX_VEC_NONE, dtype, op, 0, comm, NULL, "MPI_Allreduce_c");
}

int PMPI_Allreduce_init_c(const void *sbuf, void *rbuf, MPI_Count count, MPI_Datatype dtype, MPI_Op op, MPI_Comm comm,
                          MPI_Info info, MPI_Request *req)
{
    static const char fn[] = "MPI_Allreduce_init_c";
    PLX_CC_INIT(plx_red(PLX_RED_ALLREDUCE, sbuf, rbuf, count, PLX_VEC_NONE, dtype, op, 0, comm, req, fn));
}

int PMPI_Alltoall_c(const void *sbuf, MPI_Count scount, MPI_Datatype stype, void *rbuf, MPI_Count rcount,
                    MPI_Datatype rtype, MPI_Comm comm)
{
    return plx_alltoall(sbuf, scount, stype, rbuf, rcount, rtype, comm, NULL, "MPI_Alltoall_c");
}

int PMPI_Alltoall_init_c(const void *sbuf, MPI_Count scount, MPI_Datatype stype, void *rbuf, MPI_Count rcount,
                         MPI_Datatype rtype, MPI_Comm comm, MPI_Info info, MPI_Request *req)
{
    static const char fn[] = "MPI_Alltoall_init_c";
    PLX_CC_INIT(plx_alltoall(sbuf, scount, stype, rbuf, rcount, rtype, comm, req, fn));
}

int PMPI_Alltoallv_c(const void *sbuf, const MPI_Count scounts[], const MPI_Aint sdispls[], MPI_Datatype stype,
                     void *rbuf, const MPI_Count rcounts[], const MPI_Aint rdispls[], MPI_Datatype rtype,
                     MPI_Comm comm)
{
    return plx_alltoallw(sbuf, plx_vec_count(scounts), plx_vec_aint(sdispls), NULL, stype, rbuf,
                         plx_vec_count(rcounts),
                         plx_vec_aint(rdispls), NULL, rtype, 0, comm, NULL,
                         "MPI_Alltoallv_c");
}

int PMPI_Alltoallv_init_c(const void *sbuf, const MPI_Count scounts[], const MPI_Aint sdispls[], MPI_Datatype stype,
                          void *rbuf, const MPI_Count rcounts[], const MPI_Aint rdispls[], MPI_Datatype rtype,
                          MPI_Comm comm, MPI_Info info, MPI_Request *req)
{
    static const char fn[] = "MPI_Alltoallv_init_c";
    PLX_CC_INIT(plx_alltoallw(sbuf, plx_vec_count(scounts), plx_vec_aint(sdispls), NULL, stype, rbuf,
                plx_vec_count(rcounts),
                         plx_vec_aint(rdispls), NULL, rtype, 0, comm,
                              req, fn));
}

int PMPI_Alltoallw_c(const void *sbuf, const MPI_Count scounts[], const MPI_Aint sdispls[],
                     const MPI_Datatype stypes[], void *rbuf, const MPI_Count rcounts[], const MPI_Aint rdispls[],
                     const MPI_Datatype rtypes[], MPI_Comm comm)
{
    return plx_alltoallw(sbuf, plx_vec_count(scounts), plx_vec_aint(sdispls), stypes, 0, rbuf, plx_vec_count(rcounts),
                         plx_vec_aint(rdispls), rtypes, 0, 1, comm, NULL,
                         "MPI_Alltoallw_c");
}

int PMPI_Alltoallw_init_c(const void *sbuf, const MPI_Count scounts[], const MPI_Aint sdispls[],
                          const MPI_Datatype stypes[], void *rbuf, const MPI_Count rcounts[], const MPI_Aint rdispls[],
                          const MPI_Datatype rtypes[], MPI_Comm comm, MPI_Info info, MPI_Request *req)
{
    static const char fn[] = "MPI_Alltoallw_init_c";
    PLX_CC_INIT(plx_alltoallw(sbuf, plx_vec_count(scounts), plx_vec_aint(sdispls), stypes, 0, rbuf,
                plx_vec_count(rcounts),
                         plx_vec_aint(rdispls), rtypes, 0, 1, comm, req,
                              fn));
}

int PMPI_Bcast_c(void *buf, MPI_Count count, MPI_Datatype dtype, int root, MPI_Comm comm)
{
    return plx_bcast(buf, count, dtype, root, comm, NULL, "MPI_Bcast_c");
}

int PMPI_Bcast_init_c(void *buf, MPI_Count count, MPI_Datatype dtype, int root, MPI_Comm comm, MPI_Info info,
                      MPI_Request *req)
{
    static const char fn[] = "MPI_Bcast_init_c";
    PLX_CC_INIT(plx_bcast(buf, count, dtype, root, comm, req, fn));
}

int PMPI_Exscan_c(const void *sbuf, void *rbuf, MPI_Count count, MPI_Datatype dtype, MPI_Op op, MPI_Comm comm)
{
    return plx_red(PLX_RED_EXSCAN, sbuf, rbuf, count, PLX_VEC_NONE, dtype, op, 0, comm, NULL, "MPI_Exscan_c");
}

int PMPI_Exscan_init_c(const void *sbuf, void *rbuf, MPI_Count count, MPI_Datatype dtype, MPI_Op op, MPI_Comm comm,
                       MPI_Info info, MPI_Request *req)
{
    static const char fn[] = "MPI_Exscan_init_c";
    PLX_CC_INIT(plx_red(PLX_RED_EXSCAN, sbuf, rbuf, count, PLX_VEC_NONE, dtype, op, 0, comm, req, fn));
}

int PMPI_Gather_c(const void *sbuf, MPI_Count scount, MPI_Datatype stype, void *rbuf, MPI_Count rcount,
                  MPI_Datatype rtype, int root, MPI_Comm comm)
{
    return plx_gs(0, sbuf, scount, PLX_VEC_NONE, PLX_VEC_NONE, stype, rbuf, rcount, PLX_VEC_NONE, PLX_VEC_NONE, rtype,
                  root, comm, NULL,
                  "MPI_Gather_c");
}

int PMPI_Gather_init_c(const void *sbuf, MPI_Count scount, MPI_Datatype stype, void *rbuf, MPI_Count rcount,
                       MPI_Datatype rtype, int root, MPI_Comm comm, MPI_Info info, MPI_Request *req)
{
    static const char fn[] = "MPI_Gather_init_c";
    PLX_CC_INIT(plx_gs(0, sbuf, scount, PLX_VEC_NONE, PLX_VEC_NONE, stype, rbuf, rcount, PLX_VEC_NONE, PLX_VEC_NONE,
                rtype, root, comm, req, fn));
}

int PMPI_Gatherv_c(const void *sbuf, MPI_Count scount, MPI_Datatype stype, void *rbuf, const MPI_Count rcounts[],
                   const MPI_Aint displs[], MPI_Datatype rtype, int root, MPI_Comm comm)
{
    return plx_gs(1, sbuf, scount, PLX_VEC_NONE, PLX_VEC_NONE, stype, rbuf, 0, plx_vec_count(rcounts),
                  plx_vec_aint(displs), rtype, root, comm, NULL,
                  "MPI_Gatherv_c");
}

int PMPI_Gatherv_init_c(const void *sbuf, MPI_Count scount, MPI_Datatype stype, void *rbuf, const MPI_Count rcounts[],
                        const MPI_Aint displs[], MPI_Datatype rtype, int root, MPI_Comm comm, MPI_Info info,
                        MPI_Request *req)
{
    static const char fn[] = "MPI_Gatherv_init_c";
    PLX_CC_INIT(plx_gs(1, sbuf, scount, PLX_VEC_NONE, PLX_VEC_NONE, stype, rbuf, 0, plx_vec_count(rcounts),
                plx_vec_aint(displs), rtype, root, comm, req, fn));
}

int PMPI_Iallgather_c(const void *sbuf, MPI_Count scount, MPI_Datatype stype, void *rbuf, MPI_Count rcount,
                      MPI_Datatype rtype, MPI_Comm comm, MPI_Request *req)
{
    return plx_allgather(sbuf, scount, stype, rbuf, rcount, 0, PLX_VEC_NONE, PLX_VEC_NONE, rtype, comm,
                         plx_cc_reqp(req),
                         "MPI_Iallgather_c");
}

int PMPI_Iallgatherv_c(const void *sbuf, MPI_Count scount, MPI_Datatype stype, void *rbuf, const MPI_Count rcounts[],
                       const MPI_Aint displs[], MPI_Datatype rtype, MPI_Comm comm, MPI_Request *req)
{
    return plx_allgather(sbuf, scount, stype, rbuf, 0, 1, plx_vec_count(rcounts), plx_vec_aint(displs), rtype, comm,
                         plx_cc_reqp(req),
                         "MPI_Iallgatherv_c");
}

int PMPI_Iallreduce_c(const void *sbuf, void *rbuf, MPI_Count count, MPI_Datatype dtype, MPI_Op op, MPI_Comm comm,
                      MPI_Request *req)
{
    return plx_red(PLX_RED_ALLREDUCE, sbuf, rbuf, count, PLX_VEC_NONE, dtype, op, 0, comm, plx_cc_reqp(req),
                   "MPI_Iallreduce_c");
}

int PMPI_Ialltoall_c(const void *sbuf, MPI_Count scount, MPI_Datatype stype, void *rbuf, MPI_Count rcount,
                     MPI_Datatype rtype, MPI_Comm comm, MPI_Request *req)
{
    return plx_alltoall(sbuf, scount, stype, rbuf, rcount, rtype, comm, plx_cc_reqp(req), "MPI_Ialltoall_c");
}

int PMPI_Ialltoallv_c(const void *sbuf, const MPI_Count scounts[], const MPI_Aint sdispls[], MPI_Datatype stype,
                      void *rbuf, const MPI_Count rcounts[], const MPI_Aint rdispls[], MPI_Datatype rtype,
                      MPI_Comm comm, MPI_Request *req)
{
    return plx_alltoallw(sbuf, plx_vec_count(scounts), plx_vec_aint(sdispls), NULL, stype, rbuf,
                         plx_vec_count(rcounts),
                         plx_vec_aint(rdispls), NULL, rtype, 0, comm,
                         plx_cc_reqp(req), "MPI_Ialltoallv_c");
}

int PMPI_Ialltoallw_c(const void *sbuf, const MPI_Count scounts[], const MPI_Aint sdispls[],
                      const MPI_Datatype stypes[], void *rbuf, const MPI_Count rcounts[], const MPI_Aint rdispls[],
                      const MPI_Datatype rtypes[], MPI_Comm comm, MPI_Request *req)
{
    return plx_alltoallw(sbuf, plx_vec_count(scounts), plx_vec_aint(sdispls), stypes, 0, rbuf, plx_vec_count(rcounts),
                         plx_vec_aint(rdispls), rtypes, 0, 1, comm,
                         plx_cc_reqp(req), "MPI_Ialltoallw_c");
}

int PMPI_Ibcast_c(void *buf, MPI_Count count, MPI_Datatype dtype, int root, MPI_Comm comm, MPI_Request *req)
{
    return plx_bcast(buf, count, dtype, root, comm, plx_cc_reqp(req), "MPI_Ibcast_c");
}

int PMPI_Iexscan_c(const void *sbuf, void *rbuf, MPI_Count count, MPI_Datatype dtype, MPI_Op op, MPI_Comm comm,
                   MPI_Request *req)
{
    return plx_red(PLX_RED_EXSCAN, sbuf, rbuf, count, PLX_VEC_NONE, dtype, op, 0, comm, plx_cc_reqp(req),
                   "MPI_Iexscan_c");
}

int PMPI_Igather_c(const void *sbuf, MPI_Count scount, MPI_Datatype stype, void *rbuf, MPI_Count rcount,
                   MPI_Datatype rtype, int root, MPI_Comm comm, MPI_Request *req)
{
    return plx_gs(0, sbuf, scount, PLX_VEC_NONE, PLX_VEC_NONE, stype, rbuf, rcount, PLX_VEC_NONE, PLX_VEC_NONE, rtype,
                  root, comm, plx_cc_reqp(req),
                  "MPI_Igather_c");
}

int PMPI_Igatherv_c(const void *sbuf, MPI_Count scount, MPI_Datatype stype, void *rbuf, const MPI_Count rcounts[],
                    const MPI_Aint displs[], MPI_Datatype rtype, int root, MPI_Comm comm, MPI_Request *req)
{
    return plx_gs(1, sbuf, scount, PLX_VEC_NONE, PLX_VEC_NONE, stype, rbuf, 0, plx_vec_count(rcounts),
                  plx_vec_aint(displs), rtype, root, comm, plx_cc_reqp(req),
                  "MPI_Igatherv_c");
}

int PMPI_Ireduce_c(const void *sbuf, void *rbuf, MPI_Count count, MPI_Datatype dtype, MPI_Op op, int root,
                   MPI_Comm comm, MPI_Request *req)
{
    return plx_red(PLX_RED_REDUCE, sbuf, rbuf, count, PLX_VEC_NONE, dtype, op, root, comm, plx_cc_reqp(req),
                   "MPI_Ireduce_c");
}

int PMPI_Ireduce_scatter_block_c(const void *sbuf, void *rbuf, MPI_Count rcount, MPI_Datatype dtype, MPI_Op op,
                                 MPI_Comm comm, MPI_Request *req)
{
    return plx_red(PLX_RED_SCATTER_BLOCK, sbuf, rbuf, rcount, PLX_VEC_NONE, dtype, op, 0, comm, plx_cc_reqp(req),
                   "MPI_Ireduce_scatter_block_c");
}

int PMPI_Ireduce_scatter_c(const void *sbuf, void *rbuf, const MPI_Count rcounts[], MPI_Datatype dtype, MPI_Op op,
                           MPI_Comm comm, MPI_Request *req)
{
    return plx_red(PLX_RED_SCATTER, sbuf, rbuf, 0, plx_vec_count(rcounts), dtype, op, 0, comm, plx_cc_reqp(req),
                   "MPI_Ireduce_scatter_c");
}

int PMPI_Iscan_c(const void *sbuf, void *rbuf, MPI_Count count, MPI_Datatype dtype, MPI_Op op, MPI_Comm comm,
                 MPI_Request *req)
{
    return plx_red(PLX_RED_SCAN, sbuf, rbuf, count, PLX_VEC_NONE, dtype, op, 0, comm, plx_cc_reqp(req),
                   "MPI_Iscan_c");
}

int PMPI_Iscatter_c(const void *sbuf, MPI_Count scount, MPI_Datatype stype, void *rbuf, MPI_Count rcount,
                    MPI_Datatype rtype, int root, MPI_Comm comm, MPI_Request *req)
{
    return plx_gs(2, sbuf, scount, PLX_VEC_NONE, PLX_VEC_NONE, stype, rbuf, rcount, PLX_VEC_NONE, PLX_VEC_NONE, rtype,
                  root, comm,
                  plx_cc_reqp(req), "MPI_Iscatter_c");
}

int PMPI_Iscatterv_c(const void *sbuf, const MPI_Count scounts[], const MPI_Aint displs[], MPI_Datatype stype,
                     void *rbuf, MPI_Count rcount, MPI_Datatype rtype, int root, MPI_Comm comm, MPI_Request *req)
{
    return plx_gs(3, sbuf, 0, plx_vec_count(scounts), plx_vec_aint(displs), stype, rbuf, rcount, PLX_VEC_NONE,
                  PLX_VEC_NONE, rtype, root, comm,
                  plx_cc_reqp(req), "MPI_Iscatterv_c");
}

int PMPI_Reduce_c(const void *sbuf, void *rbuf, MPI_Count count, MPI_Datatype dtype, MPI_Op op, int root,
                  MPI_Comm comm)
{
    return plx_red(PLX_RED_REDUCE, sbuf, rbuf, count, PLX_VEC_NONE, dtype, op, root, comm, NULL, "MPI_Reduce_c");
}

int PMPI_Reduce_init_c(const void *sbuf, void *rbuf, MPI_Count count, MPI_Datatype dtype, MPI_Op op, int root,
                       MPI_Comm comm, MPI_Info info, MPI_Request *req)
{
    static const char fn[] = "MPI_Reduce_init_c";
    PLX_CC_INIT(plx_red(PLX_RED_REDUCE, sbuf, rbuf, count, PLX_VEC_NONE, dtype, op, root, comm, req, fn));
}

int PMPI_Reduce_scatter_block_c(const void *sbuf, void *rbuf, MPI_Count rcount, MPI_Datatype dtype, MPI_Op op,
                                MPI_Comm comm)
{
    return plx_red(PLX_RED_SCATTER_BLOCK, sbuf, rbuf, rcount, PLX_VEC_NONE, dtype, op, 0, comm, NULL,
                   "MPI_Reduce_scatter_block_c");
}

int PMPI_Reduce_scatter_block_init_c(const void *sbuf, void *rbuf, MPI_Count rcount, MPI_Datatype dtype, MPI_Op op,
                                     MPI_Comm comm, MPI_Info info, MPI_Request *req)
{
    static const char fn[] = "MPI_Reduce_scatter_block_init_c";
    PLX_CC_INIT(plx_red(PLX_RED_SCATTER_BLOCK, sbuf, rbuf, rcount, PLX_VEC_NONE, dtype, op, 0, comm, req, fn));
}

int PMPI_Reduce_scatter_c(const void *sbuf, void *rbuf, const MPI_Count rcounts[], MPI_Datatype dtype, MPI_Op op,
                          MPI_Comm comm)
{
    return plx_red(PLX_RED_SCATTER, sbuf, rbuf, 0, plx_vec_count(rcounts), dtype, op, 0, comm, NULL,
                   "MPI_Reduce_scatter_c");
}

int PMPI_Reduce_scatter_init_c(const void *sbuf, void *rbuf, const MPI_Count rcounts[], MPI_Datatype dtype, MPI_Op op,
                               MPI_Comm comm, MPI_Info info, MPI_Request *req)
{
    static const char fn[] = "MPI_Reduce_scatter_init_c";
    PLX_CC_INIT(plx_red(PLX_RED_SCATTER, sbuf, rbuf, 0, plx_vec_count(rcounts), dtype, op, 0, comm, req, fn));
}

int PMPI_Scan_c(const void *sbuf, void *rbuf, MPI_Count count, MPI_Datatype dtype, MPI_Op op, MPI_Comm comm)
{
    return plx_red(PLX_RED_SCAN, sbuf, rbuf, count, PLX_VEC_NONE, dtype, op, 0, comm, NULL, "MPI_Scan_c");
}

int PMPI_Scan_init_c(const void *sbuf, void *rbuf, MPI_Count count, MPI_Datatype dtype, MPI_Op op, MPI_Comm comm,
                     MPI_Info info, MPI_Request *req)
{
    static const char fn[] = "MPI_Scan_init_c";
    PLX_CC_INIT(plx_red(PLX_RED_SCAN, sbuf, rbuf, count, PLX_VEC_NONE, dtype, op, 0, comm, req, fn));
}

int PMPI_Scatter_c(const void *sbuf, MPI_Count scount, MPI_Datatype stype, void *rbuf, MPI_Count rcount,
                   MPI_Datatype rtype, int root, MPI_Comm comm)
{
    return plx_gs(2, sbuf, scount, PLX_VEC_NONE, PLX_VEC_NONE, stype, rbuf, rcount, PLX_VEC_NONE, PLX_VEC_NONE, rtype,
                  root, comm, NULL,
                  "MPI_Scatter_c");
}

int PMPI_Scatter_init_c(const void *sbuf, MPI_Count scount, MPI_Datatype stype, void *rbuf, MPI_Count rcount,
                        MPI_Datatype rtype, int root, MPI_Comm comm, MPI_Info info, MPI_Request *req)
{
    static const char fn[] = "MPI_Scatter_init_c";
    PLX_CC_INIT(plx_gs(2, sbuf, scount, PLX_VEC_NONE, PLX_VEC_NONE, stype, rbuf, rcount, PLX_VEC_NONE, PLX_VEC_NONE,
                rtype, root, comm, req, fn));
}

int PMPI_Scatterv_c(const void *sbuf, const MPI_Count scounts[], const MPI_Aint displs[], MPI_Datatype stype,
                    void *rbuf, MPI_Count rcount, MPI_Datatype rtype, int root, MPI_Comm comm)
{
    return plx_gs(3, sbuf, 0, plx_vec_count(scounts), plx_vec_aint(displs), stype, rbuf, rcount, PLX_VEC_NONE,
                  PLX_VEC_NONE, rtype, root, comm, NULL,
                  "MPI_Scatterv_c");
}

int PMPI_Scatterv_init_c(const void *sbuf, const MPI_Count scounts[], const MPI_Aint displs[], MPI_Datatype stype,
                         void *rbuf, MPI_Count rcount, MPI_Datatype rtype, int root, MPI_Comm comm, MPI_Info info,
                         MPI_Request *req)
{
    static const char fn[] = "MPI_Scatterv_init_c";
    PLX_CC_INIT(plx_gs(3, sbuf, 0, plx_vec_count(scounts), plx_vec_aint(displs), stype, rbuf, rcount, PLX_VEC_NONE,
                PLX_VEC_NONE, rtype, root, comm, req, fn));
}
