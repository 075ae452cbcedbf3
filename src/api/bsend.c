/*
 * Buffered sends: MPI_Buffer_attach/detach and the copy into the attached
 * buffer. Blocks are carved first-fit from the buffer, each charged
 * MPI_BSEND_OVERHEAD bytes as the standard's sizing formula assumes: a block is
 * the packed data plus MPI_BSEND_OVERHEAD, and everything else a block needs
 * (the alignment padding before the data, at most 15 bytes) fits inside that
 * overhead; the bookkeeping lives outside the buffer. So a buffer of the sum
 * of MPI_Pack_size + MPI_BSEND_OVERHEAD over the pending messages is always
 * enough. A block is returned when its inner send completes. Detach waits for
 * all of them.
 *
 * MPI 4.1 adds buffers per communicator and per session, MPI_BUFFER_AUTOMATIC
 * (each message gets a block of its own from malloc, freed when its send
 * completes) and the flush calls (wait, or a request that completes, when every
 * message buffered in that buffer has left). A buffered send takes its
 * communicator's buffer if it has one, else the buffer of the session the
 * communicator derives from (comm->bslot), else the process's. Each buffer is a
 * pool (struct plx_bpool); the process's is static, a communicator's sits in
 * a short list here and holds a reference on the communicator, so the
 * pointer cannot be reused while the buffer is attached; a session keeps a
 * pointer to its own (api/session.c).
 */
#include <limits.h>
#include <mpi.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "api/bsend.h"
#include "api/pt2pt_api.h"
#include "progress/progress.h"
#include "pt2pt/pt2pt.h"

#pragma weak MPI_Buffer_attach = PMPI_Buffer_attach
#pragma weak MPI_Buffer_detach = PMPI_Buffer_detach
#pragma weak MPI_Buffer_flush = PMPI_Buffer_flush
#pragma weak MPI_Buffer_iflush = PMPI_Buffer_iflush
#pragma weak MPI_Comm_attach_buffer = PMPI_Comm_attach_buffer
#pragma weak MPI_Comm_detach_buffer = PMPI_Comm_detach_buffer
#pragma weak MPI_Comm_flush_buffer = PMPI_Comm_flush_buffer
#pragma weak MPI_Comm_iflush_buffer = PMPI_Comm_iflush_buffer
#pragma weak MPI_Comm_attach_buffer_c = PMPI_Comm_attach_buffer_c
#pragma weak MPI_Comm_detach_buffer_c = PMPI_Comm_detach_buffer_c

struct plx_bpool {
    char *buf;
    size_t size;
    int automatic;              /* MPI_BUFFER_AUTOMATIC */
    struct plx_bblock *used;    /* sorted by off (automatic: unsorted) */
    int nused;
    struct plx_request **flush; /* MPI_*_iflush requests waiting for nused == 0 */
    int nflush, capflush;
};

struct plx_bblock {
    struct plx_bblock *next;    /* in address order */
    size_t off, len;            /* within the attached buffer, len including overhead */
    struct plx_bpool *pool;
    char *mem;                  /* automatic: the block's own memory */
};

#define PLX_BSEND_ALIGN 16      /* where a block's data starts; the padding is part of the overhead */
_Static_assert(PLX_BSEND_ALIGN - 1 <= MPI_BSEND_OVERHEAD, "alignment padding must fit in MPI_BSEND_OVERHEAD");

struct plx_cpool {
    struct plx_bpool *pool;
    struct plx_comm *comm;      /* holds a reference */
    struct plx_cpool *next;
};

static struct {
    struct plx_bpool *proc;     /* MPI_Buffer_attach's */
    struct plx_cpool *comms;    /* MPI_Comm_attach_buffer's */
} plx_bsend;

static struct plx_bblock *plx_bsend_alloc(struct plx_bpool *p, size_t len)
{
    if (p->automatic) {
        struct plx_bblock *b = plx_malloc(sizeof *b);
        b->mem = plx_malloc(len);
        b->off = 0;
        b->len = len;
        b->pool = p;
        b->next = p->used;
        p->used = b;
        p->nused++;
        return b;
    }
    size_t off = 0;
    struct plx_bblock **pp = &p->used;
    for (;;) {
        size_t end = *pp ? (*pp)->off : p->size;
        if (end >= off && end - off >= len) {
            struct plx_bblock *b = plx_malloc(sizeof *b);
            b->off = off;
            b->len = len;
            b->pool = p;
            b->mem = NULL;
            b->next = *pp;
            *pp = b;
            p->nused++;
            return b;
        }
        if (!*pp)
            return NULL;
        off = (*pp)->off + (*pp)->len;
        pp = &(*pp)->next;
    }
}

