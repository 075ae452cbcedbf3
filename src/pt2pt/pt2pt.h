/*
 * Point-to-point protocols over the transport interface.
 *
 *  eager     size <= the channel's eager limit and the sender holds enough
 *            credit at the receiver: EAGER (+ SYNC flag for Ssend, answered
 *            by SYNC_ACK when matched). Completes once the transport took it.
 *  rendezvous  RTS {size, addr}; when matched the receiver reads the
 *            sender's buffer directly (read_remote, e.g. process_vm_readv;
 *            over shared memory the waiting sender helps copy) and answers
 *            FIN; if the transport cannot, it answers CTS and the sender
 *            streams DATA fragments into the posted buffer.
 *  non-contiguous  large blocks move without packing where the transport
 *            copies scattered memory (copy_remote): the receiver reads into
 *            its blocks; a sender's blocks go out as RTS with PUSH, the
 *            receiver answers CTS with PUSH {rreq, addr, bytes}, the sender
 *            writes them there and sends PUT_DONE. Small blocks: RTS with
 *            NOREAD, then CTS/DATA with each fragment packed as it leaves.
 *  credits   a receiver returns eager bytes as they are consumed (CREDIT),
 *            so unexpected eager data held at a receiver never exceeds the
 *            transport's eager credit per sender (PLEXUS_SHM_EAGER_CREDIT,
 *            PLEXUS_TCP_EAGER_CREDIT): a flood of unexpected messages turns
 *            into rendezvous requests (headers only).
 *  zero copy a transport with send_zcopy (TCP) gets a rendezvous message as
 *            one DATA packet that it writes from the user's buffer; the send
 *            completes when it calls plx_pt2pt_zcopy_done(). On the receive
 *            side it may place DATA payloads itself (plx_pt2pt_data_dst).
 *  cancel    CANCEL_REQ asks the receiver to drop an unmatched message;
 *            CANCEL_ANS says whether it did.
 *
 * Order: each peer has one FIFO of packets waiting for transport space; a
 * new send goes behind anything queued, so messages leave in program order.
 */
#ifndef PLX_PT2PT_H
#define PLX_PT2PT_H

#include "core/request.h"
#include "transport/transport.h"

plx_status_t plx_pt2pt_init(void);
void plx_pt2pt_finalize(void);
/* The counters of the channel through route instance ifc_id to world rank
 * lpid (route.h's PLX_ST_*; zeros and 0 when this rank has not talked to
 * it). Caller holds the lock. */
int plx_pt2pt_chan_stats(int lpid, int ifc_id, uint64_t out[5]);
/* lpids now up to ntotal - 1 (processes of other jobs; called by the router) */
plx_status_t plx_pt2pt_add_peers(int ntotal);

/* Fast path of a blocking standard-mode send of contiguous data: sends it
 * eagerly right now if nothing is queued to the peer, the size is eager and
 * credit allows; PLX_OK when done (no request needed), PLX_BUSY otherwise
 * (the caller takes the request path). */
plx_status_t plx_pt2pt_send_inline(struct plx_comm *c, int ctx, const void *data, size_t bytes, int rank, int tag);

/* Starts a send/receive request whose fields (comm, rank, tag, ctx, buf,
 * count, dt, mode) are set. Errors: PLX_ERR_PEER when no transport reaches
 * the peer (message printed). */
plx_status_t plx_pt2pt_send_start(struct plx_request *r);
plx_status_t plx_pt2pt_recv_start(struct plx_request *r);

/* Probe: fills *found and the status fields of `st` (src, tag, bytes) */
void plx_pt2pt_iprobe(struct plx_comm *c, int ctx, int src, int tag, int *found, MPI_Status *st);
/* Matched probe: removes the message and returns it as a MESSAGE request. */
struct plx_request *plx_pt2pt_improbe(struct plx_comm *c, int ctx, int src, int tag);
/* Receive a matched message into r (a RECV request not yet started). */
plx_status_t plx_pt2pt_mrecv_start(struct plx_request *r, struct plx_request *msg);

/* Cancel: receives are withdrawn at once; sends ask the receiver. */
void plx_pt2pt_cancel(struct plx_request *r);

/* The handlers of every packet type pt2pt receives, and DATA placement,
 * for the router to hand to the transports (route.c). */
void plx_pt2pt_upcalls(struct plx_tp_upcalls *up);

/* Failure of a peer: the router lost its last channel (plx_pt2pt_peer_lost,
 * declared in route.h), or a transport knows the process is gone; `why`
 * names both ranks, the hosts and the address.
 *
 * Unless some communicator holding that rank has an error handler that
 * returns (MPI_ERRORS_RETURN, a user function), the job ends with `why`
 * (plx_fatal), as MPI_ERRORS_ARE_FATAL asks. If one has, it calls
 * plx_pt2pt_peer_failed() (from a poll, never from inside send): every request bound to the peer then
 * completes with an error of class MPIX_ERR_PROC_FAILED whose text carries
 * `why`: sends queued or in flight to it, receives posted for it, matched
 * receives still streaming from it, and MPI_ANY_SOURCE receives posted at
 * that moment on a communicator holding it (they complete, as in MPICH
 * without ULFM's pending state). Later sends to it, and later receives
 * naming it as source, fail at once; so do later MPI_ANY_SOURCE receives
 * and probes on a communicator holding it that find no message, until
 * MPIX_Comm_failure_ack (plx_pt2pt_failure_ack) acknowledges the failures
 * known then: wildcards then wait for the survivors again (ULFM's rule, as
 * in MPICH). Messages that arrived whole before the failure can still be
 * received. The error's status names the lost member as MPI_SOURCE. */
/* For a probe of c that found nothing from src (a rank or MPI_ANY_SOURCE):
 * the error code it ends with because src (for a wildcard, a member whose
 * failure c has not acknowledged) has failed, else MPI_SUCCESS. With an
 * error, *st (unless MPI_STATUS_IGNORE) gets the lost member's rank, tag,
 * the code and a count of 0. */
/* A wildcard receive or probe on c would fail now (a member was lost and
 * the loss is not acknowledged), unless a matching message is here. */
int plx_pt2pt_wildcard_failing(struct plx_comm *c);
int plx_pt2pt_probe_error(struct plx_comm *c, int src, int tag, MPI_Status *st, const char *fn);
void plx_pt2pt_peer_failed(int lpid, const char *why);
/* MPIX_Comm_failure_ack: c acknowledges every failure known now. */
void plx_pt2pt_failure_ack(struct plx_comm *c);

/* Emits queued packets where transports have room; returns work done. */
int plx_pt2pt_flush(void);

#endif
