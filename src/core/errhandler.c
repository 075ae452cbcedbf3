/*
 * Error handler objects. The builtins (MPI_ERRORS_ARE_FATAL,
 * MPI_ERRORS_RETURN, MPI_ERRORS_ABORT) are static and never freed; user handlers are
 * reference-counted: one reference for the user's handle and one for each
 * communicator using it, so MPI_Errhandler_free on a handler still attached
 * to a communicator is safe. Invocation lives in api/api_util.c.
 */
#include "core/objects.h"

struct plx_objtab plx_errhandler_tab = PLX_OBJTAB_INIT("errhandler", PLX_OBJ_ERRHANDLER, struct plx_errhandler);

static struct plx_errhandler plx_errhandler_fatal_obj = {
    .obj = { .handle = MPI_ERRORS_ARE_FATAL, .refcount = 1, .live = 1, .builtin = 1 },
    .kind = PLX_ERRH_FATAL,
};
static struct plx_errhandler plx_errhandler_return_obj = {
    .obj = { .handle = MPI_ERRORS_RETURN, .refcount = 1, .live = 1, .builtin = 1 },
    .kind = PLX_ERRH_RETURN,
};
/* MPI 4.0: aborts the processes of the communicator the error is raised on
 * (here, as MPI_Abort on it, the job) */
static struct plx_errhandler plx_errhandler_abort_obj = {
    .obj = { .handle = MPI_ERRORS_ABORT, .refcount = 1, .live = 1, .builtin = 1 },
    .kind = PLX_ERRH_ABORT,
};
struct plx_errhandler *plx_errhandler_fatal = &plx_errhandler_fatal_obj;
struct plx_errhandler *plx_errhandler_return = &plx_errhandler_return_obj;

void plx_errhandler_init_builtins(void)
{
    plx_obj_register_builtin(&plx_errhandler_tab, MPI_ERRORS_ARE_FATAL, plx_errhandler_fatal);
    plx_obj_register_builtin(&plx_errhandler_tab, MPI_ERRORS_RETURN, plx_errhandler_return);
    plx_obj_register_builtin(&plx_errhandler_tab, MPI_ERRORS_ABORT, &plx_errhandler_abort_obj);
}

struct plx_errhandler *plx_errhandler_new_comm(MPI_Comm_errhandler_function *fn)
{
    struct plx_errhandler *e = plx_obj_alloc(&plx_errhandler_tab);
    if (!e)
        return NULL;
    e->kind = PLX_ERRH_USER_COMM;
    e->comm_fn = fn;
    return e;
}

struct plx_errhandler *plx_errhandler_new_file(MPI_File_errhandler_function *fn)
{
    struct plx_errhandler *e = plx_obj_alloc(&plx_errhandler_tab);
    if (!e)
        return NULL;
    e->kind = PLX_ERRH_USER_FILE;
    e->file_fn = fn;
    return e;
}

struct plx_errhandler *plx_errhandler_new_win(MPI_Win_errhandler_function *fn)
{
    struct plx_errhandler *e = plx_obj_alloc(&plx_errhandler_tab);
    if (!e)
        return NULL;
    e->kind = PLX_ERRH_USER_WIN;
    e->win_fn = fn;
    return e;
}

void plx_errhandler_addref(struct plx_errhandler *e)
{
    if (e && !e->obj.builtin)
        e->obj.refcount++;
}

void plx_errhandler_release(struct plx_errhandler *e)
{
    if (!e || e->obj.builtin)
        return;
    if (--e->obj.refcount > 0)
        return;
    plx_obj_free(&plx_errhandler_tab, e);
}
