/*
 * The C side of Fortran interoperability: MPI_Status_c2f / MPI_Status_f2c.
 * A Fortran status (INTEGER(MPI_STATUS_SIZE)) has the C struct's layout
 * (checked below), so both are copies. Handles are Fortran integers already:
 * MPI_Comm_c2f and friends are macros in mpi.h. The Fortran entry points
 * themselves are generated (bindings/fortran/).
 */
#include <stddef.h>
#include <string.h>
#include "api/api.h"

_Static_assert(sizeof(MPI_Status) == 5 * sizeof(MPI_Fint), "MPI_STATUS_SIZE is 5");

#pragma weak MPI_Status_c2f = PMPI_Status_c2f
#pragma weak MPI_Status_f2c = PMPI_Status_f2c

int PMPI_Status_c2f(const MPI_Status *c_status, MPI_Fint *f_status)
{
    if (!c_status || c_status == MPI_STATUS_IGNORE)
        return plx_api_err(NULL, "MPI_Status_c2f", MPI_ERR_ARG,
                           "c_status is %s", c_status ? "MPI_STATUS_IGNORE" : "NULL");
    if (!f_status)
        return plx_api_null_arg(NULL, "MPI_Status_c2f", "f_status");
    memcpy(f_status, c_status, sizeof *c_status);
    return MPI_SUCCESS;
}

int PMPI_Status_f2c(const MPI_Fint *f_status, MPI_Status *c_status)
{
    if (!f_status)
        return plx_api_null_arg(NULL, "MPI_Status_f2c", "f_status");
    if (!c_status || c_status == MPI_STATUS_IGNORE)
        return plx_api_err(NULL, "MPI_Status_f2c", MPI_ERR_ARG,
                           "c_status is %s", c_status ? "MPI_STATUS_IGNORE" : "NULL");
    memcpy(c_status, f_status, sizeof *c_status);
    return MPI_SUCCESS;
}
