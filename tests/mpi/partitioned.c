/*
 * Partitioned communication (MPI 4.0) around a ring (each rank sends to the
 * next and receives from the previous one, itself when alone):
 *  - partitions move as they are readied: the sender readies the first half,
 *    then readies the rest only after its receiver reported (by a plain
 *    message) that it saw the first partition arrive (MPI_Parrived) with the
 *    right data; were partitions held back until all are ready, this waits
 *    forever (mpiexec's timeout ends it);
 *  - partitions readied out of order from several threads at once (MPI_Pready,
 *    MPI_Pready_range, MPI_Pready_list), under MPI_THREAD_MULTIPLE;
 *  - the requests restarted for many rounds with new data; every element checked;
 *  - MPI_PROC_NULL peers, and the errors of misuse.
 */
#include "plx_test.h"
#include <pthread.h>

#define P 16            /* partitions */
#define C 1500          /* ints per partition */
#define ROUNDS 8
#define NTHREADS 4

static int rank, size, next, prev;

static int val(int r, int k, int p, int i)
{
    return r * 1000000 + k * 50000 + p * C + i;
}

static void fill(int *buf, int k)
{
    for (int p = 0; p < P; p++)
        for (int i = 0; i < C; i++)
            buf[p * C + i] = val(rank, k, p, i);
}

static int part_bad(const int *buf, int src, int k, int p)
{
    int bad = 0;
    for (int i = 0; i < C; i++)
        bad += buf[p * C + i] != val(src, k, p, i);
    return bad;
}

/* phase 1: the handshake that shows partitions travel before all are ready */
static void early_partitions(int *sbuf, int *rbuf, MPI_Request sreq, MPI_Request rreq, int k)
{
    fill(sbuf, k);
    memset(rbuf, 0xff, (size_t)P * C * sizeof(int));
    PLX_CHECK_MPI(MPI_Start(&rreq));
    PLX_CHECK_MPI(MPI_Start(&sreq));
    PLX_CHECK_MPI(MPI_Pready_range(0, P / 2 - 1, sreq));
    int go = 0, told = 0, seen = -1;
    MPI_Request go_req, tell_req = MPI_REQUEST_NULL;
    MPI_Irecv(&go, 1, MPI_INT, next, 900 + k, MPI_COMM_WORLD, &go_req);
    int got_go = 0;
    for (int it = 0; !got_go || !told; it++) {
        if (!told) {
            int flag = 0;
            PLX_CHECK_MPI(MPI_Parrived(rreq, 0, &flag));
            if (flag) {
                /* the receiver may read an arrived partition at once */
                PLX_CHECK_EQ(part_bad(rbuf, prev, k, 0), 0, "partition 0 data when MPI_Parrived says so");
                seen = 0;
                MPI_Isend(&seen, 1, MPI_INT, prev, 900 + k, MPI_COMM_WORLD, &tell_req);
                told = 1;
            }
        }
        if (!got_go)
            MPI_Test(&go_req, &got_go, MPI_STATUS_IGNORE);
        plx_pause(it);
    }
    int rest[P / 2];
    for (int i = 0; i < P / 2; i++)
        rest[i] = P - 1 - i;    /* the second half, backwards */
    PLX_CHECK_MPI(MPI_Pready_list(P / 2, rest, sreq));
    PLX_CHECK_MPI(MPI_Wait(&tell_req, MPI_STATUS_IGNORE));
    MPI_Request both[2] = {sreq, rreq};
    PLX_CHECK_MPI(MPI_Waitall(2, both, MPI_STATUSES_IGNORE));
    int bad = 0;
    for (int p = 0; p < P; p++)
        bad += part_bad(rbuf, prev, k, p);
    PLX_CHECK_EQ(bad, 0, "all partitions after the handshake round");
    for (int p = 0; p < P; p++) {
        int flag = 0;
        MPI_Parrived(rreq, p, &flag);
        PLX_CHECK(flag, "MPI_Parrived on a completed (inactive) request");
    }
}

struct readier {
    MPI_Request req;
    int id;
};

/* thread t readies the partitions p with p % NTHREADS == t, last first */
static void *ready_thread(void *arg)
{
    struct readier *r = arg;
    int mine[P], n = 0;
    for (int p = P - 1; p >= 0; p--)
        if (p % NTHREADS == r->id)
            mine[n++] = p;
    for (int i = 0; i < n; i++) {
        if (r->id == 0 && i == 0 && n >= 2) {
            /* one pair through the list form */
            MPI_Pready_list(2, mine, r->req);
            i++;
        } else {
            MPI_Pready(mine[i], r->req);
        }
        sched_yield();
    }
    return NULL;
}

