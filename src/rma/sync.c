/*
 * RMA synchronisation: flush, fence, post/start/complete/wait/test,
 * lock/unlock (one target or all), and the direct windows' lock word and
 * accumulate spinlock (see rma.h).
 *
 * Every operation is complete at the target once answered (active
 * messages) or once its call returned (direct), so flush waits for the
 * answers, fence is flush + barrier, complete is flush + a notice to each
 * target, and unlock is flush + the release. start waits for the targets'
 * post notices and wait for the origins' complete notices; each notice is
 * counted per rank, so a notice that arrives early (a post before the
 * matching start, a complete before wait) waits for its epoch.
 *
 * Waiting spins on the progress engine (so this process keeps serving the
 * operations others send it), yielding the CPU between polls once the wait
 * is long: a node may run more ranks than CPUs.
 */
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include "coll/coll.h"
#include "core/config.h"
#include "core/lock.h"
#include "progress/progress.h"
#include "rma/rma.h"

#define PLX_WIN_TAG PLX_COLL_TAG_DEFAULT

struct plx_rma_wait_arg {
    struct plx_win *w;
    int target;
    const uint8_t *flag;        /* wait for *flag != 0 */
};

static int plx_rma_flushed(void *p)
{
    struct plx_rma_wait_arg *a = p;
    return a->target < 0 ? a->w->npending == 0 : a->w->pending[a->target] == 0;
}

void plx_rma_flush(struct plx_win *w, int target)
{
    struct plx_rma_wait_arg a = { w, target, NULL };
    /* one poll even with nothing to wait for: a process that only works on
     * its own window still serves what others ask of it */
    plx_progress_poll();
    if (!plx_rma_flushed(&a))
        plx_progress_wait(plx_rma_flushed, &a);
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
}

static int plx_rma_flag_set(void *p)
{
    return *((struct plx_rma_wait_arg *)p)->flag != 0;
}

static void plx_rma_wait_flag(const uint8_t *flag)
{
    struct plx_rma_wait_arg a = { NULL, 0, flag };
    if (!*flag)
        plx_progress_wait(plx_rma_flag_set, &a);
}

/* A busy wait's pause: poll the engine, and give the CPU away once it is long. */
static void plx_rma_pause(unsigned *spins)
{
    plx_progress_poll();
    plx_lock_relax();           /* other threads of this process may need MPI meanwhile */
    if (++*spins > 64)
        sched_yield();
#if defined(__x86_64__) || defined(__i386__)
    else
        __builtin_ia32_pause();
#endif
}

/* --- patience of the epochs' waits ---------------------------------------------------------- */

/* The waits of active-target synchronisation (fence's barrier, start waiting for
 * posts, wait for completes) wait for peers that are typically a few tens of
 * microseconds behind: one copying a large put into the window, for instance.
 * The engine's default wait (PLEXUS_SPIN_COUNT polls, then PLEXUS_YIELD_COUNT
 * sched_yield rounds, 50 by default) falls asleep on the doorbells within that
 * time, and the peer then pays a wake-up on its arrival: a 1 MiB put or get
 * under fence took 80-200 us, 2.4-5x Open MPI's, against 30 us under lock.
 * These waits therefore yield for longer (at least PLX_RMA_SYNC_YIELDS rounds,
 * about a millisecond on an otherwise idle core, less on a busy one: a yield
 * hands the CPU to whoever wants it) before they sleep. A PLEXUS_YIELD_COUNT
 * set by the user is kept as it is. */
#define PLX_RMA_SYNC_YIELDS 2000

static int plx_rma_patience_begin(void)
{
    static int user_set = -1;
    int saved = plx_config.yield_count;
    if (user_set < 0)
        user_set = getenv("PLEXUS_YIELD_COUNT") != NULL;
    if (!user_set && saved < PLX_RMA_SYNC_YIELDS)
        plx_config.yield_count = PLX_RMA_SYNC_YIELDS;
    return saved;
}

