/*
 * TCP transport.
 *
 * Sockets. Each process listens on one socket (IPv6 dual-stack "::", or
 * IPv4 "0.0.0.0" where IPv6 is off; PLEXUS_TCP_PORTS picks the port) and
 * publishes its port and the addresses of the selected interfaces as its
 * business card (iface.h). A connection to a peer opens on the first packet
 * sent to it: fetch its card (PMI), try its addresses in order within one
 * budget of PLEXUS_TCP_CONNECT_TIMEOUT for the peer (each attempt gets an
 * equal share of what is left), and run the handshake of tcp_wire.h, which
 * carries the job's secret and both ranks. When two ranks connect to each
 * other at once, the lower rank's connection is kept: the higher rank adopts
 * the incoming one and drops its own; the lower answers DUPLICATE to the
 * other. A peer's packets queue on the peer (not the socket) until a
 * connection is open, so they survive that switch in order.
 *
 * Every socket is non-blocking and registered in one epoll set, level-
 * triggered for input, with EPOLLOUT only while a socket is full; poll()
 * handles only the sockets epoll reports, so idle connections cost nothing,
 * and the epoll fd is what a sleeping wait blocks on. While all traffic
 * comes from one connection (the "hot" one: ping-pong, one sender), poll
 * reads that socket directly and calls epoll_wait on every 8th poll only:
 * the read that finds a message also takes it, one syscall instead of two.
 * Once the hot connection has delivered PLX_TCP_HOT_DETACH reads in a row,
 * it also leaves the epoll set: a socket in an epoll set makes the kernel
 * run epoll's wake-up callback for every packet that arrives on it, and on
 * this VM that added about 0.3 us of CPU to each loopback send (the sender
 * runs the receive path). It rejoins the set before any wait sleeps on the
 * set, when it must wait for room to write, when another connection shows
 * traffic, and at finalize.
 *
 * Sending. With nothing queued, send() is one sendmsg of header + payload
 * (a small packet is copied together and written with send());
 * the bytes the socket does not take are copied into the peer's queue
 * (bounded by PLEXUS_TCP_SENDQ_MAX, beyond which send() says BUSY). Queued
 * packets leave together, gathered into one sendmsg, as soon as the socket
 * has room; nothing waits for more. Rendezvous DATA goes through send_zcopy:
 * the whole message is one packet whose payload is written straight from the
 * user's buffer, and the send request completes once the last byte is with
 * the kernel (plx_pt2pt_zcopy_done, reported from poll).
 *
 * Receiving. A socket is read into one buffer shared by all connections, and
 * whole packets in it are dispatched in place. Only a packet cut by the end
 * of a read moves to its connection: a short header into the connection, an
 * eager payload into a buffer of its own, and the payload of DATA, after the
 * header and its 8-byte offset, into the posted receive buffer: the
 * transport asks pt2pt where (plx_pt2pt_data_dst) and reads the rest with
 * readv straight there. Per-connection memory is thus only what a half-read
 * packet needs.
 *
 * Self-sends (when PLEXUS_TRANSPORTS=tcp leaves no shared memory between
 * the ranks of a node) go through an in-process queue delivered by poll.
 *
 * Failures. A connect or handshake that does not finish in time, a peer
 * that closes without having said BYE, or a reset, is described in a
 * message naming both ranks, their hosts and the addresses tried. When some
 * communicator holding the peer returns errors, the peer becomes FAILED
 * (connection closed, queue dropped) and the next poll hands the message to
 * plx_pt2pt_peer_failed(), which completes what depends on the peer with
 * MPIX_ERR_PROC_FAILED; otherwise the job ends with it (plx_fatal).
 * Keepalive and TCP_USER_TIMEOUT turn a vanished host into such an error
 * within PLEXUS_TCP_PEER_TIMEOUT seconds. At MPI_Finalize every connection sends BYE, flushes,
 * shuts down its sending side and drains until the peer's EOF, so no
 * close turns into a reset that could destroy data still in flight.
 *
 * Thread rules: as every transport, under the API lock, from the progress
 * engine (poll) and the point-to-point layer (send, send_zcopy).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <linux/sockios.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include "core/config.h"
#include "core/log.h"
#include "core/plexus.h"
#include "core/runtime.h"
#include "pm/pm.h"
#include "progress/progress.h"
#include "transport/tcp/iface.h"
#include "transport/tcp/tcp.h"
#include "transport/tcp/tcp_wire.h"

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
    int fin_bye, fin_shut, fin_eof;     /* finalize: BYE queued, our side shut down, theirs ended */
    /* connecting */
    struct plx_tcp_card *card;          /* fetched on first need */
    struct plx_tcp_ipaddr cand[2 + PLX_TCP_CARD_MAX_ADDRS];
    int ncand, next_cand;
    double connect_deadline;            /* the whole budget of all its addresses */
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
    struct plx_tcp_ifaddr addr;
    struct plx_tcp_peer **peers;        /* by world rank, allocated on first use */
};

struct plx_tcp_selfpkt {
    struct plx_list link;
    struct plx_hdr h;
    struct plx_tp_comp *comp;           /* zero copy DATA: the data is at zc */
    const char *zc;
    size_t plen;
    uint64_t payload[];
};

static char plx_tcp_listen_tag;         /* epoll data of the listening socket */

static struct {
    int early_ok;                       /* listener + card done */
    int initialized;
    int finalizing;
    int lfd, epfd;
    int port;
    char early_err[256];
    uint8_t secret[16];
    int have_secret;
    char host[64];
    struct plx_tcp_iface_rules rules;
    struct plx_tcp_ifaddr my[PLX_TCP_CARD_MAX_ADDRS];     /* my selected addresses */
    int nmy;
    double timeout;
    size_t eager_max, credit, sendq_max;
    struct plx_tcp_rail rails[PLX_TCP_MAX_RAILS];
    int nrails;                         /* to ranks on other nodes */
    int nlo_rails;                      /* to ranks of this node (loopback) */
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
} plx_tcp = { .lfd = -1, .epfd = -1 };

static double plx_tcp_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void plx_tcp_sockaddr_str(const struct sockaddr_storage *ss, char *buf, size_t len)
{
    char ip[INET6_ADDRSTRLEN] = "?";
    int port = 0;
    if (ss->ss_family == AF_INET) {
        const struct sockaddr_in *in = (const struct sockaddr_in *)ss;
        inet_ntop(AF_INET, &in->sin_addr, ip, sizeof ip);
        port = ntohs(in->sin_port);
        snprintf(buf, len, "%s:%d", ip, port);
    } else if (ss->ss_family == AF_INET6) {
        const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)ss;
        port = ntohs(in6->sin6_port);
        if (IN6_IS_ADDR_V4MAPPED(&in6->sin6_addr)) {    /* an IPv4 peer of the dual-stack listener */
            inet_ntop(AF_INET, in6->sin6_addr.s6_addr + 12, ip, sizeof ip);
            snprintf(buf, len, "%s:%d", ip, port);
            return;
        }
        inet_ntop(AF_INET6, &in6->sin6_addr, ip, sizeof ip);
        snprintf(buf, len, "[%s]:%d", ip, port);
    } else {
        snprintf(buf, len, "(unknown address)");
    }
}

/* --- peers, cards, messages ------------------------------------------------ */

static struct plx_tcp_peer *plx_tcp_peer_get(struct plx_tcp_rail *rail, int lpid)
{
    struct plx_tcp_peer *p = rail->peers[lpid];
    if (plx_likely(p))
        return p;
    p = plx_calloc(1, sizeof *p);
    p->lpid = lpid;
    p->rail = rail;
    plx_list_init(&p->sq);
    plx_list_init(&p->wait_link);
    plx_list_init(&p->fail_link);
    plx_list_init(&p->wb_link);
    rail->peers[lpid] = p;
    return p;
}

/* Off the list of peers whose socket was full (no epoll change here). */
static void plx_tcp_unblock(struct plx_tcp_peer *p)
{
    if (p->wblocked) {
        p->wblocked = 0;
        plx_list_remove(&p->wb_link);
        plx_tcp.nwblocked--;
    }
}

/* The peer's card, fetched through PMI once; NULL (and a reason) if absent. */
static const struct plx_tcp_card *plx_tcp_peer_card(struct plx_tcp_peer *p, char *why, size_t whylen)
{
    if (p->card)
        return p->card;
    char key[PLX_PM_MAX_KEY], val[PLX_PM_MAX_VAL];
    snprintf(key, sizeof key, "tcp-%d", p->lpid);
    if (plx_pm_get(key, val, sizeof val) != PLX_OK) {
        snprintf(why, whylen, "it published no TCP business card");
        return NULL;
    }
    struct plx_tcp_card *c = plx_malloc(sizeof *c);
    if (!strncmp(val, "none|", 5)) {
        snprintf(why, whylen, "its TCP set-up failed (%.200s)", val + 5);
        free(c);
        return NULL;
    }
    if (plx_tcp_card_parse(val, c) != 0) {
        snprintf(why, whylen, "its TCP business card is malformed: \"%.200s\"", val);
        free(c);
        return NULL;
    }
    p->card = c;
    return c;
}

/* "rank 3 (host n2)" */
static void plx_tcp_who(int lpid, char *buf, size_t len)
{
    if (lpid == plx_procs.my_lpid) {
        snprintf(buf, len, "rank %d (host %s)", lpid, plx_tcp.host);
        return;
    }
    char why[256];
    const struct plx_tcp_card *c =
        lpid >= 0 ? plx_tcp_peer_card(plx_tcp_peer_get(&plx_tcp.rails[0], lpid), why, sizeof why) : NULL;
    snprintf(buf, len, "rank %d (host %s)", lpid, c ? c->host : "unknown");
}

static void plx_tcp_fin_close(struct plx_tcp_peer *p);
static void plx_tcp_conn_close(struct plx_tcp_conn *c);
static void plx_tcp_sbuf_free(struct plx_tcp_sbuf *b);
static inline int plx_tcp_nrails_all(void);

/* " (tcp1)" in messages when the process has several rails, else "". */
static const char *plx_tcp_rail_label(const struct plx_tcp_peer *p)
{
    static const char *const label[PLX_TCP_MAX_RAILS] = { " (tcp0)", " (tcp1)", " (tcp2)", " (tcp3)" };
    return plx_tcp_nrails_all() > 1 ? label[p->rail->index] : "";
}

/* The link to the peer broke: close, drop what is queued (zero-copy
 * writes are not reported: the router sends again what it needs, or pt2pt
 * fails the sends), back to IDLE so that a later send connects again, and
 * report it to the router from the next poll. Callable from inside send:
 * nothing above runs here. */
static void plx_tcp_link_fail(struct plx_tcp_peer *p, const char *why, int ended)
{
    plx_list_remove(&p->wait_link);
    if (p->conn) {
        /* an abortive close: nothing still in the socket goes out later */
        struct linger lg = { 1, 0 };
        setsockopt(p->conn->fd, SOL_SOCKET, SO_LINGER, &lg, sizeof lg);
        plx_tcp_conn_close(p->conn);
    }
    p->conn = NULL;
    plx_tcp_unblock(p);
    while (!plx_list_empty(&p->sq)) {
        struct plx_tcp_sbuf *b = plx_list_entry(p->sq.next, struct plx_tcp_sbuf, link);
        plx_list_remove(&b->link);
        plx_tcp_sbuf_free(b);
    }
    p->sq_copied = 0;
    p->state = PLX_TCP_P_IDLE;
    if (plx_list_empty(&p->fail_link)) {
        free(p->fail_why);
        p->fail_why = plx_strdup(why);
        p->fail_ended = ended;
        plx_list_push_back(&plx_tcp.failed, &p->fail_link);
    }
}

/* The connection broke: the router hears of it (it fails over to another
 * rail, or the peer is lost), naming both ranks, hosts, the rail and the
 * address. `ended`: the peer closed or reset the connection (its process
 * may be gone), as opposed to a timeout or a corrupt stream. */
