/*
 * Smaller MPI 4.0 calls and the removed MPI-1 calls MPICH still ships:
 *   MPI_Info_create_env (before MPI_Init too), MPI_Info_get_string;
 *   MPI_ERRORS_ABORT (set and read back; "--abort" makes it fire: the job must
 *   end, with a message naming the handler and the call);
 *   MPI_Status_c2f/f2c/c2f08/f082c/f2f08/f082f, the F_STATUS_IGNORE markers;
 *   MPI_Grequest_start/complete: query, free and cancel callbacks, completion
 *   from another thread while MPI_Wait blocks;
 *   MPI_Address, MPI_Type_extent/lb/ub/hvector/hindexed/struct with MPI_LB and
 *   MPI_UB markers, with data moved through the types.
 */
#include "plx_test.h"
#include <pthread.h>

static int rank, size;

static void info_env(MPI_Info pre, char **argv)
{
    char v[MPI_MAX_INFO_VAL + 1];
    int flag = 0, len;
    /* made before MPI_Init from this command line */
    MPI_Info_get(pre, "command", MPI_MAX_INFO_VAL, v, &flag);
    PLX_CHECK(flag, "create_env before MPI_Init: 'command' set");
    PLX_CHECK_STR(v, argv[0], "create_env 'command'");
    MPI_Info_get(pre, "argv", MPI_MAX_INFO_VAL, v, &flag);
    PLX_CHECK(flag, "create_env 'argv' set");
    PLX_CHECK_STR(v, "alpha beta", "create_env 'argv'");
    MPI_Info_get(pre, "maxprocs", MPI_MAX_INFO_VAL, v, &flag);
    PLX_CHECK(flag, "create_env 'maxprocs' set");
    PLX_CHECK_EQ(atoi(v), size, "create_env 'maxprocs' before MPI_Init (from the launcher)");
    MPI_Info_free(&pre);

    MPI_Info info;
    char *args[] = {"prog", "x", "y z", NULL};
    PLX_CHECK_MPI(MPI_Info_create_env(3, args, &info));
    MPI_Info_get(info, "argv", MPI_MAX_INFO_VAL, v, &flag);
    PLX_CHECK_STR(v, "x y z", "create_env 'argv' after MPI_Init");
    MPI_Info_get(info, "thread_level", MPI_MAX_INFO_VAL, v, &flag);
    PLX_CHECK(flag && strncmp(v, "MPI_THREAD_", 11) == 0, "create_env 'thread_level'");
    MPI_Info_get_valuelen(info, "host", &len, &flag);
    PLX_CHECK(flag && len > 0, "create_env 'host'");

    /* MPI_Info_get_string: length query, truncation, exact fit, missing key */
    MPI_Info_set(info, "plx_key", "0123456789");
    int buflen = 0;
    PLX_CHECK_MPI(MPI_Info_get_string(info, "plx_key", &buflen, NULL, &flag));
    PLX_CHECK(flag, "get_string finds the key");
    PLX_CHECK_EQ(buflen, 11, "get_string length with the terminator");
    char small[5] = "zzzz";
    buflen = 5;
    PLX_CHECK_MPI(MPI_Info_get_string(info, "plx_key", &buflen, small, &flag));
    PLX_CHECK_STR(small, "0123", "get_string truncated to buflen-1");
    PLX_CHECK_EQ(buflen, 11, "get_string truncated: full length returned");
    char exact[11];
    buflen = 11;
    PLX_CHECK_MPI(MPI_Info_get_string(info, "plx_key", &buflen, exact, &flag));
    PLX_CHECK_STR(exact, "0123456789", "get_string exact fit");
    buflen = 7;
    strcpy(small, "keep");
    PLX_CHECK_MPI(MPI_Info_get_string(info, "no_such_key", &buflen, small, &flag));
    PLX_CHECK(!flag, "get_string missing key: flag false");
    PLX_CHECK_EQ(buflen, 7, "get_string missing key: buflen unchanged");
    PLX_CHECK_STR(small, "keep", "get_string missing key: value unchanged");
    buflen = -1;
    PLX_CHECK_ERR(MPI_Info_get_string(info, "plx_key", &buflen, small, &flag), MPI_ERR_ARG);
    buflen = 5;
    PLX_CHECK_ERR(MPI_Info_get_string(MPI_INFO_NULL, "plx_key", &buflen, small, &flag), MPI_ERR_INFO);
    PLX_CHECK_ERR(MPI_Info_get_string(info, "", &buflen, small, &flag), MPI_ERR_INFO_KEY);
    MPI_Info_free(&info);
}

