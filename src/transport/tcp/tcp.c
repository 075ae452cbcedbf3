/*
 * TCP transport: the component (tcp_impl.h lists its files).
 *
 * Sockets. Each process listens on one socket (IPv6 dual-stack "::", or
 * IPv4 "0.0.0.0" where IPv6 is off; PLEXUS_TCP_PORTS picks the port) and
 * publishes its port and the addresses of the selected interfaces as its
 * business card (tcp_card.h). Each selected interface is a rail, an instance
 * of the component; connections open lazily on the first packet to a peer
 * (tcp_conn.c), packets are written by tcp_send.c and parsed by tcp_recv.c.
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
 * Self-sends (when PLEXUS_TRANSPORTS=tcp leaves no shared memory between
 * the ranks of a node) go through an in-process queue delivered by poll.
 *
 * Poll reports, after the socket events: completed zero-copy writes, then
 * broken links (link_failed), never from inside a send. At MPI_Finalize
 * every connection sends BYE, flushes, shuts down its sending side and
 * drains until the peer's EOF, so no close turns into a reset that could
 * destroy data still in flight.
 *
 * Thread rules: as every transport, under the API lock, from the progress
 * engine (poll) and the point-to-point layer (send, send_zcopy).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <linux/sockios.h>
#include <sys/socket.h>
#include <unistd.h>
#include "core/config.h"
#include "core/log.h"
#include "core/runtime.h"
#include "pm/pm.h"
#include "progress/progress.h"
#include "transport/tcp/tcp_impl.h"
#include "util/secret.h"
#include "util/util.h"

static char plx_tcp_listen_tag;         /* epoll data of the listening socket */

struct plx_tcp_global plx_tcp = { .lfd = -1, .epfd = -1 };

/* --- the hot connection --------------------------------------------------------------- */

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

void plx_tcp_set_hot(struct plx_tcp_conn *c)
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

/* --- self --------------------------------------------------------------------------- */

void plx_tcp_self_send(const struct plx_hdr *hdr, const struct iovec *iov, int iovcnt, struct plx_tp_comp *comp)
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

/* Does the rail reach lpid? Fetches the peer's card (PMI) the first time;
 * connects nothing. */
