/*
 * dynamic.c - name publishing, ports and joins inside one job.
 *
 * MPI_Open_port + MPI_Publish_name on rank 0, MPI_Lookup_name everywhere;
 * the lower half of MPI_COMM_WORLD accepts on that port while the upper half
 * connects, and the resulting intercommunicator carries data both ways and
 * merges; MPI_Comm_join of ranks 0 and 1 over a TCP socket; MPI_Comm_disconnect;
 * MPI_Comm_get_parent of a process that was not spawned; and the errors:
 * lookup/unpublish of a service nobody published, publishing a service twice,
 * accept with no connect (info "timeout"), connect to a garbage port name and
 * to a closed port.
 */
#include "plx_test.h"
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

static int wrank, wsize;
/* Debian's MPICH 4.0 (ch4:ucx) fails MPI_Open_port (MPIDI_UCX_get_local_upids:
 * not implemented there), so port, accept/connect and join checks run elsewhere */
static int ports;

static void test_names(char *port)
{
    char svc[64], got[MPI_MAX_PORT_NAME];
    snprintf(svc, sizeof svc, "plexus-dyn-test-%d", wsize);
    if (wrank == 0) {
        if (ports)
            PLX_CHECK_MPI(MPI_Open_port(MPI_INFO_NULL, port));
        else
            snprintf(port, MPI_MAX_PORT_NAME, "a-port-name");
        PLX_CHECK_MPI(MPI_Publish_name(svc, MPI_INFO_NULL, port));
        /* a second publish: MPI leaves it to the implementation; our mpiexec
         * refuses it, Slurm's PMI-2 name service takes it again */
        if (getenv("PLEXUS_MPIEXEC"))
            PLX_CHECK_ERR(MPI_Publish_name(svc, MPI_INFO_NULL, port), MPI_ERR_SERVICE);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    PLX_CHECK_MPI(MPI_Lookup_name(svc, MPI_INFO_NULL, got));
    MPI_Bcast(port, MPI_MAX_PORT_NAME, MPI_CHAR, 0, MPI_COMM_WORLD);
    PLX_CHECK_STR(got, port, "MPI_Lookup_name finds the published port");
    PLX_CHECK_ERR(MPI_Lookup_name("plexus-nobody-published-this", MPI_INFO_NULL, got), MPI_ERR_NAME);
    /* erroneous by MPI; Open MPI 4.1 lets it pass */
    if (!plx_lib_is("Open MPI"))
        PLX_CHECK_ERR(MPI_Unpublish_name("plexus-nobody-published-this", MPI_INFO_NULL, port), MPI_ERR_SERVICE);
    MPI_Barrier(MPI_COMM_WORLD);
    if (wrank == 0)
        PLX_CHECK_MPI(MPI_Unpublish_name(svc, MPI_INFO_NULL, port));
    MPI_Barrier(MPI_COMM_WORLD);
    PLX_CHECK_ERR(MPI_Lookup_name(svc, MPI_INFO_NULL, got), MPI_ERR_NAME);
}

/* Lower half accepts on rank 0's port, upper half connects. */
static void test_accept_connect(const char *port)
{
    int h = wsize / 2, side = wrank >= h;
    MPI_Comm half, ic, merged;
    MPI_Comm_split(MPI_COMM_WORLD, side, wrank, &half);
    if (side == 0)
        PLX_CHECK_MPI(MPI_Comm_accept(port, MPI_INFO_NULL, 0, half, &ic));
    else
        PLX_CHECK_MPI(MPI_Comm_connect(port, MPI_INFO_NULL, 0, half, &ic));
    int flag, rs, sum = 0, want = 0;
    MPI_Comm_test_inter(ic, &flag);
    PLX_CHECK_EQ(flag, 1, "accept/connect give an intercommunicator");
    MPI_Comm_remote_size(ic, &rs);
    PLX_CHECK_EQ(rs, side ? h : wsize - h, "remote size after accept/connect");
    PLX_CHECK_MPI(MPI_Allreduce(&wrank, &sum, 1, MPI_INT, MPI_SUM, ic));
    for (int w = side ? 0 : h; w < (side ? h : wsize); w++)
        want += w;
    PLX_CHECK_EQ(sum, want, "Allreduce across accept/connect");
    int lr;
    MPI_Comm_rank(half, &lr);
    if (lr == 0) {
        int out = 1000 + wrank, in = -1;
        PLX_CHECK_MPI(MPI_Sendrecv(&out, 1, MPI_INT, 0, 4, &in, 1, MPI_INT, 0, 4, ic, MPI_STATUS_IGNORE));
        PLX_CHECK_EQ(in, 1000 + (side ? 0 : h), "point-to-point between the two roots");
    }
    PLX_CHECK_MPI(MPI_Intercomm_merge(ic, side, &merged));
    int mr;
    MPI_Comm_rank(merged, &mr);
    PLX_CHECK_EQ(mr, wrank, "merge of accept/connect sides in world order");
    MPI_Comm_free(&merged);
    PLX_CHECK_MPI(MPI_Comm_disconnect(&ic));
    PLX_CHECK(ic == MPI_COMM_NULL, "MPI_Comm_disconnect sets the handle to MPI_COMM_NULL");
    MPI_Comm_free(&half);
}

static void test_join(void)
{
    int fd = -1;
    if (wrank == 0) {
        int ls = socket(AF_INET, SOCK_STREAM, 0);
        struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
        socklen_t len = sizeof a;
        PLX_CHECK(bind(ls, (struct sockaddr *)&a, sizeof a) == 0 && listen(ls, 1) == 0, "listen for the join");
        getsockname(ls, (struct sockaddr *)&a, &len);
        int p = ntohs(a.sin_port);
        MPI_Send(&p, 1, MPI_INT, 1, 7, MPI_COMM_WORLD);
        fd = accept(ls, NULL, NULL);
        close(ls);
    } else if (wrank == 1) {
        int p;
        MPI_Recv(&p, 1, MPI_INT, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        fd = socket(AF_INET, SOCK_STREAM, 0);
        struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)p),
                                 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
        PLX_CHECK(connect(fd, (struct sockaddr *)&a, sizeof a) == 0, "connect for the join");
    }
    if (wrank > 1)
        return;
    MPI_Comm ic;
    PLX_CHECK_MPI(MPI_Comm_join(fd, &ic));
    close(fd);
    int rs, out = 50 + wrank, in = -1;
    MPI_Comm_remote_size(ic, &rs);
    PLX_CHECK_EQ(rs, 1, "remote size after MPI_Comm_join");
    PLX_CHECK_MPI(MPI_Sendrecv(&out, 1, MPI_INT, 0, 1, &in, 1, MPI_INT, 0, 1, ic, MPI_STATUS_IGNORE));
    PLX_CHECK_EQ(in, 50 + (1 - wrank), "data over a joined intercommunicator");
    PLX_CHECK_MPI(MPI_Comm_disconnect(&ic));
}

