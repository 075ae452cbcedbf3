/*
 * spawn_host.c - MPI_Comm_spawn onto another host (info key "host"):
 *   spawn_host HOST N [MARK]  the parents spawn N children on HOST (with MARK
 *                          on their command line); each child
 *                          sends its host name and rank; point-to-point and an
 *                          allreduce are checked; prints "child R on H" lines
 *                          and "spawn-host ok".
 *   spawn_host --multi HOST FILE [MARK]  MPI_Comm_spawn_multiple of three
 *                          commands: 2 children with info "host" = HOST, 1 with
 *                          "file" = FILE (a host file), 1 without either (it
 *                          runs on the parents' hosts); each child also sends
 *                          its MPI_APPNUM; prints "child R app A on H" lines
 *                          and "spawn-host ok". Then MPI_Comm_split_type
 *                          (SHARED) of the parents and children merged must
 *                          group exactly the processes of each host (the two
 *                          jobs number their nodes each their own way).
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

/* The merged parents and children split by node: each part holds exactly
 * the processes of one host. */
static void check_node_split(MPI_Comm ic, int parent_side, const char *host)
{
    enum { L = 256 };
    MPI_Comm merged, node;
    int ms, ns, same = 0;
    MPI_Intercomm_merge(ic, !parent_side, &merged);
    MPI_Comm_size(merged, &ms);
    char *all = malloc((size_t)ms * L);
    MPI_Allgather(host, L, MPI_CHAR, all, L, MPI_CHAR, merged);
    for (int i = 0; i < ms; i++)
        same += !strcmp(all + (size_t)i * L, host);
    if (MPI_Comm_split_type(merged, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node) != MPI_SUCCESS ||
        node == MPI_COMM_NULL)
        die("MPI_Comm_split_type");
    MPI_Comm_size(node, &ns);
    MPI_Allgather(host, L, MPI_CHAR, all, L, MPI_CHAR, node);
    for (int i = 0; i < ns; i++)
        if (strcmp(all + (size_t)i * L, host))
            die("the node communicator holds a process of another host");
    if (ns != same)
        die("the node communicator lacks a process of this host");
    if (parent_side) {
        printf("node split ok (%d of %d on %s)\n", ns, ms, host);
        fflush(stdout);
    }
    free(all);
    MPI_Comm_free(&node);
    MPI_Comm_free(&merged);
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
        if (argc > 1 && !strcmp(argv[1], "mchild")) {
            int *app, flag;
            MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_APPNUM, &app, &flag);
            int a = flag ? *app : -1;
            MPI_Send(&a, 1, MPI_INT, 0, 2, parent);
        }
        int mine = 10 + lr, sum = 0;
        MPI_Allreduce(&mine, &sum, 1, MPI_INT, MPI_SUM, parent);
        if (sum != 1)
            die("allreduce from the parent");
        if (argc > 1 && !strcmp(argv[1], "mchild"))
            check_node_split(parent, 0, host);
        MPI_Comm_disconnect(&parent);
        MPI_Finalize();
        return 0;
    }
    if (argc < 3)
        die("usage: spawn_host HOST N");
    int errs[64], multi = !strcmp(argv[1], "--multi");
    if (multi) {
        /* each command placed by its own info: host, file, neither */
        MPI_Info infos[3];
        for (int i = 0; i < 3; i++)
            MPI_Info_create(&infos[i]);
        MPI_Info_set(infos[0], "host", argv[2]);
        MPI_Info_set(infos[1], "file", argv[3]);
        char *margs[] = { "mchild", argc > 4 ? argv[4] : "-", NULL };
        char *cmds[3] = { argv[0], argv[0], argv[0] }, **argvs[3] = { margs, margs, margs };
        int np[3] = { 2, 1, 1 };
        n = 4;
        if (MPI_Comm_spawn_multiple(3, cmds, argvs, np, infos, 0, MPI_COMM_WORLD, &ic, errs) != MPI_SUCCESS)
            die("MPI_Comm_spawn_multiple");
        for (int i = 0; i < 3; i++)
            MPI_Info_free(&infos[i]);
    } else {
        MPI_Info info;
        MPI_Info_create(&info);
        MPI_Info_set(info, "host", argv[1]);
        char *cargs[] = { "child", argc > 3 ? argv[3] : "-", NULL };
        if (MPI_Comm_spawn(argv[0], cargs, n, info, 0, MPI_COMM_WORLD, &ic, errs) != MPI_SUCCESS)
            die("MPI_Comm_spawn");
        MPI_Info_free(&info);
    }
    int rs;
    MPI_Comm_remote_size(ic, &rs);
    if (rs != n)
        die("remote size");
    for (int r = 0; r < n; r++) {
        char h[256];
        MPI_Recv(h, (int)sizeof h, MPI_CHAR, r, 1, ic, MPI_STATUS_IGNORE);
        if (multi) {
            int a;
            MPI_Recv(&a, 1, MPI_INT, r, 2, ic, MPI_STATUS_IGNORE);
            printf("child %d app %d on %s\n", r, a, h);
        } else {
            printf("child %d on %s\n", r, h);
        }
    }
    int one = 1, sum = 0, want = 0;
    MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, ic);
    for (int r = 0; r < n; r++)
        want += 10 + r;
    if (sum != want)
        die("allreduce from the children");
    if (multi)
        check_node_split(ic, 1, host);
    MPI_Comm_disconnect(&ic);
    printf("spawn-host ok (parent on %s)\n", host);
    fflush(stdout);
    MPI_Finalize();
    return 0;
}
