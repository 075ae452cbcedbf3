/*
 * Sessions (MPI 4.0): MPI_Session_init/_finalize, the process sets
 * "mpi://WORLD" and "mpi://SELF" (_get_num_psets, _get_nth_pset,
 * _get_pset_info), _get_info, session error handlers,
 * MPI_Group_from_session_pset and MPI_Comm_create_from_group.
 *
 * The library starts once per process: the first MPI_Session_init starts it
 * (thread level from the info key "thread_level", else MPI_THREAD_SINGLE)
 * unless MPI_Init already did, and MPI_Init after a session joins the
 * running library. When the last session ends and MPI_Init was never
 * called, the library is finalized (a collective over all processes, as
 * MPI_Finalize); it cannot start again in that process, so a later
 * MPI_Session_init fails with MPI_ERR_OTHER. MPI_Initialized reports 1
 * while a session keeps the library running.
 *
 * MPI_Comm_create_from_group is MPI_Comm_create_group over the processes
 * of MPI_COMM_WORLD, with the string tag hashed to the tag that keeps
 * concurrent creations apart.
 */
#include <stdarg.h>
#include <stdio.h>
#include <strings.h>
#include <stdlib.h>
#include <string.h>
#include "api/api.h"
#include "api/bsend.h"
#include "core/runtime.h"
#include "pm/pm.h"

#pragma weak MPI_Session_init = PMPI_Session_init
#pragma weak MPI_Session_finalize = PMPI_Session_finalize
#pragma weak MPI_Session_get_num_psets = PMPI_Session_get_num_psets
#pragma weak MPI_Session_get_nth_pset = PMPI_Session_get_nth_pset
#pragma weak MPI_Session_get_pset_info = PMPI_Session_get_pset_info
#pragma weak MPI_Session_get_info = PMPI_Session_get_info
#pragma weak MPI_Session_create_errhandler = PMPI_Session_create_errhandler
#pragma weak MPI_Session_set_errhandler = PMPI_Session_set_errhandler
#pragma weak MPI_Session_get_errhandler = PMPI_Session_get_errhandler
#pragma weak MPI_Session_call_errhandler = PMPI_Session_call_errhandler
#pragma weak MPI_Group_from_session_pset = PMPI_Group_from_session_pset
#pragma weak MPI_Comm_create_from_group = PMPI_Comm_create_from_group
#pragma weak MPI_Session_attach_buffer = PMPI_Session_attach_buffer
#pragma weak MPI_Session_attach_buffer_c = PMPI_Session_attach_buffer_c
#pragma weak MPI_Session_detach_buffer = PMPI_Session_detach_buffer
#pragma weak MPI_Session_detach_buffer_c = PMPI_Session_detach_buffer_c
#pragma weak MPI_Session_flush_buffer = PMPI_Session_flush_buffer
#pragma weak MPI_Session_iflush_buffer = PMPI_Session_iflush_buffer

struct plx_session {
    struct plx_obj obj;
    struct plx_errhandler *errhandler;
    struct plx_info *info;      /* what MPI_Session_get_info returns a copy of */
    struct plx_bslot *bslot;    /* MPI_Session_attach_buffer's (api/bsend.c); its groups and communicators share it */
};

static struct plx_objtab plx_session_tab = PLX_OBJTAB_INIT("session", PLX_OBJ_SESSION, struct plx_session);

static struct {
    int open;                   /* sessions not finalized */
    int started_by_session;     /* the library was started by MPI_Session_init */
    int world_model;            /* MPI_Init was called (before or after) */
} plx_sess = { 0 };

int plx_session_adopt_world(int *provided)
{
    if (!plx_sess.started_by_session || plx_sess.world_model)
        return 0;
    plx_sess.world_model = 1;
    if (provided)
        *provided = plx_rt.thread_level;
    return 1;
}

/* An error on a session: its handler; without a valid session, MPI_COMM_SELF's
 * (MPI_ERRORS_ARE_FATAL before the library started). */
