/*
 * Datatype entry points: constructors, commit/free, queries (extent, size,
 * envelope, contents, name), MPI_Pack/Unpack and their external32 forms.
 * The engine is src/core/datatype.c and dt_pack.c.
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "api/api.h"
#include "api/attr.h"
#include "api/count.h"
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
#pragma weak MPI_Type_contiguous = PMPI_Type_contiguous
#pragma weak MPI_Type_vector = PMPI_Type_vector
#pragma weak MPI_Type_create_hvector = PMPI_Type_create_hvector
#pragma weak MPI_Type_indexed = PMPI_Type_indexed
#pragma weak MPI_Type_create_hindexed = PMPI_Type_create_hindexed
#pragma weak MPI_Type_create_indexed_block = PMPI_Type_create_indexed_block
#pragma weak MPI_Type_create_hindexed_block = PMPI_Type_create_hindexed_block
#pragma weak MPI_Type_create_struct = PMPI_Type_create_struct
#pragma weak MPI_Type_create_subarray = PMPI_Type_create_subarray
#pragma weak MPI_Type_create_darray = PMPI_Type_create_darray
#pragma weak MPI_Type_create_resized = PMPI_Type_create_resized
#pragma weak MPI_Type_dup = PMPI_Type_dup
#pragma weak MPI_Type_get_envelope = PMPI_Type_get_envelope
#pragma weak MPI_Type_get_contents = PMPI_Type_get_contents
#pragma weak MPI_Type_match_size = PMPI_Type_match_size
#pragma weak MPI_Pack = PMPI_Pack
#pragma weak MPI_Unpack = PMPI_Unpack
#pragma weak MPI_Pack_size = PMPI_Pack_size
#pragma weak MPI_Pack_external = PMPI_Pack_external
#pragma weak MPI_Unpack_external = PMPI_Unpack_external
#pragma weak MPI_Pack_external_size = PMPI_Pack_external_size

static int plx_api_dt_arg(MPI_Datatype h, struct plx_datatype **dt_p, const char *fn, const char *arg)
{
    struct plx_datatype *dt = plx_dt_lookup(h);
    if (!dt)
        return plx_api_err(NULL, fn, MPI_ERR_TYPE, "argument '%s' is %s (handle 0x%x)", arg,
                           h == MPI_DATATYPE_NULL ? "MPI_DATATYPE_NULL" : "not a valid datatype", (unsigned)h);
    *dt_p = dt;
    return MPI_SUCCESS;
}

static int plx_api_dt(MPI_Datatype h, struct plx_datatype **dt_p, const char *fn)
{
    plx_api_check_init(fn);
    return plx_api_dt_arg(h, dt_p, fn, "datatype");
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

/* The four extent queries: (true_lb, true_extent) or (lb, extent) into v. */
static int plx_api_extent(MPI_Datatype h, int true_ext, const void *lb, const void *extent, MPI_Aint v[2],
                          const char *fn)
{
    struct plx_datatype *dt = NULL;
    int rc = plx_api_dt(h, &dt, fn);
    if (rc)
        return rc;
    if (!lb || !extent)
        return plx_api_null_arg(NULL, fn, lb ? "extent" : "lb");
    v[0] = true_ext ? dt->true_lb : dt->lb;
    v[1] = true_ext ? dt->true_extent : dt->extent;
    return MPI_SUCCESS;
}

int PMPI_Type_get_extent_x(MPI_Datatype datatype, MPI_Count *lb, MPI_Count *extent)
{
    MPI_Aint v[2] = { 0, 0 };
    int rc = plx_api_extent(datatype, 0, lb, extent, v, "MPI_Type_get_extent_x");
    if (rc == MPI_SUCCESS)
        *lb = v[0], *extent = v[1];
    return rc;
}

int PMPI_Type_get_extent(MPI_Datatype datatype, MPI_Aint *lb, MPI_Aint *extent)
{
    MPI_Aint v[2] = { 0, 0 };
    int rc = plx_api_extent(datatype, 0, lb, extent, v, "MPI_Type_get_extent");
    if (rc == MPI_SUCCESS)
        *lb = v[0], *extent = v[1];
    return rc;
}

int PMPI_Type_get_true_extent_x(MPI_Datatype datatype, MPI_Count *lb, MPI_Count *extent)
{
    MPI_Aint v[2] = { 0, 0 };
    int rc = plx_api_extent(datatype, 1, lb, extent, v, "MPI_Type_get_true_extent_x");
    if (rc == MPI_SUCCESS)
        *lb = v[0], *extent = v[1];
    return rc;
}

int PMPI_Type_get_true_extent(MPI_Datatype datatype, MPI_Aint *lb, MPI_Aint *extent)
{
    MPI_Aint v[2] = { 0, 0 };
    int rc = plx_api_extent(datatype, 1, lb, extent, v, "MPI_Type_get_true_extent");
    if (rc == MPI_SUCCESS)
        *lb = v[0], *extent = v[1];
    return rc;
}

int PMPI_Type_get_name(MPI_Datatype datatype, char *name, int *resultlen)
{
    struct plx_datatype *dt = NULL;
    if (datatype == MPI_DATATYPE_NULL && name && resultlen) {  /* MPI 4.1: null handles have names */
        strcpy(name, "MPI_DATATYPE_NULL");
        *resultlen = (int)strlen(name);
        return MPI_SUCCESS;
    }
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
    plx_api_check_init("MPI_Type_commit");
    if (!datatype)
        return plx_api_null_arg(NULL, "MPI_Type_commit", "datatype");
    int rc = plx_api_dt(*datatype, &dt, "MPI_Type_commit");
    if (rc == MPI_SUCCESS)
        dt->committed = 1;     /* flattened when it was built */
    return rc;
}

int PMPI_Type_free(MPI_Datatype *datatype)
{
    struct plx_datatype *dt = NULL;
    plx_api_check_init("MPI_Type_free");
    if (!datatype)
        return plx_api_null_arg(NULL, "MPI_Type_free", "datatype");
    int rc = plx_api_dt(*datatype, &dt, "MPI_Type_free");
    if (rc)
        return rc;
    if (dt->obj.builtin)
        return plx_api_err(NULL, "MPI_Type_free", MPI_ERR_TYPE, "cannot free the predefined datatype %s",
                           dt->name);
    plx_api_lock();
    /* Delete callbacks run now, when the user lets go, not when the last
     * pending operation does; a failing one leaves the type allocated. */
    rc = plx_attr_type_delete_all(dt, "MPI_Type_free");
    if (rc == MPI_SUCCESS)
        plx_dt_release(dt);
    plx_api_unlock();
    if (rc == MPI_SUCCESS)
        *datatype = MPI_DATATYPE_NULL;
    return rc;
}

/* --- constructors ---------------------------------------------------------- */

static int plx_api_new_type(struct plx_datatype *d, MPI_Datatype *newtype, const char *fn)
{
    if (!d)
        return plx_api_err(NULL, fn, MPI_ERR_INTERN, "out of datatype handles");
    *newtype = d->obj.handle;
    return MPI_SUCCESS;
}

/* Common checks: count >= 0, oldtype valid, newtype not NULL. */
static int plx_api_ctor_check(int count, MPI_Datatype old, struct plx_datatype **old_p, MPI_Datatype *newtype,
                              const char *fn)
{
    plx_api_check_init(fn);
    if (count < 0)
        return plx_api_err(NULL, fn, MPI_ERR_COUNT, "argument 'count' is negative (%d)", count);
    if (!newtype)
        return plx_api_null_arg(NULL, fn, "newtype");
    return plx_api_dt_arg(old, old_p, fn, "oldtype");
}

