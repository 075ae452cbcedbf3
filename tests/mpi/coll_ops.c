/*
 * Every predefined reduction operation on every type MPI 3.1 section 5.9.2
 * allows it for, through MPI_Allreduce (all ranks) and MPI_Reduce_local;
 * MINLOC/MAXLOC on every pair type; pairs the standard does not define
 * fail with MPI_ERR_OP; MPI_Op_commutative of predefined and user ops.
 * The expected values are computed here in the same C type.
 */
#include "plx_test.h"
#include <complex.h>
#include <stdbool.h>

static int rank, size;
#define N 5

static const MPI_Op all_ops[] = {MPI_MAX, MPI_MIN, MPI_SUM, MPI_PROD, MPI_LAND, MPI_LOR,
                                 MPI_LXOR, MPI_BAND, MPI_BOR, MPI_BXOR};
static const char *op_name(MPI_Op op)
{
    return op == MPI_MAX ? "MAX" : op == MPI_MIN ? "MIN" : op == MPI_SUM ? "SUM" : op == MPI_PROD ? "PROD"
         : op == MPI_LAND ? "LAND" : op == MPI_LOR ? "LOR" : op == MPI_LXOR ? "LXOR" : op == MPI_BAND ? "BAND"
         : op == MPI_BOR ? "BOR" : op == MPI_BXOR ? "BXOR" : "?";
}

/* small values that keep every op exact and in range of 8-bit types */
static int ival(MPI_Op op, int r, int i)
{
    if (op == MPI_PROD)
        return (r + i) % 4 == 0 ? 2 : 1;
    if (op == MPI_SUM)
        return (r + i) % 4;
    if (op == MPI_MAX || op == MPI_MIN)
        return (r * 3 + i) % 7;
    if (op == MPI_LAND || op == MPI_LOR || op == MPI_LXOR)
        return (r + i) % 3 == 0 ? 0 : (r + i) % 3; /* 0, 1 and 2 */
    return (r * 37 + i * 11) & 0x7f;
}

/* MPICH accepts logical ops on Fortran integers, MPI_AINT/OFFSET/COUNT and
 * floating types, which MPI 3.1 5.9.2 does not define: those MPI_ERR_OP
 * checks bind the other libraries only. */
static int mpich_extra(MPI_Datatype t, MPI_Op op)
{
    static int is_mpich = -1;
    if (is_mpich < 0)
        is_mpich = plx_lib_is("MPICH Version:");
    return is_mpich && (op == MPI_LAND || op == MPI_LOR || op == MPI_LXOR) &&
           (t == MPI_INTEGER || t == MPI_AINT || t == MPI_OFFSET || t == MPI_COUNT || t == MPI_FLOAT ||
            t == MPI_DOUBLE || t == MPI_LONG_DOUBLE || t == MPI_REAL || t == MPI_DOUBLE_PRECISION);
}

#define COMBINE(op, a, b)                                                                          \
    ((op) == MPI_MAX    ? ((a) > (b) ? (a) : (b))                                                  \
     : (op) == MPI_MIN  ? ((a) < (b) ? (a) : (b))                                                  \
     : (op) == MPI_SUM  ? (a) + (b)                                                                \
     : (op) == MPI_PROD ? (a) * (b)                                                                \
     : (op) == MPI_LAND ? ((a) && (b))                                                             \
     : (op) == MPI_LOR  ? ((a) || (b))                                                             \
     : (op) == MPI_LXOR ? (!(a) != !(b))                                                           \
     : (op) == MPI_BAND ? ((a) & (b))                                                              \
     : (op) == MPI_BOR  ? ((a) | (b))                                                              \
                        : ((a) ^ (b)))
#define COMBINE_F(op, a, b)                                                                        \
    ((op) == MPI_MAX ? ((a) > (b) ? (a) : (b)) : (op) == MPI_MIN ? ((a) < (b) ? (a) : (b))         \
     : (op) == MPI_SUM ? (a) + (b) : (a) * (b))

/* Runs op on type M (C type T) and checks against the local computation;
 * ops not in `allowed` (a bit per index of all_ops) must fail MPI_ERR_OP. */
