/*
 * Unit test of the shared-memory ring (src/transport/shm/ring.h):
 * single-process edge cases (full ring, wrap markers, maximum records),
 * payloads of 4 KiB and more placed at the sender's page offset, then a
 * producer process and a consumer process streaming 200,000 records of
 * pseudo-random sizes (from random offsets) through a small ring and a
 * larger one, checking every byte and the order.
 */
#include <sched.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
#include "test_util.h"
#include "transport/shm/ring.h"

#define RING 16384

static uint8_t pattern(uint32_t seq, size_t i)
{
    return (uint8_t)(seq * 131u + i * 7u + 3u);
}

static uint32_t rnd(uint32_t *s)
{
    *s = *s * 1103515245u + 12345u;
    return *s >> 8;
}

static void edge_cases(void *base)
{
    struct plx_ring_prod p;
    struct plx_ring_cons c;
    memset(base, 0, PLX_RING_CTRL + RING);
    plx_ring_prod_init(&p, base, RING);
    plx_ring_cons_init(&c, base, RING);
    T_CHECK(plx_ring_peek(&c) == NULL, "empty ring has a record");

    /* fill with 1000-byte records until BUSY */
    char buf[4096];
    memset(buf, 0xab, sizeof buf);
    struct plx_hdr h = { .type = PLX_PKT_EAGER, .len = 1000 };
    struct iovec iov = { buf, 1000 };
    int n = 0;
    while (plx_ring_write(&p, &h, &iov, 1) == PLX_OK) {
        h.seq++;
        n++;
    }
    /* each record takes align64(32+1000) = 1088 bytes: 15 fit in 16 KiB */
    T_CHECK(n == RING / 1088, "wrote %d records into a %d-byte ring", n, RING);
    /* 15 records leave 64 bytes at the end: the next one needs a wrap
     * marker there plus room at the start, which one consumed record gives */
    const struct plx_hdr *r = plx_ring_peek(&c);
    T_CHECK(r && r->seq == 0, "first record has seq %u", r ? r->seq : 999);
    T_CHECK(plx_ring_write(&p, &h, &iov, 1) == PLX_BUSY, "still full before consuming");
    plx_ring_consume(&c, r);
    T_CHECK(plx_ring_write(&p, &h, &iov, 1) == PLX_OK, "wrapped record fits in the freed room");
    T_CHECK(plx_ring_write(&p, &h, &iov, 1) == PLX_BUSY, "full again");
    uint32_t expect = 1;
    while ((r = plx_ring_peek(&c)) != NULL) {
        T_CHECK(r->seq == expect, "seq %u, expected %u", r->seq, expect);
        T_CHECK(r->len == 1000 && ((const uint8_t *)(r + 1))[999] == 0xab, "payload of seq %u", r->seq);
        plx_ring_consume(&c, r);
        expect++;
    }
    T_CHECK(expect == (uint32_t)n + 1, "drained up to seq %u", expect);

    /* the largest record fits; one byte more is the caller's business */
    uint64_t maxp = plx_ring_max_payload(RING);
    h.len = maxp;
    struct iovec big = { malloc(maxp), maxp };
    memset(big.iov_base, 0x5a, maxp);
    T_CHECK(plx_ring_write(&p, &h, &big, 1) == PLX_OK, "largest record");
    r = plx_ring_peek(&c);
    T_CHECK(r && r->len == maxp && ((const uint8_t *)(r + 1))[maxp - 1] == 0x5a, "largest record payload");
    plx_ring_consume(&c, r);
    free(big.iov_base);

    /* zero-length records and two-part iovecs */
    h.len = 0;
    T_CHECK(plx_ring_write(&p, &h, NULL, 0) == PLX_OK, "empty record");
    char a[3] = { 1, 2, 3 }, b[2] = { 4, 5 };
    struct iovec two[2] = { { a, 3 }, { b, 2 } };
    h.len = 5;
    T_CHECK(plx_ring_write(&p, &h, two, 2) == PLX_OK, "gathered record");
    r = plx_ring_peek(&c);
    T_CHECK(r && r->len == 0, "empty record read back");
    plx_ring_consume(&c, r);
    r = plx_ring_peek(&c);
    T_CHECK(r && r->len == 5 && !memcmp(plx_ring_payload(r), "\1\2\3\4\5", 5), "gathered record read back");
    plx_ring_consume(&c, r);
}

/* Payloads of 4 KiB and more keep the sender's data (its last iovec)
 * offset modulo `align` (4096: the page offset, 64: the line offset, 0:
 * none), across laps; smaller ones follow the header. */