static void threaded(int *sbuf, int *rbuf, MPI_Request sreq, MPI_Request rreq, int k)
{
    fill(sbuf, k);
    memset(rbuf, 0xff, (size_t)P * C * sizeof(int));
    PLX_CHECK_MPI(MPI_Start(&rreq));
    PLX_CHECK_MPI(MPI_Start(&sreq));
    pthread_t th[NTHREADS];
    struct readier rd[NTHREADS];
    for (int t = 0; t < NTHREADS; t++) {
        rd[t].req = sreq;
        rd[t].id = t;
        pthread_create(&th[t], NULL, ready_thread, &rd[t]);
    }
    /* meanwhile: take partitions as they arrive, in any order */
    int arrived[P] = {0}, n = 0;
    for (int it = 0; n < P; it++) {
        for (int p = 0; p < P; p++) {
            int flag = 0;
            if (arrived[p])
                continue;
            MPI_Parrived(rreq, p, &flag);
            if (flag) {
                arrived[p] = 1;
                n++;
                PLX_CHECK_EQ(part_bad(rbuf, prev, k, p), 0, "threaded round: partition data on arrival");
            }
        }
        plx_pause(it);
    }
    for (int t = 0; t < NTHREADS; t++)
        pthread_join(th[t], NULL);
    PLX_CHECK_MPI(MPI_Wait(&sreq, MPI_STATUS_IGNORE));
    PLX_CHECK_MPI(MPI_Wait(&rreq, MPI_STATUS_IGNORE));
}

