/*
 * Collective access: two-phase I/O with collective buffering (the algorithm
 * of Thakur, Gropp and Lusk's ROMIO, written for our file segments).
 *
 * 1. Every process lists the file segments of its access (ascending, access.c)
 *    and all share their first and last byte and segment count.
 * 2. If the accesses are non-contiguous or interleave (or the romio_cb_read /
 *    romio_cb_write hint says "enable"), the span [first, last) is cut into
 *    one file domain per aggregator (f->aggr: one process per node by
 *    default, cb_nodes of them with the hint). Otherwise every process does
 *    its own access.
 * 3. Each aggregator walks its domain cb_buffer_size bytes per round. In a
 *    round every process sends each aggregator the pieces of its access that
 *    fall in that aggregator's window: first the counts (pieces, bytes), then
 *    the piece list, with the data for a write. An aggregator writes its
 *    window with one pwrite, after one pread of the window when the pieces
 *    leave holes (read-modify-write: the holes keep what the file had); for
 *    a read it reads the window once and sends each process its pieces.
 *    The exchanges are schedules of the collective engine on the file's
 *    private communicator, so they never match user traffic.
 * 4. An I/O error on any process is agreed on at the end, so every process
 *    returns the same outcome and nobody is left waiting in an exchange.
 *
 * Nonblocking forms (plx_io_coll_start): step 1's exchange is a schedule of
 * its own whose call step runs the rest once every process's extents are in,
 * on that schedule's tag; the call returns after posting step 1.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "coll/algo.h"
#include "coll/coll.h"
#include "coll/sched.h"
#include "core/errors.h"
#include "io/io.h"
#include "io/io_internal.h"

struct plx_io_range {
    int64_t lo, hi, nseg;
};

/* A piece as it travels: file offset and length. */
struct plx_io_wire {
    int64_t off, len;
};

/* Where one piece of this process's access goes. */
struct plx_io_piece {
    MPI_Offset off, len, spos;
};

struct plx_io_tp {
    struct plx_file *f;
    int tag;                        /* 0: fresh collective tags; else this one (nonblocking) */
    int is_write;
    int p, me;
    int naggr, my_ai;               /* my_ai: my index among the aggregators, -1 if none */
    const struct plx_io_range *all;
    MPI_Offset *fd_lo, *fd_hi;
    MPI_Offset cb;
    /* this round */
    struct plx_io_piece **pieces;   /* per aggregator */
    int *npieces, *cappieces;
    int64_t (*scounts)[2];          /* per aggregator: pieces, bytes */
    int64_t (*rcounts)[2];          /* per process (aggregator side) */
    int *cursor;                    /* per aggregator: first segment not yet used up */
};

static struct plx_sched *plx_io_sched_new(const struct plx_io_tp *t, struct plx_comm *c)
{
    return t->tag ? plx_sched_new_tag(c, t->tag) : plx_sched_new(c);
}

static int plx_io_sched_err(struct plx_file *f, int code)
{
    f->err_what = "exchanging data between the processes";
    f->err_rank = f->comm->rank;
    return plx_err_class(code) == MPIX_ERR_PROC_FAILED ? PLX_ERR_PROC_FAILED : PLX_ERR_PEER;
}

static void plx_io_piece_add(struct plx_io_tp *t, int a, MPI_Offset off, MPI_Offset len, MPI_Offset spos)
{
    if (t->npieces[a] == t->cappieces[a]) {
        t->cappieces[a] = t->cappieces[a] ? 2 * t->cappieces[a] : 16;
        struct plx_io_piece *n = realloc(t->pieces[a], (size_t)t->cappieces[a] * sizeof *n);
        if (!n)
            abort();
        t->pieces[a] = n;
    }
    t->pieces[a][t->npieces[a]++] = (struct plx_io_piece){ off, len, spos };
}

/* The window of aggregator a in round r (empty: lo >= hi). */
static void plx_io_window(const struct plx_io_tp *t, int a, int r, MPI_Offset *lo, MPI_Offset *hi)
{
    *lo = t->fd_lo[a] + (MPI_Offset)r * t->cb;
    *hi = PLX_MIN(*lo + t->cb, t->fd_hi[a]);
}

static int plx_io_cmp_wire(const void *a, const void *b)
{
    const struct plx_io_wire *x = a, *y = b;
    return (x->off > y->off) - (x->off < y->off);
}

