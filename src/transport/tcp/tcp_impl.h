/*
 * TCP transport, private: the state and the functions its files share.
 *
 *   tcp.c        the component: start-up (listener, secret, card, rails),
 *                the operations, poll and the hot connection, self-sends,
 *                finalize
 *   tcp_conn.c   peers and connections: epoll registration, connecting,
 *                the handshake, accepting, link failures
 *   tcp_send.c   the send queue and the writes (the small-message path)
 *   tcp_recv.c   the receive parser (the receive path)
 *   tcp_card.c   the business card
 *
 * Everything here is under the API lock (see tcp.c). Small helpers that
 * the fast paths of several files use are static inline here; the rest is
 * declared here and defined in one file.
 */
#ifndef PLX_TCP_IMPL_H
#define PLX_TCP_IMPL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include "core/plexus.h"
#include "transport/tcp/tcp.h"
#include "transport/tcp/tcp_card.h"
#include "transport/tcp/tcp_wire.h"
#include "util/iface.h"

#pragma GCC visibility push(hidden)

#define PLX_TCP_PKT_BYE 0xfe            /* transport-private: "finalizing; EOF follows" */
#define PLX_TCP_HDR sizeof(struct plx_hdr)
#define PLX_TCP_MAX_IOV 64
#define PLX_TCP_SMALL 256               /* queue entries this small come from a free list */
#define PLX_TCP_SMALL_KEEP 256          /* ... which keeps at most this many */
#define PLX_TCP_MAX_HANDSHAKES 1024     /* accepted connections not yet through the handshake */
#define PLX_TCP_MAX_PAYLOAD (1ull << 30)  /* sanity bound of a non-DATA packet */
#define PLX_TCP_FINALIZE_SECONDS 10.0
#define PLX_TCP_HOT_EPOLL_EVERY 8       /* with a hot connection: epoll_wait on every 8th poll only */
#define PLX_TCP_HOT_DETACH 16           /* reads with data in a row before the hot one leaves epoll */
#define PLX_TCP_RETRY_WRITES_MAX 4      /* full sockets retried on every poll; more: EPOLLOUT only */
#define PLX_TCP_SEND_COPY_MAX 512      /* packets up to this size are copied together and written with send() */
#define PLX_TCP_REFUSALS_WARNED 8       /* refused strangers always logged; the rest at PLEXUS_DEBUG=1 */
#define PLX_TCP_MAX_RAILS 4

enum plx_tcp_conn_state {
    PLX_TCP_C_CONNECTING = 1,           /* ours: connect() in progress */
    PLX_TCP_C_HELLO_SENT,               /* ours: waiting for the answer */
    PLX_TCP_C_ACCEPTED,                 /* theirs: waiting for the hello */
    PLX_TCP_C_OPEN,                     /* carries packets */
    PLX_TCP_C_DEAD,                     /* closed; freed at the end of poll */
};

enum plx_tcp_rx_state { PLX_TCP_RX_HDR, PLX_TCP_RX_PAYLOAD, PLX_TCP_RX_DIRECT, PLX_TCP_RX_DISCARD };

struct plx_tcp_peer;

struct plx_tcp_conn {
    int fd;
    int state;
    int lpid;                           /* -1: accepted, hello not read yet */
    struct plx_tcp_peer *peer;          /* NULL until then */
    uint32_t events;                    /* current epoll interest */
    int in_epoll;                       /* 0 while hot and out of the set, or before registration */
    unsigned hot_hits;                  /* reads with data since it became hot or rejoined the set */
    double deadline;                    /* handshake states */
    double allowed;                     /* seconds from start to deadline */
    struct plx_list link;               /* handshaking / zombies */
    struct sockaddr_storage addr;       /* the other end */
    socklen_t addrlen;
    union {
        struct plx_tcp_hello hello;
        struct plx_tcp_ack ack;
        uint8_t b[64];
    } hs;
    size_t hs_got;
    /* receiving (OPEN) */
    int rx;
    uint8_t rhdr[PLX_TCP_HDR];          /* a header cut by the end of a read */
    size_t rhdr_got;
    struct plx_hdr rh;                  /* valid once rhdr_got >= PLX_TCP_HDR */
    char *rbuf;                         /* PAYLOAD: own buffer (or NULL); DIRECT: user memory */
    size_t rlen, rgot;
    size_t rdiscard;                    /* DATA bytes beyond a truncated receive */
    int last_data;                      /* the last packet read was DATA */
};

