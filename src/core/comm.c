/*
 * Communicator objects and context-id allocation.
 *
 * Every communicator owns the match contexts ctx (point-to-point) and ctx+1
 * (collectives). WORLD has 0, SELF 2; others get an even id in
 * 4..PLX_MAX_CONTEXTS-2, agreed on by the members of the parent: each
 * contributes its bitmask of locally free ids to a bitwise-AND allreduce and
 * all take the lowest common bit. Disjoint communicators may therefore share
 * an id (e.g. the colours of one Comm_split): a process belongs to at most one
 * communicator per id, so (id, source) still names one communicator at every
 * receiver.
 *
 * Reference counts: a communicator holds one reference on its group, error
 * handler and info; the user's handle holds one on the communicator, and
 * pending operations may hold more (plx_comm_addref).
 *
 * Threads: the API lock is let go while the agreement waits, so two threads
 * may allocate at once (on different parents, or Comm_create_group with
 * different tags) and both find the same lowest common id. Where any member
 * runs MPI_THREAD_MULTIPLE the agreement therefore has a second round: each
 * member takes the id if it is still free here, all confirm together, and
 * if one could not, those that took it give it back and all try again.
 * Nobody waits for another allocation to finish, so allocations on
 * different communicators cannot block each other, whatever order each
 * process runs them in; a retry finds the id gone where it was taken.
 *
 * Nonblocking agreements (MPI_Comm_idup, api/idup.c) run the same steps
 * from a schedule (plx_comm_ctx_snapshot / plx_comm_ctx_take) and always
 * confirm; while one is under way on a process (plx_comm_nb_pending), the
 * blocking allocations there confirm too, since the schedule may take an id
 * between their snapshot and their choice. Intercommunicators agree across
 * their two sides through a bridge (core/intercomm.c).
 */
#include <stdlib.h>
#include <string.h>
#include "coll/coll.h"
#include "core/lock.h"
#include "core/objects.h"

#define PLX_CTX_IDS (PLX_MAX_CONTEXTS / 2)      /* bit i <-> context id 2*i */
#define PLX_CTX_WORDS (PLX_CTX_IDS / 64)

struct plx_objtab plx_comm_tab = PLX_OBJTAB_INIT("communicator", PLX_OBJ_COMM, struct plx_comm);

static struct plx_comm plx_comm_world_obj = {
    .obj = { .handle = MPI_COMM_WORLD, .refcount = 1, .live = 1, .builtin = 1 },
    .context_id = 0,
    .name = "MPI_COMM_WORLD",
};
static struct plx_comm plx_comm_self_obj = {
    .obj = { .handle = MPI_COMM_SELF, .refcount = 1, .live = 1, .builtin = 1 },
    .context_id = 2,
    .name = "MPI_COMM_SELF",
};
struct plx_comm *plx_comm_world = &plx_comm_world_obj;
struct plx_comm *plx_comm_self = &plx_comm_self_obj;

static struct {
    uint64_t free_mask[PLX_CTX_WORDS];          /* 1 = context id free here */
    int nb_pending;             /* nonblocking agreements (MPI_Comm_idup) under way here */
} plx_comm_g;

static void plx_comm_builtin_setup(struct plx_comm *c, struct plx_group *g)
{
    c->group = g;
    c->lpids = g->lpids;
    c->rank = g->rank;
    c->size = g->size;
    c->errhandler = plx_errhandler_fatal;
    c->attrs = NULL;
    c->info = NULL;
    c->coll_tag = 0;
    c->coll_tag_nb = 0;
}

plx_status_t plx_comm_init_builtins(int world_rank, int world_size)
{
    if (world_size <= 0 || world_rank < 0 || world_rank >= world_size)
        return PLX_ERR_ARG;
    plx_errhandler_init_builtins();
    plx_group_init_builtins(world_rank);
    plx_attr_init_builtins();
    plx_info_init_builtins(world_size);

    memset(plx_comm_g.free_mask, 0xff, sizeof plx_comm_g.free_mask);
    plx_comm_g.free_mask[0] &= ~(uint64_t)3;    /* 0: WORLD, 2: SELF */

    int *lpids = plx_malloc((size_t)world_size * sizeof(int));
    for (int i = 0; i < world_size; i++)
        lpids[i] = i;
    struct plx_group *wg = plx_group_new(world_size, lpids);
    free(lpids);
    struct plx_group *sg = plx_group_new(1, &world_rank);
    if (!wg || !sg)
        return PLX_ERR_NOMEM;
    plx_comm_builtin_setup(plx_comm_world, wg);
    plx_comm_builtin_setup(plx_comm_self, sg);
    plx_obj_register_builtin(&plx_comm_tab, MPI_COMM_WORLD, plx_comm_world);
    plx_obj_register_builtin(&plx_comm_tab, MPI_COMM_SELF, plx_comm_self);
    return PLX_OK;
}

static void plx_comm_builtin_teardown(struct plx_comm *c)
{
    plx_attr_delete_all(c);
    plx_errhandler_release(c->errhandler);
    c->errhandler = plx_errhandler_fatal;
    plx_info_release(c->info);
    c->info = NULL;
    /* The groups stay: later finalize steps may still walk c->lpids. */
}

void plx_comm_finalize_builtins(void)
{
    plx_comm_builtin_teardown(plx_comm_self);
    plx_comm_builtin_teardown(plx_comm_world);
}

