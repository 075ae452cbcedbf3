/*
 * The SCTP transport on the wire. Self-contained (stdint + transport.h) so
 * that tests can forge packets with it.
 *
 * Each SCTP stream of an association is a byte stream of packets: struct
 * plx_hdr followed by h.len payload bytes, exactly as over TCP. The sender
 * cuts a stream's bytes into SCTP messages of at most PLEXUS_SCTP_FRAG
 * bytes (a message may end inside a packet, or hold several small ones);
 * SCTP delivers one stream's messages in order, and the receiver parses each
 * (association, stream) on its own, so streams never wait for each other.
 * Streams: 0 carries the handshake and the unmatched control packets (CTS,
 * FIN, CREDIT, acknowledgements, ...); matched packets (EAGER, RTS,
 * CANCEL_REQ) go on 1 + hash(ctx, tag) % (n/2 - 1); rendezvous DATA on
 * n/2 + hash(receiver's request) % (n/2), so a bulk transfer never sits in
 * front of a small message in a stream's queue.
 *
 * Handshake, on stream 0 of a new association, before anything else:
 *   connector -> acceptor   HELLO: hdr.type PLX_SCTP_PKT_HELLO, payload
 *                           struct plx_sctp_hello (its rank, the rank it
 *                           wants, the world size, the job's secret)
 *   acceptor -> connector   HELLO_ACK: the same payload from the acceptor's
 *                           side (so the connector knows it reached this job
 *                           and this rank, not a stranger at that address)
 * An association whose first packet is anything else, or carries another
 * secret or rank, is aborted; nothing it sent reaches the job. The
 * connector sends packets only after HELLO_ACK. BYE (stream 0) says the
 * sender is finalizing: its association ending afterwards is no failure.
 * Fields are in host byte order, as over TCP.
 */
#ifndef PLX_SCTP_WIRE_H
#define PLX_SCTP_WIRE_H

#include <stdint.h>
#include "transport/transport.h"

#define PLX_SCTP_MAGIC 0x53584c50u      /* "PLXS" on little-endian hosts */
#define PLX_SCTP_VERSION 1

#define PLX_SCTP_PKT_HELLO 0xf0
#define PLX_SCTP_PKT_HELLO_ACK 0xf1
#define PLX_SCTP_PKT_BYE 0xf2

struct plx_sctp_hello {
    uint32_t magic;
    uint16_t version;
    uint16_t hdr_size;          /* sizeof(struct plx_hdr) of the sender */
    int32_t src;                /* the sender's world rank */
    int32_t dst;                /* the world rank it means to reach */
    uint32_t size;              /* world size */
    uint32_t streams;           /* streams the sender uses (both sides must agree) */
    uint32_t threads;           /* 1: usrsctp runs its own threads; 0: without (PLEXUS_SCTP_THREADS; must agree) */
    uint32_t zero;              /* keeps the size a multiple of 8: header and hello go as one struct */
    uint8_t secret[16];
};
_Static_assert(sizeof(struct plx_sctp_hello) % 8 == 0, "a hello after a header must not leave padding");

enum plx_sctp_hello_verdict {
    PLX_SCTP_HELLO_OK = 0,
    PLX_SCTP_HELLO_BAD_MAGIC,   /* not a Plexus peer (or another version) */
    PLX_SCTP_HELLO_BAD_SECRET,  /* not this job */
    PLX_SCTP_HELLO_BAD_RANK,    /* this job, but a rank out of range, or meant for another rank */
    PLX_SCTP_HELLO_BAD_STREAMS, /* this job, but another PLEXUS_SCTP_STREAMS */
    PLX_SCTP_HELLO_BAD_THREADS, /* this job, but the other side of PLEXUS_SCTP_THREADS */
};

/* Checks a received hello (len bytes of payload) against this process; the
 * secret is compared in constant time. */
static inline int plx_sctp_hello_check(const void *payload, uint32_t len, const uint8_t secret[16], int my_rank,
                                       int world_size, uint32_t streams, uint32_t threads)
{
    struct plx_sctp_hello h;
    if (len != sizeof h)
        return PLX_SCTP_HELLO_BAD_MAGIC;
    __builtin_memcpy(&h, payload, sizeof h);
    if (h.magic != PLX_SCTP_MAGIC || h.version != PLX_SCTP_VERSION || h.hdr_size != sizeof(struct plx_hdr))
        return PLX_SCTP_HELLO_BAD_MAGIC;
    uint8_t diff = 0;
    for (int i = 0; i < 16; i++)
        diff |= (uint8_t)(h.secret[i] ^ secret[i]);
    if (diff)
        return PLX_SCTP_HELLO_BAD_SECRET;
    if (h.size != (uint32_t)world_size || h.src < 0 || h.src >= world_size || h.src == my_rank || h.dst != my_rank)
        return PLX_SCTP_HELLO_BAD_RANK;
    if (h.streams != streams)
        return PLX_SCTP_HELLO_BAD_STREAMS;
    if (h.threads != threads)
        return PLX_SCTP_HELLO_BAD_THREADS;
    return PLX_SCTP_HELLO_OK;
}

/* The stream a packet travels on, of n (n >= 4, even). */
static inline uint16_t plx_sctp_stream_of(const struct plx_hdr *h, unsigned n)
{
    unsigned half = n / 2;
    switch (h->type) {
    case PLX_PKT_EAGER:
    case PLX_PKT_RTS:
    case PLX_PKT_CANCEL_REQ: {
        uint32_t x = (uint32_t)h->ctx * 0x9e3779b1u ^ (uint32_t)h->tag * 0x85ebca6bu;
        x ^= x >> 15;
        return (uint16_t)(1 + x % (half - 1));
    }
    case PLX_PKT_DATA: {
        uint64_t x = h->sreq * 0x9e3779b97f4a7c15ull;
        return (uint16_t)(half + (x >> 40) % half);
    }
    default:
        return 0;
    }
}

#endif
