/*
 * RMA operations: execution at the target's memory, the active-message
 * wire (PLX_PKT_WIN / PLX_PKT_WIN_ANS), the origin's side of an operation,
 * and the target's lock queue (see rma.h).
 *
 * An operation's target side is a list of byte runs (offset, length) from
 * the target datatype: the packed runs for put and get, the reduction runs
 * (whole padded pairs for MPI_DOUBLE_INT and kin) for the accumulates. The
 * data travels as one stream: the packed bytes for put and get; for the
 * accumulates the origin's elements laid out as an array of the basic type
 * (so a padded pair keeps its padding and reduces in place). A large
 * operation goes as pieces of at most PLX_RMA_PIECE data bytes and
 * PLX_RMA_PIECE_RUNS runs, cut at element boundaries; each piece is
 * checked against the window at the target (nothing outside it is ever
 * touched), executed whole and answered, with the data of a get or the old
 * values of a get_accumulate.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/config.h"
#include "core/log.h"
#include "core/runtime.h"
#include "progress/progress.h"
#include "rma/rma.h"
#include "route/route.h"

#define PLX_RMA_PIECE (16 * 1024)
/* Over a channel that carries packets of any size (a byte stream: TCP,
 * SCTP) pieces are larger: each piece costs a header, a handler call and an
 * answer at both ends, and 64 answered pieces per MiB made a 1 MiB put or
 * get under lock over TCP 2-3x Open MPI's time. Kept below the router's
 * striping threshold (256 KiB), so that one origin's pieces and its unlock
 * stay on one channel, in order, with several rails. */
#define PLX_RMA_PIECE_STREAM (128 * 1024)
#define PLX_RMA_PIECE_RUNS 512

struct plx_rma_wire {
    uint32_t wid;               /* the receiver's window slot */
    int32_t src;                /* the sender's rank in the window */
    uint8_t kind, lock_type, status, pad;
    uint32_t nruns;
    int32_t op, basic;          /* MPI handles */
    uint32_t elem;              /* accumulates: bytes of one basic element as laid out */
    uint32_t dlen;              /* data bytes after the runs */
    uint64_t roff;              /* where this piece's answer goes in the result stream */
};

/* An operation waiting for its answers at the origin. */
struct plx_rma_op {
    struct plx_win *w;
    int target;
    int kind;
    int pieces;                 /* unanswered */
    int status;                 /* MPI error class a target answered, or 0 */
    char *res;                  /* result stream (owned unless res_user) */
    int res_user;               /* res is the user's buffer: a contiguous get */
    size_t res_len;
    void *rbuf;
    MPI_Aint rcount;
    struct plx_datatype *rdt;   /* referenced */
    struct plx_datatype *basic; /* accumulates: the layout of res */
    MPI_Aint nelem;
    struct plx_request *req;
    struct plx_tp_comp comp;    /* issue 14: native atomics (natacc.c) */
    char *nat_in;               /* their data stream, when copied: kept until complete */
};

/* Answers and grants that the channel could not take, sent again from the poll. */
struct plx_rma_queued {
    struct plx_list link;
    int lpid;
    struct plx_hdr h;
    size_t len;
    char data[];
};

static struct {
    struct plx_win **wins;      /* by wid (0 unused) */
    int nwins;
    struct plx_list queued;
    int init;
} plx_rma;

/* --- window slots ------------------------------------------------------------------- */

int plx_rma_wid_new(struct plx_win *w)
{
    for (int i = 1; i < plx_rma.nwins; i++) {
        if (!plx_rma.wins[i]) {
            plx_rma.wins[i] = w;
            plx_rma_fab_wid_reset(i);
            return i;
        }
    }
    int n = plx_rma.nwins ? 2 * plx_rma.nwins : 16;
    plx_rma.wins = realloc(plx_rma.wins, (size_t)n * sizeof *plx_rma.wins);
    if (!plx_rma.wins)
        plx_fatal("rma: out of memory for the window table");
    memset(plx_rma.wins + plx_rma.nwins, 0, (size_t)(n - plx_rma.nwins) * sizeof *plx_rma.wins);
    int id = plx_rma.nwins ? plx_rma.nwins : 1;
    plx_rma.nwins = n;
    plx_rma.wins[id] = w;
    plx_rma_fab_wid_reset(id);
    return id;
}

void plx_rma_wid_free(int wid)
{
    if (wid > 0 && wid < plx_rma.nwins)
        plx_rma.wins[wid] = NULL;
}

