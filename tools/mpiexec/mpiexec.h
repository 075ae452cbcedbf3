/*
 * mpiexec's state and the functions its two halves share: mpiexec.c (the
 * command line, the job's rules, ranks started on this host, the event loop)
 * and remote.c (multi-host jobs: one plexus-proxy per host, see wire.h).
 *
 * A rank is either started by mpiexec itself (a single-host job: host < 0)
 * or by the proxy of host `host` (a job given -hosts or -hostfile: every
 * rank, including those on this machine, runs under a proxy). Both kinds go
 * through the same rules: plx_mpiexec_rank_exited() judges every exit, the
 * one PMI server serves every rank, output is forwarded line by line.
 *
 * Internal to the mpiexec program; single-threaded.
 */
#ifndef PLX_MPIEXEC_H
#define PLX_MPIEXEC_H

#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <sys/resource.h>
#include <sys/types.h>

#include "hosts.h"
#include "iofwd.h"
#include "pmi_server.h"
#include "spawn.h"
#include "wire.h"

#define PLX_MPIEXEC_EXIT_USAGE 2
#define PLX_MPIEXEC_EXIT_HOST_LOST 255
#define PLX_MPIEXEC_EXIT_TIMEOUT 124
#define PLX_MPIEXEC_MAX_PROCS PLX_WIRE_JOB_MAX   /* what a proxy accepts (wire.h) */
#define PLX_MPIEXEC_KILL_GRACE 1.0      /* failure: SIGTERM, then SIGKILL after this */
#define PLX_MPIEXEC_DUMP_GRACE 2.0      /* timeout: SIGURG, then SIGKILL after this */
#define PLX_MPIEXEC_SIGNAL_GRACE 5.0    /* forwarded SIGINT/SIGTERM, then SIGKILL */
#define PLX_MPIEXEC_PMI_LOST_GRACE 0.25 /* PMI EOF: wait this long for the exit status */
#define PLX_MPIEXEC_PMI_LOST_GRACE_REMOTE 1.0 /* ...when it comes through a proxy */
#define PLX_MPIEXEC_DRAIN_GRACE 1.0     /* after the last exit: read remaining output */
#define PLX_MPIEXEC_DRAIN_GRACE_REMOTE 3.0 /* ...and wait for the proxies to leave */
#define PLX_MPIEXEC_HOST_TIMEOUT 5.0    /* default --host-timeout */
#define PLX_MPIEXEC_PENDING_MAX 16      /* unauthenticated connections at once */

/* One section of an MPMD command line: "-n N [-env NAME VALUE] prog args". */
struct plx_app {
    int nprocs;
    int nprocs_given;           /* -n was on the command line */
    char **argv;                /* NULL-terminated copy of the pointers */
    char **env;                 /* "NAME=VALUE" from -genv then -env, NULL-ended */
    int nenv, capenv;
    struct plx_hostlist hosts;  /* -app-hosts/-app-hostfile: this program's hosts; empty: the job's */
};

struct plx_rank {
    struct plx_spawn_proc proc; /* ranks started by mpiexec itself */
    struct plx_iofwd out;
    struct plx_iofwd err;
    int appnum;
    int host;                   /* index in plx_mpiexec.hosts, -1: started here */
    int local_rank;             /* among the ranks of its host */
    long rpid;                  /* pid on its host (proxy ranks), 0: not started */
    int exited;                 /* main process ended (or never started) */
    int signaled;               /* ...by signal `status`, else exit code `status` */
    int status;
    double pmi_lost_at;         /* PMI closed before finalize, exit not seen yet */
};

enum plx_mpiexec_phase {
    PLX_MPIEXEC_RUNNING,
    PLX_MPIEXEC_ENDING,         /* failure, abort, timeout or signal: tearing down */
};

enum plx_mpiexec_launcher {
    PLX_LAUNCHER_DEFAULT,       /* ssh for other hosts, fork for this one */
    PLX_LAUNCHER_SSH,
    PLX_LAUNCHER_FORK,
    PLX_LAUNCHER_EXEC,          /* --launcher-exec 'COMMAND {host}' */
};

/* A host of a multi-host job and its proxy. */
struct plx_mphost {
    char name[PLX_HOSTS_NAME_MAX + 1];
    int nranks;
    int *ranks;                 /* job ranks placed here, in order */
    int fork;                   /* the proxy runs on this machine, no launcher */
    pid_t launcher_pid;         /* our child (ssh, the exec command or the proxy) */
    int launcher_exited;        /* seen (not reaped: WNOWAIT) */
    int launcher_status;        /* wait status */
    double launcher_exit_at;
    double launched_at;
    struct plx_wire_conn conn;  /* fd >= 0 while the proxy is connected */
    int connected;              /* ever connected */
    int gone;                   /* connection over (or given up) */
    int done_sent;
    long proxy_pid;
};

/* A connection that has not said HELLO yet. */
struct plx_pending {
    struct plx_wire_conn conn;
    double deadline;
    char peer[80];
};

/* A job this mpiexec started for MPI_Comm_spawn (subjob.c). */
struct plx_subjob {
    pid_t pid;                  /* its mpiexec */
    int nprocs;
    int exited;
    int termed;                 /* sent SIGTERM: a SIGKILL may follow */
    char what[256];
};

