/*
 * connect2.c - two jobs started by two mpiexecs meet (tests/mpi/two_jobs.sh
 * runs "connect2 server DIR" and "connect2 client DIR" at the same time).
 *
 * The server's rank 0 opens a port and writes its name to DIR/port; all of
 * the server accepts, all of the client connects. Over the intercommunicator:
 * point-to-point between every pair both ways, a broadcast from each root
 * (MPI_ROOT), an allreduce across, a merge (server first) with an allreduce
 * on it. Then the server closes the port: a connect to it afterwards, and to
 * a garbage name, fail with MPI_ERR_PORT. Finally MPI_Comm_join of the two
 * rank 0s over a socket the server listens on (DIR/join).
 */
#include "plx_test.h"
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

static int wrank, wsize, server;

static void file_put(const char *path, const char *s)
{
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = fopen(tmp, "w");
    PLX_CHECK(f != NULL, "write a file for the other job");
    fputs(s, f);
    fclose(f);
    PLX_CHECK(rename(tmp, path) == 0, "publish a file for the other job");
}

static void file_get(const char *path, char *s, size_t len)
{
    FILE *f;
    for (int i = 0; i < 600 && !(f = fopen(path, "r")); i++) {
        struct timespec ts = { 0, 50 * 1000 * 1000 };
        nanosleep(&ts, NULL);
    }
    PLX_CHECK(f != NULL, "the other job's file appears within 30 s");
    PLX_CHECK(fgets(s, (int)len, f) != NULL, "read the other job's file");
    fclose(f);
}

static void use(MPI_Comm ic)
{
    int rs, lr = wrank;
    MPI_Comm_remote_size(ic, &rs);
    for (int r = 0; r < rs; r++) {
        int v = (server ? 1000 : 2000) + 10 * lr + r;
        PLX_CHECK_MPI(MPI_Send(&v, 1, MPI_INT, r, 1, ic));
    }
    for (int r = 0; r < rs; r++) {
        int v = -1;
        PLX_CHECK_MPI(MPI_Recv(&v, 1, MPI_INT, r, 1, ic, MPI_STATUS_IGNORE));
        PLX_CHECK_EQ(v, (server ? 2000 : 1000) + 10 * r + lr, "point-to-point between the jobs");
    }
    /* each root broadcasts to the other job in turn */
    for (int from_server = 1; from_server >= 0; from_server--) {
        double d[3] = { 0, 0, 0 };
        if (server == from_server) {
            for (int i = 0; i < 3; i++)
                d[i] = 0.5 * i + from_server;
            PLX_CHECK_MPI(MPI_Bcast(d, 3, MPI_DOUBLE, wrank == 0 ? MPI_ROOT : MPI_PROC_NULL, ic));
        } else {
            PLX_CHECK_MPI(MPI_Bcast(d, 3, MPI_DOUBLE, 0, ic));
            for (int i = 0; i < 3; i++)
                PLX_CHECK(d[i] == 0.5 * i + from_server, "broadcast from the other job");
        }
    }
    int mine = server ? 1 : 100, sum = -1;
    PLX_CHECK_MPI(MPI_Allreduce(&mine, &sum, 1, MPI_INT, MPI_SUM, ic));
    PLX_CHECK_EQ(sum, rs * (server ? 100 : 1), "allreduce between the jobs");
    MPI_Comm merged;
    int mr, ms;
    PLX_CHECK_MPI(MPI_Intercomm_merge(ic, server ? 0 : 1, &merged));
    MPI_Comm_rank(merged, &mr);
    MPI_Comm_size(merged, &ms);
    PLX_CHECK_EQ(ms, wsize + rs, "size of the merged communicator");
    PLX_CHECK_EQ(mr, server ? wrank : rs + wrank, "server first in the merged communicator");
    int t = -1;
    PLX_CHECK_MPI(MPI_Allreduce(&mr, &t, 1, MPI_INT, MPI_SUM, merged));
    PLX_CHECK_EQ(t, ms * (ms - 1) / 2, "allreduce on the merged communicator");
    MPI_Comm_free(&merged);
}

