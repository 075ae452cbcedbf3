/*
 * comm.c - communicator management.
 *
 * Comm_dup/dup_with_info/split/split_type/create/create_group/free, Comm_compare
 * (IDENT, CONGRUENT, SIMILAR, UNEQUAL), names, Comm_test_inter, and context
 * isolation: a message on a duplicate never matches a receive on its parent.
 */
#include "plx_test.h"

static int rank, size;

/* The world ranks of comm's members, in comm rank order, via Group_translate_ranks. */
static void world_ranks_of(MPI_Comm comm, int *out)
{
    MPI_Group g, wg;
    int n, *idx;

    MPI_Comm_size(comm, &n);
    idx = plx_malloc(sizeof(int) * (size_t)n);
    for (int i = 0; i < n; i++)
        idx[i] = i;
    PLX_CHECK_MPI(MPI_Comm_group(comm, &g));
    PLX_CHECK_MPI(MPI_Comm_group(MPI_COMM_WORLD, &wg));
    PLX_CHECK_MPI(MPI_Group_translate_ranks(g, n, idx, wg, out));
    MPI_Group_free(&g);
    MPI_Group_free(&wg);
    free(idx);
}

/* A communicator works: ring exchange plus an Allreduce of world ranks. */
static void check_comm_works(MPI_Comm comm, const char *what)
{
    int r, n, right, left, out, in = -1, sum = 0, mine;
    int *members;

    MPI_Comm_rank(comm, &r);
    MPI_Comm_size(comm, &n);
    right = (r + 1) % n;
    left = (r + n - 1) % n;
    out = r * 1000 + 7;
    PLX_CHECK_MPI(MPI_Sendrecv(&out, 1, MPI_INT, right, 3, &in, 1, MPI_INT, left, 3, comm,
                               MPI_STATUS_IGNORE));
    PLX_CHECK(in == left * 1000 + 7, "%s: ring value from left %d (got %d)", what, left, in);
    mine = rank;
    PLX_CHECK_MPI(MPI_Allreduce(&mine, &sum, 1, MPI_INT, MPI_SUM, comm));
    members = plx_malloc(sizeof(int) * (size_t)n);
    world_ranks_of(comm, members);
    {
        int expect = 0;
        for (int i = 0; i < n; i++)
            expect += members[i];
        PLX_CHECK(sum == expect, "%s: Allreduce of world ranks (got %d, expected %d)", what, sum,
                  expect);
    }
    free(members);
}

static void check_compare(MPI_Comm a, MPI_Comm b, int expect, const char *what)
{
    int result = -1;
    PLX_CHECK_MPI(MPI_Comm_compare(a, b, &result));
    PLX_CHECK_EQ(result, expect, what);
}

static void test_dup_compare(void)
{
    MPI_Comm dup, dup2, rev, info_dup;
    MPI_Info info;
    int r = -1, n = -1, flag = -1;

    PLX_CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    PLX_CHECK(dup != MPI_COMM_WORLD && dup != MPI_COMM_NULL, "Comm_dup gives a new handle");
    MPI_Comm_rank(dup, &r);
    MPI_Comm_size(dup, &n);
    PLX_CHECK_EQ(r, rank, "rank in dup of WORLD");
    PLX_CHECK_EQ(n, size, "size of dup of WORLD");
    check_compare(MPI_COMM_WORLD, MPI_COMM_WORLD, MPI_IDENT, "compare(WORLD, WORLD)");
    check_compare(dup, dup, MPI_IDENT, "compare(dup, dup)");
    check_compare(MPI_COMM_WORLD, dup, MPI_CONGRUENT, "compare(WORLD, dup)");
    PLX_CHECK_MPI(MPI_Comm_dup(dup, &dup2));
    check_compare(dup, dup2, MPI_CONGRUENT, "compare(dup, dup of dup)");
    check_comm_works(dup2, "dup of dup");

    /* Same members, reversed order: SIMILAR (CONGRUENT when there is one rank). */
    PLX_CHECK_MPI(MPI_Comm_split(MPI_COMM_WORLD, 0, size - rank, &rev));
    MPI_Comm_rank(rev, &r);
    PLX_CHECK_EQ(r, size - 1 - rank, "rank in reversed split");
    check_compare(MPI_COMM_WORLD, rev, size > 1 ? MPI_SIMILAR : MPI_CONGRUENT,
                  "compare(WORLD, reversed split)");
    check_comm_works(rev, "reversed split");

    check_compare(MPI_COMM_SELF, MPI_COMM_WORLD, size > 1 ? MPI_UNEQUAL : MPI_CONGRUENT,
                  "compare(SELF, WORLD)");
    check_compare(MPI_COMM_SELF, MPI_COMM_SELF, MPI_IDENT, "compare(SELF, SELF)");

    PLX_CHECK_MPI(MPI_Comm_test_inter(dup, &flag));
    PLX_CHECK_EQ(flag, 0, "Comm_test_inter on an intracommunicator");

    PLX_CHECK_MPI(MPI_Info_create(&info));
    PLX_CHECK_MPI(MPI_Info_set(info, "plexus_test_hint", "true"));
    PLX_CHECK_MPI(MPI_Comm_dup_with_info(MPI_COMM_WORLD, info, &info_dup));
    PLX_CHECK_MPI(MPI_Info_free(&info));
    check_compare(MPI_COMM_WORLD, info_dup, MPI_CONGRUENT, "compare(WORLD, dup_with_info)");
    check_comm_works(info_dup, "dup_with_info");

    PLX_CHECK_MPI(MPI_Comm_free(&info_dup));
    PLX_CHECK(info_dup == MPI_COMM_NULL, "Comm_free sets the handle to MPI_COMM_NULL");
    PLX_CHECK_MPI(MPI_Comm_free(&rev));
    PLX_CHECK_MPI(MPI_Comm_free(&dup2));
    /* The parent still works after its dup is freed, and vice versa. */
    check_comm_works(dup, "dup after freeing its dup");
    PLX_CHECK_MPI(MPI_Comm_free(&dup));
    check_comm_works(MPI_COMM_WORLD, "WORLD after freeing dups");
}

