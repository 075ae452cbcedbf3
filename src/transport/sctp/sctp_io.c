/*
 * SCTP transport: moving packets (see sctp.c for the whole, sctp_wire.h for
 * the streams).
 *
 * Receiving. usrsctp calls plx_sctp_rx_cb from its own threads with each
 * message (or notification) in a buffer of its making; the callback links
 * it, as it is, onto one queue under a mutex and writes the eventfd (once
 * until the poll reads it), which is what a sleeping wait watches. The poll
 * takes the whole queue at once and parses each message into its
 * (association, stream) parser: a packet whole in one message is handed
 * up from usrsctp's buffer; DATA is copied straight to where place() says;
 * another packet split over messages is put together in a buffer first.
 * Memory: the queue holds what the peers were allowed to send, eager data
 * within PLEXUS_SCTP_EAGER_CREDIT and rendezvous data that this side asked
 * for, plus control packets.
 *
 * Sending. Each peer has a queue per stream. With the stream's queue empty,
 * send() builds header and payload into one message and hands it to
 * usrsctp_sendv (non-blocking; usrsctp copies it); otherwise, or when
 * usrsctp's send buffer is full, the packet is copied into the stream's
 * queue. Rendezvous DATA (send_zcopy) is queued by reference and cut into
 * messages of PLEXUS_SCTP_FRAG bytes sent straight from the user's buffer;
 * its completion is reported by the poll once usrsctp has taken the last
 * byte. Flushing serves stream 0 first, then the matched-message streams,
 * then the DATA streams, so a small message never waits in our queues behind
 * a bulk transfer. In usrsctp's it would wait behind whatever of the bulk
 * usrsctp already holds (up to the window), so while eager messages flow
 * between two ranks the DATA streams are paced (PLEXUS_SCTP_PACE): pieces
 * of half the pace, sent only while usrsctp holds less than the pace for
 * the association; the send callback wakes the engine when an
 * acknowledgement frees room.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "core/log.h"
#include "core/runtime.h"
#include "util/util.h"
#include "transport/sctp/sctp_impl.h"

void plx_sctp_self_send(const struct plx_hdr *hdr, const struct iovec *iov, int iovcnt, struct plx_tp_comp *comp);

/* Largest non-DATA packet a peer may announce (reassembled in memory). */
#define PLX_SCTP_PKT_MAX ((uint32_t)1 << 30)

/* --- the callback (usrsctp's threads) ---------------------------------------------- */

static void plx_sctp_ring(void)
{
    if (!atomic_exchange_explicit(&plx_sctp.rang, 1, memory_order_acq_rel)) {
        uint64_t one = 1;
        if (write(plx_sctp.efd, &one, sizeof one) < 0) {
            /* the counter is full or the fd closed at finalize: nothing to do */
        }
    }
}

int plx_sctp_rx_cb(struct socket *so, union sctp_sockstore addr, void *data, size_t len, struct sctp_rcvinfo rcv,
                   int flags, void *ulp)
{
    if (!data)
        return 1;               /* the socket is closing */
    struct plx_sctp_rx *m = malloc(sizeof *m);
    if (!m) {
        free(data);
        return 1;
    }
    m->next = NULL;
    m->data = data;
    m->len = len;
    m->notification = (flags & MSG_NOTIFICATION) != 0;
    m->assoc = rcv.rcv_assoc_id;
    m->sid = rcv.rcv_sid;
    m->t = plx_log_debug >= 1 ? plx_util_now() : 0;
    pthread_mutex_lock(&plx_sctp.rx_lock);
    if (atomic_load(&plx_sctp.rx_pending) < 0) {   /* finalized */
        pthread_mutex_unlock(&plx_sctp.rx_lock);
        free(data);
        free(m);
        return 1;
    }
    *plx_sctp.rxq_tail = m;
    plx_sctp.rxq_tail = &m->next;
    atomic_fetch_add_explicit(&plx_sctp.rx_pending, 1, memory_order_release);
    pthread_mutex_unlock(&plx_sctp.rx_lock);
    plx_sctp_ring();
    return 1;
}

