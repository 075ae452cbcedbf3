/*
 * Communicator and datatype attributes: MPI_Comm_{create,free}_keyval,
 * MPI_Comm_{set,get,delete}_attr and their MPI-1 names (Keyval_create/free,
 * Attr_put/get/delete: identical in C), MPI_Type_{create,free}_keyval and
 * MPI_Type_{set,get,delete}_attr, plus MPIR_Dup_fn, the function behind
 * MPI_DUP_FN / MPI_COMM_DUP_FN / MPI_TYPE_DUP_FN in mpi.h. Both kinds share
 * the keyval table and core/attr.c's lists; a keyval of one kind used with
 * the other's calls is MPI_ERR_KEYVAL.
 *
 * The predefined keyvals (MPI_TAG_UB, MPI_HOST, MPI_IO, MPI_WTIME_IS_GLOBAL,
 * MPI_UNIVERSE_SIZE, MPI_LASTUSEDCODE, MPI_APPNUM) are answered on every
 * communicator from the runtime: the value returned is a pointer to a
 * per-process copy of the int, refreshed on each call, so a program writing
 * through it changes nothing. They cannot be set, deleted or freed
 * (MPI_ERR_KEYVAL).
 *
 * A failing callback's own code is returned (through the error handler)
 * when it is a valid MPI error code; anything else becomes MPI_ERR_OTHER.
 */
#include <string.h>
#include "api/api.h"
#include "api/attr.h"

#define PLX_TAG_UB 0x7fffffff

int MPIR_Dup_fn(MPI_Comm oldcomm, int keyval, void *extra_state, void *attribute_val_in,
                void *attribute_val_out, int *flag)
{
    *(void **)attribute_val_out = attribute_val_in;
    *flag = 1;
    return MPI_SUCCESS;
}

static struct {
    int tag_ub, host, io, wtime_is_global, universe_size, lastusedcode, appnum;
} plx_attr_predef;

/* 1 and *val_p set when the predefined attribute has a value; 0 when it is
 * not set (MPI_UNIVERSE_SIZE / MPI_APPNUM unknown to the launcher). */
static int plx_attr_get_predefined(int keyval, void **val_p)
{
    int *v;
    switch (keyval) {
    case MPI_TAG_UB:
        v = &plx_attr_predef.tag_ub;
        *v = PLX_TAG_UB;
        break;
    case MPI_HOST:
        v = &plx_attr_predef.host;
        *v = MPI_PROC_NULL;             /* no distinguished host process */
        break;
    case MPI_IO:
        v = &plx_attr_predef.io;
        *v = MPI_ANY_SOURCE;            /* every process can do I/O */
        break;
    case MPI_WTIME_IS_GLOBAL:
        v = &plx_attr_predef.wtime_is_global;
        *v = 0;
        break;
    case MPI_UNIVERSE_SIZE:
        if (plx_rt.universe_size <= 0)
            return 0;
        v = &plx_attr_predef.universe_size;
        *v = plx_rt.universe_size;
        break;
    case MPI_LASTUSEDCODE:
        v = &plx_attr_predef.lastusedcode;
        *v = plx_err_last_used();
        break;
    case MPI_APPNUM:
        if (plx_rt.appnum < 0)
            return 0;
        v = &plx_attr_predef.appnum;
        *v = plx_rt.appnum;
        break;
    default:
        return 0;
    }
    *val_p = v;
    return 1;
}

static const char *plx_attr_kind_name(int kind)
{
    return kind == PLX_KEYVAL_COMM ? "communicator" : kind == PLX_KEYVAL_TYPE ? "datatype" : "window";
}

/* Decodes a keyval of `kind` (PLX_KEYVAL_COMM, _TYPE). `action` names what a
 * predefined keyval cannot undergo ("set"), NULL when predefined ones are
 * fine. A keyval the user already freed still names its attributes until
 * they are deleted (MPI 3.1 section 6.7.2), so get and delete accept it
 * (allow_freed). */
