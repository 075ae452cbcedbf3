/*
 * SCTP transport: the component, the socket, associations and their
 * handshake (sctp_io.c moves the packets; sctp_wire.h is the wire).
 *
 * The stack is usrsctp, the userland SCTP of FreeBSD's code, over UDP
 * encapsulation (RFC 6951): every process runs its own stack on its own
 * UDP port, which works without privileges and without a kernel SCTP
 * module. The process holds one one-to-many (SOCK_SEQPACKET) socket bound
 * to every selected address (bindx: 127.0.0.1 and the addresses
 * PLEXUS_IFACES selects, IPv4); its SCTP port is its UDP port. The business
 * card (PMI "sctp-<rank>") has tcp_card.h's format: that port, the host, the
 * loopback and the other addresses.
 *
 * Associations open lazily: the first packet to a peer calls connectx with
 * every address of its card that this process can reach (the loopback
 * address for a rank of this node; else all of its other addresses, so the
 * association is multihomed over every rail), the encapsulation port set
 * from the card. On COMM_UP the connector sends HELLO (its rank, the rank it
 * wants, the job's secret); the acceptor checks it and answers HELLO_ACK,
 * which carries its own secret and rank; only then do packets flow. An
 * association that starts with anything else or carries another secret is
 * aborted at once, and one that stays silent is aborted after
 * PLEXUS_SCTP_CONNECT_TIMEOUT; nothing it sent reaches the job. An acceptor
 * that has no association of its own to that peer sends on the accepted one.
 *
 * Path failure (multihoming): RTO 100..500 ms (initial 200), heartbeats every
 * 200 ms, a path is given up after 2 retransmissions; measured here ~0.8 s
 * from a dead rail to the traffic on the other. The association dies after
 * PLEXUS_SCTP_ASSOC_RETRANS retransmissions in a row over all its paths.
 * Concurrent multipath transfer is PLEXUS_SCTP_CMT (SCTP_CMT_ON_OFF, absent
 * from usrsctp.h).
 *
 * Finalize cannot hang: BYE goes to every peer, the queues are flushed and
 * the poll runs until usrsctp holds no unacknowledged data (at most
 * PLX_SCTP_FINALIZE_SECONDS); then the socket is closed with a zero linger
 * (abort: nothing is left to send, and a graceful SHUTDOWN to a peer that is
 * gone would keep usrsctp_finish waiting for minutes), and usrsctp_finish
 * runs in a helper thread that is given 2 s: if the stack does not stop, the
 * process goes on without it (its threads end with the process). No thread of
 * ours ever blocks inside usrsctp: the socket is non-blocking and receiving
 * is usrsctp's callback (usrsctp_close waits for a thread blocked in recvv).
 *
 * Thread rules: see sctp_impl.h.
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <netinet/in.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include "core/config.h"
#include "core/log.h"
#include "core/runtime.h"
#include "pm/pm.h"
#include "progress/progress.h"
#include "route/route.h"
#include "transport/sctp/sctp_impl.h"
#include "util/secret.h"
#include "util/util.h"

/* SCTP_CMT_ON_OFF: a socket option of usrsctp's stack that usrsctp.h does
 * not declare (sctp.h of FreeBSD has it). */
#ifndef SCTP_CMT_ON_OFF
#define SCTP_CMT_ON_OFF 0x00001200
#endif


struct plx_sctp_global plx_sctp = { .efd = -1 };

/* --- is it wanted? ------------------------------------------------------------ */

/* SCTP starts a stack with threads in every process: only when asked for,
 * by PLEXUS_TRANSPORTS or a PLEXUS_ROUTE rule that names it. */
static int plx_sctp_wanted(void)
{
    return strstr(plx_config.transports, "sctp") != NULL || strstr(plx_config.route, "sctp") != NULL;
}

/* --- peers and associations ------------------------------------------------------ */

struct plx_sctp_peer *plx_sctp_peer_get(int lpid)
{
    struct plx_sctp_peer *p = plx_sctp.peers[lpid];
    if (plx_likely(p))
        return p;
    p = plx_calloc(1, sizeof *p);
    p->lpid = lpid;
    for (unsigned s = 0; s < plx_sctp.streams; s++)
        plx_list_init(&p->sq[s]);
    plx_list_init(&p->busy_link);
    plx_list_init(&p->fail_link);
    plx_sctp.peers[lpid] = p;
    return p;
}

struct plx_sctp_assoc *plx_sctp_assoc_find(sctp_assoc_t id)
{
    size_t i = (size_t)(uint32_t)id;
    return i < plx_sctp.nby_id ? plx_sctp.by_id[i] : NULL;
}

static struct plx_sctp_assoc *plx_sctp_assoc_new(sctp_assoc_t id, int ours)
{
    size_t i = (size_t)(uint32_t)id;
    if (i >= plx_sctp.nby_id) {
        size_t n = PLX_MAX(i + 1, 2 * plx_sctp.nby_id);
        if (n > ((size_t)1 << 24)) {
            plx_warn("sctp: association id %zu out of range", i);
            return NULL;
        }
        struct plx_sctp_assoc **b = realloc(plx_sctp.by_id, n * sizeof *b);
        if (!b)
            return NULL;
        memset(b + plx_sctp.nby_id, 0, (n - plx_sctp.nby_id) * sizeof *b);
        plx_sctp.by_id = b;
        plx_sctp.nby_id = n;
    }
    struct plx_sctp_assoc *a = plx_calloc(1, sizeof *a);
    a->id = id;
    a->lpid = -1;
    a->ours = ours;
    a->deadline = plx_util_now() + plx_sctp.timeout;
    a->rs = plx_calloc(plx_sctp.streams, sizeof *a->rs);
    plx_list_push_back(&plx_sctp.assocs, &a->link);
    plx_sctp.by_id[i] = a;
    return a;
}

static void plx_sctp_assoc_free(struct plx_sctp_assoc *a)
{
    size_t i = (size_t)(uint32_t)a->id;
    if (i < plx_sctp.nby_id && plx_sctp.by_id[i] == a)
        plx_sctp.by_id[i] = NULL;
    plx_list_remove(&a->link);
    plx_sctp_assoc_reset_streams(a);
    free(a->rs);
    free(a);
}

/* The peer's addresses of an association, for messages. */
static void plx_sctp_assoc_addrs(sctp_assoc_t id, char *buf, size_t len)
{
    struct sockaddr *addrs = NULL;
    buf[0] = 0;
    int n = usrsctp_getpaddrs(plx_sctp.so, id, &addrs);
    size_t l = 0;
    for (int i = 0; i < n && l < len; i++) {
        char a[INET_ADDRSTRLEN + 8] = "?";
        if (plx_sctp.conn) {    /* one path: an AF_CONN address (sctp_conn.c) */
            plx_sctp_conn_format(((const struct sockaddr_conn *)addrs)->sconn_addr, a, sizeof a);
            l += (size_t)snprintf(buf + l, len - l, "%s", a);
            break;
        }
        const struct sockaddr_in *sin = (const struct sockaddr_in *)addrs + i;
        inet_ntop(AF_INET, &sin->sin_addr, a, sizeof a);
        l += (size_t)snprintf(buf + l, len - l, "%s%s:%u", i ? "," : "", a, ntohs(sin->sin_port));
    }
    if (n > 0)
        usrsctp_freepaddrs(addrs);
    if (!buf[0])
        snprintf(buf, len, "(addresses unknown)");
}

void plx_sctp_abort(struct plx_sctp_assoc *a, const char *why)
{
    struct sctp_sndinfo si = { .snd_flags = SCTP_ABORT, .snd_assoc_id = a->id };
    char addrs[200];
    plx_sctp_assoc_addrs(a->id, addrs, sizeof addrs);
    plx_warn("sctp: rank %d aborts the association from %s: %s", plx_procs.my_lpid, addrs, why);
    char none = 0;              /* (usrsctp refuses a NULL buffer even for 0 bytes: EFAULT) */
    if (usrsctp_sendv(plx_sctp.so, &none, 0, NULL, 0, &si, sizeof si, SCTP_SENDV_SNDINFO, 0) < 0)
        plx_warn("sctp: rank %d: the abort of association %u failed: %s", plx_procs.my_lpid, (unsigned)a->id,
                 strerror(errno));
    a->up = 0;
    a->auth = 0;
    a->deadline = 0;
}

/* A failure of the association to p, reported from the poll. */
void plx_sctp_peer_fail(struct plx_sctp_peer *p, int ended, const char *fmt, ...)
{
    if (p->state == PLX_SCTP_P_FAILED)
        return;
    if (p->state == PLX_SCTP_P_CONNECTING || p->state == PLX_SCTP_P_HELLO_SENT)
        plx_sctp.nconnecting--;
    p->state = PLX_SCTP_P_FAILED;
    p->out = NULL;
    char why[600];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    free(p->fail_why);
    p->fail_why = strdup(why);
    p->fail_ended = ended;
    plx_sctp_peer_drop_queue(p, PLX_ERR_PEER);
    plx_list_remove(&p->fail_link);
    plx_list_push_back(&plx_sctp.failed, &p->fail_link);
}

/* Priorities of an association's streams (lower is sooner): control and
 * matched messages 0, rendezvous DATA 1. */
static void plx_sctp_assoc_prio(struct plx_sctp_assoc *a)
{
    for (unsigned s = plx_sctp.streams / 2; s < plx_sctp.streams; s++) {
        struct sctp_stream_value v = { .assoc_id = a->id, .stream_id = (uint16_t)s, .stream_value = 1 };
        if (usrsctp_setsockopt(plx_sctp.so, IPPROTO_SCTP, SCTP_SS_VALUE, &v, sizeof v) != 0) {
            plx_debug(1, "sctp: stream %u priority on association %u: %s", s, (unsigned)a->id, strerror(errno));
            return;
        }
    }
}