static void plx_tcp_peer_lost(struct plx_tcp_peer *p, const char *what, int ended)
{
    char me[128], him[128], addr[80] = "", msg[1024];
    plx_tcp_who(plx_procs.my_lpid, me, sizeof me);
    plx_tcp_who(p->lpid, him, sizeof him);
    if (p->bye)
        plx_fatal("tcp: %s sends to %s, which has already finalized", me, him);
    if (p->conn)
        plx_tcp_sockaddr_str(&p->conn->addr, addr, sizeof addr);
    snprintf(msg, sizeof msg, "tcp: connection between %s and %s at %s%s lost: %s. The peer process died, or "
             "its host or the network between them went down", me, him, addr[0] ? addr : "?", plx_tcp_rail_label(p),
             what);
    plx_tcp_link_fail(p, msg, ended);
}

/* --- epoll and connections ---------------------------------------------------- */

static void plx_tcp_epoll_set(struct plx_tcp_conn *c, uint32_t events)
{
    if (c->in_epoll && c->events == events)
        return;
    struct epoll_event ev = { .events = events, .data.ptr = c };
    int op = c->in_epoll ? EPOLL_CTL_MOD : EPOLL_CTL_ADD;
    if (epoll_ctl(plx_tcp.epfd, op, c->fd, &ev) != 0)
        plx_fatal("tcp: epoll_ctl: %s", strerror(errno));
    c->in_epoll = 1;
    c->events = events;
}

/* Rails in use: to other nodes, or over loopback to this node's ranks. */
static inline int plx_tcp_nrails_all(void)
{
    return PLX_MAX(plx_tcp.nrails, plx_tcp.nlo_rails);
}

static void plx_tcp_sock_opts(int fd)
{
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    if (plx_config.tcp_sockbuf) {
        int b = (int)PLX_MIN(plx_config.tcp_sockbuf, (size_t)INT_MAX);
        setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &b, sizeof b);
        setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &b, sizeof b);
    }
    /* A host that vanishes sends neither FIN nor RST: keepalive probes find
     * it on an idle connection, the user timeout when data stays unacked;
     * both within PLEXUS_TCP_PEER_TIMEOUT (idle T/2, then 3 probes T/6 apart). */
    int t = plx_config.tcp_peer_timeout;
    if (plx_tcp_nrails_all() > 1 && plx_config.tcp_rail_timeout > 0)
        t = plx_config.tcp_rail_timeout;    /* a silent rail fails over quickly */
    if (t <= 0)
        return;
    int idle = PLX_MAX(1, t / 2), intvl = PLX_MAX(1, t / 4), cnt = 2;
    unsigned utimeout = (unsigned)t * 1000u;
    setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof one);
    setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof idle);
    setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &intvl, sizeof intvl);
    setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &cnt, sizeof cnt);
    setsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &utimeout, sizeof utimeout);
}

static struct plx_tcp_conn *plx_tcp_conn_new(int fd, int state, int lpid)
{
    struct plx_tcp_conn *c = plx_calloc(1, sizeof *c);
    c->fd = fd;
    c->state = state;
    c->lpid = lpid;
    plx_list_init(&c->link);
    return c;
}

/* The hot connection back into the epoll set, with the interest it had. */
static void plx_tcp_hot_attach(void)
{
    struct plx_tcp_conn *c = plx_tcp.hot;
    if (!c)
        return;
    c->hot_hits = 0;
    if (!c->in_epoll && c->state == PLX_TCP_C_OPEN)
        plx_tcp_epoll_set(c, c->events);
}

static void plx_tcp_set_hot(struct plx_tcp_conn *c)
{
    if (plx_tcp.hot == c)
        return;
    plx_tcp_hot_attach();
    plx_tcp.hot = c;
    if (c)
        c->hot_hits = 0;
}

/* Out of the epoll set while it stays hot (see the top of this file). */
static void plx_tcp_hot_detach(struct plx_tcp_conn *c)
{
    if (epoll_ctl(plx_tcp.epfd, EPOLL_CTL_DEL, c->fd, NULL) == 0)
        c->in_epoll = 0;
}

static void plx_tcp_conn_close(struct plx_tcp_conn *c)
{
    if (c->state == PLX_TCP_C_DEAD)
        return;
    if (c->state == PLX_TCP_C_ACCEPTED)
        plx_tcp.naccepting--;
    if (plx_tcp.hot == c)
        plx_tcp.hot = NULL;     /* (no rejoining: the fd is about to close) */
    plx_list_remove(&c->link);
    close(c->fd);               /* also leaves the epoll set */
    c->fd = -1;
    if (c->rx == PLX_TCP_RX_PAYLOAD)
        free(c->rbuf);
    c->rbuf = NULL;
    c->state = PLX_TCP_C_DEAD;
    /* an event for it may still be in this poll's batch */
    plx_list_push_back(&plx_tcp.zombies, &c->link);
}

/* Into the handshaking list, kept in deadline order: accepted connections
 * get the whole timeout, our attempts a share of their peer's budget, so an
 * attempt usually goes last or near it (the walk starts at the tail). */
static void plx_tcp_handshaking(struct plx_tcp_conn *c, double allowed)
{
    c->allowed = allowed;
    c->deadline = plx_tcp_now() + allowed;
    plx_list_remove(&c->link);
    struct plx_list *pos = plx_tcp.handshaking.prev;
    while (pos != &plx_tcp.handshaking && plx_list_entry(pos, struct plx_tcp_conn, link)->deadline > c->deadline)
        pos = pos->prev;
    plx_list_push_front(pos, &c->link);     /* after pos */
}

/* --- the send queue ------------------------------------------------------------ */

static struct plx_tcp_sbuf *plx_tcp_sbuf_new(size_t copied)
{
    struct plx_tcp_sbuf *b;
    if (copied <= PLX_TCP_SMALL && !plx_list_empty(&plx_tcp.small_free)) {
        b = plx_list_entry(plx_tcp.small_free.next, struct plx_tcp_sbuf, link);
        plx_list_remove(&b->link);
        plx_tcp.nsmall_free--;
    } else {
        size_t cap = copied <= PLX_TCP_SMALL ? PLX_TCP_SMALL : copied;
        b = plx_malloc(sizeof *b + cap);
        b->cap = cap;
    }
    plx_list_init(&b->link);
    b->comp = NULL;
    b->zc = NULL;
    b->zc_len = 0;
    b->copied = copied;
    b->done = 0;
    return b;
}

static void plx_tcp_sbuf_free(struct plx_tcp_sbuf *b)
{
    if (b->cap == PLX_TCP_SMALL && plx_tcp.nsmall_free < PLX_TCP_SMALL_KEEP) {
        plx_list_push_back(&plx_tcp.small_free, &b->link);
        plx_tcp.nsmall_free++;
        return;
    }
    free(b);
}

/* Copies v[], skipping its first `skip` bytes, into a new queue entry; a
 * zero-copy packet keeps its last entry by reference. */
static void plx_tcp_enqueue(struct plx_tcp_peer *p, const struct iovec *v, int n, size_t skip,
                            struct plx_tp_comp *comp)
{
    int ncopy = comp ? n - 1 : n;
    size_t copied = 0;
    for (int i = 0; i < ncopy; i++)
        copied += v[i].iov_len;
    size_t cskip = PLX_MIN(skip, copied);
    struct plx_tcp_sbuf *b = plx_tcp_sbuf_new(copied - cskip);
    size_t off = 0, pos = 0;
    for (int i = 0; i < ncopy; i++) {
        size_t len = v[i].iov_len;
        if (pos + len > cskip) {
            size_t from = cskip > pos ? cskip - pos : 0;
            memcpy(b->data + off, (const char *)v[i].iov_base + from, len - from);
            off += len - from;
        }
        pos += len;
    }
    if (comp) {
        size_t zskip = skip - cskip;
        b->comp = comp;
        b->zc = (const char *)v[n - 1].iov_base + zskip;
        b->zc_len = v[n - 1].iov_len - zskip;
    }
    p->sq_copied += b->copied;
    plx_list_push_back(&p->sq, &b->link);
}

static void plx_tcp_zc_done_push(struct plx_tp_comp *comp)
{
    if (plx_tcp.nzc_done == plx_tcp.zc_cap) {
        plx_tcp.zc_cap = plx_tcp.zc_cap ? 2 * plx_tcp.zc_cap : 64;
        plx_tcp.zc_done = realloc(plx_tcp.zc_done, plx_tcp.zc_cap * sizeof *plx_tcp.zc_done);
        if (!plx_tcp.zc_done)
            plx_fatal("tcp: out of memory");
    }
    plx_tcp.zc_done[plx_tcp.nzc_done++] = comp;
}

static void plx_tcp_fin_close(struct plx_tcp_peer *p);

/* Writes the n pieces of v (total bytes) to p's socket; returns the bytes
 * written (0 when the socket is full). A broken connection fails the peer
 * (or ends the job): p->conn is NULL after it. A small total is first
 * copied into one buffer and written with send(): sendmsg's import of the
 * iovec costs more than the copy (measured, 0-16 B ping-pong on loopback,
 * Plexus over raw sockets in one pair of processes: 1.10 -> 1.07). */
