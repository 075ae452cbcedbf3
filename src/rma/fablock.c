/*
 * Passive-target locks from remote atomics (issue 14): the message path's
 * lock, kept as a 64-bit ticket word like a direct window's (rma.h: next
 * ticket, ticket served, shared holders; FIFO), but in the target's
 * memory and changed by the channel layer's remote atomics
 * (plx_route_atomic: fi_compare_atomic / fi_fetch_atomic where the channel
 * to the target has native atomics, the active-message fallback's CPU
 * atomics elsewhere). The target's lock queue (ops.c) is then not used:
 * the target takes no part in locking, and an origin holds the lock when
 * MPI_Win_lock returns.
 *
 * The words. Each process keeps one registered table of PLX_RMA_LKW_MAX
 * words, indexed by window slot (wid), registered on first need. An origin
 * learns a target's table (address, key) once, by asking it
 * (PLX_RMA_K_LKINFO, answered by the target's progress engine); after
 * that, locking that target needs nothing of it on a native channel.
 *
 * Which windows. Every process of the job must lock a given target the same
 * way (word or queue), so the choice depends only on what every process
 * sees alike: PLEXUS_RMA_FABRIC_LOCKS (on; off; auto = on when the job
 * asked for the ofi transport by PLEXUS_TRANSPORTS or PLEXUS_OFI_PROVIDER),
 * the target's slot (below PLX_RMA_LKW_MAX) and the target's answer (its
 * table registered). Pairs without native atomics still use the word,
 * through the fallback. Direct windows keep their shared-memory word.
 *
 * Cost: an uncontended lock is one round trip (a fetch-and-add takes the
 * ticket and shows whether it is served; a shared lock one more add), an
 * unlock one (an add); the queue needs one round trip for lock and unlock
 * together. A waiter polls the
 * word with remote reads, one per pause, where the queue sends one grant.
 *
 * Thread rules: under the library lock, as the rest of src/rma.
 */
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include "core/config.h"
#include "core/log.h"
#include "core/runtime.h"
#include "progress/progress.h"
#include "rma/rma.h"
#include "route/route.h"

/* The word's fields here (not a direct window's order: every change but a
 * rare wrap of the head is then one fetch-and-add): bits 48-63 the next
 * ticket, 32-47 the ticket served, 0-31 the shared holders. */
#define FL_TAIL(x) ((uint16_t)((x) >> 48))
#define FL_HEAD(x) ((uint16_t)((x) >> 32))
#define FL_READERS(x) ((uint32_t)(x))
#define FL_TAIL_ONE ((uint64_t)1 << 48)
#define FL_HEAD_ONE ((uint64_t)1 << 32)

static struct {
    uint64_t *words;            /* this process's table, or NULL */
    struct plx_tp_mr mr;
    int reg;                    /* 0 not tried, 1 registered, -1 refused */
    int8_t *state;              /* by world rank: 0 unknown, 1 asked, 2 known, -1 refused */
    uint64_t *addr, *key;       /* by world rank: its table */
    uint64_t ops;               /* PLEXUS_STATS-style count: remote atomics on lock words */
    struct plx_fl_held {        /* exclusive locks held: their tickets (= the head while held) */
        const struct plx_win *w;
        int target;
        uint16_t ticket;
    } *held;
    int nheld, capheld;
} plx_fl;

/* A setting of the fabric's RMA features (PLEXUS_RMA_FABRIC_LOCKS,
 * PLEXUS_RMA_NATIVE_ACC): "on"/"1", "off"/"0", else "auto": on when the job
 * uses ofi (named in PLEXUS_TRANSPORTS, or a provider chosen). */
int plx_rma_ofi_setting(const char *s)
{
    if (!strcmp(s, "on") || !strcmp(s, "1"))
        return 1;
    if (!strcmp(s, "off") || !strcmp(s, "0"))
        return 0;
    return (plx_config.transports[0] && plx_route_enabled("ofi") && strstr(plx_config.transports, "ofi")) ||
           plx_config.ofi_provider[0] != 0;
}

int plx_rma_fab_enabled(void)
{
    static int on = -1;
    if (on < 0) {
        const char *s = plx_config.rma_fabric_locks;
        on = plx_rma_ofi_setting(s);
        /* libfabric's sockets provider lost a fetch-atomic's completion with
         * 7 origins contending for one word (session 7: the origin waited
         * for good); auto leaves it the queue */
        const char *fp = getenv("FI_PROVIDER");
        if (on == 1 && strcmp(s, "on") && strcmp(s, "1") &&
            (strstr(plx_config.ofi_provider, "sockets") || (!plx_config.ofi_provider[0] && fp && strstr(fp, "sockets"))))
            on = 0;
    }
    return on;
}

