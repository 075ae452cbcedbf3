/*
 * Gather, scatter and allgather schedules, with their v variants.
 *
 * Binomial gather/scatter move the data of a whole subtree at once; inner
 * nodes keep it packed (bytes, in relative-rank order), since only the root
 * knows the receive layout. Linear versions send straight between user
 * buffers.
 */
#include "coll/algo.h"

#define PLX_GATHER_SHORT 4096       /* bytes per rank: below, binomial trees */
#define PLX_ALLGATHER_SHORT 81920   /* total bytes: below, Bruck for non powers of two */
#define PLX_ALLGATHER_LONG 524288   /* total bytes: below, recursive doubling for powers of two */

static int plx_lowbit(int x)
{
    return x & -x;
}

/* Ranks in the binomial subtree rooted at relative rank vr. */
static int plx_subtree(int vr, int p)
{
    return vr == 0 ? p : PLX_MIN(plx_lowbit(vr), p - vr);
}

/* --- gather -------------------------------------------------------------- */

static void plx_gather_binomial(struct plx_sched *s, const void *sbuf, MPI_Aint scount, struct plx_datatype *sdt,
                                void *rbuf, MPI_Aint rcount, struct plx_datatype *rdt, int root, size_t nb)
{
    int p = s->comm->size, r = s->comm->rank, vr = (r - root + p) % p;
    int n = plx_subtree(vr, p);
    struct plx_datatype *byte = plx_coll_byte();
    int in_place = sbuf == MPI_IN_PLACE;
    if (n == 1 && vr != 0) {
        plx_sched_send(s, sbuf, scount, sdt, (vr - plx_lowbit(vr) + root) % p);
        return;
    }
    char *tmp = plx_sched_alloc(s, (size_t)n * nb);
    if (in_place)
        plx_sched_copy(s, plx_coll_blk(rbuf, r, rcount, rdt), rcount, rdt, tmp, (MPI_Aint)nb, byte);
    else
        plx_sched_copy(s, sbuf, scount, sdt, tmp, (MPI_Aint)nb, byte);
    int top = vr ? plx_lowbit(vr) : p;
    for (int mask = 1; mask < top; mask <<= 1) {
        int child = vr + mask;
        if (child < p)
            plx_sched_recv(s, tmp + (size_t)mask * nb, (MPI_Aint)((size_t)PLX_MIN(mask, p - child) * nb), byte,
                           (child + root) % p);
    }
    plx_sched_fence(s);
    if (vr != 0) {
        plx_sched_send(s, tmp, (MPI_Aint)((size_t)n * nb), byte, (vr - plx_lowbit(vr) + root) % p);
        return;
    }
    for (int i = 0; i < p; i++) {
        int real = (i + root) % p;
        if (real == r && in_place)
            continue;
        plx_sched_copy(s, tmp + (size_t)i * nb, (MPI_Aint)nb, byte, plx_coll_blk(rbuf, real, rcount, rdt), rcount,
                       rdt);
    }
}

void plx_coll_gather_sched(struct plx_sched *s, const void *sbuf, MPI_Aint scount, struct plx_datatype *sdt,
                           void *rbuf, MPI_Aint rcount, struct plx_datatype *rdt, int root)
{
    int p = s->comm->size, r = s->comm->rank;
    size_t nb = r == root ? (size_t)rcount * (size_t)rdt->size : (size_t)scount * (size_t)sdt->size;
    if (nb == 0)
        return;
    if (nb < PLX_GATHER_SHORT && p > 2) {
        plx_gather_binomial(s, sbuf, scount, sdt, rbuf, rcount, rdt, root, nb);
        return;
    }
    if (r != root) {
        plx_sched_send(s, sbuf, scount, sdt, root);
        return;
    }
    for (int i = 0; i < p; i++)
        if (i != root)
            plx_sched_recv(s, plx_coll_blk(rbuf, i, rcount, rdt), rcount, rdt, i);
    if (sbuf != MPI_IN_PLACE)
        plx_sched_copy(s, sbuf, scount, sdt, plx_coll_blk(rbuf, root, rcount, rdt), rcount, rdt);
}

