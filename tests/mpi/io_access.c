/*
 * io_access.c - every MPI-IO data access family, with the data read back and
 * compared: explicit offsets (read_at/write_at and _all), individual file
 * pointers (read/write and _all, seek, get_position, get_byte_offset),
 * shared file pointer (read_shared/write_shared, read_ordered/write_ordered,
 * seek_shared, get_position_shared), nonblocking forms completed by
 * MPI_Wait/MPI_Test/MPI_Waitall, split collectives; plus the file queries
 * (size, amode, group, info, atomicity, view, type extent), DELETE_ON_CLOSE,
 * APPEND and an external32 view (big-endian bytes in the file).
 */
#include "io_common.h"

#define N 600   /* ints per rank in each region */

static int rank, size;

static int val(int r, int i, int region)
{
    return region * 10000000 + r * 100000 + i;
}

static void fill(int *b, int r, int region)
{
    for (int i = 0; i < N; i++)
        b[i] = val(r, i, region);
}

static void check_ints(const int *b, int r, int region, const char *what)
{
    for (int i = 0; i < N; i++)
        if (b[i] != val(r, i, region)) {
            PLX_CHECK(0, "%s: int %d of rank %d's data is %d, expected %d", what, i, r, b[i], val(r, i, region));
            return;
        }
    PLX_CHECK(1, "%s", what);
}

static void check_count(MPI_Status *st, MPI_Datatype t, int expect, const char *what)
{
    int n = -1;
    MPI_Get_count(st, t, &n);
    PLX_CHECK_EQ(n, expect, what);
}

/* explicit offsets, default view (bytes) */
static void test_explicit(MPI_File fh)
{
    int *b = malloc(N * sizeof(int)), *r = malloc(N * sizeof(int));
    MPI_Status st;
    MPI_Offset region = (MPI_Offset)size * N * sizeof(int);
    fill(b, rank, 1);
    PLX_CHECK_MPI(MPI_File_write_at(fh, (MPI_Offset)rank * N * sizeof(int), b, N, MPI_INT, &st));
    check_count(&st, MPI_INT, N, "write_at count");
    MPI_Barrier(MPI_COMM_WORLD);
    int peer = (rank + 1) % size;
    PLX_CHECK_MPI(MPI_File_read_at(fh, (MPI_Offset)peer * N * sizeof(int), r, N, MPI_INT, &st));
    check_count(&st, MPI_INT, N, "read_at count");
    check_ints(r, peer, 1, "read_at of the next rank's block");

    /* collective, region 2, blocks in reverse rank order */
    fill(b, rank, 2);
    PLX_CHECK_MPI(MPI_File_write_at_all(fh, region + (MPI_Offset)(size - 1 - rank) * N * sizeof(int), b, N, MPI_INT, &st));
    check_count(&st, MPI_INT, N, "write_at_all count");
    memset(r, 0, N * sizeof(int));
    PLX_CHECK_MPI(MPI_File_read_at_all(fh, region + (MPI_Offset)(size - 1 - peer) * N * sizeof(int), r, N, MPI_INT, &st));
    check_count(&st, MPI_INT, N, "read_at_all count");
    check_ints(r, peer, 2, "read_at_all of the next rank's block");

    /* reading past the end: a short count */
    MPI_Offset fsize;
    PLX_CHECK_MPI(MPI_File_get_size(fh, &fsize));
    PLX_CHECK_EQ(fsize, 2 * region, "file size after two regions");
    PLX_CHECK_MPI(MPI_File_read_at(fh, fsize - 3 * sizeof(int), r, N, MPI_INT, &st));
    check_count(&st, MPI_INT, 3, "read_at at the end of the file is short");
    PLX_CHECK_MPI(MPI_File_read_at_all(fh, fsize + 100, r, N, MPI_INT, &st));
    if (!plx_lib_is("MPICH Version:"))     /* MPICH 4.0 (ROMIO) reports the full count here */
        check_count(&st, MPI_INT, 0, "read_at_all past the end reads nothing");
    free(b);
    free(r);
}

/* interleaved view: rank r owns every size-th int; collective write, then
 * every rank reads the whole region back with a plain view */
