/*
 * The library's one lock, taken around every MPI call only when the
 * application asked for MPI_THREAD_MULTIPLE. A blocked wait lets go of it
 * between polls (plx_lock_relax) so that other threads can enter MPI: a
 * thread waiting for a message another thread must send would otherwise
 * deadlock. Coarse; a finer scheme comes with the threads issue.
 */
#ifndef PLX_LOCK_H
#define PLX_LOCK_H

#include <pthread.h>
#include <sched.h>
#include <time.h>
#include "core/plexus.h"

struct plx_lock {
    int needed;
    int depth;                  /* times the holder holds it (under the mutex) */
    unsigned long owner;        /* the holder's pthread_self(), 0 when free (Linux: never a thread's) */
    int waiters;                /* threads blocked taking it (atomic): what plx_lock_relax lets in */
    /* The asynchronous progress thread's view of the application
     * (progress/progress.c, api/api.h), under the mutex: */
    int app_track;              /* the thread runs: MPI calls count themselves in app_inside */
    int app_inside;             /* application threads inside an MPI call (outermost) */
    int exit_armed;             /* the parked thread wants to hear when one leaves */
    unsigned long app_leaves;   /* calls that left (read by the thread without the mutex) */
    pthread_mutex_t mutex;      /* recursive: error handlers and attribute
                                 * callbacks may call MPI */
};
extern struct plx_lock plx_lock;

static inline void plx_lock_acquire(void)
{
    if (plx_unlikely(plx_lock.needed)) {
        if (pthread_mutex_trylock(&plx_lock.mutex) != 0) {
            __atomic_add_fetch(&plx_lock.waiters, 1, __ATOMIC_RELAXED);
            pthread_mutex_lock(&plx_lock.mutex);
            __atomic_sub_fetch(&plx_lock.waiters, 1, __ATOMIC_RELAXED);
        }
        if (plx_lock.depth++ == 0)
            __atomic_store_n(&plx_lock.owner, (unsigned long)pthread_self(), __ATOMIC_RELAXED);
    }
}
static inline void plx_lock_release(void)
{
    if (plx_unlikely(plx_lock.needed)) {
        if (--plx_lock.depth == 0)
            __atomic_store_n(&plx_lock.owner, 0ul, __ATOMIC_RELAXED);
        pthread_mutex_unlock(&plx_lock.mutex);
    }
}
/* Whether the calling thread holds the lock. Some calls report errors
 * before they take it, and some never take it. */
static inline int plx_lock_held(void)
{
    return plx_lock.needed &&
           __atomic_load_n(&plx_lock.owner, __ATOMIC_RELAXED) == (unsigned long)pthread_self();
}
/* Whether this thread holds the lock once, so that a release lets other
 * threads in: not inside a call made with the lock held (an attribute
 * callback or error handler that calls MPI), nor outside any MPI call. */
static inline int plx_lock_outermost(void)
{
    return plx_lock_held() && plx_lock.depth == 1;
}
/* pthread_cond_timedwait on the lock, held once (plx_lock_outermost):
 * the wait lets go of it and takes it back. */
static inline void plx_lock_cond_timedwait(pthread_cond_t *cond, const struct timespec *until)
{
    plx_lock.depth = 0;
    __atomic_store_n(&plx_lock.owner, 0ul, __ATOMIC_RELAXED);
    /* counted as waiting throughout: once woken it must take the lock back,
     * and the thread polling meanwhile must let it (plx_lock_relax) */
    __atomic_add_fetch(&plx_lock.waiters, 1, __ATOMIC_RELAXED);
    (void)pthread_cond_timedwait(cond, &plx_lock.mutex, until);
    __atomic_sub_fetch(&plx_lock.waiters, 1, __ATOMIC_RELAXED);
    __atomic_store_n(&plx_lock.owner, (unsigned long)pthread_self(), __ATOMIC_RELAXED);
    plx_lock.depth = 1;
}
/* Called by blocked waits between polls: lets in the threads that wait to
 * take the lock, if any. When none waits, it keeps the lock: letting go and
 * yielding after every idle poll cost a pair of lock operations and a
 * sched_yield per poll of every waiting thread (in mr_threads, 4 threads per
 * rank: more than a third of all lock acquisitions were these, issue 19). */
static inline void plx_lock_relax(void)
{
    if (plx_unlikely(plx_lock.needed) && plx_lock_outermost() &&
        __atomic_load_n(&plx_lock.waiters, __ATOMIC_RELAXED) > 0) {
        plx_lock_release();
        sched_yield();
        plx_lock_acquire();
    }
}

#endif
