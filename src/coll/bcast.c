/*
 * Barrier and broadcast schedules (see algo.h for the choice of algorithm).
 */
#include "coll/algo.h"

#define PLX_BCAST_SHORT 12288   /* bytes: below, a binomial tree */

struct plx_datatype *plx_coll_byte(void)
{
    static struct plx_datatype *b;
    if (!b)
        b = plx_dt_lookup(MPI_BYTE);
    return b;
}

/* Dissemination: in round k everyone signals rank+2^k and hears rank-2^k;
 * after ceil(log2 p) rounds everyone has heard, transitively, from all. */
void plx_coll_barrier_sched(struct plx_sched *s)
{
    int p = s->comm->size, r = s->comm->rank;
    for (int k = 1; k < p; k <<= 1) {
        plx_sched_send(s, NULL, 0, plx_coll_byte(), (r + k) % p);
        plx_sched_recv(s, NULL, 0, plx_coll_byte(), (r - k + p) % p);
        plx_sched_fence(s);
    }
}

static void plx_bcast_binomial(struct plx_sched *s, void *buf, MPI_Aint count, struct plx_datatype *dt, int root)
{
    int p = s->comm->size, vr = (s->comm->rank - root + p) % p;
    int mask = 1;
    while (mask < p) {
        if (vr & mask) {
            plx_sched_recv(s, buf, count, dt, (vr - mask + root) % p);
            plx_sched_fence(s);
            break;
        }
        mask <<= 1;
    }
    for (mask >>= 1; mask > 0; mask >>= 1)
        if (vr + mask < p)
            plx_sched_send(s, buf, count, dt, (vr + mask + root) % p);
    plx_sched_fence(s);
}

/* Bytes [lo, hi) of the chunks of relative ranks [i, i + n). */
static void plx_chunks(size_t nbytes, size_t chunk, int i, int n, size_t *lo, size_t *hi)
{
    *lo = PLX_MIN((size_t)i * chunk, nbytes);
    *hi = PLX_MIN((size_t)(i + n) * chunk, nbytes);
}

/* Van de Geijn: the root's data is scattered in p chunks down a binomial
 * tree, then a ring allgather gives everyone every chunk: 2(p-1)/p of the
 * data crosses each link instead of log2(p) times all of it. */
static void plx_bcast_scatter_ring(struct plx_sched *s, void *buf, MPI_Aint count, struct plx_datatype *dt,
                                   int root)
{
    int p = s->comm->size, r = s->comm->rank, vr = (r - root + p) % p;
    size_t nbytes = (size_t)count * (size_t)dt->size;
    struct plx_datatype *byte = plx_coll_byte();
    char *data;
    if (dt->contig) {
        data = (char *)buf + dt->true_lb;
    } else {
        data = plx_sched_alloc(s, nbytes);
        if (r == root)
            plx_sched_copy(s, buf, count, dt, data, (MPI_Aint)nbytes, byte);
    }
    size_t chunk = (nbytes + (size_t)p - 1) / (size_t)p, lo, hi;
    int mask = 1;
    while (mask < p) {
        if (vr & mask) {
            plx_chunks(nbytes, chunk, vr, mask, &lo, &hi);
            plx_sched_recv(s, data + lo, (MPI_Aint)(hi - lo), byte, (vr - mask + root) % p);
            plx_sched_fence(s);
            break;
        }
        mask <<= 1;
    }
    for (mask >>= 1; mask > 0; mask >>= 1)
        if (vr + mask < p) {
            plx_chunks(nbytes, chunk, vr + mask, mask, &lo, &hi);
            plx_sched_send(s, data + lo, (MPI_Aint)(hi - lo), byte, (vr + mask + root) % p);
        }
    plx_sched_fence(s);
    int left = (r - 1 + p) % p, right = (r + 1) % p;
    for (int i = 0; i < p - 1; i++) {
        int si = (vr - i + p) % p, ri = (vr - i - 1 + p) % p;
        plx_chunks(nbytes, chunk, si, 1, &lo, &hi);
        plx_sched_send(s, data + lo, (MPI_Aint)(hi - lo), byte, right);
        plx_chunks(nbytes, chunk, ri, 1, &lo, &hi);
        plx_sched_recv(s, data + lo, (MPI_Aint)(hi - lo), byte, left);
        plx_sched_fence(s);
    }
    if (!dt->contig && r != root)
        plx_sched_copy(s, data, (MPI_Aint)nbytes, byte, buf, count, dt);
}

void plx_coll_bcast_sched(struct plx_sched *s, void *buf, MPI_Aint count, struct plx_datatype *dt, int root)
{
    int p = s->comm->size;
    size_t nbytes = (size_t)count * (size_t)dt->size;
    if (p == 1 || nbytes == 0)
        return;
    if (nbytes < PLX_BCAST_SHORT || p <= 2)
        plx_bcast_binomial(s, buf, count, dt, root);
    else
        plx_bcast_scatter_ring(s, buf, count, dt, root);
}