static void test_interleaved(MPI_File fh, MPI_Offset disp, int cb)
{
    MPI_Datatype ft, blk;
    int d = rank;
    MPI_Type_create_indexed_block(1, 1, &d, MPI_INT, &blk);
    MPI_Type_create_resized(blk, 0, (MPI_Aint)size * sizeof(int), &ft);
    MPI_Type_commit(&ft);
    MPI_Type_free(&blk);
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "romio_cb_write", cb ? "enable" : "disable");
    MPI_Info_set(info, "romio_cb_read", cb ? "enable" : "disable");
    MPI_Info_set(info, "cb_buffer_size", "1024");   /* several rounds */
    PLX_CHECK_MPI(MPI_File_set_view(fh, disp, MPI_INT, ft, "native", info));
    MPI_Info_free(&info);
    int *b = malloc(N * sizeof(int)), *all = malloc((size_t)size * N * sizeof(int));
    fill(b, rank, 3 + cb);
    MPI_Status st;
    /* two halves: the individual pointer carries over */
    PLX_CHECK_MPI(MPI_File_write_all(fh, b, N / 2, MPI_INT, &st));
    check_count(&st, MPI_INT, N / 2, "write_all count");
    PLX_CHECK_MPI(MPI_File_write_all(fh, b + N / 2, N - N / 2, MPI_INT, &st));
    MPI_Offset pos;
    PLX_CHECK_MPI(MPI_File_get_position(fh, &pos));
    PLX_CHECK_EQ(pos, N, "individual pointer after write_all (etypes)");
    MPI_Offset bo;
    PLX_CHECK_MPI(MPI_File_get_byte_offset(fh, 5, &bo));
    PLX_CHECK_EQ(bo, disp + (MPI_Offset)(5 * size + rank) * sizeof(int), "get_byte_offset through the view");

    /* read back through the same view, collectively */
    PLX_CHECK_MPI(MPI_File_seek(fh, 0, MPI_SEEK_SET));
    int *r = calloc(N, sizeof(int));
    PLX_CHECK_MPI(MPI_File_read_all(fh, r, N, MPI_INT, &st));
    check_count(&st, MPI_INT, N, "read_all count");
    check_ints(r, rank, 3 + cb, "read_all through an interleaved view");

    /* and the whole region as plain ints */
    PLX_CHECK_MPI(MPI_File_set_view(fh, disp, MPI_INT, MPI_INT, "native", MPI_INFO_NULL));
    PLX_CHECK_MPI(MPI_File_read_at_all(fh, 0, all, size * N, MPI_INT, &st));
    int bad = -1;
    for (int i = 0; i < size * N && bad < 0; i++)
        if (all[i] != val(i % size, i / size, 3 + cb))
            bad = i;
    PLX_CHECK(bad < 0, "interleaved region (cb %s) wrong at int %d", cb ? "enable" : "disable", bad);
    PLX_CHECK_MPI(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
    MPI_Type_free(&ft);
    free(b);
    free(r);
    free(all);
}