#define DEF_TEST(fname, T, M, allowed, combine)                                                    \
    static void fname(const char *tname)                                                          \
    {                                                                                              \
        for (int o = 0; o < 10; o++) {                                                             \
            MPI_Op op = all_ops[o];                                                                \
            T in[N], out[N], want[N], a[N];                                                        \
            for (int i = 0; i < N; i++) {                                                          \
                in[i] = (T)ival(op, rank, i);                                                      \
                want[i] = (T)ival(op, 0, i);                                                       \
                out[i] = (T)0;                                                                     \
            }                                                                                      \
            for (int r = 1; r < size; r++)                                                         \
                for (int i = 0; i < N; i++) {                                                      \
                    T v = (T)ival(op, r, i);                                                       \
                    want[i] = (T)(combine(op, want[i], v));                                        \
                }                                                                                  \
            if (!((allowed) >> o & 1)) {                                                           \
                if (!mpich_extra(M, op))                                                           \
                    PLX_CHECK_ERR(MPI_Allreduce(in, out, N, M, op, MPI_COMM_WORLD), MPI_ERR_OP);   \
                continue;                                                                          \
            }                                                                                      \
            PLX_CHECK_MPI(MPI_Allreduce(in, out, N, M, op, MPI_COMM_WORLD));                       \
            PLX_CHECK(same(out, want), "Allreduce %s on %s", op_name(op), tname);                  \
            for (int i = 0; i < N; i++) {                                                          \
                a[i] = (T)ival(op, 1, i);                                                          \
                out[i] = (T)ival(op, 2, i);                                                        \
                want[i] = (T)(combine(op, a[i], out[i]));                                          \
            }                                                                                      \
            PLX_CHECK_MPI(MPI_Reduce_local(a, out, N, M, op));                                     \
            PLX_CHECK(same(out, want), "Reduce_local %s on %s", op_name(op), tname);               \
        }                                                                                          \
    }

/* element-wise (memcmp would see long double padding) */
#define same(x, y) ({ int s_ = 1; for (int i_ = 0; i_ < N; i_++) if ((x)[i_] != (y)[i_]) s_ = 0; s_; })

#define ALL_INT 0x3ff   /* MAX MIN SUM PROD LAND LOR LXOR BAND BOR BXOR */
#define FLOATS 0x00f    /* MAX MIN SUM PROD */
#define LOGICAL 0x070   /* LAND LOR LXOR */
#define BITS 0x380      /* BAND BOR BXOR */
#define CPLX 0x00c      /* SUM PROD */

typedef signed char schar;
typedef unsigned char uchar;
typedef unsigned short ushort;
typedef unsigned long ulong;
typedef long long llong;
typedef unsigned long long ullong;
typedef long double ldouble;
typedef float _Complex fcplx;
typedef double _Complex dcplx;
typedef long double _Complex ldcplx;

DEF_TEST(t_schar, schar, MPI_SIGNED_CHAR, ALL_INT, COMBINE)
DEF_TEST(t_uchar, uchar, MPI_UNSIGNED_CHAR, ALL_INT, COMBINE)
DEF_TEST(t_short, short, MPI_SHORT, ALL_INT, COMBINE)
DEF_TEST(t_ushort, ushort, MPI_UNSIGNED_SHORT, ALL_INT, COMBINE)
DEF_TEST(t_int, int, MPI_INT, ALL_INT, COMBINE)
DEF_TEST(t_unsigned, unsigned, MPI_UNSIGNED, ALL_INT, COMBINE)
DEF_TEST(t_long, long, MPI_LONG, ALL_INT, COMBINE)
DEF_TEST(t_ulong, ulong, MPI_UNSIGNED_LONG, ALL_INT, COMBINE)
DEF_TEST(t_llong, llong, MPI_LONG_LONG, ALL_INT, COMBINE)
DEF_TEST(t_ullong, ullong, MPI_UNSIGNED_LONG_LONG, ALL_INT, COMBINE)
DEF_TEST(t_i8, int8_t, MPI_INT8_T, ALL_INT, COMBINE)
DEF_TEST(t_i16, int16_t, MPI_INT16_T, ALL_INT, COMBINE)
DEF_TEST(t_i32, int32_t, MPI_INT32_T, ALL_INT, COMBINE)
DEF_TEST(t_i64, int64_t, MPI_INT64_T, ALL_INT, COMBINE)
DEF_TEST(t_u8, uint8_t, MPI_UINT8_T, ALL_INT, COMBINE)
DEF_TEST(t_u16, uint16_t, MPI_UINT16_T, ALL_INT, COMBINE)
DEF_TEST(t_u32, uint32_t, MPI_UINT32_T, ALL_INT, COMBINE)
DEF_TEST(t_u64, uint64_t, MPI_UINT64_T, ALL_INT, COMBINE)
DEF_TEST(t_integer, int, MPI_INTEGER, ALL_INT & ~LOGICAL, COMBINE)
/* the logical ops on MPI_AINT/OFFSET/COUNT: not in MPI's table, but MPICH takes them (issue 19) */
DEF_TEST(t_aint, MPI_Aint, MPI_AINT, ALL_INT, COMBINE)
DEF_TEST(t_offset, MPI_Offset, MPI_OFFSET, ALL_INT, COMBINE)
DEF_TEST(t_count, MPI_Count, MPI_COUNT, ALL_INT, COMBINE)
DEF_TEST(t_float, float, MPI_FLOAT, FLOATS, COMBINE_F)
DEF_TEST(t_double, double, MPI_DOUBLE, FLOATS, COMBINE_F)
DEF_TEST(t_ldouble, ldouble, MPI_LONG_DOUBLE, FLOATS, COMBINE_F)
DEF_TEST(t_real, float, MPI_REAL, FLOATS, COMBINE_F)
DEF_TEST(t_dprec, double, MPI_DOUBLE_PRECISION, FLOATS, COMBINE_F)
DEF_TEST(t_bool, bool, MPI_C_BOOL, LOGICAL, COMBINE)
DEF_TEST(t_byte, uchar, MPI_BYTE, BITS, COMBINE)

