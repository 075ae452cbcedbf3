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
#include "core/plexus.h"

struct plx_lock {
    int needed;
    pthread_mutex_t mutex;      /* recursive: error handlers may call MPI */
};
extern struct plx_lock plx_lock;

static inline void plx_lock_acquire(void)
{
    if (plx_unlikely(plx_lock.needed))
        pthread_mutex_lock(&plx_lock.mutex);
}
static inline void plx_lock_release(void)
{
    if (plx_unlikely(plx_lock.needed))
        pthread_mutex_unlock(&plx_lock.mutex);
}
/* Called by blocked waits between polls. */
static inline void plx_lock_relax(void)
{
    if (plx_unlikely(plx_lock.needed)) {
        pthread_mutex_unlock(&plx_lock.mutex);
        sched_yield();
        pthread_mutex_lock(&plx_lock.mutex);
    }
}

#endif
