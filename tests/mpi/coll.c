/*
 * coll.c - the minimal collectives: Barrier, Bcast, Reduce, Allreduce, Gather,
 * Allgather, on MPI_COMM_WORLD and on split communicators.
 *
 * Barrier is checked semantically: a message every rank sends after leaving the
 * barrier cannot have arrived at the root before the root entered it. Values
 * depend on rank and index and are compared with results computed locally
 * (doubles hold small integers, so sums are exact). Roots: first, last, middle.
 * Collectives are kept few: with 8 ranks on 2 cores each one costs milliseconds.
 */
#include "plx_test.h"

static int rank, size;

static int ival(int r, int i)
{
    return (r * 37 + i * 11) % 101 - 50;
}

static void test_barrier(MPI_Comm comm, int root)
{
    int r, n, one = 1, in = 0, flag = -1;
    MPI_Comm c; /* only post-barrier messages travel on it */
    MPI_Request req = MPI_REQUEST_NULL;

    MPI_Comm_rank(comm, &r);
    MPI_Comm_size(comm, &n);
    PLX_CHECK_MPI(MPI_Comm_dup(comm, &c));
    if (r == root && n > 1) {
        PLX_CHECK_MPI(MPI_Irecv(&in, 1, MPI_INT, MPI_ANY_SOURCE, 1, c, &req));
        PLX_CHECK_MPI(MPI_Test(&req, &flag, MPI_STATUS_IGNORE));
        PLX_CHECK_EQ(flag, 0, "a message sent after the Barrier arrived before the root entered it");
    }
    PLX_CHECK_MPI(MPI_Barrier(comm));
    if (r != root) {
        PLX_CHECK_MPI(MPI_Send(&one, 1, MPI_INT, root, 1, c));
    } else if (n > 1) {
        PLX_CHECK_MPI(MPI_Wait(&req, MPI_STATUS_IGNORE));
        for (int i = 2; i < n; i++)
            PLX_CHECK_MPI(MPI_Recv(&in, 1, MPI_INT, MPI_ANY_SOURCE, 1, c, MPI_STATUS_IGNORE));
        PLX_CHECK_EQ(in, 1, "post-barrier message");
    }
    PLX_CHECK_MPI(MPI_Comm_free(&c));
}

static void test_bcast(MPI_Comm comm, int root)
{
    /* 13: 52 B of ints (one line) and 104 B of doubles (two lines, over
     * shared memory) */
    static const int counts[] = {1, 7, 13, 1000};
    int r;

    MPI_Comm_rank(comm, &r);
    for (int k = 0; k < 4; k++) {
        int n = counts[k], *ib = plx_malloc(sizeof(int) * (size_t)n);
        double *db = plx_malloc(sizeof(double) * (size_t)n);
        for (int i = 0; i < n; i++) {
            ib[i] = r == root ? ival(root, i) : -999;
            db[i] = r == root ? ival(root, i) * 0.5 : -999.0;
        }
        PLX_CHECK_MPI(MPI_Bcast(ib, n, MPI_INT, root, comm));
        PLX_CHECK_MPI(MPI_Bcast(db, n, MPI_DOUBLE, root, comm));
        for (int i = 0; i < n; i++) {
            PLX_CHECK(ib[i] == ival(root, i), "Bcast MPI_INT count %d root %d: element %d (got %d, expected %d)",
                      n, root, i, ib[i], ival(root, i));
            PLX_CHECK(db[i] == ival(root, i) * 0.5, "Bcast MPI_DOUBLE count %d root %d: element %d (got %g)", n,
                      root, i, db[i]);
        }
        free(ib);
        free(db);
    }
    /* Bytes, an odd size. */
    {
        size_t n = 65537;
        unsigned char *b = plx_malloc(n);
        if (r == root)
            plx_fill(b, n, plx_seed((uint32_t)root, 7, 0, 0));
        else
            memset(b, 0, n);
        PLX_CHECK_MPI(MPI_Bcast(b, (int)n, MPI_BYTE, root, comm));
        PLX_CHECK_PATTERN(b, n, plx_seed((uint32_t)root, 7, 0, 0), "Bcast of 65537 bytes");
        free(b);
    }
}

