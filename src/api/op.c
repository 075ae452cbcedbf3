/*
 * Operation entry points: MPI_Op_create/free/commutative and
 * MPI_Reduce_local. The kernels are in src/core/op.c.
 */
#include <mpi.h>
#include "api/api.h"
#include "core/op.h"

#pragma weak MPI_Op_create = PMPI_Op_create
#pragma weak MPI_Op_free = PMPI_Op_free
#pragma weak MPI_Op_commutative = PMPI_Op_commutative
#pragma weak MPI_Reduce_local = PMPI_Reduce_local

static int plx_api_op(MPI_Op h, struct plx_op **op_p, const char *fn)
{
    struct plx_op *op = plx_op_lookup(h);
    if (!op)
        return plx_api_err(NULL, fn, MPI_ERR_OP, "argument 'op' is %s (handle 0x%x)",
                           h == MPI_OP_NULL ? "MPI_OP_NULL" : "not a valid operation", (unsigned)h);
    *op_p = op;
    return MPI_SUCCESS;
}

static int plx_api_op_create(MPI_User_function *user_fn, MPI_User_function_c *user_fn_c, int commute, MPI_Op *op,
                             const char *fn)
{
    plx_api_check_init(fn);
    if ((!user_fn && !user_fn_c) || !op)
        return plx_api_null_arg(NULL, fn, !op ? "op" : "user_fn");
    plx_api_lock();
    struct plx_op *o = user_fn ? plx_op_create(user_fn, commute) : plx_op_create_c(user_fn_c, commute);
    plx_api_unlock();
    if (!o)
        return plx_api_err(NULL, fn, MPI_ERR_INTERN, "out of operation handles");
    *op = o->obj.handle;
    return MPI_SUCCESS;
}

int PMPI_Op_create(MPI_User_function *user_fn, int commute, MPI_Op *op)
{
    return plx_api_op_create(user_fn, NULL, commute, op, "MPI_Op_create");
}

int PMPI_Op_free(MPI_Op *op)
{
    static const char fn[] = "MPI_Op_free";
    plx_api_check_init(fn);
    if (!op)
        return plx_api_null_arg(NULL, fn, "op");
    struct plx_op *o = NULL;
    int rc = plx_api_op(*op, &o, fn);
    if (rc)
        return rc;
    if (o->obj.builtin)
        return plx_api_err(NULL, fn, MPI_ERR_OP, "cannot free a predefined operation (handle 0x%x)", (unsigned)*op);
    plx_api_lock();
    plx_op_release(o);
    plx_api_unlock();
    *op = MPI_OP_NULL;
    return MPI_SUCCESS;
}

int PMPI_Op_commutative(MPI_Op op, int *commute)
{
    static const char fn[] = "MPI_Op_commutative";
    plx_api_check_init(fn);
    struct plx_op *o = NULL;
    int rc = plx_api_op(op, &o, fn);
    if (rc)
        return rc;
    if (!commute)
        return plx_api_null_arg(NULL, fn, "commute");
    *commute = o->commute;
    return MPI_SUCCESS;
}

static int plx_api_reduce_local(const void *inbuf, void *inoutbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op,
                                const char *fn)
{
    plx_api_check_init(fn);
    struct plx_op *o = NULL;
    int rc = plx_api_op(op, &o, fn);
    if (rc)
        return rc;
    if (count < 0)
        return plx_api_err(NULL, fn, MPI_ERR_COUNT, "argument 'count' is negative (%lld)", (long long)count);
    struct plx_datatype *dt = plx_dt_lookup(datatype);
    if (!dt)
        return plx_api_err(NULL, fn, MPI_ERR_TYPE, "argument 'datatype' is not a valid datatype (handle 0x%x)",
                           (unsigned)datatype);
    if (count > 0 && (!inbuf || !inoutbuf) && dt->obj.builtin)
        return plx_api_err(NULL, fn, MPI_ERR_BUFFER, "argument '%s' is NULL", inbuf ? "inoutbuf" : "inbuf");
    if (!plx_op_valid_for(o, dt))
        return plx_api_err(NULL, fn, MPI_ERR_OP, "operation 0x%x is not defined for datatype %s", (unsigned)op,
                           dt->name[0] ? dt->name : "(derived)");
    if (plx_op_reduce(o, inbuf, inoutbuf, count, dt) != 0)
        return plx_api_err(NULL, fn, MPI_ERR_OP, "operation 0x%x cannot combine datatype %s", (unsigned)op,
                           dt->name[0] ? dt->name : "(derived)");
    return MPI_SUCCESS;
}

int PMPI_Reduce_local(const void *inbuf, void *inoutbuf, int count, MPI_Datatype datatype, MPI_Op op)
{
    return plx_api_reduce_local(inbuf, inoutbuf, count, datatype, op, "MPI_Reduce_local");
}

/* --- large-count forms (MPI 4.0 `_c`) ----------------------------------- */

#pragma weak MPI_Op_create_c = PMPI_Op_create_c
#pragma weak MPI_Reduce_local_c = PMPI_Reduce_local_c

int PMPI_Op_create_c(MPI_User_function_c *user_fn, int commute, MPI_Op *op)
{
    return plx_api_op_create(NULL, user_fn, commute, op, "MPI_Op_create_c");
}

int PMPI_Reduce_local_c(const void *inbuf, void *inoutbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op)
{
    return plx_api_reduce_local(inbuf, inoutbuf, count, datatype, op, "MPI_Reduce_local_c");
}
