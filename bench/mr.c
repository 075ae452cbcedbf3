/* bench/mr.c — multi-pair bandwidth and message rate: with N ranks, rank i <
 * N/2 sends to rank i + N/2. Every sender posts a window of MPI_Isend, waits,
 * then waits for an ack, as in bw.c; all pairs run at once. Reports the sum
 * over pairs of each sender's rate.
 * Output rows: size_B bw_MBps msgs_per_s (aggregate over pairs).
 */
#include "util.h"

static const char usage[] =
    "mr: multi-pair bandwidth and message rate; rank i sends to rank i + N/2\n"
    "usage: mr [-m [min:]max] [-i N] [-x N] [-I N] [-X N] [-W window]";

int main(int argc, char **argv)
{
    struct bench_opts o;
    MPI_Init(&argc, &argv);
    bench_opts_init(&o, 1, 16 * BENCH_MiB, 1000, 50);
    int rc = bench_mpi_start(&argc, &argv, &o, usage, 2, 1);
    if (rc) {
        MPI_Finalize();
        return rc - 1;
    }
    int rank = bench_mpi_rank(), n = bench_mpi_size(), pairs = n / 2;
    int sender = rank < pairs;
    int peer = sender ? rank + pairs : rank - pairs;
    char *sbuf = bench_alloc(o.max_size);
    char *rbufs = bench_alloc(sender ? 1 : bench_window_bytes(&o));
    MPI_Request *reqs = bench_alloc(sizeof(MPI_Request) * (size_t)o.window);
    MPI_Status *stats = bench_alloc(sizeof(MPI_Status) * (size_t)o.window);

    if (rank == 0) {
        bench_print_header("mr", "multi-pair window bandwidth and message rate", &o, n);
        printf("# pairs: %d\n", pairs);
        printf("# window: %d (capped at %zu bytes in flight)\n", o.window,
               (size_t)BENCH_WINDOW_POOL);
        printf("# columns: size_B bw_MBps msgs_per_s\n");
        fflush(stdout);
    }
    for (size_t size = o.min_size; size <= o.max_size; size = bench_next_size(size)) {
        MPI_Barrier(MPI_COMM_WORLD);
        int s = sender ? rank : peer, r = sender ? peer : rank;
        double bw = bench_window_bw(&o, size, s, r, sbuf, rbufs, reqs, stats);
        double rate = size > 0 ? bw * 1e6 / (double)size : 0.0, sum_bw = 0, sum_rate = 0;
        MPI_Reduce(&bw, &sum_bw, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
        MPI_Reduce(&rate, &sum_rate, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
        if (rank == 0) {
            printf("%zu %.2f %.0f\n", size, sum_bw, sum_rate);
            fflush(stdout);
        }
        if (size == 0 && o.max_size == 0)
            break;
    }
    if (rank == 0)
        bench_print_end();
    free(sbuf);
    free(rbufs);
    free(reqs);
    free(stats);
    MPI_Finalize();
    return 0;
}
