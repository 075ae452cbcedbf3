/*
 * Derived datatypes through the MPI interface: every constructor's size,
 * bounds, envelope and contents; names; MPI_Pack/Unpack and their
 * external32 forms; MPI_Get_elements on partial receives; a type freed
 * while a request still uses it. Runs on any number of ranks (pairs talk).
 */
#include "plx_test.h"

static void check_extent(MPI_Datatype t, MPI_Aint lb, MPI_Aint ext, MPI_Aint tlb, MPI_Aint text, int size,
                         const char *what)
{
    MPI_Aint a, b;
    int s;
    MPI_Count xl, xe, xs;
    PLX_CHECK_MPI(MPI_Type_get_extent(t, &a, &b));
    PLX_CHECK(a == lb && b == ext, "%s: lb/extent %ld/%ld, expected %ld/%ld", what, (long)a, (long)b, (long)lb,
              (long)ext);
    PLX_CHECK_MPI(MPI_Type_get_true_extent(t, &a, &b));
    PLX_CHECK(a == tlb && b == text, "%s: true lb/extent %ld/%ld, expected %ld/%ld", what, (long)a, (long)b,
              (long)tlb, (long)text);
    PLX_CHECK_MPI(MPI_Type_size(t, &s));
    PLX_CHECK_EQ(s, size, what);
    PLX_CHECK_MPI(MPI_Type_get_extent_x(t, &xl, &xe));
    PLX_CHECK(xl == lb && xe == ext, "%s: extent_x", what);
    PLX_CHECK_MPI(MPI_Type_get_true_extent_x(t, &xl, &xe));
    PLX_CHECK(xl == tlb && xe == text, "%s: true_extent_x", what);
    PLX_CHECK_MPI(MPI_Type_size_x(t, &xs));
    PLX_CHECK_EQ(xs, size, what);
}

static void check_envelope(MPI_Datatype t, int ni, int na, int nd, int comb, const char *what)
{
    int a, b, c, d;
    PLX_CHECK_MPI(MPI_Type_get_envelope(t, &a, &b, &c, &d));
    PLX_CHECK(a == ni && b == na && c == nd && d == comb, "%s: envelope %d %d %d %d, expected %d %d %d %d", what, a,
              b, c, d, ni, na, nd, comb);
}

