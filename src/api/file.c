/*
 * MPI-IO entry points (MPI_File_*): argument checks, handle decoding, error
 * classes and messages, file error handlers. The work is in src/io/.
 *
 * Errors on a file go to its error handler; errors of MPI_File_open and
 * MPI_File_delete, and of calls given an invalid file handle, go to the
 * handler of MPI_FILE_NULL, which is MPI_ERRORS_RETURN until the program
 * changes it (MPI 3.1 section 13.7). Messages name the call, the rank and
 * the file: "MPI_File_open(rank 2): file '/x/y': opening the file: No such
 * file or directory".
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "api/api.h"
#include "core/datatype.h"
#include "core/request.h"
#include "io/io.h"
#include "pm/pm.h"

/* ---- errors -------------------------------------------------------------- */

static int plx_file_invoke(struct plx_file *f, int code)
{
    struct plx_errhandler *eh = f ? f->errhandler : plx_io_default_errhandler;
    if (!eh)
        eh = plx_errhandler_return;
    switch (eh->kind) {
    case PLX_ERRH_RETURN:
        return code;
    case PLX_ERRH_USER_FILE: {
        MPI_File h = f ? plx_io_handle_out(f) : MPI_FILE_NULL;
        int c = code;
        int held = plx_lock_held();
        if (held)
            plx_api_unlock();
        eh->file_fn(&h, &c);
        if (held)
            plx_api_lock();
        return code;
    }
    default: {
        char msg[MPI_MAX_ERROR_STRING];
        plx_err_string(code, msg, sizeof msg);
        char line[MPI_MAX_ERROR_STRING + 64];
        snprintf(line, sizeof line, "rank %d: fatal error on a file: %s", plx_rt.world_rank, msg);
        plx_pm_abort(plx_err_class(code) > 0 ? plx_err_class(code) : 1, line);
    }
    }
}

static int plx_file_code_v(struct plx_file *f, const char *name, const char *fn, int cls, const char *fmt,
                           va_list ap)
{
    char text[400];
    vsnprintf(text, sizeof text, fmt, ap);
    if (!name && f)
        name = f->name;
    return name ? plx_err_make(cls, "%s(rank %d): file '%s': %s", fn, plx_rt.world_rank, name, text)
                : plx_err_make(cls, "%s(rank %d): %s", fn, plx_rt.world_rank, text);
}

/* An error code naming the call, the rank and the file (name, or f's). */
static int __attribute__((format(printf, 5, 6), cold))
plx_file_code(struct plx_file *f, const char *name, const char *fn, int cls, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int code = plx_file_code_v(f, name, fn, cls, fmt, ap);
    va_end(ap);
    return code;
}

/* Raises on f (NULL: MPI_FILE_NULL's handler); name: the file, when known. */
static int __attribute__((format(printf, 5, 6), cold))
plx_file_err(struct plx_file *f, const char *name, const char *fn, int cls, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int code = plx_file_code_v(f, name, fn, cls, fmt, ap);
    va_end(ap);
    return plx_file_invoke(f, code);
}

static int plx_file_errno_class(int e)
{
    switch (e) {
    case ENOENT: return MPI_ERR_NO_SUCH_FILE;
    case EACCES:
    case EPERM: return MPI_ERR_ACCESS;
    case EEXIST: return MPI_ERR_FILE_EXISTS;
    case EROFS: return MPI_ERR_READ_ONLY;
    case ENOSPC:
    case EFBIG: return MPI_ERR_NO_SPACE;
    case EDQUOT: return MPI_ERR_QUOTA;
    case ENAMETOOLONG:
    case ENOTDIR:
    case EISDIR:
    case ELOOP: return MPI_ERR_BAD_FILE;
    case ETXTBSY:
    case EBUSY: return MPI_ERR_FILE_IN_USE;
    case EOVERFLOW: return MPI_ERR_CONVERSION;
    case ENOMEM: return MPI_ERR_NO_MEM;
    case PLX_IO_E_NOT_SAME: return MPI_ERR_NOT_SAME;
    default: return MPI_ERR_IO;
    }
}

/* The MPI error code of an io-layer result (rc != 0). */
static int plx_file_fail_code(struct plx_file *f, const char *name, const char *fn, int rc, const char *what,
                              int rank)
{
    int cls = rc > 0 ? plx_file_errno_class(rc) : plx_status_to_class((plx_status_t)rc);
    const char *why = rc == PLX_IO_E_NOT_SAME ? "the processes passed different arguments"
                      : rc > 0              ? strerror(rc)
                      : rc == PLX_ERR_PROC_FAILED ? "a process of the file's communicator was lost"
                                                  : "communication between the processes failed";
    int me = f ? f->comm->rank : -1;
    if (rank >= 0 && rank != me && f)
        return plx_file_code(f, name, fn, cls, "failed on rank %d of the file's communicator%s%s: %s", rank,
                             what ? " while " : "", what ? what : "", why);
    return plx_file_code(f, name, fn, cls, "%s%s%s", what ? what : "", what ? ": " : "", why);
}

/* The code of the io layer's last failure on f (for a nonblocking request). */
static int plx_file_io_code(struct plx_file *f, const char *fn, int rc)
{
    const char *what = f->err_rank == f->comm->rank ? f->err_what : NULL;
    return plx_file_fail_code(f, NULL, fn, rc, what, f->err_rank);
}

/* Raises the io layer's last failure on f. */
static int plx_file_io_fail(struct plx_file *f, const char *fn, int rc)
{
    return plx_file_invoke(f, plx_file_io_code(f, fn, rc));
}

static int plx_file_arg(MPI_File fh, struct plx_file **f_p, const char *fn)
{
    plx_api_check_init(fn);
    struct plx_file *f = plx_io_lookup(fh);
    *f_p = f;
    if (plx_unlikely(!f))
        return fh == MPI_FILE_NULL
                   ? plx_file_err(NULL, NULL, fn, MPI_ERR_FILE, "argument 'fh' is MPI_FILE_NULL")
                   : plx_file_err(NULL, NULL, fn, MPI_ERR_FILE,
                                  "argument 'fh' (%p) is not a file handle (closed, or never opened)", (void *)fh);
    return MPI_SUCCESS;
}

static int plx_file_dt(struct plx_file *f, MPI_Datatype h, struct plx_datatype **dt_p, const char *fn,
                       const char *arg)
{
    struct plx_datatype *dt = plx_dt_lookup(h);
    *dt_p = dt;
    if (!dt)
        return plx_file_err(f, NULL, fn, MPI_ERR_TYPE, "argument '%s' is %s datatype (handle 0x%x)", arg,
                            h == MPI_DATATYPE_NULL ? "the null" : "an invalid", (unsigned)h);
    if (!dt->committed && !plx_dt_is_builtin(dt))
        return plx_file_err(f, NULL, fn, MPI_ERR_TYPE, "argument '%s' (handle 0x%x) is not committed", arg,
                            (unsigned)h);
    return MPI_SUCCESS;
}

static void plx_file_status(MPI_Status *st, MPI_Count bytes)
{
    if (st == MPI_STATUS_IGNORE)
        return;
    st->MPI_SOURCE = MPI_ANY_SOURCE;
    st->MPI_TAG = MPI_ANY_TAG;
    st->MPI_ERROR = MPI_SUCCESS;
    st->count_hi_and_cancelled = 0;
    plx_status_set_bytes(st, bytes);
}

/* ---- open, close, delete --------------------------------------------------- */

#pragma weak MPI_File_open = PMPI_File_open
int PMPI_File_open(MPI_Comm comm, const char *filename, int amode, MPI_Info info, MPI_File *fh)
{
    static const char fn[] = "MPI_File_open";
    struct plx_comm *c;
    struct plx_info *in = NULL;
    int rc = MPI_SUCCESS;
    plx_api_lock();
    plx_api_check_init(fn);
    /* a bad communicator is an error of the open: MPI_FILE_NULL's handler */
    if (!(c = plx_obj_lookup(&plx_comm_tab, comm))) {
        rc = plx_file_err(NULL, filename, fn, MPI_ERR_COMM, "argument 'comm' is %s communicator (handle 0x%x)",
                          comm == MPI_COMM_NULL ? "the null" : "an invalid", (unsigned)comm);
        goto out;
    }
    if (!filename) {
        rc = plx_file_err(NULL, NULL, fn, MPI_ERR_ARG, "argument 'filename' is NULL");
        goto out;
    }
    if (!fh) {
        rc = plx_file_err(NULL, filename, fn, MPI_ERR_ARG, "argument 'fh' is NULL");
        goto out;
    }
    *fh = MPI_FILE_NULL;
    if (info != MPI_INFO_NULL && !(in = plx_obj_lookup(&plx_info_tab, info))) {
        rc = plx_file_err(NULL, filename, fn, MPI_ERR_INFO, "argument 'info' is not a valid info object (handle 0x%x)",
                          (unsigned)info);
        goto out;
    }
    const int known = MPI_MODE_RDONLY | MPI_MODE_RDWR | MPI_MODE_WRONLY | MPI_MODE_CREATE | MPI_MODE_EXCL |
                      MPI_MODE_DELETE_ON_CLOSE | MPI_MODE_UNIQUE_OPEN | MPI_MODE_APPEND | MPI_MODE_SEQUENTIAL;
    int nacc = !!(amode & MPI_MODE_RDONLY) + !!(amode & MPI_MODE_RDWR) + !!(amode & MPI_MODE_WRONLY);
    const char *bad = NULL;
    if (amode & ~known)
        bad = "it has bits that are no MPI_MODE_* flag";
    else if (nacc != 1)
        bad = "exactly one of MPI_MODE_RDONLY, MPI_MODE_RDWR and MPI_MODE_WRONLY is required";
    else if ((amode & MPI_MODE_RDONLY) && (amode & (MPI_MODE_CREATE | MPI_MODE_EXCL)))
        bad = "MPI_MODE_RDONLY cannot be combined with MPI_MODE_CREATE or MPI_MODE_EXCL";
    else if ((amode & MPI_MODE_RDWR) && (amode & MPI_MODE_SEQUENTIAL))
        bad = "MPI_MODE_RDWR cannot be combined with MPI_MODE_SEQUENTIAL";
    if (bad) {
        rc = plx_file_err(NULL, filename, fn, MPI_ERR_AMODE, "invalid amode 0x%x: %s", (unsigned)amode, bad);
        goto out;
    }
    const char *path = plx_io_strip_prefix(filename);
    if (!*path) {
        rc = plx_file_err(NULL, filename, fn, MPI_ERR_BAD_FILE, "the file name is empty");
        goto out;
    }
    struct plx_file *f;
    const char *what = NULL;
    int rank = c->rank;
    int e = plx_io_open(c, path, amode, in, &f, &what, &rank);
    if (e) {
        int cls = e > 0 ? plx_file_errno_class(e) : plx_status_to_class((plx_status_t)e);
        const char *why = e == PLX_IO_E_NOT_SAME ? "the processes passed different arguments"
                          : e > 0                ? strerror(e)
                                                 : "communication failed";
        if (rank != c->rank)
            rc = plx_file_err(NULL, filename, fn, cls, "%s failed on rank %d of the communicator: %s",
                              what ? what : "opening", rank, why);
        else
            rc = plx_file_err(NULL, filename, fn, cls, "%s: %s", what ? what : "opening", why);
        goto out;
    }
    *fh = plx_io_handle_out(f);
out:
    plx_api_unlock();
    return rc;
}

