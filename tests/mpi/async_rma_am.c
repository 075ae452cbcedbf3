/*
 * Remote-memory operations of the channel layer (src/route/rma_am.c) reach
 * a target that computes without calling MPI (run with
 * PLEXUS_ASYNC_PROGRESS=1). On a channel without native remote memory (shm
 * and TCP today) they are active messages executed by the target's progress
 * engine: here by its progress thread.
 *
 * Built against the static library: there is no MPI window API yet, so the
 * origin calls the router's put/get/atomic itself, holding the library lock
 * as every layer below the API does. Rank 1 (target) registers a region,
 * sends its address and key to rank 0, then calls no MPI and no library
 * function until it has seen, with volatile reads, the 1 MiB put (several
 * fragments) and then a last 8-byte put of a "done" word; the counter must
 * then hold what NADD fetch-and-adds and a compare-and-swap left. Rank 0
 * checks every old value the atomics return (each is answered by the
 * target), gets the region back and compares, and checks that a put past
 * the region's end is refused.
 * A wait that sees no progress for GIVE_UP seconds fails the test.
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "core/lock.h"
#include "progress/progress.h"
#include "route/route.h"

/* The target reads its region while the progress thread writes it: that is
 * the point, and ThreadSanitizer would call it a race; those reads are
 * hidden from it (the library's own accesses are still checked). */
#if defined(__has_attribute)
#if __has_attribute(no_sanitize)
#define NO_TSAN __attribute__((no_sanitize("thread")))
#endif
#endif
#ifndef NO_TSAN
#define NO_TSAN
#endif

#define REGION (1u << 20)
#define NADD 100
#define PIECE (64u << 10)     /* at most one active message (PLX_RMA_AM_FRAG) */
#define DONE_WORD 0xd0e0d0e0d0e0d0e0ull
#define GIVE_UP 30.0

struct layout {                 /* the target's registered region */
    uint64_t counter;
    uint64_t done;
    unsigned char data[REGION];
};

static int rank;

#define FAIL(...)                                                                                  \
    do {                                                                                           \
        fprintf(stderr, "rank %d: FAIL %s:%d: ", rank, __FILE__, __LINE__);                        \
        fprintf(stderr, __VA_ARGS__);                                                              \
        fprintf(stderr, "\n");                                                                     \
        MPI_Abort(MPI_COMM_WORLD, 1);                                                              \
    } while (0)

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static unsigned char pat(size_t i)
{
    return (unsigned char)(i * 131u + (i >> 9) + 7u);
}

struct done_flag {
    struct plx_tp_comp comp;
    int done;
};

static void on_done(struct plx_tp_comp *c)
{
    ((struct done_flag *)c)->done = 1;
}

static int is_done(void *arg)
{
    return ((struct done_flag *)arg)->done;
}

/* Each operation (or fragment) issued adds one to the count, and each
 * answer takes one off. The count starts at one, held while operations are
 * being issued, so that answers polled in between (while a refused piece
 * waits for room) cannot complete it early; finish() lets go of it. */
static void comp_init(struct done_flag *d)
{
    d->comp.cb = on_done;
    d->comp.count = 1;
    d->comp.status = PLX_OK;
    d->done = 0;
}

/* Under the lock: waits for what was issued on d and checks its status. */
static void finish(struct done_flag *d, plx_status_t st, const char *what)
{
    if (st != PLX_OK)
        FAIL("%s: issuing it failed (status %d)", what, st);
    plx_tp_comp_done(&d->comp, PLX_OK);
    plx_progress_wait(is_done, d);
    if (d->comp.status != PLX_OK)
        FAIL("%s: completed with status %d", what, d->comp.status);
}

/* The target's wait, without MPI: until *w == want. */
NO_TSAN static void wait_word(volatile uint64_t *w, uint64_t want, const char *what)
{
    double start = now_s();
    unsigned spins = 0;
    while (*w != want)
        if ((++spins & 0xffff) == 0 && now_s() - start > GIVE_UP)
            FAIL("%s: got 0x%llx, expected 0x%llx after %.0f s out of MPI", what, (unsigned long long)*w,
                 (unsigned long long)want, GIVE_UP);
}

/* No MPI and no library call: the put's data, then the done word, then
 * what the atomics left in the counter. */
NO_TSAN static void watch(struct layout *L)
{
    volatile unsigned char *d = L->data;
    double start = now_s();
    for (size_t i = 0; i < REGION; i++)
        while (d[i] != pat(i))
            if (now_s() - start > GIVE_UP)
                FAIL("put: byte %zu is 0x%02x, expected 0x%02x after %.0f s out of MPI", i, d[i], pat(i), GIVE_UP);
    wait_word(&L->done, DONE_WORD, "done word");
    if (*(volatile uint64_t *)&L->counter != 0x77)
        FAIL("counter after %d fetch-and-adds and a compare-and-swap: 0x%llx, expected 0x77", NADD,
             (unsigned long long)L->counter);
}

