/*
 * Handle tables: MPI objects are named by ints with MPICH's encoding
 *   bits 31..30  kind   (0 invalid/null, 1 builtin, 2 "direct" (MPICH uses it for
 *                        a few predefined datatypes such as MPI_DOUBLE_INT),
 *                        3 allocated by us)
 *   bits 29..26  object type (PLX_OBJ_COMM, ...)
 *   bits 25..0   index
 * Builtin handles (MPI_COMM_WORLD, MPI_INT, ...) are registered once; every
 * other object lives in a table of fixed-size blocks, so a handle decodes to
 * a pointer with two loads and objects never move. Freed slots go on a free
 * list. Each object starts with struct plx_obj.
 *
 * Thread rules: called under the API lock (see api/api.h).
 */
#ifndef PLX_HANDLE_H
#define PLX_HANDLE_H

#include <stdint.h>
#include <string.h>
#include <stddef.h>

enum plx_obj_type {
    PLX_OBJ_COMM = 0x1,
    PLX_OBJ_GROUP = 0x2,
    PLX_OBJ_DATATYPE = 0x3,
    PLX_OBJ_FILE = 0x4,
    PLX_OBJ_ERRHANDLER = 0x5,
    PLX_OBJ_OP = 0x6,
    PLX_OBJ_INFO = 0x7,
    PLX_OBJ_WIN = 0x8,
    PLX_OBJ_KEYVAL = 0x9,
    PLX_OBJ_ATTR = 0xa,
    PLX_OBJ_REQUEST = 0xb,
    PLX_OBJ_SESSION = 0xe,          /* MPI 4.0 sessions (api/session.c); MPI_SESSION_NULL is 0x38000000 */
};

#define PLX_HANDLE_KIND(h)   (((uint32_t)(h) >> 30) & 0x3)
#define PLX_HANDLE_TYPE(h)   (((uint32_t)(h) >> 26) & 0xf)
#define PLX_HANDLE_INDEX(h)  ((uint32_t)(h) & 0x03ffffff)
#define PLX_HANDLE_KIND_BUILTIN 1u
#define PLX_HANDLE_KIND_DIRECT  2u
#define PLX_HANDLE_KIND_ALLOC   3u
#define PLX_HANDLE_MAKE(kind, type, idx) \
    ((int)(((uint32_t)(kind) << 30) | ((uint32_t)(type) << 26) | (uint32_t)(idx)))

struct plx_obj {
    int handle;
    int refcount;
    uint32_t live;          /* 1 while allocated or builtin */
    uint32_t builtin;       /* never freed */
    void *next_free;
};

#define PLX_OBJTAB_BLOCK 256
#define PLX_OBJTAB_BUILTINS 256   /* open-addressing hash of predefined handles */

struct plx_objtab {
    const char *name;       /* "communicator", for messages */
    int type;
    size_t objsize;
    char **blocks;
    uint32_t nblocks;
    uint32_t next_index;    /* first never-used index */
    struct plx_obj *free_list;
    long live;
    struct plx_obj *builtins[PLX_OBJTAB_BUILTINS];
};

#define PLX_OBJTAB_INIT(nm, ty, st) { .name = (nm), .type = (ty), .objsize = sizeof(st) }

/* A free slot (its handle field already set), not initialized. */
void *plx_obj_take(struct plx_objtab *t);
/* Zeroed object with handle set and refcount 1. */
void *plx_obj_alloc(struct plx_objtab *t);
/* The same, inline, for a caller that knows the size at compile time (the
 * zeroing then inlines too): requests, on every nonblocking call. */
static inline void *plx_obj_alloc_sized(struct plx_objtab *t, size_t size)
{
    struct plx_obj *o = plx_obj_take(t);
    if (!o)
        return NULL;
    int handle = o->handle;
    memset(o, 0, size);
    o->handle = handle;
    o->refcount = 1;
    o->live = 1;
    t->live++;
    return o;
}
/* Return an object's slot; its handle becomes invalid. */
void plx_obj_free(struct plx_objtab *t, void *obj);
void plx_obj_register_builtin(struct plx_objtab *t, int handle, void *obj);
/* Predefined handles probe from their low byte (MPICH numbers each kind's
 * predefined objects densely there), so the first probe nearly always hits. */
static inline uint32_t plx_builtin_slot(int handle)
{
    return (uint32_t)handle & (PLX_OBJTAB_BUILTINS - 1);
}

void *plx_obj_lookup_builtin(const struct plx_objtab *t, int handle);

/* NULL for a null, freed, foreign or garbage handle. Inline: every MPI call
 * decodes a few handles. */
static inline void *plx_obj_lookup(const struct plx_objtab *t, int handle)
{
    uint32_t kind = PLX_HANDLE_KIND(handle);
    if (PLX_HANDLE_TYPE(handle) != (uint32_t)t->type)
        return NULL;
    struct plx_obj *o;
    if (kind == PLX_HANDLE_KIND_ALLOC) {
        uint32_t idx = PLX_HANDLE_INDEX(handle);
        if (idx >= t->next_index)
            return NULL;
        o = (struct plx_obj *)(t->blocks[idx / PLX_OBJTAB_BLOCK] + (size_t)(idx % PLX_OBJTAB_BLOCK) * t->objsize);
    } else {
        o = t->builtins[plx_builtin_slot(handle)];
        if (!o || o->handle != handle)
            return plx_obj_lookup_builtin(t, handle);
    }
    return o->live ? o : NULL;
}
/* Calls fn on each live allocated (non-builtin) object. */
void plx_obj_foreach(struct plx_objtab *t, void (*fn)(void *obj, void *arg), void *arg);
/* Frees the tables' memory at finalize. */
void plx_objtab_destroy(struct plx_objtab *t);

#endif
