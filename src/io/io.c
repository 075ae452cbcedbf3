/*
 * MPI-IO files over POSIX: open/close, hints, views and their mapping of the
 * data stream onto file bytes, independent access, the shared file pointer
 * and atomic mode. See io.h for the model; collective access is twophase.c.
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
#include "core/log.h"
#include "core/runtime.h"
#include "io/io.h"
#include "io/io_internal.h"

struct plx_objtab plx_file_tab = PLX_OBJTAB_INIT("file", PLX_OBJ_FILE, struct plx_file);
struct plx_errhandler *plx_io_default_errhandler;

/* ---- system calls that finish their job ----------------------------------- */

int plx_io_pwrite_full(int fd, const void *buf, size_t n, MPI_Offset off)
{
    const char *p = buf;
    while (n > 0) {
        ssize_t w = pwrite(fd, p, n, (off_t)off);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return errno;
        }
        p += w;
        n -= (size_t)w;
        off += w;
    }
    return 0;
}

/* Reads up to n bytes; *got_p < n only at end of file. */
int plx_io_pread_full(int fd, void *buf, size_t n, MPI_Offset off, size_t *got_p)
{
    char *p = buf;
    size_t got = 0;
    while (got < n) {
        ssize_t r = pread(fd, p + got, n - got, (off_t)(off + (MPI_Offset)got));
        if (r < 0) {
            if (errno == EINTR)
                continue;
            *got_p = got;
            return errno;
        }
        if (r == 0)
            break;
        got += (size_t)r;
    }
    *got_p = got;
    return 0;
}

/* fcntl byte-range lock (F_RDLCK, F_WRLCK or F_UNLCK); len 0 = to the end. */
int plx_io_lock(int fd, short type, MPI_Offset start, MPI_Offset len)
{
    struct flock fl = { .l_type = type, .l_whence = SEEK_SET, .l_start = (off_t)start, .l_len = (off_t)len };
    while (fcntl(fd, F_SETLKW, &fl) < 0) {
        if (errno != EINTR)
            return errno;
    }
    return 0;
}

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
    struct plx_comm *c = f->comm;
    int *all = plx_malloc((size_t)c->size * sizeof *all);
    plx_status_t st = plx_coll_allgather(&rc, sizeof rc, all, c, PLX_IO_TAG);
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

/* The side file of the shared pointer: named the same on every process
 * without talking (job id, first member and context id of the file's
 * communicator), made by whoever uses it first; an empty file
 * reads as 0. Most files never use the shared pointer and never get one. */
static void plx_io_shfp_name(struct plx_file *f)
{
    uint32_t h = 2166136261u;
    for (const char *k = plx_procs.kvsname; *k; k++)
        h = (h ^ (unsigned char)*k) * 16777619u;
    const char *slash = strrchr(f->name, '/');
    int dirlen = slash ? (int)(slash - f->name) + 1 : 0;
    const char *base = slash ? slash + 1 : f->name;
    size_t n = strlen(f->name) + 64;
    f->shfp_name = plx_malloc(n);
    /* a context id is unique among the communicators of each of its members,
     * so with the world rank of the first member it names this open alone
     * (every process opening one file on MPI_COMM_SELF gets its own) */
    snprintf(f->shfp_name, n, "%.*s.%s.plxshfp.%08x.%d.%d", dirlen, f->name, base, h, f->comm->lpids[0],
             f->comm->context_id);
}

