/*
 * Collective schedules (see sched.h): building, running, and the progress
 * hook for nonblocking collectives.
 */
#include <stdlib.h>
#include <string.h>
#include "coll/sched.h"
#include "core/errors.h"
#include "core/log.h"
#include "core/runtime.h"
#include "progress/progress.h"
#include "pt2pt/pt2pt.h"

static struct {
    struct plx_list active;     /* running nonblocking schedules */
    int init;
    int busy;                   /* inside plx_coll_progress (no re-entry) */
} plx_sched_g;

/* Tags of public collectives: negative, never MPI_ANY_TAG. Blocking and
 * nonblocking collectives count in two sequences of their own and their tags
 * differ in bit 2, so a rank that starts them in another order than its peers
 * (MPI_Iallreduce before MPI_Barrier here, after it there: erroneous, but
 * MPICH and Open MPI keep them apart) never matches a barrier's message with
 * an allreduce's; each kind stays matched by its own order. The low two bits
 * are left for sub-tags. Taken when the schedule runs or starts. */
static int plx_sched_tag(struct plx_comm *c, int nonblocking)
{
    unsigned seq = nonblocking ? c->coll_tag_nb++ : c->coll_tag++;
    return -16 - (int)((seq & 0x07ffffffu) << 3 | (unsigned)nonblocking << 2);
}

struct plx_sched *plx_sched_new(struct plx_comm *c)
{
    struct plx_sched *s = plx_calloc(1, sizeof *s);
    plx_list_init(&s->link);
    s->comm = c;
    s->owner = c;
    plx_comm_addref(c);
    return s;
}

struct plx_sched *plx_sched_new_tag(struct plx_comm *c, int tag)
{
    struct plx_sched *s = plx_sched_new(c);
    s->tag = tag;
    s->tag_fixed = 1;
    return s;
}

struct plx_sched *plx_sched_new_p2p(struct plx_comm *c)
{
    struct plx_sched *s = plx_sched_new(c);
    s->tag_fixed = 1;           /* no collective tag is drawn: only some ranks build one */
    return s;
}

void plx_sched_set_op(struct plx_sched *s, struct plx_op *op)
{
    plx_op_addref(op);
    s->op = op;
}

static struct plx_sched_ent *plx_sched_add(struct plx_sched *s, int kind)
{
    if (s->n == s->cap) {
        s->cap = s->cap ? 2 * s->cap : 16;
        s->ents = realloc(s->ents, (size_t)s->cap * sizeof *s->ents);
        if (!s->ents)
            plx_fatal("out of memory building a collective schedule");
    }
    struct plx_sched_ent *e = &s->ents[s->n++];
    memset(e, 0, sizeof *e);
    e->kind = (uint8_t)kind;
    e->comm = s->comm;
    return e;
}

void plx_sched_send_sub(struct plx_sched *s, const void *buf, MPI_Aint count, struct plx_datatype *dt, int peer,
                        int sub)
{
    struct plx_sched_ent *e = plx_sched_add(s, PLX_S_SEND);
    e->buf = (void *)buf;
    e->count = count;
    e->dt = dt;
    plx_dt_addref(dt);
    e->peer = peer;
    e->sub = (uint8_t)sub;
}

void plx_sched_recv_sub(struct plx_sched *s, void *buf, MPI_Aint count, struct plx_datatype *dt, int peer, int sub)
{
    struct plx_sched_ent *e = plx_sched_add(s, PLX_S_RECV);
    e->buf = buf;
    e->count = count;
    e->dt = dt;
    plx_dt_addref(dt);
    e->peer = peer;
    e->sub = (uint8_t)sub;
}

void plx_sched_send_user(struct plx_sched *s, const void *buf, MPI_Aint count, struct plx_datatype *dt, int peer,
                         int tag)
{
    if (peer == MPI_PROC_NULL)
        return;
    plx_sched_send_sub(s, buf, count, dt, peer, 0);
    s->ents[s->n - 1].user = 1;
    s->ents[s->n - 1].utag = tag;
}

