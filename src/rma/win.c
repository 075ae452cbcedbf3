/*
 * Windows: creation in each flavour, the shared segment of direct windows,
 * dynamic regions, info keys, free (see rma.h).
 *
 * A direct window's segment: one 64-byte control line per rank (its lock
 * word and accumulate spinlock), then the ranks' memory in rank order,
 * contiguous (MPI_Win_allocate_shared's default), or each on its own page
 * when alloc_shared_noncontig is true. Rank 0 creates and sizes it, the
 * others map it, then it is unlinked so that nothing is left in /dev/shm
 * whatever happens to the job.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "coll/coll.h"
#include "core/config.h"
#include "core/log.h"
#include "core/runtime.h"
#include "rma/rma.h"
#include "route/route.h"

struct plx_objtab plx_win_tab = PLX_OBJTAB_INIT("window", PLX_OBJ_WIN, struct plx_win);

#define PLX_WIN_TAG PLX_COLL_TAG_DEFAULT
#define PLX_WIN_CTL 64          /* bytes of a rank's control line */

struct plx_win_card {
    uint64_t base, size;
    int32_t disp_unit, wid;
    uint64_t key, natcap;       /* issue 14: registration key, basic types reduced natively (natacc.c) */
};

static int plx_win_all_local(const struct plx_comm *c)
{
    for (int i = 0; i < c->size; i++)
        if (plx_procs.p[c->lpids[i]].node_id != plx_procs.my_node)
            return 0;
    return 1;
}

static int plx_info_true(const struct plx_info *info, const char *key)
{
    const char *v = info ? plx_info_lookup(info, key) : NULL;
    return v && !strcmp(v, "true");
}

/* Collective: the shared segment for sizes[] (every rank's); 0 on success. */
static int plx_win_seg_setup(struct plx_win *w, const uint64_t *sizes, int noncontig)
{
    static unsigned serial;
    struct plx_comm *c = w->comm;
    int p = c->size;
    size_t ctl = (size_t)p * PLX_WIN_CTL;
    size_t len = PLX_ALIGN_UP(ctl, 4096);
    size_t *off = plx_malloc((size_t)p * sizeof *off);
    for (int i = 0; i < p; i++) {
        if (noncontig)
            len = PLX_ALIGN_UP(len, 4096);
        off[i] = len;
        len += sizes[i];
    }
    if (len == 0)
        len = 1;
    char name[128] = "";
    int fd = -1;
    if (c->rank == 0) {
        snprintf(name, sizeof name, "/plx-win-%.48s-%d-%u", plx_procs.kvsname, plx_procs.my_lpid, serial++);
        fd = shm_open(name, O_CREAT | O_EXCL | O_RDWR, 0600);
        if (fd >= 0 && posix_fallocate(fd, 0, (off_t)len) != 0) {
            close(fd);
            shm_unlink(name);
            fd = -1;
        }
        if (fd < 0) {
            plx_debug(1, "rma: no shared segment of %zu bytes for a window (%s)", len, strerror(errno));
            name[0] = 0;
        }
    }
    uint64_t ok = 0;
    void *m = MAP_FAILED;
    if (plx_coll_bcast(name, sizeof name, 0, c, PLX_WIN_TAG) == PLX_OK && name[0]) {
        if (c->rank != 0)
            fd = shm_open(name, O_RDWR, 0600);
        if (fd >= 0) {
            m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
            ok = m != MAP_FAILED;
            close(fd);
        }
    }
    if (plx_coll_allreduce_u64(&ok, 1, PLX_COLL_BAND, c, PLX_WIN_TAG) != PLX_OK)
        ok = 0;
    if (c->rank == 0 && name[0])
        shm_unlink(name);
    if (!ok) {
        if (m != MAP_FAILED)
            munmap(m, len);
        free(off);
        return -1;
    }
    w->seg = m;
    w->seg_len = len;
    for (int i = 0; i < p; i++) {
        w->t[i].mem = (char *)m + off[i];
        w->t[i].lockw = (uint64_t *)((char *)m + (size_t)i * PLX_WIN_CTL);
        w->t[i].accw = (uint32_t *)((char *)m + (size_t)i * PLX_WIN_CTL + 8);
        w->t[i].size = sizes[i];
    }
    free(off);
    return 0;
}

/* "none", or a comma-separated list of rar, raw, war, waw (MPI 4.1 12.2.1). Operations are
 * always applied in order here (the message path keeps one channel's order between an origin
 * and a target), so the key is a permission Plexus does not use; a value that is neither is
 * ignored, as hints are. */
