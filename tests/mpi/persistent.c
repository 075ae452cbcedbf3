/*
 * persistent.c - persistent requests in every mode.
 *
 * Send_init/Recv_init started again and again (Start and Startall) with the send
 * buffer refilled each round; wildcard Recv_init reused across tags; Ssend_init
 * not completing before the receive is posted; Bsend_init completing locally;
 * Rsend_init to a pre-posted receive; inactive requests (not null, Wait/Test
 * return an empty status at once); Request_free on inactive and active requests.
 * Pairs are rank ^ 1 (or self).
 */
#include "plx_test.h"

static int rank, size, peer;
static MPI_Comm comm;

enum { ROUNDS = 5 };

static uint32_t seed_of(int from, int to, size_t n, int round)
{
    return plx_seed((uint32_t)from, (uint32_t)to, (uint32_t)n, (uint32_t)round + 1000);
}

static void check_inactive(MPI_Request *req, const char *what)
{
    MPI_Status st;
    int flag = -1, n = -1;

    PLX_CHECK(*req != MPI_REQUEST_NULL, "%s: completed persistent request stays allocated", what);
    memset(&st, 0x55, sizeof st);
    PLX_CHECK_MPI(MPI_Wait(req, &st));
    PLX_CHECK(*req != MPI_REQUEST_NULL, "%s: Wait on an inactive request keeps it", what);
    PLX_CHECK(st.MPI_SOURCE == MPI_ANY_SOURCE && st.MPI_TAG == MPI_ANY_TAG,
              "%s: Wait on an inactive request gives an empty status (source %d, tag %d)", what, st.MPI_SOURCE,
              st.MPI_TAG);
    MPI_Get_count(&st, MPI_BYTE, &n);
    PLX_CHECK_EQ(n, 0, "empty status count of an inactive request");
    PLX_CHECK_MPI(MPI_Test(req, &flag, &st));
    PLX_CHECK_EQ(flag, 1, "Test on an inactive request");
}

static void test_standard(void)
{
    static const size_t sizes[] = {8, 65536, 1 << 20};

    for (int k = 0; k < 3; k++) {
        size_t n = sizes[k];
        unsigned char *s = plx_malloc(n), *r = plx_malloc(n);
        MPI_Request reqs[2];
        MPI_Status sts[2];

        PLX_CHECK_MPI(MPI_Recv_init(r, (int)n, MPI_BYTE, peer, 1, comm, &reqs[0]));
        PLX_CHECK_MPI(MPI_Send_init(s, (int)n, MPI_BYTE, peer, 1, comm, &reqs[1]));
        for (int round = 0; round < ROUNDS; round++) {
            plx_fill(s, n, seed_of(rank, peer, n, round));
            memset(r, 0, n);
            if (round % 2) {
                PLX_CHECK_MPI(MPI_Startall(2, reqs));
            } else {
                PLX_CHECK_MPI(MPI_Start(&reqs[0]));
                PLX_CHECK_MPI(MPI_Start(&reqs[1]));
            }
            if (round == 2) {
                int idx = -1;
                /* Completion through Waitany/Wait instead of Waitall. */
                PLX_CHECK_MPI(MPI_Waitany(2, reqs, &idx, &sts[0]));
                PLX_CHECK(idx == 0 || idx == 1, "Waitany index on persistent requests");
                PLX_CHECK_MPI(MPI_Wait(&reqs[1 - idx], &sts[1]));
                if (idx == 1)
                    sts[0] = sts[1];
            } else {
                PLX_CHECK_MPI(MPI_Waitall(2, reqs, sts));
            }
            PLX_CHECK_STATUS(sts[0], peer, 1, n);
            PLX_CHECK_PATTERN(r, n, seed_of(peer, rank, n, round), "persistent send/recv, refilled each round");
            check_inactive(&reqs[0], "Recv_init");
            check_inactive(&reqs[1], "Send_init");
        }
        PLX_CHECK_MPI(MPI_Request_free(&reqs[0]));
        PLX_CHECK_MPI(MPI_Request_free(&reqs[1]));
        PLX_CHECK(reqs[0] == MPI_REQUEST_NULL && reqs[1] == MPI_REQUEST_NULL,
                  "Request_free of inactive persistent requests");
        free(s);
        free(r);
    }
}

