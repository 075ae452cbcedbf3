/* Completion entry points: Wait/Test families, Start, Cancel, statuses. */
#include <mpi.h>
#include <stdint.h>
#include <stdlib.h>
#include "api/pt2pt_api.h"
#include "coll/sched.h"
#include "progress/progress.h"
#include "pt2pt/pt2pt.h"

#pragma weak MPI_Wait = PMPI_Wait
#pragma weak MPI_Test = PMPI_Test
#pragma weak MPI_Waitany = PMPI_Waitany
#pragma weak MPI_Testany = PMPI_Testany
#pragma weak MPI_Waitall = PMPI_Waitall
#pragma weak MPI_Testall = PMPI_Testall
#pragma weak MPI_Waitsome = PMPI_Waitsome
#pragma weak MPI_Testsome = PMPI_Testsome
#pragma weak MPI_Start = PMPI_Start
#pragma weak MPI_Startall = PMPI_Startall
#pragma weak MPI_Request_free = PMPI_Request_free
#pragma weak MPI_Request_get_status = PMPI_Request_get_status
#pragma weak MPI_Cancel = PMPI_Cancel
#pragma weak MPI_Test_cancelled = PMPI_Test_cancelled
#pragma weak MPI_Get_count = PMPI_Get_count
#pragma weak MPI_Get_elements = PMPI_Get_elements
#pragma weak MPI_Get_count_c = PMPI_Get_count_c
#pragma weak MPI_Get_elements_c = PMPI_Get_elements_c
#pragma weak MPI_Get_elements_x = PMPI_Get_elements_x
#pragma weak MPI_Status_set_elements = PMPI_Status_set_elements
#pragma weak MPI_Status_set_elements_x = PMPI_Status_set_elements_x
#pragma weak MPI_Status_set_cancelled = PMPI_Status_set_cancelled

int plx_api_request_done(struct plx_request *r, MPI_Status *st, int raise)
{
    int free_err = MPI_SUCCESS;
    if (r->kind == PLX_REQ_GREQ) {
        plx_greq_query(r);
        free_err = plx_greq_release(r);     /* its free_fn runs now: its error is the call's */
    }
    plx_request_status(r, st);
    int err = r->st_error != MPI_SUCCESS ? r->st_error : free_err;
    if (plx_likely(err == MPI_SUCCESS || !raise)) {
        if (r->persistent)
            r->active = 0;
        else
            plx_request_free(r);
        return err;
    }
    struct plx_comm *c = r->comm;
    c->obj.refcount++;          /* the error handler still needs it */
    if (r->persistent)
        r->active = 0;
    else
        plx_request_free(r);
    err = plx_api_err_code(c, err);
    plx_comm_release(c);
    return err;
}

static void plx_status_empty(MPI_Status *st)
{
    if (st == MPI_STATUS_IGNORE)
        return;
    st->MPI_SOURCE = MPI_ANY_SOURCE;
    st->MPI_TAG = MPI_ANY_TAG;
    st->MPI_ERROR = MPI_SUCCESS;
    st->count_lo = 0;
    st->count_hi_and_cancelled = 0;
}

/* Decodes a request handle. *r_p = NULL for MPI_REQUEST_NULL and for an
 * inactive persistent request ("empty" per the standard). */
static int plx_api_req(MPI_Request h, struct plx_request **r_p, const char *fn, const char *arg)
{
    *r_p = NULL;
    if (h == MPI_REQUEST_NULL)
        return MPI_SUCCESS;
    struct plx_request *r = plx_obj_lookup(&plx_request_tab, h);
    if (!r || r->kind == PLX_REQ_MESSAGE || r->internal)
        return plx_api_err(NULL, fn, MPI_ERR_REQUEST, "argument '%s' is not a valid request (handle 0x%x)", arg,
                           (unsigned)h);
    if (r->persistent && !r->active)
        return MPI_SUCCESS;
    *r_p = r;
    return MPI_SUCCESS;
}

static int plx_api_reqs(int n, const MPI_Request reqs[], struct plx_request **out, const char *fn)
{
    if (n < 0)
        return plx_api_err(NULL, fn, MPI_ERR_COUNT, "argument 'count' is negative (%d)", n);
    if (n > 0 && !reqs)
        return plx_api_null_arg(NULL, fn, "array_of_requests");
    for (int i = 0; i < n; i++) {
        int rc = plx_api_req(reqs[i], &out[i], fn, "array_of_requests");
        if (rc)
            return rc;
    }
    return MPI_SUCCESS;
}

