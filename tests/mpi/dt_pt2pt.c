/*
 * Non-contiguous data through point-to-point: vectors, structs with
 * padding, subarrays, indexed and resized types, pair types, from one
 * element to 8 MiB, eager and rendezvous, with differing send and receive
 * types of the same signature, truncation, Sendrecv_replace and probes.
 * Every rank sends to rank+1 and receives from rank-1 (itself when alone).
 */
#include "plx_test.h"

static int rank, size, next, prev;

static double val(int src, long i)
{
    return src * 1e7 + (double)i;
}

/* vector(n, 1, 3) of doubles -> n contiguous doubles, and back */
static void test_vector(long n)
{
    double *s = plx_malloc((size_t)n * 3 * sizeof(double)), *r = plx_malloc((size_t)n * 3 * sizeof(double));
    for (long i = 0; i < 3 * n; i++)
        s[i] = i % 3 == 0 ? val(rank, i / 3) : -1.0;
    MPI_Datatype v;
    MPI_Type_vector((int)n, 1, 3, MPI_DOUBLE, &v);
    MPI_Type_commit(&v);
    MPI_Request rq;
    MPI_Status st;
    MPI_Irecv(r, (int)n, MPI_DOUBLE, prev, 1, MPI_COMM_WORLD, &rq);
    MPI_Send(s, 1, v, next, 1, MPI_COMM_WORLD);
    MPI_Wait(&rq, &st);
    long bad = -1;
    for (long i = 0; i < n && bad < 0; i++)
        if (r[i] != val(prev, i))
            bad = i;
    PLX_CHECK(bad < 0, "vector -> contiguous, n=%ld: element %ld is %g", n, bad, bad >= 0 ? r[bad] : 0.0);
    int cnt = -1;
    MPI_Get_count(&st, MPI_DOUBLE, &cnt);
    PLX_CHECK_EQ(cnt, n, "count of doubles");
    /* contiguous -> vector: the holes stay untouched */
    for (long i = 0; i < 3 * n; i++)
        r[i] = -2.0;
    for (long i = 0; i < n; i++)
        s[i] = val(rank, i);
    MPI_Irecv(r, 1, v, prev, 2, MPI_COMM_WORLD, &rq);
    MPI_Send(s, (int)n, MPI_DOUBLE, next, 2, MPI_COMM_WORLD);
    MPI_Wait(&rq, &st);
    bad = -1;
    for (long i = 0; i < 3 * n && bad < 0; i++)
        if (r[i] != (i % 3 ? -2.0 : val(prev, i / 3)))
            bad = i;
    PLX_CHECK(bad < 0, "contiguous -> vector, n=%ld: slot %ld wrong", n, bad);
    MPI_Get_count(&st, v, &cnt);
    PLX_CHECK_EQ(cnt, 1, "count of vectors");
    MPI_Type_free(&v);
    free(s);
    free(r);
}

struct rec {
    char c;
    double d;
    short h;
};

static void test_struct(long n)
{
    MPI_Datatype t;
    int bl[3] = {1, 1, 1};
    MPI_Aint disp[3] = {offsetof(struct rec, c), offsetof(struct rec, d), offsetof(struct rec, h)};
    MPI_Datatype ty[3] = {MPI_CHAR, MPI_DOUBLE, MPI_SHORT};
    MPI_Type_create_struct(3, bl, disp, ty, &t);
    MPI_Type_commit(&t);
    MPI_Aint lb, ext;
    MPI_Type_get_extent(t, &lb, &ext);
    PLX_CHECK_EQ(ext, sizeof(struct rec), "struct extent matches C");
    struct rec *s = plx_malloc((size_t)n * sizeof *s), *r = plx_malloc((size_t)n * sizeof *r);
    memset(r, 0x55, (size_t)n * sizeof *r);
    for (long i = 0; i < n; i++) {
        s[i].c = (char)(i + rank);
        s[i].d = val(rank, i);
        s[i].h = (short)(i * 3 + rank);
    }
    MPI_Request rq;
    MPI_Irecv(r, (int)n, t, prev, 3, MPI_COMM_WORLD, &rq);
    MPI_Send(s, (int)n, t, next, 3, MPI_COMM_WORLD);
    MPI_Wait(&rq, MPI_STATUS_IGNORE);
    long bad = -1;
    for (long i = 0; i < n && bad < 0; i++)
        if (r[i].c != (char)(i + prev) || r[i].d != val(prev, i) || r[i].h != (short)(i * 3 + prev))
            bad = i;
    PLX_CHECK(bad < 0, "struct n=%ld: element %ld wrong", n, bad);
    /* padding bytes were not written */
    unsigned char *pb = (unsigned char *)&r[0];
    PLX_CHECK(pb[1] == 0x55, "struct padding untouched");
    MPI_Type_free(&t);
    free(s);
    free(r);
}

