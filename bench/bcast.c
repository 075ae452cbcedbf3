/* bench/bcast.c — MPI_Bcast latency from rank 0, MPI_BYTE, average time per
 * call. Non-root ranks check the data of the last call.
 * Output rows: size_B avg_us min_us max_us (over ranks).
 */
#include "util.h"

static const char usage[] =
    "bcast: MPI_Bcast (root 0, MPI_BYTE) latency per call (us)\n"
    "usage: bcast [-m [min:]max] [-i N] [-x N] [-I N] [-X N]";

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
    int rank = bench_mpi_rank();
    char *buf = bench_alloc(o.max_size);

    bench_coll_print_header("bcast", "MPI_Bcast from rank 0, MPI_BYTE", &o, NULL);
    for (size_t size = o.min_size; size <= o.max_size; size = bench_next_size(size)) {
        int iters = bench_iters(&o, size), warmup = bench_warmup(&o, size);
        double total = 0.0;
        if (rank == 0)
            bench_fill(buf, size, (unsigned)size);
        for (int i = 0; i < warmup + iters; i++) {
            if (rank != 0 && i == warmup + iters - 1)
                memset(buf, 0, size);
            MPI_Barrier(MPI_COMM_WORLD);
            double t0 = MPI_Wtime();
            MPI_Bcast(buf, (int)size, MPI_BYTE, 0, MPI_COMM_WORLD);
            if (i >= warmup)
                total += MPI_Wtime() - t0;
        }
        bench_expect(buf, size, (unsigned)size, "bcast", size);
        bench_coll_report(size, total, iters);
        if (size == 0 && o.max_size == 0)
            break;
    }
    if (rank == 0)
        bench_print_end();
    free(buf);
    MPI_Finalize();
    return 0;
}
