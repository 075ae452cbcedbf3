/* bench/latency.c — point-to-point latency: ping-pong between ranks 0 and 1
 * with blocking MPI_Send/MPI_Recv, reported as half the round-trip time.
 * Ranks beyond 1 (if any) only take part in the barriers.
 * Output rows: size_B latency_us (rank 0's measurement).
 */
#include "util.h"

static const char usage[] =
    "latency: ping-pong between ranks 0 and 1, half round trip (us)\n"
    "usage: latency [-m [min:]max] [-i N] [-x N] [-I N] [-X N]";

int main(int argc, char **argv)
{
    struct bench_opts o;
    MPI_Init(&argc, &argv);
    bench_opts_init(&o, 0, 16 * BENCH_MiB, 10000, 100);
    int rc = bench_mpi_start(&argc, &argv, &o, usage, 2, 0);
    if (rc) {
        MPI_Finalize();
        return rc - 1;
    }
    int rank = bench_mpi_rank();
    char *sbuf = bench_alloc(o.max_size), *rbuf = bench_alloc(o.max_size);

    if (rank == 0) {
        bench_print_header("latency", "ping-pong half round trip, MPI_Send/MPI_Recv", &o,
                           bench_mpi_size());
        printf("# columns: size_B latency_us\n");
        fflush(stdout);
    }
    for (size_t size = o.min_size; size <= o.max_size; size = bench_next_size(size)) {
        int iters = bench_iters(&o, size), warmup = bench_warmup(&o, size);
        double t0 = 0.0;
        /* Each side sends its own pattern, so each can check what it got. */
        bench_fill(sbuf, size, (unsigned)(size + (size_t)rank));
        memset(rbuf, 0, size);
        MPI_Barrier(MPI_COMM_WORLD);
        for (int i = 0; i < warmup + iters && rank < 2; i++) {
            if (i == warmup)
                t0 = MPI_Wtime();
            if (rank == 0) {
                MPI_Send(sbuf, (int)size, MPI_BYTE, 1, 1, MPI_COMM_WORLD);
                MPI_Recv(rbuf, (int)size, MPI_BYTE, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            } else {
                MPI_Recv(rbuf, (int)size, MPI_BYTE, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                MPI_Send(sbuf, (int)size, MPI_BYTE, 0, 1, MPI_COMM_WORLD);
            }
        }
        double t = MPI_Wtime() - t0;
        if (rank < 2)
            bench_expect(rbuf, size, (unsigned)(size + (size_t)(1 - rank)), "ping-pong", size);
        if (rank == 0) {
            printf("%zu %.3f\n", size, t * 1e6 / (2.0 * iters));
            fflush(stdout);
        }
        if (size == 0 && o.max_size == 0)
            break;
    }
    if (rank == 0)
        bench_print_end();
    free(sbuf);
    free(rbuf);
    MPI_Finalize();
    return 0;
}
