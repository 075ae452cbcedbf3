/*
 * TCP transport: the receive parser (see tcp.c for the whole).
 *
 * A socket is read into one buffer shared by all connections, and whole
 * packets in it are dispatched in place (plx_tcp_rx_feed). Only a packet cut
 * by the end of a read moves to its connection: a short header into the
 * connection, an eager payload into a buffer of its own, and the payload of
 * DATA into the place the layer above names (the place upcall: the posted
 * receive buffer), read with readv straight there; what does not fit there
 * (a truncated receive) is read and discarded, and placed() follows. A
 * header of an unknown type or an oversized length is a corrupt stream: a
 * link failure. Per-connection memory is thus only what a half-read packet
 * needs.
 *
 * This is the receive path: plx_tcp_on_readable and the parser stay in this
 * one file, so that they inline.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include "core/log.h"
#include "transport/tcp/tcp_impl.h"

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
void plx_tcp_rx_feed(struct plx_tcp_conn *c, const char *buf, size_t n)
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
        case PLX_TCP_RX_PAYLOAD:
            if (c->rgot == 0 && n >= c->rlen) {
                struct plx_hdr h = c->rh;
                size_t len = c->rlen;
                plx_tcp_rx_reset(c);
                plx_tcp_rx_packet(c, &h, buf);
                buf += len;
                n -= len;
                break;
            }
            /* the piece is copied into its own buffer as DIRECT's into the user's */
            if (!c->rbuf)
                c->rbuf = plx_malloc(c->rlen);
            /* fall through */
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
    if ((p->bye || p->dropping) && !err) {
        plx_debug(2, "tcp: rank %d finalized or disconnected and closed its connection", p->lpid);
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
int plx_tcp_on_readable(struct plx_tcp_conn *c)
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
