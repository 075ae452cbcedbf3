/*
 * mpiexec (and mpirun, the same program): runs an MPI job on this host.
 *
 * One event loop (poll) serves: the signals (signalfd: SIGCHLD and the ones
 * forwarded to the ranks), the PMI-1 connections (pmi_server.c), the ranks'
 * stdout/stderr (iofwd.c), our stdin (forwarded to rank 0) and the deadlines
 * (--timeout, kill escalation, partial-line flushes).
 *
 * Job rules: a rank that dies by a signal, that exits after PMI init without
 * finalize, or that exits non-zero without ever speaking PMI ends the job: we
 * say which rank and how, SIGTERM every rank's process group at once and
 * SIGKILL them 1 s later. A rank's main process is left a zombie (observed
 * with waitid(WNOWAIT)) until the job is over, so its process-group id cannot
 * be reused while we may still signal the group. No process of the job
 * outlives mpiexec: leftovers in the ranks' groups are SIGKILLed at the end,
 * and PR_SET_PDEATHSIG covers mpiexec itself being killed. (A descendant that
 * leaves its rank's process group, e.g. with setsid, escapes both.)
 *
 * All mutable state is in plx_mpiexec.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "iofwd.h"
#include "pmi_server.h"
#include "spawn.h"

#ifndef PLX_VERSION_STRING
#define PLX_VERSION_STRING "unknown"
#endif

#define PLX_MPIEXEC_EXIT_USAGE 2
#define PLX_MPIEXEC_EXIT_TIMEOUT 124
#define PLX_MPIEXEC_MAX_PROCS 100000
#define PLX_MPIEXEC_KILL_GRACE 1.0      /* failure: SIGTERM, then SIGKILL after this */
#define PLX_MPIEXEC_DUMP_GRACE 2.0      /* timeout: SIGURG, then SIGKILL after this */
#define PLX_MPIEXEC_SIGNAL_GRACE 5.0    /* forwarded SIGINT/SIGTERM, then SIGKILL */
#define PLX_MPIEXEC_PMI_LOST_GRACE 0.25 /* PMI EOF: wait this long for the exit status */
#define PLX_MPIEXEC_DRAIN_GRACE 1.0     /* after the last exit: read remaining output */

/* One section of an MPMD command line: "-n N [-env NAME VALUE] prog args". */
struct plx_app {
    int nprocs;
    char **argv;                /* NULL-terminated copy of the pointers */
    char **env;                 /* "NAME=VALUE" from -genv then -env, NULL-ended */
    int nenv, capenv;
};

struct plx_rank {
    struct plx_spawn_proc proc;
    struct plx_iofwd out;
    struct plx_iofwd err;
    int appnum;
    int exited;                 /* main process ended (or never started) */
    int signaled;               /* ...by signal `status`, else exit code `status` */
    int status;
    double pmi_lost_at;         /* PMI closed before finalize, exit not seen yet */
};

enum plx_mpiexec_phase {
    PLX_MPIEXEC_RUNNING,
    PLX_MPIEXEC_ENDING,         /* failure, abort, timeout or signal: tearing down */
};

static struct plx_mpiexec {
    /* command line */
    int tag;
    double timeout;             /* seconds, 0: none */
    char **genv;
    int ngenv, capgenv;
    struct plx_app *apps;
    int napps;

    /* the job */
    int size;
    struct plx_rank *ranks;
    struct plx_pmisrv *pmi;
    char kvsname[64];
    int sigfd;
    sigset_t orig_mask;
    struct rlimit orig_nofile;
    int nofile_raised;

    /* our stdin, forwarded to rank 0 */
    int in_open;                /* still reading fd 0 */
    int in_pipe;                /* write end of rank 0's stdin, -1: closed */
    size_t in_len, in_off;
    char in_buf[65536];

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
} plx_mpiexec = { .sigfd = -1, .in_pipe = -1 };

/* ---- small helpers -------------------------------------------------------- */

static double plx_mpiexec_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void plx_mpiexec_msg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void plx_mpiexec_msg(const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    int n;

    va_start(ap, fmt);
    n = vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    if ((size_t)n >= sizeof(buf))
        n = sizeof(buf) - 1;
    /* One write per message so it is never torn by rank output. */
    dprintf(2, "mpiexec: %.*s\n", n, buf);
}

static _Noreturn void plx_mpiexec_usage_error(const char *fmt, ...)
    __attribute__((format(printf, 1, 2)));

static _Noreturn void plx_mpiexec_usage_error(const char *fmt, ...)
{
    char buf[512];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    dprintf(2, "mpiexec: %s\nTry 'mpiexec --help' for more information.\n", buf);
    exit(PLX_MPIEXEC_EXIT_USAGE);
}

static void *plx_mpiexec_xalloc(size_t n)
{
    void *p = calloc(1, n ? n : 1);
    if (p == NULL) {
        plx_mpiexec_msg("out of memory");
        exit(1);
    }
    return p;
}

static const char *plx_mpiexec_signame(int sig)
{
    static const struct {
        int sig;
        const char *name;
    } names[] = {
        { SIGHUP, "SIGHUP" },   { SIGINT, "SIGINT" },   { SIGQUIT, "SIGQUIT" },
        { SIGILL, "SIGILL" },   { SIGTRAP, "SIGTRAP" }, { SIGABRT, "SIGABRT" },
        { SIGBUS, "SIGBUS" },   { SIGFPE, "SIGFPE" },   { SIGKILL, "SIGKILL" },
        { SIGUSR1, "SIGUSR1" }, { SIGSEGV, "SIGSEGV" }, { SIGUSR2, "SIGUSR2" },
        { SIGPIPE, "SIGPIPE" }, { SIGALRM, "SIGALRM" }, { SIGTERM, "SIGTERM" },
        { SIGXCPU, "SIGXCPU" }, { SIGXFSZ, "SIGXFSZ" }, { SIGSYS, "SIGSYS" },
        { SIGURG, "SIGURG" },   { SIGVTALRM, "SIGVTALRM" }, { SIGPROF, "SIGPROF" },
        { SIGSTKFLT, "SIGSTKFLT" }, { SIGPWR, "SIGPWR" }, { SIGIO, "SIGIO" },
    };
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        if (names[i].sig == sig)
            return names[i].name;
    return "a real-time signal";
}

