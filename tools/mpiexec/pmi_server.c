/*
 * PMI-1 server (see pmi_server.h for the contract).
 *
 * Wire format: one command per line, "cmd=NAME key=value key=value\n",
 * fields separated by single spaces, a value ends at the next space (it may
 * contain '='). Exception: the "message=" field of cmd=abort runs to the end
 * of the line, so an abort message can carry spaces. Every reply carries rc=0
 * or rc=-1 with msg=.
 *
 * The key-value space is one open-addressing hash table per job; puts become
 * visible at once (PMI-1 only promises visibility after the next barrier, so
 * that is allowed). A barrier completes when every rank of the job entered it.
 *
 * Costs: memory is O(keys); each get/put is O(1) expected.
 */
#include "pmi_server.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* A line longer than this is a protocol error (a put is < 1.5 KiB). */
#define PLX_PMISRV_LINE_MAX 16384
#define PLX_PMISRV_MAX_FIELDS 64

struct plx_pmisrv_kv {
    char *key;                  /* NULL: empty slot */
    char *val;
};

struct plx_pmisrv_conn {
    enum plx_pmisrv_state state;
    int closed;
    int in_barrier;
    int in_mcmd;                /* inside a multi-line mcmd=... until endcmd */
    int broken;                 /* protocol error reported: ignore further input */
    int warned;                 /* warnings printed about this rank's commands */
    struct plx_pmisrv_spawn *spawn;     /* spawn request being collected */
    int spawn_total;            /* totspawns of it */
    char *buf;                  /* partial line */
    size_t len, cap;
};

struct plx_pmisrv {
    int size;
    int universe_size;
    int *appnum;
    char kvsname[PLX_PMISRV_KVSNAME_MAX];
    struct plx_pmisrv_ops ops;
    void *ctx;
    struct plx_pmisrv_conn *conn;
    int barrier_count;
    struct plx_pmisrv_kv *kv;   /* hash table, power-of-two capacity */
    size_t kv_cap, kv_used;
    struct plx_pmisrv_name *names;  /* MPI_Publish_name's services (a list: few) */
};

struct plx_pmisrv_name {
    struct plx_pmisrv_name *next;
    char *service;
    char *port;
};

struct plx_pmisrv_field {
    const char *key;
    const char *val;
};

/* Warnings about what a rank sent (unknown commands, spawn): at most
 * PLX_PMISRV_WARN_MAX per rank, so a process that sends junk lines (or a
 * stranger on PMI_FD) cannot flood the user's terminal at line rate, and with
 * the command's bytes made printable (no escape sequences reach the terminal).
 * Found by tests/fuzz/fuzz_pmi_server. */
#define PLX_PMISRV_WARN_MAX 3

static void plx_pmisrv_warn(struct plx_pmisrv *srv, int rank, const char *what, const char *cmd)
{
    struct plx_pmisrv_conn *c = &srv->conn[rank];
    char shown[65];
    size_t i = 0;

    if (c->warned > PLX_PMISRV_WARN_MAX)
        return;
    if (c->warned++ == PLX_PMISRV_WARN_MAX) {
        fprintf(stderr, "mpiexec: (further warnings about rank %d's PMI commands are not shown)\n", rank);
        return;
    }
    for (; cmd != NULL && cmd[i] != '\0' && i < sizeof(shown) - 1; i++)
        shown[i] = cmd[i] >= 0x20 && cmd[i] < 0x7f ? cmd[i] : '?';
    shown[i] = '\0';
    fprintf(stderr, "mpiexec: rank %d %s%s%s%s\n", rank, what, cmd ? " \"" : "", shown, cmd ? "\"" : "");
}

/* ---- key-value table ------------------------------------------------------ */

static uint64_t plx_pmisrv_hash(const char *s)
{
    uint64_t h = 1469598103934665603ull;        /* FNV-1a */
    while (*s != '\0') {
        h ^= (unsigned char)*s++;
        h *= 1099511628211ull;
    }
    return h;
}

static struct plx_pmisrv_kv *plx_pmisrv_kv_slot(struct plx_pmisrv_kv *tab, size_t cap,
                                                const char *key)
{
    size_t i = (size_t)plx_pmisrv_hash(key) & (cap - 1);
    while (tab[i].key != NULL && strcmp(tab[i].key, key) != 0)
        i = (i + 1) & (cap - 1);
    return &tab[i];
}

