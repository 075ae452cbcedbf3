/*
 * Collective entry points. For now a first set (Barrier, Bcast, Reduce,
 * Allreduce, Gather, Allgather) over the internal collectives with
 * predefined operations; the collectives issue brings the full set with
 * tuned algorithms.
 */
#include <mpi.h>
#include <stdlib.h>
#include <string.h>
#include "api/api.h"
#include "coll/coll.h"
#include "core/datatype.h"
#include "core/op.h"

#pragma weak MPI_Barrier = PMPI_Barrier
#pragma weak MPI_Bcast = PMPI_Bcast
#pragma weak MPI_Reduce = PMPI_Reduce
#pragma weak MPI_Allreduce = PMPI_Allreduce
#pragma weak MPI_Gather = PMPI_Gather
#pragma weak MPI_Allgather = PMPI_Allgather

#define PLX_TAG_BARRIER 1
#define PLX_TAG_BCAST 2
#define PLX_TAG_REDUCE 3
#define PLX_TAG_GATHER 4

static int plx_api_coll_fail(struct plx_comm *c, const char *fn, plx_status_t st)
{
    return plx_api_err(c, fn, plx_status_to_class(st), "collective failed (a peer may have died)");
}

static int plx_api_coll_buf(struct plx_comm *c, const void *buf, int count, MPI_Datatype dtype,
                            struct plx_datatype **dt_p, const char *fn, const char *arg)
{
    if (count < 0)
        return plx_api_err(c, fn, MPI_ERR_COUNT, "argument 'count' is negative (%d)", count);
    struct plx_datatype *dt = plx_dt_lookup(dtype);
    if (!dt)
        return plx_api_err(c, fn, MPI_ERR_TYPE, "argument 'datatype' is not a valid datatype (handle 0x%x)",
                           (unsigned)dtype);
    if (!buf && count > 0 && dt->size > 0)
        return plx_api_err(c, fn, MPI_ERR_BUFFER, "argument '%s' is NULL with count %d", arg, count);
    *dt_p = dt;
    return MPI_SUCCESS;
}

static int plx_api_root(struct plx_comm *c, int root, const char *fn)
{
    if (root < 0 || root >= c->size)
        return plx_api_err(c, fn, MPI_ERR_ROOT, "argument 'root' is %d but the communicator has %d ranks", root,
                           c->size);
    return MPI_SUCCESS;
}

int PMPI_Barrier(MPI_Comm comm)
{
    struct plx_comm *c = NULL;
    plx_api_lock();
    int rc = plx_api_comm(comm, &c, "MPI_Barrier");
    if (rc == MPI_SUCCESS) {
        plx_status_t st = plx_coll_barrier(c, PLX_TAG_BARRIER);
        if (st != PLX_OK)
            rc = plx_api_coll_fail(c, "MPI_Barrier", st);
    }
    plx_api_unlock();
    return rc;
}

/* Contiguous staging of count elements of dt: the buffer itself when
 * contiguous, else a packed copy. */
static void *plx_stage(void *buf, int count, struct plx_datatype *dt, int pack)
{
    if (dt->contig)
        return (char *)buf + dt->true_lb;
    void *t = plx_malloc((size_t)count * (size_t)dt->size);
    if (pack)
        plx_dt_pack(buf, count, dt, t);
    return t;
}

static void plx_unstage(void *t, void *buf, int count, struct plx_datatype *dt, int unpack)
{
    if (dt->contig)
        return;
    if (unpack)
        plx_dt_unpack(t, (size_t)count * (size_t)dt->size, buf, dt);
    free(t);
}