/* ---- command line ---------------------------------------------------------- */

static void plx_mpiexec_help(void)
{
    printf(
"Usage: mpiexec [options] [-n N] program [args...] [: [-n N] program2 [args...]]...\n"
"       (mpirun is the same program)\n"
"\n"
"Runs N copies of program on this host as one MPI job (Plexus %s).\n"
"Sections separated by ':' start different programs in one job (MPMD).\n"
"\n"
"Options:\n"
"  -n N, -np N           number of processes for this program (default 1)\n"
"  -env NAME VALUE       set an environment variable for this program's ranks\n"
"  -genv NAME VALUE      set an environment variable for every rank\n"
"  -l, --tag-output      prefix each output line with its rank: \"[1] text\"\n"
"                        (also -prepend-rank)\n"
"  --timeout SECONDS     end the job after SECONDS: every rank first prints what\n"
"                        it is waiting for (its pending MPI requests), 2 s later\n"
"                        the job is killed and mpiexec exits with 124\n"
"                        (default: $MPIEXEC_TIMEOUT, else no limit)\n"
"  -h, --help            show this help\n"
"  --version             show the version\n"
"Options take one or two dashes; a one-value option also takes --opt=value.\n"
"\n"
"Each rank gets mpiexec's environment plus PMI_FD, PMI_RANK, PMI_SIZE,\n"
"MPI_LOCALRANKID, MPI_LOCALNRANKS and PLEXUS_MPIEXEC=1, and runs in its own\n"
"process group. Rank 0 reads mpiexec's standard input, the others /dev/null.\n"
"Output is forwarded a line at a time. SIGINT, SIGTERM, SIGHUP and SIGQUIT are\n"
"forwarded to the ranks (a second such signal, or 5 s without the job ending,\n"
"sends SIGKILL); SIGURG (ranks print their pending requests), SIGUSR1 and\n"
"SIGUSR2 are forwarded too.\n"
"\n"
"When a rank dies by a signal, exits (with any status) after MPI_Init without\n"
"calling MPI_Finalize, or - not being an MPI program - exits non-zero, mpiexec\n"
"names the rank and the cause and kills the other ranks at once.\n"
"\n"
"Exit status:\n"
"  0        every rank exited 0\n"
"  N        the code a rank gave to MPI_Abort (modulo 256; 1 if that is 0)\n"
"  S        otherwise the first failing rank's exit status, 128+SIG if it was\n"
"           killed by signal SIG, 1 if it exited 0 without MPI_Finalize\n"
"  124      --timeout expired\n"
"  126/127  the program could not be executed / was not found\n"
"  2        invalid command line\n", PLX_VERSION_STRING);
}

/* Matches "-name", "--name", "-name=value", "--name=value". */
static int plx_mpiexec_opt(const char *arg, const char *name, const char **inline_p)
{
    size_t n = strlen(name);

    if (arg[0] != '-')
        return 0;
    arg += arg[1] == '-' ? 2 : 1;
    if (strncmp(arg, name, n) != 0)
        return 0;
    if (arg[n] == '\0') {
        *inline_p = NULL;
        return 1;
    }
    if (arg[n] == '=') {
        *inline_p = arg + n + 1;
        return 1;
    }
    return 0;
}

static const char *plx_mpiexec_optval(int argc, char **argv, int *i, const char *inl,
                                      const char *opt)
{
    if (inl != NULL)
        return inl;
    if (*i + 1 >= argc)
        plx_mpiexec_usage_error("option %s needs a value", opt);
    return argv[++*i];
}

/* "-env NAME VALUE" or "-env NAME=VALUE": returns a malloc'd "NAME=VALUE". */
static char *plx_mpiexec_envopt(int argc, char **argv, int *i, const char *opt)
{
    const char *name, *val;
    char *kv;

    if (*i + 1 >= argc)
        plx_mpiexec_usage_error("option %s needs NAME VALUE", opt);
    name = argv[++*i];
    if (strchr(name, '=') != NULL) {
        val = NULL;
    } else {
        if (*i + 1 >= argc)
            plx_mpiexec_usage_error("option %s %s needs a VALUE", opt, name);
        val = argv[++*i];
    }
    if (name[0] == '\0' || name[0] == '=')
        plx_mpiexec_usage_error("option %s: empty variable name", opt);
    size_t len = strlen(name) + (val ? strlen(val) + 2 : 1);
    kv = plx_mpiexec_xalloc(len);
    snprintf(kv, len, val ? "%s=%s" : "%s", name, val ? val : "");
    return kv;
}

static void plx_mpiexec_push(char ***arr, int *n, int *cap, char *s)
{
    if (*n + 2 > *cap) {
        int ncap = *cap ? *cap * 2 : 8;
        char **na = realloc(*arr, (size_t)ncap * sizeof(char *));
        if (na == NULL) {
            plx_mpiexec_msg("out of memory");
            exit(1);
        }
        *arr = na;
        *cap = ncap;
    }
    (*arr)[(*n)++] = s;
    (*arr)[*n] = NULL;
}

