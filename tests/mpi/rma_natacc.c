/*
 * Every predefined reduction on the basic types through MPI_Accumulate,
 * MPI_Get_accumulate, MPI_Fetch_and_op and MPI_Compare_and_swap, with data
 * checked: each rank works on the next rank's window part (a ring), so
 * every access crosses to another process.
 *
 * Per type and op, in fence epochs and then in lock_all epochs:
 *  - an accumulate of N contiguous elements (region 0);
 *  - a get_accumulate of N elements (region 1): the old values come back
 *    and the new ones are op(old, origin);
 *  - an accumulate into a strided target type (region 2: every second
 *    element; the others stay as they were);
 *  - a fetch_and_op of one element (region 3);
 * and per type that compare_and_swap takes (integers, MPI_BYTE, MPI_C_BOOL),
 * one CAS that matches and one that does not (region 4).
 *
 * Plain MPI (builds with other libraries too). Under Plexus over ofi, the
 * stats line printed at MPI_Win_free (PLEXUS_STATS=1) says how many went
 * as native atomics: the ctest entries check it.
 */
#include "plx_test.h"
#include <complex.h>
#include <stdbool.h>

#define N 6
#define REG 256                 /* bytes per region: 2N elements (the stride) of at most 16 bytes */

enum { C_INT, C_UINT, C_FLOAT, C_COMPLEX, C_BYTE, C_BOOL };

struct val {
    long long re, im;
};

struct tdesc {
    MPI_Datatype dt;
    const char *name;
    int cls;
    size_t size;
    int kind;                   /* storage: see st/ld */
};

enum { K_SCHAR, K_UCHAR, K_SHORT, K_INT, K_UINT, K_LL, K_ULONG, K_I8, K_U64, K_FLOAT, K_DOUBLE, K_FC, K_DC, K_BOOL };

static const struct tdesc types[] = {
    { MPI_SIGNED_CHAR, "MPI_SIGNED_CHAR", C_INT, sizeof(signed char), K_SCHAR },
    { MPI_UNSIGNED_CHAR, "MPI_UNSIGNED_CHAR", C_UINT, sizeof(unsigned char), K_UCHAR },
    { MPI_SHORT, "MPI_SHORT", C_INT, sizeof(short), K_SHORT },
    { MPI_INT, "MPI_INT", C_INT, sizeof(int), K_INT },
    { MPI_UNSIGNED, "MPI_UNSIGNED", C_UINT, sizeof(unsigned), K_UINT },
    { MPI_LONG_LONG, "MPI_LONG_LONG", C_INT, sizeof(long long), K_LL },
    { MPI_UNSIGNED_LONG, "MPI_UNSIGNED_LONG", C_UINT, sizeof(unsigned long), K_ULONG },
    { MPI_INT8_T, "MPI_INT8_T", C_INT, 1, K_I8 },
    { MPI_UINT64_T, "MPI_UINT64_T", C_UINT, 8, K_U64 },
    { MPI_FLOAT, "MPI_FLOAT", C_FLOAT, sizeof(float), K_FLOAT },
    { MPI_DOUBLE, "MPI_DOUBLE", C_FLOAT, sizeof(double), K_DOUBLE },
    { MPI_C_FLOAT_COMPLEX, "MPI_C_FLOAT_COMPLEX", C_COMPLEX, sizeof(float _Complex), K_FC },
    { MPI_C_DOUBLE_COMPLEX, "MPI_C_DOUBLE_COMPLEX", C_COMPLEX, sizeof(double _Complex), K_DC },
    { MPI_BYTE, "MPI_BYTE", C_BYTE, 1, K_UCHAR },
    { MPI_C_BOOL, "MPI_C_BOOL", C_BOOL, sizeof(bool), K_BOOL },
};

