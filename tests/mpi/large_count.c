/*
 * large_count.c - the MPI 4.0 large-count (`_c`) calls.
 *
 * Small counts: every `_c` call of point-to-point, the collectives (blocking,
 * nonblocking and persistent, v and w forms, neighbourhood ones on a ring),
 * the datatype constructors and queries, pack/unpack, status counts,
 * reductions with an MPI_Op_create_c function, and file I/O, each with its
 * data checked against what the int form gives or a known pattern. Then the
 * error classes: negative counts, a constructor argument above INT_MAX
 * (MPI_ERR_COUNT), MPI_Get_count of a count an int cannot hold.
 *
 * --big (registered under the `heavy` label at 2 ranks): MPI_Send_c /
 * MPI_Recv_c and MPI_Bcast_c of 2^31 + 5 bytes (above what an int count can
 * say), every byte checked, MPI_Get_count_c of the status. About 2 GiB per
 * rank.
 */
#include "plx_test.h"
#include <limits.h>
#include <unistd.h>

static int rank, size;

/* --- point-to-point ------------------------------------------------------ */

static void pt2pt(void)
{
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    enum { N = 1000 };
    int s[N], r[N];
    MPI_Status st;
    MPI_Request rq[2];
    MPI_Count cnt = -1;
    for (int i = 0; i < N; i++)
        s[i] = rank * 100000 + i;

    /* Send_c / Recv_c around the ring (Sendrecv_c so that no rank blocks) */
    memset(r, 0, sizeof r);
    PLX_CHECK_MPI(MPI_Sendrecv_c(s, (MPI_Count)N, MPI_INT, next, 1, r, (MPI_Count)N, MPI_INT, prev, 1,
                                 MPI_COMM_WORLD, &st));
    for (int i = 0; i < N; i++)
        if (r[i] != prev * 100000 + i)
            PLX_CHECK(0, "Sendrecv_c data at %d: %d", i, r[i]);
    PLX_CHECK_MPI(MPI_Get_count_c(&st, MPI_INT, &cnt));
    PLX_CHECK_EQ(cnt, (MPI_Count)N, "MPI_Get_count_c");
    PLX_CHECK_MPI(MPI_Get_elements_c(&st, MPI_INT, &cnt));
    PLX_CHECK_EQ(cnt, (MPI_Count)N, "MPI_Get_elements_c");

    /* Isend_c / Irecv_c, Issend_c */
    memset(r, 0, sizeof r);
    PLX_CHECK_MPI(MPI_Irecv_c(r, N, MPI_INT, prev, 2, MPI_COMM_WORLD, &rq[0]));
    PLX_CHECK_MPI(MPI_Issend_c(s, N, MPI_INT, next, 2, MPI_COMM_WORLD, &rq[1]));
    PLX_CHECK_MPI(MPI_Waitall(2, rq, MPI_STATUSES_IGNORE));
    PLX_CHECK_EQ(r[N - 1], prev * 100000 + N - 1, "Irecv_c/Issend_c data");

    /* blocking Send_c / Ssend_c / Recv_c: even ranks send first */
    if (size > 1) {
        for (int round = 0; round < 2; round++) {
            memset(r, 0, sizeof r);
            if (rank % 2 == 0) {  /* no cycle of waits, also with an odd size */
                PLX_CHECK_MPI(round ? MPI_Ssend_c(s, N, MPI_INT, next, 3, MPI_COMM_WORLD)
                                    : MPI_Send_c(s, N, MPI_INT, next, 3, MPI_COMM_WORLD));
                PLX_CHECK_MPI(MPI_Recv_c(r, N, MPI_INT, prev, 3, MPI_COMM_WORLD, &st));
            } else {
                PLX_CHECK_MPI(MPI_Recv_c(r, N, MPI_INT, prev, 3, MPI_COMM_WORLD, &st));
                PLX_CHECK_MPI(round ? MPI_Ssend_c(s, N, MPI_INT, next, 3, MPI_COMM_WORLD)
                                    : MPI_Send_c(s, N, MPI_INT, next, 3, MPI_COMM_WORLD));
            }
            PLX_CHECK_EQ(r[7], prev * 100000 + 7, "Send_c/Ssend_c/Recv_c data");
        }
    }

    /* Rsend_c / Irsend_c: the receive is posted before the barrier */
    memset(r, 0, sizeof r);
    PLX_CHECK_MPI(MPI_Irecv_c(r, N, MPI_INT, prev, 4, MPI_COMM_WORLD, &rq[0]));
    MPI_Barrier(MPI_COMM_WORLD);
    PLX_CHECK_MPI(MPI_Rsend_c(s, N / 2, MPI_INT, next, 4, MPI_COMM_WORLD));
    PLX_CHECK_MPI(MPI_Wait(&rq[0], &st));
    PLX_CHECK_MPI(MPI_Get_count_c(&st, MPI_INT, &cnt));
    PLX_CHECK_EQ(cnt, (MPI_Count)(N / 2), "Rsend_c count");
    PLX_CHECK_MPI(MPI_Irecv_c(r, N, MPI_INT, prev, 5, MPI_COMM_WORLD, &rq[0]));
    MPI_Barrier(MPI_COMM_WORLD);
    PLX_CHECK_MPI(MPI_Irsend_c(s, N, MPI_INT, next, 5, MPI_COMM_WORLD, &rq[1]));
    PLX_CHECK_MPI(MPI_Waitall(2, rq, MPI_STATUSES_IGNORE));
    PLX_CHECK_EQ(r[N - 1], prev * 100000 + N - 1, "Irsend_c data");

    /* Bsend_c / Ibsend_c through a buffer attached with Buffer_attach_c */
    MPI_Count bsize = 4 * (N * (MPI_Count)sizeof(int) + MPI_BSEND_OVERHEAD);
    char *bbuf = plx_malloc((size_t)bsize);
    PLX_CHECK_MPI(MPI_Buffer_attach_c(bbuf, bsize));
    PLX_CHECK_MPI(MPI_Irecv_c(r, N, MPI_INT, prev, 6, MPI_COMM_WORLD, &rq[0]));
    PLX_CHECK_MPI(MPI_Bsend_c(s, N, MPI_INT, next, 6, MPI_COMM_WORLD));
    PLX_CHECK_MPI(MPI_Wait(&rq[0], MPI_STATUS_IGNORE));
    PLX_CHECK_MPI(MPI_Irecv_c(r, N, MPI_INT, prev, 7, MPI_COMM_WORLD, &rq[0]));
    PLX_CHECK_MPI(MPI_Ibsend_c(s, N, MPI_INT, next, 7, MPI_COMM_WORLD, &rq[1]));
    PLX_CHECK_MPI(MPI_Waitall(2, rq, MPI_STATUSES_IGNORE));
    void *det = NULL;
    MPI_Count dsize = 0;
    PLX_CHECK_MPI(MPI_Buffer_detach_c(&det, &dsize));
    PLX_CHECK(det == bbuf && dsize == bsize, "Buffer_detach_c gives back the buffer (%lld bytes)", (long long)dsize);
    free(bbuf);

    /* persistent: Send_init_c, Ssend_init_c, Rsend_init_c, Bsend_init_c, Recv_init_c, three starts each */
    bbuf = plx_malloc((size_t)bsize);
    PLX_CHECK_MPI(MPI_Buffer_attach_c(bbuf, bsize));
    for (int kind = 0; kind < 4; kind++) {
        MPI_Request p[2];
        PLX_CHECK_MPI(MPI_Recv_init_c(r, N, MPI_INT, prev, 10 + kind, MPI_COMM_WORLD, &p[0]));
        switch (kind) {
        case 0: PLX_CHECK_MPI(MPI_Send_init_c(s, N, MPI_INT, next, 10, MPI_COMM_WORLD, &p[1])); break;
        case 1: PLX_CHECK_MPI(MPI_Ssend_init_c(s, N, MPI_INT, next, 11, MPI_COMM_WORLD, &p[1])); break;
        case 2: PLX_CHECK_MPI(MPI_Rsend_init_c(s, N, MPI_INT, next, 12, MPI_COMM_WORLD, &p[1])); break;
        default: PLX_CHECK_MPI(MPI_Bsend_init_c(s, N, MPI_INT, next, 13, MPI_COMM_WORLD, &p[1])); break;
        }
        for (int k = 0; k < 3; k++) {
            s[0] = rank * 100000 + k * 7 + kind;
            memset(r, 0, sizeof r);
            PLX_CHECK_MPI(MPI_Start(&p[0]));
            MPI_Barrier(MPI_COMM_WORLD);    /* ready mode needs the receive posted */
            PLX_CHECK_MPI(MPI_Start(&p[1]));
            PLX_CHECK_MPI(MPI_Waitall(2, p, MPI_STATUSES_IGNORE));
            PLX_CHECK_EQ(r[0], prev * 100000 + k * 7 + kind, "persistent _c data");
            PLX_CHECK_EQ(r[N - 1], prev * 100000 + N - 1, "persistent _c data (last)");
        }
        MPI_Request_free(&p[0]);
        MPI_Request_free(&p[1]);
    }
    s[0] = rank * 100000;
    PLX_CHECK_MPI(MPI_Buffer_detach_c(&det, &dsize));
    free(bbuf);

    /* Sendrecv_replace_c, Isendrecv_c, Isendrecv_replace_c */
    for (int i = 0; i < N; i++)
        r[i] = rank * 100000 + i;
    PLX_CHECK_MPI(MPI_Sendrecv_replace_c(r, N, MPI_INT, next, 20, prev, 20, MPI_COMM_WORLD, &st));
    PLX_CHECK_EQ(r[5], prev * 100000 + 5, "Sendrecv_replace_c data");
    memset(r, 0, sizeof r);
    PLX_CHECK_MPI(MPI_Isendrecv_c(s, N, MPI_INT, next, 21, r, N, MPI_INT, prev, 21, MPI_COMM_WORLD, &rq[0]));
    PLX_CHECK_MPI(MPI_Wait(&rq[0], &st));
    PLX_CHECK_EQ(r[N - 2], prev * 100000 + N - 2, "Isendrecv_c data");
    for (int i = 0; i < N; i++)
        r[i] = rank * 100000 + i;
    PLX_CHECK_MPI(MPI_Isendrecv_replace_c(r, N, MPI_INT, next, 22, prev, 22, MPI_COMM_WORLD, &rq[0]));
    PLX_CHECK_MPI(MPI_Wait(&rq[0], &st));
    PLX_CHECK_EQ(r[3], prev * 100000 + 3, "Isendrecv_replace_c data");

    /* matched probe: Mrecv_c, Imrecv_c */
    for (int k = 0; k < 2; k++) {
        MPI_Message m;
        memset(r, 0, sizeof r);
        PLX_CHECK_MPI(MPI_Isend_c(s, N, MPI_INT, next, 30 + k, MPI_COMM_WORLD, &rq[1]));
        PLX_CHECK_MPI(MPI_Mprobe(prev, 30 + k, MPI_COMM_WORLD, &m, &st));
        if (k == 0) {
            PLX_CHECK_MPI(MPI_Mrecv_c(r, N, MPI_INT, &m, &st));
        } else {
            PLX_CHECK_MPI(MPI_Imrecv_c(r, N, MPI_INT, &m, &rq[0]));
            PLX_CHECK_MPI(MPI_Wait(&rq[0], &st));
        }
        PLX_CHECK_MPI(MPI_Wait(&rq[1], MPI_STATUS_IGNORE));
        PLX_CHECK_EQ(r[N - 1], prev * 100000 + N - 1, "Mrecv_c/Imrecv_c data");
    }

    /* errors */
    PLX_CHECK_ERR(MPI_Send_c(s, -1, MPI_INT, next, 0, MPI_COMM_WORLD), MPI_ERR_COUNT);
    PLX_CHECK_ERR(MPI_Irecv_c(r, -5, MPI_INT, prev, 0, MPI_COMM_WORLD, &rq[0]), MPI_ERR_COUNT);
    /* a status whose count an int cannot hold */
    MPI_Status big;
    memset(&big, 0, sizeof big);
    PLX_CHECK_MPI(MPI_Status_set_elements_x(&big, MPI_INT, (MPI_Count)3 << 30));
    int icnt = 0;
    PLX_CHECK_MPI(MPI_Get_count(&big, MPI_INT, &icnt));
    PLX_CHECK_EQ(icnt, MPI_UNDEFINED, "MPI_Get_count of 3*2^30 ints");
    PLX_CHECK_MPI(MPI_Get_count_c(&big, MPI_INT, &cnt));
    PLX_CHECK_EQ(cnt, (MPI_Count)3 << 30, "MPI_Get_count_c of 3*2^30 ints");
    PLX_CHECK_MPI(MPI_Get_elements_c(&big, MPI_INT, &cnt));
    PLX_CHECK_EQ(cnt, (MPI_Count)3 << 30, "MPI_Get_elements_c of 3*2^30 ints");
    /* a buffer attached with more bytes than an int holds: the int detach refuses */
    static char small[16];
    PLX_CHECK_MPI(MPI_Buffer_attach_c(small, (MPI_Count)5 << 30));
    int isz = 0;
    PLX_CHECK_ERR(MPI_Buffer_detach(&det, &isz), MPI_ERR_COUNT);
    PLX_CHECK_MPI(MPI_Buffer_detach_c(&det, &dsize));
    PLX_CHECK(det == small && dsize == (MPI_Count)5 << 30, "Buffer_detach_c after the refused int detach");
}