static void errors_abort(void)
{
    MPI_Comm dup;
    MPI_Errhandler eh;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    PLX_CHECK_MPI(MPI_Comm_set_errhandler(dup, MPI_ERRORS_ABORT));
    PLX_CHECK_MPI(MPI_Comm_get_errhandler(dup, &eh));
    PLX_CHECK_EQ(eh, MPI_ERRORS_ABORT, "MPI_ERRORS_ABORT read back");
    PLX_CHECK_EQ(MPI_ERRORS_ABORT, 0x54000003, "MPI_ERRORS_ABORT has MPICH's value");
    MPI_Errhandler_free(&eh);
    MPI_Comm_free(&dup);
}

static void status_conv(void)
{
    MPI_Status c = {0}, back;
    MPI_Fint f[MPI_F_STATUS_SIZE];
    MPI_F08_status f08;
    int v = 7, n = 0;
    MPI_Sendrecv(&v, 1, MPI_INT, 0, 33, &n, 1, MPI_INT, 0, 33, MPI_COMM_SELF, &c);
    PLX_CHECK_MPI(MPI_Status_c2f(&c, f));
    PLX_CHECK_EQ(f[MPI_F_SOURCE], 0, "f_status[MPI_F_SOURCE]");
    PLX_CHECK_EQ(f[MPI_F_TAG], 33, "f_status[MPI_F_TAG]");
    PLX_CHECK_EQ(f[MPI_F_ERROR], c.MPI_ERROR, "f_status[MPI_F_ERROR]");
    memset(&back, 0xff, sizeof back);
    PLX_CHECK_MPI(MPI_Status_f2c(f, &back));
    int cnt = -1;
    MPI_Get_count(&back, MPI_INT, &cnt);
    PLX_CHECK_EQ(cnt, 1, "count after c2f/f2c");
    PLX_CHECK_EQ(back.MPI_TAG, 33, "tag after c2f/f2c");
    PLX_CHECK_MPI(MPI_Status_c2f08(&c, &f08));
    PLX_CHECK_EQ(f08.MPI_SOURCE, 0, "f08 source");
    PLX_CHECK_EQ(f08.MPI_TAG, 33, "f08 tag");
    memset(f, 0, sizeof f);
    PLX_CHECK_MPI(MPI_Status_f082f(&f08, f));
    PLX_CHECK_EQ(f[MPI_F_TAG], 33, "f08 -> f tag");
    memset(&f08, 0, sizeof f08);
    PLX_CHECK_MPI(MPI_Status_f2f08(f, &f08));
    memset(&back, 0, sizeof back);
    PLX_CHECK_MPI(MPI_Status_f082c(&f08, &back));
    MPI_Get_count(&back, MPI_INT, &cnt);
    PLX_CHECK_EQ(cnt, 1, "count after the round trip through f and f08");
    PLX_CHECK_EQ(back.MPI_SOURCE, 0, "source after the round trip");
    PLX_CHECK(MPI_F_STATUS_IGNORE != NULL && (void *)MPI_F_STATUS_IGNORE != (void *)MPI_F_STATUSES_IGNORE,
              "distinct Fortran ignore markers");
    PLX_CHECK_ERR(MPI_Status_c2f(MPI_STATUS_IGNORE, f), MPI_ERR_ARG);
    PLX_CHECK_ERR(MPI_Status_f2c(MPI_F_STATUS_IGNORE, &back), MPI_ERR_ARG);
    PLX_CHECK_ERR(MPI_Status_f082c(MPI_F08_STATUS_IGNORE, &back), MPI_ERR_ARG);
    PLX_CHECK_ERR(MPI_Status_c2f(&c, NULL), MPI_ERR_ARG);
}

/* --- generalized requests --- */

struct greq_state {
    int queried, freed, cancelled, cancel_complete;
    MPI_Request req;
};

static int greq_query(void *extra, MPI_Status *st)
{
    struct greq_state *g = extra;
    g->queried++;
    MPI_Status_set_elements(st, MPI_INT, 5);
    MPI_Status_set_cancelled(st, 0);
    st->MPI_SOURCE = 3;
    st->MPI_TAG = 99;
    return MPI_SUCCESS;
}

static int greq_free(void *extra)
{
    ((struct greq_state *)extra)->freed++;
    return MPI_SUCCESS;
}

static int greq_cancel(void *extra, int complete)
{
    struct greq_state *g = extra;
    g->cancelled++;
    g->cancel_complete = complete;
    return MPI_SUCCESS;
}

static void *greq_completer(void *arg)
{
    struct greq_state *g = arg;
    struct timespec ts = {0, 20 * 1000 * 1000};
    nanosleep(&ts, NULL);
    MPI_Grequest_complete(g->req);
    return NULL;
}

