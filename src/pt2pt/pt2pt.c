/*
 * Point-to-point protocols: eager, rendezvous (direct read or streamed),
 * credits, cancel. See pt2pt.h for the protocol; this file keeps the
 * per-peer state and the dispatch of incoming packets.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "core/config.h"
#include "core/errors.h"
#include "core/log.h"
#include "core/runtime.h"
#include "progress/progress.h"
#include "pt2pt/match.h"
#include "pt2pt/pt2pt.h"
#include "pt2pt/pt2pt_impl.h"
#include "route/route.h"

/* A failed collective step's reason (request.h) in packet flags, and back. */
static inline int plx_pt2pt_part_flags(int part)
{
    return part == PLX_PART_OK ? 0 : PLX_PKT_F_FAILED | (part == PLX_PART_OTHER ? PLX_PKT_F_OTHER : 0);
}
static inline uint8_t plx_pt2pt_part_of_flags(int flags)
{
    return !(flags & PLX_PKT_F_FAILED) ? PLX_PART_OK : (flags & PLX_PKT_F_OTHER) ? PLX_PART_OTHER : PLX_PART_LOST;
}

plx_status_t plx_pt2pt_init(void)
{
    plx_p2p.npeers = plx_procs.n;
    plx_p2p.peers = plx_calloc((size_t)plx_procs.n, sizeof *plx_p2p.peers);
    plx_list_init(&plx_p2p.busy);
    plx_p2p.credit_limit = plx_config.shm_eager_credit;
    return PLX_OK;
}

/* Processes of other jobs were added (route.c): lpids up to ntotal - 1. */
plx_status_t plx_pt2pt_add_peers(int ntotal)
{
    if (ntotal > plx_p2p.npeers) {
        plx_p2p.peers = plx_realloc(plx_p2p.peers, (size_t)ntotal * sizeof *plx_p2p.peers);
        memset(plx_p2p.peers + plx_p2p.npeers, 0, (size_t)(ntotal - plx_p2p.npeers) * sizeof *plx_p2p.peers);
        plx_p2p.npeers = ntotal;
    }
    return PLX_OK;
}

/* PLEXUS_STATS=1: one line per peer and channel this rank exchanged
 * messages with (route.c prints them). */
static void plx_pt2pt_print_stats(void)
{
    for (int i = 0; i < plx_p2p.npeers; i++) {
        struct plx_peer *p = plx_p2p.peers[i];
        if (p && p->rp)
            plx_route_print_stats(p->rp, p->st_sent, p->st_sent_bytes, p->st_recv, p->st_recv_bytes);
    }
}

int plx_pt2pt_chan_stats(int lpid, int ifc_id, uint64_t out[PLX_ST_N])
{
    struct plx_peer *p = lpid >= 0 && lpid < plx_p2p.npeers ? plx_p2p.peers[lpid] : NULL;
    if (!p || !p->rp) {
        memset(out, 0, PLX_ST_N * sizeof *out);
        return 0;
    }
    const uint64_t p2p[4] = { p->st_sent, p->st_sent_bytes, p->st_recv, p->st_recv_bytes };
    plx_route_chan_stats(p->rp, ifc_id, p2p, out);
    return 1;
}

void plx_pt2pt_finalize(void)
{
    if (plx_config.stats)
        plx_pt2pt_print_stats();
    for (int i = 0; i < plx_p2p.npeers; i++) {
        struct plx_peer *p = plx_p2p.peers[i];
        if (!p)
            continue;
        while (!plx_list_empty(&p->early)) {
            struct plx_early *e = plx_list_entry(p->early.next, struct plx_early, link);
            plx_list_remove(&e->link);
            free(e);
        }
        free(p->failed);
        free(p);
    }
    free(plx_p2p.peers);
    plx_p2p.peers = NULL;
    plx_p2p.nfailed = 0;
}

struct plx_p2p_state plx_p2p;

__attribute__((noinline)) struct plx_peer *plx_pt2pt_peer_create(int lpid)
{
    struct plx_peer *p = plx_calloc(1, sizeof *p);
    p->lpid = lpid;
    plx_list_init(&p->sendq);
    plx_list_init(&p->busy_link);
    plx_list_init(&p->early);
    p->rp = plx_route_peer(lpid);
    p->credit_limit = plx_p2p.credit_limit;
    if (p->rp->fast) {
        p->fast = p->rp->fast;
        p->fast_send = p->fast->ops->send;
    }
    if (p->rp->nchan) {
        const struct plx_tp_caps *caps = plx_route_caps(p->rp);
        p->max_payload = caps->max_packet - sizeof(struct plx_hdr);
        p->eager_max = PLX_MIN(caps->eager_max, p->max_payload);
        p->credit_limit = caps->eager_credit;
    }
    p->credits = p->credit_limit;
    plx_p2p.peers[lpid] = p;
    return p;
}

/* A matchable packet (EAGER or RTS) of a message of `bytes` went out to p. */
static inline void plx_pt2pt_peer_sent(struct plx_peer *p, size_t bytes)
{
    p->send_seq++;
    p->st_sent++;
    p->st_sent_bytes += bytes;
}

static void plx_pt2pt_peer_enqueue(struct plx_peer *p, struct plx_sendq_item *it)
{
    if (plx_list_empty(&p->sendq))
        plx_list_push_back(&plx_p2p.busy, &p->busy_link);
    plx_list_push_back(&p->sendq, &it->link);
}

static void plx_pt2pt_send_done(struct plx_request *r)
{
    if (--r->cc == 0)
        plx_request_complete(r);
}

/* The router's operation class of a match context: odd contexts are
 * collectives' own (see core/comm). */