static int plx_pmisrv_kv_grow(struct plx_pmisrv *srv)
{
    size_t cap = srv->kv_cap ? srv->kv_cap * 2 : 256;
    struct plx_pmisrv_kv *tab = calloc(cap, sizeof(*tab));

    if (tab == NULL)
        return -1;
    for (size_t i = 0; i < srv->kv_cap; i++) {
        if (srv->kv[i].key != NULL)
            *plx_pmisrv_kv_slot(tab, cap, srv->kv[i].key) = srv->kv[i];
    }
    free(srv->kv);
    srv->kv = tab;
    srv->kv_cap = cap;
    return 0;
}

static int plx_pmisrv_kv_put(struct plx_pmisrv *srv, const char *key, const char *val)
{
    struct plx_pmisrv_kv *slot;
    char *v;

    if ((srv->kv_used + 1) * 2 > srv->kv_cap && plx_pmisrv_kv_grow(srv) != 0)
        return -1;
    v = strdup(val);
    if (v == NULL)
        return -1;
    slot = plx_pmisrv_kv_slot(srv->kv, srv->kv_cap, key);
    if (slot->key != NULL) {        /* PMI-1 allows re-putting a key: last wins */
        free(slot->val);
        slot->val = v;
        return 0;
    }
    slot->key = strdup(key);
    if (slot->key == NULL) {
        free(v);
        return -1;
    }
    slot->val = v;
    srv->kv_used++;
    return 0;
}

static const char *plx_pmisrv_kv_get(const struct plx_pmisrv *srv, const char *key)
{
    if (srv->kv_cap == 0)
        return NULL;
    return plx_pmisrv_kv_slot(srv->kv, srv->kv_cap, key)->val;
}

/* ---- replies -------------------------------------------------------------- */

static void plx_pmisrv_reply(struct plx_pmisrv *srv, int rank, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void plx_pmisrv_reply(struct plx_pmisrv *srv, int rank, const char *fmt, ...)
{
    char line[PLX_PMISRV_VALLEN_MAX + PLX_PMISRV_KEYLEN_MAX + PLX_PMISRV_KVSNAME_MAX + 256];
    va_list ap;
    int n;

    if (srv->conn[rank].closed)
        return;
    va_start(ap, fmt);
    n = vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= sizeof(line))
        n = snprintf(line, sizeof(line), "cmd=error rc=-1 msg=reply_too_long\n");
    if (srv->ops.send(srv->ctx, rank, line, (size_t)n) != 0)
        srv->conn[rank].closed = 1;
}

