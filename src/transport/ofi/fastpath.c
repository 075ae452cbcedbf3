/*
 * The ofi transport's RDMA fast path for small messages (MVAPICH's design).
 *
 * A receiver gives a busy sender a ring: PLEXUS_OFI_FASTPATH_SLOTS slots of
 * PLEXUS_OFI_FASTPATH_SLOT bytes, registered for remote writes. The sender
 * puts each small packet into the next slot with one fi_write (fi_inject_write
 * when it fits) instead of fi_send; the receiver polls the slot's flags. No
 * receive buffer is matched and no receive completion is read: on a provider
 * that does it in hardware the write lands without the receiver's CPU.
 *
 *   slot: [len seq ack mark] [struct plx_hdr, payload] [mark 0]
 *          head, 16 bytes     len bytes, padded to 8    tail, 8 bytes
 *
 * mark is 0x80000000 | (the packet's number on this ring & 0x7fffffff), in
 * the head and after the payload. The receiver takes a slot when both marks
 * are the one it expects next: the head says the write began, the tail that
 * it ended (writes land in address order on the providers that place them
 * as they arrive; libfabric's shm and tcp providers place them inside the
 * receiver's own fi_cq_read, so a poll never sees half a write there). Once
 * the packet is delivered it clears the slot as far as the tail, so that
 * where the next tail goes there is no stale mark (an old payload's bytes
 * could otherwise look like one).
 *
 * Which peers. The receiver counts the small packets (those a slot holds)
 * each peer sends it by send/recv; the first time a peer's count passes
 * PLEXUS_OFI_FASTPATH_AFTER, and while this process has made fewer than
 * PLEXUS_OFI_FASTPATH_PEERS rings, it registers a ring and offers it
 * (CTS|F_TRANSPORT, payload: address or offset, key, slots, slot size). The
 * peers that send it the most small packets early get the rings. A ring is
 * never taken back (no eviction: see the session 8 note).
 *
 * Credit. Every packet carries in its ofi prefix (or its slot's head) how
 * many packets the sender has taken from the receiver's ring: its credit.
 * A receiver that has taken half a ring without sending anything back sends
 * an empty CREDIT|F_TRANSPORT. A sender whose ring is full, or whose packet
 * does not fit a slot, sends it by send/recv: never a wait.
 *
 * Order. Every packet to a peer is numbered (the prefix's or the head's
 * seq), whichever path takes it, fast path or not. The receiver delivers
 * them in that order: a send/recv packet that overtook one numbered before
 * it is copied and kept (in number order) until the gap is filled; a ring
 * packet numbered after one that has not come yet stays in its slot. So the
 * switch to the ring and back to send/recv keeps each sender's order. Send/
 * recv alone needs it too: tcp;ofi_rxm reports FI_ORDER_SAS, but the
 * completion of a packet larger than its 16 KiB buffers (sent by its own
 * segmentation) comes after those of smaller packets sent later (seen with
 * PLEXUS_TEST_ZCOPY_FAIL, where rendezvous data goes in 32 KiB packets).
 *
 * Progress. With software providers (tcp;ofi_rxm, shm) a write lands only
 * when the receiver's provider progresses, inside fi_cq_read: the poll reads
 * the completion queue first (ofi.c), then looks at the rings. A process
 * that sleeps sleeps on the completion queue's fd, which the provider's
 * sockets wake (tcp); shm has none, so a wait keeps polling.
 *
 * Thread rules: as every transport, under the library lock.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/config.h"
#include "core/log.h"
#include "core/runtime.h"
#include "transport/ofi/ofi_int.h"

#define PLX_OFI_FP_HEAD 16u
#define PLX_OFI_FP_TAIL 8u

/* mark last: a write that lands in address order has the rest of the
 * head in place when its mark is */
struct plx_ofi_fp_head {
    uint32_t len;               /* header + payload bytes */
    uint32_t seq;               /* the packet's number among all sent to this peer */
    uint32_t ack;               /* the sender's credit to us (see above) */
    uint32_t mark;
};

/* The ring a peer writes into here. */
struct plx_ofi_fp_in {
    char *mem;
    size_t size;
    struct fid_mr *mr;
    uint32_t nslots, slot;
    uint32_t credit_at;         /* ring_taken when an empty CREDIT was last sent */
    int busy;                   /* delivering: the upcall must not take the same slot again */
    uint32_t made_after;        /* small packets of the peer when the ring was made */
    uint64_t st_pkts;
    uint64_t pkts_mark;         /* st_pkts at the last eviction check (session 9) */
    int revoking;               /* asked the peer to stop writing (session 9) */
    int free_after;             /* revoked while draining: freed at the end of the drain */
};