/* One wildcard persistent receive, reused for messages with different tags. */
static void test_wildcard_recv(void)
{
    int in[2] = {-1, -1}, out[2];
    MPI_Request rreq, sreq;
    MPI_Status st;
    MPI_Comm wc; /* only my pair peer sends to me on it */

    PLX_CHECK_MPI(MPI_Comm_dup(comm, &wc));
    PLX_CHECK_MPI(MPI_Recv_init(in, 2, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, wc, &rreq));
    for (int round = 0; round < ROUNDS; round++) {
        out[0] = rank;
        out[1] = round;
        PLX_CHECK_MPI(MPI_Start(&rreq));
        PLX_CHECK_MPI(MPI_Isend(out, 2, MPI_INT, peer, 100 + round, wc, &sreq));
        PLX_CHECK_MPI(MPI_Wait(&rreq, &st));
        PLX_CHECK_MPI(MPI_Wait(&sreq, MPI_STATUS_IGNORE));
        PLX_CHECK_STATUS(st, peer, 100 + round, 2 * sizeof(int));
        PLX_CHECK(in[0] == peer && in[1] == round, "wildcard Recv_init round %d data", round);
    }
    PLX_CHECK_MPI(MPI_Request_free(&rreq));
    PLX_CHECK_MPI(MPI_Comm_free(&wc));
}

static void test_ssend_init(void)
{
    size_t n = 4096;
    unsigned char *s = plx_malloc(n), *r = plx_malloc(n);
    MPI_Request sreq;
    int go = 1, go_in = 0, flag;

    PLX_CHECK_MPI(MPI_Ssend_init(s, (int)n, MPI_BYTE, peer, 2, comm, &sreq));
    for (int round = 0; round < 3; round++) {
        plx_fill(s, n, seed_of(rank, peer, n, 10 + round));
        PLX_CHECK_MPI(MPI_Start(&sreq));
        /* My peer posts its receive only after my `go`, sent after these tests. */
        for (int i = 0; i < 3; i++) {
            PLX_CHECK_MPI(MPI_Test(&sreq, &flag, MPI_STATUS_IGNORE));
            PLX_CHECK_EQ(flag, 0, "Ssend_init request completed before the receive was posted");
        }
        if (peer != rank)
            PLX_CHECK_MPI(MPI_Sendrecv(&go, 1, MPI_INT, peer, 3, &go_in, 1, MPI_INT, peer, 3, comm,
                                       MPI_STATUS_IGNORE));
        PLX_CHECK_MPI(MPI_Recv(r, (int)n, MPI_BYTE, peer, 2, comm, MPI_STATUS_IGNORE));
        PLX_CHECK_MPI(MPI_Wait(&sreq, MPI_STATUS_IGNORE));
        PLX_CHECK_PATTERN(r, n, seed_of(peer, rank, n, 10 + round), "Ssend_init data");
    }
    PLX_CHECK_MPI(MPI_Request_free(&sreq));
    free(s);
    free(r);
}

static void test_bsend_init(void)
{
    size_t n = 20000;
    int bufsize = 3 * ((int)n + MPI_BSEND_OVERHEAD), go = 1, go_in = 0, dsize = -1;
    char *attach = plx_malloc((size_t)bufsize);
    unsigned char *s = plx_malloc(n), *r = plx_malloc(n);
    MPI_Request sreq;
    void *dptr = NULL;

    PLX_CHECK_MPI(MPI_Buffer_attach(attach, bufsize));
    PLX_CHECK_MPI(MPI_Bsend_init(s, (int)n, MPI_BYTE, peer, 4, comm, &sreq));
    /* Three buffered sends complete before the peer posts any receive. */
    for (int round = 0; round < 3; round++) {
        plx_fill(s, n, seed_of(rank, peer, n, 20 + round));
        PLX_CHECK_MPI(MPI_Start(&sreq));
        PLX_CHECK_MPI(MPI_Wait(&sreq, MPI_STATUS_IGNORE));
    }
    memset(s, 0xCC, n);
    if (peer != rank)
        PLX_CHECK_MPI(MPI_Sendrecv(&go, 1, MPI_INT, peer, 5, &go_in, 1, MPI_INT, peer, 5, comm, MPI_STATUS_IGNORE));
    for (int round = 0; round < 3; round++) {
        PLX_CHECK_MPI(MPI_Recv(r, (int)n, MPI_BYTE, peer, 4, comm, MPI_STATUS_IGNORE));
        PLX_CHECK_PATTERN(r, n, seed_of(peer, rank, n, 20 + round), "Bsend_init data, in order");
    }
    PLX_CHECK_MPI(MPI_Request_free(&sreq));
    PLX_CHECK_MPI(MPI_Buffer_detach(&dptr, &dsize));
    PLX_CHECK(dptr == (void *)attach && dsize == bufsize, "Buffer_detach after Bsend_init");
    free(attach);
    free(s);
    free(r);
}

