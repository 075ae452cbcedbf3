/*
 * PMI-1 server: the launcher side of the "simple PMI" text protocol that the
 * ranks speak on PMI_FD (and that MPICH's Hydra speaks too).
 *
 * The server knows nothing about sockets or processes: the launcher feeds it
 * the bytes it read from a rank's connection (plx_pmisrv_input) and the server
 * answers through the send callback. This is what lets a per-host proxy relay
 * lines later without touching the protocol code.
 *
 * Supported: init, get_maxes, get_appnum, get_universe_size, get_my_kvsname,
 * put, get, barrier_in/barrier_out, finalize, abort, publish_name,
 * lookup_name, unpublish_name (the job's name service: MPI_Publish_name).
 * The multi-line "mcmd=spawn" is answered with rc=-1 (not supported).
 *
 * Thread rules: single-threaded, called from the launcher's event loop.
 */
#ifndef PLX_PMI_SERVER_H
#define PLX_PMI_SERVER_H

#include <stddef.h>

#define PLX_PMISRV_KVSNAME_MAX 256
#define PLX_PMISRV_KEYLEN_MAX 64
#define PLX_PMISRV_VALLEN_MAX 1024

struct plx_pmisrv;

/* Where a rank is in the PMI life cycle. */
enum plx_pmisrv_state {
    PLX_PMISRV_NONE = 0,        /* never said cmd=init: not an MPI program (yet) */
    PLX_PMISRV_INIT,            /* initialized, not finalized */
    PLX_PMISRV_FINALIZED,       /* cmd=finalize answered */
    PLX_PMISRV_ABORTED,         /* sent cmd=abort */
};

/* A spawn request (MPI_Comm_spawn/_multiple): MPICH's PMI-1 "mcmd=spawn"
 * blocks, one per command, collected until the last. */
struct plx_pmisrv_spawn_cmd {
    char *execname;
    int nprocs;
    int argc;
    char **argv;                /* argc entries */
    int ninfo;
    char **ikeys, **ivals;
};

struct plx_pmisrv_spawn {
    int count;
    struct plx_pmisrv_spawn_cmd *cmds;
    char *parent_port;          /* preput PARENT_ROOT_PORT_NAME, or NULL */
};

struct plx_pmisrv_ops {
    /* Deliver bytes to a rank; returns 0, or -1 when the rank is gone
     * (the server then ignores that rank's replies). */
    int (*send)(void *ctx, int rank, const char *buf, size_t len);
    /* rank asked to end the job with exit code `code` (msg may be ""). */
    void (*abort)(void *ctx, int rank, int code, const char *msg);
    /* rank broke the protocol so badly that the job cannot go on. */
    void (*error)(void *ctx, int rank, const char *what);
    /* Optional: start the spawn request of rank; 0, or -1 with a reason in
     * err (spaces allowed). NULL: "spawn_not_supported". */
    int (*spawn)(void *ctx, int rank, struct plx_pmisrv_spawn *s, char *err, size_t errlen);
};

struct plx_pmisrv_cfg {
    int size;                   /* ranks in the job */
    int universe_size;
    const int *appnum;          /* per rank: index of its MPMD section */
    const char *kvsname;        /* unique per job */
    const char *process_mapping;/* value of PMI_process_mapping, NULL: none */
    const char *job_secret;     /* value of "plexus-job-secret" (the TCP transport's
                                 * handshake secret), NULL: none */
};

/* NULL on allocation failure. The server copies what it needs from cfg. */
struct plx_pmisrv *plx_pmisrv_create(const struct plx_pmisrv_cfg *cfg,
                                     const struct plx_pmisrv_ops *ops, void *ctx);
void plx_pmisrv_destroy(struct plx_pmisrv *srv);

/* Bytes read from rank's connection: complete lines are executed, a partial
 * line is kept for the next call. */
void plx_pmisrv_input(struct plx_pmisrv *srv, int rank, const char *buf, size_t len);

/* The rank's connection is closed: no more replies to it. */
void plx_pmisrv_closed(struct plx_pmisrv *srv, int rank);

enum plx_pmisrv_state plx_pmisrv_state(const struct plx_pmisrv *srv, int rank);

/* How many ranks are waiting in barrier_in, and whether `rank` is one of
 * them (for diagnostics of a hung job). */
int plx_pmisrv_barrier_waiting(const struct plx_pmisrv *srv);
int plx_pmisrv_in_barrier(const struct plx_pmisrv *srv, int rank);

#endif
