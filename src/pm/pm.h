/*
 * Process-manager client: how a rank learns who it is and exchanges business
 * cards with the others. Three protocols (pm.c picks one from the
 * environment): the PMI-1 wire protocol (text lines on the socket named by
 * PMI_FD: our own mpiexec, MPICH's Hydra), the PMI-2 wire protocol (Slurm's
 * srun --mpi=pmi2) and PMIx through libpmix when the build found it (srun
 * --mpi=pmix, PRRTE). Without any launcher the process is a singleton of
 * size 1.
 *
 * Thread rules: called only from MPI_Init/MPI_Finalize/MPI_Abort and from
 * collective object creation, under the library's API lock.
 */
#ifndef PLX_PM_H
#define PLX_PM_H

#include <stddef.h>
#include "core/status.h"

#define PLX_PM_MAX_KEY 64
#define PLX_PM_MAX_VAL 1024

struct plx_pm_info {
    int rank;
    int size;
    int appnum;
    int universe_size;
    int singleton;          /* no launcher: rank 0 of 1, put/get are local */
    char kvsname[256];      /* unique per job; also used to name shm objects */
};

/* Connects to the launcher (or decides this is a singleton) and fills info_p.
 * Refuses (PLX_ERR_PM, with a message on stderr naming the launcher, the
 * variables seen and the missing support) when a launcher's variables are
 * present but its protocol is not available, e.g. SLURM_JOB_ID +
 * SLURM_PROCID without PMI_FD or PMIX_RANK, OMPI_COMM_WORLD_SIZE, or
 * PMIX_RANK in a build without libpmix: never guess a singleton when a
 * launcher started us. PLEXUS_PMI=pmi1|pmi2|pmix forces a protocol. */
plx_status_t plx_pm_init(struct plx_pm_info *info_p);

/* "PMI-1", "PMI-2", "PMIx" or "singleton" once initialized. */
const char *plx_pm_name(void);
/* Whether this build has the PMIx client (libpmix was found). */
int plx_pm_have_pmix(void);

/* Publish key=value in the job's key-value space (visible after a fence).
 * Wire constraints (PMI-1 separates with spaces, PMI-2 with ';'): the key is
 * 1..PLX_PM_MAX_KEY-1 characters without spaces, '=' or ';'; the value is at
 * most PLX_PM_MAX_VAL-1 characters without spaces, tabs, newlines or ';'
 * ('=' is fine).
 * Encode binary business cards (hex, base64). Violations give PLX_ERR_ARG. */
plx_status_t plx_pm_put(const char *key, const char *val);

/* Collective over all ranks of the job: every put before it is visible to
 * every get after it. */
plx_status_t plx_pm_fence(void);

/* Read a key published by any rank; PLX_ERR_ARG when it does not exist. */
plx_status_t plx_pm_get(const char *key, char *val, size_t len);

/* Ask the launcher to end the whole job with exit code `code`; msg is shown
 * by the launcher. Does not return (falls back to _exit(code)). */
_Noreturn void plx_pm_abort(int code, const char *msg);

plx_status_t plx_pm_finalize(void);

/* The launcher's name service (MPI_Publish_name and friends). Service and
 * port follow the value rules above. PLX_ERR_UNSUPPORTED: this launcher
 * (or the singleton) has none; PLX_ERR_ARG: publish of a service already
 * published, lookup or unpublish of one that is not; PLX_ERR_PM: the
 * launcher failed. */
plx_status_t plx_pm_publish(const char *service, const char *port);
plx_status_t plx_pm_lookup(const char *service, char *port, size_t len);
plx_status_t plx_pm_unpublish(const char *service);

/* MPI_Comm_spawn(_multiple) through the launcher: starts a new job of the
 * commands' processes (one MPI_COMM_WORLD; appnum = index of the command),
 * whose processes find parent_port in $PLEXUS_PARENT_PORT. PLX_OK once the
 * launcher has started it; PLX_ERR_UNSUPPORTED when the launcher cannot
 * spawn; otherwise an error with the launcher's reason in err. */
struct plx_pm_spawn_cmd {
    const char *cmd;
    char **argv;                /* NULL-terminated, may be NULL */
    int maxprocs;
    int ninfo;
    const char **keys, **vals;  /* the MPI_Info of the command */
    int started;                /* out, after PLX_OK: processes started (fewer than
                                 * maxprocs when the "soft" info key allowed it) */
};
plx_status_t plx_pm_spawn(int count, struct plx_pm_spawn_cmd *cmds, const char *parent_port, char *err,
                          size_t errlen);

#endif