/* The ring here writes into, at a peer. */
struct plx_ofi_fp_out {
    char *stage;                /* the slots' images, kept until the write completes */
    size_t size;
    struct fid_mr *mr;          /* FI_MR_LOCAL */
    void *desc;
    uint64_t raddr, rkey;
    uint32_t nslots, slot;
    uint32_t sent;              /* packets written */
    uint32_t acked;             /* packets the peer has taken */
    int dead;                   /* a write failed, or revoked: send/recv from now on */
    struct plx_list link;       /* revoked: on plx_ofi.fp_retired until finalize */
    struct plx_ofi_op *ops;     /* a context per slot (kind 0: free) */
    uint64_t st_pkts, st_full, st_big;
};

/* A send/recv packet kept until the ring packets numbered before it came. */
struct plx_ofi_early {
    struct plx_list link;
    uint32_t seq;
    struct plx_hdr h;
    char payload[];
};

static int plx_ofi_fp_nearly;   /* kept packets, all peers */

/* Session 9, eviction: the sreq of a CTS|F_TRANSPORT that carries no offer.
 * REVOKE (receiver to sender): stop writing into my ring. REVOKED (sender
 * to receiver, payload: packets written into it): stopped. The answer is
 * numbered like every packet, so the receiver handles it only after every
 * ring packet written before it: the ring is drained when it comes. */
enum { PLX_OFI_FP_REVOKE = 1, PLX_OFI_FP_REVOKED = 2 };

static inline uint32_t plx_ofi_fp_mark(uint32_t n)
{
    return 0x80000000u | (n & 0x7fffffffu);
}

static inline size_t plx_ofi_fp_round8(size_t n)
{
    return (n + 7) & ~(size_t)7;
}

/* Largest header + payload a slot holds. */
static inline size_t plx_ofi_fp_room(uint32_t slot)
{
    return slot - PLX_OFI_FP_HEAD - PLX_OFI_FP_TAIL;
}

void plx_ofi_fp_open(void)
{
    plx_ofi.fp_cap = 0;
    plx_ofi.fp_nin = 0;
    plx_ofi.fp_revoking = 0;
    plx_ofi.fp_revoked = 0;
    plx_list_init(&plx_ofi.fp_retired);
    plx_ofi_fp_nearly = 0;
    int want = plx_config.ofi_fp_peers;
    const char *mode = plx_config.ofi_fp;
    if (want <= 0 || plx_procs.n < 2 || !strcmp(mode, "off"))
        return;
    if (strcmp(mode, "on") && (!strcmp(plx_ofi.prov, "shm") || !strcmp(plx_ofi.prov, "sockets"))) {
        /* measured (bench/ofi_fastpath.sh, session 8): slower than send/recv,
         * 3-90x with shm, 2.7-4.6x with sockets */
        plx_debug(1, "ofi: no fast path with the %s provider unless PLEXUS_OFI_FASTPATH=on: %s", plx_ofi.prov,
                  !strcmp(plx_ofi.prov, "shm") ? "its fi_write is a process_vm_writev system call, its fi_send a "
                  "copy into a shared queue" : "its writes were measured slower than its sends");
        return;
    }
    if (!plx_ofi.rma) {
        plx_debug(1, "ofi: no fast path: provider %s has no fi_write (FI_RMA)", plx_ofi.prov);
        return;
    }
    size_t slot = plx_config.ofi_fp_slot;
    if (slot < 128 || slot > 65536 || slot % 64 || plx_config.ofi_fp_slots < 2 || plx_config.ofi_fp_slots > 4096) {
        plx_warn("ofi: no fast path: PLEXUS_OFI_FASTPATH_SLOT must be a multiple of 64 from 128 to 64K and "
                 "PLEXUS_OFI_FASTPATH_SLOTS from 2 to 4096 (%zu, %d given)", slot, plx_config.ofi_fp_slots);
        return;
    }
    plx_ofi.fp_cap = PLX_MIN(want, plx_procs.n - 1);
    plx_ofi.fp_in_lpids = plx_calloc((size_t)plx_ofi.fp_cap, sizeof *plx_ofi.fp_in_lpids);
}

