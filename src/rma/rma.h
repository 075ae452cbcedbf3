/*
 * One-sided communication (MPI-3.1 chapter 11): windows, operations and
 * epochs. The API layer (src/api/win.c) checks arguments and raises errors;
 * this layer moves data and keeps the epochs.
 *
 * Two paths, chosen per window at creation:
 *
 * - Direct: every rank of the window is on this node and the memory lives in
 *   one shared segment (MPI_Win_allocate_shared always; MPI_Win_allocate
 *   when the ranks share a node). The origin loads and stores the target's
 *   memory itself, accumulates under a per-target spinlock in the segment
 *   (so each is atomic per element against every other accumulate), and
 *   passive-target locks are a ticket queue on one 64-bit word per target
 *   in the segment (below). The target does nothing.
 *
 * - Active messages (every other window: create and dynamic flavours,
 *   ranks on several nodes): each operation goes to the target as PLX_PKT_WIN
 *   packets (carried by any channel, through the router's remote-memory
 *   fallback hook) and is executed by the target's progress engine, which
 *   answers each piece (PLX_PKT_WIN_ANS); an operation is complete at the
 *   origin only when every piece is answered, so flush is "wait for the
 *   answers" and fence is "wait for the answers, then a barrier". Each
 *   piece is executed whole by one handler call under the library lock,
 *   so accumulates are atomic per element against each other and against
 *   the target's own RMA calls. Locks are a FIFO queue kept by the target.
 *
 * Lock word of a direct window's target (64 bits): bits 0-15 the next
 * ticket, bits 16-31 the ticket being served, bits 32-63 the shared holders.
 * A locker takes a ticket (CAS on the tail); an exclusive locker holds the
 * lock once its ticket is served and no shared holder is left, and advances
 * "served" on unlock; a shared locker, once served, counts itself a holder
 * and advances "served" at once, so shared lockers in a row share the lock.
 * Tickets are served in order: first in, first out, nobody starves.
 *
 * Thread rules: everything here runs under the library lock (API calls and
 * the packet handlers called from the progress engine).
 */
#ifndef PLX_RMA_H
#define PLX_RMA_H

#include <mpi.h>
#include <stdint.h>
#include "core/datatype.h"
#include "core/handle.h"
#include "core/objects.h"
#include "core/op.h"
#include "core/plexus.h"
#include "core/request.h"
#include "transport/transport.h"

enum plx_rma_kind {
    PLX_RMA_K_PUT = 1,
    PLX_RMA_K_GET,
    PLX_RMA_K_ACC,              /* accumulate */
    PLX_RMA_K_GACC,             /* get_accumulate, fetch_and_op */
    PLX_RMA_K_CAS,              /* compare_and_swap */
    PLX_RMA_K_LOCK,             /* control: lock request (answered by a grant) */
    PLX_RMA_K_UNLOCK,           /* control: unlock (answered) */
    PLX_RMA_K_POST,             /* control: exposure epoch opened for the receiver (no answer) */
    PLX_RMA_K_COMPLETE,         /* control: the sender's access epoch to the receiver is over (no answer) */
    PLX_RMA_K_LKINFO,           /* control: where are the receiver's lock words (answered: address, key) */
};

enum { PLX_RMA_LK_NONE = 0, PLX_RMA_LK_SHARED = 1, PLX_RMA_LK_EXCL = 2 };
/* Or'ed into a LOCK request's type: the origin waits for the grant (it
 * writes by cross-memory attach). Any other origin does not, and gets
 * none: one packet less each way per lock/op/unlock. */
#define PLX_RMA_LK_WANT_GRANT 0x10

/* What an origin knows of each rank of the window. */
struct plx_win_target {
    uint64_t base;              /* the rank's base address (0: dynamic) */
    uint64_t size;
    int disp_unit;
    int wid;                    /* its slot in its own window table */
    char *mem;                  /* direct: the rank's memory mapped here */
    uint64_t *lockw;            /* direct: its lock word */
    uint32_t *accw;             /* direct: its accumulate spinlock */
    uint64_t key;               /* issue 14: its memory's registration key (native atomics), or 0 */
};

struct plx_win_region {
    uint64_t addr, len;
};

struct plx_win_lkwait {         /* target: a lock request waiting in the queue */
    struct plx_list link;
    int rank;
    int type;
    int want_grant;             /* answer the grant (PLX_RMA_LK_WANT_GRANT) */
};

