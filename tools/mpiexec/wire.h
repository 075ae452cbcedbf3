/*
 * The mpiexec <-> plexus-proxy protocol: length-prefixed binary frames over
 * one TCP connection per host.
 *
 * mpiexec listens; each proxy connects back (trying the advertised addresses
 * in order) and must speak first with HELLO carrying the job's proxy secret
 * (128 random bits, 32 hex digits, handed to the proxy in its environment or
 * on its stdin, never on a command line). A connection whose first frame is
 * anything else, or whose secret or proxy id is wrong, is closed and logged
 * and nothing it sent reaches the job. mpiexec then answers LAUNCH (the part
 * of the job this host runs) and from there on frames flow both ways:
 *
 *   frame   = u32 length (big endian, counts type + body) | u8 type | body
 *   u32     = 4 bytes big endian; str = u32 length | bytes (no NUL)
 *
 *   HELLO        P->M  str magic "plexus-proxy-1", str secret, u32 proxy id,
 *                      str hostname, u32 pid
 *   LAUNCH       M->P  see plx_wire_launch_* in proxy.c / mpiexec_remote.c
 *   STARTED      P->M  u32 rank, u32 pid
 *   SPAWN_FAILED P->M  u32 rank, u32 errno (0: not started because an
 *                      earlier rank failed), str message
 *   PMI          both  u32 rank, bytes: PMI-1 text relayed unchanged
 *   PMI_EOF      P->M  u32 rank: the rank closed its PMI socket
 *   OUTPUT       P->M  u32 rank, u8 stream (1 stdout, 2 stderr), bytes
 *   OUTPUT_EOF   P->M  u32 rank, u8 stream
 *   EXIT         P->M  u32 rank, u8 signaled, u32 status (after the rank's
 *                      last output and PMI bytes, so they come first)
 *   SIGNAL       M->P  u32 signal, u8 group (1: every rank's process group,
 *                      0: the main process of each running rank)
 *   STDIN        M->P  bytes for rank 0's stdin; an empty body ends it
 *   STDIN_ACK    P->M  u8 closed: the last STDIN chunk was written to the
 *                      rank (closed=1: rank 0 closed its stdin; stop sending)
 *   LOG          P->M  str: a message for mpiexec to print
 *   DONE         M->P  every rank has exited: kill leftovers in the ranks'
 *                      process groups, forward the output that remains, exit
 *
 * Liveness comes from TCP itself, so it holds while the peer process is busy
 * (mpiexec blocked writing to a slow terminal must not look dead): an idle
 * connection runs keepalive probes every second and fails with ETIMEDOUT
 * after about the host timeout without an answer; a connection with data in
 * flight is declared dead by plx_wire_stalled() once nothing has been
 * acknowledged for the host timeout. (TCP_USER_TIMEOUT is not used: it also
 * aborts a connection whose live peer just reads slowly, a zero window.)
 *
 * Costs: a frame is copied once into the output queue; the input buffer is
 * compacted after each read. Single-threaded.
 */
#ifndef PLX_WIRE_H
#define PLX_WIRE_H

#include <stddef.h>
#include <stdint.h>

#define PLX_WIRE_MAGIC "plexus-proxy-1"
#define PLX_WIRE_SECRET_HEX 32
#define PLX_WIRE_FRAME_MAX (64u << 20)
#define PLX_WIRE_SECRET_ENV "PLEXUS_PROXY_SECRET"
/* Ranks in a job at most (mpiexec's -n limit): a LAUNCH naming more is
 * malformed, so a proxy never sizes its tables from an unchecked count
 * (found by tests/fuzz/fuzz_proxy_wire: 2^31 ranks asked for 8 GB). */
#define PLX_WIRE_JOB_MAX 100000