static int plx_attr_keyval(struct plx_comm *c, int kind, int keyval, struct plx_keyval **kv_p, const char *action,
                           int allow_freed, const char *fn, const char *arg)
{
    struct plx_keyval *kv = plx_obj_lookup(&plx_keyval_tab, keyval);
    *kv_p = NULL;
    if (!kv || (kv->freed && !allow_freed))
        return plx_api_err(c, fn, MPI_ERR_KEYVAL, "argument '%s' is %s keyval (0x%x)", arg,
                           keyval == MPI_KEYVAL_INVALID ? "the invalid" : kv ? "a freed" : "not a",
                           (unsigned)keyval);
    if (kv->kind != kind)
        return plx_api_err(c, fn, MPI_ERR_KEYVAL, "argument '%s' (0x%x) is a %s keyval, not a %s keyval", arg,
                           (unsigned)keyval, plx_attr_kind_name(kv->kind), plx_attr_kind_name(kind));
    if (kv->obj.builtin && action)
        return plx_api_err(c, fn, MPI_ERR_KEYVAL, "argument '%s' (0x%x) is a predefined keyval, which cannot be %s",
                           arg, (unsigned)keyval, action);
    *kv_p = kv;
    return MPI_SUCCESS;
}

int plx_attr_callback_err(struct plx_comm *c, const char *fn, const char *which, int keyval, int code)
{
    if (plx_err_class(code) > 0)
        return plx_api_err_code(c, code);
    if (keyval == MPI_KEYVAL_INVALID)
        return plx_api_err(c, fn, MPI_ERR_OTHER, "an attribute %s callback returned %d", which, code);
    return plx_api_err(c, fn, MPI_ERR_OTHER, "the %s callback of keyval 0x%x returned %d", which, (unsigned)keyval,
                       code);
}

/* Datatype callbacks have the communicator callbacks' type (both handles are
 * ints in the MPICH ABI), so one keyval struct holds either. */
static int plx_attr_create_keyval(int kind, MPI_Comm_copy_attr_function *copy_fn,
                                  MPI_Comm_delete_attr_function *delete_fn, int *keyval, void *extra_state,
                                  const char *fn)
{
    int rc = MPI_SUCCESS;
    plx_api_lock();
    plx_api_check_init(fn);
    if (!keyval) {
        rc = plx_api_null_arg(NULL, fn, "keyval");
        goto out;
    }
    struct plx_keyval *kv = plx_keyval_new(kind, copy_fn, delete_fn, extra_state);
    if (!kv) {
        rc = plx_api_err(NULL, fn, MPI_ERR_NO_MEM, "cannot allocate a keyval");
        goto out;
    }
    *keyval = kv->obj.handle;
out:
    plx_api_unlock();
    return rc;
}

#pragma weak MPI_Comm_create_keyval = PMPI_Comm_create_keyval
int PMPI_Comm_create_keyval(MPI_Comm_copy_attr_function *comm_copy_attr_fn,
                            MPI_Comm_delete_attr_function *comm_delete_attr_fn, int *comm_keyval,
                            void *extra_state)
{
    return plx_attr_create_keyval(PLX_KEYVAL_COMM, comm_copy_attr_fn, comm_delete_attr_fn, comm_keyval, extra_state,
                                  "MPI_Comm_create_keyval");
}

#pragma weak MPI_Keyval_create = PMPI_Keyval_create
int PMPI_Keyval_create(MPI_Copy_function *copy_fn, MPI_Delete_function *delete_fn, int *keyval, void *extra_state)
{
    return plx_attr_create_keyval(PLX_KEYVAL_COMM, copy_fn, delete_fn, keyval, extra_state, "MPI_Keyval_create");
}

static int plx_attr_free_keyval(int kind, int *keyval, const char *fn)
{
    int rc;
    plx_api_lock();
    plx_api_check_init(fn);
    if (!keyval) {
        rc = plx_api_null_arg(NULL, fn, "keyval");
        goto out;
    }
    struct plx_keyval *kv;
    if ((rc = plx_attr_keyval(NULL, kind, *keyval, &kv, "freed", 0, fn, "keyval")))
        goto out;
    kv->freed = 1;              /* attributes still using it keep it alive */
    plx_keyval_release(kv);
    *keyval = MPI_KEYVAL_INVALID;
out:
    plx_api_unlock();
    return rc;
}

#pragma weak MPI_Comm_free_keyval = PMPI_Comm_free_keyval
int PMPI_Comm_free_keyval(int *comm_keyval)
{
    return plx_attr_free_keyval(PLX_KEYVAL_COMM, comm_keyval, "MPI_Comm_free_keyval");
}

#pragma weak MPI_Keyval_free = PMPI_Keyval_free
int PMPI_Keyval_free(int *keyval)
{
    return plx_attr_free_keyval(PLX_KEYVAL_COMM, keyval, "MPI_Keyval_free");
}

/* Set, get and delete on one object's list (a communicator's or a
 * datatype's), for a keyval of `kind`; errors are raised on ec. */
