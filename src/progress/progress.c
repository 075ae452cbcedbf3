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
 *
 * The asynchronous progress thread (PLEXUS_ASYNC_PROGRESS=1, issue 12).
 * One extra thread drives the engine while the application computes, so a
 * rendezvous transfer, an active-message remote-memory operation
 * (route/rma_am.c) or a nonblocking collective moves on without the
 * application calling MPI. It turns the library lock on (plx_lock.needed,
 * core/lock.h) whatever thread level was asked for; it never calls the MPI
 * API, only the engine, and holds the lock only while it polls.
 *
 * Locking between the thread and application threads:
 *  - Everything the engine touches stays under the one library lock, as
 *    with MPI_THREAD_MULTIPLE. The thread holds it only while it polls; it
 *    lets go of it to sleep, and lets waiting application threads in
 *    between polls that found work (plx_lock_relax).
 *  - The two never take turns polling. Every poll made by an application
 *    thread bumps `app_gen` (a store under the lock the thread reads without
 *    it). When the application has polled since the thread last looked
 *    (checked before each of the thread's polls, so that it does not take
 *    from the application the packet that woke it), an application thread is
 *    driving the engine (a wait spinning, a loop of MPI_Test): the thread
 *    *parks*. It withdraws from the doorbells (so shared-memory senders stop
 *    ringing and TCP sockets stop waking it) and sleeps on its own eventfd.
 *  - Application calls count themselves in and out of the library
 *    (plx_lock.app_inside and app_leaves, api/api.h: plain stores under
 *    the lock they take anyway, read by the thread without it). While
 *    parked, the thread may *listen*: it sets plx_lock.exit_armed under the
 *    lock, and the call that then leaves MPI clears it and writes
 *    `leave_fd` once; the thread, woken, checks for CONFIRM without the
 *    lock that no application thread came back, and takes over. It listens
 *    only after a hold-off in which no call left (the application stays in
 *    a long call); in a stream of short calls it stays deaf (no call
 *    writes anything) and takes over at the end of a hold-off after which
 *    the application is out and stays out, or did not poll (also when
 *    the application polled but had left before the thread looked: no
 *    call will ring then). Listening, it also looks every PARK_MAX whether
 *    the application still polls. So while the application communicates,
 *    its calls find the lock free: the thread costs them one uncontended
 *    mutex pair and two stores per call and a few thousand timer wake-ups
 *    a second, not a lock handed back and forth per message.
 *  - When the application stops calling MPI, the thread *watches*: it
 *    announces its sleep to the transports (plx_route_sleep_prepare: the
 *    shared-memory `sleeping` count, TCP's epoll set), polls once more
 *    (nothing published before the announcement is missed), lets go of the
 *    lock and sleeps in poll() on their descriptors and its eventfd: a few
 *    microseconds after the application leaves a long call, within a
 *    hold-off (50 us to 1 ms) after a stream of short calls, and at once
 *    when an application thread goes to sleep in a wait.
 *  - An application thread whose wait has spun and yielded in vain does not
 *    sleep on the doorbells itself: it sleeps on the condition variable
 *    (`nwaiting`), behind the thread, and rings the thread's eventfd if it
 *    is parked. Every poll that does work while someone sleeps there
 *    broadcasts it, as above. A thread holding the lock more than once (a
 *    callback that called MPI) cannot let go of it and sleeps on the
 *    doorbells itself, as before; the transports count their sleepers.
 *  - Finalize sets `stop` and rings the eventfd, lets go of the lock and
 *    joins the thread, before the transports close.
 * Cost: with the thread off nothing changes but one predictable branch per
 * poll. With it on, an idle rank wakes at most every 100 ms per sleeping
 * thread (the sleeps' time limit, kept for the route layer's timers and the
 * --timeout dump).
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
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
#include "util/util.h"

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

/* The asynchronous progress thread. `stop` and `app_gen` are written under
 * the library lock and read by the thread without it; the rest is under the
 * lock. */
static struct {
    int on;                     /* the thread runs (set before it starts, cleared after the join) */
    int stop;                   /* finalize asks it to end */
    int parked;                 /* it sleeps on the eventfd only (see above) */
    int left;                   /* an application thread left MPI and rang it (under the lock) */
    int leave_fd;               /* an eventfd: written once per arming, by the call that leaves */
    unsigned long app_gen;      /* polls made by application threads */
    long holdoff;               /* the thread's: how long its next park is deaf to leaves, us (0: none) */
    double last_left;           /* the thread's: when it last took over on a leave */
    pthread_t tid;
    /* PLEXUS_STATS, written by the thread only */
    uint64_t st_work, st_watch, st_park, st_park_periods;
    uint64_t st_left;           /* written by application threads, under the lock */
} plx_progress_async;

/* After doing work the thread keeps polling this long before it sleeps: an
 * origin's operations often come back to back (the next one leaves when the
 * last is answered), and a sleeping thread must wait to be scheduled again,
 * which took 20-100 us a wake-up on the loaded 2-core VM (measured with
 * bench/async_target). Never when there was nothing to do, so an idle rank
 * still uses no CPU. */
#define PLX_PROGRESS_LINGER_US 50
/* A parked thread learns that the application left MPI from the call that
 * leaves (api/api.h: plx_api_unlock writes leave_fd when `exit_armed`), and
 * takes over at once. Each such ring costs the leaving call an eventfd
 * write and the thread a wake-up, and a stream of short calls (a ping-pong,
 * lock/put/unlock) leaves every few microseconds. So a park starts deaf
 * to leaves for a hold-off (HOLDOFF_MIN, doubling up to HOLDOFF_MAX while
 * the application keeps coming back within REENTRY of the thread's last
 * takeover on a leave, and while calls keep leaving during hold-offs), and
 * listens only after a hold-off in which no call left.
 * At the end of a hold-off in which calls left, it takes over if the
 * application is out and stays out for CONFIRM, or did not poll. While it
 * listens, it also looks every PARK_MAX whether the application still
 * polls (a safety net: it takes over if not). */
#define PLX_PROGRESS_HOLDOFF_MIN_US 50
#define PLX_PROGRESS_HOLDOFF_MAX_US 1000
#define PLX_PROGRESS_REENTRY_US 1000
#define PLX_PROGRESS_STREAM_LEAVES 2
#define PLX_PROGRESS_PARK_MAX_US 1000
#define PLX_PROGRESS_SLEEP_MS 100

static void plx_progress_wake(void);
static int plx_progress_poll_engine(void);

/* More ranks on this node than CPUs (set at init). */
static int plx_progress_oversubscribed;

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
        plx_progress_oversubscribed = 1;
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
    if (plx_unlikely(plx_progress_async.on))      /* an application thread drives the engine */
        __atomic_store_n(&plx_progress_async.app_gen, plx_progress_async.app_gen + 1, __ATOMIC_RELAXED);
    return plx_progress_poll_engine();
}

