/*
 * MPI_Intercomm_create_from_groups (MPI 4.0): an intercommunicator from two
 * disjoint groups, with no parent communicator, as the sessions model needs.
 *
 * Built from calls that exist already, each collective over what it needs:
 * the union of both groups becomes a communicator (MPI_Comm_create_group on
 * the processes of MPI_COMM_WORLD, tag hashed from the string tag, as
 * MPI_Comm_create_from_group does), it is split into the two sides, and
 * MPI_Intercomm_create joins the sides with the union as peer communicator.
 * Both sides must compute the same union order without talking: the side
 * whose leader has the lower world rank comes first. Costs three context
 * agreements; the two temporary communicators are freed before returning.
 *
 * Every argument check is local (each process holds both groups), so a bad
 * argument is reported on every process that was given it, without waiting.
 * Limit: members must be processes of this job's MPI_COMM_WORLD (groups of
 * processes joined by connect/accept or spawn are refused, MPI_ERR_GROUP).
 */
#include <stdlib.h>
#include <string.h>
#include "api/api.h"
#include "core/runtime.h"

#pragma weak MPI_Intercomm_create_from_groups = PMPI_Intercomm_create_from_groups

/* Each member's world rank; -1 on success, else the index of a member that
 * is not in MPI_COMM_WORLD. */
static int plx_icg_world_ranks(MPI_Group g, MPI_Group world, int n, int *out)
{
    int *idx = calloc((size_t)n + 1, sizeof(int));
    if (!idx)
        return 0;
    for (int i = 0; i < n; i++)
        idx[i] = i;
    int bad = -1;
    if (PMPI_Group_translate_ranks(g, n, idx, world, out) != MPI_SUCCESS)
        bad = 0;
    for (int i = 0; bad < 0 && i < n; i++)
        if (out[i] == MPI_UNDEFINED)
            bad = i;
    free(idx);
    return bad;
}

static int plx_icg_cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

