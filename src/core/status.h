/*
 * Internal status codes. Every internal function that can fail returns a
 * plx_status_t: PLX_OK (0), a positive "not yet" code, or a negative error.
 * Only src/api/ turns these into MPI error classes (plx_status_to_class).
 */
#ifndef PLX_STATUS_H
#define PLX_STATUS_H

typedef enum plx_status {
    PLX_OK = 0,
    PLX_IN_PROGRESS = 1,      /* accepted, completes later */
    PLX_BUSY = 2,             /* refused for now: queue and retry */

    PLX_ERR_NOMEM = -1,
    PLX_ERR_ARG = -2,
    PLX_ERR_INTERN = -3,
    PLX_ERR_IO = -4,          /* a socket / file / syscall failed */
    PLX_ERR_PEER = -5,        /* a peer or link died */
    PLX_ERR_TRUNCATE = -6,
    PLX_ERR_PM = -7,          /* the process manager (PMI) failed or said no */
    PLX_ERR_NOSPACE = -8,     /* /dev/shm, buffer or similar is too small */
    PLX_ERR_TIMEOUT = -9,
    PLX_ERR_UNSUPPORTED = -10,
    PLX_ERR_PROC_FAILED = -11,  /* an operation with a peer that was lost for good */
    PLX_ERR_RANGE = -12,      /* remote memory: no such registered region, or outside it */
} plx_status_t;

#define PLX_IS_ERR(s) ((s) < 0)

#endif