static void plx_mpiexec_parse(int argc, char **argv)
{
    struct plx_mpiexec *m = &plx_mpiexec;
    int i = 1;

    m->apps = plx_mpiexec_xalloc((size_t)argc * sizeof(struct plx_app));
    while (i < argc) {
        struct plx_app *app = &m->apps[m->napps];
        const char *inl, *v;
        char *end;

        app->nprocs = 1;
        for (; i < argc && argv[i][0] == '-' && argv[i][1] != '\0'; i++) {
            const char *a = argv[i];
            if (strcmp(a, "--") == 0) {
                i++;
                break;
            } else if (plx_mpiexec_opt(a, "n", &inl) || plx_mpiexec_opt(a, "np", &inl)) {
                v = plx_mpiexec_optval(argc, argv, &i, inl, a);
                errno = 0;
                long n = strtol(v, &end, 10);
                if (errno != 0 || end == v || *end != '\0' || n < 1
                    || n > PLX_MPIEXEC_MAX_PROCS)
                    plx_mpiexec_usage_error("%s needs a number of processes between 1 and %d,"
                                            " got '%s'", a, PLX_MPIEXEC_MAX_PROCS, v);
                app->nprocs = (int)n;
            } else if (plx_mpiexec_opt(a, "env", &inl) && inl == NULL) {
                plx_mpiexec_push(&app->env, &app->nenv, &app->capenv,
                                 plx_mpiexec_envopt(argc, argv, &i, a));
            } else if (plx_mpiexec_opt(a, "genv", &inl) && inl == NULL) {
                plx_mpiexec_push(&m->genv, &m->ngenv, &m->capgenv,
                                 plx_mpiexec_envopt(argc, argv, &i, a));
            } else if ((plx_mpiexec_opt(a, "l", &inl) || plx_mpiexec_opt(a, "tag-output", &inl)
                        || plx_mpiexec_opt(a, "prepend-rank", &inl)) && inl == NULL) {
                m->tag = 1;
            } else if (plx_mpiexec_opt(a, "timeout", &inl)) {
                v = plx_mpiexec_optval(argc, argv, &i, inl, a);
                errno = 0;
                double t = strtod(v, &end);
                if (errno != 0 || end == v || *end != '\0' || !isfinite(t) || t < 0)
                    plx_mpiexec_usage_error("--timeout needs a number of seconds, got '%s'", v);
                m->timeout = t;
            } else if ((plx_mpiexec_opt(a, "h", &inl) || plx_mpiexec_opt(a, "help", &inl))
                       && inl == NULL) {
                plx_mpiexec_help();
                exit(0);
            } else if ((plx_mpiexec_opt(a, "version", &inl) || plx_mpiexec_opt(a, "V", &inl))
                       && inl == NULL) {
                printf("mpiexec (Plexus) %s\n", PLX_VERSION_STRING);
                exit(0);
            } else {
                plx_mpiexec_usage_error("unknown option '%s'", a);
            }
        }
        if (i >= argc || strcmp(argv[i], ":") == 0)
            plx_mpiexec_usage_error("no program to run%s",
                                    m->napps ? " after ':'" : " (mpiexec -n N program)");
        int first = i;
        while (i < argc && strcmp(argv[i], ":") != 0)
            i++;
        app->argv = plx_mpiexec_xalloc((size_t)(i - first + 1) * sizeof(char *));
        memcpy(app->argv, &argv[first], (size_t)(i - first) * sizeof(char *));
        m->napps++;
        if (i < argc)
            i++;                    /* skip ':' */
    }
    if (m->napps == 0)
        plx_mpiexec_usage_error("no program to run (mpiexec -n N program)");

    if (m->timeout == 0) {
        const char *t = getenv("MPIEXEC_TIMEOUT");
        char *end;
        if (t != NULL && *t != '\0') {
            double v = strtod(t, &end);
            if (*end != '\0' || !isfinite(v) || v < 0)
                plx_mpiexec_usage_error("MPIEXEC_TIMEOUT='%s' is not a number of seconds", t);
            m->timeout = v;
        }
    }

    long total = 0;
    for (int a = 0; a < m->napps; a++)
        total += m->apps[a].nprocs;
    if (total > PLX_MPIEXEC_MAX_PROCS)
        plx_mpiexec_usage_error("%ld processes is more than this mpiexec supports (%d)", total,
                                PLX_MPIEXEC_MAX_PROCS);
    m->size = (int)total;
}

/* ---- job control ------------------------------------------------------------- */

static void plx_mpiexec_kill_all(int sig)
{
    for (int r = 0; r < plx_mpiexec.size; r++)
        plx_spawn_signal(&plx_mpiexec.ranks[r].proc, sig, 1);
}

static void plx_mpiexec_set_code(int code)
{
    if (plx_mpiexec.have_code)
        return;
    plx_mpiexec.have_code = 1;
    plx_mpiexec.code = code;
}

static void plx_mpiexec_end_job(double grace)
{
    plx_mpiexec.phase = PLX_MPIEXEC_ENDING;
    plx_mpiexec_kill_all(SIGTERM);
    plx_mpiexec.kill_at = plx_mpiexec_now() + grace;
}

