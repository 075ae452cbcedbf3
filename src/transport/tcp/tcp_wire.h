/*
 * The TCP connection handshake, on the wire. Self-contained (stdint only) so
 * that tests can forge handshakes with it.
 *
 *   connector -> acceptor   struct plx_tcp_hello (40 bytes): magic, version,
 *                           header size, its rank, the rank it wants, the
 *                           world size, its rail number and the job's
 *                           128-bit secret
 *   acceptor -> connector   struct plx_tcp_ack (16 bytes): ACCEPT, DUPLICATE
 *                           (the acceptor's own connection to the connector
 *                           wins: the lower rank's connection is kept) or
 *                           WRONG_PEER (this address is not that rank of this
 *                           job: the connector tries its next address)
 *
 * An acceptor reads exactly one hello and checks it before anything else; a
 * connection whose hello is malformed or carries another secret is closed
 * without an answer, so nothing it sent reaches the job. The connector sends
 * packets (struct plx_hdr + payload) only after ACCEPT. Fields are in host
 * byte order: every host of a job is assumed to share it.
 */
#ifndef PLX_TCP_WIRE_H
#define PLX_TCP_WIRE_H

#include <stdint.h>

#define PLX_TCP_MAGIC 0x54584c50u       /* the bytes "PLXT" on little-endian hosts */
#define PLX_TCP_VERSION 2                /* 2: the rail in the hello; DATA offset and lseq in the header */

struct plx_tcp_hello {
    uint32_t magic;
    uint16_t version;
    uint16_t hdr_size;          /* sizeof(struct plx_hdr) of the connector */
    int32_t src;                /* the connector's world rank */
    int32_t dst;                /* the world rank it means to reach */
    uint32_t size;              /* world size */
    uint32_t rail;              /* the connector's rail number (rails over loopback are told apart by it) */
    uint8_t secret[16];
};

enum plx_tcp_ack_status { PLX_TCP_ACK_ACCEPT = 1, PLX_TCP_ACK_DUPLICATE = 2, PLX_TCP_ACK_WRONG_PEER = 3 };

struct plx_tcp_ack {
    uint32_t magic;
    uint16_t version;
    uint16_t status;
    int32_t rank;               /* the acceptor's world rank */
    uint32_t reserved;
};

enum plx_tcp_hello_verdict {
    PLX_TCP_HELLO_OK = 0,
    PLX_TCP_HELLO_BAD_MAGIC,    /* not a Plexus peer (or not this version) */
    PLX_TCP_HELLO_BAD_SECRET,   /* not this job */
    PLX_TCP_HELLO_BAD_RANK,     /* this job, but a rank out of range */
    PLX_TCP_HELLO_WRONG_PEER,   /* this job, but meant for another rank */
};

/* Checks a received hello against this process; compares the secret in
 * constant time. */
static inline int plx_tcp_hello_check(const struct plx_tcp_hello *h, const uint8_t secret[16], int my_rank,
                                      int world_size, unsigned hdr_size)
{
    if (h->magic != PLX_TCP_MAGIC || h->version != PLX_TCP_VERSION || h->hdr_size != hdr_size)
        return PLX_TCP_HELLO_BAD_MAGIC;
    uint8_t diff = 0;
    for (int i = 0; i < 16; i++)
        diff |= (uint8_t)(h->secret[i] ^ secret[i]);
    if (diff)
        return PLX_TCP_HELLO_BAD_SECRET;
    if (h->size != (uint32_t)world_size || h->src < 0 || h->src >= world_size || h->src == my_rank)
        return PLX_TCP_HELLO_BAD_RANK;
    if (h->dst != my_rank)
        return PLX_TCP_HELLO_WRONG_PEER;
    return PLX_TCP_HELLO_OK;
}

#endif