/* Do the pieces cover [lo, hi) without a hole? (sorts w) */
static int plx_io_covers(struct plx_io_wire *w, int64_t n, MPI_Offset lo, MPI_Offset hi)
{
    qsort(w, (size_t)n, sizeof *w, plx_io_cmp_wire);
    MPI_Offset end = lo;
    for (int64_t i = 0; i < n; i++) {
        if (w[i].off > end)
            return 0;
        end = PLX_MAX(end, w[i].off + w[i].len);
    }
    return end >= hi;
}

/* One round of a write. data: this process's staged bytes. */
static int plx_io_round_write(struct plx_io_tp *t, int r, const char *data, char *cbuf, int *ioerr)
{
    struct plx_file *f = t->f;
    struct plx_comm *c = f->comm;
    char **sbufs = plx_calloc((size_t)t->naggr, sizeof *sbufs);
    char **rbufs = plx_calloc((size_t)t->p, sizeof *rbufs);
    int rc = 0;
    /* counts */
    struct plx_sched *s = plx_io_sched_new(t, c);
    MPI_Offset wlo = 0, whi = 0;
    if (t->my_ai >= 0)
        plx_io_window(t, t->my_ai, r, &wlo, &whi);
    int my_window = t->my_ai >= 0 && wlo < whi;
    for (int a = 0; a < t->naggr; a++) {
        MPI_Offset lo, hi;
        plx_io_window(t, a, r, &lo, &hi);
        /* a process without data sends nothing: every aggregator knows it */
        if (lo >= hi || f->aggr[a] == t->me || t->all[t->me].nseg == 0)
            continue;
        plx_sched_send(s, t->scounts[a], 16, plx_coll_byte(), f->aggr[a]);
    }
    if (my_window)
        for (int q = 0; q < t->p; q++) {
            if (q == t->me) {
                memcpy(t->rcounts[q], t->scounts[t->my_ai], 16);
                continue;
            }
            if (t->all[q].nseg == 0) {
                t->rcounts[q][0] = t->rcounts[q][1] = 0;
                continue;
            }
            plx_sched_recv(s, t->rcounts[q], 16, plx_coll_byte(), q);
        }
    int code = plx_sched_run(s);
    if (code != MPI_SUCCESS) {
        rc = plx_io_sched_err(f, code);
        goto out;
    }
    /* pieces and data: the list, then the data straight from the staged
     * stream (one aggregator's pieces of a round are one slice of it) */
    s = plx_io_sched_new(t, c);
    for (int a = 0; a < t->naggr; a++) {
        int64_t np = t->scounts[a][0], nb = t->scounts[a][1];
        if (np == 0)
            continue;
        const char *slice = data + t->pieces[a][0].spos;
        int self = f->aggr[a] == t->me;
        size_t lsize = (size_t)np * sizeof(struct plx_io_wire);
        char *b = sbufs[a] = plx_malloc(lsize + (self ? (size_t)nb : 0));
        struct plx_io_wire *w = (struct plx_io_wire *)b;
        for (int64_t i = 0; i < np; i++)
            w[i] = (struct plx_io_wire){ t->pieces[a][i].off, t->pieces[a][i].len };
        if (self) {
            memcpy(b + lsize, slice, (size_t)nb);
            continue;
        }
        plx_sched_send(s, b, (MPI_Aint)lsize, plx_coll_byte(), f->aggr[a]);
        plx_sched_send(s, slice, (MPI_Aint)nb, plx_coll_byte(), f->aggr[a]);
    }
    if (my_window)
        for (int q = 0; q < t->p; q++) {
            int64_t np = t->rcounts[q][0], nb = t->rcounts[q][1];
            if (np == 0)
                continue;
            if (q == t->me) {
                rbufs[q] = sbufs[t->my_ai];
                continue;
            }
            size_t lsize = (size_t)np * sizeof(struct plx_io_wire);
            rbufs[q] = plx_malloc(lsize + (size_t)nb);
            /* two messages from one sender match in order */
            plx_sched_recv(s, rbufs[q], (MPI_Aint)lsize, plx_coll_byte(), q);
            plx_sched_recv(s, rbufs[q] + lsize, (MPI_Aint)nb, plx_coll_byte(), q);
        }
    code = plx_sched_run(s);
    if (code != MPI_SUCCESS) {
        rc = plx_io_sched_err(f, code);
        goto out;
    }
    if (!my_window || *ioerr)
        goto out;
    /* the window: what the pieces span, read first when they leave holes */
    int64_t total = 0;
    MPI_Offset lo = whi, hi = wlo;
    for (int q = 0; q < t->p; q++) {
        total += t->rcounts[q][0];
        const struct plx_io_wire *w = (const struct plx_io_wire *)rbufs[q];
        for (int64_t i = 0; i < t->rcounts[q][0]; i++) {
            lo = PLX_MIN(lo, w[i].off);
            hi = PLX_MAX(hi, w[i].off + w[i].len);
        }
    }
    if (total == 0)
        goto out;
    struct plx_io_wire *allw = plx_malloc((size_t)total * sizeof *allw);
    int64_t k = 0;
    for (int q = 0; q < t->p; q++) {
        if (!t->rcounts[q][0])
            continue;
        memcpy(allw + k, rbufs[q], (size_t)t->rcounts[q][0] * sizeof *allw);
        k += t->rcounts[q][0];
    }
    int full = plx_io_covers(allw, total, lo, hi);
    free(allw);
    if (f->atomic && (*ioerr = plx_io_lock(f->fd, F_WRLCK, lo, hi - lo))) {
        f->err_what = "locking the byte range (atomic mode, fcntl)";
        goto out;
    }
    if (!full) {
        size_t got = 0;
        *ioerr = plx_io_pread_full(f->fd, cbuf, (size_t)(hi - lo), lo, &got);
        if (*ioerr) {
            f->err_what = "reading the holes of a collective write (pread)";
            goto unlock;
        }
        memset(cbuf + got, 0, (size_t)(hi - lo) - got);
    }
    /* later ranks' data lands last where accesses overlap */
    for (int q = 0; q < t->p; q++) {
        int64_t np = t->rcounts[q][0];
        const struct plx_io_wire *w = (const struct plx_io_wire *)rbufs[q];
        const char *d = rbufs[q] + (size_t)np * sizeof *w;
        for (int64_t i = 0; i < np; i++) {
            memcpy(cbuf + (w[i].off - lo), d, (size_t)w[i].len);
            d += w[i].len;
        }
    }
    f->dirty = 1;
    if ((*ioerr = plx_io_pwrite_full(f->fd, cbuf, (size_t)(hi - lo), lo)))
        f->err_what = "writing a collective buffer (pwrite)";
unlock:
    if (f->atomic)
        plx_io_lock(f->fd, F_UNLCK, lo, hi - lo);
out:
    for (int q = 0; q < t->p; q++)
        if (rbufs[q] && (t->my_ai < 0 || rbufs[q] != sbufs[t->my_ai]))
            free(rbufs[q]);
    for (int a = 0; a < t->naggr; a++)
        free(sbufs[a]);
    free(sbufs);
    free(rbufs);
    return rc;
}