static void plx_sctp_hello_fill(struct plx_sctp_hello *h, int dst)
{
    memset(h, 0, sizeof *h);
    h->magic = PLX_SCTP_MAGIC;
    h->version = PLX_SCTP_VERSION;
    h->hdr_size = sizeof(struct plx_hdr);
    h->src = plx_procs.my_lpid;
    h->dst = dst;
    h->size = (uint32_t)plx_procs.n;
    h->streams = plx_sctp.streams;
    h->threads = (uint32_t)!plx_sctp.conn;
    memcpy(h->secret, plx_sctp.secret, 16);
}

/* A handshake packet: one whole message on stream 0 of a (nothing else
 * was sent on it before, so no stream parser is mid-packet). */
static int plx_sctp_send_hello(struct plx_sctp_assoc *a, uint8_t type, int dst)
{
    struct {
        struct plx_hdr h;
        struct plx_sctp_hello hello;
    } m;
    memset(&m, 0, sizeof m);
    m.h.type = type;
    m.h.len = sizeof m.hello;
    plx_sctp_hello_fill(&m.hello, dst);
    struct sctp_sndinfo si = { .snd_sid = 0, .snd_assoc_id = a->id };
    ssize_t w = usrsctp_sendv(plx_sctp.so, &m, sizeof m, NULL, 0, &si, sizeof si, SCTP_SENDV_SNDINFO, 0);
    return w == (ssize_t)sizeof m ? 0 : -1;
}

/* --- connecting ------------------------------------------------------------------ */

static int plx_sctp_card_get(int lpid, struct plx_tcp_card *c, char *why, size_t wlen)
{
    char key[PLX_PM_MAX_KEY], val[PLX_PM_MAX_VAL];
    snprintf(key, sizeof key, "sctp-%d", lpid);
    if (plx_pm_get(key, val, sizeof val) != PLX_OK) {
        snprintf(why, wlen, "no business card %s in the PMI key-value space", key);
        return -1;
    }
    if (!strncmp(val, "none|", 5)) {
        snprintf(why, wlen, "it could not start SCTP: %.300s", val + 5);
        return -1;
    }
    if (plx_tcp_card_parse(val, c) != 0) {
        snprintf(why, wlen, "malformed business card \"%.200s\"", val);
        return -1;
    }
    return 0;
}

/* Over UDP encapsulation: the association to every address of the card
 * that this process can reach; *id 0 after a failure (reported). */
static plx_status_t plx_sctp_connectx(struct plx_sctp_peer *p, const struct plx_tcp_card *c,
                                      struct sockaddr_in *addrs, int n, sctp_assoc_t *id)
{
    /* the encapsulation port of the new association's paths: set on the
     * socket just before connectx, which copies it into the association */
    struct sctp_udpencaps ue;
    memset(&ue, 0, sizeof ue);
    ue.sue_assoc_id = SCTP_FUTURE_ASSOC;
    ue.sue_port = htons((uint16_t)c->port);
    if (usrsctp_setsockopt(plx_sctp.so, IPPROTO_SCTP, SCTP_REMOTE_UDP_ENCAPS_PORT, &ue, sizeof ue) != 0) {
        plx_sctp_peer_fail(p, 0, "sctp: rank %d: cannot set the UDP encapsulation port %d for rank %d: %s",
                           plx_procs.my_lpid, c->port, p->lpid, strerror(errno));
        return PLX_OK;          /* (*id stays 0) */
    }
    if (usrsctp_connectx(plx_sctp.so, (struct sockaddr *)addrs, n, id) != 0 && errno != EINPROGRESS &&
        !((errno == EALREADY || errno == EISCONN) && (*id = usrsctp_getassocid(plx_sctp.so, (struct sockaddr *)&addrs[0])) != 0)) {
        /* (EALREADY: the peer's association to us, to these addresses, exists
         * already: SCTP has one per address pair; it is used both ways) */
        plx_sctp_peer_fail(p, 0, "sctp: rank %d (host %s) cannot connect to rank %d (host %s) at %s: %s",
                           plx_procs.my_lpid, plx_sctp.host, p->lpid, c->host, p->addrs, strerror(errno));
        *id = 0;
        return PLX_OK;
    }
    return PLX_OK;
}

plx_status_t plx_sctp_connect(struct plx_sctp_peer *p)
{
    struct plx_tcp_card c;
    char why[400];
    if (plx_sctp_card_get(p->lpid, &c, why, sizeof why) != 0) {
        plx_sctp_peer_fail(p, 0, "sctp: rank %d (host %s) cannot reach rank %d: %s", plx_procs.my_lpid,
                           plx_sctp.host, p->lpid, why);
        return PLX_OK;
    }
    int local = plx_procs.p[p->lpid].node_id == plx_procs.my_node;
    snprintf(p->host, sizeof p->host, "%s", c.host);
    struct sockaddr_in addrs[PLX_TCP_CARD_MAX_ADDRS + 2];
    int n = 0;
    size_t l = 0;
    p->addrs[0] = 0;
    const struct plx_iface_ip *src = local && c.nlo ? c.lo : c.addr;
    int nsrc = local && c.nlo ? c.nlo : c.naddr;
    for (int i = 0; i < nsrc; i++) {
        if (src[i].family != AF_INET)
            continue;
        memset(&addrs[n], 0, sizeof addrs[n]);
        addrs[n].sin_family = AF_INET;
        addrs[n].sin_port = htons((uint16_t)c.port);
        memcpy(&addrs[n].sin_addr, src[i].b, 4);
        char a[INET_ADDRSTRLEN];
        inet_ntop(AF_INET, src[i].b, a, sizeof a);
        l += (size_t)snprintf(p->addrs + l, sizeof p->addrs - l, "%s%s", n ? "," : "", a);
        n++;
        if (l >= sizeof p->addrs)
            break;
    }
    snprintf(p->addrs + strlen(p->addrs), sizeof p->addrs - strlen(p->addrs), " port %d", c.port);
    if (n == 0) {
        plx_sctp_peer_fail(p, 0, "sctp: rank %d (host %s) cannot reach rank %d (host %s): its card has no IPv4 "
                           "address%s", plx_procs.my_lpid, plx_sctp.host, p->lpid, c.host,
                           local ? " on loopback" : "");
        return PLX_OK;
    }
    sctp_assoc_t id = 0;
    if (plx_sctp.conn) {
        /* one path: the card's first address (usrsctp_connectx refuses
         * AF_CONN addresses; connect makes the association, the id follows) */
        struct sockaddr_conn sc = { .sconn_family = AF_CONN, .sconn_port = htons((uint16_t)c.port),
                                    .sconn_addr = plx_sctp_conn_token(&addrs[0]) };
        const char *why = NULL;
        if (!sc.sconn_addr)
            why = "out of memory";
        else if (usrsctp_connect(plx_sctp.so, (struct sockaddr *)&sc, sizeof sc) != 0 && errno != EINPROGRESS &&
                 errno != EALREADY && errno != EISCONN)
            why = strerror(errno);
        else if ((id = usrsctp_getassocid(plx_sctp.so, (struct sockaddr *)&sc)) == 0)
            why = "usrsctp made no association";
        if (why) {
            plx_sctp_peer_fail(p, 0, "sctp: rank %d (host %s) cannot connect to rank %d (host %s) at %s: %s",
                               plx_procs.my_lpid, plx_sctp.host, p->lpid, c.host, p->addrs, why);
            return PLX_OK;
        }
    } else {
        plx_status_t st = plx_sctp_connectx(p, &c, addrs, n, &id);
        if (st != PLX_OK || !id)
            return st;
    }
    struct plx_sctp_assoc *a = plx_sctp_assoc_find(id);
    if (a && a->lpid >= 0 && a->lpid != p->lpid) {
        plx_sctp_peer_fail(p, 0, "sctp: rank %d: the association to rank %d at %s is already rank %d's",
                           plx_procs.my_lpid, p->lpid, p->addrs, a->lpid);
        return PLX_OK;
    }
    if (!a)
        a = plx_sctp_assoc_new(id, 1);
    if (!a)
        return PLX_ERR_NOMEM;
    a->ours = 1;
    a->lpid = p->lpid;
    p->out = a;
    p->deadline = plx_util_now() + plx_sctp.timeout;
    plx_sctp.nconnecting++;
    p->state = PLX_SCTP_P_CONNECTING;
    plx_debug(2, "sctp: connecting to rank %d at %s (association %u)", p->lpid, p->addrs, (unsigned)id);
    if (a->up) {                /* it existed already (an association the peer opened to the same addresses) */
        if (plx_sctp_send_hello(a, PLX_SCTP_PKT_HELLO, p->lpid) == 0)
            p->state = PLX_SCTP_P_HELLO_SENT;
    }
    return PLX_OK;
}

/* --- handshake packets ---------------------------------------------------------------- */

static const char *plx_sctp_verdict_str(int v)
{
    switch (v) {
    case PLX_SCTP_HELLO_BAD_MAGIC: return "not a Plexus SCTP handshake";
    case PLX_SCTP_HELLO_BAD_SECRET: return "another job's secret";
    case PLX_SCTP_HELLO_BAD_RANK: return "ranks that do not fit this job";
    case PLX_SCTP_HELLO_BAD_STREAMS: return "another PLEXUS_SCTP_STREAMS";
    case PLX_SCTP_HELLO_BAD_THREADS:
        return plx_sctp.conn ? "usrsctp with its threads (PLEXUS_SCTP_THREADS=on), here without"
                             : "usrsctp without its threads (PLEXUS_SCTP_THREADS=off), here with";
    default: return "ok";
    }
}

