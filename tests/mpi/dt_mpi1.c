/* The MPI-1 datatype functions kept for old codes (MPI_Address,
 * MPI_Type_extent/lb/ub, MPI_Type_hvector/hindexed/struct): the same types
 * as their MPI-2 successors, errors of the right class, and (with
 * --plexus-messages) messages that name the MPI-1 call (MPICH's name the
 * MPI-2 function it forwards to). */
#include "plx_test.h"

int main(int argc, char **argv)
{
    plx_test_init(&argc, &argv, "dt_mpi1");
    int own_names = 0;
    for (int i = 1; i < argc; i++)
        own_names |= strcmp(argv[i], "--plexus-messages") == 0;
    struct plx_test_state *s = plx_test_state();
    int next = (s->rank + 1) % s->size, prev = (s->rank + s->size - 1) % s->size;
    double a[10], b[10];
    MPI_Aint a0, a3, ext, lb, ub;
    PLX_CHECK_MPI(MPI_Address(&a[0], &a0));
    PLX_CHECK_MPI(MPI_Address(&a[3], &a3));
    PLX_CHECK_EQ(a3 - a0, 3 * sizeof(double), "MPI_Address difference");
    PLX_CHECK_MPI(MPI_Type_extent(MPI_DOUBLE, &ext));
    PLX_CHECK_EQ(ext, sizeof(double), "MPI_Type_extent of MPI_DOUBLE");

    int bl[2] = { 2, 1 };
    MPI_Aint disp[2] = { 0, 5 * sizeof(double) };
    MPI_Datatype types[2] = { MPI_DOUBLE, MPI_DOUBLE }, st, hv, hi;
    PLX_CHECK_MPI(MPI_Type_struct(2, bl, disp, types, &st));
    PLX_CHECK_MPI(MPI_Type_commit(&st));
    PLX_CHECK_MPI(MPI_Type_lb(st, &lb));
    PLX_CHECK_MPI(MPI_Type_ub(st, &ub));
    PLX_CHECK_EQ(lb, 0, "MPI_Type_lb of the struct");
    PLX_CHECK_EQ(ub, 6 * sizeof(double), "MPI_Type_ub of the struct");
    for (int i = 0; i < 10; i++)
        a[i] = s->rank * 100 + i, b[i] = -1;
    PLX_CHECK_MPI(MPI_Sendrecv(a, 1, st, next, 1, b, 1, st, prev, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    PLX_CHECK(b[0] == prev * 100 && b[1] == prev * 100 + 1 && b[5] == prev * 100 + 5 && b[2] == -1 && b[6] == -1,
              "MPI_Type_struct data");
    PLX_CHECK_MPI(MPI_Type_hvector(3, 1, 2 * sizeof(double), MPI_DOUBLE, &hv));
    PLX_CHECK_MPI(MPI_Type_extent(hv, &ext));
    PLX_CHECK_EQ(ext, 5 * sizeof(double), "MPI_Type_hvector extent");
    PLX_CHECK_MPI(MPI_Type_hindexed(2, bl, disp, MPI_DOUBLE, &hi));
    int size = 0;
    PLX_CHECK_MPI(MPI_Type_size(hi, &size));
    PLX_CHECK_EQ(size, 3 * sizeof(double), "MPI_Type_hindexed size");

    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Datatype bad;
    int err = MPI_Type_struct(-1, bl, disp, types, &bad);
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(err, msg, &len);
    if (own_names)
        PLX_CHECK(strstr(msg, "MPI_Type_struct") && strstr(msg, "count"),
                  "message names MPI_Type_struct (got \"%s\")", msg);
    PLX_CHECK_ERR(MPI_Type_struct(-1, bl, disp, types, &bad), MPI_ERR_COUNT);
    PLX_CHECK_ERR(MPI_Type_struct(2, bl, disp, NULL, &bad), MPI_ERR_ARG);
    PLX_CHECK_ERR(MPI_Type_extent(MPI_DATATYPE_NULL, &ext), MPI_ERR_TYPE);
    err = MPI_Type_extent(MPI_DATATYPE_NULL, &ext);
    MPI_Error_string(err, msg, &len);
    if (own_names)
        PLX_CHECK(strstr(msg, "MPI_Type_extent") != NULL, "message names MPI_Type_extent (got \"%s\")", msg);
    MPI_Type_free(&st);
    MPI_Type_free(&hv);
    MPI_Type_free(&hi);
    return plx_test_finish();
}
