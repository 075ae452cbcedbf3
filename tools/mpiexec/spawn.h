/*
 * Starting and stopping the ranks on this host.
 *
 * Each rank is forked into its own process group (so a signal reaches the
 * rank and everything it started, and a terminal's Ctrl-C reaches only
 * mpiexec, which forwards it), dies with mpiexec (PR_SET_PDEATHSIG), gets one
 * end of a socketpair as PMI_FD and pipes for stdout/stderr. Whether exec
 * worked is known before plx_spawn_start returns (close-on-exec status pipe).
 *
 * mpiexec (single-host jobs) and plexus-proxy (one per host of a multi-host
 * job) both start ranks with it; it knows nothing of PMI beyond handing over
 * the socket, and nothing of output forwarding.
 */
#ifndef PLX_SPAWN_H
#define PLX_SPAWN_H

#include <signal.h>
#include <sys/resource.h>
#include <sys/types.h>

struct plx_spawn_desc {
    int rank;
    int size;
    int local_rank;             /* rank among the processes of this host */
    int local_size;
    char *const *argv;          /* argv[0]: program, searched in PATH */
    char *const *env;           /* "NAME=VALUE" set in order (later wins), NULL-ended */
    int stdin_fd;               /* becomes the child's stdin; -1: /dev/null */
    const sigset_t *sigmask;    /* signal mask the program starts with */
    const struct rlimit *nofile;/* RLIMIT_NOFILE the program starts with, or NULL */
    const char *host;           /* named in error messages when not NULL */
    char *errbuf;               /* not NULL: errors go here instead of stderr */
    size_t errlen;
};

struct plx_spawn_proc {
    pid_t pid;                  /* also the process group id; 0: not running */
    int pmi_fd;                 /* our end of the PMI socket (non-blocking) */
    int out_fd;                 /* read ends of its stdout / stderr (non-blocking) */
    int err_fd;
};

/* Starts one rank. Returns 0, or an errno value: the error was printed with
 * the "mpiexec: " prefix (or written to d->errbuf without it) and nothing is
 * left running. All descriptors returned are close-on-exec. */
int plx_spawn_start(const struct plx_spawn_desc *d, struct plx_spawn_proc *p);

/* Sends sig to the rank's whole process group (group != 0) or to the rank's
 * main process only. Harmless when the process is already gone. */
void plx_spawn_signal(const struct plx_spawn_proc *p, int sig, int group);

/* The shared-memory segments of job kvsname on this host: the library names
 * them /dev/shm/plexus-<kvsname>-<rank> and unlinks them once every local
 * peer that talks to the owner has opened them, or at MPI_Finalize. A job
 * that dies (a rank killed during MPI_Init, the OOM killer) leaves the rest:
 * mpiexec and plexus-proxy remove them when the job ends, for any reason. */
void plx_spawn_sweep_shm(const char *kvsname);

/* libfabric's shm provider (the ofi transport) keeps a region named
 * /dev/shm/<pid>:<n>:<m> while its endpoint is open and removes it at
 * fi_close; a rank that dies keeps it. Removes those of process pid, once
 * it is gone (reaped). */
void plx_spawn_sweep_pid(pid_t pid);

/* The environment variable that hands the job's name to plexus-proxy (in the
 * forwarded environment of LAUNCH) for plx_spawn_sweep_shm. */
#define PLX_SPAWN_KVSNAME_ENV "PLEXUS_MPIEXEC_KVSNAME"

#endif
