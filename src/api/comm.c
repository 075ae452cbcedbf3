/*
 * Communicator entry points: size/rank, the constructors (dup, split,
 * split_type, create, create_group), free, compare, names, groups and info.
 *
 * Every constructor agrees on a context id with plx_comm_alloc_context over
 * the processes taking part (the parent, or for Comm_create_group only the
 * group, through a temporary communicator on the stack that borrows the
 * parent's context with the caller's tag). Processes that end up outside
 * the new communicator give the id back locally (see core/comm.c for why a
 * shared id is safe between disjoint communicators).
 *
 * Comm_split costs one allgather of (color, key) plus the id agreement;
 * each process then sorts its own color: O(size log size).
 *
 * On an intercommunicator, dup, split, split_type and create go to
 * api/intercomm.c; create_group takes intracommunicators only.
 */
#include <stdlib.h>
#include <string.h>
#include "api/api.h"
#include "api/intercomm.h"
#include "coll/coll.h"
#include "core/runtime.h"
#include "pt2pt/pt2pt.h"

static int plx_comm_status_err(struct plx_comm *c, const char *fn, plx_status_t st, const char *what)
{
    if (st == PLX_ERR_NOSPACE)
        return plx_api_err(c, fn, MPI_ERR_OTHER, "no context id is free on every process (at most %d communicators)",
                           PLX_MAX_CONTEXTS / 2 - 2);
    if (st == PLX_ERR_PROC_FAILED)
        return plx_api_err(c, fn, MPIX_ERR_PROC_FAILED, "%s failed: a member process was lost", what);
    return plx_api_err(c, fn, plx_status_to_class(st), "%s failed (internal status %d)", what, (int)st);
}

static int plx_comm_out(struct plx_comm *nc, MPI_Comm *out)
{
    *out = nc->obj.handle;
    return MPI_SUCCESS;
}

/* A new communicator over g with a fresh id; NULL after raising. */
static struct plx_comm *plx_comm_make(struct plx_comm *parent, struct plx_group *g, int ctx, const char *fn, int *rc_p)
{
    struct plx_comm *nc = plx_comm_new(parent, g, ctx);
    if (!nc) {
        plx_comm_free_context(ctx);
        *rc_p = plx_api_err(parent, fn, MPI_ERR_NO_MEM, "cannot allocate a communicator handle");
    }
    return nc;
}

#pragma weak MPI_Comm_size = PMPI_Comm_size
int PMPI_Comm_size(MPI_Comm comm, int *size)
{
    static const char fn[] = "MPI_Comm_size";
    struct plx_comm *c;
    int rc;
    plx_api_lock();
    if ((rc = plx_api_comm(comm, &c, fn)))
        goto out;
    if (!size) {
        rc = plx_api_null_arg(c, fn, "size");
        goto out;
    }
    *size = c->group->size;   /* c->size: the remote group's on an intercommunicator */
out:
    plx_api_unlock();
    return rc;
}

#pragma weak MPI_Comm_rank = PMPI_Comm_rank
int PMPI_Comm_rank(MPI_Comm comm, int *rank)
{
    static const char fn[] = "MPI_Comm_rank";
    struct plx_comm *c;
    int rc;
    plx_api_lock();
    if ((rc = plx_api_comm(comm, &c, fn)))
        goto out;
    if (!rank) {
        rc = plx_api_null_arg(c, fn, "rank");
        goto out;
    }
    *rank = c->rank;
out:
    plx_api_unlock();
    return rc;
}

/* Dup: same group, new id, copied attributes; hints from `info` when
 * use_info (MPI_INFO_NULL: none), else the parent's. */
