/*
 * Error handlers and error codes: MPI_Comm_{create,set,get,call}_errhandler,
 * MPI_Errhandler_free, their MPI-1 names (Errhandler_create/set/get), and
 * MPI_Error_string/class, MPI_Add_error_{class,code,string}.
 *
 * Comm_get_errhandler returns a new reference, so MPI_Errhandler_free is
 * accepted on every handler, predefined ones included (freeing a predefined
 * handler does nothing), as in MPICH. Error_string and Error_class work
 * before MPI_Init (MPI 4.0 allows it; nothing here needs the runtime).
 */
#include <string.h>
#include "api/api.h"

static int plx_errh_create(MPI_Comm_errhandler_function *f, MPI_Errhandler *errhandler, const char *fn)
{
    int rc = MPI_SUCCESS;
    plx_api_lock();
    plx_api_check_init(fn);
    if (!f) {
        rc = plx_api_null_arg(NULL, fn, "function");
        goto out;
    }
    if (!errhandler) {
        rc = plx_api_null_arg(NULL, fn, "errhandler");
        goto out;
    }
    struct plx_errhandler *e = plx_errhandler_new_comm(f);
    if (!e) {
        rc = plx_api_err(NULL, fn, MPI_ERR_NO_MEM, "cannot allocate an error handler handle");
        goto out;
    }
    *errhandler = e->obj.handle;
out:
    plx_api_unlock();
    return rc;
}

#pragma weak MPI_Comm_create_errhandler = PMPI_Comm_create_errhandler
int PMPI_Comm_create_errhandler(MPI_Comm_errhandler_function *comm_errhandler_fn, MPI_Errhandler *errhandler)
{
    return plx_errh_create(comm_errhandler_fn, errhandler, "MPI_Comm_create_errhandler");
}

#pragma weak MPI_Errhandler_create = PMPI_Errhandler_create
int PMPI_Errhandler_create(MPI_Handler_function *function, MPI_Errhandler *errhandler)
{
    return plx_errh_create(function, errhandler, "MPI_Errhandler_create");
}

static int plx_errh_set(MPI_Comm comm, MPI_Errhandler errhandler, const char *fn)
{
    struct plx_comm *c;
    int rc;
    plx_api_lock();
    if ((rc = plx_api_comm(comm, &c, fn)))
        goto out;
    struct plx_errhandler *e = plx_obj_lookup(&plx_errhandler_tab, errhandler);
    if (!e) {
        rc = plx_api_err(c, fn, MPI_ERR_ARG, "argument 'errhandler' is %s error handler (handle 0x%x)",
                         errhandler == MPI_ERRHANDLER_NULL ? "the null" : "an invalid", (unsigned)errhandler);
        goto out;
    }
    if (e->kind != PLX_ERRH_FATAL && e->kind != PLX_ERRH_RETURN && e->kind != PLX_ERRH_ABORT &&
        e->kind != PLX_ERRH_USER_COMM) {
        rc = plx_api_err(c, fn, MPI_ERR_ARG, "argument 'errhandler' (handle 0x%x) is not a communicator error handler",
                         (unsigned)errhandler);
        goto out;
    }
    plx_errhandler_addref(e);
    plx_errhandler_release(c->errhandler);
    c->errhandler = e;
out:
    plx_api_unlock();
    return rc;
}

#pragma weak MPI_Comm_set_errhandler = PMPI_Comm_set_errhandler
int PMPI_Comm_set_errhandler(MPI_Comm comm, MPI_Errhandler errhandler)
{
    return plx_errh_set(comm, errhandler, "MPI_Comm_set_errhandler");
}

#pragma weak MPI_Errhandler_set = PMPI_Errhandler_set
int PMPI_Errhandler_set(MPI_Comm comm, MPI_Errhandler errhandler)
{
    return plx_errh_set(comm, errhandler, "MPI_Errhandler_set");
}

static int plx_errh_get(MPI_Comm comm, MPI_Errhandler *errhandler, const char *fn)
{
    struct plx_comm *c;
    int rc;
    plx_api_lock();
    if ((rc = plx_api_comm(comm, &c, fn)))
        goto out;
    if (!errhandler) {
        rc = plx_api_null_arg(c, fn, "errhandler");
        goto out;
    }
    plx_errhandler_addref(c->errhandler);
    *errhandler = c->errhandler->obj.handle;
out:
    plx_api_unlock();
    return rc;
}

#pragma weak MPI_Comm_get_errhandler = PMPI_Comm_get_errhandler
int PMPI_Comm_get_errhandler(MPI_Comm comm, MPI_Errhandler *errhandler)
{
    return plx_errh_get(comm, errhandler, "MPI_Comm_get_errhandler");
}

#pragma weak MPI_Errhandler_get = PMPI_Errhandler_get
int PMPI_Errhandler_get(MPI_Comm comm, MPI_Errhandler *errhandler)
{
    return plx_errh_get(comm, errhandler, "MPI_Errhandler_get");
}

