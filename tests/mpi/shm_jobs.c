/*
 * Processes of other jobs on one host talk over shared memory (issue 16):
 * the parents spawn two children, and between the jobs
 *   - each child's first message reaches parent 0, which only tests for it;
 *   - every size of 8, 4000, 12288, 12289, 100000 and 3 MiB goes both ways
 *     (the queue, eager records, rendezvous read from the other job);
 *   - each child floods parent 0 with 4000 64-byte messages while parent 0
 *     does not receive: the parent's queue fills, the children wait and are
 *     woken across the jobs;
 *   - then a merge, with Allreduce, Bcast and Alltoall checked on it;
 *   - MPI_Win_allocate_shared on the merged communicator is refused with
 *     MPI_ERR_RMA_SHARED and a message naming the call;
 *   - disconnect.
 * Every byte is checked. tests/mpi/shm_jobs.sh runs it with PLEXUS_STATS to
 * see that no TCP channel carried it.
 *
 * "shm_jobs server DIR" / "shm_jobs client DIR" (one process each, two
 * mpiexecs): the client connects, sends one message and kills itself with
 * SIGKILL; the server's next receive from it must fail, naming it, instead
 * of hanging.
 */
#define _POSIX_C_SOURCE 200809L
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "plx_test.h"

static const int sizes[] = { 8, 4000, 12288, 12289, 100000, 3 << 20 };
#define NSIZES ((int)(sizeof sizes / sizeof sizes[0]))
#define FLOOD 4000

static uint32_t seed_of(int dir, int size, int from, int to)
{
    return (uint32_t)(dir * 1000003 + size * 7 + from * 131 + to * 17 + 1);
}

static void nap_ms(int ms)
{
    struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };
    nanosleep(&ts, NULL);
}

/* Each child's first message, sent as soon as it has its parent: parent 0
 * only tests for them, never waits (a record that came before the parent
 * had added the child is delivered all the same). */
static void first_words(MPI_Comm ic, int parent)
{
    int me, rs;
    MPI_Comm_rank(ic, &me);
    MPI_Comm_remote_size(ic, &rs);
    if (!parent) {
        int v = 7 * (me + 1);
        PLX_CHECK_MPI(MPI_Send(&v, 1, MPI_INT, 0, 30, ic));
        return;
    }
    if (me != 0)
        return;
    int *v = calloc((size_t)rs, sizeof *v), done = 0;
    MPI_Request *rq = calloc((size_t)rs, sizeof *rq);
    for (int r = 0; r < rs; r++)
        PLX_CHECK_MPI(MPI_Irecv(&v[r], 1, MPI_INT, r, 30, ic, &rq[r]));
    double t0 = MPI_Wtime();
    while (!done && MPI_Wtime() - t0 < 20)
        MPI_Testall(rs, rq, &done, MPI_STATUSES_IGNORE);
    PLX_CHECK(done, "the children's first messages reach a parent that only tests (%.1f s)", MPI_Wtime() - t0);
    for (int r = 0; r < rs && done; r++)
        PLX_CHECK_EQ(v[r], 7 * (r + 1), "a child's first message");
    free(v);
    free(rq);
}

/* Every size both ways between every parent and every child. */
static void exchange(MPI_Comm ic, int parent)
{
    int me, rs;
    MPI_Comm_rank(ic, &me);
    MPI_Comm_remote_size(ic, &rs);
    char **buf = calloc((size_t)rs, sizeof *buf);
    MPI_Request *rq = calloc((size_t)rs, sizeof *rq);
    MPI_Status *st = calloc((size_t)rs, sizeof *st);
    for (int r = 0; r < rs; r++)
        buf[r] = malloc((size_t)(3 << 20));
    for (int s = 0; s < NSIZES; s++)
        for (int dir = 0; dir < 2; dir++) {      /* 0: parents to children, 1: back */
            int size = sizes[s], sender = (dir == 0) == parent;
            for (int r = 0; r < rs; r++) {
                if (sender) {
                    plx_fill(buf[r], (size_t)size, seed_of(dir, size, me, r));
                    PLX_CHECK_MPI(MPI_Isend(buf[r], size, MPI_BYTE, r, 10 + dir, ic, &rq[r]));
                } else {
                    memset(buf[r], 0, (size_t)size);
                    PLX_CHECK_MPI(MPI_Irecv(buf[r], size, MPI_BYTE, r, 10 + dir, ic, &rq[r]));
                }
            }
            PLX_CHECK_MPI(MPI_Waitall(rs, rq, st));
            if (sender)
                continue;
            for (int r = 0; r < rs; r++) {
                char what[96];
                snprintf(what, sizeof what, "%d bytes from %s %d", size, parent ? "child" : "parent", r);
                PLX_CHECK_STATUS(st[r], r, 10 + dir, size);
                PLX_CHECK_PATTERN(buf[r], (size_t)size, seed_of(dir, size, r, me), what);
            }
        }
    for (int r = 0; r < rs; r++)
        free(buf[r]);
    free(buf);
    free(rq);
    free(st);
}

