/*
 * plexus-proxy: the per-host half of a multi-host mpiexec job.
 *
 * mpiexec starts one proxy on every host of the job (over ssh, or any
 * command given with --launcher-exec). The proxy connects back to mpiexec
 * (wire.h: it tries the advertised addresses in order, authenticates with the
 * job's proxy secret and keeps the first connection that gets a LAUNCH),
 * forks the ranks of its host (spawn.c: own process group, PMI socket, output
 * pipes, killed with the proxy), then relays:
 *   - the ranks' PMI-1 bytes to mpiexec and mpiexec's replies back, unchanged
 *     (mpiexec runs the one PMI server of the job);
 *   - their stdout/stderr (mpiexec assembles lines per rank);
 *   - rank 0's stdin from mpiexec;
 *   - signals from mpiexec to the ranks' process groups;
 *   - each rank's start, spawn failure and exit status.
 *
 * The proxy decides nothing about the job: mpiexec judges every exit. It only
 * keeps its host clean: when the connection to mpiexec is lost (mpiexec died,
 * the network or the other host went away: keepalive probes, or data that
 * nobody acknowledges, tell within the host timeout; see wire.h) or the
 * proxy itself is asked to stop
 * (SIGTERM, SIGHUP when ssh goes away), it SIGKILLs every rank's process group
 * and exits. Ranks die with the proxy (PR_SET_PDEATHSIG), and the proxy dies
 * with its launcher process where that is mpiexec's child.
 *
 * Output backpressure: the ranks' pipes are read only while less than
 * PLX_PROXY_OUT_HIGH bytes wait to go to mpiexec, so a slow mpiexec slows
 * the ranks down instead of growing the proxy without bound.
 *
 * Usage (mpiexec builds it): plexus-proxy --connect ADDR[,ADDR...] --id N
 *        --host NAME; the secret in $PLEXUS_PROXY_SECRET or on stdin's first line.
 * All mutable state is in plx_proxy.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <netdb.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "spawn.h"
#include "wire.h"
#include "util/util.h"

#define PLX_PROXY_CONNECT_TIMEOUT_MS 3000   /* per address tried */
#define PLX_PROXY_LAUNCH_WAIT_MS 15000      /* HELLO sent, waiting for LAUNCH */
#define PLX_PROXY_OUT_HIGH (1u << 20)       /* stop reading rank output above this */
#define PLX_PROXY_DRAIN_GRACE 1.0           /* after DONE: forward what remains */
#define PLX_PROXY_FINAL_FLUSH_MS 5000

struct plx_proxy_rank {
    int rank;
    int appnum;
    int local_rank;
    int has_stdin;
    struct plx_spawn_proc proc;
    int started;
    int exited;
    uint8_t *pmi_out;           /* replies the rank has not read yet */
    size_t pmi_off, pmi_len, pmi_cap;
};

struct plx_proxy_app {
    char **argv;
    char **env;                 /* forwarded environment + -genv + -env */
};

static struct plx_proxy {
    int id;
    const char *host;
    char secret[PLX_WIRE_SECRET_HEX + 1];
    struct plx_wire_conn conn;
    unsigned timeout_ms;
    int sigfd;
    sigset_t orig_mask;
    struct rlimit orig_nofile;
    int nofile_raised;

    int size;                   /* of the job */
    int *local_of;              /* job rank -> index in r[], -1: not here */
    int napps;
    const char *kvsname;        /* the job's name (for plx_spawn_sweep_shm), NULL if not told */
    struct plx_proxy_app *apps;
    int nlocal;
    struct plx_proxy_rank *r;
    int nexited;

    int in_pipe;                /* rank 0's stdin, -1: none or closed */
    uint8_t *in_buf;
    size_t in_off, in_len, in_cap;
    int in_eof;                 /* mpiexec's stdin ended: close after the buffer */
    int in_acked;               /* the last chunk was acknowledged */

    int done;                   /* DONE received */
    double drain_until;
} plx_proxy = { .sigfd = -1, .in_pipe = -1, .conn = { .fd = -1 } };

/* ---- helpers ----------------------------------------------------------------- */

static void plx_proxy_msg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void plx_proxy_msg(const char *fmt, ...)
{
    char buf[1024];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    dprintf(2, "plexus-proxy (host %s): %s\n", plx_proxy.host ? plx_proxy.host : "?", buf);
}

static void *plx_proxy_xalloc(size_t n)
{
    void *p = calloc(1, n ? n : 1);
    if (p == NULL) {
        plx_proxy_msg("out of memory");
        exit(1);
    }
    return p;
}

static void plx_proxy_kill_all(int sig)
{
    for (int i = 0; i < plx_proxy.nlocal; i++)
        plx_spawn_signal(&plx_proxy.r[i].proc, sig, 1);
}

