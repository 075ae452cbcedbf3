/*
 * The MPI 4.0 large-count forms of the RMA calls (`_c`: MPI_Count counts,
 * MPI_Aint displacement units):
 *  - MPI_Win_create_c, MPI_Win_allocate_c, MPI_Win_allocate_shared_c and
 *    MPI_Win_shared_query_c: sizes, displacement units and bases agree with
 *    the int forms and with the window attributes;
 *  - MPI_Put_c, MPI_Get_c, MPI_Accumulate_c, MPI_Get_accumulate_c under
 *    fence, and MPI_Rput_c, MPI_Rget_c, MPI_Raccumulate_c,
 *    MPI_Rget_accumulate_c under lock_all, on an allocated and a created
 *    window, to the right-hand neighbour, with the data checked at both ends
 *    (a vector origin type too);
 *  - counts above INT_MAX, which only the `_c` forms can express: taken at
 *    their full width (a put of 2^32 + 8 bytes into a 64-byte window is
 *    refused with MPI_ERR_RMA_RANGE and a message naming the 2^32 + 8
 *    bytes; cut to an int it would have been a legal 8-byte put), accepted
 *    when they move no bytes (3 * 2^30 elements of an empty datatype), and
 *    refused with MPI_ERR_COUNT when their bytes overflow; a negative count
 *    is MPI_ERR_COUNT; a displacement unit above INT_MAX is refused with
 *    MPI_ERR_DISP (MPI_WIN_DISP_UNIT is an int attribute);
 *  - --big (label heavy, 2 ranks): MPI_Get_c and MPI_Put_c of 2^31 + 24
 *    bytes (above INT_MAX) through an allocated window, every byte checked.
 */
#include "plx_test.h"
#include <limits.h>

static int rank, size;

static void check_msg(int code, const char *w1, const char *w2)
{
    if (!plx_lib_is("Plexus"))
        return;
    char msg[MPI_MAX_ERROR_STRING];
    int len;
    MPI_Error_string(code, msg, &len);
    PLX_CHECK(strstr(msg, w1) != NULL, "message \"%s\" names \"%s\"", msg, w1);
    if (w2)
        PLX_CHECK(strstr(msg, w2) != NULL, "message \"%s\" names \"%s\"", msg, w2);
}

static int err_class(int code)
{
    int c = -1;
    MPI_Error_class(code, &c);
    return c;
}

#define N 64    /* ints per window */

/* value of element i of rank r's window at the start */
static int initial(int r, int i)
{
    return 1000 * r + i;
}

