/*
 * mpiexec (and mpirun, the same program): runs an MPI job on this host, or
 * across hosts (-hosts, -hostfile) with one plexus-proxy per host (remote.c).
 *
 * One event loop (poll) serves: the signals (signalfd: SIGCHLD and the ones
 * forwarded to the ranks), the PMI-1 connections (pmi_server.c), the ranks'
 * stdout/stderr (iofwd.c), our stdin (forwarded to rank 0), the deadlines
 * (--timeout, kill escalation, partial-line flushes) and, for a multi-host
 * job, the proxies' connections (which carry the same PMI, output, stdin,
 * signals and exits for the ranks of their hosts).
 *
 * Job rules: a rank that dies by a signal, that exits after PMI init without
 * finalize, or that exits non-zero without ever speaking PMI ends the job: we
 * say which rank and how, SIGTERM every rank's process group at once and
 * SIGKILL them 1 s later. A host whose proxy cannot be started or stops
 * answering ends the job the same way, naming the host and its ranks. A
 * rank's main process is left a zombie (observed with waitid(WNOWAIT)) until
 * the job is over, so its process-group id cannot be reused while we may
 * still signal the group. No process of the job outlives mpiexec: leftovers
 * in the ranks' groups are SIGKILLed at the end, and PR_SET_PDEATHSIG covers
 * mpiexec itself being killed (a proxy loses its connection and kills its
 * ranks). (A descendant that leaves its rank's process group, e.g. with
 * setsid, escapes both.)
 *
 * All mutable state is in plx_mpiexec (mpiexec.h).
 */
#include <dirent.h>
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

#include "mpiexec.h"
#include "util/util.h"

#ifndef PLX_VERSION_STRING
#define PLX_VERSION_STRING "unknown"
#endif

struct plx_mpiexec plx_mpiexec = { .sigfd = -1, .in_pipe = -1, .listen_fd = -1,
                                   .host_timeout = PLX_MPIEXEC_HOST_TIMEOUT };

/* ---- small helpers -------------------------------------------------------- */

/* The launcher's clock (src/util's); one function, so that the fuzz target
 * of remote.c can stand in a fixed time. */
double plx_mpiexec_now(void)
{
    return plx_util_now();
}

void plx_mpiexec_msg(const char *fmt, ...)
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
    if (!plx_mpiexec.first_msg[0])
        snprintf(plx_mpiexec.first_msg, sizeof plx_mpiexec.first_msg, "%.*s", n, buf);
    /* One write per message so it is never torn by rank output. */
    dprintf(2, "mpiexec%s: %.*s\n", plx_mpiexec.report_port ? " (spawned job)" : "", n, buf);
}

_Noreturn void plx_mpiexec_usage_error(const char *fmt, ...)
{
    char buf[512];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    dprintf(2, "mpiexec: %s\nTry 'mpiexec --help' for more information.\n", buf);
    exit(PLX_MPIEXEC_EXIT_USAGE);
}