/* complex: SUM and PROD only; values with imaginary parts */
#define DEF_CPLX(fname, T, M)                                                                      \
    static void fname(const char *tname)                                                          \
    {                                                                                              \
        for (int o = 0; o < 10; o++) {                                                             \
            MPI_Op op = all_ops[o];                                                                \
            T in[N], out[N], want[N];                                                              \
            for (int i = 0; i < N; i++) {                                                          \
                in[i] = (T)((rank + i) % 3) + (T)((rank + 2 * i) % 2) * (T)I;                      \
                out[i] = 0;                                                                        \
            }                                                                                      \
            if (!(CPLX >> o & 1)) {                                                                \
                PLX_CHECK_ERR(MPI_Allreduce(in, out, N, M, op, MPI_COMM_WORLD), MPI_ERR_OP);       \
                continue;                                                                          \
            }                                                                                      \
            for (int i = 0; i < N; i++) {                                                          \
                want[i] = (T)(i % 3) + (T)((2 * i) % 2) * (T)I;                                    \
                for (int r = 1; r < size; r++) {                                                   \
                    T v = (T)((r + i) % 3) + (T)((r + 2 * i) % 2) * (T)I;                          \
                    want[i] = op == MPI_SUM ? want[i] + v : want[i] * v;                           \
                }                                                                                  \
            }                                                                                      \
            PLX_CHECK_MPI(MPI_Allreduce(in, out, N, M, op, MPI_COMM_WORLD));                       \
            int ok = 1;                                                                            \
            for (int i = 0; i < N; i++)                                                            \
                if (out[i] != want[i])                                                             \
                    ok = 0;                                                                        \
            PLX_CHECK(ok, "Allreduce %s on %s", op_name(op), tname);                               \
        }                                                                                          \
    }
DEF_CPLX(t_fcplx, fcplx, MPI_C_FLOAT_COMPLEX)
DEF_CPLX(t_dcplx, dcplx, MPI_C_DOUBLE_COMPLEX)
DEF_CPLX(t_ldcplx, ldcplx, MPI_C_LONG_DOUBLE_COMPLEX)
DEF_CPLX(t_complex, fcplx, MPI_COMPLEX)
DEF_CPLX(t_dcomplex, dcplx, MPI_DOUBLE_COMPLEX)