/* One round of a read. data: where this process's stream bytes go. */
static int plx_io_round_read(struct plx_io_tp *t, int r, char *data, char *cbuf, int *ioerr)
{
    struct plx_file *f = t->f;
    struct plx_comm *c = f->comm;
    struct plx_io_wire **slists = plx_calloc((size_t)t->naggr, sizeof *slists);
    struct plx_io_wire **rlists = plx_calloc((size_t)t->p, sizeof *rlists);
    char **replies = plx_calloc((size_t)t->p, sizeof *replies);
    int rc = 0, code;
    MPI_Offset wlo = 0, whi = 0;
    if (t->my_ai >= 0)
        plx_io_window(t, t->my_ai, r, &wlo, &whi);
    int my_window = t->my_ai >= 0 && wlo < whi;

    /* counts and piece lists in one schedule: the lists follow the counts
     * in a second round, sized by them */
    struct plx_sched *s = plx_io_sched_new(t, c);
    for (int a = 0; a < t->naggr; a++) {
        MPI_Offset lo, hi;
        plx_io_window(t, a, r, &lo, &hi);
        if (lo >= hi || f->aggr[a] == t->me || t->all[t->me].nseg == 0)
            continue;
        plx_sched_send(s, t->scounts[a], 16, plx_coll_byte(), f->aggr[a]);
    }
    if (my_window)
        for (int q = 0; q < t->p; q++) {
            if (q == t->me) {
                memcpy(t->rcounts[q], t->scounts[t->my_ai], 16);
                continue;
            }
            if (t->all[q].nseg == 0) {
                t->rcounts[q][0] = t->rcounts[q][1] = 0;
                continue;
            }
            plx_sched_recv(s, t->rcounts[q], 16, plx_coll_byte(), q);
        }
    if ((code = plx_sched_run(s)) != MPI_SUCCESS) {
        rc = plx_io_sched_err(f, code);
        goto out;
    }
    s = plx_io_sched_new(t, c);
    for (int a = 0; a < t->naggr; a++) {
        int64_t np = t->scounts[a][0];
        if (np == 0)
            continue;
        struct plx_io_wire *w = slists[a] = plx_malloc((size_t)np * sizeof *w);
        for (int64_t i = 0; i < np; i++)
            w[i] = (struct plx_io_wire){ t->pieces[a][i].off, t->pieces[a][i].len };
        if (f->aggr[a] != t->me)
            plx_sched_send(s, w, (MPI_Aint)((size_t)np * sizeof *w), plx_coll_byte(), f->aggr[a]);
    }
    if (my_window)
        for (int q = 0; q < t->p; q++) {
            int64_t np = t->rcounts[q][0];
            if (np == 0)
                continue;
            if (q == t->me) {
                rlists[q] = slists[t->my_ai];
                continue;
            }
            rlists[q] = plx_malloc((size_t)np * sizeof **rlists);
            plx_sched_recv(s, rlists[q], (MPI_Aint)((size_t)np * sizeof **rlists), plx_coll_byte(), q);
        }
    if ((code = plx_sched_run(s)) != MPI_SUCCESS) {
        rc = plx_io_sched_err(f, code);
        goto out;
    }
    /* the aggregator reads its window once and answers */
    if (my_window) {
        MPI_Offset lo = whi, hi = wlo;
        for (int q = 0; q < t->p; q++)
            for (int64_t i = 0; i < t->rcounts[q][0]; i++) {
                lo = PLX_MIN(lo, rlists[q][i].off);
                hi = PLX_MAX(hi, rlists[q][i].off + rlists[q][i].len);
            }
        if (lo < hi && !*ioerr) {
            size_t got = 0;
            if (f->atomic && (*ioerr = plx_io_lock(f->fd, F_RDLCK, lo, hi - lo)))
                f->err_what = "locking the byte range (atomic mode, fcntl)";
            if (!*ioerr) {
                *ioerr = plx_io_pread_full(f->fd, cbuf, (size_t)(hi - lo), lo, &got);
                if (*ioerr)
                    f->err_what = "reading a collective buffer (pread)";
                if (f->atomic)
                    plx_io_lock(f->fd, F_UNLCK, lo, hi - lo);
            }
            memset(cbuf + got, 0, (size_t)(hi - lo) - got);   /* past the end: reported short by the caller */
        }
        for (int q = 0; q < t->p; q++) {
            if (t->rcounts[q][0] == 0)
                continue;
            char *d = replies[q] = plx_malloc((size_t)t->rcounts[q][1] ? (size_t)t->rcounts[q][1] : 1);
            for (int64_t i = 0; i < t->rcounts[q][0]; i++) {
                if (lo < hi)
                    memcpy(d, cbuf + (rlists[q][i].off - lo), (size_t)rlists[q][i].len);
                d += rlists[q][i].len;
            }
        }
    }
    /* the answers land straight in the stream: one aggregator's pieces of a
     * round are one slice of it */
    s = plx_io_sched_new(t, c);
    if (my_window)
        for (int q = 0; q < t->p; q++)
            if (t->rcounts[q][0] && q != t->me && t->rcounts[q][1])
                plx_sched_send(s, replies[q], (MPI_Aint)t->rcounts[q][1], plx_coll_byte(), q);
    for (int a = 0; a < t->naggr; a++) {
        if (t->scounts[a][0] == 0)
            continue;
        char *slice = data + t->pieces[a][0].spos;
        if (f->aggr[a] == t->me)
            memcpy(slice, replies[t->me], (size_t)t->scounts[a][1]);
        else
            plx_sched_recv(s, slice, (MPI_Aint)t->scounts[a][1], plx_coll_byte(), f->aggr[a]);
    }
    if ((code = plx_sched_run(s)) != MPI_SUCCESS) {
        rc = plx_io_sched_err(f, code);
        goto out;
    }
out:
    for (int a = 0; a < t->naggr; a++)
        free(slists[a]);
    for (int q = 0; q < t->p; q++) {
        if (rlists[q] && (t->my_ai < 0 || rlists[q] != slists[t->my_ai]))
            free(rlists[q]);
        free(replies[q]);
    }
    free(slists);
    free(rlists);
    free(replies);
    return rc;
}

