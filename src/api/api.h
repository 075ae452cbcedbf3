/*
 * Shared helpers of the MPI_* entry points: the API lock, argument checks
 * that decode handles, and error raising through the communicator's error
 * handler.
 *
 * Every entry point is defined as PMPI_X with `#pragma weak MPI_X = PMPI_X`,
 * so a profiling library can define MPI_X and call PMPI_X.
 *
 * Error path: plx_api_err(comm, fn, class, fmt, ...) builds a code whose
 * message names the call and the rank ("MPI_Send(rank 3): ..."), calls the
 * error handler of comm (MPI_COMM_WORLD's when comm is NULL) and returns the
 * code; with MPI_ERRORS_ARE_FATAL the handler prints it and ends the job.
 *
 * Locking: see core/lock.h.
 */
#ifndef PLX_API_H
#define PLX_API_H

#include <mpi.h>
#include <pthread.h>
#include "core/errors.h"
#include "core/lock.h"
#include "core/objects.h"
#include "core/plexus.h"
#include "core/runtime.h"


/* The application's calls enter and leave the library here. With the
 * asynchronous progress thread on (plx_lock.app_track), they count
 * themselves in plx_lock.app_inside, and a call that leaves while the
 * parked thread asked for it (exit_armed) wakes it, so that it takes over
 * at once rather than at the end of a park period
 * (plx_progress_async_app_left, one eventfd write). With the thread off
 * this is the lock alone: `needed` is the branch plx_lock_* take anyway. */
void plx_progress_async_app_left(void);
static inline void plx_api_lock(void)
{
    plx_lock_acquire();
    if (plx_unlikely(plx_lock.needed) && plx_lock.app_track && plx_lock.depth == 1)
        __atomic_store_n(&plx_lock.app_inside, plx_lock.app_inside + 1, __ATOMIC_RELAXED);
}
static inline void plx_api_unlock(void)
{
    if (plx_unlikely(plx_lock.needed) && plx_lock.app_track && plx_lock.depth == 1) {
        __atomic_store_n(&plx_lock.app_inside, plx_lock.app_inside - 1, __ATOMIC_RELAXED);
        __atomic_store_n(&plx_lock.app_leaves, plx_lock.app_leaves + 1, __ATOMIC_RELAXED);
        if (plx_lock.exit_armed)
            plx_progress_async_app_left();
    }
    plx_lock_release();
}

/* Raise an error on comm (NULL: MPI_COMM_WORLD, or print+abort before init).
 * Returns the error code (when the handler returns). */
int plx_api_err(struct plx_comm *comm, const char *fn, int errclass, const char *fmt, ...)
    __attribute__((format(printf, 4, 5), cold));
/* Invoke comm's handler on an existing code; returns code. */
int plx_api_err_code(struct plx_comm *comm, int code);

/* MPI_Comm_split's work for calls built on it (topologies): errors are
 * raised on c naming fn, the call the user made. Caller holds the lock. */
int plx_api_comm_split(struct plx_comm *c, int color, int key, MPI_Comm *newcomm, const char *fn);

/* Ends the job when MPI is not initialized or already finalized. */
void plx_api_check_init(const char *fn);

/* Handle decoders: return MPI_SUCCESS and set *_p, or raise and return the
 * error (MPI_ERR_COMM / MPI_ERR_GROUP / ...). */
int plx_api_comm(MPI_Comm h, struct plx_comm **c_p, const char *fn);
/* The same, and MPI_ERR_COMM for an intercommunicator. */
int plx_api_intracomm(MPI_Comm h, struct plx_comm **c_p, const char *fn);
int plx_api_group(struct plx_comm *errcomm, MPI_Group h, struct plx_group **g_p, const char *fn, const char *arg);
int plx_api_info(struct plx_comm *errcomm, MPI_Info h, struct plx_info **i_p, const char *fn, const char *arg);

/* Set (on this thread) while a persistent collective's _init call builds
 * its schedule through the nonblocking implementation: the schedule is then
 * kept in an inactive persistent request instead of started (api/coll.c). */
extern _Thread_local int plx_api_coll_persistent;
/* The info argument of an _init call: MPI_INFO_NULL or a valid info object
 * (no hints are used yet). Takes the lock itself. */
int plx_api_coll_init_info(MPI_Comm comm, MPI_Info info, MPI_Request *request, const char *fn);

/* Sessions (api/session.c): MPI_Init after MPI_Session_init started the
 * library takes it over (returns 1; *provided gets the level in use). */
int plx_session_adopt_world(int *provided);

/* Raises MPI_ERR_ARG naming the NULL output argument `arg`. */
/* dynamic.c: at MPI_Init of a spawned process, connect to its parents. */
void plx_dyn_init_parent(void);

int plx_api_null_arg(struct plx_comm *comm, const char *fn, const char *arg);

#endif
