/*
 * Unit test of the shared-memory ring (src/transport/shm/ring.h):
 * single-process edge cases (full ring, wrap markers, maximum records), then
 * a producer process and a consumer process streaming 200,000 records of
 * pseudo-random sizes through a small ring, checking every byte and the
 * order.
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
    T_CHECK(r && r->len == 5 && !memcmp(r + 1, "\1\2\3\4\5", 5), "gathered record read back");
    plx_ring_consume(&c, r);
}

static void stress(void *base)
{
    const uint32_t count = 200000;
    memset(base, 0, PLX_RING_CTRL + RING);
    pid_t pid = fork();
    if (pid == 0) {
        struct plx_ring_prod p;
        plx_ring_prod_init(&p, base, RING);
        uint8_t *buf = malloc(RING);
        uint32_t s = 1;
        for (uint32_t seq = 0; seq < count; seq++) {
            size_t len = rnd(&s) % 3 == 0 ? rnd(&s) % plx_ring_max_payload(RING) : rnd(&s) % 200;
            for (size_t i = 0; i < len; i++)
                buf[i] = pattern(seq, i);
            struct plx_hdr h = { .type = PLX_PKT_EAGER, .seq = seq, .len = len };
            struct iovec iov = { buf, len };
            while (plx_ring_write(&p, &h, &iov, 1) == PLX_BUSY)
                sched_yield();  /* the machine may have fewer cores than spinners */
        }
        _exit(0);
    }
    struct plx_ring_cons c;
    plx_ring_cons_init(&c, base, RING);
    uint32_t got = 0, bad = 0;
    while (got < count) {
        const struct plx_hdr *h = plx_ring_peek(&c);
        if (!h) {
            sched_yield();
            continue;
        }
        if (h->seq != got)
            bad++;
        const uint8_t *d = (const uint8_t *)(h + 1);
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
    void *base = mmap(NULL, PLX_RING_CTRL + RING, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    edge_cases(base);
    stress(base);
    munmap(base, PLX_RING_CTRL + RING);
    T_DONE("ring");
}
