/*
 * Accumulates as native fabric atomics (issue 14, session 9).
 *
 * A message-path window (create or allocate flavour, not direct, not
 * dynamic) registers its memory with the router at creation
 * (plx_route_mem_register: the fallback's table and every native
 * instance), and its key travels in the window's card. Each rank also puts
 * in its card which basic types its native channel can reduce in full: a
 * type counts only when the channel to every other rank of the window takes
 * every predefined operation MPI allows on it, as fi_atomic (the plain
 * accumulate), fi_fetch_atomic (get_accumulate, fetch_and_op, with
 * MPI_REPLACE as an atomic write and MPI_NO_OP as an atomic read) and, for
 * the types compare_and_swap takes, fi_compare_atomic. The window's set is
 * the AND of every rank's, so all ranks agree on it without another
 * collective.
 *
 * The rule, one path per window and basic type: every accumulate of a
 * type in the set, to a rank other than oneself, goes as fabric atomics,
 * whatever its op or layout (a derived target type is cut into its runs of
 * elements, one atomic call per run); every accumulate of any other type
 * goes as active messages (PLX_PKT_WIN), executed by the target's CPU. So
 * two accumulates that MPI requires to be atomic with each other (same
 * location, same basic type) never travel different paths. Accumulates on
 * one's own window part are done by the CPU under the library lock: with
 * the software providers here, remote atomics also run inside the target's
 * progress, under that lock, so they are atomic with each other; a provider
 * whose NIC applies atomics would need the target's own through the
 * fabric's loopback too (not done).
 *
 * Order: MPI orders accumulates from one origin to one location (the
 * window's accumulate_ordering, all four by default). Where the provider
 * does not promise atomic ordering (FI_ORDER_ATOMIC_* of its tx_attr:
 * tcp;ofi_rxm lacks WAR, shm promises none), a native accumulate waits until
 * the origin's earlier operations to that target are complete; with
 * accumulate_ordering=none it does not.
 *
 * Locks: a native accumulate does not pass through the target's lock queue,
 * so under the queue (PLEXUS_RMA_FABRIC_LOCKS=off) the origin waits for its
 * grant (as a cross-memory-attach origin does) and flushes before its unlock
 * (sync.c). Fabric locks are held when MPI_Win_lock returns.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/config.h"
#include "core/log.h"
#include "core/runtime.h"
#include "progress/progress.h"
#include "rma/rma.h"
#include "route/route.h"

enum { NC_INT, NC_FLOAT, NC_COMPLEX, NC_BYTE, NC_BOOL };

static const struct plx_nat_type {
    MPI_Datatype dt;
    int cls;
    int adt;
} plx_nat_types[] = {
#define SINT(t) (sizeof(t) == 1 ? PLX_TP_ADT_INT8 : sizeof(t) == 2 ? PLX_TP_ADT_INT16 \
                 : sizeof(t) == 4 ? PLX_TP_ADT_INT32 : PLX_TP_ADT_INT64)
#define UINT(t) (SINT(t) + 1)
    { MPI_SIGNED_CHAR, NC_INT, SINT(signed char) },
    { MPI_UNSIGNED_CHAR, NC_INT, UINT(unsigned char) },
    { MPI_SHORT, NC_INT, SINT(short) },
    { MPI_UNSIGNED_SHORT, NC_INT, UINT(unsigned short) },
    { MPI_INT, NC_INT, SINT(int) },
    { MPI_UNSIGNED, NC_INT, UINT(unsigned) },
    { MPI_LONG, NC_INT, SINT(long) },
    { MPI_UNSIGNED_LONG, NC_INT, UINT(unsigned long) },
    { MPI_LONG_LONG, NC_INT, SINT(long long) },
    { MPI_UNSIGNED_LONG_LONG, NC_INT, UINT(unsigned long long) },
    { MPI_INT8_T, NC_INT, PLX_TP_ADT_INT8 },
    { MPI_INT16_T, NC_INT, PLX_TP_ADT_INT16 },
    { MPI_INT32_T, NC_INT, PLX_TP_ADT_INT32 },
    { MPI_INT64_T, NC_INT, PLX_TP_ADT_INT64 },
    { MPI_UINT8_T, NC_INT, PLX_TP_ADT_UINT8 },
    { MPI_UINT16_T, NC_INT, PLX_TP_ADT_UINT16 },
    { MPI_UINT32_T, NC_INT, PLX_TP_ADT_UINT32 },
    { MPI_UINT64_T, NC_INT, PLX_TP_ADT_UINT64 },
    { MPI_AINT, NC_INT, SINT(MPI_Aint) },
    { MPI_OFFSET, NC_INT, SINT(MPI_Offset) },
    { MPI_COUNT, NC_INT, SINT(MPI_Count) },
    { MPI_FLOAT, NC_FLOAT, PLX_TP_ADT_FLOAT },
    { MPI_DOUBLE, NC_FLOAT, PLX_TP_ADT_DOUBLE },
    { MPI_C_FLOAT_COMPLEX, NC_COMPLEX, PLX_TP_ADT_FLOAT_COMPLEX },
    { MPI_C_DOUBLE_COMPLEX, NC_COMPLEX, PLX_TP_ADT_DOUBLE_COMPLEX },
    { MPI_BYTE, NC_BYTE, PLX_TP_ADT_UINT8 },
    { MPI_C_BOOL, NC_BOOL, PLX_TP_ADT_UINT8 },
#undef SINT
#undef UINT
};
#define PLX_NAT_NTYPES ((int)(sizeof plx_nat_types / sizeof plx_nat_types[0]))

static const struct {
    MPI_Op op;
    int aop;
    unsigned cls;               /* classes it applies to (bits of NC_*) */
} plx_nat_ops[] = {
    { MPI_MIN, PLX_TP_AOP_MIN, 1u << NC_INT | 1u << NC_FLOAT },
    { MPI_MAX, PLX_TP_AOP_MAX, 1u << NC_INT | 1u << NC_FLOAT },
    { MPI_SUM, PLX_TP_AOP_SUM, 1u << NC_INT | 1u << NC_FLOAT | 1u << NC_COMPLEX },
    { MPI_PROD, PLX_TP_AOP_PROD, 1u << NC_INT | 1u << NC_FLOAT | 1u << NC_COMPLEX },
    { MPI_LAND, PLX_TP_AOP_LAND, 1u << NC_INT | 1u << NC_BOOL },
    { MPI_LOR, PLX_TP_AOP_LOR, 1u << NC_INT | 1u << NC_BOOL },
    { MPI_LXOR, PLX_TP_AOP_LXOR, 1u << NC_INT | 1u << NC_BOOL },
    { MPI_BAND, PLX_TP_AOP_BAND, 1u << NC_INT | 1u << NC_BYTE },
    { MPI_BOR, PLX_TP_AOP_BOR, 1u << NC_INT | 1u << NC_BYTE },
    { MPI_BXOR, PLX_TP_AOP_BXOR, 1u << NC_INT | 1u << NC_BYTE },
    { MPI_REPLACE, PLX_TP_AOP_WRITE, 0x1f },
    { MPI_NO_OP, PLX_TP_AOP_READ, 0x1f },
};
#define PLX_NAT_NOPS ((int)(sizeof plx_nat_ops / sizeof plx_nat_ops[0]))

