/* Handle tables: see handle.h for the encoding. */
#include <stdlib.h>
#include <string.h>
#include "core/handle.h"
#include "core/plexus.h"

void *plx_obj_take(struct plx_objtab *t)
{
    struct plx_obj *o = t->free_list;
    uint32_t idx;
    if (o) {
        t->free_list = o->next_free;
        idx = PLX_HANDLE_INDEX(o->handle);
    } else {
        idx = t->next_index;
        if (idx / PLX_OBJTAB_BLOCK >= t->nblocks) {
            uint32_t nb = t->nblocks ? t->nblocks * 2 : 4;
            char **blocks = realloc(t->blocks, nb * sizeof *blocks);
            if (!blocks)
                return NULL;
            memset(blocks + t->nblocks, 0, (nb - t->nblocks) * sizeof *blocks);
            t->blocks = blocks;
            t->nblocks = nb;
        }
        char **b = &t->blocks[idx / PLX_OBJTAB_BLOCK];
        if (!*b) {
            *b = calloc(PLX_OBJTAB_BLOCK, t->objsize);
            if (!*b)
                return NULL;
        }
        if (idx >= 0x03ffffffu)
            return NULL;
        t->next_index++;
        o = (struct plx_obj *)(*b + (size_t)(idx % PLX_OBJTAB_BLOCK) * t->objsize);
        o->handle = PLX_HANDLE_MAKE(PLX_HANDLE_KIND_ALLOC, t->type, idx);
    }
    return o;
}

void *plx_obj_alloc(struct plx_objtab *t)
{
    return plx_obj_alloc_sized(t, t->objsize);
}

void plx_obj_free(struct plx_objtab *t, void *obj)
{
    struct plx_obj *o = obj;
    if (!o || o->builtin)
        return;
    o->live = 0;
    o->next_free = t->free_list;
    t->free_list = o;
    t->live--;
}

void plx_obj_register_builtin(struct plx_objtab *t, int handle, void *obj)
{
    struct plx_obj *o = obj;
    uint32_t idx = plx_builtin_slot(handle);
    while (t->builtins[idx] && t->builtins[idx]->handle != handle)
        idx = (idx + 1) % PLX_OBJTAB_BUILTINS;
    o->handle = handle;
    o->refcount = 1;
    o->live = 1;
    o->builtin = 1;
    t->builtins[idx] = o;
}

/* The rest of the probe sequence of a predefined handle. */
void *plx_obj_lookup_builtin(const struct plx_objtab *t, int handle)
{
    uint32_t kind = PLX_HANDLE_KIND(handle);
    if (kind != PLX_HANDLE_KIND_BUILTIN && kind != PLX_HANDLE_KIND_DIRECT)
        return NULL;
    uint32_t i = plx_builtin_slot(handle);
    struct plx_obj *o;
    while ((o = t->builtins[i]) && o->handle != handle)
        i = (i + 1) % PLX_OBJTAB_BUILTINS;
    return o && o->live ? o : NULL;
}

void plx_obj_foreach(struct plx_objtab *t, void (*fn)(void *obj, void *arg), void *arg)
{
    for (uint32_t i = 0; i < t->next_index; i++) {
        struct plx_obj *o = (struct plx_obj *)(t->blocks[i / PLX_OBJTAB_BLOCK] + (size_t)(i % PLX_OBJTAB_BLOCK) * t->objsize);
        if (o->live)
            fn(o, arg);
    }
}

void plx_objtab_destroy(struct plx_objtab *t)
{
    for (uint32_t i = 0; i < t->nblocks; i++)
        free(t->blocks[i]);
    free(t->blocks);
    t->blocks = NULL;
    t->nblocks = 0;
    t->next_index = 0;
    t->free_list = NULL;
    t->live = 0;
}