/* Expected reduction over ranks 0..n-1 of comm, where comm rank q has world rank w[q]. */
static int iexpect(MPI_Op op, const int *w, int n, int i)
{
    int acc = ival(w[0], i);
    for (int q = 1; q < n; q++) {
        int v = ival(w[q], i);
        acc = op == MPI_SUM ? acc + v : op == MPI_MAX ? (v > acc ? v : acc) : (v < acc ? v : acc);
    }
    return acc;
}

static void world_ranks(MPI_Comm comm, int *w)
{
    int me = rank;
    PLX_CHECK_MPI(MPI_Allgather(&me, 1, MPI_INT, w, 1, MPI_INT, comm));
}

static void test_reduce(MPI_Comm comm, const int *w, int root, int all)
{
    static const MPI_Op ops[] = {MPI_SUM, MPI_MAX, MPI_MIN};
    static const char *names[] = {"MPI_SUM", "MPI_MAX", "MPI_MIN"};
    enum { N = 100 };
    int r, n, iin[N], iout[N];
    double din[N], dout[N];

    MPI_Comm_rank(comm, &r);
    MPI_Comm_size(comm, &n);
    for (int i = 0; i < N; i++) {
        iin[i] = ival(rank, i);
        din[i] = ival(rank, i) * 0.25;
    }
    for (int o = 0; o < 3; o++) {
        int cnt = o == 0 ? N : 5; /* SUM with 100 elements, MAX/MIN with 5 */
        for (int i = 0; i < N; i++) {
            iout[i] = -12345;
            dout[i] = -12345.0;
        }
        if (all) {
            PLX_CHECK_MPI(MPI_Allreduce(iin, iout, cnt, MPI_INT, ops[o], comm));
            PLX_CHECK_MPI(MPI_Allreduce(din, dout, cnt, MPI_DOUBLE, ops[o], comm));
        } else {
            PLX_CHECK_MPI(MPI_Reduce(iin, iout, cnt, MPI_INT, ops[o], root, comm));
            PLX_CHECK_MPI(MPI_Reduce(din, dout, cnt, MPI_DOUBLE, ops[o], root, comm));
        }
        if (all || r == root)
            for (int i = 0; i < cnt; i++) {
                int e = iexpect(ops[o], w, n, i);
                PLX_CHECK(iout[i] == e, "%s %s MPI_INT root %d element %d (got %d, expected %d)",
                          all ? "Allreduce" : "Reduce", names[o], root, i, iout[i], e);
                PLX_CHECK(dout[i] == e * 0.25, "%s %s MPI_DOUBLE root %d element %d (got %g, expected %g)",
                          all ? "Allreduce" : "Reduce", names[o], root, i, dout[i], e * 0.25);
            }
    }
    if (all) { /* MPI_IN_PLACE */
        for (int i = 0; i < N; i++)
            iout[i] = ival(rank, i);
        PLX_CHECK_MPI(MPI_Allreduce(MPI_IN_PLACE, iout, N, MPI_INT, MPI_SUM, comm));
        for (int i = 0; i < N; i++)
            PLX_CHECK(iout[i] == iexpect(MPI_SUM, w, n, i), "Allreduce MPI_IN_PLACE element %d", i);
    }
}

