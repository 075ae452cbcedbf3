/*
 * mpi41_buffers.c - MPI 4.1's buffered-send buffers: per communicator
 * (MPI_Comm_attach_buffer & co.), per session, MPI_BUFFER_AUTOMATIC, and
 * the flushes (MPI_Buffer_flush/iflush, MPI_Comm_flush_buffer/iflush_buffer,
 * MPI_Session_flush_buffer/iflush_buffer).
 *
 * Data checked around the ring: with the process buffer and a flush; with a
 * communicator's buffer while no process buffer exists (a Bsend on another
 * communicator then fails with MPI_ERR_BUFFER); with MPI_BUFFER_AUTOMATIC
 * for 1 MiB messages no fixed buffer here could hold, flushed by a request
 * that completes only once the receiver took them. Detach gives back the
 * buffer attached (or MPI_BUFFER_AUTOMATIC) and its size. Errors: attached
 * twice, negative size, null communicator/session, NULL request, a message
 * larger than the communicator's buffer.
 */
#include "plx_test.h"

#define NMSG 8
#define BIG (1 << 20)

static void ring_bsend(MPI_Comm comm, int n, int len, int seed, const char *what)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    char *out = malloc((size_t)n * (size_t)len), *in = malloc((size_t)n * (size_t)len);
    MPI_Request *rq = malloc(sizeof(MPI_Request) * (size_t)n);
    for (int i = 0; i < n * len; i++)
        out[i] = (char)(rank * 31 + i * 7 + seed);
    for (int i = 0; i < n; i++)
        PLX_CHECK_MPI(MPI_Bsend(out + (size_t)i * len, len, MPI_CHAR, next, i, comm));
    for (int i = 0; i < n; i++)
        MPI_Irecv(in + (size_t)i * len, len, MPI_CHAR, prev, i, comm, &rq[i]);
    PLX_CHECK_MPI(MPI_Waitall(n, rq, MPI_STATUSES_IGNORE));
    int ok = 1;
    for (int i = 0; i < n * len; i++)
        ok &= in[i] == (char)(prev * 31 + i * 7 + seed);
    PLX_CHECK(ok, "%s: %d buffered messages of %d bytes arrived intact", what, n, len);
    free(out);
    free(in);
    free(rq);
}

