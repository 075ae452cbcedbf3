/*
 * A single-producer/single-consumer ring of variable-size records in shared
 * memory: [struct plx_hdr][payload] padded to 64 bytes. A record that would
 * straddle the end is preceded by a WRAP marker and starts at 0.
 *
 * The consumer polls the record slot itself, not a shared head counter: the
 * first 8 bytes of a header (type, flags, ctx, src; type is never 0) are
 * its "seal", stored last with release semantics by the producer. An empty
 * slot reads 0 because the consumer, after using a record, zeroes the first
 * word of every 64-byte line it spanned, so any line where a future record
 * may start reads 0 until that record is sealed. A small message thus costs
 * the receiver one cache-line transfer, not two (counter, then data).
 *
 * The producer learns about free space from `tail` (the consumer's release
 * store after zeroing), read only when its cached copy says the ring is full.
 * Inline because it is the shared-memory fast path.
 */
#ifndef PLX_RING_H
#define PLX_RING_H

#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <sys/uio.h>
#include "core/plexus.h"
#include "transport/transport.h"

#define PLX_RING_ALIGN 64
#define PLX_RING_WRAP 0xff       /* record type of a wrap marker */
#define PLX_RING_CTRL 4096      /* bytes of control block before the data */

struct plx_ring_ctrl {
    _Alignas(64) _Atomic uint64_t head;
    char pad0[64 - sizeof(uint64_t)];
    _Alignas(64) _Atomic uint64_t tail;
    char pad1[64 - sizeof(uint64_t)];
};

struct plx_ring_prod {
    struct plx_ring_ctrl *ctrl;
    uint8_t *data;
    uint64_t size;              /* power of two */
    uint64_t head;
    uint64_t tail_cache;
};

struct plx_ring_cons {
    struct plx_ring_ctrl *ctrl;
    uint8_t *data;
    uint64_t size;
    uint64_t tail;
};

/* base points at PLX_RING_CTRL + size bytes of zeroed shared memory. */
static inline void plx_ring_prod_init(struct plx_ring_prod *p, void *base, uint64_t size)
{
    p->ctrl = base;
    p->data = (uint8_t *)base + PLX_RING_CTRL;
    p->size = size;
    p->head = atomic_load_explicit(&p->ctrl->head, memory_order_relaxed);
    p->tail_cache = atomic_load_explicit(&p->ctrl->tail, memory_order_acquire);
}

static inline void plx_ring_cons_init(struct plx_ring_cons *c, void *base, uint64_t size)
{
    c->ctrl = base;
    c->data = (uint8_t *)base + PLX_RING_CTRL;
    c->size = size;
    c->tail = atomic_load_explicit(&c->ctrl->tail, memory_order_relaxed);
}

static inline void plx_ring_seal(void *rec, const struct plx_hdr *hdr)
{
    uint64_t seal;
    memcpy(&seal, hdr, sizeof seal);
    atomic_store_explicit((_Atomic uint64_t *)rec, seal, memory_order_release);
}

/* Largest payload one record may carry. */
static inline uint64_t plx_ring_max_payload(uint64_t size)
{
    return size / 4 - sizeof(struct plx_hdr);
}

/* Writes one record; PLX_BUSY when there is no room (nothing written). */
static inline plx_status_t plx_ring_write(struct plx_ring_prod *p, const struct plx_hdr *hdr,
                                          const struct iovec *iov, int iovcnt)
{
    uint64_t need = PLX_ALIGN_UP(sizeof *hdr + hdr->len, PLX_RING_ALIGN);
    uint64_t pos = p->head & (p->size - 1);
    uint64_t contig = p->size - pos;
    uint64_t total = need <= contig ? need : contig + need;
    if (p->head + total - p->tail_cache > p->size) {
        p->tail_cache = atomic_load_explicit(&p->ctrl->tail, memory_order_acquire);
        if (p->head + total - p->tail_cache > p->size)
            return PLX_BUSY;
    }
    if (need > contig) {
        struct plx_hdr wrap = { .type = PLX_RING_WRAP };     /* the rest of the lap is skipped */
        plx_ring_seal(p->data + pos, &wrap);
        pos = 0;
    }
    uint8_t *rec = p->data + pos;
    memcpy(rec + 8, (const char *)hdr + 8, sizeof *hdr - 8);
    uint8_t *d = rec + sizeof *hdr;
    for (int i = 0; i < iovcnt; i++) {
        memcpy(d, iov[i].iov_base, iov[i].iov_len);
        d += iov[i].iov_len;
    }
    plx_ring_seal(rec, hdr);
    p->head += total;
    return PLX_OK;
}

/* Zeroes the seal word of every line of a used record and frees it. */
static inline void plx_ring__release(struct plx_ring_cons *c, uint8_t *rec, uint64_t bytes)
{
    for (uint64_t off = 0; off < bytes; off += PLX_RING_ALIGN)
        atomic_store_explicit((_Atomic uint64_t *)(rec + off), 0, memory_order_relaxed);
    c->tail += bytes;
    atomic_store_explicit(&c->ctrl->tail, c->tail, memory_order_release);
}

/* The next record, or NULL when the ring is empty. Payload follows it. */
static inline const struct plx_hdr *plx_ring_peek(struct plx_ring_cons *c)
{
    for (;;) {
        uint8_t *rec = c->data + (c->tail & (c->size - 1));
        if (atomic_load_explicit((_Atomic uint64_t *)rec, memory_order_acquire) == 0)
            return NULL;
        const struct plx_hdr *h = (const struct plx_hdr *)rec;
        if (h->type != PLX_RING_WRAP)
            return h;
        plx_ring__release(c, rec, c->size - (c->tail & (c->size - 1)));
    }
}

/* Releases the record returned by the last peek. */
static inline void plx_ring_consume(struct plx_ring_cons *c, const struct plx_hdr *h)
{
    plx_ring__release(c, (uint8_t *)h, PLX_ALIGN_UP(sizeof *h + h->len, PLX_RING_ALIGN));
}

#endif