static inline int plx_pt2pt_cls(int ctx)
{
    return (ctx & 1) ? PLX_RC_COLL : PLX_RC_PT2PT;
}

static inline plx_status_t plx_pt2pt_peer_send(struct plx_peer *p, int ctx, size_t size, const struct plx_hdr *h,
                                         const struct iovec *iov, int iovcnt)
{
    if (plx_likely(p->fast_send != NULL))
        return p->fast_send(p->fast, p->lpid, h, iov, iovcnt);
    return plx_route_send_slow(p->rp, plx_pt2pt_cls(ctx), size, h, iov, iovcnt);
}

/* --- emitting ------------------------------------------------------------ */

/* Non-contiguous data: a small message whose blocks fit one transport
 * iovec goes out eagerly straight from the user's buffer (r->data stays
 * NULL); anything else is packed into r->tmp first. */
#define PLX_SEND_IOV_MAX 7      /* the TCP transport takes at most 7 entries */

static int plx_pt2pt_send_iov_ok(struct plx_peer *p, struct plx_request *r)
{
    struct iovec iov[PLX_SEND_IOV_MAX];
    size_t got = 0;
    return r->bytes <= p->eager_max &&
           plx_dt_iov(r->buf, r->count, r->dt, 0, r->bytes, iov, PLX_SEND_IOV_MAX, &got) > 0 && got == r->bytes;
}

/* Non-contiguous data with large blocks moves without packing where the
 * transport copies scattered memory (copy_remote: process_vm_readv/writev
 * with an iovec per block): the receiver reads into its blocks, and a
 * sender's blocks are written into the receiver's buffer (RTS and CTS with
 * PLX_PKT_F_PUSH, then PUT_DONE). Small blocks are packed: an iovec entry
 * costs the kernel more than copying a few hundred bytes. */
#define PLX_IOV_BATCH 256
#define PLX_IOV_MIN_BLOCK 512

/* How a non-contiguous rendezvous send moves its data (r->push). Small
 * blocks are packed fragment by fragment as the stream goes out, so the
 * packing overlaps the transfer and needs no buffer of the whole size. */
enum { PLX_PUSH_NONE, PLX_PUSH_WRITE, PLX_PUSH_PACK_STREAM };

static int plx_pt2pt_dt_blocks_large(const struct plx_datatype *dt)
{
    MPI_Aint nblocks = 0;
    for (int i = 0; i < dt->nruns; i++)
        nblocks += dt->runs[i].cnt;
    return nblocks > 0 && dt->size / nblocks >= PLX_IOV_MIN_BLOCK;
}

/* Copies packed bytes [0, n) of (buf, count, dt) from or to remote. */
static plx_status_t plx_pt2pt_copy_dt_remote(struct plx_peer *p, int write, void *buf, MPI_Aint count,
                                       const struct plx_datatype *dt, uint64_t remote, size_t n)
{
    struct iovec iov[PLX_IOV_BATCH];
    size_t off = 0;
    while (off < n) {
        size_t got = 0;
        int niov = plx_dt_iov(buf, count, dt, off, n - off, iov, PLX_IOV_BATCH, &got);
        if (niov <= 0 || got == 0)
            return PLX_ERR_INTERN;
        struct plx_tp_iface *rd = plx_route_reader(p->rp);
        plx_status_t st = rd ? rd->ops->copy_remote(rd, p->lpid, write, iov, niov, remote + off, got)
                             : PLX_ERR_UNSUPPORTED;
        if (st != PLX_OK)
            return off && st == PLX_ERR_UNSUPPORTED ? PLX_ERR_IO : st;
        off += got;
    }
    return PLX_OK;
}

static void plx_pt2pt_send_pack(struct plx_request *r)
{
    r->tmp = plx_malloc(r->bytes);
    plx_dt_pack(r->buf, r->count, r->dt, r->tmp);
    r->data = r->tmp;
}

static plx_status_t plx_pt2pt_emit_msg(struct plx_peer *p, struct plx_request *r)
{
    struct plx_hdr h = {
        .ctx = (uint16_t)r->ctx,
        .src = plx_pt2pt_wire_src(r->comm),
        .tag = r->tag,
        .seq = p->send_seq,
        .sreq = (uint64_t)(uintptr_t)r,
    };
    size_t cost = r->bytes + PLX_EAGER_OVERHEAD;
    plx_status_t st;
    if (r->bytes <= p->eager_max && p->credits >= cost) {
        h.type = PLX_PKT_EAGER;
        h.flags = (r->mode == PLX_MODE_SYNC ? PLX_PKT_F_SYNC : 0) | plx_pt2pt_part_flags(r->failed_part);
        h.len = r->bytes;
        struct iovec iov[PLX_SEND_IOV_MAX];     /* not zeroed: only the first niov are read */
        iov[0].iov_base = r->data;
        iov[0].iov_len = r->bytes;
        int niov = r->bytes ? 1 : 0;
        if (!r->data && r->bytes) {
            size_t got;
            niov = plx_dt_iov(r->buf, r->count, r->dt, 0, r->bytes, iov, PLX_SEND_IOV_MAX, &got);
        }
        st = plx_pt2pt_peer_send(p, r->ctx, r->bytes, &h, iov, niov);
        if (st != PLX_OK)
            return st;
        p->credits -= cost;
        plx_pt2pt_peer_sent(p, r->bytes);
        if (r->mode != PLX_MODE_SYNC)
            plx_pt2pt_send_done(r);
        return PLX_OK;
    }
    if (!r->data && !r->push)
        plx_pt2pt_send_pack(r);       /* no credit for the eager iovec: rendezvous needs it packed */
    struct plx_rts rts = { .size = r->bytes, .addr = (uint64_t)(uintptr_t)r->data };
    h.type = PLX_PKT_RTS;
    h.flags = r->push == PLX_PUSH_WRITE ? PLX_PKT_F_PUSH : r->push == PLX_PUSH_PACK_STREAM ? PLX_PKT_F_NOREAD : 0;
    h.flags |= plx_pt2pt_part_flags(r->failed_part);
    h.len = sizeof rts;
    struct iovec iov = { &rts, sizeof rts };
    st = plx_pt2pt_peer_send(p, r->ctx, r->bytes, &h, &iov, 1);
    if (st == PLX_OK) {
        plx_pt2pt_peer_sent(p, r->bytes);
        p->st_sent_rndv++;
        if (!r->rndv_out) {
            r->rndv_out = 1;
            plx_rndv_sends++;
        }
    }
    return st;
}

