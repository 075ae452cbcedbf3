/*
 * Progress engine (see progress.h).
 *
 * Waiting policy: a blocked wait polls PLEXUS_SPIN_COUNT times, then calls
 * sched_yield() between polls PLEXUS_YIELD_COUNT times, then sleeps on the
 * doorbell of every transport that has one. The sleep also ends after 100 ms
 * so that signals (the --timeout dump) and peers that cannot ring us are
 * noticed; such wake-ups cost nothing measurable.
 *
 * Threads (MPI_THREAD_MULTIPLE). A waiting thread's request can be
 * completed by another thread: a thread that polls reads every socket and
 * ring, and may take the message another waits for, after which the
 * doorbell shows nothing and the waiter would sleep out its 100 ms (a
 * thread ping-pong over TCP ran at ~20 ms a round). So a wait looks at its
 * request again after letting go of the lock between polls, and one sleeping
 * thread, the watcher, sleeps on the doorbells and on an eventfd of its own;
 * any other sleeps on a condition variable of the library lock; and a poll
 * that does work while a thread sleeps rings the eventfd (once per sleep)
 * and broadcasts the condition. The sleepers then look at their requests
 * again. When the watcher wakes, it wakes the others, and one of them
 * becomes the next watcher.
 */
#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>
#include "coll/sched.h"
#include "core/config.h"
#include "core/lock.h"
#include "core/log.h"
#include "core/request.h"
#include "core/runtime.h"
#include "progress/progress.h"
#include "pt2pt/pt2pt.h"
#include "route/route.h"

volatile int plx_progress_dump_requested;

/* Sleeping threads, under MPI_THREAD_MULTIPLE only; every field is read and
 * written under the library lock. */
static struct {
    int init;
    int efd;                    /* wakes the watcher; readable only while `rung` */
    int watching;               /* a thread sleeps on the doorbells */
    int rung;                   /* efd written since the watcher went to sleep */
    int nwaiting;               /* threads on `cond` */
    pthread_cond_t cond;        /* with plx_lock.mutex */
} plx_progress_mt;

static void plx_progress_wake(void);

static void plx_progress_sigurg(int sig)
{
    (void)sig;
    plx_progress_dump_requested = 1;
}

void plx_progress_init(void)
{
    struct sigaction sa = { 0 };
    sa.sa_handler = plx_progress_sigurg;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    sigaction(SIGURG, &sa, NULL);

    /* More ranks on this node than CPUs: a spinning waiter burns the time
     * slice the rank it waits for needs. Spin briefly and yield at once
     * (measured: 4-rank barrier on 2 cores 88 us -> 3-4 us), unless the
     * user chose the counts. */
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    if (ncpu > 0 && plx_procs.nlocal > ncpu) {
        if (!getenv("PLEXUS_SPIN_COUNT"))
            plx_config.spin_count = 10;
        if (!getenv("PLEXUS_YIELD_COUNT"))
            plx_config.yield_count = 1000;
        plx_debug(1, "%d ranks on %ld CPUs: spin %d, yield %d before sleeping", plx_procs.nlocal, ncpu,
                  plx_config.spin_count, plx_config.yield_count);
    }
}

int plx_progress_poll(void)
{
    int work = 0;
    work += plx_route_poll();
    work += plx_pt2pt_flush();
    work += plx_coll_progress();    /* nonblocking collectives (src/coll/sched.c) */
    if (plx_unlikely(plx_progress_mt.watching | plx_progress_mt.nwaiting) && work)
        plx_progress_wake();
    return work;
}

void plx_progress_finalize(void)
{
    if (!plx_progress_mt.init)
        return;
    close(plx_progress_mt.efd);
    pthread_cond_destroy(&plx_progress_mt.cond);
    memset(&plx_progress_mt, 0, sizeof plx_progress_mt);
}

void plx_progress_kick(void)
{
    if (plx_unlikely(plx_progress_mt.watching | plx_progress_mt.nwaiting))
        plx_progress_wake();
}

/* Out of line: only when another thread sleeps. */
static void plx_progress_wake(void)
{
    if (plx_progress_mt.watching && !plx_progress_mt.rung) {
        uint64_t one = 1;
        plx_progress_mt.rung = 1;
        if (write(plx_progress_mt.efd, &one, sizeof one) < 0)
            plx_warn("progress: waking a sleeping thread: %s", strerror(errno));
    }
    if (plx_progress_mt.nwaiting)
        pthread_cond_broadcast(&plx_progress_mt.cond);
}

