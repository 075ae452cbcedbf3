/*
 * ofi_fastpath.c - the ofi transport's RDMA fast path: data, order, and
 * which peers get a ring (issue 14, session 8). Plain MPI: it passes on any
 * MPI; what it shows about the fast path is in the PLEXUS_STATS lines its
 * ctest registrations match (tests/mpi/CMakeLists.txt).
 *
 * Phase 1: ranks 1 and 2 each send rank 0 P1 messages in bursts of
 * nonblocking sends (more than a ring holds, so a sender moves between its
 * ring and send/recv), sizes cycling through small ones, one too large for
 * a slot (eager by send/recv) and one rendezvous; rank 3 (and up) sends only
 * a few small ones. Rank 0 receives them with MPI_ANY_SOURCE and MPI_ANY_TAG
 * and checks each one's bytes and that each sender's come in the order sent.
 * Phase 2, after a barrier: rank 3 (and up) sends P2 small messages; by then
 * the cap (PLEXUS_OFI_FASTPATH_PEERS=2 in the ctest) is taken by ranks 1 and 2.
 * Phase 3: rank 0 ping-pongs with every other rank (rings both ways).
 */
#include "plx_test.h"

enum { P1 = 600, P2 = 400, FEW = 4, BURST = 48, PINGS = 100, BIG = 40000 };

static int rank, size;

/* The size of a sender's message i. */
static int msg_size(int i)
{
    static const int small[] = { 0, 1, 8, 24, 64, 200, 511, 1000, 1500, 1990, 4 };
    if (i % 97 == 50)
        return BIG;             /* rendezvous */
    if (i % 31 == 7)
        return 3000;            /* eager, too large for a 2 KiB slot */
    return small[i % (int)(sizeof small / sizeof small[0])];
}

static void fill(unsigned char *b, int n, int src, int i)
{
    plx_fill(b, (size_t)n, plx_seed((uint32_t)src, (uint32_t)i, (uint32_t)n, 14));
    if (n >= 8) {
        memcpy(b, &src, 4);
        memcpy(b + 4, &i, 4);
    }
}

static void check(const unsigned char *b, int n, int src, int i)
{
    unsigned char *want = plx_malloc((size_t)n + 1);
    fill(want, n, src, i);
    PLX_CHECK_MEM(b, want, (size_t)n, "message data");
    free(want);
}

/* Sends `count` messages to rank 0 in bursts. */
static void send_to_root(int count, int first_tag_index)
{
    unsigned char *bufs = plx_malloc((size_t)BURST * BIG);
    MPI_Request reqs[BURST];
    for (int i = 0; i < count;) {
        int k = 0;
        for (; k < BURST && i < count; k++, i++) {
            int idx = first_tag_index + i, n = msg_size(idx);
            unsigned char *b = bufs + (size_t)k * BIG;
            fill(b, n, rank, idx);
            PLX_CHECK_MPI(MPI_Isend(b, n, MPI_BYTE, 0, idx, MPI_COMM_WORLD, &reqs[k]));
        }
        PLX_CHECK_MPI(MPI_Waitall(k, reqs, MPI_STATUSES_IGNORE));
    }
    free(bufs);
}

/* Rank 0: receives `total` messages from anyone; next[src] is the index due. */
static void recv_any(int total, int *next)
{
    unsigned char *b = plx_malloc(BIG);
    for (int m = 0; m < total; m++) {
        MPI_Status st;
        int n;
        PLX_CHECK_MPI(MPI_Recv(b, BIG, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
        PLX_CHECK_MPI(MPI_Get_count(&st, MPI_BYTE, &n));
        int src = st.MPI_SOURCE, idx = st.MPI_TAG;
        PLX_CHECK(src > 0 && src < size, "source %d", src);
        PLX_CHECK_EQ(idx, next[src], "index of the next message from this sender (order)");
        PLX_CHECK_EQ(n, msg_size(idx), "message size");
        check(b, n, src, idx);
        next[src]++;
    }
    free(b);
}

int main(int argc, char **argv)
{
    plx_test_init(&argc, &argv, "ofi_fastpath");
    rank = plx_test_state()->rank;
    size = plx_test_state()->size;
    PLX_CHECK(size >= 4, "needs 4 ranks or more (%d)", size);
    int *next = calloc((size_t)size, sizeof *next);

    /* phase 1: two busy senders, the rest quiet */
    if (rank == 0) {
        recv_any(2 * P1 + (size - 3) * FEW, next);
        PLX_CHECK_EQ(next[1], P1, "messages from rank 1");
        PLX_CHECK_EQ(next[2], P1, "messages from rank 2");
    } else {
        send_to_root(rank <= 2 ? P1 : FEW, 0);
    }
    PLX_CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));

    /* phase 2: the quiet ones get busy */
    if (rank == 0) {
        recv_any((size - 3) * P2, next);
        for (int r = 3; r < size; r++)
            PLX_CHECK_EQ(next[r], FEW + P2, "messages from a late sender");
    } else if (rank >= 3) {
        send_to_root(P2, FEW);
    }
    PLX_CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));

    /* phase 3: ping-pong both ways, sizes as above */
    unsigned char *b = plx_malloc(BIG), *w = plx_malloc(BIG);
    for (int peer = 1; peer < size; peer++) {
        if (rank != 0 && rank != peer)
            continue;
        int other = rank == 0 ? peer : 0;
        for (int i = 0; i < PINGS; i++) {
            int n = msg_size(i);
            MPI_Status st;
            int got;
            if ((rank == 0) == (i % 2 == 0)) {
                fill(w, n, rank, i);
                PLX_CHECK_MPI(MPI_Send(w, n, MPI_BYTE, other, i, MPI_COMM_WORLD));
            } else {
                PLX_CHECK_MPI(MPI_Recv(b, BIG, MPI_BYTE, other, i, MPI_COMM_WORLD, &st));
                PLX_CHECK_MPI(MPI_Get_count(&st, MPI_BYTE, &got));
                PLX_CHECK_EQ(got, n, "ping-pong size");
                check(b, n, other, i);
            }
        }
    }
    free(b);
    free(w);
    free(next);
    return plx_test_finish();
}
