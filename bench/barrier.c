/* bench/barrier.c — MPI_Barrier latency, average time per call. The size
 * column is always 0 (one row).
 * Output rows: size_B avg_us min_us max_us (over ranks).
 */
#include "util.h"

static const char usage[] =
    "barrier: MPI_Barrier latency per call (us); -m is ignored\n"
    "usage: barrier [-i N] [-x N]";

int main(int argc, char **argv)
{
    struct bench_opts o;
    MPI_Init(&argc, &argv);
    bench_opts_init(&o, 0, 0, 10000, 100);
    int rc = bench_mpi_start(&argc, &argv, &o, usage, 1, 0);
    if (rc) {
        MPI_Finalize();
        return rc - 1;
    }
    o.min_size = o.max_size = 0;
    bench_coll_print_header("barrier", "MPI_Barrier", &o, "back-to-back calls, total time / calls");
    /* Back-to-back barriers: a barrier between timed calls would time the
     * same operation it is meant to separate. */
    for (int i = 0; i < o.warmup; i++)
        MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (int i = 0; i < o.iters; i++)
        MPI_Barrier(MPI_COMM_WORLD);
    bench_coll_report(0, MPI_Wtime() - t0, o.iters);
    if (bench_mpi_rank() == 0)
        bench_print_end();
    MPI_Finalize();
    return 0;
}