void *plx_mpiexec_xalloc(size_t n)
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
"Runs N copies of program as one MPI job (Plexus %s), on this host or, with\n"
"-hosts or -hostfile, across hosts. Sections separated by ':' start different\n"
"programs in one job (MPMD).\n"
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
"  -v, --verbose         say which addresses and launch commands are used\n"
"  -usize N              MPI_UNIVERSE_SIZE: at most N processes at a time, this\n"
"                        job's and those it spawns (default: the job's size,\n"
"                        and MPI_Comm_spawn is not limited)\n"
"  -h, --help            show this help\n"
"  --version             show the version\n"
"Options take one or two dashes; a one-value option also takes --opt=value.\n"
"\n"
"Jobs across hosts:\n"
"  -hosts H1,H2[:SLOTS],...   run on these hosts (also -host)\n"
"  -hostfile FILE        hosts from FILE, one per line: 'host', 'host:SLOTS' or\n"
"                        'host slots=SLOTS'; '#' comments (also -f, -machinefile)\n"
"  -app-hosts H1,H2[:SLOTS],...  this program's ranks run on these hosts, placed\n"
"                        over them as -hosts places a job's (an MPMD section's\n"
"                        own option; the other sections use the job's hosts,\n"
"                        or this host without -hosts)\n"
"  -app-hostfile FILE    the same from a host file\n"
"  -ppn N                N consecutive ranks per host (also -perhost); without\n"
"                        it each host takes as many as its SLOTS (default 1),\n"
"                        then placement starts again at the first host.\n"
"                        Without -n the job has ppn x hosts (or all slots) ranks.\n"
"  --launcher NAME       how proxies are started: ssh (the default for other\n"
"                        hosts: 'ssh -x -o BatchMode=yes HOST ...') or fork (on\n"
"                        this machine; the default for localhost/this host)\n"
"  --launcher-exec 'COMMAND {host}'\n"
"                        start each proxy with this shell command, {host}\n"
"                        replaced by the host name (appended when absent) and\n"
"                        the proxy's command line appended, e.g.\n"
"                        'ip netns exec {host}' or 'ssh -p 2222 {host}'\n"
"  --host-timeout SECONDS  a host that stops answering for this long is lost:\n"
"                        the job ends naming it (default %g)\n"
"  --proxy PATH          the plexus-proxy program (default: next to mpiexec; the\n"
"                        same path must exist on every host)\n"
"On each host a plexus-proxy starts the local ranks, forwards their output and\n"
"signals and relays PMI; it connects back to mpiexec over TCP and proves itself\n"
"with a random per-job secret (in its environment and on its stdin, never on a\n"
"command line). mpiexec advertises the addresses PLEXUS_IFACES selects, the\n"
"same setting the TCP transport uses: interface names or CIDR blocks,\n"
"comma-separated, '^' excludes (e.g. PLEXUS_IFACES=eth1 or ^docker0,^virbr0);\n"
"default every up non-loopback address (loopback when there is none, or when\n"
"every proxy runs on this machine). The proxy tries them in order (the order\n"
"of the include terms when given) and keeps the first that connects and\n"
"accepts the secret. mpiexec's listening\n"
"port comes from PLEXUS_TCP_PORTS (lo-hi) when set. Ranks get mpiexec's\n"
"environment (except HOSTNAME, PWD, SHLVL, SSH_*, PMI_* and PLEXUS_NODE_NAME)\n"
"and start in its working directory when the host has it.\n"
"\n"
"Binding: when a host runs 2 or more ranks and no more than its CPUs, local\n"
"rank i is bound to the i-th CPU it may use (PLEXUS_BIND=core, the default);\n"
"PLEXUS_BIND=none leaves placement to the scheduler. A rank bound by default\n"
"also gets PLEXUS_MPIEXEC_CPUS, the CPUs it was bound from (with\n"
"PLEXUS_SCTP_UNBIND=1, a rank whose traffic all goes over SCTP gives the\n"
"binding up).\n"
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
"  255      a host was lost: its proxy could not start, died or stopped\n"
"           answering\n"
"  2        invalid command line\n", PLX_VERSION_STRING, PLX_MPIEXEC_HOST_TIMEOUT);
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
                app->nprocs_given = 1;
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
            } else if (plx_mpiexec_opt(a, "hosts", &inl) || plx_mpiexec_opt(a, "host", &inl)) {
                char err[512];
                v = plx_mpiexec_optval(argc, argv, &i, inl, a);
                if (plx_hosts_add_list(&m->hostlist, v, err, sizeof(err)) != 0)
                    plx_mpiexec_usage_error("%s: %s", a, err);
            } else if (plx_mpiexec_opt(a, "hostfile", &inl) || plx_mpiexec_opt(a, "f", &inl)
                       || plx_mpiexec_opt(a, "machinefile", &inl)) {
                char err[512];
                v = plx_mpiexec_optval(argc, argv, &i, inl, a);
                if (plx_hosts_add_file(&m->hostlist, v, err, sizeof(err)) != 0)
                    plx_mpiexec_usage_error("%s: %s", a, err);
            } else if (plx_mpiexec_opt(a, "app-hosts", &inl)) {
                char err[512];
                v = plx_mpiexec_optval(argc, argv, &i, inl, a);
                if (plx_hosts_add_list(&app->hosts, v, err, sizeof(err)) != 0)
                    plx_mpiexec_usage_error("%s: %s", a, err);
            } else if (plx_mpiexec_opt(a, "app-hostfile", &inl)) {
                char err[512];
                v = plx_mpiexec_optval(argc, argv, &i, inl, a);
                if (plx_hosts_add_file(&app->hosts, v, err, sizeof(err)) != 0)
                    plx_mpiexec_usage_error("%s: %s", a, err);
            } else if (plx_mpiexec_opt(a, "ppn", &inl) || plx_mpiexec_opt(a, "perhost", &inl)) {
                v = plx_mpiexec_optval(argc, argv, &i, inl, a);
                errno = 0;
                long n = strtol(v, &end, 10);
                if (errno != 0 || end == v || *end != '\0' || n < 1
                    || n > PLX_MPIEXEC_MAX_PROCS)
                    plx_mpiexec_usage_error("%s needs a number of processes per host between 1 "
                                            "and %d, got '%s'", a, PLX_MPIEXEC_MAX_PROCS, v);
                m->ppn = (int)n;
            } else if (plx_mpiexec_opt(a, "launcher", &inl)
                       || plx_mpiexec_opt(a, "bootstrap", &inl)) {
                v = plx_mpiexec_optval(argc, argv, &i, inl, a);
                if (strcmp(v, "ssh") == 0)
                    m->launcher = PLX_LAUNCHER_SSH;
                else if (strcmp(v, "fork") == 0)
                    m->launcher = PLX_LAUNCHER_FORK;
                else
                    plx_mpiexec_usage_error("%s: unknown launcher '%s' (ssh or fork; any other "
                                            "command with --launcher-exec)", a, v);
            } else if (plx_mpiexec_opt(a, "launcher-exec", &inl)
                       || plx_mpiexec_opt(a, "bootstrap-exec", &inl)) {
                v = plx_mpiexec_optval(argc, argv, &i, inl, a);
                if (v[0] == '\0')
                    plx_mpiexec_usage_error("%s needs a command", a);
                m->launcher_exec = v;
            } else if (plx_mpiexec_opt(a, "host-timeout", &inl)) {
                v = plx_mpiexec_optval(argc, argv, &i, inl, a);
                errno = 0;
                double t = strtod(v, &end);
                if (errno != 0 || end == v || *end != '\0' || !isfinite(t) || t < 0.1
                    || t > 86400)
                    plx_mpiexec_usage_error("--host-timeout needs a number of seconds (at least "
                                            "0.1), got '%s'", v);
                m->host_timeout = t;
            } else if (plx_mpiexec_opt(a, "usize", &inl) || plx_mpiexec_opt(a, "universe-size", &inl)) {
                v = plx_mpiexec_optval(argc, argv, &i, inl, a);
                errno = 0;
                long n = strtol(v, &end, 10);
                if (errno != 0 || end == v || *end != '\0' || n < 1 || n > PLX_MPIEXEC_MAX_PROCS)
                    plx_mpiexec_usage_error("%s needs a number of processes between 1 and %d, got '%s'", a,
                                            PLX_MPIEXEC_MAX_PROCS, v);
                m->usize = (int)n;
            } else if (plx_mpiexec_opt(a, "spawn-report", &inl)) {
                m->report_port = plx_mpiexec_optval(argc, argv, &i, inl, a);
            } else if (plx_mpiexec_opt(a, "proxy", &inl)) {
                m->proxy_path = plx_mpiexec_optval(argc, argv, &i, inl, a);
            } else if ((plx_mpiexec_opt(a, "v", &inl) || plx_mpiexec_opt(a, "verbose", &inl))
                       && inl == NULL) {
                m->verbose = 1;
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

    /* Inside a Slurm allocation (sbatch, salloc) and without -hosts or
     * -hostfile: the allocation's hosts and slots, as Hydra takes them;
     * proxies on other hosts start through srun (a step overlapping the
     * allocation's), unless a launcher is named. */
    const char *slurm_nodes = getenv("SLURM_JOB_NODELIST");
    if (!slurm_nodes)
        slurm_nodes = getenv("SLURM_NODELIST");
    if (m->hostlist.n == 0 && getenv("SLURM_JOB_ID") && slurm_nodes && *slurm_nodes) {
        const char *per = getenv("SLURM_TASKS_PER_NODE");
        char err[512];
        if (!per)
            per = getenv("SLURM_JOB_CPUS_PER_NODE");
        if (plx_hosts_add_slurm(&m->hostlist, slurm_nodes, per, err, sizeof err) != 0)
            plx_mpiexec_usage_error("the Slurm allocation (SLURM_JOB_NODELIST=%s): %s", slurm_nodes, err);
        if (m->launcher == PLX_LAUNCHER_DEFAULT && m->launcher_exec == NULL) {
            m->launcher_exec = "srun --overlap --nodes=1 --ntasks=1 --mpi=none --nodelist={host}";
            m->exec_forks_local = 1;
        }
    }
    if (m->launcher_exec != NULL && m->launcher != PLX_LAUNCHER_DEFAULT)
        plx_mpiexec_usage_error("--launcher and --launcher-exec exclude each other");
    if (m->launcher_exec != NULL)
        m->launcher = PLX_LAUNCHER_EXEC;
    m->multi = m->hostlist.n > 0;
    for (int a = 0; a < m->napps; a++)
        m->multi |= m->apps[a].hosts.n > 0;
    if (!m->multi && m->launcher != PLX_LAUNCHER_DEFAULT)
        plx_mpiexec_usage_error("--launcher and --launcher-exec need -hosts or -hostfile");
    /* Without -n, a multi-host job fills its hosts (as Hydra does). */
    if (m->multi && m->napps == 1 && !m->apps[0].nprocs_given) {
        const struct plx_hostlist *hl = m->apps[0].hosts.n > 0 ? &m->apps[0].hosts : &m->hostlist;
        long n = m->ppn > 0 ? (long)m->ppn * hl->n : plx_hosts_slots(hl);
        m->apps[0].nprocs = n > PLX_MPIEXEC_MAX_PROCS ? PLX_MPIEXEC_MAX_PROCS : (int)n;
    }

    long total = 0;
    for (int a = 0; a < m->napps; a++)
        total += m->apps[a].nprocs;
    if (total > PLX_MPIEXEC_MAX_PROCS)
        plx_mpiexec_usage_error("%ld processes is more than this mpiexec supports (%d)", total,
                                PLX_MPIEXEC_MAX_PROCS);
    m->size = (int)total;
    if (m->usize > 0 && m->usize < m->size)
        plx_mpiexec_usage_error("-usize %d is less than the job's %d processes", m->usize, m->size);
}

