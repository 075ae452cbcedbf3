/*
 * Node-local collectives through a shared segment (see shmcoll.h).
 *
 * Segment: five cache lines per rank (flags, a line per set for small data
 * with its own flag, and a second line per set for a Bcast of up to twice
 * that), then two sets of p data slots
 * (PLX_SHMC_SLOT(p) bytes each). Operation k on a communicator uses set
 * k % 2; a large collective is cut into chunks that each count as one
 * operation, so consecutive chunks alternate sets and pipeline. Each rank's
 * flags:
 *   ready[set]  = k   its data for operation k is in its slot of that set
 *   line[set].seq = k its data for operation k (<= PLX_SHMC_INLINE bytes)
 *                     is in its line of that set
 *   red[set]    = k   its share of operation k's reduction is in its slot
 *   part[set]   = PLX_SHMC_PART(k, i)  (Bcast root) the first i pieces of
 *                     operation k's chunk are in
 *   done        = k   it no longer reads anything of operation k
 * A rank writes its slot of set k % 2 only once every rank's done >= k-2
 * (nobody still reads operation k-2's data there); readers wait for the
 * flags they need. Flags only grow, stores release and loads acquire.
 *
 *   barrier    ready = k; wait everyone's ready >= k. When ranks outnumber
 *              CPUs: the others set ready and wait for rank 0's; rank 0
 *              waits for all, then sets its own (rank 0 leaves first)
 *   bcast      (not at 2 ranks above the eager limit) root packs a chunk of
 *              up to p slots (the whole set: only the root writes) piece by
 *              piece, publishing each (part); the others unpack each piece
 *              as it comes, so their copies overlap the root's
 *   (all)reduce, small (<= PLEXUS_COLL_SHM_MAX bytes): everyone copies its
 *              contribution in and sets ready; the root (everyone, for
 *              allreduce) folds all slots in rank order: one round, the
 *              lowest latency
 *   (all)reduce, large (contiguous types): per chunk of up to one slot,
 *              everyone copies its chunk in (ready); rank j folds share j of
 *              the chunk across all slots, in rank order, into share j of its
 *              own slot (red); then everyone (the root, for reduce) copies
 *              every share out: a reduce-scatter and an allgather through
 *              memory, so the reduction work is split p ways and no data
 *              moves through messages (no rendezvous handshakes)
 *   allgather  (not at 2 ranks above the eager limit) per chunk, everyone packs its block's next piece into its
 *              slot (ready); everyone unpacks all pieces
 *   alltoall   (blocks up to the shared-memory eager limit) per chunk,
 *              everyone packs the next piece of each of its p blocks into its
 *              slot (slot/p bytes per peer; ready); everyone unpacks its own
 *              piece from every slot
 *
 * Why not messages for large data: on one node a message costs the same
 * copies plus matching and, above the eager limit, a rendezvous round trip
 * per message; measured at 2 ranks, 64K-1M allreduce went from 1.2-1.4x
 * Open MPI's time over messages to below it through the segment.
 *
 * Waiting polls the flags, keeps the progress engine turning (other
 * requests still move) and yields the CPU after PLEXUS_SPIN_COUNT polls; it
 * never sleeps, since no doorbell announces a flag.
 */
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "coll/coll.h"
#include "coll/shmcoll.h"
#include "core/config.h"
#include "core/log.h"
#include "core/lock.h"
#include "core/request.h"
#include "core/runtime.h"
#include "progress/progress.h"

#define PLX_SHMC_MAXP 64            /* larger communicators use messages */
#define PLX_SHMC_AFTER 3            /* the segment is made on this eligible call */
#define PLX_SHMC_TAG PLX_COLL_TAG_SHM

/* Slot size: the small one-shot path needs PLEXUS_COLL_SHM_MAX; chunks of
 * large collectives want big slots (fewer rounds), but the segment is
 * 2 * p slots (every communicator used for collectives on a node has one,
 * in /dev/shm), so they shrink with p to keep its data at 1 MiB at most:
 * 256K per slot at p = 2, 128K at 4, 64K at 8, 8K at 64. Measured at 2
 * ranks, Allreduce of 128K-256K: 33-34 / 76-80 us with 128K slots, 44-46 /
 * 87-89 with 64K; of 256K / 512K / 1M: 68-72 / 124-144 / 279-309 us with
 * 128K slots, 59-70 / 114-122 / 261-268 with 256K (Open MPI 60 / 113 / 285). */
#define PLX_SHMC_SEG_DATA (1u << 20)
/* A Bcast chunk is published in pieces of this size; part[] words count
 * them below the operation number (2^24 pieces, 2^40 operations). */