static int plx_api_blocklens_check(int count, const int *bl, const char *fn)
{
    if (count > 0 && !bl)
        return plx_api_null_arg(NULL, fn, "array_of_blocklengths");
    for (int i = 0; i < count; i++)
        if (bl[i] < 0)
            return plx_api_err(NULL, fn, MPI_ERR_ARG, "array_of_blocklengths[%d] is negative (%d)", i, bl[i]);
    return MPI_SUCCESS;
}

int PMPI_Type_contiguous(int count, MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    static const char fn[] = "MPI_Type_contiguous";
    struct plx_datatype *old = NULL;
    int rc = plx_api_ctor_check(count, oldtype, &old, newtype, fn);
    if (rc)
        return rc;
    plx_api_lock();
    rc = plx_api_new_type(plx_dt_contiguous(count, old), newtype, fn);
    plx_api_unlock();
    return rc;
}

static int plx_api_vector(int count, int blocklen, MPI_Aint stride, int bytes, MPI_Datatype oldtype,
                          MPI_Datatype *newtype, const char *fn)
{
    struct plx_datatype *old = NULL;
    int rc = plx_api_ctor_check(count, oldtype, &old, newtype, fn);
    if (rc)
        return rc;
    if (blocklen < 0)
        return plx_api_err(NULL, fn, MPI_ERR_ARG, "argument 'blocklength' is negative (%d)", blocklen);
    plx_api_lock();
    rc = plx_api_new_type(plx_dt_vector(count, blocklen, stride, bytes, old), newtype, fn);
    plx_api_unlock();
    return rc;
}

int PMPI_Type_vector(int count, int blocklength, int stride, MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    return plx_api_vector(count, blocklength, stride, 0, oldtype, newtype, "MPI_Type_vector");
}

int PMPI_Type_create_hvector(int count, int blocklength, MPI_Aint stride, MPI_Datatype oldtype,
                             MPI_Datatype *newtype)
{
    return plx_api_vector(count, blocklength, stride, 1, oldtype, newtype, "MPI_Type_create_hvector");
}

static int plx_api_indexed(int count, const int *bls, int bl, const int *idisps, const MPI_Aint *adisps,
                           MPI_Datatype oldtype, MPI_Datatype *newtype, const char *fn)
{
    struct plx_datatype *old = NULL;
    int rc = plx_api_ctor_check(count, oldtype, &old, newtype, fn);
    if (rc == MPI_SUCCESS && bls)
        rc = plx_api_blocklens_check(count, bls, fn);
    if (rc)
        return rc;
    if (!bls && bl < 0)
        return plx_api_err(NULL, fn, MPI_ERR_ARG, "argument 'blocklength' is negative (%d)", bl);
    if (count > 0 && !idisps && !adisps)
        return plx_api_null_arg(NULL, fn, "array_of_displacements");
    plx_api_lock();
    rc = plx_api_new_type(plx_dt_indexed(count, bls, bl, idisps, adisps, old), newtype, fn);
    plx_api_unlock();
    return rc;
}

int PMPI_Type_indexed(int count, const int blocklens[], const int disps[], MPI_Datatype oldtype,
                      MPI_Datatype *newtype)
{
    static const char fn[] = "MPI_Type_indexed";
    if (count > 0 && !blocklens) {
        plx_api_check_init(fn);
        return plx_api_null_arg(NULL, fn, "array_of_blocklengths");
    }
    static const int none = 0;
    return plx_api_indexed(count, count > 0 ? blocklens : &none, 0, count > 0 ? disps : &none, NULL, oldtype,
                           newtype, fn);
}

int PMPI_Type_create_hindexed(int count, const int blocklens[], const MPI_Aint disps[], MPI_Datatype oldtype,
                              MPI_Datatype *newtype)
{
    static const char fn[] = "MPI_Type_create_hindexed";
    static const int none = 0;
    static const MPI_Aint anone = 0;
    if (count > 0 && !blocklens) {
        plx_api_check_init(fn);
        return plx_api_null_arg(NULL, fn, "array_of_blocklengths");
    }
    return plx_api_indexed(count, count > 0 ? blocklens : &none, 0, NULL, count > 0 ? disps : &anone, oldtype,
                           newtype, fn);
}

int PMPI_Type_create_indexed_block(int count, int blocklength, const int disps[], MPI_Datatype oldtype,
                                   MPI_Datatype *newtype)
{
    static const int none = 0;
    if (count > 0 && !disps)
        return plx_api_indexed(count, NULL, blocklength, NULL, NULL, oldtype, newtype,
                               "MPI_Type_create_indexed_block");
    return plx_api_indexed(count, NULL, blocklength, disps ? disps : &none, NULL, oldtype, newtype,
                           "MPI_Type_create_indexed_block");
}

int PMPI_Type_create_hindexed_block(int count, int blocklength, const MPI_Aint disps[], MPI_Datatype oldtype,
                                    MPI_Datatype *newtype)
{
    static const MPI_Aint anone = 0;
    if (count > 0 && !disps)
        return plx_api_indexed(count, NULL, blocklength, NULL, NULL, oldtype, newtype,
                               "MPI_Type_create_hindexed_block");
    return plx_api_indexed(count, NULL, blocklength, NULL, disps ? disps : &anone, oldtype, newtype,
                           "MPI_Type_create_hindexed_block");
}

static int plx_api_struct(int count, const int blocklens[], const MPI_Aint disps[], const MPI_Datatype types[],
                          MPI_Datatype *newtype, const char *fn)
{
    plx_api_check_init(fn);
    if (count < 0)
        return plx_api_err(NULL, fn, MPI_ERR_COUNT, "argument 'count' is negative (%d)", count);
    if (!newtype)
        return plx_api_null_arg(NULL, fn, "newtype");
    int rc = plx_api_blocklens_check(count, blocklens, fn);
    if (rc)
        return rc;
    if (count > 0 && (!disps || !types))
        return plx_api_null_arg(NULL, fn, disps ? "array_of_types" : "array_of_displacements");
    struct plx_datatype **ts = plx_malloc(((size_t)count + 1) * sizeof *ts);
    for (int i = 0; i < count; i++) {
        ts[i] = plx_dt_lookup(types[i]);
        if (!ts[i]) {
            free(ts);
            return plx_api_err(NULL, fn, MPI_ERR_TYPE, "array_of_types[%d] is %s (handle 0x%x)", i,
                               types[i] == MPI_DATATYPE_NULL ? "MPI_DATATYPE_NULL" : "not a valid datatype",
                               (unsigned)types[i]);
        }
    }
    static const int none = 0;
    static const MPI_Aint anone = 0;
    plx_api_lock();
    rc = plx_api_new_type(plx_dt_struct(count, count ? blocklens : &none, count ? disps : &anone, ts), newtype, fn);
    plx_api_unlock();
    free(ts);
    return rc;
}

int PMPI_Type_create_struct(int count, const int blocklens[], const MPI_Aint disps[], const MPI_Datatype types[],
                            MPI_Datatype *newtype)
{
    return plx_api_struct(count, blocklens, disps, types, newtype, "MPI_Type_create_struct");
}

int PMPI_Type_create_resized(MPI_Datatype oldtype, MPI_Aint lb, MPI_Aint extent, MPI_Datatype *newtype)
{
    static const char fn[] = "MPI_Type_create_resized";
    struct plx_datatype *old = NULL;
    int rc = plx_api_ctor_check(0, oldtype, &old, newtype, fn);
    if (rc)
        return rc;
    plx_api_lock();
    rc = plx_api_new_type(plx_dt_resized(old, lb, extent), newtype, fn);
    plx_api_unlock();
    return rc;
}

