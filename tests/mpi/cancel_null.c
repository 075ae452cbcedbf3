/*
 * cancel_null.c - MPI_Cancel of MPI_REQUEST_NULL is an error of class
 * MPI_ERR_REQUEST (as MPI_Request_free of it is, and as in MPICH and Open MPI),
 * not a success; the handle is left as it was. An inactive persistent request
 * may be cancelled (nothing to do), and cancelling a real pending receive works.
 */
#include "plx_test.h"

int main(int argc, char **argv)
{
    plx_test_init(&argc, &argv, "cancel_null");
    PLX_CHECK_MPI(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));

    MPI_Request req = MPI_REQUEST_NULL;
    PLX_CHECK_ERR(MPI_Cancel(&req), MPI_ERR_REQUEST);
    PLX_CHECK(req == MPI_REQUEST_NULL, "MPI_Cancel(MPI_REQUEST_NULL) left the handle alone");
    PLX_CHECK_ERR(MPI_Request_free(&req), MPI_ERR_REQUEST);

    /* the error message names the call */
    int rc = MPI_Cancel(&req), len = 0;
    char msg[MPI_MAX_ERROR_STRING] = "";
    MPI_Error_string(rc, msg, &len);
    PLX_CHECK(plx_lib_is("MPICH") || plx_lib_is("Open MPI") || strstr(msg, "MPI_Cancel") != NULL,
              "the message names MPI_Cancel (got \"%s\")", msg);

    /* a real pending receive is cancelled */
    int buf = 0, cancelled = 0;
    MPI_Status st;
    PLX_CHECK_MPI(MPI_Irecv(&buf, 1, MPI_INT, MPI_ANY_SOURCE, 4242, MPI_COMM_WORLD, &req));
    PLX_CHECK_MPI(MPI_Cancel(&req));
    PLX_CHECK_MPI(MPI_Wait(&req, &st));
    MPI_Test_cancelled(&st, &cancelled);
    PLX_CHECK_EQ(cancelled, 1, "the pending receive was cancelled");
    PLX_CHECK(req == MPI_REQUEST_NULL, "MPI_Wait freed the cancelled request");

    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    return plx_test_finish();
}
