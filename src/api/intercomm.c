/*
 * Intercommunicator entry points: MPI_Intercomm_create, MPI_Intercomm_merge,
 * MPI_Comm_remote_size, MPI_Comm_remote_group, and the intercommunicator
 * forms of Comm_dup, Comm_split and Comm_create (called from api/comm.c).
 *
 * Every constructor is collective over both sides: each side agrees inside
 * its local intracommunicator, and the two leaders exchange what the other
 * side needs (group members, colors, context masks) through a bridge
 * (core/intercomm.c). MPI_Intercomm_create's leaders talk on the peer
 * communicator's point-to-point context with the caller's tag, as the
 * standard describes; later constructors use the intercommunicator's own
 * collective context.
 */
#include <stdlib.h>
#include <string.h>
#include "api/api.h"
#include "api/intercomm.h"
#include "coll/coll.h"
#include "core/request.h"
#include "core/runtime.h"
#include "progress/progress.h"
#include "pt2pt/pt2pt.h"
#include <stdio.h>

#pragma weak MPI_Intercomm_create = PMPI_Intercomm_create
#pragma weak MPI_Intercomm_merge = PMPI_Intercomm_merge
#pragma weak MPI_Comm_remote_size = PMPI_Comm_remote_size
#pragma weak MPI_Comm_remote_group = PMPI_Comm_remote_group

static int plx_ic_status_err(struct plx_comm *c, const char *fn, plx_status_t st, const char *what)
{
    if (st == PLX_ERR_NOSPACE)
        return plx_api_err(c, fn, MPI_ERR_OTHER, "no context id is free on every process of both groups");
    if (st == PLX_ERR_PROC_FAILED)
        return plx_api_err(c, fn, MPIX_ERR_PROC_FAILED, "%s failed: a member process was lost", what);
    return plx_api_err(c, fn, plx_status_to_class(st), "%s failed (internal status %d)", what, (int)st);
}

/* The other side's group, through the bridge: sizes, then members. */
static plx_status_t plx_ic_swap_group(struct plx_bridge *b, const struct plx_group *mine, struct plx_group **theirs_p)
{
    int32_t n = mine->size, rn = 0;
    plx_status_t st = plx_bridge_exchange(b, &n, sizeof n, &rn, sizeof rn);
    if (st != PLX_OK)
        return st;
    /* as (job, world rank): lpids are per process once other jobs joined */
    uint64_t *gm = plx_malloc(((size_t)n + 1) * 2 * sizeof(uint64_t));
    uint64_t *gt = plx_malloc(((size_t)rn + 1) * 2 * sizeof(uint64_t));
    int *lp = plx_malloc(((size_t)rn + 1) * sizeof(int));
    for (int i = 0; i < n; i++)
        plx_proc_gid(mine->lpids[i], gm + 2 * i);
    st = plx_bridge_exchange(b, gm, (size_t)n * 2 * sizeof(uint64_t), gt, (size_t)rn * 2 * sizeof(uint64_t));
    for (int i = 0; st == PLX_OK && i < rn; i++)
        if ((lp[i] = plx_procs_find(gt + 2 * i)) < 0)
            st = PLX_ERR_ARG;   /* a process this one was never connected to */
    if (st == PLX_OK && !(*theirs_p = plx_group_new(rn, lp)))
        st = PLX_ERR_NOMEM;
    free(lp);
    free(gm);
    free(gt);
    return st;
}

/* The intercommunicator over (lg, rg) with ids[0], and its local_comm with
 * ids[1]; gives both ids back when it cannot be made. */
static struct plx_comm *plx_ic_make(struct plx_comm *parent, struct plx_group *lg, struct plx_group *rg,
                                    const int *ids, const char *fn, int *rc_p)
{
    struct plx_comm *lc = plx_comm_new(parent, lg, ids[1]);
    struct plx_comm *ic = lc ? plx_comm_new_inter(parent, lg, rg, ids[0], lc) : NULL;
    if (lc)
        plx_comm_release(lc);   /* ic holds it (or, without ic, this frees it and ids[1]) */
    else
        plx_comm_free_context(ids[1]);
    if (!ic) {
        plx_comm_free_context(ids[0]);
        *rc_p = plx_api_err(parent, fn, MPI_ERR_NO_MEM, "cannot allocate a communicator handle");
        return NULL;
    }
    return ic;
}