/* ---- job control ------------------------------------------------------------- */

void plx_mpiexec_kill_all(int sig)
{
    for (int r = 0; r < plx_mpiexec.size; r++)
        plx_spawn_signal(&plx_mpiexec.ranks[r].proc, sig, 1);
    if (plx_mpiexec.multi)
        plx_mpiexec_remote_signal(sig, 1);
    /* Spawned jobs: not the "leftovers" SIGKILL once every rank of ours is
     * gone (after a normal end they end on their own; when the job is
     * ending they have had SIGTERM and end their ranks themselves). */
    if (sig != SIGKILL || plx_mpiexec.nexited < plx_mpiexec.size)
        plx_subjob_signal(sig);
    else if (plx_mpiexec.phase != PLX_MPIEXEC_RUNNING)
        plx_subjob_signal(SIGTERM);
}

const char *plx_mpiexec_rank_name(int rank, char *buf, size_t len)
{
    const struct plx_rank *rk = &plx_mpiexec.ranks[rank];

    if (rk->host < 0)
        snprintf(buf, len, "rank %d (pid %ld)", rank, (long)rk->proc.pid);
    else if (rk->rpid > 0)
        snprintf(buf, len, "rank %d (pid %ld on host %s)", rank, rk->rpid,
                 plx_mpiexec.hosts[rk->host].name);
    else
        snprintf(buf, len, "rank %d (on host %s)", rank, plx_mpiexec.hosts[rk->host].name);
    return buf;
}

