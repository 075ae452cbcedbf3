/*
 * mpi41_session_bsend.c - MPI 4.1: a buffered send on a communicator derived
 * from a session uses the communicator's buffer if it has one, else the
 * session's, else the process's.
 *
 * Data checked around the ring on: a communicator from
 * MPI_Group_from_session_pset + MPI_Comm_create_from_group with only the
 * session's buffer attached (no process buffer: MPI_COMM_WORLD's Bsend fails
 * with MPI_ERR_BUFFER meanwhile); its dup, split, idup, MPI_Comm_create_group
 * and MPI_Comm_create; a communicator from a group made by MPI_Group_incl of
 * the session's group. Without session and process buffers a Bsend fails with
 * MPI_ERR_BUFFER. A communicator's buffer takes precedence over the session's
 * (the session's is too small for the message), and the session's over the
 * process's (the other way round). MPI_Session_flush_buffer and
 * _iflush_buffer wait for the session's 1 MiB messages: afterwards a message
 * that needs the whole session buffer fits. A session finalized while its
 * communicator lives (erroneous) leaves it without a session buffer: its
 * Bsend then takes the process's buffer instead of crashing.
 */
#include "plx_test.h"

#define NMSG 8
#define LEN 1000
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
    int rc = MPI_SUCCESS;
    for (int i = 0; i < n && rc == MPI_SUCCESS; i++)
        rc = MPI_Bsend(out + (size_t)i * len, len, MPI_CHAR, next, i, comm);
    PLX_CHECK(rc == MPI_SUCCESS, "%s: %d Bsends of %d bytes accepted", what, n, len);
    if (rc == MPI_SUCCESS) {
        for (int i = 0; i < n; i++)
            MPI_Irecv(in + (size_t)i * len, len, MPI_CHAR, prev, i, comm, &rq[i]);
        PLX_CHECK_MPI(MPI_Waitall(n, rq, MPI_STATUSES_IGNORE));
        int ok = 1;
        for (int i = 0; i < n * len; i++)
            ok &= in[i] == (char)(prev * 31 + i * 7 + seed);
        PLX_CHECK(ok, "%s: %d buffered messages of %d bytes arrived intact", what, n, len);
    }
    MPI_Barrier(comm);  /* every rank has seen the outcome before buffers change */
    free(out);
    free(in);
    free(rq);
}

/* One Bsend of len bytes to the next rank that must fail with MPI_ERR_BUFFER
 * and name `word` in its message. */
static void bsend_fails(MPI_Comm comm, int len, const char *word, const char *what)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    char *out = calloc((size_t)len + 1, 1);
    int rc = MPI_Bsend(out, len, MPI_CHAR, (rank + 1) % size, 99, comm), cls = -1;
    if (rc != MPI_SUCCESS)
        MPI_Error_class(rc, &cls);
    char msg[MPI_MAX_ERROR_STRING] = "";
    int mlen = 0;
    if (rc != MPI_SUCCESS)
        MPI_Error_string(rc, msg, &mlen);
    PLX_CHECK(cls == MPI_ERR_BUFFER && (!word || strstr(msg, word)), "%s: MPI_ERR_BUFFER naming \"%s\" (got %d: %s)",
              what, word ? word : "", cls, msg);
    free(out);
}

