/*
 * status_error.c - calls that complete one request leave status.MPI_ERROR as
 * the caller set it (MPI-3.1 3.2.5, 3.7.5): Recv, Sendrecv, Sendrecv_replace,
 * Wait, Test, Probe, Iprobe, Mprobe, Improbe, Mrecv, Imrecv + Wait,
 * Request_get_status, and MPI_PROC_NULL receives and probes. The
 * multiple-completion calls (Waitany/Testany/Waitsome/Testsome/Waitall/Testall)
 * set it only when they return MPI_ERR_IN_STATUS, and then for every status
 * they return. With --threads the same runs under MPI_THREAD_MULTIPLE with a
 * second thread also receiving.
 */
#include "plx_test.h"
#include <pthread.h>

#define SENTINEL 0x5eed
#define NTAGS 32

static int rank, size, peer;

static void sentinel(MPI_Status *st, int n)
{
    for (int i = 0; i < n; i++) {
        memset(&st[i], 0, sizeof st[i]);
        st[i].MPI_ERROR = SENTINEL;
    }
}

/* MPICH 4.0 itself writes MPI_SUCCESS in several of these calls (Sendrecv_replace,
 * Probe, ...): under MPICH a deviation is printed once per call, not failed */
static int mpich;
static void check_kept(const MPI_Status *st, const char *what, int line)
{
    static const char *seen[64];
    static int nseen;
    if (st->MPI_ERROR == SENTINEL) {
        plx_test_pass();
        return;
    }
    if (!mpich)
        plx_test_fail(__FILE__, line, "%s overwrote status.MPI_ERROR (got %d, expected %d)", what,
                      st->MPI_ERROR, SENTINEL);
    for (int i = 0; i < nseen; i++)
        if (seen[i] == what)
            return;
    if (nseen < 64)
        seen[nseen++] = what;
    printf("status_error: known MPICH deviation: %s writes status.MPI_ERROR\n", what);
}
#define CHECK_KEPT(st, what) check_kept(&(st), what, __LINE__)

/* posts one message of value v with tag t to the peer */
static void post(int v, int t, MPI_Request *sr, int *sbuf)
{
    *sbuf = v;
    PLX_CHECK_MPI(MPI_Isend(sbuf, 1, MPI_INT, peer, t, MPI_COMM_WORLD, sr));
}

