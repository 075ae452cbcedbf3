/* bench/async_target.c — the latency an origin sees while its target
 * computes without calling MPI (asynchronous progress, point-to-point).
 * Rank 1 (target) posts `iters` receives, then rank 0 (origin) sends
 * `iters` messages with MPI_Ssend, one after the other: a synchronous send
 * completes only once the target has matched it (and, above the eager
 * limit, once the data has moved), so each one needs the target's progress.
 *   idle: the target waits in MPI_Waitall (inside the library);
 *   busy: the target computes for D without any MPI call, then waits.
 * D = max(10 ms, d * iters * idle latency), at most 1 s, d = 4 by default
 * (-d): long enough that a library with asynchronous progress finishes all
 * sends during the computation; one without it makes the origin wait for
 * the end of the computation, so its busy latency approaches D / iters.
 * Latencies are the mean per send (OSU style) and the median of the single
 * sends (on a loaded machine a few sends that wait to be scheduled move the
 * mean). The received data are checked.
 * Output rows: size_B idle_us busy_us idle_median_us busy_median_us target_compute_us
 */
#include "util.h"

static const char usage[] =
    "async_target: MPI_Ssend latency while the target is idle in MPI vs computing outside it\n"
    "usage: async_target [-d factor] [-m [min:]max] [-i N] [-x N] [-I N] [-X N]";

#define POOL_MAX (64 * BENCH_MiB)   /* receive buffers of one round */

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* One round of n sends; returns the origin's mean time per send and sets
 * *median (0 elsewhere). */
static double round_trip(int rank, char *sbuf, char *rbuf, size_t size, size_t stride, int n, double compute_us,
                         MPI_Request *reqs, double *each, double *median)
{
    double t = 0.0;
    *median = 0.0;
    if (rank == 1)
        for (int i = 0; i < n; i++)
            MPI_Irecv(rbuf + (size_t)i * stride, (int)size, MPI_BYTE, 0, 7, MPI_COMM_WORLD, &reqs[i]);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        double t0 = bench_now(), ti = t0;
        for (int i = 0; i < n; i++) {
            MPI_Ssend(sbuf, (int)size, MPI_BYTE, 1, 7, MPI_COMM_WORLD);
            double t1 = bench_now();
            each[i] = t1 - ti;
            ti = t1;
        }
        t = (ti - t0) / n;
        qsort(each, (size_t)n, sizeof *each, cmp_double);
        *median = n % 2 ? each[n / 2] : 0.5 * (each[n / 2 - 1] + each[n / 2]);
    } else if (rank == 1) {
        if (compute_us > 0)
            bench_compute_us(compute_us);
        MPI_Waitall(n, reqs, MPI_STATUSES_IGNORE);
        for (int i = 0; i < n; i++)
            bench_expect(rbuf + (size_t)i * stride, size, (unsigned)size, "async_target message", size);
    }
    return t;
}

int main(int argc, char **argv)
{
    struct bench_opts o;
    MPI_Init(&argc, &argv);
    bench_opts_init(&o, 8, BENCH_MiB, 100, 10);
    o.param = 4.0;
    int rc = bench_mpi_start(&argc, &argv, &o, usage, 2, 0);
    if (rc) {
        MPI_Finalize();
        return rc - 1;
    }
    if (o.param <= 0)
        o.param = 4.0;
    int rank = bench_mpi_rank();
    int maxn = o.iters > o.iters_large ? o.iters : o.iters_large;
    size_t pool = o.max_size * (size_t)maxn;
    if (pool > POOL_MAX)
        pool = POOL_MAX;
    char *sbuf = bench_alloc(o.max_size), *rbuf = bench_alloc(pool < o.max_size ? o.max_size : pool);
    MPI_Request *reqs = malloc(sizeof *reqs * (size_t)maxn);
    double *each = malloc(sizeof *each * (size_t)maxn), med_idle, med_busy;
    if (rank == 0) {
        bench_print_header("async_target", "MPI_Ssend latency, target idle in MPI_Waitall vs computing", &o,
                           bench_mpi_size());
        printf("# compute: max(10 ms, %g * iterations * idle latency), at most 1 s\n", o.param);
        printf("# columns: size_B idle_us busy_us idle_median_us busy_median_us target_compute_us\n");
        fflush(stdout);
    }
    for (size_t size = o.min_size; size <= o.max_size; size = bench_next_size(size)) {
        int iters = bench_iters(&o, size), warmup = bench_warmup(&o, size);
        /* receive buffers: distinct while they fit in the pool, else reused
         * (the check then sees the last message in each, all equal) */
        size_t stride = size * (size_t)iters <= pool ? size : 0;
        bench_fill(sbuf, size, (unsigned)size);
        if (warmup > 0)
            round_trip(rank, sbuf, rbuf, size, stride, warmup, 0.0, reqs, each, &med_idle);
        double idle = round_trip(rank, sbuf, rbuf, size, stride, iters, 0.0, reqs, each, &med_idle);
        double compute_us = o.param * iters * idle * 1e6;
        if (compute_us < 10000.0)
            compute_us = 10000.0;
        if (compute_us > 1e6)
            compute_us = 1e6;
        MPI_Bcast(&compute_us, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
        double busy = round_trip(rank, sbuf, rbuf, size, stride, iters, compute_us, reqs, each, &med_busy);
        if (rank == 0) {
            printf("%zu %.3f %.3f %.3f %.3f %.0f\n", size, idle * 1e6, busy * 1e6, med_idle * 1e6, med_busy * 1e6,
                   compute_us);
            fflush(stdout);
        }
    }
    if (rank == 0)
        bench_print_end();
    free(reqs);
    free(each);
    free(sbuf);
    free(rbuf);
    MPI_Finalize();
    return 0;
}