/* The peer's credit: packets it has taken from our ring there. */
static inline void plx_ofi_fp_ack(struct plx_ofi_peer *p, uint32_t ack)
{
    struct plx_ofi_fp_out *o = p->fout;
    if (o && (int32_t)(ack - o->acked) > 0)
        o->acked = ack;
}

plx_status_t plx_ofi_fp_send(int lpid, const struct plx_ofi_pfx *pfx, const struct plx_hdr *h,
                             const struct iovec *iov, int iovcnt, size_t plen)
{
    struct plx_ofi_fp_out *o = plx_ofi.peers[lpid].fout;
    size_t len = sizeof *h + plen;
    if (plx_unlikely(o->dead))
        return PLX_ERR_UNSUPPORTED;
    if (len > plx_ofi_fp_room(o->slot)) {
        o->st_big++;
        return PLX_ERR_UNSUPPORTED;
    }
    uint32_t i = o->sent % o->nslots;
    if (o->sent - o->acked >= o->nslots || o->ops[i].kind) {
        o->st_full++;
        return PLX_ERR_UNSUPPORTED;
    }
    fi_addr_t dest;
    if (plx_ofi_addr(lpid, &dest) != 0)
        return PLX_ERR_PEER;
    char *s = o->stage + (size_t)i * o->slot;
    struct plx_ofi_fp_head hd = { .mark = plx_ofi_fp_mark(o->sent), .len = (uint32_t)len, .seq = pfx->seq,
                                  .ack = pfx->ack };
    memcpy(s, &hd, sizeof hd);
    memcpy(s + PLX_OFI_FP_HEAD, h, sizeof *h);
    size_t off = PLX_OFI_FP_HEAD + sizeof *h;
    for (int k = 0; k < iovcnt; k++) {
        memcpy(s + off, iov[k].iov_base, iov[k].iov_len);
        off += iov[k].iov_len;
    }
    size_t tail = PLX_OFI_FP_HEAD + plx_ofi_fp_round8(len);
    uint32_t tw[2] = { hd.mark, 0 };
    memcpy(s + tail, tw, sizeof tw);
    size_t n = tail + PLX_OFI_FP_TAIL;
    uint64_t ra = o->raddr + (uint64_t)i * o->slot;
    ssize_t rc;
    if (n <= plx_ofi.inject_max) {
        rc = fi_inject_write(plx_ofi.ep, s, n, dest, ra, o->rkey);
    } else {
        struct plx_ofi_op *op = &o->ops[i];
        op->kind = PLX_OFI_OP_FPW;
        op->lpid = lpid;
        op->dst = o;            /* its ring, which may be revoked before the completion */
        rc = fi_write(plx_ofi.ep, s, n, o->desc, dest, ra, o->rkey, op);
        if (rc == 0)
            plx_ofi.fp_wbusy++;
        else
            op->kind = 0;
    }
    if (rc == -FI_EAGAIN)
        return PLX_BUSY;
    if (rc) {
        plx_warn("ofi: fast path: fi_write to rank %d's ring: %s; its small messages go by send/recv from now on",
                 lpid, fi_strerror((int)-rc));
        o->dead = 1;
        return PLX_ERR_UNSUPPORTED;
    }
    o->sent++;
    o->st_pkts++;
    return PLX_OK;
}

void plx_ofi_fp_write_done(struct plx_ofi_op *op, int ok)
{
    op->kind = 0;
    plx_ofi.fp_wbusy--;
    if (!ok) {
        struct plx_ofi_fp_out *o = op->dst;
        if (o)
            o->dead = 1;
    }
}