struct plx_win *plx_rma_win_of(int wid)
{
    return wid > 0 && wid < plx_rma.nwins ? plx_rma.wins[wid] : NULL;
}

/* --- execution ---------------------------------------------------------------------------- */

static inline char *plx_rma_at(char *mem, uint64_t off)
{
    return (char *)((uintptr_t)mem + (uintptr_t)off);
}

void plx_rma_exec(char *mem, int kind, const struct plx_rma_run *runs, int nruns, const char *data, char *out,
                  MPI_Datatype basic, size_t elem, MPI_Op op)
{
    size_t p = 0;
    if (kind == PLX_RMA_K_CAS) {
        char *t = plx_rma_at(mem, runs[0].off);
        memcpy(out, t, elem);
        if (!memcmp(t, data + elem, elem))
            memcpy(t, data, elem);
        return;
    }
    for (int i = 0; i < nruns; i++) {
        char *t = plx_rma_at(mem, runs[i].off);
        size_t len = runs[i].len;
        switch (kind) {
        case PLX_RMA_K_PUT:
            memcpy(t, data + p, len);
            break;
        case PLX_RMA_K_GET:
            memcpy(out + p, t, len);
            break;
        case PLX_RMA_K_GACC:
            memcpy(out + p, t, len);
            /* fall through */
        case PLX_RMA_K_ACC:
            if (op == MPI_REPLACE)
                memcpy(t, data + p, len);
            else if (op != MPI_NO_OP)
                plx_op_apply(op, basic, data + p, t, (MPI_Aint)(len / elem));
            break;
        }
        p += len;
    }
}

/* --- sending ------------------------------------------------------------------------------------ */

static int plx_rma_in_handler;

/* From an API call: blocks (progressing) until the channel takes it, so
 * that one origin's packets to one target leave in the order issued. From a
 * handler, or while earlier answers wait: queued, sent in order by the poll. */
static void plx_rma_xmit(int lpid, const struct plx_hdr *h, const struct iovec *iov, int iovcnt)
{
    struct plx_route_peer *rp = plx_route_peer(lpid);
    if (!plx_rma_in_handler) {
        for (;;) {
            plx_status_t st = plx_route_send(rp, PLX_RC_RMA, h->len, h, iov, iovcnt);
            if (st == PLX_OK)
                return;
            if (st != PLX_BUSY)
                plx_fatal("rma: sending to rank %d failed (status %d)", lpid, st);
            plx_progress_poll();
        }
    }
    if (plx_list_empty(&plx_rma.queued) && plx_route_send(rp, PLX_RC_RMA, h->len, h, iov, iovcnt) == PLX_OK)
        return;
    size_t len = 0;
    for (int i = 0; i < iovcnt; i++)
        len += iov[i].iov_len;
    struct plx_rma_queued *q = plx_malloc(sizeof *q + len);
    q->lpid = lpid;
    q->h = *h;
    q->len = len;
    len = 0;
    for (int i = 0; i < iovcnt; i++) {
        memcpy(q->data + len, iov[i].iov_base, iov[i].iov_len);
        len += iov[i].iov_len;
    }
    plx_list_push_back(&plx_rma.queued, &q->link);
}

static int plx_rma_poll(void)
{
    int work = 0;
    while (!plx_list_empty(&plx_rma.queued)) {
        struct plx_rma_queued *q = plx_list_entry(plx_rma.queued.next, struct plx_rma_queued, link);
        struct iovec iov = { q->data, q->len };
        if (plx_route_send(plx_route_peer(q->lpid), PLX_RC_RMA, q->len, &q->h, &iov, q->len ? 1 : 0) != PLX_OK)
            break;
        plx_list_remove(&q->link);
        free(q);
        work++;
    }
    return work;
}

/* An answer (or grant) to `rank` of w. */
static void plx_rma_answer(struct plx_win *w, int rank, int kind, int status, uint64_t cookie, uint64_t roff,
                           const void *data, size_t len)
{
    struct plx_rma_wire a = { .wid = (uint32_t)w->t[rank].wid, .src = w->comm->rank, .kind = (uint8_t)kind,
                              .status = (uint8_t)status, .roff = roff, .dlen = (uint32_t)len };
    struct plx_hdr h = { .type = PLX_PKT_WIN_ANS, .src = w->comm->rank, .len = (uint32_t)(sizeof a + len),
                         .sreq = cookie };
    struct iovec iov[2] = { { &a, sizeof a }, { (void *)data, len } };
    plx_rma_xmit(w->comm->lpids[rank], &h, iov, len ? 2 : 1);
}

