/*
 * Collective algorithms on intercommunicators (inter.c), each a schedule
 * builder on s->comm, an intercommunicator; the API layer has checked the
 * arguments. Rooted ones take MPI_ROOT / MPI_PROC_NULL / a remote rank as
 * root; per-peer arrays are indexed by remote rank, except reduce_scatter's
 * rcounts (local ranks). There is no scan or exscan on intercommunicators.
 */
#ifndef PLX_COLL_INTER_H
#define PLX_COLL_INTER_H

#include "coll/sched.h"

void plx_inter_barrier_sched(struct plx_sched *s);
void plx_inter_bcast_sched(struct plx_sched *s, void *buf, MPI_Aint count, struct plx_datatype *dt, int root);
void plx_inter_gather_sched(struct plx_sched *s, const void *sbuf, MPI_Aint scount, struct plx_datatype *sdt,
                            void *rbuf, MPI_Aint rcount, struct plx_datatype *rdt, int root);
void plx_inter_gatherv_sched(struct plx_sched *s, const void *sbuf, MPI_Aint scount, struct plx_datatype *sdt,
                             void *rbuf, const MPI_Count *rcounts, const MPI_Aint *displs, struct plx_datatype *rdt, int root);
void plx_inter_scatter_sched(struct plx_sched *s, const void *sbuf, MPI_Aint scount, struct plx_datatype *sdt,
                             void *rbuf, MPI_Aint rcount, struct plx_datatype *rdt, int root);
void plx_inter_scatterv_sched(struct plx_sched *s, const void *sbuf, const MPI_Count *scounts, const MPI_Aint *displs,
                              struct plx_datatype *sdt, void *rbuf, MPI_Aint rcount, struct plx_datatype *rdt,
                              int root);
void plx_inter_allgather_sched(struct plx_sched *s, const void *sbuf, MPI_Aint scount, struct plx_datatype *sdt,
                               void *rbuf, MPI_Aint rcount, struct plx_datatype *rdt);
void plx_inter_allgatherv_sched(struct plx_sched *s, const void *sbuf, MPI_Aint scount, struct plx_datatype *sdt,
                                void *rbuf, const MPI_Count *rcounts, const MPI_Aint *displs, struct plx_datatype *rdt);
/* alltoall, alltoallv and alltoallw: a type per peer, byte displacements */
void plx_inter_alltoallw_sched(struct plx_sched *s, const void *sbuf, const MPI_Count *scounts, const MPI_Aint *sdispls,
                               struct plx_datatype *const *sdts, void *rbuf, const MPI_Count *rcounts,
                               const MPI_Aint *rdispls, struct plx_datatype *const *rdts);
void plx_inter_reduce_sched(struct plx_sched *s, const void *sbuf, void *rbuf, MPI_Aint count,
                            struct plx_datatype *dt, int root);
void plx_inter_allreduce_sched(struct plx_sched *s, const void *sbuf, void *rbuf, MPI_Aint count,
                               struct plx_datatype *dt);
void plx_inter_reduce_scatter_sched(struct plx_sched *s, const void *sbuf, void *rbuf, const MPI_Count *rcounts,
                                    struct plx_datatype *dt);

#endif