static void single_completion(int base)
{
    MPI_Status st;
    MPI_Request sr, rr;
    MPI_Message msg;
    int sbuf, rbuf, flag, t = base;

    post(1, t, &sr, &sbuf);
    sentinel(&st, 1);
    PLX_CHECK_MPI(MPI_Recv(&rbuf, 1, MPI_INT, peer, t, MPI_COMM_WORLD, &st));
    CHECK_KEPT(st, "MPI_Recv");
    PLX_CHECK_STATUS(st, peer, t, 4);
    sentinel(&st, 1);
    PLX_CHECK_MPI(MPI_Wait(&sr, &st));
    CHECK_KEPT(st, "MPI_Wait (send)");

    t++;
    sentinel(&st, 1);
    sbuf = 2;
    PLX_CHECK_MPI(MPI_Sendrecv(&sbuf, 1, MPI_INT, peer, t, &rbuf, 1, MPI_INT, peer, t, MPI_COMM_WORLD, &st));
    CHECK_KEPT(st, "MPI_Sendrecv");
    PLX_CHECK_EQ(rbuf, 2, "MPI_Sendrecv data");

    t++;
    sentinel(&st, 1);
    rbuf = 3;
    PLX_CHECK_MPI(MPI_Sendrecv_replace(&rbuf, 1, MPI_INT, peer, t, peer, t, MPI_COMM_WORLD, &st));
    CHECK_KEPT(st, "MPI_Sendrecv_replace");

    t++;
    post(4, t, &sr, &sbuf);
    PLX_CHECK_MPI(MPI_Irecv(&rbuf, 1, MPI_INT, peer, t, MPI_COMM_WORLD, &rr));
    sentinel(&st, 1);
    PLX_CHECK_MPI(MPI_Wait(&rr, &st));
    CHECK_KEPT(st, "MPI_Wait (receive)");
    flag = 0;
    for (int i = 0; !flag; i++) {
        sentinel(&st, 1);
        PLX_CHECK_MPI(MPI_Test(&sr, &flag, &st));
        CHECK_KEPT(st, "MPI_Test");
        plx_pause(i);
    }

    t++;
    post(5, t, &sr, &sbuf);
    PLX_CHECK_MPI(MPI_Irecv(&rbuf, 1, MPI_INT, peer, t, MPI_COMM_WORLD, &rr));
    flag = 0;
    for (int i = 0; !flag; i++) {
        sentinel(&st, 1);
        PLX_CHECK_MPI(MPI_Request_get_status(rr, &flag, &st));
        CHECK_KEPT(st, "MPI_Request_get_status");
        plx_pause(i);
    }
    sentinel(&st, 1);
    PLX_CHECK_MPI(MPI_Test(&rr, &flag, &st));
    PLX_CHECK_EQ(flag, 1, "MPI_Test after MPI_Request_get_status");
    CHECK_KEPT(st, "MPI_Test (receive)");
    MPI_Wait(&sr, MPI_STATUS_IGNORE);

    t++;
    post(6, t, &sr, &sbuf);
    sentinel(&st, 1);
    PLX_CHECK_MPI(MPI_Probe(peer, t, MPI_COMM_WORLD, &st));
    CHECK_KEPT(st, "MPI_Probe");
    flag = 0;
    sentinel(&st, 1);
    PLX_CHECK_MPI(MPI_Iprobe(peer, t, MPI_COMM_WORLD, &flag, &st));
    PLX_CHECK_EQ(flag, 1, "MPI_Iprobe after MPI_Probe");
    CHECK_KEPT(st, "MPI_Iprobe");
    sentinel(&st, 1);
    PLX_CHECK_MPI(MPI_Mprobe(peer, t, MPI_COMM_WORLD, &msg, &st));
    CHECK_KEPT(st, "MPI_Mprobe");
    sentinel(&st, 1);
    PLX_CHECK_MPI(MPI_Mrecv(&rbuf, 1, MPI_INT, &msg, &st));
    CHECK_KEPT(st, "MPI_Mrecv");
    PLX_CHECK_EQ(rbuf, 6, "MPI_Mrecv data");
    MPI_Wait(&sr, MPI_STATUS_IGNORE);

    t++;
    post(7, t, &sr, &sbuf);
    flag = 0;
    for (int i = 0; !flag; i++) {
        sentinel(&st, 1);
        PLX_CHECK_MPI(MPI_Improbe(peer, t, MPI_COMM_WORLD, &flag, &msg, &st));
        if (flag)
            CHECK_KEPT(st, "MPI_Improbe");
        plx_pause(i);
    }
    PLX_CHECK_MPI(MPI_Imrecv(&rbuf, 1, MPI_INT, &msg, &rr));
    sentinel(&st, 1);
    PLX_CHECK_MPI(MPI_Wait(&rr, &st));
    CHECK_KEPT(st, "MPI_Imrecv + MPI_Wait");
    PLX_CHECK_EQ(rbuf, 7, "MPI_Imrecv data");
    MPI_Wait(&sr, MPI_STATUS_IGNORE);

    /* receives and probes of MPI_PROC_NULL */
    sentinel(&st, 1);
    PLX_CHECK_MPI(MPI_Recv(&rbuf, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &st));
    CHECK_KEPT(st, "MPI_Recv from MPI_PROC_NULL");
    sentinel(&st, 1);
    PLX_CHECK_MPI(MPI_Probe(MPI_PROC_NULL, 0, MPI_COMM_WORLD, &st));
    CHECK_KEPT(st, "MPI_Probe of MPI_PROC_NULL");
    sentinel(&st, 1);
    PLX_CHECK_MPI(MPI_Mprobe(MPI_PROC_NULL, 0, MPI_COMM_WORLD, &msg, &st));
    CHECK_KEPT(st, "MPI_Mprobe of MPI_PROC_NULL");
    sentinel(&st, 1);
    PLX_CHECK_MPI(MPI_Mrecv(&rbuf, 1, MPI_INT, &msg, &st));
    CHECK_KEPT(st, "MPI_Mrecv of MPI_MESSAGE_NO_PROC");
}