static void plx_sctp_peer_open(struct plx_sctp_peer *p, struct plx_sctp_assoc *a)
{
    if (p->state == PLX_SCTP_P_CONNECTING || p->state == PLX_SCTP_P_HELLO_SENT)
        plx_sctp.nconnecting--;
    p->state = PLX_SCTP_P_OPEN;
    p->out = a;
    if (!p->addrs[0])           /* accepted: its addresses, for messages */
        plx_sctp_assoc_addrs(a->id, p->addrs, sizeof p->addrs);
    plx_debug(2, "sctp: rank %d reached over association %u", p->lpid, (unsigned)a->id);
    plx_sctp.up->link_up(&plx_sctp.ifc, p->lpid);
    plx_sctp_flush(p);
}

/* A transport-private packet (hdr.type >= PLX_SCTP_PKT_HELLO), whole. */
void plx_sctp_on_ctl(struct plx_sctp_assoc *a, const struct plx_hdr *h, const void *payload)
{
    if (h->type == PLX_SCTP_PKT_HELLO || h->type == PLX_SCTP_PKT_HELLO_ACK) {
        int v = plx_sctp_hello_check(payload, h->len, plx_sctp.secret, plx_procs.my_lpid, plx_procs.n,
                                     plx_sctp.streams, (uint32_t)!plx_sctp.conn);
        int32_t src = -1;
        if (h->len == sizeof(struct plx_sctp_hello))
            memcpy(&src, (const char *)payload + offsetof(struct plx_sctp_hello, src), sizeof src);
        if (v == PLX_SCTP_HELLO_OK && h->type == PLX_SCTP_PKT_HELLO_ACK && (!a->ours || a->lpid != src))
            v = PLX_SCTP_HELLO_BAD_RANK;
        if (v != PLX_SCTP_HELLO_OK) {
            char why[200];
            snprintf(why, sizeof why, "its %s carries %s", h->type == PLX_SCTP_PKT_HELLO ? "HELLO" : "HELLO_ACK",
                     plx_sctp_verdict_str(v));
            plx_sctp.st_strangers++;
            if (a->ours && a->lpid >= 0) {
                struct plx_sctp_peer *p = plx_sctp_peer_get(a->lpid);
                plx_sctp_abort(a, why);
                if (p->out == a)
                    plx_sctp_peer_fail(p, 0, "sctp: rank %d (host %s) reached something else than rank %d at %s: "
                                       "%s", plx_procs.my_lpid, plx_sctp.host, a->lpid, p->addrs, why);
            } else {
                plx_sctp_abort(a, why);
            }
            return;
        }
        a->auth = 1;
        a->lpid = src;
        struct plx_sctp_peer *p = plx_sctp_peer_get(src);
        if (h->type == PLX_SCTP_PKT_HELLO) {
            if (p->out == a && p->state == PLX_SCTP_P_OPEN) {
                /* both sides said HELLO on one association and we already
                 * send on it: the answer goes in order behind our packets */
                struct plx_sctp_hello ack;
                plx_sctp_hello_fill(&ack, src);
                plx_sctp_send_ctl(p, a, PLX_SCTP_PKT_HELLO_ACK, &ack, sizeof ack);
            } else if (plx_sctp_send_hello(a, PLX_SCTP_PKT_HELLO_ACK, src) != 0) {
                plx_sctp_abort(a, "cannot answer its HELLO");
                return;
            }
            plx_debug(2, "sctp: rank %d connected to us (association %u)", src, (unsigned)a->id);
            /* no association of our own to it yet: send on this one */
            if (p->state == PLX_SCTP_P_NONE || p->state == PLX_SCTP_P_FAILED)
                plx_sctp_peer_open(p, a);
        } else if (p->out == a && p->state != PLX_SCTP_P_OPEN) {
            plx_sctp_peer_open(p, a);
        }
        return;
    }
    if (h->type == PLX_SCTP_PKT_BYE) {
        if (a->lpid >= 0) {
            plx_sctp_peer_get(a->lpid)->said_bye = 1;
            plx_debug(2, "sctp: rank %d is finalizing", a->lpid);
        }
        return;
    }
    plx_sctp_abort(a, "unknown packet type");
}

/* --- notifications ---------------------------------------------------------------------- */

static const char *plx_sctp_state_str(unsigned s)
{
    switch (s) {
    case SCTP_COMM_UP: return "COMM_UP";
    case SCTP_COMM_LOST: return "COMM_LOST (the peer stopped answering, or aborted)";
    case SCTP_RESTART: return "RESTART";
    case SCTP_SHUTDOWN_COMP: return "SHUTDOWN_COMP (closed by the peer)";
    case SCTP_CANT_STR_ASSOC: return "CANT_STR_ASSOC (no answer to INIT: address unreachable or nobody there)";
    default: return "unknown state";
    }
}

static void plx_sctp_assoc_gone(struct plx_sctp_assoc *a, unsigned state)
{
    if (a->lpid >= 0) {
        struct plx_sctp_peer *p = plx_sctp_peer_get(a->lpid);
        if (p->out == a) {
            if (p->said_bye || plx_sctp.finalizing) {
                plx_debug(2, "sctp: association to rank %d ended (%s) after its BYE", a->lpid,
                          plx_sctp_state_str(state));
                p->out = NULL;
                if (p->state == PLX_SCTP_P_CONNECTING || p->state == PLX_SCTP_P_HELLO_SENT)
                    plx_sctp.nconnecting--;
                p->state = PLX_SCTP_P_FAILED;
                plx_sctp_peer_drop_queue(p, PLX_ERR_PEER);
            } else {
                plx_sctp_peer_fail(p, state != SCTP_CANT_STR_ASSOC,
                                   "sctp: association between rank %d (host %s) and rank %d (host %s) at %s "
                                   "ended: %s", plx_procs.my_lpid, plx_sctp.host, a->lpid,
                                   p->host[0] ? p->host : "?", p->addrs, plx_sctp_state_str(state));
            }
        }
    }
    plx_sctp_assoc_free(a);
}

void plx_sctp_notification(const struct plx_sctp_rx *m)
{
    const union sctp_notification *n = m->data;
    if (m->len < sizeof n->sn_header)
        return;
    switch (n->sn_header.sn_type) {
    case SCTP_ASSOC_CHANGE: {
        const struct sctp_assoc_change *c = &n->sn_assoc_change;
        struct plx_sctp_assoc *a = plx_sctp_assoc_find(c->sac_assoc_id);
        if (c->sac_state == SCTP_COMM_UP || c->sac_state == SCTP_RESTART) {
            if (!a)
                a = plx_sctp_assoc_new(c->sac_assoc_id, 0);
            if (!a)
                return;
            a->up = 1;
            plx_sctp_assoc_prio(a);
            if (plx_log_debug >= 1) {
                struct sctp_status st;
                socklen_t sl = sizeof st;
                memset(&st, 0, sizeof st);
                st.sstat_assoc_id = a->id;
                if (usrsctp_getsockopt(plx_sctp.so, IPPROTO_SCTP, SCTP_STATUS, &st, &sl) == 0)
                    plx_debug(1, "sctp: association %u up: DATA chunks of at most %u bytes, primary path MTU %u",
                              (unsigned)a->id, st.sstat_fragmentation_point, st.sstat_primary.spinfo_mtu);
            }
            if (c->sac_outbound_streams < plx_sctp.streams || c->sac_inbound_streams < plx_sctp.streams) {
                char why[120];
                snprintf(why, sizeof why, "it has %u/%u streams, PLEXUS_SCTP_STREAMS is %u",
                         c->sac_outbound_streams, c->sac_inbound_streams, plx_sctp.streams);
                struct plx_sctp_peer *p = a->lpid >= 0 ? plx_sctp_peer_get(a->lpid) : NULL;
                plx_sctp_abort(a, why);
                if (p && p->out == a)
                    plx_sctp_peer_fail(p, 0, "sctp: association to rank %d: %s", p->lpid, why);
                return;
            }
            if (a->ours && a->lpid >= 0) {
                struct plx_sctp_peer *p = plx_sctp_peer_get(a->lpid);
                if (p->out == a && p->state == PLX_SCTP_P_CONNECTING) {
                    if (plx_sctp_send_hello(a, PLX_SCTP_PKT_HELLO, a->lpid) == 0)
                        p->state = PLX_SCTP_P_HELLO_SENT;
                    else
                        plx_sctp_peer_fail(p, 0, "sctp: rank %d cannot send HELLO to rank %d at %s: %s",
                                           plx_procs.my_lpid, p->lpid, p->addrs, strerror(errno));
                }
            }
            return;
        }
        if (a)
            plx_sctp_assoc_gone(a, c->sac_state);
        return;
    }
    case SCTP_PEER_ADDR_CHANGE: {
        const struct sctp_paddr_change *c = &n->sn_paddr_change;
        const struct sockaddr_in *sin = (const struct sockaddr_in *)&c->spc_aaddr;
        char s[INET_ADDRSTRLEN + 8] = "?";
        if (c->spc_aaddr.ss_family == AF_CONN)
            plx_sctp_conn_format(((const struct sockaddr_conn *)&c->spc_aaddr)->sconn_addr, s, sizeof s);
        else
            inet_ntop(AF_INET, &sin->sin_addr, s, sizeof s);
        struct plx_sctp_assoc *a = plx_sctp_assoc_find(c->spc_assoc_id);
        const char *what = c->spc_state == SCTP_ADDR_UNREACHABLE ? "unreachable: traffic moves to the other paths"
                           : c->spc_state == SCTP_ADDR_AVAILABLE ? "available again"
                           : c->spc_state == SCTP_ADDR_CONFIRMED ? "confirmed"
                           : "changed";
        if (c->spc_state == SCTP_ADDR_UNREACHABLE || c->spc_state == SCTP_ADDR_AVAILABLE)
            plx_debug(1, "sctp: %.3f rank %d: path to rank %d at %s %s", plx_util_now(), plx_procs.my_lpid,
                      a ? a->lpid : -1, s, what);
        else
            plx_debug(2, "sctp: rank %d: path to rank %d at %s %s", plx_procs.my_lpid, a ? a->lpid : -1, s, what);
        return;
    }
    case SCTP_SHUTDOWN_EVENT: {
        struct plx_sctp_assoc *a = plx_sctp_assoc_find(n->sn_shutdown_event.sse_assoc_id);
        if (a)
            plx_sctp_assoc_gone(a, SCTP_SHUTDOWN_COMP);
        return;
    }
    case SCTP_SEND_FAILED_EVENT:
        plx_debug(1, "sctp: rank %d: usrsctp could not deliver %u bytes on association %u (error %u)",
                  plx_procs.my_lpid, n->sn_send_failed_event.ssfe_length,
                  (unsigned)n->sn_send_failed_event.ssfe_assoc_id, n->sn_send_failed_event.ssfe_error);
        return;
    case SCTP_REMOTE_ERROR:
        plx_debug(1, "sctp: rank %d: remote error %u on association %u", plx_procs.my_lpid,
                  n->sn_remote_error.sre_error, (unsigned)n->sn_remote_error.sre_assoc_id);
        return;
    default:
        return;
    }
}