/* Zero-copy channels take the message in pieces (one, unless the router
 * stripes it over several rails) written from the sender's buffer; the send
 * completes when the router has completed every piece (r->comp: the pieces
 * out, plus one until the last is out), with an error if a piece failed
 * after the channel took it (the channel reports the link as failed too). */
static void plx_pt2pt_stream_comp_done(struct plx_tp_comp *c)
{
    struct plx_request *r = plx_container_of(c, struct plx_request, comp);
    if (plx_unlikely(c->status != PLX_OK) && r->st_error == MPI_SUCCESS)
        plx_pt2pt_send_set_error(r, c->status);
    plx_pt2pt_send_done(r);
}

static plx_status_t plx_pt2pt_emit_stream_zcopy(struct plx_peer *p, struct plx_request *r)
{
    struct plx_hdr h = { .type = PLX_PKT_DATA, .sreq = r->rndv_cookie };
    plx_status_t st = plx_route_send_data(p->rp, plx_pt2pt_cls(r->ctx), r->bytes, &h, r->data, &r->rndv_done, &r->comp);
    if (st != PLX_OK)
        return st;
    plx_tp_comp_done(&r->comp, PLX_OK);     /* everything is out: the guard goes */
    return PLX_OK;
}

/* The data after CTS: zero copy where the channels can, else copied in
 * fragments. A zero-copy piece that fails (registration, a transport error
 * on a channel that is still up) sends the rest by copy from where the
 * pieces stopped; the pieces already out keep the request until they
 * complete (the guard of r->comp goes when the last fragment is out). */
static plx_status_t plx_pt2pt_emit_stream(struct plx_peer *p, struct plx_request *r)
{
    if (r->data && r->bytes && !r->no_zcopy) {
        plx_status_t st = plx_pt2pt_emit_stream_zcopy(p, r);
        if (st == PLX_OK || st == PLX_BUSY)
            return st;
        if (st != PLX_ERR_UNSUPPORTED)
            plx_debug(1, "rank %d: a zero-copy piece to rank %d failed (status %d) at byte %zu of %zu: the rest goes by "
                      "copy", plx_procs.my_lpid, p->lpid, (int)st, r->rndv_done, r->bytes);
        r->no_zcopy = 1;
    }
    size_t frag = PLX_MIN(plx_config.shm_frag_size, p->max_payload);
    if (!r->data && !r->tmp)
        r->tmp = plx_malloc(frag);      /* one fragment, packed again for each */
    while (r->rndv_done < r->bytes) {
        uint64_t off = r->rndv_done;
        size_t n = PLX_MIN(frag, r->bytes - r->rndv_done);
        struct plx_hdr h = { .type = PLX_PKT_DATA, .off = off, .len = n, .sreq = r->rndv_cookie };
        struct iovec iov = { (char *)r->data + off, n };
        if (!r->data) {
            plx_dt_pack_range(r->buf, r->count, r->dt, off, r->tmp, n);
            iov.iov_base = r->tmp;
        }
        plx_status_t st = plx_pt2pt_peer_send(p, r->ctx, r->bytes, &h, &iov, 1);
        if (st != PLX_OK)
            return st;
        r->rndv_done += n;
    }
    plx_tp_comp_done(&r->comp, PLX_OK);     /* the guard: done once any zero-copy pieces are too */
    return PLX_OK;
}

/* A control packet goes out. CANCEL_REQ is sequenced with the matched
 * packets (it must not overtake the message it withdraws): its number is
 * taken when it leaves. */
static plx_status_t plx_pt2pt_ctl_out(struct plx_peer *p, struct plx_hdr *h, const void *payload)
{
    struct iovec iov = { (void *)payload, h->len };
    int seq = h->type == PLX_PKT_CANCEL_REQ;
    if (seq)
        h->seq = p->send_seq;
    plx_status_t st = plx_pt2pt_peer_send(p, h->ctx, 0, h, &iov, h->len ? 1 : 0);
    if (st == PLX_OK && seq)
        p->send_seq++;
    return st;
}

static plx_status_t plx_pt2pt_emit_ctl(struct plx_peer *p, struct plx_ctl *c)
{
    return plx_pt2pt_ctl_out(p, &c->hdr, c->payload);
}

