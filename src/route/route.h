/*
 * The router: which channel carries each packet.
 *
 * Components are listed once (route.c); at MPI_Init each one that
 * PLEXUS_TRANSPORTS allows opens its instances, and every instance gets an
 * id. A peer's *channels* are the instances that reach it: shared memory
 * alone for a rank of this node (unless PLEXUS_ROUTE names another
 * transport), every TCP rail for a rank elsewhere. Per operation class
 * (point-to-point, collective, RMA) and message size, the rules of
 * PLEXUS_ROUTE choose one channel or a striped set; the defaults are the
 * lowest-latency channel, and striping over every rail of that transport for
 * messages of PLEXUS_ROUTE_STRIPE_MIN bytes and more.
 *
 * Channels that can fail on their own (TCP rails, as opposed to shared
 * memory, which fails only with the peer) get an acknowledgement layer as
 * soon as a peer has two of them: every packet carries a link sequence
 * number (hdr.lseq), and the receiver returns cumulative acknowledgements
 * (ACK packets); a copy of each packet (for a
 * zero-copy DATA piece: a reference into the sender's buffer, whose send
 * completes only when acknowledged) is kept until acknowledged, so that
 * when a channel fails everything it had not delivered goes again on the
 * others, and the receiver drops what it already has by link sequence
 * number. Only the loss of the last channel is the loss of the peer.
 *
 * A peer with one channel and no acknowledgements is "fast": pt2pt's send
 * is one indirect call into the transport, as before the router existed.
 */
#ifndef PLX_ROUTE_H
#define PLX_ROUTE_H

#include "core/plexus.h"
#include "transport/transport.h"

#define PLX_ROUTE_MAX_IFACES 8
#define PLX_ROUTE_MAX_CHAN 8

/* operation classes of the rules */
enum { PLX_RC_PT2PT = 1, PLX_RC_COLL = 2, PLX_RC_RMA = 4, PLX_RC_ANY = 7 };

struct plx_chan {
    struct plx_tp_iface *ifc;
    int up;                     /* carries packets; 0 after link_failed until link_up */
    double retry_at;            /* down: when to probe it again */
    char *why;                  /* its last failure, as the transport told it */
    /* PLEXUS_STATS (routed peers; a fast peer's counters are pt2pt's) */
    uint64_t st_sent_pkts, st_sent_bytes, st_resent_bytes, st_recv_pkts, st_recv_bytes;
    uint64_t st_cls_pkts[3], st_cls_bytes[3];   /* sent, by class: pt2pt, coll, rma (issue 14) */
};

struct plx_rel;                 /* acknowledgement state (route.c) */

struct plx_route_peer {
    int lpid;
    int nchan;
    struct plx_chan chan[PLX_ROUTE_MAX_CHAN];
    struct plx_chan *by_ifc[PLX_ROUTE_MAX_IFACES];   /* channel through instance id, or NULL */
    struct plx_tp_iface *fast;  /* one channel, no acknowledgements: send straight to it */
    struct plx_chan *ctl;       /* control packets and, unless the rules say otherwise, small messages */
    struct plx_rel *rel;        /* acknowledgement layer, or NULL */
    int lost;                   /* the last channel failed: the peer is lost */
    int extra;                  /* its messages may be striped over extra channels (see route.c) */
    int pinned;                 /* several channels, one per operation class: no acknowledgements (route.c) */
    uint64_t st_acks_sent, st_acks_recv;        /* PLEXUS_STATS: ACK packets */
    uint64_t sent_bytes;        /* message bytes sent, until `extra` */
};

/* Instances open in this process, by id. */
extern struct plx_tp_iface *plx_route_ifaces[PLX_ROUTE_MAX_IFACES];
extern int plx_route_nifaces;

int plx_route_enabled(const char *name);
/* Issue 13: do the PLEXUS_ROUTE rules send every message to every peer
 * over component `comp` (its instances, striped or not) while it works?
 * So when every rule up to the first that matches everything names it. */
int plx_route_rules_all_to(const char *comp);