int PMPI_Bcast(void *buf, int count, MPI_Datatype dtype, int root, MPI_Comm comm)
{
    static const char fn[] = "MPI_Bcast";
    struct plx_comm *c = NULL;
    struct plx_datatype *dt = NULL;
    plx_api_lock();
    int rc = plx_api_comm(comm, &c, fn);
    if (rc == MPI_SUCCESS)
        rc = plx_api_coll_buf(c, buf, count, dtype, &dt, fn, "buffer");
    if (rc == MPI_SUCCESS)
        rc = plx_api_root(c, root, fn);
    if (rc == MPI_SUCCESS) {
        void *t = plx_stage(buf, count, dt, c->rank == root);
        plx_status_t st = plx_coll_bcast(t, (size_t)count * (size_t)dt->size, root, c, PLX_TAG_BCAST);
        plx_unstage(t, buf, count, dt, c->rank != root);
        if (st != PLX_OK)
            rc = plx_api_coll_fail(c, fn, st);
    }
    plx_api_unlock();
    return rc;
}

/* Gather everything to root and reduce there in rank order (correct for
 * non-commutative operations too). */
static int plx_api_reduce(const void *sbuf, void *rbuf, int count, MPI_Datatype dtype, MPI_Op op, int root,
                          struct plx_comm *c, int all, const char *fn)
{
    struct plx_datatype *dt = NULL;
    int rc = plx_api_coll_buf(c, rbuf, (all || c->rank == root) ? count : 0, dtype, &dt, fn, "recvbuf");
    if (rc)
        return rc;
    if (!plx_op_valid(op))
        return plx_api_err(c, fn, MPI_ERR_OP, "argument 'op' is not a valid operation (handle 0x%x)",
                           (unsigned)op);
    size_t bytes = (size_t)count * (size_t)dt->size;
    void *mine = plx_malloc(bytes);
    const void *src = sbuf == MPI_IN_PLACE ? rbuf : sbuf;
    plx_dt_pack(src, count, dt, mine);
    char *all_data = c->rank == root ? plx_malloc(bytes * (size_t)c->size) : NULL;
    plx_status_t st = plx_coll_gather(mine, bytes, all_data, root, c, PLX_TAG_REDUCE);
    if (st == PLX_OK && c->rank == root && count > 0) {
        /* result = d[0] op d[1] op ... op d[n-1]: fold from the right */
        char *acc = all_data + bytes * (size_t)(c->size - 1);
        for (int r = c->size - 2; r >= 0; r--) {
            if (plx_op_apply(op, dtype, all_data + bytes * (size_t)r, acc, count) != 0) {
                rc = plx_api_err(c, fn, MPI_ERR_OP, "operation 0x%x is not defined for datatype %s",
                                 (unsigned)op, dt->name);
                break;
            }
        }
        if (rc == MPI_SUCCESS && c->size == 1 && plx_op_apply(op, dtype, acc, mine, 0) != 0)
            rc = plx_api_err(c, fn, MPI_ERR_OP, "operation 0x%x is not defined for datatype %s", (unsigned)op,
                             dt->name);
        if (rc == MPI_SUCCESS)
            memcpy(mine, acc, bytes);
    }
    if (st == PLX_OK && all) {
        int ok = rc == MPI_SUCCESS;
        st = plx_coll_bcast(&ok, sizeof ok, root, c, PLX_TAG_REDUCE);
        if (st == PLX_OK && ok)
            st = plx_coll_bcast(mine, bytes, root, c, PLX_TAG_REDUCE);
        if (st == PLX_OK && !ok && rc == MPI_SUCCESS)
            rc = plx_api_err(c, fn, MPI_ERR_OP, "operation 0x%x is not defined for datatype %s", (unsigned)op,
                             dt->name);
    }
    if (st == PLX_OK && rc == MPI_SUCCESS && (all || c->rank == root))
        plx_dt_unpack(mine, bytes, rbuf, dt);
    free(mine);
    free(all_data);
    if (st != PLX_OK && rc == MPI_SUCCESS)
        rc = plx_api_coll_fail(c, fn, st);
    return rc;
}