/* Registers a ring for lpid and offers it. */
static void plx_ofi_fp_make(int lpid, struct plx_ofi_peer *p)
{
    struct plx_ofi_fp_in *f = plx_calloc(1, sizeof *f);
    f->nslots = (uint32_t)plx_config.ofi_fp_slots;
    f->slot = (uint32_t)plx_config.ofi_fp_slot;
    f->size = ((size_t)f->nslots * f->slot + PLX_OFI_PAGE - 1) & ~(size_t)(PLX_OFI_PAGE - 1);
    f->mem = aligned_alloc(PLX_OFI_PAGE, f->size);
    if (!f->mem) {
        free(f);
        plx_ofi.fp_cap = plx_ofi.fp_nin;        /* no memory for more */
        return;
    }
    memset(f->mem, 0, f->size);
    uint64_t key = (plx_ofi.mr_mode & FI_MR_PROV_KEY) ? 0 : plx_ofi_key_next();
    int rc = plx_ofi_mr_reg(f->mem, f->size, FI_REMOTE_WRITE | FI_WRITE, key, &f->mr);
    if (rc) {
        plx_debug(1, "ofi: fast path: registering a ring for rank %d (%zu bytes): fi_mr_reg: %s; no more rings",
                  lpid, f->size, fi_strerror(-rc));
        free(f->mem);
        free(f);
        plx_ofi.fp_cap = plx_ofi.fp_nin;
        return;
    }
    f->made_after = p->small_in;
    f->credit_at = p->ring_taken;
    p->fin = f;
    plx_ofi.fp_in_lpids[plx_ofi.fp_nin++] = lpid;
    uint64_t pl[4] = { (plx_ofi.mr_mode & FI_MR_VIRT_ADDR) ? (uint64_t)(uintptr_t)f->mem : 0, fi_mr_key(f->mr),
                       f->nslots, f->slot };
    plx_ofi_ctl_pl(lpid, PLX_PKT_CTS, 0, pl, 4);
    plx_debug(1, "ofi: fast path: a ring of %u slots of %u bytes for rank %d's small messages (after %u of them), "
              "%d of at most %d", f->nslots, f->slot, lpid, p->small_in, plx_ofi.fp_nin, plx_ofi.fp_cap);
}

/* Delivers lpid's kept packets that are due (send/recv ones only). */
static void plx_ofi_fp_early_drain(int lpid, struct plx_ofi_peer *p)
{
    while (!plx_list_empty(&p->rx_early)) {
        struct plx_ofi_early *e = plx_list_entry(p->rx_early.next, struct plx_ofi_early, link);
        if (e->seq != p->rx_expect)
            return;
        plx_list_remove(&e->link);
        plx_ofi_fp_nearly--;
        p->rx_expect++;
        plx_ofi_deliver(lpid, &e->h, e->payload);
        free(e);
    }
}

/* Session 9: peer lpid has passed the threshold again with every ring
 * given. The ring that took the fewest packets since the last check is
 * revoked if it took fewer than lpid sent by send/recv since its own last
 * check (PLEXUS_OFI_FASTPATH_AFTER at least); lpid's next small packet after
 * the drain makes its ring. */
static void plx_ofi_fp_evict(int lpid, struct plx_ofi_peer *p)
{
    uint32_t busy = p->small_in - p->evict_at;
    p->evict_at = p->small_in;
    int victim = -1;
    uint64_t least = UINT64_MAX;
    for (int i = 0; i < plx_ofi.fp_nin; i++) {
        struct plx_ofi_fp_in *f = plx_ofi.peers[plx_ofi.fp_in_lpids[i]].fin;
        uint64_t recent = f->st_pkts - f->pkts_mark;
        f->pkts_mark = f->st_pkts;
        if (recent < least) {
            least = recent;
            victim = plx_ofi.fp_in_lpids[i];
        }
    }
    if (victim < 0 || least >= busy)
        return;
    plx_ofi.peers[victim].fin->revoking = 1;
    plx_ofi.fp_revoking = 1;
    plx_ofi_ctl_pl(victim, PLX_PKT_CTS, PLX_OFI_FP_REVOKE, NULL, 0);
    plx_debug(1, "ofi: fast path: revoking rank %d's ring (%llu packets since the last look) for rank %d (%u small "
              "ones by send/recv)", victim, (unsigned long long)least, lpid, busy);
}

/* The revoked ring of lpid is drained: unregistered and freed; the peer
 * starts again from no ring (its count of small packets too). */
static void plx_ofi_fp_free_in(int lpid)
{
    struct plx_ofi_peer *p = &plx_ofi.peers[lpid];
    struct plx_ofi_fp_in *f = p->fin;
    if (f->busy) {
        f->free_after = 1;
        return;
    }
    if (f->mr)
        fi_close(&f->mr->fid);
    free(f->mem);
    free(f);
    p->fin = NULL;
    p->ring_taken = 0;
    p->ack_sent = 0;
    p->small_in = p->evict_at = 0;
    for (int i = 0; i < plx_ofi.fp_nin; i++) {
        if (plx_ofi.fp_in_lpids[i] == lpid) {
            memmove(&plx_ofi.fp_in_lpids[i], &plx_ofi.fp_in_lpids[i + 1],
                    (size_t)(plx_ofi.fp_nin - i - 1) * sizeof plx_ofi.fp_in_lpids[0]);
            plx_ofi.fp_nin--;
            break;
        }
    }
    plx_ofi.fp_revoking = 0;
    plx_ofi.fp_revoked++;
}

