/*
 * Point-to-point protocols: eager, rendezvous (direct read or streamed),
 * credits, cancel. See pt2pt.h for the protocol; this file keeps the
 * per-peer state and the dispatch of incoming packets.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/config.h"
#include "core/errors.h"
#include "core/log.h"
#include "core/runtime.h"
#include "progress/progress.h"
#include "pt2pt/match.h"
#include "pt2pt/pt2pt.h"
#include "route/route.h"

#define PLX_EAGER_OVERHEAD 64   /* credit charged per eager message besides its bytes */

enum plx_sendq_kind { PLX_SQ_MSG = 1, PLX_SQ_STREAM, PLX_SQ_CTL };

struct plx_ctl {
    struct plx_sendq_item sq;
    struct plx_hdr hdr;
    uint64_t payload[3];
};

struct plx_peer {
    int lpid;
    int routed;
    const struct plx_transport_ops *tp;
    size_t eager_max;
    uint32_t send_seq, recv_seq;
    size_t credit_limit;        /* the transport's eager credit per peer */
    size_t credits;             /* eager bytes we may still send to this peer */
    size_t owed;                /* eager bytes of theirs we consumed, not yet returned */
    struct plx_list sendq;
    struct plx_list busy_link;  /* on plx_p2p.busy while sendq is not empty */
    char *failed;               /* lost for good: the transport's account of it (else NULL) */
    int fail_seq;               /* then: the how-manieth failure it was (1, 2, ...) */
    /* PLEXUS_STATS: matched messages each way */
    uint64_t st_sent, st_sent_bytes, st_sent_rndv;
    uint64_t st_recv, st_recv_bytes;
};

static struct {
    struct plx_peer **peers;    /* by world rank, allocated on first use */
    int npeers;
    int nfailed;                /* peers with `failed` set: only then is it looked at */
    struct plx_list busy;
    size_t credit_limit;
} plx_p2p;

static struct plx_peer *plx_comm_unacked_failure(struct plx_comm *c);

/* A failed collective step's reason (request.h) in packet flags, and back. */
static inline int plx_part_flags(int part)
{
    return part == PLX_PART_OK ? 0 : PLX_PKT_F_FAILED | (part == PLX_PART_OTHER ? PLX_PKT_F_OTHER : 0);
}
static inline uint8_t plx_part_of_flags(int flags)
{
    return !(flags & PLX_PKT_F_FAILED) ? PLX_PART_OK : (flags & PLX_PKT_F_OTHER) ? PLX_PART_OTHER : PLX_PART_LOST;
}
static void plx_req_fail(struct plx_request *r, struct plx_peer *p);

plx_status_t plx_pt2pt_init(void)
{
    plx_p2p.npeers = plx_procs.n;
    plx_p2p.peers = plx_calloc((size_t)plx_procs.n, sizeof *plx_p2p.peers);
    plx_list_init(&plx_p2p.busy);
    plx_p2p.credit_limit = plx_config.shm_eager_credit;
    return PLX_OK;
}

/* PLEXUS_STATS=1: one line per peer this rank exchanged messages with. */
static void plx_pt2pt_print_stats(void)
{
    for (int i = 0; i < plx_p2p.npeers; i++) {
        struct plx_peer *p = plx_p2p.peers[i];
        if (!p || (!p->st_sent && !p->st_recv))
            continue;
        plx_warn("stats: rank %d via %s: sent %llu messages, %llu bytes (%llu by rendezvous); "
                 "received %llu messages, %llu bytes",
                 i, p->tp ? p->tp->name : "none", (unsigned long long)p->st_sent,
                 (unsigned long long)p->st_sent_bytes, (unsigned long long)p->st_sent_rndv,
                 (unsigned long long)p->st_recv, (unsigned long long)p->st_recv_bytes);
    }
}

void plx_pt2pt_finalize(void)
{
    if (plx_config.stats)
        plx_pt2pt_print_stats();
    for (int i = 0; i < plx_p2p.npeers; i++) {
        if (plx_p2p.peers[i])
            free(plx_p2p.peers[i]->failed);
        free(plx_p2p.peers[i]);
    }
    free(plx_p2p.peers);
    plx_p2p.peers = NULL;
    plx_p2p.nfailed = 0;
}

static __attribute__((noinline)) struct plx_peer *plx_peer_create(int lpid)
{
    struct plx_peer *p = plx_calloc(1, sizeof *p);
    p->lpid = lpid;
    plx_list_init(&p->sendq);
    plx_list_init(&p->busy_link);
    p->tp = plx_route_peer(lpid);
    p->credit_limit = plx_p2p.credit_limit;
    if (p->tp) {
        size_t maxp = p->tp->max_packet() - sizeof(struct plx_hdr);
        size_t emax = p->tp->eager_max ? p->tp->eager_max() : plx_config.shm_eager_max;
        p->eager_max = PLX_MIN(emax, maxp);
        if (p->tp->eager_credit)
            p->credit_limit = p->tp->eager_credit();
    }
    p->credits = p->credit_limit;
    plx_p2p.peers[lpid] = p;
    return p;
}