#pragma weak MPI_File_close = PMPI_File_close
int PMPI_File_close(MPI_File *fh)
{
    static const char fn[] = "MPI_File_close";
    struct plx_file *f;
    int rc;
    plx_api_lock();
    plx_api_check_init(fn);
    if (!fh) {
        rc = plx_file_err(NULL, NULL, fn, MPI_ERR_ARG, "argument 'fh' is NULL");
        goto out;
    }
    if ((rc = plx_file_arg(*fh, &f, fn)))
        goto out;
    if (f->split_active) {
        rc = plx_file_err(f, NULL, fn, MPI_ERR_OTHER,
                          "a split collective is still active on the file (call its _end first)");
        goto out;
    }
    /* an error goes to the file's handler, which still sees the handle */
    int e = plx_io_close(f);
    if (e)
        rc = plx_file_io_fail(f, fn, e);
    plx_io_free(f);
    *fh = MPI_FILE_NULL;
out:
    plx_api_unlock();
    return rc;
}

#pragma weak MPI_File_delete = PMPI_File_delete
int PMPI_File_delete(const char *filename, MPI_Info info)
{
    static const char fn[] = "MPI_File_delete";
    int rc = MPI_SUCCESS;
    plx_api_lock();
    plx_api_check_init(fn);
    if (!filename) {
        rc = plx_file_err(NULL, NULL, fn, MPI_ERR_ARG, "argument 'filename' is NULL");
        goto out;
    }
    if (info != MPI_INFO_NULL && !plx_obj_lookup(&plx_info_tab, info)) {
        rc = plx_file_err(NULL, filename, fn, MPI_ERR_INFO, "argument 'info' is not a valid info object (handle 0x%x)",
                          (unsigned)info);
        goto out;
    }
    int e = plx_io_delete(plx_io_strip_prefix(filename));
    if (e)
        rc = plx_file_err(NULL, filename, fn, plx_file_errno_class(e), "deleting the file: %s", strerror(e));
out:
    plx_api_unlock();
    return rc;
}

/* ---- size, info, group, amode, sync, atomicity ----------------------------------- */

static int plx_file_size_op(MPI_File fh, MPI_Offset size, int prealloc, const char *fn)
{
    struct plx_file *f;
    int rc;
    plx_api_lock();
    if ((rc = plx_file_arg(fh, &f, fn)))
        goto out;
    if (size < 0) {
        rc = plx_file_err(f, NULL, fn, MPI_ERR_ARG, "argument 'size' is negative (%lld)", (long long)size);
        goto out;
    }
    if (f->amode & MPI_MODE_RDONLY) {
        rc = plx_file_err(f, NULL, fn, MPI_ERR_READ_ONLY, "the file was opened with MPI_MODE_RDONLY");
        goto out;
    }
    if (f->amode & MPI_MODE_SEQUENTIAL) {
        rc = plx_file_err(f, NULL, fn, MPI_ERR_UNSUPPORTED_OPERATION, "the file was opened with MPI_MODE_SEQUENTIAL");
        goto out;
    }
    int same = 1;
    int e = plx_io_same(f->comm, size, &same);
    if (!e && !same)
        e = PLX_IO_E_NOT_SAME;
    if (!e) {
        e = prealloc ? plx_io_preallocate(f, size) : plx_io_set_size(f, size);
    } else {
        f->err_rank = f->comm->rank;
        f->err_what = "comparing the sizes";
    }
    if (e)
        rc = plx_file_io_fail(f, fn, e);
out:
    plx_api_unlock();
    return rc;
}

#pragma weak MPI_File_set_size = PMPI_File_set_size
int PMPI_File_set_size(MPI_File fh, MPI_Offset size)
{
    return plx_file_size_op(fh, size, 0, "MPI_File_set_size");
}

#pragma weak MPI_File_preallocate = PMPI_File_preallocate
int PMPI_File_preallocate(MPI_File fh, MPI_Offset size)
{
    return plx_file_size_op(fh, size, 1, "MPI_File_preallocate");
}

#pragma weak MPI_File_get_size = PMPI_File_get_size
int PMPI_File_get_size(MPI_File fh, MPI_Offset *size)
{
    static const char fn[] = "MPI_File_get_size";
    struct plx_file *f;
    int rc;
    plx_api_lock();
    if ((rc = plx_file_arg(fh, &f, fn)))
        goto out;
    if (!size) {
        rc = plx_file_err(f, NULL, fn, MPI_ERR_ARG, "argument 'size' is NULL");
        goto out;
    }
    int e = plx_io_get_size(f, size);
    if (e)
        rc = plx_file_io_fail(f, fn, e);
out:
    plx_api_unlock();
    return rc;
}

#pragma weak MPI_File_get_amode = PMPI_File_get_amode
int PMPI_File_get_amode(MPI_File fh, int *amode)
{
    static const char fn[] = "MPI_File_get_amode";
    struct plx_file *f;
    int rc;
    plx_api_lock();
    if ((rc = plx_file_arg(fh, &f, fn)))
        goto out;
    if (!amode) {
        rc = plx_file_err(f, NULL, fn, MPI_ERR_ARG, "argument 'amode' is NULL");
        goto out;
    }
    *amode = f->amode;
out:
    plx_api_unlock();
    return rc;
}

#pragma weak MPI_File_get_group = PMPI_File_get_group
int PMPI_File_get_group(MPI_File fh, MPI_Group *group)
{
    static const char fn[] = "MPI_File_get_group";
    struct plx_file *f;
    int rc;
    plx_api_lock();
    if ((rc = plx_file_arg(fh, &f, fn)))
        goto out;
    if (!group) {
        rc = plx_file_err(f, NULL, fn, MPI_ERR_ARG, "argument 'group' is NULL");
        goto out;
    }
    plx_group_addref(f->comm->group);
    *group = f->comm->group->obj.handle;
out:
    plx_api_unlock();
    return rc;
}

#pragma weak MPI_File_set_info = PMPI_File_set_info
int PMPI_File_set_info(MPI_File fh, MPI_Info info)
{
    static const char fn[] = "MPI_File_set_info";
    struct plx_file *f;
    struct plx_info *in = NULL;
    int rc;
    plx_api_lock();
    if ((rc = plx_file_arg(fh, &f, fn)))
        goto out;
    if (info != MPI_INFO_NULL && !(in = plx_obj_lookup(&plx_info_tab, info))) {
        rc = plx_file_err(f, NULL, fn, MPI_ERR_INFO, "argument 'info' is not a valid info object (handle 0x%x)",
                          (unsigned)info);
        goto out;
    }
    plx_io_hints_apply(f, in);
out:
    plx_api_unlock();
    return rc;
}

#pragma weak MPI_File_get_info = PMPI_File_get_info
int PMPI_File_get_info(MPI_File fh, MPI_Info *info_used)
{
    static const char fn[] = "MPI_File_get_info";
    struct plx_file *f;
    int rc;
    plx_api_lock();
    if ((rc = plx_file_arg(fh, &f, fn)))
        goto out;
    if (!info_used) {
        rc = plx_file_err(f, NULL, fn, MPI_ERR_ARG, "argument 'info_used' is NULL");
        goto out;
    }
    *info_used = plx_io_hints_info(f)->obj.handle;
out:
    plx_api_unlock();
    return rc;
}

#pragma weak MPI_File_sync = PMPI_File_sync
int PMPI_File_sync(MPI_File fh)
{
    static const char fn[] = "MPI_File_sync";
    struct plx_file *f;
    int rc;
    plx_api_lock();
    if ((rc = plx_file_arg(fh, &f, fn)))
        goto out;
    int e = plx_io_sync(f);
    if (e)
        rc = plx_file_io_fail(f, fn, e);
out:
    plx_api_unlock();
    return rc;
}

