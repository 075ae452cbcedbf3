/*
 * The progress thread learns that the application left MPI from the call
 * that leaves (issue 12, session 9: src/progress/progress.c, api/api.h).
 * Run with PLEXUS_ASYNC_PROGRESS=1 (and PLEXUS_DEBUG=1, so that the library
 * says at MPI_Finalize if the calls' count of themselves in and out of MPI
 * went wrong: the test registers that message as a failure).
 *
 * Every rank but 0 is a target; rank 0 is the origin. Rounds of:
 *   1. a long stay in MPI for the targets (MPI_Barrier while rank 0 does
 *      lock/put/get/unlock on each target: served by the targets' own
 *      polls or their threads);
 *   2. short calls between (a barrier, a broadcast, an allreduce with a
 *      user-defined operation, calls that fail with MPI_ERRORS_RETURN, an
 *      attribute copy callback that calls MPI, an MPI_Test loop);
 *   3. the targets compute a fixed amount of work without calling MPI while
 *      rank 0 puts, accumulates and gets back on each target's window.
 * Every value is checked at the origin (the gets) and at the targets (the
 * window after the round). The timing is not checked: a takeover that
 * failed shows as slowness, measured by bench/sched/takeover.
 */
#include "plx_test.h"

#define N 64
#define ROUNDS 12

static volatile double sink;

static void work(long n)
{
    double s = 0;
    for (long i = 0; i < n; i++)
        s += (double)i * 0.5;
    sink = s;
}

static void maxplus(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    for (int i = 0; i < *len; i++)
        ((int *)inout)[i] = ((int *)inout)[i] > ((int *)in)[i] ? ((int *)inout)[i] + 1 : ((int *)in)[i] + 1;
}

/* An attribute copy callback that itself calls MPI (a call inside a call). */
static int copy_cb(MPI_Comm old, int key, void *extra, void *in, void *out, int *flag)
{
    (void)key;
    (void)extra;
    int r;
    MPI_Comm_rank(old, &r);
    *(void **)out = in;
    *flag = 1;
    return MPI_SUCCESS;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    plx_test_begin("async_leave");
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int *base;
    MPI_Win win;
    PLX_CHECK_MPI(MPI_Win_allocate(N * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win));
    for (int i = 0; i < N; i++)
        base[i] = 0;
    MPI_Op op;
    MPI_Op_create(maxplus, 1, &op);
    int key;
    MPI_Comm_create_keyval(copy_cb, MPI_COMM_NULL_DELETE_FN, &key, NULL);
    MPI_Comm_set_attr(MPI_COMM_WORLD, key, &key);
    MPI_Barrier(MPI_COMM_WORLD);

    for (int r = 0; r < ROUNDS; r++) {
        int buf[N], got[N];
        /* 1. a long stay in MPI for the targets */
        if (rank == 0) {
            for (int t = 1; t < size; t++) {
                for (int i = 0; i < N; i++)
                    buf[i] = r * 1000 + t * 10 + i;
                for (int k = 0; k < 5; k++) {
                    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, t, 0, win);
                    MPI_Put(buf, N, MPI_INT, t, 0, N, MPI_INT, win);
                    MPI_Win_unlock(t, win);
                    MPI_Win_lock(MPI_LOCK_SHARED, t, 0, win);
                    MPI_Get(got, N, MPI_INT, t, 0, N, MPI_INT, win);
                    MPI_Win_unlock(t, win);
                    for (int i = 0; i < N; i++)
                        if (got[i] != buf[i])
                            PLX_CHECK_EQ(got[i], buf[i], "get after put, target in MPI_Barrier");
                }
                plx_test_pass();
            }
        }
        MPI_Barrier(MPI_COMM_WORLD);

        /* 2. short calls */
        double x = rank == 0 ? r + 0.5 : -1.0;
        PLX_CHECK_MPI(MPI_Bcast(&x, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD));
        PLX_CHECK(x == r + 0.5, "broadcast value %g in round %d", x, r);
        int v = rank, m = -1;
        PLX_CHECK_MPI(MPI_Allreduce(&v, &m, 1, MPI_INT, op, MPI_COMM_WORLD));
        PLX_CHECK(m >= size - 1 && m <= 2 * size, "user-op allreduce gave %d", m);
        PLX_CHECK_ERR(MPI_Send(&v, -1, MPI_INT, 0, 0, MPI_COMM_WORLD), MPI_ERR_COUNT);
        PLX_CHECK_ERR(MPI_Barrier(MPI_COMM_NULL), MPI_ERR_COMM);
        MPI_Comm dup;
        PLX_CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
        MPI_Request req;
        int peer = (rank + 1) % size, from = (rank + size - 1) % size, in = -1, flag = 0;
        PLX_CHECK_MPI(MPI_Irecv(&in, 1, MPI_INT, from, 7, dup, &req));
        PLX_CHECK_MPI(MPI_Send(&rank, 1, MPI_INT, peer, 7, dup));
        while (!flag)
            PLX_CHECK_MPI(MPI_Test(&req, &flag, MPI_STATUS_IGNORE));
        PLX_CHECK_EQ(in, from, "ring value through MPI_Test");
        MPI_Comm_free(&dup);
        MPI_Barrier(MPI_COMM_WORLD);

        /* 3. the targets compute, out of MPI */
        if (rank != 0) {
            work(2000000);
        } else {
            for (int t = 1; t < size; t++) {
                for (int i = 0; i < N; i++)
                    buf[i] = r + t + i;
                MPI_Win_lock(MPI_LOCK_EXCLUSIVE, t, 0, win);
                MPI_Put(buf, N, MPI_INT, t, 0, N, MPI_INT, win);
                MPI_Win_unlock(t, win);
                MPI_Win_lock(MPI_LOCK_EXCLUSIVE, t, 0, win);
                MPI_Accumulate(buf, N, MPI_INT, t, 0, N, MPI_INT, MPI_SUM, win);
                MPI_Win_unlock(t, win);
                MPI_Win_lock(MPI_LOCK_SHARED, t, 0, win);
                MPI_Get(got, N, MPI_INT, t, 0, N, MPI_INT, win);
                MPI_Win_unlock(t, win);
                for (int i = 0; i < N; i++)
                    if (got[i] != 2 * buf[i])
                        PLX_CHECK_EQ(got[i], 2 * buf[i], "get after put and accumulate, target computing");
                plx_test_pass();
            }
        }
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank != 0) {
            MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, win);
            for (int i = 0; i < N; i++)
                if (base[i] != 2 * (r + rank + i))
                    PLX_CHECK_EQ(base[i], 2 * (r + rank + i), "target's window after the round");
            MPI_Win_unlock(rank, win);
            plx_test_pass();
        }
        MPI_Barrier(MPI_COMM_WORLD);
    }
    MPI_Comm_delete_attr(MPI_COMM_WORLD, key);
    MPI_Comm_free_keyval(&key);
    MPI_Op_free(&op);
    MPI_Win_free(&win);
    return plx_test_finish();
}
