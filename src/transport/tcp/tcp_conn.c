/*
 * TCP transport: peers and their connections (see tcp.c for the whole).
 *
 * A connection to a peer opens on the first packet sent to it: fetch its
 * card (PMI), try its addresses in order within one budget of
 * PLEXUS_TCP_CONNECT_TIMEOUT for the peer (each attempt gets an equal share
 * of what is left), and run the handshake of tcp_wire.h, which carries the
 * job's secret and both ranks. When two ranks connect to each other at once,
 * the lower rank's connection is kept: the higher rank adopts the incoming
 * one and drops its own; the lower answers DUPLICATE to the other. A peer's
 * packets queue on the peer (not the socket) until a connection is open, so
 * they survive that switch in order. Each rail (an instance) has its own
 * peers and connections, going out from its interface's address.
 *
 * Failures. A connect or handshake that does not finish in time, a peer
 * that closes without having said BYE, or a reset, is described in a
 * message naming both ranks, their hosts, the rail and the addresses tried.
 * The link is closed, its queue dropped, and the next poll reports it to
 * the router (link_failed), which fails over to another rail or loses the
 * peer; the transport never decides that. Keepalive and TCP_USER_TIMEOUT
 * turn a vanished host into such a failure within PLEXUS_TCP_PEER_TIMEOUT
 * seconds (PLEXUS_TCP_RAIL_TIMEOUT when there are several rails).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>
#include "core/config.h"
#include "core/log.h"
#include "core/runtime.h"
#include "pm/pm.h"
#include "transport/tcp/tcp_impl.h"
#include "util/util.h"

struct plx_tcp_peer *plx_tcp_peer_get(struct plx_tcp_rail *rail, int lpid)
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

/* The peer's card, fetched through PMI once; NULL (and a reason) if absent. */
const struct plx_tcp_card *plx_tcp_peer_card(struct plx_tcp_peer *p, char *why, size_t whylen)
{
    if (p->card)
        return p->card;
    char key[PLX_PM_MAX_KEY], val[PLX_PM_MAX_VAL];
    snprintf(key, sizeof key, "tcp-%d", p->lpid);
    if (p->lpid >= plx_procs.n) {       /* a process of another job: the card it brought */
        char *hash = plx_procs_comp_card(p->lpid, "tcp", val, sizeof val) ? strrchr(val, '#') : NULL;
        if (!hash) {
            snprintf(why, whylen, "its card (from another job) has no TCP part");
            return NULL;
        }
        *hash = 0;
    } else if (plx_pm_get(key, val, sizeof val) != PLX_OK) {
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
void plx_tcp_who(int lpid, char *buf, size_t len)
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
    p->failed_before = 1;
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
void plx_tcp_peer_lost(struct plx_tcp_peer *p, const char *what, int ended)
{
    char me[128], him[128], addr[80] = "", msg[1024];
    plx_tcp_who(plx_procs.my_lpid, me, sizeof me);
    plx_tcp_who(p->lpid, him, sizeof him);
    if (p->conn)
        plx_iface_sockaddr_str(&p->conn->addr, addr, sizeof addr);
    snprintf(msg, sizeof msg, "tcp: connection between %s and %s at %s%s lost: %s. The peer process died, or "
             "its host or the network between them went down", me, him, addr[0] ? addr : "?", plx_tcp_rail_label(p),
             what);
    plx_tcp_link_fail(p, msg, ended);
}

void plx_tcp_epoll_set(struct plx_tcp_conn *c, uint32_t events)
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

void plx_tcp_sock_opts(int fd)
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

void plx_tcp_conn_close(struct plx_tcp_conn *c)
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
    c->deadline = plx_util_now() + allowed;
    plx_list_remove(&c->link);
    struct plx_list *pos = plx_tcp.handshaking.prev;
    while (pos != &plx_tcp.handshaking && plx_list_entry(pos, struct plx_tcp_conn, link)->deadline > c->deadline)
        pos = pos->prev;
    plx_list_push_front(pos, &c->link);     /* after pos */
}

/* --- connecting and the handshake ------------------------------------------------- */

static void plx_tcp_try_next(struct plx_tcp_peer *p);

static void plx_tcp_tried(struct plx_tcp_peer *p, const struct sockaddr_storage *ss, const char *why)
{
    char a[80];
    plx_iface_sockaddr_str(ss, a, sizeof a);
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
        .dst = plx_procs.p[p->lpid].wrank,     /* its world rank (lpid, for one of ours) */
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
        double left = p->connect_deadline - plx_util_now();
        if (left <= 0) {
            char why[96];
            snprintf(why, sizeof why, "no address answered within %g s",
                     p->failed_before ? PLX_MIN(plx_tcp.timeout, 2.0) : plx_tcp.timeout);
            plx_tcp_connect_failed(p, why);
            return;
        }
        double allowed = left / (p->ncand - p->next_cand);
        const struct plx_iface_ip *a = &p->cand[p->next_cand++];
        struct sockaddr_storage ss;
        socklen_t len = plx_iface_ip_sockaddr(a, p->card->port, &ss);
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
        struct plx_iface_ip from = { 0 };
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
            socklen_t melen = plx_iface_ip_sockaddr(&from, 0, &me);
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
static int plx_tcp_near(const struct plx_iface_ip *a)
{
    for (int i = 0; i < plx_tcp.nmy; i++)
        if (plx_iface_ip_in_cidr(a, &plx_tcp.my[i].a, plx_tcp.my[i].prefix))
            return 1;
    return 0;
}

/* The addresses of card c that rail r tries, in order, into out (room for
 * 2 + PLX_TCP_CARD_MAX_ADDRS); returns how many. To a rank of this node:
 * loopback first, then the others (rail 0), or loopback only (the other
 * loopback rails). Elsewhere, a rail bound to an interface tries the peer's
 * addresses in that interface's subnet; if no rail shares a subnet with the
 * peer (a routed network), rail 0 tries them all, nearest first. */
/* Appends c's addresses to out[n..], those near us first; returns the new n. */
static int plx_tcp_cands_nearest_first(const struct plx_tcp_card *c, struct plx_iface_ip *out, int n)
{
    for (int near = 1; near >= 0; near--)
        for (int i = 0; i < c->naddr; i++)
            if (plx_tcp_near(&c->addr[i]) == near)
                out[n++] = c->addr[i];
    return n;
}

int plx_tcp_rail_cands(const struct plx_tcp_rail *r, int lpid, const struct plx_tcp_card *c, struct plx_iface_ip *out)
{
    int n = 0;
    if (plx_proc_same_host(lpid)) {
        if (r->index >= plx_tcp.nlo_rails)
            return 0;
        for (int i = 0; i < c->nlo; i++)
            out[n++] = c->lo[i];
        if (r->index > 0 && n)
            return n;
        return plx_tcp_cands_nearest_first(c, out, n);
    }
    int shared = 0;
    for (int k = 0; k < plx_tcp.nrails; k++) {
        const struct plx_tcp_rail *o = &plx_tcp.rails[k];
        for (int i = 0; o->has_addr && i < c->naddr; i++) {
            if (!plx_iface_ip_in_cidr(&c->addr[i], &o->addr.a, o->addr.prefix))
                continue;
            shared = 1;
            if (o == r)
                out[n++] = c->addr[i];
        }
    }
    if (shared || r->index != 0)
        return n;
    return plx_tcp_cands_nearest_first(c, out, n);
}

void plx_tcp_connect_start(struct plx_tcp_peer *p)
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
    /* A probe of a link that failed (the router sends one a second while the
     * rail is down) gets a short budget: a connect begun while the rail was
     * down waits for its next SYN, which the kernel sends 1, 3, 7, 15 s ...
     * after the first, so a rail that comes back would be seen that late;
     * a failed probe is only followed by the next one. */
    p->connect_deadline = plx_util_now() + (p->failed_before ? PLX_MIN(plx_tcp.timeout, 2.0) : plx_tcp.timeout);
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
        plx_iface_sockaddr_str(&c->addr, a, sizeof a);
        plx_debug(2, "tcp: %s: connection with rank %d open (%s)", p->rail->ifc.name, p->lpid, a);
    }
    plx_tcp.up->link_up(&p->rail->ifc, p->lpid);
    plx_tcp_flush(p);
}