static void test_constructors(void)
{
    MPI_Datatype dc, t, t2;
    int bl2[2] = {1, 1};
    MPI_Aint d2[2] = {0, 8};
    MPI_Datatype ty2[2] = {MPI_DOUBLE, MPI_CHAR};
    PLX_CHECK_MPI(MPI_Type_create_struct(2, bl2, d2, ty2, &dc));
    check_extent(dc, 0, 16, 0, 9, 9, "struct{double,char}");
    check_envelope(dc, 3, 2, 2, MPI_COMBINER_STRUCT, "struct");

    PLX_CHECK_MPI(MPI_Type_contiguous(3, dc, &t));
    check_extent(t, 0, 48, 0, 41, 27, "contiguous");
    check_envelope(t, 1, 0, 1, MPI_COMBINER_CONTIGUOUS, "contiguous");
    MPI_Type_free(&t);
    PLX_CHECK_EQ(t, MPI_DATATYPE_NULL, "Type_free sets MPI_DATATYPE_NULL");

    PLX_CHECK_MPI(MPI_Type_vector(2, 3, 4, dc, &t));
    check_extent(t, 0, 112, 0, 105, 54, "vector");
    check_envelope(t, 3, 0, 1, MPI_COMBINER_VECTOR, "vector");
    {
        int ints[3];
        MPI_Aint ad[1];
        MPI_Datatype ts[1];
        PLX_CHECK_MPI(MPI_Type_get_contents(t, 3, 0, 1, ints, ad, ts));
        PLX_CHECK(ints[0] == 2 && ints[1] == 3 && ints[2] == 4 && ts[0] == dc, "vector contents");
        MPI_Type_free(&ts[0]); /* a derived type from get_contents is the caller's to free */
    }
    MPI_Type_free(&t);

    PLX_CHECK_MPI(MPI_Type_vector(3, 1, -2, dc, &t));
    check_extent(t, -64, 80, -64, 73, 27, "vector negative stride");
    MPI_Type_free(&t);

    PLX_CHECK_MPI(MPI_Type_create_hvector(2, 3, 4, dc, &t));
    check_extent(t, 0, 52, 0, 45, 54, "hvector");
    check_envelope(t, 2, 1, 1, MPI_COMBINER_HVECTOR, "hvector");
    MPI_Type_free(&t);

    int bl[2] = {3, 1}, id[2] = {4, 0};
    MPI_Aint ad[2] = {4, 0};
    PLX_CHECK_MPI(MPI_Type_indexed(2, bl, id, dc, &t));
    check_extent(t, 0, 112, 0, 105, 36, "indexed");
    check_envelope(t, 5, 0, 1, MPI_COMBINER_INDEXED, "indexed");
    {
        int ints[5];
        MPI_Datatype ts[1];
        PLX_CHECK_MPI(MPI_Type_get_contents(t, 5, 0, 1, ints, NULL, ts));
        PLX_CHECK(ints[0] == 2 && ints[1] == 3 && ints[2] == 1 && ints[3] == 4 && ints[4] == 0,
                  "indexed contents");
        MPI_Type_free(&ts[0]);
    }
    MPI_Type_free(&t);
    PLX_CHECK_MPI(MPI_Type_create_hindexed(2, bl, ad, dc, &t));
    check_extent(t, 0, 52, 0, 45, 36, "hindexed");
    check_envelope(t, 3, 2, 1, MPI_COMBINER_HINDEXED, "hindexed");
    MPI_Type_free(&t);
    PLX_CHECK_MPI(MPI_Type_create_indexed_block(2, 2, id, MPI_INT, &t));
    check_extent(t, 0, 24, 0, 24, 16, "indexed_block");
    check_envelope(t, 4, 0, 1, MPI_COMBINER_INDEXED_BLOCK, "indexed_block");
    MPI_Type_free(&t);
    PLX_CHECK_MPI(MPI_Type_create_hindexed_block(2, 2, ad, MPI_INT, &t));
    check_extent(t, 0, 12, 0, 12, 16, "hindexed_block");
    check_envelope(t, 2, 2, 1, MPI_COMBINER_HINDEXED_BLOCK, "hindexed_block");
    MPI_Type_free(&t);

    int sbl[3] = {2, 1, 3};
    MPI_Aint sd[3] = {0, 16, 26};
    MPI_Datatype st[3] = {MPI_FLOAT, dc, MPI_CHAR};
    PLX_CHECK_MPI(MPI_Type_create_struct(3, sbl, sd, st, &t));
    check_extent(t, 0, 32, 0, 29, 20, "struct example");
    MPI_Type_free(&t);

    PLX_CHECK_MPI(MPI_Type_create_resized(MPI_INT, -4, 16, &t));
    check_extent(t, -4, 16, 0, 4, 4, "resized");
    check_envelope(t, 0, 2, 1, MPI_COMBINER_RESIZED, "resized");
    PLX_CHECK_MPI(MPI_Type_contiguous(3, t, &t2));
    check_extent(t2, -4, 48, 0, 36, 12, "contiguous of resized");
    MPI_Type_free(&t2);
    MPI_Type_free(&t);

    PLX_CHECK_MPI(MPI_Type_dup(MPI_DOUBLE, &t));
    check_extent(t, 0, 8, 0, 8, 8, "dup");
    check_envelope(t, 0, 0, 1, MPI_COMBINER_DUP, "dup");
    MPI_Type_free(&t);

    int sizes[3] = {10, 20, 30}, sub[3] = {4, 5, 6}, sta[3] = {1, 2, 3};
    PLX_CHECK_MPI(MPI_Type_create_subarray(3, sizes, sub, sta, MPI_ORDER_C, MPI_DOUBLE, &t));
    check_extent(t, 0, 48000, ((1 * 20 + 2) * 30 + 3) * 8, ((3 * 20 + 4) * 30 + 5) * 8 + 8, 960, "subarray C");
    check_envelope(t, 11, 0, 1, MPI_COMBINER_SUBARRAY, "subarray");
    MPI_Type_free(&t);
    PLX_CHECK_MPI(MPI_Type_create_subarray(3, sizes, sub, sta, MPI_ORDER_FORTRAN, MPI_DOUBLE, &t));
    check_extent(t, 0, 48000, ((3 * 20 + 2) * 10 + 1) * 8, ((5 * 20 + 4) * 10 + 3) * 8 + 8, 960,
                 "subarray Fortran");
    MPI_Type_free(&t);

    int g[2] = {4, 6}, ds[2] = {MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_CYCLIC};
    int da[2] = {MPI_DISTRIBUTE_DFLT_DARG, 2}, ps[2] = {2, 2};
    PLX_CHECK_MPI(MPI_Type_create_darray(4, 3, 2, g, ds, da, ps, MPI_ORDER_C, MPI_INT, &t));
    /* rank 3 = (1,1): rows 2..3, columns {2,3} (cyclic(2) on 2 procs: 0,1,4,5 | 2,3) */
    check_extent(t, 0, 96, (2 * 6 + 2) * 4, (3 * 6 + 3) * 4 + 4 - (2 * 6 + 2) * 4, 16, "darray");
    check_envelope(t, 12, 0, 1, MPI_COMBINER_DARRAY, "darray");
    MPI_Type_free(&t);

    int ni, na, nd, comb;
    PLX_CHECK_MPI(MPI_Type_get_envelope(MPI_INT, &ni, &na, &nd, &comb));
    PLX_CHECK_EQ(comb, MPI_COMBINER_NAMED, "predefined envelope");
    check_extent(MPI_DOUBLE_INT, 0, 16, 0, 12, 12, "MPI_DOUBLE_INT");
    MPI_Type_free(&dc);
}

