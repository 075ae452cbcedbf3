/* bench/limits/vm_readv.c — cross-memory attach bandwidth: the parent reads
 * a child's buffer with process_vm_readv, the kernel's single-copy path that
 * shared-memory transports use for large messages (CMA). Also reports the
 * time of one call, i.e. the floor for a CMA-based rendezvous copy. No MPI.
 * Output rows: size_B bw_MBps call_us
 */
#define BENCH_NO_MPI
#include "../util.h"

#include <signal.h>
#include <sys/uio.h>
#include <sys/wait.h>

static const char usage[] =
    "vm_readv: process_vm_readv bandwidth from a child process (MB/s)\n"
    "usage: vm_readv [-m [min:]max] [-d total_MiB_per_size]";

int main(int argc, char **argv)
{
    struct bench_opts o;
    bench_opts_init(&o, 1, 16 * BENCH_MiB, 1, 0);
    o.param = 256;
    int rc = bench_parse(argc, argv, &o, usage, 1);
    if (rc)
        return rc < 0 ? 2 : 0;
    if (o.min_size == 0)
        o.min_size = 1;
    int to_parent[2], to_child[2];
    if (pipe(to_parent) || pipe(to_child)) {
        perror("pipe");
        return 1;
    }
    printf("# plexus-bench: limit_vm_readv\n");
    printf("# description: process_vm_readv from a child's buffer, one call per message\n");
    fflush(stdout);
    pid_t child = fork();
    if (child < 0) {
        perror("fork");
        return 1;
    }
    if (child == 0) {
        close(to_parent[0]);
        close(to_child[1]); /* else our own copy would keep the pipe open */
        char *buf = bench_alloc(o.max_size);
        bench_fill(buf, o.max_size, 6);
        void *addr = buf;
        if (write(to_parent[1], &addr, sizeof(addr)) != (ssize_t)sizeof(addr))
            _exit(1);
        char c;
        while (read(to_child[0], &c, 1) < 0 && errno == EINTR) /* wait for the end */
            ;
        _exit(0);
    }
    close(to_parent[1]);
    close(to_child[0]);
    void *remote = NULL;
    if (read(to_parent[0], &remote, sizeof(remote)) != (ssize_t)sizeof(remote)) {
        printf("# error: child did not start\n");
        return 1;
    }
    char *dst = bench_alloc(o.max_size);
    double total = o.param * (double)BENCH_MiB;
    int status = 0;

    printf("# sizes: %zu:%zu\n# bytes_per_size: %.0f\n", o.min_size, o.max_size, total);
    printf("# columns: size_B bw_MBps call_us\n");
    fflush(stdout);
    for (size_t size = o.min_size; size <= o.max_size; size *= 2) {
        double want = total / (double)size;
        long reps = want < 4 ? 4 : (want > 20000 ? 20000 : (long)want);
        struct iovec local = {dst, size}, rem = {remote, size};
        double t0 = 0.0;
        for (long r = 0; r < reps + reps / 10 + 1; r++) {
            if (r == reps / 10 + 1)
                t0 = bench_now();
            ssize_t got = process_vm_readv(child, &local, 1, &rem, 1, 0);
            if (got != (ssize_t)size) {
                printf("# error: process_vm_readv returned %zd (%s)\n", got,
                       got < 0 ? strerror(errno) : "short read");
                status = 1;
                goto out;
            }
        }
        double t = bench_now() - t0;
        if (bench_check(dst, size, 6) >= 0) {
            printf("# error: wrong data at size %zu\n", size);
            status = 1;
            goto out;
        }
        printf("%zu %.1f %.3f\n", size, (double)size * reps / t / 1e6, t * 1e6 / reps);
        fflush(stdout);
    }
    bench_print_end();
out:
    close(to_child[1]); /* the child's read returns 0 and it exits */
    waitpid(child, NULL, 0);
    return status;
}