#pragma weak MPI_File_set_atomicity = PMPI_File_set_atomicity
int PMPI_File_set_atomicity(MPI_File fh, int flag)
{
    static const char fn[] = "MPI_File_set_atomicity";
    struct plx_file *f;
    int rc;
    plx_api_lock();
    if ((rc = plx_file_arg(fh, &f, fn)))
        goto out;
    int same = 1;
    int e = plx_io_same(f->comm, flag != 0, &same);
    if (!e && !same)
        e = PLX_IO_E_NOT_SAME;
    if (e) {
        f->err_rank = f->comm->rank;
        f->err_what = "comparing the flags";
        rc = plx_file_io_fail(f, fn, e);
        goto out;
    }
    f->atomic = flag != 0;
out:
    plx_api_unlock();
    return rc;
}

#pragma weak MPI_File_get_atomicity = PMPI_File_get_atomicity
int PMPI_File_get_atomicity(MPI_File fh, int *flag)
{
    static const char fn[] = "MPI_File_get_atomicity";
    struct plx_file *f;
    int rc;
    plx_api_lock();
    if ((rc = plx_file_arg(fh, &f, fn)))
        goto out;
    if (!flag) {
        rc = plx_file_err(f, NULL, fn, MPI_ERR_ARG, "argument 'flag' is NULL");
        goto out;
    }
    *flag = f->atomic;
out:
    plx_api_unlock();
    return rc;
}

/* ---- views -------------------------------------------------------------------------- */

#pragma weak MPI_File_set_view = PMPI_File_set_view
int PMPI_File_set_view(MPI_File fh, MPI_Offset disp, MPI_Datatype etype, MPI_Datatype filetype,
                       const char *datarep, MPI_Info info)
{
    static const char fn[] = "MPI_File_set_view";
    struct plx_file *f;
    struct plx_datatype *et, *ft;
    struct plx_info *in = NULL;
    int rc;
    plx_api_lock();
    if ((rc = plx_file_arg(fh, &f, fn)))
        goto out;
    if ((rc = plx_file_dt(f, etype, &et, fn, "etype")) || (rc = plx_file_dt(f, filetype, &ft, fn, "filetype")))
        goto out;
    if (!datarep) {
        rc = plx_file_err(f, NULL, fn, MPI_ERR_ARG, "argument 'datarep' is NULL");
        goto out;
    }
    if (info != MPI_INFO_NULL && !(in = plx_obj_lookup(&plx_info_tab, info))) {
        rc = plx_file_err(f, NULL, fn, MPI_ERR_INFO, "argument 'info' is not a valid info object (handle 0x%x)",
                          (unsigned)info);
        goto out;
    }
    if (disp == MPI_DISPLACEMENT_CURRENT) {
        if (!(f->amode & MPI_MODE_SEQUENTIAL)) {
            rc = plx_file_err(f, NULL, fn, MPI_ERR_ARG,
                              "MPI_DISPLACEMENT_CURRENT is allowed only on files opened with MPI_MODE_SEQUENTIAL");
            goto out;
        }
        MPI_Offset cur = 0;
        int e = plx_io_shfp_get(f, &cur);
        if (e) {
            rc = plx_file_io_fail(f, fn, e);
            goto out;
        }
        disp = plx_io_view_map(f, cur * f->etype->size, 1, &(MPI_Offset){ 0 });
    } else if (disp < 0) {
        rc = plx_file_err(f, NULL, fn, MPI_ERR_ARG, "argument 'disp' is negative (%lld)", (long long)disp);
        goto out;
    }
    int rep = !strcmp(datarep, "native")       ? 0
              : !strcmp(datarep, "internal")   ? 1
              : !strcmp(datarep, "external32") ? 2
                                               : -1;
    const struct plx_io_datarep *drep = rep < 0 ? plx_io_datarep_find(datarep) : NULL;
    if (drep)
        rep = 3;
    if (rep < 0) {
        rc = plx_file_err(f, NULL, fn, MPI_ERR_UNSUPPORTED_DATAREP,
                          "data representation '%.64s' is not supported (native, internal, external32, or one "
                          "made by MPI_Register_datarep)", datarep);
        goto out;
    }
    if (drep && (!plx_io_datarep_fits(drep, et) || !plx_io_datarep_fits(drep, ft))) {
        rc = plx_file_err(f, NULL, fn, MPI_ERR_UNSUPPORTED_DATAREP,
                          "data representation '%.64s': supported where every basic type of the etype and filetype "
                          "keeps its native size (and is one kind per type)", datarep);
        goto out;
    }
    if (rep == 2 && (plx_dt_external32_size(et, 1) != et->size || plx_dt_external32_size(ft, 1) != ft->size)) {
        rc = plx_file_err(f, NULL, fn, MPI_ERR_UNSUPPORTED_DATAREP,
                          "external32 is supported for types whose external32 size equals their native size; "
                          "the %s is not one", plx_dt_external32_size(et, 1) != et->size ? "etype" : "filetype");
        goto out;
    }
    const char *why = plx_io_view_check(et, ft);
    if (why) {
        rc = plx_file_err(f, NULL, fn, MPI_ERR_TYPE, "invalid view: %s", why);
        goto out;
    }
    /* datarep and etype size must agree everywhere (MPI 3.1 section 13.3) */
    int same = 1;
    int e = plx_io_same(f->comm, ((long long)rep << 48) ^ (long long)et->size, &same);
    if (!e && !same)
        e = PLX_IO_E_NOT_SAME;
    if (e) {
        f->err_rank = f->comm->rank;
        f->err_what = "comparing datarep and etype size between the processes";
        rc = plx_file_io_fail(f, fn, e);
        goto out;
    }
    plx_io_set_view(f, disp, et, ft, rep == 1 ? "native" : datarep);
    if (rep == 1)
        snprintf(f->datarep, sizeof f->datarep, "internal");
    if (in)
        plx_io_hints_apply(f, in);
    e = f->comm->rank == 0 ? plx_io_shfp_reset(f) : 0;
    e = plx_io_agree(f, e);     /* nobody uses the shared pointer before it is reset */
    if (e)
        rc = plx_file_io_fail(f, fn, e);
out:
    plx_api_unlock();
    return rc;
}

static MPI_Datatype plx_file_type_out(struct plx_datatype *dt)
{
    if (plx_dt_is_builtin(dt))
        return dt->obj.handle;
    struct plx_datatype *d = plx_dt_dup(dt);
    if (!d)
        return MPI_DATATYPE_NULL;
    d->committed = 1;
    return d->obj.handle;
}

#pragma weak MPI_File_get_view = PMPI_File_get_view
int PMPI_File_get_view(MPI_File fh, MPI_Offset *disp, MPI_Datatype *etype, MPI_Datatype *filetype, char *datarep)
{
    static const char fn[] = "MPI_File_get_view";
    struct plx_file *f;
    int rc;
    plx_api_lock();
    if ((rc = plx_file_arg(fh, &f, fn)))
        goto out;
    if (!disp || !etype || !filetype || !datarep) {
        rc = plx_file_err(f, NULL, fn, MPI_ERR_ARG, "argument '%s' is NULL",
                          !disp ? "disp" : !etype ? "etype" : !filetype ? "filetype" : "datarep");
        goto out;
    }
    *disp = f->disp;
    *etype = plx_file_type_out(f->etype);
    *filetype = plx_file_type_out(f->filetype);
    snprintf(datarep, MPI_MAX_DATAREP_STRING, "%s", f->datarep);
out:
    plx_api_unlock();
    return rc;
}

static int plx_file_type_extent(MPI_File fh, MPI_Datatype datatype, MPI_Aint *extent, const char *fn)
{
    struct plx_file *f;
    struct plx_datatype *dt;
    int rc;
    plx_api_lock();
    if ((rc = plx_file_arg(fh, &f, fn)))
        goto out;
    dt = plx_dt_lookup(datatype);
    if (!dt) {
        rc = plx_file_err(f, NULL, fn, MPI_ERR_TYPE, "argument 'datatype' is %s datatype (handle 0x%x)",
                          datatype == MPI_DATATYPE_NULL ? "the null" : "an invalid", (unsigned)datatype);
        goto out;
    }
    if (!extent) {
        rc = plx_file_err(f, NULL, fn, MPI_ERR_ARG, "argument 'extent' is NULL");
        goto out;
    }
    *extent = dt->extent;
    if (f->external32) {
        MPI_Count x = plx_dt_external32_size(dt, 1);
        if (x >= 0 && x != dt->size)
            *extent = (MPI_Aint)x;
    }
out:
    plx_api_unlock();
    return rc;
}

#pragma weak MPI_File_get_type_extent = PMPI_File_get_type_extent
int PMPI_File_get_type_extent(MPI_File fh, MPI_Datatype datatype, MPI_Aint *extent)
{
    return plx_file_type_extent(fh, datatype, extent, "MPI_File_get_type_extent");
}

/* ---- data access ------------------------------------------------------------------------ */

enum plx_file_pos { PLX_POS_AT, PLX_POS_INDIV, PLX_POS_SHARED, PLX_POS_ORDERED };
enum plx_file_call { PLX_CALL_BLOCKING, PLX_CALL_NONBLOCKING, PLX_CALL_BEGIN };

struct plx_file_acc {
    const char *fn;
    int pos_kind;               /* enum plx_file_pos */
    int is_write;
    int coll;
    int call;                   /* enum plx_file_call */
};

