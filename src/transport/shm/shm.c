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
 */
#include <errno.h>
#include <fcntl.h>
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
#include "core/runtime.h"
#include "pm/pm.h"
#include "pt2pt/pt2pt.h"
#include "transport/shm/ring.h"
#include "transport/shm/shm.h"

#define PLX_SHM_MAGIC 0x504c5853u      /* "PLXS" */
#define PLX_SHM_PAGE 4096

struct plx_shm_seg_hdr {
    _Atomic uint32_t sleeping;
    uint32_t magic;
    uint32_t nlocal;
    int32_t owner_lpid;
    uint64_t ring_size;
    uint64_t probe_addr;               /* address of owner's plx_shm_probe_word */
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
    char name[300];
} plx_shm;

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

static int plx_shm_reaches(int lpid)
{
    return plx_shm.local_of_lpid && lpid >= 0 && lpid < plx_procs.n && plx_shm.local_of_lpid[lpid] >= 0;
}

static size_t plx_shm_max_packet(void)
{
    return sizeof(struct plx_hdr) + plx_ring_max_payload(plx_shm.ring_size);
}

static plx_status_t plx_shm_send(int lpid, const struct plx_hdr *hdr, const struct iovec *iov, int iovcnt)
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

static int plx_shm_poll(void)
{
    int work = 0;
    for (int i = 0; i < plx_shm.nlocal; i++) {
        struct plx_shm_peer *p = &plx_shm.peers[i];
        const struct plx_hdr *h = plx_ring_peek(&p->in);
        if (!h)
            continue;
        do {
            plx_pt2pt_dispatch(p->lpid, h, h + 1);
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

static plx_status_t plx_shm_read_remote(int lpid, void *local, uint64_t remote_addr, size_t len)
{
    if (!plx_shm.cma)
        return PLX_ERR_UNSUPPORTED;
    pid_t pid = plx_procs.p[lpid].pid;
    size_t done = 0;
    while (done < len) {
        struct iovec l = { (char *)local + done, len - done };
        struct iovec r = { (void *)(uintptr_t)(remote_addr + done), len - done };
        ssize_t n = process_vm_readv(pid, &l, 1, &r, 1, 0);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EPERM || errno == ENOSYS || errno == EACCES) {
                plx_debug(1, "shm: process_vm_readv from rank %d not allowed (%s); using the copy path",
                          lpid, strerror(errno));
                plx_shm.cma = 0;
                return done ? PLX_ERR_IO : PLX_ERR_UNSUPPORTED;
            }
            return PLX_ERR_IO;
        }
        if (n == 0)
            return PLX_ERR_IO;
        done += (size_t)n;
    }
    return PLX_OK;
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

static void plx_shm_finalize(void)
{
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
    plx_shm.my_seg->magic = PLX_SHM_MAGIC;
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
    plx_ring_prod_init(&p->out, plx_shm_ring_at(p->seg, plx_procs.my_local_index), plx_shm.ring_size);
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

plx_status_t plx_shm_init(void)
{
    plx_status_t st;
    plx_shm.bell_fd = -1;
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

const struct plx_transport_ops plx_shm_ops = {
    .name = "shm",
    .latency_class = 0,
    .reaches = plx_shm_reaches,
    .send = plx_shm_send,
    .max_packet = plx_shm_max_packet,
    .read_remote = plx_shm_read_remote,
    .poll = plx_shm_poll,
    .sleep_prepare = plx_shm_sleep_prepare,
    .sleep_done = plx_shm_sleep_done,
    .finalize = plx_shm_finalize,
};