/* usrsctp calls this whenever acknowledged data frees room in the send
 * buffer, i.e. on nearly every SACK. It wakes the progress engine only when
 * a send found usrsctp full (want_room): a wake-up per SACK cost every
 * message an extra switch to a thread with nothing to do. */
int plx_sctp_tx_cb(struct socket *so, uint32_t sb_free, void *ulp)
{
    if (atomic_exchange_explicit(&plx_sctp.want_room, 0, memory_order_acq_rel))
        plx_sctp_ring();
    return 0;
}

/* The eventfd is readable while rang is 1; reading it lets the callback
 * ring again. */
void plx_sctp_unring(void)
{
    if (atomic_exchange_explicit(&plx_sctp.rang, 0, memory_order_acq_rel)) {
        uint64_t v;
        if (read(plx_sctp.efd, &v, sizeof v) < 0) {
            /* EAGAIN: already read */
        }
    }
}

/* --- receiving (the poll) ---------------------------------------------------------------- */

static void plx_sctp_rstream_reset(struct plx_sctp_rstream *rs)
{
    free(rs->buf);
    rs->buf = NULL;
    rs->hgot = rs->pgot = 0;
    rs->dst = NULL;
    rs->fit = 0;
}

void plx_sctp_assoc_reset_streams(struct plx_sctp_assoc *a)
{
    for (unsigned s = 0; a->rs && s < plx_sctp.streams; s++)
        plx_sctp_rstream_reset(&a->rs[s]);
}

static void plx_sctp_deliver(struct plx_sctp_assoc *a, const struct plx_hdr *h, const void *payload)
{
    if (h->type == PLX_PKT_EAGER && plx_sctp.pace && a->lpid >= 0 && plx_sctp.peers[a->lpid])
        plx_sctp.peers[a->lpid]->chatty_until = plx_util_now() + PLX_SCTP_PACE_HOLD;
    if (h->type >= PLX_SCTP_PKT_HELLO)
        plx_sctp_on_ctl(a, h, payload);
    else if (plx_likely(!plx_sctp.finalizing))      /* finalize's polls: the layers above are gone */
        plx_sctp.up->recv[h->type](&plx_sctp.ifc, a->lpid, h, payload);
}

/* A header is complete: is it acceptable from this association? */
static int plx_sctp_hdr_ok(struct plx_sctp_assoc *a, const struct plx_hdr *h, const char **why)
{
    int ctl = h->type == PLX_SCTP_PKT_HELLO || h->type == PLX_SCTP_PKT_HELLO_ACK || h->type == PLX_SCTP_PKT_BYE;
    if (!ctl && (h->type == 0 || h->type >= PLX_PKT_TYPE_MAX)) {
        *why = "a packet of unknown type";
        return 0;
    }
    if (!a->auth && h->type != PLX_SCTP_PKT_HELLO && h->type != PLX_SCTP_PKT_HELLO_ACK) {
        *why = "data before its HELLO";
        return 0;
    }
    if (h->type != PLX_PKT_DATA && h->len > PLX_SCTP_PKT_MAX) {
        *why = "a packet longer than 1 GiB";
        return 0;
    }
    return 1;
}