static int plx_file_access(MPI_File fh, MPI_Offset offset, void *buf, MPI_Count count, MPI_Datatype datatype,
                           MPI_Status *status, MPI_Request *request, const struct plx_file_acc *a)
{
    const char *fn = a->fn;
    struct plx_file *f;
    struct plx_datatype *dt;
    int rc;
    plx_api_lock();
    if ((rc = plx_file_arg(fh, &f, fn)))
        goto out;
    if (a->call == PLX_CALL_NONBLOCKING && !request) {
        rc = plx_file_err(f, NULL, fn, MPI_ERR_ARG, "argument 'request' is NULL");
        goto out;
    }
    if (count < 0) {
        rc = plx_file_err(f, NULL, fn, MPI_ERR_COUNT, "argument 'count' is negative (%lld)", (long long)count);
        goto out;
    }
    if ((rc = plx_file_dt(f, datatype, &dt, fn, "datatype")))
        goto out;
    if (!buf && count > 0 && dt->size > 0) {
        rc = plx_file_err(f, NULL, fn, MPI_ERR_BUFFER, "argument 'buf' is NULL with count %lld", (long long)count);
        goto out;
    }
    if (dt->size % f->etype->size) {
        rc = plx_file_err(f, NULL, fn, MPI_ERR_TYPE,
                          "the datatype's size (%lld bytes) is not a multiple of the view's etype size (%lld)",
                          (long long)dt->size, (long long)f->etype->size);
        goto out;
    }
    if (f->external32 && plx_dt_external32_size(dt, 1) != dt->size) {
        rc = plx_file_err(f, NULL, fn, MPI_ERR_UNSUPPORTED_DATAREP,
                          "the view is external32 and this datatype's external32 size differs from its native size");
        goto out;
    }
    if (f->drep && !plx_io_datarep_fits(f->drep, dt)) {
        rc = plx_file_err(f, NULL, fn, MPI_ERR_UNSUPPORTED_DATAREP,
                          "data representation '%s' does not keep this datatype's native size", f->datarep);
        goto out;
    }
    if (a->is_write && (f->amode & MPI_MODE_RDONLY)) {
        rc = plx_file_err(f, NULL, fn, MPI_ERR_READ_ONLY, "the file was opened with MPI_MODE_RDONLY");
        goto out;
    }
    if (!a->is_write && (f->amode & MPI_MODE_WRONLY)) {
        rc = plx_file_err(f, NULL, fn, MPI_ERR_ACCESS, "the file was opened with MPI_MODE_WRONLY");
        goto out;
    }
    if ((f->amode & MPI_MODE_SEQUENTIAL) && (a->pos_kind == PLX_POS_AT || a->pos_kind == PLX_POS_INDIV)) {
        rc = plx_file_err(f, NULL, fn, MPI_ERR_UNSUPPORTED_OPERATION,
                          "the file was opened with MPI_MODE_SEQUENTIAL: only the shared file pointer may be used");
        goto out;
    }
    if (a->pos_kind == PLX_POS_AT && offset < 0) {
        rc = plx_file_err(f, NULL, fn, MPI_ERR_ARG, "argument 'offset' is negative (%lld)", (long long)offset);
        goto out;
    }
    if (a->call == PLX_CALL_BEGIN && f->split_active) {
        rc = plx_file_err(f, NULL, fn, MPI_ERR_OTHER,
                          "a split collective is already active on this file (one at a time per file)");
        goto out;
    }
    MPI_Offset esize = f->etype->size;
    MPI_Offset netypes = (MPI_Offset)count * dt->size / esize;
    MPI_Offset at = 0;
    int e = 0;
    switch (a->pos_kind) {
    case PLX_POS_AT:
        at = offset;
        break;
    case PLX_POS_INDIV:
        at = f->fp;
        break;
    case PLX_POS_SHARED:
        e = plx_io_shfp_fetch_add(f, netypes, &at);
        break;
    case PLX_POS_ORDERED:
        e = plx_io_shfp_ordered(f, netypes, &at);
        break;
    }
    if (e) {
        rc = plx_file_io_fail(f, fn, e);
        goto out;
    }
    MPI_Count done = 0;
    MPI_Offset pos = at * esize;
    if (a->coll && a->call == PLX_CALL_NONBLOCKING) {
        /* runs on from the progress engine; the pointer moves now (MPI 3.1 section 13.4.3) */
        struct plx_request *r = plx_io_coll_start(f, a->is_write, pos, buf, count, dt, plx_file_io_code, fn);
        if (a->pos_kind == PLX_POS_INDIV)
            f->fp += netypes;
        *request = r->obj.handle;
        goto out;
    }
    if (a->coll)
        e = a->is_write ? plx_io_write_all(f, pos, buf, count, dt, &done)
                        : plx_io_read_all(f, pos, buf, count, dt, &done);
    else
        e = a->is_write ? plx_io_write(f, pos, buf, count, dt, &done) : plx_io_read(f, pos, buf, count, dt, &done);
    if (a->pos_kind == PLX_POS_INDIV)
        f->fp += done / esize;
    if (e) {
        rc = plx_file_io_fail(f, fn, e);
        goto out;
    }
    switch (a->call) {
    case PLX_CALL_BLOCKING:
        plx_file_status(status, done);
        break;
    case PLX_CALL_NONBLOCKING: {
        struct plx_request *r = plx_request_new(PLX_REQ_FILE, f->comm);
        r->rank = MPI_PROC_NULL;        /* nothing to cancel */
        r->st_source = MPI_ANY_SOURCE;
        r->st_tag = MPI_ANY_TAG;
        r->st_bytes = (size_t)done;
        r->cc = 0;
        *request = r->obj.handle;
        break;
    }
    case PLX_CALL_BEGIN:
        f->split_active = 1;
        f->split_buf = buf;
        f->split_bytes = done;
        break;
    }
out:
    plx_api_unlock();
    return rc;
}

#define PLX_FILE_ACC(name, pos, wr, coll, call) \
    static const struct plx_file_acc a = { name, pos, wr, coll, call }

#pragma weak MPI_File_read_at = PMPI_File_read_at
int PMPI_File_read_at(MPI_File fh, MPI_Offset offset, void *buf, int count, MPI_Datatype datatype, MPI_Status *status)
{
    PLX_FILE_ACC("MPI_File_read_at", PLX_POS_AT, 0, 0, PLX_CALL_BLOCKING);
    return plx_file_access(fh, offset, buf, count, datatype, status, NULL, &a);
}

#pragma weak MPI_File_read_at_all = PMPI_File_read_at_all
int PMPI_File_read_at_all(MPI_File fh, MPI_Offset offset, void *buf, int count, MPI_Datatype datatype,
                          MPI_Status *status)
{
    PLX_FILE_ACC("MPI_File_read_at_all", PLX_POS_AT, 0, 1, PLX_CALL_BLOCKING);
    return plx_file_access(fh, offset, buf, count, datatype, status, NULL, &a);
}

#pragma weak MPI_File_write_at = PMPI_File_write_at
int PMPI_File_write_at(MPI_File fh, MPI_Offset offset, const void *buf, int count, MPI_Datatype datatype,
                       MPI_Status *status)
{
    PLX_FILE_ACC("MPI_File_write_at", PLX_POS_AT, 1, 0, PLX_CALL_BLOCKING);
    return plx_file_access(fh, offset, (void *)buf, count, datatype, status, NULL, &a);
}

#pragma weak MPI_File_write_at_all = PMPI_File_write_at_all
int PMPI_File_write_at_all(MPI_File fh, MPI_Offset offset, const void *buf, int count, MPI_Datatype datatype,
                           MPI_Status *status)
{
    PLX_FILE_ACC("MPI_File_write_at_all", PLX_POS_AT, 1, 1, PLX_CALL_BLOCKING);
    return plx_file_access(fh, offset, (void *)buf, count, datatype, status, NULL, &a);
}

#pragma weak MPI_File_iread_at = PMPI_File_iread_at
int PMPI_File_iread_at(MPI_File fh, MPI_Offset offset, void *buf, int count, MPI_Datatype datatype,
                       MPI_Request *request)
{
    PLX_FILE_ACC("MPI_File_iread_at", PLX_POS_AT, 0, 0, PLX_CALL_NONBLOCKING);
    return plx_file_access(fh, offset, buf, count, datatype, NULL, request, &a);
}

#pragma weak MPI_File_iwrite_at = PMPI_File_iwrite_at
int PMPI_File_iwrite_at(MPI_File fh, MPI_Offset offset, const void *buf, int count, MPI_Datatype datatype,
                        MPI_Request *request)
{
    PLX_FILE_ACC("MPI_File_iwrite_at", PLX_POS_AT, 1, 0, PLX_CALL_NONBLOCKING);
    return plx_file_access(fh, offset, (void *)buf, count, datatype, NULL, request, &a);
}

#pragma weak MPI_File_iread_at_all = PMPI_File_iread_at_all
int PMPI_File_iread_at_all(MPI_File fh, MPI_Offset offset, void *buf, int count, MPI_Datatype datatype,
                           MPI_Request *request)
{
    PLX_FILE_ACC("MPI_File_iread_at_all", PLX_POS_AT, 0, 1, PLX_CALL_NONBLOCKING);
    return plx_file_access(fh, offset, buf, count, datatype, NULL, request, &a);
}

#pragma weak MPI_File_iwrite_at_all = PMPI_File_iwrite_at_all
int PMPI_File_iwrite_at_all(MPI_File fh, MPI_Offset offset, const void *buf, int count, MPI_Datatype datatype,
                            MPI_Request *request)
{
    PLX_FILE_ACC("MPI_File_iwrite_at_all", PLX_POS_AT, 1, 1, PLX_CALL_NONBLOCKING);
    return plx_file_access(fh, offset, (void *)buf, count, datatype, NULL, request, &a);
}

#pragma weak MPI_File_read = PMPI_File_read
int PMPI_File_read(MPI_File fh, void *buf, int count, MPI_Datatype datatype, MPI_Status *status)
{
    PLX_FILE_ACC("MPI_File_read", PLX_POS_INDIV, 0, 0, PLX_CALL_BLOCKING);
    return plx_file_access(fh, 0, buf, count, datatype, status, NULL, &a);
}

