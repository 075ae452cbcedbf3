/*
 * Small MPI 4.1 calls: the status field accessors (MPI_Status_get/set_source,
 * _tag, _error: for languages that cannot reach the fields) and
 * MPI_Type_get_value_index (the predefined value-index pair type of a value
 * type, as MPI_MAXLOC/MPI_MINLOC use them).
 *
 * Also (session 7): MPI_Remove_error_class/_code/_string (core/errors.c
 * keeps the table) and MPI_Get_hw_resource_info.
 */
#include <mpi.h>
#include <stdio.h>
#include <unistd.h>
#include "api/api.h"
#include "core/datatype.h"

#pragma weak MPI_Status_get_source = PMPI_Status_get_source
#pragma weak MPI_Status_get_tag = PMPI_Status_get_tag
#pragma weak MPI_Status_get_error = PMPI_Status_get_error
#pragma weak MPI_Status_set_source = PMPI_Status_set_source
#pragma weak MPI_Status_set_tag = PMPI_Status_set_tag
#pragma weak MPI_Status_set_error = PMPI_Status_set_error
#pragma weak MPI_Type_get_value_index = PMPI_Type_get_value_index

/* which: 0 source, 1 tag, 2 error */
static int plx_status_field(MPI_Status *status, int which, int *get, int set, const char *fn)
{
    if (!status || status == MPI_STATUS_IGNORE || status == MPI_STATUSES_IGNORE)
        return plx_api_err(NULL, fn, MPI_ERR_ARG, "argument 'status' is NULL or MPI_STATUS_IGNORE");
    int *f = which == 0 ? &status->MPI_SOURCE : which == 1 ? &status->MPI_TAG : &status->MPI_ERROR;
    if (get) {
        *get = *f;
    } else {
        *f = set;
    }
    return MPI_SUCCESS;
}

static int plx_status_get(MPI_Status *status, int which, int *out, const char *fn, const char *arg)
{
    if (!out)
        return plx_api_null_arg(NULL, fn, arg);
    return plx_status_field(status, which, out, 0, fn);
}

int PMPI_Status_get_source(MPI_Status *status, int *source)
{
    return plx_status_get(status, 0, source, "MPI_Status_get_source", "source");
}

int PMPI_Status_get_tag(MPI_Status *status, int *tag)
{
    return plx_status_get(status, 1, tag, "MPI_Status_get_tag", "tag");
}

int PMPI_Status_get_error(MPI_Status *status, int *error)
{
    return plx_status_get(status, 2, error, "MPI_Status_get_error", "error");
}

int PMPI_Status_set_source(MPI_Status *status, int source)
{
    return plx_status_field(status, 0, NULL, source, "MPI_Status_set_source");
}

int PMPI_Status_set_tag(MPI_Status *status, int tag)
{
    return plx_status_field(status, 1, NULL, tag, "MPI_Status_set_tag");
}

int PMPI_Status_set_error(MPI_Status *status, int error)
{
    return plx_status_field(status, 2, NULL, error, "MPI_Status_set_error");
}

/* MPI 4.1 section 6.9.4: the pairs with an MPI_INT index; any other
 * combination has none (MPI_DATATYPE_NULL, not an error). */
int PMPI_Type_get_value_index(MPI_Datatype value_type, MPI_Datatype index_type, MPI_Datatype *pair_type)
{
    static const char fn[] = "MPI_Type_get_value_index";
    static const MPI_Datatype pairs[][2] = { { MPI_FLOAT, MPI_FLOAT_INT }, { MPI_DOUBLE, MPI_DOUBLE_INT },
                                             { MPI_LONG, MPI_LONG_INT }, { MPI_INT, MPI_2INT },
                                             { MPI_SHORT, MPI_SHORT_INT },
                                             { MPI_LONG_DOUBLE, MPI_LONG_DOUBLE_INT } };
    plx_api_check_init(fn);
    if (!pair_type)
        return plx_api_null_arg(NULL, fn, "pair_type");
    int vok = plx_dt_lookup(value_type) != NULL, iok = plx_dt_lookup(index_type) != NULL;
    if (!vok || !iok)
        return plx_api_err(NULL, fn, MPI_ERR_TYPE, "argument '%s' is not a valid datatype (handle 0x%x)",
                           vok ? "index_type" : "value_type", (unsigned)(vok ? index_type : value_type));
    *pair_type = MPI_DATATYPE_NULL;
    if (index_type == MPI_INT)
        for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++)
            if (pairs[i][0] == value_type)
                *pair_type = pairs[i][1];
    return MPI_SUCCESS;
}

