/*
 * Datatype objects: the predefined types, reference counting, and every
 * MPI-3.1 type constructor (see datatype.h for the run representation).
 *
 * Bounds follow MPI 3.1 section 4.1: a type's lb/ub are the min/max over its
 * typemap, except that once a resized type appears inside, its explicit
 * ("sticky") lb/ub markers decide, and a struct without an explicit ub is
 * padded to the alignment of its most aligned member (the epsilon of 4.1.6,
 * matching the C compiler's struct layout).
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include "core/datatype.h"
#include "core/log.h"
#include "core/plexus.h"

struct plx_objtab plx_datatype_tab = PLX_OBJTAB_INIT("datatype", PLX_OBJ_DATATYPE, struct plx_datatype);

/* --- predefined types ---------------------------------------------------- */

enum { PLX_K_PLAIN, PLX_K_COMPLEX, PLX_K_PAIR2 /* two equal halves: MPI_2INT ... */ };

struct plx_builtin_dt {
    MPI_Datatype handle;
    const char *name;
    int kind;
};

#define DT(h) { h, #h, PLX_K_PLAIN }
#define DTC(h) { h, #h, PLX_K_COMPLEX }
#define DTP(h) { h, #h, PLX_K_PAIR2 }
static const struct plx_builtin_dt plx_builtin_dts[] = {
    DT(MPI_CHAR), DT(MPI_SIGNED_CHAR), DT(MPI_UNSIGNED_CHAR), DT(MPI_BYTE), DT(MPI_WCHAR),
    DT(MPI_SHORT), DT(MPI_UNSIGNED_SHORT), DT(MPI_INT), DT(MPI_UNSIGNED), DT(MPI_LONG),
    DT(MPI_UNSIGNED_LONG), DT(MPI_LONG_LONG_INT), DT(MPI_UNSIGNED_LONG_LONG), DT(MPI_FLOAT),
    DT(MPI_DOUBLE), DT(MPI_LONG_DOUBLE), DT(MPI_PACKED),
    DT(MPI_INT8_T), DT(MPI_INT16_T), DT(MPI_INT32_T), DT(MPI_INT64_T), DT(MPI_UINT8_T),
    DT(MPI_UINT16_T), DT(MPI_UINT32_T), DT(MPI_UINT64_T), DT(MPI_C_BOOL),
    /* one handle for MPI_C_COMPLEX and MPI_C_FLOAT_COMPLEX: MPICH names it MPI_C_COMPLEX */
    { MPI_C_FLOAT_COMPLEX, "MPI_C_COMPLEX", PLX_K_COMPLEX },
    DTC(MPI_C_DOUBLE_COMPLEX), DTC(MPI_C_LONG_DOUBLE_COMPLEX), DT(MPI_AINT), DT(MPI_OFFSET),
    DT(MPI_COUNT), DT(MPI_CXX_BOOL), DTC(MPI_CXX_FLOAT_COMPLEX), DTC(MPI_CXX_DOUBLE_COMPLEX),
    DTC(MPI_CXX_LONG_DOUBLE_COMPLEX), DTP(MPI_2INT),
    DT(MPI_CHARACTER), DT(MPI_LOGICAL), DT(MPI_INTEGER), DT(MPI_REAL), DT(MPI_DOUBLE_PRECISION),
    DTC(MPI_COMPLEX), DTC(MPI_DOUBLE_COMPLEX), DTP(MPI_2INTEGER), DTP(MPI_2REAL),
    DTP(MPI_2DOUBLE_PRECISION), DT(MPI_INTEGER1), DT(MPI_INTEGER2), DT(MPI_INTEGER4),
    DT(MPI_INTEGER8), DT(MPI_REAL4), DT(MPI_REAL8), DT(MPI_REAL16), DTC(MPI_COMPLEX8),
    DTC(MPI_COMPLEX16), DTC(MPI_COMPLEX32),
};
#undef DT
#undef DTC
#undef DTP
#define PLX_NBUILTIN (sizeof plx_builtin_dts / sizeof plx_builtin_dts[0])

static struct plx_datatype plx_builtin_objs[PLX_NBUILTIN];

/* The value+index pair types: struct { T v; int i; } with C padding. */
#define PAIR(T, h, nm) { h, nm, sizeof(T), offsetof(struct { T v; int i; }, i), \
                         sizeof(struct { T v; int i; }), _Alignof(struct { T v; int i; }) }
static const struct {
    MPI_Datatype handle;
    const char *name;
    MPI_Aint vsize, ioff, extent;
    int align;
} plx_pair_dts[] = {
    PAIR(float, MPI_FLOAT_INT, "MPI_FLOAT_INT"),
    PAIR(double, MPI_DOUBLE_INT, "MPI_DOUBLE_INT"),
    PAIR(long, MPI_LONG_INT, "MPI_LONG_INT"),
    PAIR(short, MPI_SHORT_INT, "MPI_SHORT_INT"),
    PAIR(long double, MPI_LONG_DOUBLE_INT, "MPI_LONG_DOUBLE_INT"),
};
#undef PAIR
#define PLX_NPAIR (sizeof plx_pair_dts / sizeof plx_pair_dts[0])
static struct plx_datatype plx_pair_objs[PLX_NPAIR];
static struct plx_dt_run plx_pair_runs[PLX_NPAIR][2];
static struct plx_dt_run plx_pair_opruns[PLX_NPAIR];

