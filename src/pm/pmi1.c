/*
 * PMI-1 wire-protocol client (the "simple PMI" text protocol).
 *
 * The launcher (our mpiexec, or MPICH's Hydra) hands every rank one end of a
 * socket in PMI_FD, plus PMI_RANK and PMI_SIZE. The client writes one command
 * per line, "cmd=NAME key=value ...\n", and reads one reply line per command
 * (barrier_in blocks until every rank entered). Requests are strictly
 * synchronous, so a single read buffer is enough; replies may arrive in
 * several pieces and are reassembled here.
 *
 * The singleton (no launcher at all) lives here too: rank 0 of 1 with a
 * private in-process key-value table. Which client runs is pm.c's choice.
 *
 * Invariant: all state lives in plx_pm (one struct); only one command is in
 * flight at any time (callers hold the library's API lock).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "pm/pm_impl.h"

static const struct plx_pm_ops plx_pmi1_ops, plx_singleton_ops;

/* Longest line we send or accept: a put carries kvsname (256), key (64) and
 * value (1024) plus the keywords; Hydra's PMI_process_mapping can be longer
 * on big jobs, so leave room. */
#define PLX_PMI1_LINE_MAX 8192

struct plx_pmi1_kv {
    struct plx_pmi1_kv *next;
    char *key;
    char *val;
};

static struct plx_pm_global {
    int initialized;
    int fd;                         /* PMI_FD, -1 for a singleton */
    int our_mpiexec;                /* PLEXUS_MPIEXEC=1: abort may carry a message */
    int keylen_max;                 /* from get_maxes, capped by PLX_PM_MAX_* */
    int vallen_max;
    struct plx_pm_info info;
    size_t rlen;                    /* bytes buffered in rbuf */
    char rbuf[PLX_PMI1_LINE_MAX];
    struct plx_pmi1_kv *local;      /* singleton key-value table (a list: few keys) */
} plx_pm = { .fd = -1 };

static void plx_pmi1_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void plx_pmi1_err(const char *fmt, ...)
{
    char msg[1024];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    if (plx_pm.initialized || plx_pm.fd >= 0)
        fprintf(stderr, "plexus: rank %d: PMI: %s\n", plx_pm.info.rank, msg);
    else
        fprintf(stderr, "plexus: PMI: %s\n", msg);
}

/* Parses a whole decimal int; 0 on success. */
static int plx_pmi1_parse_int(const char *s, int *out_p)
{
    char *end;
    long v;

    if (s == NULL || *s == '\0')
        return -1;
    errno = 0;
    v = strtol(s, &end, 10);
    if (errno != 0 || *end != '\0' || v < INT_MIN || v > INT_MAX)
        return -1;
    *out_p = (int)v;
    return 0;
}

static uint32_t plx_pmi1_random32(void)
{
    uint32_t r;

    if (getrandom(&r, sizeof(r), GRND_NONBLOCK) == (ssize_t)sizeof(r))
        return r;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint32_t)ts.tv_nsec ^ ((uint32_t)getpid() << 16) ^ (uint32_t)ts.tv_sec;
}

/* ---- wire -------------------------------------------------------------- */

static plx_status_t plx_pmi1_write_all(const char *buf, size_t len)
{
    while (len > 0) {
        /* MSG_NOSIGNAL: a dead launcher must give an error, not SIGPIPE. */
        ssize_t n = send(plx_pm.fd, buf, len, MSG_NOSIGNAL);
        if (n < 0 && errno == ENOTSOCK)
            n = write(plx_pm.fd, buf, len);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            plx_pmi1_err("cannot write to the launcher (PMI_FD=%d): %s", plx_pm.fd,
                         strerror(errno));
            return PLX_ERR_PM;
        }
        buf += n;
        len -= (size_t)n;
    }
    return PLX_OK;
}