static void test_split(void)
{
    MPI_Comm c;
    int color = rank % 3, r = -1, n = -1, expect_n = 0, expect_r = 0;
    int *members;

    /* key = -rank: reverse order inside each color. */
    PLX_CHECK_MPI(MPI_Comm_split(MPI_COMM_WORLD, color, -rank, &c));
    for (int i = 0; i < size; i++)
        if (i % 3 == color) {
            expect_n++;
            if (i > rank)
                expect_r++;
        }
    MPI_Comm_size(c, &n);
    MPI_Comm_rank(c, &r);
    PLX_CHECK_EQ(n, expect_n, "split by rank%3: size");
    PLX_CHECK_EQ(r, expect_r, "split by rank%3, key -rank: rank");
    members = plx_malloc(sizeof(int) * (size_t)n);
    world_ranks_of(c, members);
    for (int i = 0; i < n; i++)
        PLX_CHECK(members[i] % 3 == color && (i == 0 || members[i] < members[i - 1]),
                  "split member %d is world rank %d (color %d, descending)", i, members[i], color);
    free(members);
    check_comm_works(c, "split rank%3");
    check_compare(MPI_COMM_WORLD, c, size > 1 ? MPI_UNEQUAL : MPI_CONGRUENT,
                  "compare(WORLD, split by rank%3)");
    PLX_CHECK_MPI(MPI_Comm_free(&c));

    /* Equal keys: ordered by parent rank. Last rank opts out with MPI_UNDEFINED. */
    PLX_CHECK_MPI(MPI_Comm_split(MPI_COMM_WORLD, rank == size - 1 ? MPI_UNDEFINED : 5, 42, &c));
    if (rank == size - 1) {
        PLX_CHECK(c == MPI_COMM_NULL, "split with MPI_UNDEFINED gives MPI_COMM_NULL");
    } else {
        MPI_Comm_size(c, &n);
        MPI_Comm_rank(c, &r);
        PLX_CHECK_EQ(n, size - 1, "split without last rank: size");
        PLX_CHECK_EQ(r, rank, "split with equal keys keeps parent order");
        check_comm_works(c, "split without last rank");
        PLX_CHECK_MPI(MPI_Comm_free(&c));
    }

    /* Splitting a split: halves of the odd/even communicator. */
    {
        MPI_Comm parity, quarter;
        int pr, pn, qn = -1, qr = -1;
        PLX_CHECK_MPI(MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &parity));
        MPI_Comm_rank(parity, &pr);
        MPI_Comm_size(parity, &pn);
        PLX_CHECK_EQ(pr, rank / 2, "rank in parity split");
        PLX_CHECK_MPI(MPI_Comm_split(parity, pr < pn / 2, pr, &quarter));
        MPI_Comm_size(quarter, &qn);
        MPI_Comm_rank(quarter, &qr);
        PLX_CHECK_EQ(qn, pr < pn / 2 ? pn / 2 : pn - pn / 2, "size of split of split");
        PLX_CHECK_EQ(qr, pr < pn / 2 ? pr : pr - pn / 2, "rank in split of split");
        check_comm_works(quarter, "split of split");
        PLX_CHECK_MPI(MPI_Comm_free(&quarter));
        PLX_CHECK_MPI(MPI_Comm_free(&parity));
    }
}

