/* Datatype entry points (predefined types for now). */
#include <mpi.h>
#include <stdio.h>
#include <string.h>
#include "api/api.h"
#include "core/datatype.h"

#pragma weak MPI_Type_size = PMPI_Type_size
#pragma weak MPI_Type_size_x = PMPI_Type_size_x
#pragma weak MPI_Type_get_extent = PMPI_Type_get_extent
#pragma weak MPI_Type_get_extent_x = PMPI_Type_get_extent_x
#pragma weak MPI_Type_get_true_extent = PMPI_Type_get_true_extent
#pragma weak MPI_Type_get_true_extent_x = PMPI_Type_get_true_extent_x
#pragma weak MPI_Type_get_name = PMPI_Type_get_name
#pragma weak MPI_Type_set_name = PMPI_Type_set_name
#pragma weak MPI_Type_commit = PMPI_Type_commit
#pragma weak MPI_Type_free = PMPI_Type_free

static int plx_api_dt(MPI_Datatype h, struct plx_datatype **dt_p, const char *fn)
{
    plx_api_check_init(fn);
    struct plx_datatype *dt = plx_dt_lookup(h);
    if (!dt)
        return plx_api_err(NULL, fn, MPI_ERR_TYPE, "argument 'datatype' is %s (handle 0x%x)",
                           h == MPI_DATATYPE_NULL ? "MPI_DATATYPE_NULL" : "not a valid datatype", (unsigned)h);
    *dt_p = dt;
    return MPI_SUCCESS;
}

int PMPI_Type_size_x(MPI_Datatype datatype, MPI_Count *size)
{
    struct plx_datatype *dt = NULL;
    int rc = plx_api_dt(datatype, &dt, "MPI_Type_size_x");
    if (rc)
        return rc;
    if (!size)
        return plx_api_null_arg(NULL, "MPI_Type_size_x", "size");
    *size = dt->size;
    return MPI_SUCCESS;
}

int PMPI_Type_size(MPI_Datatype datatype, int *size)
{
    struct plx_datatype *dt = NULL;
    int rc = plx_api_dt(datatype, &dt, "MPI_Type_size");
    if (rc)
        return rc;
    if (!size)
        return plx_api_null_arg(NULL, "MPI_Type_size", "size");
    *size = dt->size > 0x7fffffff ? MPI_UNDEFINED : (int)dt->size;
    return MPI_SUCCESS;
}

int PMPI_Type_get_extent_x(MPI_Datatype datatype, MPI_Count *lb, MPI_Count *extent)
{
    struct plx_datatype *dt = NULL;
    int rc = plx_api_dt(datatype, &dt, "MPI_Type_get_extent_x");
    if (rc)
        return rc;
    if (!lb || !extent)
        return plx_api_null_arg(NULL, "MPI_Type_get_extent_x", lb ? "extent" : "lb");
    *lb = dt->lb;
    *extent = dt->extent;
    return MPI_SUCCESS;
}

int PMPI_Type_get_extent(MPI_Datatype datatype, MPI_Aint *lb, MPI_Aint *extent)
{
    struct plx_datatype *dt = NULL;
    int rc = plx_api_dt(datatype, &dt, "MPI_Type_get_extent");
    if (rc)
        return rc;
    if (!lb || !extent)
        return plx_api_null_arg(NULL, "MPI_Type_get_extent", lb ? "extent" : "lb");
    *lb = dt->lb;
    *extent = dt->extent;
    return MPI_SUCCESS;
}

int PMPI_Type_get_true_extent_x(MPI_Datatype datatype, MPI_Count *lb, MPI_Count *extent)
{
    struct plx_datatype *dt = NULL;
    int rc = plx_api_dt(datatype, &dt, "MPI_Type_get_true_extent_x");
    if (rc)
        return rc;
    if (!lb || !extent)
        return plx_api_null_arg(NULL, "MPI_Type_get_true_extent_x", lb ? "extent" : "lb");
    *lb = dt->true_lb;
    *extent = dt->true_extent;
    return MPI_SUCCESS;
}

int PMPI_Type_get_true_extent(MPI_Datatype datatype, MPI_Aint *lb, MPI_Aint *extent)
{
    struct plx_datatype *dt = NULL;
    int rc = plx_api_dt(datatype, &dt, "MPI_Type_get_true_extent");
    if (rc)
        return rc;
    if (!lb || !extent)
        return plx_api_null_arg(NULL, "MPI_Type_get_true_extent", lb ? "extent" : "lb");
    *lb = dt->true_lb;
    *extent = dt->true_extent;
    return MPI_SUCCESS;
}

int PMPI_Type_get_name(MPI_Datatype datatype, char *name, int *resultlen)
{
    struct plx_datatype *dt = NULL;
    int rc = plx_api_dt(datatype, &dt, "MPI_Type_get_name");
    if (rc)
        return rc;
    if (!name || !resultlen)
        return plx_api_null_arg(NULL, "MPI_Type_get_name", name ? "resultlen" : "type_name");
    strcpy(name, dt->name);
    *resultlen = (int)strlen(name);
    return MPI_SUCCESS;
}

int PMPI_Type_set_name(MPI_Datatype datatype, const char *name)
{
    struct plx_datatype *dt = NULL;
    int rc = plx_api_dt(datatype, &dt, "MPI_Type_set_name");
    if (rc)
        return rc;
    if (!name)
        return plx_api_null_arg(NULL, "MPI_Type_set_name", "type_name");
    snprintf(dt->name, sizeof dt->name, "%s", name);
    return MPI_SUCCESS;
}

int PMPI_Type_commit(MPI_Datatype *datatype)
{
    struct plx_datatype *dt = NULL;
    if (!datatype)
        return plx_api_null_arg(NULL, "MPI_Type_commit", "datatype");
    return plx_api_dt(*datatype, &dt, "MPI_Type_commit");
}

int PMPI_Type_free(MPI_Datatype *datatype)
{
    struct plx_datatype *dt = NULL;
    if (!datatype)
        return plx_api_null_arg(NULL, "MPI_Type_free", "datatype");
    int rc = plx_api_dt(*datatype, &dt, "MPI_Type_free");
    if (rc)
        return rc;
    if (dt->obj.builtin)
        return plx_api_err(NULL, "MPI_Type_free", MPI_ERR_TYPE, "cannot free the predefined datatype %s",
                           dt->name);
    *datatype = MPI_DATATYPE_NULL;
    return MPI_SUCCESS;
}
