/*
 * The channel layer's five remote-memory operations (route.h: register,
 * put, get, atomic, flush) between the processes of a real job, run by
 * mpiexec: native over the libfabric transport when it is open
 * (--expect=native: the router must pick an instance with native remote
 * memory, fi_write/fi_read/fi_fetch_atomic/fi_compare_atomic), else the
 * active-message fallback (--expect=am). MPI carries the keys and
 * addresses and the barriers between the phases; the operations are the
 * router's. Checked, at 2+ ranks: a 1 MiB put (in 64 KiB pieces) into the next rank's region
 * (the target sees it after the origin's flush and a barrier), a get of it
 * back, fetch-and-add from every rank to one word (the sum, and distinct
 * old values), compare-and-swap (exactly one winner), swap (old values and
 * the last one are a permutation), a put to oneself (through the
 * fallback), and (fallback, or native with --outside: offset-addressed
 * providers, where the origin knows the region) a put past the end and a
 * get before the start of a region refused, nothing read.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <mpi.h>
#include "progress/progress.h"
#include "route/route.h"

static int rank, size, checks;
#define PHASE(name)                                                                                             \
    do {                                                                                                        \
        if (getenv("RMA_CHANNEL_VERBOSE"))                                                                      \
            fprintf(stderr, "rank %d: %s\n", rank, name);                                                      \
    } while (0)

#define CHECK(cond, ...)                                                                                        \
    do {                                                                                                        \
        if (!(cond)) {                                                                                          \
            fprintf(stderr, "rank %d: FAIL %s:%d: ", rank, __FILE__, __LINE__);                                 \
            fprintf(stderr, __VA_ARGS__);                                                                       \
            fprintf(stderr, "\n");                                                                              \
            MPI_Abort(MPI_COMM_WORLD, 1);                                                                       \
        }                                                                                                       \
        checks++;                                                                                               \
    } while (0)

struct waiter {
    struct plx_tp_comp c;
    int done;
};

static void on_done(struct plx_tp_comp *c)
{
    ((struct waiter *)c)->done = 1;
}

static void w_init(struct waiter *w)
{
    memset(w, 0, sizeof *w);
    w->c.cb = on_done;
}

static int w_done(void *arg)
{
    return ((struct waiter *)arg)->done;
}

/* Waits for the operations counted on w (none issued: done at once). */
static plx_status_t w_wait(struct waiter *w, plx_status_t issued)
{
    if (issued != PLX_OK)
        return issued;
    if (w->c.count == 0)
        return PLX_OK;
    plx_progress_wait(w_done, w);
    return w->c.status;
}

#define REGION (1 << 20)
#define PIECE (64 << 10)        /* the fallback's fragment: a BUSY piece issued nothing */