/* Completes r (already done) into slot i: status, handle. */
static int plx_api_finish_slot(struct plx_request *r, MPI_Request *h, MPI_Status *st, int raise)
{
    int persistent = r->persistent;
    int rc = plx_api_request_done(r, st, raise);
    if (!persistent)
        *h = MPI_REQUEST_NULL;
    return rc;
}

int PMPI_Wait(MPI_Request *request, MPI_Status *status)
{
    static const char fn[] = "MPI_Wait";
    plx_api_check_init(fn);
    if (!request)
        return plx_api_null_arg(NULL, fn, "request");
    plx_api_lock();
    struct plx_request *r;
    int rc = plx_api_req(*request, &r, fn, "request");
    if (rc == MPI_SUCCESS) {
        if (!r) {
            plx_status_empty(status);
        } else {
            plx_progress_wait_req(r);
            rc = plx_api_finish_slot(r, request, status, 1);
        }
    }
    plx_api_unlock();
    return rc;
}

int PMPI_Test(MPI_Request *request, int *flag, MPI_Status *status)
{
    static const char fn[] = "MPI_Test";
    plx_api_check_init(fn);
    if (!request || !flag)
        return plx_api_null_arg(NULL, fn, request ? "flag" : "request");
    plx_api_lock();
    struct plx_request *r;
    int rc = plx_api_req(*request, &r, fn, "request");
    if (rc == MPI_SUCCESS) {
        if (!r) {
            *flag = 1;
            plx_status_empty(status);
        } else {
            if (r->cc)
                plx_progress_test_poll();
            *flag = r->cc == 0;
            if (*flag)
                rc = plx_api_finish_slot(r, request, status, 1);
        }
    }
    plx_api_unlock();
    return rc;
}

struct plx_any_arg {
    int n;
    struct plx_request **rs;
    int done;                   /* index found, -1 none */
    int want;                   /* how many complete requests end the wait (any: 1) */
};

static int plx_any_done(void *a)
{
    struct plx_any_arg *p = a;
    int k = 0;
    p->done = -1;
    for (int i = 0; i < p->n; i++)
        if (p->rs[i] && p->rs[i]->cc == 0) {
            if (p->done < 0)
                p->done = i;
            k++;
        }
    return k >= p->want;
}

static int plx_api_anysome(int n, MPI_Request reqs[], int *index, int *outcount, int indices[],
                           MPI_Status *statuses, int blocking, int some, int *flag, const char *fn)
{
    struct plx_request *stack[16];
    struct plx_request **rs = n <= 16 ? stack : plx_malloc((size_t)n * sizeof *rs);
    int rc = plx_api_reqs(n, reqs, rs, fn);
    if (rc)
        goto out;
    int active = 0;
    for (int i = 0; i < n; i++)
        active += rs[i] != NULL;
    if (active == 0) {
        if (flag)
            *flag = 1;
        if (some)
            *outcount = MPI_UNDEFINED;
        else {
            *index = MPI_UNDEFINED;
            plx_status_empty(statuses);
        }
        goto out;
    }
    struct plx_any_arg a = { n, rs, -1, 1 };
    if (blocking)
        plx_progress_wait(plx_any_done, &a);
    else if (!plx_any_done(&a)) {
        plx_progress_test_poll();
        plx_any_done(&a);
    }
    if (flag)
        *flag = a.done >= 0;
    if (!some) {
        *index = a.done >= 0 ? a.done : MPI_UNDEFINED;
        if (a.done >= 0)
            rc = plx_api_finish_slot(rs[a.done], &reqs[a.done], statuses, 1);
        goto out;
    }
    /* MPI_ERROR is written only when the call returns MPI_ERR_IN_STATUS */
    int k = 0, errs = 0;
    for (int i = 0; i < n; i++)
        errs += rs[i] && rs[i]->cc == 0 && rs[i]->st_error != MPI_SUCCESS;
    for (int i = 0; i < n; i++) {
        if (!rs[i] || rs[i]->cc)
            continue;
        MPI_Status *st = statuses == MPI_STATUSES_IGNORE ? MPI_STATUS_IGNORE : &statuses[k];
        int e = plx_api_finish_slot(rs[i], &reqs[i], st, 0);
        if (errs && st != MPI_STATUS_IGNORE)
            st->MPI_ERROR = e;
        indices[k++] = i;
    }
    *outcount = k;
    if (errs)
        rc = plx_api_err(NULL, fn, MPI_ERR_IN_STATUS, "%d of the completed requests failed; see their statuses", errs);
out:
    if (rs != stack)
        free(rs);
    return rc;
}

