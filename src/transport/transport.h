/*
 * The transport interface (second version). A transport moves packets
 * between processes and knows nothing of communicators, matching or of the
 * other transports; the layers above know nothing of rings or sockets.
 *
 * A transport is a *component* (struct plx_tp_component: a name, what it
 * can do on this machine, start-up and progress) that *opens instances*
 * (struct plx_tp_iface: one NIC, one rail, one provider/domain). A process
 * may hold several instances of one component: one TCP instance per
 * selected interface is one rail per peer. Every operation takes the
 * instance and an endpoint, a peer reached through that instance, named by
 * its world rank (lpid); the pair (instance, lpid) is a *channel* of the
 * router (src/route/route.h), which decides per operation which channel, or
 * striped set of channels, carries it.
 *
 * Upcalls are handed to open() and are the only way a transport reaches
 * the layers above (struct plx_tp_upcalls): a receive handler per packet
 * type (the active-message model), placement of DATA payloads straight into
 * their destination, link_up/link_failed for one channel, peer_failed for a
 * process known to be gone. A transport never decides whether a failure
 * ends the job, never parses another layer's payload beyond the header,
 * and reports failures from its poll, never from inside send.
 *
 * Completions (zero-copy sends, remote reads, remote-memory operations) go
 * through one object, struct plx_tp_comp: the initiator sets `count` to the
 * operations it issues against it; the transport calls plx_tp_comp_done()
 * once per operation (from poll, never inside the call that issued it), and
 * the callback runs when the count reaches zero.
 *
 * Every packet starts with struct plx_hdr (40 bytes, the same for every
 * transport). Matched packets (EAGER, RTS, CANCEL_REQ) carry a per-(sender,
 * receiver) sequence number, so a transport may deliver in any order: the
 * point-to-point layer restores it before matching. `lseq` (and an ACK's
 * value) belong to the router's acknowledgement layer on channels that can
 * fail on their own (rails); the transport carries them untouched.
 *
 * Thread rules: as every layer below the API, under the library lock, from
 * the progress engine (poll) and from the layers above (send and the rest).
 */
#ifndef PLX_TRANSPORT_H
#define PLX_TRANSPORT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>
#include "core/status.h"

enum plx_pkt_type {
    PLX_PKT_EAGER = 1,          /* matched data; flags PLX_PKT_F_SYNC for Ssend */
    PLX_PKT_SYNC_ACK,           /* receiver matched an eager-synchronous message */
    PLX_PKT_RTS,                /* rendezvous request: payload struct plx_rts */
    PLX_PKT_CTS,                /* receiver asks the sender to stream: payload uint64 rreq */
    PLX_PKT_DATA,               /* a streamed piece: hdr.off is its offset in the message */
    PLX_PKT_FIN,                /* receiver has read the sender's buffer */
    PLX_PKT_CANCEL_REQ,         /* sender asks to withdraw an unmatched send (sequenced) */
    PLX_PKT_CANCEL_ANS,         /* flags PLX_PKT_F_CANCELLED when it was withdrawn */
    PLX_PKT_CREDIT,             /* sreq = eager bytes consumed since the last credit */
    PLX_PKT_PUT_DONE,           /* sender has written the whole message into the receiver (CTS with PUSH) */
    PLX_PKT_ACK,                /* router: cumulative acknowledgement (hdr.sreq) */
    PLX_PKT_PING,               /* router: probes a channel that is coming back (no payload) */
    PLX_PKT_RMA,                /* remote-memory fallback: an operation for the target (rma_am.c) */
    PLX_PKT_RMA_ANS,            /* remote-memory fallback: its answer */
    PLX_PKT_WIN,                /* one-sided communication: an operation or epoch notice (src/rma) */
    PLX_PKT_WIN_ANS,            /* one-sided communication: its answer */
    PLX_PKT_TYPE_MAX,
};

#define PLX_PKT_F_SYNC      0x1
#define PLX_PKT_F_CANCELLED 0x2
#define PLX_PKT_F_PUSH      0x4 /* RTS/CTS: the sender writes into the receiver's buffer */
#define PLX_PKT_F_NOREAD    0x8 /* RTS: not readable in place (packed as it streams): answer CTS */
#define PLX_PKT_F_FAILED    0x10 /* EAGER/RTS of a collective step whose sender had already failed
                                     * (a member was lost): its data is not to be trusted */
#define PLX_PKT_F_OTHER     0x20 /* with F_FAILED: it failed for another reason than a lost member */
#define PLX_PKT_F_TRANSPORT 0x80 /* reserved for a transport's own use; others ignore it */