static int plx_attr_obj_set(struct plx_comm *ec, int kind, struct plx_attr **list, int handle, int keyval,
                            void *val, const char *fn, const char *arg)
{
    struct plx_keyval *kv;
    int rc = plx_attr_keyval(ec, kind, keyval, &kv, "set", 0, fn, arg);
    if (rc)
        return rc;
    rc = plx_attr_set(list, handle, kv, val);
    return rc == MPI_SUCCESS ? rc : plx_attr_callback_err(ec, fn, "delete", keyval, rc);
}

static int plx_attr_obj_get(struct plx_comm *ec, int kind, struct plx_attr *list, int keyval, void *attribute_val,
                            int *flag, const char *fn, const char *arg)
{
    struct plx_keyval *kv;
    int rc = plx_attr_keyval(ec, kind, keyval, &kv, NULL, 1, fn, arg);
    if (rc)
        return rc;
    if (!attribute_val || !flag)
        return plx_api_null_arg(ec, fn, attribute_val ? "flag" : "attribute_val");
    if (kv->obj.builtin) {      /* only communicator keyvals are predefined */
        *flag = plx_attr_get_predefined(keyval, (void **)attribute_val);
        return MPI_SUCCESS;
    }
    struct plx_attr *a = plx_attr_find(list, kv);
    *flag = a != NULL;
    if (a)
        *(void **)attribute_val = a->value;
    return MPI_SUCCESS;
}

static int plx_attr_obj_del(struct plx_comm *ec, int kind, struct plx_attr **list, int handle, int keyval,
                            const char *fn, const char *arg)
{
    struct plx_keyval *kv;
    int rc = plx_attr_keyval(ec, kind, keyval, &kv, "deleted", 1, fn, arg);
    if (rc)
        return rc;
    rc = plx_attr_delete(list, handle, kv);
    return rc == MPI_SUCCESS ? rc : plx_attr_callback_err(ec, fn, "delete", keyval, rc);
}

static int plx_attr_put(MPI_Comm comm, int keyval, void *attribute_val, const char *fn)
{
    struct plx_comm *c;
    plx_api_lock();
    int rc = plx_api_comm(comm, &c, fn);
    if (rc == MPI_SUCCESS)
        rc = plx_attr_obj_set(c, PLX_KEYVAL_COMM, &c->attrs, c->obj.handle, keyval, attribute_val, fn, "keyval");
    plx_api_unlock();
    return rc;
}

#pragma weak MPI_Comm_set_attr = PMPI_Comm_set_attr
int PMPI_Comm_set_attr(MPI_Comm comm, int comm_keyval, void *attribute_val)
{
    return plx_attr_put(comm, comm_keyval, attribute_val, "MPI_Comm_set_attr");
}

#pragma weak MPI_Attr_put = PMPI_Attr_put
int PMPI_Attr_put(MPI_Comm comm, int keyval, void *attribute_val)
{
    return plx_attr_put(comm, keyval, attribute_val, "MPI_Attr_put");
}

static int plx_attr_get(MPI_Comm comm, int keyval, void *attribute_val, int *flag, const char *fn)
{
    struct plx_comm *c;
    plx_api_lock();
    int rc = plx_api_comm(comm, &c, fn);
    if (rc == MPI_SUCCESS)
        rc = plx_attr_obj_get(c, PLX_KEYVAL_COMM, c->attrs, keyval, attribute_val, flag, fn, "keyval");
    plx_api_unlock();
    return rc;
}

#pragma weak MPI_Comm_get_attr = PMPI_Comm_get_attr
int PMPI_Comm_get_attr(MPI_Comm comm, int comm_keyval, void *attribute_val, int *flag)
{
    return plx_attr_get(comm, comm_keyval, attribute_val, flag, "MPI_Comm_get_attr");
}

#pragma weak MPI_Attr_get = PMPI_Attr_get
int PMPI_Attr_get(MPI_Comm comm, int keyval, void *attribute_val, int *flag)
{
    return plx_attr_get(comm, keyval, attribute_val, flag, "MPI_Attr_get");
}

static int plx_attr_del(MPI_Comm comm, int keyval, const char *fn)
{
    struct plx_comm *c;
    plx_api_lock();
    int rc = plx_api_comm(comm, &c, fn);
    if (rc == MPI_SUCCESS)
        rc = plx_attr_obj_del(c, PLX_KEYVAL_COMM, &c->attrs, c->obj.handle, keyval, fn, "keyval");
    plx_api_unlock();
    return rc;
}

#pragma weak MPI_Comm_delete_attr = PMPI_Comm_delete_attr
int PMPI_Comm_delete_attr(MPI_Comm comm, int comm_keyval)
{
    return plx_attr_del(comm, comm_keyval, "MPI_Comm_delete_attr");
}