/* Lost mpiexec or told to stop: nothing of this job may stay on the host. */
static _Noreturn void plx_proxy_abandon(const char *why)
{
    int running = 0;

    for (int i = 0; i < plx_proxy.nlocal; i++)
        running += plx_proxy.r[i].started && !plx_proxy.r[i].exited;
    plx_proxy_kill_all(SIGKILL);
    /* with every rank already over (mpiexec ended the job and went away
     * before saying DONE), nothing was lost: no message */
    if (running > 0)
        plx_proxy_msg("%s; killed the %d running rank%s of this host", why, running,
                      running == 1 ? "" : "s");
    for (int i = 0; i < plx_proxy.nlocal; i++)
        if (plx_proxy.r[i].proc.pid > 0) {
            while (waitpid(plx_proxy.r[i].proc.pid, NULL, 0) < 0 && errno == EINTR)
                ;
            plx_spawn_sweep_pid(plx_proxy.r[i].proc.pid);
        }
    if (plx_proxy.kvsname)
        plx_spawn_sweep_shm(plx_proxy.kvsname);
    exit(plx_proxy.done && running == 0 ? 0 : 1);
}

static void plx_proxy_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* A message mpiexec prints (in order with the rest of the job's output). */
static void plx_proxy_log(const char *fmt, ...)
{
    char buf[1024];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    plx_wire_begin(&plx_proxy.conn, PLX_WIRE_LOG);
    plx_wire_str(&plx_proxy.conn, buf);
    plx_wire_end(&plx_proxy.conn);
}

/* ---- connecting to mpiexec --------------------------------------------------------- */

/* "1.2.3.4:5", "[fd00::1]:5" or "name:5" -> a connected non-blocking
 * socket, or -1 with the reason in why. */
static int plx_proxy_dial(const char *target, char *why, size_t whylen)
{
    char host[256];
    const char *port;
    struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *res, *ai;
    int fd = -1, rc;

    if (target[0] == '[') {
        const char *close_br = strchr(target, ']');
        if (close_br == NULL || close_br[1] != ':') {
            snprintf(why, whylen, "malformed address");
            return -1;
        }
        snprintf(host, sizeof(host), "%.*s", (int)(close_br - target - 1), target + 1);
        port = close_br + 2;
    } else {
        const char *colon = strrchr(target, ':');
        if (colon == NULL) {
            snprintf(why, whylen, "malformed address");
            return -1;
        }
        snprintf(host, sizeof(host), "%.*s", (int)(colon - target), target);
        port = colon + 1;
    }
    rc = getaddrinfo(host, port, &hints, &res);
    if (rc != 0) {
        snprintf(why, whylen, "%s", gai_strerror(rc));
        return -1;
    }
    snprintf(why, whylen, "no address");
    for (ai = res; ai != NULL; ai = ai->ai_next) {
        fd = socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC,
                    ai->ai_protocol);
        if (fd < 0) {
            snprintf(why, whylen, "socket: %s", strerror(errno));
            continue;
        }
        if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0)
            break;
        if (errno == EINPROGRESS) {
            struct pollfd pfd = { .fd = fd, .events = POLLOUT };
            int err = 0;
            socklen_t len = sizeof(err);
            int n;
            do {
                n = poll(&pfd, 1, PLX_PROXY_CONNECT_TIMEOUT_MS);
            } while (n < 0 && errno == EINTR);
            if (n == 1 && getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) == 0 && err == 0)
                break;
            snprintf(why, whylen, "%s", n == 0 ? "connect timed out" : strerror(err ? err
                                                                                     : errno));
        } else {
            snprintf(why, whylen, "%s", strerror(errno));
        }
        close(fd);
        fd = -1;
    }
    freeaddrinfo(res);
    return fd;
}

/* Sends HELLO and waits for mpiexec's first frame. 1: LAUNCH arrived (the
 * frame is the next one in conn), 0: refused/closed (try another address). */
static int plx_proxy_handshake(char *why, size_t whylen)
{
    struct plx_wire_conn *c = &plx_proxy.conn;
    double deadline = plx_util_now() + PLX_PROXY_LAUNCH_WAIT_MS / 1000.0;

    plx_wire_begin(c, PLX_WIRE_HELLO);
    plx_wire_str(c, PLX_WIRE_MAGIC);
    plx_wire_str(c, plx_proxy.secret);
    plx_wire_u32(c, (uint32_t)plx_proxy.id);
    plx_wire_str(c, plx_proxy.host);
    plx_wire_u32(c, (uint32_t)getpid());
    plx_wire_end(c);
    if (plx_wire_flush_wait(c, PLX_PROXY_CONNECT_TIMEOUT_MS) != 0) {
        snprintf(why, whylen, "sending the hello: %s", strerror(errno));
        return 0;
    }
    for (;;) {
        size_t avail = c->in_len - c->in_off;
        if (avail >= 5) {
            if (c->in[c->in_off + 4] != PLX_WIRE_LAUNCH) {
                snprintf(why, whylen, "the peer is not our mpiexec (unexpected answer)");
                return 0;
            }
            return 1;
        }
        double left = deadline - plx_util_now();
        if (left <= 0) {
            snprintf(why, whylen, "no answer to the hello");
            return 0;
        }
        struct pollfd pfd = { .fd = c->fd, .events = POLLIN };
        int n = poll(&pfd, 1, (int)ceil(left * 1000));
        if (n < 0 && errno != EINTR) {
            snprintf(why, whylen, "poll: %s", strerror(errno));
            return 0;
        }
        if (n <= 0)
            continue;
        int rc = plx_wire_read(c);
        if (rc <= 0) {
            snprintf(why, whylen, "%s", rc == 0 ? "closed the connection (wrong secret or "
                                                  "not our mpiexec)" : strerror(errno));
            return 0;
        }
    }
}