static void grequest(int provided)
{
    struct greq_state g = {0};
    MPI_Status st;
    int flag = 1;
    PLX_CHECK_MPI(MPI_Grequest_start(greq_query, greq_free, greq_cancel, &g, &g.req));
    PLX_CHECK_MPI(MPI_Test(&g.req, &flag, &st));
    PLX_CHECK(!flag, "generalized request incomplete before MPI_Grequest_complete");
    PLX_CHECK_EQ(g.queried, 0, "query_fn not called before completion");
    PLX_CHECK_MPI(MPI_Cancel(&g.req));
    PLX_CHECK_EQ(g.cancelled, 1, "cancel_fn called");
    PLX_CHECK_EQ(g.cancel_complete, 0, "cancel_fn told: not complete");
    PLX_CHECK_MPI(MPI_Grequest_complete(g.req));
    PLX_CHECK_MPI(MPI_Wait(&g.req, &st));
    PLX_CHECK(g.req == MPI_REQUEST_NULL, "wait frees the generalized request");
    PLX_CHECK_EQ(g.queried, 1, "query_fn called once");
    PLX_CHECK_EQ(g.freed, 1, "free_fn called once");
    int n = -1;
    MPI_Get_count(&st, MPI_INT, &n);
    PLX_CHECK_EQ(n, 5, "status count from query_fn");
    PLX_CHECK_EQ(st.MPI_SOURCE, 3, "status source from query_fn");
    PLX_CHECK_EQ(st.MPI_TAG, 99, "status tag from query_fn");

    /* freed before it completes: free_fn when it completes, no query */
    struct greq_state h = {0};
    PLX_CHECK_MPI(MPI_Grequest_start(greq_query, greq_free, greq_cancel, &h, &h.req));
    MPI_Request keep = h.req;
    PLX_CHECK_MPI(MPI_Request_free(&h.req));
    PLX_CHECK_EQ(h.freed, 0, "free_fn waits for completion");
    PLX_CHECK_MPI(MPI_Grequest_complete(keep));
    PLX_CHECK_EQ(h.freed, 1, "free_fn at completion of a freed request");
    PLX_CHECK_EQ(h.queried, 0, "no query for a freed request");

    /* completed by another thread while this one blocks in MPI_Wait */
    if (provided == MPI_THREAD_MULTIPLE) {
        struct greq_state t = {0};
        pthread_t th;
        PLX_CHECK_MPI(MPI_Grequest_start(greq_query, greq_free, greq_cancel, &t, &t.req));
        MPI_Request mine = t.req;
        pthread_create(&th, NULL, greq_completer, &t);
        PLX_CHECK_MPI(MPI_Wait(&mine, &st));
        pthread_join(th, NULL);
        PLX_CHECK_EQ(t.queried, 1, "threaded completion: queried");
        PLX_CHECK_EQ(t.freed, 1, "threaded completion: freed");
        PLX_CHECK_EQ(st.MPI_TAG, 99, "threaded completion: status");
    }
    PLX_CHECK_ERR(MPI_Grequest_complete(MPI_REQUEST_NULL), MPI_ERR_REQUEST);
}

/* --- removed MPI-1 calls --- */

struct rec {
    double d;
    int i[3];
    char c;
};

