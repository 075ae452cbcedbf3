/*
 * Remote memory for the RMA layer (see route.h): the same five operations
 * (register, put, get, atomic, flush) over every channel. A channel whose
 * transport has native remote memory (PLX_TP_RMA, PLX_TP_ATOMIC) does them
 * itself; on any other the operations are active messages executed by the
 * target's progress engine (PLX_PKT_RMA, answered by PLX_PKT_RMA_ANS).
 *
 * Fallback protocol. Registration puts the region in a table of this
 * process; its key is the slot (+1) and a generation, so a stale key is
 * refused. An operation carries the key, the target address (hdr.off) and,
 * for a put, the data; the target checks that [addr, addr+len) lies inside
 * the region the key names (never a write outside it), executes it (atomics
 * with the CPU's 64-bit atomics, so they are atomic with the target's own
 * loads and stores and with the other origins'), and answers with a status,
 * the data of a get or the old value of an atomic. Every operation is
 * answered, so it completes at the origin only when done at the target,
 * and flush completes once every operation issued to that peer before it is
 * answered. Operations larger than PLX_RMA_AM_FRAG go as several messages
 * on one completion.
 */
#include <stdlib.h>
#include <string.h>
#include "core/log.h"
#include "core/plexus.h"
#include "core/runtime.h"
#include "route/route.h"

#define PLX_RMA_AM_FRAG (64 * 1024)
#define PLX_RMA_AM_REGIONS 4096

enum { PLX_RMA_PUT = 1, PLX_RMA_GET, PLX_RMA_ATOMIC };

/* Payload of an RMA request before the put data. */
struct plx_rma_req {
    uint64_t key;
    uint64_t len;               /* bytes to put or get */
    uint64_t operand, compare;  /* atomic */
    uint32_t atomic_op;
    uint32_t pad;
};

/* An operation waiting for its answer at the origin. */
struct plx_rma_op {
    struct plx_list link;       /* on the list of outstanding operations */
    struct plx_list qlink;      /* on the list of operations not sent yet, while queued */
    struct plx_tp_comp *comp;
    void *local;                /* get: where the data goes */
    uint64_t *result;           /* atomic: the old value */
    int lpid;
    uint64_t seq;               /* issue order */
    /* the request, kept while it waits for channel room */
    struct plx_hdr h;
    struct plx_rma_req q;
    const void *data;           /* put: the origin's bytes (not copied: the
                                 * operation completes only once answered) */
    size_t dlen;
};

struct plx_rma_flush {
    struct plx_list link;
    struct plx_tp_comp *comp;
    int lpid;
    uint64_t upto;              /* completes when no operation to lpid up to this seq is outstanding */
};

/* An answer the channel could not take at once, sent again from the poll. */
struct plx_rma_pending {
    struct plx_list link;
    int lpid;
    struct plx_hdr h;
    char data[];
};

struct plx_rma_region {
    void *addr;
    size_t len;
    uint32_t gen;
    int used;
};

static struct {
    struct plx_rma_region reg[PLX_RMA_AM_REGIONS];
    uint32_t next_gen;
    uint64_t next_seq;
    struct plx_list outstanding;        /* struct plx_rma_op, in issue order */
    struct plx_list flushes;
    struct plx_list pending;            /* answers waiting for channel room */
    struct plx_list queued;             /* operations waiting for channel room, in issue order */
    int init;
} plx_rma_am;

static void plx_rma_am_init(void)
{
    if (plx_rma_am.init)
        return;
    plx_list_init(&plx_rma_am.outstanding);
    plx_list_init(&plx_rma_am.flushes);
    plx_list_init(&plx_rma_am.pending);
    plx_list_init(&plx_rma_am.queued);
    plx_rma_am.init = 1;
}

/* --- native remote memory (issue 14) ------------------------------------------------- */

/* The region is also registered on every instance with native remote
 * memory, with the same key (the transport requests it: one key names the
 * region on every channel); their registrations hang off mr->priv. */
static void plx_rma_native_deregister(struct plx_tp_mr *mr)
{
    struct plx_tp_mr *sub = mr->priv;
    if (!sub)
        return;
    for (int i = 0; i < plx_route_nifaces; i++)
        if (sub[i].priv)
            plx_route_ifaces[i]->ops->mem_deregister(plx_route_ifaces[i], &sub[i]);
    free(sub);
    mr->priv = NULL;
}