static void plx_dt_set_contig(struct plx_datatype *d)
{
    d->contig = d->size == 0 ||
                (d->nruns == 1 && d->runs[0].cnt == 1 && d->runs[0].len == d->size && d->extent == d->size &&
                 d->runs[0].disp == d->true_lb);
}

int plx_dt_builtin_align(MPI_Datatype h)
{
    for (size_t i = 0; i < PLX_NBUILTIN; i++)
        if (plx_builtin_dts[i].handle == h) {
            int sz = (h >> 8) & 0xff;
            int a = plx_builtin_dts[i].kind == PLX_K_PLAIN ? sz : sz / 2;
            return a > 16 ? 16 : a;
        }
    for (size_t i = 0; i < PLX_NPAIR; i++)
        if (plx_pair_dts[i].handle == h)
            return plx_pair_dts[i].align;
    return 0;
}

void plx_datatype_init_builtins(void)
{
    for (size_t i = 0; i < PLX_NBUILTIN; i++) {
        struct plx_datatype *d = &plx_builtin_objs[i];
        MPI_Datatype h = plx_builtin_dts[i].handle;
        MPI_Aint sz = (h >> 8) & 0xff;
        memset(d, 0, sizeof *d);
        d->size = sz;
        d->extent = d->true_extent = sz;
        d->combiner = MPI_COMBINER_NAMED;
        d->committed = 1;
        d->align = plx_dt_builtin_align(h);
        d->basic = h;
        d->nelems = plx_builtin_dts[i].kind == PLX_K_PAIR2 ? 2 : 1;
        d->nruns = 1;
        d->run1 = (struct plx_dt_run){ 0, sz, 1, 0 };
        d->runs = d->opruns = &d->run1;
        d->nopruns = 1;
        plx_dt_set_contig(d);
        strncpy(d->name, plx_builtin_dts[i].name, sizeof d->name - 1);
        plx_obj_register_builtin(&plx_datatype_tab, h, d);
    }
    for (size_t i = 0; i < PLX_NPAIR; i++) {
        struct plx_datatype *d = &plx_pair_objs[i];
        memset(d, 0, sizeof *d);
        MPI_Aint vs = plx_pair_dts[i].vsize, io = plx_pair_dts[i].ioff;
        d->size = vs + (MPI_Aint)sizeof(int);
        d->extent = plx_pair_dts[i].extent;
        d->true_extent = io + (MPI_Aint)sizeof(int);
        d->combiner = MPI_COMBINER_NAMED;
        d->committed = 1;
        d->align = plx_pair_dts[i].align;
        d->basic = plx_pair_dts[i].handle;
        d->nelems = 2;
        if (io == vs) {
            d->nruns = 1;
            d->run1 = (struct plx_dt_run){ 0, d->size, 1, 0 };
            d->runs = &d->run1;
        } else {
            plx_pair_runs[i][0] = (struct plx_dt_run){ 0, vs, 1, 0 };
            plx_pair_runs[i][1] = (struct plx_dt_run){ io, (MPI_Aint)sizeof(int), 1, 0 };
            d->nruns = 2;
            d->runs = plx_pair_runs[i];
            static MPI_Aint pre[PLX_NPAIR][3];
            pre[i][0] = 0;
            pre[i][1] = vs;
            pre[i][2] = d->size;
            d->run_pre = pre[i];
        }
        /* reductions see whole pairs, padding included */
        plx_pair_opruns[i] = (struct plx_dt_run){ 0, d->extent, 1, 0 };
        d->opruns = &plx_pair_opruns[i];
        d->nopruns = 1;
        plx_dt_set_contig(d);
        strncpy(d->name, plx_pair_dts[i].name, sizeof d->name - 1);
        plx_obj_register_builtin(&plx_datatype_tab, plx_pair_dts[i].handle, d);
    }
}

/* Is h a pair type whose pairs have padding (reductions need opruns)? */
static int plx_dt_padded_pair(MPI_Datatype h)
{
    for (size_t i = 0; i < PLX_NPAIR; i++)
        if (plx_pair_dts[i].handle == h)
            return plx_pair_objs[i].size != plx_pair_objs[i].extent;
    return 0;
}

/* --- lifetime ------------------------------------------------------------ */

void plx_dt_addref(struct plx_datatype *dt)
{
    if (dt && !dt->obj.builtin)
        dt->obj.refcount++;
}

void plx_dt_release(struct plx_datatype *dt)
{
    if (!dt || dt->obj.builtin || --dt->obj.refcount > 0)
        return;
    for (int i = 0; i < dt->nt; i++)
        plx_dt_release(dt->children[i]);
    plx_dt_release(dt->inner);
    if (dt->opruns != dt->runs && dt->opruns != &dt->run1)
        free(dt->opruns);
    if (dt->runs != &dt->run1)
        free(dt->runs);
    free(dt->run_pre);
    free(dt->ints);
    free(dt->larges);
    free(dt->aints);
    free(dt->types);
    free(dt->children);
    plx_obj_free(&plx_datatype_tab, dt);
}

/* --- building runs ------------------------------------------------------- */

struct plx_runbuf {
    struct plx_dt_run *r;
    int n, cap;
};

