/*
 * MPI_Comm_disconnect lets go of the other job (issue 16): parents spawn two
 * children, talk to them, and disconnect; the children then finalize and
 * their mpiexec ends while the parents are still running (before, a child's
 * MPI_Finalize waited up to 10 s for the parents' connections to close), and
 * the parents' connections to them are closed (open descriptors and mapped
 * segments go back down, and a second spawn and disconnect keeps none).
 * The parents go on communicating among themselves afterwards. Names are
 * shared between the jobs: a child looks up the parents' name, a parent the
 * child's (mpiexec's PLEXUS_NAME_DIR).
 */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "plx_test.h"

/* What holds the other job: open descriptors (TCP's sockets) and the
 * transport's mapped shared-memory segments (a process of another job on
 * this host is reached through its segment: "/dev/shm/#<inode> (deleted)"
 * by descriptor, "/dev/shm/plexus-..." by name; not the collectives'
 * plx-coll-* objects). */
static int open_fds(void)
{
    DIR *d = opendir("/proc/self/fd");
    int n = 0;
    struct dirent *e;
    while (d && (e = readdir(d)))
        n += e->d_name[0] != '.';
    if (d)
        closedir(d);
    n--;            /* the directory's own descriptor */
    FILE *f = fopen("/proc/self/maps", "r");
    char line[512];
    while (f && fgets(line, sizeof line, f))
        n += strstr(line, "/dev/shm/#") != NULL || strstr(line, "/dev/shm/plexus-") != NULL;
    if (f)
        fclose(f);
    return n;
}

static void plx_nap(void)
{
    struct timespec ts = { 0, 20 * 1000 * 1000 };
    nanosleep(&ts, NULL);
}

/* Gone: no such process, or a zombie waiting for its parent to reap it. */
static int gone(int pid)
{
    char path[64], buf[256];
    snprintf(path, sizeof path, "/proc/%d/stat", pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return 1;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    const char *p = strrchr(buf, ')');
    return p && p[1] == ' ' && p[2] == 'Z';
}

int main(int argc, char **argv)
{
    plx_test_init(&argc, &argv, "disconnect");
    int wrank = plx_test_state()->rank, wsize = plx_test_state()->size;
    MPI_Comm parent, ic;
    MPI_Comm_get_parent(&parent);
    if (parent != MPI_COMM_NULL) {
        int pids[2] = { (int)getpid(), (int)getppid() }, v = -1;
        if (wrank == 0)
            PLX_CHECK_MPI(MPI_Send(pids, 2, MPI_INT, 0, 5, parent));
        PLX_CHECK_MPI(MPI_Bcast(&v, 1, MPI_INT, 0, parent));
        PLX_CHECK_EQ(v, 77, "broadcast from the parents");
        /* the name service is shared with the parents' job (their mpiexec's) */
        char svc[64], port[MPI_MAX_PORT_NAME] = "";
        snprintf(svc, sizeof svc, "plexus-dc-parent-%s", argc > 2 ? argv[2] : "?");
        if (wrank == 0) {
            PLX_CHECK_MPI(MPI_Lookup_name(svc, MPI_INFO_NULL, port));
            PLX_CHECK_STR(port, "port-of-the-parents", "a name the parents published, looked up by a child");
            snprintf(svc, sizeof svc, "plexus-dc-child-%s", argv[2]);
            PLX_CHECK_MPI(MPI_Publish_name(svc, MPI_INFO_NULL, "port-of-a-child"));
        }
        PLX_CHECK_MPI(MPI_Barrier(parent));
        PLX_CHECK_MPI(MPI_Comm_disconnect(&parent));
        return plx_test_finish();
    }
    /* the first round opens what stays open (TCP's listener, when this
     * one-node job did not need TCP before); the second must add nothing */
    int after[2] = { -1, -1 };
    for (int round = 0; round < 2; round++) {
        MPI_Barrier(MPI_COMM_WORLD);
        char tagstr[32], svc[64], port[MPI_MAX_PORT_NAME] = "";
        snprintf(tagstr, sizeof tagstr, "%d-%d", (int)getpid(), round);
        snprintf(svc, sizeof svc, "plexus-dc-parent-%s", tagstr);
        if (wrank == 0)
            PLX_CHECK_MPI(MPI_Publish_name(svc, MPI_INFO_NULL, "port-of-the-parents"));
        MPI_Bcast(tagstr, sizeof tagstr, MPI_CHAR, 0, MPI_COMM_WORLD);
        char *args[] = { "child", tagstr, NULL };
        PLX_CHECK_MPI(MPI_Comm_spawn(argv[0], args, 2, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &ic, MPI_ERRCODES_IGNORE));
        int pids[2] = { 0, 0 }, v = 77;
        if (wrank == 0)
            PLX_CHECK_MPI(MPI_Recv(pids, 2, MPI_INT, 0, 5, ic, MPI_STATUS_IGNORE));
        PLX_CHECK_MPI(MPI_Bcast(&v, 1, MPI_INT, wrank == 0 ? MPI_ROOT : MPI_PROC_NULL, ic));
        PLX_CHECK_MPI(MPI_Barrier(ic));   /* the child has published */
        if (wrank == 0) {
            snprintf(svc, sizeof svc, "plexus-dc-child-%s", tagstr);
            PLX_CHECK_MPI(MPI_Lookup_name(svc, MPI_INFO_NULL, port));
            PLX_CHECK_STR(port, "port-of-a-child", "a name a child published, looked up by a parent");
            PLX_CHECK_MPI(MPI_Unpublish_name(svc, MPI_INFO_NULL, port));
            snprintf(svc, sizeof svc, "plexus-dc-parent-%s", tagstr);
            PLX_CHECK_MPI(MPI_Unpublish_name(svc, MPI_INFO_NULL, "port-of-the-parents"));
        }
        int connected = open_fds();
        PLX_CHECK_MPI(MPI_Comm_disconnect(&ic));
        PLX_CHECK(ic == MPI_COMM_NULL, "disconnect sets the handle to MPI_COMM_NULL");
        double t0 = MPI_Wtime(), waited = 0;
        if (wrank == 0) {
            while (!(gone(pids[0]) && gone(pids[1])) && MPI_Wtime() - t0 < 8)
                plx_nap();
            waited = MPI_Wtime() - t0;
            PLX_CHECK(gone(pids[0]) && gone(pids[1]),
                      "the children and their mpiexec ended while the parents run (%.1f s after disconnect)", waited);
            printf("disconnect: round %d: children's mpiexec gone %.2f s after disconnect\n", round, waited);
        }
        /* rank 0 was connected to the children: that connection is closed */
        after[round] = open_fds();
        for (int i = 0; i < 100 && after[round] >= connected && wrank == 0; i++) {
            plx_nap();
            after[round] = open_fds();
        }
        printf("disconnect: round %d: rank %d descriptors: %d connected, %d after disconnect\n", round, wrank,
               connected, after[round]);
        if (wrank == 0)
            PLX_CHECK(after[round] < connected, "round %d: descriptors go down after disconnect (%d, %d connected)",
                      round, after[round], connected);
    }
    PLX_CHECK(after[1] <= after[0], "no descriptor kept from the second spawn (%d after it, %d after the first)",
              after[1], after[0]);
    int sum = 0, one = 1;
    PLX_CHECK_MPI(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    PLX_CHECK_EQ(sum, wsize, "the parents go on after the disconnect");
    return plx_test_finish();
}
