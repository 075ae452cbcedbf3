/*
 * spawn.c - MPI_Comm_spawn, MPI_Comm_spawn_multiple and MPI_Comm_get_parent.
 *
 * The parents (this program started by mpiexec) spawn, with the last rank
 * as root, 1 and then 3 copies of this program ("child"): each side checks
 * the remote size and the data of point-to-point messages both ways, a
 * rooted broadcast (MPI_ROOT / MPI_PROC_NULL), a gather to the parents'
 * root, an allreduce across, a barrier, a merge (parents first) and
 * MPI_Comm_disconnect. Nested spawn: a child ("nest") spawns a grandchild
 * ("leaf") and passes on what the grandchild sent. spawn_multiple starts
 * this program with one argument list and spawn_other (another program)
 * with another: every child checks its MPI_APPNUM and its arguments and
 * reports them. Errors, all with MPI_ERR_SPAWN and a message naming the
 * cause: a program that does not exist, a program that exits without
 * MPI_Init, maxprocs 0; with --usize-test (mpiexec -usize N) more processes
 * than the universe has room for.
 */
#include "plx_test.h"
#include <unistd.h>

static int wrank, wsize;
static const char *self;

/* MPI_Comm_split_type by node on communicators that mix the parents' and
 * the children's jobs (all on this host here): one communicator with all of
 * them, not one per job (node ids are per job). */
static void split_shared(MPI_Comm merged, MPI_Comm ic, int ls, int rs)
{
    MPI_Comm node, inode;
    int ms, ns, nr, mr, sum = -1;
    MPI_Comm_size(merged, &ms);
    MPI_Comm_rank(merged, &mr);
    PLX_CHECK_MPI(MPI_Comm_split_type(merged, MPI_COMM_TYPE_SHARED, mr, MPI_INFO_NULL, &node));
    PLX_CHECK(node != MPI_COMM_NULL, "split_type SHARED of the merged communicator");
    MPI_Comm_size(node, &ns);
    MPI_Comm_rank(node, &nr);
    PLX_CHECK_EQ(ns, ms, "split_type SHARED across two jobs on one host: one communicator with both");
    PLX_CHECK_EQ(nr, mr, "split_type SHARED: ranks in key order");
    PLX_CHECK_MPI(MPI_Allreduce(&nr, &sum, 1, MPI_INT, MPI_SUM, node));
    PLX_CHECK_EQ(sum, ns * (ns - 1) / 2, "allreduce on the node communicator");
    MPI_Comm_free(&node);
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "mpi_hw_resource_type", "mpi_shared_memory");
    PLX_CHECK_MPI(MPI_Comm_split_type(merged, MPI_COMM_TYPE_HW_GUIDED, 0, info, &node));
    MPI_Info_free(&info);
    ns = -1;
    if (node != MPI_COMM_NULL)
        MPI_Comm_size(node, &ns);
    PLX_CHECK_EQ(ns, ms, "split_type HW_GUIDED mpi_shared_memory across two jobs on one host");
    if (node != MPI_COMM_NULL)
        MPI_Comm_free(&node);
    /* no hardware domain smaller than a communicator on one node */
    PLX_CHECK_MPI(MPI_Comm_split_type(merged, MPI_COMM_TYPE_HW_UNGUIDED, 0, MPI_INFO_NULL, &node));
    PLX_CHECK(node == MPI_COMM_NULL, "split_type HW_UNGUIDED on one host gives MPI_COMM_NULL");
    /* on the intercommunicator: both whole sides, on either side */
    PLX_CHECK_MPI(MPI_Comm_split_type(ic, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &inode));
    PLX_CHECK(inode != MPI_COMM_NULL, "split_type SHARED of the intercommunicator");
    if (inode != MPI_COMM_NULL) {
        MPI_Comm_size(inode, &ns);
        MPI_Comm_remote_size(inode, &nr);
        PLX_CHECK_EQ(ns, ls, "split_type SHARED of the intercommunicator: local size");
        PLX_CHECK_EQ(nr, rs, "split_type SHARED of the intercommunicator: remote size");
        MPI_Comm_free(&inode);
    }
}