static void plx_pmisrv_fail(struct plx_pmisrv *srv, int rank, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void plx_pmisrv_fail(struct plx_pmisrv *srv, int rank, const char *fmt, ...)
{
    char what[512];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(what, sizeof(what), fmt, ap);
    va_end(ap);
    srv->conn[rank].broken = 1;
    srv->ops.error(srv->ctx, rank, what);
}

/* ---- commands ------------------------------------------------------------- */

static const char *plx_pmisrv_field(const struct plx_pmisrv_field *f, int n, const char *key)
{
    for (int i = 0; i < n; i++)
        if (strcmp(f[i].key, key) == 0)
            return f[i].val;
    return NULL;
}

static void plx_pmisrv_cmd_init(struct plx_pmisrv *srv, int rank,
                                const struct plx_pmisrv_field *f, int n)
{
    const char *ver = plx_pmisrv_field(f, n, "pmi_version");
    const char *sub = plx_pmisrv_field(f, n, "pmi_subversion");

    if (ver == NULL || strcmp(ver, "1") != 0 || (sub != NULL && atoi(sub) > 1)) {
        plx_pmisrv_reply(srv, rank, "cmd=response_to_init pmi_version=1 pmi_subversion=1 "
                         "rc=-1 msg=only_PMI_version_1.1_is_supported\n");
        plx_pmisrv_fail(srv, rank, "asked for PMI version %s.%s; this mpiexec speaks 1.1",
                        ver ? ver : "?", sub ? sub : "?");
        return;
    }
    srv->conn[rank].state = PLX_PMISRV_INIT;
    plx_pmisrv_reply(srv, rank,
                     "cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=0\n");
}

static void plx_pmisrv_cmd_put(struct plx_pmisrv *srv, int rank,
                               const struct plx_pmisrv_field *f, int n)
{
    const char *kvs = plx_pmisrv_field(f, n, "kvsname");
    const char *key = plx_pmisrv_field(f, n, "key");
    const char *val = plx_pmisrv_field(f, n, "value");

    if (val == NULL)
        val = "";
    if (kvs != NULL && strcmp(kvs, srv->kvsname) != 0) {
        plx_pmisrv_reply(srv, rank, "cmd=put_result rc=-1 msg=unknown_kvsname\n");
    } else if (key == NULL || key[0] == '\0') {
        plx_pmisrv_reply(srv, rank, "cmd=put_result rc=-1 msg=missing_key\n");
    } else if (strlen(key) >= PLX_PMISRV_KEYLEN_MAX) {
        plx_pmisrv_reply(srv, rank, "cmd=put_result rc=-1 msg=key_too_long\n");
    } else if (strlen(val) >= PLX_PMISRV_VALLEN_MAX) {
        plx_pmisrv_reply(srv, rank, "cmd=put_result rc=-1 msg=value_too_long\n");
    } else if (plx_pmisrv_kv_put(srv, key, val) != 0) {
        plx_pmisrv_reply(srv, rank, "cmd=put_result rc=-1 msg=out_of_memory\n");
    } else {
        plx_pmisrv_reply(srv, rank, "cmd=put_result rc=0 msg=success\n");
    }
}

static void plx_pmisrv_cmd_get(struct plx_pmisrv *srv, int rank,
                               const struct plx_pmisrv_field *f, int n)
{
    const char *kvs = plx_pmisrv_field(f, n, "kvsname");
    const char *key = plx_pmisrv_field(f, n, "key");
    const char *val;

    if (kvs != NULL && strcmp(kvs, srv->kvsname) != 0) {
        plx_pmisrv_reply(srv, rank, "cmd=get_result rc=-1 msg=unknown_kvsname\n");
        return;
    }
    if (key == NULL || key[0] == '\0' || strlen(key) >= PLX_PMISRV_KEYLEN_MAX) {
        plx_pmisrv_reply(srv, rank, "cmd=get_result rc=-1 msg=invalid_key\n");
        return;
    }
    val = plx_pmisrv_kv_get(srv, key);
    if (val == NULL)
        plx_pmisrv_reply(srv, rank, "cmd=get_result rc=-1 msg=key_%s_not_found\n", key);
    else
        plx_pmisrv_reply(srv, rank, "cmd=get_result rc=0 msg=success value=%s\n", val);
}

/* The name service of MPI_Publish_name / Lookup_name / Unpublish_name:
 * names live as long as this job's mpiexec. A service already published is
 * refused (the library reports MPI_ERR_SERVICE). */
static struct plx_pmisrv_name **plx_pmisrv_name_find(struct plx_pmisrv *srv, const char *service)
{
    struct plx_pmisrv_name **pp = &srv->names;
    while (*pp && strcmp((*pp)->service, service) != 0)
        pp = &(*pp)->next;
    return pp;
}

/* Names shared between jobs: with PLEXUS_NAME_DIR set (the first mpiexec
 * sets it for every job it spawns; a second mpiexec started by hand with
 * the same value shares them too), a service is a file in that directory,
 * named by the service's bytes in hex, holding the port. Publishing links
 * a complete file into place (link fails if the name exists), so two jobs
 * publishing at once cannot both succeed and a lookup never reads half a
 * port. */
static int plx_pmisrv_name_path(const char *service, char *path, size_t len)
{
    const char *dir = getenv("PLEXUS_NAME_DIR");
    if (dir == NULL || dir[0] == '\0')
        return 0;
    int w = snprintf(path, len, "%s/", dir);
    for (const unsigned char *c = (const unsigned char *)service; *c && w > 0 && (size_t)w + 3 < len; c++)
        w += snprintf(path + w, len - (size_t)w, "%02x", *c);
    return w > 0 && (size_t)w + 3 < len;
}

static void plx_pmisrv_name_file(struct plx_pmisrv *srv, int rank, const char *cmd, const char *reply,
                                 const char *port, const char *path)
{
    if (strcmp(cmd, "publish_name") == 0) {
        char tmp[4200];
        if (port == NULL || port[0] == '\0' || strlen(port) >= PLX_PMISRV_VALLEN_MAX) {
            plx_pmisrv_reply(srv, rank, "cmd=%s rc=-1 msg=invalid_port\n", reply);
            return;
        }
        char dir[4096];
        snprintf(dir, sizeof dir, "%s", getenv("PLEXUS_NAME_DIR"));
        (void)mkdir(dir, 0700);     /* the first publish makes it */
        snprintf(tmp, sizeof tmp, "%s.tmp%d", path, (int)getpid());
        int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        size_t len = strlen(port);
        int ok = fd >= 0 && write(fd, port, len) == (ssize_t)len;
        if (fd >= 0)
            close(fd);
        int linked = ok ? link(tmp, path) : -1, err = errno;
        unlink(tmp);
        if (linked == 0)
            plx_pmisrv_reply(srv, rank, "cmd=%s rc=0 msg=success\n", reply);
        else if (ok && err == EEXIST)
            plx_pmisrv_reply(srv, rank, "cmd=%s rc=-1 msg=already_published\n", reply);
        else
            plx_pmisrv_reply(srv, rank, "cmd=%s rc=-1 msg=cannot_write_the_name_directory\n", reply);
    } else if (strcmp(cmd, "lookup_name") == 0) {
        char buf[PLX_PMISRV_VALLEN_MAX];
        int fd = open(path, O_RDONLY);
        ssize_t r = fd >= 0 ? read(fd, buf, sizeof buf - 1) : -1;
        if (fd >= 0)
            close(fd);
        if (r <= 0) {
            plx_pmisrv_reply(srv, rank, "cmd=%s rc=-1 msg=not_published\n", reply);
            return;
        }
        buf[r] = '\0';
        plx_pmisrv_reply(srv, rank, "cmd=%s rc=0 port=%s\n", reply, buf);
    } else if (unlink(path) == 0) {
        plx_pmisrv_reply(srv, rank, "cmd=%s rc=0 msg=success\n", reply);
    } else {
        plx_pmisrv_reply(srv, rank, "cmd=%s rc=-1 msg=not_published\n", reply);
    }
}

static void plx_pmisrv_cmd_name(struct plx_pmisrv *srv, int rank, const char *cmd,
                                const struct plx_pmisrv_field *f, int n)
{
    const char *service = plx_pmisrv_field(f, n, "service");
    const char *port = plx_pmisrv_field(f, n, "port");
    char reply[32];
    snprintf(reply, sizeof(reply), "%.*s_result", (int)(strchr(cmd, '_') - cmd), cmd);
    if (service == NULL || service[0] == '\0' || strlen(service) >= PLX_PMISRV_VALLEN_MAX) {
        plx_pmisrv_reply(srv, rank, "cmd=%s rc=-1 msg=invalid_service\n", reply);
        return;
    }
    char path[4096];
    if (plx_pmisrv_name_path(service, path, sizeof path)) {
        plx_pmisrv_name_file(srv, rank, cmd, reply, port, path);
        return;
    }
    struct plx_pmisrv_name **pp = plx_pmisrv_name_find(srv, service);
    if (strcmp(cmd, "publish_name") == 0) {
        if (port == NULL || port[0] == '\0' || strlen(port) >= PLX_PMISRV_VALLEN_MAX) {
            plx_pmisrv_reply(srv, rank, "cmd=%s rc=-1 msg=invalid_port\n", reply);
        } else if (*pp != NULL) {
            plx_pmisrv_reply(srv, rank, "cmd=%s rc=-1 msg=already_published\n", reply);
        } else {
            struct plx_pmisrv_name *nm = calloc(1, sizeof(*nm));
            if (nm == NULL || (nm->service = strdup(service)) == NULL || (nm->port = strdup(port)) == NULL) {
                if (nm != NULL)
                    free(nm->service);
                free(nm);
                plx_pmisrv_reply(srv, rank, "cmd=%s rc=-1 msg=out_of_memory\n", reply);
                return;
            }
            nm->next = srv->names;
            srv->names = nm;
            plx_pmisrv_reply(srv, rank, "cmd=%s rc=0 msg=success\n", reply);
        }
    } else if (*pp == NULL) {
        plx_pmisrv_reply(srv, rank, "cmd=%s rc=-1 msg=not_published\n", reply);
    } else if (strcmp(cmd, "lookup_name") == 0) {
        plx_pmisrv_reply(srv, rank, "cmd=%s rc=0 port=%s\n", reply, (*pp)->port);
    } else {
        struct plx_pmisrv_name *nm = *pp;
        *pp = nm->next;
        free(nm->service);
        free(nm->port);
        free(nm);
        plx_pmisrv_reply(srv, rank, "cmd=%s rc=0 msg=success\n", reply);
    }
}

static void plx_pmisrv_cmd_barrier(struct plx_pmisrv *srv, int rank)
{
    if (srv->conn[rank].in_barrier) {
        plx_pmisrv_fail(srv, rank, "entered the PMI barrier twice");
        return;
    }
    srv->conn[rank].in_barrier = 1;
    if (++srv->barrier_count < srv->size)
        return;
    srv->barrier_count = 0;
    for (int r = 0; r < srv->size; r++) {
        srv->conn[r].in_barrier = 0;
        plx_pmisrv_reply(srv, r, "cmd=barrier_out rc=0\n");
    }
}

static void plx_pmisrv_cmd_abort(struct plx_pmisrv *srv, int rank,
                                 const struct plx_pmisrv_field *f, int n)
{
    const char *code_s = plx_pmisrv_field(f, n, "exitcode");
    const char *msg = plx_pmisrv_field(f, n, "message");
    char *end = NULL;
    long code = 1;

    if (code_s != NULL) {
        code = strtol(code_s, &end, 10);
        if (end == code_s || *end != '\0')
            code = 1;
    }
    srv->conn[rank].state = PLX_PMISRV_ABORTED;
    srv->ops.abort(srv->ctx, rank, (int)code, msg ? msg : "");
}

/* Splits line (modified in place) into fields. "message=" swallows the rest
 * of the line. Returns the number of fields, -1 on a malformed field. */
static int plx_pmisrv_split(char *line, struct plx_pmisrv_field *f, int max)
{
    int n = 0;
    char *p = line;

    while (*p != '\0') {
        while (*p == ' ' || *p == '\t')
            p++;
        if (*p == '\0')
            break;
        if (n == max)
            return -1;
        char *eq = strchr(p, '=');
        char *sp = strpbrk(p, " \t");
        if (eq == NULL || (sp != NULL && sp < eq))
            return -1;
        *eq = '\0';
        f[n].key = p;
        f[n].val = eq + 1;
        if (strcmp(p, "message") == 0) {
            n++;
            break;
        }
        if (sp != NULL) {
            *sp = '\0';
            p = sp + 1;
        } else {
            p = eq + 1 + strlen(eq + 1);
        }
        n++;
    }
    return n;
}

/* ---- spawn ------------------------------------------------------------------ */

static void plx_pmisrv_spawn_free(struct plx_pmisrv_spawn *s)
{
    if (s == NULL)
        return;
    for (int i = 0; i < s->count; i++) {
        struct plx_pmisrv_spawn_cmd *c = &s->cmds[i];
        free(c->execname);
        for (int a = 0; a < c->argc; a++)
            free(c->argv[a]);
        free(c->argv);
        for (int k = 0; k < c->ninfo; k++) {
            free(c->ikeys[k]);
            free(c->ivals[k]);
        }
        free(c->ikeys);
        free(c->ivals);
    }
    free(s->cmds);
    free(s->parent_port);
    free(s);
}

static char *plx_pmisrv_strdup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d)
        memcpy(d, s, n);
    return d;
}

