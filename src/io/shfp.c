/*
 * The shared file pointer: 8 bytes in a side file next to the data, read and
 * advanced under an fcntl lock (see io.h), and the ordered accesses built on
 * it.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "coll/coll.h"
#include "core/runtime.h"
#include "io/io_internal.h"

/* The side file of the shared pointer: named the same on every process
 * without talking (job id, first member and context id of the file's
 * communicator), made by whoever uses it first; an empty file
 * reads as 0. Most files never use the shared pointer and never get one. */
void plx_io_shfp_name(struct plx_file *f)
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

int plx_io_shfp_open(struct plx_file *f)
{
    if (f->shfp_fd >= 0)
        return 0;
    f->shfp_fd = open(f->shfp_name, O_RDWR | O_CREAT, 0600);
    return f->shfp_fd < 0 ? errno : 0;
}


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
