/*
 * Unit tests of the datatype engine (src/core/datatype.c, dt_pack.c):
 * bounds and typemaps of every constructor against the worked examples of
 * MPI 3.1 section 4.1, flattening into runs, packing from and to any byte
 * offset, iovecs, element counting, external32.
 */
#include <float.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "core/datatype.h"
#include "test_util.h"

static struct plx_datatype *T(MPI_Datatype h)
{
    return plx_dt_lookup(h);
}

/* A buffer whose byte at displacement d (from its middle) is a function of d. */
#define ARENA 8192
static unsigned char arena[2 * ARENA];
static unsigned char *origin = arena + ARENA;

static unsigned char byte_at(long d)
{
    return (unsigned char)(d * 7 + 3 + (d >> 8));
}

static void fill_arena(void)
{
    for (long d = -ARENA; d < ARENA; d++)
        origin[d] = byte_at(d);
}

struct ent {
    long disp;
    int len;
};

/* The packed stream of count elements equals the bytes at the expected
 * typemap entries, in order; and unpacking restores exactly those bytes. */
static void check_map(const char *what, struct plx_datatype *dt, int count, const struct ent *e, int ne)
{
    fill_arena();
    size_t total = 0;
    for (int i = 0; i < ne; i++)
        total += (size_t)e[i].len;
    T_CHECK((size_t)dt->size * (size_t)count == total, "%s: size %lld x %d != %zu", what, (long long)dt->size,
            count, total);
    unsigned char *want = malloc(total + 1), *got = malloc(total + 1);
    size_t k = 0;
    for (int i = 0; i < ne; i++)
        for (int j = 0; j < e[i].len; j++)
            want[k++] = byte_at(e[i].disp + j);
    plx_dt_pack(origin, count, dt, got);
    T_CHECK(memcmp(want, got, total) == 0, "%s: packed stream differs", what);
    /* every split point of a two-piece pack gives the same stream */
    for (size_t cut = 0; cut <= total; cut++) {
        memset(got, 0, total);
        size_t a = plx_dt_pack_range(origin, count, dt, 0, got, cut);
        size_t b = plx_dt_pack_range(origin, count, dt, cut, got + cut, total - cut);
        if (a != cut || b != total - cut || memcmp(want, got, total) != 0) {
            T_CHECK(0, "%s: pack split at %zu wrong", what, cut);
            break;
        }
    }
    /* unpack into a zeroed arena, in three pieces, then compare entries */
    memset(arena, 0, sizeof arena);
    size_t c1 = total / 3, c2 = 2 * total / 3;
    plx_dt_unpack_range(want, c1, origin, count, dt, 0);
    plx_dt_unpack_range(want + c1, c2 - c1, origin, count, dt, c1);
    plx_dt_unpack_range(want + c2, total - c2, origin, count, dt, c2);
    int ok = 1;
    for (int i = 0; i < ne; i++)
        for (int j = 0; j < e[i].len; j++)
            if (origin[e[i].disp + j] != byte_at(e[i].disp + j))
                ok = 0;
    T_CHECK(ok, "%s: unpack did not restore the typemap bytes", what);
    /* iovecs cover the same bytes */
    fill_arena();
    struct iovec iov[256];
    size_t bytes = 0;
    int n = plx_dt_iov(origin, count, dt, 0, total, iov, 256, &bytes);
    k = 0;
    for (int i = 0; i < n; i++) {
        memcpy(got + k, iov[i].iov_base, iov[i].iov_len);
        k += iov[i].iov_len;
    }
    T_CHECK(bytes == total && k == total && memcmp(want, got, total) == 0, "%s: iovecs wrong (%d, %zu)", what, n,
            bytes);
    free(want);
    free(got);
}

static void check_bounds(const char *what, struct plx_datatype *dt, long lb, long extent, long tlb, long textent)
{
    T_CHECK(dt->lb == lb && dt->extent == extent, "%s: lb/extent %ld/%ld, expected %ld/%ld", what, (long)dt->lb,
            (long)dt->extent, lb, extent);
    T_CHECK(dt->true_lb == tlb && dt->true_extent == textent, "%s: true lb/extent %ld/%ld, expected %ld/%ld", what,
            (long)dt->true_lb, (long)dt->true_extent, tlb, textent);
}

