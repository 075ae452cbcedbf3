/* bench/lockprof/lockprof.c — who holds a pthread mutex, for how long, and
 * who waits: an LD_PRELOAD library for profiling an MPI library's coarse lock
 * under multi-threaded load (issue 19, item 7). It wraps
 * pthread_mutex_lock/trylock/unlock and pthread_cond_timedwait, and keeps,
 * per call site (the code address that took the mutex), the acquisitions,
 * how many found it taken, the time spent waiting and the time it was then
 * held. At exit each process prints its busiest mutex's sites to stderr,
 * "lockprof[pid]: ...", sorted by hold time; resolve the addresses with
 * addr2line -f -e <library> (offsets are printed relative to the object).
 *
 *   gcc -O2 -shared -fPIC -o lockprof.so lockprof.c -ldl
 *   LD_PRELOAD=$PWD/lockprof.so mpiexec -n 2 ./mr_threads -d 4
 *
 * Costs: two clock reads per acquisition; results are for the shape of the
 * contention, not for absolute rates.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define LP_SITES 512
#define LP_DEPTH 16

struct lp_site {
    void *mutex, *site;
    unsigned long n, contended;
    unsigned long long wait_ns, hold_ns;
};
static struct lp_site lp_sites[LP_SITES];
static pthread_mutex_t lp_tab_lock = PTHREAD_MUTEX_INITIALIZER;

struct lp_held {
    void *mutex;
    struct lp_site *s;
    unsigned long long since;
};
static __thread struct lp_held lp_stack[LP_DEPTH];
static __thread int lp_depth, lp_inside;

static int (*real_lock)(pthread_mutex_t *);
static int (*real_trylock)(pthread_mutex_t *);
static int (*real_unlock)(pthread_mutex_t *);
static int (*real_timedwait)(pthread_cond_t *, pthread_mutex_t *, const struct timespec *);

static unsigned long long lp_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec;
}

static void lp_init(void)
{
    if (!real_lock) {
        real_trylock = (int (*)(pthread_mutex_t *))dlsym(RTLD_NEXT, "pthread_mutex_trylock");
        real_unlock = (int (*)(pthread_mutex_t *))dlsym(RTLD_NEXT, "pthread_mutex_unlock");
        real_timedwait = (int (*)(pthread_cond_t *, pthread_mutex_t *, const struct timespec *))dlvsym(
            RTLD_NEXT, "pthread_cond_timedwait", "GLIBC_2.3.2");
        real_lock = (int (*)(pthread_mutex_t *))dlsym(RTLD_NEXT, "pthread_mutex_lock");
    }
}

static struct lp_site *lp_site_of(void *m, void *site)
{
    size_t h = ((uintptr_t)site * 2654435761u ^ (uintptr_t)m) % LP_SITES;
    for (size_t i = 0; i < LP_SITES; i++, h = (h + 1) % LP_SITES) {
        struct lp_site *s = &lp_sites[h];
        if (s->site == site && s->mutex == m)
            return s;
        if (s->site == NULL) {
            real_lock(&lp_tab_lock);
            if (s->site == NULL) {
                s->mutex = m;
                s->site = site;
                real_unlock(&lp_tab_lock);
                return s;
            }
            real_unlock(&lp_tab_lock);
            if (s->site == site && s->mutex == m)
                return s;
        }
    }
    return NULL;
}

static void lp_acquired(pthread_mutex_t *m, void *site, unsigned long long t0, int contended)
{
    unsigned long long t1 = lp_now();
    struct lp_site *s = lp_site_of(m, site);
    if (s) {
        __atomic_add_fetch(&s->n, 1, __ATOMIC_RELAXED);
        __atomic_add_fetch(&s->contended, (unsigned long)contended, __ATOMIC_RELAXED);
        __atomic_add_fetch(&s->wait_ns, t1 - t0, __ATOMIC_RELAXED);
    }
    if (lp_depth < LP_DEPTH)
        lp_stack[lp_depth] = (struct lp_held){m, s, t1};
    lp_depth++;
}

static void lp_releasing(pthread_mutex_t *m)
{
    for (int i = (lp_depth < LP_DEPTH ? lp_depth : LP_DEPTH) - 1; i >= 0; i--) {
        if (lp_stack[i].mutex != m)
            continue;
        if (lp_stack[i].s)
            __atomic_add_fetch(&lp_stack[i].s->hold_ns, lp_now() - lp_stack[i].since, __ATOMIC_RELAXED);
        memmove(&lp_stack[i], &lp_stack[i + 1], sizeof lp_stack[0] * (size_t)(lp_depth - 1 - i));
        break;
    }
    if (lp_depth > 0)
        lp_depth--;
}

int pthread_mutex_lock(pthread_mutex_t *m)
{
    lp_init();
    if (lp_inside)
        return real_lock(m);
    void *site = __builtin_return_address(0);
    unsigned long long t0 = lp_now();
    int contended = 0;
    int rc = real_trylock(m);
    if (rc != 0) {
        contended = 1;
        rc = real_lock(m);
    }
    if (rc == 0) {
        lp_inside = 1;
        lp_acquired(m, site, t0, contended);
        lp_inside = 0;
    }
    return rc;
}

int pthread_mutex_trylock(pthread_mutex_t *m)
{
    lp_init();
    int rc = real_trylock(m);
    if (rc == 0 && !lp_inside) {
        lp_inside = 1;
        lp_acquired(m, __builtin_return_address(0), lp_now(), 0);
        lp_inside = 0;
    }
    return rc;
}

int pthread_mutex_unlock(pthread_mutex_t *m)
{
    lp_init();
    if (!lp_inside) {
        lp_inside = 1;
        lp_releasing(m);
        lp_inside = 0;
    }
    return real_unlock(m);
}

int pthread_cond_timedwait(pthread_cond_t *c, pthread_mutex_t *m, const struct timespec *t)
{
    lp_init();
    void *site = __builtin_return_address(0);
    if (!lp_inside) {
        lp_inside = 1;
        lp_releasing(m);
        lp_inside = 0;
    }
    unsigned long long t0 = lp_now();
    int rc = real_timedwait(c, m, t);
    if (!lp_inside) {
        lp_inside = 1;
        lp_acquired(m, site, t0, 1);    /* a sleep in the lock counts as waiting */
        lp_inside = 0;
    }
    return rc;
}

