/*
 * MPI_Group_*: the MPI-1 group functions. Set logic lives in core/group.c;
 * this file checks arguments (every rank list is validated before any group
 * is made) and decodes handles. Group errors are not tied to a communicator,
 * so they go to MPI_COMM_WORLD's error handler.
 *
 * Empty results are MPI_GROUP_EMPTY itself, which MPI_Group_free accepts
 * (as MPICH does: many programs free whatever a group call returned).
 */
#include <stdlib.h>
#include <string.h>
#include "api/api.h"

static int plx_group_out(struct plx_group *ng, MPI_Group *out, const char *fn)
{
    if (!ng)
        return plx_api_err(NULL, fn, MPI_ERR_NO_MEM, "cannot allocate a group handle");
    *out = ng->obj.handle;
    return MPI_SUCCESS;
}

/* A group made from g (incl, excl, ranges), or from two groups of one
 * session, belongs to that session too: it carries its buffer slot (MPI 4.1). */
static struct plx_group *plx_group_derived(struct plx_group *ng, struct plx_bslot *slot)
{
    if (ng && !ng->obj.builtin && !ng->bslot)
        ng->bslot = plx_bslot_addref(slot);
    return ng;
}

#pragma weak MPI_Group_size = PMPI_Group_size
int PMPI_Group_size(MPI_Group group, int *size)
{
    static const char fn[] = "MPI_Group_size";
    struct plx_group *g;
    int rc;
    plx_api_lock();
    if ((rc = plx_api_group(NULL, group, &g, fn, "group")))
        goto out;
    if (!size) {
        rc = plx_api_null_arg(NULL, fn, "size");
        goto out;
    }
    *size = g->size;
out:
    plx_api_unlock();
    return rc;
}

#pragma weak MPI_Group_rank = PMPI_Group_rank
int PMPI_Group_rank(MPI_Group group, int *rank)
{
    static const char fn[] = "MPI_Group_rank";
    struct plx_group *g;
    int rc;
    plx_api_lock();
    if ((rc = plx_api_group(NULL, group, &g, fn, "group")))
        goto out;
    if (!rank) {
        rc = plx_api_null_arg(NULL, fn, "rank");
        goto out;
    }
    *rank = g->rank;
out:
    plx_api_unlock();
    return rc;
}

#pragma weak MPI_Group_translate_ranks = PMPI_Group_translate_ranks
int PMPI_Group_translate_ranks(MPI_Group group1, int n, const int ranks1[], MPI_Group group2, int ranks2[])
{
    static const char fn[] = "MPI_Group_translate_ranks";
    struct plx_group *g1, *g2;
    int rc;
    plx_api_lock();
    if ((rc = plx_api_group(NULL, group1, &g1, fn, "group1")) ||
        (rc = plx_api_group(NULL, group2, &g2, fn, "group2")))
        goto out;
    if (n < 0) {
        rc = plx_api_err(NULL, fn, MPI_ERR_ARG, "argument 'n' is %d, must be >= 0", n);
        goto out;
    }
    if (n > 0 && !ranks1) {
        rc = plx_api_null_arg(NULL, fn, "ranks1");
        goto out;
    }
    if (n > 0 && !ranks2) {
        rc = plx_api_null_arg(NULL, fn, "ranks2");
        goto out;
    }
    for (int i = 0; i < n; i++) {
        if (ranks1[i] != MPI_PROC_NULL && (ranks1[i] < 0 || ranks1[i] >= g1->size)) {
            rc = plx_api_err(NULL, fn, MPI_ERR_RANK, "argument 'ranks1[%d]' is %d, not a rank of group1 (size %d)",
                             i, ranks1[i], g1->size);
            goto out;
        }
    }
    plx_group_translate(g1, n, ranks1, g2, ranks2);
out:
    plx_api_unlock();
    return rc;
}

