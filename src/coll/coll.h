/*
 * Internal collectives used by the library itself (context-id agreement,
 * Comm_split, Comm_create, finalize, setting up shared collective
 * segments). The public collectives are schedules (sched.h, algo.h).
 *
 * They run over comm's collective context (context_id + 1), never matching
 * user point-to-point traffic, with the given tag so that concurrent
 * internal operations (e.g. MPI_Comm_create_group with different tags) do not
 * mix. Tags on a collective context: >= 0 are MPI_Comm_create_group's user
 * tags (any value up to MPI_TAG_UB), -2..-15 the library's own internal
 * collectives (below), -16 and less the schedules' (sched.c). So no user
 * tag can match the library's traffic. Members are comm->lpids[0..size-1]; a caller may build a temporary
 * struct plx_comm on the stack describing a subset (Comm_create_group).
 * Blocking; they drive progress while they wait.
 */
#ifndef PLX_COLL_H
#define PLX_COLL_H

#include <stddef.h>
#include <stdint.h>
#include "core/objects.h"

#define PLX_COLL_TAG_DEFAULT (-2)     /* context-id agreement, finalize */
#define PLX_COLL_TAG_SHM (-3)         /* setting up a shared collective segment */
#define PLX_COLL_TAG_TOPO (-4)        /* building a distributed graph topology */
/* MPI_Comm_connect/accept/join on MPI_COMM_WORLD's collective context (below
 * -7: -4 and its sub-tags are the topology's)
 * (api/dynamic.c): a connect request, its answer, the roots' exchange */
#define PLX_COLL_TAG_CONNECT (-8)
#define PLX_COLL_TAG_ACCEPT (-9)
#define PLX_COLL_TAG_MEET (-10)
/* MPI_Intercomm_create: a leader given a bad argument tells the other side
 * (api/intercomm.c), on the peer communicator's or MPI_COMM_WORLD's
 * collective context */
#define PLX_COLL_TAG_IC_FAIL (-11)

enum plx_coll_u64_op { PLX_COLL_BAND, PLX_COLL_BOR, PLX_COLL_MAX, PLX_COLL_MIN, PLX_COLL_SUM };

plx_status_t plx_coll_barrier(struct plx_comm *c, int tag);
plx_status_t plx_coll_bcast(void *buf, size_t nbytes, int root, struct plx_comm *c, int tag);
/* Every rank contributes nbytes; rbuf receives size*nbytes in rank order. */
plx_status_t plx_coll_allgather(const void *sbuf, size_t nbytes, void *rbuf, struct plx_comm *c, int tag);
plx_status_t plx_coll_gather(const void *sbuf, size_t nbytes, void *rbuf, int root, struct plx_comm *c, int tag);
/* More ranks of this job on this node than CPUs online: waiting ranks must
 * give their CPU away, and algorithms that need fewer hand-offs win. The
 * same answer on every rank of a node (node-local collectives rely on it).
 * PLEXUS_COLL_OVERSUB=on|off overrides. */
int plx_coll_node_oversubscribed(void);
/* Rank r's block of sbuf (sbytes[r] bytes at soff[r]) goes to rank r, into
 * rbuf at roff[r] there (rbytes[r] bytes from r expected). Every transfer is
 * started before any is waited for. */
plx_status_t plx_coll_alltoallv(const void *sbuf, const size_t *sbytes, const size_t *soff, void *rbuf,
                                const size_t *rbytes, const size_t *roff, struct plx_comm *c, int tag);
/* Sends sn bytes to and receives rn bytes from `peer` of c on match context
 * ctx (any of c's: an intercommunicator's leaders, MPI_Intercomm_create's
 * exchange on the peer communicator's point-to-point context). */
plx_status_t plx_coll_sendrecv(const void *sbuf, size_t sn, void *rbuf, size_t rn, int peer, struct plx_comm *c,
                               int ctx, int tag);
/* One transfer started on match context ctx of c (kind PLX_REQ_SEND or
 * PLX_REQ_RECV, MPI_BYTE), for callers that wait for several at once;
 * plx_coll_wait waits for it and frees it. */
struct plx_request *plx_coll_istart(int kind, void *buf, size_t n, int peer, int tag, struct plx_comm *c, int ctx);
plx_status_t plx_coll_wait(struct plx_request *r);
/* In-place elementwise reduction of n 64-bit unsigned words. */
plx_status_t plx_coll_allreduce_u64(uint64_t *buf, int n, enum plx_coll_u64_op op, struct plx_comm *c, int tag);

#endif