/* The eight operations on one window whose memory (N ints) is `mem`. */
static void ops(MPI_Win win, int *mem, const char *what)
{
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    char label[160];
    for (int i = 0; i < N; i++)
        mem[i] = initial(rank, i);
    MPI_Win_fence(0, win);

    /* fence: put [0, 8), get [8, 16), accumulate [16, 24), get_accumulate [24, 32) */
    int src[8], got[8], res[8];
    for (int i = 0; i < 8; i++)
        src[i] = 100 * rank + i;
    PLX_CHECK_MPI(MPI_Put_c(src, 8, MPI_INT, right, 0, (MPI_Count)8, MPI_INT, win));
    PLX_CHECK_MPI(MPI_Get_c(got, 8, MPI_INT, right, 8, (MPI_Count)8, MPI_INT, win));
    PLX_CHECK_MPI(MPI_Accumulate_c(src, 8, MPI_INT, right, 16, 8, MPI_INT, MPI_SUM, win));
    PLX_CHECK_MPI(MPI_Get_accumulate_c(src, 8, MPI_INT, res, 8, MPI_INT, right, 24, 8, MPI_INT, MPI_SUM, win));
    MPI_Win_fence(0, win);
    for (int i = 0; i < 8; i++) {
        snprintf(label, sizeof label, "%s: fence: MPI_Get_c element %d", what, i);
        PLX_CHECK_EQ(got[i], initial(right, 8 + i), label);
        snprintf(label, sizeof label, "%s: fence: MPI_Get_accumulate_c fetched element %d", what, i);
        PLX_CHECK_EQ(res[i], initial(right, 24 + i), label);
        snprintf(label, sizeof label, "%s: fence: MPI_Put_c from rank %d, element %d", what, left, i);
        PLX_CHECK_EQ(mem[i], 100 * left + i, label);
        snprintf(label, sizeof label, "%s: fence: MPI_Accumulate_c from rank %d, element %d", what, left, i);
        PLX_CHECK_EQ(mem[16 + i], initial(rank, 16 + i) + 100 * left + i, label);
        snprintf(label, sizeof label, "%s: fence: MPI_Get_accumulate_c from rank %d, element %d", what, left, i);
        PLX_CHECK_EQ(mem[24 + i], initial(rank, 24 + i) + 100 * left + i, label);
    }
    MPI_Win_fence(MPI_MODE_NOSUCCEED, win);

    /* lock_all + request forms: rput a vector origin (every other int) into [32, 40),
     * rget [40, 48), raccumulate (MAX) [48, 56), rget_accumulate (REPLACE) [56, 64) */
    int vsrc[16];
    for (int i = 0; i < 16; i++)
        vsrc[i] = i % 2 ? -1 : 7000 + 10 * rank + i / 2;
    MPI_Datatype every_other;
    MPI_Type_vector(8, 1, 2, MPI_INT, &every_other);
    MPI_Type_commit(&every_other);
    MPI_Barrier(MPI_COMM_WORLD);
    PLX_CHECK_MPI(MPI_Win_lock_all(0, win));
    MPI_Request rq[4];
    int big[8];
    for (int i = 0; i < 8; i++)
        big[i] = INT_MAX - i;
    PLX_CHECK_MPI(MPI_Rput_c(vsrc, 1, every_other, right, 32, 8, MPI_INT, win, &rq[0]));
    PLX_CHECK_MPI(MPI_Rget_c(got, 8, MPI_INT, right, 40, 8, MPI_INT, win, &rq[1]));
    PLX_CHECK_MPI(MPI_Raccumulate_c(big, 8, MPI_INT, right, 48, 8, MPI_INT, MPI_MAX, win, &rq[2]));
    PLX_CHECK_MPI(MPI_Rget_accumulate_c(src, 8, MPI_INT, res, 8, MPI_INT, right, 56, 8, MPI_INT, MPI_REPLACE,
                                        win, &rq[3]));
    PLX_CHECK_MPI(MPI_Waitall(4, rq, MPI_STATUSES_IGNORE));
    for (int i = 0; i < 8; i++) {
        snprintf(label, sizeof label, "%s: lock_all: MPI_Rget_c element %d", what, i);
        PLX_CHECK_EQ(got[i], initial(right, 40 + i), label);
        snprintf(label, sizeof label, "%s: lock_all: MPI_Rget_accumulate_c fetched element %d", what, i);
        PLX_CHECK_EQ(res[i], initial(right, 56 + i), label);
    }
    /* flush_all and flush_local_all complete a get before the epoch ends, while the target
     * stays out of MPI for 100 ms (on the message path its answer must have arrived; these
     * calls once returned at once, MPI_PROC_NULL being -1) */
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 1) {
        struct timespec ts = { 0, 100 * 1000 * 1000 };
        nanosleep(&ts, NULL);
    }
    if (rank == 0) {
        int g2[8] = { 0 }, g3[8] = { 0 };
        PLX_CHECK_MPI(MPI_Get_c(g2, 8, MPI_INT, right, 8, 8, MPI_INT, win));
        PLX_CHECK_MPI(MPI_Win_flush_all(win));
        for (int i = 0; i < 8; i++) {
            snprintf(label, sizeof label, "%s: lock_all: MPI_Get_c completed by MPI_Win_flush_all, element %d",
                     what, i);
            PLX_CHECK_EQ(g2[i], initial(right, 8 + i), label);
        }
        PLX_CHECK_MPI(MPI_Get_c(g3, 8, MPI_INT, right, 40, 8, MPI_INT, win));
        PLX_CHECK_MPI(MPI_Win_flush_local_all(win));
        for (int i = 0; i < 8; i++) {
            snprintf(label, sizeof label,
                     "%s: lock_all: MPI_Get_c completed by MPI_Win_flush_local_all, element %d", what, i);
            PLX_CHECK_EQ(g3[i], initial(right, 40 + i), label);
        }
    }
    PLX_CHECK_MPI(MPI_Win_unlock_all(win));
    MPI_Barrier(MPI_COMM_WORLD);
    PLX_CHECK_MPI(MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, win));  /* to read our own memory in the unified model */
    for (int i = 0; i < 8; i++) {
        snprintf(label, sizeof label, "%s: lock_all: MPI_Rput_c (vector origin) from rank %d, element %d", what,
                 left, i);
        PLX_CHECK_EQ(mem[32 + i], 7000 + 10 * left + i, label);
        snprintf(label, sizeof label, "%s: lock_all: MPI_Raccumulate_c (MAX) element %d", what, i);
        PLX_CHECK_EQ(mem[48 + i], INT_MAX - i, label);
        snprintf(label, sizeof label, "%s: lock_all: MPI_Rget_accumulate_c (REPLACE) from rank %d, element %d",
                 what, left, i);
        PLX_CHECK_EQ(mem[56 + i], 100 * left + i, label);
    }
    PLX_CHECK_MPI(MPI_Win_unlock(rank, win));
    MPI_Type_free(&every_other);
    MPI_Barrier(MPI_COMM_WORLD);
}

