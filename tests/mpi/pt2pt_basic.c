/*
 * pt2pt_basic.c - blocking and nonblocking send/receive, data fully checked.
 *
 * Pairs (rank ^ 1, or self) exchange every size from 0 B to 64 MiB (powers of 4
 * plus odd sizes) with blocking Send/Recv, receiving into a larger buffer whose
 * tail must stay untouched; payloads depend on sender, receiver, size and offset.
 * Then a ring and an all-pairs exchange with Isend/Irecv, status fields,
 * Get_count/Get_elements with several datatypes, and MPI_PROC_NULL.
 * Argument --max-size=N lowers the largest size.
 */
#include "plx_test.h"

static int rank, size;

enum { TAIL = 64 };

static const size_t sizes[] = {0,     1,     4,      7,      16,     64,      256,     1024,     4095,
                               4096,  16384, 65536,  65537,  262144, 1048575, 1048576, 4194304,
                               16777216, 67108864};

/* Send n bytes to peer and receive n bytes from it; deadlock-free order. */
static void exchange(int peer, const void *sbuf, void *rbuf, int scount, int rcount, MPI_Datatype t,
                     int tag, MPI_Status *st)
{
    if (peer == rank) {
        MPI_Request r;
        PLX_CHECK_MPI(MPI_Isend(sbuf, scount, t, peer, tag, MPI_COMM_WORLD, &r));
        PLX_CHECK_MPI(MPI_Recv(rbuf, rcount, t, peer, tag, MPI_COMM_WORLD, st));
        PLX_CHECK_MPI(MPI_Wait(&r, MPI_STATUS_IGNORE));
    } else if (rank < peer) {
        PLX_CHECK_MPI(MPI_Send(sbuf, scount, t, peer, tag, MPI_COMM_WORLD));
        PLX_CHECK_MPI(MPI_Recv(rbuf, rcount, t, peer, tag, MPI_COMM_WORLD, st));
    } else {
        PLX_CHECK_MPI(MPI_Recv(rbuf, rcount, t, peer, tag, MPI_COMM_WORLD, st));
        PLX_CHECK_MPI(MPI_Send(sbuf, scount, t, peer, tag, MPI_COMM_WORLD));
    }
}

static void test_pairs(size_t max_size)
{
    int peer = plx_pair_peer(rank, size);
    unsigned char *sbuf = plx_malloc(max_size), *rbuf = plx_malloc(max_size + TAIL);

    for (int k = 0; k < (int)(sizeof sizes / sizeof sizes[0]); k++) {
        size_t n = sizes[k];
        MPI_Datatype t = MPI_BYTE;
        int esz = 1, count, got = -1;
        MPI_Status st;
        MPI_Count elems = -1;

        if (n > max_size)
            break;
        if (n % 8 == 0 && k % 2) {
            t = MPI_DOUBLE;
            esz = 8;
        } else if (n % 4 == 0) {
            t = MPI_INT;
            esz = 4;
        }
        count = (int)(n / (size_t)esz);
        plx_fill(sbuf, n, plx_seed((uint32_t)rank, (uint32_t)peer, (uint32_t)n, 1));
        memset(rbuf, 0xEE, n + TAIL);
        /* Receive buffer larger than the message: count must say the actual size. */
        exchange(peer, sbuf, rbuf, count, count + TAIL / esz, t, k, &st);
        PLX_CHECK_PATTERN(rbuf, n, plx_seed((uint32_t)peer, (uint32_t)rank, (uint32_t)n, 1), "pair exchange");
        PLX_CHECK_BYTES(rbuf + n, TAIL, 0xEE, "bytes past the message in the receive buffer");
        PLX_CHECK_STATUS(st, peer, k, n);
        MPI_Get_count(&st, t, &got);
        PLX_CHECK_EQ(got, count, "Get_count in the message's datatype");
        MPI_Get_elements_x(&st, t, &elems);
        PLX_CHECK_EQ(elems, count, "Get_elements_x in the message's datatype");
        if (n % 4) {
            MPI_Get_count(&st, MPI_INT, &got);
            PLX_CHECK_EQ(got, MPI_UNDEFINED, "Get_count(MPI_INT) of a message not a multiple of 4");
            MPI_Get_elements(&st, MPI_INT, &got);
            PLX_CHECK_EQ(got, MPI_UNDEFINED, "Get_elements(MPI_INT) of a message not a multiple of 4");
        }
    }
    free(sbuf);
    free(rbuf);
}