/* Index of "prefix<N>" in key, or -1 (N below max). */
static int plx_pmisrv_indexed(const char *key, const char *prefix, int max)
{
    size_t pl = strlen(prefix);
    if (strncmp(key, prefix, pl) != 0 || !key[pl])
        return -1;
    char *end;
    long i = strtol(key + pl, &end, 10);
    return *end || i < 0 || i >= max ? -1 : (int)i;
}

/* One "key=value" line of an mcmd=spawn block (the value runs to the end). */
static int plx_pmisrv_spawn_line(struct plx_pmisrv_conn *c, char *line)
{
    struct plx_pmisrv_spawn *s = c->spawn;
    char *eq = strchr(line, '=');
    if (!eq)
        return -1;
    *eq = 0;
    const char *k = line, *v = eq + 1;
    struct plx_pmisrv_spawn_cmd *cmd = s->count ? &s->cmds[s->count - 1] : NULL;
    int i;
    if (!strcmp(k, "spawnssofar") || !strcmp(k, "totspawns")) {
        int n = atoi(v);
        if (n < 1 || n > 4096)
            return -1;
        if (!strcmp(k, "totspawns"))
            c->spawn_total = n;
        return 0;
    }
    if (!cmd)
        return -1;
    if (!strcmp(k, "nprocs")) {
        cmd->nprocs = atoi(v);
    } else if (!strcmp(k, "execname")) {
        free(cmd->execname);
        cmd->execname = plx_pmisrv_strdup(v);
    } else if (!strcmp(k, "argcnt")) {
        int n = atoi(v);
        if (n < 0 || n > 4096 || cmd->argv)
            return -1;
        cmd->argc = n;
        cmd->argv = calloc((size_t)n + 1, sizeof(char *));
    } else if ((i = plx_pmisrv_indexed(k, "arg", cmd->argc + 1)) >= 1) {
        free(cmd->argv[i - 1]);
        cmd->argv[i - 1] = plx_pmisrv_strdup(v);
    } else if (!strcmp(k, "info_num")) {
        int n = atoi(v);
        if (n < 0 || n > 1024 || cmd->ikeys)
            return -1;
        cmd->ninfo = n;
        cmd->ikeys = calloc((size_t)n + 1, sizeof(char *));
        cmd->ivals = calloc((size_t)n + 1, sizeof(char *));
    } else if ((i = plx_pmisrv_indexed(k, "info_key_", cmd->ninfo)) >= 0) {
        free(cmd->ikeys[i]);
        cmd->ikeys[i] = plx_pmisrv_strdup(v);
    } else if ((i = plx_pmisrv_indexed(k, "info_val_", cmd->ninfo)) >= 0) {
        free(cmd->ivals[i]);
        cmd->ivals[i] = plx_pmisrv_strdup(v);
    } else if (!strncmp(k, "preput_val_", 11)) {
        free(s->parent_port);   /* the one preput we send: PARENT_ROOT_PORT_NAME */
        s->parent_port = plx_pmisrv_strdup(v);
    }
    /* preput_num, preput_key_N and unknown keys: nothing to do */
    return 0;
}

