/*
 * TCP transport: the send queue and the writes (see tcp.c for the whole).
 *
 * With nothing queued, send() is one sendmsg of header + payload (a small
 * packet is copied together and written with send()); the bytes the socket
 * does not take are copied into the peer's queue (bounded by
 * PLEXUS_TCP_SENDQ_MAX, beyond which send() says BUSY). Queued packets leave
 * together, gathered into one sendmsg, as soon as the socket has room;
 * nothing waits for more. Rendezvous DATA goes through send_zcopy: the whole
 * message is one packet whose payload is written straight from the user's
 * buffer, and its completion object is completed from the poll after the
 * last byte is with the kernel.
 *
 * This is the small-message path: plx_tcp_send -> plx_tcp_send_common ->
 * plx_tcp_writev stay in this one file, so that they inline.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include "core/log.h"
#include "core/runtime.h"
#include "transport/tcp/tcp_impl.h"

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

void plx_tcp_sbuf_free(struct plx_tcp_sbuf *b)
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
void plx_tcp_enqueue(struct plx_tcp_peer *p, const struct iovec *v, int n, size_t skip, struct plx_tp_comp *comp)
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
        if (p->bye) {           /* a write to a peer that said it finalized: the program's error */
            char me[128], him[128];
            plx_tcp_who(plx_procs.my_lpid, me, sizeof me);
            plx_tcp_who(p->lpid, him, sizeof him);
            plx_fatal("tcp: %s sends to %s, which has already finalized", me, him);
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
int plx_tcp_flush(struct plx_tcp_peer *p)
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

/* --- the send operations ----------------------------------------------------------- */

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

plx_status_t plx_tcp_send(struct plx_tp_iface *ifc, int lpid, const struct plx_hdr *hdr, const struct iovec *iov,
                          int iovcnt)
{
    if (plx_unlikely(lpid == plx_procs.my_lpid)) {
        plx_tcp_self_send(hdr, iov, iovcnt, NULL);
        return PLX_OK;
    }
    return plx_tcp_send_common(plx_tcp_rail_of(ifc), lpid, hdr, iov, iovcnt, NULL);
}

plx_status_t plx_tcp_send_zcopy(struct plx_tp_iface *ifc, int lpid, const struct plx_hdr *hdr,
                                const struct iovec *iov, int iovcnt, struct plx_tp_comp *comp)
{
    if (plx_unlikely(lpid == plx_procs.my_lpid)) {
        plx_tcp_self_send(hdr, iov, iovcnt, comp);
        return PLX_OK;
    }
    return plx_tcp_send_common(plx_tcp_rail_of(ifc), lpid, hdr, iov, iovcnt, comp);
}