static void plx_proxy_connect(const char *targets)
{
    char *list = strdup(targets), *save = NULL;
    char errs[2048] = "";
    size_t elen = 0;

    if (list == NULL)
        exit(1);
    for (char *t = strtok_r(list, ",", &save); t != NULL; t = strtok_r(NULL, ",", &save)) {
        char why[256];
        int fd = plx_proxy_dial(t, why, sizeof(why));
        if (fd >= 0) {
            plx_wire_tune_socket(fd, plx_proxy.timeout_ms);
            plx_wire_init(&plx_proxy.conn, fd, PLX_WIRE_FRAME_MAX);
            if (plx_proxy_handshake(why, sizeof(why))) {
                free(list);
                return;
            }
            plx_wire_close(&plx_proxy.conn);
        }
        int n = snprintf(errs + elen, sizeof(errs) - elen, "%s%s (%s)", elen ? ", " : "", t,
                         why);
        if (n > 0 && (size_t)n < sizeof(errs) - elen)
            elen += (size_t)n;
    }
    free(list);
    plx_proxy_msg("cannot reach mpiexec at any of its addresses: %s (choose the network "
                  "with PLEXUS_IFACES)", errs);
    exit(1);
}

/* ---- the job of this host ------------------------------------------------------------ */

static char **plx_proxy_rd_strv(struct plx_wire_rd *rd, char **prefix, int nprefix)
{
    uint32_t n = plx_wire_rd_u32(rd);
    char **v;

    if (rd->bad || n > rd->left / 4) {
        rd->bad = 1;
        return NULL;
    }
    v = plx_proxy_xalloc(((size_t)n + (size_t)nprefix + 1) * sizeof(char *));
    for (int i = 0; i < nprefix; i++)
        v[i] = prefix[i];
    for (uint32_t i = 0; i < n; i++) {
        v[nprefix + i] = plx_wire_rd_strdup(rd);
        if (v[nprefix + i] == NULL)
            return NULL;
    }
    return v;
}

static int plx_proxy_count(char **v)
{
    int n = 0;
    while (v != NULL && v[n] != NULL)
        n++;
    return n;
}

static void plx_proxy_launch_parse(struct plx_wire_rd *rd)
{
    struct plx_proxy *p = &plx_proxy;
    char *cwd;
    char **fwd_env;
    int nfwd;

    p->size = (int)plx_wire_rd_u32(rd);
    p->timeout_ms = plx_wire_rd_u32(rd);
    cwd = plx_wire_rd_strdup(rd);
    fwd_env = plx_proxy_rd_strv(rd, NULL, 0);
    nfwd = plx_proxy_count(fwd_env);
    p->napps = (int)plx_wire_rd_u32(rd);
    if (rd->bad || p->size < 1 || p->size > PLX_WIRE_JOB_MAX || p->napps < 1 || p->napps > p->size)
        goto err_bad;
    p->apps = plx_proxy_xalloc((size_t)p->napps * sizeof(*p->apps));
    for (int a = 0; a < p->napps; a++) {
        p->apps[a].argv = plx_proxy_rd_strv(rd, NULL, 0);
        p->apps[a].env = plx_proxy_rd_strv(rd, fwd_env, nfwd);
        if (rd->bad || p->apps[a].argv == NULL || p->apps[a].argv[0] == NULL)
            goto err_bad;
    }
    p->nlocal = (int)plx_wire_rd_u32(rd);
    if (rd->bad || p->nlocal < 1 || p->nlocal > p->size)
        goto err_bad;
    p->r = plx_proxy_xalloc((size_t)p->nlocal * sizeof(*p->r));
    p->local_of = plx_proxy_xalloc((size_t)p->size * sizeof(int));
    for (int i = 0; i < p->size; i++)
        p->local_of[i] = -1;
    for (int i = 0; i < p->nlocal; i++) {
        struct plx_proxy_rank *rk = &p->r[i];
        rk->rank = (int)plx_wire_rd_u32(rd);
        rk->appnum = (int)plx_wire_rd_u32(rd);
        rk->local_rank = (int)plx_wire_rd_u32(rd);
        rk->has_stdin = (int)plx_wire_rd_u8(rd);
        rk->proc.pid = 0;
        rk->proc.pmi_fd = rk->proc.out_fd = rk->proc.err_fd = -1;
        if (rd->bad || rk->rank < 0 || rk->rank >= p->size || p->local_of[rk->rank] >= 0
            || rk->appnum < 0 || rk->appnum >= p->napps)
            goto err_bad;
        p->local_of[rk->rank] = i;
    }
    plx_wire_tune_socket(p->conn.fd, p->timeout_ms);
    if (cwd != NULL && cwd[0] != '\0' && chdir(cwd) != 0) {
        const char *home = getenv("HOME");
        int ok = home != NULL && chdir(home) == 0;
        plx_proxy_log("warning: host %s has no directory %s (%s); its ranks start in %s",
                      p->host, cwd, strerror(errno), ok ? home : "the proxy's directory");
    }
    free(cwd);
    for (int i = 0; i < nfwd; i++)
        if (strncmp(fwd_env[i], PLX_SPAWN_KVSNAME_ENV "=", sizeof PLX_SPAWN_KVSNAME_ENV) == 0)
            p->kvsname = fwd_env[i] + sizeof PLX_SPAWN_KVSNAME_ENV;
    free(fwd_env);              /* the strings live on in every app's env */
    return;

err_bad:
    plx_proxy_msg("malformed job description from mpiexec");
    exit(1);
}