static void test_names(void)
{
    MPI_Datatype t;
    char name[MPI_MAX_OBJECT_NAME];
    int len = -1;
    PLX_CHECK_MPI(MPI_Type_get_name(MPI_INT, name, &len));
    PLX_CHECK_STR(name, "MPI_INT", "predefined name");
    MPI_Type_contiguous(2, MPI_INT, &t);
    PLX_CHECK_MPI(MPI_Type_get_name(t, name, &len));
    PLX_CHECK_EQ(len, 0, "derived type has no name");
    PLX_CHECK_MPI(MPI_Type_set_name(t, "pair of ints"));
    PLX_CHECK_MPI(MPI_Type_get_name(t, name, &len));
    PLX_CHECK_STR(name, "pair of ints", "set name");
    MPI_Type_free(&t);
}

static void test_pack(void)
{
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    /* a column of a 5x4 matrix and a struct, packed one after the other */
    double m[5][4];
    for (int i = 0; i < 5; i++)
        for (int j = 0; j < 4; j++)
            m[i][j] = i * 10 + j;
    MPI_Datatype col;
    MPI_Type_vector(5, 1, 4, MPI_DOUBLE, &col);
    MPI_Type_commit(&col);
    int psize = 0, pos = 0;
    PLX_CHECK_MPI(MPI_Pack_size(1, col, MPI_COMM_WORLD, &psize));
    PLX_CHECK_GE(psize, 40, "Pack_size of a column");
    char buf[256];
    int iv[3] = {7, 8, 9};
    PLX_CHECK_MPI(MPI_Pack(&m[0][2], 1, col, buf, sizeof buf, &pos, MPI_COMM_WORLD));
    PLX_CHECK_MPI(MPI_Pack(iv, 3, MPI_INT, buf, sizeof buf, &pos, MPI_COMM_WORLD));
    double out[5];
    int iv2[3];
    int upos = 0;
    PLX_CHECK_MPI(MPI_Unpack(buf, pos, &upos, out, 5, MPI_DOUBLE, MPI_COMM_WORLD));
    PLX_CHECK_MPI(MPI_Unpack(buf, pos, &upos, iv2, 3, MPI_INT, MPI_COMM_WORLD));
    PLX_CHECK_EQ(upos, pos, "unpacked everything packed");
    for (int i = 0; i < 5; i++)
        PLX_CHECK(out[i] == i * 10 + 2, "unpacked column[%d] = %g", i, out[i]);
    PLX_CHECK(iv2[0] == 7 && iv2[2] == 9, "unpacked ints");
    /* unpack a contiguous stream into a column */
    double m2[5][4] = {{0}};
    upos = 0;
    PLX_CHECK_MPI(MPI_Unpack(buf, pos, &upos, &m2[0][1], 1, col, MPI_COMM_WORLD));
    PLX_CHECK(m2[3][1] == 32 && m2[3][0] == 0 && m2[3][2] == 0, "unpack into a column");
    /* packed data travels as MPI_PACKED */
    int peer = plx_pair_peer(rank, plx_test_state()->size);
    if (peer != rank) {
        char rbuf[256];
        MPI_Status st;
        MPI_Sendrecv(buf, pos, MPI_PACKED, peer, 5, rbuf, sizeof rbuf, MPI_PACKED, peer, 5, MPI_COMM_WORLD, &st);
        int n = -1;
        MPI_Get_count(&st, MPI_PACKED, &n);
        PLX_CHECK_EQ(n, pos, "MPI_PACKED count");
        upos = 0;
        MPI_Unpack(rbuf, n, &upos, out, 1, MPI_DOUBLE, MPI_COMM_WORLD);
        PLX_CHECK(out[0] == 2, "received packed data");
    }

    /* external32: big-endian, standard sizes */
    int v[2] = {0x01020304, -2};
    MPI_Aint xs = 0, xp = 0;
    unsigned char xb[64];
    PLX_CHECK_MPI(MPI_Pack_external_size("external32", 2, MPI_INT, &xs));
    PLX_CHECK_EQ(xs, 8, "external32 size of 2 ints");
    PLX_CHECK_MPI(MPI_Pack_external("external32", v, 2, MPI_INT, xb, sizeof xb, &xp));
    PLX_CHECK_EQ(xp, 8, "external32 position");
    PLX_CHECK(xb[0] == 1 && xb[1] == 2 && xb[2] == 3 && xb[3] == 4 && xb[4] == 0xff && xb[7] == 0xfe,
              "external32 int bytes");
    double dv[5];
    xp = 0;
    PLX_CHECK_MPI(MPI_Pack_external("external32", &m[0][1], 1, col, xb, sizeof xb, &xp));
    PLX_CHECK_EQ(xp, 40, "external32 column size");
    PLX_CHECK(xb[0] == 0x3f && xb[1] == 0xf0, "external32 double 1.0 big-endian");
    MPI_Aint up = 0;
    PLX_CHECK_MPI(MPI_Unpack_external("external32", xb, xp, &up, dv, 5, MPI_DOUBLE));
    PLX_CHECK(dv[0] == 1 && dv[4] == 41 && up == 40, "external32 round trip");
    MPI_Type_free(&col);
}