static size_t plx_tcp_writev(struct plx_tcp_peer *p, const struct iovec *v, int n, size_t total)
{
    struct msghdr m = { .msg_iov = (struct iovec *)v, .msg_iovlen = (size_t)n };
    char small[PLX_TCP_SEND_COPY_MAX];
    int copy = total <= sizeof small;
    if (copy) {
        size_t off = 0;
        for (int i = 0; i < n; i++) {
            memcpy(small + off, v[i].iov_base, v[i].iov_len);
            off += v[i].iov_len;
        }
    }
    for (;;) {
        ssize_t w = copy ? send(p->conn->fd, small, total, MSG_NOSIGNAL | MSG_DONTWAIT)
                         : sendmsg(p->conn->fd, &m, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (plx_likely(w >= 0))
            return (size_t)w;
        if (errno == EAGAIN || errno == EWOULDBLOCK)
            return 0;
        if (errno == EINTR)
            continue;
        if (plx_tcp.finalizing) {
            plx_tcp_fin_close(p);
            return 0;
        }
        plx_tcp_peer_lost(p, strerror(errno), errno == EPIPE || errno == ECONNRESET);
        return 0;               /* failed: p->conn is NULL now */
    }
}

static void plx_tcp_block(struct plx_tcp_peer *p)
{
    if (!p->wblocked) {
        plx_list_push_back(&plx_tcp.wblocked, &p->wb_link);
        plx_tcp.nwblocked++;
    }
    p->wblocked = 1;
    plx_tcp_epoll_set(p->conn, EPOLLIN | EPOLLOUT);
}

/* Writes as much of the queue as the socket takes, many packets per call. */
static int plx_tcp_flush(struct plx_tcp_peer *p)
{
    int work = 0;
    while (!plx_list_empty(&p->sq)) {
        struct iovec v[PLX_TCP_MAX_IOV];
        int n = 0;
        size_t want = 0;
        struct plx_list *pos;
        plx_list_for_each(pos, &p->sq) {
            if (n > PLX_TCP_MAX_IOV - 2)
                break;
            struct plx_tcp_sbuf *b = plx_list_entry(pos, struct plx_tcp_sbuf, link);
            if (b->done < b->copied) {
                v[n].iov_base = b->data + b->done;
                v[n++].iov_len = b->copied - b->done;
                want += b->copied - b->done;
                if (b->zc_len) {
                    v[n].iov_base = (void *)b->zc;
                    v[n++].iov_len = b->zc_len;
                    want += b->zc_len;
                }
            } else {
                size_t zoff = b->done - b->copied;
                v[n].iov_base = (void *)(b->zc + zoff);
                v[n++].iov_len = b->zc_len - zoff;
                want += b->zc_len - zoff;
            }
        }
        size_t w = plx_tcp_writev(p, v, n, want);
        if (plx_unlikely(!p->conn))
            return work;        /* finalize: the peer is gone, queue dropped */
        work += w > 0;
        size_t left = w;
        while (!plx_list_empty(&p->sq)) {
            struct plx_tcp_sbuf *b = plx_list_entry(p->sq.next, struct plx_tcp_sbuf, link);
            size_t rem = b->copied + b->zc_len - b->done;
            if (left < rem) {
                b->done += left;
                break;
            }
            left -= rem;
            plx_list_remove(&b->link);
            p->sq_copied -= b->copied;
            if (b->comp)
                plx_tcp_zc_done_push(b->comp);
            plx_tcp_sbuf_free(b);
        }
        if (w < want) {
            plx_tcp_block(p);
            return work;
        }
    }
    if (p->wblocked) {
        plx_tcp_unblock(p);
        plx_tcp_epoll_set(p->conn, EPOLLIN);
    }
    return work;
}

/* --- connecting ----------------------------------------------------------------- */

static void plx_tcp_try_next(struct plx_tcp_peer *p);
static void plx_tcp_fin_close(struct plx_tcp_peer *p);

static void plx_tcp_tried(struct plx_tcp_peer *p, const struct sockaddr_storage *ss, const char *why)
{
    char a[80];
    plx_tcp_sockaddr_str(ss, a, sizeof a);
    size_t l = strlen(p->tried);
    snprintf(p->tried + l, sizeof p->tried - l, "%s%s (%s)", l ? ", " : "", a, why);
    plx_debug(2, "tcp: connecting to rank %d at %s failed: %s", p->lpid, a, why);
}

/* Fails the peer or ends the job (plx_tcp_peer_lost); while finalizing,
 * only gives up on it. */
static void plx_tcp_connect_failed(struct plx_tcp_peer *p, const char *why)
{
    if (plx_tcp.finalizing) {
        plx_debug(1, "tcp: at finalize, cannot connect to rank %d (%s); dropping what was queued", p->lpid, why);
        plx_tcp_fin_close(p);
        return;
    }
    char me[128], him[128], msg[1024];
    plx_tcp_who(plx_procs.my_lpid, me, sizeof me);
    plx_tcp_who(p->lpid, him, sizeof him);
    int len = snprintf(msg, sizeof msg,
                       "tcp: %s cannot connect to %s%s: %s%s%s. Check that the hosts reach each other at these "
                       "addresses; PLEXUS_IFACES chooses the interfaces, PLEXUS_TCP_PORTS the ports (firewalls), "
                       "PLEXUS_TCP_CONNECT_TIMEOUT the time allowed",
                       me, him, plx_tcp_rail_label(p), why, p->tried[0] ? "; tried " : "", p->tried);
    if (len >= (int)sizeof msg)
        plx_debug(1, "tcp: the connect failure message was cut at %zu bytes", sizeof msg - 1);
    plx_tcp_link_fail(p, msg, 0);
}

static void plx_tcp_send_hello(struct plx_tcp_peer *p, struct plx_tcp_conn *c)
{
    struct plx_tcp_hello h = {
        .magic = PLX_TCP_MAGIC,
        .version = PLX_TCP_VERSION,
        .hdr_size = PLX_TCP_HDR,
        .src = plx_procs.my_lpid,
        .dst = p->lpid,
        .size = (uint32_t)plx_procs.n,
        .rail = (uint32_t)p->rail->index,
    };
    memcpy(h.secret, plx_tcp.secret, 16);
    /* A new socket's send buffer is empty: 40 bytes always fit at once. */
    ssize_t w = send(c->fd, &h, sizeof h, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (w != (ssize_t)sizeof h) {
        plx_tcp_tried(p, &c->addr, w < 0 ? strerror(errno) : "short write of the handshake");
        plx_tcp_conn_close(c);
        p->conn = NULL;
        plx_tcp_try_next(p);
        return;
    }
    c->state = PLX_TCP_C_HELLO_SENT;
    c->hs_got = 0;
    plx_tcp_epoll_set(c, EPOLLIN);
}

/* Starts a connection to the next candidate address; fails the peer (or
 * ends the job) when none is left or its time is up. PLEXUS_TCP_CONNECT_TIMEOUT
 * is the budget of the peer, not of each address: an attempt gets an equal
 * share of what is left among the addresses still to try, and one that
 * fails at once (refused, no route) leaves its share to the others. */
static void plx_tcp_try_next(struct plx_tcp_peer *p)
{
    while (p->next_cand < p->ncand) {
        double left = p->connect_deadline - plx_tcp_now();
        if (left <= 0) {
            char why[96];
            snprintf(why, sizeof why, "no address answered within %g s", plx_tcp.timeout);
            plx_tcp_connect_failed(p, why);
            return;
        }
        double allowed = left / (p->ncand - p->next_cand);
        const struct plx_tcp_ipaddr *a = &p->cand[p->next_cand++];
        struct sockaddr_storage ss;
        socklen_t len = plx_tcp_ip_sockaddr(a, p->card->port, &ss);
        int fd = socket(a->family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (fd < 0) {
            plx_tcp_tried(p, &ss, strerror(errno));
            if (errno == EMFILE || errno == ENFILE) {
                plx_tcp_connect_failed(p, "out of file descriptors (raise ulimit -n)");
                return;
            }
            continue;
        }
        plx_tcp_sock_opts(fd);
        struct plx_tcp_ipaddr from = { 0 };
        if (p->rail->has_addr && a->family == p->rail->addr.a.family) {
            from = p->rail->addr.a;             /* out through this rail's interface */
        } else if (p->rail->index > 0 && a->family == AF_INET && a->b[0] == 127) {
            /* a loopback rail: from 127.0.0.<1 + rail>, so that each rail's
             * connections can be told apart (and cut, in tests) */
            from.family = AF_INET;
            from.b[0] = 127;
            from.b[3] = (uint8_t)(1 + p->rail->index);
        }
        if (from.family) {
            struct sockaddr_storage me;
            socklen_t melen = plx_tcp_ip_sockaddr(&from, 0, &me);
            if (bind(fd, (struct sockaddr *)&me, melen) != 0)
                plx_debug(1, "tcp: %s: cannot bind to its address: %s", p->rail->ifc.name, strerror(errno));
        }
        struct plx_tcp_conn *c = plx_tcp_conn_new(fd, PLX_TCP_C_CONNECTING, p->lpid);
        c->peer = p;
        c->addr = ss;
        c->addrlen = len;
        p->conn = c;
        p->state = PLX_TCP_P_CONNECTING;
        plx_tcp_handshaking(c, allowed);
        int r;
        do
            r = connect(fd, (struct sockaddr *)&ss, len);
        while (r != 0 && errno == EINTR);
        if (r == 0) {
            plx_tcp_epoll_set(c, EPOLLIN);
            plx_tcp_send_hello(p, c);
            return;
        }
        if (errno == EINPROGRESS) {
            plx_tcp_epoll_set(c, EPOLLOUT);
            return;
        }
        plx_tcp_tried(p, &ss, strerror(errno));
        plx_tcp_conn_close(c);
        p->conn = NULL;
    }
    plx_tcp_connect_failed(p, p->ncand ? "no address worked" : "it has no address this host may use");
}

/* Does a share a subnet with one of my addresses? Orders attempts only. */
static int plx_tcp_near(const struct plx_tcp_ipaddr *a)
{
    for (int i = 0; i < plx_tcp.nmy; i++)
        if (plx_tcp_ip_in_cidr(a, &plx_tcp.my[i].a, plx_tcp.my[i].prefix))
            return 1;
    return 0;
}

/* The addresses of card c that rail r tries, in order, into out (room for
 * 2 + PLX_TCP_CARD_MAX_ADDRS); returns how many. To a rank of this node:
 * loopback first, then the others (rail 0), or loopback only (the other
 * loopback rails). Elsewhere, a rail bound to an interface tries the peer's
 * addresses in that interface's subnet; if no rail shares a subnet with the
 * peer (a routed network), rail 0 tries them all, nearest first. */
static int plx_tcp_rail_cands(const struct plx_tcp_rail *r, int lpid, const struct plx_tcp_card *c,
                              struct plx_tcp_ipaddr *out)
{
    int n = 0;
    if (plx_procs.p[lpid].node_id == plx_procs.my_node) {
        if (r->index >= plx_tcp.nlo_rails)
            return 0;
        for (int i = 0; i < c->nlo; i++)
            out[n++] = c->lo[i];
        if (r->index > 0 && n)
            return n;
        for (int near = 1; near >= 0; near--)
            for (int i = 0; i < c->naddr; i++)
                if (plx_tcp_near(&c->addr[i]) == near)
                    out[n++] = c->addr[i];
        return n;
    }
    int shared = 0;
    for (int k = 0; k < plx_tcp.nrails; k++) {
        const struct plx_tcp_rail *o = &plx_tcp.rails[k];
        for (int i = 0; o->has_addr && i < c->naddr; i++) {
            if (!plx_tcp_ip_in_cidr(&c->addr[i], &o->addr.a, o->addr.prefix))
                continue;
            shared = 1;
            if (o == r)
                out[n++] = c->addr[i];
        }
    }
    if (shared || r->index != 0)
        return n;
    for (int near = 1; near >= 0; near--)
        for (int i = 0; i < c->naddr; i++)
            if (plx_tcp_near(&c->addr[i]) == near)
                out[n++] = c->addr[i];
    return n;
}

static void plx_tcp_connect_start(struct plx_tcp_peer *p)
{
    char why[300];
    const struct plx_tcp_card *c = plx_tcp_peer_card(p, why, sizeof why);
    if (!c) {
        plx_tcp_connect_failed(p, why);
        return;
    }
    p->ncand = plx_tcp_rail_cands(p->rail, p->lpid, c, p->cand);
    p->next_cand = 0;
    p->tried[0] = 0;
    p->connect_deadline = plx_tcp_now() + plx_tcp.timeout;
    plx_debug(2, "tcp: %s: connecting to rank %d (host %s, %d addresses)", p->rail->ifc.name, p->lpid, c->host,
              p->ncand);
    plx_tcp_try_next(p);
}

static void plx_tcp_peer_open(struct plx_tcp_peer *p, struct plx_tcp_conn *c)
{
    plx_list_remove(&c->link);
    if (c->state == PLX_TCP_C_ACCEPTED)
        plx_tcp.naccepting--;
    c->state = PLX_TCP_C_OPEN;
    c->lpid = p->lpid;
    c->peer = p;
    c->rx = PLX_TCP_RX_HDR;
    c->rhdr_got = 0;
    p->conn = c;
    p->state = PLX_TCP_P_OPEN;
    plx_tcp_unblock(p);
    plx_list_remove(&p->wait_link);
    plx_tcp_epoll_set(c, EPOLLIN);
    if (plx_log_debug >= 2) {
        char a[80];
        plx_tcp_sockaddr_str(&c->addr, a, sizeof a);
        plx_debug(2, "tcp: %s: connection with rank %d open (%s)", p->rail->ifc.name, p->lpid, a);
    }
    plx_tcp.up->link_up(&p->rail->ifc, p->lpid);
    plx_tcp_flush(p);
}

/* Our connection is writable: connected, or failed. */
static void plx_tcp_on_connected(struct plx_tcp_conn *c)
{
    struct plx_tcp_peer *p = c->peer;
    int err = 0;
    socklen_t el = sizeof err;
    getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &el);
    if (err) {
        plx_tcp_tried(p, &c->addr, strerror(err));
        plx_tcp_conn_close(c);
        p->conn = NULL;
        plx_tcp_try_next(p);
        return;
    }
    plx_tcp_send_hello(p, c);
}

/* The acceptor answered our hello. */
static void plx_tcp_on_ack(struct plx_tcp_conn *c)
{
    struct plx_tcp_peer *p = c->peer;
    ssize_t r = recv(c->fd, c->hs.b + c->hs_got, sizeof c->hs.ack - c->hs_got, 0);
    if (r < 0 && (errno == EAGAIN || errno == EINTR))
        return;
    if (r <= 0) {
        plx_tcp_tried(p, &c->addr, r == 0 ? "closed during the handshake: not a rank of this job"
                                          : strerror(errno));
        plx_tcp_conn_close(c);
        p->conn = NULL;
        plx_tcp_try_next(p);
        return;
    }
    c->hs_got += (size_t)r;
    if (c->hs_got < sizeof c->hs.ack)
        return;
    const struct plx_tcp_ack *a = &c->hs.ack;
    if (a->magic != PLX_TCP_MAGIC || a->version != PLX_TCP_VERSION || a->status == PLX_TCP_ACK_WRONG_PEER ||
        (a->status == PLX_TCP_ACK_ACCEPT && a->rank != p->lpid)) {
        plx_tcp_tried(p, &c->addr, "answered by another process");
        plx_tcp_conn_close(c);
        p->conn = NULL;
        plx_tcp_try_next(p);
        return;
    }
    if (a->status == PLX_TCP_ACK_DUPLICATE) {
        /* the peer's own connection to us wins; it is on its way */
        plx_debug(2, "tcp: rank %d keeps its own connection to us", p->lpid);
        plx_tcp_conn_close(c);
        p->conn = NULL;
        p->state = PLX_TCP_P_WAIT_PEER;
        p->wait_deadline = plx_tcp_now() + plx_tcp.timeout;
        plx_list_push_back(&plx_tcp.waiting, &p->wait_link);
        return;
    }
    plx_tcp_peer_open(p, c);
}

/* Closes an accepted connection that did not pass the handshake. `quiet`:
 * nothing suspicious (it sent nothing, or is a rank of this job that chose
 * the wrong address): logged at PLEXUS_DEBUG=1 only. A rank that drops its
 * own attempt because the peer's connection won closes it this way too. */
static void plx_tcp_refuse(struct plx_tcp_conn *c, const char *why, int quiet)
{
    char a[80];
    plx_tcp_sockaddr_str(&c->addr, a, sizeof a);
    if (quiet) {
        plx_debug(1, "tcp: closed a connection from %s: %s", a, why);
        plx_tcp_conn_close(c);
        return;
    }
    /* logged: a stranger at the port is worth knowing about; but only the
     * first few always, so a scanner cannot flood the job's output */
    if (++plx_tcp.nrefused <= PLX_TCP_REFUSALS_WARNED)
        plx_warn("tcp: refused a connection from %s: %s%s", a, why,
                 plx_tcp.nrefused == PLX_TCP_REFUSALS_WARNED ? " (further refusals only with PLEXUS_DEBUG=1)" : "");
    else
        plx_debug(1, "tcp: refused a connection from %s: %s", a, why);
    plx_tcp_conn_close(c);
}

static void plx_tcp_answer(struct plx_tcp_conn *c, int status)
{
    struct plx_tcp_ack a = { .magic = PLX_TCP_MAGIC, .version = PLX_TCP_VERSION, .status = (uint16_t)status,
                             .rank = plx_procs.my_lpid };
    /* 16 bytes into a new socket: never partial; if the peer is gone, it
     * does not matter */
    (void)send(c->fd, &a, sizeof a, MSG_NOSIGNAL | MSG_DONTWAIT);
}

/* The rail of an accepted connection: the one whose address it arrived
 * at, else (loopback rails, or an address no rail owns) the connector's
 * rail number. */
static struct plx_tcp_rail *plx_tcp_accepted_rail(struct plx_tcp_conn *c, const struct plx_tcp_hello *h)
{
    struct sockaddr_storage ss;
    socklen_t sl = sizeof ss;
    if (getsockname(c->fd, (struct sockaddr *)&ss, &sl) == 0) {
        struct plx_tcp_ipaddr a = { 0 };
        if (ss.ss_family == AF_INET) {
            a.family = AF_INET;
            memcpy(a.b, &((struct sockaddr_in *)&ss)->sin_addr, 4);
        } else if (ss.ss_family == AF_INET6) {
            const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)&ss;
            if (IN6_IS_ADDR_V4MAPPED(&in6->sin6_addr)) {
                a.family = AF_INET;
                memcpy(a.b, in6->sin6_addr.s6_addr + 12, 4);
            } else {
                a.family = AF_INET6;
                memcpy(a.b, &in6->sin6_addr, 16);
            }
        }
        for (int k = 0; k < plx_tcp.nrails; k++) {
            const struct plx_tcp_rail *r = &plx_tcp.rails[k];
            if (r->has_addr && r->addr.a.family == a.family && !memcmp(r->addr.a.b, a.b, sizeof a.b))
                return &plx_tcp.rails[k];
        }
    }
    int n = PLX_MAX(plx_tcp.nrails, plx_tcp.nlo_rails);
    return &plx_tcp.rails[h->rail < (uint32_t)n ? h->rail : 0];
}

/* Reads the hello of an accepted connection and decides. */
static void plx_tcp_on_hello(struct plx_tcp_conn *c)
{
    ssize_t r = recv(c->fd, c->hs.b + c->hs_got, sizeof c->hs.hello - c->hs_got, 0);
    if (r < 0 && (errno == EAGAIN || errno == EINTR))
        return;
    if (r <= 0) {
        plx_tcp_refuse(c, r == 0 ? "closed before completing the handshake" : strerror(errno), c->hs_got == 0);
        return;
    }
    c->hs_got += (size_t)r;
    if (c->hs_got < sizeof c->hs.hello) {
        /* a stranger that sent something else is turned away at once */
        if (c->hs_got >= sizeof c->hs.hello.magic && c->hs.hello.magic != PLX_TCP_MAGIC)
            plx_tcp_refuse(c, "not a Plexus handshake (or another version)", 0);
        return;
    }
    const struct plx_tcp_hello *h = &c->hs.hello;
    switch (plx_tcp_hello_check(h, plx_tcp.secret, plx_procs.my_lpid, plx_procs.n, PLX_TCP_HDR)) {
    case PLX_TCP_HELLO_OK:
        break;
    case PLX_TCP_HELLO_BAD_MAGIC:
        plx_tcp_refuse(c, "not a Plexus handshake (or another version)", 0);
        return;
    case PLX_TCP_HELLO_BAD_SECRET:
        plx_tcp_refuse(c, "wrong job secret", 0);
        return;
    case PLX_TCP_HELLO_BAD_RANK:
        plx_tcp_refuse(c, "rank or job size out of range", 0);
        return;
    default:
        /* this job, misdirected: let it try its next address */
        plx_tcp_answer(c, PLX_TCP_ACK_WRONG_PEER);
        plx_tcp_refuse(c, "meant for another rank", 1);
        return;
    }
    struct plx_tcp_peer *p = plx_tcp_peer_get(plx_tcp_accepted_rail(c, h), h->src);
    int keep_ours = p->state == PLX_TCP_P_OPEN || p->state == PLX_TCP_P_CLOSED ||
                    (p->state == PLX_TCP_P_CONNECTING && plx_procs.my_lpid < p->lpid);
    if (keep_ours) {
        plx_debug(2, "tcp: rank %d connected while we connect to it; the lower rank's connection stays",
                  p->lpid);
        plx_tcp_answer(c, PLX_TCP_ACK_DUPLICATE);
        plx_tcp_conn_close(c);
        return;
    }
    if (p->state == PLX_TCP_P_CONNECTING) {     /* theirs wins: drop our attempt */
        plx_tcp_conn_close(p->conn);
        p->conn = NULL;
    }
    plx_tcp_answer(c, PLX_TCP_ACK_ACCEPT);
    plx_tcp_peer_open(p, c);
}

/* Accepts what the backlog holds, but keeps at most PLX_TCP_MAX_HANDSHAKES
 * connections in their handshake: beyond that the rest wait in the kernel's
 * backlog (the listener stays readable) instead of being turned away, so a
 * burst of peers, or strangers holding slots until their timeout, only
 * delays connections. */
static void plx_tcp_accept_all(void)
{
    while (plx_tcp.naccepting < PLX_TCP_MAX_HANDSHAKES) {
        struct sockaddr_storage ss;
        socklen_t len = sizeof ss;
        int fd = accept4(plx_tcp.lfd, (struct sockaddr *)&ss, &len, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) {
            if (errno == EINTR || errno == ECONNABORTED)
                continue;
            if (errno == EMFILE || errno == ENFILE)
                plx_warn("tcp: cannot accept a connection: %s (raise ulimit -n)", strerror(errno));
            return;
        }
        struct plx_tcp_conn *c = plx_tcp_conn_new(fd, PLX_TCP_C_ACCEPTED, -1);
        c->addr = ss;
        c->addrlen = len;
        plx_tcp.naccepting++;
        plx_tcp_sock_opts(fd);
        plx_tcp_handshaking(c, plx_tcp.timeout);
        plx_tcp_epoll_set(c, EPOLLIN);
    }
}

/* Both lists are in deadline order (handshaking: sorted on insertion;
 * waiting: one timeout, appended as they start), so only expired entries at
 * their heads are looked at. */
static void plx_tcp_check_deadlines(void)
{
    double now = plx_tcp_now();
    struct plx_list *pos, *n;
    plx_list_for_each_safe(pos, n, &plx_tcp.handshaking) {
        struct plx_tcp_conn *c = plx_list_entry(pos, struct plx_tcp_conn, link);
        if (now < c->deadline)
            break;
        if (c->state == PLX_TCP_C_ACCEPTED) {
            plx_tcp_refuse(c, "no handshake in time", 0);
            continue;
        }
        struct plx_tcp_peer *p = c->peer;
        char why[64];
        snprintf(why, sizeof why, "%s timed out after %.3g s",
                 c->state == PLX_TCP_C_CONNECTING ? "connect" : "handshake", c->allowed);
        plx_tcp_tried(p, &c->addr, why);
        plx_tcp_conn_close(c);
        p->conn = NULL;
        plx_tcp_try_next(p);
    }
    plx_list_for_each_safe(pos, n, &plx_tcp.waiting) {
        struct plx_tcp_peer *p = plx_list_entry(pos, struct plx_tcp_peer, wait_link);
        if (now < p->wait_deadline)
            break;
        plx_list_remove(&p->wait_link);
        plx_tcp_connect_failed(p, "it kept its own connection to us (the lower rank's wins) but that "
                                  "connection never arrived");
    }
}

/* --- receiving ---------------------------------------------------------------------- */

static void plx_tcp_rx_reset(struct plx_tcp_conn *c)
{
    c->rx = PLX_TCP_RX_HDR;
    c->rhdr_got = 0;
    c->rbuf = NULL;
}

static void plx_tcp_rx_packet(struct plx_tcp_conn *c, const struct plx_hdr *h, const void *payload)
{
    c->last_data = 0;
    if (plx_unlikely(h->type == PLX_TCP_PKT_BYE)) {
        c->peer->bye = 1;
        return;
    }
    /* control payloads are read through struct pointers: align them */
    uint64_t aligned[32];
    if (plx_unlikely(((uintptr_t)payload & 7) && h->type != PLX_PKT_EAGER && h->len <= sizeof aligned)) {
        memcpy(aligned, payload, h->len);
        payload = aligned;
    }
    plx_tcp.up->recv[h->type](&c->peer->rail->ifc, c->lpid, h, payload);
}

static void plx_tcp_rx_corrupt(struct plx_tcp_conn *c, const struct plx_hdr *h)
{
    char what[128];
    snprintf(what, sizeof what, "the stream is corrupt (packet type %u, length %llu)", h->type,
             (unsigned long long)h->len);
    plx_tcp_peer_lost(c->peer, what, 0);
}

static inline int plx_tcp_hdr_ok(const struct plx_hdr *h)
{
    if (h->type == PLX_PKT_DATA)
        return 1;
    return ((h->type >= PLX_PKT_EAGER && h->type < PLX_PKT_TYPE_MAX) || h->type == PLX_TCP_PKT_BYE) &&
           h->len <= PLX_TCP_MAX_PAYLOAD;
}

static void plx_tcp_rx_data_done(struct plx_tcp_conn *c)
{
    struct plx_hdr h = c->rh;
    plx_tcp_rx_reset(c);
    c->last_data = 1;
    plx_tcp.up->placed(&c->peer->rail->ifc, c->lpid, &h);
}

/* Header complete: set up the payload. DATA goes where the layer above
 * says (the posted receive buffer). */
static void plx_tcp_rx_start(struct plx_tcp_conn *c)
{
    const struct plx_hdr *h = &c->rh;
    if (h->type == PLX_PKT_DATA) {
        size_t n = h->len, fit;
        char *dst = plx_tcp.up->place(&c->peer->rail->ifc, c->lpid, h, &fit);
        if (n == 0) {
            plx_tcp_rx_data_done(c);
            return;
        }
        c->rbuf = dst;
        c->rlen = fit;
        c->rgot = 0;
        c->rdiscard = n - fit;
        c->rx = fit ? PLX_TCP_RX_DIRECT : PLX_TCP_RX_DISCARD;
        return;
    }
    if (h->len == 0) {
        struct plx_hdr hh = *h;
        plx_tcp_rx_reset(c);
        plx_tcp_rx_packet(c, &hh, NULL);
        return;
    }
    c->rbuf = NULL;             /* allocated only if the payload is cut by a read */
    c->rlen = h->len;
    c->rgot = 0;
    c->rx = PLX_TCP_RX_PAYLOAD;
}

/* Bytes of the payload being read went straight to their place. */
static void plx_tcp_rx_placed(struct plx_tcp_conn *c, size_t n)
{
    c->rgot += n;
    if (c->rgot < c->rlen)
        return;
    if (c->rx == PLX_TCP_RX_DIRECT) {
        if (c->rdiscard)
            c->rx = PLX_TCP_RX_DISCARD;
        else
            plx_tcp_rx_data_done(c);
        return;
    }
    struct plx_hdr h = c->rh;
    char *buf = c->rbuf;
    plx_tcp_rx_reset(c);
    plx_tcp_rx_packet(c, &h, buf);
    free(buf);
}

/* Feeds n bytes read into the shared buffer through the packet parser. */
static void plx_tcp_rx_feed(struct plx_tcp_conn *c, const char *buf, size_t n)
{
    while (n && c->state == PLX_TCP_C_OPEN) {
        switch (c->rx) {
        case PLX_TCP_RX_HDR: {
            if (c->rhdr_got == 0 && n >= PLX_TCP_HDR) {
                struct plx_hdr h;
                memcpy(&h, buf, sizeof h);
                if (h.type != PLX_PKT_DATA && h.len <= n - PLX_TCP_HDR) {   /* whole: in place */
                    if (plx_unlikely(!plx_tcp_hdr_ok(&h))) {
                        plx_tcp_rx_corrupt(c, &h);
                        return;
                    }
                    plx_tcp_rx_packet(c, &h, buf + PLX_TCP_HDR);
                    buf += PLX_TCP_HDR + h.len;
                    n -= PLX_TCP_HDR + h.len;
                    continue;
                }
            }
            size_t m = PLX_MIN(PLX_TCP_HDR - c->rhdr_got, n);
            memcpy(c->rhdr + c->rhdr_got, buf, m);
            c->rhdr_got += m;
            buf += m;
            n -= m;
            if (c->rhdr_got < PLX_TCP_HDR)
                break;
            memcpy(&c->rh, c->rhdr, sizeof c->rh);
            if (plx_unlikely(!plx_tcp_hdr_ok(&c->rh))) {
                plx_tcp_rx_corrupt(c, &c->rh);
                return;
            }
            plx_tcp_rx_start(c);
            break;
        }
        case PLX_TCP_RX_PAYLOAD: {
            if (c->rgot == 0 && n >= c->rlen) {
                struct plx_hdr h = c->rh;
                size_t len = c->rlen;
                plx_tcp_rx_reset(c);
                plx_tcp_rx_packet(c, &h, buf);
                buf += len;
                n -= len;
                break;
            }
            if (!c->rbuf)
                c->rbuf = plx_malloc(c->rlen);
            size_t m = PLX_MIN(c->rlen - c->rgot, n);
            memcpy(c->rbuf + c->rgot, buf, m);
            buf += m;
            n -= m;
            plx_tcp_rx_placed(c, m);
            break;
        }
        case PLX_TCP_RX_DIRECT: {
            size_t m = PLX_MIN(c->rlen - c->rgot, n);
            memcpy(c->rbuf + c->rgot, buf, m);
            buf += m;
            n -= m;
            plx_tcp_rx_placed(c, m);
            break;
        }
        case PLX_TCP_RX_DISCARD: {
            size_t m = PLX_MIN(c->rdiscard, n);
            c->rdiscard -= m;
            buf += m;
            n -= m;
            if (!c->rdiscard)
                plx_tcp_rx_data_done(c);
            break;
        }
        }
    }
}

static void plx_tcp_on_eof(struct plx_tcp_conn *c, int err)
{
    struct plx_tcp_peer *p = c->peer;
    if (p->bye && !err) {
        plx_debug(2, "tcp: rank %d finalized and closed its connection", p->lpid);
        plx_tcp_unblock(p);     /* nothing more goes out: no retries of a full socket */
        plx_tcp_conn_close(c);
        p->conn = NULL;
        p->state = PLX_TCP_P_CLOSED;
        return;
    }
    plx_tcp_peer_lost(p, err ? strerror(err) : "the peer closed it without finalizing", !err || err == ECONNRESET);
}

/* Reads what the socket has: payload bytes straight to their destination,
 * the rest through the shared buffer. */
static int plx_tcp_on_readable(struct plx_tcp_conn *c)
{
    for (int round = 0; round < 8 && c->state == PLX_TCP_C_OPEN; round++) {
        struct iovec v[2];
        int k = 0;
        /* a payload not started yet is read into the shared buffer, where
         * it may arrive whole and be dispatched in place */
        if (c->rx == PLX_TCP_RX_DIRECT || (c->rx == PLX_TCP_RX_PAYLOAD && c->rbuf)) {
            v[k].iov_base = c->rbuf + c->rgot;
            v[k++].iov_len = c->rlen - c->rgot;
        }
        v[k].iov_base = plx_tcp.rxbuf;
        v[k++].iov_len = plx_tcp.rxcap;
        /* In a stream of rendezvous DATA, read no further than the next
         * header: the payload behind it then goes straight to its buffer
         * too, where a full shared buffer would bounce up to 128 KiB of it
         * through a copy (measured: 4 MiB streams 0.89 -> 0.96 of raw
         * sockets with the write retries of plx_tcp_poll). What else
         * follows (a small packet) costs one more read. */
        if (c->rx == PLX_TCP_RX_DIRECT || (c->rx == PLX_TCP_RX_HDR && c->last_data))
            v[k - 1].iov_len = PLX_TCP_HDR - (c->rx == PLX_TCP_RX_HDR ? c->rhdr_got : 0);
        /* recv() when there is one piece: readv goes through the file
         * layer first (measured as for send() in plx_tcp_writev: 1.10 ->
         * 1.065 of raw sockets) */
        ssize_t r = k == 1 ? recv(c->fd, v[0].iov_base, v[0].iov_len, 0) : readv(c->fd, v, k);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK)
                return round;
            plx_tcp_on_eof(c, errno);
            return 1;
        }
        if (r == 0) {
            plx_tcp_on_eof(c, 0);
            return 1;
        }
        size_t n = (size_t)r, want = v[0].iov_len + (k == 2 ? v[1].iov_len : 0);
        if (k == 2) {
            size_t d = PLX_MIN(n, v[0].iov_len);
            plx_tcp_rx_placed(c, d);
            n -= d;
        }
        if (n)
            plx_tcp_rx_feed(c, plx_tcp.rxbuf, n);
        if ((size_t)r < want)
            return 1;           /* drained */
    }
    return 1;
}