/* --- collectives ---------------------------------------------------------- */

static void user_sum_c(void *in, void *inout, MPI_Count *len, MPI_Datatype *dt)
{
    long long *a = in, *b = inout;
    (void)dt;
    for (MPI_Count i = 0; i < *len; i++)
        b[i] = a[i] + b[i];
}

/* mode 0: blocking, 1: nonblocking (waited), 2: persistent (started twice) */
#define RUN(mode, blocking, nb, init)                                                              \
    do {                                                                                           \
        MPI_Request q_;                                                                            \
        if ((mode) == 0) {                                                                         \
            PLX_CHECK_MPI(blocking);                                                               \
        } else if ((mode) == 1) {                                                                  \
            PLX_CHECK_MPI(nb);                                                                     \
            PLX_CHECK_MPI(MPI_Wait(&q_, MPI_STATUS_IGNORE));                                       \
        } else {                                                                                   \
            PLX_CHECK_MPI(init);                                                                   \
            PLX_CHECK_MPI(MPI_Start(&q_));                                                         \
            PLX_CHECK_MPI(MPI_Wait(&q_, MPI_STATUS_IGNORE));                                       \
            PLX_CHECK_MPI(MPI_Start(&q_));                                                         \
            PLX_CHECK_MPI(MPI_Wait(&q_, MPI_STATUS_IGNORE));                                       \
            PLX_CHECK_MPI(MPI_Request_free(&q_));                                                  \
        }                                                                                          \
    } while (0)