static void legacy(void)
{
    struct rec recs[4];
    MPI_Aint base, a_i, a_c;
    PLX_CHECK_MPI(MPI_Address(&recs[0], &base));
    MPI_Address(&recs[0].i, &a_i);
    MPI_Address(&recs[0].c, &a_c);
    PLX_CHECK_EQ(a_i - base, offsetof(struct rec, i), "MPI_Address difference");

    /* struct with an MPI_UB marker at sizeof(struct rec) and an MPI_LB at 0 */
    int bl[5] = {1, 1, 3, 1, 1};
    MPI_Aint disp[5] = {0, 0, a_i - base, a_c - base, sizeof(struct rec)};
    MPI_Datatype types[5] = {MPI_LB, MPI_DOUBLE, MPI_INT, MPI_CHAR, MPI_UB};
    MPI_Datatype rt;
    PLX_CHECK_MPI(MPI_Type_struct(5, bl, disp, types, &rt));
    MPI_Type_commit(&rt);
    MPI_Aint ext, lb, ub;
    PLX_CHECK_MPI(MPI_Type_extent(rt, &ext));
    PLX_CHECK_EQ(ext, sizeof(struct rec), "MPI_Type_extent with MPI_UB");
    PLX_CHECK_MPI(MPI_Type_lb(rt, &lb));
    PLX_CHECK_EQ(lb, 0, "MPI_Type_lb");
    PLX_CHECK_MPI(MPI_Type_ub(rt, &ub));
    PLX_CHECK_EQ(ub, sizeof(struct rec), "MPI_Type_ub");
    int sz;
    MPI_Type_size(rt, &sz);
    PLX_CHECK_EQ(sz, sizeof(double) + 3 * sizeof(int) + 1, "struct size excludes the markers");

    /* an MPI_LB beyond the data start moves the lower bound */
    int bl2[2] = {1, 2};
    MPI_Aint disp2[2] = {-8, 0};
    MPI_Datatype types2[2] = {MPI_LB, MPI_INT};
    MPI_Datatype lt;
    PLX_CHECK_MPI(MPI_Type_struct(2, bl2, disp2, types2, &lt));
    MPI_Type_lb(lt, &lb);
    MPI_Type_extent(lt, &ext);
    PLX_CHECK_EQ(lb, -8, "MPI_LB sets the lower bound");
    PLX_CHECK_EQ(ext, 8 + 2 * sizeof(int), "extent from MPI_LB to the data's end");
    MPI_Type_free(&lt);

    /* data through the struct type: 4 records between rank pairs */
    int peer = plx_pair_peer(rank, size);
    struct rec in[4];
    for (int k = 0; k < 4; k++) {
        recs[k].d = rank + k * 0.5;
        recs[k].i[0] = rank, recs[k].i[1] = k, recs[k].i[2] = -k;
        recs[k].c = (char)('a' + k);
        memset(&in[k], 0, sizeof in[k]);
    }
    MPI_Sendrecv(recs, 4, rt, peer, 1, in, 4, rt, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    int bad = 0;
    for (int k = 0; k < 4; k++)
        bad += in[k].d != peer + k * 0.5 || in[k].i[0] != peer || in[k].i[1] != k || in[k].i[2] != -k ||
               in[k].c != (char)('a' + k);
    PLX_CHECK_EQ(bad, 0, "records through MPI_Type_struct with MPI_LB/MPI_UB");
    MPI_Type_free(&rt);

    /* hvector and hindexed */
    MPI_Datatype hv, hi;
    PLX_CHECK_MPI(MPI_Type_hvector(3, 2, 4 * sizeof(int), MPI_INT, &hv));
    MPI_Type_commit(&hv);
    int blk[2] = {2, 1};
    MPI_Aint hd[2] = {sizeof(int), 5 * sizeof(int)};
    PLX_CHECK_MPI(MPI_Type_hindexed(2, blk, hd, MPI_INT, &hi));
    MPI_Type_commit(&hi);
    int src[12], dst[6], dst2[3];
    for (int i = 0; i < 12; i++)
        src[i] = rank * 100 + i;
    MPI_Sendrecv(src, 1, hv, peer, 2, dst, 6, MPI_INT, peer, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    int want[6] = {0, 1, 4, 5, 8, 9};
    bad = 0;
    for (int i = 0; i < 6; i++)
        bad += dst[i] != peer * 100 + want[i];
    PLX_CHECK_EQ(bad, 0, "data through MPI_Type_hvector");
    MPI_Sendrecv(src, 1, hi, peer, 3, dst2, 3, MPI_INT, peer, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    PLX_CHECK(dst2[0] == peer * 100 + 1 && dst2[1] == peer * 100 + 2 && dst2[2] == peer * 100 + 5,
              "data through MPI_Type_hindexed");
    MPI_Type_extent(hv, &ext);
    PLX_CHECK_EQ(ext, (2 * 4 + 2) * sizeof(int), "hvector extent");
    MPI_Type_free(&hv);
    MPI_Type_free(&hi);
    PLX_CHECK_ERR(MPI_Type_extent(MPI_DATATYPE_NULL, &ext), MPI_ERR_TYPE);
}

int main(int argc, char **argv)
{
    MPI_Info pre;
    char *myargv[] = {argv[0], "alpha", "beta", NULL};
    if (MPI_Info_create_env(3, myargv, &pre) != MPI_SUCCESS)
        plx_test_fail(__FILE__, __LINE__, "MPI_Info_create_env before MPI_Init failed");
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    plx_test_begin("mpi4_misc");
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc > 1 && strcmp(argv[1], "--abort") == 0) {
        /* MPI_ERRORS_ABORT must end the job on the first error */
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ABORT);
        int x = 0;
        MPI_Send(&x, 1, MPI_INT, size + 5, 0, MPI_COMM_WORLD);
        printf("mpi4_misc: still running after an error with MPI_ERRORS_ABORT\n");
        MPI_Finalize();
        return 0;
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    info_env(pre, myargv);
    errors_abort();
    status_conv();
    grequest(provided);
    legacy();
    return plx_test_finish();
}