static plx_status_t plx_pmi1_send(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static plx_status_t plx_pmi1_send(const char *fmt, ...)
{
    char line[PLX_PMI1_LINE_MAX];
    va_list ap;
    int n;

    va_start(ap, fmt);
    n = vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= sizeof(line)) {
        plx_pmi1_err("command too long for the PMI-1 protocol");
        return PLX_ERR_ARG;
    }
    return plx_pmi1_write_all(line, (size_t)n);
}

/* Reads one reply line (without its newline) into line. Blocks. */
static plx_status_t plx_pmi1_recv_line(char *line, size_t len)
{
    for (;;) {
        char *nl = memchr(plx_pm.rbuf, '\n', plx_pm.rlen);
        if (nl != NULL) {
            size_t l = (size_t)(nl - plx_pm.rbuf);
            if (l >= len) {
                plx_pmi1_err("reply from the launcher too long (%zu bytes)", l);
                return PLX_ERR_PM;
            }
            memcpy(line, plx_pm.rbuf, l);
            line[l] = '\0';
            plx_pm.rlen -= l + 1;
            memmove(plx_pm.rbuf, nl + 1, plx_pm.rlen);
            return PLX_OK;
        }
        if (plx_pm.rlen == sizeof(plx_pm.rbuf)) {
            plx_pmi1_err("reply from the launcher too long (no newline in %zu bytes)",
                         plx_pm.rlen);
            return PLX_ERR_PM;
        }
        ssize_t n = read(plx_pm.fd, plx_pm.rbuf + plx_pm.rlen, sizeof(plx_pm.rbuf) - plx_pm.rlen);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            plx_pmi1_err("cannot read from the launcher (PMI_FD=%d): %s", plx_pm.fd,
                         strerror(errno));
            return PLX_ERR_PM;
        }
        if (n == 0) {
            plx_pmi1_err("the launcher closed the PMI connection (did mpiexec die?)");
            return PLX_ERR_PM;
        }
        plx_pm.rlen += (size_t)n;
    }
}

/* Finds "key=" as a whole token of line; copies its value (up to the next
 * space) into out. Returns 0 when found. */
static int plx_pmi1_find(const char *line, const char *key, char *out, size_t outlen)
{
    size_t klen = strlen(key);
    const char *p = line;

    while (*p != '\0') {
        while (*p == ' ')
            p++;
        const char *end = strchr(p, ' ');
        if (end == NULL)
            end = p + strlen(p);
        if ((size_t)(end - p) > klen && strncmp(p, key, klen) == 0 && p[klen] == '=') {
            size_t vlen = (size_t)(end - p) - klen - 1;
            if (vlen >= outlen)
                return -2;
            memcpy(out, p + klen + 1, vlen);
            out[vlen] = '\0';
            return 0;
        }
        p = end;
    }
    return -1;
}

/* Reads a reply, checks it is "cmd=<expect>", and when it carries rc!=0
 * returns PLX_ERR_PM (rc_p receives rc; 0 when absent). */
static plx_status_t plx_pmi1_reply(const char *expect, char *line, size_t len, int *rc_p)
{
    char cmd[64], rcs[32];
    plx_status_t st;
    int rc = 0;

    if (rc_p != NULL)
        *rc_p = 0;
    st = plx_pmi1_recv_line(line, len);
    if (st != PLX_OK)
        return st;
    if (plx_pmi1_find(line, "cmd", cmd, sizeof(cmd)) != 0 || strcmp(cmd, expect) != 0) {
        plx_pmi1_err("expected cmd=%s from the launcher, got \"%.200s\"", expect, line);
        return PLX_ERR_PM;
    }
    if (plx_pmi1_find(line, "rc", rcs, sizeof(rcs)) == 0 && plx_pmi1_parse_int(rcs, &rc) != 0)
        rc = -1;
    if (rc_p != NULL)
        *rc_p = rc;
    return rc == 0 ? PLX_OK : PLX_ERR_PM;
}

