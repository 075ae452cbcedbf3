/*
 * errhandler.c - error handlers and error classes.
 *
 * With MPI_ERRORS_RETURN each erroneous call returns a code of the right class:
 * bad rank, bad tag, negative count, MPI_DATATYPE_NULL, MPI_COMM_NULL, invalid
 * requests, NULL buffer with count > 0, truncation (and no byte written past the
 * receive buffer). A user error handler is called with the communicator and the
 * code, is inherited by Comm_dup, and Comm_call_errhandler invokes it. Error_string
 * and Error_class on every predefined class; Add_error_class/code/string round trip.
 */
#include "plx_test.h"

static int rank, size, peer;

struct handler_log {
    int calls;
    MPI_Comm comm;
    int code;
};
static struct handler_log hlog;

static void record_handler(MPI_Comm *comm, int *code, ...)
{
    hlog.calls++;
    hlog.comm = *comm;
    hlog.code = *code;
}

static int class_of(int code)
{
    int c = -1;
    MPI_Error_class(code, &c);
    return c;
}

static void test_argument_errors(MPI_Comm comm)
{
    int buf[4] = {1, 2, 3, 4}, tag_ub, *pub, flag, bad_tag;
    MPI_Request req = MPI_REQUEST_NULL;
    MPI_Status st;

    PLX_CHECK_MPI(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &pub, &flag));
    tag_ub = *pub;
    bad_tag = MPI_ANY_TAG == -2 ? -3 : -2;

    /* Ranks */
    PLX_CHECK_ERR(MPI_Send(buf, 1, MPI_INT, size, 0, comm), MPI_ERR_RANK);
    PLX_CHECK_ERR(MPI_Send(buf, 1, MPI_INT, -7, 0, comm), MPI_ERR_RANK);
    PLX_CHECK_ERR(MPI_Send(buf, 1, MPI_INT, MPI_ANY_SOURCE, 0, comm), MPI_ERR_RANK);
    PLX_CHECK_ERR(MPI_Recv(buf, 1, MPI_INT, size + 3, 0, comm, &st), MPI_ERR_RANK);
    PLX_CHECK_ERR(MPI_Isend(buf, 1, MPI_INT, size, 0, comm, &req), MPI_ERR_RANK);
    PLX_CHECK_ERR(MPI_Irecv(buf, 1, MPI_INT, -7, 0, comm, &req), MPI_ERR_RANK);

    /* Tags */
    PLX_CHECK_ERR(MPI_Send(buf, 1, MPI_INT, rank, -1, comm), MPI_ERR_TAG);
    PLX_CHECK_ERR(MPI_Send(buf, 1, MPI_INT, rank, MPI_ANY_TAG, comm), MPI_ERR_TAG);
    if (tag_ub < 0x7fffffff)
        PLX_CHECK_ERR(MPI_Send(buf, 1, MPI_INT, rank, tag_ub + 1, comm), MPI_ERR_TAG);
    PLX_CHECK_ERR(MPI_Recv(buf, 1, MPI_INT, rank, bad_tag, comm, &st), MPI_ERR_TAG);
    PLX_CHECK_ERR(MPI_Irecv(buf, 1, MPI_INT, rank, bad_tag, comm, &req), MPI_ERR_TAG);

    /* Counts */
    PLX_CHECK_ERR(MPI_Send(buf, -1, MPI_INT, rank, 0, comm), MPI_ERR_COUNT);
    PLX_CHECK_ERR(MPI_Recv(buf, -5, MPI_INT, rank, 0, comm, &st), MPI_ERR_COUNT);
    PLX_CHECK_ERR(MPI_Isend(buf, -1, MPI_INT, rank, 0, comm, &req), MPI_ERR_COUNT);

    /* Datatypes */
    PLX_CHECK_ERR(MPI_Send(buf, 1, MPI_DATATYPE_NULL, rank, 0, comm), MPI_ERR_TYPE);
    PLX_CHECK_ERR(MPI_Recv(buf, 1, MPI_DATATYPE_NULL, rank, 0, comm, &st), MPI_ERR_TYPE);
    {
        int sz = -1;
        PLX_CHECK_ERR(MPI_Type_size(MPI_DATATYPE_NULL, &sz), MPI_ERR_TYPE);
    }

    /* NULL buffer with a non-zero count */
    PLX_CHECK_ERR(MPI_Send(NULL, 4, MPI_INT, rank, 0, comm), MPI_ERR_BUFFER);
    PLX_CHECK_ERR(MPI_Recv(NULL, 4, MPI_INT, rank, 0, comm, &st), MPI_ERR_BUFFER);
    /* ... but NULL with count 0 is fine. */
    PLX_CHECK_MPI(MPI_Sendrecv(NULL, 0, MPI_INT, rank, 5, NULL, 0, MPI_INT, rank, 5, comm, &st));
    PLX_CHECK_STATUS(st, rank, 5, 0);
}