void plx_rma_send_ctl(struct plx_win *w, int target, int kind, int lock_type)
{
    struct plx_rma_wire q = { .wid = (uint32_t)w->t[target].wid, .src = w->comm->rank, .kind = (uint8_t)kind,
                              .lock_type = (uint8_t)lock_type };
    struct plx_hdr h = { .type = PLX_PKT_WIN, .src = w->comm->rank, .len = sizeof q };
    struct iovec iov = { &q, sizeof q };
    plx_rma_xmit(w->comm->lpids[target], &h, &iov, 1);
}

/* --- the target's lock queue ----------------------------------------------------------------- */

static void plx_rma_run_deferred(struct plx_win *w, int r);

/* A remote origin does not wait for its grant: what it sent meanwhile runs now. */
static void plx_rma_lk_grant(struct plx_win *w, int rank, int want_grant)
{
    if (rank == w->comm->rank) {
        w->granted[rank] = 1;
        return;
    }
    /* the grant itself is for an origin that writes by cross-memory attach
     * (create flavour on one node), which must wait for it; the others do
     * not ask for it */
    if (want_grant)
        plx_rma_answer(w, rank, PLX_RMA_K_LOCK, 0, 0, 0, NULL, 0);
    plx_rma_run_deferred(w, rank);
}

/* Grants from the head of the queue while compatible: first in, first out. */
static void plx_rma_lk_serve(struct plx_win *w)
{
    while (!plx_list_empty(&w->lk_queue)) {
        struct plx_win_lkwait *q = plx_list_entry(w->lk_queue.next, struct plx_win_lkwait, link);
        if (w->lk_excl || (q->type == PLX_RMA_LK_EXCL && w->lk_shared))
            return;
        plx_list_remove(&q->link);
        if (q->type == PLX_RMA_LK_EXCL)
            w->lk_excl = 1;
        else
            w->lk_shared++;
        plx_rma_lk_grant(w, q->rank, q->want_grant);
        free(q);
    }
}

void plx_rma_lk_request(struct plx_win *w, int rank, int type)
{
    struct plx_win_lkwait *q = plx_malloc(sizeof *q);
    q->rank = rank;
    q->type = type & ~PLX_RMA_LK_WANT_GRANT;
    q->want_grant = !!(type & PLX_RMA_LK_WANT_GRANT);
    plx_list_push_back(&w->lk_queue, &q->link);
    plx_rma_lk_serve(w);
}

void plx_rma_lk_release(struct plx_win *w, int rank)
{
    (void)rank;
    if (w->lk_excl)
        w->lk_excl = 0;
    else if (w->lk_shared > 0)
        w->lk_shared--;
    plx_rma_lk_serve(w);
}

/* --- handlers ------------------------------------------------------------------------------ */

/* Are the runs inside rank's exposed memory (window or attached regions)? */
static int plx_rma_runs_ok(const struct plx_win *w, const struct plx_rma_run *runs, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) {
        uint64_t lo = runs[i].off, len = runs[i].len;
        if (w->flavor == MPI_WIN_FLAVOR_DYNAMIC) {
            int in = 0;
            for (int r = 0; r < w->nregs && !in; r++)
                in = lo >= w->regs[r].addr && len <= w->regs[r].len && lo - w->regs[r].addr <= w->regs[r].len - len;
            if (!in)
                return 0;
        } else if (len > (uint64_t)w->size || lo > (uint64_t)w->size - len) {
            return 0;
        }
    }
    return 1;
}

static char *plx_rma_local_mem(struct plx_win *w)
{
    return w->flavor == MPI_WIN_FLAVOR_DYNAMIC ? NULL : (char *)w->base;
}

/* A request of an origin whose lock request still waits in the queue:
 * kept, in order, until it is granted (MPI_Win_lock does not wait for the
 * grant: lock, operations and unlock leave at once, one round trip in all,
 * and the channel keeps them in order). */
struct plx_rma_deferred {
    struct plx_list link;
    int rank;
    struct plx_hdr h;
    char payload[];
};

static int plx_rma_lk_waiting(struct plx_win *w, int rank)
{
    struct plx_list *pos;
    plx_list_for_each(pos, &w->lk_queue) {
        if (plx_list_entry(pos, struct plx_win_lkwait, link)->rank == rank)
            return 1;
    }
    return 0;
}