void plx_ofi_fp_rx(int lpid, const struct plx_ofi_pfx *pfx, const struct plx_hdr *h, size_t plen)
{
    struct plx_ofi_peer *p = &plx_ofi.peers[lpid];
    plx_ofi_fp_ack(p, pfx->ack);
    int32_t ahead = (int32_t)(pfx->seq - p->rx_expect);
    if (plx_likely(ahead == 0)) {
        p->rx_expect++;
        if (plx_ofi.fp_cap && !p->fin && !(h->flags & PLX_PKT_F_TRANSPORT) &&
            sizeof *h + plen <= plx_ofi_fp_room((uint32_t)plx_config.ofi_fp_slot) &&
            ++p->small_in > (uint32_t)plx_config.ofi_fp_after) {
            if (plx_ofi.fp_nin < plx_ofi.fp_cap)
                plx_ofi_fp_make(lpid, p);
            else if (plx_config.ofi_fp_evict && !plx_ofi.fp_revoking &&
                     p->small_in - p->evict_at > (uint32_t)plx_config.ofi_fp_after)
                plx_ofi_fp_evict(lpid, p);
        }
        plx_ofi_deliver(lpid, h, h + 1);
        if (plx_unlikely(!plx_list_empty(&p->rx_early)))
            plx_ofi_fp_early_drain(lpid, p);
        return;
    }
    if (plx_unlikely(ahead < 0)) {
        plx_warn("ofi: rank %d's packet %u came again (%u due); delivered as it is", lpid, pfx->seq, p->rx_expect);
        plx_ofi_deliver(lpid, h, h + 1);
        return;
    }
    /* A packet numbered after one not here yet: a ring packet, or (tcp;ofi_rxm)
     * a larger send/recv packet whose completion comes after later small ones
     * (FI_ORDER_SAS orders matching, not completions). Kept, in number order. */
    struct plx_ofi_early *e = plx_malloc(sizeof *e + plen);
    e->seq = pfx->seq;
    e->h = *h;
    memcpy(e->payload, h + 1, plen);
    struct plx_list *pos = p->rx_early.prev;
    while (pos != &p->rx_early &&
           (int32_t)(plx_list_entry(pos, struct plx_ofi_early, link)->seq - e->seq) > 0)
        pos = pos->prev;
    plx_list_push_front(pos, &e->link);     /* after pos */
    plx_ofi_fp_nearly++;
}

/* Delivers lpid's packets due, from its ring and from the kept ones. */
static int plx_ofi_fp_drain(int lpid)
{
    struct plx_ofi_peer *p = &plx_ofi.peers[lpid];
    struct plx_ofi_fp_in *f = p->fin;
    int work = 0;
    if (f->busy)
        return 0;
    f->busy = 1;
    for (;;) {
        char *s = f->mem + (size_t)(p->ring_taken % f->nslots) * f->slot;
        struct plx_ofi_fp_head *hd = (struct plx_ofi_fp_head *)s;
        uint32_t want = plx_ofi_fp_mark(p->ring_taken);
        if (__atomic_load_n(&hd->mark, __ATOMIC_ACQUIRE) == want) {
            uint32_t len = hd->len;
            uint32_t *tail = (uint32_t *)(s + PLX_OFI_FP_HEAD + plx_ofi_fp_round8(len));
            const struct plx_hdr *h = (const struct plx_hdr *)(s + PLX_OFI_FP_HEAD);
            if (len < sizeof *h || len > plx_ofi_fp_room(f->slot))
                plx_fatal("ofi: fast path: rank %d wrote a packet of %u bytes into a slot of %u", lpid, len, f->slot);
            if (__atomic_load_n(tail, __ATOMIC_ACQUIRE) == want && hd->seq == p->rx_expect) {
                plx_ofi_fp_ack(p, hd->ack);
                p->rx_expect++;
                if (h->type < PLX_PKT_TYPE_MAX && sizeof *h + h->len <= len)
                    plx_ofi_deliver(lpid, h, h + 1);
                else
                    plx_warn("ofi: fast path: dropped a malformed packet of rank %d", lpid);
                /* the slot is the peer's again only when ring_taken passes it */
                memset(s, 0, PLX_OFI_FP_HEAD + plx_ofi_fp_round8(len) + PLX_OFI_FP_TAIL);
                p->ring_taken++;
                f->st_pkts++;
                work++;
                if (p->ring_taken - p->ack_sent >= f->nslots / 2 && p->ring_taken - f->credit_at >= f->nslots / 2) {
                    f->credit_at = p->ring_taken;
                    plx_ofi_ctl_pl(lpid, PLX_PKT_CREDIT, 0, NULL, 0);
                }
                continue;
            }
        }
        if (!plx_list_empty(&p->rx_early)) {
            struct plx_ofi_early *e = plx_list_entry(p->rx_early.next, struct plx_ofi_early, link);
            if (e->seq == p->rx_expect) {
                plx_list_remove(&e->link);
                plx_ofi_fp_nearly--;
                p->rx_expect++;
                plx_ofi_deliver(lpid, &e->h, e->payload);
                free(e);
                work++;
                continue;
            }
        }
        break;
    }
    f->busy = 0;
    if (plx_unlikely(f->free_after))
        plx_ofi_fp_free_in(lpid);
    return work;
}