static void test_any_source_pairs(void)
{
    int peer = plx_pair_peer(rank, size), in[3] = {-1, -1, -1}, out[3] = {rank, 77, -rank};
    MPI_Request r;
    MPI_Status st;
    MPI_Comm comm; /* only the pair peer sends to me on it */

    PLX_CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &comm));
    PLX_CHECK_MPI(MPI_Irecv(in, 3, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, comm, &r));
    PLX_CHECK_MPI(MPI_Send(out, 3, MPI_INT, peer, 1234, comm));
    PLX_CHECK_MPI(MPI_Wait(&r, &st));
    PLX_CHECK_MPI(MPI_Comm_free(&comm));
    PLX_CHECK_STATUS(st, peer, 1234, 3 * sizeof(int));
    PLX_CHECK(in[0] == peer && in[1] == 77 && in[2] == -peer, "ANY_SOURCE/ANY_TAG receive data");
}

static void test_ring(void)
{
    static const size_t ring_sizes[] = {0, 1, 65537, 1 << 20};
    int right = (rank + 1) % size, left = (rank + size - 1) % size;

    for (int k = 0; k < 4; k++) {
        size_t n = ring_sizes[k];
        unsigned char *s = plx_malloc(n), *r = plx_malloc(n);
        MPI_Request req;
        MPI_Status st;

        plx_fill(s, n, plx_seed((uint32_t)rank, 2, (uint32_t)n, 0));
        PLX_CHECK_MPI(MPI_Irecv(r, (int)n, MPI_BYTE, left, 100 + k, MPI_COMM_WORLD, &req));
        PLX_CHECK_MPI(MPI_Send(s, (int)n, MPI_BYTE, right, 100 + k, MPI_COMM_WORLD));
        PLX_CHECK_MPI(MPI_Wait(&req, &st));
        PLX_CHECK(req == MPI_REQUEST_NULL, "Wait sets the request to MPI_REQUEST_NULL");
        PLX_CHECK_STATUS(st, left, 100 + k, n);
        PLX_CHECK_PATTERN(r, n, plx_seed((uint32_t)left, 2, (uint32_t)n, 0), "ring");
        free(s);
        free(r);
    }
}

static void test_all_pairs(void)
{
    static const size_t ap_sizes[] = {7, 100000};

    for (int k = 0; k < 2; k++) {
        size_t n = ap_sizes[k];
        unsigned char *s = plx_malloc(n * (size_t)size), *r = plx_malloc(n * (size_t)size);
        MPI_Request *reqs = plx_malloc(sizeof(MPI_Request) * 2 * (size_t)size);
        MPI_Status *sts = plx_malloc(sizeof(MPI_Status) * 2 * (size_t)size);

        for (int p = 0; p < size; p++) {
            plx_fill(s + (size_t)p * n, n, plx_seed((uint32_t)rank, (uint32_t)p, (uint32_t)n, 3));
            PLX_CHECK_MPI(MPI_Irecv(r + (size_t)p * n, (int)n, MPI_BYTE, p, 200 + k, MPI_COMM_WORLD, &reqs[p]));
        }
        for (int i = 0; i < size; i++) {
            int p = (rank + i) % size;
            PLX_CHECK_MPI(MPI_Isend(s + (size_t)p * n, (int)n, MPI_BYTE, p, 200 + k, MPI_COMM_WORLD,
                                    &reqs[size + i]));
        }
        PLX_CHECK_MPI(MPI_Waitall(2 * size, reqs, sts));
        for (int p = 0; p < size; p++) {
            PLX_CHECK_STATUS(sts[p], p, 200 + k, n);
            PLX_CHECK_PATTERN(r + (size_t)p * n, n, plx_seed((uint32_t)p, (uint32_t)rank, (uint32_t)n, 3),
                              "all-pairs");
        }
        free(s);
        free(r);
        free(reqs);
        free(sts);
    }
}

