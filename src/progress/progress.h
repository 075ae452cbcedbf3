/*
 * Progress engine: polls every active transport and flushes queued sends.
 * A blocked wait spins (PLEXUS_SPIN_COUNT polls), then yields
 * (PLEXUS_YIELD_COUNT rounds), then sleeps on the transports' doorbells, so
 * a job with more ranks than cores does not starve the ranks it waits for.
 */
#ifndef PLX_PROGRESS_H
#define PLX_PROGRESS_H

#include "core/request.h"

int plx_progress_poll(void);
/* A test-style call (MPI_Test*, MPI_Iprobe, MPI_Improbe) polled and found
 * nothing: lets another rank run now and then when ranks share CPUs. */
int plx_progress_test_poll(void);
/* Progresses until done(arg) returns nonzero. */
void plx_progress_wait(int (*done)(void *arg), void *arg);
/* Progresses until r->cc == 0. */
void plx_progress_wait_req(struct plx_request *r);
void plx_progress_init(void);
/* At finalize, after the transports: frees what waiting threads used. */
void plx_progress_finalize(void);
/* Something a sleeping thread may wait for happened outside a poll (a
 * request completed, a packet to self was queued): wake it. */
void plx_progress_kick(void);
/* The asynchronous progress thread (PLEXUS_ASYNC_PROGRESS; see progress.c
 * for how it shares the library lock): started at the end of MPI_Init when
 * the setting is on, stopped and joined by MPI_Finalize before the
 * transports close. Stop may be called with or without the lock held. */
void plx_progress_async_start(void);
void plx_progress_async_stop(void);
/* An application thread leaves MPI while the parked thread listens
 * (plx_lock.exit_armed; called by plx_api_unlock under the lock). */
void plx_progress_async_app_left(void);
/* Set from the SIGURG handler: print pending requests at the next poll. */
extern volatile int plx_progress_dump_requested;

#endif