/* --- self --------------------------------------------------------------------------- */

static void plx_tcp_self_send(const struct plx_hdr *hdr, const struct iovec *iov, int iovcnt,
                              struct plx_tp_comp *comp)
{
    int ncopy = comp ? iovcnt - 1 : iovcnt;
    size_t plen = 0;
    for (int i = 0; i < ncopy; i++)
        plen += iov[i].iov_len;
    struct plx_tcp_selfpkt *s = plx_malloc(sizeof *s + plen);
    s->h = *hdr;
    s->plen = plen;
    s->comp = comp;
    s->zc = comp ? iov[iovcnt - 1].iov_base : NULL;
    size_t off = 0;
    for (int i = 0; i < ncopy; i++) {
        memcpy((char *)s->payload + off, iov[i].iov_base, iov[i].iov_len);
        off += iov[i].iov_len;
    }
    plx_list_push_back(&plx_tcp.selfq, &s->link);
    plx_progress_kick();        /* no socket shows it: a sleeping thread must be told */
}

static int plx_tcp_self_deliver(void)
{
    int work = 0;
    struct plx_list batch;
    struct plx_tp_iface *ifc = &plx_tcp.rails[0].ifc;
    plx_list_init(&batch);
    /* take the current queue: packets that delivery sends to self wait for the next poll */
    batch.next = plx_tcp.selfq.next;
    batch.prev = plx_tcp.selfq.prev;
    batch.next->prev = &batch;
    batch.prev->next = &batch;
    plx_list_init(&plx_tcp.selfq);
    while (!plx_list_empty(&batch)) {
        struct plx_tcp_selfpkt *s = plx_list_entry(batch.next, struct plx_tcp_selfpkt, link);
        plx_list_remove(&s->link);
        if (s->comp) {
            size_t fit;
            char *dst = plx_tcp.up->place(ifc, plx_procs.my_lpid, &s->h, &fit);
            if (fit)
                memcpy(dst, s->zc, fit);
            plx_tcp.up->placed(ifc, plx_procs.my_lpid, &s->h);
            plx_tp_comp_done(s->comp, PLX_OK);
        } else {
            plx_tcp.up->recv[s->h.type](ifc, plx_procs.my_lpid, &s->h, s->payload);
        }
        free(s);
        work++;
    }
    return work;
}