int PMPI_Type_dup(MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    static const char fn[] = "MPI_Type_dup";
    struct plx_datatype *old = NULL;
    int rc = plx_api_ctor_check(0, oldtype, &old, newtype, fn);
    if (rc)
        return rc;
    plx_api_lock();
    struct plx_datatype *d = plx_dt_dup(old);
    if (d && old->name[0])
        snprintf(d->name, sizeof d->name, "%s", old->name);
    if (d && (rc = plx_attr_type_copy(old, d, fn)) != MPI_SUCCESS) {
        plx_dt_release(d);
        plx_api_unlock();
        return rc;
    }
    rc = plx_api_new_type(d, newtype, fn);
    plx_api_unlock();
    return rc;
}

static int plx_api_order(int order, const char *fn)
{
    if (order != MPI_ORDER_C && order != MPI_ORDER_FORTRAN)
        return plx_api_err(NULL, fn, MPI_ERR_ARG, "argument 'order' is %d (MPI_ORDER_C or MPI_ORDER_FORTRAN)",
                           order);
    return MPI_SUCCESS;
}

static int plx_api_subarray(int ndims, const int sizes[], const int subsizes[], const int starts[], int order,
                            MPI_Datatype oldtype, MPI_Datatype *newtype, const char *fn)
{
    struct plx_datatype *old = NULL;
    int rc = plx_api_ctor_check(0, oldtype, &old, newtype, fn);
    if (rc)
        return rc;
    if (ndims <= 0)
        return plx_api_err(NULL, fn, MPI_ERR_DIMS, "argument 'ndims' is %d (must be positive)", ndims);
    if (!sizes || !subsizes || !starts)
        return plx_api_null_arg(NULL, fn, !sizes ? "array_of_sizes" : !subsizes ? "array_of_subsizes"
                                                                                 : "array_of_starts");
    if ((rc = plx_api_order(order, fn)))
        return rc;
    for (int i = 0; i < ndims; i++) {
        if (sizes[i] <= 0)
            return plx_api_err(NULL, fn, MPI_ERR_ARG, "array_of_sizes[%d] is %d (must be positive)", i, sizes[i]);
        if (subsizes[i] <= 0 || subsizes[i] > sizes[i])
            return plx_api_err(NULL, fn, MPI_ERR_ARG, "array_of_subsizes[%d] is %d (must be 1..%d)", i,
                               subsizes[i], sizes[i]);
        if (starts[i] < 0 || starts[i] > sizes[i] - subsizes[i])
            return plx_api_err(NULL, fn, MPI_ERR_ARG, "array_of_starts[%d] is %d (must be 0..%d)", i, starts[i],
                               sizes[i] - subsizes[i]);
    }
    plx_api_lock();
    rc = plx_api_new_type(plx_dt_subarray(ndims, sizes, subsizes, starts, order, old), newtype, fn);
    plx_api_unlock();
    return rc;
}

int PMPI_Type_create_subarray(int ndims, const int sizes[], const int subsizes[], const int starts[], int order,
                              MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    return plx_api_subarray(ndims, sizes, subsizes, starts, order, oldtype, newtype, "MPI_Type_create_subarray");
}

static int plx_api_darray(int size, int rank, int ndims, const int gsizes[], const int distribs[], const int dargs[],
                          const int psizes[], int order, MPI_Datatype oldtype, MPI_Datatype *newtype, const char *fn)
{
    struct plx_datatype *old = NULL;
    int rc = plx_api_ctor_check(0, oldtype, &old, newtype, fn);
    if (rc)
        return rc;
    if (size <= 0 || rank < 0 || rank >= size)
        return plx_api_err(NULL, fn, MPI_ERR_ARG, "arguments 'size' %d and 'rank' %d are invalid", size, rank);
    if (ndims <= 0)
        return plx_api_err(NULL, fn, MPI_ERR_DIMS, "argument 'ndims' is %d (must be positive)", ndims);
    if (!gsizes || !distribs || !dargs || !psizes)
        return plx_api_null_arg(NULL, fn, !gsizes ? "array_of_gsizes" : !distribs ? "array_of_distribs"
                                          : !dargs ? "array_of_dargs" : "array_of_psizes");
    if ((rc = plx_api_order(order, fn)))
        return rc;
    long prod = 1;
    for (int i = 0; i < ndims; i++) {
        if (gsizes[i] <= 0 || psizes[i] <= 0)
            return plx_api_err(NULL, fn, MPI_ERR_ARG, "gsizes[%d] = %d and psizes[%d] = %d must be positive", i,
                               gsizes[i], i, psizes[i]);
        prod *= psizes[i];
        int d = distribs[i];
        if (d != MPI_DISTRIBUTE_BLOCK && d != MPI_DISTRIBUTE_CYCLIC && d != MPI_DISTRIBUTE_NONE)
            return plx_api_err(NULL, fn, MPI_ERR_ARG, "array_of_distribs[%d] is %d", i, d);
        if (d == MPI_DISTRIBUTE_NONE && psizes[i] != 1)
            return plx_api_err(NULL, fn, MPI_ERR_ARG, "dimension %d is MPI_DISTRIBUTE_NONE but psizes[%d] is %d", i,
                               i, psizes[i]);
        if (dargs[i] != MPI_DISTRIBUTE_DFLT_DARG && dargs[i] <= 0)
            return plx_api_err(NULL, fn, MPI_ERR_ARG, "array_of_dargs[%d] is %d", i, dargs[i]);
        if (d == MPI_DISTRIBUTE_BLOCK && dargs[i] != MPI_DISTRIBUTE_DFLT_DARG &&
            (long)dargs[i] * psizes[i] < gsizes[i])
            return plx_api_err(NULL, fn, MPI_ERR_ARG, "block size %d times %d processes does not cover %d elements "
                               "in dimension %d", dargs[i], psizes[i], gsizes[i], i);
    }
    if (prod != size)
        return plx_api_err(NULL, fn, MPI_ERR_ARG, "the process grid has %ld processes but 'size' is %d", prod, size);
    plx_api_lock();
    rc = plx_api_new_type(plx_dt_darray(size, rank, ndims, gsizes, distribs, dargs, psizes, order, old), newtype,
                          fn);
    plx_api_unlock();
    return rc;
}

int PMPI_Type_create_darray(int size, int rank, int ndims, const int gsizes[], const int distribs[],
                            const int dargs[], const int psizes[], int order, MPI_Datatype oldtype,
                            MPI_Datatype *newtype)
{
    return plx_api_darray(size, rank, ndims, gsizes, distribs, dargs, psizes, order, oldtype, newtype,
                          "MPI_Type_create_darray");
}

/* --- envelope and contents --------------------------------------------- */

int PMPI_Type_get_envelope(MPI_Datatype datatype, int *num_integers, int *num_addresses, int *num_datatypes,
                           int *combiner)
{
    static const char fn[] = "MPI_Type_get_envelope";
    struct plx_datatype *dt = NULL;
    int rc = plx_api_dt(datatype, &dt, fn);
    if (rc)
        return rc;
    if (!num_integers || !num_addresses || !num_datatypes || !combiner)
        return plx_api_null_arg(NULL, fn, !num_integers ? "num_integers" : !num_addresses ? "num_addresses"
                                          : !num_datatypes ? "num_datatypes" : "combiner");
    if (dt->nl)
        return plx_api_err(NULL, fn, MPI_ERR_TYPE, "the datatype was made with counts above what an int holds: "
                           "its envelope needs MPI_Type_get_envelope_c");
    *num_integers = dt->ni;
    *num_addresses = dt->na;
    *num_datatypes = dt->nt;
    *combiner = dt->combiner;
    return MPI_SUCCESS;
}

