/*
 * Nonblocking collectives: every I-form with its data checked; progress
 * while the application computes and only calls MPI_Test; many
 * collectives outstanding at once on one communicator; collectives on
 * different communicators started in different orders on different ranks;
 * wildcard point-to-point receives posted across collectives never match
 * collective traffic.
 */
#include "plx_test.h"

static int rank, size;

static double now(void)
{
    return MPI_Wtime();
}

/* a few microseconds of floating-point work */
static double compute(double x, int n)
{
    for (int i = 0; i < n; i++)
        x = x * 1.0000001 + 1e-9;
    return x;
}

static void test_every_form(void)
{
    enum { K = 300 };
    int p = size;
    int *a = plx_malloc(K * sizeof(int)), *all = plx_malloc((size_t)K * p * sizeof(int));
    int *b = plx_malloc((size_t)K * p * sizeof(int));
    int *cnt = plx_malloc((size_t)p * sizeof(int)), *dis = plx_malloc((size_t)p * sizeof(int));
    MPI_Request rq[14];
    for (int i = 0; i < K; i++)
        a[i] = rank * 1000 + i;
    for (int r = 0; r < p; r++) {
        cnt[r] = r % 2 ? 0 : K / 2;
        dis[r] = r * K;
    }
    int root = p - 1;
    int bc[K], sc[K], scan = 0, exs = -1, rsb = 0;
    int *ga = plx_malloc((size_t)K * p * sizeof(int)), *gv = plx_malloc((size_t)K * p * sizeof(int));
    int *ag = plx_malloc((size_t)K * p * sizeof(int)), *agv = plx_malloc((size_t)K * p * sizeof(int));
    int *at = plx_malloc((size_t)K * p * sizeof(int)), *atv = plx_malloc((size_t)K * p * sizeof(int));
    int *atw = plx_malloc((size_t)K * p * sizeof(int)), *sv = plx_malloc(K * sizeof(int));
    int *red = plx_malloc(K * sizeof(int)), *ared = plx_malloc(K * sizeof(int)), *rs = plx_malloc(K * sizeof(int));
    int *rcnt = plx_malloc((size_t)p * sizeof(int));
    MPI_Aint *bdis = plx_malloc((size_t)p * sizeof(MPI_Aint));
    int *wdis = plx_malloc((size_t)p * sizeof(int)), *wcnt = plx_malloc((size_t)p * sizeof(int));
    MPI_Datatype *wt = plx_malloc((size_t)p * sizeof(MPI_Datatype));
    for (int r = 0; r < p; r++) {
        wcnt[r] = K;
        wdis[r] = r * K * (int)sizeof(int);
        wt[r] = MPI_INT;
        rcnt[r] = r == 0 ? K : 0;
        bdis[r] = 0;
    }
    for (int i = 0; i < K * p; i++)
        b[i] = rank * 100000 + i; /* alltoall source: block r goes to rank r */
    for (int i = 0; i < K; i++)
        bc[i] = rank == root ? 7 * i : -1;
    if (rank == root)
        for (int i = 0; i < K * p; i++)
            all[i] = 3 * i;
    int one = rank + 1;
    PLX_CHECK_MPI(MPI_Ibcast(bc, K, MPI_INT, root, MPI_COMM_WORLD, &rq[0]));
    PLX_CHECK_MPI(MPI_Igather(a, K, MPI_INT, ga, K, MPI_INT, root, MPI_COMM_WORLD, &rq[1]));
    PLX_CHECK_MPI(MPI_Igatherv(a, cnt[rank], MPI_INT, gv, cnt, dis, MPI_INT, root, MPI_COMM_WORLD, &rq[2]));
    PLX_CHECK_MPI(MPI_Iscatter(all, K, MPI_INT, sc, K, MPI_INT, root, MPI_COMM_WORLD, &rq[3]));
    PLX_CHECK_MPI(MPI_Iscatterv(all, cnt, dis, MPI_INT, sv, cnt[rank], MPI_INT, root, MPI_COMM_WORLD, &rq[4]));
    PLX_CHECK_MPI(MPI_Iallgather(a, K, MPI_INT, ag, K, MPI_INT, MPI_COMM_WORLD, &rq[5]));
    PLX_CHECK_MPI(MPI_Iallgatherv(a, cnt[rank], MPI_INT, agv, cnt, dis, MPI_INT, MPI_COMM_WORLD, &rq[6]));
    PLX_CHECK_MPI(MPI_Ialltoall(b, K, MPI_INT, at, K, MPI_INT, MPI_COMM_WORLD, &rq[7]));
    int *acnt = plx_malloc((size_t)p * sizeof(int)), *adis = plx_malloc((size_t)p * sizeof(int));
    for (int r = 0; r < p; r++) {
        acnt[r] = K;
        adis[r] = r * K;
    }
    PLX_CHECK_MPI(MPI_Ialltoallv(b, acnt, adis, MPI_INT, atv, acnt, adis, MPI_INT, MPI_COMM_WORLD, &rq[8]));
    PLX_CHECK_MPI(MPI_Ialltoallw(b, wcnt, wdis, wt, atw, wcnt, wdis, wt, MPI_COMM_WORLD, &rq[9]));
    PLX_CHECK_MPI(MPI_Ireduce(a, red, K, MPI_INT, MPI_SUM, root, MPI_COMM_WORLD, &rq[10]));
    PLX_CHECK_MPI(MPI_Iallreduce(a, ared, K, MPI_INT, MPI_MAX, MPI_COMM_WORLD, &rq[11]));
    PLX_CHECK_MPI(MPI_Iscan(&one, &scan, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &rq[12]));
    PLX_CHECK_MPI(MPI_Iexscan(&one, &exs, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &rq[13]));
    /* complete in reverse order */
    for (int i = 13; i >= 0; i--)
        PLX_CHECK_MPI(MPI_Wait(&rq[i], MPI_STATUS_IGNORE));
    MPI_Request r2[3];
    int *rsin = plx_malloc((size_t)K * p * sizeof(int));
    for (int i = 0; i < K * p; i++)
        rsin[i] = rank + i;
    PLX_CHECK_MPI(MPI_Ireduce_scatter(rsin, rs, rcnt, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &r2[0]));
    PLX_CHECK_MPI(MPI_Ireduce_scatter_block(rsin, &rsb, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &r2[1]));
    PLX_CHECK_MPI(MPI_Ibarrier(MPI_COMM_WORLD, &r2[2]));
    PLX_CHECK_MPI(MPI_Waitall(3, r2, MPI_STATUSES_IGNORE));
    int ok = 1;
    for (int i = 0; i < K; i++)
        ok &= bc[i] == 7 * i && sc[i] == 3 * (rank * K + i) && ared[i] == (p - 1) * 1000 + i;
    PLX_CHECK(ok, "Ibcast / Iscatter / Iallreduce data");
    ok = 1;
    for (int i = 0; i < cnt[rank]; i++)
        ok &= sv[i] == 3 * (dis[rank] + i);
    PLX_CHECK(ok, "Iscatterv data");
    ok = 1;
    for (int r = 0; r < p; r++)
        for (int i = 0; i < K; i++) {
            ok &= ag[r * K + i] == r * 1000 + i;
            ok &= at[r * K + i] == r * 100000 + rank * K + i;
            ok &= atv[r * K + i] == r * 100000 + rank * K + i;
            ok &= atw[r * K + i] == r * 100000 + rank * K + i;
            if (i < cnt[r])
                ok &= agv[dis[r] + i] == r * 1000 + i;
        }
    PLX_CHECK(ok, "Iallgather(v) / Ialltoall(v/w) data");
    if (rank == root) {
        ok = 1;
        for (int r = 0; r < p; r++)
            for (int i = 0; i < K; i++) {
                ok &= ga[r * K + i] == r * 1000 + i;
                if (i < cnt[r])
                    ok &= gv[dis[r] + i] == r * 1000 + i;
            }
        for (int i = 0; i < K; i++)
            ok &= red[i] == 1000 * p * (p - 1) / 2 + p * i;
        PLX_CHECK(ok, "Igather(v) / Ireduce data");
    }
    PLX_CHECK_EQ(scan, (rank + 1) * (rank + 2) / 2, "Iscan");
    if (rank > 0)
        PLX_CHECK_EQ(exs, rank * (rank + 1) / 2, "Iexscan");
    if (rank == 0) {
        ok = 1;
        for (int i = 0; i < K; i++)
            ok &= rs[i] == p * (p - 1) / 2 + p * i;
        PLX_CHECK(ok, "Ireduce_scatter data");
    }
    PLX_CHECK_EQ(rsb, p * (p - 1) / 2 + p * rank, "Ireduce_scatter_block");
    free(a), free(all), free(b), free(cnt), free(dis), free(ga), free(gv), free(ag), free(agv);
    free(at), free(atv), free(atw), free(sv), free(red), free(ared), free(rs), free(rcnt), free(bdis);
    free(wdis), free(wcnt), free(wt), free(acnt), free(adis), free(rsin);
}

