/*
 * Lost peers (see pt2pt.h): when the router loses a peer's last channel,
 * either the job ends (no communicator holding it returns errors) or every
 * request bound to it fails with MPIX_ERR_PROC_FAILED; wildcards follow
 * ULFM's rule until MPIX_Comm_failure_ack.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "core/errors.h"
#include "core/log.h"
#include "core/runtime.h"
#include "pt2pt/match.h"
#include "pt2pt/pt2pt_impl.h"

/* --- failed peers ---------------------------------------------------------- */

/* c's rank of world rank lpid, or MPI_UNDEFINED; O(size), on failure
 * paths only. */
static int plx_pt2pt_comm_rank_of(const struct plx_comm *c, int lpid)
{
    for (int i = 0; i < c->size; i++)
        if (c->lpids[i] == lpid)
            return i;
    return MPI_UNDEFINED;
}

static int plx_pt2pt_comm_holds(const struct plx_comm *c, int lpid)
{
    return plx_pt2pt_comm_rank_of(c, lpid) != MPI_UNDEFINED;
}

struct plx_fail_scan {
    int lpid;
    int found;
    struct plx_peer *peer;
};

static void plx_pt2pt_comm_returns_for(void *obj, void *arg)
{
    const struct plx_comm *c = obj;
    struct plx_fail_scan *s = arg;
    if (!s->found && c->errhandler && c->lpids &&
        (c->errhandler->kind == PLX_ERRH_RETURN || c->errhandler->kind == PLX_ERRH_USER_COMM) &&
        plx_pt2pt_comm_holds(c, s->lpid))
        s->found = 1;
}

static int plx_pt2pt_peer_failure_returns(int lpid)
{
    struct plx_fail_scan s = { .lpid = lpid };
    /* the builtin communicators are not in the table's walk */
    if (plx_comm_world)
        plx_pt2pt_comm_returns_for(plx_comm_world, &s);
    if (plx_comm_self)
        plx_pt2pt_comm_returns_for(plx_comm_self, &s);
    plx_obj_foreach(&plx_comm_tab, plx_pt2pt_comm_returns_for, &s);
    return s.found;
}

static void plx_pt2pt_tag_str(int tag, char *buf, size_t len)
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
struct plx_peer *plx_pt2pt_comm_unacked_failure(struct plx_comm *c)
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
    return plx_unlikely(plx_p2p.nfailed) && plx_pt2pt_comm_unacked_failure(c) != NULL;
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
        p = plx_pt2pt_comm_unacked_failure(c);
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
        st->MPI_SOURCE = plx_pt2pt_comm_rank_of(c, p->lpid);
        st->MPI_TAG = tag;
        st->MPI_ERROR = code;
        st->count_lo = 0;
        st->count_hi_and_cancelled = 0;
    }
    return code;
}

/* Completes r with MPIX_ERR_PROC_FAILED and p's account of the failure. */
void plx_pt2pt_req_fail(struct plx_request *r, struct plx_peer *p)
{
    char tag[24];
    const char *cname = r->comm->name[0] ? r->comm->name : "a communicator";
    plx_pt2pt_tag_str(r->tag, tag, sizeof tag);
    if (r->ctx & 1)             /* a collective's step: the collective names the call */
        r->st_error = plx_err_make(MPIX_ERR_PROC_FAILED, "rank %d (world rank %d) was lost: %s",
                                   plx_pt2pt_comm_rank_of(r->comm, p->lpid), p->lpid, p->failed);
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
        r->st_source = plx_pt2pt_comm_rank_of(r->comm, p->lpid);
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

/* A queued send the channels refused with an error (not "busy") ends with
 * that error instead of waiting for ever; a lost peer has its own account. */
void plx_pt2pt_send_fail(struct plx_request *r, struct plx_peer *p, plx_status_t st)
{
    if (p->failed) {
        plx_pt2pt_req_fail(r, p);
        return;
    }
    plx_pt2pt_send_set_error(r, st);
    r->cc = 0;
    plx_request_complete(r);
}

/* The error a send ends with when the transport failed it (status st). */
void plx_pt2pt_send_set_error(struct plx_request *r, plx_status_t st)
{
    char tag[24];
    plx_pt2pt_tag_str(r->tag, tag, sizeof tag);
    r->st_error = plx_err_make(MPI_ERR_OTHER, "rank %d: send of %zu bytes to rank %d (tag %s) on %s failed in the "
                               "transport (status %d)", plx_procs.my_lpid, r->bytes, r->rank, tag,
                               r->comm->name[0] ? r->comm->name : "a communicator", (int)st);
}

/* A started request the peer's packets would complete (send: any; receive:
 * a rendezvous matched from it and still streaming). Posted receives are
 * handled from the match queues. */
static void plx_pt2pt_req_fail_if_bound(void *obj, void *arg)
{
    struct plx_request *r = obj;
    struct plx_fail_scan *s = arg;
    if (r->cc == 0 || r->peer_lpid != s->lpid || r->rank == MPI_PROC_NULL || !r->comm)
        return;
    if (r->kind == PLX_REQ_SEND || (r->kind == PLX_REQ_RECV && r->link.next == &r->link))
        plx_pt2pt_req_fail(r, s->peer);
}

void plx_pt2pt_peer_failed(int lpid, const char *why)
{
    struct plx_peer *p = plx_pt2pt_peer_get(lpid);
    if (p->failed)
        return;
    p->failed = plx_strdup(why);
    p->fast_send = NULL;        /* what still goes out goes through the router, which drops it */
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
            int bound = r->rank == MPI_ANY_SOURCE ? plx_pt2pt_comm_holds(r->comm, lpid)
                                                  : plx_pt2pt_src_lpid(r->comm, r->rank) == lpid;
            if (!bound)
                continue;
            plx_list_remove(&r->link);
            plx_pt2pt_req_fail(r, p);
        }
    }

    /* sends to it and rendezvous receives from it in flight: every request
     * with a handle, and the blocking receives on the stack */
    struct plx_fail_scan s = { .lpid = lpid, .peer = p };
    plx_obj_foreach(&plx_request_tab, plx_pt2pt_req_fail_if_bound, &s);
    plx_request_foreach_blocked(plx_pt2pt_req_fail_if_bound, &s);
}

void plx_pt2pt_peer_lost(int lpid, const char *why, int ended)
{
    if (plx_pt2pt_peer_failure_returns(lpid)) {
        plx_pt2pt_peer_failed(lpid, why);
        return;
    }
    if (ended) {
        /* The peer's process ended: most likely it aborted the job or died,
         * and the launcher is about to say so and kill us. Give that, the
         * cause, a moment to be reported first; ours is only the echo. */
        struct timespec pause = { 1, 500 * 1000 * 1000 };
        nanosleep(&pause, NULL);
    }
    plx_fatal("%s", why);
}