#pragma weak MPI_Group_compare = PMPI_Group_compare
int PMPI_Group_compare(MPI_Group group1, MPI_Group group2, int *result)
{
    static const char fn[] = "MPI_Group_compare";
    struct plx_group *g1, *g2;
    int rc;
    plx_api_lock();
    if ((rc = plx_api_group(NULL, group1, &g1, fn, "group1")) ||
        (rc = plx_api_group(NULL, group2, &g2, fn, "group2")))
        goto out;
    if (!result) {
        rc = plx_api_null_arg(NULL, fn, "result");
        goto out;
    }
    *result = plx_group_compare(g1, g2);
out:
    plx_api_unlock();
    return rc;
}

enum plx_group_setop { PLX_GROUP_UNION, PLX_GROUP_INTERSECTION, PLX_GROUP_DIFFERENCE };

static int plx_group_setop(MPI_Group group1, MPI_Group group2, MPI_Group *newgroup,
                           enum plx_group_setop op, const char *fn)
{
    struct plx_group *g1, *g2, *ng;
    int rc;
    plx_api_lock();
    if ((rc = plx_api_group(NULL, group1, &g1, fn, "group1")) ||
        (rc = plx_api_group(NULL, group2, &g2, fn, "group2")))
        goto out;
    if (!newgroup) {
        rc = plx_api_null_arg(NULL, fn, "newgroup");
        goto out;
    }
    switch (op) {
    case PLX_GROUP_UNION: ng = plx_group_union(g1, g2); break;
    case PLX_GROUP_INTERSECTION: ng = plx_group_intersection(g1, g2); break;
    default: ng = plx_group_difference(g1, g2); break;
    }
    if (g1->bslot == g2->bslot)
        plx_group_derived(ng, g1->bslot);
    rc = plx_group_out(ng, newgroup, fn);
out:
    plx_api_unlock();
    return rc;
}

#pragma weak MPI_Group_union = PMPI_Group_union
int PMPI_Group_union(MPI_Group group1, MPI_Group group2, MPI_Group *newgroup)
{
    return plx_group_setop(group1, group2, newgroup, PLX_GROUP_UNION, "MPI_Group_union");
}

#pragma weak MPI_Group_intersection = PMPI_Group_intersection
int PMPI_Group_intersection(MPI_Group group1, MPI_Group group2, MPI_Group *newgroup)
{
    return plx_group_setop(group1, group2, newgroup, PLX_GROUP_INTERSECTION, "MPI_Group_intersection");
}

#pragma weak MPI_Group_difference = PMPI_Group_difference
int PMPI_Group_difference(MPI_Group group1, MPI_Group group2, MPI_Group *newgroup)
{
    return plx_group_setop(group1, group2, newgroup, PLX_GROUP_DIFFERENCE, "MPI_Group_difference");
}

/* Checks a list of n distinct ranks of g; marks them in seen[] (g->size). */
static int plx_group_check_ranks(const struct plx_group *g, int n, const int *ranks, char *seen, const char *fn)
{
    for (int i = 0; i < n; i++) {
        int r = ranks[i];
        if (r < 0 || r >= g->size)
            return plx_api_err(NULL, fn, MPI_ERR_RANK, "argument 'ranks[%d]' is %d, not a rank of the group (size %d)",
                               i, r, g->size);
        if (seen[r])
            return plx_api_err(NULL, fn, MPI_ERR_RANK, "argument 'ranks' names rank %d twice (ranks[%d])", r, i);
        seen[r] = 1;
    }
    return MPI_SUCCESS;
}

/* Common checks of incl/excl; on success *g_p is the group and seen[] marks
 * the listed ranks (caller frees it). */
