/*
 * Large one-sided transfers, the data checked at both ends: every rank
 * moves about a MiB to and from its right neighbour, which on the message
 * path (TCP, or PLEXUS_RMA_SHM=0) goes as several pieces. Sizes are chosen
 * so that no piece boundary falls on a round number: a put of 1 MiB + 5
 * bytes at an odd displacement, the get of it back, a put from a strided
 * (vector) origin into the contiguous target, an accumulate (SUM) of
 * 300,001 ints, and a get_accumulate (SUM) of 150,001 doubles whose old
 * values come back. Under lock (exclusive, to the right neighbour) and
 * under fence, on a created, an allocated and a dynamic window.
 *
 * Window layout (bytes of each rank's window, disp_unit 1):
 *   [3, 3 + PUTN)                   the put, then read back by the get
 *   [A, A + ACCN * 4)               ints, every element += left neighbour's value
 *   [G, G + GACCN * 8)              doubles, get_accumulate
 *   [V, V + VECN * 4)               ints written from a vector origin
 */
#include "plx_test.h"

#define PUTN ((size_t)(1 << 20) + 5)
#define ACCN 300001
#define GACCN 150001
#define VECN 70001
#define A ((MPI_Aint)(1 << 20) + 64)
#define G (A + (MPI_Aint)ACCN * 4 + 60)
#define V (G + (MPI_Aint)GACCN * 8 + 40)
#define WSIZE ((size_t)V + (size_t)VECN * 4 + 16)

enum { F_CREATE, F_ALLOCATE, F_DYNAMIC, F_NFLAV };
static const char *flav_name[] = { "create", "allocate", "dynamic" };
static int rank, size;
static MPI_Aint *dbase;         /* dynamic: every rank's region address */

static MPI_Aint D(int flav, int target, MPI_Aint off)
{
    return flav == F_DYNAMIC ? dbase[target] + off : off;
}

/* Local loads and stores of the window against others' RMA: a memory barrier
 * inside a passive epoch (MPI_Win_sync is erroneous outside one). */
static void local_sync(MPI_Win win)
{
    PLX_CHECK_MPI(MPI_Win_lock_all(0, win));
    PLX_CHECK_MPI(MPI_Win_sync(win));
    PLX_CHECK_MPI(MPI_Win_unlock_all(win));
}

