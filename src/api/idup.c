/*
 * MPI_Comm_idup and MPI_Comm_idup_with_info: the context-id agreement of
 * Comm_dup as a nonblocking collective schedule (coll/sched.h), so it
 * proceeds while the caller does other things, including other collectives
 * on other communicators in any order.
 *
 * Rounds: snapshot of the free ids (a C step), bitwise-AND reduction (over
 * the communicator; on an intercommunicator over each side and then between
 * the leaders), take the lowest common id(s), confirm with a second AND that
 * every member could take them, and either make the communicator or give
 * the ids back and start again. The confirmation is always needed: a
 * blocking allocation or another idup may take an id here between the
 * snapshot and the choice (core/comm.c counts agreements under way, so
 * blocking allocations also confirm meanwhile).
 *
 * The new handle is stored in *newcomm when the request completes.
 */
#include <stdlib.h>
#include <string.h>
#include "api/api.h"
#include "coll/algo.h"
#include "core/op.h"

#pragma weak MPI_Comm_idup = PMPI_Comm_idup
#pragma weak MPI_Comm_idup_with_info = PMPI_Comm_idup_with_info

struct plx_idup {
    struct plx_comm *c;
    MPI_Comm *out;
    struct plx_info *hints;     /* owned; NULL: none */
    int nids;                   /* 1, or 2 on an intercommunicator (its local_comm) */
    int ids[2];
    int taken;                  /* take's answer: 1 when this process holds ids */
    int pending;                /* counted in plx_comm_nb_pending */
    uint64_t mask[PLX_CTX_MASK_WORDS];
    uint64_t other[PLX_CTX_MASK_WORDS];
    uint64_t all;               /* the confirmation word */
    uint64_t all_other;
};

static void plx_idup_snapshot(struct plx_sched *s, void *arg);

static void plx_idup_fail(struct plx_sched *s, struct plx_idup *d, int code)
{
    if (s->err == MPI_SUCCESS)
        s->err = code;
    *d->out = MPI_COMM_NULL;
}

/* words[0..n) &= other[0..n), at an intercommunicator's leader */
struct plx_idup_andarg {
    uint64_t *words, *other;
    int n;
};

static void plx_idup_and_step(struct plx_sched *s, void *arg)
{
    (void)s;
    struct plx_idup_andarg *a = arg;
    for (int i = 0; i < a->n; i++)
        a->words[i] &= a->other[i];
}

/* Appends: words = AND of words over every member (both sides). */
static void plx_idup_band(struct plx_sched *s, struct plx_idup *d, uint64_t *words, uint64_t *other, int n)
{
    struct plx_datatype *u64 = plx_dt_lookup(MPI_UINT64_T);
    struct plx_comm *c = d->c;
    if (!plx_comm_is_inter(c)) {
        plx_coll_allreduce_sched(s, MPI_IN_PLACE, words, n, u64);
        plx_sched_fence(s);
        return;
    }
    plx_sched_use(s, c->local_comm);
    plx_coll_allreduce_sched(s, MPI_IN_PLACE, words, n, u64);
    plx_sched_fence(s);
    plx_sched_use(s, c);
    if (c->local_comm->rank == 0) {
        plx_sched_send(s, words, n, u64, 0);
        plx_sched_recv(s, other, n, u64, 0);
        plx_sched_fence(s);
        struct plx_idup_andarg *a = plx_sched_alloc(s, sizeof *a);
        *a = (struct plx_idup_andarg){ .words = words, .other = other, .n = n };
        plx_sched_call(s, plx_idup_and_step, a);
        plx_sched_fence(s);
    }
    plx_sched_use(s, c->local_comm);
    plx_coll_bcast_sched(s, words, n, u64, 0);
    plx_sched_fence(s);
    plx_sched_use(s, c);
}

static void plx_idup_done(struct plx_idup *d)
{
    if (d->pending) {
        plx_comm_nb_pending(-1);
        d->pending = 0;
    }
    plx_info_release(d->hints);
    d->hints = NULL;
}

