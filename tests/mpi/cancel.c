/*
 * cancel.c - MPI_Cancel on receives and sends.
 *
 * A posted receive that nothing matches is cancelled (Test_cancelled true) and a
 * later matching send goes to the next receive instead. Cancelling a send that
 * was never received may succeed or not (MPI-3.1 3.8.4), but the outcome must be
 * consistent: if cancelled, the message is never received; if not, it is received
 * intact (a receive for it is posted before the Wait, see below). Cancelling
 * a completed request has no effect; a cancelled persistent receive can be
 * started again. Pairs are rank ^ 1 (or self); handshakes use their own comm.
 */
#include "plx_test.h"

static int rank, size, peer;
static MPI_Comm comm, ctrl;

static int cancelled(const MPI_Status *st)
{
    int c = -1;
    PLX_CHECK_MPI(MPI_Test_cancelled(st, &c));
    return c;
}

static void handshake(int tag)
{
    int x = rank, y = -1;
    if (peer != rank)
        PLX_CHECK_MPI(MPI_Sendrecv(&x, 1, MPI_INT, peer, tag, &y, 1, MPI_INT, peer, tag, ctrl, MPI_STATUS_IGNORE));
}

static void test_cancel_recv(void)
{
    int buf = -1, out = 1000 + rank, flag = 0;
    MPI_Request req, sreq;
    MPI_Status st;

    /* Specific source, completed by Wait. */
    PLX_CHECK_MPI(MPI_Irecv(&buf, 1, MPI_INT, peer, 1, comm, &req));
    PLX_CHECK_MPI(MPI_Cancel(&req));
    PLX_CHECK_MPI(MPI_Wait(&req, &st));
    PLX_CHECK(req == MPI_REQUEST_NULL, "Wait frees a cancelled receive");
    PLX_CHECK_EQ(cancelled(&st), 1, "unmatched receive is cancelled");
    PLX_CHECK_EQ(buf, -1, "cancelled receive leaves the buffer");

    /* Wildcard source, completed by Test. */
    PLX_CHECK_MPI(MPI_Irecv(&buf, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, comm, &req));
    PLX_CHECK_MPI(MPI_Cancel(&req));
    for (int it = 0; !flag; it++) {
        PLX_CHECK_MPI(MPI_Test(&req, &flag, &st));
        plx_pause(it);
    }
    PLX_CHECK_EQ(cancelled(&st), 1, "unmatched wildcard receive is cancelled");

    /* The peer sends only now; a new receive gets the message. */
    handshake(2);
    PLX_CHECK_MPI(MPI_Isend(&out, 1, MPI_INT, peer, 1, comm, &sreq));
    PLX_CHECK_MPI(MPI_Recv(&buf, 1, MPI_INT, peer, 1, comm, &st));
    PLX_CHECK_EQ(buf, 1000 + peer, "message after a cancelled receive goes to the next receive");
    PLX_CHECK_EQ(cancelled(&st), 0, "normal receive is not cancelled");
    PLX_CHECK_STATUS(st, peer, 1, sizeof(int));
    PLX_CHECK_MPI(MPI_Wait(&sreq, MPI_STATUS_IGNORE));
}

static void test_cancel_send(void)
{
    static const size_t sizes[] = {8, 1 << 20};
    static const char sentinel[] = "sentinel";
    /* MPI-3.1 3.8.4 makes Wait after Cancel local, but MPICH 4.0 and Open MPI 4.1
     * cannot cancel sends and block there until the message is received (MPI-4.0
     * deprecates cancelling sends). So the receive is posted before the sender waits,
     * and the test checks only that the outcome is consistent. */

    for (int k = 0; k < 2; k++) {
        size_t n = sizes[k];
        size_t rn = n < sizeof sentinel ? sizeof sentinel : n;
        unsigned char *s = plx_malloc(n), *r = plx_malloc(rn);
        MPI_Request req, rreq;
        MPI_Status st;
        int c, peer_c = -1, cnt = -1;

        plx_fill(s, n, plx_seed((uint32_t)rank, (uint32_t)n, 0, 4));
        memset(r, 0, rn);
        PLX_CHECK_MPI(MPI_Isend(s, (int)n, MPI_BYTE, peer, 3, comm, &req));
        PLX_CHECK_MPI(MPI_Cancel(&req));
        handshake(5); /* both sends are marked for cancellation */
        PLX_CHECK_MPI(MPI_Irecv(r, (int)rn, MPI_BYTE, peer, 3, comm, &rreq));
        PLX_CHECK_MPI(MPI_Wait(&req, &st));
        c = cancelled(&st);
        PLX_CHECK(c == 0 || c == 1, "Test_cancelled is a boolean (%d)", c);
        /* Tell the peer the outcome, then send a sentinel with the same envelope. */
        if (peer != rank)
            PLX_CHECK_MPI(MPI_Sendrecv(&c, 1, MPI_INT, peer, 4, &peer_c, 1, MPI_INT, peer, 4, ctrl,
                                       MPI_STATUS_IGNORE));
        else
            peer_c = c;
        PLX_CHECK_MPI(MPI_Isend(sentinel, sizeof sentinel, MPI_CHAR, peer, 3, comm, &req));

        /* The first message on the envelope: the original if not cancelled, else the sentinel. */
        PLX_CHECK_MPI(MPI_Wait(&rreq, &st));
        if (!peer_c) {
            PLX_CHECK_STATUS(st, peer, 3, n);
            PLX_CHECK_PATTERN(r, n, plx_seed((uint32_t)peer, (uint32_t)n, 0, 4), "send whose cancel failed");
            memset(r, 0, rn);
            PLX_CHECK_MPI(MPI_Recv(r, (int)rn, MPI_BYTE, peer, 3, comm, &st));
        }
        MPI_Get_count(&st, MPI_BYTE, &cnt);
        PLX_CHECK(cnt == (int)sizeof sentinel && memcmp(r, sentinel, sizeof sentinel) == 0,
                  "%s %zu-byte send: the next message on its envelope is the sentinel (got %d bytes)",
                  peer_c ? "cancelled" : "uncancelled", n, cnt);
        PLX_CHECK_MPI(MPI_Wait(&req, MPI_STATUS_IGNORE));
        free(s);
        free(r);
    }
}