/* max_larges < 0: the int form, which cannot return large counts. */
static int plx_api_contents(MPI_Datatype datatype, MPI_Count max_integers, MPI_Count max_addresses,
                            MPI_Count max_larges, MPI_Count max_datatypes, int integers[], MPI_Aint addresses[],
                            MPI_Count larges[], MPI_Datatype datatypes[], const char *fn)
{
    struct plx_datatype *dt = NULL;
    int rc = plx_api_dt(datatype, &dt, fn);
    if (rc)
        return rc;
    if (dt->combiner == MPI_COMBINER_NAMED)
        return plx_api_err(NULL, fn, MPI_ERR_TYPE, "%s is a predefined datatype: it has no contents", dt->name);
    if (max_integers < dt->ni || max_addresses < dt->na || max_datatypes < dt->nt)
        return plx_api_err(NULL, fn, MPI_ERR_ARG, "arrays too small: the type has %d integers, %d addresses and "
                           "%d datatypes (see MPI_Type_get_envelope)", dt->ni, dt->na, dt->nt);
    if ((dt->ni && !integers) || (dt->na && !addresses) || (dt->nt && !datatypes))
        return plx_api_null_arg(NULL, fn, dt->ni && !integers ? "array_of_integers"
                                          : dt->na && !addresses ? "array_of_addresses" : "array_of_datatypes");
    if (dt->nl && max_larges < 0)
        return plx_api_err(NULL, fn, MPI_ERR_TYPE, "the datatype was made with counts above what an int holds: "
                           "its contents need MPI_Type_get_contents_c");
    if (max_larges >= 0 && dt->nl > max_larges)
        return plx_api_err(NULL, fn, MPI_ERR_ARG, "array_of_large_counts too small: the type has %d", dt->nl);
    if (dt->nl && !larges)
        return plx_api_null_arg(NULL, fn, "array_of_large_counts");
    if (dt->nl)
        memcpy(larges, dt->larges, (size_t)dt->nl * sizeof(MPI_Count));
    if (dt->ni)
        memcpy(integers, dt->ints, (size_t)dt->ni * sizeof(int));
    if (dt->na)
        memcpy(addresses, dt->aints, (size_t)dt->na * sizeof(MPI_Aint));
    plx_api_lock();
    for (int i = 0; i < dt->nt; i++) {
        datatypes[i] = dt->types[i];
        plx_dt_addref(dt->children[i]);    /* the caller frees derived ones */
    }
    plx_api_unlock();
    return MPI_SUCCESS;
}

int PMPI_Type_get_contents(MPI_Datatype datatype, int max_integers, int max_addresses, int max_datatypes,
                           int integers[], MPI_Aint addresses[], MPI_Datatype datatypes[])
{
    return plx_api_contents(datatype, max_integers, max_addresses, -1, max_datatypes, integers, addresses, NULL,
                            datatypes, "MPI_Type_get_contents");
}

int PMPI_Type_match_size(int typeclass, int size, MPI_Datatype *datatype)
{
    static const char fn[] = "MPI_Type_match_size";
    plx_api_check_init(fn);
    if (!datatype)
        return plx_api_null_arg(NULL, fn, "datatype");
    static const MPI_Datatype reals[] = { MPI_FLOAT, MPI_DOUBLE, MPI_LONG_DOUBLE };
    static const MPI_Datatype ints[] = { MPI_SIGNED_CHAR, MPI_SHORT, MPI_INT, MPI_LONG_LONG };
    static const MPI_Datatype cplx[] = { MPI_C_FLOAT_COMPLEX, MPI_C_DOUBLE_COMPLEX, MPI_C_LONG_DOUBLE_COMPLEX };
    const MPI_Datatype *list = NULL;
    int n = 0;
    switch (typeclass) {
    case MPI_TYPECLASS_REAL: list = reals; n = 3; break;
    case MPI_TYPECLASS_INTEGER: list = ints; n = 4; break;
    case MPI_TYPECLASS_COMPLEX: list = cplx; n = 3; break;
    default:
        return plx_api_err(NULL, fn, MPI_ERR_ARG, "argument 'typeclass' is %d", typeclass);
    }
    for (int i = 0; i < n; i++)
        if (((list[i] >> 8) & 0xff) == size) {
            *datatype = list[i];
            return MPI_SUCCESS;
        }
    return plx_api_err(NULL, fn, MPI_ERR_ARG, "no type of class %d has %d bytes", typeclass, size);
}

/* --- Pack / Unpack ------------------------------------------------------- */

static int plx_api_pack_dt(MPI_Count count, MPI_Datatype h, struct plx_datatype **dt_p, const char *fn)
{
    plx_api_check_init(fn);
    if (count < 0)
        return plx_api_err(NULL, fn, MPI_ERR_COUNT, "argument count is negative (%lld)", (long long)count);
    int rc = plx_api_dt_arg(h, dt_p, fn, "datatype");
    if (rc == MPI_SUCCESS && !(*dt_p)->committed)
        rc = plx_api_err(NULL, fn, MPI_ERR_TYPE, "datatype is not committed (call MPI_Type_commit)");
    return rc;
}

/* The checks MPI_Pack and MPI_Unpack share: comm, count and type, position,
 * and that count elements fit between *position and the end of the packed
 * buffer of bufsize bytes. Sets *bytes_p. */
static int plx_api_pack_args(MPI_Comm comm, MPI_Count count, MPI_Datatype datatype, MPI_Count bufsize,
                             MPI_Count position, const void *inbuf, const void *outbuf, const char *fn,
                             struct plx_datatype **dt_p, size_t *bytes_p)
{
    struct plx_comm *c = NULL;
    int rc = plx_api_comm(comm, &c, fn);
    if (rc == MPI_SUCCESS)
        rc = plx_api_pack_dt(count, datatype, dt_p, fn);
    if (rc)
        return rc;
    size_t bytes = (size_t)count * (size_t)(*dt_p)->size;
    if (position < 0 || (size_t)position + bytes > (size_t)(bufsize < 0 ? 0 : bufsize))
        return plx_api_err(c, fn, MPI_ERR_TRUNCATE,
                           "%zu bytes at position %lld do not fit the %lld-byte packed buffer", bytes,
                           (long long)position, (long long)bufsize);
    if (bytes && (!inbuf || !outbuf))
        return plx_api_null_arg(c, fn, !inbuf ? "inbuf" : "outbuf");
    *bytes_p = bytes;
    return MPI_SUCCESS;
}

/* MPI_Pack and MPI_Unpack (unpack: 1); the int forms pass a position that
 * fits an int and get back one that does (the buffer size is an int). */
static int plx_api_pack(int unpack, const void *inbuf, MPI_Count incount, MPI_Datatype datatype, void *outbuf,
                        MPI_Count size, MPI_Count *position, MPI_Comm comm, const char *fn)
{
    struct plx_datatype *dt = NULL;
    size_t bytes = 0;
    if (!position) {
        plx_api_check_init(fn);
        return plx_api_null_arg(NULL, fn, "position");
    }
    int rc = plx_api_pack_args(comm, incount, datatype, size, *position, inbuf, outbuf, fn, &dt, &bytes);
    if (rc)
        return rc;
    if (unpack)
        plx_dt_unpack_range((const char *)inbuf + *position, bytes, outbuf, incount, dt, 0);
    else
        plx_dt_pack(inbuf, incount, dt, (char *)outbuf + *position);
    *position += (MPI_Count)bytes;
    return MPI_SUCCESS;
}

int PMPI_Pack(const void *inbuf, int incount, MPI_Datatype datatype, void *outbuf, int outsize, int *position,
              MPI_Comm comm)
{
    MPI_Count pos = position ? *position : 0;
    int rc = plx_api_pack(0, inbuf, incount, datatype, outbuf, outsize, position ? &pos : NULL, comm, "MPI_Pack");
    if (rc == MPI_SUCCESS)
        *position = (int)pos;
    return rc;
}

int PMPI_Unpack(const void *inbuf, int insize, int *position, void *outbuf, int outcount, MPI_Datatype datatype,
                MPI_Comm comm)
{
    MPI_Count pos = position ? *position : 0;
    int rc = plx_api_pack(1, inbuf, outcount, datatype, outbuf, insize, position ? &pos : NULL, comm, "MPI_Unpack");
    if (rc == MPI_SUCCESS)
        *position = (int)pos;
    return rc;
}

