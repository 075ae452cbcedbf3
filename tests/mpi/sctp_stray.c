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
 *   2. runs sctp_stranger (its path in SCTP_STRANGER), a process with its
 *      own usrsctp stack, which opens an association and sends a
 *      well-formed HELLO with a wrong job secret followed by a packet that
 *      would deliver a message with tag 4242 if accepted (the association
 *      must be aborted), then opens one and says nothing (it must be
 *      aborted after the connect timeout); it fails when either is not.
 *      (A process of its own: the job's stack may run without usrsctp's
 *      threads, PLEXUS_SCTP_THREADS, where it has no UDP encapsulation of
 *      its own to open associations with.)
 * Then every rank checks real traffic (ring, 1 MiB rendezvous, all-to-all)
 * and that no message with tag 4242 ever arrived.
 */
#include "stray_common.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>

extern char **environ;

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

static void attack(int port)
{
    garbage(port);
    const char *exe = getenv("SCTP_STRANGER");
    PLX_CHECK(exe && *exe, "SCTP_STRANGER names no sctp_stranger program");
    if (!exe || !*exe)
        return;
    char p[16], n[16];
    snprintf(p, sizeof p, "%d", port);
    snprintf(n, sizeof n, "%d", stray_size);
    char *args[] = { (char *)exe, p, n, NULL };
    pid_t pid;
    int rc = posix_spawn(&pid, exe, NULL, NULL, args, environ);
    PLX_CHECK(rc == 0, "posix_spawn %s: %s", exe, strerror(rc));
    if (rc != 0)
        return;
    int status = 0;
    PLX_CHECK(waitpid(pid, &status, 0) == pid, "waitpid: %s", strerror(errno));
    PLX_CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "sctp_stranger against port %d: status 0x%x (its "
              "stderr says why)", port, status);
}

int main(int argc, char **argv)
{
    return stray_run(&argc, &argv, "sctp_stray", "sctp", "UDP encapsulation port", my_udp_ports, attack);
}
