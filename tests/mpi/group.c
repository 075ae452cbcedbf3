/*
 * group.c - every MPI-1 group operation, checked against a reference computed here.
 *
 * Groups are local objects, so most of this needs no communication: each rank
 * builds groups from the world group and compares members (via translate_ranks
 * to the world group) with the expected lists.
 */
#include "plx_test.h"

static int rank, size;
static MPI_Group world;

/* Members of g as world ranks, in g's rank order; returns the size. */
static int members(MPI_Group g, int *out)
{
    int n = -1, *idx;

    PLX_CHECK_MPI(MPI_Group_size(g, &n));
    idx = plx_malloc(sizeof(int) * (size_t)(n + 1));
    for (int i = 0; i < n; i++)
        idx[i] = i;
    if (n > 0)
        PLX_CHECK_MPI(MPI_Group_translate_ranks(g, n, idx, world, out));
    free(idx);
    return n;
}

/* g has exactly the world ranks expect[0..n), in that order, and my rank in it is right. */
static void check_members(MPI_Group g, const int *expect, int n, const char *what)
{
    int *got = plx_malloc(sizeof(int) * (size_t)(size + 1));
    int gn = members(g, got), myrank = -2, expect_rank = MPI_UNDEFINED;

    PLX_CHECK(gn == n, "%s: group size (got %d, expected %d)", what, gn, n);
    for (int i = 0; i < n; i++) {
        PLX_CHECK(got[i] == expect[i], "%s: member %d (got world rank %d, expected %d)", what, i,
                  got[i], expect[i]);
        if (expect[i] == rank)
            expect_rank = i;
    }
    PLX_CHECK_MPI(MPI_Group_rank(g, &myrank));
    PLX_CHECK(myrank == expect_rank, "%s: Group_rank (got %d, expected %d)", what, myrank,
              expect_rank);
    free(got);
}

static void check_compare(MPI_Group a, MPI_Group b, int expect, const char *what)
{
    int res = -1;
    PLX_CHECK_MPI(MPI_Group_compare(a, b, &res));
    PLX_CHECK_EQ(res, expect, what);
}

static void free_group(MPI_Group *g)
{
    if (*g != MPI_GROUP_EMPTY) {
        PLX_CHECK_MPI(MPI_Group_free(g));
        PLX_CHECK(*g == MPI_GROUP_NULL, "Group_free sets the handle to MPI_GROUP_NULL");
    }
}

/* Reference set operations on world-rank lists (MPI-3.1 6.3.2 orders). */
static int in_list(int x, const int *l, int n)
{
    for (int i = 0; i < n; i++)
        if (l[i] == x)
            return 1;
    return 0;
}

static int ref_union(const int *a, int na, const int *b, int nb, int *out)
{
    int n = 0;
    for (int i = 0; i < na; i++)
        out[n++] = a[i];
    for (int i = 0; i < nb; i++)
        if (!in_list(b[i], a, na))
            out[n++] = b[i];
    return n;
}

static int ref_intersection(const int *a, int na, const int *b, int nb, int *out)
{
    int n = 0;
    for (int i = 0; i < na; i++)
        if (in_list(a[i], b, nb))
            out[n++] = a[i];
    return n;
}

static int ref_difference(const int *a, int na, const int *b, int nb, int *out)
{
    int n = 0;
    for (int i = 0; i < na; i++)
        if (!in_list(a[i], b, nb))
            out[n++] = a[i];
    return n;
}

static int ref_ranges(int (*r)[3], int nr, int *out)
{
    int n = 0;
    for (int k = 0; k < nr; k++) {
        int first = r[k][0], last = r[k][1], stride = r[k][2];
        for (int x = first; stride > 0 ? x <= last : x >= last; x += stride)
            out[n++] = x;
    }
    return n;
}

