/*
 * Collective schedules: every public collective algorithm is written once as
 * a schedule, a list of rounds; a round is a set of sends, receives and
 * local steps (copies, reductions) started together. Local steps of a round
 * run first, in order, when the round starts; its sends and receives are
 * then posted; the next round starts when all of them have completed.
 * Builders put a fence between a receive and anything that reads its data.
 *
 * A blocking collective builds a schedule and waits for it; a nonblocking
 * one returns a request and the schedule is advanced by the progress engine
 * (plx_coll_progress, called from plx_progress_poll), so it moves while the
 * application computes and calls MPI_Test.
 *
 * Matching: messages go on the communicator's collective context
 * (context_id + 1) with a tag drawn from a per-communicator sequence
 * (comm->coll_tag for blocking collectives, comm->coll_tag_nb for
 * nonblocking ones: two disjoint tag spaces), so collectives never match user
 * point-to-point traffic, concurrent nonblocking collectives on one
 * communicator never match each other, and a blocking one never matches a
 * nonblocking one started in another order on another rank. Schedule tags are -16 and below (under MPI_ANY_TAG and the
 * library's internal collectives' -2..-15); the non-negative ones belong to
 * MPI_Comm_create_group's user tags (coll.h).
 *
 * Buffers: the schedule owns its temporary buffers and holds a reference on
 * every datatype, the op and the communicator until it completes.
 *
 * Thread rules: under the API lock, like the rest of the library.
 */
#ifndef PLX_COLL_SCHED_H
#define PLX_COLL_SCHED_H

#include <mpi.h>
#include "core/datatype.h"
#include "core/objects.h"
#include "core/op.h"
#include "core/request.h"

struct plx_sched;

enum plx_sched_kind {
    PLX_S_SEND = 1,
    PLX_S_RECV,
    PLX_S_REDUCE,               /* buf = src op buf */
    PLX_S_COPY,                 /* (src, scount, sdt) -> (buf, count, dt) */
    PLX_S_FENCE,
    PLX_S_CALL,                 /* fn(s, arg) when its round starts; it may append rounds */
};

struct plx_sched;

struct plx_sched_ent {
    uint8_t kind;
    uint8_t sub;                /* sub-tag (0..3) of a send/receive */
    uint8_t user;               /* a user send/receive: context context_id + uctx, tag utag */
    uint8_t uctx;
    uint8_t gated;              /* posted only once opened (plx_sched_open): partitioned sends */
    uint8_t open;
    uint8_t held;               /* gated, counted in pending, not posted yet */
    uint8_t done;               /* its communication completed in this run */
    int utag;
    int peer;
    void *buf;
    const void *src;
    MPI_Aint count, scount;
    struct plx_datatype *dt, *sdt;
    struct plx_request *req;
    struct plx_comm *comm;      /* a send/receive goes to peer of this (s->comm when added) */
    void (*fn)(struct plx_sched *s, void *arg);     /* PLX_S_CALL */
};

struct plx_sched {
    struct plx_list link;       /* on the active list while running (nonblocking) */
    struct plx_comm *comm;      /* what builders address; see plx_sched_use */
    struct plx_comm *owner;     /* the collective's communicator (referenced) */
    int tag;
    int tag_fixed;              /* plx_sched_new_tag: run and start keep tag */
    struct plx_op *op;
    struct plx_sched_ent *ents;
    int n, cap;
    int next;                   /* first entry not started */
    int round_start;            /* first entry of the running round */
    int pending;                /* communication of the running round not complete */
    int done;
    int err;                    /* first MPI error code seen */
    void **bufs;                /* temporary buffers, freed at the end */
    int nbufs, capbufs;
    struct plx_datatype **dts;  /* extra references (internal types) */
    int ndts, capdts;
    struct plx_request *req;    /* nonblocking: the user's request */
    const char *fn;             /* the MPI call, for its error text (NULL: internal) */
    int advancing;              /* inside plx_sched_advance: a call step's nested progress must not re-enter */
    uint8_t persistent;         /* kept when it completes; MPI_Start runs it again */
    uint8_t part_send;          /* partitioned: a send (else a receive) */
    int partitions;             /* partitioned communication: the number of partitions (else 0) */
};

/* A schedule on comm (referenced) with the next collective tag. */
struct plx_sched *plx_sched_new(struct plx_comm *c);
/* The same with a given tag: schedules run one after another by the call
 * step of a running schedule, which reuse its tag (they must not draw from
 * the communicator's sequence, which other collectives started meanwhile
 * may have advanced differently on different members). */
struct plx_sched *plx_sched_new_tag(struct plx_comm *c, int tag);
/* A schedule of user point-to-point messages (MPI_Isendrecv): it takes no
 * collective tag, since only some ranks may build one. */
