/*
 * probe.c - Probe, Iprobe and matched probes (Mprobe, Improbe, Mrecv, Imrecv).
 *
 * Wildcard probes report source, tag and size; the message is then received with
 * exactly that size. Probe does not consume: probing twice sees the same message.
 * A matched probe does: after Mprobe takes message 1, Probe/Iprobe and a wildcard
 * receive see message 2, which is what makes Mprobe safe where two threads'
 * Probe+Recv pairs would race for one message. MPI_PROC_NULL gives
 * MPI_MESSAGE_NO_PROC and empty-status answers.
 */
#include "plx_test.h"

static int rank, size, right, left;

static size_t msg_size(int from, int k)
{
    static const size_t choices[] = {0, 1, 7, 64, 4095, 4096, 65537, 300000};
    return choices[(unsigned)(from * 3 + k * 5) % 8];
}

static void sync_all(void)
{
    PLX_CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
}

static void test_probe_wildcards(MPI_Comm comm)
{
    enum { K = 10 };
    unsigned char *s[K];
    MPI_Request sreq[K];
    int flag = -1;
    MPI_Status st;

    /* Nothing has been sent on this communicator yet. */
    PLX_CHECK_MPI(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, comm, &flag, &st));
    PLX_CHECK_EQ(flag, 0, "Iprobe on a communicator nobody has sent on");
    sync_all();

    for (int k = 0; k < K; k++) {
        size_t n = msg_size(rank, k);
        s[k] = plx_malloc(n);
        plx_fill(s[k], n, plx_seed((uint32_t)rank, (uint32_t)k, (uint32_t)n, 1));
        PLX_CHECK_MPI(MPI_Isend(s[k], (int)n, MPI_BYTE, right, 3 * k + 1, comm, &sreq[k]));
    }
    for (int k = 0; k < K; k++) {
        size_t expect = msg_size(left, k);
        int n = -1, n2 = -1, nint = -1;
        MPI_Status st2;
        unsigned char *r;

        if (k % 2) {
            PLX_CHECK_MPI(MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG, comm, &st));
        } else {
            flag = 0;
            for (int it = 0; !flag; it++) {
                PLX_CHECK_MPI(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, comm, &flag, &st));
                plx_pause(it);
            }
        }
        PLX_CHECK_EQ(st.MPI_SOURCE, left, "probe: source");
        PLX_CHECK_EQ(st.MPI_TAG, 3 * k + 1, "probe: tag in send order");
        MPI_Get_count(&st, MPI_BYTE, &n);
        PLX_CHECK_EQ(n, expect, "probe: Get_count(MPI_BYTE)");
        MPI_Get_count(&st, MPI_INT, &nint);
        PLX_CHECK_EQ(nint, expect % 4 ? MPI_UNDEFINED : (int)(expect / 4), "probe: Get_count(MPI_INT)");

        /* Probing again (specific source and tag) sees the same message. */
        PLX_CHECK_MPI(MPI_Probe(st.MPI_SOURCE, st.MPI_TAG, comm, &st2));
        MPI_Get_count(&st2, MPI_BYTE, &n2);
        PLX_CHECK(st2.MPI_SOURCE == left && st2.MPI_TAG == 3 * k + 1 && n2 == n, "second probe sees the same message");

        r = plx_malloc((size_t)n);
        PLX_CHECK_MPI(MPI_Recv(r, n, MPI_BYTE, st.MPI_SOURCE, st.MPI_TAG, comm, &st2));
        PLX_CHECK_STATUS(st2, left, 3 * k + 1, expect);
        PLX_CHECK_PATTERN(r, expect, plx_seed((uint32_t)left, (uint32_t)k, (uint32_t)expect, 1),
                          "receive with the probed size");
        free(r);
    }
    PLX_CHECK_MPI(MPI_Waitall(K, sreq, MPI_STATUSES_IGNORE));
    for (int k = 0; k < K; k++)
        free(s[k]);
}