/* Both directions: data is the staged stream (n bytes, segments s[0..ns)). */
static int plx_io_two_phase(struct plx_file *f, int is_write, const struct plx_io_range *all,
                            const struct plx_io_seg *segs, int ns, char *data, int tag)
{
    struct plx_comm *c = f->comm;
    struct plx_io_tp t = { .f = f, .tag = tag, .is_write = is_write, .p = c->size, .me = c->rank, .all = all };
    MPI_Offset gmin = INT64_MAX, gmax = INT64_MIN;
    for (int q = 0; q < t.p; q++)
        if (all[q].nseg) {
            gmin = PLX_MIN(gmin, all[q].lo);
            gmax = PLX_MAX(gmax, all[q].hi);
        }
    t.naggr = f->naggr;
    t.my_ai = -1;
    for (int a = 0; a < t.naggr; a++)
        if (f->aggr[a] == t.me)
            t.my_ai = a;
    t.cb = f->hints.cb_buffer_size;
    t.fd_lo = plx_malloc((size_t)t.naggr * sizeof *t.fd_lo);
    t.fd_hi = plx_malloc((size_t)t.naggr * sizeof *t.fd_hi);
    MPI_Offset span = gmax - gmin, fdsize = (span + t.naggr - 1) / t.naggr;
    int nrounds = 0;
    for (int a = 0; a < t.naggr; a++) {
        t.fd_lo[a] = PLX_MIN(gmin + (MPI_Offset)a * fdsize, gmax);
        t.fd_hi[a] = PLX_MIN(t.fd_lo[a] + fdsize, gmax);
        int nr = (int)((t.fd_hi[a] - t.fd_lo[a] + t.cb - 1) / t.cb);
        nrounds = PLX_MAX(nrounds, nr);
    }
    t.pieces = plx_calloc((size_t)t.naggr, sizeof *t.pieces);
    t.npieces = plx_calloc((size_t)t.naggr, sizeof *t.npieces);
    t.cappieces = plx_calloc((size_t)t.naggr, sizeof *t.cappieces);
    t.cursor = plx_calloc((size_t)t.naggr, sizeof *t.cursor);
    t.scounts = plx_calloc((size_t)t.naggr, sizeof *t.scounts);
    t.rcounts = plx_calloc((size_t)t.p, sizeof *t.rcounts);
    char *cbuf = t.my_ai >= 0 ? plx_malloc((size_t)PLX_MAX(PLX_MIN(t.cb, fdsize), 1)) : NULL;
    int rc = 0, ioerr = 0;
    for (int r = 0; r < nrounds && !rc; r++) {
        /* my pieces in each aggregator's window this round */
        for (int a = 0; a < t.naggr; a++) {
            MPI_Offset lo, hi;
            plx_io_window(&t, a, r, &lo, &hi);
            t.npieces[a] = 0;
            int64_t bytes = 0;
            int i = t.cursor[a];
            while (i < ns && segs[i].off + segs[i].len <= lo)
                i++;
            t.cursor[a] = i;
            for (; lo < hi && i < ns && segs[i].off < hi; i++) {
                MPI_Offset s0 = PLX_MAX(segs[i].off, lo), s1 = PLX_MIN(segs[i].off + segs[i].len, hi);
                if (s0 >= s1)
                    continue;
                plx_io_piece_add(&t, a, s0, s1 - s0, segs[i].spos + (s0 - segs[i].off));
                bytes += s1 - s0;
            }
            t.scounts[a][0] = t.npieces[a];
            t.scounts[a][1] = bytes;
        }
        rc = is_write ? plx_io_round_write(&t, r, data, cbuf, &ioerr) : plx_io_round_read(&t, r, data, cbuf, &ioerr);
    }
    for (int a = 0; a < t.naggr; a++)
        free(t.pieces[a]);
    free(t.pieces);
    free(t.npieces);
    free(t.cappieces);
    free(t.cursor);
    free(t.scounts);
    free(t.rcounts);
    free(t.fd_lo);
    free(t.fd_hi);
    free(cbuf);
    if (!rc && ioerr)
        f->err_rank = t.me;
    return rc ? rc : ioerr;
}