static void plx_rb_push(struct plx_runbuf *b, MPI_Aint disp, MPI_Aint len, MPI_Aint cnt, MPI_Aint stride)
{
    if (len <= 0 || cnt <= 0)
        return;
    if (cnt > 1 && stride == len) {
        len *= cnt;
        cnt = 1;
    }
    if (cnt == 1)
        stride = 0;
    if (b->n > 0) {
        struct plx_dt_run *l = &b->r[b->n - 1];
        if (l->cnt == 1 && cnt == 1 && l->disp + l->len == disp) {
            l->len += len;
            return;
        }
        if (l->len == len) {
            MPI_Aint next = l->cnt == 1 ? disp - l->disp : l->stride;   /* the stride l would have */
            if (disp == l->disp + l->cnt * next && (cnt == 1 || stride == next) && next != len) {
                l->stride = next;
                l->cnt += cnt;
                return;
            }
        }
    }
    if (b->n == b->cap) {
        b->cap = b->cap ? 2 * b->cap : 8;
        b->r = realloc(b->r, (size_t)b->cap * sizeof *b->r);
        if (!b->r)
            plx_fatal("out of memory flattening a datatype (%d runs)", b->cap);
    }
    b->r[b->n++] = (struct plx_dt_run){ disp, len, cnt, stride };
}

/* n copies of the runs rs[0..nr) placed step bytes apart from disp0. */
static void plx_rb_repeat(struct plx_runbuf *b, const struct plx_dt_run *rs, int nr, MPI_Aint n, MPI_Aint step,
                          MPI_Aint disp0)
{
    if (n <= 0 || nr <= 0)
        return;
    if (nr == 1) {
        const struct plx_dt_run *c = &rs[0];
        if (n == 1) {
            plx_rb_push(b, disp0 + c->disp, c->len, c->cnt, c->stride);
            return;
        }
        if (c->cnt == 1) {
            plx_rb_push(b, disp0 + c->disp, c->len, n, step);
            return;
        }
        if (c->cnt * c->stride == step) {
            plx_rb_push(b, disp0 + c->disp, c->len, c->cnt * n, c->stride);
            return;
        }
    }
    for (MPI_Aint i = 0; i < n; i++)
        for (int k = 0; k < nr; k++)
            plx_rb_push(b, disp0 + i * step + rs[k].disp, rs[k].len, rs[k].cnt, rs[k].stride);
}

static void plx_child_runs(const struct plx_datatype *c, int op, const struct plx_dt_run **rs, int *nr)
{
    *rs = op ? c->opruns : c->runs;
    *nr = op ? c->nopruns : c->nruns;
}

/* Stores b as d's runs (op: as its reduction runs). */
static void plx_dt_take_runs(struct plx_datatype *d, struct plx_runbuf *b, int op)
{
    struct plx_dt_run *rs;
    if (b->n <= 1 && !op) {
        d->run1 = b->n ? b->r[0] : (struct plx_dt_run){ 0, 0, 0, 0 };
        rs = &d->run1;
        free(b->r);
    } else {
        rs = b->r ? b->r : plx_calloc(1, sizeof *rs);
    }
    if (op) {
        d->opruns = rs;
        d->nopruns = b->n;
        return;
    }
    d->runs = rs;
    d->nruns = b->n;
    if (b->n > 1) {
        d->run_pre = plx_malloc(((size_t)b->n + 1) * sizeof *d->run_pre);
        d->run_pre[0] = 0;
        for (int i = 0; i < b->n; i++)
            d->run_pre[i + 1] = d->run_pre[i] + rs[i].len * rs[i].cnt;
    }
}

/* --- bounds -------------------------------------------------------------- */

struct plx_dt_acc {
    int nlb_any, nub_any, slb, sub, tany, mixed, basic_set;
    MPI_Aint nlb, nub, slbv, subv, tlb, tub;
    MPI_Count size, nelems;
    MPI_Datatype basic;
    int align;
};

/* n copies of c placed at displacements between dmin and dmax. A child
 * contributes its explicit (sticky) bounds when it has them, else the
 * bounds of its data when it has any. */
static void plx_acc_add(struct plx_dt_acc *a, const struct plx_datatype *c, MPI_Aint n, MPI_Aint dmin, MPI_Aint dmax)
{
    if (n <= 0)
        return;
    MPI_Aint lo = dmin + c->lb, hi = dmax + c->lb + c->extent;
    if (c->sticky_lb) {
        a->slbv = a->slb ? PLX_MIN(a->slbv, lo) : lo;
        a->slb = 1;
    } else if (c->size > 0) {
        a->nlb = a->nlb_any ? PLX_MIN(a->nlb, lo) : lo;
        a->nlb_any = 1;
    }
    if (c->sticky_ub) {
        a->subv = a->sub ? PLX_MAX(a->subv, hi) : hi;
        a->sub = 1;
    } else if (c->size > 0) {
        a->nub = a->nub_any ? PLX_MAX(a->nub, hi) : hi;
        a->nub_any = 1;
    }
    if (c->size > 0) {
        MPI_Aint tlo = dmin + c->true_lb, thi = dmax + c->true_lb + c->true_extent;
        a->tlb = a->tany ? PLX_MIN(a->tlb, tlo) : tlo;
        a->tub = a->tany ? PLX_MAX(a->tub, thi) : thi;
        a->tany = 1;
        if (!a->basic_set) {
            a->basic = c->basic;
            a->basic_set = 1;
        } else if (a->basic != c->basic) {
            a->mixed = 1;
        }
    }
    a->size += (MPI_Count)n * c->size;
    a->nelems += (MPI_Count)n * c->nelems;
    a->align = PLX_MAX(a->align, c->align);
}