static void target(void)
{
    struct layout *L = calloc(1, sizeof *L);
    if (!L)
        FAIL("calloc");
    struct plx_tp_mr mr;
    plx_lock_acquire();
    plx_status_t st = plx_route_mem_register(L, sizeof *L, &mr);
    plx_lock_release();
    if (st != PLX_OK)
        FAIL("registering %zu bytes: status %d", sizeof *L, st);
    uint64_t card[2] = { (uint64_t)(uintptr_t)L, mr.key };
    MPI_Send(card, 2, MPI_UINT64_T, 0, 1, MPI_COMM_WORLD);

    watch(L);

    MPI_Barrier(MPI_COMM_WORLD);
    plx_lock_acquire();
    plx_route_mem_deregister(&mr);
    plx_lock_release();
    free(L);
    printf("rank 1: the put, %d atomics and the done word arrived while this rank stayed out of MPI\n", NADD + 2);
}

static void origin(void)
{
    uint64_t card[2];
    MPI_Recv(card, 2, MPI_UINT64_T, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    uint64_t base = card[0], key = card[1];
    uint64_t a_counter = base + offsetof(struct layout, counter);
    uint64_t a_done = base + offsetof(struct layout, done);
    uint64_t a_data = base + offsetof(struct layout, data);
    unsigned char *src = malloc(REGION), *back = malloc(REGION);
    if (!src || !back)
        FAIL("malloc");
    for (size_t i = 0; i < REGION; i++)
        src[i] = pat(i);
    struct done_flag f;

    plx_lock_acquire();
    struct plx_route_peer *rp = plx_route_peer(1);
    comp_init(&f);
    /* A channel refuses what does not fit (PLX_BUSY) and the caller tries
     * again after a poll; issued piece by piece so that a refusal names
     * exactly what was not sent. */
    plx_status_t st = PLX_OK;
    for (size_t off = 0; off < REGION && st == PLX_OK; off += PIECE) {
        while ((st = plx_route_put(rp, src + off, PIECE, a_data + off, key, &f.comp)) == PLX_BUSY)
            plx_progress_poll();
    }
    finish(&f, st, "put");

    for (int i = 0; i < NADD; i++) {
        uint64_t old = ~0ull;
        comp_init(&f);
        st = plx_route_atomic(rp, PLX_TP_AT_FADD, 5, 0, &old, a_counter, key, &f.comp);
        finish(&f, st, "fetch-and-add");
        if (old != 5u * (uint64_t)i)
            FAIL("fetch-and-add %d returned %llu, expected %llu", i, (unsigned long long)old,
                 (unsigned long long)(5u * (uint64_t)i));
    }
    memset(back, 0, REGION);
    comp_init(&f);
    for (size_t off = 0; off < REGION && st == PLX_OK; off += PIECE) {
        while ((st = plx_route_get(rp, back + off, PIECE, a_data + off, key, &f.comp)) == PLX_BUSY)
            plx_progress_poll();
    }
    finish(&f, st, "get");
    for (size_t i = 0; i < REGION; i++)
        if (back[i] != pat(i))
            FAIL("get: byte %zu is 0x%02x, expected 0x%02x", i, back[i], pat(i));

    /* a key outside the region: refused, nothing written */
    comp_init(&f);
    while ((st = plx_route_put(rp, src, 64, a_data + REGION - 8, key, &f.comp)) == PLX_BUSY)
        plx_progress_poll();
    if (st == PLX_OK) {
        plx_tp_comp_done(&f.comp, PLX_OK);
        plx_progress_wait(is_done, &f);
        if (f.comp.status == PLX_OK)
            FAIL("a put 56 bytes past the end of the region succeeded");
    }
    /* compare-and-swap: 5 * NADD -> 0x77 succeeds, a second one fails */
    uint64_t expect_old[2] = { 5u * NADD, 0x77 };
    for (int k = 0; k < 2; k++) {
        uint64_t old = 0;
        comp_init(&f);
        st = plx_route_atomic(rp, PLX_TP_AT_CSWAP, k == 0 ? 0x77 : 0x99, 5u * NADD, &old, a_counter, key, &f.comp);
        finish(&f, st, "compare-and-swap");
        if (old != expect_old[k])
            FAIL("compare-and-swap %d returned 0x%llx, expected 0x%llx", k, (unsigned long long)old,
                 (unsigned long long)expect_old[k]);
    }
    /* last: the done word */
    uint64_t dw = DONE_WORD;
    comp_init(&f);
    st = plx_route_put(rp, &dw, sizeof dw, a_done, key, &f.comp);
    finish(&f, st, "put of the done word");
    plx_lock_release();
    MPI_Barrier(MPI_COMM_WORLD);
    printf("rank 0: put, get, %d fetch-and-adds, 2 compare-and-swaps answered by a target out of MPI\n", NADD);
    free(src);
    free(back);
}

int main(int argc, char **argv)
{
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_SINGLE, &provided);
    int size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 2)
        FAIL("runs with 2 ranks (has %d)", size);
    if (rank == 1)
        target();
    else
        origin();
    MPI_Finalize();
    return 0;
}