void plx_sched_recv_user(struct plx_sched *s, void *buf, MPI_Aint count, struct plx_datatype *dt, int peer,
                         int tag)
{
    if (peer == MPI_PROC_NULL)
        return;
    plx_sched_recv_sub(s, buf, count, dt, peer, 0);
    s->ents[s->n - 1].user = 1;
    s->ents[s->n - 1].utag = tag;
}

void plx_sched_part(struct plx_sched *s, int send, void *buf, MPI_Aint count, struct plx_datatype *dt, int peer,
                    int tag, int gated)
{
    if (send)
        plx_sched_send_sub(s, buf, count, dt, peer, 0);
    else
        plx_sched_recv_sub(s, buf, count, dt, peer, 0);
    struct plx_sched_ent *e = &s->ents[s->n - 1];
    e->user = 1;
    e->uctx = 1;
    e->utag = tag;
    e->gated = (uint8_t)gated;
}

void plx_sched_send(struct plx_sched *s, const void *buf, MPI_Aint count, struct plx_datatype *dt, int peer)
{
    plx_sched_send_sub(s, buf, count, dt, peer, 0);
}

void plx_sched_recv(struct plx_sched *s, void *buf, MPI_Aint count, struct plx_datatype *dt, int peer)
{
    plx_sched_recv_sub(s, buf, count, dt, peer, 0);
}

void plx_sched_reduce(struct plx_sched *s, const void *src, void *buf, MPI_Aint count, struct plx_datatype *dt)
{
    if (count <= 0)
        return;
    struct plx_sched_ent *e = plx_sched_add(s, PLX_S_REDUCE);
    e->src = src;
    e->buf = buf;
    e->count = count;
    e->dt = dt;
    plx_dt_addref(dt);
}

void plx_sched_copy(struct plx_sched *s, const void *src, MPI_Aint scount, struct plx_datatype *sdt, void *dst,
                    MPI_Aint dcount, struct plx_datatype *ddt)
{
    if (scount <= 0 || dcount <= 0 || (src == dst && sdt == ddt && scount == dcount))
        return;
    struct plx_sched_ent *e = plx_sched_add(s, PLX_S_COPY);
    e->src = src;
    e->scount = scount;
    e->sdt = sdt;
    plx_dt_addref(sdt);
    e->buf = dst;
    e->count = dcount;
    e->dt = ddt;
    plx_dt_addref(ddt);
}

void plx_sched_call(struct plx_sched *s, void (*fn)(struct plx_sched *s, void *arg), void *arg)
{
    struct plx_sched_ent *e = plx_sched_add(s, PLX_S_CALL);
    e->fn = fn;
    e->buf = arg;
}

void plx_sched_fence(struct plx_sched *s)
{
    if (s->n > 0 && s->ents[s->n - 1].kind != PLX_S_FENCE)
        plx_sched_add(s, PLX_S_FENCE);
}

void *plx_sched_alloc(struct plx_sched *s, size_t n)
{
    if (s->nbufs == s->capbufs) {
        s->capbufs = s->capbufs ? 2 * s->capbufs : 4;
        s->bufs = realloc(s->bufs, (size_t)s->capbufs * sizeof *s->bufs);
        if (!s->bufs)
            plx_fatal("out of memory building a collective schedule");
    }
    void *p = plx_malloc(n ? n : 1);
    s->bufs[s->nbufs++] = p;
    return p;
}

void *plx_sched_alloc_layout(struct plx_sched *s, MPI_Aint count, const struct plx_datatype *dt)
{
    if (count <= 0 || dt->size == 0)
        return plx_sched_alloc(s, 1);
    /* the data's span, widened to whole extents: user functions (and C
     * struct assignments) may touch an element's padding */
    MPI_Aint last = (count - 1) * dt->extent;
    MPI_Aint lo = PLX_MIN(dt->true_lb, dt->lb) + PLX_MIN(0, last);
    MPI_Aint hi = PLX_MAX(dt->true_lb + dt->true_extent, dt->lb + dt->extent) + PLX_MAX(0, last);
    char *p = plx_sched_alloc(s, (size_t)(hi - lo));
    return p - lo;
}