/* Descriptors: 4 per rank (PMI, stdout, stderr, the exec status pipe while
 * starting) plus a few. The ranks get the original limit back. */
static void plx_proxy_raise_nofile(void)
{
    struct plx_proxy *p = &plx_proxy;
    rlim_t need = (rlim_t)p->nlocal * 4 + 64;

    if (plx_util_raise_nofile(need, &p->orig_nofile, NULL) == 1)
        p->nofile_raised = 1;
}

static void plx_proxy_start_ranks(void)
{
    struct plx_proxy *p = &plx_proxy;
    int failed = 0;
    int stdin_fd = -1;

    for (int i = 0; i < p->nlocal; i++) {
        struct plx_proxy_rank *rk = &p->r[i];
        char err[1024];

        if (failed) {
            rk->exited = 1;
            p->nexited++;
            plx_wire_begin(&p->conn, PLX_WIRE_SPAWN_FAILED);
            plx_wire_u32(&p->conn, (uint32_t)rk->rank);
            plx_wire_u32(&p->conn, 0);
            plx_wire_str(&p->conn, "");
            plx_wire_end(&p->conn);
            continue;
        }
        if (rk->has_stdin && p->in_pipe < 0) {
            int fds[2];
            if (pipe2(fds, O_CLOEXEC) == 0) {
                (void)fcntl(fds[1], F_SETFL, fcntl(fds[1], F_GETFL) | O_NONBLOCK);
                p->in_pipe = fds[1];
                stdin_fd = fds[0];
                p->in_acked = 1;
            }
        }
        struct plx_spawn_desc d = {
            .rank = rk->rank,
            .size = p->size,
            .local_rank = rk->local_rank,
            .local_size = p->nlocal,
            .argv = p->apps[rk->appnum].argv,
            .env = p->apps[rk->appnum].env,
            .stdin_fd = rk->has_stdin ? stdin_fd : -1,
            .sigmask = &p->orig_mask,
            .nofile = p->nofile_raised ? &p->orig_nofile : NULL,
            .host = p->host,
            .errbuf = err,
            .errlen = sizeof(err),
        };
        int e = plx_spawn_start(&d, &rk->proc);
        if (rk->has_stdin && stdin_fd >= 0) {
            close(stdin_fd);
            stdin_fd = -1;
        }
        if (e != 0) {
            failed = 1;
            rk->exited = 1;
            p->nexited++;
            plx_wire_begin(&p->conn, PLX_WIRE_SPAWN_FAILED);
            plx_wire_u32(&p->conn, (uint32_t)rk->rank);
            plx_wire_u32(&p->conn, (uint32_t)e);
            plx_wire_str(&p->conn, err);
            plx_wire_end(&p->conn);
            continue;
        }
        rk->started = 1;
        plx_wire_begin(&p->conn, PLX_WIRE_STARTED);
        plx_wire_u32(&p->conn, (uint32_t)rk->rank);
        plx_wire_u32(&p->conn, (uint32_t)rk->proc.pid);
        plx_wire_end(&p->conn);
    }
    (void)plx_wire_flush(&p->conn);
}

/* ---- relaying ------------------------------------------------------------------------ */

static void plx_proxy_output_eof(struct plx_proxy_rank *rk, int stream)
{
    int *fd = stream == 1 ? &rk->proc.out_fd : &rk->proc.err_fd;

    close(*fd);
    *fd = -1;
    plx_wire_begin(&plx_proxy.conn, PLX_WIRE_OUTPUT_EOF);
    plx_wire_u32(&plx_proxy.conn, (uint32_t)rk->rank);
    plx_wire_u8(&plx_proxy.conn, (unsigned)stream);
    plx_wire_end(&plx_proxy.conn);
}

/* Forwards what the pipe holds, in a bounded number of reads (more when the
 * rank just exited: what it wrote goes before its exit). A descendant that
 * writes without pause cannot hold the proxy here. */
static void plx_proxy_output_read(struct plx_proxy_rank *rk, int stream, int all)
{
    uint8_t buf[16384];
    int *fd = stream == 1 ? &rk->proc.out_fd : &rk->proc.err_fd;

    for (int rounds = 0; *fd >= 0 && rounds < (all ? 64 : 4); rounds++) {
        ssize_t n = read(*fd, buf, sizeof(buf));
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && errno == EAGAIN)
            return;
        if (n <= 0) {
            plx_proxy_output_eof(rk, stream);
            return;
        }
        plx_wire_begin(&plx_proxy.conn, PLX_WIRE_OUTPUT);
        plx_wire_u32(&plx_proxy.conn, (uint32_t)rk->rank);
        plx_wire_u8(&plx_proxy.conn, (unsigned)stream);
        plx_wire_bytes(&plx_proxy.conn, buf, (size_t)n);
        plx_wire_end(&plx_proxy.conn);
    }
}

