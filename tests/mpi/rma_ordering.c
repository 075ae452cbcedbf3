/*
 * The default accumulate ordering (MPI 4.1 12.7.2 "accumulate_ordering":
 * rar,raw,war,waw): accumulates of one origin to one target location are
 * applied in the order issued, with no flush between them.
 *  - waw: 400 MPI_Accumulate(MPI_REPLACE) of 1..400 to one int, then an
 *    MPI_Fetch_and_op(MPI_NO_OP) in the same epoch reads 400 (raw: the read
 *    follows every write);
 *  - raw/war: every 40th step an MPI_Get_accumulate(MPI_NO_OP) in between
 *    reads exactly the value just written, and a following replace does not
 *    change what it fetched (war);
 *  - with "accumulate_ordering" = "none" the same sequence ends at 400 after
 *    a flush (the value only; no order is promised), and MPI_Win_get_info
 *    reports the key as set, an invalid value leaves it as it was.
 * Every rank is an origin to its right-hand neighbour and a target of its
 * left-hand one, in one lock_all epoch; run on shared memory, by messages
 * and over TCP (one and two rails).
 */
#include "plx_test.h"

#define STEPS 400

static void sequence(MPI_Win win, int rank, int size, int check_order, const char *what)
{
    int right = (rank + 1) % size;
    char label[160];
    PLX_CHECK_MPI(MPI_Win_lock_all(0, win));
    for (int i = 1; i <= STEPS; i++) {
        PLX_CHECK_MPI(MPI_Accumulate(&i, 1, MPI_INT, right, 0, 1, MPI_INT, MPI_REPLACE, win));
        if (check_order && i % 40 == 0) {
            int got = -1, dummy = 0, next = -7;
            PLX_CHECK_MPI(MPI_Get_accumulate(&dummy, 0, MPI_INT, &got, 1, MPI_INT, right, 0, 1, MPI_INT,
                                             MPI_NO_OP, win));
            /* war: this replace comes after the read above */
            PLX_CHECK_MPI(MPI_Accumulate(&next, 1, MPI_INT, right, 0, 1, MPI_INT, MPI_REPLACE, win));
            PLX_CHECK_MPI(MPI_Win_flush(right, win));
            snprintf(label, sizeof label, "%s: value read after replace #%d, no flush between", what, i);
            PLX_CHECK_EQ(got, i, label);
            PLX_CHECK_MPI(MPI_Accumulate(&i, 1, MPI_INT, right, 0, 1, MPI_INT, MPI_REPLACE, win));
        }
    }
    int zero = 0, last = -1;
    if (!check_order)
        PLX_CHECK_MPI(MPI_Win_flush(right, win));
    PLX_CHECK_MPI(MPI_Fetch_and_op(&zero, &last, MPI_INT, right, 0, MPI_NO_OP, win));
    PLX_CHECK_MPI(MPI_Win_flush(right, win));
    snprintf(label, sizeof label, "%s: value after %d replaces", what, STEPS);
    PLX_CHECK_EQ(last, STEPS, label);
    PLX_CHECK_MPI(MPI_Win_unlock_all(win));
    MPI_Barrier(MPI_COMM_WORLD);
}

/* Sets accumulate_ordering to `value` on win; MPI_Win_get_info must then report `expect`. */
static void set_ordering(MPI_Win win, MPI_Info info, const char *value, const char *expect, const char *what)
{
    MPI_Info used;
    char v[MPI_MAX_INFO_VAL + 1];
    int flag = 0;
    MPI_Info_set(info, "accumulate_ordering", value);
    MPI_Win_set_info(win, info);
    MPI_Win_get_info(win, &used);
    MPI_Info_get(used, "accumulate_ordering", MPI_MAX_INFO_VAL, v, &flag);
    PLX_CHECK(flag && !strcmp(v, expect), "%s (got \"%s\", expected \"%s\")", what, flag ? v : "", expect);
    MPI_Info_free(&used);
}

int main(int argc, char **argv)
{
    plx_test_init(&argc, &argv, "rma_ordering");
    int rank = plx_test_state()->rank, size = plx_test_state()->size;
    int *mem;
    MPI_Win win;

    /* the default: every ordering, on an allocated and a created window */
    PLX_CHECK_MPI(MPI_Win_allocate(sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
    sequence(win, rank, size, 1, "allocate, default ordering");
    MPI_Win_free(&win);
    int own = 0;
    PLX_CHECK_MPI(MPI_Win_create(&own, sizeof own, sizeof own, MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    sequence(win, rank, size, 1, "create, default ordering");
    MPI_Win_free(&win);

    /* accumulate_ordering=none: the value after a flush */
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "accumulate_ordering", "none");
    PLX_CHECK_MPI(MPI_Win_allocate(sizeof(int), sizeof(int), info, MPI_COMM_WORLD, &mem, &win));
    MPI_Info used;
    char v[MPI_MAX_INFO_VAL + 1];
    int flag = 0;
    MPI_Win_get_info(win, &used);
    MPI_Info_get(used, "accumulate_ordering", MPI_MAX_INFO_VAL, v, &flag);
    PLX_CHECK(flag && !strcmp(v, "none"), "accumulate_ordering reported as set (got \"%s\")", flag ? v : "");
    MPI_Info_free(&used);
    sequence(win, rank, size, 0, "allocate, accumulate_ordering=none");
    if (plx_lib_is("Plexus")) {
        /* a value that is not a list of rar, raw, war, waw (or none) is ignored */
        set_ordering(win, info, "raw,sideways", "none", "an invalid accumulate_ordering is ignored");
        set_ordering(win, info, "waw, raw", "waw, raw", "a valid accumulate_ordering is taken");
    }
    MPI_Info_free(&info);
    MPI_Win_free(&win);
    return plx_test_finish();
}
