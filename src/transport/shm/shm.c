/*
 * Shared-memory transport.
 *
 * Layout. Every process R owns one segment holding its inbound rings: one
 * ring per process of the node (its own included, for self-sends), each
 * written by exactly one producer and read only by R. A ring is a circular
 * byte buffer of records [struct plx_hdr][payload], each padded to 64 bytes;
 * a record that would straddle the end is preceded by a WRAP marker. The
 * producer owns `head`, the consumer `tail`; each sits on its own cache line
 * and only they are shared, so a small send is: copy hdr+payload, one
 * release store of head. No lock, no syscall, no allocation.
 *
 * Segments are created at MPI_Init, mapped by every process of the node, and
 * unlinked right after that, so nothing is left in /dev/shm even if the job
 * is killed. Space is reserved with posix_fallocate, so a small /dev/shm
 * fails at init with a plain message instead of SIGBUS later.
 *
 * Sleeping. A receiver about to block sets `sleeping` in its segment header,
 * polls once more, then waits on its doorbell: an abstract-namespace unix
 * datagram socket. A producer that sees `sleeping` after publishing a record
 * sends one byte to it (store head / fence / load sleeping on one side,
 * store sleeping / fence / load head on the other: Dekker's pattern, so no
 * wake-up is lost). A consumer that frees ring space rings the producer's
 * doorbell when the producer sleeps (it may be blocked on a full ring).
 *
 * Large messages are read by the receiver straight from the sender's buffer
 * with process_vm_readv (probed at init; if the kernel forbids it the
 * point-to-point layer streams fragments through the ring instead).
 *
 * Copying together. One core copies at ~10-14 GB/s here, well below what
 * the memory system gives two, and a sender waiting for its rendezvous
 * message to be read is idle. So for a large read the receiver cuts the
 * message into chunks, describes them in a slot of its segment header and
 * sends the sender a HELP record; then both claim chunks from the slot (a
 * CAS on {generation, next chunk}) until none is left: the receiver reads
 * its chunks with process_vm_readv, the sender writes its chunks into the
 * receiver's buffer with process_vm_writev, each adding the bytes to the
 * slot's `done`. The read is complete when `done` reaches the length. A
 * sender that is busy elsewhere claims nothing, and the receiver copies it
 * all; a HELP that arrives after the read finished sees a new generation (or
 * no chunk left) and does nothing. A chunk the sender claimed but could not
 * write goes into the slot's `fail` mask and the receiver copies it.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/un.h>
#include <unistd.h>
#include "core/config.h"
#include "core/log.h"
#include "core/plexus.h"
#include "core/request.h"
#include "core/runtime.h"
#include "pm/pm.h"
#include "transport/shm/ring.h"
#include "transport/shm/shm.h"

#define PLX_SHM_MAGIC 0x504c5853u      /* "PLXS" */
#define PLX_SHM_PAGE 4096

#define PLX_SHM_PKT_HELP 0xf0          /* transport-private record type (payload plx_shm_help) */
#define PLX_SHM_COOP_SLOTS 32
#define PLX_SHM_COOP_MAX_CHUNKS 16
#define PLX_SHM_COOP_MIN_CHUNK (64 * 1024)
#define PLX_SHM_COOP_EXCHANGE_MAX (1024 * 1024)        /* see plx_shm_coop_start */

/* One shared read, in the reader's segment; written by the reader and
 * the helping sender only through atomics. */
struct plx_shm_coop_slot {
    _Alignas(64) _Atomic uint64_t claim;   /* generation << 32 | next chunk */
    _Atomic uint64_t done;                 /* bytes copied */
    _Atomic uint32_t fail;                 /* chunks the helper could not write */
};

struct plx_shm_seg_hdr {
    _Atomic uint32_t sleeping;
    _Atomic int32_t cpu;               /* where the owner last waited (sched_getcpu), -1 unknown */
    uint32_t magic;
    uint32_t nlocal;
    int32_t owner_lpid;
    uint64_t ring_size;
    uint64_t probe_addr;               /* address of owner's plx_shm_probe_word */
    struct plx_shm_coop_slot coop[PLX_SHM_COOP_SLOTS];
};

struct plx_shm_help {                  /* reader -> sender */
    uint32_t slot, gen;
    uint32_t nchunks, pad;
    uint64_t chunk, len;
    uint64_t dst;                      /* reader's buffer */
    uint64_t src;                      /* sender's buffer */
};