/* --- removing user-defined error classes, codes and strings (MPI 4.1) ---- */

#pragma weak MPI_Remove_error_class = PMPI_Remove_error_class
#pragma weak MPI_Remove_error_code = PMPI_Remove_error_code
#pragma weak MPI_Remove_error_string = PMPI_Remove_error_string

static int plx_remove_err(int why, int v, const char *fn, const char *arg, const char *what)
{
    switch (why) {
    case 0:
        return MPI_SUCCESS;
    case PLX_ERR_RM_NOT_USER:
        return plx_api_err(NULL, fn, MPI_ERR_ARG, "argument '%s' is %d, not a user-defined %s (or already removed)",
                           arg, v, what);
    case PLX_ERR_RM_HAS_STRING:
        return plx_api_err(NULL, fn, MPI_ERR_ARG,
                           "argument '%s' (%d) still has an error string (MPI_Remove_error_string first)", arg, v);
    default:
        return plx_api_err(NULL, fn, MPI_ERR_ARG,
                           "argument '%s' (%d) still has error codes (MPI_Remove_error_code them first)", arg, v);
    }
}

int PMPI_Remove_error_class(int errorclass)
{
    static const char fn[] = "MPI_Remove_error_class";
    plx_api_check_init(fn);
    plx_api_lock();
    int rc = plx_remove_err(plx_err_remove_class(errorclass), errorclass, fn, "errorclass", "error class");
    plx_api_unlock();
    return rc;
}

int PMPI_Remove_error_code(int errorcode)
{
    static const char fn[] = "MPI_Remove_error_code";
    plx_api_check_init(fn);
    plx_api_lock();
    int rc = plx_remove_err(plx_err_remove_code(errorcode), errorcode, fn, "errorcode", "error code");
    plx_api_unlock();
    return rc;
}

int PMPI_Remove_error_string(int errorcode)
{
    static const char fn[] = "MPI_Remove_error_string";
    plx_api_check_init(fn);
    plx_api_lock();
    int rc = plx_remove_err(plx_err_remove_string(errorcode), errorcode, fn, "errorcode", "error class or code");
    plx_api_unlock();
    return rc;
}

/* --- MPI_Get_hw_resource_info (MPI 4.1) ----------------------------------
 * A new info object describing this process's hardware: the resource type
 * MPI_Comm_split_type's guided splits accept (a node's shared memory), the
 * node's name and how many processors are online. */

#pragma weak MPI_Get_hw_resource_info = PMPI_Get_hw_resource_info

int PMPI_Get_hw_resource_info(MPI_Info *hw_info)
{
    static const char fn[] = "MPI_Get_hw_resource_info";
    plx_api_check_init(fn);
    if (!hw_info)
        return plx_api_null_arg(NULL, fn, "hw_info");
    MPI_Info info;
    int rc = PMPI_Info_create(&info);
    if (rc)
        return rc;
    char node[256] = "", cpus[32];
    plx_runtime_node_name(node, sizeof node);
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    snprintf(cpus, sizeof cpus, "%ld", n > 0 ? n : 1);
    if ((rc = PMPI_Info_set(info, "mpi_hw_resource_type", "mpi_shared_memory")) ||
        (node[0] && (rc = PMPI_Info_set(info, "plexus_node_name", node))) ||
        (rc = PMPI_Info_set(info, "plexus_cpus_online", cpus))) {
        PMPI_Info_free(&info);
        return rc;
    }
    *hw_info = info;
    return MPI_SUCCESS;
}