/* --- the operations --------------------------------------------------------------- */

static inline struct plx_tcp_rail *plx_tcp_rail_of(struct plx_tp_iface *ifc)
{
    return plx_container_of(ifc, struct plx_tcp_rail, ifc);
}

/* Does the rail reach lpid? Fetches the peer's card (PMI) the first time;
 * connects nothing. */
static int plx_tcp_reaches(struct plx_tp_iface *ifc, int lpid)
{
    struct plx_tcp_rail *r = plx_tcp_rail_of(ifc);
    if (!plx_tcp.initialized || lpid < 0 || lpid >= plx_procs.n)
        return 0;
    if (lpid == plx_procs.my_lpid)
        return r->index == 0;
    if (r->index == 0)
        return 1;               /* rail 0 tries every address: a failure is reported when it connects */
    char why[300];
    struct plx_tcp_ipaddr cand[2 + PLX_TCP_CARD_MAX_ADDRS];
    const struct plx_tcp_card *c = plx_tcp_peer_card(plx_tcp_peer_get(r, lpid), why, sizeof why);
    return c && plx_tcp_rail_cands(r, lpid, c, cand) > 0;
}

/* Bytes queued for lpid on this rail and not yet sent by the kernel. */
static size_t plx_tcp_backlog(struct plx_tp_iface *ifc, int lpid)
{
    struct plx_tcp_peer *p = plx_tcp_rail_of(ifc)->peers[lpid];
    if (!p)
        return 0;
    size_t b = 0;
    struct plx_list *pos;
    plx_list_for_each(pos, &p->sq) {
        const struct plx_tcp_sbuf *sb = plx_list_entry(pos, struct plx_tcp_sbuf, link);
        b += sb->copied + sb->zc_len - sb->done;
    }
    int unsent = 0;
    if (p->conn && p->state == PLX_TCP_P_OPEN && ioctl(p->conn->fd, SIOCOUTQNSD, &unsent) == 0 && unsent > 0)
        b += (size_t)unsent;
    return b;
}

