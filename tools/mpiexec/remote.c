/*
 * Multi-host jobs: mpiexec's side of the proxies (wire.h has the protocol).
 *
 * mpiexec places the ranks on the hosts (hosts.c), opens one listening TCP
 * socket and starts one plexus-proxy per host that received ranks: forked
 * directly when the host is this machine (or --launcher fork), through ssh
 * (the default for other hosts), or through the shell command given with
 * --launcher-exec. The proxy secret goes into the launcher's environment and
 * onto its stdin (ssh passes no environment), never onto a command line.
 *
 * Every connection must say HELLO with that secret within
 * PLX_MPIEXEC_HELLO_TIMEOUT; anything else is refused, logged (the first few
 * times) and closed, and at most PLX_MPIEXEC_PENDING_MAX unauthenticated
 * connections are held at once, so a stray client or a port scanner costs
 * the job nothing. An accepted proxy gets LAUNCH and from then on its
 * frames feed the same machinery as local ranks: the PMI server, the output
 * forwarders and plx_mpiexec_rank_exited().
 *
 * A host is lost when its proxy cannot be started (the launcher exits before
 * the proxy connects, or it does not connect within
 * PLX_MPIEXEC_LAUNCH_TIMEOUT), or its connection ends while it still has
 * running ranks: closed (the proxy died), reset, or timed out (the host
 * stopped answering for --host-timeout seconds: keepalive when idle, no
 * acknowledgement of data in flight otherwise; see wire.h).
 * The job then ends with a message naming the host and its ranks, exit
 * status 255.
 */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "util/iface.h"
#include "util/util.h"
#include "mpiexec.h"

#define PLX_MPIEXEC_HELLO_TIMEOUT 10.0      /* a new connection must say HELLO by then */
#define PLX_MPIEXEC_HELLO_MAX 4096          /* bytes of a HELLO frame, at most */
#define PLX_MPIEXEC_LAUNCH_TIMEOUT 60.0     /* a proxy must connect by then */
#define PLX_MPIEXEC_LAUNCHER_GRACE 0.5      /* launcher gone: its proxy may still be queued */
#define PLX_MPIEXEC_ABANDON_GRACE 3.0       /* after SIGKILL: proxies that do not report */
#define PLX_MPIEXEC_REFUSALS_SHOWN 8
#define PLX_MPIEXEC_LAUNCHER_WAIT 2.0       /* at the end, for launchers to exit */

/* pollfd tags */
#define PLX_TAG_LISTEN 0
#define PLX_TAG_PENDING(i) (1 + (i))
#define PLX_TAG_HOST(h) (1 + PLX_MPIEXEC_PENDING_MAX + (h))

extern char **environ;

static char **plx_remote_fwd_env;   /* mpiexec's environment for the ranks */
static int plx_remote_nfwd_env;
static double plx_remote_next_stall_check;

/* ---- placement ----------------------------------------------------------------------- */

/* Index of host `name` among names[0..*n), appended when new. */
static int plx_remote_host_index(const char **names, int *n, const char *name)
{
    for (int i = 0; i < *n; i++)
        if (strcmp(names[i], name) == 0)
            return i;
    names[*n] = name;
    return (*n)++;
}

/* Where each rank runs. The ranks of programs without -app-hosts are placed
 * over the job's host list as if they were the whole job (so a job without
 * -app-hosts is placed as it always was); a program with its own list has
 * its ranks placed over that list, from its first host. Without -hosts, the
 * programs without a list run on this host (by its host name). The hosts that
 * get ranks are numbered in the order of their first rank, so that with one
 * list they are a prefix of it, in order. */
static void plx_remote_place_ranks(int *host_of, const char **names)
{
    struct plx_mpiexec *m = &plx_mpiexec;
    int *job_host = plx_mpiexec_xalloc((size_t)m->size * sizeof(int));
    int *app_host = plx_mpiexec_xalloc((size_t)m->size * sizeof(int));
    /* this host by its name, which a --launcher-exec command understands
     * (ip netns exec NAME) where it may not understand "localhost" */
    static char here[PLX_HOSTS_NAME_MAX + 1];
    if (gethostname(here, sizeof here - 1) != 0 || !plx_hosts_name_ok(here))
        snprintf(here, sizeof here, "localhost");
    /* ...unless a program's list names this host already: one host, one proxy */
    const char *this_host = here;
    for (int a = m->napps - 1; a >= 0; a--)
        for (int h = m->apps[a].hosts.n - 1; h >= 0; h--)
            if (plx_hosts_is_local(m->apps[a].hosts.h[h].name))
                this_host = m->apps[a].hosts.h[h].name;
    if (m->hostlist.n > 0)
        plx_hosts_place(&m->hostlist, m->size, m->ppn, job_host);
    int r = 0;
    for (int a = 0; a < m->napps; a++) {
        const struct plx_app *app = &m->apps[a];
        if (app->hosts.n > 0)
            plx_hosts_place(&app->hosts, app->nprocs, m->ppn, app_host);
        for (int i = 0; i < app->nprocs; i++, r++) {
            const char *name = app->hosts.n > 0   ? app->hosts.h[app_host[i]].name
                               : m->hostlist.n > 0 ? m->hostlist.h[job_host[r]].name
                                                   : this_host;
            host_of[r] = plx_remote_host_index(names, &m->nhosts, name);
        }
    }
    free(job_host);
    free(app_host);
}

