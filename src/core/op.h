/*
 * Reduction operations on predefined types. plx_op_apply combines
 * inout[i] = in[i] op inout[i] for count elements. User-defined operations
 * and the full op x type matrix come with the collectives issue.
 */
#ifndef PLX_OP_H
#define PLX_OP_H

#include <mpi.h>

/* 0 on success; -1 when op is not valid for the type (MPI_ERR_OP). */
int plx_op_apply(MPI_Op op, MPI_Datatype type, const void *in, void *inout, MPI_Aint count);
/* Is op a predefined operation handle? */
int plx_op_valid(MPI_Op op);

#endif
