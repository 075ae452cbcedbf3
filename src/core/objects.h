/*
 * The MPI objects other than requests and datatypes: groups, communicators,
 * error handlers, keyvals and attributes, info. One header because they refer
 * to each other; each has its own .c file (group.c, comm.c, errhandler.c,
 * attr.c, info.c).
 *
 * Process identity: a process is named by its rank in MPI_COMM_WORLD (its
 * "lpid"); a group is an array of lpids.
 *
 * Context ids: every communicator owns two consecutive match contexts,
 * ctx (point-to-point) and ctx+1 (collectives), so collective traffic never
 * matches user traffic. WORLD has 0/1, SELF 2/3; others are agreed on by
 * an allreduce over a bitmask of free ids (comm.c).
 *
 * Thread rules: all of this runs under the API lock.
 */
#ifndef PLX_OBJECTS_H
#define PLX_OBJECTS_H

#include <stdlib.h>
#include <mpi.h>
#include "core/handle.h"
#include "core/plexus.h"

#define PLX_MAX_CONTEXTS 4096   /* match contexts; communicators use two each */

/* MPI 4.1: the buffer slot of a session (api/session.c; the pool is
 * api/bsend.c's). The session and every group and communicator derived from
 * it hold a reference, so the slot outlives a session finalized too early
 * (erroneous): the session empties it, and buffered sends on its
 * communicators then find no session buffer. Counted under the API lock. */
struct plx_bslot {
    int refs;
    struct plx_bpool *pool;     /* NULL: no buffer attached */
};

static inline struct plx_bslot *plx_bslot_addref(struct plx_bslot *s)
{
    if (s)
        s->refs++;
    return s;
}

static inline void plx_bslot_release(struct plx_bslot *s)
{
    if (s && --s->refs == 0)
        free(s);
}

struct plx_group {
    struct plx_obj obj;
    int size;
    int rank;                   /* my rank in the group, MPI_UNDEFINED if absent */
    int *lpids;                 /* size entries: world rank of each member */
    struct plx_bslot *bslot;    /* from a session's process set (referenced), else NULL */
};

struct plx_attr {
    struct plx_attr *next;
    struct plx_keyval *keyval;
    void *value;
};

enum plx_keyval_kind { PLX_KEYVAL_COMM = 1, PLX_KEYVAL_TYPE, PLX_KEYVAL_WIN };

struct plx_keyval {
    struct plx_obj obj;
    int kind;
    MPI_Comm_copy_attr_function *copy_fn;
    MPI_Comm_delete_attr_function *delete_fn;
    void *extra_state;
    int freed;                  /* MPI_*_free_keyval called; object lives while attrs use it */
};

enum plx_errhandler_kind {
    PLX_ERRH_FATAL = 0,
    PLX_ERRH_RETURN,
    PLX_ERRH_ABORT,
    PLX_ERRH_USER_COMM,
    PLX_ERRH_USER_FILE,         /* MPI_File_create_errhandler (src/api/file.c invokes it) */
    PLX_ERRH_USER_WIN,          /* MPI_Win_create_errhandler (src/api/win.c invokes it) */
};

struct plx_errhandler {
    struct plx_obj obj;
    int kind;
    MPI_Comm_errhandler_function *comm_fn;
    MPI_File_errhandler_function *file_fn;
    MPI_Win_errhandler_function *win_fn;
};

struct plx_comm {
    struct plx_obj obj;
    int context_id;             /* point-to-point context; collectives use +1 */
    int rank;
    int size;
    struct plx_group *group;
    const int *lpids;           /* == group->lpids, for the fast path */
    /* A group's temporary communicator inside its parent's context
     * (MPI_Comm_create_group's agreement): the parent's ranks of its
     * members. Its packets carry those as source, and its receives match
     * them, so that two groups using one tag one after the other (a rank in
     * the second group may start before one in the first has finished)
     * cannot take each other's messages. NULL everywhere else (next to
     * rank and lpids: the send path reads it). */
    const int *wire_ranks;
    struct plx_errhandler *errhandler;
    struct plx_attr *attrs;
    struct plx_info *info;      /* hints given at creation / Comm_set_info */
    char name[MPI_MAX_OBJECT_NAME];
    unsigned coll_tag;          /* sequence of the blocking collectives (schedules) */
    unsigned coll_tag_nb;       /* sequence of the nonblocking ones: a space of their own (sched.c) */
    int fail_acked;             /* failed peers acknowledged (MPIX_Comm_failure_ack): pt2pt.c */
    int fail_clear;             /* failed peers acknowledged or none of its members: pt2pt.c */
    /* Intercommunicators (remote_group != NULL): `group`/`rank` are the local
     * group and my rank in it, while `lpids`/`size` describe the remote group,
     * the ranks that point-to-point addresses; MPI_Comm_size answers
     * group->size. local_comm is an intracommunicator over the local group
     * (its own context id) on which the collectives run their local parts. */
    struct plx_group *remote_group;
    struct plx_comm *local_comm;
    /* The buffer slot of the session it derives from (referenced), else
     * NULL: its parent's, or its group's (MPI_Comm_create_from_group). */
    struct plx_bslot *bslot;
};