/* One exchange of P partitions of 3 ints from `to`, received from `from`, on comm. */
static void exchange_on(MPI_Comm comm, int to, int from, int k)
{
    int s[P * 3], r[P * 3], me;
    MPI_Comm_rank(comm, &me);
    for (int i = 0; i < P * 3; i++)
        s[i] = me * 1000 + k * 100 + i, r[i] = -1;
    MPI_Request sq, rq;
    PLX_CHECK_MPI(MPI_Psend_init(s, P, 3, MPI_INT, to, 0, comm, MPI_INFO_NULL, &sq));
    PLX_CHECK_MPI(MPI_Precv_init(r, P, 3, MPI_INT, from, 0, comm, MPI_INFO_NULL, &rq));
    PLX_CHECK_MPI(MPI_Start(&rq));
    PLX_CHECK_MPI(MPI_Start(&sq));
    PLX_CHECK_MPI(MPI_Pready_range(0, P - 1, sq));
    PLX_CHECK_MPI(MPI_Wait(&sq, MPI_STATUS_IGNORE));
    PLX_CHECK_MPI(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    int bad = 0;
    for (int i = 0; i < P * 3; i++)
        bad += r[i] != from * 1000 + k * 100 + i;
    PLX_CHECK_EQ(bad, 0, "partitioned exchange on a duplicated communicator");
    MPI_Request_free(&sq);
    MPI_Request_free(&rq);
}

/* Partitioned operations on a dup of MPI_COMM_SELF (peer rank 0 is this
 * process), then a ring on a dup of MPI_COMM_WORLD that may get the same
 * context id, where rank 0 is another process: they must still match (as in
 * mpi4py's test_p2p_buf_part, which hung when the count was kept per rank). */
static void reused_context(void)
{
    for (int k = 0; k < 3; k++) {
        MPI_Comm self, world;
        MPI_Comm_dup(MPI_COMM_SELF, &self);
        exchange_on(self, 0, 0, k);
        MPI_Comm_free(&self);
        MPI_Comm_dup(MPI_COMM_WORLD, &world);
        exchange_on(world, next, prev, k);
        MPI_Comm_free(&world);
    }
}

static void errors(void)
{
    MPI_Request s, r;
    int buf[8];
    PLX_CHECK_ERR(MPI_Precv_init(buf, 2, 4, MPI_INT, MPI_ANY_SOURCE, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &r),
                  MPI_ERR_RANK);
    PLX_CHECK_ERR(MPI_Precv_init(buf, 2, 4, MPI_INT, 0, MPI_ANY_TAG, MPI_COMM_WORLD, MPI_INFO_NULL, &r), MPI_ERR_TAG);
    PLX_CHECK_ERR(MPI_Psend_init(buf, 0, 4, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &s), MPI_ERR_ARG);
    PLX_CHECK_ERR(MPI_Psend_init(buf, 2, -1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &s), MPI_ERR_COUNT);
    PLX_CHECK_ERR(MPI_Psend_init(buf, 2, 4, MPI_INT, size, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &s), MPI_ERR_RANK);
    PLX_CHECK_ERR(MPI_Psend_init(buf, 2, 4, MPI_INT, 0, 0, MPI_COMM_NULL, MPI_INFO_NULL, &s), MPI_ERR_COMM);
    /* to and from MPI_PROC_NULL: complete at once */
    PLX_CHECK_MPI(MPI_Psend_init(buf, 2, 4, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &s));
    PLX_CHECK_MPI(MPI_Precv_init(buf, 2, 4, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &r));
    PLX_CHECK_ERR(MPI_Pready(0, s), MPI_ERR_REQUEST);        /* not started */
    PLX_CHECK_MPI(MPI_Start(&s));
    PLX_CHECK_MPI(MPI_Start(&r));
    PLX_CHECK_MPI(MPI_Pready_range(0, 1, s));
    int flag = 0;
    PLX_CHECK_MPI(MPI_Parrived(r, 1, &flag));
    PLX_CHECK(flag, "MPI_Parrived from MPI_PROC_NULL");
    PLX_CHECK_ERR(MPI_Pready(2, s), MPI_ERR_ARG);
    PLX_CHECK_ERR(MPI_Pready_range(1, 0, s), MPI_ERR_ARG);
    PLX_CHECK_ERR(MPI_Pready(0, r), MPI_ERR_REQUEST);        /* a receive */
    PLX_CHECK_ERR(MPI_Parrived(s, 0, &flag), MPI_ERR_REQUEST); /* a send */
    PLX_CHECK_ERR(MPI_Parrived(r, 5, &flag), MPI_ERR_ARG);
    PLX_CHECK_MPI(MPI_Wait(&s, MPI_STATUS_IGNORE));
    PLX_CHECK_MPI(MPI_Wait(&r, MPI_STATUS_IGNORE));
    PLX_CHECK_MPI(MPI_Request_free(&s));
    PLX_CHECK_MPI(MPI_Request_free(&r));
    /* readying a partition twice */
    PLX_CHECK_MPI(MPI_Psend_init(buf, 2, 4, MPI_INT, rank, 77, MPI_COMM_WORLD, MPI_INFO_NULL, &s));
    PLX_CHECK_MPI(MPI_Precv_init(buf + 0, 1, 8, MPI_INT, rank, 77, MPI_COMM_WORLD, MPI_INFO_NULL, &r));
    PLX_CHECK_MPI(MPI_Start(&s));
    PLX_CHECK_MPI(MPI_Pready(1, s));
    PLX_CHECK_ERR(MPI_Pready(1, s), MPI_ERR_ARG);
    PLX_CHECK_MPI(MPI_Pready(0, s));
    PLX_CHECK_MPI(MPI_Wait(&s, MPI_STATUS_IGNORE));
    PLX_CHECK_MPI(MPI_Request_free(&s));
    PLX_CHECK_MPI(MPI_Request_free(&r));   /* never started */
    PLX_CHECK_ERR(MPI_Pready(0, MPI_REQUEST_NULL), MPI_ERR_REQUEST);
}

int main(int argc, char **argv)
{
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    plx_test_begin("partitioned");
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    next = (rank + 1) % size;
    prev = (rank + size - 1) % size;
    int *sbuf = plx_malloc((size_t)P * C * sizeof(int)), *rbuf = plx_malloc((size_t)P * C * sizeof(int));
    MPI_Request sreq, rreq;
    MPI_Info info;
    MPI_Info_create(&info);
    PLX_CHECK_MPI(MPI_Psend_init(sbuf, P, C, MPI_INT, next, 5, MPI_COMM_WORLD, info, &sreq));
    PLX_CHECK_MPI(MPI_Precv_init(rbuf, P, C, MPI_INT, prev, 5, MPI_COMM_WORLD, info, &rreq));
    MPI_Info_free(&info);
    for (int k = 0; k < ROUNDS; k++) {
        if (k % 2 == 0 || provided != MPI_THREAD_MULTIPLE)
            early_partitions(sbuf, rbuf, sreq, rreq, k);
        else
            threaded(sbuf, rbuf, sreq, rreq, k);
        MPI_Barrier(MPI_COMM_WORLD);
    }
    PLX_CHECK(provided == MPI_THREAD_MULTIPLE, "MPI_THREAD_MULTIPLE provided (threaded rounds ran)");
    PLX_CHECK_MPI(MPI_Request_free(&sreq));
    PLX_CHECK_MPI(MPI_Request_free(&rreq));
    reused_context();
    errors();
    free(sbuf);
    free(rbuf);
    return plx_test_finish();
}
