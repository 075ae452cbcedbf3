/*
 * MPI_Comm_spawn served by mpiexec: each spawn request (pmi_server.c
 * collects it) becomes a job of its own, run by another mpiexec that this
 * one forks (a "sub-job"), so the children get everything a job started by
 * hand gets: their own PMI server and key-value space, proxies on other
 * hosts (the "host" info key, with this mpiexec's launcher), output
 * forwarding, exit-status rules, --timeout; a child that spawns in turn is
 * served by its own mpiexec (nested spawn). Each command of a spawn_multiple
 * is one MPMD section of the sub-job, placed by its own info: "host" and
 * "file" become the section's -app-hosts/-app-hostfile (a command without
 * them runs on this job's hosts), "wdir" and "path" a small shell in front
 * of the program when the commands differ in them.
 *
 * The children find their parents' port in $PLEXUS_PARENT_PORT and connect
 * to it from MPI_Init (api/dynamic.c). A sub-job's mpiexec gets the port
 * also as --spawn-report: when its job fails before the children have
 * connected (the parent's root is still waiting in MPI_Comm_spawn), it
 * connects to the port and says why (util/port.h, PLX_PORT_FAIL), so the
 * parent gets MPI_ERR_SPAWN instead of waiting (also when they all ended
 * without MPI_Init, with status 0); that failure is then the
 * parent's to handle, and the sub-job's mpiexec exits 0. A sub-job that
 * fails later is like a failed rank: this mpiexec names it and ends the
 * whole job with its status.
 *
 * Checked here before anything starts: the program exists and may be
 * executed (when the children run on this host), and, when -usize was
 * given, the universe has room (the "soft" info key may lower the count).
 * A sub-job is killed with the job (SIGTERM, then SIGKILL with the ranks),
 * and by PR_SET_PDEATHSIG when this mpiexec dies.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "mpiexec.h"
#include "util/port.h"
#include "util/util.h"

static const char *plx_subjob_info(const struct plx_pmisrv_spawn_cmd *c, const char *key)
{
    for (int k = 0; k < c->ninfo; k++)
        if (strcmp(c->ikeys[k], key) == 0)
            return c->ivals[k];
    return NULL;
}

static int plx_subjob_same(const char *a, const char *b)
{
    return a == b || (a && b && strcmp(a, b) == 0);
}

/* Is prog executable, looked up as execvp would from wdir with PATH = path
 * (then $PATH)? 0, or -1 with the reason in err. */
static int plx_subjob_check_prog(const char *prog, const char *wdir, const char *path, char *err, size_t errlen)
{
    char full[PATH_MAX];
    if (strchr(prog, '/')) {
        if (prog[0] == '/' || !wdir)
            snprintf(full, sizeof full, "%s", prog);
        else
            snprintf(full, sizeof full, "%s/%s", wdir, prog);
        struct stat st;
        if (stat(full, &st) != 0) {
            snprintf(err, errlen, "program '%s' does not exist%s%s", prog, wdir ? " in " : "", wdir ? wdir : "");
            return -1;
        }
        if (!S_ISREG(st.st_mode) || access(full, X_OK) != 0) {
            snprintf(err, errlen, "program '%s' is not an executable file", prog);
            return -1;
        }
        return 0;
    }
    const char *env = getenv("PATH");
    char dirs[8192];
    snprintf(dirs, sizeof dirs, "%s%s%s", path ? path : "", path && env ? ":" : "", env ? env : "");
    for (char *save = NULL, *d = strtok_r(dirs, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
        struct stat st;
        snprintf(full, sizeof full, "%s/%s", d, prog);
        if (stat(full, &st) == 0 && S_ISREG(st.st_mode) && access(full, X_OK) == 0)
            return 0;
    }
    snprintf(err, errlen, "program '%s' was not found in the path%s%s", prog, path ? " (info 'path' " : "",
             path ? path : "");
    if (path)
        strncat(err, ")", errlen - strlen(err) - 1);
    return -1;
}

/* Marks in ok[1..max] the counts a "soft" spec allows ("1:8", "2,4,8",
 * "1:8:2"); counts above max do not count. */
static void plx_subjob_soft(const char *soft, int max, unsigned char *ok)
{
    char buf[256];
    snprintf(buf, sizeof buf, "%s", soft);
    for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        int a = 0, b = 0, st = 1;
        int n = sscanf(t, "%d:%d:%d", &a, &b, &st);
        if (n == 1)
            b = a;
        if (n < 1 || a < 1 || st < 1)
            continue;
        for (long v = a; v <= b && v <= max; v += st)
            ok[v] = 1;
    }
}

