/*
 * Reductions: Reduce, Allreduce, Reduce_scatter, Reduce_scatter_block, Scan,
 * Exscan at sizes from one element to 8 MiB, every root, MPI_IN_PLACE, zero
 * counts; a non-commutative user operation (2x2 matrix product, whose
 * result depends on rank order); MINLOC/MAXLOC; reductions on derived
 * datatypes (a resized and a vector type) with predefined and user ops.
 */
#include "plx_test.h"

static int rank, size;

/* --- sums of doubles: exact (small integers) --------------------------- */

static double dv(int r, long i)
{
    return (double)(r + 1) * 3.0 + (double)(i % 1000);
}

/* sum over ranks lo..hi-1 of dv(r, i) */
static double dsum(int lo, int hi, long i)
{
    double s = 0;
    for (int r = lo; r < hi; r++)
        s += dv(r, i);
    return s;
}

static void check_d(const double *got, long n, int lo, int hi, const char *what, long count)
{
    for (long i = 0; i < n; i++)
        if (got[i] != dsum(lo, hi, i)) {
            PLX_CHECK(0, "%s (count %ld): element %ld is %g, expected %g", what, count, i, got[i], dsum(lo, hi, i));
            return;
        }
    plx_test_pass();
}

/* zeroed (calloc also keeps GCC's -Wmaybe-uninitialized quiet about MPI's const buffers) */
static void *zalloc(size_t n)
{
    void *p = calloc(n ? n : 1, 1);
    if (!p)
        plx_test_fail(__FILE__, __LINE__, "calloc(%zu) failed", n);
    return p;
}

static void test_sum(long n)
{
    double *s = zalloc((size_t)n * sizeof(double)), *r = zalloc((size_t)n * sizeof(double));
    for (long i = 0; i < n; i++)
        s[i] = dv(rank, i);
    PLX_CHECK_MPI(MPI_Allreduce(s, r, (int)n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD));
    check_d(r, n, 0, size, "Allreduce SUM", n);
    for (long i = 0; i < n; i++)
        r[i] = dv(rank, i);
    PLX_CHECK_MPI(MPI_Allreduce(MPI_IN_PLACE, r, (int)n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD));
    check_d(r, n, 0, size, "Allreduce SUM IN_PLACE", n);
    int roots[2] = {0, size - 1};
    for (int k = 0; k < (size > 1 ? 2 : 1); k++) {
        int root = roots[k];
        for (long i = 0; i < n; i++)
            r[i] = rank == root ? dv(rank, i) : -1;
        PLX_CHECK_MPI(MPI_Reduce(s, rank == root ? r : NULL, (int)n, MPI_DOUBLE, MPI_SUM, root, MPI_COMM_WORLD));
        if (rank == root)
            check_d(r, n, 0, size, "Reduce SUM", n);
        /* MPICH 4.0 (Debian 12) crashes on an IN_PLACE Reduce at a root other
         * than 0 once the count exceeds a few hundred elements */
        if (root != 0 && n > 100 && plx_lib_is("MPICH Version:"))
            continue;
        for (long i = 0; i < n; i++)
            r[i] = dv(rank, i);
        PLX_CHECK_MPI(MPI_Reduce(rank == root ? MPI_IN_PLACE : s, r, (int)n, MPI_DOUBLE, MPI_SUM, root,
                                 MPI_COMM_WORLD));
        if (rank == root)
            check_d(r, n, 0, size, "Reduce SUM IN_PLACE", n);
    }
    if (n <= 200000) {
        PLX_CHECK_MPI(MPI_Scan(s, r, (int)n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD));
        check_d(r, n, 0, rank + 1, "Scan SUM", n);
        for (long i = 0; i < n; i++)
            r[i] = dv(rank, i);
        PLX_CHECK_MPI(MPI_Scan(MPI_IN_PLACE, r, (int)n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD));
        check_d(r, n, 0, rank + 1, "Scan SUM IN_PLACE", n);
        PLX_CHECK_MPI(MPI_Exscan(s, r, (int)n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD));
        if (rank > 0)
            check_d(r, n, 0, rank, "Exscan SUM", n);
        for (long i = 0; i < n; i++)
            r[i] = dv(rank, i);
        PLX_CHECK_MPI(MPI_Exscan(MPI_IN_PLACE, r, (int)n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD));
        if (rank > 0)
            check_d(r, n, 0, rank, "Exscan SUM IN_PLACE", n);
    }
    free(s);
    free(r);
}

/* --- reduce_scatter ------------------------------------------------------ */

