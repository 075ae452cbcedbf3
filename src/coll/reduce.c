/*
 * Reduction schedules: reduce, allreduce, reduce_scatter(_block), scan and
 * exscan (see algo.h for the choice of algorithm).
 *
 * Operand order: plx_sched_reduce(s, a, b) computes b = a op b, so "a"
 * must hold the contributions of lower ranks than "b" for a
 * non-commutative op. Accumulators and receive buffers are laid out like
 * the user's data (plx_sched_alloc_layout); where an algorithm swaps their
 * roles the swap happens while building, since the schedule is static.
 */
#include <stdlib.h>
#include "coll/algo.h"

#define PLX_ALLREDUCE_SHORT 2048        /* bytes: below, recursive doubling */
#define PLX_REDSCAT_LONG 524288         /* total bytes: below, recursive halving (p a power of two) */

static void plx_swap(char **a, char **b)
{
    char *t = *a;
    *a = *b;
    *b = t;
}

/* --- reduce -------------------------------------------------------------- */

static void plx_reduce_rabenseifner(struct plx_sched *s, const void *src, void *rbuf, MPI_Aint count,
                                    struct plx_datatype *dt, int root);

void plx_coll_reduce_sched(struct plx_sched *s, const void *sbuf, void *rbuf, MPI_Aint count,
                           struct plx_datatype *dt, int root)
{
    int p = s->comm->size, r = s->comm->rank;
    int commute = s->op->commute;
    const void *src = sbuf == MPI_IN_PLACE ? rbuf : sbuf;
    if (count == 0 || dt->size == 0)
        return;
    if (p == 1) {
        plx_sched_copy(s, src, count, dt, rbuf, count, dt);
        return;
    }
    /* ranks relative to the root (commutative) or to 0 (order kept; the
     * result goes from 0 to the root at the end) */
    if (commute && count >= 2 && (size_t)count * (size_t)dt->size > PLX_ALLREDUCE_SHORT) {
        int pof2 = 1;
        while (pof2 * 2 <= p)
            pof2 *= 2;
        if (count >= pof2) {
            plx_reduce_rabenseifner(s, src, rbuf, count, dt, root);
            return;
        }
    }
    int lr = commute ? (r - root + p) % p : r;
    int base = commute ? root : 0;
    char *acc = r == root ? rbuf : plx_sched_alloc_layout(s, count, dt);
    char *tmp = NULL;
    plx_sched_copy(s, src, count, dt, acc, count, dt);
    for (int mask = 1; mask < p; mask <<= 1) {
        if (lr & mask) {
            plx_sched_send(s, acc, count, dt, (lr - mask + base) % p);
            plx_sched_fence(s);
            break;
        }
        int child = lr | mask;
        if (child >= p)
            continue;
        if (!tmp)
            tmp = plx_sched_alloc_layout(s, count, dt);
        plx_sched_recv(s, tmp, count, dt, (child + base) % p);
        plx_sched_fence(s);
        if (commute) {
            plx_sched_reduce(s, tmp, acc, count, dt);
        } else {
            plx_sched_reduce(s, acc, tmp, count, dt);     /* mine op theirs */
            plx_swap(&acc, &tmp);
        }
    }
    plx_sched_fence(s);
    if (!commute && root != 0) {
        if (r == 0)
            plx_sched_send(s, acc, count, dt, root);
        else if (r == root)
            plx_sched_recv(s, rbuf, count, dt, 0);
        plx_sched_fence(s);
        return;
    }
    if (r == root && acc != (char *)rbuf)
        plx_sched_copy(s, acc, count, dt, rbuf, count, dt);
}

/* --- allreduce ----------------------------------------------------------- */

/* Rabenseifner (used by allreduce and reduce) on the pof2 ranks that remain
 * after folding: the vector is cut in pof2 pieces and recursive halving
 * leaves each rank one piece fully reduced (phase 1); the pieces are then
 * gathered everywhere by recursive doubling (allreduce) or to one rank
 * (reduce). Each rank moves 2(pof2-1)/pof2 of the vector instead of
 * log2(pof2) times all of it. */
struct plx_rab {
    MPI_Aint *disp;             /* piece i is elements [disp[i], disp[i+1]) */
    int steps;
    int klo[32], khi[32], slo[32], shi[32], peer[32];   /* kept / sent pieces per step */
};

static int plx_real_rank(int newrank, int rem)
{
    return newrank < rem ? newrank * 2 + 1 : newrank + rem;
}

