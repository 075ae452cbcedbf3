/*
 * Who is where: the job's processes, their nodes and pids, learned at
 * MPI_Init from the business cards every rank publishes through the process
 * manager ("c<rank>" = "<node name>,<pid>").
 */
#ifndef PLX_RUNTIME_H
#define PLX_RUNTIME_H

#include <mpi.h>
#include <pthread.h>
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
};
extern struct plx_procs plx_procs;

int plx_node_id_of(int lpid);

/* Testing (PLEXUS_TEST_DIE_AT=POINT:RANK): this rank kills itself with
 * SIGKILL when it reaches POINT of MPI_Init, so that tests can check what a
 * job killed there leaves behind. */
void plx_runtime_test_point(const char *point);

plx_status_t plx_runtime_init(int *argc, char ***argv, int required, int *provided);
plx_status_t plx_runtime_finalize(void);

#endif