int PMPI_Waitany(int count, MPI_Request reqs[], int *index, MPI_Status *status)
{
    plx_api_check_init("MPI_Waitany");
    if (!index)
        return plx_api_null_arg(NULL, "MPI_Waitany", "index");
    plx_api_lock();
    int rc = plx_api_anysome(count, reqs, index, NULL, NULL, status, 1, 0, NULL, "MPI_Waitany");
    plx_api_unlock();
    return rc;
}

int PMPI_Testany(int count, MPI_Request reqs[], int *index, int *flag, MPI_Status *status)
{
    plx_api_check_init("MPI_Testany");
    if (!index || !flag)
        return plx_api_null_arg(NULL, "MPI_Testany", index ? "flag" : "index");
    plx_api_lock();
    int rc = plx_api_anysome(count, reqs, index, NULL, NULL, status, 0, 0, flag, "MPI_Testany");
    plx_api_unlock();
    return rc;
}

int PMPI_Waitsome(int incount, MPI_Request reqs[], int *outcount, int indices[], MPI_Status statuses[])
{
    plx_api_check_init("MPI_Waitsome");
    if (!outcount || (incount > 0 && !indices))
        return plx_api_null_arg(NULL, "MPI_Waitsome", outcount ? "array_of_indices" : "outcount");
    plx_api_lock();
    int rc = plx_api_anysome(incount, reqs, NULL, outcount, indices, statuses, 1, 1, NULL, "MPI_Waitsome");
    plx_api_unlock();
    return rc;
}

int PMPI_Testsome(int incount, MPI_Request reqs[], int *outcount, int indices[], MPI_Status statuses[])
{
    plx_api_check_init("MPI_Testsome");
    if (!outcount || (incount > 0 && !indices))
        return plx_api_null_arg(NULL, "MPI_Testsome", outcount ? "array_of_indices" : "outcount");
    plx_api_lock();
    int flag;
    int rc = plx_api_anysome(incount, reqs, NULL, outcount, indices, statuses, 0, 1, &flag, "MPI_Testsome");
    plx_api_unlock();
    return rc;
}

/* Requests complete roughly in order: resume the scan at the first one
 * not yet seen complete (p->done), so a wait costs O(n) in all, not per poll. */
static int plx_all_done(void *a)
{
    struct plx_any_arg *p = a;
    int i = p->done < 0 ? 0 : p->done;
    for (; i < p->n; i++)
        if (p->rs[i] && p->rs[i]->cc) {
            p->done = i;
            return 0;
        }
    p->done = i;
    return 1;
}

static int plx_api_all(int n, MPI_Request reqs[], MPI_Status *statuses, int blocking, int *flag, const char *fn)
{
    struct plx_request *stack[128];
    struct plx_request **rs = n <= 128 ? stack : plx_malloc((size_t)n * sizeof *rs);
    int rc = plx_api_reqs(n, reqs, rs, fn);
    if (rc)
        goto out;
    struct plx_any_arg a = { n, rs, -1, n };
    if (blocking)
        plx_progress_wait(plx_all_done, &a);
    else if (!plx_all_done(&a))
        plx_progress_test_poll();
    if (!plx_all_done(&a)) {
        *flag = 0;
        goto out;
    }
    if (flag)
        *flag = 1;
    /* MPI_ERROR is written only when the call returns MPI_ERR_IN_STATUS */
    int errs = 0;
    for (int i = 0; i < n; i++)
        errs += rs[i] && rs[i]->st_error != MPI_SUCCESS;
    for (int i = 0; i < n; i++) {
        MPI_Status *st = statuses == MPI_STATUSES_IGNORE ? MPI_STATUS_IGNORE : &statuses[i];
        int e = MPI_SUCCESS;
        if (rs[i])
            e = plx_api_finish_slot(rs[i], &reqs[i], st, 0);
        else
            plx_status_empty(st);
        if (errs && st != MPI_STATUS_IGNORE)
            st->MPI_ERROR = e;
    }
    if (errs)
        rc = plx_api_err(NULL, fn, MPI_ERR_IN_STATUS, "%d of %d requests failed; see their statuses", errs, n);
out:
    if (rs != stack)
        free(rs);
    return rc;
}

