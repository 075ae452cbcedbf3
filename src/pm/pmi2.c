/*
 * PMI-2 wire-protocol client: what Slurm's srun --mpi=pmi2 serves (and
 * MPICH's Hydra, to a client that asks for version 2).
 *
 * The launcher hands every task a socket in PMI_FD (Slurm also sets
 * PMI_JOBID, PMI_RANK, PMI_SIZE). The client first says, in PMI-1 form,
 *     cmd=init pmi_version=2 pmi_subversion=0\n
 * and reads "cmd=response_to_init ... rc=0\n"; from then on every message
 * in either direction is a 6-character decimal length (padded with spaces:
 * Slurm left-aligns it, Hydra right-aligns it) followed by that many bytes
 * of "cmd=NAME;key=value;...;". A ';' inside a value is written ";;" (we
 * never send one: pm.h forbids ';' in keys and values).
 *
 * Commands used: fullinit (rank, size, appnum), job-getid (the key-value
 * space's name), info-getjobattr universeSize, kvs-put, kvs-fence, kvs-get,
 * abort, finalize. Requests are strictly synchronous (callers hold the
 * library's API lock), so one reply buffer serves.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "pm/pm_impl.h"

#define PLX_PMI2_MSG_MAX 8192

static struct {
    int fd;
    int initialized;
    struct plx_pm_info info;
    int slurm;                          /* Slurm's server (PMI_JOBID set): fences are barriers */
    char jobid[256];
    char buf[PLX_PMI2_MSG_MAX + 1];     /* the last reply, NUL-terminated */
} plx_p2 = { .fd = -1 };

static const struct plx_pm_ops plx_pmi2_ops;
static plx_status_t plx_pmi2_put(const char *key, const char *val);
static plx_status_t plx_pmi2_get(const char *key, char *val, size_t len);
static plx_status_t plx_pmi2_fence_once(void);

static void plx_pmi2_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void plx_pmi2_err(const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fprintf(stderr, "plexus: rank %d: PMI-2: %s\n", plx_p2.info.rank, msg);
}

static plx_status_t plx_pmi2_write(const char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = send(plx_p2.fd, p, n, MSG_NOSIGNAL);
        if (w < 0 && errno == ENOTSOCK)
            w = write(plx_p2.fd, p, n);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            plx_pmi2_err("cannot write to the launcher (PMI_FD=%d): %s", plx_p2.fd, strerror(errno));
            return PLX_ERR_PM;
        }
        p += w;
        n -= (size_t)w;
    }
    return PLX_OK;
}

static plx_status_t plx_pmi2_read(char *p, size_t n)
{
    while (n > 0) {
        ssize_t r = read(plx_p2.fd, p, n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            plx_pmi2_err("cannot read from the launcher (PMI_FD=%d): %s", plx_p2.fd, strerror(errno));
            return PLX_ERR_PM;
        }
        if (r == 0) {
            plx_pmi2_err("the launcher closed the PMI connection (did srun or its step daemon die?)");
            return PLX_ERR_PM;
        }
        p += r;
        n -= (size_t)r;
    }
    return PLX_OK;
}