static void plx_proxy_pmi_close(struct plx_proxy_rank *rk)
{
    if (rk->proc.pmi_fd < 0)
        return;
    close(rk->proc.pmi_fd);
    rk->proc.pmi_fd = -1;
    rk->pmi_off = rk->pmi_len = 0;
    plx_wire_begin(&plx_proxy.conn, PLX_WIRE_PMI_EOF);
    plx_wire_u32(&plx_proxy.conn, (uint32_t)rk->rank);
    plx_wire_end(&plx_proxy.conn);
}

static void plx_proxy_pmi_read(struct plx_proxy_rank *rk)
{
    uint8_t buf[4096];

    for (int rounds = 0; rk->proc.pmi_fd >= 0 && rounds < 64; rounds++) {
        ssize_t n = read(rk->proc.pmi_fd, buf, sizeof(buf));
        if (n > 0) {
            plx_wire_begin(&plx_proxy.conn, PLX_WIRE_PMI);
            plx_wire_u32(&plx_proxy.conn, (uint32_t)rk->rank);
            plx_wire_bytes(&plx_proxy.conn, buf, (size_t)n);
            plx_wire_end(&plx_proxy.conn);
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && errno == EAGAIN)
            return;
        plx_proxy_pmi_close(rk);
        return;
    }
}

static void plx_proxy_pmi_write(struct plx_proxy_rank *rk)
{
    while (rk->proc.pmi_fd >= 0 && rk->pmi_off < rk->pmi_len) {
        ssize_t n = send(rk->proc.pmi_fd, rk->pmi_out + rk->pmi_off, rk->pmi_len - rk->pmi_off,
                         MSG_NOSIGNAL);
        if (n > 0) {
            rk->pmi_off += (size_t)n;
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && errno == EAGAIN)
            return;
        plx_proxy_pmi_close(rk);    /* the rank is gone: its exit tells the rest */
        return;
    }
    rk->pmi_off = rk->pmi_len = 0;
}

static void plx_proxy_pmi_queue(struct plx_proxy_rank *rk, const uint8_t *b, size_t n)
{
    if (rk->proc.pmi_fd < 0 || n == 0)
        return;                 /* (nothing to add: no buffer may exist yet) */
    if (rk->pmi_len + n > rk->pmi_cap) {
        size_t cap = rk->pmi_cap ? rk->pmi_cap : 4096;
        while (cap < rk->pmi_len + n)
            cap *= 2;
        uint8_t *nb = realloc(rk->pmi_out, cap);
        if (nb == NULL) {
            plx_proxy_msg("out of memory");
            plx_proxy_abandon("out of memory");
        }
        rk->pmi_out = nb;
        rk->pmi_cap = cap;
    }
    memcpy(rk->pmi_out + rk->pmi_len, b, n);
    rk->pmi_len += n;
    plx_proxy_pmi_write(rk);
}

static void plx_proxy_stdin_close(void)
{
    if (plx_proxy.in_pipe >= 0)
        close(plx_proxy.in_pipe);
    plx_proxy.in_pipe = -1;
    plx_proxy.in_off = plx_proxy.in_len = 0;
}

static void plx_proxy_stdin_write(void)
{
    struct plx_proxy *p = &plx_proxy;

    while (p->in_pipe >= 0 && p->in_off < p->in_len) {
        ssize_t n = write(p->in_pipe, p->in_buf + p->in_off, p->in_len - p->in_off);
        if (n > 0) {
            p->in_off += (size_t)n;
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && errno == EAGAIN)
            return;
        /* EPIPE: rank 0 closed its stdin; mpiexec stops reading its own */
        plx_proxy_stdin_close();
        plx_wire_begin(&p->conn, PLX_WIRE_STDIN_ACK);
        plx_wire_u8(&p->conn, 1);
        plx_wire_end(&p->conn);
        p->in_acked = 1;
        return;
    }
    if (p->in_off == p->in_len && !p->in_acked) {
        p->in_off = p->in_len = 0;
        p->in_acked = 1;
        plx_wire_begin(&p->conn, PLX_WIRE_STDIN_ACK);
        plx_wire_u8(&p->conn, p->in_pipe < 0);
        plx_wire_end(&p->conn);
    }
    if (p->in_eof && p->in_off == p->in_len)
        plx_proxy_stdin_close();
}

static void plx_proxy_rank_exited(struct plx_proxy_rank *rk, int signaled, int status)
{
    rk->exited = 1;
    plx_proxy.nexited++;
    /* What it wrote and said before it ended goes first. */
    if (rk->proc.out_fd >= 0)
        plx_proxy_output_read(rk, 1, 1);
    if (rk->proc.err_fd >= 0)
        plx_proxy_output_read(rk, 2, 1);
    plx_proxy_pmi_read(rk);
    plx_proxy_pmi_close(rk);
    if (rk->has_stdin)
        plx_proxy_stdin_close();
    plx_wire_begin(&plx_proxy.conn, PLX_WIRE_EXIT);
    plx_wire_u32(&plx_proxy.conn, (uint32_t)rk->rank);
    plx_wire_u8(&plx_proxy.conn, (unsigned)signaled);
    plx_wire_u32(&plx_proxy.conn, (uint32_t)status);
    plx_wire_end(&plx_proxy.conn);
}

