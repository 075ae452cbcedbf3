/*
 * rndv.c - rendezvous messages of awkward sizes and in awkward situations.
 *
 * Over shared memory a large message is copied by the receiver and the
 * waiting sender together (chunks claimed from a shared slot); this test
 * covers what can go wrong there and in the other rendezvous paths:
 *  1. sizes around the chunking (just below/above the eager limit, odd
 *     sizes, sizes that are not a multiple of a page or of a chunk);
 *  2. a receive buffer smaller than the message: MPI_ERR_TRUNCATE, the
 *     prefix delivered, and not one byte written past the buffer;
 *  3. a non-contiguous receive type (a vector);
 *  4. a sender busy computing outside MPI while the receiver reads (the
 *     receiver must finish alone);
 *  5. more large receives in flight at once than there are shared slots;
 *  6. both directions at once, several messages each;
 *  7. non-contiguous types with large blocks (moved without packing over
 *     shared memory): vector to contiguous, contiguous to vector, vector to
 *     vector, and a vector sent into a smaller receive (truncation);
 *  8. a large vector of small blocks sent (packed fragment by fragment as it
 *     streams) into a contiguous and into a vector receive.
 * Pairs are rank ^ 1; a rank without a partner sends to itself. Run with the
 * default settings, PLEXUS_SHM_COOP_MIN=0 (the receiver always copies alone)
 * and PLEXUS_SHM_CMA=0 (streamed fragments).
 */
#include "plx_test.h"
#include <time.h>

static int rank, size, peer;

static uint32_t seed_of(int from, int to, size_t n, int round)
{
    return plx_seed((uint32_t)from, (uint32_t)to, (uint32_t)n, (uint32_t)round);
}

/* One message each way between the pair, n bytes, receive buffer of cap bytes. */
static void exchange(size_t n, int round)
{
    unsigned char *s = plx_malloc(n), *r = plx_malloc(n + 64);
    MPI_Request req[2];
    MPI_Status st[2];
    plx_fill(s, n, seed_of(rank, peer, n, round));
    memset(r, 0xa5, n + 64);
    PLX_CHECK_MPI(MPI_Irecv(r, (int)n, MPI_BYTE, peer, round, MPI_COMM_WORLD, &req[0]));
    PLX_CHECK_MPI(MPI_Isend(s, (int)n, MPI_BYTE, peer, round, MPI_COMM_WORLD, &req[1]));
    PLX_CHECK_MPI(MPI_Waitall(2, req, st));
    PLX_CHECK_STATUS(st[0], peer, round, (int)n);
    PLX_CHECK_PATTERN(r, n, seed_of(peer, rank, n, round), "rendezvous message");
    PLX_CHECK_BYTES(r + n, 64, 0xa5, "bytes after the receive buffer");
    free(s);
    free(r);
}

static void truncated(size_t n, size_t cap)
{
    unsigned char *s = plx_malloc(n), *r = plx_malloc(cap + 4096);
    MPI_Request req;
    MPI_Status st;
    plx_fill(s, n, seed_of(rank, peer, n, 20));
    memset(r, 0x5a, cap + 4096);
    PLX_CHECK_MPI(MPI_Isend(s, (int)n, MPI_BYTE, peer, 20, MPI_COMM_WORLD, &req));
    PLX_CHECK_ERR(MPI_Recv(r, (int)cap, MPI_BYTE, peer, 20, MPI_COMM_WORLD, &st), MPI_ERR_TRUNCATE);
    PLX_CHECK_MPI(MPI_Wait(&req, MPI_STATUS_IGNORE));
    PLX_CHECK_PATTERN(r, cap, seed_of(peer, rank, n, 20), "prefix of a truncated message");
    PLX_CHECK_BYTES(r + cap, 4096, 0x5a, "bytes after a truncated receive");
    free(s);
    free(r);
}

/* Receive n ints as a vector: every other int of a 2n-int buffer. */
static void vector_recv(size_t nints)
{
    int *s = plx_malloc(nints * sizeof(int)), *r = plx_malloc(2 * nints * sizeof(int));
    MPI_Datatype every_other;
    MPI_Request req;
    MPI_Status st;
    int cnt = -1;
    for (size_t i = 0; i < nints; i++)
        s[i] = (int)(i * 7 + (size_t)rank * 1000003);
    for (size_t i = 0; i < 2 * nints; i++)
        r[i] = -1;
    MPI_Type_vector((int)nints, 1, 2, MPI_INT, &every_other);
    MPI_Type_commit(&every_other);
    PLX_CHECK_MPI(MPI_Isend(s, (int)nints, MPI_INT, peer, 30, MPI_COMM_WORLD, &req));
    PLX_CHECK_MPI(MPI_Recv(r, 1, every_other, peer, 30, MPI_COMM_WORLD, &st));
    PLX_CHECK_MPI(MPI_Wait(&req, MPI_STATUS_IGNORE));
    MPI_Get_count(&st, MPI_INT, &cnt);
    PLX_CHECK_EQ(cnt, (int)nints, "Get_count of a vector receive in MPI_INT");
    size_t bad = 2 * nints;
    for (size_t i = 0; i < 2 * nints && bad == 2 * nints; i++) {
        int want = i % 2 ? -1 : (int)((i / 2) * 7 + (size_t)peer * 1000003);
        if (r[i] != want)
            bad = i;
    }
    PLX_CHECK(bad == 2 * nints, "vector receive: int %zu wrong", bad);
    MPI_Type_free(&every_other);
    free(s);
    free(r);
}

