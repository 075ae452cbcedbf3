/* bench/bw.c — point-to-point bandwidth from rank 0 to rank 1: a window of
 * MPI_Isend (MPI_Irecv into distinct buffers on rank 1), MPI_Waitall, then a
 * small ack back, repeated. The window shrinks for large messages so that the
 * receive buffers stay within 64 MiB (see util.h).
 * Output rows: size_B bw_MBps (1 MB = 1e6 bytes).
 */
#include "util.h"

static const char usage[] =
    "bw: unidirectional bandwidth, rank 0 -> rank 1 (MB/s)\n"
    "usage: bw [-m [min:]max] [-i N] [-x N] [-I N] [-X N] [-W window]";

int main(int argc, char **argv)
{
    struct bench_opts o;
    MPI_Init(&argc, &argv);
    bench_opts_init(&o, 1, 16 * BENCH_MiB, 1000, 50);
    int rc = bench_mpi_start(&argc, &argv, &o, usage, 2, 0);
    if (rc) {
        MPI_Finalize();
        return rc - 1;
    }
    int rank = bench_mpi_rank();
    char *sbuf = bench_alloc(o.max_size);
    char *rbufs = bench_alloc(rank == 1 ? bench_window_bytes(&o) : 1);
    MPI_Request *reqs = bench_alloc(sizeof(MPI_Request) * (size_t)o.window);
    MPI_Status *stats = bench_alloc(sizeof(MPI_Status) * (size_t)o.window);

    if (rank == 0) {
        bench_print_header("bw", "window of MPI_Isend then ack, rank 0 -> 1", &o,
                           bench_mpi_size());
        printf("# window: %d (capped at %zu bytes in flight)\n", o.window,
               (size_t)BENCH_WINDOW_POOL);
        printf("# columns: size_B bw_MBps\n");
        fflush(stdout);
    }
    for (size_t size = o.min_size; size <= o.max_size; size = bench_next_size(size)) {
        MPI_Barrier(MPI_COMM_WORLD);
        double bw = rank < 2 ? bench_window_bw(&o, size, 0, 1, sbuf, rbufs, reqs, stats) : 0.0;
        if (rank == 0) {
            printf("%zu %.2f\n", size, bw);
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
