/* bench/rma_passive.c — passive-target progress. Rank 0 (origin) does
 * MPI_Win_lock(EXCLUSIVE) / op / MPI_Win_unlock on rank 1's window for op =
 * MPI_Put, MPI_Get and MPI_Accumulate (MPI_SUM, MPI_UNSIGNED_CHAR), first
 * while rank 1 is idle (waiting in MPI_Barrier, so inside the library), then
 * while rank 1 computes for a fixed time without calling MPI at all.
 *
 * The compute time per size is D = max(10 ms, d * iters * slowest idle
 * latency), at most 1 s, with d = 4 by default (-d): long enough that a library with
 * passive progress finishes all operations during the computation. A library
 * that needs the target to call MPI makes the origin wait until the target
 * finishes computing, so its busy latency approaches D / iters.
 * Output rows: size_B put_idle_us put_busy_us get_idle_us get_busy_us
 *              acc_idle_us acc_busy_us target_compute_us
 */
#include "util.h"

static const char usage[] =
    "rma_passive: origin latency of lock/op/unlock while the target is idle vs computing\n"
    "usage: rma_passive [-d factor] [-m [min:]max] [-i N] [-x N] [-I N] [-X N]";

enum { OP_PUT, OP_GET, OP_ACC, OP_COUNT };

static void do_op(int op, char *pbuf, char *gbuf, char *zbuf, size_t size, MPI_Win win)
{
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, win);
    if (op == OP_PUT)
        MPI_Put(pbuf, (int)size, MPI_BYTE, 1, 0, (int)size, MPI_BYTE, win);
    else if (op == OP_GET)
        MPI_Get(gbuf, (int)size, MPI_BYTE, 1, 0, (int)size, MPI_BYTE, win);
    else /* adding zeros leaves the pattern in place for the final check */
        MPI_Accumulate(zbuf, (int)size, MPI_UNSIGNED_CHAR, 1, 0, (int)size, MPI_UNSIGNED_CHAR,
                       MPI_SUM, win);
    MPI_Win_unlock(1, win);
}

int main(int argc, char **argv)
{
    struct bench_opts o;
    MPI_Init(&argc, &argv);
    bench_opts_init(&o, 1, 16 * BENCH_MiB, 100, 10);
    o.param = 4.0;
    int rc = bench_mpi_start(&argc, &argv, &o, usage, 2, 0);
    if (rc) {
        MPI_Finalize();
        return rc - 1;
    }
    int rank = bench_mpi_rank();
    char *pbuf = bench_alloc(o.max_size), *gbuf = bench_alloc(o.max_size);
    char *zbuf = bench_alloc(o.max_size), *base = NULL;
    MPI_Win win;
    MPI_Win_allocate((MPI_Aint)(o.max_size ? o.max_size : 1), 1, MPI_INFO_NULL, MPI_COMM_WORLD,
                     &base, &win);

    if (rank == 0) {
        bench_print_header("rma_passive",
                           "lock/op/unlock latency, target idle in MPI_Barrier vs computing", &o,
                           bench_mpi_size());
        printf("# compute: max(10 ms, %g * iterations * slowest idle latency), at most 1 s\n",
               o.param);
        printf("# columns: size_B put_idle_us put_busy_us get_idle_us get_busy_us "
               "acc_idle_us acc_busy_us target_compute_us\n");
        fflush(stdout);
    }
    for (size_t size = o.min_size; size <= o.max_size; size = bench_next_size(size)) {
        int iters = bench_iters(&o, size), warmup = bench_warmup(&o, size);
        unsigned key = (unsigned)size + 9u;
        double idle[OP_COUNT] = {0}, busy[OP_COUNT] = {0}, compute_us = 0.0;

        if (rank == 1) {
            MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, win);
            bench_fill(base, size, key);
            MPI_Win_unlock(1, win);
        } else {
            bench_fill(pbuf, size, key);
        }
        MPI_Barrier(MPI_COMM_WORLD);
        /* Idle target: rank 1 sits in the barrier below. */
        if (rank == 0) {
            for (int op = 0; op < OP_COUNT; op++) {
                double t0 = 0.0;
                for (int i = 0; i < warmup + iters; i++) {
                    if (i == warmup)
                        t0 = MPI_Wtime();
                    do_op(op, pbuf, gbuf, zbuf, size, win);
                }
                idle[op] = (MPI_Wtime() - t0) * 1e6 / iters;
            }
            double slowest = idle[0] > idle[1] ? idle[0] : idle[1];
            slowest = slowest > idle[2] ? slowest : idle[2];
            compute_us = o.param * iters * slowest;
            if (compute_us < 10000.0)
                compute_us = 10000.0;
            if (compute_us > 1e6) /* a pathological idle latency must not stall the run */
                compute_us = 1e6;
        }
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Bcast(&compute_us, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
        /* Busy target: rank 1 computes without MPI calls, once per op. */
        for (int op = 0; op < OP_COUNT; op++) {
            MPI_Barrier(MPI_COMM_WORLD);
            if (rank == 1) {
                bench_compute_us(compute_us);
            } else if (rank == 0) {
                double t0 = MPI_Wtime();
                for (int i = 0; i < iters; i++)
                    do_op(op, pbuf, gbuf, zbuf, size, win);
                busy[op] = (MPI_Wtime() - t0) * 1e6 / iters;
            }
        }
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 0) {
            bench_expect(gbuf, size, key, "get origin", size);
        } else if (rank == 1) {
            MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, win);
            bench_expect(base, size, key, "put/accumulate target", size);
            MPI_Win_unlock(1, win);
        }
        if (rank == 0) {
            printf("%zu %.3f %.3f %.3f %.3f %.3f %.3f %.0f\n", size, idle[OP_PUT], busy[OP_PUT],
                   idle[OP_GET], busy[OP_GET], idle[OP_ACC], busy[OP_ACC], compute_us);
            fflush(stdout);
        }
        if (size == 0 && o.max_size == 0)
            break;
    }
    if (rank == 0)
        bench_print_end();
    MPI_Win_free(&win);
    free(pbuf);
    free(gbuf);
    free(zbuf);
    MPI_Finalize();
    return 0;
}
