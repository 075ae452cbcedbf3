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
 *
 * Alignment. A payload of 4 KiB or more is placed at the sender's data
 * offset modulo `align` (a pad after the header, its length in the pad's
 * first word, flag PLX_RING_F_PAD), so the sender's copy in and, when the
 * receive buffer is aligned like the send buffer, the receiver's copy out
 * move between equally aligned addresses. memcpy between addresses that
 * differ by a small amount modulo 4096 runs 25-35x slower on AMD EPYC
 * (reported under KVM): there the page offset is kept (align 4096). On the
 * Intel machines here memcpy loses only 1.3-1.5x to a skew that is not a
 * multiple of 64, and a pad costs more than it saves: 4 KiB ping-pong
 * 1.26-1.33 us unpadded, 1.35-1.43 with line (64) alignment, 1.46-1.54 with
 * page alignment. There records are not padded (align 0). See
 * PLEXUS_SHM_ALIGN. Readers use plx_ring_payload().
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
#define PLX_RING_F_PAD PLX_PKT_F_TRANSPORT
#define PLX_RING_PAD_MIN 4096   /* payloads this large keep the sender's page offset */

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
    uint64_t align;             /* payload alignment kept for large records: 64, 4096 or 0 (none) */
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
    p->align = 0;
}

static inline void plx_ring_cons_init(struct plx_ring_cons *c, void *base, uint64_t size)
{
    c->ctrl = base;
    c->data = (uint8_t *)base + PLX_RING_CTRL;
    c->size = size;
    c->tail = atomic_load_explicit(&c->ctrl->tail, memory_order_relaxed);
}

static inline void plx_ring_seal(void *rec, const struct plx_hdr *hdr, uint8_t extra_flags)
{
    struct plx_hdr first;
    memcpy(&first, hdr, 8);
    first.flags |= extra_flags;
    uint64_t seal;
    memcpy(&seal, &first, sizeof seal);
    atomic_store_explicit((_Atomic uint64_t *)rec, seal, memory_order_release);
}

/* Pad after the header of a record at rec so that the last iovec's bytes
 * land at their own page offset; 0 for small payloads. At least 8 bytes
 * when not 0 (the pad's length is stored in it). */
static inline uint64_t plx_ring__pad(const struct plx_ring_prod *p, const uint8_t *rec, const struct plx_hdr *hdr,
                                     const struct iovec *iov, int iovcnt)
{
    if (hdr->len < PLX_RING_PAD_MIN || iovcnt < 1 || !p->align)
        return 0;
    const struct iovec *last = &iov[iovcnt - 1];
    uint64_t mask = p->align - 1;
    uintptr_t at = ((uintptr_t)rec + sizeof *hdr + (hdr->len - last->iov_len)) & mask;
    uint64_t pad = ((uintptr_t)last->iov_base - at) & mask;
    return pad < 8 ? pad + p->align : pad;
}

/* The payload of a record returned by plx_ring_peek. */
static inline const void *plx_ring_payload(const struct plx_hdr *h)
{
    const uint8_t *p = (const uint8_t *)(h + 1);
    if (h->flags & PLX_RING_F_PAD) {
        uint32_t pad;
        memcpy(&pad, p, sizeof pad);
        p += pad;
    }
    return p;
}

static inline uint64_t plx_ring__record_bytes(const struct plx_hdr *h)
{
    uint64_t span = (uint64_t)((const uint8_t *)plx_ring_payload(h) - (const uint8_t *)h) + h->len;
    return PLX_ALIGN_UP(span, PLX_RING_ALIGN);
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
    uint64_t pos = p->head & (p->size - 1);
    uint64_t pad = plx_ring__pad(p, p->data + pos, hdr, iov, iovcnt);
    uint64_t need = PLX_ALIGN_UP(sizeof *hdr + pad + hdr->len, PLX_RING_ALIGN);
    uint64_t contig = p->size - pos;
    uint64_t total = need;
    if (need > contig) {        /* starts the next lap, at offset 0 */
        pad = plx_ring__pad(p, p->data, hdr, iov, iovcnt);
        need = PLX_ALIGN_UP(sizeof *hdr + pad + hdr->len, PLX_RING_ALIGN);
        total = contig + need;
    }
    if (p->head + total - p->tail_cache > p->size) {
        p->tail_cache = atomic_load_explicit(&p->ctrl->tail, memory_order_acquire);
        if (p->head + total - p->tail_cache > p->size)
            return PLX_BUSY;
    }
    if (total > need) {
        struct plx_hdr wrap = { .type = PLX_RING_WRAP };     /* the rest of the lap is skipped */
        plx_ring_seal(p->data + pos, &wrap, 0);
        pos = 0;
    }
    uint8_t *rec = p->data + pos;
    memcpy(rec + 8, (const char *)hdr + 8, sizeof *hdr - 8);
    uint8_t *d = rec + sizeof *hdr;
    if (pad) {
        uint32_t pad32 = (uint32_t)pad;
        memcpy(d, &pad32, sizeof pad32);
        d += pad;
    }
    for (int i = 0; i < iovcnt; i++) {
        memcpy(d, iov[i].iov_base, iov[i].iov_len);
        d += iov[i].iov_len;
    }
    plx_ring_seal(rec, hdr, pad ? PLX_RING_F_PAD : 0);
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
    plx_ring__release(c, (uint8_t *)h, plx_ring__record_bytes(h));
}

#endif
