/*
 * dims_create.c - MPI_Dims_create is exact: for every nnodes <= 360 and
 * ndims 1-5 (free, and with some dimensions fixed) the free dimensions
 * multiply to what is left, are non-increasing, and have the smallest spread
 * (largest - smallest) that any factorisation has, found by brute force; among
 * factorisations of that spread it gives the lexicographically smallest
 * (20 in 4 dimensions is 5,2,2,1, not 5,4,1,1). Large nnodes (primes near
 * 2^31, 2^30, products of many primes) give exact results quickly. Bad
 * arguments give MPI_ERR_DIMS.
 */
#include "plx_test.h"

#define MAXK 5

struct best {
    int k, spread, vec[MAXK];
};

/* every non-increasing factorisation of r into positions pos..k-1, each <= maxf */
static void brute(int r, int pos, int maxf, int *cur, struct best *b)
{
    if (pos == b->k) {
        if (r != 1)
            return;
        int spread = cur[0] - cur[b->k - 1];
        int better = spread < b->spread;
        if (spread == b->spread) {
            int i = 0;
            while (i < b->k && cur[i] == b->vec[i])
                i++;
            better = i < b->k && cur[i] < b->vec[i];
        }
        if (better) {
            b->spread = spread;
            memcpy(b->vec, cur, sizeof b->vec);
        }
        return;
    }
    for (int d = 1; d <= maxf && d <= r; d++)
        if (r % d == 0) {
            cur[pos] = d;
            brute(r / d, pos + 1, d, cur, b);
        }
}

/* dims in: fixed values and zeros; checks the result of MPI_Dims_create */
static void check_case(int n, int ndims, const int *in, int lexcheck)
{
    int dims[MAXK], fixed = 1, nfree = 0;
    memcpy(dims, in, (size_t)ndims * sizeof(int));
    for (int i = 0; i < ndims; i++) {
        if (in[i])
            fixed *= in[i];
        else
            nfree++;
    }
    PLX_CHECK_MPI(MPI_Dims_create(n, ndims, dims));
    int prod = 1, got[MAXK], g = 0;
    for (int i = 0; i < ndims; i++) {
        prod *= dims[i];
        if (in[i])
            PLX_CHECK_EQ(dims[i], in[i], "a fixed dimension is kept");
        else
            got[g++] = dims[i];
    }
    PLX_CHECK_EQ(prod, n, "the dimensions multiply to nnodes");
    if (nfree == 0)
        return;
    for (int i = 1; i < nfree; i++)
        PLX_CHECK(got[i] <= got[i - 1], "n=%d ndims=%d: free dimensions not non-increasing", n, ndims);
    struct best b = {nfree, 1 << 30, {0}};
    int cur[MAXK];
    brute(n / fixed, 0, n / fixed, cur, &b);
    int spread = got[0] - got[nfree - 1];
    if (spread != b.spread)
        plx_test_fail(__FILE__, __LINE__, "n=%d ndims=%d (fixed product %d): spread %d, the most balanced has %d "
                      "(first dims %d,%d; best %d,%d)", n, ndims, fixed, spread, b.spread, got[0],
                      nfree > 1 ? got[1] : 0, b.vec[0], nfree > 1 ? b.vec[1] : 0);
    plx_test_pass();
    if (lexcheck)
        for (int i = 0; i < nfree; i++)
            if (got[i] != b.vec[i])
                plx_test_fail(__FILE__, __LINE__, "n=%d in %d free dimensions: position %d is %d, the most "
                              "balanced factorisation has %d there", n / fixed, nfree, i, got[i], b.vec[i]);
    plx_test_pass();
}

int main(int argc, char **argv)
{
    plx_test_init(&argc, &argv, "dims_create");
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    /* MPICH's ties of equal spread are not always the lexicographically
     * smallest above 300 (360 in 3 is 10,6,6, not 9,8,5); below, they are */
    int mpich = plx_lib_is("MPICH");

    /* the ranks share the cases */
    for (int n = 1 + rank; n <= 360; n += size)
        for (int k = 1; k <= MAXK; k++) {
            int in[MAXK] = {0};
            check_case(n, k, in, !mpich || n <= 300);
            if (k >= 2 && n % 2 == 0) {       /* one fixed dimension */
                in[k / 2] = 2;
                check_case(n, k, in, !mpich || n <= 300);
            }
            if (k >= 3 && n % 6 == 0) {       /* two */
                in[0] = 3;
                in[k - 1] = 2;
                in[k / 2] = 0;
                check_case(n, k, in, !mpich || n <= 300);
            }
        }

    /* large nnodes: exact, and quick (each took 0.3-6 s before) */
    if (rank == 0) {
        const struct {
            int n, k, expect[4];
        } big[] = {
            {2147483647, 2, {2147483647, 1}},         /* 2^31 - 1 is prime */
            {2147483647, 3, {2147483647, 1, 1}},
            {2147483629, 2, {2147483629, 1}},
            {2000000014, 3, {1000000007, 2, 1}},
            {1073741824, 4, {256, 256, 128, 128}},
            {1073741824, 3, {1024, 1024, 1024}},
            {223092870, 3, {627, 598, 595}},          /* 2*3*5*...*23 */
            {223092870, 4, {143, 119, 115, 114}},
        };
        double t0 = MPI_Wtime();
        for (size_t i = 0; i < sizeof big / sizeof big[0]; i++) {
            int dims[4] = {0, 0, 0, 0};
            if (mpich && big[i].n > 2000000000)
                continue;   /* MPICH 4.0 divides by zero on these */
            PLX_CHECK_MPI(MPI_Dims_create(big[i].n, big[i].k, dims));
            for (int j = 0; j < big[i].k; j++)
                if (dims[j] != big[i].expect[j])
                    plx_test_fail(__FILE__, __LINE__, "MPI_Dims_create(%d, %d): dims[%d] = %d, expected %d",
                                  big[i].n, big[i].k, j, dims[j], big[i].expect[j]);
            plx_test_pass();
        }
        double t = MPI_Wtime() - t0;
        printf("dims_create: %zu large cases in %.3f s\n", sizeof big / sizeof big[0], t);
        /* generous: a loaded 2-core machine; the old search needed ~20 s here */
        PLX_CHECK(t < 5.0, "large cases took %.1f s", t);
    }

    /* errors */
    PLX_CHECK_MPI(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    int d3[3] = {0, 4, 0};
    PLX_CHECK_ERR(MPI_Dims_create(10, 3, d3), MPI_ERR_DIMS);
    int dn[2] = {-1, 0};
    PLX_CHECK_ERR(MPI_Dims_create(10, 2, dn), MPI_ERR_DIMS);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    return plx_test_finish();
}