static int plx_group_list_args(MPI_Group group, int n, const int *ranks, MPI_Group *newgroup,
                               struct plx_group **g_p, char **seen_p, const char *fn)
{
    int rc;
    *seen_p = NULL;
    if ((rc = plx_api_group(NULL, group, g_p, fn, "group")))
        return rc;
    if (!newgroup)
        return plx_api_null_arg(NULL, fn, "newgroup");
    if (n < 0)
        return plx_api_err(NULL, fn, MPI_ERR_ARG, "argument 'n' is %d, must be >= 0", n);
    if (n > 0 && !ranks)
        return plx_api_null_arg(NULL, fn, "ranks");
    *seen_p = plx_calloc((size_t)(*g_p)->size + 1, 1);
    return plx_group_check_ranks(*g_p, n, ranks, *seen_p, fn);
}

#pragma weak MPI_Group_incl = PMPI_Group_incl
int PMPI_Group_incl(MPI_Group group, int n, const int ranks[], MPI_Group *newgroup)
{
    static const char fn[] = "MPI_Group_incl";
    struct plx_group *g;
    char *seen;
    int rc;
    plx_api_lock();
    if ((rc = plx_group_list_args(group, n, ranks, newgroup, &g, &seen, fn)))
        goto out;
    int *lpids = plx_malloc((size_t)(n + 1) * sizeof(int));
    for (int i = 0; i < n; i++)
        lpids[i] = g->lpids[ranks[i]];
    rc = plx_group_out(plx_group_derived(plx_group_new(n, lpids), g->bslot), newgroup, fn);
    free(lpids);
out:
    free(seen);
    plx_api_unlock();
    return rc;
}

/* The members of g whose rank is not marked in seen[]. */
static struct plx_group *plx_group_unmarked(const struct plx_group *g, const char *seen)
{
    int *lpids = plx_malloc((size_t)(g->size + 1) * sizeof(int));
    int m = 0;
    for (int r = 0; r < g->size; r++)
        if (!seen[r])
            lpids[m++] = g->lpids[r];
    struct plx_group *ng = plx_group_new(m, lpids);
    free(lpids);
    return ng;
}

#pragma weak MPI_Group_excl = PMPI_Group_excl
int PMPI_Group_excl(MPI_Group group, int n, const int ranks[], MPI_Group *newgroup)
{
    static const char fn[] = "MPI_Group_excl";
    struct plx_group *g;
    char *seen;
    int rc;
    plx_api_lock();
    if ((rc = plx_group_list_args(group, n, ranks, newgroup, &g, &seen, fn)))
        goto out;
    rc = plx_group_out(plx_group_derived(plx_group_unmarked(g, seen), g->bslot), newgroup, fn);
out:
    free(seen);
    plx_api_unlock();
    return rc;
}

/*
 * Expands ranges[n][3] = (first, last, stride) into out[] (NULL: only
 * check), marking seen[]. MPI 3.1 section 6.3.2: stride != 0, every computed
 * rank valid and all of them distinct; first > last is allowed with a
 * negative stride. Zero stride and a stride pointing away from last are
 * argument errors; invalid or repeated ranks are rank errors.
 */
static int plx_group_expand_ranges(const struct plx_group *g, int n, int ranges[][3], char *seen, int *out,
                                   int *count_p, const char *fn)
{
    int count = 0;
    *count_p = 0; /* defined on every path, also when an error handler returns */
    for (int i = 0; i < n; i++) {
        int first = ranges[i][0], last = ranges[i][1], stride = ranges[i][2];
        if (stride == 0)
            return plx_api_err(NULL, fn, MPI_ERR_ARG, "argument 'ranges[%d]' = (%d, %d, %d) has stride 0",
                               i, first, last, stride);
        if (first < 0 || first >= g->size)
            return plx_api_err(NULL, fn, MPI_ERR_RANK,
                               "argument 'ranges[%d]' = (%d, %d, %d): first %d is not a rank of the group (size %d)",
                               i, first, last, stride, first, g->size);
        if (last < 0 || last >= g->size)
            return plx_api_err(NULL, fn, MPI_ERR_RANK,
                               "argument 'ranges[%d]' = (%d, %d, %d): last %d is not a rank of the group (size %d)",
                               i, first, last, stride, last, g->size);
        if ((stride > 0 && first > last) || (stride < 0 && first < last))
            return plx_api_err(NULL, fn, MPI_ERR_ARG,
                               "argument 'ranges[%d]' = (%d, %d, %d): stride %d leads away from last",
                               i, first, last, stride, stride);
        for (long long r = first; stride > 0 ? r <= last : r >= last; r += stride) {
            if (seen[r])
                return plx_api_err(NULL, fn, MPI_ERR_RANK,
                                   "argument 'ranges[%d]' = (%d, %d, %d) repeats rank %lld", i, first, last,
                                   stride, r);
            seen[r] = 1;
            if (out)
                out[count] = g->lpids[r];
            count++;
        }
    }
    *count_p = count;
    return MPI_SUCCESS;
}