static void test_comm_null(void)
{
    int buf = 0, n = -1;
    MPI_Status st;

    /* Errors without a (valid) communicator go to MPI_COMM_WORLD's handler in
     * MPI-3.1 (MPI_COMM_SELF's in MPI-4.0): both are set to ERRORS_RETURN. */
    PLX_CHECK_ERR(MPI_Send(&buf, 1, MPI_INT, 0, 0, MPI_COMM_NULL), MPI_ERR_COMM);
    PLX_CHECK_ERR(MPI_Recv(&buf, 1, MPI_INT, 0, 0, MPI_COMM_NULL, &st), MPI_ERR_COMM);
    PLX_CHECK_ERR(MPI_Comm_size(MPI_COMM_NULL, &n), MPI_ERR_COMM);
    PLX_CHECK_ERR(MPI_Comm_rank(MPI_COMM_NULL, &n), MPI_ERR_COMM);
    PLX_CHECK_ERR(MPI_Barrier(MPI_COMM_NULL), MPI_ERR_COMM);
}

static void test_request_errors(void)
{
    MPI_Request req = MPI_REQUEST_NULL;

    PLX_CHECK_ERR(MPI_Request_free(&req), MPI_ERR_REQUEST);
    PLX_CHECK_ERR(MPI_Start(&req), MPI_ERR_REQUEST);
    {
        MPI_Request two[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
        PLX_CHECK_ERR(MPI_Startall(2, two), MPI_ERR_REQUEST);
    }
}

/* Truncation: the error class, and the bytes after the receive buffer untouched. */
static void test_truncate(MPI_Comm comm)
{
    enum { GUARD = 64 };
    const size_t sizes[] = {32, 4000, 300000};
    const size_t recv_len[] = {16, 1000, 65536};

    for (int k = 0; k < 3; k++) {
        size_t n = sizes[k], r = recv_len[k];
        unsigned char *sbuf = plx_malloc(n), *rbuf = plx_malloc(r + 2 * GUARD);
        MPI_Request sreq;
        MPI_Status st;
        int rc, cnt = -1;

        plx_fill(sbuf, n, plx_seed((uint32_t)rank, 1, (uint32_t)k, 0));
        memset(rbuf, 0xA5, r + 2 * GUARD);

        /* Blocking receive, message from my pair peer. */
        PLX_CHECK_MPI(MPI_Isend(sbuf, (int)n, MPI_BYTE, peer, 20 + k, comm, &sreq));
        rc = MPI_Recv(rbuf + GUARD, (int)r, MPI_BYTE, peer, 20 + k, comm, &st);
        PLX_CHECK(rc != MPI_SUCCESS && class_of(rc) == MPI_ERR_TRUNCATE,
                  "Recv of %zu bytes into %zu: class (got %d, expected MPI_ERR_TRUNCATE = %d)", n, r,
                  class_of(rc), MPI_ERR_TRUNCATE);
        PLX_CHECK_BYTES(rbuf, GUARD, 0xA5, "guard before truncated receive buffer");
        PLX_CHECK_BYTES(rbuf + GUARD + r, GUARD, 0xA5, "guard after truncated receive buffer");
        PLX_CHECK_MPI(MPI_Wait(&sreq, MPI_STATUS_IGNORE));

        /* Nonblocking, completed by Waitall with a good receive alongside. */
        {
            MPI_Request reqs[2], sreqs[2];
            MPI_Status sts[2];
            int ok = -1;
            memset(rbuf, 0x5A, r + 2 * GUARD);
            PLX_CHECK_MPI(MPI_Irecv(rbuf + GUARD, (int)r, MPI_BYTE, peer, 30 + k, comm, &reqs[0]));
            PLX_CHECK_MPI(MPI_Irecv(&ok, 1, MPI_INT, peer, 40 + k, comm, &reqs[1]));
            PLX_CHECK_MPI(MPI_Isend(sbuf, (int)n, MPI_BYTE, peer, 30 + k, comm, &sreqs[0]));
            PLX_CHECK_MPI(MPI_Isend(&rank, 1, MPI_INT, peer, 40 + k, comm, &sreqs[1]));
            rc = MPI_Waitall(2, reqs, sts);
            PLX_CHECK_EQ(class_of(rc), MPI_ERR_IN_STATUS, "Waitall with a truncated receive");
            PLX_CHECK_EQ(class_of(sts[0].MPI_ERROR), MPI_ERR_TRUNCATE, "status.MPI_ERROR of the truncated receive");
            /* The other request either completed or is still pending (MPI-3.1 3.7.5). */
            PLX_CHECK(sts[1].MPI_ERROR == MPI_SUCCESS || class_of(sts[1].MPI_ERROR) == MPI_ERR_PENDING,
                      "status.MPI_ERROR of the good receive is MPI_SUCCESS or MPI_ERR_PENDING (got %d)",
                      sts[1].MPI_ERROR);
            if (sts[1].MPI_ERROR != MPI_SUCCESS)
                PLX_CHECK_MPI(MPI_Wait(&reqs[1], &sts[1]));
            else
                PLX_CHECK(reqs[1] == MPI_REQUEST_NULL, "completed request set to MPI_REQUEST_NULL");
            PLX_CHECK_EQ(ok, peer, "the good receive alongside a truncated one");
            PLX_CHECK_EQ(sts[0].MPI_SOURCE, peer, "truncated receive: status source");
            PLX_CHECK_EQ(sts[0].MPI_TAG, 30 + k, "truncated receive: status tag");
            PLX_CHECK_BYTES(rbuf, GUARD, 0x5A, "guard before truncated Irecv buffer");
            PLX_CHECK_BYTES(rbuf + GUARD + r, GUARD, 0x5A, "guard after truncated Irecv buffer");
            PLX_CHECK_MPI(MPI_Waitall(2, sreqs, MPI_STATUSES_IGNORE));
        }

        /* Communication goes on normally afterwards. */
        memset(rbuf, 0, r + 2 * GUARD);
        PLX_CHECK_MPI(MPI_Sendrecv(sbuf, (int)r, MPI_BYTE, peer, 50, rbuf + GUARD, (int)r, MPI_BYTE, peer, 50,
                                   comm, &st));
        MPI_Get_count(&st, MPI_BYTE, &cnt);
        PLX_CHECK_EQ(cnt, r, "exact-size receive after a truncation");
        PLX_CHECK_PATTERN(rbuf + GUARD, r, plx_seed((uint32_t)peer, 1, (uint32_t)k, 0),
                          "exact-size receive after a truncation");
        free(sbuf);
        free(rbuf);
    }
}

static void test_user_handler(void)
{
    MPI_Errhandler eh, got;
    MPI_Comm c, c2;
    int buf = 0, rc, mycls, mycode;

    PLX_CHECK_MPI(MPI_Comm_create_errhandler(record_handler, &eh));
    PLX_CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &c));
    PLX_CHECK_MPI(MPI_Comm_set_errhandler(c, eh));
    PLX_CHECK_MPI(MPI_Errhandler_free(&eh));
    PLX_CHECK(eh == MPI_ERRHANDLER_NULL, "Errhandler_free sets MPI_ERRHANDLER_NULL");

    /* The handler stays attached after the user's handle is freed. */
    memset(&hlog, 0, sizeof hlog);
    rc = MPI_Send(&buf, 1, MPI_INT, size + 1, 0, c);
    PLX_CHECK_EQ(hlog.calls, 1, "user errhandler called once for a bad rank");
    PLX_CHECK(hlog.comm == c, "user errhandler gets the communicator of the failed call");
    PLX_CHECK_EQ(class_of(hlog.code), MPI_ERR_RANK, "user errhandler gets a code of class MPI_ERR_RANK");
    PLX_CHECK_EQ(class_of(rc), MPI_ERR_RANK, "call returns the code after the handler returns");

    /* Comm_get_errhandler returns it; WORLD's is untouched. */
    PLX_CHECK_MPI(MPI_Comm_get_errhandler(c, &got));
    PLX_CHECK(got != MPI_ERRHANDLER_NULL && got != MPI_ERRORS_RETURN && got != MPI_ERRORS_ARE_FATAL,
              "Comm_get_errhandler returns the user handler");
    /* Setting what we got on another comm installs the same function. */
    PLX_CHECK_MPI(MPI_Comm_dup(MPI_COMM_SELF, &c2));
    PLX_CHECK_MPI(MPI_Comm_set_errhandler(c2, got));
    PLX_CHECK_MPI(MPI_Errhandler_free(&got));
    memset(&hlog, 0, sizeof hlog);
    rc = MPI_Send(&buf, -3, MPI_INT, 0, 0, c2);
    PLX_CHECK_EQ(hlog.calls, 1, "handler from Comm_get_errhandler works on another comm");
    PLX_CHECK(hlog.comm == c2, "... and gets that comm");
    PLX_CHECK_EQ(class_of(hlog.code), MPI_ERR_COUNT, "... with MPI_ERR_COUNT");
    PLX_CHECK_MPI(MPI_Comm_free(&c2));

    /* Inherited by Comm_dup. */
    PLX_CHECK_MPI(MPI_Comm_dup(c, &c2));
    memset(&hlog, 0, sizeof hlog);
    rc = MPI_Send(&buf, 1, MPI_INT, rank, -1, c2);
    PLX_CHECK_EQ(hlog.calls, 1, "errhandler inherited by Comm_dup");
    PLX_CHECK(hlog.comm == c2, "inherited handler gets the dup");
    PLX_CHECK_EQ(class_of(hlog.code), MPI_ERR_TAG, "inherited handler: MPI_ERR_TAG");
    PLX_CHECK_MPI(MPI_Comm_free(&c2));

    /* Comm_call_errhandler with a user-defined code. */
    PLX_CHECK_MPI(MPI_Add_error_class(&mycls));
    PLX_CHECK_MPI(MPI_Add_error_code(mycls, &mycode));
    memset(&hlog, 0, sizeof hlog);
    PLX_CHECK_MPI(MPI_Comm_call_errhandler(c, mycode));
    PLX_CHECK_EQ(hlog.calls, 1, "Comm_call_errhandler calls the handler");
    PLX_CHECK(hlog.comm == c, "Comm_call_errhandler passes the communicator");
    PLX_CHECK_EQ(hlog.code, mycode, "Comm_call_errhandler passes the code");

    /* A successful call does not invoke the handler. */
    memset(&hlog, 0, sizeof hlog);
    PLX_CHECK_MPI(MPI_Sendrecv(&buf, 1, MPI_INT, rank, 1, &rc, 1, MPI_INT, rank, 1, c, MPI_STATUS_IGNORE));
    PLX_CHECK_EQ(hlog.calls, 0, "no handler call for a successful operation");
    PLX_CHECK_MPI(MPI_Comm_free(&c));
}

