/*
 * Sessions (MPI 4.0) without MPI_Init: two sessions, the process sets
 * "mpi://WORLD" and "mpi://SELF" and their info, communicators made from
 * them with MPI_Comm_create_from_group and used (an allreduce over the
 * WORLD one, messages on the SELF one), session error handlers (a user
 * handler called with the session and the code), then MPI_Session_finalize
 * of both, after which the library is finalized (mpiexec checks that every
 * rank finalized).
 */
#include "plx_test.h"

static int handler_calls, handler_code;
static MPI_Session handler_session;

static void on_error(MPI_Session *s, int *code, ...)
{
    handler_calls++;
    handler_code = *code;
    handler_session = *s;
}

int main(int argc, char **argv)
{
    MPI_Session s1, s2;
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "thread_level", "MPI_THREAD_MULTIPLE");
    PLX_CHECK_MPI(MPI_Session_init(info, MPI_ERRORS_RETURN, &s1));
    MPI_Info_free(&info);
    PLX_CHECK_MPI(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s2));
    PLX_CHECK(s1 != s2 && s1 != MPI_SESSION_NULL, "two distinct sessions");

    int n = 0;
    PLX_CHECK_MPI(MPI_Session_get_num_psets(s1, MPI_INFO_NULL, &n));
    PLX_CHECK(n >= 2, "at least mpi://WORLD and mpi://SELF");
    int have_world = 0, have_self = 0;
    for (int i = 0; i < n; i++) {
        int len = 0;
        PLX_CHECK_MPI(MPI_Session_get_nth_pset(s1, MPI_INFO_NULL, i, &len, NULL));
        char *name = plx_malloc((size_t)len);
        PLX_CHECK_MPI(MPI_Session_get_nth_pset(s1, MPI_INFO_NULL, i, &len, name));
        PLX_CHECK_EQ(strlen(name) + 1, len, "pset name length");
        have_world |= !strcmp(name, "mpi://WORLD");
        have_self |= !strcmp(name, "mpi://SELF");
        free(name);
    }
    PLX_CHECK(have_world && have_self, "mpi://WORLD and mpi://SELF listed");

    MPI_Info pinfo;
    char v[64];
    int flag = 0;
    PLX_CHECK_MPI(MPI_Session_get_pset_info(s1, "mpi://SELF", &pinfo));
    MPI_Info_get(pinfo, "mpi_size", sizeof v - 1, v, &flag);
    PLX_CHECK(flag && atoi(v) == 1, "mpi://SELF has mpi_size 1");
    MPI_Info_free(&pinfo);
    PLX_CHECK_MPI(MPI_Session_get_pset_info(s1, "mpi://WORLD", &pinfo));
    MPI_Info_get(pinfo, "mpi_size", sizeof v - 1, v, &flag);
    int wsize = atoi(v);
    PLX_CHECK(flag && wsize >= 1, "mpi://WORLD has an mpi_size");
    MPI_Info_free(&pinfo);
    PLX_CHECK_MPI(MPI_Session_get_info(s1, &pinfo));
    MPI_Info_get(pinfo, "thread_level", sizeof v - 1, v, &flag);
    PLX_CHECK(flag && !strcmp(v, "MPI_THREAD_MULTIPLE"), "session info: the thread level asked for");
    MPI_Info_free(&pinfo);

    /* a communicator from mpi://WORLD */
    MPI_Group wg, sg;
    MPI_Comm world, self;
    PLX_CHECK_MPI(MPI_Group_from_session_pset(s1, "mpi://WORLD", &wg));
    int gsize = 0, rank = -1;
    MPI_Group_size(wg, &gsize);
    PLX_CHECK_EQ(gsize, wsize, "WORLD group size = pset mpi_size");
    PLX_CHECK_MPI(MPI_Comm_create_from_group(wg, "org.plexus.test.world", MPI_INFO_NULL, MPI_ERRORS_RETURN, &world));
    MPI_Comm_rank(world, &rank);
    plx_test_state()->rank = rank;
    int size = 0;
    MPI_Comm_size(world, &size);
    PLX_CHECK_EQ(size, wsize, "communicator from mpi://WORLD has every process");
    long mine = rank + 1, sum = 0;
    PLX_CHECK_MPI(MPI_Allreduce(&mine, &sum, 1, MPI_LONG, MPI_SUM, world));
    PLX_CHECK_EQ(sum, (long)size * (size + 1) / 2, "allreduce over the session's WORLD communicator");
    /* ring message */
    int token = -1;
    PLX_CHECK_MPI(MPI_Sendrecv(&rank, 1, MPI_INT, (rank + 1) % size, 4, &token, 1, MPI_INT, (rank + size - 1) % size,
                               4, world, MPI_STATUS_IGNORE));
    PLX_CHECK_EQ(token, (rank + size - 1) % size, "ring message on the session's communicator");

    /* a communicator from mpi://SELF, in the second session */
    PLX_CHECK_MPI(MPI_Group_from_session_pset(s2, "mpi://SELF", &sg));
    MPI_Group_size(sg, &gsize);
    PLX_CHECK_EQ(gsize, 1, "SELF group size");
    PLX_CHECK_MPI(MPI_Comm_create_from_group(sg, "org.plexus.test.self", MPI_INFO_NULL, MPI_ERRORS_RETURN, &self));
    MPI_Comm_size(self, &size);
    PLX_CHECK_EQ(size, 1, "communicator from mpi://SELF");
    int a = 41 + rank, b = 0;
    PLX_CHECK_MPI(MPI_Sendrecv(&a, 1, MPI_INT, 0, 1, &b, 1, MPI_INT, 0, 1, self, MPI_STATUS_IGNORE));
    PLX_CHECK_EQ(b, a, "message to self on the SELF communicator");
    MPI_Errhandler eh;
    MPI_Comm_get_errhandler(world, &eh);
    PLX_CHECK_EQ(eh, MPI_ERRORS_RETURN, "the errhandler given to MPI_Comm_create_from_group");
    MPI_Errhandler_free(&eh);

    /* session error handlers */
    MPI_Errhandler mine_eh;
    PLX_CHECK_MPI(MPI_Session_create_errhandler(on_error, &mine_eh));
    PLX_CHECK_MPI(MPI_Session_set_errhandler(s2, mine_eh));
    PLX_CHECK_MPI(MPI_Errhandler_free(&mine_eh));
    MPI_Group bad;
    int rc = MPI_Group_from_session_pset(s2, "mpi://NOWHERE", &bad);
    PLX_CHECK(rc != MPI_SUCCESS, "an unknown process set is an error");
    PLX_CHECK_EQ(handler_calls, 1, "session error handler called");
    PLX_CHECK_EQ(handler_session, s2, "session error handler gets the session");
    PLX_CHECK_EQ(handler_code, rc, "session error handler gets the code");
    PLX_CHECK_MPI(MPI_Session_call_errhandler(s2, MPI_ERR_OTHER));
    PLX_CHECK_EQ(handler_code, MPI_ERR_OTHER, "MPI_Session_call_errhandler");
    PLX_CHECK_MPI(MPI_Session_get_errhandler(s1, &eh));
    PLX_CHECK_EQ(eh, MPI_ERRORS_RETURN, "MPI_Session_get_errhandler");
    MPI_Errhandler_free(&eh);
    int cls = -1;
    /* a null session: raised on MPI_COMM_SELF (MPI_ERRORS_ARE_FATAL by default; the
     * library runs, so set it to return) */
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    rc = MPI_Session_get_num_psets(MPI_SESSION_NULL, MPI_INFO_NULL, &n);
    MPI_Error_class(rc, &cls);
    PLX_CHECK_EQ(cls, MPI_ERR_SESSION, "MPI_SESSION_NULL: MPI_ERR_SESSION");
    rc = MPI_Session_get_nth_pset(s1, MPI_INFO_NULL, 99, &n, v);
    MPI_Error_class(rc, &cls);
    PLX_CHECK_EQ(cls, MPI_ERR_ARG, "pset index out of range");

    /* report through the session's communicator, then end */
    long long checks = plx_test_state()->checks, total = 0;
    MPI_Reduce(&checks, &total, 1, MPI_LONG_LONG, MPI_SUM, 0, world);
    if (rank == 0)
        printf("sessions: %lld checks passed (np=%d)\n", total, wsize);
    MPI_Group_free(&wg);
    MPI_Group_free(&sg);
    MPI_Comm_free(&world);
    MPI_Comm_free(&self);
    if (MPI_Session_finalize(&s2) != MPI_SUCCESS || s2 != MPI_SESSION_NULL)
        plx_test_fail(__FILE__, __LINE__, "MPI_Session_finalize of the second session");
    if (MPI_Session_finalize(&s1) != MPI_SUCCESS)
        plx_test_fail(__FILE__, __LINE__, "MPI_Session_finalize of the last session");
    return 0;
}
