/*
 * MPI_THREAD_MULTIPLE: several threads of each rank exchange messages with
 * the partner rank at once, each on its own tag, and one thread blocks in a
 * receive that only another thread of the same rank can satisfy (a blocked
 * call must not keep other threads out of MPI). Checks every value; the
 * check counters are bumped by the main thread only.
 */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include "plx_test.h"

#define NTHREADS 4
#define ROUNDS 500

static int rank, size, partner;
static int errors[NTHREADS + 1];

static void *pingpong(void *arg)
{
    int t = (int)(long)arg;
    for (int i = 0; i < ROUNDS; i++) {
        int out = rank * 1000000 + t * 10000 + i, in = -1;
        MPI_Sendrecv(&out, 1, MPI_INT, partner, t, &in, 1, MPI_INT, partner, t, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        if (in != partner * 1000000 + t * 10000 + i)
            errors[t]++;
    }
    return NULL;
}

/* Waits for a message that the main thread sends to this rank itself. */
static void *waiter(void *arg)
{
    int v = -1;
    MPI_Recv(&v, 1, MPI_INT, rank, 99, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    if (v != 4242)
        errors[NTHREADS]++;
    return arg;
}

int main(int argc, char **argv)
{
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    plx_test_begin("thread_multiple");
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    PLX_CHECK_EQ(provided, MPI_THREAD_MULTIPLE, "provided thread level");

    pthread_t w;
    pthread_create(&w, NULL, waiter, NULL);
    partner = rank ^ 1;
    pthread_t th[NTHREADS];
    if (partner < size) {
        for (long t = 0; t < NTHREADS; t++)
            pthread_create(&th[t], NULL, pingpong, (void *)t);
        for (int t = 0; t < NTHREADS; t++)
            pthread_join(th[t], NULL);
    }
    int v = 4242;
    MPI_Send(&v, 1, MPI_INT, rank, 99, MPI_COMM_WORLD);
    pthread_join(w, NULL);
    for (int t = 0; t <= NTHREADS; t++)
        PLX_CHECK_EQ(errors[t], 0, "wrong values received by a thread");
    return plx_test_finish();
}
