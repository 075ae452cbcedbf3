/*
 * Unit tests of src/core/group.c: construction and my rank, the set
 * operations with MPI's member ordering, translation, comparison, and the
 * MPI_GROUP_EMPTY builtin returned for every empty result.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/objects.h"

static int failures;

#define CHECK(cond, ...)                                                    \
    do {                                                                    \
        if (!(cond)) {                                                      \
            failures++;                                                     \
            fprintf(stderr, "%s:%d: check failed: %s: ", __FILE__, __LINE__, #cond); \
            fprintf(stderr, __VA_ARGS__);                                   \
            fputc('\n', stderr);                                            \
        }                                                                   \
    } while (0)

static void fmt_ints(char *buf, size_t len, const int *v, int n)
{
    size_t off = 0;
    buf[0] = '\0';
    for (int i = 0; i < n && off < len; i++)
        off += (size_t)snprintf(buf + off, len - off, "%s%d", i ? "," : "", v[i]);
}

/* Checks that g's members are exactly want[0..n-1], in order. */
static void check_members(const char *what, const struct plx_group *g, const int *want, int n)
{
    char got_s[256], want_s[256];
    fmt_ints(got_s, sizeof got_s, g->lpids, g->size);
    fmt_ints(want_s, sizeof want_s, want, n);
    int ok = g->size == n && (n == 0 || !memcmp(g->lpids, want, (size_t)n * sizeof(int)));
    CHECK(ok, "%s: members [%s], expected [%s]", what, got_s, want_s);
}

#define NELEM(a) ((int)(sizeof(a) / sizeof((a)[0])))

static void test_new_and_rank(void)
{
    int a[] = { 5, 2, 7, 0 };
    struct plx_group *g = plx_group_new(NELEM(a), a);
    CHECK(g != NULL, "plx_group_new returned NULL");
    check_members("new", g, a, NELEM(a));
    CHECK(g->rank == 1, "my lpid 2 should have rank 1, got %d", g->rank);
    CHECK(g->obj.handle != MPI_GROUP_EMPTY && g->obj.refcount == 1, "handle 0x%x refcount %d", (unsigned)g->obj.handle,
          g->obj.refcount);
    CHECK(plx_group_rank_of_lpid(g, 7) == 2, "rank_of_lpid(7) = %d", plx_group_rank_of_lpid(g, 7));
    CHECK(plx_group_rank_of_lpid(g, 3) == MPI_UNDEFINED, "rank_of_lpid(3) = %d", plx_group_rank_of_lpid(g, 3));
    CHECK(plx_obj_lookup(&plx_group_tab, g->obj.handle) == g, "handle does not decode to the group");

    int b[] = { 1, 3 };
    struct plx_group *h = plx_group_new(NELEM(b), b);
    CHECK(h->rank == MPI_UNDEFINED, "lpid 2 is not in {1,3}: rank %d", h->rank);

    struct plx_group *e = plx_group_new(0, NULL);
    CHECK(e == plx_group_empty, "size 0 should give plx_group_empty");
    CHECK(e->obj.handle == MPI_GROUP_EMPTY, "empty handle 0x%x", (unsigned)e->obj.handle);
    CHECK(plx_obj_lookup(&plx_group_tab, MPI_GROUP_EMPTY) == plx_group_empty, "MPI_GROUP_EMPTY not registered");
    plx_group_release(e);       /* builtin: no effect */
    CHECK(plx_obj_lookup(&plx_group_tab, MPI_GROUP_EMPTY) == plx_group_empty, "MPI_GROUP_EMPTY released");

    plx_group_addref(g);
    plx_group_release(g);
    CHECK(plx_obj_lookup(&plx_group_tab, g->obj.handle) == g, "group freed while referenced");
    int handle = g->obj.handle;
    plx_group_release(g);
    CHECK(plx_obj_lookup(&plx_group_tab, handle) == NULL, "group still live after last release");
    plx_group_release(h);
}