static inline struct plx_peer *plx_peer_get(int lpid)
{
    struct plx_peer *p = plx_p2p.peers[lpid];
    return plx_likely(p) ? p : plx_peer_create(lpid);
}

/* A matchable packet (EAGER or RTS) of a message of `bytes` went out to p. */
static inline void plx_peer_sent(struct plx_peer *p, size_t bytes)
{
    p->send_seq++;
    p->st_sent++;
    p->st_sent_bytes += bytes;
}

static void plx_peer_enqueue(struct plx_peer *p, struct plx_sendq_item *it)
{
    if (plx_list_empty(&p->sendq))
        plx_list_push_back(&plx_p2p.busy, &p->busy_link);
    plx_list_push_back(&p->sendq, &it->link);
}

static void plx_send_done(struct plx_request *r)
{
    if (--r->cc == 0)
        plx_request_complete(r);
}

/* --- emitting ------------------------------------------------------------ */

/* Non-contiguous data: a small message whose blocks fit one transport
 * iovec goes out eagerly straight from the user's buffer (r->data stays
 * NULL); anything else is packed into r->tmp first. */
#define PLX_SEND_IOV_MAX 7      /* the TCP transport takes at most 7 entries */

static int plx_send_iov_ok(struct plx_peer *p, struct plx_request *r)
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

static int plx_dt_blocks_large(const struct plx_datatype *dt)
{
    MPI_Aint nblocks = 0;
    for (int i = 0; i < dt->nruns; i++)
        nblocks += dt->runs[i].cnt;
    return nblocks > 0 && dt->size / nblocks >= PLX_IOV_MIN_BLOCK;
}

/* Copies packed bytes [0, n) of (buf, count, dt) from or to remote. */
static plx_status_t plx_copy_dt_remote(struct plx_peer *p, int write, void *buf, MPI_Aint count,
                                       const struct plx_datatype *dt, uint64_t remote, size_t n)
{
    struct iovec iov[PLX_IOV_BATCH];
    size_t off = 0;
    while (off < n) {
        size_t got = 0;
        int niov = plx_dt_iov(buf, count, dt, off, n - off, iov, PLX_IOV_BATCH, &got);
        if (niov <= 0 || got == 0)
            return PLX_ERR_INTERN;
        plx_status_t st = p->tp->copy_remote(p->lpid, write, iov, niov, remote + off, got);
        if (st != PLX_OK)
            return off && st == PLX_ERR_UNSUPPORTED ? PLX_ERR_IO : st;
        off += got;
    }
    return PLX_OK;
}

static void plx_send_pack(struct plx_request *r)
{
    r->tmp = plx_malloc(r->bytes);
    plx_dt_pack(r->buf, r->count, r->dt, r->tmp);
    r->data = r->tmp;
}

static plx_status_t plx_emit_msg(struct plx_peer *p, struct plx_request *r)
{
    struct plx_hdr h = {
        .ctx = (uint16_t)r->ctx,
        .src = r->comm->rank,
        .tag = r->tag,
        .seq = p->send_seq,
        .sreq = (uint64_t)(uintptr_t)r,
    };
    size_t cost = r->bytes + PLX_EAGER_OVERHEAD;
    plx_status_t st;
    if (r->bytes <= p->eager_max && p->credits >= cost) {
        h.type = PLX_PKT_EAGER;
        h.flags = (r->mode == PLX_MODE_SYNC ? PLX_PKT_F_SYNC : 0) | plx_part_flags(r->failed_part);
        h.len = r->bytes;
        struct iovec iov[PLX_SEND_IOV_MAX];     /* not zeroed: only the first niov are read */
        iov[0].iov_base = r->data;
        iov[0].iov_len = r->bytes;
        int niov = r->bytes ? 1 : 0;
        if (!r->data && r->bytes) {
            size_t got;
            niov = plx_dt_iov(r->buf, r->count, r->dt, 0, r->bytes, iov, PLX_SEND_IOV_MAX, &got);
        }
        st = p->tp->send(p->lpid, &h, iov, niov);
        if (st != PLX_OK)
            return st;
        p->credits -= cost;
        plx_peer_sent(p, r->bytes);
        if (r->mode != PLX_MODE_SYNC)
            plx_send_done(r);
        return PLX_OK;
    }
    if (!r->data && !r->push)
        plx_send_pack(r);       /* no credit for the eager iovec: rendezvous needs it packed */
    struct plx_rts rts = { .size = r->bytes, .addr = (uint64_t)(uintptr_t)r->data };
    h.type = PLX_PKT_RTS;
    h.flags = r->push == PLX_PUSH_WRITE ? PLX_PKT_F_PUSH : r->push == PLX_PUSH_PACK_STREAM ? PLX_PKT_F_NOREAD : 0;
    h.flags |= plx_part_flags(r->failed_part);
    h.len = sizeof rts;
    struct iovec iov = { &rts, sizeof rts };
    st = p->tp->send(p->lpid, &h, &iov, 1);
    if (st == PLX_OK) {
        plx_peer_sent(p, r->bytes);
        p->st_sent_rndv++;
        if (!r->rndv_out) {
            r->rndv_out = 1;
            plx_rndv_sends++;
        }
    }
    return st;
}