static int plx_comm_dup_common(MPI_Comm comm, int use_info, MPI_Info info, MPI_Comm *newcomm, const char *fn)
{
    struct plx_comm *c, *nc;
    struct plx_info *in = NULL;
    int rc, ctx;
    plx_api_lock();
    if ((rc = plx_api_comm(comm, &c, fn)))
        goto out;
    if (use_info && info != MPI_INFO_NULL && (rc = plx_api_info(c, info, &in, fn, "info")))
        goto out;
    if (!newcomm) {
        rc = plx_api_null_arg(c, fn, "newcomm");
        goto out;
    }
    if (plx_comm_is_inter(c)) {
        if (!(nc = plx_intercomm_dup(c, fn, &rc)))
            goto out;
    } else {
        plx_status_t st = plx_comm_alloc_context(c, &ctx);
        if (PLX_IS_ERR(st)) {
            rc = plx_comm_status_err(c, fn, st, "agreeing on a context id");
            goto out;
        }
        if (!(nc = plx_comm_make(c, c->group, ctx, fn, &rc)))
            goto out;
    }
    int cb = plx_attr_copy_all(c, nc);
    if (cb != MPI_SUCCESS) {
        plx_comm_release(nc);   /* runs the delete callbacks of what was copied */
        if (plx_err_class(cb) > 0)
            rc = plx_api_err_code(c, cb);
        else
            rc = plx_api_err(c, fn, MPI_ERR_OTHER, "an attribute copy callback returned %d", cb);
        goto out;
    }
    struct plx_info *hints = use_info ? in : c->info;
    if (hints)
        nc->info = plx_info_dup(hints);
    rc = plx_comm_out(nc, newcomm);
out:
    plx_api_unlock();
    return rc;
}

#pragma weak MPI_Comm_dup = PMPI_Comm_dup
int PMPI_Comm_dup(MPI_Comm comm, MPI_Comm *newcomm)
{
    return plx_comm_dup_common(comm, 0, MPI_INFO_NULL, newcomm, "MPI_Comm_dup");
}

#pragma weak MPI_Comm_dup_with_info = PMPI_Comm_dup_with_info
int PMPI_Comm_dup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm)
{
    return plx_comm_dup_common(comm, 1, info, newcomm, "MPI_Comm_dup_with_info");
}

struct plx_split_member {
    int key;
    int rank;                   /* in the parent */
};

static int plx_split_cmp(const void *a, const void *b)
{
    const struct plx_split_member *x = a, *y = b;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    return (x->rank > y->rank) - (x->rank < y->rank);
}

/* Collective over c: members of my color ordered by (key, parent rank). */
int plx_api_comm_split(struct plx_comm *c, int color, int key, MPI_Comm *newcomm, const char *fn)
{
    int rc = MPI_SUCCESS, ctx;
    int mine[2] = { color, key };
    int *all = plx_malloc((size_t)c->size * sizeof mine);
    struct plx_split_member *m = NULL;
    int *lpids = NULL;
    plx_status_t st = plx_coll_allgather(mine, sizeof mine, all, c, PLX_COLL_TAG_DEFAULT);
    if (PLX_IS_ERR(st)) {
        rc = plx_comm_status_err(c, fn, st, "exchanging colors and keys");
        goto out;
    }
    st = plx_comm_alloc_context(c, &ctx);
    if (PLX_IS_ERR(st)) {
        rc = plx_comm_status_err(c, fn, st, "agreeing on a context id");
        goto out;
    }
    if (color == MPI_UNDEFINED) {
        plx_comm_free_context(ctx);
        *newcomm = MPI_COMM_NULL;
        goto out;
    }
    m = plx_malloc((size_t)c->size * sizeof *m);
    int n = 0;
    for (int r = 0; r < c->size; r++)
        if (all[2 * r] == color)
            m[n++] = (struct plx_split_member){ .key = all[2 * r + 1], .rank = r };
    qsort(m, (size_t)n, sizeof *m, plx_split_cmp);
    lpids = plx_malloc((size_t)n * sizeof(int));
    for (int i = 0; i < n; i++)
        lpids[i] = c->lpids[m[i].rank];
    struct plx_group *g = plx_group_new(n, lpids);
    if (!g) {
        plx_comm_free_context(ctx);
        rc = plx_api_err(c, fn, MPI_ERR_NO_MEM, "cannot allocate a group");
        goto out;
    }
    struct plx_comm *nc = plx_comm_make(c, g, ctx, fn, &rc);
    plx_group_release(g);       /* the communicator holds its own reference */
    if (nc)
        rc = plx_comm_out(nc, newcomm);
out:
    free(all);
    free(m);
    free(lpids);
    return rc;
}