/* Our connection is writable: connected, or failed. */
void plx_tcp_on_connected(struct plx_tcp_conn *c)
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
void plx_tcp_on_ack(struct plx_tcp_conn *c)
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
        (a->status == PLX_TCP_ACK_ACCEPT && a->rank != plx_procs.p[p->lpid].wrank)) {
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
        p->wait_deadline = plx_util_now() + plx_tcp.timeout;
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
    plx_iface_sockaddr_str(&c->addr, a, sizeof a);
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
        struct plx_iface_ip a = { 0 };
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
void plx_tcp_on_hello(struct plx_tcp_conn *c)
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
    int src = h->src;
    switch (plx_tcp_hello_check(h, plx_tcp.secret, plx_procs.my_lpid, plx_procs.n, PLX_TCP_HDR)) {
    case PLX_TCP_HELLO_OK:
        break;
    case PLX_TCP_HELLO_BAD_SECRET:
        /* a process of another job that was added (spawn, connect, join)? */
        if ((src = plx_tcp_hello_other(h)) >= 0) {
            if (h->dst != plx_procs.my_lpid) {
                plx_tcp_answer(c, PLX_TCP_ACK_WRONG_PEER);
                plx_tcp_refuse(c, "meant for another rank", 1);
                return;
            }
            break;
        }
        plx_tcp_refuse(c, "wrong job secret", 0);
        return;
    case PLX_TCP_HELLO_BAD_MAGIC:
        plx_tcp_refuse(c, "not a Plexus handshake (or another version)", 0);
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
    struct plx_tcp_peer *p = plx_tcp_peer_get(plx_tcp_accepted_rail(c, h), src);
    int keep_ours = p->state == PLX_TCP_P_OPEN || p->state == PLX_TCP_P_CLOSED ||
                    (p->state == PLX_TCP_P_CONNECTING && plx_proc_before(plx_procs.my_lpid, p->lpid));
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
void plx_tcp_accept_all(void)
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
void plx_tcp_check_deadlines(void)
{
    double now = plx_util_now();
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