/* Connecting peers and unauthenticated associations past their deadline. */
static void plx_sctp_check_deadlines(double now)
{
    for (int i = 0; i < plx_procs.n && plx_sctp.nconnecting > 0; i++) {
        struct plx_sctp_peer *p = plx_sctp.peers[i];
        if (!p || (p->state != PLX_SCTP_P_CONNECTING && p->state != PLX_SCTP_P_HELLO_SENT) || now < p->deadline)
            continue;
        struct plx_sctp_assoc *a = p->out;
        if (a)
            plx_sctp_abort(a, "no answer to the handshake in time");
        plx_sctp_peer_fail(p, 0, "sctp: rank %d (host %s) could not reach rank %d (host %s) at %s within "
                           "PLEXUS_SCTP_CONNECT_TIMEOUT=%.0f s (%s)", plx_procs.my_lpid, plx_sctp.host, p->lpid,
                           p->host, p->addrs, plx_sctp.timeout,
                           p->state == PLX_SCTP_P_CONNECTING ? "no association" : "no HELLO_ACK");
    }
    struct plx_list *pos, *nx;
    plx_list_for_each_safe(pos, nx, &plx_sctp.assocs) {
        struct plx_sctp_assoc *a = plx_list_entry(pos, struct plx_sctp_assoc, link);
        if (!a->auth && !a->ours && a->up && a->deadline && now >= a->deadline) {
            plx_sctp.st_strangers++;
            plx_sctp_abort(a, "no HELLO within PLEXUS_SCTP_CONNECT_TIMEOUT");
        }
    }
}

/* --- self ---------------------------------------------------------------------------- */

struct plx_sctp_selfpkt {
    struct plx_list link;
    struct plx_hdr h;
    struct plx_tp_comp *comp;
    const char *zc;
    size_t plen;
    char payload[];
};

void plx_sctp_self_send(const struct plx_hdr *hdr, const struct iovec *iov, int iovcnt, struct plx_tp_comp *comp);
void plx_sctp_self_send(const struct plx_hdr *hdr, const struct iovec *iov, int iovcnt, struct plx_tp_comp *comp)
{
    int ncopy = comp ? iovcnt - 1 : iovcnt;
    size_t plen = 0;
    for (int i = 0; i < ncopy; i++)
        plen += iov[i].iov_len;
    struct plx_sctp_selfpkt *s = plx_malloc(sizeof *s + plen);
    s->h = *hdr;
    s->plen = plen;
    s->comp = comp;
    s->zc = comp ? iov[iovcnt - 1].iov_base : NULL;
    size_t off = 0;
    for (int i = 0; i < ncopy; i++) {
        memcpy(s->payload + off, iov[i].iov_base, iov[i].iov_len);
        off += iov[i].iov_len;
    }
    plx_list_push_back(&plx_sctp.selfq, &s->link);
    plx_progress_kick();
}

int plx_sctp_self_deliver(void)
{
    int work = 0;
    struct plx_list batch;
    plx_list_init(&batch);
    batch.next = plx_sctp.selfq.next;
    batch.prev = plx_sctp.selfq.prev;
    batch.next->prev = &batch;
    batch.prev->next = &batch;
    plx_list_init(&plx_sctp.selfq);
    int me = plx_procs.my_lpid;
    while (!plx_list_empty(&batch)) {
        struct plx_sctp_selfpkt *s = plx_list_entry(batch.next, struct plx_sctp_selfpkt, link);
        plx_list_remove(&s->link);
        if (plx_sctp.finalizing) {
            /* finalize's polls: the layers above are gone (pt2pt finalizes
             * first); what this rank sent itself and never received is dropped */
        } else if (s->comp) {
            size_t fit;
            char *dst = plx_sctp.up->place(&plx_sctp.ifc, me, &s->h, &fit);
            if (fit)
                memcpy(dst, s->zc, fit);
            plx_sctp.up->placed(&plx_sctp.ifc, me, &s->h);
            plx_tp_comp_done(s->comp, PLX_OK);
        } else {
            plx_sctp.up->recv[s->h.type](&plx_sctp.ifc, me, &s->h, s->payload);
        }
        free(s);
        work++;
    }
    return work;
}

/* --- the operations ------------------------------------------------------------------- */

static int plx_sctp_reaches(struct plx_tp_iface *ifc, int lpid)
{
    /* every rank: one that cannot be reached is reported when it is
     * connected (reaches must not connect, nor fetch every rank's card) */
    return plx_sctp.initialized && lpid >= 0 && lpid < plx_procs.n;
}

/* --- poll ---------------------------------------------------------------------------- */

static int plx_sctp_poll(void)
{
    int work = 0;
    if (plx_sctp.conn)
        plx_sctp_conn_poll();   /* the datagrams to usrsctp: its callbacks fill rxq */
    if (plx_unlikely(!plx_list_empty(&plx_sctp.selfq)))
        work += plx_sctp_self_deliver();
    if (atomic_load_explicit(&plx_sctp.rx_pending, memory_order_acquire))
        work += plx_sctp_rx_drain();
    if (!plx_list_empty(&plx_sctp.busy))
        work += plx_sctp_flush_all();
    /* deadlines: on every poll while a connection is being made, else on
     * every 256th (an accepted association that never says HELLO) */
    if (plx_unlikely(plx_sctp.nconnecting > 0) || plx_unlikely((++plx_sctp.npolls & 255) == 0))
        plx_sctp_check_deadlines(plx_util_now());
    if (plx_sctp.nzc_done) {
        for (size_t i = 0; i < plx_sctp.nzc_done; i++)
            plx_tp_comp_done(plx_sctp.zc_done[i], PLX_OK);
        work += (int)plx_sctp.nzc_done;
        plx_sctp.nzc_done = 0;
    }
    while (plx_unlikely(!plx_list_empty(&plx_sctp.failed))) {
        struct plx_sctp_peer *p = plx_list_entry(plx_sctp.failed.next, struct plx_sctp_peer, fail_link);
        plx_list_remove(&p->fail_link);
        plx_sctp.up->link_failed(&plx_sctp.ifc, p->lpid, p->fail_why, p->fail_ended);
        work++;
    }
    return work;
}

/* The eventfd is read here, so that it wakes the sleep only for what
 * arrives from now on (the engine polls once more before it sleeps). It
 * used to be read only by a poll that found messages: a ring without one
 * (the send callback) left it readable, and every "sleep" returned at once,
 * a busy loop that kept usrsctp's own threads off the CPU. */
static _Thread_local int plx_sctp_slept;      /* this thread counted itself asleep (sctp_conn.c) */

static int plx_sctp_sleep_prepare(void)
{
    if (plx_sctp.conn && plx_sctp_conn_fd() >= 0) {
        if (!plx_sctp_slept) {
            plx_sctp_conn_sleep(1);     /* the service thread leaves the socket to us */
            plx_sctp_slept = 1;
        }
        return plx_sctp_conn_fd();
    }
    if (plx_sctp.efd >= 0)
        plx_sctp_unring();
    return plx_sctp.efd;
}

static void plx_sctp_sleep_done(void)
{
    if (plx_sctp_slept) {
        plx_sctp_conn_sleep(0);
        plx_sctp_slept = 0;
    }
}

/* --- start-up -------------------------------------------------------------------------- */

/* Before the fence: the launcher's secret, or (rank 0, when TCP, which
 * would publish one, is left out) a new one under the same key. */