void plx_mpiexec_remote_place(void)
{
    struct plx_mpiexec *m = &plx_mpiexec;
    int *host_of = plx_mpiexec_xalloc((size_t)m->size * sizeof(int));
    const char **names = plx_mpiexec_xalloc((size_t)m->size * sizeof(char *));

    m->nhosts = 0;
    plx_remote_place_ranks(host_of, names);
    m->hosts = plx_mpiexec_xalloc((size_t)m->nhosts * sizeof(*m->hosts));
    for (int h = 0; h < m->nhosts; h++) {
        struct plx_mphost *ho = &m->hosts[h];
        snprintf(ho->name, sizeof(ho->name), "%s", names[h]);
        ho->ranks = plx_mpiexec_xalloc((size_t)m->size * sizeof(int));
        plx_wire_init(&ho->conn, -1, PLX_WIRE_FRAME_MAX);
        switch (m->launcher) {
        case PLX_LAUNCHER_DEFAULT:
            ho->fork = plx_hosts_is_local(ho->name);
            break;
        case PLX_LAUNCHER_FORK:
            ho->fork = 1;
            break;
        default:
            ho->fork = m->exec_forks_local && plx_hosts_is_local(ho->name);
            break;
        }
    }
    for (int r = 0; r < m->size; r++) {
        struct plx_mphost *ho = &m->hosts[host_of[r]];
        struct plx_rank *rk = &m->ranks[r];
        rk->host = host_of[r];
        rk->local_rank = ho->nranks;
        ho->ranks[ho->nranks++] = r;
        plx_iofwd_init_fed(&rk->out, 1, r, m->tag);
        plx_iofwd_init_fed(&rk->err, 2, r, m->tag);
    }
    for (int i = 0; i < PLX_MPIEXEC_PENDING_MAX; i++)
        plx_wire_init(&m->pending[i].conn, -1, PLX_MPIEXEC_HELLO_MAX);
    free(names);
    free(host_of);
}

const char *plx_mpiexec_remote_mapping(char *buf, size_t len)
{
    struct plx_mpiexec *m = &plx_mpiexec;
    int *node_of = plx_mpiexec_xalloc((size_t)m->size * sizeof(int));
    int rc;

    for (int r = 0; r < m->size; r++)
        node_of[r] = m->ranks[r].host;
    rc = plx_hosts_mapping(node_of, m->size, buf, len);
    free(node_of);
    return rc == 0 ? buf : NULL;
}

/* ---- losing a host ------------------------------------------------------------------- */

/* Marks a rank that will never report as exited. */
static void plx_remote_rank_gone(int r)
{
    struct plx_rank *rk = &plx_mpiexec.ranks[r];

    if (rk->exited)
        return;
    rk->exited = 1;
    rk->pmi_lost_at = 0;
    plx_mpiexec.nexited++;
    plx_pmisrv_closed(plx_mpiexec.pmi, r);
    plx_iofwd_close(&rk->out);
    plx_iofwd_close(&rk->err);
    if (r == 0)
        plx_mpiexec.in_open = 0;
}

static void plx_remote_kill_launcher(struct plx_mphost *ho)
{
    if (ho->launcher_pid > 0)
        (void)kill(-ho->launcher_pid, SIGKILL);
}

/* The host's connection is over (or it never came). If it still had running
 * ranks, the job ends naming the host and them. */
static void plx_remote_host_gone(int h, const char *why)
{
    struct plx_mpiexec *m = &plx_mpiexec;
    struct plx_mphost *ho = &m->hosts[h];
    char list[256];
    size_t len = 0;
    int running = 0, shown = 0;

    if (ho->gone)
        return;
    ho->gone = 1;
    plx_wire_close(&ho->conn);
    list[0] = '\0';
    for (int i = 0; i < ho->nranks; i++) {
        int r = ho->ranks[i];
        if (m->ranks[r].exited)
            continue;
        running++;
        if (shown < 12) {
            int w = snprintf(list + len, sizeof(list) - len, "%s%d", shown ? ", " : "", r);
            if (w > 0 && (size_t)w < sizeof(list) - len) {
                len += (size_t)w;
                shown++;
            }
        }
    }
    if (running == 0)
        return;                 /* a normal end, or already judged */
    plx_remote_kill_launcher(ho);
    for (int i = 0; i < ho->nranks; i++)
        plx_remote_rank_gone(ho->ranks[i]);
    if (m->phase == PLX_MPIEXEC_RUNNING) {
        int live = m->size - m->nexited;
        char tail[64] = "";
        if (live > 0)
            snprintf(tail, sizeof(tail), "; killing the other %d running rank%s", live,
                     live == 1 ? "" : "s");
        plx_mpiexec_msg("lost host %s (rank%s %s%s): %s%s", ho->name, running > 1 ? "s" : "",
                        list, running > shown ? ", ..." : "", why, tail);
        plx_mpiexec_set_code(PLX_MPIEXEC_EXIT_HOST_LOST);
        plx_mpiexec_end_job(PLX_MPIEXEC_KILL_GRACE);
    } else {
        plx_mpiexec_set_code(PLX_MPIEXEC_EXIT_HOST_LOST);
    }
}

/* ---- launching ------------------------------------------------------------------------- */

static char *plx_remote_strdup(const char *s)
{
    char *d = strdup(s);
    if (d == NULL) {
        plx_mpiexec_msg("out of memory");
        exit(1);
    }
    return d;
}

/* Appends s, single-quoted for sh, to a growing string. */
static void plx_remote_append(char **buf, size_t *len, size_t *cap, const char *s, int quote)
{
    size_t need = *len + strlen(s) * 4 + 4;

    if (need > *cap) {
        size_t ncap = *cap ? *cap : 256;
        while (ncap < need)
            ncap *= 2;
        char *nb = realloc(*buf, ncap);
        if (nb == NULL) {
            plx_mpiexec_msg("out of memory");
            exit(1);
        }
        *buf = nb;
        *cap = ncap;
    }
    char *p = *buf + *len;
    if (!quote) {
        p += sprintf(p, "%s", s);
    } else {
        *p++ = '\'';
        for (; *s; s++) {
            if (*s == '\'') {
                memcpy(p, "'\\''", 4);
                p += 4;
            } else {
                *p++ = *s;
            }
        }
        *p++ = '\'';
        *p = '\0';
    }
    *len = (size_t)(p - *buf);
}

static char *plx_remote_shell_join(char *const *argv)
{
    char *buf = NULL;
    size_t len = 0, cap = 0;

    for (int i = 0; argv[i] != NULL; i++) {
        if (i > 0)
            plx_remote_append(&buf, &len, &cap, " ", 0);
        plx_remote_append(&buf, &len, &cap, argv[i], 1);
    }
    return buf;
}