static void coll(int mode)
{
    enum { K = 5 };     /* elements per rank block */
    int p = size;
    long long *s = plx_malloc((size_t)p * K * sizeof *s), *r = plx_malloc((size_t)p * K * sizeof *r);
    MPI_Count *cnts = plx_malloc((size_t)p * sizeof *cnts), *rcnts = plx_malloc((size_t)p * sizeof *rcnts);
    MPI_Aint *dis = plx_malloc((size_t)p * sizeof *dis), *rdis = plx_malloc((size_t)p * sizeof *rdis);
    MPI_Datatype *ty = plx_malloc((size_t)p * sizeof *ty);
    MPI_Info in = MPI_INFO_NULL;
    MPI_Comm w = MPI_COMM_WORLD;
    int root = p - 1;
#define VAL(src, dst, i) ((long long)(src) * 1000000 + (long long)(dst) * 1000 + (i))

    /* bcast */
    for (int i = 0; i < K; i++)
        s[i] = rank == root ? VAL(root, 0, i) : -1;
    RUN(mode, MPI_Bcast_c(s, K, MPI_LONG_LONG, root, w), MPI_Ibcast_c(s, K, MPI_LONG_LONG, root, w, &q_),
        MPI_Bcast_init_c(s, K, MPI_LONG_LONG, root, w, in, &q_));
    PLX_CHECK_EQ(s[K - 1], VAL(root, 0, K - 1), "Bcast_c data");

    /* gather / gatherv (block j of rank j: j+1 elements at displacement j*K) */
    for (int i = 0; i < K; i++)
        s[i] = VAL(rank, root, i);
    memset(r, 0, (size_t)p * K * sizeof *r);
    RUN(mode, MPI_Gather_c(s, K, MPI_LONG_LONG, r, K, MPI_LONG_LONG, root, w),
        MPI_Igather_c(s, K, MPI_LONG_LONG, r, K, MPI_LONG_LONG, root, w, &q_),
        MPI_Gather_init_c(s, K, MPI_LONG_LONG, r, K, MPI_LONG_LONG, root, w, in, &q_));
    if (rank == root)
        for (int j = 0; j < p; j++)
            PLX_CHECK_EQ(r[j * K + 2], VAL(j, root, 2), "Gather_c data");
    for (int j = 0; j < p; j++)
        cnts[j] = j % K + 1, dis[j] = (MPI_Aint)j * K;
    memset(r, 0, (size_t)p * K * sizeof *r);
    MPI_Count mine = rank % K + 1;
    RUN(mode, MPI_Gatherv_c(s, mine, MPI_LONG_LONG, r, cnts, dis, MPI_LONG_LONG, root, w),
        MPI_Igatherv_c(s, mine, MPI_LONG_LONG, r, cnts, dis, MPI_LONG_LONG, root, w, &q_),
        MPI_Gatherv_init_c(s, mine, MPI_LONG_LONG, r, cnts, dis, MPI_LONG_LONG, root, w, in, &q_));
    if (rank == root)
        for (int j = 0; j < p; j++) {
            PLX_CHECK_EQ(r[j * K + j % K], VAL(j, root, j % K), "Gatherv_c data (last of block)");
            if (j % K + 1 < K)
                PLX_CHECK_EQ(r[j * K + j % K + 1], 0, "Gatherv_c leaves the rest");
        }

    /* scatter / scatterv */
    for (int j = 0; j < p; j++)
        for (int i = 0; i < K; i++)
            s[j * K + i] = VAL(root, j, i);
    memset(r, 0, (size_t)K * sizeof *r);
    RUN(mode, MPI_Scatter_c(s, K, MPI_LONG_LONG, r, K, MPI_LONG_LONG, root, w),
        MPI_Iscatter_c(s, K, MPI_LONG_LONG, r, K, MPI_LONG_LONG, root, w, &q_),
        MPI_Scatter_init_c(s, K, MPI_LONG_LONG, r, K, MPI_LONG_LONG, root, w, in, &q_));
    PLX_CHECK_EQ(r[K - 1], VAL(root, rank, K - 1), "Scatter_c data");
    memset(r, 0, (size_t)K * sizeof *r);
    RUN(mode, MPI_Scatterv_c(s, cnts, dis, MPI_LONG_LONG, r, mine, MPI_LONG_LONG, root, w),
        MPI_Iscatterv_c(s, cnts, dis, MPI_LONG_LONG, r, mine, MPI_LONG_LONG, root, w, &q_),
        MPI_Scatterv_init_c(s, cnts, dis, MPI_LONG_LONG, r, mine, MPI_LONG_LONG, root, w, in, &q_));
    PLX_CHECK_EQ(r[mine - 1], VAL(root, rank, mine - 1), "Scatterv_c data");

    /* allgather / allgatherv */
    for (int i = 0; i < K; i++)
        s[i] = VAL(rank, 0, i);
    memset(r, 0, (size_t)p * K * sizeof *r);
    RUN(mode, MPI_Allgather_c(s, K, MPI_LONG_LONG, r, K, MPI_LONG_LONG, w),
        MPI_Iallgather_c(s, K, MPI_LONG_LONG, r, K, MPI_LONG_LONG, w, &q_),
        MPI_Allgather_init_c(s, K, MPI_LONG_LONG, r, K, MPI_LONG_LONG, w, in, &q_));
    for (int j = 0; j < p; j++)
        PLX_CHECK_EQ(r[j * K + 1], VAL(j, 0, 1), "Allgather_c data");
    memset(r, 0, (size_t)p * K * sizeof *r);
    RUN(mode, MPI_Allgatherv_c(s, mine, MPI_LONG_LONG, r, cnts, dis, MPI_LONG_LONG, w),
        MPI_Iallgatherv_c(s, mine, MPI_LONG_LONG, r, cnts, dis, MPI_LONG_LONG, w, &q_),
        MPI_Allgatherv_init_c(s, mine, MPI_LONG_LONG, r, cnts, dis, MPI_LONG_LONG, w, in, &q_));
    for (int j = 0; j < p; j++)
        PLX_CHECK_EQ(r[j * K + j % K], VAL(j, 0, j % K), "Allgatherv_c data");

    /* alltoall / alltoallv / alltoallw */
    for (int j = 0; j < p; j++)
        for (int i = 0; i < K; i++)
            s[j * K + i] = VAL(rank, j, i);
    memset(r, 0, (size_t)p * K * sizeof *r);
    RUN(mode, MPI_Alltoall_c(s, K, MPI_LONG_LONG, r, K, MPI_LONG_LONG, w),
        MPI_Ialltoall_c(s, K, MPI_LONG_LONG, r, K, MPI_LONG_LONG, w, &q_),
        MPI_Alltoall_init_c(s, K, MPI_LONG_LONG, r, K, MPI_LONG_LONG, w, in, &q_));
    for (int j = 0; j < p; j++)
        PLX_CHECK_EQ(r[j * K + 3], VAL(j, rank, 3), "Alltoall_c data");
    /* v: rank sends (rank % K + 1) elements to everyone; receives j%K+1 from j */
    MPI_Count *scnt = plx_malloc((size_t)p * sizeof *scnt);
    for (int j = 0; j < p; j++)
        scnt[j] = mine, rcnts[j] = cnts[j], rdis[j] = dis[j];
    memset(r, 0, (size_t)p * K * sizeof *r);
    RUN(mode, MPI_Alltoallv_c(s, scnt, dis, MPI_LONG_LONG, r, rcnts, rdis, MPI_LONG_LONG, w),
        MPI_Ialltoallv_c(s, scnt, dis, MPI_LONG_LONG, r, rcnts, rdis, MPI_LONG_LONG, w, &q_),
        MPI_Alltoallv_init_c(s, scnt, dis, MPI_LONG_LONG, r, rcnts, rdis, MPI_LONG_LONG, w, in, &q_));
    for (int j = 0; j < p; j++)
        PLX_CHECK_EQ(r[j * K + j % K], VAL(j, rank, j % K), "Alltoallv_c data");
    MPI_Aint *bdis = plx_malloc((size_t)p * sizeof *bdis);
    for (int j = 0; j < p; j++)
        ty[j] = MPI_LONG_LONG, bdis[j] = (MPI_Aint)(j * K * sizeof(long long));
    memset(r, 0, (size_t)p * K * sizeof *r);
    RUN(mode, MPI_Alltoallw_c(s, scnt, bdis, ty, r, rcnts, bdis, ty, w),
        MPI_Ialltoallw_c(s, scnt, bdis, ty, r, rcnts, bdis, ty, w, &q_),
        MPI_Alltoallw_init_c(s, scnt, bdis, ty, r, rcnts, bdis, ty, w, in, &q_));
    for (int j = 0; j < p; j++)
        PLX_CHECK_EQ(r[j * K + j % K], VAL(j, rank, j % K), "Alltoallw_c data");

    /* reductions, with a predefined op and an MPI_Op_create_c one */
    MPI_Op usum;
    PLX_CHECK_MPI(MPI_Op_create_c(user_sum_c, 1, &usum));
    for (int o = 0; o < 2; o++) {
        MPI_Op op = o ? usum : MPI_SUM;
        long long tot = (long long)p * (p - 1) / 2;
        for (int i = 0; i < p * K; i++)
            s[i] = rank + i;
        memset(r, 0, (size_t)p * K * sizeof *r);
        RUN(mode, MPI_Reduce_c(s, r, K, MPI_LONG_LONG, op, root, w),
            MPI_Ireduce_c(s, r, K, MPI_LONG_LONG, op, root, w, &q_),
            MPI_Reduce_init_c(s, r, K, MPI_LONG_LONG, op, root, w, in, &q_));
        if (rank == root)
            PLX_CHECK_EQ(r[K - 1], tot + (long long)p * (K - 1), "Reduce_c sum");
        memset(r, 0, (size_t)p * K * sizeof *r);
        RUN(mode, MPI_Allreduce_c(s, r, K, MPI_LONG_LONG, op, w),
            MPI_Iallreduce_c(s, r, K, MPI_LONG_LONG, op, w, &q_),
            MPI_Allreduce_init_c(s, r, K, MPI_LONG_LONG, op, w, in, &q_));
        PLX_CHECK_EQ(r[2], tot + 2LL * p, "Allreduce_c sum");
        memset(r, 0, (size_t)p * K * sizeof *r);
        RUN(mode, MPI_Scan_c(s, r, K, MPI_LONG_LONG, op, w), MPI_Iscan_c(s, r, K, MPI_LONG_LONG, op, w, &q_),
            MPI_Scan_init_c(s, r, K, MPI_LONG_LONG, op, w, in, &q_));
        PLX_CHECK_EQ(r[1], (long long)rank * (rank + 1) / 2 + (rank + 1), "Scan_c sum");
        memset(r, 0, (size_t)p * K * sizeof *r);
        RUN(mode, MPI_Exscan_c(s, r, K, MPI_LONG_LONG, op, w), MPI_Iexscan_c(s, r, K, MPI_LONG_LONG, op, w, &q_),
            MPI_Exscan_init_c(s, r, K, MPI_LONG_LONG, op, w, in, &q_));
        if (rank > 0)
            PLX_CHECK_EQ(r[1], (long long)(rank - 1) * rank / 2 + rank, "Exscan_c sum");
        memset(r, 0, (size_t)p * K * sizeof *r);
        RUN(mode, MPI_Reduce_scatter_block_c(s, r, K, MPI_LONG_LONG, op, w),
            MPI_Ireduce_scatter_block_c(s, r, K, MPI_LONG_LONG, op, w, &q_),
            MPI_Reduce_scatter_block_init_c(s, r, K, MPI_LONG_LONG, op, w, in, &q_));
        PLX_CHECK_EQ(r[1], tot + (long long)p * (rank * K + 1), "Reduce_scatter_block_c sum");
        /* rank j gets j%K+1 elements starting at element sum of earlier counts */
        MPI_Count off = 0;
        for (int j = 0; j < rank; j++)
            off += cnts[j];
        memset(r, 0, (size_t)p * K * sizeof *r);
        RUN(mode, MPI_Reduce_scatter_c(s, r, cnts, MPI_LONG_LONG, op, w),
            MPI_Ireduce_scatter_c(s, r, cnts, MPI_LONG_LONG, op, w, &q_),
            MPI_Reduce_scatter_init_c(s, r, cnts, MPI_LONG_LONG, op, w, in, &q_));
        PLX_CHECK_EQ(r[mine - 1], tot + (long long)p * (off + mine - 1), "Reduce_scatter_c sum");
    }
    /* Reduce_local_c with both ops */
    long long a[K], b[K];
    for (int i = 0; i < K; i++)
        a[i] = i, b[i] = 10 * i;
    PLX_CHECK_MPI(MPI_Reduce_local_c(a, b, K, MPI_LONG_LONG, usum));
    PLX_CHECK_MPI(MPI_Reduce_local_c(a, b, K, MPI_LONG_LONG, MPI_SUM));
    PLX_CHECK_EQ(b[4], 48LL, "Reduce_local_c");
    PLX_CHECK_MPI(MPI_Op_free(&usum));

    if (mode == 0) {
        /* errors: negative counts name their argument's class */
        cnts[p - 1] = -1;
        PLX_CHECK_ERR(MPI_Allgatherv_c(s, mine, MPI_LONG_LONG, r, cnts, dis, MPI_LONG_LONG, w), MPI_ERR_COUNT);
        PLX_CHECK_ERR(MPI_Bcast_c(s, -3, MPI_LONG_LONG, 0, w), MPI_ERR_COUNT);
        PLX_CHECK_ERR(MPI_Reduce_scatter_c(s, r, cnts, MPI_LONG_LONG, MPI_SUM, w), MPI_ERR_COUNT);
    }
    free(s), free(r), free(cnts), free(rcnts), free(dis), free(rdis), free(ty), free(scnt), free(bdis);
#undef VAL
}