#pragma weak MPI_Comm_split = PMPI_Comm_split
int PMPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm *newcomm)
{
    static const char fn[] = "MPI_Comm_split";
    struct plx_comm *c;
    int rc;
    plx_api_lock();
    if ((rc = plx_api_comm(comm, &c, fn)))
        goto out;
    if (color < 0 && color != MPI_UNDEFINED) {
        rc = plx_api_err(c, fn, MPI_ERR_ARG, "argument 'color' is %d, must be >= 0 or MPI_UNDEFINED", color);
        goto out;
    }
    if (!newcomm) {
        rc = plx_api_null_arg(c, fn, "newcomm");
        goto out;
    }
    if (plx_comm_is_inter(c))
        rc = plx_intercomm_split(c, color, key, newcomm, fn);
    else
        rc = plx_api_comm_split(c, color, key, newcomm, fn);
out:
    plx_api_unlock();
    return rc;
}

/* The color of this process's node for MPI_COMM_TYPE_SHARED and friends,
 * the same at every member on one node, whichever job it belongs to. Node
 * ids are per job (an added process of another job has one of its own), so
 * the members on my node are found by plx_proc_same_host (my job's by node
 * id, other jobs' by node name), and the color is the lowest rank among them:
 * nothing to exchange. On an intercommunicator the two groups are numbered
 * one after the other, the group of the process that comes first (in the
 * order of plx_proc_before, which both sides see alike) first, so both sides
 * agree. Within one job this splits exactly as the node ids did. */
static int plx_comm_node_color(const struct plx_comm *c)
{
    const struct plx_group *first = c->group, *second = c->remote_group;
    if (second && plx_proc_before(second->lpids[0], first->lpids[0])) {
        first = c->remote_group;
        second = c->group;
    }
    for (int i = 0; i < first->size; i++)
        if (plx_proc_same_host(first->lpids[i]))
            return i;
    for (int i = 0; second && i < second->size; i++)
        if (plx_proc_same_host(second->lpids[i]))
            return first->size + i;
    return MPI_UNDEFINED;       /* not reached: I am on my node */
}

#pragma weak MPI_Comm_split_type = PMPI_Comm_split_type
int PMPI_Comm_split_type(MPI_Comm comm, int split_type, int key, MPI_Info info, MPI_Comm *newcomm)
{
    static const char fn[] = "MPI_Comm_split_type";
    struct plx_comm *c;
    struct plx_info *in = NULL;
    int rc, color;
    plx_api_lock();
    if ((rc = plx_api_comm(comm, &c, fn)))
        goto out;
    if (info != MPI_INFO_NULL && (rc = plx_api_info(c, info, &in, fn, "info")))
        goto out;
    if (!newcomm) {
        rc = plx_api_null_arg(c, fn, "newcomm");
        goto out;
    }
    if (split_type == MPI_UNDEFINED) {
        color = MPI_UNDEFINED;
    } else if (split_type == MPI_COMM_TYPE_SHARED) {
        color = plx_comm_node_color(c);
    } else if (split_type == MPI_COMM_TYPE_HW_GUIDED || split_type == MPI_COMM_TYPE_RESOURCE_GUIDED) {
        /* MPI 4.0: the info's mpi_hw_resource_type names the domain; the one
         * Plexus knows is a node's shared memory; others give MPI_COMM_NULL.
         * MPI 4.1's RESOURCE_GUIDED reads the same key here. */
        const char *res = info != MPI_INFO_NULL ? plx_info_lookup(in, "mpi_hw_resource_type") : NULL;
        color = res && !strcmp(res, "mpi_shared_memory") ? plx_comm_node_color(c) : MPI_UNDEFINED;
    } else if (split_type == MPI_COMM_TYPE_HW_UNGUIDED) {
        /* a hardware domain strictly smaller than comm: the node, when comm spans several; else none */
        int spans = 0;
        for (int i = 0; i < c->group->size && !spans; i++)
            spans = !plx_proc_same_host(c->group->lpids[i]);
        color = spans ? plx_comm_node_color(c) : MPI_UNDEFINED;
    } else {
        rc = plx_api_err(c, fn, MPI_ERR_ARG,
                         "argument 'split_type' is %d, must be MPI_COMM_TYPE_SHARED (%d), _HW_GUIDED (%d), "
                         "_HW_UNGUIDED (%d), _RESOURCE_GUIDED (%d) or MPI_UNDEFINED", split_type,
                         MPI_COMM_TYPE_SHARED, MPI_COMM_TYPE_HW_GUIDED, MPI_COMM_TYPE_HW_UNGUIDED,
                         MPI_COMM_TYPE_RESOURCE_GUIDED);
        goto out;
    }
    /* on an intercommunicator: the members of both sides on my node */
    if (plx_comm_is_inter(c))
        rc = plx_intercomm_split(c, color, key, newcomm, fn);
    else
        rc = plx_api_comm_split(c, color, key, newcomm, fn);
out:
    plx_api_unlock();
    return rc;
}