/* A rank failed: name it and the cause, then end the job. */
static void plx_mpiexec_fail(int rank, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void plx_mpiexec_fail(int rank, int code, const char *fmt, ...)
{
    char what[512];
    va_list ap;

    if (plx_mpiexec.phase != PLX_MPIEXEC_RUNNING) {
        plx_mpiexec_set_code(code);
        return;
    }
    va_start(ap, fmt);
    vsnprintf(what, sizeof(what), fmt, ap);
    va_end(ap);
    int live = 0;
    for (int r = 0; r < plx_mpiexec.size; r++)
        live += r != rank && !plx_mpiexec.ranks[r].exited;
    if (live > 0)
        plx_mpiexec_msg("rank %d (pid %ld) %s; killing the other %d running rank%s", rank,
                        (long)plx_mpiexec.ranks[rank].proc.pid, what, live,
                        live > 1 ? "s" : "");
    else
        plx_mpiexec_msg("rank %d (pid %ld) %s", rank, (long)plx_mpiexec.ranks[rank].proc.pid,
                        what);
    plx_mpiexec_set_code(code);
    plx_mpiexec_end_job(PLX_MPIEXEC_KILL_GRACE);
}

/* ---- PMI plumbing --------------------------------------------------------------- */

static int plx_mpiexec_pmi_send(void *ctx, int rank, const char *buf, size_t len)
{
    int fd = plx_mpiexec.ranks[rank].proc.pmi_fd;

    (void)ctx;
    while (len > 0 && fd >= 0) {
        ssize_t n = send(fd, buf, len, MSG_NOSIGNAL);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN) {
                /* The rank does not read its replies; it gets 5 s. */
                struct pollfd pfd = { .fd = fd, .events = POLLOUT };
                if (poll(&pfd, 1, 5000) > 0)
                    continue;
            }
            return -1;
        }
        buf += n;
        len -= (size_t)n;
    }
    return fd >= 0 ? 0 : -1;
}

static void plx_mpiexec_pmi_abort(void *ctx, int rank, int code, const char *msg)
{
    (void)ctx;
    if (plx_mpiexec.phase != PLX_MPIEXEC_RUNNING) {
        plx_mpiexec_set_code(code);
        return;
    }
    plx_mpiexec_msg("rank %d (pid %ld) aborted the job with exit code %d%s%s", rank,
                    (long)plx_mpiexec.ranks[rank].proc.pid, code, msg[0] ? ": " : "", msg);
    plx_mpiexec_set_code(code);
    plx_mpiexec_end_job(PLX_MPIEXEC_KILL_GRACE);
}

static void plx_mpiexec_pmi_error(void *ctx, int rank, const char *what)
{
    (void)ctx;
    plx_mpiexec_fail(rank, 1, "broke the PMI protocol: %s", what);
}

static void plx_mpiexec_pmi_close(int rank)
{
    struct plx_rank *rk = &plx_mpiexec.ranks[rank];

    if (rk->proc.pmi_fd < 0)
        return;
    close(rk->proc.pmi_fd);
    rk->proc.pmi_fd = -1;
    plx_pmisrv_closed(plx_mpiexec.pmi, rank);
}

/* Reads what the rank sent on its PMI socket and runs it. */
static void plx_mpiexec_pmi_readable(int rank, double now)
{
    struct plx_rank *rk = &plx_mpiexec.ranks[rank];
    char buf[4096];

    for (int rounds = 0; rk->proc.pmi_fd >= 0 && rounds < 64; rounds++) {
        ssize_t n = read(rk->proc.pmi_fd, buf, sizeof(buf));
        if (n > 0) {
            plx_pmisrv_input(plx_mpiexec.pmi, rank, buf, (size_t)n);
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && errno == EAGAIN)
            return;
        /* EOF (or error): an MPI rank that has not finalized is in trouble,
         * but its exit status, which usually follows at once, says more. */
        plx_mpiexec_pmi_close(rank);
        if (plx_pmisrv_state(plx_mpiexec.pmi, rank) == PLX_PMISRV_INIT && !rk->exited)
            rk->pmi_lost_at = now;
        return;
    }
}

/* ---- rank exits ----------------------------------------------------------------- */

static void plx_mpiexec_rank_exited(int rank, int signaled, int status)
{
    struct plx_rank *rk = &plx_mpiexec.ranks[rank];
    enum plx_pmisrv_state st;

    rk->exited = 1;
    rk->signaled = signaled;
    rk->status = status;
    rk->pmi_lost_at = 0;
    plx_mpiexec.nexited++;

    /* What the rank wrote before it ended comes before our verdict. */
    if (rk->out.fd >= 0)
        plx_iofwd_pump(&rk->out, plx_mpiexec_now());
    if (rk->err.fd >= 0)
        plx_iofwd_pump(&rk->err, plx_mpiexec_now());
    /* An abort or finalize may still sit in the socket: run it first. */
    plx_mpiexec_pmi_readable(rank, plx_mpiexec_now());
    plx_mpiexec_pmi_close(rank);
    if (rank == 0 && plx_mpiexec.in_pipe >= 0) {
        close(plx_mpiexec.in_pipe);
        plx_mpiexec.in_pipe = -1;
        plx_mpiexec.in_open = 0;
    }

    st = plx_pmisrv_state(plx_mpiexec.pmi, rank);
    if (signaled) {
        plx_mpiexec_fail(rank, 128 + status, "was killed by signal %d (%s)%s", status,
                         plx_mpiexec_signame(status),
                         st == PLX_PMISRV_INIT ? " before calling MPI_Finalize" : "");
    } else if (st == PLX_PMISRV_INIT) {
        plx_mpiexec_fail(rank, status ? status : 1,
                         "exited with status %d without calling MPI_Finalize", status);
    } else if (st == PLX_PMISRV_ABORTED) {
        /* the abort handler already ended the job */
    } else if (status != 0 && st == PLX_PMISRV_FINALIZED) {
        if (plx_mpiexec.phase == PLX_MPIEXEC_RUNNING)
            plx_mpiexec_msg("rank %d (pid %ld) exited with status %d after MPI_Finalize", rank,
                            (long)rk->proc.pid, status);
        plx_mpiexec_set_code(status);
    } else if (status != 0) {
        plx_mpiexec_fail(rank, status, "exited with status %d", status);
    }
}