struct plx_comm *plx_comm_new(struct plx_comm *parent, struct plx_group *g, int ctx)
{
    struct plx_comm *c = plx_obj_alloc(&plx_comm_tab);
    if (!c)
        return NULL;
    c->context_id = ctx;
    plx_group_addref(g);
    c->group = g;
    c->lpids = g->lpids;
    c->rank = g->rank;
    c->size = g->size;
    c->errhandler = parent ? parent->errhandler : plx_errhandler_fatal;
    plx_errhandler_addref(c->errhandler);
    c->bslot = plx_bslot_addref(parent && parent->bslot ? parent->bslot : g->bslot);
    return c;
}

void plx_comm_addref(struct plx_comm *c)
{
    if (c && !c->obj.builtin)
        c->obj.refcount++;
}

void plx_comm_free_context(int ctx)
{
    if (ctx < 4 || ctx >= PLX_MAX_CONTEXTS || (ctx & 1))
        return;
    int bit = ctx / 2;
    plx_comm_g.free_mask[bit / 64] |= (uint64_t)1 << (bit % 64);
}

plx_status_t plx_comm_alloc_context_tag(struct plx_comm *comm, int tag, int *ctx_p)
{
    for (;;) {
        /* mask[PLX_CTX_WORDS]: all ones where no member needs the second round */
        uint64_t mask[PLX_CTX_WORDS + 1];
        memcpy(mask, plx_comm_g.free_mask, sizeof plx_comm_g.free_mask);
        /* an MPI_Comm_idup under way here may take an id between this
         * snapshot and our choice, as another thread could: confirm too */
        mask[PLX_CTX_WORDS] = plx_lock.needed || plx_comm_g.nb_pending ? 0 : ~(uint64_t)0;
        plx_status_t st = plx_coll_allreduce_u64(mask, PLX_CTX_WORDS + 1, PLX_COLL_BAND, comm, tag);
        if (PLX_IS_ERR(st))
            return st;
        int w = 0;
        while (w < PLX_CTX_WORDS && !mask[w])
            w++;
        if (w == PLX_CTX_WORDS)
            return PLX_ERR_NOSPACE;     /* every member agrees: no common free id */
        int b = __builtin_ctzll(mask[w]);
        uint64_t bit = (uint64_t)1 << b;
        uint64_t took = (plx_comm_g.free_mask[w] & bit) != 0;  /* another thread may have it now */
        plx_comm_g.free_mask[w] &= ~bit;
        *ctx_p = 2 * (w * 64 + b);
        if (mask[PLX_CTX_WORDS])
            return PLX_OK;              /* single-threaded everywhere: nobody else could take it */
        uint64_t all = took;
        st = plx_coll_allreduce_u64(&all, 1, PLX_COLL_BAND, comm, tag);
        if (st == PLX_OK && all)
            return PLX_OK;
        if (took)
            plx_comm_g.free_mask[w] |= bit;     /* give it back: some member could not take it */
        if (PLX_IS_ERR(st))
            return st;
        plx_lock_relax();
    }
}

plx_status_t plx_comm_alloc_context(struct plx_comm *comm, int *ctx_p)
{
    return plx_comm_alloc_context_tag(comm, PLX_COLL_TAG_DEFAULT, ctx_p);
}

void plx_comm_release(struct plx_comm *c)
{
    if (!c || c->obj.builtin)
        return;
    if (--c->obj.refcount > 0)
        return;
    plx_attr_delete_all(c);     /* normally already empty: Comm_free ran them */
    plx_group_release(c->group);
    plx_errhandler_release(c->errhandler);
    plx_info_release(c->info);
    plx_bslot_release(c->bslot);
    plx_comm_free_context(c->context_id);
    if (c->remote_group) {
        plx_group_release(c->remote_group);
        plx_comm_release(c->local_comm);
    }
    plx_obj_free(&plx_comm_tab, c);
}

/* --- pieces of an agreement, for schedules and intercommunicators ------- */

void plx_comm_ctx_snapshot(uint64_t *mask)
{
    memcpy(mask, plx_comm_g.free_mask, sizeof plx_comm_g.free_mask);
    mask[PLX_CTX_WORDS] = plx_lock.needed || plx_comm_g.nb_pending ? 0 : ~(uint64_t)0;
}

int plx_comm_ctx_take(const uint64_t *mask, int n, int *ids)
{
    int got = 0, free_here = 1;
    for (int w = 0; w < PLX_CTX_WORDS && got < n; w++) {
        uint64_t m = mask[w];
        while (m && got < n) {
            int b = __builtin_ctzll(m);
            m &= m - 1;
            if (!(plx_comm_g.free_mask[w] & ((uint64_t)1 << b)))
                free_here = 0;  /* taken here since the snapshot */
            ids[got++] = 2 * (w * 64 + b);
        }
    }
    if (got < n)
        return -1;
    if (!free_here)
        return 0;               /* take none: the caller's confirmation fails everywhere */
    for (int i = 0; i < n; i++) {
        int bit = ids[i] / 2;
        plx_comm_g.free_mask[bit / 64] &= ~((uint64_t)1 << (bit % 64));
    }
    return 1;
}

void plx_comm_nb_pending(int delta)
{
    plx_comm_g.nb_pending += delta;
}