struct plx_sched *plx_sched_new_p2p(struct plx_comm *c);
void plx_sched_set_op(struct plx_sched *s, struct plx_op *op);

void plx_sched_send(struct plx_sched *s, const void *buf, MPI_Aint count, struct plx_datatype *dt, int peer);
void plx_sched_recv(struct plx_sched *s, void *buf, MPI_Aint count, struct plx_datatype *dt, int peer);
/* The same with a sub-tag: messages of one collective between the same two
 * ranks match by sub-tag first, then in order. */
void plx_sched_send_sub(struct plx_sched *s, const void *buf, MPI_Aint count, struct plx_datatype *dt, int peer,
                        int sub);
void plx_sched_recv_sub(struct plx_sched *s, void *buf, MPI_Aint count, struct plx_datatype *dt, int peer, int sub);
/* buf = src op buf (count elements of dt, user layout) */
void plx_sched_reduce(struct plx_sched *s, const void *src, void *buf, MPI_Aint count, struct plx_datatype *dt);
void plx_sched_copy(struct plx_sched *s, const void *src, MPI_Aint scount, struct plx_datatype *sdt, void *dst,
                    MPI_Aint dcount, struct plx_datatype *ddt);
/* A user send/receive on comm's point-to-point context with the user's tag
 * (peer may be MPI_ANY_SOURCE for a receive; MPI_PROC_NULL adds nothing).
 * The receive's status becomes the request's. */
void plx_sched_send_user(struct plx_sched *s, const void *buf, MPI_Aint count, struct plx_datatype *dt, int peer,
                         int tag);
void plx_sched_recv_user(struct plx_sched *s, void *buf, MPI_Aint count, struct plx_datatype *dt, int peer,
                         int tag);
/* Partitioned communication (api/part.c): a send or receive on comm's
 * collective context with the given tag; a gated send is posted when
 * plx_sched_open opens it (MPI_Pready), once its round has started. */
void plx_sched_part(struct plx_sched *s, int send, void *buf, MPI_Aint count, struct plx_datatype *dt, int peer,
                    int tag, int gated);
void plx_sched_open(struct plx_sched *s, int i);
/* Entry i's communication has completed in the current run. */
int plx_sched_ent_done(struct plx_sched *s, int i);
/* Ends the current round. */
void plx_sched_fence(struct plx_sched *s);
/* A local step: fn(s, arg) runs when its round starts; it may append
 * entries (rounds) to s. */
void plx_sched_call(struct plx_sched *s, void (*fn)(struct plx_sched *s, void *arg), void *arg);

/* Builders address s->comm (its rank, size and members). An
 * intercommunicator's schedule points s->comm at its local_comm while it
 * adds the local parts, and back; entries keep the communicator they were
 * added for. Returns the previous one. c must live as long as s (the
 * owner's local_comm does). */
static inline struct plx_comm *plx_sched_use(struct plx_sched *s, struct plx_comm *c)
{
    struct plx_comm *old = s->comm;
    s->comm = c;
    return old;
}

/* Temporary memory owned by the schedule. */
void *plx_sched_alloc(struct plx_sched *s, size_t n);
/* A buffer for count elements of dt laid out as in a user buffer (the
 * returned pointer is the buffer's origin: data starts at + true_lb). */
void *plx_sched_alloc_layout(struct plx_sched *s, MPI_Aint count, const struct plx_datatype *dt);
/* Keeps an internal datatype alive until the schedule ends (takes the reference). */
void plx_sched_own_type(struct plx_sched *s, struct plx_datatype *dt);

/* Blocking: runs s to completion and frees it; returns an MPI error code. */
int plx_sched_run(struct plx_sched *s);
/* Nonblocking: starts s; its completion completes the returned request. */
struct plx_request *plx_sched_start(struct plx_sched *s);
/* Persistent collectives (MPI_Bcast_init, ...): an inactive persistent
 * request that owns s; every MPI_Start runs the same schedule again from
 * its first round (plx_sched_restart) with the data then in the buffers.
 * The schedule keeps the collective tag it took when it was built; that is
 * safe because all ranks start persistent collectives in the same order
 * and a start waits for the previous run to complete locally: messages of
 * run k+1 between two ranks follow those of run k and match in order.
 * Freeing the request frees the schedule. */
struct plx_request *plx_sched_persist(struct plx_sched *s);
void plx_sched_restart(struct plx_sched *s);
/* Frees a schedule that was built but will not run. */
void plx_sched_free(struct plx_sched *s);

/* Advances every running nonblocking collective; returns work done. Called
 * by plx_progress_poll. */
int plx_coll_progress(void);

#endif