/* Sends a request without arguments and returns the integer field `field` of
 * the reply `expect`. */
static plx_status_t plx_pmi1_query_int(const char *cmd, const char *expect, const char *field,
                                       int *out_p)
{
    char line[PLX_PMI1_LINE_MAX], v[32];
    plx_status_t st;

    st = plx_pmi1_send("cmd=%s\n", cmd);
    if (st != PLX_OK)
        return st;
    st = plx_pmi1_reply(expect, line, sizeof(line), NULL);
    if (st != PLX_OK) {
        plx_pmi1_err("cmd=%s failed: \"%.200s\"", cmd, line);
        return st;
    }
    if (plx_pmi1_find(line, field, v, sizeof(v)) != 0 || plx_pmi1_parse_int(v, out_p) != 0) {
        plx_pmi1_err("reply to cmd=%s lacks an integer %s: \"%.200s\"", cmd, field, line);
        return PLX_ERR_PM;
    }
    return PLX_OK;
}

/* ---- init ---------------------------------------------------------------- */

plx_status_t plx_pmi1_init_singleton(struct plx_pm_info *info_p, const struct plx_pm_ops **ops_p)
{
    memset(&plx_pm.info, 0, sizeof(plx_pm.info));
    plx_pm.info.rank = 0;
    plx_pm.info.size = 1;
    plx_pm.info.appnum = 0;
    plx_pm.info.universe_size = 1;
    plx_pm.info.singleton = 1;
    snprintf(plx_pm.info.kvsname, sizeof(plx_pm.info.kvsname), "singleton-%ld-%08x",
             (long)getpid(), plx_pmi1_random32());
    plx_pm.fd = -1;
    plx_pm.keylen_max = PLX_PM_MAX_KEY;
    plx_pm.vallen_max = PLX_PM_MAX_VAL;
    plx_pm.initialized = 1;
    *info_p = plx_pm.info;
    *ops_p = &plx_singleton_ops;
    return PLX_OK;
}