int PMPI_Waitall(int count, MPI_Request reqs[], MPI_Status statuses[])
{
    plx_api_check_init("MPI_Waitall");
    plx_api_lock();
    int rc = plx_api_all(count, reqs, statuses, 1, NULL, "MPI_Waitall");
    plx_api_unlock();
    return rc;
}

int PMPI_Testall(int count, MPI_Request reqs[], int *flag, MPI_Status statuses[])
{
    plx_api_check_init("MPI_Testall");
    if (!flag)
        return plx_api_null_arg(NULL, "MPI_Testall", "flag");
    plx_api_lock();
    int rc = plx_api_all(count, reqs, statuses, 0, flag, "MPI_Testall");
    plx_api_unlock();
    return rc;
}

static int plx_api_start(MPI_Request *h, const char *fn)
{
    struct plx_request *r = plx_obj_lookup(&plx_request_tab, *h);
    if (!r || !r->persistent)
        return plx_api_err(NULL, fn, MPI_ERR_REQUEST, "request (handle 0x%x) is not a persistent request",
                           (unsigned)*h);
    if (r->active)
        return plx_api_err(r->comm, fn, MPI_ERR_REQUEST, "persistent request is already active");
    r->active = 1;
    if (r->kind == PLX_REQ_COLL) {      /* persistent collective: run its schedule again */
        plx_sched_restart(r->ext);
        return MPI_SUCCESS;
    }
    return r->kind == PLX_REQ_SEND ? plx_api_send_start(r, fn) : plx_api_recv_start(r, fn);
}

int PMPI_Start(MPI_Request *request)
{
    plx_api_check_init("MPI_Start");
    if (!request)
        return plx_api_null_arg(NULL, "MPI_Start", "request");
    plx_api_lock();
    int rc = plx_api_start(request, "MPI_Start");
    plx_api_unlock();
    return rc;
}

int PMPI_Startall(int count, MPI_Request reqs[])
{
    plx_api_check_init("MPI_Startall");
    if (count < 0)
        return plx_api_err(NULL, "MPI_Startall", MPI_ERR_COUNT, "argument 'count' is negative (%d)", count);
    if (count && !reqs)
        return plx_api_null_arg(NULL, "MPI_Startall", "array_of_requests");
    plx_api_lock();
    int rc = MPI_SUCCESS;
    for (int i = 0; i < count && rc == MPI_SUCCESS; i++)
        rc = plx_api_start(&reqs[i], "MPI_Startall");
    plx_api_unlock();
    return rc;
}

int PMPI_Request_free(MPI_Request *request)
{
    static const char fn[] = "MPI_Request_free";
    plx_api_check_init(fn);
    if (!request)
        return plx_api_null_arg(NULL, fn, "request");
    plx_api_lock();
    int rc = MPI_SUCCESS;
    struct plx_request *r = plx_obj_lookup(&plx_request_tab, *request);
    if (!r || r->kind == PLX_REQ_MESSAGE || r->internal) {
        rc = plx_api_err(NULL, fn, MPI_ERR_REQUEST, "argument 'request' is not a valid request (handle 0x%x)",
                         (unsigned)*request);
    } else {
        int busy = r->cc != 0 && (!r->persistent || r->active);
        if (busy)
            r->user_freed = 1;  /* freed when it completes */
        else
            plx_request_free(r);
        *request = MPI_REQUEST_NULL;
    }
    plx_api_unlock();
    return rc;
}

int PMPI_Request_get_status(MPI_Request request, int *flag, MPI_Status *status)
{
    static const char fn[] = "MPI_Request_get_status";
    plx_api_check_init(fn);
    if (!flag)
        return plx_api_null_arg(NULL, fn, "flag");
    plx_api_lock();
    struct plx_request *r;
    int rc = plx_api_req(request, &r, fn, "request");
    if (rc == MPI_SUCCESS) {
        if (!r) {
            *flag = 1;
            plx_status_empty(status);
        } else {
            if (r->cc)
                plx_progress_test_poll();
            *flag = r->cc == 0;
            if (*flag && r->kind == PLX_REQ_GREQ)
                plx_greq_query(r);
            if (*flag)
                plx_request_status(r, status);
        }
    }
    plx_api_unlock();
    return rc;
}

