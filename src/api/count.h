/*
 * Counts and displacements of both widths (MPI 4.0 large counts).
 *
 * Every call that takes a count exists twice: the classic one with int
 * counts and int displacements, and the `_c` one with MPI_Count counts and
 * MPI_Aint displacements. Both call one implementation; a scalar count is
 * passed as MPI_Count, and an array as a struct plx_vec that says which
 * width the caller's array has, so the implementation reads either without
 * copying when it can and widens into its own array when the layer below
 * keeps one (the schedules take MPI_Count counts and MPI_Aint displacements).
 *
 * Where a 32-bit limit remains below (an int in a structure of the standard,
 * such as the combiner arguments of MPI_Type_get_contents), the `_c` call's
 * value is checked with plx_count_fits_int and refused with MPI_ERR_COUNT.
 */
#ifndef PLX_API_COUNT_H
#define PLX_API_COUNT_H

#include <limits.h>
#include <mpi.h>
#include <stdlib.h>
#include "core/plexus.h"

enum plx_vec_kind { PLX_VEC_INT, PLX_VEC_COUNT, PLX_VEC_AINT };

struct plx_vec {
    const void *p;              /* NULL when the caller passed none */
    enum plx_vec_kind kind;
};

static inline struct plx_vec plx_vec_int(const int *a)
{
    return (struct plx_vec){a, PLX_VEC_INT};
}
static inline struct plx_vec plx_vec_count(const MPI_Count *a)
{
    return (struct plx_vec){a, PLX_VEC_COUNT};
}
static inline struct plx_vec plx_vec_aint(const MPI_Aint *a)
{
    return (struct plx_vec){a, PLX_VEC_AINT};
}
#define PLX_VEC_NONE ((struct plx_vec){NULL, PLX_VEC_INT})

static inline MPI_Count plx_vec_at(struct plx_vec v, int i)
{
    switch (v.kind) {
    case PLX_VEC_COUNT:
        return ((const MPI_Count *)v.p)[i];
    case PLX_VEC_AINT:
        return ((const MPI_Aint *)v.p)[i];
    default:
        return ((const int *)v.p)[i];
    }
}

static inline int plx_count_fits_int(MPI_Count n)
{
    return n >= INT_MIN && n <= INT_MAX;
}

/* The n entries of v as MPI_Count / MPI_Aint (plx_malloc'd, never NULL). */
static inline MPI_Count *plx_vec_counts(struct plx_vec v, int n)
{
    MPI_Count *a = plx_malloc(((size_t)n + 1) * sizeof *a);
    for (int i = 0; i < n; i++)
        a[i] = plx_vec_at(v, i);
    return a;
}
static inline MPI_Aint *plx_vec_aints(struct plx_vec v, int n)
{
    MPI_Aint *a = plx_malloc(((size_t)n + 1) * sizeof *a);
    for (int i = 0; i < n; i++)
        a[i] = (MPI_Aint)plx_vec_at(v, i);
    return a;
}

#endif