/* SIGCHLD: look at every running rank without reaping it (see the top). */
static void plx_mpiexec_check_children(void)
{
    for (int r = 0; r < plx_mpiexec.size; r++) {
        struct plx_rank *rk = &plx_mpiexec.ranks[r];
        siginfo_t si;

        if (rk->exited || rk->proc.pid <= 0)
            continue;
        memset(&si, 0, sizeof(si));
        if (waitid(P_PID, (id_t)rk->proc.pid, &si, WEXITED | WNOHANG | WNOWAIT) != 0)
            continue;
        if (si.si_pid != rk->proc.pid)
            continue;
        if (si.si_code == CLD_EXITED)
            plx_mpiexec_rank_exited(r, 0, si.si_status);
        else if (si.si_code == CLD_KILLED || si.si_code == CLD_DUMPED)
            plx_mpiexec_rank_exited(r, 1, si.si_status);
    }
}

/* ---- signals ---------------------------------------------------------------------- */

static const int plx_mpiexec_term_signals[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT };
static const int plx_mpiexec_fwd_signals[] = { SIGURG, SIGUSR1, SIGUSR2 };

static void plx_mpiexec_signals_setup(void)
{
    struct plx_mpiexec *m = &plx_mpiexec;
    sigset_t set;

    sigemptyset(&set);
    sigaddset(&set, SIGCHLD);
    /* A signal ignored when we started (nohup, a background job of a
     * non-interactive shell) stays ignored, for us and for the ranks. */
    for (size_t i = 0; i < sizeof(plx_mpiexec_term_signals) / sizeof(int); i++) {
        struct sigaction sa;
        if (sigaction(plx_mpiexec_term_signals[i], NULL, &sa) == 0 && sa.sa_handler == SIG_IGN)
            continue;
        sigaddset(&set, plx_mpiexec_term_signals[i]);
    }
    for (size_t i = 0; i < sizeof(plx_mpiexec_fwd_signals) / sizeof(int); i++)
        sigaddset(&set, plx_mpiexec_fwd_signals[i]);
    if (sigprocmask(SIG_BLOCK, &set, &m->orig_mask) != 0) {
        plx_mpiexec_msg("sigprocmask: %s", strerror(errno));
        exit(1);
    }
    m->sigfd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
    if (m->sigfd < 0) {
        plx_mpiexec_msg("signalfd: %s", strerror(errno));
        exit(1);
    }
    signal(SIGPIPE, SIG_IGN);       /* a closed stdout or PMI socket is an error code */
}

static void plx_mpiexec_signal(int sig)
{
    struct plx_mpiexec *m = &plx_mpiexec;

    if (sig == SIGCHLD)
        return;                     /* plx_mpiexec_signals_read looks at the children */
    if (sig == SIGURG) {            /* "what are you waiting for?": whole groups */
        plx_mpiexec_kill_all(SIGURG);
        return;
    }
    if (sig == SIGUSR1 || sig == SIGUSR2) {
        for (int r = 0; r < m->size; r++)
            if (!m->ranks[r].exited)
                plx_spawn_signal(&m->ranks[r].proc, sig, 0);
        return;
    }
    /* SIGINT, SIGTERM, SIGHUP, SIGQUIT */
    if (++m->signals_seen == 1 && m->phase == PLX_MPIEXEC_RUNNING) {
        plx_mpiexec_msg("got %s: forwarding it to the ranks", plx_mpiexec_signame(sig));
        m->phase = PLX_MPIEXEC_ENDING;
        plx_mpiexec_kill_all(sig);
        m->kill_at = plx_mpiexec_now() + PLX_MPIEXEC_SIGNAL_GRACE;
    } else {
        plx_mpiexec_msg("got %s again: killing the ranks", plx_mpiexec_signame(sig));
        plx_mpiexec_kill_all(SIGKILL);
        m->killed = 1;
    }
}

static void plx_mpiexec_signals_read(void)
{
    struct signalfd_siginfo si;

    while (read(plx_mpiexec.sigfd, &si, sizeof(si)) == (ssize_t)sizeof(si))
        plx_mpiexec_signal((int)si.ssi_signo);
    /* SIGCHLDs coalesce: a look costs little, a missed exit costs a hang. */
    plx_mpiexec_check_children();
}

/* ---- stdin forwarding ---------------------------------------------------------------- */

static void plx_mpiexec_stdin_close(void)
{
    if (plx_mpiexec.in_pipe >= 0)
        close(plx_mpiexec.in_pipe);
    plx_mpiexec.in_pipe = -1;
    plx_mpiexec.in_open = 0;
    plx_mpiexec.in_len = plx_mpiexec.in_off = 0;
}

static void plx_mpiexec_stdin_write(void)
{
    struct plx_mpiexec *m = &plx_mpiexec;

    while (m->in_pipe >= 0 && m->in_off < m->in_len) {
        ssize_t n = write(m->in_pipe, m->in_buf + m->in_off, m->in_len - m->in_off);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && errno == EAGAIN)
            return;
        if (n < 0) {                /* EPIPE: rank 0 closed its stdin */
            plx_mpiexec_stdin_close();
            return;
        }
        m->in_off += (size_t)n;
    }
    m->in_len = m->in_off = 0;
    if (!m->in_open && m->in_pipe >= 0) {
        close(m->in_pipe);          /* our stdin ended: so does rank 0's */
        m->in_pipe = -1;
    }
}

static void plx_mpiexec_stdin_read(void)
{
    struct plx_mpiexec *m = &plx_mpiexec;
    ssize_t n = read(0, m->in_buf, sizeof(m->in_buf));

    if (n < 0 && (errno == EINTR || errno == EAGAIN))
        return;
    if (n <= 0) {
        m->in_open = 0;
        m->in_len = m->in_off = 0;
    } else {
        m->in_len = (size_t)n;
        m->in_off = 0;
    }
    plx_mpiexec_stdin_write();
}

/* Rank 0's stdin: a pipe we feed from ours, or /dev/null when we have no
 * usable stdin (reading a terminal from the background would stop us). */