/* Lowers the commands' counts where their "soft" keys allow, so that the
 * spawn fits in room (> 0): each command first at the least its key allows
 * (a command without one at its maxprocs), then, command by command in
 * order, at the most that still fits. 0, or -1 when even the least does not. */
static int plx_subjob_fit(const struct plx_pmisrv_spawn *s, int *nprocs, int room)
{
    int least = 0, lo[s->count], hi[s->count];
    unsigned char *ok = calloc((size_t)s->count, (size_t)room + 1);
    if (!ok)
        return -1;
    for (int i = 0; i < s->count; i++) {
        const char *soft = plx_subjob_info(&s->cmds[i], "soft");
        unsigned char *oki = ok + (size_t)i * ((size_t)room + 1);
        lo[i] = hi[i] = nprocs[i];
        if (soft) {
            plx_subjob_soft(soft, nprocs[i] < room ? nprocs[i] : room, oki);
            for (int v = room; v >= 1; v--)
                if (oki[v])
                    lo[i] = v;
        }
        least += lo[i] > room ? room + 1 : lo[i];
        if (least > room) {
            free(ok);
            return -1;
        }
    }
    int left = room - least;
    for (int i = 0; i < s->count; i++) {
        const unsigned char *oki = ok + (size_t)i * ((size_t)room + 1);
        nprocs[i] = lo[i];
        for (int v = hi[i] < room ? hi[i] : room; v > lo[i]; v--)
            if (oki[v] && v - lo[i] <= left) {
                left -= v - lo[i];
                nprocs[i] = v;
                break;
            }
    }
    free(ok);
    return 0;
}

static void plx_subjob_push(char ***argv, int *n, int *cap, const char *s)
{
    if (*n + 2 > *cap) {
        *cap = *cap ? 2 * *cap : 64;
        *argv = realloc(*argv, (size_t)*cap * sizeof(char *));
        if (!*argv) {
            plx_mpiexec_msg("out of memory");
            exit(1);
        }
    }
    (*argv)[(*n)++] = (char *)s;
    (*argv)[*n] = NULL;
}

