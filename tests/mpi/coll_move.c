/*
 * Data-moving collectives: Barrier, Bcast, Gather(v), Scatter(v),
 * Allgather(v), Alltoall(v/w), at sizes from one element to 8 MiB, with
 * several roots, MPI_IN_PLACE, zero counts in the v variants and
 * non-contiguous datatypes on either side. Every element received is
 * checked, and so are the bytes that must stay untouched.
 */
#include "plx_test.h"

static int rank, size;

/* value of element i of the block that src sends to dst */
static int val(int src, int dst, long i)
{
    return (int)(src * 1000003L + dst * 7919L + i);
}

static void check_ints(const int *got, long n, int src, int dst, const char *what, long size_, int root)
{
    for (long i = 0; i < n; i++)
        if (got[i] != val(src, dst, i)) {
            PLX_CHECK(0, "%s (n=%ld root=%d): element %ld from rank %d is %d, expected %d", what, size_, root, i, src,
                      got[i], val(src, dst, i));
            return;
        }
    plx_test_pass();
}

static void check_fill(const int *p, long n, int v, const char *what)
{
    for (long i = 0; i < n; i++)
        if (p[i] != v) {
            PLX_CHECK(0, "%s: int %ld overwritten (%d)", what, i, p[i]);
            return;
        }
    plx_test_pass();
}