/* Neighbourhood collectives on a periodic ring: left neighbour's block 1,
 * right neighbour's block 0. */
static void neighbours(int mode)
{
    MPI_Comm ring;
    int dims[1] = { size }, periods[1] = { 1 };
    PLX_CHECK_MPI(MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &ring));
    int left = (rank + size - 1) % size, right = (rank + 1) % size;
    enum { K = 3 };
    int s[2 * K], r[2 * K];
    MPI_Count c[2] = { K, K };
    MPI_Aint d[2] = { 0, K }, bd[2] = { 0, K * sizeof(int) };
    MPI_Datatype t[2] = { MPI_INT, MPI_INT };
    MPI_Info in = MPI_INFO_NULL;
    for (int i = 0; i < 2 * K; i++)
        s[i] = rank * 100 + i;
    /* allgather: both neighbours get my first K */
    memset(r, 0, sizeof r);
    RUN(mode, MPI_Neighbor_allgather_c(s, K, MPI_INT, r, K, MPI_INT, ring),
        MPI_Ineighbor_allgather_c(s, K, MPI_INT, r, K, MPI_INT, ring, &q_),
        MPI_Neighbor_allgather_init_c(s, K, MPI_INT, r, K, MPI_INT, ring, in, &q_));
    PLX_CHECK(r[0] == left * 100 && r[K] == right * 100, "Neighbor_allgather_c data (%d %d)", r[0], r[K]);
    memset(r, 0, sizeof r);
    RUN(mode, MPI_Neighbor_allgatherv_c(s, K, MPI_INT, r, c, d, MPI_INT, ring),
        MPI_Ineighbor_allgatherv_c(s, K, MPI_INT, r, c, d, MPI_INT, ring, &q_),
        MPI_Neighbor_allgatherv_init_c(s, K, MPI_INT, r, c, d, MPI_INT, ring, in, &q_));
    PLX_CHECK(r[K - 1] == left * 100 + K - 1 && r[2 * K - 1] == right * 100 + K - 1,
              "Neighbor_allgatherv_c data");
    /* alltoall: block 0 goes left, block 1 right */
    memset(r, 0, sizeof r);
    RUN(mode, MPI_Neighbor_alltoall_c(s, K, MPI_INT, r, K, MPI_INT, ring),
        MPI_Ineighbor_alltoall_c(s, K, MPI_INT, r, K, MPI_INT, ring, &q_),
        MPI_Neighbor_alltoall_init_c(s, K, MPI_INT, r, K, MPI_INT, ring, in, &q_));
    PLX_CHECK(r[0] == left * 100 + K && r[K] == right * 100, "Neighbor_alltoall_c data (%d %d)", r[0], r[K]);
    memset(r, 0, sizeof r);
    RUN(mode, MPI_Neighbor_alltoallv_c(s, c, d, MPI_INT, r, c, d, MPI_INT, ring),
        MPI_Ineighbor_alltoallv_c(s, c, d, MPI_INT, r, c, d, MPI_INT, ring, &q_),
        MPI_Neighbor_alltoallv_init_c(s, c, d, MPI_INT, r, c, d, MPI_INT, ring, in, &q_));
    PLX_CHECK(r[1] == left * 100 + K + 1 && r[K + 1] == right * 100 + 1, "Neighbor_alltoallv_c data");
    memset(r, 0, sizeof r);
    RUN(mode, MPI_Neighbor_alltoallw_c(s, c, bd, t, r, c, bd, t, ring),
        MPI_Ineighbor_alltoallw_c(s, c, bd, t, r, c, bd, t, ring, &q_),
        MPI_Neighbor_alltoallw_init_c(s, c, bd, t, r, c, bd, t, ring, in, &q_));
    PLX_CHECK(r[2] == left * 100 + K + 2 && r[K + 2] == right * 100 + 2, "Neighbor_alltoallw_c data");
    MPI_Comm_free(&ring);
}

