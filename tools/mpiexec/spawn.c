/*
 * Local process spawning for mpiexec (see spawn.h).
 *
 * The child, between fork and exec: new process group, PR_SET_PDEATHSIG so
 * it cannot outlive mpiexec even when mpiexec is SIGKILLed, stdio onto the
 * pipes, the PMI socket without close-on-exec, the environment, the signal
 * mask and SIGPIPE disposition mpiexec's own caller gave us. mpiexec is
 * single-threaded, so calling setenv() in the child is safe.
 *
 * Binding (PLEXUS_BIND, default "core"): when a host runs 2 or more ranks
 * and no more than the CPUs it may use, local rank i is bound to the i-th of
 * those CPUs, as Open MPI does for small jobs. Unbound ranks start wherever
 * the scheduler puts them, often two on one CPU until it moves one, and a
 * ping-pong then runs at a fraction of its speed for its first
 * milliseconds. "none" leaves placement to the scheduler. A rank bound by
 * default (PLEXUS_BIND unset) is told the CPUs it was bound from, in
 * PLEXUS_MPIEXEC_CPUS ("0,1"): the SCTP transport gives the binding up
 * there when PLEXUS_SCTP_UNBIND=1 (src/transport/sctp/sctp.c).
 */
#include "spawn.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

static int plx_spawn_nonblock(int fd)
{
    int fl = fcntl(fd, F_GETFL);
    return fl < 0 ? -1 : fcntl(fd, F_SETFL, fl | O_NONBLOCK);
}

static void plx_spawn_error(const struct plx_spawn_desc *d, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void plx_spawn_error(const struct plx_spawn_desc *d, const char *fmt, ...)
{
    char buf[1024];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    if (d->errbuf != NULL && d->errlen > 0)
        snprintf(d->errbuf, d->errlen, "%s", buf);
    else
        fprintf(stderr, "mpiexec: %s\n", buf);
}

static void plx_spawn_setenv_int(const char *name, int v)
{
    char buf[32];
    snprintf(buf, sizeof(buf), "%d", v);
    setenv(name, buf, 1);
}

/* Binds the child as PLEXUS_BIND says (see the top of this file). A
 * placement hint only: when it cannot be done the rank runs unbound. */
static void plx_spawn_bind(const struct plx_spawn_desc *d)
{
    const char *how = getenv("PLEXUS_BIND");
    if (how != NULL && strcmp(how, "core") != 0)
        return;             /* "none" (mpiexec refuses other values at start) */
    cpu_set_t allowed;
    if (d->local_size < 2 || sched_getaffinity(0, sizeof allowed, &allowed) != 0 ||
        d->local_size > CPU_COUNT(&allowed))
        return;
    for (int cpu = 0, seen = 0; cpu < CPU_SETSIZE; cpu++) {
        if (!CPU_ISSET(cpu, &allowed))
            continue;
        if (seen++ == d->local_rank) {
            if (how == NULL) {
                char list[2048];
                size_t l = 0;
                for (int c = 0; c < CPU_SETSIZE && l < sizeof list; c++)
                    if (CPU_ISSET(c, &allowed))
                        l += (size_t)snprintf(list + l, sizeof list - l, "%s%d", l ? "," : "", c);
                if (l < sizeof list)        /* else too many to say: the rank stays bound */
                    setenv("PLEXUS_MPIEXEC_CPUS", list, 1);
            }
            cpu_set_t one;
            CPU_ZERO(&one);
            CPU_SET(cpu, &one);
            (void)sched_setaffinity(0, sizeof one, &one);
            return;
        }
    }
}

/* Runs in the child; never returns. Errors go through status_fd. */
static _Noreturn void plx_spawn_child(const struct plx_spawn_desc *d, pid_t parent,
                                      int pmi_fd, int out_fd, int err_fd, int status_fd)
{
    int err;

    setpgid(0, 0);
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != parent)
        _exit(127);                 /* mpiexec already died */

    int in_fd = d->stdin_fd >= 0 ? d->stdin_fd : open("/dev/null", O_RDONLY);
    /* Keep the PMI socket away from 0..2 before the dup2s below. */
    if (pmi_fd <= 2) {
        int nfd = fcntl(pmi_fd, F_DUPFD_CLOEXEC, 3);
        if (nfd < 0)
            goto err_report;
        pmi_fd = nfd;
    }
    if (in_fd < 0 || dup2(in_fd, 0) < 0 || dup2(out_fd, 1) < 0 || dup2(err_fd, 2) < 0)
        goto err_report;
    if (d->stdin_fd < 0 && in_fd > 2)
        close(in_fd);
    if (fcntl(pmi_fd, F_SETFD, 0) != 0)     /* the program inherits the PMI socket */
        goto err_report;

    for (char *const *e = d->env; e != NULL && *e != NULL; e++) {
        char *eq = strchr(*e, '=');
        if (eq == NULL)
            continue;
        *eq = '\0';                 /* our copy of the memory: fine to edit */
        setenv(*e, eq + 1, 1);
        *eq = '=';
    }
    plx_spawn_setenv_int("PMI_FD", pmi_fd);
    plx_spawn_setenv_int("PMI_RANK", d->rank);
    plx_spawn_setenv_int("PMI_SIZE", d->size);
    plx_spawn_setenv_int("MPI_LOCALRANKID", d->local_rank);
    plx_spawn_setenv_int("MPI_LOCALNRANKS", d->local_size);
    setenv("PLEXUS_MPIEXEC", "1", 1);
    plx_spawn_bind(d);

    signal(SIGPIPE, SIG_DFL);       /* mpiexec ignores it; ignoring is inherited */
    if (d->nofile != NULL)
        (void)setrlimit(RLIMIT_NOFILE, d->nofile);
    if (d->sigmask != NULL)
        sigprocmask(SIG_SETMASK, d->sigmask, NULL);

    execvp(d->argv[0], d->argv);
err_report:
    err = errno;
    if (write(status_fd, &err, sizeof(err)) < 0) {
        /* nothing more we can do */
    }
    _exit(127);
}