/* MPI_Init: parses PLEXUS_ROUTE, publishes the components' cards (before
 * the card fence) ... */
plx_status_t plx_route_init_early(int singleton);
/* ... then, after the fence, opens the instances with the upcalls built
 * from pt2pt's handlers, and checks that every rank is reached. */
plx_status_t plx_route_init(void);
void plx_route_finalize(void);
/* Processes of other jobs (core/dynprocs.c): the cards of the components
 * that can reach them ("tcp=<card>", ';'-separated), and lpids now up to
 * ntotal - 1 (opens such a component if it was not needed at MPI_Init). */
plx_status_t plx_route_cards(char *buf, size_t len);
plx_status_t plx_route_add_peers(int ntotal);
/* MPI_Comm_disconnect: the n processes of other jobs in lpids are no longer
 * needed; closes what reaches them (components' drop_peer). Call again
 * from progress until it answers 0 (the other side closes too); the answer
 * is how many channels are still open. */
int plx_route_drop_peers(const int *lpids, int n);
/* Unit tests: open these components instead of the built-in ones. */
void plx_route_use_components(const struct plx_tp_component *const *list, int n);

/* The router's state for world rank lpid, created on first use; its
 * channels are decided then. NULL never: a peer no instance reaches has
 * nchan 0. */
struct plx_route_peer *plx_route_peer(int lpid);

/* Progress: every component's poll, then the router's own work
 * (acknowledgements owed, channels to probe again). */
int plx_route_poll(void);
/* Sleeping: fds of the components (at most max); done after. */
int plx_route_sleep_prepare(int *fds, int max);
void plx_route_sleep_done(void);
int plx_route_cpu_shared(void);

plx_status_t plx_route_send_slow(struct plx_route_peer *rp, int cls, size_t size, const struct plx_hdr *h,
                                 const struct iovec *iov, int iovcnt);

/* Sends one packet of a message of `size` bytes (0 for control packets) of
 * class cls. PLX_OK: taken; PLX_BUSY: retry later. */
static inline plx_status_t plx_route_send(struct plx_route_peer *rp, int cls, size_t size, const struct plx_hdr *h,
                                          const struct iovec *iov, int iovcnt)
{
    struct plx_tp_iface *ifc = rp->fast;
    if (plx_likely(ifc != NULL))
        return ifc->ops->send(ifc, rp->lpid, h, iov, iovcnt);
    return plx_route_send_slow(rp, cls, size, h, iov, iovcnt);
}

/* Rendezvous DATA of a message of `size` bytes: sends its next piece from
 * [*done, size) of buf (the sender's packed bytes) as zero-copy DATA packets
 * headed by h (off and len are set here), each piece counted on `comp`
 * (count incremented per piece; completed when the piece is written, or
 * when acknowledged where acknowledgements are on), advancing *done. Returns
 * PLX_OK when everything is out, PLX_BUSY when the channels are full (call
 * again later), or PLX_ERR_UNSUPPORTED when no channel of the message sends
 * zero-copy (the caller streams fragments through plx_route_send). */
plx_status_t plx_route_send_data(struct plx_route_peer *rp, int cls, size_t size, struct plx_hdr *h, const char *buf,
                                 size_t *done, struct plx_tp_comp *comp);

/* The instance that reads the peer's memory directly (read_remote and
 * copy_remote), or NULL. */
struct plx_tp_iface *plx_route_reader(struct plx_route_peer *rp);
/* Capabilities that decide pt2pt's protocol with this peer: those of its
 * control channel. */
const struct plx_tp_caps *plx_route_caps(struct plx_route_peer *rp);

/* PLEXUS_STATS lines for one peer; pt2pt passes its counters, used for a
 * fast peer (one channel, where they are the channel's). */
void plx_route_print_stats(struct plx_route_peer *rp, uint64_t sent, uint64_t sent_bytes, uint64_t recv,
                           uint64_t recv_bytes);