void bsend_release_block(void *block)
{
    struct plx_bblock *blk = block;
    struct plx_bpool *p = blk->pool;
    struct plx_bblock **pp = &p->used;
    while (*pp && *pp != blk)
        pp = &(*pp)->next;
    if (!*pp)
        return;
    *pp = blk->next;
    p->nused--;
    free(blk->mem);
    free(blk);
    if (p->nused == 0 && p->nflush) {   /* the pool drained: iflush requests complete */
        int n = p->nflush;
        p->nflush = 0;
        for (int i = 0; i < n; i++) {
            p->flush[i]->cc = 0;
            plx_request_complete(p->flush[i]);
        }
    }
}

static struct plx_cpool **plx_bsend_comm_slot(struct plx_comm *c)
{
    struct plx_cpool **pp = &plx_bsend.comms;
    while (*pp && (*pp)->comm != c)
        pp = &(*pp)->next;
    return pp;
}

int plx_bsend_start(struct plx_request *r, const char *fn)
{
    size_t bytes = (size_t)r->count * (size_t)r->dt->size;
    /* exactly the standard's sizing formula (packed size + MPI_BSEND_OVERHEAD):
     * a buffer sized by it must hold the message (mpi4py's tests attach just
     * that much); blocks hold packed bytes, so they need no alignment */
    size_t need = bytes + MPI_BSEND_OVERHEAD;
    /* MPI 4.1: the communicator's buffer, else its session's, else the process's */
    struct plx_cpool *cp = plx_bsend.comms ? *plx_bsend_comm_slot(r->comm) : NULL;
    struct plx_bpool *sp = !cp && r->comm->bslot ? r->comm->bslot->pool : NULL;
    struct plx_bpool *p = cp ? cp->pool : sp ? sp : plx_bsend.proc;
    struct plx_bblock *b = p ? plx_bsend_alloc(p, need) : NULL;
    if (!b && p && p->nused) {
        /* let earlier buffered sends drain, then try once more */
        plx_progress_poll();
        b = plx_bsend_alloc(p, need);
    }
    if (!b) {
        r->cc = 0;
        r->st_error = plx_err_make(MPI_ERR_BUFFER,
                                   "%s(rank %d): no room in the %s buffer for a %zu-byte message "
                                   "(%zu bytes attached, %zu needed with MPI_BSEND_OVERHEAD; attach a larger "
                                   "buffer with %s)",
                                   fn, plx_rt.world_rank, cp ? "communicator's" : sp ? "session's" : "attached", bytes,
                                   p ? p->size : 0, need,
                                   cp ? "MPI_Comm_attach_buffer" : sp ? "MPI_Session_attach_buffer" : "MPI_Buffer_attach");
        return plx_api_err_code(r->comm, r->st_error);
    }
    /* The user's request completes now; an internal one carries the data. */
    struct plx_request *inner = plx_api_p2p_request(PLX_REQ_SEND, r->comm, NULL, (MPI_Aint)bytes,
                                                    plx_dt_lookup(MPI_BYTE), r->rank, r->tag, PLX_MODE_STD);
    inner->internal = 1;
    char *start = b->mem ? b->mem : p->buf + b->off;
    inner->data = start + ((PLX_BSEND_ALIGN - (uintptr_t)start % PLX_BSEND_ALIGN) % PLX_BSEND_ALIGN);
    plx_dt_pack(r->buf, r->count, r->dt, inner->data);
    inner->bsend_block = b;
    inner->ctx = r->ctx;
    plx_status_t st = plx_pt2pt_send_start(inner);
    r->cc = 0;
    plx_request_complete(r);
    if (st != PLX_OK) {
        inner->cc = 0;
        plx_request_complete(inner);
        return plx_api_err(r->comm, fn, plx_status_to_class(st), "cannot reach rank %d", r->rank);
    }
    return MPI_SUCCESS;
}

/* --- the buffers, whoever owns them (lock held) -------------------------- */

int plx_bpool_attach(struct plx_bpool **slot, void *buffer, MPI_Count size, struct plx_comm *ec, const char *fn,
                     const char *owner)
{
    if (*slot)
        return plx_api_err(ec, fn, MPI_ERR_BUFFER, "a buffer is already attached to %s (detach it first)", owner);
    if (buffer != MPI_BUFFER_AUTOMATIC) {
        if (size < 0)
            return plx_api_err(ec, fn, MPI_ERR_ARG, "argument 'size' is negative (%lld)", (long long)size);
        if (!buffer && size > 0)
            return plx_api_err(ec, fn, MPI_ERR_BUFFER, "argument 'buffer' is NULL");
    }
    struct plx_bpool *p = plx_calloc(1, sizeof *p);
    if (buffer == MPI_BUFFER_AUTOMATIC) {
        p->automatic = 1;
    } else {
        p->buf = buffer;
        p->size = (size_t)size;
    }
    *slot = p;
    return MPI_SUCCESS;
}