/* What every child does with its parents (also the parents' mirror). */
static void exchange(MPI_Comm ic, int parent_side)
{
    int lr, ls, rs;
    MPI_Comm_rank(ic, &lr);
    MPI_Comm_size(ic, &ls);
    MPI_Comm_remote_size(ic, &rs);
    /* point-to-point: every process sends to every remote one, tagged by side */
    for (int r = 0; r < rs; r++) {
        int v = (parent_side ? 10000 : 20000) + 100 * lr + r;
        PLX_CHECK_MPI(MPI_Send(&v, 1, MPI_INT, r, 3, ic));
    }
    for (int r = 0; r < rs; r++) {
        int v = -1;
        PLX_CHECK_MPI(MPI_Recv(&v, 1, MPI_INT, r, 3, ic, MPI_STATUS_IGNORE));
        PLX_CHECK_EQ(v, (parent_side ? 20000 : 10000) + 100 * r + lr, "point-to-point across the spawn");
    }
    /* broadcast from the parents' last rank */
    int buf[5] = { 0 };
    if (parent_side) {
        for (int i = 0; i < 5; i++)
            buf[i] = 77 * i;
        PLX_CHECK_MPI(MPI_Bcast(buf, 5, MPI_INT, lr == ls - 1 ? MPI_ROOT : MPI_PROC_NULL, ic));
    } else {
        PLX_CHECK_MPI(MPI_Bcast(buf, 5, MPI_INT, rs - 1, ic));
        for (int i = 0; i < 5; i++)
            PLX_CHECK_EQ(buf[i], 77 * i, "broadcast from the parents");
    }
    /* gather of the children's ranks at the parents' root 0 */
    if (parent_side) {
        int *all = calloc((size_t)rs, sizeof(int));
        PLX_CHECK_MPI(MPI_Gather(NULL, 0, MPI_INT, all, 1, MPI_INT, lr == 0 ? MPI_ROOT : MPI_PROC_NULL, ic));
        for (int i = 0; lr == 0 && i < rs; i++)
            PLX_CHECK_EQ(all[i], 500 + i, "gather from the children");
        free(all);
    } else {
        int v = 500 + lr;
        PLX_CHECK_MPI(MPI_Gather(&v, 1, MPI_INT, NULL, 0, MPI_INT, 0, ic));
    }
    /* allreduce: each side gets the sum of the other */
    int mine = parent_side ? lr + 1 : 1000 + lr, sum = -1, want = 0;
    PLX_CHECK_MPI(MPI_Allreduce(&mine, &sum, 1, MPI_INT, MPI_SUM, ic));
    for (int r = 0; r < rs; r++)
        want += parent_side ? 1000 + r : r + 1;
    PLX_CHECK_EQ(sum, want, "allreduce across the spawn");
    PLX_CHECK_MPI(MPI_Barrier(ic));
    /* merge: the parents first */
    MPI_Comm merged;
    int mr, ms;
    PLX_CHECK_MPI(MPI_Intercomm_merge(ic, parent_side ? 0 : 1, &merged));
    MPI_Comm_rank(merged, &mr);
    MPI_Comm_size(merged, &ms);
    PLX_CHECK_EQ(ms, ls + rs, "size of the merged communicator");
    PLX_CHECK_EQ(mr, parent_side ? lr : rs + lr, "rank in the merged communicator (parents first)");
    int one = mr, total = -1;
    PLX_CHECK_MPI(MPI_Allreduce(&one, &total, 1, MPI_INT, MPI_SUM, merged));
    PLX_CHECK_EQ(total, ms * (ms - 1) / 2, "allreduce on the merged communicator");
    split_shared(merged, ic, ls, rs);
    MPI_Comm_free(&merged);
}