/* 32 bytes, the same for every transport: with a payload of up to 32 bytes a
 * packet is one 64-byte line of a shared-memory ring. */
struct plx_hdr {
    uint8_t type;
    uint8_t flags;
    uint16_t ctx;               /* match context */
    int32_t src;                /* sender's rank in the communicator */
    union {
        struct {
            int32_t tag;
            uint32_t seq;       /* matched packets: per (sender, receiver) order */
        };
        uint64_t off;           /* DATA: offset of its payload in the message */
    };
    uint32_t len;               /* payload bytes of this packet (a DATA piece is below 4 GiB) */
    uint32_t lseq;              /* router: link sequence number (0: not tracked) */
    uint64_t sreq;              /* a request cookie: the sender's, or (DATA, CTS answers) the receiver's;
                                 * ACK: every lseq below it has arrived */
};

/* A packet's flags as its receiver may read them: without the bit its
 * transport may have set (shm marks padded records with it). Needed where
 * flags are compared whole; single-bit tests need not bother. */
static inline unsigned plx_pkt_flags(const struct plx_hdr *h)
{
    return h->flags & (unsigned)~PLX_PKT_F_TRANSPORT;
}

struct plx_rts {
    uint64_t size;              /* bytes of the whole message */
    uint64_t addr;              /* sender's buffer, for a direct read */
};

/* --- completions ----------------------------------------------------------- */

struct plx_tp_comp {
    void (*cb)(struct plx_tp_comp *c);
    int count;                  /* operations still to complete */
    plx_status_t status;        /* the first error, else PLX_OK */
};

static inline void plx_tp_comp_done(struct plx_tp_comp *c, plx_status_t st)
{
    if (st != PLX_OK && c->status == PLX_OK)
        c->status = st;
    if (--c->count == 0)
        c->cb(c);
}

/* --- capabilities ---------------------------------------------------------- */

#define PLX_TP_ORDERED   0x01   /* delivers each channel's packets in the order sent */
#define PLX_TP_RELIABLE  0x02   /* never loses a packet while the channel is up */
#define PLX_TP_FATE_SHARED 0x04 /* the channel fails only with the peer process (shared memory) */
#define PLX_TP_ZCOPY     0x08   /* send_zcopy */
#define PLX_TP_READ      0x10   /* read_remote/copy_remote (a direct read of the peer's memory) */
#define PLX_TP_RMA       0x20   /* native put/get on registered memory */
#define PLX_TP_ATOMIC    0x40   /* native 64-bit atomics */

struct plx_tp_caps {
    size_t max_packet;          /* header + payload of one send */
    int max_iov;                /* iov entries one send takes */
    size_t eager_max;           /* largest message sent eagerly */
    size_t eager_credit;        /* eager bytes a sender may have unconsumed at one receiver */
    unsigned flags;             /* PLX_TP_* */
    int latency_class;          /* lower is faster: the router prefers the lowest for small messages */
    int bw_class;               /* higher is faster */
};

/* --- instances ------------------------------------------------------------- */

struct plx_tp_iface;

/* A registered memory region: `key` is what a peer passes back to reach it
 * (packed into the 8 bytes the wire has for it). */
struct plx_tp_mr {
    void *addr;
    size_t len;
    uint64_t key;
    void *priv;
};

enum plx_tp_atomic_op { PLX_TP_AT_FADD = 1, PLX_TP_AT_SWAP, PLX_TP_AT_CSWAP };

/* Element-wise atomics (issue 14, session 9): `count` elements of type
 * `dt` at raddr combined with the origin's `in` by `op`. The numbering of
 * ops and types is libfabric's (enum fi_op, enum fi_datatype), so that its
 * transport passes them as they are; a transport of other hardware maps
 * them. */