/* pad: a struct without an explicit ub is padded to its alignment. */
static void plx_acc_finish(struct plx_datatype *d, struct plx_dt_acc *a, int pad)
{
    MPI_Aint lb = a->slb ? a->slbv : a->nlb_any ? a->nlb : 0;
    MPI_Aint ub = a->sub ? a->subv : a->nub_any ? a->nub : lb;
    if (pad && !a->sub && a->align > 1) {
        MPI_Aint e = ub - lb, r = ((e % a->align) + a->align) % a->align;
        if (r)
            ub += a->align - r;
    }
    d->lb = lb;
    d->extent = ub - lb;
    d->sticky_lb = a->slb;
    d->sticky_ub = a->sub;
    d->true_lb = a->tany ? a->tlb : 0;
    d->true_extent = a->tany ? a->tub - a->tlb : 0;
    d->size = a->size;
    d->nelems = a->nelems;
    d->align = a->align ? a->align : 1;
    d->basic = a->basic_set && !a->mixed ? a->basic : MPI_DATATYPE_NULL;
}

/* --- constructors -------------------------------------------------------- */

static struct plx_datatype *plx_dt_new(int combiner, int ni, int na, int nt)
{
    struct plx_datatype *d = plx_obj_alloc(&plx_datatype_tab);
    if (!d)
        return NULL;
    d->combiner = combiner;
    d->nl = 0;                  /* plx_dt_record_large sets them */
    d->larges = NULL;
    d->ni = ni;
    d->na = na;
    d->nt = nt;
    d->ints = ni ? plx_malloc((size_t)ni * sizeof(int)) : NULL;
    d->aints = na ? plx_malloc((size_t)na * sizeof(MPI_Aint)) : NULL;
    d->types = nt ? plx_malloc((size_t)nt * sizeof(MPI_Datatype)) : NULL;
    d->children = nt ? plx_malloc((size_t)nt * sizeof *d->children) : NULL;
    d->runs = d->opruns = &d->run1;
    return d;
}

static void plx_dt_set_child(struct plx_datatype *d, int i, struct plx_datatype *c)
{
    plx_dt_addref(c);
    d->children[i] = c;
    d->types[i] = c->obj.handle;
}

/* Runs of d from its layout, built by fn for the data runs and, when d is
 * made of a padded pair type, again for the reduction runs. */
typedef void plx_dt_layout_fn(struct plx_runbuf *b, const struct plx_datatype *d, const void *arg, int op);

static void plx_dt_finish_runs(struct plx_datatype *d, plx_dt_layout_fn *fn, const void *arg)
{
    struct plx_runbuf b = { 0 };
    fn(&b, d, arg, 0);
    plx_dt_take_runs(d, &b, 0);
    if (d->basic != MPI_DATATYPE_NULL && plx_dt_padded_pair(d->basic)) {
        struct plx_runbuf o = { 0 };
        fn(&o, d, arg, 1);
        plx_dt_take_runs(d, &o, 1);
    } else {
        d->opruns = d->runs;
        d->nopruns = d->nruns;
    }
    plx_dt_set_contig(d);
}

/* contiguous and vector/hvector ------------------------------------------ */

struct plx_vec_arg {
    MPI_Aint count, blocklen, stride;   /* stride in bytes */
};

static void plx_vec_layout(struct plx_runbuf *b, const struct plx_datatype *d, const void *arg, int op)
{
    const struct plx_vec_arg *v = arg;
    const struct plx_datatype *c = d->children[0];
    const struct plx_dt_run *rs;
    int nr;
    plx_child_runs(c, op, &rs, &nr);
    struct plx_runbuf blk = { 0 };
    plx_rb_repeat(&blk, rs, nr, v->blocklen, c->extent, 0);
    plx_rb_repeat(b, blk.r, blk.n, v->count, v->stride, 0);
    free(blk.r);
}

static struct plx_datatype *plx_dt_vector_common(int combiner, MPI_Aint count, MPI_Aint blocklen,
                                                 MPI_Aint stride_bytes, struct plx_datatype *old)
{
    int ni = combiner == MPI_COMBINER_CONTIGUOUS ? 1 : combiner == MPI_COMBINER_VECTOR ? 3 : 2;
    struct plx_datatype *d = plx_dt_new(combiner, ni, combiner == MPI_COMBINER_HVECTOR ? 1 : 0, 1);
    if (!d)
        return NULL;
    plx_dt_set_child(d, 0, old);
    struct plx_dt_acc a = { 0 };
    if (count > 0 && blocklen > 0) {
        MPI_Aint e = old->extent;
        MPI_Aint dmin = PLX_MIN(0, (count - 1) * stride_bytes) + PLX_MIN(0, (blocklen - 1) * e);
        MPI_Aint dmax = PLX_MAX(0, (count - 1) * stride_bytes) + PLX_MAX(0, (blocklen - 1) * e);
        plx_acc_add(&a, old, count * blocklen, dmin, dmax);
    }
    plx_acc_finish(d, &a, 0);
    struct plx_vec_arg v = { count, blocklen, stride_bytes };
    plx_dt_finish_runs(d, plx_vec_layout, &v);
    return d;
}

struct plx_datatype *plx_dt_contiguous(MPI_Aint count, struct plx_datatype *old)
{
    struct plx_datatype *d = plx_dt_vector_common(MPI_COMBINER_CONTIGUOUS, 1, count, 0, old);
    if (d)
        d->ints[0] = (int)count;
    return d;
}