/* --launcher-exec: the template with {host} replaced (or the host appended),
 * then the proxy's command line. Host names are checked to be shell-safe. */
static char *plx_remote_exec_command(const char *host, char *const *proxy_argv)
{
    const char *t = plx_mpiexec.launcher_exec;
    char *buf = NULL, *joined;
    size_t len = 0, cap = 0;
    int substituted = 0;

    while (*t) {
        const char *brace = strstr(t, "{host}");
        if (brace == NULL) {
            plx_remote_append(&buf, &len, &cap, t, 0);
            break;
        }
        char *piece = plx_remote_strdup(t);
        piece[brace - t] = '\0';
        plx_remote_append(&buf, &len, &cap, piece, 0);
        free(piece);
        plx_remote_append(&buf, &len, &cap, host, 0);
        substituted = 1;
        t = brace + 6;
    }
    if (!substituted) {
        plx_remote_append(&buf, &len, &cap, " ", 0);
        plx_remote_append(&buf, &len, &cap, host, 0);
    }
    joined = plx_remote_shell_join(proxy_argv);
    plx_remote_append(&buf, &len, &cap, " ", 0);
    plx_remote_append(&buf, &len, &cap, joined, 0);
    free(joined);
    return buf;
}

static const char *plx_remote_proxy_path(void)
{
    static char path[4200];
    char self[4096];
    ssize_t n;

    if (plx_mpiexec.proxy_path != NULL)
        return plx_mpiexec.proxy_path;
    n = readlink("/proc/self/exe", self, sizeof(self) - 1);
    if (n <= 0)
        return "plexus-proxy";      /* from PATH */
    self[n] = '\0';
    char *slash = strrchr(self, '/');
    if (slash != NULL)
        *slash = '\0';
    snprintf(path, sizeof(path), "%s/plexus-proxy", self);
    return path;
}

static void plx_remote_start_launcher(int h, const char *proxy)
{
    struct plx_mpiexec *m = &plx_mpiexec;
    struct plx_mphost *ho = &m->hosts[h];
    char id[16];
    char *proxy_argv[] = { (char *)proxy, "--connect", m->connect_list, "--id", id,
                           "--host", ho->name, NULL };
    char *argv[12];
    char *cmd = NULL;
    int fds[2];
    pid_t pid, me = getpid();

    snprintf(id, sizeof(id), "%d", h);
    if (ho->fork) {
        memcpy(argv, proxy_argv, sizeof(proxy_argv));
    } else if (m->launcher == PLX_LAUNCHER_EXEC) {
        cmd = plx_remote_exec_command(ho->name, proxy_argv);
        argv[0] = "/bin/sh";
        argv[1] = "-c";
        argv[2] = cmd;
        argv[3] = NULL;
    } else {
        cmd = plx_remote_shell_join(proxy_argv);
        argv[0] = "ssh";
        argv[1] = "-x";
        argv[2] = "-o";
        argv[3] = "BatchMode=yes";
        argv[4] = ho->name;
        argv[5] = cmd;
        argv[6] = NULL;
    }
    if (m->verbose) {
        char *shown = plx_remote_shell_join(argv);
        plx_mpiexec_msg("starting the proxy for host %s: %s", ho->name, shown);
        free(shown);
    }
    ho->launched_at = plx_mpiexec_now();
    if (pipe2(fds, O_CLOEXEC) != 0) {
        fds[0] = fds[1] = -1;
    }
    pid = fork();
    if (pid == 0) {
        /* Own process group (a terminal's Ctrl-C reaches mpiexec only, which
         * forwards it); dies with mpiexec. */
        setpgid(0, 0);
        if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != me)
            _exit(127);
        if (fds[0] >= 0)
            dup2(fds[0], 0);
        dup2(2, 1);             /* the launcher's chatter goes to our stderr */
        setenv(PLX_WIRE_SECRET_ENV, m->proxy_secret, 1);
        signal(SIGPIPE, SIG_DFL);
        if (m->nofile_raised)
            (void)setrlimit(RLIMIT_NOFILE, &m->orig_nofile);
        sigprocmask(SIG_SETMASK, &m->orig_mask, NULL);
        execvp(argv[0], argv);
        dprintf(2, "mpiexec: cannot run '%s' to start the proxy for host %s: %s\n", argv[0],
                ho->name, strerror(errno));
        _exit(127);
    }
    if (fds[0] >= 0)
        close(fds[0]);
    if (pid < 0) {
        plx_mpiexec_msg("cannot start the proxy for host %s: fork: %s", ho->name,
                        strerror(errno));
        ho->launcher_exited = 1;
        ho->launcher_status = 127 << 8;
        ho->launcher_exit_at = ho->launched_at;
    } else {
        (void)setpgid(pid, pid);
        ho->launcher_pid = pid;
    }
    if (fds[1] >= 0) {
        /* 33 bytes into an empty pipe: never blocks. */
        char line[PLX_WIRE_SECRET_HEX + 1];
        memcpy(line, m->proxy_secret, PLX_WIRE_SECRET_HEX);
        line[PLX_WIRE_SECRET_HEX] = '\n';
        if (write(fds[1], line, sizeof(line)) < 0) {
            /* the launcher is gone already: its exit says why */
        }
        close(fds[1]);
    }
    free(cmd);
}