static void test_elements(void)
{
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    /* struct {int; double[2]}: receive 2.x elements' worth of basic items */
    struct s { int i; double d[2]; };
    MPI_Datatype st;
    int bl[2] = {1, 2};
    MPI_Aint disp[2] = {offsetof(struct s, i), offsetof(struct s, d)};
    MPI_Datatype ty[2] = {MPI_INT, MPI_DOUBLE};
    MPI_Type_create_struct(2, bl, disp, ty, &st);
    MPI_Type_commit(&st);
    int peer = plx_pair_peer(rank, size);
    char raw[64];
    memset(raw, 0, sizeof raw);
    struct s r[3];
    MPI_Status s;
    /* 4 + 8 + 8 + 4 + 8 = 32 bytes: one whole element, then int and a double */
    MPI_Request req;
    MPI_Irecv(r, 3, st, peer, 9, MPI_COMM_WORLD, &req);
    MPI_Send(raw, 32, MPI_BYTE, peer, 9, MPI_COMM_WORLD);
    MPI_Wait(&req, &s);
    int n = -1;
    MPI_Count nx = -1;
    PLX_CHECK_MPI(MPI_Get_elements(&s, st, &n));
    PLX_CHECK_EQ(n, 5, "Get_elements on a partial struct");
    PLX_CHECK_MPI(MPI_Get_elements_x(&s, st, &nx));
    PLX_CHECK_EQ(nx, 5, "Get_elements_x");
    MPI_Get_count(&s, st, &n);
    PLX_CHECK_EQ(n, MPI_UNDEFINED, "Get_count of a partial element");
    /* Status_set_elements on a derived type, read back (MPI 3.1 4.1.11: the
     * count is of basic elements). MPICH deviates: it takes the count as a
     * number of whole `datatype` items, so the check binds other libraries. */
    if (!plx_lib_is("MPICH Version:")) {
        MPI_Status fake;
        PLX_CHECK_MPI(MPI_Status_set_elements(&fake, st, 4));
        MPI_Get_elements(&fake, st, &n);
        PLX_CHECK_EQ(n, 4, "Status_set_elements round trip");
        MPI_Get_count(&fake, MPI_BYTE, &n);
        PLX_CHECK_EQ(n, 24, "Status_set_elements bytes");
    }
    MPI_Type_free(&st);
}

