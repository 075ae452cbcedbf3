/* bench/overlap.c — communication/computation overlap. Ranks 0 and 1
 * exchange a message of `size` bytes with MPI_Irecv + MPI_Isend:
 *   comm:    post, MPI_Waitall                       -> t_comm
 *   compute: a busy loop of t_comm, no MPI calls     -> t_cpu (measured)
 *   both:    post, compute t_comm, MPI_Waitall       -> t_total
 * overlap = 100 * (t_comm + t_cpu - t_total) / t_comm, clamped to 0..100:
 * the share of the communication time hidden behind the computation (as in
 * the OSU non-blocking benchmarks). A library that only moves data inside
 * MPI calls hides little of a rendezvous transfer.
 * Times are the maximum over the two ranks, averaged over iterations, with an
 * MPI_Barrier (not timed) before each iteration.
 * Output rows: size_B comm_us compute_us total_us overlap_pct
 */
#include "util.h"

static const char usage[] =
    "overlap: Isend/Irecv exchange with computation in between; % of comm hidden\n"
    "usage: overlap [-m [min:]max] [-i N] [-x N] [-I N] [-X N]";

struct times {
    double comm, cpu, total;
};

int main(int argc, char **argv)
{
    struct bench_opts o;
    MPI_Init(&argc, &argv);
    bench_opts_init(&o, 16 * BENCH_KiB, 16 * BENCH_MiB, 200, 20);
    int rc = bench_mpi_start(&argc, &argv, &o, usage, 2, 0);
    if (rc) {
        MPI_Finalize();
        return rc - 1;
    }
    int rank = bench_mpi_rank(), peer = 1 - rank;
    char *sbuf = bench_alloc(o.max_size), *rbuf = bench_alloc(o.max_size);
    MPI_Request reqs[2];
    MPI_Status stats[2];

    if (rank == 0) {
        bench_print_header("overlap", "Irecv+Isend exchange, compute, Waitall", &o,
                           bench_mpi_size());
        printf("# columns: size_B comm_us compute_us total_us overlap_pct\n");
        fflush(stdout);
    }
    for (size_t size = o.min_size; size <= o.max_size; size = bench_next_size(size)) {
        int iters = bench_iters(&o, size), warmup = bench_warmup(&o, size);
        struct times mine = {0, 0, 0}, all = {0, 0, 0};
        bench_fill(sbuf, size, (unsigned)(size + (size_t)rank));
        /* Phase 1: communication alone. */
        for (int i = 0; i < warmup + iters; i++) {
            MPI_Barrier(MPI_COMM_WORLD);
            double t0 = bench_now();
            if (rank < 2) {
                MPI_Irecv(rbuf, (int)size, MPI_BYTE, peer, 300, MPI_COMM_WORLD, &reqs[0]);
                MPI_Isend(sbuf, (int)size, MPI_BYTE, peer, 300, MPI_COMM_WORLD, &reqs[1]);
                MPI_Waitall(2, reqs, stats);
            }
            if (i >= warmup)
                mine.comm += bench_now() - t0;
        }
        mine.comm /= iters;
        MPI_Allreduce(&mine.comm, &all.comm, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        /* Phase 2: computation alone, as long as the communication took. */
        for (int i = 0; i < iters; i++) {
            double t0 = bench_now();
            bench_compute_us(all.comm * 1e6);
            mine.cpu += bench_now() - t0;
        }
        mine.cpu /= iters;
        /* Phase 3: both. */
        memset(rbuf, 0, size);
        for (int i = 0; i < warmup + iters; i++) {
            MPI_Barrier(MPI_COMM_WORLD);
            double t0 = bench_now();
            if (rank < 2) {
                MPI_Irecv(rbuf, (int)size, MPI_BYTE, peer, 301, MPI_COMM_WORLD, &reqs[0]);
                MPI_Isend(sbuf, (int)size, MPI_BYTE, peer, 301, MPI_COMM_WORLD, &reqs[1]);
                bench_compute_us(all.comm * 1e6);
                MPI_Waitall(2, reqs, stats);
            }
            if (i >= warmup)
                mine.total += bench_now() - t0;
        }
        mine.total /= iters;
        if (rank < 2)
            bench_expect(rbuf, size, (unsigned)(size + (size_t)peer), "overlap exchange", size);
        MPI_Reduce(&mine.cpu, &all.cpu, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
        MPI_Reduce(&mine.total, &all.total, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
        if (rank == 0) {
            double hidden = all.comm > 0 ? (all.comm + all.cpu - all.total) / all.comm : 0.0;
            hidden = hidden < 0 ? 0 : (hidden > 1 ? 1 : hidden);
            printf("%zu %.3f %.3f %.3f %.1f\n", size, all.comm * 1e6, all.cpu * 1e6,
                   all.total * 1e6, hidden * 100.0);
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
