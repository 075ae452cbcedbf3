/*
 * sctp_stranger.c - a stranger at a rank's SCTP port (sctp_stray.c runs it).
 *
 *   sctp_stranger PORT SIZE
 *
 * A process of its own, with its own usrsctp stack over UDP encapsulation
 * (threads and all), so it speaks to a rank whatever PLEXUS_SCTP_THREADS the
 * job runs with. Against 127.0.0.1:PORT (the rank's SCTP and UDP port):
 *   1. it opens an association and sends a well-formed HELLO with a wrong
 *      job secret, followed by a packet that would deliver a message with
 *      tag 4242 if accepted: the association must be aborted (within 10 s)
 *      with nothing answered;
 *   2. it opens an association and says nothing: it must be aborted after
 *      PLEXUS_SCTP_CONNECT_TIMEOUT (plus 15 s) with nothing answered.
 * SIZE is the job's size (the HELLO carries it). Exit 0 when both held;
 * else 1, each failure on stderr. No MPI; links usrsctp.
 */
#define _POSIX_C_SOURCE 200809L
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <usrsctp.h>
#include "transport/sctp/sctp_wire.h"

#define FORGED_TAG 4242         /* as STRAY_FORGED_TAG in stray_common.h */

static int failures, stray_size;

#define CHECK(cond, ...)                                                                                   \
    do {                                                                                                       \
        if (!(cond)) {                                                                                         \
            fprintf(stderr, "sctp_stranger: FAIL %s:%d: ", __FILE__, __LINE__);                               \
            fprintf(stderr, __VA_ARGS__);                                                                      \
            fputc('\n', stderr);                                                                              \
            failures++;                                                                                        \
        }                                                                                                      \
    } while (0)

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* A free UDP port for our own stack's encapsulation. */
static int free_udp_port(void)
{
    int fd = socket(AF_INET, SOCK_DGRAM, 0);
    struct sockaddr_in a = { .sin_family = AF_INET };
    socklen_t al = sizeof a;
    int port = -1;
    if (fd >= 0 && bind(fd, (struct sockaddr *)&a, sizeof a) == 0 && getsockname(fd, (struct sockaddr *)&a, &al) == 0)
        port = ntohs(a.sin_port);
    if (fd >= 0)
        close(fd);
    return port;
}

/* A socket of our own stack, connected to the rank's stack at port (its SCTP port is its UDP port). NULL if it could
 * not connect. */
static struct socket *stranger_connect(int port)
{
    struct socket *so = usrsctp_socket(AF_INET, SOCK_STREAM, IPPROTO_SCTP, NULL, NULL, 0, NULL);
    CHECK(so != NULL, "usrsctp_socket: %s", strerror(errno));
    if (!so)
        return NULL;
    struct sctp_initmsg im = { .sinit_num_ostreams = 16, .sinit_max_instreams = 16 };
    CHECK(usrsctp_setsockopt(so, IPPROTO_SCTP, SCTP_INITMSG, &im, sizeof im) == 0, "SCTP_INITMSG: %s",
          strerror(errno));
    struct sctp_udpencaps ue;
    memset(&ue, 0, sizeof ue);
    ue.sue_assoc_id = SCTP_FUTURE_ASSOC;
    ue.sue_port = htons((uint16_t)port);
    CHECK(usrsctp_setsockopt(so, IPPROTO_SCTP, SCTP_REMOTE_UDP_ENCAPS_PORT, &ue, sizeof ue) == 0,
              "SCTP_REMOTE_UDP_ENCAPS_PORT: %s", strerror(errno));
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    int rc = usrsctp_connect(so, (struct sockaddr *)&a, sizeof a);
    CHECK(rc == 0, "usrsctp_connect to port %d: %s", port, strerror(errno));
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

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: sctp_stranger PORT SIZE\n");
        return 2;
    }
    int port = atoi(argv[1]);
    stray_size = atoi(argv[2]);
    int mine = free_udp_port();
    CHECK(mine > 0, "no free UDP port");
    if (mine <= 0)
        return 1;
    usrsctp_init((uint16_t)mine, NULL, NULL);
    /* the streams a rank asks for (PLEXUS_SCTP_STREAMS' default): with
     * fewer the rank aborts at once, before the handshake this tests */
    usrsctp_sysctl_set_sctp_nr_outgoing_streams_default(16);
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
        CHECK(w == (ssize_t)sizeof m, "forged HELLO: usrsctp_sendv: %s", strerror(errno));
        double t0 = now_s();
        long r = wait_aborted(so);
        CHECK(r == 0, "forged HELLO at port %d: %ld bytes answered", port, r);
        CHECK(now_s() - t0 < 10, "forged HELLO at port %d: aborted only after %.1f s", port,
                  now_s() - t0);
        usrsctp_close(so);
    }

    /* silence: aborted after the connect timeout */
    so = stranger_connect(port);
    if (so) {
        double t0 = now_s();
        long r = wait_aborted(so);
        double dt = now_s() - t0;
        const char *tmo = getenv("PLEXUS_SCTP_CONNECT_TIMEOUT");
        double limit = (tmo ? atof(tmo) : 30) + 15;
        CHECK(r == 0 && dt < limit, "silent association at port %d: %ld bytes answered, ended after %.1f s",
                  port, r, dt);
        usrsctp_close(so);
    }
    usrsctp_finish();   /* may refuse while endpoints linger: the process ends anyway */
    return failures ? 1 : 0;
}
