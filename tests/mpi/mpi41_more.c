/*
 * mpi41_more.c - MPI 4.1: MPI_Request_get_status_any/_all/_some,
 * MPI_Remove_error_class/_code/_string, MPI_Get_hw_resource_info and
 * MPI_COMM_TYPE_RESOURCE_GUIDED.
 *
 * get_status_*: receives from the ring neighbour that are not yet sent
 * report nothing done; after the sends (and a barrier) they report each
 * request with its source, tag and count, and the requests stay valid (a
 * later MPI_Waitall completes them, with the data); null and inactive
 * persistent requests count as "no active request". Error removal follows
 * the standard's order: a class with codes or a string, or a code with a
 * string, is refused; removed values are invalid codes afterwards. Null
 * handles are named: MPI_COMM_NULL, MPI_DATATYPE_NULL, MPI_WIN_NULL.
 */
#include "plx_test.h"

#define N 3

int main(int argc, char **argv)
{
    plx_test_init(&argc, &argv, "mpi41_more");
    int rank = plx_test_state()->rank, size = plx_test_state()->size;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;

    /* 1. MPI_Request_get_status_any/_all/_some */
    int in[N], out[N], flag = -1, idx = -7, outcount = -7, indices[N];
    MPI_Request rq[N];
    MPI_Status st[N], one;
    for (int i = 0; i < N; i++) {
        in[i] = -1;
        out[i] = rank * 100 + i;
        MPI_Irecv(&in[i], 1, MPI_INT, prev, 40 + i, MPI_COMM_WORLD, &rq[i]);
    }
    PLX_CHECK_MPI(MPI_Request_get_status_all(N, rq, &flag, st));
    PLX_CHECK_EQ(flag, 0, "get_status_all before the sends: not all done");
    PLX_CHECK_MPI(MPI_Request_get_status_any(N, rq, &idx, &flag, &one));
    PLX_CHECK(flag == 0 && idx == MPI_UNDEFINED, "get_status_any before the sends: none (flag %d idx %d)", flag, idx);
    PLX_CHECK_MPI(MPI_Request_get_status_some(N, rq, &outcount, indices, st));
    PLX_CHECK_EQ(outcount, 0, "get_status_some before the sends: 0 done");
    MPI_Barrier(MPI_COMM_WORLD);
    /* only the middle message is sent first */
    MPI_Send(&out[1], 1, MPI_INT, next, 41, MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);
    flag = 0;
    for (int t = 0; t < 100000 && !flag; t++)
        MPI_Request_get_status_any(N, rq, &idx, &flag, &one);
    PLX_CHECK(flag && idx == 1, "get_status_any finds the one done (flag %d idx %d src %d tag %d in %d %d %d)", flag, idx, one.MPI_SOURCE, one.MPI_TAG, in[0], in[1], in[2]);
    PLX_CHECK(one.MPI_SOURCE == prev && one.MPI_TAG == 41, "its status: source %d tag %d", one.MPI_SOURCE, one.MPI_TAG);
    PLX_CHECK(rq[1] != MPI_REQUEST_NULL, "the request is left alone");
    PLX_CHECK_MPI(MPI_Request_get_status_some(N, rq, &outcount, indices, st));
    PLX_CHECK(outcount == 1 && indices[0] == 1 && st[0].MPI_TAG == 41, "get_status_some: index 1 only");
    PLX_CHECK_MPI(MPI_Request_get_status_all(N, rq, &flag, MPI_STATUSES_IGNORE));
    PLX_CHECK_EQ(flag, 0, "get_status_all: two still pending");
    MPI_Barrier(MPI_COMM_WORLD);    /* every rank has looked before the others are sent */
    MPI_Send(&out[0], 1, MPI_INT, next, 40, MPI_COMM_WORLD);
    MPI_Send(&out[2], 1, MPI_INT, next, 42, MPI_COMM_WORLD);
    flag = 0;
    for (int t = 0; t < 1000000 && !flag; t++)
        MPI_Request_get_status_all(N, rq, &flag, st);
    PLX_CHECK_EQ(flag, 1, "get_status_all once all arrived");
    int ok = 1, cnt;
    for (int i = 0; i < N; i++) {
        MPI_Get_count(&st[i], MPI_INT, &cnt);
        ok &= st[i].MPI_SOURCE == prev && st[i].MPI_TAG == 40 + i && cnt == 1 && st[i].MPI_ERROR == MPI_SUCCESS;
    }
    PLX_CHECK(ok, "get_status_all statuses: sources, tags, counts");
    for (int i = 0; i < N; i++)
        PLX_CHECK(rq[i] != MPI_REQUEST_NULL, "request %d still there", i);
    PLX_CHECK_MPI(MPI_Waitall(N, rq, MPI_STATUSES_IGNORE));
    ok = 1;
    for (int i = 0; i < N; i++)
        ok &= in[i] == prev * 100 + i;
    PLX_CHECK(ok, "the data, after MPI_Waitall");
    /* all null / inactive: any gives flag 1 and MPI_UNDEFINED; some gives MPI_UNDEFINED */
    MPI_Request pr[2] = { MPI_REQUEST_NULL, MPI_REQUEST_NULL };
    MPI_Recv_init(&in[0], 1, MPI_INT, prev, 50, MPI_COMM_WORLD, &pr[1]);
    PLX_CHECK_MPI(MPI_Request_get_status_any(2, pr, &idx, &flag, &one));
    PLX_CHECK(flag == 1 && idx == MPI_UNDEFINED, "get_status_any over null/inactive: flag 1, MPI_UNDEFINED");
    PLX_CHECK_MPI(MPI_Request_get_status_some(2, pr, &outcount, indices, st));
    PLX_CHECK_EQ(outcount, MPI_UNDEFINED, "get_status_some over null/inactive");
    PLX_CHECK_MPI(MPI_Request_get_status_all(2, pr, &flag, st));
    PLX_CHECK_EQ(flag, 1, "get_status_all over null/inactive");
    MPI_Request_free(&pr[1]);
    PLX_CHECK_ERR(MPI_Request_get_status_all(-1, rq, &flag, st), MPI_ERR_COUNT);
    PLX_CHECK_ERR(MPI_Request_get_status_any(1, rq, NULL, &flag, &one), MPI_ERR_ARG);
    MPI_Request bad = (MPI_Request)0x12345;
    PLX_CHECK_ERR(MPI_Request_get_status_some(1, &bad, &outcount, indices, st), MPI_ERR_REQUEST);

    /* 2. removing error classes, codes, strings */
    int cls, c1, c2, got;
    char s[MPI_MAX_ERROR_STRING];
    int len;
    PLX_CHECK_MPI(MPI_Add_error_class(&cls));
    PLX_CHECK_MPI(MPI_Add_error_code(cls, &c1));
    PLX_CHECK_MPI(MPI_Add_error_code(cls, &c2));
    PLX_CHECK_MPI(MPI_Add_error_string(c1, "code one"));
    PLX_CHECK_MPI(MPI_Add_error_string(cls, "the class"));
    PLX_CHECK_ERR(MPI_Remove_error_class(cls), MPI_ERR_ARG);       /* codes and a string left */
    PLX_CHECK_ERR(MPI_Remove_error_code(c1), MPI_ERR_ARG);         /* string left */
    PLX_CHECK_MPI(MPI_Remove_error_code(c2));                      /* no string: fine */
    PLX_CHECK_ERR(MPI_Remove_error_code(c2), MPI_ERR_ARG);         /* already gone */
    PLX_CHECK_ERR(MPI_Error_class(c2, &got), MPI_ERR_ARG);         /* an invalid code now */
    PLX_CHECK_MPI(MPI_Remove_error_string(c1));
    MPI_Error_string(c1, s, &len);
    PLX_CHECK_EQ(len, 0, "string removed: empty");
    PLX_CHECK_MPI(MPI_Remove_error_code(c1));
    PLX_CHECK_ERR(MPI_Remove_error_class(cls), MPI_ERR_ARG);       /* its string still there */
    PLX_CHECK_MPI(MPI_Remove_error_string(cls));
    PLX_CHECK_MPI(MPI_Remove_error_class(cls));
    PLX_CHECK_ERR(MPI_Add_error_code(cls, &c1), MPI_ERR_ARG);      /* the class is gone */
    PLX_CHECK_ERR(MPI_Remove_error_class(MPI_ERR_TAG), MPI_ERR_ARG);  /* predefined */
    PLX_CHECK_ERR(MPI_Remove_error_code(MPI_ERR_OTHER), MPI_ERR_ARG);
    PLX_CHECK_ERR(MPI_Remove_error_string(MPI_ERR_ARG), MPI_ERR_ARG);
    int rc = MPI_Remove_error_class(MPI_ERR_TAG);
    MPI_Error_string(rc, s, &len);
    PLX_CHECK(strstr(s, "MPI_Remove_error_class") && strstr(s, "errorclass") && strstr(s, "rank"),
              "message names call and argument: %s", s);

    /* 3. MPI_Get_hw_resource_info and the resource-guided split */
    MPI_Info hw;
    char v[MPI_MAX_INFO_VAL];
    int fl = 0;
    PLX_CHECK_MPI(MPI_Get_hw_resource_info(&hw));
    MPI_Info_get(hw, "mpi_hw_resource_type", sizeof v - 1, v, &fl);
    PLX_CHECK(fl && !strcmp(v, "mpi_shared_memory"), "hw info names mpi_shared_memory");
    MPI_Info_get(hw, "plexus_cpus_online", sizeof v - 1, v, &fl);
    PLX_CHECK(fl && atoi(v) >= 1, "hw info: cpus online '%s'", v);
    PLX_CHECK_ERR(MPI_Get_hw_resource_info(NULL), MPI_ERR_ARG);
    MPI_Comm rg;
    PLX_CHECK_MPI(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_RESOURCE_GUIDED, 0, MPI_INFO_NULL, &rg));
    PLX_CHECK(rg == MPI_COMM_NULL, "RESOURCE_GUIDED without info: MPI_COMM_NULL");
    PLX_CHECK_MPI(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_RESOURCE_GUIDED, rank, hw, &rg));
    int rs = -1, rr = -1;
    PLX_CHECK(rg != MPI_COMM_NULL, "RESOURCE_GUIDED with the hw info: a communicator");
    if (rg != MPI_COMM_NULL) {
        MPI_Comm_size(rg, &rs);
        MPI_Comm_rank(rg, &rr);
        PLX_CHECK(rs == size && rr == rank, "one node: every rank, same order (%d %d)", rs, rr);
        int sum = 0;
        MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, rg);
        PLX_CHECK_EQ(sum, size * (size - 1) / 2, "allreduce on it");
        MPI_Comm_free(&rg);
    }
    MPI_Info_free(&hw);

    /* 4. names of null handles, the MPI 4.0/4.1 error classes, MPI_Status_set_elements_c */
    char nm[MPI_MAX_OBJECT_NAME];
    int nl = -1;
    PLX_CHECK_MPI(MPI_Comm_get_name(MPI_COMM_NULL, nm, &nl));
    PLX_CHECK(!strcmp(nm, "MPI_COMM_NULL") && nl == 13, "name of MPI_COMM_NULL: %s", nm);
    PLX_CHECK_MPI(MPI_Type_get_name(MPI_DATATYPE_NULL, nm, &nl));
    PLX_CHECK(!strcmp(nm, "MPI_DATATYPE_NULL") && nl == 17, "name of MPI_DATATYPE_NULL: %s", nm);
    nl = -1;
    PLX_CHECK_MPI(MPI_Win_get_name(MPI_WIN_NULL, nm, &nl));
    PLX_CHECK(!strcmp(nm, "MPI_WIN_NULL") && nl == 12, "name of MPI_WIN_NULL: %s", nm);
    static const int classes[] = { MPI_ERR_PROC_ABORTED, MPI_ERR_VALUE_TOO_LARGE, MPI_ERR_ERRHANDLER };
    for (int i = 0; i < 3; i++) {
        int c = -1;
        PLX_CHECK_MPI(MPI_Error_class(classes[i], &c));
        MPI_Error_string(classes[i], s, &len);
        PLX_CHECK(c == classes[i] && len > 0, "error class %d known, string '%s'", classes[i], s);
    }
    MPI_Status es;
    MPI_Count ec = -1;
    PLX_CHECK_MPI(MPI_Status_set_elements_c(&es, MPI_INT, (MPI_Count)3 << 32));
    PLX_CHECK_MPI(MPI_Get_elements_c(&es, MPI_INT, &ec));
    PLX_CHECK_EQ(ec, (MPI_Count)3 << 32, "MPI_Status_set_elements_c above an int");
    PLX_CHECK_ERR(MPI_Status_set_elements_c(&es, MPI_INT, -1), MPI_ERR_COUNT);
    return plx_test_finish();
}
