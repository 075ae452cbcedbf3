/*
 * intercomm_groups.c - MPI_Intercomm_create_from_groups (MPI 4.0).
 *
 * Three splits of MPI_COMM_WORLD into two disjoint groups (even/odd ranks,
 * rank 0 against the rest, the upper half against the lower half with the
 * groups listed in reverse), each with leaders that are not rank 0 of their
 * group where possible. On each intercommunicator: it is one (test_inter),
 * sizes and local rank, the remote group equals the group given, messages
 * between every pair of sides' ranks carry the sender's world rank, and an
 * MPI_Allreduce sums the other side's world ranks. Then the error handler
 * and info passed in, and bad input: leaders out of range, a caller outside
 * local_group, overlapping groups, null groups, string tag and output.
 */
#include "plx_test.h"

static int world_rank_in(MPI_Group g, int r)
{
    MPI_Group w;
    int out = -1;
    MPI_Comm_group(MPI_COMM_WORLD, &w);
    MPI_Group_translate_ranks(g, 1, &r, w, &out);
    MPI_Group_free(&w);
    return out;
}

static void check_ic(MPI_Comm ic, MPI_Group lg, MPI_Group rg, const char *what)
{
    int rank = plx_test_state()->rank;
    int inter = 0, lsize, rsize, myr, gsize, grank, cmp = -1;
    PLX_CHECK_MPI(MPI_Comm_test_inter(ic, &inter));
    PLX_CHECK(inter, "%s: an intercommunicator", what);
    MPI_Comm_size(ic, &lsize);
    MPI_Comm_remote_size(ic, &rsize);
    MPI_Comm_rank(ic, &myr);
    MPI_Group_size(lg, &gsize);
    MPI_Group_rank(lg, &grank);
    PLX_CHECK_EQ(lsize, gsize, "local size = local_group's");
    PLX_CHECK_EQ(myr, grank, "rank = rank in local_group");
    MPI_Group_size(rg, &gsize);
    PLX_CHECK_EQ(rsize, gsize, "remote size = remote_group's");
    MPI_Group got;
    MPI_Comm_remote_group(ic, &got);
    MPI_Group_compare(got, rg, &cmp);
    PLX_CHECK_EQ(cmp, MPI_IDENT, "the remote group is remote_group, same order");
    MPI_Group_free(&got);
    MPI_Comm_group(ic, &got);
    MPI_Group_compare(got, lg, &cmp);
    PLX_CHECK_EQ(cmp, MPI_IDENT, "the local group is local_group, same order");
    MPI_Group_free(&got);
    /* every rank sends its world rank to every remote rank */
    MPI_Request *rq = malloc(sizeof(MPI_Request) * 2 * (size_t)rsize);
    int *in = malloc(sizeof(int) * (size_t)rsize), *out = malloc(sizeof(int) * (size_t)rsize);
    for (int r = 0; r < rsize; r++) {
        out[r] = rank * 1000 + r;
        MPI_Irecv(&in[r], 1, MPI_INT, r, 7, ic, &rq[r]);
        MPI_Isend(&out[r], 1, MPI_INT, r, 7, ic, &rq[rsize + r]);
    }
    PLX_CHECK_MPI(MPI_Waitall(2 * rsize, rq, MPI_STATUSES_IGNORE));
    int ok = 1;
    for (int r = 0; r < rsize; r++)
        ok &= in[r] == world_rank_in(rg, r) * 1000 + myr;
    PLX_CHECK(ok, "%s: a message from every remote rank, with its world rank and my rank", what);
    /* allreduce over an intercommunicator: the sum of the remote side's values */
    int sum = -1, expect = 0;
    for (int r = 0; r < rsize; r++)
        expect += world_rank_in(rg, r);
    PLX_CHECK_MPI(MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, ic));
    PLX_CHECK_EQ(sum, expect, "allreduce gives the remote side's sum of world ranks");
    free(rq);
    free(in);
    free(out);
}