/* PLEXUS_TCP_PORTS "lo-hi": the listening port for firewalled sites. */
static int plx_remote_listen(void)
{
    const char *ports = getenv("PLEXUS_TCP_PORTS");
    int lo, hi, fd, v6 = 1, port;

    if (plx_util_port_range_parse(ports, &lo, &hi) != 0)
        plx_mpiexec_usage_error("PLEXUS_TCP_PORTS='%s' is not a port range lo-hi", ports);
    fd = socket(AF_INET6, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd >= 0) {
        int off = 0;
        (void)setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &off, sizeof(off));
    } else {
        v6 = 0;
        fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    }
    if (fd < 0) {
        plx_mpiexec_msg("cannot listen for proxies: socket: %s", strerror(errno));
        exit(1);
    }
    /* in order from lo: one mpiexec per host, nothing to spread */
    port = plx_util_listen_range(fd, v6 ? AF_INET6 : AF_INET, lo, hi, 0, 128);
    if (port > 0) {
        plx_mpiexec.listen_fd = fd;
        return port;
    }
    plx_mpiexec_msg("cannot listen for proxies%s%s: %s", ports ? " in PLEXUS_TCP_PORTS=" : "",
                    ports ? ports : "", strerror(errno));
    exit(1);
}

/* The addresses proxies try, "a:port,b:port". */
static void plx_remote_advertise(int port)
{
    struct plx_mpiexec *m = &plx_mpiexec;
    struct plx_iface_rules rules;
    struct plx_iface_addr addrs[16];
    const char *spec = getenv("PLEXUS_IFACES");
    char err[256];
    int n, all_fork = 1;
    char *buf = NULL;
    size_t len = 0, cap = 0;

    for (int h = 0; h < m->nhosts; h++)
        all_fork &= m->hosts[h].fork;
    if (all_fork) {
        /* Every proxy runs on this machine. */
        char a[64];
        snprintf(a, sizeof(a), "127.0.0.1:%d", port);
        m->connect_list = plx_remote_strdup(a);
        return;
    }
    if (plx_iface_rules_parse(spec, &rules, err, sizeof(err)) != 0)
        plx_mpiexec_usage_error("%s", err);
    n = plx_iface_select(&rules, addrs, 16);
    if (n <= 0) {
        struct plx_iface_addr all[32];
        char list[1024] = "";
        size_t l = 0;
        int na = plx_iface_list(all, 32);
        for (int i = 0; i < na; i++) {
            char a[INET6_ADDRSTRLEN];
            plx_iface_ip_format(&all[i].a, a, sizeof(a));
            int w = snprintf(list + l, sizeof(list) - l, "%s%s %s", i ? ", " : "",
                             all[i].ifname, a);
            if (w > 0 && (size_t)w < sizeof(list) - l)
                l += (size_t)w;
        }
        plx_mpiexec_msg("PLEXUS_IFACES='%s' selects no address of this host to give the "
                        "proxies (up: %s)", spec ? spec : "", na > 0 ? list : "none");
        exit(1);
    }
    for (int i = 0; i < n; i++) {
        char a[80];
        struct sockaddr_storage ss;
        plx_iface_ip_sockaddr(&addrs[i].a, port, &ss);
        plx_iface_sockaddr_str(&ss, a, sizeof(a));
        if (i > 0)
            plx_remote_append(&buf, &len, &cap, ",", 0);
        plx_remote_append(&buf, &len, &cap, a, 0);
    }
    m->connect_list = buf;
}

static int plx_remote_env_forwarded(const char *kv)
{
    static const char *const skip[] = { "HOSTNAME=", "PWD=", "OLDPWD=", "SHLVL=", "_=",
                                        "PLEXUS_NODE_NAME=", PLX_WIRE_SECRET_ENV "=" };
    static const char *const skip_prefix[] = { "PMI_", "SSH_" };

    if (strchr(kv, '=') == NULL)
        return 0;
    for (size_t i = 0; i < sizeof(skip) / sizeof(skip[0]); i++)
        if (strncmp(kv, skip[i], strlen(skip[i])) == 0)
            return 0;
    for (size_t i = 0; i < sizeof(skip_prefix) / sizeof(skip_prefix[0]); i++)
        if (strncmp(kv, skip_prefix[i], strlen(skip_prefix[i])) == 0)
            return 0;
    return 1;
}

void plx_mpiexec_remote_launch(void)
{
    struct plx_mpiexec *m = &plx_mpiexec;
    const char *proxy = plx_remote_proxy_path();
    int port, nenv = 0;

    for (int h = 0; h < m->nhosts; h++) {
        if (m->hosts[h].fork && access(proxy, X_OK) != 0) {
            plx_mpiexec_msg("cannot run the proxy '%s': %s (use --proxy PATH)", proxy,
                            strerror(errno));
            exit(127);
        }
    }
    if (plx_wire_secret_make(m->proxy_secret) != 0) {
        plx_mpiexec_msg("cannot make the job secret: getrandom: %s", strerror(errno));
        exit(1);
    }
    for (char **e = environ; *e != NULL; e++)
        nenv++;
    plx_remote_fwd_env = plx_mpiexec_xalloc(((size_t)nenv + 2) * sizeof(char *));
    for (char **e = environ; *e != NULL; e++)
        if (plx_remote_env_forwarded(*e))
            plx_remote_fwd_env[plx_remote_nfwd_env++] = *e;
    /* the job's name, for the proxy's sweep of /dev/shm (plx_spawn_sweep_shm) */
    static char kvs_env[sizeof PLX_SPAWN_KVSNAME_ENV + sizeof m->kvsname + 1];
    snprintf(kvs_env, sizeof kvs_env, "%s=%.63s", PLX_SPAWN_KVSNAME_ENV, m->kvsname);
    plx_remote_fwd_env[plx_remote_nfwd_env++] = kvs_env;

    port = plx_remote_listen();
    plx_remote_advertise(port);
    if (m->verbose)
        plx_mpiexec_msg("listening for proxies on %s (port %d, any address)", m->connect_list,
                        port);
    for (int h = 0; h < m->nhosts; h++)
        plx_remote_start_launcher(h, proxy);
}

/* ---- accepting proxies ------------------------------------------------------------------ */

static void plx_remote_refuse(int i, const char *why)
{
    struct plx_mpiexec *m = &plx_mpiexec;

    if (m->refusals < PLX_MPIEXEC_REFUSALS_SHOWN)
        plx_mpiexec_msg("refused a connection from %s: %s", m->pending[i].peer, why);
    else if (m->refusals == PLX_MPIEXEC_REFUSALS_SHOWN)
        plx_mpiexec_msg("(further refused connections are not reported)");
    m->refusals++;
    plx_wire_close(&m->pending[i].conn);
}