/* Each child sends FLOOD small messages to parent 0, which first waits
 * 300 ms without entering MPI, so that its queue fills. */
static void flood(MPI_Comm ic, int parent)
{
    int me, rs;
    MPI_Comm_rank(ic, &me);
    MPI_Comm_remote_size(ic, &rs);
    unsigned char m[64];
    if (!parent) {
        for (int i = 0; i < FLOOD; i++) {
            plx_fill(m, sizeof m, (uint32_t)(i * 3 + me * 100003 + 5));
            PLX_CHECK_MPI(MPI_Send(m, (int)sizeof m, MPI_BYTE, 0, 20, ic));
        }
    } else if (me == 0) {
        nap_ms(300);
        for (int c = 0; c < rs; c++) {
            int bad = 0;
            for (int i = 0; i < FLOOD; i++) {
                memset(m, 0, sizeof m);
                PLX_CHECK_MPI(MPI_Recv(m, (int)sizeof m, MPI_BYTE, c, 20, ic, MPI_STATUS_IGNORE));
                bad += plx_verify(m, sizeof m, (uint32_t)(i * 3 + c * 100003 + 5)) >= 0;
            }
            PLX_CHECK_EQ(bad, 0, "flood: messages from a child, in order and intact");
        }
    }
    PLX_CHECK_MPI(MPI_Barrier(ic));
}

/* Collectives over parents and children together. */
static void merged(MPI_Comm ic, int parent)
{
    MPI_Comm all;
    PLX_CHECK_MPI(MPI_Intercomm_merge(ic, !parent, &all));
    MPI_Comm_set_errhandler(all, MPI_ERRORS_RETURN);
    int me, n;
    MPI_Comm_rank(all, &me);
    MPI_Comm_size(all, &n);
    enum { ND = 50000 };
    double *x = malloc(ND * sizeof *x), *y = malloc(ND * sizeof *y);
    for (int i = 0; i < ND; i++)
        x[i] = me + i * 0.5;
    PLX_CHECK_MPI(MPI_Allreduce(x, y, ND, MPI_DOUBLE, MPI_SUM, all));
    int bad = 0;
    for (int i = 0; i < ND; i++)
        bad += y[i] != n * (n - 1) / 2.0 + n * i * 0.5;
    PLX_CHECK_EQ(bad, 0, "Allreduce of 50000 doubles over both jobs");
    free(x);
    free(y);

    size_t nb = 1 << 20;
    unsigned char *b = malloc(nb);
    if (me == 0)
        plx_fill(b, nb, 4242);
    else
        memset(b, 0, nb);
    PLX_CHECK_MPI(MPI_Bcast(b, (int)nb, MPI_BYTE, 0, all));
    PLX_CHECK_PATTERN(b, nb, 4242, "Bcast of 1 MiB over both jobs");
    free(b);

    int *s = malloc((size_t)n * sizeof *s), *r = malloc((size_t)n * sizeof *r);
    for (int i = 0; i < n; i++) {
        s[i] = me * 1000 + i;
        r[i] = -1;
    }
    PLX_CHECK_MPI(MPI_Alltoall(s, 1, MPI_INT, r, 1, MPI_INT, all));
    bad = 0;
    for (int i = 0; i < n; i++)
        bad += r[i] != i * 1000 + me;
    PLX_CHECK_EQ(bad, 0, "Alltoall over both jobs");
    free(s);
    free(r);

    /* the jobs share the host, not a node id: no shared window across them */
    void *base = NULL;
    MPI_Win win = MPI_WIN_NULL;
    int rc = MPI_Win_allocate_shared(4096, 1, MPI_INFO_NULL, all, &base, &win);
    PLX_CHECK_ERR(rc, MPI_ERR_RMA_SHARED);
    char msg[MPI_MAX_ERROR_STRING] = "";
    int len = 0;
    MPI_Error_string(rc, msg, &len);
    PLX_CHECK(strstr(msg, "MPI_Win_allocate_shared") != NULL, "the error names the call: \"%s\"", msg);
    if (rc == MPI_SUCCESS)
        MPI_Win_free(&win);
    PLX_CHECK_MPI(MPI_Comm_free(&all));
}

