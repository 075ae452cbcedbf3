/*
 * Unit tests of MPI-IO views (src/io/view.c, access.c): the mapping of the data stream
 * onto file bytes (plx_io_view_map), its inverse count
 * (plx_io_view_bytes_before), the segment lists collective and independent
 * access are built from (plx_io_segments), and the view checks
 * (plx_io_view_check), for vector, subarray, darray, resized and struct
 * filetypes. The reference is the datatype engine's own iovec walk of the
 * tiled filetype (plx_dt_iov), whose block addresses are the typemap.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "core/datatype.h"
#include "io/io.h"
#include "io/io_internal.h"
#include "test_util.h"

#define TILES 3

static struct plx_datatype *T(MPI_Datatype h)
{
    return plx_dt_lookup(h);
}

/* file offset of every stream byte of TILES tiles, from the iovec walk */
static MPI_Offset *reference(const struct plx_datatype *ft, MPI_Offset disp, MPI_Offset *n_p)
{
    MPI_Offset n = (MPI_Offset)ft->size * TILES;
    MPI_Offset *off = malloc((size_t)n * sizeof *off);
    static char base[1];
    struct iovec iov[4096];
    size_t bytes = 0;
    int k = plx_dt_iov(base, TILES, ft, 0, (size_t)n, iov, 4096, &bytes);
    MPI_Offset s = 0;
    for (int i = 0; i < k; i++)
        for (size_t b = 0; b < iov[i].iov_len; b++)
            off[s++] = disp + ((char *)iov[i].iov_base - base) + (MPI_Offset)b;
    T_CHECK(s == n && bytes == (size_t)n, "iov walk covers %lld of %lld bytes", (long long)s, (long long)n);
    *n_p = n;
    return off;
}

static void check_view(const char *name, struct plx_datatype *ft, MPI_Offset disp)
{
    struct plx_file f;
    memset(&f, 0, sizeof f);
    f.etype = T(MPI_BYTE);
    f.filetype = ft;
    f.disp = disp;
    T_CHECK(plx_io_view_check(T(MPI_BYTE), ft) == NULL, "%s: a valid view", name);
    MPI_Offset n, *ref = reference(ft, disp, &n);
    int bad = 0;
    for (MPI_Offset p = 0; p < n && !bad; p++) {
        MPI_Offset c, off = plx_io_view_map(&f, p, n - p, &c);
        if (off != ref[p]) {
            T_CHECK(0, "%s: stream byte %lld maps to %lld, expected %lld", name, (long long)p, (long long)off,
                    (long long)ref[p]);
            bad = 1;
        }
        for (MPI_Offset q = 1; q < c && !bad; q++)
            if (ref[p + q] != off + q) {
                T_CHECK(0, "%s: %lld contiguous bytes claimed at stream byte %lld, only %lld are", name,
                        (long long)c, (long long)p, (long long)q);
                bad = 1;
            }
    }
    T_CHECK(!bad, "%s: every stream byte maps to its typemap place", name);
    /* bytes before each file offset */
    MPI_Offset hi = ref[n - 1] + 2;
    bad = 0;
    for (MPI_Offset o = 0; o <= hi && !bad; o++) {
        MPI_Offset want = 0;
        while (want < n && ref[want] < o)
            want++;
        MPI_Offset got = plx_io_view_bytes_before(&f, o);
        if (got != want && o <= ref[n - 1]) {
            T_CHECK(0, "%s: bytes before offset %lld: %lld, expected %lld", name, (long long)o, (long long)got,
                    (long long)want);
            bad = 1;
        }
    }
    T_CHECK(!bad, "%s: bytes_before inverts the mapping", name);
    /* segments from an odd start: ascending, merged, covering the right bytes */
    MPI_Offset start = n / 5, len = n - n / 5 - 1;
    struct plx_io_seg *s;
    int ns = plx_io_segments(&f, start, len, &s);
    MPI_Offset sum = 0;
    bad = 0;
    for (int i = 0; i < ns && !bad; i++) {
        if (i && s[i].off <= s[i - 1].off + s[i - 1].len - 1)
            bad = 1;
        if (i && s[i].off == s[i - 1].off + s[i - 1].len)
            bad = 2;            /* touching pieces are merged */
        for (MPI_Offset b = 0; b < s[i].len && !bad; b++)
            if (ref[start + s[i].spos + b] != s[i].off + b)
                bad = 3;
        sum += s[i].len;
    }
    T_CHECK(!bad && sum == len, "%s: %d segments (problem %d, %lld of %lld bytes)", name, ns, bad, (long long)sum,
            (long long)len);
    free(s);
    free(ref);
}

int main(void)
{
    plx_datatype_init_builtins();
    struct plx_datatype *in = T(MPI_INT);

    struct plx_datatype *vec = plx_dt_vector(4, 2, 3, 0, in);
    check_view("vector(4,2,3) of int", vec, 0);
    check_view("vector with disp 12", vec, 12);

    int sizes[3] = { 5, 6, 7 }, subs[3] = { 2, 3, 4 }, starts[3] = { 1, 2, 3 };
    struct plx_datatype *sub = plx_dt_subarray(3, sizes, subs, starts, MPI_ORDER_C, T(MPI_DOUBLE));
    check_view("3-d C subarray of double", sub, 0);
    struct plx_datatype *subf = plx_dt_subarray(3, sizes, subs, starts, MPI_ORDER_FORTRAN, T(MPI_CHAR));
    check_view("3-d Fortran subarray of char", subf, 5);

    int gs[2] = { 13, 9 }, dist[2] = { MPI_DISTRIBUTE_CYCLIC, MPI_DISTRIBUTE_BLOCK };
    int dargs[2] = { 2, MPI_DISTRIBUTE_DFLT_DARG }, ps[2] = { 2, 3 };
    struct plx_datatype *da = plx_dt_darray(6, 4, 2, gs, dist, dargs, ps, MPI_ORDER_C, in);
    check_view("darray cyclic(2) x block, rank 4 of 6", da, 0);

    int d1 = 2;
    struct plx_datatype *ib = plx_dt_indexed(1, NULL, 1, &d1, NULL, in);
    struct plx_datatype *rs = plx_dt_resized(ib, 0, 20);
    check_view("indexed_block resized (interleaved ranks)", rs, 4);

    int bl[3] = { 1, 2, 1 };
    MPI_Aint disps[3] = { 0, 8, 40 };
    struct plx_datatype *tys[3] = { T(MPI_SHORT), in, T(MPI_DOUBLE) };
    struct plx_datatype *st = plx_dt_struct(3, bl, disps, tys);
    check_view("struct with holes", st, 0);

    /* the checks */
    MPI_Aint back[2] = { 8, 0 };
    struct plx_datatype *tys2[2] = { in, in };
    int bl2[2] = { 1, 1 };
    struct plx_datatype *bad = plx_dt_struct(2, bl2, back, tys2);
    T_CHECK(plx_io_view_check(in, bad) != NULL, "decreasing displacements are refused");
    T_CHECK(plx_io_view_check(T(MPI_DOUBLE), vec) == NULL, "vector of 8 ints holds whole doubles");
    struct plx_datatype *three = plx_dt_contiguous(3, in);
    T_CHECK(plx_io_view_check(T(MPI_DOUBLE), three) != NULL, "12 bytes are not whole doubles");
    struct plx_datatype *shrunk = plx_dt_resized(vec, 0, 8);
    T_CHECK(plx_io_view_check(in, shrunk) != NULL, "tiles that would overlap are refused");

    T_DONE("io_view");
}