/* Not open, or something queued: queue behind (starting a connection). */
static plx_status_t plx_tcp_send_queued(struct plx_tcp_rail *r, int lpid, const struct iovec *v, int n, size_t total,
                                       struct plx_tp_comp *comp)
{
    struct plx_tcp_peer *p = plx_tcp_peer_get(r, lpid);
    if (plx_unlikely(p->state == PLX_TCP_P_CLOSED)) {
        const struct plx_hdr *h = v[0].iov_base;
        if (h->type == PLX_PKT_CREDIT || h->type == PLX_PKT_ACK || h->type == PLX_PKT_PING || plx_tcp.finalizing)
            return PLX_OK;      /* a credit or acknowledgement for a rank that needs none any more */
        char me[128], him[128];
        plx_tcp_who(plx_procs.my_lpid, me, sizeof me);
        plx_tcp_who(lpid, him, sizeof him);
        plx_fatal("tcp: %s sends to %s, which has already finalized", me, him);
    }
    if (!comp && !plx_list_empty(&p->sq) && p->sq_copied + total > plx_tcp.sendq_max)
        return PLX_BUSY;
    plx_tcp_enqueue(p, v, n, 0, comp);
    if (p->state == PLX_TCP_P_IDLE)
        plx_tcp_connect_start(p);
    else if (p->state == PLX_TCP_P_OPEN && !p->wblocked)
        plx_tcp_flush(p);
    return PLX_OK;
}

static plx_status_t plx_tcp_send_common(struct plx_tcp_rail *r, int lpid, const struct plx_hdr *hdr,
                                        const struct iovec *iov, int iovcnt, struct plx_tp_comp *comp)
{
    struct iovec v[8];
    if (plx_unlikely(iovcnt > 7))
        plx_fatal("tcp: %d iov entries in one packet", iovcnt);
    v[0].iov_base = (void *)hdr;
    v[0].iov_len = PLX_TCP_HDR;
    size_t total = PLX_TCP_HDR;
    int n = 1;
    for (int i = 0; i < iovcnt; i++) {
        if (!iov[i].iov_len && !(comp && i == iovcnt - 1))
            continue;           /* (the referenced entry stays last) */
        v[n++] = iov[i];
        total += iov[i].iov_len;
    }
    struct plx_tcp_peer *p = r->peers[lpid];
    if (plx_likely(p && p->state == PLX_TCP_P_OPEN && plx_list_empty(&p->sq))) {
        size_t w = plx_tcp_writev(p, v, n, total);
        if (plx_likely(w == total)) {
            if (comp)
                plx_tcp_zc_done_push(comp);
            return PLX_OK;
        }
        if (plx_unlikely(!p->conn))
            return PLX_OK;      /* the link broke (or finalize gave up on it): dropped, reported from poll */
        plx_tcp_enqueue(p, v, n, w, comp);
        plx_tcp_block(p);
        return PLX_OK;
    }
    return plx_tcp_send_queued(r, lpid, v, n, total, comp);
}

static plx_status_t plx_tcp_send(struct plx_tp_iface *ifc, int lpid, const struct plx_hdr *hdr,
                                 const struct iovec *iov, int iovcnt)
{
    if (plx_unlikely(lpid == plx_procs.my_lpid)) {
        plx_tcp_self_send(hdr, iov, iovcnt, NULL);
        return PLX_OK;
    }
    return plx_tcp_send_common(plx_tcp_rail_of(ifc), lpid, hdr, iov, iovcnt, NULL);
}

static plx_status_t plx_tcp_send_zcopy(struct plx_tp_iface *ifc, int lpid, const struct plx_hdr *hdr,
                                       const struct iovec *iov, int iovcnt, struct plx_tp_comp *comp)
{
    if (plx_unlikely(lpid == plx_procs.my_lpid)) {
        plx_tcp_self_send(hdr, iov, iovcnt, comp);
        return PLX_OK;
    }
    return plx_tcp_send_common(plx_tcp_rail_of(ifc), lpid, hdr, iov, iovcnt, comp);
}

static void plx_tcp_fin_read(struct plx_tcp_conn *c);

/* One batch of socket events. */
static int plx_tcp_events(int timeout_ms)
{
    int work = 0;
    struct epoll_event ev[64];
    int n = epoll_wait(plx_tcp.epfd, ev, 64, timeout_ms);
    /* one connection readable and nothing else: it becomes the hot one;
     * traffic from several: none is */
    if (n == 1 && ev[0].data.ptr != &plx_tcp_listen_tag && ev[0].events == EPOLLIN &&
        ((struct plx_tcp_conn *)ev[0].data.ptr)->state == PLX_TCP_C_OPEN)
        plx_tcp_set_hot(ev[0].data.ptr);
    else if (n > 1)
        plx_tcp_set_hot(NULL);
    for (int i = 0; i < n; i++) {
        if (ev[i].data.ptr == &plx_tcp_listen_tag) {
            plx_tcp_accept_all();
            work++;
            continue;
        }
        struct plx_tcp_conn *c = ev[i].data.ptr;
        uint32_t e = ev[i].events;
        switch (c->state) {
        case PLX_TCP_C_OPEN: {
            struct plx_tcp_peer *p = c->peer;
            if ((e & EPOLLOUT) && p->wblocked)
                work += plx_tcp_flush(p);       /* disarms EPOLLOUT once the queue is empty */
            if (c->state != PLX_TCP_C_OPEN || !(e & (EPOLLIN | EPOLLHUP | EPOLLERR)))
                break;
            if (plx_unlikely(plx_tcp.finalizing))
                plx_tcp_fin_read(c);
            else
                work += plx_tcp_on_readable(c);
            break;
        }
        case PLX_TCP_C_CONNECTING:
            plx_tcp_on_connected(c);
            work++;
            break;
        case PLX_TCP_C_HELLO_SENT:
            plx_tcp_on_ack(c);
            work++;
            break;
        case PLX_TCP_C_ACCEPTED:
            plx_tcp_on_hello(c);
            work++;
            break;
        default:                /* DEAD: closed earlier in this batch */
            break;
        }
    }
    if (plx_unlikely(!plx_list_empty(&plx_tcp.handshaking) || !plx_list_empty(&plx_tcp.waiting)))
        plx_tcp_check_deadlines();
    while (plx_unlikely(!plx_list_empty(&plx_tcp.zombies))) {
        struct plx_tcp_conn *c = plx_list_entry(plx_tcp.zombies.next, struct plx_tcp_conn, link);
        plx_list_remove(&c->link);
        free(c);
    }
    return work;
}

static int plx_tcp_poll(void)
{
    int work = 0;
    if (plx_unlikely(!plx_list_empty(&plx_tcp.selfq)))
        work += plx_tcp_self_deliver();
    /* A full socket is written again on every poll, not when epoll says
     * it is writable: that is only once a third of its buffer is free, and
     * meanwhile the receiver runs dry (measured on loopback: 4 MiB streams
     * 0.89 -> 0.96 of raw sockets, which also write whenever there is room,
     * with the short reads of plx_tcp_on_readable). A sendmsg that finds
     * no room costs what the epoll_wait would; with many full sockets
     * (a receiver that does not read) only EPOLLOUT is watched. */
    if (plx_unlikely(plx_tcp.nwblocked) && plx_tcp.nwblocked <= PLX_TCP_RETRY_WRITES_MAX) {
        struct plx_list *pos, *n;
        plx_list_for_each_safe(pos, n, &plx_tcp.wblocked)
            work += plx_tcp_flush(plx_container_of(pos, struct plx_tcp_peer, wb_link));
    }
    /* Spinning on one peer (ping-pong, a stream from one sender): a read
     * of that socket finds the data and takes it in one syscall, where
     * epoll_wait would take two. The other sockets, the listener and
     * EPOLLOUT are still looked at on every PLX_TCP_HOT_EPOLL_EVERY-th poll
     * (every poll while the hot socket waits for room to write), and any
     * sign of traffic from another peer ends this. */
    struct plx_tcp_conn *hot = plx_tcp.hot;
    if (hot && !hot->peer->wblocked) {
        int got = plx_tcp_on_readable(hot);
        work += got;
        if (got && hot == plx_tcp.hot && hot->in_epoll && !plx_tcp.sleepers && ++hot->hot_hits >= PLX_TCP_HOT_DETACH)
            plx_tcp_hot_detach(hot);
        if ((++plx_tcp.npolls % PLX_TCP_HOT_EPOLL_EVERY) == 0)
            work += plx_tcp_events(0);
    } else {
        work += plx_tcp_events(0);
    }
    if (plx_tcp.nzc_done) {
        /* reported last, outside any send: completing may free the request */
        for (size_t i = 0; i < plx_tcp.nzc_done; i++)
            plx_tp_comp_done(plx_tcp.zc_done[i], PLX_OK);
        work += (int)plx_tcp.nzc_done;
        plx_tcp.nzc_done = 0;
    }
    while (plx_unlikely(!plx_list_empty(&plx_tcp.failed))) {
        /* after the zero-copy reports: those writes did complete */
        struct plx_tcp_peer *p = plx_list_entry(plx_tcp.failed.next, struct plx_tcp_peer, fail_link);
        plx_list_remove(&p->fail_link);
        plx_tcp.up->link_failed(&p->rail->ifc, p->lpid, p->fail_why, p->fail_ended);
        work++;
    }
    return work;
}

static int plx_tcp_sleep_prepare(void)
{
    plx_tcp_set_hot(NULL);      /* the sleep waits on the set: every socket in it */
    plx_tcp.sleepers++;         /* (other threads keep it there meanwhile) */
    return plx_tcp.epfd;
}

static void plx_tcp_sleep_done(void)
{
    plx_tcp.sleepers--;
}

/* --- finalize ----------------------------------------------------------------------- */

/* Finalize is done with this peer: close, drop what is queued. */
static void plx_tcp_fin_close(struct plx_tcp_peer *p)
{
    p->fin_shut = p->fin_eof = 1;
    plx_tcp_unblock(p);
    plx_list_remove(&p->wait_link);
    if (p->conn)
        plx_tcp_conn_close(p->conn);
    p->conn = NULL;
    p->state = PLX_TCP_P_CLOSED;
    while (!plx_list_empty(&p->sq)) {
        struct plx_tcp_sbuf *b = plx_list_entry(p->sq.next, struct plx_tcp_sbuf, link);
        plx_list_remove(&b->link);
        free(b);
    }
    p->sq_copied = 0;
}

/* Finalize reads and drops: after the finalize barrier nothing that
 * arrives is needed any more. */
static void plx_tcp_fin_read(struct plx_tcp_conn *c)
{
    struct plx_tcp_peer *p = c->peer;
    if (p->fin_eof) {           /* still flushing: wait for room only */
        plx_tcp_epoll_set(c, EPOLLOUT);
        return;
    }
    ssize_t r = read(c->fd, plx_tcp.rxbuf, plx_tcp.rxcap);
    if (r > 0 || (r < 0 && (errno == EAGAIN || errno == EINTR)))
        return;
    if (r < 0) {
        plx_tcp_fin_close(p);
        return;
    }
    p->fin_eof = 1;
    if (!p->fin_shut)
        plx_tcp_epoll_set(c, EPOLLOUT);
}

/* Every connection, open or still being set up (ours or a peer's): BYE,
 * flush, shut down our side, read (and drop) until the peer's EOF. Both
 * directions progress together, so two ranks flushing to each other cannot
 * block one another, and a rank that still connects to us to deliver its
 * last packets finds us listening. */
