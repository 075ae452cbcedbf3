/* bench/limits/wake.c — what it costs to answer a message from a thread that
 * sleeps, the floor under passive-target progress by a progress thread.
 *
 * An origin process (pinned to core 0) sends 8 bytes over TCP loopback and
 * busy-polls for the 8-byte answer, as an MPI origin waits for a get's data.
 * The target process (pinned to core 1, as mpiexec binds two ranks) answers
 * in one of three ways:
 *   spin:  its main thread busy-polls the socket and answers (an idle MPI
 *          target waiting inside the library, e.g. in MPI_Barrier);
 *   sleep: a second thread sleeps in epoll_wait and answers; the main thread
 *          sleeps too (a progress thread on an idle core);
 *   busy:  a second thread sleeps in epoll_wait and answers while the main
 *          thread computes on the same core (a progress thread whose rank
 *          computes without calling MPI: every answer wakes it on a busy core);
 *   linger: as busy, but after each answer the thread polls the socket for
 *          50 us before it sleeps again, as Plexus's progress thread does
 *          after work (docs/progress.md), sharing the core with the
 *          computation while it polls.
 * The modes alternate, one round each at a time, so the machine's drift
 * touches them alike. Each row: the half round trip's median, mean and 90th
 * percentile per mode, in microseconds, and busy's median against spin's.
 * -b: no pinning. No MPI.
 */
#define BENCH_NO_MPI
#include "../util.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/wait.h>

static const char usage[] =
    "wake: 8-byte TCP ping-pong answered by a spinning thread, a sleeping thread on an idle\n"
    "      core, a sleeping thread on a core its process computes on, and the same thread\n"
    "      polling 50 us after each answer (us)\n"
    "usage: wake [-i iterations per round] [-x warm-up] [-r rounds] [-b (no pinning)]";

enum { MODE_SPIN, MODE_SLEEP, MODE_BUSY, MODE_LINGER, MODE_COUNT };
static const char *const mode_name[MODE_COUNT] = {"spin", "sleep", "busy", "linger"};
static double linger_us; /* MODE_LINGER: how long the answerer polls after an answer */

static volatile int answer_done;

/* The sleeping answerer: read what came, answer, poll on for linger_us,
 * then sleep in epoll_wait until the next message. */
static void *answer_sleeping(void *arg)
{
    int fd = *(int *)arg, ep = epoll_create1(EPOLL_CLOEXEC);
    struct epoll_event ev = {.events = EPOLLIN, .data.fd = fd};
    char buf[8];
    double until = 0.0;
    if (ep < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev))
        _exit(3);
    for (;;) {
        ssize_t k = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
        if (k < 0 && (errno == EAGAIN || errno == EINTR)) {
            if (bench_now() < until)
                continue;
            struct epoll_event got;
            if (epoll_wait(ep, &got, 1, -1) < 0 && errno != EINTR)
                break;
            continue;
        }
        if (k <= 0)
            break;
        if ((k < (ssize_t)sizeof(buf) && bench_sock_full(fd, buf + k, sizeof(buf) - (size_t)k, 0, 0)) ||
            bench_sock_full(fd, buf, sizeof(buf), 1, 0))
            break;
        until = linger_us > 0 ? bench_now() + linger_us * 1e-6 : 0.0;
    }
    answer_done = 1;
    return NULL;
}