struct plx_win {
    struct plx_obj obj;
    struct plx_comm *comm;      /* private: its own context */
    int wid;
    int ready;                  /* creation over: every rank's card is known (requests wait before) */
    int flavor;                 /* MPI_WIN_FLAVOR_* */
    int model;                  /* MPI_WIN_UNIFIED */
    void *base;
    MPI_Aint size;
    int disp_unit;
    struct plx_win_target *t;   /* by rank of comm */
    int direct;                 /* every target by load/store (see above) */
    void *seg;                  /* the shared segment, or NULL */
    size_t seg_len;
    int malloced;               /* base from malloc (allocate flavour off-node) */
    int cma_ok;                 /* create flavour: put/get by cross-memory attach to ranks of this node */
    struct plx_win_region *regs;        /* dynamic: regions attached here */
    int nregs, capregs;

    struct plx_errhandler *errhandler;
    struct plx_attr *attrs;
    struct plx_info *info;      /* the keys in effect */
    char name[MPI_MAX_OBJECT_NAME];
    /* the attribute values handed out by MPI_Win_get_attr */
    MPI_Aint attr_size;
    int attr_disp_unit, attr_flavor, attr_model;

    /* epochs, as an origin */
    int fence;                  /* a fence without MPI_MODE_NOSUCCEED opened an epoch */
    int *start_ranks;           /* PSCW access epoch: ranks of the start group, or NULL */
    int nstart;
    uint8_t *lock;              /* per target: PLX_RMA_LK_* held */
    int nlocked;
    int lockall;
    uint8_t *granted;           /* per target: a grant arrived (AM) */
    uint8_t *unlocked;          /* per target: an unlock was answered (AM) */
    int *pending;               /* per target: operations issued and not answered */
    long npending;
    int err_code;               /* an error a target reported for an operation: raised at the next sync call */
    /* epochs, as a target */
    int *post_ranks;            /* PSCW exposure epoch: ranks of the post group, or NULL */
    int npost;
    uint32_t *posts;            /* per rank: its post notices not yet taken by start */
    uint32_t *completes;        /* per rank: its complete notices not yet taken by wait/test */
    /* AM lock queue, as a target */
    int lk_shared, lk_excl;
    struct plx_list lk_queue;
    struct plx_list deferred;   /* requests of origins whose lock request waits (ops.c) */
    /* issue 14, session 9: native atomics (natacc.c) */
    struct plx_tp_mr nat_mr;    /* this rank's memory, registered with the router */
    int nat_reg;
    uint64_t nat_mask;          /* basic types (natacc.c's table) whose accumulates go native, all ranks alike */
    uint64_t st_nat_acc, st_nat_calls, st_am_acc;       /* PLEXUS_STATS */
};

extern struct plx_objtab plx_win_tab;

static inline struct plx_win *plx_win_lookup(MPI_Win h)
{
    return plx_obj_lookup(&plx_win_tab, h);
}

/* --- windows (win.c) --------------------------------------------------------- */

/* Collective over comm. flavor: MPI_WIN_FLAVOR_*; for CREATE base is the
 * user's memory, for ALLOCATE/SHARED the memory is allocated and *base_p
 * gets it. Returns MPI_SUCCESS or an MPI error class with *what_p saying
 * what failed. */
int plx_win_create(struct plx_comm *comm, int flavor, void *base, MPI_Aint size, int disp_unit,
                   const struct plx_info *info, struct plx_win **win_p, void **base_p, const char **what_p);
/* Collective; the caller checked that no epoch is open. */
int plx_win_free(struct plx_win *w);
/* MPI_Win_attach/detach: MPI_SUCCESS or a class (*what_p). */
int plx_win_attach(struct plx_win *w, void *base, MPI_Aint size, const char **what_p);
int plx_win_detach(struct plx_win *w, const void *base);
/* Info keys in effect after merging `info` (may be NULL). */
void plx_win_set_info(struct plx_win *w, const struct plx_info *info);

/* --- operations (ops.c) --------------------------------------------------------- */

struct plx_rma_args {
    int kind;
    const void *obuf;           /* origin data (put, acc, gacc, cas: the new value) */
    MPI_Aint ocount;
    struct plx_datatype *odt;
    void *rbuf;                 /* get: origin buffer; gacc/cas: result */
    MPI_Aint rcount;
    struct plx_datatype *rdt;
    const void *cbuf;           /* cas: compare value */
    int target;
    MPI_Aint disp;
    MPI_Aint tcount;
    struct plx_datatype *tdt;
    MPI_Op op;
};

/* Issues one operation (checks done by the caller). req: a request to
 * complete with it, or NULL. MPI_SUCCESS or an MPI error class with a
 * message in msg. */
int plx_rma_issue(struct plx_win *w, const struct plx_rma_args *a, struct plx_request *req, char *msg, size_t mlen);
/* Target byte range [lo, hi) of a put/get/acc's target side (for checks):
 * relative to disp*disp_unit, from the type's true bounds. */