static void plx_rab_halving(struct plx_sched *s, struct plx_rab *rb, char *acc, char *tmp, MPI_Aint count,
                            struct plx_datatype *dt, int newrank, int pof2, int rem)
{
    MPI_Aint *disp = rb->disp = plx_sched_alloc(s, ((size_t)pof2 + 1) * sizeof *disp);
    for (int i = 0; i <= pof2; i++)
        disp[i] = count / pof2 * i + PLX_MIN(i, count % pof2);
    int lo = 0, hi = pof2, k = 0;
    for (int mask = 1; mask < pof2; mask <<= 1, k++) {
        int dst = plx_real_rank(newrank ^ mask, rem), mid = lo + (hi - lo) / 2;
        if (newrank & mask) {
            rb->klo[k] = mid, rb->khi[k] = hi, rb->slo[k] = lo, rb->shi[k] = mid;
        } else {
            rb->klo[k] = lo, rb->khi[k] = mid, rb->slo[k] = mid, rb->shi[k] = hi;
        }
        rb->peer[k] = dst;
        MPI_Aint kc = disp[rb->khi[k]] - disp[rb->klo[k]], sc = disp[rb->shi[k]] - disp[rb->slo[k]];
        plx_sched_send(s, acc + disp[rb->slo[k]] * dt->extent, sc, dt, dst);
        plx_sched_recv(s, tmp + disp[rb->klo[k]] * dt->extent, kc, dt, dst);
        plx_sched_fence(s);
        plx_sched_reduce(s, tmp + disp[rb->klo[k]] * dt->extent, acc + disp[rb->klo[k]] * dt->extent, kc, dt);
        lo = rb->klo[k];
        hi = rb->khi[k];
    }
    rb->steps = k;
}

static void plx_allreduce_rabenseifner(struct plx_sched *s, char *acc, char *tmp, MPI_Aint count,
                                       struct plx_datatype *dt, int newrank, int pof2, int rem)
{
    struct plx_rab rb;
    plx_rab_halving(s, &rb, acc, tmp, count, dt, newrank, pof2, rem);
    for (int k = rb.steps - 1; k >= 0; k--) {
        MPI_Aint kc = rb.disp[rb.khi[k]] - rb.disp[rb.klo[k]], sc = rb.disp[rb.shi[k]] - rb.disp[rb.slo[k]];
        plx_sched_send(s, acc + rb.disp[rb.klo[k]] * dt->extent, kc, dt, rb.peer[k]);
        plx_sched_recv(s, acc + rb.disp[rb.slo[k]] * dt->extent, sc, dt, rb.peer[k]);
        plx_sched_fence(s);
    }
}

/* Non-power-of-two pre-step of the reductions: of each pair (2i, 2i+1)
 * below 2*rem, the even rank sends acc to the odd one, which folds it in
 * (lower rank first, so non-commutative ops stay exact) and carries on as
 * rank i of a power-of-two group. Returns that rank, -1 for the even ranks
 * that drop out; ranks from 2*rem up become r - rem. */
static int plx_fold_pairs(struct plx_sched *s, char *acc, char *tmp, MPI_Aint count, struct plx_datatype *dt,
                          int rem)
{
    int r = s->comm->rank, newrank;
    if (r >= 2 * rem)
        return r - rem;
    if (r % 2 == 0) {
        plx_sched_send(s, acc, count, dt, r + 1);
        newrank = -1;
    } else {
        plx_sched_recv(s, tmp, count, dt, r - 1);
        plx_sched_fence(s);
        plx_sched_reduce(s, tmp, acc, count, dt);
        newrank = r / 2;
    }
    plx_sched_fence(s);
    return newrank;
}

/* Reduce for large vectors and commutative ops: fold, recursive halving,
 * then the pieces travel back up the halving tree toward the root only.
 * Going back, at the step of mask m the rank whose distance to the root
 * (newrank ^ newroot) has bit m set hands everything it holds to its
 * partner and is done; the root ends holding every piece. */