/*
 * A leader given a bad argument cannot take part, and its partner would wait
 * for it for ever. It tells the other side instead: a notice (tag
 * PLX_COLL_TAG_IC_FAIL) to the remote leader when it knows it, else to every
 * member of peer_comm outside its own group (a bad remote_leader), else to
 * every member of MPI_COMM_WORLD outside its own group (a bad peer_comm).
 * Notices between two processes of one job travel on MPI_COMM_WORLD's
 * collective context, others on the peer communicator's.
 *
 * The leaders meet before anything else: each sends one word and waits for
 * the other's or for a notice that fits its call (same peer communicator
 * and tag where the notice knows them). The word carries how many notices
 * its sender has received from the other leader; a word sent before its
 * sender saw a notice of ours belongs to the call that failed and is
 * dropped, so a leader's next call never takes it. The other leader's word
 * is only probed for until no notice came first: a pair's packets are
 * matched in the order they were sent.
 *
 * Limit: a notice that went to a process which was not the intended partner
 * stays there, and that process's next MPI_Intercomm_create with the same
 * remote leader (and peer communicator and tag) fails as well; the bad call
 * left no way to tell them apart.
 */
struct plx_ic_notice {
    int32_t cls;        /* error class at the bad leader; 0: none */
    int32_t ctx;        /* its peer_comm's context id, -1 when that was bad */
    int32_t tag;        /* its tag, -1 when that was bad */
    int32_t pad;
    char why[200];
};

/* Notices sent to and received from each process, by lpid. */
static struct {
    int n;
    int32_t *sent, *seen;
} plx_ic;

static int32_t *plx_ic_count(int32_t **v, int lpid)
{
    if (lpid >= plx_ic.n) {
        int n = lpid + 16;
        plx_ic.sent = plx_realloc(plx_ic.sent, (size_t)n * sizeof(int32_t));
        plx_ic.seen = plx_realloc(plx_ic.seen, (size_t)n * sizeof(int32_t));
        memset(plx_ic.sent + plx_ic.n, 0, (size_t)(n - plx_ic.n) * sizeof(int32_t));
        memset(plx_ic.seen + plx_ic.n, 0, (size_t)(n - plx_ic.n) * sizeof(int32_t));
        plx_ic.n = n;
    }
    return &(*v)[lpid];
}

/* Where notices to/from process lpid (rank r of comm c) travel. */
static struct plx_comm *plx_ic_chan(struct plx_comm *c, int r, int *rank_p)
{
    int lp = c->lpids[r];
    if (lp < plx_comm_world->size) {   /* this job's process: world lpids are world ranks */
        *rank_p = lp;
        return plx_comm_world;
    }
    *rank_p = r;
    return c;
}

static void plx_ic_notify(struct plx_comm *c, struct plx_comm *pc, int remote_leader, const struct plx_ic_notice *nt)
{
    struct plx_comm *to = pc ? pc : plx_comm_world;
    int exact = pc && remote_leader >= 0 && remote_leader < pc->size && pc->lpids[remote_leader] != c->lpids[c->rank];
    int n = 0;
    struct plx_request **rq = plx_malloc(((size_t)to->size + 1) * sizeof *rq);
    for (int r = 0; r < to->size; r++) {
        if (exact ? r != remote_leader : plx_group_rank_of_lpid(c->group, to->lpids[r]) != MPI_UNDEFINED)
            continue;
        int cr;
        struct plx_comm *ch = plx_ic_chan(to, r, &cr);
        (*plx_ic_count(&plx_ic.sent, to->lpids[r]))++;
        rq[n++] = plx_coll_istart(PLX_REQ_SEND, (void *)nt, sizeof *nt, cr, PLX_COLL_TAG_IC_FAIL, ch,
                                  ch->context_id + 1);
    }
    for (int i = 0; i < n; i++)
        (void)plx_coll_wait(rq[i]);   /* a lost process does not need to know */
    free(rq);
}

struct plx_ic_wait {
    struct plx_request *notice;
    struct plx_comm *pc;
    int rl, tag;
};

