/* bench/limits/tcp.c — what the kernel's TCP loopback can do between two
 * processes, with TCP_NODELAY on both ends; the floor under any TCP
 * transport on this machine. Two modes, same sizes as the MPI benchmarks:
 *   -o lat: ping-pong, half round trip (a 0-byte message sends 1 byte,
 *           since TCP cannot carry an empty message);
 *   -o bw:  the sender writes a window of messages, one send() each; the
 *           receiver reads the whole window in large reads and answers with
 *           a 1-byte ack, as in bench/bw.c.
 * Reads and writes are non-blocking calls retried in a busy loop, as MPI
 * libraries poll (-s block: plain blocking calls, which adds a wake-up).
 * Each process is pinned to its own core when there are two (-b disables).
 * No MPI.
 * Output rows: size_B latency_us (lat) or size_B bw_MBps (bw)
 */
#define BENCH_NO_MPI
#include "../util.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sched.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>

static const char usage[] =
    "tcp: TCP loopback ping-pong (-o lat, us) or streaming (-o bw, MB/s), TCP_NODELAY\n"
    "usage: tcp [-o lat|bw] [-s poll|block] [-b (no pinning)] [-m [min:]max] [-i N] [-x N]\n"
    "           [-I N] [-X N] [-W N]";

static int io_flags; /* MSG_DONTWAIT when polling */

static int io_full(int fd, char *buf, size_t n, int writing)
{
    return bench_sock_full(fd, buf, n, writing, io_flags);
}

int main(int argc, char **argv)
{
    struct bench_opts o;
    bench_opts_init(&o, 0, 16 * BENCH_MiB, 10000, 100);
    int bw, block;
    int rc = bench_limit_parse(argc, argv, &o, usage, 0, &bw, &block);
    if (rc >= 0)
        return rc;
    io_flags = block ? 0 : MSG_DONTWAIT;

    struct sockaddr_in addr;
    int lfd = bench_listen_loopback(&addr), one = 1;
    if (lfd < 0)
        return 1;
    int pinned = !o.flag && sysconf(_SC_NPROCESSORS_ONLN) >= 2;
    printf("# plexus-bench: %s\n", bw ? "limit_tcp_bw" : "limit_tcp_lat");
    printf("# description: TCP loopback %s, TCP_NODELAY\n",
           bw ? "streaming: window of writes then 1-byte ack" : "ping-pong, half round trip");
    printf("# sizes: %zu:%zu\n# iterations: %d (above %zu B: %d)\n", o.min_size, o.max_size,
           o.iters, BENCH_LARGE_THRESHOLD, o.iters_large);
    printf("# pinned: %s\n", pinned ? "cores 0 and 1" : "no");
    printf("# wait: %s\n", block ? "blocking calls" : "non-blocking calls, busy polling");
    if (bw)
        printf("# window: %d (capped at %zu bytes in flight)\n", o.window,
               (size_t)BENCH_WINDOW_POOL);
    printf("# columns: size_B %s\n", bw ? "bw_MBps" : "latency_us");
    fflush(stdout);

    pid_t child = fork();
    if (child < 0) {
        perror("fork");
        return 1;
    }
    int is_child = child == 0, fd;
    if (is_child) {
        close(lfd);
        fd = socket(AF_INET, SOCK_STREAM, 0);
        if (fd < 0 || connect(fd, (struct sockaddr *)&addr, sizeof(addr)))
            _exit(1);
    } else {
        fd = accept(lfd, NULL, NULL);
        close(lfd);
        if (fd < 0) {
            printf("# error: accept: %s\n", strerror(errno));
            kill(child, SIGKILL);
            return 1;
        }
    }
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    if (pinned)
        bench_pin(is_child ? 1 : 0);
    char *buf = bench_alloc(o.max_size ? o.max_size : 1);
    char ack = 0;
    int status = 0;
    for (size_t size = o.min_size; size <= o.max_size; size = bench_next_size(size)) {
        int iters = bench_iters(&o, size), warmup = bench_warmup(&o, size);
        size_t n = size ? size : 1;
        int w = bench_window_for(&o, size);
        double t0 = 0.0;
        for (int i = 0; i < warmup + iters; i++) {
            if (i == warmup)
                t0 = bench_now();
            int err = 0;
            if (!bw && !is_child)
                err = io_full(fd, buf, n, 1) || io_full(fd, buf, n, 0);
            else if (!bw)
                err = io_full(fd, buf, n, 0) || io_full(fd, buf, n, 1);
            else if (!is_child) {
                for (int j = 0; j < w && !err; j++)
                    err = io_full(fd, buf, n, 1);
                err = err || io_full(fd, &ack, 1, 0);
            } else {
                /* A stream: take the window in as few reads as the kernel
                 * allows, into one buffer (the data is not checked). */
                size_t left = n * (size_t)w;
                while (left > 0 && !err) {
                    size_t chunk = left < o.max_size ? left : o.max_size;
                    err = io_full(fd, buf, chunk, 0);
                    left -= chunk;
                }
                err = err || io_full(fd, &ack, 1, 1);
            }
            if (err) {
                if (is_child)
                    _exit(1);
                printf("# error: connection lost at size %zu: %s\n", size, strerror(errno));
                status = 1;
                goto out;
            }
        }
        double t = bench_now() - t0;
        if (!is_child)
            bench_limit_row(bw, size, w, iters, t);
        if (size == 0 && o.max_size == 0)
            break;
    }
    if (is_child)
        _exit(0);
    bench_print_end();
out:
    close(fd);
    waitpid(child, NULL, 0);
    return status;
}