/* endcmd of a block: after the last, run the request and answer. */
static void plx_pmisrv_spawn_end(struct plx_pmisrv *srv, int rank)
{
    struct plx_pmisrv_conn *c = &srv->conn[rank];
    struct plx_pmisrv_spawn *s = c->spawn;
    if (s->count < c->spawn_total)
        return;                 /* more blocks follow */
    c->spawn = NULL;
    char err[1024] = "";
    int ok = 1;
    for (int i = 0; i < s->count && ok; i++) {
        struct plx_pmisrv_spawn_cmd *cmd = &s->cmds[i];
        ok = cmd->execname && cmd->nprocs > 0;
        for (int a = 0; ok && a < cmd->argc; a++)
            ok = cmd->argv[a] != NULL;
        for (int k = 0; ok && k < cmd->ninfo; k++)
            ok = cmd->ikeys[k] && cmd->ivals[k];
    }
    if (!ok) {
        plx_pmisrv_reply(srv, rank, "cmd=spawn_result rc=-1 msg=incomplete spawn request (a command without "
                         "execname or nprocs, or a missing argument or info entry)\n");
    } else if (!srv->ops.spawn) {
        plx_pmisrv_warn(srv, rank, "called MPI_Comm_spawn, which this mpiexec does not support", NULL);
        plx_pmisrv_reply(srv, rank, "cmd=spawn_result rc=-1 msg=spawn_not_supported\n");
    } else {
        int asked = 0, started = 0;
        for (int i = 0; i < s->count; i++)
            asked += s->cmds[i].nprocs;
        if (srv->ops.spawn(srv->ctx, rank, s, err, sizeof err) != 0) {
            for (char *p = err; *p; p++)
                if (*p == '\n')
                    *p = ' ';
            plx_pmisrv_reply(srv, rank, "cmd=spawn_result rc=-1 msg=%.900s\n", err[0] ? err : "spawn failed");
        } else {
            /* a "soft" spawn may start fewer than asked: then started= lists
             * each command's count (Plexus's own key; PMI-1 clients ignore
             * keys they do not know) */
            char counts[1024] = "";
            size_t len = 0;
            for (int i = 0; i < s->count && len < sizeof counts; i++) {
                started += s->cmds[i].nprocs;
                len += (size_t)snprintf(counts + len, sizeof counts - len, "%s%d", i ? "," : "", s->cmds[i].nprocs);
            }
            if (started != asked && len < sizeof counts)
                plx_pmisrv_reply(srv, rank, "cmd=spawn_result rc=0 started=%s\n", counts);
            else
                plx_pmisrv_reply(srv, rank, "cmd=spawn_result rc=0\n");
        }
    }
    plx_pmisrv_spawn_free(s);
}