/* This process's table, registered on first need; 1, or 0 when refused. */
static int plx_rma_fab_table(void)
{
    if (plx_fl.reg == 0) {
        plx_fl.words = aligned_alloc(4096, PLX_RMA_LKW_MAX * sizeof(uint64_t));
        if (plx_fl.words) {
            memset(plx_fl.words, 0, PLX_RMA_LKW_MAX * sizeof(uint64_t));
            if (plx_route_mem_register(plx_fl.words, PLX_RMA_LKW_MAX * sizeof(uint64_t), &plx_fl.mr) != PLX_OK) {
                plx_warn("rma: the lock words could not be registered for remote atomics: windows of this "
                         "process keep the lock queue");
                free(plx_fl.words);
                plx_fl.words = NULL;
            }
        }
        plx_fl.reg = plx_fl.words ? 1 : -1;
    }
    return plx_fl.reg > 0;
}

void plx_rma_fab_wid_reset(int wid)
{
    if (plx_fl.words && wid >= 0 && wid < PLX_RMA_LKW_MAX)
        __atomic_store_n(&plx_fl.words[wid], 0, __ATOMIC_SEQ_CST);
}

int plx_rma_fab_info(uint64_t info[2])
{
    if (!plx_rma_fab_table())
        return 0;
    info[0] = (uint64_t)(uintptr_t)plx_fl.words;
    info[1] = plx_fl.mr.key;
    return 1;
}

static void plx_rma_fab_peers(void)
{
    if (!plx_fl.state) {
        plx_fl.state = plx_calloc((size_t)plx_procs.n, sizeof *plx_fl.state);
        plx_fl.addr = plx_calloc((size_t)plx_procs.n, sizeof *plx_fl.addr);
        plx_fl.key = plx_calloc((size_t)plx_procs.n, sizeof *plx_fl.key);
    }
}

void plx_rma_fab_info_answer(int lpid, int ok, const uint64_t info[2])
{
    plx_rma_fab_peers();
    if (lpid < 0 || lpid >= plx_procs.n || plx_fl.state[lpid] != 1)
        return;
    plx_fl.state[lpid] = ok ? 2 : -1;
    if (ok) {
        plx_fl.addr[lpid] = info[0];
        plx_fl.key[lpid] = info[1];
    }
    struct plx_tp_iface *nat = ok ? plx_route_rma_native(plx_route_peer(lpid), 8, 1) : NULL;
    plx_debug(1, "rma: rank %d's windows are locked %s%s", lpid,
              !ok ? "by its lock queue (its lock words could not be registered)"
              : nat ? "by remote atomics on its lock words, native over "
                    : "by remote atomics on its lock words, through the active-message fallback",
              nat ? nat->name : "");
}

static int plx_rma_fab_known(void *arg)
{
    return plx_fl.state[*(int *)arg] != 1;
}

int plx_rma_fab_use(struct plx_win *w, int target)
{
    if (w->direct || !plx_rma_fab_enabled() || w->t[target].wid >= PLX_RMA_LKW_MAX)
        return 0;
    plx_rma_fab_peers();
    int lpid = w->comm->lpids[target];
    if (plx_fl.state[lpid] == 0) {
        if (lpid == plx_procs.my_lpid) {
            uint64_t info[2];
            plx_fl.state[lpid] = 1;
            plx_rma_fab_info_answer(lpid, plx_rma_fab_info(info), info);
        } else {
            plx_fl.state[lpid] = 1;
            plx_rma_send_ctl(w, target, PLX_RMA_K_LKINFO, 0);
        }
    }
    if (plx_fl.state[lpid] == 1)
        plx_progress_wait(plx_rma_fab_known, &lpid);
    return plx_fl.state[lpid] == 2;
}

struct plx_rma_fab_wait {
    struct plx_tp_comp c;
    int done;
};

static void plx_rma_fab_cb(struct plx_tp_comp *c)
{
    ((struct plx_rma_fab_wait *)c)->done = 1;
}

static int plx_rma_fab_done(void *arg)
{
    return ((struct plx_rma_fab_wait *)arg)->done;
}