static int lp_cmp(const void *a, const void *b)
{
    const struct lp_site *x = a, *y = b;
    return x->hold_ns < y->hold_ns ? 1 : x->hold_ns > y->hold_ns ? -1 : 0;
}

__attribute__((destructor)) static void lp_report(void)
{
    lp_inside = 1;
    /* the busiest mutex: most hold time over its sites */
    void *top = NULL;
    unsigned long long best = 0;
    for (int i = 0; i < LP_SITES; i++) {
        if (!lp_sites[i].site)
            continue;
        unsigned long long sum = 0;
        for (int j = 0; j < LP_SITES; j++)
            if (lp_sites[j].mutex == lp_sites[i].mutex)
                sum += lp_sites[j].hold_ns;
        if (sum > best) {
            best = sum;
            top = lp_sites[i].mutex;
        }
    }
    if (!top || best < 1000000)
        return;                 /* under 1 ms held in all: not an MPI_THREAD_MULTIPLE run */
    struct lp_site *v = calloc(LP_SITES, sizeof *v);
    int n = 0;
    unsigned long long tw = 0, tn = 0, tc = 0;
    for (int i = 0; i < LP_SITES; i++)
        if (lp_sites[i].mutex == top) {
            v[n++] = lp_sites[i];
            tw += lp_sites[i].wait_ns;
            tn += lp_sites[i].n;
            tc += lp_sites[i].contended;
        }
    qsort(v, (size_t)n, sizeof *v, lp_cmp);
    char buf[8192];
    int len = snprintf(buf, sizeof buf,
                       "lockprof[%d]: mutex %p: %llu acquisitions, %llu found it taken (%.1f%%), held %.3f s, "
                       "waited %.3f s\n", (int)getpid(), top, tn, tc, tn ? 100.0 * (double)tc / (double)tn : 0,
                       (double)best / 1e9, (double)tw / 1e9);
    for (int i = 0; i < n && i < 12 && len < (int)sizeof buf - 200; i++) {
        Dl_info di;
        const char *obj = "?", *sym = "?";
        uintptr_t off = 0;
        if (dladdr(v[i].site, &di)) {
            obj = di.dli_fname ? strrchr(di.dli_fname, '/') ? strrchr(di.dli_fname, '/') + 1 : di.dli_fname : "?";
            sym = di.dli_sname ? di.dli_sname : "?";
            off = (uintptr_t)v[i].site - (uintptr_t)di.dli_fbase;
        }
        len += snprintf(buf + len, sizeof buf - (size_t)len,
                        "lockprof[%d]:   %-28s %s+0x%lx: %lu taken (%lu contended), held %.3f s (%.0f ns each), "
                        "waited %.3f s\n", (int)getpid(), sym, obj, (unsigned long)off, v[i].n, v[i].contended,
                        (double)v[i].hold_ns / 1e9, v[i].n ? (double)v[i].hold_ns / (double)v[i].n : 0,
                        (double)v[i].wait_ns / 1e9);
    }
    if (write(2, buf, (size_t)len) < 0) {
    }
    free(v);
}
