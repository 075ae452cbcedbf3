/*
 * Predefined datatypes: one object per predefined handle, registered at
 * init (see datatype.h).
 */
#include <stddef.h>
#include <string.h>
#include "core/datatype.h"
#include "core/plexus.h"

struct plx_objtab plx_datatype_tab = PLX_OBJTAB_INIT("datatype", PLX_OBJ_DATATYPE, struct plx_datatype);

struct plx_builtin_dt {
    MPI_Datatype handle;
    const char *name;
};

#define DT(h) { h, #h }
static const struct plx_builtin_dt plx_builtin_dts[] = {
    DT(MPI_CHAR), DT(MPI_SIGNED_CHAR), DT(MPI_UNSIGNED_CHAR), DT(MPI_BYTE), DT(MPI_WCHAR),
    DT(MPI_SHORT), DT(MPI_UNSIGNED_SHORT), DT(MPI_INT), DT(MPI_UNSIGNED), DT(MPI_LONG),
    DT(MPI_UNSIGNED_LONG), DT(MPI_LONG_LONG_INT), DT(MPI_UNSIGNED_LONG_LONG), DT(MPI_FLOAT),
    DT(MPI_DOUBLE), DT(MPI_LONG_DOUBLE), DT(MPI_PACKED),
    DT(MPI_INT8_T), DT(MPI_INT16_T), DT(MPI_INT32_T), DT(MPI_INT64_T), DT(MPI_UINT8_T),
    DT(MPI_UINT16_T), DT(MPI_UINT32_T), DT(MPI_UINT64_T), DT(MPI_C_BOOL), DT(MPI_C_FLOAT_COMPLEX),
    DT(MPI_C_DOUBLE_COMPLEX), DT(MPI_C_LONG_DOUBLE_COMPLEX), DT(MPI_AINT), DT(MPI_OFFSET),
    DT(MPI_COUNT), DT(MPI_CXX_BOOL), DT(MPI_CXX_FLOAT_COMPLEX), DT(MPI_CXX_DOUBLE_COMPLEX),
    DT(MPI_CXX_LONG_DOUBLE_COMPLEX), DT(MPI_2INT),
    DT(MPI_CHARACTER), DT(MPI_LOGICAL), DT(MPI_INTEGER), DT(MPI_REAL), DT(MPI_DOUBLE_PRECISION),
    DT(MPI_COMPLEX), DT(MPI_DOUBLE_COMPLEX), DT(MPI_2INTEGER), DT(MPI_2REAL),
    DT(MPI_2DOUBLE_PRECISION), DT(MPI_INTEGER1), DT(MPI_INTEGER2), DT(MPI_INTEGER4),
    DT(MPI_INTEGER8), DT(MPI_REAL4), DT(MPI_REAL8), DT(MPI_REAL16), DT(MPI_COMPLEX8),
    DT(MPI_COMPLEX16), DT(MPI_COMPLEX32),
};
#undef DT

static struct plx_datatype plx_builtin_objs[sizeof plx_builtin_dts / sizeof plx_builtin_dts[0]];

/* The value+index pair types: struct { T v; int i; } with C padding. */
#define PAIR(T, h, nm) { h, nm, sizeof(T), offsetof(struct { T v; int i; }, i), \
                         sizeof(struct { T v; int i; }) }
static const struct {
    MPI_Datatype handle;
    const char *name;
    MPI_Aint vsize, ioff, extent;
} plx_pair_dts[] = {
    PAIR(float, MPI_FLOAT_INT, "MPI_FLOAT_INT"),
    PAIR(double, MPI_DOUBLE_INT, "MPI_DOUBLE_INT"),
    PAIR(long, MPI_LONG_INT, "MPI_LONG_INT"),
    PAIR(short, MPI_SHORT_INT, "MPI_SHORT_INT"),
    PAIR(long double, MPI_LONG_DOUBLE_INT, "MPI_LONG_DOUBLE_INT"),
};
#undef PAIR
static struct plx_datatype plx_pair_objs[5];

void plx_datatype_init_builtins(void)
{
    for (size_t i = 0; i < sizeof plx_builtin_dts / sizeof plx_builtin_dts[0]; i++) {
        struct plx_datatype *d = &plx_builtin_objs[i];
        MPI_Datatype h = plx_builtin_dts[i].handle;
        MPI_Aint sz = (h >> 8) & 0xff;
        memset(d, 0, sizeof *d);
        d->size = sz;
        d->extent = d->true_extent = sz;
        d->contig = 1;
        d->nblocks = 1;
        d->blocks[0].len = sz;
        strncpy(d->name, plx_builtin_dts[i].name, sizeof d->name - 1);
        plx_obj_register_builtin(&plx_datatype_tab, h, d);
    }
    for (size_t i = 0; i < 5; i++) {
        struct plx_datatype *d = &plx_pair_objs[i];
        memset(d, 0, sizeof *d);
        d->size = plx_pair_dts[i].vsize + (MPI_Aint)sizeof(int);
        d->extent = d->true_extent = plx_pair_dts[i].extent;
        d->contig = d->size == d->extent;
        d->nblocks = 2;
        d->blocks[0].len = plx_pair_dts[i].vsize;
        d->blocks[1].off = plx_pair_dts[i].ioff;
        d->blocks[1].len = sizeof(int);
        if (d->contig) {
            d->nblocks = 1;
            d->blocks[0].len = d->size;
        }
        strncpy(d->name, plx_pair_dts[i].name, sizeof d->name - 1);
        plx_obj_register_builtin(&plx_datatype_tab, plx_pair_dts[i].handle, d);
    }
}

void plx_dt_pack(const void *buf, MPI_Aint count, const struct plx_datatype *dt, void *out)
{
    const char *src = (const char *)buf + dt->true_lb;
    char *o = out;
    for (MPI_Aint e = 0; e < count; e++, src += dt->extent)
        for (int b = 0; b < dt->nblocks; b++) {
            memcpy(o, src + dt->blocks[b].off, (size_t)dt->blocks[b].len);
            o += dt->blocks[b].len;
        }
}

void plx_dt_unpack(const void *in, size_t bytes, void *buf, const struct plx_datatype *dt)
{
    const char *i = in;
    char *dst = (char *)buf + dt->true_lb;
    while (bytes > 0) {
        for (int b = 0; b < dt->nblocks && bytes > 0; b++) {
            size_t n = PLX_MIN((size_t)dt->blocks[b].len, bytes);
            memcpy(dst + dt->blocks[b].off, i, n);
            i += n;
            bytes -= n;
        }
        dst += dt->extent;
    }
}