int plx_subjob_spawn(void *ctx, int rank, struct plx_pmisrv_spawn *s, char *err, size_t errlen)
{
    struct plx_mpiexec *m = &plx_mpiexec;
    (void)ctx;
    plx_subjob_check();         /* spawned jobs that ended no longer count */
    if (m->phase != PLX_MPIEXEC_RUNNING) {
        snprintf(err, errlen, "the job is ending");
        return -1;
    }
    if (!s->parent_port) {
        snprintf(err, errlen, "the request names no parent port");
        return -1;
    }
    int total = 0, nprocs[s->count];
    for (int i = 0; i < s->count; i++)
        total += nprocs[i] = s->cmds[i].nprocs;
    const struct plx_pmisrv_spawn_cmd *c0 = &s->cmds[0];
    const char *wdir = NULL, *path = NULL;
    int any_host = 0;
    for (int i = 0; i < s->count; i++) {
        const struct plx_pmisrv_spawn_cmd *c = &s->cmds[i];
        any_host |= plx_subjob_info(c, "host") || plx_subjob_info(c, "file");
        wdir = wdir ? wdir : plx_subjob_info(c, "wdir");
        path = path ? path : plx_subjob_info(c, "path");
    }
    /* wdir and path belong to their command: when the commands of a
     * spawn_multiple differ in them, each runs through a small shell that
     * changes to its directory and puts its path first, then execs it */
    int per_cmd = 0;
    for (int i = 1; i < s->count; i++)
        per_cmd |= !plx_subjob_same(plx_subjob_info(&s->cmds[i], "wdir"), plx_subjob_info(c0, "wdir")) ||
                   !plx_subjob_same(plx_subjob_info(&s->cmds[i], "path"), plx_subjob_info(c0, "path"));
    if (per_cmd)
        wdir = path = NULL;
    for (int i = 0; i < s->count; i++) {
        /* read here as the sub-job will (it would end with a usage error,
         * which is a failed spawned job that ends this one) */
        const char *ch = plx_subjob_info(&s->cmds[i], "host"), *cf = plx_subjob_info(&s->cmds[i], "file");
        struct plx_hostlist hl = { 0 };
        char why[512] = "";
        int bad = cf ? plx_hosts_add_file(&hl, cf, why, sizeof why) : ch ? plx_hosts_add_list(&hl, ch, why, sizeof why)
                                                                       : 0;
        if (!bad && (cf || ch) && hl.n == 0) {
            snprintf(why, sizeof why, "no host in it");
            bad = -1;
        }
        plx_hosts_free(&hl);
        if (bad) {
            snprintf(err, errlen, "info '%s' %s of command %d (%s): %s", cf ? "file" : "host", cf ? cf : ch, i,
                     s->cmds[i].execname, why);
            return -1;
        }
    }
    for (int i = 0; i < s->count; i++) {
        /* host and file belong to their command too (-app-hosts and
         * -app-hostfile of the sub-job); a command without them runs on
         * this job's hosts. The program is checked where it runs here. */
        const char *ch = plx_subjob_info(&s->cmds[i], "host"), *cf = plx_subjob_info(&s->cmds[i], "file");
        if (cf || (ch ? !plx_hosts_is_local(ch) : m->multi))
            continue;
        const char *cw = per_cmd ? plx_subjob_info(&s->cmds[i], "wdir") : wdir;
        const char *cp = per_cmd ? plx_subjob_info(&s->cmds[i], "path") : path;
        if (cw && access(cw, X_OK) != 0) {
            snprintf(err, errlen, "info 'wdir' %s%s: %s", cw, per_cmd ? " (of one command)" : "", strerror(errno));
            return -1;
        }
        if (plx_subjob_check_prog(s->cmds[i].execname, cw, cp, err, errlen) != 0)
            return -1;
    }

    if (m->usize > 0) {
        int room = m->usize - m->size - m->spawned_live;
        if (total > room && room > 0 && plx_subjob_fit(s, nprocs, room) == 0) {
            total = 0;
            for (int i = 0; i < s->count; i++)
                total += s->cmds[i].nprocs = nprocs[i];    /* the reply says how many started */
        }
        if (total > room) {
            snprintf(err, errlen, "%d processes requested, but the universe (mpiexec -usize %d) has room for %d "
                     "more (%d running)", total, m->usize, room < 0 ? 0 : room, m->size + m->spawned_live);
            return -1;
        }
    }
    /* the sub-job's command line */
    char **argv = NULL, self[PATH_MAX], usize[32], hosts[4096] = "", num[s->count][16];
    int n = 0, cap = 0;
    ssize_t l = readlink("/proc/self/exe", self, sizeof self - 1);
    if (l <= 0) {
        snprintf(err, errlen, "cannot find mpiexec's own program: %s", strerror(errno));
        return -1;
    }
    self[l] = 0;
    plx_subjob_push(&argv, &n, &cap, self);
    if (m->tag)
        plx_subjob_push(&argv, &n, &cap, "-l");
    if (m->verbose)
        plx_subjob_push(&argv, &n, &cap, "-v");
    if (any_host || m->multi) {
        /* the commands without host or file run on this job's hosts: its
         * -hosts, or (a job placed by -app-hosts only) the hosts it runs on */
        int nh = m->hostlist.n > 0 ? m->hostlist.n : m->multi ? m->nhosts : 0;
        for (int h = 0; h < nh; h++) {
            size_t hl = strlen(hosts);
            snprintf(hosts + hl, sizeof hosts - hl, "%s%s", h ? "," : "",
                     m->hostlist.n > 0 ? m->hostlist.h[h].name : m->hosts[h].name);
        }
        if (nh > 0) {
            plx_subjob_push(&argv, &n, &cap, "-hosts");
            plx_subjob_push(&argv, &n, &cap, hosts);
        }
        if (m->launcher_exec) {
            plx_subjob_push(&argv, &n, &cap, "--launcher-exec");
            plx_subjob_push(&argv, &n, &cap, m->launcher_exec);
        } else if (m->launcher == PLX_LAUNCHER_FORK || m->launcher == PLX_LAUNCHER_SSH) {
            plx_subjob_push(&argv, &n, &cap, "--launcher");
            plx_subjob_push(&argv, &n, &cap, m->launcher == PLX_LAUNCHER_FORK ? "fork" : "ssh");
        }
        if (m->proxy_path) {
            plx_subjob_push(&argv, &n, &cap, "--proxy");
            plx_subjob_push(&argv, &n, &cap, m->proxy_path);
        }
    }
    if (m->usize > 0) {
        snprintf(usize, sizeof usize, "%d", m->usize - m->size - m->spawned_live);
        plx_subjob_push(&argv, &n, &cap, "-usize");
        plx_subjob_push(&argv, &n, &cap, usize);
    }
    plx_subjob_push(&argv, &n, &cap, "--spawn-report");
    plx_subjob_push(&argv, &n, &cap, s->parent_port);
    for (int i = 0; i < s->count; i++) {
        if (i)
            plx_subjob_push(&argv, &n, &cap, ":");
        snprintf(num[i], sizeof num[i], "%d", nprocs[i]);
        plx_subjob_push(&argv, &n, &cap, "-n");
        plx_subjob_push(&argv, &n, &cap, num[i]);
        const char *ch = plx_subjob_info(&s->cmds[i], "host"), *cf = plx_subjob_info(&s->cmds[i], "file");
        if (cf) {
            plx_subjob_push(&argv, &n, &cap, "-app-hostfile");
            plx_subjob_push(&argv, &n, &cap, cf);
        } else if (ch) {
            plx_subjob_push(&argv, &n, &cap, "-app-hosts");
            plx_subjob_push(&argv, &n, &cap, ch);
        }
        plx_subjob_push(&argv, &n, &cap, "--");
        if (per_cmd) {
            const char *cw = plx_subjob_info(&s->cmds[i], "wdir"), *cp = plx_subjob_info(&s->cmds[i], "path");
            plx_subjob_push(&argv, &n, &cap, "/bin/sh");
            plx_subjob_push(&argv, &n, &cap, "-c");
            plx_subjob_push(&argv, &n, &cap,
                            "[ -z \"$0\" ] || cd \"$0\" || exit 127; [ -z \"$1\" ] || PATH=\"$1:$PATH\"; shift; "
                            "exec \"$@\"");
            plx_subjob_push(&argv, &n, &cap, cw ? cw : "");
            plx_subjob_push(&argv, &n, &cap, cp ? cp : "");
        }
        plx_subjob_push(&argv, &n, &cap, s->cmds[i].execname);
        for (int a = 0; a < s->cmds[i].argc; a++)
            plx_subjob_push(&argv, &n, &cap, s->cmds[i].argv[a]);
    }

    pid_t pid = fork();
    if (pid < 0) {
        snprintf(err, errlen, "fork: %s", strerror(errno));
        free(argv);
        return -1;
    }
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGTERM);
        sigprocmask(SIG_SETMASK, &m->orig_mask, NULL);
        int dn = open("/dev/null", O_RDONLY);
        if (dn >= 0) {
            dup2(dn, 0);
            close(dn);
        }
        setenv("PLEXUS_PARENT_PORT", s->parent_port, 1);
        if (path) {
            const char *old = getenv("PATH");
            char np[8192];
            snprintf(np, sizeof np, "%s%s%s", path, old ? ":" : "", old ? old : "");
            setenv("PATH", np, 1);
        }
        if (wdir && chdir(wdir) != 0) {
            dprintf(2, "mpiexec: spawn: info 'wdir' %s: %s\n", wdir, strerror(errno));
            _exit(127);
        }
        execv(self, argv);
        dprintf(2, "mpiexec: spawn: cannot run %s: %s\n", self, strerror(errno));
        _exit(127);
    }
    free(argv);
    m->subjobs = realloc(m->subjobs, (size_t)(m->nsubjobs + 1) * sizeof *m->subjobs);
    if (!m->subjobs) {
        plx_mpiexec_msg("out of memory");
        exit(1);
    }
    struct plx_subjob *sj = &m->subjobs[m->nsubjobs++];
    memset(sj, 0, sizeof *sj);
    sj->pid = pid;
    sj->nprocs = total;
    snprintf(sj->what, sizeof sj->what, "spawned job %d (%s%s, %d process%s, by rank %d)", m->nsubjobs,
             c0->execname, s->count > 1 ? ", ..." : "", total, total == 1 ? "" : "es", rank);
    m->spawned_live += total;
    if (m->verbose)
        plx_mpiexec_msg("%s: mpiexec pid %ld", sj->what, (long)pid);
    return 0;
}

