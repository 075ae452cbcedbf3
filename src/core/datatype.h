/*
 * Datatypes. Today: every predefined type. A predefined handle of builtin
 * kind encodes its size in bits 15..8 (MPICH's encoding), so the fast path
 * gets a contiguous type's size without touching memory; everything else
 * (pair types, and derived types in the future) is an object in a table.
 *
 * "contig" means count elements occupy count*size bytes starting at
 * buf + true_lb with no holes; point-to-point moves such data without packing.
 * Non-contiguous types (today: the pair types such as MPI_DOUBLE_INT, whose
 * struct has padding) are packed/unpacked through plx_dt_pack/unpack.
 */
#ifndef PLX_DATATYPE_H
#define PLX_DATATYPE_H

#include <mpi.h>
#include <stddef.h>
#include "core/handle.h"

struct plx_dt_block {
    MPI_Aint off;               /* from the element's start */
    MPI_Aint len;
};

struct plx_datatype {
    struct plx_obj obj;
    MPI_Count size;
    MPI_Aint lb, extent;
    MPI_Aint true_lb, true_extent;
    int contig;
    int nblocks;                /* layout of one element */
    struct plx_dt_block blocks[2];
    char name[MPI_MAX_OBJECT_NAME];
};

extern struct plx_objtab plx_datatype_tab;

void plx_datatype_init_builtins(void);

static inline struct plx_datatype *plx_dt_lookup(MPI_Datatype h)
{
    return plx_obj_lookup(&plx_datatype_tab, h);
}

/* Packs count elements at buf into out (size*count bytes). */
void plx_dt_pack(const void *buf, MPI_Aint count, const struct plx_datatype *dt, void *out);
/* Unpacks `bytes` packed bytes (may be a partial element count) into buf. */
void plx_dt_unpack(const void *in, size_t bytes, void *buf, const struct plx_datatype *dt);

#endif