void plx_coll_gatherv_sched(struct plx_sched *s, const void *sbuf, MPI_Aint scount, struct plx_datatype *sdt,
                            void *rbuf, const MPI_Count *rcounts, const MPI_Aint *displs, struct plx_datatype *rdt, int root)
{
    int p = s->comm->size, r = s->comm->rank;
    if (r != root) {
        if (scount * sdt->size > 0)
            plx_sched_send(s, sbuf, scount, sdt, root);
        return;
    }
    for (int i = 0; i < p; i++) {
        char *at = (char *)rbuf + (MPI_Aint)displs[i] * rdt->extent;
        if (i == root) {
            if (sbuf != MPI_IN_PLACE)
                plx_sched_copy(s, sbuf, scount, sdt, at, rcounts[i], rdt);
        } else if (rcounts[i] * rdt->size > 0) {
            plx_sched_recv(s, at, rcounts[i], rdt, i);
        }
    }
}

/* --- scatter ------------------------------------------------------------- */

static void plx_scatter_binomial(struct plx_sched *s, const void *sbuf, MPI_Aint scount, struct plx_datatype *sdt,
                                 void *rbuf, MPI_Aint rcount, struct plx_datatype *rdt, int root, size_t nb)
{
    int p = s->comm->size, r = s->comm->rank, vr = (r - root + p) % p;
    int n = plx_subtree(vr, p);
    struct plx_datatype *byte = plx_coll_byte();
    if (n == 1 && vr != 0) {
        plx_sched_recv(s, rbuf, rcount, rdt, (vr - plx_lowbit(vr) + root) % p);
        return;
    }
    char *tmp = plx_sched_alloc(s, (size_t)n * nb);
    if (vr == 0) {
        for (int i = 0; i < p; i++)
            plx_sched_copy(s, plx_coll_blk(sbuf, (i + root) % p, scount, sdt), scount, sdt, tmp + (size_t)i * nb,
                           (MPI_Aint)nb, byte);
    } else {
        plx_sched_recv(s, tmp, (MPI_Aint)((size_t)n * nb), byte, (vr - plx_lowbit(vr) + root) % p);
        plx_sched_fence(s);
    }
    int top = vr ? plx_lowbit(vr) : p;
    for (int mask = 1; mask < top; mask <<= 1) {
        int child = vr + mask;
        if (child < p)
            plx_sched_send(s, tmp + (size_t)mask * nb, (MPI_Aint)((size_t)PLX_MIN(mask, p - child) * nb), byte,
                           (child + root) % p);
    }
    if (!(vr == 0 && rbuf == MPI_IN_PLACE))
        plx_sched_copy(s, tmp, (MPI_Aint)nb, byte, rbuf, rcount, rdt);
}

void plx_coll_scatter_sched(struct plx_sched *s, const void *sbuf, MPI_Aint scount, struct plx_datatype *sdt,
                            void *rbuf, MPI_Aint rcount, struct plx_datatype *rdt, int root)
{
    int p = s->comm->size, r = s->comm->rank;
    size_t nb = r == root ? (size_t)scount * (size_t)sdt->size : (size_t)rcount * (size_t)rdt->size;
    if (nb == 0)
        return;
    if (nb < PLX_GATHER_SHORT && p > 2) {
        plx_scatter_binomial(s, sbuf, scount, sdt, rbuf, rcount, rdt, root, nb);
        return;
    }
    if (r != root) {
        plx_sched_recv(s, rbuf, rcount, rdt, root);
        return;
    }
    for (int i = 0; i < p; i++)
        if (i != root)
            plx_sched_send(s, plx_coll_blk(sbuf, i, scount, sdt), scount, sdt, i);
    if (rbuf != MPI_IN_PLACE)
        plx_sched_copy(s, plx_coll_blk(sbuf, root, scount, sdt), scount, sdt, rbuf, rcount, rdt);
}

