/* bench/limits/cacheline.c — the floor for shared-memory message latency.
 * Two processes (fork) share one anonymous MAP_SHARED mapping holding a flag
 * per direction, each on its own cache line, and a data area per direction.
 * A ping-pong of `size` bytes: the sender copies the message straight into
 * the area the receiver owns (one memcpy, as a perfect single-copy transport
 * would), then publishes a sequence number with a release store; the receiver
 * spins on an acquire load. At size 0 this is the cache-line handoff time.
 * Each process is pinned to its own core when there are two (-b disables).
 * No MPI.
 * Output rows: size_B latency_us (half round trip)
 */
#define BENCH_NO_MPI
#include "../util.h"

#include <sched.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <sys/wait.h>

static const char usage[] =
    "cacheline: one-copy shared-memory ping-pong between two processes (us)\n"
    "usage: cacheline [-b (no pinning)] [-m [min:]max] [-i N] [-x N] [-I N] [-X N]";

struct shared {
    _Alignas(64) atomic_ulong to_child;
    _Alignas(64) atomic_ulong to_parent;
    _Alignas(64) char pad[64];
};

/* Spin on an acquire load; yield now and then so a single free core still
 * makes progress (then the numbers say so: they are scheduler-bound). */
static void wait_for(atomic_ulong *flag, unsigned long want)
{
    unsigned spins = 0;
    while (atomic_load_explicit(flag, memory_order_acquire) != want) {
        __builtin_ia32_pause();
        if (++spins == (1u << 20)) {
            spins = 0;
            sched_yield();
        }
    }
}

int main(int argc, char **argv)
{
    struct bench_opts o;
    bench_opts_init(&o, 0, 16 * BENCH_MiB, 10000, 1000);
    int rc = bench_parse(argc, argv, &o, usage, 1);
    if (rc)
        return rc < 0 ? 2 : 0;
    size_t area = o.max_size ? o.max_size : 1;
    size_t len = sizeof(struct shared) + 2 * area;
    char *map = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (map == MAP_FAILED) {
        perror("mmap");
        return 1;
    }
    memset(map, 0, len);
    struct shared *sh = (struct shared *)map;
    char *to_child_data = map + sizeof(struct shared), *to_parent_data = to_child_data + area;
    int pinned = !o.flag && sysconf(_SC_NPROCESSORS_ONLN) >= 2;

    printf("# plexus-bench: limit_cacheline\n");
    printf("# description: one-copy ping-pong through a shared mapping, release/acquire flags\n");
    printf("# sizes: %zu:%zu\n# iterations: %d (above %zu B: %d)\n", o.min_size, o.max_size,
           o.iters, BENCH_LARGE_THRESHOLD, o.iters_large);
    printf("# pinned: %s\n", pinned ? "cores 0 and 1" : "no");
    printf("# columns: size_B latency_us\n");
    fflush(stdout);

    pid_t child = fork();
    if (child < 0) {
        perror("fork");
        return 1;
    }
    int is_child = child == 0;
    if (pinned)
        bench_pin(is_child ? 1 : 0);
    char *src = bench_alloc(area);
    bench_fill(src, area, is_child ? 2 : 1);
    unsigned long seq = 0;
    for (size_t size = o.min_size; size <= o.max_size; size = bench_next_size(size)) {
        int iters = bench_iters(&o, size), warmup = bench_warmup(&o, size);
        double t0 = 0.0;
        for (int i = 0; i < warmup + iters; i++) {
            seq++;
            if (i == warmup)
                t0 = bench_now();
            if (!is_child) {
                memcpy(to_child_data, src, size);
                atomic_store_explicit(&sh->to_child, seq, memory_order_release);
                wait_for(&sh->to_parent, seq);
            } else {
                wait_for(&sh->to_child, seq);
                memcpy(to_parent_data, src, size);
                atomic_store_explicit(&sh->to_parent, seq, memory_order_release);
            }
        }
        double t = bench_now() - t0;
        if (!is_child) {
            if (bench_check(to_parent_data, size, 2) >= 0) {
                printf("# error: wrong data at size %zu\n", size);
                kill(child, SIGKILL);
                return 1;
            }
            printf("%zu %.4f\n", size, t * 1e6 / (2.0 * iters));
            fflush(stdout);
        }
        if (size == 0 && o.max_size == 0)
            break;
    }
    if (is_child)
        _exit(0);
    int status = 0;
    waitpid(child, &status, 0);
    bench_print_end();
    return 0;
}
