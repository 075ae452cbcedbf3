/*
 * Small blocking collectives back to back, with no barrier between them:
 * on one node they go through the shared segment, whose per-rank lines
 * (data of up to 56 bytes with its flag) and slots are reused every second
 * operation, so a rank that runs ahead must not overwrite what a slower one
 * still reads. Bcast from changing roots, Allgather, Alltoall and Allreduce
 * at 1-20 ints (across the line's capacity), in place and not; every
 * result is checked.
 */
#include "plx_test.h"

static int rank, size;

static int val(int it, int src, int dst, int i)
{
    return it * 7919 + src * 1009 + dst * 31 + i;
}

/* Keeps failures to one line per kind. */
static int fails;

static void expect(int got, int want, const char *what, int it, int n, int i)
{
    if (got != want && fails++ < 5)
        PLX_CHECK(0, "%s (iteration %d, %d ints): element %d is %d, expected %d", what, it, n, i, got, want);
}

int main(int argc, char **argv)
{
    plx_test_init(&argc, &argv, "coll_stream");
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    enum { MAXN = 20 };
    int *s = plx_malloc(sizeof(int) * MAXN * (size_t)size), *r = plx_malloc(sizeof(int) * MAXN * (size_t)size);
    int iters = 3000;
    for (int it = 0; it < iters; it++) {
        int n = 1 + it % MAXN, root = (it / 3) % size;
        switch (it % 5) {
        case 0: /* bcast */
        case 3:
            for (int i = 0; i < n; i++)
                r[i] = rank == root ? val(it, root, 0, i) : -1;
            MPI_Bcast(r, n, MPI_INT, root, MPI_COMM_WORLD);
            for (int i = 0; i < n; i++)
                expect(r[i], val(it, root, 0, i), "Bcast", it, n, i);
            break;
        case 1: /* allgather, every other time in place */
            for (int i = 0; i < n * size; i++)
                r[i] = -1;
            for (int i = 0; i < n; i++)
                (it % 2 ? r + rank * n : s)[i] = val(it, rank, 0, i);
            MPI_Allgather(it % 2 ? MPI_IN_PLACE : s, n, MPI_INT, r, n, MPI_INT, MPI_COMM_WORLD);
            for (int j = 0; j < size; j++)
                for (int i = 0; i < n; i++)
                    expect(r[j * n + i], val(it, j, 0, i), "Allgather", it, n, i);
            break;
        case 2: /* alltoall */
            for (int j = 0; j < size; j++)
                for (int i = 0; i < n; i++) {
                    s[j * n + i] = val(it, rank, j, i);
                    r[j * n + i] = -1;
                }
            MPI_Alltoall(s, n, MPI_INT, r, n, MPI_INT, MPI_COMM_WORLD);
            for (int j = 0; j < size; j++)
                for (int i = 0; i < n; i++)
                    expect(r[j * n + i], val(it, j, rank, i), "Alltoall", it, n, i);
            break;
        case 4: /* allreduce: sum over ranks of val(it, rank, 0, i) */
            for (int i = 0; i < n; i++)
                s[i] = val(it, rank, 0, i);
            MPI_Allreduce(s, r, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
            for (int i = 0; i < n; i++) {
                int want = 0;
                for (int j = 0; j < size; j++)
                    want += val(it, j, 0, i);
                expect(r[i], want, "Allreduce", it, n, i);
            }
            break;
        }
    }
    PLX_CHECK(fails == 0, "%d wrong elements in %d back-to-back collectives", fails, iters);
    free(s);
    free(r);
    return plx_test_finish();
}
