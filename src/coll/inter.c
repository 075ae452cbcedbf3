/*
 * Collectives on intercommunicators, as schedules (sched.h) on the
 * intercommunicator: the local parts are the intracommunicator algorithms
 * run on its local_comm (plx_sched_use), the rest is traffic between the
 * two sides, mostly between the leaders (rank 0 of each side), as MPICH
 * does:
 *
 *   barrier         local barrier; leaders swap a message; local bcast
 *   bcast           root -> remote leader; bcast there
 *   gather/scatter  local gather to the leader, leader -> root (scatter: reversed)
 *   gatherv/scatterv  linear between the root and every remote member
 *   allgather       local gather; leaders swap; local bcast of what came
 *   allgatherv, alltoall(v/w)  linear: every member with every remote member
 *   reduce          local reduce to the leader, leader -> root
 *   allreduce       local reduce; leaders swap; local bcast
 *   reduce_scatter  local reduce of the whole vector; leaders swap; local scatterv
 *
 * Rooted calls: root is MPI_ROOT at the root, MPI_PROC_NULL at the rest of
 * its side, and the root's rank in the other side's group over there.
 * In a result, side A gets what side B contributed (and B A's).
 */
#include <stdlib.h>
#include "coll/algo.h"
#include "coll/inter.h"

static void plx_inter_local_bcast(struct plx_sched *s, void *buf, MPI_Aint count, struct plx_datatype *dt)
{
    struct plx_comm *inter = plx_sched_use(s, s->comm->local_comm);
    plx_coll_bcast_sched(s, buf, count, dt, 0);
    plx_sched_use(s, inter);
}

void plx_inter_barrier_sched(struct plx_sched *s)
{
    struct plx_comm *c = s->comm;
    plx_sched_use(s, c->local_comm);
    plx_coll_barrier_sched(s);
    plx_sched_fence(s);
    plx_sched_use(s, c);
    if (c->rank == 0) {
        plx_sched_send(s, NULL, 0, plx_coll_byte(), 0);
        plx_sched_recv(s, NULL, 0, plx_coll_byte(), 0);
        plx_sched_fence(s);
    }
    /* nobody leaves before its leader heard that the other side entered */
    char *token = plx_sched_alloc(s, 1);
    plx_inter_local_bcast(s, token, 1, plx_coll_byte());
}

void plx_inter_bcast_sched(struct plx_sched *s, void *buf, MPI_Aint count, struct plx_datatype *dt, int root)
{
    struct plx_comm *c = s->comm;
    if (root == MPI_PROC_NULL)
        return;
    if (root == MPI_ROOT) {
        plx_sched_send(s, buf, count, dt, 0);
        return;
    }
    if (c->rank == 0) {
        plx_sched_recv(s, buf, count, dt, root);
        plx_sched_fence(s);
    }
    plx_inter_local_bcast(s, buf, count, dt);
}

void plx_inter_gather_sched(struct plx_sched *s, const void *sbuf, MPI_Aint scount, struct plx_datatype *sdt,
                            void *rbuf, MPI_Aint rcount, struct plx_datatype *rdt, int root)
{
    struct plx_comm *c = s->comm;
    if (root == MPI_PROC_NULL)
        return;
    if (root == MPI_ROOT) {
        plx_sched_recv(s, rbuf, rcount * c->size, rdt, 0);
        return;
    }
    struct plx_comm *lc = c->local_comm;
    MPI_Aint n = scount * lc->size;
    void *tmp = lc->rank == 0 ? plx_sched_alloc_layout(s, n, sdt) : NULL;
    plx_sched_use(s, lc);
    plx_coll_gather_sched(s, sbuf, scount, sdt, tmp, scount, sdt, 0);
    plx_sched_fence(s);
    plx_sched_use(s, c);
    if (lc->rank == 0)
        plx_sched_send(s, tmp, n, sdt, root);
}