plx_status_t plx_pmi1_init(const char *fds, struct plx_pm_info *info_p, const struct plx_pm_ops **ops_p)
{
    char line[PLX_PMI1_LINE_MAX];
    const char *ranks = getenv("PMI_RANK"), *sizes = getenv("PMI_SIZE");
    const char *ours = getenv("PLEXUS_MPIEXEC");
    struct plx_pm_info info;
    int fd, rc, v;
    plx_status_t st;

    memset(&info, 0, sizeof(info));
    /* A socket, not just any descriptor: a program started by an MPI rank
     * inherits PMI_FD but not the socket (close-on-exec), and its own files
     * may have taken the number. */
    struct stat sb;
    if (plx_pmi1_parse_int(fds, &fd) != 0 || fd < 0 || fstat(fd, &sb) != 0
        || !S_ISSOCK(sb.st_mode)) {
        plx_pmi1_err("PMI_FD=%s is not an open socket; was this process started by a "
                     "launcher that is gone, or by an MPI process (PMI_FD is meant for the "
                     "launcher's direct children only)?", fds);
        return PLX_ERR_PM;
    }
    if (plx_pmi1_parse_int(ranks, &info.rank) != 0 || plx_pmi1_parse_int(sizes, &info.size) != 0
        || info.size < 1 || info.rank < 0 || info.rank >= info.size) {
        plx_pmi1_err("PMI_FD is set but PMI_RANK=%s / PMI_SIZE=%s are missing or invalid",
                     ranks ? ranks : "(unset)", sizes ? sizes : "(unset)");
        return PLX_ERR_PM;
    }
    plx_pm.fd = fd;
    plx_pm.rlen = 0;
    plx_pm.info.rank = info.rank;
    plx_pm.our_mpiexec = ours != NULL && strcmp(ours, "1") == 0;
    /* Programs the rank runs (system(), popen) must not inherit the socket. */
    (void)fcntl(fd, F_SETFD, FD_CLOEXEC);

    st = plx_pmi1_send("cmd=init pmi_version=1 pmi_subversion=1\n");
    if (st != PLX_OK)
        goto err_forget_fd;
    st = plx_pmi1_reply("response_to_init", line, sizeof(line), &rc);
    if (st != PLX_OK) {
        plx_pmi1_err("the launcher refused PMI version 1.1: \"%.200s\"", line);
        goto err_forget_fd;
    }

    plx_pm.keylen_max = PLX_PM_MAX_KEY;
    plx_pm.vallen_max = PLX_PM_MAX_VAL;
    st = plx_pmi1_send("cmd=get_maxes\n");
    if (st != PLX_OK)
        goto err_forget_fd;
    st = plx_pmi1_reply("maxes", line, sizeof(line), NULL);
    if (st != PLX_OK)
        goto err_forget_fd;
    char num[32];
    if (plx_pmi1_find(line, "keylen_max", num, sizeof(num)) == 0
        && plx_pmi1_parse_int(num, &v) == 0 && v > 0 && v < plx_pm.keylen_max)
        plx_pm.keylen_max = v;
    if (plx_pmi1_find(line, "vallen_max", num, sizeof(num)) == 0
        && plx_pmi1_parse_int(num, &v) == 0 && v > 0 && v < plx_pm.vallen_max)
        plx_pm.vallen_max = v;

    st = plx_pmi1_send("cmd=get_my_kvsname\n");
    if (st != PLX_OK)
        goto err_forget_fd;
    st = plx_pmi1_reply("my_kvsname", line, sizeof(line), NULL);
    if (st != PLX_OK
        || plx_pmi1_find(line, "kvsname", info.kvsname, sizeof(info.kvsname)) != 0
        || info.kvsname[0] == '\0') {
        plx_pmi1_err("no usable kvsname from the launcher: \"%.200s\"", line);
        st = PLX_ERR_PM;
        goto err_forget_fd;
    }

    st = plx_pmi1_query_int("get_appnum", "appnum", "appnum", &info.appnum);
    if (st != PLX_OK)
        goto err_forget_fd;
    st = plx_pmi1_query_int("get_universe_size", "universe_size", "size", &info.universe_size);
    if (st != PLX_OK)
        goto err_forget_fd;
    if (info.universe_size < info.size)     /* Hydra says -1: "unknown" */
        info.universe_size = info.size;

    info.singleton = 0;
    plx_pm.info = info;
    plx_pm.initialized = 1;
    *info_p = info;
    *ops_p = &plx_pmi1_ops;
    return PLX_OK;

err_forget_fd:
    plx_pm.fd = -1;
    plx_pm.rlen = 0;
    return st;
}

/* ---- key-value space ------------------------------------------------------ */

/* The PMI-1 line format splits on spaces and ends at a newline; keys also end
 * at '='. Refuse what cannot travel rather than corrupt it (silently: the
 * caller knows what it tried to publish and reports it). */
static plx_status_t plx_pmi1_check_kv(const char *key, const char *val)
{
    return plx_pm_check_kv(key, val, plx_pm.keylen_max, plx_pm.vallen_max);
}

static struct plx_pmi1_kv *plx_pmi1_local_find(const char *key)
{
    for (struct plx_pmi1_kv *kv = plx_pm.local; kv != NULL; kv = kv->next)
        if (strcmp(kv->key, key) == 0)
            return kv;
    return NULL;
}

static plx_status_t plx_pmi1_local_put(const char *key, const char *val)
{
    struct plx_pmi1_kv *kv = plx_pmi1_local_find(key);
    char *v = strdup(val);

    if (v == NULL)
        return PLX_ERR_NOMEM;
    if (kv != NULL) {
        free(kv->val);
        kv->val = v;
        return PLX_OK;
    }
    kv = malloc(sizeof(*kv));
    if (kv == NULL)
        goto err_free_val;
    kv->key = strdup(key);
    if (kv->key == NULL)
        goto err_free_kv;
    kv->val = v;
    kv->next = plx_pm.local;
    plx_pm.local = kv;
    return PLX_OK;

err_free_kv:
    free(kv);
err_free_val:
    free(v);
    return PLX_ERR_NOMEM;
}

