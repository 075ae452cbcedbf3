/*
 * Process groups: an ordered array of lpids (ranks in MPI_COMM_WORLD) plus
 * this process's rank in it. Groups are immutable once made and shared by
 * reference (a communicator holds one reference to its group).
 *
 * MPI_GROUP_EMPTY is a static builtin: every empty result is that object, so
 * `newgroup == MPI_GROUP_EMPTY` holds as users expect from MPICH.
 *
 * Set operations and translation use an inverse map lpid -> rank, built on
 * demand: O(n1 + n2 + max lpid) instead of O(n1 * n2).
 */
#include <stdlib.h>
#include <string.h>
#include "core/objects.h"

struct plx_objtab plx_group_tab = PLX_OBJTAB_INIT("group", PLX_OBJ_GROUP, struct plx_group);

static struct plx_group plx_group_empty_obj = {
    .obj = { .handle = MPI_GROUP_EMPTY, .refcount = 1, .live = 1, .builtin = 1 },
    .size = 0,
    .rank = MPI_UNDEFINED,
    .lpids = NULL,
};
struct plx_group *plx_group_empty = &plx_group_empty_obj;

static struct {
    int my_lpid;                /* -1 until plx_group_init_builtins */
} plx_group_g = { .my_lpid = -1 };

void plx_group_init_builtins(int my_lpid)
{
    plx_group_g.my_lpid = my_lpid;
    plx_obj_register_builtin(&plx_group_tab, MPI_GROUP_EMPTY, plx_group_empty);
}

struct plx_group *plx_group_new(int size, const int *lpids)
{
    if (size <= 0)
        return plx_group_empty;
    struct plx_group *g = plx_obj_alloc(&plx_group_tab);
    if (!g)
        return NULL;
    g->lpids = plx_malloc((size_t)size * sizeof(int));
    memcpy(g->lpids, lpids, (size_t)size * sizeof(int));
    g->size = size;
    g->rank = MPI_UNDEFINED;
    if (plx_group_g.my_lpid >= 0)
        g->rank = plx_group_rank_of_lpid(g, plx_group_g.my_lpid);
    return g;
}

void plx_group_addref(struct plx_group *g)
{
    if (g && !g->obj.builtin)
        g->obj.refcount++;
}

void plx_group_release(struct plx_group *g)
{
    if (!g || g->obj.builtin)
        return;
    if (--g->obj.refcount > 0)
        return;
    free(g->lpids);
    g->lpids = NULL;
    plx_bslot_release(g->bslot);
    plx_obj_free(&plx_group_tab, g);
}

int plx_group_rank_of_lpid(const struct plx_group *g, int lpid)
{
    /* O(size); callers with many lookups use plx_group_inverse below. */
    for (int i = 0; i < g->size; i++)
        if (g->lpids[i] == lpid)
            return i;
    return MPI_UNDEFINED;
}

/* inv[lpid] = rank in g, or MPI_UNDEFINED; covers lpids 0..*n_p-1. */
static int *plx_group_inverse(const struct plx_group *g, int *n_p)
{
    int n = 0;
    for (int i = 0; i < g->size; i++)
        if (g->lpids[i] >= n)
            n = g->lpids[i] + 1;
    int *inv = plx_malloc((size_t)(n ? n : 1) * sizeof(int));
    for (int i = 0; i < n; i++)
        inv[i] = MPI_UNDEFINED;
    for (int i = 0; i < g->size; i++)
        if (g->lpids[i] >= 0)
            inv[g->lpids[i]] = i;
    *n_p = n;
    return inv;
}

static inline int plx_group_inv_get(const int *inv, int n, int lpid)
{
    return lpid >= 0 && lpid < n ? inv[lpid] : MPI_UNDEFINED;
}

/* The members of `from` kept or dropped according to their presence in `in`;
 * appended after `prefix` (g1's members, for union). */
static struct plx_group *plx_group_filter(const struct plx_group *prefix, const struct plx_group *from,
                                          const struct plx_group *in, int keep_present)
{
    int ninv;
    int *inv = plx_group_inverse(in, &ninv);
    int npre = prefix ? prefix->size : 0;
    int *out = plx_malloc((size_t)(npre + from->size + 1) * sizeof(int));
    int n = 0;
    for (int i = 0; i < npre; i++)
        out[n++] = prefix->lpids[i];
    for (int i = 0; i < from->size; i++) {
        int present = plx_group_inv_get(inv, ninv, from->lpids[i]) != MPI_UNDEFINED;
        if (present == keep_present)
            out[n++] = from->lpids[i];
    }
    struct plx_group *g = plx_group_new(n, out);
    free(out);
    free(inv);
    return g;
}

struct plx_group *plx_group_union(const struct plx_group *g1, const struct plx_group *g2)
{
    return plx_group_filter(g1, g2, g1, 0);
}

struct plx_group *plx_group_intersection(const struct plx_group *g1, const struct plx_group *g2)
{
    return plx_group_filter(NULL, g1, g2, 1);
}

struct plx_group *plx_group_difference(const struct plx_group *g1, const struct plx_group *g2)
{
    return plx_group_filter(NULL, g1, g2, 0);
}

void plx_group_translate(const struct plx_group *g1, int n, const int *ranks1,
                         const struct plx_group *g2, int *ranks2)
{
    if (n <= 0)
        return;
    int ninv;
    int *inv = plx_group_inverse(g2, &ninv);
    for (int i = 0; i < n; i++) {
        int r = ranks1[i];
        if (r == MPI_PROC_NULL)
            ranks2[i] = MPI_PROC_NULL;
        else if (r < 0 || r >= g1->size)
            ranks2[i] = MPI_UNDEFINED;
        else
            ranks2[i] = plx_group_inv_get(inv, ninv, g1->lpids[r]);
    }
    free(inv);
}

int plx_group_compare(const struct plx_group *g1, const struct plx_group *g2)
{
    if (g1 == g2)
        return MPI_IDENT;
    if (g1->size != g2->size)
        return MPI_UNEQUAL;
    if (g1->size == 0 || !memcmp(g1->lpids, g2->lpids, (size_t)g1->size * sizeof(int)))
        return MPI_IDENT;
    int ninv;
    int *inv = plx_group_inverse(g2, &ninv);
    int result = MPI_SIMILAR;
    for (int i = 0; i < g1->size; i++) {
        if (plx_group_inv_get(inv, ninv, g1->lpids[i]) == MPI_UNDEFINED) {
            result = MPI_UNEQUAL;
            break;
        }
    }
    free(inv);
    return result;
}