/* Zero-copy transports take the rest of the message as one DATA packet and
 * report when they are done with the buffer (plx_pt2pt_zcopy_done). */
static plx_status_t plx_emit_stream_zcopy(struct plx_peer *p, struct plx_request *r)
{
    if (r->rndv_done < r->bytes) {
        uint64_t off = r->rndv_done;
        size_t n = r->bytes - r->rndv_done;
        struct plx_hdr h = { .type = PLX_PKT_DATA, .len = 8 + n, .sreq = r->rndv_cookie };
        struct iovec iov[2] = { { &off, 8 }, { (char *)r->data + off, n } };
        plx_status_t st = p->tp->send_zcopy(p->lpid, &h, iov, 2, r);
        if (st != PLX_OK)
            return st;
        r->rndv_done = r->bytes;
        return PLX_OK;
    }
    plx_send_done(r);           /* nothing to stream (a 0-byte message) */
    return PLX_OK;
}

void plx_pt2pt_zcopy_done(void *cookie)
{
    plx_send_done(cookie);
}

static plx_status_t plx_emit_stream(struct plx_peer *p, struct plx_request *r)
{
    if (p->tp->send_zcopy && r->data)
        return plx_emit_stream_zcopy(p, r);
    size_t frag = PLX_MIN(plx_config.shm_frag_size, p->tp->max_packet() - sizeof(struct plx_hdr) - 8);
    if (!r->data && !r->tmp)
        r->tmp = plx_malloc(frag);      /* one fragment, packed again for each */
    while (r->rndv_done < r->bytes) {
        uint64_t off = r->rndv_done;
        size_t n = PLX_MIN(frag, r->bytes - r->rndv_done);
        struct plx_hdr h = { .type = PLX_PKT_DATA, .len = 8 + n, .sreq = r->rndv_cookie };
        struct iovec iov[2] = { { &off, 8 }, { (char *)r->data + off, n } };
        if (!r->data) {
            plx_dt_pack_range(r->buf, r->count, r->dt, off, r->tmp, n);
            iov[1].iov_base = r->tmp;
        }
        plx_status_t st = p->tp->send(p->lpid, &h, iov, 2);
        if (st != PLX_OK)
            return st;
        r->rndv_done += n;
    }
    plx_send_done(r);
    return PLX_OK;
}

static plx_status_t plx_emit_ctl(struct plx_peer *p, struct plx_ctl *c)
{
    struct iovec iov = { c->payload, c->hdr.len };
    return p->tp->send(p->lpid, &c->hdr, &iov, c->hdr.len ? 1 : 0);
}