static plx_status_t plx_pmi1_put(const char *key, const char *val)
{
    char line[PLX_PMI1_LINE_MAX];
    plx_status_t st;

    if (!plx_pm.initialized)
        return PLX_ERR_INTERN;
    st = plx_pmi1_check_kv(key, val);
    if (st != PLX_OK)
        return st;
    if (plx_pm.info.singleton)
        return plx_pmi1_local_put(key, val);

    st = plx_pmi1_send("cmd=put kvsname=%s key=%s value=%s\n", plx_pm.info.kvsname, key, val);
    if (st != PLX_OK)
        return st;
    st = plx_pmi1_reply("put_result", line, sizeof(line), NULL);
    if (st != PLX_OK)
        plx_pmi1_err("put of key %s failed: \"%.200s\"", key, line);
    return st;
}

static plx_status_t plx_pmi1_fence(void)
{
    char line[PLX_PMI1_LINE_MAX];
    plx_status_t st;

    if (!plx_pm.initialized)
        return PLX_ERR_INTERN;
    if (plx_pm.info.singleton)
        return PLX_OK;
    st = plx_pmi1_send("cmd=barrier_in\n");
    if (st != PLX_OK)
        return st;
    st = plx_pmi1_reply("barrier_out", line, sizeof(line), NULL);
    if (st != PLX_OK)
        plx_pmi1_err("barrier failed: \"%.200s\"", line);
    return st;
}

static plx_status_t plx_pmi1_get(const char *key, char *val, size_t len)
{
    char line[PLX_PMI1_LINE_MAX];
    plx_status_t st;
    int rc = 0, found;

    if (!plx_pm.initialized)
        return PLX_ERR_INTERN;
    st = plx_pmi1_check_kv(key, NULL);
    if (st != PLX_OK)
        return st;
    if (plx_pm.info.singleton) {
        struct plx_pmi1_kv *kv = plx_pmi1_local_find(key);
        if (kv == NULL)
            return PLX_ERR_ARG;
        if (strlen(kv->val) >= len)
            return PLX_ERR_TRUNCATE;
        memcpy(val, kv->val, strlen(kv->val) + 1);
        return PLX_OK;
    }

    st = plx_pmi1_send("cmd=get kvsname=%s key=%s\n", plx_pm.info.kvsname, key);
    if (st != PLX_OK)
        return st;
    st = plx_pmi1_reply("get_result", line, sizeof(line), &rc);
    if (st != PLX_OK && rc == 0)
        return st;                  /* protocol error, already reported */
    if (rc != 0)
        return PLX_ERR_ARG;         /* not found: the caller decides if that is an error */
    found = plx_pmi1_find(line, "value", val, len);
    if (found == -2)
        return PLX_ERR_TRUNCATE;
    if (found != 0) {
        if (len == 0)
            return PLX_ERR_TRUNCATE;
        val[0] = '\0';              /* "value=" with nothing after it: empty */
    }
    return PLX_OK;
}

/* ---- end of the job -------------------------------------------------------- */