static void test_gather(MPI_Comm comm, const int *w, int root)
{
    int r, n, in[3], *out;

    MPI_Comm_rank(comm, &r);
    MPI_Comm_size(comm, &n);
    out = plx_malloc(sizeof(int) * 3 * (size_t)n);
    for (int i = 0; i < 3; i++)
        in[i] = ival(rank, i);

    for (int i = 0; i < 3 * n; i++)
        out[i] = -7;
    PLX_CHECK_MPI(MPI_Gather(in, 3, MPI_INT, out, 3, MPI_INT, root, comm));
    if (r == root)
        for (int q = 0; q < n; q++)
            for (int i = 0; i < 3; i++)
                PLX_CHECK(out[3 * q + i] == ival(w[q], i), "Gather root %d: block %d element %d (got %d)", root, q,
                          i, out[3 * q + i]);

    /* Gather with MPI_IN_PLACE at the root. */
    for (int i = 0; i < 3 * n; i++)
        out[i] = -7;
    if (r == root) {
        for (int i = 0; i < 3; i++)
            out[3 * r + i] = ival(rank, i);
        PLX_CHECK_MPI(MPI_Gather(MPI_IN_PLACE, 3, MPI_INT, out, 3, MPI_INT, root, comm));
        for (int q = 0; q < n; q++)
            for (int i = 0; i < 3; i++)
                PLX_CHECK(out[3 * q + i] == ival(w[q], i), "Gather MPI_IN_PLACE: block %d element %d", q, i);
    } else {
        PLX_CHECK_MPI(MPI_Gather(in, 3, MPI_INT, NULL, 0, MPI_INT, root, comm));
    }

    /* Allgather of 3, and with MPI_IN_PLACE. */
    for (int i = 0; i < 3 * n; i++)
        out[i] = -7;
    PLX_CHECK_MPI(MPI_Allgather(in, 3, MPI_INT, out, 3, MPI_INT, comm));
    for (int q = 0; q < n; q++)
        for (int i = 0; i < 3; i++)
            PLX_CHECK(out[3 * q + i] == ival(w[q], i), "Allgather: block %d element %d", q, i);
    for (int i = 0; i < 3 * n; i++)
        out[i] = i / 3 == r ? ival(rank, i % 3) : -7;
    PLX_CHECK_MPI(MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, out, 3, MPI_INT, comm));
    for (int q = 0; q < n; q++)
        for (int i = 0; i < 3; i++)
            PLX_CHECK(out[3 * q + i] == ival(w[q], i), "Allgather MPI_IN_PLACE: block %d element %d", q, i);
    free(out);
}

static void run_all(MPI_Comm comm, int nroots)
{
    int n, r, roots[3], w[64];

    MPI_Comm_size(comm, &n);
    MPI_Comm_rank(comm, &r);
    world_ranks(comm, w); /* an Allgather of one int, checked here */
    for (int q = 0; q < n; q++)
        PLX_CHECK(w[q] >= 0 && w[q] < size, "Allgather of world ranks: entry %d = %d", q, w[q]);
    PLX_CHECK_EQ(w[r], rank, "Allgather: my own entry");
    roots[0] = 0;
    roots[1] = n - 1;
    roots[2] = n / 2;
    for (int k = 0; k < nroots; k++) {
        int dup = 0;
        for (int j = 0; j < k; j++)
            dup |= roots[j] == roots[k];
        if (dup)
            continue;
        test_barrier(comm, roots[k]);
        test_bcast(comm, roots[k]);
        test_reduce(comm, w, roots[k], 0);
        test_gather(comm, w, roots[k]);
    }
    test_reduce(comm, w, 0, 1);
}

int main(int argc, char **argv)
{
    MPI_Comm half, rev;

    plx_test_init(&argc, &argv, "coll");
    rank = plx_test_state()->rank;
    size = plx_test_state()->size;
    if (size > 64) {
        if (rank == 0)
            fprintf(stderr, "coll: at most 64 ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }

    run_all(MPI_COMM_WORLD, 3);
    /* Subcommunicators: halves by parity, and WORLD reversed (comm roots != world roots). */
    PLX_CHECK_MPI(MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half));
    run_all(half, 1);
    PLX_CHECK_MPI(MPI_Comm_split(MPI_COMM_WORLD, 0, size - rank, &rev));
    run_all(rev, 1);
    PLX_CHECK_MPI(MPI_Comm_free(&half));
    PLX_CHECK_MPI(MPI_Comm_free(&rev));
    return plx_test_finish();
}
