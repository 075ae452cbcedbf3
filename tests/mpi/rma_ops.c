/*
 * One-sided communication: every operation (Put, Get, Accumulate,
 * Get_accumulate, Fetch_and_op, Compare_and_swap and the request-based
 * forms) under every synchronisation mode (fence, post/start/complete/wait,
 * lock/unlock, lock_all + flush), on windows of every flavour (create,
 * allocate, allocate_shared, dynamic), with contiguous and derived datatypes
 * on origin and target, and the data checked at both ends.
 *
 * Window layout (bytes, disp_unit 1):
 *   [0, 256)        put slots: 8 ints per origin rank
 *   [1024, 1536)    derived put: 16 ints per origin rank, written through an indexed type
 *   [1536, 1600)    rank 0: 16 ints every rank adds rank+1 to
 *   [1600, 1632)    rank 0: 8 ints, the even ones get +1 from every rank (vector target)
 *   [2048, 2064)    rank 0: MPI_DOUBLE_INT, MAXLOC of (rank, rank)
 *   [2112, 2116)    MPI_REPLACE: the left neighbour's rank
 *   [2176, 2180)    rank 0: get_accumulate counter (int)
 *   [2240, 2244)    rank 0: compare_and_swap word (int)
 *   [2560, 2568)    rank 0: fetch_and_op counter (long long)
 *   [4096, 84096)   20000 ints: a large put (several pieces on the message path)
 */
#include "plx_test.h"

/* the (ignored) origin of MPI_NO_OP: some libraries read it anyway */
static long long noop_origin;

#define WSIZE (96 * 1024)
#define BIG 20000

enum { M_FENCE, M_PSCW, M_LOCK, M_LOCKALL, M_NMODES };
static const char *mode_name[] = { "fence", "pscw", "lock", "lockall" };
enum { F_CREATE, F_ALLOCATE, F_SHARED, F_DYNAMIC, F_NFLAV };
static const char *flav_name[] = { "create", "allocate", "allocate_shared", "dynamic" };

static int rank, size;
static MPI_Aint *dbase;     /* dynamic: every rank's region address; else zeros */
static MPI_Group world_group;

static MPI_Aint D(int target, MPI_Aint off)
{
    return dbase[target] + off;
}

/* Local loads and stores against the window's public copy: MPI_Win_sync, which MPICH takes only
 * inside a passive-target epoch, between barriers so that no other epoch is open meanwhile. */
static void local_sync(MPI_Win win)
{
    MPI_Barrier(MPI_COMM_WORLD);
    PLX_CHECK_MPI(MPI_Win_lock_all(0, win));
    PLX_CHECK_MPI(MPI_Win_sync(win));
    PLX_CHECK_MPI(MPI_Win_unlock_all(win));
    MPI_Barrier(MPI_COMM_WORLD);
}

static void open_epoch(MPI_Win win, int mode, int lock_type)
{
    if (mode == M_FENCE)
        PLX_CHECK_MPI(MPI_Win_fence(0, win));
    else if (mode == M_PSCW) {
        PLX_CHECK_MPI(MPI_Win_post(world_group, 0, win));
        PLX_CHECK_MPI(MPI_Win_start(world_group, 0, win));
    } else if (mode == M_LOCKALL)
        PLX_CHECK_MPI(MPI_Win_lock_all(0, win));
    (void)lock_type;
}

static void close_epoch(MPI_Win win, int mode)
{
    if (mode == M_FENCE)
        PLX_CHECK_MPI(MPI_Win_fence(0, win));
    else if (mode == M_PSCW) {
        PLX_CHECK_MPI(MPI_Win_complete(win));
        PLX_CHECK_MPI(MPI_Win_wait(win));
    } else if (mode == M_LOCKALL) {
        PLX_CHECK_MPI(MPI_Win_flush_all(win));
        PLX_CHECK_MPI(MPI_Win_unlock_all(win));
    }
    if (mode == M_LOCK || mode == M_LOCKALL)
        MPI_Barrier(MPI_COMM_WORLD);
}