static int plx_io_shfp_open(struct plx_file *f)
{
    if (f->shfp_fd >= 0)
        return 0;
    f->shfp_fd = open(f->shfp_name, O_RDWR | O_CREAT, 0600);
    return f->shfp_fd < 0 ? errno : 0;
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
        *what_p = PLX_IS_ERR(st) ? "comparing the access modes" : "comparing the access modes: amode differs between the processes";
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
    int rc = plx_io_agree(f, err);
    if (rc) {
        *what_p = rc > 0 ? "opening the file" : "agreeing on the outcome";
        *rank_p = f->err_rank;
        plx_io_file_free(f);
        return rc;
    }
    plx_io_hints_apply(f, info);
    plx_io_shfp_name(f);
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
    f->err_what = "closing the file";
    f->err_rank = c->rank;
    plx_io_file_free(f);
    return PLX_IS_ERR(st) ? st : err;
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
    if (f->comm->rank == 0 && ftruncate(f->fd, (off_t)size) < 0)
        err = errno;
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
            err = posix_fallocate(f->fd, 0, (off_t)size);
            if (err == EOPNOTSUPP || err == EINVAL) {
                /* no fallocate here: write zeros past the end */
                err = 0;
                static const char zeros[65536];
                for (MPI_Offset o = sb.st_size; o < size && !err;)
                    err = plx_io_pwrite_full(f->fd, zeros, (size_t)PLX_MIN(size - o, (MPI_Offset)sizeof zeros), o),
                    o += (MPI_Offset)sizeof zeros;
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
    int err = fsync(f->fd) < 0 ? errno : 0;
    if (err == EINVAL)
        err = 0;                /* a file that cannot be synced holds nothing to sync */
    f->err_what = "fsync";
    int rc = plx_io_agree(f, err);
    return rc;
}

/* ---- user data representations ------------------------------------------------ */

static struct plx_io_datarep *plx_io_dreps;

const struct plx_io_datarep *plx_io_datarep_find(const char *name)
{
    for (struct plx_io_datarep *d = plx_io_dreps; d; d = d->next)
        if (!strcmp(d->name, name))
            return d;
    return NULL;
}

int plx_io_datarep_register(const char *name, MPI_Datarep_conversion_function *read_fn,
                            MPI_Datarep_conversion_function *write_fn, MPI_Datarep_extent_function *extent_fn,
                            void *extra_state)
{
    if (!strcmp(name, "native") || !strcmp(name, "internal") || !strcmp(name, "external32") ||
        plx_io_datarep_find(name))
        return EEXIST;
    struct plx_io_datarep *d = plx_calloc(1, sizeof *d);
    snprintf(d->name, sizeof d->name, "%s", name);
    d->read_fn = read_fn;
    d->write_fn = write_fn;
    d->extent_fn = extent_fn;
    d->extra_state = extra_state;
    d->next = plx_io_dreps;
    plx_io_dreps = d;
    return 0;
}

int plx_io_datarep_fits(const struct plx_io_datarep *d, const struct plx_datatype *dt)
{
    if (dt->size == 0)
        return 1;
    if (dt->basic == MPI_DATATYPE_NULL)
        return 0;               /* mixed basic types: not handled */
    const struct plx_datatype *b = plx_dt_lookup(dt->basic);
    MPI_Aint ext = -1;
    if (!b || d->extent_fn(dt->basic, &ext, d->extra_state) != MPI_SUCCESS)
        return 0;
    return ext == b->size;
}

/* ---- views ----------------------------------------------------------------- */

static int plx_io_view_contig(const struct plx_file *f)
{
    const struct plx_datatype *ft = f->filetype;
    return ft->nruns == 1 && ft->runs[0].cnt == 1 && ft->runs[0].disp == 0 && ft->runs[0].len == ft->extent;
}

const char *plx_io_view_check(const struct plx_datatype *etype, const struct plx_datatype *ft)
{
    if (etype->size <= 0)
        return "the etype holds no data";
    if (ft->size <= 0)
        return "the filetype holds no data";
    if (ft->size % etype->size)
        return "the filetype's size is not a multiple of the etype's size";
    if (ft->extent <= 0)
        return "the filetype's extent is not positive";
    MPI_Aint end = 0;
    for (int i = 0; i < ft->nruns; i++) {
        const struct plx_dt_run *r = &ft->runs[i];
        if (r->disp < end)
            return "the filetype's displacements are negative or not monotonically nondecreasing";
        if (r->cnt > 1 && r->stride < r->len)
            return "the filetype's displacements are not monotonically nondecreasing";
        end = r->disp + (r->cnt - 1) * r->stride + r->len;
    }
    if (end > ft->extent)
        return "the filetype's data reaches past its extent (its tiles would overlap)";
    return NULL;
}

void plx_io_set_view(struct plx_file *f, MPI_Offset disp, struct plx_datatype *etype, struct plx_datatype *ft,
                     const char *datarep)
{
    plx_dt_addref(etype);
    plx_dt_addref(ft);
    plx_dt_release(f->etype);
    plx_dt_release(f->filetype);
    f->etype = etype;
    f->filetype = ft;
    f->disp = disp;
    f->external32 = !strcmp(datarep, "external32");
    f->drep = plx_io_datarep_find(datarep);
    snprintf(f->datarep, sizeof f->datarep, "%s", datarep);
    f->fp = 0;
}

MPI_Offset plx_io_view_map(const struct plx_file *f, MPI_Offset pos, MPI_Offset max, MPI_Offset *contig_p)
{
    if (plx_io_view_contig(f)) {
        *contig_p = max;
        return f->disp + pos;
    }
    const struct plx_datatype *ft = f->filetype;
    MPI_Offset tile = pos / ft->size, in = pos % ft->size;
    int i = 0;
    MPI_Offset before = 0;
    if (ft->nruns > 1) {
        int lo = 0, hi = ft->nruns - 1;     /* last run with run_pre <= in */
        while (lo < hi) {
            int mid = (lo + hi + 1) / 2;
            if (ft->run_pre[mid] <= in)
                lo = mid;
            else
                hi = mid - 1;
        }
        i = lo;
        before = ft->run_pre[i];
    }
    const struct plx_dt_run *r = &ft->runs[i];
    MPI_Offset rin = in - before, blk = rin / r->len, bo = rin % r->len;
    *contig_p = PLX_MIN(r->len - bo, max);
    return f->disp + tile * ft->extent + r->disp + blk * r->stride + bo;
}

MPI_Offset plx_io_view_bytes_before(const struct plx_file *f, MPI_Offset off)
{
    const struct plx_datatype *ft = f->filetype;
    if (off <= f->disp)
        return 0;
    MPI_Offset rel = off - f->disp;
    if (plx_io_view_contig(f))
        return rel;
    MPI_Offset tile = rel / ft->extent, rem = rel % ft->extent, n = tile * ft->size;
    for (int i = 0; i < ft->nruns; i++) {
        const struct plx_dt_run *r = &ft->runs[i];
        if (rem <= r->disp)
            break;
        MPI_Offset d = rem - r->disp;
        MPI_Offset nb = r->cnt == 1 ? 1 : PLX_MIN(r->cnt, (d + r->stride - 1) / r->stride);
        n += (nb - 1) * r->len + PLX_MIN(r->len, d - (nb - 1) * (r->cnt == 1 ? 0 : r->stride));
    }
    return n;
}

/* ---- staging: user buffer <-> the bytes that go to the file ------------------ */

MPI_Count plx_io_stream_bytes(const struct plx_file *f, MPI_Aint count, const struct plx_datatype *dt)
{
    (void)f;
    return (MPI_Count)count * dt->size;     /* external32 is accepted only where sizes agree */
}

/* The file-representation bytes of count elements at buf: buf itself when it
 * is contiguous native data (*tmp_p NULL), else a packed copy (*tmp_p, to free). */
int plx_io_stage_out(const struct plx_file *f, const void *buf, MPI_Aint count, const struct plx_datatype *dt,
                     const char **data_p, char **tmp_p)
{
    size_t n = (size_t)count * (size_t)dt->size;
    *tmp_p = NULL;
    int convert = f->drep && f->drep->write_fn;
    if (!f->external32 && !convert && dt->contig) {
        *data_p = (const char *)buf + dt->true_lb;
        return 0;
    }
    char *tmp = plx_malloc(n ? n : 1);
    if (convert) {
        if (count > INT32_MAX ||
            f->drep->write_fn((void *)buf, dt->obj.handle, (int)count, tmp, 0, f->drep->extra_state) != MPI_SUCCESS) {
            free(tmp);
            return EOVERFLOW;
        }
    } else if (f->external32) {
        if (plx_dt_pack_external32(buf, count, dt, tmp) < 0) {
            free(tmp);
            return EOVERFLOW;
        }
    } else {
        plx_dt_pack(buf, count, dt, tmp);
    }
    *tmp_p = tmp;
    *data_p = tmp;
    return 0;
}

/* Where read data lands: the user buffer when contiguous native, else a
 * temporary that plx_io_stage_in unpacks. */
char *plx_io_stage_buf(const struct plx_file *f, void *buf, MPI_Aint count, const struct plx_datatype *dt,
                       char **tmp_p)
{
    size_t n = (size_t)count * (size_t)dt->size;
    *tmp_p = NULL;
    if (!f->external32 && !(f->drep && f->drep->read_fn) && dt->contig)
        return (char *)buf + dt->true_lb;
    *tmp_p = plx_malloc(n ? n : 1);
    return *tmp_p;
}

int plx_io_stage_in(const struct plx_file *f, const char *tmp, size_t got, void *buf, MPI_Aint count,
                    const struct plx_datatype *dt)
{
    if (!tmp)
        return 0;
    if (f->drep && f->drep->read_fn) {
        MPI_Aint whole = dt->size ? (MPI_Aint)(got / (size_t)dt->size) : 0;
        if (whole > count)
            whole = count;
        if (whole && f->drep->read_fn(buf, dt->obj.handle, (int)whole, (void *)tmp, 0, f->drep->extra_state) !=
                         MPI_SUCCESS)
            return EOVERFLOW;
        return 0;
    }
    if (f->external32) {
        MPI_Aint whole = dt->size ? (MPI_Aint)(got / (size_t)dt->size) : 0;
        if (whole > count)
            whole = count;
        if (whole && plx_dt_unpack_external32(tmp, buf, whole, dt) < 0)
            return EOVERFLOW;
        return 0;
    }
    plx_dt_unpack(tmp, got, buf, dt);
    return 0;
}

/* ---- independent access -------------------------------------------------------- */

/* Segments of stream range [pos, pos+n): consecutive pieces that touch in the
 * file are merged. Returns how many; *segs_p must be freed. */
int plx_io_segments(const struct plx_file *f, MPI_Offset pos, MPI_Offset n, struct plx_io_seg **segs_p)
{
    int cap = 16, k = 0;
    struct plx_io_seg *s = plx_malloc((size_t)cap * sizeof *s);
    MPI_Offset done = 0;
    while (done < n) {
        MPI_Offset c, off = plx_io_view_map(f, pos + done, n - done, &c);
        if (k && s[k - 1].off + s[k - 1].len == off) {
            s[k - 1].len += c;
        } else {
            if (k == cap) {
                cap *= 2;
                struct plx_io_seg *ns = realloc(s, (size_t)cap * sizeof *s);
                if (!ns)
                    plx_fatal("out of memory listing %d file segments", cap);
                s = ns;
            }
            s[k].off = off;
            s[k].len = c;
            s[k].spos = done;
            k++;
        }
        done += c;
    }
    *segs_p = s;
    return k;
}

static int plx_io_atomic_lock(struct plx_file *f, short type, const struct plx_io_seg *s, int n)
{
    if (!f->atomic || n == 0)
        return 0;
    MPI_Offset lo = s[0].off, hi = s[n - 1].off + s[n - 1].len;
    return plx_io_lock(f->fd, type, lo, hi - lo);
}

static void plx_io_atomic_unlock(struct plx_file *f, const struct plx_io_seg *s, int n)
{
    if (!f->atomic || n == 0)
        return;
    MPI_Offset lo = s[0].off, hi = s[n - 1].off + s[n - 1].len;
    plx_io_lock(f->fd, F_UNLCK, lo, hi - lo);
}

/* Data sieving for independent writes (hint romio_ds_write=enable): many
 * small pieces close together are written as one read-modify-write of their
 * span, under a write lock. Only safe when every process writing the holes
 * meanwhile sieves too (plain writes take no lock), hence off by default.
 * Worth it when the pieces average below 4 KiB and fill at least an eighth of
 * a span of at most 4 MiB. */
static int plx_io_sieve_worth(const struct plx_file *f, const struct plx_io_seg *s, int n, MPI_Offset bytes)
{
    if (!f->hints.ind_sieve_write || n < 4)
        return 0;
    MPI_Offset span = s[n - 1].off + s[n - 1].len - s[0].off;
    return bytes / n < 4096 && span <= (4 << 20) && bytes * 8 >= span;
}

int plx_io_write_segs(struct plx_file *f, const struct plx_io_seg *s, int n, const char *data, MPI_Offset bytes)
{
    int err;
    if (plx_io_sieve_worth(f, s, n, bytes)) {
        MPI_Offset lo = s[0].off, span = s[n - 1].off + s[n - 1].len - lo;
        char *blk = plx_malloc((size_t)span);
        size_t got = 0;
        if (!f->atomic && (err = plx_io_lock(f->fd, F_WRLCK, lo, span)))
            goto plain;         /* no locks on this file system */
        err = plx_io_pread_full(f->fd, blk, (size_t)span, lo, &got);
        if (err == EBADF) {     /* opened write-only after all */
            if (!f->atomic)
                plx_io_lock(f->fd, F_UNLCK, lo, span);
            free(blk);
            goto plain;
        }
        if (!err) {
            if (got < (size_t)span)
                memset(blk + got, 0, (size_t)span - got);
            for (int i = 0; i < n; i++)
                memcpy(blk + (s[i].off - lo), data + s[i].spos, (size_t)s[i].len);
            err = plx_io_pwrite_full(f->fd, blk, (size_t)span, lo);
        }
        if (!f->atomic)
            plx_io_lock(f->fd, F_UNLCK, lo, span);
        free(blk);
        f->err_what = "writing (data sieving: pread/pwrite)";
        return err;
    }
plain:
    for (int i = 0; i < n; i++)
        if ((err = plx_io_pwrite_full(f->fd, data + s[i].spos, (size_t)s[i].len, s[i].off))) {
            f->err_what = "writing (pwrite)";
            return err;
        }
    return 0;
}

int plx_io_write(struct plx_file *f, MPI_Offset pos, const void *buf, MPI_Aint count, struct plx_datatype *dt,
                 MPI_Count *done_p)
{
    MPI_Offset n = (MPI_Offset)count * dt->size;
    *done_p = 0;
    f->err_rank = f->comm->rank;
    if (n == 0)
        return 0;
    const char *data;
    char *tmp;
    int err = plx_io_stage_out(f, buf, count, dt, &data, &tmp);
    if (err) {
        f->err_what = "converting to external32";
        return err;
    }
    struct plx_io_seg *s;
    int ns = plx_io_segments(f, pos, n, &s);
    if ((err = plx_io_atomic_lock(f, F_WRLCK, s, ns))) {
        f->err_what = "locking the byte range (atomic mode, fcntl)";
    } else {
        err = plx_io_write_segs(f, s, ns, data, n);
        plx_io_atomic_unlock(f, s, ns);
    }
    if (!err)
        *done_p = n;
    free(s);
    free(tmp);
    return err;
}

/* Reads the segments into data (stream order); *got_p: bytes before the
 * first short read (end of file). */
int plx_io_read_segs(struct plx_file *f, const struct plx_io_seg *s, int n, char *data, MPI_Offset *got_p)
{
    MPI_Offset got = 0;
    for (int i = 0; i < n; i++) {
        size_t g = 0;
        int err = plx_io_pread_full(f->fd, data + s[i].spos, (size_t)s[i].len, s[i].off, &g);
        if (err) {
            f->err_what = "reading (pread)";
            *got_p = got;
            return err;
        }
        got += (MPI_Offset)g;
        if (g < (size_t)s[i].len)
            break;
    }
    *got_p = got;
    return 0;
}

int plx_io_read(struct plx_file *f, MPI_Offset pos, void *buf, MPI_Aint count, struct plx_datatype *dt,
                MPI_Count *done_p)
{
    MPI_Offset n = (MPI_Offset)count * dt->size;
    *done_p = 0;
    f->err_rank = f->comm->rank;
    if (n == 0)
        return 0;
    char *tmp;
    char *data = plx_io_stage_buf(f, buf, count, dt, &tmp);
    struct plx_io_seg *s;
    int ns = plx_io_segments(f, pos, n, &s);
    MPI_Offset got = 0;
    int err;
    if ((err = plx_io_atomic_lock(f, F_RDLCK, s, ns))) {
        f->err_what = "locking the byte range (atomic mode, fcntl)";
    } else {
        err = plx_io_read_segs(f, s, ns, data, &got);
        plx_io_atomic_unlock(f, s, ns);
    }
    if (!err && (err = plx_io_stage_in(f, tmp, (size_t)got, buf, count, dt)))
        f->err_what = "converting from external32";
    *done_p = got;
    free(s);
    free(tmp);
    return err;
}

/* ---- the shared file pointer -------------------------------------------------- */

static int plx_io_shfp_usable(struct plx_file *f)
{
    int err = plx_io_shfp_open(f);
    if (err) {
        f->err_what = "making the shared file pointer's side file next to the file";
        f->err_rank = f->comm->rank;
    }
    return err;
}

static int plx_io_shfp_rmw(struct plx_file *f, int set, MPI_Offset v, MPI_Offset *old_p)
{
    int err = plx_io_shfp_usable(f);
    if (err)
        return err;
    f->err_rank = f->comm->rank;
    if ((err = plx_io_lock(f->shfp_fd, F_WRLCK, 0, sizeof(MPI_Offset)))) {
        f->err_what = "locking the shared file pointer (fcntl)";
        return err;
    }
    MPI_Offset cur = 0;
    size_t got = 0;
    err = plx_io_pread_full(f->shfp_fd, &cur, sizeof cur, 0, &got);
    if (!err && got < sizeof cur)
        cur = 0;
    if (!err && (set || v)) {
        MPI_Offset nv = set ? v : cur + v;
        err = plx_io_pwrite_full(f->shfp_fd, &nv, sizeof nv, 0);
    }
    plx_io_lock(f->shfp_fd, F_UNLCK, 0, sizeof(MPI_Offset));
    if (err)
        f->err_what = "reading or writing the shared file pointer";
    if (old_p)
        *old_p = cur;
    return err;
}

int plx_io_shfp_fetch_add(struct plx_file *f, MPI_Offset add, MPI_Offset *old_p)
{
    return plx_io_shfp_rmw(f, 0, add, old_p);
}

int plx_io_shfp_get(struct plx_file *f, MPI_Offset *v_p)
{
    return plx_io_shfp_rmw(f, 0, 0, v_p);
}

int plx_io_shfp_set(struct plx_file *f, MPI_Offset v)
{
    return plx_io_shfp_rmw(f, 1, v, NULL);
}

int plx_io_shfp_reset(struct plx_file *f)
{
    if (f->shfp_fd < 0 && access(f->shfp_name, F_OK) != 0)
        return 0;               /* never used: it reads as 0 when made */
    return plx_io_shfp_rmw(f, 1, 0, NULL);
}

int plx_io_shfp_ordered(struct plx_file *f, MPI_Offset n, MPI_Offset *mine_p)
{
    struct plx_comm *c = f->comm;
    MPI_Offset *all = plx_malloc((size_t)c->size * sizeof *all);
    plx_status_t st = plx_coll_allgather(&n, sizeof n, all, c, PLX_IO_TAG);
    if (PLX_IS_ERR(st)) {
        free(all);
        f->err_what = "exchanging the sizes of an ordered access";
        return st;
    }
    MPI_Offset total = 0, before = 0;
    for (int i = 0; i < c->size; i++) {
        if (i == c->rank)
            before = total;
        total += all[i];
    }
    free(all);
    /* rank 0 advances the pointer; its old value and its error go to everyone */
    MPI_Offset msg[2] = { 0, 0 };
    if (c->rank == 0)
        msg[1] = plx_io_shfp_fetch_add(f, total, &msg[0]);
    st = plx_coll_bcast(msg, sizeof msg, 0, c, PLX_IO_TAG);
    if (PLX_IS_ERR(st)) {
        f->err_what = "sharing the shared file pointer";
        return st;
    }
    if (msg[1]) {
        f->err_rank = 0;
        if (c->rank != 0)
            f->err_what = NULL;
        return (int)msg[1];
    }
    *mine_p = msg[0] + before;
    return 0;
}