static void target(int fd, int mode)
{
    char buf[8];
    if (mode == MODE_SPIN) {
        while (!bench_sock_full(fd, buf, sizeof(buf), 0, MSG_DONTWAIT) &&
               !bench_sock_full(fd, buf, sizeof(buf), 1, MSG_DONTWAIT))
            ;
        _exit(0);
    }
    pthread_t t;
    linger_us = mode == MODE_LINGER ? 50.0 : 0.0;
    if (pthread_create(&t, NULL, answer_sleeping, &fd))
        _exit(2);
    if (mode == MODE_SLEEP) {
        pthread_join(t, NULL);
        _exit(0);
    }
    volatile double x = 1.0; /* MODE_BUSY, MODE_LINGER: compute until the origin hangs up */
    while (!answer_done)
        for (int i = 0; i < 100000; i++)
            x = x * 1.0000001 + 1e-9;
    pthread_join(t, NULL);
    _exit(0);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* One round of one mode: fork the target, ping-pong, return the half round
 * trips of the timed iterations in t[]. */
static int round_of(int mode, int iters, int warmup, int pinned, double *t)
{
    struct sockaddr_in addr;
    int lfd = bench_listen_loopback(&addr), one = 1, status = 0;
    if (lfd < 0)
        return -1;
    pid_t child = fork();
    if (child < 0) {
        printf("# error: fork: %s\n", strerror(errno));
        return -1;
    }
    if (child == 0) {
        close(lfd);
        int fd = socket(AF_INET, SOCK_STREAM, 0);
        if (fd < 0 || connect(fd, (struct sockaddr *)&addr, sizeof(addr)))
            _exit(1);
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
        if (pinned)
            bench_pin(1);
        target(fd, mode);
    }
    int fd = accept(lfd, NULL, NULL);
    close(lfd);
    if (fd < 0) {
        printf("# error: accept: %s\n", strerror(errno));
        kill(child, SIGKILL);
        waitpid(child, NULL, 0);
        return -1;
    }
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    if (pinned)
        bench_pin(0);
    char buf[8];
    for (int i = 0; i < warmup + iters && !status; i++) {
        memset(buf, i & 0xff, sizeof(buf));
        double t0 = bench_now();
        if (bench_sock_full(fd, buf, sizeof(buf), 1, MSG_DONTWAIT) ||
            bench_sock_full(fd, buf, sizeof(buf), 0, MSG_DONTWAIT) || buf[7] != (char)(i & 0xff)) {
            printf("# error: %s: connection lost or wrong answer at iteration %d\n", mode_name[mode], i);
            status = -1;
        } else if (i >= warmup) {
            t[i - warmup] = (bench_now() - t0) * 1e6 / 2;
        }
    }
    close(fd);
    int ws = 0;
    waitpid(child, &ws, 0);
    if (!status && (!WIFEXITED(ws) || WEXITSTATUS(ws))) {
        printf("# error: %s: target ended with status %d\n", mode_name[mode], ws);
        status = -1;
    }
    return status;
}

int main(int argc, char **argv)
{
    int iters = 2000, warmup = 200, rounds = 5, pinned = sysconf(_SC_NPROCESSORS_ONLN) >= 2;
    for (int c; (c = getopt(argc, argv, "i:x:r:bh")) != -1;) {
        if (c == 'i' && !bench_parse_int(optarg, &iters) && iters > 0)
            continue;
        if (c == 'x' && !bench_parse_int(optarg, &warmup) && warmup >= 0)
            continue;
        if (c == 'r' && !bench_parse_int(optarg, &rounds) && rounds > 0)
            continue;
        if (c == 'b') {
            pinned = 0;
            continue;
        }
        fprintf(c == 'h' ? stdout : stderr, "%s\n", usage);
        return c == 'h' ? 0 : 2;
    }
    printf("# plexus-bench: limit_wake\n");
    printf("# description: 8-byte TCP loopback ping-pong, half round trip; the answer comes from a "
           "spinning thread, a sleeping thread on an idle core, a sleeping thread on a computing "
           "core, or that thread polling 50 us after each answer\n");
    printf("# iterations: %d a round, %d rounds, modes alternating\n", iters, rounds);
    printf("# pinned: %s\n", pinned ? "origin core 0, target (all its threads) core 1" : "no");
    printf("# columns: round spin_p50_us spin_mean_us spin_p90_us sleep_p50_us sleep_mean_us "
           "sleep_p90_us busy_p50_us busy_mean_us busy_p90_us linger_p50_us linger_mean_us "
           "linger_p90_us busy_over_spin_p50 linger_over_spin_p50\n");
    fflush(stdout);
    double *t = malloc(sizeof(double) * (size_t)iters);
    if (!t)
        return 1;
    for (int r = 0; r < rounds; r++) {
        double p50[MODE_COUNT];
        printf("%d", r);
        for (int m = 0; m < MODE_COUNT; m++) {
            fflush(stdout);
            if (round_of(m, iters, warmup, pinned, t)) {
                free(t);
                return 1;
            }
            double sum = 0;
            for (int i = 0; i < iters; i++)
                sum += t[i];
            qsort(t, (size_t)iters, sizeof(double), cmp_double);
            p50[m] = t[iters / 2];
            printf(" %.2f %.2f %.2f", p50[m], sum / iters, t[iters * 9 / 10]);
        }
        printf(" %.2f %.2f\n", p50[MODE_BUSY] / p50[MODE_SPIN], p50[MODE_LINGER] / p50[MODE_SPIN]);
    }
    free(t);
    return 0;
}