/* The standard's oldtype {(double,0),(char,8)}, extent 16. */
static struct plx_datatype *dc_type(void)
{
    int bl[2] = { 1, 1 };
    MPI_Aint d[2] = { 0, 8 };
    struct plx_datatype *t[2] = { T(MPI_DOUBLE), T(MPI_CHAR) };
    return plx_dt_struct(2, bl, d, t);
}

#define DC(x) { (x), 8 }, { (x) + 8, 1 }

static void test_examples(void)
{
    struct plx_datatype *dc = dc_type();
    check_bounds("{double,char}", dc, 0, 16, 0, 9);
    T_CHECK(dc->nelems == 2 && dc->basic == MPI_DATATYPE_NULL, "dc elems");

    /* Example 4.2: contiguous(3, dc) */
    struct plx_datatype *c3 = plx_dt_contiguous(3, dc);
    static const struct ent e_c3[] = { DC(0), DC(16), DC(32) };
    check_map("contiguous(3)", c3, 1, e_c3, 6);
    check_bounds("contiguous(3)", c3, 0, 48, 0, 41);

    /* Example 4.5: vector(2, 3, 4, dc) */
    struct plx_datatype *v = plx_dt_vector(2, 3, 4, 0, dc);
    static const struct ent e_v[] = { DC(0), DC(16), DC(32), DC(64), DC(80), DC(96) };
    check_map("vector(2,3,4)", v, 1, e_v, 12);
    check_bounds("vector(2,3,4)", v, 0, 112, 0, 105);

    /* Example 4.6: vector(3, 1, -2, dc) */
    struct plx_datatype *vn = plx_dt_vector(3, 1, -2, 0, dc);
    static const struct ent e_vn[] = { DC(0), DC(-32), DC(-64) };
    check_map("vector(3,1,-2)", vn, 1, e_vn, 6);
    check_bounds("vector(3,1,-2)", vn, -64, 80, -64, 73);

    /* Example 4.7: hvector(2, 3, 4 bytes, dc) */
    struct plx_datatype *hv = plx_dt_vector(2, 3, 4, 1, dc);
    static const struct ent e_hv[] = { DC(0), DC(16), DC(32), DC(4), DC(20), DC(36) };
    check_map("hvector(2,3,4)", hv, 1, e_hv, 12);
    check_bounds("hvector(2,3,4)", hv, 0, 52, 0, 45);

    /* Example 4.9: indexed B=(3,1) D=(4,0) */
    int bl[2] = { 3, 1 }, id[2] = { 4, 0 };
    struct plx_datatype *ix = plx_dt_indexed(2, bl, 0, id, NULL, dc);
    static const struct ent e_ix[] = { DC(64), DC(80), DC(96), DC(0) };
    check_map("indexed", ix, 1, e_ix, 8);
    check_bounds("indexed", ix, 0, 112, 0, 105);

    /* Example 4.10: hindexed B=(3,1) D=(4,0) bytes */
    MPI_Aint ad[2] = { 4, 0 };
    struct plx_datatype *hx = plx_dt_indexed(2, bl, 0, NULL, ad, dc);
    static const struct ent e_hx[] = { DC(4), DC(20), DC(36), DC(0) };
    check_map("hindexed", hx, 1, e_hx, 8);
    check_bounds("hindexed", hx, 0, 52, 0, 45);

    /* Example 4.12: struct B=(2,1,3) D=(0,16,26) T=(float, dc, char) */
    int sbl[3] = { 2, 1, 3 };
    MPI_Aint sd[3] = { 0, 16, 26 };
    struct plx_datatype *st[3] = { T(MPI_FLOAT), dc, T(MPI_CHAR) };
    struct plx_datatype *s = plx_dt_struct(3, sbl, sd, st);
    static const struct ent e_s[] = { { 0, 4 }, { 4, 4 }, DC(16), { 26, 1 }, { 27, 1 }, { 28, 1 } };
    check_map("struct", s, 1, e_s, 7);
    check_bounds("struct", s, 0, 32, 0, 29);    /* ub 29 padded to 8 */
    T_CHECK(s->nelems == 7, "struct nelems %lld", (long long)s->nelems);

    /* two elements of the vector: the second starts one extent later */
    static const struct ent e_v2[] = { DC(0), DC(16), DC(32), DC(64), DC(80), DC(96),
                                       DC(112), DC(128), DC(144), DC(176), DC(192), DC(208) };
    check_map("2 x vector", v, 2, e_v2, 24);

    plx_dt_release(c3);
    plx_dt_release(v);
    plx_dt_release(vn);
    plx_dt_release(hv);
    plx_dt_release(ix);
    plx_dt_release(hx);
    plx_dt_release(s);
    plx_dt_release(dc);
}