static void plx_rma_exec_req(struct plx_win *w, int r, const struct plx_hdr *h, const void *payload);

/* Runs what rank r sent while its lock request waited. */
static void plx_rma_run_deferred(struct plx_win *w, int r)
{
    for (;;) {
        struct plx_list *pos;
        struct plx_rma_deferred *d = NULL;
        plx_list_for_each(pos, &w->deferred) {
            struct plx_rma_deferred *e = plx_list_entry(pos, struct plx_rma_deferred, link);
            if (e->rank == r) {
                d = e;
                break;
            }
        }
        if (!d || plx_rma_lk_waiting(w, r))
            return;
        plx_list_remove(&d->link);
        plx_rma_exec_req(w, r, &d->h, d->payload);
        free(d);
    }
}

static void plx_rma_on_req(struct plx_tp_iface *ifc, int lpid, const struct plx_hdr *h, const void *payload)
{
    (void)ifc;
    struct plx_rma_wire q;
    if (h->len < sizeof q)
        plx_fatal("rma: a short packet (%u bytes) from rank %d", h->len, lpid);
    memcpy(&q, payload, sizeof q);
    struct plx_win *w = plx_rma_win_of((int)q.wid);
    if (!w || q.src < 0 || q.src >= w->comm->size || w->comm->lpids[q.src] != lpid) {
        plx_warn("rma: a packet from rank %d for window slot %u, which this process does not have; dropped", lpid,
                 q.wid);
        return;
    }
    /* A request that arrives while this process is still inside the window's creation (an
     * origin that finished it sooner) waits until the creation is over: the answer needs the
     * origin's slot (w->t[src].wid), known only once the cards are exchanged. It was answered
     * to slot 0 before and dropped there, and the origin waited for ever (lock_all at 3+ ranks). */
    if (!w->ready || (q.kind != PLX_RMA_K_LOCK && q.kind != PLX_RMA_K_POST && q.kind != PLX_RMA_K_COMPLETE &&
                      q.kind != PLX_RMA_K_LKINFO && plx_rma_lk_waiting(w, q.src))) {
        struct plx_rma_deferred *d = plx_malloc(sizeof *d + h->len);
        d->rank = q.src;
        d->h = *h;
        memcpy(d->payload, payload, h->len);
        plx_list_push_back(&w->deferred, &d->link);
        return;
    }
    plx_rma_exec_req(w, q.src, h, payload);
}

void plx_rma_win_ready(struct plx_win *w)
{
    w->ready = 1;
    for (int r = 0; r < w->comm->size; r++)
        plx_rma_run_deferred(w, r);
}

static void plx_rma_exec_req(struct plx_win *w, int r, const struct plx_hdr *h, const void *payload)
{
    struct plx_rma_wire q;
    memcpy(&q, payload, sizeof q);
    plx_rma_in_handler++;
    switch (q.kind) {
    case PLX_RMA_K_LOCK:
        plx_rma_lk_request(w, r, q.lock_type);
        break;
    case PLX_RMA_K_UNLOCK:
        plx_rma_lk_release(w, r);
        plx_rma_answer(w, r, PLX_RMA_K_UNLOCK, 0, h->sreq, 0, NULL, 0);
        break;
    case PLX_RMA_K_POST:
        w->posts[r]++;
        break;
    case PLX_RMA_K_COMPLETE:
        w->completes[r]++;
        break;
    case PLX_RMA_K_LKINFO: {   /* issue 14: where this process's lock words are */
        uint64_t info[2] = { 0, 0 };
        int ok = plx_rma_fab_info(info);
        plx_rma_answer(w, r, PLX_RMA_K_LKINFO, ok ? 0 : MPI_ERR_OTHER, 0, 0, info, sizeof info);
        break;
    }
    default: {
        const char *p = (const char *)payload + sizeof q;
        size_t rlen = (size_t)q.nruns * sizeof(struct plx_rma_run);
        if (h->len < sizeof q + rlen + q.dlen || q.nruns == 0 || q.nruns > PLX_RMA_PIECE_RUNS) {
            plx_rma_answer(w, r, q.kind, MPI_ERR_INTERN, h->sreq, q.roff, NULL, 0);
            break;
        }
        struct plx_rma_run runs[PLX_RMA_PIECE_RUNS];
        memcpy(runs, p, rlen);
        uint64_t total = 0;
        for (uint32_t i = 0; i < q.nruns; i++)
            total += runs[i].len;
        if (!plx_rma_runs_ok(w, runs, q.nruns)) {
            plx_rma_answer(w, r, q.kind, MPI_ERR_RMA_RANGE, h->sreq, q.roff, NULL, 0);
            break;
        }
        size_t olen = q.kind == PLX_RMA_K_GET || q.kind == PLX_RMA_K_GACC ? total
                      : q.kind == PLX_RMA_K_CAS                         ? q.elem
                                                                       : 0;
        if (q.kind == PLX_RMA_K_GET && q.nruns == 1) {
            /* one block: answered straight from the window (the channel
             * has taken or copied the bytes when the send returns) */
            plx_rma_answer(w, r, q.kind, 0, h->sreq, q.roff, plx_rma_at(plx_rma_local_mem(w), runs[0].off), olen);
            break;
        }
        char *out = olen ? plx_malloc(olen) : NULL;
        plx_rma_exec(plx_rma_local_mem(w), q.kind, runs, (int)q.nruns, p + rlen, out, q.basic, q.elem, q.op);
        plx_rma_answer(w, r, q.kind, 0, h->sreq, q.roff, out, olen);
        free(out);
    }
    }
    plx_rma_in_handler--;
}