/* SIGCHLD: look at each running rank without reaping it, so its process
 * group id cannot be reused while we may still signal the group. */
static void plx_proxy_check_children(void)
{
    for (int i = 0; i < plx_proxy.nlocal; i++) {
        struct plx_proxy_rank *rk = &plx_proxy.r[i];
        siginfo_t si;

        if (rk->exited || rk->proc.pid <= 0)
            continue;
        memset(&si, 0, sizeof(si));
        if (waitid(P_PID, (id_t)rk->proc.pid, &si, WEXITED | WNOHANG | WNOWAIT) != 0
            || si.si_pid != rk->proc.pid)
            continue;
        if (si.si_code == CLD_EXITED)
            plx_proxy_rank_exited(rk, 0, si.si_status);
        else if (si.si_code == CLD_KILLED || si.si_code == CLD_DUMPED)
            plx_proxy_rank_exited(rk, 1, si.si_status);
    }
}

static void plx_proxy_signals_read(void)
{
    struct signalfd_siginfo si;

    while (read(plx_proxy.sigfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
        if (si.ssi_signo != SIGCHLD) {
            char why[64];
            snprintf(why, sizeof(why), "got signal %d", (int)si.ssi_signo);
            plx_proxy_abandon(why);
        }
    }
    plx_proxy_check_children();
}

static void plx_proxy_frame(int type, struct plx_wire_rd *rd, double now)
{
    struct plx_proxy *p = &plx_proxy;

    switch (type) {
    case PLX_WIRE_PMI: {
        uint32_t rank = plx_wire_rd_u32(rd);
        if (!rd->bad && rank < (uint32_t)p->size && p->local_of[rank] >= 0)
            plx_proxy_pmi_queue(&p->r[p->local_of[rank]], rd->p, rd->left);
        break;
    }
    case PLX_WIRE_SIGNAL: {
        int sig = (int)plx_wire_rd_u32(rd);
        int group = (int)plx_wire_rd_u8(rd);
        if (rd->bad || sig <= 0 || sig >= 65)
            break;
        for (int i = 0; i < p->nlocal; i++) {
            if (group)
                plx_spawn_signal(&p->r[i].proc, sig, 1);
            else if (!p->r[i].exited)
                plx_spawn_signal(&p->r[i].proc, sig, 0);
        }
        break;
    }
    case PLX_WIRE_STDIN:
        if (rd->left == 0) {
            p->in_eof = 1;
        } else if (p->in_pipe >= 0) {
            if (p->in_len + rd->left > p->in_cap) {
                size_t cap = p->in_cap ? p->in_cap : 65536;
                while (cap < p->in_len + rd->left)
                    cap *= 2;
                uint8_t *nb = realloc(p->in_buf, cap);
                if (nb == NULL)
                    plx_proxy_abandon("out of memory");
                p->in_buf = nb;
                p->in_cap = cap;
            }
            memcpy(p->in_buf + p->in_len, rd->p, rd->left);
            p->in_len += rd->left;
            p->in_acked = 0;
        } else {
            /* rank 0 is gone or closed its stdin */
            plx_wire_begin(&p->conn, PLX_WIRE_STDIN_ACK);
            plx_wire_u8(&p->conn, 1);
            plx_wire_end(&p->conn);
        }
        plx_proxy_stdin_write();
        break;
    case PLX_WIRE_DONE:
        /* Every rank of the job is over: what is left in the ranks'
         * process groups is a leftover. Its output still drains. */
        p->done = 1;
        plx_proxy_kill_all(SIGKILL);
        plx_proxy_stdin_close();
        p->drain_until = now + PLX_PROXY_DRAIN_GRACE;
        break;
    default:
        break;                  /* LAUNCH again or unknown: ignore */
    }
}

/* Runs every complete frame mpiexec sent. */
static void plx_proxy_conn_frames(double now)
{
    int type, got;
    struct plx_wire_rd rd;

    while ((got = plx_wire_next(&plx_proxy.conn, &type, &rd)) == 1)
        plx_proxy_frame(type, &rd, now);
    if (got < 0)
        plx_proxy_abandon("mpiexec sent a malformed frame");
}

static int plx_proxy_output_open(void)
{
    for (int i = 0; i < plx_proxy.nlocal; i++)
        if (plx_proxy.r[i].proc.out_fd >= 0 || plx_proxy.r[i].proc.err_fd >= 0)
            return 1;
    return 0;
}

enum plx_proxy_fdkind { PLX_PFD_SIGNAL, PLX_PFD_CONN, PLX_PFD_PMI, PLX_PFD_OUT, PLX_PFD_ERR,
                        PLX_PFD_STDIN };

static void plx_proxy_loop(void)
{
    struct plx_proxy *p = &plx_proxy;
    size_t max = (size_t)p->nlocal * 3 + 3;
    struct pollfd *pfd = plx_proxy_xalloc(max * sizeof(*pfd));
    int *kind = plx_proxy_xalloc(max * sizeof(int));
    int *idx = plx_proxy_xalloc(max * sizeof(int));

    double next_check = plx_util_now() + PLX_WIRE_STALL_CHECK;

    for (;;) {
        double now = plx_util_now();
        size_t n = 0;
        double until = next_check;

        if (p->done && p->nexited == p->nlocal
            && (!plx_proxy_output_open() || now >= p->drain_until))
            break;
        if (now >= next_check) {
            if (plx_wire_stalled(p->conn.fd, p->timeout_ms)) {
                char why[128];
                snprintf(why, sizeof(why), "lost the connection to mpiexec (nothing "
                         "acknowledged for %u ms)", p->timeout_ms);
                plx_proxy_abandon(why);
            }
            next_check = now + PLX_WIRE_STALL_CHECK;
            until = next_check;
        }
        if (p->done && p->drain_until < until)
            until = p->drain_until;
        int timeout_ms = (int)ceil((until - now) * 1000) + 1;
        if (timeout_ms < 0)
            timeout_ms = 0;

#define PLX_PROXY_WATCH(f, ev, k, i)                                                    \
    do {                                                                                \
        pfd[n] = (struct pollfd){ .fd = (f), .events = (ev) };                          \
        kind[n] = (k);                                                                  \
        idx[n] = (i);                                                                   \
        n++;                                                                            \
    } while (0)
        PLX_PROXY_WATCH(p->sigfd, POLLIN, PLX_PFD_SIGNAL, -1);
        PLX_PROXY_WATCH(p->conn.fd, POLLIN | (plx_wire_pending(&p->conn) ? POLLOUT : 0),
                        PLX_PFD_CONN, -1);
        int room = plx_wire_pending(&p->conn) < PLX_PROXY_OUT_HIGH;
        for (int i = 0; i < p->nlocal; i++) {
            struct plx_proxy_rank *rk = &p->r[i];
            if (rk->proc.pmi_fd >= 0)
                PLX_PROXY_WATCH(rk->proc.pmi_fd,
                                POLLIN | (rk->pmi_off < rk->pmi_len ? POLLOUT : 0),
                                PLX_PFD_PMI, i);
            if (room && rk->proc.out_fd >= 0)
                PLX_PROXY_WATCH(rk->proc.out_fd, POLLIN, PLX_PFD_OUT, i);
            if (room && rk->proc.err_fd >= 0)
                PLX_PROXY_WATCH(rk->proc.err_fd, POLLIN, PLX_PFD_ERR, i);
        }
        if (p->in_pipe >= 0 && p->in_off < p->in_len)
            PLX_PROXY_WATCH(p->in_pipe, POLLOUT, PLX_PFD_STDIN, -1);
#undef PLX_PROXY_WATCH

        int rc = poll(pfd, n, timeout_ms);
        if (rc < 0 && errno != EINTR)
            plx_proxy_abandon("poll failed");
        if (rc <= 0)
            continue;
        now = plx_util_now();
        if (pfd[0].revents)
            plx_proxy_signals_read();
        for (size_t i = 1; i < n; i++) {
            if (pfd[i].revents == 0)
                continue;
            struct plx_proxy_rank *rk = idx[i] >= 0 ? &p->r[idx[i]] : NULL;
            switch (kind[i]) {
            case PLX_PFD_CONN: {
                if (pfd[i].revents & POLLOUT && plx_wire_flush(&p->conn) != 0) {
                    char why[160];
                    snprintf(why, sizeof(why), "lost the connection to mpiexec (%s)",
                             strerror(errno));
                    plx_proxy_abandon(why);
                }
                if (!(pfd[i].revents & (POLLIN | POLLERR | POLLHUP)))
                    break;
                int r = plx_wire_read(&p->conn);
                plx_proxy_conn_frames(now);
                if (r <= 0) {
                    char why[160];
                    snprintf(why, sizeof(why), "lost the connection to mpiexec (%s)",
                             r == 0 ? "closed" : strerror(errno));
                    plx_proxy_abandon(why);
                }
                break;
            }
            case PLX_PFD_PMI:
                if (rk->proc.pmi_fd >= 0 && pfd[i].revents & POLLOUT)
                    plx_proxy_pmi_write(rk);
                if (rk->proc.pmi_fd >= 0 && pfd[i].revents & (POLLIN | POLLERR | POLLHUP))
                    plx_proxy_pmi_read(rk);
                break;
            case PLX_PFD_OUT:
                if (rk->proc.out_fd >= 0)
                    plx_proxy_output_read(rk, 1, 0);
                break;
            case PLX_PFD_ERR:
                if (rk->proc.err_fd >= 0)
                    plx_proxy_output_read(rk, 2, 0);
                break;
            case PLX_PFD_STDIN:
                plx_proxy_stdin_write();
                break;
            default:
                break;
            }
        }
        if (plx_wire_flush(&p->conn) != 0) {
            char why[160];
            snprintf(why, sizeof(why), "lost the connection to mpiexec (%s)", strerror(errno));
            plx_proxy_abandon(why);
        }
    }
    free(pfd);
    free(kind);
    free(idx);
}

/* ---- setup ----------------------------------------------------------------------------- */

static void plx_proxy_usage(void)
{
    dprintf(2, "usage: plexus-proxy --connect ADDR:PORT[,ADDR:PORT...] --id N --host NAME\n"
               "  started by mpiexec on each host of a multi-host job; the job secret is\n"
               "  read from $%s or from the first line of stdin.\n", PLX_WIRE_SECRET_ENV);
    exit(2);
}

static void plx_proxy_read_secret(void)
{
    const char *s = getenv(PLX_WIRE_SECRET_ENV);
    char line[128];
    size_t len = 0;

    if (s != NULL && *s != '\0') {
        snprintf(plx_proxy.secret, sizeof(plx_proxy.secret), "%s", s);
        unsetenv(PLX_WIRE_SECRET_ENV);      /* the ranks do not get it */
        return;
    }
    /* One line on stdin (ssh passes no environment). Read byte by byte so
     * nothing after the line is taken from whoever shares our stdin. */
    double deadline = plx_util_now() + 10.0;
    while (len + 1 < sizeof(line)) {
        struct pollfd pfd = { .fd = 0, .events = POLLIN };
        int left = (int)ceil((deadline - plx_util_now()) * 1000);
        if (left <= 0 || poll(&pfd, 1, left) <= 0)
            break;
        ssize_t n = read(0, line + len, 1);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0 || line[len] == '\n')
            break;
        len++;
    }
    line[len] = '\0';
    if (len != PLX_WIRE_SECRET_HEX) {
        plx_proxy_msg("no job secret (expected $%s or a line on stdin)", PLX_WIRE_SECRET_ENV);
        exit(2);
    }
    memcpy(plx_proxy.secret, line, len + 1);
}