static void test_spawn(int n)
{
    MPI_Comm ic;
    int errs[8], flag, rs;
    char *args[] = { "child", NULL };
    for (int i = 0; i < 8; i++)
        errs[i] = -1;
    PLX_CHECK_MPI(MPI_Comm_spawn(self, args, n, MPI_INFO_NULL, wsize - 1, MPI_COMM_WORLD, &ic, errs));
    for (int i = 0; i < n; i++)
        PLX_CHECK_EQ(errs[i], MPI_SUCCESS, "array_of_errcodes after a spawn");
    MPI_Comm_test_inter(ic, &flag);
    PLX_CHECK_EQ(flag, 1, "MPI_Comm_spawn gives an intercommunicator");
    MPI_Comm_remote_size(ic, &rs);
    PLX_CHECK_EQ(rs, n, "remote size = the children spawned");
    exchange(ic, 1);
    PLX_CHECK_MPI(MPI_Comm_disconnect(&ic));
}

/* A child spawns a grandchild, which sends 4242 up; the child adds 1. */
static void test_nested(void)
{
    MPI_Comm ic;
    char *args[] = { "nest", NULL };
    PLX_CHECK_MPI(MPI_Comm_spawn(self, args, 1, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &ic, MPI_ERRCODES_IGNORE));
    int v = -1;
    PLX_CHECK_MPI(MPI_Bcast(&v, 1, MPI_INT, 0, ic));
    PLX_CHECK_EQ(v, 4243, "a value from a grandchild, through a child");
    PLX_CHECK_MPI(MPI_Comm_disconnect(&ic));
}

static void test_multiple(const char *other)
{
    char *cmds[2] = { (char *)self, (char *)other };
    char *a0[] = { "multi", "alpha", NULL }, *a1[] = { "beta", "with space", NULL };
    char **argvs[2] = { a0, a1 };
    int np[2] = { 1, 2 }, errs[3];
    MPI_Info infos[2] = { MPI_INFO_NULL, MPI_INFO_NULL };
    MPI_Comm ic;
    PLX_CHECK_MPI(MPI_Comm_spawn_multiple(2, cmds, argvs, np, infos, 0, MPI_COMM_WORLD, &ic, errs));
    for (int i = 0; i < 3; i++)
        PLX_CHECK_EQ(errs[i], MPI_SUCCESS, "errcodes of spawn_multiple");
    int rs, got[3] = { -1, -1, -1 };
    MPI_Comm_remote_size(ic, &rs);
    PLX_CHECK_EQ(rs, 3, "spawn_multiple starts 1 + 2 processes in one world");
    /* each child reports appnum * 1000 + its world size * 100 + a digest of its arguments */
    PLX_CHECK_MPI(MPI_Allgather(NULL, 0, MPI_INT, got, 1, MPI_INT, ic));
    PLX_CHECK_EQ(got[0], 0 * 1000 + 300 + 1, "child 0: this program, appnum 0, args 'multi alpha'");
    PLX_CHECK_EQ(got[1], 1 * 1000 + 300 + 2, "child 1: spawn_other, appnum 1, args 'beta' 'with space'");
    PLX_CHECK_EQ(got[2], 1 * 1000 + 300 + 2, "child 2: spawn_other, appnum 1, args 'beta' 'with space'");
    PLX_CHECK_MPI(MPI_Comm_disconnect(&ic));
}

/* spawn_multiple with a different "wdir" per command (and a "path" for the
 * first only): each child runs in its own command's directory (issue 16, session 7; before, the first
 * command's applied to all) */