struct plx_datatype *plx_dt_vector(MPI_Aint count, MPI_Aint blocklen, MPI_Aint stride, int stride_in_bytes,
                                   struct plx_datatype *old)
{
    struct plx_datatype *d =
        plx_dt_vector_common(stride_in_bytes ? MPI_COMBINER_HVECTOR : MPI_COMBINER_VECTOR, count, blocklen,
                             stride_in_bytes ? stride : stride * old->extent, old);
    if (!d)
        return NULL;
    d->ints[0] = (int)count;
    d->ints[1] = (int)blocklen;
    if (stride_in_bytes)
        d->aints[0] = stride;
    else
        d->ints[2] = (int)stride;
    return d;
}

/* indexed family and struct ---------------------------------------------- */

struct plx_idx_arg {
    MPI_Aint count;
    const int *blocklens;
    int blocklen;
    const MPI_Aint *disps;      /* bytes */
    struct plx_datatype *const *types;  /* NULL: d->children[0] for all */
};

static void plx_idx_layout(struct plx_runbuf *b, const struct plx_datatype *d, const void *arg, int op)
{
    const struct plx_idx_arg *x = arg;
    for (MPI_Aint i = 0; i < x->count; i++) {
        const struct plx_datatype *c = x->types ? x->types[i] : d->children[0];
        MPI_Aint bl = x->blocklens ? x->blocklens[i] : x->blocklen;
        const struct plx_dt_run *rs;
        int nr;
        plx_child_runs(c, op, &rs, &nr);
        plx_rb_repeat(b, rs, nr, bl, c->extent, x->disps[i]);
    }
}

static void plx_idx_bounds(struct plx_dt_acc *a, const struct plx_idx_arg *x, struct plx_datatype *const *types,
                           struct plx_datatype *old)
{
    for (MPI_Aint i = 0; i < x->count; i++) {
        struct plx_datatype *c = types ? types[i] : old;
        MPI_Aint bl = x->blocklens ? x->blocklens[i] : x->blocklen;
        if (bl <= 0)
            continue;
        MPI_Aint d0 = x->disps[i], span = (bl - 1) * c->extent;
        plx_acc_add(a, c, bl, d0 + PLX_MIN(0, span), d0 + PLX_MAX(0, span));
    }
}

struct plx_datatype *plx_dt_indexed(MPI_Aint count, const int *blocklens, int blocklen, const int *idisps,
                                    const MPI_Aint *adisps, struct plx_datatype *old)
{
    int combiner, ni, na;
    if (blocklens) {
        combiner = idisps ? MPI_COMBINER_INDEXED : MPI_COMBINER_HINDEXED;
        ni = idisps ? 2 * (int)count + 1 : (int)count + 1;
    } else {
        combiner = idisps ? MPI_COMBINER_INDEXED_BLOCK : MPI_COMBINER_HINDEXED_BLOCK;
        ni = idisps ? (int)count + 2 : 2;
    }
    na = idisps ? 0 : (int)count;
    struct plx_datatype *d = plx_dt_new(combiner, ni, na, 1);
    if (!d)
        return NULL;
    plx_dt_set_child(d, 0, old);
    d->ints[0] = (int)count;
    MPI_Aint *disps = plx_malloc(((size_t)count + 1) * sizeof *disps);
    for (MPI_Aint i = 0; i < count; i++)
        disps[i] = idisps ? (MPI_Aint)idisps[i] * old->extent : adisps[i];
    switch (combiner) {
    case MPI_COMBINER_INDEXED:
        memcpy(d->ints + 1, blocklens, (size_t)count * sizeof(int));
        memcpy(d->ints + 1 + count, idisps, (size_t)count * sizeof(int));
        break;
    case MPI_COMBINER_HINDEXED:
        memcpy(d->ints + 1, blocklens, (size_t)count * sizeof(int));
        memcpy(d->aints, adisps, (size_t)count * sizeof(MPI_Aint));
        break;
    case MPI_COMBINER_INDEXED_BLOCK:
        d->ints[1] = blocklen;
        memcpy(d->ints + 2, idisps, (size_t)count * sizeof(int));
        break;
    default:
        d->ints[1] = blocklen;
        memcpy(d->aints, adisps, (size_t)count * sizeof(MPI_Aint));
        break;
    }
    struct plx_idx_arg x = { count, blocklens, blocklen, disps, NULL };
    struct plx_dt_acc a = { 0 };
    plx_idx_bounds(&a, &x, NULL, old);
    plx_acc_finish(d, &a, 0);
    plx_dt_finish_runs(d, plx_idx_layout, &x);
    free(disps);
    return d;
}

struct plx_datatype *plx_dt_struct(MPI_Aint count, const int *blocklens, const MPI_Aint *disps,
                                   struct plx_datatype *const *types)
{
    struct plx_datatype *d = plx_dt_new(MPI_COMBINER_STRUCT, (int)count + 1, (int)count, (int)count);
    if (!d)
        return NULL;
    d->ints[0] = (int)count;
    memcpy(d->ints + 1, blocklens, (size_t)count * sizeof(int));
    memcpy(d->aints, disps, (size_t)count * sizeof(MPI_Aint));
    for (MPI_Aint i = 0; i < count; i++)
        plx_dt_set_child(d, (int)i, types[i]);
    struct plx_idx_arg x = { count, blocklens, 0, disps, d->children };
    struct plx_dt_acc a = { 0 };
    plx_idx_bounds(&a, &x, d->children, NULL);
    plx_acc_finish(d, &a, 1);
    plx_dt_finish_runs(d, plx_idx_layout, &x);
    return d;
}