void plx_mpiexec_set_code(int code)
{
    if (plx_mpiexec.have_code)
        return;
    plx_mpiexec.have_code = 1;
    plx_mpiexec.code = code;
}

void plx_mpiexec_end_job(double grace)
{
    plx_mpiexec.phase = PLX_MPIEXEC_ENDING;
    plx_mpiexec_kill_all(SIGTERM);
    plx_mpiexec.kill_at = plx_mpiexec_now() + grace;
}

/* A rank failed: name it and the cause, then end the job. */
void plx_mpiexec_fail(int rank, int code, const char *fmt, ...)
{
    char what[512], name[320];
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
    plx_mpiexec_rank_name(rank, name, sizeof(name));
    if (live > 0)
        plx_mpiexec_msg("%s %s; killing the other %d running rank%s", name, what, live,
                        live > 1 ? "s" : "");
    else
        plx_mpiexec_msg("%s %s", name, what);
    plx_mpiexec_set_code(code);
    plx_mpiexec_end_job(PLX_MPIEXEC_KILL_GRACE);
}

/* ---- PMI plumbing --------------------------------------------------------------- */

static int plx_mpiexec_pmi_send(void *ctx, int rank, const char *buf, size_t len)
{
    int fd = plx_mpiexec.ranks[rank].proc.pmi_fd;

    (void)ctx;
    if (plx_mpiexec.ranks[rank].host >= 0)
        return plx_mpiexec_remote_pmi_send(rank, buf, len);
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
    char name[320];
    plx_mpiexec_msg("%s aborted the job with exit code %d%s%s",
                    plx_mpiexec_rank_name(rank, name, sizeof(name)), code, msg[0] ? ": " : "",
                    msg);
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

void plx_mpiexec_rank_exited(int rank, int signaled, int status)
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
    if (rank == 0 && rk->host >= 0)
        plx_mpiexec.in_open = 0;    /* its proxy closed the pipe */

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
        char name[320];
        if (plx_mpiexec.phase == PLX_MPIEXEC_RUNNING)
            plx_mpiexec_msg("%s exited with status %d after MPI_Finalize",
                            plx_mpiexec_rank_name(rank, name, sizeof(name)), status);
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
        if (m->multi)
            plx_mpiexec_remote_signal(sig, 0);
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
    if (plx_mpiexec.multi)
        plx_mpiexec_remote_check_children(plx_mpiexec_now());
    plx_subjob_check();
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
    if (m->multi) {
        /* rank 0 runs under a proxy: one chunk in flight at a time */
        if (n <= 0)
            m->in_open = 0;
        plx_mpiexec_remote_stdin_send(m->in_buf, n > 0 ? (size_t)n : 0);
        return;
    }
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
    if (plx_mpiexec.multi) {
        /* rank 0's proxy makes the pipe; we only read ours */
        plx_mpiexec.in_open = fcntl(0, F_GETFL) >= 0;
        return -1;
    }
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
    rlim_t need = (rlim_t)m->size * 4 + 64, now;

    int r = plx_util_raise_nofile(need, &m->orig_nofile, &now);
    if (r < 0)
        return;
    if (r == 1)
        m->nofile_raised = 1;
    if (now < need)
        plx_mpiexec_msg("warning: %d ranks need about %lu file descriptors, the hard limit is "
                        "%lu (raise it with ulimit -Hn)", m->size, (unsigned long)need,
                        (unsigned long)m->orig_nofile.rlim_max);
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
        .spawn = plx_subjob_spawn,
    };
    char mapping[4096];
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
            m->ranks[r].host = -1;
            m->ranks[r].proc.pmi_fd = m->ranks[r].proc.out_fd = m->ranks[r].proc.err_fd = -1;
            plx_iofwd_init(&m->ranks[r].out, -1, 1, r, m->tag);    /* until it starts */
            plx_iofwd_init(&m->ranks[r].err, -1, 2, r, m->tag);
            appnum[r] = a;
        }
    }
    plx_mpiexec_make_kvsname();
    const char *map = mapping;
    if (m->multi) {
        plx_mpiexec_remote_place();
        map = plx_mpiexec_remote_mapping(mapping, sizeof(mapping));
    } else {
        /* One host: a single block of `size` ranks on node 0. */
        snprintf(mapping, sizeof(mapping), "(vector,(0,1,%d))", m->size);
    }
    /* The TCP transport's handshake secret, handed out through PMI. */
    int have_secret = plx_wire_secret_make(m->job_secret) == 0;
    struct plx_pmisrv_cfg cfg = {
        .size = m->size,
        .universe_size = m->usize > 0 ? m->usize : m->size,
        .appnum = appnum,
        .kvsname = m->kvsname,
        .process_mapping = map,
        .job_secret = have_secret ? m->job_secret : NULL,
    };
    m->pmi = plx_pmisrv_create(&cfg, &ops, NULL);
    free(appnum);
    if (m->pmi == NULL) {
        plx_mpiexec_msg("out of memory");
        exit(1);
    }
}