/* Two messages with the same envelope: Mprobe takes the first out of matching. */
static void test_mprobe_removes(MPI_Comm comm)
{
    const size_t n1 = 100, n2 = 300000;
    unsigned char *s1 = plx_malloc(n1), *s2 = plx_malloc(n2), *r1 = plx_malloc(n1), *r2 = plx_malloc(n2);
    MPI_Request sreq[2], rreq;
    MPI_Message msg = MPI_MESSAGE_NULL;
    MPI_Status st;
    int n = -1, flag = 0;

    plx_fill(s1, n1, plx_seed((uint32_t)rank, 1, 0, 2));
    plx_fill(s2, n2, plx_seed((uint32_t)rank, 2, 0, 2));
    PLX_CHECK_MPI(MPI_Isend(s1, (int)n1, MPI_BYTE, right, 7, comm, &sreq[0]));
    PLX_CHECK_MPI(MPI_Isend(s2, (int)n2, MPI_BYTE, right, 7, comm, &sreq[1]));

    PLX_CHECK_MPI(MPI_Probe(MPI_ANY_SOURCE, 7, comm, &st));
    MPI_Get_count(&st, MPI_BYTE, &n);
    PLX_CHECK_EQ(n, n1, "Probe sees the first message");
    PLX_CHECK_MPI(MPI_Mprobe(MPI_ANY_SOURCE, 7, comm, &msg, &st));
    PLX_CHECK(msg != MPI_MESSAGE_NULL && msg != MPI_MESSAGE_NO_PROC, "Mprobe returns a message handle");
    MPI_Get_count(&st, MPI_BYTE, &n);
    PLX_CHECK_EQ(n, n1, "Mprobe takes the first message");
    PLX_CHECK_STATUS(st, left, 7, n1);

    /* The first message is gone from matching: probes now see the second. */
    PLX_CHECK_MPI(MPI_Probe(left, 7, comm, &st));
    MPI_Get_count(&st, MPI_BYTE, &n);
    PLX_CHECK_EQ(n, n2, "after Mprobe, Probe sees the second message");
    for (int it = 0; !flag; it++) {
        PLX_CHECK_MPI(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, comm, &flag, &st));
        plx_pause(it);
    }
    MPI_Get_count(&st, MPI_BYTE, &n);
    PLX_CHECK_EQ(n, n2, "after Mprobe, Iprobe sees the second message");

    /* A wildcard receive posted now gets the second message, not the probed one. */
    PLX_CHECK_MPI(MPI_Irecv(r2, (int)n2, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, comm, &rreq));
    PLX_CHECK_MPI(MPI_Wait(&rreq, &st));
    PLX_CHECK_STATUS(st, left, 7, n2);
    PLX_CHECK_PATTERN(r2, n2, plx_seed((uint32_t)left, 2, 0, 2), "wildcard receive after Mprobe");

    PLX_CHECK_MPI(MPI_Mrecv(r1, (int)n1, MPI_BYTE, &msg, &st));
    PLX_CHECK(msg == MPI_MESSAGE_NULL, "Mrecv sets MPI_MESSAGE_NULL");
    PLX_CHECK_STATUS(st, left, 7, n1);
    PLX_CHECK_PATTERN(r1, n1, plx_seed((uint32_t)left, 1, 0, 2), "Mrecv of the probed message");
    PLX_CHECK_MPI(MPI_Waitall(2, sreq, MPI_STATUSES_IGNORE));
    free(s1);
    free(s2);
    free(r1);
    free(r2);
}

static void test_improbe(MPI_Comm comm)
{
    static const size_t sizes[] = {0, 33, 1 << 20};
    MPI_Message msg;
    MPI_Status st;
    int flag = -1;

    /* Nothing sent yet on this tag by anyone. */
    PLX_CHECK_MPI(MPI_Improbe(MPI_ANY_SOURCE, 20, comm, &flag, &msg, &st));
    PLX_CHECK_EQ(flag, 0, "Improbe before anything was sent");
    sync_all();

    for (int k = 0; k < 3; k++) {
        size_t n = sizes[k];
        unsigned char *s = plx_malloc(n), *r = plx_malloc(n);
        MPI_Request sreq, rreq;
        int cnt = -1;

        plx_fill(s, n, plx_seed((uint32_t)rank, (uint32_t)k, 0, 3));
        PLX_CHECK_MPI(MPI_Isend(s, (int)n, MPI_BYTE, right, 20, comm, &sreq));
        flag = 0;
        for (int it = 0; !flag; it++) {
            PLX_CHECK_MPI(MPI_Improbe(MPI_ANY_SOURCE, 20, comm, &flag, &msg, &st));
            plx_pause(it);
        }
        PLX_CHECK_STATUS(st, left, 20, n);
        MPI_Get_count(&st, MPI_BYTE, &cnt);
        memset(r, 0, n);
        PLX_CHECK_MPI(MPI_Imrecv(r, cnt, MPI_BYTE, &msg, &rreq));
        PLX_CHECK(msg == MPI_MESSAGE_NULL, "Imrecv sets MPI_MESSAGE_NULL");
        PLX_CHECK_MPI(MPI_Wait(&rreq, &st));
        PLX_CHECK_STATUS(st, left, 20, n);
        PLX_CHECK_PATTERN(r, n, plx_seed((uint32_t)left, (uint32_t)k, 0, 3), "Improbe + Imrecv");
        PLX_CHECK_MPI(MPI_Wait(&sreq, MPI_STATUS_IGNORE));
        free(s);
        free(r);
    }

    /* Mprobe with a specific source and tag, many messages outstanding. */
    {
        enum { NMSG = 6 };
        int out[NMSG], in = -1;
        MPI_Request sreq[NMSG];
        MPI_Message msgs[NMSG];
        for (int i = 0; i < NMSG; i++) {
            out[i] = rank * 100 + i;
            PLX_CHECK_MPI(MPI_Isend(&out[i], 1, MPI_INT, right, 21, comm, &sreq[i]));
        }
        /* Take all six out of matching first, then receive them in reverse. */
        for (int i = 0; i < NMSG; i++)
            PLX_CHECK_MPI(MPI_Mprobe(left, 21, comm, &msgs[i], &st));
        for (int i = NMSG - 1; i >= 0; i--) {
            PLX_CHECK_MPI(MPI_Mrecv(&in, 1, MPI_INT, &msgs[i], &st));
            PLX_CHECK_EQ(in, left * 100 + i, "Mrecv in reverse order of Mprobe gets each probed message");
        }
        PLX_CHECK_MPI(MPI_Waitall(NMSG, sreq, MPI_STATUSES_IGNORE));
        PLX_CHECK_MPI(MPI_Iprobe(MPI_ANY_SOURCE, 21, comm, &flag, &st));
        PLX_CHECK_EQ(flag, 0, "no message left after Mrecv of all");
    }
}

