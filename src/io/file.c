/*
 * MPI-IO file objects: open (amode agreement, creation by rank 0), close
 * (DELETE_ON_CLOSE), delete, sizes, sync, hints and the choice of
 * aggregators, and the collective agreement on an outcome that every
 * collective file call ends with.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "coll/algo.h"
#include "coll/coll.h"
#include "core/config.h"
#include "core/runtime.h"
#include "io/io_internal.h"

struct plx_objtab plx_file_tab = PLX_OBJTAB_INIT("file", PLX_OBJ_FILE, struct plx_file);
struct plx_errhandler *plx_io_default_errhandler;

/* ---- hints ----------------------------------------------------------------- */

static int plx_io_cb_mode(const char *v, int dflt)
{
    if (!v)
        return dflt;
    if (!strcmp(v, "enable"))
        return PLX_IO_CB_ENABLE;
    if (!strcmp(v, "disable"))
        return PLX_IO_CB_DISABLE;
    if (!strcmp(v, "automatic"))
        return PLX_IO_CB_AUTO;
    return dflt;
}

static const char *plx_io_cb_name(int m)
{
    return m == PLX_IO_CB_ENABLE ? "enable" : m == PLX_IO_CB_DISABLE ? "disable" : "automatic";
}

/* Aggregators: the first process of each node in communicator order; with a
 * cb_nodes hint, that many (more than the nodes: the second process of each
 * node, then the third..., up to every process). */
static void plx_io_pick_aggregators(struct plx_file *f)
{
    struct plx_comm *c = f->comm;
    int p = c->size;
    int *idx = plx_malloc((size_t)p * sizeof *idx);     /* place of each process within its node */
    int *node = plx_malloc((size_t)p * sizeof *node);
    for (int i = 0; i < p; i++) {
        node[i] = plx_node_id_of(c->lpids[i]);
        idx[i] = 0;
        for (int j = 0; j < i; j++)
            idx[i] += node[j] == node[i];
    }
    int want = f->hints.cb_nodes > 0 ? PLX_MIN(f->hints.cb_nodes, p) : 0;
    free(f->aggr);
    f->aggr = plx_malloc((size_t)p * sizeof *f->aggr);
    f->naggr = 0;
    for (int pass = 0; f->naggr < p && (pass == 0 || f->naggr < want); pass++)
        for (int i = 0; i < p && (!want || f->naggr < want); i++)
            if (idx[i] == pass)
                f->aggr[f->naggr++] = i;
    free(idx);
    free(node);
}

void plx_io_hints_apply(struct plx_file *f, const struct plx_info *info)
{
    if (!f->hints.cb_buffer_size) {
        f->hints.cb_buffer_size = PLX_MAX((long long)plx_config.io_cb_buffer_size, 512);
        f->hints.cb_nodes = plx_config.io_cb_nodes;
        f->hints.cb_read = f->hints.cb_write = PLX_IO_CB_AUTO;
        /* off unless asked for: a read-modify-write of the holes races with
         * another process's plain write into them (disjoint bytes, which
         * MPI's nonatomic mode promises to keep) */
        f->hints.ind_sieve_write = 0;
    }
    if (info) {
        const char *v;
        if ((v = plx_info_lookup(info, "cb_buffer_size"))) {
            long long n = atoll(v);
            if (n >= 512)
                f->hints.cb_buffer_size = n;
        }
        if ((v = plx_info_lookup(info, "cb_nodes"))) {
            int n = atoi(v);
            if (n > 0)
                f->hints.cb_nodes = n;
        }
        /* the standard's reserved key, then ROMIO's finer ones */
        if ((v = plx_info_lookup(info, "collective_buffering"))) {
            int m = !strcmp(v, "true") ? PLX_IO_CB_ENABLE : !strcmp(v, "false") ? PLX_IO_CB_DISABLE : -1;
            if (m >= 0)
                f->hints.cb_read = f->hints.cb_write = m;
        }
        f->hints.cb_read = plx_io_cb_mode(plx_info_lookup(info, "romio_cb_read"), f->hints.cb_read);
        f->hints.cb_write = plx_io_cb_mode(plx_info_lookup(info, "romio_cb_write"), f->hints.cb_write);
        if ((v = plx_info_lookup(info, "romio_ds_write")))
            f->hints.ind_sieve_write = !strcmp(v, "enable");
    }
    plx_io_pick_aggregators(f);
}