static void plx_pmisrv_line(struct plx_pmisrv *srv, int rank, char *line)
{
    struct plx_pmisrv_conn *c = &srv->conn[rank];
    struct plx_pmisrv_field f[PLX_PMISRV_MAX_FIELDS];
    const char *cmd;
    int n;

    if (c->in_mcmd) {               /* the body of mcmd=spawn */
        if (strcmp(line, "endcmd") == 0) {
            c->in_mcmd = 0;
            plx_pmisrv_spawn_end(srv, rank);
        } else if (plx_pmisrv_spawn_line(c, line) != 0) {
            plx_pmisrv_spawn_free(c->spawn);
            c->spawn = NULL;
            c->in_mcmd = 0;
            plx_pmisrv_fail(srv, rank, "sent a malformed spawn request");
        }
        return;
    }
    if (strncmp(line, "mcmd=", 5) == 0) {
        if (strcmp(line + 5, "spawn") != 0) {
            plx_pmisrv_fail(srv, rank, "sent an unknown multi-line command");
            return;
        }
        if (!c->spawn) {
            c->spawn = calloc(1, sizeof *c->spawn);
            c->spawn_total = 1;
        }
        struct plx_pmisrv_spawn *s = c->spawn;
        struct plx_pmisrv_spawn_cmd *nc = s ? realloc(s->cmds, (size_t)(s->count + 1) * sizeof *nc) : NULL;
        if (!nc) {
            plx_pmisrv_fail(srv, rank, "out of memory for a spawn request");
            return;
        }
        s->cmds = nc;
        memset(&s->cmds[s->count++], 0, sizeof *nc);
        c->in_mcmd = 1;
        return;
    }
    if (line[0] == '\0')
        return;
    n = plx_pmisrv_split(line, f, PLX_PMISRV_MAX_FIELDS);
    if (n <= 0 || strcmp(f[0].key, "cmd") != 0) {
        plx_pmisrv_fail(srv, rank, "sent a malformed PMI line (no cmd=)");
        return;
    }
    cmd = f[0].val;

    if (strcmp(cmd, "init") == 0) {
        plx_pmisrv_cmd_init(srv, rank, f, n);
    } else if (strcmp(cmd, "get_maxes") == 0) {
        plx_pmisrv_reply(srv, rank, "cmd=maxes rc=0 kvsname_max=%d keylen_max=%d "
                         "vallen_max=%d\n", PLX_PMISRV_KVSNAME_MAX, PLX_PMISRV_KEYLEN_MAX,
                         PLX_PMISRV_VALLEN_MAX);
    } else if (strcmp(cmd, "get_appnum") == 0) {
        plx_pmisrv_reply(srv, rank, "cmd=appnum rc=0 appnum=%d\n", srv->appnum[rank]);
    } else if (strcmp(cmd, "get_universe_size") == 0) {
        plx_pmisrv_reply(srv, rank, "cmd=universe_size rc=0 size=%d\n", srv->universe_size);
    } else if (strcmp(cmd, "get_my_kvsname") == 0) {
        plx_pmisrv_reply(srv, rank, "cmd=my_kvsname rc=0 kvsname=%s\n", srv->kvsname);
    } else if (strcmp(cmd, "put") == 0) {
        plx_pmisrv_cmd_put(srv, rank, f, n);
    } else if (strcmp(cmd, "get") == 0) {
        plx_pmisrv_cmd_get(srv, rank, f, n);
    } else if (strcmp(cmd, "barrier_in") == 0) {
        plx_pmisrv_cmd_barrier(srv, rank);
    } else if (strcmp(cmd, "finalize") == 0) {
        c->state = PLX_PMISRV_FINALIZED;
        plx_pmisrv_reply(srv, rank, "cmd=finalize_ack rc=0\n");
    } else if (strcmp(cmd, "abort") == 0) {
        plx_pmisrv_cmd_abort(srv, rank, f, n);
    } else if (strcmp(cmd, "publish_name") == 0 || strcmp(cmd, "unpublish_name") == 0
               || strcmp(cmd, "lookup_name") == 0) {
        plx_pmisrv_cmd_name(srv, rank, cmd, f, n);
    } else {
        plx_pmisrv_warn(srv, rank, "sent the unknown PMI command", cmd);
        plx_pmisrv_reply(srv, rank, "cmd=%.64s_result rc=-1 msg=unknown_command\n", cmd);
    }
}