static void plx_progress_mt_init(void)
{
    pthread_condattr_t a;
    pthread_condattr_init(&a);
    pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
    pthread_cond_init(&plx_progress_mt.cond, &a);
    pthread_condattr_destroy(&a);
    plx_progress_mt.efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (plx_progress_mt.efd < 0)
        plx_fatal("progress: eventfd: %s", strerror(errno));
    plx_progress_mt.init = 1;
}

/* Another thread watches the doorbells: wait until it or a poll wakes us. */
static void plx_progress_sleep_behind(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    t.tv_nsec += 100 * 1000 * 1000;
    if (t.tv_nsec >= 1000 * 1000 * 1000) {
        t.tv_nsec -= 1000 * 1000 * 1000;
        t.tv_sec++;
    }
    plx_progress_mt.nwaiting++;
    plx_lock_cond_timedwait(&plx_progress_mt.cond, &t);
    plx_progress_mt.nwaiting--;
}

static void plx_progress_sleep(void)
{
    struct pollfd fds[5];
    int n = 0;
    /* Holding the lock more than once (a callback that called MPI), this
     * thread cannot let other threads in: it sleeps on the doorbells
     * itself, whether or not another thread watches them. */
    int outer = plx_lock_outermost();
    if (plx_lock.needed) {
        if (plx_unlikely(!plx_progress_mt.init))
            plx_progress_mt_init();
        if (plx_progress_mt.watching && outer) {
            plx_progress_sleep_behind();
            return;
        }
        fds[n].fd = plx_progress_mt.efd;
        fds[n].events = POLLIN;
        n++;
    }
    int tfd[4];
    int nt = plx_route_sleep_prepare(tfd, 4);
    for (int i = 0; i < nt; i++) {
        fds[n].fd = tfd[i];
        fds[n].events = POLLIN;
        n++;
    }
    /* poll once more after announcing the sleep: nothing published before
     * the announcement can be missed */
    if (plx_progress_poll() == 0 && !plx_progress_dump_requested) {
        int watcher = plx_lock.needed && !plx_progress_mt.watching;
        if (watcher)
            plx_progress_mt.watching = 1;
        if (outer)
            plx_lock_release(); /* other threads may use MPI while we sleep */
        (void)poll(fds, (nfds_t)n, 100);
        if (outer)
            plx_lock_acquire();
        if (plx_lock.needed) {
            if (watcher)
                plx_progress_mt.watching = 0;
            if (plx_progress_mt.rung) {
                uint64_t v;
                if (read(plx_progress_mt.efd, &v, sizeof v) < 0 && errno != EAGAIN)
                    plx_warn("progress: eventfd: %s", strerror(errno));
                plx_progress_mt.rung = 0;
            }
            if (watcher && plx_progress_mt.nwaiting)   /* one of them watches next */
                pthread_cond_broadcast(&plx_progress_mt.cond);
        }
    }
    plx_route_sleep_done();
}

/* A transport says another local rank last waited on our CPU. */
static int plx_progress_cpu_shared(void)
{
    return plx_route_cpu_shared();
}

#define PLX_PROGRESS_CPU_CHECK 64   /* idle polls before asking whether we share a CPU */

void plx_progress_wait(int (*done)(void *arg), void *arg)
{
    int idle = 0;
    int spin = plx_config.spin_count;
    int yield = spin + plx_config.yield_count;
    while (!done(arg)) {
        if (plx_progress_poll()) {
            idle = 0;
            continue;
        }
        plx_lock_relax();
        if (plx_unlikely(plx_lock.needed) && done(arg))
            break;              /* another thread completed it while we let go */
        if (plx_unlikely(plx_progress_dump_requested)) {
            plx_progress_dump_requested = 0;
            plx_request_dump_pending();
        }
        idle++;
        /* Sharing a CPU with a node peer (the scheduler put us together):
         * spinning on would only hold up the rank we wait for, so go on to
         * yielding now. A ping-pong on one CPU: ~35 us -> a few us. */
        if (plx_unlikely(idle == PLX_PROGRESS_CPU_CHECK) && idle < spin && plx_progress_cpu_shared()) {
            yield -= spin - idle;
            spin = idle;
        }
        if (idle < spin)
            continue;
        if (idle < yield) {
            sched_yield();
            continue;
        }
        plx_progress_sleep();
    }
}

static int plx_progress_req_done(void *arg)
{
    return ((struct plx_request *)arg)->cc == 0;
}

void plx_progress_wait_req(struct plx_request *r)
{
    if (r->cc == 0)
        return;
    plx_progress_wait(plx_progress_req_done, r);
}