static void plx_tcp_drain_all(void)
{
    struct plx_hdr bye = { .type = PLX_TCP_PKT_BYE };
    struct iovec v = { &bye, sizeof bye };
    plx_tcp.finalizing = 1;
    plx_tcp_set_hot(NULL);
    double end = plx_tcp_now() + PLX_TCP_FINALIZE_SECONDS;
    for (;;) {
        int pending = plx_tcp.naccepting;
        for (int i = 0; i < plx_tcp_nrails_all() * plx_procs.n; i++) {
            struct plx_tcp_peer *p = plx_tcp.rails[i / plx_procs.n].peers[i % plx_procs.n];
            if (!p)
                continue;
            if (p->state == PLX_TCP_P_CONNECTING || p->state == PLX_TCP_P_WAIT_PEER) {
                pending++;
                continue;
            }
            if (p->state != PLX_TCP_P_OPEN)
                continue;
            if (!p->fin_bye) {
                plx_tcp_enqueue(p, &v, 1, 0, NULL);
                p->fin_bye = 1;
            }
            if (!p->fin_shut) {
                plx_tcp_flush(p);
                if (p->state == PLX_TCP_P_OPEN && plx_list_empty(&p->sq)) {
                    shutdown(p->conn->fd, SHUT_WR);
                    p->fin_shut = 1;
                }
            }
            if (p->state == PLX_TCP_P_OPEN && p->fin_shut && p->fin_eof)
                plx_tcp_fin_close(p);
            pending += p->state == PLX_TCP_P_OPEN;
        }
        double left = end - plx_tcp_now();
        if (!pending || left <= 0) {
            if (pending)
                plx_debug(1, "tcp: %d connections did not close cleanly at finalize", pending);
            return;
        }
        plx_tcp_events((int)PLX_MIN(left * 1000 + 1, 100.0));
    }
}

static void plx_tcp_finalize(void)
{
    if (plx_tcp.initialized) {
        plx_tcp_drain_all();
        close(plx_tcp.lfd);
        plx_tcp.lfd = -1;
        for (int i = 0; i < plx_tcp_nrails_all() * plx_procs.n; i++) {
            struct plx_tcp_peer *p = plx_tcp.rails[i / plx_procs.n].peers[i % plx_procs.n];
            if (!p)
                continue;
            if (p->conn)
                plx_tcp_conn_close(p->conn);
            while (!plx_list_empty(&p->sq)) {
                struct plx_tcp_sbuf *b = plx_list_entry(p->sq.next, struct plx_tcp_sbuf, link);
                plx_list_remove(&b->link);
                free(b);
            }
            free(p->card);
            free(p->fail_why);
            free(p);
        }
        while (!plx_list_empty(&plx_tcp.handshaking))
            plx_tcp_conn_close(plx_list_entry(plx_tcp.handshaking.next, struct plx_tcp_conn, link));
        while (!plx_list_empty(&plx_tcp.zombies)) {
            struct plx_tcp_conn *c = plx_list_entry(plx_tcp.zombies.next, struct plx_tcp_conn, link);
            plx_list_remove(&c->link);
            free(c);
        }
        while (!plx_list_empty(&plx_tcp.selfq)) {
            struct plx_tcp_selfpkt *s = plx_list_entry(plx_tcp.selfq.next, struct plx_tcp_selfpkt, link);
            plx_list_remove(&s->link);
            free(s);
        }
        while (!plx_list_empty(&plx_tcp.small_free)) {
            struct plx_tcp_sbuf *b = plx_list_entry(plx_tcp.small_free.next, struct plx_tcp_sbuf, link);
            plx_list_remove(&b->link);
            free(b);
        }
        for (int k = 0; k < plx_tcp_nrails_all(); k++)
            free(plx_tcp.rails[k].peers);
        free(plx_tcp.zc_done);
        free(plx_tcp.rxbuf);
        close(plx_tcp.epfd);
    }
    if (plx_tcp.lfd >= 0)
        close(plx_tcp.lfd);
    memset(&plx_tcp, 0, sizeof plx_tcp);
    plx_tcp.lfd = plx_tcp.epfd = -1;
}

/* --- start-up ----------------------------------------------------------------------- */

static int plx_tcp_hexval(int ch)
{
    if (ch >= '0' && ch <= '9')
        return ch - '0';
    if (ch >= 'a' && ch <= 'f')
        return ch - 'a' + 10;
    if (ch >= 'A' && ch <= 'F')
        return ch - 'A' + 10;
    return -1;
}

/* 32 hex digits are the secret itself; any other text is hashed into 128
 * bits (two FNV-1a streams with different bases, each finished with a
 * splitmix64 mix). The launcher's value carries the entropy; the hash only
 * brings it to the handshake's size. */
static void plx_tcp_secret_from(const char *val, uint8_t out[16])
{
    size_t len = strlen(val);
    int hex = len == 32;
    for (size_t i = 0; hex && i < 32; i++)
        hex = plx_tcp_hexval(val[i]) >= 0;
    if (hex) {
        for (int i = 0; i < 16; i++)
            out[i] = (uint8_t)(plx_tcp_hexval(val[2 * i]) << 4 | plx_tcp_hexval(val[2 * i + 1]));
        return;
    }
    uint64_t h[2] = { 0xcbf29ce484222325ull, 0x84222325cbf29ce4ull };
    for (int k = 0; k < 2; k++) {
        for (size_t i = 0; i < len; i++) {
            h[k] ^= (uint8_t)val[i];
            h[k] *= 0x100000001b3ull;
        }
        uint64_t z = h[k] + 0x9e3779b97f4a7c15ull * (uint64_t)(k + 1);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        h[k] = z ^ (z >> 31);
        memcpy(out + 8 * k, &h[k], 8);
    }
}

static int plx_tcp_random(uint8_t *buf, size_t len)
{
    size_t got = 0;
    while (got < len) {
        ssize_t r = getrandom(buf + got, len - got, 0);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        got += (size_t)r;
    }
    if (got == len)
        return 0;
    FILE *f = fopen("/dev/urandom", "rb");
    if (!f)
        return -1;
    size_t n = fread(buf, 1, len, f);
    fclose(f);
    return n == len ? 0 : -1;
}

/* The job secret. From the launcher when it put one in the KVS. Otherwise
 * rank 0 draws 128 random bits and publishes them before the card fence.
 * That is weaker than a launcher-made secret: the value then travels to
 * every rank through the PMI key-value space (and, across hosts, through the
 * launcher's own connections), so it is only as private as the PMI channel,
 * and it exists only once rank 0 has started. */
static void plx_tcp_secret_early(void)
{
    char val[PLX_PM_MAX_VAL];
    if (plx_pm_get(PLX_TCP_SECRET_KEY, val, sizeof val) == PLX_OK && val[0]) {
        plx_tcp_secret_from(val, plx_tcp.secret);
        plx_tcp.have_secret = 1;
        return;
    }
    if (plx_procs.my_lpid != 0)
        return;                 /* rank 0 publishes it; read after the fence */
    uint8_t r[16];
    if (plx_tcp_random(r, sizeof r) != 0) {
        plx_warn("tcp: cannot read random bytes for the job secret: %s", strerror(errno));
        return;
    }
    for (int i = 0; i < 16; i++)
        snprintf(val + 2 * i, 3, "%02x", r[i]);
    if (plx_pm_put(PLX_TCP_SECRET_KEY, val) != PLX_OK) {
        plx_warn("tcp: cannot publish the job secret");
        return;
    }
    memcpy(plx_tcp.secret, r, 16);
    plx_tcp.have_secret = 1;
}

static int plx_tcp_parse_ports(int *lo, int *hi)
{
    const char *s = plx_config.tcp_ports;
    *lo = *hi = 0;
    if (!s[0])
        return 0;
    char *end;
    long a = strtol(s, &end, 10), b = a;
    if (*end == '-')
        b = strtol(end + 1, &end, 10);
    if (*end || a <= 0 || b > 65535 || a > b)
        return -1;
    *lo = (int)a;
    *hi = (int)b;
    return 0;
}

static int plx_tcp_bind_listen(int family, int lo, int hi)
{
    int fd = socket(family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    int one = 1, zero = 0;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (family == AF_INET6 && setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof zero) != 0)
        goto err_close;
    /* accepted sockets inherit buffer sizes, which must be set before the
     * handshake to take effect on the window */
    plx_tcp_sock_opts(fd);
    int nports = lo ? hi - lo + 1 : 1;
    uint32_t start = 0;
    if (lo)
        (void)plx_tcp_random((uint8_t *)&start, sizeof start);   /* spread the ranks of a host */
    for (int i = 0; i < nports; i++) {
        int port = lo ? lo + (int)((start + (uint32_t)i) % (uint32_t)nports) : 0;
        struct sockaddr_storage ss;
        memset(&ss, 0, sizeof ss);
        socklen_t len;
        if (family == AF_INET6) {
            struct sockaddr_in6 *a = (struct sockaddr_in6 *)&ss;
            a->sin6_family = AF_INET6;
            a->sin6_addr = in6addr_any;
            a->sin6_port = htons((uint16_t)port);
            len = sizeof *a;
        } else {
            struct sockaddr_in *a = (struct sockaddr_in *)&ss;
            a->sin_family = AF_INET;
            a->sin_addr.s_addr = htonl(INADDR_ANY);
            a->sin_port = htons((uint16_t)port);
            len = sizeof *a;
        }
        if (bind(fd, (struct sockaddr *)&ss, len) == 0 && listen(fd, SOMAXCONN) == 0) {
            socklen_t sl = sizeof ss;
            getsockname(fd, (struct sockaddr *)&ss, &sl);
            plx_tcp.port = ntohs(family == AF_INET6 ? ((struct sockaddr_in6 *)&ss)->sin6_port
                                                    : ((struct sockaddr_in *)&ss)->sin_port);
            return fd;
        }
        if (errno != EADDRINUSE && errno != EACCES)
            break;
    }
err_close:
    close(fd);
    return -1;
}

static int plx_tcp_listen_and_card(char *card, size_t cardlen)
{
    char err[200];
    if (plx_tcp_iface_rules_parse(plx_config.ifaces, &plx_tcp.rules, err, sizeof err) != 0) {
        snprintf(plx_tcp.early_err, sizeof plx_tcp.early_err, "%s", err);
        return -1;
    }
    int lo, hi;
    if (plx_tcp_parse_ports(&lo, &hi) != 0) {
        snprintf(plx_tcp.early_err, sizeof plx_tcp.early_err,
                 "PLEXUS_TCP_PORTS=\"%s\" is not a port range lo-hi", plx_config.tcp_ports);
        return -1;
    }
    int family = AF_INET6;
    plx_tcp.lfd = plx_tcp_bind_listen(AF_INET6, lo, hi);
    if (plx_tcp.lfd < 0) {
        family = AF_INET;
        plx_tcp.lfd = plx_tcp_bind_listen(AF_INET, lo, hi);
    }
    if (plx_tcp.lfd < 0) {
        if (lo)
            snprintf(plx_tcp.early_err, sizeof plx_tcp.early_err,
                     "no free port in PLEXUS_TCP_PORTS=%d-%d (%s)", lo, hi, strerror(errno));
        else
            snprintf(plx_tcp.early_err, sizeof plx_tcp.early_err, "cannot listen: %s", strerror(errno));
        return -1;
    }

    struct plx_tcp_card c;
    memset(&c, 0, sizeof c);
    c.port = plx_tcp.port;
    snprintf(c.host, sizeof c.host, "%s", plx_tcp.host);
    if (!plx_tcp.rules.ninclude) {
        plx_tcp_ip_parse("127.0.0.1", &c.lo[c.nlo++]);
        if (family == AF_INET6)
            plx_tcp_ip_parse("::1", &c.lo[c.nlo++]);
    }
    struct plx_tcp_ifaddr all[64];
    int nall = plx_tcp_iface_list(all, 64);
    /* IPv4 first: every host has it; IPv6 after */
    for (int fam = 0; fam < 2; fam++) {
        for (int i = 0; i < nall && c.naddr < PLX_TCP_CARD_MAX_ADDRS; i++) {
            if ((fam == 0) != (all[i].a.family == AF_INET) || !plx_tcp_iface_selected(&plx_tcp.rules, &all[i]))
                continue;
            if (all[i].a.family == AF_INET6 && family != AF_INET6)
                continue;
            c.addr[c.naddr++] = all[i].a;
            plx_tcp.my[plx_tcp.nmy++] = all[i];
        }
    }
    if (c.naddr == 0 && plx_tcp.rules.ninclude) {
        snprintf(plx_tcp.early_err, sizeof plx_tcp.early_err,
                 "PLEXUS_IFACES=\"%.200s\" selects no address of this host", plx_config.ifaces);
        return -1;
    }
    if (plx_tcp_card_format(&c, card, cardlen) != 0) {
        snprintf(plx_tcp.early_err, sizeof plx_tcp.early_err, "business card too long");
        return -1;
    }
    return 0;
}