/* The reader's side of one shared read. */
struct plx_shm_coop {
    int lpid;
    uint32_t gen, nchunks;
    char *local;
    uint64_t remote;
    size_t len, chunk;
    struct plx_tp_comp *comp;   /* the reader's completion */
    plx_status_t st;                   /* first error of the reader's copies */
};

struct plx_shm_peer {
    int lpid;
    struct plx_shm_seg_hdr *seg;       /* peer's segment */
    struct plx_ring_prod out;          /* into the peer's ring for me */
    struct plx_ring_cons in;           /* my ring written by this peer */
    struct sockaddr_un bell;
    socklen_t bell_len;
};

static struct {
    int nlocal;
    size_t ring_size;
    size_t seg_size;
    struct plx_shm_peer *peers;        /* by local index */
    int *local_of_lpid;                /* world rank -> local index or -1 */
    struct plx_shm_seg_hdr *my_seg;
    int bell_fd;
    int cma;                           /* 1 if process_vm_readv works between us */
    int help_ok;                       /* 0 after a process_vm_writev failed */
    uint64_t align;                    /* ring payload alignment (PLEXUS_SHM_ALIGN) */
    uint32_t coop_free;                /* bit i: my slot i is free */
    uint32_t coop_active;              /* bit i: slot i waits for the helper */
    uint32_t coop_gen;
    struct plx_shm_coop coop[PLX_SHM_COOP_SLOTS];
    /* PLEXUS_STATS */
    uint64_t st_reads, st_shared, st_read_bytes, st_helped_bytes;
    char name[300];
    const struct plx_tp_upcalls *up;
} plx_shm;

static struct plx_tp_iface plx_shm_ifc;

static const uint64_t plx_shm_probe_word = 0x706c65787573636dull;

static size_t plx_shm_ring_stride(void)
{
    return PLX_RING_CTRL + plx_shm.ring_size;
}

static void *plx_shm_ring_at(struct plx_shm_seg_hdr *seg, int i)
{
    return (char *)seg + PLX_SHM_PAGE + (size_t)i * plx_shm_ring_stride();
}

static void plx_shm_bell_addr(int lpid, struct sockaddr_un *a, socklen_t *len)
{
    memset(a, 0, sizeof *a);
    a->sun_family = AF_UNIX;
    int n = snprintf(a->sun_path + 1, sizeof a->sun_path - 1, "plexus.%s.%d", plx_procs.kvsname, lpid);
    *len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + (size_t)n);
}

static void plx_shm_ring_bell(struct plx_shm_peer *p)
{
    char b = 1;
    /* non-blocking; a full socket buffer already holds a wake-up */
    (void)sendto(plx_shm.bell_fd, &b, 1, MSG_DONTWAIT, (struct sockaddr *)&p->bell, p->bell_len);
}

static int plx_shm_reaches(struct plx_tp_iface *ifc, int lpid)
{
    return plx_shm.local_of_lpid && lpid >= 0 && lpid < plx_procs.n && plx_shm.local_of_lpid[lpid] >= 0;
}

static plx_status_t plx_shm_send(struct plx_tp_iface *ifc, int lpid, const struct plx_hdr *hdr,
                                 const struct iovec *iov, int iovcnt)
{
    struct plx_shm_peer *p = &plx_shm.peers[plx_shm.local_of_lpid[lpid]];
    plx_status_t st = plx_ring_write(&p->out, hdr, iov, iovcnt);
    if (st != PLX_OK)
        return st;
    atomic_thread_fence(memory_order_seq_cst);
    if (plx_unlikely(atomic_load_explicit(&p->seg->sleeping, memory_order_relaxed)))
        plx_shm_ring_bell(p);
    return PLX_OK;
}

/* --- reading a peer's memory (rendezvous) -------------------------------- */

/* Copies [off, off+n) of a read: ours from the peer (read) or, as the
 * helping sender, ours into the peer (write). */
static plx_status_t plx_shm_cma_copy(pid_t pid, int write, char *local, uint64_t remote, size_t n)
{
    size_t done = 0;
    while (done < n) {
        struct iovec l = { local + done, n - done };
        struct iovec r = { (void *)(uintptr_t)(remote + done), n - done };
        ssize_t got = write ? process_vm_writev(pid, &l, 1, &r, 1, 0) : process_vm_readv(pid, &l, 1, &r, 1, 0);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0 && (errno == EPERM || errno == ENOSYS || errno == EACCES))
            return PLX_ERR_UNSUPPORTED;
        if (got <= 0)
            return PLX_ERR_IO;
        done += (size_t)got;
    }
    return PLX_OK;
}