/* One remote atomic on target's word of w; MPI_SUCCESS or MPI_ERR_OTHER. */
static int plx_rma_fab_atomic(struct plx_win *w, int target, int op, uint64_t operand, uint64_t compare,
                              uint64_t *old)
{
    int lpid = w->comm->lpids[target];
    struct plx_rma_fab_wait fw = { .c = { .cb = plx_rma_fab_cb } };
    uint64_t raddr = plx_fl.addr[lpid] + (uint64_t)w->t[target].wid * sizeof(uint64_t);
    plx_status_t st = plx_route_atomic(plx_route_peer(lpid), op, operand, compare, old, raddr, plx_fl.key[lpid],
                                       &fw.c);
    if (st != PLX_OK)
        return MPI_ERR_OTHER;
    if (!fw.done)
        plx_progress_wait(plx_rma_fab_done, &fw);
    plx_fl.ops++;
    return fw.c.status == PLX_OK ? MPI_SUCCESS : MPI_ERR_OTHER;
}

/* A pause between two reads of a remote word: serve others, then yield. */
static void plx_rma_fab_pause(unsigned *spins)
{
    plx_progress_poll();
    if (++*spins > 16)
        sched_yield();
}

/* Adds `delta` to target's word where nothing can carry, else (the field
 * at 0xffff) swaps in `next(old)` by CAS; *old_p gets the value before. */
static int plx_rma_fab_bump(struct plx_win *w, int target, uint64_t delta, int may_carry, uint64_t *old_p)
{
    if (!may_carry)
        return plx_rma_fab_atomic(w, target, PLX_TP_AT_FADD, delta, 0, old_p);
    uint64_t old, x;
    int rc = plx_rma_fab_atomic(w, target, PLX_TP_AT_FADD, 0, 0, &old);
    while (rc == MPI_SUCCESS) {
        /* the head is the field that wraps here: 16 bits at 32, kept apart from the tail */
        uint64_t nw = (old & ~((uint64_t)0xffff << 32)) | ((uint64_t)(uint16_t)(FL_HEAD(old) + 1) << 32);
        nw += delta & (uint64_t)0xffffffff;     /* the holders' part of the delta */
        if ((rc = plx_rma_fab_atomic(w, target, PLX_TP_AT_CSWAP, nw, old, &x)) != MPI_SUCCESS || x == old)
            break;
        old = x;
    }
    *old_p = old;
    return rc;
}

int plx_rma_fab_lock(struct plx_win *w, int target, int type)
{
    uint64_t x;
    /* a ticket: fetch-and-add on the tail, the top field (its carry falls
     * off the word): wait-free, so a locker cannot lose the race for a
     * ticket again and again as a CAS could under contention */
    int rc = plx_rma_fab_atomic(w, target, PLX_TP_AT_FADD, FL_TAIL_ONE, 0, &x);
    if (rc != MPI_SUCCESS)
        return rc;
    uint16_t ticket = FL_TAIL(x);
    unsigned spins = 0;
    for (;;) {
        if (FL_HEAD(x) == ticket) {
            if (type == PLX_RMA_LK_EXCL) {
                if (FL_READERS(x) == 0) {
                    if (plx_fl.nheld == plx_fl.capheld) {
                        plx_fl.capheld = plx_fl.capheld ? 2 * plx_fl.capheld : 8;
                        plx_fl.held = plx_realloc(plx_fl.held, (size_t)plx_fl.capheld * sizeof *plx_fl.held);
                    }
                    plx_fl.held[plx_fl.nheld++] = (struct plx_fl_held){ w, target, ticket };
                    return MPI_SUCCESS;
                }
            } else {
                /* count myself a holder and serve the next ticket at once
                 * (nobody else moves the head while it shows my ticket) */
                return plx_rma_fab_bump(w, target, FL_HEAD_ONE + 1, ticket == 0xffff, &x);
            }
        }
        plx_rma_fab_pause(&spins);
        if ((rc = plx_rma_fab_atomic(w, target, PLX_TP_AT_FADD, 0, 0, &x)) != MPI_SUCCESS)
            return rc;
    }
}

int plx_rma_fab_unlock(struct plx_win *w, int target, int type)
{
    uint64_t x;
    if (type != PLX_RMA_LK_EXCL)        /* one holder less (it is at least 1: no borrow) */
        return plx_rma_fab_atomic(w, target, PLX_TP_AT_FADD, (uint64_t)0 - 1, 0, &x);
    /* serve the next ticket: nobody else moves the head while an exclusive
     * holder holds it (it is this holder's ticket); one add, unless the
     * head would carry into the tail */
    uint16_t head = 0;
    for (int i = 0; i < plx_fl.nheld; i++) {
        if (plx_fl.held[i].w == w && plx_fl.held[i].target == target) {
            head = plx_fl.held[i].ticket;
            plx_fl.held[i] = plx_fl.held[--plx_fl.nheld];
            break;
        }
    }
    return plx_rma_fab_bump(w, target, FL_HEAD_ONE, head == 0xffff, &x);
}

uint64_t plx_rma_fab_ops(void)
{
    return plx_fl.ops;
}
