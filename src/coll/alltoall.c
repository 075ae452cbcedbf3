/*
 * All-to-all schedules (alltoall, alltoallv/w) and the neighbourhood
 * collectives, which are all-to-alls restricted to a topology's neighbours.
 */
#include <stdlib.h>
#include "coll/algo.h"
#include "coll/coll.h"

#define PLX_ALLTOALL_SHORT 256      /* bytes per block: below (and p >= 8), Bruck */
#define PLX_ALLTOALL_MEDIUM 32768   /* bytes per block: below, everything posted at once */
#define PLX_ALLTOALL_BATCH 32       /* peers in flight at once for the v/w forms */

/* Bruck: blocks rotated so slot i holds the block for rank r+i; in round k
 * the slots with bit k set go to rank r+2^k (one hindexed message) and
 * come back filled from rank r-2^k; a final rotation puts slot i's block
 * (from rank r-i) in place. ceil(log2 p) rounds of p/2 blocks each. */
static void plx_alltoall_bruck(struct plx_sched *s, const void *sbuf, MPI_Aint scount, struct plx_datatype *sdt,
                               void *rbuf, MPI_Aint rcount, struct plx_datatype *rdt, size_t nb)
{
    int p = s->comm->size, r = s->comm->rank;
    struct plx_datatype *byte = plx_coll_byte();
    char *tmp = plx_sched_alloc(s, (size_t)p * nb);
    char *in = plx_sched_alloc(s, (size_t)(p / 2 + 1) * nb);
    for (int i = 0; i < p; i++)
        plx_sched_copy(s, plx_coll_blk(sbuf, (r + i) % p, scount, sdt), scount, sdt, tmp + (size_t)i * nb,
                       (MPI_Aint)nb, byte);
    MPI_Aint *disps = malloc((size_t)p * sizeof *disps);
    for (int k = 1; k < p; k <<= 1) {
        int m = 0;
        for (int i = 0; i < p; i++)
            if (i & k)
                disps[m++] = (MPI_Aint)i * (MPI_Aint)nb;
        struct plx_datatype *slots = plx_dt_indexed(m, NULL, (int)nb, NULL, disps, byte);
        plx_sched_own_type(s, slots);
        plx_sched_send(s, tmp, 1, slots, (r + k) % p);
        plx_sched_recv(s, in, (MPI_Aint)((size_t)m * nb), byte, (r - k + p) % p);
        plx_sched_fence(s);
        plx_sched_copy(s, in, (MPI_Aint)((size_t)m * nb), byte, tmp, 1, slots);
    }
    free(disps);
    for (int i = 0; i < p; i++)
        plx_sched_copy(s, tmp + (size_t)i * nb, (MPI_Aint)nb, byte, plx_coll_blk(rbuf, (r - i + p) % p, rcount, rdt),
                       rcount, rdt);
}

void plx_coll_alltoall_sched(struct plx_sched *s, const void *sbuf, MPI_Aint scount, struct plx_datatype *sdt,
                             void *rbuf, MPI_Aint rcount, struct plx_datatype *rdt)
{
    int p = s->comm->size, r = s->comm->rank;
    size_t nb = (size_t)rcount * (size_t)rdt->size;
    if (nb == 0)
        return;
    if (sbuf == MPI_IN_PLACE) {
        /* send from a packed copy of the receive buffer */
        char *copy = plx_sched_alloc(s, (size_t)p * nb);
        plx_sched_copy(s, rbuf, rcount * p, rdt, copy, (MPI_Aint)((size_t)p * nb), plx_coll_byte());
        sbuf = copy;
        scount = (MPI_Aint)nb;
        sdt = plx_coll_byte();
    }
    if (nb <= PLX_ALLTOALL_SHORT && p >= 8) {
        plx_alltoall_bruck(s, sbuf, scount, sdt, rbuf, rcount, rdt, nb);
        return;
    }
    if (p == 1) {
        plx_sched_copy(s, sbuf, scount, sdt, rbuf, rcount, rdt);
        return;
    }
    /* Below: the own block is copied once the first messages are posted,
     * while peers read this rank's data.
     * Above MEDIUM, pairwise exchange keeps one partner in flight (as MPICH
     * and Open MPI do, against contention), but each of its p-1 rounds waits
     * for the partner to be on a CPU. With more ranks than CPUs everything
     * at once wins: measured at 4 and 8 ranks on 2 cores, 64K-1M per peer,
     * 8 ranks 128K 900-1220 us pairwise against 720-830 at once, 1M
     * 9.5-10.0 ms against 7.7-8.6; 4 ranks 64K-256K 10-20 % less. */
    if (nb <= PLX_ALLTOALL_MEDIUM || plx_coll_node_oversubscribed()) {
        for (int i = 1; i < p; i++) {
            int src = (r - i + p) % p, dst = (r + i) % p;
            plx_sched_recv(s, plx_coll_blk(rbuf, src, rcount, rdt), rcount, rdt, src);
            plx_sched_send(s, plx_coll_blk(sbuf, dst, scount, sdt), scount, sdt, dst);
        }
        plx_sched_copy(s, plx_coll_blk(sbuf, r, scount, sdt), scount, sdt, plx_coll_blk(rbuf, r, rcount, rdt), rcount,
                       rdt);
        plx_sched_fence(s);
        return;
    }
    /* pairwise exchange: one partner per round, both directions at once */
    int pof2 = (p & (p - 1)) == 0;
    for (int i = 1; i < p; i++) {
        int src = pof2 ? r ^ i : (r - i + p) % p, dst = pof2 ? r ^ i : (r + i) % p;
        plx_sched_recv(s, plx_coll_blk(rbuf, src, rcount, rdt), rcount, rdt, src);
        plx_sched_send(s, plx_coll_blk(sbuf, dst, scount, sdt), scount, sdt, dst);
        if (i == 1)
            plx_sched_copy(s, plx_coll_blk(sbuf, r, scount, sdt), scount, sdt, plx_coll_blk(rbuf, r, rcount, rdt),
                           rcount, rdt);
        plx_sched_fence(s);
    }
}