/* individual file pointer, own block through a view of ints */
static void test_individual(MPI_File fh, MPI_Offset base)
{
    MPI_Offset disp = base + (MPI_Offset)rank * N * sizeof(int);
    PLX_CHECK_MPI(MPI_File_set_view(fh, disp, MPI_INT, MPI_INT, "native", MPI_INFO_NULL));
    int *b = malloc(N * sizeof(int)), *r = calloc(N, sizeof(int));
    fill(b, rank, 5);
    MPI_Status st;
    PLX_CHECK_MPI(MPI_File_write(fh, b, 100, MPI_INT, &st));
    PLX_CHECK_MPI(MPI_File_write(fh, b + 100, N - 100, MPI_INT, &st));
    check_count(&st, MPI_INT, N - 100, "write count");
    MPI_Offset pos;
    PLX_CHECK_MPI(MPI_File_get_position(fh, &pos));
    PLX_CHECK_EQ(pos, N, "position after two writes");
    PLX_CHECK_MPI(MPI_File_seek(fh, -(MPI_Offset)N, MPI_SEEK_CUR));
    PLX_CHECK_MPI(MPI_File_get_position(fh, &pos));
    PLX_CHECK_EQ(pos, 0, "position after seek back with MPI_SEEK_CUR");
    PLX_CHECK_MPI(MPI_File_read(fh, r, N, MPI_INT, &st));
    check_count(&st, MPI_INT, N, "read count");
    check_ints(r, rank, 5, "read with the individual pointer");
    PLX_CHECK_MPI(MPI_File_seek(fh, 10, MPI_SEEK_SET));
    PLX_CHECK_MPI(MPI_File_read(fh, r, 1, MPI_INT, &st));
    PLX_CHECK_EQ(r[0], val(rank, 10, 5), "read after MPI_SEEK_SET 10");
    MPI_Barrier(MPI_COMM_WORLD);    /* every block written: the size is settled */
    MPI_Offset fsize;
    PLX_CHECK_MPI(MPI_File_get_size(fh, &fsize));
    PLX_CHECK_MPI(MPI_File_seek(fh, 0, MPI_SEEK_END));
    PLX_CHECK_MPI(MPI_File_get_position(fh, &pos));
    PLX_CHECK_EQ(pos, (fsize - disp) / (MPI_Offset)sizeof(int), "MPI_SEEK_END lands at the end of the file");
    PLX_CHECK_MPI(MPI_File_seek(fh, -1, MPI_SEEK_END));
    PLX_CHECK_MPI(MPI_File_get_position(fh, &pos));
    PLX_CHECK_EQ(pos, (fsize - disp) / (MPI_Offset)sizeof(int) - 1, "MPI_SEEK_END - 1");
    free(b);
    free(r);
    PLX_CHECK_MPI(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
}

/* nonblocking forms */
static void test_nonblocking(MPI_File fh, MPI_Offset base)
{
    int *b = malloc(4 * N * sizeof(int)), *r = calloc(4 * N, sizeof(int));
    for (int k = 0; k < 4; k++)
        fill(b + k * N, rank, 6 + k);
    MPI_Offset at = base + (MPI_Offset)rank * 4 * N * sizeof(int);
    MPI_Request rq[4];
    MPI_Status sts[4];
    PLX_CHECK_MPI(MPI_File_iwrite_at(fh, at, b, N, MPI_INT, &rq[0]));
    PLX_CHECK_MPI(MPI_File_iwrite_at_all(fh, at + N * sizeof(int), b + N, N, MPI_INT, &rq[1]));
    PLX_CHECK_MPI(MPI_File_seek(fh, at + 2 * N * sizeof(int), MPI_SEEK_SET));
    PLX_CHECK_MPI(MPI_File_iwrite(fh, b + 2 * N, N, MPI_INT, &rq[2]));
    PLX_CHECK_MPI(MPI_Wait(&rq[2], &sts[2]));    /* the pointer moved when the call started */
    PLX_CHECK_MPI(MPI_File_iwrite_all(fh, b + 3 * N, N, MPI_INT, &rq[3]));
    PLX_CHECK_MPI(MPI_Waitall(4, rq, sts));
    for (int k = 0; k < 4; k++)
        PLX_CHECK(rq[k] == MPI_REQUEST_NULL, "request %d freed by the wait", k);
    check_count(&sts[1], MPI_INT, N, "iwrite_at_all status count");
    check_count(&sts[3], MPI_INT, N, "iwrite_all status count");
    MPI_Barrier(MPI_COMM_WORLD);
    PLX_CHECK_MPI(MPI_File_iread_at(fh, at, r, N, MPI_INT, &rq[0]));
    int flag = 0;
    MPI_Status st;
    while (!flag)
        PLX_CHECK_MPI(MPI_Test(&rq[0], &flag, &st));
    check_count(&st, MPI_INT, N, "iread_at status count");
    PLX_CHECK_MPI(MPI_File_iread_at_all(fh, at + N * sizeof(int), r + N, N, MPI_INT, &rq[1]));
    PLX_CHECK_MPI(MPI_Wait(&rq[1], &st));
    check_count(&st, MPI_INT, N, "iread_at_all status count");
    PLX_CHECK_MPI(MPI_File_seek(fh, at + 2 * N * sizeof(int), MPI_SEEK_SET));
    PLX_CHECK_MPI(MPI_File_iread(fh, r + 2 * N, N, MPI_INT, &rq[2]));
    PLX_CHECK_MPI(MPI_File_iread_all(fh, r + 3 * N, N, MPI_INT, &rq[3]));
    PLX_CHECK_MPI(MPI_Waitall(2, &rq[2], MPI_STATUSES_IGNORE));
    for (int k = 0; k < 4; k++)
        check_ints(r + k * N, rank, 6 + k, "nonblocking data read back");
    free(b);
    free(r);
}

/* A nonblocking collective does not wait for the others to start it: rank
 * 1 starts its iwrite_all only after a message rank 0 sends after starting
 * its own (a blocking implementation deadlocks here). */
static void test_nonblocking_order(MPI_File fh, MPI_Offset base)
{
    int *b = malloc(N * sizeof(int)), *r = calloc(N, sizeof(int));
    fill(b, rank, 13);
    MPI_Offset at = base + (MPI_Offset)rank * N * sizeof(int);
    MPI_Request rq;
    MPI_Status st;
    int token = 42;
    if (rank == 0) {
        PLX_CHECK_MPI(MPI_File_iwrite_at_all(fh, at, b, N, MPI_INT, &rq));
        if (size > 1)
            MPI_Send(&token, 1, MPI_INT, 1, 7, MPI_COMM_WORLD);
    } else {
        if (rank == 1)
            MPI_Recv(&token, 1, MPI_INT, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        PLX_CHECK_MPI(MPI_File_iwrite_at_all(fh, at, b, N, MPI_INT, &rq));
    }
    PLX_CHECK_MPI(MPI_Wait(&rq, &st));
    check_count(&st, MPI_INT, N, "iwrite_at_all started out of step: count");
    /* the same for a read, the other way round, with the individual pointer */
    PLX_CHECK_MPI(MPI_File_seek(fh, at, MPI_SEEK_SET));
    if (rank == 1) {
        PLX_CHECK_MPI(MPI_File_iread_all(fh, r, N, MPI_INT, &rq));
        MPI_Send(&token, 1, MPI_INT, 0, 8, MPI_COMM_WORLD);
    } else {
        if (rank == 0 && size > 1)
            MPI_Recv(&token, 1, MPI_INT, 1, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        PLX_CHECK_MPI(MPI_File_iread_all(fh, r, N, MPI_INT, &rq));
    }
    MPI_Offset pos;
    PLX_CHECK_MPI(MPI_File_get_position(fh, &pos));
    PLX_CHECK_EQ(pos, at + N * (MPI_Offset)sizeof(int), "iread_all moved the pointer when it started");
    int flag = 0;
    while (!flag)
        PLX_CHECK_MPI(MPI_Test(&rq, &flag, &st));
    check_count(&st, MPI_INT, N, "iread_all started out of step: count");
    check_ints(r, rank, 13, "iread_all started out of step: data");
    free(b);
    free(r);
}

/* split collectives */
static void test_split(MPI_File fh, MPI_Offset base)
{
    int *b = malloc(N * sizeof(int)), *r = calloc(N, sizeof(int));
    fill(b, rank, 11);
    MPI_Offset at = base + (MPI_Offset)rank * N * sizeof(int);
    MPI_Status st;
    PLX_CHECK_MPI(MPI_File_write_at_all_begin(fh, at, b, N, MPI_INT));
    PLX_CHECK_MPI(MPI_File_write_at_all_end(fh, b, &st));
    check_count(&st, MPI_INT, N, "write_at_all_end count");
    PLX_CHECK_MPI(MPI_File_read_at_all_begin(fh, at, r, N, MPI_INT));
    PLX_CHECK_MPI(MPI_File_read_at_all_end(fh, r, &st));
    check_count(&st, MPI_INT, N, "read_at_all_end count");
    check_ints(r, rank, 11, "split collective read_at_all");
    PLX_CHECK_MPI(MPI_File_seek(fh, at, MPI_SEEK_SET));
    fill(b, rank, 12);
    PLX_CHECK_MPI(MPI_File_write_all_begin(fh, b, N, MPI_INT));
    PLX_CHECK_MPI(MPI_File_write_all_end(fh, b, &st));
    PLX_CHECK_MPI(MPI_File_seek(fh, at, MPI_SEEK_SET));
    memset(r, 0, N * sizeof(int));
    PLX_CHECK_MPI(MPI_File_read_all_begin(fh, r, N, MPI_INT));
    PLX_CHECK_MPI(MPI_File_read_all_end(fh, r, &st));
    check_ints(r, rank, 12, "split collective read_all");
    free(b);
    free(r);
}

/* shared file pointer on its own file */
static void test_shared(const char *path)
{
    MPI_File fh;
    MPI_Status st;
    PLX_CHECK_MPI(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    PLX_CHECK_MPI(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "native", MPI_INFO_NULL));
    enum { K = 5 };
    /* K records of (rank, seq) each, in whatever order the pointer gives */
    for (int k = 0; k < K; k++) {
        int rec[2] = { rank, k };
        PLX_CHECK_MPI(MPI_File_write_shared(fh, rec, 2, MPI_INT, &st));
        check_count(&st, MPI_INT, 2, "write_shared count");
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Offset sp;
    PLX_CHECK_MPI(MPI_File_get_position_shared(fh, &sp));
    PLX_CHECK_EQ(sp, 2 * K * size, "shared pointer after every write_shared");
    /* everyone reads records through the shared pointer: each read once */
    PLX_CHECK_MPI(MPI_File_seek_shared(fh, 0, MPI_SEEK_SET));
    int got[K][2];
    for (int k = 0; k < K; k++) {
        MPI_Request rq;
        if (k % 2)
            PLX_CHECK_MPI(MPI_File_read_shared(fh, got[k], 2, MPI_INT, &st));
        else {
            PLX_CHECK_MPI(MPI_File_iread_shared(fh, got[k], 2, MPI_INT, &rq));
            PLX_CHECK_MPI(MPI_Wait(&rq, &st));
        }
        check_count(&st, MPI_INT, 2, "read_shared count");
    }
    int *all = malloc((size_t)size * K * 2 * sizeof(int));
    MPI_Allgather(got, 2 * K, MPI_INT, all, 2 * K, MPI_INT, MPI_COMM_WORLD);
    int *seen = calloc((size_t)size * K, sizeof(int));
    int bad = 0;
    for (int i = 0; i < size * K; i++) {
        int r = all[2 * i], k = all[2 * i + 1];
        if (r < 0 || r >= size || k < 0 || k >= K || seen[r * K + k]++)
            bad++;
    }
    PLX_CHECK_EQ(bad, 0, "every record read exactly once through the shared pointer");
    free(seen);
    free(all);

    /* ordered: rank r writes r+1 copies of r, in rank order */
    PLX_CHECK_MPI(MPI_File_seek_shared(fh, 0, MPI_SEEK_END));
    MPI_Offset start;
    PLX_CHECK_MPI(MPI_File_get_position_shared(fh, &start));
    PLX_CHECK_EQ(start, 2 * K * size, "seek_shared to the end");
    int mine[64];
    for (int i = 0; i <= rank; i++)
        mine[i] = 1000 + rank;
    PLX_CHECK_MPI(MPI_File_write_ordered(fh, mine, rank + 1, MPI_INT, &st));
    check_count(&st, MPI_INT, rank + 1, "write_ordered count");
    int total = size * (size + 1) / 2;
    int *seq = malloc((size_t)total * sizeof(int));
    PLX_CHECK_MPI(MPI_File_read_at_all(fh, start, seq, total, MPI_INT, &st));
    int k = 0;
    bad = -1;
    for (int r = 0; r < size; r++)
        for (int i = 0; i <= r; i++, k++)
            if (seq[k] != 1000 + r && bad < 0)
                bad = k;
    PLX_CHECK(bad < 0, "write_ordered puts the ranks' data in rank order (first wrong int %d)", bad);
    /* and read_ordered hands each rank its own piece back */
    PLX_CHECK_MPI(MPI_File_seek_shared(fh, start, MPI_SEEK_SET));
    int back[64] = { 0 };
    PLX_CHECK_MPI(MPI_File_read_ordered(fh, back, rank + 1, MPI_INT, &st));
    check_count(&st, MPI_INT, rank + 1, "read_ordered count");
    for (int i = 0; i <= rank; i++)
        PLX_CHECK_EQ(back[i], 1000 + rank, "read_ordered returns this rank's piece");
    PLX_CHECK_MPI(MPI_File_seek_shared(fh, start, MPI_SEEK_SET));
    memset(back, 0, sizeof back);
    PLX_CHECK_MPI(MPI_File_read_ordered_begin(fh, back, rank + 1, MPI_INT));
    PLX_CHECK_MPI(MPI_File_read_ordered_end(fh, back, &st));
    PLX_CHECK_EQ(back[rank], 1000 + rank, "read_ordered_begin/end");
    PLX_CHECK_MPI(MPI_File_get_position_shared(fh, &sp));
    PLX_CHECK_EQ(sp, start + total, "shared pointer after the ordered read");
    free(seq);
    PLX_CHECK_MPI(MPI_File_close(&fh));
    PLX_CHECK(fh == MPI_FILE_NULL, "close sets the handle to MPI_FILE_NULL");

    /* every rank opens the file alone: each open has its own shared pointer */
    PLX_CHECK_MPI(MPI_File_open(MPI_COMM_SELF, path, MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    MPI_Barrier(MPI_COMM_WORLD);
    int one = rank;
    PLX_CHECK_MPI(MPI_File_write_shared(fh, &one, 1, MPI_INT, &st));
    MPI_Barrier(MPI_COMM_WORLD);
    PLX_CHECK_MPI(MPI_File_get_position_shared(fh, &sp));
    PLX_CHECK_EQ(sp, 4, "a MPI_COMM_SELF open's shared pointer counts only its own writes (bytes)");
    PLX_CHECK_MPI(MPI_File_close(&fh));
}

static void test_queries(MPI_File fh, const char *path)
{
    int amode;
    PLX_CHECK_MPI(MPI_File_get_amode(fh, &amode));
    PLX_CHECK_EQ(amode, MPI_MODE_CREATE | MPI_MODE_RDWR, "get_amode");
    MPI_Group g, wg;
    int cmp;
    PLX_CHECK_MPI(MPI_File_get_group(fh, &g));
    MPI_Comm_group(MPI_COMM_WORLD, &wg);
    MPI_Group_compare(g, wg, &cmp);
    PLX_CHECK_EQ(cmp, MPI_IDENT, "get_group is the opening communicator's group");
    MPI_Group_free(&g);
    MPI_Group_free(&wg);
    MPI_Info info;
    char v[MPI_MAX_INFO_VAL + 1];
    int flag = 0;
    PLX_CHECK_MPI(MPI_File_get_info(fh, &info));
    MPI_Info_get(info, "cb_buffer_size", MPI_MAX_INFO_VAL, v, &flag);
    PLX_CHECK(flag && atoll(v) > 0, "get_info has cb_buffer_size (%s)", flag ? v : "absent");
    MPI_Info_get(info, "cb_nodes", MPI_MAX_INFO_VAL, v, &flag);
    PLX_CHECK(flag && atoi(v) >= 1 && atoi(v) <= size, "get_info has cb_nodes (%s)", flag ? v : "absent");
    MPI_Info_free(&info);
    /* hints changed by set_info are in use */
    MPI_Info_create(&info);
    MPI_Info_set(info, "cb_buffer_size", "65536");
    PLX_CHECK_MPI(MPI_File_set_info(fh, info));
    MPI_Info_free(&info);
    PLX_CHECK_MPI(MPI_File_get_info(fh, &info));
    MPI_Info_get(info, "cb_buffer_size", MPI_MAX_INFO_VAL, v, &flag);
    PLX_CHECK(flag && !strcmp(v, "65536"), "set_info's cb_buffer_size is used (%s)", flag ? v : "absent");
    MPI_Info_free(&info);
    MPI_Info_create(&info);
    MPI_Info_set(info, "collective_buffering", "false");
    PLX_CHECK_MPI(MPI_File_set_info(fh, info));
    MPI_Info_free(&info);
    PLX_CHECK_MPI(MPI_File_get_info(fh, &info));
    MPI_Info_get(info, "romio_cb_write", MPI_MAX_INFO_VAL, v, &flag);
    PLX_CHECK(flag && !strcmp(v, "disable"), "collective_buffering=false turns collective buffering off (%s)",
              flag ? v : "absent");
    MPI_Info_free(&info);

    int at = -1;
    PLX_CHECK_MPI(MPI_File_get_atomicity(fh, &at));
    PLX_CHECK_EQ(at, 0, "atomicity is off by default");
    PLX_CHECK_MPI(MPI_File_set_atomicity(fh, 1));
    PLX_CHECK_MPI(MPI_File_get_atomicity(fh, &at));
    PLX_CHECK_EQ(at, 1, "atomicity on");
    /* atomic mode: every rank writes the same range; the result is one rank's whole block */
    int b[N];
    for (int i = 0; i < N; i++)
        b[i] = rank;
    PLX_CHECK_MPI(MPI_File_write_at(fh, 0, b, N, MPI_INT, MPI_STATUS_IGNORE));
    MPI_Barrier(MPI_COMM_WORLD);
    PLX_CHECK_MPI(MPI_File_read_at(fh, 0, b, N, MPI_INT, MPI_STATUS_IGNORE));
    int mixed = 0;
    for (int i = 1; i < N; i++)
        mixed |= b[i] != b[0];
    PLX_CHECK(!mixed && b[0] >= 0 && b[0] < size, "atomic writes of one range do not mix (first %d)", b[0]);
    PLX_CHECK_MPI(MPI_File_set_atomicity(fh, 0));
    PLX_CHECK_MPI(MPI_File_sync(fh));

    /* view queries */
    MPI_Datatype ft, et, ft2;
    MPI_Type_vector(4, 2, 3, MPI_INT, &ft);
    MPI_Type_commit(&ft);
    PLX_CHECK_MPI(MPI_File_set_view(fh, 8, MPI_INT, ft, "native", MPI_INFO_NULL));
    MPI_Offset disp;
    char rep[MPI_MAX_DATAREP_STRING];
    PLX_CHECK_MPI(MPI_File_get_view(fh, &disp, &et, &ft2, rep));
    PLX_CHECK_EQ(disp, 8, "get_view disp");
    PLX_CHECK(et == MPI_INT, "get_view etype is MPI_INT");
    PLX_CHECK_STR(rep, "native", "get_view datarep");
    int sz;
    MPI_Aint lb, ext;
    MPI_Type_size(ft2, &sz);
    MPI_Type_get_extent(ft2, &lb, &ext);
    PLX_CHECK_EQ(sz, 8 * (int)sizeof(int), "get_view filetype size");
    PLX_CHECK_EQ(ext, 11 * (MPI_Aint)sizeof(int), "get_view filetype extent");
    MPI_Type_free(&ft2);
    MPI_Aint fext;
    PLX_CHECK_MPI(MPI_File_get_type_extent(fh, ft, &fext));
    PLX_CHECK_EQ(fext, 11 * (MPI_Aint)sizeof(int), "get_type_extent (native)");
    /* offset 5 in etypes: tile 0, third block, second int -> (3+1) ints in */
    MPI_Offset bo;
    PLX_CHECK_MPI(MPI_File_get_byte_offset(fh, 5, &bo));
    PLX_CHECK_EQ(bo, 8 + 7 * (MPI_Offset)sizeof(int), "get_byte_offset through a vector view");
    PLX_CHECK_MPI(MPI_File_get_byte_offset(fh, 9, &bo));
    PLX_CHECK_EQ(bo, 8 + (11 + 1) * (MPI_Offset)sizeof(int), "get_byte_offset into the second tile");
    MPI_Type_free(&ft);
    PLX_CHECK_MPI(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));

    /* handle conversion */
    MPI_Fint fi = MPI_File_c2f(fh);
    PLX_CHECK(MPI_File_f2c(fi) == fh, "MPI_File_f2c(MPI_File_c2f(fh)) == fh");
    (void)path;
}

static void test_sizes(const char *path)
{
    MPI_File fh;
    MPI_Info pi;
    MPI_Info_create(&pi);
    MPI_Info_set(pi, "file_perm", "0640");
    char pp[700];
    snprintf(pp, sizeof pp, "%s.perm", path);
    mode_t old = umask(022);
    PLX_CHECK_MPI(MPI_File_open(MPI_COMM_WORLD, pp, MPI_MODE_CREATE | MPI_MODE_WRONLY | MPI_MODE_DELETE_ON_CLOSE, pi, &fh));
    umask(old);
    MPI_Info_free(&pi);
    struct stat sb;
    PLX_CHECK(stat(pp, &sb) == 0 && (sb.st_mode & 0777) == 0640, "hint file_perm=0640 gives mode %o",
              (unsigned)(sb.st_mode & 0777));
    PLX_CHECK_MPI(MPI_File_close(&fh));
    PLX_CHECK_MPI(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_WRONLY | MPI_MODE_DELETE_ON_CLOSE,
                                MPI_INFO_NULL, &fh));
    MPI_Offset s;
    PLX_CHECK_MPI(MPI_File_set_size(fh, 12345));
    PLX_CHECK_MPI(MPI_File_get_size(fh, &s));
    PLX_CHECK_EQ(s, 12345, "set_size grows");
    PLX_CHECK_MPI(MPI_File_set_size(fh, 100));
    PLX_CHECK_MPI(MPI_File_get_size(fh, &s));
    PLX_CHECK_EQ(s, 100, "set_size truncates");
    PLX_CHECK_MPI(MPI_File_preallocate(fh, 50));
    PLX_CHECK_MPI(MPI_File_get_size(fh, &s));
    PLX_CHECK_EQ(s, 100, "preallocate does not shrink");
    PLX_CHECK_MPI(MPI_File_preallocate(fh, 70000));
    PLX_CHECK_MPI(MPI_File_get_size(fh, &s));
    PLX_CHECK_EQ(s, 70000, "preallocate grows");
    PLX_CHECK_MPI(MPI_File_close(&fh));
    MPI_Barrier(MPI_COMM_WORLD);
    PLX_CHECK(access(path, F_OK) != 0, "MPI_MODE_DELETE_ON_CLOSE removed %s", path);
    MPI_Barrier(MPI_COMM_WORLD);    /* everyone looked before rank 0 makes it again */

    /* APPEND: both pointers start at the end */
    if (rank == 0) {
        FILE *fp = fopen(path, "wb");
        fwrite("0123456789", 1, 10, fp);
        fclose(fp);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    PLX_CHECK_MPI(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_WRONLY | MPI_MODE_APPEND, MPI_INFO_NULL, &fh));
    MPI_Offset p1, p2;
    PLX_CHECK_MPI(MPI_File_get_position(fh, &p1));
    PLX_CHECK_MPI(MPI_File_get_position_shared(fh, &p2));
    PLX_CHECK_EQ(p1, 10, "MPI_MODE_APPEND: individual pointer at the end");
    PLX_CHECK_EQ(p2, 10, "MPI_MODE_APPEND: shared pointer at the end");
    char c = (char)('a' + rank);
    PLX_CHECK_MPI(MPI_File_write_ordered(fh, &c, 1, MPI_CHAR, MPI_STATUS_IGNORE));
    PLX_CHECK_MPI(MPI_File_close(&fh));
    if (rank == 0) {
        long n;
        unsigned char *d = io_slurp(path, &n);
        PLX_CHECK_EQ(n, 10 + size, "appended file size");
        int ok = !memcmp(d, "0123456789", 10);
        for (int r = 0; r < size; r++)
            ok &= d[10 + r] == 'a' + r;
        PLX_CHECK(ok, "write_ordered appended the ranks' bytes in order after the old content");
        free(d);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        PLX_CHECK_MPI(MPI_File_delete(path, MPI_INFO_NULL));
}

static void test_external32(const char *path)
{
    MPI_File fh;
    PLX_CHECK_MPI(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    PLX_CHECK_MPI(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "external32", MPI_INFO_NULL));
    int v[2] = { 0x01020304 + rank, -2 };
    double d = 1.5 + rank;
    PLX_CHECK_MPI(MPI_File_write_at_all(fh, 2 * rank, v, 2, MPI_INT, MPI_STATUS_IGNORE));
    MPI_Barrier(MPI_COMM_WORLD);
    int back[2] = { 0, 0 };
    PLX_CHECK_MPI(MPI_File_read_at(fh, 2 * rank, back, 2, MPI_INT, MPI_STATUS_IGNORE));
    PLX_CHECK(back[0] == v[0] && back[1] == -2, "external32 round trip (%x %d)", back[0], back[1]);
    char rep[MPI_MAX_DATAREP_STRING];
    MPI_Offset disp;
    MPI_Datatype et, ft;
    PLX_CHECK_MPI(MPI_File_get_view(fh, &disp, &et, &ft, rep));
    PLX_CHECK_STR(rep, "external32", "get_view datarep external32");
    /* doubles, after the ints */
    PLX_CHECK_MPI(MPI_File_set_view(fh, 8 * size, MPI_DOUBLE, MPI_DOUBLE, "external32", MPI_INFO_NULL));
    PLX_CHECK_MPI(MPI_File_write_at_all(fh, rank, &d, 1, MPI_DOUBLE, MPI_STATUS_IGNORE));
    PLX_CHECK_MPI(MPI_File_close(&fh));
    if (rank == 0) {
        long n;
        unsigned char *b = io_slurp(path, &n);
        PLX_CHECK_EQ(n, 16 * size, "external32 file size");
        for (int r = 0; r < size; r++) {
            unsigned char *p = b + 8 * r;
            PLX_CHECK(p[0] == 1 && p[1] == 2 && p[2] == 3 && p[3] == 4 + r, "int of rank %d big-endian", r);
            PLX_CHECK(p[4] == 0xff && p[7] == 0xfe, "-2 of rank %d big-endian", r);
            unsigned char *q = b + 8 * size + 8 * r;
            double want = 1.5 + r;
            unsigned char w[8];
            memcpy(w, &want, 8);
            int ok = 1;
            for (int i = 0; i < 8; i++)
                ok &= q[i] == w[7 - i];    /* the machine is little-endian (x86-64) */
            PLX_CHECK(ok, "double of rank %d is big-endian IEEE", r);
        }
        free(b);
        PLX_CHECK_MPI(MPI_File_delete(path, MPI_INFO_NULL));
    }
}

/* a user data representation: ints byte-swapped in the file */
static int swap_calls;

static unsigned swap32(unsigned v)
{
    return (v >> 24) | ((v >> 8) & 0xff00) | ((v << 8) & 0xff0000) | (v << 24);
}

static int swap_write(void *userbuf, MPI_Datatype t, int count, void *filebuf, MPI_Offset position, void *extra)
{
    (void)extra;
    if (t != MPI_INT)
        return MPI_ERR_TYPE;
    swap_calls++;
    const unsigned *u = (const unsigned *)userbuf + position;
    unsigned *f = filebuf;
    for (int i = 0; i < count; i++)
        f[i] = swap32(u[i]);
    return MPI_SUCCESS;
}

static int swap_read(void *userbuf, MPI_Datatype t, int count, void *filebuf, MPI_Offset position, void *extra)
{
    (void)extra;
    if (t != MPI_INT)
        return MPI_ERR_TYPE;
    swap_calls++;
    unsigned *u = (unsigned *)userbuf + position;
    const unsigned *f = filebuf;
    for (int i = 0; i < count; i++)
        u[i] = swap32(f[i]);
    return MPI_SUCCESS;
}

static int swap_extent(MPI_Datatype t, MPI_Aint *ext, void *extra)
{
    (void)extra;
    int sz;
    MPI_Type_size(t, &sz);
    *ext = sz;
    return MPI_SUCCESS;
}

static void test_user_datarep(const char *path)
{
    PLX_CHECK_MPI(MPI_Register_datarep("plx-swap", swap_read, swap_write, swap_extent, NULL));
    MPI_File fh;
    PLX_CHECK_MPI(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    PLX_CHECK_MPI(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "plx-swap", MPI_INFO_NULL));
    int v[3] = { 0x0a0b0c00 + rank, 7, -1 }, back[3] = { 0, 0, 0 };
    swap_calls = 0;
    PLX_CHECK_MPI(MPI_File_write_at_all(fh, 3 * rank, v, 3, MPI_INT, MPI_STATUS_IGNORE));
    PLX_CHECK_MPI(MPI_File_read_at(fh, 3 * rank, back, 3, MPI_INT, MPI_STATUS_IGNORE));
    PLX_CHECK(swap_calls == 2, "the conversion functions ran (%d calls)", swap_calls);
    PLX_CHECK(!memcmp(v, back, sizeof v), "user datarep round trip");
    PLX_CHECK_MPI(MPI_File_close(&fh));
    if (rank == 0) {
        long n;
        unsigned char *b = io_slurp(path, &n);
        PLX_CHECK_EQ(n, 12 * size, "user datarep file size");
        PLX_CHECK(b[0] == 0x0a && b[1] == 0x0b && b[2] == 0x0c && b[3] == 0, "user datarep bytes in the file");
        free(b);
        PLX_CHECK_MPI(MPI_File_delete(path, MPI_INFO_NULL));
    }
}

int main(int argc, char **argv)
{
    plx_test_init(&argc, &argv, "io_access");
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    io_dir_make();
    char path[600], p2[600];
    io_path(path, sizeof path, "data");
    MPI_File fh;
    PLX_CHECK_MPI(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    MPI_Errhandler eh;
    PLX_CHECK_MPI(MPI_File_get_errhandler(fh, &eh));
    PLX_CHECK(eh == MPI_ERRORS_RETURN, "a file's default error handler is MPI_ERRORS_RETURN");
    MPI_Errhandler_free(&eh);
    MPI_Offset region = (MPI_Offset)size * N * sizeof(int);
    test_explicit(fh);
    test_interleaved(fh, 2 * region, 1);
    test_interleaved(fh, 3 * region, 0);
    test_individual(fh, 4 * region);
    test_nonblocking(fh, 5 * region);
    test_split(fh, 9 * region);
    test_nonblocking_order(fh, 10 * region);
    test_queries(fh, path);
    PLX_CHECK_MPI(MPI_File_close(&fh));
    test_shared(io_path(p2, sizeof p2, "shared"));
    test_sizes(io_path(p2, sizeof p2, "sizes"));
    test_external32(io_path(p2, sizeof p2, "x32"));
    test_user_datarep(io_path(p2, sizeof p2, "userrep"));
    if (rank == 0)
        PLX_CHECK_MPI(MPI_File_delete(path, MPI_INFO_NULL));
    io_dir_remove();
    return plx_test_finish();
}