/* A large allreduce completes while the application computes and calls
 * only MPI_Test: the library progresses it from inside MPI_Test. */
static void test_overlap(void)
{
    long n = 1L << 19; /* 4 MiB of doubles */
    double *s = plx_malloc((size_t)n * sizeof(double)), *r = plx_malloc((size_t)n * sizeof(double));
    for (long i = 0; i < n; i++)
        s[i] = rank + (double)(i % 100);
    MPI_Request rq;
    PLX_CHECK_MPI(MPI_Iallreduce(s, r, (int)n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &rq));
    int flag = 0, tests = 0;
    double x = 1, t0 = now();
    while (!flag) {
        x = compute(x, 20000);
        MPI_Test(&rq, &flag, MPI_STATUS_IGNORE);
        tests++;
        plx_pause(tests);
        if (now() - t0 > 60) {
            PLX_CHECK(0, "Iallreduce made no progress through MPI_Test in 60 s");
            break;
        }
    }
    PLX_CHECK(x > 0, "computation");
    long bad = -1;
    for (long i = 0; i < n && bad < 0; i++)
        if (r[i] != size * (size - 1) / 2.0 + size * (double)(i % 100))
            bad = i;
    PLX_CHECK(bad < 0, "Iallreduce overlapped with computation: element %ld", bad);
    /* Ibcast of 8 MiB from the last rank, completed through Testall */
    long m = 1L << 20;
    double *bb = plx_malloc((size_t)m * sizeof(double));
    for (long i = 0; i < m; i++)
        bb[i] = rank == size - 1 ? (double)i : -1.0;
    MPI_Request two[2];
    PLX_CHECK_MPI(MPI_Ibcast(bb, (int)m, MPI_DOUBLE, size - 1, MPI_COMM_WORLD, &two[0]));
    PLX_CHECK_MPI(MPI_Ibarrier(MPI_COMM_WORLD, &two[1]));
    flag = 0;
    t0 = now();
    for (tests = 0; !flag; tests++) {
        x = compute(x, 20000);
        MPI_Testall(2, two, &flag, MPI_STATUSES_IGNORE);
        plx_pause(tests);
        if (now() - t0 > 60) {
            PLX_CHECK(0, "Ibcast made no progress through MPI_Testall in 60 s");
            break;
        }
    }
    bad = -1;
    for (long i = 0; i < m && bad < 0; i++)
        if (bb[i] != (double)i)
            bad = i;
    PLX_CHECK(bad < 0, "Ibcast 8 MiB overlapped: element %ld", bad);
    free(bb);
    free(s);
    free(r);
}