static void test_cancel_completed(void)
{
    int in = -1, out = 77, flag = 0;
    MPI_Request rreq, sreq;
    MPI_Status st;

    PLX_CHECK_MPI(MPI_Irecv(&in, 1, MPI_INT, 0, 5, MPI_COMM_SELF, &rreq));
    PLX_CHECK_MPI(MPI_Isend(&out, 1, MPI_INT, 0, 5, MPI_COMM_SELF, &sreq));
    for (int it = 0; !flag; it++) {
        PLX_CHECK_MPI(MPI_Request_get_status(rreq, &flag, MPI_STATUS_IGNORE));
        plx_pause(it);
    }
    flag = 0;
    for (int it = 0; !flag; it++) {
        PLX_CHECK_MPI(MPI_Request_get_status(sreq, &flag, MPI_STATUS_IGNORE));
        plx_pause(it);
    }
    PLX_CHECK_MPI(MPI_Cancel(&rreq));
    PLX_CHECK_MPI(MPI_Cancel(&sreq));
    PLX_CHECK_MPI(MPI_Wait(&rreq, &st));
    PLX_CHECK_EQ(cancelled(&st), 0, "cancel of a completed receive has no effect");
    PLX_CHECK_STATUS(st, 0, 5, sizeof(int));
    PLX_CHECK_EQ(in, 77, "completed-then-cancelled receive keeps its data");
    PLX_CHECK_MPI(MPI_Wait(&sreq, &st));
    PLX_CHECK_EQ(cancelled(&st), 0, "cancel of a completed send has no effect");
}

static void test_cancel_persistent(void)
{
    int in = -1, out = 500 + rank;
    MPI_Request req, sreq;
    MPI_Status st;

    PLX_CHECK_MPI(MPI_Recv_init(&in, 1, MPI_INT, peer, 6, comm, &req));
    PLX_CHECK_MPI(MPI_Start(&req));
    PLX_CHECK_MPI(MPI_Cancel(&req));
    PLX_CHECK_MPI(MPI_Wait(&req, &st));
    PLX_CHECK_EQ(cancelled(&st), 1, "started persistent receive is cancelled");
    PLX_CHECK(req != MPI_REQUEST_NULL, "cancelled persistent request stays allocated");

    handshake(7);
    PLX_CHECK_MPI(MPI_Start(&req));
    PLX_CHECK_MPI(MPI_Isend(&out, 1, MPI_INT, peer, 6, comm, &sreq));
    PLX_CHECK_MPI(MPI_Wait(&req, &st));
    PLX_CHECK_EQ(cancelled(&st), 0, "restarted persistent receive completes normally");
    PLX_CHECK_EQ(in, 500 + peer, "restarted persistent receive data");
    PLX_CHECK_MPI(MPI_Wait(&sreq, MPI_STATUS_IGNORE));
    PLX_CHECK_MPI(MPI_Request_free(&req));
}

/* Status_set_cancelled round trip. */
static void test_status_set(void)
{
    MPI_Status st;
    memset(&st, 0, sizeof st);
    PLX_CHECK_MPI(MPI_Status_set_cancelled(&st, 1));
    PLX_CHECK_EQ(cancelled(&st), 1, "Status_set_cancelled(1)");
    PLX_CHECK_MPI(MPI_Status_set_cancelled(&st, 0));
    PLX_CHECK_EQ(cancelled(&st), 0, "Status_set_cancelled(0)");
}

int main(int argc, char **argv)
{
    plx_test_init(&argc, &argv, "cancel");
    rank = plx_test_state()->rank;
    size = plx_test_state()->size;
    peer = plx_pair_peer(rank, size);
    PLX_CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &comm));
    PLX_CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &ctrl));

    test_cancel_recv();
    test_cancel_send();
    test_cancel_completed();
    test_cancel_persistent();
    test_status_set();

    /* Nothing left behind on the data communicator. */
    {
        int flag = -1;
        handshake(8);
        PLX_CHECK_MPI(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, comm, &flag, MPI_STATUS_IGNORE));
        PLX_CHECK_EQ(flag, 0, "no message left over");
    }
    PLX_CHECK_MPI(MPI_Comm_free(&ctrl));
    PLX_CHECK_MPI(MPI_Comm_free(&comm));
    return plx_test_finish();
}