void plx_inter_scatter_sched(struct plx_sched *s, const void *sbuf, MPI_Aint scount, struct plx_datatype *sdt,
                             void *rbuf, MPI_Aint rcount, struct plx_datatype *rdt, int root)
{
    struct plx_comm *c = s->comm;
    if (root == MPI_PROC_NULL)
        return;
    if (root == MPI_ROOT) {
        plx_sched_send(s, sbuf, scount * c->size, sdt, 0);
        return;
    }
    struct plx_comm *lc = c->local_comm;
    MPI_Aint n = rcount * lc->size;
    void *tmp = NULL;
    if (lc->rank == 0) {
        tmp = plx_sched_alloc_layout(s, n, rdt);
        plx_sched_recv(s, tmp, n, rdt, root);
        plx_sched_fence(s);
    }
    plx_sched_use(s, lc);
    plx_coll_scatter_sched(s, tmp, rcount, rdt, rbuf, rcount, rdt, 0);
    plx_sched_use(s, c);
}

void plx_inter_gatherv_sched(struct plx_sched *s, const void *sbuf, MPI_Aint scount, struct plx_datatype *sdt,
                             void *rbuf, const MPI_Count *rcounts, const MPI_Aint *displs, struct plx_datatype *rdt, int root)
{
    struct plx_comm *c = s->comm;
    if (root == MPI_PROC_NULL)
        return;
    /* a count of 0 is no message on either side (the root skips it too): a
     * receive posted for it would wait for ever (mpi4py's test_cco_vec_inter) */
    if (root != MPI_ROOT) {
        if (scount > 0)
            plx_sched_send(s, sbuf, scount, sdt, root);
        return;
    }
    for (int i = 0; i < c->size; i++)
        if (rcounts[i] > 0)
            plx_sched_recv(s, plx_coll_blk(rbuf, displs[i], 1, rdt), rcounts[i], rdt, i);
}

void plx_inter_scatterv_sched(struct plx_sched *s, const void *sbuf, const MPI_Count *scounts, const MPI_Aint *displs,
                              struct plx_datatype *sdt, void *rbuf, MPI_Aint rcount, struct plx_datatype *rdt,
                              int root)
{
    struct plx_comm *c = s->comm;
    if (root == MPI_PROC_NULL)
        return;
    if (root != MPI_ROOT) {
        if (rcount > 0)         /* as in gatherv: 0 is no message */
            plx_sched_recv(s, rbuf, rcount, rdt, root);
        return;
    }
    for (int i = 0; i < c->size; i++)
        if (scounts[i] > 0)
            plx_sched_send(s, plx_coll_blk(sbuf, displs[i], 1, sdt), scounts[i], sdt, i);
}

void plx_inter_allgather_sched(struct plx_sched *s, const void *sbuf, MPI_Aint scount, struct plx_datatype *sdt,
                               void *rbuf, MPI_Aint rcount, struct plx_datatype *rdt)
{
    struct plx_comm *c = s->comm, *lc = c->local_comm;
    MPI_Aint n = scount * lc->size;
    void *tmp = lc->rank == 0 ? plx_sched_alloc_layout(s, n, sdt) : NULL;
    plx_sched_use(s, lc);
    plx_coll_gather_sched(s, sbuf, scount, sdt, tmp, scount, sdt, 0);
    plx_sched_fence(s);
    plx_sched_use(s, c);
    if (lc->rank == 0) {
        plx_sched_send(s, tmp, n, sdt, 0);
        plx_sched_recv(s, rbuf, rcount * c->size, rdt, 0);
        plx_sched_fence(s);
    }
    plx_inter_local_bcast(s, rbuf, rcount * c->size, rdt);
}

void plx_inter_allgatherv_sched(struct plx_sched *s, const void *sbuf, MPI_Aint scount, struct plx_datatype *sdt,
                                void *rbuf, const MPI_Count *rcounts, const MPI_Aint *displs, struct plx_datatype *rdt)
{
    struct plx_comm *c = s->comm;
    for (int i = 0; i < c->size; i++) {
        if (rcounts[i] > 0)
            plx_sched_recv(s, plx_coll_blk(rbuf, displs[i], 1, rdt), rcounts[i], rdt, i);
        if (scount > 0)
            plx_sched_send(s, sbuf, scount, sdt, i);
    }
}