#pragma weak MPI_Attr_delete = PMPI_Attr_delete
int PMPI_Attr_delete(MPI_Comm comm, int keyval)
{
    return plx_attr_del(comm, keyval, "MPI_Attr_delete");
}

/* --- datatype attributes ------------------------------------------------------
 * Errors go to MPI_COMM_WORLD's handler, as for every datatype call. */

static int plx_attr_type(MPI_Datatype h, struct plx_datatype **dt_p, const char *fn)
{
    plx_api_check_init(fn);
    struct plx_datatype *dt = plx_dt_lookup(h);
    *dt_p = dt;
    if (!dt)
        return plx_api_err(NULL, fn, MPI_ERR_TYPE, "argument 'datatype' is %s (handle 0x%x)",
                           h == MPI_DATATYPE_NULL ? "MPI_DATATYPE_NULL" : "not a valid datatype", (unsigned)h);
    return MPI_SUCCESS;
}

#pragma weak MPI_Type_create_keyval = PMPI_Type_create_keyval
int PMPI_Type_create_keyval(MPI_Type_copy_attr_function *type_copy_attr_fn,
                            MPI_Type_delete_attr_function *type_delete_attr_fn, int *type_keyval, void *extra_state)
{
    return plx_attr_create_keyval(PLX_KEYVAL_TYPE, type_copy_attr_fn, type_delete_attr_fn, type_keyval, extra_state,
                                  "MPI_Type_create_keyval");
}

#pragma weak MPI_Type_free_keyval = PMPI_Type_free_keyval
int PMPI_Type_free_keyval(int *type_keyval)
{
    return plx_attr_free_keyval(PLX_KEYVAL_TYPE, type_keyval, "MPI_Type_free_keyval");
}

#pragma weak MPI_Type_set_attr = PMPI_Type_set_attr
int PMPI_Type_set_attr(MPI_Datatype datatype, int type_keyval, void *attribute_val)
{
    static const char fn[] = "MPI_Type_set_attr";
    struct plx_datatype *dt;
    plx_api_lock();
    int rc = plx_attr_type(datatype, &dt, fn);
    if (rc == MPI_SUCCESS)
        rc = plx_attr_obj_set(NULL, PLX_KEYVAL_TYPE, &dt->attrs, dt->obj.handle, type_keyval, attribute_val, fn,
                              "type_keyval");
    plx_api_unlock();
    return rc;
}

#pragma weak MPI_Type_get_attr = PMPI_Type_get_attr
int PMPI_Type_get_attr(MPI_Datatype datatype, int type_keyval, void *attribute_val, int *flag)
{
    static const char fn[] = "MPI_Type_get_attr";
    struct plx_datatype *dt;
    plx_api_lock();
    int rc = plx_attr_type(datatype, &dt, fn);
    if (rc == MPI_SUCCESS)
        rc = plx_attr_obj_get(NULL, PLX_KEYVAL_TYPE, dt->attrs, type_keyval, attribute_val, flag, fn, "type_keyval");
    plx_api_unlock();
    return rc;
}

#pragma weak MPI_Type_delete_attr = PMPI_Type_delete_attr
int PMPI_Type_delete_attr(MPI_Datatype datatype, int type_keyval)
{
    static const char fn[] = "MPI_Type_delete_attr";
    struct plx_datatype *dt;
    plx_api_lock();
    int rc = plx_attr_type(datatype, &dt, fn);
    if (rc == MPI_SUCCESS)
        rc = plx_attr_obj_del(NULL, PLX_KEYVAL_TYPE, &dt->attrs, dt->obj.handle, type_keyval, fn, "type_keyval");
    plx_api_unlock();
    return rc;
}

/* Called with the API lock held. On a failing copy callback the attributes
 * already copied are deleted again (their delete callbacks run) and the
 * caller frees the new type. */
int plx_attr_type_copy(struct plx_datatype *old, struct plx_datatype *new, const char *fn)
{
    int rc = plx_attr_list_copy(old->attrs, old->obj.handle, &new->attrs);
    if (rc == MPI_SUCCESS)
        return MPI_SUCCESS;
    plx_attr_list_delete_all(&new->attrs, new->obj.handle);
    return plx_attr_callback_err(NULL, fn, "copy", MPI_KEYVAL_INVALID, rc);
}

