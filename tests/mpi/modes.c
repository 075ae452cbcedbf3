/*
 * modes.c - synchronous, buffered and ready sends, Sendrecv, Sendrecv_replace.
 *
 * Issend cannot complete before the receive is posted: the receiver posts it only
 * after a message that the sender sends after testing, so a true Test there is a
 * semantic error, not a timing one. Bsend/Ibsend complete while the receiver is
 * still waiting, data are copied out of the user buffer, Buffer_detach gives back
 * the attached pointer and size, too small or missing buffers fail with
 * MPI_ERR_BUFFER. Rsend/Irsend to a pre-posted receive (pair handshake and Barrier).
 * Pairs are rank ^ 1; a rank without a partner plays both sides with itself.
 */
#include "plx_test.h"

static int rank, size, peer;

static const size_t msizes[] = {0, 8, 4095, 1 << 20};
enum { NSIZES = 4 };

static uint32_t seed_of(int from, int to, size_t n, int round)
{
    return plx_seed((uint32_t)from, (uint32_t)to, (uint32_t)n, (uint32_t)round);
}

static void test_ssend(MPI_Comm comm)
{
    for (int k = 0; k < NSIZES; k++) {
        size_t n = msizes[k];
        unsigned char *buf = plx_malloc(n);
        int go = 1, flag = -1;
        MPI_Request req;
        MPI_Status st;

        if (peer == rank) {
            plx_fill(buf, n, seed_of(rank, rank, n, 10));
            PLX_CHECK_MPI(MPI_Issend(buf, (int)n, MPI_BYTE, rank, 1, comm, &req));
            for (int i = 0; i < 3; i++) {
                PLX_CHECK_MPI(MPI_Test(&req, &flag, MPI_STATUS_IGNORE));
                PLX_CHECK_EQ(flag, 0, "Issend to self completes before the receive is posted");
            }
            {
                unsigned char *r = plx_malloc(n);
                PLX_CHECK_MPI(MPI_Recv(r, (int)n, MPI_BYTE, rank, 1, comm, &st));
                PLX_CHECK_MPI(MPI_Wait(&req, MPI_STATUS_IGNORE));
                PLX_CHECK_PATTERN(r, n, seed_of(rank, rank, n, 10), "Issend to self");
                free(r);
            }
            free(buf);
            continue;
        }
        /* Both directions in turn: round 0 the lower rank sends, round 1 the higher. */
        for (int round = 0; round < 2; round++) {
            int sender = (round == 0) == (rank < peer);
            if (sender) {
                plx_fill(buf, n, seed_of(rank, peer, n, 10 + round));
                PLX_CHECK_MPI(MPI_Issend(buf, (int)n, MPI_BYTE, peer, 1, comm, &req));
                for (int i = 0; i < 3; i++) {
                    PLX_CHECK_MPI(MPI_Test(&req, &flag, MPI_STATUS_IGNORE));
                    PLX_CHECK(flag == 0, "Issend of %zu B completed before the receive was posted", n);
                }
                PLX_CHECK_MPI(MPI_Send(&go, 1, MPI_INT, peer, 2, comm));
                PLX_CHECK_MPI(MPI_Wait(&req, MPI_STATUS_IGNORE));
                PLX_CHECK(req == MPI_REQUEST_NULL, "Issend completes once received");
            } else {
                memset(buf, 0, n);
                PLX_CHECK_MPI(MPI_Recv(&go, 1, MPI_INT, peer, 2, comm, MPI_STATUS_IGNORE));
                PLX_CHECK_MPI(MPI_Recv(buf, (int)n, MPI_BYTE, peer, 1, comm, &st));
                PLX_CHECK_STATUS(st, peer, 1, n);
                PLX_CHECK_PATTERN(buf, n, seed_of(peer, rank, n, 10 + round), "Issend data");
            }
        }
        /* Blocking Ssend, both ways. */
        {
            unsigned char *r = plx_malloc(n);
            plx_fill(buf, n, seed_of(rank, peer, n, 12));
            if (rank < peer) {
                PLX_CHECK_MPI(MPI_Ssend(buf, (int)n, MPI_BYTE, peer, 3, comm));
                PLX_CHECK_MPI(MPI_Recv(r, (int)n, MPI_BYTE, peer, 3, comm, &st));
            } else {
                PLX_CHECK_MPI(MPI_Recv(r, (int)n, MPI_BYTE, peer, 3, comm, &st));
                PLX_CHECK_MPI(MPI_Ssend(buf, (int)n, MPI_BYTE, peer, 3, comm));
            }
            PLX_CHECK_PATTERN(r, n, seed_of(peer, rank, n, 12), "Ssend data");
            free(r);
        }
        free(buf);
    }
}

