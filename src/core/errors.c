/* MPI error codes and their messages: see errors.h. */
#include <mpi.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/errors.h"
#include "core/plexus.h"

#define PLX_ERR_SLOTS 1023
#define PLX_ERR_MSGLEN 512
#define PLX_ERR_DYN_MAX 1024

static struct {
    char msgs[PLX_ERR_SLOTS + 1][PLX_ERR_MSGLEN];
    int msg_code[PLX_ERR_SLOTS + 1];    /* the code each slot was made for */
    unsigned next_slot;
    /* user-added classes and codes */
    int ndyn;
    int dyn_class[PLX_ERR_DYN_MAX];     /* class of each dynamic value */
    char *dyn_string[PLX_ERR_DYN_MAX];
    char *class_string[PLX_ERR_CLASS_MASK + 1];
} plx_err;

static const char *plx_err_class_text(int c)
{
    switch (c) {
    case MPI_SUCCESS: return "no error";
    case MPI_ERR_BUFFER: return "invalid buffer pointer";
    case MPI_ERR_COUNT: return "invalid count argument";
    case MPI_ERR_TYPE: return "invalid datatype";
    case MPI_ERR_TAG: return "invalid tag";
    case MPI_ERR_COMM: return "invalid communicator";
    case MPI_ERR_RANK: return "invalid rank";
    case MPI_ERR_ROOT: return "invalid root";
    case MPI_ERR_GROUP: return "invalid group";
    case MPI_ERR_OP: return "invalid operation";
    case MPI_ERR_TOPOLOGY: return "invalid topology";
    case MPI_ERR_DIMS: return "invalid dimensions";
    case MPI_ERR_ARG: return "invalid argument";
    case MPI_ERR_UNKNOWN: return "unknown error";
    case MPI_ERR_TRUNCATE: return "message truncated";
    case MPI_ERR_OTHER: return "other error";
    case MPI_ERR_INTERN: return "internal error";
    case MPI_ERR_IN_STATUS: return "error code is in status";
    case MPI_ERR_PENDING: return "pending request";
    case MPI_ERR_REQUEST: return "invalid request";
    case MPI_ERR_ACCESS: return "permission denied";
    case MPI_ERR_AMODE: return "invalid file access mode";
    case MPI_ERR_BAD_FILE: return "invalid file name";
    case MPI_ERR_CONVERSION: return "data conversion error";
    case MPI_ERR_DUP_DATAREP: return "data representation already defined";
    case MPI_ERR_FILE_EXISTS: return "file exists";
    case MPI_ERR_FILE_IN_USE: return "file in use";
    case MPI_ERR_FILE: return "invalid file handle";
    case MPI_ERR_INFO: return "invalid info object";
    case MPI_ERR_INFO_KEY: return "invalid info key";
    case MPI_ERR_INFO_VALUE: return "invalid info value";
    case MPI_ERR_INFO_NOKEY: return "info key not found";
    case MPI_ERR_IO: return "I/O error";
    case MPI_ERR_NAME: return "invalid service name";
    case MPI_ERR_NO_MEM: return "out of memory";
    case MPI_ERR_NOT_SAME: return "arguments differ across processes";
    case MPI_ERR_NO_SPACE: return "no space left";
    case MPI_ERR_NO_SUCH_FILE: return "no such file";
    case MPI_ERR_PORT: return "invalid port name";
    case MPI_ERR_QUOTA: return "quota exceeded";
    case MPI_ERR_READ_ONLY: return "read-only file";
    case MPI_ERR_SERVICE: return "invalid service";
    case MPI_ERR_SPAWN: return "spawn failed";
    case MPI_ERR_UNSUPPORTED_DATAREP: return "unsupported data representation";
    case MPI_ERR_UNSUPPORTED_OPERATION: return "unsupported operation";
    case MPI_ERR_WIN: return "invalid window";
    case MPI_ERR_BASE: return "invalid base address";
    case MPI_ERR_LOCKTYPE: return "invalid lock type";
    case MPI_ERR_KEYVAL: return "invalid keyval";
    case MPI_ERR_RMA_CONFLICT: return "conflicting RMA accesses";
    case MPI_ERR_RMA_SYNC: return "wrong RMA synchronization";
    case MPI_ERR_SIZE: return "invalid size";
    case MPI_ERR_DISP: return "invalid displacement";
    case MPI_ERR_ASSERT: return "invalid assert";
    case MPI_ERR_RMA_RANGE: return "RMA target out of range";
    case MPI_ERR_RMA_ATTACH: return "RMA attach failed";
    case MPI_ERR_RMA_SHARED: return "RMA shared memory failed";
    case MPI_ERR_RMA_FLAVOR: return "wrong window flavor";
    case MPI_ERR_SESSION: return "invalid session";
    case MPI_ERR_PROC_ABORTED: return "a peer process aborted";
    case MPI_ERR_VALUE_TOO_LARGE: return "value too large for the output argument";
    case MPI_ERR_ERRHANDLER: return "invalid error handler";
    /* the tools interface's classes (MPI_T calls return them) */
    case MPI_T_ERR_MEMORY: return "MPI_T: out of memory";
    case MPI_T_ERR_NOT_INITIALIZED: return "MPI_T: the tools interface is not initialized";
    case MPI_T_ERR_CANNOT_INIT: return "MPI_T: the tools interface cannot be initialized";
    case MPI_T_ERR_INVALID_INDEX: return "MPI_T: invalid index";
    case MPI_T_ERR_INVALID_ITEM: return "MPI_T: invalid item";
    case MPI_T_ERR_INVALID_HANDLE: return "MPI_T: invalid handle";
    case MPI_T_ERR_OUT_OF_HANDLES: return "MPI_T: no more handles";
    case MPI_T_ERR_OUT_OF_SESSIONS: return "MPI_T: no more sessions";
    case MPI_T_ERR_INVALID_SESSION: return "MPI_T: invalid session";
    case MPI_T_ERR_CVAR_SET_NOT_NOW: return "MPI_T: the control variable cannot be set now";
    case MPI_T_ERR_CVAR_SET_NEVER: return "MPI_T: the control variable cannot be set";
    case MPI_T_ERR_PVAR_NO_STARTSTOP: return "MPI_T: the performance variable cannot be started or stopped";
    case MPI_T_ERR_PVAR_NO_WRITE: return "MPI_T: the performance variable cannot be written or reset";
    case MPI_T_ERR_PVAR_NO_ATOMIC: return "MPI_T: the performance variable cannot be read and written atomically";
    case MPI_T_ERR_INVALID_NAME: return "MPI_T: no variable or category has this name";
    case MPI_T_ERR_INVALID: return "MPI_T: invalid argument";
    case MPI_T_ERR_NOT_SUPPORTED: return "MPI_T: not supported";
    case MPIX_ERR_PROC_FAILED: return "a peer process failed";
    default: return NULL;
    }
}