/* One collective access: what phase A prepares and phase B uses. */
struct plx_io_op {
    struct plx_file *f;
    int is_write;
    void *buf;
    MPI_Aint count;
    struct plx_datatype *dt;    /* referenced */
    MPI_Offset n;               /* stream bytes (0: takes part without data) */
    int err;                    /* this process's error so far */
    const char *wdata;
    char *tmp, *rdata;
    struct plx_io_seg *segs;
    int ns;
    struct plx_io_range mine;
    struct plx_io_range *all;   /* every process's extents */
    MPI_Count done;
    /* nonblocking: how to make the request's error code */
    int (*make_err)(struct plx_file *f, const char *fn, int rc);
    const char *fn;
    int tag;                    /* nonblocking: its schedule's tag, for everything it runs */
};

/* Phase A: stage the data, list the segments, this process's extents. */
static struct plx_io_op *plx_io_op_new(struct plx_file *f, int is_write, MPI_Offset pos, void *buf, MPI_Aint count,
                                       struct plx_datatype *dt)
{
    struct plx_io_op *op = plx_calloc(1, sizeof *op);
    op->f = f;
    op->is_write = is_write;
    op->buf = buf;
    op->count = count;
    op->dt = dt;
    plx_dt_addref(dt);
    op->n = (MPI_Offset)count * dt->size;
    f->err_rank = f->comm->rank;
    f->err_what = NULL;
    if (is_write) {
        if ((op->err = plx_io_stage_out(f, buf, count, dt, &op->wdata, &op->tmp))) {
            f->err_what = "converting to external32";
            op->n = 0;
        }
    } else {
        op->rdata = plx_io_stage_buf(f, buf, count, dt, &op->tmp);
    }
    op->ns = op->n ? plx_io_segments(f, pos, op->n, &op->segs) : 0;
    op->mine = (struct plx_io_range){ INT64_MAX, INT64_MIN, op->ns };
    if (op->ns) {
        op->mine.lo = op->segs[0].off;
        op->mine.hi = op->segs[op->ns - 1].off + op->segs[op->ns - 1].len;
    }
    op->all = plx_malloc((size_t)f->comm->size * sizeof *op->all);
    return op;
}