int PMPI_Cancel(MPI_Request *request)
{
    static const char fn[] = "MPI_Cancel";
    plx_api_check_init(fn);
    if (!request)
        return plx_api_null_arg(NULL, fn, "request");
    if (*request == MPI_REQUEST_NULL)   /* as MPI_Request_free, MPICH and Open MPI */
        return plx_api_err(NULL, fn, MPI_ERR_REQUEST, "argument 'request' is MPI_REQUEST_NULL");
    plx_api_lock();
    struct plx_request *r;
    int rc = plx_api_req(*request, &r, fn, "request");
    if (rc == MPI_SUCCESS && !r && *request == MPI_REQUEST_NULL)
        rc = plx_api_err(NULL, fn, MPI_ERR_REQUEST, "argument 'request' is MPI_REQUEST_NULL");
    else if (rc == MPI_SUCCESS && r && r->kind == PLX_REQ_GREQ)
        rc = plx_greq_cancel(r);
    else if (rc == MPI_SUCCESS && r)
        plx_pt2pt_cancel(r);
    plx_api_unlock();
    return rc;
}

int PMPI_Test_cancelled(const MPI_Status *status, int *flag)
{
    if (!status || !flag)
        return plx_api_null_arg(NULL, "MPI_Test_cancelled", status ? "flag" : "status");
    *flag = status->count_hi_and_cancelled & 1;
    return MPI_SUCCESS;
}

static int plx_api_status_dt(const MPI_Status *status, MPI_Datatype dtype, struct plx_datatype **dt_p,
                             const char *fn)
{
    if (!status || status == MPI_STATUS_IGNORE)
        return plx_api_err(NULL, fn, MPI_ERR_ARG, "argument 'status' is NULL or MPI_STATUS_IGNORE");
    struct plx_datatype *dt = plx_dt_lookup(dtype);
    if (!dt)
        return plx_api_err(NULL, fn, MPI_ERR_TYPE, "argument 'datatype' is not a valid datatype (handle 0x%x)",
                           (unsigned)dtype);
    *dt_p = dt;
    return MPI_SUCCESS;
}

/* Whole items of dt in the status's bytes; MPI_UNDEFINED when they do not
 * divide or (limit) the number exceeds what the caller's count holds. */
static int plx_get_count(const MPI_Status *status, MPI_Datatype dtype, MPI_Count *count, MPI_Count limit,
                         const char *fn)
{
    struct plx_datatype *dt = NULL;
    int rc = plx_api_status_dt(status, dtype, &dt, fn);
    if (rc)
        return rc;
    if (!count)
        return plx_api_null_arg(NULL, fn, "count");
    MPI_Count bytes = plx_status_get_bytes(status);
    if (dt->size == 0)
        *count = bytes == 0 ? 0 : MPI_UNDEFINED;
    else if (bytes % dt->size || bytes / dt->size > limit)
        *count = MPI_UNDEFINED;
    else
        *count = bytes / dt->size;
    return MPI_SUCCESS;
}

int PMPI_Get_count(const MPI_Status *status, MPI_Datatype dtype, int *count)
{
    MPI_Count n = 0;
    int rc = plx_get_count(status, dtype, count ? &n : NULL, 0x7fffffff, "MPI_Get_count");
    if (rc == MPI_SUCCESS)
        *count = (int)n;
    return rc;
}

int PMPI_Get_count_c(const MPI_Status *status, MPI_Datatype dtype, MPI_Count *count)
{
    return plx_get_count(status, dtype, count, INT64_MAX, "MPI_Get_count_c");
}

/* Basic elements in `bytes` bytes of a stream of dt (MPI_UNDEFINED when
 * the bytes end inside a basic element); the datatype engine walks the
 * type's typemap for a partial element. */
static MPI_Count plx_elements(MPI_Count bytes, const struct plx_datatype *dt)
{
    return plx_dt_count_elements(dt, bytes);
}