static void plx_remote_peer_name(const struct sockaddr_storage *ss, char *buf, size_t len)
{
    char a[INET6_ADDRSTRLEN];

    if (ss->ss_family == AF_INET6) {
        const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)ss;
        if (IN6_IS_ADDR_V4MAPPED(&s6->sin6_addr)) {
            inet_ntop(AF_INET, &s6->sin6_addr.s6_addr[12], a, sizeof(a));
            snprintf(buf, len, "%s:%d", a, ntohs(s6->sin6_port));
        } else {
            inet_ntop(AF_INET6, &s6->sin6_addr, a, sizeof(a));
            snprintf(buf, len, "[%s]:%d", a, ntohs(s6->sin6_port));
        }
    } else if (ss->ss_family == AF_INET) {
        const struct sockaddr_in *s4 = (const struct sockaddr_in *)ss;
        inet_ntop(AF_INET, &s4->sin_addr, a, sizeof(a));
        snprintf(buf, len, "%s:%d", a, ntohs(s4->sin_port));
    } else {
        snprintf(buf, len, "?");
    }
}

static void plx_remote_accept(double now)
{
    struct plx_mpiexec *m = &plx_mpiexec;

    for (;;) {
        struct sockaddr_storage ss;
        socklen_t sl = sizeof(ss);
        int fd = accept4(m->listen_fd, (struct sockaddr *)&ss, &sl,
                         SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0)
            return;             /* EAGAIN, or a connection that died queued */
        int slot = -1;
        for (int i = 0; i < PLX_MPIEXEC_PENDING_MAX && slot < 0; i++)
            if (m->pending[i].conn.fd < 0)
                slot = i;
        if (slot < 0) {
            if (m->refusals++ < PLX_MPIEXEC_REFUSALS_SHOWN)
                plx_mpiexec_msg("refused a connection: %d others have not said hello yet",
                                PLX_MPIEXEC_PENDING_MAX);
            close(fd);
            continue;
        }
        struct plx_pending *p = &m->pending[slot];
        plx_wire_init(&p->conn, fd, PLX_MPIEXEC_HELLO_MAX);
        p->deadline = now + PLX_MPIEXEC_HELLO_TIMEOUT;
        plx_remote_peer_name(&ss, p->peer, sizeof(p->peer));
    }
}

static void plx_remote_send_launch(int h)
{
    struct plx_mpiexec *m = &plx_mpiexec;
    struct plx_mphost *ho = &m->hosts[h];
    struct plx_wire_conn *c = &ho->conn;
    char cwd[4096];

    if (getcwd(cwd, sizeof(cwd)) == NULL)
        cwd[0] = '\0';
    plx_wire_begin(c, PLX_WIRE_LAUNCH);
    plx_wire_u32(c, (uint32_t)m->size);
    plx_wire_u32(c, (uint32_t)(m->host_timeout * 1000));
    plx_wire_str(c, cwd);
    plx_wire_u32(c, (uint32_t)plx_remote_nfwd_env);
    for (int i = 0; i < plx_remote_nfwd_env; i++)
        plx_wire_str(c, plx_remote_fwd_env[i]);
    plx_wire_u32(c, (uint32_t)m->napps);
    for (int a = 0; a < m->napps; a++) {
        int argc = 0;
        while (m->apps[a].argv[argc] != NULL)
            argc++;
        plx_wire_u32(c, (uint32_t)argc);
        for (int i = 0; i < argc; i++)
            plx_wire_str(c, m->apps[a].argv[i]);
        plx_wire_u32(c, (uint32_t)m->apps[a].nenv);
        for (int i = 0; i < m->apps[a].nenv; i++)
            plx_wire_str(c, m->apps[a].env[i]);
    }
    plx_wire_u32(c, (uint32_t)ho->nranks);
    for (int i = 0; i < ho->nranks; i++) {
        int r = ho->ranks[i];
        plx_wire_u32(c, (uint32_t)r);
        plx_wire_u32(c, (uint32_t)m->ranks[r].appnum);
        plx_wire_u32(c, (uint32_t)m->ranks[r].local_rank);
        plx_wire_u8(c, r == 0 && m->in_open);
    }
    plx_wire_end(c);
    if (m->phase != PLX_MPIEXEC_RUNNING) {
        /* The job is already ending: its ranks start only to be killed, so
         * they are reported like every other. */
        plx_wire_begin(c, PLX_WIRE_SIGNAL);
        plx_wire_u32(c, SIGKILL);
        plx_wire_u8(c, 1);
        plx_wire_end(c);
    }
}

static int plx_remote_host_frames(int h, double now);