static int plx_nat_type_index(MPI_Datatype dt)
{
    for (int i = 0; i < PLX_NAT_NTYPES; i++)
        if (plx_nat_types[i].dt == dt)
            return i;
    return -1;
}

static int plx_nat_aop(MPI_Op op, int cls)
{
    for (int i = 0; i < PLX_NAT_NOPS; i++)
        if (plx_nat_ops[i].op == op)
            return (plx_nat_ops[i].cls >> cls & 1) ? plx_nat_ops[i].aop : -1;
    return -1;
}

static int plx_nat_enabled(void)
{
    static int on = -1;
    if (on < 0)
        on = plx_rma_ofi_setting(plx_config.rma_native_acc);
    return on;
}

/* Can the channel to rp reduce type i in full (every op MPI allows on it)? */
static int plx_nat_type_ok(struct plx_route_peer *rp, int i)
{
    const struct plx_nat_type *t = &plx_nat_types[i];
    unsigned fl;
    for (int k = 0; k < PLX_NAT_NOPS; k++) {
        if (!(plx_nat_ops[k].cls >> t->cls & 1))
            continue;
        int aop = plx_nat_ops[k].aop;
        if (aop != PLX_TP_AOP_READ && !plx_route_acc_valid(rp, PLX_TP_ACC_PLAIN, aop, t->adt, &fl))
            return 0;
        if (!plx_route_acc_valid(rp, PLX_TP_ACC_FETCH, aop, t->adt, &fl))
            return 0;
    }
    if (t->cls != NC_FLOAT && t->cls != NC_COMPLEX &&
        !plx_route_acc_valid(rp, PLX_TP_ACC_COMPARE, PLX_TP_AOP_CSWAP, t->adt, &fl))
        return 0;
    return 1;
}

uint64_t plx_rma_nat_setup(struct plx_win *w)
{
    struct plx_comm *c = w->comm;
    if (!plx_nat_enabled() || w->direct || w->flavor == MPI_WIN_FLAVOR_DYNAMIC ||
        w->flavor == MPI_WIN_FLAVOR_SHARED || c->size < 2)
        return 0;
    uint64_t cap = ((uint64_t)1 << PLX_NAT_NTYPES) - 1;
    for (int r = 0; r < c->size && cap; r++) {
        if (r == c->rank)
            continue;
        struct plx_route_peer *rp = plx_route_peer(c->lpids[r]);
        for (int i = 0; i < PLX_NAT_NTYPES; i++)
            if ((cap >> i & 1) && !plx_nat_type_ok(rp, i))
                cap &= ~((uint64_t)1 << i);
    }
    if (!cap || w->size == 0)
        return cap;             /* nothing of this rank's to reach: no registration, no veto */
    if (plx_route_mem_register(w->base, (size_t)w->size, &w->nat_mr) != PLX_OK) {
        plx_debug(1, "rma: window %d: its memory could not be registered for native atomics; its accumulates "
                  "go by active messages", w->wid);
        return 0;
    }
    w->nat_reg = 1;
    return cap;
}