enum plx_tp_acc_kind { PLX_TP_ACC_PLAIN = 1, PLX_TP_ACC_FETCH, PLX_TP_ACC_COMPARE };
enum plx_tp_aop {
    PLX_TP_AOP_MIN, PLX_TP_AOP_MAX, PLX_TP_AOP_SUM, PLX_TP_AOP_PROD, PLX_TP_AOP_LOR, PLX_TP_AOP_LAND,
    PLX_TP_AOP_BOR, PLX_TP_AOP_BAND, PLX_TP_AOP_LXOR, PLX_TP_AOP_BXOR, PLX_TP_AOP_READ, PLX_TP_AOP_WRITE,
    PLX_TP_AOP_CSWAP
};
enum plx_tp_adt {
    PLX_TP_ADT_INT8, PLX_TP_ADT_UINT8, PLX_TP_ADT_INT16, PLX_TP_ADT_UINT16, PLX_TP_ADT_INT32, PLX_TP_ADT_UINT32,
    PLX_TP_ADT_INT64, PLX_TP_ADT_UINT64, PLX_TP_ADT_FLOAT, PLX_TP_ADT_DOUBLE, PLX_TP_ADT_FLOAT_COMPLEX,
    PLX_TP_ADT_DOUBLE_COMPLEX
};
#define PLX_TP_ACC_ORDERED 0x1  /* acc_valid: atomics to one peer are applied in the order issued */
struct plx_tp_acc {
    int kind, op, dt;
    size_t count, elem;         /* elements, and bytes of one */
    const void *in;             /* count elements (PLAIN, FETCH but READ, COMPARE: the new value) */
    const void *cmp;            /* COMPARE: the value compared with */
    void *res;                  /* FETCH, COMPARE: the old values */
    uint64_t raddr, rkey;
};

struct plx_tp_ops {
    /* Can this instance reach world rank lpid? */
    int (*reaches)(struct plx_tp_iface *ifc, int lpid);
    /* Send hdr + payload (iov) to lpid. PLX_OK: accepted whole (the data
     * was copied out or written); PLX_BUSY: nothing taken, retry later.
     * Connects lazily on first use. */
    plx_status_t (*send)(struct plx_tp_iface *ifc, int lpid, const struct plx_hdr *hdr, const struct iovec *iov,
                         int iovcnt);
    /* Optional zero-copy send: like send, except that the last iov entry is
     * not copied; it stays valid until the transport completes `comp`. */
    plx_status_t (*send_zcopy)(struct plx_tp_iface *ifc, int lpid, const struct plx_hdr *hdr,
                               const struct iovec *iov, int iovcnt, struct plx_tp_comp *comp);
    /* Optional: bytes accepted for lpid and not yet delivered to the network
     * (queued, or in the socket's send buffer): the router stripes a large
     * message by giving each piece to the channel with the least. */
    size_t (*backlog)(struct plx_tp_iface *ifc, int lpid);
    /* Optional direct read of len bytes at remote_addr of lpid's memory into
     * local. PLX_OK: done; PLX_IN_PROGRESS: `comp` completes later (the peer
     * may help copy); PLX_ERR_UNSUPPORTED: the OS forbids it for this peer. */
    plx_status_t (*read_remote)(struct plx_tp_iface *ifc, int lpid, void *local, uint64_t remote_addr, size_t len,
                                struct plx_tp_comp *comp);
    /* Optional scattered copy between this process and lpid's memory: local
     * iovecs <-> [remote, remote+len) (write: local to remote). Synchronous.
     * PLX_ERR_UNSUPPORTED when the OS cannot. */
    plx_status_t (*copy_remote)(struct plx_tp_iface *ifc, int lpid, int write, const struct iovec *local, int niov,
                                uint64_t remote, size_t len);
    /* Optional remote memory (PLX_TP_RMA / PLX_TP_ATOMIC). Where NULL, the
     * router's message-based fallback (rma_am.c) stands in. */
    plx_status_t (*mem_register)(struct plx_tp_iface *ifc, void *addr, size_t len, struct plx_tp_mr *mr);
    void (*mem_deregister)(struct plx_tp_iface *ifc, struct plx_tp_mr *mr);
    plx_status_t (*put)(struct plx_tp_iface *ifc, int lpid, const void *local, size_t len, uint64_t raddr,
                        uint64_t rkey, struct plx_tp_comp *comp);
    plx_status_t (*get)(struct plx_tp_iface *ifc, int lpid, void *local, size_t len, uint64_t raddr, uint64_t rkey,
                        struct plx_tp_comp *comp);
    plx_status_t (*atomic)(struct plx_tp_iface *ifc, int lpid, int op, uint64_t operand, uint64_t compare,
                           uint64_t *result, uint64_t raddr, uint64_t rkey, struct plx_tp_comp *comp);
    /* Completes when every operation issued to lpid before it is complete at the target. */
    plx_status_t (*flush)(struct plx_tp_iface *ifc, int lpid, struct plx_tp_comp *comp);
    /* Optional element-wise atomics (issue 14): acc_valid answers the most
     * elements one call takes for (kind, op, dt), 0 when the instance
     * cannot do it, with PLX_TP_ACC_ORDERED in *flags when such atomics to
     * one peer apply in issue order; acc issues one (its buffers stay
     * untouched until comp completes). */
    size_t (*acc_valid)(struct plx_tp_iface *ifc, int kind, int op, int dt, unsigned *flags);
    plx_status_t (*acc)(struct plx_tp_iface *ifc, int lpid, const struct plx_tp_acc *a, struct plx_tp_comp *comp);
};