void plx_inter_alltoallw_sched(struct plx_sched *s, const void *sbuf, const MPI_Count *scounts, const MPI_Aint *sdispls,
                               struct plx_datatype *const *sdts, void *rbuf, const MPI_Count *rcounts,
                               const MPI_Aint *rdispls, struct plx_datatype *const *rdts)
{
    struct plx_comm *c = s->comm;
    /* start with the next remote rank, so that not everyone sends to 0 first */
    for (int k = 0; k < c->size; k++) {
        int i = (c->rank + k) % c->size;
        if (rcounts[i] > 0)
            plx_sched_recv(s, (char *)rbuf + rdispls[i], rcounts[i], rdts[i], i);
        if (scounts[i] > 0)
            plx_sched_send(s, (const char *)sbuf + sdispls[i], scounts[i], sdts[i], i);
    }
}

void plx_inter_reduce_sched(struct plx_sched *s, const void *sbuf, void *rbuf, MPI_Aint count,
                            struct plx_datatype *dt, int root)
{
    struct plx_comm *c = s->comm, *lc = c->local_comm;
    if (root == MPI_PROC_NULL)
        return;
    if (root == MPI_ROOT) {
        plx_sched_recv(s, rbuf, count, dt, 0);
        return;
    }
    void *tmp = lc->rank == 0 ? plx_sched_alloc_layout(s, count, dt) : NULL;
    plx_sched_use(s, lc);
    plx_coll_reduce_sched(s, sbuf, tmp, count, dt, 0);
    plx_sched_fence(s);
    plx_sched_use(s, c);
    if (lc->rank == 0)
        plx_sched_send(s, tmp, count, dt, root);
}

/* Reduces `total` elements of sbuf over the local side to a buffer of the
 * leader, and swaps it with the other leader: returns (at the leader) the
 * other side's reduction, NULL elsewhere. */
static void *plx_inter_reduce_swap(struct plx_sched *s, const void *sbuf, MPI_Aint total, struct plx_datatype *dt,
                                   void *into)
{
    struct plx_comm *c = s->comm, *lc = c->local_comm;
    void *mine = lc->rank == 0 ? plx_sched_alloc_layout(s, total, dt) : NULL;
    plx_sched_use(s, lc);
    plx_coll_reduce_sched(s, sbuf, mine, total, dt, 0);
    plx_sched_fence(s);
    plx_sched_use(s, c);
    if (lc->rank != 0)
        return NULL;
    void *theirs = into ? into : plx_sched_alloc_layout(s, total, dt);
    plx_sched_send(s, mine, total, dt, 0);
    plx_sched_recv(s, theirs, total, dt, 0);
    plx_sched_fence(s);
    return theirs;
}

void plx_inter_allreduce_sched(struct plx_sched *s, const void *sbuf, void *rbuf, MPI_Aint count,
                               struct plx_datatype *dt)
{
    plx_inter_reduce_swap(s, sbuf, count, dt, rbuf);
    plx_inter_local_bcast(s, rbuf, count, dt);
}

void plx_inter_reduce_scatter_sched(struct plx_sched *s, const void *sbuf, void *rbuf, const MPI_Count *rcounts,
                                    struct plx_datatype *dt)
{
    struct plx_comm *c = s->comm, *lc = c->local_comm;
    MPI_Aint *displs = plx_malloc((size_t)lc->size * sizeof *displs);
    MPI_Aint total = 0;
    for (int i = 0; i < lc->size; i++) {
        displs[i] = total;
        total += rcounts[i];
    }
    void *theirs = plx_inter_reduce_swap(s, sbuf, total, dt, NULL);
    plx_sched_use(s, lc);
    plx_coll_scatterv_sched(s, theirs, rcounts, displs, dt, rbuf, rcounts[lc->rank], dt, 0);
    plx_sched_use(s, c);
    free(displs);
}