static int plx_pt2pt_peer_flush(struct plx_peer *p)
{
    int work = 0;
    while (!plx_list_empty(&p->sendq)) {
        struct plx_sendq_item *it = plx_list_entry(p->sendq.next, struct plx_sendq_item, link);
        plx_status_t st;
        switch (it->kind) {
        case PLX_SQ_MSG:
            st = plx_pt2pt_emit_msg(p, plx_container_of(it, struct plx_request, sq));
            break;
        case PLX_SQ_STREAM:
            st = plx_pt2pt_emit_stream(p, plx_container_of(it, struct plx_request, sq));
            break;
        default:
            st = plx_pt2pt_emit_ctl(p, plx_container_of(it, struct plx_ctl, sq));
            break;
        }
        if (st == PLX_BUSY)
            break;
        plx_list_remove(&it->link);
        if (it->kind == PLX_SQ_CTL) {
            free(plx_container_of(it, struct plx_ctl, sq));
        } else {
            it->kind = 0;
            if (plx_unlikely(st != PLX_OK))
                plx_pt2pt_send_fail(plx_container_of(it, struct plx_request, sq), p, st);
        }
        work++;
    }
    if (plx_list_empty(&p->sendq))
        plx_list_remove(&p->busy_link);
    return work;
}

int plx_pt2pt_flush(void)
{
    int work = 0;
    struct plx_list *pos, *n;
    plx_list_for_each_safe(pos, n, &plx_p2p.busy)
        work += plx_pt2pt_peer_flush(plx_container_of(pos, struct plx_peer, busy_link));
    return work;
}

/* A control packet: sent now, or queued behind what is waiting. */
static void plx_pt2pt_send_ctl(int lpid, int type, int flags, int ctx, uint64_t cookie, const void *payload,
                         size_t plen)
{
    struct plx_peer *p = plx_pt2pt_peer_get(lpid);
    if (plx_unlikely(p->failed))
        return;                 /* nobody to tell any more */
    struct plx_hdr h = { .type = (uint8_t)type, .flags = (uint8_t)flags, .ctx = (uint16_t)ctx,
                         .len = plen, .sreq = cookie };
    if (plx_list_empty(&p->sendq) && plx_pt2pt_ctl_out(p, &h, payload) == PLX_OK)
        return;
    struct plx_ctl *c = plx_malloc(sizeof *c);
    c->sq.kind = PLX_SQ_CTL;
    c->hdr = h;
    if (plen)
        memcpy(c->payload, payload, plen);
    plx_pt2pt_peer_enqueue(p, &c->sq);
}

static void plx_pt2pt_credit_consumed(int lpid, size_t bytes)
{
    struct plx_peer *p = plx_pt2pt_peer_get(lpid);
    p->owed += bytes + PLX_EAGER_OVERHEAD;
    if (p->owed >= p->credit_limit / 4) {
        plx_pt2pt_send_ctl(lpid, PLX_PKT_CREDIT, 0, 0, p->owed, NULL, 0);
        p->owed = 0;
    }
}

/* --- starting requests --------------------------------------------------- */

static plx_status_t plx_pt2pt_no_route(int lpid)
{
    plx_warn("no transport reaches rank %d (node %d) from rank %d (node %d); enabled transports: %s",
             lpid, plx_procs.p[lpid].node_id, plx_procs.my_lpid, plx_procs.my_node,
             plx_config.transports[0] ? plx_config.transports : "all");
    return PLX_ERR_PEER;
}

plx_status_t plx_pt2pt_send_start(struct plx_request *r)
{
    r->cc = 1;
    if (r->rank == MPI_PROC_NULL) {
        r->cc = 0;
        plx_request_complete(r);
        return PLX_OK;
    }
    r->peer_lpid = r->comm->lpids[r->rank];
    struct plx_peer *p = plx_pt2pt_peer_get(r->peer_lpid);
    if (plx_unlikely(!p->rp->nchan)) {
        r->cc = 0;
        return plx_pt2pt_no_route(r->peer_lpid);
    }
    if (plx_unlikely(p->failed)) {
        plx_pt2pt_req_fail(r, p);
        return PLX_OK;
    }
    r->bytes = (size_t)r->count * (size_t)r->dt->size;
    r->push = 0;
    if (r->data == NULL) {      /* Bsend sets data to its own copy */
        if (r->dt->contig) {
            r->data = (char *)r->buf + r->dt->true_lb;
        } else if (r->bytes > p->eager_max && plx_route_reader(p->rp) && plx_pt2pt_dt_blocks_large(r->dt)) {
            r->push = PLX_PUSH_WRITE;           /* written into the receiver at CTS */
        } else if (r->bytes > p->eager_max) {
            r->push = PLX_PUSH_PACK_STREAM;     /* packed as it streams, after CTS */
        } else if (!plx_pt2pt_send_iov_ok(p, r)) {
            plx_pt2pt_send_pack(r);
        }                       /* else: an eager iovec straight from the user's buffer */
    }
    r->rndv_done = 0;
    r->sq.kind = PLX_SQ_MSG;
    if (plx_likely(plx_list_empty(&p->sendq))) {
        plx_status_t st = plx_pt2pt_emit_msg(p, r);
        if (plx_likely(st == PLX_OK)) {
            r->sq.kind = 0;
            return PLX_OK;
        }
    }
    plx_pt2pt_peer_enqueue(p, &r->sq);
    return PLX_OK;
}

plx_status_t plx_pt2pt_send_inline(struct plx_comm *c, int ctx, const void *data, size_t bytes, int rank, int tag)
{
    int lpid = c->lpids[rank];
    struct plx_peer *p = plx_p2p.peers[lpid];
    size_t cost = bytes + PLX_EAGER_OVERHEAD;
    if (plx_unlikely(!p || !plx_list_empty(&p->sendq) || bytes > p->eager_max || p->credits < cost))
        return PLX_BUSY;
    struct plx_hdr h = { .type = PLX_PKT_EAGER, .ctx = (uint16_t)ctx, .src = plx_pt2pt_wire_src(c), .tag = tag,
                         .seq = p->send_seq, .len = bytes };
    struct iovec iov = { (void *)data, bytes };
    if (plx_pt2pt_peer_send(p, ctx, bytes, &h, &iov, bytes ? 1 : 0) != PLX_OK)
        return PLX_BUSY;
    p->credits -= cost;
    plx_pt2pt_peer_sent(p, bytes);
    return PLX_OK;
}