/* Collectives on two communicators started in opposite orders on even and
 * odd ranks; point-to-point wildcards posted across them. */
static void test_communicators(void)
{
    MPI_Comm dup, half;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
    int hsize;
    MPI_Comm_size(half, &hsize);
    /* a wildcard receive on each communicator, satisfied only at the end */
    int got_w = -1, got_d = -1;
    MPI_Request pw, pd;
    MPI_Irecv(&got_w, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &pw);
    MPI_Irecv(&got_d, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, dup, &pd);
    int a = rank, s1 = -1, s2 = -1, s3 = -1;
    MPI_Request rq[3];
    if (rank % 2 == 0) {
        MPI_Iallreduce(&a, &s1, 1, MPI_INT, MPI_SUM, dup, &rq[0]);
        MPI_Iallreduce(&a, &s2, 1, MPI_INT, MPI_SUM, half, &rq[1]);
        MPI_Iallreduce(&a, &s3, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD, &rq[2]);
    } else {
        MPI_Iallreduce(&a, &s3, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD, &rq[2]);
        MPI_Iallreduce(&a, &s2, 1, MPI_INT, MPI_SUM, half, &rq[1]);
        MPI_Iallreduce(&a, &s1, 1, MPI_INT, MPI_SUM, dup, &rq[0]);
    }
    MPI_Waitall(3, rq, MPI_STATUSES_IGNORE);
    PLX_CHECK_EQ(s1, size * (size - 1) / 2, "Iallreduce on a dup");
    PLX_CHECK_EQ(s3, size - 1, "Iallreduce on WORLD");
    int want = 0;
    for (int r = rank % 2; r < size; r += 2)
        want += r;
    PLX_CHECK_EQ(s2, want, "Iallreduce on a split");
    /* blocking collectives while the wildcards are still posted */
    int bsum = -1;
    MPI_Allreduce(&a, &bsum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Barrier(dup);
    PLX_CHECK_EQ(bsum, size * (size - 1) / 2, "Allreduce across a posted wildcard receive");
    int flag = 1;
    MPI_Test(&pw, &flag, MPI_STATUS_IGNORE);
    PLX_CHECK(!flag, "a wildcard receive matched collective traffic on WORLD");
    MPI_Test(&pd, &flag, MPI_STATUS_IGNORE);
    PLX_CHECK(!flag, "a wildcard receive matched collective traffic on a dup");
    /* now satisfy them (once everyone has checked): each rank sends to rank+1 */
    MPI_Barrier(MPI_COMM_WORLD);
    int to = (rank + 1) % size, v = 100 + rank;
    MPI_Send(&v, 1, MPI_INT, to, 42, MPI_COMM_WORLD);
    MPI_Send(&v, 1, MPI_INT, to, 43, dup);
    MPI_Status st;
    MPI_Wait(&pw, &st);
    PLX_CHECK(got_w == 100 + (rank + size - 1) % size && st.MPI_TAG == 42, "user message on WORLD");
    MPI_Wait(&pd, &st);
    PLX_CHECK(got_d == 100 + (rank + size - 1) % size && st.MPI_TAG == 43, "user message on dup");
    /* many outstanding on one communicator, completed with Waitany */
    enum { M = 12 };
    MPI_Request many[M];
    int in[M], out[M];
    for (int i = 0; i < M; i++) {
        in[i] = rank * i;
        MPI_Iallreduce(&in[i], &out[i], 1, MPI_INT, MPI_SUM, half, &many[i]);
    }
    for (int k = 0; k < M; k++) {
        int idx;
        MPI_Waitany(M, many, &idx, MPI_STATUS_IGNORE);
    }
    int ok = 1;
    for (int i = 0; i < M; i++)
        ok &= out[i] == want * i;
    PLX_CHECK(ok, "%d Iallreduce outstanding at once", M);
    MPI_Comm_free(&dup);
    MPI_Comm_free(&half);
    (void)hsize;
}

int main(int argc, char **argv)
{
    plx_test_init(&argc, &argv, "coll_nb");
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    test_every_form();
    test_overlap();
    test_communicators();
    return plx_test_finish();
}