void plx_coll_scatterv_sched(struct plx_sched *s, const void *sbuf, const MPI_Count *scounts, const MPI_Aint *displs,
                             struct plx_datatype *sdt, void *rbuf, MPI_Aint rcount, struct plx_datatype *rdt,
                             int root)
{
    int p = s->comm->size, r = s->comm->rank;
    if (r != root) {
        if (rcount * rdt->size > 0)
            plx_sched_recv(s, rbuf, rcount, rdt, root);
        return;
    }
    for (int i = 0; i < p; i++) {
        const char *at = (const char *)sbuf + (MPI_Aint)displs[i] * sdt->extent;
        if (i == root) {
            if (rbuf != MPI_IN_PLACE)
                plx_sched_copy(s, at, scounts[i], sdt, rbuf, rcount, rdt);
        } else if (scounts[i] * sdt->size > 0) {
            plx_sched_send(s, at, scounts[i], sdt, i);
        }
    }
}

/* --- allgather ----------------------------------------------------------- */

/* Recursive doubling: in round k, partners rank ^ 2^k swap the 2^k blocks
 * each has gathered; those are adjacent in rbuf, so one (count, type) each. */
static void plx_allgather_rd(struct plx_sched *s, int mask0, void *rbuf, MPI_Aint rcount, struct plx_datatype *rdt)
{
    int p = s->comm->size, r = s->comm->rank;
    for (int mask = mask0; mask < p; mask <<= 1) {
        int partner = r ^ mask;
        int mine = r / mask * mask, theirs = partner / mask * mask;
        plx_sched_send(s, plx_coll_blk(rbuf, mine, rcount, rdt), rcount * mask, rdt, partner);
        plx_sched_recv(s, plx_coll_blk(rbuf, theirs, rcount, rdt), rcount * mask, rdt, partner);
        plx_sched_fence(s);
    }
}

/* Bruck: blocks gathered in a packed buffer in the order r, r+1, ...; in
 * round k everyone sends its first min(2^k, p-2^k) blocks to rank-2^k. Works
 * for any p in ceil(log2 p) rounds. */
static void plx_allgather_bruck(struct plx_sched *s, const void *own, MPI_Aint ocount, struct plx_datatype *odt,
                                void *rbuf, MPI_Aint rcount, struct plx_datatype *rdt, size_t nb)
{
    int p = s->comm->size, r = s->comm->rank;
    struct plx_datatype *byte = plx_coll_byte();
    char *tmp = plx_sched_alloc(s, (size_t)p * nb);
    plx_sched_copy(s, own, ocount, odt, tmp, (MPI_Aint)nb, byte);
    for (int k = 1; k < p; k <<= 1) {
        int n = PLX_MIN(k, p - k);
        plx_sched_send(s, tmp, (MPI_Aint)((size_t)n * nb), byte, (r - k + p) % p);
        plx_sched_recv(s, tmp + (size_t)k * nb, (MPI_Aint)((size_t)n * nb), byte, (r + k) % p);
        plx_sched_fence(s);
    }
    for (int i = 0; i < p; i++) {
        int dst = (r + i) % p;
        if (i == 0 && own == plx_coll_blk(rbuf, r, rcount, rdt))
            continue;
        plx_sched_copy(s, tmp + (size_t)i * nb, (MPI_Aint)nb, byte, plx_coll_blk(rbuf, dst, rcount, rdt), rcount,
                       rdt);
    }
}