static void round_trip(MPI_Win win, unsigned char *mem, int flav, int fence, int round)
{
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    char what[160];
    const char *how = fence ? "fence" : "lock";
    memset(mem, 0, WSIZE);
    for (size_t i = 0; i < ACCN; i++)
        ((int *)(mem + A))[i] = (int)i;
    for (size_t i = 0; i < GACCN; i++)
        ((double *)(mem + G))[i] = (double)i * 0.5;
    local_sync(win);
    MPI_Barrier(MPI_COMM_WORLD);

    unsigned char *put = plx_malloc(PUTN), *got = plx_malloc(PUTN);
    int *acc = plx_malloc(ACCN * sizeof(int)), *vsrc = plx_malloc(2 * VECN * sizeof(int));
    double *gacc = plx_malloc(GACCN * sizeof(double)), *old = plx_malloc(GACCN * sizeof(double));
    uint32_t seed = plx_seed((uint32_t)rank, (uint32_t)right, (uint32_t)flav, (uint32_t)round);
    plx_fill(put, PUTN, seed);
    memset(got, 0xee, PUTN);
    for (int i = 0; i < ACCN; i++)
        acc[i] = rank + 1 + i % 7;
    for (int i = 0; i < GACCN; i++) {
        gacc[i] = (double)(rank + 1);
        old[i] = -1.0;
    }
    for (int i = 0; i < 2 * VECN; i++)
        vsrc[i] = i % 2 ? -1 : rank * 1000003 + i / 2;
    MPI_Datatype vec;
    MPI_Type_vector(VECN, 1, 2, MPI_INT, &vec);
    MPI_Type_commit(&vec);

    /* writes */
    if (fence)
        PLX_CHECK_MPI(MPI_Win_fence(0, win));
    else
        PLX_CHECK_MPI(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, right, 0, win));
    PLX_CHECK_MPI(MPI_Put(put, (int)PUTN, MPI_BYTE, right, D(flav, right, 3), (int)PUTN, MPI_BYTE, win));
    PLX_CHECK_MPI(MPI_Put(vsrc, 1, vec, right, D(flav, right, V), VECN, MPI_INT, win));
    PLX_CHECK_MPI(MPI_Accumulate(acc, ACCN, MPI_INT, right, D(flav, right, A), ACCN, MPI_INT, MPI_SUM, win));
    PLX_CHECK_MPI(MPI_Get_accumulate(gacc, GACCN, MPI_DOUBLE, old, GACCN, MPI_DOUBLE, right, D(flav, right, G),
                                     GACCN, MPI_DOUBLE, MPI_SUM, win));
    if (fence)
        PLX_CHECK_MPI(MPI_Win_fence(0, win));
    else
        PLX_CHECK_MPI(MPI_Win_unlock(right, win));

    /* the old values came back whole */
    long bad = -1;
    for (int i = 0; i < GACCN && bad < 0; i++)
        if (old[i] != (double)i * 0.5)
            bad = i;
    snprintf(what, sizeof what, "%s window, %s: get_accumulate's old value %ld of %d", flav_name[flav], how, bad,
             GACCN);
    PLX_CHECK(bad < 0, "%s", what);

    /* reads: the put back from the right neighbour */
    if (fence)
        PLX_CHECK_MPI(MPI_Win_fence(0, win));
    else
        PLX_CHECK_MPI(MPI_Win_lock(MPI_LOCK_SHARED, right, 0, win));
    PLX_CHECK_MPI(MPI_Get(got, (int)PUTN, MPI_BYTE, right, D(flav, right, 3), (int)PUTN, MPI_BYTE, win));
    if (fence)
        PLX_CHECK_MPI(MPI_Win_fence(0, win));
    else
        PLX_CHECK_MPI(MPI_Win_unlock(right, win));
    snprintf(what, sizeof what, "%s window, %s: get of the %zu bytes put", flav_name[flav], how, PUTN);
    PLX_CHECK_PATTERN(got, PUTN, seed, what);

    /* what the left neighbour wrote here */
    MPI_Barrier(MPI_COMM_WORLD);
    local_sync(win);
    uint32_t lseed = plx_seed((uint32_t)left, (uint32_t)rank, (uint32_t)flav, (uint32_t)round);
    snprintf(what, sizeof what, "%s window, %s: the put from rank %d", flav_name[flav], how, left);
    PLX_CHECK_PATTERN(mem + 3, PUTN, lseed, what);
    PLX_CHECK_BYTES(mem, 3, 0, "bytes before the put");
    PLX_CHECK_BYTES(mem + 3 + PUTN, (size_t)(A - 3 - (MPI_Aint)PUTN), 0, "bytes after the put");
    bad = -1;
    for (int i = 0; i < ACCN && bad < 0; i++) {
        int v;
        memcpy(&v, mem + A + (size_t)i * 4, 4);
        if (v != i + left + 1 + i % 7)
            bad = i;
    }
    snprintf(what, sizeof what, "%s window, %s: accumulated int %ld of %d", flav_name[flav], how, bad, ACCN);
    PLX_CHECK(bad < 0, "%s", what);
    bad = -1;
    for (int i = 0; i < GACCN && bad < 0; i++) {
        double v;
        memcpy(&v, mem + G + (size_t)i * 8, 8);
        if (v != (double)i * 0.5 + (double)(left + 1))
            bad = i;
    }
    snprintf(what, sizeof what, "%s window, %s: get_accumulated double %ld of %d", flav_name[flav], how, bad, GACCN);
    PLX_CHECK(bad < 0, "%s", what);
    bad = -1;
    for (int i = 0; i < VECN && bad < 0; i++) {
        int v;
        memcpy(&v, mem + V + (size_t)i * 4, 4);
        if (v != left * 1000003 + i)
            bad = i;
    }
    snprintf(what, sizeof what, "%s window, %s: int %ld of %d from the vector origin", flav_name[flav], how, bad,
             VECN);
    PLX_CHECK(bad < 0, "%s", what);
    MPI_Barrier(MPI_COMM_WORLD);

    MPI_Type_free(&vec);
    free(put);
    free(got);
    free(acc);
    free(vsrc);
    free(gacc);
    free(old);
}

int main(int argc, char **argv)
{
    plx_test_init(&argc, &argv, "rma_stream");
    rank = plx_test_state()->rank;
    size = plx_test_state()->size;
    dbase = calloc((size_t)size, sizeof *dbase);
    for (int flav = 0; flav < F_NFLAV; flav++) {
        MPI_Win win;
        unsigned char *mem = NULL;
        void *region = NULL;
        if (flav == F_CREATE) {
            MPI_Alloc_mem((MPI_Aint)WSIZE, MPI_INFO_NULL, &mem);
            PLX_CHECK_MPI(MPI_Win_create(mem, (MPI_Aint)WSIZE, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win));
        } else if (flav == F_ALLOCATE) {
            PLX_CHECK_MPI(MPI_Win_allocate((MPI_Aint)WSIZE, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
        } else {
            PLX_CHECK_MPI(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win));
            region = plx_malloc(WSIZE);
            mem = region;
            PLX_CHECK_MPI(MPI_Win_attach(win, region, (MPI_Aint)WSIZE));
        }
        MPI_Aint mine = 0;
        if (flav == F_DYNAMIC)
            MPI_Get_address(mem, &mine);
        MPI_Allgather(&mine, 1, MPI_AINT, dbase, 1, MPI_AINT, MPI_COMM_WORLD);
        for (int round = 0; round < 2; round++)
            round_trip(win, mem, flav, round == 1, round);
        if (flav == F_DYNAMIC)
            PLX_CHECK_MPI(MPI_Win_detach(win, region));
        PLX_CHECK_MPI(MPI_Win_free(&win));
        if (flav == F_CREATE)
            MPI_Free_mem(mem);
        free(region);
    }
    free(dbase);
    return plx_test_finish();
}