static void plx_remote_hello(int i, double now)
{
    struct plx_mpiexec *m = &plx_mpiexec;
    struct plx_pending *p = &m->pending[i];
    struct plx_wire_rd rd;
    int type, got;
    const char *magic, *secret;
    size_t mlen, slen, hlen;
    uint32_t id, pid;
    char why[PLX_HOSTS_NAME_MAX + 64];

    got = plx_wire_next(&p->conn, &type, &rd);
    if (got == 0)
        return;
    if (got < 0 || type != PLX_WIRE_HELLO) {
        plx_remote_refuse(i, "it is not a Plexus proxy (no hello)");
        return;
    }
    magic = plx_wire_rd_str(&rd, &mlen);
    secret = plx_wire_rd_str(&rd, &slen);
    id = plx_wire_rd_u32(&rd);
    (void)plx_wire_rd_str(&rd, &hlen);
    pid = plx_wire_rd_u32(&rd);
    if (rd.bad || mlen != strlen(PLX_WIRE_MAGIC) || memcmp(magic, PLX_WIRE_MAGIC, mlen) != 0) {
        plx_remote_refuse(i, "it is not a Plexus proxy (bad hello)");
        return;
    }
    if (!plx_wire_secret_equal(m->proxy_secret, secret, slen)) {
        plx_remote_refuse(i, "wrong job secret");
        return;
    }
    if (id >= (uint32_t)m->nhosts) {
        snprintf(why, sizeof(why), "no host has proxy id %u", id);
        plx_remote_refuse(i, why);
        return;
    }
    struct plx_mphost *ho = &m->hosts[id];
    if (ho->connected || ho->gone) {
        snprintf(why, sizeof(why), "a proxy for host %s %s", ho->name,
                 ho->gone ? "was given up already" : "is connected already");
        plx_remote_refuse(i, why);
        return;
    }
    ho->conn = p->conn;             /* the socket and its buffers move */
    ho->conn.in_limit = PLX_WIRE_FRAME_MAX;
    plx_wire_init(&p->conn, -1, PLX_MPIEXEC_HELLO_MAX);
    ho->connected = 1;
    ho->proxy_pid = (long)pid;
    plx_wire_tune_socket(ho->conn.fd, (unsigned)(m->host_timeout * 1000));
    if (m->verbose)
        plx_mpiexec_msg("the proxy for host %s (pid %u) connected from %s", ho->name, pid,
                        p->peer);
    plx_remote_send_launch((int)id);
    if (plx_wire_flush(&ho->conn) != 0)
        plx_remote_host_gone((int)id, "its connection failed");
    else
        (void)plx_remote_host_frames((int)id, now);   /* what came with the hello */
}

static void plx_remote_pending_ready(int i, double now)
{
    struct plx_pending *p = &plx_mpiexec.pending[i];
    int rc = plx_wire_read(&p->conn);

    plx_remote_hello(i, now);
    if (p->conn.fd >= 0 && rc <= 0)
        plx_remote_refuse(i, rc == 0 ? "it closed the connection without a hello"
                                     : "the connection failed before a hello");
}

/* ---- frames from proxies ---------------------------------------------------------------- */

static const char *plx_remote_conn_error(int err, char *buf, size_t len)
{
    if (err == ETIMEDOUT)
        snprintf(buf, len, "it stopped answering for %g s (host down or network cut?)",
                 plx_mpiexec.host_timeout);
    else if (err == ECONNRESET)
        snprintf(buf, len, "its connection was reset (the proxy or the host died?)");
    else if (err == EHOSTUNREACH || err == ENETUNREACH)
        snprintf(buf, len, "it became unreachable (%s)", strerror(err));
    else
        snprintf(buf, len, "its connection failed: %s", strerror(err));
    return buf;
}

/* 0, or -1 when the frame is malformed (the host is then lost). */
static int plx_remote_frame(int h, int type, struct plx_wire_rd *rd, double now)
{
    struct plx_mpiexec *m = &plx_mpiexec;
    uint32_t rank = 0;

    switch (type) {
    case PLX_WIRE_STARTED:
    case PLX_WIRE_SPAWN_FAILED:
    case PLX_WIRE_PMI:
    case PLX_WIRE_PMI_EOF:
    case PLX_WIRE_OUTPUT:
    case PLX_WIRE_OUTPUT_EOF:
    case PLX_WIRE_EXIT:
        rank = plx_wire_rd_u32(rd);
        if (rd->bad || rank >= (uint32_t)m->size || m->ranks[rank].host != h)
            return -1;
        break;
    default:
        break;
    }
    struct plx_rank *rk = &m->ranks[rank];

    switch (type) {
    case PLX_WIRE_STARTED:
        rk->rpid = (long)plx_wire_rd_u32(rd);
        break;
    case PLX_WIRE_SPAWN_FAILED: {
        int err = (int)plx_wire_rd_u32(rd);
        size_t len;
        const char *msg = plx_wire_rd_str(rd, &len);
        if (rd->bad)
            return -1;
        if (rk->exited)
            break;
        if (err != 0 && m->phase == PLX_MPIEXEC_RUNNING)
            plx_mpiexec_msg("%.*s", (int)len, msg);
        plx_remote_rank_gone((int)rank);
        if (err != 0 && m->phase == PLX_MPIEXEC_RUNNING) {
            /* Nothing to run: take down what started. */
            plx_mpiexec_set_code(plx_mpiexec_exec_status(err));
            m->phase = PLX_MPIEXEC_ENDING;
            plx_mpiexec_kill_all(SIGKILL);
            m->killed = 1;
        }
        break;
    }
    case PLX_WIRE_PMI:
        if (!rk->exited)
            plx_pmisrv_input(m->pmi, (int)rank, (const char *)rd->p, rd->left);
        break;
    case PLX_WIRE_PMI_EOF:
        plx_pmisrv_closed(m->pmi, (int)rank);
        if (plx_pmisrv_state(m->pmi, (int)rank) == PLX_PMISRV_INIT && !rk->exited)
            rk->pmi_lost_at = now;
        break;
    case PLX_WIRE_OUTPUT:
    case PLX_WIRE_OUTPUT_EOF: {
        unsigned stream = plx_wire_rd_u8(rd);
        if (rd->bad || (stream != 1 && stream != 2))
            return -1;
        struct plx_iofwd *io = stream == 1 ? &rk->out : &rk->err;
        if (type == PLX_WIRE_OUTPUT)
            plx_iofwd_feed(io, (const char *)rd->p, rd->left, now);
        else
            plx_iofwd_close(io);
        break;
    }
    case PLX_WIRE_EXIT: {
        int signaled = (int)plx_wire_rd_u8(rd);
        int status = (int)plx_wire_rd_u32(rd);
        if (rd->bad)
            return -1;
        if (rk->exited)
            break;
        plx_pmisrv_closed(m->pmi, (int)rank);
        plx_mpiexec_rank_exited((int)rank, signaled, status);
        break;
    }
    case PLX_WIRE_STDIN_ACK:
        m->in_wait_ack = 0;
        if (plx_wire_rd_u8(rd))
            m->in_open = 0;         /* rank 0 closed its stdin */
        break;
    case PLX_WIRE_LOG: {
        size_t len;
        const char *msg = plx_wire_rd_str(rd, &len);
        if (!rd->bad)
            plx_mpiexec_msg("%.*s", (int)len, msg);
        break;
    }
    default:
        return -1;
    }
    return 0;
}

