/*
 * sctp_pace.c - rendezvous data over SCTP while small messages flow between
 * the same two ranks: the paced path (PLEXUS_SCTP_PACE) must deliver every
 * byte of every message, in MPI's order per tag.
 *
 * Ranks 0 and 1 each stream NBIG large messages of odd sizes (on tags 10,
 * 11, ..., so on several SCTP streams at once) to the other, both
 * directions at the same time, while they ping-pong small messages on tag 1
 * whose contents count up. Every large message carries a pattern of
 * (sender, message index, offset), checked byte by byte by the receiver;
 * every small message is checked against its number. A second phase sends
 * the same large messages again with no small messages (not paced), so a
 * switch between the two modes in the middle of a message is also crossed.
 *
 * Run with a small PLEXUS_SCTP_PACE (pieces of half of it, not a multiple
 * of the message sizes) and PLEXUS_DEBUG=1: the ctest entry fails if the
 * transport reports that it never paced (see tests/mpi/CMakeLists.txt).
 * Other ranks (np > 2) only take part in the final barrier.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NBIG 4
#define PING_TAG 1
#define BIG_TAG 10

static size_t big_size(int i)
{
    return ((size_t)1 << 20) + (size_t)i * 333331 + 17;     /* 1 MiB + odd bytes */
}

static unsigned char pattern(int from, int i, size_t off)
{
    return (unsigned char)(from * 131 + i * 31 + off * 7 + (off >> 13));
}

static int check_big(const unsigned char *buf, int from, int i, int rank)
{
    size_t n = big_size(i);
    for (size_t off = 0; off < n; off++) {
        if (buf[off] != pattern(from, i, off)) {
            fprintf(stderr, "sctp_pace: rank %d: message %d from rank %d: byte %zu of %zu is %u, expected %u\n", rank,
                    i, from, off, n, buf[off], pattern(from, i, off));
            return 1;
        }
    }
    return 0;
}

/* One phase: both directions stream NBIG messages; with pings, the two
 * ranks ping-pong on tag 1 until their own transfers are done. */
static int phase(int rank, int with_pings)
{
    int peer = rank ^ 1, bad = 0;
    unsigned char *out[NBIG], *in[NBIG];
    MPI_Request rq[2 * NBIG];
    for (int i = 0; i < NBIG; i++) {
        size_t n = big_size(i);
        out[i] = malloc(n);
        in[i] = malloc(n);
        if (!out[i] || !in[i]) {
            fprintf(stderr, "sctp_pace: out of memory\n");
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        for (size_t off = 0; off < n; off++)
            out[i][off] = pattern(rank, i, off);
        memset(in[i], 0xee, n);
        MPI_Irecv(in[i], (int)n, MPI_BYTE, peer, BIG_TAG + i, MPI_COMM_WORLD, &rq[NBIG + i]);
    }
    for (int i = 0; i < NBIG; i++)
        MPI_Isend(out[i], (int)big_size(i), MPI_BYTE, peer, BIG_TAG + i, MPI_COMM_WORLD, &rq[i]);
    long pings = 0;
    if (with_pings) {
        /* rank 0 leads: it sends ping k and expects k + 1 back; a negative
         * number ends the exchange once rank 0's transfers are done */
        int done = 0;
        for (long k = 0;; k += 2) {
            long v = k, w = -2;
            if (rank == 0) {
                MPI_Testall(2 * NBIG, rq, &done, MPI_STATUSES_IGNORE);
                if (done)
                    v = -1;
                MPI_Send(&v, 1, MPI_LONG, peer, PING_TAG, MPI_COMM_WORLD);
                if (v < 0)
                    break;
                MPI_Recv(&w, 1, MPI_LONG, peer, PING_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                if (w != k + 1) {
                    fprintf(stderr, "sctp_pace: rank 0: pong %ld, expected %ld\n", w, k + 1);
                    bad = 1;
                    break;
                }
            } else {
                MPI_Recv(&w, 1, MPI_LONG, peer, PING_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                if (w < 0)
                    break;
                if (w != k) {
                    fprintf(stderr, "sctp_pace: rank 1: ping %ld, expected %ld\n", w, k);
                    bad = 1;
                }
                v = w + 1;
                MPI_Send(&v, 1, MPI_LONG, peer, PING_TAG, MPI_COMM_WORLD);
            }
            pings++;
        }
    }
    MPI_Waitall(2 * NBIG, rq, MPI_STATUSES_IGNORE);
    for (int i = 0; i < NBIG; i++) {
        bad |= check_big(in[i], peer, i, rank);
        free(out[i]);
        free(in[i]);
    }
    if (rank == 0)
        printf("sctp_pace: phase %s: %d messages each way of %zu..%zu bytes checked, %ld pings\n",
               with_pings ? "with pings" : "without pings", NBIG, big_size(0), big_size(NBIG - 1), pings);
    return bad;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size, bad = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size < 2) {
        if (rank == 0)
            printf("sctp_pace: needs 2 ranks: skipped\n");
        MPI_Finalize();
        return 77;
    }
    if (rank < 2) {
        bad |= phase(rank, 1);
        bad |= phase(rank, 0);
        bad |= phase(rank, 1);
    }
    int all = 0;
    MPI_Allreduce(&bad, &all, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD);
    if (rank == 0)
        printf("sctp_pace: %s\n", all ? "FAILED" : "passed");
    MPI_Finalize();
    return all ? 1 : 0;
}