static void plx_pt2pt_recv_set_error(struct plx_request *r, int errclass, const char *what)
{
    r->st_error = plx_err_make(errclass, "rank %d: receive from rank %d (tag %d) on %s: %s", plx_procs.my_lpid,
                               r->st_source, r->st_tag, r->comm->name[0] ? r->comm->name : "a communicator",
                               what);
}

static void plx_pt2pt_recv_finish(struct plx_request *r)
{
    if (r->tmp) {
        plx_dt_unpack(r->tmp, r->st_bytes, r->buf, r->dt);
    }
    r->cc = 0;
    plx_request_complete(r);
}

/* Destination for up to r->bytes bytes (capacity). */
static void *plx_pt2pt_recv_dst(struct plx_request *r, size_t n)
{
    if (r->dt->contig)
        return (char *)r->buf + r->dt->true_lb;
    r->tmp = plx_malloc(n);
    return r->tmp;
}

static void plx_pt2pt_recv_truncation(struct plx_request *r, size_t size)
{
    char what[160];
    snprintf(what, sizeof what, "message of %zu bytes truncated to the %zu-byte buffer (MPI_ERR_TRUNCATE)",
             size, r->bytes);
    plx_pt2pt_recv_set_error(r, MPI_ERR_TRUNCATE, what);
    r->truncated = 1;
}

static void plx_pt2pt_deliver_eager(struct plx_request *r, int lpid, int src, int tag, int flags, size_t size,
                              uint64_t sreq, const void *data)
{
    r->st_source = src;
    r->st_tag = tag;
    r->failed_part = plx_pt2pt_part_of_flags(flags);
    size_t n = PLX_MIN(size, r->bytes);
    if (size > r->bytes)
        plx_pt2pt_recv_truncation(r, size);
    if (n && r->dt->contig)
        memcpy((char *)r->buf + r->dt->true_lb, data, n);
    else if (n)                 /* scattered: straight from the packet into place */
        plx_dt_unpack_range(data, n, r->buf, r->count, r->dt, 0);
    r->st_bytes = n;
    if (flags & PLX_PKT_F_SYNC)
        plx_pt2pt_send_ctl(lpid, PLX_PKT_SYNC_ACK, 0, 0, sreq, NULL, 0);
    plx_pt2pt_credit_consumed(lpid, size);
    plx_pt2pt_recv_finish(r);
}

static void plx_pt2pt_read_done(struct plx_request *r, plx_status_t st);

/* A read_remote that said PLX_IN_PROGRESS has finished. */
static void plx_pt2pt_read_comp_done(struct plx_tp_comp *c)
{
    plx_pt2pt_read_done(plx_container_of(c, struct plx_request, comp), c->status);
}

static void plx_pt2pt_deliver_rts(struct plx_request *r, int lpid, int src, int tag, int flags, size_t size,
                            uint64_t sreq, uint64_t addr)
{
    r->st_source = src;
    r->st_tag = tag;
    r->failed_part = plx_pt2pt_part_of_flags(flags);
    r->peer_lpid = lpid;
    size_t n = PLX_MIN(size, r->bytes);
    if (size > r->bytes)
        plx_pt2pt_recv_truncation(r, size);
    r->st_bytes = n;
    r->rndv_size = size;
    r->rndv_cookie = sreq;
    r->rndv_done = 0;
    struct plx_peer *p = plx_pt2pt_peer_get(lpid);
    if (plx_unlikely(p->failed)) {      /* its RTS came before the failure; the data never will */
        plx_pt2pt_req_fail(r, p);
        return;
    }
    plx_status_t st;
    if (flags & PLX_PKT_F_PUSH) {
        /* the sender writes (or, if it cannot, streams) into r->data */
        r->data = plx_pt2pt_recv_dst(r, n);
        uint64_t cts[3] = { (uint64_t)(uintptr_t)r, (uint64_t)(uintptr_t)r->data, n };
        plx_pt2pt_send_ctl(lpid, PLX_PKT_CTS, PLX_PKT_F_PUSH, 0, sreq, cts, sizeof cts);
        return;
    }
    struct plx_tp_iface *rd = plx_route_reader(p->rp);
    if (!(flags & PLX_PKT_F_NOREAD) && !r->dt->contig && n && rd && plx_pt2pt_dt_blocks_large(r->dt)) {
        st = plx_pt2pt_copy_dt_remote(p, 0, r->buf, r->count, r->dt, addr, n);
        if (st != PLX_ERR_UNSUPPORTED) {
            plx_pt2pt_read_done(r, st);
            return;
        }
    }
    r->data = plx_pt2pt_recv_dst(r, n);
    st = PLX_ERR_UNSUPPORTED;
    if (rd && !(flags & PLX_PKT_F_NOREAD)) {
        r->comp.cb = plx_pt2pt_read_comp_done;
        r->comp.count = 1;
        r->comp.status = PLX_OK;
        st = rd->ops->read_remote(rd, lpid, r->data, addr, n, &r->comp);
    }
    if (st == PLX_IN_PROGRESS)
        return;                 /* plx_pt2pt_read_done() follows */
    if (st != PLX_ERR_UNSUPPORTED) {
        plx_pt2pt_read_done(r, st);
        return;
    }
    uint64_t me = (uint64_t)(uintptr_t)r;
    plx_pt2pt_send_ctl(lpid, PLX_PKT_CTS, 0, 0, sreq, &me, sizeof me);
    if (size == 0)
        plx_pt2pt_recv_finish(r);
}