/* One message of stream sid of association a. */
static void plx_sctp_on_data(struct plx_sctp_assoc *a, unsigned sid, const char *p, size_t left)
{
    if (sid >= plx_sctp.streams) {
        plx_sctp_abort(a, "a message on a stream beyond PLEXUS_SCTP_STREAMS");
        return;
    }
    struct plx_sctp_rstream *rs = &a->rs[sid];
    while (left) {
        if (rs->hgot < sizeof rs->h) {
            size_t n = PLX_MIN(sizeof rs->h - rs->hgot, left);
            memcpy((char *)&rs->h + rs->hgot, p, n);
            rs->hgot += n;
            p += n;
            left -= n;
            if (rs->hgot < sizeof rs->h)
                return;
            const char *why;
            if (!plx_sctp_hdr_ok(a, &rs->h, &why)) {
                plx_sctp.st_strangers += !a->auth;
                plx_sctp_abort(a, why);
                plx_sctp_rstream_reset(rs);
                return;
            }
            rs->pgot = 0;
            if (rs->h.type == PLX_PKT_DATA)
                rs->dst = plx_sctp.up->place(&plx_sctp.ifc, a->lpid, &rs->h, &rs->fit);
        }
        const struct plx_hdr *h = &rs->h;
        size_t need = h->len - rs->pgot;
        if (h->type == PLX_PKT_DATA) {
            size_t n = PLX_MIN(need, left);
            if (rs->pgot < rs->fit)
                memcpy(rs->dst + rs->pgot, p, PLX_MIN(n, rs->fit - rs->pgot));
            rs->pgot += n;
            p += n;
            left -= n;
            if (rs->pgot == h->len) {
                struct plx_hdr hc = *h;
                plx_sctp_rstream_reset(rs);
                plx_sctp.up->placed(&plx_sctp.ifc, a->lpid, &hc);
            }
            continue;
        }
        if (rs->pgot == 0 && left >= need) {    /* whole in this message: from usrsctp's buffer */
            struct plx_hdr hc = *h;
            plx_sctp_rstream_reset(rs);
            plx_sctp_deliver(a, &hc, p);
            p += need;
            left -= need;
            if (!a->up)
                return;         /* aborted by the handshake */
            continue;
        }
        if (!rs->buf)
            rs->buf = plx_malloc(h->len);
        size_t n = PLX_MIN(need, left);
        memcpy(rs->buf + rs->pgot, p, n);
        rs->pgot += n;
        p += n;
        left -= n;
        if (rs->pgot == h->len) {
            struct plx_hdr hc = *h;
            char *buf = rs->buf;
            rs->buf = NULL;
            plx_sctp_rstream_reset(rs);
            plx_sctp_deliver(a, &hc, buf);
            free(buf);
            if (!a->up)
                return;
        }
    }
}

int plx_sctp_rx_drain(void)
{
    plx_sctp_unring();
    pthread_mutex_lock(&plx_sctp.rx_lock);
    struct plx_sctp_rx *m = plx_sctp.rxq;
    plx_sctp.rxq = NULL;
    plx_sctp.rxq_tail = &plx_sctp.rxq;
    if (atomic_load(&plx_sctp.rx_pending) > 0)
        atomic_store(&plx_sctp.rx_pending, 0);
    pthread_mutex_unlock(&plx_sctp.rx_lock);
    /* Two passes: notifications, control and matched streams first, then
     * the rendezvous DATA streams. Streams are independent (each keeps its
     * own order), so a ping that arrived behind megabytes of bulk data is
     * handed up before they are copied. */
    int work = 0;
    unsigned half = plx_sctp.streams / 2;
    struct plx_sctp_rx *later = NULL, **later_tail = &later;
    for (int pass = 0; pass < 2; pass++) {
        while (m) {
            struct plx_sctp_rx *nx = m->next;
            if (pass == 0 && !m->notification && m->sid >= half) {
                m->next = NULL;
                *later_tail = m;
                later_tail = &m->next;
                m = nx;
                continue;
            }
            if (m->t > 0 && !m->notification && m->sid < half) {
                plx_sctp.st_small_rx++;
                plx_sctp.st_small_handoff += plx_util_now() - m->t;
            }
            if (plx_sctp.initialized) {
                if (m->notification) {
                    plx_sctp_notification(m);
                } else {
                    struct plx_sctp_assoc *a = plx_sctp_assoc_find(m->assoc);
                    /* finalizing: rendezvous data has nowhere to go (the layers
                     * above are gone); the other streams still carry BYE */
                    if (a && a->up && !(plx_sctp.finalizing && m->sid >= half))
                        plx_sctp_on_data(a, m->sid, m->data, m->len);
                }
            }
            free(m->data);
            free(m);
            m = nx;
            work++;
        }
        m = later;
    }
    return work;
}

/* --- sending ------------------------------------------------------------------------------ */

static void plx_sctp_zc_done(struct plx_tp_comp *c)
{
    if (plx_sctp.nzc_done == plx_sctp.zc_cap) {
        plx_sctp.zc_cap = plx_sctp.zc_cap ? 2 * plx_sctp.zc_cap : 64;
        plx_sctp.zc_done = realloc(plx_sctp.zc_done, plx_sctp.zc_cap * sizeof *plx_sctp.zc_done);
        if (!plx_sctp.zc_done)
            plx_fatal("sctp: out of memory");
    }
    plx_sctp.zc_done[plx_sctp.nzc_done++] = c;
}