/* --- datatypes and pack ---------------------------------------------------- */

/* Same size, extent and typemap (packed bytes of a patterned buffer) as the int form's type. */
static void same_type(MPI_Datatype a, MPI_Datatype b, const char *what)
{
    MPI_Count sa = -1, la = -1, ea = -1, sb = -2, lb = -2, eb = -2;
    MPI_Type_commit(&a);
    MPI_Type_commit(&b);
    PLX_CHECK_MPI(MPI_Type_size_c(a, &sa));
    PLX_CHECK_MPI(MPI_Type_get_extent_c(a, &la, &ea));
    MPI_Type_size_x(b, &sb);
    MPI_Type_get_extent_x(b, &lb, &eb);
    PLX_CHECK(sa == sb && la == lb && ea == eb, "%s: size %lld/%lld lb %lld/%lld extent %lld/%lld", what,
              (long long)sa, (long long)sb, (long long)la, (long long)lb, (long long)ea, (long long)eb);
    PLX_CHECK_MPI(MPI_Type_get_true_extent_c(a, &la, &ea));
    MPI_Type_get_true_extent_x(b, &lb, &eb);
    PLX_CHECK(la == lb && ea == eb, "%s: true extent", what);
    int src[512];
    for (int i = 0; i < 512; i++)
        src[i] = i * 3 + 1;
    char pa[2048], pb[2048];
    MPI_Count pos = 0;
    int ipos = 0;
    memset(pa, 0, sizeof pa);
    memset(pb, 1, sizeof pb);
    PLX_CHECK_MPI(MPI_Pack_c(src, 1, a, pa, (MPI_Count)sizeof pa, &pos, MPI_COMM_WORLD));
    MPI_Pack(src, 1, b, pb, (int)sizeof pb, &ipos, MPI_COMM_WORLD);
    PLX_CHECK(pos == ipos && pos == sa, "%s: Pack_c position %lld (int form %d)", what, (long long)pos, ipos);
    PLX_CHECK_MEM(pa, pb, (size_t)pos, what);
    int back[512];
    memset(back, 0, sizeof back);
    pos = 0;
    PLX_CHECK_MPI(MPI_Unpack_c(pa, (MPI_Count)sizeof pa, &pos, back, 1, a, MPI_COMM_WORLD));
    PLX_CHECK(pos == sa, "%s: Unpack_c position", what);
    char pc[2048];
    ipos = 0;
    MPI_Pack(back, 1, b, pc, (int)sizeof pc, &ipos, MPI_COMM_WORLD);
    PLX_CHECK_MEM(pc, pa, (size_t)sa, "Unpack_c data packs the same again");
    MPI_Count psz = -1;
    PLX_CHECK_MPI(MPI_Pack_size_c(3, a, MPI_COMM_WORLD, &psz));
    PLX_CHECK_EQ(psz, 3 * sa, "Pack_size_c");
    MPI_Type_free(&a);
    MPI_Type_free(&b);
}

