/* bench/limits/vm_readv_pair.c — the ceiling of a single-copy
 * bi-directional exchange (bench/bibw over shared memory): two processes
 * each read the other's buffer with process_vm_readv at the same time, into
 * a window of W distinct receive buffers in turn (as bibw's receives are),
 * one call per message. Reports both directions' bytes over the time of the
 * slower side, as bibw does. No
 * MPI. Where a message and its receive window do not fit in a core's
 * caches the copy runs at what one core gets from memory, whatever the MPI
 * library does around it.
 * Output rows: size_B bw_MBps (both directions, 1 MB = 1e6 bytes)
 */
#define BENCH_NO_MPI
#include "../util.h"

#include <sys/uio.h>
#include <sys/wait.h>

static const char usage[] =
    "vm_readv_pair: process_vm_readv both ways at once, W receive buffers in turn (MB/s, both directions)\n"
    "usage: vm_readv_pair [-m [min:]max] [-W window] [-d total_MiB_per_size_and_side]";

/* One side: reads `reps` messages of `size` from the peer into the window;
 * returns the seconds taken, or -1 on an error (printed). */
static double side(pid_t peer, char *remote, char *win, int w, size_t size, long reps, int fd_go, int fd_ready)
{
    char c = 0;
    if (write(fd_ready, &c, 1) != 1 || read(fd_go, &c, 1) != 1) /* start together */
        return -1;
    double t0 = 0.0;
    for (long r = 0; r < reps + reps / 10 + 1; r++) {
        if (r == reps / 10 + 1)
            t0 = bench_now();
        struct iovec l = { win + (size_t)(r % w) * size, size }, rem = { remote, size };
        ssize_t got = process_vm_readv(peer, &l, 1, &rem, 1, 0);
        if (got != (ssize_t)size) {
            printf("# error: process_vm_readv returned %zd (%s)\n", got, got < 0 ? strerror(errno) : "short read");
            return -1;
        }
    }
    return bench_now() - t0;
}

int main(int argc, char **argv)
{
    struct bench_opts o;
    bench_opts_init(&o, 64 * 1024, 16 * BENCH_MiB, 1, 0);
    o.param = 1024;
    int rc = bench_parse(argc, argv, &o, usage, 1);
    if (rc)
        return rc < 0 ? 2 : 0;
    if (o.min_size == 0)
        o.min_size = 1;
    int c2p[2], p2c[2], res[2];
    if (pipe(c2p) || pipe(p2c) || pipe(res)) {
        perror("pipe");
        return 1;
    }
    size_t win_bytes = bench_window_bytes(&o); /* bibw's: -W (64) messages, at most 64 MiB */
    pid_t parent = getpid();
    pid_t child = fork();
    if (child < 0) {
        perror("fork");
        return 1;
    }
    int is_child = child == 0;
    /* each keeps only its own ends, so that one leaving ends the other's reads */
    close(is_child ? c2p[0] : c2p[1]);
    close(is_child ? p2c[1] : p2c[0]);
    close(is_child ? res[0] : res[1]);
    char *src = bench_alloc(o.max_size), *win = bench_alloc(win_bytes); /* after fork: not shared copy-on-write */
    bench_fill(src, o.max_size, is_child ? 8 : 7);
    int to = is_child ? c2p[1] : p2c[1], from = is_child ? p2c[0] : c2p[0];
    void *mine = src, *theirs = NULL;
    if (write(to, &mine, sizeof mine) != (ssize_t)sizeof mine ||
        read(from, &theirs, sizeof theirs) != (ssize_t)sizeof theirs) {
        printf("# error: address exchange failed\n");
        return 1;
    }
    pid_t peer = is_child ? parent : child;
    double total = o.param * (double)BENCH_MiB;
    if (!is_child) {
        printf("# plexus-bench: limit_vm_readv_pair\n");
        printf("# description: process_vm_readv both ways at once into a window of receive buffers\n");
        printf("# sizes: %zu:%zu\n# bytes_per_size_and_side: %.0f\n", o.min_size, o.max_size, total);
        printf("# columns: size_B bw_MBps\n");
        fflush(stdout);
    }
    int status = 0;
    for (size_t size = o.min_size; size <= o.max_size; size *= 2) {
        int w = bench_window_for(&o, size);
        double want = total / (double)size;
        long reps = want < 4 ? 4 : (want > 100000 ? 100000 : (long)want);
        /* the parent says go once both are ready (each side's "ready" byte
         * goes to the other's pipe; "go" comes back the same way) */
        double t = side(peer, theirs, win, w, size, reps, from, to);
        if (t > 0 && bench_check(win, size, is_child ? 7 : 8) >= 0) {
            printf("# error: wrong data at size %zu\n", size);
            t = -1;
        }
        if (is_child) {
            if (write(res[1], &t, sizeof t) != (ssize_t)sizeof t)
                _exit(1);
            if (t < 0)
                _exit(1);
            continue;
        }
        double tc = -1;
        if (read(res[0], &tc, sizeof tc) != (ssize_t)sizeof tc || t < 0 || tc < 0) {
            status = 1;
            break;
        }
        /* both directions over the longer side: what bibw's Waitall sees */
        printf("%zu %.1f\n", size, 2.0 * (double)size * reps / (t > tc ? t : tc) / 1e6);
        fflush(stdout);
    }
    if (is_child) {
        char c;
        while (read(from, &c, 1) > 0) /* stay until the parent has read its last message */
            ;
        _exit(0);
    }
    if (!status)
        bench_print_end();
    close(to);  /* a child still waiting to start a size reads EOF and leaves */
    waitpid(child, NULL, 0);
    return status;
}