static void test_rsend_init(void)
{
    size_t n = 100000;
    unsigned char *s = plx_malloc(n), *r = plx_malloc(n);
    MPI_Request sreq, rreq;
    MPI_Status st;
    int go = 1, go_in = 0;

    PLX_CHECK_MPI(MPI_Rsend_init(s, (int)n, MPI_BYTE, peer, 6, comm, &sreq));
    PLX_CHECK_MPI(MPI_Recv_init(r, (int)n, MPI_BYTE, peer, 6, comm, &rreq));
    for (int round = 0; round < 3; round++) {
        plx_fill(s, n, seed_of(rank, peer, n, 30 + round));
        PLX_CHECK_MPI(MPI_Start(&rreq));
        if (peer != rank) /* both receives are posted after this */
            PLX_CHECK_MPI(MPI_Sendrecv(&go, 1, MPI_INT, peer, 7, &go_in, 1, MPI_INT, peer, 7, comm,
                                       MPI_STATUS_IGNORE));
        PLX_CHECK_MPI(MPI_Start(&sreq));
        PLX_CHECK_MPI(MPI_Wait(&sreq, MPI_STATUS_IGNORE));
        PLX_CHECK_MPI(MPI_Wait(&rreq, &st));
        PLX_CHECK_STATUS(st, peer, 6, n);
        PLX_CHECK_PATTERN(r, n, seed_of(peer, rank, n, 30 + round), "Rsend_init data");
    }
    PLX_CHECK_MPI(MPI_Request_free(&sreq));
    PLX_CHECK_MPI(MPI_Request_free(&rreq));
    free(s);
    free(r);
}

/* Request_free on an active persistent send: the message still arrives. */
static void test_free_active(void)
{
    size_t n = 1 << 20;
    unsigned char *s = plx_malloc(n), *r = plx_malloc(n);
    MPI_Request sreq;
    MPI_Status st;
    int ack = 0, ack_in = 0;

    plx_fill(s, n, seed_of(rank, peer, n, 40));
    PLX_CHECK_MPI(MPI_Send_init(s, (int)n, MPI_BYTE, peer, 8, comm, &sreq));
    PLX_CHECK_MPI(MPI_Start(&sreq));
    PLX_CHECK_MPI(MPI_Request_free(&sreq));
    PLX_CHECK(sreq == MPI_REQUEST_NULL, "Request_free of an active persistent send");
    PLX_CHECK_MPI(MPI_Recv(r, (int)n, MPI_BYTE, peer, 8, comm, &st));
    PLX_CHECK_STATUS(st, peer, 8, n);
    PLX_CHECK_PATTERN(r, n, seed_of(peer, rank, n, 40), "message of a freed active persistent send");
    PLX_CHECK_MPI(MPI_Sendrecv(&ack, 1, MPI_INT, peer, 9, &ack_in, 1, MPI_INT, peer, 9, comm, MPI_STATUS_IGNORE));
    free(s);
    free(r);
}

/* Startall over a mixed array with many persistent requests to every rank. */
static void test_startall_many(void)
{
    int n = 2 * size, *in = plx_malloc(sizeof(int) * (size_t)size), *out = plx_malloc(sizeof(int) * (size_t)size);
    MPI_Request *reqs = plx_malloc(sizeof(MPI_Request) * (size_t)n);
    MPI_Status *sts = plx_malloc(sizeof(MPI_Status) * (size_t)n);

    for (int p = 0; p < size; p++) {
        PLX_CHECK_MPI(MPI_Recv_init(&in[p], 1, MPI_INT, p, 11, comm, &reqs[p]));
        PLX_CHECK_MPI(MPI_Send_init(&out[p], 1, MPI_INT, p, 11, comm, &reqs[size + p]));
    }
    for (int round = 0; round < ROUNDS; round++) {
        for (int p = 0; p < size; p++) {
            out[p] = rank * 10000 + p * 100 + round;
            in[p] = -1;
        }
        PLX_CHECK_MPI(MPI_Startall(n, reqs));
        PLX_CHECK_MPI(MPI_Waitall(n, reqs, sts));
        for (int p = 0; p < size; p++) {
            PLX_CHECK_STATUS(sts[p], p, 11, sizeof(int));
            PLX_CHECK_EQ(in[p], p * 10000 + rank * 100 + round, "Startall round data");
        }
    }
    for (int i = 0; i < n; i++)
        PLX_CHECK_MPI(MPI_Request_free(&reqs[i]));
    free(in);
    free(out);
    free(reqs);
    free(sts);
}

int main(int argc, char **argv)
{
    plx_test_init(&argc, &argv, "persistent");
    rank = plx_test_state()->rank;
    size = plx_test_state()->size;
    peer = plx_pair_peer(rank, size);
    PLX_CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &comm));

    test_standard();
    test_wildcard_recv();
    test_ssend_init();
    test_bsend_init();
    test_rsend_init();
    test_free_active();
    test_startall_many();

    PLX_CHECK_MPI(MPI_Comm_free(&comm));
    return plx_test_finish();
}