static int plx_ic_any_done(void *arg)
{
    struct plx_ic_wait *w = arg;
    if (w->notice->cc == 0)
        return 1;
    int found = 0;
    plx_pt2pt_iprobe(w->pc, w->pc->context_id, w->rl, w->tag, &found, MPI_STATUS_IGNORE);
    return found;
}

static int plx_ic_notice_fits(const struct plx_ic_notice *nt, int ctx, int tag)
{
    return nt->cls != 0 && (nt->ctx == -1 || nt->ctx == ctx) && (nt->tag == -1 || nt->tag == tag);
}

static void plx_ic_drop(struct plx_request *r)
{
    if (!r)
        return;
    plx_pt2pt_cancel(r);   /* a send that completed is withdrawn at the receiver too */
    (void)plx_coll_wait(r);
}

/* Fills *out (cls 0: the other leader is in this call). */
static plx_status_t plx_ic_meet(struct plx_comm *pc, int rl, int tag, struct plx_ic_notice *out)
{
    int lp = pc->lpids[rl], cr;
    struct plx_comm *ch = plx_ic_chan(pc, rl, &cr);
    struct plx_ic_notice nt;
    struct plx_request *s = NULL;
    int32_t mine = 0, theirs = 0;
    plx_status_t st = PLX_OK;
    memset(out, 0, sizeof *out);
    struct plx_ic_wait wt = { .notice = NULL, .pc = pc, .rl = rl, .tag = tag };
    for (;;) {
        if (!wt.notice) {
            memset(&nt, 0, sizeof nt);
            wt.notice = plx_coll_istart(PLX_REQ_RECV, &nt, sizeof nt, cr, PLX_COLL_TAG_IC_FAIL, ch, ch->context_id + 1);
        }
        if (wt.notice->cc == 0) {   /* notices that were already here are seen before our word goes */
            (void)plx_coll_wait(wt.notice);
            wt.notice = NULL;
            (*plx_ic_count(&plx_ic.seen, lp))++;
            if (plx_ic_notice_fits(&nt, pc->context_id, tag)) {
                *out = nt;
                out->why[sizeof out->why - 1] = '\0';
                break;
            }
            continue;   /* about another call of that process */
        }
        if (!s) {
            mine = *plx_ic_count(&plx_ic.seen, lp);
            s = plx_coll_istart(PLX_REQ_SEND, &mine, sizeof mine, rl, tag, pc, pc->context_id);
        }
        plx_progress_wait(plx_ic_any_done, &wt);
        if (wt.notice->cc == 0)
            continue;
        /* its word: one sent before it saw our last notice is of a call of
         * ours that failed */
        struct plx_request *r = plx_coll_istart(PLX_REQ_RECV, &theirs, sizeof theirs, rl, tag, pc, pc->context_id);
        st = plx_coll_wait(r);
        if (st != PLX_OK || theirs >= *plx_ic_count(&plx_ic.sent, lp))
            break;
    }
    if (out->cls) {
        plx_ic_drop(s);   /* our word must not wait there for a later call */
    } else if (s) {
        plx_status_t a = plx_coll_wait(s);
        if (st == PLX_OK)
            st = a;
    }
    plx_ic_drop(wt.notice);
    return st;
}

