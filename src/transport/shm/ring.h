/*
 * A single-producer/single-consumer ring of variable-size records in shared
 * memory: [struct plx_hdr][payload] padded to 64 bytes. A record that would
 * straddle the end is preceded by a WRAP marker (type 0) and starts at 0.
 * The producer owns `head`, the consumer `tail`, each on its own cache
 * line; the data follows one page after the control block. Publishing a
 * record is one release store of head; consuming one is one release store
 * of tail. Inline because it is the shared-memory fast path.
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
#define PLX_RING_WRAP 0
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
    uint64_t head_cache;
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
    c->head_cache = c->tail;
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
        ((struct plx_hdr *)(p->data + pos))->type = PLX_RING_WRAP;
        pos = 0;
    }
    uint8_t *rec = p->data + pos;
    memcpy(rec, hdr, sizeof *hdr);
    uint8_t *d = rec + sizeof *hdr;
    for (int i = 0; i < iovcnt; i++) {
        memcpy(d, iov[i].iov_base, iov[i].iov_len);
        d += iov[i].iov_len;
    }
    p->head += total;
    atomic_store_explicit(&p->ctrl->head, p->head, memory_order_release);
    return PLX_OK;
}

/* The next record, or NULL when the ring is empty. Payload follows it. */
static inline const struct plx_hdr *plx_ring_peek(struct plx_ring_cons *c)
{
    for (;;) {
        if (c->tail == c->head_cache) {
            c->head_cache = atomic_load_explicit(&c->ctrl->head, memory_order_acquire);
            if (c->tail == c->head_cache)
                return NULL;
        }
        uint64_t pos = c->tail & (c->size - 1);
        const struct plx_hdr *h = (const struct plx_hdr *)(c->data + pos);
        if (h->type != PLX_RING_WRAP)
            return h;
        c->tail += c->size - pos;
    }
}

/* Releases the record returned by the last peek. */
static inline void plx_ring_consume(struct plx_ring_cons *c, const struct plx_hdr *h)
{
    c->tail += PLX_ALIGN_UP(sizeof *h + h->len, PLX_RING_ALIGN);
    atomic_store_explicit(&c->ctrl->tail, c->tail, memory_order_release);
}

#endif
