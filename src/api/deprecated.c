/*
 * MPI-1 datatype functions that MPI-3 removed and MPICH still provides:
 * MPI_Address, MPI_Type_extent, MPI_Type_lb, MPI_Type_ub, MPI_Type_hvector,
 * MPI_Type_hindexed, MPI_Type_struct. Old codes (NPB's BTIO among them)
 * still call them. Each is its MPI-2 successor; arguments the successor
 * would reject are checked here first so the message names the call made.
 * (MPI_Type_get_envelope reports the successor's combiner.)
 */
#include <stdint.h>
#include "api/api.h"
#include "core/datatype.h"

#pragma weak MPI_Address = PMPI_Address
#pragma weak MPI_Type_extent = PMPI_Type_extent
#pragma weak MPI_Type_lb = PMPI_Type_lb
#pragma weak MPI_Type_ub = PMPI_Type_ub
#pragma weak MPI_Type_hvector = PMPI_Type_hvector
#pragma weak MPI_Type_hindexed = PMPI_Type_hindexed
#pragma weak MPI_Type_struct = PMPI_Type_struct

int PMPI_Address(void *location, MPI_Aint *address)
{
    if (!address)
        return plx_api_null_arg(NULL, "MPI_Address", "address");
    *address = (MPI_Aint)(uintptr_t)location;
    return MPI_SUCCESS;
}

/* lb and extent of a valid type, or the error of `fn` */
static int plx_api_old_extent(MPI_Datatype datatype, MPI_Aint *lb, MPI_Aint *extent, void *out,
                              const char *fn, const char *outname)
{
    plx_api_check_init(fn);
    if (!out)
        return plx_api_null_arg(NULL, fn, outname);
    if (!plx_dt_lookup(datatype))
        return plx_api_err(NULL, fn, MPI_ERR_TYPE, "argument 'datatype' is %s (handle 0x%x)",
                           datatype == MPI_DATATYPE_NULL ? "MPI_DATATYPE_NULL" : "not a valid datatype",
                           (unsigned)datatype);
    return PMPI_Type_get_extent(datatype, lb, extent);
}

int PMPI_Type_extent(MPI_Datatype datatype, MPI_Aint *extent)
{
    MPI_Aint lb = 0, ext = 0;
    int rc = plx_api_old_extent(datatype, &lb, &ext, extent, "MPI_Type_extent", "extent");
    if (rc == MPI_SUCCESS)
        *extent = ext;
    return rc;
}

int PMPI_Type_lb(MPI_Datatype datatype, MPI_Aint *displacement)
{
    MPI_Aint lb = 0, ext = 0;
    int rc = plx_api_old_extent(datatype, &lb, &ext, displacement, "MPI_Type_lb", "displacement");
    if (rc == MPI_SUCCESS)
        *displacement = lb;
    return rc;
}

int PMPI_Type_ub(MPI_Datatype datatype, MPI_Aint *displacement)
{
    MPI_Aint lb = 0, ext = 0;
    int rc = plx_api_old_extent(datatype, &lb, &ext, displacement, "MPI_Type_ub", "displacement");
    if (rc == MPI_SUCCESS)
        *displacement = lb + ext;
    return rc;
}

/* count, newtype and (for count > 0) the arrays, as the successor checks them */
static int plx_api_old_ctor(int count, const void *a, const char *aname, const void *b, const char *bname,
                            MPI_Datatype *newtype, const char *fn)
{
    plx_api_check_init(fn);
    if (count < 0)
        return plx_api_err(NULL, fn, MPI_ERR_COUNT, "argument 'count' is negative (%d)", count);
    if (!newtype)
        return plx_api_null_arg(NULL, fn, "newtype");
    if (count > 0 && aname && !a)
        return plx_api_null_arg(NULL, fn, aname);
    if (count > 0 && bname && !b)
        return plx_api_null_arg(NULL, fn, bname);
    return MPI_SUCCESS;
}

int PMPI_Type_hvector(int count, int blocklength, MPI_Aint stride, MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    int rc = plx_api_old_ctor(count, NULL, NULL, NULL, NULL, newtype, "MPI_Type_hvector");
    return rc ? rc : PMPI_Type_create_hvector(count, blocklength, stride, oldtype, newtype);
}

int PMPI_Type_hindexed(int count, int blocklens[], MPI_Aint disps[], MPI_Datatype oldtype,
                       MPI_Datatype *newtype)
{
    int rc = plx_api_old_ctor(count, blocklens, "array_of_blocklengths", disps, "array_of_displacements",
                              newtype, "MPI_Type_hindexed");
    return rc ? rc : PMPI_Type_create_hindexed(count, blocklens, disps, oldtype, newtype);
}

int PMPI_Type_struct(int count, int blocklens[], MPI_Aint disps[], MPI_Datatype types[], MPI_Datatype *newtype)
{
    int rc = plx_api_old_ctor(count, blocklens, "array_of_blocklengths", disps, "array_of_displacements",
                              newtype, "MPI_Type_struct");
    if (rc == MPI_SUCCESS && count > 0 && !types)
        rc = plx_api_null_arg(NULL, "MPI_Type_struct", "array_of_types");
    return rc ? rc : PMPI_Type_create_struct(count, blocklens, disps, types, newtype);
}