static int plx_peer_flush(struct plx_peer *p)
{
    int work = 0;
    while (!plx_list_empty(&p->sendq)) {
        struct plx_sendq_item *it = plx_list_entry(p->sendq.next, struct plx_sendq_item, link);
        plx_status_t st;
        switch (it->kind) {
        case PLX_SQ_MSG:
            st = plx_emit_msg(p, plx_container_of(it, struct plx_request, sq));
            break;
        case PLX_SQ_STREAM:
            st = plx_emit_stream(p, plx_container_of(it, struct plx_request, sq));
            break;
        default:
            st = plx_emit_ctl(p, plx_container_of(it, struct plx_ctl, sq));
            break;
        }
        if (st == PLX_BUSY)
            break;
        plx_list_remove(&it->link);
        if (it->kind == PLX_SQ_CTL)
            free(plx_container_of(it, struct plx_ctl, sq));
        else
            it->kind = 0;
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
        work += plx_peer_flush(plx_container_of(pos, struct plx_peer, busy_link));
    return work;
}

/* A control packet: sent now, or queued behind what is waiting. */
static void plx_send_ctl(int lpid, int type, int flags, int ctx, uint64_t cookie, const void *payload,
                         size_t plen)
{
    struct plx_peer *p = plx_peer_get(lpid);
    if (plx_unlikely(p->failed))
        return;                 /* nobody to tell any more */
    struct plx_hdr h = { .type = (uint8_t)type, .flags = (uint8_t)flags, .ctx = (uint16_t)ctx,
                         .len = plen, .sreq = cookie };
    if (plx_list_empty(&p->sendq)) {
        struct iovec iov = { (void *)payload, plen };
        if (p->tp->send(lpid, &h, &iov, plen ? 1 : 0) == PLX_OK)
            return;
    }
    struct plx_ctl *c = plx_malloc(sizeof *c);
    c->sq.kind = PLX_SQ_CTL;
    c->hdr = h;
    if (plen)
        memcpy(c->payload, payload, plen);
    plx_peer_enqueue(p, &c->sq);
}

static void plx_credit_consumed(int lpid, size_t bytes)
{
    struct plx_peer *p = plx_peer_get(lpid);
    p->owed += bytes + PLX_EAGER_OVERHEAD;
    if (p->owed >= p->credit_limit / 4) {
        plx_send_ctl(lpid, PLX_PKT_CREDIT, 0, 0, p->owed, NULL, 0);
        p->owed = 0;
    }
}

/* --- starting requests --------------------------------------------------- */

static plx_status_t plx_no_route(int lpid)
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
    struct plx_peer *p = plx_peer_get(r->peer_lpid);
    if (plx_unlikely(!p->tp)) {
        r->cc = 0;
        return plx_no_route(r->peer_lpid);
    }
    if (plx_unlikely(p->failed)) {
        plx_req_fail(r, p);
        return PLX_OK;
    }
    r->bytes = (size_t)r->count * (size_t)r->dt->size;
    r->push = 0;
    if (r->data == NULL) {      /* Bsend sets data to its own copy */
        if (r->dt->contig) {
            r->data = (char *)r->buf + r->dt->true_lb;
        } else if (r->bytes > p->eager_max && p->tp->copy_remote && plx_dt_blocks_large(r->dt)) {
            r->push = PLX_PUSH_WRITE;           /* written into the receiver at CTS */
        } else if (r->bytes > p->eager_max) {
            r->push = PLX_PUSH_PACK_STREAM;     /* packed as it streams, after CTS */
        } else if (!plx_send_iov_ok(p, r)) {
            plx_send_pack(r);
        }                       /* else: an eager iovec straight from the user's buffer */
    }
    r->rndv_done = 0;
    r->sq.kind = PLX_SQ_MSG;
    if (plx_likely(plx_list_empty(&p->sendq))) {
        plx_status_t st = plx_emit_msg(p, r);
        if (plx_likely(st == PLX_OK)) {
            r->sq.kind = 0;
            return PLX_OK;
        }
    }
    plx_peer_enqueue(p, &r->sq);
    return PLX_OK;
}

plx_status_t plx_pt2pt_send_inline(struct plx_comm *c, int ctx, const void *data, size_t bytes, int rank, int tag)
{
    int lpid = c->lpids[rank];
    struct plx_peer *p = plx_p2p.peers[lpid];
    size_t cost = bytes + PLX_EAGER_OVERHEAD;
    if (plx_unlikely(!p || !plx_list_empty(&p->sendq) || bytes > p->eager_max || p->credits < cost))
        return PLX_BUSY;
    struct plx_hdr h = { .type = PLX_PKT_EAGER, .ctx = (uint16_t)ctx, .src = c->rank, .tag = tag,
                         .seq = p->send_seq, .len = bytes };
    struct iovec iov = { (void *)data, bytes };
    if (p->tp->send(lpid, &h, &iov, bytes ? 1 : 0) != PLX_OK)
        return PLX_BUSY;
    p->credits -= cost;
    plx_peer_sent(p, bytes);
    return PLX_OK;
}

static void plx_recv_set_error(struct plx_request *r, int errclass, const char *what)
{
    r->st_error = plx_err_make(errclass, "rank %d: receive from rank %d (tag %d) on %s: %s", plx_procs.my_lpid,
                               r->st_source, r->st_tag, r->comm->name[0] ? r->comm->name : "a communicator",
                               what);
}

static void plx_recv_finish(struct plx_request *r)
{
    if (r->tmp) {
        plx_dt_unpack(r->tmp, r->st_bytes, r->buf, r->dt);
    }
    r->cc = 0;
    plx_request_complete(r);
}

/* Destination for up to r->bytes bytes (capacity). */
static void *plx_recv_dst(struct plx_request *r, size_t n)
{
    if (r->dt->contig)
        return (char *)r->buf + r->dt->true_lb;
    r->tmp = plx_malloc(n);
    return r->tmp;
}

static void plx_recv_truncation(struct plx_request *r, size_t size)
{
    char what[160];
    snprintf(what, sizeof what, "message of %zu bytes truncated to the %zu-byte buffer (MPI_ERR_TRUNCATE)",
             size, r->bytes);
    plx_recv_set_error(r, MPI_ERR_TRUNCATE, what);
    r->truncated = 1;
}