static void plx_rma_op_done(struct plx_rma_op *op)
{
    struct plx_win *w = op->w;
    if (op->status && !w->err_code)
        w->err_code = op->status;
    if (op->res_user) {
        op->res = NULL;
    } else if (op->rbuf && op->res && !op->status) {
        if (op->kind == PLX_RMA_K_GET)
            plx_dt_unpack(op->res, op->res_len, op->rbuf, op->rdt);
        else
            plx_dt_copy(op->res, op->nelem, op->basic, op->rbuf, op->rcount, op->rdt);
    }
    free(op->res);
    plx_dt_release(op->rdt);
    w->pending[op->target]--;
    w->npending--;
    if (op->req) {
        op->req->st_error = op->status ? op->status : MPI_SUCCESS;
        if (--op->req->cc == 0)
            plx_request_complete(op->req);
        plx_progress_kick();
    }
    free(op);
}

static void plx_rma_on_ans(struct plx_tp_iface *ifc, int lpid, const struct plx_hdr *h, const void *payload)
{
    (void)ifc;
    struct plx_rma_wire a;
    if (h->len < sizeof a)
        plx_fatal("rma: a short answer (%u bytes) from rank %d", h->len, lpid);
    memcpy(&a, payload, sizeof a);
    struct plx_win *w = plx_rma_win_of((int)a.wid);
    if (!w || a.src < 0 || a.src >= w->comm->size) {
        /* Every answer is for a window this process still has: Win_free
         * waits for the epochs, and so for their answers. One that is not
         * means a protocol bug (session 7's answers to slot 0 made
         * lock_all wait for ever without a word): say so. */
        static const char *const kinds[] = { "?", "put", "get", "accumulate", "get_accumulate", "compare_and_swap",
                                             "lock grant", "unlock", "post", "complete", "lock-word info" };
        plx_warn("rma: an answer (%s) from rank %d for window slot %u (rank %d in it), which this process does "
                 "not have; dropped, and whatever waits for it will not complete",
                 a.kind < sizeof kinds / sizeof kinds[0] ? kinds[a.kind] : "?", lpid, a.wid, (int)a.src);
        return;
    }
    if (a.kind == PLX_RMA_K_LOCK) {
        w->granted[a.src] = 1;
        return;
    }
    if (a.kind == PLX_RMA_K_UNLOCK) {
        w->unlocked[a.src] = 1;
        return;
    }
    if (a.kind == PLX_RMA_K_LKINFO) {
        uint64_t info[2] = { 0, 0 };
        if (a.dlen == sizeof info && h->len >= sizeof a + sizeof info)
            memcpy(info, (const char *)payload + sizeof a, sizeof info);
        plx_rma_fab_info_answer(lpid, a.status == 0 && a.dlen == sizeof info, info);
        return;
    }
    struct plx_rma_op *op = (struct plx_rma_op *)(uintptr_t)h->sreq;
    if (a.status && !op->status)
        op->status = a.status;
    if (a.dlen && op->res && a.roff <= op->res_len && a.dlen <= op->res_len - a.roff)
        memcpy(op->res + a.roff, (const char *)payload + sizeof a, a.dlen);
    if (--op->pieces == 0)
        plx_rma_op_done(op);
}