int PMPI_Get_elements_x(const MPI_Status *status, MPI_Datatype dtype, MPI_Count *count)
{
    struct plx_datatype *dt = NULL;
    int rc = plx_api_status_dt(status, dtype, &dt, "MPI_Get_elements_x");
    if (rc)
        return rc;
    if (!count)
        return plx_api_null_arg(NULL, "MPI_Get_elements_x", "count");
    *count = plx_elements(plx_status_get_bytes(status), dt);
    return MPI_SUCCESS;
}

int PMPI_Get_elements_c(const MPI_Status *status, MPI_Datatype dtype, MPI_Count *count)
{
    struct plx_datatype *dt = NULL;
    int rc = plx_api_status_dt(status, dtype, &dt, "MPI_Get_elements_c");
    if (rc)
        return rc;
    if (!count)
        return plx_api_null_arg(NULL, "MPI_Get_elements_c", "count");
    *count = plx_elements(plx_status_get_bytes(status), dt);
    return MPI_SUCCESS;
}

int PMPI_Get_elements(const MPI_Status *status, MPI_Datatype dtype, int *count)
{
    MPI_Count c;
    int rc = PMPI_Get_elements_x(status, dtype, &c);
    if (rc == MPI_SUCCESS)
        *count = c > 0x7fffffff ? MPI_UNDEFINED : (int)c;
    return rc;
}

int PMPI_Status_set_elements_x(MPI_Status *status, MPI_Datatype dtype, MPI_Count count)
{
    struct plx_datatype *dt = NULL;
    int rc = plx_api_status_dt(status, dtype, &dt, "MPI_Status_set_elements_x");
    if (rc)
        return rc;
    if (count < 0)
        return plx_api_err(NULL, "MPI_Status_set_elements_x", MPI_ERR_COUNT, "argument 'count' is negative");
    plx_status_set_bytes(status, plx_dt_elements_bytes(dt, count));
    return MPI_SUCCESS;
}

int PMPI_Status_set_elements(MPI_Status *status, MPI_Datatype dtype, int count)
{
    return PMPI_Status_set_elements_x(status, dtype, count);
}

int PMPI_Status_set_cancelled(MPI_Status *status, int flag)
{
    if (!status)
        return plx_api_null_arg(NULL, "MPI_Status_set_cancelled", "status");
    status->count_hi_and_cancelled = (status->count_hi_and_cancelled & ~1) | (flag ? 1 : 0);
    return MPI_SUCCESS;
}

/* --- MPI 4.1: MPI_Request_get_status_any / _all / _some ------------------
 * The Testany/Testall/Testsome of MPI_Request_get_status: one progress poll,
 * then the completed requests' statuses, but no request is freed or made
 * inactive and no handle is changed. Null and inactive requests count as
 * "no active request" as in the Test calls. */

#pragma weak MPI_Request_get_status_any = PMPI_Request_get_status_any
#pragma weak MPI_Request_get_status_all = PMPI_Request_get_status_all
#pragma weak MPI_Request_get_status_some = PMPI_Request_get_status_some

/* The requests decoded, after one progress poll if any is pending; NULL and
 * the error raised when an argument is bad. */
static struct plx_request **plx_req_get_status_prep(int n, const MPI_Request reqs[], const char *fn, int *rc_p)
{
    struct plx_request **rs = plx_malloc(((size_t)(n > 0 ? n : 0) + 1) * sizeof *rs);
    if ((*rc_p = plx_api_reqs(n, reqs, rs, fn))) {
        free(rs);
        return NULL;
    }
    for (int i = 0; i < n; i++)
        if (rs[i] && rs[i]->cc) {
            plx_progress_poll();
            break;
        }
    return rs;
}

static void plx_req_peek_status(struct plx_request *r, MPI_Status *st)
{
    if (r->kind == PLX_REQ_GREQ)
        plx_greq_query(r);
    plx_request_status(r, st);
}