static plx_status_t plx_rma_native_register(void *addr, size_t len, struct plx_tp_mr *mr)
{
    for (int i = 0; i < plx_route_nifaces; i++) {
        struct plx_tp_iface *ifc = plx_route_ifaces[i];
        if (!(ifc->caps.flags & PLX_TP_RMA) || !ifc->ops->mem_register)
            continue;
        if (!mr->priv)
            mr->priv = plx_calloc(PLX_ROUTE_MAX_IFACES, sizeof(struct plx_tp_mr));
        struct plx_tp_mr *sub = mr->priv;
        sub[i].key = mr->key;
        plx_status_t st = ifc->ops->mem_register(ifc, addr, len, &sub[i]);
        if (st == PLX_OK && sub[i].key != mr->key) {
            ifc->ops->mem_deregister(ifc, &sub[i]);
            st = PLX_ERR_INTERN;
        }
        if (st != PLX_OK) {
            sub[i].priv = NULL;
            plx_route_mem_deregister(mr);
            return st;
        }
    }
    return PLX_OK;
}

/* --- registration ------------------------------------------------------------------ */

plx_status_t plx_route_mem_register(void *addr, size_t len, struct plx_tp_mr *mr)
{
    plx_rma_am_init();
    for (int i = 0; i < PLX_RMA_AM_REGIONS; i++) {
        if (plx_rma_am.reg[i].used)
            continue;
        plx_rma_am.reg[i].used = 1;
        plx_rma_am.reg[i].addr = addr;
        plx_rma_am.reg[i].len = len;
        plx_rma_am.reg[i].gen = ++plx_rma_am.next_gen;
        mr->addr = addr;
        mr->len = len;
        mr->key = (uint64_t)plx_rma_am.reg[i].gen << 32 | (uint64_t)(i + 1);
        mr->priv = NULL;
        return plx_rma_native_register(addr, len, mr);
    }
    return PLX_ERR_NOMEM;
}

void plx_route_mem_deregister(struct plx_tp_mr *mr)
{
    plx_rma_native_deregister(mr);
    uint32_t slot = (uint32_t)(mr->key & 0xffffffffu);
    if (slot >= 1 && slot <= PLX_RMA_AM_REGIONS && plx_rma_am.reg[slot - 1].gen == (uint32_t)(mr->key >> 32))
        memset(&plx_rma_am.reg[slot - 1], 0, sizeof plx_rma_am.reg[slot - 1]);
    mr->key = 0;
}

/* The local memory [addr, addr+len) if key names a region that holds it. */
static void *plx_rma_am_target(uint64_t key, uint64_t addr, uint64_t len)
{
    uint32_t slot = (uint32_t)(key & 0xffffffffu);
    if (slot < 1 || slot > PLX_RMA_AM_REGIONS)
        return NULL;
    const struct plx_rma_region *r = &plx_rma_am.reg[slot - 1];
    if (!r->used || r->gen != (uint32_t)(key >> 32))
        return NULL;
    uintptr_t lo = (uintptr_t)r->addr;
    if (addr < lo || len > r->len || addr - lo > r->len - len)
        return NULL;
    return (void *)(uintptr_t)addr;
}

/* --- origin --------------------------------------------------------------------------- */

static plx_status_t plx_rma_am_send(struct plx_rma_op *op)
{
    struct iovec iov[2] = { { &op->q, sizeof op->q }, { (void *)op->data, op->dlen } };
    return plx_route_send(plx_route_peer(op->lpid), PLX_RC_RMA, op->dlen, &op->h, iov, op->dlen ? 2 : 1);
}

/* Issues one operation. An operation the channel has no room for now
 * waits on the queue (as does everything after it, so they leave in issue
 * order) and goes from the poll: once one fragment of an operation is
 * issued, the rest always follow, and the caller never sees BUSY. */
static plx_status_t plx_rma_am_issue(struct plx_route_peer *rp, int kind, const struct plx_rma_req *q,
                                     uint64_t raddr, const void *data, size_t dlen, struct plx_tp_comp *comp,
                                     void *local, uint64_t *result)
{
    plx_rma_am_init();
    struct plx_rma_op *op = plx_malloc(sizeof *op);
    op->comp = comp;
    op->local = local;
    op->result = result;
    op->lpid = rp->lpid;
    op->seq = ++plx_rma_am.next_seq;
    op->h = (struct plx_hdr){ .type = PLX_PKT_RMA, .flags = (uint8_t)kind, .off = raddr,
                              .len = (uint32_t)(sizeof *q + dlen), .sreq = (uint64_t)(uintptr_t)op };
    op->q = *q;
    op->data = data;
    op->dlen = dlen;
    plx_list_init(&op->qlink);
    plx_status_t st = plx_list_empty(&plx_rma_am.queued) ? plx_rma_am_send(op) : PLX_BUSY;
    if (st != PLX_OK && st != PLX_BUSY) {
        plx_rma_am.next_seq--;
        free(op);
        return st;
    }
    comp->count++;
    plx_list_push_back(&plx_rma_am.outstanding, &op->link);
    if (st == PLX_BUSY)
        plx_list_push_back(&plx_rma_am.queued, &op->qlink);
    return PLX_OK;
}