static void test_multiple_wdir(void)
{
    /* the first command by its bare name, found through its own "path" */
    char dir[4096], *base = strrchr(self, '/');
    snprintf(dir, sizeof dir, "%.*s", base ? (int)(base - self) : 1, base ? self : ".");
    char *cmds[2] = { base ? base + 1 : (char *)self, (char *)self };
    char *a0[] = { "cwd", NULL };
    char **argvs[2] = { a0, a0 };
    int np[2] = { 1, 1 }, errs[2] = { -1, -1 };
    MPI_Info infos[2];
    MPI_Info_create(&infos[0]);
    MPI_Info_create(&infos[1]);
    MPI_Info_set(infos[0], "wdir", "/tmp");
    MPI_Info_set(infos[0], "path", dir);
    MPI_Info_set(infos[1], "wdir", "/");
    MPI_Comm ic;
    PLX_CHECK_MPI(MPI_Comm_spawn_multiple(2, cmds, argvs, np, infos, 0, MPI_COMM_WORLD, &ic, errs));
    int got[2] = { -1, -1 };
    PLX_CHECK_MPI(MPI_Allgather(NULL, 0, MPI_INT, got, 1, MPI_INT, ic));
    PLX_CHECK_EQ(got[0], 1, "the first command's child runs in its wdir /tmp");
    PLX_CHECK_EQ(got[1], 2, "the second command's child runs in its wdir /");
    PLX_CHECK_MPI(MPI_Comm_disconnect(&ic));
    /* a missing wdir of the second command: MPI_ERR_SPAWN naming it */
    MPI_Info_set(infos[1], "wdir", "/no-such-dir-plexus");
    int rc = MPI_Comm_spawn_multiple(2, cmds, argvs, np, infos, 0, MPI_COMM_WORLD, &ic, errs);
    int cls = -1;
    MPI_Error_class(rc, &cls);
    PLX_CHECK_EQ(cls, MPI_ERR_SPAWN, "spawn_multiple with a missing wdir in its second command");
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(rc, msg, &len);
    if (wrank == 0)   /* the root: the others learn that it failed */
        PLX_CHECK(strstr(msg, "no-such-dir-plexus") != NULL, "the message names the directory: %s", msg);
    MPI_Info_free(&infos[0]);
    MPI_Info_free(&infos[1]);
}

static void check_msg(int rc, const char *needle, const char *what)
{
    char s[MPI_MAX_ERROR_STRING];
    int len, cls;
    MPI_Error_class(rc, &cls);
    PLX_CHECK_EQ(cls, MPI_ERR_SPAWN, what);
    MPI_Error_string(rc, s, &len);
    if (wrank == wsize - 1 && !strstr(s, needle))
        plx_test_fail(__FILE__, __LINE__, "%s: message '%s' does not say '%s'", what, s, needle);
    plx_test_pass();
}

static void test_errors(int usize_test)
{
    MPI_Comm ic = MPI_COMM_WORLD;
    int errs[4] = { -1, -1, -1, -1 }, rc;
    if (usize_test) {
        int *us, flag;
        MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_UNIVERSE_SIZE, &us, &flag);
        PLX_CHECK(flag && *us > wsize, "mpiexec -usize sets MPI_UNIVERSE_SIZE");
        char *args[] = { "child", NULL };
        rc = MPI_Comm_spawn(self, args, *us - wsize + 1, MPI_INFO_NULL, wsize - 1, MPI_COMM_WORLD, &ic, MPI_ERRCODES_IGNORE);
        check_msg(rc, "universe", "spawn of more processes than the universe has room for");
        /* "soft": as many as fit, here all that are left */
        MPI_Info info;
        char soft[32];
        MPI_Info_create(&info);
        snprintf(soft, sizeof soft, "1:%d", *us);
        MPI_Info_set(info, "soft", soft);
        PLX_CHECK_MPI(MPI_Comm_spawn(self, args, *us, info, 0, MPI_COMM_WORLD, &ic, MPI_ERRCODES_IGNORE));
        int rs;
        MPI_Comm_remote_size(ic, &rs);
        PLX_CHECK_EQ(rs, *us - wsize, "a soft spawn starts what the universe has room for");
        exchange(ic, 1);
        MPI_Comm_disconnect(&ic);
        MPI_Info_free(&info);
        return;     /* the rest is mpi.spawn's (the job just spawned may still be ending) */
    }
    double t0 = MPI_Wtime();
    rc = MPI_Comm_spawn("./no-such-program-plexus", MPI_ARGV_NULL, 2, MPI_INFO_NULL, wsize - 1, MPI_COMM_WORLD,
                        &ic, errs);
    check_msg(rc, "no-such-program-plexus", "spawn of a program that does not exist");
    PLX_CHECK(ic == MPI_COMM_NULL, "no intercommunicator after a failed spawn");
    PLX_CHECK_EQ(errs[1], rc, "errcodes of a failed spawn (at every process)");
    rc = MPI_Comm_spawn("true", MPI_ARGV_NULL, 1, MPI_INFO_NULL, wsize - 1, MPI_COMM_WORLD, &ic, MPI_ERRCODES_IGNORE);
    check_msg(rc, "without connecting", "spawn of a program that never calls MPI_Init");
    rc = MPI_Comm_spawn("false", MPI_ARGV_NULL, 1, MPI_INFO_NULL, wsize - 1, MPI_COMM_WORLD, &ic, MPI_ERRCODES_IGNORE);
    check_msg(rc, "exit", "spawn of a program that fails before MPI_Init");
    rc = MPI_Comm_spawn(self, MPI_ARGV_NULL, 0, MPI_INFO_NULL, wsize - 1, MPI_COMM_WORLD, &ic, MPI_ERRCODES_IGNORE);
    check_msg(rc, "maxprocs", "spawn of 0 processes");
    /* a command's own host file that does not exist, a host name that is
     * not one: the spawn fails (before this, the sub-job's mpiexec ended with
     * a usage error and took this job with it) */
    MPI_Info infos[2];
    char *cmds[2] = { (char *)self, (char *)self };
    int np[2] = { 1, 1 };
    MPI_Info_create(&infos[0]);
    MPI_Info_create(&infos[1]);
    MPI_Info_set(infos[1], "file", "/nonexistent/plexus-hostfile");
    rc = MPI_Comm_spawn_multiple(2, cmds, MPI_ARGVS_NULL, np, infos, wsize - 1, MPI_COMM_WORLD, &ic,
                                 MPI_ERRCODES_IGNORE);
    check_msg(rc, "/nonexistent/plexus-hostfile", "spawn_multiple with a missing host file");
    MPI_Info_delete(infos[1], "file");
    MPI_Info_set(infos[1], "host", "no host!");
    rc = MPI_Comm_spawn_multiple(2, cmds, MPI_ARGVS_NULL, np, infos, wsize - 1, MPI_COMM_WORLD, &ic,
                                 MPI_ERRCODES_IGNORE);
    check_msg(rc, "no host!", "spawn_multiple with a bad host name");
    MPI_Info_free(&infos[0]);
    MPI_Info_free(&infos[1]);
    PLX_CHECK(MPI_Wtime() - t0 < 60, "the failed spawns end in time");

}