static void plx_sctp_enqueue(struct plx_sctp_peer *p, unsigned s, const struct plx_hdr *hdr, const struct iovec *iov,
                             int iovcnt, struct plx_tp_comp *comp)
{
    int ncopy = comp ? iovcnt - 1 : iovcnt;
    size_t copied = sizeof *hdr;
    for (int i = 0; i < ncopy; i++)
        copied += iov[i].iov_len;
    struct plx_sctp_sbuf *b = plx_malloc(sizeof *b + copied);
    memcpy(b->data, hdr, sizeof *hdr);
    size_t off = sizeof *hdr;
    for (int i = 0; i < ncopy; i++) {
        memcpy(b->data + off, iov[i].iov_base, iov[i].iov_len);
        off += iov[i].iov_len;
    }
    b->copied = copied;
    b->done = 0;
    b->comp = comp;
    b->zc = comp ? iov[iovcnt - 1].iov_base : NULL;
    b->zc_len = comp ? iov[iovcnt - 1].iov_len : 0;
    if (p->nqueued == 0)
        plx_list_push_back(&plx_sctp.busy, &p->busy_link);
    plx_list_push_back(&p->sq[s], &b->link);
    p->nqueued++;
    p->queued += copied + b->zc_len;
}

static ssize_t plx_sctp_sendmsg(struct plx_sctp_assoc *a, unsigned s, const void *buf, size_t len)
{
    /* SACK_IMMEDIATELY (the I bit): the receiver acknowledges the message
     * at once instead of after its delayed-SACK timer; request/response
     * traffic (RTS -> CTS -> DATA, ping-pong) otherwise waits for it */
    struct sctp_sndinfo si = { .snd_sid = (uint16_t)s, .snd_flags = SCTP_SACK_IMMEDIATELY, .snd_assoc_id = a->id };
    return usrsctp_sendv(plx_sctp.so, buf, len, NULL, 0, &si, sizeof si, SCTP_SENDV_SNDINFO, 0);
}

/* Sends what stream s of p has queued, message by message, until usrsctp
 * is full. 1 if the stream is empty afterwards, 0 if usrsctp was full, -1
 * when the association refused (it is going down: the notification
 * follows). */