int PMPI_Request_get_status_any(int count, const MPI_Request array_of_requests[], int *index, int *flag,
                                MPI_Status *status)
{
    static const char fn[] = "MPI_Request_get_status_any";
    plx_api_check_init(fn);
    if (!index || !flag)
        return plx_api_null_arg(NULL, fn, index ? "flag" : "index");
    plx_api_lock();
    int rc;
    struct plx_request **rs = plx_req_get_status_prep(count, array_of_requests, fn, &rc);
    if (rs) {
        int active = 0;
        *index = MPI_UNDEFINED;
        *flag = 0;
        for (int i = 0; i < count && !*flag; i++) {
            if (!rs[i])
                continue;
            active = 1;
            if (rs[i]->cc == 0) {
                *index = i;
                *flag = 1;
                plx_req_peek_status(rs[i], status);
            }
        }
        if (!active) {
            *flag = 1;
            plx_status_empty(status);
        }
        free(rs);
    }
    plx_api_unlock();
    return rc;
}

int PMPI_Request_get_status_all(int count, const MPI_Request array_of_requests[], int *flag,
                                MPI_Status array_of_statuses[])
{
    static const char fn[] = "MPI_Request_get_status_all";
    plx_api_check_init(fn);
    if (!flag)
        return plx_api_null_arg(NULL, fn, "flag");
    plx_api_lock();
    int rc;
    struct plx_request **rs = plx_req_get_status_prep(count, array_of_requests, fn, &rc);
    if (rs) {
        *flag = 1;
        for (int i = 0; i < count; i++)
            if (rs[i] && rs[i]->cc)
                *flag = 0;
        int errs = 0;
        for (int i = 0; *flag && i < count; i++) {
            MPI_Status *st = array_of_statuses == MPI_STATUSES_IGNORE ? MPI_STATUS_IGNORE : &array_of_statuses[i];
            if (!rs[i]) {
                plx_status_empty(st);
                continue;
            }
            plx_req_peek_status(rs[i], st);
            errs += rs[i]->st_error != MPI_SUCCESS;
            if (st != MPI_STATUS_IGNORE)
                st->MPI_ERROR = rs[i]->st_error;
        }
        free(rs);
        if (errs)
            rc = plx_api_err(NULL, fn, MPI_ERR_IN_STATUS, "%d of %d requests failed; see their statuses", errs,
                             count);
    }
    plx_api_unlock();
    return rc;
}

int PMPI_Request_get_status_some(int incount, const MPI_Request array_of_requests[], int *outcount,
                                 int array_of_indices[], MPI_Status array_of_statuses[])
{
    static const char fn[] = "MPI_Request_get_status_some";
    plx_api_check_init(fn);
    if (!outcount)
        return plx_api_null_arg(NULL, fn, "outcount");
    if (incount > 0 && !array_of_indices)
        return plx_api_null_arg(NULL, fn, "array_of_indices");
    plx_api_lock();
    int rc;
    struct plx_request **rs = plx_req_get_status_prep(incount, array_of_requests, fn, &rc);
    if (rs) {
        int active = 0, n = 0, errs = 0;
        for (int i = 0; i < incount; i++) {
            if (!rs[i])
                continue;
            active = 1;
            if (rs[i]->cc)
                continue;
            MPI_Status *st = array_of_statuses == MPI_STATUSES_IGNORE ? MPI_STATUS_IGNORE : &array_of_statuses[n];
            plx_req_peek_status(rs[i], st);
            errs += rs[i]->st_error != MPI_SUCCESS;
            if (st != MPI_STATUS_IGNORE)
                st->MPI_ERROR = rs[i]->st_error;
            array_of_indices[n++] = i;
        }
        *outcount = active ? n : MPI_UNDEFINED;
        free(rs);
        if (errs)
            rc = plx_api_err(NULL, fn, MPI_ERR_IN_STATUS, "%d of the completed requests failed; see their statuses",
                             errs);
    }
    plx_api_unlock();
    return rc;
}

/* MPI 4.0's large-count form (MPICH 4.0.3+ has it; the 4.0.2 header did not) */
#pragma weak MPI_Status_set_elements_c = PMPI_Status_set_elements_c
int PMPI_Status_set_elements_c(MPI_Status *status, MPI_Datatype dtype, MPI_Count count)
{
    static const char fn[] = "MPI_Status_set_elements_c";
    struct plx_datatype *dt = NULL;
    int rc = plx_api_status_dt(status, dtype, &dt, fn);
    if (rc)
        return rc;
    if (count < 0)
        return plx_api_err(NULL, fn, MPI_ERR_COUNT, "argument 'count' is negative (%lld)", (long long)count);
    plx_status_set_bytes(status, plx_dt_elements_bytes(dt, count));
    return MPI_SUCCESS;
}