static int plx_win_ordering_ok(const char *v)
{
    if (!strcmp(v, "none"))
        return 1;
    for (;;) {
        while (*v == ' ')
            v++;
        if (strncmp(v, "rar", 3) && strncmp(v, "raw", 3) && strncmp(v, "war", 3) && strncmp(v, "waw", 3))
            return 0;
        v += 3;
        while (*v == ' ')
            v++;
        if (!*v)
            return 1;
        if (*v++ != ',')
            return 0;
    }
}

void plx_win_set_info(struct plx_win *w, const struct plx_info *info)
{
    static const char *const keys[][2] = {
        { "no_locks", "false" },
        { "accumulate_ordering", "rar,raw,war,waw" },
        { "accumulate_ops", "same_op_no_op" },
        { "same_size", "false" },
        { "same_disp_unit", "false" },
    };
    if (!w->info) {
        w->info = plx_info_new();
        for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
            plx_info_set(w->info, keys[i][0], keys[i][1]);
        if (w->flavor == MPI_WIN_FLAVOR_SHARED)
            plx_info_set(w->info, "alloc_shared_noncontig", "false");
    }
    if (!info)
        return;
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        const char *v = plx_info_lookup(info, keys[i][0]);
        if (v && (strcmp(keys[i][0], "accumulate_ordering") || plx_win_ordering_ok(v)))
            plx_info_set(w->info, keys[i][0], v);
    }
    const char *v = plx_info_lookup(info, "alloc_shared_noncontig");
    if (v && w->flavor == MPI_WIN_FLAVOR_SHARED)
        plx_info_set(w->info, "alloc_shared_noncontig", v);
}

static void plx_win_destroy(struct plx_win *w)
{
    if (w->wid)
        plx_rma_wid_free(w->wid);
    plx_rma_nat_free(w);
    if (w->seg)
        munmap(w->seg, w->seg_len);
    if (w->malloced)
        free(w->base);
    free(w->t);
    free(w->lock);
    free(w->granted);
    free(w->unlocked);
    free(w->pending);
    free(w->posts);
    free(w->completes);
    free(w->start_ranks);
    free(w->post_ranks);
    free(w->regs);
    while (!plx_list_empty(&w->deferred)) {
        struct plx_list *e = w->deferred.next;
        plx_list_remove(e);
        free(e);        /* the link is the first member of struct plx_rma_deferred */
    }
    while (!plx_list_empty(&w->lk_queue)) {
        struct plx_list *e = w->lk_queue.next;
        plx_list_remove(e);
        free(plx_list_entry(e, struct plx_win_lkwait, link));
    }
    if (w->info)
        plx_info_release(w->info);
    plx_errhandler_release(w->errhandler);
    if (w->comm)
        plx_comm_release(w->comm);
    plx_obj_free(&plx_win_tab, w);
}

