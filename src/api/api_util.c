/* Shared helpers of the MPI_* entry points (see api.h). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "api/api.h"
#include "core/log.h"
#include "pm/pm.h"


static int plx_api_err_invoke(struct plx_comm *comm, int code)
{
    if (!plx_rt.initialized || plx_rt.finalized) {
        char msg[MPI_MAX_ERROR_STRING];
        plx_err_string(code, msg, sizeof msg);
        fprintf(stderr, "plexus: %s\n", msg);
        if (!plx_rt.initialized)
            exit(1);
        return code;
    }
    if (!comm)
        comm = plx_comm_world;
    struct plx_errhandler *eh = comm->errhandler;
    switch (eh->kind) {
    case PLX_ERRH_RETURN:
        return code;
    case PLX_ERRH_USER_COMM: {
        MPI_Comm h = comm->obj.handle;
        int c = code;
        /* the handler may call MPI; the lock is not held by calls that
         * report errors before taking it */
        int held = plx_lock_held();
        if (held)
            plx_api_unlock();
        eh->comm_fn(&h, &c);
        if (held)
            plx_api_lock();
        return code;
    }
    case PLX_ERRH_FATAL:
    case PLX_ERRH_ABORT:
    default: {
        char msg[MPI_MAX_ERROR_STRING];
        plx_err_string(code, msg, sizeof msg);
        char line[MPI_MAX_ERROR_STRING + MPI_MAX_OBJECT_NAME + 64];
        snprintf(line, sizeof line, "rank %d: %s on %s: %s", plx_rt.world_rank,
                 eh->kind == PLX_ERRH_ABORT ? "error with MPI_ERRORS_ABORT" : "fatal error",
                 comm->name[0] ? comm->name : "a communicator", msg);
        plx_pm_abort(plx_err_class(code) > 0 ? plx_err_class(code) : 1, line);
    }
    }
}

int plx_api_err(struct plx_comm *comm, const char *fn, int errclass, const char *fmt, ...)
{
    char text[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    int code = plx_err_make(errclass, "%s(rank %d): %s", fn, plx_rt.world_rank, text);
    return plx_api_err_invoke(comm, code);
}

int plx_api_err_code(struct plx_comm *comm, int code)
{
    return plx_api_err_invoke(comm, code);
}

int plx_api_null_arg(struct plx_comm *comm, const char *fn, const char *arg)
{
    return plx_api_err(comm, fn, MPI_ERR_ARG, "argument '%s' is NULL", arg);
}

void plx_api_check_init(const char *fn)
{
    if (plx_unlikely(!plx_rt.initialized || plx_rt.finalized)) {
        fprintf(stderr, "plexus: %s called %s\n", fn,
                plx_rt.finalized ? "after MPI_Finalize" : "before MPI_Init");
        exit(1);
    }
}

int plx_api_comm(MPI_Comm h, struct plx_comm **c_p, const char *fn)
{
    plx_api_check_init(fn);
    struct plx_comm *c = plx_obj_lookup(&plx_comm_tab, h);
    if (plx_unlikely(!c)) {
        *c_p = NULL;
        return plx_api_err(NULL, fn, MPI_ERR_COMM, "%s communicator (handle 0x%x)",
                           h == MPI_COMM_NULL ? "null" : "invalid", (unsigned)h);
    }
    *c_p = c;
    return MPI_SUCCESS;
}

int plx_api_intracomm(MPI_Comm h, struct plx_comm **c_p, const char *fn)
{
    int rc = plx_api_comm(h, c_p, fn);
    if (rc == MPI_SUCCESS && plx_comm_is_inter(*c_p))
        rc = plx_api_err(*c_p, fn, MPI_ERR_COMM,
                         "argument 'comm' is an intercommunicator (an intracommunicator is required)");
    return rc;
}

int plx_api_group(struct plx_comm *errcomm, MPI_Group h, struct plx_group **g_p, const char *fn, const char *arg)
{
    plx_api_check_init(fn);
    struct plx_group *g = plx_obj_lookup(&plx_group_tab, h);
    if (plx_unlikely(!g)) {
        *g_p = NULL;
        return plx_api_err(errcomm, fn, MPI_ERR_GROUP, "argument '%s' is %s group (handle 0x%x)", arg,
                           h == MPI_GROUP_NULL ? "the null" : "an invalid", (unsigned)h);
    }
    *g_p = g;
    return MPI_SUCCESS;
}

int plx_api_info(struct plx_comm *errcomm, MPI_Info h, struct plx_info **i_p, const char *fn, const char *arg)
{
    /* MPI 4.0: info objects may be used before MPI_Init (for MPI_Session_init) */
    struct plx_info *i = plx_obj_lookup(&plx_info_tab, h);
    if (plx_unlikely(!i)) {
        *i_p = NULL;
        return plx_api_err(errcomm, fn, MPI_ERR_INFO, "argument '%s' is %s info (handle 0x%x)", arg,
                           h == MPI_INFO_NULL ? "the null" : "an invalid", (unsigned)h);
    }
    *i_p = i;
    return MPI_SUCCESS;
}