int main(int argc, char **argv)
{
    plx_test_init(&argc, &argv, "mpi41_session_bsend");
    int rank = plx_test_state()->rank, size = plx_test_state()->size;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    const int bufsize = NMSG * (LEN + MPI_BSEND_OVERHEAD);
    void *got;
    int gotsize;

    MPI_Session s;
    MPI_Group sg;
    MPI_Comm sc;
    PLX_CHECK_MPI(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s));
    PLX_CHECK_MPI(MPI_Group_from_session_pset(s, "mpi://WORLD", &sg));
    PLX_CHECK_MPI(MPI_Comm_create_from_group(sg, "org.plexus.test.session_bsend", MPI_INFO_NULL, MPI_ERRORS_RETURN,
                                             &sc));

    /* 1. no buffer anywhere: MPI_ERR_BUFFER */
    bsend_fails(sc, LEN, "MPI_Buffer_attach", "no session or process buffer");

    /* 2. only the session's buffer: the session's communicators use it */
    char *sbuf = malloc((size_t)bufsize);
    PLX_CHECK_MPI(MPI_Session_attach_buffer(s, sbuf, bufsize));
    ring_bsend(sc, NMSG, LEN, 1, "session communicator, session buffer");
    bsend_fails(MPI_COMM_WORLD, LEN, NULL, "MPI_COMM_WORLD is not the session's");

    MPI_Comm dup, split, idup, cgroup, create;
    PLX_CHECK_MPI(MPI_Comm_dup(sc, &dup));
    ring_bsend(dup, NMSG, LEN, 2, "MPI_Comm_dup of it");
    PLX_CHECK_MPI(MPI_Comm_split(sc, rank % 2, size - rank, &split));
    ring_bsend(split, NMSG, LEN, 3, "MPI_Comm_split of it");
    MPI_Request rq;
    PLX_CHECK_MPI(MPI_Comm_idup(sc, &idup, &rq));
    PLX_CHECK_MPI(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    ring_bsend(idup, NMSG, LEN, 4, "MPI_Comm_idup of it");
    MPI_Group cg;
    MPI_Comm_group(sc, &cg);
    PLX_CHECK_MPI(MPI_Comm_create_group(sc, cg, 7, &cgroup));
    ring_bsend(cgroup, NMSG, LEN, 5, "MPI_Comm_create_group of it");
    PLX_CHECK_MPI(MPI_Comm_create(sc, cg, &create));
    ring_bsend(create, NMSG, LEN, 6, "MPI_Comm_create of it");
    MPI_Group_free(&cg);

    /* a group made from the session's group stays the session's */
    int *ranks = malloc(sizeof(int) * (size_t)size);
    for (int i = 0; i < size; i++)
        ranks[i] = size - 1 - i;
    MPI_Group ig;
    MPI_Comm ic;
    PLX_CHECK_MPI(MPI_Group_incl(sg, size, ranks, &ig));
    PLX_CHECK_MPI(MPI_Comm_create_from_group(ig, "org.plexus.test.session_bsend.incl", MPI_INFO_NULL,
                                             MPI_ERRORS_RETURN, &ic));
    ring_bsend(ic, NMSG, LEN, 7, "MPI_Group_incl of the session's group");
    free(ranks);

    /* 3. precedence: a communicator's buffer before the session's, the
     * session's before the process's. The session's is now too small. */
    void *sb;
    PLX_CHECK_MPI(MPI_Session_detach_buffer(s, &sb, &gotsize));
    PLX_CHECK(sb == sbuf && gotsize == bufsize, "MPI_Session_detach_buffer gives the buffer back");
    char *tiny = malloc(LEN);
    PLX_CHECK_MPI(MPI_Session_attach_buffer(s, tiny, LEN));     /* < LEN + MPI_BSEND_OVERHEAD */
    char *cbuf = malloc((size_t)bufsize);
    PLX_CHECK_MPI(MPI_Comm_attach_buffer(dup, cbuf, bufsize));
    ring_bsend(dup, NMSG, LEN, 8, "communicator buffer over a too small session buffer");
    char *pbuf = malloc((size_t)bufsize);
    PLX_CHECK_MPI(MPI_Buffer_attach(pbuf, bufsize));
    bsend_fails(sc, LEN, "MPI_Session_attach_buffer", "session buffer before the (larger) process buffer");
    ring_bsend(MPI_COMM_WORLD, NMSG, LEN, 9, "MPI_COMM_WORLD takes the process buffer");
    PLX_CHECK_MPI(MPI_Session_detach_buffer(s, &got, &gotsize));
    PLX_CHECK(got == tiny && gotsize == LEN, "tiny session buffer back");
    ring_bsend(sc, NMSG, LEN, 10, "no session buffer: the process's");
    PLX_CHECK_MPI(MPI_Buffer_detach(&got, &gotsize));
    PLX_CHECK(got == pbuf, "process buffer back");
    PLX_CHECK_MPI(MPI_Comm_detach_buffer(dup, &got, &gotsize));
    PLX_CHECK(got == cbuf, "communicator buffer back");

    /* 4. the session's flushes wait for its messages: 1 MiB to the next
     * rank (rendezvous), the receive posted first; after the flush the
     * whole session buffer is free again */
    const int bigsize = BIG + MPI_BSEND_OVERHEAD;
    char *bbuf = malloc((size_t)bigsize), *out = malloc(BIG), *in = malloc(BIG);
    PLX_CHECK_MPI(MPI_Session_attach_buffer(s, bbuf, bigsize));
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    for (int round = 0; round < 2; round++) {
        for (int i = 0; i < BIG; i++)
            out[i] = (char)(rank + i * 13 + round);
        memset(in, 0, BIG);
        MPI_Request rr, fr;
        PLX_CHECK_MPI(MPI_Irecv(in, BIG, MPI_CHAR, prev, 20 + round, sc, &rr));
        PLX_CHECK_MPI(MPI_Bsend(out, BIG, MPI_CHAR, next, 20 + round, sc));
        memset(out, 0, BIG);    /* the message was copied into the session's buffer */
        if (round == 0) {
            PLX_CHECK_MPI(MPI_Session_flush_buffer(s));
        } else {
            PLX_CHECK_MPI(MPI_Session_iflush_buffer(s, &fr));
            PLX_CHECK_MPI(MPI_Wait(&fr, MPI_STATUS_IGNORE));
        }
        /* the buffer must be empty now: a message that needs all of it fits */
        PLX_CHECK_MPI(MPI_Bsend(out, BIG, MPI_CHAR, rank, 30 + round, sc));
        PLX_CHECK_MPI(MPI_Wait(&rr, MPI_STATUS_IGNORE));
        int ok = 1;
        for (int i = 0; i < BIG; i++)
            ok &= in[i] == (char)(prev + i * 13 + round);
        PLX_CHECK(ok, "%s: 1 MiB through the session buffer intact", round ? "iflush" : "flush");
        PLX_CHECK_MPI(MPI_Recv(in, BIG, MPI_CHAR, rank, 30 + round, sc, MPI_STATUS_IGNORE));
        PLX_CHECK_MPI(MPI_Session_flush_buffer(s));
    }
    PLX_CHECK_MPI(MPI_Session_detach_buffer(s, &got, &gotsize));
    PLX_CHECK(got == bbuf && gotsize == bigsize, "big session buffer back");
    free(bbuf);
    free(out);
    free(in);

    MPI_Comm_free(&dup);
    MPI_Comm_free(&split);
    MPI_Comm_free(&idup);
    MPI_Comm_free(&cgroup);
    MPI_Comm_free(&create);
    MPI_Comm_free(&ic);
    MPI_Group_free(&ig);
    MPI_Group_free(&sg);

    /* 5. erroneous: the session is finalized while its communicator lives,
     * with its buffer attached. No crash; the communicator has no session
     * buffer any more and takes the process's. */
    PLX_CHECK_MPI(MPI_Session_attach_buffer(s, sbuf, bufsize));
    PLX_CHECK_MPI(MPI_Session_finalize(&s));
    PLX_CHECK_MPI(MPI_Buffer_attach(pbuf, bufsize));
    ring_bsend(sc, NMSG, LEN, 11, "session finalized early: the process's buffer");
    PLX_CHECK_MPI(MPI_Buffer_detach(&got, &gotsize));
    MPI_Comm_free(&sc);

    free(sbuf);
    free(tiny);
    free(cbuf);
    free(pbuf);
    return plx_test_finish();
}