static void test_barrier(void)
{
    PLX_CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    if (size < 2)
        return;
    /* the last rank enters only after rank 0 tells it to: rank 0's barrier
     * cannot complete before that */
    MPI_Request rq;
    if (rank == 0) {
        PLX_CHECK_MPI(MPI_Ibarrier(MPI_COMM_WORLD, &rq));
        int flag = 1;
        for (int i = 0; i < 20; i++) {
            MPI_Test(&rq, &flag, MPI_STATUS_IGNORE);
            PLX_CHECK(!flag, "Ibarrier completed before every rank entered");
        }
        MPI_Send(NULL, 0, MPI_INT, size - 1, 1, MPI_COMM_WORLD);
        MPI_Wait(&rq, MPI_STATUS_IGNORE);
    } else {
        /* (a nonblocking collective only matches nonblocking ones) */
        if (rank == size - 1)
            MPI_Recv(NULL, 0, MPI_INT, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Ibarrier(MPI_COMM_WORLD, &rq);
        MPI_Wait(&rq, MPI_STATUS_IGNORE);
    }
}

static void test_bcast(long n, int root)
{
    int *b = plx_malloc((size_t)n * sizeof(int));
    for (long i = 0; i < n; i++)
        b[i] = rank == root ? val(root, 0, i) : -1;
    PLX_CHECK_MPI(MPI_Bcast(b, (int)n, MPI_INT, root, MPI_COMM_WORLD));
    check_ints(b, n, root, 0, "Bcast", n, root);
    free(b);
    if (n > 300000)
        return;
    /* root sends a strided vector, the others receive contiguous ints */
    int *v = plx_malloc((size_t)n * 2 * sizeof(int));
    for (long i = 0; i < 2 * n; i++)
        v[i] = rank == root ? (i % 2 ? -7 : val(root, 1, i / 2)) : -1;
    MPI_Datatype vec;
    MPI_Type_vector((int)n, 1, 2, MPI_INT, &vec);
    MPI_Type_commit(&vec);
    if (rank == root)
        MPI_Bcast(v, 1, vec, root, MPI_COMM_WORLD);
    else
        MPI_Bcast(v, (int)n, MPI_INT, root, MPI_COMM_WORLD);
    if (rank != root)
        check_ints(v, n, root, 1, "Bcast vector->contiguous", n, root);
    /* and everyone receives into the vector */
    if (rank != root)
        for (long i = 0; i < 2 * n; i++)
            v[i] = -3;
    MPI_Bcast(v, 1, vec, root, MPI_COMM_WORLD);
    long bad = -1;
    for (long i = 0; i < 2 * n && bad < 0; i++)
        if (v[i] != (i % 2 ? (rank == root ? -7 : -3) : val(root, 1, i / 2)))
            bad = i;
    PLX_CHECK(bad < 0, "Bcast into a vector (n=%ld root=%d): slot %ld", n, root, bad);
    MPI_Type_free(&vec);
    free(v);
}

static void test_gather_scatter(long n, int root)
{
    int *s = plx_malloc((size_t)n * sizeof(int)), *all = plx_malloc((size_t)n * size * sizeof(int));
    for (long i = 0; i < n; i++)
        s[i] = val(rank, root, i);
    for (long i = 0; i < n * size; i++)
        all[i] = -1;
    PLX_CHECK_MPI(MPI_Gather(s, (int)n, MPI_INT, all, (int)n, MPI_INT, root, MPI_COMM_WORLD));
    if (rank == root)
        for (int r = 0; r < size; r++)
            check_ints(all + r * n, n, r, root, "Gather", n, root);
    /* in place at the root */
    if (rank == root)
        for (long i = 0; i < n * size; i++)
            all[i] = i / n == root ? val(root, root, i % n) : -1;
    PLX_CHECK_MPI(MPI_Gather(rank == root ? MPI_IN_PLACE : s, (int)n, MPI_INT, all, (int)n, MPI_INT, root,
                             MPI_COMM_WORLD));
    if (rank == root)
        for (int r = 0; r < size; r++)
            check_ints(all + r * n, n, r, root, "Gather IN_PLACE", n, root);
    /* scatter: block r of the root's buffer goes to rank r */
    if (rank == root)
        for (int r = 0; r < size; r++)
            for (long i = 0; i < n; i++)
                all[r * n + i] = val(root, r, i);
    for (long i = 0; i < n; i++)
        s[i] = -1;
    PLX_CHECK_MPI(MPI_Scatter(all, (int)n, MPI_INT, s, (int)n, MPI_INT, root, MPI_COMM_WORLD));
    check_ints(s, n, root, rank, "Scatter", n, root);
    PLX_CHECK_MPI(MPI_Scatter(all, (int)n, MPI_INT, rank == root ? MPI_IN_PLACE : s, (int)n, MPI_INT, root,
                              MPI_COMM_WORLD));
    if (rank == root)
        check_ints(all + root * n, n, root, root, "Scatter IN_PLACE keeps the root's block", n, root);
    else
        check_ints(s, n, root, rank, "Scatter (IN_PLACE at root)", n, root);
    free(s);
    free(all);
}

/* v variants: rank r contributes cnt(r) ints (zero for every third rank),
 * placed in reverse rank order with a gap of 3 ints between blocks */
static int cnt(int r, int k)
{
    return r % 3 == 1 ? 0 : k + r;
}

static void test_v(int k, int root)
{
    int *counts = plx_malloc((size_t)size * sizeof(int)), *displs = plx_malloc((size_t)size * sizeof(int));
    long total = 0;
    for (int r = size - 1; r >= 0; r--) {
        counts[r] = cnt(r, k);
        displs[r] = (int)total;
        total += counts[r] + 3;
    }
    int *big = plx_malloc((size_t)total * sizeof(int)), *s = plx_malloc(((size_t)k + size) * sizeof(int));
    for (long i = 0; i < total; i++)
        big[i] = -5;
    for (int i = 0; i < cnt(rank, k); i++)
        s[i] = val(rank, root, i);
    PLX_CHECK_MPI(MPI_Gatherv(s, cnt(rank, k), MPI_INT, big, counts, displs, MPI_INT, root, MPI_COMM_WORLD));
    if (rank == root) {
        for (int r = 0; r < size; r++) {
            check_ints(big + displs[r], counts[r], r, root, "Gatherv", k, root);
            check_fill(big + displs[r] + counts[r], 3, -5, "Gatherv gap");
        }
    }
    /* Allgatherv, then in place */
    for (long i = 0; i < total; i++)
        big[i] = -5;
    PLX_CHECK_MPI(MPI_Allgatherv(s, cnt(rank, k), MPI_INT, big, counts, displs, MPI_INT, MPI_COMM_WORLD));
    for (int r = 0; r < size; r++)
        check_ints(big + displs[r], counts[r], r, root, "Allgatherv", k, root);
    for (long i = 0; i < total; i++)
        big[i] = -5;
    for (int i = 0; i < counts[rank]; i++)
        big[displs[rank] + i] = val(rank, root, i);
    PLX_CHECK_MPI(MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, big, counts, displs, MPI_INT, MPI_COMM_WORLD));
    for (int r = 0; r < size; r++) {
        check_ints(big + displs[r], counts[r], r, root, "Allgatherv IN_PLACE", k, root);
        check_fill(big + displs[r] + counts[r], 3, -5, "Allgatherv gap");
    }
    /* Scatterv from the root */
    if (rank == root)
        for (int r = 0; r < size; r++)
            for (int i = 0; i < counts[r]; i++)
                big[displs[r] + i] = val(root, r, i);
    for (int i = 0; i < k + size; i++)
        s[i] = -9;
    PLX_CHECK_MPI(MPI_Scatterv(big, counts, displs, MPI_INT, s, cnt(rank, k), MPI_INT, root, MPI_COMM_WORLD));
    check_ints(s, cnt(rank, k), root, rank, "Scatterv", k, root);
    PLX_CHECK_EQ(s[cnt(rank, k)], -9, "Scatterv wrote past its count");
    free(counts);
    free(displs);
    free(big);
    free(s);
}