static int plx_tcp_reaches(struct plx_tp_iface *ifc, int lpid)
{
    struct plx_tcp_rail *r = plx_tcp_rail_of(ifc);
    if (!plx_tcp.initialized || lpid < 0 || lpid >= plx_tcp.npeers)
        return 0;
    if (lpid == plx_procs.my_lpid)
        return r->index == 0;
    if (r->index == 0)
        return 1;               /* rail 0 tries every address: a failure is reported when it connects */
    char why[300];
    struct plx_iface_ip cand[2 + PLX_TCP_CARD_MAX_ADDRS];
    const struct plx_tcp_card *c = plx_tcp_peer_card(plx_tcp_peer_get(r, lpid), why, sizeof why);
    int ok = c && plx_tcp_rail_cands(r, lpid, c, cand) > 0;
    if (!ok && !r->unreached_said && !plx_proc_same_host(lpid)) {
        r->unreached_said = 1;  /* once per rail: a job of many ranks would repeat it for each */
        plx_debug(1, "tcp: rail %s (%s) reaches no address of rank %d (host %s)%s; it carries nothing to "
                  "such ranks", ifc->name, ifc->detail, lpid, c ? c->host : "unknown",
                  c ? ": no address in its subnet" : "");
    }
    return ok;
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

/* --- poll --------------------------------------------------------------------------- */

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
void plx_tcp_fin_close(struct plx_tcp_peer *p)
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

/* The end of an open connection, our half: BYE queued once, then our side
 * shut down once everything queued has gone (called again until it has). */
static void plx_tcp_say_bye(struct plx_tcp_peer *p)
{
    if (!p->fin_bye) {
        struct plx_hdr bye = { .type = PLX_TCP_PKT_BYE };
        struct iovec v = { &bye, sizeof bye };
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
}

/* Every connection, open or still being set up (ours or a peer's): BYE,
 * flush, shut down our side, read (and drop) until the peer's EOF. Both
 * directions progress together, so two ranks flushing to each other cannot
 * block one another, and a rank that still connects to us to deliver its
 * last packets finds us listening. */
static void plx_tcp_drain_all(void)
{
    plx_tcp.finalizing = 1;
    plx_tcp_set_hot(NULL);
    double end = plx_util_now() + PLX_TCP_FINALIZE_SECONDS;
    for (;;) {
        int pending = plx_tcp.naccepting;
        for (int i = 0; i < plx_tcp_nrails_all() * plx_tcp.npeers; i++) {
            struct plx_tcp_peer *p = plx_tcp.rails[i / plx_tcp.npeers].peers[i % plx_tcp.npeers];
            if (!p)
                continue;
            if (p->state == PLX_TCP_P_CONNECTING || p->state == PLX_TCP_P_WAIT_PEER) {
                pending++;
                continue;
            }
            if (p->state != PLX_TCP_P_OPEN)
                continue;
            plx_tcp_say_bye(p);
            if (p->state == PLX_TCP_P_OPEN && p->fin_shut && p->fin_eof)
                plx_tcp_fin_close(p);
            pending += p->state == PLX_TCP_P_OPEN;
        }
        double left = end - plx_util_now();
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
        for (int i = 0; i < plx_tcp_nrails_all() * plx_tcp.npeers; i++) {
            struct plx_tcp_peer *p = plx_tcp.rails[i / plx_tcp.npeers].peers[i % plx_tcp.npeers];
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
        plx_util_secret_from(val, plx_tcp.secret);
        plx_tcp.have_secret = 1;
        return;
    }
    if (plx_procs.my_lpid != 0)
        return;                 /* rank 0 publishes it; read after the fence */
    uint8_t r[16];
    if (plx_util_secret_new(r, val) != 0) {
        plx_warn("tcp: cannot read random bytes for the job secret: %s", strerror(errno));
        return;
    }
    if (plx_pm_put(PLX_TCP_SECRET_KEY, val) != PLX_OK) {
        plx_warn("tcp: cannot publish the job secret");
        return;
    }
    memcpy(plx_tcp.secret, r, 16);
    plx_tcp.have_secret = 1;
}

/* The job secret, read after the card fence where rank 0 published it. */
static plx_status_t plx_tcp_secret_get(void)
{
    if (plx_tcp.have_secret)
        return PLX_OK;
    char val[PLX_PM_MAX_VAL];
    if (plx_pm_get(PLX_TCP_SECRET_KEY, val, sizeof val) != PLX_OK || !val[0]) {
        plx_warn("tcp: no job secret in the PMI key-value space (rank 0 could not make one)");
        return PLX_ERR_PM;
    }
    plx_util_secret_from(val, plx_tcp.secret);
    plx_tcp.have_secret = 1;
    return PLX_OK;
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
    /* a random start spreads the ranks of a host over the range */
    int port = plx_util_listen_range(fd, family, lo, hi, 1, SOMAXCONN);
    if (port > 0) {
        plx_tcp.port = port;
        return fd;
    }
err_close:
    close(fd);
    return -1;
}

static int plx_tcp_listen_and_card(char *card, size_t cardlen)
{
    char err[200];
    if (plx_iface_rules_parse(plx_config.ifaces, &plx_tcp.rules, err, sizeof err) != 0) {
        snprintf(plx_tcp.early_err, sizeof plx_tcp.early_err, "%s", err);
        return -1;
    }
    int lo, hi;
    if (plx_util_port_range_parse(plx_config.tcp_ports, &lo, &hi) != 0) {
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
        plx_iface_ip_parse("127.0.0.1", &c.lo[c.nlo++]);
        if (family == AF_INET6)
            plx_iface_ip_parse("::1", &c.lo[c.nlo++]);
    }
    struct plx_iface_addr all[64];
    int nall = plx_iface_list(all, 64);
    /* IPv4 first: every host has it; IPv6 after */
    for (int fam = 0; fam < 2; fam++) {
        for (int i = 0; i < nall && c.naddr < PLX_TCP_CARD_MAX_ADDRS; i++) {
            if ((fam == 0) != (all[i].a.family == AF_INET) || !plx_iface_selected(&plx_tcp.rules, &all[i]))
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
            plx_iface_ip_format(&plx_tcp.my[i].a, a, sizeof a);
            l += (size_t)snprintf(msg + l, len - l, " %s (%s)", a, plx_tcp.my[i].ifname);
        }
        if (!plx_tcp.nmy && l < len)
            l += (size_t)snprintf(msg + l, len - l, " loopback only (no other interface is up)");
        /* the rails to other nodes: one per interface (at most PLEXUS_TCP_RAILS) */
        char names[PLX_TCP_CARD_MAX_ADDRS][IFNAMSIZ];
        int nnames = 0, cap = plx_config.tcp_rails > 0 ? plx_config.tcp_rails : PLX_TCP_MAX_RAILS;
        for (int i = 0; i < plx_tcp.nmy && nnames < cap; i++) {
            int k = 0;
            while (k < nnames && strcmp(names[k], plx_tcp.my[i].ifname))
                k++;
            if (k == nnames)
                snprintf(names[nnames++], IFNAMSIZ, "%s", plx_tcp.my[i].ifname);
        }
        for (int k = 0; k < nnames && l < len; k++)
            l += (size_t)snprintf(msg + l, len - l, "%s tcp%d (%s)", k ? "," : "; rails to other nodes:", k,
                                  names[k]);
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
        snprintf(plx_tcp.card, sizeof plx_tcp.card, "%s", card);
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
static int plx_tcp_rule_rank(const struct plx_iface_addr *a)
{
    for (int i = 0; i < plx_tcp.rules.n; i++) {
        const struct plx_iface_rule *r = &plx_tcp.rules.r[i];
        if (r->exclude)
            continue;
        if (r->cidr ? plx_iface_ip_in_cidr(&a->a, &r->a, r->prefix) : !strcmp(r->name, a->ifname))
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
    struct plx_iface_addr pick[PLX_TCP_CARD_MAX_ADDRS];
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
            struct plx_iface_addr t = pick[k];
            pick[k] = pick[k - 1];
            pick[k - 1] = t;
        }
    plx_tcp.nrails = PLX_MAX(1, PLX_MIN(npick, cap));
    plx_tcp.nlo_rails = plx_config.tcp_rails > 0 ? cap : 1;
    plx_tcp.npeers = plx_procs.ntotal;
    for (int k = 0; k < plx_tcp_nrails_all(); k++) {
        struct plx_tcp_rail *r = &plx_tcp.rails[k];
        memset(r, 0, sizeof *r);
        r->index = k;
        r->has_addr = plx_tcp.nrails > 1 && k < plx_tcp.nrails;
        if (k < npick)
            r->addr = pick[k];
        r->peers = plx_calloc((size_t)plx_procs.ntotal, sizeof *r->peers);
        struct plx_tp_iface *ifc = &r->ifc;
        ifc->ops = &plx_tcp_ops;
        ifc->comp = &plx_tcp_component;
        ifc->rail = k;
        snprintf(ifc->name, sizeof ifc->name, "tcp%d", k);
        if (r->has_addr) {
            char a[INET6_ADDRSTRLEN], name[IFNAMSIZ];
            plx_iface_ip_format(&r->addr.a, a, sizeof a);
            memcpy(name, r->addr.ifname, sizeof name);  /* (both in plx_tcp: GCC's -Wrestrict) */
            name[sizeof name - 1] = 0;
            snprintf(ifc->detail, sizeof ifc->detail, "%s %s", name, a);
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
        /* the listener stays (nothing polls it): processes of other jobs
         * may need it later (plx_tcp_add_peers, then open again) */
        return PLX_OK;
    }
    if (plx_tcp.initialized)
        return PLX_OK;
    if (!plx_tcp.early_ok) {
        plx_warn("tcp: %s", plx_tcp.early_err);
        return PLX_ERR_IO;
    }
    if (plx_tcp_secret_get() != PLX_OK)
        return PLX_ERR_PM;
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

/* --- processes of other jobs ---------------------------------------------------------- */

/* Our card and, after '#', our job's secret: a process of another job
 * connects with its own job's secret, and we accept that secret for it
 * only (plx_tcp_hello_other). */
static int plx_tcp_dyn_card(char *buf, size_t len)
{
    if (!plx_tcp.early_ok || plx_tcp_secret_get() != PLX_OK)
        return -1;
    int w = snprintf(buf, len, "%s#", plx_tcp.card);
    for (int i = 0; i < 16 && w > 0 && (size_t)w + 3 <= len; i++)
        w += snprintf(buf + w, len - (size_t)w, "%02x", plx_tcp.secret[i]);
    return w > 0 && (size_t)w < len ? 0 : -1;
}

static plx_status_t plx_tcp_add_peers(int ntotal)
{
    if (!plx_tcp.initialized || ntotal <= plx_tcp.npeers)
        return PLX_OK;
    for (int k = 0; k < plx_tcp_nrails_all(); k++) {
        struct plx_tcp_rail *r = &plx_tcp.rails[k];
        r->peers = plx_realloc(r->peers, (size_t)ntotal * sizeof *r->peers);
        memset(r->peers + plx_tcp.npeers, 0, (size_t)(ntotal - plx_tcp.npeers) * sizeof *r->peers);
    }
    plx_tcp.npeers = ntotal;
    return PLX_OK;
}

/* The added process whose hello this is (another job's secret), or -1. */
int plx_tcp_hello_other(const struct plx_tcp_hello *h)
{
    for (int l = plx_procs.n; l < plx_tcp.npeers; l++) {
        const struct plx_proc *p = &plx_procs.p[l];
        if (p->wrank != h->src || (uint32_t)plx_procs.jobs[p->job - 1].size != h->size)
            continue;
        char card[1200], hex[33];
        const char *c = plx_procs_comp_card(l, "tcp", card, sizeof card);
        const char *s = c ? strrchr(c, '#') : NULL;
        if (!s)
            continue;
        for (int i = 0; i < 16; i++)
            snprintf(hex + 2 * i, 3, "%02x", h->secret[i]);
        if (!strcmp(s + 1, hex))
            return l;
    }
    return -1;
}

static void plx_tcp_peer_forget(struct plx_tcp_rail *r, struct plx_tcp_peer *p)
{
    if (p->conn)
        plx_tcp_conn_close(p->conn);
    plx_tcp_unblock(p);
    plx_list_remove(&p->wait_link);
    plx_list_remove(&p->fail_link);
    while (!plx_list_empty(&p->sq)) {
        struct plx_tcp_sbuf *b = plx_list_entry(p->sq.next, struct plx_tcp_sbuf, link);
        plx_list_remove(&b->link);
        free(b);
    }
    r->peers[p->lpid] = NULL;
    free(p->card);
    free(p->fail_why);
    free(p);
}

/* MPI_Comm_disconnect: BYE, flush, shut down our side; the peer, which
 * does the same, closes on our EOF and we on its (plx_tcp_on_eof), so
 * neither finalize waits for the other job any more. */
static int plx_tcp_drop_peer(int lpid)
{
    if (!plx_tcp.initialized || lpid < 0 || lpid >= plx_tcp.npeers)
        return 1;
    int left = 0;
    for (int k = 0; k < plx_tcp_nrails_all(); k++) {
        struct plx_tcp_peer *p = plx_tcp.rails[k].peers[lpid];
        if (!p)
            continue;
        if (p->state == PLX_TCP_P_CLOSED) {   /* forget it: a later meeting connects afresh */
            plx_tcp_peer_forget(&plx_tcp.rails[k], p);
            continue;
        }
        if (p->state != PLX_TCP_P_OPEN) {   /* still being set up: nothing of ours went over it */
            left++;
            continue;
        }
        p->dropping = 1;
        plx_tcp_say_bye(p);
        left += p->state != PLX_TCP_P_CLOSED;
    }
    return left == 0;
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
    .card = plx_tcp_dyn_card,
    .add_peers = plx_tcp_add_peers,
    .drop_peer = plx_tcp_drop_peer,
};