static plx_status_t plx_pmi2_send(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static plx_status_t plx_pmi2_send(const char *fmt, ...)
{
    char msg[PLX_PMI2_MSG_MAX + 8];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(msg + 6, sizeof msg - 6, fmt, ap);
    va_end(ap);
    if (n < 0 || n > PLX_PMI2_MSG_MAX) {
        plx_pmi2_err("command too long for the PMI-2 protocol");
        return PLX_ERR_ARG;
    }
    char len[8];
    snprintf(len, sizeof len, "%-6d", n);
    memcpy(msg, len, 6);
    return plx_pmi2_write(msg, (size_t)n + 6);
}

/* Reads one message into plx_p2.buf. */
static plx_status_t plx_pmi2_recv(void)
{
    char hdr[7];
    plx_status_t st = plx_pmi2_read(hdr, 6);
    if (st != PLX_OK)
        return st;
    hdr[6] = '\0';
    char *end;
    long n = strtol(hdr, &end, 10);
    while (*end == ' ')
        end++;
    if (*end != '\0' || n < 0 || n > PLX_PMI2_MSG_MAX) {
        plx_pmi2_err("bad message length \"%s\" from the launcher (does it speak PMI-2?)", hdr);
        return PLX_ERR_PM;
    }
    st = plx_pmi2_read(plx_p2.buf, (size_t)n);
    plx_p2.buf[st == PLX_OK ? n : 0] = '\0';
    return st;
}

/* Value of `key` in a "k=v;k=v;" message (";;" stands for ';'); 0 when found. */
static int plx_pmi2_find(const char *msg, const char *key, char *out, size_t outlen)
{
    size_t klen = strlen(key);
    const char *p = msg;
    while (*p) {
        const char *eq = strchr(p, '=');
        if (!eq)
            return -1;
        int match = (size_t)(eq - p) == klen && strncmp(p, key, klen) == 0;
        size_t o = 0;
        const char *v = eq + 1;
        for (;;) {
            if (*v == '\0')
                break;
            if (*v == ';' && v[1] == ';') {
                if (match && o + 1 < outlen)
                    out[o++] = ';';
                v += 2;
                continue;
            }
            if (*v == ';')
                break;
            if (match) {
                if (o + 1 >= outlen)
                    return -2;
                out[o++] = *v;
            }
            v++;
        }
        if (match) {
            out[o] = '\0';
            return 0;
        }
        p = *v ? v + 1 : v;
    }
    return -1;
}

/* Reads a reply: checks cmd=expect and rc=0. */
static plx_status_t plx_pmi2_reply(const char *expect)
{
    plx_status_t st = plx_pmi2_recv();
    if (st != PLX_OK)
        return st;
    char cmd[64], rc[32];
    if (plx_pmi2_find(plx_p2.buf, "cmd", cmd, sizeof cmd) != 0 || strcmp(cmd, expect) != 0) {
        plx_pmi2_err("expected cmd=%s from the launcher, got \"%.200s\"", expect, plx_p2.buf);
        return PLX_ERR_PM;
    }
    if (plx_pmi2_find(plx_p2.buf, "rc", rc, sizeof rc) == 0 && strcmp(rc, "0") != 0)
        return PLX_ERR_PM;
    return PLX_OK;
}

static int plx_pmi2_int(const char *key, int *out)
{
    char v[32], *end;
    if (plx_pmi2_find(plx_p2.buf, key, v, sizeof v) != 0)
        return -1;
    errno = 0;
    long x = strtol(v, &end, 10);
    if (errno || end == v || *end || x < INT_MIN || x > INT_MAX)
        return -1;
    *out = (int)x;
    return 0;
}

/* The PMI-1 form first line and its answer, which picks version 2. */
static plx_status_t plx_pmi2_hello(void)
{
    static const char hello[] = "cmd=init pmi_version=2 pmi_subversion=0\n";
    plx_status_t st = plx_pmi2_write(hello, sizeof hello - 1);
    if (st != PLX_OK)
        return st;
    size_t n = 0;
    for (;;) {
        if (n == sizeof plx_p2.buf - 1) {
            plx_pmi2_err("no end of line in the launcher's answer to init");
            return PLX_ERR_PM;
        }
        if ((st = plx_pmi2_read(plx_p2.buf + n, 1)) != PLX_OK)
            return st;
        if (plx_p2.buf[n] == '\n')
            break;
        n++;
    }
    plx_p2.buf[n] = '\0';
    if (strncmp(plx_p2.buf, "cmd=response_to_init", 20) != 0 || strstr(plx_p2.buf, "rc=0") == NULL ||
        strstr(plx_p2.buf, "pmi_version=2") == NULL) {
        plx_pmi2_err("the launcher does not accept PMI version 2.0: \"%.200s\" (PLEXUS_PMI=pmi1 asks for 1.1)",
                     plx_p2.buf);
        return PLX_ERR_PM;
    }
    return PLX_OK;
}

plx_status_t plx_pmi2_init(const char *fds, struct plx_pm_info *info_p, const struct plx_pm_ops **ops_p)
{
    struct plx_pm_info info;
    memset(&info, 0, sizeof info);
    char *end;
    long fd = strtol(fds, &end, 10);
    struct stat sb;
    if (end == fds || *end || fd < 0 || fd > INT_MAX || fstat((int)fd, &sb) != 0 || !S_ISSOCK(sb.st_mode)) {
        plx_pmi2_err("PMI_FD=%s is not an open socket; was this process started by a launcher that is "
                     "gone, or by an MPI process (PMI_FD is meant for the launcher's own tasks only)?",
                     fds);
        return PLX_ERR_PM;
    }
    const char *ranks = getenv("PMI_RANK");
    int rank = ranks ? atoi(ranks) : 0;
    plx_p2.fd = (int)fd;
    plx_p2.info.rank = rank;
    (void)fcntl(plx_p2.fd, F_SETFD, FD_CLOEXEC);

    plx_status_t st = plx_pmi2_hello();
    /* Slurm wants its PMI_JOBID back with the rank; Hydra takes the rank alone */
    const char *jobid = getenv("PMI_JOBID");
    if (st == PLX_OK && jobid)
        st = plx_pmi2_send("cmd=fullinit;pmijobid=%s;pmirank=%d;threaded=FALSE;", jobid, rank);
    else if (st == PLX_OK)
        st = plx_pmi2_send("cmd=fullinit;pmirank=%d;threaded=FALSE;", rank);
    if (st == PLX_OK && (st = plx_pmi2_reply("fullinit-response")) != PLX_OK)
        plx_pmi2_err("fullinit refused: \"%.200s\"", plx_p2.buf);
    if (st != PLX_OK)
        goto err_forget_fd;
    if (plx_pmi2_int("rank", &info.rank) != 0 || plx_pmi2_int("size", &info.size) != 0 || info.size < 1 ||
        info.rank < 0 || info.rank >= info.size) {
        plx_pmi2_err("fullinit-response lacks a valid rank and size: \"%.200s\"", plx_p2.buf);
        st = PLX_ERR_PM;
        goto err_forget_fd;
    }
    if (plx_pmi2_int("appnum", &info.appnum) != 0 || info.appnum < 0)
        info.appnum = 0;        /* Slurm says -1 */
    plx_p2.info.rank = info.rank;

    if ((st = plx_pmi2_send("cmd=job-getid;")) != PLX_OK)
        goto err_forget_fd;
    if ((st = plx_pmi2_reply("job-getid-response")) != PLX_OK ||
        plx_pmi2_find(plx_p2.buf, "jobid", plx_p2.jobid, sizeof plx_p2.jobid) != 0 || !plx_p2.jobid[0]) {
        plx_pmi2_err("no job id from the launcher: \"%.200s\"", plx_p2.buf);
        st = PLX_ERR_PM;
        goto err_forget_fd;
    }
    snprintf(info.kvsname, sizeof info.kvsname, "%s", plx_p2.jobid);

    info.universe_size = info.size;
    if ((st = plx_pmi2_send("cmd=info-getjobattr;key=universeSize;")) != PLX_OK)
        goto err_forget_fd;
    if (plx_pmi2_reply("info-getjobattr-response") == PLX_OK) {
        char found[8] = "";
        int u;
        plx_pmi2_find(plx_p2.buf, "found", found, sizeof found);
        if (strcmp(found, "TRUE") == 0 && plx_pmi2_int("value", &u) == 0 && u > info.size)
            info.universe_size = u;
    }
    /* MPICH's Hydra (4.0) fails a kvs-get of a missing key from a process
     * that has not been through a fence yet (an assertion in its server):
     * one fence now, where the launcher is not Slurm (no PMI_JOBID) */
    plx_p2.slurm = getenv("PMI_JOBID") != NULL;
    if (!plx_p2.slurm && (st = plx_pmi2_fence_once()) != PLX_OK)
        goto err_forget_fd;
    info.singleton = 0;
    plx_p2.info = info;
    plx_p2.initialized = 1;
    *info_p = info;
    *ops_p = &plx_pmi2_ops;
    return PLX_OK;

err_forget_fd:
    plx_p2.fd = -1;
    return st;
}

static plx_status_t plx_pmi2_put(const char *key, const char *val)
{
    plx_status_t st = plx_pm_check_kv(key, val, PLX_PM_MAX_KEY, PLX_PM_MAX_VAL);
    if (st != PLX_OK)
        return st;
    if ((st = plx_pmi2_send("cmd=kvs-put;key=%s;value=%s;", key, val)) != PLX_OK)
        return st;
    if ((st = plx_pmi2_reply("kvs-put-response")) != PLX_OK)
        plx_pmi2_err("put of key %s failed: \"%.200s\"", key, plx_p2.buf);
    return st;
}

static plx_status_t plx_pmi2_fence_once(void)
{
    plx_status_t st = plx_pmi2_send("cmd=kvs-fence;");
    if (st == PLX_OK && (st = plx_pmi2_reply("kvs-fence-response")) != PLX_OK)
        plx_pmi2_err("fence failed: \"%.200s\"", plx_p2.buf);
    return st;
}

/* Slurm's kvs-fence is a barrier. Hydra's answers at once and only makes a
 * later get of a missing key wait until every process has fenced as often:
 * there each rank puts a key before the fence and reads everyone's after
 * it, which makes the fence a barrier as pm.h promises (O(size) gets). */
static plx_status_t plx_pmi2_fence(void)
{
    static unsigned n;
    char key[PLX_PM_MAX_KEY], val[8];
    int lazy = !plx_p2.slurm;
    plx_status_t st = PLX_OK;
    n++;
    if (lazy) {
        snprintf(key, sizeof key, "plx-fence-%u-%d", n, plx_p2.info.rank);
        st = plx_pmi2_put(key, "1");
    }
    if (st == PLX_OK)
        st = plx_pmi2_fence_once();
    for (int r = 0; lazy && st == PLX_OK && r < plx_p2.info.size; r++) {
        snprintf(key, sizeof key, "plx-fence-%u-%d", n, r);
        if ((st = plx_pmi2_get(key, val, sizeof val)) != PLX_OK)
            plx_pmi2_err("fence: rank %d's mark is missing after the fence", r);
    }
    return st;
}

/* PMI_process_mapping is a job attribute in PMI-2 (Slurm, Hydra), not a
 * key of the key-value space: asked with info-getjobattr. PLX_ERR_ARG when
 * the launcher has none (the caller then reads the business cards). */
static plx_status_t plx_pmi2_get_jobattr(const char *key, char *val, size_t len)
{
    plx_status_t st = plx_pmi2_send("cmd=info-getjobattr;key=%s;", key);
    if (st != PLX_OK)
        return st;
    if (plx_pmi2_reply("info-getjobattr-response") != PLX_OK)
        return PLX_ERR_ARG;
    char found[8] = "";
    plx_pmi2_find(plx_p2.buf, "found", found, sizeof found);
    if (strcmp(found, "TRUE") != 0)
        return PLX_ERR_ARG;
    int f = plx_pmi2_find(plx_p2.buf, "value", val, len);
    return f == 0 ? PLX_OK : f == -2 ? PLX_ERR_TRUNCATE : PLX_ERR_ARG;
}

static plx_status_t plx_pmi2_get(const char *key, char *val, size_t len)
{
    plx_status_t st = plx_pm_check_kv(key, NULL, PLX_PM_MAX_KEY, PLX_PM_MAX_VAL);
    if (st != PLX_OK)
        return st;
    if (strcmp(key, "PMI_process_mapping") == 0)
        return plx_pmi2_get_jobattr(key, val, len);
    if ((st = plx_pmi2_send("cmd=kvs-get;jobid=%s;srcid=-1;key=%s;", plx_p2.jobid, key)) != PLX_OK)
        return st;
    st = plx_pmi2_recv();
    if (st != PLX_OK)
        return st;
    char cmd[64], found[8] = "";
    if (plx_pmi2_find(plx_p2.buf, "cmd", cmd, sizeof cmd) != 0 || strcmp(cmd, "kvs-get-response") != 0) {
        plx_pmi2_err("expected cmd=kvs-get-response, got \"%.200s\"", plx_p2.buf);
        return PLX_ERR_PM;
    }
    plx_pmi2_find(plx_p2.buf, "found", found, sizeof found);
    if (strcmp(found, "TRUE") != 0)
        return PLX_ERR_ARG;         /* not found: the caller decides */
    int f = plx_pmi2_find(plx_p2.buf, "value", val, len);
    if (f == -2)
        return PLX_ERR_TRUNCATE;
    if (f != 0) {
        if (len == 0)
            return PLX_ERR_TRUNCATE;
        val[0] = '\0';
    }
    return PLX_OK;
}

static void plx_pmi2_abort(int code, const char *msg)
{
    char clean[512];
    size_t i;
    fflush(stdout);
    if (!msg)
        msg = "";
    for (i = 0; msg[i] && i < sizeof clean - 1; i++)
        clean[i] = msg[i] == ';' || msg[i] == '\n' || msg[i] == '\r' ? ' ' : msg[i];
    clean[i] = '\0';
    /* Slurm does not print the message: say it ourselves, then ask */
    fprintf(stderr, "plexus: rank %d aborted the job with exit code %d%s%s\n", plx_p2.info.rank, code,
            clean[0] ? ": " : "", clean);
    fflush(stderr);
    if (plx_p2.fd >= 0)
        (void)plx_pmi2_send("cmd=abort;isworld=TRUE;exitcode=%d;msg=%s;", code, clean[0] ? clean : "abort");
    _exit(code);
}

static plx_status_t plx_pmi2_finalize(void)
{
    plx_status_t st = PLX_OK;
    if (plx_p2.fd >= 0) {
        st = plx_pmi2_send("cmd=finalize;");
        if (st == PLX_OK)
            st = plx_pmi2_reply("finalize-response");
        close(plx_p2.fd);
        plx_p2.fd = -1;
    }
    plx_p2.initialized = 0;
    return st;
}

/* name-publish / name-lookup / name-unpublish (Slurm's srun serves them) */
static plx_status_t plx_pmi2_name(const char *what, const char *service, const char *port, char *out, size_t len)
{
    char expect[40];
    plx_status_t st = port ? plx_pmi2_send("cmd=name-%s;name=%s;port=%s;", what, service, port)
                           : plx_pmi2_send("cmd=name-%s;name=%s;", what, service);
    if (st != PLX_OK)
        return st;
    snprintf(expect, sizeof expect, "name-%s-response", what);
    if (plx_pmi2_reply(expect) != PLX_OK)
        return strstr(plx_p2.buf, "cmd=") ? PLX_ERR_ARG : PLX_ERR_PM;
    /* MPICH's protocol text says port=, Slurm answers value= */
    if (out && plx_pmi2_find(plx_p2.buf, "port", out, len) != 0 && plx_pmi2_find(plx_p2.buf, "value", out, len) != 0)
        return PLX_ERR_ARG;
    return PLX_OK;
}

static plx_status_t plx_pmi2_publish(const char *service, const char *port)
{
    return plx_pmi2_name("publish", service, port, NULL, 0);
}

static plx_status_t plx_pmi2_lookup(const char *service, char *port, size_t len)
{
    return plx_pmi2_name("lookup", service, NULL, port, len);
}

static plx_status_t plx_pmi2_unpublish(const char *service)
{
    /* Slurm says yes to unpublishing a name nobody published: ask first
     * (MPI wants MPI_ERR_SERVICE there) */
    char port[PLX_PM_MAX_VAL];
    plx_status_t st = plx_pmi2_lookup(service, port, sizeof port);
    return st != PLX_OK ? st : plx_pmi2_name("unpublish", service, NULL, NULL, 0);
}

static const struct plx_pm_ops plx_pmi2_ops = {
    .publish = plx_pmi2_publish,
    .lookup = plx_pmi2_lookup,
    .unpublish = plx_pmi2_unpublish,
    .name = "PMI-2",
    .put = plx_pmi2_put,
    .fence = plx_pmi2_fence,
    .get = plx_pmi2_get,
    .abort = plx_pmi2_abort,
    .finalize = plx_pmi2_finalize,
};
