/*
 * Independent access: a stream range as an ascending list of file segments,
 * written or read one pwrite/pread per segment (or, with romio_ds_write,
 * one read-modify-write of their span), under a byte-range lock in atomic
 * mode.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "core/log.h"
#include "io/io_internal.h"


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
 * span, under a write lock; with the hint on, plain writes of this file take
 * the lock too. Processes that write the holes through another handle
 * without the hint (or another program) could still lose their bytes, hence
 * off by default.
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
    f->dirty |= n > 0;
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
plain:;
    /* where other processes may sieve, a plain write takes the lock too, or
     * their read-modify-write of a span holding its bytes could undo it */
    MPI_Offset lo = n ? s[0].off : 0, span = n ? s[n - 1].off + s[n - 1].len - lo : 0;
    int locked = n && f->hints.ind_sieve_write && !f->atomic && plx_io_lock(f->fd, F_WRLCK, lo, span) == 0;
    err = 0;
    for (int i = 0; i < n && !err; i++)
        if ((err = plx_io_pwrite_full(f->fd, data + s[i].spos, (size_t)s[i].len, s[i].off)))
            f->err_what = "writing (pwrite)";
    if (locked)
        plx_io_lock(f->fd, F_UNLCK, lo, span);
    return err;
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