/* resized and dup ---------------------------------------------------------- */

static void plx_copy_layout(struct plx_runbuf *b, const struct plx_datatype *d, const void *arg, int op)
{
    const struct plx_dt_run *rs;
    int nr;
    plx_child_runs(d->children[0], op, &rs, &nr);
    for (int i = 0; i < nr; i++)
        plx_rb_push(b, rs[i].disp, rs[i].len, rs[i].cnt, rs[i].stride);
}

static void plx_dt_copy_shape(struct plx_datatype *d, const struct plx_datatype *old)
{
    d->size = old->size;
    d->lb = old->lb;
    d->extent = old->extent;
    d->true_lb = old->true_lb;
    d->true_extent = old->true_extent;
    d->sticky_lb = old->sticky_lb;
    d->sticky_ub = old->sticky_ub;
    d->align = old->align;
    d->basic = old->basic;
    d->nelems = old->nelems;
}

struct plx_datatype *plx_dt_resized(struct plx_datatype *old, MPI_Aint lb, MPI_Aint extent)
{
    struct plx_datatype *d = plx_dt_new(MPI_COMBINER_RESIZED, 0, 2, 1);
    if (!d)
        return NULL;
    plx_dt_set_child(d, 0, old);
    d->aints[0] = lb;
    d->aints[1] = extent;
    plx_dt_copy_shape(d, old);
    d->lb = lb;
    d->extent = extent;
    d->sticky_lb = d->sticky_ub = 1;
    plx_dt_finish_runs(d, plx_copy_layout, NULL);
    return d;
}

struct plx_datatype *plx_dt_dup(struct plx_datatype *old)
{
    struct plx_datatype *d = plx_dt_new(MPI_COMBINER_DUP, 0, 0, 1);
    if (!d)
        return NULL;
    plx_dt_set_child(d, 0, old);
    plx_dt_copy_shape(d, old);
    plx_dt_finish_runs(d, plx_copy_layout, NULL);
    d->committed = old->committed;  /* MPI: the duplicate has the same committed state */
    return d;
}

void plx_dt_record_large(struct plx_datatype *d, int nl, const MPI_Count *v)
{
    free(d->ints);
    d->ints = NULL;
    d->ni = 0;
    d->larges = plx_malloc((size_t)nl * sizeof *d->larges);
    memcpy(d->larges, v, (size_t)nl * sizeof *d->larges);
    d->nl = nl;
}

struct plx_datatype *plx_dt_f90(int combiner, int ni, const int *ints, struct plx_datatype *base)
{
    struct plx_datatype *d = plx_dt_new(combiner, ni, 0, 1);
    if (!d)
        return NULL;
    memcpy(d->ints, ints, (size_t)ni * sizeof(int));
    plx_dt_set_child(d, 0, base);   /* the layout comes from it */
    plx_dt_copy_shape(d, base);
    plx_dt_finish_runs(d, plx_copy_layout, NULL);
    d->nt = 0;                  /* the envelope names no datatype; base is predefined, never released */
    d->committed = 1;
    d->obj.builtin = 1;         /* MPI_Type_free refuses it, as for every predefined type */
    return d;
}

/* subarray and darray: built as the standard defines them, from the
 * constructors above, then given their own envelope. -------------------- */

static struct plx_datatype *plx_dt_wrap(int combiner, int ni, const int *ints, struct plx_datatype *inner,
                                        struct plx_datatype *old)
{
    struct plx_datatype *d = plx_dt_new(combiner, ni, 0, 1);
    if (!d) {
        plx_dt_release(inner);
        return NULL;
    }
    memcpy(d->ints, ints, (size_t)ni * sizeof(int));
    plx_dt_set_child(d, 0, old);
    d->inner = inner;           /* takes the reference */
    plx_dt_copy_shape(d, inner);
    struct plx_runbuf b = { 0 };
    for (int i = 0; i < inner->nruns; i++)
        plx_rb_push(&b, inner->runs[i].disp, inner->runs[i].len, inner->runs[i].cnt, inner->runs[i].stride);
    plx_dt_take_runs(d, &b, 0);
    if (inner->opruns != inner->runs) {
        struct plx_runbuf o = { 0 };
        for (int i = 0; i < inner->nopruns; i++)
            plx_rb_push(&o, inner->opruns[i].disp, inner->opruns[i].len, inner->opruns[i].cnt,
                        inner->opruns[i].stride);
        plx_dt_take_runs(d, &o, 1);
    } else {
        d->opruns = d->runs;
        d->nopruns = d->nruns;
    }
    plx_dt_set_contig(d);
    return d;
}

/* Places t at byte displacement disp and resizes the result to [0, extent). */
static struct plx_datatype *plx_dt_place(struct plx_datatype *t, MPI_Aint disp, MPI_Aint extent)
{
    int one = 1;
    struct plx_datatype *p = plx_dt_indexed(1, &one, 0, NULL, &disp, t);
    plx_dt_release(t);
    struct plx_datatype *r = plx_dt_resized(p, 0, extent);
    plx_dt_release(p);
    return r;
}