/* A native operation counts one on comp, completed by the transport from
 * its poll (never inside the call): counted before, uncounted if refused. */
static plx_status_t plx_rma_native_refused(plx_status_t st, struct plx_tp_comp *comp)
{
    if (st != PLX_OK)
        comp->count--;
    return st;
}

/* Issue 14: the fragment size, within what the peer's channel takes in one
 * packet (the ofi transport's are its eager buffers, 16 KiB by default). */
static size_t plx_rma_am_frag(struct plx_route_peer *rp)
{
    size_t f = PLX_RMA_AM_FRAG;
    if (rp->nchan) {
        size_t room = plx_route_caps(rp)->max_packet - sizeof(struct plx_hdr) - sizeof(struct plx_rma_req);
        f = PLX_MIN(f, room);
    }
    return f;
}

plx_status_t plx_route_put(struct plx_route_peer *rp, const void *local, size_t len, uint64_t raddr, uint64_t rkey,
                           struct plx_tp_comp *comp)
{
    struct plx_tp_iface *nat = plx_route_rma_native(rp, len, 0);
    if (nat) {
        comp->count++;
        return plx_rma_native_refused(nat->ops->put(nat, rp->lpid, local, len, raddr, rkey, comp), comp);
    }
    size_t frag = plx_rma_am_frag(rp);
    for (size_t off = 0; off < len || off == 0; off += frag) {
        size_t n = PLX_MIN(frag, len - off);
        struct plx_rma_req q = { .key = rkey, .len = n };
        plx_status_t st = plx_rma_am_issue(rp, PLX_RMA_PUT, &q, raddr + off, (const char *)local + off, n, comp,
                                           NULL, NULL);
        if (st != PLX_OK)
            return st;
        if (!len)
            break;
    }
    return PLX_OK;
}

plx_status_t plx_route_get(struct plx_route_peer *rp, void *local, size_t len, uint64_t raddr, uint64_t rkey,
                           struct plx_tp_comp *comp)
{
    struct plx_tp_iface *nat = plx_route_rma_native(rp, len, 0);
    if (nat) {
        comp->count++;
        return plx_rma_native_refused(nat->ops->get(nat, rp->lpid, local, len, raddr, rkey, comp), comp);
    }
    size_t frag = plx_rma_am_frag(rp);
    for (size_t off = 0; off < len || off == 0; off += frag) {
        size_t n = PLX_MIN(frag, len - off);
        struct plx_rma_req q = { .key = rkey, .len = n };
        plx_status_t st = plx_rma_am_issue(rp, PLX_RMA_GET, &q, raddr + off, NULL, 0, comp, (char *)local + off,
                                           NULL);
        if (st != PLX_OK)
            return st;
        if (!len)
            break;
    }
    return PLX_OK;
}

plx_status_t plx_route_atomic(struct plx_route_peer *rp, int op, uint64_t operand, uint64_t compare,
                              uint64_t *result, uint64_t raddr, uint64_t rkey, struct plx_tp_comp *comp)
{
    struct plx_tp_iface *nat = plx_route_rma_native(rp, 8, 1);
    if (nat) {
        comp->count++;
        return plx_rma_native_refused(nat->ops->atomic(nat, rp->lpid, op, operand, compare, result, raddr, rkey,
                                                       comp), comp);
    }
    struct plx_rma_req q = { .key = rkey, .len = 8, .operand = operand, .compare = compare, .atomic_op = (uint32_t)op };
    return plx_rma_am_issue(rp, PLX_RMA_ATOMIC, &q, raddr, NULL, 0, comp, NULL, result);
}

/* Issue 14, session 9: element-wise atomics, native only (there is no
 * fallback here: the RMA layer keeps its own active messages for what the
 * channel cannot do, decided per window, see src/rma/natacc.c). */
