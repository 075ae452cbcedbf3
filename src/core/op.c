/* Predefined reductions (see op.h). */
#include <stdbool.h>
#include <stdint.h>
#include "core/op.h"

#define PLX_ARITH(T)                                                            \
    static int plx_op_##T(MPI_Op op, const T *a, T *b, MPI_Aint n)              \
    {                                                                           \
        MPI_Aint i;                                                             \
        switch (op) {                                                           \
        case MPI_SUM: for (i = 0; i < n; i++) b[i] = a[i] + b[i]; return 0;     \
        case MPI_PROD: for (i = 0; i < n; i++) b[i] = a[i] * b[i]; return 0;    \
        case MPI_MAX: for (i = 0; i < n; i++) if (a[i] > b[i]) b[i] = a[i]; return 0; \
        case MPI_MIN: for (i = 0; i < n; i++) if (a[i] < b[i]) b[i] = a[i]; return 0; \
        case MPI_LAND: for (i = 0; i < n; i++) b[i] = a[i] && b[i]; return 0;   \
        case MPI_LOR: for (i = 0; i < n; i++) b[i] = a[i] || b[i]; return 0;    \
        case MPI_LXOR: for (i = 0; i < n; i++) b[i] = !a[i] != !b[i]; return 0; \
        default: return -1;                                                     \
        }                                                                       \
    }

#define PLX_BITS(T)                                                             \
    static int plx_opi_##T(MPI_Op op, const T *a, T *b, MPI_Aint n)             \
    {                                                                           \
        MPI_Aint i;                                                             \
        switch (op) {                                                           \
        case MPI_BAND: for (i = 0; i < n; i++) b[i] = a[i] & b[i]; return 0;    \
        case MPI_BOR: for (i = 0; i < n; i++) b[i] = a[i] | b[i]; return 0;     \
        case MPI_BXOR: for (i = 0; i < n; i++) b[i] = a[i] ^ b[i]; return 0;    \
        default: return plx_op_##T(op, a, b, n);                                \
        }                                                                       \
    }

typedef signed char schar;
typedef unsigned char uchar;
typedef unsigned short ushort;
typedef unsigned int uint;
typedef unsigned long ulong;
typedef long long llong;
typedef unsigned long long ullong;
typedef long double ldouble;

PLX_ARITH(schar) PLX_BITS(schar)
PLX_ARITH(uchar) PLX_BITS(uchar)
PLX_ARITH(short) PLX_BITS(short)
PLX_ARITH(ushort) PLX_BITS(ushort)
PLX_ARITH(int) PLX_BITS(int)
PLX_ARITH(uint) PLX_BITS(uint)
PLX_ARITH(long) PLX_BITS(long)
PLX_ARITH(ulong) PLX_BITS(ulong)
PLX_ARITH(llong) PLX_BITS(llong)
PLX_ARITH(ullong) PLX_BITS(ullong)
PLX_ARITH(float)
PLX_ARITH(double)
PLX_ARITH(ldouble)

#define PLX_LOC(T, name)                                                        \
    struct plx_loc_##name { T v; int i; };                                      \
    static int plx_loc_##name(MPI_Op op, const struct plx_loc_##name *a,        \
                              struct plx_loc_##name *b, MPI_Aint n)             \
    {                                                                           \
        for (MPI_Aint k = 0; k < n; k++) {                                      \
            int take = op == MPI_MAXLOC ? a[k].v > b[k].v : a[k].v < b[k].v;    \
            if (take || (a[k].v == b[k].v && a[k].i < b[k].i))                  \
                b[k] = a[k];                                                    \
        }                                                                       \
        return 0;                                                               \
    }
PLX_LOC(int, 2int)
PLX_LOC(float, float_int)
PLX_LOC(double, double_int)
PLX_LOC(long, long_int)
PLX_LOC(short, short_int)
PLX_LOC(long double, ldouble_int)

int plx_op_valid(MPI_Op op)
{
    return op == MPI_SUM || op == MPI_PROD || op == MPI_MAX || op == MPI_MIN || op == MPI_LAND || op == MPI_LOR ||
           op == MPI_LXOR || op == MPI_BAND || op == MPI_BOR || op == MPI_BXOR || op == MPI_MAXLOC ||
           op == MPI_MINLOC || op == MPI_REPLACE || op == MPI_NO_OP;
}

#define CALL(fn, T) return fn(op, (const T *)in, (T *)inout, count)

int plx_op_apply(MPI_Op op, MPI_Datatype type, const void *in, void *inout, MPI_Aint count)
{
    if (op == MPI_MAXLOC || op == MPI_MINLOC) {
        switch (type) {
        case MPI_2INT: CALL(plx_loc_2int, struct plx_loc_2int);
        case MPI_FLOAT_INT: CALL(plx_loc_float_int, struct plx_loc_float_int);
        case MPI_DOUBLE_INT: CALL(plx_loc_double_int, struct plx_loc_double_int);
        case MPI_LONG_INT: CALL(plx_loc_long_int, struct plx_loc_long_int);
        case MPI_SHORT_INT: CALL(plx_loc_short_int, struct plx_loc_short_int);
        case MPI_LONG_DOUBLE_INT: CALL(plx_loc_ldouble_int, struct plx_loc_ldouble_int);
        default: return -1;
        }
    }
    switch (type) {
    case MPI_CHAR:
    case MPI_SIGNED_CHAR:
    case MPI_INT8_T: CALL(plx_opi_schar, schar);
    case MPI_UNSIGNED_CHAR:
    case MPI_BYTE:
    case MPI_UINT8_T: CALL(plx_opi_uchar, uchar);
    case MPI_SHORT:
    case MPI_INT16_T: CALL(plx_opi_short, short);
    case MPI_UNSIGNED_SHORT:
    case MPI_UINT16_T: CALL(plx_opi_ushort, ushort);
    case MPI_INT:
    case MPI_INT32_T: CALL(plx_opi_int, int);
    case MPI_UNSIGNED:
    case MPI_UINT32_T: CALL(plx_opi_uint, uint);
    case MPI_LONG:
    case MPI_AINT: CALL(plx_opi_long, long);
    case MPI_UNSIGNED_LONG: CALL(plx_opi_ulong, ulong);
    case MPI_LONG_LONG_INT:
    case MPI_INT64_T:
    case MPI_OFFSET:
    case MPI_COUNT: CALL(plx_opi_llong, llong);
    case MPI_UNSIGNED_LONG_LONG:
    case MPI_UINT64_T: CALL(plx_opi_ullong, ullong);
    case MPI_FLOAT: CALL(plx_op_float, float);
    case MPI_DOUBLE: CALL(plx_op_double, double);
    case MPI_LONG_DOUBLE: CALL(plx_op_ldouble, ldouble);
    default: return -1;
    }
}