/* Counts above INT_MAX and other bad counts, on a window of N ints. */
static void counts(MPI_Win win, int *mem)
{
    int right = (rank + 1) % size;
    MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
    for (int i = 0; i < N; i++)
        mem[i] = initial(rank, i);
    MPI_Datatype empty;
    MPI_Type_contiguous(0, MPI_INT, &empty);
    MPI_Type_commit(&empty);
    char one = 1;
    int x[4] = { 1, 2, 3, 4 }, r[4];
    MPI_Count huge = ((MPI_Count)1 << 32) + 8;     /* 4294967304: as an int, 8 */
    MPI_Count above = (MPI_Count)3 << 30;          /* 3221225472 > INT_MAX */
    MPI_Request rq;

    MPI_Win_fence(0, win);
    /* full width: 2^32 + 8 bytes are past the window */
    int rc = MPI_Put_c(&one, huge, MPI_BYTE, right, 0, huge, MPI_BYTE, win);
    PLX_CHECK_EQ(err_class(rc), MPI_ERR_RMA_RANGE, "MPI_Put_c of 2^32 + 8 bytes into 256 bytes: class");
    check_msg(rc, "MPI_Put_c(rank", "4294967304");
    rc = MPI_Get_c(r, huge, MPI_BYTE, right, 0, huge, MPI_BYTE, win);
    PLX_CHECK_EQ(err_class(rc), MPI_ERR_RMA_RANGE, "MPI_Get_c of 2^32 + 8 bytes from 256 bytes: class");
    check_msg(rc, "MPI_Get_c(rank", "4294967304");
    rc = MPI_Accumulate_c(x, huge, MPI_INT, right, 0, huge, MPI_INT, MPI_SUM, win);
    PLX_CHECK_EQ(err_class(rc), MPI_ERR_RMA_RANGE, "MPI_Accumulate_c of 2^32 + 8 ints: class");
    check_msg(rc, "MPI_Accumulate_c(rank", "target");
    /* accepted: above INT_MAX, no bytes */
    PLX_CHECK_MPI(MPI_Put_c(&one, above, empty, right, 0, above, empty, win));
    PLX_CHECK_MPI(MPI_Get_c(r, above, empty, right, 0, above, empty, win));
    PLX_CHECK_MPI(MPI_Accumulate_c(x, above, empty, right, 0, above, empty, MPI_SUM, win));
    /* negative counts and counts whose bytes overflow */
    rc = MPI_Put_c(x, -1, MPI_INT, right, 0, 1, MPI_INT, win);
    PLX_CHECK_EQ(err_class(rc), MPI_ERR_COUNT, "MPI_Put_c with origin_count -1: class");
    check_msg(rc, "MPI_Put_c(rank", "origin_count");
    rc = MPI_Get_accumulate_c(x, 1, MPI_INT, r, 1, MPI_INT, right, 0, -5, MPI_INT, MPI_SUM, win);
    PLX_CHECK_EQ(err_class(rc), MPI_ERR_COUNT, "MPI_Get_accumulate_c with target_count -5: class");
    check_msg(rc, "MPI_Get_accumulate_c(rank", "target_count");
    rc = MPI_Get_c(r, (MPI_Count)1 << 62, MPI_INT, right, 0, (MPI_Count)1 << 62, MPI_INT, win);
    PLX_CHECK_EQ(err_class(rc), MPI_ERR_COUNT, "MPI_Get_c of 2^62 ints: class");
    check_msg(rc, "MPI_Get_c(rank", "overflows");
    MPI_Win_fence(0, win);
    MPI_Win_lock_all(0, win);
    rc = MPI_Rget_c(r, huge, MPI_BYTE, right, 0, huge, MPI_BYTE, win, &rq);
    PLX_CHECK_EQ(err_class(rc), MPI_ERR_RMA_RANGE, "MPI_Rget_c of 2^32 + 8 bytes: class");
    check_msg(rc, "MPI_Rget_c(rank", "4294967304");
    PLX_CHECK_MPI(MPI_Rput_c(&one, above, empty, right, 0, above, empty, win, &rq));
    PLX_CHECK_MPI(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    rc = MPI_Rput_c(x, 1, MPI_INT, right, 0, 1, MPI_INT, win, NULL);
    PLX_CHECK_EQ(err_class(rc), MPI_ERR_ARG, "MPI_Rput_c with a NULL request: class");
    check_msg(rc, "MPI_Rput_c(rank", "request");
    MPI_Win_unlock_all(win);
    MPI_Barrier(MPI_COMM_WORLD);
    /* nothing above was written */
    MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, win);
    int same = 1;
    for (int i = 0; i < N; i++)
        same &= mem[i] == initial(rank, i);
    PLX_CHECK(same, "refused and empty operations left the window as it was");
    MPI_Win_unlock(rank, win);
    MPI_Type_free(&empty);
    MPI_Barrier(MPI_COMM_WORLD);
}