static void test_runs(void)
{
    /* vector of doubles: one strided run */
    struct plx_datatype *v = plx_dt_vector(100, 2, 5, 0, T(MPI_DOUBLE));
    T_CHECK(v->nruns == 1 && v->runs[0].cnt == 100 && v->runs[0].len == 16 && v->runs[0].stride == 40,
            "vector runs %d", v->nruns);
    T_CHECK(!v->contig, "vector not contig");
    /* contiguous of contiguous: contig */
    struct plx_datatype *c = plx_dt_contiguous(10, T(MPI_INT));
    struct plx_datatype *cc = plx_dt_contiguous(3, c);
    T_CHECK(cc->contig && cc->nruns == 1 && cc->size == 120, "contiguous contig");
    /* 3-d subarray: one run per plane */
    int sizes[3] = { 10, 20, 30 }, sub[3] = { 4, 5, 6 }, st[3] = { 1, 2, 3 };
    struct plx_datatype *sa = plx_dt_subarray(3, sizes, sub, st, MPI_ORDER_C, T(MPI_DOUBLE));
    T_CHECK(sa->nruns <= 4 && sa->size == 4 * 5 * 6 * 8, "subarray runs %d size %lld", sa->nruns,
            (long long)sa->size);
    check_bounds("subarray", sa, 0, 10 * 20 * 30 * 8, ((1 * 20 + 2) * 30 + 3) * 8,
                 ((3 * 20 + 4) * 30 + 5) * 8 + 8);
    /* vector of a vector whose rows tile: folds into one run */
    struct plx_datatype *row = plx_dt_vector(4, 1, 2, 0, T(MPI_INT));   /* extent 28 */
    struct plx_datatype *rr = plx_dt_resized(row, 0, 32);
    struct plx_datatype *vv = plx_dt_contiguous(8, rr);
    T_CHECK(vv->nruns == 1 && vv->runs[0].cnt == 32 && vv->runs[0].stride == 8, "tiled vector runs %d",
            vv->nruns);
    T_CHECK(vv->nelems == 32 && vv->basic == MPI_INT, "tiled vector basic");
    plx_dt_release(v);
    plx_dt_release(cc);
    plx_dt_release(c);
    plx_dt_release(sa);
    plx_dt_release(vv);
    plx_dt_release(rr);
    plx_dt_release(row);
}

static void test_resized_sticky(void)
{
    /* resized(int, -4, 16): lb -4, extent 16, data at [0,4) */
    struct plx_datatype *r = plx_dt_resized(T(MPI_INT), -4, 16);
    check_bounds("resized", r, -4, 16, 0, 4);
    struct plx_datatype *c = plx_dt_contiguous(3, r);
    check_bounds("contiguous(resized)", c, -4, 48, 0, 36);
    static const struct ent e[] = { { 0, 4 }, { 16, 4 }, { 32, 4 } };
    check_map("contiguous(resized)", c, 1, e, 3);
    /* struct {int at 0, resized at 8}: the explicit lb/ub decide */
    int bl[2] = { 1, 1 };
    MPI_Aint d[2] = { 0, 8 };
    struct plx_datatype *t[2] = { T(MPI_INT), r };
    struct plx_datatype *s = plx_dt_struct(2, bl, d, t);
    check_bounds("struct with sticky", s, 4, 16, 0, 12);
    /* dup keeps everything */
    struct plx_datatype *du = plx_dt_dup(s);
    check_bounds("dup", du, 4, 16, 0, 12);
    T_CHECK(du->combiner == MPI_COMBINER_DUP && du->size == 8, "dup");
    /* resized to a smaller extent (overlapping elements) still packs */
    struct plx_datatype *sh = plx_dt_resized(T(MPI_DOUBLE), 0, 4);
    static const struct ent e2[] = { { 0, 8 }, { 4, 8 }, { 8, 8 } };
    check_map("overlapping resized", sh, 3, e2, 3);
    plx_dt_release(sh);
    plx_dt_release(du);
    plx_dt_release(s);
    plx_dt_release(c);
    plx_dt_release(r);
}