void plx_subjob_check(void)
{
    struct plx_mpiexec *m = &plx_mpiexec;
    for (int i = 0; i < m->nsubjobs; i++) {
        struct plx_subjob *sj = &m->subjobs[i];
        int status;
        if (sj->exited || waitpid(sj->pid, &status, WNOHANG) != sj->pid)
            continue;
        sj->exited = 1;
        m->spawned_live -= sj->nprocs;
        int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        if (code == 0 || m->phase != PLX_MPIEXEC_RUNNING) {
            if (code)
                plx_mpiexec_set_code(code);
            continue;
        }
        plx_mpiexec_msg("%s failed (its mpiexec exited with status %d); killing the job", sj->what, code);
        plx_mpiexec_set_code(code);
        plx_mpiexec_end_job(PLX_MPIEXEC_KILL_GRACE);
    }
}

int plx_subjob_live(void)
{
    int live = 0;
    for (int i = 0; i < plx_mpiexec.nsubjobs; i++)
        live += !plx_mpiexec.subjobs[i].exited;
    return live;
}

/* A sub-job's mpiexec is asked to end (SIGTERM) before it is killed: it
 * then ends its own ranks (and reaps them) as any mpiexec does. */
void plx_subjob_signal(int sig)
{
    for (int i = 0; i < plx_mpiexec.nsubjobs; i++) {
        struct plx_subjob *sj = &plx_mpiexec.subjobs[i];
        if (sj->exited)
            continue;
        if (sig == SIGKILL && !sj->termed)
            sig = SIGTERM;
        sj->termed |= sig == SIGTERM;
        kill(sj->pid, sig);
    }
}

int plx_subjob_report(int code)
{
    struct plx_mpiexec *m = &plx_mpiexec;
    struct plx_port_name pn;
    if (!m->report_port || plx_port_parse(m->report_port, &pn) != 0)
        return code;
    /* the port is open only while the parent waits for its children */
    char why[256], msg[700];
    if (code != 0)
        snprintf(msg, sizeof msg, "%s (mpiexec exit status %d)", m->first_msg[0] ? m->first_msg : "the job failed",
                 code);
    else
        snprintf(msg, sizeof msg, "the processes ended without connecting to their parents (did they call "
                 "MPI_Init?)");
    int fd = plx_port_connect(&pn, PLX_PORT_FAIL, msg, plx_util_now() + 5, why, sizeof why);
    if (fd < 0)
        return code;            /* the children had connected: the failure is the job's */
    close(fd);
    return 0;                   /* the parent's MPI_Comm_spawn reports it */
}