#pragma weak MPI_File_read_all = PMPI_File_read_all
int PMPI_File_read_all(MPI_File fh, void *buf, int count, MPI_Datatype datatype, MPI_Status *status)
{
    PLX_FILE_ACC("MPI_File_read_all", PLX_POS_INDIV, 0, 1, PLX_CALL_BLOCKING);
    return plx_file_access(fh, 0, buf, count, datatype, status, NULL, &a);
}

#pragma weak MPI_File_write = PMPI_File_write
int PMPI_File_write(MPI_File fh, const void *buf, int count, MPI_Datatype datatype, MPI_Status *status)
{
    PLX_FILE_ACC("MPI_File_write", PLX_POS_INDIV, 1, 0, PLX_CALL_BLOCKING);
    return plx_file_access(fh, 0, (void *)buf, count, datatype, status, NULL, &a);
}

#pragma weak MPI_File_write_all = PMPI_File_write_all
int PMPI_File_write_all(MPI_File fh, const void *buf, int count, MPI_Datatype datatype, MPI_Status *status)
{
    PLX_FILE_ACC("MPI_File_write_all", PLX_POS_INDIV, 1, 1, PLX_CALL_BLOCKING);
    return plx_file_access(fh, 0, (void *)buf, count, datatype, status, NULL, &a);
}

#pragma weak MPI_File_iread = PMPI_File_iread
int PMPI_File_iread(MPI_File fh, void *buf, int count, MPI_Datatype datatype, MPI_Request *request)
{
    PLX_FILE_ACC("MPI_File_iread", PLX_POS_INDIV, 0, 0, PLX_CALL_NONBLOCKING);
    return plx_file_access(fh, 0, buf, count, datatype, NULL, request, &a);
}

#pragma weak MPI_File_iwrite = PMPI_File_iwrite
int PMPI_File_iwrite(MPI_File fh, const void *buf, int count, MPI_Datatype datatype, MPI_Request *request)
{
    PLX_FILE_ACC("MPI_File_iwrite", PLX_POS_INDIV, 1, 0, PLX_CALL_NONBLOCKING);
    return plx_file_access(fh, 0, (void *)buf, count, datatype, NULL, request, &a);
}

#pragma weak MPI_File_iread_all = PMPI_File_iread_all
int PMPI_File_iread_all(MPI_File fh, void *buf, int count, MPI_Datatype datatype, MPI_Request *request)
{
    PLX_FILE_ACC("MPI_File_iread_all", PLX_POS_INDIV, 0, 1, PLX_CALL_NONBLOCKING);
    return plx_file_access(fh, 0, buf, count, datatype, NULL, request, &a);
}

#pragma weak MPI_File_iwrite_all = PMPI_File_iwrite_all
int PMPI_File_iwrite_all(MPI_File fh, const void *buf, int count, MPI_Datatype datatype, MPI_Request *request)
{
    PLX_FILE_ACC("MPI_File_iwrite_all", PLX_POS_INDIV, 1, 1, PLX_CALL_NONBLOCKING);
    return plx_file_access(fh, 0, (void *)buf, count, datatype, NULL, request, &a);
}

#pragma weak MPI_File_read_shared = PMPI_File_read_shared
int PMPI_File_read_shared(MPI_File fh, void *buf, int count, MPI_Datatype datatype, MPI_Status *status)
{
    PLX_FILE_ACC("MPI_File_read_shared", PLX_POS_SHARED, 0, 0, PLX_CALL_BLOCKING);
    return plx_file_access(fh, 0, buf, count, datatype, status, NULL, &a);
}

#pragma weak MPI_File_write_shared = PMPI_File_write_shared
int PMPI_File_write_shared(MPI_File fh, const void *buf, int count, MPI_Datatype datatype, MPI_Status *status)
{
    PLX_FILE_ACC("MPI_File_write_shared", PLX_POS_SHARED, 1, 0, PLX_CALL_BLOCKING);
    return plx_file_access(fh, 0, (void *)buf, count, datatype, status, NULL, &a);
}

#pragma weak MPI_File_iread_shared = PMPI_File_iread_shared
int PMPI_File_iread_shared(MPI_File fh, void *buf, int count, MPI_Datatype datatype, MPI_Request *request)
{
    PLX_FILE_ACC("MPI_File_iread_shared", PLX_POS_SHARED, 0, 0, PLX_CALL_NONBLOCKING);
    return plx_file_access(fh, 0, buf, count, datatype, NULL, request, &a);
}

#pragma weak MPI_File_iwrite_shared = PMPI_File_iwrite_shared
int PMPI_File_iwrite_shared(MPI_File fh, const void *buf, int count, MPI_Datatype datatype, MPI_Request *request)
{
    PLX_FILE_ACC("MPI_File_iwrite_shared", PLX_POS_SHARED, 1, 0, PLX_CALL_NONBLOCKING);
    return plx_file_access(fh, 0, (void *)buf, count, datatype, NULL, request, &a);
}

#pragma weak MPI_File_read_ordered = PMPI_File_read_ordered
int PMPI_File_read_ordered(MPI_File fh, void *buf, int count, MPI_Datatype datatype, MPI_Status *status)
{
    PLX_FILE_ACC("MPI_File_read_ordered", PLX_POS_ORDERED, 0, 1, PLX_CALL_BLOCKING);
    return plx_file_access(fh, 0, buf, count, datatype, status, NULL, &a);
}

#pragma weak MPI_File_write_ordered = PMPI_File_write_ordered
int PMPI_File_write_ordered(MPI_File fh, const void *buf, int count, MPI_Datatype datatype, MPI_Status *status)
{
    PLX_FILE_ACC("MPI_File_write_ordered", PLX_POS_ORDERED, 1, 1, PLX_CALL_BLOCKING);
    return plx_file_access(fh, 0, (void *)buf, count, datatype, status, NULL, &a);
}

/* ---- split collectives ------------------------------------------------------------------- */

#pragma weak MPI_File_read_at_all_begin = PMPI_File_read_at_all_begin
int PMPI_File_read_at_all_begin(MPI_File fh, MPI_Offset offset, void *buf, int count, MPI_Datatype datatype)
{
    PLX_FILE_ACC("MPI_File_read_at_all_begin", PLX_POS_AT, 0, 1, PLX_CALL_BEGIN);
    return plx_file_access(fh, offset, buf, count, datatype, NULL, NULL, &a);
}

#pragma weak MPI_File_write_at_all_begin = PMPI_File_write_at_all_begin
int PMPI_File_write_at_all_begin(MPI_File fh, MPI_Offset offset, const void *buf, int count, MPI_Datatype datatype)
{
    PLX_FILE_ACC("MPI_File_write_at_all_begin", PLX_POS_AT, 1, 1, PLX_CALL_BEGIN);
    return plx_file_access(fh, offset, (void *)buf, count, datatype, NULL, NULL, &a);
}

#pragma weak MPI_File_read_all_begin = PMPI_File_read_all_begin
int PMPI_File_read_all_begin(MPI_File fh, void *buf, int count, MPI_Datatype datatype)
{
    PLX_FILE_ACC("MPI_File_read_all_begin", PLX_POS_INDIV, 0, 1, PLX_CALL_BEGIN);
    return plx_file_access(fh, 0, buf, count, datatype, NULL, NULL, &a);
}

#pragma weak MPI_File_write_all_begin = PMPI_File_write_all_begin
int PMPI_File_write_all_begin(MPI_File fh, const void *buf, int count, MPI_Datatype datatype)
{
    PLX_FILE_ACC("MPI_File_write_all_begin", PLX_POS_INDIV, 1, 1, PLX_CALL_BEGIN);
    return plx_file_access(fh, 0, (void *)buf, count, datatype, NULL, NULL, &a);
}

#pragma weak MPI_File_read_ordered_begin = PMPI_File_read_ordered_begin
int PMPI_File_read_ordered_begin(MPI_File fh, void *buf, int count, MPI_Datatype datatype)
{
    PLX_FILE_ACC("MPI_File_read_ordered_begin", PLX_POS_ORDERED, 0, 1, PLX_CALL_BEGIN);
    return plx_file_access(fh, 0, buf, count, datatype, NULL, NULL, &a);
}

#pragma weak MPI_File_write_ordered_begin = PMPI_File_write_ordered_begin
int PMPI_File_write_ordered_begin(MPI_File fh, const void *buf, int count, MPI_Datatype datatype)
{
    PLX_FILE_ACC("MPI_File_write_ordered_begin", PLX_POS_ORDERED, 1, 1, PLX_CALL_BEGIN);
    return plx_file_access(fh, 0, (void *)buf, count, datatype, NULL, NULL, &a);
}

static int plx_file_split_end(MPI_File fh, const void *buf, MPI_Status *status, const char *fn)
{
    struct plx_file *f;
    int rc;
    plx_api_lock();
    if ((rc = plx_file_arg(fh, &f, fn)))
        goto out;
    if (!f->split_active) {
        rc = plx_file_err(f, NULL, fn, MPI_ERR_OTHER,
                          "no split collective is active on this file (call the _begin first)");
        goto out;
    }
    if (buf != f->split_buf) {
        rc = plx_file_err(f, NULL, fn, MPI_ERR_BUFFER, "argument 'buf' (%p) is not the buffer given to the _begin (%p)",
                          buf, f->split_buf);
        goto out;
    }
    f->split_active = 0;
    plx_file_status(status, f->split_bytes);
out:
    plx_api_unlock();
    return rc;
}

#pragma weak MPI_File_read_at_all_end = PMPI_File_read_at_all_end
int PMPI_File_read_at_all_end(MPI_File fh, void *buf, MPI_Status *status)
{
    return plx_file_split_end(fh, buf, status, "MPI_File_read_at_all_end");
}