static void test_allgather(long n)
{
    int *s = plx_malloc((size_t)n * sizeof(int)), *all = plx_malloc((size_t)n * size * sizeof(int));
    for (long i = 0; i < n; i++)
        s[i] = val(rank, 0, i);
    PLX_CHECK_MPI(MPI_Allgather(s, (int)n, MPI_INT, all, (int)n, MPI_INT, MPI_COMM_WORLD));
    for (int r = 0; r < size; r++)
        check_ints(all + r * n, n, r, 0, "Allgather", n, 0);
    for (long i = 0; i < n * size; i++)
        all[i] = i / n == rank ? val(rank, 0, i % n) : -1;
    PLX_CHECK_MPI(MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, all, (int)n, MPI_INT, MPI_COMM_WORLD));
    for (int r = 0; r < size; r++)
        check_ints(all + r * n, n, r, 0, "Allgather IN_PLACE", n, 0);
    /* send one strided vector, receive contiguous ints */
    if (n <= 100000) {
        int *v = plx_malloc((size_t)n * 3 * sizeof(int));
        for (long i = 0; i < 3 * n; i++)
            v[i] = i % 3 ? -2 : val(rank, 1, i / 3);
        MPI_Datatype vec;
        MPI_Type_vector((int)n, 1, 3, MPI_INT, &vec);
        MPI_Type_commit(&vec);
        PLX_CHECK_MPI(MPI_Allgather(v, 1, vec, all, (int)n, MPI_INT, MPI_COMM_WORLD));
        for (int r = 0; r < size; r++)
            check_ints(all + r * n, n, r, 1, "Allgather vector->ints", n, 0);
        MPI_Type_free(&vec);
        free(v);
    }
    free(s);
    free(all);
}

