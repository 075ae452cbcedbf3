/*
 * The buffers of buffered sends (api/bsend.c): the process's
 * (MPI_Buffer_attach), a communicator's and a session's (MPI 4.1). A slot
 * holds NULL or the attached buffer. All calls with the API lock held;
 * errors are raised on ec (NULL: MPI_COMM_WORLD's handler).
 */
#ifndef PLX_API_BSEND_H
#define PLX_API_BSEND_H

#include <mpi.h>
#include "core/objects.h"

struct plx_bpool;

/* buffer may be MPI_BUFFER_AUTOMATIC (size ignored). owner: for messages. */
int plx_bpool_attach(struct plx_bpool **slot, void *buffer, MPI_Count size, struct plx_comm *ec, const char *fn,
                     const char *owner);
/* Waits for the messages buffered in it, then detaches; size_p is an int
 * (wide 0) or an MPI_Count (wide 1). Nothing attached: NULL and 0. */
int plx_bpool_detach(struct plx_bpool **slot, void *buffer_addr, void *size_p, int wide, struct plx_comm *ec,
                     const char *fn);
/* Waits until every message buffered in p has left (p NULL: at once). */
int plx_bpool_flush(struct plx_bpool *p);
/* The same as a request (on communicator rc) that completes then. */
int plx_bpool_iflush(struct plx_bpool *p, struct plx_comm *rc, MPI_Request *request, struct plx_comm *ec,
                     const char *fn);

#endif
