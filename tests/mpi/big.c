/*
 * big.c - 64 MiB messages between pairs, every byte checked.
 *
 * Both directions at once with Isend/Irecv (as bytes), one direction at a time
 * with blocking Send/Recv (as MPI_INT and MPI_DOUBLE counts), a receive posted
 * late (message sent first), and Sendrecv_replace of 16 MiB. Pairs are rank ^ 1
 * (self without a partner). Needs about 200 MiB per rank; registered for 2 and 4.
 * --size=N changes the message size.
 */
#include "plx_test.h"

static int rank, size, peer;

static uint32_t seed_of(int from, int to, int round)
{
    return plx_seed((uint32_t)from, (uint32_t)to, 64, (uint32_t)round);
}

int main(int argc, char **argv)
{
    size_t n = 64u << 20;
    unsigned char *s, *r;
    MPI_Request req[2];
    MPI_Status st[2];
    int cnt = -1, go = 0, go_in = 0;

    plx_test_init(&argc, &argv, "big");
    rank = plx_test_state()->rank;
    size = plx_test_state()->size;
    peer = plx_pair_peer(rank, size);
    for (int i = 1; i < argc; i++)
        if (strncmp(argv[i], "--size=", 7) == 0)
            n = (size_t)strtoull(argv[i] + 7, NULL, 0) & ~(size_t)7;
    s = plx_malloc(n);
    r = plx_malloc(n);

    /* 1. Both directions at once. */
    plx_fill(s, n, seed_of(rank, peer, 1));
    memset(r, 0, n);
    PLX_CHECK_MPI(MPI_Irecv(r, (int)n, MPI_BYTE, peer, 1, MPI_COMM_WORLD, &req[0]));
    PLX_CHECK_MPI(MPI_Isend(s, (int)n, MPI_BYTE, peer, 1, MPI_COMM_WORLD, &req[1]));
    PLX_CHECK_MPI(MPI_Waitall(2, req, st));
    PLX_CHECK_STATUS(st[0], peer, 1, n);
    PLX_CHECK_PATTERN(r, n, seed_of(peer, rank, 1), "64 MiB Isend/Irecv both ways");

    /* 2. One way at a time, blocking, in ints then doubles. */
    for (int round = 2; round <= 3; round++) {
        MPI_Datatype t = round == 2 ? MPI_INT : MPI_DOUBLE;
        int esz = round == 2 ? 4 : 8;
        plx_fill(s, n, seed_of(rank, peer, round));
        memset(r, 0, n);
        if (peer == rank) {
            PLX_CHECK_MPI(MPI_Isend(s, (int)(n / (size_t)esz), t, peer, round, MPI_COMM_WORLD, &req[1]));
            PLX_CHECK_MPI(MPI_Recv(r, (int)(n / (size_t)esz), t, peer, round, MPI_COMM_WORLD, &st[0]));
            PLX_CHECK_MPI(MPI_Wait(&req[1], MPI_STATUS_IGNORE));
        } else if (rank < peer) {
            PLX_CHECK_MPI(MPI_Send(s, (int)(n / (size_t)esz), t, peer, round, MPI_COMM_WORLD));
            PLX_CHECK_MPI(MPI_Recv(r, (int)(n / (size_t)esz), t, peer, round, MPI_COMM_WORLD, &st[0]));
        } else {
            PLX_CHECK_MPI(MPI_Recv(r, (int)(n / (size_t)esz), t, peer, round, MPI_COMM_WORLD, &st[0]));
            PLX_CHECK_MPI(MPI_Send(s, (int)(n / (size_t)esz), t, peer, round, MPI_COMM_WORLD));
        }
        MPI_Get_count(&st[0], t, &cnt);
        PLX_CHECK_EQ(cnt, n / (size_t)esz, "Get_count of a 64 MiB message in its datatype");
        PLX_CHECK_PATTERN(r, n, seed_of(peer, rank, round), round == 2 ? "64 MiB as MPI_INT" : "64 MiB as MPI_DOUBLE");
    }

    /* 3. Sent before the receive is posted (the receiver waits for a token first). */
    plx_fill(s, n, seed_of(rank, peer, 4));
    memset(r, 0, n);
    PLX_CHECK_MPI(MPI_Isend(s, (int)n, MPI_BYTE, peer, 4, MPI_COMM_WORLD, &req[1]));
    if (peer != rank)
        PLX_CHECK_MPI(MPI_Sendrecv(&go, 1, MPI_INT, peer, 5, &go_in, 1, MPI_INT, peer, 5, MPI_COMM_WORLD,
                                   MPI_STATUS_IGNORE));
    PLX_CHECK_MPI(MPI_Recv(r, (int)n, MPI_BYTE, peer, 4, MPI_COMM_WORLD, &st[0]));
    PLX_CHECK_MPI(MPI_Wait(&req[1], MPI_STATUS_IGNORE));
    PLX_CHECK_STATUS(st[0], peer, 4, n);
    PLX_CHECK_PATTERN(r, n, seed_of(peer, rank, 4), "64 MiB, receive posted late");

    /* 4. Sendrecv_replace, a quarter of the size. */
    plx_fill(r, n / 4, seed_of(rank, peer, 5));
    PLX_CHECK_MPI(MPI_Sendrecv_replace(r, (int)(n / 4), MPI_BYTE, peer, 6, peer, 6, MPI_COMM_WORLD, &st[0]));
    PLX_CHECK_STATUS(st[0], peer, 6, n / 4);
    PLX_CHECK_PATTERN(r, n / 4, seed_of(peer, rank, 5), "Sendrecv_replace of n/4");

    free(s);
    free(r);
    return plx_test_finish();
}