static void plx_pmi1_abort(int code, const char *msg)
{
    char clean[512];
    size_t i;

    fflush(stdout);                 /* _exit below skips stdio */
    if (msg == NULL)
        msg = "";
    /* One line on the wire: newlines become spaces. */
    for (i = 0; msg[i] != '\0' && i < sizeof(clean) - 1; i++)
        clean[i] = (msg[i] == '\n' || msg[i] == '\r') ? ' ' : msg[i];
    clean[i] = '\0';

    if (plx_pm.initialized && !plx_pm.info.singleton && plx_pm.fd >= 0) {
        /* Our mpiexec prints the message (it takes message= to the end of the
         * line). Other launchers (Hydra) do not print it: say it ourselves. */
        if (plx_pm.our_mpiexec) {
            (void)plx_pmi1_send("cmd=abort exitcode=%d%s%s\n", code,
                                clean[0] ? " message=" : "", clean);
        } else {
            fprintf(stderr, "plexus: rank %d aborted the job with exit code %d%s%s\n",
                    plx_pm.info.rank, code, clean[0] ? ": " : "", clean);
            /* Hydra forwards output asynchronously and kills the job at once
             * on abort: give it a moment to pass our line on first. */
            struct timespec pause = { 0, 200 * 1000 * 1000 };
            nanosleep(&pause, NULL);
            (void)plx_pmi1_send("cmd=abort exitcode=%d\n", code);
        }
    } else {
        fprintf(stderr, "plexus: rank %d aborted with exit code %d%s%s\n", plx_pm.info.rank,
                code, clean[0] ? ": " : "", clean);
    }
    fflush(stderr);
    _exit(code);
}

static plx_status_t plx_pmi1_finalize(void)
{
    char line[PLX_PMI1_LINE_MAX];
    plx_status_t st = PLX_OK;

    if (!plx_pm.initialized)
        return PLX_OK;
    if (!plx_pm.info.singleton && plx_pm.fd >= 0) {
        st = plx_pmi1_send("cmd=finalize\n");
        if (st == PLX_OK)
            st = plx_pmi1_reply("finalize_ack", line, sizeof(line), NULL);
        close(plx_pm.fd);
        plx_pm.fd = -1;
        plx_pm.rlen = 0;
    }
    while (plx_pm.local != NULL) {
        struct plx_pmi1_kv *kv = plx_pm.local;
        plx_pm.local = kv->next;
        free(kv->key);
        free(kv->val);
        free(kv);
    }
    plx_pm.initialized = 0;
    return st;
}

/* ---- name service ------------------------------------------------------------ */

/* cmd=<what>_name service=S [port=P] -> cmd=<what>_result rc=0 [port=P];
 * rc != 0 with msg=not_published / already_published: PLX_ERR_ARG. */
static plx_status_t plx_pmi1_name(const char *what, const char *service, const char *port, char *out,
                                  size_t len)
{
    char line[PLX_PMI1_LINE_MAX], expect[32];
    int rc = 0;
    plx_status_t st = port ? plx_pmi1_send("cmd=%s_name service=%s port=%s\n", what, service, port)
                           : plx_pmi1_send("cmd=%s_name service=%s\n", what, service);
    if (st != PLX_OK)
        return st;
    snprintf(expect, sizeof expect, "%s_result", what);
    st = plx_pmi1_reply(expect, line, sizeof line, &rc);
    if (st != PLX_OK && rc == 0)
        return st;              /* protocol error, reported */
    if (rc != 0) {
        char msg[64] = "";
        plx_pmi1_find(line, "msg", msg, sizeof msg);
        if (strstr(msg, "not_supported"))
            return PLX_ERR_UNSUPPORTED;     /* an older mpiexec, or Hydra without a name server */
        return PLX_ERR_ARG;
    }
    if (out && plx_pmi1_find(line, "port", out, len) != 0)
        return PLX_ERR_PM;
    return PLX_OK;
}

static plx_status_t plx_pmi1_publish(const char *service, const char *port)
{
    return plx_pmi1_name("publish", service, port, NULL, 0);
}

static plx_status_t plx_pmi1_lookup(const char *service, char *port, size_t len)
{
    return plx_pmi1_name("lookup", service, NULL, port, len);
}

static plx_status_t plx_pmi1_unpublish(const char *service)
{
    return plx_pmi1_name("unpublish", service, NULL, NULL, 0);
}

/* ---- spawn ---------------------------------------------------------------------- */

