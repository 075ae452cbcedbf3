/* bench/allreduce.c — MPI_Allreduce latency: MPI_SUM over MPI_FLOAT, size/4
 * elements, average time per call. Checks the sum of the last call.
 * Output rows: size_B avg_us min_us max_us (over ranks).
 */
#include "util.h"

static const char usage[] =
    "allreduce: MPI_Allreduce (MPI_SUM, MPI_FLOAT) latency per call (us)\n"
    "usage: allreduce [-m [min:]max] [-i N] [-x N] [-I N] [-X N]";

int main(int argc, char **argv)
{
    struct bench_opts o;
    MPI_Init(&argc, &argv);
    bench_opts_init(&o, 4, BENCH_MiB, 1000, 100);
    int rc = bench_mpi_start(&argc, &argv, &o, usage, 1, 0);
    if (rc) {
        MPI_Finalize();
        return rc - 1;
    }
    int rank = bench_mpi_rank(), n = bench_mpi_size();
    if (o.min_size < 4)
        o.min_size = 4;
    size_t max_count = o.max_size / sizeof(float);
    float *sbuf = bench_alloc(o.max_size), *rbuf = bench_alloc(o.max_size);
    for (size_t k = 0; k < max_count; k++)
        sbuf[k] = (float)(rank + 1) + (float)(k % 3);

    bench_coll_print_header("allreduce", "MPI_Allreduce, MPI_SUM over MPI_FLOAT", &o, NULL);
    for (size_t size = o.min_size; size <= o.max_size; size *= 2) {
        int count = (int)(size / sizeof(float));
        int iters = bench_iters(&o, size), warmup = bench_warmup(&o, size);
        double total = 0.0;
        for (int i = 0; i < warmup + iters; i++) {
            MPI_Barrier(MPI_COMM_WORLD);
            double t0 = MPI_Wtime();
            MPI_Allreduce(sbuf, rbuf, count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
            if (i >= warmup)
                total += MPI_Wtime() - t0;
        }
        /* Small integers: the float sum is exact in any order. */
        for (int k = 0; k < count; k++) {
            float want = (float)n * (float)(n + 1) / 2.0f + (float)n * (float)(k % 3);
            if (rbuf[k] != want)
                bench_fail("allreduce: element %d is %g, expected %g (%zu bytes)", k,
                           (double)rbuf[k], (double)want, size);
        }
        bench_coll_report(size, total, iters);
    }
    if (rank == 0)
        bench_print_end();
    free(sbuf);
    free(rbuf);
    MPI_Finalize();
    return 0;
}
