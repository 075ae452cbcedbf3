/*
 * MPI_Isendrecv and MPI_Isendrecv_replace (MPI 4.0): ring exchanges of
 * small and rendezvous-sized messages, several outstanding at once and
 * completed in any order, with MPI_ANY_SOURCE/MPI_ANY_TAG, MPI_PROC_NULL
 * peers, a strided datatype, truncation reported through the request, and
 * argument errors. Every received byte is checked.
 */
#include "plx_test.h"

static int rank, size;

static void ring(size_t n, int round)
{
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    unsigned char *s = plx_malloc(n), *r = plx_malloc(n);
    plx_fill(s, n, plx_seed(rank, next, (uint32_t)n, (uint32_t)round));
    memset(r, 0, n);
    MPI_Request req;
    MPI_Status st;
    PLX_CHECK_MPI(MPI_Isendrecv(s, (int)n, MPI_BYTE, next, 5 + round, r, (int)n, MPI_BYTE, prev, 5 + round,
                                MPI_COMM_WORLD, &req));
    PLX_CHECK_MPI(MPI_Wait(&req, &st));
    PLX_CHECK(req == MPI_REQUEST_NULL, "request freed by MPI_Wait");
    PLX_CHECK_STATUS(st, prev, 5 + round, (int)n);
    PLX_CHECK_PATTERN(r, n, plx_seed(prev, rank, (uint32_t)n, (uint32_t)round), "Isendrecv ring data");

    /* in place */
    plx_fill(r, n, plx_seed(rank, 77, (uint32_t)n, (uint32_t)round));
    PLX_CHECK_MPI(MPI_Isendrecv_replace(r, (int)n, MPI_BYTE, next, 9, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD,
                                        &req));
    int flag = 0;
    for (int i = 0; !flag; i++) {
        PLX_CHECK_MPI(MPI_Test(&req, &flag, &st));
        plx_pause(i);
    }
    PLX_CHECK_STATUS(st, prev, 9, (int)n);
    PLX_CHECK_PATTERN(r, n, plx_seed(prev, 77, (uint32_t)n, (uint32_t)round), "Isendrecv_replace ring data");
    free(s);
    free(r);
    MPI_Barrier(MPI_COMM_WORLD);   /* the wildcard receive above must not see the next step's messages */
}

/* k exchanges in flight with every other rank at once, completed together. */
static void all_pairs(int k)
{
    int n = size * k;
    int *out = plx_malloc((size_t)n * 64 * sizeof(int)), *in = plx_malloc((size_t)n * 64 * sizeof(int));
    MPI_Request *reqs = plx_malloc((size_t)n * sizeof *reqs);
    MPI_Status *sts = plx_malloc((size_t)n * sizeof *sts);
    for (int p = 0; p < size; p++)
        for (int j = 0; j < k; j++) {
            int idx = p * k + j;
            for (int i = 0; i < 64; i++)
                out[idx * 64 + i] = rank * 1000000 + p * 1000 + j * 64 + i;
            PLX_CHECK_MPI(MPI_Isendrecv(&out[idx * 64], 64, MPI_INT, p, j, &in[idx * 64], 64, MPI_INT, p, j,
                                        MPI_COMM_WORLD, &reqs[idx]));
        }
    PLX_CHECK_MPI(MPI_Waitall(n, reqs, sts));
    for (int p = 0; p < size; p++)
        for (int j = 0; j < k; j++) {
            int idx = p * k + j, bad = 0;
            for (int i = 0; i < 64; i++)
                bad += in[idx * 64 + i] != p * 1000000 + rank * 1000 + j * 64 + i;
            PLX_CHECK_EQ(bad, 0, "all-pairs Isendrecv data");
            PLX_CHECK_EQ(sts[idx].MPI_SOURCE, p, "all-pairs source");
            PLX_CHECK_EQ(sts[idx].MPI_TAG, j, "all-pairs tag");
        }
    free(out), free(in), free(reqs), free(sts);
}