/* "soft" on each command of a spawn_multiple (-usize 6, 2 ranks: room for 4):
 * 3 + 3 asked, "1:3" and "2,3" allowed; each command gets its least (1 + 2),
 * then the first as many more as fit (2 + 2); errcodes says which of the 6
 * started, command by command. A spawn whose least does not fit fails. */
static void test_soft_multiple(void)
{
    char *cmds[2] = { (char *)self, (char *)self };
    char *a0[] = { "multi", "alpha", NULL }, *a1[] = { "multi", NULL };
    char **argvs[2] = { a0, a1 };
    int np[2] = { 3, 3 }, errs[6] = { -1, -1, -1, -1, -1, -1 }, rc;
    MPI_Info infos[2];
    MPI_Info_create(&infos[0]);
    MPI_Info_create(&infos[1]);
    MPI_Info_set(infos[0], "soft", "3");
    MPI_Info_set(infos[1], "soft", "3");
    MPI_Comm ic = MPI_COMM_WORLD;
    rc = MPI_Comm_spawn_multiple(2, cmds, argvs, np, infos, wsize - 1, MPI_COMM_WORLD, &ic, errs);
    check_msg(rc, "universe", "a soft spawn_multiple whose least does not fit");
    PLX_CHECK(ic == MPI_COMM_NULL, "no intercommunicator after a failed spawn");
    MPI_Info_set(infos[0], "soft", "1:3");
    MPI_Info_set(infos[1], "soft", "2,3");
    PLX_CHECK_MPI(MPI_Comm_spawn_multiple(2, cmds, argvs, np, infos, 0, MPI_COMM_WORLD, &ic, errs));
    static const int want[6] = { MPI_SUCCESS, MPI_SUCCESS, MPI_ERR_SPAWN, MPI_SUCCESS, MPI_SUCCESS, MPI_ERR_SPAWN };
    for (int i = 0; i < 6; i++)
        PLX_CHECK_EQ(errs[i], want[i], "errcodes of a soft spawn_multiple, command by command");
    int rs, got[4] = { -1, -1, -1, -1 };
    MPI_Comm_remote_size(ic, &rs);
    PLX_CHECK_EQ(rs, 4, "a soft spawn_multiple starts 2 + 2 processes");
    if (rs == 4) {
        PLX_CHECK_MPI(MPI_Allgather(NULL, 0, MPI_INT, got, 1, MPI_INT, ic));
        for (int i = 0; i < 4; i++)
            PLX_CHECK_EQ(got[i], i < 2 ? 0 * 1000 + 400 + 1 : 1 * 1000 + 400, "child: its command's appnum and arguments");
    }
    PLX_CHECK_MPI(MPI_Comm_disconnect(&ic));
    MPI_Info_free(&infos[0]);
    MPI_Info_free(&infos[1]);
}