int PMPI_Intercomm_create(MPI_Comm local_comm, int local_leader, MPI_Comm peer_comm, int remote_leader, int tag,
                          MPI_Comm *newintercomm)
{
    static const char fn[] = "MPI_Intercomm_create";
    struct plx_comm *c, *pc = NULL;
    int rc;
    plx_api_lock();
    if ((rc = plx_api_comm(local_comm, &c, fn)))
        goto out;
    if (plx_comm_is_inter(c)) {
        rc = plx_api_err(c, fn, MPI_ERR_COMM, "argument 'local_comm' is an intercommunicator");
        goto out;
    }
    if (local_leader < 0 || local_leader >= c->size) {
        rc = plx_api_err(c, fn, MPI_ERR_RANK, "argument 'local_leader' is %d but local_comm has %d ranks",
                         local_leader, c->size);
        goto out;
    }
    if (!newintercomm) {
        rc = plx_api_null_arg(c, fn, "newintercomm");
        goto out;
    }
    /* peer_comm, remote_leader and tag matter at the leader only; a bad one
     * there is reported to the whole side and to the other side's leader
     * (which would wait otherwise), and through it to the other side */
    struct plx_ic_notice nt;
    memset(&nt, 0, sizeof nt);
    int leader = c->rank == local_leader;
    if (leader) {
        pc = plx_obj_lookup(&plx_comm_tab, peer_comm);
        if (!pc)
            nt.cls = MPI_ERR_COMM, snprintf(nt.why, sizeof nt.why, "argument 'peer_comm' is %s communicator (handle 0x%x)",
                                            peer_comm == MPI_COMM_NULL ? "the null" : "an invalid", (unsigned)peer_comm);
        else if (remote_leader < 0 || remote_leader >= pc->size)
            nt.cls = MPI_ERR_RANK, snprintf(nt.why, sizeof nt.why,
                                            "argument 'remote_leader' is %d but peer_comm has %d ranks",
                                            remote_leader, pc->size);
        else if (tag < 0)
            nt.cls = MPI_ERR_TAG, snprintf(nt.why, sizeof nt.why, "argument 'tag' is %d, must be >= 0", tag);
        else if (pc->lpids[remote_leader] == c->lpids[local_leader])
            nt.cls = MPI_ERR_RANK, snprintf(nt.why, sizeof nt.why,
                                            "argument 'remote_leader' (%d of peer_comm) is the local leader itself",
                                            remote_leader);
        if (nt.cls) {
            nt.ctx = pc ? pc->context_id : -1;
            nt.tag = tag >= 0 ? tag : -1;
            plx_ic_notify(c, pc, remote_leader, &nt);
        } else {
            plx_status_t st = plx_ic_meet(pc, remote_leader, tag, &nt);
            if (st != PLX_OK && !nt.cls)
                nt.cls = plx_status_to_class(st), snprintf(nt.why, sizeof nt.why,
                                                           "meeting the remote leader failed (internal status %d)",
                                                           (int)st);
            else if (nt.cls) {
                char theirs[sizeof nt.why];
                memcpy(theirs, nt.why, sizeof theirs);
                snprintf(nt.why, sizeof nt.why, "the remote leader (rank %d of peer_comm) was given a bad argument: %.120s",
                         remote_leader, theirs);
                nt.pad = 1;   /* the other side's error, not this leader's argument */
            }
        }
    }
    plx_status_t st = plx_coll_bcast(&nt, sizeof nt, local_leader, c, PLX_COLL_TAG_DEFAULT);
    if (st != PLX_OK) {
        rc = plx_ic_status_err(c, fn, st, "starting the intercommunicator");
        goto out;
    }
    if (nt.cls) {
        nt.why[sizeof nt.why - 1] = '\0';
        if (leader || nt.pad)
            rc = plx_api_err(c, fn, nt.cls, "%s", nt.why);
        else
            rc = plx_api_err(c, fn, nt.cls, "the local leader (rank %d) was given a bad argument: %s", local_leader,
                             nt.why);
        goto out;
    }
    struct plx_bridge b = { .local = c, .leader = local_leader, .peer = pc, .remote_leader = remote_leader,
                            .ctx = pc ? pc->context_id : 0, .tag = tag };
    rc = plx_intercomm_build(c, &b, fn, newintercomm);
out:
    plx_api_unlock();
    return rc;
}

int plx_intercomm_build(struct plx_comm *c, struct plx_bridge *b, const char *fn, MPI_Comm *newcomm)
{
    struct plx_group *rg = NULL;
    plx_status_t st = plx_ic_swap_group(b, c->group, &rg);
    if (st != PLX_OK)
        return plx_ic_status_err(c, fn, st, "exchanging the groups");
    int rc = plx_intercomm_build_with(c, b, rg, fn, newcomm);
    plx_group_release(rg);
    return rc;
}