size_t plx_route_acc_valid(struct plx_route_peer *rp, int kind, int op, int dt, unsigned *flags)
{
    struct plx_tp_iface *nat = plx_route_rma_native(rp, 8, 1);
    *flags = 0;
    if (!nat || !nat->ops->acc_valid || !nat->ops->acc)
        return 0;
    return nat->ops->acc_valid(nat, kind, op, dt, flags);
}

plx_status_t plx_route_acc(struct plx_route_peer *rp, const struct plx_tp_acc *a, struct plx_tp_comp *comp)
{
    struct plx_tp_iface *nat = plx_route_rma_native(rp, 8, 1);
    if (!nat || !nat->ops->acc)
        return PLX_ERR_UNSUPPORTED;
    comp->count++;
    return plx_rma_native_refused(nat->ops->acc(nat, rp->lpid, a, comp), comp);
}

static void plx_rma_am_answered(int lpid);

plx_status_t plx_route_flush(struct plx_route_peer *rp, struct plx_tp_comp *comp)
{
    plx_rma_am_init();
    /* native operations (any size may have gone natively) and fallback ones alike */
    struct plx_tp_iface *nat = plx_route_rma_native(rp, 0, 0);
    if (nat) {
        comp->count++;
        plx_status_t st = nat->ops->flush(nat, rp->lpid, comp);
        if (st != PLX_OK) {
            comp->count--;
            return st;
        }
    }
    struct plx_rma_flush *f = plx_malloc(sizeof *f);
    f->comp = comp;
    f->lpid = rp->lpid;
    f->upto = plx_rma_am.next_seq;
    comp->count++;
    plx_list_push_back(&plx_rma_am.flushes, &f->link);
    plx_rma_am_answered(rp->lpid);
    return PLX_OK;
}

/* Is an operation to lpid issued at or before seq still unanswered? O(outstanding). */
static int plx_rma_am_before(int lpid, uint64_t seq)
{
    struct plx_list *pos;
    plx_list_for_each(pos, &plx_rma_am.outstanding) {
        const struct plx_rma_op *op = plx_list_entry(pos, struct plx_rma_op, link);
        if (op->lpid == lpid && op->seq <= seq)
            return 1;
    }
    return 0;
}

/* Completes the flushes of lpid that wait for nothing any more (answers
 * may come in any order, so each flush checks what it waits for). */
static void plx_rma_am_answered(int lpid)
{
    struct plx_list *pos, *n;
    plx_list_for_each_safe(pos, n, &plx_rma_am.flushes) {
        struct plx_rma_flush *f = plx_list_entry(pos, struct plx_rma_flush, link);
        if (f->lpid != lpid || plx_rma_am_before(lpid, f->upto))
            continue;
        plx_list_remove(&f->link);
        plx_tp_comp_done(f->comp, PLX_OK);
        free(f);
    }
}

/* --- both ends' handlers ------------------------------------------------------------------ */

