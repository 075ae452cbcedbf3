/*
 * compat_mpich.c - two corners where MPICH-ABI programs expect MPICH's
 * behaviour: the predefined type that is both MPI_C_COMPLEX and
 * MPI_C_FLOAT_COMPLEX (one handle in this ABI) is named "MPI_C_COMPLEX", and
 * the logical reductions (MPI_LAND, MPI_LOR, MPI_LXOR) work on MPI_AINT,
 * MPI_OFFSET and MPI_COUNT (checked against the values computed here), in
 * MPI_Allreduce, MPI_Reduce_local and MPI_Iallreduce.
 */
#include "plx_test.h"

int main(int argc, char **argv)
{
    plx_test_init(&argc, &argv, "compat_mpich");
    int rank, size, len = -1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    char name[MPI_MAX_OBJECT_NAME] = "";
    PLX_CHECK_MPI(MPI_Type_get_name(MPI_C_COMPLEX, name, &len));
    PLX_CHECK_STR(name, "MPI_C_COMPLEX", "name of MPI_C_COMPLEX");
    PLX_CHECK_EQ(len, (int)strlen("MPI_C_COMPLEX"), "length of the name");

    if (plx_lib_is("Open MPI")) {   /* Open MPI keeps to the standard's table here */
        printf("compat_mpich: logical reductions on MPI_AINT/OFFSET/COUNT skipped under Open MPI\n");
        return plx_test_finish();
    }
    PLX_CHECK_MPI(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    const MPI_Datatype types[3] = {MPI_AINT, MPI_OFFSET, MPI_COUNT};
    const MPI_Op ops[3] = {MPI_LAND, MPI_LOR, MPI_LXOR};
    const char *opname[3] = {"MPI_LAND", "MPI_LOR", "MPI_LXOR"};
    enum { N = 6 };
    for (int t = 0; t < 3; t++)
        for (int o = 0; o < 3; o++) {
            /* element j on rank r: nonzero (a large value, not just 1) when bit j of (r + 1) * 7 is set */
            int64_t in[N], out[N], exp[N], loc[N];
            for (int j = 0; j < N; j++) {
                int64_t v = (((rank + 1) * 7) >> j & 1) ? ((int64_t)1 << 40) + rank : 0;
                in[j] = v;
                int acc = -1;
                for (int r = 0; r < size; r++) {
                    int bit = (((r + 1) * 7) >> j & 1);
                    acc = acc < 0 ? bit : o == 0 ? (acc && bit) : o == 1 ? (acc || bit) : (acc != bit);
                }
                exp[j] = size == 1 ? v : acc;   /* one rank: its own value, no op applied */
            }
            /* all three are 8 bytes in this ABI (MPI_Aint, MPI_Offset, MPI_Count) */
            PLX_CHECK_MPI(MPI_Allreduce(in, out, N, types[t], ops[o], MPI_COMM_WORLD));
            for (int j = 0; j < N; j++)
                PLX_CHECK(out[j] == exp[j], "MPI_Allreduce %s on type %d, element %d: got %lld, expected %lld",
                          opname[o], t, j, (long long)out[j], (long long)exp[j]);
            MPI_Request req;
            PLX_CHECK_MPI(MPI_Iallreduce(in, out, N, types[t], ops[o], MPI_COMM_WORLD, &req));
            PLX_CHECK_MPI(MPI_Wait(&req, MPI_STATUS_IGNORE));
            for (int j = 0; j < N; j++)
                PLX_CHECK(out[j] == exp[j], "MPI_Iallreduce %s on type %d, element %d: got %lld, expected %lld",
                          opname[o], t, j, (long long)out[j], (long long)exp[j]);
            for (int j = 0; j < N; j++)
                loc[j] = j % 2 ? 5 : 0;
            PLX_CHECK_MPI(MPI_Reduce_local(in, loc, N, types[t], ops[o]));
            for (int j = 0; j < N; j++) {
                int a = in[j] != 0, b = j % 2;
                int e = o == 0 ? (a && b) : o == 1 ? (a || b) : (a != b);
                PLX_CHECK_EQ(loc[j], e, "MPI_Reduce_local logical result");
            }
        }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    return plx_test_finish();
}
