/*
 * Collectives through a shared segment, for communicators whose ranks all
 * run on this node: blocking Barrier, Bcast, Reduce, Allreduce, Allgather
 * and Alltoall are loads and stores in one mapped segment instead of messages
 * (no matching, no per-message headers, no rendezvous), large ones in
 * chunks. Reduce/Allreduce above PLEXUS_COLL_SHM_MAX bytes need a
 * contiguous datatype.
 *
 * Each entry returns 1 when it did the operation, 0 when the caller must use
 * the message-based schedule (communicator spans nodes, no data, a large
 * non-contiguous reduction, PLEXUS_COLL_SHM=0, or the segment could not be
 * made). The decision depends only on arguments every rank passes
 * identically (the byte count; for reductions, whose datatype is the same
 * everywhere, also its contiguity), so all ranks take the same path. The segment is made, collectively, on the third
 * eligible call on a communicator (a communicator used once never pays for
 * it) and unmapped when the communicator is freed.
 *
 * Thread rules: under the API lock; blocking calls only.
 */
#ifndef PLX_COLL_SHMCOLL_H
#define PLX_COLL_SHMCOLL_H

#include <mpi.h>
#include "core/datatype.h"
#include "core/objects.h"
#include "core/op.h"

int plx_shmcoll_barrier(struct plx_comm *c);
int plx_shmcoll_bcast(struct plx_comm *c, void *buf, MPI_Aint count, struct plx_datatype *dt, int root);
/* root < 0: allreduce. sbuf may be MPI_IN_PLACE. */
int plx_shmcoll_reduce(struct plx_comm *c, const void *sbuf, void *rbuf, MPI_Aint count, struct plx_datatype *dt,
                       struct plx_op *op, int root);
/* sbuf may be MPI_IN_PLACE (then sdt is NULL). */
int plx_shmcoll_allgather(struct plx_comm *c, const void *sbuf, MPI_Aint scount, struct plx_datatype *sdt,
                          void *rbuf, MPI_Aint rcount, struct plx_datatype *rdt);
int plx_shmcoll_alltoall(struct plx_comm *c, const void *sbuf, MPI_Aint scount, struct plx_datatype *sdt,
                         void *rbuf, MPI_Aint rcount, struct plx_datatype *rdt);

#endif
