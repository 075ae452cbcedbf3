/*
 * spawn_host.c - MPI_Comm_spawn onto another host (info key "host"):
 *   spawn_host HOST N [MARK]  the parents spawn N children on HOST (with MARK
 *                          on their command line); each child
 *                          sends its host name and rank; point-to-point and an
 *                          allreduce are checked; prints "child R on H" lines
 *                          and "spawn-host ok".
 *   spawn_host --hang N [MARK]  spawns N children on this host and then the
 *                          parent and the children wait for a message that never
 *                          comes (for mpiexec --timeout: nothing may be left).
 */
#define _DEFAULT_SOURCE
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void die(const char *what)
{
    fprintf(stderr, "spawn_host: FAIL: %s\n", what);
    MPI_Abort(MPI_COMM_WORLD, 1);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm parent, ic;
    int rank, n = argc > 2 ? atoi(argv[2]) : 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_get_parent(&parent);
    char host[256] = "";
    gethostname(host, sizeof host - 1);
    if (parent != MPI_COMM_NULL && argc > 1 && !strcmp(argv[1], "hang")) {
        int x;
        printf("child waiting\n");
        fflush(stdout);
        MPI_Recv(&x, 1, MPI_INT, 0, 5, parent, MPI_STATUS_IGNORE);
        die("a message that never comes came");
    }
    if (parent == MPI_COMM_NULL && argc > 2 && !strcmp(argv[1], "--hang")) {
        char *hargs[] = { "hang", argc > 3 ? argv[3] : "-", NULL };
        if (MPI_Comm_spawn(argv[0], hargs, n, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &ic, MPI_ERRCODES_IGNORE) !=
            MPI_SUCCESS)
            die("MPI_Comm_spawn");
        int x;
        MPI_Recv(&x, 1, MPI_INT, 0, 5, ic, MPI_STATUS_IGNORE);
        die("a message that never comes came");
    }
    if (parent != MPI_COMM_NULL) {
        int lr;
        MPI_Comm_rank(parent, &lr);
        MPI_Send(host, (int)sizeof host, MPI_CHAR, 0, 1, parent);
        int mine = 10 + lr, sum = 0;
        MPI_Allreduce(&mine, &sum, 1, MPI_INT, MPI_SUM, parent);
        if (sum != 1)
            die("allreduce from the parent");
        MPI_Comm_disconnect(&parent);
        MPI_Finalize();
        return 0;
    }
    if (argc < 3)
        die("usage: spawn_host HOST N");
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "host", argv[1]);
    int errs[64];
    char *cargs[] = { "child", argc > 3 ? argv[3] : "-", NULL };
    if (MPI_Comm_spawn(argv[0], cargs, n, info, 0, MPI_COMM_WORLD, &ic, errs) != MPI_SUCCESS)
        die("MPI_Comm_spawn");
    MPI_Info_free(&info);
    int rs;
    MPI_Comm_remote_size(ic, &rs);
    if (rs != n)
        die("remote size");
    for (int r = 0; r < n; r++) {
        char h[256];
        MPI_Recv(h, (int)sizeof h, MPI_CHAR, r, 1, ic, MPI_STATUS_IGNORE);
        printf("child %d on %s\n", r, h);
    }
    int one = 1, sum = 0, want = 0;
    MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, ic);
    for (int r = 0; r < n; r++)
        want += 10 + r;
    if (sum != want)
        die("allreduce from the children");
    MPI_Comm_disconnect(&ic);
    printf("spawn-host ok (parent on %s)\n", host);
    fflush(stdout);
    MPI_Finalize();
    return 0;
}