static void test_bsend(MPI_Comm comm)
{
    enum { NSMALL = 4, SMALL = 1000, LARGE = 100000 };
    int bufsize = NSMALL * (SMALL + MPI_BSEND_OVERHEAD) + 2 * (LARGE + MPI_BSEND_OVERHEAD);
    char *attach = plx_malloc((size_t)bufsize);
    unsigned char *s = plx_malloc(LARGE), *r = plx_malloc(LARGE);
    void *detached = NULL;
    int detached_size = -1, go = 1;
    MPI_Request req;
    MPI_Status st;

    PLX_CHECK_MPI(MPI_Buffer_attach(attach, bufsize));
    for (int round = 0; round < 2; round++) {
        int sender = peer == rank || ((round == 0) == (rank < peer));
        int receiver = peer == rank || !sender;
        if (sender) {
            /* These complete although the receiver is blocked waiting for `go`. */
            for (int i = 0; i < NSMALL; i++) {
                plx_fill(s, SMALL, seed_of(rank, peer, SMALL, 20 + i + round));
                PLX_CHECK_MPI(MPI_Bsend(s, SMALL, MPI_BYTE, peer, 5, comm));
            }
            plx_fill(s, LARGE, seed_of(rank, peer, LARGE, 30 + round));
            PLX_CHECK_MPI(MPI_Bsend(s, LARGE, MPI_BYTE, peer, 5, comm));
            plx_fill(s, LARGE, seed_of(rank, peer, LARGE, 40 + round));
            PLX_CHECK_MPI(MPI_Ibsend(s, LARGE, MPI_BYTE, peer, 5, comm, &req));
            PLX_CHECK_MPI(MPI_Wait(&req, MPI_STATUS_IGNORE));
            memset(s, 0xCC, LARGE); /* the data were copied: this must not be seen */
            if (peer != rank)
                PLX_CHECK_MPI(MPI_Send(&go, 1, MPI_INT, peer, 6, comm));
        }
        if (receiver) {
            if (peer != rank)
                PLX_CHECK_MPI(MPI_Recv(&go, 1, MPI_INT, peer, 6, comm, MPI_STATUS_IGNORE));
            for (int i = 0; i < NSMALL; i++) {
                PLX_CHECK_MPI(MPI_Recv(r, LARGE, MPI_BYTE, peer, 5, comm, &st));
                PLX_CHECK_STATUS(st, peer, 5, SMALL);
                PLX_CHECK_PATTERN(r, SMALL, seed_of(peer, rank, SMALL, 20 + i + round), "Bsend small, in order");
            }
            PLX_CHECK_MPI(MPI_Recv(r, LARGE, MPI_BYTE, peer, 5, comm, &st));
            PLX_CHECK_STATUS(st, peer, 5, LARGE);
            PLX_CHECK_PATTERN(r, LARGE, seed_of(peer, rank, LARGE, 30 + round), "Bsend large");
            PLX_CHECK_MPI(MPI_Recv(r, LARGE, MPI_BYTE, peer, 5, comm, &st));
            PLX_CHECK_PATTERN(r, LARGE, seed_of(peer, rank, LARGE, 40 + round), "Ibsend large");
        }
        if (peer == rank)
            break;
    }
    PLX_CHECK_MPI(MPI_Buffer_detach(&detached, &detached_size));
    PLX_CHECK(detached == (void *)attach, "Buffer_detach returns the attached address");
    PLX_CHECK_EQ(detached_size, bufsize, "Buffer_detach returns the attached size");

    /* The buffer can be attached again and reused many times over. */
    PLX_CHECK_MPI(MPI_Buffer_attach(attach, 2 * (SMALL + MPI_BSEND_OVERHEAD)));
    for (int i = 0; i < 20; i++) {
        plx_fill(s, SMALL, seed_of(rank, i, SMALL, 50));
        PLX_CHECK_MPI(MPI_Bsend(s, SMALL, MPI_BYTE, rank, 7, comm));
        PLX_CHECK_MPI(MPI_Recv(r, SMALL, MPI_BYTE, rank, 7, comm, MPI_STATUS_IGNORE));
        PLX_CHECK_PATTERN(r, SMALL, seed_of(rank, i, SMALL, 50), "Bsend to self, buffer reused");
    }
    PLX_CHECK_MPI(MPI_Buffer_detach(&detached, &detached_size));
    PLX_CHECK_EQ(detached_size, 2 * (SMALL + MPI_BSEND_OVERHEAD), "size of second attach");

    /* Errors: a buffer too small, and no buffer at all. */
    {
        MPI_Comm ecomm;
        int flag = -1;
        PLX_CHECK_MPI(MPI_Comm_dup(MPI_COMM_SELF, &ecomm));
        PLX_CHECK_MPI(MPI_Comm_set_errhandler(ecomm, MPI_ERRORS_RETURN));
        PLX_CHECK_MPI(MPI_Buffer_attach(attach, 100 + MPI_BSEND_OVERHEAD));
        PLX_CHECK_ERR(MPI_Bsend(s, SMALL, MPI_BYTE, 0, 8, ecomm), MPI_ERR_BUFFER);
        PLX_CHECK_MPI(MPI_Buffer_detach(&detached, &detached_size));
        PLX_CHECK_ERR(MPI_Bsend(s, SMALL, MPI_BYTE, 0, 8, ecomm), MPI_ERR_BUFFER);
        PLX_CHECK_MPI(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, ecomm, &flag, MPI_STATUS_IGNORE));
        PLX_CHECK_EQ(flag, 0, "a failed Bsend sends nothing");
        PLX_CHECK_MPI(MPI_Comm_free(&ecomm));
    }
    free(attach);
    free(s);
    free(r);
}