static void test_alltoall(long n)
{
    int *s = plx_malloc((size_t)n * size * sizeof(int)), *r = plx_malloc((size_t)n * size * sizeof(int));
    for (int d = 0; d < size; d++)
        for (long i = 0; i < n; i++)
            s[d * n + i] = val(rank, d, i);
    for (long i = 0; i < n * size; i++)
        r[i] = -1;
    PLX_CHECK_MPI(MPI_Alltoall(s, (int)n, MPI_INT, r, (int)n, MPI_INT, MPI_COMM_WORLD));
    for (int src = 0; src < size; src++)
        check_ints(r + src * n, n, src, rank, "Alltoall", n, 0);
    PLX_CHECK_MPI(MPI_Alltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, s, (int)n, MPI_INT, MPI_COMM_WORLD));
    for (int src = 0; src < size; src++)
        check_ints(s + src * n, n, src, rank, "Alltoall IN_PLACE", n, 0);
    /* send every other int (a vector resized to 2n ints per block), receive
     * into every third int: both sides non-contiguous */
    if (n <= 100000) {
        int *sv = plx_malloc((size_t)n * 2 * size * sizeof(int)), *rv = plx_malloc((size_t)n * 3 * size * sizeof(int));
        for (int d = 0; d < size; d++)
            for (long i = 0; i < 2 * n; i++)
                sv[d * 2 * n + i] = i % 2 ? -2 : val(rank, d, i / 2);
        for (long i = 0; i < 3 * n * size; i++)
            rv[i] = -3;
        MPI_Datatype v2, v2r, v3, v3r;
        MPI_Type_vector((int)n, 1, 2, MPI_INT, &v2);
        MPI_Type_create_resized(v2, 0, (MPI_Aint)(2 * n * sizeof(int)), &v2r);
        MPI_Type_vector((int)n, 1, 3, MPI_INT, &v3);
        MPI_Type_create_resized(v3, 0, (MPI_Aint)(3 * n * sizeof(int)), &v3r);
        MPI_Type_commit(&v2r);
        MPI_Type_commit(&v3r);
        PLX_CHECK_MPI(MPI_Alltoall(sv, 1, v2r, rv, 1, v3r, MPI_COMM_WORLD));
        int ok = 1;
        for (int src = 0; src < size && ok; src++)
            for (long i = 0; i < 3 * n && ok; i++) {
                int want = i % 3 ? -3 : val(src, rank, i / 3);
                if (rv[src * 3 * n + i] != want) {
                    PLX_CHECK(0, "Alltoall vector->vector (n %ld): block %d int %ld is %d, expected %d", n, src, i,
                              rv[src * 3 * n + i], want);
                    ok = 0;
                }
            }
        if (ok)
            plx_test_pass();
        MPI_Type_free(&v2), MPI_Type_free(&v2r), MPI_Type_free(&v3), MPI_Type_free(&v3r);
        free(sv);
        free(rv);
    }
    free(s);
    free(r);
}

/* alltoallv: rank i sends c(i, j) ints to j (some zero); alltoallw: the
 * same data, received through a vector type from even ranks */
static int c2(int i, int j, int k)
{
    return ((i + 2 * j) % 3) * k;
}

