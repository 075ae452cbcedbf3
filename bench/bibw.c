/* bench/bibw.c — bi-directional bandwidth between ranks 0 and 1: both post a
 * window of MPI_Irecv (distinct buffers) and a window of MPI_Isend to each
 * other, then MPI_Waitall, repeated. Reported as total bytes moved in both
 * directions per second.
 * Output rows: size_B bw_MBps (1 MB = 1e6 bytes).
 */
#include "util.h"

static const char usage[] =
    "bibw: bi-directional bandwidth between ranks 0 and 1 (MB/s, both directions)\n"
    "usage: bibw [-m [min:]max] [-i N] [-x N] [-I N] [-X N] [-W window]";

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
    int peer = 1 - rank;
    char *sbuf = bench_alloc(o.max_size);
    char *rbufs = bench_alloc(rank < 2 ? bench_window_bytes(&o) : 1);
    MPI_Request *reqs = bench_alloc(sizeof(MPI_Request) * 2 * (size_t)o.window);
    MPI_Status *stats = bench_alloc(sizeof(MPI_Status) * 2 * (size_t)o.window);

    if (rank == 0) {
        bench_print_header("bibw", "window of MPI_Irecv + MPI_Isend both ways, ranks 0 <-> 1",
                           &o, bench_mpi_size());
        printf("# window: %d (capped at %zu bytes in flight)\n", o.window,
               (size_t)BENCH_WINDOW_POOL);
        printf("# columns: size_B bw_MBps\n");
        fflush(stdout);
    }
    for (size_t size = o.min_size; size <= o.max_size; size = bench_next_size(size)) {
        int w = bench_window_for(&o, size);
        int iters = bench_iters(&o, size), warmup = bench_warmup(&o, size);
        double t0 = 0.0;
        bench_fill(sbuf, size, (unsigned)(size + (size_t)rank));
        MPI_Barrier(MPI_COMM_WORLD);
        for (int i = 0; i < warmup + iters && rank < 2; i++) {
            if (i == warmup)
                t0 = MPI_Wtime();
            for (int j = 0; j < w; j++)
                MPI_Irecv(rbufs + (size_t)j * size, (int)size, MPI_BYTE, peer, 200,
                          MPI_COMM_WORLD, &reqs[j]);
            for (int j = 0; j < w; j++)
                MPI_Isend(sbuf, (int)size, MPI_BYTE, peer, 200, MPI_COMM_WORLD, &reqs[w + j]);
            MPI_Waitall(2 * w, reqs, stats);
        }
        double t = MPI_Wtime() - t0;
        if (rank < 2)
            for (int j = 0; j < w; j++)
                bench_expect(rbufs + (size_t)j * size, size, (unsigned)(size + (size_t)peer),
                             "bi-directional receive", size);
        if (rank == 0) {
            printf("%zu %.2f\n", size, t > 0 ? 2.0 * (double)size * w * iters / t / 1e6 : 0.0);
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
