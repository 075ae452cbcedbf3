/* What bench/sched's programs share: a monotonic clock in microseconds, a
 * comparison for qsort of doubles, and a computation of a given length that
 * makes no MPI call. */
#ifndef PLX_BENCH_SCHED_UTIL_H
#define PLX_BENCH_SCHED_UTIL_H
#include <time.h>

static double now_us(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e6 + (double)t.tv_nsec * 1e-3;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static volatile double sink;

static void compute(double us)
{
    double t0 = now_us(), s = 0;
    while (now_us() - t0 < us)
        for (int i = 0; i < 1000; i++)
            s += i * 0.5;
    sink = s;
}

#endif