/* A packet (or the rest of one) waiting to be written. */
struct plx_tcp_sbuf {
    struct plx_list link;
    struct plx_tp_comp *comp;           /* zero copy: completed once written */
    const char *zc;                     /* zero copy: user bytes, written after data[] */
    size_t zc_len;
    size_t copied;                      /* bytes in data[] */
    size_t done;                        /* bytes written, of copied + zc_len */
    size_t cap;
    char data[];
};

enum plx_tcp_peer_state {
    PLX_TCP_P_IDLE = 0,                 /* no connection yet */
    PLX_TCP_P_CONNECTING,               /* conn is our attempt */
    PLX_TCP_P_WAIT_PEER,                /* our attempt lost the tie-break: theirs comes */
    PLX_TCP_P_OPEN,
    PLX_TCP_P_CLOSED,                   /* the peer said BYE and closed */
};

struct plx_tcp_rail;

struct plx_tcp_peer {
    int lpid;
    struct plx_tcp_rail *rail;
    int state;
    struct plx_tcp_conn *conn;
    struct plx_list sq;                 /* struct plx_tcp_sbuf, in order */
    size_t sq_copied;
    int wblocked;                       /* socket was full: EPOLLOUT armed until the queue drains */
    struct plx_list wb_link;            /* on plx_tcp.wblocked while wblocked */
    int bye;                            /* BYE received */
    int dropping;                       /* drop_peer: we said BYE; its EOF is no failure */
    int fin_bye, fin_shut, fin_eof;     /* finalize: BYE queued, our side shut down, theirs ended */
    /* connecting */
    struct plx_tcp_card *card;          /* fetched on first need */
    struct plx_iface_ip cand[2 + PLX_TCP_CARD_MAX_ADDRS];
    int ncand, next_cand;
    double connect_deadline;            /* the whole budget of all its addresses */
    int failed_before;                  /* its link failed once: a connect now is the router's probe */
    double wait_deadline;               /* WAIT_PEER */
    struct plx_list wait_link;
    char tried[600];
    /* the link broke: what happened, reported to the router from the next poll */
    struct plx_list fail_link;
    char *fail_why;
    int fail_ended;
};

/* One rail: an instance of the component. Its connections go out from one
 * local interface (bound to its address) to the peer's address in the same
 * subnet; rails over loopback (PLEXUS_TCP_RAILS to ranks of this node) are
 * told apart by the rail number in the handshake. */
struct plx_tcp_rail {
    struct plx_tp_iface ifc;
    int index;
    int has_addr;                       /* bound to addr (an interface); else any/loopback */
    struct plx_iface_addr addr;
    struct plx_tcp_peer **peers;        /* by world rank, allocated on first use */
    int unreached_said;                 /* PLEXUS_DEBUG: "reaches no address of rank N" said once */
};

struct plx_tcp_selfpkt {
    struct plx_list link;
    struct plx_hdr h;
    struct plx_tp_comp *comp;           /* zero copy DATA: the data is at zc */
    const char *zc;
    size_t plen;
    uint64_t payload[];
};

/* The transport's state: one per process (defined in tcp.c). */
struct plx_tcp_global {
    int early_ok;                       /* listener + card done */
    int initialized;
    int finalizing;
    int lfd, epfd;
    int port;
    char early_err[256];
    uint8_t secret[16];
    int have_secret;
    char host[64];
    struct plx_iface_rules rules;
    struct plx_iface_addr my[PLX_TCP_CARD_MAX_ADDRS];     /* my selected addresses */
    int nmy;
    double timeout;
    size_t eager_max, credit, sendq_max;
    struct plx_tcp_rail rails[PLX_TCP_MAX_RAILS];
    int nrails;                         /* to ranks on other nodes */
    int nlo_rails;                      /* to ranks of this node (loopback) */
    int npeers;                         /* lpids the rails' peers[] hold (world + added processes) */
    char card[1100];                    /* our card (also for processes of other jobs), when early_ok */
    const struct plx_tp_upcalls *up;
    struct plx_list handshaking;        /* conns in a handshake state */
    int naccepting;
    int nrefused;
    struct plx_tcp_conn *hot;           /* the one connection traffic comes from lately, or NULL */
    int sleepers;                       /* threads asleep on the epoll set: hot stays in it */
    unsigned npolls;
    struct plx_list waiting;            /* peers in WAIT_PEER */
    struct plx_list failed;             /* peers FAILED, not yet reported to pt2pt */
    struct plx_list wblocked;           /* peers whose socket was full */
    int nwblocked;
    struct plx_list zombies;            /* DEAD conns to free after the epoll batch */
    struct plx_list selfq;
    struct plx_tp_comp **zc_done;       /* completed zero-copy writes to report */
    size_t nzc_done, zc_cap;
    char *rxbuf;
    size_t rxcap;
    struct plx_list small_free;
    int nsmall_free;
};