void plx_rma_am_init(void)
{
    if (plx_rma.init)
        return;
    plx_list_init(&plx_rma.queued);
    plx_route_am_hook(plx_rma_on_req, plx_rma_on_ans, plx_rma_poll);
    plx_rma.init = 1;
}

/* --- the origin ----------------------------------------------------------------------------- */

/* Issue 14: an operation's native atomics are all complete at the target. */
static void plx_rma_nat_done(struct plx_tp_comp *c)
{
    struct plx_rma_op *op = plx_container_of(c, struct plx_rma_op, comp);
    if (c->status != PLX_OK && !op->status)
        op->status = c->status == PLX_ERR_RANGE ? MPI_ERR_RMA_RANGE : MPI_ERR_OTHER;
    free(op->nat_in);
    plx_rma_op_done(op);
}

struct plx_rma_runs {
    struct plx_rma_run *r;
    size_t n, cap;
};

static void plx_rma_runs_add(struct plx_rma_runs *v, uint64_t off, uint64_t len)
{
    if (v->n && v->r[v->n - 1].off + v->r[v->n - 1].len == off) {
        v->r[v->n - 1].len += len;
        return;
    }
    if (v->n == v->cap) {
        v->cap = v->cap ? 2 * v->cap : 16;
        v->r = realloc(v->r, v->cap * sizeof *v->r);
        if (!v->r)
            plx_fatal("rma: out of memory for an operation's runs");
    }
    v->r[v->n].off = off;
    v->r[v->n].len = len;
    v->n++;
}

/* The target's blocks, at base + the type's runs (reduction runs for accumulates). */
static void plx_rma_runs_build(struct plx_rma_runs *v, uint64_t base, MPI_Aint count, const struct plx_datatype *dt,
                               int acc)
{
    if (dt->contig && (!acc || dt->size == dt->extent)) {
        /* one block: no walk over the elements */
        if (count && dt->size)
            plx_rma_runs_add(v, base + (uint64_t)dt->true_lb, (uint64_t)(count * dt->size));
        return;
    }
    int nr = acc ? dt->nopruns : dt->nruns;
    const struct plx_dt_run *runs = acc ? dt->opruns : dt->runs;
    for (MPI_Aint e = 0; e < count; e++) {
        uint64_t eb = base + (uint64_t)(e * dt->extent);
        for (int i = 0; i < nr; i++)
            for (MPI_Aint k = 0; k < runs[i].cnt; k++)
                plx_rma_runs_add(v, eb + (uint64_t)(runs[i].disp + k * runs[i].stride), (uint64_t)runs[i].len);
    }
}

void plx_rma_target_span(MPI_Aint tcount, const struct plx_datatype *tdt, MPI_Aint *lo, MPI_Aint *hi)
{
    if (tcount == 0 || tdt->size == 0) {
        *lo = *hi = 0;
        return;
    }
    *lo = tdt->true_lb;
    *hi = tdt->true_lb + (tcount - 1) * tdt->extent + tdt->true_extent;
    if (tdt->extent < 0) {
        *lo = tdt->true_lb + (tcount - 1) * tdt->extent;
        *hi = tdt->true_lb + tdt->true_extent;
    }
}

/* Put and get of a create-flavour window to a rank of this node by
 * cross-memory attach (process_vm_writev/readv through the shared-memory
 * channel), when the kernel allows it: the target does nothing. The range
 * was checked by the caller against the target's window. 1 when done. */
static int plx_rma_cma(struct plx_win *w, int kind, int target, const struct plx_rma_run *runs, size_t n,
                       char *buf)
{
    if ((kind != PLX_RMA_K_PUT && kind != PLX_RMA_K_GET) || w->flavor != MPI_WIN_FLAVOR_CREATE ||
        !plx_config.rma_shm || !w->cma_ok)
        return 0;
    int lpid = w->comm->lpids[target];
    struct plx_tp_iface *ifc = plx_route_reader(plx_route_peer(lpid));
    if (!ifc || !ifc->ops->copy_remote)
        return 0;
    size_t p = 0;
    for (size_t i = 0; i < n; i++) {
        struct iovec iov = { buf + p, (size_t)runs[i].len };
        plx_status_t st = ifc->ops->copy_remote(ifc, lpid, kind == PLX_RMA_K_PUT, &iov, 1,
                                                w->t[target].base + runs[i].off, (size_t)runs[i].len);
        if (st != PLX_OK) {
            if (st == PLX_ERR_UNSUPPORTED)
                w->cma_ok = 0;  /* not again on this window: messages from now on */
            return 0;           /* the whole operation again by messages (a put or get may be repeated) */
        }
        p += (size_t)runs[i].len;
    }
    return 1;
}