int plx_mpiexec_exec_status(int err)
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

    if (m->multi) {
        if (m->timeout > 0)
            m->timeout_at = plx_mpiexec_now() + m->timeout;
        plx_mpiexec_remote_launch();
        return;
    }
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
                          PLX_FD_OUT, PLX_FD_ERR, PLX_FD_REMOTE };

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

double plx_mpiexec_min_deadline(double a, double b)
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
        double grace = rk->host < 0 ? PLX_MPIEXEC_PMI_LOST_GRACE
                                    : PLX_MPIEXEC_PMI_LOST_GRACE_REMOTE;
        if (rk->pmi_lost_at > 0 && !rk->exited) {
            if (now >= rk->pmi_lost_at + grace) {
                rk->pmi_lost_at = 0;
                plx_mpiexec_fail(r, 1, "closed its PMI connection without calling "
                                       "MPI_Finalize");
            } else {
                next = plx_mpiexec_min_deadline(next, rk->pmi_lost_at + grace);
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
            m->drain_until = now + (m->multi ? PLX_MPIEXEC_DRAIN_GRACE_REMOTE
                                             : PLX_MPIEXEC_DRAIN_GRACE);
            plx_mpiexec_stdin_close();
            if (m->multi)
                plx_mpiexec_remote_all_exited();
        }
        next = plx_mpiexec_min_deadline(next, m->drain_until);
    }
    if (m->multi)
        next = plx_mpiexec_min_deadline(next, plx_mpiexec_remote_deadlines(now));
    return next;
}