static void plx_pt2pt_read_done(struct plx_request *r, plx_status_t st)
{
    if (st != PLX_OK)
        plx_pt2pt_recv_set_error(r, MPI_ERR_OTHER, "reading the sender's buffer failed");
    plx_pt2pt_send_ctl(r->peer_lpid, PLX_PKT_FIN, 0, 0, r->rndv_cookie, NULL, 0);
    plx_pt2pt_recv_finish(r);
}

static void plx_pt2pt_deliver_unexp(struct plx_request *r, struct plx_unexp *u)
{
    if (u->type == PLX_PKT_EAGER)
        plx_pt2pt_deliver_eager(r, u->lpid, u->src, u->tag, u->flags, u->size, u->sreq, u->data);
    else
        plx_pt2pt_deliver_rts(r, u->lpid, u->src, u->tag, u->flags, u->size, u->sreq, u->addr);
    free(u->data);
    free(u);
}

plx_status_t plx_pt2pt_recv_start(struct plx_request *r)
{
    r->cc = 1;
    r->bytes = (size_t)r->count * (size_t)r->dt->size;
    r->st_error = MPI_SUCCESS;
    r->truncated = 0;
    if (r->rank == MPI_PROC_NULL) {
        r->st_source = MPI_PROC_NULL;
        r->st_tag = MPI_ANY_TAG;
        r->st_bytes = 0;
        r->cc = 0;
        plx_request_complete(r);
        return PLX_OK;
    }
    r->peer_lpid = -1;          /* set when a rendezvous from the sender is matched */
    if (plx_unlikely(r->comm->wire_ranks != NULL) && r->rank >= 0)
        r->rank = r->comm->wire_ranks[r->rank];         /* matched as its packets name it */
    struct plx_match_q *q = plx_match_q(r->ctx);
    struct plx_unexp *u = plx_match_unexp_find(q, r->rank, r->tag, 1);
    if (u) {
        plx_pt2pt_deliver_unexp(r, u);
        return PLX_OK;
    }
    if (plx_unlikely(plx_p2p.nfailed)) {
        struct plx_peer *p = r->rank == MPI_ANY_SOURCE ? plx_pt2pt_comm_unacked_failure(r->comm)
                                                       : plx_p2p.peers[plx_pt2pt_src_lpid(r->comm, r->rank)];
        if (p && p->failed) {
            plx_pt2pt_req_fail(r, p);
            return PLX_OK;
        }
    }
    plx_list_push_back(&q->posted, &r->link);
    return PLX_OK;
}

plx_status_t plx_pt2pt_mrecv_start(struct plx_request *r, struct plx_request *msg)
{
    r->cc = 1;
    r->bytes = (size_t)r->count * (size_t)r->dt->size;
    r->st_error = MPI_SUCCESS;
    r->peer_lpid = -1;
    struct plx_unexp *u = msg->msg;
    msg->msg = NULL;
    if (!u) {   /* MPI_MESSAGE_NO_PROC */
        r->st_source = MPI_PROC_NULL;
        r->st_tag = MPI_ANY_TAG;
        r->st_bytes = 0;
        r->cc = 0;
        plx_request_complete(r);
        return PLX_OK;
    }
    plx_pt2pt_deliver_unexp(r, u);
    return PLX_OK;
}

void plx_pt2pt_iprobe(struct plx_comm *c, int ctx, int src, int tag, int *found, MPI_Status *st)
{
    struct plx_unexp *u = plx_match_unexp_find(plx_match_q(ctx), src, tag, 0);
    *found = u != NULL;
    if (u && st != MPI_STATUS_IGNORE) {
        st->MPI_SOURCE = u->src;
        st->MPI_TAG = u->tag;
        st->count_hi_and_cancelled = 0;
        plx_status_set_bytes(st, (MPI_Count)u->size);
    }
}

struct plx_request *plx_pt2pt_improbe(struct plx_comm *c, int ctx, int src, int tag)
{
    struct plx_unexp *u = plx_match_unexp_find(plx_match_q(ctx), src, tag, 1);
    if (!u)
        return NULL;
    struct plx_request *m = plx_request_new(PLX_REQ_MESSAGE, c);
    m->msg = u;
    m->st_source = u->src;
    m->st_tag = u->tag;
    m->st_bytes = u->size;
    return m;
}

void plx_pt2pt_cancel(struct plx_request *r)
{
    if (r->cc == 0 && r->kind == PLX_REQ_RECV)
        return;
    if (r->kind == PLX_REQ_RECV) {
        if (r->link.next != &r->link) {     /* still posted: withdraw it */
            plx_list_remove(&r->link);
            r->st_cancelled = 1;
            r->cc = 0;
            plx_request_complete(r);
            plx_progress_kick();            /* another thread may wait for it */
        }
        return;
    }
    if (r->rank == MPI_PROC_NULL || r->cancel_pending || r->st_cancelled || r->st_error != MPI_SUCCESS)
        return;
    if (r->sq.kind == PLX_SQ_MSG) {         /* never left this process */
        plx_list_remove(&r->sq.link);
        r->sq.kind = 0;
        struct plx_peer *p = plx_pt2pt_peer_get(r->peer_lpid);
        if (plx_list_empty(&p->sendq))
            plx_list_remove(&p->busy_link);
        r->st_cancelled = 1;
        r->cc = 0;
        plx_request_complete(r);
        plx_progress_kick();
        return;
    }
    if (r->sq.kind == PLX_SQ_STREAM)        /* matched already */
        return;
    if (plx_unlikely(plx_p2p.nfailed) && plx_pt2pt_peer_get(r->peer_lpid)->failed)
        return;                 /* no answer would ever come: the send stands */
    r->cancel_pending = 1;
    r->cc++;
    int32_t src = r->comm->rank;
    plx_pt2pt_send_ctl(r->peer_lpid, PLX_PKT_CANCEL_REQ, 0, r->ctx, (uint64_t)(uintptr_t)r, &src, sizeof src);
}

