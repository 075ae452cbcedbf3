/*
 * One-sided atomics and passive-target locks under contention:
 *  - every rank hammers one counter at rank 0 with MPI_Fetch_and_op (SUM)
 *    and one with MPI_Compare_and_swap loops (increment by CAS retry), in
 *    lock_all epochs with flush: the counters end at exactly
 *    size * ITERS, and the fetched values of the Fetch_and_op are all
 *    distinct (each increment seen once);
 *  - exclusive locks are served first in, first out: ranks 1..size-1 each
 *    take rank 0's lock ROUNDS times and, holding it, append their rank to a
 *    log in rank 0's window; no origin waits more than size-1 turns of the
 *    others between two of its own turns once everyone is queued (a bound
 *    in turns, not in time), and every turn is there;
 *  - shared locks are held together: a shared holder sees the others'
 *    increments of a "holders" counter while it holds the lock.
 */
#include "plx_test.h"

/* the (ignored) origin of MPI_NO_OP: some libraries read it anyway */
static long long noop_origin;

#define ITERS 200
#define ROUNDS 30

int main(int argc, char **argv)
{
    plx_test_init(&argc, &argv, "rma_atomic");
    int rank = plx_test_state()->rank, size = plx_test_state()->size;
    const char *flav = getenv("RMA_FLAVOR");
    int fifo = 0;
    for (int i = 1; i < argc; i++)
        fifo |= !strcmp(argv[i], "--fifo");    /* "create" to test the message path of MPI_Win_create */
    long long *mem;
    MPI_Aint wsize = (MPI_Aint)(4 + (size_t)size * ROUNDS) * sizeof(long long);
    MPI_Win win;
    if (flav && !strcmp(flav, "create")) {
        MPI_Alloc_mem(wsize, MPI_INFO_NULL, &mem);
        PLX_CHECK_MPI(MPI_Win_create(mem, wsize, sizeof(long long), MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    } else {
        PLX_CHECK_MPI(MPI_Win_allocate(wsize, sizeof(long long), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
    }
    /* [0] fetch_and_op counter, [1] CAS counter, [2] log length, [3] shared holders, [4..] the log */
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, win);
    memset(mem, 0, (size_t)wsize);
    MPI_Win_unlock(rank, win);
    MPI_Barrier(MPI_COMM_WORLD);

    /* ---- hammering ---- */
    long long *fetched = plx_malloc(ITERS * sizeof(long long));
    long long one = 1;
    int cas_retries = 0;
    PLX_CHECK_MPI(MPI_Win_lock_all(0, win));
    for (int i = 0; i < ITERS; i++) {
        PLX_CHECK_MPI(MPI_Fetch_and_op(&one, &fetched[i], MPI_LONG_LONG, 0, 0, MPI_SUM, win));
        PLX_CHECK_MPI(MPI_Win_flush(0, win));
        long long cur = 0, seen;
        for (;;) {
            long long next = cur + 1;
            PLX_CHECK_MPI(MPI_Compare_and_swap(&next, &cur, &seen, MPI_LONG_LONG, 0, 1, win));
            PLX_CHECK_MPI(MPI_Win_flush(0, win));
            if (seen == cur)
                break;
            cur = seen;
            cas_retries++;
        }
    }
    PLX_CHECK_MPI(MPI_Win_unlock_all(win));
    MPI_Barrier(MPI_COMM_WORLD);
    long long *all = NULL;
    if (rank == 0)
        all = plx_malloc((size_t)size * ITERS * sizeof(long long));
    MPI_Gather(fetched, ITERS, MPI_LONG_LONG, all, ITERS, MPI_LONG_LONG, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
        long long f = mem[0], c = mem[1];
        MPI_Win_unlock(0, win);
        PLX_CHECK_EQ(f, (long long)size * ITERS, "fetch_and_op counter");
        PLX_CHECK_EQ(c, (long long)size * ITERS, "compare_and_swap counter");
        char *seen = calloc((size_t)size * ITERS, 1);
        long long dup = 0;
        for (long long i = 0; i < (long long)size * ITERS; i++) {
            long long v = all[i];
            if (v < 0 || v >= (long long)size * ITERS || seen[v])
                dup++;
            else
                seen[v] = 1;
        }
        PLX_CHECK_EQ(dup, 0, "fetch_and_op values fetched twice or out of range");
        free(seen);
        free(all);
    }
    free(fetched);
    MPI_Barrier(MPI_COMM_WORLD);

    /* ---- exclusive locks in FIFO order ---- */
    if (rank != 0) {
        for (int r = 0; r < ROUNDS; r++) {
            PLX_CHECK_MPI(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win));
            long long n = -1, me = rank;
            PLX_CHECK_MPI(MPI_Get(&n, 1, MPI_LONG_LONG, 0, 2, 1, MPI_LONG_LONG, win));
            PLX_CHECK_MPI(MPI_Win_flush(0, win));
            PLX_CHECK_MPI(MPI_Put(&me, 1, MPI_LONG_LONG, 0, 4 + n, 1, MPI_LONG_LONG, win));
            n++;
            PLX_CHECK_MPI(MPI_Put(&n, 1, MPI_LONG_LONG, 0, 2, 1, MPI_LONG_LONG, win));
            /* hold it a while, so that the others are queued behind (8 ranks share 2 cores here) */
            struct timespec ts = { 0, 300 * 1000 };
            nanosleep(&ts, NULL);
            PLX_CHECK_MPI(MPI_Win_unlock(0, win));
        }
    } else {
        /* the target computes without taking part (it makes progress only in the barrier below
         * on the message path; on shared memory it is not needed at all) */
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0 && size > 1) {
        MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
        long long n = mem[2];
        PLX_CHECK_EQ(n, (long long)(size - 1) * ROUNDS, "exclusive turns logged");
        int *count = calloc((size_t)size, sizeof(int));
        long long *last = malloc((size_t)size * sizeof(long long));
        for (int r = 0; r < size; r++)
            last[r] = -1;
        long long worst = 0, gaps = 0, over = 0;
        const long long bound = 4 * (size - 2);
        /* the bound holds once every origin is queued: from each origin's first turn to its last but one */
        for (long long i = 0; i < n; i++) {
            int r = (int)mem[4 + i];
            if (r < 1 || r >= size) {
                PLX_CHECK(0, "log entry %lld names rank %d", i, r);
                break;
            }
            count[r]++;
            if (last[r] >= 0 && count[r] < ROUNDS) {
                long long others = i - last[r] - 1;
                if (others > worst)
                    worst = others;
                gaps++;
                over += others > bound;
            }
            last[r] = i;
        }
        for (int r = 1; r < size; r++)
            PLX_CHECK_EQ(count[r], ROUNDS, "turns of one origin");
        char what[160];
        /* FIFO: an origin that asks again at once waits behind at most the size-2 others already queued.
         * The bound allows each of them three more turns, for an origin the scheduler kept off its CPU
         * between its unlock and its next lock (seen: 6 at np 4 with the whole suite running on 2 cores);
         * a lock that lets one origin in again and again, or serves the latest request first, fails it. */
        /* Only an origin's own delay between its unlock and its next lock can stretch a gap past the
         * bound, and it does so now and then when the machine is loaded (seen at 8 ranks in CI): a
         * lock that is not FIFO (one origin let in again and again, the latest request served
         * first) stretches most gaps. So at most 1 gap in 20 may pass the bound. */
        snprintf(what, sizeof what, "gaps of more than %lld turns of others between two turns of one origin",
                 bound);
        if (fifo)       /* a Plexus guarantee (ARGS --fifo); other libraries need not keep it */
            PLX_CHECK(over * 20 <= gaps, "%s: %lld of %lld (the longest %lld)", what, over, gaps, worst);
        printf("rma_atomic: at most %lld turns of others between two turns of one origin (%d origins)\n", worst,
               size - 1);
        MPI_Win_unlock(0, win);
        free(count);
        free(last);
    }
    MPI_Barrier(MPI_COMM_WORLD);

    /* ---- shared locks are shared ---- */
    if (size > 1) {
        PLX_CHECK_MPI(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
        PLX_CHECK_MPI(MPI_Accumulate(&one, 1, MPI_LONG_LONG, 0, 3, 1, MPI_LONG_LONG, MPI_SUM, win));
        PLX_CHECK_MPI(MPI_Win_flush(0, win));
        /* every rank holds the shared lock at once: wait until all have counted themselves */
        long long holders = 0;
        for (int i = 0; holders < size; i++) {
            PLX_CHECK_MPI(MPI_Fetch_and_op(&noop_origin, &holders, MPI_LONG_LONG, 0, 3, MPI_NO_OP, win));
            PLX_CHECK_MPI(MPI_Win_flush(0, win));
            plx_pause(i);
            if (i > 2000000) {
                PLX_CHECK(0, "shared lock not held together: %lld of %d holders", holders, size);
                break;
            }
        }
        PLX_CHECK_EQ(holders, size, "shared holders at once");
        PLX_CHECK_MPI(MPI_Win_unlock(0, win));
    }
    MPI_Barrier(MPI_COMM_WORLD);
    PLX_CHECK_MPI(MPI_Win_free(&win));
    if (flav && !strcmp(flav, "create"))
        MPI_Free_mem(mem);
    if (rank == 0)
        printf("rma_atomic: %d compare_and_swap retries on rank 0\n", cas_retries);
    return plx_test_finish();
}
