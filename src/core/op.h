/*
 * Reduction operations: the predefined ones on every type MPI 3.1 section
 * 5.9.2 allows them for, and user-defined ones (MPI_Op_create).
 *
 * Operand order: every combine computes inout = in op inout, as a user
 * function does, so a caller that wants a op b (a from the lower rank) passes
 * in = a, inout = b. Non-commutative operations rely on that.
 *
 * Data is laid out as in a user buffer (count elements, extent apart); a
 * derived type is reduced through its basic type when it has one (a vector
 * of doubles reduces as doubles), walking the type's reduction runs.
 *
 * Predefined op handles are resolved without a table; user ops live in
 * plx_op_tab and are reference counted like datatypes (a nonblocking
 * collective keeps its op alive after MPI_Op_free).
 */
#ifndef PLX_OP_H
#define PLX_OP_H

#include <mpi.h>
#include "core/datatype.h"
#include "core/handle.h"

struct plx_op {
    struct plx_obj obj;
    MPI_User_function *fn;      /* NULL for predefined ops */
    MPI_User_function_c *fn_c;  /* MPI_Op_create_c's (then fn is NULL) */
    int commute;
    MPI_Op handle;
};

extern struct plx_objtab plx_op_tab;

/* The op object of a handle, predefined or user; NULL when invalid. */
struct plx_op *plx_op_lookup(MPI_Op h);
void plx_op_addref(struct plx_op *op);
void plx_op_release(struct plx_op *op);
struct plx_op *plx_op_create(MPI_User_function *fn, int commute);
/* The large-count form (MPI_Op_create_c): fn_c takes an MPI_Count length. */
struct plx_op *plx_op_create_c(MPI_User_function_c *fn_c, int commute);

/* Is the predefined op defined for dt (through its basic type)? User ops
 * accept every type. */
int plx_op_valid_for(const struct plx_op *op, const struct plx_datatype *dt);

/* inout = in op inout for count elements of dt; -1 when op is not defined
 * for dt (MPI_ERR_OP), else 0. */
int plx_op_reduce(const struct plx_op *op, const void *in, void *inout, MPI_Aint count,
                  const struct plx_datatype *dt);

/* The same on n contiguous items of a predefined type. */
int plx_op_apply(MPI_Op op, MPI_Datatype type, const void *in, void *inout, MPI_Aint n);

#endif
