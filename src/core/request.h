/*
 * Requests: one object type for every pending operation the application can
 * wait on (sends, receives, persistent ones, matched messages of MPI_Mprobe,
 * and later collectives and RMA). `cc` counts what is still outstanding;
 * the request is complete when it reaches 0.
 *
 * A persistent request is the same object reused: MPI_Start resets its
 * transient fields and starts it; completion makes it inactive, not free.
 */
#ifndef PLX_REQUEST_H
#define PLX_REQUEST_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>
#include "core/datatype.h"
#include "core/handle.h"
#include "core/objects.h"
#include "core/plexus.h"
#include "transport/transport.h"

enum plx_req_kind {
    PLX_REQ_SEND = 1,
    PLX_REQ_RECV,
    PLX_REQ_MESSAGE,            /* an MPI_Message from MPI_Mprobe: not waitable */
    PLX_REQ_COLL,               /* a nonblocking collective (src/coll/sched.c completes it) */
    PLX_REQ_PROBE,              /* a blocking probe's stand-in on the blocked list: for the dump only */
    PLX_REQ_FILE,               /* MPI-IO: complete when handed out (src/io/io.h) */
    PLX_REQ_GREQ,               /* a generalized request (MPI_Grequest_start): api/grequest.c */
    PLX_REQ_RMA,                /* MPI_Rput and kin: src/rma completes it when the target answered */
};

enum plx_send_mode { PLX_MODE_STD, PLX_MODE_SYNC, PLX_MODE_BUFFERED, PLX_MODE_READY };

struct plx_unexp;

/* An entry of a peer's queue of packets waiting for transport space. */
struct plx_sendq_item {
    struct plx_list link;
    int kind;                   /* enum in pt2pt.c */
};

struct plx_request {
    struct plx_obj obj;
    uint8_t kind;
    uint8_t mode;
    uint8_t persistent;
    uint8_t active;             /* persistent: started and not yet completed+waited */
    uint8_t user_freed;         /* MPI_Request_free on an active request */
    uint8_t internal;           /* no user handle (Bsend's inner send, collectives) */
    uint8_t cancel_pending;
    uint8_t truncated;
    uint8_t push;               /* send, non-contiguous rendezvous: PLX_PUSH_* (pt2pt.c) */
    uint8_t rndv_out;           /* send: its RTS is out and it is counted in plx_rndv_sends */
    uint8_t no_zcopy;           /* send: a zero-copy piece failed; the rest goes by copy */
    uint8_t failed_part;        /* collective step: the sender's collective had failed (PLX_PKT_F_FAILED):
                                 * PLX_PART_LOST (a member was lost) or PLX_PART_OTHER (PLX_PKT_F_OTHER) */
    int cc;
    struct plx_comm *comm;      /* referenced while the request lives */
    int rank;                   /* peer rank in comm (or MPI_ANY_SOURCE) */
    int tag;
    int ctx;
    int peer_lpid;
    void *buf;
    MPI_Aint count;
    struct plx_datatype *dt;
    size_t bytes;               /* send: message size; recv: capacity */
    void *tmp;                  /* packed copy for non-contiguous data; freed at completion */
    void *data;                 /* where the packed bytes are (buf+true_lb or tmp) */

    /* status */
    int st_source, st_tag, st_error, st_cancelled;
    size_t st_bytes;

    struct plx_list link;       /* receive: on the posted queue while linked */
    struct plx_sendq_item sq;   /* send: on its peer's send queue */
    struct plx_list blocked_link;       /* stack request: on plx_request_blocked while its call waits */

    /* rendezvous */
    size_t rndv_size;           /* receiver: bytes the sender has */
    size_t rndv_done;           /* bytes streamed (sender) / received (receiver) */
    uint64_t rndv_cookie;       /* the peer's request cookie */

    struct plx_tp_comp comp;    /* zero-copy pieces (send) or a direct read (receive) in a transport */

    struct plx_unexp *msg;      /* PLX_REQ_MESSAGE */
    void *bsend_block;          /* Bsend: block of the attached buffer to release */

    /* what an upper layer hangs on the request (a persistent collective's
     * schedule, a generalized request's callbacks): ext_free(ext) runs when
     * the request is freed */
    void *ext;
    void (*ext_free)(void *ext);
};

extern struct plx_objtab plx_request_tab;
/* Rendezvous sends of this process whose RTS is out and that have not
 * completed. Transports read it as "this process is itself being read from":
 * shared memory then does not ask the sender to help with its reads (an
 * exchange, where the peer is busy with its own read). */
extern int plx_rndv_sends;

struct plx_request *plx_request_new(int kind, struct plx_comm *comm);
/* A request on the caller's stack for a blocking call: no handle, and the
 * caller keeps comm alive. While it waits it is on a list (one per waiting
 * thread under MPI_THREAD_MULTIPLE), so that the --timeout dump and a
 * peer's failure find it: plx_request_block / plx_request_unblock. */
void plx_request_init_stack(struct plx_request *r, int kind, struct plx_comm *comm);
void plx_request_block(struct plx_request *r);
void plx_request_unblock(struct plx_request *r);
/* fn(request, arg) for each of them; fn may complete the request. */
void plx_request_foreach_blocked(void (*fn)(void *obj, void *arg), void *arg);
/* Called when cc reaches 0 by the layer that completed it. */
void plx_request_complete(struct plx_request *r);
/* failed_part values */
enum { PLX_PART_OK = 0, PLX_PART_LOST = 1, PLX_PART_OTHER = 2 };
/* Drops the request (handle invalid afterwards). */
void plx_request_free(struct plx_request *r);
/* Fills an MPI_Status (may be MPI_STATUS_IGNORE) from r; MPI_ERROR only when
 * r failed (a success leaves the caller's value, MPI 3.2.5). */
void plx_request_status(const struct plx_request *r, MPI_Status *st);
/* Prints every pending request to stderr (mpiexec --timeout). */
void plx_request_dump_pending(void);

/* The 63-bit byte count is split over two ints (see mpi.h); both halves are
 * handled as unsigned so that bit 62 of the count (bit 31 of
 * count_hi_and_cancelled) is not taken for a sign and spread by the shift. */
static inline void plx_status_set_bytes(MPI_Status *st, MPI_Count bytes)
{
    uint64_t b = (uint64_t)bytes;
    uint32_t hi = (uint32_t)(b >> 32) << 1 | ((uint32_t)st->count_hi_and_cancelled & 1u);
    st->count_lo = (int)(uint32_t)b;
    st->count_hi_and_cancelled = (int)hi;
}
static inline MPI_Count plx_status_get_bytes(const MPI_Status *st)
{
    uint64_t hi = (uint32_t)st->count_hi_and_cancelled >> 1;
    return (MPI_Count)(hi << 32 | (uint32_t)st->count_lo);
}

#endif
