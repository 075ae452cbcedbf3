/* bench/startup.c — start-up and shut-down cost at N ranks. Each rank times
 * its own MPI_Init (CLOCK_MONOTONIC around the call); rank 0 also times its
 * MPI_Finalize and prints everything after it returns. The comparison runner
 * adds the wall time of the whole job (launcher included), measured from
 * outside.
 *
 * Memory: after MPI_Init, an exchange with both ring neighbours and an
 * MPI_Allreduce (what a job does at the least), each rank reads its
 * proportional set size from /proc/self/smaps_rollup: shared pages counted
 * once over the processes that map them, so the sum over ranks is the
 * node's memory. -1 where the file is missing.
 * Output row: ranks init_max_ms init_avg_ms finalize_ms pss_max_kb pss_avg_kb
 */
#include <stdio.h>
#include <string.h>
#include "util.h"

static double startup_pss_kb(void)
{
    FILE *f = fopen("/proc/self/smaps_rollup", "r");
    char line[256];
    double kb = -1;
    if (!f)
        return -1;
    while (fgets(line, sizeof line, f))
        if (strncmp(line, "Pss:", 4) == 0) {
            kb = atof(line + 4);
            break;
        }
    fclose(f);
    return kb;
}

int main(int argc, char **argv)
{
    double t0 = bench_now();
    MPI_Init(&argc, &argv);
    double init_us = (bench_now() - t0) * 1e6, init_max = 0, init_sum = 0;
    int rank = bench_mpi_rank(), n = bench_mpi_size();
    int right = (rank + 1) % n, left = (rank + n - 1) % n, got = -1, one = 1, sum = 0;
    MPI_Sendrecv(&rank, 1, MPI_INT, right, 7, &got, 1, MPI_INT, left, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (got != left || sum != n) {
        fprintf(stderr, "startup: rank %d got %d from %d and a sum of %d of %d\n", rank, got, left, sum, n);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    double pss = startup_pss_kb(), pss_max = 0, pss_sum = 0;
    MPI_Reduce(&pss, &pss_max, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    MPI_Reduce(&pss, &pss_sum, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    MPI_Reduce(&init_us, &init_max, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    MPI_Reduce(&init_us, &init_sum, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    double t1 = bench_now();
    MPI_Finalize();
    double fin_us = (bench_now() - t1) * 1e6;
    if (rank == 0) {
        printf("# plexus-bench: startup\n");
        printf("# description: MPI_Init and MPI_Finalize time (ranks 0..N-1)\n");
        printf("# ranks: %d\n", n);
        printf("# columns: ranks init_max_ms init_avg_ms finalize_ms pss_max_kb pss_avg_kb\n");
        printf("%d %.3f %.3f %.3f %.0f %.0f\n", n, init_max / 1000, init_sum / n / 1000, fin_us / 1000, pss_max,
               pss_sum / n);
        printf("# end\n");
        fflush(stdout);
    }
    (void)argc;
    (void)argv;
    return 0;
}