void plx_sched_own_type(struct plx_sched *s, struct plx_datatype *dt)
{
    if (s->ndts == s->capdts) {
        s->capdts = s->capdts ? 2 * s->capdts : 4;
        s->dts = realloc(s->dts, (size_t)s->capdts * sizeof *s->dts);
        if (!s->dts)
            plx_fatal("out of memory building a collective schedule");
    }
    s->dts[s->ndts++] = dt;
}

/* --- running ------------------------------------------------------------ */

static void plx_sched_error(struct plx_sched *s, int code)
{
    if (s->err == MPI_SUCCESS)
        s->err = code;
}

/* The error the caller reports: the call, the rank and the communicator,
 * then why (a step's text says only what went wrong in it). */
static int plx_sched_user_error(const struct plx_sched *s)
{
    if (s->err == MPI_SUCCESS || !s->fn)
        return s->err;
    char why[MPI_MAX_ERROR_STRING];
    plx_err_string(s->err, why, sizeof why);
    return plx_err_make(plx_err_class(s->err), "%s(rank %d) on %s failed: %s", s->fn, plx_procs.my_lpid,
                        s->owner->name[0] ? s->owner->name : "a communicator", why);
}

static void plx_sched_post(struct plx_sched *s, struct plx_sched_ent *e)
{
    struct plx_comm *c = e->comm;
    if (e->gated && !e->open) {         /* waits for plx_sched_open */
        e->held = 1;
        s->pending++;
        return;
    }
    struct plx_request *r = plx_request_new(e->kind == PLX_S_SEND ? PLX_REQ_SEND : PLX_REQ_RECV, c);
    r->rank = e->peer;
    r->tag = e->user ? e->utag : s->tag - e->sub;
    r->ctx = e->user ? c->context_id + e->uctx : c->context_id + 1;
    r->buf = e->buf;
    r->count = e->count;
    r->dt = e->dt;
    plx_dt_addref(e->dt);
    r->mode = PLX_MODE_STD;
    /* once this collective has failed here, what it passes on says so, and
     * whether a member was lost: a member that hears only from survivors
     * fails too, instead of returning a result that lacks the lost member's
     * part, and does not call a local error elsewhere (a truncation) a loss */
    if (e->kind == PLX_S_SEND && s->err != MPI_SUCCESS)
        r->failed_part = plx_err_class(s->err) == MPIX_ERR_PROC_FAILED ? PLX_PART_LOST : PLX_PART_OTHER;
    plx_status_t st = e->kind == PLX_S_SEND ? plx_pt2pt_send_start(r) : plx_pt2pt_recv_start(r);
    if (st != PLX_OK) {
        r->cc = 0;
        plx_sched_error(s, plx_err_make(plx_status_to_class(st), "collective on %s: cannot reach rank %d",
                                        c->name[0] ? c->name : "a communicator", e->peer));
    }
    e->req = r;
    s->pending++;
}

static void plx_sched_local(struct plx_sched *s, struct plx_sched_ent *e)
{
    if (e->kind == PLX_S_CALL) {
        /* fn may append entries (and move s->ents): e is not used after it */
        e->fn(s, e->buf);
    } else if (e->kind == PLX_S_COPY) {
        plx_dt_copy(e->src, e->scount, e->sdt, e->buf, e->count, e->dt);
    } else if (plx_op_reduce(s->op, e->src, e->buf, e->count, e->dt) != 0) {
        plx_sched_error(s, plx_err_make(MPI_ERR_OP, "operation 0x%x is not defined for datatype %s",
                                        (unsigned)s->op->handle, e->dt->name[0] ? e->dt->name : "(derived)"));
    }
}

/* A finished send or receive of the running round: its error, or that of
 * the member it heard from, becomes the schedule's. */