static inline int plx_comm_is_inter(const struct plx_comm *c)
{
    return c->remote_group != NULL;
}

struct plx_info_entry {
    char *key;
    char *value;
};

struct plx_info {
    struct plx_obj obj;
    int nkeys;
    int cap;
    struct plx_info_entry *entries;   /* in insertion order (nthkey) */
};

extern struct plx_objtab plx_comm_tab, plx_group_tab, plx_errhandler_tab, plx_keyval_tab, plx_info_tab;
extern struct plx_comm *plx_comm_world, *plx_comm_self;
extern struct plx_group *plx_group_empty;

/* group.c */
/* Registers MPI_GROUP_EMPTY and records this process's lpid, from which every
 * group computes its `rank`. Called by plx_comm_init_builtins; idempotent. */
void plx_group_init_builtins(int my_lpid);
/* size 0 returns plx_group_empty (a builtin: addref/release do nothing). */
struct plx_group *plx_group_new(int size, const int *lpids);   /* computes rank */
void plx_group_addref(struct plx_group *g);
void plx_group_release(struct plx_group *g);
int plx_group_rank_of_lpid(const struct plx_group *g, int lpid);  /* MPI_UNDEFINED if absent */
/* Set operations with MPI's ordering (MPI 3.1 section 6.3.2): union is g1 then
 * the members of g2 not in g1, in g2's order; intersection and difference keep
 * g1's order. New reference (plx_group_empty when the result is empty). */
struct plx_group *plx_group_union(const struct plx_group *g1, const struct plx_group *g2);
struct plx_group *plx_group_intersection(const struct plx_group *g1, const struct plx_group *g2);
struct plx_group *plx_group_difference(const struct plx_group *g1, const struct plx_group *g2);
/* ranks2[i] = rank in g2 of member ranks1[i] of g1 (MPI_UNDEFINED if absent;
 * MPI_PROC_NULL maps to itself). ranks1 must be valid: the API checks them. */
void plx_group_translate(const struct plx_group *g1, int n, const int *ranks1,
                         const struct plx_group *g2, int *ranks2);
/* MPI_IDENT, MPI_SIMILAR or MPI_UNEQUAL. */
int plx_group_compare(const struct plx_group *g1, const struct plx_group *g2);

/* comm.c */
/* Sets up MPI_COMM_WORLD / MPI_COMM_SELF; also registers the builtin groups,
 * error handlers, keyvals and MPI_INFO_ENV (each init is idempotent). */
plx_status_t plx_comm_init_builtins(int world_rank, int world_size);
/* Call early in MPI_Finalize, while communication still works: runs the
 * delete callbacks of MPI_COMM_SELF's attributes (MPI 3.1 section 8.7.1: as if
 * SELF were freed first, in reverse order of setting), then WORLD's, and drops
 * the builtins' references. */
void plx_comm_finalize_builtins(void);
void plx_comm_addref(struct plx_comm *c);
/* A new communicator over group g (which it references) using context id ctx;
 * inherits errhandler from parent. */
struct plx_comm *plx_comm_new(struct plx_comm *parent, struct plx_group *g, int ctx);
/* Collective over comm: agree on a fresh context id. */
plx_status_t plx_comm_alloc_context(struct plx_comm *comm, int *ctx_p);
/* The same with an explicit internal-collective tag (Comm_create_group). */
plx_status_t plx_comm_alloc_context_tag(struct plx_comm *comm, int tag, int *ctx_p);
/* Returns an id this process got from alloc_context but will not use (a rank
 * left out of Comm_split / Comm_create). */
void plx_comm_free_context(int ctx);
/* Drops one reference; the last one deletes attrs, frees ctx and object. */
void plx_comm_release(struct plx_comm *c);

/* Pieces of a context-id agreement for callers that run the reduction
 * themselves (a schedule, an intercommunicator's two sides). A mask is
 * PLX_CTX_MASK_WORDS words: the free ids here, then a word that is 0 when
 * the choice must be confirmed (threads, or nonblocking agreements here).
 * take: stores the n lowest ids of the agreed mask and, when all are still
 * free here, marks them used and returns 1; returns 0 (nothing taken) when
 * one was taken here since the snapshot, so the caller's confirmation
 * fails and all try again; -1 when the mask has fewer than n. */
#define PLX_CTX_MASK_WORDS (PLX_MAX_CONTEXTS / 128 + 1)
void plx_comm_ctx_snapshot(uint64_t *mask);
int plx_comm_ctx_take(const uint64_t *mask, int n, int *ids);
/* A nonblocking agreement starts (+1) or ends (-1) here. */
void plx_comm_nb_pending(int delta);