int plx_win_create(struct plx_comm *comm, int flavor, void *base, MPI_Aint size, int disp_unit,
                   const struct plx_info *info, struct plx_win **win_p, void **base_p, const char **what_p)
{
    plx_rma_am_init();
    *win_p = NULL;
    int ctx;
    if (PLX_IS_ERR(plx_comm_alloc_context(comm, &ctx))) {
        *what_p = "agreeing on a context id for the window";
        return MPI_ERR_INTERN;
    }
    struct plx_comm *nc = plx_comm_new(comm, comm->group, ctx);
    if (!nc) {
        plx_comm_free_context(ctx);
        *what_p = "allocating the window's communicator";
        return MPI_ERR_NO_MEM;
    }
    plx_errhandler_release(nc->errhandler);
    nc->errhandler = plx_errhandler_return;
    struct plx_win *w = plx_obj_alloc(&plx_win_tab);
    w->comm = nc;
    plx_list_init(&w->lk_queue);
    plx_list_init(&w->deferred);
    w->flavor = flavor;
    w->model = MPI_WIN_UNIFIED;
    w->disp_unit = disp_unit;
    w->size = size;
    w->errhandler = plx_errhandler_fatal;
    int p = nc->size;
    w->t = plx_calloc((size_t)p, sizeof *w->t);
    w->lock = plx_calloc((size_t)p, 1);
    w->granted = plx_calloc((size_t)p, 1);
    w->unlocked = plx_calloc((size_t)p, 1);
    w->pending = plx_calloc((size_t)p, sizeof *w->pending);
    w->posts = plx_calloc((size_t)p, sizeof *w->posts);
    w->completes = plx_calloc((size_t)p, sizeof *w->completes);
    w->wid = plx_rma_wid_new(w);
    plx_win_set_info(w, info);

    /* every rank's size, for the shared segment */
    uint64_t *sizes = plx_malloc((size_t)p * sizeof *sizes);
    uint64_t mine = (uint64_t)size;
    int rc = MPI_SUCCESS;
    if (plx_coll_allgather(&mine, sizeof mine, sizes, nc, PLX_WIN_TAG) != PLX_OK) {
        *what_p = "exchanging the window sizes";
        rc = MPI_ERR_INTERN;
        goto fail;
    }
    if (flavor == MPI_WIN_FLAVOR_SHARED || flavor == MPI_WIN_FLAVOR_ALLOCATE) {
        /* MPI_Win_allocate: direct unless shared memory is turned off (for
         * RMA, or as a transport: PLEXUS_TRANSPORTS=tcp tests the messages) */
        int local = plx_win_all_local(nc) &&
                    ((plx_config.rma_shm && plx_route_enabled("shm")) || flavor == MPI_WIN_FLAVOR_SHARED);
        if (flavor == MPI_WIN_FLAVOR_SHARED && !plx_win_all_local(nc)) {
            *what_p = "MPI_Win_allocate_shared needs every rank of the communicator on one node";
            rc = MPI_ERR_RMA_SHARED;
            goto fail;
        }
        if (local && plx_win_seg_setup(w, sizes, plx_info_true(w->info, "alloc_shared_noncontig")) == 0) {
            w->direct = 1;
            w->base = w->t[nc->rank].mem;
        } else if (flavor == MPI_WIN_FLAVOR_SHARED) {
            *what_p = "creating the shared segment (is /dev/shm large enough?)";
            rc = MPI_ERR_RMA_SHARED;
            goto fail;
        } else {
            if (posix_memalign(&w->base, 64, size ? (size_t)size : 1) != 0) {
                *what_p = "allocating the window's memory";
                rc = MPI_ERR_NO_MEM;
                goto fail;
            }
            w->malloced = 1;
        }
        *base_p = w->base;
    } else if (flavor == MPI_WIN_FLAVOR_CREATE) {
        w->base = base;
        w->cma_ok = plx_config.rma_shm && plx_route_enabled("shm");
    }
    uint64_t natcap = plx_rma_nat_setup(w);
    struct plx_win_card card = { .base = (uint64_t)(uintptr_t)w->base, .size = (uint64_t)size,
                                 .disp_unit = disp_unit, .wid = w->wid, .key = w->nat_mr.key, .natcap = natcap };
    struct plx_win_card *cards = plx_malloc((size_t)p * sizeof *cards);
    if (plx_coll_allgather(&card, sizeof card, cards, nc, PLX_WIN_TAG) != PLX_OK) {
        free(cards);
        *what_p = "exchanging the window addresses";
        rc = MPI_ERR_INTERN;
        goto fail;
    }
    for (int i = 0; i < p; i++) {
        w->t[i].base = cards[i].base;
        w->t[i].size = cards[i].size;
        w->t[i].disp_unit = cards[i].disp_unit;
        w->t[i].wid = cards[i].wid;
        w->t[i].key = cards[i].key;
        natcap &= cards[i].natcap;
    }
    plx_rma_nat_agree(w, natcap);
    free(cards);
    free(sizes);
    w->attr_size = size;
    w->attr_disp_unit = disp_unit;
    w->attr_flavor = flavor;
    w->attr_model = w->model;
    plx_rma_win_ready(w);
    *win_p = w;
    return MPI_SUCCESS;
fail:
    free(sizes);
    plx_win_destroy(w);
    return rc;
}

int plx_win_free(struct plx_win *w)
{
    plx_rma_flush(w, -1);
    plx_coll_barrier(w->comm, PLX_WIN_TAG);
    int rc = plx_attr_list_delete_all(&w->attrs, w->obj.handle);
    plx_win_destroy(w);
    return rc;
}

int plx_win_attach(struct plx_win *w, void *base, MPI_Aint size, const char **what_p)
{
    uint64_t lo = (uint64_t)(uintptr_t)base, hi = lo + (uint64_t)size;
    for (int i = 0; i < w->nregs; i++) {
        if (lo < w->regs[i].addr + w->regs[i].len && w->regs[i].addr < hi) {
            *what_p = "the region overlaps one already attached";
            return MPI_ERR_RMA_ATTACH;
        }
    }
    if (w->nregs == w->capregs) {
        w->capregs = w->capregs ? 2 * w->capregs : 8;
        w->regs = realloc(w->regs, (size_t)w->capregs * sizeof *w->regs);
        if (!w->regs)
            plx_fatal("rma: out of memory attaching a region");
    }
    w->regs[w->nregs].addr = lo;
    w->regs[w->nregs].len = (uint64_t)size;
    w->nregs++;
    return MPI_SUCCESS;
}

int plx_win_detach(struct plx_win *w, const void *base)
{
    uint64_t lo = (uint64_t)(uintptr_t)base;
    for (int i = 0; i < w->nregs; i++) {
        if (w->regs[i].addr == lo) {
            w->regs[i] = w->regs[--w->nregs];
            return MPI_SUCCESS;
        }
    }
    return MPI_ERR_RMA_ATTACH;
}
