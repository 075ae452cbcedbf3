/*
 * mpi41_misc.c - MPI 4.1's status accessors and MPI_Type_get_value_index.
 *
 * The accessors read what a receive put into the status and write fields
 * that MPI_Get_count etc. then leave alone; MPI_STATUS_IGNORE is refused.
 * Value-index pairs: the six predefined ones, MPI_DATATYPE_NULL for others,
 * and a MINLOC reduction through the pair type returned.
 */
#include "plx_test.h"

int main(int argc, char **argv)
{
    plx_test_init(&argc, &argv, "mpi41_misc");
    int rank = plx_test_state()->rank, size = plx_test_state()->size;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    int next = (rank + 1) % size, prev = (rank + size - 1) % size, v = rank, got = -1;
    MPI_Status st;
    PLX_CHECK_MPI(MPI_Sendrecv(&v, 1, MPI_INT, next, 17, &got, 1, MPI_INT, prev, 17, MPI_COMM_WORLD, &st));
    int src = -9, tag = -9, err = -9, cnt = -1;
    PLX_CHECK_MPI(MPI_Status_get_source(&st, &src));
    PLX_CHECK_MPI(MPI_Status_get_tag(&st, &tag));
    PLX_CHECK_MPI(MPI_Status_get_error(&st, &err));
    PLX_CHECK(src == prev && tag == 17, "status accessors: source %d tag %d", src, tag);
    PLX_CHECK_MPI(MPI_Status_set_source(&st, 5));
    PLX_CHECK_MPI(MPI_Status_set_tag(&st, 99));
    PLX_CHECK_MPI(MPI_Status_set_error(&st, MPI_ERR_TAG));
    PLX_CHECK(st.MPI_SOURCE == 5 && st.MPI_TAG == 99 && st.MPI_ERROR == MPI_ERR_TAG, "status setters");
    PLX_CHECK_MPI(MPI_Get_count(&st, MPI_INT, &cnt));
    PLX_CHECK_EQ(cnt, 1, "the count is untouched by the setters");
    PLX_CHECK_ERR(MPI_Status_get_source(MPI_STATUS_IGNORE, &src), MPI_ERR_ARG);
    PLX_CHECK_ERR(MPI_Status_get_tag(&st, NULL), MPI_ERR_ARG);

    static const struct { MPI_Datatype v, pair; } pairs[] = {
        { MPI_FLOAT, MPI_FLOAT_INT }, { MPI_DOUBLE, MPI_DOUBLE_INT }, { MPI_LONG, MPI_LONG_INT },
        { MPI_INT, MPI_2INT }, { MPI_SHORT, MPI_SHORT_INT }, { MPI_LONG_DOUBLE, MPI_LONG_DOUBLE_INT } };
    for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++) {
        MPI_Datatype p = MPI_DATATYPE_NULL;
        PLX_CHECK_MPI(MPI_Type_get_value_index(pairs[i].v, MPI_INT, &p));
        PLX_CHECK(p == pairs[i].pair, "value-index pair %zu", i);
    }
    MPI_Datatype p = MPI_INT;
    PLX_CHECK_MPI(MPI_Type_get_value_index(MPI_DOUBLE, MPI_LONG, &p));
    PLX_CHECK(p == MPI_DATATYPE_NULL, "no pair of double and long");
    PLX_CHECK_ERR(MPI_Type_get_value_index(MPI_DATATYPE_NULL, MPI_INT, &p), MPI_ERR_TYPE);
    /* MINLOC through the pair type: the smallest value is the last rank's */
    struct { double val; int idx; } in = { 100.0 - rank, rank }, out = { 0, -1 };
    PLX_CHECK_MPI(MPI_Type_get_value_index(MPI_DOUBLE, MPI_INT, &p));
    PLX_CHECK_MPI(MPI_Allreduce(&in, &out, 1, p, MPI_MINLOC, MPI_COMM_WORLD));
    PLX_CHECK(out.val == 100.0 - (size - 1) && out.idx == size - 1, "MINLOC through the pair type");
    /* MPI 4.0's hardware-guided split: shared memory is the one resource type known */
    MPI_Info info;
    MPI_Comm hw;
    PLX_CHECK_MPI(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_HW_GUIDED, 0, MPI_INFO_NULL, &hw));
    PLX_CHECK(hw == MPI_COMM_NULL, "HW_GUIDED without info gives MPI_COMM_NULL");
    MPI_Info_create(&info);
    MPI_Info_set(info, "mpi_hw_resource_type", "no-such-thing");
    PLX_CHECK_MPI(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_HW_GUIDED, 0, info, &hw));
    PLX_CHECK(hw == MPI_COMM_NULL, "HW_GUIDED with an unknown resource gives MPI_COMM_NULL");
    MPI_Info_set(info, "mpi_hw_resource_type", "mpi_shared_memory");
    PLX_CHECK_MPI(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_HW_GUIDED, rank, info, &hw));
    int hsize = -1;
    PLX_CHECK(hw != MPI_COMM_NULL, "HW_GUIDED mpi_shared_memory gives a communicator");
    if (hw != MPI_COMM_NULL) {
        MPI_Comm_size(hw, &hsize);
        PLX_CHECK_EQ(hsize, size, "one node: every rank shares memory");
        MPI_Comm_free(&hw);
    }
    PLX_CHECK_MPI(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_HW_UNGUIDED, 0, MPI_INFO_NULL, &hw));
    PLX_CHECK(hw == MPI_COMM_NULL, "HW_UNGUIDED on one node: no smaller domain");
    MPI_Info_free(&info);
    return plx_test_finish();
}