static void plx_idup_make(struct plx_sched *s, struct plx_idup *d)
{
    struct plx_comm *c = d->c, *nc = NULL;
    if (plx_comm_is_inter(c)) {
        struct plx_comm *lc = plx_comm_new(c, c->group, d->ids[1]);
        if (lc) {
            nc = plx_comm_new_inter(c, c->group, c->remote_group, d->ids[0], lc);
            plx_comm_release(lc);
        } else {
            plx_comm_free_context(d->ids[1]);
        }
    } else {
        nc = plx_comm_new(c, c->group, d->ids[0]);
    }
    if (!nc) {
        plx_comm_free_context(d->ids[0]);
        plx_idup_fail(s, d, plx_err_make(MPI_ERR_NO_MEM, "cannot allocate a communicator handle"));
        return;
    }
    int cb = plx_attr_copy_all(c, nc);
    if (cb != MPI_SUCCESS) {
        plx_comm_release(nc);
        plx_idup_fail(s, d, plx_err_class(cb) > 0 ? cb
                                                  : plx_err_make(MPI_ERR_OTHER,
                                                                 "an attribute copy callback returned %d", cb));
        return;
    }
    nc->info = d->hints;
    d->hints = NULL;
    *d->out = nc->obj.handle;
}

static void plx_idup_confirm(struct plx_sched *s, void *arg)
{
    struct plx_idup *d = arg;
    if (s->err != MPI_SUCCESS) {
        if (d->taken == 1)
            for (int i = 0; i < d->nids; i++)
                plx_comm_free_context(d->ids[i]);
        *d->out = MPI_COMM_NULL;
        plx_idup_done(d);
        return;
    }
    if (d->all) {
        plx_idup_make(s, d);
        plx_idup_done(d);
        return;
    }
    if (d->taken == 1)
        for (int i = 0; i < d->nids; i++)
            plx_comm_free_context(d->ids[i]);
    plx_sched_call(s, plx_idup_snapshot, d);    /* again, from a new snapshot */
}

static void plx_idup_pick(struct plx_sched *s, void *arg)
{
    struct plx_idup *d = arg;
    if (s->err != MPI_SUCCESS) {
        *d->out = MPI_COMM_NULL;
        plx_idup_done(d);
        return;
    }
    d->taken = plx_comm_ctx_take(d->mask, d->nids, d->ids);
    if (d->taken < 0) {
        plx_idup_fail(s, d, plx_err_make(MPI_ERR_OTHER, "no context id is free on every process"));
        plx_idup_done(d);
        return;
    }
    d->all = d->taken == 1;
    plx_idup_band(s, d, &d->all, &d->all_other, 1);
    plx_sched_call(s, plx_idup_confirm, d);
}

static void plx_idup_snapshot(struct plx_sched *s, void *arg)
{
    struct plx_idup *d = arg;
    plx_comm_ctx_snapshot(d->mask);
    plx_sched_fence(s);
    plx_idup_band(s, d, d->mask, d->other, PLX_CTX_MASK_WORDS);
    plx_sched_call(s, plx_idup_pick, d);
}

static int plx_idup_common(MPI_Comm comm, int use_info, MPI_Info info, MPI_Comm *newcomm, MPI_Request *req,
                           const char *fn)
{
    struct plx_comm *c;
    struct plx_info *in = NULL;
    plx_api_lock();
    int rc = plx_api_comm(comm, &c, fn);
    if (rc == MPI_SUCCESS && use_info && info != MPI_INFO_NULL)
        rc = plx_api_info(c, info, &in, fn, "info");
    if (rc == MPI_SUCCESS && !newcomm)
        rc = plx_api_null_arg(c, fn, "newcomm");
    if (rc == MPI_SUCCESS && !req)
        rc = plx_api_null_arg(c, fn, "request");
    if (rc)
        goto out;
    struct plx_sched *s = plx_sched_new(c);
    s->fn = fn;
    plx_sched_set_op(s, plx_op_lookup(MPI_BAND));
    struct plx_idup *d = plx_sched_alloc(s, sizeof *d);
    memset(d, 0, sizeof *d);
    d->c = c;
    d->out = newcomm;
    d->nids = plx_comm_is_inter(c) ? 2 : 1;
    struct plx_info *hints = use_info ? in : c->info;
    d->hints = hints ? plx_info_dup(hints) : NULL;
    d->pending = 1;
    plx_comm_nb_pending(1);     /* before the snapshot: every member then confirms */
    *newcomm = MPI_COMM_NULL;
    plx_sched_call(s, plx_idup_snapshot, d);
    *req = plx_sched_start(s)->obj.handle;
out:
    plx_api_unlock();
    return rc;
}

int PMPI_Comm_idup(MPI_Comm comm, MPI_Comm *newcomm, MPI_Request *request)
{
    return plx_idup_common(comm, 0, MPI_INFO_NULL, newcomm, request, "MPI_Comm_idup");
}

int PMPI_Comm_idup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm, MPI_Request *request)
{
    return plx_idup_common(comm, 1, info, newcomm, request, "MPI_Comm_idup_with_info");
}