static void test_proc_null(MPI_Comm comm)
{
    MPI_Message msg = MPI_MESSAGE_NULL;
    MPI_Status st;
    MPI_Request req;
    int buf[2] = {5, 5}, flag = -1;

    memset(&st, 0x55, sizeof st);
    PLX_CHECK_MPI(MPI_Probe(MPI_PROC_NULL, 3, comm, &st));
    PLX_CHECK_EMPTY_STATUS(st, MPI_PROC_NULL);
    memset(&st, 0x55, sizeof st);
    PLX_CHECK_MPI(MPI_Iprobe(MPI_PROC_NULL, MPI_ANY_TAG, comm, &flag, &st));
    PLX_CHECK_EQ(flag, 1, "Iprobe(MPI_PROC_NULL) flag");
    PLX_CHECK_EMPTY_STATUS(st, MPI_PROC_NULL);

    memset(&st, 0x55, sizeof st);
    PLX_CHECK_MPI(MPI_Mprobe(MPI_PROC_NULL, 3, comm, &msg, &st));
    PLX_CHECK(msg == MPI_MESSAGE_NO_PROC, "Mprobe(MPI_PROC_NULL) gives MPI_MESSAGE_NO_PROC");
    PLX_CHECK_EMPTY_STATUS(st, MPI_PROC_NULL);
    memset(&st, 0x55, sizeof st);
    PLX_CHECK_MPI(MPI_Mrecv(buf, 2, MPI_INT, &msg, &st));
    PLX_CHECK(msg == MPI_MESSAGE_NULL, "Mrecv(MPI_MESSAGE_NO_PROC) sets MPI_MESSAGE_NULL");
    PLX_CHECK_EMPTY_STATUS(st, MPI_PROC_NULL);
    PLX_CHECK(buf[0] == 5 && buf[1] == 5, "Mrecv(MPI_MESSAGE_NO_PROC) leaves the buffer");

    flag = -1;
    PLX_CHECK_MPI(MPI_Improbe(MPI_PROC_NULL, MPI_ANY_TAG, comm, &flag, &msg, &st));
    PLX_CHECK_EQ(flag, 1, "Improbe(MPI_PROC_NULL) flag");
    PLX_CHECK(msg == MPI_MESSAGE_NO_PROC, "Improbe(MPI_PROC_NULL) gives MPI_MESSAGE_NO_PROC");
    PLX_CHECK_MPI(MPI_Imrecv(buf, 2, MPI_INT, &msg, &req));
    PLX_CHECK(msg == MPI_MESSAGE_NULL, "Imrecv(MPI_MESSAGE_NO_PROC) sets MPI_MESSAGE_NULL");
    memset(&st, 0x55, sizeof st);
    PLX_CHECK_MPI(MPI_Wait(&req, &st));
    if (!plx_lib_is("MPICH Version:")) /* as with Irecv: MPICH 4.0 returns source 0, tag 0 */
        PLX_CHECK_EMPTY_STATUS(st, MPI_PROC_NULL);
    PLX_CHECK(buf[0] == 5 && buf[1] == 5, "Imrecv(MPI_MESSAGE_NO_PROC) leaves the buffer");
}

int main(int argc, char **argv)
{
    MPI_Comm c1, c2, c3;

    plx_test_init(&argc, &argv, "probe");
    rank = plx_test_state()->rank;
    size = plx_test_state()->size;
    right = (rank + 1) % size;
    left = (rank + size - 1) % size;
    /* One communicator per part: wildcard probes see only that part's traffic. */
    PLX_CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &c1));
    PLX_CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &c2));
    PLX_CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &c3));

    test_probe_wildcards(c1);
    test_mprobe_removes(c2);
    test_improbe(c3);
    test_proc_null(c1);

    PLX_CHECK_MPI(MPI_Comm_free(&c1));
    PLX_CHECK_MPI(MPI_Comm_free(&c2));
    PLX_CHECK_MPI(MPI_Comm_free(&c3));
    return plx_test_finish();
}