static void test_set_ops(void)
{
    int a[] = { 4, 1, 9, 6, 3 };
    int b[] = { 3, 8, 4, 2, 0 };
    struct plx_group *ga = plx_group_new(NELEM(a), a);
    struct plx_group *gb = plx_group_new(NELEM(b), b);

    /* union: all of a in a's order, then b's members not in a, in b's order */
    struct plx_group *u = plx_group_union(ga, gb);
    int u_want[] = { 4, 1, 9, 6, 3, 8, 2, 0 };
    check_members("union(a,b)", u, u_want, NELEM(u_want));
    CHECK(u->rank == 6, "my lpid 2 in union: rank %d, expected 6", u->rank);
    struct plx_group *u2 = plx_group_union(gb, ga);
    int u2_want[] = { 3, 8, 4, 2, 0, 1, 9, 6 };
    check_members("union(b,a)", u2, u2_want, NELEM(u2_want));

    /* intersection and difference keep the first group's order */
    struct plx_group *in = plx_group_intersection(ga, gb);
    int in_want[] = { 4, 3 };
    check_members("intersection(a,b)", in, in_want, NELEM(in_want));
    CHECK(in->rank == MPI_UNDEFINED, "lpid 2 not in a∩b: rank %d", in->rank);
    struct plx_group *in2 = plx_group_intersection(gb, ga);
    int in2_want[] = { 3, 4 };
    check_members("intersection(b,a)", in2, in2_want, NELEM(in2_want));

    struct plx_group *d = plx_group_difference(ga, gb);
    int d_want[] = { 1, 9, 6 };
    check_members("difference(a,b)", d, d_want, NELEM(d_want));
    struct plx_group *d2 = plx_group_difference(gb, ga);
    int d2_want[] = { 8, 2, 0 };
    check_members("difference(b,a)", d2, d2_want, NELEM(d2_want));
    CHECK(d2->rank == 1, "my lpid 2 in b\\a: rank %d, expected 1", d2->rank);

    /* empty results are MPI_GROUP_EMPTY; operations with the empty group */
    struct plx_group *dd = plx_group_difference(ga, ga);
    CHECK(dd == plx_group_empty, "a \\ a should be MPI_GROUP_EMPTY (size %d)", dd->size);
    int c[] = { 11, 12 };
    struct plx_group *gc = plx_group_new(NELEM(c), c);
    struct plx_group *ie = plx_group_intersection(ga, gc);
    CHECK(ie == plx_group_empty, "disjoint intersection should be MPI_GROUP_EMPTY (size %d)", ie->size);
    struct plx_group *ue = plx_group_union(plx_group_empty, gc);
    check_members("union(empty,c)", ue, c, NELEM(c));
    struct plx_group *de = plx_group_difference(plx_group_empty, gc);
    CHECK(de == plx_group_empty, "empty \\ c should be empty");
    struct plx_group *ee = plx_group_union(plx_group_empty, plx_group_empty);
    CHECK(ee == plx_group_empty, "empty u empty should be empty");

    /* union with itself is itself, in order */
    struct plx_group *uu = plx_group_union(ga, ga);
    check_members("union(a,a)", uu, a, NELEM(a));

    struct plx_group *all[] = { ga, gb, u, u2, in, in2, d, d2, dd, gc, ie, ue, de, ee, uu };
    for (int i = 0; i < NELEM(all); i++)
        plx_group_release(all[i]);
}

static void test_translate(void)
{
    int a[] = { 4, 1, 9, 6, 3 };
    int b[] = { 3, 8, 4, 2, 0 };
    struct plx_group *ga = plx_group_new(NELEM(a), a);
    struct plx_group *gb = plx_group_new(NELEM(b), b);
    int r1[] = { 0, 1, 4, MPI_PROC_NULL, 2, 3 };
    int want[] = { 2, MPI_UNDEFINED, 0, MPI_PROC_NULL, MPI_UNDEFINED, MPI_UNDEFINED };
    int r2[NELEM(r1)];
    memset(r2, 0x55, sizeof r2);
    plx_group_translate(ga, NELEM(r1), r1, gb, r2);
    char got_s[128], want_s[128];
    fmt_ints(got_s, sizeof got_s, r2, NELEM(r2));
    fmt_ints(want_s, sizeof want_s, want, NELEM(want));
    CHECK(!memcmp(r2, want, sizeof want), "translate a->b: [%s], expected [%s]", got_s, want_s);

    /* to and from the empty group */
    int r3[2];
    int q[] = { 0, 3 };
    plx_group_translate(ga, 2, q, plx_group_empty, r3);
    CHECK(r3[0] == MPI_UNDEFINED && r3[1] == MPI_UNDEFINED, "translate to empty: %d %d", r3[0], r3[1]);
    plx_group_translate(plx_group_empty, 0, NULL, ga, NULL);    /* n = 0: nothing touched */

    /* identity translation */
    int id[NELEM(a)], out[NELEM(a)];
    for (int i = 0; i < NELEM(a); i++)
        id[i] = i;
    plx_group_translate(ga, NELEM(a), id, ga, out);
    CHECK(!memcmp(id, out, sizeof id), "translate a->a is not the identity");
    plx_group_release(ga);
    plx_group_release(gb);
}