struct plx_info *plx_io_hints_info(const struct plx_file *f)
{
    struct plx_info *in = plx_info_new();
    char v[64];
    snprintf(v, sizeof v, "%lld", f->hints.cb_buffer_size);
    plx_info_set(in, "cb_buffer_size", v);
    snprintf(v, sizeof v, "%d", f->naggr);
    plx_info_set(in, "cb_nodes", v);
    plx_info_set(in, "collective_buffering",
                 f->hints.cb_read == PLX_IO_CB_DISABLE && f->hints.cb_write == PLX_IO_CB_DISABLE ? "false" : "true");
    plx_info_set(in, "romio_cb_read", plx_io_cb_name(f->hints.cb_read));
    plx_info_set(in, "romio_cb_write", plx_io_cb_name(f->hints.cb_write));
    plx_info_set(in, "romio_ds_write", f->hints.ind_sieve_write ? "enable" : "disable");
    /* the aggregators as MPICH lists them: a comma-separated list of ranks */
    char list[1024] = "";
    size_t len = 0;
    for (int i = 0; i < f->naggr && len + 16 < sizeof list; i++)
        len += (size_t)snprintf(list + len, sizeof list - len, "%s%d", i ? "," : "", f->aggr[i]);
    plx_info_set(in, "cb_aggregators", list);
    return in;
}

/* ---- open / close ---------------------------------------------------------- */

const char *plx_io_strip_prefix(const char *name)
{
    static const char *const prefixes[] = { "ufs:", "nfs:", "posix:", "lustre:", "gpfs:" };
    for (size_t i = 0; i < sizeof prefixes / sizeof prefixes[0]; i++) {
        size_t n = strlen(prefixes[i]);
        if (!strncmp(name, prefixes[i], n))
            return name + n;
    }
    return name;
}

int plx_io_agree(struct plx_file *f, int rc)
{
    return plx_io_agree_tag(f, rc, PLX_IO_TAG);
}

int plx_io_agree_tag(struct plx_file *f, int rc, int tag)
{
    struct plx_comm *c = f->comm;
    int *all = plx_malloc((size_t)c->size * sizeof *all);
    plx_status_t st = plx_coll_allgather(&rc, sizeof rc, all, c, tag);
    if (PLX_IS_ERR(st)) {
        free(all);
        f->err_what = "agreeing on the outcome";
        f->err_rank = c->rank;
        return st;
    }
    /* my own failure first (its message is the most precise), else the
     * first failing process */
    int out = rc;
    f->err_rank = c->rank;
    for (int i = 0; i < c->size && !out; i++)
        if (all[i]) {
            out = all[i];
            f->err_rank = i;
            f->err_what = NULL;
        }
    free(all);
    return out;
}

int plx_io_same(struct plx_comm *c, long long v, int *same_p)
{
    long long *all = plx_malloc((size_t)c->size * sizeof *all);
    plx_status_t st = plx_coll_allgather(&v, sizeof v, all, c, PLX_IO_TAG);
    *same_p = 1;
    for (int i = 0; i < c->size && st == PLX_OK; i++)
        if (all[i] != v)
            *same_p = 0;
    free(all);
    return PLX_IS_ERR(st) ? st : 0;
}

static void plx_io_file_free(struct plx_file *f)
{
    if (f->fd >= 0)
        close(f->fd);
    if (f->shfp_fd >= 0)
        close(f->shfp_fd);
    free(f->shfp_name);
    free(f->name);
    free(f->aggr);
    plx_dt_release(f->etype);
    plx_dt_release(f->filetype);
    plx_errhandler_release(f->errhandler);
    if (f->comm)
        plx_comm_release(f->comm);
    plx_obj_free(&plx_file_tab, f);
}