static void plx_rma_patience_end(int saved)
{
    plx_config.yield_count = saved;
}

/* --- fence -------------------------------------------------------------------------- */

int plx_rma_fence(struct plx_win *w, int assert)
{
    if (w->start_ranks || w->post_ranks || w->nlocked || w->lockall)
        return MPI_ERR_RMA_SYNC;
    plx_rma_flush(w, -1);
    int saved = plx_rma_patience_begin();
    plx_coll_barrier(w->comm, PLX_WIN_TAG);
    plx_rma_patience_end(saved);
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    w->fence = !(assert & MPI_MODE_NOSUCCEED);
    return MPI_SUCCESS;
}

/* --- post / start / complete / wait ------------------------------------------------------ */

int plx_rma_post(struct plx_win *w, const int *ranks, int n)
{
    if (w->post_ranks)
        return MPI_ERR_RMA_SYNC;
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    w->post_ranks = plx_malloc((size_t)(n ? n : 1) * sizeof *ranks);
    memcpy(w->post_ranks, ranks, (size_t)n * sizeof *ranks);
    w->npost = n;
    for (int i = 0; i < n; i++) {
        if (ranks[i] == w->comm->rank)
            w->posts[ranks[i]]++;
        else
            plx_rma_send_ctl(w, ranks[i], PLX_RMA_K_POST, 0);
    }
    return MPI_SUCCESS;
}

struct plx_rma_cnt_arg {
    const uint32_t *cnt;
    const int *ranks;
    int n;
};

static int plx_rma_all_counted(void *p)
{
    struct plx_rma_cnt_arg *a = p;
    for (int i = 0; i < a->n; i++)
        if (a->cnt[a->ranks[i]] == 0)
            return 0;
    return 1;
}

int plx_rma_start(struct plx_win *w, const int *ranks, int n)
{
    if (w->start_ranks || w->nlocked || w->lockall)
        return MPI_ERR_RMA_SYNC;
    struct plx_rma_cnt_arg a = { w->posts, ranks, n };
    if (!plx_rma_all_counted(&a)) {
        int saved = plx_rma_patience_begin();
        plx_progress_wait(plx_rma_all_counted, &a);
        plx_rma_patience_end(saved);
    }
    for (int i = 0; i < n; i++)
        w->posts[ranks[i]]--;
    w->start_ranks = plx_malloc((size_t)(n ? n : 1) * sizeof *ranks);
    memcpy(w->start_ranks, ranks, (size_t)n * sizeof *ranks);
    w->nstart = n;
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    return MPI_SUCCESS;
}

int plx_rma_complete(struct plx_win *w)
{
    if (!w->start_ranks)
        return MPI_ERR_RMA_SYNC;
    for (int i = 0; i < w->nstart; i++)
        plx_rma_flush(w, w->start_ranks[i]);
    for (int i = 0; i < w->nstart; i++) {
        int r = w->start_ranks[i];
        if (r == w->comm->rank)
            w->completes[r]++;
        else
            plx_rma_send_ctl(w, r, PLX_RMA_K_COMPLETE, 0);
    }
    free(w->start_ranks);
    w->start_ranks = NULL;
    w->nstart = 0;
    return MPI_SUCCESS;
}

int plx_rma_wait(struct plx_win *w, int block)
{
    if (!w->post_ranks)
        return -MPI_ERR_RMA_SYNC;
    struct plx_rma_cnt_arg a = { w->completes, w->post_ranks, w->npost };
    if (!plx_rma_all_counted(&a)) {
        if (!block) {
            plx_progress_poll();
            if (!plx_rma_all_counted(&a))
                return 0;
        } else {
            int saved = plx_rma_patience_begin();
            plx_progress_wait(plx_rma_all_counted, &a);
            plx_rma_patience_end(saved);
        }
    }
    for (int i = 0; i < w->npost; i++)
        w->completes[w->post_ranks[i]]--;
    free(w->post_ranks);
    w->post_ranks = NULL;
    w->npost = 0;
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    return 1;
}