static void plx_deliver_eager(struct plx_request *r, int lpid, int src, int tag, int flags, size_t size,
                              uint64_t sreq, const void *data)
{
    r->st_source = src;
    r->st_tag = tag;
    r->failed_part = plx_part_of_flags(flags);
    size_t n = PLX_MIN(size, r->bytes);
    if (size > r->bytes)
        plx_recv_truncation(r, size);
    if (n && r->dt->contig)
        memcpy((char *)r->buf + r->dt->true_lb, data, n);
    else if (n)                 /* scattered: straight from the packet into place */
        plx_dt_unpack_range(data, n, r->buf, r->count, r->dt, 0);
    r->st_bytes = n;
    if (flags & PLX_PKT_F_SYNC)
        plx_send_ctl(lpid, PLX_PKT_SYNC_ACK, 0, 0, sreq, NULL, 0);
    plx_credit_consumed(lpid, size);
    plx_recv_finish(r);
}

static void plx_deliver_rts(struct plx_request *r, int lpid, int src, int tag, int flags, size_t size,
                            uint64_t sreq, uint64_t addr)
{
    r->st_source = src;
    r->st_tag = tag;
    r->failed_part = plx_part_of_flags(flags);
    r->peer_lpid = lpid;
    size_t n = PLX_MIN(size, r->bytes);
    if (size > r->bytes)
        plx_recv_truncation(r, size);
    r->st_bytes = n;
    r->rndv_size = size;
    r->rndv_cookie = sreq;
    r->rndv_done = 0;
    struct plx_peer *p = plx_peer_get(lpid);
    if (plx_unlikely(p->failed)) {      /* its RTS came before the failure; the data never will */
        plx_req_fail(r, p);
        return;
    }
    plx_status_t st;
    if (flags & PLX_PKT_F_PUSH) {
        /* the sender writes (or, if it cannot, streams) into r->data */
        r->data = plx_recv_dst(r, n);
        uint64_t cts[3] = { (uint64_t)(uintptr_t)r, (uint64_t)(uintptr_t)r->data, n };
        plx_send_ctl(lpid, PLX_PKT_CTS, PLX_PKT_F_PUSH, 0, sreq, cts, sizeof cts);
        return;
    }
    if (!(flags & PLX_PKT_F_NOREAD) && !r->dt->contig && n && p->tp->copy_remote && plx_dt_blocks_large(r->dt)) {
        st = plx_copy_dt_remote(p, 0, r->buf, r->count, r->dt, addr, n);
        if (st != PLX_ERR_UNSUPPORTED) {
            plx_pt2pt_read_done(r, st);
            return;
        }
    }
    r->data = plx_recv_dst(r, n);
    st = PLX_ERR_UNSUPPORTED;
    if (p->tp->read_remote && !(flags & PLX_PKT_F_NOREAD))
        st = p->tp->read_remote(lpid, r->data, addr, n, r);
    if (st == PLX_IN_PROGRESS)
        return;                 /* plx_pt2pt_read_done() follows */
    if (st != PLX_ERR_UNSUPPORTED) {
        plx_pt2pt_read_done(r, st);
        return;
    }
    uint64_t me = (uint64_t)(uintptr_t)r;
    plx_send_ctl(lpid, PLX_PKT_CTS, 0, 0, sreq, &me, sizeof me);
    if (size == 0)
        plx_recv_finish(r);
}

void plx_pt2pt_read_done(void *cookie, plx_status_t st)
{
    struct plx_request *r = cookie;
    if (st != PLX_OK)
        plx_recv_set_error(r, MPI_ERR_OTHER, "reading the sender's buffer failed");
    plx_send_ctl(r->peer_lpid, PLX_PKT_FIN, 0, 0, r->rndv_cookie, NULL, 0);
    plx_recv_finish(r);
}

