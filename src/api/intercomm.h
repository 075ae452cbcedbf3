/*
 * The intercommunicator forms of the communicator constructors
 * (api/intercomm.c), called by api/comm.c once it has checked the
 * arguments. Collective over both sides of c. Errors are raised on c.
 */
#ifndef PLX_API_INTERCOMM_H
#define PLX_API_INTERCOMM_H

#include <mpi.h>
#include "core/objects.h"

/* New intercommunicator over the same groups (attributes are the caller's). */
struct plx_comm *plx_intercomm_dup(struct plx_comm *c, const char *fn, int *rc_p);
/* Each side split by color (MPI_UNDEFINED: none); a color with no member on
 * the other side gives MPI_COMM_NULL. */
int plx_intercomm_split(struct plx_comm *c, int color, int key, MPI_Comm *newcomm, const char *fn);
/* g: a subgroup of c's local group, the same on every member of a side;
 * non-members (and a side facing an empty group) get MPI_COMM_NULL. */
int plx_intercomm_create(struct plx_comm *c, struct plx_group *g, MPI_Comm *newcomm, const char *fn);

/* The rest of MPI_Intercomm_create once each side's leader knows the other
 * (b): the groups are swapped (they must be disjoint), a context agreed, the
 * intercommunicator made. Collective over c (the local side). */
int plx_intercomm_build(struct plx_comm *c, struct plx_bridge *b, const char *fn, MPI_Comm *newcomm);
/* The same with the remote group already known (rg: lpids of this process). */
int plx_intercomm_build_with(struct plx_comm *c, struct plx_bridge *b, struct plx_group *rg, const char *fn,
                             MPI_Comm *newcomm);

#endif