static void test_alltoallvw(int k)
{
    int *sc = plx_malloc((size_t)size * sizeof(int)), *sd = plx_malloc((size_t)size * sizeof(int));
    int *rc = plx_malloc((size_t)size * sizeof(int)), *rd = plx_malloc((size_t)size * sizeof(int));
    long st = 0, rt = 0;
    for (int j = 0; j < size; j++) {
        sc[j] = c2(rank, j, k);
        sd[j] = (int)st;
        st += sc[j] + 1;
        rc[j] = c2(j, rank, k);
        rd[j] = (int)rt;
        rt += 2 * rc[j] + 1; /* room for the strided receive below */
    }
    int *s = plx_malloc((size_t)(st + 1) * sizeof(int)), *r = plx_malloc((size_t)(rt + 1) * sizeof(int));
    for (int j = 0; j < size; j++)
        for (int i = 0; i < sc[j]; i++)
            s[sd[j] + i] = val(rank, j, i);
    for (long i = 0; i < rt; i++)
        r[i] = -1;
    PLX_CHECK_MPI(MPI_Alltoallv(s, sc, sd, MPI_INT, r, rc, rd, MPI_INT, MPI_COMM_WORLD));
    for (int j = 0; j < size; j++) {
        check_ints(r + rd[j], rc[j], j, rank, "Alltoallv", k, 0);
        PLX_CHECK(rc[j] == 0 || r[rd[j] + rc[j]] == -1, "Alltoallv wrote past block %d", j);
    }
    /* in place needs symmetric counts: c(i,j) = c(j,i) */
    {
        int *sym = plx_malloc((size_t)size * sizeof(int)), *sdp = plx_malloc((size_t)size * sizeof(int));
        long t = 0;
        for (int j = 0; j < size; j++) {
            sym[j] = ((rank + j) % 3) * k;
            sdp[j] = (int)t;
            t += sym[j];
        }
        int *b = plx_malloc((size_t)(t + 1) * sizeof(int));
        for (int j = 0; j < size; j++)
            for (int i = 0; i < sym[j]; i++)
                b[sdp[j] + i] = val(rank, j, i);
        PLX_CHECK_MPI(MPI_Alltoallv(MPI_IN_PLACE, NULL, NULL, MPI_DATATYPE_NULL, b, sym, sdp, MPI_INT,
                                    MPI_COMM_WORLD));
        for (int j = 0; j < size; j++)
            check_ints(b + sdp[j], sym[j], j, rank, "Alltoallv IN_PLACE", k, 0);
        free(sym);
        free(sdp);
        free(b);
    }
    /* alltoallw: byte displacements; from even ranks receive through a
     * vector (every other int) */
    MPI_Datatype *stypes = plx_malloc((size_t)size * sizeof(MPI_Datatype));
    MPI_Datatype *rtypes = plx_malloc((size_t)size * sizeof(MPI_Datatype));
    int *sdb = plx_malloc((size_t)size * sizeof(int)), *rdb = plx_malloc((size_t)size * sizeof(int));
    int *rcw = plx_malloc((size_t)size * sizeof(int));
    MPI_Datatype every_other;
    MPI_Type_vector(k ? k : 1, 1, 2, MPI_INT, &every_other);
    MPI_Type_commit(&every_other);
    for (int j = 0; j < size; j++) {
        stypes[j] = MPI_INT;
        sdb[j] = sd[j] * (int)sizeof(int);
        rdb[j] = rd[j] * (int)sizeof(int);
        if (j % 2 == 0 && k > 0) {
            rtypes[j] = every_other;
            rcw[j] = rc[j] / k; /* rc is a multiple of k */
        } else {
            rtypes[j] = MPI_INT;
            rcw[j] = rc[j];
        }
    }
    for (long i = 0; i < rt; i++)
        r[i] = -1;
    PLX_CHECK_MPI(MPI_Alltoallw(s, sc, sdb, stypes, r, rcw, rdb, rtypes, MPI_COMM_WORLD));
    for (int j = 0; j < size; j++) {
        if (rtypes[j] == MPI_INT) {
            check_ints(r + rd[j], rc[j], j, rank, "Alltoallw", k, 0);
            continue;
        }
        /* every_other has extent (2k-1) ints: element e starts at e*(2k-1) */
        int ok = 1;
        for (int i = 0; i < rc[j]; i++) {
            long e = i / k, w = i % k;
            if (r[rd[j] + e * (2 * k - 1) + 2 * w] != val(j, rank, i))
                ok = 0;
        }
        PLX_CHECK(ok, "Alltoallw into a vector from rank %d", j);
    }
    MPI_Type_free(&every_other);
    free(stypes);
    free(rtypes);
    free(sdb);
    free(rdb);
    free(rcw);
    free(sc);
    free(sd);
    free(rc);
    free(rd);
    free(s);
    free(r);
}

int main(int argc, char **argv)
{
    plx_test_init(&argc, &argv, "coll_move");
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    test_barrier();
    int roots[3] = {0, size - 1, size / 2};
    long ns[] = {1, 3, 20, 1000, 40000}; /* 20 ints: a shared-memory Bcast in two lines */
    for (size_t k = 0; k < sizeof ns / sizeof ns[0]; k++)
        for (int ri = 0; ri < 3; ri++) {
            test_bcast(ns[k], roots[ri]);
            test_gather_scatter(ns[k], roots[ri]);
        }
    test_bcast(2L << 20, size - 1); /* 8 MiB */
    test_gather_scatter((1L << 20) / size, size / 2); /* 4 MiB in total */
    int ks[] = {0, 1, 5, 3000};
    for (size_t k = 0; k < sizeof ks / sizeof ks[0]; k++)
        for (int ri = 0; ri < 2; ri++)
            test_v(ks[k], roots[ri]);
    long as[] = {1, 3, 1000, 20000, (2L << 20) / size}; /* the last: 8 MiB gathered */
    for (size_t k = 0; k < sizeof as / sizeof as[0]; k++)
        test_allgather(as[k]);
    long ts[] = {1, 3, 100, 2000, (1L << 20) / size / size};
    for (size_t k = 0; k < sizeof ts / sizeof ts[0]; k++)
        test_alltoall(ts[k]);
    int vs[] = {0, 1, 4, 5000};
    for (size_t k = 0; k < sizeof vs / sizeof vs[0]; k++)
        test_alltoallvw(vs[k]);
    return plx_test_finish();
}