static const struct {
    MPI_Op op;
    const char *name;
    unsigned cls;               /* bits of C_* it applies to */
} ops[] = {
    { MPI_SUM, "MPI_SUM", 1 << C_INT | 1 << C_UINT | 1 << C_FLOAT | 1 << C_COMPLEX },
    { MPI_PROD, "MPI_PROD", 1 << C_INT | 1 << C_UINT | 1 << C_FLOAT | 1 << C_COMPLEX },
    { MPI_MIN, "MPI_MIN", 1 << C_INT | 1 << C_UINT | 1 << C_FLOAT },
    { MPI_MAX, "MPI_MAX", 1 << C_INT | 1 << C_UINT | 1 << C_FLOAT },
    { MPI_LAND, "MPI_LAND", 1 << C_INT | 1 << C_UINT | 1 << C_BOOL },
    { MPI_LOR, "MPI_LOR", 1 << C_INT | 1 << C_UINT | 1 << C_BOOL },
    { MPI_LXOR, "MPI_LXOR", 1 << C_INT | 1 << C_UINT | 1 << C_BOOL },
    { MPI_BAND, "MPI_BAND", 1 << C_INT | 1 << C_UINT | 1 << C_BYTE },
    { MPI_BOR, "MPI_BOR", 1 << C_INT | 1 << C_UINT | 1 << C_BYTE },
    { MPI_BXOR, "MPI_BXOR", 1 << C_INT | 1 << C_UINT | 1 << C_BYTE },
    { MPI_REPLACE, "MPI_REPLACE", 0x3f },
    { MPI_NO_OP, "MPI_NO_OP", 0x3f },
};

static void st(const struct tdesc *t, void *p, struct val v)
{
    switch (t->kind) {
    case K_SCHAR: *(signed char *)p = (signed char)v.re; break;
    case K_UCHAR: *(unsigned char *)p = (unsigned char)v.re; break;
    case K_SHORT: *(short *)p = (short)v.re; break;
    case K_INT: *(int *)p = (int)v.re; break;
    case K_UINT: *(unsigned *)p = (unsigned)v.re; break;
    case K_LL: *(long long *)p = v.re; break;
    case K_ULONG: *(unsigned long *)p = (unsigned long)v.re; break;
    case K_I8: *(int8_t *)p = (int8_t)v.re; break;
    case K_U64: *(uint64_t *)p = (uint64_t)v.re; break;
    case K_FLOAT: *(float *)p = (float)v.re; break;
    case K_DOUBLE: *(double *)p = (double)v.re; break;
    case K_FC: *(float _Complex *)p = (float)v.re + (float)v.im * (float _Complex)I; break;
    case K_DC: *(double _Complex *)p = (double)v.re + (double)v.im * (double _Complex)I; break;
    case K_BOOL: *(bool *)p = v.re != 0; break;
    }
}

static struct val ld(const struct tdesc *t, const void *p)
{
    struct val v = { 0, 0 };
    switch (t->kind) {
    case K_SCHAR: v.re = *(const signed char *)p; break;
    case K_UCHAR: v.re = *(const unsigned char *)p; break;
    case K_SHORT: v.re = *(const short *)p; break;
    case K_INT: v.re = *(const int *)p; break;
    case K_UINT: v.re = *(const unsigned *)p; break;
    case K_LL: v.re = *(const long long *)p; break;
    case K_ULONG: v.re = (long long)*(const unsigned long *)p; break;
    case K_I8: v.re = *(const int8_t *)p; break;
    case K_U64: v.re = (long long)*(const uint64_t *)p; break;
    case K_FLOAT: v.re = (long long)*(const float *)p; break;
    case K_DOUBLE: v.re = (long long)*(const double *)p; break;
    case K_FC: v.re = (long long)crealf(*(const float _Complex *)p); v.im = (long long)cimagf(*(const float _Complex *)p); break;
    case K_DC: v.re = (long long)creal(*(const double _Complex *)p); v.im = (long long)cimag(*(const double _Complex *)p); break;
    case K_BOOL: v.re = *(const bool *)p; break;
    }
    return v;
}

/* Small integers, zeros among them, exact in every type (products too). */
static struct val init_v(const struct tdesc *t, int owner, int i)
{
    struct val v = { (owner + i) % 4, t->cls == C_COMPLEX ? 1 + i % 2 : 0 };
    if (t->cls == C_BOOL)
        v.re = (owner + i) % 2;
    return v;
}