/* Claims the next chunk of generation gen; -1 when none is left. */
static int plx_shm_coop_claim(struct plx_shm_coop_slot *s, uint32_t gen, uint32_t nchunks)
{
    uint64_t v = atomic_load_explicit(&s->claim, memory_order_acquire);
    for (;;) {
        if ((uint32_t)(v >> 32) != gen || (uint32_t)v >= nchunks)
            return -1;
        if (atomic_compare_exchange_weak_explicit(&s->claim, &v, v + 1, memory_order_acq_rel,
                                                  memory_order_acquire))
            return (int)(uint32_t)v;
    }
}

static size_t plx_shm_coop_chunk_len(const struct plx_shm_coop *c, int i)
{
    size_t off = (size_t)i * c->chunk;
    return PLX_MIN(c->chunk, c->len - off);
}

/* Copies chunk i as the reader. After an error the remaining chunks are
 * only counted, so that `done` still reaches the length and the helper's
 * chunks in flight are waited for before the request completes. */
static void plx_shm_coop_read_chunk(struct plx_shm_coop *c, struct plx_shm_coop_slot *s, int i)
{
    size_t off = (size_t)i * c->chunk, n = plx_shm_coop_chunk_len(c, i);
    if (c->st == PLX_OK)
        c->st = plx_shm_cma_copy(plx_procs.p[c->lpid].pid, 0, c->local + off, c->remote + off, n);
    plx_shm.st_read_bytes += n;
    atomic_fetch_add_explicit(&s->done, n, memory_order_acq_rel);
}

/* The reader: copies chunks while there are any; the read's status once
 * every byte is there, PLX_IN_PROGRESS while the helper still copies. */
static plx_status_t plx_shm_coop_run(int slot)
{
    struct plx_shm_coop *c = &plx_shm.coop[slot];
    struct plx_shm_coop_slot *s = &plx_shm.my_seg->coop[slot];
    int i;
    while ((i = plx_shm_coop_claim(s, c->gen, c->nchunks)) >= 0)
        plx_shm_coop_read_chunk(c, s, i);
    uint32_t fail = atomic_exchange_explicit(&s->fail, 0, memory_order_acq_rel);
    for (i = 0; fail; i++, fail >>= 1)
        if (fail & 1)
            plx_shm_coop_read_chunk(c, s, i);
    if (atomic_load_explicit(&s->done, memory_order_acquire) < c->len)
        return PLX_IN_PROGRESS;
    plx_shm.coop_free |= 1u << slot;
    plx_shm.coop_active &= ~(1u << slot);
    return c->st;
}

/* The helping sender: a HELP record from reader p. */
static void plx_shm_coop_help(struct plx_shm_peer *p, const struct plx_shm_help *h)
{
    if (h->slot >= PLX_SHM_COOP_SLOTS)
        return;
    struct plx_shm_coop_slot *s = &p->seg->coop[h->slot];
    pid_t pid = plx_procs.p[p->lpid].pid;
    int i, copied = 0;
    while (plx_shm.help_ok && (i = plx_shm_coop_claim(s, h->gen, h->nchunks)) >= 0) {
        copied = 1;
        size_t off = (size_t)i * h->chunk, n = PLX_MIN(h->chunk, h->len - off);
        if (plx_shm_cma_copy(pid, 1, (char *)(uintptr_t)(h->src + off), h->dst + off, n) != PLX_OK) {
            plx_debug(1, "shm: process_vm_writev to rank %d failed (%s); receivers copy alone", p->lpid,
                      strerror(errno));
            plx_shm.help_ok = 0;
            atomic_fetch_or_explicit(&s->fail, 1u << i, memory_order_acq_rel);
            break;
        }
        atomic_fetch_add_explicit(&s->done, n, memory_order_acq_rel);
        plx_shm.st_helped_bytes += n;
    }
    /* the reader may have gone to sleep waiting for our last chunk */
    atomic_thread_fence(memory_order_seq_cst);
    if (copied && atomic_load_explicit(&p->seg->sleeping, memory_order_relaxed))
        plx_shm_ring_bell(p);
}

/* Starts a shared read when it is large enough and a slot and ring room
 * are free; -1 otherwise (the caller reads alone). */
