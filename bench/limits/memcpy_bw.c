/* bench/limits/memcpy_bw.c — single-core memcpy bandwidth: the most a
 * one-copy (or, halved, a two-copy) shared-memory transport can move per
 * second on one core. Buffers are reused, so sizes that fit in the caches
 * run from cache, as they do in the MPI bandwidth tests. Each size copies
 * at least 256 MiB in total (at most 10^6 calls). No MPI.
 * Output rows: size_B bw_MBps (1 MB = 1e6 bytes)
 */
#define BENCH_NO_MPI
#include "../util.h"

static const char usage[] =
    "memcpy_bw: single-core memcpy bandwidth (MB/s)\n"
    "usage: memcpy_bw [-m [min:]max] [-d total_MiB_per_size]";

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
    char *src = bench_alloc(o.max_size), *dst = bench_alloc(o.max_size);
    bench_fill(src, o.max_size, 4);
    double total = o.param * (double)BENCH_MiB;

    printf("# plexus-bench: limit_memcpy\n");
    printf("# description: memcpy between two reused buffers, one core\n");
    printf("# sizes: %zu:%zu\n# bytes_per_size: %.0f\n", o.min_size, o.max_size, total);
    printf("# columns: size_B bw_MBps\n");
    fflush(stdout);
    for (size_t size = o.min_size; size <= o.max_size; size *= 2) {
        double want = total / (double)size;
        long reps = want < 4 ? 4 : (want > 1e6 ? 1000000 : (long)want);
        for (long r = 0; r < reps / 10 + 1; r++) { /* warm-up */
            memcpy(dst, src, size);
            __asm__ volatile("" ::: "memory");
        }
        double t0 = bench_now();
        for (long r = 0; r < reps; r++) {
            memcpy(dst, src, size);
            __asm__ volatile("" ::: "memory");
        }
        double t = bench_now() - t0;
        if (bench_check(dst, size, 4) >= 0) {
            printf("# error: wrong data at size %zu\n", size);
            return 1;
        }
        printf("%zu %.1f\n", size, (double)size * reps / t / 1e6);
        fflush(stdout);
    }
    bench_print_end();
    return 0;
}