static void test_split_type(void)
{
    MPI_Comm node, none;
    int nr = -1, nn = -1, total = 0, leaders = 0, is_leader;
    int *members;

    PLX_CHECK_MPI(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node));
    PLX_CHECK(node != MPI_COMM_NULL, "split_type SHARED gives a communicator");
    MPI_Comm_rank(node, &nr);
    MPI_Comm_size(node, &nn);
    PLX_CHECK(nn >= 1 && nn <= size && nr >= 0 && nr < nn, "shared comm rank %d size %d", nr, nn);
    members = plx_malloc(sizeof(int) * (size_t)nn);
    world_ranks_of(node, members);
    PLX_CHECK_EQ(members[nr], rank, "my world rank in the shared comm");
    for (int i = 1; i < nn; i++)
        PLX_CHECK(members[i] > members[i - 1], "shared comm ordered by key (world rank)");
    free(members);
    /* The node communicators partition WORLD: their leaders' sizes add up. */
    is_leader = nr == 0;
    PLX_CHECK_MPI(MPI_Allreduce(&is_leader, &leaders, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    {
        int contrib = is_leader ? nn : 0;
        PLX_CHECK_MPI(MPI_Allreduce(&contrib, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    }
    PLX_CHECK_EQ(total, size, "shared communicators partition WORLD");
    PLX_CHECK(leaders >= 1 && leaders <= size, "number of nodes %d", leaders);
    check_comm_works(node, "split_type SHARED");
    PLX_CHECK_MPI(MPI_Comm_free(&node));

    PLX_CHECK_MPI(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_UNDEFINED, rank, MPI_INFO_NULL, &none));
    PLX_CHECK(none == MPI_COMM_NULL, "split_type MPI_UNDEFINED gives MPI_COMM_NULL");
}

static void test_create(void)
{
    MPI_Group wg, evens, firsthalf;
    MPI_Comm c;
    int range[1][3] = {{0, size - 1, 2}}, n = -1, r = -1, half = (size + 1) / 2;

    PLX_CHECK_MPI(MPI_Comm_group(MPI_COMM_WORLD, &wg));
    PLX_CHECK_MPI(MPI_Group_range_incl(wg, 1, range, &evens));

    /* Comm_create: collective over WORLD, non-members get MPI_COMM_NULL. */
    PLX_CHECK_MPI(MPI_Comm_create(MPI_COMM_WORLD, evens, &c));
    if (rank % 2) {
        PLX_CHECK(c == MPI_COMM_NULL, "Comm_create: non-member gets MPI_COMM_NULL");
    } else {
        MPI_Comm_size(c, &n);
        MPI_Comm_rank(c, &r);
        PLX_CHECK_EQ(n, (size + 1) / 2, "Comm_create evens: size");
        PLX_CHECK_EQ(r, rank / 2, "Comm_create evens: rank");
        check_comm_works(c, "Comm_create evens");
        {
            MPI_Group cg;
            int res = -1;
            PLX_CHECK_MPI(MPI_Comm_group(c, &cg));
            PLX_CHECK_MPI(MPI_Group_compare(cg, evens, &res));
            PLX_CHECK_EQ(res, MPI_IDENT, "group of created comm IDENT to the group given");
            MPI_Group_free(&cg);
        }
        PLX_CHECK_MPI(MPI_Comm_free(&c));
    }

    /* Comm_create with the full group gives a CONGRUENT communicator. */
    PLX_CHECK_MPI(MPI_Comm_create(MPI_COMM_WORLD, wg, &c));
    check_compare(MPI_COMM_WORLD, c, MPI_CONGRUENT, "compare(WORLD, Comm_create(world group))");
    PLX_CHECK_MPI(MPI_Comm_free(&c));

    /* Comm_create_group: only members call it. */
    {
        int r0[1][3] = {{0, half - 1, 1}};
        PLX_CHECK_MPI(MPI_Group_range_incl(wg, 1, r0, &firsthalf));
    }
    if (rank < half) {
        PLX_CHECK_MPI(MPI_Comm_create_group(MPI_COMM_WORLD, firsthalf, 77, &c));
        MPI_Comm_size(c, &n);
        MPI_Comm_rank(c, &r);
        PLX_CHECK_EQ(n, half, "Comm_create_group first half: size");
        PLX_CHECK_EQ(r, rank, "Comm_create_group first half: rank");
        check_comm_works(c, "Comm_create_group");
        PLX_CHECK_MPI(MPI_Comm_free(&c));
    }
    /* The second half, concurrently, with its own group and the same tag. */
    if (rank >= half) {
        MPI_Group second;
        int r1[1][3] = {{half, size - 1, 1}};
        PLX_CHECK_MPI(MPI_Group_range_incl(wg, 1, r1, &second));
        PLX_CHECK_MPI(MPI_Comm_create_group(MPI_COMM_WORLD, second, 77, &c));
        MPI_Comm_rank(c, &r);
        PLX_CHECK_EQ(r, rank - half, "Comm_create_group second half: rank");
        check_comm_works(c, "Comm_create_group second half");
        PLX_CHECK_MPI(MPI_Comm_free(&c));
        MPI_Group_free(&second);
    }
    MPI_Group_free(&firsthalf);
    MPI_Group_free(&evens);
    MPI_Group_free(&wg);
}

static void test_names(void)
{
    char name[MPI_MAX_OBJECT_NAME];
    int len = -1;
    MPI_Comm dup;

    PLX_CHECK_MPI(MPI_Comm_get_name(MPI_COMM_WORLD, name, &len));
    PLX_CHECK_STR(name, "MPI_COMM_WORLD", "default name of MPI_COMM_WORLD");
    PLX_CHECK_EQ(len, strlen("MPI_COMM_WORLD"), "name length of MPI_COMM_WORLD");
    PLX_CHECK_MPI(MPI_Comm_get_name(MPI_COMM_SELF, name, &len));
    PLX_CHECK_STR(name, "MPI_COMM_SELF", "default name of MPI_COMM_SELF");

    PLX_CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    PLX_CHECK_MPI(MPI_Comm_set_name(dup, "plexus dup"));
    PLX_CHECK_MPI(MPI_Comm_get_name(dup, name, &len));
    PLX_CHECK_STR(name, "plexus dup", "name set on a dup");
    PLX_CHECK_EQ(len, 10, "length of name set on a dup");
    PLX_CHECK_MPI(MPI_Comm_set_name(dup, "renamed"));
    PLX_CHECK_MPI(MPI_Comm_get_name(dup, name, &len));
    PLX_CHECK_STR(name, "renamed", "name replaced");
    PLX_CHECK_MPI(MPI_Comm_get_name(MPI_COMM_WORLD, name, &len));
    PLX_CHECK_STR(name, "MPI_COMM_WORLD", "naming a dup leaves WORLD's name");
    PLX_CHECK_MPI(MPI_Comm_free(&dup));

    {
        MPI_Comm c;
        PLX_CHECK_MPI(MPI_Comm_split(MPI_COMM_WORLD, 0, rank, &c));
        memset(name, 'x', sizeof name);
        PLX_CHECK_MPI(MPI_Comm_get_name(c, name, &len));
        PLX_CHECK_EQ(len, 0, "unnamed communicator: name length 0");
        PLX_CHECK_STR(name, "", "unnamed communicator: empty name");
        PLX_CHECK_MPI(MPI_Comm_free(&c));
    }

    /* WORLD can be renamed (and renamed back). */
    PLX_CHECK_MPI(MPI_Comm_set_name(MPI_COMM_WORLD, "my world"));
    PLX_CHECK_MPI(MPI_Comm_get_name(MPI_COMM_WORLD, name, &len));
    PLX_CHECK_STR(name, "my world", "renamed MPI_COMM_WORLD");
    PLX_CHECK_MPI(MPI_Comm_set_name(MPI_COMM_WORLD, "MPI_COMM_WORLD"));
}

/* Same source, same tag, different communicators: no cross-matching. */
static void test_isolation(void)
{
    MPI_Comm dup, dup2;
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    int a = 100 + rank, b = 200 + rank, c = 300 + rank, got[3] = {-1, -1, -1};
    MPI_Request sreq[3], rreq[3];
    MPI_Status st[3];

    PLX_CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    PLX_CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &dup2));
    /* Sent WORLD first, then dup, then dup2: receives posted in the opposite order
     * with MPI_ANY_SOURCE must still each get their own communicator's message. */
    PLX_CHECK_MPI(MPI_Isend(&a, 1, MPI_INT, right, 9, MPI_COMM_WORLD, &sreq[0]));
    PLX_CHECK_MPI(MPI_Isend(&b, 1, MPI_INT, right, 9, dup, &sreq[1]));
    PLX_CHECK_MPI(MPI_Isend(&c, 1, MPI_INT, right, 9, dup2, &sreq[2]));
    PLX_CHECK_MPI(MPI_Irecv(&got[2], 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, dup2, &rreq[2]));
    PLX_CHECK_MPI(MPI_Irecv(&got[1], 1, MPI_INT, MPI_ANY_SOURCE, 9, dup, &rreq[1]));
    PLX_CHECK_MPI(MPI_Irecv(&got[0], 1, MPI_INT, left, 9, MPI_COMM_WORLD, &rreq[0]));
    PLX_CHECK_MPI(MPI_Waitall(3, rreq, st));
    PLX_CHECK_MPI(MPI_Waitall(3, sreq, MPI_STATUSES_IGNORE));
    PLX_CHECK_EQ(got[0], 100 + left, "WORLD message received on WORLD");
    PLX_CHECK_EQ(got[1], 200 + left, "dup message received on dup");
    PLX_CHECK_EQ(got[2], 300 + left, "dup2 message received on dup2");
    for (int i = 0; i < 3; i++)
        PLX_CHECK_STATUS(st[i], left, 9, sizeof(int));

    /* Blocking receive on the dup first, while the WORLD message is already there. */
    PLX_CHECK_MPI(MPI_Isend(&a, 1, MPI_INT, right, 4, MPI_COMM_WORLD, &sreq[0]));
    PLX_CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    PLX_CHECK_MPI(MPI_Isend(&b, 1, MPI_INT, right, 4, dup, &sreq[1]));
    PLX_CHECK_MPI(MPI_Recv(&got[1], 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, dup, &st[1]));
    PLX_CHECK_MPI(MPI_Recv(&got[0], 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st[0]));
    PLX_CHECK_MPI(MPI_Waitall(2, sreq, MPI_STATUSES_IGNORE));
    PLX_CHECK_EQ(got[1], 200 + left, "dup receive skips the earlier WORLD message");
    PLX_CHECK_EQ(got[0], 100 + left, "WORLD receive gets the WORLD message");
    PLX_CHECK_MPI(MPI_Comm_free(&dup2));
    PLX_CHECK_MPI(MPI_Comm_free(&dup));
}

