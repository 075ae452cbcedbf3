/* bench/hol.c — head-of-line blocking between unrelated messages: the
 * latency of small messages on tag B between ranks 0 and 1 while rank 0
 * streams a large message to rank 1 on tag A, against the same ping-pong on
 * an idle link. Over one TCP connection the pings queue behind the bulk
 * data; SCTP carries them on another stream.
 *
 *   hol [-s BYTES_OF_BULK (K, M, G suffixes)] [-n PINGS_IDLE] [-r ROUNDS]
 *
 * Output (rank 0), in the format of bench/util.h (bench/compare runs it
 * as benchmark "hol"): one row for the bulk size with the idle and loaded
 * round-trip times (median and 90th percentile, microseconds), the ratio
 * loaded/idle of the medians, the pings that ran during the bulk transfer
 * and the bulk's throughput.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define TAG_A 1
#define TAG_B 2
#define MAXP 100000

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double pct(double *v, int n, double p)
{
    qsort(v, (size_t)n, sizeof *v, cmp);
    int i = (int)(p * (n - 1));
    return n ? v[i] : 0;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    size_t bulk = (size_t)64 << 20;
    int nidle = 1000, rounds = 3, opt;
    while ((opt = getopt(argc, argv, "s:n:r:")) != -1) {
        if (opt == 's') {
            char *end;
            bulk = (size_t)strtoull(optarg, &end, 0);
            bulk <<= *end == 'K' || *end == 'k' ? 10 : *end == 'M' || *end == 'm' ? 20 : *end == 'G' ? 30 : 0;
        }
        else if (opt == 'n')
            nidle = atoi(optarg);
        else if (opt == 'r')
            rounds = atoi(optarg);
    }
    if (size < 2) {
        if (rank == 0)
            fprintf(stderr, "hol: needs 2 ranks\n");
        MPI_Finalize();
        return 1;
    }
    char *big = malloc(bulk);
    memset(big, 7, bulk);
    double *idle = malloc(sizeof(double) * (size_t)nidle);
    double *load = malloc(sizeof(double) * MAXP);
    int nload = 0;
    double bulk_time = 0;
    char ping[8] = { 0 }, pong[8];
    if (rank == 0) {
        for (int i = 0; i < 50; i++) {  /* warm up: connections, buffers */
            MPI_Send(ping, 8, MPI_BYTE, 1, TAG_B, MPI_COMM_WORLD);
            MPI_Recv(pong, 8, MPI_BYTE, 1, TAG_B, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        }
        for (int i = 0; i < nidle; i++) {
            double t = MPI_Wtime();
            MPI_Send(ping, 8, MPI_BYTE, 1, TAG_B, MPI_COMM_WORLD);
            MPI_Recv(pong, 8, MPI_BYTE, 1, TAG_B, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            idle[i] = MPI_Wtime() - t;
        }
        for (int r = 0; r < rounds; r++) {
            MPI_Request rq;
            double t0 = MPI_Wtime();
            MPI_Isend(big, (int)bulk, MPI_BYTE, 1, TAG_A, MPI_COMM_WORLD, &rq);
            int done = 0;
            while (!done) {
                double t = MPI_Wtime();
                ping[0] = 0;
                MPI_Send(ping, 8, MPI_BYTE, 1, TAG_B, MPI_COMM_WORLD);
                MPI_Recv(pong, 8, MPI_BYTE, 1, TAG_B, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                if (nload < MAXP)
                    load[nload++] = MPI_Wtime() - t;
                MPI_Test(&rq, &done, MPI_STATUS_IGNORE);
            }
            bulk_time += MPI_Wtime() - t0;
            ping[0] = 1;        /* this round is over */
            MPI_Send(ping, 8, MPI_BYTE, 1, TAG_B, MPI_COMM_WORLD);
            MPI_Barrier(MPI_COMM_WORLD);
        }
        int n = nload;
        double i50 = pct(idle, nidle, 0.5), i90 = pct(idle, nidle, 0.9);
        double l50 = pct(load, n, 0.5), l90 = pct(load, n, 0.9);
        printf("# plexus-bench: hol\n");
        printf("# description: 8-byte ping-pong on tag B, idle and while a %zu-byte message streams on "
               "tag A (round trips)\n", bulk);
        printf("# ranks: %d\n", size);
        printf("# rounds: %d; idle pings: %d\n", rounds, nidle);
        printf("# columns: size_B idle_rtt_us loaded_rtt_us idle_p90_us loaded_p90_us ratio pings bulk_MBps\n");
        printf("%zu %.1f %.1f %.1f %.1f %.2f %d %.1f\n", bulk, i50 * 1e6, l50 * 1e6, i90 * 1e6, l90 * 1e6,
               n ? l50 / i50 : 0.0, n, (double)bulk * rounds / bulk_time / 1e6);
        printf("# end\n");
    } else if (rank == 1) {
        for (int i = 0; i < 50 + nidle; i++) {
            MPI_Recv(ping, 8, MPI_BYTE, 0, TAG_B, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(pong, 8, MPI_BYTE, 0, TAG_B, MPI_COMM_WORLD);
        }
        for (int r = 0; r < rounds; r++) {
            MPI_Request rq;
            MPI_Irecv(big, (int)bulk, MPI_BYTE, 0, TAG_A, MPI_COMM_WORLD, &rq);
            for (;;) {
                MPI_Recv(ping, 8, MPI_BYTE, 0, TAG_B, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                if (ping[0] == 1)
                    break;
                MPI_Send(pong, 8, MPI_BYTE, 0, TAG_B, MPI_COMM_WORLD);
            }
            MPI_Wait(&rq, MPI_STATUS_IGNORE);
            MPI_Barrier(MPI_COMM_WORLD);
        }
    } else {
        for (int r = 0; r < rounds; r++)
            MPI_Barrier(MPI_COMM_WORLD);
    }
    free(big);
    free(idle);
    free(load);
    MPI_Finalize();
    return 0;
}