/* A type freed while a nonblocking send and receive still use it. */
static void test_free_in_use(void)
{
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int peer = plx_pair_peer(rank, size);
    enum { N = 3000 };
    int *src = plx_malloc(2 * N * sizeof(int)), *dst = plx_malloc(2 * N * sizeof(int));
    for (int i = 0; i < 2 * N; i++) {
        src[i] = rank * 100000 + i;
        dst[i] = -1;
    }
    MPI_Datatype even, inner;
    MPI_Type_vector(N, 1, 2, MPI_INT, &inner);
    MPI_Type_dup(inner, &even);
    MPI_Type_free(&inner); /* still used by `even` */
    MPI_Type_commit(&even);
    MPI_Request rq[2];
    MPI_Irecv(dst, 1, even, peer, 3, MPI_COMM_WORLD, &rq[0]);
    MPI_Isend(src, 1, even, peer, 3, MPI_COMM_WORLD, &rq[1]);
    MPI_Type_free(&even);
    MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
    int ok = 1;
    for (int i = 0; i < 2 * N; i++)
        if (dst[i] != (i % 2 ? -1 : peer * 100000 + i))
            ok = 0;
    PLX_CHECK(ok, "data of a freed type in flight");
    free(src);
    free(dst);
}

int main(int argc, char **argv)
{
    plx_test_init(&argc, &argv, "dt_basic");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    test_constructors();
    test_names();
    test_pack();
    test_elements();
    test_free_in_use();
    {
        MPI_Datatype t;
        PLX_CHECK_ERR(MPI_Type_contiguous(-1, MPI_INT, &t), MPI_ERR_COUNT);
        PLX_CHECK_ERR(MPI_Type_free(&(MPI_Datatype){MPI_INT}), MPI_ERR_TYPE);
    }
    return plx_test_finish();
}