struct plx_mpiexec {
    /* command line */
    int tag;
    double timeout;             /* seconds, 0: none */
    char **genv;
    int ngenv, capgenv;
    struct plx_app *apps;
    int napps;
    struct plx_hostlist hostlist;   /* -hosts / -hostfile; empty: single host */
    int ppn;
    enum plx_mpiexec_launcher launcher;
    const char *launcher_exec;
    int exec_forks_local;           /* launcher_exec chosen by us (Slurm's srun): this host's proxy is forked */
    const char *proxy_path;
    double host_timeout;
    int verbose;
    int usize;                      /* -usize: MPI_UNIVERSE_SIZE, enforced for spawn; 0: the job's size */
    const char *report_port;        /* --spawn-report: a spawned job's parents (subjob.c) */

    /* the job */
    int size;
    struct plx_rank *ranks;
    struct plx_pmisrv *pmi;
    char kvsname[64];
    char job_secret[PLX_WIRE_SECRET_HEX + 1];
    int sigfd;
    sigset_t orig_mask;
    struct rlimit orig_nofile;
    int nofile_raised;

    /* multi-host (remote.c) */
    int multi;
    int nhosts;                 /* hosts that received ranks */
    struct plx_mphost *hosts;
    int listen_fd;
    char proxy_secret[PLX_WIRE_SECRET_HEX + 1];
    char *connect_list;         /* "addr:port,..." given to the proxies */
    struct plx_pending pending[PLX_MPIEXEC_PENDING_MAX];
    int refusals;
    double abandon_at;          /* give up on proxies that do not report */
    int in_wait_ack;            /* a STDIN chunk is on its way to rank 0's proxy */
    int in_eof_sent;

    /* our stdin, forwarded to rank 0 */
    int in_open;                /* still reading fd 0 */
    int in_pipe;                /* write end of rank 0's stdin, -1: closed */
    size_t in_len, in_off;
    char in_buf[65536];

    /* jobs started for MPI_Comm_spawn (subjob.c) */
    struct plx_subjob *subjobs;
    int nsubjobs;
    int spawned_live;           /* their processes, while they run */
    char first_msg[512];        /* the first thing this mpiexec said (a spawned job's failure) */

    /* how the job is going */
    enum plx_mpiexec_phase phase;
    int nexited;
    int have_code;
    int code;
    int timed_out;
    double timeout_at;
    double kill_at;             /* SIGKILL everything then; 0: not planned */
    int killed;
    int signals_seen;
    int leftovers_killed;
    double drain_until;
};

extern struct plx_mpiexec plx_mpiexec;

/* mpiexec.c */
double plx_mpiexec_now(void);
void plx_mpiexec_msg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void *plx_mpiexec_xalloc(size_t n);
_Noreturn void plx_mpiexec_usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void plx_mpiexec_set_code(int code);
void plx_mpiexec_kill_all(int sig);
void plx_mpiexec_end_job(double grace);
void plx_mpiexec_fail(int rank, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void plx_mpiexec_rank_exited(int rank, int signaled, int status);
int plx_mpiexec_exec_status(int err);
/* "rank 3 (pid 4242)" or "rank 3 (pid 4242 on host n2)" */
const char *plx_mpiexec_rank_name(int rank, char *buf, size_t len);
double plx_mpiexec_min_deadline(double a, double b);

/* subjob.c */
struct plx_pmisrv_spawn;
int plx_subjob_spawn(void *ctx, int rank, struct plx_pmisrv_spawn *s, char *err, size_t errlen);
void plx_subjob_check(void);        /* SIGCHLD */
int plx_subjob_live(void);
void plx_subjob_signal(int sig);
/* At the end of a spawned job's mpiexec: tells the parents why it failed
 * when they still wait; the exit status to use. */
int plx_subjob_report(int code);

/* remote.c */
void plx_mpiexec_remote_place(void);        /* before the PMI server exists */
const char *plx_mpiexec_remote_mapping(char *buf, size_t len);
void plx_mpiexec_remote_launch(void);
/* pollfds: at most this many */
size_t plx_mpiexec_remote_max_fds(void);
/* Adds the remote descriptors; tags[i] identifies them for _ready. */
void plx_mpiexec_remote_watch(struct pollfd *pfd, int *tags, size_t *n_p);
void plx_mpiexec_remote_ready(int tag, short revents, double now);
double plx_mpiexec_remote_deadlines(double now);
void plx_mpiexec_remote_check_children(double now);
void plx_mpiexec_remote_signal(int sig, int group);
int plx_mpiexec_remote_pmi_send(int rank, const char *buf, size_t len);
int plx_mpiexec_remote_open(void);          /* a proxy is still connected */
void plx_mpiexec_remote_all_exited(void);   /* tell the proxies (DONE) */
/* stdin for a rank 0 on a proxy: can mpiexec read more of its own? */
int plx_mpiexec_remote_stdin_ready(void);
void plx_mpiexec_remote_stdin_send(const char *buf, size_t len);   /* len 0: EOF */
void plx_mpiexec_remote_cleanup(void);

#endif