/* In lock mode each target's operations sit in their own lock/unlock. */
static void tlock(MPI_Win win, int mode, int type, int t)
{
    if (mode == M_LOCK)
        PLX_CHECK_MPI(MPI_Win_lock(type, t, 0, win));
}
static void tunlock(MPI_Win win, int mode, int t)
{
    if (mode == M_LOCK)
        PLX_CHECK_MPI(MPI_Win_unlock(t, win));
    else if (mode == M_LOCKALL)
        PLX_CHECK_MPI(MPI_Win_flush(t, win));
}

static void round_trip(MPI_Win win, char *mem, int mode, int flav)
{
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    int passive = mode == M_LOCK || mode == M_LOCKALL;
    char what[128];
    memset(mem, 0, WSIZE);
    MPI_Barrier(MPI_COMM_WORLD);
    local_sync(win);

    MPI_Datatype vec, idx, vec2;
    int bl[4] = { 1, 1, 1, 1 }, dp[4] = { 0, 2, 5, 7 };
    MPI_Type_vector(4, 1, 2, MPI_INT, &vec);
    MPI_Type_indexed(4, bl, dp, MPI_INT, &idx);
    MPI_Type_vector(4, 1, 2, MPI_INT, &vec2);
    MPI_Type_commit(&vec);
    MPI_Type_commit(&idx);
    MPI_Type_commit(&vec2);

    /* ---- phase 1: writes ---- */
    int src8[8], src16[16], ones[16], *big = plx_malloc(BIG * sizeof(int));
    for (int i = 0; i < 8; i++)
        src8[i] = rank * 100 + i;
    for (int i = 0; i < 16; i++) {
        src16[i] = rank * 1000 + i;
        ones[i] = 1;
    }
    for (int i = 0; i < BIG; i++)
        big[i] = rank * 7 + i;
    struct { double v; int l; } dl = { (double)rank, rank };
    int me = rank;
    open_epoch(win, mode, MPI_LOCK_EXCLUSIVE);
    tlock(win, mode, MPI_LOCK_EXCLUSIVE, right);
    if (passive) {
        MPI_Request rq;
        PLX_CHECK_MPI(MPI_Rput(src8, 8, MPI_INT, right, D(right, rank * 32), 8, MPI_INT, win, &rq));
        PLX_CHECK_MPI(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    } else {
        PLX_CHECK_MPI(MPI_Put(src8, 8, MPI_INT, right, D(right, rank * 32), 8, MPI_INT, win));
    }
    PLX_CHECK_MPI(MPI_Put(src16, 1, vec, right, D(right, 1024 + rank * 64), 1, idx, win));
    PLX_CHECK_MPI(MPI_Accumulate(&me, 1, MPI_INT, right, D(right, 2112), 1, MPI_INT, MPI_REPLACE, win));
    PLX_CHECK_MPI(MPI_Put(big, BIG, MPI_INT, right, D(right, 4096), BIG, MPI_INT, win));
    tunlock(win, mode, right);
    tlock(win, mode, MPI_LOCK_SHARED, 0);
    int add[16];
    for (int i = 0; i < 16; i++)
        add[i] = rank + 1;
    if (passive) {
        MPI_Request rq;
        PLX_CHECK_MPI(MPI_Raccumulate(add, 16, MPI_INT, 0, D(0, 1536), 16, MPI_INT, MPI_SUM, win, &rq));
        PLX_CHECK_MPI(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    } else {
        PLX_CHECK_MPI(MPI_Accumulate(add, 16, MPI_INT, 0, D(0, 1536), 16, MPI_INT, MPI_SUM, win));
    }
    PLX_CHECK_MPI(MPI_Accumulate(ones, 4, MPI_INT, 0, D(0, 1600), 1, vec2, MPI_SUM, win));
    PLX_CHECK_MPI(MPI_Accumulate(&dl, 1, MPI_DOUBLE_INT, 0, D(0, 2048), 1, MPI_DOUBLE_INT, MPI_MAXLOC, win));
    tunlock(win, mode, 0);
    close_epoch(win, mode);
    local_sync(win);

    int *imem = (int *)mem;
    for (int i = 0; i < 8; i++) {
        snprintf(what, sizeof what, "%s/%s: put slot of rank %d [%d]", flav_name[flav], mode_name[mode], left, i);
        PLX_CHECK_EQ(imem[left * 8 + i], left * 100 + i, what);
    }
    int *d = (int *)(mem + 1024 + left * 64);
    int expect_d[8] = { left * 1000 + 0, 0, left * 1000 + 2, 0, 0, left * 1000 + 4, 0, left * 1000 + 6 };
    for (int i = 0; i < 8; i++) {
        snprintf(what, sizeof what, "%s/%s: derived put from rank %d [%d]", flav_name[flav], mode_name[mode], left,
                 i);
        PLX_CHECK_EQ(d[i], expect_d[i], what);
    }
    snprintf(what, sizeof what, "%s/%s: MPI_REPLACE", flav_name[flav], mode_name[mode]);
    PLX_CHECK_EQ(*(int *)(mem + 2112), left, what);
    int *bg = (int *)(mem + 4096);
    long long bad = 0;
    for (int i = 0; i < BIG; i++)
        bad += bg[i] != left * 7 + i;
    snprintf(what, sizeof what, "%s/%s: large put, wrong ints", flav_name[flav], mode_name[mode]);
    PLX_CHECK_EQ(bad, 0, what);
    if (rank == 0) {
        for (int i = 0; i < 16; i++) {
            snprintf(what, sizeof what, "%s/%s: accumulate sum [%d]", flav_name[flav], mode_name[mode], i);
            PLX_CHECK_EQ(((int *)(mem + 1536))[i], size * (size + 1) / 2, what);
        }
        for (int i = 0; i < 8; i++) {
            snprintf(what, sizeof what, "%s/%s: vector accumulate [%d]", flav_name[flav], mode_name[mode], i);
            PLX_CHECK_EQ(((int *)(mem + 1600))[i], i % 2 == 0 ? size : 0, what);
        }
        struct { double v; int l; } *m = (void *)(mem + 2048);
        snprintf(what, sizeof what, "%s/%s: MAXLOC value", flav_name[flav], mode_name[mode]);
        PLX_CHECK_EQ((int)m->v, size - 1, what);
        PLX_CHECK_EQ(m->l, size - 1, what);
    }
    MPI_Barrier(MPI_COMM_WORLD);

    /* ---- phase 2: reads and fetching operations ---- */
    int got8[8] = { 0 }, gotd[8], *gbig = plx_malloc(BIG * sizeof(int));
    memset(gotd, 0x7f, sizeof gotd);
    int one = 1, oldv = -1, casv = -1, newv = rank + 1, zero = 0, peek = -1;
    long long one_ll = 1, old_ll = -1;
    open_epoch(win, mode, MPI_LOCK_SHARED);
    tlock(win, mode, MPI_LOCK_SHARED, right);
    if (passive) {
        MPI_Request rq[2];
        PLX_CHECK_MPI(MPI_Rget(got8, 8, MPI_INT, right, D(right, rank * 32), 8, MPI_INT, win, &rq[0]));
        PLX_CHECK_MPI(MPI_Rget(gbig, BIG, MPI_INT, right, D(right, 4096), BIG, MPI_INT, win, &rq[1]));
        PLX_CHECK_MPI(MPI_Waitall(2, rq, MPI_STATUSES_IGNORE));
    } else {
        PLX_CHECK_MPI(MPI_Get(got8, 8, MPI_INT, right, D(right, rank * 32), 8, MPI_INT, win));
        PLX_CHECK_MPI(MPI_Get(gbig, BIG, MPI_INT, right, D(right, 4096), BIG, MPI_INT, win));
    }
    /* the derived area through a vector at the target into an indexed origin */
    PLX_CHECK_MPI(MPI_Get(gotd, 1, idx, right, D(right, 1024 + rank * 64), 1, vec2, win));
    tunlock(win, mode, right);
    tlock(win, mode, MPI_LOCK_SHARED, 0);
    if (passive) {
        MPI_Request rq;
        PLX_CHECK_MPI(MPI_Rget_accumulate(&one, 1, MPI_INT, &oldv, 1, MPI_INT, 0, D(0, 2176), 1, MPI_INT, MPI_SUM,
                                          win, &rq));
        PLX_CHECK_MPI(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    } else {
        PLX_CHECK_MPI(MPI_Get_accumulate(&one, 1, MPI_INT, &oldv, 1, MPI_INT, 0, D(0, 2176), 1, MPI_INT, MPI_SUM,
                                         win));
    }
    PLX_CHECK_MPI(MPI_Fetch_and_op(&one_ll, &old_ll, MPI_LONG_LONG, 0, D(0, 2560), MPI_SUM, win));
    PLX_CHECK_MPI(MPI_Compare_and_swap(&newv, &zero, &casv, MPI_INT, 0, D(0, 2240), win));
    tunlock(win, mode, 0);
    close_epoch(win, mode);

    /* a read of what this rank put earlier, by Fetch_and_op(MPI_NO_OP) and Get_accumulate(MPI_NO_OP) */
    open_epoch(win, mode, MPI_LOCK_SHARED);
    tlock(win, mode, MPI_LOCK_SHARED, right);
    int peek2 = -1;
    PLX_CHECK_MPI(MPI_Fetch_and_op(&noop_origin, &peek, MPI_INT, right, D(right, rank * 32 + 4), MPI_NO_OP, win));
    PLX_CHECK_MPI(MPI_Get_accumulate(&noop_origin, 1, MPI_INT, &peek2, 1, MPI_INT, right, D(right, rank * 32 + 8), 1,
                                     MPI_INT, MPI_NO_OP, win));
    tunlock(win, mode, right);
    close_epoch(win, mode);

    for (int i = 0; i < 8; i++) {
        snprintf(what, sizeof what, "%s/%s: get [%d]", flav_name[flav], mode_name[mode], i);
        PLX_CHECK_EQ(got8[i], rank * 100 + i, what);
    }
    /* target vector (stride 2) over [rank*1000+0, 0, +2, 0, 0, +4, 0, +6] -> elements 0,2,4,6 = r+0, r+2, 0, 0,
     * landing at indices 0,2,5,7 of gotd */
    int exp_g[4] = { rank * 1000 + 0, rank * 1000 + 2, 0, 0 };
    int at[4] = { 0, 2, 5, 7 };
    for (int i = 0; i < 4; i++) {
        snprintf(what, sizeof what, "%s/%s: derived get [%d]", flav_name[flav], mode_name[mode], at[i]);
        PLX_CHECK_EQ(gotd[at[i]], exp_g[i], what);
    }
    snprintf(what, sizeof what, "%s/%s: derived get leaves the holes", flav_name[flav], mode_name[mode]);
    PLX_CHECK_EQ(gotd[1], 0x7f7f7f7f, what);
    bad = 0;
    for (int i = 0; i < BIG; i++)
        bad += gbig[i] != rank * 7 + i;
    snprintf(what, sizeof what, "%s/%s: large get, wrong ints", flav_name[flav], mode_name[mode]);
    PLX_CHECK_EQ(bad, 0, what);
    snprintf(what, sizeof what, "%s/%s: fetch_and_op(NO_OP)", flav_name[flav], mode_name[mode]);
    PLX_CHECK_EQ(peek, rank * 100 + 1, what);
    PLX_CHECK_EQ(peek2, rank * 100 + 2, what);

    /* fetched values: a permutation of 0..size-1; one CAS winner */
    int *all = plx_malloc((size_t)size * 3 * sizeof(int));
    int mine[3] = { oldv, (int)old_ll, casv };
    MPI_Allgather(mine, 3, MPI_INT, all, 3, MPI_INT, MPI_COMM_WORLD);
    int seen_ga = 0, seen_fo = 0, winners = 0, winner = -1;
    for (int r = 0; r < size; r++) {
        if (all[3 * r] >= 0 && all[3 * r] < size)
            seen_ga |= 1 << all[3 * r];
        if (all[3 * r + 1] >= 0 && all[3 * r + 1] < size)
            seen_fo |= 1 << all[3 * r + 1];
        if (all[3 * r + 2] == 0) {
            winners++;
            winner = r;
        }
    }
    snprintf(what, sizeof what, "%s/%s: get_accumulate old values cover 0..p-1", flav_name[flav], mode_name[mode]);
    PLX_CHECK_EQ(seen_ga, (1 << size) - 1, what);
    snprintf(what, sizeof what, "%s/%s: fetch_and_op old values cover 0..p-1", flav_name[flav], mode_name[mode]);
    PLX_CHECK_EQ(seen_fo, (1 << size) - 1, what);
    snprintf(what, sizeof what, "%s/%s: compare_and_swap winners", flav_name[flav], mode_name[mode]);
    PLX_CHECK_EQ(winners, 1, what);
    for (int r = 0; r < size; r++) {
        if (r != winner) {
            snprintf(what, sizeof what, "%s/%s: compare_and_swap loser sees the winner", flav_name[flav],
                     mode_name[mode]);
            PLX_CHECK_EQ(all[3 * r + 2], winner + 1, what);
        }
    }
    if (rank == 0) {
        snprintf(what, sizeof what, "%s/%s: counters", flav_name[flav], mode_name[mode]);
        PLX_CHECK_EQ(*(int *)(mem + 2176), size, what);
        PLX_CHECK_EQ(*(long long *)(mem + 2560), size, what);
        PLX_CHECK_EQ(*(int *)(mem + 2240), winner + 1, what);
    }
    free(all);
    free(big);
    free(gbig);
    MPI_Type_free(&vec);
    MPI_Type_free(&idx);
    MPI_Type_free(&vec2);
    MPI_Barrier(MPI_COMM_WORLD);
}

/* Every predefined reduction through MPI_Accumulate from every rank into rank 0 (fence epoch), at
 * [8192, 8192 + 16 * 8): one int slot per op, then doubles and MPI_DOUBLE_INT (MINLOC). */
static void all_ops(MPI_Win win, char *mem, const char *flav)
{
    static const MPI_Op ops[] = { MPI_MAX, MPI_MIN, MPI_SUM, MPI_PROD, MPI_LAND, MPI_BAND, MPI_LOR,
                                  MPI_BOR, MPI_LXOR, MPI_BXOR, MPI_REPLACE };
    static const char *names[] = { "MAX", "MIN", "SUM", "PROD", "LAND", "BAND", "LOR", "BOR", "LXOR", "BXOR",
                                   "REPLACE" };
    const int nops = (int)(sizeof ops / sizeof ops[0]);
    const int init = 6;
    int *slot = (int *)(mem + 8192);
    double *dslot = (double *)(mem + 8192 + 16 * sizeof(int));
    struct { double v; int l; } *pair = (void *)(mem + 8192 + 16 * sizeof(int) + 2 * sizeof(double));
    for (int k = 0; k < nops; k++)
        slot[k] = init;
    dslot[0] = 1.0;
    dslot[1] = 1.0;
    pair->v = 1e9;
    pair->l = -1;
    local_sync(win);
    PLX_CHECK_MPI(MPI_Win_fence(0, win));
    for (int k = 0; k < nops; k++) {
        int v = (k >= 4 && k <= 9) ? (rank + 1) % 4 : rank + 2;
        PLX_CHECK_MPI(MPI_Accumulate(&v, 1, MPI_INT, 0, D(0, 8192 + k * (int)sizeof(int)), 1, MPI_INT, ops[k], win));
    }
    double dv = 0.5 + rank;
    PLX_CHECK_MPI(MPI_Accumulate(&dv, 1, MPI_DOUBLE, 0, D(0, 8192 + 16 * sizeof(int)), 1, MPI_DOUBLE, MPI_SUM, win));
    PLX_CHECK_MPI(MPI_Accumulate(&dv, 1, MPI_DOUBLE, 0, D(0, 8192 + 16 * sizeof(int) + sizeof(double)), 1, MPI_DOUBLE,
                                 MPI_PROD, win));
    struct { double v; int l; } mine = { (double)(size - rank), rank };   /* MINLOC: the last rank */
    PLX_CHECK_MPI(MPI_Accumulate(&mine, 1, MPI_DOUBLE_INT, 0, D(0, 8192 + 16 * sizeof(int) + 2 * sizeof(double)), 1,
                                 MPI_DOUBLE_INT, MPI_MINLOC, win));
    PLX_CHECK_MPI(MPI_Win_fence(0, win));
    if (rank == 0) {
        char what[128];
        for (int k = 0; k < nops; k++) {
            long long e = init;
            int any_replace = 0;
            for (int r = 0; r < size; r++) {
                int v = (k >= 4 && k <= 9) ? (r + 1) % 4 : r + 2;
                switch (k) {
                case 0: e = e > v ? e : v; break;
                case 1: e = e < v ? e : v; break;
                case 2: e += v; break;
                case 3: e *= v; break;
                case 4: e = e && v; break;
                case 5: e &= v; break;
                case 6: e = e || v; break;
                case 7: e |= v; break;
                case 8: e = !e != !v; break;
                case 9: e ^= v; break;
                case 10: any_replace |= slot[k] == v; break;
                default: break;
                }
            }
            snprintf(what, sizeof what, "%s: accumulate with MPI_%s", flav, names[k]);
            if (k == 10)
                PLX_CHECK(any_replace, "%s: got %d, no rank's value", what, slot[k]);
            else
                PLX_CHECK_EQ(slot[k], e, what);
        }
        double es = 1.0, ep = 1.0;
        for (int r = 0; r < size; r++) {
            es += 0.5 + r;
            ep *= 0.5 + r;
        }
        snprintf(what, sizeof what, "%s: double SUM and PROD", flav);
        PLX_CHECK(dslot[0] == es && dslot[1] == ep, "%s: got %g %g, expected %g %g", what, dslot[0], dslot[1], es, ep);
        snprintf(what, sizeof what, "%s: MINLOC", flav);
        PLX_CHECK(pair->v == 1.0 && pair->l == size - 1, "%s: got (%g, %d)", what, pair->v, pair->l);
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

int main(int argc, char **argv)
{
    plx_test_init(&argc, &argv, "rma_ops");
    rank = plx_test_state()->rank;
    size = plx_test_state()->size;
    MPI_Comm_group(MPI_COMM_WORLD, &world_group);
    dbase = calloc((size_t)size, sizeof *dbase);
    const char *only = getenv("RMA_FLAVORS");   /* e.g. "01" for create and allocate */
    for (int flav = 0; flav < F_NFLAV; flav++) {
        if (only && !strchr(only, '0' + flav))
            continue;
        MPI_Win win;
        char *mem = NULL;
        void *region = NULL;
        switch (flav) {
        case F_CREATE:
            MPI_Alloc_mem(WSIZE, MPI_INFO_NULL, &mem);
            PLX_CHECK_MPI(MPI_Win_create(mem, WSIZE, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win));
            break;
        case F_ALLOCATE:
            PLX_CHECK_MPI(MPI_Win_allocate(WSIZE, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
            break;
        case F_SHARED: {
            MPI_Comm node;
            MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
            int nsize;
            MPI_Comm_size(node, &nsize);
            MPI_Comm_free(&node);
            if (nsize != size)
                continue;       /* needs every rank on one node */
            PLX_CHECK_MPI(MPI_Win_allocate_shared(WSIZE, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
            break;
        }
        case F_DYNAMIC:
            PLX_CHECK_MPI(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win));
            region = plx_malloc(WSIZE);
            mem = region;
            PLX_CHECK_MPI(MPI_Win_attach(win, region, WSIZE));
            break;
        }
        MPI_Aint mine = 0;
        if (flav == F_DYNAMIC)
            MPI_Get_address(mem, &mine);
        MPI_Allgather(&mine, 1, MPI_AINT, dbase, 1, MPI_AINT, MPI_COMM_WORLD);
        for (int mode = 0; mode < M_NMODES; mode++)
            round_trip(win, mem, mode, flav);
        all_ops(win, mem, flav_name[flav]);
        PLX_CHECK_MPI(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
        if (flav == F_DYNAMIC)
            PLX_CHECK_MPI(MPI_Win_detach(win, region));
        PLX_CHECK_MPI(MPI_Win_free(&win));
        PLX_CHECK_EQ(win, MPI_WIN_NULL, "MPI_Win_free sets MPI_WIN_NULL");
        if (flav == F_CREATE)
            MPI_Free_mem(mem);
        free(region);
    }
    free(dbase);
    MPI_Group_free(&world_group);
    return plx_test_finish();
}
