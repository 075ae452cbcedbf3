/*
 * tcp_stray.c - strangers at a rank's TCP port are refused; the job goes on.
 *
 * Run with PLEXUS_TRANSPORTS=tcp and a short PLEXUS_TCP_CONNECT_TIMEOUT (the
 * CTest registration sets both). Rank 1 finds the listening TCP socket that
 * MPI_Init opened (in /proc/net/tcp{,6}: among its descriptors, listening,
 * and not there before MPI_Init) and tells rank 0, then waits in MPI_Recv so that its progress engine serves the
 * listener. Rank 0, as a plain socket client, tries on each port:
 *   1. garbage (an HTTP request and random bytes);
 *   2. a well-formed handshake (tcp_wire.h) that claims to be rank 0 but
 *      carries a wrong job secret, followed by a packet header that would
 *      deliver a message with tag 4242 if it were accepted;
 *   3. half a handshake, then silence (closed after the connect timeout);
 *   4. connect and close at once.
 * Each connection must be closed by rank 1 without an answer (no ACK bytes).
 * Then every rank checks real traffic (ring exchange, a 1 MiB rendezvous
 * message, nonblocking all-to-all) and that no message with tag 4242 ever
 * arrived. Under another MPI (tests/mpi/run_with.sh) the attacks are skipped
 * (their ports are not ours to poke) and only the traffic is checked.
 */
#include "plx_test.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>
#include "../../src/transport/tcp/tcp_wire.h"

#define MAX_PORTS 8
#define FORGED_TAG 4242

static int rank, size;

/* Listening TCP ports of sockets this process has open. */
static int my_listen_ports(int *ports, int max)
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
    const char *files[] = { "/proc/net/tcp", "/proc/net/tcp6" };
    for (int f = 0; f < 2; f++) {
        FILE *fp = fopen(files[f], "r");
        if (!fp)
            continue;
        char line[512];
        while (fgets(line, sizeof line, fp)) {
            char local[64], remote[64], st[8];
            unsigned long ino;
            if (sscanf(line, "%*s %63s %63s %7s %*s %*s %*s %*s %*s %lu", local, remote, st, &ino) != 4)
                continue;
            if (strcmp(st, "0A") != 0)          /* TCP_LISTEN */
                continue;
            for (int i = 0; i < ninodes; i++) {
                char *colon = strrchr(local, ':');
                if (inodes[i] == ino && colon && n < max) {
                    int port = (int)strtol(colon + 1, NULL, 16);
                    int dup = 0;
                    for (int k = 0; k < n; k++)
                        dup |= ports[k] == port;
                    if (!dup)
                        ports[n++] = port;
                }
            }
        }
        fclose(fp);
    }
    return n;
}

static int connect_local(int port)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    PLX_CHECK(fd >= 0, "socket: %s", strerror(errno));
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    PLX_CHECK(connect(fd, (struct sockaddr *)&a, sizeof a) == 0, "connect to port %d: %s", port, strerror(errno));
    return fd;
}

static void send_all(int fd, const void *buf, size_t len)
{
    /* the peer may close while we write: that is the expected outcome */
    (void)send(fd, buf, len, MSG_NOSIGNAL);
}

/* Waits up to `seconds` for the peer to close; returns the bytes it sent
 * before closing (0 for a refusal), or -1 if it stayed open. */
static long wait_closed(int fd, double seconds)
{
    long got = 0;
    double end = MPI_Wtime() + seconds;
    for (;;) {
        double left = end - MPI_Wtime();
        if (left <= 0)
            return -1;
        struct pollfd p = { .fd = fd, .events = POLLIN };
        if (poll(&p, 1, (int)(left * 1000) + 1) <= 0)
            continue;
        char buf[256];
        ssize_t r = recv(fd, buf, sizeof buf, 0);
        if (r == 0 || (r < 0 && errno == ECONNRESET))
            return got;
        if (r > 0)
            got += r;
    }
}