static void creation(void)
{
    char label[160];
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);

    /* allocate_c, with the attributes and the int form agreeing */
    int *mem;
    MPI_Win win;
    PLX_CHECK_MPI(MPI_Win_allocate_c((MPI_Aint)(N * sizeof(int)), (MPI_Aint)sizeof(int), MPI_INFO_NULL,
                                     MPI_COMM_WORLD, &mem, &win));
    int flag, *du;
    MPI_Aint *sz;
    void *b;
    MPI_Win_get_attr(win, MPI_WIN_DISP_UNIT, &du, &flag);
    PLX_CHECK(flag && *du == (int)sizeof(int), "MPI_Win_allocate_c: MPI_WIN_DISP_UNIT is %d", flag ? *du : -1);
    MPI_Win_get_attr(win, MPI_WIN_SIZE, &sz, &flag);
    PLX_CHECK(flag && *sz == (MPI_Aint)(N * sizeof(int)), "MPI_Win_allocate_c: MPI_WIN_SIZE");
    MPI_Win_get_attr(win, MPI_WIN_BASE, &b, &flag);
    PLX_CHECK(flag && b == mem, "MPI_Win_allocate_c: MPI_WIN_BASE is the base returned");
    ops(win, mem, "MPI_Win_allocate_c");
    counts(win, mem);
    PLX_CHECK_MPI(MPI_Win_free(&win));

    /* create_c over memory of our own */
    int *own = calloc(N, sizeof(int));
    PLX_CHECK_MPI(MPI_Win_create_c(own, (MPI_Aint)(N * sizeof(int)), (MPI_Aint)sizeof(int), MPI_INFO_NULL,
                                   MPI_COMM_WORLD, &win));
    ops(win, own, "MPI_Win_create_c");
    counts(win, own);
    PLX_CHECK_MPI(MPI_Win_free(&win));
    free(own);

    /* allocate_shared_c + shared_query_c, on the ranks of this node; each rank's disp_unit differs */
    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    int nrank, nsize;
    MPI_Comm_rank(node, &nrank);
    MPI_Comm_size(node, &nsize);
    long long *sh;
    PLX_CHECK_MPI(MPI_Win_allocate_shared_c((MPI_Aint)((nrank + 1) * 8 * sizeof(long long)),
                                            (MPI_Aint)(nrank + 1) * 8, MPI_INFO_NULL, node, &sh, &win));
    MPI_Win_lock_all(0, win);
    for (int i = 0; i < 8 * (nrank + 1); i++)
        sh[i] = 10000LL * nrank + i;
    MPI_Win_sync(win);
    MPI_Barrier(node);
    MPI_Win_sync(win);
    for (int r = 0; r < nsize; r++) {
        MPI_Aint qsz = -1, qdu = -1;
        int idu = -1;
        MPI_Aint isz = -1;
        long long *qb = NULL, *ib = NULL;
        PLX_CHECK_MPI(MPI_Win_shared_query_c(win, r, &qsz, &qdu, &qb));
        PLX_CHECK_MPI(MPI_Win_shared_query(win, r, &isz, &idu, &ib));
        snprintf(label, sizeof label, "MPI_Win_shared_query_c of node rank %d: size", r);
        PLX_CHECK_EQ(qsz, (r + 1) * 8 * (long long)sizeof(long long), label);
        snprintf(label, sizeof label, "MPI_Win_shared_query_c of node rank %d: disp_unit", r);
        PLX_CHECK_EQ(qdu, (r + 1) * 8, label);
        PLX_CHECK(qb == ib && isz == qsz && idu == qdu, "MPI_Win_shared_query and _c agree on node rank %d", r);
        int ok = qb != NULL;
        for (int i = 0; ok && i < 8 * (r + 1); i++)
            ok = qb[i] == 10000LL * r + i;
        PLX_CHECK(ok, "node rank %d's shared memory read by load through MPI_Win_shared_query_c's base", r);
    }
    MPI_Aint qsz, qdu;
    void *qb;
    MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
    int rc = MPI_Win_shared_query_c(win, nsize, &qsz, &qdu, &qb);
    PLX_CHECK_EQ(err_class(rc), MPI_ERR_RANK, "MPI_Win_shared_query_c of a rank past the window: class");
    check_msg(rc, "MPI_Win_shared_query_c(rank", "rank");
    rc = MPI_Win_shared_query_c(win, 0, &qsz, NULL, &qb);
    PLX_CHECK_EQ(err_class(rc), MPI_ERR_ARG, "MPI_Win_shared_query_c with a NULL disp_unit: class");
    check_msg(rc, "MPI_Win_shared_query_c(rank", "disp_unit");
    MPI_Win_unlock_all(win);
    PLX_CHECK_MPI(MPI_Win_free(&win));
    MPI_Comm_free(&node);

    /* a displacement unit an int cannot hold */
    rc = MPI_Win_allocate_c(64, (MPI_Aint)INT_MAX + 1, MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win);
    PLX_CHECK_EQ(err_class(rc), MPI_ERR_DISP, "MPI_Win_allocate_c with disp_unit 2^31: class");
    check_msg(rc, "MPI_Win_allocate_c(rank", "disp_unit");
    rc = MPI_Win_create_c(NULL, 0, 0, MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    PLX_CHECK_EQ(err_class(rc), MPI_ERR_DISP, "MPI_Win_create_c with disp_unit 0: class");
    check_msg(rc, "MPI_Win_create_c(rank", "disp_unit");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

/* 2^31 + 24 bytes (above INT_MAX) each way between rank 0 and rank 1's window */
static void big(void)
{
    const MPI_Count n = ((MPI_Count)1 << 31) + 24;
    char *mem, *buf = malloc((size_t)n);
    MPI_Win win;
    PLX_CHECK(buf != NULL, "malloc of 2^31 + 24 bytes");
    PLX_CHECK_MPI(MPI_Win_allocate_c(rank == 1 ? (MPI_Aint)n : 0, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
    if (rank == 1)
        plx_fill(mem, (size_t)n, 11);
    else
        memset(buf, 0, (size_t)n);
    MPI_Win_fence(0, win);
    if (rank == 0)
        PLX_CHECK_MPI(MPI_Get_c(buf, n, MPI_BYTE, 1, 0, n, MPI_BYTE, win));
    MPI_Win_fence(0, win);
    if (rank == 0) {
        PLX_CHECK_PATTERN(buf, (size_t)n, 11, "MPI_Get_c of 2^31 + 24 bytes");
        plx_fill(buf, (size_t)n, 12);
        PLX_CHECK_MPI(MPI_Put_c(buf, n, MPI_BYTE, 1, 0, n, MPI_BYTE, win));
    }
    MPI_Win_fence(0, win);
    if (rank == 1)
        PLX_CHECK_PATTERN(mem, (size_t)n, 12, "MPI_Put_c of 2^31 + 24 bytes");
    MPI_Win_fence(MPI_MODE_NOSUCCEED, win);
    PLX_CHECK_MPI(MPI_Win_free(&win));
    free(buf);
}

int main(int argc, char **argv)
{
    plx_test_init(&argc, &argv, "rma_large_count");
    rank = plx_test_state()->rank;
    size = plx_test_state()->size;
    int want_big = 0;
    for (int i = 1; i < argc; i++)
        want_big |= !strcmp(argv[i], "--big");
    if (want_big) {
        if (size != 2)
            PLX_CHECK(0, "--big needs 2 ranks");
        else
            big();
    } else {
        creation();
    }
    return plx_test_finish();
}
