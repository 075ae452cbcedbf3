/*
 * io_coll.c - collective writes of distributed arrays through file views,
 * compared byte for byte with the same array written serially by one
 * process, under several collective-buffering configurations:
 *   - a 2-D int array block-distributed over a process grid, each block
 *     held in memory with a ghost border (memory type: subarray of the
 *     ghosted block; filetype: subarray of the global array);
 *   - a 3-D double array in Fortran order (subarray views);
 *   - a 2-D array with a darray filetype (cyclic(2) x block), the local
 *     data made by packing the global array with the same darray type;
 * each written with hints: default (automatic), two-phase forced with tiny
 * cb_buffer_size (many rounds) and every process an aggregator, two-phase
 * with one aggregator (cb_nodes=1), and collective buffering disabled
 * (independent writes, plain and with data sieving). Each file is read back through the
 * view with read_all and compared with what was written, ghost cells
 * untouched.
 */
#include "io_common.h"

static int rank, size;

struct cfg {
    const char *name;
    const char *keys[3];
    const char *vals[3];
};

static const struct cfg cfgs[] = {
    { "auto", { NULL }, { NULL } },
    { "cb_many_rounds", { "romio_cb_write", "cb_buffer_size", "cb_nodes" }, { "enable", "512", "64" } },
    { "cb_one_aggr", { "romio_cb_write", "romio_cb_read", "cb_nodes" }, { "enable", "enable", "1" } },
    { "cb_off", { "romio_cb_write", "romio_cb_read", NULL }, { "disable", "disable", NULL } },
    { "cb_off_sieve", { "romio_cb_write", "romio_cb_read", "romio_ds_write" }, { "disable", "disable", "enable" } },
};
#define NCFG (int)(sizeof cfgs / sizeof cfgs[0])

static MPI_Info cfg_info(const struct cfg *c)
{
    MPI_Info info;
    MPI_Info_create(&info);
    for (int i = 0; i < 3 && c->keys[i]; i++)
        MPI_Info_set(info, c->keys[i], c->vals[i]);
    return info;
}