static int plx_bpool_idle(void *arg)
{
    return ((struct plx_bpool *)arg)->nused == 0;
}

int plx_bpool_detach(struct plx_bpool **slot, void *buffer_addr, void *size_p, int wide, struct plx_comm *ec,
                     const char *fn)
{
    if (!buffer_addr || !size_p)
        return plx_api_null_arg(ec, fn, size_p ? "buffer_addr" : "size");
    struct plx_bpool *p = *slot;
    if (!p) {   /* nothing attached: as MPI_Buffer_detach always did, NULL and 0 */
        *(void **)buffer_addr = NULL;
        if (wide)
            *(MPI_Count *)size_p = 0;
        else
            *(int *)size_p = 0;
        return MPI_SUCCESS;
    }
    if (!wide && p->size > INT_MAX)
        return plx_api_err(ec, fn, MPI_ERR_COUNT,
                           "the attached buffer has %zu bytes, more than an int holds (use the _c form)", p->size);
    plx_progress_wait(plx_bpool_idle, p);
    *(void **)buffer_addr = p->automatic ? MPI_BUFFER_AUTOMATIC : p->buf;
    if (wide)
        *(MPI_Count *)size_p = (MPI_Count)p->size;
    else
        *(int *)size_p = (int)p->size;
    /* iflush requests were completed when the pool drained */
    free(p->flush);
    free(p);
    *slot = NULL;
    return MPI_SUCCESS;
}

int plx_bpool_flush(struct plx_bpool *p)
{
    if (p)
        plx_progress_wait(plx_bpool_idle, p);
    return MPI_SUCCESS;
}

int plx_bpool_iflush(struct plx_bpool *p, struct plx_comm *rc, MPI_Request *request, struct plx_comm *ec,
                     const char *fn)
{
    if (!request)
        return plx_api_null_arg(ec, fn, "request");
    struct plx_request *r = plx_request_new(PLX_REQ_FILE, rc);  /* a request with nothing to cancel */
    r->rank = MPI_PROC_NULL;
    r->st_source = MPI_ANY_SOURCE;
    r->st_tag = MPI_ANY_TAG;
    r->st_bytes = 0;
    if (!p || p->nused == 0) {
        r->cc = 0;
    } else {
        r->cc = 1;
        if (p->nflush == p->capflush) {
            p->capflush = p->capflush ? 2 * p->capflush : 4;
            p->flush = plx_realloc(p->flush, (size_t)p->capflush * sizeof *p->flush);
        }
        p->flush[p->nflush++] = r;
    }
    *request = r->obj.handle;
    return MPI_SUCCESS;
}

/* --- the process's buffer ------------------------------------------------ */

static int plx_buffer_attach(void *buffer, MPI_Count size, const char *fn)
{
    plx_api_check_init(fn);
    plx_api_lock();
    int rc = plx_bpool_attach(&plx_bsend.proc, buffer, size, NULL, fn, "the process");
    plx_api_unlock();
    return rc;
}

int PMPI_Buffer_attach(void *buffer, int size)
{
    return plx_buffer_attach(buffer, size, "MPI_Buffer_attach");
}

/* size_p is an int (wide: 0) or an MPI_Count (wide: 1). A buffer too large
 * for an int stays attached when the int form is asked for it. */
static int plx_buffer_detach(void *buffer_addr, void *size_p, int wide, const char *fn)
{
    plx_api_check_init(fn);
    plx_api_lock();
    int rc = plx_bpool_detach(&plx_bsend.proc, buffer_addr, size_p, wide, NULL, fn);
    plx_api_unlock();
    return rc;
}

int PMPI_Buffer_detach(void *buffer_addr, int *size)
{
    return plx_buffer_detach(buffer_addr, size, 0, "MPI_Buffer_detach");
}

/* --- large-count forms (MPI 4.0 `_c`) ----------------------------------- */

#pragma weak MPI_Buffer_attach_c = PMPI_Buffer_attach_c
#pragma weak MPI_Buffer_detach_c = PMPI_Buffer_detach_c

int PMPI_Buffer_attach_c(void *buffer, MPI_Count size)
{
    return plx_buffer_attach(buffer, size, "MPI_Buffer_attach_c");
}