static MPI_Group group_of(const int *ranks, int n)
{
    MPI_Group w, g;
    MPI_Comm_group(MPI_COMM_WORLD, &w);
    MPI_Group_incl(w, n, ranks, &g);
    MPI_Group_free(&w);
    return g;
}

int main(int argc, char **argv)
{
    plx_test_init(&argc, &argv, "intercomm_groups");
    int rank = plx_test_state()->rank, size = plx_test_state()->size;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    int *a = malloc(sizeof(int) * (size_t)size), *b = malloc(sizeof(int) * (size_t)size);
    MPI_Comm ic;
    for (int split = 0; split < 3 && size >= 2; split++) {
        int na = 0, nb = 0;
        for (int r = 0; r < size; r++) {
            int in_a = split == 0 ? r % 2 == 0 : split == 1 ? r == 0 : r >= size / 2;
            if (in_a)
                a[na++] = r;
            else
                b[nb++] = r;
        }
        if (split == 2) {       /* groups listed in reverse world order */
            for (int i = 0; i < na / 2; i++) { int t = a[i]; a[i] = a[na - 1 - i]; a[na - 1 - i] = t; }
            for (int i = 0; i < nb / 2; i++) { int t = b[i]; b[i] = b[nb - 1 - i]; b[nb - 1 - i] = t; }
        }
        MPI_Group ga = group_of(a, na), gb = group_of(b, nb);
        int mine_a = 0;
        for (int i = 0; i < na; i++)
            mine_a |= a[i] == rank;
        int la = na - 1, lb = nb > 1 ? 1 : 0;   /* leaders: last of a, second of b */
        char tag[32];
        snprintf(tag, sizeof tag, "split-%d", split);
        if (mine_a)
            PLX_CHECK_MPI(MPI_Intercomm_create_from_groups(ga, la, gb, lb, tag, MPI_INFO_NULL, MPI_ERRORS_RETURN, &ic));
        else
            PLX_CHECK_MPI(MPI_Intercomm_create_from_groups(gb, lb, ga, la, tag, MPI_INFO_NULL, MPI_ERRORS_RETURN, &ic));
        char what[32];
        snprintf(what, sizeof what, "split %d", split);
        check_ic(ic, mine_a ? ga : gb, mine_a ? gb : ga, what);
        if (split == 0) {       /* merging it gives back every process */
            MPI_Comm m;
            int msize = -1;
            PLX_CHECK_MPI(MPI_Intercomm_merge(ic, !mine_a, &m));
            MPI_Comm_size(m, &msize);
            PLX_CHECK_EQ(msize, size, "merged intercommunicator has every process");
            MPI_Comm_free(&m);
        }
        MPI_Comm_free(&ic);
        MPI_Group_free(&ga);
        MPI_Group_free(&gb);
    }

    /* the error handler and info given are the new communicator's */
    if (size >= 2) {
        int lo = rank < size / 2 || size == 1;
        for (int i = 0; i < size; i++)
            (i < size / 2 ? a : b)[i < size / 2 ? i : i - size / 2] = i;
        MPI_Group ga = group_of(a, size / 2), gb = group_of(b, size - size / 2);
        MPI_Info info;
        MPI_Info_create(&info);
        MPI_Info_set(info, "mpi_assert_no_any_tag", "true");
        PLX_CHECK_MPI(MPI_Intercomm_create_from_groups(lo ? ga : gb, 0, lo ? gb : ga, 0, "eh-info", info,
                                                       MPI_ERRORS_ARE_FATAL, &ic));
        MPI_Errhandler eh;
        MPI_Comm_get_errhandler(ic, &eh);
        PLX_CHECK(eh == MPI_ERRORS_ARE_FATAL, "the error handler passed is the communicator's");
        MPI_Errhandler_free(&eh);
        MPI_Info used;
        char val[32] = "";
        int flag = 0;
        PLX_CHECK_MPI(MPI_Comm_get_info(ic, &used));
        MPI_Info_get(used, "mpi_assert_no_any_tag", sizeof val - 1, val, &flag);
        PLX_CHECK(flag && strcmp(val, "true") == 0, "the info passed is the communicator's (flag %d, '%s')", flag, val);
        MPI_Info_free(&used);
        MPI_Info_free(&info);
        MPI_Comm_free(&ic);
        MPI_Group_free(&ga);
        MPI_Group_free(&gb);
    }

    /* bad input: every check is local, so each rank can try alone */
    MPI_Group self, wg, other = MPI_GROUP_EMPTY;
    MPI_Comm_group(MPI_COMM_SELF, &self);
    MPI_Comm_group(MPI_COMM_WORLD, &wg);
    if (size >= 2) {
        int o = (rank + 1) % size;
        other = group_of(&o, 1);
    }
    ic = MPI_COMM_NULL;
    PLX_CHECK_ERR(MPI_Intercomm_create_from_groups(self, 1, other, 0, "x", MPI_INFO_NULL, MPI_ERRORS_RETURN, &ic),
                  MPI_ERR_RANK);
    PLX_CHECK_ERR(MPI_Intercomm_create_from_groups(self, -1, other, 0, "x", MPI_INFO_NULL, MPI_ERRORS_RETURN, &ic),
                  MPI_ERR_RANK);
    PLX_CHECK_ERR(MPI_Intercomm_create_from_groups(self, 0, other, 5, "x", MPI_INFO_NULL, MPI_ERRORS_RETURN, &ic),
                  MPI_ERR_RANK);
    PLX_CHECK_ERR(MPI_Intercomm_create_from_groups(self, 0, self, 0, "x", MPI_INFO_NULL, MPI_ERRORS_RETURN, &ic),
                  MPI_ERR_GROUP);
    PLX_CHECK_ERR(MPI_Intercomm_create_from_groups(wg, 0, self, 0, "x", MPI_INFO_NULL, MPI_ERRORS_RETURN, &ic),
                  MPI_ERR_GROUP);
    if (size >= 2)      /* the caller is not in local_group */
        PLX_CHECK_ERR(MPI_Intercomm_create_from_groups(other, 0, self, 0, "x", MPI_INFO_NULL, MPI_ERRORS_RETURN,
                                                       &ic), MPI_ERR_GROUP);
    PLX_CHECK_ERR(MPI_Intercomm_create_from_groups(MPI_GROUP_NULL, 0, self, 0, "x", MPI_INFO_NULL,
                                                   MPI_ERRORS_RETURN, &ic), MPI_ERR_GROUP);
    PLX_CHECK_ERR(MPI_Intercomm_create_from_groups(self, 0, MPI_GROUP_NULL, 0, "x", MPI_INFO_NULL,
                                                   MPI_ERRORS_RETURN, &ic), MPI_ERR_GROUP);
    PLX_CHECK_ERR(MPI_Intercomm_create_from_groups(self, 0, other, 0, NULL, MPI_INFO_NULL, MPI_ERRORS_RETURN, &ic),
                  MPI_ERR_ARG);
    PLX_CHECK_ERR(MPI_Intercomm_create_from_groups(self, 0, other, 0, "x", MPI_INFO_NULL, MPI_ERRORS_RETURN, NULL),
                  MPI_ERR_ARG);
    PLX_CHECK_ERR(MPI_Intercomm_create_from_groups(self, 0, other, 0, "x", MPI_INFO_NULL, MPI_ERRHANDLER_NULL, &ic),
                  MPI_ERR_ARG);
    PLX_CHECK(ic == MPI_COMM_NULL, "no communicator made by a failed call");
    /* the message names the call and the argument */
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0;
    int rc = MPI_Intercomm_create_from_groups(self, 3, other, 0, "x", MPI_INFO_NULL, MPI_ERRORS_RETURN, &ic);
    MPI_Error_string(rc, msg, &len);
    PLX_CHECK(strstr(msg, "MPI_Intercomm_create_from_groups") && strstr(msg, "local_leader") && strstr(msg, "rank"),
              "message names call, argument, rank: %s", msg);
    if (other != MPI_GROUP_EMPTY)
        MPI_Group_free(&other);
    MPI_Group_free(&self);
    MPI_Group_free(&wg);
    free(a);
    free(b);
    return plx_test_finish();
}