int plx_ofi_fp_poll(void)
{
    int work = 0;
    for (int i = 0; i < plx_ofi.fp_nin; i++) {
        int n = plx_ofi.fp_nin;
        work += plx_ofi_fp_drain(plx_ofi.fp_in_lpids[i]);
        if (plx_ofi.fp_nin < n)
            i--;                /* its ring was revoked and freed: the next one moved here */
    }
    return work;
}

int plx_ofi_fp_pending(void)
{
    return plx_ofi_fp_nearly;
}

/* The receiver's offer: our ring into it. */
static void plx_ofi_fp_take_offer(int lpid, const uint64_t *pl)
{
    struct plx_ofi_peer *p = &plx_ofi.peers[lpid];
    if (p->fout || pl[2] < 2 || pl[2] > 4096 || pl[3] < 128 || pl[3] > 65536)
        return;
    struct plx_ofi_fp_out *o = plx_calloc(1, sizeof *o);
    o->raddr = pl[0];
    o->rkey = pl[1];
    o->nslots = (uint32_t)pl[2];
    o->slot = (uint32_t)pl[3];
    o->size = ((size_t)o->nslots * o->slot + PLX_OFI_PAGE - 1) & ~(size_t)(PLX_OFI_PAGE - 1);
    o->stage = aligned_alloc(PLX_OFI_PAGE, o->size);
    if (!o->stage)
        goto fail;
    memset(o->stage, 0, o->size);
    if (plx_ofi.mr_mode & FI_MR_LOCAL) {
        int rc = plx_ofi_mr_reg(o->stage, o->size, FI_WRITE, plx_ofi_key_next(), &o->mr);
        if (rc) {
            plx_debug(1, "ofi: fast path: registering the images of rank %d's ring: fi_mr_reg: %s", lpid,
                      fi_strerror(-rc));
            goto fail;
        }
        o->desc = fi_mr_desc(o->mr);
    }
    o->ops = plx_calloc(o->nslots, sizeof *o->ops);
    p->fout = o;
    plx_debug(2, "ofi: fast path: rank %d gave us a ring of %u slots of %u bytes", lpid, o->nslots, o->slot);
    return;
fail:
    free(o->stage);
    free(o);
}