/* Intercommunicators (core/intercomm.c). */
/* A new intercommunicator: local group lg (my rank in it), remote group rg,
 * context ctx; local_comm (referenced) an intracommunicator over lg. */
struct plx_comm *plx_comm_new_inter(struct plx_comm *parent, struct plx_group *lg, struct plx_group *rg, int ctx,
                                    struct plx_comm *local_comm);
/* How the two sides of an intercommunicator (or of one being made) talk:
 * every member takes part through `local` (an intracommunicator over its
 * side); rank `leader` of local exchanges with rank `remote_leader` of
 * `peer` on match context `ctx` with `tag`. */
struct plx_bridge {
    struct plx_comm *local;
    int leader;
    struct plx_comm *peer;
    int remote_leader;
    int ctx;
    int tag;
    /* Optional: the leaders swap their bytes through this instead of over
     * peer (processes of two jobs meeting over a socket: api/dynamic.c). */
    plx_status_t (*xchg)(void *arg, const void *sbuf, size_t sn, void *rbuf, size_t rn);
    void *xarg;
};
/* Collective over both sides: the leaders swap sbuf (sn bytes) for rn bytes
 * into rbuf, which every member of local then receives. */
plx_status_t plx_bridge_exchange(struct plx_bridge *b, const void *sbuf, size_t sn, void *rbuf, size_t rn);
/* Collective over both sides: n context ids free on every member of both. */
plx_status_t plx_comm_alloc_context_bridge(struct plx_bridge *b, int n, int *ids);
/* The bridge of an existing intercommunicator (its collective context). */
void plx_bridge_of(struct plx_comm *inter, struct plx_bridge *b);

/* attr.c: copy attributes from old to new (on dup), delete all (on free).
 * Return an MPI error code (MPI_SUCCESS or the callback's code). */
int plx_attr_copy_all(struct plx_comm *oldc, struct plx_comm *newc);
int plx_attr_delete_all(struct plx_comm *c);
void plx_attr_init_builtins(void);
/* Attribute lists of any object kind (comm, datatype, window): obj_handle is
 * what the callbacks receive. All return MPI_SUCCESS or the callback's code.
 * Delete callbacks run on delete, on overwrite and on delete_all; a failing
 * one leaves its attribute in place. delete_all removes in reverse order of
 * setting. */
struct plx_keyval *plx_keyval_new(int kind, MPI_Comm_copy_attr_function *copy_fn,
                                  MPI_Comm_delete_attr_function *delete_fn, void *extra_state);
/* Looks up a live, not user-freed keyval of this kind (NULL otherwise). */
struct plx_keyval *plx_keyval_lookup(int handle, int kind);
void plx_keyval_release(struct plx_keyval *kv);   /* user free: kv->freed = 1 first */
struct plx_attr *plx_attr_find(struct plx_attr *list, const struct plx_keyval *kv);
int plx_attr_set(struct plx_attr **list, int obj_handle, struct plx_keyval *kv, void *val);
int plx_attr_delete(struct plx_attr **list, int obj_handle, struct plx_keyval *kv); /* absent: OK */
int plx_attr_list_copy(struct plx_attr *src, int old_handle, struct plx_attr **dst_p);
int plx_attr_list_delete_all(struct plx_attr **list, int obj_handle);

/* errhandler.c */
extern struct plx_errhandler *plx_errhandler_fatal, *plx_errhandler_return;
void plx_errhandler_init_builtins(void);
struct plx_errhandler *plx_errhandler_new_comm(MPI_Comm_errhandler_function *fn);
struct plx_errhandler *plx_errhandler_new_file(MPI_File_errhandler_function *fn);
struct plx_errhandler *plx_errhandler_new_win(MPI_Win_errhandler_function *fn);
void plx_errhandler_addref(struct plx_errhandler *e);
void plx_errhandler_release(struct plx_errhandler *e);

/* info.c */
/* Fills and registers MPI_INFO_ENV (command, argv, maxprocs, host, arch,
 * wdir, thread_level). Called by plx_comm_init_builtins; idempotent. */
void plx_info_init_builtins(int world_size);
struct plx_info *plx_info_new(void);
/* Keys and values are checked by the API layer (lengths, non-empty key). */
void plx_info_set(struct plx_info *info, const char *key, const char *value);
int plx_info_delete(struct plx_info *info, const char *key);   /* 1 when found */
struct plx_info *plx_info_dup(const struct plx_info *src);
void plx_info_release(struct plx_info *info);
const char *plx_info_lookup(const struct plx_info *info, const char *key);
/* MPI_Info_create_env: the keys of MPI_INFO_ENV for a program started with
 * (argc, argv) (argc <= 0: this process's command line), maxprocs, and
 * thread_level when not NULL. Works before MPI_Init. */
void plx_info_fill_env(struct plx_info *info, int argc, char **argv, int maxprocs, const char *thread_level);

#endif