static void test_proc_null(void)
{
    int buf[4] = {9, 9, 9, 9}, count = -1;
    MPI_Status st;
    MPI_Request req;

    PLX_CHECK_MPI(MPI_Send(buf, 4, MPI_INT, MPI_PROC_NULL, 5, MPI_COMM_WORLD));
    memset(&st, 0x55, sizeof st);
    PLX_CHECK_MPI(MPI_Recv(buf, 4, MPI_INT, MPI_PROC_NULL, 5, MPI_COMM_WORLD, &st));
    PLX_CHECK_EMPTY_STATUS(st, MPI_PROC_NULL);
    MPI_Get_count(&st, MPI_INT, &count);
    PLX_CHECK_EQ(count, 0, "Get_count(MPI_INT) after Recv from MPI_PROC_NULL");
    PLX_CHECK(buf[0] == 9 && buf[3] == 9, "Recv from MPI_PROC_NULL leaves the buffer");

    PLX_CHECK_MPI(MPI_Irecv(buf, 4, MPI_INT, MPI_PROC_NULL, MPI_ANY_TAG, MPI_COMM_WORLD, &req));
    PLX_CHECK_MPI(MPI_Wait(&req, &st));
    if (!plx_lib_is("MPICH Version:")) /* MPICH 4.0 returns source 0, tag 0 here */
        PLX_CHECK_EMPTY_STATUS(st, MPI_PROC_NULL);
    PLX_CHECK(req == MPI_REQUEST_NULL, "Irecv from MPI_PROC_NULL completes");
    PLX_CHECK_MPI(MPI_Isend(buf, 4, MPI_INT, MPI_PROC_NULL, 5, MPI_COMM_WORLD, &req));
    PLX_CHECK_MPI(MPI_Wait(&req, &st));
    PLX_CHECK(req == MPI_REQUEST_NULL, "Isend to MPI_PROC_NULL completes");
    memset(&st, 0x55, sizeof st);
    PLX_CHECK_MPI(MPI_Sendrecv(buf, 4, MPI_INT, MPI_PROC_NULL, 1, buf, 4, MPI_INT, MPI_PROC_NULL, 1,
                               MPI_COMM_WORLD, &st));
    PLX_CHECK_EMPTY_STATUS(st, MPI_PROC_NULL);
    PLX_CHECK(buf[0] == 9 && buf[3] == 9, "Sendrecv with MPI_PROC_NULL leaves the buffer");
}

/* A few messages with MPI_STATUS_IGNORE and basic datatypes of other sizes. */
static void test_types(void)
{
    int peer = plx_pair_peer(rank, size);
    double d[5] = {1.5, -2.25, 1e300, 0.0, 3.0 + rank}, din[5];
    long long ll[3] = {1LL << 40, -5, rank}, llin[3];
    char c[5] = "abcd", cin[5];
    MPI_Status st;
    int n = -1;

    exchange(peer, d, din, 5, 5, MPI_DOUBLE, 300, &st);
    PLX_CHECK(din[0] == 1.5 && din[1] == -2.25 && din[2] == 1e300 && din[4] == 3.0 + peer, "MPI_DOUBLE data");
    MPI_Get_count(&st, MPI_DOUBLE, &n);
    PLX_CHECK_EQ(n, 5, "Get_count(MPI_DOUBLE)");
    exchange(peer, ll, llin, 3, 3, MPI_LONG_LONG, 301, &st);
    PLX_CHECK(llin[0] == 1LL << 40 && llin[1] == -5 && llin[2] == peer, "MPI_LONG_LONG data");
    exchange(peer, c, cin, 5, 5, MPI_CHAR, 302, MPI_STATUS_IGNORE);
    PLX_CHECK_STR(cin, "abcd", "MPI_CHAR data with MPI_STATUS_IGNORE");
}

int main(int argc, char **argv)
{
    size_t max_size = 64u << 20;

    plx_test_init(&argc, &argv, "pt2pt_basic");
    rank = plx_test_state()->rank;
    size = plx_test_state()->size;
    for (int i = 1; i < argc; i++)
        if (strncmp(argv[i], "--max-size=", 11) == 0)
            max_size = (size_t)strtoull(argv[i] + 11, NULL, 0);

    test_pairs(max_size);
    test_any_source_pairs();
    test_ring();
    test_all_pairs();
    test_proc_null();
    test_types();
    return plx_test_finish();
}
