/*
 * A bounded multi-producer/single-consumer queue of variable-size records in
 * shared memory: every process has one, in its own segment, and any process
 * of the node may write to it. It carries first contact and light traffic;
 * busy pairs move to a per-pair ring (ring.h), so its cost is paid only by
 * the peers that talk little.
 *
 * A record is [u64 seal][struct plx_hdr][payload], padded to 64 bytes. The
 * seal is stored last with release semantics and names the sender
 * ((lpid << 32) | PLX_SHMQ_REC), or marks the rest of the lap as skipped
 * (PLX_SHMQ_WRAP). A producer reserves its bytes with a CAS on the shared
 * `head` after checking them against the consumer's `tail`, then fills and
 * seals them at leisure; the consumer takes records in reservation order, so
 * each producer's records arrive in the order it wrote them (what the
 * transport promises: ordered per pair). A producer that reserved but has not
 * sealed yet holds up the records behind it for those few stores.
 *
 * Empty slots read 0: as in ring.h, the consumer zeroes the first word of
 * every 64-byte line a record spanned before it releases the bytes, so a
 * future record's seal position reads 0 until that record is sealed.
 *
 * Costs: one CAS on a line every producer of this receiver writes, against
 * the per-pair ring's plain store; the consumer's side is the ring's.
 */
#ifndef PLX_SHM_QUEUE_H
#define PLX_SHM_QUEUE_H

#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <sys/uio.h>
#include "core/plexus.h"
#include "transport/shm/ring.h"
#include "transport/transport.h"

#define PLX_SHMQ_REC 1u
#define PLX_SHMQ_WRAP 2u
#define PLX_SHMQ_SEAL 8         /* bytes before the header */

/* Shares the ring's control block (head: producers' reservations). */
struct plx_shmq {
    struct plx_ring_ctrl *ctrl;
    uint8_t *data;
    uint64_t size;              /* power of two */
    uint64_t tail;              /* consumer only */
};

/* base points at PLX_RING_CTRL + size bytes of zeroed shared memory. */
static inline void plx_shmq_init(struct plx_shmq *q, void *base, uint64_t size)
{
    q->ctrl = base;
    q->data = (uint8_t *)base + PLX_RING_CTRL;
    q->size = size;
    q->tail = atomic_load_explicit(&q->ctrl->tail, memory_order_relaxed);
}

/* Largest payload one record may carry: a record of at most half the queue
 * always fits once the queue is empty, wherever the lap ends. */
static inline uint64_t plx_shmq_max_payload(uint64_t size)
{
    return size / 4 - sizeof(struct plx_hdr) - PLX_SHMQ_SEAL;
}

/* Writes one record from process `from`; PLX_BUSY when there is no room. */
static inline plx_status_t plx_shmq_write(struct plx_shmq *q, int from, const struct plx_hdr *hdr,
                                          const struct iovec *iov, int iovcnt)
{
    uint64_t need = PLX_ALIGN_UP(PLX_SHMQ_SEAL + sizeof *hdr + hdr->len, PLX_RING_ALIGN);
    uint64_t h = atomic_load_explicit(&q->ctrl->head, memory_order_relaxed);
    uint64_t pos, total;
    for (;;) {
        pos = h & (q->size - 1);
        uint64_t contig = q->size - pos;
        total = need <= contig ? need : contig + need;
        uint64_t t = atomic_load_explicit(&q->ctrl->tail, memory_order_acquire);
        if (h + total - t > q->size)
            return PLX_BUSY;
        if (atomic_compare_exchange_weak_explicit(&q->ctrl->head, &h, h + total, memory_order_acquire,
                                                  memory_order_relaxed))
            break;
    }
    if (total > need) {         /* the rest of the lap is skipped; the record starts at 0 */
        atomic_store_explicit((_Atomic uint64_t *)(q->data + pos), (uint64_t)PLX_SHMQ_WRAP, memory_order_release);
        pos = 0;
    }
    uint8_t *rec = q->data + pos;
    memcpy(rec + PLX_SHMQ_SEAL, hdr, sizeof *hdr);
    uint8_t *d = rec + PLX_SHMQ_SEAL + sizeof *hdr;
    for (int i = 0; i < iovcnt; i++) {
        memcpy(d, iov[i].iov_base, iov[i].iov_len);
        d += iov[i].iov_len;
    }
    atomic_store_explicit((_Atomic uint64_t *)rec, ((uint64_t)(uint32_t)from << 32) | PLX_SHMQ_REC,
                          memory_order_release);
    return PLX_OK;
}

static inline void plx_shmq__release(struct plx_shmq *q, uint8_t *rec, uint64_t bytes)
{
    for (uint64_t off = 0; off < bytes; off += PLX_RING_ALIGN)
        atomic_store_explicit((_Atomic uint64_t *)(rec + off), 0, memory_order_relaxed);
    q->tail += bytes;
    atomic_store_explicit(&q->ctrl->tail, q->tail, memory_order_release);
}

/* The next record and its sender, or NULL when the queue is empty. The
 * payload follows the header. */
static inline const struct plx_hdr *plx_shmq_peek(struct plx_shmq *q, int *from_p)
{
    for (;;) {
        uint8_t *rec = q->data + (q->tail & (q->size - 1));
        uint64_t seal = atomic_load_explicit((_Atomic uint64_t *)rec, memory_order_acquire);
        if (seal == 0)
            return NULL;
        if ((uint32_t)seal == PLX_SHMQ_REC) {
            *from_p = (int)(seal >> 32);
            return (const struct plx_hdr *)(rec + PLX_SHMQ_SEAL);
        }
        plx_shmq__release(q, rec, q->size - (q->tail & (q->size - 1)));
    }
}

/* Releases the record returned by the last peek. */
static inline void plx_shmq_consume(struct plx_shmq *q, const struct plx_hdr *h)
{
    uint8_t *rec = (uint8_t *)h - PLX_SHMQ_SEAL;
    plx_shmq__release(q, rec, PLX_ALIGN_UP(PLX_SHMQ_SEAL + sizeof *h + h->len, PLX_RING_ALIGN));
}

#endif