static int plx_session_err(struct plx_session *s, const char *fn, int cls, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int plx_session_err(struct plx_session *s, const char *fn, int cls, const char *fmt, ...)
{
    char text[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    int code = plx_err_make(cls, "%s(rank %d): %s", fn, plx_rt.world_rank, text);
    if (!s && plx_rt.initialized && !plx_rt.finalized)
        return plx_api_err_code(plx_comm_self, code); /* no session: MPI_COMM_SELF's handler, as MPICH does */
    struct plx_errhandler *eh = s ? s->errhandler : plx_errhandler_fatal;
    if (eh->kind == PLX_ERRH_RETURN)
        return code;
    if (eh->kind == PLX_ERRH_USER_COMM) {
        MPI_Session h = s->obj.handle;
        int c = code, held = plx_lock_held();
        if (held)
            plx_api_unlock();
        ((void (*)(MPI_Session *, int *, ...))eh->comm_fn)(&h, &c);
        if (held)
            plx_api_lock();
        return code;
    }
    char msg[MPI_MAX_ERROR_STRING];
    plx_err_string(code, msg, sizeof msg);
    char line[MPI_MAX_ERROR_STRING + 64];
    snprintf(line, sizeof line, "rank %d: fatal error on a session: %s", plx_rt.world_rank, msg);
    plx_pm_abort(cls, line);
}

static int plx_session_get(MPI_Session h, struct plx_session **s_p, const char *fn)
{
    struct plx_session *s = plx_obj_lookup(&plx_session_tab, h);
    *s_p = s;
    if (!s)
        return plx_session_err(NULL, fn, MPI_ERR_SESSION, "%s session (handle 0x%x)",
                               h == MPI_SESSION_NULL ? "null" : "invalid", (unsigned)h);
    return MPI_SUCCESS;
}

static int plx_thread_level_of(const char *v)
{
    if (!v)
        return MPI_THREAD_SINGLE;
    if (!strcmp(v, "MPI_THREAD_MULTIPLE"))
        return MPI_THREAD_MULTIPLE;
    if (!strcmp(v, "MPI_THREAD_SERIALIZED"))
        return MPI_THREAD_SERIALIZED;
    if (!strcmp(v, "MPI_THREAD_FUNNELED"))
        return MPI_THREAD_FUNNELED;
    return MPI_THREAD_SINGLE;
}

int PMPI_Session_init(MPI_Info info, MPI_Errhandler errhandler, MPI_Session *session)
{
    static const char fn[] = "MPI_Session_init";
    if (!session)
        return plx_session_err(NULL, fn, MPI_ERR_ARG, "argument 'session' is NULL");
    if (plx_rt.finalized)
        return plx_session_err(NULL, fn, MPI_ERR_OTHER,
                               "the library was finalized in this process and cannot start again");
    const char *level = NULL;
    struct plx_info *in = NULL;
    if (!plx_rt.initialized) {
        /* the info object's handle table works before the library starts */
        if (info != MPI_INFO_NULL && !(in = plx_obj_lookup(&plx_info_tab, info)))
            return plx_session_err(NULL, fn, MPI_ERR_INFO, "argument 'info' is not a valid info object");
        if (in)
            level = plx_info_lookup(in, "thread_level");
        int provided;
        if (plx_runtime_init(NULL, NULL, plx_thread_level_of(level), &provided) != PLX_OK) {
            fprintf(stderr, "plexus: %s failed on rank %d; the job cannot start (see the messages above)\n", fn,
                    plx_rt.world_rank);
            plx_pm_abort(1, "MPI_Session_init failed");
        }
        plx_sess.started_by_session = 1;
    } else if (!plx_sess.started_by_session) {
        plx_sess.world_model = 1;
    }
    plx_api_lock();
    int rc = MPI_SUCCESS;
    struct plx_errhandler *eh = plx_obj_lookup(&plx_errhandler_tab, errhandler);
    if (info != MPI_INFO_NULL && !(in = plx_obj_lookup(&plx_info_tab, info)))
        rc = plx_session_err(NULL, fn, MPI_ERR_INFO, "argument 'info' is not a valid info object");
    else if (!eh)
        rc = plx_session_err(NULL, fn, MPI_ERR_ARG, "argument 'errhandler' is not a valid error handler (0x%x)",
                             (unsigned)errhandler);
    if (rc == MPI_SUCCESS) {
        struct plx_session *s = plx_obj_alloc(&plx_session_tab);
        plx_errhandler_addref(eh);
        s->errhandler = eh;
        s->info = in ? plx_info_dup(in) : plx_info_new();
        s->bslot = plx_calloc(1, sizeof *s->bslot);
        s->bslot->refs = 1;
        static const char *names[] = { "MPI_THREAD_SINGLE", "MPI_THREAD_FUNNELED", "MPI_THREAD_SERIALIZED",
                                       "MPI_THREAD_MULTIPLE" };
        plx_info_set(s->info, "thread_level", names[plx_rt.thread_level & 3]);
        plx_sess.open++;
        *session = s->obj.handle;
    }
    plx_api_unlock();
    return rc;
}

int PMPI_Session_finalize(MPI_Session *session)
{
    static const char fn[] = "MPI_Session_finalize";
    struct plx_session *s;
    if (!session)
        return plx_session_err(NULL, fn, MPI_ERR_ARG, "argument 'session' is NULL");
    plx_api_lock();
    int rc = plx_session_get(*session, &s, fn);
    if (rc == MPI_SUCCESS) {
        if (s->bslot->pool) {     /* a buffer still attached: its messages leave first, then it is dropped */
            void *b;
            MPI_Count n;
            plx_bpool_detach(&s->bslot->pool, &b, &n, 1, NULL, fn);
        }
        /* groups and communicators of this session that are still alive
         * (erroneous) keep the now empty slot: their buffered sends fall
         * back to the process's buffer */
        plx_bslot_release(s->bslot);
        plx_errhandler_release(s->errhandler);
        plx_info_release(s->info);
        plx_obj_free(&plx_session_tab, s);
        *session = MPI_SESSION_NULL;
        if (--plx_sess.open == 0 && plx_sess.started_by_session && !plx_sess.world_model) {
            if (plx_runtime_finalize() != PLX_OK)
                rc = MPI_ERR_OTHER;
        }
    }
    plx_api_unlock();
    return rc;
}

static const char *const plx_psets[] = { "mpi://WORLD", "mpi://SELF" };

static int plx_pset_index(const char *name)
{
    for (int i = 0; i < 2; i++)
        if (name && !strcasecmp(name, plx_psets[i]))   /* MPI: pset names are case-insensitive */
            return i;
    return -1;
}

int PMPI_Session_get_num_psets(MPI_Session session, MPI_Info info, int *npset_names)
{
    static const char fn[] = "MPI_Session_get_num_psets";
    struct plx_session *s;
    plx_api_lock();
    int rc = plx_session_get(session, &s, fn);
    if (rc == MPI_SUCCESS && !npset_names)
        rc = plx_session_err(s, fn, MPI_ERR_ARG, "argument 'npset_names' is NULL");
    if (rc == MPI_SUCCESS)
        *npset_names = 2;
    plx_api_unlock();
    return rc;
}

int PMPI_Session_get_nth_pset(MPI_Session session, MPI_Info info, int n, int *pset_len, char *pset_name)
{
    static const char fn[] = "MPI_Session_get_nth_pset";
    struct plx_session *s;
    plx_api_lock();
    int rc = plx_session_get(session, &s, fn);
    if (rc == MPI_SUCCESS && !pset_len)
        rc = plx_session_err(s, fn, MPI_ERR_ARG, "argument 'pset_len' is NULL");
    if (rc == MPI_SUCCESS && (n < 0 || n > 1))
        rc = plx_session_err(s, fn, MPI_ERR_ARG, "argument 'n' is %d; there are 2 process sets (0..1)", n);
    if (rc == MPI_SUCCESS) {
        int len = (int)strlen(plx_psets[n]) + 1;
        if (*pset_len > 0 && pset_name) {   /* *pset_len 0: only the length is asked */
            int k = *pset_len < len ? *pset_len - 1 : len - 1;
            memcpy(pset_name, plx_psets[n], (size_t)k);
            pset_name[k] = '\0';
        }
        *pset_len = len;
    }
    plx_api_unlock();
    return rc;
}

int PMPI_Session_get_pset_info(MPI_Session session, const char *pset_name, MPI_Info *info)
{
    static const char fn[] = "MPI_Session_get_pset_info";
    struct plx_session *s;
    plx_api_lock();
    int rc = plx_session_get(session, &s, fn);
    int i = rc == MPI_SUCCESS ? plx_pset_index(pset_name) : -1;
    if (rc == MPI_SUCCESS && !info)
        rc = plx_session_err(s, fn, MPI_ERR_ARG, "argument 'info' is NULL");
    else if (rc == MPI_SUCCESS && i < 0)
        rc = plx_session_err(s, fn, MPI_ERR_ARG, "process set \"%s\" does not exist (mpi://WORLD, mpi://SELF)",
                             pset_name ? pset_name : "(NULL)");
    if (rc == MPI_SUCCESS) {
        struct plx_info *in = plx_info_new();
        char v[32];
        snprintf(v, sizeof v, "%d", i == 0 ? plx_rt.world_size : 1);
        plx_info_set(in, "mpi_size", v);
        *info = in->obj.handle;
    }
    plx_api_unlock();
    return rc;
}

int PMPI_Session_get_info(MPI_Session session, MPI_Info *info_used)
{
    static const char fn[] = "MPI_Session_get_info";
    struct plx_session *s;
    plx_api_lock();
    int rc = plx_session_get(session, &s, fn);
    if (rc == MPI_SUCCESS && !info_used)
        rc = plx_session_err(s, fn, MPI_ERR_ARG, "argument 'info_used' is NULL");
    if (rc == MPI_SUCCESS)
        *info_used = plx_info_dup(s->info)->obj.handle;
    plx_api_unlock();
    return rc;
}

int PMPI_Session_create_errhandler(MPI_Session_errhandler_function *session_errhandler_fn,
                                   MPI_Errhandler *errhandler)
{
    return PMPI_Comm_create_errhandler((MPI_Comm_errhandler_function *)(void (*)(void))session_errhandler_fn,
                                       errhandler);
}

int PMPI_Session_set_errhandler(MPI_Session session, MPI_Errhandler errhandler)
{
    static const char fn[] = "MPI_Session_set_errhandler";
    struct plx_session *s;
    plx_api_lock();
    int rc = plx_session_get(session, &s, fn);
    struct plx_errhandler *eh = plx_obj_lookup(&plx_errhandler_tab, errhandler);
    if (rc == MPI_SUCCESS && !eh)
        rc = plx_session_err(s, fn, MPI_ERR_ARG, "argument 'errhandler' is not a valid error handler (0x%x)",
                             (unsigned)errhandler);
    if (rc == MPI_SUCCESS) {
        plx_errhandler_addref(eh);
        plx_errhandler_release(s->errhandler);
        s->errhandler = eh;
    }
    plx_api_unlock();
    return rc;
}

int PMPI_Session_get_errhandler(MPI_Session session, MPI_Errhandler *errhandler)
{
    static const char fn[] = "MPI_Session_get_errhandler";
    struct plx_session *s;
    plx_api_lock();
    int rc = plx_session_get(session, &s, fn);
    if (rc == MPI_SUCCESS && !errhandler)
        rc = plx_session_err(s, fn, MPI_ERR_ARG, "argument 'errhandler' is NULL");
    if (rc == MPI_SUCCESS) {
        plx_errhandler_addref(s->errhandler);
        *errhandler = s->errhandler->obj.handle;
    }
    plx_api_unlock();
    return rc;
}

int PMPI_Session_call_errhandler(MPI_Session session, int errorcode)
{
    static const char fn[] = "MPI_Session_call_errhandler";
    struct plx_session *s;
    plx_api_lock();
    int rc = plx_session_get(session, &s, fn);
    if (rc == MPI_SUCCESS) {
        struct plx_errhandler *eh = s->errhandler;
        if (eh->kind == PLX_ERRH_USER_COMM) {
            MPI_Session h = session;
            int c = errorcode;
            plx_api_unlock();
            ((void (*)(MPI_Session *, int *, ...))eh->comm_fn)(&h, &c);
            plx_api_lock();
        } else if (eh->kind != PLX_ERRH_RETURN) {
            char msg[MPI_MAX_ERROR_STRING], line[MPI_MAX_ERROR_STRING + 64];
            plx_err_string(errorcode, msg, sizeof msg);
            snprintf(line, sizeof line, "rank %d: fatal error on a session: %s", plx_rt.world_rank, msg);
            plx_pm_abort(plx_err_class(errorcode) > 0 ? plx_err_class(errorcode) : 1, line);
        }
    }
    plx_api_unlock();
    return rc;
}

int PMPI_Group_from_session_pset(MPI_Session session, const char *pset_name, MPI_Group *newgroup)
{
    static const char fn[] = "MPI_Group_from_session_pset";
    struct plx_session *s;
    plx_api_lock();
    int rc = plx_session_get(session, &s, fn);
    int i = rc == MPI_SUCCESS ? plx_pset_index(pset_name) : -1;
    if (rc == MPI_SUCCESS && !newgroup)
        rc = plx_session_err(s, fn, MPI_ERR_ARG, "argument 'newgroup' is NULL");
    else if (rc == MPI_SUCCESS && i < 0)
        rc = plx_session_err(s, fn, MPI_ERR_ARG, "process set \"%s\" does not exist (mpi://WORLD, mpi://SELF)",
                             pset_name ? pset_name : "(NULL)");
    if (rc == MPI_SUCCESS) {
        /* a group of its own that carries the session's buffer slot into the
         * communicators made from it (MPI_Comm_create_from_group) */
        struct plx_comm *src = i == 0 ? plx_comm_world : plx_comm_self;
        struct plx_group *g = plx_group_new(src->group->size, src->group->lpids);
        if (!g)
            rc = plx_session_err(s, fn, MPI_ERR_NO_MEM, "cannot allocate a group handle");
        else {
            g->bslot = plx_bslot_addref(s->bslot);
            *newgroup = g->obj.handle;
        }
    }
    plx_api_unlock();
    return rc;
}

int PMPI_Comm_create_from_group(MPI_Group group, const char *stringtag, MPI_Info info, MPI_Errhandler errhandler,
                                MPI_Comm *newcomm)
{
    static const char fn[] = "MPI_Comm_create_from_group";
    plx_api_check_init(fn);
    if (!stringtag)
        return plx_api_null_arg(NULL, fn, "stringtag");
    if (strnlen(stringtag, MPI_MAX_STRINGTAG_LEN + 1) > MPI_MAX_STRINGTAG_LEN)
        return plx_api_err(NULL, fn, MPI_ERR_ARG, "argument 'stringtag' is longer than MPI_MAX_STRINGTAG_LEN (%d)",
                           MPI_MAX_STRINGTAG_LEN);
    if (!newcomm)
        return plx_api_null_arg(NULL, fn, "newcomm");
    plx_api_lock();
    struct plx_info *in;
    int rc = MPI_SUCCESS;
    if (info != MPI_INFO_NULL)
        rc = plx_api_info(NULL, info, &in, fn, "info");
    if (rc == MPI_SUCCESS && !plx_obj_lookup(&plx_errhandler_tab, errhandler))
        rc = plx_api_err(NULL, fn, MPI_ERR_ARG, "argument 'errhandler' is not a valid error handler (0x%x)",
                         (unsigned)errhandler);
    plx_api_unlock();
    if (rc)
        return rc;
    /* the string tag, hashed into the tag of MPI_Comm_create_group (FNV-1a) */
    unsigned h = 2166136261u;
    for (const char *p = stringtag; *p; p++)
        h = (h ^ (unsigned char)*p) * 16777619u;
    rc = PMPI_Comm_create_group(MPI_COMM_WORLD, group, (int)(h & 0x3fffffff), newcomm);
    if (rc == MPI_SUCCESS && *newcomm != MPI_COMM_NULL) {
        rc = PMPI_Comm_set_errhandler(*newcomm, errhandler);
        if (rc == MPI_SUCCESS && info != MPI_INFO_NULL)
            rc = PMPI_Comm_set_info(*newcomm, info);
    }
    return rc;
}

/* --- MPI 4.1: a buffer for buffered sends per session (api/bsend.c) ------
 * Attached, detached and flushed here. The session's groups and the
 * communicators made from them share its slot (struct plx_bslot), and a
 * buffered send on one of those without a buffer of its own uses it. */

static int plx_session_buffer_attach(MPI_Session session, void *buffer, MPI_Count size, const char *fn)
{
    struct plx_session *s;
    plx_api_lock();
    int rc = plx_session_get(session, &s, fn);
    if (rc == MPI_SUCCESS && s->bslot->pool)
        rc = plx_session_err(s, fn, MPI_ERR_BUFFER, "a buffer is already attached to this session (detach it first)");
    else if (rc == MPI_SUCCESS && buffer != MPI_BUFFER_AUTOMATIC && size < 0)
        rc = plx_session_err(s, fn, MPI_ERR_ARG, "argument 'size' is negative (%lld)", (long long)size);
    else if (rc == MPI_SUCCESS && buffer != MPI_BUFFER_AUTOMATIC && !buffer && size > 0)
        rc = plx_session_err(s, fn, MPI_ERR_BUFFER, "argument 'buffer' is NULL");
    else if (rc == MPI_SUCCESS)
        rc = plx_bpool_attach(&s->bslot->pool, buffer, size, NULL, fn, "this session");
    plx_api_unlock();
    return rc;
}

static int plx_session_buffer_detach(MPI_Session session, void *buffer_addr, void *size_p, int wide, const char *fn)
{
    struct plx_session *s;
    plx_api_lock();
    int rc = plx_session_get(session, &s, fn);
    if (rc == MPI_SUCCESS && (!buffer_addr || !size_p))
        rc = plx_session_err(s, fn, MPI_ERR_ARG, "argument '%s' is NULL", size_p ? "buffer_addr" : "size");
    else if (rc == MPI_SUCCESS)
        rc = plx_bpool_detach(&s->bslot->pool, buffer_addr, size_p, wide, NULL, fn);
    plx_api_unlock();
    return rc;
}

int PMPI_Session_attach_buffer(MPI_Session session, void *buffer, int size)
{
    return plx_session_buffer_attach(session, buffer, size, "MPI_Session_attach_buffer");
}

int PMPI_Session_attach_buffer_c(MPI_Session session, void *buffer, MPI_Count size)
{
    return plx_session_buffer_attach(session, buffer, size, "MPI_Session_attach_buffer_c");
}

int PMPI_Session_detach_buffer(MPI_Session session, void *buffer_addr, int *size)
{
    return plx_session_buffer_detach(session, buffer_addr, size, 0, "MPI_Session_detach_buffer");
}

int PMPI_Session_detach_buffer_c(MPI_Session session, void *buffer_addr, MPI_Count *size)
{
    return plx_session_buffer_detach(session, buffer_addr, size, 1, "MPI_Session_detach_buffer_c");
}

int PMPI_Session_flush_buffer(MPI_Session session)
{
    struct plx_session *s;
    plx_api_lock();
    int rc = plx_session_get(session, &s, "MPI_Session_flush_buffer");
    if (rc == MPI_SUCCESS)
        rc = plx_bpool_flush(s->bslot->pool);
    plx_api_unlock();
    return rc;
}

int PMPI_Session_iflush_buffer(MPI_Session session, MPI_Request *request)
{
    static const char fn[] = "MPI_Session_iflush_buffer";
    struct plx_session *s;
    plx_api_lock();
    int rc = plx_session_get(session, &s, fn);
    if (rc == MPI_SUCCESS && !request)
        rc = plx_session_err(s, fn, MPI_ERR_ARG, "argument 'request' is NULL");
    else if (rc == MPI_SUCCESS)
        rc = plx_bpool_iflush(s->bslot->pool, plx_comm_self, request, NULL, fn);
    plx_api_unlock();
    return rc;
}