static void test_errors(void)
{
    MPI_Comm x, parent;
    MPI_Info info;
    char port[MPI_MAX_PORT_NAME];
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    PLX_CHECK_MPI(MPI_Comm_get_parent(&parent));
    PLX_CHECK(parent == MPI_COMM_NULL, "a process that was not spawned has no parent");
    MPI_Info_create(&info);
    MPI_Info_set(info, "timeout", "1");
    /* Open MPI 4.1 has no "timeout" for accept and connect: these would wait for ever there */
    if (wrank == 0 && ports && !plx_lib_is("Open MPI")) {
        double t0 = MPI_Wtime();
        PLX_CHECK_MPI(MPI_Open_port(MPI_INFO_NULL, port));
        PLX_CHECK_ERR(MPI_Comm_accept(port, info, 0, MPI_COMM_SELF, &x), MPI_ERR_PORT);
        PLX_CHECK(MPI_Wtime() - t0 < 30, "accept with a 1 s timeout ends in time");
        PLX_CHECK_MPI(MPI_Close_port(port));
        /* a connect to a closed port finds nobody accepting */
        PLX_CHECK_ERR(MPI_Comm_connect(port, info, 0, MPI_COMM_SELF, &x), MPI_ERR_PORT);
        PLX_CHECK_ERR(MPI_Close_port(port), MPI_ERR_PORT);
    }
    if (ports && !plx_lib_is("Open MPI"))     /* Open MPI 4.1 answers MPI_ERR_INTERN */
        PLX_CHECK_ERR(MPI_Comm_connect("no such port", info, 0, MPI_COMM_SELF, &x), MPI_ERR_PORT);
    MPI_Info_free(&info);
}

int main(int argc, char **argv)
{
    char port[MPI_MAX_PORT_NAME];
    plx_test_init(&argc, &argv, "dynamic");
    wrank = plx_test_state()->rank;
    wsize = plx_test_state()->size;
    /* errors of calls without a communicator go to MPI_COMM_WORLD's handler */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    ports = !plx_lib_is("MPICH Version:");
    test_names(port);
    if (wsize >= 2 && ports) {
        test_accept_connect(port);
        test_join();
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (wrank == 0 && ports)
        MPI_Close_port(port);
    test_errors();
    return plx_test_finish();
}