static int plx_api_pack_size(MPI_Count incount, MPI_Datatype datatype, MPI_Comm comm, MPI_Count *size_p,
                             MPI_Count limit, const char *fn)
{
    struct plx_datatype *dt = NULL;
    struct plx_comm *c = NULL;
    int rc = plx_api_comm(comm, &c, fn);
    if (rc == MPI_SUCCESS)
        rc = plx_api_pack_dt(incount, datatype, &dt, fn);
    if (rc)
        return rc;
    if (!size_p)
        return plx_api_null_arg(c, fn, "size");
    MPI_Count n = incount * dt->size;
    if (n > limit)
        return plx_api_err(c, fn, MPI_ERR_COUNT, "%lld bytes do not fit an int (use MPI_Pack_size_c)",
                           (long long)n);
    *size_p = n;
    return MPI_SUCCESS;
}

int PMPI_Pack_size(int incount, MPI_Datatype datatype, MPI_Comm comm, int *size)
{
    MPI_Count n = 0;
    int rc = plx_api_pack_size(incount, datatype, comm, size ? &n : NULL, INT_MAX, "MPI_Pack_size");
    if (rc == MPI_SUCCESS)
        *size = (int)n;
    return rc;
}

static int plx_api_datarep(const char *datarep, const char *fn)
{
    if (!datarep)
        return plx_api_null_arg(NULL, fn, "datarep");
    if (strcmp(datarep, "external32") != 0)
        return plx_api_err(NULL, fn, MPI_ERR_ARG, "data representation \"%s\" is not supported (only "
                           "\"external32\")", datarep);
    return MPI_SUCCESS;
}

static int plx_api_x32_size(struct plx_datatype *dt, MPI_Count count, MPI_Aint *size_p, const char *fn)
{
    MPI_Count n = plx_dt_external32_size(dt, count);
    if (n < 0)
        return plx_api_err(NULL, fn, MPI_ERR_TYPE, "datatype %s has no external32 representation", dt->name);
    *size_p = (MPI_Aint)n;
    return MPI_SUCCESS;
}

static int plx_api_x32_pack_size(const char datarep[], MPI_Count incount, MPI_Datatype datatype, MPI_Aint *size,
                                 const char *fn)
{
    struct plx_datatype *dt = NULL;
    int rc = plx_api_pack_dt(incount, datatype, &dt, fn);
    if (rc == MPI_SUCCESS)
        rc = plx_api_datarep(datarep, fn);
    if (rc == MPI_SUCCESS && !size)
        rc = plx_api_null_arg(NULL, fn, "size");
    if (rc == MPI_SUCCESS)
        rc = plx_api_x32_size(dt, incount, size, fn);
    return rc;
}

int PMPI_Pack_external_size(const char datarep[], int incount, MPI_Datatype datatype, MPI_Aint *size)
{
    return plx_api_x32_pack_size(datarep, incount, datatype, size, "MPI_Pack_external_size");
}

static int plx_api_x32_pack(const char datarep[], const void *inbuf, MPI_Count incount, MPI_Datatype datatype,
                            void *outbuf, MPI_Aint outsize, MPI_Aint *position, const char *fn)
{
    struct plx_datatype *dt = NULL;
    MPI_Aint bytes = 0;
    int rc = plx_api_pack_dt(incount, datatype, &dt, fn);
    if (rc == MPI_SUCCESS)
        rc = plx_api_datarep(datarep, fn);
    if (rc == MPI_SUCCESS && !position)
        rc = plx_api_null_arg(NULL, fn, "position");
    if (rc == MPI_SUCCESS)
        rc = plx_api_x32_size(dt, incount, &bytes, fn);
    if (rc)
        return rc;
    if (*position < 0 || *position + bytes > outsize)
        return plx_api_err(NULL, fn, MPI_ERR_TRUNCATE, "%ld bytes at position %ld do not fit the %ld-byte buffer",
                           (long)bytes, (long)*position, (long)outsize);
    if (bytes && (!inbuf || !outbuf))
        return plx_api_null_arg(NULL, fn, !inbuf ? "inbuf" : "outbuf");
    if (plx_dt_pack_external32(inbuf, incount, dt, (char *)outbuf + *position) != 0)
        return plx_api_err(NULL, fn, MPI_ERR_CONVERSION, "a value of %s does not fit its external32 size",
                           dt->name);
    *position += bytes;
    return MPI_SUCCESS;
}

int PMPI_Pack_external(const char datarep[], const void *inbuf, int incount, MPI_Datatype datatype, void *outbuf,
                       MPI_Aint outsize, MPI_Aint *position)
{
    return plx_api_x32_pack(datarep, inbuf, incount, datatype, outbuf, outsize, position, "MPI_Pack_external");
}

static int plx_api_x32_unpack(const char datarep[], const void *inbuf, MPI_Aint insize, MPI_Aint *position,
                              void *outbuf, MPI_Count outcount, MPI_Datatype datatype, const char *fn)
{
    struct plx_datatype *dt = NULL;
    MPI_Aint bytes = 0;
    int rc = plx_api_pack_dt(outcount, datatype, &dt, fn);
    if (rc == MPI_SUCCESS)
        rc = plx_api_datarep(datarep, fn);
    if (rc == MPI_SUCCESS && !position)
        rc = plx_api_null_arg(NULL, fn, "position");
    if (rc == MPI_SUCCESS)
        rc = plx_api_x32_size(dt, outcount, &bytes, fn);
    if (rc)
        return rc;
    if (*position < 0 || *position + bytes > insize)
        return plx_api_err(NULL, fn, MPI_ERR_TRUNCATE, "%ld bytes at position %ld go past the %ld-byte input",
                           (long)bytes, (long)*position, (long)insize);
    if (bytes && (!inbuf || !outbuf))
        return plx_api_null_arg(NULL, fn, !inbuf ? "inbuf" : "outbuf");
    if (plx_dt_unpack_external32((const char *)inbuf + *position, outbuf, outcount, dt) != 0)
        return plx_api_err(NULL, fn, MPI_ERR_TYPE, "the datatype has no external32 representation");
    *position += bytes;
    return MPI_SUCCESS;
}

int PMPI_Unpack_external(const char datarep[], const void *inbuf, MPI_Aint insize, MPI_Aint *position,
                         void *outbuf, int outcount, MPI_Datatype datatype)
{
    return plx_api_x32_unpack(datarep, inbuf, insize, position, outbuf, outcount, datatype, "MPI_Unpack_external");
}

/* --- large-count forms (MPI 4.0 `_c`) -------------------------------------
 * MPI_Type_contiguous_c, _vector_c and _create_hvector_c take any count,
 * block length and stride; when one is above an int the type's contents are
 * recorded as large counts (MPI_Type_get_envelope_c/_contents_c return them,
 * the int forms refuse such a type with MPI_ERR_TYPE). The other
 * constructors keep int arrays in the engine (layouts of indexed and struct
 * blocks), so their counts, block lengths and element displacements must
 * fit an int (MPI_ERR_COUNT otherwise); byte displacements and extents are
 * MPI_Aint anyway. Counts of data (send, pack, reduce) have no such limit. */