int PMPI_Intercomm_create_from_groups(MPI_Group local_group, int local_leader, MPI_Group remote_group,
                                      int remote_leader, const char *stringtag, MPI_Info info,
                                      MPI_Errhandler errhandler, MPI_Comm *newintercomm)
{
    static const char fn[] = "MPI_Intercomm_create_from_groups";
    plx_api_check_init(fn);
    struct plx_group *lg, *rg;
    struct plx_info *in;
    int rc, lsize = 0, rsize = 0, myrank = MPI_UNDEFINED;
    plx_api_lock();
    if ((rc = plx_api_group(NULL, local_group, &lg, fn, "local_group")) ||
        (rc = plx_api_group(NULL, remote_group, &rg, fn, "remote_group")))
        goto out_locked;
    lsize = lg->size;
    rsize = rg->size;
    myrank = lg->rank;
    if (!stringtag) {
        rc = plx_api_null_arg(NULL, fn, "stringtag");
    } else if (strnlen(stringtag, MPI_MAX_STRINGTAG_LEN + 1) > MPI_MAX_STRINGTAG_LEN) {
        rc = plx_api_err(NULL, fn, MPI_ERR_ARG, "argument 'stringtag' is longer than MPI_MAX_STRINGTAG_LEN (%d)",
                         MPI_MAX_STRINGTAG_LEN);
    } else if (!newintercomm) {
        rc = plx_api_null_arg(NULL, fn, "newintercomm");
    } else if (info != MPI_INFO_NULL && (rc = plx_api_info(NULL, info, &in, fn, "info"))) {
        /* raised */
    } else if (!plx_obj_lookup(&plx_errhandler_tab, errhandler)) {
        rc = plx_api_err(NULL, fn, MPI_ERR_ARG, "argument 'errhandler' is not a valid error handler (0x%x)",
                         (unsigned)errhandler);
    } else if (myrank == MPI_UNDEFINED) {
        rc = plx_api_err(NULL, fn, MPI_ERR_GROUP, "the calling process is not a member of 'local_group'");
    } else if (local_leader < 0 || local_leader >= lsize) {
        rc = plx_api_err(NULL, fn, MPI_ERR_RANK, "argument 'local_leader' is %d but local_group has %d members",
                         local_leader, lsize);
    } else if (remote_leader < 0 || remote_leader >= rsize) {
        rc = plx_api_err(NULL, fn, MPI_ERR_RANK, "argument 'remote_leader' is %d but remote_group has %d members",
                         remote_leader, rsize);
    }
out_locked:
    plx_api_unlock();
    if (rc)
        return rc;

    MPI_Group world = MPI_GROUP_NULL, ug = MPI_GROUP_NULL;
    MPI_Comm ucomm = MPI_COMM_NULL, lcomm = MPI_COMM_NULL;
    int *lw = malloc(((size_t)lsize + rsize + 1) * sizeof(int)), *rw = lw ? lw + lsize : NULL;
    int *sorted = malloc(((size_t)lsize + rsize + 1) * sizeof(int));
    if (!lw || !sorted) {
        rc = plx_api_err(NULL, fn, MPI_ERR_NO_MEM, "cannot allocate %d ranks", lsize + rsize);
        goto out;
    }
    if ((rc = PMPI_Comm_group(MPI_COMM_WORLD, &world)))
        goto out;
    int bad;
    if ((bad = plx_icg_world_ranks(local_group, world, lsize, lw)) >= 0 ||
        (bad = plx_icg_world_ranks(remote_group, world, rsize, rw)) >= 0) {
        rc = plx_api_err(NULL, fn, MPI_ERR_GROUP,
                         "member %d of a group is not a process of MPI_COMM_WORLD (not supported)", bad);
        goto out;
    }
    /* disjoint: sort all world ranks, look for a neighbour pair */
    memcpy(sorted, lw, ((size_t)lsize + rsize) * sizeof(int));
    qsort(sorted, (size_t)lsize + rsize, sizeof(int), plx_icg_cmp_int);
    for (int i = 1; i < lsize + rsize; i++)
        if (sorted[i] == sorted[i - 1]) {
            rc = plx_api_err(NULL, fn, MPI_ERR_GROUP,
                             "world rank %d is in both 'local_group' and 'remote_group' (they must be disjoint, "
                             "nor repeat a member)", sorted[i]);
            goto out;
        }
    int local_first = lw[local_leader] < rw[remote_leader];
    if ((rc = PMPI_Group_union(local_first ? local_group : remote_group, local_first ? remote_group : local_group,
                               &ug)))
        goto out;
    /* the string tag hashed (FNV-1a, another seed than MPI_Comm_create_from_group's) */
    unsigned h = 2166136261u ^ 0x49434721u;
    for (const char *p = stringtag; *p; p++)
        h = (h ^ (unsigned char)*p) * 16777619u;
    if ((rc = PMPI_Comm_create_group(MPI_COMM_WORLD, ug, (int)(h & 0x3fffffff), &ucomm)))
        goto out;
    PMPI_Comm_set_errhandler(ucomm, MPI_ERRORS_RETURN);
    /* the sides, in the order of their groups */
    if ((rc = PMPI_Comm_split(ucomm, local_first ? 0 : 1, myrank, &lcomm)))
        goto out;
    PMPI_Comm_set_errhandler(lcomm, MPI_ERRORS_RETURN);
    int rl_u = remote_leader + (local_first ? lsize : 0);   /* the remote leader's rank in the union */
    MPI_Comm ic = MPI_COMM_NULL;
    if ((rc = PMPI_Intercomm_create(lcomm, local_leader, ucomm, rl_u, 0, &ic)))
        goto out;
    if ((rc = PMPI_Comm_set_errhandler(ic, errhandler)) == MPI_SUCCESS && info != MPI_INFO_NULL)
        rc = PMPI_Comm_set_info(ic, info);
    if (rc == MPI_SUCCESS)
        *newintercomm = ic;
    else
        PMPI_Comm_free(&ic);
out:
    if (lcomm != MPI_COMM_NULL)
        PMPI_Comm_free(&lcomm);
    if (ucomm != MPI_COMM_NULL)
        PMPI_Comm_free(&ucomm);
    if (ug != MPI_GROUP_NULL)
        PMPI_Group_free(&ug);
    if (world != MPI_GROUP_NULL)
        PMPI_Group_free(&world);
    free(lw);
    free(sorted);
    return rc;
}