static void test_reduce_scatter(int k)
{
    /* element j of everyone's vector is dv(rank, j); rank r gets cnt(r) of them */
    int *counts = plx_malloc((size_t)size * sizeof(int));
    long total = 0;
    for (int r = 0; r < size; r++) {
        counts[r] = r % 3 == 2 ? 0 : k + r;
        total += counts[r];
    }
    long off = 0;
    for (int r = 0; r < rank; r++)
        off += counts[r];
    long room = total > (long)k * size ? total : (long)k * size;
    double *s = zalloc((size_t)(room + 1) * sizeof(double)), *r = zalloc((size_t)(room + 1) * sizeof(double));
    for (long i = 0; i < total; i++)
        s[i] = dv(rank, i);
    for (long i = 0; i <= total; i++)
        r[i] = -1;
    PLX_CHECK_MPI(MPI_Reduce_scatter(s, r, counts, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD));
    int ok = 1;
    for (long i = 0; i < counts[rank]; i++)
        if (r[i] != dsum(0, size, off + i))
            ok = 0;
    PLX_CHECK(ok && r[counts[rank]] == -1, "Reduce_scatter (k=%d)", k);
    /* MPICH 4.0 (Debian 12) asserts (overlapping memcpy) on an in-place
     * Reduce_scatter whose result overlaps the rank's own input block */
    if (k < 1000 || !plx_lib_is("MPICH Version:")) {
        for (long i = 0; i < total; i++)
            r[i] = dv(rank, i);
        PLX_CHECK_MPI(MPI_Reduce_scatter(MPI_IN_PLACE, r, counts, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD));
        ok = 1;
        for (long i = 0; i < counts[rank]; i++)
            if (r[i] != dsum(0, size, off + i))
                ok = 0;
        PLX_CHECK(ok, "Reduce_scatter IN_PLACE (k=%d)", k);
    }
    /* block: k each */
    for (long i = 0; i < (long)k * size; i++)
        s[i] = dv(rank, i);
    double *b = plx_malloc(((size_t)k * size + 1) * sizeof(double));
    PLX_CHECK_MPI(MPI_Reduce_scatter_block(s, b, k, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD));
    ok = 1;
    for (long i = 0; i < k; i++)
        if (b[i] != dsum(0, size, (long)rank * k + i))
            ok = 0;
    PLX_CHECK(ok, "Reduce_scatter_block (k=%d)", k);
    for (long i = 0; i < (long)k * size; i++)
        b[i] = dv(rank, i);
    PLX_CHECK_MPI(MPI_Reduce_scatter_block(MPI_IN_PLACE, b, k, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD));
    ok = 1;
    for (long i = 0; i < k; i++)
        if (b[i] != dsum(0, size, (long)rank * k + i))
            ok = 0;
    PLX_CHECK(ok, "Reduce_scatter_block IN_PLACE (k=%d)", k);
    free(b);
    free(counts);
    free(s);
    free(r);
}

/* --- a non-commutative operation: 2x2 matrix product mod 2^32 ----------- */

typedef struct {
    unsigned a, b, c, d;
} mat;

static mat mmul(mat x, mat y)
{
    mat z = {x.a * y.a + x.b * y.c, x.a * y.b + x.b * y.d, x.c * y.a + x.d * y.c, x.c * y.b + x.d * y.d};
    return z;
}

static mat mval(int r, long i)
{
    mat m = {(unsigned)(r + 2 + i % 5), 1u, 1u, (unsigned)(i % 3)};
    return m;
}

/* product of mval(lo..hi-1, i) in rank order */
static mat mprod(int lo, int hi, long i)
{
    mat m = {1, 0, 0, 1};
    for (int r = lo; r < hi; r++)
        m = mmul(m, mval(r, i));
    return m;
}

static void matmul_op(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    mat *a = in, *b = inout;
    for (int i = 0; i < *len; i++)
        b[i] = mmul(a[i], b[i]); /* inout = in op inout, in from lower ranks */
}

static int meq(mat x, mat y)
{
    return x.a == y.a && x.b == y.b && x.c == y.c && x.d == y.d;
}

static void check_m(const mat *got, long n, int lo, int hi, const char *what, long count)
{
    for (long i = 0; i < n; i++)
        if (!meq(got[i], mprod(lo, hi, i))) {
            PLX_CHECK(0, "%s (count %ld): element %ld is not the product of ranks %d..%d in order", what, count, i, lo,
                      hi - 1);
            return;
        }
    plx_test_pass();
}