/* MPI_ERR_GROUP unless every member of g belongs to c. */
static int plx_comm_check_subgroup(struct plx_comm *c, struct plx_group *g, const char *fn)
{
    if (g->size == 0)
        return MPI_SUCCESS;
    int *ranks = plx_malloc((size_t)g->size * sizeof(int));
    int *out = plx_malloc((size_t)g->size * sizeof(int));
    for (int i = 0; i < g->size; i++)
        ranks[i] = i;
    plx_group_translate(g, g->size, ranks, c->group, out);
    int bad = -1;
    for (int i = 0; i < g->size && bad < 0; i++)
        if (out[i] == MPI_UNDEFINED)
            bad = i;
    int rc = MPI_SUCCESS;
    if (bad >= 0)
        rc = plx_api_err(c, fn, MPI_ERR_GROUP,
                         "argument 'group' is not a subgroup of the communicator: its rank %d (world rank %d) is not a member",
                         bad, g->lpids[bad]);
    free(ranks);
    free(out);
    return rc;
}

#pragma weak MPI_Comm_create = PMPI_Comm_create
int PMPI_Comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm *newcomm)
{
    static const char fn[] = "MPI_Comm_create";
    struct plx_comm *c, *nc;
    struct plx_group *g;
    int rc, ctx;
    plx_api_lock();
    if ((rc = plx_api_comm(comm, &c, fn)) || (rc = plx_api_group(c, group, &g, fn, "group")))
        goto out;
    if (!newcomm) {
        rc = plx_api_null_arg(c, fn, "newcomm");
        goto out;
    }
    if ((rc = plx_comm_check_subgroup(c, g, fn)))
        goto out;
    if (plx_comm_is_inter(c)) {
        rc = plx_intercomm_create(c, g, newcomm, fn);
        goto out;
    }
    plx_status_t st = plx_comm_alloc_context(c, &ctx);
    if (PLX_IS_ERR(st)) {
        rc = plx_comm_status_err(c, fn, st, "agreeing on a context id");
        goto out;
    }
    if (g->rank == MPI_UNDEFINED) {
        plx_comm_free_context(ctx);
        *newcomm = MPI_COMM_NULL;
        goto out;
    }
    if ((nc = plx_comm_make(c, g, ctx, fn, &rc)))
        rc = plx_comm_out(nc, newcomm);
out:
    plx_api_unlock();
    return rc;
}

#pragma weak MPI_Comm_create_group = PMPI_Comm_create_group
int PMPI_Comm_create_group(MPI_Comm comm, MPI_Group group, int tag, MPI_Comm *newcomm)
{
    static const char fn[] = "MPI_Comm_create_group";
    struct plx_comm *c, *nc;
    struct plx_group *g;
    int rc, ctx;
    plx_api_lock();
    if ((rc = plx_api_intracomm(comm, &c, fn)) || (rc = plx_api_group(c, group, &g, fn, "group")))
        goto out;
    if (!newcomm) {
        rc = plx_api_null_arg(c, fn, "newcomm");
        goto out;
    }
    if (tag < 0) {
        rc = plx_api_err(c, fn, MPI_ERR_TAG, "argument 'tag' is %d, must be >= 0", tag);
        goto out;
    }
    if ((rc = plx_comm_check_subgroup(c, g, fn)))
        goto out;
    if (g->rank == MPI_UNDEFINED) {     /* not a member: nothing to take part in */
        *newcomm = MPI_COMM_NULL;
        goto out;
    }
    /* Only the group's members take part: the agreement runs over a
     * temporary communicator of the group in the parent's context, whose
     * packets name their members by their ranks in the parent (wire_ranks:
     * another group's call with this tag cannot match them). */
    int *wire = plx_malloc((size_t)g->size * sizeof *wire);
    for (int i = 0; i < g->size; i++)
        wire[i] = plx_group_rank_of_lpid(c->group, g->lpids[i]);
    struct plx_comm tmp;
    memset(&tmp, 0, sizeof tmp);
    tmp.obj = c->obj;
    tmp.context_id = c->context_id;
    tmp.rank = g->rank;
    tmp.size = g->size;
    tmp.group = g;
    tmp.lpids = g->lpids;
    tmp.wire_ranks = wire;
    tmp.errhandler = c->errhandler;
    memcpy(tmp.name, c->name, sizeof tmp.name);
    plx_status_t st = plx_comm_alloc_context_tag(&tmp, tag, &ctx);
    free(wire);
    if (PLX_IS_ERR(st)) {
        rc = plx_comm_status_err(c, fn, st, "agreeing on a context id");
        goto out;
    }
    if ((nc = plx_comm_make(c, g, ctx, fn, &rc)))
        rc = plx_comm_out(nc, newcomm);
out:
    plx_api_unlock();
    return rc;
}