static void plx_sched_collect(struct plx_sched *s, struct plx_sched_ent *e)
{
    struct plx_request *r = e->req;
    if (e->user && e->kind == PLX_S_RECV && s->req) {
        s->req->st_source = r->st_source;
        s->req->st_tag = r->st_tag;
        s->req->st_bytes = r->st_bytes;
        s->req->st_cancelled = r->st_cancelled;
    }
    if (r->st_error != MPI_SUCCESS)
        plx_sched_error(s, r->st_error);
    else if (plx_unlikely(r->failed_part == PLX_PART_LOST) && e->kind == PLX_S_RECV)
        plx_sched_error(s, plx_err_make(MPIX_ERR_PROC_FAILED, "a member process was lost (rank %d passed that on)",
                                        e->peer));
    else if (plx_unlikely(r->failed_part == PLX_PART_OTHER) && e->kind == PLX_S_RECV)
        plx_sched_error(s, plx_err_make(MPI_ERR_OTHER, "the collective failed on rank %d (it passed that on; "
                                        "its own error says why)", e->peer));
    plx_request_free(r);
    e->req = NULL;
    e->done = 1;
    s->pending--;
}

/* Collects finished requests of the running round; then starts rounds
 * until one has communication outstanding. Returns work done. */
static int plx_sched_advance_once(struct plx_sched *s);

static int plx_sched_advance(struct plx_sched *s)
{
    /* a call step that waits (MPI-IO's rounds) polls progress, which would
     * come back here for this schedule */
    if (s->advancing)
        return 0;
    s->advancing = 1;
    int work = plx_sched_advance_once(s);
    s->advancing = 0;
    return work;
}

static int plx_sched_advance_once(struct plx_sched *s)
{
    int work = 0;
    if (s->pending) {
        for (int i = s->round_start; i < s->next; i++) {
            struct plx_sched_ent *e = &s->ents[i];
            if (!e->req || e->req->cc != 0)
                continue;
            plx_sched_collect(s, e);
            work++;
        }
        if (s->pending)
            return work;
    }
    while (s->next < s->n) {
        s->round_start = s->next;
        while (s->next < s->n) {
            struct plx_sched_ent *e = &s->ents[s->next++];
            if (e->kind == PLX_S_FENCE)
                break;
            if (e->kind == PLX_S_SEND || e->kind == PLX_S_RECV)
                plx_sched_post(s, e);
            else
                plx_sched_local(s, e);
            work++;
        }
        if (s->pending) {
            /* sends to self and eager traffic may be done already */
            for (int i = s->round_start; i < s->next; i++) {
                struct plx_sched_ent *e = &s->ents[i];
                if (e->req && e->req->cc == 0)
                    plx_sched_collect(s, e);
            }
            if (s->pending)
                return work;
        }
    }
    s->done = 1;
    return work + 1;
}

void plx_sched_free(struct plx_sched *s)
{
    for (int i = 0; i < s->n; i++) {
        struct plx_sched_ent *e = &s->ents[i];
        if (e->req)
            plx_request_free(e->req);
        plx_dt_release(e->dt);
        plx_dt_release(e->sdt);
    }
    for (int i = 0; i < s->nbufs; i++)
        free(s->bufs[i]);
    for (int i = 0; i < s->ndts; i++)
        plx_dt_release(s->dts[i]);
    free(s->ents);
    free(s->bufs);
    free(s->dts);
    plx_op_release(s->op);
    plx_comm_release(s->owner);
    free(s);
}

static int plx_sched_done(void *arg)
{
    struct plx_sched *s = arg;
    if (!s->done)
        plx_sched_advance(s);
    return s->done;
}

int plx_sched_run(struct plx_sched *s)
{
    if (!s->tag_fixed)
        s->tag = plx_sched_tag(s->owner, 0);
    plx_sched_advance(s);
    if (!s->done)
        plx_progress_wait(plx_sched_done, s);
    int err = plx_sched_user_error(s);
    plx_sched_free(s);
    return err;
}

static void plx_sched_finish(struct plx_sched *s)
{
    plx_list_remove(&s->link);
    struct plx_request *r = s->req;
    r->st_error = plx_sched_user_error(s);
    if (!s->persistent)
        plx_sched_free(s);
    r->cc = 0;
    plx_request_complete(r);     /* frees r if MPI_Request_free came first */
}