#pragma weak MPI_Type_size_c = PMPI_Type_size_c
#pragma weak MPI_Type_get_extent_c = PMPI_Type_get_extent_c
#pragma weak MPI_Type_get_true_extent_c = PMPI_Type_get_true_extent_c
#pragma weak MPI_Type_contiguous_c = PMPI_Type_contiguous_c
#pragma weak MPI_Type_vector_c = PMPI_Type_vector_c
#pragma weak MPI_Type_create_hvector_c = PMPI_Type_create_hvector_c
#pragma weak MPI_Type_indexed_c = PMPI_Type_indexed_c
#pragma weak MPI_Type_create_hindexed_c = PMPI_Type_create_hindexed_c
#pragma weak MPI_Type_create_indexed_block_c = PMPI_Type_create_indexed_block_c
#pragma weak MPI_Type_create_hindexed_block_c = PMPI_Type_create_hindexed_block_c
#pragma weak MPI_Type_create_struct_c = PMPI_Type_create_struct_c
#pragma weak MPI_Type_create_subarray_c = PMPI_Type_create_subarray_c
#pragma weak MPI_Type_create_darray_c = PMPI_Type_create_darray_c
#pragma weak MPI_Type_create_resized_c = PMPI_Type_create_resized_c
#pragma weak MPI_Type_get_envelope_c = PMPI_Type_get_envelope_c
#pragma weak MPI_Type_get_contents_c = PMPI_Type_get_contents_c
#pragma weak MPI_Pack_c = PMPI_Pack_c
#pragma weak MPI_Unpack_c = PMPI_Unpack_c
#pragma weak MPI_Pack_size_c = PMPI_Pack_size_c
#pragma weak MPI_Pack_external_c = PMPI_Pack_external_c
#pragma weak MPI_Unpack_external_c = PMPI_Unpack_external_c
#pragma weak MPI_Pack_external_size_c = PMPI_Pack_external_size_c

/* A constructor's scalar argument that must fit an int. */
static int plx_api_int_arg(MPI_Count v, const char *fn, const char *arg)
{
    plx_api_check_init(fn);
    if (!plx_count_fits_int(v))
        return plx_api_err(NULL, fn, MPI_ERR_COUNT, "argument '%s' is %lld, which does not fit an int (the "
                           "datatype constructors keep int arguments)", arg, (long long)v);
    return MPI_SUCCESS;
}

/* n entries of a constructor's MPI_Count array as ints (*out_p: free it),
 * MPI_ERR_COUNT naming the entry that does not fit. NULL stays NULL. */
static int plx_api_int_array(const MPI_Count *a, MPI_Count n, int **out_p, const char *fn, const char *arg)
{
    *out_p = NULL;
    if (!a || n <= 0)
        return MPI_SUCCESS;
    int *o = plx_malloc((size_t)n * sizeof *o);
    for (MPI_Count i = 0; i < n; i++) {
        if (!plx_count_fits_int(a[i])) {
            free(o);
            plx_api_check_init(fn);
            return plx_api_err(NULL, fn, MPI_ERR_COUNT, "%s[%lld] is %lld, which does not fit an int", arg,
                               (long long)i, (long long)a[i]);
        }
        o[i] = (int)a[i];
    }
    *out_p = o;
    return MPI_SUCCESS;
}

static MPI_Aint *plx_api_aint_array(const MPI_Count *a, MPI_Count n)
{
    if (!a || n <= 0)
        return NULL;
    MPI_Aint *o = plx_malloc((size_t)n * sizeof *o);
    for (MPI_Count i = 0; i < n; i++)
        o[i] = (MPI_Aint)a[i];
    return o;
}

int PMPI_Type_size_c(MPI_Datatype datatype, MPI_Count *size)
{
    struct plx_datatype *dt = NULL;
    int rc = plx_api_dt(datatype, &dt, "MPI_Type_size_c");
    if (rc)
        return rc;
    if (!size)
        return plx_api_null_arg(NULL, "MPI_Type_size_c", "size");
    *size = dt->size;
    return MPI_SUCCESS;
}

int PMPI_Type_get_extent_c(MPI_Datatype datatype, MPI_Count *lb, MPI_Count *extent)
{
    MPI_Aint v[2] = { 0, 0 };
    int rc = plx_api_extent(datatype, 0, lb, extent, v, "MPI_Type_get_extent_c");
    if (rc == MPI_SUCCESS)
        *lb = v[0], *extent = v[1];
    return rc;
}

int PMPI_Type_get_true_extent_c(MPI_Datatype datatype, MPI_Count *lb, MPI_Count *extent)
{
    MPI_Aint v[2] = { 0, 0 };
    int rc = plx_api_extent(datatype, 1, lb, extent, v, "MPI_Type_get_true_extent_c");
    if (rc == MPI_SUCCESS)
        *lb = v[0], *extent = v[1];
    return rc;
}

/* The type made by a `_c` constructor with values above an int records them
 * as large counts (MPI_Type_get_contents_c returns them). */
static int plx_api_new_type_large(struct plx_datatype *d, int nl, const MPI_Count *v, MPI_Datatype *newtype,
                                  const char *fn)
{
    if (d && nl)
        plx_dt_record_large(d, nl, v);
    return plx_api_new_type(d, newtype, fn);
}

int PMPI_Type_contiguous_c(MPI_Count count, MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    static const char fn[] = "MPI_Type_contiguous_c";
    struct plx_datatype *old = NULL;
    int rc = plx_api_ctor_check(count < 0 ? -1 : 0, oldtype, &old, newtype, fn);
    if (rc)
        return rc;
    plx_api_lock();
    rc = plx_api_new_type_large(plx_dt_contiguous(count, old), plx_count_fits_int(count) ? 0 : 1, &count, newtype,
                                fn);
    plx_api_unlock();
    return rc;
}

/* vector (bytes 0) and hvector (1) with any count and block length (and,
 * for vector, stride); the large counts are recorded when one is above an int. */
static int plx_api_vector_c(MPI_Count count, MPI_Count blocklength, MPI_Count stride, int bytes,
                            MPI_Datatype oldtype, MPI_Datatype *newtype, const char *fn)
{
    struct plx_datatype *old = NULL;
    int rc = plx_api_ctor_check(count < 0 ? -1 : 0, oldtype, &old, newtype, fn);
    if (rc)
        return rc;
    if (blocklength < 0)
        return plx_api_err(NULL, fn, MPI_ERR_ARG, "argument 'blocklength' is negative (%lld)",
                           (long long)blocklength);
    int large = !plx_count_fits_int(count) || !plx_count_fits_int(blocklength) ||
                (!bytes && !plx_count_fits_int(stride));
    const MPI_Count v[3] = { count, blocklength, stride };
    plx_api_lock();
    rc = plx_api_new_type_large(plx_dt_vector(count, blocklength, (MPI_Aint)stride, bytes, old),
                                large ? (bytes ? 2 : 3) : 0, v, newtype, fn);
    plx_api_unlock();
    return rc;
}

int PMPI_Type_vector_c(MPI_Count count, MPI_Count blocklength, MPI_Count stride, MPI_Datatype oldtype,
                       MPI_Datatype *newtype)
{
    return plx_api_vector_c(count, blocklength, stride, 0, oldtype, newtype, "MPI_Type_vector_c");
}

int PMPI_Type_create_hvector_c(MPI_Count count, MPI_Count blocklength, MPI_Count stride, MPI_Datatype oldtype,
                               MPI_Datatype *newtype)
{
    return plx_api_vector_c(count, blocklength, stride, 1, oldtype, newtype, "MPI_Type_create_hvector_c");
}

/* The four indexed forms: per-block lengths bls (NULL: every block is bl
 * long) and displacements in elements (bytes: 0) or bytes (1). */