static void plx_proxy_signals_setup(void)
{
    sigset_t set;
    static const int sigs[] = { SIGCHLD, SIGTERM, SIGINT, SIGHUP, SIGQUIT };

    sigemptyset(&set);
    for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
        sigaddset(&set, sigs[i]);
    if (sigprocmask(SIG_BLOCK, &set, &plx_proxy.orig_mask) != 0
        || (plx_proxy.sigfd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC)) < 0) {
        plx_proxy_msg("signal setup: %s", strerror(errno));
        exit(1);
    }
    /* The ranks start with the mask our launcher gave us, minus nothing. */
    signal(SIGPIPE, SIG_IGN);
}

int main(int argc, char **argv)
{
    struct plx_proxy *p = &plx_proxy;
    const char *connect_to = NULL;
    int type;
    struct plx_wire_rd rd;

    for (int i = 1; i < argc; i++) {
        if (i + 1 < argc && strcmp(argv[i], "--connect") == 0)
            connect_to = argv[++i];
        else if (i + 1 < argc && strcmp(argv[i], "--id") == 0)
            p->id = atoi(argv[++i]);
        else if (i + 1 < argc && strcmp(argv[i], "--host") == 0)
            p->host = argv[++i];
        else
            plx_proxy_usage();
    }
    if (connect_to == NULL || p->host == NULL || p->id < 0)
        plx_proxy_usage();
    /* Descriptors 0..2 must exist, or our sockets would land on them. */
    for (int fd = 0; fd <= 2; fd++)
        if (fcntl(fd, F_GETFD) < 0 && open("/dev/null", fd == 0 ? O_RDONLY : O_WRONLY) < 0)
            exit(1);
    p->timeout_ms = 10000;
    plx_proxy_read_secret();
    plx_proxy_signals_setup();
    plx_proxy_connect(connect_to);
    if (plx_wire_next(&p->conn, &type, &rd) != 1 || type != PLX_WIRE_LAUNCH) {
        /* plx_proxy_handshake saw the frame header; the body may follow */
        for (;;) {
            struct pollfd pfd = { .fd = p->conn.fd, .events = POLLIN };
            if (poll(&pfd, 1, PLX_PROXY_LAUNCH_WAIT_MS) <= 0 || plx_wire_read(&p->conn) <= 0)
                plx_proxy_abandon("mpiexec did not send the job");
            int got = plx_wire_next(&p->conn, &type, &rd);
            if (got < 0)
                plx_proxy_abandon("mpiexec sent a malformed frame");
            if (got == 1)
                break;
        }
    }
    plx_proxy_launch_parse(&rd);
    plx_proxy_raise_nofile();
    plx_proxy_start_ranks();
    plx_proxy_conn_frames(plx_util_now());     /* what came with the LAUNCH */
    plx_proxy_loop();

    /* Forward the last frames, then leave; mpiexec waits for our EOF. */
    (void)plx_wire_flush_wait(&p->conn, PLX_PROXY_FINAL_FLUSH_MS);
    shutdown(p->conn.fd, SHUT_WR);
    for (int i = 0; i < p->nlocal; i++)
        if (p->r[i].proc.pid > 0) {
            while (waitpid(p->r[i].proc.pid, NULL, 0) < 0 && errno == EINTR)
                ;
            plx_spawn_sweep_pid(p->r[i].proc.pid);
        }
    if (p->kvsname)
        plx_spawn_sweep_shm(p->kvsname);
    plx_wire_close(&p->conn);
    return 0;
}