int plx_intercomm_build_with(struct plx_comm *c, struct plx_bridge *b, struct plx_group *rg, const char *fn,
                             MPI_Comm *newcomm)
{
    struct plx_comm *ic;
    int rc = MPI_SUCCESS, ids[2];
    plx_status_t st;
    for (int i = 0; i < rg->size; i++)
        if (plx_group_rank_of_lpid(c->group, rg->lpids[i]) != MPI_UNDEFINED) {
            rc = plx_api_err(c, fn, MPI_ERR_COMM,
                             "the two groups overlap: world rank %d is in both (they must be disjoint)",
                             rg->lpids[i]);
            goto out;
        }
    st = plx_comm_alloc_context_bridge(b, 2, ids);
    if (st != PLX_OK) {
        rc = plx_ic_status_err(c, fn, st, "agreeing on a context id");
        goto out;
    }
    if ((ic = plx_ic_make(c, c->group, rg, ids, fn, &rc)))
        *newcomm = ic->obj.handle;
out:
    return rc;
}

/* The intercommunicator c, or MPI_ERR_COMM. */
static int plx_ic_check(MPI_Comm comm, struct plx_comm **c_p, const char *fn)
{
    int rc = plx_api_comm(comm, c_p, fn);
    if (rc == MPI_SUCCESS && !plx_comm_is_inter(*c_p))
        rc = plx_api_err(*c_p, fn, MPI_ERR_COMM, "argument 'comm' is not an intercommunicator");
    return rc;
}

int PMPI_Intercomm_merge(MPI_Comm intercomm, int high, MPI_Comm *newintracomm)
{
    static const char fn[] = "MPI_Intercomm_merge";
    struct plx_comm *c, *nc;
    struct plx_group *g = NULL;
    int rc, ids[1];
    plx_api_lock();
    if ((rc = plx_ic_check(intercomm, &c, fn)))
        goto out;
    if (!newintracomm) {
        rc = plx_api_null_arg(c, fn, "newintracomm");
        goto out;
    }
    struct plx_bridge b;
    plx_bridge_of(c, &b);
    int32_t mine = high != 0, theirs = 0;
    plx_status_t st = plx_bridge_exchange(&b, &mine, sizeof mine, &theirs, sizeof theirs);
    if (st == PLX_OK)
        st = plx_comm_alloc_context_bridge(&b, 1, ids);
    if (st != PLX_OK) {
        rc = plx_ic_status_err(c, fn, st, "merging");
        goto out;
    }
    /* the side that passed high = false comes first; with the same value
     * on both, the side whose leader has the lower world rank (the leaders'
     * values count: the standard asks all of a side to pass the same) */
    int first = mine != theirs ? !mine : plx_proc_before(c->group->lpids[0], c->remote_group->lpids[0]);
    g = first ? plx_group_union(c->group, c->remote_group) : plx_group_union(c->remote_group, c->group);
    if ((nc = plx_comm_new(c, g, ids[0])))
        *newintracomm = nc->obj.handle;
    else {
        plx_comm_free_context(ids[0]);
        rc = plx_api_err(c, fn, MPI_ERR_NO_MEM, "cannot allocate a communicator handle");
    }
out:
    plx_group_release(g);
    plx_api_unlock();
    return rc;
}

int PMPI_Comm_remote_size(MPI_Comm comm, int *size)
{
    static const char fn[] = "MPI_Comm_remote_size";
    struct plx_comm *c;
    plx_api_lock();
    int rc = plx_ic_check(comm, &c, fn);
    if (rc == MPI_SUCCESS && !size)
        rc = plx_api_null_arg(c, fn, "size");
    if (rc == MPI_SUCCESS)
        *size = c->remote_group->size;
    plx_api_unlock();
    return rc;
}

int PMPI_Comm_remote_group(MPI_Comm comm, MPI_Group *group)
{
    static const char fn[] = "MPI_Comm_remote_group";
    struct plx_comm *c;
    plx_api_lock();
    int rc = plx_ic_check(comm, &c, fn);
    if (rc == MPI_SUCCESS && !group)
        rc = plx_api_null_arg(c, fn, "group");
    if (rc == MPI_SUCCESS) {
        plx_group_addref(c->remote_group);
        *group = c->remote_group->obj.handle;
    }
    plx_api_unlock();
    return rc;
}

struct plx_comm *plx_intercomm_dup(struct plx_comm *c, const char *fn, int *rc_p)
{
    struct plx_bridge b;
    int ids[2];
    plx_bridge_of(c, &b);
    plx_status_t st = plx_comm_alloc_context_bridge(&b, 2, ids);
    if (st != PLX_OK) {
        *rc_p = plx_ic_status_err(c, fn, st, "agreeing on a context id");
        return NULL;
    }
    return plx_ic_make(c, c->group, c->remote_group, ids, fn, rc_p);
}