static struct val orig_v(const struct tdesc *t, int origin, int i)
{
    struct val v = { (origin + 2 * i) % 3, t->cls == C_COMPLEX ? i % 3 : 0 };
    if (t->cls == C_BOOL)
        v.re = (origin + i / 2) % 2;
    return v;
}

static struct val apply(const struct tdesc *t, MPI_Op op, struct val a, struct val b)
{
    struct val r = { 0, 0 };
    if (op == MPI_SUM) {
        r.re = a.re + b.re;
        r.im = a.im + b.im;
    } else if (op == MPI_PROD) {
        r.re = a.re * b.re - a.im * b.im;
        r.im = a.re * b.im + a.im * b.re;
    } else if (op == MPI_MIN) {
        r.re = a.re < b.re ? a.re : b.re;
    } else if (op == MPI_MAX) {
        r.re = a.re > b.re ? a.re : b.re;
    } else if (op == MPI_LAND) {
        r.re = a.re && b.re;
    } else if (op == MPI_LOR) {
        r.re = a.re || b.re;
    } else if (op == MPI_LXOR) {
        r.re = !a.re != !b.re;
    } else if (op == MPI_BAND) {
        r.re = a.re & b.re;
    } else if (op == MPI_BOR) {
        r.re = a.re | b.re;
    } else if (op == MPI_BXOR) {
        r.re = a.re ^ b.re;
    } else if (op == MPI_REPLACE) {
        r = b;
    } else {
        r = a;
    }
    (void)t;
    return r;
}

static char *mem;

#define AT(region, idx, t) (mem + (region) * REG + (size_t)(idx) * (t)->size)

static void fill_init(const struct tdesc *t, int rank)
{
    memset(mem, 0, 5 * REG);
    for (int i = 0; i < N; i++) {
        st(t, AT(0, i, t), init_v(t, rank, i));
        st(t, AT(1, i, t), init_v(t, rank, i));
        st(t, AT(3, i, t), init_v(t, rank, i));
        st(t, AT(4, i, t), init_v(t, rank, i));
    }
    for (int i = 0; i < 2 * N; i++)
        st(t, AT(2, i, t), init_v(t, rank, i));
}

static void check_val(const struct tdesc *t, const char *op, const char *what, int i, struct val got, struct val exp)
{
    PLX_CHECK(got.re == exp.re && got.im == exp.im, "%s %s %s element %d: got (%lld,%lld), expected (%lld,%lld)",
              t->name, op, what, i, got.re, got.im, exp.re, exp.im);
}

/* One type and op: the origin's calls (mode 0: fence epoch; 1: lock_all). */
static void one(MPI_Win win, const struct tdesc *t, int k, int mode, int rank, int size)
{
    MPI_Op op = ops[k].op;
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    char obuf[N * 16], res[N * 16], fres[16];
    for (int i = 0; i < N; i++)
        st(t, obuf + (size_t)i * t->size, orig_v(t, rank, i));
    memset(res, 0x5a, sizeof res);
    fill_init(t, rank);
    MPI_Datatype vec;
    PLX_CHECK_MPI(MPI_Type_vector(N, 1, 2, t->dt, &vec));
    PLX_CHECK_MPI(MPI_Type_commit(&vec));
    if (mode == 0) {
        PLX_CHECK_MPI(MPI_Win_fence(0, win));
    } else {
        PLX_CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
        PLX_CHECK_MPI(MPI_Win_lock_all(0, win));
    }
    if (op != MPI_NO_OP) {
        PLX_CHECK_MPI(MPI_Accumulate(obuf, N, t->dt, next, 0, N, t->dt, op, win));
        PLX_CHECK_MPI(MPI_Accumulate(obuf, N, t->dt, next, 2 * REG, 1, vec, op, win));
    }
    PLX_CHECK_MPI(MPI_Get_accumulate(obuf, N, t->dt, res, N, t->dt, next, REG, N, t->dt, op, win));
    PLX_CHECK_MPI(MPI_Fetch_and_op(obuf, fres, t->dt, next, 3 * REG, op, win));
    if (mode == 0) {
        PLX_CHECK_MPI(MPI_Win_fence(0, win));
    } else {
        PLX_CHECK_MPI(MPI_Win_unlock_all(win));
        PLX_CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    }
    const char *on = ops[k].name;
    /* what came back: the target's initial values */
    for (int i = 0; i < N; i++)
        check_val(t, on, "get_accumulate result", i, ld(t, res + (size_t)i * t->size), init_v(t, next, i));
    check_val(t, on, "fetch_and_op result", 0, ld(t, fres), init_v(t, next, 0));
    /* what the previous rank did to this one */
    for (int i = 0; i < N; i++) {
        struct val exp = op == MPI_NO_OP ? init_v(t, rank, i) : apply(t, op, init_v(t, rank, i), orig_v(t, prev, i));
        check_val(t, on, "accumulate", i, ld(t, AT(0, i, t)), exp);
        check_val(t, on, "get_accumulate", i, ld(t, AT(1, i, t)),
                  apply(t, op, init_v(t, rank, i), orig_v(t, prev, i)));
    }
    for (int i = 0; i < 2 * N; i++) {
        struct val exp = init_v(t, rank, i);
        if (i % 2 == 0 && op != MPI_NO_OP)
            exp = apply(t, op, exp, orig_v(t, prev, i / 2));
        check_val(t, on, "strided accumulate", i, ld(t, AT(2, i, t)), exp);
    }
    check_val(t, on, "fetch_and_op", 0, ld(t, AT(3, 0, t)), apply(t, op, init_v(t, rank, 0), orig_v(t, prev, 0)));
    for (int i = 1; i < N; i++)
        check_val(t, on, "beside fetch_and_op", i, ld(t, AT(3, i, t)), init_v(t, rank, i));
    MPI_Type_free(&vec);
}

