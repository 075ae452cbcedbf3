/*
 * Status conversion between C and Fortran (MPI 4.0: MPI_Status_c2f, _f2c,
 * _c2f08, _f082c, _f2f08, _f082f). The three layouts are the same five
 * integers in MPICH's order (count_lo, count_hi_and_cancelled, MPI_SOURCE,
 * MPI_TAG, MPI_ERROR), so each is a copy; MPI_STATUS_IGNORE and the Fortran
 * ignore markers cannot be converted (MPI_ERR_ARG).
 *
 * MPI_F_STATUS_IGNORE, MPI_F_STATUSES_IGNORE, MPI_F08_STATUS_IGNORE and
 * MPI_F08_STATUSES_IGNORE are variables, as in MPICH (binaries built against
 * MPICH refer to them by name): distinct addresses of objects of this file.
 */
#include <string.h>
#include "api/api.h"

static MPI_Fint plx_f_status_ignore[MPI_F_STATUS_SIZE];
static MPI_Fint plx_f_statuses_ignore[MPI_F_STATUS_SIZE];
static MPI_F08_status plx_f08_status_ignore;
static MPI_F08_status plx_f08_statuses_ignore;

MPI_Fint *MPI_F_STATUS_IGNORE = plx_f_status_ignore;
MPI_Fint *MPI_F_STATUSES_IGNORE = plx_f_statuses_ignore;
MPI_F08_status *MPI_F08_STATUS_IGNORE = &plx_f08_status_ignore;
MPI_F08_status *MPI_F08_STATUSES_IGNORE = &plx_f08_statuses_ignore;

_Static_assert(sizeof(MPI_Status) == MPI_F_STATUS_SIZE * sizeof(MPI_Fint), "status layouts differ");
_Static_assert(sizeof(MPI_F08_status) == sizeof(MPI_Status), "status layouts differ");

#pragma weak MPI_Status_c2f = PMPI_Status_c2f
#pragma weak MPI_Status_f2c = PMPI_Status_f2c
#pragma weak MPI_Status_c2f08 = PMPI_Status_c2f08
#pragma weak MPI_Status_f082c = PMPI_Status_f082c
#pragma weak MPI_Status_f2f08 = PMPI_Status_f2f08
#pragma weak MPI_Status_f082f = PMPI_Status_f082f

/* src/dst: the argument names; ignore_*: the marker each may not be. */
static int plx_status_copy(const void *src, const void *src_ignore, const char *src_name, void *dst,
                           const void *dst_ignore, const char *dst_name, const char *fn)
{
    if (!src || !dst)
        return plx_api_null_arg(NULL, fn, !src ? src_name : dst_name);
    if (src == src_ignore || src == (const void *)MPI_STATUS_IGNORE)
        return plx_api_err(NULL, fn, MPI_ERR_ARG, "argument '%s' is MPI_STATUS_IGNORE (or another ignore marker), not a status",
                           src_name);
    if (dst == dst_ignore || dst == (void *)MPI_STATUS_IGNORE)
        return plx_api_err(NULL, fn, MPI_ERR_ARG, "argument '%s' is MPI_STATUS_IGNORE (or another ignore marker), not a status",
                           dst_name);
    memmove(dst, src, sizeof(MPI_Status));
    return MPI_SUCCESS;
}

int PMPI_Status_c2f(const MPI_Status *c_status, MPI_Fint *f_status)
{
    return plx_status_copy(c_status, MPI_STATUS_IGNORE, "c_status", f_status, MPI_F_STATUS_IGNORE, "f_status",
                           "MPI_Status_c2f");
}

int PMPI_Status_f2c(const MPI_Fint *f_status, MPI_Status *c_status)
{
    return plx_status_copy(f_status, MPI_F_STATUS_IGNORE, "f_status", c_status, MPI_STATUS_IGNORE, "c_status",
                           "MPI_Status_f2c");
}

int PMPI_Status_c2f08(const MPI_Status *c_status, MPI_F08_status *f08_status)
{
    return plx_status_copy(c_status, MPI_STATUS_IGNORE, "c_status", f08_status, MPI_F08_STATUS_IGNORE,
                           "f08_status", "MPI_Status_c2f08");
}

int PMPI_Status_f082c(const MPI_F08_status *f08_status, MPI_Status *c_status)
{
    return plx_status_copy(f08_status, MPI_F08_STATUS_IGNORE, "f08_status", c_status, MPI_STATUS_IGNORE,
                           "c_status", "MPI_Status_f082c");
}

int PMPI_Status_f2f08(const MPI_Fint *f_status, MPI_F08_status *f08_status)
{
    return plx_status_copy(f_status, MPI_F_STATUS_IGNORE, "f_status", f08_status, MPI_F08_STATUS_IGNORE,
                           "f08_status", "MPI_Status_f2f08");
}

int PMPI_Status_f082f(const MPI_F08_status *f08_status, MPI_Fint *f_status)
{
    return plx_status_copy(f08_status, MPI_F08_STATUS_IGNORE, "f08_status", f_status, MPI_F_STATUS_IGNORE,
                           "f_status", "MPI_Status_f082f");
}