void plx_rma_nat_agree(struct plx_win *w, uint64_t mask)
{
    w->nat_mask = mask;         /* every rank's card alike: the same set on every rank */
    if (!w->nat_mask || w->comm->rank != 0 || !plx_log_debug)
        return;
    char names[512] = "";
    size_t n = 0;
    for (int i = 0; i < PLX_NAT_NTYPES && n < sizeof names - 40; i++) {
        if (!(w->nat_mask >> i & 1))
            continue;
        struct plx_datatype *d = plx_dt_lookup(plx_nat_types[i].dt);
        n += (size_t)snprintf(names + n, sizeof names - n, "%s%s", n ? " " : "", d ? d->name : "?");
    }
    plx_debug(1, "rma: window %d: accumulates of %s go as native atomics; other types by active messages", w->wid,
              names);
}

void plx_rma_nat_free(struct plx_win *w)
{
    if (plx_config.stats && (w->st_nat_acc || w->st_am_acc))
        plx_warn("stats: rank %d window %d: accumulates to other ranks %llu as native atomics (%llu calls), "
                 "%llu by active messages", plx_procs.my_lpid, w->wid, (unsigned long long)w->st_nat_acc,
                 (unsigned long long)w->st_nat_calls, (unsigned long long)w->st_am_acc);
    if (w->nat_reg)
        plx_route_mem_deregister(&w->nat_mr);
    w->nat_reg = 0;
}

int plx_rma_nat_use(struct plx_win *w, int target, int kind, MPI_Op op, const struct plx_datatype *basic)
{
    if (kind != PLX_RMA_K_ACC && kind != PLX_RMA_K_GACC && kind != PLX_RMA_K_CAS)
        return 0;
    int i = w->nat_mask && target != w->comm->rank ? plx_nat_type_index(basic->obj.handle) : -1;
    int ok = i >= 0 && (w->nat_mask >> i & 1) &&
             (kind == PLX_RMA_K_CAS || plx_nat_aop(op, plx_nat_types[i].cls) >= 0) &&
             !(kind == PLX_RMA_K_ACC && op == MPI_NO_OP);
    if (ok)
        w->st_nat_acc++;
    else if (target != w->comm->rank)
        w->st_am_acc++;
    return ok;
}

struct plx_nat_wait {
    struct plx_win *w;
    int target;
};

static int plx_nat_alone(void *p)
{
    struct plx_nat_wait *a = p;
    return a->w->pending[a->target] <= 1;
}

int plx_rma_nat_issue(struct plx_win *w, int target, int kind, MPI_Op op, const struct plx_datatype *basic,
                      const struct plx_rma_run *runs, size_t nruns, const char *in, char *res,
                      struct plx_tp_comp *comp)
{
    const struct plx_nat_type *t = &plx_nat_types[plx_nat_type_index(basic->obj.handle)];
    struct plx_route_peer *rp = plx_route_peer(w->comm->lpids[target]);
    size_t elem = (size_t)basic->size;
    struct plx_tp_acc a = { .dt = t->adt, .elem = elem, .rkey = w->t[target].key };
    if (kind == PLX_RMA_K_CAS) {
        a.kind = PLX_TP_ACC_COMPARE;
        a.op = PLX_TP_AOP_CSWAP;
    } else {
        a.kind = kind == PLX_RMA_K_GACC ? PLX_TP_ACC_FETCH : PLX_TP_ACC_PLAIN;
        a.op = plx_nat_aop(op, t->cls);
    }
    unsigned fl = 0;
    size_t max = plx_route_acc_valid(rp, a.kind, a.op, a.dt, &fl);
    if (!max)
        return MPI_ERR_INTERN;  /* agreed at creation: cannot happen while the channel lives */
    if (!(fl & PLX_TP_ACC_ORDERED) && w->pending[target] > 1) {
        const char *ord = w->info ? plx_info_lookup(w->info, "accumulate_ordering") : NULL;
        if (!ord || strcmp(ord, "none")) {
            struct plx_nat_wait arg = { w, target };
            plx_progress_wait(plx_nat_alone, &arg);
        }
    }
    size_t soff = 0;
    for (size_t r = 0; r < nruns; r++) {
        size_t left = (size_t)runs[r].len / elem;
        uint64_t addr = w->t[target].base + runs[r].off;
        while (left) {
            size_t n = kind == PLX_RMA_K_CAS ? 1 : PLX_MIN(left, max);
            a.count = n;
            a.raddr = addr;
            a.in = in ? in + soff : NULL;
            a.cmp = kind == PLX_RMA_K_CAS ? in + elem : NULL;
            a.res = res ? res + soff : NULL;
            plx_status_t st = plx_route_acc(rp, &a, comp);
            if (st != PLX_OK)
                return st == PLX_ERR_RANGE ? MPI_ERR_RMA_RANGE : MPI_ERR_OTHER;
            w->st_nat_calls++;
            left -= n;
            addr += n * elem;
            soff += n * elem;
        }
    }
    return MPI_SUCCESS;
}
