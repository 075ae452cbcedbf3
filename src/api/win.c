/*
 * One-sided communication entry points (MPI_Win_*, MPI_Put, MPI_Get, the
 * accumulates, MPI_Alloc_mem): argument checks, handle decoding, epochs'
 * rules, error classes and messages, window error handlers. The work is in
 * src/rma/ (see rma.h). Window attributes and keyvals are in api/attr.c.
 *
 * Errors on a window go to its error handler (MPI_ERRORS_ARE_FATAL until
 * the program sets another, MPI 3.1 section 8.3); errors of the creation
 * calls go to the communicator's, and of calls given an invalid window to
 * MPI_COMM_WORLD's. Messages name the call, the rank, and for operations
 * the target and displacement: "MPI_Put(rank 2): target 3, displacement
 * 120: bytes [480, 488) are past the target's window of 400 bytes".
 */
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "api/api.h"
#include "core/datatype.h"
#include "core/op.h"
#include "core/request.h"
#include "pm/pm.h"
#include "progress/progress.h"
#include "rma/rma.h"

/* ---- errors ------------------------------------------------------------------------ */

static int plx_win_invoke(struct plx_win *w, int code)
{
    struct plx_errhandler *eh = w->errhandler;
    switch (eh->kind) {
    case PLX_ERRH_RETURN:
        return code;
    case PLX_ERRH_USER_WIN:
    case PLX_ERRH_USER_COMM: {
        MPI_Win h = w->obj.handle;
        int c = code;
        int held = plx_lock_held();
        if (held)
            plx_api_unlock();
        if (eh->kind == PLX_ERRH_USER_WIN)
            eh->win_fn(&h, &c);
        else
            eh->comm_fn(&h, &c);
        if (held)
            plx_api_lock();
        return code;
    }
    default: {
        char msg[MPI_MAX_ERROR_STRING];
        plx_err_string(code, msg, sizeof msg);
        char line[MPI_MAX_ERROR_STRING + MPI_MAX_OBJECT_NAME + 64];
        snprintf(line, sizeof line, "rank %d: fatal error on window %s: %s", plx_rt.world_rank,
                 w->name[0] ? w->name : "(unnamed)", msg);
        plx_pm_abort(plx_err_class(code) > 0 ? plx_err_class(code) : 1, line);
    }
    }
}

