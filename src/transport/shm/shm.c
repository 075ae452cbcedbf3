/*
 * Shared-memory transport.
 *
 * Layout. Every process R owns one segment, whose size does not depend on
 * the number of ranks on the node: a header, one inbound queue that every
 * process of the node may write (queue.h: bounded, multi-producer) and
 * PLEXUS_SHM_FAST_RINGS per-pair rings (ring.h: single producer). A sender
 * starts on R's queue; after PLEXUS_SHM_FAST_AFTER messages it claims a free
 * ring of R's (a CAS on a bitmap in R's header), announces it with a FAST
 * record through the queue and from then on writes only to the ring. R
 * starts reading that ring when it takes the FAST record, so the pair's
 * order is kept. When R has no ring left, the sender stays on the queue.
 * Rings go to the busiest senders over time: every PLX_SHM_EPOCH records
 * R compares what each sender sent in the epoch, and when all rings are
 * taken and a queue sender sent far more than the least busy ring holder,
 * R asks that holder for its ring back (REVOKE); the holder writes a last
 * END record into the ring and uses the queue from then on; R reads the
 * ring up to END before any later queue record of that holder, frees the
 * ring and OFFERs it to the busy sender, which claims it at once. A
 * ring is a circular byte buffer of records [struct plx_hdr][payload], each
 * padded to 64 bytes; a small send is: copy hdr+payload, one release store.
 * No lock, no syscall, no allocation.
 *
 * Start-up touches no peer. A process creates its segment before the
 * business-card fence (/dev/shm/plexus-<job>-<rank>, reserved whole with
 * posix_fallocate so that a small /dev/shm fails at MPI_Init with a plain
 * message instead of SIGBUS later) and maps a peer's segment on first
 * contact. Each opener counts itself in the owner's header; the one that
 * completes the count of the node's other ranks unlinks the name, and the
 * owner unlinks it at MPI_Finalize at the latest. A job that dies before
 * leaves names behind: mpiexec and plexus-proxy remove the job's names when
 * it ends (plx_spawn_sweep_shm).
 *
 * Processes of other jobs on this host (spawn, connect/accept, join) write
 * to the same queue through a second instance, "shm_jobs", as guests of the
 * receiver: see "processes of other jobs" below.
 *
 * A producer that finds the queue or its ring full sets its bit (rank mod
 * 64) in the receiver's `waiters` word; the receiver, after taking records,
 * rings the doorbell of the flagged ranks that sleep.
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
 * with process_vm_readv (tried on the first read; if the kernel forbids it the
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
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>
#include "core/config.h"
#include "core/log.h"
#include "core/plexus.h"
#include "core/request.h"
#include "core/runtime.h"
#include "pm/pm.h"
#include "transport/shm/queue.h"
#include "transport/shm/ring.h"
#include "transport/shm/shm.h"

#define PLX_SHM_MAGIC 0x504c5853u      /* "PLXS" */
#define PLX_SHM_PAGE 4096

#define PLX_SHM_PKT_HELP 0xf0          /* transport-private record type (payload plx_shm_help) */
#define PLX_SHM_PKT_FAST 0xf1          /* queue record: my ring in your segment from now on (payload u32) */
#define PLX_SHM_PKT_REVOKE 0xf2        /* receiver -> ring holder: give ring k back (payload u32) */
#define PLX_SHM_PKT_END 0xf3           /* last record of a ring given back; the queue carries what follows */
#define PLX_SHM_PKT_OFFER 0xf4         /* receiver -> busy queue sender: a ring is free, claim it now */
#define PLX_SHM_PKT_BYE 0xf5           /* a process of another job: my last record (its guest slot is free) */
#define PLX_SHM_EPOCH 4096             /* records received between two looks at who uses the rings */
#define PLX_SHM_FAST_MAX 64            /* per-pair rings a segment may hold (bits of fast_used) */
#define PLX_SHM_COOP_SLOTS 32
#define PLX_SHM_COOP_MAX_CHUNKS 16
#define PLX_SHM_COOP_MIN_CHUNK (64 * 1024)
#define PLX_SHM_COOP_EXCHANGE_MAX (4 * 1024 * 1024)    /* see plx_shm_coop_start */
#define PLX_SHM_GUESTS 64              /* processes of other jobs that may write to one segment at once */
#define PLX_SHM_GUEST_FROM 0x80000000u /* queue seal: a guest's record, gen << 8 | slot (never a world rank) */
#define PLX_SHM_GUEST_GEN 0x7fffffu    /* bits of a slot's generation that records carry */
#define PLX_SHM_WATCH_EVERY 64         /* idle stretches (plx_shm_cpu_shared) between two looks at guests' pids */

/* Segments reached by descriptor (see "Start-up" above): the syscalls by
 * number where the C library's headers predate them (the same number on
 * every architecture since Linux 5.1's unified table). */
#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif
#ifndef SYS_pidfd_getfd
#define SYS_pidfd_getfd 438
#endif

/* One shared read, in the reader's segment; written by the reader and
 * the helping sender only through atomics. */
struct plx_shm_coop_slot {
    _Alignas(64) _Atomic uint64_t claim;   /* generation << 32 | next chunk */
    _Atomic uint64_t done;                 /* bytes copied */
    _Atomic uint32_t fail;                 /* chunks the helper could not write */
};

/* A process of another job (a guest) that writes to this segment: it
 * claims a free slot with a CAS on `word` (pid << 32 | gen << 1 | busy),
 * which advances gen, and then fills in who it is; the owner frees it on
 * reading the guest's BYE (see "processes of other jobs" below). */
struct plx_shm_guest_slot {
    _Atomic uint64_t word;
    int32_t wrank;                     /* the guest's world rank in its job */
    uint32_t pad;
    uint64_t job_key;                  /* its job (plx_job_key) */
};

struct plx_shm_seg_hdr {
    _Atomic uint32_t sleeping;
    _Atomic int32_t cpu;               /* where the owner last waited (sched_getcpu), -1 unknown */
    uint32_t magic;
    uint32_t nfast;                    /* per-pair rings in this segment */
    int32_t owner_lpid;
    int32_t owner_pid;
    uint64_t job_key;                  /* the owner's job (plx_job_key): a descriptor taken by number is checked */
    uint64_t ring_size;
    uint64_t queue_size;
    _Atomic uint64_t fast_used;        /* bit k: ring k belongs to a sender */
    _Atomic uint32_t opened;           /* node peers that have mapped this segment */
    _Alignas(64) _Atomic uint64_t waiters;     /* bit lpid % 64: a sender found no room */
    struct plx_shm_coop_slot coop[PLX_SHM_COOP_SLOTS];
    /* processes of other jobs (cold: after everything the same job uses) */
    _Alignas(64) _Atomic uint64_t guest_waiters;   /* bit k: guest slot k's writer found no room */
    struct plx_shm_guest_slot guest[PLX_SHM_GUESTS];
};
_Static_assert(sizeof(struct plx_shm_seg_hdr) <= PLX_SHM_PAGE, "the segment header fits its page");

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

/* A node peer this process has talked to (created on first contact). */
enum plx_shm_out { PLX_SHM_OUT_QUEUE, PLX_SHM_OUT_CLAIMED, PLX_SHM_OUT_FAST, PLX_SHM_OUT_ENDING };

struct plx_shm_peer {
    int lpid;
    pid_t pid;                         /* from its segment, once mapped */
    int out_state;                     /* enum plx_shm_out */
    struct plx_ring_prod out;          /* OUT_CLAIMED, OUT_FAST: my ring in the peer's segment */
    struct plx_shmq queue;             /* the peer's queue (as a producer) */
    struct plx_shm_seg_hdr *seg;       /* peer's segment, NULL until mapped */
    uint32_t out_ring;                 /* index of out */
    uint32_t queued;                   /* messages sent through the queue */
    struct plx_ring_cons in;           /* the peer's ring in my segment (in_on) */
    int in_on;
    uint32_t in_ring;                  /* index of in */
    uint32_t recent;                   /* records received from it in this epoch (rebalancing) */
    int asked;                         /* asked for its ring back, END not yet read */
    int gone;                          /* its segment's name is gone: it has left MPI_Finalize */
    struct sockaddr_un bell;
    socklen_t bell_len;
    /* a process of another job (lpid >= plx_procs.n); cold */
    int guest_slot;                    /* +1: my slot in its segment (0: none claimed) */
    uint32_t guest_gen;                /* that slot's generation */
    int watch;                         /* we talk to it: its death is a failure (plx_shm_guest_watch) */
    int bye;                           /* its BYE has been read: it has left us */
    int wrote;                         /* it has written to us (PLEXUS_STATS) */
};