static void join(const char *dir)
{
    char path[4200], buf[64];
    int fd = -1;
    snprintf(path, sizeof path, "%s/join", dir);
    if (server) {
        int ls = socket(AF_INET, SOCK_STREAM, 0);
        struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
        socklen_t len = sizeof a;
        PLX_CHECK(bind(ls, (struct sockaddr *)&a, sizeof a) == 0 && listen(ls, 1) == 0, "listen for the join");
        getsockname(ls, (struct sockaddr *)&a, &len);
        snprintf(buf, sizeof buf, "%d", ntohs(a.sin_port));
        file_put(path, buf);
        fd = accept(ls, NULL, NULL);
        close(ls);
    } else {
        file_get(path, buf, sizeof buf);
        fd = socket(AF_INET, SOCK_STREAM, 0);
        struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(buf)),
                                 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
        PLX_CHECK(connect(fd, (struct sockaddr *)&a, sizeof a) == 0, "connect for the join");
    }
    MPI_Comm ic;
    PLX_CHECK_MPI(MPI_Comm_join(fd, &ic));
    close(fd);
    int rs, out = server ? 31 : 32, in = -1;
    MPI_Comm_remote_size(ic, &rs);
    PLX_CHECK_EQ(rs, 1, "remote size after a join between jobs");
    PLX_CHECK_MPI(MPI_Sendrecv(&out, 1, MPI_INT, 0, 2, &in, 1, MPI_INT, 0, 2, ic, MPI_STATUS_IGNORE));
    PLX_CHECK_EQ(in, server ? 32 : 31, "data over a join between jobs");
    PLX_CHECK_MPI(MPI_Comm_disconnect(&ic));
}

int main(int argc, char **argv)
{
    plx_test_init(&argc, &argv, "connect2");
    wrank = plx_test_state()->rank;
    wsize = plx_test_state()->size;
    if (argc != 3)
        plx_test_fail(__FILE__, __LINE__, "usage: connect2 server|client DIR");
    server = !strcmp(argv[1], "server");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    char port[MPI_MAX_PORT_NAME] = "", path[4200];
    snprintf(path, sizeof path, "%s/port", argv[2]);
    MPI_Comm ic;
    /* two_jobs.sh ... names: the server also publishes its port, the client
     * looks it up (both mpiexecs were given one PLEXUS_NAME_DIR) */
    int by_name = getenv("PLX_TEST_BY_NAME") != NULL;
    char svc[64];
    snprintf(svc, sizeof svc, "plexus-two-jobs-%s", strrchr(argv[2], '/') ? strrchr(argv[2], '/') + 1 : argv[2]);
    if (server) {
        if (wrank == 0) {
            PLX_CHECK_MPI(MPI_Open_port(MPI_INFO_NULL, port));
            if (by_name)   /* before the file: the client looks up once the file is there */
                PLX_CHECK_MPI(MPI_Publish_name(svc, MPI_INFO_NULL, port));
            file_put(path, port);
        }
        PLX_CHECK_MPI(MPI_Comm_accept(port, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &ic));
        if (wrank == 0 && by_name)
            PLX_CHECK_MPI(MPI_Unpublish_name(svc, MPI_INFO_NULL, port));
    } else {
        if (wrank == 0)
            file_get(path, port, sizeof port);
        if (wrank == 0 && by_name) {   /* the other mpiexec's name, through the shared PLEXUS_NAME_DIR */
            char named[MPI_MAX_PORT_NAME] = "";
            PLX_CHECK_MPI(MPI_Lookup_name(svc, MPI_INFO_NULL, named));
            PLX_CHECK_STR(named, port, "the port looked up by name in the other job");
        }
        PLX_CHECK_MPI(MPI_Comm_connect(port, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &ic));
    }
    use(ic);
    if (server && wrank == 0)
        PLX_CHECK_MPI(MPI_Close_port(port));
    PLX_CHECK_MPI(MPI_Comm_disconnect(&ic));   /* a barrier: the port is closed after it */
    if (!server && wrank == 0) {
        MPI_Info info;
        MPI_Info_create(&info);
        MPI_Info_set(info, "timeout", "3");
        PLX_CHECK_ERR(MPI_Comm_connect(port, info, 0, MPI_COMM_SELF, &ic), MPI_ERR_PORT);
        PLX_CHECK_ERR(MPI_Comm_connect("plexus-port:garbage", info, 0, MPI_COMM_SELF, &ic), MPI_ERR_PORT);
        MPI_Info_free(&info);
    }
    if (wrank == 0)
        join(argv[2]);
    return plx_test_finish();
}
