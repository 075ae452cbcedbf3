/*
 * The transport interface. A transport moves packets between processes and
 * knows nothing of communicators or matching; the point-to-point layer knows
 * nothing of rings or sockets. Each transport is one table of operations.
 *
 * Every packet starts with struct plx_hdr. A transport hands each incoming
 * packet to plx_pt2pt_dispatch() with a pointer to its payload, valid only
 * during that call (for shared memory it points into the ring itself, so a
 * receive that is already posted gets a single copy).
 *
 * A byte-stream transport (TCP) may instead place the payload of a DATA
 * packet itself: it reads the header and the 8-byte offset, asks
 * plx_pt2pt_data_dst() where the bytes go, reads them there (readv straight
 * into the posted buffer) and reports plx_pt2pt_data_placed().
 *
 * Thread rules: only the progress engine (under the API lock) calls poll,
 * and only the point-to-point layer calls send.
 */
#ifndef PLX_TRANSPORT_H
#define PLX_TRANSPORT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>
#include "core/status.h"

enum plx_pkt_type {
    PLX_PKT_EAGER = 1,          /* matched data; flags PLX_PKT_F_SYNC for Ssend */
    PLX_PKT_SYNC_ACK,           /* receiver matched an eager-synchronous message */
    PLX_PKT_RTS,                /* rendezvous request: payload struct plx_rts */
    PLX_PKT_CTS,                /* receiver asks the sender to stream: payload uint64 rreq */
    PLX_PKT_DATA,               /* a streamed fragment: payload uint64 offset + data */
    PLX_PKT_FIN,                /* receiver has read the sender's buffer */
    PLX_PKT_CANCEL_REQ,         /* sender asks to withdraw an unmatched send */
    PLX_PKT_CANCEL_ANS,         /* flags PLX_PKT_F_CANCELLED when it was withdrawn */
    PLX_PKT_CREDIT,             /* len = eager bytes consumed since the last credit */
    PLX_PKT_PUT_DONE,           /* sender has written the whole message into the receiver (CTS with PUSH) */
    PLX_PKT_TYPE_MAX,
};

#define PLX_PKT_F_SYNC      0x1
#define PLX_PKT_F_CANCELLED 0x2
#define PLX_PKT_F_PUSH      0x4 /* RTS/CTS: the sender writes into the receiver's buffer */
#define PLX_PKT_F_NOREAD    0x8 /* RTS: not readable in place (packed as it streams): answer CTS */
#define PLX_PKT_F_FAILED    0x10 /* EAGER/RTS of a collective step whose sender had already failed
                                     * (a member was lost): its data is not to be trusted */
#define PLX_PKT_F_OTHER     0x20 /* with F_FAILED: it failed for another reason than a lost member */
#define PLX_PKT_F_TRANSPORT 0x80 /* reserved for a transport's own use; others ignore it */

/* 32 bytes, the same for every transport. */
struct plx_hdr {
    uint8_t type;
    uint8_t flags;
    uint16_t ctx;               /* match context */
    int32_t src;                /* sender's rank in the communicator */
    int32_t tag;
    uint32_t seq;               /* per (sender, receiver) order of matched packets */
    uint64_t len;               /* payload bytes of this packet */
    uint64_t sreq;              /* a request cookie: the sender's, or (DATA) the receiver's */
};

struct plx_rts {
    uint64_t size;              /* bytes of the whole message */
    uint64_t addr;              /* sender's buffer, for a direct read */
};

struct plx_transport_ops {
    const char *name;
    /* latency class: lower is faster; the router prefers the lowest */
    int latency_class;
    /* Can this transport reach world rank lpid? */
    int (*reaches)(int lpid);
    /* Send hdr + payload (iov) to lpid. PLX_OK: accepted whole (the data
     * was copied out); PLX_BUSY: nothing taken, retry later. */
    plx_status_t (*send)(int lpid, const struct plx_hdr *hdr, const struct iovec *iov, int iovcnt);
    /* Largest hdr+payload one send accepts. */
    size_t (*max_packet)(void);
    /* Read len bytes at remote_addr of lpid's memory into local (a direct,
     * single-copy read); NULL when the transport cannot. PLX_OK: done;
     * PLX_IN_PROGRESS: the transport finishes it (the peer may help copy)
     * and then calls plx_pt2pt_read_done(cookie, status) from poll;
     * PLX_ERR_UNSUPPORTED when the OS forbids it for this peer. */
    plx_status_t (*read_remote)(int lpid, void *local, uint64_t remote_addr, size_t len, void *cookie);
    /* Optional scattered copy between this process and lpid's memory:
     * local iovecs <-> [remote, remote+len) (write: local to remote). Used
     * for non-contiguous data with large blocks. Synchronous. NULL or
     * PLX_ERR_UNSUPPORTED when the transport or the OS cannot. */
    plx_status_t (*copy_remote)(int lpid, int write, const struct iovec *local, int niov, uint64_t remote,
                                size_t len);
    /* Deliver incoming packets; returns how many. */
    int (*poll)(void);
    /* Prepare to sleep: returns an fd that becomes readable when a peer has
     * sent something, or -1 if this transport cannot sleep; 0-work check is
     * the caller's business (poll once more after prepare). */
    int (*sleep_prepare)(void);
    void (*sleep_done)(void);
    /* Optional: 1 when another process this transport reaches last ran on
     * the CPU this one runs on (so spinning only delays it). Called by a
     * wait that has spun a while without progress. */
    int (*cpu_shared)(void);
    void (*finalize)(void);

    /* Optional (NULL: the PLEXUS_SHM_* values). Largest message sent
     * eagerly, and eager bytes a sender may have unconsumed at one receiver
     * (the credit of pt2pt's flow control). */
    size_t (*eager_max)(void);
    size_t (*eager_credit)(void);
    /* Optional zero-copy send, used for rendezvous DATA. Like send, except
     * that the last iov entry is not copied: it must stay valid until the
     * transport calls plx_pt2pt_zcopy_done(cookie), which it never does from
     * inside this call. The header and the other entries (small) are copied.
     * When present, pt2pt sends a whole rendezvous message as one DATA
     * packet through it instead of fragments through send. */
    plx_status_t (*send_zcopy)(int lpid, const struct plx_hdr *hdr, const struct iovec *iov, int iovcnt,
                               void *cookie);
};

#endif