#pragma weak MPI_Comm_call_errhandler = PMPI_Comm_call_errhandler
int PMPI_Comm_call_errhandler(MPI_Comm comm, int errorcode)
{
    static const char fn[] = "MPI_Comm_call_errhandler";
    struct plx_comm *c;
    int rc;
    plx_api_lock();
    if ((rc = plx_api_comm(comm, &c, fn)))
        goto out;
    /* MPI 3.1 section 8.3.4: MPI_SUCCESS once the handler has returned. */
    plx_api_err_code(c, errorcode);
out:
    plx_api_unlock();
    return rc;
}

#pragma weak MPI_Errhandler_free = PMPI_Errhandler_free
int PMPI_Errhandler_free(MPI_Errhandler *errhandler)
{
    static const char fn[] = "MPI_Errhandler_free";
    int rc = MPI_SUCCESS;
    plx_api_lock();
    plx_api_check_init(fn);
    if (!errhandler) {
        rc = plx_api_null_arg(NULL, fn, "errhandler");
        goto out;
    }
    struct plx_errhandler *e = plx_obj_lookup(&plx_errhandler_tab, *errhandler);
    if (!e) {
        rc = plx_api_err(NULL, fn, MPI_ERR_ARG, "argument 'errhandler' is %s error handler (handle 0x%x)",
                         *errhandler == MPI_ERRHANDLER_NULL ? "the null" : "an invalid", (unsigned)*errhandler);
        goto out;
    }
    plx_errhandler_release(e);
    *errhandler = MPI_ERRHANDLER_NULL;
out:
    plx_api_unlock();
    return rc;
}

#pragma weak MPI_Error_string = PMPI_Error_string
int PMPI_Error_string(int errorcode, char *string, int *resultlen)
{
    static const char fn[] = "MPI_Error_string";
    int rc = MPI_SUCCESS;
    plx_api_lock();
    if (!string) {
        rc = plx_api_null_arg(NULL, fn, "string");
        goto out;
    }
    if (!resultlen) {
        rc = plx_api_null_arg(NULL, fn, "resultlen");
        goto out;
    }
    /* An invalid code yields "invalid error code N" rather than an error:
     * failing inside error reporting helps nobody. */
    plx_err_string(errorcode, string, MPI_MAX_ERROR_STRING);
    *resultlen = (int)strlen(string);
out:
    plx_api_unlock();
    return rc;
}

#pragma weak MPI_Error_class = PMPI_Error_class
int PMPI_Error_class(int errorcode, int *errorclass)
{
    static const char fn[] = "MPI_Error_class";
    int rc = MPI_SUCCESS;
    plx_api_lock();
    if (!errorclass) {
        rc = plx_api_null_arg(NULL, fn, "errorclass");
        goto out;
    }
    int c = plx_err_class(errorcode);
    if (c < 0) {
        rc = plx_api_err(NULL, fn, MPI_ERR_ARG, "argument 'errorcode' is %d, not a valid error code", errorcode);
        goto out;
    }
    *errorclass = c;
out:
    plx_api_unlock();
    return rc;
}

#pragma weak MPI_Add_error_class = PMPI_Add_error_class
int PMPI_Add_error_class(int *errorclass)
{
    static const char fn[] = "MPI_Add_error_class";
    int rc;
    plx_api_lock();
    plx_api_check_init(fn);
    if (!errorclass) {
        rc = plx_api_null_arg(NULL, fn, "errorclass");
        goto out;
    }
    rc = plx_err_add_class(errorclass);
    if (rc != MPI_SUCCESS)
        rc = plx_api_err(NULL, fn, rc, "no room for another user-defined error class or code");
out:
    plx_api_unlock();
    return rc;
}

#pragma weak MPI_Add_error_code = PMPI_Add_error_code
int PMPI_Add_error_code(int errorclass, int *errorcode)
{
    static const char fn[] = "MPI_Add_error_code";
    int rc;
    plx_api_lock();
    plx_api_check_init(fn);
    if (!errorcode) {
        rc = plx_api_null_arg(NULL, fn, "errorcode");
        goto out;
    }
    rc = plx_err_add_code(errorclass, errorcode);
    if (rc == MPI_ERR_ARG)
        rc = plx_api_err(NULL, fn, rc, "argument 'errorclass' is %d, not a valid error class", errorclass);
    else if (rc != MPI_SUCCESS)
        rc = plx_api_err(NULL, fn, rc, "no room for another user-defined error class or code");
out:
    plx_api_unlock();
    return rc;
}

#pragma weak MPI_Add_error_string = PMPI_Add_error_string
int PMPI_Add_error_string(int errorcode, const char *string)
{
    static const char fn[] = "MPI_Add_error_string";
    int rc;
    plx_api_lock();
    plx_api_check_init(fn);
    if (!string) {
        rc = plx_api_null_arg(NULL, fn, "string");
        goto out;
    }
    if (strnlen(string, MPI_MAX_ERROR_STRING) >= MPI_MAX_ERROR_STRING) {
        rc = plx_api_err(NULL, fn, MPI_ERR_ARG, "argument 'string' is longer than MPI_MAX_ERROR_STRING-1 (%d)",
                         MPI_MAX_ERROR_STRING - 1);
        goto out;
    }
    rc = plx_err_add_string(errorcode, string);
    if (rc != MPI_SUCCESS)
        rc = plx_api_err(NULL, fn, rc, "argument 'errorcode' is %d, not a user-defined error class or code", errorcode);
out:
    plx_api_unlock();
    return rc;
}
