/*
 * Who is where: the job's processes, their nodes and pids, learned at
 * MPI_Init from the business cards every rank publishes through the process
 * manager ("c<rank>" = "<node name>,<pid>").
 */
#ifndef PLX_RUNTIME_H
#define PLX_RUNTIME_H

#include <mpi.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/types.h>
#include "core/status.h"

/* The state of MPI_Init/MPI_Finalize, set here and read by the API layer. */
struct plx_runtime {
    int initialized;
    int finalized;
    int thread_level;
    pthread_t main_thread;
    int world_rank;
    int world_size;
    int appnum;
    int universe_size;
    char hostname[MPI_MAX_PROCESSOR_NAME];
};
extern struct plx_runtime plx_rt;

struct plx_proc {
    int node_id;                /* dense, in order of first appearance */
    int local_index;            /* index among this node's processes, -1 if remote */
    pid_t pid;                  /* 0 unless read from the cards (see runtime.c); shm learns its peers' own */
    int job;                    /* 0: this job; k > 0: plx_procs.jobs[k - 1] (added at run time) */
    int wrank;                  /* its rank in its own MPI_COMM_WORLD */
    char *card;                 /* added processes: their business card (plx_procs_card) */
    int same_host;              /* added processes: on this host (their node_id is their own, so
                                 * that shared memory and node-aware collectives leave them out) */
};

/* A job whose processes were added at run time (spawn, connect, join). */
struct plx_job {
    char name[256];             /* its kvsname */
    uint64_t key;               /* plx_job_key(name) */
    int size;                   /* its world size */
};

struct plx_procs {
    int n;                      /* world size */
    int my_lpid;                /* my world rank */
    struct plx_proc *p;         /* by world rank */
    int my_node;
    int nlocal;                 /* processes on this node (including me) */
    int *local_lpids;           /* nlocal entries, ascending */
    int my_local_index;
    char kvsname[256];          /* job id, also names shm objects */
    /* Processes added at run time have lpids n .. ntotal-1, chosen by this
     * process: an lpid is per process, not global. Their identity is
     * (job, wrank); plx_proc_before orders processes the same way in every
     * job (it decides, e.g., which side of a merged intercommunicator comes
     * first and which of two crossing TCP connections stays). */
    int ntotal;
    int njobs;
    struct plx_job *jobs;
    uint64_t my_job_key;
};
extern struct plx_procs plx_procs;

int plx_node_id_of(int lpid);

/* Testing (PLEXUS_TEST_DIE_AT=POINT:RANK): this rank kills itself with
 * SIGKILL when it reaches POINT of MPI_Init, so that tests can check what a
 * job killed there leaves behind. */
void plx_runtime_test_point(const char *point);
/* --- processes of other jobs, added at run time (core/dynprocs.c) ---------- */

/* This process's node name, as in its card "c<rank>" (PLEXUS_NODE_NAME or the host name). */
void plx_runtime_node_name(char *node, size_t len);
uint64_t plx_job_key(const char *kvsname);
/* 1 when process a comes before b in the order every job agrees on. */
int plx_proc_before(int a, int b);
/* A process's identity in every job: (job key, world rank); and back (-1: unknown here). */
void plx_proc_gid(int lpid, uint64_t gid[2]);
int plx_procs_find(const uint64_t gid[2]);
/* This process's business card for processes of other jobs (no spaces):
 * "<job>|<world rank>|<world size>|<node>|<pid>|<transport cards>". */
plx_status_t plx_procs_card(char *buf, size_t len);
/* Adds the processes of n cards (reusing the lpid of one already known);
 * their lpids into lpids[]. The transports learn of them at once. */
plx_status_t plx_procs_add(int n, char *const *cards, int *lpids);
/* The part of an added process's card that belongs to component `comp`
 * ("tcp"), copied into buf; NULL when it has none. */
const char *plx_procs_comp_card(int lpid, const char *comp, char *buf, size_t len);

/* Same host as this process (its world's node, or an added process on this host). */
static inline int plx_proc_same_host(int lpid)
{
    return plx_procs.p[lpid].node_id == plx_procs.my_node || plx_procs.p[lpid].same_host;
}

plx_status_t plx_runtime_init(int *argc, char ***argv, int required, int *provided);
plx_status_t plx_runtime_finalize(void);

#endif