static void test_basic(void)
{
    int n = -1, r = -1, *all = plx_malloc(sizeof(int) * (size_t)size);
    MPI_Group self, again;

    PLX_CHECK_MPI(MPI_Group_size(world, &n));
    PLX_CHECK_EQ(n, size, "world group size");
    PLX_CHECK_MPI(MPI_Group_rank(world, &r));
    PLX_CHECK_EQ(r, rank, "world group rank");
    for (int i = 0; i < size; i++)
        all[i] = i;
    check_members(world, all, size, "world group");

    PLX_CHECK_MPI(MPI_Comm_group(MPI_COMM_WORLD, &again));
    check_compare(world, again, MPI_IDENT, "compare(world group, world group again)");
    free_group(&again);

    PLX_CHECK_MPI(MPI_Comm_group(MPI_COMM_SELF, &self));
    check_members(self, &rank, 1, "group of COMM_SELF");
    check_compare(self, world, size == 1 ? MPI_IDENT : MPI_UNEQUAL, "compare(self group, world group)");

    PLX_CHECK_MPI(MPI_Group_size(MPI_GROUP_EMPTY, &n));
    PLX_CHECK_EQ(n, 0, "size of MPI_GROUP_EMPTY");
    PLX_CHECK_MPI(MPI_Group_rank(MPI_GROUP_EMPTY, &r));
    PLX_CHECK_EQ(r, MPI_UNDEFINED, "rank in MPI_GROUP_EMPTY");
    check_compare(MPI_GROUP_EMPTY, MPI_GROUP_EMPTY, MPI_IDENT, "compare(EMPTY, EMPTY)");
    check_compare(MPI_GROUP_EMPTY, world, MPI_UNEQUAL, "compare(EMPTY, world)");
    free_group(&self);
    free(all);
}

static void test_incl_excl(void)
{
    int *list = plx_malloc(sizeof(int) * (size_t)(size + 2)), *exp = plx_malloc(sizeof(int) * (size_t)size);
    MPI_Group g, h;
    int n;

    /* Reversed: same members, other order. */
    for (int i = 0; i < size; i++)
        list[i] = size - 1 - i;
    PLX_CHECK_MPI(MPI_Group_incl(world, size, list, &g));
    check_members(g, list, size, "incl reversed");
    check_compare(world, g, size > 1 ? MPI_SIMILAR : MPI_IDENT, "compare(world, reversed)");
    free_group(&g);

    /* Identity incl is IDENT. */
    for (int i = 0; i < size; i++)
        list[i] = i;
    PLX_CHECK_MPI(MPI_Group_incl(world, size, list, &g));
    check_compare(world, g, MPI_IDENT, "compare(world, incl of all in order)");
    free_group(&g);

    /* Odd ranks. */
    n = 0;
    for (int i = 1; i < size; i += 2)
        list[n++] = i;
    PLX_CHECK_MPI(MPI_Group_incl(world, n, list, &g));
    check_members(g, list, n, "incl odd ranks");
    if (n < size)
        check_compare(world, g, MPI_UNEQUAL, "compare(world, odd ranks)");
    free_group(&g);

    /* incl of nothing is the empty group. */
    PLX_CHECK_MPI(MPI_Group_incl(world, 0, list, &g));
    check_members(g, list, 0, "incl of 0 ranks");
    check_compare(g, MPI_GROUP_EMPTY, MPI_IDENT, "incl of 0 ranks == MPI_GROUP_EMPTY");
    free_group(&g);

    /* excl rank 0 and the last rank, given in reverse order: order of the rest kept. */
    list[0] = size - 1;
    list[1] = 0;
    n = size > 1 ? 2 : 1;
    PLX_CHECK_MPI(MPI_Group_excl(world, n, list, &g));
    {
        int m = 0;
        for (int i = 1; i < size - 1; i++)
            exp[m++] = i;
        check_members(g, exp, m, "excl first and last");
    }
    free_group(&g);

    /* excl of nothing is the same group; excl of all is empty. */
    PLX_CHECK_MPI(MPI_Group_excl(world, 0, list, &g));
    check_compare(world, g, MPI_IDENT, "excl of 0 ranks");
    free_group(&g);
    for (int i = 0; i < size; i++)
        list[i] = i;
    PLX_CHECK_MPI(MPI_Group_excl(world, size, list, &g));
    check_members(g, list, 0, "excl of all");
    free_group(&g);

    /* incl of an incl: ranks are relative to the first group. */
    for (int i = 0; i < size; i++)
        list[i] = size - 1 - i;
    PLX_CHECK_MPI(MPI_Group_incl(world, size, list, &g));
    list[0] = 0; /* rank 0 of g is world rank size-1 */
    PLX_CHECK_MPI(MPI_Group_incl(g, 1, list, &h));
    exp[0] = size - 1;
    check_members(h, exp, 1, "incl of an incl");
    free_group(&h);
    free_group(&g);
    free(list);
    free(exp);
}