#pragma weak MPI_File_write_at_all_end = PMPI_File_write_at_all_end
int PMPI_File_write_at_all_end(MPI_File fh, const void *buf, MPI_Status *status)
{
    return plx_file_split_end(fh, buf, status, "MPI_File_write_at_all_end");
}

#pragma weak MPI_File_read_all_end = PMPI_File_read_all_end
int PMPI_File_read_all_end(MPI_File fh, void *buf, MPI_Status *status)
{
    return plx_file_split_end(fh, buf, status, "MPI_File_read_all_end");
}

#pragma weak MPI_File_write_all_end = PMPI_File_write_all_end
int PMPI_File_write_all_end(MPI_File fh, const void *buf, MPI_Status *status)
{
    return plx_file_split_end(fh, buf, status, "MPI_File_write_all_end");
}

#pragma weak MPI_File_read_ordered_end = PMPI_File_read_ordered_end
int PMPI_File_read_ordered_end(MPI_File fh, void *buf, MPI_Status *status)
{
    return plx_file_split_end(fh, buf, status, "MPI_File_read_ordered_end");
}

#pragma weak MPI_File_write_ordered_end = PMPI_File_write_ordered_end
int PMPI_File_write_ordered_end(MPI_File fh, const void *buf, MPI_Status *status)
{
    return plx_file_split_end(fh, buf, status, "MPI_File_write_ordered_end");
}

/* ---- file pointers ----------------------------------------------------------------------- */

/* The etype offset of the end of the file in the current view (rounded up:
 * a partial etype at the end is not overwritten by a write there). */
static int plx_file_end_etypes(struct plx_file *f, MPI_Offset *end_p)
{
    MPI_Offset size;
    int e = plx_io_get_size(f, &size);
    if (e)
        return e;
    MPI_Offset b = plx_io_view_bytes_before(f, size), es = f->etype->size;
    *end_p = (b + es - 1) / es;
    return 0;
}

static int plx_file_whence(struct plx_file *f, int whence, const char *fn)
{
    if (whence == MPI_SEEK_SET || whence == MPI_SEEK_CUR || whence == MPI_SEEK_END)
        return MPI_SUCCESS;
    return plx_file_err(f, NULL, fn, MPI_ERR_ARG,
                        "argument 'whence' is %d, not MPI_SEEK_SET (%d), MPI_SEEK_CUR (%d) or MPI_SEEK_END (%d)",
                        whence, MPI_SEEK_SET, MPI_SEEK_CUR, MPI_SEEK_END);
}

#pragma weak MPI_File_seek = PMPI_File_seek
int PMPI_File_seek(MPI_File fh, MPI_Offset offset, int whence)
{
    static const char fn[] = "MPI_File_seek";
    struct plx_file *f;
    int rc;
    plx_api_lock();
    if ((rc = plx_file_arg(fh, &f, fn)) || (rc = plx_file_whence(f, whence, fn)))
        goto out;
    if (f->amode & MPI_MODE_SEQUENTIAL) {
        rc = plx_file_err(f, NULL, fn, MPI_ERR_UNSUPPORTED_OPERATION, "the file was opened with MPI_MODE_SEQUENTIAL");
        goto out;
    }
    MPI_Offset base = 0;
    if (whence == MPI_SEEK_CUR)
        base = f->fp;
    else if (whence == MPI_SEEK_END) {
        int e = plx_file_end_etypes(f, &base);
        if (e) {
            rc = plx_file_io_fail(f, fn, e);
            goto out;
        }
    }
    if (base + offset < 0) {
        rc = plx_file_err(f, NULL, fn, MPI_ERR_ARG, "the new position (%lld etypes) would be negative",
                          (long long)(base + offset));
        goto out;
    }
    f->fp = base + offset;
out:
    plx_api_unlock();
    return rc;
}

#pragma weak MPI_File_get_position = PMPI_File_get_position
int PMPI_File_get_position(MPI_File fh, MPI_Offset *offset)
{
    static const char fn[] = "MPI_File_get_position";
    struct plx_file *f;
    int rc;
    plx_api_lock();
    if ((rc = plx_file_arg(fh, &f, fn)))
        goto out;
    if (!offset) {
        rc = plx_file_err(f, NULL, fn, MPI_ERR_ARG, "argument 'offset' is NULL");
        goto out;
    }
    *offset = f->fp;
out:
    plx_api_unlock();
    return rc;
}

#pragma weak MPI_File_get_byte_offset = PMPI_File_get_byte_offset
int PMPI_File_get_byte_offset(MPI_File fh, MPI_Offset offset, MPI_Offset *disp)
{
    static const char fn[] = "MPI_File_get_byte_offset";
    struct plx_file *f;
    int rc;
    plx_api_lock();
    if ((rc = plx_file_arg(fh, &f, fn)))
        goto out;
    if (!disp) {
        rc = plx_file_err(f, NULL, fn, MPI_ERR_ARG, "argument 'disp' is NULL");
        goto out;
    }
    if (offset < 0) {
        rc = plx_file_err(f, NULL, fn, MPI_ERR_ARG, "argument 'offset' is negative (%lld)", (long long)offset);
        goto out;
    }
    MPI_Offset contig;
    *disp = plx_io_view_map(f, offset * f->etype->size, 1, &contig);
out:
    plx_api_unlock();
    return rc;
}

#pragma weak MPI_File_seek_shared = PMPI_File_seek_shared
int PMPI_File_seek_shared(MPI_File fh, MPI_Offset offset, int whence)
{
    static const char fn[] = "MPI_File_seek_shared";
    struct plx_file *f;
    int rc;
    plx_api_lock();
    if ((rc = plx_file_arg(fh, &f, fn)) || (rc = plx_file_whence(f, whence, fn)))
        goto out;
    int same = 1;
    int e = plx_io_same(f->comm, offset * 4 + (whence - MPI_SEEK_SET) / 2, &same);
    if (!e && !same)
        e = PLX_IO_E_NOT_SAME;
    if (e) {
        f->err_rank = f->comm->rank;
        f->err_what = "comparing offset and whence between the processes";
        rc = plx_file_io_fail(f, fn, e);
        goto out;
    }
    if (f->comm->rank == 0) {
        MPI_Offset base = 0;
        if (whence == MPI_SEEK_CUR)
            e = plx_io_shfp_get(f, &base);
        else if (whence == MPI_SEEK_END)
            e = plx_file_end_etypes(f, &base);
        if (!e && base + offset < 0) {
            e = EINVAL;
            f->err_what = "seeking to a negative position";
        }
        if (!e)
            e = plx_io_shfp_set(f, base + offset);
    }
    e = plx_io_agree(f, e);
    if (e)
        rc = plx_file_io_fail(f, fn, e);
out:
    plx_api_unlock();
    return rc;
}

#pragma weak MPI_File_get_position_shared = PMPI_File_get_position_shared
int PMPI_File_get_position_shared(MPI_File fh, MPI_Offset *offset)
{
    static const char fn[] = "MPI_File_get_position_shared";
    struct plx_file *f;
    int rc;
    plx_api_lock();
    if ((rc = plx_file_arg(fh, &f, fn)))
        goto out;
    if (!offset) {
        rc = plx_file_err(f, NULL, fn, MPI_ERR_ARG, "argument 'offset' is NULL");
        goto out;
    }
    int e = plx_io_shfp_get(f, offset);
    if (e)
        rc = plx_file_io_fail(f, fn, e);
out:
    plx_api_unlock();
    return rc;
}

/* ---- error handlers ------------------------------------------------------------------------- */

#pragma weak MPI_File_create_errhandler = PMPI_File_create_errhandler
int PMPI_File_create_errhandler(MPI_File_errhandler_function *file_errhandler_fn, MPI_Errhandler *errhandler)
{
    static const char fn[] = "MPI_File_create_errhandler";
    int rc = MPI_SUCCESS;
    plx_api_lock();
    plx_api_check_init(fn);
    if (!file_errhandler_fn || !errhandler) {
        rc = plx_api_null_arg(NULL, fn, !file_errhandler_fn ? "file_errhandler_fn" : "errhandler");
        goto out;
    }
    struct plx_errhandler *e = plx_errhandler_new_file(file_errhandler_fn);
    if (!e) {
        rc = plx_api_err(NULL, fn, MPI_ERR_NO_MEM, "cannot allocate an error handler handle");
        goto out;
    }
    *errhandler = e->obj.handle;
out:
    plx_api_unlock();
    return rc;
}

#pragma weak MPI_File_set_errhandler = PMPI_File_set_errhandler
int PMPI_File_set_errhandler(MPI_File file, MPI_Errhandler errhandler)
{
    static const char fn[] = "MPI_File_set_errhandler";
    struct plx_file *f = NULL;
    int rc = MPI_SUCCESS;
    plx_api_lock();
    plx_api_check_init(fn);
    if (file != MPI_FILE_NULL && (rc = plx_file_arg(file, &f, fn)))
        goto out;
    struct plx_errhandler *e = plx_obj_lookup(&plx_errhandler_tab, errhandler);
    if (!e) {
        rc = plx_file_err(f, NULL, fn, MPI_ERR_ARG, "argument 'errhandler' is %s error handler (handle 0x%x)",
                          errhandler == MPI_ERRHANDLER_NULL ? "the null" : "an invalid", (unsigned)errhandler);
        goto out;
    }
    if (e->kind == PLX_ERRH_USER_COMM) {
        rc = plx_file_err(f, NULL, fn, MPI_ERR_ARG,
                          "argument 'errhandler' (handle 0x%x) is a communicator error handler, not a file one",
                          (unsigned)errhandler);
        goto out;
    }
    struct plx_errhandler **slot = f ? &f->errhandler : &plx_io_default_errhandler;
    plx_errhandler_addref(e);
    if (*slot)
        plx_errhandler_release(*slot);
    *slot = e;
out:
    plx_api_unlock();
    return rc;
}