/* The counters of rp's channel through instance ifc_id (all 0 when it has
 * none) as PLEXUS_STATS prints them: p2p[] are pt2pt's sent, sent bytes,
 * received, received bytes of the peer, which stand in for a fast peer's.
 * MPI_T's performance variables read them (api/mpit.c). */
enum { PLX_ST_SENT_PKTS, PLX_ST_SENT_BYTES, PLX_ST_RESENT_BYTES, PLX_ST_RECV_PKTS, PLX_ST_RECV_BYTES, PLX_ST_N };
void plx_route_chan_stats(const struct plx_route_peer *rp, int ifc_id, const uint64_t p2p[4], uint64_t out[PLX_ST_N]);

/* For plexus-info: one line per component (works here or why not) and the
 * rules in effect. */
void plx_route_describe(void (*line)(const char *text, void *arg), void *arg);

/* Remote memory (rma_am.c): the same five operations on every channel,
 * native where the channel has remote memory, else active messages executed
 * by the target's progress engine. A key names a registered region of the
 * target; an operation outside every region fails with PLX_ERR_RANGE and
 * touches nothing. Each operation counts one (or, fragmented, several) on
 * comp, completed when it is done at the target; flush completes once every
 * operation issued to the peer before it is. `op` of atomic: PLX_TP_AT_*.
 * They never return BUSY: what the channel cannot take at once waits, in
 * issue order, and leaves from the poll (a put's bytes are read from
 * `local` then, so it stays untouched until comp completes). */
plx_status_t plx_route_mem_register(void *addr, size_t len, struct plx_tp_mr *mr);
void plx_route_mem_deregister(struct plx_tp_mr *mr);
plx_status_t plx_route_put(struct plx_route_peer *rp, const void *local, size_t len, uint64_t raddr, uint64_t rkey,
                           struct plx_tp_comp *comp);
plx_status_t plx_route_get(struct plx_route_peer *rp, void *local, size_t len, uint64_t raddr, uint64_t rkey,
                           struct plx_tp_comp *comp);
plx_status_t plx_route_atomic(struct plx_route_peer *rp, int op, uint64_t operand, uint64_t compare,
                              uint64_t *result, uint64_t raddr, uint64_t rkey, struct plx_tp_comp *comp);
plx_status_t plx_route_flush(struct plx_route_peer *rp, struct plx_tp_comp *comp);
/* Issue 14 (route.c): the instance with native remote memory for rp's
 * operations of `size` bytes (atomic: with native atomics too), or NULL. */
struct plx_tp_iface *plx_route_rma_native(struct plx_route_peer *rp, size_t size, int atomic);
/* Issue 14, session 9 (rma_am.c): element-wise atomics on rp's native
 * channel (struct plx_tp_acc). acc_valid: the most elements one call takes
 * for (kind, op, dt), 0 when no native channel can (flags:
 * PLX_TP_ACC_ORDERED); acc: counts one on comp like the others, refused
 * with PLX_ERR_UNSUPPORTED where acc_valid says 0 (no fallback). */
size_t plx_route_acc_valid(struct plx_route_peer *rp, int kind, int op, int dt, unsigned *flags);
plx_status_t plx_route_acc(struct plx_route_peer *rp, const struct plx_tp_acc *a, struct plx_tp_comp *comp);
/* route.c: the fallback's packet handlers, and its answers waiting for room. */
void plx_route_rma_upcalls(struct plx_tp_upcalls *up);
int plx_route_rma_poll(void);
/* The RMA layer's own packets (PLX_PKT_WIN, PLX_PKT_WIN_ANS: accumulates
 * with datatypes, locks, epoch notices) are handed to the handlers it
 * registers here, and its poll (answers waiting for room) runs in the
 * progress engine with the fallback's. Registered once, after MPI_Init. */
void plx_route_am_hook(plx_tp_recv_fn req, plx_tp_recv_fn ans, int (*poll)(void));

/* pt2pt, for the loss of a peer's last channel: decides whether the job
 * ends (no communicator holding it returns errors) or its requests fail. */
void plx_pt2pt_peer_lost(int lpid, const char *why, int ended);

#endif