/* Runs every complete frame the host sent. 0, or -1: the host is gone. */
static int plx_remote_host_frames(int h, double now)
{
    struct plx_mphost *ho = &plx_mpiexec.hosts[h];
    struct plx_wire_rd rd;
    int type, got;

    while (ho->conn.fd >= 0 && (got = plx_wire_next(&ho->conn, &type, &rd)) != 0) {
        if (got < 0 || plx_remote_frame(h, type, &rd, now) != 0) {
            plx_remote_host_gone(h, "its proxy broke the protocol");
            return -1;
        }
    }
    return ho->conn.fd >= 0 ? 0 : -1;
}

static void plx_remote_host_ready(int h, short revents, double now)
{
    struct plx_mphost *ho = &plx_mpiexec.hosts[h];
    char why[200];
    int rc = 1;

    if (ho->conn.fd < 0)
        return;
    if (revents & POLLOUT && plx_wire_flush(&ho->conn) != 0) {
        plx_remote_host_gone(h, plx_remote_conn_error(errno, why, sizeof(why)));
        return;
    }
    if (!(revents & (POLLIN | POLLERR | POLLHUP)))
        return;
    rc = plx_wire_read(&ho->conn);
    int err = errno;
    if (plx_remote_host_frames(h, now) != 0)
        return;
    if (ho->conn.fd >= 0 && rc <= 0)
        plx_remote_host_gone(h, rc == 0 ? "its proxy closed the connection (it died?)"
                                        : plx_remote_conn_error(err, why, sizeof(why)));
}

/* ---- the event loop's hooks ---------------------------------------------------------------- */

size_t plx_mpiexec_remote_max_fds(void)
{
    return 1 + PLX_MPIEXEC_PENDING_MAX + (size_t)plx_mpiexec.nhosts;
}

void plx_mpiexec_remote_watch(struct pollfd *pfd, int *tags, size_t *n_p)
{
    struct plx_mpiexec *m = &plx_mpiexec;
    size_t n = *n_p;

    if (m->listen_fd >= 0) {
        pfd[n] = (struct pollfd){ .fd = m->listen_fd, .events = POLLIN };
        tags[n++] = PLX_TAG_LISTEN;
    }
    for (int i = 0; i < PLX_MPIEXEC_PENDING_MAX; i++) {
        if (m->pending[i].conn.fd < 0)
            continue;
        pfd[n] = (struct pollfd){ .fd = m->pending[i].conn.fd, .events = POLLIN };
        tags[n++] = PLX_TAG_PENDING(i);
    }
    for (int h = 0; h < m->nhosts; h++) {
        struct plx_wire_conn *c = &m->hosts[h].conn;
        if (c->fd < 0)
            continue;
        pfd[n] = (struct pollfd){ .fd = c->fd,
                                  .events = POLLIN | (plx_wire_pending(c) ? POLLOUT : 0) };
        tags[n++] = PLX_TAG_HOST(h);
    }
    *n_p = n;
}

void plx_mpiexec_remote_ready(int tag, short revents, double now)
{
    if (tag == PLX_TAG_LISTEN)
        plx_remote_accept(now);
    else if (tag < PLX_TAG_HOST(0))
        plx_remote_pending_ready(tag - PLX_TAG_PENDING(0), now);
    else
        plx_remote_host_ready(tag - PLX_TAG_HOST(0), revents, now);
}

static const char *plx_remote_wait_status(int status, char *buf, size_t len)
{
    if (WIFSIGNALED(status))
        snprintf(buf, len, "was killed by signal %d", WTERMSIG(status));
    else
        snprintf(buf, len, "exited with status %d", WEXITSTATUS(status));
    return buf;
}

double plx_mpiexec_remote_deadlines(double now)
{
    struct plx_mpiexec *m = &plx_mpiexec;
    double next = 0;
    char why[256], st[64];

    for (int i = 0; i < PLX_MPIEXEC_PENDING_MAX; i++) {
        if (m->pending[i].conn.fd < 0)
            continue;
        if (now >= m->pending[i].deadline)
            plx_remote_refuse(i, "no hello in time");
        else
            next = plx_mpiexec_min_deadline(next, m->pending[i].deadline);
    }
    for (int h = 0; h < m->nhosts; h++) {
        struct plx_mphost *ho = &m->hosts[h];
        if (ho->connected || ho->gone)
            continue;
        if (ho->launcher_exited) {
            double at = ho->launcher_exit_at + PLX_MPIEXEC_LAUNCHER_GRACE;
            if (now >= at) {
                snprintf(why, sizeof(why), "its proxy could not be started (the %s %s)",
                         ho->fork ? "proxy" : "launcher",
                         plx_remote_wait_status(ho->launcher_status, st, sizeof(st)));
                plx_remote_host_gone(h, why);
            } else {
                next = plx_mpiexec_min_deadline(next, at);
            }
        } else if (m->phase == PLX_MPIEXEC_RUNNING) {
            double at = ho->launched_at + PLX_MPIEXEC_LAUNCH_TIMEOUT;
            if (now >= at) {
                snprintf(why, sizeof(why), "its proxy did not connect within %g s",
                         PLX_MPIEXEC_LAUNCH_TIMEOUT);
                plx_remote_host_gone(h, why);
            } else {
                next = plx_mpiexec_min_deadline(next, at);
            }
        }
    }
    /* Hosts that stopped acknowledging what we send them. */
    if (plx_mpiexec_remote_open()) {
        if (now >= plx_remote_next_stall_check) {
            plx_remote_next_stall_check = now + PLX_WIRE_STALL_CHECK;
            for (int h = 0; h < m->nhosts; h++)
                if (m->hosts[h].conn.fd >= 0
                    && plx_wire_stalled(m->hosts[h].conn.fd,
                                        (unsigned)(m->host_timeout * 1000)))
                    plx_remote_host_gone(h, plx_remote_conn_error(ETIMEDOUT, why,
                                                                  sizeof(why)));
        }
        next = plx_mpiexec_min_deadline(next, plx_remote_next_stall_check);
    }
    /* Ending and everything SIGKILLed: proxies that neither report their
     * ranks nor go away are given up, so mpiexec never hangs. */
    if (m->killed && m->nexited < m->size) {
        if (m->abandon_at == 0)
            m->abandon_at = now + PLX_MPIEXEC_ABANDON_GRACE;
        if (now >= m->abandon_at) {
            for (int h = 0; h < m->nhosts; h++) {
                int running = 0;
                for (int i = 0; i < m->hosts[h].nranks; i++)
                    running += !m->ranks[m->hosts[h].ranks[i]].exited;
                if (running > 0)
                    plx_remote_host_gone(h, "it did not report its ranks after SIGKILL");
            }
        } else {
            next = plx_mpiexec_min_deadline(next, m->abandon_at);
        }
    }
    return next;
}

