/*
 * type_dup_commit.c - MPI_Type_dup gives the duplicate the committed state of
 * the original (MPI-3.1 4.1.10): a duplicate of a committed type is usable at
 * once (here in MPI_Igather, MPI_Send/Recv and MPI_Pack), a duplicate of an
 * uncommitted type is not, and a duplicate of a predefined type is committed.
 */
#include "plx_test.h"

int main(int argc, char **argv)
{
    plx_test_init(&argc, &argv, "type_dup_commit");
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    PLX_CHECK_MPI(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));

    /* a vector of 2 ints with a hole: committed, then duplicated */
    MPI_Datatype vec, dup, dup2;
    PLX_CHECK_MPI(MPI_Type_vector(2, 1, 2, MPI_INT, &vec));
    PLX_CHECK_MPI(MPI_Type_commit(&vec));
    PLX_CHECK_MPI(MPI_Type_dup(vec, &dup));
    PLX_CHECK_MPI(MPI_Type_dup(dup, &dup2));   /* a duplicate of a duplicate */

    int send[4] = {rank * 10 + 1, -1, rank * 10 + 2, -1};
    int *recv = plx_malloc((size_t)size * 4 * sizeof(int));
    for (int i = 0; i < size * 4; i++)
        recv[i] = -7;
    MPI_Request req;
    /* the recv type's extent is 3 ints (vector of 2 with stride 2, lb 0) */
    PLX_CHECK_MPI(MPI_Igather(send, 1, dup, recv, 1, dup2, 0, MPI_COMM_WORLD, &req));
    PLX_CHECK_MPI(MPI_Wait(&req, MPI_STATUS_IGNORE));
    if (rank == 0)
        for (int r = 0; r < size; r++) {
            PLX_CHECK_EQ(recv[3 * r], r * 10 + 1, "gathered first int");
            PLX_CHECK_EQ(recv[3 * r + 2], r * 10 + 2, "gathered second int");
        }

    /* MPI_Pack with the duplicate */
    char packed[64];
    int pos = 0;
    PLX_CHECK_MPI(MPI_Pack(send, 1, dup, packed, sizeof packed, &pos, MPI_COMM_WORLD));
    PLX_CHECK_EQ(pos, 2 * (int)sizeof(int), "packed size of the duplicate");

    /* a duplicate of a predefined type is committed */
    MPI_Datatype idup;
    PLX_CHECK_MPI(MPI_Type_dup(MPI_INT, &idup));
    int one = rank + 5, back = -1;
    PLX_CHECK_MPI(MPI_Sendrecv(&one, 1, idup, 0, 3, &back, 1, idup, 0, 3, MPI_COMM_SELF,
                               MPI_STATUS_IGNORE));
    PLX_CHECK_EQ(back, rank + 5, "self send with the duplicate of MPI_INT");

    /* a duplicate of an uncommitted type is uncommitted: using it fails */
    MPI_Datatype raw, rawdup;
    PLX_CHECK_MPI(MPI_Type_contiguous(3, MPI_INT, &raw));
    PLX_CHECK_MPI(MPI_Type_dup(raw, &rawdup));
    int three[3] = {1, 2, 3};
    pos = 0;
    if (!plx_lib_is("Open MPI") && !plx_lib_is("MPICH"))   /* they do not check commitment in MPI_Pack */
        PLX_CHECK_ERR(MPI_Pack(three, 1, rawdup, packed, sizeof packed, &pos, MPI_COMM_WORLD),
                      MPI_ERR_TYPE);
    PLX_CHECK_MPI(MPI_Type_commit(&rawdup));
    pos = 0;
    PLX_CHECK_MPI(MPI_Pack(three, 1, rawdup, packed, sizeof packed, &pos, MPI_COMM_WORLD));
    PLX_CHECK_EQ(pos, 3 * (int)sizeof(int), "packed size after commit");

    MPI_Type_free(&raw);
    MPI_Type_free(&rawdup);
    MPI_Type_free(&idup);
    MPI_Type_free(&dup2);
    MPI_Type_free(&dup);
    MPI_Type_free(&vec);
    free(recv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    return plx_test_finish();
}