static struct {
    int nlocal;
    int nfast;                         /* per-pair rings in each segment */
    uint32_t fast_after;               /* queued messages before a sender claims a ring */
    size_t ring_size;
    size_t queue_size;
    size_t seg_size;
    struct plx_shm_peer **peer_of;     /* by world rank (one word each: the send path's one load);
                                        * NULL until first contact or not of this node */
    struct plx_shm_peer **mapped;      /* peers whose segment is mapped */
    int nmapped;
    struct plx_shm_peer *fast_in[PLX_SHM_FAST_MAX];    /* senders on my rings */
    int nfast_in;
    int rebalance;                     /* more node ranks than rings: rings go to the busiest senders */
    uint32_t epoch_n;                  /* records received in this epoch */
    uint64_t revoking;                 /* bit k: ring k asked back, its END not yet read */
    uint32_t revoke_epochs;            /* epochs since then */
    int offer_to;                      /* busiest queue sender when a ring was asked back, -1 none */
    int nending;                       /* my rings in peers' segments that wait for room for their END,
                                        * plus 1 while pend_retry: the poll loop's one test for rare work */
    struct plx_shmq queue;             /* my inbound queue (as its consumer) */
    int *local_of_lpid;                /* world rank -> local index or -1 */
    struct plx_shm_seg_hdr *my_seg;
    plx_status_t early_st;             /* of the segment's creation before the card fence */
    int created;
    int unlinked;
    int by_fd;                         /* segments have no name: peers take seg_fd with pidfd_getfd */
    int seg_fd;                        /* by_fd: my segment's descriptor (kept open until MPI_Finalize) */
    int mapped_at_init;                /* peers' segments mapped inside MPI_Init (PLEXUS_STATS) */
    uint64_t st_map_fd, st_map_name;   /* peers' segments mapped by descriptor, by name */
    int bell_fd;
    int nsleepers;                     /* threads asleep on bell_fd (see plx_shm_sleep_prepare) */
    int cma;                           /* 1 while process_vm_readv works between us */
    int help_ok;                       /* 0 after a process_vm_writev failed */
    uint64_t align;                    /* ring payload alignment (PLEXUS_SHM_ALIGN) */
    uint32_t coop_free;                /* bit i: my slot i is free */
    uint32_t coop_active;              /* bit i: slot i waits for the helper */
    uint32_t coop_gen;
    struct plx_shm_coop coop[PLX_SHM_COOP_SLOTS];
    /* PLEXUS_STATS */
    uint64_t st_reads, st_shared, st_read_bytes, st_helped_bytes;
    uint64_t st_revoked, st_given_back;        /* rings asked back (as receiver), given back (as sender) */
    char name[300];
    const struct plx_tp_upcalls *up;
    /* processes of other jobs; cold, and looked at only from out-of-line functions */
    int npeer_of;                      /* entries of peer_of: world size, then every added process */
    int nmapped_max;                   /* entries of mapped */
    int guests;                        /* some added process is reached by shm: watch their pids */
    int singleton;                     /* started without a launcher: other jobs reach us over TCP */
    uint32_t watch_n;                  /* idle stretches since the last look at guests' pids */
    struct { uint32_t gen; int lpid; } guest_lpid[PLX_SHM_GUESTS];    /* my slots resolved to lpids */
    struct plx_shm_pend *pend, **pend_tail;    /* guests' records waiting for their writer to be added */
    int pend_retry;                    /* processes were added while records waited: the next poll delivers */
    uint64_t st_guest_in, st_guest_out;        /* records from and to processes of other jobs */
    int st_guests;                     /* such processes we talked to */
} plx_shm;

/* A guest's record read before this process added its writer (the other
 * job's cards may reach us a little after its first record). */
struct plx_shm_pend {
    struct plx_shm_pend *next;
    uint64_t gid[2];                   /* the writer: job key, world rank */
    struct plx_hdr h;                  /* followed by the payload */
};

static struct plx_tp_iface plx_shm_ifc;
static struct plx_tp_iface plx_shm_guest_ifc;  /* processes of other jobs (see plx_shm_open) */

static size_t plx_shm_ring_stride(void)
{
    return PLX_RING_CTRL + plx_shm.ring_size;
}

static void *plx_shm_queue_at(struct plx_shm_seg_hdr *seg)
{
    return (char *)seg + PLX_SHM_PAGE;
}

static void *plx_shm_ring_at(struct plx_shm_seg_hdr *seg, int k)
{
    return (char *)seg + PLX_SHM_PAGE + PLX_RING_CTRL + plx_shm.queue_size + (size_t)k * plx_shm_ring_stride();
}

/* A process's doorbell, named by its job's key and its world rank: a
 * process of another job can form it from a guest slot (job key, rank). */
static void plx_shm_bell_addr(uint64_t job_key, int wrank, struct sockaddr_un *a, socklen_t *len)
{
    memset(a, 0, sizeof *a);
    a->sun_family = AF_UNIX;
    int n = snprintf(a->sun_path + 1, sizeof a->sun_path - 1, "plexus.%016llx.%d", (unsigned long long)job_key,
                     wrank);
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

static void plx_shm_seg_name(int lpid, char *buf, size_t len)
{
    snprintf(buf, len, "/plexus-%s-%d", plx_procs.kvsname, lpid);
}

/* The state of node peer lpid, created on first contact (no mapping yet). */
static struct plx_shm_peer *plx_shm_peer_get(int lpid)
{
    struct plx_shm_peer *p = plx_shm.peer_of[lpid];
    if (plx_likely(p != NULL))
        return p;
    p = plx_calloc(1, sizeof *p);
    p->lpid = lpid;
    uint64_t gid[2];
    plx_proc_gid(lpid, gid);
    plx_shm_bell_addr(gid[0], (int)gid[1], &p->bell, &p->bell_len);
    plx_shm.peer_of[lpid] = p;
    return p;
}

/* Where peer p's segment is: its card, "<pid>.<descriptor>" (published as
 * "shm-<rank>" before the card fence; a process of another job brings it
 * in its own card). 0, or -1 when it has none. */
static int plx_shm_peer_card(struct plx_shm_peer *p, int *pid, int *fd)
{
    char val[PLX_PM_MAX_VAL], key[32];
    const char *c = val;
    if (p->lpid >= plx_procs.n) {
        c = plx_procs_comp_card(p->lpid, "shm", val, sizeof val);
        if (!c)
            return -1;
    } else {
        snprintf(key, sizeof key, "shm-%d", p->lpid);
        if (plx_pm_get(key, val, sizeof val) != PLX_OK)
            return -1;
    }
    return sscanf(c, "%d.%d", pid, fd) == 2 && *pid > 0 && *fd >= 0 ? 0 : -1;
}

/* Peer p's segment by descriptor: a copy of the owner's descriptor, taken
 * with pidfd_getfd (the same ptrace permission as process_vm_readv). -1
 * with p->gone set when the owner has left (no such process, or the
 * descriptor closed at its MPI_Finalize), -2 on another failure (said). */
static int plx_shm_take_fd(struct plx_shm_peer *p)
{
    int pid, num;
    if (plx_shm_peer_card(p, &pid, &num) != 0) {
        plx_warn("shm: rank %d has no shared-memory card (every rank of a node must have the same "
                 "PLEXUS_SHM_SEGMENTS)", p->lpid);
        return -2;
    }
    int pidfd = (int)syscall(SYS_pidfd_open, (pid_t)pid, 0);
    if (pidfd < 0 && errno == ESRCH) {
        p->gone = 1;
        return -1;
    }
    int fd = pidfd < 0 ? -1 : (int)syscall(SYS_pidfd_getfd, pidfd, num, 0);
    int err = errno;
    if (pidfd >= 0)
        close(pidfd);
    if (fd < 0 && (err == EBADF || err == ESRCH)) {
        p->gone = 1;
        return -1;
    }
    if (fd < 0) {
        plx_warn("shm: cannot take rank %d's segment (descriptor %d of pid %d): %s; PLEXUS_SHM_SEGMENTS=name "
                 "reaches segments by name instead", p->lpid, num, pid, strerror(err));
        return -2;
    }
    struct stat sb;
    if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode) || (size_t)sb.st_size < plx_shm.seg_size) {
        close(fd);                     /* the number now names another file: the owner closed ours */
        p->gone = 1;
        return -1;
    }
    plx_shm.st_map_fd++;
    return fd;
}

/* Peer p's segment by name. -1 with p->gone set when the name is gone, -2 on another failure. */
static int plx_shm_open_name(struct plx_shm_peer *p, char *name, size_t len)
{
    plx_shm_seg_name(p->lpid, name, len);
    int fd = shm_open(name, O_RDWR, 0600);
    if (fd < 0 && errno == ENOENT) {
        /* Every segment exists before the card fence, and the name goes
         * before MPI_Finalize only once every other rank has opened it:
         * so the owner has finalized (its last records, or a credit for
         * it, are all that is left) or died (the launcher ends the job). */
        p->gone = 1;
        return -1;
    }
    if (fd < 0) {
        plx_warn("shm: cannot open rank %d's segment %s: %s", p->lpid, name, strerror(errno));
        return -2;
    }
    plx_shm.st_map_name++;
    return fd;
}

/* Maps the peer's segment (first contact as a sender or a receiver, or as
 * the helper of its read). By name, the opener that completes the count of
 * the node's other ranks unlinks the name: nobody will open it again. */
