/* bench/startup.c — start-up and shut-down cost at N ranks. Each rank times
 * its own MPI_Init (CLOCK_MONOTONIC around the call); rank 0 also times its
 * MPI_Finalize and prints everything after it returns. The comparison runner
 * adds the wall time of the whole job (launcher included), measured from
 * outside.
 * Output row: ranks init_max_ms init_avg_ms finalize_ms
 */
#include "util.h"

int main(int argc, char **argv)
{
    double t0 = bench_now();
    MPI_Init(&argc, &argv);
    double init_us = (bench_now() - t0) * 1e6, init_max = 0, init_sum = 0;
    int rank = bench_mpi_rank(), n = bench_mpi_size();
    MPI_Reduce(&init_us, &init_max, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    MPI_Reduce(&init_us, &init_sum, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    double t1 = bench_now();
    MPI_Finalize();
    double fin_us = (bench_now() - t1) * 1e6;
    if (rank == 0) {
        printf("# plexus-bench: startup\n");
        printf("# description: MPI_Init and MPI_Finalize time (ranks 0..N-1)\n");
        printf("# ranks: %d\n", n);
        printf("# columns: ranks init_max_ms init_avg_ms finalize_ms\n");
        printf("%d %.3f %.3f %.3f\n", n, init_max / 1000, init_sum / n / 1000, fin_us / 1000);
        printf("# end\n");
        fflush(stdout);
    }
    (void)argc;
    (void)argv;
    return 0;
}