int plx_io_open(struct plx_comm *comm, const char *name, int amode, const struct plx_info *info,
                struct plx_file **f_p, const char **what_p, int *rank_p)
{
    *f_p = NULL;
    *rank_p = comm->rank;
    int ctx;
    plx_status_t st = plx_comm_alloc_context(comm, &ctx);
    if (PLX_IS_ERR(st)) {
        *what_p = "agreeing on a context id for the file's communicator";
        return st;
    }
    struct plx_comm *nc = plx_comm_new(comm, comm->group, ctx);
    if (!nc) {
        plx_comm_free_context(ctx);
        *what_p = "allocating the file's communicator";
        return ENOMEM;
    }
    plx_errhandler_release(nc->errhandler);     /* errors go to the file's handler, not a communicator's */
    nc->errhandler = plx_errhandler_return;
    struct plx_file *f = plx_obj_alloc(&plx_file_tab);
    if (!f) {
        plx_comm_release(nc);
        *what_p = "allocating a file handle";
        return ENOMEM;
    }
    f->comm = nc;
    f->fd = -1;
    f->shfp_fd = -1;
    f->name = plx_strdup(name);
    f->amode = amode;
    f->errhandler = plx_io_default_errhandler ? plx_io_default_errhandler : plx_errhandler_return;
    plx_errhandler_addref(f->errhandler);
    f->etype = plx_coll_byte();
    f->filetype = plx_coll_byte();
    plx_dt_addref(f->etype);
    plx_dt_addref(f->filetype);
    snprintf(f->datarep, sizeof f->datarep, "native");

    int same = 1;
    st = plx_io_same(nc, amode, &same);
    if (PLX_IS_ERR(st) || !same) {
        *what_p = PLX_IS_ERR(st) ? "comparing the access modes"
                                 : "comparing the access modes: amode differs between the processes";
        plx_io_file_free(f);
        return PLX_IS_ERR(st) ? st : PLX_IO_E_NOT_SAME;
    }
    int flags = (amode & MPI_MODE_RDONLY) ? O_RDONLY : O_RDWR;
    int err = 0;
    mode_t perm = 0666;         /* the hint file_perm, in octal; the umask applies */
    const char *fp = info ? plx_info_lookup(info, "file_perm") : NULL;
    if (fp) {
        char *end;
        long m = strtol(fp, &end, 8);
        if (end != fp && !*end && m >= 0 && m <= 07777)
            perm = (mode_t)m;
    }
    /* rank 0 creates, so that MPI_MODE_EXCL means "nobody had it" */
    if (amode & MPI_MODE_CREATE) {
        if (nc->rank == 0) {
            f->fd = open(name, flags | O_CREAT | ((amode & MPI_MODE_EXCL) ? O_EXCL : 0), perm);
            if (f->fd < 0 && errno == EACCES && (amode & MPI_MODE_WRONLY))
                f->fd = open(name, O_WRONLY | O_CREAT | ((amode & MPI_MODE_EXCL) ? O_EXCL : 0), perm);
            if (f->fd < 0)
                err = errno;
        }
        st = plx_coll_bcast(&err, sizeof err, 0, nc, PLX_IO_TAG);
        if (PLX_IS_ERR(st) || err) {
            *what_p = PLX_IS_ERR(st) ? "sharing the outcome of the creation" : "creating the file";
            *rank_p = 0;
            plx_io_file_free(f);
            return PLX_IS_ERR(st) ? st : err;
        }
    }
    if (f->fd < 0) {
        f->fd = open(name, flags);
        /* write-only: ask for read access too (collective buffering reads
         * the gaps it writes around); settle for write-only */
        if (f->fd < 0 && errno == EACCES && (amode & MPI_MODE_WRONLY))
            f->fd = open(name, O_WRONLY);
        if (f->fd < 0)
            err = errno;
        else {
            struct stat sb;
            if (fstat(f->fd, &sb) == 0 && S_ISDIR(sb.st_mode))
                err = EISDIR;
        }
    }
    /* a side file of that name can only be a crashed job's leftover: rank 0
     * removes it before anyone can use the shared pointer (the agreement
     * below orders the two) */
    plx_io_shfp_name(f);
    if (nc->rank == 0 && !err)
        unlink(f->shfp_name);
    int rc = plx_io_agree(f, err);
    if (rc) {
        *what_p = rc > 0 ? "opening the file" : "agreeing on the outcome";
        *rank_p = f->err_rank;
        plx_io_file_free(f);
        return rc;
    }
    plx_io_hints_apply(f, info);
    if (amode & MPI_MODE_APPEND) {
        struct stat sb;
        MPI_Offset end = fstat(f->fd, &sb) == 0 ? (MPI_Offset)sb.st_size : 0;
        f->fp = end;
        /* the shared pointer starts there too (an error shows at its first use) */
        if (nc->rank == 0 && end > 0 && plx_io_shfp_open(f) == 0)
            plx_io_pwrite_full(f->shfp_fd, &end, sizeof end, 0);
        plx_coll_barrier(nc, PLX_IO_TAG);
    }
    *f_p = f;
    return 0;
}

