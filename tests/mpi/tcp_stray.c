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
#include "stray_common.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include "../../src/transport/tcp/tcp_wire.h"

#define FORGED_TAG STRAY_FORGED_TAG

/* Listening TCP ports of sockets this process has open. */
static int my_listen_ports(int *ports, int max)
{
    static const char *const files[] = { "/proc/net/tcp", "/proc/net/tcp6" };
    return stray_ports(files, 2, "0A", ports, max);
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
    h.size = (uint32_t)stray_size;
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

int main(int argc, char **argv)
{
    return stray_run(&argc, &argv, "tcp_stray", "tcp", "listening TCP socket", my_listen_ports, attack);
}