static void test_subarray_darray(void)
{
    /* 2-d 4x5 ints, 2x3 block at (1,1): C and Fortran order */
    int sizes[2] = { 4, 5 }, sub[2] = { 2, 3 }, st[2] = { 1, 1 };
    struct plx_datatype *c = plx_dt_subarray(2, sizes, sub, st, MPI_ORDER_C, T(MPI_INT));
    static const struct ent ec[] = { { 24, 12 }, { 44, 12 } };   /* rows 1,2; cols 1..3 */
    check_map("subarray C", c, 1, ec, 2);
    check_bounds("subarray C", c, 0, 80, 24, 32);
    struct plx_datatype *f = plx_dt_subarray(2, sizes, sub, st, MPI_ORDER_FORTRAN, T(MPI_INT));
    /* Fortran: dim 0 (4) fastest: elements (i,j) at (i + 4j)*4, i in 1..2, j in 1..3 */
    static const struct ent ef[] = { { 20, 8 }, { 36, 8 }, { 52, 8 } };
    check_map("subarray Fortran", f, 1, ef, 3);
    check_bounds("subarray Fortran", f, 0, 80, 20, 40);
    T_CHECK(c->combiner == MPI_COMBINER_SUBARRAY && c->ni == 8, "subarray envelope");

    /* darray 1-d: 10 elements on 3 processes */
    int g = 10, blk = MPI_DISTRIBUTE_BLOCK, cyc = MPI_DISTRIBUTE_CYCLIC, dflt = MPI_DISTRIBUTE_DFLT_DARG, two = 2;
    int p = 3;
    struct plx_datatype *b1 = plx_dt_darray(3, 1, 1, &g, &blk, &dflt, &p, MPI_ORDER_C, T(MPI_INT));
    static const struct ent eb1[] = { { 16, 16 } };                 /* 4..7 */
    check_map("darray block r1", b1, 1, eb1, 1);
    check_bounds("darray block r1", b1, 0, 40, 16, 16);
    struct plx_datatype *b2 = plx_dt_darray(3, 2, 1, &g, &blk, &dflt, &p, MPI_ORDER_C, T(MPI_INT));
    static const struct ent eb2[] = { { 32, 8 } };                  /* 8..9 */
    check_map("darray block r2", b2, 1, eb2, 1);
    struct plx_datatype *c0 = plx_dt_darray(3, 0, 1, &g, &cyc, &two, &p, MPI_ORDER_C, T(MPI_INT));
    static const struct ent ec0[] = { { 0, 8 }, { 24, 8 } };        /* 0,1,6,7 */
    check_map("darray cyclic(2) r0", c0, 1, ec0, 2);
    struct plx_datatype *c2 = plx_dt_darray(3, 2, 1, &g, &cyc, &two, &p, MPI_ORDER_C, T(MPI_INT));
    static const struct ent ec2[] = { { 16, 8 } };                  /* 4,5 (10,11 do not exist) */
    check_map("darray cyclic(2) r2", c2, 1, ec2, 1);
    struct plx_datatype *c1 = plx_dt_darray(3, 1, 1, &g, &cyc, &two, &p, MPI_ORDER_C, T(MPI_INT));
    static const struct ent ec1[] = { { 8, 8 }, { 32, 8 } };        /* 2,3,8,9 */
    check_map("darray cyclic(2) r1", c1, 1, ec1, 2);
    /* 2-d 4x6 on a 2x2 grid, block x block, C order: rank 3 = coords (1,1)
     * owns rows 2..3, cols 3..5 */
    int g2[2] = { 4, 6 }, d2[2] = { blk, blk }, a2[2] = { dflt, dflt }, p2[2] = { 2, 2 };
    struct plx_datatype *dd = plx_dt_darray(4, 3, 2, g2, d2, a2, p2, MPI_ORDER_C, T(MPI_INT));
    static const struct ent edd[] = { { (2 * 6 + 3) * 4, 12 }, { (3 * 6 + 3) * 4, 12 } };
    check_map("darray 2-d", dd, 1, edd, 2);
    check_bounds("darray 2-d", dd, 0, 96, 60, 36);
    plx_dt_release(dd);
    plx_dt_release(c1);
    plx_dt_release(c2);
    plx_dt_release(c0);
    plx_dt_release(b2);
    plx_dt_release(b1);
    plx_dt_release(f);
    plx_dt_release(c);
}