/* ---- public ---------------------------------------------------------------- */

struct plx_pmisrv *plx_pmisrv_create(const struct plx_pmisrv_cfg *cfg,
                                     const struct plx_pmisrv_ops *ops, void *ctx)
{
    struct plx_pmisrv *srv = calloc(1, sizeof(*srv));

    if (srv == NULL)
        return NULL;
    srv->size = cfg->size;
    srv->universe_size = cfg->universe_size;
    srv->ops = *ops;
    srv->ctx = ctx;
    snprintf(srv->kvsname, sizeof(srv->kvsname), "%s", cfg->kvsname);
    srv->conn = calloc((size_t)cfg->size, sizeof(*srv->conn));
    if (srv->conn == NULL)
        goto err_free_srv;
    srv->appnum = malloc((size_t)cfg->size * sizeof(int));
    if (srv->appnum == NULL)
        goto err_free_conn;
    memcpy(srv->appnum, cfg->appnum, (size_t)cfg->size * sizeof(int));
    if (cfg->process_mapping != NULL
        && plx_pmisrv_kv_put(srv, "PMI_process_mapping", cfg->process_mapping) != 0)
        goto err_free_appnum;
    if (cfg->job_secret != NULL
        && plx_pmisrv_kv_put(srv, "plexus-job-secret", cfg->job_secret) != 0)
        goto err_free_kv;
    return srv;

err_free_kv:
    for (size_t i = 0; i < srv->kv_cap; i++) {
        free(srv->kv[i].key);
        free(srv->kv[i].val);
    }
    free(srv->kv);
err_free_appnum:
    free(srv->appnum);
err_free_conn:
    free(srv->conn);
err_free_srv:
    free(srv);
    return NULL;
}