static void test_noncommutative(long n)
{
    MPI_Datatype mt;
    MPI_Type_contiguous(4, MPI_UNSIGNED, &mt);
    MPI_Type_commit(&mt);
    MPI_Op op;
    PLX_CHECK_MPI(MPI_Op_create(matmul_op, 0, &op));
    int commute = -1;
    MPI_Op_commutative(op, &commute);
    PLX_CHECK_EQ(commute, 0, "Op_commutative of a non-commutative op");
    mat *s = zalloc((size_t)n * sizeof(mat)), *r = zalloc((size_t)n * sizeof(mat));
    for (long i = 0; i < n; i++)
        s[i] = mval(rank, i);
    PLX_CHECK_MPI(MPI_Allreduce(s, r, (int)n, mt, op, MPI_COMM_WORLD));
    check_m(r, n, 0, size, "Allreduce non-commutative", n);
    for (int root = 0; root < size; root += (size > 3 ? size / 2 : 1)) {
        memset(r, 0, (size_t)n * sizeof(mat));
        PLX_CHECK_MPI(MPI_Reduce(s, r, (int)n, mt, op, root, MPI_COMM_WORLD));
        if (rank == root)
            check_m(r, n, 0, size, "Reduce non-commutative", n);
    }
    PLX_CHECK_MPI(MPI_Scan(s, r, (int)n, mt, op, MPI_COMM_WORLD));
    check_m(r, n, 0, rank + 1, "Scan non-commutative", n);
    PLX_CHECK_MPI(MPI_Exscan(s, r, (int)n, mt, op, MPI_COMM_WORLD));
    if (rank > 0)
        check_m(r, n, 0, rank, "Exscan non-commutative", n);
    /* reduce_scatter_block: rank r gets elements [r*n, (r+1)*n) */
    mat *big = zalloc((size_t)n * size * sizeof(mat));
    for (long i = 0; i < n * size; i++)
        big[i] = mval(rank, i);
    PLX_CHECK_MPI(MPI_Reduce_scatter_block(big, r, (int)n, mt, op, MPI_COMM_WORLD));
    int ok = 1;
    for (long i = 0; i < n; i++)
        if (!meq(r[i], mprod(0, size, (long)rank * n + i)))
            ok = 0;
    PLX_CHECK(ok, "Reduce_scatter_block non-commutative (n=%ld)", n);
    MPI_Op_free(&op);
    PLX_CHECK_EQ(op, MPI_OP_NULL, "Op_free sets MPI_OP_NULL");
    MPI_Type_free(&mt);
    free(big);
    free(s);
    free(r);
}

/* --- MINLOC / MAXLOC ------------------------------------------------------ */

static void test_loc(void)
{
    struct { double v; int i; } in[3], out[3];
    for (int k = 0; k < 3; k++) {
        in[k].v = (double)((rank * (k + 3)) % (size + 1)) - k; /* ties for some k */
        in[k].i = rank;
    }
    PLX_CHECK_MPI(MPI_Allreduce(in, out, 3, MPI_DOUBLE_INT, MPI_MAXLOC, MPI_COMM_WORLD));
    for (int k = 0; k < 3; k++) {
        double best = -1e9;
        int idx = -1;
        for (int r = 0; r < size; r++) {
            double v = (double)((r * (k + 3)) % (size + 1)) - k;
            if (v > best) {
                best = v;
                idx = r;
            }
        }
        PLX_CHECK(out[k].v == best && out[k].i == idx, "MAXLOC[%d]: (%g,%d) expected (%g,%d)", k, out[k].v,
                  out[k].i, best, idx);
    }
    PLX_CHECK_MPI(MPI_Allreduce(in, out, 3, MPI_DOUBLE_INT, MPI_MINLOC, MPI_COMM_WORLD));
    for (int k = 0; k < 3; k++) {
        double best = 1e9;
        int idx = -1;
        for (int r = 0; r < size; r++) {
            double v = (double)((r * (k + 3)) % (size + 1)) - k;
            if (v < best) {
                best = v;
                idx = r;
            }
        }
        PLX_CHECK(out[k].v == best && out[k].i == idx, "MINLOC[%d]", k);
    }
}

/* --- derived types --------------------------------------------------------- */

/* user op on a resized int (every other int): counts the layout it is given */
static void sum_every_other(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    MPI_Aint lb, ext;
    MPI_Type_get_extent(*dt, &lb, &ext);
    for (int i = 0; i < *len; i++)
        *(int *)((char *)inout + i * ext) += *(int *)((char *)in + i * ext);
}

/* Predefined ops on derived types built from one predefined type (MPI 3.1
 * 5.9.2 and 11.3.4 allow them as on the predefined type itself). MPICH
 * refuses them for resized and vector types, so those checks bind the
 * other libraries only. */
