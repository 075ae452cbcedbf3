/* bench/halo_acc.c — a mixed two-sided / one-sided kernel: a 1-D halo
 * exchange whose boundaries go by messages and whose reduction goes by
 * MPI_Accumulate. It is the workload of a hybrid route (two-sided traffic
 * over one channel, one-sided over another): run it under several routes
 * side by side (bench/hybrid_halo.sh) rather than across libraries.
 *
 * Ranks form a ring. Per iteration each rank
 *   1. exchanges its two boundaries of `size` bytes (doubles) with its left
 *      and right neighbours (MPI_Irecv x2, MPI_Isend x2, MPI_Waitall),
 *   2. runs a 3-point stencil over an interior of 4 x the halo,
 *   3. adds a vector of 4 int64 partial sums into rank 0's window with
 *      MPI_Accumulate(MPI_SUM): under MPI_Win_lock_all + MPI_Win_flush(0)
 *      (-s passive, the default) or between two MPI_Win_fence (-s fence).
 * The received halos are checked every iteration (every element encodes the
 * sender, the iteration and its index), and rank 0's totals at the end.
 * HALO_SPIN_US=N (environment) makes rank 0, the target of every
 * accumulate, compute N microseconds longer per iteration (a busy loop
 * outside MPI, after its stencil): imbalance, where an accumulate that needs
 * the target's CPU waits for it and one applied without it need not.
 * Output rows: size_B iter_us halo_us acc_us iter_med_us — the mean time of
 * one iteration, of its halo exchange and of its reduction, and the median
 * time of one iteration (robust against the scheduler's stalls on a loaded
 * machine), each of the slowest rank.
 */
#include "util.h"

static const char usage[] =
    "halo_acc: 1-D halo exchange by messages plus a reduction by MPI_Accumulate to rank 0\n"
    "usage: halo_acc [-s passive|fence] [-m [min:]max] [-i N] [-x N] [-I N] [-X N]";

#define NACC 4

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Value of element i of the boundary `side` (0 left, 1 right) that rank r
 * sends at iteration it: exact in a double. */
static double halo_val(int r, int it, int side, size_t i)
{
    return (double)((long long)r * 1000003LL + (long long)it * 8191LL + (long long)side * 131071LL + (long long)i);
}

static long long acc_val(int r, int it, int k)
{
    return (long long)(r + 1) * 1000 + (long long)it * 3 + k;
}