/* The target: executes the operation and answers. */
static void plx_rma_am_recv(struct plx_tp_iface *ifc, int lpid, const struct plx_hdr *h, const void *payload)
{
    struct plx_rma_req q;
    uint64_t ans[1] = { 0 };
    const void *adata = NULL;
    size_t alen = 0;
    uint8_t status = 0;
    unsigned kind = plx_pkt_flags(h);     /* shm's padded records carry the transport's bit */
    if (h->len < sizeof q) {
        status = 2;
    } else {
        memcpy(&q, payload, sizeof q);
        void *mem = plx_rma_am_target(q.key, h->off, q.len);
        if (!mem || (kind == PLX_RMA_PUT && h->len - sizeof q != q.len) ||
            (kind == PLX_RMA_ATOMIC && (q.len != 8 || (h->off & 7)))) {
            status = 1;         /* no such region, or outside it: nothing is touched */
        } else if (kind == PLX_RMA_PUT) {
            memcpy(mem, (const char *)payload + sizeof q, q.len);
        } else if (kind == PLX_RMA_GET) {
            adata = mem;
            alen = q.len;
        } else if (kind == PLX_RMA_ATOMIC) {
            uint64_t *w = mem;
            switch (q.atomic_op) {
            case PLX_TP_AT_FADD:
                ans[0] = __atomic_fetch_add(w, q.operand, __ATOMIC_SEQ_CST);
                break;
            case PLX_TP_AT_SWAP:
                ans[0] = __atomic_exchange_n(w, q.operand, __ATOMIC_SEQ_CST);
                break;
            case PLX_TP_AT_CSWAP:
                ans[0] = q.compare;
                __atomic_compare_exchange_n(w, &ans[0], q.operand, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
                break;
            default:
                status = 2;
            }
            if (!status) {
                adata = ans;
                alen = sizeof ans;
            }
        } else {
            status = 2;
        }
    }
    struct plx_hdr a = { .type = PLX_PKT_RMA_ANS, .flags = status, .len = alen, .sreq = h->sreq };
    struct iovec iov = { (void *)adata, alen };
    plx_rma_am_init();
    if (plx_list_empty(&plx_rma_am.pending) &&
        plx_route_send(plx_route_peer(lpid), PLX_RC_RMA, alen, &a, &iov, alen ? 1 : 0) == PLX_OK)
        return;
    /* no room now: a copy waits, in order, for the poll */
    struct plx_rma_pending *p = plx_malloc(sizeof *p + alen);
    p->lpid = lpid;
    p->h = a;
    if (alen)
        memcpy(p->data, adata, alen);
    plx_list_push_back(&plx_rma_am.pending, &p->link);
}

static struct {
    plx_tp_recv_fn req, ans;
    int (*poll)(void);
} plx_rma_am_hook;

void plx_route_am_hook(plx_tp_recv_fn req, plx_tp_recv_fn ans, int (*poll)(void))
{
    plx_rma_am_hook.req = req;
    plx_rma_am_hook.ans = ans;
    plx_rma_am_hook.poll = poll;
}

static void plx_rma_am_hook_req(struct plx_tp_iface *ifc, int lpid, const struct plx_hdr *h, const void *payload)
{
    if (plx_rma_am_hook.req)
        plx_rma_am_hook.req(ifc, lpid, h, payload);
}

static void plx_rma_am_hook_ans(struct plx_tp_iface *ifc, int lpid, const struct plx_hdr *h, const void *payload)
{
    if (plx_rma_am_hook.ans)
        plx_rma_am_hook.ans(ifc, lpid, h, payload);
}

int plx_route_rma_poll(void)
{
    int work = plx_rma_am_hook.poll ? plx_rma_am_hook.poll() : 0;
    while (plx_rma_am.init && !plx_list_empty(&plx_rma_am.queued)) {
        struct plx_rma_op *op = plx_list_entry(plx_rma_am.queued.next, struct plx_rma_op, qlink);
        plx_status_t st = plx_rma_am_send(op);
        if (st == PLX_BUSY)
            break;
        plx_list_remove(&op->qlink);
        work++;
        if (st != PLX_OK) {     /* the peer is gone: the operation fails */
            plx_list_remove(&op->link);
            struct plx_tp_comp *c = op->comp;
            int lpid = op->lpid;
            free(op);
            plx_rma_am_answered(lpid);
            plx_tp_comp_done(c, st);
        }
    }
    while (plx_rma_am.init && !plx_list_empty(&plx_rma_am.pending)) {
        struct plx_rma_pending *p = plx_list_entry(plx_rma_am.pending.next, struct plx_rma_pending, link);
        struct iovec iov = { p->data, p->h.len };
        if (plx_route_send(plx_route_peer(p->lpid), PLX_RC_RMA, p->h.len, &p->h, &iov, p->h.len ? 1 : 0) != PLX_OK)
            break;
        plx_list_remove(&p->link);
        free(p);
        work++;
    }
    return work;
}

/* The origin: the answer completes the operation. */
static void plx_rma_am_answer(struct plx_tp_iface *ifc, int lpid, const struct plx_hdr *h, const void *payload)
{
    struct plx_rma_op *op = (struct plx_rma_op *)(uintptr_t)h->sreq;
    plx_list_remove(&op->link);
    plx_status_t st = PLX_OK;
    unsigned status = plx_pkt_flags(h);
    if (status)
        st = status == 1 ? PLX_ERR_RANGE : PLX_ERR_ARG;
    else if (op->local && h->len)
        memcpy(op->local, payload, h->len);
    else if (op->result && h->len >= 8)
        memcpy(op->result, payload, 8);
    struct plx_tp_comp *c = op->comp;
    free(op);
    plx_rma_am_answered(lpid);
    plx_tp_comp_done(c, st);
}

void plx_route_rma_upcalls(struct plx_tp_upcalls *up)
{
    up->recv[PLX_PKT_RMA] = plx_rma_am_recv;
    up->recv[PLX_PKT_RMA_ANS] = plx_rma_am_answer;
    up->recv[PLX_PKT_WIN] = plx_rma_am_hook_req;
    up->recv[PLX_PKT_WIN_ANS] = plx_rma_am_hook_ans;
}