static void plx_sctp_secret_early(void)
{
    char val[PLX_PM_MAX_VAL];
    if (plx_pm_get(PLX_UTIL_SECRET_KEY, val, sizeof val) == PLX_OK && val[0]) {
        plx_util_secret_from(val, plx_sctp.secret);
        plx_sctp.have_secret = 1;
        return;
    }
    if (plx_procs.my_lpid != 0 || plx_route_enabled("tcp"))
        return;
    uint8_t r[16];
    if (plx_util_secret_new(r, val) != 0)
        return;
    if (plx_pm_put(PLX_UTIL_SECRET_KEY, val) == PLX_OK) {
        memcpy(plx_sctp.secret, r, 16);
        plx_sctp.have_secret = 1;
    }
}

/* A free UDP port for the encapsulation (the kernel picks it), and a check
 * afterwards that usrsctp holds it. */
static int plx_sctp_udp_port_pick(void)
{
    int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    struct sockaddr_in sin = { .sin_family = AF_INET };
    socklen_t sl = sizeof sin;
    int port = -1;
    if (bind(fd, (struct sockaddr *)&sin, sizeof sin) == 0 && getsockname(fd, (struct sockaddr *)&sin, &sl) == 0)
        port = ntohs(sin.sin_port);
    close(fd);
    return port;
}

static int plx_sctp_udp_port_taken(int port)
{
    int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return 1;
    struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
    int taken = bind(fd, (struct sockaddr *)&sin, sizeof sin) != 0;
    close(fd);
    return taken;
}

/* usrsctp gives its UDP encapsulation socket a receive buffer of 128 KiB
 * (SB_RAW), a handful of 16 KiB packets: whenever its receive thread waits
 * for a CPU, a burst within the peer's window (PLEXUS_SCTP_SOCKBUF) overflows
 * it, the kernel drops datagrams (RcvbufErrors in /proc/net/snmp) and the
 * sender retransmits, at worst after an RTO of 100 ms or more. Measured on
 * loopback (session 8): a 1 MiB ping-pong had 30-60 DATA chunks
 * retransmitted and 1-3 timeouts in 50 round trips. So the socket's buffer
 * is raised to the window: SO_RCVBUF (capped by net.core.rmem_max), then
 * SO_RCVBUFFORCE where allowed. The socket is found among our descriptors
 * by its port. Returns the buffer the kernel then reports, or 0. */
static int plx_sctp_udp_rcvbuf(int port)
{
    int want = (int)PLX_MIN(2 * plx_config.sctp_sockbuf, (size_t)1 << 30), got = 0;
    DIR *d = opendir("/proc/self/fd");
    if (!d)
        return 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        int fd = atoi(e->d_name), type = 0;
        struct sockaddr_in sin;
        socklen_t sl = sizeof sin, tl = sizeof type;
        if (e->d_name[0] < '0' || e->d_name[0] > '9' || fd == dirfd(d) ||
            getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &tl) != 0 || type != SOCK_DGRAM ||
            getsockname(fd, (struct sockaddr *)&sin, &sl) != 0 || sin.sin_family != AF_INET ||
            ntohs(sin.sin_port) != port)
            continue;
        (void)setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &want, sizeof want);
        socklen_t gl = sizeof got;
        if (getsockopt(fd, SOL_SOCKET, SO_RCVBUF, &got, &gl) == 0 && got < want)
            (void)setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &want, sizeof want);
        gl = sizeof got;
        (void)getsockopt(fd, SOL_SOCKET, SO_RCVBUF, &got, &gl);
        break;
    }
    closedir(d);
    return got;
}

/* This host's addresses for the card and the bind: the selected IPv4
 * addresses (PLEXUS_IFACES), and 127.0.0.1 unless it has include terms. */
static int plx_sctp_addrs(struct plx_tcp_card *c)
{
    char err[200];
    if (plx_iface_rules_parse(plx_config.ifaces, &plx_sctp.rules, err, sizeof err) != 0) {
        snprintf(plx_sctp.early_err, sizeof plx_sctp.early_err, "%s", err);
        return -1;
    }
    memset(c, 0, sizeof *c);
    snprintf(c->host, sizeof c->host, "%s", plx_sctp.host);
    if (!plx_sctp.rules.ninclude)
        plx_iface_ip_parse("127.0.0.1", &c->lo[c->nlo++]);
    struct plx_iface_addr all[64];
    int nall = plx_iface_list(all, 64);
    plx_sctp.nmy = 0;
    for (int i = 0; i < nall && c->naddr < PLX_TCP_CARD_MAX_ADDRS; i++) {
        if (all[i].a.family != AF_INET || all[i].loopback || !plx_iface_selected(&plx_sctp.rules, &all[i]))
            continue;
        c->addr[c->naddr++] = all[i].a;
        plx_sctp.my[plx_sctp.nmy++] = all[i];
    }
    if (c->naddr == 0 && plx_sctp.rules.ninclude) {
        snprintf(plx_sctp.early_err, sizeof plx_sctp.early_err,
                 "PLEXUS_IFACES=\"%.200s\" selects no IPv4 address of this host", plx_config.ifaces);
        return -1;
    }
    return 0;
}

static int plx_sctp_setopt(int level, int opt, const void *v, socklen_t len, const char *name)
{
    if (usrsctp_setsockopt(plx_sctp.so, level, opt, v, len) == 0)
        return 0;
    snprintf(plx_sctp.early_err, sizeof plx_sctp.early_err, "usrsctp_setsockopt %s: %s", name, strerror(errno));
    return -1;
}

static void plx_sctp_sysctls(void)
{
    usrsctp_sysctl_set_sctp_rto_min_default(100);
    usrsctp_sysctl_set_sctp_rto_max_default(500);
    usrsctp_sysctl_set_sctp_rto_initial_default(200);
    usrsctp_sysctl_set_sctp_init_rto_max_default(500);
    usrsctp_sysctl_set_sctp_heartbeat_interval_default(200);
    usrsctp_sysctl_set_sctp_path_rtx_max_default(2);
    usrsctp_sysctl_set_sctp_assoc_rtx_max_default((uint32_t)PLX_MAX(plx_config.sctp_assoc_retrans, 1));
    usrsctp_sysctl_set_sctp_init_rtx_max_default(8);
    usrsctp_sysctl_set_sctp_nr_outgoing_streams_default(plx_sctp.streams);
    usrsctp_sysctl_set_sctp_sendspace((uint32_t)plx_config.sctp_sockbuf);
    usrsctp_sysctl_set_sctp_recvspace((uint32_t)plx_config.sctp_sockbuf);
    if (plx_sctp.cmt)
        usrsctp_sysctl_set_sctp_cmt_on_off(1);
}

/* Binds the socket and listens. Over UDP encapsulation: every address,
 * loopback and the selected ones, one port. Without usrsctp's threads:
 * every AF_CONN address (each remote endpoint is one), this port;
 * sctp_conn.c's UDP socket has the card's addresses. */
static int plx_sctp_bind(const struct plx_tcp_card *c, int port)
{
    if (plx_sctp.conn) {
        struct sockaddr_conn sc = { .sconn_family = AF_CONN, .sconn_port = htons((uint16_t)port) };
        if (usrsctp_bind(plx_sctp.so, (struct sockaddr *)&sc, sizeof sc) != 0 || usrsctp_listen(plx_sctp.so, 1)) {
            snprintf(plx_sctp.early_err, sizeof plx_sctp.early_err, "usrsctp_bind/listen (AF_CONN), port %d: %s",
                     port, strerror(errno));
            return -1;
        }
        return 0;
    }
    struct sockaddr_in b[PLX_TCP_CARD_MAX_ADDRS + 2];
    int nb = 0;
    for (int i = 0; i < c->nlo + c->naddr; i++) {
        const struct plx_iface_ip *ip = i < c->nlo ? &c->lo[i] : &c->addr[i - c->nlo];
        memset(&b[nb], 0, sizeof b[nb]);
        b[nb].sin_family = AF_INET;
        b[nb].sin_port = htons((uint16_t)port);
        memcpy(&b[nb].sin_addr, ip->b, 4);
        nb++;
    }
    if (usrsctp_bindx(plx_sctp.so, (struct sockaddr *)b, nb, SCTP_BINDX_ADD_ADDR) != 0) {
        snprintf(plx_sctp.early_err, sizeof plx_sctp.early_err, "usrsctp_bindx of %d address%s, port %d: %s", nb,
                 nb > 1 ? "es" : "", port, strerror(errno));
        return -1;
    }
    if (usrsctp_listen(plx_sctp.so, 1) != 0) {
        snprintf(plx_sctp.early_err, sizeof plx_sctp.early_err, "usrsctp_listen: %s", strerror(errno));
        return -1;
    }
    return 0;
}

