/*
 * Unit test of the shared-memory multi-producer queue
 * (src/transport/shm/queue.h): single-process edge cases (empty, full,
 * wrap, the largest record), then four producer processes streaming records
 * of pseudo-random sizes at once through a small queue to one consumer,
 * which checks every byte, the sender named in each record and each
 * sender's order.
 */
#include <sched.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
#include "test_util.h"
#include "transport/shm/queue.h"

#define QSIZE 16384
#define PRODUCERS 4
#define PER_PRODUCER 20000

static uint8_t pattern(int from, uint32_t seq, size_t i)
{
    return (uint8_t)(seq * 131u + i * 7u + (unsigned)from * 29u + 3u);
}

static uint32_t rnd(uint32_t *s)
{
    *s = *s * 1103515245u + 12345u;
    return *s >> 8;
}

static void edge_cases(void *base)
{
    struct plx_shmq q;
    memset(base, 0, PLX_RING_CTRL + QSIZE);
    plx_shmq_init(&q, base, QSIZE);
    int from = -1;
    T_CHECK(plx_shmq_peek(&q, &from) == NULL, "empty queue has a record");

    char buf[4096];
    memset(buf, 0xcd, sizeof buf);
    struct plx_hdr h = { .type = PLX_PKT_EAGER, .len = 1000 };
    struct iovec iov = { buf, 1000 };
    int n = 0;
    while (plx_shmq_write(&q, 5, &h, &iov, 1) == PLX_OK) {
        h.seq++;
        n++;
    }
    /* each record takes align64(8+32+1000) = 1088 bytes: 15 fit in 16 KiB */
    T_CHECK(n == QSIZE / 1088, "wrote %d records into a %d-byte queue", n, QSIZE);
    const struct plx_hdr *r = plx_shmq_peek(&q, &from);
    T_CHECK(r && r->seq == 0 && from == 5, "first record: seq %u from %d", r ? r->seq : 999, from);
    T_CHECK(plx_shmq_write(&q, 6, &h, &iov, 1) == PLX_BUSY, "still full before consuming");
    plx_shmq_consume(&q, r);
    T_CHECK(plx_shmq_write(&q, 6, &h, &iov, 1) == PLX_OK, "wrapped record fits in the freed room");
    uint32_t want = 1;
    while ((r = plx_shmq_peek(&q, &from)) != NULL) {
        T_CHECK(r->seq == want, "record %u where %u was due", r->seq, want);
        T_CHECK(from == (want == (uint32_t)n ? 6 : 5), "record %u from %d", want, from);
        T_CHECK(memcmp(r + 1, buf, 1000) == 0, "record %u payload", want);
        plx_shmq_consume(&q, r);
        want++;
    }
    T_CHECK(want == (uint32_t)n + 1, "took %u records", want - 1);

    /* the largest record fits wherever the lap ends */
    size_t max = plx_shmq_max_payload(QSIZE);
    char *big = malloc(max);
    memset(big, 0x5a, max);
    struct plx_hdr bh = { .type = PLX_PKT_EAGER, .len = (uint32_t)max };
    struct iovec biov = { big, max };
    for (int k = 0; k < 40; k++) {
        struct plx_hdr sh = { .type = PLX_PKT_EAGER, .len = (uint32_t)(k * 37 % 700) };
        struct iovec siov = { buf, sh.len };
        T_CHECK(plx_shmq_write(&q, 1, &sh, &siov, 1) == PLX_OK, "small record %d", k);
        T_CHECK(plx_shmq_write(&q, 2, &bh, &biov, 1) == PLX_OK, "largest record after %d", k);
        for (int j = 0; j < 2; j++) {
            r = plx_shmq_peek(&q, &from);
            T_CHECK(r && from == 1 + j && r->len == (j ? max : sh.len), "record %d.%d", k, j);
            if (r)
                plx_shmq_consume(&q, r);
        }
    }
    free(big);
}

static void produce(void *base, int from)
{
    struct plx_shmq q;
    plx_shmq_init(&q, base, QSIZE);
    uint32_t s = 77u + (uint32_t)from;
    uint8_t buf[2048];
    for (uint32_t seq = 0; seq < PER_PRODUCER; seq++) {
        size_t len = rnd(&s) % sizeof buf;
        for (size_t i = 0; i < len; i++)
            buf[i] = pattern(from, seq, i);
        struct plx_hdr h = { .type = PLX_PKT_EAGER, .seq = seq, .len = (uint32_t)len };
        struct iovec iov = { buf, len };
        while (plx_shmq_write(&q, from, &h, &iov, 1) == PLX_BUSY)
            sched_yield();
    }
    _exit(0);
}

static void stream(void *base)
{
    memset(base, 0, PLX_RING_CTRL + QSIZE);
    pid_t pids[PRODUCERS];
    for (int k = 0; k < PRODUCERS; k++) {
        pids[k] = fork();
        if (pids[k] == 0)
            produce(base, 100 + k);
    }
    struct plx_shmq q;
    plx_shmq_init(&q, base, QSIZE);
    uint32_t next[PRODUCERS] = { 0 };
    long got = 0, bad = 0;
    while (got < (long)PRODUCERS * PER_PRODUCER) {
        int from;
        const struct plx_hdr *r = plx_shmq_peek(&q, &from);
        if (!r) {
            sched_yield();
            continue;
        }
        int k = from - 100;
        if (k < 0 || k >= PRODUCERS || r->seq != next[k]) {
            if (bad++ < 5)
                T_CHECK(0, "record seq %u from %d (expected seq %u)", r->seq, from,
                        k >= 0 && k < PRODUCERS ? next[k] : 0);
        } else {
            const uint8_t *p = (const uint8_t *)(r + 1);
            for (size_t i = 0; i < r->len; i++)
                if (p[i] != pattern(from, r->seq, i)) {
                    if (bad++ < 5)
                        T_CHECK(0, "byte %zu of record %u from %d", i, r->seq, from);
                    break;
                }
            next[k]++;
        }
        plx_shmq_consume(&q, r);
        got++;
    }
    for (int k = 0; k < PRODUCERS; k++) {
        int status = 0;
        waitpid(pids[k], &status, 0);
        T_CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "producer %d exited with %d", k, status);
        T_CHECK(next[k] == PER_PRODUCER, "producer %d: %u records in order", k, next[k]);
    }
    T_CHECK(bad == 0, "%ld bad records", bad);
}

int main(void)
{
    void *base = mmap(NULL, PLX_RING_CTRL + QSIZE, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    T_CHECK(base != MAP_FAILED, "mmap");
    edge_cases(base);
    stream(base);
    T_DONE("shmq");
}