#define PLX_SHMC_PIECE (8u << 10)
#define PLX_SHMC_PART(k, i) ((uint64_t)(k) << 24 | (uint64_t)(i))
#define PLX_SHMC_SLOT_MAX (256u << 10)

/* Data of up to PLX_SHMC_INLINE bytes travels with its flag: one cache line
 * holds both, so a reader's one miss brings the data too (through a slot it
 * is a miss on the flag, then one on the slot, and the writer first takes
 * both lines back). `seq` = k: the data of operation k is in. */
#define PLX_SHMC_INLINE 56
struct plx_shmc_line {
    char data[PLX_SHMC_INLINE];     /* first: aligned to the line, for any element type */
    uint64_t seq;
};

struct plx_shmc_flags {
    uint64_t ready[2];
    uint64_t red[2];
    uint64_t done;
    uint64_t part[2];           /* PLX_SHMC_PART(k, i): Bcast root, pieces 0..i-1 of operation k are in */
    int32_t cpu;                /* where this rank last ran (sched_getcpu), -1 unknown */
    char pad[PLX_CACHELINE - 7 * sizeof(uint64_t) - sizeof(int32_t)];
    struct plx_shmc_line line[2];   /* per set, written by this rank only */
    struct plx_shmc_line line2[2];  /* per set: a Bcast root's bytes PLX_SHMC_INLINE.. of up to twice that */
};
_Static_assert(sizeof(struct plx_shmc_flags) == 5 * PLX_CACHELINE,
               "flags, line[0], line[1], line2[0], line2[1]: a cache line each");

struct plx_shmc {
    int local;                  /* every rank on this node */
    int calls;                  /* eligible calls before the segment exists */
    int state;                  /* 0 not made yet, 1 usable, -1 never */
    uint64_t seq;               /* operations done through the segment */
    uint64_t done_known;        /* every rank's done has been seen >= this */
    size_t slot;
    void *base;
    size_t len;
    struct plx_shmc_flags *flags;
    char *data;
};

static void plx_shmc_unmap(struct plx_shmc *s)
{
    if (s->base)
        munmap(s->base, s->len);
    s->base = NULL;
}

static int plx_shmc_delete_fn(MPI_Comm comm, int keyval, void *val, void *extra)
{
    plx_shmc_unmap(val);
    free(val);
    return MPI_SUCCESS;
}

static struct plx_keyval *plx_shmc_keyval(void)
{
    static struct plx_keyval *kv;
    if (!kv) {
        /* no copy function: a duplicate makes its own segment */
        kv = plx_keyval_new(PLX_KEYVAL_COMM, NULL, plx_shmc_delete_fn, NULL);
        kv->freed = 1;          /* invisible to the attribute calls */
        kv->obj.refcount++;
    }
    return kv;
}

static struct plx_shmc *plx_shmc_of(struct plx_comm *c)
{
    struct plx_keyval *kv = plx_shmc_keyval();
    struct plx_attr *a = plx_attr_find(c->attrs, kv);
    if (a)
        return a->value;
    struct plx_shmc *s = plx_calloc(1, sizeof *s);
    s->local = c->size >= 2 && c->size <= PLX_SHMC_MAXP;
    for (int i = 0; s->local && i < c->size; i++)
        s->local = plx_procs.p[c->lpids[i]].node_id == plx_procs.my_node;
    if (!s->local)
        s->state = -1;
    plx_attr_set(&c->attrs, c->obj.handle, kv, s);
    return s;
}

/* Collective over c: rank 0 creates and sizes the segment, the others map
 * it, then it is unlinked (it lives while mapped). */