static int plx_shm_coop_start(struct plx_shm_peer *p, void *local, uint64_t remote, size_t len,
                              struct plx_tp_comp *comp)
{
    /* Not for up to 1 MiB while this process's own large sends wait to be
     * read: in an exchange (Sendrecv, Alltoall, Allgather) the peer is
     * reading too, and each reading its own message is faster than both
     * sharing both. Measured at 2 ranks, medians of 3: Alltoall and
     * Allgather 128K-1M took 0.70-0.86x the time, bibw 128K-1M 1.00-1.21x
     * the bandwidth; but bibw 2-4M fell to 0.67-0.72x, so above 1 MiB the
     * reads stay shared. */
    if (!plx_config.shm_coop_min || len < plx_config.shm_coop_min || !plx_shm.coop_free ||
        p->lpid == plx_procs.my_lpid || (plx_rndv_sends && len <= PLX_SHM_COOP_EXCHANGE_MAX))
        return -1;
    int slot = __builtin_ctz(plx_shm.coop_free);
    struct plx_shm_coop *c = &plx_shm.coop[slot];
    c->chunk = PLX_MAX(PLX_SHM_COOP_MIN_CHUNK,
                       PLX_ALIGN_UP((len + PLX_SHM_COOP_MAX_CHUNKS - 1) / PLX_SHM_COOP_MAX_CHUNKS, PLX_SHM_PAGE));
    c->nchunks = (uint32_t)((len + c->chunk - 1) / c->chunk);
    c->gen = ++plx_shm.coop_gen;
    c->lpid = p->lpid;
    c->local = local;
    c->remote = remote;
    c->len = len;
    c->comp = comp;
    c->st = PLX_OK;
    struct plx_shm_coop_slot *s = &plx_shm.my_seg->coop[slot];
    atomic_store_explicit(&s->done, 0, memory_order_relaxed);
    atomic_store_explicit(&s->fail, 0, memory_order_relaxed);
    atomic_store_explicit(&s->claim, (uint64_t)c->gen << 32, memory_order_release);
    struct plx_shm_help help = { .slot = (uint32_t)slot, .gen = c->gen, .nchunks = c->nchunks, .chunk = c->chunk,
                                 .len = len, .dst = (uint64_t)(uintptr_t)local, .src = remote };
    struct plx_hdr h = { .type = PLX_SHM_PKT_HELP, .len = sizeof help };
    struct iovec iov = { &help, sizeof help };
    if (plx_shm_send(&plx_shm_ifc, p->lpid, &h, &iov, 1) != PLX_OK)
        return -1;
    plx_shm.coop_free &= ~(1u << slot);
    return slot;
}

static plx_status_t plx_shm_read_remote(struct plx_tp_iface *ifc, int lpid, void *local, uint64_t remote_addr,
                                        size_t len, struct plx_tp_comp *comp)
{
    if (!plx_shm.cma)
        return PLX_ERR_UNSUPPORTED;
    struct plx_shm_peer *p = &plx_shm.peers[plx_shm.local_of_lpid[lpid]];
    int slot = plx_shm_coop_start(p, local, remote_addr, len, comp);
    plx_status_t st;
    plx_shm.st_reads++;
    if (slot >= 0) {
        plx_shm.st_shared++;
        st = plx_shm_coop_run(slot);
        if (st == PLX_IN_PROGRESS)
            plx_shm.coop_active |= 1u << slot;
    } else {
        st = plx_shm_cma_copy(plx_procs.p[lpid].pid, 0, local, remote_addr, len);
        plx_shm.st_read_bytes += len;
    }
    if (st == PLX_ERR_UNSUPPORTED) {
        plx_debug(1, "shm: process_vm_readv from rank %d not allowed (%s); using the copy path", lpid,
                  strerror(errno));
        plx_shm.cma = 0;
        return slot >= 0 ? PLX_ERR_IO : PLX_ERR_UNSUPPORTED;
    }
    return st;
}

/* A scattered copy (non-contiguous datatypes): the local iovecs, in
 * order, against one remote range. A short transfer resumes where it
 * stopped. */
static plx_status_t plx_shm_copy_remote(struct plx_tp_iface *ifc, int lpid, int write, const struct iovec *local,
                                        int niov, uint64_t remote, size_t len)
{
    if (!plx_shm.cma)
        return PLX_ERR_UNSUPPORTED;
    pid_t pid = plx_procs.p[lpid].pid;
    struct iovec first = { 0 };
    size_t done = 0;
    while (done < len && niov > 0) {
        struct iovec r = { (void *)(uintptr_t)(remote + done), len - done };
        ssize_t got = write ? process_vm_writev(pid, local, (unsigned long)niov, &r, 1, 0)
                            : process_vm_readv(pid, local, (unsigned long)niov, &r, 1, 0);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0 && (errno == EPERM || errno == ENOSYS || errno == EACCES))
            return done ? PLX_ERR_IO : PLX_ERR_UNSUPPORTED;
        if (got <= 0)
            return PLX_ERR_IO;
        done += (size_t)got;
        /* skip the iovecs (and the part of one) that were transferred */
        size_t skip = (size_t)got;
        while (niov > 0 && skip >= local->iov_len) {
            skip -= local->iov_len;
            local++;
            niov--;
        }
        if (skip) {
            first.iov_base = (char *)local->iov_base + skip;
            first.iov_len = local->iov_len - skip;
            if (niov == 1) {
                local = &first;
            } else {
                /* rare: finish this iovec alone, then go on with the rest */
                plx_status_t st = plx_shm_copy_remote(ifc, lpid, write, &first, 1, remote + done, first.iov_len);
                if (st != PLX_OK)
                    return PLX_ERR_IO;
                done += first.iov_len;
                local++;
                niov--;
            }
        }
    }
    return done == len ? PLX_OK : PLX_ERR_IO;
}