static void multiple_completion(int base)
{
    MPI_Status st[4];
    MPI_Request sr[4], rr[4];
    int sbuf[4], rbuf[4], idx, out, ind[4], flag;
    int t = base;

    /* Waitany / Testany: one status each */
    for (int k = 0; k < 2; k++) {
        post(10 + k, t, &sr[0], &sbuf[0]);
        PLX_CHECK_MPI(MPI_Irecv(&rbuf[0], 1, MPI_INT, peer, t, MPI_COMM_WORLD, &rr[0]));
        rr[1] = MPI_REQUEST_NULL;
        sentinel(st, 1);
        if (k == 0) {
            PLX_CHECK_MPI(MPI_Waitany(2, rr, &idx, st));
            CHECK_KEPT(st[0], "MPI_Waitany");
        } else {
            flag = 0;
            for (int i = 0; !flag; i++) {
                sentinel(st, 1);
                PLX_CHECK_MPI(MPI_Testany(2, rr, &idx, &flag, st));
                CHECK_KEPT(st[0], "MPI_Testany");
                plx_pause(i);
            }
        }
        PLX_CHECK_EQ(idx, 0, "index of the completed receive");
        PLX_CHECK_EQ(rbuf[0], 10 + k, "Waitany/Testany data");
        MPI_Wait(&sr[0], MPI_STATUS_IGNORE);
        t++;
    }

    /* Waitsome / Testsome / Waitall / Testall over 3 receives */
    for (int form = 0; form < 4; form++, t++) {
        for (int j = 0; j < 3; j++)
            post(20 + j, t, &sr[j], &sbuf[j]);
        for (int j = 0; j < 3; j++)
            PLX_CHECK_MPI(MPI_Irecv(&rbuf[j], 1, MPI_INT, peer, t, MPI_COMM_WORLD, &rr[j]));
        int done = 0;
        for (int i = 0; done < 3; i++) {
            sentinel(st, 3);
            const char *what = "";
            switch (form) {
            case 0:
                PLX_CHECK_MPI(MPI_Waitsome(3, rr, &out, ind, st));
                what = "MPI_Waitsome";
                break;
            case 1:
                PLX_CHECK_MPI(MPI_Testsome(3, rr, &out, ind, st));
                what = "MPI_Testsome";
                break;
            case 2:
                PLX_CHECK_MPI(MPI_Waitall(3, rr, st));
                out = 3;
                what = "MPI_Waitall";
                break;
            default:
                flag = 0;
                PLX_CHECK_MPI(MPI_Testall(3, rr, &flag, st));
                out = flag ? 3 : 0;
                what = "MPI_Testall";
            }
            for (int j = 0; j < out; j++)
                CHECK_KEPT(st[j], what);
            done += out;
            plx_pause(i);
        }
        for (int j = 0; j < 3; j++)
            PLX_CHECK_EQ(rbuf[j], 20 + j, "received in order");
        PLX_CHECK_MPI(MPI_Waitall(3, sr, MPI_STATUSES_IGNORE));
    }

    /* an error: a truncated receive in a Waitall sets MPI_ERROR of every status */
    PLX_CHECK_MPI(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    int two[2] = {30, 31};
    PLX_CHECK_MPI(MPI_Isend(two, 2, MPI_INT, peer, t, MPI_COMM_WORLD, &sr[0]));
    post(32, t + 1, &sr[1], &sbuf[1]);
    PLX_CHECK_MPI(MPI_Irecv(&rbuf[0], 1, MPI_INT, peer, t, MPI_COMM_WORLD, &rr[0]));
    PLX_CHECK_MPI(MPI_Irecv(&rbuf[1], 1, MPI_INT, peer, t + 1, MPI_COMM_WORLD, &rr[1]));
    sentinel(st, 2);
    PLX_CHECK_ERR(MPI_Waitall(2, rr, st), MPI_ERR_IN_STATUS);
    int cls = -1;
    MPI_Error_class(st[0].MPI_ERROR, &cls);
    PLX_CHECK_EQ(cls, MPI_ERR_TRUNCATE, "MPI_ERROR of the truncated receive");
    PLX_CHECK(st[1].MPI_ERROR == MPI_SUCCESS || st[1].MPI_ERROR == MPI_ERR_PENDING,
              "MPI_ERROR of the good receive with MPI_ERR_IN_STATUS (got %d)", st[1].MPI_ERROR);
    MPI_Waitall(2, sr, MPI_STATUSES_IGNORE);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

/* second thread (--threads): its own receives on another communicator; it
 * records what went wrong and the main thread checks it after the join (the
 * check counters belong to the main thread) */
static MPI_Comm tcomm = MPI_COMM_NULL;
static struct {
    int rc, bad_error, bad_data, rounds;
} side_out;
static void *side(void *arg)
{
    (void)arg;
    for (int k = 0; k < 200; k++) {
        int s = k, r = -1;
        MPI_Status st;
        sentinel(&st, 1);
        int rc = MPI_Sendrecv(&s, 1, MPI_INT, peer, k, &r, 1, MPI_INT, peer, k, tcomm, &st);
        if (rc != MPI_SUCCESS && side_out.rc == MPI_SUCCESS)
            side_out.rc = rc;
        side_out.bad_error += st.MPI_ERROR != SENTINEL;
        side_out.bad_data += r != k;
        side_out.rounds++;
    }
    return NULL;
}

int main(int argc, char **argv)
{
    int threads = argc > 1 && strcmp(argv[1], "--threads") == 0, provided = 0;
    if (threads) {
        MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
        plx_test_begin("status_error --threads");
        if (provided < MPI_THREAD_MULTIPLE) {
            printf("MPI_THREAD_MULTIPLE not provided: threads part skipped\n");
            threads = 0;
        }
    } else {
        plx_test_init(&argc, &argv, "status_error");
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    peer = plx_pair_peer(rank, size);
    mpich = plx_lib_is("MPICH");
    pthread_t th;
    if (threads) {
        MPI_Comm_dup(MPI_COMM_WORLD, &tcomm);
        pthread_create(&th, NULL, side, NULL);
    }
    for (int round = 0; round < (threads ? 20 : 2); round++) {
        single_completion(100 * round);
        multiple_completion(100 * round + 50);
    }
    if (threads) {
        pthread_join(th, NULL);
        PLX_CHECK_EQ(side_out.rc, MPI_SUCCESS, "MPI_Sendrecv in the second thread");
        PLX_CHECK_EQ(side_out.rounds, 200, "rounds of the second thread");
        PLX_CHECK_EQ(side_out.bad_data, 0, "wrong values received by the second thread");
        if (!mpich)
            PLX_CHECK_EQ(side_out.bad_error, 0, "MPI_Sendrecv in the second thread overwrote status.MPI_ERROR");
        MPI_Comm_free(&tcomm);
    }
    return plx_test_finish();
}