/* usrsctp, the socket, its options and addresses; the card into card. */
static int plx_sctp_start(char *card, size_t cardlen)
{
    struct plx_tcp_card c;
    plx_sctp.streams = (unsigned)plx_config.sctp_streams;
    if (plx_sctp.streams < 4 || plx_sctp.streams > PLX_SCTP_MAX_STREAMS || (plx_sctp.streams & 1)) {
        snprintf(plx_sctp.early_err, sizeof plx_sctp.early_err,
                 "PLEXUS_SCTP_STREAMS=%u must be even, 4..%d", plx_sctp.streams, PLX_SCTP_MAX_STREAMS);
        return -1;
    }
    plx_sctp.cmt = plx_config.sctp_cmt;
    if (plx_sctp_addrs(&c) != 0)
        return -1;
    /* A job within one node: the launcher's MPI_LOCALNRANKS (our mpiexec,
     * Hydra) says whether every rank is on this node; without it, the job
     * counts as spanning nodes. (plx_procs does not know the nodes yet: this
     * runs before the card fence.) */
    const char *ln = getenv("MPI_LOCALNRANKS");
    int one_node = ln && atoi(ln) == plx_procs.n;
    const char *th = plx_config.sctp_threads;
    if (strcmp(th, "auto") && strcmp(th, "on") && strcmp(th, "off")) {
        snprintf(plx_sctp.early_err, sizeof plx_sctp.early_err, "PLEXUS_SCTP_THREADS=%s must be auto, on or off",
                 th);
        return -1;
    }
    plx_sctp.conn = !strcmp(th, "off") || (!strcmp(th, "auto") && one_node);
    if (plx_sctp.conn)
        plx_sctp.cmt = 0;       /* one path per association */
    int port = 0;
    if (plx_sctp.conn) {
        int rc = plx_sctp_conn_start(&port, one_node, plx_sctp.early_err, sizeof plx_sctp.early_err);
        plx_sctp.usrsctp_up = rc != -1;
        if (rc != 0)
            return -1;
    } else {
        port = plx_sctp_udp_port_pick();
        if (port <= 0) {
            snprintf(plx_sctp.early_err, sizeof plx_sctp.early_err, "no free UDP port: %s", strerror(errno));
            return -1;
        }
        usrsctp_init((uint16_t)port, NULL, NULL);
        plx_sctp.usrsctp_up = 1;
        if (!plx_sctp_udp_port_taken(port)) {
            snprintf(plx_sctp.early_err, sizeof plx_sctp.early_err,
                     "usrsctp did not open its UDP encapsulation port %d", port);
            return -1;
        }
        int rcvbuf = plx_sctp_udp_rcvbuf(port);
        plx_debug(1, "sctp: UDP port %d: receive buffer %d bytes", port, rcvbuf);
    }
    plx_sctp.udp_port = (uint16_t)port;
    plx_sctp_sysctls();
    plx_sctp.so = usrsctp_socket(plx_sctp.conn ? AF_CONN : AF_INET, SOCK_SEQPACKET, IPPROTO_SCTP, plx_sctp_rx_cb,
                                 plx_sctp_tx_cb, (uint32_t)(plx_config.sctp_sockbuf / 4), NULL);
    if (!plx_sctp.so) {
        snprintf(plx_sctp.early_err, sizeof plx_sctp.early_err, "usrsctp_socket: %s", strerror(errno));
        return -1;
    }
    usrsctp_set_non_blocking(plx_sctp.so, 1);
    const uint16_t events[] = { SCTP_ASSOC_CHANGE, SCTP_PEER_ADDR_CHANGE, SCTP_SEND_FAILED_EVENT,
                                SCTP_REMOTE_ERROR, SCTP_SHUTDOWN_EVENT };
    for (size_t i = 0; i < sizeof events / sizeof events[0]; i++) {
        struct sctp_event ev = { .se_assoc_id = SCTP_FUTURE_ASSOC, .se_type = events[i], .se_on = 1 };
        if (plx_sctp_setopt(IPPROTO_SCTP, SCTP_EVENT, &ev, sizeof ev, "SCTP_EVENT") != 0)
            return -1;
    }
    int one = 1;
    if (plx_sctp_setopt(IPPROTO_SCTP, SCTP_RECVRCVINFO, &one, sizeof one, "SCTP_RECVRCVINFO") != 0 ||
        plx_sctp_setopt(IPPROTO_SCTP, SCTP_NODELAY, &one, sizeof one, "SCTP_NODELAY") != 0)
        return -1;
    struct sctp_initmsg im = { .sinit_num_ostreams = (uint16_t)plx_sctp.streams,
                               .sinit_max_instreams = (uint16_t)plx_sctp.streams };
    if (plx_sctp_setopt(IPPROTO_SCTP, SCTP_INITMSG, &im, sizeof im, "SCTP_INITMSG") != 0)
        return -1;
    int sb = (int)plx_config.sctp_sockbuf;
    plx_sctp_setopt(SOL_SOCKET, SO_SNDBUF, &sb, sizeof sb, "SO_SNDBUF");
    plx_sctp_setopt(SOL_SOCKET, SO_RCVBUF, &sb, sizeof sb, "SO_RCVBUF");
    /* The path MTU, for every association from birth: usrsctp cuts
     * messages into chunks for the MTU of the moment, and raising it later
     * bundles those chunks into packets of more than 32 mbufs, which its
     * UDP output drops (the association then dies). A job within one node
     * runs over loopback: PLEXUS_SCTP_MTU_LOCAL; one across nodes uses
     * PLEXUS_SCTP_MTU (0: discovery from 1500) for all its associations.
     * This runs before the card fence, when plx_procs does not know the
     * nodes yet (it used to test plx_procs.nlocal, still 0 here, so no job
     * ever had the local MTU: every association ran at 1460): the
     * launcher's MPI_LOCALNRANKS (one_node, above) says whether every rank
     * is on this node. */
    plx_sctp.mtu = (uint32_t)(one_node ? plx_config.sctp_mtu_local : plx_config.sctp_mtu);
    if (plx_sctp.mtu) {
        struct sctp_paddrparams pp;
        memset(&pp, 0, sizeof pp);
        pp.spp_address.ss_family = plx_sctp.conn ? AF_CONN : AF_INET;
        pp.spp_assoc_id = SCTP_FUTURE_ASSOC;
        pp.spp_flags = SPP_PMTUD_DISABLE;
        pp.spp_pathmtu = plx_sctp.mtu;
        if (plx_sctp_setopt(IPPROTO_SCTP, SCTP_PEER_ADDR_PARAMS, &pp, sizeof pp, "SCTP_PEER_ADDR_PARAMS") != 0)
            return -1;
    }
    /* Stream scheduling by priority: usrsctp sends from the highest
     * priority stream with data first, so a small message never waits
     * behind the bulk data queued in usrsctp's send buffer (the default
     * scheduler takes streams in turn; see plx_sctp_assoc_prio). */
    struct sctp_assoc_value ss = { .assoc_id = SCTP_FUTURE_ASSOC, .assoc_value = SCTP_SS_PRIORITY };
    if (plx_sctp_setopt(IPPROTO_SCTP, SCTP_PLUGGABLE_SS, &ss, sizeof ss, "SCTP_PLUGGABLE_SS") != 0)
        return -1;
    if (plx_sctp.cmt) {
        struct sctp_assoc_value av = { .assoc_id = SCTP_FUTURE_ASSOC, .assoc_value = 1 };
        if (plx_sctp_setopt(IPPROTO_SCTP, SCTP_CMT_ON_OFF, &av, sizeof av, "SCTP_CMT_ON_OFF") != 0)
            return -1;
    }
    if (plx_sctp_bind(&c, port) != 0)
        return -1;
    c.port = port;
    if (plx_tcp_card_format(&c, card, cardlen) != 0) {
        snprintf(plx_sctp.early_err, sizeof plx_sctp.early_err, "business card too long");
        return -1;
    }
    return 0;
}

static void plx_sctp_init_early(void)
{
    char card[PLX_PM_MAX_VAL], key[PLX_PM_MAX_KEY];
    memset(&plx_sctp, 0, sizeof plx_sctp);
    pthread_mutex_init(&plx_sctp.rx_lock, NULL);
    plx_sctp.rxq_tail = &plx_sctp.rxq;
    plx_sctp.efd = -1;
    if (!plx_sctp_wanted())
        return;
    gethostname(plx_sctp.host, sizeof plx_sctp.host - 1);
    for (char *s = plx_sctp.host; *s; s++)
        if (*s == '|' || *s == ' ')
            *s = '_';
    /* the callback rings it from the first association on, which may come
     * before open() */
    plx_sctp.efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (plx_sctp.efd < 0) {
        plx_warn("sctp: eventfd: %s", strerror(errno));
        return;
    }
    plx_sctp_secret_early();
    if (plx_sctp_start(card, sizeof card) == 0) {
        plx_sctp.early_ok = 1;
    } else {
        snprintf(card, sizeof card, "none|%s", plx_sctp.early_err);
        for (char *d = card; *d; d++)
            if (*d == ' ' || *d == '\t' || *d == '\n')
                *d = '_';
    }
    snprintf(key, sizeof key, "sctp-%d", plx_procs.my_lpid);
    if (plx_pm_put(key, card) != PLX_OK)
        plx_warn("sctp: cannot publish the business card");
    else
        plx_debug(1, "sctp: business card %s", card);
}

/* --- where the threads run, and how a wait waits ------------------------------------------ */

/* Every packet in or out of usrsctp passes through one of its threads (the
 * UDP receive thread, created in usrsctp_init with the rank's CPU set): a
 * message between two ranks is a hand-off from the sender's rank thread to
 * the receiver's usrsctp thread to the receiver's rank thread. A wait that
 * spins holds the CPU that thread needs, so when SCTP carries all of this
 * rank's traffic (PLEXUS_TRANSPORTS leaves no other transport for its
 * peers, or PLEXUS_ROUTE's rules send everything over sctp) a wait stops
 * spinning after the engine's first check (plx_sctp_cpu_shared: it then
 * yields PLEXUS_YIELD_COUNT times and sleeps on the eventfd) unless the user
 * set PLEXUS_SPIN_COUNT. Not when shared memory or TCP carries some of its
 * traffic: their waits want the spin. (Collectives within a node use their
 * own shared segment and spin as before.)
 *
 * The binding our mpiexec makes by default is kept: each rank and its
 * usrsctp threads share the rank's CPU, so a hand-off is a switch on that
 * CPU. Session 8 (Intel VM) measured the binding given up (every thread on
 * PLEXUS_MPIEXEC_CPUS) faster, 14-16 us a small message against ~35 us
 * bound with the full spin; session 11 (AMD EPYC VM, kernel 6.18), both
 * with the short waits, measured the opposite by 2x: bound 20-26 us against
 * 42-75 unbound, bandwidth 1.2-2x, head-of-line under a 64 MiB stream
 * 95-110 us against 87-212. PLEXUS_SCTP_UNBIND=1 gives it up. */