/* Rank 0 writes buf (n bytes) to path alone, through MPI-IO on MPI_COMM_SELF. */
static void serial_write(const char *path, const void *buf, int n)
{
    if (rank == 0) {
        MPI_File fh;
        PLX_CHECK_MPI(MPI_File_open(MPI_COMM_SELF, path, MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh));
        PLX_CHECK_MPI(MPI_File_write_at(fh, 0, buf, n, MPI_BYTE, MPI_STATUS_IGNORE));
        PLX_CHECK_MPI(MPI_File_close(&fh));
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

static void compare_files(const char *a, const char *b, const char *what)
{
    if (rank == 0) {
        long na, nb;
        unsigned char *da = io_slurp(a, &na), *db = io_slurp(b, &nb);
        PLX_CHECK_EQ(na, nb, "file sizes equal");
        long bad = -1;
        for (long i = 0; i < na && i < nb && bad < 0; i++)
            if (da[i] != db[i])
                bad = i;
        PLX_CHECK(bad < 0, "%s: collective file differs from the serial one at byte %ld", what, bad);
        free(da);
        free(db);
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

static void block_range(int n, int parts, int idx, int *start, int *len)
{
    int base = n / parts, rem = n % parts;
    *start = idx * base + (idx < rem ? idx : rem);
    *len = base + (idx < rem);
}

static void test_subarray_2d(void)
{
    enum { R = 37, C = 53 };
    int dims[2] = { 0, 0 }, periods[2] = { 0, 0 }, coords[2];
    MPI_Dims_create(size, 2, dims);
    MPI_Comm cart;
    MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &cart);
    MPI_Cart_coords(cart, rank, 2, coords);
    int s0, l0, s1, l1;
    block_range(R, dims[0], coords[0], &s0, &l0);
    block_range(C, dims[1], coords[1], &s1, &l1);
    /* the local block with a ghost border of one cell */
    int gr = l0 + 2, gc = l1 + 2;
    int *loc = malloc((size_t)gr * gc * sizeof(int));
    for (int i = 0; i < gr; i++)
        for (int j = 0; j < gc; j++)
            loc[i * gc + j] = (i == 0 || j == 0 || i == gr - 1 || j == gc - 1) ? -7 : (s0 + i - 1) * 1000 + (s1 + j - 1) + 1;
    MPI_Datatype mem, ft;
    int msz[2] = { gr, gc }, msub[2] = { l0, l1 }, mst[2] = { 1, 1 };
    MPI_Type_create_subarray(2, msz, msub, mst, MPI_ORDER_C, MPI_INT, &mem);
    MPI_Type_commit(&mem);
    int fsz[2] = { R, C }, fsub[2] = { l0, l1 }, fst[2] = { s0, s1 };
    MPI_Type_create_subarray(2, fsz, fsub, fst, MPI_ORDER_C, MPI_INT, &ft);
    MPI_Type_commit(&ft);

    int *glob = malloc(R * C * sizeof(int));
    for (int i = 0; i < R; i++)
        for (int j = 0; j < C; j++)
            glob[i * C + j] = i * 1000 + j + 1;
    char serial[600];
    io_path(serial, sizeof serial, "serial2d");
    serial_write(serial, glob, R * C * (int)sizeof(int));

    for (int k = 0; k < NCFG; k++) {
        char path[600], name[64];
        snprintf(name, sizeof name, "sub2d_%s", cfgs[k].name);
        io_path(path, sizeof path, name);
        MPI_Info info = cfg_info(&cfgs[k]);
        MPI_File fh;
        PLX_CHECK_MPI(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh));
        PLX_CHECK_MPI(MPI_File_set_view(fh, 0, MPI_INT, ft, "native", MPI_INFO_NULL));
        MPI_Status st;
        PLX_CHECK_MPI(MPI_File_write_all(fh, loc, 1, mem, &st));
        int cnt = -1;
        MPI_Get_count(&st, MPI_INT, &cnt);
        PLX_CHECK_EQ(cnt, l0 * l1, "write_all count in ints");
        /* read back into a fresh ghosted buffer */
        int *back = malloc((size_t)gr * gc * sizeof(int));
        for (int i = 0; i < gr * gc; i++)
            back[i] = -7;
        PLX_CHECK_MPI(MPI_File_seek(fh, 0, MPI_SEEK_SET));
        PLX_CHECK_MPI(MPI_File_read_all(fh, back, 1, mem, &st));
        PLX_CHECK(!memcmp(back, loc, (size_t)gr * gc * sizeof(int)),
                  "%s: read_all through the subarray view gives the block back, ghosts untouched", cfgs[k].name);
        free(back);
        PLX_CHECK_MPI(MPI_File_close(&fh));
        MPI_Info_free(&info);
        compare_files(path, serial, name);
    }
    MPI_Type_free(&mem);
    MPI_Type_free(&ft);
    MPI_Comm_free(&cart);
    free(loc);
    free(glob);
}

static void test_subarray_3d_fortran(void)
{
    enum { X = 9, Y = 10, Z = 11 };
    int dims[3] = { 0, 0, 0 };
    MPI_Dims_create(size, 3, dims);
    /* my coordinates: rank = c0 + dims0*(c1 + dims1*c2) (Fortran-style) */
    int c[3] = { rank % dims[0], (rank / dims[0]) % dims[1], rank / (dims[0] * dims[1]) };
    int gs[3] = { X, Y, Z }, st[3], ln[3];
    for (int d = 0; d < 3; d++)
        block_range(gs[d], dims[d], c[d], &st[d], &ln[d]);
    int n = ln[0] * ln[1] * ln[2];
    double *loc = malloc((size_t)(n ? n : 1) * sizeof(double));
    /* Fortran order: the first index runs fastest */
    int k = 0;
    for (int z = 0; z < ln[2]; z++)
        for (int y = 0; y < ln[1]; y++)
            for (int x = 0; x < ln[0]; x++)
                loc[k++] = (st[0] + x) + 100.0 * (st[1] + y) + 10000.0 * (st[2] + z) + 0.25;
    double *glob = malloc((size_t)X * Y * Z * sizeof(double));
    for (int z = 0; z < Z; z++)
        for (int y = 0; y < Y; y++)
            for (int x = 0; x < X; x++)
                glob[x + X * (y + Y * z)] = x + 100.0 * y + 10000.0 * z + 0.25;
    char serial[600];
    io_path(serial, sizeof serial, "serial3d");
    serial_write(serial, glob, X * Y * Z * (int)sizeof(double));
    MPI_Datatype ft;
    MPI_Type_create_subarray(3, gs, ln, st, MPI_ORDER_FORTRAN, MPI_DOUBLE, &ft);
    MPI_Type_commit(&ft);
    for (int q = 0; q < NCFG; q++) {
        char path[600], name[64];
        snprintf(name, sizeof name, "sub3d_%s", cfgs[q].name);
        io_path(path, sizeof path, name);
        MPI_Info info = cfg_info(&cfgs[q]);
        MPI_File fh;
        PLX_CHECK_MPI(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_WRONLY, info, &fh));
        PLX_CHECK_MPI(MPI_File_set_view(fh, 0, MPI_DOUBLE, ft, "native", info));
        PLX_CHECK_MPI(MPI_File_write_at_all(fh, 0, loc, n, MPI_DOUBLE, MPI_STATUS_IGNORE));
        PLX_CHECK_MPI(MPI_File_close(&fh));
        MPI_Info_free(&info);
        compare_files(path, serial, name);
    }
    MPI_Type_free(&ft);
    free(loc);
    free(glob);
}

static void test_darray(void)
{
    enum { R = 29, C = 31 };
    int gs[2] = { R, C }, distribs[2] = { MPI_DISTRIBUTE_CYCLIC, MPI_DISTRIBUTE_BLOCK };
    int dargs[2] = { 2, MPI_DISTRIBUTE_DFLT_DARG }, ps[2] = { 0, 0 };
    MPI_Dims_create(size, 2, ps);
    MPI_Datatype da;
    MPI_Type_create_darray(size, rank, 2, gs, distribs, dargs, ps, MPI_ORDER_C, MPI_INT, &da);
    MPI_Type_commit(&da);
    int *glob = malloc(R * C * sizeof(int));
    for (int i = 0; i < R * C; i++)
        glob[i] = 7 * i + 3;
    /* my elements in file order: the global array packed with my darray type */
    int tsz;
    MPI_Type_size(da, &tsz);
    int n = tsz / (int)sizeof(int), pos = 0;
    int *loc = malloc((size_t)(n ? n : 1) * sizeof(int));
    MPI_Pack(glob, 1, da, loc, tsz, &pos, MPI_COMM_WORLD);
    char serial[600];
    io_path(serial, sizeof serial, "serial_darray");
    serial_write(serial, glob, R * C * (int)sizeof(int));
    for (int q = 0; q < NCFG; q++) {
        char path[600], name[64];
        snprintf(name, sizeof name, "darray_%s", cfgs[q].name);
        io_path(path, sizeof path, name);
        MPI_Info info = cfg_info(&cfgs[q]);
        MPI_File fh;
        PLX_CHECK_MPI(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh));
        PLX_CHECK_MPI(MPI_File_set_view(fh, 0, MPI_INT, da, "native", MPI_INFO_NULL));
        PLX_CHECK_MPI(MPI_File_write_all(fh, loc, n, MPI_INT, MPI_STATUS_IGNORE));
        int *back = calloc((size_t)(n ? n : 1), sizeof(int));
        MPI_Status st;
        PLX_CHECK_MPI(MPI_File_read_at_all(fh, 0, back, n, MPI_INT, &st));
        int cnt = -1;
        MPI_Get_count(&st, MPI_INT, &cnt);
        PLX_CHECK_EQ(cnt, n, "read_at_all count through the darray view");
        PLX_CHECK(!memcmp(back, loc, (size_t)n * sizeof(int)), "%s: darray data read back", cfgs[q].name);
        /* everyone reads the whole file collectively (overlapping reads) */
        int *all = malloc(R * C * sizeof(int));
        PLX_CHECK_MPI(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
        PLX_CHECK_MPI(MPI_File_read_at_all(fh, 0, all, R * C, MPI_INT, MPI_STATUS_IGNORE));
        PLX_CHECK(!memcmp(all, glob, R * C * sizeof(int)), "%s: overlapping collective reads of the whole file",
                  cfgs[q].name);
        free(all);
        free(back);
        PLX_CHECK_MPI(MPI_File_close(&fh));
        MPI_Info_free(&info);
        compare_files(path, serial, name);
    }
    MPI_Type_free(&da);
    free(loc);
    free(glob);
}

/* BTIO's access (NPB BT, full MPI-IO): each rank owns sqrt(p) cells of an
 * n^3 grid of 5-double elements in a diagonal multipartition, cell c in z
 * slab c; memory holds each cell with a 2-cell ghost border (a 4-D Fortran
 * subarray per cell, combined by a struct), the file view is a struct of the
 * cells' 3-D Fortran subarrays of a 5-double etype; every time step is one
 * write_at_all, at an offset that grows by this rank's etypes per step (as
 * BTIO's iseek), i.e. one filetype tile per step. */
static double bt_val(int m, int x, int y, int z, int step, int n)
{
    return m + 5.0 * (x + n * (y + n * (double)z)) + 1e7 * step;
}

static void test_btio_like(void)
{
    int nc = 1;
    while ((nc + 1) * (nc + 1) <= size)
        nc++;
    if (nc * nc != size)
        return;                 /* BT runs on square process counts */
    enum { NSTEP = 3 };
    int n = 6 * nc, cs = n / nc, g = cs + 4;
    MPI_Datatype element, cellb[8], cellf[8], btype, ftype;
    MPI_Type_contiguous(5, MPI_DOUBLE, &element);
    MPI_Type_commit(&element);
    size_t cellwords = (size_t)5 * g * g * g;
    double *u = malloc(cellwords * (size_t)nc * sizeof(double));
    int blen[8];
    MPI_Aint bdisp[8], fdisp[8];
    for (int c = 0; c < nc; c++) {
        int cx = (rank % nc + c) % nc, cy = (rank / nc - c + nc) % nc, cz = c;
        int msz[4] = { 5, g, g, g }, msub[4] = { 5, cs, cs, cs }, mst[4] = { 0, 2, 2, 2 };
        MPI_Type_create_subarray(4, msz, msub, mst, MPI_ORDER_FORTRAN, MPI_DOUBLE, &cellb[c]);
        int fsz[3] = { n, n, n }, fsub[3] = { cs, cs, cs }, fst[3] = { cx * cs, cy * cs, cz * cs };
        MPI_Type_create_subarray(3, fsz, fsub, fst, MPI_ORDER_FORTRAN, element, &cellf[c]);
        blen[c] = 1;
        bdisp[c] = (MPI_Aint)(c * cellwords * sizeof(double));
        fdisp[c] = 0;
    }
    MPI_Type_create_struct(nc, blen, bdisp, cellb, &btype);
    MPI_Type_create_struct(nc, blen, fdisp, cellf, &ftype);
    MPI_Type_commit(&btype);
    MPI_Type_commit(&ftype);
    double *glob = malloc((size_t)5 * n * n * n * NSTEP * sizeof(double));
    for (int st = 0; st < NSTEP; st++)
        for (int z = 0; z < n; z++)
            for (int y = 0; y < n; y++)
                for (int x = 0; x < n; x++)
                    for (int m = 0; m < 5; m++)
                        glob[(size_t)st * 5 * n * n * n + m + 5 * (x + (size_t)n * (y + (size_t)n * z))] =
                            bt_val(m, x, y, z, st, n);
    char serial[600], path[600];
    io_path(serial, sizeof serial, "serial_btio");
    serial_write(serial, glob, 5 * n * n * n * NSTEP * (int)sizeof(double));
    io_path(path, sizeof path, "btio");
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "collective_buffering", "true");
    MPI_Info_set(info, "cb_buffer_size", "4096");
    MPI_File fh;
    if (rank == 0)
        MPI_File_delete(path, MPI_INFO_NULL);   /* as BTIO does; absent: an error, ignored */
    MPI_Barrier(MPI_COMM_WORLD);
    PLX_CHECK_MPI(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDWR | MPI_MODE_CREATE, MPI_INFO_NULL, &fh));
    PLX_CHECK_MPI(MPI_File_set_view(fh, 0, element, ftype, "native", info));
    for (int st = 0; st < NSTEP; st++) {
        for (size_t i = 0; i < cellwords * (size_t)nc; i++)
            u[i] = -1.0;        /* ghosts */
        for (int c = 0; c < nc; c++) {
            int cx = (rank % nc + c) % nc, cy = (rank / nc - c + nc) % nc, cz = c;
            for (int k = 0; k < cs; k++)
                for (int j = 0; j < cs; j++)
                    for (int i = 0; i < cs; i++)
                        for (int m = 0; m < 5; m++)
                            u[c * cellwords + m + 5 * ((i + 2) + (size_t)g * ((j + 2) + (size_t)g * (k + 2)))] =
                                bt_val(m, cx * cs + i, cy * cs + j, cz * cs + k, st, n);
        }
        PLX_CHECK_MPI(MPI_File_write_at_all(fh, (MPI_Offset)st * nc * cs * cs * cs, u, 1, btype, MPI_STATUS_IGNORE));
    }
    /* read every step back, like BTIO's verification */
    double *back = malloc(cellwords * (size_t)nc * sizeof(double));
    for (int st = NSTEP - 1; st >= 0; st--) {
        for (size_t i = 0; i < cellwords * (size_t)nc; i++)
            back[i] = -1.0;
        PLX_CHECK_MPI(MPI_File_read_at_all(fh, (MPI_Offset)st * nc * cs * cs * cs, back, 1, btype, MPI_STATUS_IGNORE));
        int bad = 0;
        for (int c = 0; c < nc && !bad; c++) {
            int cx = (rank % nc + c) % nc, cy = (rank / nc - c + nc) % nc, cz = c;
            for (int k = 0; k < g && !bad; k++)
                for (int j = 0; j < g && !bad; j++)
                    for (int i = 0; i < g && !bad; i++)
                        for (int m = 0; m < 5 && !bad; m++) {
                            int in = i >= 2 && i < cs + 2 && j >= 2 && j < cs + 2 && k >= 2 && k < cs + 2;
                            double want = in ? bt_val(m, cx * cs + i - 2, cy * cs + j - 2, cz * cs + k - 2, st, n) : -1.0;
                            bad = back[c * cellwords + m + 5 * (i + (size_t)g * (j + (size_t)g * k))] != want;
                        }
        }
        PLX_CHECK(!bad, "BTIO-like step %d read back through the cell views", st);
    }
    PLX_CHECK_MPI(MPI_File_close(&fh));
    MPI_Info_free(&info);
    compare_files(path, serial, "btio");
    for (int c = 0; c < nc; c++) {
        MPI_Type_free(&cellb[c]);
        MPI_Type_free(&cellf[c]);
    }
    MPI_Type_free(&btype);
    MPI_Type_free(&ftype);
    MPI_Type_free(&element);
    free(u);
    free(back);
    free(glob);
}

int main(int argc, char **argv)
{
    plx_test_init(&argc, &argv, "io_coll");
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    io_dir_make();
    test_subarray_2d();
    test_subarray_3d_fortran();
    test_darray();
    test_btio_like();
    io_dir_remove();
    return plx_test_finish();
}