static void plx_deliver_unexp(struct plx_request *r, struct plx_unexp *u)
{
    if (u->type == PLX_PKT_EAGER)
        plx_deliver_eager(r, u->lpid, u->src, u->tag, u->flags, u->size, u->sreq, u->data);
    else
        plx_deliver_rts(r, u->lpid, u->src, u->tag, u->flags, u->size, u->sreq, u->addr);
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
    struct plx_match_q *q = plx_match_q(r->ctx);
    struct plx_unexp *u = plx_match_unexp_find(q, r->rank, r->tag, 1);
    if (u) {
        plx_deliver_unexp(r, u);
        return PLX_OK;
    }
    if (plx_unlikely(plx_p2p.nfailed)) {
        struct plx_peer *p = r->rank == MPI_ANY_SOURCE ? plx_comm_unacked_failure(r->comm)
                                                       : plx_p2p.peers[r->comm->lpids[r->rank]];
        if (p && p->failed) {
            plx_req_fail(r, p);
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
    plx_deliver_unexp(r, u);
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
        struct plx_peer *p = plx_peer_get(r->peer_lpid);
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
    if (plx_unlikely(plx_p2p.nfailed) && plx_peer_get(r->peer_lpid)->failed)
        return;                 /* no answer would ever come: the send stands */
    r->cancel_pending = 1;
    r->cc++;
    int32_t src = r->comm->rank;
    plx_send_ctl(r->peer_lpid, PLX_PKT_CANCEL_REQ, 0, r->ctx, (uint64_t)(uintptr_t)r, &src, sizeof src);
}

/* --- incoming ------------------------------------------------------------ */

static void plx_recv_matchable(int lpid, const struct plx_hdr *h, const void *payload)
{
    struct plx_peer *p = plx_peer_get(lpid);
    if (plx_unlikely(h->seq != p->recv_seq))
        plx_fatal("packet from rank %d out of order (sequence %u, expected %u)", lpid, h->seq, p->recv_seq);
    p->recv_seq++;
    p->st_recv++;
    p->st_recv_bytes += h->type == PLX_PKT_EAGER ? h->len : ((const struct plx_rts *)payload)->size;
    struct plx_match_q *q = plx_match_q(h->ctx);
    struct plx_request *r = plx_match_posted_take(q, h->src, h->tag);
    if (h->type == PLX_PKT_EAGER) {
        if (r) {
            plx_deliver_eager(r, lpid, h->src, h->tag, h->flags, h->len, h->sreq, payload);
            return;
        }
    } else {
        const struct plx_rts *rts = payload;
        if (r) {
            plx_deliver_rts(r, lpid, h->src, h->tag, h->flags, rts->size, h->sreq, rts->addr);
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

static void plx_recv_cancel_req(int lpid, const struct plx_hdr *h, const void *payload)
{
    struct plx_unexp *u = plx_match_unexp_take_cookie(plx_match_q(h->ctx), lpid, h->sreq);
    if (u) {
        if (u->type == PLX_PKT_EAGER)
            plx_credit_consumed(lpid, u->size);
        free(u->data);
        free(u);
    }
    plx_send_ctl(lpid, PLX_PKT_CANCEL_ANS, u ? PLX_PKT_F_CANCELLED : 0, 0, h->sreq, NULL, 0);
}

void *plx_pt2pt_data_dst(const struct plx_hdr *h, uint64_t off, size_t *fit_p)
{
    struct plx_request *r = (struct plx_request *)(uintptr_t)h->sreq;
    size_t n = h->len - 8;
    *fit_p = off < r->st_bytes ? PLX_MIN(n, r->st_bytes - off) : 0;
    return (char *)r->data + off;
}

void plx_pt2pt_data_placed(const struct plx_hdr *h)
{
    struct plx_request *r = (struct plx_request *)(uintptr_t)h->sreq;
    r->rndv_done += h->len - 8;
    if (r->rndv_done == r->rndv_size)
        plx_recv_finish(r);
}

void plx_pt2pt_dispatch(int lpid, const struct plx_hdr *h, const void *payload)
{
    struct plx_request *r;
    switch (h->type) {
    case PLX_PKT_EAGER:
    case PLX_PKT_RTS:
        plx_recv_matchable(lpid, h, payload);
        break;
    case PLX_PKT_SYNC_ACK:
    case PLX_PKT_FIN:
        plx_send_done((struct plx_request *)(uintptr_t)h->sreq);
        break;
    case PLX_PKT_CTS: {
        r = (struct plx_request *)(uintptr_t)h->sreq;
        memcpy(&r->rndv_cookie, payload, sizeof r->rndv_cookie);
        r->rndv_done = 0;
        struct plx_peer *p = plx_peer_get(lpid);
        if (h->flags & PLX_PKT_F_PUSH) {
            uint64_t cts[3];
            memcpy(cts, payload, sizeof cts);
            if (plx_copy_dt_remote(p, 1, r->buf, r->count, r->dt, cts[1], cts[2]) == PLX_OK) {
                plx_send_ctl(lpid, PLX_PKT_PUT_DONE, 0, 0, r->rndv_cookie, NULL, 0);
                plx_send_done(r);
                break;
            }
            plx_send_pack(r);   /* cannot write there: stream it instead */
        }
        r->sq.kind = PLX_SQ_STREAM;
        if (!plx_list_empty(&p->sendq) || plx_emit_stream(p, r) != PLX_OK)
            plx_peer_enqueue(p, &r->sq);
        else
            r->sq.kind = 0;
        break;
    }
    case PLX_PKT_DATA: {
        uint64_t off;
        memcpy(&off, payload, 8);
        size_t fit;
        void *dst = plx_pt2pt_data_dst(h, off, &fit);
        if (fit)
            memcpy(dst, (const char *)payload + 8, fit);
        plx_pt2pt_data_placed(h);
        break;
    }
    case PLX_PKT_PUT_DONE:
        plx_recv_finish((struct plx_request *)(uintptr_t)h->sreq);
        break;
    case PLX_PKT_CANCEL_REQ:
        plx_recv_cancel_req(lpid, h, payload);
        break;
    case PLX_PKT_CANCEL_ANS:
        r = (struct plx_request *)(uintptr_t)h->sreq;
        r->cancel_pending = 0;
        if (h->flags & PLX_PKT_F_CANCELLED) {
            r->st_cancelled = 1;
            r->cc = 0;
            plx_request_complete(r);
        } else {
            plx_send_done(r);
        }
        break;
    case PLX_PKT_CREDIT:
        plx_peer_get(lpid)->credits += h->sreq;
        break;
    default:
        plx_fatal("unknown packet type %d from rank %d", h->type, lpid);
    }
}

/* --- failed peers ---------------------------------------------------------- */

/* c's rank of world rank lpid, or MPI_UNDEFINED; O(size), on failure
 * paths only. */
static int plx_comm_rank_of(const struct plx_comm *c, int lpid)
{
    for (int i = 0; i < c->size; i++)
        if (c->lpids[i] == lpid)
            return i;
    return MPI_UNDEFINED;
}

static int plx_comm_holds(const struct plx_comm *c, int lpid)
{
    return plx_comm_rank_of(c, lpid) != MPI_UNDEFINED;
}

struct plx_fail_scan {
    int lpid;
    int found;
    struct plx_peer *peer;
};

static void plx_comm_returns_for(void *obj, void *arg)
{
    const struct plx_comm *c = obj;
    struct plx_fail_scan *s = arg;
    if (!s->found && c->errhandler && c->lpids &&
        (c->errhandler->kind == PLX_ERRH_RETURN || c->errhandler->kind == PLX_ERRH_USER_COMM) &&
        plx_comm_holds(c, s->lpid))
        s->found = 1;
}

int plx_pt2pt_peer_failure_returns(int lpid)
{
    struct plx_fail_scan s = { .lpid = lpid };
    /* the builtin communicators are not in the table's walk */
    if (plx_comm_world)
        plx_comm_returns_for(plx_comm_world, &s);
    if (plx_comm_self)
        plx_comm_returns_for(plx_comm_self, &s);
    plx_obj_foreach(&plx_comm_tab, plx_comm_returns_for, &s);
    return s.found;
}

static void plx_tag_str(int tag, char *buf, size_t len)
{
    if (tag == MPI_ANY_TAG)
        snprintf(buf, len, "MPI_ANY_TAG");
    else
        snprintf(buf, len, "%d", tag);
}

/* A member of c that failed after what c acknowledged (MPIX_Comm_failure_ack),
 * else NULL: while there is one, a wildcard receive or probe on c that finds
 * no message fails instead of waiting for a sender that may be the lost one
 * (ULFM's rule). O(c->size) once per failure not yet looked at for c
 * (c->fail_clear: failures up to it are acknowledged or hold no member of
 * c), nothing otherwise. */
static struct plx_peer *plx_comm_unacked_failure(struct plx_comm *c)
{
    if (plx_likely(c->fail_clear >= plx_p2p.nfailed))
        return NULL;
    for (int i = 0; i < c->size; i++) {
        struct plx_peer *p = plx_p2p.peers[c->lpids[i]];
        if (p && p->failed && p->fail_seq > c->fail_acked)
            return p;
    }
    c->fail_clear = plx_p2p.nfailed;
    return NULL;
}

int plx_pt2pt_wildcard_failing(struct plx_comm *c)
{
    return plx_unlikely(plx_p2p.nfailed) && plx_comm_unacked_failure(c) != NULL;
}

void plx_pt2pt_failure_ack(struct plx_comm *c)
{
    c->fail_acked = c->fail_clear = plx_p2p.nfailed;
}

int plx_pt2pt_probe_error(struct plx_comm *c, int src, int tag, MPI_Status *st, const char *fn)
{
    if (plx_likely(!plx_p2p.nfailed) || src == MPI_PROC_NULL || src >= c->size)
        return MPI_SUCCESS;
    const char *cname = c->name[0] ? c->name : "a communicator";
    int code;
    struct plx_peer *p;
    if (src == MPI_ANY_SOURCE) {
        p = plx_comm_unacked_failure(c);
        if (!p)
            return MPI_SUCCESS;
        code = plx_err_make(MPIX_ERR_PROC_FAILED,
                            "rank %d: %s for a message from MPI_ANY_SOURCE on %s failed: a possible sender "
                            "(world rank %d) failed: %s",
                            plx_procs.my_lpid, fn, cname, p->lpid, p->failed);
    } else {
        p = plx_p2p.peers[c->lpids[src]];
        if (!p || !p->failed)
            return MPI_SUCCESS;
        code = plx_err_make(MPIX_ERR_PROC_FAILED, "rank %d: %s for a message from rank %d on %s failed: %s",
                            plx_procs.my_lpid, fn, src, cname, p->failed);
    }
    if (st != MPI_STATUS_IGNORE) {  /* what failed: the lost member, the tag asked for, no data */
        st->MPI_SOURCE = plx_comm_rank_of(c, p->lpid);
        st->MPI_TAG = tag;
        st->MPI_ERROR = code;
        st->count_lo = 0;
        st->count_hi_and_cancelled = 0;
    }
    return code;
}

/* Completes r with MPIX_ERR_PROC_FAILED and p's account of the failure. */
static void plx_req_fail(struct plx_request *r, struct plx_peer *p)
{
    char tag[24];
    const char *cname = r->comm->name[0] ? r->comm->name : "a communicator";
    plx_tag_str(r->tag, tag, sizeof tag);
    if (r->ctx & 1)             /* a collective's step: the collective names the call */
        r->st_error = plx_err_make(MPIX_ERR_PROC_FAILED, "rank %d (world rank %d) was lost: %s",
                                   plx_comm_rank_of(r->comm, p->lpid), p->lpid, p->failed);
    else if (r->kind == PLX_REQ_SEND)
        r->st_error = plx_err_make(MPIX_ERR_PROC_FAILED, "rank %d: send to rank %d (tag %s) on %s failed: %s",
                                   plx_procs.my_lpid, r->rank, tag, cname, p->failed);
    else if (r->rank == MPI_ANY_SOURCE)
        r->st_error = plx_err_make(MPIX_ERR_PROC_FAILED,
                                   "rank %d: receive from MPI_ANY_SOURCE (tag %s) on %s failed: a possible "
                                   "sender (world rank %d) failed: %s",
                                   plx_procs.my_lpid, tag, cname, p->lpid, p->failed);
    else
        r->st_error = plx_err_make(MPIX_ERR_PROC_FAILED, "rank %d: receive from rank %d (tag %s) on %s failed: %s",
                                   plx_procs.my_lpid, r->rank, tag, cname, p->failed);
    if (r->kind == PLX_REQ_RECV) {     /* the source: the lost member, also for a wildcard */
        r->st_source = plx_comm_rank_of(r->comm, p->lpid);
        r->st_tag = r->tag;
        r->st_bytes = 0;
    }
    if (r->sq.kind) {           /* still waiting for transport space */
        plx_list_remove(&r->sq.link);
        r->sq.kind = 0;
    }
    r->cancel_pending = 0;
    r->cc = 0;
    plx_request_complete(r);
}

/* A started request the peer's packets would complete (send: any; receive:
 * a rendezvous matched from it and still streaming). Posted receives are
 * handled from the match queues. */
static void plx_req_fail_if_bound(void *obj, void *arg)
{
    struct plx_request *r = obj;
    struct plx_fail_scan *s = arg;
    if (r->cc == 0 || r->peer_lpid != s->lpid || r->rank == MPI_PROC_NULL || !r->comm)
        return;
    if (r->kind == PLX_REQ_SEND || (r->kind == PLX_REQ_RECV && r->link.next == &r->link))
        plx_req_fail(r, s->peer);
}

void plx_pt2pt_peer_failed(int lpid, const char *why)
{
    struct plx_peer *p = plx_peer_get(lpid);
    if (p->failed)
        return;
    p->failed = plx_strdup(why);
    p->fail_seq = ++plx_p2p.nfailed;
    p->credits = 0;             /* plx_pt2pt_send_inline declines: sends take the path that fails them */
    plx_warn("rank %d: %s; operations with rank %d fail with MPIX_ERR_PROC_FAILED", plx_procs.my_lpid, why,
             lpid);

    /* what waited for transport space: control packets go, requests fail below */
    while (!plx_list_empty(&p->sendq)) {
        struct plx_sendq_item *it = plx_list_entry(p->sendq.next, struct plx_sendq_item, link);
        plx_list_remove(&it->link);
        if (it->kind == PLX_SQ_CTL)
            free(plx_container_of(it, struct plx_ctl, sq));
        else
            it->kind = 0;
    }
    plx_list_remove(&p->busy_link);

    /* posted receives naming it, and wildcard ones it could have matched;
     * O(contexts + posted receives), on this rare path only */
    for (int ctx = 0; ctx < PLX_MAX_CONTEXTS; ctx++) {
        struct plx_match_q *q = plx_match_q(ctx);
        struct plx_list *pos, *n;
        plx_list_for_each_safe(pos, n, &q->posted) {
            struct plx_request *r = plx_list_entry(pos, struct plx_request, link);
            int bound = r->rank == MPI_ANY_SOURCE ? plx_comm_holds(r->comm, lpid)
                                                  : r->comm->lpids[r->rank] == lpid;
            if (!bound)
                continue;
            plx_list_remove(&r->link);
            plx_req_fail(r, p);
        }
    }

    /* sends to it and rendezvous receives from it in flight: every request
     * with a handle, and the blocking receives on the stack */
    struct plx_fail_scan s = { .lpid = lpid, .peer = p };
    plx_obj_foreach(&plx_request_tab, plx_req_fail_if_bound, &s);
    plx_request_foreach_blocked(plx_req_fail_if_bound, &s);
}