/* MPICH's PMI-1 form: one "mcmd=spawn" block of key=value lines (a value
 * runs to the end of its line) per command, answered once after the last
 * by cmd=spawn_result; our mpiexec's msg= runs to the end of the line. */
static plx_status_t plx_pmi1_spawn(int count, struct plx_pm_spawn_cmd *cmds, const char *parent_port,
                                   char *err, size_t errlen)
{
    plx_status_t st = PLX_OK;
    for (int i = 0; i < count && st == PLX_OK; i++) {
        const struct plx_pm_spawn_cmd *c = &cmds[i];
        int argc = 0;
        while (c->argv && c->argv[argc])
            argc++;
        for (int a = 0; a < argc; a++)
            if (strchr(c->argv[a], '\n')) {
                snprintf(err, errlen, "argument %d of command %d holds a line end, which PMI cannot carry", a, i);
                return PLX_ERR_ARG;
            }
        st = plx_pmi1_send("mcmd=spawn\nnprocs=%d\nexecname=%s\ntotspawns=%d\nspawnssofar=%d\nargcnt=%d\n",
                           c->maxprocs, c->cmd, count, i + 1, argc);
        for (int a = 0; a < argc && st == PLX_OK; a++)
            st = plx_pmi1_send("arg%d=%s\n", a + 1, c->argv[a]);
        if (st == PLX_OK)
            st = plx_pmi1_send("preput_num=1\npreput_key_0=PARENT_ROOT_PORT_NAME\npreput_val_0=%s\ninfo_num=%d\n",
                               parent_port, c->ninfo);
        for (int k = 0; k < c->ninfo && st == PLX_OK; k++)
            st = plx_pmi1_send("info_key_%d=%s\ninfo_val_%d=%s\n", k, c->keys[k], k, c->vals[k]);
        if (st == PLX_OK)
            st = plx_pmi1_send("endcmd\n");
    }
    if (st != PLX_OK)
        return st;
    char line[PLX_PMI1_LINE_MAX];
    int rc = 0;
    st = plx_pmi1_reply("spawn_result", line, sizeof line, &rc);
    if (st == PLX_OK) {
        /* our mpiexec lists the counts when a "soft" key lowered them */
        const char *p = strstr(line, " started=");
        p = p ? p + 9 : NULL;
        for (int i = 0; i < count; i++) {
            char *end = NULL;
            long v = p ? strtol(p, &end, 10) : -1;
            int ok = p && end != p;
            cmds[i].started = ok && v >= 0 && v <= cmds[i].maxprocs ? (int)v : cmds[i].maxprocs;
            p = ok && *end == ',' ? end + 1 : NULL;
        }
        return PLX_OK;
    }
    const char *m = strstr(line, "msg=");
    if (rc != 0 && m && strstr(m, "not_supported"))
        return PLX_ERR_UNSUPPORTED;         /* an mpiexec without spawn (Hydra answers otherwise) */
    snprintf(err, errlen, "%s", m ? m + 4 : "the launcher refused it");
    return rc != 0 ? PLX_ERR_ARG : st;
}

static const struct plx_pm_ops plx_pmi1_ops = {
    .name = "PMI-1",
    .put = plx_pmi1_put,
    .fence = plx_pmi1_fence,
    .get = plx_pmi1_get,
    .abort = plx_pmi1_abort,
    .finalize = plx_pmi1_finalize,
    .publish = plx_pmi1_publish,
    .lookup = plx_pmi1_lookup,
    .unpublish = plx_pmi1_unpublish,
    .spawn = plx_pmi1_spawn,
};

/* The singleton is this file's too: the same private table, no wire. */
static const struct plx_pm_ops plx_singleton_ops = {
    .name = "singleton",
    .put = plx_pmi1_put,
    .fence = plx_pmi1_fence,
    .get = plx_pmi1_get,
    .abort = plx_pmi1_abort,
    .finalize = plx_pmi1_finalize,
};