/* --- incoming ------------------------------------------------------------ */

static void plx_pt2pt_recv_matchable(struct plx_peer *p, const struct plx_hdr *h, const void *payload)
{
    int lpid = p->lpid;
    p->st_recv++;
    p->st_recv_bytes += h->type == PLX_PKT_EAGER ? h->len : ((const struct plx_rts *)payload)->size;
    struct plx_match_q *q = plx_match_q(h->ctx);
    struct plx_request *r = plx_match_posted_take(q, h->src, h->tag);
    if (h->type == PLX_PKT_EAGER) {
        if (r) {
            plx_pt2pt_deliver_eager(r, lpid, h->src, h->tag, h->flags, h->len, h->sreq, payload);
            return;
        }
    } else {
        const struct plx_rts *rts = payload;
        if (r) {
            plx_pt2pt_deliver_rts(r, lpid, h->src, h->tag, h->flags, rts->size, h->sreq, rts->addr);
            return;
        }
    }
    struct plx_unexp *u = plx_malloc(sizeof *u);
    u->src = h->src;
    u->tag = h->tag;
    u->lpid = lpid;
    u->type = h->type;
    u->flags = h->flags;
    u->sreq = h->sreq;
    u->data = NULL;
    if (h->type == PLX_PKT_EAGER) {
        u->size = h->len;
        u->addr = 0;
        if (h->len) {
            u->data = plx_malloc(h->len);
            memcpy(u->data, payload, h->len);
        }
    } else {
        const struct plx_rts *rts = payload;
        u->size = rts->size;
        u->addr = rts->addr;
    }
    plx_match_unexp_add(q, u);
}

static void plx_pt2pt_recv_cancel_req(struct plx_peer *p, const struct plx_hdr *h)
{
    int lpid = p->lpid;
    struct plx_unexp *u = plx_match_unexp_take_cookie(plx_match_q(h->ctx), lpid, h->sreq);
    if (u) {
        if (u->type == PLX_PKT_EAGER)
            plx_pt2pt_credit_consumed(lpid, u->size);
        free(u->data);
        free(u);
    }
    plx_pt2pt_send_ctl(lpid, PLX_PKT_CANCEL_ANS, u ? PLX_PKT_F_CANCELLED : 0, 0, h->sreq, NULL, 0);
}

/* A sequenced packet in its turn. */
static void plx_pt2pt_recv_in_order(struct plx_peer *p, const struct plx_hdr *h, const void *payload)
{
    p->recv_seq++;
    if (h->type == PLX_PKT_CANCEL_REQ)
        plx_pt2pt_recv_cancel_req(p, h);
    else
        plx_pt2pt_recv_matchable(p, h, payload);
}

/* Out of line: a sequenced packet ahead of its turn waits (copied) in seq
 * order; one behind it was delivered already (a duplicate) and is dropped.
 * O(packets waiting) per early packet; they wait for less than a round trip. */
static __attribute__((noinline)) void plx_pt2pt_recv_early(struct plx_peer *p, struct plx_tp_iface *ifc,
                                                     const struct plx_hdr *h, const void *payload)
{
    int32_t ahead = (int32_t)(h->seq - p->recv_seq);
    if (ahead < 0)
        return;
    struct plx_list *pos = p->early.prev;
    while (pos != &p->early) {
        struct plx_early *e = plx_list_entry(pos, struct plx_early, link);
        int32_t d = (int32_t)(h->seq - e->h.seq);
        if (d == 0)
            return;             /* a duplicate of one already waiting */
        if (d > 0)
            break;
        pos = pos->prev;
    }
    size_t plen = h->len;       /* EAGER: its data; RTS, CANCEL_REQ: a few bytes */
    struct plx_early *e = plx_malloc(sizeof *e + plen);
    e->ifc = ifc;
    e->h = *h;
    if (plen)
        memcpy(e->payload, payload, plen);
    plx_list_push_front(pos, &e->link);     /* after pos */
}

/* The packets that were waiting for the one just delivered. */
static void plx_pt2pt_recv_drain_early(struct plx_peer *p)
{
    while (!plx_list_empty(&p->early)) {
        struct plx_early *e = plx_list_entry(p->early.next, struct plx_early, link);
        if (e->h.seq != p->recv_seq)
            return;
        plx_list_remove(&e->link);
        plx_pt2pt_recv_in_order(p, &e->h, e->payload);
        free(e);
    }
}

/* EAGER, RTS and CANCEL_REQ: matched in the order the sender sent them,
 * whatever order the channels delivered them in. */
static void plx_pt2pt_on_sequenced(struct plx_tp_iface *ifc, int lpid, const struct plx_hdr *h, const void *payload)
{
    struct plx_peer *p = plx_pt2pt_peer_get(lpid);
    if (plx_unlikely(h->seq != p->recv_seq)) {
        plx_pt2pt_recv_early(p, ifc, h, payload);
        return;
    }
    plx_pt2pt_recv_in_order(p, h, payload);
    if (plx_unlikely(!plx_list_empty(&p->early)))
        plx_pt2pt_recv_drain_early(p);
}