void plx_ofi_fp_ctl(int lpid, const struct plx_hdr *h, const void *payload)
{
    if (h->type == PLX_PKT_CTS && h->len == 4 * sizeof(uint64_t)) {
        uint64_t pl[4];
        memcpy(pl, payload, sizeof pl);
        plx_ofi_fp_take_offer(lpid, pl);
    } else if (h->type == PLX_PKT_CTS && h->sreq == PLX_OFI_FP_REVOKE) {
        /* stop writing (the ring stays, retired, until its writes are done:
         * finalize), and say how many packets were written */
        struct plx_ofi_peer *p = &plx_ofi.peers[lpid];
        uint64_t sent = 0;
        if (p->fout) {
            struct plx_ofi_fp_out *o = p->fout;
            o->dead = 1;
            sent = o->sent;
            plx_list_push_back(&plx_ofi.fp_retired, &o->link);
            p->fout = NULL;
        }
        plx_ofi_ctl_pl(lpid, PLX_PKT_CTS, PLX_OFI_FP_REVOKED, &sent, 1);
    } else if (h->type == PLX_PKT_CTS && h->sreq == PLX_OFI_FP_REVOKED && h->len == sizeof(uint64_t)) {
        struct plx_ofi_peer *p = &plx_ofi.peers[lpid];
        uint64_t sent;
        memcpy(&sent, payload, sizeof sent);
        if (!p->fin || !p->fin->revoking)
            return;
        if (p->ring_taken != (uint32_t)sent)
            plx_warn("ofi: fast path: rank %d wrote %llu packets into its revoked ring, %u were taken", lpid,
                     (unsigned long long)sent, p->ring_taken);
        plx_debug(1, "ofi: fast path: rank %d's ring is revoked after %llu packets", lpid,
                  (unsigned long long)sent);
        plx_ofi_fp_free_in(lpid);
    }
    /* PLX_PKT_CREDIT: its prefix carried the credit */
}

void plx_ofi_fp_finalize(void)
{
    if (!plx_ofi.peers)
        return;
    int me = plx_procs.my_lpid;
    if (plx_config.stats && plx_ofi.open) {
        char list[256] = "";
        size_t l = 0;
        for (int i = 0; i < plx_ofi.fp_nin && l < sizeof list; i++)
            l += (size_t)snprintf(list + l, sizeof list - l, "%s%d", i ? "," : "", plx_ofi.fp_in_lpids[i]);
        plx_warn("stats: rank %d ofi fast path: %d rings here of at most %d (PLEXUS_OFI_FASTPATH_PEERS), from ranks "
                 "[%s], %llu revoked", me, plx_ofi.fp_nin, plx_ofi.fp_cap, list,
                 (unsigned long long)plx_ofi.fp_revoked);
        for (int lp = 0; lp < plx_procs.n; lp++) {
            struct plx_ofi_peer *p = &plx_ofi.peers[lp];
            if (!p->fin && !p->fout)
                continue;
            char in[128] = "no ring from it", out[160] = "no ring to it";
            if (p->fin)
                snprintf(in, sizeof in, "ring from it %llu packets (made after %u small ones)",
                         (unsigned long long)p->fin->st_pkts, p->fin->made_after);
            if (p->fout)
                snprintf(out, sizeof out, "ring to it %llu packets, %llu by send/recv while it was full, %llu too "
                         "large for a slot", (unsigned long long)p->fout->st_pkts,
                         (unsigned long long)p->fout->st_full, (unsigned long long)p->fout->st_big);
            plx_warn("stats: rank %d peer %d channel ofi: fast path: %s; %s", me, lp, in, out);
        }
    }
    for (int lp = 0; lp < plx_procs.n; lp++) {
        struct plx_ofi_peer *p = &plx_ofi.peers[lp];
        if (p->fin) {
            if (p->fin->mr)
                fi_close(&p->fin->mr->fid);
            free(p->fin->mem);
            free(p->fin);
            p->fin = NULL;
        }
        if (p->fout) {
            if (p->fout->mr)
                fi_close(&p->fout->mr->fid);
            free(p->fout->stage);
            free(p->fout->ops);
            free(p->fout);
            p->fout = NULL;
        }
        while (p->rx_early.next && !plx_list_empty(&p->rx_early)) {
            struct plx_ofi_early *e = plx_list_entry(p->rx_early.next, struct plx_ofi_early, link);
            plx_list_remove(&e->link);
            free(e);
        }
    }
    while (plx_ofi.fp_retired.next && !plx_list_empty(&plx_ofi.fp_retired)) {
        struct plx_ofi_fp_out *o = plx_list_entry(plx_ofi.fp_retired.next, struct plx_ofi_fp_out, link);
        plx_list_remove(&o->link);
        if (o->mr)
            fi_close(&o->mr->fid);
        free(o->stage);
        free(o->ops);
        free(o);
    }
    free(plx_ofi.fp_in_lpids);
    plx_ofi.fp_in_lpids = NULL;
    plx_ofi.fp_nin = plx_ofi.fp_cap = 0;
    plx_ofi_fp_nearly = 0;
}