static void test_ranges(void)
{
    int (*r)[3] = plx_malloc(sizeof(int[3]) * 4);
    int *exp = plx_malloc(sizeof(int) * (size_t)size * 4), n, m;
    MPI_Group g;

    /* Every third rank from the top, descending (negative stride). */
    r[0][0] = size - 1;
    r[0][1] = 0;
    r[0][2] = -3;
    n = ref_ranges(r, 1, exp);
    PLX_CHECK_MPI(MPI_Group_range_incl(world, 1, r, &g));
    check_members(g, exp, n, "range_incl {size-1, 0, -3}");
    free_group(&g);

    /* Two ranges: evens ascending then odds descending: a permutation. */
    r[0][0] = 0;
    r[0][1] = size - 1;
    r[0][2] = 2;
    r[1][0] = (size - 1) | 1;
    r[1][1] = 1;
    r[1][2] = -2;
    if (r[1][0] >= size)
        r[1][0] -= 2;
    m = size > 1 ? 2 : 1;
    n = ref_ranges(r, m, exp);
    PLX_CHECK_EQ(n, size, "evens+odds ranges cover the world");
    PLX_CHECK_MPI(MPI_Group_range_incl(world, m, r, &g));
    check_members(g, exp, n, "range_incl evens asc + odds desc");
    check_compare(world, g, size > 2 ? MPI_SIMILAR : MPI_IDENT, "compare(world, evens+odds)");
    free_group(&g);

    /* A stride larger than the range gives just the first rank. */
    r[0][0] = size / 2;
    r[0][1] = size - 1;
    r[0][2] = size + 5;
    PLX_CHECK_MPI(MPI_Group_range_incl(world, 1, r, &g));
    exp[0] = size / 2;
    check_members(g, exp, 1, "range_incl with stride beyond last");
    free_group(&g);

    /* range_excl: remove the evens, keep the odds in order. */
    r[0][0] = 0;
    r[0][1] = size - 1;
    r[0][2] = 2;
    PLX_CHECK_MPI(MPI_Group_range_excl(world, 1, r, &g));
    n = 0;
    for (int i = 1; i < size; i += 2)
        exp[n++] = i;
    check_members(g, exp, n, "range_excl evens");
    free_group(&g);

    /* range_excl with a descending range. */
    r[0][0] = size - 1;
    r[0][1] = size / 2;
    r[0][2] = -1;
    PLX_CHECK_MPI(MPI_Group_range_excl(world, 1, r, &g));
    n = 0;
    for (int i = 0; i < size / 2; i++)
        exp[n++] = i;
    check_members(g, exp, n, "range_excl upper half (descending range)");
    free_group(&g);
    free(r);
    free(exp);
}

static void test_set_ops(void)
{
    int *a = plx_malloc(sizeof(int) * (size_t)size), *b = plx_malloc(sizeof(int) * (size_t)size);
    int *exp = plx_malloc(sizeof(int) * (size_t)size * 2), na = 0, nb = 0, n;
    MPI_Group ga, gb, g;

    /* a = evens descending, b = the lower half plus rank size-1, ascending. */
    for (int i = size - 1; i >= 0; i--)
        if (i % 2 == 0)
            a[na++] = i;
    for (int i = 0; i < size; i++)
        if (i < (size + 1) / 2 || i == size - 1)
            b[nb++] = i;
    PLX_CHECK_MPI(MPI_Group_incl(world, na, a, &ga));
    PLX_CHECK_MPI(MPI_Group_incl(world, nb, b, &gb));

    n = ref_union(a, na, b, nb, exp);
    PLX_CHECK_MPI(MPI_Group_union(ga, gb, &g));
    check_members(g, exp, n, "union(a, b)");
    free_group(&g);
    n = ref_union(b, nb, a, na, exp);
    PLX_CHECK_MPI(MPI_Group_union(gb, ga, &g));
    check_members(g, exp, n, "union(b, a)");
    free_group(&g);

    n = ref_intersection(a, na, b, nb, exp);
    PLX_CHECK_MPI(MPI_Group_intersection(ga, gb, &g));
    check_members(g, exp, n, "intersection(a, b)");
    free_group(&g);
    n = ref_intersection(b, nb, a, na, exp);
    PLX_CHECK_MPI(MPI_Group_intersection(gb, ga, &g));
    check_members(g, exp, n, "intersection(b, a)");
    free_group(&g);

    n = ref_difference(a, na, b, nb, exp);
    PLX_CHECK_MPI(MPI_Group_difference(ga, gb, &g));
    check_members(g, exp, n, "difference(a, b)");
    free_group(&g);
    n = ref_difference(b, nb, a, na, exp);
    PLX_CHECK_MPI(MPI_Group_difference(gb, ga, &g));
    check_members(g, exp, n, "difference(b, a)");
    free_group(&g);

    /* Degenerate cases. */
    PLX_CHECK_MPI(MPI_Group_difference(ga, ga, &g));
    check_members(g, exp, 0, "difference(a, a)");
    check_compare(g, MPI_GROUP_EMPTY, MPI_IDENT, "difference(a, a) == EMPTY");
    free_group(&g);
    PLX_CHECK_MPI(MPI_Group_union(ga, MPI_GROUP_EMPTY, &g));
    check_compare(g, ga, MPI_IDENT, "union(a, EMPTY) == a");
    free_group(&g);
    PLX_CHECK_MPI(MPI_Group_intersection(ga, MPI_GROUP_EMPTY, &g));
    check_members(g, exp, 0, "intersection(a, EMPTY)");
    free_group(&g);
    PLX_CHECK_MPI(MPI_Group_union(ga, ga, &g));
    check_compare(g, ga, MPI_IDENT, "union(a, a) == a");
    free_group(&g);

    /* union of a with world (a first) is similar to world, not identical when a reorders. */
    PLX_CHECK_MPI(MPI_Group_union(ga, world, &g));
    n = ref_union(a, na, b, 0, exp);
    for (int i = 0; i < size; i++)
        if (!in_list(i, a, na))
            exp[n++] = i;
    check_members(g, exp, n, "union(a, world)");
    free_group(&g);

    free_group(&ga);
    free_group(&gb);
    free(a);
    free(b);
    free(exp);
}