#pragma weak MPI_File_get_errhandler = PMPI_File_get_errhandler
int PMPI_File_get_errhandler(MPI_File file, MPI_Errhandler *errhandler)
{
    static const char fn[] = "MPI_File_get_errhandler";
    struct plx_file *f = NULL;
    int rc = MPI_SUCCESS;
    plx_api_lock();
    plx_api_check_init(fn);
    if (file != MPI_FILE_NULL && (rc = plx_file_arg(file, &f, fn)))
        goto out;
    if (!errhandler) {
        rc = plx_file_err(f, NULL, fn, MPI_ERR_ARG, "argument 'errhandler' is NULL");
        goto out;
    }
    struct plx_errhandler *e = f ? f->errhandler : plx_io_default_errhandler;
    if (!e)
        e = plx_errhandler_return;
    plx_errhandler_addref(e);
    *errhandler = e->obj.handle;
out:
    plx_api_unlock();
    return rc;
}

#pragma weak MPI_File_call_errhandler = PMPI_File_call_errhandler
int PMPI_File_call_errhandler(MPI_File fh, int errorcode)
{
    static const char fn[] = "MPI_File_call_errhandler";
    struct plx_file *f = NULL;
    int rc = MPI_SUCCESS;
    plx_api_lock();
    plx_api_check_init(fn);
    if (fh != MPI_FILE_NULL && (rc = plx_file_arg(fh, &f, fn)))
        goto out;
    plx_file_invoke(f, errorcode);
out:
    plx_api_unlock();
    return rc;
}

/* ---- data representations ---------------------------------------------------------------- */

/* The int (read_c, write_c NULL) and large-count forms in one. */
static int plx_register_datarep(const char *datarep, MPI_Datarep_conversion_function *read_conversion_fn,
                                MPI_Datarep_conversion_function *write_conversion_fn,
                                MPI_Datarep_conversion_function_c *read_c, MPI_Datarep_conversion_function_c *write_c,
                                MPI_Datarep_extent_function *dtype_file_extent_fn, void *extra_state, int wide,
                                const char *fn)
{
    int rc = MPI_SUCCESS;
    plx_api_lock();
    plx_api_check_init(fn);
    if (!datarep || !dtype_file_extent_fn) {
        rc = plx_file_err(NULL, NULL, fn, MPI_ERR_ARG, "argument '%s' is NULL",
                          !datarep ? "datarep" : "dtype_file_extent_fn");
        goto out;
    }
    if (!*datarep || strnlen(datarep, MPI_MAX_DATAREP_STRING) >= MPI_MAX_DATAREP_STRING) {
        rc = plx_file_err(NULL, NULL, fn, MPI_ERR_ARG, "argument 'datarep' is empty or longer than %d characters",
                          MPI_MAX_DATAREP_STRING - 1);
        goto out;
    }
    if (wide ? plx_io_datarep_register_c(datarep, read_c, write_c, dtype_file_extent_fn, extra_state)
             : plx_io_datarep_register(datarep, read_conversion_fn, write_conversion_fn, dtype_file_extent_fn,
                                       extra_state))
        rc = plx_file_err(NULL, NULL, fn, MPI_ERR_DUP_DATAREP, "data representation '%s' is already defined",
                          datarep);
out:
    plx_api_unlock();
    return rc;
}

#pragma weak MPI_Register_datarep = PMPI_Register_datarep
int PMPI_Register_datarep(const char *datarep, MPI_Datarep_conversion_function *read_conversion_fn,
                          MPI_Datarep_conversion_function *write_conversion_fn,
                          MPI_Datarep_extent_function *dtype_file_extent_fn, void *extra_state)
{
    return plx_register_datarep(datarep, read_conversion_fn, write_conversion_fn, NULL, NULL, dtype_file_extent_fn,
                                extra_state, 0, "MPI_Register_datarep");
}

#pragma weak MPI_Register_datarep_c = PMPI_Register_datarep_c
int PMPI_Register_datarep_c(const char *datarep, MPI_Datarep_conversion_function_c *read_conversion_fn,
                            MPI_Datarep_conversion_function_c *write_conversion_fn,
                            MPI_Datarep_extent_function *dtype_file_extent_fn, void *extra_state)
{
    return plx_register_datarep(datarep, NULL, NULL, read_conversion_fn, write_conversion_fn, dtype_file_extent_fn,
                                extra_state, 1, "MPI_Register_datarep_c");
}

/* ---- handle conversion ----------------------------------------------------------------------- */

#pragma weak MPI_File_c2f = PMPI_File_c2f
MPI_Fint PMPI_File_c2f(MPI_File file)
{
    return (MPI_Fint)(uint32_t)(uintptr_t)file;
}

#pragma weak MPI_File_f2c = PMPI_File_f2c
MPI_File PMPI_File_f2c(MPI_Fint file)
{
    return (MPI_File)(uintptr_t)(uint32_t)file;
}

/* ---- large-count forms (MPI 4.0 `_c`) ------------------------------------------------------ */

#pragma weak MPI_File_iread_all_c = PMPI_File_iread_all_c
#pragma weak MPI_File_iread_at_all_c = PMPI_File_iread_at_all_c
#pragma weak MPI_File_iread_at_c = PMPI_File_iread_at_c
#pragma weak MPI_File_iread_c = PMPI_File_iread_c
#pragma weak MPI_File_iread_shared_c = PMPI_File_iread_shared_c
#pragma weak MPI_File_iwrite_all_c = PMPI_File_iwrite_all_c
#pragma weak MPI_File_iwrite_at_all_c = PMPI_File_iwrite_at_all_c
#pragma weak MPI_File_iwrite_at_c = PMPI_File_iwrite_at_c
#pragma weak MPI_File_iwrite_c = PMPI_File_iwrite_c
#pragma weak MPI_File_iwrite_shared_c = PMPI_File_iwrite_shared_c
#pragma weak MPI_File_read_all_begin_c = PMPI_File_read_all_begin_c
#pragma weak MPI_File_read_all_c = PMPI_File_read_all_c
#pragma weak MPI_File_read_at_all_begin_c = PMPI_File_read_at_all_begin_c
#pragma weak MPI_File_read_at_all_c = PMPI_File_read_at_all_c
#pragma weak MPI_File_read_at_c = PMPI_File_read_at_c
#pragma weak MPI_File_read_c = PMPI_File_read_c
#pragma weak MPI_File_read_ordered_begin_c = PMPI_File_read_ordered_begin_c
#pragma weak MPI_File_read_ordered_c = PMPI_File_read_ordered_c
#pragma weak MPI_File_read_shared_c = PMPI_File_read_shared_c
#pragma weak MPI_File_write_all_begin_c = PMPI_File_write_all_begin_c
#pragma weak MPI_File_write_all_c = PMPI_File_write_all_c
#pragma weak MPI_File_write_at_all_begin_c = PMPI_File_write_at_all_begin_c
#pragma weak MPI_File_write_at_all_c = PMPI_File_write_at_all_c
#pragma weak MPI_File_write_at_c = PMPI_File_write_at_c
#pragma weak MPI_File_write_c = PMPI_File_write_c
#pragma weak MPI_File_write_ordered_begin_c = PMPI_File_write_ordered_begin_c
#pragma weak MPI_File_write_ordered_c = PMPI_File_write_ordered_c
#pragma weak MPI_File_write_shared_c = PMPI_File_write_shared_c

int PMPI_File_iread_all_c(MPI_File fh, void *buf, MPI_Count count, MPI_Datatype datatype, MPI_Request *request)
{
    PLX_FILE_ACC("MPI_File_iread_all_c", PLX_POS_INDIV, 0, 1, PLX_CALL_NONBLOCKING);
    return plx_file_access(fh, 0, buf, count, datatype, NULL, request, &a);
}

int PMPI_File_iread_at_all_c(MPI_File fh, MPI_Offset offset, void *buf, MPI_Count count, MPI_Datatype datatype,
                             MPI_Request *request)
{
    PLX_FILE_ACC("MPI_File_iread_at_all_c", PLX_POS_AT, 0, 1, PLX_CALL_NONBLOCKING);
    return plx_file_access(fh, offset, buf, count, datatype, NULL, request, &a);
}

int PMPI_File_iread_at_c(MPI_File fh, MPI_Offset offset, void *buf, MPI_Count count, MPI_Datatype datatype,
                         MPI_Request *request)
{
    PLX_FILE_ACC("MPI_File_iread_at_c", PLX_POS_AT, 0, 0, PLX_CALL_NONBLOCKING);
    return plx_file_access(fh, offset, buf, count, datatype, NULL, request, &a);
}

int PMPI_File_iread_c(MPI_File fh, void *buf, MPI_Count count, MPI_Datatype datatype, MPI_Request *request)
{
    PLX_FILE_ACC("MPI_File_iread_c", PLX_POS_INDIV, 0, 0, PLX_CALL_NONBLOCKING);
    return plx_file_access(fh, 0, buf, count, datatype, NULL, request, &a);
}

int PMPI_File_iread_shared_c(MPI_File fh, void *buf, MPI_Count count, MPI_Datatype datatype, MPI_Request *request)
{
    PLX_FILE_ACC("MPI_File_iread_shared_c", PLX_POS_SHARED, 0, 0, PLX_CALL_NONBLOCKING);
    return plx_file_access(fh, 0, buf, count, datatype, NULL, request, &a);
}

