/* bench/sched/rma_stalls.c — per-operation origin latency of lock/op/unlock
 * (issue 12, session 8): where bench/rma_passive prints one mean per phase,
 * this prints the distribution, so a mean made of a few long stalls shows as
 * such, and (-d) every operation with its start time on CLOCK_MONOTONIC, to
 * match against a scheduler trace (attribute.py).
 *
 *   rma_stalls [-o put|get|acc] [-s bytes] [-n ops] [-b] [-d]
 *
 * Rank 0 does n lock(exclusive)/op/unlock on rank 1's window, twice (the
 * first round warms up); rank 1 either waits in MPI_Barrier (idle) or, with
 * -b, computes for n * 300 us without calling MPI. Prints mean, first, min,
 * p50, p90, p99 and max in microseconds. RMA_STALLS_ASYNC0 / _ASYNC1 set
 * PLEXUS_ASYNC_PROGRESS for rank 0 / rank 1 only (read from PMI_RANK before
 * MPI_Init).
 */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "sched_util.h"

int main(int argc, char **argv)
{
    int op = 0, size = 8, n = 300, busy = 0, dump = 0, c;
    while ((c = getopt(argc, argv, "o:s:n:bdh")) != -1) {
        if (c == 'o')
            op = !strcmp(optarg, "get") ? 1 : !strcmp(optarg, "acc") ? 2 : 0;
        else if (c == 's')
            size = atoi(optarg);
        else if (c == 'n')
            n = atoi(optarg);
        else if (c == 'b')
            busy = 1;
        else if (c == 'd')
            dump = 1;
        else {
            fprintf(stderr, "usage: rma_stalls [-o put|get|acc] [-s bytes] [-n ops] [-b] [-d]\n");
            return c == 'h' ? 0 : 2;
        }
    }
    const char *r = getenv("PMI_RANK"), *a = getenv(r && *r == '0' ? "RMA_STALLS_ASYNC0" : "RMA_STALLS_ASYNC1");
    if (a)
        setenv("PLEXUS_ASYNC_PROGRESS", a, 1);
    MPI_Init(&argc, &argv);
    int rank, np;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    if (np != 2) {
        if (rank == 0)
            fprintf(stderr, "rma_stalls: needs 2 ranks\n");
        MPI_Finalize();
        return 2;
    }
    char *base, *buf = calloc((size_t)size + 1, 1);
    double *lat = calloc((size_t)n, sizeof *lat), *start = calloc((size_t)n, sizeof *start);
    MPI_Win win;
    MPI_Win_allocate(size ? size : 1, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
    for (int round = 0; round < 2; round++) {
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 1) {
            if (busy)
                compute(n * 300.0);
            else
                MPI_Barrier(MPI_COMM_WORLD);
            continue;
        }
        double t00 = now_us();
        for (int i = 0; i < n; i++) {
            double t0 = now_us();
            start[i] = t0;
            MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, win);
            if (op == 0)
                MPI_Put(buf, size, MPI_BYTE, 1, 0, size, MPI_BYTE, win);
            else if (op == 1)
                MPI_Get(buf, size, MPI_BYTE, 1, 0, size, MPI_BYTE, win);
            else
                MPI_Accumulate(buf, size, MPI_UNSIGNED_CHAR, 1, 0, size, MPI_UNSIGNED_CHAR, MPI_SUM, win);
            MPI_Win_unlock(1, win);
            lat[i] = now_us() - t0;
        }
        double total = now_us() - t00;
        if (!busy)
            MPI_Barrier(MPI_COMM_WORLD);
        if (round == 0)
            continue;
        if (dump)
            for (int i = 0; i < n; i++)
                printf("%d %.1f %.6f\n", i, lat[i], start[i] * 1e-6);
        double first = lat[0];
        qsort(lat, (size_t)n, sizeof *lat, cmp);
        printf("%s %d B, target %s: mean %.1f first %.1f min %.1f p50 %.1f p90 %.1f p99 %.1f max %.1f us\n",
               op == 0 ? "put" : op == 1 ? "get" : "acc", size, busy ? "computing" : "idle", total / n, first,
               lat[0], lat[n / 2], lat[n * 9 / 10], lat[n * 99 / 100], lat[n - 1]);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_free(&win);
    free(buf);
    free(lat);
    free(start);
    MPI_Finalize();
    return 0;
}
