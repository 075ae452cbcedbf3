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
 */
#include <limits.h>
#include <mpi.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "api/pt2pt_api.h"
#include "progress/progress.h"
#include "pt2pt/pt2pt.h"

#pragma weak MPI_Buffer_attach = PMPI_Buffer_attach
#pragma weak MPI_Buffer_detach = PMPI_Buffer_detach

struct plx_bblock {
    struct plx_bblock *next;    /* in address order */
    size_t off, len;            /* within the attached buffer, len including overhead */
};

#define PLX_BSEND_ALIGN 16      /* where a block's data starts; the padding is part of the overhead */
_Static_assert(PLX_BSEND_ALIGN - 1 <= MPI_BSEND_OVERHEAD, "alignment padding must fit in MPI_BSEND_OVERHEAD");

static struct {
    char *buf;
    size_t size;
    struct plx_bblock *used;    /* sorted by off */
    int nused;
} plx_bsend;

static struct plx_bblock *plx_bsend_alloc(size_t len)
{
    size_t off = 0;
    struct plx_bblock **pp = &plx_bsend.used;
    for (;;) {
        size_t end = *pp ? (*pp)->off : plx_bsend.size;
        if (end >= off && end - off >= len) {
            struct plx_bblock *b = plx_malloc(sizeof *b);
            b->off = off;
            b->len = len;
            b->next = *pp;
            *pp = b;
            plx_bsend.nused++;
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
    struct plx_bblock **pp = &plx_bsend.used;
    while (*pp && *pp != block)
        pp = &(*pp)->next;
    if (*pp) {
        *pp = ((struct plx_bblock *)block)->next;
        plx_bsend.nused--;
        free(block);
    }
}

int plx_bsend_start(struct plx_request *r, const char *fn)
{
    size_t bytes = (size_t)r->count * (size_t)r->dt->size;
    /* exactly the standard's sizing formula (packed size + MPI_BSEND_OVERHEAD):
     * a buffer sized by it must hold the message (mpi4py's tests attach just
     * that much); blocks hold packed bytes, so they need no alignment */
    size_t need = bytes + MPI_BSEND_OVERHEAD;
    struct plx_bblock *b = plx_bsend.buf ? plx_bsend_alloc(need) : NULL;
    if (!b && plx_bsend.nused) {
        /* let earlier buffered sends drain, then try once more */
        plx_progress_poll();
        b = plx_bsend_alloc(need);
    }
    if (!b) {
        r->cc = 0;
        r->st_error = plx_err_make(MPI_ERR_BUFFER,
                                   "%s(rank %d): no room in the attached buffer for a %zu-byte message "
                                   "(%zu bytes attached, %zu needed with MPI_BSEND_OVERHEAD; attach a larger "
                                   "buffer with MPI_Buffer_attach)",
                                   fn, plx_rt.world_rank, bytes, plx_bsend.size, need);
        return plx_api_err_code(r->comm, r->st_error);
    }
    /* The user's request completes now; an internal one carries the data. */
    struct plx_request *inner = plx_api_p2p_request(PLX_REQ_SEND, r->comm, NULL, (MPI_Aint)bytes,
                                                    plx_dt_lookup(MPI_BYTE), r->rank, r->tag, PLX_MODE_STD);
    inner->internal = 1;
    char *start = plx_bsend.buf + b->off;
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

static int plx_buffer_attach(void *buffer, MPI_Count size, const char *fn)
{
    plx_api_check_init(fn);
    plx_api_lock();
    int rc = MPI_SUCCESS;
    if (plx_bsend.buf)
        rc = plx_api_err(NULL, fn, MPI_ERR_BUFFER, "a buffer is already attached (detach it first)");
    else if (size < 0)
        rc = plx_api_err(NULL, fn, MPI_ERR_ARG, "argument 'size' is negative (%lld)", (long long)size);
    else if (!buffer && size > 0)
        rc = plx_api_err(NULL, fn, MPI_ERR_BUFFER, "argument 'buffer' is NULL");
    else {
        plx_bsend.buf = buffer;
        plx_bsend.size = (size_t)size;
    }
    plx_api_unlock();
    return rc;
}

int PMPI_Buffer_attach(void *buffer, int size)
{
    return plx_buffer_attach(buffer, size, "MPI_Buffer_attach");
}

static int plx_bsend_idle(void *arg)
{
    (void)arg;
    return plx_bsend.nused == 0;
}

/* size_p is an int (wide: 0) or an MPI_Count (wide: 1). A buffer too large
 * for an int stays attached when the int form is asked for it. */
static int plx_buffer_detach(void *buffer_addr, void *size_p, int wide, const char *fn)
{
    plx_api_check_init(fn);
    if (!buffer_addr || !size_p)
        return plx_api_null_arg(NULL, fn, size_p ? "buffer_addr" : "size");
    plx_api_lock();
    if (!wide && plx_bsend.size > INT_MAX) {
        int rc = plx_api_err(NULL, fn, MPI_ERR_COUNT,
                             "the attached buffer has %zu bytes, more than an int holds (use MPI_Buffer_detach_c)",
                             plx_bsend.size);
        plx_api_unlock();
        return rc;
    }
    plx_progress_wait(plx_bsend_idle, NULL);
    *(void **)buffer_addr = plx_bsend.buf;
    if (wide)
        *(MPI_Count *)size_p = (MPI_Count)plx_bsend.size;
    else
        *(int *)size_p = (int)plx_bsend.size;
    plx_bsend.buf = NULL;
    plx_bsend.size = 0;
    plx_api_unlock();
    return MPI_SUCCESS;
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