static void cas(MPI_Win win, const struct tdesc *t, int rank, int size)
{
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    char nv[16], cmp[16], bad[16], r1[16], r2[16];
    int isbool = t->cls == C_BOOL;
    struct val want = { isbool ? !init_v(t, next, 0).re : 10 + rank, 0 };
    st(t, nv, want);
    st(t, cmp, init_v(t, next, 0));
    struct val b = { isbool ? !init_v(t, next, 1).re : init_v(t, next, 1).re + 1, 0 };
    st(t, bad, b);
    fill_init(t, rank);
    PLX_CHECK_MPI(MPI_Win_fence(0, win));
    /* region 4: element 0 matches, element 1 does not */
    PLX_CHECK_MPI(MPI_Compare_and_swap(nv, cmp, r1, t->dt, next, 4 * REG, win));
    PLX_CHECK_MPI(MPI_Compare_and_swap(nv, bad, r2, t->dt, next, 4 * REG + (MPI_Aint)t->size, win));
    PLX_CHECK_MPI(MPI_Win_fence(0, win));
    check_val(t, "cas", "matching result", 0, ld(t, r1), init_v(t, next, 0));
    check_val(t, "cas", "failing result", 1, ld(t, r2), init_v(t, next, 1));
    struct val mine = { isbool ? !init_v(t, rank, 0).re : 10 + prev, 0 };
    check_val(t, "cas", "swapped", 0, ld(t, AT(4, 0, t)), mine);
    check_val(t, "cas", "left alone", 1, ld(t, AT(4, 1, t)), init_v(t, rank, 1));
}

int main(int argc, char **argv)
{
    plx_test_init(&argc, &argv, "rma_natacc");
    int rank = plx_test_state()->rank, size = plx_test_state()->size;
    MPI_Win win;
    PLX_CHECK_MPI(MPI_Win_allocate(5 * REG, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
    for (int mode = 0; mode < 2; mode++)
        for (size_t ti = 0; ti < sizeof types / sizeof types[0]; ti++)
            for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++)
                if (ops[k].cls >> types[ti].cls & 1)
                    one(win, &types[ti], (int)k, mode, rank, size);
    for (size_t ti = 0; ti < sizeof types / sizeof types[0]; ti++)
        if (types[ti].cls != C_FLOAT && types[ti].cls != C_COMPLEX)
            cas(win, &types[ti], rank, size);
    PLX_CHECK_MPI(MPI_Win_fence(0, win));
    PLX_CHECK_MPI(MPI_Win_free(&win));
    return plx_test_finish();
}
