/*
 * coll_create_group.c - MPI_Comm_create_group with every kind of tag, among
 * the library's own traffic on the parent's collective context.
 *
 * Plexus used tags 0x7ff0 and 0x7fef for its internal collectives (context-id
 * agreement, shared-segment set-up) on the same context as create_group's
 * user tag, so a user tag equal to one of them could match library traffic.
 * Internal tags are now negative; this test runs create_group with those two
 * values, 0, 1 and MPI_TAG_UB, over several groups (all, evens, reversed,
 * first half), interleaved with Comm_dup (context agreement on the parent),
 * a fresh communicator's shared-segment set-up (its third collective) and a
 * pending nonblocking collective on the parent, and checks that every new
 * communicator has the right size, rank order and working traffic.
 *
 * Then two groups one after the other with one tag, {0,1} and {0,2}: rank 2
 * is not in the first, so it may start the second while rank 0 is still in
 * the first, and its messages must not be taken for rank 1's (rank 1 holds
 * back a little to make that likely). --thread-multiple runs it all under
 * MPI_THREAD_MULTIPLE (the agreement's second round).
 */
#include "plx_test.h"

static int rank, size;

/* Checks that c holds the world ranks members[0..n-1] in that order. */
static void check_comm(MPI_Comm c, const int *members, int n, const char *what, int tag)
{
    int me = -1;
    for (int i = 0; i < n; i++)
        if (members[i] == rank)
            me = i;
    if (me < 0) {
        PLX_CHECK(c == MPI_COMM_NULL, "%s (tag 0x%x): non-member gets MPI_COMM_NULL", what, tag);
        return;
    }
    int csize = -1, crank = -1;
    PLX_CHECK_MPI(MPI_Comm_size(c, &csize));
    PLX_CHECK_MPI(MPI_Comm_rank(c, &crank));
    PLX_CHECK(csize == n && crank == me, "%s (tag 0x%x): size %d rank %d, expected %d %d", what, tag, csize, crank,
              n, me);
    /* Allgather of world ranks gives the member list in order. */
    int *got = plx_malloc((size_t)n * sizeof *got);
    PLX_CHECK_MPI(MPI_Allgather(&rank, 1, MPI_INT, got, 1, MPI_INT, c));
    for (int i = 0; i < n; i++)
        PLX_CHECK(got[i] == members[i], "%s (tag 0x%x): member %d is world rank %d, expected %d", what, tag, i,
                  got[i], members[i]);
    free(got);
    /* Ring shift with the user's own tag on the new communicator. */
    int right = (me + 1) % n, left = (me + n - 1) % n, from = -1;
    PLX_CHECK_MPI(MPI_Sendrecv(&rank, 1, MPI_INT, right, tag, &from, 1, MPI_INT, left, tag, c, MPI_STATUS_IGNORE));
    PLX_CHECK_EQ(from, members[left], "ring shift on the new communicator");
}

static void one(MPI_Comm parent, const int *members, int n, int tag, const char *what)
{
    MPI_Group pg, g;
    MPI_Comm c = MPI_COMM_NULL;
    int in = 0;
    for (int i = 0; i < n; i++)
        in |= members[i] == rank;
    PLX_CHECK_MPI(MPI_Comm_group(parent, &pg));
    PLX_CHECK_MPI(MPI_Group_incl(pg, n, members, &g));
    if (in)
        PLX_CHECK_MPI(MPI_Comm_create_group(parent, g, tag, &c));
    check_comm(c, members, n, what, tag);
    if (c != MPI_COMM_NULL)
        PLX_CHECK_MPI(MPI_Comm_free(&c));
    PLX_CHECK_MPI(MPI_Group_free(&g));
    PLX_CHECK_MPI(MPI_Group_free(&pg));
}

int main(int argc, char **argv)
{
    int multiple = argc > 1 && strcmp(argv[1], "--thread-multiple") == 0;
    if (multiple) {
        int provided = 0;
        if (MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided) != MPI_SUCCESS)
            plx_test_fail(__FILE__, __LINE__, "MPI_Init_thread failed");
        plx_test_begin("coll_create_group");
        PLX_CHECK_EQ(provided, MPI_THREAD_MULTIPLE, "MPI_THREAD_MULTIPLE provided");
    } else {
        plx_test_init(&argc, &argv, "coll_create_group");
    }
    rank = plx_test_state()->rank;
    size = plx_test_state()->size;

    int *tag_ub, flag = 0;
    PLX_CHECK_MPI(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &tag_ub, &flag));
    PLX_CHECK_EQ(flag, 1, "MPI_TAG_UB is set");
    const int tags[] = {0x7ff0, 0x7fef, 0, 1, *tag_ub};
    const int ntags = (int)(sizeof tags / sizeof tags[0]);

    int *all = plx_malloc((size_t)size * sizeof *all), *evens = plx_malloc((size_t)size * sizeof *evens);
    int *rev = plx_malloc((size_t)size * sizeof *rev);
    int ne = 0;
    for (int i = 0; i < size; i++) {
        all[i] = i;
        rev[i] = size - 1 - i;
        if (i % 2 == 0)
            evens[ne++] = i;
    }
    int half = size > 1 ? size / 2 : 1;

    for (int t = 0; t < ntags; t++) {
        int tag = tags[t];
        one(MPI_COMM_WORLD, all, size, tag, "all ranks");
        one(MPI_COMM_WORLD, evens, ne, tag, "even ranks");
        one(MPI_COMM_WORLD, rev, size, tag, "reversed");
        one(MPI_COMM_WORLD, all, half, tag, "first half");

        /* A fresh parent: its context agreement, then create_group before,
         * during (third collective = shared-segment set-up) and after. */
        MPI_Comm dup;
        PLX_CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
        one(dup, all, size, tag, "on a dup, first call");
        PLX_CHECK_MPI(MPI_Barrier(dup));
        one(dup, rev, size, tag, "on a dup, after one barrier");
        PLX_CHECK_MPI(MPI_Barrier(dup));
        PLX_CHECK_MPI(MPI_Barrier(dup));
        one(dup, evens, ne, tag, "on a dup, after its segment set-up");

        /* With a nonblocking collective pending on the parent. */
        MPI_Request req;
        int x = rank + 1, sum = 0;
        PLX_CHECK_MPI(MPI_Iallreduce(&x, &sum, 1, MPI_INT, MPI_SUM, dup, &req));
        one(dup, all, size, tag, "with an Iallreduce pending on the parent");
        PLX_CHECK_MPI(MPI_Wait(&req, MPI_STATUS_IGNORE));
        PLX_CHECK_EQ(sum, size * (size + 1) / 2, "the pending Iallreduce's result");
        PLX_CHECK_MPI(MPI_Comm_free(&dup));

        if (size >= 3)
            for (int i = 0; i < 10; i++) {
                const int p01[] = {0, 1}, p02[] = {0, 2};
                if (rank == 1 && i % 2 == 0) {
                    struct timespec ts = {0, 20 * 1000 * 1000};
                    nanosleep(&ts, NULL);
                }
                one(MPI_COMM_WORLD, p01, 2, tag, "pair 0-1, then 0-2 with the same tag");
                one(MPI_COMM_WORLD, p02, 2, tag, "pair 0-2, after 0-1 with the same tag");
            }
    }
    free(all);
    free(evens);
    free(rev);
    return plx_test_finish();
}
