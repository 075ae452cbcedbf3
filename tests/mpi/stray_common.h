/*
 * stray_common.h - what tcp_stray.c and sctp_stray.c share: finding the
 * port a transport opened in MPI_Init (a socket among this process's
 * descriptors that was not there before), the traffic every rank checks
 * before and after the strangers, and the run itself:
 *   traffic; rank 1 finds its new port and tells rank 0, then waits in
 *   MPI_Recv (its progress engine serves the port); rank 0 attacks each
 *   port with the transport's own attack(); traffic three more times; no
 *   message at all is left unreceived (nothing a stranger sent reached the
 *   job).
 * Under another MPI (tests/mpi/run_with.sh), or when PLEXUS_TRANSPORTS
 * does not name the transport, the attacks are skipped (the ports are not
 * ours to poke) and only the traffic is checked.
 */
#ifndef PLX_TEST_STRAY_COMMON_H
#define PLX_TEST_STRAY_COMMON_H

#include "plx_test.h"

#include <dirent.h>
#include <unistd.h>

#define STRAY_MAX_PORTS 8
#define STRAY_FORGED_TAG 4242   /* a forged packet would deliver a message with this tag */

static int stray_rank, stray_size;

/* Ports of the sockets this process has open, as /proc/net/<files> list
 * them; with `state` (e.g. "0A", TCP_LISTEN) only sockets in that state. */
static int stray_ports(const char *const *files, int nfiles, const char *state, int *ports, int max)
{
    unsigned long inodes[256];
    int ninodes = 0, n = 0;
    DIR *d = opendir("/proc/self/fd");
    if (!d)
        return 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL && ninodes < 256) {
        char path[300], link[64];
        snprintf(path, sizeof path, "/proc/self/fd/%s", e->d_name);
        ssize_t l = readlink(path, link, sizeof link - 1);
        if (l <= 0)
            continue;
        link[l] = 0;
        unsigned long ino;
        if (sscanf(link, "socket:[%lu]", &ino) == 1)
            inodes[ninodes++] = ino;
    }
    closedir(d);
    for (int f = 0; f < nfiles; f++) {
        FILE *fp = fopen(files[f], "r");
        if (!fp)
            continue;
        char line[512];
        while (fgets(line, sizeof line, fp)) {
            char local[64], remote[64], st[8];
            unsigned long ino;
            if (sscanf(line, "%*s %63s %63s %7s %*s %*s %*s %*s %*s %lu", local, remote, st, &ino) != 4)
                continue;
            if (state && strcmp(st, state) != 0)
                continue;
            char *colon = strrchr(local, ':');
            for (int i = 0; i < ninodes && colon; i++) {
                if (inodes[i] != ino || n >= max)
                    continue;
                int port = (int)strtol(colon + 1, NULL, 16);
                int dup = 0;
                for (int k = 0; k < n; k++)
                    dup |= ports[k] == port;
                if (!dup)
                    ports[n++] = port;
            }
        }
        fclose(fp);
    }
    return n;
}