/* The data bytes of one piece to process lpid (see PLX_RMA_PIECE_STREAM). */
static size_t plx_rma_piece_max(int lpid)
{
    struct plx_route_peer *rp = plx_route_peer(lpid);
    if (rp->nchan && plx_route_caps(rp)->max_packet >= ((size_t)1 << 30))
        return PLX_RMA_PIECE_STREAM;
    return PLX_RMA_PIECE;
}

int plx_rma_issue(struct plx_win *w, const struct plx_rma_args *a, struct plx_request *req, char *msg, size_t mlen)
{
    int kind = a->kind;
    int acc = kind == PLX_RMA_K_ACC || kind == PLX_RMA_K_GACC || kind == PLX_RMA_K_CAS;
    const struct plx_win_target *t = &w->t[a->target];
    int dyn = w->flavor == MPI_WIN_FLAVOR_DYNAMIC;
    uint64_t base = dyn ? (uint64_t)a->disp : (uint64_t)(a->disp * (MPI_Aint)t->disp_unit);

    /* the basic type and the element layout of the accumulates */
    struct plx_datatype *basic = NULL;
    size_t elem = 0;
    if (acc) {
        basic = plx_dt_lookup(a->tdt->basic != MPI_DATATYPE_NULL ? a->tdt->basic : a->tdt->obj.handle);
        if (!basic || basic->size == 0) {
            snprintf(msg, mlen, "the target datatype is not made of one predefined type");
            return MPI_ERR_TYPE;
        }
        elem = (size_t)basic->extent;
    }
    size_t total = (size_t)(a->tcount * a->tdt->size);      /* packed bytes at the target */
    MPI_Aint nelem = acc ? (MPI_Aint)(total / (size_t)basic->size) : 0;
    size_t stream = acc ? (size_t)nelem * elem : total;     /* bytes of the data stream */
    if (kind == PLX_RMA_K_CAS)
        stream = elem;

    struct plx_rma_runs v = { 0 };
    plx_rma_runs_build(&v, base, a->tcount, a->tdt, acc);

    /* the data going out */
    char *in = NULL;
    int in_owned = 0;
    if (kind == PLX_RMA_K_PUT && a->odt->contig) {
        in = (char *)a->obuf + a->odt->true_lb;
    } else if (kind == PLX_RMA_K_PUT) {
        in = plx_malloc(total ? total : 1);
        in_owned = 1;
        plx_dt_pack(a->obuf, a->ocount, a->odt, in);
    } else if (kind == PLX_RMA_K_CAS) {
        in = plx_malloc(2 * elem);
        in_owned = 1;
        memcpy(in, a->obuf, elem);
        memcpy(in + elem, a->cbuf, elem);
    } else if (acc && a->op != MPI_NO_OP && a->odt->contig && a->odt->size == a->odt->extent &&
               (a->odt->basic == basic->obj.handle || a->odt == basic)) {
        in = (char *)a->obuf + a->odt->true_lb;
    } else if (acc && a->op != MPI_NO_OP) {
        in = plx_malloc(stream ? stream : 1);
        in_owned = 1;
        plx_dt_copy(a->obuf, a->ocount, a->odt, in, nelem, basic);
    }
    /* where the answers go */
    char *res = NULL;
    size_t res_len = 0;
    int res_user = 0;
    if (kind == PLX_RMA_K_GET || kind == PLX_RMA_K_GACC || kind == PLX_RMA_K_CAS) {
        res_len = kind == PLX_RMA_K_GET ? total : stream;
        if (kind == PLX_RMA_K_GET && a->rdt->contig) {
            res = (char *)a->rbuf + a->rdt->true_lb;
            res_user = 1;
        } else {
            res = plx_malloc(res_len ? res_len : 1);
        }
    }

    w->pending[a->target]++;
    w->npending++;
    struct plx_rma_op *op = plx_calloc(1, sizeof *op);
    op->w = w;
    op->target = a->target;
    op->kind = kind;
    op->res = res;
    op->res_len = res_len;
    op->req = req;
    op->res_user = res_user;
    if (res) {
        op->rbuf = a->rbuf;
        op->rcount = a->rcount;
        op->rdt = a->rdt;
        plx_dt_addref(a->rdt);
        op->basic = basic;
        op->nelem = nelem;
    }
    if (req)
        req->cc = 1;

    char *mem = NULL;
    int local = 0;
    if (w->direct) {
        mem = w->t[a->target].mem;
        local = 1;
    } else if (a->target == w->comm->rank) {
        mem = plx_rma_local_mem(w);
        local = 1;
    }
    if (!local && acc && plx_rma_nat_use(w, a->target, kind, a->op, basic)) {
        /* issue 14: fabric atomics, no target CPU (natacc.c) */
        op->nat_in = in_owned ? in : NULL;
        in_owned = 0;
        op->comp = (struct plx_tp_comp){ .cb = plx_rma_nat_done, .count = 1 };
        int rc = plx_rma_nat_issue(w, a->target, kind, a->op, basic, v.r, v.n, in, res, &op->comp);
        if (rc && !op->status)
            op->status = rc;
        plx_tp_comp_done(&op->comp, PLX_OK);
    } else if (!local && plx_rma_cma(w, kind, a->target, v.r, v.n, kind == PLX_RMA_K_PUT ? in : res)) {
        op->pieces = 0;         /* done by cross-memory attach: the target took no part */
        plx_rma_op_done(op);
    } else if (local) {
        /* the whole operation at once: checked as the target would */
        int rc = 0;
        if (w->direct) {
            for (size_t i = 0; i < v.n && !rc; i++)
                rc = v.r[i].len > t->size || v.r[i].off > t->size - v.r[i].len;
        } else {
            rc = !plx_rma_runs_ok(w, v.r, (uint32_t)v.n);
        }
        if (rc) {
            op->status = MPI_ERR_RMA_RANGE;
        } else if (v.n) {
            if (w->direct && acc)
                plx_rma_spin_lock(w->t[a->target].accw);
            plx_rma_exec(mem, kind, v.r, (int)v.n, in, res, basic ? basic->obj.handle : MPI_DATATYPE_NULL, elem,
                         a->op);
            if (w->direct && acc)
                plx_rma_spin_unlock(w->t[a->target].accw);
        }
        op->pieces = 0;
        plx_rma_op_done(op);
    } else {
        /* pieces of at most `piece` bytes, cut at element boundaries */
        size_t g = acc ? elem : 1;
        size_t piece = plx_rma_piece_max(w->comm->lpids[a->target]);
        size_t ri = 0, roff_in_run = 0, soff = 0;
        op->pieces = 1;         /* held while issuing */
        struct plx_rma_run pr[PLX_RMA_PIECE_RUNS];
        while (ri < v.n) {
            int np = 0;
            size_t bytes = 0, start = soff;
            while (ri < v.n && np < PLX_RMA_PIECE_RUNS && bytes < piece) {
                size_t left = v.r[ri].len - roff_in_run;
                size_t room = piece - bytes;
                size_t take = left <= room ? left : room / g * g;
                if (kind == PLX_RMA_K_CAS)
                    take = left;
                if (take == 0)
                    break;
                pr[np].off = v.r[ri].off + roff_in_run;
                pr[np].len = take;
                np++;
                bytes += take;
                roff_in_run += take;
                if (roff_in_run == v.r[ri].len) {
                    ri++;
                    roff_in_run = 0;
                }
            }
            soff += bytes;
            size_t dlen = in ? (kind == PLX_RMA_K_CAS ? 2 * elem : bytes) : 0;
            struct plx_rma_wire q = { .wid = (uint32_t)t->wid, .src = w->comm->rank, .kind = (uint8_t)kind,
                                      .nruns = (uint32_t)np, .op = a->op,
                                      .basic = basic ? basic->obj.handle : MPI_DATATYPE_NULL,
                                      .elem = (uint32_t)elem, .dlen = (uint32_t)dlen, .roff = start };
            struct plx_hdr h = { .type = PLX_PKT_WIN, .src = w->comm->rank,
                                 .len = (uint32_t)(sizeof q + (size_t)np * sizeof pr[0] + dlen),
                                 .sreq = (uint64_t)(uintptr_t)op };
            struct iovec iov[3] = { { &q, sizeof q }, { pr, (size_t)np * sizeof pr[0] }, { in + start, dlen } };
            op->pieces++;
            plx_rma_xmit(w->comm->lpids[a->target], &h, iov, dlen ? 3 : 2);
        }
        if (--op->pieces == 0)
            plx_rma_op_done(op);
    }
    if (in_owned)
        free(in);
    free(v.r);
    return MPI_SUCCESS;
}