int main(int argc, char **argv)
{
    plx_test_init(&argc, &argv, "mpi41_buffers");
    int rank = plx_test_state()->rank, size = plx_test_state()->size;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    const int len = 1000, bufsize = NMSG * (len + MPI_BSEND_OVERHEAD);
    void *got;
    int gotsize = -1;
    MPI_Request rq;

    /* 1. the process's buffer, then MPI_Buffer_flush and MPI_Buffer_iflush */
    char *pbuf = malloc((size_t)bufsize);
    PLX_CHECK_MPI(MPI_Buffer_attach(pbuf, bufsize));
    ring_bsend(MPI_COMM_WORLD, NMSG, len, 1, "process buffer");
    PLX_CHECK_MPI(MPI_Buffer_flush());
    ring_bsend(MPI_COMM_WORLD, NMSG, len, 2, "process buffer again");
    PLX_CHECK_MPI(MPI_Buffer_iflush(&rq));
    PLX_CHECK_MPI(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    PLX_CHECK(rq == MPI_REQUEST_NULL, "iflush request freed by MPI_Wait");
    PLX_CHECK_MPI(MPI_Buffer_detach(&got, &gotsize));
    PLX_CHECK(got == pbuf && gotsize == bufsize, "MPI_Buffer_detach gives the buffer back");

    /* 2. a communicator's buffer, with no process buffer */
    MPI_Comm dup;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN);
    char *cbuf = malloc((size_t)bufsize);
    PLX_CHECK_MPI(MPI_Comm_attach_buffer(dup, cbuf, bufsize));
    ring_bsend(dup, NMSG, len, 3, "communicator buffer");
    PLX_CHECK_MPI(MPI_Comm_flush_buffer(dup));
    char x = 1;
    PLX_CHECK_ERR(MPI_Bsend(&x, 1, MPI_CHAR, next, 0, MPI_COMM_WORLD), MPI_ERR_BUFFER);  /* WORLD has none */
    PLX_CHECK_ERR(MPI_Comm_attach_buffer(dup, cbuf, bufsize), MPI_ERR_BUFFER);
    char *huge = calloc(1, (size_t)bufsize);
    PLX_CHECK_ERR(MPI_Bsend(huge, bufsize, MPI_CHAR, next, 0, dup), MPI_ERR_BUFFER);   /* larger than it */
    free(huge);
    PLX_CHECK_MPI(MPI_Comm_detach_buffer(dup, &got, &gotsize));
    PLX_CHECK(got == cbuf && gotsize == bufsize, "MPI_Comm_detach_buffer gives the buffer back");
    PLX_CHECK_MPI(MPI_Comm_detach_buffer(dup, &got, &gotsize));
    PLX_CHECK(got == NULL && gotsize == 0, "detaching again: nothing attached");
    MPI_Count gotc = -1;
    PLX_CHECK_MPI(MPI_Comm_attach_buffer_c(dup, cbuf, (MPI_Count)bufsize));
    PLX_CHECK_MPI(MPI_Comm_detach_buffer_c(dup, &got, &gotc));
    PLX_CHECK(got == cbuf && gotc == bufsize, "the _c forms");

    /* 3. MPI_BUFFER_AUTOMATIC: 1 MiB messages; the iflush completes once received */
    PLX_CHECK_MPI(MPI_Comm_attach_buffer(dup, MPI_BUFFER_AUTOMATIC, 0));
    char *big = malloc(BIG), *bigin = malloc(BIG);
    for (int i = 0; i < BIG; i++)
        big[i] = (char)(i * 13 + rank);
    PLX_CHECK_MPI(MPI_Bsend(big, BIG, MPI_CHAR, next, 5, dup));
    memset(big, 0, BIG);        /* buffered: the send's data was copied */
    PLX_CHECK_MPI(MPI_Comm_iflush_buffer(dup, &rq));
    PLX_CHECK_MPI(MPI_Recv(bigin, BIG, MPI_CHAR, prev, 5, dup, MPI_STATUS_IGNORE));
    PLX_CHECK_MPI(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    int ok = 1;
    for (int i = 0; i < BIG; i++)
        ok &= bigin[i] == (char)(i * 13 + prev);
    PLX_CHECK(ok, "1 MiB through MPI_BUFFER_AUTOMATIC intact");
    ring_bsend(dup, NMSG, 100000, 4, "automatic buffer, 8 x 100 kB");
    PLX_CHECK_MPI(MPI_Comm_detach_buffer(dup, &got, &gotsize));
    PLX_CHECK(got == MPI_BUFFER_AUTOMATIC && gotsize == 0, "detach gives MPI_BUFFER_AUTOMATIC back");
    PLX_CHECK_MPI(MPI_Buffer_attach(MPI_BUFFER_AUTOMATIC, 0));
    ring_bsend(MPI_COMM_WORLD, 2, BIG, 5, "process automatic buffer");
    PLX_CHECK_MPI(MPI_Buffer_detach(&got, &gotsize));
    PLX_CHECK(got == MPI_BUFFER_AUTOMATIC, "MPI_Buffer_detach gives MPI_BUFFER_AUTOMATIC back");
    free(big);
    free(bigin);

    /* 4. errors */
    PLX_CHECK_ERR(MPI_Comm_attach_buffer(dup, cbuf, -1), MPI_ERR_ARG);
    PLX_CHECK_ERR(MPI_Comm_attach_buffer(MPI_COMM_NULL, cbuf, bufsize), MPI_ERR_COMM);
    PLX_CHECK_ERR(MPI_Comm_flush_buffer(MPI_COMM_NULL), MPI_ERR_COMM);
    PLX_CHECK_ERR(MPI_Comm_iflush_buffer(dup, NULL), MPI_ERR_ARG);
    PLX_CHECK_ERR(MPI_Buffer_iflush(NULL), MPI_ERR_ARG);
    PLX_CHECK_MPI(MPI_Comm_flush_buffer(dup));      /* nothing attached: returns at once */
    char msg[MPI_MAX_ERROR_STRING];
    int mlen = 0;
    MPI_Comm_attach_buffer(dup, cbuf, bufsize);
    int rc = MPI_Comm_attach_buffer(dup, cbuf, bufsize);
    MPI_Error_string(rc, msg, &mlen);
    PLX_CHECK(strstr(msg, "MPI_Comm_attach_buffer") && strstr(msg, "rank") && strstr(msg, "already attached"),
              "message names the call: %s", msg);
    MPI_Comm_detach_buffer(dup, &got, &gotsize);

    /* 5. a session's buffer */
    MPI_Session s;
    PLX_CHECK_MPI(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s));
    char *sbuf = malloc((size_t)bufsize);
    PLX_CHECK_MPI(MPI_Session_attach_buffer(s, sbuf, bufsize));
    PLX_CHECK_ERR(MPI_Session_attach_buffer(s, sbuf, bufsize), MPI_ERR_BUFFER);
    PLX_CHECK_MPI(MPI_Session_flush_buffer(s));
    PLX_CHECK_MPI(MPI_Session_iflush_buffer(s, &rq));
    PLX_CHECK_MPI(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    PLX_CHECK_MPI(MPI_Session_detach_buffer(s, &got, &gotsize));
    PLX_CHECK(got == sbuf && gotsize == bufsize, "MPI_Session_detach_buffer gives the buffer back");
    PLX_CHECK_MPI(MPI_Session_attach_buffer_c(s, MPI_BUFFER_AUTOMATIC, 0));
    PLX_CHECK_MPI(MPI_Session_detach_buffer_c(s, &got, &gotc));
    PLX_CHECK(got == MPI_BUFFER_AUTOMATIC && gotc == 0, "session: MPI_BUFFER_AUTOMATIC back");
    PLX_CHECK_ERR(MPI_Session_attach_buffer(s, sbuf, -5), MPI_ERR_ARG);
    PLX_CHECK_ERR(MPI_Session_iflush_buffer(s, NULL), MPI_ERR_ARG);
    PLX_CHECK_MPI(MPI_Session_attach_buffer(s, sbuf, bufsize));     /* still attached at finalize: dropped */
    PLX_CHECK_MPI(MPI_Session_finalize(&s));
    PLX_CHECK_ERR(MPI_Session_flush_buffer(MPI_SESSION_NULL), MPI_ERR_SESSION);
    PLX_CHECK_ERR(MPI_Session_attach_buffer(MPI_SESSION_NULL, sbuf, bufsize), MPI_ERR_SESSION);

    MPI_Comm_free(&dup);
    free(pbuf);
    free(cbuf);
    free(sbuf);
    (void)prev;
    return plx_test_finish();
}