/* Raises on w an error naming the call and the rank. */
static int __attribute__((format(printf, 4, 5), cold))
plx_win_err(struct plx_win *w, const char *fn, int cls, const char *fmt, ...)
{
    char text[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    int code = plx_err_make(cls, "%s(rank %d): %s", fn, plx_rt.world_rank, text);
    return plx_win_invoke(w, code);
}

static int plx_win_arg(MPI_Win h, struct plx_win **w_p, const char *fn)
{
    plx_api_check_init(fn);
    *w_p = plx_win_lookup(h);
    if (plx_unlikely(!*w_p))
        return plx_api_err(NULL, fn, MPI_ERR_WIN, "argument 'win' is %s window (handle 0x%x)",
                           h == MPI_WIN_NULL ? "the null" : "an invalid", (unsigned)h);
    return MPI_SUCCESS;
}

/* An error a target answered for an earlier operation, raised by the next synchronisation call. */
static int plx_win_deferred(struct plx_win *w, const char *fn)
{
    int cls = w->err_code;
    if (!cls)
        return MPI_SUCCESS;
    w->err_code = 0;
    return plx_win_err(w, fn, cls,
                       "an earlier operation of this window failed at its target (%s)",
                       cls == MPI_ERR_RMA_RANGE ? "outside the memory the target exposes: nothing was written"
                                                : "refused by the target");
}

static int plx_win_info_arg(struct plx_comm *c, MPI_Info h, struct plx_info **i_p, const char *fn)
{
    *i_p = NULL;
    if (h == MPI_INFO_NULL)
        return MPI_SUCCESS;
    return plx_api_info(c, h, i_p, fn, "info");
}

/* ---- the frame of a call on a window ------------------------------------------------------------ */

/* A call's work once its window is known: MPI_SUCCESS, or an error raised on w. */
typedef int (*plx_win_body)(struct plx_win *w, const char *fn, void *arg);

/* Every call given a window: the library lock, the window decoded (MPI_ERR_WIN, raised on
 * MPI_COMM_WORLD's handler), then the call's own work. */
static int plx_win_call(MPI_Win win, const char *fn, plx_win_body body, void *arg)
{
    struct plx_win *w;
    plx_api_lock();
    int rc = plx_win_arg(win, &w, fn);
    if (rc == MPI_SUCCESS)
        rc = body(w, fn, arg);
    plx_api_unlock();
    return rc;
}

/* An output (or required input) argument that must not be NULL: MPI_ERR_ARG on w. */
static int plx_win_ptr_arg(struct plx_win *w, const char *fn, const void *p, const char *name)
{
    if (p)
        return MPI_SUCCESS;
    return plx_win_err(w, fn, MPI_ERR_ARG, "argument '%s' is NULL", name);
}

/* A rank of the window (MPI_PROC_NULL not included): MPI_ERR_RANK on w. */
static int plx_win_target_arg(struct plx_win *w, int rank, const char *fn)
{
    if (rank < 0 || rank >= w->comm->size)
        return plx_win_err(w, fn, MPI_ERR_RANK, "argument '%s' is %d; the window has %d ranks",
                           !strncmp(fn, "MPI_Win_", 8) ? "rank" : "target_rank", rank, w->comm->size);
    return MPI_SUCCESS;
}

/* attach and detach take windows of MPI_Win_create_dynamic only */
static int plx_win_dynamic_arg(struct plx_win *w, const char *fn)
{
    if (w->flavor == MPI_WIN_FLAVOR_DYNAMIC)
        return MPI_SUCCESS;
    return plx_win_err(w, fn, MPI_ERR_RMA_FLAVOR, "the window was not made by MPI_Win_create_dynamic");
}

static const char *plx_win_epoch_name(const struct plx_win *w)
{
    return w->lockall ? "an MPI_Win_lock_all epoch" : w->nlocked ? "an MPI_Win_lock epoch"
                      : w->start_ranks                        ? "an MPI_Win_start epoch"
                      : w->post_ranks                         ? "an MPI_Win_post epoch"
                                                              : "no epoch";
}

/* ---- memory ------------------------------------------------------------------------------ */

#pragma weak MPI_Alloc_mem = PMPI_Alloc_mem
int PMPI_Alloc_mem(MPI_Aint size, MPI_Info info, void *baseptr)
{
    static const char fn[] = "MPI_Alloc_mem";
    int rc = MPI_SUCCESS;
    plx_api_lock();
    plx_api_check_init(fn);
    struct plx_info *inf;
    if ((rc = plx_win_info_arg(NULL, info, &inf, fn)))
        goto out;
    if (size < 0) {
        rc = plx_api_err(NULL, fn, MPI_ERR_SIZE, "argument 'size' is negative (%ld)", (long)size);
        goto out;
    }
    if (!baseptr) {
        rc = plx_api_null_arg(NULL, fn, "baseptr");
        goto out;
    }
    void *p;
    if (posix_memalign(&p, 64, size ? (size_t)size : 1) != 0) {
        rc = plx_api_err(NULL, fn, MPI_ERR_NO_MEM, "cannot allocate %ld bytes", (long)size);
        goto out;
    }
    *(void **)baseptr = p;
out:
    plx_api_unlock();
    return rc;
}

#pragma weak MPI_Free_mem = PMPI_Free_mem
int PMPI_Free_mem(void *base)
{
    plx_api_check_init("MPI_Free_mem");
    free(base);
    return MPI_SUCCESS;
}

/* ---- creation and free ------------------------------------------------------------------------ */

static int plx_win_make(int flavor, void *base, MPI_Aint size, MPI_Aint disp_unit, MPI_Info info, MPI_Comm comm,
                        void *baseptr, MPI_Win *win, const char *fn)
{
    struct plx_comm *c;
    int rc = MPI_SUCCESS;
    plx_api_lock();
    plx_api_check_init(fn);
    if ((rc = plx_api_intracomm(comm, &c, fn)))
        goto out;
    struct plx_info *inf;
    if ((rc = plx_win_info_arg(c, info, &inf, fn)))
        goto out;
    if (!win) {
        rc = plx_api_null_arg(c, fn, "win");
        goto out;
    }
    if (size < 0) {
        rc = plx_api_err(c, fn, MPI_ERR_SIZE, "argument 'size' is negative (%ld)", (long)size);
        goto out;
    }
    if (disp_unit <= 0) {
        rc = plx_api_err(c, fn, MPI_ERR_DISP, "argument 'disp_unit' must be positive (got %ld)", (long)disp_unit);
        goto out;
    }
    if (disp_unit > INT_MAX) {  /* `_c` forms: MPI_WIN_DISP_UNIT is an int attribute */
        rc = plx_api_err(c, fn, MPI_ERR_DISP,
                         "argument 'disp_unit' (%ld) is above %d, the largest the window's MPI_WIN_DISP_UNIT "
                         "attribute (an int) can report",
                         (long)disp_unit, INT_MAX);
        goto out;
    }
    if (flavor != MPI_WIN_FLAVOR_CREATE && flavor != MPI_WIN_FLAVOR_DYNAMIC && !baseptr) {
        rc = plx_api_null_arg(c, fn, "baseptr");
        goto out;
    }
    if (flavor == MPI_WIN_FLAVOR_CREATE && size > 0 && !base) {
        rc = plx_api_err(c, fn, MPI_ERR_BASE, "argument 'base' is NULL for a window of %ld bytes", (long)size);
        goto out;
    }
    struct plx_win *w;
    void *b = NULL;
    const char *what = "";
    int cls = plx_win_create(c, flavor, base, size, (int)disp_unit, inf, &w, &b, &what);
    if (cls != MPI_SUCCESS) {
        rc = plx_api_err(c, fn, cls, "%s", what);
        goto out;
    }
    if (baseptr)
        *(void **)baseptr = b;
    *win = w->obj.handle;
out:
    plx_api_unlock();
    return rc;
}

#pragma weak MPI_Win_create = PMPI_Win_create
int PMPI_Win_create(void *base, MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, MPI_Win *win)
{
    return plx_win_make(MPI_WIN_FLAVOR_CREATE, base, size, disp_unit, info, comm, NULL, win, "MPI_Win_create");
}

#pragma weak MPI_Win_allocate = PMPI_Win_allocate
int PMPI_Win_allocate(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, void *baseptr, MPI_Win *win)
{
    return plx_win_make(MPI_WIN_FLAVOR_ALLOCATE, NULL, size, disp_unit, info, comm, baseptr, win,
                        "MPI_Win_allocate");
}

#pragma weak MPI_Win_allocate_shared = PMPI_Win_allocate_shared
int PMPI_Win_allocate_shared(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, void *baseptr,
                             MPI_Win *win)
{
    return plx_win_make(MPI_WIN_FLAVOR_SHARED, NULL, size, disp_unit, info, comm, baseptr, win,
                        "MPI_Win_allocate_shared");
}

#pragma weak MPI_Win_create_dynamic = PMPI_Win_create_dynamic
int PMPI_Win_create_dynamic(MPI_Info info, MPI_Comm comm, MPI_Win *win)
{
    return plx_win_make(MPI_WIN_FLAVOR_DYNAMIC, NULL, 0, 1, info, comm, NULL, win, "MPI_Win_create_dynamic");
}

/* MPI_Win_shared_query and its `_c` form (disp_unit as MPI_Aint) */
struct plx_win_query_args {
    int rank;
    MPI_Aint *size;
    int *disp_unit;
    MPI_Aint *disp_unit_c;
    void *baseptr;
};

static int plx_win_query_body(struct plx_win *w, const char *fn, void *arg)
{
    struct plx_win_query_args *q = arg;
    int rc;
    if (!w->direct && w->flavor == MPI_WIN_FLAVOR_DYNAMIC)
        return plx_win_err(w, fn, MPI_ERR_RMA_FLAVOR,
                           "the window has no memory to query (flavor dynamic): only windows of "
                           "MPI_Win_allocate_shared, MPI_Win_allocate or MPI_Win_create can be queried");
    if (q->rank != MPI_PROC_NULL && (rc = plx_win_target_arg(w, q->rank, fn)))
        return rc;
    if ((rc = plx_win_ptr_arg(w, fn, q->size, "size")) ||
        (rc = plx_win_ptr_arg(w, fn, q->disp_unit ? (void *)q->disp_unit : (void *)q->disp_unit_c, "disp_unit")) ||
        (rc = plx_win_ptr_arg(w, fn, q->baseptr, "baseptr")))
        return rc;
    int r = q->rank;
    if (!w->direct) {
        /* MPI 4.1: windows of MPI_Win_create/_allocate whose memory is not
         * shared may be queried too. Only the caller's own memory is reachable
         * by load/store here: any other rank (and MPI_PROC_NULL) gives size 0
         * and a NULL baseptr. */
        int own = r == w->comm->rank;
        *q->size = own ? w->size : 0;
        if (q->disp_unit)
            *q->disp_unit = own ? w->disp_unit : 1;
        else
            *q->disp_unit_c = own ? w->disp_unit : 1;
        *(void **)q->baseptr = own ? w->base : NULL;
        return MPI_SUCCESS;
    }
    if (r == MPI_PROC_NULL) {   /* the first rank with memory */
        r = 0;
        while (r < w->comm->size - 1 && w->t[r].size == 0)
            r++;
    }
    *q->size = (MPI_Aint)w->t[r].size;
    if (q->disp_unit)
        *q->disp_unit = w->t[r].disp_unit;
    else
        *q->disp_unit_c = w->t[r].disp_unit;
    *(void **)q->baseptr = w->t[r].mem;
    return MPI_SUCCESS;
}

#pragma weak MPI_Win_shared_query = PMPI_Win_shared_query
int PMPI_Win_shared_query(MPI_Win win, int rank, MPI_Aint *size, int *disp_unit, void *baseptr)
{
    struct plx_win_query_args q = { rank, size, disp_unit, NULL, baseptr };
    return plx_win_call(win, "MPI_Win_shared_query", plx_win_query_body, &q);
}

/* MPI 4.0 large-count forms of the creation calls and the query */

#pragma weak MPI_Win_create_c = PMPI_Win_create_c
int PMPI_Win_create_c(void *base, MPI_Aint size, MPI_Aint disp_unit, MPI_Info info, MPI_Comm comm, MPI_Win *win)
{
    return plx_win_make(MPI_WIN_FLAVOR_CREATE, base, size, disp_unit, info, comm, NULL, win, "MPI_Win_create_c");
}

#pragma weak MPI_Win_allocate_c = PMPI_Win_allocate_c
int PMPI_Win_allocate_c(MPI_Aint size, MPI_Aint disp_unit, MPI_Info info, MPI_Comm comm, void *baseptr,
                        MPI_Win *win)
{
    return plx_win_make(MPI_WIN_FLAVOR_ALLOCATE, NULL, size, disp_unit, info, comm, baseptr, win,
                        "MPI_Win_allocate_c");
}

#pragma weak MPI_Win_allocate_shared_c = PMPI_Win_allocate_shared_c
int PMPI_Win_allocate_shared_c(MPI_Aint size, MPI_Aint disp_unit, MPI_Info info, MPI_Comm comm, void *baseptr,
                               MPI_Win *win)
{
    return plx_win_make(MPI_WIN_FLAVOR_SHARED, NULL, size, disp_unit, info, comm, baseptr, win,
                        "MPI_Win_allocate_shared_c");
}

#pragma weak MPI_Win_shared_query_c = PMPI_Win_shared_query_c
int PMPI_Win_shared_query_c(MPI_Win win, int rank, MPI_Aint *size, MPI_Aint *disp_unit, void *baseptr)
{
    struct plx_win_query_args q = { rank, size, NULL, disp_unit, baseptr };
    return plx_win_call(win, "MPI_Win_shared_query_c", plx_win_query_body, &q);
}

struct plx_win_region_args {
    void *base;
    MPI_Aint size;
};

static int plx_win_attach_body(struct plx_win *w, const char *fn, void *arg)
{
    struct plx_win_region_args *a = arg;
    int rc = plx_win_dynamic_arg(w, fn);
    if (rc)
        return rc;
    if (a->size < 0 || (a->size > 0 && !a->base))
        return plx_win_err(w, fn, a->size < 0 ? MPI_ERR_SIZE : MPI_ERR_BASE, "region %p of %ld bytes is not valid",
                           a->base, (long)a->size);
    const char *what = "";
    int cls = plx_win_attach(w, a->base, a->size, &what);
    if (cls)
        return plx_win_err(w, fn, cls, "region %p of %ld bytes: %s", a->base, (long)a->size, what);
    return MPI_SUCCESS;
}

#pragma weak MPI_Win_attach = PMPI_Win_attach
int PMPI_Win_attach(MPI_Win win, void *base, MPI_Aint size)
{
    struct plx_win_region_args a = { base, size };
    return plx_win_call(win, "MPI_Win_attach", plx_win_attach_body, &a);
}

static int plx_win_detach_body(struct plx_win *w, const char *fn, void *arg)
{
    int rc = plx_win_dynamic_arg(w, fn);
    if (rc)
        return rc;
    if (plx_win_detach(w, arg))
        return plx_win_err(w, fn, MPI_ERR_RMA_ATTACH, "no region attached at %p", arg);
    return MPI_SUCCESS;
}

#pragma weak MPI_Win_detach = PMPI_Win_detach
int PMPI_Win_detach(MPI_Win win, const void *base)
{
    return plx_win_call(win, "MPI_Win_detach", plx_win_detach_body, (void *)(uintptr_t)base);
}

#pragma weak MPI_Win_free = PMPI_Win_free
int PMPI_Win_free(MPI_Win *win)
{
    static const char fn[] = "MPI_Win_free";
    struct plx_win *w;
    plx_api_lock();
    plx_api_check_init(fn);
    int rc;
    if (!win) {
        rc = plx_api_null_arg(NULL, fn, "win");
        goto out;
    }
    if ((rc = plx_win_arg(*win, &w, fn)))
        goto out;
    if (w->nlocked || w->lockall || w->start_ranks || w->post_ranks) {
        rc = plx_win_err(w, fn, MPI_ERR_RMA_SYNC,
                         "an epoch is still open (%s): close it before freeing the window",
                         w->lockall ? "MPI_Win_lock_all" : w->nlocked ? "MPI_Win_lock" : w->start_ranks
                                                           ? "MPI_Win_start"
                                                           : "MPI_Win_post");
        goto out;
    }
    rc = plx_win_free(w);
    *win = MPI_WIN_NULL;
out:
    plx_api_unlock();
    return rc;
}

/* ---- names, group, info, error handlers ----------------------------------------------------------- */

static int plx_win_get_group_body(struct plx_win *w, const char *fn, void *arg)
{
    int rc = plx_win_ptr_arg(w, fn, arg, "group");
    if (rc == MPI_SUCCESS) {
        plx_group_addref(w->comm->group);
        *(MPI_Group *)arg = w->comm->group->obj.handle;
    }
    return rc;
}

#pragma weak MPI_Win_get_group = PMPI_Win_get_group
int PMPI_Win_get_group(MPI_Win win, MPI_Group *group)
{
    return plx_win_call(win, "MPI_Win_get_group", plx_win_get_group_body, group);
}

static int plx_win_set_name_body(struct plx_win *w, const char *fn, void *arg)
{
    int rc = plx_win_ptr_arg(w, fn, arg, "win_name");
    if (rc == MPI_SUCCESS)
        snprintf(w->name, sizeof w->name, "%s", (const char *)arg);
    return rc;
}

#pragma weak MPI_Win_set_name = PMPI_Win_set_name
int PMPI_Win_set_name(MPI_Win win, const char *win_name)
{
    return plx_win_call(win, "MPI_Win_set_name", plx_win_set_name_body, (void *)(uintptr_t)win_name);
}

struct plx_win_name_args {
    char *name;
    int *len;
};

static int plx_win_get_name_body(struct plx_win *w, const char *fn, void *arg)
{
    struct plx_win_name_args *a = arg;
    int rc;
    if ((rc = plx_win_ptr_arg(w, fn, a->name, "win_name")) || (rc = plx_win_ptr_arg(w, fn, a->len, "resultlen")))
        return rc;
    snprintf(a->name, MPI_MAX_OBJECT_NAME, "%s", w->name);
    *a->len = (int)strlen(a->name);
    return MPI_SUCCESS;
}

#pragma weak MPI_Win_get_name = PMPI_Win_get_name
int PMPI_Win_get_name(MPI_Win win, char *win_name, int *resultlen)
{
    if (win == MPI_WIN_NULL && win_name && resultlen) {       /* MPI 4.1: null handles have names */
        strcpy(win_name, "MPI_WIN_NULL");
        *resultlen = (int)strlen(win_name);
        return MPI_SUCCESS;
    }
    struct plx_win_name_args a = { win_name, resultlen };
    return plx_win_call(win, "MPI_Win_get_name", plx_win_get_name_body, &a);
}

static int plx_win_set_info_body(struct plx_win *w, const char *fn, void *arg)
{
    struct plx_info *inf;
    int rc = plx_win_info_arg(NULL, *(MPI_Info *)arg, &inf, fn);
    if (rc == MPI_SUCCESS)
        plx_win_set_info(w, inf);
    return rc;
}

#pragma weak MPI_Win_set_info = PMPI_Win_set_info
int PMPI_Win_set_info(MPI_Win win, MPI_Info info)
{
    return plx_win_call(win, "MPI_Win_set_info", plx_win_set_info_body, &info);
}

static int plx_win_get_info_body(struct plx_win *w, const char *fn, void *arg)
{
    int rc = plx_win_ptr_arg(w, fn, arg, "info_used");
    if (rc == MPI_SUCCESS)
        *(MPI_Info *)arg = plx_info_dup(w->info)->obj.handle;
    return rc;
}

#pragma weak MPI_Win_get_info = PMPI_Win_get_info
int PMPI_Win_get_info(MPI_Win win, MPI_Info *info_used)
{
    return plx_win_call(win, "MPI_Win_get_info", plx_win_get_info_body, info_used);
}

#pragma weak MPI_Win_create_errhandler = PMPI_Win_create_errhandler
int PMPI_Win_create_errhandler(MPI_Win_errhandler_function *win_errhandler_fn, MPI_Errhandler *errhandler)
{
    static const char fn[] = "MPI_Win_create_errhandler";
    int rc = MPI_SUCCESS;
    plx_api_lock();
    plx_api_check_init(fn);
    if (!win_errhandler_fn || !errhandler) {
        rc = plx_api_null_arg(NULL, fn, !win_errhandler_fn ? "win_errhandler_fn" : "errhandler");
        goto out;
    }
    struct plx_errhandler *e = plx_errhandler_new_win(win_errhandler_fn);
    if (!e) {
        rc = plx_api_err(NULL, fn, MPI_ERR_NO_MEM, "cannot allocate an error handler");
        goto out;
    }
    *errhandler = e->obj.handle;
out:
    plx_api_unlock();
    return rc;
}

static int plx_win_set_errhandler_body(struct plx_win *w, const char *fn, void *arg)
{
    MPI_Errhandler errhandler = *(MPI_Errhandler *)arg;
    struct plx_errhandler *e = plx_obj_lookup(&plx_errhandler_tab, errhandler);
    if (!e)
        return plx_win_err(w, fn, MPI_ERR_ARG, "argument 'errhandler' is %s error handler (handle 0x%x)",
                           errhandler == MPI_ERRHANDLER_NULL ? "the null" : "an invalid", (unsigned)errhandler);
    if (e->kind == PLX_ERRH_USER_FILE)
        return plx_win_err(w, fn, MPI_ERR_ARG, "argument 'errhandler' (handle 0x%x) is a file error handler",
                           (unsigned)errhandler);
    plx_errhandler_addref(e);
    plx_errhandler_release(w->errhandler);
    w->errhandler = e;
    return MPI_SUCCESS;
}

#pragma weak MPI_Win_set_errhandler = PMPI_Win_set_errhandler
int PMPI_Win_set_errhandler(MPI_Win win, MPI_Errhandler errhandler)
{
    return plx_win_call(win, "MPI_Win_set_errhandler", plx_win_set_errhandler_body, &errhandler);
}

static int plx_win_get_errhandler_body(struct plx_win *w, const char *fn, void *arg)
{
    int rc = plx_win_ptr_arg(w, fn, arg, "errhandler");
    if (rc == MPI_SUCCESS) {
        plx_errhandler_addref(w->errhandler);
        *(MPI_Errhandler *)arg = w->errhandler->obj.handle;
    }
    return rc;
}

#pragma weak MPI_Win_get_errhandler = PMPI_Win_get_errhandler
int PMPI_Win_get_errhandler(MPI_Win win, MPI_Errhandler *errhandler)
{
    return plx_win_call(win, "MPI_Win_get_errhandler", plx_win_get_errhandler_body, errhandler);
}

/* the call succeeds whatever the handler does with the code */
static int plx_win_call_errhandler_body(struct plx_win *w, const char *fn, void *arg)
{
    (void)fn;
    plx_win_invoke(w, *(int *)arg);
    return MPI_SUCCESS;
}

#pragma weak MPI_Win_call_errhandler = PMPI_Win_call_errhandler
int PMPI_Win_call_errhandler(MPI_Win win, int errorcode)
{
    return plx_win_call(win, "MPI_Win_call_errhandler", plx_win_call_errhandler_body, &errorcode);
}

/* ---- operations --------------------------------------------------------------------------------------- */

static const char *plx_win_kind_verb(int kind)
{
    return kind == PLX_RMA_K_GET ? "read" : kind == PLX_RMA_K_PUT ? "written" : "updated";
}

static int plx_win_dtype(struct plx_win *w, MPI_Datatype h, struct plx_datatype **dt_p, const char *fn,
                         const char *arg)
{
    struct plx_datatype *dt = plx_dt_lookup(h);
    if (!dt)
        return plx_win_err(w, fn, MPI_ERR_TYPE, "argument '%s' is %s datatype (handle 0x%x)", arg,
                           h == MPI_DATATYPE_NULL ? "the null" : "an invalid", (unsigned)h);
    if (!dt->committed && !plx_dt_is_builtin(dt))
        return plx_win_err(w, fn, MPI_ERR_TYPE, "argument '%s' (handle 0x%x) is not committed", arg, (unsigned)h);
    *dt_p = dt;
    return MPI_SUCCESS;
}

/* Checks and issues an operation; *done_p = 1 when it was a no-op (MPI_PROC_NULL). */
static int plx_win_op(MPI_Win win, struct plx_rma_args *a, MPI_Datatype ot, MPI_Datatype rt, MPI_Datatype tt,
                      MPI_Request *request, const char *fn)
{
    struct plx_win *w;
    plx_api_lock();
    int rc = plx_win_arg(win, &w, fn);
    if (rc)
        goto out;
    int kind = a->kind;
    int acc = kind == PLX_RMA_K_ACC || kind == PLX_RMA_K_GACC || kind == PLX_RMA_K_CAS;
    if (request && !(rc = 0))
        *request = MPI_REQUEST_NULL;
    if (a->target == MPI_PROC_NULL) {
        if (request) {
            struct plx_request *r = plx_request_new(PLX_REQ_RMA, w->comm);
            r->cc = 0;
            *request = r->obj.handle;
        }
        goto out;
    }
    if ((rc = plx_win_target_arg(w, a->target, fn)))
        goto out;
    if (a->ocount < 0 || a->tcount < 0 || a->rcount < 0) {
        rc = plx_win_err(w, fn, MPI_ERR_COUNT, "target %d: argument '%s' is negative (%lld)", a->target,
                         a->tcount < 0 ? "target_count" : a->ocount < 0 ? "origin_count" : "result_count",
                         (long long)(a->tcount < 0 ? a->tcount : a->ocount < 0 ? a->ocount : a->rcount));
        goto out;
    }
    if (ot != MPI_DATATYPE_NULL && (rc = plx_win_dtype(w, ot, &a->odt, fn, "origin_datatype")))
        goto out;
    if (rt != MPI_DATATYPE_NULL && (rc = plx_win_dtype(w, rt, &a->rdt, fn, "result_datatype")))
        goto out;
    if ((rc = plx_win_dtype(w, tt, &a->tdt, fn, "target_datatype")))
        goto out;
    /* a `_c` count so large that its bytes overflow (the window check below needs them) */
    {
        const struct { MPI_Aint n; const struct plx_datatype *dt; const char *arg; } cnt[3] = {
            { a->tcount, a->tdt, "target_count" }, { a->ocount, a->odt, "origin_count" },
            { a->rcount, a->rdt, "result_count" } };
        for (int i = 0; i < 3; i++) {
            MPI_Aint bytes;
            if (cnt[i].dt && __builtin_mul_overflow(cnt[i].n, (MPI_Aint)cnt[i].dt->size, &bytes)) {
                rc = plx_win_err(w, fn, MPI_ERR_COUNT,
                                 "target %d: argument '%s' (%lld) times its datatype's size (%ld) overflows "
                                 "the address space",
                                 a->target, cnt[i].arg, (long long)cnt[i].n, (long)cnt[i].dt->size);
                goto out;
            }
        }
    }
    /* epoch */
    int t = a->target;
    int in_epoch = w->fence || w->lockall || w->lock[t];
    for (int i = 0; !in_epoch && w->start_ranks && i < w->nstart; i++)
        in_epoch = w->start_ranks[i] == t;
    if (!in_epoch) {
        rc = plx_win_err(w, fn, MPI_ERR_RMA_SYNC,
                         "target %d, displacement %ld: no access epoch to this target is open (call MPI_Win_fence, "
                         "MPI_Win_start, MPI_Win_lock or MPI_Win_lock_all first)",
                         t, (long)a->disp);
        goto out;
    }
    if (request && !w->lockall && !w->lock[t]) {
        rc = plx_win_err(w, fn, MPI_ERR_RMA_SYNC,
                         "target %d: request-based operations need a passive-target epoch (MPI_Win_lock or "
                         "MPI_Win_lock_all)",
                         t);
        goto out;
    }
    /* types */
    MPI_Count tbytes = (MPI_Count)a->tcount * a->tdt->size;
    if (acc) {
        struct plx_op *op = plx_op_lookup(a->op);
        if (a->op == MPI_NO_OP && kind == PLX_RMA_K_ACC) {
            rc = plx_win_err(w, fn, MPI_ERR_OP, "target %d: MPI_NO_OP is for MPI_Get_accumulate and MPI_Fetch_and_op, "
                             "not for MPI_Accumulate", t);
            goto out;
        }
        if (!op || (op->fn && a->op != MPI_REPLACE && a->op != MPI_NO_OP)) {
            rc = plx_win_err(w, fn, MPI_ERR_OP, "target %d: argument 'op' (handle 0x%x) is %s", t, (unsigned)a->op,
                             op ? "a user-defined operation, which one-sided accumulates do not take"
                                : "not a valid operation");
            goto out;
        }
        MPI_Datatype tb = a->tdt->basic != MPI_DATATYPE_NULL ? a->tdt->basic : a->tdt->obj.handle;
        if (a->tdt->size && a->tdt->basic == MPI_DATATYPE_NULL && !plx_dt_is_builtin(a->tdt)) {
            rc = plx_win_err(w, fn, MPI_ERR_TYPE,
                             "target %d: the target datatype mixes predefined types; accumulates need one", t);
            goto out;
        }
        struct plx_datatype *others[2] = { a->odt, a->rdt };
        for (int i = 0; i < 2; i++) {
            struct plx_datatype *o = others[i];
            if (!o || o->size == 0 || (i == 0 && a->op == MPI_NO_OP))
                continue;
            MPI_Datatype ob = o->basic != MPI_DATATYPE_NULL ? o->basic : o->obj.handle;
            if (ob != tb) {
                rc = plx_win_err(w, fn, MPI_ERR_TYPE,
                                 "target %d, displacement %ld: the %s datatype is made of another predefined type "
                                 "(0x%x) than the target datatype (0x%x)",
                                 t, (long)a->disp, i ? "result" : "origin", (unsigned)ob, (unsigned)tb);
                goto out;
            }
        }
        /* an accumulate that moves nothing applies no operation (MPICH and
         * mpi4py's test_rma use MPI_SUM on zero MPI_BYTEs so) */
        if (a->op != MPI_REPLACE && a->op != MPI_NO_OP && tbytes > 0 && !plx_op_valid_for(op, a->tdt)) {
            rc = plx_win_err(w, fn, MPI_ERR_OP, "target %d: the operation (0x%x) is not defined for the datatype",
                             t, (unsigned)a->op);
            goto out;
        }
    }
    {
        MPI_Count obytes = -1;
        const char *which = "origin";
        if (a->odt && !(acc && a->op == MPI_NO_OP))
            obytes = (MPI_Count)a->ocount * a->odt->size;
        if (kind == PLX_RMA_K_GET) {
            obytes = (MPI_Count)a->ocount * a->odt->size;
        }
        if (obytes >= 0 && obytes != tbytes && kind != PLX_RMA_K_CAS) {
            rc = plx_win_err(w, fn, MPI_ERR_TYPE,
                             "target %d, displacement %ld: the %s data is %lld bytes but the target's is %lld", t,
                             (long)a->disp, which, (long long)obytes, (long long)tbytes);
            goto out;
        }
        if (a->rdt && kind == PLX_RMA_K_GACC && (MPI_Count)a->rcount * a->rdt->size != tbytes) {
            rc = plx_win_err(w, fn, MPI_ERR_TYPE,
                             "target %d, displacement %ld: the result buffer holds %lld bytes but the target's "
                             "data is %lld",
                             t, (long)a->disp, (long long)((MPI_Count)a->rcount * a->rdt->size), (long long)tbytes);
            goto out;
        }
    }
    /* range (a dynamic window's is checked by the target) */
    if (w->flavor != MPI_WIN_FLAVOR_DYNAMIC && tbytes > 0) {
        MPI_Aint lo, hi;
        plx_rma_target_span(a->tcount, a->tdt, &lo, &hi);
        MPI_Aint off = a->disp * (MPI_Aint)w->t[t].disp_unit;
        if (a->disp < 0 || off + lo < 0 || (uint64_t)(off + hi) > w->t[t].size) {
            rc = plx_win_err(w, fn, MPI_ERR_RMA_RANGE,
                             "target %d, displacement %ld: bytes [%ld, %ld) would be %s, past the target's window "
                             "of %llu bytes",
                             t, (long)a->disp, (long)(off + lo), (long)(off + hi), plx_win_kind_verb(kind),
                             (unsigned long long)w->t[t].size);
            goto out;
        }
    }
    struct plx_request *r = NULL;
    if (request) {
        r = plx_request_new(PLX_REQ_RMA, w->comm);
        r->rank = t;
    }
    if (tbytes == 0 && kind != PLX_RMA_K_CAS) {
        /* moves nothing (zero elements, or elements of an empty type: with a `_c` count that
         * may be above INT_MAX): complete at once, no operation applied */
        if (r) {
            r->cc = 0;
            *request = r->obj.handle;
        }
        goto out;
    }
    char msg[256] = "";
    int cls = plx_rma_issue(w, a, r, msg, sizeof msg);
    if (cls) {
        if (r)
            plx_request_free(r);
        rc = plx_win_err(w, fn, cls, "target %d, displacement %ld: %s", t, (long)a->disp, msg);
        goto out;
    }
    if (request)
        *request = r->obj.handle;
out:
    plx_api_unlock();
    return rc;
}

/* The operations' bodies, shared by the int entry points and their `_c`
 * forms (MPI 4.0 large counts: MPI_Count counts, the same checks; the
 * call's name in messages says which form was called). */
static int plx_win_put(const void *oaddr, MPI_Count ocount, MPI_Datatype odt, int target, MPI_Aint disp,
                       MPI_Count tcount, MPI_Datatype tdt, MPI_Win win, MPI_Request *request, const char *fn)
{
    struct plx_rma_args a = { .kind = PLX_RMA_K_PUT, .obuf = oaddr, .ocount = ocount, .target = target,
                              .disp = disp, .tcount = tcount };
    return plx_win_op(win, &a, odt, MPI_DATATYPE_NULL, tdt, request, fn);
}

static int plx_win_get(void *oaddr, MPI_Count ocount, MPI_Datatype odt, int target, MPI_Aint disp,
                       MPI_Count tcount, MPI_Datatype tdt, MPI_Win win, MPI_Request *request, const char *fn)
{
    struct plx_rma_args a = { .kind = PLX_RMA_K_GET, .rbuf = oaddr, .ocount = ocount, .rcount = ocount,
                              .target = target, .disp = disp, .tcount = tcount };
    return plx_win_op(win, &a, odt, odt, tdt, request, fn);
}

static int plx_win_acc(const void *oaddr, MPI_Count ocount, MPI_Datatype odt, int target, MPI_Aint disp,
                       MPI_Count tcount, MPI_Datatype tdt, MPI_Op op, MPI_Win win, MPI_Request *request,
                       const char *fn)
{
    struct plx_rma_args a = { .kind = PLX_RMA_K_ACC, .obuf = oaddr, .ocount = ocount, .target = target,
                              .disp = disp, .tcount = tcount, .op = op };
    return plx_win_op(win, &a, odt, MPI_DATATYPE_NULL, tdt, request, fn);
}

static int plx_win_gacc(const void *oaddr, MPI_Count ocount, MPI_Datatype odt, void *raddr, MPI_Count rcount,
                        MPI_Datatype rdt, int target, MPI_Aint disp, MPI_Count tcount, MPI_Datatype tdt, MPI_Op op,
                        MPI_Win win, MPI_Request *request, const char *fn)
{
    struct plx_rma_args a = { .kind = PLX_RMA_K_GACC, .obuf = oaddr, .ocount = ocount, .rbuf = raddr,
                              .rcount = rcount, .target = target, .disp = disp, .tcount = tcount, .op = op };
    return plx_win_op(win, &a, op == MPI_NO_OP ? MPI_DATATYPE_NULL : odt, rdt, tdt, request, fn);
}

/* the request forms: a NULL request is refused before anything else */
#define PLX_WIN_REQ_ARG(fn)                                   \
    do {                                                      \
        if (!request)                                         \
            return plx_api_null_arg(NULL, (fn), "request");   \
    } while (0)

#pragma weak MPI_Put = PMPI_Put
int PMPI_Put(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
             MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win)
{
    return plx_win_put(origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count,
                       target_datatype, win, NULL, "MPI_Put");
}

#pragma weak MPI_Get = PMPI_Get
int PMPI_Get(void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
             MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win)
{
    return plx_win_get(origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count,
                       target_datatype, win, NULL, "MPI_Get");
}

#pragma weak MPI_Accumulate = PMPI_Accumulate
int PMPI_Accumulate(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
                    MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Op op, MPI_Win win)
{
    return plx_win_acc(origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count,
                       target_datatype, op, win, NULL, "MPI_Accumulate");
}

#pragma weak MPI_Get_accumulate = PMPI_Get_accumulate
int PMPI_Get_accumulate(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype, void *result_addr,
                        int result_count, MPI_Datatype result_datatype, int target_rank, MPI_Aint target_disp,
                        int target_count, MPI_Datatype target_datatype, MPI_Op op, MPI_Win win)
{
    return plx_win_gacc(origin_addr, origin_count, origin_datatype, result_addr, result_count, result_datatype,
                        target_rank, target_disp, target_count, target_datatype, op, win, NULL,
                        "MPI_Get_accumulate");
}

#pragma weak MPI_Fetch_and_op = PMPI_Fetch_and_op
int PMPI_Fetch_and_op(const void *origin_addr, void *result_addr, MPI_Datatype datatype, int target_rank,
                      MPI_Aint target_disp, MPI_Op op, MPI_Win win)
{
    return plx_win_gacc(origin_addr, 1, datatype, result_addr, 1, datatype, target_rank, target_disp, 1, datatype,
                        op, win, NULL, "MPI_Fetch_and_op");
}

#pragma weak MPI_Compare_and_swap = PMPI_Compare_and_swap
int PMPI_Compare_and_swap(const void *origin_addr, const void *compare_addr, void *result_addr,
                          MPI_Datatype datatype, int target_rank, MPI_Aint target_disp, MPI_Win win)
{
    struct plx_rma_args a = { .kind = PLX_RMA_K_CAS, .obuf = origin_addr, .cbuf = compare_addr, .ocount = 1,
                              .rbuf = result_addr, .rcount = 1, .target = target_rank, .disp = target_disp,
                              .tcount = 1, .op = MPI_REPLACE };
    struct plx_datatype *dt = plx_dt_lookup(datatype);
    if (dt && (!plx_dt_is_builtin(dt) || dt->size > 16)) {
        struct plx_win *w;
        plx_api_lock();
        int rc = plx_win_arg(win, &w, "MPI_Compare_and_swap");
        if (!rc)
            rc = plx_win_err(w, "MPI_Compare_and_swap", MPI_ERR_TYPE,
                             "target %d, displacement %ld: the datatype (0x%x) must be a predefined integer, logical "
                             "or byte type",
                             target_rank, (long)target_disp, (unsigned)datatype);
        plx_api_unlock();
        return rc;
    }
    return plx_win_op(win, &a, datatype, datatype, datatype, NULL, "MPI_Compare_and_swap");
}

#pragma weak MPI_Rput = PMPI_Rput
int PMPI_Rput(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
              MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win,
              MPI_Request *request)
{
    PLX_WIN_REQ_ARG("MPI_Rput");
    return plx_win_put(origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count,
                       target_datatype, win, request, "MPI_Rput");
}

#pragma weak MPI_Rget = PMPI_Rget
int PMPI_Rget(void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
              MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win,
              MPI_Request *request)
{
    PLX_WIN_REQ_ARG("MPI_Rget");
    return plx_win_get(origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count,
                       target_datatype, win, request, "MPI_Rget");
}

#pragma weak MPI_Raccumulate = PMPI_Raccumulate
int PMPI_Raccumulate(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
                     MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Op op, MPI_Win win,
                     MPI_Request *request)
{
    PLX_WIN_REQ_ARG("MPI_Raccumulate");
    return plx_win_acc(origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count,
                       target_datatype, op, win, request, "MPI_Raccumulate");
}

#pragma weak MPI_Rget_accumulate = PMPI_Rget_accumulate
int PMPI_Rget_accumulate(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype, void *result_addr,
                         int result_count, MPI_Datatype result_datatype, int target_rank, MPI_Aint target_disp,
                         int target_count, MPI_Datatype target_datatype, MPI_Op op, MPI_Win win,
                         MPI_Request *request)
{
    PLX_WIN_REQ_ARG("MPI_Rget_accumulate");
    return plx_win_gacc(origin_addr, origin_count, origin_datatype, result_addr, result_count, result_datatype,
                        target_rank, target_disp, target_count, target_datatype, op, win, request,
                        "MPI_Rget_accumulate");
}

/* MPI 4.0 large-count forms of the operations */

#pragma weak MPI_Put_c = PMPI_Put_c
int PMPI_Put_c(const void *origin_addr, MPI_Count origin_count, MPI_Datatype origin_datatype, int target_rank,
               MPI_Aint target_disp, MPI_Count target_count, MPI_Datatype target_datatype, MPI_Win win)
{
    return plx_win_put(origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count,
                       target_datatype, win, NULL, "MPI_Put_c");
}

#pragma weak MPI_Get_c = PMPI_Get_c
int PMPI_Get_c(void *origin_addr, MPI_Count origin_count, MPI_Datatype origin_datatype, int target_rank,
               MPI_Aint target_disp, MPI_Count target_count, MPI_Datatype target_datatype, MPI_Win win)
{
    return plx_win_get(origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count,
                       target_datatype, win, NULL, "MPI_Get_c");
}

#pragma weak MPI_Accumulate_c = PMPI_Accumulate_c
int PMPI_Accumulate_c(const void *origin_addr, MPI_Count origin_count, MPI_Datatype origin_datatype,
                      int target_rank, MPI_Aint target_disp, MPI_Count target_count, MPI_Datatype target_datatype,
                      MPI_Op op, MPI_Win win)
{
    return plx_win_acc(origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count,
                       target_datatype, op, win, NULL, "MPI_Accumulate_c");
}

#pragma weak MPI_Get_accumulate_c = PMPI_Get_accumulate_c
int PMPI_Get_accumulate_c(const void *origin_addr, MPI_Count origin_count, MPI_Datatype origin_datatype,
                          void *result_addr, MPI_Count result_count, MPI_Datatype result_datatype, int target_rank,
                          MPI_Aint target_disp, MPI_Count target_count, MPI_Datatype target_datatype, MPI_Op op,
                          MPI_Win win)
{
    return plx_win_gacc(origin_addr, origin_count, origin_datatype, result_addr, result_count, result_datatype,
                        target_rank, target_disp, target_count, target_datatype, op, win, NULL,
                        "MPI_Get_accumulate_c");
}

#pragma weak MPI_Rput_c = PMPI_Rput_c
int PMPI_Rput_c(const void *origin_addr, MPI_Count origin_count, MPI_Datatype origin_datatype, int target_rank,
                MPI_Aint target_disp, MPI_Count target_count, MPI_Datatype target_datatype, MPI_Win win,
                MPI_Request *request)
{
    PLX_WIN_REQ_ARG("MPI_Rput_c");
    return plx_win_put(origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count,
                       target_datatype, win, request, "MPI_Rput_c");
}

#pragma weak MPI_Rget_c = PMPI_Rget_c
int PMPI_Rget_c(void *origin_addr, MPI_Count origin_count, MPI_Datatype origin_datatype, int target_rank,
                MPI_Aint target_disp, MPI_Count target_count, MPI_Datatype target_datatype, MPI_Win win,
                MPI_Request *request)
{
    PLX_WIN_REQ_ARG("MPI_Rget_c");
    return plx_win_get(origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count,
                       target_datatype, win, request, "MPI_Rget_c");
}

#pragma weak MPI_Raccumulate_c = PMPI_Raccumulate_c
int PMPI_Raccumulate_c(const void *origin_addr, MPI_Count origin_count, MPI_Datatype origin_datatype,
                       int target_rank, MPI_Aint target_disp, MPI_Count target_count,
                       MPI_Datatype target_datatype, MPI_Op op, MPI_Win win, MPI_Request *request)
{
    PLX_WIN_REQ_ARG("MPI_Raccumulate_c");
    return plx_win_acc(origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count,
                       target_datatype, op, win, request, "MPI_Raccumulate_c");
}

#pragma weak MPI_Rget_accumulate_c = PMPI_Rget_accumulate_c
int PMPI_Rget_accumulate_c(const void *origin_addr, MPI_Count origin_count, MPI_Datatype origin_datatype,
                           void *result_addr, MPI_Count result_count, MPI_Datatype result_datatype,
                           int target_rank, MPI_Aint target_disp, MPI_Count target_count,
                           MPI_Datatype target_datatype, MPI_Op op, MPI_Win win, MPI_Request *request)
{
    PLX_WIN_REQ_ARG("MPI_Rget_accumulate_c");
    return plx_win_gacc(origin_addr, origin_count, origin_datatype, result_addr, result_count, result_datatype,
                        target_rank, target_disp, target_count, target_datatype, op, win, request,
                        "MPI_Rget_accumulate_c");
}

/* ---- synchronisation ---------------------------------------------------------------------------------------- */

static int plx_win_fence_body(struct plx_win *w, const char *fn, void *arg)
{
    int assert = *(int *)arg;
    if (assert & ~(MPI_MODE_NOSTORE | MPI_MODE_NOPUT | MPI_MODE_NOPRECEDE | MPI_MODE_NOSUCCEED))
        return plx_win_err(w, fn, MPI_ERR_ASSERT, "argument 'assert' (0x%x) has bits fence does not take",
                           (unsigned)assert);
    if (plx_rma_fence(w, assert))
        return plx_win_err(w, fn, MPI_ERR_RMA_SYNC, "fence inside %s", plx_win_epoch_name(w));
    return plx_win_deferred(w, fn);
}

#pragma weak MPI_Win_fence = PMPI_Win_fence
int PMPI_Win_fence(int assert, MPI_Win win)
{
    return plx_win_call(win, "MPI_Win_fence", plx_win_fence_body, &assert);
}

/* The ranks in w of group g; MPI_SUCCESS or raised. */
static int plx_win_group_ranks(struct plx_win *w, MPI_Group group, int **ranks_p, int *n_p, const char *fn)
{
    struct plx_group *g = plx_obj_lookup(&plx_group_tab, group);
    if (!g)
        return plx_win_err(w, fn, MPI_ERR_GROUP, "argument 'group' is %s group (handle 0x%x)",
                           group == MPI_GROUP_NULL ? "the null" : "an invalid", (unsigned)group);
    int n = g->size;
    int *in = plx_malloc((size_t)(n ? n : 1) * sizeof *in);
    int *out = plx_malloc((size_t)(n ? n : 1) * sizeof *out);
    for (int i = 0; i < n; i++)
        in[i] = i;
    plx_group_translate(g, n, in, w->comm->group, out);
    free(in);
    for (int i = 0; i < n; i++) {
        if (out[i] == MPI_UNDEFINED) {
            free(out);
            return plx_win_err(w, fn, MPI_ERR_GROUP, "member %d of the group is not in the window", i);
        }
    }
    *ranks_p = out;
    *n_p = n;
    return MPI_SUCCESS;
}

/* post (exposure) and start (access): the group's ranks, then the epoch */
struct plx_win_group_args {
    MPI_Group group;
    int start;
};

static int plx_win_pscw_open_body(struct plx_win *w, const char *fn, void *arg)
{
    struct plx_win_group_args *a = arg;
    int *ranks = NULL, n = 0;
    int rc = plx_win_group_ranks(w, a->group, &ranks, &n, fn);
    if (rc)
        return rc;
    if (a->start ? plx_rma_start(w, ranks, n) : plx_rma_post(w, ranks, n))
        rc = a->start ? plx_win_err(w, fn, MPI_ERR_RMA_SYNC, "start inside %s", plx_win_epoch_name(w))
                      : plx_win_err(w, fn, MPI_ERR_RMA_SYNC, "an exposure epoch (MPI_Win_post) is already open");
    free(ranks);
    return rc;
}

#pragma weak MPI_Win_post = PMPI_Win_post
int PMPI_Win_post(MPI_Group group, int assert, MPI_Win win)
{
    (void)assert;
    struct plx_win_group_args a = { group, 0 };
    return plx_win_call(win, "MPI_Win_post", plx_win_pscw_open_body, &a);
}

#pragma weak MPI_Win_start = PMPI_Win_start
int PMPI_Win_start(MPI_Group group, int assert, MPI_Win win)
{
    (void)assert;
    struct plx_win_group_args a = { group, 1 };
    return plx_win_call(win, "MPI_Win_start", plx_win_pscw_open_body, &a);
}

/* The calls that close an access epoch (complete, unlock, unlock_all): the epoch's end, then an
 * error a target answered for one of its operations. */
struct plx_win_close_args {
    int one;                    /* unlock: of one target, `rank` (MPI_PROC_NULL: nothing to do) */
    int rank;
    int (*close)(struct plx_win *w, int rank);
    const char *none;           /* the message when no such epoch is open */
};

static int plx_win_close_body(struct plx_win *w, const char *fn, void *arg)
{
    struct plx_win_close_args *a = arg;
    int rc;
    if (a->one && a->rank == MPI_PROC_NULL)
        return MPI_SUCCESS;
    if (a->one && (rc = plx_win_target_arg(w, a->rank, fn)))
        return rc;
    if (a->close(w, a->rank)) {
        if (a->one)
            return plx_win_err(w, fn, MPI_ERR_RMA_SYNC, "target %d is not locked by this process", a->rank);
        return plx_win_err(w, fn, MPI_ERR_RMA_SYNC, "%s", a->none);
    }
    return plx_win_deferred(w, fn);
}

static int plx_win_close_complete(struct plx_win *w, int rank)
{
    (void)rank;
    return plx_rma_complete(w);
}

static int plx_win_close_unlock_all(struct plx_win *w, int rank)
{
    (void)rank;
    return plx_rma_unlock_all(w);
}

#pragma weak MPI_Win_complete = PMPI_Win_complete
int PMPI_Win_complete(MPI_Win win)
{
    struct plx_win_close_args a = { 0, 0, plx_win_close_complete, "no access epoch of MPI_Win_start is open" };
    return plx_win_call(win, "MPI_Win_complete", plx_win_close_body, &a);
}

#pragma weak MPI_Win_unlock = PMPI_Win_unlock
int PMPI_Win_unlock(int rank, MPI_Win win)
{
    struct plx_win_close_args a = { 1, rank, plx_rma_unlock, "" };
    return plx_win_call(win, "MPI_Win_unlock", plx_win_close_body, &a);
}

#pragma weak MPI_Win_unlock_all = PMPI_Win_unlock_all
int PMPI_Win_unlock_all(MPI_Win win)
{
    struct plx_win_close_args a = { 0, 0, plx_win_close_unlock_all, "no MPI_Win_lock_all epoch is open" };
    return plx_win_call(win, "MPI_Win_unlock_all", plx_win_close_body, &a);
}

/* wait (flag NULL: blocks) and test */
static int plx_win_wait_body(struct plx_win *w, const char *fn, void *arg)
{
    int *flag = arg;
    int rc;
    if (!strcmp(fn, "MPI_Win_test") && (rc = plx_win_ptr_arg(w, fn, flag, "flag")))
        return rc;
    int r = plx_rma_wait(w, flag == NULL);
    if (r < 0)
        return plx_win_err(w, fn, MPI_ERR_RMA_SYNC, "no exposure epoch of MPI_Win_post is open");
    if (flag)
        *flag = r;
    return MPI_SUCCESS;
}

#pragma weak MPI_Win_wait = PMPI_Win_wait
int PMPI_Win_wait(MPI_Win win)
{
    return plx_win_call(win, "MPI_Win_wait", plx_win_wait_body, NULL);
}

#pragma weak MPI_Win_test = PMPI_Win_test
int PMPI_Win_test(MPI_Win win, int *flag)
{
    return plx_win_call(win, "MPI_Win_test", plx_win_wait_body, flag);
}

/* lock (one target, `rank`, or MPI_PROC_NULL) and lock_all (all) */
struct plx_win_lock_args {
    int lock_type;
    int rank;
    int all;
};

static int plx_win_lock_body(struct plx_win *w, const char *fn, void *arg)
{
    struct plx_win_lock_args *a = arg;
    int rank = a->rank, rc;
    if (a->all) {
        int cls = plx_rma_lock_all(w);
        return cls ? plx_win_err(w, fn, cls, "lock_all inside %s", plx_win_epoch_name(w)) : MPI_SUCCESS;
    }
    if (rank == MPI_PROC_NULL)
        return MPI_SUCCESS;
    if ((rc = plx_win_target_arg(w, rank, fn)))
        return rc;
    if (a->lock_type != MPI_LOCK_SHARED && a->lock_type != MPI_LOCK_EXCLUSIVE)
        return plx_win_err(w, fn, MPI_ERR_LOCKTYPE, "argument 'lock_type' is %d (expected MPI_LOCK_SHARED or "
                           "MPI_LOCK_EXCLUSIVE)", a->lock_type);
    int held = w->lock[rank] || w->lockall;
    int cls = plx_rma_lock(w, a->lock_type == MPI_LOCK_EXCLUSIVE ? PLX_RMA_LK_EXCL : PLX_RMA_LK_SHARED, rank);
    if (cls && held)     /* MPI_ERR_RMA_SYNC, as MPICH says */
        return plx_win_err(w, fn, cls, "target %d: this process already holds %s", rank,
                           w->lockall ? "MPI_Win_lock_all on the window" : "a lock on this target");
    if (cls)
        return plx_win_err(w, fn, cls, "target %d: lock inside %s", rank, plx_win_epoch_name(w));
    return MPI_SUCCESS;
}

#pragma weak MPI_Win_lock = PMPI_Win_lock
int PMPI_Win_lock(int lock_type, int rank, int assert, MPI_Win win)
{
    (void)assert;
    struct plx_win_lock_args a = { lock_type, rank, 0 };
    return plx_win_call(win, "MPI_Win_lock", plx_win_lock_body, &a);
}

#pragma weak MPI_Win_lock_all = PMPI_Win_lock_all
int PMPI_Win_lock_all(int assert, MPI_Win win)
{
    (void)assert;
    struct plx_win_lock_args a = { MPI_LOCK_SHARED, 0, 1 };
    return plx_win_call(win, "MPI_Win_lock_all", plx_win_lock_body, &a);
}

/* flush and flush_local of one target (`rank`, or MPI_PROC_NULL) and of all, and MPI_Win_sync:
 * all of them only in a passive-target epoch. (Flush waits for answers, so the local forms
 * are the same calls.) */
enum { PLX_WIN_FLUSH_ONE, PLX_WIN_FLUSH_ALL, PLX_WIN_SYNC };
struct plx_win_flush_args {
    int what;                   /* PLX_WIN_FLUSH_*, PLX_WIN_SYNC */
    int rank;
};

static int plx_win_flush_body(struct plx_win *w, const char *fn, void *arg)
{
    const struct plx_win_flush_args *a = arg;
    int rank = a->rank, rc;
    if (a->what == PLX_WIN_FLUSH_ONE && rank == MPI_PROC_NULL)
        return MPI_SUCCESS;
    if (a->what == PLX_WIN_SYNC) {
        /* MPI 4.1 section 12.5.4 (as 3.1's 11.5.4): "All flush and sync functions can be called
         * only within passive target epochs" -- an epoch of MPI_Win_lock or _lock_all opened by
         * this process; fence, PSCW or no epoch at all is erroneous. */
        if (!w->nlocked && !w->lockall)
            return plx_win_err(w, fn, MPI_ERR_RMA_SYNC,
                               "no passive-target epoch is open (%s); MPI_Win_sync may be called only between "
                               "MPI_Win_lock/MPI_Win_lock_all and their unlock",
                               w->fence ? "an MPI_Win_fence epoch" : plx_win_epoch_name(w));
        plx_progress_poll();
        __atomic_thread_fence(__ATOMIC_SEQ_CST);
        return MPI_SUCCESS;
    }
    if (a->what == PLX_WIN_FLUSH_ONE) {
        if ((rc = plx_win_target_arg(w, rank, fn)))
            return rc;
        if (!w->lock[rank] && !w->lockall)
            return plx_win_err(w, fn, MPI_ERR_RMA_SYNC, "target %d is not locked by this process", rank);
    } else if (!w->nlocked && !w->lockall) {
        return plx_win_err(w, fn, MPI_ERR_RMA_SYNC, "no passive-target epoch is open");
    }
    plx_rma_flush(w, a->what == PLX_WIN_FLUSH_ONE ? rank : -1);
    return plx_win_deferred(w, fn);
}

#pragma weak MPI_Win_flush = PMPI_Win_flush
int PMPI_Win_flush(int rank, MPI_Win win)
{
    struct plx_win_flush_args a = { PLX_WIN_FLUSH_ONE, rank };
    return plx_win_call(win, "MPI_Win_flush", plx_win_flush_body, &a);
}

#pragma weak MPI_Win_flush_local = PMPI_Win_flush_local
int PMPI_Win_flush_local(int rank, MPI_Win win)
{
    struct plx_win_flush_args a = { PLX_WIN_FLUSH_ONE, rank };
    return plx_win_call(win, "MPI_Win_flush_local", plx_win_flush_body, &a);
}

#pragma weak MPI_Win_flush_all = PMPI_Win_flush_all
int PMPI_Win_flush_all(MPI_Win win)
{
    struct plx_win_flush_args a = { PLX_WIN_FLUSH_ALL, 0 };
    return plx_win_call(win, "MPI_Win_flush_all", plx_win_flush_body, &a);
}

#pragma weak MPI_Win_flush_local_all = PMPI_Win_flush_local_all
int PMPI_Win_flush_local_all(MPI_Win win)
{
    struct plx_win_flush_args a = { PLX_WIN_FLUSH_ALL, 0 };
    return plx_win_call(win, "MPI_Win_flush_local_all", plx_win_flush_body, &a);
}

#pragma weak MPI_Win_sync = PMPI_Win_sync
int PMPI_Win_sync(MPI_Win win)
{
    struct plx_win_flush_args a = { PLX_WIN_SYNC, 0 };
    return plx_win_call(win, "MPI_Win_sync", plx_win_flush_body, &a);
}