static void page_offsets(void *base, uint64_t ring, uint64_t align)
{
    struct plx_ring_prod p;
    struct plx_ring_cons c;
    memset(base, 0, PLX_RING_CTRL + ring);
    plx_ring_prod_init(&p, base, ring);
    p.align = align;
    plx_ring_cons_init(&c, base, ring);
    uint8_t *src = aligned_alloc(4096, 3 * 4096 + 8192);
    uint64_t off8 = 0x1122334455667788ull;
    static const size_t offs[] = { 0, 8, 32, 100, 2048, 4000, 4095 };
    static const size_t lens[] = { 4096, 5000, 8191, 4095 };
    int bad = 0, n = 0;
    for (int round = 0; round < 40; round++) {
        size_t o = offs[round % 7], len = lens[round % 4];
        int two = round % 3 == 0;              /* an 8-byte prefix iovec, like DATA */
        for (size_t i = 0; i < len; i++)
            src[o + i] = (uint8_t)(i * 13 + (size_t)round);
        struct plx_hdr h = { .type = PLX_PKT_EAGER, .seq = (uint32_t)round, .len = len + (two ? 8 : 0) };
        struct iovec iov[2] = { { &off8, 8 }, { src + o, len } };
        T_CHECK(plx_ring_write(&p, &h, two ? iov : iov + 1, two ? 2 : 1) == PLX_OK, "record %d written", round);
        const struct plx_hdr *r = plx_ring_peek(&c);
        T_CHECK(r && r->seq == (uint32_t)round && r->len == h.len, "record %d read back", round);
        if (!r)
            break;
        const uint8_t *d = (const uint8_t *)plx_ring_payload(r) + (two ? 8 : 0);
        if (two && memcmp(plx_ring_payload(r), &off8, 8) != 0)
            bad++;
        for (size_t i = 0; i < len; i++)
            if (d[i] != (uint8_t)(i * 13 + (size_t)round)) {
                bad++;
                break;
            }
        if (align && len >= PLX_RING_PAD_MIN - (two ? 8 : 0) && ((uintptr_t)d & (align - 1)) != (o & (align - 1)))
            T_CHECK(0, "record %d of %zu bytes at offset %zu modulo %zu, sender's %zu", round, len,
                    (size_t)((uintptr_t)d & (align - 1)), (size_t)align, o & (align - 1));
        if (!align)
            T_CHECK(plx_ring_payload(r) == (const void *)(r + 1), "record %d is not padded", round);
        if (len < 4000 && !two)
            T_CHECK(plx_ring_payload(r) == (const void *)(r + 1), "small record %d is not padded", round);
        plx_ring_consume(&c, r);
        n++;
    }
    T_CHECK(bad == 0 && n == 40, "%d of %d padded records corrupted", bad, n);
    T_CHECK(plx_ring_peek(&c) == NULL, "ring empty after the padded records");
    free(src);
}

static void stress(void *base, uint64_t ring, uint64_t align)
{
    const uint32_t count = 200000;
    memset(base, 0, PLX_RING_CTRL + ring);
    pid_t pid = fork();
    if (pid == 0) {
        struct plx_ring_prod p;
        plx_ring_prod_init(&p, base, ring);
        p.align = align;
        uint8_t *buf = malloc(ring + 4096);
        uint32_t s = 1;
        for (uint32_t seq = 0; seq < count; seq++) {
            size_t len = rnd(&s) % 3 == 0 ? rnd(&s) % plx_ring_max_payload(ring) : rnd(&s) % 200;
            size_t at = rnd(&s) % 4096;
            for (size_t i = 0; i < len; i++)
                buf[at + i] = pattern(seq, i);
            struct plx_hdr h = { .type = PLX_PKT_EAGER, .seq = seq, .len = len };
            struct iovec iov = { buf + at, len };
            while (plx_ring_write(&p, &h, &iov, 1) == PLX_BUSY)
                sched_yield();  /* the machine may have fewer cores than spinners */
        }
        _exit(0);
    }
    struct plx_ring_cons c;
    plx_ring_cons_init(&c, base, ring);
    uint32_t got = 0, bad = 0;
    while (got < count) {
        const struct plx_hdr *h = plx_ring_peek(&c);
        if (!h) {
            sched_yield();
            continue;
        }
        if (h->seq != got)
            bad++;
        const uint8_t *d = plx_ring_payload(h);
        for (size_t i = 0; i < h->len; i++)
            if (d[i] != pattern(h->seq, i)) {
                bad++;
                break;
            }
        plx_ring_consume(&c, h);
        got++;
    }
    int status;
    waitpid(pid, &status, 0);
    T_CHECK(bad == 0, "%u of %u records out of order or corrupted", bad, count);
    T_CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "producer status %d", status);
    T_CHECK(plx_ring_peek(&c) == NULL, "ring empty at the end");
}

int main(void)
{
    const uint64_t big = 4 * RING;
    void *base = mmap(NULL, PLX_RING_CTRL + big, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    edge_cases(base);
    page_offsets(base, big, 4096);
    page_offsets(base, big, 64);
    page_offsets(base, big, 0);
    stress(base, RING, 0);
    stress(base, big, 0);
    stress(base, big, 64);
    stress(base, big, 4096);
    munmap(base, PLX_RING_CTRL + big);
    T_DONE("ring");
}