/* --- the direct windows' lock word ------------------------------------------------------ */

#define PLX_LW_TAIL(x) ((uint16_t)(x))
#define PLX_LW_HEAD(x) ((uint16_t)((x) >> 16))
#define PLX_LW_READERS(x) ((uint32_t)((x) >> 32))

void plx_rma_word_lock(uint64_t *w, int type)
{
    uint64_t old = __atomic_load_n(w, __ATOMIC_RELAXED), nw;
    do {
        nw = (old & ~(uint64_t)0xffff) | (uint16_t)(PLX_LW_TAIL(old) + 1);
    } while (!__atomic_compare_exchange_n(w, &old, nw, 0, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED));
    uint16_t ticket = PLX_LW_TAIL(old);
    unsigned spins = 0;
    for (;;) {
        uint64_t x = __atomic_load_n(w, __ATOMIC_ACQUIRE);
        if (PLX_LW_HEAD(x) == ticket) {
            if (type == PLX_RMA_LK_EXCL) {
                if (PLX_LW_READERS(x) == 0)
                    break;
            } else {
                /* count myself a holder and serve the next ticket at once */
                nw = (x + ((uint64_t)1 << 32)) & ~((uint64_t)0xffff << 16);
                nw |= (uint64_t)(uint16_t)(ticket + 1) << 16;
                if (__atomic_compare_exchange_n(w, &x, nw, 0, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
                    break;
                continue;
            }
        }
        plx_rma_pause(&spins);
    }
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
}

void plx_rma_word_unlock(uint64_t *w, int type)
{
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    if (type != PLX_RMA_LK_EXCL) {
        __atomic_fetch_sub(w, (uint64_t)1 << 32, __ATOMIC_RELEASE);
        return;
    }
    uint64_t old = __atomic_load_n(w, __ATOMIC_RELAXED), nw;
    do {
        nw = (old & ~((uint64_t)0xffff << 16)) | (uint64_t)(uint16_t)(PLX_LW_HEAD(old) + 1) << 16;
    } while (!__atomic_compare_exchange_n(w, &old, nw, 0, __ATOMIC_RELEASE, __ATOMIC_RELAXED));
}

void plx_rma_spin_lock(uint32_t *l)
{
    unsigned spins = 0;
    while (__atomic_exchange_n(l, 1, __ATOMIC_ACQUIRE)) {
        while (__atomic_load_n(l, __ATOMIC_RELAXED))
            plx_rma_pause(&spins);
    }
}

void plx_rma_spin_unlock(uint32_t *l)
{
    __atomic_store_n(l, 0, __ATOMIC_RELEASE);
}

/* --- lock / unlock ----------------------------------------------------------------------------- */

static void plx_rma_lock_send(struct plx_win *w, int type, int target)
{
    w->granted[target] = 0;
    if (target == w->comm->rank)
        plx_rma_lk_request(w, target, type);
    else    /* only an origin that writes by cross-memory attach waits for the grant */
        plx_rma_send_ctl(w, target, PLX_RMA_K_LOCK, type | (w->cma_ok || w->nat_mask ? PLX_RMA_LK_WANT_GRANT : 0));
}

static void plx_rma_unlock_send(struct plx_win *w, int target)
{
    if (target == w->comm->rank) {
        plx_rma_lk_release(w, target);
        w->unlocked[target] = 1;
    } else {
        w->unlocked[target] = 0;
        plx_rma_send_ctl(w, target, PLX_RMA_K_UNLOCK, 0);
    }
}

int plx_rma_lock(struct plx_win *w, int type, int target)
{
    if (w->lock[target] || w->lockall)
        return MPI_ERR_RMA_SYNC;
    if (w->start_ranks)
        return MPI_ERR_RMA_SYNC;
    if (w->direct) {
        plx_rma_word_lock(w->t[target].lockw, type);
    } else if (plx_rma_fab_use(w, target)) {
        int rc = plx_rma_fab_lock(w, target, type);    /* issue 14: the word in the target's memory */
        if (rc != MPI_SUCCESS)
            return rc;
    } else {
        /* a remote target holds back what follows until it grants (ops.c):
         * no need to wait for the grant here */
        plx_rma_lock_send(w, type, target);
        if (target == w->comm->rank || w->cma_ok || w->nat_mask)       /* natacc.c: native atomics wait too */
            plx_rma_wait_flag(&w->granted[target]);
    }
    w->lock[target] = (uint8_t)type;
    w->nlocked++;
    return MPI_SUCCESS;
}

int plx_rma_unlock(struct plx_win *w, int target)
{
    if (!w->lock[target])
        return MPI_ERR_RMA_SYNC;
    if (w->direct) {
        plx_rma_flush(w, target);
        plx_rma_word_unlock(w->t[target].lockw, w->lock[target]);
    } else if (plx_rma_fab_use(w, target)) {
        plx_rma_flush(w, target);
        int rc = plx_rma_fab_unlock(w, target, w->lock[target]);
        if (rc != MPI_SUCCESS)
            return rc;
    } else {
        /* the unlock follows the operations in the channel's order: the
         * target answers it after theirs */
        if (target == w->comm->rank || w->nat_mask)    /* native atomics are in no channel's order */
            plx_rma_flush(w, target);
        plx_rma_unlock_send(w, target);
        plx_rma_wait_flag(&w->unlocked[target]);
        plx_rma_flush(w, target);
    }
    w->lock[target] = 0;
    w->nlocked--;
    return MPI_SUCCESS;
}

int plx_rma_lock_all(struct plx_win *w)
{
    if (w->lockall || w->nlocked)
        return MPI_ERR_RMA_SYNC;
    if (w->start_ranks)
        return MPI_ERR_RMA_SYNC;
    int p = w->comm->size;
    if (w->direct) {
        for (int r = 0; r < p; r++)
            plx_rma_word_lock(w->t[r].lockw, PLX_RMA_LK_SHARED);
    } else {
        for (int r = 0; r < p; r++) {
            if (plx_rma_fab_use(w, r)) {
                int rc = plx_rma_fab_lock(w, r, PLX_RMA_LK_SHARED);
                if (rc != MPI_SUCCESS)
                    return rc;
            } else {
                plx_rma_lock_send(w, PLX_RMA_LK_SHARED, r);
            }
        }
        for (int r = 0; r < p; r++)
            if ((r == w->comm->rank || w->cma_ok || w->nat_mask) && !plx_rma_fab_use(w, r))
                plx_rma_wait_flag(&w->granted[r]);
    }
    w->lockall = 1;
    return MPI_SUCCESS;
}

int plx_rma_unlock_all(struct plx_win *w)
{
    if (!w->lockall)
        return MPI_ERR_RMA_SYNC;
    plx_rma_flush(w, -1);
    int p = w->comm->size;
    if (w->direct) {
        for (int r = 0; r < p; r++)
            plx_rma_word_unlock(w->t[r].lockw, PLX_RMA_LK_SHARED);
    } else {
        for (int r = 0; r < p; r++) {
            if (plx_rma_fab_use(w, r)) {
                int rc = plx_rma_fab_unlock(w, r, PLX_RMA_LK_SHARED);
                if (rc != MPI_SUCCESS)
                    return rc;
                w->unlocked[r] = 1;
            } else {
                plx_rma_unlock_send(w, r);
            }
        }
        for (int r = 0; r < p; r++)
            plx_rma_wait_flag(&w->unlocked[r]);
    }
    w->lockall = 0;
    return MPI_SUCCESS;
}