static int plx_sctp_carries_all(void)
{
    if (plx_route_rules_all_to("sctp"))
        return 1;               /* PLEXUS_ROUTE="*:sctp", whatever else is enabled */
    return plx_config.transports[0] && !plx_route_enabled("tcp") && !plx_route_enabled("ofi") &&
           (!plx_route_enabled("shm") || plx_procs.nlocal == 1);
}

/* Widens every thread of the process (the rank's, usrsctp's, any other)
 * to the CPUs of PLEXUS_MPIEXEC_CPUS; how many it widened. */
static int plx_sctp_unbind(void)
{
    const char *list = getenv("PLEXUS_MPIEXEC_CPUS");
    cpu_set_t set;
    CPU_ZERO(&set);
    for (const char *p = list; p && *p;) {
        char *end;
        long c = strtol(p, &end, 10);
        if (end == p || c < 0 || c >= CPU_SETSIZE)
            return 0;           /* not ours: leave the binding alone */
        CPU_SET((int)c, &set);
        p = *end == ',' ? end + 1 : end;
        if (*end && *end != ',')
            return 0;
    }
    if (CPU_COUNT(&set) < 2)
        return 0;
    DIR *d = opendir("/proc/self/task");
    if (!d)
        return 0;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        int tid = atoi(e->d_name);
        if (tid > 0 && sched_setaffinity(tid, sizeof set, &set) == 0)
            n++;
    }
    closedir(d);
    return n;
}

static void plx_sctp_placement(void)
{
    if (!plx_sctp_carries_all())
        return;
    int n = plx_config.sctp_unbind ? plx_sctp_unbind() : 0;
    /* without usrsctp's threads the wait itself reads the socket: spinning
     * helps as it does over TCP */
    plx_sctp.spin_useless = !plx_sctp.conn && !getenv("PLEXUS_SPIN_COUNT");
    plx_debug(1, "sctp: carries all traffic: %s%s", n ? "threads unbound, " : "",
              plx_sctp.spin_useless ? "waits stop spinning early" : "waits spin PLEXUS_SPIN_COUNT times");
}

/* The progress engine asks after a stretch of idle polls whether spinning
 * on can help (transport.h); here it cannot: what we wait for comes through
 * usrsctp's thread, which needs a CPU. */
static int plx_sctp_cpu_shared(void)
{
    return plx_sctp.spin_useless;
}

static void plx_sctp_finalize(void);
static const struct plx_tp_ops plx_sctp_ops;

static plx_status_t plx_sctp_open(const struct plx_tp_upcalls *up, int needed, struct plx_tp_iface **ifcs, int max,
                                  int *nifc)
{
    *nifc = 0;
    plx_sctp.up = up;
    if (!plx_sctp_wanted() || !needed || max < 1) {
        plx_sctp_finalize();
        return PLX_OK;
    }
    if (!plx_sctp.early_ok || plx_sctp.efd < 0) {
        plx_warn("sctp: rank %d (host %s): %s", plx_procs.my_lpid, plx_sctp.host, plx_sctp.early_err);
        return PLX_ERR_IO;
    }
    if (!plx_sctp.have_secret) {
        char val[PLX_PM_MAX_VAL];
        if (plx_pm_get(PLX_UTIL_SECRET_KEY, val, sizeof val) != PLX_OK || !val[0]) {
            plx_warn("sctp: no job secret in the PMI key-value space (rank 0 could not make one)");
            return PLX_ERR_PM;
        }
        plx_util_secret_from(val, plx_sctp.secret);
        plx_sctp.have_secret = 1;
    }
    plx_sctp.timeout = plx_config.sctp_connect_timeout > 0 ? plx_config.sctp_connect_timeout : 30;
    plx_sctp.frag = PLX_MAX(plx_config.sctp_frag, (size_t)1024);
    plx_sctp.eager_max = plx_config.sctp_eager_max;
    plx_sctp.credit = plx_config.sctp_eager_credit;
    plx_sctp.sendq_max = (size_t)4 << 20;
    /* PLEXUS_SCTP_PACE unset: at most two packets of the path MTU (1500
     * under discovery), and 32K with usrsctp's threads, 12K without (a piece
     * is handled sooner there and a smaller pace costs little bandwidth).
     * Session 11, a ping behind a 64 MiB stream: within a node (MTU 16384)
     * without threads 12K gave 0.9-1.4x idle at 300-350 MB/s, 32K 2.7x;
     * between namespace hosts (MTU 1500) 3K gave 1.1-1.2x without threads
     * (52-55 MB/s) and 1.1-1.8x with them (16-21 MB/s), 32K 2.9-3.5x and
     * 4-11x. */
    plx_sctp.pace = plx_config.sctp_pace;
    if (!getenv("PLEXUS_SCTP_PACE")) {
        size_t packets = 2 * (size_t)(plx_sctp.mtu ? plx_sctp.mtu : 1500);
        plx_sctp.pace = PLX_MIN(plx_sctp.conn ? PLX_SCTP_PACE_NOTHREADS : plx_config.sctp_pace, packets);
    }
    if (plx_sctp.credit < plx_sctp.eager_max + 64) {
        plx_warn("PLEXUS_SCTP_EAGER_CREDIT=%zu must be at least PLEXUS_SCTP_EAGER_MAX (%zu) + 64", plx_sctp.credit,
                 plx_sctp.eager_max);
        return PLX_ERR_ARG;
    }
    if (plx_sctp.frag + sizeof(struct plx_hdr) > plx_config.sctp_sockbuf / 2) {
        plx_warn("PLEXUS_SCTP_FRAG=%zu must be below half of PLEXUS_SCTP_SOCKBUF (%zu)", plx_sctp.frag,
                 plx_config.sctp_sockbuf);
        return PLX_ERR_ARG;
    }
    plx_sctp.peers = plx_calloc((size_t)plx_procs.n, sizeof *plx_sctp.peers);
    plx_list_init(&plx_sctp.assocs);
    plx_list_init(&plx_sctp.busy);
    plx_list_init(&plx_sctp.failed);
    plx_list_init(&plx_sctp.selfq);
    plx_sctp.txbuf = plx_malloc(plx_sctp.frag);
    struct plx_tp_iface *ifc = &plx_sctp.ifc;
    ifc->ops = &plx_sctp_ops;
    ifc->comp = &plx_sctp_component;
    ifc->rail = 0;
    snprintf(ifc->name, sizeof ifc->name, "sctp0");
    snprintf(ifc->detail, sizeof ifc->detail, "usrsctp, UDP port %u, %d address%s", plx_sctp.udp_port,
             plx_sctp.nmy + !plx_sctp.rules.ninclude, plx_sctp.nmy + !plx_sctp.rules.ninclude == 1 ? "" : "es");
    ifc->caps = (struct plx_tp_caps){
        .max_packet = (size_t)1 << 40,
        .max_iov = 7,
        .eager_max = plx_sctp.eager_max,
        .eager_credit = plx_sctp.credit,
        .flags = PLX_TP_RELIABLE | PLX_TP_ZCOPY,
        .latency_class = 2,     /* after TCP: used where TCP is left out, or a rule names it */
        .bw_class = 1,
    };
    plx_sctp.initialized = 1;
    plx_sctp_placement();
    ifcs[0] = ifc;
    *nifc = 1;
    plx_debug(1, "sctp: UDP port %u, %u streams, fragments of %zu bytes, eager up to %zu bytes, path MTU %u "
              "(0: discovered)%s%s", plx_sctp.udp_port, plx_sctp.streams, plx_sctp.frag, plx_sctp.eager_max,
              plx_sctp.mtu, plx_sctp.cmt ? ", CMT on" : "",
              plx_sctp.conn ? ", without usrsctp's threads (one path per association)" : "");
    return PLX_OK;
}

/* --- finalize ------------------------------------------------------------------------- */

/* SCTP_GET_SNDBUF_USE: read-only option of usrsctp's stack (the bytes an
 * association holds for sending) that usrsctp.h does not name. */
#ifndef SCTP_GET_SNDBUF_USE
#define SCTP_GET_SNDBUF_USE 0x00001101
struct sctp_sockstat {
    sctp_assoc_t ss_assoc_id;
    uint32_t ss_total_sndbuf;
    uint32_t ss_total_recv_buf;
};
#endif

size_t plx_sctp_outq(struct plx_sctp_assoc *a)
{
    struct sctp_sockstat ss;
    socklen_t sl = sizeof ss;
    memset(&ss, 0, sizeof ss);
    ss.ss_assoc_id = a->id;
    if (usrsctp_getsockopt(plx_sctp.so, IPPROTO_SCTP, SCTP_GET_SNDBUF_USE, &ss, &sl) != 0)
        return 0;               /* gone: the notification follows */
    return ss.ss_total_sndbuf;
}

