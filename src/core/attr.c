/*
 * Keyvals and attribute caching, for any object kind (communicators here;
 * datatypes and windows reuse the list functions with their own handles).
 *
 * An attribute list is singly linked, newest first, so deleting from the head
 * runs delete callbacks in reverse order of setting (what MPI 3.1 section 8.7.1
 * asks for MPI_COMM_SELF at finalize). Each attribute holds a reference on its
 * keyval: a keyval freed by the user stays alive, marked `freed`, until its
 * last attribute is deleted (MPI 3.1 section 6.7.2).
 *
 * An attribute is unlinked before its delete callback runs, so a callback
 * that touches the same object's attributes sees a consistent list; if the
 * callback fails, the attribute is put back and its code returned.
 *
 * The predefined communicator keyvals (MPI_TAG_UB, ...) are static builtins
 * with no stored attributes: api/attr.c answers them from the runtime.
 */
#include <stdlib.h>
#include "core/objects.h"

struct plx_objtab plx_keyval_tab = PLX_OBJTAB_INIT("keyval", PLX_OBJ_KEYVAL, struct plx_keyval);

#define PLX_KEYVAL_BUILTIN(h) { .obj = { .handle = (h), .refcount = 1, .live = 1, .builtin = 1 }, .kind = PLX_KEYVAL_COMM }
static struct plx_keyval plx_keyval_builtins[] = {
    PLX_KEYVAL_BUILTIN(MPI_TAG_UB),
    PLX_KEYVAL_BUILTIN(MPI_HOST),
    PLX_KEYVAL_BUILTIN(MPI_IO),
    PLX_KEYVAL_BUILTIN(MPI_WTIME_IS_GLOBAL),
    PLX_KEYVAL_BUILTIN(MPI_UNIVERSE_SIZE),
    PLX_KEYVAL_BUILTIN(MPI_LASTUSEDCODE),
    PLX_KEYVAL_BUILTIN(MPI_APPNUM),
};

void plx_attr_init_builtins(void)
{
    /* Window keyvals (MPI_WIN_BASE, ...) would collide with these in the
     * builtin slots (index % PLX_OBJTAB_BUILTINS): the RMA layer recognises
     * them by value instead of registering them. */
    for (size_t i = 0; i < sizeof plx_keyval_builtins / sizeof plx_keyval_builtins[0]; i++)
        plx_obj_register_builtin(&plx_keyval_tab, plx_keyval_builtins[i].obj.handle, &plx_keyval_builtins[i]);
}

struct plx_keyval *plx_keyval_new(int kind, MPI_Comm_copy_attr_function *copy_fn,
                                  MPI_Comm_delete_attr_function *delete_fn, void *extra_state)
{
    struct plx_keyval *kv = plx_obj_alloc(&plx_keyval_tab);
    if (!kv)
        return NULL;
    kv->kind = kind;
    kv->copy_fn = copy_fn;
    kv->delete_fn = delete_fn;
    kv->extra_state = extra_state;
    return kv;
}

struct plx_keyval *plx_keyval_lookup(int handle, int kind)
{
    struct plx_keyval *kv = plx_obj_lookup(&plx_keyval_tab, handle);
    if (!kv || kv->freed || kv->kind != kind)
        return NULL;
    return kv;
}

void plx_keyval_release(struct plx_keyval *kv)
{
    if (!kv || kv->obj.builtin)
        return;
    if (--kv->obj.refcount > 0)
        return;
    plx_obj_free(&plx_keyval_tab, kv);
}

struct plx_attr *plx_attr_find(struct plx_attr *list, const struct plx_keyval *kv)
{
    for (struct plx_attr *a = list; a; a = a->next)
        if (a->keyval == kv)
            return a;
    return NULL;
}

static int plx_attr_call_delete(struct plx_attr *a, int obj_handle)
{
    struct plx_keyval *kv = a->keyval;
    if (!kv->delete_fn)
        return MPI_SUCCESS;
    return kv->delete_fn(obj_handle, kv->obj.handle, a->value, kv->extra_state);
}

static void plx_attr_destroy(struct plx_attr *a)
{
    plx_keyval_release(a->keyval);
    free(a);
}

int plx_attr_set(struct plx_attr **list, int obj_handle, struct plx_keyval *kv, void *val)
{
    struct plx_attr *a = plx_attr_find(*list, kv);
    if (a) {
        int rc = plx_attr_call_delete(a, obj_handle);
        if (rc != MPI_SUCCESS)
            return rc;
        /* The callback may have deleted it (erroneous, but stay safe). */
        a = plx_attr_find(*list, kv);
        if (a) {
            a->value = val;
            return MPI_SUCCESS;
        }
    }
    a = plx_malloc(sizeof *a);
    a->keyval = kv;
    a->value = val;
    kv->obj.refcount++;
    a->next = *list;
    *list = a;
    return MPI_SUCCESS;
}

int plx_attr_delete(struct plx_attr **list, int obj_handle, struct plx_keyval *kv)
{
    struct plx_attr **pp = list;
    while (*pp && (*pp)->keyval != kv)
        pp = &(*pp)->next;
    struct plx_attr *a = *pp;
    if (!a)
        return MPI_SUCCESS;
    *pp = a->next;
    int rc = plx_attr_call_delete(a, obj_handle);
    if (rc != MPI_SUCCESS) {
        a->next = *list;
        *list = a;
        return rc;
    }
    plx_attr_destroy(a);
    return MPI_SUCCESS;
}

int plx_attr_list_copy(struct plx_attr *src, int old_handle, struct plx_attr **dst_p)
{
    struct plx_attr **tail = dst_p;
    while (*tail)
        tail = &(*tail)->next;
    for (struct plx_attr *a = src; a; a = a->next) {
        struct plx_keyval *kv = a->keyval;
        if (!kv->copy_fn)
            continue;           /* MPI_*_NULL_COPY_FN: not copied */
        void *newval = NULL;
        int flag = 0;
        int rc = kv->copy_fn(old_handle, kv->obj.handle, kv->extra_state, a->value, &newval, &flag);
        if (rc != MPI_SUCCESS)
            return rc;
        if (!flag)
            continue;
        struct plx_attr *n = plx_malloc(sizeof *n);
        n->keyval = kv;
        n->value = newval;
        n->next = NULL;
        kv->obj.refcount++;
        *tail = n;
        tail = &n->next;
    }
    return MPI_SUCCESS;
}

int plx_attr_list_delete_all(struct plx_attr **list, int obj_handle)
{
    while (*list) {
        struct plx_attr *a = *list;
        *list = a->next;
        int rc = plx_attr_call_delete(a, obj_handle);
        if (rc != MPI_SUCCESS) {
            a->next = *list;
            *list = a;
            return rc;
        }
        plx_attr_destroy(a);
    }
    return MPI_SUCCESS;
}

int plx_attr_copy_all(struct plx_comm *oldc, struct plx_comm *newc)
{
    return plx_attr_list_copy(oldc->attrs, oldc->obj.handle, &newc->attrs);
}

int plx_attr_delete_all(struct plx_comm *c)
{
    return plx_attr_list_delete_all(&c->attrs, c->obj.handle);
}
