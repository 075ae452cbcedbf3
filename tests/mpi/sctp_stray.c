/*
 * sctp_stray.c - strangers at a rank's SCTP port are refused; the job goes on.
 *
 * Run with PLEXUS_TRANSPORTS=sctp and a short PLEXUS_SCTP_CONNECT_TIMEOUT
 * (the CTest registration sets both). Rank 1 finds the UDP encapsulation
 * port its SCTP stack opened in MPI_Init (in /proc/net/udp: a socket among
 * its descriptors that was not there before) and tells rank 0. Rank 0 then,
 * while rank 1 waits in MPI_Recv:
 *   1. sends garbage datagrams to that UDP port (random bytes, and bytes
 *      shaped like an SCTP INIT with a wrong checksum);
 *   2. opens an SCTP association of its own (a second socket in its usrsctp
 *      stack, not Plexus's) and sends a well-formed HELLO with a wrong job
 *      secret followed by a packet that would deliver a message with tag
 *      4242 if accepted: the association must be aborted;
 *   3. opens an association and says nothing: it must be aborted after the
 *      connect timeout.
 * Then every rank checks real traffic (ring, 1 MiB rendezvous, all-to-all)
 * and that no message with tag 4242 ever arrived.
 */
#include "stray_common.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <usrsctp.h>
#include "transport/sctp/sctp_wire.h"

#define FORGED_TAG STRAY_FORGED_TAG

/* UDP ports of IPv4 sockets this process has open. */
static int my_udp_ports(int *ports, int max)
{
    static const char *const files[] = { "/proc/net/udp" };
    return stray_ports(files, 1, NULL, ports, max);
}

static void garbage(int port)
{
    int fd = socket(AF_INET, SOCK_DGRAM, 0);
    PLX_CHECK(fd >= 0, "socket: %s", strerror(errno));
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    unsigned char junk[1200];
    for (int k = 0; k < 5; k++) {
        for (size_t i = 0; i < sizeof junk; i++)
            junk[i] = (unsigned char)(i * 131 + 7 * k + 3);
        if (k == 4) {           /* SCTP common header to our port, an INIT chunk, checksum 0 */
            memset(junk, 0, 32);
            junk[0] = 0x12, junk[1] = 0x34;
            junk[2] = (unsigned char)(port >> 8), junk[3] = (unsigned char)port;
            junk[12] = 1;       /* INIT */
            junk[14] = 0, junk[15] = 20;
        }
        PLX_CHECK(sendto(fd, junk, 16 + (size_t)k * 200, 0, (struct sockaddr *)&a, sizeof a) >= 0,
                  "sendto port %d: %s", port, strerror(errno));
    }
    close(fd);
}

/* A socket of our own in this process's usrsctp stack, connected to the
 * rank 1 stack at port (its SCTP port is its UDP port). NULL if it could
 * not connect. */
static struct socket *stranger_connect(int port)
{
    struct socket *so = usrsctp_socket(AF_INET, SOCK_STREAM, IPPROTO_SCTP, NULL, NULL, 0, NULL);
    PLX_CHECK(so != NULL, "usrsctp_socket: %s", strerror(errno));
    if (!so)
        return NULL;
    struct sctp_udpencaps ue;
    memset(&ue, 0, sizeof ue);
    ue.sue_assoc_id = SCTP_FUTURE_ASSOC;
    ue.sue_port = htons((uint16_t)port);
    PLX_CHECK(usrsctp_setsockopt(so, IPPROTO_SCTP, SCTP_REMOTE_UDP_ENCAPS_PORT, &ue, sizeof ue) == 0,
              "SCTP_REMOTE_UDP_ENCAPS_PORT: %s", strerror(errno));
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    int rc = usrsctp_connect(so, (struct sockaddr *)&a, sizeof a);
    PLX_CHECK(rc == 0, "usrsctp_connect to port %d: %s", port, strerror(errno));
    if (rc != 0) {
        usrsctp_close(so);
        return NULL;
    }
    return so;
}

/* Blocks until the peer ends the association; returns the bytes it sent
 * first (0: refused without an answer). */
static long wait_aborted(struct socket *so)
{
    long got = 0;
    for (;;) {
        char buf[512];
        struct sockaddr_in from;
        socklen_t fl = sizeof from;
        struct sctp_rcvinfo ri;
        socklen_t il = sizeof ri;
        unsigned int it = 0;
        int flags = 0;
        ssize_t r = usrsctp_recvv(so, buf, sizeof buf, (struct sockaddr *)&from, &fl, &ri, &il, &it, &flags);
        if (r <= 0)
            return got;
        got += r;
    }
}

static void attack(int port)
{
    garbage(port);

    /* forged HELLO: right format, wrong secret; then a packet */
    struct socket *so = stranger_connect(port);
    if (so) {
        struct {
            struct plx_hdr h1;
            struct plx_sctp_hello hello;
            struct plx_hdr h2;
            int32_t payload[4];
        } m;
        memset(&m, 0, sizeof m);
        m.h1.type = PLX_SCTP_PKT_HELLO;
        m.h1.len = sizeof m.hello;
        m.hello.magic = PLX_SCTP_MAGIC;
        m.hello.version = PLX_SCTP_VERSION;
        m.hello.hdr_size = sizeof(struct plx_hdr);
        m.hello.src = 0;
        m.hello.dst = 1;
        m.hello.size = (uint32_t)stray_size;
        m.hello.streams = 16;
        for (int i = 0; i < 16; i++)
            m.hello.secret[i] = (uint8_t)(0xa5 ^ i);
        m.h2.type = PLX_PKT_EAGER;
        m.h2.tag = FORGED_TAG;
        m.h2.len = sizeof m.payload;
        struct sctp_sndinfo si = { .snd_sid = 0 };
        ssize_t w = usrsctp_sendv(so, &m, sizeof m, NULL, 0, &si, sizeof si, SCTP_SENDV_SNDINFO, 0);
        PLX_CHECK(w == (ssize_t)sizeof m, "forged HELLO: usrsctp_sendv: %s", strerror(errno));
        double t0 = MPI_Wtime();
        long r = wait_aborted(so);
        PLX_CHECK(r == 0, "forged HELLO at port %d: %ld bytes answered", port, r);
        PLX_CHECK(MPI_Wtime() - t0 < 10, "forged HELLO at port %d: aborted only after %.1f s", port,
                  MPI_Wtime() - t0);
        usrsctp_close(so);
    }

    /* silence: aborted after the connect timeout */
    so = stranger_connect(port);
    if (so) {
        double t0 = MPI_Wtime();
        long r = wait_aborted(so);
        double dt = MPI_Wtime() - t0;
        const char *tmo = getenv("PLEXUS_SCTP_CONNECT_TIMEOUT");
        double limit = (tmo ? atof(tmo) : 30) + 15;
        PLX_CHECK(r == 0 && dt < limit, "silent association at port %d: %ld bytes answered, ended after %.1f s",
                  port, r, dt);
        usrsctp_close(so);
    }
}

int main(int argc, char **argv)
{
    return stray_run(&argc, &argv, "sctp_stray", "sctp", "UDP encapsulation port", my_udp_ports, attack);
}
