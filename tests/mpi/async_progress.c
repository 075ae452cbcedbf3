/*
 * Asynchronous progress (run with PLEXUS_ASYNC_PROGRESS=1): work a rank owes
 * its peer gets done while the rank computes without calling MPI.
 *
 *  1. Receiver side of a rendezvous: rank b posts an MPI_Irecv of a large
 *     message from rank a, tells a (a small send), and then, calling no MPI
 *     at all, reads its buffer (volatile) until every byte has the expected
 *     value. a sends with a blocking MPI_Send.
 *  2. Sender side: b starts an MPI_Isend of a large message to a and an
 *     MPI_Irecv of a small answer, then, calling no MPI, waits until the
 *     answer shows in its buffer. a answers only once its MPI_Recv of the
 *     large message has completed, so the answer proves that b's side of
 *     the rendezvous (answering the clear-to-send, streaming the data over
 *     TCP, being read over shared memory) went on without b.
 *  3. Several rounds of both, with each rank in turn the silent one.
 *
 * Ranks are paired (0,1), (2,3), ...; an odd last rank only takes part in
 * the barriers. A wait that sees no progress for GIVE_UP seconds counts as
 * a failure (the library without the thread fails that way); nothing else
 * depends on time. Every byte and every status is checked.
 */
#include "plx_test.h"
#include <time.h>

/* The point of this test is to look at a buffer the library fills while the
 * request is pending, which MPI itself does not allow: ThreadSanitizer would
 * rightly call it a race with the progress thread. These reads are hidden
 * from it (the library's own accesses are still checked); the request is
 * then completed with MPI_Wait before the data is used. */
#if defined(__has_attribute)
#if __has_attribute(no_sanitize)
#define NO_TSAN __attribute__((no_sanitize("thread")))
#endif
#endif
#ifndef NO_TSAN
#define NO_TSAN
#endif

#define BIG (4u << 20)          /* above every transport's eager limit */
#define ROUNDS 3
#define GIVE_UP 30.0            /* seconds: generous, counted as failure */

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Waits, without calling MPI, until buf[0..n) holds the pattern of seed.
 * Returns the offset of the first byte still wrong at the give-up, or -1. */
NO_TSAN static long long wait_for_pattern(const volatile unsigned char *buf, size_t n, uint32_t seed)
{
    size_t good = 0;
    double start = now_s();
    unsigned spins = 0;
    while (good < n) {
        if (buf[good] == plx_pattern_byte(seed, good)) {
            good++;
            continue;
        }
        if ((++spins & 0xffff) == 0 && now_s() - start > GIVE_UP)
            return (long long)good;
    }
    return -1;
}

/* Waits, without calling MPI, until *v == want; 0 at the give-up. */
NO_TSAN static int wait_for_int(const volatile int *v, int want)
{
    double start = now_s();
    unsigned spins = 0;
    while (*v != want)
        if ((++spins & 0xffff) == 0 && now_s() - start > GIVE_UP)
            return 0;
    return 1;
}

static void check_silent(long long bad, const char *what, int peer, size_t n)
{
    PLX_CHECK(bad < 0, "%s: %zu bytes from rank %d did not arrive while this rank stayed out of MPI "
              "(byte %lld still wrong after %.0f s)", what, n, peer, bad, GIVE_UP);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    plx_test_begin("async_progress");
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int paired = rank < size - size % 2;
    int peer = rank ^ 1;
    unsigned char *big = malloc(BIG);
    PLX_CHECK(big != NULL, "malloc of %u bytes", BIG);

    for (int round = 0; round < ROUNDS && paired; round++) {
        /* the silent rank: the odd one, then the even one, then the odd one */
        int silent = (rank & 1) == ((round & 1) == 0);
        uint32_t seed = plx_seed((uint32_t)(rank | (silent ? 0 : 0x100)), (uint32_t)peer, BIG, (uint32_t)round);
        MPI_Status st;

        /* 1: receiver side */
        if (silent) {
            uint32_t want = plx_seed((uint32_t)(peer | 0x100), (uint32_t)rank, BIG, (uint32_t)round);
            for (size_t i = 0; i < BIG; i++)
                big[i] = (unsigned char)~plx_pattern_byte(want, i);
            MPI_Request r;
            PLX_CHECK_MPI(MPI_Irecv(big, BIG, MPI_BYTE, peer, 10 + round, MPI_COMM_WORLD, &r));
            int posted = round;
            PLX_CHECK_MPI(MPI_Send(&posted, 1, MPI_INT, peer, 20 + round, MPI_COMM_WORLD));
            check_silent(wait_for_pattern(big, BIG, want), "receive", peer, BIG);
            PLX_CHECK_MPI(MPI_Wait(&r, &st));
            PLX_CHECK_STATUS(st, peer, 10 + round, (int)BIG);
        } else {
            int posted = -1;
            PLX_CHECK_MPI(MPI_Recv(&posted, 1, MPI_INT, peer, 20 + round, MPI_COMM_WORLD, &st));
            PLX_CHECK_EQ(posted, round, "round announced by the receiver");
            plx_fill(big, BIG, seed);
            PLX_CHECK_MPI(MPI_Send(big, BIG, MPI_BYTE, peer, 10 + round, MPI_COMM_WORLD));
        }

        /* 2: sender side */
        if (silent) {
            plx_fill(big, BIG, seed);
            volatile int answer = -1;
            MPI_Request r[2];
            PLX_CHECK_MPI(MPI_Irecv((void *)&answer, 1, MPI_INT, peer, 40 + round, MPI_COMM_WORLD, &r[0]));
            PLX_CHECK_MPI(MPI_Isend(big, BIG, MPI_BYTE, peer, 30 + round, MPI_COMM_WORLD, &r[1]));
            int arrived = wait_for_int(&answer, 1000 + round);
            PLX_CHECK(arrived, "send: rank %d did not get this rank's %u bytes while this rank "
                      "stayed out of MPI (no answer after %.0f s)", peer, BIG, GIVE_UP);
            MPI_Status sts[2];
            PLX_CHECK_MPI(MPI_Waitall(2, r, sts));
            PLX_CHECK_EQ(answer, 1000 + round, "answer");
            PLX_CHECK_STATUS(sts[0], peer, 40 + round, (int)sizeof(int));
        } else {
            uint32_t want = plx_seed((uint32_t)peer, (uint32_t)rank, BIG, (uint32_t)round);
            memset(big, 0, BIG);
            PLX_CHECK_MPI(MPI_Recv(big, BIG, MPI_BYTE, peer, 30 + round, MPI_COMM_WORLD, &st));
            PLX_CHECK_STATUS(st, peer, 30 + round, (int)BIG);
            PLX_CHECK_PATTERN(big, BIG, want, "large message from the silent sender");
            int answer = 1000 + round;
            PLX_CHECK_MPI(MPI_Send(&answer, 1, MPI_INT, peer, 40 + round, MPI_COMM_WORLD));
        }
        PLX_CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    }
    for (int round = 0; round < ROUNDS && !paired; round++)
        PLX_CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    free(big);
    return plx_test_finish();
}