enum plx_wire_type {
    PLX_WIRE_HELLO = 1,
    PLX_WIRE_LAUNCH,
    PLX_WIRE_STARTED,
    PLX_WIRE_SPAWN_FAILED,
    PLX_WIRE_PMI,
    PLX_WIRE_PMI_EOF,
    PLX_WIRE_OUTPUT,
    PLX_WIRE_OUTPUT_EOF,
    PLX_WIRE_EXIT,
    PLX_WIRE_SIGNAL,
    PLX_WIRE_STDIN,
    PLX_WIRE_STDIN_ACK,
    PLX_WIRE_LOG,
    PLX_WIRE_DONE,
};

struct plx_wire_conn {
    int fd;                     /* non-blocking, -1: closed */
    uint8_t *in;                /* received bytes not yet taken as frames */
    size_t in_off, in_len, in_cap;
    uint8_t *out;               /* queued bytes not yet sent */
    size_t out_off, out_len, out_cap;
    size_t frame_start;         /* of the frame being built */
    size_t in_limit;            /* largest frame accepted */
};

/* A frame being read: a cursor over its body. Reads past the end set bad. */
struct plx_wire_rd {
    const uint8_t *p;
    size_t left;
    int bad;
};

void plx_wire_init(struct plx_wire_conn *c, int fd, size_t in_limit);
/* Closes the socket and frees the buffers. */
void plx_wire_close(struct plx_wire_conn *c);

/* Reads what the socket has (bounded). 1: got bytes or nothing yet,
 * 0: orderly EOF, -1: error (errno set). */
int plx_wire_read(struct plx_wire_conn *c);
/* Takes the next complete frame. 1: *type_p and *rd set (valid until the
 * next plx_wire_read), 0: none complete, -1: a frame above in_limit. */
int plx_wire_next(struct plx_wire_conn *c, int *type_p, struct plx_wire_rd *rd);

/* Building a frame into the output queue. Out of memory is fatal (the
 * program exits with a message): queues are bounded by the callers. */
void plx_wire_begin(struct plx_wire_conn *c, int type);
void plx_wire_u8(struct plx_wire_conn *c, unsigned v);
void plx_wire_u32(struct plx_wire_conn *c, uint32_t v);
void plx_wire_bytes(struct plx_wire_conn *c, const void *p, size_t n);
void plx_wire_str(struct plx_wire_conn *c, const char *s);
void plx_wire_end(struct plx_wire_conn *c);

/* Sends what the socket takes now. 0, or -1 on error (errno set). */
int plx_wire_flush(struct plx_wire_conn *c);
static inline size_t plx_wire_pending(const struct plx_wire_conn *c)
{
    return c->out_len - c->out_off;
}
/* Blocks until the queue is sent, an error, or timeout_ms. 0: all sent. */
int plx_wire_flush_wait(struct plx_wire_conn *c, int timeout_ms);

unsigned plx_wire_rd_u8(struct plx_wire_rd *rd);
uint32_t plx_wire_rd_u32(struct plx_wire_rd *rd);
/* A str field as a pointer into the frame and its length. */
const char *plx_wire_rd_str(struct plx_wire_rd *rd, size_t *len_p);
/* A str field copied into a malloc'd NUL-terminated string (NULL if bad). */
char *plx_wire_rd_strdup(struct plx_wire_rd *rd);

/* Liveness: keepalive probes every second, so an idle connection to a peer
 * that stops answering fails after about timeout_ms. Also TCP_NODELAY (PMI
 * round trips are small). */
void plx_wire_tune_socket(int fd, unsigned timeout_ms);

/* Data sent on fd has waited timeout_ms or more without any acknowledgement
 * (the peer host is down or cut off). Callers check about once a second. */
int plx_wire_stalled(int fd, unsigned timeout_ms);
#define PLX_WIRE_STALL_CHECK 1.0        /* seconds between checks */

/* Secrets: 16 random bytes as 32 lowercase hex digits (+ NUL). 0 or -1. */
int plx_wire_secret_make(char out[PLX_WIRE_SECRET_HEX + 1]);
/* Constant-time comparison of a received secret with ours. */
int plx_wire_secret_equal(const char *ours, const char *got, size_t got_len);

#endif