struct plx_datatype *plx_dt_subarray(int ndims, const int *sizes, const int *subsizes, const int *starts,
                                     int order, struct plx_datatype *old)
{
    /* dimension k in order of increasing stride */
#define DIM(k) (order == MPI_ORDER_C ? ndims - 1 - (k) : (k))
    MPI_Aint ex = old->extent;
    struct plx_datatype *t = plx_dt_contiguous(subsizes[DIM(0)], old);
    MPI_Aint stride = ex, disp = (MPI_Aint)starts[DIM(0)] * ex;
    for (int k = 1; k < ndims; k++) {
        stride *= sizes[DIM(k - 1)];
        struct plx_datatype *n = plx_dt_vector(subsizes[DIM(k)], 1, stride, 1, t);
        plx_dt_release(t);
        t = n;
        disp += (MPI_Aint)starts[DIM(k)] * stride;
    }
    MPI_Aint total = ex;
    for (int k = 0; k < ndims; k++)
        total *= sizes[k];
#undef DIM
    struct plx_datatype *inner = plx_dt_place(t, disp, total);
    int *ints = plx_malloc((size_t)(3 * ndims + 2) * sizeof(int));
    ints[0] = ndims;
    memcpy(ints + 1, sizes, (size_t)ndims * sizeof(int));
    memcpy(ints + 1 + ndims, subsizes, (size_t)ndims * sizeof(int));
    memcpy(ints + 1 + 2 * ndims, starts, (size_t)ndims * sizeof(int));
    ints[1 + 3 * ndims] = order;
    struct plx_datatype *d = plx_dt_wrap(MPI_COMBINER_SUBARRAY, 3 * ndims + 2, ints, inner, old);
    free(ints);
    return d;
}

/* One dimension of a darray: the elements of a gsize-long dimension that
 * process coordinate r of psize owns, in blocks of b distributed cyclically,
 * as a type of extent gsize * extent(t). */
static struct plx_datatype *plx_dt_darray_dim(int gsize, int b, int r, int psize, struct plx_datatype *t)
{
    MPI_Aint ex = t->extent;
    MPI_Aint first = (MPI_Aint)r * b;          /* first element of my first block */
    MPI_Aint step = (MPI_Aint)b * psize;
    MPI_Aint full = 0, last_len = 0;
    if (first < gsize) {
        MPI_Aint nblk = (gsize - first + step - 1) / step;     /* blocks starting before gsize */
        MPI_Aint last_start = first + (nblk - 1) * step;
        if (last_start + b <= gsize) {
            full = nblk;
        } else {
            full = nblk - 1;
            last_len = gsize - last_start;
        }
    }
    struct plx_datatype *types[2];
    int bls[2];
    MPI_Aint disps[2];
    int n = 0;
    struct plx_datatype *vec = NULL;
    if (full > 0) {
        vec = plx_dt_vector(full, b, step * ex, 1, t);
        types[n] = vec;
        bls[n] = 1;
        disps[n] = first * ex;
        n++;
    }
    if (last_len > 0) {
        types[n] = t;
        bls[n] = (int)last_len;
        disps[n] = (first + full * step) * ex;
        n++;
    }
    struct plx_datatype *s = plx_dt_struct(n, bls, disps, types);
    plx_dt_release(vec);
    struct plx_datatype *res = plx_dt_resized(s, 0, (MPI_Aint)gsize * ex);
    plx_dt_release(s);
    return res;
}

struct plx_datatype *plx_dt_darray(int size, int rank, int ndims, const int *gsizes, const int *distribs,
                                   const int *dargs, const int *psizes, int order, struct plx_datatype *old)
{
    int *coords = plx_malloc((size_t)ndims * sizeof(int));
    int rest = rank;
    for (int i = ndims - 1; i >= 0; i--) {     /* process grid is row-major */
        coords[i] = rest % psizes[i];
        rest /= psizes[i];
    }
    struct plx_datatype *t = old;
    plx_dt_addref(t);
    for (int k = 0; k < ndims; k++) {
        int i = order == MPI_ORDER_C ? ndims - 1 - k : k;
        int b;
        if (distribs[i] == MPI_DISTRIBUTE_NONE)
            b = gsizes[i];
        else if (dargs[i] == MPI_DISTRIBUTE_DFLT_DARG)
            b = distribs[i] == MPI_DISTRIBUTE_BLOCK ? (gsizes[i] + psizes[i] - 1) / psizes[i] : 1;
        else
            b = dargs[i];
        int ps = distribs[i] == MPI_DISTRIBUTE_NONE ? 1 : psizes[i];
        int r = distribs[i] == MPI_DISTRIBUTE_NONE ? 0 : coords[i];
        struct plx_datatype *n = plx_dt_darray_dim(gsizes[i], b, r, ps, t);
        plx_dt_release(t);
        t = n;
    }
    free(coords);
    int ni = 4 * ndims + 4;
    int *ints = plx_malloc((size_t)ni * sizeof(int));
    ints[0] = size;
    ints[1] = rank;
    ints[2] = ndims;
    memcpy(ints + 3, gsizes, (size_t)ndims * sizeof(int));
    memcpy(ints + 3 + ndims, distribs, (size_t)ndims * sizeof(int));
    memcpy(ints + 3 + 2 * ndims, dargs, (size_t)ndims * sizeof(int));
    memcpy(ints + 3 + 3 * ndims, psizes, (size_t)ndims * sizeof(int));
    ints[3 + 4 * ndims] = order;
    struct plx_datatype *d = plx_dt_wrap(MPI_COMBINER_DARRAY, ni, ints, t, old);
    free(ints);
    return d;
}

