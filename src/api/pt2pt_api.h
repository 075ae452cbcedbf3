/* Argument checks and request set-up shared by the point-to-point entry points. */
#ifndef PLX_PT2PT_API_H
#define PLX_PT2PT_API_H

#include "api/api.h"
#include "core/request.h"

enum plx_p2p_dir { PLX_DIR_SEND, PLX_DIR_RECV };

/* Checks comm, buffer, count, datatype, peer rank and tag of a send or
 * receive; on success sets *c_p and *dt_p. Returns MPI_SUCCESS or the
 * (already raised) error code. */
int plx_api_p2p_check(MPI_Comm comm, const void *buf, MPI_Aint count, MPI_Datatype dtype, int peer, int tag,
                      enum plx_p2p_dir dir, const char *fn, struct plx_comm **c_p, struct plx_datatype **dt_p);

/* A request for a send/recv, not yet started. */
struct plx_request *plx_api_p2p_request(int kind, struct plx_comm *c, const void *buf, MPI_Aint count,
                                        struct plx_datatype *dt, int peer, int tag, int mode);

/* Starts a send of any mode (buffered mode copies into the attached buffer). */
int plx_api_send_start(struct plx_request *r, const char *fn);
int plx_api_recv_start(struct plx_request *r, const char *fn);

/* Waits for r; fills st; frees r unless persistent. Returns the request's
 * error (raised on comm) or MPI_SUCCESS. */
int plx_api_wait_one(struct plx_request *r, MPI_Status *st, const char *fn);

/* For a completed request: fills st, frees r (inactive if persistent), and
 * returns its error; raise: pass it to the error handler (single-request
 * calls), else return it as it is (the -all and -some calls report
 * MPI_ERR_IN_STATUS themselves). */
int plx_api_request_done(struct plx_request *r, MPI_Status *st, int raise);

/* Generalized requests (grequest.c): query_fn's status into r, once per
 * completion; cancel_fn. */
void plx_greq_query(struct plx_request *r);
/* free_fn now (not again when r is freed); returns its error code */
int plx_greq_release(struct plx_request *r);
/* cancel_fn; returns its error code, raised on MPI_COMM_SELF */
int plx_greq_cancel(struct plx_request *r);

/* Bsend (bsend.c) */
int plx_bsend_start(struct plx_request *r, const char *fn);
void plx_bsend_finalize(void);

#endif