static void datatypes(void)
{
    MPI_Datatype a, b;
    PLX_CHECK_MPI(MPI_Type_contiguous_c(7, MPI_INT, &a));
    MPI_Type_contiguous(7, MPI_INT, &b);
    same_type(a, b, "Type_contiguous_c");
    PLX_CHECK_MPI(MPI_Type_vector_c(4, 3, 5, MPI_INT, &a));
    MPI_Type_vector(4, 3, 5, MPI_INT, &b);
    same_type(a, b, "Type_vector_c");
    PLX_CHECK_MPI(MPI_Type_create_hvector_c(4, 2, 24, MPI_INT, &a));
    MPI_Type_create_hvector(4, 2, 24, MPI_INT, &b);
    same_type(a, b, "Type_create_hvector_c");
    MPI_Count bl[3] = { 2, 1, 4 }, di[3] = { 0, 5, 9 }, bdi[3] = { 0, 20, 40 };
    int ibl[3] = { 2, 1, 4 }, idi[3] = { 0, 5, 9 };
    MPI_Aint abdi[3] = { 0, 20, 40 };
    PLX_CHECK_MPI(MPI_Type_indexed_c(3, bl, di, MPI_INT, &a));
    MPI_Type_indexed(3, ibl, idi, MPI_INT, &b);
    same_type(a, b, "Type_indexed_c");
    PLX_CHECK_MPI(MPI_Type_create_hindexed_c(3, bl, bdi, MPI_INT, &a));
    MPI_Type_create_hindexed(3, ibl, abdi, MPI_INT, &b);
    same_type(a, b, "Type_create_hindexed_c");
    PLX_CHECK_MPI(MPI_Type_create_indexed_block_c(3, 2, di, MPI_INT, &a));
    MPI_Type_create_indexed_block(3, 2, idi, MPI_INT, &b);
    same_type(a, b, "Type_create_indexed_block_c");
    PLX_CHECK_MPI(MPI_Type_create_hindexed_block_c(3, 2, bdi, MPI_INT, &a));
    MPI_Type_create_hindexed_block(3, 2, abdi, MPI_INT, &b);
    same_type(a, b, "Type_create_hindexed_block_c");
    MPI_Datatype ts[3] = { MPI_INT, MPI_SHORT, MPI_INT };
    PLX_CHECK_MPI(MPI_Type_create_struct_c(3, bl, bdi, ts, &a));
    MPI_Type_create_struct(3, ibl, abdi, ts, &b);
    same_type(a, b, "Type_create_struct_c");
    MPI_Count sz[2] = { 8, 10 }, sub[2] = { 3, 4 }, st[2] = { 2, 5 };
    int isz[2] = { 8, 10 }, isub[2] = { 3, 4 }, ist[2] = { 2, 5 };
    PLX_CHECK_MPI(MPI_Type_create_subarray_c(2, sz, sub, st, MPI_ORDER_C, MPI_INT, &a));
    MPI_Type_create_subarray(2, isz, isub, ist, MPI_ORDER_C, MPI_INT, &b);
    same_type(a, b, "Type_create_subarray_c");
    MPI_Count gs[2] = { 6, 8 };
    int igs[2] = { 6, 8 }, distr[2] = { MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_CYCLIC },
        dargs[2] = { MPI_DISTRIBUTE_DFLT_DARG, 2 }, ps[2] = { 2, 2 };
    PLX_CHECK_MPI(MPI_Type_create_darray_c(4, 3, 2, gs, distr, dargs, ps, MPI_ORDER_C, MPI_INT, &a));
    MPI_Type_create_darray(4, 3, 2, igs, distr, dargs, ps, MPI_ORDER_C, MPI_INT, &b);
    same_type(a, b, "Type_create_darray_c");
    PLX_CHECK_MPI(MPI_Type_create_resized_c(MPI_INT, -4, 16, &a));
    MPI_Type_create_resized(MPI_INT, -4, 16, &b);
    same_type(a, b, "Type_create_resized_c");

    /* envelope and contents of a vector made by the _c constructor */
    PLX_CHECK_MPI(MPI_Type_vector_c(4, 3, 5, MPI_INT, &a));
    MPI_Count ni = -1, na = -1, nl = -1, nd = -1;
    int comb = -1;
    PLX_CHECK_MPI(MPI_Type_get_envelope_c(a, &ni, &na, &nl, &nd, &comb));
    PLX_CHECK(ni == 3 && na == 0 && nl == 0 && nd == 1 && comb == MPI_COMBINER_VECTOR,
              "Type_get_envelope_c of a vector: %lld %lld %lld %lld %d", (long long)ni, (long long)na,
              (long long)nl, (long long)nd, comb);
    int ints[3] = { 0 };
    MPI_Aint addrs[1];
    MPI_Count lcs[1];
    MPI_Datatype tys[1] = { MPI_DATATYPE_NULL };
    PLX_CHECK_MPI(MPI_Type_get_contents_c(a, 3, 0, 0, 1, ints, addrs, lcs, tys));
    PLX_CHECK(ints[0] == 4 && ints[1] == 3 && ints[2] == 5 && tys[0] == MPI_INT,
              "Type_get_contents_c of a vector: %d %d %d", ints[0], ints[1], ints[2]);
    MPI_Type_free(&a);

    /* external32 */
    int v[4] = { 1, -2, 0x01020304, 7 }, back[4] = { 0 };
    unsigned char x32[16];
    MPI_Count xs = -1, pos = 0;
    PLX_CHECK_MPI(MPI_Pack_external_size_c("external32", 4, MPI_INT, &xs));
    PLX_CHECK_EQ(xs, (MPI_Count)16, "Pack_external_size_c");
    PLX_CHECK_MPI(MPI_Pack_external_c("external32", v, 4, MPI_INT, x32, 16, &pos));
    PLX_CHECK(pos == 16 && x32[8] == 1 && x32[11] == 4, "Pack_external_c is big-endian (pos %lld)",
              (long long)pos);
    pos = 0;
    PLX_CHECK_MPI(MPI_Unpack_external_c("external32", x32, 16, &pos, back, 4, MPI_INT));
    PLX_CHECK(pos == 16 && memcmp(v, back, sizeof v) == 0, "Unpack_external_c round trip");

    /* errors: what the constructors cannot keep in an int, negative counts */
    /* contiguous and vector take counts above an int, recorded as large counts */
    PLX_CHECK_MPI(MPI_Type_contiguous_c((MPI_Count)1 << 31, MPI_INT, &a));
    MPI_Count tsz = -1;
    PLX_CHECK_MPI(MPI_Type_size_c(a, &tsz));
    PLX_CHECK_EQ(tsz, (MPI_Count)1 << 33, "size of 2^31 ints");
    PLX_CHECK_MPI(MPI_Type_get_envelope_c(a, &ni, &na, &nl, &nd, &comb));
    PLX_CHECK(ni == 0 && na == 0 && nl == 1 && nd == 1 && comb == MPI_COMBINER_CONTIGUOUS,
              "envelope_c of a large contiguous: %lld %lld %lld %lld", (long long)ni, (long long)na, (long long)nl,
              (long long)nd);
    PLX_CHECK_MPI(MPI_Type_get_contents_c(a, 0, 0, 1, 1, ints, addrs, lcs, tys));
    PLX_CHECK(lcs[0] == (MPI_Count)1 << 31 && tys[0] == MPI_INT, "contents_c: the large count");
    int i_ni, i_na, i_nd, i_comb;
    PLX_CHECK_ERR(MPI_Type_get_envelope(a, &i_ni, &i_na, &i_nd, &i_comb), MPI_ERR_TYPE);
    PLX_CHECK_ERR(MPI_Type_get_contents(a, 0, 0, 1, ints, addrs, tys), MPI_ERR_TYPE);
    MPI_Type_free(&a);
    MPI_Count vl[3];
    PLX_CHECK_MPI(MPI_Type_vector_c(2, (MPI_Count)INT_MAX + 1, (MPI_Count)INT_MAX + 7, MPI_BYTE, &a));
    PLX_CHECK_MPI(MPI_Type_get_envelope_c(a, &ni, &na, &nl, &nd, &comb));
    PLX_CHECK(nl == 3 && comb == MPI_COMBINER_VECTOR, "envelope_c of a large vector");
    PLX_CHECK_MPI(MPI_Type_get_contents_c(a, 0, 0, 3, 1, ints, addrs, vl, tys));
    PLX_CHECK(vl[0] == 2 && vl[1] == (MPI_Count)INT_MAX + 1 && vl[2] == (MPI_Count)INT_MAX + 7,
              "contents_c of a large vector");
    MPI_Count lb = -1, ext = -1;
    PLX_CHECK_MPI(MPI_Type_get_extent_c(a, &lb, &ext));
    PLX_CHECK_EQ(ext, (MPI_Count)INT_MAX + 7 + (MPI_Count)INT_MAX + 1, "extent of a large vector");
    MPI_Type_free(&a);
    MPI_Count badbl[2] = { 1, (MPI_Count)1 << 40 };
    PLX_CHECK_ERR(MPI_Type_indexed_c(2, badbl, di, MPI_INT, &a), MPI_ERR_COUNT);
    PLX_CHECK_ERR(MPI_Type_contiguous_c(-1, MPI_INT, &a), MPI_ERR_COUNT);
    pos = 0;
    char tiny[4];
    PLX_CHECK_ERR(MPI_Pack_c(v, 4, MPI_INT, tiny, 4, &pos, MPI_COMM_WORLD), MPI_ERR_TRUNCATE);
    /* Pack_size of more bytes than an int holds: int form refuses, _c answers */
    int isize = 0;
    PLX_CHECK_ERR(MPI_Pack_size(INT_MAX, MPI_DOUBLE, MPI_COMM_WORLD, &isize), MPI_ERR_COUNT);
    PLX_CHECK_MPI(MPI_Pack_size_c(INT_MAX, MPI_DOUBLE, MPI_COMM_WORLD, &xs));
    PLX_CHECK_EQ(xs, (MPI_Count)INT_MAX * 8, "Pack_size_c above 2^31");
}

