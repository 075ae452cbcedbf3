/*
 * MPI-1 calls removed from the standard in MPI 3.0 that MPICH still ships for
 * old programs: MPI_Address, MPI_Type_extent, _lb, _ub, _hvector,
 * _hindexed, _struct, and the MPI_LB / MPI_UB markers of MPI_Type_struct.
 * Each is its MPI-2 replacement under the old name.
 *
 * MPI_LB and MPI_UB are not datatypes of the engine: MPI_Type_struct takes
 * them out of the list, builds the struct of the rest and resizes it. An
 * MPI_LB entry at displacement d sets the lower bound to d (the least of
 * them when there are several), an MPI_UB entry the upper bound (the
 * greatest); without one, that bound is the struct's own. The type's
 * envelope is then MPI_COMBINER_RESIZED, not MPI_COMBINER_STRUCT.
 */
#include <stdlib.h>
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
    return PMPI_Get_address(location, address);
}

/* The MPI-1 call's own checks, so that an error names it (not the MPI-2
 * call that does the work). */
static int plx_legacy_check_type(MPI_Datatype datatype, const void *out, const char *fn, const char *outname)
{
    plx_api_check_init(fn);
    if (!out)
        return plx_api_null_arg(NULL, fn, outname);
    if (!plx_dt_lookup(datatype))
        return plx_api_err(NULL, fn, MPI_ERR_TYPE, "argument 'datatype' is %s (handle 0x%x)",
                           datatype == MPI_DATATYPE_NULL ? "MPI_DATATYPE_NULL" : "not a valid datatype",
                           (unsigned)datatype);
    return MPI_SUCCESS;
}

int PMPI_Type_extent(MPI_Datatype datatype, MPI_Aint *extent)
{
    MPI_Aint lb;
    int rc = plx_legacy_check_type(datatype, extent, "MPI_Type_extent", "extent");
    return rc != MPI_SUCCESS ? rc : PMPI_Type_get_extent(datatype, &lb, extent);
}

int PMPI_Type_lb(MPI_Datatype datatype, MPI_Aint *displacement)
{
    MPI_Aint extent;
    int rc = plx_legacy_check_type(datatype, displacement, "MPI_Type_lb", "displacement");
    return rc != MPI_SUCCESS ? rc : PMPI_Type_get_extent(datatype, displacement, &extent);
}

int PMPI_Type_ub(MPI_Datatype datatype, MPI_Aint *displacement)
{
    MPI_Aint lb, extent;
    int rc = plx_legacy_check_type(datatype, displacement, "MPI_Type_ub", "displacement");
    if (rc != MPI_SUCCESS)
        return rc;
    rc = PMPI_Type_get_extent(datatype, &lb, &extent);
    if (rc == MPI_SUCCESS)
        *displacement = lb + extent;
    return rc;
}

int PMPI_Type_hvector(int count, int blocklength, MPI_Aint stride, MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    return PMPI_Type_create_hvector(count, blocklength, stride, oldtype, newtype);
}

int PMPI_Type_hindexed(int count, int *array_of_blocklengths, MPI_Aint *array_of_displacements,
                       MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    return PMPI_Type_create_hindexed(count, array_of_blocklengths, array_of_displacements, oldtype, newtype);
}

int PMPI_Type_struct(int count, int *array_of_blocklengths, MPI_Aint *array_of_displacements,
                     MPI_Datatype *array_of_types, MPI_Datatype *newtype)
{
    static const char fn[] = "MPI_Type_struct";
    plx_api_check_init(fn);
    if (count < 0)
        return plx_api_err(NULL, fn, MPI_ERR_COUNT, "argument 'count' is negative (%d)", count);
    if (count > 0 && (!array_of_types || !array_of_blocklengths || !array_of_displacements))
        return plx_api_null_arg(NULL, fn, !array_of_types ? "array_of_types"
                                          : !array_of_blocklengths ? "array_of_blocklengths"
                                                                   : "array_of_displacements");
    int markers = 0;
    for (int i = 0; i < count && array_of_types; i++)
        markers += array_of_types[i] == MPI_LB || array_of_types[i] == MPI_UB;
    if (!markers)
        return PMPI_Type_create_struct(count, array_of_blocklengths, array_of_displacements, array_of_types,
                                       newtype);
    if (!newtype)
        return plx_api_null_arg(NULL, fn, "newtype");
    if (!array_of_displacements || !array_of_blocklengths)
        return plx_api_null_arg(NULL, fn, !array_of_displacements ? "array_of_displacements"
                                                                  : "array_of_blocklengths");
    int n = 0, have_lb = 0, have_ub = 0;
    MPI_Aint lb = 0, ub = 0;
    int *bl = plx_malloc((size_t)count * sizeof *bl);
    MPI_Aint *disp = plx_malloc((size_t)count * sizeof *disp);
    MPI_Datatype *types = plx_malloc((size_t)count * sizeof *types);
    for (int i = 0; i < count; i++) {
        MPI_Aint d = array_of_displacements[i];
        if (array_of_types[i] == MPI_LB) {
            lb = have_lb && lb < d ? lb : d;
            have_lb = 1;
        } else if (array_of_types[i] == MPI_UB) {
            ub = have_ub && ub > d ? ub : d;
            have_ub = 1;
        } else {
            bl[n] = array_of_blocklengths[i];
            disp[n] = d;
            types[n] = array_of_types[i];
            n++;
        }
    }
    MPI_Datatype inner = MPI_DATATYPE_NULL;
    int rc = PMPI_Type_create_struct(n, bl, disp, types, &inner);
    free(bl);
    free(disp);
    free(types);
    if (rc != MPI_SUCCESS)
        return rc;
    MPI_Aint ilb = 0, iext = 0;
    if (n > 0)
        rc = PMPI_Type_get_extent(inner, &ilb, &iext);
    if (rc == MPI_SUCCESS) {
        MPI_Aint lo = have_lb ? lb : ilb, hi = have_ub ? ub : ilb + iext;
        if (hi < lo)
            hi = lo;    /* an MPI_UB below the lower bound: an empty extent, as MPICH makes it */
        rc = PMPI_Type_create_resized(inner, lo, hi - lo, newtype);
    }
    PMPI_Type_free(&inner);
    return rc;
}