/* Shared reads waiting for the helper's last chunks. */
static int plx_shm_coop_progress(void)
{
    int work = 0;
    for (uint32_t act = plx_shm.coop_active; act; act &= act - 1) {
        int slot = __builtin_ctz(act);
        plx_status_t st = plx_shm_coop_run(slot);
        if (st != PLX_IN_PROGRESS) {
            plx_tp_comp_done(plx_shm.coop[slot].comp, st);
            work++;
        }
    }
    return work;
}

static int plx_shm_poll(void)
{
    int work = 0;
    if (plx_unlikely(plx_shm.coop_active))
        work += plx_shm_coop_progress();
    for (int i = 0; i < plx_shm.nlocal; i++) {
        struct plx_shm_peer *p = &plx_shm.peers[i];
        const struct plx_hdr *h = plx_ring_peek(&p->in);
        if (!h)
            continue;
        do {
            if (plx_unlikely(h->type == PLX_SHM_PKT_HELP))
                plx_shm_coop_help(p, plx_ring_payload(h));
            else
                plx_shm.up->recv[h->type](&plx_shm_ifc, p->lpid, h, plx_ring_payload(h));
            plx_ring_consume(&p->in, h);
            work++;
        } while ((h = plx_ring_peek(&p->in)) != NULL);
        /* the producer may be asleep waiting for room */
        atomic_thread_fence(memory_order_seq_cst);
        if (atomic_load_explicit(&p->seg->sleeping, memory_order_relaxed) && i != plx_procs.my_local_index)
            plx_shm_ring_bell(p);
    }
    return work;
}

static int plx_shm_sleep_prepare(void)
{
    atomic_store_explicit(&plx_shm.my_seg->sleeping, 1, memory_order_relaxed);
    atomic_thread_fence(memory_order_seq_cst);
    return plx_shm.bell_fd;
}

static void plx_shm_sleep_done(void)
{
    atomic_store_explicit(&plx_shm.my_seg->sleeping, 0, memory_order_relaxed);
    char buf[64];
    while (recv(plx_shm.bell_fd, buf, sizeof buf, MSG_DONTWAIT) > 0)
        ;
}

/* Publishes this process's CPU and says whether a node peer last waited
 * on the same one: then the two take turns on one CPU (a loaded machine
 * often puts them there), and every poll spun delays the peer we wait
 * for. O(local ranks), called only after a stretch of idle polls. */
static int plx_shm_cpu_shared(void)
{
    int cpu = sched_getcpu();
    if (cpu < 0)
        return 0;
    if (atomic_load_explicit(&plx_shm.my_seg->cpu, memory_order_relaxed) != cpu)
        atomic_store_explicit(&plx_shm.my_seg->cpu, cpu, memory_order_relaxed);
    for (int i = 0; i < plx_shm.nlocal; i++)
        if (i != plx_procs.my_local_index &&
            atomic_load_explicit(&plx_shm.peers[i].seg->cpu, memory_order_relaxed) == cpu)
            return 1;
    return 0;
}

static void plx_shm_finalize(void)
{
    if (plx_config.stats && (plx_shm.st_reads || plx_shm.st_helped_bytes))
        plx_warn("stats: shm: %llu rendezvous reads (%llu shared with the sender), %llu bytes read; "
                 "%llu bytes written into receivers' buffers as a sender",
                 (unsigned long long)plx_shm.st_reads, (unsigned long long)plx_shm.st_shared,
                 (unsigned long long)plx_shm.st_read_bytes, (unsigned long long)plx_shm.st_helped_bytes);
    for (int i = 0; i < plx_shm.nlocal; i++)
        if (plx_shm.peers[i].seg)
            munmap(plx_shm.peers[i].seg, plx_shm.seg_size);
    if (plx_shm.bell_fd >= 0)
        close(plx_shm.bell_fd);
    free(plx_shm.peers);
    free(plx_shm.local_of_lpid);
    memset(&plx_shm, 0, sizeof plx_shm);
    plx_shm.bell_fd = -1;
}