static void test_predefined_handlers(void)
{
    MPI_Errhandler eh;
    MPI_Comm c;

    PLX_CHECK_MPI(MPI_Comm_get_errhandler(MPI_COMM_WORLD, &eh));
    PLX_CHECK(eh == MPI_ERRORS_ARE_FATAL, "default errhandler of WORLD is MPI_ERRORS_ARE_FATAL");
    PLX_CHECK_MPI(MPI_Errhandler_free(&eh));
    PLX_CHECK_MPI(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    PLX_CHECK_MPI(MPI_Comm_get_errhandler(MPI_COMM_WORLD, &eh));
    PLX_CHECK(eh == MPI_ERRORS_RETURN, "Comm_get_errhandler after setting MPI_ERRORS_RETURN");
    PLX_CHECK_MPI(MPI_Errhandler_free(&eh));
    /* A dup inherits MPI_ERRORS_RETURN. */
    PLX_CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &c));
    PLX_CHECK_MPI(MPI_Comm_get_errhandler(c, &eh));
    PLX_CHECK(eh == MPI_ERRORS_RETURN, "dup inherits MPI_ERRORS_RETURN");
    PLX_CHECK_MPI(MPI_Errhandler_free(&eh));
    PLX_CHECK_MPI(MPI_Comm_free(&c));
}

