/*
 * sctp_finalize.c - MPI_Finalize over SCTP ends promptly: usrsctp_close and
 * usrsctp_finish have hung elsewhere (a thread blocked in recvv, endpoints
 * waiting for a graceful SHUTDOWN). Every rank exchanges eager and
 * rendezvous messages with every other (so each has associations in both
 * directions, some still carrying acknowledgements), the last rank enters
 * MPI_Finalize 2 s after the others, and each rank checks that its own
 * MPI_Finalize returned within 8 s of the last rank's arrival. The CTest
 * registration runs it under mpiexec --timeout as well.
 */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size, bad = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const int n = 1 << 20;
    char *s = malloc((size_t)n), *r = malloc((size_t)n);
    for (int p = 0; p < size; p++) {
        if (p == rank)
            continue;
        memset(s, rank + 1, (size_t)n);
        MPI_Sendrecv(s, n, MPI_BYTE, p, 1, r, n, MPI_BYTE, p, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        for (int i = 0; i < n; i += 4099)
            bad |= r[i] != (char)(p + 1);
        int x = rank, y = -1;
        MPI_Sendrecv(&x, 1, MPI_INT, p, 2, &y, 1, MPI_INT, p, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        bad |= y != p;
    }
    free(s);
    free(r);
    if (rank == size - 1)
        sleep(2);
    double t0 = now();
    MPI_Finalize();
    double dt = now() - t0;
    double limit = rank == size - 1 ? 8.0 : 10.0;   /* the others waited 2 s for the last one */
    if (bad)
        fprintf(stderr, "sctp_finalize: rank %d: wrong data\n", rank);
    if (dt > limit)
        fprintf(stderr, "sctp_finalize: rank %d: MPI_Finalize took %.1f s (limit %.0f s)\n", rank, dt, limit);
    else
        printf("sctp_finalize: rank %d: MPI_Finalize took %.2f s\n", rank, dt);
    return bad || dt > limit;
}