static void plx_shm_seg_name(int lpid, char *buf, size_t len)
{
    snprintf(buf, len, "/plexus-%s-%d", plx_procs.kvsname, lpid);
}

static plx_status_t plx_shm_check_space(void)
{
    struct statvfs vfs;
    if (statvfs("/dev/shm", &vfs) != 0)
        return PLX_OK;          /* nothing to check against; fallocate will tell */
    unsigned long long avail = (unsigned long long)vfs.f_bavail * vfs.f_frsize;
    if (avail < plx_shm.seg_size) {
        plx_warn("/dev/shm has %llu KiB free but this process needs %zu KiB for %d local peers "
                 "(PLEXUS_SHM_RING_SIZE=%zu). Enlarge /dev/shm (docker run --shm-size=1g) "
                 "or lower PLEXUS_SHM_RING_SIZE.",
                 avail >> 10, plx_shm.seg_size >> 10, plx_shm.nlocal, plx_shm.ring_size);
        return PLX_ERR_NOSPACE;
    }
    return PLX_OK;
}

static plx_status_t plx_shm_create_own(void)
{
    plx_shm_seg_name(plx_procs.my_lpid, plx_shm.name, sizeof plx_shm.name);
    shm_unlink(plx_shm.name);    /* a leftover of a killed job with the same id */
    int fd = shm_open(plx_shm.name, O_RDWR | O_CREAT | O_EXCL, 0600);
    if (fd < 0) {
        plx_warn("shm: cannot create %s: %s", plx_shm.name, strerror(errno));
        return PLX_ERR_IO;
    }
    int err = posix_fallocate(fd, 0, (off_t)plx_shm.seg_size);
    if (err) {
        plx_warn("shm: cannot reserve %zu KiB in /dev/shm (%s). Enlarge /dev/shm "
                 "(docker run --shm-size=1g) or lower PLEXUS_SHM_RING_SIZE.",
                 plx_shm.seg_size >> 10, strerror(err));
        close(fd);
        shm_unlink(plx_shm.name);
        return PLX_ERR_NOSPACE;
    }
    void *m = mmap(NULL, plx_shm.seg_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (m == MAP_FAILED) {
        shm_unlink(plx_shm.name);
        return PLX_ERR_NOMEM;
    }
    plx_shm.my_seg = m;
#ifdef MADV_POPULATE_WRITE
    (void)madvise(m, plx_shm.seg_size, MADV_POPULATE_WRITE);
#endif
    plx_shm.my_seg->magic = PLX_SHM_MAGIC;
    atomic_store_explicit(&plx_shm.my_seg->cpu, -1, memory_order_relaxed);
    plx_shm.my_seg->nlocal = (uint32_t)plx_shm.nlocal;
    plx_shm.my_seg->owner_lpid = plx_procs.my_lpid;
    plx_shm.my_seg->ring_size = plx_shm.ring_size;
    plx_shm.my_seg->probe_addr = (uint64_t)(uintptr_t)&plx_shm_probe_word;
    return PLX_OK;
}

static plx_status_t plx_shm_map_peer(int li)
{
    struct plx_shm_peer *p = &plx_shm.peers[li];
    p->lpid = plx_procs.local_lpids[li];
    if (li == plx_procs.my_local_index) {
        p->seg = plx_shm.my_seg;
    } else {
        char name[300];
        plx_shm_seg_name(p->lpid, name, sizeof name);
        int fd = shm_open(name, O_RDWR, 0600);
        if (fd < 0) {
            plx_warn("shm: cannot open rank %d's segment %s: %s", p->lpid, name, strerror(errno));
            return PLX_ERR_IO;
        }
        void *m = mmap(NULL, plx_shm.seg_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        close(fd);
        if (m == MAP_FAILED)
            return PLX_ERR_NOMEM;
        p->seg = m;
        if (p->seg->magic != PLX_SHM_MAGIC || p->seg->ring_size != plx_shm.ring_size) {
            plx_warn("shm: rank %d's segment has a different layout (PLEXUS_SHM_RING_SIZE must be "
                     "the same on every rank)", p->lpid);
            return PLX_ERR_ARG;
        }
    }
    /* Map in now the pages this process touches (its ring in the peer's
     * segment; its own segment whole, below): otherwise the first lap of
     * every ring takes a page fault per 4 KiB, which showed as the first
     * ~2 ms of a ping-pong running 20 % slow. Old kernels lack the call. */
#ifdef MADV_POPULATE_WRITE
    (void)madvise(plx_shm_ring_at(p->seg, plx_procs.my_local_index), plx_shm_ring_stride(), MADV_POPULATE_WRITE);
#endif
    plx_ring_prod_init(&p->out, plx_shm_ring_at(p->seg, plx_procs.my_local_index), plx_shm.ring_size);
    p->out.align = plx_shm.align;
    plx_ring_cons_init(&p->in, plx_shm_ring_at(plx_shm.my_seg, li), plx_shm.ring_size);
    plx_shm_bell_addr(p->lpid, &p->bell, &p->bell_len);
    return PLX_OK;
}

/* Can this process read a node peer's memory? Read the peer's probe word. */
static void plx_shm_probe_cma(void)
{
    plx_shm.cma = 0;
    if (!plx_config.shm_cma)
        return;
    prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);   /* Yama: let node peers read us */
    int li = (plx_procs.my_local_index + 1) % plx_shm.nlocal;
    struct plx_shm_peer *p = &plx_shm.peers[li];
    uint64_t v = 0;
    struct iovec l = { &v, sizeof v };
    struct iovec r = { (void *)(uintptr_t)p->seg->probe_addr, sizeof v };
    ssize_t n = process_vm_readv(plx_procs.p[p->lpid].pid, &l, 1, &r, 1, 0);
    if (n == (ssize_t)sizeof v && v == plx_shm_probe_word) {
        plx_shm.cma = 1;
        plx_debug(1, "shm: cross-memory attach works; large messages are copied once");
    } else {
        plx_debug(1, "shm: cross-memory attach is not available (%s); large messages use a "
                  "pipelined copy through shared memory", n < 0 ? strerror(errno) : "wrong data");
    }
}

/* PLEXUS_SHM_ALIGN (see ring.h): 4096, 64 or 0; -1 when not understood. */
static int64_t plx_shm_align_setting(void)
{
    const char *a = plx_config.shm_align;
    if (strcmp(a, "page") == 0)
        return 4096;
    if (strcmp(a, "line") == 0)
        return 64;
    if (strcmp(a, "none") == 0)
        return 0;
    if (strcmp(a, "auto") != 0)
        return -1;
#if defined(__x86_64__) || defined(__i386__)
    __builtin_cpu_init();
    if (__builtin_cpu_is("amd"))
        return 4096;
#endif
    return 0;
}

static plx_status_t plx_shm_init(void)
{
    plx_status_t st;
    int64_t align = plx_shm_align_setting();
    if (align < 0) {
        plx_warn("PLEXUS_SHM_ALIGN=%s: expected page, line, none or auto", plx_config.shm_align);
        return PLX_ERR_ARG;
    }
    plx_shm.align = (uint64_t)align;
    plx_shm.bell_fd = -1;
    plx_shm.help_ok = 1;
    plx_shm.coop_free = (uint32_t)((1ull << PLX_SHM_COOP_SLOTS) - 1);
    plx_shm.nlocal = plx_procs.nlocal;
    plx_shm.ring_size = plx_config.shm_ring_size;
    if (plx_shm.ring_size < 16384 || (plx_shm.ring_size & (plx_shm.ring_size - 1))) {
        plx_warn("PLEXUS_SHM_RING_SIZE=%zu must be a power of two of at least 16K", plx_shm.ring_size);
        return PLX_ERR_ARG;
    }
    plx_shm.seg_size = PLX_SHM_PAGE + (size_t)plx_shm.nlocal * plx_shm_ring_stride();
    plx_shm.peers = plx_calloc((size_t)plx_shm.nlocal, sizeof *plx_shm.peers);
    plx_shm.local_of_lpid = plx_malloc((size_t)plx_procs.n * sizeof(int));
    for (int i = 0; i < plx_procs.n; i++)
        plx_shm.local_of_lpid[i] = plx_procs.p[i].local_index;

    plx_shm.bell_fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (plx_shm.bell_fd < 0)
        return PLX_ERR_IO;
    struct sockaddr_un me;
    socklen_t melen;
    plx_shm_bell_addr(plx_procs.my_lpid, &me, &melen);
    if (bind(plx_shm.bell_fd, (struct sockaddr *)&me, melen) != 0) {
        plx_warn("shm: cannot bind doorbell socket: %s", strerror(errno));
        return PLX_ERR_IO;
    }

    st = plx_shm_check_space();
    if (st == PLX_OK)
        st = plx_shm_create_own();
    plx_runtime_test_point("shm-created");
    /* Every rank reaches the fences, even after a local failure, so that no
     * one waits forever; failures are then agreed on through the KVS. */
    char key[PLX_PM_MAX_KEY], val[PLX_PM_MAX_VAL];
    snprintf(key, sizeof key, "shm-ok-%d", plx_procs.my_lpid);
    plx_pm_put(key, st == PLX_OK ? "1" : "0");
    plx_status_t fst = plx_pm_fence();
    if (fst != PLX_OK)
        return fst;
    for (int i = 0; i < plx_shm.nlocal && st == PLX_OK; i++) {
        snprintf(key, sizeof key, "shm-ok-%d", plx_procs.local_lpids[i]);
        if (plx_pm_get(key, val, sizeof val) != PLX_OK || strcmp(val, "1") != 0) {
            plx_warn("shm: rank %d could not set up shared memory", plx_procs.local_lpids[i]);
            st = PLX_ERR_IO;
        }
    }
    for (int i = 0; i < plx_shm.nlocal && st == PLX_OK; i++)
        st = plx_shm_map_peer(i);
    fst = plx_pm_fence();       /* everyone has mapped everything */
    if (plx_shm.my_seg)
        shm_unlink(plx_shm.name);
    if (st != PLX_OK)
        return st;
    if (fst != PLX_OK)
        return fst;
    if (plx_shm.nlocal > 1)
        plx_shm_probe_cma();
    else
        plx_shm.cma = plx_config.shm_cma;
    return PLX_OK;
}

static const struct plx_tp_ops plx_shm_ops = {
    .reaches = plx_shm_reaches,
    .send = plx_shm_send,
    .read_remote = plx_shm_read_remote,
    .copy_remote = plx_shm_copy_remote,
};

/* The one instance: the node's shared memory. */
static plx_status_t plx_shm_open(const struct plx_tp_upcalls *up, int needed, struct plx_tp_iface **ifcs, int max,
                                 int *n)
{
    *n = 0;
    plx_status_t st = plx_shm_init();
    if (st != PLX_OK)
        return st;
    plx_shm.up = up;
    struct plx_tp_iface *ifc = &plx_shm_ifc;
    memset(ifc, 0, sizeof *ifc);
    ifc->ops = &plx_shm_ops;
    ifc->comp = &plx_shm_component;
    snprintf(ifc->name, sizeof ifc->name, "shm");
    snprintf(ifc->detail, sizeof ifc->detail, "%d ranks on this node", plx_shm.nlocal);
    ifc->caps = (struct plx_tp_caps){
        .max_packet = sizeof(struct plx_hdr) + plx_ring_max_payload(plx_shm.ring_size),
        .max_iov = 64,
        .eager_max = plx_config.shm_eager_max,
        .eager_credit = plx_config.shm_eager_credit,
        .flags = PLX_TP_ORDERED | PLX_TP_RELIABLE | PLX_TP_FATE_SHARED | PLX_TP_READ,
        .latency_class = 0,
        .bw_class = 2,
    };
    ifcs[0] = ifc;
    *n = max > 0;
    return PLX_OK;
}

static const char *plx_shm_cma_here(void)
{
    /* a read of our own memory tells whether the syscall exists at all;
     * whether peers may read each other is probed at MPI_Init */
    int x = 42, y = 0;
    struct iovec l = { &y, sizeof y }, r = { &x, sizeof x };
    return process_vm_readv(getpid(), &l, 1, &r, 1, 0) == (ssize_t)sizeof x && y == 42
               ? "single-copy (process_vm_readv) available"
               : "process_vm_readv unavailable: pipelined copy";
}

static int plx_shm_query(char *msg, size_t len)
{
    struct statvfs v;
    if (statvfs("/dev/shm", &v) != 0) {
        snprintf(msg, len, "/dev/shm is missing");
        return 0;
    }
    snprintf(msg, len, "/dev/shm has %llu MiB free; %s", (unsigned long long)v.f_bavail * v.f_frsize >> 20,
             plx_shm_cma_here());
    return 1;
}

const struct plx_tp_component plx_shm_component = {
    .name = "shm",
    .flags = PLX_TP_FATE_SHARED,
    .query = plx_shm_query,
    .open = plx_shm_open,
    .poll = plx_shm_poll,
    .sleep_prepare = plx_shm_sleep_prepare,
    .sleep_done = plx_shm_sleep_done,
    .cpu_shared = plx_shm_cpu_shared,
    .finalize = plx_shm_finalize,
};