static int plx_api_indexed_c(MPI_Count count, const MPI_Count *bls, MPI_Count bl, const MPI_Count *disps, int bytes,
                             MPI_Datatype oldtype, MPI_Datatype *newtype, const char *fn)
{
    static const int none = 0;
    static const MPI_Aint anone = 0;
    int *ibls = NULL, *idisps = NULL;
    int rc = plx_api_int_arg(count, fn, "count");
    if (rc == MPI_SUCCESS && !bls)
        rc = plx_api_int_arg(bl, fn, "blocklength");
    if (rc == MPI_SUCCESS && bls)
        rc = plx_api_int_array(bls, count, &ibls, fn, "array_of_blocklengths");
    if (rc == MPI_SUCCESS && !bytes)
        rc = plx_api_int_array(disps, count, &idisps, fn, "array_of_displacements");
    if (rc) {
        free(ibls);
        return rc;
    }
    MPI_Aint *adisps = bytes ? plx_api_aint_array(disps, count) : NULL;
    const int *bl_arg = bls ? (ibls ? ibls : &none) : NULL;
    const int *id_arg = NULL;
    const MPI_Aint *ad_arg = NULL;
    if (disps || count <= 0) {  /* both NULL: plx_api_indexed names the missing array */
        id_arg = bytes ? NULL : idisps ? idisps : &none;
        ad_arg = bytes ? (adisps ? adisps : &anone) : NULL;
    }
    rc = plx_api_indexed((int)count, bl_arg, (int)bl, id_arg, ad_arg, oldtype, newtype, fn);
    free(ibls), free(idisps), free(adisps);
    return rc;
}

int PMPI_Type_indexed_c(MPI_Count count, const MPI_Count blocklens[], const MPI_Count disps[], MPI_Datatype oldtype,
                        MPI_Datatype *newtype)
{
    static const char fn[] = "MPI_Type_indexed_c";
    static const MPI_Count none = 0;
    if (count > 0 && !blocklens) {
        plx_api_check_init(fn);
        return plx_api_null_arg(NULL, fn, "array_of_blocklengths");
    }
    return plx_api_indexed_c(count, blocklens ? blocklens : &none, 0, disps, 0, oldtype, newtype, fn);
}

int PMPI_Type_create_hindexed_c(MPI_Count count, const MPI_Count blocklens[], const MPI_Count disps[],
                                MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    static const char fn[] = "MPI_Type_create_hindexed_c";
    static const MPI_Count none = 0;
    if (count > 0 && !blocklens) {
        plx_api_check_init(fn);
        return plx_api_null_arg(NULL, fn, "array_of_blocklengths");
    }
    return plx_api_indexed_c(count, blocklens ? blocklens : &none, 0, disps, 1, oldtype, newtype, fn);
}

int PMPI_Type_create_indexed_block_c(MPI_Count count, MPI_Count blocklength, const MPI_Count disps[],
                                     MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    return plx_api_indexed_c(count, NULL, blocklength, disps, 0, oldtype, newtype,
                             "MPI_Type_create_indexed_block_c");
}

int PMPI_Type_create_hindexed_block_c(MPI_Count count, MPI_Count blocklength, const MPI_Count disps[],
                                      MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    return plx_api_indexed_c(count, NULL, blocklength, disps, 1, oldtype, newtype,
                             "MPI_Type_create_hindexed_block_c");
}

int PMPI_Type_create_struct_c(MPI_Count count, const MPI_Count blocklens[], const MPI_Count disps[],
                              const MPI_Datatype types[], MPI_Datatype *newtype)
{
    static const char fn[] = "MPI_Type_create_struct_c";
    int *ibls = NULL;
    int rc = plx_api_int_arg(count, fn, "count");
    if (rc == MPI_SUCCESS && count > 0 && (!blocklens || !disps))
        return plx_api_null_arg(NULL, fn, !blocklens ? "array_of_blocklengths" : "array_of_displacements");
    if (rc == MPI_SUCCESS)
        rc = plx_api_int_array(blocklens, count, &ibls, fn, "array_of_blocklengths");
    if (rc)
        return rc;
    MPI_Aint *adisps = plx_api_aint_array(disps, count);
    rc = plx_api_struct((int)count, ibls, adisps, types, newtype, fn);
    free(ibls), free(adisps);
    return rc;
}

int PMPI_Type_create_subarray_c(int ndims, const MPI_Count sizes[], const MPI_Count subsizes[],
                                const MPI_Count starts[], int order, MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    static const char fn[] = "MPI_Type_create_subarray_c";
    int *is = NULL, *iss = NULL, *ist = NULL;
    int rc = plx_api_int_array(sizes, ndims, &is, fn, "array_of_sizes");
    if (rc == MPI_SUCCESS)
        rc = plx_api_int_array(subsizes, ndims, &iss, fn, "array_of_subsizes");
    if (rc == MPI_SUCCESS)
        rc = plx_api_int_array(starts, ndims, &ist, fn, "array_of_starts");
    if (rc == MPI_SUCCESS)
        rc = plx_api_subarray(ndims, is, iss, ist, order, oldtype, newtype, fn);
    free(is), free(iss), free(ist);
    return rc;
}

int PMPI_Type_create_darray_c(int size, int rank, int ndims, const MPI_Count gsizes[], const int distribs[],
                              const int dargs[], const int psizes[], int order, MPI_Datatype oldtype,
                              MPI_Datatype *newtype)
{
    static const char fn[] = "MPI_Type_create_darray_c";
    int *ig = NULL;
    int rc = plx_api_int_array(gsizes, ndims, &ig, fn, "array_of_gsizes");
    if (rc == MPI_SUCCESS)
        rc = plx_api_darray(size, rank, ndims, ig, distribs, dargs, psizes, order, oldtype, newtype, fn);
    free(ig);
    return rc;
}

int PMPI_Type_create_resized_c(MPI_Datatype oldtype, MPI_Count lb, MPI_Count extent, MPI_Datatype *newtype)
{
    static const char fn[] = "MPI_Type_create_resized_c";
    struct plx_datatype *old = NULL;
    int rc = plx_api_ctor_check(0, oldtype, &old, newtype, fn);
    if (rc)
        return rc;
    plx_api_lock();
    rc = plx_api_new_type(plx_dt_resized(old, (MPI_Aint)lb, (MPI_Aint)extent), newtype, fn);
    plx_api_unlock();
    return rc;
}

int PMPI_Type_get_envelope_c(MPI_Datatype datatype, MPI_Count *num_integers, MPI_Count *num_addresses,
                             MPI_Count *num_large_counts, MPI_Count *num_datatypes, int *combiner)
{
    static const char fn[] = "MPI_Type_get_envelope_c";
    struct plx_datatype *dt = NULL;
    int rc = plx_api_dt(datatype, &dt, fn);
    if (rc)
        return rc;
    if (!num_integers || !num_addresses || !num_large_counts || !num_datatypes || !combiner)
        return plx_api_null_arg(NULL, fn, !num_integers ? "num_integers" : !num_addresses ? "num_addresses"
                                          : !num_large_counts ? "num_large_counts"
                                          : !num_datatypes ? "num_datatypes" : "combiner");
    *num_integers = dt->ni;
    *num_addresses = dt->na;
    *num_large_counts = dt->nl;
    *num_datatypes = dt->nt;
    *combiner = dt->combiner;
    return MPI_SUCCESS;
}

int PMPI_Type_get_contents_c(MPI_Datatype datatype, MPI_Count max_integers, MPI_Count max_addresses,
                             MPI_Count max_large_counts, MPI_Count max_datatypes, int integers[],
                             MPI_Aint addresses[], MPI_Count large_counts[], MPI_Datatype datatypes[])
{
    if (max_large_counts < 0) {
        plx_api_check_init("MPI_Type_get_contents_c");
        return plx_api_err(NULL, "MPI_Type_get_contents_c", MPI_ERR_ARG, "argument 'max_large_counts' is "
                           "negative (%lld)", (long long)max_large_counts);
    }
    return plx_api_contents(datatype, max_integers, max_addresses, max_large_counts, max_datatypes, integers,
                            addresses, large_counts, datatypes, "MPI_Type_get_contents_c");
}

int PMPI_Pack_c(const void *inbuf, MPI_Count incount, MPI_Datatype datatype, void *outbuf, MPI_Count outsize,
                MPI_Count *position, MPI_Comm comm)
{
    return plx_api_pack(0, inbuf, incount, datatype, outbuf, outsize, position, comm, "MPI_Pack_c");
}

