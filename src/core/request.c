/* Request objects (see request.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/log.h"
#include "core/request.h"
#include "core/runtime.h"

struct plx_objtab plx_request_tab = PLX_OBJTAB_INIT("request", PLX_OBJ_REQUEST, struct plx_request);

struct plx_request *plx_request_new(int kind, struct plx_comm *comm)
{
    struct plx_request *r = plx_obj_alloc_sized(&plx_request_tab, sizeof *r);
    if (!r)
        plx_fatal("out of memory allocating a request");
    r->kind = (uint8_t)kind;
    r->comm = comm;
    if (comm)
        comm->obj.refcount++;
    plx_list_init(&r->link);
    plx_list_init(&r->sq.link);
    return r;
}

static struct plx_list plx_request_blocked = { &plx_request_blocked, &plx_request_blocked };

void plx_request_block(struct plx_request *r)
{
    plx_list_push_back(&plx_request_blocked, &r->blocked_link);
}

void plx_request_unblock(struct plx_request *r)
{
    plx_list_remove(&r->blocked_link);
}

void plx_request_foreach_blocked(void (*fn)(void *obj, void *arg), void *arg)
{
    struct plx_list *pos, *n;
    plx_list_for_each_safe(pos, n, &plx_request_blocked)
        fn(plx_list_entry(pos, struct plx_request, blocked_link), arg);
}

void plx_request_init_stack(struct plx_request *r, int kind, struct plx_comm *comm)
{
    memset(r, 0, sizeof *r);
    r->kind = (uint8_t)kind;
    r->comm = comm;
    plx_list_init(&r->link);
    plx_list_init(&r->sq.link);
    plx_list_init(&r->blocked_link);
}

void bsend_release_block(void *block);   /* api/bsend.c */

int plx_rndv_sends;

void plx_request_complete(struct plx_request *r)
{
    if (r->rndv_out) {
        r->rndv_out = 0;
        plx_rndv_sends--;
    }
    if (r->tmp) {
        free(r->tmp);
        r->tmp = NULL;
    }
    if (r->bsend_block) {
        bsend_release_block(r->bsend_block);
        r->bsend_block = NULL;
    }
    if (r->user_freed || r->internal)
        plx_request_free(r);
}

void plx_request_free(struct plx_request *r)
{
    if (r->ext_free)
        r->ext_free(r->ext);
    if (r->comm)
        plx_comm_release(r->comm);
    plx_dt_release(r->dt);      /* whoever set r->dt took a reference */
    if (r->tmp)
        free(r->tmp);
    plx_obj_free(&plx_request_tab, r);
}

void plx_request_status(const struct plx_request *r, MPI_Status *st)
{
    if (st == MPI_STATUS_IGNORE)
        return;
    st->MPI_SOURCE = r->st_source;
    st->MPI_TAG = r->st_tag;
    /* MPI 3.2.5: a successful completion leaves MPI_ERROR alone (only the
     * multiple-completion calls set it, with MPI_ERR_IN_STATUS); a failed one
     * records its code, as the failed probes of ULFM do */
    if (r->st_error != MPI_SUCCESS)
        st->MPI_ERROR = r->st_error;
    st->count_hi_and_cancelled = r->st_cancelled ? 1 : 0;
    plx_status_set_bytes(st, (MPI_Count)r->st_bytes);
}

static void plx_request_dump_one(void *obj, void *arg)
{
    struct plx_request *r = obj;
    int *n = arg;
    if (r->cc == 0 || r->kind == PLX_REQ_MESSAGE)
        return;
    const char *kind = r->kind == PLX_REQ_SEND
        ? (r->mode == PLX_MODE_SYNC ? "Ssend" : r->mode == PLX_MODE_BUFFERED ? "Bsend" : "Send")
        : r->kind == PLX_REQ_COLL ? "nonblocking collective" : r->kind == PLX_REQ_PROBE ? "Probe"
        : r->kind == PLX_REQ_GREQ ? "generalized request (waits for MPI_Grequest_complete)" : "Recv";
    char peer[32];
    if (r->rank == MPI_ANY_SOURCE)
        snprintf(peer, sizeof peer, "MPI_ANY_SOURCE");
    else
        snprintf(peer, sizeof peer, "%d", r->rank);
    char tag[32];
    if (r->tag == MPI_ANY_TAG)
        snprintf(tag, sizeof tag, "MPI_ANY_TAG");
    else
        snprintf(tag, sizeof tag, "%d", r->tag);
    char bytes[40] = "";
    if (r->kind != PLX_REQ_PROBE)
        snprintf(bytes, sizeof bytes, ", %zu bytes", r->bytes);
    char rndv[96] = "";
    if (r->kind == PLX_REQ_RECV && r->rndv_size)
        snprintf(rndv, sizeof rndv, " (rendezvous: %zu of %zu bytes arrived)", r->rndv_done, r->rndv_size);
    else if (r->kind == PLX_REQ_SEND && r->rndv_out)
        snprintf(rndv, sizeof rndv, " (rendezvous: %zu bytes streamed, %d pieces unacknowledged)", r->rndv_done,
                 r->comp.count);
    plx_warn("  pending %s%s: %s rank %s, tag %s%s%s, communicator %s%s", kind,
             r->persistent ? " (persistent)" : "", r->kind == PLX_REQ_SEND ? "to" : "from", peer, tag,
             bytes, rndv, r->comm && r->comm->name[0] ? r->comm->name : "(unnamed)",
             (r->ctx & 1) ? " (collective)" : "");
    (*n)++;
}

void plx_request_dump_pending(void)
{
    int n = 0;
    plx_warn("waiting in MPI; pending requests:");
    plx_obj_foreach(&plx_request_tab, plx_request_dump_one, &n);
    plx_request_foreach_blocked(plx_request_dump_one, &n);
    if (n == 0)
        plx_warn("  (no pending requests)");
}