static void attack(int port)
{
    /* 1. garbage */
    int fd = connect_local(port);
    const char http[] = "GET / HTTP/1.0\r\nHost: x\r\n\r\n";
    send_all(fd, http, sizeof http - 1);
    unsigned char junk[4096];
    for (size_t i = 0; i < sizeof junk; i++)
        junk[i] = (unsigned char)(i * 131 + 7);
    send_all(fd, junk, sizeof junk);
    long r = wait_closed(fd, 10);
    PLX_CHECK(r == 0, "garbage at port %d: connection %s (%ld bytes answered)", port,
              r < 0 ? "left open" : "answered", r);
    close(fd);

    /* 2. forged handshake: right format, wrong secret, then a packet */
    fd = connect_local(port);
    struct plx_tcp_hello h;
    memset(&h, 0, sizeof h);
    h.magic = PLX_TCP_MAGIC;
    h.version = PLX_TCP_VERSION;
    h.hdr_size = 32;
    h.src = 0;
    h.dst = 1;
    h.size = (uint32_t)size;
    for (int i = 0; i < 16; i++)
        h.secret[i] = (uint8_t)(0xa5 ^ i);
    struct {
        uint8_t type, flags;
        uint16_t ctx;
        int32_t src, tag;
        uint32_t seq;
        uint64_t len, sreq;
        int32_t payload[4];
    } pkt = { .type = 1, .ctx = 0, .src = 0, .tag = FORGED_TAG, .seq = 0, .len = 16,
              .payload = { 66, 66, 66, 66 } };
    send_all(fd, &h, sizeof h);
    send_all(fd, &pkt, sizeof pkt);
    r = wait_closed(fd, 10);
    PLX_CHECK(r == 0, "forged handshake at port %d: connection %s (%ld bytes answered)", port,
              r < 0 ? "left open" : "answered", r);
    close(fd);

    /* 3. half a handshake, then silence: closed after the handshake timeout */
    fd = connect_local(port);
    send_all(fd, &h, 12);
    double t0 = MPI_Wtime();
    const char *tmo = getenv("PLEXUS_TCP_CONNECT_TIMEOUT");
    r = wait_closed(fd, (tmo ? atof(tmo) : 30) + 15);
    PLX_CHECK(r == 0, "half handshake at port %d: connection %s after %.1f s", port,
              r < 0 ? "left open" : "answered", MPI_Wtime() - t0);
    close(fd);

    /* 4. connect, close */
    fd = connect_local(port);
    close(fd);
}

static void traffic(int round)
{
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

int main(int argc, char **argv)
{
    /* listening sockets inherited from the launcher (Hydra leaks one) are not ours */
    int before[MAX_PORTS], nbefore = my_listen_ports(before, MAX_PORTS);
    plx_test_init(&argc, &argv, "tcp_stray");
    rank = plx_test_state()->rank;
    size = plx_test_state()->size;
    if (size < 2) {
        PLX_CHECK(size >= 1, "size");
        return plx_test_finish();
    }
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    int len;
    MPI_Get_library_version(lib, &len);
    const char *tr = getenv("PLEXUS_TRANSPORTS");
    int ours = strncmp(lib, "Plexus", 6) == 0 && tr && strstr(tr, "tcp");

    traffic(0);                 /* connections exist before the strangers come */

    if (ours) {
        int ports[MAX_PORTS], n = 0;
        if (rank == 1) {
            int all[MAX_PORTS], nall = my_listen_ports(all, MAX_PORTS);
            for (int i = 0; i < nall; i++) {
                int old = 0;
                for (int k = 0; k < nbefore; k++)
                    old |= all[i] == before[k];
                if (!old)
                    ports[n++] = all[i];
            }
            PLX_CHECK(n == 1, "rank 1 has one listening TCP socket of its own (found %d)", n);
            PLX_CHECK_MPI(MPI_Send(&n, 1, MPI_INT, 0, 1, MPI_COMM_WORLD));
            PLX_CHECK_MPI(MPI_Send(ports, n, MPI_INT, 0, 1, MPI_COMM_WORLD));
            int done = 0;       /* progress serves the listener meanwhile */
            PLX_CHECK_MPI(MPI_Recv(&done, 1, MPI_INT, 0, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            PLX_CHECK_EQ(done, n, "ports attacked");
        } else if (rank == 0) {
            PLX_CHECK_MPI(MPI_Recv(&n, 1, MPI_INT, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            PLX_CHECK(n >= 1 && n <= MAX_PORTS, "port count %d", n);
            PLX_CHECK_MPI(MPI_Recv(ports, n, MPI_INT, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            for (int i = 0; i < n; i++)
                attack(ports[i]);
            PLX_CHECK_MPI(MPI_Send(&n, 1, MPI_INT, 1, 2, MPI_COMM_WORLD));
        }
    }

    for (int round = 1; round <= 3; round++)
        traffic(round);

    /* nothing the strangers sent reached the job */
    PLX_CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    int flag = 1;
    MPI_Status st;
    PLX_CHECK_MPI(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st));
    PLX_CHECK(!flag, "an unexpected message (source %d, tag %d) arrived", flag ? st.MPI_SOURCE : -1,
              flag ? st.MPI_TAG : -1);
    return plx_test_finish();
}