int PMPI_Unpack_c(const void *inbuf, MPI_Count insize, MPI_Count *position, void *outbuf, MPI_Count outcount,
                  MPI_Datatype datatype, MPI_Comm comm)
{
    return plx_api_pack(1, inbuf, outcount, datatype, outbuf, insize, position, comm, "MPI_Unpack_c");
}

int PMPI_Pack_size_c(MPI_Count incount, MPI_Datatype datatype, MPI_Comm comm, MPI_Count *size)
{
    return plx_api_pack_size(incount, datatype, comm, size, INT64_MAX, "MPI_Pack_size_c");
}

int PMPI_Pack_external_size_c(const char *datarep, MPI_Count incount, MPI_Datatype datatype, MPI_Count *size)
{
    MPI_Aint n = 0;
    int rc = plx_api_x32_pack_size(datarep, incount, datatype, size ? &n : NULL, "MPI_Pack_external_size_c");
    if (rc == MPI_SUCCESS)
        *size = n;
    return rc;
}

int PMPI_Pack_external_c(const char *datarep, const void *inbuf, MPI_Count incount, MPI_Datatype datatype,
                         void *outbuf, MPI_Count outsize, MPI_Count *position)
{
    MPI_Aint pos = position ? (MPI_Aint)*position : 0;
    int rc = plx_api_x32_pack(datarep, inbuf, incount, datatype, outbuf, (MPI_Aint)outsize, position ? &pos : NULL,
                              "MPI_Pack_external_c");
    if (rc == MPI_SUCCESS)
        *position = pos;
    return rc;
}

int PMPI_Unpack_external_c(const char datarep[], const void *inbuf, MPI_Count insize, MPI_Count *position,
                           void *outbuf, MPI_Count outcount, MPI_Datatype datatype)
{
    MPI_Aint pos = position ? (MPI_Aint)*position : 0;
    int rc = plx_api_x32_unpack(datarep, inbuf, (MPI_Aint)insize, position ? &pos : NULL, outbuf, outcount,
                                datatype, "MPI_Unpack_external_c");
    if (rc == MPI_SUCCESS)
        *position = pos;
    return rc;
}

/* --- MPI_Type_create_f90_integer / _real / _complex ---------------------------
 * The Fortran 90 parameterized types: the predefined type of the smallest
 * kind with at least the asked decimal precision p and exponent range r (as
 * gfortran's SELECTED_INT_KIND / SELECTED_REAL_KIND choose it: 1, 2, 4, 8
 * byte integers; 4, 8, 16 byte reals). Each (combiner, p, r) gets one type,
 * made at the first call and returned again after (MPI 4.1 section 19.1.9:
 * the same handle every time); they live until the end. */

#pragma weak MPI_Type_create_f90_integer = PMPI_Type_create_f90_integer
#pragma weak MPI_Type_create_f90_real = PMPI_Type_create_f90_real
#pragma weak MPI_Type_create_f90_complex = PMPI_Type_create_f90_complex

struct plx_f90_type {
    struct plx_f90_type *next;
    int combiner, p, r;
    MPI_Datatype handle;
};
static struct plx_f90_type *plx_f90_types;     /* under the API lock */

static int plx_api_f90(int combiner, int p, int r, MPI_Datatype base, MPI_Datatype *newtype, const char *fn)
{
    plx_api_lock();
    struct plx_f90_type *t;
    for (t = plx_f90_types; t; t = t->next)
        if (t->combiner == combiner && t->p == p && t->r == r)
            break;
    if (!t) {
        int ints[2] = { p, r };
        int ni = combiner == MPI_COMBINER_F90_INTEGER ? 1 : 2;
        if (ni == 1)
            ints[0] = r;
        struct plx_datatype *d = plx_dt_f90(combiner, ni, ints, plx_dt_lookup(base));
        if (!d) {
            plx_api_unlock();
            return plx_api_err(NULL, fn, MPI_ERR_INTERN, "out of datatype handles");
        }
        t = plx_malloc(sizeof *t);
        *t = (struct plx_f90_type){ plx_f90_types, combiner, p, r, d->obj.handle };
        plx_f90_types = t;
    }
    *newtype = t->handle;
    plx_api_unlock();
    return MPI_SUCCESS;
}

int PMPI_Type_create_f90_integer(int r, MPI_Datatype *newtype)
{
    static const char fn[] = "MPI_Type_create_f90_integer";
    plx_api_check_init(fn);
    if (!newtype)
        return plx_api_null_arg(NULL, fn, "newtype");
    MPI_Datatype base = r < 0 ? MPI_DATATYPE_NULL : r <= 2 ? MPI_INTEGER1 : r <= 4 ? MPI_INTEGER2
                      : r <= 9 ? MPI_INTEGER4 : r <= 18 ? MPI_INTEGER8 : MPI_DATATYPE_NULL;
    if (base == MPI_DATATYPE_NULL)
        return plx_api_err(NULL, fn, MPI_ERR_ARG, "argument 'r' is %d: no integer kind has a decimal range "
                           "of %d digits (0..18 are available)", r, r);
    return plx_api_f90(MPI_COMBINER_F90_INTEGER, 0, r, base, newtype, fn);
}

/* The real kind for precision p and range r (MPI_UNDEFINED: no demand):
 * 0 single, 1 double, 2 quadruple, -1 none. */
static int plx_f90_real_kind(int p, int r)
{
    int pp = p == MPI_UNDEFINED ? 0 : p, rr = r == MPI_UNDEFINED ? 0 : r;
    if (pp <= 6 && rr <= 37)
        return 0;
    if (pp <= 15 && rr <= 307)
        return 1;
    if (pp <= 33 && rr <= 4931)
        return 2;
    return -1;
}

static int plx_api_f90_real(int p, int r, int complex, MPI_Datatype *newtype, const char *fn)
{
    static const MPI_Datatype reals[3] = { MPI_REAL4, MPI_REAL8, MPI_REAL16 };
    static const MPI_Datatype complexes[3] = { MPI_COMPLEX8, MPI_COMPLEX16, MPI_COMPLEX32 };
    plx_api_check_init(fn);
    if (!newtype)
        return plx_api_null_arg(NULL, fn, "newtype");
    if (p == MPI_UNDEFINED && r == MPI_UNDEFINED)
        return plx_api_err(NULL, fn, MPI_ERR_ARG, "arguments 'p' and 'r' are both MPI_UNDEFINED (one must be "
                           "given)");
    if ((p < 0 && p != MPI_UNDEFINED) || (r < 0 && r != MPI_UNDEFINED))
        return plx_api_err(NULL, fn, MPI_ERR_ARG, "argument '%s' is negative (%d)", p < 0 && p != MPI_UNDEFINED
                           ? "p" : "r", p < 0 && p != MPI_UNDEFINED ? p : r);
    int k = plx_f90_real_kind(p, r);
    if (k < 0)
        return plx_api_err(NULL, fn, MPI_ERR_ARG, "no %s kind has precision %d and exponent range %d (at most 33 "
                           "digits and range 4931)", complex ? "complex" : "real", p, r);
    return plx_api_f90(complex ? MPI_COMBINER_F90_COMPLEX : MPI_COMBINER_F90_REAL, p, r,
                       complex ? complexes[k] : reals[k], newtype, fn);
}

int PMPI_Type_create_f90_real(int p, int r, MPI_Datatype *newtype)
{
    return plx_api_f90_real(p, r, 0, newtype, "MPI_Type_create_f90_real");
}

int PMPI_Type_create_f90_complex(int p, int r, MPI_Datatype *newtype)
{
    return plx_api_f90_real(p, r, 1, newtype, "MPI_Type_create_f90_complex");
}