static void plx_allgather_ring(struct plx_sched *s, int i0, void *rbuf, const MPI_Count *rcounts, const MPI_Aint *displs,
                               MPI_Aint rcount, struct plx_datatype *rdt)
{
    int p = s->comm->size, r = s->comm->rank;
    int left = (r - 1 + p) % p, right = (r + 1) % p;
    for (int i = i0; i < p - 1; i++) {
        int si = (r - i + p) % p, ri = (r - i - 1 + p) % p;
        MPI_Aint sc = rcounts ? rcounts[si] : rcount, rc = rcounts ? rcounts[ri] : rcount;
        char *sa = rcounts ? (char *)rbuf + (MPI_Aint)displs[si] * rdt->extent : plx_coll_blk(rbuf, si, rcount, rdt);
        char *ra = rcounts ? (char *)rbuf + (MPI_Aint)displs[ri] * rdt->extent : plx_coll_blk(rbuf, ri, rcount, rdt);
        if (sc * rdt->size > 0)
            plx_sched_send(s, sa, sc, rdt, right);
        if (rc * rdt->size > 0)
            plx_sched_recv(s, ra, rc, rdt, left);
        plx_sched_fence(s);
    }
}

void plx_coll_allgather_sched(struct plx_sched *s, const void *sbuf, MPI_Aint scount, struct plx_datatype *sdt,
                              void *rbuf, MPI_Aint rcount, struct plx_datatype *rdt)
{
    int p = s->comm->size, r = s->comm->rank;
    size_t nb = (size_t)rcount * (size_t)rdt->size, total = nb * (size_t)p;
    void *mine = plx_coll_blk(rbuf, r, rcount, rdt);
    if (nb == 0)
        return;
    int pof2 = (p & (p - 1)) == 0;
    if (!pof2 && total < PLX_ALLGATHER_SHORT) {
        if (sbuf == MPI_IN_PLACE)
            plx_allgather_bruck(s, mine, rcount, rdt, rbuf, rcount, rdt, nb);
        else
            plx_allgather_bruck(s, sbuf, scount, sdt, rbuf, rcount, rdt, nb);
        return;
    }
    int rd = pof2 && total < PLX_ALLGATHER_LONG;
    int first = 0;              /* rounds done here */
    if (sbuf != MPI_IN_PLACE && p == 1) {
        plx_sched_copy(s, sbuf, scount, sdt, mine, rcount, rdt);
    } else if (sbuf != MPI_IN_PLACE) {
        /* The first round sends the own block straight from sbuf (what the
         * peer reads is then the caller's data, not lines this rank has just
         * written into rbuf and still holds dirty in its cache), and copies
         * it into rbuf while the peer reads. Measured at 2 ranks, 64K-512K
         * per rank: 20-113 us copying first and sending from rbuf, 8.4-86
         * us this way (Open MPI 7.4-72). */
        int to = rd ? r ^ 1 : (r + 1) % p, from = rd ? r ^ 1 : (r - 1 + p) % p;
        plx_sched_send(s, sbuf, scount, sdt, to);
        plx_sched_recv(s, plx_coll_blk(rbuf, from, rcount, rdt), rcount, rdt, from);
        plx_sched_copy(s, sbuf, scount, sdt, mine, rcount, rdt);
        first = 1;
    }
    plx_sched_fence(s);
    if (rd)
        plx_allgather_rd(s, first ? 2 : 1, rbuf, rcount, rdt);
    else
        plx_allgather_ring(s, first, rbuf, NULL, NULL, rcount, rdt);
}

void plx_coll_allgatherv_sched(struct plx_sched *s, const void *sbuf, MPI_Aint scount, struct plx_datatype *sdt,
                               void *rbuf, const MPI_Count *rcounts, const MPI_Aint *displs, struct plx_datatype *rdt)
{
    int r = s->comm->rank;
    if (sbuf != MPI_IN_PLACE)
        plx_sched_copy(s, sbuf, scount, sdt, (char *)rbuf + (MPI_Aint)displs[r] * rdt->extent, rcounts[r], rdt);
    plx_sched_fence(s);
    plx_allgather_ring(s, 0, rbuf, rcounts, displs, 0, rdt);
}