static void file_put(const char *path, const char *s)
{
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = fopen(tmp, "w");
    PLX_CHECK(f != NULL, "write a file for the other job");
    if (!f)
        return;
    fputs(s, f);
    fclose(f);
    PLX_CHECK(rename(tmp, path) == 0, "publish a file for the other job");
}

static void file_get(const char *path, char *s, size_t len)
{
    FILE *f = NULL;
    for (int i = 0; i < 600 && !(f = fopen(path, "r")); i++)
        nap_ms(50);
    PLX_CHECK(f != NULL, "the other job's file appears within 30 s");
    if (!f)
        return;
    PLX_CHECK(fgets(s, (int)len, f) != NULL, "read the other job's file");
    fclose(f);
}

/* The client of another mpiexec dies after one message. */
static int dying_client(int server, const char *dir)
{
    char path[4096], port[MPI_MAX_PORT_NAME] = "";
    snprintf(path, sizeof path, "%s/port", dir);
    MPI_Comm ic;
    if (server) {
        PLX_CHECK_MPI(MPI_Open_port(MPI_INFO_NULL, port));
        file_put(path, port);
        PLX_CHECK_MPI(MPI_Comm_accept(port, MPI_INFO_NULL, 0, MPI_COMM_SELF, &ic));
        MPI_Comm_set_errhandler(ic, MPI_ERRORS_RETURN);
        int v[2] = { 0, 0 };
        PLX_CHECK_MPI(MPI_Recv(v, 2, MPI_INT, 0, 1, ic, MPI_STATUS_IGNORE));
        PLX_CHECK_EQ(v[0], 4711, "the client's message before it dies");
        double t0 = MPI_Wtime();
        int rc = MPI_Recv(v, 2, MPI_INT, 0, 2, ic, MPI_STATUS_IGNORE);
        double waited = MPI_Wtime() - t0;
        char msg[MPI_MAX_ERROR_STRING] = "", pid[32];
        int len = 0;
        MPI_Error_string(rc, msg, &len);
        snprintf(pid, sizeof pid, "pid %d", v[1]);
        PLX_CHECK(rc != MPI_SUCCESS, "the next receive from the killed client fails");
        PLX_CHECK(strstr(msg, pid) != NULL, "the error names the dead client (%s): \"%s\"", pid, msg);
        printf("shm_jobs: the receive from the killed client failed after %.2f s: %s\n", waited, msg);
        fflush(stdout);
        MPI_Close_port(port);
        return plx_test_finish();
    }
    file_get(path, port, sizeof port);
    PLX_CHECK_MPI(MPI_Comm_connect(port, MPI_INFO_NULL, 0, MPI_COMM_SELF, &ic));
    int v[2] = { 4711, (int)getpid() };
    PLX_CHECK_MPI(MPI_Send(v, 2, MPI_INT, 0, 1, ic));
    raise(SIGKILL);
    return 1;
}

int main(int argc, char **argv)
{
    plx_test_init(&argc, &argv, "shm_jobs");
    if (argc > 2 && (!strcmp(argv[1], "server") || !strcmp(argv[1], "client")))
        return dying_client(!strcmp(argv[1], "server"), argv[2]);
    MPI_Comm parent, ic;
    MPI_Comm_get_parent(&parent);
    int is_parent = parent == MPI_COMM_NULL;
    if (is_parent) {
        char *args[] = { "child", NULL };
        PLX_CHECK_MPI(MPI_Comm_spawn(argv[0], args, 2, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &ic, MPI_ERRCODES_IGNORE));
    } else {
        ic = parent;
    }
    MPI_Comm_set_errhandler(ic, MPI_ERRORS_RETURN);
    first_words(ic, is_parent);
    exchange(ic, is_parent);
    flood(ic, is_parent);
    merged(ic, is_parent);
    PLX_CHECK_MPI(MPI_Comm_disconnect(&ic));
    return plx_test_finish();
}