static int plx_mpiexec_stdin_setup(void)
{
    int p[2];

    if (isatty(0) && tcgetpgrp(0) != getpgrp())
        return -1;
    if (fcntl(0, F_GETFL) < 0 || pipe2(p, O_CLOEXEC) != 0)
        return -1;
    (void)fcntl(p[1], F_SETFL, fcntl(p[1], F_GETFL) | O_NONBLOCK);
    plx_mpiexec.in_pipe = p[1];
    plx_mpiexec.in_open = 1;
    return p[0];
}

/* ---- setup -------------------------------------------------------------------------- */

/* Descriptors 0..2 must exist, or our pipes would land on them. */
static void plx_mpiexec_fix_stdio(void)
{
    for (int fd = 0; fd <= 2; fd++) {
        if (fcntl(fd, F_GETFD) >= 0)
            continue;
        int nfd = open("/dev/null", fd == 0 ? O_RDONLY : O_WRONLY);
        if (nfd >= 0 && nfd != fd) {
            dup2(nfd, fd);
            close(nfd);
        }
    }
}

/* Four descriptors per rank; raise the soft limit as far as needed/allowed.
 * The ranks get the original limit back. */
static void plx_mpiexec_raise_nofile(void)
{
    struct plx_mpiexec *m = &plx_mpiexec;
    struct rlimit rl;
    rlim_t need = (rlim_t)m->size * 4 + 64;

    if (getrlimit(RLIMIT_NOFILE, &m->orig_nofile) != 0 || m->orig_nofile.rlim_cur >= need)
        return;
    rl = m->orig_nofile;
    rl.rlim_cur = need < rl.rlim_max ? need : rl.rlim_max;
    if (setrlimit(RLIMIT_NOFILE, &rl) == 0)
        m->nofile_raised = 1;
    if (rl.rlim_cur < need)
        plx_mpiexec_msg("warning: %d ranks need about %lu file descriptors, the hard limit is "
                        "%lu (raise it with ulimit -Hn)", m->size, (unsigned long)need,
                        (unsigned long)rl.rlim_max);
}

static void plx_mpiexec_make_kvsname(void)
{
    uint32_t r;

    if (getrandom(&r, sizeof(r), GRND_NONBLOCK) != (ssize_t)sizeof(r))
        r = (uint32_t)plx_mpiexec_now() ^ ((uint32_t)getpid() << 12);
    snprintf(plx_mpiexec.kvsname, sizeof(plx_mpiexec.kvsname), "plexus-%ld-%08x",
             (long)getpid(), r);
}

static void plx_mpiexec_setup_job(void)
{
    struct plx_mpiexec *m = &plx_mpiexec;
    static const struct plx_pmisrv_ops ops = {
        .send = plx_mpiexec_pmi_send,
        .abort = plx_mpiexec_pmi_abort,
        .error = plx_mpiexec_pmi_error,
    };
    char mapping[64];
    int *appnum, r = 0;

    m->ranks = plx_mpiexec_xalloc((size_t)m->size * sizeof(struct plx_rank));
    appnum = plx_mpiexec_xalloc((size_t)m->size * sizeof(int));
    for (int a = 0; a < m->napps; a++) {
        struct plx_app *app = &m->apps[a];
        /* The environment a section's ranks get: -genv first, -env wins. */
        char **env = NULL;
        int n = 0, cap = 0;
        for (int i = 0; i < m->ngenv; i++)
            plx_mpiexec_push(&env, &n, &cap, m->genv[i]);
        for (int i = 0; i < app->nenv; i++)
            plx_mpiexec_push(&env, &n, &cap, app->env[i]);
        free(app->env);
        app->env = env;
        app->nenv = n;
        for (int i = 0; i < app->nprocs; i++, r++) {
            m->ranks[r].appnum = a;
            m->ranks[r].proc.pmi_fd = m->ranks[r].proc.out_fd = m->ranks[r].proc.err_fd = -1;
            plx_iofwd_init(&m->ranks[r].out, -1, 1, r, m->tag);    /* until it starts */
            plx_iofwd_init(&m->ranks[r].err, -1, 2, r, m->tag);
            appnum[r] = a;
        }
    }
    plx_mpiexec_make_kvsname();
    /* One host: a single block of `size` ranks on node 0. */
    snprintf(mapping, sizeof(mapping), "(vector,(0,1,%d))", m->size);
    struct plx_pmisrv_cfg cfg = {
        .size = m->size,
        .universe_size = m->size,
        .appnum = appnum,
        .kvsname = m->kvsname,
        .process_mapping = mapping,
    };
    m->pmi = plx_pmisrv_create(&cfg, &ops, NULL);
    free(appnum);
    if (m->pmi == NULL) {
        plx_mpiexec_msg("out of memory");
        exit(1);
    }
}

static int plx_mpiexec_exec_status(int err)
{
    switch (err) {
    case ENOENT:
    case ENOTDIR:
        return 127;
    case EACCES:
    case ENOEXEC:
    case EISDIR:
    case EPERM:
    case ETXTBSY:
        return 126;
    default:
        return 1;
    }
}