static void test_derived(void)
{
    int predef_ok = !plx_lib_is("MPICH Version:");
    enum { N = 1000 };
    int *s = zalloc(2 * N * sizeof(int)), *r = zalloc(2 * N * sizeof(int));
    MPI_Datatype eo;
    MPI_Type_create_resized(MPI_INT, 0, 2 * sizeof(int), &eo);
    MPI_Type_commit(&eo);
    for (int i = 0; i < 2 * N; i++) {
        s[i] = i % 2 ? -100 : rank + i;
        r[i] = -7;
    }
    int ok = 1;
    if (predef_ok) {
        PLX_CHECK_MPI(MPI_Allreduce(s, r, N, eo, MPI_SUM, MPI_COMM_WORLD));
        for (int i = 0; i < 2 * N; i++)
            if (r[i] != (i % 2 ? -7 : size * (size - 1) / 2 + size * i))
                ok = 0;
        PLX_CHECK(ok, "Allreduce MPI_SUM on a resized int");
    }
    MPI_Op op;
    MPI_Op_create(sum_every_other, 1, &op);
    for (int i = 0; i < 2 * N; i++)
        r[i] = -7;
    PLX_CHECK_MPI(MPI_Reduce(s, r, N, eo, op, size - 1, MPI_COMM_WORLD));
    if (rank == size - 1) {
        ok = 1;
        for (int i = 0; i < 2 * N; i++)
            if (r[i] != (i % 2 ? -7 : size * (size - 1) / 2 + size * i))
                ok = 0;
        PLX_CHECK(ok, "Reduce with a user op on a resized int");
    }
    MPI_Op_free(&op);
    /* a vector of doubles (every third) with MPI_MAX */
    MPI_Datatype v3;
    MPI_Type_vector(4, 1, 3, MPI_DOUBLE, &v3);
    MPI_Type_commit(&v3);
    double ds[24], dr[24];
    /* two vectors: the second starts one extent (10 doubles) later */
#define IN_TYPE(i) (((i) < 10 && (i) % 3 == 0) || ((i) >= 10 && (i) < 20 && ((i) - 10) % 3 == 0))
    for (int i = 0; i < 24; i++) {
        ds[i] = IN_TYPE(i) ? (double)((rank * 5 + i) % 11) : -1.0;
        dr[i] = -3.0;
    }
    if (predef_ok)
        PLX_CHECK_MPI(MPI_Allreduce(ds, dr, 2, v3, MPI_MAX, MPI_COMM_WORLD));
    ok = 1;
    for (int i = 0; i < 24; i++) {
        double want = -3.0;
        if (IN_TYPE(i)) {
            want = -1e9;
            for (int q = 0; q < size; q++)
                want = want > (double)((q * 5 + i) % 11) ? want : (double)((q * 5 + i) % 11);
        }
        if (dr[i] != want)
            ok = 0;
    }
    if (predef_ok)
        PLX_CHECK(ok, "Allreduce MPI_MAX on a vector type");
#undef IN_TYPE
    MPI_Type_free(&v3);
    MPI_Type_free(&eo);
    free(s);
    free(r);
}

static void test_errors(void)
{
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    double d = 1, e = 0;
    int i = 1, j = 0;
    PLX_CHECK_ERR(MPI_Allreduce(&d, &e, 1, MPI_DOUBLE, MPI_BAND, MPI_COMM_WORLD), MPI_ERR_OP);
    PLX_CHECK_ERR(MPI_Allreduce(&i, &j, 1, MPI_INT, MPI_MAXLOC, MPI_COMM_WORLD), MPI_ERR_OP);
    PLX_CHECK_ERR(MPI_Reduce(&i, &j, 1, MPI_INT, MPI_SUM, size, MPI_COMM_WORLD), MPI_ERR_ROOT);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

int main(int argc, char **argv)
{
    plx_test_init(&argc, &argv, "coll_reduce");
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    long ns[] = {1, 2, 7, 300, 5000, 100000, 1L << 20}; /* up to 8 MiB of doubles */
    for (size_t k = 0; k < sizeof ns / sizeof ns[0]; k++)
        test_sum(ns[k]);
    int ks[] = {0, 1, 3, 1000, 40000};
    for (size_t k = 0; k < sizeof ks / sizeof ks[0]; k++)
        test_reduce_scatter(ks[k]);
    long ms[] = {1, 3, 100, 20000};
    for (size_t k = 0; k < sizeof ms / sizeof ms[0]; k++)
        test_noncommutative(ms[k]);
    test_loc();
    test_derived();
    test_errors();
    return plx_test_finish();
}