void plx_rma_target_span(MPI_Aint tcount, const struct plx_datatype *tdt, MPI_Aint *lo, MPI_Aint *hi);

/* --- synchronisation (sync.c) ------------------------------------------------------- */

/* Waits until every operation of this window to `target` (-1: every
 * target) is complete at the target. */
void plx_rma_flush(struct plx_win *w, int target);
int plx_rma_fence(struct plx_win *w, int assert);
int plx_rma_post(struct plx_win *w, const int *ranks, int n);
int plx_rma_start(struct plx_win *w, const int *ranks, int n);
int plx_rma_complete(struct plx_win *w);
/* wait (block=1) or test (block=0: returns 1 when done, 0 when not yet). */
int plx_rma_wait(struct plx_win *w, int block);
int plx_rma_lock(struct plx_win *w, int type, int target);
int plx_rma_unlock(struct plx_win *w, int target);
int plx_rma_lock_all(struct plx_win *w);
int plx_rma_unlock_all(struct plx_win *w);

/* --- the wire (am.c) ------------------------------------------------------------------ */

/* Sends a control packet (lock, unlock, post, complete) to target. */
void plx_rma_send_ctl(struct plx_win *w, int target, int kind, int lock_type);
/* Registers the packet handlers and the poll hook with the router (once). */
void plx_rma_am_init(void);
/* The window of slot wid, or NULL. */
struct plx_win *plx_rma_win_of(int wid);
int plx_rma_wid_new(struct plx_win *w);
void plx_rma_wid_free(int wid);
/* Executes a lock request of `rank` at this target (AM queue): grants at
 * once or queues; and an unlock. Self requests are granted in place.
 * type: PLX_RMA_LK_SHARED or _EXCL, or'ed with PLX_RMA_LK_WANT_GRANT. */
void plx_rma_lk_request(struct plx_win *w, int rank, int type);
/* The window's creation is over: requests that arrived during it run now. */
void plx_rma_win_ready(struct plx_win *w);
void plx_rma_lk_release(struct plx_win *w, int rank);

/* Executes one piece at local memory: kind, runs (off relative to mem),
 * data in, result out. elem/basic/op for accumulates. */
struct plx_rma_run {
    uint64_t off;
    uint64_t len;
};
void plx_rma_exec(char *mem, int kind, const struct plx_rma_run *runs, int nruns, const char *data, char *out,
                  MPI_Datatype basic, size_t elem, MPI_Op op);

/* Direct lock word operations (sync.c). */
void plx_rma_word_lock(uint64_t *w, int type);
void plx_rma_word_unlock(uint64_t *w, int type);
void plx_rma_spin_lock(uint32_t *l);
void plx_rma_spin_unlock(uint32_t *l);

/* --- locks from remote atomics (fablock.c, issue 14) ------------------------------------ */

#define PLX_RMA_LKW_MAX 1024    /* lock words per process: windows with a slot below it */
/* Does w lock target by its word in the target's memory (asks the target
 * where its words are, once)? */
int plx_rma_fab_use(struct plx_win *w, int target);
int plx_rma_fab_lock(struct plx_win *w, int target, int type);
int plx_rma_fab_unlock(struct plx_win *w, int target, int type);
/* Target: this process's words (address, key); 0 when they cannot be registered. */
int plx_rma_fab_info(uint64_t info[2]);
void plx_rma_fab_info_answer(int lpid, int ok, const uint64_t info[2]);
/* A new window slot's word starts free. */
void plx_rma_fab_wid_reset(int wid);
int plx_rma_ofi_setting(const char *s);
int plx_rma_fab_enabled(void);
uint64_t plx_rma_fab_ops(void);

/* --- accumulates as native atomics (natacc.c, issue 14, session 9) ------------------------ */

/* Window creation: registers this rank's memory and answers the basic types
 * its channels reduce natively in full (0: none, or not this window); the
 * AND of every rank's answer is then handed to agree. free at destroy. */
uint64_t plx_rma_nat_setup(struct plx_win *w);
void plx_rma_nat_agree(struct plx_win *w, uint64_t mask);
void plx_rma_nat_free(struct plx_win *w);
/* Does this accumulate (kind, op, basic type) to target go native? */
int plx_rma_nat_use(struct plx_win *w, int target, int kind, MPI_Op op, const struct plx_datatype *basic);
/* Issues it, run by run, each atomic counted on comp; in: the data stream
 * (cas: new value, then compare), res: the result stream. MPI_SUCCESS or a
 * class. */
int plx_rma_nat_issue(struct plx_win *w, int target, int kind, MPI_Op op, const struct plx_datatype *basic,
                      const struct plx_rma_run *runs, size_t nruns, const char *in, char *res,
                      struct plx_tp_comp *comp);

#endif