struct plx_ic_member {
    int key;
    int rank;
};

static int plx_ic_member_cmp(const void *a, const void *b)
{
    const struct plx_ic_member *x = a, *y = b;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    return (x->rank > y->rank) - (x->rank < y->rank);
}

/* The members of g whose (color, key) pair in ck is of `color`, by key. */
static struct plx_group *plx_ic_pick(const struct plx_group *g, const int32_t *ck, int color)
{
    struct plx_ic_member *m = plx_malloc(((size_t)g->size + 1) * sizeof *m);
    int n = 0;
    for (int r = 0; r < g->size; r++)
        if (ck[2 * r] == color)
            m[n++] = (struct plx_ic_member){ .key = ck[2 * r + 1], .rank = r };
    qsort(m, (size_t)n, sizeof *m, plx_ic_member_cmp);
    int *lp = plx_malloc(((size_t)n + 1) * sizeof(int));
    for (int i = 0; i < n; i++)
        lp[i] = g->lpids[m[i].rank];
    struct plx_group *out = plx_group_new(n, lp);
    free(m);
    free(lp);
    return out;
}

int plx_intercomm_split(struct plx_comm *c, int color, int key, MPI_Comm *newcomm, const char *fn)
{
    struct plx_comm *lc = c->local_comm, *nc;
    struct plx_group *lg = NULL, *rg = NULL;
    int rc = MPI_SUCCESS, ids[2];
    int32_t mine[2] = { color, key };
    int32_t *local = plx_malloc((size_t)lc->size * sizeof mine);
    int32_t *remote = plx_malloc((size_t)c->size * sizeof mine);
    struct plx_bridge b;
    plx_bridge_of(c, &b);
    plx_status_t st = plx_coll_allgather(mine, sizeof mine, local, lc, PLX_COLL_TAG_DEFAULT);
    if (st == PLX_OK)
        st = plx_bridge_exchange(&b, local, (size_t)lc->size * sizeof mine, remote, (size_t)c->size * sizeof mine);
    if (st == PLX_OK)
        st = plx_comm_alloc_context_bridge(&b, 2, ids);
    if (st != PLX_OK) {
        rc = plx_ic_status_err(c, fn, st, "splitting");
        goto out;
    }
    *newcomm = MPI_COMM_NULL;
    if (color != MPI_UNDEFINED) {
        lg = plx_ic_pick(c->group, local, color);
        rg = plx_ic_pick(c->remote_group, remote, color);
    }
    if (!lg || !rg || rg->size == 0) {  /* no partner of my color on the other side: no communicator */
        plx_comm_free_context(ids[0]);
        plx_comm_free_context(ids[1]);
        goto out;
    }
    if ((nc = plx_ic_make(c, lg, rg, ids, fn, &rc)))
        *newcomm = nc->obj.handle;
out:
    plx_group_release(lg);
    plx_group_release(rg);
    free(local);
    free(remote);
    return rc;
}

int plx_intercomm_create(struct plx_comm *c, struct plx_group *g, MPI_Comm *newcomm, const char *fn)
{
    struct plx_comm *nc;
    struct plx_group *rg = NULL;
    int rc = MPI_SUCCESS, ids[2];
    struct plx_bridge b;
    plx_bridge_of(c, &b);
    plx_status_t st = plx_ic_swap_group(&b, g, &rg);
    if (st == PLX_OK)
        st = plx_comm_alloc_context_bridge(&b, 2, ids);
    if (st != PLX_OK) {
        rc = plx_ic_status_err(c, fn, st, "creating the communicator");
        goto out;
    }
    *newcomm = MPI_COMM_NULL;
    if (g->rank == MPI_UNDEFINED || rg->size == 0) {
        plx_comm_free_context(ids[0]);
        plx_comm_free_context(ids[1]);
        goto out;
    }
    if ((nc = plx_ic_make(c, g, rg, ids, fn, &rc)))
        *newcomm = nc->obj.handle;
out:
    plx_group_release(rg);
    return rc;
}