static void test_rsend(MPI_Comm comm)
{
    for (int k = 1; k < NSIZES; k++) {
        size_t n = msizes[k];
        unsigned char *s = plx_malloc(n), *r = plx_malloc(n);
        int ready = 0, ready_in = 0;
        MPI_Request rreq, sreq;
        MPI_Status st;

        for (int variant = 0; variant < 2; variant++) { /* Rsend, then Irsend */
            plx_fill(s, n, seed_of(rank, peer, n, 60 + variant));
            memset(r, 0, n);
            PLX_CHECK_MPI(MPI_Irecv(r, (int)n, MPI_BYTE, peer, 9, comm, &rreq));
            if (peer != rank) {
                /* Tell the peer my receive is posted; wait until its receive is. */
                PLX_CHECK_MPI(MPI_Sendrecv(&ready, 1, MPI_INT, peer, 10, &ready_in, 1, MPI_INT, peer, 10, comm,
                                           MPI_STATUS_IGNORE));
            }
            if (variant == 0) {
                PLX_CHECK_MPI(MPI_Rsend(s, (int)n, MPI_BYTE, peer, 9, comm));
            } else {
                PLX_CHECK_MPI(MPI_Irsend(s, (int)n, MPI_BYTE, peer, 9, comm, &sreq));
                PLX_CHECK_MPI(MPI_Wait(&sreq, MPI_STATUS_IGNORE));
            }
            PLX_CHECK_MPI(MPI_Wait(&rreq, &st));
            PLX_CHECK_STATUS(st, peer, 9, n);
            PLX_CHECK_PATTERN(r, n, seed_of(peer, rank, n, 60 + variant), variant ? "Irsend data" : "Rsend data");
        }
        free(s);
        free(r);
    }

    /* Synchronised by a Barrier: everyone pre-posts from the left, then sends right. */
    {
        int right = (rank + 1) % size, left = (rank + size - 1) % size, in[2] = {-1, -1}, out[2] = {rank, 99};
        MPI_Request req;
        PLX_CHECK_MPI(MPI_Irecv(in, 2, MPI_INT, left, 11, comm, &req));
        PLX_CHECK_MPI(MPI_Barrier(comm));
        PLX_CHECK_MPI(MPI_Rsend(out, 2, MPI_INT, right, 11, comm));
        PLX_CHECK_MPI(MPI_Wait(&req, MPI_STATUS_IGNORE));
        PLX_CHECK(in[0] == left && in[1] == 99, "Rsend after Barrier: data from left %d", left);
    }
}

