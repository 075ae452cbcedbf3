/* bench/sched/takeover.c — how soon the target's progress thread takes over
 * after the target leaves MPI (issue 12, session 9).
 *
 *   takeover [-o put|get|acc] [-s bytes] [-r rounds] [-k idle_ops] [-c compute_us] [-q] [-b]
 *
 * Each round copies what bench/rma_passive does around its first busy
 * phase: rank 0 does k lock(exclusive)/op/unlock on rank 1's window while
 * rank 1 waits in MPI_Barrier (a long stay in MPI), then both ranks pass a
 * barrier (with -q: a barrier, a broadcast and a barrier, the short calls
 * rma_passive makes between its phases), and rank 1 computes for c us
 * without calling MPI while rank 0 times its next lock/op/unlock (the
 * "first" operation) and one more (the "second"). Prints the distributions
 * over the rounds in microseconds: the first operation pays the takeover,
 * the second shows the served rate. With -b, rank 1 computes during the k
 * operations too (instead of waiting in MPI_Barrier), as before the get and
 * accumulate phases of rma_passive, which follow a busy phase. Run with PLEXUS_ASYNC_PROGRESS=1 (and
 * PLEXUS_TRANSPORTS=tcp, or PLEXUS_RMA_SHM=0, for the message path).
 */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "sched_util.h"

static void one_op(int op, char *buf, int size, MPI_Win win)
{
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, win);
    if (op == 0)
        MPI_Put(buf, size, MPI_BYTE, 1, 0, size, MPI_BYTE, win);
    else if (op == 1)
        MPI_Get(buf, size, MPI_BYTE, 1, 0, size, MPI_BYTE, win);
    else
        MPI_Accumulate(buf, size, MPI_UNSIGNED_CHAR, 1, 0, size, MPI_UNSIGNED_CHAR, MPI_SUM, win);
    MPI_Win_unlock(1, win);
}

static void report(const char *what, double *v, int n)
{
    double sum = 0;
    for (int i = 0; i < n; i++)
        sum += v[i];
    qsort(v, (size_t)n, sizeof *v, cmp);
    printf("%-7s mean %8.1f min %7.1f p25 %7.1f p50 %7.1f p75 %7.1f p90 %7.1f max %8.1f us\n", what, sum / n, v[0],
           v[n / 4], v[n / 2], v[n * 3 / 4], v[n * 9 / 10], v[n - 1]);
}

int main(int argc, char **argv)
{
    int op = 0, size = 8, rounds = 40, k = 20, quick_calls = 0, busy_before = 0, c;
    double compute_us = 5000.0;
    while ((c = getopt(argc, argv, "o:s:r:k:c:qbh")) != -1) {
        if (c == 'o')
            op = !strcmp(optarg, "get") ? 1 : !strcmp(optarg, "acc") ? 2 : 0;
        else if (c == 's')
            size = atoi(optarg);
        else if (c == 'r')
            rounds = atoi(optarg);
        else if (c == 'k')
            k = atoi(optarg);
        else if (c == 'c')
            compute_us = atof(optarg);
        else if (c == 'q')
            quick_calls = 1;
        else if (c == 'b')
            busy_before = 1;
        else {
            fprintf(stderr, "usage: takeover [-o put|get|acc] [-s bytes] [-r rounds] [-k idle_ops] [-c us] [-q] [-b]\n");
            return c == 'h' ? 0 : 2;
        }
    }
    MPI_Init(&argc, &argv);
    int rank, np;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    if (np != 2 || rounds < 1) {
        if (rank == 0)
            fprintf(stderr, "takeover: needs 2 ranks and at least one round\n");
        MPI_Finalize();
        return 2;
    }
    char *base, *buf = calloc((size_t)size + 1, 1);
    double *first = calloc((size_t)rounds, sizeof *first), *second = calloc((size_t)rounds, sizeof *second);
    MPI_Win win;
    MPI_Win_allocate(size ? size : 1, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
    for (int r = 0; r < rounds; r++) {
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 0) {        /* the target stays in the barrier meanwhile, or computes */
            for (int i = 0; i < k; i++)
                one_op(op, buf, size, win);
        } else if (busy_before) {
            compute(compute_us);
        }
        MPI_Barrier(MPI_COMM_WORLD);
        if (quick_calls) {
            double x = 1.0;
            MPI_Barrier(MPI_COMM_WORLD);
            MPI_Bcast(&x, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
        }
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 1) {
            compute(compute_us);
        } else {
            double t0 = now_us();
            one_op(op, buf, size, win);
            double t1 = now_us();
            one_op(op, buf, size, win);
            first[r] = t1 - t0;
            second[r] = now_us() - t1;
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        printf("%s %d B, %d rounds, %d operations before with the target %s, %.0f us computation%s\n",
               op == 0 ? "put" : op == 1 ? "get" : "acc", size, rounds, k, busy_before ? "computing" : "idle",
               compute_us, quick_calls ? ", barrier+bcast+barrier between" : "");
        report("first", first, rounds);
        report("second", second, rounds);
    }
    MPI_Win_free(&win);
    free(buf);
    free(first);
    free(second);
    MPI_Finalize();
    return 0;
}