int PMPI_Reduce(const void *sbuf, void *rbuf, int count, MPI_Datatype dtype, MPI_Op op, int root, MPI_Comm comm)
{
    struct plx_comm *c = NULL;
    plx_api_lock();
    int rc = plx_api_comm(comm, &c, "MPI_Reduce");
    if (rc == MPI_SUCCESS)
        rc = plx_api_root(c, root, "MPI_Reduce");
    if (rc == MPI_SUCCESS)
        rc = plx_api_reduce(sbuf, rbuf, count, dtype, op, root, c, 0, "MPI_Reduce");
    plx_api_unlock();
    return rc;
}

int PMPI_Allreduce(const void *sbuf, void *rbuf, int count, MPI_Datatype dtype, MPI_Op op, MPI_Comm comm)
{
    struct plx_comm *c = NULL;
    plx_api_lock();
    int rc = plx_api_comm(comm, &c, "MPI_Allreduce");
    if (rc == MPI_SUCCESS)
        rc = plx_api_reduce(sbuf, rbuf, count, dtype, op, 0, c, 1, "MPI_Allreduce");
    plx_api_unlock();
    return rc;
}

static int plx_api_gather(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
                          MPI_Datatype rtype, int root, struct plx_comm *c, int all, const char *fn)
{
    struct plx_datatype *sdt, *rdt = NULL;
    int in_place = sbuf == MPI_IN_PLACE;
    int rc = MPI_SUCCESS;
    if (all || c->rank == root)
        rc = plx_api_coll_buf(c, rbuf, rcount, rtype, &rdt, fn, "recvbuf");
    if (rc == MPI_SUCCESS && !in_place)
        rc = plx_api_coll_buf(c, sbuf, scount, stype, &sdt, fn, "sendbuf");
    if (rc)
        return rc;
    size_t rbytes = rdt ? (size_t)rcount * (size_t)rdt->size : 0;
    size_t sbytes = in_place ? rbytes : (size_t)scount * (size_t)sdt->size;
    if (rdt && sbytes != rbytes)
        return plx_api_err(c, fn, MPI_ERR_TRUNCATE, "send size %zu bytes differs from receive size %zu bytes",
                           sbytes, rbytes);
    void *mine = plx_malloc(sbytes);
    if (in_place)
        plx_dt_pack((char *)rbuf + (size_t)c->rank * (size_t)rcount * (size_t)rdt->extent, rcount, rdt, mine);
    else
        plx_dt_pack(sbuf, scount, sdt, mine);
    void *all_data = rdt ? plx_malloc(rbytes * (size_t)c->size) : NULL;
    plx_status_t st = all ? plx_coll_allgather(mine, sbytes, all_data, c, PLX_TAG_GATHER)
                          : plx_coll_gather(mine, sbytes, all_data, root, c, PLX_TAG_GATHER);
    if (st == PLX_OK && all_data)
        plx_dt_unpack(all_data, rbytes * (size_t)c->size, rbuf, rdt);
    free(mine);
    free(all_data);
    return st == PLX_OK ? MPI_SUCCESS : plx_api_coll_fail(c, fn, st);
}

int PMPI_Gather(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount, MPI_Datatype rtype,
                int root, MPI_Comm comm)
{
    struct plx_comm *c = NULL;
    plx_api_lock();
    int rc = plx_api_comm(comm, &c, "MPI_Gather");
    if (rc == MPI_SUCCESS)
        rc = plx_api_root(c, root, "MPI_Gather");
    if (rc == MPI_SUCCESS)
        rc = plx_api_gather(sbuf, scount, stype, rbuf, rcount, rtype, root, c, 0, "MPI_Gather");
    plx_api_unlock();
    return rc;
}

int PMPI_Allgather(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount, MPI_Datatype rtype,
                   MPI_Comm comm)
{
    struct plx_comm *c = NULL;
    plx_api_lock();
    int rc = plx_api_comm(comm, &c, "MPI_Allgather");
    if (rc == MPI_SUCCESS)
        rc = plx_api_gather(sbuf, scount, stype, rbuf, rcount, rtype, 0, c, 1, "MPI_Allgather");
    plx_api_unlock();
    return rc;
}