static void test_sendrecv(MPI_Comm comm)
{
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    size_t maxn = 100 * (size_t)size + 1;
    unsigned char *s = plx_malloc(maxn), *r = plx_malloc(maxn);
    size_t n = 100 * (size_t)rank + 1, ln = 100 * (size_t)left + 1;
    MPI_Status st;

    /* Different sizes in the two directions, receive with ANY_TAG. */
    plx_fill(s, n, seed_of(rank, right, n, 70));
    PLX_CHECK_MPI(MPI_Sendrecv(s, (int)n, MPI_BYTE, right, 1000 + rank, r, (int)maxn, MPI_BYTE, left, MPI_ANY_TAG,
                               comm, &st));
    PLX_CHECK_STATUS(st, left, 1000 + left, ln);
    PLX_CHECK_PATTERN(r, ln, seed_of(left, rank, ln, 70), "Sendrecv ring");
    free(s);
    free(r);

    /* Large, both directions at once (would deadlock as two blocking Sends). */
    {
        size_t big = 1 << 20;
        s = plx_malloc(big);
        r = plx_malloc(big);
        plx_fill(s, big, seed_of(rank, peer, big, 71));
        PLX_CHECK_MPI(MPI_Sendrecv(s, (int)big, MPI_BYTE, peer, 12, r, (int)big, MPI_BYTE, peer, 12, comm, &st));
        PLX_CHECK_STATUS(st, peer, 12, big);
        PLX_CHECK_PATTERN(r, big, seed_of(peer, rank, big, 71), "Sendrecv 1 MiB with pair");
        free(s);
        free(r);
    }

    /* Sendrecv_replace: the buffer ends up holding the left neighbour's data. */
    {
        static const size_t rs[] = {4, 4000, 1 << 20};
        for (int k = 0; k < 3; k++) {
            unsigned char *b = plx_malloc(rs[k]);
            plx_fill(b, rs[k], seed_of(rank, 0, rs[k], 72));
            PLX_CHECK_MPI(MPI_Sendrecv_replace(b, (int)(rs[k] / 4), MPI_INT, right, 13, left, 13, comm, &st));
            PLX_CHECK_STATUS(st, left, 13, rs[k]);
            PLX_CHECK_PATTERN(b, rs[k], seed_of(left, 0, rs[k], 72), "Sendrecv_replace");
            free(b);
        }
    }
}

int main(int argc, char **argv)
{
    MPI_Comm comm;

    plx_test_init(&argc, &argv, "modes");
    rank = plx_test_state()->rank;
    size = plx_test_state()->size;
    peer = plx_pair_peer(rank, size);
    PLX_CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &comm));

    test_ssend(comm);
    test_bsend(comm);
    test_rsend(comm);
    test_sendrecv(comm);

    PLX_CHECK_MPI(MPI_Comm_free(&comm));
    return plx_test_finish();
}