static void test_pairs_and_elements(void)
{
    struct plx_datatype *di = T(MPI_DOUBLE_INT);
    check_bounds("MPI_DOUBLE_INT", di, 0, 16, 0, 12);
    T_CHECK(di->size == 12 && di->nelems == 2 && !di->contig, "DOUBLE_INT");
    struct plx_datatype *si = T(MPI_SHORT_INT);
    static const struct ent esi[] = { { 0, 2 }, { 4, 4 }, { 8, 2 }, { 12, 4 } };
    check_map("SHORT_INT x2", si, 2, esi, 4);
    T_CHECK(plx_dt_count_elements(di, 8) == 1 && plx_dt_count_elements(di, 12) == 2 &&
                plx_dt_count_elements(di, 20) == 3 && plx_dt_count_elements(di, 10) == MPI_UNDEFINED,
            "DOUBLE_INT elements");
    /* struct {int; double[2]}: partial elements */
    int bl[2] = { 1, 2 };
    MPI_Aint d[2] = { 0, 8 };
    struct plx_datatype *t[2] = { T(MPI_INT), T(MPI_DOUBLE) };
    struct plx_datatype *s = plx_dt_struct(2, bl, d, t);
    T_CHECK(s->size == 20 && s->nelems == 3 && s->extent == 24, "struct int,double[2]");
    T_CHECK(plx_dt_count_elements(s, 4) == 1 && plx_dt_count_elements(s, 12) == 2 &&
                plx_dt_count_elements(s, 20) == 3 && plx_dt_count_elements(s, 24) == 4 &&
                plx_dt_count_elements(s, 6) == MPI_UNDEFINED && plx_dt_count_elements(s, 0) == 0,
            "struct elements");
    T_CHECK(plx_dt_elements_bytes(s, 1) == 4 && plx_dt_elements_bytes(s, 2) == 12 &&
                plx_dt_elements_bytes(s, 4) == 24, "struct element bytes");
    struct plx_datatype *v = plx_dt_vector(3, 2, 4, 0, s);
    T_CHECK(plx_dt_count_elements(v, 2 * 20 + 12) == 8 && plx_dt_count_elements(v, v->size) == 18,
            "vector of struct elements");
    plx_dt_release(v);
    plx_dt_release(s);
    /* padded pair inside a contiguous: reduction runs hold whole pairs */
    struct plx_datatype *cp = plx_dt_contiguous(3, di);
    T_CHECK(cp->basic == MPI_DOUBLE_INT && cp->nopruns == 1 && cp->opruns[0].len == 48, "pair opruns");
    plx_dt_release(cp);
}

static void test_copy(void)
{
    /* column of a 4x4 matrix -> contiguous, and back through a vector */
    double m[16], col[4], m2[16];
    for (int i = 0; i < 16; i++)
        m[i] = i;
    struct plx_datatype *colt = plx_dt_vector(4, 1, 4, 0, T(MPI_DOUBLE));
    plx_dt_copy(m + 1, 1, colt, col, 4, T(MPI_DOUBLE));
    T_CHECK(col[0] == 1 && col[1] == 5 && col[2] == 9 && col[3] == 13, "copy column");
    memset(m2, 0, sizeof m2);
    struct plx_datatype *rowt = plx_dt_contiguous(4, T(MPI_DOUBLE));
    plx_dt_copy(m + 4, 1, rowt, m2 + 2, 1, colt);      /* row 1 -> column 2 */
    T_CHECK(m2[2] == 4 && m2[6] == 5 && m2[10] == 6 && m2[14] == 7 && m2[0] == 0, "copy row to column");
    plx_dt_release(colt);
    plx_dt_release(rowt);
}