extern struct plx_tcp_global plx_tcp;

/* Rails in use: to other nodes, or over loopback to this node's ranks. */
static inline int plx_tcp_nrails_all(void)
{
    return PLX_MAX(plx_tcp.nrails, plx_tcp.nlo_rails);
}

static inline struct plx_tcp_rail *plx_tcp_rail_of(struct plx_tp_iface *ifc)
{
    return plx_container_of(ifc, struct plx_tcp_rail, ifc);
}

/* Off the list of peers whose socket was full (no epoll change here). */
static inline void plx_tcp_unblock(struct plx_tcp_peer *p)
{
    if (p->wblocked) {
        p->wblocked = 0;
        plx_list_remove(&p->wb_link);
        plx_tcp.nwblocked--;
    }
}

/* --- tcp_conn.c: peers, connections, handshake ------------------------------- */

/* tcp.c: the added process (of another job) a hello comes from, or -1 */
int plx_tcp_hello_other(const struct plx_tcp_hello *h);

/* The peer of lpid on rail, created on first use. */
struct plx_tcp_peer *plx_tcp_peer_get(struct plx_tcp_rail *rail, int lpid);
/* The peer's card, fetched through PMI once; NULL (and a reason) if absent. */
const struct plx_tcp_card *plx_tcp_peer_card(struct plx_tcp_peer *p, char *why, size_t whylen);
/* "rank 3 (host n2)" */
void plx_tcp_who(int lpid, char *buf, size_t len);
/* The link broke: closes it, drops the queue, reports it from the next poll. */
void plx_tcp_peer_lost(struct plx_tcp_peer *p, const char *what, int ended);
void plx_tcp_epoll_set(struct plx_tcp_conn *c, uint32_t events);
/* Options of every socket (Nagle off, buffers, keepalive and user timeout). */
void plx_tcp_sock_opts(int fd);
/* Closes; the memory is freed at the end of the poll (zombies). */
void plx_tcp_conn_close(struct plx_tcp_conn *c);
int plx_tcp_rail_cands(const struct plx_tcp_rail *r, int lpid, const struct plx_tcp_card *c,
                       struct plx_iface_ip *out);
/* The first packet to an idle peer: fetch its card and connect. */
void plx_tcp_connect_start(struct plx_tcp_peer *p);
/* epoll events of connections in a handshake state, and of the listener */
void plx_tcp_on_connected(struct plx_tcp_conn *c);
void plx_tcp_on_ack(struct plx_tcp_conn *c);
void plx_tcp_on_hello(struct plx_tcp_conn *c);
void plx_tcp_accept_all(void);
void plx_tcp_check_deadlines(void);

/* --- tcp_send.c: the send queue ---------------------------------------------- */

void plx_tcp_sbuf_free(struct plx_tcp_sbuf *b);
/* Queues v[] behind what is queued, skipping its first `skip` bytes. */
void plx_tcp_enqueue(struct plx_tcp_peer *p, const struct iovec *v, int n, size_t skip, struct plx_tp_comp *comp);
/* Writes as much of the queue as the socket takes; returns whether it wrote. */
int plx_tcp_flush(struct plx_tcp_peer *p);
plx_status_t plx_tcp_send(struct plx_tp_iface *ifc, int lpid, const struct plx_hdr *hdr, const struct iovec *iov,
                          int iovcnt);
plx_status_t plx_tcp_send_zcopy(struct plx_tp_iface *ifc, int lpid, const struct plx_hdr *hdr,
                                const struct iovec *iov, int iovcnt, struct plx_tp_comp *comp);

/* --- tcp_recv.c: the receive parser ------------------------------------------ */

/* Reads what an open connection's socket has and delivers it; returns
 * whether it found anything. */
int plx_tcp_on_readable(struct plx_tcp_conn *c);
/* Feeds n bytes of an open connection's stream through the packet parser:
 * whole packets are delivered through plx_tcp.up, a packet cut at the end
 * is kept in the connection until the next call. */
void plx_tcp_rx_feed(struct plx_tcp_conn *c, const char *buf, size_t n);

/* --- tcp.c ------------------------------------------------------------------- */

/* Finalize is done with this peer: close, drop what is queued. */
void plx_tcp_fin_close(struct plx_tcp_peer *p);
/* A packet to this process itself, delivered by the next poll. */
void plx_tcp_self_send(const struct plx_hdr *hdr, const struct iovec *iov, int iovcnt, struct plx_tp_comp *comp);
/* The connection traffic comes from lately (NULL: none). */
void plx_tcp_set_hot(struct plx_tcp_conn *c);

#pragma GCC visibility pop

#endif