int plx_err_make(int errclass, const char *fmt, ...)
{
    unsigned slot = plx_err.next_slot % PLX_ERR_SLOTS + 1;
    plx_err.next_slot++;
    int code = (errclass & PLX_ERR_CLASS_MASK) | (int)(slot << 7);
    if (errclass >= PLX_ERR_DYN_BASE)
        code = errclass;        /* user classes carry no message slot */
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(plx_err.msgs[slot], PLX_ERR_MSGLEN, fmt, ap);
    va_end(ap);
    plx_err.msg_code[slot] = code;
    return code;
}

int plx_err_class(int code)
{
    if (code >= PLX_ERR_DYN_BASE) {
        int i = code - PLX_ERR_DYN_BASE;
        return i < plx_err.ndyn ? plx_err.dyn_class[i] : -1;
    }
    if (code < 0 || (code >> 7) > PLX_ERR_SLOTS)
        return -1;
    int c = code & PLX_ERR_CLASS_MASK;
    if (!plx_err_class_text(c) && !plx_err.class_string[c])
        return -1;
    return c;
}

void plx_err_string(int code, char *buf, size_t len)
{
    int c = plx_err_class(code);
    if (c < 0) {
        snprintf(buf, len, "invalid error code %d", code);
        return;
    }
    if (code >= PLX_ERR_DYN_BASE) {
        const char *s = plx_err.dyn_string[code - PLX_ERR_DYN_BASE];
        snprintf(buf, len, "%s", s ? s : "");   /* MPI: no string set is the empty string */
        return;
    }
    unsigned slot = (unsigned)code >> 7;
    if (slot && plx_err.msg_code[slot] == code) {
        snprintf(buf, len, "%s", plx_err.msgs[slot]);
        return;
    }
    const char *t = plx_err.class_string[c] ? plx_err.class_string[c] : plx_err_class_text(c);
    snprintf(buf, len, "%s", t);
}