#pragma weak MPI_Comm_free = PMPI_Comm_free
int PMPI_Comm_free(MPI_Comm *comm)
{
    static const char fn[] = "MPI_Comm_free";
    struct plx_comm *c;
    int rc;
    plx_api_lock();
    plx_api_check_init(fn);
    if (!comm) {
        rc = plx_api_null_arg(NULL, fn, "comm");
        goto out;
    }
    if ((rc = plx_api_comm(*comm, &c, fn)))
        goto out;
    if (c->obj.builtin) {
        rc = plx_api_err(c, fn, MPI_ERR_COMM, "argument 'comm' is %s, which cannot be freed",
                         c == plx_comm_world ? "MPI_COMM_WORLD" : "MPI_COMM_SELF");
        goto out;
    }
    int cb = plx_attr_delete_all(c);
    if (cb != MPI_SUCCESS) {
        /* The communicator stays valid, with the attributes not yet deleted. */
        if (plx_err_class(cb) > 0)
            rc = plx_api_err_code(c, cb);
        else
            rc = plx_api_err(c, fn, MPI_ERR_OTHER, "an attribute delete callback returned %d", cb);
        goto out;
    }
    *comm = MPI_COMM_NULL;
    plx_comm_release(c);
out:
    plx_api_unlock();
    return rc;
}

#pragma weak MPI_Comm_compare = PMPI_Comm_compare
int PMPI_Comm_compare(MPI_Comm comm1, MPI_Comm comm2, int *result)
{
    static const char fn[] = "MPI_Comm_compare";
    struct plx_comm *c1, *c2;
    int rc;
    plx_api_lock();
    if ((rc = plx_api_comm(comm1, &c1, fn)) || (rc = plx_api_comm(comm2, &c2, fn)))
        goto out;
    if (!result) {
        rc = plx_api_null_arg(c1, fn, "result");
        goto out;
    }
    if (c1 == c2) {
        *result = MPI_IDENT;
    } else if (plx_comm_is_inter(c1) != plx_comm_is_inter(c2)) {
        *result = MPI_UNEQUAL;
    } else if (plx_comm_is_inter(c1)) {
        /* both groups alike: congruent; both at least similar: similar */
        int l = plx_group_compare(c1->group, c2->group);
        int r = plx_group_compare(c1->remote_group, c2->remote_group);
        *result = l == MPI_IDENT && r == MPI_IDENT ? MPI_CONGRUENT
                  : l != MPI_UNEQUAL && r != MPI_UNEQUAL ? MPI_SIMILAR
                                                         : MPI_UNEQUAL;
    } else {
        int g = plx_group_compare(c1->group, c2->group);
        *result = g == MPI_IDENT ? MPI_CONGRUENT : g;
    }
out:
    plx_api_unlock();
    return rc;
}

#pragma weak MPIX_Comm_failure_ack = PMPIX_Comm_failure_ack
int PMPIX_Comm_failure_ack(MPI_Comm comm)
{
    struct plx_comm *c;
    plx_api_lock();
    int rc = plx_api_comm(comm, &c, "MPIX_Comm_failure_ack");
    if (rc == MPI_SUCCESS)
        plx_pt2pt_failure_ack(c);
    plx_api_unlock();
    return rc;
}

#pragma weak MPI_Comm_set_name = PMPI_Comm_set_name
int PMPI_Comm_set_name(MPI_Comm comm, const char *comm_name)
{
    static const char fn[] = "MPI_Comm_set_name";
    struct plx_comm *c;
    int rc;
    plx_api_lock();
    if ((rc = plx_api_comm(comm, &c, fn)))
        goto out;
    if (!comm_name) {
        rc = plx_api_null_arg(c, fn, "comm_name");
        goto out;
    }
    /* Longer names are truncated to MPI_MAX_OBJECT_NAME-1 characters. */
    size_t n = strnlen(comm_name, MPI_MAX_OBJECT_NAME - 1);
    memcpy(c->name, comm_name, n);
    c->name[n] = '\0';
out:
    plx_api_unlock();
    return rc;
}