void plx_coll_alltoallw_sched(struct plx_sched *s, const void *sbuf, const MPI_Count *scounts, const MPI_Aint *sdispls,
                              struct plx_datatype *const *sdts, void *rbuf, const MPI_Count *rcounts,
                              const MPI_Aint *rdispls, struct plx_datatype *const *rdts)
{
    int p = s->comm->size, r = s->comm->rank;
    MPI_Aint *pdispls = NULL;
    if (sbuf == MPI_IN_PLACE) {
        /* send from a packed copy of the receive buffer, block i at pdispls[i] */
        pdispls = plx_sched_alloc(s, (size_t)p * sizeof *pdispls);
        size_t total = 0;
        for (int i = 0; i < p; i++) {
            pdispls[i] = (MPI_Aint)total;
            total += (size_t)rcounts[i] * (size_t)rdts[i]->size;
        }
        char *copy = plx_sched_alloc(s, total);
        for (int i = 0; i < p; i++)
            plx_sched_copy(s, (char *)rbuf + rdispls[i], rcounts[i], rdts[i], copy + pdispls[i],
                           (MPI_Aint)((size_t)rcounts[i] * (size_t)rdts[i]->size), plx_coll_byte());
        plx_sched_fence(s);
        sbuf = copy;
    }
    {
        const char *sa = (const char *)sbuf + (pdispls ? pdispls[r] : sdispls[r]);
        MPI_Aint sc = pdispls ? (MPI_Aint)((size_t)rcounts[r] * (size_t)rdts[r]->size) : scounts[r];
        plx_sched_copy(s, sa, sc, pdispls ? plx_coll_byte() : sdts[r], (char *)rbuf + rdispls[r], rcounts[r],
                       rdts[r]);
    }
    int n = 0;
    for (int k = 1; k < p; k++) {
        int src = (r - k + p) % p, dst = (r + k) % p;
        if (rcounts[src] * rdts[src]->size > 0)
            plx_sched_recv(s, (char *)rbuf + rdispls[src], rcounts[src], rdts[src], src);
        const char *sa = (const char *)sbuf + (pdispls ? pdispls[dst] : sdispls[dst]);
        MPI_Aint sc = pdispls ? (MPI_Aint)((size_t)rcounts[dst] * (size_t)rdts[dst]->size) : scounts[dst];
        struct plx_datatype *st = pdispls ? plx_coll_byte() : sdts[dst];
        if (sc * st->size > 0)
            plx_sched_send(s, sa, sc, st, dst);
        if (++n == PLX_ALLTOALL_BATCH) {
            plx_sched_fence(s);
            n = 0;
        }
    }
    plx_sched_fence(s);
}

/* On a Cartesian topology neighbours come in pairs per dimension (-, +);
 * what a rank sends in the + direction its neighbour receives from its -
 * side, so the sub-tag is the direction of travel. That keeps the two
 * messages apart when one rank is both neighbours (a periodic dimension of
 * size 1 or 2). Graph topologies match in order. */
void plx_coll_neighbor_sched(struct plx_sched *s, int cart, int nin, const int *in, int nout, const int *out,
                             const void *sbuf, const MPI_Count *scounts, const MPI_Aint *sdispls,
                             struct plx_datatype *const *sdts, void *rbuf, const MPI_Count *rcounts,
                             const MPI_Aint *rdispls, struct plx_datatype *const *rdts)
{
    for (int i = 0; i < nin; i++)
        if (in[i] != MPI_PROC_NULL && rcounts[i] * rdts[i]->size > 0)
            plx_sched_recv_sub(s, (char *)rbuf + rdispls[i], rcounts[i], rdts[i], in[i], cart ? (i & 1) ^ 1 : 0);
    for (int j = 0; j < nout; j++)
        if (out[j] != MPI_PROC_NULL && scounts[j] * sdts[j]->size > 0)
            plx_sched_send_sub(s, (const char *)sbuf + sdispls[j], scounts[j], sdts[j], out[j], cart ? (j & 1) : 0);
    plx_sched_fence(s);
}