/* --- the children -------------------------------------------------------------- */

static int child(int argc, char **argv, MPI_Comm parent)
{
    PLX_CHECK(argc >= 2, "a child has its arguments");
    if (!strcmp(argv[1], "child")) {
        exchange(parent, 0);
    } else if (!strcmp(argv[1], "nest")) {
        MPI_Comm ic;
        char *args[] = { "leaf", NULL };
        PLX_CHECK_MPI(MPI_Comm_spawn(self, args, 1, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &ic, MPI_ERRCODES_IGNORE));
        int v = -1;
        PLX_CHECK_MPI(MPI_Recv(&v, 1, MPI_INT, 0, 9, ic, MPI_STATUS_IGNORE));
        PLX_CHECK_EQ(v, 4242, "a value from the grandchild");
        MPI_Comm_disconnect(&ic);
        v++;
        PLX_CHECK_MPI(MPI_Bcast(&v, 1, MPI_INT, MPI_ROOT, parent));
    } else if (!strcmp(argv[1], "cwd")) {
        char cwd[4096] = "";
        int v = !getcwd(cwd, sizeof cwd) ? 0 : !strcmp(cwd, "/tmp") ? 1 : !strcmp(cwd, "/") ? 2 : 0;
        PLX_CHECK_MPI(MPI_Allgather(&v, 1, MPI_INT, NULL, 0, MPI_INT, parent));
    } else if (!strcmp(argv[1], "leaf")) {
        int v = 4242;
        PLX_CHECK_MPI(MPI_Send(&v, 1, MPI_INT, 0, 9, parent));
    } else if (!strcmp(argv[1], "multi")) {
        int *app, flag, size;
        MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_APPNUM, &app, &flag);
        MPI_Comm_size(MPI_COMM_WORLD, &size);
        int v = (flag ? *app : -9) * 1000 + size * 100 + (argc == 3 && !strcmp(argv[2], "alpha"));
        PLX_CHECK_MPI(MPI_Allgather(&v, 1, MPI_INT, NULL, 0, MPI_INT, parent));
    }
    MPI_Comm_disconnect(&parent);
    return plx_test_finish();
}

int main(int argc, char **argv)
{
    plx_test_init(&argc, &argv, "spawn");
    wrank = plx_test_state()->rank;
    wsize = plx_test_state()->size;
    self = argv[0];
    MPI_Comm parent;
    PLX_CHECK_MPI(MPI_Comm_get_parent(&parent));
    if (parent != MPI_COMM_NULL)
        return child(argc, argv, parent);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int usize_test = argc > 1 && !strcmp(argv[1], "--usize-test");
    int errors_only = argc > 1 && !strcmp(argv[1], "--errors-test");   /* mpi.spawn_leftovers */
    if (argc > 1 && !strcmp(argv[1], "--soft-multiple-test")) {        /* mpi.spawn_soft_multiple */
        test_soft_multiple();
        return plx_test_finish();
    }
    if (!usize_test && !errors_only) {
        test_spawn(1);
        test_spawn(3);
        test_nested();
        /* spawn_other lives next to this program */
        char other[4096];
        snprintf(other, sizeof other, "%s", self);
        char *slash = strrchr(other, '/');
        snprintf(slash ? slash + 1 : other, sizeof other - (size_t)(slash ? slash + 1 - other : 0),
                 "mpitest_spawn_other");
        test_multiple(other);
        test_multiple_wdir();
    }
    test_errors(usize_test);
    return plx_test_finish();
}
