/*
 * Collective algorithms, each written as a schedule builder (sched.h).
 * A builder appends the rounds of one collective on s->comm to s; the API
 * layer (src/api/coll.c) has checked the arguments and resolved handles.
 * MPI_IN_PLACE arrives as sbuf == MPI_IN_PLACE. Reductions use s->op.
 *
 * Choice by message size and communicator size, as MPICH and Open MPI do:
 *   barrier         dissemination
 *   bcast           binomial tree (small, or p <= 2); binomial scatter + ring allgather (large)
 *   gather/scatter  binomial tree with packed subtree buffers (small); linear (large); v: linear
 *   allgather       recursive doubling (p a power of two, small/medium); Bruck (other p, small); ring (large)
 *   allgatherv      ring
 *   alltoall        Bruck (tiny blocks, p >= 8); all at once (medium, or any size when ranks
 *                   outnumber CPUs: plx_coll_node_oversubscribed); pairwise exchange (large)
 *   alltoallv/w     all at once, in batches
 *   reduce          binomial tree (small, or non-commutative: rank order kept); Rabenseifner:
 *                   recursive-halving reduce-scatter + gather to the root (large, commutative)
 *   allreduce       recursive doubling (small or non-commutative); Rabenseifner: recursive-halving
 *                   reduce-scatter + recursive-doubling allgather (large, commutative);
 *                   non-powers of two fold the extra ranks in first
 *   reduce_scatter  recursive halving (commutative, p a power of two, small/medium); pairwise
 *                   (commutative, otherwise); reduce + scatterv (non-commutative)
 *   scan/exscan     recursive doubling
 *
 * These message schedules serve nonblocking collectives, communicators that
 * span nodes, and what the node-local shared segment (shmcoll.c) leaves:
 * blocking Barrier, Reduce/Allreduce (any size; large ones need a contiguous
 * type), Allgather and Bcast (except at 2 ranks above the shm eager limit) and
 * Alltoall (blocks up to the shm eager limit) on one node go through the
 * segment instead.
 */
#ifndef PLX_COLL_ALGO_H
#define PLX_COLL_ALGO_H

#include "coll/sched.h"

/* Placement of block i of count elements of dt in buf. */
static inline char *plx_coll_blk(const void *buf, MPI_Aint i, MPI_Aint count, const struct plx_datatype *dt)
{
    return (char *)buf + i * count * dt->extent;
}

struct plx_datatype *plx_coll_byte(void);

void plx_coll_barrier_sched(struct plx_sched *s);
void plx_coll_bcast_sched(struct plx_sched *s, void *buf, MPI_Aint count, struct plx_datatype *dt, int root);
void plx_coll_gather_sched(struct plx_sched *s, const void *sbuf, MPI_Aint scount, struct plx_datatype *sdt,
                           void *rbuf, MPI_Aint rcount, struct plx_datatype *rdt, int root);
void plx_coll_gatherv_sched(struct plx_sched *s, const void *sbuf, MPI_Aint scount, struct plx_datatype *sdt,
                            void *rbuf, const MPI_Count *rcounts, const MPI_Aint *displs, struct plx_datatype *rdt, int root);
void plx_coll_scatter_sched(struct plx_sched *s, const void *sbuf, MPI_Aint scount, struct plx_datatype *sdt,
                            void *rbuf, MPI_Aint rcount, struct plx_datatype *rdt, int root);
void plx_coll_scatterv_sched(struct plx_sched *s, const void *sbuf, const MPI_Count *scounts, const MPI_Aint *displs,
                             struct plx_datatype *sdt, void *rbuf, MPI_Aint rcount, struct plx_datatype *rdt,
                             int root);
void plx_coll_allgather_sched(struct plx_sched *s, const void *sbuf, MPI_Aint scount, struct plx_datatype *sdt,
                              void *rbuf, MPI_Aint rcount, struct plx_datatype *rdt);
void plx_coll_allgatherv_sched(struct plx_sched *s, const void *sbuf, MPI_Aint scount, struct plx_datatype *sdt,
                               void *rbuf, const MPI_Count *rcounts, const MPI_Aint *displs, struct plx_datatype *rdt);
void plx_coll_alltoall_sched(struct plx_sched *s, const void *sbuf, MPI_Aint scount, struct plx_datatype *sdt,
                             void *rbuf, MPI_Aint rcount, struct plx_datatype *rdt);
/* alltoallv and alltoallw in one: a type per peer, displacements in bytes
 * (the API turns alltoallv's extents into bytes). */
void plx_coll_alltoallw_sched(struct plx_sched *s, const void *sbuf, const MPI_Count *scounts, const MPI_Aint *sdispls,
                              struct plx_datatype *const *sdts, void *rbuf, const MPI_Count *rcounts,
                              const MPI_Aint *rdispls, struct plx_datatype *const *rdts);
void plx_coll_reduce_sched(struct plx_sched *s, const void *sbuf, void *rbuf, MPI_Aint count,
                           struct plx_datatype *dt, int root);
void plx_coll_allreduce_sched(struct plx_sched *s, const void *sbuf, void *rbuf, MPI_Aint count,
                              struct plx_datatype *dt);
void plx_coll_reduce_scatter_sched(struct plx_sched *s, const void *sbuf, void *rbuf, const MPI_Count *rcounts,
                                   struct plx_datatype *dt);
void plx_coll_scan_sched(struct plx_sched *s, const void *sbuf, void *rbuf, MPI_Aint count,
                         struct plx_datatype *dt, int exclusive);

/* Neighbourhood collectives over a topology's neighbour lists: in[i] sends
 * to me into block i, I send block j to out[j]. MPI_PROC_NULL neighbours
 * are skipped. Displacements as for alltoallw. cart: the lists are a
 * Cartesian topology's (-, +) pairs per dimension. */
void plx_coll_neighbor_sched(struct plx_sched *s, int cart, int nin, const int *in, int nout, const int *out,
                             const void *sbuf, const MPI_Count *scounts, const MPI_Aint *sdispls,
                             struct plx_datatype *const *sdts, void *rbuf, const MPI_Count *rcounts,
                             const MPI_Aint *rdispls, struct plx_datatype *const *rdts);

#endif