static int plx_sctp_flush_stream(struct plx_sctp_peer *p, unsigned s, int *work)
{
    struct plx_list *q = &p->sq[s];
    int paced = plx_sctp.pace && s >= plx_sctp.streams / 2 && plx_util_now() < p->chatty_until;
    size_t piece = paced ? PLX_MAX(PLX_MIN(plx_sctp.frag, plx_sctp.pace / 2), (size_t)1024) : plx_sctp.frag;
    while (!plx_list_empty(q)) {
        struct plx_sctp_sbuf *b = plx_list_entry(q->next, struct plx_sctp_sbuf, link);
        const char *msg;
        size_t len;
        if (b->done >= b->copied && b->zc_len - (b->done - b->copied) >= piece) {
            /* the bulk of a zero-copy packet: straight from the user's buffer */
            msg = b->zc + (b->done - b->copied);
            len = piece;
        } else {
            /* gather: the rest of this packet and whole packets after it, up to frag bytes */
            len = 0;
            struct plx_list *pos = &b->link;
            while (pos != q && len < plx_sctp.frag) {
                struct plx_sctp_sbuf *c = plx_list_entry(pos, struct plx_sctp_sbuf, link);
                size_t from = c == b ? c->done : 0;
                size_t total = c->copied + c->zc_len;
                if (c != b && total > plx_sctp.frag - len)
                    break;      /* only whole packets ride along */
                while (from < total && len < plx_sctp.frag) {
                    size_t n;
                    if (from < c->copied) {
                        n = PLX_MIN(c->copied - from, plx_sctp.frag - len);
                        memcpy(plx_sctp.txbuf + len, c->data + from, n);
                    } else {
                        n = PLX_MIN(total - from, plx_sctp.frag - len);
                        memcpy(plx_sctp.txbuf + len, c->zc + (from - c->copied), n);
                    }
                    from += n;
                    len += n;
                }
                pos = pos->next;
            }
            msg = plx_sctp.txbuf;
        }
        if (paced && p->paced_wait && atomic_load_explicit(&plx_sctp.want_room, memory_order_acquire))
            return 0;           /* nothing acknowledged since the last look (the send callback clears it) */
        /* Ask for the send callback's ring before looking at usrsctp's
         * room (held bytes, or a send that finds it full): an
         * acknowledgement that frees room after the look then still rings.
         * Asked for after it, one that came in between was lost, and the
         * stream waited for the next (a paced 64 MiB message sometimes
         * crawled at 25-37 MB/s). Withdrawn again when the send went. */
        int had = atomic_exchange_explicit(&plx_sctp.want_room, 1, memory_order_acq_rel);
        if (paced) {
            /* rendezvous data while eager messages flow between us: at
             * most `pace` bytes in usrsctp at a time, so that the next
             * eager message waits behind little; the acknowledgements that
             * free room call the send callback, which wakes the engine to
             * send the next piece */
            size_t held = plx_sctp_outq(p->out);
            if (held && held + len > plx_sctp.pace) {
                plx_sctp.st_paced++;
                p->paced_wait = 1;
                return 0;
            }
            p->paced_wait = 0;
        }
        ssize_t w = plx_sctp_sendmsg(p->out, s, msg, len);
        if (w < 0 && (errno == EWOULDBLOCK || errno == EAGAIN || errno == ENOBUFS))
            return 0;
        if (!had)
            atomic_store_explicit(&plx_sctp.want_room, 0, memory_order_release);
        if (w < 0)
            return -1;
        (*work)++;
        /* account len bytes from the head on */
        size_t left = len;
        while (left) {
            struct plx_sctp_sbuf *c = plx_list_entry(q->next, struct plx_sctp_sbuf, link);
            size_t total = c->copied + c->zc_len;
            size_t n = PLX_MIN(total - c->done, left);
            c->done += n;
            left -= n;
            p->queued -= n;
            if (c->done == total) {
                plx_list_remove(&c->link);
                p->nqueued--;
                if (c->comp)
                    plx_sctp_zc_done(c->comp);
                free(c);
            }
        }
    }
    return 1;
}

int plx_sctp_flush(struct plx_sctp_peer *p)
{
    int work = 0;
    if (p->state != PLX_SCTP_P_OPEN || !p->out || !p->nqueued)
        return 0;
    /* stream 0, then the matched streams, then the DATA streams */
    for (unsigned s = 0; s < plx_sctp.streams && p->nqueued; s++) {
        if (plx_list_empty(&p->sq[s]))
            continue;
        if (plx_sctp_flush_stream(p, s, &work) <= 0)
            break;
    }
    if (!p->nqueued)
        plx_list_remove(&p->busy_link);
    return work;
}

int plx_sctp_flush_all(void)
{
    int work = 0;
    struct plx_list *pos, *nx;
    plx_list_for_each_safe(pos, nx, &plx_sctp.busy)
        work += plx_sctp_flush(plx_container_of(pos, struct plx_sctp_peer, busy_link));
    return work;
}

void plx_sctp_peer_drop_queue(struct plx_sctp_peer *p, plx_status_t st)
{
    (void)st;                   /* link_failed: what was accepted is neither delivered nor completed */
    for (unsigned s = 0; s < plx_sctp.streams; s++) {
        while (!plx_list_empty(&p->sq[s])) {
            struct plx_sctp_sbuf *b = plx_list_entry(p->sq[s].next, struct plx_sctp_sbuf, link);
            plx_list_remove(&b->link);
            free(b);
        }
    }
    if (p->nqueued)
        plx_list_remove(&p->busy_link);
    p->nqueued = 0;
    p->queued = 0;
}

void plx_sctp_send_ctl(struct plx_sctp_peer *p, struct plx_sctp_assoc *a, uint8_t type, const void *payload,
                       uint32_t len)
{
    struct plx_hdr h;
    memset(&h, 0, sizeof h);
    h.type = type;
    h.len = len;
    struct iovec v = { (void *)payload, len };
    (void)a;
    plx_sctp_enqueue(p, 0, &h, &v, len ? 1 : 0, NULL);
    plx_sctp_flush(p);
}