int main(int argc, char **argv)
{
    const char *expect = "any";
    int outside = 0;            /* check the refusal of an access outside the region natively too */
    for (int i = 1; i < argc; i++)
        if (!strncmp(argv[i], "--expect=", 9))
            expect = argv[i] + 9;
        else if (!strcmp(argv[i], "--outside"))
            outside = 1;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;

    char *region = aligned_alloc(4096, REGION);
    uint64_t *words = aligned_alloc(64, 64 * sizeof(uint64_t));
    memset(region, 0, REGION);
    memset(words, 0, 64 * sizeof(uint64_t));
    struct plx_tp_mr mr_region, mr_words;
    CHECK(plx_route_mem_register(region, REGION, &mr_region) == PLX_OK, "registering the region");
    CHECK(plx_route_mem_register(words, 64 * sizeof(uint64_t), &mr_words) == PLX_OK, "registering the words");
    uint64_t mine[4] = { (uint64_t)(uintptr_t)region, mr_region.key, (uint64_t)(uintptr_t)words, mr_words.key };
    uint64_t *all = malloc((size_t)size * sizeof mine);
    MPI_Allgather(mine, 4, MPI_UINT64_T, all, 4, MPI_UINT64_T, MPI_COMM_WORLD);

    struct plx_route_peer *rp_next = plx_route_peer(next), *rp0 = plx_route_peer(0);
    struct plx_tp_iface *nat = plx_route_rma_native(rp_next, REGION, 0);
    struct plx_tp_iface *nat_at = plx_route_rma_native(rp0, 8, 1);
    if (!strcmp(expect, "native")) {
        CHECK(nat && !strcmp(nat->comp->name, "ofi"), "native remote memory to rank %d (got %s)", next,
              nat ? nat->name : "none");
        /* oneself goes through the fallback's self-delivery */
        CHECK(rank == 0 ? !nat_at : nat_at && !strcmp(nat_at->comp->name, "ofi"), "native atomics to rank 0 "
              "from rank %d (got %s)", rank, nat_at ? nat_at->name : "none");
    } else if (!strcmp(expect, "am")) {
        CHECK(!nat && !nat_at, "no native remote memory expected (got %s)", nat ? nat->name : nat_at->name);
    }

    /* put 1 MiB into the next rank's region; flush; the target checks */
    char *src = malloc(REGION), *back = malloc(REGION);
    for (size_t i = 0; i < REGION; i++)
        src[i] = (char)(i * 7 + (size_t)rank * 13 + 1);
    struct waiter w;
    w_init(&w);
    plx_status_t st = PLX_OK;
    for (size_t off = 0; off < REGION && st == PLX_OK; off += PIECE) {
        while ((st = plx_route_put(rp_next, src + off, PIECE, all[4 * next] + off, all[4 * next + 1], &w.c)) ==
               PLX_BUSY)
            plx_progress_poll();        /* no room: nothing was issued; again */
    }
    st = w_wait(&w, st);
    CHECK(st == PLX_OK, "put of 1 MiB to rank %d in %d pieces: status %d", next, REGION / PIECE, (int)st);
    w_init(&w);
    CHECK(w_wait(&w, plx_route_flush(rp_next, &w.c)) == PLX_OK, "flush to rank %d", next);
    MPI_Barrier(MPI_COMM_WORLD);
    size_t bad = REGION;
    for (size_t i = 0; i < REGION && bad == REGION; i++)
        if (region[i] != (char)(i * 7 + (size_t)prev * 13 + 1))
            bad = i;
    CHECK(bad == REGION, "rank %d's put: byte %zu differs", prev, bad);

    PHASE("get");
    /* get it back from the next rank */
    w_init(&w);
    for (size_t off = 0; off < REGION && st == PLX_OK; off += PIECE) {
        while ((st = plx_route_get(rp_next, back + off, PIECE, all[4 * next] + off, all[4 * next + 1], &w.c)) ==
               PLX_BUSY)
            plx_progress_poll();
    }
    st = w_wait(&w, st);
    CHECK(st == PLX_OK, "get of 1 MiB from rank %d: status %d", next, (int)st);
    CHECK(memcmp(back, src, REGION) == 0, "get returns what was put");

    PHASE("self");
    /* a small put at an offset, to oneself */
    w_init(&w);
    uint64_t v = 0x1122334455667788ull + (uint64_t)rank;
    while ((st = plx_route_put(plx_route_peer(rank), &v, 8, (uint64_t)(uintptr_t)&words[8], mr_words.key,
                               &w.c)) == PLX_BUSY)
        plx_progress_poll();
    st = w_wait(&w, st);
    CHECK(st == PLX_OK, "put to oneself: status %d", (int)st);
    CHECK(!memcmp(&words[8], &v, 8), "put to oneself lands");
    MPI_Barrier(MPI_COMM_WORLD);

    PHASE("atomics");
    /* fetch-and-add: every rank adds rank+1 to rank 0's word 0, 10 times */
    uint64_t olds[10];
    for (int k = 0; k < 10; k++) {
        w_init(&w);
        while ((st = plx_route_atomic(rp0, PLX_TP_AT_FADD, (uint64_t)rank + 1, 0, &olds[k], all[2], all[3],
                                      &w.c)) == PLX_BUSY)
            plx_progress_poll();
        st = w_wait(&w, st);
        CHECK(st == PLX_OK, "fetch-and-add %d: status %d", k, (int)st);
    }
    for (int k = 1; k < 10; k++)
        CHECK(olds[k] > olds[k - 1], "fetch-and-add returns increasing old values (%llu then %llu)",
              (unsigned long long)olds[k - 1], (unsigned long long)olds[k]);
    /* compare-and-swap on word 1: 0 -> rank+1, one winner */
    uint64_t cas_old = 99;
    w_init(&w);
    while ((st = plx_route_atomic(rp0, PLX_TP_AT_CSWAP, (uint64_t)rank + 1, 0, &cas_old, all[2] + 8, all[3],
                                  &w.c)) == PLX_BUSY)
        plx_progress_poll();
    st = w_wait(&w, st);
    CHECK(st == PLX_OK, "compare-and-swap: status %d", (int)st);
    /* swap on word 2 */
    uint64_t sw_old = 99;
    w_init(&w);
    while ((st = plx_route_atomic(rp0, PLX_TP_AT_SWAP, (uint64_t)rank + 1, 0, &sw_old, all[2] + 16, all[3],
                                  &w.c)) == PLX_BUSY)
        plx_progress_poll();
    st = w_wait(&w, st);
    CHECK(st == PLX_OK, "swap: status %d", (int)st);
    int won = cas_old == 0, winners = 0;
    uint64_t sw[64];
    MPI_Allreduce(&won, &winners, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Gather(&sw_old, 1, MPI_UINT64_T, sw, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
    CHECK(winners == 1, "exactly one compare-and-swap wins (got %d)", winners);
    CHECK(won || (cas_old >= 1 && cas_old <= (uint64_t)size), "a loser sees the winner's value (got %llu)",
          (unsigned long long)cas_old);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        uint64_t sum = 0;
        for (int r = 0; r < size; r++)
            sum += 10 * (uint64_t)(r + 1);
        CHECK(__atomic_load_n(&words[0], __ATOMIC_SEQ_CST) == sum, "fetch-and-add total %llu, expected %llu",
              (unsigned long long)words[0], (unsigned long long)sum);
        CHECK(words[1] >= 1 && words[1] <= (uint64_t)size, "compare-and-swap left a rank's value");
        int seen[65] = { 0 };
        sw[size < 64 ? size : 63] = words[2];
        for (int r = 0; r <= size && r < 64; r++)
            if (sw[r] <= (uint64_t)size)
                seen[sw[r]]++;
        for (int r = 0; r <= size && r < 64; r++)
            CHECK(seen[r] == 1, "swap: value %d seen %d times among the old values and the last", r, seen[r]);
    }
    MPI_Barrier(MPI_COMM_WORLD);

    PHASE("outside");
    /* outside every region: refused with an error, nothing written (the
     * fallback checks; a native access outside a region is the provider's
     * to refuse: libfabric's shm provider never completes it) */
    if (!nat || outside) {
    w_init(&w);
    uint64_t junk = 0xdeadbeefull;
    st = plx_route_put(rp_next, &junk, 8, all[4 * next] + REGION, all[4 * next + 1], &w.c);
    plx_status_t got = w_wait(&w, st);
    CHECK(got != PLX_OK, "a put past the end of rank %d's region is refused", next);
    uint64_t junk2 = 0;
    w_init(&w);
    got = w_wait(&w, plx_route_get(rp_next, &junk2, 16, all[4 * next] - 8, all[4 * next + 1], &w.c));
    CHECK(got != PLX_OK && junk2 == 0, "a get starting before rank %d's region is refused", next);
    }
    MPI_Barrier(MPI_COMM_WORLD);

    plx_route_mem_deregister(&mr_region);
    plx_route_mem_deregister(&mr_words);
    int total = 0;
    MPI_Reduce(&checks, &total, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf("rma_channel (%s): %d checks passed (np=%d)\n", nat ? nat->name : "fallback", total, size);
    free(src);
    free(back);
    free(all);
    free(region);
    free(words);
    MPI_Finalize();
    return 0;
}