/* Column halo of a rows x cols matrix: my last column to next's first. */
static void test_subarray(int rows, int cols)
{
    int sizes[2] = {rows, cols}, sub[2] = {rows, 1}, st_last[2] = {0, cols - 1}, st_first[2] = {0, 0};
    MPI_Datatype last, first;
    MPI_Type_create_subarray(2, sizes, sub, st_last, MPI_ORDER_C, MPI_INT, &last);
    MPI_Type_create_subarray(2, sizes, sub, st_first, MPI_ORDER_C, MPI_INT, &first);
    MPI_Type_commit(&last);
    MPI_Type_commit(&first);
    int *a = plx_malloc((size_t)rows * cols * sizeof(int));
    for (int i = 0; i < rows * cols; i++)
        a[i] = rank * 1000000 + i;
    MPI_Sendrecv(a, 1, last, next, 4, a, 1, first, prev, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    long bad = -1;
    for (int i = 0; i < rows && bad < 0; i++) {
        if (a[i * cols] != prev * 1000000 + i * cols + cols - 1)
            bad = i;
        if (cols > 1 && a[i * cols + 1] != rank * 1000000 + i * cols + 1)
            bad = i;
    }
    PLX_CHECK(bad < 0, "subarray halo %dx%d: row %ld wrong", rows, cols, bad);
    MPI_Type_free(&last);
    MPI_Type_free(&first);
    free(a);
}

/* indexed send, hindexed-of-resized receive with the same signature */
static void test_indexed(void)
{
    int bl[4] = {3, 0, 1, 5}, disp[4] = {10, 0, 2, 20};
    MPI_Datatype ix, rsz, hx;
    MPI_Type_indexed(4, bl, disp, MPI_INT, &ix);
    MPI_Type_commit(&ix);
    MPI_Type_create_resized(MPI_INT, 0, 12, &rsz); /* every third int */
    MPI_Aint hd[2] = {0, 48};
    int hbl[2] = {4, 5};
    MPI_Type_create_hindexed(2, hbl, hd, rsz, &hx);
    MPI_Type_commit(&hx);
    int s[40], r[60];
    for (int i = 0; i < 40; i++)
        s[i] = rank * 100 + i;
    for (int i = 0; i < 60; i++)
        r[i] = -1;
    MPI_Sendrecv(s, 1, ix, next, 5, r, 1, hx, prev, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    /* sent: 10 11 12 2 20..24 ; received at ints 0 3 6 9 | 12 15 18 21 24 */
    int want[9] = {10, 11, 12, 2, 20, 21, 22, 23, 24};
    int slot[9] = {0, 3, 6, 9, 12, 15, 18, 21, 24};
    int ok = 1;
    for (int k = 0; k < 9; k++)
        if (r[slot[k]] != prev * 100 + want[k])
            ok = 0;
    PLX_CHECK(ok && r[1] == -1 && r[25] == -1, "indexed -> hindexed of resized");
    MPI_Type_free(&ix);
    MPI_Type_free(&rsz);
    MPI_Type_free(&hx);
}

static void test_pairs(void)
{
    struct { double v; int i; } s[50], r[50];
    for (int k = 0; k < 50; k++) {
        s[k].v = val(rank, k);
        s[k].i = k + rank;
        r[k].v = 0;
        r[k].i = -1;
    }
    MPI_Sendrecv(s, 50, MPI_DOUBLE_INT, next, 6, r, 50, MPI_DOUBLE_INT, prev, 6, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    int ok = 1;
    for (int k = 0; k < 50; k++)
        if (r[k].v != val(prev, k) || r[k].i != k + prev)
            ok = 0;
    PLX_CHECK(ok, "MPI_DOUBLE_INT array");
}

static void test_truncate_and_probe(void)
{
    MPI_Datatype v;
    MPI_Type_vector(10, 1, 2, MPI_INT, &v);
    MPI_Type_commit(&v);
    int s[40], r[40];   /* 2 vectors of extent 19 ints overlap */
    for (int i = 0; i < 40; i++)
        s[i] = i;
    for (int i = 0; i < 40; i++)
        r[i] = -1;
    MPI_Request rq;
    MPI_Isend(s, 2, v, next, 7, MPI_COMM_WORLD, &rq); /* 20 ints, overlapping elements */
    MPI_Status st;
    PLX_CHECK_MPI(MPI_Probe(prev, 7, MPI_COMM_WORLD, &st));
    int n = -1;
    MPI_Get_elements(&st, v, &n);
    PLX_CHECK_EQ(n, 20, "probe elements of a vector message");
    MPI_Get_count(&st, v, &n);
    PLX_CHECK_EQ(n, 2, "probe count of a vector message");
    int rc = MPI_Recv(r, 1, v, prev, 7, MPI_COMM_WORLD, &st);
    int cls = -1;
    MPI_Error_class(rc, &cls);
    PLX_CHECK_EQ(cls, MPI_ERR_TRUNCATE, "truncated into one vector");
    /* (what lands in the buffer on truncation is not specified: not checked) */
    MPI_Wait(&rq, MPI_STATUS_IGNORE);
    /* Sendrecv_replace with a vector */
    int b[20];
    for (int i = 0; i < 20; i++)
        b[i] = rank * 100 + i;
    MPI_Sendrecv_replace(b, 1, v, next, 8, prev, 8, MPI_COMM_WORLD, &st);
    int ok = 1;
    for (int i = 0; i < 20; i++)
        if (b[i] != (i % 2 ? rank * 100 + i : prev * 100 + i))
            ok = 0;
    PLX_CHECK(ok, "Sendrecv_replace with a vector");
    MPI_Type_free(&v);
}

/* A struct of absolute addresses (MPI_Get_address) sent from MPI_BOTTOM. */
static void test_bottom(void)
{
    int a = rank * 10 + 1, ra = -1;
    double b[3] = {rank + 0.5, rank + 1.5, rank + 2.5}, rb[3] = {0, 0, 0};
    MPI_Aint disp[2];
    int bl[2] = {1, 3};
    MPI_Datatype ty[2] = {MPI_INT, MPI_DOUBLE}, st, rt;
    MPI_Get_address(&a, &disp[0]);
    MPI_Get_address(b, &disp[1]);
    MPI_Type_create_struct(2, bl, disp, ty, &st);
    MPI_Type_commit(&st);
    MPI_Get_address(&ra, &disp[0]);
    MPI_Get_address(rb, &disp[1]);
    MPI_Type_create_struct(2, bl, disp, ty, &rt);
    MPI_Type_commit(&rt);
    PLX_CHECK_MPI(MPI_Sendrecv(MPI_BOTTOM, 1, st, next, 9, MPI_BOTTOM, 1, rt, prev, 9, MPI_COMM_WORLD,
                               MPI_STATUS_IGNORE));
    PLX_CHECK(ra == prev * 10 + 1 && rb[0] == prev + 0.5 && rb[2] == prev + 2.5, "struct of absolute addresses "
              "from MPI_BOTTOM");
    MPI_Type_free(&st);
    MPI_Type_free(&rt);
    /* a collective from MPI_BOTTOM too */
    MPI_Aint ad;
    MPI_Get_address(b, &ad);
    MPI_Datatype at;
    MPI_Type_create_hindexed(1, (int[]){3}, &ad, MPI_DOUBLE, &at);
    MPI_Type_commit(&at);
    if (rank != size - 1)
        b[0] = b[1] = b[2] = -1;
    else
        b[0] = 7, b[1] = 8, b[2] = 9;
    PLX_CHECK_MPI(MPI_Bcast(MPI_BOTTOM, 1, at, size - 1, MPI_COMM_WORLD));
    PLX_CHECK(b[0] == 7 && b[1] == 8 && b[2] == 9, "Bcast from MPI_BOTTOM");
    MPI_Type_free(&at);
}

int main(int argc, char **argv)
{
    plx_test_init(&argc, &argv, "dt_pt2pt");
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    next = (rank + 1) % size;
    prev = (rank + size - 1) % size;
    long ns[] = {1, 7, 1000, 5000, 300000, 1L << 20}; /* up to 8 MiB of doubles */
    for (size_t k = 0; k < sizeof ns / sizeof ns[0]; k++)
        test_vector(ns[k]);
    long ms[] = {1, 100, 4000, 100000};
    for (size_t k = 0; k < sizeof ms / sizeof ms[0]; k++)
        test_struct(ms[k]);
    test_subarray(5, 4);
    test_subarray(3000, 7);
    test_indexed();
    test_pairs();
    test_truncate_and_probe();
    test_bottom();
    return plx_test_finish();
}