static void plx_reduce_rabenseifner(struct plx_sched *s, const void *src, void *rbuf, MPI_Aint count,
                                    struct plx_datatype *dt, int root)
{
    int p = s->comm->size, r = s->comm->rank;
    int pof2 = 1;
    while (pof2 * 2 <= p)
        pof2 *= 2;
    int rem = p - pof2, newrank;
    char *acc = r == root ? rbuf : plx_sched_alloc_layout(s, count, dt);
    char *tmp = plx_sched_alloc_layout(s, count, dt);
    plx_sched_copy(s, src, count, dt, acc, count, dt);
    newrank = plx_fold_pairs(s, acc, tmp, count, dt, rem);
    /* a root folded away is stood in for by its odd partner */
    int newroot = root < 2 * rem ? root / 2 : root - rem;
    int stand_in = plx_real_rank(newroot, rem);
    if (newrank >= 0) {
        struct plx_rab rb;
        plx_rab_halving(s, &rb, acc, tmp, count, dt, newrank, pof2, rem);
        int rel = newrank ^ newroot;
        for (int k = rb.steps - 1; k >= 0; k--) {
            int mask = 1 << k;
            if (rel & mask) {
                MPI_Aint kc = rb.disp[rb.khi[k]] - rb.disp[rb.klo[k]];
                plx_sched_send(s, acc + rb.disp[rb.klo[k]] * dt->extent, kc, dt, rb.peer[k]);
                plx_sched_fence(s);
                break;
            }
            MPI_Aint sc = rb.disp[rb.shi[k]] - rb.disp[rb.slo[k]];
            plx_sched_recv(s, acc + rb.disp[rb.slo[k]] * dt->extent, sc, dt, rb.peer[k]);
            plx_sched_fence(s);
        }
    }
    if (stand_in != root) {
        if (r == stand_in)
            plx_sched_send(s, acc, count, dt, root);
        else if (r == root)
            plx_sched_recv(s, rbuf, count, dt, stand_in);
        plx_sched_fence(s);
    }
}

void plx_coll_allreduce_sched(struct plx_sched *s, const void *sbuf, void *rbuf, MPI_Aint count,
                              struct plx_datatype *dt)
{
    int p = s->comm->size, r = s->comm->rank;
    int commute = s->op->commute;
    if (count == 0 || dt->size == 0)
        return;
    char *acc = rbuf;
    if (sbuf != MPI_IN_PLACE)
        plx_sched_copy(s, sbuf, count, dt, acc, count, dt);
    if (p == 1)
        return;
    int pof2 = 1;
    while (pof2 * 2 <= p)
        pof2 *= 2;
    int rem = p - pof2, newrank;
    char *tmp = plx_sched_alloc_layout(s, count, dt);
    newrank = plx_fold_pairs(s, acc, tmp, count, dt, rem);
    if (newrank >= 0) {
        size_t nbytes = (size_t)count * (size_t)dt->size;
        if (commute && count >= pof2 && nbytes > PLX_ALLREDUCE_SHORT) {
            plx_allreduce_rabenseifner(s, acc, tmp, count, dt, newrank, pof2, rem);
        } else {
            for (int mask = 1; mask < pof2; mask <<= 1) {
                int nd = newrank ^ mask, dst = nd < rem ? nd * 2 + 1 : nd + rem;
                plx_sched_send(s, acc, count, dt, dst);
                plx_sched_recv(s, tmp, count, dt, dst);
                plx_sched_fence(s);
                if (commute || dst < r) {
                    plx_sched_reduce(s, tmp, acc, count, dt);
                } else {
                    plx_sched_reduce(s, acc, tmp, count, dt);
                    plx_swap(&acc, &tmp);
                }
            }
        }
    }
    /* unfold */
    if (r < 2 * rem) {
        if (r % 2)
            plx_sched_send(s, acc, count, dt, r - 1);
        else
            plx_sched_recv(s, acc, count, dt, r + 1);
        plx_sched_fence(s);
    }
    if (acc != (char *)rbuf)
        plx_sched_copy(s, acc, count, dt, rbuf, count, dt);
}

/* --- reduce_scatter ------------------------------------------------------ */

