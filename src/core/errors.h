/*
 * MPI error codes with messages.
 *
 * A code the library returns is  class | slot << 7 : the low 7 bits are the
 * MPI error class (all of MPICH's classes are < 128) and slot (1..1023)
 * names a message in a ring of the most recent ones, so MPI_Error_string
 * returns the full text ("MPI_Send(rank 2): invalid destination rank 7 ...").
 * When the ring wraps, an old code still yields its class's generic text.
 * User-added classes and codes (MPI_Add_error_class/code) count up from
 * PLX_ERR_DYN_BASE, above MPI_ERR_LASTCODE, with a table mapping each code to
 * its class and string.
 */
#ifndef PLX_ERRORS_H
#define PLX_ERRORS_H

#include <stddef.h>
#include "core/status.h"

#define PLX_ERR_CLASS_MASK 0x7f
#define PLX_ERR_DYN_BASE 0x40000000

/* New code of class `errclass` carrying the formatted message. */
int plx_err_make(int errclass, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* MPI error class of a code; -1 when the code is not valid. */
int plx_err_class(int code);
/* Text of a code (its message when still known, else the class's text). */
void plx_err_string(int code, char *buf, size_t len);
/* Class for an internal status. */
int plx_status_to_class(plx_status_t st);

int plx_err_add_class(int *class_p);
int plx_err_add_code(int errclass, int *code_p);      /* returns an MPI error class */
int plx_err_add_string(int code, const char *str);    /* returns an MPI error class */
int plx_err_last_used(void);                           /* MPI_LASTUSEDCODE */
/* MPI 4.1's MPI_Remove_error_class/_code/_string: 0 or one of these */
enum { PLX_ERR_RM_NOT_USER = 1, PLX_ERR_RM_HAS_STRING, PLX_ERR_RM_IN_USE };
int plx_err_remove_class(int errclass);   /* no codes of it and no string left */
int plx_err_remove_code(int code);        /* no string left */
int plx_err_remove_string(int code);

#endif