/* Send nints ints as every other int of a 2*nints buffer; receive them
 * contiguous (rvec 0) or as every third int (rvec 1). */
static void small_blocks_send(size_t nints, int rvec)
{
    int *s = plx_malloc(2 * nints * sizeof(int)), *r = plx_malloc(3 * nints * sizeof(int));
    MPI_Datatype sv, rv;
    MPI_Request req;
    MPI_Status st;
    int cnt = -1;
    for (size_t i = 0; i < 2 * nints; i++)
        s[i] = i % 2 ? -7 : (int)((i / 2) * 3 + (size_t)rank * 1000003);
    for (size_t i = 0; i < 3 * nints; i++)
        r[i] = -1;
    MPI_Type_vector((int)nints, 1, 2, MPI_INT, &sv);
    MPI_Type_vector((int)nints, 1, 3, MPI_INT, &rv);
    MPI_Type_commit(&sv);
    MPI_Type_commit(&rv);
    PLX_CHECK_MPI(MPI_Isend(s, 1, sv, peer, 60 + rvec, MPI_COMM_WORLD, &req));
    if (rvec)
        PLX_CHECK_MPI(MPI_Recv(r, 1, rv, peer, 60 + rvec, MPI_COMM_WORLD, &st));
    else
        PLX_CHECK_MPI(MPI_Recv(r, (int)nints, MPI_INT, peer, 60 + rvec, MPI_COMM_WORLD, &st));
    PLX_CHECK_MPI(MPI_Wait(&req, MPI_STATUS_IGNORE));
    MPI_Get_count(&st, MPI_INT, &cnt);
    PLX_CHECK_EQ(cnt, (int)nints, "Get_count of a small-block vector message");
    size_t bad = 3 * nints;
    for (size_t i = 0; i < 3 * nints && bad == 3 * nints; i++) {
        int data = rvec ? i % 3 == 0 : i < nints;
        size_t k = rvec ? i / 3 : i;
        int want = data ? (int)(k * 3 + (size_t)peer * 1000003) : -1;
        if (r[i] != want)
            bad = i;
    }
    PLX_CHECK(bad == 3 * nints, "small-block vector send (receive %s): int %zu wrong",
              rvec ? "as a vector" : "contiguous", bad);
    MPI_Type_free(&sv);
    MPI_Type_free(&rv);
    free(s);
    free(r);
}

static void busy_for(double seconds)
{
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    volatile unsigned long x = 0;
    do {
        for (int i = 0; i < 10000; i++)
            x += (unsigned long)i;
        clock_gettime(CLOCK_MONOTONIC, &t);
    } while ((double)(t.tv_sec - t0.tv_sec) + (double)(t.tv_nsec - t0.tv_nsec) * 1e-9 < seconds);
    (void)x; /* the volatile sum is what keeps the loop; read it once (Clang: set but not used) */
}

/* The lower rank sends and then computes; the higher one receives. */
static void busy_sender(size_t n)
{
    unsigned char *b = plx_malloc(n);
    MPI_Request req;
    MPI_Status st;
    if (rank < peer) {
        plx_fill(b, n, seed_of(rank, peer, n, 40));
        PLX_CHECK_MPI(MPI_Isend(b, (int)n, MPI_BYTE, peer, 40, MPI_COMM_WORLD, &req));
        busy_for(0.05);
        PLX_CHECK_MPI(MPI_Wait(&req, MPI_STATUS_IGNORE));
    } else if (rank > peer) {
        memset(b, 0, n);
        PLX_CHECK_MPI(MPI_Recv(b, (int)n, MPI_BYTE, peer, 40, MPI_COMM_WORLD, &st));
        PLX_CHECK_STATUS(st, peer, 40, (int)n);
        PLX_CHECK_PATTERN(b, n, seed_of(peer, rank, n, 40), "message from a busy sender");
    }
    free(b);
}

/* k messages of n bytes each way, all posted at once. */
static void many(int k, size_t n, int round)
{
    unsigned char *s = plx_malloc((size_t)k * n), *r = plx_malloc((size_t)k * n);
    MPI_Request *req = plx_malloc(2 * (size_t)k * sizeof *req);
    MPI_Status *st = plx_malloc(2 * (size_t)k * sizeof *st);
    for (int i = 0; i < k; i++)
        plx_fill(s + (size_t)i * n, n, seed_of(rank, peer, n, round + i));
    memset(r, 0, (size_t)k * n);
    for (int i = 0; i < k; i++)
        PLX_CHECK_MPI(MPI_Irecv(r + (size_t)i * n, (int)n, MPI_BYTE, peer, round + i, MPI_COMM_WORLD, &req[i]));
    for (int i = 0; i < k; i++)
        PLX_CHECK_MPI(MPI_Isend(s + (size_t)i * n, (int)n, MPI_BYTE, peer, round + i, MPI_COMM_WORLD, &req[k + i]));
    PLX_CHECK_MPI(MPI_Waitall(2 * k, req, st));
    for (int i = 0; i < k; i++) {
        PLX_CHECK_STATUS(st[i], peer, round + i, (int)n);
        PLX_CHECK_PATTERN(r + (size_t)i * n, n, seed_of(peer, rank, n, round + i), "one of many in flight");
    }
    free(s);
    free(r);
    free(req);
    free(st);
}