/* MINLOC/MAXLOC on the pair types; everything else on them is MPI_ERR_OP */
#define DEF_LOC(fname, TV, TI, M)                                                                  \
    static void fname(const char *tname)                                                          \
    {                                                                                              \
        struct p { TV v; TI i; } in[N], out[N], want[N];                                           \
        for (int k = 0; k < 2; k++) {                                                              \
            MPI_Op op = k ? MPI_MAXLOC : MPI_MINLOC;                                               \
            for (int i = 0; i < N; i++) {                                                          \
                in[i].v = (TV)((rank * (i + 2)) % 4);                                              \
                in[i].i = (TI)(size - rank); /* ties resolve to the smaller index */               \
                want[i].v = (TV)0;                                                                 \
                want[i].i = (TI)size;                                                              \
                for (int r = 1; r < size; r++) {                                                   \
                    TV v = (TV)((r * (i + 2)) % 4);                                                \
                    TI ix = (TI)(size - r);                                                        \
                    int take = k ? v > want[i].v : v < want[i].v;                                  \
                    if (take || (v == want[i].v && ix < want[i].i)) {                              \
                        want[i].v = v;                                                             \
                        want[i].i = ix;                                                            \
                    }                                                                              \
                }                                                                                  \
            }                                                                                      \
            PLX_CHECK_MPI(MPI_Allreduce(in, out, N, M, op, MPI_COMM_WORLD));                       \
            int ok = 1;                                                                            \
            for (int i = 0; i < N; i++)                                                            \
                if (out[i].v != want[i].v || out[i].i != want[i].i)                                \
                    ok = 0;                                                                        \
            PLX_CHECK(ok, "%s on %s", k ? "MAXLOC" : "MINLOC", tname);                             \
        }                                                                                          \
        PLX_CHECK_ERR(MPI_Allreduce(in, out, N, M, MPI_SUM, MPI_COMM_WORLD), MPI_ERR_OP);          \
    }
DEF_LOC(t_2int, int, int, MPI_2INT)
DEF_LOC(t_float_int, float, int, MPI_FLOAT_INT)
DEF_LOC(t_double_int, double, int, MPI_DOUBLE_INT)
DEF_LOC(t_long_int, long, int, MPI_LONG_INT)
DEF_LOC(t_short_int, short, int, MPI_SHORT_INT)
DEF_LOC(t_ldouble_int, long double, int, MPI_LONG_DOUBLE_INT)
DEF_LOC(t_2integer, int, int, MPI_2INTEGER)
DEF_LOC(t_2real, float, float, MPI_2REAL)
DEF_LOC(t_2dprec, double, double, MPI_2DOUBLE_PRECISION)

static void noop_fn(void *in, void *inout, int *len, MPI_Datatype *dt)
{
}

int main(int argc, char **argv)
{
    plx_test_init(&argc, &argv, "coll_ops");
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
#define RUN(f) f(&#f[2]) /* the name without "t_" */
    RUN(t_schar); RUN(t_uchar); RUN(t_short); RUN(t_ushort); RUN(t_int); RUN(t_unsigned);
    RUN(t_long); RUN(t_ulong); RUN(t_llong); RUN(t_ullong); RUN(t_i8); RUN(t_i16); RUN(t_i32);
    RUN(t_i64); RUN(t_u8); RUN(t_u16); RUN(t_u32); RUN(t_u64); RUN(t_integer); RUN(t_aint);
    RUN(t_offset); RUN(t_count); RUN(t_float); RUN(t_double); RUN(t_ldouble); RUN(t_real);
    RUN(t_dprec); RUN(t_bool); RUN(t_byte);
    RUN(t_fcplx); RUN(t_dcplx); RUN(t_ldcplx); RUN(t_complex); RUN(t_dcomplex);
    RUN(t_2int); RUN(t_float_int); RUN(t_double_int); RUN(t_long_int); RUN(t_short_int);
    RUN(t_ldouble_int); RUN(t_2integer); RUN(t_2real); RUN(t_2dprec);
    /* MINLOC on a plain type is not defined */
    int x = 1, y;
    PLX_CHECK_ERR(MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_MAXLOC, MPI_COMM_WORLD), MPI_ERR_OP);
    /* commutativity */
    int c = -1;
    PLX_CHECK_MPI(MPI_Op_commutative(MPI_SUM, &c));
    PLX_CHECK_EQ(c, 1, "MPI_SUM is commutative");
    MPI_Op uop;
    MPI_Op_create(noop_fn, 1, &uop);
    MPI_Op_commutative(uop, &c);
    PLX_CHECK_EQ(c, 1, "user op created commutative");
    PLX_CHECK_ERR(MPI_Op_free(&(MPI_Op){MPI_SUM}), MPI_ERR_OP);
    MPI_Op_free(&uop);
    return plx_test_finish();
}
