/*
 * sctp_away.c - a rank that stays away from MPI keeps its SCTP associations.
 *
 * Without usrsctp's threads (PLEXUS_SCTP_THREADS=off) the rank's own poll
 * feeds usrsctp; while the rank computes, sctp_conn.c's service thread must
 * do it, or the peer sees no acknowledgement, retransmits and gives the
 * association up after PLEXUS_SCTP_ASSOC_RETRANS tries (the CTest
 * registration sets 2: a second or two). Rank 0 sends eager messages and a
 * large one to rank 1, which computes for AWAY_S seconds (a busy loop, no
 * MPI call, no sleep) before it receives them; then the same the other way.
 * Every byte is checked, and errors return (MPI_ERRORS_RETURN) so that a
 * lost association shows as a failed check, not an abort.
 */
#include "plx_test.h"
#include <time.h>

#define AWAY_S 3.0
#define NSMALL 64
#define SMALL 1000
#define BIG (4 << 20)

static void compute(double seconds)
{
    volatile double x = 1.0;
    double end = MPI_Wtime() + seconds;
    while (MPI_Wtime() < end)
        for (int i = 0; i < 1000; i++)
            x = x * 1.0000001 + 1e-9;
}

static unsigned char pattern(int from, int msg, size_t i)
{
    return (unsigned char)(from * 131 + msg * 31 + i * 7 + (i >> 11));
}

static void fill(unsigned char *b, size_t n, int from, int msg)
{
    for (size_t i = 0; i < n; i++)
        b[i] = pattern(from, msg, i);
}

static size_t wrong(const unsigned char *b, size_t n, int from, int msg)
{
    size_t bad = 0;
    for (size_t i = 0; i < n; i++)
        bad += b[i] != pattern(from, msg, i);
    return bad;
}

/* src sends, dst computes first and then receives */
static void one_way(int rank, int src, int dst)
{
    static unsigned char small[NSMALL][SMALL];
    unsigned char *big = malloc(BIG);
    PLX_CHECK(big != NULL, "malloc");
    MPI_Request rq[NSMALL + 1];
    if (rank == src) {
        for (int m = 0; m < NSMALL; m++) {
            fill(small[m], SMALL, src, m);
            PLX_CHECK_MPI(MPI_Isend(small[m], SMALL, MPI_BYTE, dst, m, MPI_COMM_WORLD, &rq[m]));
        }
        fill(big, BIG, src, NSMALL);
        PLX_CHECK_MPI(MPI_Isend(big, BIG, MPI_BYTE, dst, NSMALL, MPI_COMM_WORLD, &rq[NSMALL]));
        PLX_CHECK_MPI(MPI_Waitall(NSMALL + 1, rq, MPI_STATUSES_IGNORE));
    } else if (rank == dst) {
        compute(AWAY_S);
        for (int m = 0; m < NSMALL; m++)
            PLX_CHECK_MPI(MPI_Irecv(small[m], SMALL, MPI_BYTE, src, m, MPI_COMM_WORLD, &rq[m]));
        PLX_CHECK_MPI(MPI_Irecv(big, BIG, MPI_BYTE, src, NSMALL, MPI_COMM_WORLD, &rq[NSMALL]));
        PLX_CHECK_MPI(MPI_Waitall(NSMALL + 1, rq, MPI_STATUSES_IGNORE));
        for (int m = 0; m < NSMALL; m++) {
            size_t bad = wrong(small[m], SMALL, src, m);
            PLX_CHECK(bad == 0, "%zu bytes wrong in message %d", bad, m);
        }
        size_t bad = wrong(big, BIG, src, NSMALL);
        PLX_CHECK(bad == 0, "%zu bytes wrong in the %d-byte message", bad, BIG);
    }
    free(big);
}

int main(int argc, char **argv)
{
    plx_test_init(&argc, &argv, "sctp_away");
    int rank = plx_test_state()->rank, size = plx_test_state()->size;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    if (size >= 2) {
        one_way(rank, 0, 1);
        one_way(rank, 1, 0);
    }
    PLX_CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    return plx_test_finish();
}