static void plx_mpiexec_launch(void)
{
    struct plx_mpiexec *m = &plx_mpiexec;
    int stdin_fd = plx_mpiexec_stdin_setup();

    for (int r = 0; r < m->size; r++) {
        struct plx_rank *rk = &m->ranks[r];
        struct plx_app *app = &m->apps[rk->appnum];
        struct plx_spawn_desc d = {
            .rank = r,
            .size = m->size,
            .local_rank = r,
            .local_size = m->size,
            .argv = app->argv,
            .env = app->env,
            .stdin_fd = r == 0 ? stdin_fd : -1,
            .sigmask = &m->orig_mask,
            .nofile = m->nofile_raised ? &m->orig_nofile : NULL,
        };
        int err = plx_spawn_start(&d, &rk->proc);
        if (r == 0 && stdin_fd >= 0)
            close(stdin_fd);
        if (err != 0) {
            /* Nothing to run: stop here and take down what started. */
            for (int q = r; q < m->size; q++) {
                m->ranks[q].exited = 1;
                m->nexited++;
            }
            if (r == 0)
                plx_mpiexec_stdin_close();
            plx_mpiexec_set_code(plx_mpiexec_exec_status(err));
            m->phase = PLX_MPIEXEC_ENDING;
            plx_mpiexec_kill_all(SIGKILL);
            m->killed = 1;
            return;
        }
        plx_iofwd_init(&rk->out, rk->proc.out_fd, 1, r, m->tag);
        plx_iofwd_init(&rk->err, rk->proc.err_fd, 2, r, m->tag);
    }
    if (m->timeout > 0)
        m->timeout_at = plx_mpiexec_now() + m->timeout;
}

/* ---- the event loop ------------------------------------------------------------------ */

enum plx_mpiexec_fdkind { PLX_FD_SIGNAL, PLX_FD_STDIN, PLX_FD_STDIN_PIPE, PLX_FD_PMI,
                          PLX_FD_OUT, PLX_FD_ERR };

struct plx_mpiexec_fdref {
    enum plx_mpiexec_fdkind kind;
    int rank;
};

static inline void plx_mpiexec_watch(struct pollfd *pfd, struct plx_mpiexec_fdref *ref,
                                     size_t *n_p, int fd, short events,
                                     enum plx_mpiexec_fdkind kind, int rank)
{
    pfd[*n_p] = (struct pollfd){ .fd = fd, .events = events };
    ref[*n_p] = (struct plx_mpiexec_fdref){ .kind = kind, .rank = rank };
    (*n_p)++;
}

static double plx_mpiexec_min_deadline(double a, double b)
{
    if (a == 0)
        return b;
    if (b == 0)
        return a;
    return a < b ? a : b;
}

/* On timeout: a job hung in a PMI barrier (MPI_Init, MPI_Finalize, creating
 * a communicator) may not be able to answer SIGURG, so say who is missing. */
static void plx_mpiexec_report_pmi_barrier(void)
{
    struct plx_mpiexec *m = &plx_mpiexec;
    int waiting = plx_pmisrv_barrier_waiting(m->pmi), shown = 0;
    char list[512];
    size_t len = 0;

    if (waiting == 0)
        return;
    list[0] = '\0';
    for (int r = 0; r < m->size && shown < 16; r++) {
        if (plx_pmisrv_in_barrier(m->pmi, r))
            continue;
        enum plx_pmisrv_state st = plx_pmisrv_state(m->pmi, r);
        const char *why = m->ranks[r].exited ? " (exited)"
                          : st == PLX_PMISRV_NONE ? " (never reached MPI_Init)"
                          : st == PLX_PMISRV_FINALIZED ? " (finalized)" : "";
        int w = snprintf(list + len, sizeof(list) - len, "%s%d%s", shown ? ", " : "", r, why);
        if (w < 0 || (size_t)w >= sizeof(list) - len)
            break;
        len += (size_t)w;
        shown++;
    }
    plx_mpiexec_msg("%d of %d ranks wait in a PMI barrier (MPI_Init, MPI_Finalize or a "
                    "communicator creation) for rank%s %s%s", waiting, m->size,
                    m->size - waiting > 1 ? "s" : "", list,
                    m->size - waiting > shown ? ", ..." : "");
}

/* Acts on every deadline that has passed; returns the next one (0: none). */
static double plx_mpiexec_deadlines(double now)
{
    struct plx_mpiexec *m = &plx_mpiexec;
    double next = 0;

    if (m->phase == PLX_MPIEXEC_RUNNING && m->timeout_at > 0) {
        if (now >= m->timeout_at) {
            m->timed_out = 1;
            m->phase = PLX_MPIEXEC_ENDING;
            plx_mpiexec_msg("timeout of %g s expired: asking every rank what it is waiting "
                            "for (SIGURG); killing the job in %g s", m->timeout,
                            PLX_MPIEXEC_DUMP_GRACE);
            plx_mpiexec_report_pmi_barrier();
            plx_mpiexec_kill_all(SIGURG);
            m->kill_at = now + PLX_MPIEXEC_DUMP_GRACE;
        } else {
            next = plx_mpiexec_min_deadline(next, m->timeout_at);
        }
    }
    if (m->kill_at > 0 && !m->killed) {
        if (now >= m->kill_at) {
            plx_mpiexec_kill_all(SIGKILL);
            m->killed = 1;
        } else {
            next = plx_mpiexec_min_deadline(next, m->kill_at);
        }
    }
    for (int r = 0; r < m->size; r++) {
        struct plx_rank *rk = &m->ranks[r];
        if (rk->pmi_lost_at > 0 && !rk->exited) {
            if (now >= rk->pmi_lost_at + PLX_MPIEXEC_PMI_LOST_GRACE) {
                rk->pmi_lost_at = 0;
                plx_mpiexec_fail(r, 1, "closed its PMI connection without calling "
                                       "MPI_Finalize");
            } else {
                next = plx_mpiexec_min_deadline(next, rk->pmi_lost_at
                                                          + PLX_MPIEXEC_PMI_LOST_GRACE);
            }
        }
        plx_iofwd_flush_partial(&rk->out, now, 0);
        plx_iofwd_flush_partial(&rk->err, now, 0);
        next = plx_mpiexec_min_deadline(next, plx_iofwd_deadline(&rk->out));
        next = plx_mpiexec_min_deadline(next, plx_iofwd_deadline(&rk->err));
    }
    if (m->nexited == m->size) {
        if (!m->leftovers_killed) {
            /* Every rank's main process is gone: whatever is left in their
             * process groups is a leftover. Their output still drains. */
            plx_mpiexec_kill_all(SIGKILL);
            m->leftovers_killed = 1;
            m->drain_until = now + PLX_MPIEXEC_DRAIN_GRACE;
            plx_mpiexec_stdin_close();
        }
        next = plx_mpiexec_min_deadline(next, m->drain_until);
    }
    return next;
}