static void plx_io_op_free(struct plx_io_op *op)
{
    free(op->all);
    free(op->segs);
    free(op->tmp);
    plx_dt_release(op->dt);
    free(op);
}

/* Phase B, once op->all holds everyone's extents: two-phase or independent
 * access, the agreement on errors, the data into the user's buffer. */
static int plx_io_op_run(struct plx_io_op *op)
{
    struct plx_file *f = op->f;
    struct plx_comm *c = f->comm;
    const struct plx_io_range *all = op->all;
    int err = 0;
    int active = 0, noncontig = 0, interleaved = 0;
    MPI_Offset prev_hi = INT64_MIN;
    for (int q = 0; q < c->size; q++) {
        if (!all[q].nseg)
            continue;
        active++;
        noncontig |= all[q].nseg > 1;
        /* ranks' ranges out of rank order or overlapping count as interleaved */
        if (all[q].lo < prev_hi)
            interleaved = 1;
        prev_hi = PLX_MAX(prev_hi, all[q].hi);
    }
    int mode = op->is_write ? f->hints.cb_write : f->hints.cb_read;
    int use_cb = active > 0 && (mode == PLX_IO_CB_ENABLE ||
                                (mode == PLX_IO_CB_AUTO && active > 1 && (noncontig || interleaved)));
    int ioerr = op->err;
    if (use_cb) {
        int rc = plx_io_two_phase(f, op->is_write, all, op->segs, op->ns,
                                  op->is_write ? (char *)op->wdata : op->rdata, op->tag);
        if (rc < 0)
            return rc;          /* communication failed: no agreement possible */
        if (!ioerr)
            ioerr = rc;
    } else if (op->ns && !ioerr) {
        const struct plx_io_range *m = &op->mine;
        if (f->atomic && (ioerr = plx_io_lock(f->fd, op->is_write ? F_WRLCK : F_RDLCK, m->lo, m->hi - m->lo))) {
            f->err_what = "locking the byte range (atomic mode, fcntl)";
        } else {
            MPI_Offset got;
            ioerr = op->is_write ? plx_io_write_segs(f, op->segs, op->ns, op->wdata, op->n)
                                 : plx_io_read_segs(f, op->segs, op->ns, op->rdata, &got);
            if (f->atomic)
                plx_io_lock(f->fd, F_UNLCK, m->lo, m->hi - m->lo);
        }
    }
    const char *what = f->err_what;
    err = plx_io_agree_tag(f, ioerr, op->tag ? op->tag : PLX_IO_TAG);
    if (err && f->err_rank == c->rank)
        f->err_what = what;
    if (err)
        return err;
    if (op->is_write) {
        op->done = op->n;
    } else if (op->ns) {
        /* what lies before the end of the file was read */
        struct stat sb;
        MPI_Offset eof = fstat(f->fd, &sb) == 0 ? (MPI_Offset)sb.st_size : INT64_MAX, got = 0;
        for (int i = 0; i < op->ns && op->segs[i].off < eof; i++) {
            got += PLX_MIN(op->segs[i].len, eof - op->segs[i].off);
            if (op->segs[i].off + op->segs[i].len > eof)
                break;
        }
        op->done = got;
        if ((err = plx_io_stage_in(f, op->tmp, (size_t)got, op->buf, op->count, op->dt)))
            f->err_what = "converting from external32";
    }
    return err;
}