void plx_coll_reduce_scatter_sched(struct plx_sched *s, const void *sbuf, void *rbuf, const MPI_Count *rcounts,
                                   struct plx_datatype *dt)
{
    int p = s->comm->size, r = s->comm->rank;
    MPI_Aint *disp = plx_sched_alloc(s, ((size_t)p + 1) * sizeof *disp);
    disp[0] = 0;
    for (int i = 0; i < p; i++)
        disp[i + 1] = disp[i] + rcounts[i];
    MPI_Aint total = disp[p];
    if (total == 0 || dt->size == 0)
        return;
    const char *in = sbuf == MPI_IN_PLACE ? rbuf : sbuf;
    MPI_Aint ext = dt->extent;
    if (p == 1) {
        plx_sched_copy(s, in, total, dt, rbuf, rcounts[0], dt);
        return;
    }
    if (!s->op->commute) {
        /* reduce everything to rank 0 in rank order, then scatter the pieces */
        char *all = r == 0 ? plx_sched_alloc_layout(s, total, dt) : NULL;
        plx_coll_reduce_sched(s, in, all, total, dt, 0);
        plx_sched_fence(s);
        if (r == 0) {
            for (int i = 1; i < p; i++)
                if (rcounts[i] > 0)
                    plx_sched_send(s, all + disp[i] * ext, rcounts[i], dt, i);
            plx_sched_copy(s, all, rcounts[0], dt, rbuf, rcounts[0], dt);
        } else if (rcounts[r] > 0) {
            plx_sched_recv(s, rbuf, rcounts[r], dt, 0);
        }
        plx_sched_fence(s);
        return;
    }
    int pof2 = (p & (p - 1)) == 0;
    if (pof2 && (size_t)total * (size_t)dt->size <= PLX_REDSCAT_LONG) {
        /* recursive halving, highest bit first so rank r ends with piece r */
        char *acc = plx_sched_alloc_layout(s, total, dt), *tmp = plx_sched_alloc_layout(s, total, dt);
        plx_sched_copy(s, in, total, dt, acc, total, dt);
        int lo = 0, hi = p;
        for (int mask = p / 2; mask > 0; mask >>= 1) {
            int partner = r ^ mask, mid = lo + (hi - lo) / 2;
            int kl = r & mask ? mid : lo, kh = r & mask ? hi : mid;
            int sl = r & mask ? lo : mid, sh = r & mask ? mid : hi;
            plx_sched_send(s, acc + disp[sl] * ext, disp[sh] - disp[sl], dt, partner);
            plx_sched_recv(s, tmp + disp[kl] * ext, disp[kh] - disp[kl], dt, partner);
            plx_sched_fence(s);
            plx_sched_reduce(s, tmp + disp[kl] * ext, acc + disp[kl] * ext, disp[kh] - disp[kl], dt);
            lo = kl;
            hi = kh;
        }
        plx_sched_copy(s, acc + disp[r] * ext, rcounts[r], dt, rbuf, rcounts[r], dt);
        return;
    }
    /* pairwise: in round k, send rank r+k its piece of my vector and add
     * the piece rank r-k sends me */
    if (sbuf == MPI_IN_PLACE) {
        char *copy = plx_sched_alloc_layout(s, total, dt);
        plx_sched_copy(s, in, total, dt, copy, total, dt);
        in = copy;
    }
    plx_sched_copy(s, in + disp[r] * ext, rcounts[r], dt, rbuf, rcounts[r], dt);
    char *tmp = plx_sched_alloc_layout(s, rcounts[r], dt);
    for (int k = 1; k < p; k++) {
        int dst = (r + k) % p, src = (r - k + p) % p;
        if (rcounts[dst] > 0)
            plx_sched_send(s, in + disp[dst] * ext, rcounts[dst], dt, dst);
        if (rcounts[r] > 0)
            plx_sched_recv(s, tmp, rcounts[r], dt, src);
        plx_sched_fence(s);
        plx_sched_reduce(s, tmp, rbuf, rcounts[r], dt);
    }
}

/* --- scan / exscan -------------------------------------------------------- */

/* Recursive doubling: `part` accumulates the contributions of a growing
 * block of ranks around me; what comes from lower ranks also goes into the
 * result. */
void plx_coll_scan_sched(struct plx_sched *s, const void *sbuf, void *rbuf, MPI_Aint count,
                         struct plx_datatype *dt, int exclusive)
{
    int p = s->comm->size, r = s->comm->rank;
    int commute = s->op->commute;
    if (count == 0 || dt->size == 0)
        return;
    const void *in = sbuf == MPI_IN_PLACE ? rbuf : sbuf;
    char *part = plx_sched_alloc_layout(s, count, dt);
    char *tmp = plx_sched_alloc_layout(s, count, dt);
    plx_sched_copy(s, in, count, dt, part, count, dt);
    if (!exclusive && sbuf != MPI_IN_PLACE)
        plx_sched_copy(s, sbuf, count, dt, rbuf, count, dt);
    int have = !exclusive;      /* rbuf holds a partial result */
    for (int mask = 1; mask < p; mask <<= 1) {
        int dst = r ^ mask;
        if (dst >= p)
            continue;
        plx_sched_send(s, part, count, dt, dst);
        plx_sched_recv(s, tmp, count, dt, dst);
        plx_sched_fence(s);
        if (r > dst) {
            plx_sched_reduce(s, tmp, part, count, dt);
            if (have) {
                plx_sched_reduce(s, tmp, rbuf, count, dt);
            } else {
                plx_sched_copy(s, tmp, count, dt, rbuf, count, dt);
                have = 1;
            }
        } else if (commute) {
            plx_sched_reduce(s, tmp, part, count, dt);
        } else {
            plx_sched_reduce(s, part, tmp, count, dt);
            plx_swap(&part, &tmp);
        }
    }
}