void plx_mpiexec_remote_check_children(double now)
{
    struct plx_mpiexec *m = &plx_mpiexec;

    for (int h = 0; h < m->nhosts; h++) {
        struct plx_mphost *ho = &m->hosts[h];
        siginfo_t si;

        if (ho->launcher_pid <= 0 || ho->launcher_exited)
            continue;
        memset(&si, 0, sizeof(si));
        if (waitid(P_PID, (id_t)ho->launcher_pid, &si, WEXITED | WNOHANG | WNOWAIT) != 0
            || si.si_pid != ho->launcher_pid)
            continue;
        ho->launcher_exited = 1;
        ho->launcher_exit_at = now;
        ho->launcher_status = si.si_code == CLD_EXITED ? (si.si_status & 0xff) << 8
                                                       : (si.si_status & 0x7f);
    }
}

void plx_mpiexec_remote_signal(int sig, int group)
{
    struct plx_mpiexec *m = &plx_mpiexec;

    for (int h = 0; h < m->nhosts; h++) {
        struct plx_wire_conn *c = &m->hosts[h].conn;
        if (c->fd < 0)
            continue;
        plx_wire_begin(c, PLX_WIRE_SIGNAL);
        plx_wire_u32(c, (uint32_t)sig);
        plx_wire_u8(c, (unsigned)group);
        plx_wire_end(c);
        (void)plx_wire_flush(c);    /* errors show up as a failed read */
    }
}

int plx_mpiexec_remote_pmi_send(int rank, const char *buf, size_t len)
{
    struct plx_wire_conn *c = &plx_mpiexec.hosts[plx_mpiexec.ranks[rank].host].conn;

    if (c->fd < 0)
        return -1;
    plx_wire_begin(c, PLX_WIRE_PMI);
    plx_wire_u32(c, (uint32_t)rank);
    plx_wire_bytes(c, buf, len);
    plx_wire_end(c);
    (void)plx_wire_flush(c);
    return 0;
}

int plx_mpiexec_remote_open(void)
{
    for (int h = 0; h < plx_mpiexec.nhosts; h++)
        if (plx_mpiexec.hosts[h].conn.fd >= 0)
            return 1;
    return 0;
}

void plx_mpiexec_remote_all_exited(void)
{
    struct plx_mpiexec *m = &plx_mpiexec;

    for (int h = 0; h < m->nhosts; h++) {
        struct plx_mphost *ho = &m->hosts[h];
        if (ho->conn.fd < 0 || ho->done_sent)
            continue;
        ho->done_sent = 1;
        plx_wire_begin(&ho->conn, PLX_WIRE_DONE);
        plx_wire_end(&ho->conn);
        (void)plx_wire_flush(&ho->conn);
    }
}

int plx_mpiexec_remote_stdin_ready(void)
{
    struct plx_mpiexec *m = &plx_mpiexec;
    const struct plx_rank *r0 = &m->ranks[0];

    return !m->in_wait_ack && !r0->exited && m->hosts[r0->host].conn.fd >= 0;
}

void plx_mpiexec_remote_stdin_send(const char *buf, size_t len)
{
    struct plx_mpiexec *m = &plx_mpiexec;
    struct plx_wire_conn *c = &m->hosts[m->ranks[0].host].conn;

    if (c->fd < 0)
        return;
    plx_wire_begin(c, PLX_WIRE_STDIN);
    plx_wire_bytes(c, buf, len);
    plx_wire_end(c);
    (void)plx_wire_flush(c);
    if (len > 0)
        m->in_wait_ack = 1;
    else
        m->in_eof_sent = 1;
}

void plx_mpiexec_remote_cleanup(void)
{
    struct plx_mpiexec *m = &plx_mpiexec;
    double until = plx_mpiexec_now() + PLX_MPIEXEC_LAUNCHER_WAIT;

    for (int i = 0; i < PLX_MPIEXEC_PENDING_MAX; i++)
        plx_wire_close(&m->pending[i].conn);
    if (m->listen_fd >= 0)
        close(m->listen_fd);
    m->listen_fd = -1;
    for (int h = 0; h < m->nhosts; h++)
        plx_wire_close(&m->hosts[h].conn);
    /* The proxies are leaving; give their launchers (ssh...) a moment, then
     * kill whatever is left of them. */
    for (;;) {
        int alive = 0;
        plx_mpiexec_remote_check_children(plx_mpiexec_now());
        for (int h = 0; h < m->nhosts; h++)
            alive += m->hosts[h].launcher_pid > 0 && !m->hosts[h].launcher_exited;
        if (alive == 0 || plx_mpiexec_now() >= until)
            break;
        usleep(10000);
    }
    for (int h = 0; h < m->nhosts; h++) {
        struct plx_mphost *ho = &m->hosts[h];
        if (ho->launcher_pid > 0) {
            plx_remote_kill_launcher(ho);
            while (waitpid(ho->launcher_pid, NULL, 0) < 0 && errno == EINTR)
                ;
        }
        free(ho->ranks);
    }
    free(plx_remote_fwd_env);
    free(m->connect_list);
}