int plx_io_close(struct plx_file *f)
{
    struct plx_comm *c = f->comm;
    /* everyone's last writes are done before the file may disappear */
    plx_status_t st = plx_coll_barrier(c, PLX_IO_TAG);
    int err = 0;
    if (f->fd >= 0 && close(f->fd) < 0)
        err = errno;
    f->fd = -1;
    if (f->shfp_fd >= 0)
        close(f->shfp_fd);
    f->shfp_fd = -1;
    if (!PLX_IS_ERR(st))
        st = plx_coll_barrier(c, PLX_IO_TAG);
    if (c->rank == 0) {
        if (f->shfp_name)
            unlink(f->shfp_name);   /* absent when the shared pointer was never used */
        if ((f->amode & MPI_MODE_DELETE_ON_CLOSE) && unlink(f->name) < 0 && !err)
            err = errno;
    }
    if (PLX_IS_ERR(st))
        return st;
    f->err_what = (f->amode & MPI_MODE_DELETE_ON_CLOSE) && c->rank == 0 ? "closing and deleting the file"
                                                                        : "closing the file";
    return plx_io_agree(f, err);
}

void plx_io_free(struct plx_file *f)
{
    plx_io_file_free(f);
}

int plx_io_delete(const char *name)
{
    struct stat sb;
    if (stat(name, &sb) == 0 && S_ISDIR(sb.st_mode))
        return EISDIR;
    return unlink(name) < 0 ? errno : 0;
}

int plx_io_set_size(struct plx_file *f, MPI_Offset size)
{
    int err = 0;
    if (f->comm->rank == 0) {
        f->dirty = 1;
        if (ftruncate(f->fd, (off_t)size) < 0)
            err = errno;
    }
    f->err_what = "truncating the file (ftruncate)";
    return plx_io_agree(f, err);
}

int plx_io_preallocate(struct plx_file *f, MPI_Offset size)
{
    int err = 0;
    if (f->comm->rank == 0) {
        struct stat sb;
        if (fstat(f->fd, &sb) < 0)
            err = errno;
        else if ((MPI_Offset)sb.st_size < size) {
            f->dirty = 1;
            err = posix_fallocate(f->fd, 0, (off_t)size);
            if (err == EOPNOTSUPP || err == EINVAL) {
                /* no fallocate here: write zeros past the end */
                err = 0;
                static const char zeros[65536];
                for (MPI_Offset o = sb.st_size; o < size && !err; o += (MPI_Offset)sizeof zeros)
                    err = plx_io_pwrite_full(f->fd, zeros, (size_t)PLX_MIN(size - o, (MPI_Offset)sizeof zeros), o);
            }
        }
    }
    f->err_what = "preallocating space (posix_fallocate)";
    return plx_io_agree(f, err);
}

int plx_io_get_size(struct plx_file *f, MPI_Offset *size_p)
{
    struct stat sb;
    if (fstat(f->fd, &sb) < 0) {
        f->err_what = "fstat";
        f->err_rank = f->comm->rank;
        return errno;
    }
    *size_p = (MPI_Offset)sb.st_size;
    return 0;
}

int plx_io_sync(struct plx_file *f)
{
    /* MPI_File_sync makes this process's writes durable (visibility needs
     * nothing more on a POSIX file system): with none since the last sync
     * there is nothing to flush, and a second fsync of a clean file still
     * waits for the journal */
    int err = f->dirty && fsync(f->fd) < 0 ? errno : 0;
    if (err == EINVAL)
        err = 0;                /* a file that cannot be synced holds nothing to sync */
    if (!err)
        f->dirty = 0;
    f->err_what = "fsync";
    int rc = plx_io_agree(f, err);
    return rc;
}