static int plx_io_coll(struct plx_file *f, int is_write, MPI_Offset pos, void *buf, MPI_Aint count,
                       struct plx_datatype *dt, MPI_Count *done_p)
{
    struct plx_io_op *op = plx_io_op_new(f, is_write, pos, buf, count, dt);
    plx_status_t st = plx_coll_allgather(&op->mine, sizeof op->mine, op->all, f->comm, PLX_IO_TAG);
    int err;
    if (PLX_IS_ERR(st)) {
        f->err_what = "exchanging the extents of a collective access";
        err = st;
    } else {
        err = plx_io_op_run(op);
    }
    *done_p = op->done;
    plx_io_op_free(op);
    return err;
}

/* The nonblocking form's last step: phase B, run by the progress engine
 * once every process's extents are in (every process has started). */
static void plx_io_op_step(struct plx_sched *s, void *arg)
{
    struct plx_io_op *op = arg;
    op->tag = s->tag;
    if (s->err == MPI_SUCCESS) {
        int rc = plx_io_op_run(op);
        if (rc)
            s->err = op->make_err(op->f, op->fn, rc);
    }
    s->req->st_bytes = (size_t)op->done;
    plx_io_op_free(op);
}

struct plx_request *plx_io_coll_start(struct plx_file *f, int is_write, MPI_Offset pos, void *buf,
                                      MPI_Aint count, struct plx_datatype *dt,
                                      int (*make_err)(struct plx_file *f, const char *fn, int rc), const char *fn)
{
    struct plx_io_op *op = plx_io_op_new(f, is_write, pos, buf, count, dt);
    op->make_err = make_err;
    op->fn = fn;
    struct plx_comm *c = f->comm;
    /* round 1: everyone's extents (an allgather of sends and receives);
     * round 2: the rest, which needs them */
    struct plx_sched *s = plx_sched_new(c);
    op->all[c->rank] = op->mine;
    for (int q = 0; q < c->size; q++) {
        if (q == c->rank)
            continue;
        plx_sched_send(s, &op->mine, (MPI_Aint)sizeof op->mine, plx_coll_byte(), q);
        plx_sched_recv(s, &op->all[q], (MPI_Aint)sizeof op->all[q], plx_coll_byte(), q);
    }
    plx_sched_fence(s);
    plx_sched_call(s, plx_io_op_step, op);
    return plx_sched_start(s);
}

int plx_io_read_all(struct plx_file *f, MPI_Offset pos, void *buf, MPI_Aint count, struct plx_datatype *dt,
                    MPI_Count *done_p)
{
    return plx_io_coll(f, 0, pos, buf, count, dt, done_p);
}

int plx_io_write_all(struct plx_file *f, MPI_Offset pos, const void *buf, MPI_Aint count,
                     struct plx_datatype *dt, MPI_Count *done_p)
{
    return plx_io_coll(f, 1, pos, (void *)buf, count, dt, done_p);
}