static void test_self(void)
{
    int r = -1, n = -1, out[4] = {1, 2, 3, 4 + rank}, in[4] = {0};
    MPI_Request req;
    MPI_Status st;

    MPI_Comm_rank(MPI_COMM_SELF, &r);
    MPI_Comm_size(MPI_COMM_SELF, &n);
    PLX_CHECK_EQ(r, 0, "rank in MPI_COMM_SELF");
    PLX_CHECK_EQ(n, 1, "size of MPI_COMM_SELF");
    PLX_CHECK_MPI(MPI_Isend(out, 4, MPI_INT, 0, 11, MPI_COMM_SELF, &req));
    PLX_CHECK_MPI(MPI_Recv(in, 4, MPI_INT, 0, 11, MPI_COMM_SELF, &st));
    PLX_CHECK_MPI(MPI_Wait(&req, MPI_STATUS_IGNORE));
    PLX_CHECK(memcmp(in, out, sizeof in) == 0, "COMM_SELF send to self: data");
    PLX_CHECK_STATUS(st, 0, 11, sizeof in);
    {
        MPI_Comm sdup;
        PLX_CHECK_MPI(MPI_Comm_dup(MPI_COMM_SELF, &sdup));
        check_comm_works(sdup, "dup of COMM_SELF");
        check_compare(MPI_COMM_SELF, sdup, MPI_CONGRUENT, "compare(SELF, dup of SELF)");
        PLX_CHECK_MPI(MPI_Comm_free(&sdup));
    }
}

int main(int argc, char **argv)
{
    plx_test_init(&argc, &argv, "comm");
    rank = plx_test_state()->rank;
    size = plx_test_state()->size;

    test_dup_compare();
    test_split();
    test_split_type();
    test_create();
    test_names();
    test_isolation();
    test_self();
    /* Many dup/free cycles: context ids are recycled without collisions. */
    for (int i = 0; i < 10; i++) {
        MPI_Comm c;
        PLX_CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &c));
        if (i % 5 == 0)
            check_comm_works(c, "dup in a dup/free loop");
        PLX_CHECK_MPI(MPI_Comm_free(&c));
    }
    return plx_test_finish();
}