static int plx_mpiexec_output_open(void)
{
    for (int r = 0; r < plx_mpiexec.size; r++)
        if (plx_mpiexec.ranks[r].out.fd >= 0 || plx_mpiexec.ranks[r].err.fd >= 0)
            return 1;
    return 0;
}

static void plx_mpiexec_loop(void)
{
    struct plx_mpiexec *m = &plx_mpiexec;
    size_t max = (size_t)m->size * 3 + 3;
    struct pollfd *pfd = plx_mpiexec_xalloc(max * sizeof(*pfd));
    struct plx_mpiexec_fdref *ref = plx_mpiexec_xalloc(max * sizeof(*ref));

    for (;;) {
        double now = plx_mpiexec_now();
        double next = plx_mpiexec_deadlines(now);
        size_t n = 0;

        if (m->nexited == m->size && (!plx_mpiexec_output_open() || now >= m->drain_until))
            break;
        plx_mpiexec_watch(pfd, ref, &n, m->sigfd, POLLIN, PLX_FD_SIGNAL, -1);
        if (m->in_open && m->in_pipe >= 0 && m->in_len == 0)
            plx_mpiexec_watch(pfd, ref, &n, 0, POLLIN, PLX_FD_STDIN, -1);
        if (m->in_pipe >= 0 && m->in_len > m->in_off)
            plx_mpiexec_watch(pfd, ref, &n, m->in_pipe, POLLOUT, PLX_FD_STDIN_PIPE, -1);
        for (int r = 0; r < m->size; r++) {
            struct plx_rank *rk = &m->ranks[r];
            if (rk->proc.pmi_fd >= 0)
                plx_mpiexec_watch(pfd, ref, &n, rk->proc.pmi_fd, POLLIN, PLX_FD_PMI, r);
            if (rk->out.fd >= 0)
                plx_mpiexec_watch(pfd, ref, &n, rk->out.fd, POLLIN, PLX_FD_OUT, r);
            if (rk->err.fd >= 0)
                plx_mpiexec_watch(pfd, ref, &n, rk->err.fd, POLLIN, PLX_FD_ERR, r);
        }

        int timeout_ms = -1;
        if (next > 0) {
            double ms = ceil((next - now) * 1000.0);
            timeout_ms = ms < 0 ? 0 : ms > 60000 ? 60000 : (int)ms;
        }
        int rc = poll(pfd, n, timeout_ms);
        if (rc < 0) {
            if (errno == EINTR)
                continue;
            plx_mpiexec_msg("poll: %s", strerror(errno));
            plx_mpiexec_kill_all(SIGKILL);
            exit(1);
        }
        now = plx_mpiexec_now();
        /* Signals first: a rank's exit must be known before its EOFs. */
        if (pfd[0].revents != 0)
            plx_mpiexec_signals_read();
        for (size_t i = 1; i < n; i++) {
            if (pfd[i].revents == 0)
                continue;
            int r = ref[i].rank;
            switch (ref[i].kind) {
            case PLX_FD_STDIN:
                if (m->in_open)
                    plx_mpiexec_stdin_read();
                break;
            case PLX_FD_STDIN_PIPE:
                plx_mpiexec_stdin_write();
                break;
            case PLX_FD_PMI:
                if (m->ranks[r].proc.pmi_fd >= 0)
                    plx_mpiexec_pmi_readable(r, now);
                break;
            case PLX_FD_OUT:
                if (m->ranks[r].out.fd >= 0)
                    plx_iofwd_pump(&m->ranks[r].out, now);
                break;
            case PLX_FD_ERR:
                if (m->ranks[r].err.fd >= 0)
                    plx_iofwd_pump(&m->ranks[r].err, now);
                break;
            case PLX_FD_SIGNAL:
                break;
            }
        }
    }
    free(pfd);
    free(ref);
}

/* Collects the zombies and releases everything. */
static void plx_mpiexec_cleanup(void)
{
    struct plx_mpiexec *m = &plx_mpiexec;

    for (int r = 0; r < m->size; r++) {
        struct plx_rank *rk = &m->ranks[r];
        plx_iofwd_close(&rk->out);
        plx_iofwd_close(&rk->err);
        if (rk->proc.pmi_fd >= 0)
            plx_mpiexec_pmi_close(r);
        if (rk->proc.pid > 0) {
            while (waitpid(rk->proc.pid, NULL, 0) < 0 && errno == EINTR)
                ;
        }
    }
    plx_mpiexec_stdin_close();
    plx_pmisrv_destroy(m->pmi);
    free(m->ranks);
    close(m->sigfd);
}

int main(int argc, char **argv)
{
    struct plx_mpiexec *m = &plx_mpiexec;
    int code;

    plx_mpiexec_fix_stdio();
    plx_mpiexec_parse(argc, argv);
    plx_mpiexec_signals_setup();
    plx_mpiexec_raise_nofile();
    plx_mpiexec_setup_job();
    plx_mpiexec_launch();
    plx_mpiexec_loop();
    plx_mpiexec_cleanup();

    if (m->timed_out) {
        plx_mpiexec_msg("job timed out after %g s", m->timeout);
        return PLX_MPIEXEC_EXIT_TIMEOUT;
    }
    code = m->have_code ? m->code : 0;
    if (code != 0 && (code & 0xff) == 0)
        code = 1;                   /* exit(256) would read as success */
    return code & 0xff;
}