static void test_strings_and_classes(void)
{
    static const int classes[] = {
        MPI_SUCCESS, MPI_ERR_BUFFER, MPI_ERR_COUNT, MPI_ERR_TYPE, MPI_ERR_TAG, MPI_ERR_COMM,
        MPI_ERR_RANK, MPI_ERR_REQUEST, MPI_ERR_ROOT, MPI_ERR_GROUP, MPI_ERR_OP, MPI_ERR_TOPOLOGY,
        MPI_ERR_DIMS, MPI_ERR_ARG, MPI_ERR_UNKNOWN, MPI_ERR_TRUNCATE, MPI_ERR_OTHER, MPI_ERR_INTERN,
        MPI_ERR_PENDING, MPI_ERR_IN_STATUS, MPI_ERR_ACCESS, MPI_ERR_AMODE, MPI_ERR_ASSERT,
        MPI_ERR_BAD_FILE, MPI_ERR_BASE, MPI_ERR_CONVERSION, MPI_ERR_DISP, MPI_ERR_DUP_DATAREP,
        MPI_ERR_FILE_EXISTS, MPI_ERR_FILE_IN_USE, MPI_ERR_FILE, MPI_ERR_INFO_KEY,
        MPI_ERR_INFO_NOKEY, MPI_ERR_INFO_VALUE, MPI_ERR_INFO, MPI_ERR_IO, MPI_ERR_KEYVAL,
        MPI_ERR_LOCKTYPE, MPI_ERR_NAME, MPI_ERR_NO_MEM, MPI_ERR_NOT_SAME, MPI_ERR_NO_SPACE,
        MPI_ERR_NO_SUCH_FILE, MPI_ERR_PORT, MPI_ERR_QUOTA, MPI_ERR_READ_ONLY, MPI_ERR_RMA_CONFLICT,
        MPI_ERR_RMA_SYNC, MPI_ERR_SERVICE, MPI_ERR_SIZE, MPI_ERR_SPAWN, MPI_ERR_UNSUPPORTED_DATAREP,
        MPI_ERR_UNSUPPORTED_OPERATION, MPI_ERR_WIN, MPI_ERR_RMA_RANGE, MPI_ERR_RMA_ATTACH,
        MPI_ERR_RMA_SHARED, MPI_ERR_RMA_FLAVOR};
    const int n = (int)(sizeof classes / sizeof classes[0]);

    PLX_CHECK_EQ(MPI_SUCCESS, 0, "MPI_SUCCESS == 0");
    for (int i = 0; i < n; i++) {
        char s[MPI_MAX_ERROR_STRING + 1];
        int len = -1, c = -1;
        PLX_CHECK_MPI(MPI_Error_class(classes[i], &c));
        PLX_CHECK(c == classes[i], "Error_class of predefined class %d (got %d)", classes[i], c);
        PLX_CHECK(classes[i] <= MPI_ERR_LASTCODE, "class %d <= MPI_ERR_LASTCODE", classes[i]);
        for (int j = 0; j < i; j++)
            PLX_CHECK(classes[j] != classes[i], "error classes %d and %d distinct", j, i);
        memset(s, 'q', sizeof s);
        PLX_CHECK_MPI(MPI_Error_string(classes[i], s, &len));
        PLX_CHECK(len > 0 && len < MPI_MAX_ERROR_STRING, "Error_string(%d) length %d", classes[i], len);
        s[MPI_MAX_ERROR_STRING] = '\0';
        PLX_CHECK(strlen(s) == (size_t)len, "Error_string(%d): strlen %zu == resultlen %d", classes[i],
                  strlen(s), len);
    }

    /* User classes, codes and strings. */
    {
        int cls, code1, code2, c = -1, len = -1, *last = NULL, flag = -1;
        char s[MPI_MAX_ERROR_STRING];

        PLX_CHECK_MPI(MPI_Add_error_class(&cls));
        PLX_CHECK_MPI(MPI_Add_error_code(cls, &code1));
        PLX_CHECK_MPI(MPI_Add_error_code(cls, &code2));
        PLX_CHECK(code1 != code2 && code1 != cls, "new error codes distinct");
        for (int i = 0; i < n; i++)
            PLX_CHECK(cls != classes[i] && code1 != classes[i], "new class/code %d/%d differs from predefined %d",
                      cls, code1, classes[i]);
        PLX_CHECK_MPI(MPI_Error_class(code1, &c));
        PLX_CHECK_EQ(c, cls, "Error_class of a user code");
        PLX_CHECK_MPI(MPI_Error_class(code2, &c));
        PLX_CHECK_EQ(c, cls, "Error_class of a second user code");
        PLX_CHECK_MPI(MPI_Error_class(cls, &c));
        PLX_CHECK_EQ(c, cls, "Error_class of a user class");

        PLX_CHECK_MPI(MPI_Add_error_string(cls, "plexus test class"));
        PLX_CHECK_MPI(MPI_Add_error_string(code1, "plexus test code one"));
        PLX_CHECK_MPI(MPI_Error_string(cls, s, &len));
        PLX_CHECK_STR(s, "plexus test class", "Error_string of a user class");
        PLX_CHECK_EQ(len, strlen("plexus test class"), "Error_string length of a user class");
        PLX_CHECK_MPI(MPI_Error_string(code1, s, &len));
        PLX_CHECK_STR(s, "plexus test code one", "Error_string of a user code");
        PLX_CHECK_MPI(MPI_Add_error_string(code1, "replaced"));
        PLX_CHECK_MPI(MPI_Error_string(code1, s, &len));
        PLX_CHECK_STR(s, "replaced", "Add_error_string replaces the string");

        PLX_CHECK_MPI(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_LASTUSEDCODE, &last, &flag));
        PLX_CHECK_EQ(flag, 1, "MPI_LASTUSEDCODE attribute present");
        /* Only compared with the class: MPICH encodes codes above MPI_LASTUSEDCODE. */
        PLX_CHECK(*last >= cls, "MPI_LASTUSEDCODE %d >= new class %d", *last, cls);
    }
}

int main(int argc, char **argv)
{
    MPI_Comm comm;

    plx_test_init(&argc, &argv, "errhandler");
    rank = plx_test_state()->rank;
    size = plx_test_state()->size;
    peer = plx_pair_peer(rank, size);

    test_predefined_handlers(); /* leaves WORLD with MPI_ERRORS_RETURN */
    PLX_CHECK_MPI(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
    PLX_CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &comm));

    test_argument_errors(comm);
    test_argument_errors(MPI_COMM_WORLD);
    test_comm_null();
    test_request_errors();
    test_truncate(comm);
    test_user_handler();
    test_strings_and_classes();

    /* Nothing stray is left on the communicators the errors were raised on. */
    {
        int flag = -1;
        MPI_Status st;
        PLX_CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
        PLX_CHECK_MPI(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, comm, &flag, &st));
        PLX_CHECK_EQ(flag, 0, "no message left over from failed sends");
    }
    PLX_CHECK_MPI(MPI_Comm_free(&comm));
    return plx_test_finish();
}
