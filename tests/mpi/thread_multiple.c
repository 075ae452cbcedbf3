/*
 * MPI_THREAD_MULTIPLE: several threads of each rank exchange messages with
 * the partner rank at once, each on its own tag, and one thread blocks in a
 * receive that only another thread of the same rank can satisfy (a blocked
 * call must not keep other threads out of MPI). Then two threads of each
 * rank ping-pong with blocking MPI_Send/MPI_Recv on their own tags: each
 * message may be read from the network by the other thread, while its
 * receiver sleeps (registered again with PLEXUS_SPIN_COUNT=1
 * PLEXUS_YIELD_COUNT=1 over TCP, where every wait sleeps at once: the
 * sleeper was not woken and slept out 100 ms a round, which ran past the
 * test's time limit). Then threads create
 * communicators at once -- Comm_dup on their own parents, and
 * Comm_create_group with distinct tags on one shared parent -- and pass
 * a token around a ring on each new communicator: two communicators given
 * the same context id would deliver one thread's token to the other.
 * Last, rank 0 duplicates two communicators from two threads at once while
 * the other ranks duplicate them one after the other, in the opposite order
 * of their ids (legal: an allocation must not wait for another one).
 * Checks every value; the check counters are bumped by the main thread only.
 */
#include "plx_test.h"     /* first: it sets the POSIX feature level */
#include <pthread.h>

#define NTHREADS 4
#define ROUNDS 500

#define NEWCOMMS 60
#define BLOCKED_THREADS 2
#define BLOCKED_ROUNDS 2000

static int rank, size, partner;
static int errors[NTHREADS + 1];
static MPI_Comm parents[NTHREADS];
static MPI_Group world_group;

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

/* Blocking ping-pong with the partner on tag 200 + t: the even rank sends first. */
static void *blocked_pingpong(void *arg)
{
    int t = (int)(long)arg;
    for (int i = 0; i < BLOCKED_ROUNDS; i++) {
        int out = rank * 1000000 + t * 10000 + i, in = -1;
        if (rank % 2 == 0) {
            MPI_Send(&out, 1, MPI_INT, partner, 200 + t, MPI_COMM_WORLD);
            MPI_Recv(&in, 1, MPI_INT, partner, 200 + t, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(&in, 1, MPI_INT, partner, 200 + t, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(&out, 1, MPI_INT, partner, 200 + t, MPI_COMM_WORLD);
        }
        if (in != partner * 1000000 + t * 10000 + i)
            errors[t]++;
    }
    return NULL;
}

/* One token around the ring of c, carrying the thread and iteration. */
static int ring_ok(MPI_Comm c, int t, int i)
{
    int n, me;
    MPI_Comm_size(c, &n);
    MPI_Comm_rank(c, &me);
    int out = t * 100000 + i, in = -1;
    MPI_Sendrecv(&out, 1, MPI_INT, (me + 1) % n, 7, &in, 1, MPI_INT, (me + n - 1) % n, 7, c, MPI_STATUS_IGNORE);
    return in == out;
}

static void *creator(void *arg)
{
    int t = (int)(long)arg;
    for (int i = 0; i < NEWCOMMS; i++) {
        MPI_Comm c;
        if (i % 2)
            MPI_Comm_dup(parents[t], &c);
        else
            MPI_Comm_create_group(MPI_COMM_WORLD, world_group, 100 + t, &c);
        if (c == MPI_COMM_NULL || !ring_ok(c, t, i))
            errors[t]++;
        MPI_Comm_free(&c);
    }
    return NULL;
}

static MPI_Comm lo, hi, lo_dup, hi_dup;

static void *dup_lo(void *arg)
{
    MPI_Comm_dup(lo, &lo_dup);
    return arg;
}

static void pause_ms(int ms)
{
    struct timespec t = { 0, ms * 1000000L };
    nanosleep(&t, NULL);
}

static void *dup_hi(void *arg)
{
    pause_ms(100);      /* after dup_lo has started */
    MPI_Comm_dup(hi, &hi_dup);
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

    if (partner < size) {
        for (long t = 0; t < BLOCKED_THREADS; t++)
            pthread_create(&th[t], NULL, blocked_pingpong, (void *)t);
        for (int t = 0; t < BLOCKED_THREADS; t++)
            pthread_join(th[t], NULL);
        for (int t = 0; t < BLOCKED_THREADS; t++)
            PLX_CHECK_EQ(errors[t], 0, "wrong values in a blocking ping-pong between threads");
    }

    MPI_Comm_group(MPI_COMM_WORLD, &world_group);
    for (int t = 0; t < NTHREADS; t++) {
        MPI_Comm_dup(MPI_COMM_WORLD, &parents[t]);
        errors[t] = 0;
    }
    for (long t = 0; t < NTHREADS; t++)
        pthread_create(&th[t], NULL, creator, (void *)t);
    for (int t = 0; t < NTHREADS; t++)
        pthread_join(th[t], NULL);
    for (int t = 0; t < NTHREADS; t++) {
        PLX_CHECK_EQ(errors[t], 0, "token lost or crossed on communicators created concurrently");
        MPI_Comm_free(&parents[t]);
    }
    MPI_Group_free(&world_group);

    MPI_Comm_dup(MPI_COMM_WORLD, &lo);  /* the lower context id */
    MPI_Comm_dup(MPI_COMM_WORLD, &hi);
    if (rank == 0) {
        pthread_t a, b;
        pthread_create(&a, NULL, dup_lo, NULL);
        pthread_create(&b, NULL, dup_hi, NULL);
        pthread_join(a, NULL);
        pthread_join(b, NULL);
    } else {
        pause_ms(300);  /* rank 0's two allocations are under way */
        MPI_Comm_dup(hi, &hi_dup);
        MPI_Comm_dup(lo, &lo_dup);
    }
    PLX_CHECK(ring_ok(lo_dup, 0, 1) && ring_ok(hi_dup, 1, 2), "token on communicators duplicated in opposite orders");
    MPI_Comm_free(&lo_dup);
    MPI_Comm_free(&hi_dup);
    MPI_Comm_free(&lo);
    MPI_Comm_free(&hi);
    return plx_test_finish();
}