static int plx_mpiexec_output_open(void)
{
    for (int r = 0; r < plx_mpiexec.size; r++)
        if (plx_iofwd_open(&plx_mpiexec.ranks[r].out) || plx_iofwd_open(&plx_mpiexec.ranks[r].err))
            return 1;
    return plx_mpiexec.multi && plx_mpiexec_remote_open();
}

static void plx_mpiexec_loop(void)
{
    struct plx_mpiexec *m = &plx_mpiexec;
    size_t max = (size_t)m->size * 3 + 3 + (m->multi ? plx_mpiexec_remote_max_fds() : 0);
    struct pollfd *pfd = plx_mpiexec_xalloc(max * sizeof(*pfd));
    struct plx_mpiexec_fdref *ref = plx_mpiexec_xalloc(max * sizeof(*ref));
    int *tags = plx_mpiexec_xalloc(max * sizeof(int));

    for (;;) {
        double now = plx_mpiexec_now();
        double next = plx_mpiexec_deadlines(now);
        size_t n = 0;

        if (m->nexited == m->size && plx_subjob_live() == 0 &&
            (!plx_mpiexec_output_open() || now >= m->drain_until))
            break;
        plx_mpiexec_watch(pfd, ref, &n, m->sigfd, POLLIN, PLX_FD_SIGNAL, -1);
        if (m->in_open && m->in_pipe >= 0 && m->in_len == 0)
            plx_mpiexec_watch(pfd, ref, &n, 0, POLLIN, PLX_FD_STDIN, -1);
        if (m->multi && m->in_open && plx_mpiexec_remote_stdin_ready())
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
        if (m->multi) {
            size_t first = n;
            plx_mpiexec_remote_watch(pfd, tags, &n);
            for (size_t i = first; i < n; i++)
                ref[i] = (struct plx_mpiexec_fdref){ .kind = PLX_FD_REMOTE, .rank = tags[i] };
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
            case PLX_FD_REMOTE:
                plx_mpiexec_remote_ready(r, pfd[i].revents, now);
                break;
            case PLX_FD_SIGNAL:
                break;
            }
        }
    }
    free(pfd);
    free(ref);
    free(tags);
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
            plx_spawn_sweep_pid(rk->proc.pid);
        }
    }
    plx_mpiexec_stdin_close();
    if (m->multi)
        plx_mpiexec_remote_cleanup();
    plx_spawn_sweep_shm(m->kvsname);
    plx_pmisrv_destroy(m->pmi);
    free(m->ranks);
    close(m->sigfd);
}