static void test_compare(void)
{
    int a[] = { 4, 1, 9 };
    int a_same[] = { 4, 1, 9 };
    int a_perm[] = { 9, 4, 1 };
    int other[] = { 4, 1, 8 };
    int shorter[] = { 4, 1 };
    struct plx_group *ga = plx_group_new(3, a);
    struct plx_group *gs = plx_group_new(3, a_same);
    struct plx_group *gp = plx_group_new(3, a_perm);
    struct plx_group *go = plx_group_new(3, other);
    struct plx_group *gh = plx_group_new(2, shorter);
    CHECK(plx_group_compare(ga, ga) == MPI_IDENT, "a vs a: %d", plx_group_compare(ga, ga));
    CHECK(plx_group_compare(ga, gs) == MPI_IDENT, "a vs copy: %d", plx_group_compare(ga, gs));
    CHECK(plx_group_compare(ga, gp) == MPI_SIMILAR, "a vs permutation: %d", plx_group_compare(ga, gp));
    CHECK(plx_group_compare(ga, go) == MPI_UNEQUAL, "a vs other: %d", plx_group_compare(ga, go));
    CHECK(plx_group_compare(ga, gh) == MPI_UNEQUAL, "a vs shorter: %d", plx_group_compare(ga, gh));
    CHECK(plx_group_compare(plx_group_empty, plx_group_empty) == MPI_IDENT, "empty vs empty");
    CHECK(plx_group_compare(ga, plx_group_empty) == MPI_UNEQUAL, "a vs empty");
    plx_group_release(ga);
    plx_group_release(gs);
    plx_group_release(gp);
    plx_group_release(go);
    plx_group_release(gh);
}

static void test_large(void)
{
    /* inverse maps over many members: evens u odds interleave as defined */
    enum { N = 1000 };
    int *ev = malloc(N / 2 * sizeof(int)), *od = malloc(N / 2 * sizeof(int));
    for (int i = 0; i < N / 2; i++) {
        ev[i] = N - 2 - 2 * i;  /* descending evens */
        od[i] = 2 * i + 1;      /* ascending odds */
    }
    struct plx_group *ge = plx_group_new(N / 2, ev), *go = plx_group_new(N / 2, od);
    struct plx_group *u = plx_group_union(ge, go);
    int ok = u->size == N;
    for (int i = 0; ok && i < N / 2; i++)
        ok = u->lpids[i] == ev[i] && u->lpids[N / 2 + i] == od[i];
    CHECK(ok, "union of %d evens and odds has the wrong order or size %d", N, u->size);
    CHECK(u->rank == N / 2 - 2, "my lpid 2 in union: rank %d, expected %d", u->rank, N / 2 - 2);
    struct plx_group *i2 = plx_group_intersection(u, go);
    CHECK(plx_group_compare(i2, go) == MPI_IDENT, "(evens u odds) n odds != odds");
    plx_group_release(u);
    plx_group_release(i2);
    plx_group_release(ge);
    plx_group_release(go);
    free(ev);
    free(od);
}

int main(void)
{
    plx_group_init_builtins(2);         /* pretend to be world rank 2 */
    test_new_and_rank();
    test_set_ops();
    test_translate();
    test_compare();
    test_large();
    CHECK(plx_group_tab.live == 0, "%ld groups leaked", plx_group_tab.live);
    if (failures) {
        fprintf(stderr, "test_group: %d check(s) failed\n", failures);
        return 1;
    }
    printf("test_group: all checks passed\n");
    return 0;
}