int PMPI_Buffer_detach_c(void *buffer_addr, MPI_Count *size)
{
    return plx_buffer_detach(buffer_addr, size, 1, "MPI_Buffer_detach_c");
}

/* --- MPI 4.1: flush, and buffers per communicator ------------------------ */

int PMPI_Buffer_flush(void)
{
    plx_api_check_init("MPI_Buffer_flush");
    plx_api_lock();
    int rc = plx_bpool_flush(plx_bsend.proc);
    plx_api_unlock();
    return rc;
}

int PMPI_Buffer_iflush(MPI_Request *request)
{
    static const char fn[] = "MPI_Buffer_iflush";
    plx_api_check_init(fn);
    plx_api_lock();
    int rc = plx_bpool_iflush(plx_bsend.proc, plx_comm_self, request, NULL, fn);
    plx_api_unlock();
    return rc;
}

static int plx_comm_buffer_attach(MPI_Comm comm, void *buffer, MPI_Count size, const char *fn)
{
    struct plx_comm *c;
    plx_api_lock();
    int rc = plx_api_comm(comm, &c, fn);
    if (rc == MPI_SUCCESS) {
        struct plx_cpool **slot = plx_bsend_comm_slot(c);
        struct plx_bpool *p = *slot ? (*slot)->pool : NULL;
        rc = plx_bpool_attach(&p, buffer, size, c, fn, "this communicator");
        if (rc == MPI_SUCCESS && !*slot) {
            struct plx_cpool *cp = plx_malloc(sizeof *cp);
            cp->pool = p;
            cp->comm = c;
            c->obj.refcount++;          /* the pointer stays this communicator's while attached */
            cp->next = plx_bsend.comms;
            plx_bsend.comms = cp;
        }
    }
    plx_api_unlock();
    return rc;
}

static int plx_comm_buffer_detach(MPI_Comm comm, void *buffer_addr, void *size_p, int wide, const char *fn)
{
    struct plx_comm *c;
    plx_api_lock();
    int rc = plx_api_comm(comm, &c, fn);
    if (rc == MPI_SUCCESS) {
        struct plx_cpool **slot = plx_bsend_comm_slot(c), *cp = *slot;
        struct plx_bpool *p = cp ? cp->pool : NULL;
        rc = plx_bpool_detach(&p, buffer_addr, size_p, wide, c, fn);
        if (rc == MPI_SUCCESS && cp) {
            *plx_bsend_comm_slot(c) = cp->next;     /* the list may have changed while waiting */
            free(cp);
            plx_comm_release(c);
        }
    }
    plx_api_unlock();
    return rc;
}

int PMPI_Comm_attach_buffer(MPI_Comm comm, void *buffer, int size)
{
    return plx_comm_buffer_attach(comm, buffer, size, "MPI_Comm_attach_buffer");
}

int PMPI_Comm_attach_buffer_c(MPI_Comm comm, void *buffer, MPI_Count size)
{
    return plx_comm_buffer_attach(comm, buffer, size, "MPI_Comm_attach_buffer_c");
}

int PMPI_Comm_detach_buffer(MPI_Comm comm, void *buffer_addr, int *size)
{
    return plx_comm_buffer_detach(comm, buffer_addr, size, 0, "MPI_Comm_detach_buffer");
}

int PMPI_Comm_detach_buffer_c(MPI_Comm comm, void *buffer_addr, MPI_Count *size)
{
    return plx_comm_buffer_detach(comm, buffer_addr, size, 1, "MPI_Comm_detach_buffer_c");
}

int PMPI_Comm_flush_buffer(MPI_Comm comm)
{
    static const char fn[] = "MPI_Comm_flush_buffer";
    struct plx_comm *c;
    plx_api_lock();
    int rc = plx_api_comm(comm, &c, fn);
    if (rc == MPI_SUCCESS) {
        struct plx_cpool *cp = *plx_bsend_comm_slot(c);
        rc = plx_bpool_flush(cp ? cp->pool : NULL);
    }
    plx_api_unlock();
    return rc;
}

int PMPI_Comm_iflush_buffer(MPI_Comm comm, MPI_Request *request)
{
    static const char fn[] = "MPI_Comm_iflush_buffer";
    struct plx_comm *c;
    plx_api_lock();
    int rc = plx_api_comm(comm, &c, fn);
    if (rc == MPI_SUCCESS) {
        struct plx_cpool *cp = *plx_bsend_comm_slot(c);
        rc = plx_bpool_iflush(cp ? cp->pool : NULL, c, request, c, fn);
    }
    plx_api_unlock();
    return rc;
}