static plx_status_t plx_shm_peer_map(struct plx_shm_peer *p)
{
    if (p->seg)
        return PLX_OK;
    struct plx_shm_seg_hdr *seg;
    if (p->lpid == plx_procs.my_lpid) {
        seg = plx_shm.my_seg;
    } else {
        char name[300] = "";
        int fd = plx_shm.by_fd ? plx_shm_take_fd(p) : plx_shm_open_name(p, name, sizeof name);
        if (fd < 0) {
            if (p->gone)
                plx_debug(2, "shm: rank %d has left (its segment is gone)", p->lpid);
            return PLX_ERR_IO;
        }
        void *m = mmap(NULL, plx_shm.seg_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        close(fd);
        if (m == MAP_FAILED) {
            plx_warn("shm: cannot map rank %d's segment: %s", p->lpid, strerror(errno));
            return PLX_ERR_NOMEM;
        }
        seg = m;
        uint64_t gid[2];
        plx_proc_gid(p->lpid, gid);
        if (seg->magic != PLX_SHM_MAGIC || seg->job_key != gid[0] || seg->owner_lpid != (int32_t)gid[1]) {
            munmap(m, plx_shm.seg_size);
            if (!plx_shm.by_fd) {
                plx_warn("shm: %s is not rank %d's segment", name, p->lpid);
                return PLX_ERR_IO;
            }
            plx_debug(2, "shm: rank %d has left (its descriptor now names another file)", p->lpid);
            p->gone = 1;
            return PLX_ERR_IO;
        }
        if (seg->ring_size != plx_shm.ring_size ||
            seg->queue_size != plx_shm.queue_size || seg->nfast != (uint32_t)plx_shm.nfast) {
            plx_warn("shm: rank %d's segment has a different layout (PLEXUS_SHM_RING_SIZE, "
                     "PLEXUS_SHM_QUEUE_SIZE and PLEXUS_SHM_FAST_RINGS must be the same on every rank)", p->lpid);
            munmap(m, plx_shm.seg_size);
            return PLX_ERR_ARG;
        }
        if (!plx_shm.by_fd &&
            atomic_fetch_add_explicit(&seg->opened, 1, memory_order_acq_rel) + 1 == (uint32_t)plx_shm.nlocal - 1)
            shm_unlink(name);
    }
    plx_shmq_init(&p->queue, plx_shm_queue_at(seg), plx_shm.queue_size);
    p->pid = seg->owner_pid;
    p->seg = seg;
    if (plx_unlikely(plx_shm.nmapped == plx_shm.nmapped_max)) {     /* processes of other jobs */
        plx_shm.nmapped_max *= 2;
        plx_shm.mapped = plx_realloc(plx_shm.mapped, (size_t)plx_shm.nmapped_max * sizeof *plx_shm.mapped);
    }
    plx_shm.mapped[plx_shm.nmapped++] = p;
    return PLX_OK;
}

/* The pid of node peer lpid (for cross-memory attach); 0 if unknown. */
static pid_t plx_shm_pid(int lpid)
{
    struct plx_shm_peer *p = plx_shm_peer_get(lpid);
    return plx_shm_peer_map(p) == PLX_OK ? p->pid : 0;
}

/* No room at peer p: ask it to ring our doorbell once it has taken records
 * (if we sleep by then). */
static void plx_shm_want_room(struct plx_shm_peer *p)
{
    uint64_t bit = 1ull << (plx_procs.my_lpid & 63);
    if (!(atomic_load_explicit(&p->seg->waiters, memory_order_relaxed) & bit))
        atomic_fetch_or_explicit(&p->seg->waiters, bit, memory_order_seq_cst);
}

static void plx_shm_wake(struct plx_shm_peer *p)
{
    atomic_thread_fence(memory_order_seq_cst);
    if (plx_unlikely(atomic_load_explicit(&p->seg->sleeping, memory_order_relaxed)))
        plx_shm_ring_bell(p);
}

/* Claims a free ring in p's segment; 0 when it has none left. */
static int plx_shm_fast_claim(struct plx_shm_peer *p)
{
    uint64_t all = p->seg->nfast >= 64 ? ~0ull : (1ull << p->seg->nfast) - 1;
    uint64_t used = atomic_load_explicit(&p->seg->fast_used, memory_order_acquire);
    for (;;) {
        uint64_t avail = all & ~used;
        if (!avail)
            return 0;
        int k = __builtin_ctzll(avail);
        if (atomic_compare_exchange_weak_explicit(&p->seg->fast_used, &used, used | (1ull << k),
                                                  memory_order_acq_rel, memory_order_acquire)) {
            void *base = plx_shm_ring_at(p->seg, k);
            /* map in the pages we write: otherwise the first lap takes a
             * page fault per 4 KiB (the first ~2 ms of a ping-pong ran 20 %
             * slow). Old kernels lack the call. */
#ifdef MADV_POPULATE_WRITE
            (void)madvise(base, plx_shm_ring_stride(), MADV_POPULATE_WRITE);
#endif
            plx_ring_prod_init(&p->out, base, plx_shm.ring_size);
            p->out.align = plx_shm.align;
            p->out_ring = (uint32_t)k;
            p->out_state = PLX_SHM_OUT_CLAIMED;
            plx_debug(2, "shm: rank %d gets ring %d of rank %d", plx_procs.my_lpid, k, p->lpid);
            return 1;
        }
    }
}

/* Giving ring p->out_ring back (asked by its owner p): an END record
 * closes it, and from then on the queue carries our records to p, so they
 * stay in order (p reads the ring up to END before any later queue record
 * of ours). PLX_BUSY while the ring has no room for the END. */
static plx_status_t plx_shm_fast_end(struct plx_shm_peer *p)
{
    struct plx_hdr eh = { .type = PLX_SHM_PKT_END };
    plx_status_t st = plx_ring_write(&p->out, &eh, NULL, 0);
    if (st != PLX_OK) {
        plx_shm_want_room(p);
        return st;
    }
    plx_debug(2, "shm: rank %d gives ring %u of rank %d back", plx_procs.my_lpid, p->out_ring, p->lpid);
    p->out_state = PLX_SHM_OUT_QUEUE;
    p->queued = 0;                     /* FAST_AFTER more queued messages before it asks again */
    plx_shm.nending--;
    plx_shm.st_given_back++;
    plx_shm_wake(p);
    return PLX_OK;
}

/* Everything but a send on an announced ring: first contact, the queue,
 * claiming, announcing and giving back a ring. */
static plx_status_t plx_shm_send_slow(struct plx_shm_peer *p, const struct plx_hdr *hdr, const struct iovec *iov,
                                      int iovcnt)
{
    plx_status_t st;
    if (plx_unlikely(!p->seg) && (st = plx_shm_peer_map(p)) != PLX_OK)
        return p->gone ? PLX_OK : st;      /* nobody will read it: as a write into a departed peer's ring */
    if (p->out_state == PLX_SHM_OUT_ENDING && (st = plx_shm_fast_end(p)) != PLX_OK)
        return st;
    if (p->out_state == PLX_SHM_OUT_QUEUE && plx_shm.nfast > 0 && p->queued >= plx_shm.fast_after &&
        (p->queued & 1023) == plx_shm.fast_after % 1024)     /* retried every 1024 */
        (void)plx_shm_fast_claim(p);
    if (p->out_state == PLX_SHM_OUT_CLAIMED) {
        uint32_t k = p->out_ring;
        struct plx_hdr fh = { .type = PLX_SHM_PKT_FAST, .len = sizeof k };
        struct iovec fi = { &k, sizeof k };
        if (plx_shmq_write(&p->queue, plx_procs.my_lpid, &fh, &fi, 1) == PLX_OK)
            p->out_state = PLX_SHM_OUT_FAST;
    }
    if (p->out_state == PLX_SHM_OUT_FAST)
        st = plx_ring_write(&p->out, hdr, iov, iovcnt);
    else if ((st = plx_shmq_write(&p->queue, plx_procs.my_lpid, hdr, iov, iovcnt)) == PLX_OK)
        p->queued++;
    if (st == PLX_BUSY)
        plx_shm_want_room(p);
    if (st != PLX_OK)
        return st;
    plx_shm_wake(p);
    return PLX_OK;
}

static plx_status_t plx_shm_send(struct plx_tp_iface *ifc, int lpid, const struct plx_hdr *hdr,
                                 const struct iovec *iov, int iovcnt)
{
    struct plx_shm_peer *p = plx_shm.peer_of[lpid];
    if (plx_unlikely(!p || p->out_state != PLX_SHM_OUT_FAST))
        return plx_shm_send_slow(p ? p : plx_shm_peer_get(lpid), hdr, iov, iovcnt);
    plx_status_t st = plx_ring_write(&p->out, hdr, iov, iovcnt);
    if (plx_unlikely(st != PLX_OK)) {
        if (st == PLX_BUSY)
            plx_shm_want_room(p);
        return st;
    }
    plx_shm_wake(p);
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
        c->st = plx_shm_cma_copy(plx_shm_pid(c->lpid), 0, c->local + off, c->remote + off, n);
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
    if (h->slot >= PLX_SHM_COOP_SLOTS || plx_shm_peer_map(p) != PLX_OK)
        return;
    struct plx_shm_coop_slot *s = &p->seg->coop[h->slot];
    pid_t pid = p->pid;
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
    /* Not while this process's own large sends wait to be read: in an
     * exchange (Sendrecv, Alltoall, Allgather, bibw) the peer is reading
     * too, both cores are busy, and each reading its own message is faster
     * than both sharing both (a shared read makes each core pin and copy
     * both processes' buffers: more page-table walks, and both buffers
     * compete for each core's 2 MiB L2). Measured at 2 ranks, medians of
     * 3: Alltoall and Allgather 128K-1M took 0.70-0.86x the time, bibw
     * 128K-1M 1.00-1.21x the bandwidth. Above 1 MiB reads were still
     * shared until the progress wait learned to spin while our sends wait
     * (session 7); since then bibw at 2-4 MiB is faster unshared too:
     * 11.0-11.7 -> 12.5-13.3 GB/s (issue 15, session 8). Above 4 MiB,
     * where bibw's window is 8 messages or fewer, 2-3 of 5 unshared runs
     * fell to 6.6-7.6 GB/s (shared: 9.9-11.8), so reads stay shared there. */
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
    struct plx_shm_peer *p = plx_shm_peer_get(lpid);
    int slot = plx_shm_coop_start(p, local, remote_addr, len, comp);
    plx_status_t st;
    plx_shm.st_reads++;
    if (slot >= 0) {
        plx_shm.st_shared++;
        st = plx_shm_coop_run(slot);
        if (st == PLX_IN_PROGRESS)
            plx_shm.coop_active |= 1u << slot;
    } else {
        st = plx_shm_cma_copy(plx_shm_pid(lpid), 0, local, remote_addr, len);
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
    pid_t pid = plx_shm_pid(lpid);
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

/* A FAST record from p: its ring k of my segment carries what follows. */
static void plx_shm_fast_open(struct plx_shm_peer *p, const void *payload)
{
    uint32_t k;
    memcpy(&k, payload, sizeof k);
    if (k >= (uint32_t)plx_shm.nfast || p->in_on || plx_shm.nfast_in >= PLX_SHM_FAST_MAX) {
        plx_warn("shm: rank %d announced ring %u of %d (ignored)", p->lpid, k, plx_shm.nfast);
        return;
    }
    void *base = plx_shm_ring_at(plx_shm.my_seg, (int)k);
#ifdef MADV_POPULATE_WRITE
    (void)madvise(base, plx_shm_ring_stride(), MADV_POPULATE_WRITE);     /* no faults in its first lap */
#endif
    plx_ring_cons_init(&p->in, base, plx_shm.ring_size);
    p->in_on = 1;
    p->in_ring = k;
    plx_shm.fast_in[plx_shm.nfast_in++] = p;
}

/* p's END has been read: its ring is empty and free for another sender
 * (the next claimer starts where p stopped); the busiest queue sender of
 * the epoch that asked for it is told to claim it now. */
static void plx_shm_fast_close(struct plx_shm_peer *p)
{
    uint32_t k = p->in_ring;
    atomic_store_explicit(&p->in.ctrl->head, p->in.tail, memory_order_relaxed);
    p->in_on = 0;
    p->asked = 0;
    for (int i = 0; i < plx_shm.nfast_in; i++)
        if (plx_shm.fast_in[i] == p) {
            plx_shm.fast_in[i] = plx_shm.fast_in[--plx_shm.nfast_in];
            break;
        }
    plx_shm.revoking &= ~(1ull << k);
    atomic_fetch_and_explicit(&plx_shm.my_seg->fast_used, ~(1ull << k), memory_order_acq_rel);
    plx_debug(2, "shm: rank %d has ring %u back from rank %d", plx_procs.my_lpid, k, p->lpid);
    int to = plx_shm.offer_to;
    plx_shm.offer_to = -1;
    if (to >= 0 && to != p->lpid) {
        struct plx_hdr oh = { .type = PLX_SHM_PKT_OFFER };
        (void)plx_shm_send(&plx_shm_ifc, to, &oh, NULL, 0);
    }
}

/* A record of p came through the queue while p's ring is open: p gave the
 * ring back, and its END is already visible (written before this record).
 * Everything up to END comes first. */
static void plx_shm_fast_drain(struct plx_shm_peer *p);

/* REVOKE from p (ring k of p's segment is mine): give it back. */
static void plx_shm_fast_revoked(struct plx_shm_peer *p, const void *payload)
{
    uint32_t k;
    memcpy(&k, payload, sizeof k);
    if (p->out_state != PLX_SHM_OUT_FAST || p->out_ring != k)
        return;                        /* stale */
    p->out_state = PLX_SHM_OUT_ENDING;
    plx_shm.nending++;
    (void)plx_shm_fast_end(p);         /* no room: at the next send or poll */
}

/* OFFER from p: a ring of p's is free; claim it (announced with the next send). */
static void plx_shm_fast_offered(struct plx_shm_peer *p)
{
    if (p->out_state == PLX_SHM_OUT_QUEUE && p->seg && plx_shm_fast_claim(p)) {
        uint32_t k = p->out_ring;
        struct plx_hdr fh = { .type = PLX_SHM_PKT_FAST, .len = sizeof k };
        struct iovec fi = { &k, sizeof k };
        if (plx_shmq_write(&p->queue, plx_procs.my_lpid, &fh, &fi, 1) == PLX_OK) {
            p->out_state = PLX_SHM_OUT_FAST;
            plx_shm_wake(p);
        }
    }
}

static void plx_shm_dispatch(struct plx_shm_peer *p, const struct plx_hdr *h, const void *payload)
{
    if (plx_likely(h->type < PLX_SHM_PKT_HELP))
        plx_shm.up->recv[h->type](&plx_shm_ifc, p->lpid, h, payload);
    else if (h->type == PLX_SHM_PKT_HELP)
        plx_shm_coop_help(p, payload);
    else if (h->type == PLX_SHM_PKT_FAST)
        plx_shm_fast_open(p, payload);
    else if (h->type == PLX_SHM_PKT_REVOKE)
        plx_shm_fast_revoked(p, payload);
    else if (h->type == PLX_SHM_PKT_OFFER)
        plx_shm_fast_offered(p);
}

static void plx_shm_fast_drain(struct plx_shm_peer *p)
{
    const struct plx_hdr *h;
    while ((h = plx_ring_peek(&p->in)) != NULL) {
        if (h->type == PLX_SHM_PKT_END) {
            plx_ring_consume(&p->in, h);
            plx_shm_fast_close(p);
            return;
        }
        plx_shm_dispatch(p, h, plx_ring_payload(h));
        plx_ring_consume(&p->in, h);
    }
}

/* Every PLX_SHM_EPOCH records (only when the node has more ranks than
 * rings): if all rings are taken and a sender on the queue sent at least
 * FAST_AFTER records in the epoch, more than 4x what the least busy ring
 * holder sent, that holder is asked to give its ring back (one at a time);
 * when its END is read, the busy sender is offered the ring. */
static void plx_shm_rebalance(void)
{
    struct plx_shm_peer *busy = NULL, *idle = NULL;
    uint64_t all = plx_shm.nfast >= 64 ? ~0ull : (1ull << plx_shm.nfast) - 1;
    int full = (atomic_load_explicit(&plx_shm.my_seg->fast_used, memory_order_relaxed) & all) == all;
    /* A holder that does not answer for 8 epochs (it has left MPI, or waits
     * outside it) does not hold up the other rings: another may be asked.
     * Its END, if it comes, is taken as usual. */
    if (plx_shm.revoking && ++plx_shm.revoke_epochs > 8) {
        plx_debug(2, "shm: rank %d stops waiting for ring(s) %#llx to come back", plx_procs.my_lpid,
                  (unsigned long long)plx_shm.revoking);
        plx_shm.revoking = 0;
    }
    for (int i = 0; i < plx_shm.nmapped; i++) {
        struct plx_shm_peer *q = plx_shm.mapped[i];
        if (q->in_on) {
            if (!q->asked && (!idle || q->recent < idle->recent))
                idle = q;
        } else if (q->lpid != plx_procs.my_lpid && (!busy || q->recent > busy->recent)) {
            busy = q;
        }
    }
    if (full && !plx_shm.revoking && busy && idle && busy->recent >= PLX_MAX(plx_shm.fast_after, 1) &&
        (uint64_t)idle->recent * 4 < busy->recent) {
        uint32_t k = idle->in_ring;
        struct plx_hdr rh = { .type = PLX_SHM_PKT_REVOKE, .len = sizeof k };
        struct iovec ri = { &k, sizeof k };
        if (plx_shm_send(&plx_shm_ifc, idle->lpid, &rh, &ri, 1) == PLX_OK) {
            plx_debug(2, "shm: rank %d asks rank %d for ring %u back (%u records in the epoch; rank %d sent %u "
                      "through the queue)", plx_procs.my_lpid, idle->lpid, k, idle->recent, busy->lpid, busy->recent);
            plx_shm.revoking |= 1ull << k;
            plx_shm.revoke_epochs = 0;
            idle->asked = 1;
            plx_shm.offer_to = busy->lpid;
            plx_shm.st_revoked++;
        }
    }
    for (int i = 0; i < plx_shm.nmapped; i++)
        plx_shm.mapped[i]->recent = 0;
    plx_shm.epoch_n = 0;
}

static void plx_shm_guest_retry(void);

/* My rings that wait for room for their END (rare: the ring was full when
 * its owner asked for it back); records of other jobs' processes set
 * aside, once after processes were added (plx_shm_add_peers). */
static void plx_shm_end_pending(void)
{
    if (plx_unlikely(plx_shm.pend_retry))
        plx_shm_guest_retry();
    for (int i = 0; i < plx_shm.nmapped && plx_shm.nending; i++)
        if (plx_shm.mapped[i]->out_state == PLX_SHM_OUT_ENDING)
            (void)plx_shm_fast_end(plx_shm.mapped[i]);
}

/* Senders that found no room and now sleep: ring them. O(node ranks) per
 * call, only after a sender found a full queue or ring. */
static void plx_shm_wake_waiters(void)
{
    uint64_t w = atomic_exchange_explicit(&plx_shm.my_seg->waiters, 0, memory_order_seq_cst);
    for (int i = 0; i < plx_shm.nlocal; i++) {
        int lpid = plx_procs.local_lpids[i];
        if (!(w & (1ull << (lpid & 63))) || lpid == plx_procs.my_lpid)
            continue;
        struct plx_shm_peer *q = plx_shm_peer_get(lpid);
        if (plx_shm_peer_map(q) == PLX_OK && atomic_load_explicit(&q->seg->sleeping, memory_order_relaxed))
            plx_shm_ring_bell(q);
    }
}

static void plx_shm_guest_rec(const struct plx_hdr *h, int from);
static void plx_shm_guest_idle(int slept);

static int plx_shm_poll(void)
{
    int work = 0;
    if (plx_unlikely(plx_shm.coop_active))
        work += plx_shm_coop_progress();
    for (int i = 0; i < plx_shm.nfast_in; i++) {
        struct plx_shm_peer *p = plx_shm.fast_in[i];
        const struct plx_hdr *h;
        while ((h = plx_ring_peek(&p->in)) != NULL) {
            if (plx_unlikely(h->type == PLX_SHM_PKT_END)) {
                plx_ring_consume(&p->in, h);
                plx_shm_fast_close(p);         /* fast_in[i] is now another ring's */
                i--;
                work++;
                break;
            }
            plx_shm_dispatch(p, h, plx_ring_payload(h));
            plx_ring_consume(&p->in, h);
            p->recent++;
            work++;
        }
    }
    const struct plx_hdr *h;
    int from;
    while ((h = plx_shmq_peek(&plx_shm.queue, &from)) != NULL) {
        if (plx_likely(from >= 0 && from < plx_procs.n && plx_shm.local_of_lpid[from] >= 0)) {
            struct plx_shm_peer *p = plx_shm_peer_get(from);
            /* a sender's segment is mapped at its first record: its CPU
             * (plx_shm_cpu_shared) and pid are then at hand */
            if (plx_unlikely(!p->seg))
                (void)plx_shm_peer_map(p);
            if (plx_unlikely(p->in_on))
                plx_shm_fast_drain(p);
            plx_shm_dispatch(p, h, h + 1);
            p->recent++;
        }
        else
            plx_shm_guest_rec(h, from);        /* a process of another job, or junk */
        plx_shmq_consume(&plx_shm.queue, h);
        work++;
    }
    if (plx_unlikely(plx_shm.nending))
        plx_shm_end_pending();
    if (plx_shm.rebalance && (plx_shm.epoch_n += (uint32_t)work) >= PLX_SHM_EPOCH)
        plx_shm_rebalance();
    if (work) {
        /* a sender may be asleep waiting for room */
        atomic_thread_fence(memory_order_seq_cst);
        if (plx_unlikely(atomic_load_explicit(&plx_shm.my_seg->waiters, memory_order_relaxed)))
            plx_shm_wake_waiters();
    }
    return work;
}

/* Threads of this process asleep on the doorbell are counted (under the
 * library lock): the progress thread (PLEXUS_ASYNC_PROGRESS) may sleep there
 * while an application thread inside a callback does too, and the first to
 * wake must not withdraw the other's announcement. */
static int plx_shm_sleep_prepare(void)
{
    if (plx_shm.nsleepers++ == 0)
        atomic_store_explicit(&plx_shm.my_seg->sleeping, 1, memory_order_relaxed);
    atomic_thread_fence(memory_order_seq_cst);
    return plx_shm.bell_fd;
}

static void plx_shm_sleep_done(void)
{
    if (plx_unlikely(plx_shm.guests))
        plx_shm_guest_idle(1);
    if (--plx_shm.nsleepers == 0)
        atomic_store_explicit(&plx_shm.my_seg->sleeping, 0, memory_order_relaxed);
    char buf[64];
    while (recv(plx_shm.bell_fd, buf, sizeof buf, MSG_DONTWAIT) > 0)
        ;
}

/* Publishes this process's CPU and says whether a node peer last waited
 * on the same one: then the two take turns on one CPU (a loaded machine
 * often puts them there), and every poll spun delays the peer we wait
 * for. O(peers whose segment is mapped: those we sent to or received
 * from), called only after a stretch of idle polls. */
static int plx_shm_cpu_shared(void)
{
    if (plx_unlikely(plx_shm.guests))
        plx_shm_guest_idle(0);
    int cpu = sched_getcpu();
    if (cpu < 0)
        return 0;
    if (atomic_load_explicit(&plx_shm.my_seg->cpu, memory_order_relaxed) != cpu)
        atomic_store_explicit(&plx_shm.my_seg->cpu, cpu, memory_order_relaxed);
    for (int i = 0; i < plx_shm.nmapped; i++)
        if (plx_shm.mapped[i]->lpid != plx_procs.my_lpid &&
            atomic_load_explicit(&plx_shm.mapped[i]->seg->cpu, memory_order_relaxed) == cpu)
            return 1;
    return 0;
}

static void plx_shm_guest_finalize(void);

static void plx_shm_finalize(void)
{
    if (plx_shm.guests)
        plx_shm_guest_finalize();
    if (plx_config.stats && plx_shm.st_map_fd + plx_shm.st_map_name)
        plx_warn("stats: shm: %llu peers' segments mapped (%d inside MPI_Init), %llu by descriptor, %llu by name",
                 (unsigned long long)(plx_shm.st_map_fd + plx_shm.st_map_name), plx_shm.mapped_at_init,
                 (unsigned long long)plx_shm.st_map_fd, (unsigned long long)plx_shm.st_map_name);
    if (plx_config.stats && (plx_shm.st_revoked || plx_shm.st_given_back))
        plx_warn("stats: shm: %llu rings asked back (for a busier sender), %llu rings given back",
                 (unsigned long long)plx_shm.st_revoked, (unsigned long long)plx_shm.st_given_back);
    if (plx_config.stats && (plx_shm.st_reads || plx_shm.st_helped_bytes))
        plx_warn("stats: shm: %llu rendezvous reads (%llu shared with the sender), %llu bytes read; "
                 "%llu bytes written into receivers' buffers as a sender",
                 (unsigned long long)plx_shm.st_reads, (unsigned long long)plx_shm.st_shared,
                 (unsigned long long)plx_shm.st_read_bytes, (unsigned long long)plx_shm.st_helped_bytes);
    if (plx_shm.created && !plx_shm.unlinked)
        shm_unlink(plx_shm.name);      /* a node peer that never wrote to us will not open it now */
    for (int i = 0; i < plx_shm.nmapped; i++)
        if (plx_shm.mapped[i]->seg != plx_shm.my_seg)
            munmap(plx_shm.mapped[i]->seg, plx_shm.seg_size);
    if (plx_shm.my_seg)
        munmap(plx_shm.my_seg, plx_shm.seg_size);
    for (int i = 0; plx_shm.peer_of && i < plx_shm.npeer_of; i++)
        free(plx_shm.peer_of[i]);
    if (plx_shm.bell_fd >= 0)
        close(plx_shm.bell_fd);
    if (plx_shm.seg_fd >= 0)
        close(plx_shm.seg_fd);         /* a peer that takes it after this finds it gone (EBADF) */
    free(plx_shm.peer_of);
    free(plx_shm.mapped);
    free(plx_shm.local_of_lpid);
    memset(&plx_shm, 0, sizeof plx_shm);
    plx_shm.bell_fd = -1;
    plx_shm.seg_fd = -1;
}

/* The segment's size: header, queue, rings. Not a function of the node's
 * ranks. 0 when a setting is out of range (with a message). */
static size_t plx_shm_layout(void)
{
    plx_shm.ring_size = plx_config.shm_ring_size;
    plx_shm.queue_size = plx_config.shm_queue_size;
    plx_shm.nfast = plx_config.shm_fast_rings;
    if (plx_shm.ring_size < 16384 || (plx_shm.ring_size & (plx_shm.ring_size - 1))) {
        plx_warn("PLEXUS_SHM_RING_SIZE=%zu must be a power of two of at least 16K", plx_shm.ring_size);
        return 0;
    }
    if (plx_shm.queue_size < 16384 || (plx_shm.queue_size & (plx_shm.queue_size - 1))) {
        plx_warn("PLEXUS_SHM_QUEUE_SIZE=%zu must be a power of two of at least 16K", plx_shm.queue_size);
        return 0;
    }
    if (plx_shm.nfast < 0 || plx_shm.nfast > PLX_SHM_FAST_MAX) {
        plx_warn("PLEXUS_SHM_FAST_RINGS=%d must be between 0 and %d", plx_shm.nfast, PLX_SHM_FAST_MAX);
        return 0;
    }
    return PLX_SHM_PAGE + PLX_RING_CTRL + plx_shm.queue_size + (size_t)plx_shm.nfast * plx_shm_ring_stride();
}

/* Can node peers take a descriptor of ours with pidfd_getfd? The kernel
 * checks what it checks for process_vm_readv (PTRACE_MODE_ATTACH_REALCREDS):
 * same user, dumpable, Yama's ptrace_scope (1 is met by PR_SET_PTRACER_ANY,
 * set in plx_shm_init; 2 needs CAP_SYS_PTRACE, 3 forbids), and a seccomp
 * filter may refuse the calls. Taking our own descriptor tests the calls;
 * the rest is the same for every process of the node, so every rank of a
 * job decides alike and a job never mixes the two ways. */
static int plx_shm_fd_usable(int fd, char *why, size_t len)
{
    FILE *f = fopen("/proc/sys/kernel/yama/ptrace_scope", "r");
    int scope = 0;
    if (f) {
        if (fscanf(f, "%d", &scope) != 1)
            scope = 0;
        fclose(f);
    }
    if (scope >= 3 || (scope == 2 && geteuid() != 0)) {
        snprintf(why, len, "Yama's ptrace_scope is %d", scope);
        return 0;
    }
    if (prctl(PR_GET_DUMPABLE, 0, 0, 0, 0) != 1) {
        snprintf(why, len, "the process is not dumpable");
        return 0;
    }
    int pidfd = (int)syscall(SYS_pidfd_open, getpid(), 0);
    int copy = pidfd < 0 ? -1 : (int)syscall(SYS_pidfd_getfd, pidfd, fd, 0);
    int err = errno;
    if (copy >= 0)
        close(copy);
    if (pidfd >= 0)
        close(pidfd);
    if (copy < 0) {
        snprintf(why, len, "%s: %s", pidfd < 0 ? "pidfd_open" : "pidfd_getfd", strerror(err));
        return 0;
    }
    return 1;
}

/* This process's segment without a name (PLEXUS_SHM_SEGMENTS fd or auto):
 * an unlinked file of /dev/shm (O_TMPFILE), so that /dev/shm's size still
 * bounds it and nothing is left when the process dies, however it dies.
 * The descriptor, or -1 when it cannot be used (why says so). */
static int plx_shm_create_unnamed(char *why, size_t len)
{
    int fd = open("/dev/shm", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
    if (fd < 0) {
        snprintf(why, len, "O_TMPFILE in /dev/shm: %s", strerror(errno));
        return -1;
    }
    if (fd < 3) {                      /* stdin/out/err closed: keep it out of the program's way */
        int hi = fcntl(fd, F_DUPFD_CLOEXEC, 3);
        close(fd);
        if ((fd = hi) < 0) {
            snprintf(why, len, "F_DUPFD: %s", strerror(errno));
            return -1;
        }
    }
    if (!plx_shm_fd_usable(fd, why, len)) {
        close(fd);
        return -1;
    }
    return fd;
}

/* Creates, reserves and maps this process's segment; on failure says why in
 * plx_shm.early_st (reported by open, which knows the node's ranks). */
static plx_status_t plx_shm_create_own(void)
{
    const char *mode = plx_config.shm_segments;
    int fd = -1;
    if (strcmp(mode, "name") != 0) {
        if (strcmp(mode, "fd") != 0 && strcmp(mode, "auto") != 0) {
            plx_warn("PLEXUS_SHM_SEGMENTS=%s: expected auto, fd or name", mode);
            return PLX_ERR_ARG;
        }
        char why[200];
        fd = plx_shm_create_unnamed(why, sizeof why);
        if (fd < 0 && strcmp(mode, "fd") == 0) {
            plx_warn("shm: PLEXUS_SHM_SEGMENTS=fd, but segments cannot be passed by descriptor here (%s)", why);
            return PLX_ERR_UNSUPPORTED;
        }
        if (fd < 0)
            plx_debug(1, "shm: segments by name (%s)", why);
    }
    if (fd >= 0) {
        plx_shm.by_fd = 1;
        plx_shm.unlinked = 1;          /* it never had a name */
        snprintf(plx_shm.name, sizeof plx_shm.name, "(descriptor %d)", fd);
    } else {
        plx_shm_seg_name(plx_procs.my_lpid, plx_shm.name, sizeof plx_shm.name);
        shm_unlink(plx_shm.name);    /* a leftover of a killed job with the same id */
        fd = shm_open(plx_shm.name, O_RDWR | O_CREAT | O_EXCL, 0600);
        if (fd < 0) {
            plx_warn("shm: cannot create %s: %s", plx_shm.name, strerror(errno));
            return PLX_ERR_IO;
        }
    }
    plx_shm.created = 1;
    int err = posix_fallocate(fd, 0, (off_t)plx_shm.seg_size);
    if (err) {
        close(fd);
        if (!plx_shm.by_fd)
            shm_unlink(plx_shm.name);
        plx_shm.unlinked = 1;
        return err == ENOSPC ? PLX_ERR_NOSPACE : PLX_ERR_IO;
    }
    void *m = mmap(NULL, plx_shm.seg_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (plx_shm.by_fd && m != MAP_FAILED)
        plx_shm.seg_fd = fd;           /* peers take it by number */
    else
        close(fd);
    if (m == MAP_FAILED) {
        if (!plx_shm.by_fd)
            shm_unlink(plx_shm.name);
        plx_shm.unlinked = 1;
        return PLX_ERR_NOMEM;
    }
    plx_shm.my_seg = m;
    /* the header and the queue are touched at once; a ring when a sender
     * claims it (the sender maps its pages in then) */
#ifdef MADV_POPULATE_WRITE
    (void)madvise(m, PLX_SHM_PAGE + PLX_RING_CTRL + plx_shm.queue_size, MADV_POPULATE_WRITE);
#endif
    plx_shm.my_seg->magic = PLX_SHM_MAGIC;
    atomic_store_explicit(&plx_shm.my_seg->cpu, -1, memory_order_relaxed);
    plx_shm.my_seg->nfast = (uint32_t)plx_shm.nfast;
    plx_shm.my_seg->owner_lpid = plx_procs.my_lpid;
    plx_shm.my_seg->owner_pid = (int32_t)getpid();
    plx_shm.my_seg->job_key = plx_procs.my_job_key;
    plx_shm.my_seg->ring_size = plx_shm.ring_size;
    plx_shm.my_seg->queue_size = plx_shm.queue_size;
    plx_shmq_init(&plx_shm.queue, plx_shm_queue_at(plx_shm.my_seg), plx_shm.queue_size);
    if (plx_shm.by_fd && plx_procs.n > 1) {
        char key[32], val[64];
        snprintf(key, sizeof key, "shm-%d", plx_procs.my_lpid);
        snprintf(val, sizeof val, "%d.%d", (int)getpid(), plx_shm.seg_fd);
        if (plx_pm_put(key, val) != PLX_OK)
            plx_warn("shm: cannot publish the shared-memory card");
    }
    return PLX_OK;
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

/* Before the business-card fence: the segment exists when any peer learns
 * that we do, so nothing at start-up waits for or touches a peer. */
static void plx_shm_init_early(void)
{
    plx_shm.bell_fd = -1;
    plx_shm.seg_fd = -1;
    plx_shm.seg_size = plx_shm_layout();
    if (!plx_shm.seg_size) {
        plx_shm.early_st = PLX_ERR_ARG;
        return;
    }
    struct statvfs vfs;
    if (statvfs("/dev/shm", &vfs) == 0 && (unsigned long long)vfs.f_bavail * vfs.f_frsize < plx_shm.seg_size)
        plx_shm.early_st = PLX_ERR_NOSPACE;
    else
        plx_shm.early_st = plx_shm_create_own();
    plx_runtime_test_point("shm-created");
}

/* /dev/shm could not hold our segment: what the node needs and what lowers it. */
static void plx_shm_no_space(void)
{
    struct statvfs vfs;
    unsigned long long avail = 0;
    if (statvfs("/dev/shm", &vfs) == 0)
        avail = (unsigned long long)vfs.f_bavail * vfs.f_frsize;
    plx_warn("MPI_Init: /dev/shm is too small: the %d ranks of this node need %zu KiB of shared memory "
             "(%zu KiB each: a %zu KiB queue and PLEXUS_SHM_FAST_RINGS=%d rings of PLEXUS_SHM_RING_SIZE=%zu "
             "bytes), %llu KiB are free. Enlarge /dev/shm (docker run --shm-size=...), or lower "
             "PLEXUS_SHM_FAST_RINGS (0: queues only), PLEXUS_SHM_RING_SIZE or PLEXUS_SHM_QUEUE_SIZE",
             plx_procs.nlocal, (size_t)plx_procs.nlocal * (plx_shm.seg_size >> 10), plx_shm.seg_size >> 10,
             plx_shm.queue_size >> 10, plx_shm.nfast, plx_shm.ring_size, avail >> 10);
}

static plx_status_t plx_shm_init(void)
{
    int64_t align = plx_shm_align_setting();
    if (align < 0) {
        plx_warn("PLEXUS_SHM_ALIGN=%s: expected page, line, none or auto", plx_config.shm_align);
        return PLX_ERR_ARG;
    }
    plx_shm.align = (uint64_t)align;
    plx_shm.help_ok = 1;
    plx_shm.coop_free = (uint32_t)((1ull << PLX_SHM_COOP_SLOTS) - 1);
    plx_shm.nlocal = plx_procs.nlocal;
    /* When every node peer can have a ring of every other, nobody needs to
     * wait its turn: rings from the first message (a 2-rank job then never
     * switches in the middle of its first timed loop). */
    plx_shm.fast_after = plx_shm.nlocal <= plx_config.shm_fast_rings ? 0 : (uint32_t)plx_config.shm_fast_after;
    plx_shm.rebalance = plx_shm.nlocal > plx_config.shm_fast_rings && plx_config.shm_fast_rings > 0;
    plx_shm.offer_to = -1;
    if (!plx_shm.created && plx_shm.early_st == PLX_OK) {
        plx_shm.singleton = 1;          /* a singleton: no card fence, no early call */
        plx_shm_init_early();
    }
    if (plx_shm.early_st == PLX_ERR_NOSPACE)
        plx_shm_no_space();
    if (plx_shm.early_st != PLX_OK)
        return plx_shm.early_st;
    if (plx_shm.nlocal == 1 && !plx_shm.unlinked) {
        shm_unlink(plx_shm.name);      /* nobody else will open it */
        plx_shm.unlinked = 1;
    }
    plx_shm.peer_of = plx_calloc((size_t)plx_procs.n, sizeof *plx_shm.peer_of);
    plx_shm.npeer_of = plx_procs.n;
    plx_shm.mapped = plx_calloc((size_t)plx_shm.nlocal, sizeof *plx_shm.mapped);
    plx_shm.nmapped_max = plx_shm.nlocal;
    plx_shm.local_of_lpid = plx_malloc((size_t)plx_procs.n * sizeof(int));
    for (int i = 0; i < plx_procs.n; i++)
        plx_shm.local_of_lpid[i] = plx_procs.p[i].local_index;

    plx_shm.bell_fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (plx_shm.bell_fd < 0)
        return PLX_ERR_IO;
    struct sockaddr_un me;
    socklen_t melen;
    plx_shm_bell_addr(plx_procs.my_job_key, plx_procs.my_lpid, &me, &melen);
    if (bind(plx_shm.bell_fd, (struct sockaddr *)&me, melen) != 0) {
        plx_warn("shm: cannot bind doorbell socket: %s", strerror(errno));
        return PLX_ERR_IO;
    }
    /* Under a launcher that does not sweep /dev/shm when the job ends
     * (Hydra, srun: PLEXUS_MPIEXEC is set only by our mpiexec and proxy),
     * open every node peer's segment now, so that the last opener of each
     * unlinks it before MPI_Init returns and a job that dies later leaves
     * nothing: O(node ranks) opens and maps at MPI_Init (as before issue
     * 15), no peer is waited for. */
    const char *ours = getenv("PLEXUS_MPIEXEC");
    if (!plx_shm.by_fd && !(ours && strcmp(ours, "1") == 0))
        for (int i = 0; i < plx_shm.nlocal; i++) {
            plx_status_t st = plx_shm_peer_map(plx_shm_peer_get(plx_procs.local_lpids[i]));
            if (st != PLX_OK)
                return st;
        }
    plx_shm.mapped_at_init = (int)(plx_shm.st_map_fd + plx_shm.st_map_name);
    /* Cross-memory attach is tried on the first large read; a refusal
     * (Yama, seccomp) switches this process to the pipelined copy then.
     * Segments by descriptor need the same permission (pidfd_getfd), also
     * from processes of other jobs. */
    plx_shm.cma = plx_config.shm_cma;
    if (plx_shm.by_fd || (plx_shm.cma && plx_shm.nlocal > 1))
        prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);   /* Yama: let node peers read us */
    return PLX_OK;
}

/* --- processes of other jobs (guests) ----------------------------------------
 *
 * A process of another job on this host (spawn, connect/accept, join) maps
 * our segment by the card it got with our business card ("shm=<pid>.<fd>")
 * and writes to our queue like a node peer, but it has no world rank here:
 * it claims one of PLX_SHM_GUESTS slots in our header and its records are
 * sealed with PLX_SHM_GUEST_FROM | gen << 8 | slot, which the poll loop's
 * one existing check ("a rank of this node?") sends here. We resolve the
 * slot to the lpid we gave the writer (plx_procs_find of its job key and
 * rank) and cache it. A writer we have not added yet (its job's cards reach
 * us a little later) has its records copied aside and delivered in order
 * once we have. Guests never take a per-pair ring; everything they write goes
 * through the queue. A guest's last record is a BYE (at disconnect or
 * finalize), on which we free its slot: only the owner frees a slot, after
 * every earlier record of that writer. A writer that died without a BYE
 * leaves its slot busy until a claimer finds none free and takes the slots
 * of dead pids over (their stale records then carry an old gen and are
 * dropped). Another job shares no fate with us, so while we talk to a
 * guest, its pid is looked at after every sleep and every
 * PLX_SHM_WATCH_EVERY idle stretches: a dead one is a failed peer.
 *
 * Everything here is reached from the same job's paths only through
 * branches they already had (the poll loop's "not of this node", the
 * instance's own ops) or from out-of-line idle and sleep hooks behind
 * plx_shm.guests: the same job's send and receive paths are unchanged. */

static int plx_shm_guest_reaches(struct plx_tp_iface *ifc, int lpid)
{
    char card[64];
    return plx_shm.by_fd && !plx_shm.singleton && lpid >= plx_procs.n && lpid < plx_shm.npeer_of &&
           plx_procs.p[lpid].same_host && plx_procs_comp_card(lpid, "shm", card, sizeof card) != NULL;
}

static uint32_t plx_shm_guest_from(const struct plx_shm_peer *p)
{
    return PLX_SHM_GUEST_FROM | p->guest_gen << 8 | (uint32_t)(p->guest_slot - 1);
}

/* Claims a slot in p's segment (pass 0: a free one; pass 1: one whose
 * writer has died without its BYE). */
static plx_status_t plx_shm_guest_claim(struct plx_shm_peer *p)
{
    for (int pass = 0; pass < 2; pass++)
        for (int k = 0; k < PLX_SHM_GUESTS; k++) {
            struct plx_shm_guest_slot *g = &p->seg->guest[k];
            uint64_t w = atomic_load_explicit(&g->word, memory_order_acquire);
            if ((w & 1) && (pass == 0 || kill((pid_t)(w >> 32), 0) == 0 || errno != ESRCH))
                continue;
            uint32_t gen = ((uint32_t)(w >> 1) + 1) & PLX_SHM_GUEST_GEN;
            uint64_t nw = (uint64_t)(uint32_t)getpid() << 32 | (uint64_t)gen << 1 | 1;
            if (!atomic_compare_exchange_strong_explicit(&g->word, &w, nw, memory_order_acq_rel,
                                                         memory_order_acquire))
                continue;
            /* read by the owner only after our first record's seal (release) */
            g->wrank = plx_procs.my_lpid;
            g->job_key = plx_procs.my_job_key;
            p->guest_slot = k + 1;
            p->guest_gen = gen;
            plx_debug(2, "shm: slot %d (gen %u) in the segment of process lpid %d of another job", k, gen, p->lpid);
            return PLX_OK;
        }
    plx_warn("shm: the shared-memory segment of rank %d of job %s (pid %d) has all its %d slots for processes of "
             "other jobs taken", plx_procs.p[p->lpid].wrank, plx_procs.jobs[plx_procs.p[p->lpid].job - 1].name,
             (int)p->pid, PLX_SHM_GUESTS);
    return PLX_ERR_NOSPACE;
}

static void plx_shm_guest_want_room(struct plx_shm_peer *p)
{
    atomic_fetch_or_explicit(&p->seg->guest_waiters, 1ull << (p->guest_slot - 1), memory_order_seq_cst);
    /* a sleeping owner wakes, and its sleep hook rings us back */
    if (atomic_load_explicit(&p->seg->sleeping, memory_order_relaxed))
        plx_shm_ring_bell(p);
}

static plx_status_t plx_shm_guest_send(struct plx_tp_iface *ifc, int lpid, const struct plx_hdr *hdr,
                                       const struct iovec *iov, int iovcnt)
{
    struct plx_shm_peer *p = plx_shm_peer_get(lpid);
    plx_status_t st;
    if (!p->seg && (st = plx_shm_peer_map(p)) != PLX_OK)
        return p->gone ? PLX_OK : st;  /* nobody will read it, as for a node peer that has left */
    if (!p->guest_slot && (st = plx_shm_guest_claim(p)) != PLX_OK)
        return st;
    plx_shm.guests = 1;
    p->watch = !p->bye;
    st = plx_shmq_write(&p->queue, (int)plx_shm_guest_from(p), hdr, iov, iovcnt);
    if (st == PLX_BUSY)
        plx_shm_guest_want_room(p);
    if (st != PLX_OK)
        return st;
    plx_shm.st_guest_out++;
    plx_shm_wake(p);
    return PLX_OK;
}

/* A rendezvous read from another job's process: alone (no shared read). */
static plx_status_t plx_shm_guest_read_remote(struct plx_tp_iface *ifc, int lpid, void *local, uint64_t remote_addr,
                                              size_t len, struct plx_tp_comp *comp)
{
    if (!plx_shm.cma)
        return PLX_ERR_UNSUPPORTED;
    plx_shm.st_reads++;
    plx_shm.st_read_bytes += len;
    return plx_shm_cma_copy(plx_shm_pid(lpid), 0, local, remote_addr, len);
}

/* The lpid of the writer gid, when this process has added it (and the
 * layers above know it), else -1. */
static int plx_shm_guest_lpid(const uint64_t gid[2])
{
    int l = plx_procs_find(gid);
    return l >= plx_procs.n && l < plx_shm.npeer_of ? l : -1;
}

static void plx_shm_guest_deliver(int lpid, const struct plx_hdr *h, const void *payload)
{
    struct plx_shm_peer *p = plx_shm_peer_get(lpid);
    if (h->type == PLX_SHM_PKT_BYE) {
        plx_debug(2, "shm: lpid %d (another job) says BYE", lpid);
        p->bye = 1;
        p->watch = 0;
        return;
    }
    p->watch = 1;
    p->bye = 0;
    if (!p->wrote) {
        p->wrote = 1;
        plx_shm.st_guests++;
    }
    plx_shm.st_guest_in++;
    if (h->type < PLX_SHM_PKT_HELP)
        plx_shm.up->recv[h->type](&plx_shm_guest_ifc, lpid, h, payload);
    else
        plx_debug(1, "shm: record type %#x from lpid %d of another job (ignored)", h->type, lpid);
}

/* Records set aside whose writers are now known, in order; how many. */
static int plx_shm_guest_pending(void)
{
    struct plx_shm_pend **pp = &plx_shm.pend, *e;
    int n = 0;
    while ((e = *pp) != NULL) {
        int lpid = plx_shm_guest_lpid(e->gid);
        if (lpid < 0) {
            pp = &e->next;
            continue;
        }
        *pp = e->next;
        plx_shm_guest_deliver(lpid, &e->h, &e->h + 1);
        free(e);
        n++;
    }
    plx_shm.pend_tail = pp;
    return n;
}

/* From the poll loop, once after processes were added while records of
 * other jobs waited (a program that only tests, and never waits, gets them
 * too). */
static __attribute__((noinline, cold)) void plx_shm_guest_retry(void)
{
    plx_shm.pend_retry = 0;
    plx_shm.nending--;
    if (plx_shm.pend && plx_shm_guest_pending() > 0) {
        /* the poll loop does not count this as work: should the wait go
         * to sleep now, it wakes at once and sees what was delivered */
        struct plx_shm_peer me;
        plx_shm_bell_addr(plx_procs.my_job_key, plx_procs.my_lpid, &me.bell, &me.bell_len);
        plx_shm_ring_bell(&me);
    }
}

/* Guests that found our queue full: ring them (they may sleep). */
static void plx_shm_guest_wake_waiters(void)
{
    if (!atomic_load_explicit(&plx_shm.my_seg->guest_waiters, memory_order_relaxed))
        return;
    uint64_t w = atomic_exchange_explicit(&plx_shm.my_seg->guest_waiters, 0, memory_order_seq_cst);
    for (; w; w &= w - 1) {
        struct plx_shm_guest_slot *g = &plx_shm.my_seg->guest[__builtin_ctzll(w)];
        if (!(atomic_load_explicit(&g->word, memory_order_acquire) & 1))
            continue;
        struct plx_shm_peer q;
        plx_shm_bell_addr(g->job_key, g->wrank, &q.bell, &q.bell_len);
        plx_shm_ring_bell(&q);
    }
}

/* A record in our queue not sealed by a rank of this node (from the poll loop). */
static __attribute__((noinline, cold)) void plx_shm_guest_rec(const struct plx_hdr *h, int from)
{
    uint32_t f = (uint32_t)from, k = f & 0xff, gen = (f >> 8) & PLX_SHM_GUEST_GEN;
    if (!(f & PLX_SHM_GUEST_FROM) || k >= PLX_SHM_GUESTS) {
        plx_warn("shm: a record from rank %d, not of this node (ignored)", from);
        return;
    }
    plx_shm.guests = 1;
    if (plx_shm.pend)
        plx_shm_guest_pending();
    plx_shm_guest_wake_waiters();
    struct plx_shm_guest_slot *g = &plx_shm.my_seg->guest[k];
    uint64_t w = atomic_load_explicit(&g->word, memory_order_acquire);
    if (!(w & 1) || ((uint32_t)(w >> 1) & PLX_SHM_GUEST_GEN) != gen) {
        plx_debug(2, "shm: a record of a former writer of guest slot %u (gen %u; ignored)", k, gen);
        return;
    }
    uint64_t gid[2] = { g->job_key, (uint64_t)(uint32_t)g->wrank };
    if (h->type == PLX_SHM_PKT_BYE)    /* its last record: the slot is free for the next claimer */
        atomic_store_explicit(&g->word, (uint64_t)gen << 1, memory_order_release);
    int lpid = -1;
    if (plx_shm.guest_lpid[k].gen == gen && plx_shm.guest_lpid[k].lpid > 0)
        lpid = plx_shm.guest_lpid[k].lpid;
    else if ((lpid = plx_shm_guest_lpid(gid)) > 0) {
        plx_shm.guest_lpid[k].gen = gen;
        plx_shm.guest_lpid[k].lpid = lpid;
    }
    if (h->type == PLX_SHM_PKT_BYE)
        plx_shm.guest_lpid[k].lpid = 0;
    if (lpid > 0) {                    /* none of its records waits aside: those were delivered above */
        plx_shm_guest_deliver(lpid, h, h + 1);
        return;
    }
    struct plx_shm_pend *e = plx_malloc(sizeof *e + h->len);
    e->next = NULL;
    e->gid[0] = gid[0];
    e->gid[1] = gid[1];
    memcpy(&e->h, h, sizeof *h + h->len);
    if (!plx_shm.pend)
        plx_shm.pend_tail = &plx_shm.pend;
    *plx_shm.pend_tail = e;
    plx_shm.pend_tail = &e->next;
    plx_debug(2, "shm: a record of a process of another job not added yet (job key %016llx, rank %d) waits",
              (unsigned long long)gid[0], (int)gid[1]);
}

/* Guests we talk to that have died without a BYE are failed peers. Not
 * while our queue holds records: those a writer left before it died come
 * first. */
static void plx_shm_guest_watch(void)
{
    uint8_t *rec = plx_shm.queue.data + (plx_shm.queue.tail & (plx_shm.queue.size - 1));
    if (atomic_load_explicit((_Atomic uint64_t *)rec, memory_order_acquire) != 0)
        return;
    for (int l = plx_procs.n; l < plx_shm.npeer_of; l++) {
        struct plx_shm_peer *p = plx_shm.peer_of[l];
        pid_t pid = plx_procs.p[l].pid;
        if (!p || !p->watch || p->bye || pid <= 0 || kill(pid, 0) == 0 || errno != ESRCH)
            continue;
        p->watch = 0;
        char why[400];
        snprintf(why, sizeof why, "rank %d of job %s (pid %d, this host, reached by shared memory) has died",
                 plx_procs.p[l].wrank, plx_procs.jobs[plx_procs.p[l].job - 1].name, (int)pid);
        plx_debug(1, "shm: %s", why);
        plx_shm.up->peer_failed(l, why);
    }
}

/* From the progress engine's idle stretches and after its sleeps. */
static __attribute__((noinline, cold)) void plx_shm_guest_idle(int slept)
{
    if (plx_shm.pend)
        plx_shm_guest_pending();
    plx_shm_guest_wake_waiters();
    if (slept || ++plx_shm.watch_n >= PLX_SHM_WATCH_EVERY) {
        plx_shm.watch_n = 0;
        plx_shm_guest_watch();
    }
}

static int plx_shm_card(char *buf, size_t len)
{
    if (!plx_shm.by_fd || plx_shm.singleton || plx_shm.seg_fd < 0)
        return -1;                     /* other jobs reach us over TCP */
    int w = snprintf(buf, len, "%d.%d", (int)getpid(), plx_shm.seg_fd);
    return w > 0 && (size_t)w < len ? 0 : -1;
}

static plx_status_t plx_shm_add_peers(int ntotal)
{
    if (!plx_shm.peer_of || ntotal <= plx_shm.npeer_of)
        return PLX_OK;
    plx_shm.peer_of = plx_realloc(plx_shm.peer_of, (size_t)ntotal * sizeof *plx_shm.peer_of);
    memset(plx_shm.peer_of + plx_shm.npeer_of, 0, (size_t)(ntotal - plx_shm.npeer_of) * sizeof *plx_shm.peer_of);
    int from = plx_shm.npeer_of;
    plx_shm.npeer_of = ntotal;
    for (int l = from; l < ntotal; l++)
        if (plx_shm_guest_reaches(&plx_shm_guest_ifc, l))
            plx_shm.guests = 1;
    if (plx_shm.pend && !plx_shm.pend_retry) {    /* not from here: the layers above grow after us */
        plx_shm.pend_retry = 1;
        plx_shm.nending++;
    }
    return PLX_OK;
}

/* Our last record to p: a BYE (p frees our slot on reading it). 0 while p's queue is full. */
static int plx_shm_guest_bye(struct plx_shm_peer *p)
{
    if (!p->seg || !p->guest_slot || p->gone)
        return 1;
    struct plx_hdr bh = { .type = PLX_SHM_PKT_BYE };
    if (plx_shmq_write(&p->queue, (int)plx_shm_guest_from(p), &bh, NULL, 0) != PLX_OK) {
        plx_shm_guest_want_room(p);
        return 0;
    }
    p->guest_slot = 0;
    plx_shm_wake(p);
    return 1;
}

/* MPI_Comm_disconnect: BYE, unmap its segment, forget it (a later meeting
 * starts afresh). Its own records are read until its BYE. */
static int plx_shm_drop_peer(int lpid)
{
    if (lpid < plx_procs.n || lpid >= plx_shm.npeer_of || !plx_shm.peer_of[lpid])
        return 1;
    struct plx_shm_peer *p = plx_shm.peer_of[lpid];
    if (!plx_shm_guest_bye(p))
        return 0;
    if (p->seg) {
        for (int i = 0; i < plx_shm.nmapped; i++)
            if (plx_shm.mapped[i] == p) {
                plx_shm.mapped[i] = plx_shm.mapped[--plx_shm.nmapped];
                break;
            }
        munmap(p->seg, plx_shm.seg_size);
    }
    plx_shm.peer_of[lpid] = NULL;
    free(p);
    return 1;
}

/* MPI_Finalize: a BYE to every process of another job that may watch us
 * (we wrote to it or it to us), so that our exit is no failure to it. A
 * full queue is waited for up to a second. */
static void plx_shm_guest_finalize(void)
{
    for (int l = plx_procs.n; l < plx_shm.npeer_of; l++) {
        struct plx_shm_peer *p = plx_shm.peer_of[l];
        if (!p || (!p->guest_slot && !p->watch) || p->bye)
            continue;
        if ((!p->seg && plx_shm_peer_map(p) != PLX_OK) || (!p->guest_slot && plx_shm_guest_claim(p) != PLX_OK))
            continue;
        for (int i = 0; i < 1000 && !plx_shm_guest_bye(p); i++)
            usleep(1000);
    }
    if (plx_config.stats && (plx_shm.st_guest_in || plx_shm.st_guest_out))
        plx_warn("stats: shm: %llu records from and %llu to processes of other jobs (%d such processes wrote to us)",
                 (unsigned long long)plx_shm.st_guest_in, (unsigned long long)plx_shm.st_guest_out,
                 plx_shm.st_guests);
    while (plx_shm.pend) {
        struct plx_shm_pend *e = plx_shm.pend;
        plx_shm.pend = e->next;
        free(e);
    }
}

static const struct plx_tp_ops plx_shm_guest_ops = {
    .reaches = plx_shm_guest_reaches,
    .send = plx_shm_guest_send,
    .read_remote = plx_shm_guest_read_remote,
    .copy_remote = plx_shm_copy_remote,
};

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
    uint64_t maxp = PLX_MIN(plx_ring_max_payload(plx_shm.ring_size), plx_shmq_max_payload(plx_shm.queue_size));
    ifc->caps = (struct plx_tp_caps){
        .max_packet = sizeof(struct plx_hdr) + maxp,
        .max_iov = 64,
        /* PLEXUS_SHM_EAGER_MAX, default 12K. Which protocol is faster at
         * 8-16K depends on where the data is: a rendezvous read of a buffer
         * that the sender has just written pulls each dirty line from the
         * other core inside the kernel's copy (NetPIPE, one buffer: 8195 B
         * took 2.6 us against MPICH's 1.7), while a buffer that neither side
         * writes is read from the reader's own cache (1.25 us; eager 1.7).
         * 12K sits between the two crossovers (~4K clean, ~24K dirty) and
         * leaves 16K, where the clean case loses 2x by eager, a read. */
        .eager_max = plx_config.shm_eager_max,
        .eager_credit = plx_config.shm_eager_credit,
        .flags = PLX_TP_ORDERED | PLX_TP_RELIABLE | PLX_TP_FATE_SHARED | PLX_TP_READ,
        .latency_class = 0,
        .bw_class = 2,
    };
    ifcs[0] = ifc;
    *n = max > 0;
    /* Processes of other jobs on this host get an instance of their own
     * ("shm_jobs"), so that the same job's send and reaches stay as they
     * are: it exists when our segment can be taken by descriptor (the card
     * we give other jobs), and reaches an added process only when its card
     * has a shm part too (plx_shm_guest_reaches). */
    if (plx_shm.by_fd && !plx_shm.singleton && max > 1) {
        struct plx_tp_iface *g = &plx_shm_guest_ifc;
        *g = *ifc;
        g->ops = &plx_shm_guest_ops;
        g->rail = 1;
        snprintf(g->name, sizeof g->name, "shm_jobs");
        snprintf(g->detail, sizeof g->detail, "processes of other jobs on this host");
        ifcs[1] = g;
        *n = 2;
    }
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
    .init_early = plx_shm_init_early,
    .open = plx_shm_open,
    .poll = plx_shm_poll,
    .sleep_prepare = plx_shm_sleep_prepare,
    .sleep_done = plx_shm_sleep_done,
    .cpu_shared = plx_shm_cpu_shared,
    .finalize = plx_shm_finalize,
    .card = plx_shm_card,
    .add_peers = plx_shm_add_peers,
    .drop_peer = plx_shm_drop_peer,
};