static void plx_shmc_setup(struct plx_comm *c, struct plx_shmc *s)
{
    static unsigned serial;
    int p = c->size;
    size_t big = PLX_MIN((size_t)PLX_SHMC_SLOT_MAX, (size_t)PLX_SHMC_SEG_DATA / (2 * (size_t)p));
    s->slot = PLX_ALIGN_UP(PLX_MAX(plx_config.coll_shm_max, PLX_MAX(big, (size_t)64)), PLX_CACHELINE);
    s->len = (size_t)p * sizeof(struct plx_shmc_flags) + 2 * (size_t)p * s->slot;
    char name[128] = "";
    int fd = -1;
    if (c->rank == 0) {
        snprintf(name, sizeof name, "/plx-coll-%.48s-%d-%d-%u", plx_procs.kvsname, plx_procs.my_lpid,
                 c->context_id, serial++);
        fd = shm_open(name, O_CREAT | O_EXCL | O_RDWR, 0600);
        if (fd >= 0 && posix_fallocate(fd, 0, (off_t)s->len) != 0) {
            close(fd);
            shm_unlink(name);
            fd = -1;
        }
        if (fd < 0) {
            plx_debug(1, "collectives: no shared segment for a %d-rank communicator (%s); using messages", p,
                      name);
            name[0] = 0;
        }
    }
    uint64_t ok = 0;
    if (plx_coll_bcast(name, sizeof name, 0, c, PLX_SHMC_TAG) == PLX_OK && name[0]) {
        if (c->rank != 0)
            fd = shm_open(name, O_RDWR, 0600);
        if (fd >= 0) {
            void *m = mmap(NULL, s->len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
            if (m != MAP_FAILED) {
                s->base = m;
                ok = 1;
                /* before the agreement below, so every rank sees a real CPU */
                ((struct plx_shmc_flags *)m)[c->rank].cpu = sched_getcpu();
            }
            close(fd);
        }
    }
    if (plx_coll_allreduce_u64(&ok, 1, PLX_COLL_BAND, c, PLX_SHMC_TAG) != PLX_OK)
        ok = 0;
    if (c->rank == 0 && name[0])
        shm_unlink(name);
    if (!ok) {
        plx_shmc_unmap(s);
        s->state = -1;
        return;
    }
    s->flags = s->base;
    s->data = (char *)s->base + (size_t)p * sizeof(struct plx_shmc_flags);
    s->state = 1;
}

/* The segment of c when this call may use it. */
static struct plx_shmc *plx_shmc_get(struct plx_comm *c)
{
    if (!plx_config.coll_shm || c->size < 2 || c->size > PLX_SHMC_MAXP)
        return NULL;
    struct plx_shmc *s = plx_shmc_of(c);
    if (s->state == 0 && ++s->calls >= PLX_SHMC_AFTER)
        plx_shmc_setup(c, s);
    return s->state == 1 ? s : NULL;
}

static inline void plx_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

/* Publishes the CPU this rank runs on, for peers deciding how to wait. */
static inline int plx_shmc_note_cpu(struct plx_shmc *s, int r)
{
    int cpu = sched_getcpu();
    /* the line holds the flags peers poll: write it only on a change */
    if (__atomic_load_n(&s->flags[r].cpu, __ATOMIC_RELAXED) != cpu)
        __atomic_store_n(&s->flags[r].cpu, cpu, __ATOMIC_RELAXED);
    return cpu;
}

/* Until *f >= want, set by rank `peer`. Spins PLEXUS_SPIN_COUNT polls, then
 * yields between polls, except that a peer last seen on this rank's own CPU
 * cannot make progress while we spin: then yield at once. That case is
 * common on a busy machine even with no more ranks than cores (the
 * scheduler packs two ranks that often yield onto one CPU): measured with
 * both of 2 ranks pinned to one CPU, a 64-byte Allreduce took 35 us (one
 * spin window per hand-off) before this rule and 1 us with it; Open MPI
 * and MPICH, which never yield there, took 4-8 ms. */
static void plx_shmc_wait(struct plx_comm *c, struct plx_shmc *s, const uint64_t *f, uint64_t want, int peer)
{
    int n = 0;
    int cpu = -2;
    while (__atomic_load_n(f, __ATOMIC_ACQUIRE) < want) {
        if ((++n & 15) == 0) {
            plx_progress_poll();
            plx_lock_relax();   /* other threads may need MPI for the peers to arrive */
            if (plx_unlikely(plx_progress_dump_requested)) {
                plx_progress_dump_requested = 0;
                plx_request_dump_pending();
                plx_warn("  waiting in a shared-memory collective on %s for rank %d (operation %llu)",
                         c->name[0] ? c->name : "(unnamed)", peer, (unsigned long long)want);
            }
        }
        if (cpu == -2)
            cpu = plx_shmc_note_cpu(s, c->rank);
        if (n > plx_config.spin_count || (cpu >= 0 && __atomic_load_n(&s->flags[peer].cpu, __ATOMIC_RELAXED) == cpu)) {
            sched_yield();
            cpu = plx_shmc_note_cpu(s, c->rank);    /* we may have moved */
        } else {
            plx_cpu_relax();
        }
    }
}

static inline char *plx_shmc_slot(struct plx_shmc *s, int p, uint64_t k, int r)
{
    return s->data + ((size_t)(k % 2) * (size_t)p + (size_t)r) * s->slot;
}

/* Before writing anything of operation k: nobody still reads operation
 * k-2. What a rank has seen of the others' flags often says so already
 * (plx_shmc_saw_all), which saves a miss on every peer's flag line. */
static void plx_shmc_wait_all_done(struct plx_comm *c, struct plx_shmc *s, uint64_t k)
{
    if (k <= 2 || k - 2 <= s->done_known)
        return;
    uint64_t lo = UINT64_MAX;
    for (int j = 0; j < c->size; j++) {
        plx_shmc_wait(c, s, &s->flags[j].done, k - 2, j);
        lo = PLX_MIN(lo, __atomic_load_n(&s->flags[j].done, __ATOMIC_RELAXED));
    }
    s->done_known = lo;
}

/* This rank has seen every rank's data (or arrival) of operation k: each
 * had set done = k-1 before it published that, so all done >= k-1. */
static inline void plx_shmc_saw_all(struct plx_shmc *s, uint64_t k)
{
    if (k - 1 > s->done_known)
        s->done_known = k - 1;
}

/* Where rank r's data of operation k is, and the word that says it is
 * there: for small data (inl) its line, else its slot and ready flag. */
static inline char *plx_shmc_in(struct plx_shmc *s, int p, uint64_t k, int r, int inl)
{
    return inl ? s->flags[r].line[k % 2].data : plx_shmc_slot(s, p, k, r);
}

static inline uint64_t *plx_shmc_flag(struct plx_shmc *s, uint64_t k, int r, int inl)
{
    return inl ? &s->flags[r].line[k % 2].seq : &s->flags[r].ready[k % 2];
}

/* len bytes of (buf, count, dt)'s packed form from offset off, to `to` and
 * back from `from`: a plain copy for a contiguous type. */
static inline void plx_shmc_pack(const void *buf, MPI_Aint count, const struct plx_datatype *dt, size_t off,
                                 void *to, size_t len)
{
    if (dt->contig)
        memcpy(to, (const char *)buf + dt->true_lb + off, len);
    else
        plx_dt_pack_range(buf, count, dt, off, to, len);
}

static inline void plx_shmc_unpack(const void *from, size_t len, void *buf, MPI_Aint count,
                                   const struct plx_datatype *dt, size_t off)
{
    if (dt->contig)
        memcpy((char *)buf + dt->true_lb + off, from, len);
    else
        plx_dt_unpack_range(from, len, buf, count, dt, off);
}

/* Through the segment every byte is copied twice (in, then out); a message
 * above the eager limit is copied once (the receiver reads the sender's
 * buffer). That single copy wins when each rank's data goes to one reader
 * only: Bcast and Allgather at 2 ranks, Alltoall at any size (max_p: the
 * largest communicator where this holds). Measured at 2 ranks: Bcast of
 * 64K-128K 5-7 us by messages against 11-22 us through the segment;
 * Allgather of 16K-512K 3.6-76 us against 4.5-100 us (the reader of a slot
 * pulls lines its peer has just written, still dirty in the peer's cache;
 * a message reads the caller's sbuf); Alltoall of 64K-1M per peer 6.5-184
 * us against 13-398 us (at 8 ranks, 32K: 113 against 172 us). With more
 * readers (Bcast at 8 ranks) the segment is 3-15x faster at 8K-1M. */
static int plx_shmc_single_copy_wins(const struct plx_comm *c, size_t n, int max_p)
{
    return c->size <= max_p && n > plx_config.shm_eager_max;
}

/* Only the byte count decides: ranks may pass different datatypes of the
 * same signature (a vector at the root, plain ints elsewhere), so slots hold
 * packed bytes and each rank packs or unpacks with its own type. */
static int plx_shmc_small(const struct plx_datatype *dt, MPI_Aint count)
{
    size_t n = (size_t)count * (size_t)dt->size;
    return n > 0 && n <= plx_config.coll_shm_max;
}

/* Everyone waits for everyone: one hand-off, the last to arrive releases
 * all. With more ranks than CPUs, though, that last rank is often not rank
 * 0, and what follows a barrier is most often led by rank 0 (the root of a
 * Bcast, Reduce, Gather ...); the ranks released first then wait for rank 0
 * to get a CPU. So there rank 0 releases the others once all have arrived:
 * it is on a CPU when they leave and runs its part first. Measured at 4
 * ranks on 2 cores: Barrier + 1-4K Bcast from rank 0, 1.3-2.2 us per Bcast
 * with the flat barrier and 0.17-0.25 us with this one (Open MPI 0.4); the
 * Barrier itself 2.1-2.6 us -> 3.7-4.9 us (Open MPI 4.9). At 2 ranks both
 * are one hand-off and the flat one keeps its lower latency. The choice is
 * the same on every rank of the node (plx_coll_node_oversubscribed). */
int plx_shmcoll_barrier(struct plx_comm *c)
{
    struct plx_shmc *s = plx_shmc_get(c);
    if (!s)
        return 0;
    uint64_t k = ++s->seq;
    int set = (int)(k % 2);
    if (c->size > 2 && plx_coll_node_oversubscribed()) {
        /* rank 0 arrives last: it sets ready once all others have */
        if (c->rank == 0) {
            for (int j = 1; j < c->size; j++)
                plx_shmc_wait(c, s, &s->flags[j].ready[set], k, j);
            __atomic_store_n(&s->flags[0].ready[set], k, __ATOMIC_RELEASE);
        } else {
            __atomic_store_n(&s->flags[c->rank].ready[set], k, __ATOMIC_RELEASE);
            plx_shmc_wait(c, s, &s->flags[0].ready[set], k, 0);
        }
    } else {
        __atomic_store_n(&s->flags[c->rank].ready[set], k, __ATOMIC_RELEASE);
        for (int j = 0; j < c->size; j++)
            plx_shmc_wait(c, s, &s->flags[j].ready[set], k, j);
    }
    plx_shmc_saw_all(s, k);     /* (rank 0's ready above says all had arrived) */
    __atomic_store_n(&s->flags[c->rank].done, k, __ATOMIC_RELEASE);
    return 1;
}

/* Any size and datatype: chunks of a whole set (p slots, contiguous in the
 * segment), packed by the root with its type and unpacked with each rank's;
 * up to PLX_SHMC_INLINE bytes in the root's line instead. A chunk is
 * published in pieces: a reader copies piece i while the root writes i+1,
 * instead of every reader waiting for the whole chunk. Measured with 4
 * ranks on 2 CPUs, 32K-128K: 1.05-1.26x Open MPI's time with whole chunks,
 * 0.95-1.04x with 16K pieces, 0.72-0.84x with 8K (32K pieces: 0.72-0.90x);
 * 8 ranks 32K-512K: 0.42-0.74x -> 0.26-0.31x with 8K pieces. */
int plx_shmcoll_bcast(struct plx_comm *c, void *buf, MPI_Aint count, struct plx_datatype *dt, int root)
{
    size_t n = (size_t)count * (size_t)dt->size;
    if (n == 0 || plx_shmc_single_copy_wins(c, n, 2))
        return 0;
    struct plx_shmc *s = plx_shmc_get(c);
    if (!s)
        return 0;
    int p = c->size, inl = n <= PLX_SHMC_INLINE;
    if (n > PLX_SHMC_INLINE && n <= 2 * PLX_SHMC_INLINE) {
        /* Two lines of the root, each with its own seq: a reader waits for
         * both at once, one miss's time, where a slot costs a miss on the
         * flag and then one on the data (2 ranks, 64 B: 0.28-0.30 us a
         * Bcast against 0.14-0.19 at 32 B; MPICH 0.24, issue 15). */
        uint64_t k = ++s->seq;
        struct plx_shmc_line *a = &s->flags[root].line[k % 2], *b = &s->flags[root].line2[k % 2];
        if (c->rank == root) {
            plx_shmc_wait_all_done(c, s, k);
            plx_shmc_pack(buf, count, dt, 0, a->data, PLX_SHMC_INLINE);
            plx_shmc_pack(buf, count, dt, PLX_SHMC_INLINE, b->data, n - PLX_SHMC_INLINE);
            __atomic_store_n(&b->seq, k, __ATOMIC_RELEASE);
            __atomic_store_n(&a->seq, k, __ATOMIC_RELEASE);
        } else {
            /* both lines polled in each turn (no short circuit), so both
             * misses are in flight together; a is stored last, so once it
             * is in, b is too: the long wait (progress, yielding) is on a */
            for (int spins = 0;; spins++) {
                uint64_t sa = __atomic_load_n(&a->seq, __ATOMIC_ACQUIRE);
                uint64_t sb = __atomic_load_n(&b->seq, __ATOMIC_ACQUIRE);
                if (sa >= k && sb >= k)
                    break;
                if (spins == 64) {
                    plx_shmc_wait(c, s, &a->seq, k, root);
                    break;
                }
            }
            plx_shmc_unpack(a->data, PLX_SHMC_INLINE, buf, count, dt, 0);
            plx_shmc_unpack(b->data, n - PLX_SHMC_INLINE, buf, count, dt, PLX_SHMC_INLINE);
        }
        __atomic_store_n(&s->flags[c->rank].done, k, __ATOMIC_RELEASE);
        return 1;
    }
    size_t chunk = (size_t)p * s->slot;
    for (size_t off = 0; off < n; off += chunk) {
        uint64_t k = ++s->seq;
        size_t len = PLX_MIN(chunk, n - off);
        char *area = inl ? plx_shmc_in(s, p, k, root, 1) : plx_shmc_slot(s, p, k, 0);
        uint64_t *flag = plx_shmc_flag(s, k, root, inl);
        if (inl) {
            if (c->rank == root) {
                plx_shmc_wait_all_done(c, s, k);
                plx_shmc_pack(buf, count, dt, 0, area, len);
                __atomic_store_n(flag, k, __ATOMIC_RELEASE);
            } else {
                plx_shmc_wait(c, s, flag, k, root);
                plx_shmc_unpack(area, len, buf, count, dt, 0);
            }
            __atomic_store_n(&s->flags[c->rank].done, k, __ATOMIC_RELEASE);
            continue;
        }
        uint64_t *part = &s->flags[root].part[k % 2];
        if (c->rank == root)
            plx_shmc_wait_all_done(c, s, k);
        for (size_t at = 0, i = 1; at < len; at += PLX_SHMC_PIECE, i++) {
            size_t m = PLX_MIN((size_t)PLX_SHMC_PIECE, len - at);
            if (c->rank == root) {
                plx_shmc_pack(buf, count, dt, off + at, area + at, m);
                __atomic_store_n(part, PLX_SHMC_PART(k, i), __ATOMIC_RELEASE);
            } else {
                plx_shmc_wait(c, s, part, PLX_SHMC_PART(k, i), root);
                plx_shmc_unpack(area + at, m, buf, count, dt, off + at);
            }
        }
        __atomic_store_n(&s->flags[c->rank].done, k, __ATOMIC_RELEASE);
    }
    return 1;
}

/* One round: every rank's whole contribution in its slot (its line when
 * small enough), folded by the root (everyone, for allreduce). */
static void plx_shmc_reduce_small(struct plx_comm *c, struct plx_shmc *s, const void *sbuf, void *rbuf,
                                  MPI_Aint count, struct plx_datatype *dt, struct plx_op *op, int root)
{
    uint64_t k = ++s->seq;
    int p = c->size, r = c->rank;
    size_t n = (size_t)count * (size_t)dt->size;
    int inl = n <= PLX_SHMC_INLINE;
    plx_shmc_wait_all_done(c, s, k);
    plx_dt_pack(sbuf == MPI_IN_PLACE ? rbuf : sbuf, count, dt, plx_shmc_in(s, p, k, r, inl));
    __atomic_store_n(plx_shmc_flag(s, k, r, inl), k, __ATOMIC_RELEASE);
    if (root < 0 || r == root) {
        for (int j = 0; j < p; j++)
            plx_shmc_wait(c, s, plx_shmc_flag(s, k, j, inl), k, j);
        plx_shmc_saw_all(s, k);
        /* rbuf = s_0 op (s_1 op (... op s_{p-1})): a right fold keeps rank order */
        plx_dt_unpack(plx_shmc_in(s, p, k, p - 1, inl), n, rbuf, dt);
        if (dt->contig) {       /* packed is the user layout shifted by true_lb */
            for (int j = p - 2; j >= 0; j--)
                plx_op_reduce(op, plx_shmc_in(s, p, k, j, inl) - dt->true_lb, rbuf, count, dt);
        } else {
            /* a buffer laid out like the user's (as plx_sched_alloc_layout) */
            MPI_Aint last = (count - 1) * dt->extent;
            MPI_Aint lo = PLX_MIN(dt->true_lb, dt->lb) + PLX_MIN(0, last);
            MPI_Aint hi = PLX_MAX(dt->true_lb + dt->true_extent, dt->lb + dt->extent) + PLX_MAX(0, last);
            char *tmp = plx_malloc((size_t)(hi - lo));
            char *origin = tmp - lo;
            for (int j = p - 2; j >= 0; j--) {
                plx_dt_unpack(plx_shmc_in(s, p, k, j, inl), n, origin, dt);
                plx_op_reduce(op, origin, rbuf, count, dt);
            }
            free(tmp);
        }
    }
    __atomic_store_n(&s->flags[r].done, k, __ATOMIC_RELEASE);
}

/* First element of share j when m elements are split p ways. */
static inline MPI_Aint plx_shmc_share(MPI_Aint m, int j, int p)
{
    return m * j / p;
}

/* Chunks of up to one slot (contiguous types: element i of the chunk is at
 * slot + i * size in every slot). Rank j reduces share j of the chunk into
 * share j of its own slot, reading its own contribution from its buffer
 * (its slot's share j is the accumulator), so its slot's share j is never
 * copied in. */
static void plx_shmc_reduce_large(struct plx_comm *c, struct plx_shmc *s, const void *sbuf, void *rbuf,
                                  MPI_Aint count, struct plx_datatype *dt, struct plx_op *op, int root)
{
    int p = c->size, r = c->rank;
    size_t esz = (size_t)dt->size;
    MPI_Aint per = (MPI_Aint)(s->slot / esz);
    const char *in = (const char *)(sbuf == MPI_IN_PLACE ? rbuf : sbuf) + dt->true_lb;
    char *out = root < 0 || r == root ? (char *)rbuf + dt->true_lb : NULL;  /* rbuf: only where results go */
    for (MPI_Aint first = 0; first < count; first += per) {
        MPI_Aint m = PLX_MIN(per, count - first);
        uint64_t k = ++s->seq;
        int set = (int)(k % 2);
        const char *src = in + (size_t)first * esz;
        char *mine = plx_shmc_slot(s, p, k, r);
        MPI_Aint lo = plx_shmc_share(m, r, p), hi = plx_shmc_share(m, r + 1, p);
        plx_shmc_wait_all_done(c, s, k);
        /* copy in all but my own share */
        memcpy(mine, src, (size_t)lo * esz);
        memcpy(mine + (size_t)hi * esz, src + (size_t)hi * esz, (size_t)(m - hi) * esz);
        __atomic_store_n(&s->flags[r].ready[set], k, __ATOMIC_RELEASE);
        if (hi > lo) {
            /* share = s_0 op (s_1 op (... op s_{p-1})), in rank order */
            size_t off = (size_t)lo * esz, len = (size_t)(hi - lo) * esz;
            char *acc = mine + off;
            plx_shmc_wait(c, s, &s->flags[p - 1].ready[set], k, p - 1);
            if (r != p - 1)
                memcpy(acc, plx_shmc_slot(s, p, k, p - 1) + off, len);
            else
                memcpy(acc, src + off, len);
            for (int j = p - 2; j >= 0; j--) {
                const char *sj = j == r ? src + off : plx_shmc_slot(s, p, k, j) + off;
                if (j != r)
                    plx_shmc_wait(c, s, &s->flags[j].ready[set], k, j);
                plx_op_reduce(op, sj - dt->true_lb, acc - dt->true_lb, hi - lo, dt);
            }
        }
        __atomic_store_n(&s->flags[r].red[set], k, __ATOMIC_RELEASE);
        if (root < 0 || r == root) {
            /* my share first (no wait), then the others as they finish */
            for (int i = 0; i < p; i++) {
                int j = (r + i) % p;
                MPI_Aint jlo = plx_shmc_share(m, j, p), jhi = plx_shmc_share(m, j + 1, p);
                if (jhi == jlo)
                    continue;
                if (j != r)
                    plx_shmc_wait(c, s, &s->flags[j].red[set], k, j);
                memcpy(out + (size_t)(first + jlo) * esz, plx_shmc_slot(s, p, k, j) + (size_t)jlo * esz,
                       (size_t)(jhi - jlo) * esz);
            }
        }
        __atomic_store_n(&s->flags[r].done, k, __ATOMIC_RELEASE);
    }
}

int plx_shmcoll_reduce(struct plx_comm *c, const void *sbuf, void *rbuf, MPI_Aint count, struct plx_datatype *dt,
                       struct plx_op *op, int root)
{
    int small = plx_shmc_small(dt, count);
    /* Large: contiguous types only (shares are byte ranges of the user's
     * buffer); a non-contiguous large reduction uses messages. */
    if (!small && (count == 0 || !dt->contig || dt->size == 0))
        return 0;
    struct plx_shmc *s = plx_shmc_get(c);
    if (!s)
        return 0;
    if (small)
        plx_shmc_reduce_small(c, s, sbuf, rbuf, count, dt, op, root);
    else
        plx_shmc_reduce_large(c, s, sbuf, rbuf, count, dt, op, root);
    return 1;
}

/* Per chunk of up to one slot per rank: every rank packs the next piece of
 * its block, then unpacks every rank's piece into its block of rbuf. Small
 * blocks go through the ranks' lines. */
int plx_shmcoll_allgather(struct plx_comm *c, const void *sbuf, MPI_Aint scount, struct plx_datatype *sdt,
                          void *rbuf, MPI_Aint rcount, struct plx_datatype *rdt)
{
    size_t n = (size_t)rcount * (size_t)rdt->size;
    if (n == 0 || plx_shmc_single_copy_wins(c, n, 2))
        return 0;
    struct plx_shmc *s = plx_shmc_get(c);
    if (!s)
        return 0;
    int p = c->size, r = c->rank, inl = n <= PLX_SHMC_INLINE;
    size_t bext = (size_t)rcount * (size_t)rdt->extent;
    for (size_t off = 0; off < n; off += s->slot) {
        uint64_t k = ++s->seq;
        size_t len = PLX_MIN(s->slot, n - off);
        char *mine = plx_shmc_in(s, p, k, r, inl);
        plx_shmc_wait_all_done(c, s, k);
        if (sbuf == MPI_IN_PLACE)
            plx_dt_pack_range((char *)rbuf + (size_t)r * bext, rcount, rdt, off, mine, len);
        else
            plx_dt_pack_range(sbuf, scount, sdt, off, mine, len);
        __atomic_store_n(plx_shmc_flag(s, k, r, inl), k, __ATOMIC_RELEASE);
        for (int i = 0; i < p; i++) {
            int j = (r + i) % p;
            if (j == r && sbuf == MPI_IN_PLACE)
                continue;
            if (j != r)
                plx_shmc_wait(c, s, plx_shmc_flag(s, k, j, inl), k, j);
            plx_shmc_unpack(plx_shmc_in(s, p, k, j, inl), len, (char *)rbuf + (size_t)j * bext, rcount, rdt, off);
        }
        plx_shmc_saw_all(s, k);
        __atomic_store_n(&s->flags[r].done, k, __ATOMIC_RELEASE);
    }
    return 1;
}

/* Per chunk: every rank packs the next piece of each of its p blocks into
 * its slot (piece j for rank j, slot/p bytes each), then unpacks piece r of
 * every rank's slot into block j of rbuf. In place works piece by piece: a
 * rank has packed all of a piece's range before it overwrites it. When all
 * p blocks fit in PLX_SHMC_INLINE bytes they go through the ranks' lines. */
int plx_shmcoll_alltoall(struct plx_comm *c, const void *sbuf, MPI_Aint scount, struct plx_datatype *sdt,
                         void *rbuf, MPI_Aint rcount, struct plx_datatype *rdt)
{
    size_t n = (size_t)rcount * (size_t)rdt->size;
    if (n == 0 || plx_shmc_single_copy_wins(c, n, PLX_SHMC_MAXP))
        return 0;
    struct plx_shmc *s = plx_shmc_get(c);
    if (!s)
        return 0;
    int p = c->size, r = c->rank, inl = n * (size_t)p <= PLX_SHMC_INLINE;
    size_t piece = inl ? n : s->slot / (size_t)p / PLX_CACHELINE * PLX_CACHELINE;
    size_t rext = (size_t)rcount * (size_t)rdt->extent;
    size_t sext = sbuf == MPI_IN_PLACE ? rext : (size_t)scount * (size_t)sdt->extent;
    const char *src = sbuf == MPI_IN_PLACE ? rbuf : sbuf;
    MPI_Aint sc = sbuf == MPI_IN_PLACE ? rcount : scount;
    struct plx_datatype *st = sbuf == MPI_IN_PLACE ? rdt : sdt;
    for (size_t off = 0; off < n; off += piece) {
        uint64_t k = ++s->seq;
        size_t len = PLX_MIN(piece, n - off);
        char *mine = plx_shmc_in(s, p, k, r, inl);
        plx_shmc_wait_all_done(c, s, k);
        for (int j = 0; j < p; j++) {
            plx_shmc_pack(src + (size_t)j * sext, sc, st, off, mine + (size_t)j * piece, len);
        }
        __atomic_store_n(plx_shmc_flag(s, k, r, inl), k, __ATOMIC_RELEASE);
        for (int i = 0; i < p; i++) {
            int j = (r + i) % p;
            if (j != r)
                plx_shmc_wait(c, s, plx_shmc_flag(s, k, j, inl), k, j);
            const char *from = plx_shmc_in(s, p, k, j, inl) + (size_t)r * piece;
            plx_shmc_unpack(from, len, (char *)rbuf + (size_t)j * rext, rcount, rdt, off);
        }
        plx_shmc_saw_all(s, k);
        __atomic_store_n(&s->flags[r].done, k, __ATOMIC_RELEASE);
    }
    return 1;
}