int PMPI_File_iwrite_all_c(MPI_File fh, const void *buf, MPI_Count count, MPI_Datatype datatype, MPI_Request *request)
{
    PLX_FILE_ACC("MPI_File_iwrite_all_c", PLX_POS_INDIV, 1, 1, PLX_CALL_NONBLOCKING);
    return plx_file_access(fh, 0, (void *)buf, count, datatype, NULL, request, &a);
}

int PMPI_File_iwrite_at_all_c(MPI_File fh, MPI_Offset offset, const void *buf, MPI_Count count, MPI_Datatype datatype,
                              MPI_Request *request)
{
    PLX_FILE_ACC("MPI_File_iwrite_at_all_c", PLX_POS_AT, 1, 1, PLX_CALL_NONBLOCKING);
    return plx_file_access(fh, offset, (void *)buf, count, datatype, NULL, request, &a);
}

int PMPI_File_iwrite_at_c(MPI_File fh, MPI_Offset offset, const void *buf, MPI_Count count, MPI_Datatype datatype,
                          MPI_Request *request)
{
    PLX_FILE_ACC("MPI_File_iwrite_at_c", PLX_POS_AT, 1, 0, PLX_CALL_NONBLOCKING);
    return plx_file_access(fh, offset, (void *)buf, count, datatype, NULL, request, &a);
}

int PMPI_File_iwrite_c(MPI_File fh, const void *buf, MPI_Count count, MPI_Datatype datatype, MPI_Request *request)
{
    PLX_FILE_ACC("MPI_File_iwrite_c", PLX_POS_INDIV, 1, 0, PLX_CALL_NONBLOCKING);
    return plx_file_access(fh, 0, (void *)buf, count, datatype, NULL, request, &a);
}

int PMPI_File_iwrite_shared_c(MPI_File fh, const void *buf, MPI_Count count, MPI_Datatype datatype,
                              MPI_Request *request)
{
    PLX_FILE_ACC("MPI_File_iwrite_shared_c", PLX_POS_SHARED, 1, 0, PLX_CALL_NONBLOCKING);
    return plx_file_access(fh, 0, (void *)buf, count, datatype, NULL, request, &a);
}

int PMPI_File_read_all_begin_c(MPI_File fh, void *buf, MPI_Count count, MPI_Datatype datatype)
{
    PLX_FILE_ACC("MPI_File_read_all_begin_c", PLX_POS_INDIV, 0, 1, PLX_CALL_BEGIN);
    return plx_file_access(fh, 0, buf, count, datatype, NULL, NULL, &a);
}

int PMPI_File_read_all_c(MPI_File fh, void *buf, MPI_Count count, MPI_Datatype datatype, MPI_Status *status)
{
    PLX_FILE_ACC("MPI_File_read_all_c", PLX_POS_INDIV, 0, 1, PLX_CALL_BLOCKING);
    return plx_file_access(fh, 0, buf, count, datatype, status, NULL, &a);
}

int PMPI_File_read_at_all_begin_c(MPI_File fh, MPI_Offset offset, void *buf, MPI_Count count, MPI_Datatype datatype)
{
    PLX_FILE_ACC("MPI_File_read_at_all_begin_c", PLX_POS_AT, 0, 1, PLX_CALL_BEGIN);
    return plx_file_access(fh, offset, buf, count, datatype, NULL, NULL, &a);
}

int PMPI_File_read_at_all_c(MPI_File fh, MPI_Offset offset, void *buf, MPI_Count count, MPI_Datatype datatype,
                            MPI_Status *status)
{
    PLX_FILE_ACC("MPI_File_read_at_all_c", PLX_POS_AT, 0, 1, PLX_CALL_BLOCKING);
    return plx_file_access(fh, offset, buf, count, datatype, status, NULL, &a);
}

int PMPI_File_read_at_c(MPI_File fh, MPI_Offset offset, void *buf, MPI_Count count, MPI_Datatype datatype,
                        MPI_Status *status)
{
    PLX_FILE_ACC("MPI_File_read_at_c", PLX_POS_AT, 0, 0, PLX_CALL_BLOCKING);
    return plx_file_access(fh, offset, buf, count, datatype, status, NULL, &a);
}

int PMPI_File_read_c(MPI_File fh, void *buf, MPI_Count count, MPI_Datatype datatype, MPI_Status *status)
{
    PLX_FILE_ACC("MPI_File_read_c", PLX_POS_INDIV, 0, 0, PLX_CALL_BLOCKING);
    return plx_file_access(fh, 0, buf, count, datatype, status, NULL, &a);
}

int PMPI_File_read_ordered_begin_c(MPI_File fh, void *buf, MPI_Count count, MPI_Datatype datatype)
{
    PLX_FILE_ACC("MPI_File_read_ordered_begin_c", PLX_POS_ORDERED, 0, 1, PLX_CALL_BEGIN);
    return plx_file_access(fh, 0, buf, count, datatype, NULL, NULL, &a);
}

int PMPI_File_read_ordered_c(MPI_File fh, void *buf, MPI_Count count, MPI_Datatype datatype, MPI_Status *status)
{
    PLX_FILE_ACC("MPI_File_read_ordered_c", PLX_POS_ORDERED, 0, 1, PLX_CALL_BLOCKING);
    return plx_file_access(fh, 0, buf, count, datatype, status, NULL, &a);
}

int PMPI_File_read_shared_c(MPI_File fh, void *buf, MPI_Count count, MPI_Datatype datatype, MPI_Status *status)
{
    PLX_FILE_ACC("MPI_File_read_shared_c", PLX_POS_SHARED, 0, 0, PLX_CALL_BLOCKING);
    return plx_file_access(fh, 0, buf, count, datatype, status, NULL, &a);
}

int PMPI_File_write_all_begin_c(MPI_File fh, const void *buf, MPI_Count count, MPI_Datatype datatype)
{
    PLX_FILE_ACC("MPI_File_write_all_begin_c", PLX_POS_INDIV, 1, 1, PLX_CALL_BEGIN);
    return plx_file_access(fh, 0, (void *)buf, count, datatype, NULL, NULL, &a);
}

int PMPI_File_write_all_c(MPI_File fh, const void *buf, MPI_Count count, MPI_Datatype datatype, MPI_Status *status)
{
    PLX_FILE_ACC("MPI_File_write_all_c", PLX_POS_INDIV, 1, 1, PLX_CALL_BLOCKING);
    return plx_file_access(fh, 0, (void *)buf, count, datatype, status, NULL, &a);
}

int PMPI_File_write_at_all_begin_c(MPI_File fh, MPI_Offset offset, const void *buf, MPI_Count count,
                                   MPI_Datatype datatype)
{
    PLX_FILE_ACC("MPI_File_write_at_all_begin_c", PLX_POS_AT, 1, 1, PLX_CALL_BEGIN);
    return plx_file_access(fh, offset, (void *)buf, count, datatype, NULL, NULL, &a);
}

int PMPI_File_write_at_all_c(MPI_File fh, MPI_Offset offset, const void *buf, MPI_Count count, MPI_Datatype datatype,
                             MPI_Status *status)
{
    PLX_FILE_ACC("MPI_File_write_at_all_c", PLX_POS_AT, 1, 1, PLX_CALL_BLOCKING);
    return plx_file_access(fh, offset, (void *)buf, count, datatype, status, NULL, &a);
}

int PMPI_File_write_at_c(MPI_File fh, MPI_Offset offset, const void *buf, MPI_Count count, MPI_Datatype datatype,
                         MPI_Status *status)
{
    PLX_FILE_ACC("MPI_File_write_at_c", PLX_POS_AT, 1, 0, PLX_CALL_BLOCKING);
    return plx_file_access(fh, offset, (void *)buf, count, datatype, status, NULL, &a);
}

int PMPI_File_write_c(MPI_File fh, const void *buf, MPI_Count count, MPI_Datatype datatype, MPI_Status *status)
{
    PLX_FILE_ACC("MPI_File_write_c", PLX_POS_INDIV, 1, 0, PLX_CALL_BLOCKING);
    return plx_file_access(fh, 0, (void *)buf, count, datatype, status, NULL, &a);
}

int PMPI_File_write_ordered_begin_c(MPI_File fh, const void *buf, MPI_Count count, MPI_Datatype datatype)
{
    PLX_FILE_ACC("MPI_File_write_ordered_begin_c", PLX_POS_ORDERED, 1, 1, PLX_CALL_BEGIN);
    return plx_file_access(fh, 0, (void *)buf, count, datatype, NULL, NULL, &a);
}

int PMPI_File_write_ordered_c(MPI_File fh, const void *buf, MPI_Count count, MPI_Datatype datatype,
                              MPI_Status *status)
{
    PLX_FILE_ACC("MPI_File_write_ordered_c", PLX_POS_ORDERED, 1, 1, PLX_CALL_BLOCKING);
    return plx_file_access(fh, 0, (void *)buf, count, datatype, status, NULL, &a);
}

int PMPI_File_write_shared_c(MPI_File fh, const void *buf, MPI_Count count, MPI_Datatype datatype, MPI_Status *status)
{
    PLX_FILE_ACC("MPI_File_write_shared_c", PLX_POS_SHARED, 1, 0, PLX_CALL_BLOCKING);
    return plx_file_access(fh, 0, (void *)buf, count, datatype, status, NULL, &a);
}



#pragma weak MPI_File_get_type_extent_c = PMPI_File_get_type_extent_c
int PMPI_File_get_type_extent_c(MPI_File fh, MPI_Datatype datatype, MPI_Count *extent)
{
    MPI_Aint x = 0;
    int rc = plx_file_type_extent(fh, datatype, extent ? &x : NULL, "MPI_File_get_type_extent_c");
    if (rc == MPI_SUCCESS)
        *extent = x;
    return rc;
}