/* The state of p allows queueing (connecting it if needed)? 0: the packet
 * is dropped (the failure is reported by the poll). */
static int plx_sctp_ready(struct plx_sctp_peer *p)
{
    if (plx_likely(p->state == PLX_SCTP_P_OPEN))
        return 1;
    if (p->state == PLX_SCTP_P_CONNECTING || p->state == PLX_SCTP_P_HELLO_SENT)
        return 1;
    if (p->said_bye) {
        p->state = PLX_SCTP_P_NONE;
        plx_sctp_peer_fail(p, 1, "sctp: rank %d sends to rank %d, which has already finalized", plx_procs.my_lpid,
                           p->lpid);
        return 0;
    }
    plx_sctp_connect(p);
    return p->state != PLX_SCTP_P_FAILED;
}

plx_status_t plx_sctp_send(struct plx_tp_iface *ifc, int lpid, const struct plx_hdr *hdr, const struct iovec *iov,
                           int iovcnt)
{
    if (plx_unlikely(lpid == plx_procs.my_lpid)) {
        plx_sctp_self_send(hdr, iov, iovcnt, NULL);
        return PLX_OK;
    }
    struct plx_sctp_peer *p = plx_sctp_peer_get(lpid);
    if (plx_unlikely(!plx_sctp_ready(p)))
        return PLX_OK;
    unsigned s = plx_sctp_stream_of(hdr, plx_sctp.streams);
    if (hdr->type == PLX_PKT_EAGER && plx_sctp.pace)
        p->chatty_until = plx_util_now() + PLX_SCTP_PACE_HOLD;
    size_t total = sizeof *hdr;
    for (int i = 0; i < iovcnt; i++)
        total += iov[i].iov_len;
    if (plx_unlikely(plx_log_debug >= 1) && p->state == PLX_SCTP_P_OPEN && s < plx_sctp.streams / 2 &&
        total <= 256) {
        plx_sctp.st_small++;
        plx_sctp.st_small_ahead += plx_sctp_outq(p->out);
    }
    if (p->state == PLX_SCTP_P_OPEN && plx_list_empty(&p->sq[s]) && total <= plx_sctp.frag) {
        memcpy(plx_sctp.txbuf, hdr, sizeof *hdr);
        size_t off = sizeof *hdr;
        for (int i = 0; i < iovcnt; i++) {
            memcpy(plx_sctp.txbuf + off, iov[i].iov_base, iov[i].iov_len);
            off += iov[i].iov_len;
        }
        if (plx_sctp_sendmsg(p->out, s, plx_sctp.txbuf, total) == (ssize_t)total)
            return PLX_OK;
        atomic_store_explicit(&plx_sctp.want_room, 1, memory_order_release);
    } else if (p->queued > plx_sctp.sendq_max) {
        return PLX_BUSY;
    }
    plx_sctp_enqueue(p, s, hdr, iov, iovcnt, NULL);
    return PLX_OK;
}

plx_status_t plx_sctp_send_zcopy(struct plx_tp_iface *ifc, int lpid, const struct plx_hdr *hdr,
                                 const struct iovec *iov, int iovcnt, struct plx_tp_comp *comp)
{
    if (plx_unlikely(lpid == plx_procs.my_lpid)) {
        plx_sctp_self_send(hdr, iov, iovcnt, comp);
        return PLX_OK;
    }
    struct plx_sctp_peer *p = plx_sctp_peer_get(lpid);
    if (plx_unlikely(!plx_sctp_ready(p)))
        return PLX_OK;
    unsigned s = plx_sctp_stream_of(hdr, plx_sctp.streams);
    plx_sctp_enqueue(p, s, hdr, iov, iovcnt, comp);
    plx_sctp_flush(p);
    return PLX_OK;
}

size_t plx_sctp_backlog(struct plx_tp_iface *ifc, int lpid)
{
    struct plx_sctp_peer *p = plx_sctp.peers[lpid];
    return p ? p->queued : 0;
}