void plx_pmisrv_destroy(struct plx_pmisrv *srv)
{
    if (srv == NULL)
        return;
    for (size_t i = 0; i < srv->kv_cap; i++) {
        free(srv->kv[i].key);
        free(srv->kv[i].val);
    }
    free(srv->kv);
    while (srv->names != NULL) {
        struct plx_pmisrv_name *nm = srv->names;
        srv->names = nm->next;
        free(nm->service);
        free(nm->port);
        free(nm);
    }
    for (int r = 0; r < srv->size; r++) {
        free(srv->conn[r].buf);
        plx_pmisrv_spawn_free(srv->conn[r].spawn);
    }
    free(srv->conn);
    free(srv->appnum);
    free(srv);
}

void plx_pmisrv_input(struct plx_pmisrv *srv, int rank, const char *buf, size_t len)
{
    struct plx_pmisrv_conn *c = &srv->conn[rank];
    size_t start = 0;

    if (c->broken)
        return;
    if (c->len + len + 1 > c->cap) {
        size_t cap = c->cap ? c->cap : 1024;
        while (cap < c->len + len + 1)
            cap *= 2;
        char *nb = realloc(c->buf, cap);
        if (nb == NULL) {
            plx_pmisrv_fail(srv, rank, "out of memory buffering its PMI input");
            return;
        }
        c->buf = nb;
        c->cap = cap;
    }
    memcpy(c->buf + c->len, buf, len);
    c->len += len;

    for (size_t i = 0; i < c->len && !c->broken; i++) {
        if (c->buf[i] != '\n')
            continue;
        c->buf[i] = '\0';
        if (i > start && c->buf[i - 1] == '\r')
            c->buf[i - 1] = '\0';
        plx_pmisrv_line(srv, rank, c->buf + start);
        start = i + 1;
    }
    if (c->broken) {
        c->len = 0;
        return;
    }
    memmove(c->buf, c->buf + start, c->len - start);
    c->len -= start;
    if (c->len > PLX_PMISRV_LINE_MAX)
        plx_pmisrv_fail(srv, rank, "sent a PMI line longer than %d bytes", PLX_PMISRV_LINE_MAX);
}

void plx_pmisrv_closed(struct plx_pmisrv *srv, int rank)
{
    srv->conn[rank].closed = 1;
}

enum plx_pmisrv_state plx_pmisrv_state(const struct plx_pmisrv *srv, int rank)
{
    return srv->conn[rank].state;
}

int plx_pmisrv_barrier_waiting(const struct plx_pmisrv *srv)
{
    return srv->barrier_count;
}

int plx_pmisrv_in_barrier(const struct plx_pmisrv *srv, int rank)
{
    return srv->conn[rank].in_barrier;
}