int plx_attr_type_delete_all(struct plx_datatype *dt, const char *fn)
{
    int rc = plx_attr_list_delete_all(&dt->attrs, dt->obj.handle);
    return rc == MPI_SUCCESS ? rc : plx_attr_callback_err(NULL, fn, "delete", MPI_KEYVAL_INVALID, rc);
}

/* ---- window attributes (one-sided communication, issue 12) ----------------------------------------- */

#include "rma/rma.h"

/* Errors go to MPI_COMM_WORLD's handler, as for the other objects' keyvals. */
static int plx_attr_win(MPI_Win h, struct plx_win **w_p, const char *fn)
{
    plx_api_check_init(fn);
    *w_p = plx_win_lookup(h);
    if (!*w_p)
        return plx_api_err(NULL, fn, MPI_ERR_WIN, "argument 'win' is %s window (handle 0x%x)",
                           h == MPI_WIN_NULL ? "the null" : "an invalid", (unsigned)h);
    return MPI_SUCCESS;
}

#pragma weak MPI_Win_create_keyval = PMPI_Win_create_keyval
int PMPI_Win_create_keyval(MPI_Win_copy_attr_function *win_copy_attr_fn,
                           MPI_Win_delete_attr_function *win_delete_attr_fn, int *win_keyval, void *extra_state)
{
    /* window callbacks have the communicator callbacks' type in the MPICH ABI (ints for handles) */
    return plx_attr_create_keyval(PLX_KEYVAL_WIN, (MPI_Comm_copy_attr_function *)win_copy_attr_fn,
                                  (MPI_Comm_delete_attr_function *)win_delete_attr_fn, win_keyval, extra_state,
                                  "MPI_Win_create_keyval");
}

#pragma weak MPI_Win_free_keyval = PMPI_Win_free_keyval
int PMPI_Win_free_keyval(int *win_keyval)
{
    return plx_attr_free_keyval(PLX_KEYVAL_WIN, win_keyval, "MPI_Win_free_keyval");
}

#pragma weak MPI_Win_set_attr = PMPI_Win_set_attr
int PMPI_Win_set_attr(MPI_Win win, int win_keyval, void *attribute_val)
{
    static const char fn[] = "MPI_Win_set_attr";
    struct plx_win *w;
    plx_api_lock();
    int rc = plx_attr_win(win, &w, fn);
    if (rc == MPI_SUCCESS)
        rc = plx_attr_obj_set(NULL, PLX_KEYVAL_WIN, &w->attrs, w->obj.handle, win_keyval, attribute_val, fn,
                              "win_keyval");
    plx_api_unlock();
    return rc;
}

#pragma weak MPI_Win_get_attr = PMPI_Win_get_attr
int PMPI_Win_get_attr(MPI_Win win, int win_keyval, void *attribute_val, int *flag)
{
    static const char fn[] = "MPI_Win_get_attr";
    struct plx_win *w;
    plx_api_lock();
    int rc = plx_attr_win(win, &w, fn);
    if (rc != MPI_SUCCESS)
        goto out;
    /* the predefined window keyvals, recognised by value (see core/attr.c) */
    void *v = NULL;
    switch (win_keyval) {
    case MPI_WIN_BASE:
        v = w->base;
        break;
    case MPI_WIN_SIZE:
        v = &w->attr_size;
        break;
    case MPI_WIN_DISP_UNIT:
        v = &w->attr_disp_unit;
        break;
    case MPI_WIN_CREATE_FLAVOR:
        v = &w->attr_flavor;
        break;
    case MPI_WIN_MODEL:
        v = &w->attr_model;
        break;
    default:
        rc = plx_attr_obj_get(NULL, PLX_KEYVAL_WIN, w->attrs, win_keyval, attribute_val, flag, fn, "win_keyval");
        goto out;
    }
    if (!attribute_val || !flag) {
        rc = plx_api_null_arg(NULL, fn, attribute_val ? "flag" : "attribute_val");
        goto out;
    }
    *(void **)attribute_val = v;
    *flag = 1;
out:
    plx_api_unlock();
    return rc;
}

#pragma weak MPI_Win_delete_attr = PMPI_Win_delete_attr
int PMPI_Win_delete_attr(MPI_Win win, int win_keyval)
{
    static const char fn[] = "MPI_Win_delete_attr";
    struct plx_win *w;
    plx_api_lock();
    int rc = plx_attr_win(win, &w, fn);
    if (rc == MPI_SUCCESS)
        rc = plx_attr_obj_del(NULL, PLX_KEYVAL_WIN, &w->attrs, w->obj.handle, win_keyval, fn, "win_keyval");
    plx_api_unlock();
    return rc;
}
