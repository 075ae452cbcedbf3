/*
 * Attribute helpers shared by the entry points of the objects that cache
 * attributes (api/attr.c for communicators and datatypes, api/datatype.c
 * for MPI_Type_dup / MPI_Type_free).
 */
#ifndef PLX_API_ATTR_H
#define PLX_API_ATTR_H

#include "core/datatype.h"
#include "core/objects.h"

/* Turns a failing callback's return into the error raised: its own code when
 * it is a valid MPI error code, MPI_ERR_OTHER otherwise. which: "copy" or
 * "delete". */
int plx_attr_callback_err(struct plx_comm *c, const char *fn, const char *which, int keyval, int code);

/* MPI_Type_dup: copies old's attributes to new through their copy callbacks.
 * MPI_Type_free: runs every delete callback, newest first. Both return
 * MPI_SUCCESS or the raised error. */
int plx_attr_type_copy(struct plx_datatype *old, struct plx_datatype *new, const char *fn);
int plx_attr_type_delete_all(struct plx_datatype *dt, const char *fn);

#endif