int plx_spawn_start(const struct plx_spawn_desc *d, struct plx_spawn_proc *p)
{
    int sv[2], out[2], errp[2], st[2];
    int err = 0, child_err;
    pid_t pid, me = getpid();
    ssize_t n;

    p->pid = 0;
    p->pmi_fd = p->out_fd = p->err_fd = -1;
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
        goto err_report;
    if (pipe2(out, O_CLOEXEC) != 0)
        goto err_close_sv;
    if (pipe2(errp, O_CLOEXEC) != 0)
        goto err_close_out;
    if (pipe2(st, O_CLOEXEC) != 0)
        goto err_close_errp;

    pid = fork();
    if (pid < 0)
        goto err_close_st;
    if (pid == 0)
        plx_spawn_child(d, me, sv[1], out[1], errp[1], st[1]);

    /* Parent. setpgid here too: whichever of us runs first wins the race,
     * and signals sent right after this function returns reach the group. */
    (void)setpgid(pid, pid);
    close(sv[1]);
    close(out[1]);
    close(errp[1]);
    close(st[1]);
    do {
        n = read(st[0], &child_err, sizeof(child_err));
    } while (n < 0 && errno == EINTR);
    close(st[0]);
    if (n == (ssize_t)sizeof(child_err)) {
        /* exec failed: collect the child, report, clean up */
        while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
            ;
        plx_spawn_error(d, "cannot run '%s' (rank %d%s%s): %s", d->argv[0], d->rank,
                        d->host ? " on host " : "", d->host ? d->host : "",
                        strerror(child_err));
        close(sv[0]);
        close(out[0]);
        close(errp[0]);
        return child_err ? child_err : ENOEXEC;
    }
    (void)plx_spawn_nonblock(sv[0]);
    (void)plx_spawn_nonblock(out[0]);
    (void)plx_spawn_nonblock(errp[0]);
    p->pid = pid;
    p->pmi_fd = sv[0];
    p->out_fd = out[0];
    p->err_fd = errp[0];
    return 0;

err_close_st:
    err = errno;
    close(st[0]);
    close(st[1]);
    errno = err;
err_close_errp:
    err = errno;
    close(errp[0]);
    close(errp[1]);
    errno = err;
err_close_out:
    err = errno;
    close(out[0]);
    close(out[1]);
    errno = err;
err_close_sv:
    err = errno;
    close(sv[0]);
    close(sv[1]);
    errno = err;
err_report:
    err = errno;
    plx_spawn_error(d, "cannot start rank %d%s%s: %s%s", d->rank, d->host ? " on host " : "",
                    d->host ? d->host : "", strerror(err),
                    err == EMFILE ? " (raise the limit with ulimit -n)" : "");
    return err ? err : EIO;
}

void plx_spawn_signal(const struct plx_spawn_proc *p, int sig, int group)
{
    if (p->pid <= 0)
        return;
    (void)kill(group ? -p->pid : p->pid, sig);
}

/* Removes the /dev/shm names that begin with one of the prefixes. */
static void plx_spawn_sweep_prefixes(char prefix[][300], int nprefix)
{
    DIR *d = opendir("/dev/shm");
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        for (int i = 0; i < nprefix; i++)
            if (prefix[i][0] && strncmp(e->d_name, prefix[i], strlen(prefix[i])) == 0) {
                char path[600];
                snprintf(path, sizeof path, "/dev/shm/%s", e->d_name);
                unlink(path);
                break;
            }
    closedir(d);
}

void plx_spawn_sweep_shm(const char *kvsname)
{
    char prefix[2][300];
    /* the point-to-point segments, and a collective segment whose creator
     * died before every member had mapped it (src/coll/shmcoll.c) */
    int a = snprintf(prefix[0], sizeof prefix[0], "plexus-%s-", kvsname);
    int b = snprintf(prefix[1], sizeof prefix[1], "plx-coll-%.48s-", kvsname);
    if (a <= 0 || (size_t)a >= sizeof prefix[0] || b <= 0 || (size_t)b >= sizeof prefix[1])
        return;
    plx_spawn_sweep_prefixes(prefix, 2);
}

void plx_spawn_sweep_pid(pid_t pid)
{
    if (pid <= 0 || kill(pid, 0) == 0 || errno != ESRCH)
        return;                 /* still there (or not ours to judge): its names are in use */
    char prefix[1][300];
    snprintf(prefix[0], sizeof prefix[0], "%d:", (int)pid);
    plx_spawn_sweep_prefixes(prefix, 1);
}