static void test_translate(void)
{
    int *in = plx_malloc(sizeof(int) * (size_t)(size + 2)), *out = plx_malloc(sizeof(int) * (size_t)(size + 2));
    int r[1][3] = {{0, size - 1, 2}};
    MPI_Group evens, rev;

    PLX_CHECK_MPI(MPI_Group_range_incl(world, 1, r, &evens));
    for (int i = 0; i < size; i++)
        in[i] = i;
    in[size] = MPI_PROC_NULL;
    PLX_CHECK_MPI(MPI_Group_translate_ranks(world, size + 1, in, evens, out));
    for (int i = 0; i < size; i++)
        PLX_CHECK(out[i] == (i % 2 ? MPI_UNDEFINED : i / 2),
                  "translate world rank %d to evens (got %d, expected %d)", i, out[i],
                  i % 2 ? MPI_UNDEFINED : i / 2);
    PLX_CHECK_EQ(out[size], MPI_PROC_NULL, "translate MPI_PROC_NULL gives MPI_PROC_NULL");

    for (int i = 0; i < size; i++)
        in[i] = size - 1 - i;
    PLX_CHECK_MPI(MPI_Group_incl(world, size, in, &rev));
    for (int i = 0; i < size; i++)
        in[i] = i;
    PLX_CHECK_MPI(MPI_Group_translate_ranks(rev, size, in, world, out));
    for (int i = 0; i < size; i++)
        PLX_CHECK_EQ(out[i], size - 1 - i, "translate reversed group to world");
    PLX_CHECK_MPI(MPI_Group_translate_ranks(rev, 0, in, world, out));

    /* Into the empty group: undefined. (MPI_PROC_NULL into the empty group is not
     * checked: MPICH 4.0 and Open MPI 4.1 both answer MPI_UNDEFINED there.) */
    in[0] = 0;
    PLX_CHECK_MPI(MPI_Group_translate_ranks(world, 1, in, MPI_GROUP_EMPTY, out));
    PLX_CHECK_EQ(out[0], MPI_UNDEFINED, "translate into MPI_GROUP_EMPTY");
    free_group(&rev);
    free_group(&evens);
    free(in);
    free(out);
}

/* Groups from communicators agree with groups built locally. */
static void test_comm_groups(void)
{
    MPI_Comm c;
    MPI_Group cg, expect;
    int r[1][3] = {{rank % 2, size - 1, 2}};

    PLX_CHECK_MPI(MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &c));
    PLX_CHECK_MPI(MPI_Comm_group(c, &cg));
    PLX_CHECK_MPI(MPI_Group_range_incl(world, 1, r, &expect));
    check_compare(cg, expect, MPI_IDENT, "group of split comm == range_incl of my parity");
    free_group(&expect);
    free_group(&cg);
    PLX_CHECK_MPI(MPI_Comm_free(&c));
}

int main(int argc, char **argv)
{
    plx_test_init(&argc, &argv, "group");
    rank = plx_test_state()->rank;
    size = plx_test_state()->size;
    PLX_CHECK_MPI(MPI_Comm_group(MPI_COMM_WORLD, &world));

    test_basic();
    test_incl_excl();
    test_ranges();
    test_set_ops();
    test_translate();
    test_comm_groups();
    free_group(&world);
    return plx_test_finish();
}
