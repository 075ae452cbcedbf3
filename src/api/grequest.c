/*
 * Generalized requests (MPI_Grequest_start, MPI_Grequest_complete): a
 * request the application completes itself. The request is complete when
 * MPI_Grequest_complete is called (from any thread); the wait or test that
 * then finds it calls query_fn for its status, and freeing it (that wait, or
 * MPI_Request_free) calls free_fn. MPI_Cancel calls cancel_fn with whether
 * the request is already complete. The callbacks run without the library
 * lock, so they may call MPI.
 */
#include <stdlib.h>
#include "api/pt2pt_api.h"
#include "progress/progress.h"

#pragma weak MPI_Grequest_start = PMPI_Grequest_start
#pragma weak MPI_Grequest_complete = PMPI_Grequest_complete

struct plx_greq {
    MPI_Grequest_query_function *query_fn;
    MPI_Grequest_free_function *free_fn;
    MPI_Grequest_cancel_function *cancel_fn;
    void *extra_state;
    int queried;                /* query_fn ran for this completion */
};

/* Runs a user callback with the lock released (it may call MPI). */
#define PLX_GREQ_CALLBACK(expr)                                                                    \
    ({                                                                                             \
        int held_ = plx_lock_held();                                                               \
        if (held_)                                                                                 \
            plx_api_unlock();                                                                      \
        int rc_ = (expr);                                                                          \
        if (held_)                                                                                 \
            plx_api_lock();                                                                        \
        rc_;                                                                                       \
    })

static void plx_greq_free(void *ext)
{
    struct plx_greq *g = ext;
    if (g->free_fn)
        (void)PLX_GREQ_CALLBACK(g->free_fn(g->extra_state));
    free(g);
}

void plx_greq_query(struct plx_request *r)
{
    struct plx_greq *g = r->ext;
    if (g->queried)
        return;
    g->queried = 1;
    MPI_Status st = { 0 };
    st.MPI_SOURCE = MPI_UNDEFINED;
    st.MPI_TAG = MPI_UNDEFINED;
    int rc = MPI_SUCCESS;
    if (g->query_fn)
        rc = PLX_GREQ_CALLBACK(g->query_fn(g->extra_state, &st));
    r->st_source = st.MPI_SOURCE;
    r->st_tag = st.MPI_TAG;
    r->st_cancelled = st.count_hi_and_cancelled & 1;
    r->st_bytes = (size_t)((MPI_Count)(unsigned)st.count_lo | ((MPI_Count)(st.count_hi_and_cancelled >> 1) << 32));
    r->st_error = rc;
}

int plx_greq_release(struct plx_request *r)
{
    struct plx_greq *g = r->ext;
    MPI_Grequest_free_function *f = g->free_fn;
    g->free_fn = NULL;
    return f ? PLX_GREQ_CALLBACK(f(g->extra_state)) : MPI_SUCCESS;
}

int plx_greq_cancel(struct plx_request *r)
{
    struct plx_greq *g = r->ext;
    int rc = g->cancel_fn ? PLX_GREQ_CALLBACK(g->cancel_fn(g->extra_state, r->cc == 0)) : MPI_SUCCESS;
    return rc == MPI_SUCCESS ? rc : plx_api_err_code(plx_comm_self, rc);
}

int PMPI_Grequest_start(MPI_Grequest_query_function *query_fn, MPI_Grequest_free_function *free_fn,
                        MPI_Grequest_cancel_function *cancel_fn, void *extra_state, MPI_Request *request)
{
    static const char fn[] = "MPI_Grequest_start";
    plx_api_check_init(fn);
    if (!request)
        return plx_api_null_arg(NULL, fn, "request");
    plx_api_lock();
    struct plx_greq *g = plx_calloc(1, sizeof *g);
    g->query_fn = query_fn;
    g->free_fn = free_fn;
    g->cancel_fn = cancel_fn;
    g->extra_state = extra_state;
    struct plx_request *r = plx_request_new(PLX_REQ_GREQ, plx_comm_self);
    r->rank = MPI_PROC_NULL;
    r->tag = MPI_ANY_TAG;
    r->cc = 1;
    r->ext = g;
    r->ext_free = plx_greq_free;
    *request = r->obj.handle;
    plx_api_unlock();
    return MPI_SUCCESS;
}

int PMPI_Grequest_complete(MPI_Request request)
{
    static const char fn[] = "MPI_Grequest_complete";
    plx_api_check_init(fn);
    plx_api_lock();
    int rc = MPI_SUCCESS;
    struct plx_request *r = plx_obj_lookup(&plx_request_tab, request);
    if (!r || r->kind != PLX_REQ_GREQ)
        rc = plx_api_err(NULL, fn, MPI_ERR_REQUEST, "argument 'request' (handle 0x%x) is not a generalized request",
                         (unsigned)request);
    else if (r->cc == 0)
        rc = plx_api_err(NULL, fn, MPI_ERR_REQUEST, "the generalized request (handle 0x%x) is already complete",
                         (unsigned)request);
    else {
        r->cc = 0;
        plx_request_complete(r);        /* frees it if MPI_Request_free came first */
        plx_progress_kick();            /* a thread may be waiting for it */
    }
    plx_api_unlock();
    return rc;
}