/* Where a DATA payload goes: the destination of its first *fit_p bytes
 * (the rest does not fit a truncated receive). */
static void *plx_pt2pt_data_place(struct plx_tp_iface *ifc, int lpid, const struct plx_hdr *h, size_t *fit_p)
{
    struct plx_request *r = (struct plx_request *)(uintptr_t)h->sreq;
    uint64_t off = h->off;
    *fit_p = off < r->st_bytes ? PLX_MIN(h->len, r->st_bytes - off) : 0;
    return (char *)r->data + off;
}

static void plx_pt2pt_data_placed(struct plx_tp_iface *ifc, int lpid, const struct plx_hdr *h)
{
    struct plx_request *r = (struct plx_request *)(uintptr_t)h->sreq;
    r->rndv_done += h->len;
    if (r->rndv_done == r->rndv_size)
        plx_pt2pt_recv_finish(r);
}

static void plx_pt2pt_on_data(struct plx_tp_iface *ifc, int lpid, const struct plx_hdr *h, const void *payload)
{
    size_t fit;
    void *dst = plx_pt2pt_data_place(ifc, lpid, h, &fit);
    if (fit)
        memcpy(dst, payload, fit);
    plx_pt2pt_data_placed(ifc, lpid, h);
}

static void plx_pt2pt_on_send_done(struct plx_tp_iface *ifc, int lpid, const struct plx_hdr *h, const void *payload)
{
    plx_pt2pt_send_done((struct plx_request *)(uintptr_t)h->sreq);   /* SYNC_ACK, FIN */
}

static void plx_pt2pt_on_cts(struct plx_tp_iface *ifc, int lpid, const struct plx_hdr *h, const void *payload)
{
    struct plx_request *r = (struct plx_request *)(uintptr_t)h->sreq;
    memcpy(&r->rndv_cookie, payload, sizeof r->rndv_cookie);
    r->rndv_done = 0;
    struct plx_peer *p = plx_pt2pt_peer_get(lpid);
    if (h->flags & PLX_PKT_F_PUSH) {
        uint64_t cts[3];
        memcpy(cts, payload, sizeof cts);
        if (plx_pt2pt_copy_dt_remote(p, 1, r->buf, r->count, r->dt, cts[1], cts[2]) == PLX_OK) {
            plx_pt2pt_send_ctl(lpid, PLX_PKT_PUT_DONE, 0, 0, r->rndv_cookie, NULL, 0);
            plx_pt2pt_send_done(r);
            return;
        }
        plx_pt2pt_send_pack(r);       /* cannot write there: stream it instead */
    }
    r->comp.cb = plx_pt2pt_stream_comp_done;      /* the pieces of a zero-copy stream, plus a guard */
    r->comp.count = 1;
    r->comp.status = PLX_OK;
    r->sq.kind = PLX_SQ_STREAM;
    if (!plx_list_empty(&p->sendq) || plx_pt2pt_emit_stream(p, r) != PLX_OK)
        plx_pt2pt_peer_enqueue(p, &r->sq);
    else
        r->sq.kind = 0;
}

static void plx_pt2pt_on_put_done(struct plx_tp_iface *ifc, int lpid, const struct plx_hdr *h, const void *payload)
{
    plx_pt2pt_recv_finish((struct plx_request *)(uintptr_t)h->sreq);
}

static void plx_pt2pt_on_cancel_ans(struct plx_tp_iface *ifc, int lpid, const struct plx_hdr *h, const void *payload)
{
    struct plx_request *r = (struct plx_request *)(uintptr_t)h->sreq;
    r->cancel_pending = 0;
    if (h->flags & PLX_PKT_F_CANCELLED) {
        r->st_cancelled = 1;
        r->cc = 0;
        plx_request_complete(r);
    } else {
        plx_pt2pt_send_done(r);
    }
}

static void plx_pt2pt_on_credit(struct plx_tp_iface *ifc, int lpid, const struct plx_hdr *h, const void *payload)
{
    plx_pt2pt_peer_get(lpid)->credits += h->sreq;
}

static void plx_pt2pt_on_unknown(struct plx_tp_iface *ifc, int lpid, const struct plx_hdr *h, const void *payload)
{
    plx_fatal("unknown packet type %d from rank %d over %s", h->type, lpid, ifc->name);
}

void plx_pt2pt_upcalls(struct plx_tp_upcalls *up)
{
    memset(up, 0, sizeof *up);
    for (int t = 0; t < PLX_PKT_TYPE_MAX; t++)
        up->recv[t] = plx_pt2pt_on_unknown;
    up->recv[PLX_PKT_EAGER] = plx_pt2pt_on_sequenced;
    up->recv[PLX_PKT_RTS] = plx_pt2pt_on_sequenced;
    up->recv[PLX_PKT_CANCEL_REQ] = plx_pt2pt_on_sequenced;
    up->recv[PLX_PKT_SYNC_ACK] = plx_pt2pt_on_send_done;
    up->recv[PLX_PKT_FIN] = plx_pt2pt_on_send_done;
    up->recv[PLX_PKT_CTS] = plx_pt2pt_on_cts;
    up->recv[PLX_PKT_DATA] = plx_pt2pt_on_data;
    up->recv[PLX_PKT_PUT_DONE] = plx_pt2pt_on_put_done;
    up->recv[PLX_PKT_CANCEL_ANS] = plx_pt2pt_on_cancel_ans;
    up->recv[PLX_PKT_CREDIT] = plx_pt2pt_on_credit;
    up->place = plx_pt2pt_data_place;
    up->placed = plx_pt2pt_data_placed;
}