/* --- file I/O ------------------------------------------------------------- */

static void file_io(void)
{
    char path[256];
    snprintf(path, sizeof path, "/tmp/plx_large_count_%d.dat", (int)getpid());
    MPI_Bcast(path, (int)sizeof path, MPI_CHAR, 0, MPI_COMM_WORLD);
    MPI_File fh;
    PLX_CHECK_MPI(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE,
                                MPI_INFO_NULL, &fh));
    enum { N = 64 };
    int w[N], r[N];
    MPI_Status st;
    MPI_Count cnt = -1;
    MPI_Request q;
    MPI_Offset base = (MPI_Offset)rank * 8 * N * (MPI_Offset)sizeof(int);
    for (int i = 0; i < N; i++)
        w[i] = rank * 1000 + i;
    /* at explicit offsets: one quarter each way */
    PLX_CHECK_MPI(MPI_File_write_at_c(fh, base, w, N, MPI_INT, &st));
    PLX_CHECK_MPI(MPI_Get_count_c(&st, MPI_INT, &cnt));
    PLX_CHECK_EQ(cnt, (MPI_Count)N, "File_write_at_c count");
    PLX_CHECK_MPI(MPI_File_write_at_all_c(fh, base + N * 4, w, N, MPI_INT, &st));
    PLX_CHECK_MPI(MPI_File_iwrite_at_c(fh, base + 2 * N * 4, w, N, MPI_INT, &q));
    PLX_CHECK_MPI(MPI_Wait(&q, &st));
    PLX_CHECK_MPI(MPI_File_iwrite_at_all_c(fh, base + 3 * N * 4, w, N, MPI_INT, &q));
    PLX_CHECK_MPI(MPI_Wait(&q, &st));
    PLX_CHECK_MPI(MPI_File_write_at_all_begin_c(fh, base + 4 * N * 4, w, N, MPI_INT));
    PLX_CHECK_MPI(MPI_File_write_at_all_end(fh, w, &st));
    /* individual pointer: seek to block 5 */
    PLX_CHECK_MPI(MPI_File_seek(fh, base + 5 * N * 4, MPI_SEEK_SET));
    PLX_CHECK_MPI(MPI_File_write_c(fh, w, N / 2, MPI_INT, &st));
    PLX_CHECK_MPI(MPI_File_write_all_c(fh, w + N / 2, N / 4, MPI_INT, &st));
    PLX_CHECK_MPI(MPI_File_iwrite_c(fh, w + 3 * N / 4, N / 8, MPI_INT, &q));
    PLX_CHECK_MPI(MPI_Wait(&q, &st));
    PLX_CHECK_MPI(MPI_File_iwrite_all_c(fh, w + 7 * N / 8, N / 16, MPI_INT, &q));
    PLX_CHECK_MPI(MPI_Wait(&q, &st));
    PLX_CHECK_MPI(MPI_File_write_all_begin_c(fh, w + 15 * N / 16, N / 16, MPI_INT));
    PLX_CHECK_MPI(MPI_File_write_all_end(fh, w + 15 * N / 16, &st));
    PLX_CHECK_MPI(MPI_File_sync(fh));
    MPI_Barrier(MPI_COMM_WORLD);
    /* read every block back with the read forms */
    for (int blk = 0; blk < 6; blk++) {
        memset(r, 0, sizeof r);
        MPI_Offset at = base + blk * N * 4;
        switch (blk) {
        case 0: PLX_CHECK_MPI(MPI_File_read_at_c(fh, at, r, N, MPI_INT, &st)); break;
        case 1: PLX_CHECK_MPI(MPI_File_read_at_all_c(fh, at, r, N, MPI_INT, &st)); break;
        case 2:
            PLX_CHECK_MPI(MPI_File_iread_at_c(fh, at, r, N, MPI_INT, &q));
            PLX_CHECK_MPI(MPI_Wait(&q, &st));
            break;
        case 3:
            PLX_CHECK_MPI(MPI_File_iread_at_all_c(fh, at, r, N, MPI_INT, &q));
            PLX_CHECK_MPI(MPI_Wait(&q, &st));
            break;
        case 4:
            PLX_CHECK_MPI(MPI_File_read_at_all_begin_c(fh, at, r, N, MPI_INT));
            PLX_CHECK_MPI(MPI_File_read_at_all_end(fh, r, &st));
            break;
        default:
            PLX_CHECK_MPI(MPI_File_seek(fh, at, MPI_SEEK_SET));
            PLX_CHECK_MPI(MPI_File_read_c(fh, r, N / 2, MPI_INT, &st));
            PLX_CHECK_MPI(MPI_File_read_all_c(fh, r + N / 2, N / 4, MPI_INT, &st));
            PLX_CHECK_MPI(MPI_File_iread_c(fh, r + 3 * N / 4, N / 8, MPI_INT, &q));
            PLX_CHECK_MPI(MPI_Wait(&q, &st));
            PLX_CHECK_MPI(MPI_File_iread_all_c(fh, r + 7 * N / 8, N / 16, MPI_INT, &q));
            PLX_CHECK_MPI(MPI_Wait(&q, &st));
            PLX_CHECK_MPI(MPI_File_read_all_begin_c(fh, r + 15 * N / 16, N / 16, MPI_INT));
            PLX_CHECK_MPI(MPI_File_read_all_end(fh, r + 15 * N / 16, &st));
            break;
        }
        PLX_CHECK_MEM(r, w, sizeof w, "file _c read back");
    }
    /* shared and ordered pointers: each rank's record lands once, in rank order for ordered */
    MPI_Barrier(MPI_COMM_WORLD);
    PLX_CHECK_MPI(MPI_File_set_size(fh, 0));
    PLX_CHECK_MPI(MPI_File_seek_shared(fh, 0, MPI_SEEK_SET));
    PLX_CHECK_MPI(MPI_File_write_ordered_c(fh, w, 4, MPI_INT, &st));
    PLX_CHECK_MPI(MPI_File_write_ordered_begin_c(fh, w, 4, MPI_INT));
    PLX_CHECK_MPI(MPI_File_write_ordered_end(fh, w, &st));
    PLX_CHECK_MPI(MPI_File_write_shared_c(fh, w, 2, MPI_INT, &st));
    PLX_CHECK_MPI(MPI_File_iwrite_shared_c(fh, w + 2, 2, MPI_INT, &q));
    PLX_CHECK_MPI(MPI_Wait(&q, &st));
    MPI_Barrier(MPI_COMM_WORLD);
    PLX_CHECK_MPI(MPI_File_seek_shared(fh, 0, MPI_SEEK_SET));
    memset(r, 0, sizeof r);
    PLX_CHECK_MPI(MPI_File_read_ordered_c(fh, r, 4, MPI_INT, &st));
    PLX_CHECK(r[0] == rank * 1000 && r[3] == rank * 1000 + 3, "File_read_ordered_c: my record (%d)", r[0]);
    PLX_CHECK_MPI(MPI_File_read_ordered_begin_c(fh, r, 4, MPI_INT));
    PLX_CHECK_MPI(MPI_File_read_ordered_end(fh, r, &st));
    PLX_CHECK(r[0] == rank * 1000 && r[3] == rank * 1000 + 3, "File_read_ordered_begin_c: my record");
    /* the shared pointer's 2+2 records per rank: read them all through the shared pointer */
    int got = 0;
    for (int k = 0; k < 2; k++) {
        memset(r, 0xff, sizeof r);
        if (k == 0) {
            PLX_CHECK_MPI(MPI_File_read_shared_c(fh, r, 2, MPI_INT, &st));
        } else {
            PLX_CHECK_MPI(MPI_File_iread_shared_c(fh, r, 2, MPI_INT, &q));
            PLX_CHECK_MPI(MPI_Wait(&q, &st));
        }
        PLX_CHECK_MPI(MPI_Get_count_c(&st, MPI_INT, &cnt));
        got += (int)cnt;
        PLX_CHECK(r[0] % 1000 == 0 || r[0] % 1000 == 2, "File_read_shared_c record start %d", r[0]);
    }
    PLX_CHECK_EQ(got, 4, "File_read_shared_c counts");
    MPI_Count ext = -1;
    PLX_CHECK_MPI(MPI_File_get_type_extent_c(fh, MPI_DOUBLE, &ext));
    PLX_CHECK_EQ(ext, (MPI_Count)8, "File_get_type_extent_c");
    PLX_CHECK_ERR(MPI_File_write_at_c(fh, 0, w, -1, MPI_INT, &st), MPI_ERR_COUNT);
    PLX_CHECK_MPI(MPI_File_close(&fh));
}