struct plx_request *plx_sched_start(struct plx_sched *s)
{
    if (!plx_sched_g.init) {
        plx_list_init(&plx_sched_g.active);
        plx_sched_g.init = 1;
    }
    if (!s->tag_fixed)
        s->tag = plx_sched_tag(s->owner, 1);
    struct plx_request *r = plx_request_new(PLX_REQ_COLL, s->owner);
    r->rank = MPI_PROC_NULL;
    r->tag = s->tag;
    r->ctx = s->owner->context_id + 1;
    r->st_source = MPI_ANY_SOURCE;
    r->st_tag = MPI_ANY_TAG;
    r->cc = 1;
    s->req = r;
    plx_list_push_back(&plx_sched_g.active, &s->link);
    plx_sched_advance(s);
    if (s->done)
        plx_sched_finish(s);
    return r;
}

static void plx_sched_ext_free(void *ext)
{
    plx_sched_free(ext);
}

struct plx_request *plx_sched_persist(struct plx_sched *s)
{
    /* a persistent collective draws its tag at _init (collective and in
     * order on every member) and keeps it for every MPI_Start; a user
     * schedule (partitioned) has none to draw */
    if (!s->tag_fixed) {
        s->tag = plx_sched_tag(s->owner, 1);
        s->tag_fixed = 1;
    }
    struct plx_request *r = plx_request_new(PLX_REQ_COLL, s->owner);
    r->rank = MPI_PROC_NULL;
    r->tag = s->tag;
    r->ctx = s->owner->context_id + 1;
    r->persistent = 1;
    r->active = 0;
    r->cc = 0;
    r->ext = s;
    r->ext_free = plx_sched_ext_free;
    s->req = r;
    s->persistent = 1;
    return r;
}

void plx_sched_open(struct plx_sched *s, int i)
{
    struct plx_sched_ent *e = &s->ents[i];
    e->open = 1;
    if (e->held) {                      /* its round is running: post it now */
        e->held = 0;
        s->pending--;
        plx_sched_post(s, e);
        if (e->req && e->req->cc == 0)
            plx_sched_collect(s, e);
        if (!s->pending) {
            plx_sched_advance(s);
            if (s->done && s->req)
                plx_sched_finish(s);
        }
    }
}

int plx_sched_ent_done(struct plx_sched *s, int i)
{
    struct plx_sched_ent *e = &s->ents[i];
    return e->done || (e->req && e->req->cc == 0);
}

void plx_sched_restart(struct plx_sched *s)
{
    if (!plx_sched_g.init) {
        plx_list_init(&plx_sched_g.active);
        plx_sched_g.init = 1;
    }
    struct plx_request *r = s->req;
    s->next = s->round_start = s->pending = s->done = 0;
    s->err = MPI_SUCCESS;
    for (int i = 0; i < s->n; i++)
        s->ents[i].open = s->ents[i].held = s->ents[i].done = 0;
    r->st_source = MPI_ANY_SOURCE;
    r->st_tag = MPI_ANY_TAG;
    r->st_error = MPI_SUCCESS;
    r->st_bytes = 0;
    r->st_cancelled = 0;
    r->cc = 1;
    plx_list_push_back(&plx_sched_g.active, &s->link);
    plx_sched_advance(s);
    if (s->done)
        plx_sched_finish(s);
}

int plx_coll_progress(void)
{
    if (!plx_sched_g.init || plx_list_empty(&plx_sched_g.active) || plx_sched_g.busy)
        return 0;
    plx_sched_g.busy = 1;
    int work = 0;
    struct plx_list *pos, *n;
    plx_list_for_each_safe(pos, n, &plx_sched_g.active) {
        struct plx_sched *s = plx_list_entry(pos, struct plx_sched, link);
        work += plx_sched_advance(s);
        if (s->done)
            plx_sched_finish(s);
    }
    plx_sched_g.busy = 0;
    return work;
}