static int plx_group_range_args(MPI_Group group, int n, int ranges[][3], MPI_Group *newgroup,
                                struct plx_group **g_p, const char *fn)
{
    int rc;
    if ((rc = plx_api_group(NULL, group, g_p, fn, "group")))
        return rc;
    if (!newgroup)
        return plx_api_null_arg(NULL, fn, "newgroup");
    if (n < 0)
        return plx_api_err(NULL, fn, MPI_ERR_ARG, "argument 'n' is %d, must be >= 0", n);
    if (n > 0 && !ranges)
        return plx_api_null_arg(NULL, fn, "ranges");
    return MPI_SUCCESS;
}

#pragma weak MPI_Group_range_incl = PMPI_Group_range_incl
int PMPI_Group_range_incl(MPI_Group group, int n, int ranges[][3], MPI_Group *newgroup)
{
    static const char fn[] = "MPI_Group_range_incl";
    struct plx_group *g;
    char *seen = NULL;
    int *lpids = NULL;
    int rc, count;
    plx_api_lock();
    if ((rc = plx_group_range_args(group, n, ranges, newgroup, &g, fn)))
        goto out;
    seen = plx_calloc((size_t)g->size + 1, 1);
    lpids = plx_malloc((size_t)(g->size + 1) * sizeof(int));
    if ((rc = plx_group_expand_ranges(g, n, ranges, seen, lpids, &count, fn)))
        goto out;
    rc = plx_group_out(plx_group_derived(plx_group_new(count, lpids), g->bslot), newgroup, fn);
out:
    free(seen);
    free(lpids);
    plx_api_unlock();
    return rc;
}

#pragma weak MPI_Group_range_excl = PMPI_Group_range_excl
int PMPI_Group_range_excl(MPI_Group group, int n, int ranges[][3], MPI_Group *newgroup)
{
    static const char fn[] = "MPI_Group_range_excl";
    struct plx_group *g;
    char *seen = NULL;
    int rc, count;
    plx_api_lock();
    if ((rc = plx_group_range_args(group, n, ranges, newgroup, &g, fn)))
        goto out;
    seen = plx_calloc((size_t)g->size + 1, 1);
    if ((rc = plx_group_expand_ranges(g, n, ranges, seen, NULL, &count, fn)))
        goto out;
    rc = plx_group_out(plx_group_derived(plx_group_unmarked(g, seen), g->bslot), newgroup, fn);
out:
    free(seen);
    plx_api_unlock();
    return rc;
}

#pragma weak MPI_Group_free = PMPI_Group_free
int PMPI_Group_free(MPI_Group *group)
{
    static const char fn[] = "MPI_Group_free";
    struct plx_group *g;
    int rc;
    plx_api_lock();
    plx_api_check_init(fn);
    if (!group) {
        rc = plx_api_null_arg(NULL, fn, "group");
        goto out;
    }
    if ((rc = plx_api_group(NULL, *group, &g, fn, "group")))
        goto out;
    plx_group_release(g);       /* MPI_GROUP_EMPTY: nothing to release */
    *group = MPI_GROUP_NULL;
out:
    plx_api_unlock();
    return rc;
}