/* Does usrsctp still hold data of ours that the peer has not acknowledged? */
static int plx_sctp_unacked(struct plx_sctp_assoc *a)
{
    struct sctp_status st;
    socklen_t sl = sizeof st;
    memset(&st, 0, sizeof st);
    st.sstat_assoc_id = a->id;
    if (usrsctp_getsockopt(plx_sctp.so, IPPROTO_SCTP, SCTP_STATUS, &st, &sl) != 0)
        return 0;               /* gone */
    return st.sstat_unackdata || st.sstat_penddata;
}

static void *plx_sctp_finish_thread(void *arg)
{
    atomic_int *done = arg;
    for (int i = 0; i < 300; i++) {
        if (usrsctp_finish() == 0) {
            atomic_store(done, 1);
            return NULL;
        }
        struct timespec t = { 0, 10 * 1000 * 1000 };
        nanosleep(&t, NULL);
    }
    atomic_store(done, 2);
    return NULL;
}

/* PLEXUS_DEBUG=1: usrsctp's own counters at finalize (retransmissions and
 * output errors explain slow transfers). */
static void plx_sctp_debug_stats(void)
{
    if (plx_log_debug < 1 || !plx_sctp.usrsctp_up)
        return;
    struct sctpstat st;
    memset(&st, 0, sizeof st);
    usrsctp_get_stat(&st);
    plx_debug(1, "sctp: usrsctp: %u packets sent, %u DATA chunks retransmitted (%u fast), %u timeouts of "
              "data, %u output errors", st.sctps_sendpackets, st.sctps_sendretransdata, st.sctps_sendfastretrans,
              st.sctps_timodata, st.sctps_senderrors);
    plx_debug(1, "sctp: %llu small messages sent with on average %.0f bytes ahead of each in usrsctp; %llu "
              "received, on average %.1f us from usrsctp's callback to our poll; rendezvous paced %llu times",
              (unsigned long long)plx_sctp.st_small,
              plx_sctp.st_small ? (double)plx_sctp.st_small_ahead / (double)plx_sctp.st_small : 0.0,
              (unsigned long long)plx_sctp.st_small_rx,
              plx_sctp.st_small_rx ? plx_sctp.st_small_handoff / (double)plx_sctp.st_small_rx * 1e6 : 0.0,
              (unsigned long long)plx_sctp.st_paced);
}

static void plx_sctp_stop_stack(void)
{
    plx_sctp_debug_stats();
    if (plx_sctp.so) {
        struct linger lg = { .l_onoff = 1, .l_linger = 0 };
        usrsctp_setsockopt(plx_sctp.so, SOL_SOCKET, SO_LINGER, &lg, sizeof lg);
        usrsctp_close(plx_sctp.so);
        plx_sctp.so = NULL;
    }
    if (!plx_sctp.usrsctp_up)
        return;
    plx_sctp.usrsctp_up = 0;
    if (plx_sctp.conn) {
        plx_sctp_conn_shutdown();
        return;
    }
    /* usrsctp_finish returns -1 while endpoints linger; it has also been
     * seen to hang: a helper thread is given 2 s, then left behind */
    static atomic_int done;
    atomic_store(&done, 0);
    pthread_t t;
    if (pthread_create(&t, NULL, plx_sctp_finish_thread, &done) != 0)
        return;
    double end = plx_util_now() + 2.0;
    while (!atomic_load(&done) && plx_util_now() < end) {
        struct timespec ts = { 0, 5 * 1000 * 1000 };
        nanosleep(&ts, NULL);
    }
    if (atomic_load(&done) == 1) {
        pthread_join(t, NULL);
    } else {
        pthread_detach(t);
        plx_debug(1, "sctp: usrsctp_finish did not complete within 2 s; the stack's threads end with the process");
    }
}

static void plx_sctp_finalize(void)
{
    if (plx_sctp.initialized) {
        plx_sctp.finalizing = 1;
        for (int i = 0; i < plx_procs.n; i++) {
            struct plx_sctp_peer *p = plx_sctp.peers[i];
            if (p && p->state == PLX_SCTP_P_OPEN)
                plx_sctp_send_ctl(p, p->out, PLX_SCTP_PKT_BYE, NULL, 0);
        }
        /* our data acknowledged, and the peer's BYE seen (bounded): an
         * abort that reached a peer before our BYE was handed to it would be
         * a failure there, if it is not finalizing yet */
        double start = plx_util_now(), end = start + PLX_SCTP_FINALIZE_SECONDS;
        for (;;) {
            plx_sctp_poll();
            int pending = 0, byes = plx_util_now() < start + PLX_SCTP_BYE_WAIT;
            for (int i = 0; i < plx_procs.n && !pending; i++) {
                struct plx_sctp_peer *p = plx_sctp.peers[i];
                if (!p)
                    continue;
                if (p->state == PLX_SCTP_P_OPEN && (p->nqueued || (p->out && plx_sctp_unacked(p->out))))
                    pending = 1;
                if (p->state == PLX_SCTP_P_OPEN && byes && !p->said_bye)
                    pending = 1;
                if (p->state == PLX_SCTP_P_CONNECTING || p->state == PLX_SCTP_P_HELLO_SENT)
                    pending = 1;
            }
            if (!pending)
                break;
            if (plx_util_now() > end) {
                plx_warn("sctp: rank %d: data to some peers still unacknowledged after %.0f s at MPI_Finalize; "
                         "closing anyway", plx_procs.my_lpid, PLX_SCTP_FINALIZE_SECONDS);
                break;
            }
            struct timespec ts = { 0, 200 * 1000 };
            nanosleep(&ts, NULL);
        }
    }
    plx_sctp_stop_stack();
    if (plx_sctp.initialized) {
        plx_sctp_rx_drain();    /* what arrived until the close: freed */
        for (int i = 0; i < plx_procs.n; i++) {
            struct plx_sctp_peer *p = plx_sctp.peers[i];
            if (!p)
                continue;
            plx_sctp_peer_drop_queue(p, PLX_ERR_PEER);
            free(p->fail_why);
            free(p);
        }
        while (!plx_list_empty(&plx_sctp.assocs))
            plx_sctp_assoc_free(plx_list_entry(plx_sctp.assocs.next, struct plx_sctp_assoc, link));
        while (!plx_list_empty(&plx_sctp.selfq)) {
            struct plx_sctp_selfpkt *s = plx_list_entry(plx_sctp.selfq.next, struct plx_sctp_selfpkt, link);
            plx_list_remove(&s->link);
            free(s);
        }
        free(plx_sctp.peers);
        free(plx_sctp.by_id);
        free(plx_sctp.txbuf);
        free(plx_sctp.zc_done);
    }
    /* usrsctp's threads may still call back (when finish was left behind):
     * the callback frees what it is given once rx_pending is -1 */
    pthread_mutex_lock(&plx_sctp.rx_lock);
    for (struct plx_sctp_rx *m = plx_sctp.rxq, *nx; m; m = nx) {
        nx = m->next;
        free(m->data);
        free(m);
    }
    plx_sctp.rxq = NULL;
    plx_sctp.rxq_tail = &plx_sctp.rxq;
    atomic_store(&plx_sctp.rx_pending, -1);
    pthread_mutex_unlock(&plx_sctp.rx_lock);
    if (plx_sctp.conn)
        plx_sctp_conn_release();        /* after the last drain: notifications may name an endpoint */
    if (plx_sctp.efd >= 0)
        close(plx_sctp.efd);
    plx_sctp.efd = -1;
    plx_sctp.initialized = 0;
    plx_sctp.peers = NULL;
    plx_sctp.by_id = NULL;
    plx_sctp.nby_id = 0;
    plx_sctp.txbuf = NULL;
    plx_sctp.zc_done = NULL;
}

/* --- plexus-info ------------------------------------------------------------------------ */

static int plx_sctp_query(char *msg, size_t len)
{
    struct plx_tcp_card c;
    memset(&plx_sctp, 0, sizeof plx_sctp);
    plx_sctp.efd = -1;
    gethostname(plx_sctp.host, sizeof plx_sctp.host - 1);
    if (plx_sctp_addrs(&c) != 0) {
        snprintf(msg, len, "%s", plx_sctp.early_err);
        return 0;
    }
    size_t l = (size_t)snprintf(msg, len, "userland SCTP (usrsctp) over UDP encapsulation, one-to-many socket, "
                                "%d streams; addresses:", plx_config.sctp_streams);
    if (c.nlo && l < len)
        l += (size_t)snprintf(msg + l, len - l, " 127.0.0.1 (this node)");
    for (int i = 0; i < plx_sctp.nmy && l < len; i++) {
        char a[INET6_ADDRSTRLEN];
        plx_iface_ip_format(&plx_sctp.my[i].a, a, sizeof a);
        l += (size_t)snprintf(msg + l, len - l, " %s (%s)", a, plx_sctp.my[i].ifname);
    }
    if (l < len && !plx_sctp_wanted())
        snprintf(msg + l, len - l, "; used only when PLEXUS_TRANSPORTS or PLEXUS_ROUTE names sctp");
    return 1;
}

static const struct plx_tp_ops plx_sctp_ops = {
    .reaches = plx_sctp_reaches,
    .send = plx_sctp_send,
    .send_zcopy = plx_sctp_send_zcopy,
    .backlog = plx_sctp_backlog,
};

const struct plx_tp_component plx_sctp_component = {
    .name = "sctp",
    .query = plx_sctp_query,
    .init_early = plx_sctp_init_early,
    .open = plx_sctp_open,
    .poll = plx_sctp_poll,
    .sleep_prepare = plx_sctp_sleep_prepare,
    .sleep_done = plx_sctp_sleep_done,
    .cpu_shared = plx_sctp_cpu_shared,
    .finalize = plx_sctp_finalize,
};
