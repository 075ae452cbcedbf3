/* bench/conn_scaling.c — bandwidth between ranks 0 and 1 while each holds K
 * idle connections, K = ranks - 2. First every rank r >= 2 exchanges one
 * message with rank 0 and with rank 1, so that libraries with lazy
 * connections open them; then ranks >= 2 stay idle while 0 and 1 run the
 * window bandwidth test of bw.c, and rank 0 finally releases them.
 * Idle ranks wait by polling MPI_Test every millisecond (sleeping in
 * between), so that they hold connections without competing for the cores;
 * -b makes them block in MPI_Wait instead (tests the library's wait policy).
 * Output rows: size_B bw_MBps
 */
#include "util.h"

static const char usage[] =
    "conn_scaling: bw between ranks 0 and 1 while ranks >= 2 hold idle connections\n"
    "usage: conn_scaling [-b] [-m [min:]max] [-i N] [-x N] [-I N] [-X N] [-W window]";

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
    int rank = bench_mpi_rank(), n = bench_mpi_size();
    int out = rank, in[2] = {-1, -1}, token = 0;
    MPI_Request reqs2[4];
    MPI_Status stats2[4];

    /* Connection set-up: ranks >= 2 talk to 0 and 1 exactly once. */
    if (rank >= 2) {
        for (int j = 0; j < 2; j++) {
            MPI_Irecv(&in[j], 1, MPI_INT, j, 400, MPI_COMM_WORLD, &reqs2[j]);
            MPI_Isend(&out, 1, MPI_INT, j, 400, MPI_COMM_WORLD, &reqs2[2 + j]);
        }
        MPI_Waitall(4, reqs2, stats2);
        if (in[0] != 0 || in[1] != 1)
            bench_fail("connection set-up: got %d and %d from ranks 0 and 1", in[0], in[1]);
        /* Idle until rank 0 says we are done. */
        MPI_Request done;
        MPI_Irecv(&token, 1, MPI_INT, 0, 401, MPI_COMM_WORLD, &done);
        if (o.flag) {
            MPI_Wait(&done, MPI_STATUS_IGNORE);
        } else {
            int flag = 0;
            struct timespec ms = {0, 1000000};
            for (;;) {
                MPI_Test(&done, &flag, MPI_STATUS_IGNORE);
                if (flag)
                    break;
                nanosleep(&ms, NULL);
            }
        }
        MPI_Finalize();
        return 0;
    }
    for (int r = 2; r < n; r++) {
        int got = -1;
        MPI_Sendrecv(&out, 1, MPI_INT, r, 400, &got, 1, MPI_INT, r, 400, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
        if (got != r)
            bench_fail("connection set-up: got %d from rank %d", got, r);
    }

    char *sbuf = bench_alloc(o.max_size);
    char *rbufs = bench_alloc(rank == 1 ? bench_window_bytes(&o) : 1);
    MPI_Request *reqs = bench_alloc(sizeof(MPI_Request) * (size_t)o.window);
    MPI_Status *stats = bench_alloc(sizeof(MPI_Status) * (size_t)o.window);
    if (rank == 0) {
        bench_print_header("conn_scaling", "bw rank 0 -> 1 while ranks >= 2 hold idle connections",
                           &o, n);
        printf("# idle_peers: %d\n# idle_wait: %s\n", n - 2,
               o.flag ? "MPI_Wait" : "MPI_Test + 1 ms sleep");
        printf("# window: %d (capped at %zu bytes in flight)\n", o.window,
               (size_t)BENCH_WINDOW_POOL);
        printf("# columns: size_B bw_MBps\n");
        fflush(stdout);
    }
    for (size_t size = o.min_size; size <= o.max_size; size = bench_next_size(size)) {
        /* Synchronise 0 and 1 only: a barrier would wake the idle ranks. */
        int x = 0;
        MPI_Sendrecv(&x, 1, MPI_INT, 1 - rank, 402, &token, 1, MPI_INT, 1 - rank, 402,
                     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        double bw = bench_window_bw(&o, size, 0, 1, sbuf, rbufs, reqs, stats);
        if (rank == 0) {
            printf("%zu %.2f\n", size, bw);
            fflush(stdout);
        }
        if (size == 0 && o.max_size == 0)
            break;
    }
    if (rank == 0) {
        for (int r = 2; r < n; r++)
            MPI_Send(&token, 1, MPI_INT, r, 401, MPI_COMM_WORLD);
        bench_print_end();
    }
    free(sbuf);
    free(rbufs);
    free(reqs);
    free(stats);
    MPI_Finalize();
    return 0;
}