/* Blocks of 128 doubles every 200 doubles. */
enum { VB = 128, VS = 200 };

static double vval(int from, size_t i)
{
    return (double)from * 1e7 + (double)i;
}

/* Send `nblk` blocks as svec (or contiguous), receive into rcap blocks as
 * rvec (or contiguous); checks data, gaps and the error class. */
static void big_blocks(int nblk, int svec, int rvec, int rcap)
{
    size_t sn = (size_t)nblk * (svec ? VS : VB), rn = (size_t)rcap * (rvec ? VS : VB) + 64;
    double *s = plx_malloc(sn * sizeof(double)), *r = plx_malloc(rn * sizeof(double));
    MPI_Datatype sv, rv;
    MPI_Request req;
    MPI_Status st;
    int truncating = rcap < nblk, cnt = -1;
    for (size_t i = 0; i < sn; i++)
        s[i] = svec && i % VS >= VB ? -2.0 : vval(rank, svec ? (i / VS) * VB + i % VS : i);
    for (size_t i = 0; i < rn; i++)
        r[i] = -1.0;
    MPI_Type_vector(nblk, VB, VS, MPI_DOUBLE, &sv);
    MPI_Type_vector(rcap, VB, VS, MPI_DOUBLE, &rv);
    MPI_Type_commit(&sv);
    MPI_Type_commit(&rv);
    int tag = 50 + svec * 2 + rvec;
    if (svec)
        PLX_CHECK_MPI(MPI_Isend(s, 1, sv, peer, tag, MPI_COMM_WORLD, &req));
    else
        PLX_CHECK_MPI(MPI_Isend(s, nblk * VB, MPI_DOUBLE, peer, tag, MPI_COMM_WORLD, &req));
    int rc = rvec ? MPI_Recv(r, 1, rv, peer, tag, MPI_COMM_WORLD, &st)
                  : MPI_Recv(r, rcap * VB, MPI_DOUBLE, peer, tag, MPI_COMM_WORLD, &st);
    int cls = -1;
    MPI_Error_class(rc, &cls);
    PLX_CHECK_EQ(cls, truncating ? MPI_ERR_TRUNCATE : MPI_SUCCESS, "error class of a large-block receive");
    PLX_CHECK_MPI(MPI_Wait(&req, MPI_STATUS_IGNORE));
    if (!truncating) {
        MPI_Get_count(&st, MPI_DOUBLE, &cnt);
        PLX_CHECK_EQ(cnt, nblk * VB, "Get_count of a large-block message");
    }
    size_t bad = rn;
    for (size_t i = 0; i < rn && bad == rn; i++) {
        size_t blk = rvec ? i / VS : i / VB, in = rvec ? i % VS : i % VB;
        int data = blk < (size_t)rcap && in < VB;
        double want = data ? vval(peer, blk * VB + in) : -1.0;
        if (r[i] != want)
            bad = i;
    }
    PLX_CHECK(bad == rn, "large blocks (send %s, receive %s, %d of %d blocks): double %zu wrong",
              svec ? "vector" : "contiguous", rvec ? "vector" : "contiguous", rcap, nblk, bad);
    MPI_Type_free(&sv);
    MPI_Type_free(&rv);
    free(s);
    free(r);
}

int main(int argc, char **argv)
{
    static const size_t sizes[] = {
        8191, 8192, 8193, 12287, 12288, 12289, 16383, 16384, 16385, 65536 + 1, 131072 - 1, 131072, 131072 + 4095, 1 << 20,
        (1 << 20) + 13, 3 * (1 << 20) + 4097, 9 * (1 << 20) + 5,
    };
    plx_test_init(&argc, &argv, "rndv");
    rank = plx_test_state()->rank;
    size = plx_test_state()->size;
    peer = plx_pair_peer(rank, size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);

    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
        exchange(sizes[i], (int)i + 1);
    truncated(1 << 20, 300000);
    truncated(4 << 20, (1 << 20) + 7);
    vector_recv(300000);
    if (peer != rank)
        busy_sender(2 << 20);
    many(40, 256 * 1024, 100);
    many(3, 5 << 20, 200);
    big_blocks(2000, 1, 0, 2000);
    big_blocks(2000, 0, 1, 2000);
    big_blocks(2000, 1, 1, 2000);
    big_blocks(2000, 1, 1, 1500);
    big_blocks(2000, 1, 0, 777);
    small_blocks_send(500000, 0);
    small_blocks_send(500000, 1);
    small_blocks_send(5000, 0);

    return plx_test_finish();
}