/* MPI_Publish_name's names, shared with the jobs this one spawns (and with
 * any mpiexec started with the same PLEXUS_NAME_DIR): unless given, a
 * directory of our own, made by the first publish (pmi_server.c) and
 * removed when this mpiexec ends. 1 when it is ours. */
static int plx_mpiexec_names_setup(void)
{
    const char *d = getenv("PLEXUS_NAME_DIR");
    if (d != NULL && d[0] != '\0')
        return 0;
    char dir[128];
    snprintf(dir, sizeof dir, "%s/plexus-names-%d-%lx", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", (int)getpid(),
             (unsigned long)time(NULL));
    setenv("PLEXUS_NAME_DIR", dir, 1);
    return 1;
}

static void plx_mpiexec_names_remove(void)
{
    const char *dir = getenv("PLEXUS_NAME_DIR");
    DIR *d = dir ? opendir(dir) : NULL;
    if (d == NULL)
        return;
    struct dirent *e;
    char path[4200];
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        unlink(path);
    }
    closedir(d);
    rmdir(dir);
}

int main(int argc, char **argv)
{
    struct plx_mpiexec *m = &plx_mpiexec;
    int code;

    plx_mpiexec_fix_stdio();
    plx_mpiexec_parse(argc, argv);
    const char *bind = getenv("PLEXUS_BIND");
    if (bind != NULL && strcmp(bind, "core") != 0 && strcmp(bind, "none") != 0)
        plx_mpiexec_usage_error("PLEXUS_BIND must be 'core' or 'none', not '%s'", bind);
    plx_mpiexec_signals_setup();
    plx_mpiexec_raise_nofile();
    int own_names = plx_mpiexec_names_setup();
    plx_mpiexec_setup_job();
    plx_mpiexec_launch();
    plx_mpiexec_loop();
    plx_mpiexec_cleanup();
    if (own_names)
        plx_mpiexec_names_remove();

    if (m->timed_out) {
        plx_mpiexec_msg("job timed out after %g s", m->timeout);
        return PLX_MPIEXEC_EXIT_TIMEOUT;
    }
    code = m->have_code ? m->code : 0;
    if (code != 0 && (code & 0xff) == 0)
        code = 1;                   /* exit(256) would read as success */
    return plx_subjob_report(code & 0xff);
}