/* --- above 2^31 elements --------------------------------------------------- */

static void big(void)
{
    const MPI_Count n = ((MPI_Count)1 << 31) + 5;
    unsigned char *buf = plx_malloc((size_t)n);
    MPI_Status st;
    MPI_Count cnt = -1;
    int icnt = 0;
    uint32_t seed = plx_seed(0, 1, 31, 5);
    if (rank == 0)
        plx_fill(buf, (size_t)n, seed);
    else
        memset(buf, 0, (size_t)n);
    if (rank == 0) {
        PLX_CHECK_MPI(MPI_Send_c(buf, n, MPI_BYTE, 1, 77, MPI_COMM_WORLD));
    } else if (rank == 1) {
        PLX_CHECK_MPI(MPI_Recv_c(buf, n, MPI_BYTE, 0, 77, MPI_COMM_WORLD, &st));
        PLX_CHECK_MPI(MPI_Get_count_c(&st, MPI_BYTE, &cnt));
        PLX_CHECK_EQ(cnt, n, "MPI_Get_count_c of 2^31+5 bytes");
        PLX_CHECK_MPI(MPI_Get_count(&st, MPI_BYTE, &icnt));
        PLX_CHECK_EQ(icnt, MPI_UNDEFINED, "MPI_Get_count of 2^31+5 bytes");
        PLX_CHECK_PATTERN(buf, (size_t)n, seed, "Send_c/Recv_c of 2^31+5 bytes");
    }
    /* and back out to everyone with Bcast_c from rank 1 */
    uint32_t seed2 = plx_seed(1, 2, 31, 5);
    if (rank == 1)
        plx_fill(buf, (size_t)n, seed2);
    else
        memset(buf, 0, (size_t)n);
    PLX_CHECK_MPI(MPI_Bcast_c(buf, n, MPI_BYTE, 1, MPI_COMM_WORLD));
    PLX_CHECK_PATTERN(buf, (size_t)n, seed2, "Bcast_c of 2^31+5 bytes");
    free(buf);
}

int main(int argc, char **argv)
{
    int want_big = 0;
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--big"))
            want_big = 1;
    plx_test_init(&argc, &argv, "large_count");
    rank = plx_test_state()->rank;
    size = plx_test_state()->size;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_RETURN);
    if (want_big) {
        if (size < 2)
            PLX_CHECK(0, "--big needs 2 ranks");
        else
            big();
        return plx_test_finish();
    }
    pt2pt();
    for (int mode = 0; mode < 3; mode++) {
        coll(mode);
        neighbours(mode);
    }
    datatypes();
    file_io();
    return plx_test_finish();
}