static void stray_traffic(int round)
{
    int rank = stray_rank, size = stray_size;
    /* ring, both directions */
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    int out[2] = { rank, round }, in[2] = { -1, -1 };
    PLX_CHECK_MPI(MPI_Sendrecv(out, 2, MPI_INT, right, 7, in, 2, MPI_INT, left, 7, MPI_COMM_WORLD,
                               MPI_STATUS_IGNORE));
    PLX_CHECK(in[0] == left && in[1] == round, "ring from %d: got {%d,%d}", left, in[0], in[1]);

    /* 1 MiB rendezvous from rank 0 to the last rank, checked */
    const int big = 1 << 20;
    unsigned char *b = plx_malloc((size_t)big);
    if (rank == 0) {
        plx_fill(b, (size_t)big, plx_seed(0, (uint32_t)round, (uint32_t)big, 9));
        PLX_CHECK_MPI(MPI_Send(b, big, MPI_BYTE, size - 1, 8, MPI_COMM_WORLD));
    } else if (rank == size - 1) {
        memset(b, 0, (size_t)big);
        PLX_CHECK_MPI(MPI_Recv(b, big, MPI_BYTE, 0, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        PLX_CHECK_PATTERN(b, (size_t)big, plx_seed(0, (uint32_t)round, (uint32_t)big, 9), "1 MiB message");
    }
    free(b);

    /* nonblocking all-to-all of small messages */
    int *sb = plx_malloc(sizeof(int) * (size_t)size), *rb = plx_malloc(sizeof(int) * (size_t)size);
    MPI_Request *rq = plx_malloc(sizeof(MPI_Request) * 2 * (size_t)size);
    for (int p = 0; p < size; p++) {
        sb[p] = rank * 1000 + p + round;
        rb[p] = -1;
        PLX_CHECK_MPI(MPI_Irecv(&rb[p], 1, MPI_INT, p, 9, MPI_COMM_WORLD, &rq[p]));
    }
    for (int p = 0; p < size; p++)
        PLX_CHECK_MPI(MPI_Isend(&sb[p], 1, MPI_INT, p, 9, MPI_COMM_WORLD, &rq[size + p]));
    PLX_CHECK_MPI(MPI_Waitall(2 * size, rq, MPI_STATUSES_IGNORE));
    for (int p = 0; p < size; p++)
        PLX_CHECK(rb[p] == p * 1000 + rank + round, "all-to-all value from %d: %d", p, rb[p]);
    free(sb);
    free(rb);
    free(rq);
}

/* The whole program (see the top of this file). transport: the name
 * PLEXUS_TRANSPORTS must hold; what: the port's kind, for messages;
 * ports(): the ports of this process (called before MPI_Init and after). */
static int stray_run(int *argc, char ***argv, const char *name, const char *transport, const char *what,
                     int (*ports_fn)(int *ports, int max), void (*attack)(int port))
{
    /* sockets inherited from the launcher (Hydra leaks a listener) are not ours */
    int before[STRAY_MAX_PORTS], nbefore = ports_fn(before, STRAY_MAX_PORTS);
    plx_test_init(argc, argv, name);
    stray_rank = plx_test_state()->rank;
    stray_size = plx_test_state()->size;
    if (stray_size < 2) {
        PLX_CHECK(stray_size >= 1, "size");
        return plx_test_finish();
    }
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    int len;
    MPI_Get_library_version(lib, &len);
    const char *tr = getenv("PLEXUS_TRANSPORTS");
    int ours = strncmp(lib, "Plexus", 6) == 0 && tr && strstr(tr, transport);

    stray_traffic(0);           /* connections exist before the strangers come */

    if (ours) {
        int ports[STRAY_MAX_PORTS], n = 0;
        if (stray_rank == 1) {
            int all[STRAY_MAX_PORTS], nall = ports_fn(all, STRAY_MAX_PORTS);
            for (int i = 0; i < nall; i++) {
                int old = 0;
                for (int k = 0; k < nbefore; k++)
                    old |= all[i] == before[k];
                if (!old)
                    ports[n++] = all[i];
            }
            PLX_CHECK(n == 1, "rank 1 has one %s of its own (found %d)", what, n);
            PLX_CHECK_MPI(MPI_Send(&n, 1, MPI_INT, 0, 1, MPI_COMM_WORLD));
            PLX_CHECK_MPI(MPI_Send(ports, n, MPI_INT, 0, 1, MPI_COMM_WORLD));
            int done = 0;       /* progress serves the port meanwhile */
            PLX_CHECK_MPI(MPI_Recv(&done, 1, MPI_INT, 0, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            PLX_CHECK_EQ(done, n, "ports attacked");
        } else if (stray_rank == 0) {
            PLX_CHECK_MPI(MPI_Recv(&n, 1, MPI_INT, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            PLX_CHECK(n >= 1 && n <= STRAY_MAX_PORTS, "port count %d", n);
            PLX_CHECK_MPI(MPI_Recv(ports, n, MPI_INT, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            for (int i = 0; i < n; i++)
                attack(ports[i]);
            PLX_CHECK_MPI(MPI_Send(&n, 1, MPI_INT, 1, 2, MPI_COMM_WORLD));
        }
    }

    for (int round = 1; round <= 3; round++)
        stray_traffic(round);

    /* nothing the strangers sent reached the job */
    PLX_CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    int flag = 1;
    MPI_Status st;
    PLX_CHECK_MPI(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st));
    PLX_CHECK(!flag, "an unexpected message (source %d, tag %d) arrived", flag ? st.MPI_SOURCE : -1,
              flag ? st.MPI_TAG : -1);
    return plx_test_finish();
}

#endif
