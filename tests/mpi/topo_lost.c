/*
 * topo_lost.c - MPI_Dist_graph_create when a member is lost (over TCP, run
 * with PLEXUS_TRANSPORTS=tcp): the last rank resets every TCP connection it
 * has (but the launcher's) and sleeps, as a process whose host vanished; the
 * others, with a counting error handler on MPI_COMM_WORLD, then build a
 * distributed graph. The call must fail with MPIX_ERR_PROC_FAILED, call the
 * handler once, name MPI_Dist_graph_create and give no communicator (the
 * library's own exchanges inside it are checked, not ignored). Then
 * MPI_Cart_create fails the same way. Not a portable MPI program (the reset
 * is a Plexus-over-TCP test device), so not registered with plx_add_mpi_test:
 * rank 0 prints "topo_lost: PASS" and the survivors end the job with
 * MPI_Abort(..., 0).
 */
#include "plx_test.h"
#include <dirent.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

static int calls;
static char last[MPI_MAX_ERROR_STRING];
static int last_code;

static void count_handler(MPI_Comm *comm, int *code, ...)
{
    int len;
    (void)comm;
    calls++;
    last_code = *code;
    MPI_Error_string(*code, last, &len);
}

static void reset_tcp(void)
{
    const char *pmi = getenv("PMI_FD");
    int pmi_fd = pmi ? atoi(pmi) : -1;
    DIR *d = opendir("/proc/self/fd");
    struct dirent *e;
    while (d && (e = readdir(d)) != NULL) {
        int fd = atoi(e->d_name);
        struct sockaddr_storage ss;
        socklen_t sl = sizeof ss;
        if (e->d_name[0] == '.' || fd == pmi_fd || fd == dirfd(d) ||
            getsockname(fd, (struct sockaddr *)&ss, &sl) != 0 ||
            (ss.ss_family != AF_INET && ss.ss_family != AF_INET6))
            continue;
        struct linger lg = {1, 0};
        setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof lg);
        shutdown(fd, SHUT_RDWR);
    }
    if (d)
        closedir(d);
}

int main(int argc, char **argv)
{
    plx_test_init(&argc, &argv, "topo_lost");
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    PLX_CHECK(size >= 3, "needs 3 ranks or more");
    MPI_Errhandler eh;
    PLX_CHECK_MPI(MPI_Comm_create_errhandler(count_handler, &eh));
    PLX_CHECK_MPI(MPI_Comm_set_errhandler(MPI_COMM_WORLD, eh));

    /* connect every pair: the reset must be seen as a loss, not a refused connect */
    int *all = plx_malloc((size_t)size * sizeof(int));
    PLX_CHECK_MPI(MPI_Allgather(&rank, 1, MPI_INT, all, 1, MPI_INT, MPI_COMM_WORLD));
    for (int k = 1; k < size; k++) {
        int to = (rank + k) % size, from = (rank - k + size) % size, got = -1;
        PLX_CHECK_MPI(MPI_Sendrecv(&rank, 1, MPI_INT, to, 0, &got, 1, MPI_INT, from, 0, MPI_COMM_WORLD,
                                   MPI_STATUS_IGNORE));
        PLX_CHECK_EQ(got, from, "pairwise exchange before the loss");
    }
    PLX_CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == size - 1) {
        reset_tcp();
        for (;;)
            sleep(60);
    }

    /* a ring: each rank names its edge to the next */
    int src = rank, deg = 1, dst = (rank + 1) % size;
    MPI_Comm g = MPI_COMM_NULL;
    calls = 0;
    int rc = MPI_Dist_graph_create(MPI_COMM_WORLD, 1, &src, &deg, &dst, MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &g);
    int cls = -1;
    MPI_Error_class(rc, &cls);
    PLX_CHECK(rc != MPI_SUCCESS, "MPI_Dist_graph_create with a lost member succeeded");
    PLX_CHECK_EQ(cls, MPIX_ERR_PROC_FAILED, "class of the MPI_Dist_graph_create error");
    PLX_CHECK_EQ(calls, 1, "error handler calls for one failed MPI_Dist_graph_create");
    PLX_CHECK(strstr(last, "MPI_Dist_graph_create") != NULL, "the error names MPI_Dist_graph_create (got \"%s\")",
              last);
    PLX_CHECK(last_code == rc, "the handler saw the code returned");
    PLX_CHECK(g == MPI_COMM_NULL, "no communicator from the failed call");

    int dims[1] = {size}, periods[1] = {1};
    MPI_Comm cart = MPI_COMM_NULL;
    calls = 0;
    rc = MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &cart);
    MPI_Error_class(rc, &cls);
    PLX_CHECK_EQ(cls, MPIX_ERR_PROC_FAILED, "class of the MPI_Cart_create error");
    PLX_CHECK_EQ(calls, 1, "error handler calls for one failed MPI_Cart_create");
    PLX_CHECK(strstr(last, "MPI_Cart_create") != NULL, "the error names MPI_Cart_create (got \"%s\")", last);

    if (rank == 0) {
        printf("topo_lost: PASS (%lld checks on rank 0)\n", plx_test_state()->checks);
        fflush(stdout);
    }
    /* the survivors cannot finalize with a member gone: end the job */
    sleep(1);   /* let rank 1 print its failures, if any */
    MPI_Abort(MPI_COMM_WORLD, 0);
    return 0;
}