/* --- counting basic elements ----------------------------------------------
 * A walk over the constructor tree in typemap order: each node is a
 * sequence of (child, repetitions) groups. */

/* The i-th group of d: child and how many copies; returns 0 past the end. */
int plx_dt_group(const struct plx_datatype *d, MPI_Aint i, const struct plx_datatype **c_p, MPI_Aint *n_p)
{
    const int *in = d->ints;
    switch (d->combiner) {
    case MPI_COMBINER_DUP:
    case MPI_COMBINER_RESIZED:
        if (i > 0)
            return 0;
        *c_p = d->children[0];
        *n_p = 1;
        return 1;
    case MPI_COMBINER_SUBARRAY:
    case MPI_COMBINER_DARRAY:
        if (i > 0)
            return 0;
        *c_p = d->inner;
        *n_p = 1;
        return 1;
    case MPI_COMBINER_CONTIGUOUS:
        if (i > 0)
            return 0;
        *c_p = d->children[0];
        *n_p = in[0];
        return 1;
    case MPI_COMBINER_VECTOR:
    case MPI_COMBINER_HVECTOR:
        if (i > 0)
            return 0;
        *c_p = d->children[0];
        *n_p = (MPI_Aint)in[0] * in[1];
        return 1;
    case MPI_COMBINER_INDEXED_BLOCK:
    case MPI_COMBINER_HINDEXED_BLOCK:
        if (i > 0)
            return 0;
        *c_p = d->children[0];
        *n_p = (MPI_Aint)in[0] * in[1];
        return 1;
    case MPI_COMBINER_INDEXED:
    case MPI_COMBINER_HINDEXED:
        if (i >= in[0])
            return 0;
        *c_p = d->children[0];
        *n_p = in[1 + i];
        return 1;
    case MPI_COMBINER_STRUCT:
        if (i >= in[0])
            return 0;
        *c_p = d->children[i];
        *n_p = in[1 + i];
        return 1;
    default:
        return 0;
    }
}

/* Bytes of the value half of a predefined pair type. */
static MPI_Count plx_pair_vsize(const struct plx_datatype *d)
{
    if (d->basic == MPI_2INT || d->basic == MPI_2INTEGER || d->basic == MPI_2REAL || d->basic == MPI_2DOUBLE_PRECISION)
        return d->size / 2;
    return d->size - (MPI_Count)sizeof(int);
}

/* Elements fully inside the first *bytes of ONE element of d (bytes < size);
 * *bytes is left with what is not accounted for (0 on a boundary). */
static MPI_Count plx_dt_elems_partial(const struct plx_datatype *d, MPI_Count *bytes)
{
    if (d->combiner == MPI_COMBINER_NAMED) {
        if (d->nelems == 2) {
            /* pair: value, then index */
            MPI_Count vs = plx_pair_vsize(d);
            if (*bytes >= vs) {
                *bytes -= vs;
                return 1;
            }
        }
        return 0;
    }
    MPI_Count n = 0;
    const struct plx_datatype *c;
    MPI_Aint reps;
    for (MPI_Aint g = 0; *bytes > 0 && plx_dt_group(d, g, &c, &reps); g++) {
        if (c->size == 0 || reps <= 0)
            continue;
        MPI_Count whole = *bytes / c->size;
        if (whole >= reps) {
            n += (MPI_Count)reps * c->nelems;
            *bytes -= (MPI_Count)reps * c->size;
            continue;
        }
        n += whole * c->nelems;
        *bytes -= whole * c->size;
        return n + plx_dt_elems_partial(c, bytes);
    }
    return n;
}

MPI_Count plx_dt_count_elements(const struct plx_datatype *dt, MPI_Count bytes)
{
    if (dt->size == 0)
        return 0;
    MPI_Count n = (bytes / dt->size) * dt->nelems;
    MPI_Count rest = bytes % dt->size;
    if (rest == 0)
        return n;
    n += plx_dt_elems_partial(dt, &rest);
    return rest == 0 ? n : MPI_UNDEFINED;
}

/* Bytes of the first *n basic elements of one element of d (*n < nelems);
 * *n is left with the elements not accounted for. */
static MPI_Count plx_dt_bytes_partial(const struct plx_datatype *d, MPI_Count *n)
{
    if (d->combiner == MPI_COMBINER_NAMED) {
        if (d->nelems == 2 && *n >= 1) {
            *n -= 1;
            return plx_pair_vsize(d);
        }
        return 0;
    }
    MPI_Count bytes = 0;
    const struct plx_datatype *c;
    MPI_Aint reps;
    for (MPI_Aint g = 0; *n > 0 && plx_dt_group(d, g, &c, &reps); g++) {
        if (c->nelems == 0 || reps <= 0)
            continue;
        MPI_Count whole = *n / c->nelems;
        if (whole >= reps) {
            bytes += (MPI_Count)reps * c->size;
            *n -= (MPI_Count)reps * c->nelems;
            continue;
        }
        bytes += whole * c->size;
        *n -= whole * c->nelems;
        return bytes + plx_dt_bytes_partial(c, n);
    }
    return bytes;
}

MPI_Count plx_dt_elements_bytes(const struct plx_datatype *dt, MPI_Count n)
{
    if (dt->nelems == 0)
        return 0;
    MPI_Count bytes = (n / dt->nelems) * dt->size;
    MPI_Count rest = n % dt->nelems;
    if (rest)
        bytes += plx_dt_bytes_partial(dt, &rest);
    return bytes;
}