/* One poll of the engine for a test call (MPI_Test*, MPI_Iprobe, MPI_Improbe,
 * MPI_Request_get_status). An application loop of such calls never reaches
 * the yields of plx_progress_wait. With more ranks than CPUs it then holds its
 * CPU for whole time slices while the rank it waits for waits for a CPU
 * (mpi4py's test_p2p_obj_matched at 4 ranks on 2 CPUs: two ranks polling with
 * MPI_Improbe, two waiting in the next call). So every 16th poll that finds
 * nothing to do yields, as Open MPI's yield_when_idle does on each one. */
int plx_progress_test_poll(void)
{
    static unsigned fruitless;
    int work = plx_progress_poll();
    if (plx_unlikely(plx_progress_oversubscribed) && !work && (++fruitless & 15) == 0)
        sched_yield();
    return work;
}

static int plx_progress_poll_engine(void)
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

static void plx_progress_ring(void);

/* Out of line: only when another thread sleeps. */
static void plx_progress_wake(void)
{
    if (plx_progress_mt.watching)
        plx_progress_ring();
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

/* Rings the eventfd (once until the thread that sleeps on it drains it). */
static void plx_progress_ring(void)
{
    if (plx_progress_mt.rung)
        return;
    uint64_t one = 1;
    plx_progress_mt.rung = 1;
    if (write(plx_progress_mt.efd, &one, sizeof one) < 0)
        plx_warn("progress: waking a sleeping thread: %s", strerror(errno));
}

static void plx_progress_drain(void)
{
    if (!plx_progress_mt.rung)
        return;
    uint64_t v;
    if (read(plx_progress_mt.efd, &v, sizeof v) < 0 && errno != EAGAIN)
        plx_warn("progress: eventfd: %s", strerror(errno));
    plx_progress_mt.rung = 0;
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
        if (plx_progress_async.on && outer) {
            /* the progress thread watches the doorbells; a parked one must
             * start now, since no application thread polls any more */
            if (plx_progress_async.parked)
                plx_progress_ring();
            plx_progress_sleep_behind();
            return;
        }
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
            plx_progress_drain();
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

/* While this process's own rendezvous sends wait to be read (plx_rndv_sends),
 * a wait keeps spinning up to this long after its last work before it
 * yields and sleeps: the reader is usually copying them right now, and its
 * completions come every few tens of us. Sleeping there cost a doorbell and
 * a wake-up per message: 2-rank bibw at 512 KiB and 1 MiB ran at 0.6-0.75x
 * of what spinning gives (issue 15). Not when ranks share CPUs (the spin
 * count is cut then). */
#define PLX_PROGRESS_RNDV_SPIN_NS 1000000

/* The yield phase of a wait ends after this long even if PLEXUS_YIELD_COUNT
 * rounds are not done: a sched_yield that returns late gave a whole time
 * slice to a rank that computes or polls (3-30 ms each measured, 4 ranks on 2
 * CPUs), and 1000 of them (the count when ranks share CPUs) kept a waiting
 * rank runnable for seconds, taking CPU from the ranks it waited for. */
#define PLX_PROGRESS_YIELD_MAX_NS 1000000

static uint64_t plx_progress_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void plx_progress_wait(int (*done)(void *arg), void *arg)
{
    int idle = 0;
    int spin = plx_config.spin_count;
    int yield = spin + plx_config.yield_count;
    uint64_t rndv_since = 0;    /* while our rendezvous sends wait: when the spin began over */
    uint64_t yield_since = 0;   /* when the yield phase began */
    while (!done(arg)) {
        if (plx_progress_poll()) {
            idle = 0;
            rndv_since = 0;
            yield_since = 0;
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
        if (idle == spin && plx_rndv_sends > 0 && spin == plx_config.spin_count && spin >= 1000) {
            uint64_t now = plx_progress_now_ns();
            if (!rndv_since)
                rndv_since = now;
            if (now - rndv_since < PLX_PROGRESS_RNDV_SPIN_NS) {
                idle -= 1000;   /* another stretch of polls, then look at the clock again */
                continue;
            }
        }
        if (idle < yield) {
            uint64_t now = plx_progress_now_ns();
            if (!yield_since)
                yield_since = now;
            if (now - yield_since < PLX_PROGRESS_YIELD_MAX_NS) {
                sched_yield();
                continue;
            }
            idle = yield;       /* yielded long enough: sleep */
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

/* --- the asynchronous progress thread (see the top of this file) ------------------ */

/* Parked: sleeps on the eventfd until an application thread leaves MPI
 * (the ring of plx_progress_async_app_left), one goes to sleep in a wait
 * behind the thread (plx_progress_sleep rings), finalize asks the thread to
 * stop, or the application has not polled for a whole PARK_MAX. During a
 * hold-off (see PLX_PROGRESS_HOLDOFF_MIN_US) it does not listen for leaves;
 * at its end it listens, or takes over if no application thread is active
 * in MPI any more. Called and returns with the lock held; sleeps without
 * it. Returns whether an application thread left MPI meanwhile. */
static long plx_progress_async_next_holdoff(long holdoff)
{
    return !holdoff ? PLX_PROGRESS_HOLDOFF_MIN_US
         : holdoff < PLX_PROGRESS_HOLDOFF_MAX_US / 2 ? 2 * holdoff : PLX_PROGRESS_HOLDOFF_MAX_US;
}

/* After a leave: whether an application thread comes back into MPI, or
 * polls, within CONFIRM (read without the lock). A stream of calls (lock,
 * put, unlock, lock, ...) leaves and comes back within a microsecond;
 * taking the lock and polling there costs the next call the wait for it,
 * and on a loaded machine a whole time slice when the thread is
 * descheduled holding it. The thread sleeps for the look rather than
 * spinning or yielding: woken by the leaving call, it is often placed on
 * that call's CPU and preempts it, so a spinning look found the
 * application "gone" at most phase starts of bench/rma_passive's origin
 * (which then paid a takeover, a watch and a ring back each time); and a
 * yield hands a computing application thread that shares its CPU a whole
 * time slice (2.8 ms on the target's first operation). A timer sleep lets
 * the application run and wakes the thread 5-15 us later. */
#define PLX_PROGRESS_CONFIRM_NS 5000
static int plx_progress_async_back_soon(void)
{
    unsigned long gen = __atomic_load_n(&plx_progress_async.app_gen, __ATOMIC_RELAXED);
    if (__atomic_load_n(&plx_lock.app_inside, __ATOMIC_RELAXED) > 0)
        return 1;
    struct timespec t = { 0, PLX_PROGRESS_CONFIRM_NS };
    (void)nanosleep(&t, NULL);
    return __atomic_load_n(&plx_lock.app_inside, __ATOMIC_RELAXED) > 0 ||
           __atomic_load_n(&plx_progress_async.app_gen, __ATOMIC_RELAXED) != gen;
}

static int plx_progress_async_park(void)
{
    struct pollfd p[2] = { { .fd = plx_progress_mt.efd, .events = POLLIN },
                           { .fd = plx_progress_async.leave_fd, .events = POLLIN } };
    long holdoff = plx_progress_async.holdoff;
    if (plx_progress_async.last_left > 0.0 &&
        plx_util_now() - plx_progress_async.last_left < PLX_PROGRESS_REENTRY_US * 1e-6)
        holdoff = plx_progress_async_next_holdoff(holdoff);
    else
        holdoff = PLX_PROGRESS_HOLDOFF_MIN_US;
    /* It listens only after a hold-off in which no call left: a leave's
     * ring costs the leaving call an eventfd write and a cross-CPU wake-up
     * (~5-10 us on this VM: listening from the start of a park put it on
     * the first operation after every barrier of rma_passive's origin, 11
     * against 2.3 us over shared memory). */
    /* If it polled and left before we looked, no call will ring: the
     * hold-off's end finds it out and takes over. (Taking over at once
     * after a 5 us look cost the origins' get and accumulate phases of
     * rma_passive more than it saved: 1.28-1.56x against 1.12-1.33x busy/
     * idle, side by side in one run.) */
    int armed = 0;
    int locked = 0;
    plx_progress_async.parked = 1;
    plx_lock.exit_armed = armed;    /* under the lock: a call that leaves from here on rings us */
    plx_lock_release();
    for (;;) {
        unsigned long seen = __atomic_load_n(&plx_progress_async.app_gen, __ATOMIC_RELAXED);
        unsigned long leaves = __atomic_load_n(&plx_lock.app_leaves, __ATOMIC_RELAXED);
        long us = armed ? PLX_PROGRESS_PARK_MAX_US : holdoff;
        struct timespec t = { us / 1000000, (us % 1000000) * 1000 };
        int r = ppoll(p, 2, &t, NULL);
        plx_progress_async.st_park_periods++;
        if (__atomic_load_n(&plx_progress_async.stop, __ATOMIC_RELAXED))
            break;
        if (r > 0 && !(p[0].revents & POLLIN) && (p[1].revents & POLLIN)) {
            /* A call left MPI. It wrote once and disarmed: only we read
             * this descriptor, without the lock. If the application is back
             * already (the next call of a stream), leave it the engine and
             * hold off, without touching the lock it is using. */
            uint64_t v;
            if (read(plx_progress_async.leave_fd, &v, sizeof v) < 0 && errno != EAGAIN)
                plx_warn("progress: eventfd: %s", strerror(errno));
            armed = 0;
            if (plx_progress_async_back_soon()) {
                holdoff = PLX_PROGRESS_HOLDOFF_MIN_US;  /* rung at most once per quiet hold-off */
                continue;
            }
            break;              /* it has left: take over */
        }
        if (r != 0)
            break;              /* rung by a thread going to sleep behind us (or interrupted) */
        if (!armed) {
            if (__atomic_load_n(&plx_lock.app_leaves, __ATOMIC_RELAXED) == leaves) {
                /* No call left during the hold-off: the application stays
                 * in MPI (a long wait) or out of it. Listen from now on,
                 * or take over. */
                plx_lock_acquire();
                if (plx_lock.app_inside > plx_progress_mt.nwaiting) {
                    armed = 1;
                    plx_lock.exit_armed = 1;
                    plx_lock_release();
                    continue;
                }
                locked = 1;
                break;
            }
            /* Calls came and went: a stream of short calls, where a ring
             * at every leave would cost each a wake-up. Stay deaf; take
             * over when it is out and stays out, or stopped polling. */
            if (__atomic_load_n(&plx_lock.app_inside, __ATOMIC_RELAXED) == 0 && !plx_progress_async_back_soon())
                break;
            if (__atomic_load_n(&plx_progress_async.app_gen, __ATOMIC_RELAXED) == seen)
                break;
            /* Look less often only in a real stream (several calls per
             * hold-off): a few longer calls (a barrier, a broadcast, a
             * barrier before a computation) keep the short hold-off, so the
             * thread takes over soon after the last of them. */
            if (__atomic_load_n(&plx_lock.app_leaves, __ATOMIC_RELAXED) - leaves > PLX_PROGRESS_STREAM_LEAVES)
                holdoff = plx_progress_async_next_holdoff(holdoff);
            else
                holdoff = PLX_PROGRESS_HOLDOFF_MIN_US;
            continue;
        }
        if (__atomic_load_n(&plx_progress_async.app_gen, __ATOMIC_RELAXED) == seen)
            break;              /* no application poll for a whole period */
    }
    if (!locked)
        plx_lock_acquire();
    if (plx_lock.exit_armed) {
        plx_lock.exit_armed = 0;
    } else if (plx_progress_async.left) {
        /* armed once and rung: drain a write that came after our last read */
        uint64_t v;
        if (read(plx_progress_async.leave_fd, &v, sizeof v) < 0 && errno != EAGAIN)
            plx_warn("progress: eventfd: %s", strerror(errno));
    }
    plx_progress_async.holdoff = holdoff;
    plx_progress_async.parked = 0;
    int left = plx_progress_async.left;
    if (left) {
        plx_progress_async.left = 0;
        plx_progress_async.last_left = plx_util_now();
    }
    plx_progress_drain();
    return left;
}

/* An application thread leaves MPI (plx_api_unlock, the lock held once)
 * while the parked thread listens: wake it, once per arming. */
void plx_progress_async_app_left(void)
{
    plx_lock.exit_armed = 0;
    plx_progress_async.left = 1;
    plx_progress_async.st_left++;
    uint64_t one = 1;
    if (write(plx_progress_async.leave_fd, &one, sizeof one) < 0)
        plx_warn("progress: waking the progress thread: %s", strerror(errno));
}

/* Watching: announced to the transports, asleep on their doorbells and the
 * eventfd. Returns with the lock held, the announcement withdrawn. */
static void plx_progress_async_watch(void)
{
    struct pollfd fds[5];
    int n = 0;
    fds[n].fd = plx_progress_mt.efd;
    fds[n].events = POLLIN;
    n++;
    int tfd[4];
    int nt = plx_route_sleep_prepare(tfd, 4);
    for (int i = 0; i < nt; i++) {
        fds[n].fd = tfd[i];
        fds[n].events = POLLIN;
        n++;
    }
    if (plx_progress_poll_engine() == 0 && !plx_progress_async.stop) {
        plx_progress_async.st_watch++;
        plx_progress_mt.watching = 1;   /* from here, work done elsewhere rings us */
        plx_lock_release();
        (void)poll(fds, (nfds_t)n, PLX_PROGRESS_SLEEP_MS);
        plx_lock_acquire();
    }
    plx_progress_mt.watching = 0;
    plx_progress_drain();
    plx_route_sleep_done();
}

static void *plx_progress_async_main(void *arg)
{
    (void)arg;
    /* the park periods are tens of microseconds: the default 50 us of
     * timer slack would double them */
    (void)prctl(PR_SET_TIMERSLACK, 5000UL, 0, 0, 0);
    /* a name for top, ps -L and perf sched (the scheduler traces of issue 12) */
    (void)prctl(PR_SET_NAME, "plx-progress", 0, 0, 0);
    plx_lock_acquire();
    unsigned long seen = plx_progress_async.app_gen;
    double last_work = 0.0;
    while (!plx_progress_async.stop) {
        /* An application thread polled since we last looked (and none
         * sleeps waiting for us): it drives the engine. Park before
         * polling, so as not to take from it the packet that woke us. */
        unsigned long gen = plx_progress_async.app_gen;
        int app_busy = gen != seen && !plx_progress_mt.nwaiting;
        seen = gen;
        if (app_busy) {
            plx_progress_async.st_park++;
            (void)plx_progress_async_park();
            seen = plx_progress_async.app_gen;  /* what it polled while we were parked is past */
            continue;
        }
        if (plx_progress_poll_engine()) {
            plx_lock_relax();   /* application threads waiting for the lock go first */
            last_work = plx_util_now();
            plx_progress_async.st_work++;
            continue;
        }
        if (plx_unlikely(plx_progress_dump_requested)) {    /* --timeout, while the application computes */
            plx_progress_dump_requested = 0;
            plx_request_dump_pending();
        }
        if (plx_util_now() - last_work < PLX_PROGRESS_LINGER_US * 1e-6) {
            plx_lock_relax();   /* the next request of a stream is likely on its way */
            continue;
        }
        plx_progress_async_watch();             /* what it polls while we sleep counts */
    }
    plx_lock_release();
    return NULL;
}

void plx_progress_async_start(void)
{
    if (!plx_config.async_progress || plx_progress_async.on)
        return;
    if (plx_unlikely(!plx_progress_mt.init))
        plx_progress_mt_init();
    /* The thread takes no signal: SIGURG (the --timeout dump) and the
     * application's own go to application threads. */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    plx_progress_async.leave_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (plx_progress_async.leave_fd < 0) {
        plx_warn("PLEXUS_ASYNC_PROGRESS: eventfd: %s; running without the progress thread", strerror(errno));
        return;
    }
    plx_progress_async.stop = 0;
    plx_progress_async.on = 1;
    plx_lock.app_inside = 0;    /* MPI_Init does not count itself */
    plx_lock.exit_armed = 0;
    plx_lock.app_track = 1;
    int err = pthread_create(&plx_progress_async.tid, NULL, plx_progress_async_main, NULL);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (err) {
        plx_progress_async.on = 0;
        plx_lock.app_track = 0;
        close(plx_progress_async.leave_fd);
        plx_warn("PLEXUS_ASYNC_PROGRESS: cannot start the progress thread (%s); running without it",
                 strerror(err));
        return;
    }
    plx_debug(1, "asynchronous progress thread started");
}

void plx_progress_async_stop(void)
{
    if (!plx_progress_async.on)
        return;
    /* The caller may hold the lock (MPI_Finalize): let go of it entirely
     * for the join, since the thread needs it to see `stop`. */
    int depth = plx_lock_held() ? plx_lock.depth : 0;
    if (!depth)
        plx_lock_acquire();
    __atomic_store_n(&plx_progress_async.stop, 1, __ATOMIC_RELAXED);
    plx_progress_ring();
    int d = depth ? depth : 1;
    for (int i = 0; i < d; i++)
        plx_lock_release();
    int err = pthread_join(plx_progress_async.tid, NULL);
    if (err)
        plx_warn("PLEXUS_ASYNC_PROGRESS: joining the progress thread: %s", strerror(err));
    for (int i = 0; i < depth; i++)
        plx_lock_acquire();
    plx_progress_async.on = 0;
    /* MPI_Finalize, the caller, is the one call inside. Another count means
     * a call that entered and did not leave through plx_api_unlock (or the
     * reverse): the thread would then listen for a leave that never comes
     * and take over only by its 1 ms safety net. Said under PLEXUS_DEBUG
     * (tests/mpi/async_leave). */
    if (plx_lock.app_inside != (depth ? 1 : 0))
        plx_debug(1, "progress thread: %d application calls counted inside MPI at its stop, expected %d: "
                  "calls did not count themselves out", plx_lock.app_inside, depth ? 1 : 0);
    plx_lock.app_track = 0;     /* the caller's plx_api_unlock does not count itself */
    plx_lock.exit_armed = 0;
    close(plx_progress_async.leave_fd);
    if (plx_config.stats)
        plx_warn("stats: progress thread: %llu polls with work, %llu sleeps on the doorbells, parked %llu times "
                 "(%llu park periods) while the application polled, woken %llu times as it left MPI",
                 (unsigned long long)plx_progress_async.st_work, (unsigned long long)plx_progress_async.st_watch,
                 (unsigned long long)plx_progress_async.st_park,
                 (unsigned long long)plx_progress_async.st_park_periods,
                 (unsigned long long)plx_progress_async.st_left);
    plx_debug(1, "asynchronous progress thread stopped");
}
