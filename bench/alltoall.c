/* bench/alltoall.c — MPI_Alltoall latency, MPI_BYTE, `size` bytes to every
 * rank, average time per call. Every block of the last call is checked.
 * Output rows: size_B avg_us min_us max_us (over ranks); size is per peer.
 */
#include "util.h"

static const char usage[] =
    "alltoall: MPI_Alltoall (MPI_BYTE, size per peer) latency per call (us)\n"
    "usage: alltoall [-m [min:]max] [-i N] [-x N] [-I N] [-X N]";

int main(int argc, char **argv)
{
    struct bench_opts o;
    MPI_Init(&argc, &argv);
    bench_opts_init(&o, 1, BENCH_MiB, 1000, 100);
    int rc = bench_mpi_start(&argc, &argv, &o, usage, 1, 0);
    if (rc) {
        MPI_Finalize();
        return rc - 1;
    }
    int rank = bench_mpi_rank(), n = bench_mpi_size();
    char *sbuf = bench_alloc(o.max_size * (size_t)n), *rbuf = bench_alloc(o.max_size * (size_t)n);

    bench_coll_print_header("alltoall", "MPI_Alltoall, MPI_BYTE, size bytes per peer", &o, NULL);
    for (size_t size = o.min_size; size <= o.max_size; size = bench_next_size(size)) {
        int iters = bench_iters(&o, size), warmup = bench_warmup(&o, size);
        double total = 0.0;
        /* Block for peer j carries key (rank, j); it arrives as (j, rank). */
        for (int j = 0; j < n; j++)
            bench_fill(sbuf + (size_t)j * size, size, (unsigned)(rank * 1000 + j));
        memset(rbuf, 0, size * (size_t)n);
        for (int i = 0; i < warmup + iters; i++) {
            MPI_Barrier(MPI_COMM_WORLD);
            double t0 = MPI_Wtime();
            MPI_Alltoall(sbuf, (int)size, MPI_BYTE, rbuf, (int)size, MPI_BYTE, MPI_COMM_WORLD);
            if (i >= warmup)
                total += MPI_Wtime() - t0;
        }
        for (int j = 0; j < n; j++)
            bench_expect(rbuf + (size_t)j * size, size, (unsigned)(j * 1000 + rank), "alltoall",
                         size);
        bench_coll_report(size, total, iters);
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