int plx_tcp_probe(char *msg, size_t len)
{
    char card[PLX_PM_MAX_VAL];
    memset(&plx_tcp, 0, sizeof plx_tcp);
    plx_tcp.lfd = plx_tcp.epfd = -1;
    gethostname(plx_tcp.host, sizeof plx_tcp.host - 1);
    int ok = plx_tcp_listen_and_card(card, sizeof card) == 0;
    if (!ok) {
        snprintf(msg, len, "%s", plx_tcp.early_err);
    } else {
        struct sockaddr_storage ss;
        socklen_t sl = sizeof ss;
        int v6 = getsockname(plx_tcp.lfd, (struct sockaddr *)&ss, &sl) == 0 && ss.ss_family == AF_INET6;
        size_t l = (size_t)snprintf(msg, len, "a listening socket opens (%s, port %d); addresses:",
                                    v6 ? "IPv6 and IPv4" : "IPv4 only", plx_tcp.port);
        for (int i = 0; i < plx_tcp.nmy && l < len; i++) {
            char a[INET6_ADDRSTRLEN];
            plx_tcp_ip_format(&plx_tcp.my[i].a, a, sizeof a);
            l += (size_t)snprintf(msg + l, len - l, " %s (%s)", a, plx_tcp.my[i].ifname);
        }
        if (!plx_tcp.nmy && l < len)
            snprintf(msg + l, len - l, " loopback only (no other interface is up)");
    }
    if (plx_tcp.lfd >= 0)
        close(plx_tcp.lfd);
    plx_tcp.lfd = -1;
    return ok;
}

void plx_tcp_init_early(void)
{
    char card[PLX_PM_MAX_VAL], key[PLX_PM_MAX_KEY];
    memset(&plx_tcp, 0, sizeof plx_tcp);
    plx_tcp.lfd = plx_tcp.epfd = -1;
    gethostname(plx_tcp.host, sizeof plx_tcp.host - 1);
    for (char *s = plx_tcp.host; *s; s++)
        if (*s == '|' || *s == ' ')
            *s = '_';
    plx_tcp_secret_early();
    if (plx_tcp_listen_and_card(card, sizeof card) == 0) {
        plx_tcp.early_ok = 1;
    } else {
        /* tell the peers why they cannot connect to us (no spaces on the PMI wire) */
        snprintf(card, sizeof card, "none|%s", plx_tcp.early_err);
        for (char *d = card; *d; d++)
            if (*d == ' ' || *d == '\t' || *d == '\n')
                *d = '_';
    }
    snprintf(key, sizeof key, "tcp-%d", plx_procs.my_lpid);
    if (plx_pm_put(key, card) != PLX_OK)
        plx_warn("tcp: cannot publish the business card");
    else
        plx_debug(1, "tcp: business card %s", card);
}

static const struct plx_tp_ops plx_tcp_ops;

/* Index of the first include term of PLEXUS_IFACES that selects a (the
 * rails follow the user's order), or a large number. */
static int plx_tcp_rule_rank(const struct plx_tcp_ifaddr *a)
{
    for (int i = 0; i < plx_tcp.rules.n; i++) {
        const struct plx_tcp_iface_rule *r = &plx_tcp.rules.r[i];
        if (r->exclude)
            continue;
        if (r->cidr ? plx_tcp_ip_in_cidr(&a->a, &r->a, r->prefix) : !strcmp(r->name, a->ifname))
            return i;
    }
    return 1 << 20;
}

/* One rail per selected interface (its first IPv4 address, else its first),
 * in PLEXUS_IFACES order, at most PLEXUS_TCP_RAILS (default 4); and the
 * rails over loopback to the ranks of this node: PLEXUS_TCP_RAILS when set,
 * else one. */
static void plx_tcp_rails_setup(void)
{
    int cap = plx_config.tcp_rails > 0 ? PLX_MIN(plx_config.tcp_rails, PLX_TCP_MAX_RAILS) : PLX_TCP_MAX_RAILS;
    struct plx_tcp_ifaddr pick[PLX_TCP_CARD_MAX_ADDRS];
    int npick = 0;
    for (int i = 0; i < plx_tcp.nmy; i++) {
        int k = 0;
        while (k < npick && strcmp(pick[k].ifname, plx_tcp.my[i].ifname))
            k++;
        if (k == npick)
            pick[npick++] = plx_tcp.my[i];
        else if (pick[k].a.family != AF_INET && plx_tcp.my[i].a.family == AF_INET)
            pick[k] = plx_tcp.my[i];
    }
    for (int i = 1; i < npick; i++)     /* stable insertion sort by rule rank */
        for (int k = i; k > 0 && plx_tcp_rule_rank(&pick[k - 1]) > plx_tcp_rule_rank(&pick[k]); k--) {
            struct plx_tcp_ifaddr t = pick[k];
            pick[k] = pick[k - 1];
            pick[k - 1] = t;
        }
    plx_tcp.nrails = PLX_MAX(1, PLX_MIN(npick, cap));
    plx_tcp.nlo_rails = plx_config.tcp_rails > 0 ? cap : 1;
    for (int k = 0; k < plx_tcp_nrails_all(); k++) {
        struct plx_tcp_rail *r = &plx_tcp.rails[k];
        memset(r, 0, sizeof *r);
        r->index = k;
        r->has_addr = plx_tcp.nrails > 1 && k < plx_tcp.nrails;
        if (k < npick)
            r->addr = pick[k];
        r->peers = plx_calloc((size_t)plx_procs.n, sizeof *r->peers);
        struct plx_tp_iface *ifc = &r->ifc;
        ifc->ops = &plx_tcp_ops;
        ifc->comp = &plx_tcp_component;
        ifc->rail = k;
        snprintf(ifc->name, sizeof ifc->name, "tcp%d", k);
        if (r->has_addr) {
            char a[INET6_ADDRSTRLEN];
            plx_tcp_ip_format(&r->addr.a, a, sizeof a);
            snprintf(ifc->detail, sizeof ifc->detail, "%s %s", r->addr.ifname, a);
        } else {
            snprintf(ifc->detail, sizeof ifc->detail, k < plx_tcp.nrails ? "any interface" : "loopback");
        }
        ifc->caps = (struct plx_tp_caps){
            .max_packet = (size_t)1 << 40,
            .max_iov = 7,
            .eager_max = plx_tcp.eager_max,
            .eager_credit = plx_tcp.credit,
            .flags = PLX_TP_ORDERED | PLX_TP_RELIABLE | PLX_TP_ZCOPY,
            .latency_class = 1,
            .bw_class = 1,
        };
    }
}

static plx_status_t plx_tcp_open(const struct plx_tp_upcalls *up, int needed, struct plx_tp_iface **ifcs, int max,
                                 int *nifc)
{
    *nifc = 0;
    plx_tcp.up = up;
    if (!needed) {
        if (!plx_tcp.early_ok && plx_procs.my_lpid == 0)
            plx_debug(1, "tcp: not needed by this job; it could not have started anyway: %s", plx_tcp.early_err);
        plx_tcp_finalize();
        return PLX_OK;
    }
    if (!plx_tcp.early_ok) {
        plx_warn("tcp: %s", plx_tcp.early_err);
        return PLX_ERR_IO;
    }
    if (!plx_tcp.have_secret) {
        char val[PLX_PM_MAX_VAL];
        if (plx_pm_get(PLX_TCP_SECRET_KEY, val, sizeof val) != PLX_OK || !val[0]) {
            plx_warn("tcp: no job secret in the PMI key-value space (rank 0 could not make one)");
            return PLX_ERR_PM;
        }
        plx_tcp_secret_from(val, plx_tcp.secret);
        plx_tcp.have_secret = 1;
    }
    plx_tcp.timeout = plx_config.tcp_connect_timeout > 0 ? plx_config.tcp_connect_timeout : 30;
    plx_tcp.eager_max = plx_config.tcp_eager_max;
    plx_tcp.credit = plx_config.tcp_eager_credit;
    plx_tcp.sendq_max = plx_config.tcp_sendq_max;
    if (plx_tcp.credit < plx_tcp.eager_max + 64) {
        plx_warn("PLEXUS_TCP_EAGER_CREDIT=%zu must be at least PLEXUS_TCP_EAGER_MAX (%zu) + 64",
                 plx_tcp.credit, plx_tcp.eager_max);
        return PLX_ERR_ARG;
    }
    plx_tcp.epfd = epoll_create1(EPOLL_CLOEXEC);
    if (plx_tcp.epfd < 0) {
        plx_warn("tcp: epoll_create1: %s", strerror(errno));
        return PLX_ERR_IO;
    }
    struct epoll_event ev = { .events = EPOLLIN, .data.ptr = &plx_tcp_listen_tag };
    if (epoll_ctl(plx_tcp.epfd, EPOLL_CTL_ADD, plx_tcp.lfd, &ev) != 0) {
        plx_warn("tcp: epoll_ctl: %s", strerror(errno));
        return PLX_ERR_IO;
    }
    plx_tcp.rxcap = PLX_MAX((size_t)128 * 1024, 2 * (plx_tcp.eager_max + 64));
    plx_tcp.rxbuf = plx_malloc(plx_tcp.rxcap);
    plx_list_init(&plx_tcp.handshaking);
    plx_list_init(&plx_tcp.waiting);
    plx_list_init(&plx_tcp.failed);
    plx_list_init(&plx_tcp.wblocked);
    plx_list_init(&plx_tcp.zombies);
    plx_list_init(&plx_tcp.selfq);
    plx_list_init(&plx_tcp.small_free);
    plx_tcp_rails_setup();
    plx_tcp.initialized = 1;
    int n = PLX_MIN(plx_tcp_nrails_all(), max);
    for (int k = 0; k < n; k++)
        ifcs[k] = &plx_tcp.rails[k].ifc;
    *nifc = n;
    plx_debug(1, "tcp: listening on port %d; eager up to %zu bytes; %d rail%s to other nodes, %d to this one",
              plx_tcp.port, plx_tcp.eager_max, plx_tcp.nrails, plx_tcp.nrails > 1 ? "s" : "", plx_tcp.nlo_rails);
    for (int k = 0; k < n && plx_log_debug >= 1; k++)
        plx_debug(1, "tcp: rail %s: %s", plx_tcp.rails[k].ifc.name, plx_tcp.rails[k].ifc.detail);
    return PLX_OK;
}

static const struct plx_tp_ops plx_tcp_ops = {
    .reaches = plx_tcp_reaches,
    .send = plx_tcp_send,
    .send_zcopy = plx_tcp_send_zcopy,
    .backlog = plx_tcp_backlog,
    /* no direct reads: rendezvous is RTS, CTS, DATA; no native remote memory */
};

const struct plx_tp_component plx_tcp_component = {
    .name = "tcp",
    .query = plx_tcp_probe,
    .init_early = plx_tcp_init_early,
    .open = plx_tcp_open,
    .poll = plx_tcp_poll,
    .sleep_prepare = plx_tcp_sleep_prepare,
    .sleep_done = plx_tcp_sleep_done,
    .finalize = plx_tcp_finalize,
};