static void test_external32(void)
{
    int v[2] = { 0x01020304, -2 };
    unsigned char out[64];
    T_CHECK(plx_dt_external32_size(T(MPI_INT), 2) == 8, "x32 size int");
    plx_dt_pack_external32(v, 2, T(MPI_INT), out);
    static const unsigned char want[8] = { 1, 2, 3, 4, 0xff, 0xff, 0xff, 0xfe };
    T_CHECK(memcmp(out, want, 8) == 0, "x32 int bytes");
    double d = 1.0;
    plx_dt_pack_external32(&d, 1, T(MPI_DOUBLE), out);
    T_CHECK(out[0] == 0x3f && out[1] == 0xf0 && out[7] == 0, "x32 double bytes");
    long l[2] = { -5, 123456 }, l2[2] = { 0, 0 };
    T_CHECK(plx_dt_external32_size(T(MPI_LONG), 2) == 8, "x32 size long");
    plx_dt_pack_external32(l, 2, T(MPI_LONG), out);
    plx_dt_unpack_external32(out, l2, 2, T(MPI_LONG));
    T_CHECK(l2[0] == -5 && l2[1] == 123456, "x32 long round trip");
    long big = (long)1 << 40;
    T_CHECK(plx_dt_pack_external32(&big, 1, T(MPI_LONG), out) == -1, "x32 long overflow");
    long double ld = -3.25L, ld2 = 0;
    plx_dt_pack_external32(&ld, 1, T(MPI_LONG_DOUBLE), out);
    T_CHECK(out[0] == 0xc0 && out[1] == 0x00 && out[2] == 0xa0, "x32 long double bytes %02x %02x %02x", out[0],
            out[1], out[2]);
    plx_dt_unpack_external32(out, &ld2, 1, T(MPI_LONG_DOUBLE));
    T_CHECK(ld2 == ld, "x32 long double round trip");
    /* struct {short; double} with padding: 2 + 8 bytes */
    int bl[2] = { 1, 1 };
    MPI_Aint dd[2] = { 0, 8 };
    struct plx_datatype *t[2] = { T(MPI_SHORT), T(MPI_DOUBLE) };
    struct plx_datatype *s = plx_dt_struct(2, bl, dd, t);
    struct { short a; double b; } sv = { 258, 2.0 }, sv2 = { 0, 0 };
    T_CHECK(plx_dt_external32_size(s, 1) == 10, "x32 size struct");
    plx_dt_pack_external32(&sv, 1, s, out);
    T_CHECK(out[0] == 1 && out[1] == 2 && out[2] == 0x40 && out[3] == 0, "x32 struct bytes");
    plx_dt_unpack_external32(out, &sv2, 1, s);
    T_CHECK(sv2.a == 258 && sv2.b == 2.0, "x32 struct round trip");
    plx_dt_release(s);
    struct { float v; int i; } fi = { 1.5f, 7 }, fi2 = { 0, 0 };
    T_CHECK(plx_dt_external32_size(T(MPI_FLOAT_INT), 1) == 8, "x32 float_int size");
    plx_dt_pack_external32(&fi, 1, T(MPI_FLOAT_INT), out);
    plx_dt_unpack_external32(out, &fi2, 1, T(MPI_FLOAT_INT));
    T_CHECK(fi2.v == 1.5f && fi2.i == 7 && out[7] == 7, "x32 float_int");
}

static void test_refcount(void)
{
    struct plx_datatype *c = plx_dt_contiguous(2, T(MPI_INT));
    struct plx_datatype *v = plx_dt_vector(2, 1, 3, 0, c);
    T_CHECK(c->obj.refcount == 2, "child referenced by parent");
    int h = c->obj.handle;
    plx_dt_release(c);      /* the user's free */
    T_CHECK(plx_dt_lookup(h) == c, "freed child still alive while used");
    plx_dt_release(v);
    T_CHECK(plx_dt_lookup(h) == NULL, "child gone with its parent");
}

int main(void)
{
    plx_datatype_init_builtins();
    test_examples();
    test_runs();
    test_resized_sticky();
    test_subarray_darray();
    test_pairs_and_elements();
    test_copy();
    test_external32();
    test_refcount();
    T_DONE("datatype");
}