int main(int argc, char **argv)
{
    struct bench_opts o;
    MPI_Init(&argc, &argv);
    bench_opts_init(&o, 8, 64 * BENCH_KiB, 500, 50);
    int rc = bench_mpi_start(&argc, &argv, &o, usage, 2, 0);
    if (rc) {
        MPI_Finalize();
        return rc - 1;
    }
    int fence = !strcmp(o.sync, "fence");
    if (o.sync[0] && !fence && strcmp(o.sync, "passive")) {
        if (bench_mpi_rank() == 0)
            fprintf(stderr, "halo_acc: -s takes passive or fence, not '%s'\n", o.sync);
        MPI_Finalize();
        return 1;
    }
    int rank = bench_mpi_rank(), n = bench_mpi_size();
    const char *spin_env = getenv("HALO_SPIN_US");
    double spin = spin_env ? atof(spin_env) * 1e-6 : 0;
    int left = (rank + n - 1) % n, right = (rank + 1) % n;
    size_t maxel = o.max_size / sizeof(double) ? o.max_size / sizeof(double) : 1;
    double *sendl = bench_alloc(maxel * sizeof(double)), *sendr = bench_alloc(maxel * sizeof(double));
    double *recvl = bench_alloc(maxel * sizeof(double)), *recvr = bench_alloc(maxel * sizeof(double));
    double *u = bench_alloc((4 * maxel + 2) * sizeof(double)), *v = bench_alloc((4 * maxel + 2) * sizeof(double));
    long long *base = NULL, contrib[NACC];
    double *itt = bench_alloc((size_t)(o.iters > o.iters_large ? o.iters : o.iters_large) * sizeof(double));
    MPI_Win win;
    MPI_Win_allocate((MPI_Aint)(NACC * sizeof(long long)), (int)sizeof(long long), MPI_INFO_NULL, MPI_COMM_WORLD,
                     &base, &win);

    if (rank == 0) {
        bench_print_header("halo_acc", "1-D halo exchange by messages, reduction by MPI_Accumulate to rank 0", &o, n);
        printf("# sync: %s\n", fence ? "fence" : "passive (lock_all, accumulate, flush)");
        if (spin > 0)
            printf("# imbalance: rank 0 computes %.0f us more per iteration (HALO_SPIN_US)\n", spin * 1e6);
        printf("# columns: size_B iter_us halo_us acc_us iter_med_us\n");
        fflush(stdout);
    }
    for (size_t size = o.min_size < sizeof(double) ? sizeof(double) : o.min_size; size <= o.max_size;
         size = bench_next_size(size)) {
        size_t nel = size / sizeof(double), nin = 4 * nel;
        int iters = bench_iters(&o, size), warm = bench_warmup(&o, size), total = iters + warm;
        /* the window starts at zero for each size */
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, win);
        memset(base, 0, NACC * sizeof(long long));
        MPI_Win_unlock(rank, win);
        MPI_Barrier(MPI_COMM_WORLD);
        if (fence)
            MPI_Win_fence(0, win);
        else
            MPI_Win_lock_all(0, win);
        double t_halo = 0, t_acc = 0, t0 = 0;
        for (int it = 0; it < total; it++) {
            if (it == warm) {
                MPI_Barrier(MPI_COMM_WORLD);
                t_halo = t_acc = 0;
                t0 = bench_now();
            }
            double a = bench_now();
            for (size_t i = 0; i < nel; i++) {
                sendl[i] = halo_val(rank, it, 0, i);
                sendr[i] = halo_val(rank, it, 1, i);
            }
            MPI_Request rq[4];
            MPI_Status st[4];
            MPI_Irecv(recvl, (int)nel, MPI_DOUBLE, left, 1, MPI_COMM_WORLD, &rq[0]);
            MPI_Irecv(recvr, (int)nel, MPI_DOUBLE, right, 0, MPI_COMM_WORLD, &rq[1]);
            MPI_Isend(sendl, (int)nel, MPI_DOUBLE, left, 0, MPI_COMM_WORLD, &rq[2]);
            MPI_Isend(sendr, (int)nel, MPI_DOUBLE, right, 1, MPI_COMM_WORLD, &rq[3]);
            MPI_Waitall(4, rq, st);
            /* what the left neighbour sent right, and the right one left */
            for (size_t i = 0; i < nel; i++) {
                if (recvl[i] != halo_val(left, it, 1, i) || recvr[i] != halo_val(right, it, 0, i))
                    bench_fail("iteration %d: halo element %zu of a %zu-byte boundary is wrong", it, i, size);
            }
            double b = bench_now();
            u[0] = recvl[nel - 1];
            u[nin + 1] = recvr[0];
            for (size_t i = 1; i <= nin; i++)
                v[i] = 0.25 * u[i - 1] + 0.5 * u[i] + 0.25 * u[i + 1];
            double *tmp = u;
            u = v;
            v = tmp;
            if (rank == 0 && spin > 0) {
                double until = bench_now() + spin;
                while (bench_now() < until)
                    ;
            }
            double c = bench_now();
            for (int k = 0; k < NACC; k++)
                contrib[k] = acc_val(rank, it, k);
            MPI_Accumulate(contrib, NACC, MPI_LONG_LONG, 0, 0, NACC, MPI_LONG_LONG, MPI_SUM, win);
            if (fence)
                MPI_Win_fence(0, win);
            else
                MPI_Win_flush(0, win);
            double d = bench_now();
            t_halo += b - a;
            t_acc += d - c;
            if (it >= warm)
                itt[it - warm] = d - a;
        }
        double t_iter = bench_now() - t0;
        if (fence)
            MPI_Win_fence(MPI_MODE_NOSUCCEED, win);
        else
            MPI_Win_unlock_all(win);
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 0) {
            MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win);
            for (int k = 0; k < NACC; k++) {
                long long want = 0;
                for (int r = 0; r < n; r++)
                    for (int it = 0; it < total; it++)
                        want += acc_val(r, it, k);
                if (base[k] != want)
                    bench_fail("accumulated total %d is %lld, expected %lld (%zu-byte halo)", k, base[k], want, size);
            }
            MPI_Win_unlock(0, win);
        }
        qsort(itt, (size_t)iters, sizeof(double), cmp_double);
        double mine[4] = { t_iter, t_halo, t_acc, itt[iters / 2] * iters }, slow[4];
        MPI_Reduce(mine, slow, 4, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
        if (rank == 0) {
            printf("%zu %.3f %.3f %.3f %.3f\n", size, slow[0] * 1e6 / iters, slow[1] * 1e6 / iters,
                   slow[2] * 1e6 / iters, slow[3] * 1e6 / iters);
            fflush(stdout);
        }
    }
    MPI_Win_free(&win);
    if (rank == 0)
        bench_print_end();
    free(sendl);
    free(sendr);
    free(recvl);
    free(recvr);
    free(u);
    free(v);
    free(itt);
    MPI_Finalize();
    return 0;
}
