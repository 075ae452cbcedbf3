/*
 * coll_order.c - blocking and nonblocking collectives started in different
 * orders on different ranks of one communicator (erroneous by the letter of
 * MPI, which asks for one order, but MPICH and Open MPI keep a blocking
 * collective's messages apart from a nonblocking one's): each must match its
 * own kind and give the right data. Every pattern here is free of deadlock in
 * any MPI that keeps them apart: a rank that starts a nonblocking collective
 * first goes on to the blocking one before it waits.
 */
#include "plx_test.h"

static int rank, size;

/* rank 0 starts MPI_Iallreduce, then MPI_Barrier, then tests until done;
 * the others call MPI_Barrier first, then MPI_Iallreduce + MPI_Wait */
static void iallreduce_vs_barrier(MPI_Comm comm, int round)
{
    int in[4], out[4] = {-1, -1, -1, -1};
    for (int i = 0; i < 4; i++)
        in[i] = rank * 10 + i + round;
    MPI_Request req;
    if (rank == 0) {
        PLX_CHECK_MPI(MPI_Iallreduce(in, out, 4, MPI_INT, MPI_SUM, comm, &req));
        PLX_CHECK_MPI(MPI_Barrier(comm));
        int flag = 0;
        for (int i = 0; !flag; i++) {
            PLX_CHECK_MPI(MPI_Test(&req, &flag, MPI_STATUS_IGNORE));
            plx_pause(i);
        }
    } else {
        PLX_CHECK_MPI(MPI_Barrier(comm));
        PLX_CHECK_MPI(MPI_Iallreduce(in, out, 4, MPI_INT, MPI_SUM, comm, &req));
        PLX_CHECK_MPI(MPI_Wait(&req, MPI_STATUS_IGNORE));
    }
    for (int i = 0; i < 4; i++)
        PLX_CHECK_EQ(out[i], 10 * size * (size - 1) / 2 + size * (i + round), "MPI_Iallreduce sum");
}

/* odd ranks: MPI_Ibcast, then MPI_Allreduce, then wait; even ranks:
 * MPI_Allreduce, then MPI_Ibcast + wait; with data of several sizes */
static void ibcast_vs_allreduce(MPI_Comm comm, int n)
{
    int *b = plx_malloc((size_t)n * sizeof(int));
    long long v = rank + 1, sum = -1;
    for (int i = 0; i < n; i++)
        b[i] = rank == 0 ? i * 3 + n : -1;
    MPI_Request req;
    if (rank % 2) {
        PLX_CHECK_MPI(MPI_Ibcast(b, n, MPI_INT, 0, comm, &req));
        PLX_CHECK_MPI(MPI_Allreduce(&v, &sum, 1, MPI_LONG_LONG, MPI_SUM, comm));
        PLX_CHECK_MPI(MPI_Wait(&req, MPI_STATUS_IGNORE));
    } else {
        PLX_CHECK_MPI(MPI_Allreduce(&v, &sum, 1, MPI_LONG_LONG, MPI_SUM, comm));
        PLX_CHECK_MPI(MPI_Ibcast(b, n, MPI_INT, 0, comm, &req));
        PLX_CHECK_MPI(MPI_Wait(&req, MPI_STATUS_IGNORE));
    }
    PLX_CHECK_EQ(sum, (long long)size * (size + 1) / 2, "MPI_Allreduce sum");
    for (int i = 0; i < n; i++)
        if (b[i] != i * 3 + n)
            plx_test_fail(__FILE__, __LINE__, "MPI_Ibcast of %d ints: element %d is %d, expected %d", n, i, b[i],
                          i * 3 + n);
    plx_test_pass();
    free(b);
}

/* two nonblocking collectives in flight, a blocking gather between them on
 * some ranks and after them on others */
static void two_inflight(MPI_Comm comm)
{
    int x = rank, mx = -1, g0 = -1;
    int *all = plx_malloc((size_t)size * sizeof(int));
    MPI_Request r[2];
    PLX_CHECK_MPI(MPI_Iallreduce(&x, &mx, 1, MPI_INT, MPI_MAX, comm, &r[0]));
    if (rank % 2 == 0)
        PLX_CHECK_MPI(MPI_Allgather(&x, 1, MPI_INT, all, 1, MPI_INT, comm));
    PLX_CHECK_MPI(MPI_Iallreduce(&x, &g0, 1, MPI_INT, MPI_MIN, comm, &r[1]));
    if (rank % 2)
        PLX_CHECK_MPI(MPI_Allgather(&x, 1, MPI_INT, all, 1, MPI_INT, comm));
    PLX_CHECK_MPI(MPI_Waitall(2, r, MPI_STATUSES_IGNORE));
    PLX_CHECK_EQ(mx, size - 1, "MPI_Iallreduce max");
    PLX_CHECK_EQ(g0, 0, "MPI_Iallreduce min");
    for (int i = 0; i < size; i++)
        PLX_CHECK_EQ(all[i], i, "MPI_Allgather");
    free(all);
}

/* --truncate: MPI_Bcast where one rank (bad) gives a smaller count than the
 * root sends (erroneous, so only with that option): that rank fails with
 * MPI_ERR_TRUNCATE; a rank that hears of the failure from it may fail too, but
 * never as if a process had been lost (MPIX_ERR_PROC_FAILED) */
static void truncated_bcast(void)
{
    PLX_CHECK_MPI(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    for (int bad = 1; bad < size; bad++) {
        MPI_Comm c;
        PLX_CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &c));
        int n = rank == bad ? 2 : 4, b[4] = {rank ? -1 : 11, rank ? -1 : 12, rank ? -1 : 13, rank ? -1 : 14};
        int rc = MPI_Bcast(b, n, MPI_INT, 0, c), cls = MPI_SUCCESS;
        MPI_Error_class(rc, &cls);
        if (rank == bad)
            PLX_CHECK_EQ(cls, MPI_ERR_TRUNCATE, "class of the truncated MPI_Bcast");
        else if (rc != MPI_SUCCESS) {
            char msg[MPI_MAX_ERROR_STRING];
            int len;
            MPI_Error_string(rc, msg, &len);
            PLX_CHECK(cls != MPIX_ERR_PROC_FAILED && !strstr(msg, "lost"),
                      "rank %d's truncation reported on rank %d as a lost process: %s", bad, rank, msg);
        } else {
            for (int i = 0; i < 4; i++)
                PLX_CHECK_EQ(b[i], 11 + i, "MPI_Bcast data where it succeeded");
        }
        MPI_Comm_free(&c);
        PLX_CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

int main(int argc, char **argv)
{
    plx_test_init(&argc, &argv, "coll_order");
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm dup;
    PLX_CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    for (int round = 0; round < 20; round++) {
        MPI_Comm c = round % 2 ? dup : MPI_COMM_WORLD;
        iallreduce_vs_barrier(c, round);
        ibcast_vs_allreduce(c, round % 3 == 0 ? 1 : round % 3 == 1 ? 1000 : 40000);
        two_inflight(c);
    }
    MPI_Comm_free(&dup);
    if (argc > 1 && strcmp(argv[1], "--truncate") == 0)
        truncated_bcast();
    return plx_test_finish();
}