int plx_status_to_class(plx_status_t st)
{
    switch (st) {
    case PLX_OK:
    case PLX_IN_PROGRESS:
    case PLX_BUSY: return MPI_SUCCESS;
    case PLX_ERR_NOMEM: return MPI_ERR_NO_MEM;
    case PLX_ERR_ARG: return MPI_ERR_ARG;
    case PLX_ERR_TRUNCATE: return MPI_ERR_TRUNCATE;
    case PLX_ERR_PEER: return MPI_ERR_OTHER;
    case PLX_ERR_PROC_FAILED: return MPIX_ERR_PROC_FAILED;
    case PLX_ERR_NOSPACE: return MPI_ERR_NO_SPACE;
    case PLX_ERR_UNSUPPORTED: return MPI_ERR_UNSUPPORTED_OPERATION;
    case PLX_ERR_INTERN: return MPI_ERR_INTERN;
    default: return MPI_ERR_OTHER;
    }
}

int plx_err_add_class(int *class_p)
{
    if (plx_err.ndyn >= PLX_ERR_DYN_MAX)
        return MPI_ERR_OTHER;
    int v = PLX_ERR_DYN_BASE + plx_err.ndyn;
    plx_err.dyn_class[plx_err.ndyn++] = v;
    *class_p = v;
    return MPI_SUCCESS;
}

int plx_err_add_code(int errclass, int *code_p)
{
    if (plx_err_class(errclass) != errclass)
        return MPI_ERR_ARG;
    if (plx_err.ndyn >= PLX_ERR_DYN_MAX)
        return MPI_ERR_OTHER;
    int v = PLX_ERR_DYN_BASE + plx_err.ndyn;
    plx_err.dyn_class[plx_err.ndyn++] = errclass;
    *code_p = v;
    return MPI_SUCCESS;
}

int plx_err_add_string(int code, const char *str)
{
    if (code < PLX_ERR_DYN_BASE || code - PLX_ERR_DYN_BASE >= plx_err.ndyn ||
        plx_err.dyn_class[code - PLX_ERR_DYN_BASE] < 0)
        return MPI_ERR_ARG;     /* predefined codes and classes cannot be renamed; removed ones are gone */
    if (strlen(str) >= MPI_MAX_ERROR_STRING)
        return MPI_ERR_ARG;
    char **slot = &plx_err.dyn_string[code - PLX_ERR_DYN_BASE];
    free(*slot);
    *slot = plx_strdup(str);
    return MPI_SUCCESS;
}

int plx_err_last_used(void)
{
    return plx_err.ndyn ? PLX_ERR_DYN_BASE + plx_err.ndyn - 1 : MPI_ERR_LASTCODE;
}

/* --- MPI 4.1: removing user-defined classes, codes and strings -----------
 * A removed value's class becomes -1 (an invalid code from then on); its slot
 * is not reused, so MPI_LASTUSEDCODE never goes down. */

static int plx_err_dyn_index(int v)
{
    int i = v - PLX_ERR_DYN_BASE;
    return v >= PLX_ERR_DYN_BASE && i < plx_err.ndyn && plx_err.dyn_class[i] >= 0 ? i : -1;
}

int plx_err_remove_class(int errclass)
{
    int i = plx_err_dyn_index(errclass);
    if (i < 0 || plx_err.dyn_class[i] != errclass)
        return PLX_ERR_RM_NOT_USER;
    if (plx_err.dyn_string[i])
        return PLX_ERR_RM_HAS_STRING;
    for (int j = 0; j < plx_err.ndyn; j++)
        if (j != i && plx_err.dyn_class[j] == errclass)
            return PLX_ERR_RM_IN_USE;
    plx_err.dyn_class[i] = -1;
    return 0;
}

int plx_err_remove_code(int code)
{
    int i = plx_err_dyn_index(code);
    if (i < 0 || plx_err.dyn_class[i] == code)
        return PLX_ERR_RM_NOT_USER;
    if (plx_err.dyn_string[i])
        return PLX_ERR_RM_HAS_STRING;
    plx_err.dyn_class[i] = -1;
    return 0;
}

int plx_err_remove_string(int code)
{
    int i = plx_err_dyn_index(code);
    if (i < 0)
        return PLX_ERR_RM_NOT_USER;
    free(plx_err.dyn_string[i]);
    plx_err.dyn_string[i] = NULL;
    return 0;
}