struct plx_tp_component;

struct plx_tp_iface {
    const struct plx_tp_ops *ops;
    const struct plx_tp_component *comp;
    struct plx_tp_caps caps;
    char name[16];              /* "shm", "tcp0", "tcp1", ...: the router's rules name it */
    char detail[64];            /* what it is on this machine ("eth1 10.1.0.2") */
    int rail;                   /* index among its component's instances */
    int id;                     /* index among every open instance (the router's) */
    void *priv;
};

/* --- upcalls ---------------------------------------------------------------- */

typedef void (*plx_tp_recv_fn)(struct plx_tp_iface *ifc, int lpid, const struct plx_hdr *h, const void *payload);

struct plx_tp_upcalls {
    /* One handler per packet type; the payload is valid during the call only. */
    plx_tp_recv_fn recv[PLX_PKT_TYPE_MAX];
    /* A transport that reads a byte stream may place a DATA payload itself:
     * place() says where its h->len bytes go: the destination of the first
     * *fit_p of them (the rest is discarded; NULL with 0: discard all), and
     * placed() follows once all are placed or discarded. A transport that
     * does not place calls recv[PLX_PKT_DATA] instead. */
    void *(*place)(struct plx_tp_iface *ifc, int lpid, const struct plx_hdr *h, size_t *fit_p);
    void (*placed)(struct plx_tp_iface *ifc, int lpid, const struct plx_hdr *h);
    /* The channel to lpid carries packets (again). */
    void (*link_up)(struct plx_tp_iface *ifc, int lpid);
    /* The channel to lpid broke: nothing it accepted and did not deliver
     * will be delivered or completed; `why` names both ranks, hosts and the
     * address. `ended`: the peer closed or reset it (its process may be
     * gone), as opposed to a timeout. The transport may connect again later
     * when asked to send. */
    void (*link_failed)(struct plx_tp_iface *ifc, int lpid, const char *why, int ended);
    /* The process lpid is gone for certain (not just a link). */
    void (*peer_failed)(int lpid, const char *why);
};

/* --- components ------------------------------------------------------------- */

struct plx_tp_component {
    const char *name;
    unsigned flags;             /* PLX_TP_* that every instance has (PLX_TP_FATE_SHARED picks the
                                 * upcalls without the router's acknowledgement layer) */
    /* plexus-info: can it work on this machine? 1 and what it found, or 0
     * and why not, in msg. Needs plx_config loaded only. */
    int (*query)(char *msg, size_t len);
    /* Before the business-card fence: publish cards (optional). */
    void (*init_early)(void);
    /* After the fence. `needed`: some peer may be reached through it. Opens
     * up to `max` instances into ifcs[] and sets *n (0 when not needed). */
    plx_status_t (*open)(const struct plx_tp_upcalls *up, int needed, struct plx_tp_iface **ifcs, int max, int *n);
    /* Delivers incoming packets and completions of every instance; returns
     * how much work it did. */
    int (*poll)(void);
    /* Prepare to sleep: an fd that becomes readable when something arrives,
     * or -1; sleep_done after the sleep. Optional. */
    int (*sleep_prepare)(void);
    void (*sleep_done)(void);
    /* Optional: 1 when a process it reaches last ran on our CPU, or (sctp)
     * when what a wait waits for must first pass through another thread:
     * the wait then stops spinning (progress.c). */
    int (*cpu_shared)(void);
    void (*finalize)(void);
    /* Processes of other jobs (spawn, connect/accept, join), optional; a
     * component with both reaches them. card: this process's card for them
     * (no spaces; whether open or not), 0 or -1. add_peers: lpids now go up
     * to ntotal - 1 (plx_procs_comp_card gives the new ones' cards); called
     * on an open component, and also makes one that was opened with
     * `needed` 0 ready for open(needed 1), which the router then calls. */
    int (*card)(char *buf, size_t len);
    plx_status_t (*add_peers)(int ntotal);
    /* Optional: lpid (a process of another job) is no longer needed
     * (MPI_Comm_disconnect): close what reaches it, cleanly (the other side
     * does the same). Called again from progress until it answers 1: nothing
     * of it is left open. */
    int (*drop_peer)(int lpid);
};

#endif