static void strided(void)
{
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    /* every other int of 2*100, received into a contiguous 100 */
    MPI_Datatype vec;
    MPI_Type_vector(100, 1, 2, MPI_INT, &vec);
    MPI_Type_commit(&vec);
    int s[200], r[100];
    for (int i = 0; i < 200; i++)
        s[i] = i % 2 ? -1 : rank * 1000 + i / 2;
    MPI_Request req;
    MPI_Status st;
    PLX_CHECK_MPI(MPI_Isendrecv(s, 1, vec, next, 3, r, 100, MPI_INT, prev, 3, MPI_COMM_WORLD, &req));
    PLX_CHECK_MPI(MPI_Wait(&req, &st));
    int bad = 0;
    for (int i = 0; i < 100; i++)
        bad += r[i] != prev * 1000 + i;
    PLX_CHECK_EQ(bad, 0, "strided Isendrecv data");
    /* replace with the strided type: the odd slots stay as they were */
    for (int i = 0; i < 200; i++)
        s[i] = i % 2 ? -7 : rank * 1000 + i;
    PLX_CHECK_MPI(MPI_Isendrecv_replace(s, 1, vec, next, 4, prev, 4, MPI_COMM_WORLD, &req));
    PLX_CHECK_MPI(MPI_Wait(&req, &st));
    bad = 0;
    for (int i = 0; i < 200; i++)
        bad += s[i] != (i % 2 ? -7 : prev * 1000 + i);
    PLX_CHECK_EQ(bad, 0, "strided Isendrecv_replace data and gaps");
    MPI_Type_free(&vec);
}

static void edges(void)
{
    MPI_Request req;
    MPI_Status st;
    int x = 42, y = -1;
    /* both peers MPI_PROC_NULL: completes at once, empty status */
    PLX_CHECK_MPI(MPI_Isendrecv(&x, 1, MPI_INT, MPI_PROC_NULL, 0, &y, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD,
                                &req));
    PLX_CHECK_MPI(MPI_Wait(&req, &st));
    PLX_CHECK_EMPTY_STATUS(st, MPI_PROC_NULL);
    PLX_CHECK_EQ(y, -1, "receive from MPI_PROC_NULL leaves the buffer");
    /* send to self, receive from MPI_PROC_NULL / the reverse */
    PLX_CHECK_MPI(MPI_Isendrecv(&x, 1, MPI_INT, MPI_PROC_NULL, 0, &y, 1, MPI_INT, 0, 8, MPI_COMM_SELF, &req));
    int z = 0;
    PLX_CHECK_MPI(MPI_Send(&x, 1, MPI_INT, 0, 8, MPI_COMM_SELF));
    PLX_CHECK_MPI(MPI_Wait(&req, &st));
    PLX_CHECK_EQ(y, 42, "Isendrecv receive from self");
    PLX_CHECK_MPI(MPI_Isendrecv(&x, 1, MPI_INT, 0, 9, &z, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_SELF, &req));
    PLX_CHECK_MPI(MPI_Wait(&req, &st));
    PLX_CHECK_EMPTY_STATUS(st, MPI_PROC_NULL);
    PLX_CHECK_MPI(MPI_Recv(&z, 1, MPI_INT, 0, 9, MPI_COMM_SELF, MPI_STATUS_IGNORE));
    PLX_CHECK_EQ(z, 42, "Isendrecv send to self");

    /* truncation: the error class comes back from the wait */
    int big[4] = {1, 2, 3, 4}, small[2];
    PLX_CHECK_MPI(MPI_Isendrecv(big, 4, MPI_INT, 0, 1, small, 2, MPI_INT, 0, 1, MPI_COMM_SELF, &req));
    PLX_CHECK_ERR(MPI_Wait(&req, &st), MPI_ERR_TRUNCATE);

    /* argument errors name the class */
    PLX_CHECK_ERR(MPI_Isendrecv(&x, 1, MPI_INT, size, 0, &y, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, &req), MPI_ERR_RANK);
    PLX_CHECK_ERR(MPI_Isendrecv(&x, 1, MPI_INT, 0, -5, &y, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, &req), MPI_ERR_TAG);
    PLX_CHECK_ERR(MPI_Isendrecv(&x, -1, MPI_INT, 0, 0, &y, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, &req), MPI_ERR_COUNT);
    PLX_CHECK_ERR(MPI_Isendrecv(&x, 1, MPI_INT, 0, 0, &y, 1, MPI_DATATYPE_NULL, 0, 0, MPI_COMM_WORLD, &req),
                  MPI_ERR_TYPE);
    PLX_CHECK_ERR(MPI_Isendrecv(&x, 1, MPI_INT, 0, 0, &y, 1, MPI_INT, 0, 0, MPI_COMM_NULL, &req), MPI_ERR_COMM);
    PLX_CHECK_ERR(MPI_Isendrecv(&x, 1, MPI_INT, 0, 0, &y, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, NULL), MPI_ERR_ARG);
    PLX_CHECK_ERR(MPI_Isendrecv_replace(&x, 1, MPI_INT, 0, 0, -3, 0, MPI_COMM_WORLD, &req), MPI_ERR_RANK);
}

int main(int argc, char **argv)
{
    plx_test_init(&argc, &argv, "isendrecv");
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    size_t sizes[] = {0, 1, 100, 8192, 65536, 1 << 20};
    for (int round = 0; round < 3; round++)
        for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++)
            ring(sizes[i], round);
    all_pairs(3);
    strided();
    edges();
    return plx_test_finish();
}