#pragma weak MPI_Comm_get_name = PMPI_Comm_get_name
int PMPI_Comm_get_name(MPI_Comm comm, char *comm_name, int *resultlen)
{
    static const char fn[] = "MPI_Comm_get_name";
    struct plx_comm *c;
    int rc;
    if (comm == MPI_COMM_NULL && comm_name && resultlen) {     /* MPI 4.1: null handles have names */
        strcpy(comm_name, "MPI_COMM_NULL");
        *resultlen = (int)strlen(comm_name);
        return MPI_SUCCESS;
    }
    plx_api_lock();
    if ((rc = plx_api_comm(comm, &c, fn)))
        goto out;
    if (!comm_name) {
        rc = plx_api_null_arg(c, fn, "comm_name");
        goto out;
    }
    if (!resultlen) {
        rc = plx_api_null_arg(c, fn, "resultlen");
        goto out;
    }
    size_t n = strnlen(c->name, MPI_MAX_OBJECT_NAME - 1);
    memcpy(comm_name, c->name, n);
    comm_name[n] = '\0';
    *resultlen = (int)n;
out:
    plx_api_unlock();
    return rc;
}

#pragma weak MPI_Comm_group = PMPI_Comm_group
int PMPI_Comm_group(MPI_Comm comm, MPI_Group *group)
{
    static const char fn[] = "MPI_Comm_group";
    struct plx_comm *c;
    int rc;
    plx_api_lock();
    if ((rc = plx_api_comm(comm, &c, fn)))
        goto out;
    if (!group) {
        rc = plx_api_null_arg(c, fn, "group");
        goto out;
    }
    plx_group_addref(c->group);
    *group = c->group->obj.handle;
out:
    plx_api_unlock();
    return rc;
}

#pragma weak MPI_Comm_test_inter = PMPI_Comm_test_inter
int PMPI_Comm_test_inter(MPI_Comm comm, int *flag)
{
    static const char fn[] = "MPI_Comm_test_inter";
    struct plx_comm *c;
    int rc;
    plx_api_lock();
    if ((rc = plx_api_comm(comm, &c, fn)))
        goto out;
    if (!flag) {
        rc = plx_api_null_arg(c, fn, "flag");
        goto out;
    }
    *flag = plx_comm_is_inter(c);
out:
    plx_api_unlock();
    return rc;
}

#pragma weak MPI_Comm_set_info = PMPI_Comm_set_info
int PMPI_Comm_set_info(MPI_Comm comm, MPI_Info info)
{
    static const char fn[] = "MPI_Comm_set_info";
    struct plx_comm *c;
    struct plx_info *in;
    int rc;
    plx_api_lock();
    if ((rc = plx_api_comm(comm, &c, fn)))
        goto out;
    if (info == MPI_INFO_NULL)
        goto out;               /* no hints to change */
    if ((rc = plx_api_info(c, info, &in, fn, "info")))
        goto out;
    /* New values replace old ones key by key; other hints stay. */
    if (!c->info && !(c->info = plx_info_new())) {
        rc = plx_api_err(c, fn, MPI_ERR_NO_MEM, "cannot allocate an info object");
        goto out;
    }
    for (int i = 0; i < in->nkeys; i++)
        plx_info_set(c->info, in->entries[i].key, in->entries[i].value);
out:
    plx_api_unlock();
    return rc;
}

#pragma weak MPI_Comm_get_info = PMPI_Comm_get_info
int PMPI_Comm_get_info(MPI_Comm comm, MPI_Info *info_used)
{
    static const char fn[] = "MPI_Comm_get_info";
    struct plx_comm *c;
    int rc;
    plx_api_lock();
    if ((rc = plx_api_comm(comm, &c, fn)))
        goto out;
    if (!info_used) {
        rc = plx_api_null_arg(c, fn, "info_used");
        goto out;
    }
    struct plx_info *in = plx_info_dup(c->info);
    if (!in) {
        rc = plx_api_err(c, fn, MPI_ERR_NO_MEM, "cannot allocate an info object");
        goto out;
    }
    *info_used = in->obj.handle;
out:
    plx_api_unlock();
    return rc;
}
