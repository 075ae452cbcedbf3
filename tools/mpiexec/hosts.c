/*
 * Host lists and rank placement (see hosts.h).
 */
#include "hosts.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int plx_hosts_name_ok(const char *name)
{
    if (name[0] == '\0' || name[0] == '-' || strlen(name) > PLX_HOSTS_NAME_MAX)
        return 0;
    for (const char *p = name; *p; p++)
        if (!isalnum((unsigned char)*p) && strchr("._@-", *p) == NULL)
            return 0;
    return 1;
}

static int plx_hosts_add(struct plx_hostlist *hl, const char *name, int slots, char *err,
                         size_t errlen)
{
    if (!plx_hosts_name_ok(name)) {
        snprintf(err, errlen, "'%.80s' is not a host name (letters, digits, '.', '_', '@' "
                 "and '-' only)", name);
        return -1;
    }
    for (int i = 0; i < hl->n; i++) {
        if (strcmp(hl->h[i].name, name) == 0) {
            hl->h[i].slots += slots;
            return 0;
        }
    }
    if (hl->n == hl->cap) {
        int ncap = hl->cap ? hl->cap * 2 : 8;
        struct plx_host *nh = realloc(hl->h, (size_t)ncap * sizeof(*nh));
        if (nh == NULL) {
            snprintf(err, errlen, "out of memory");
            return -1;
        }
        hl->h = nh;
        hl->cap = ncap;
    }
    snprintf(hl->h[hl->n].name, sizeof(hl->h[hl->n].name), "%s", name);
    hl->h[hl->n].slots = slots;
    hl->n++;
    return 0;
}

static int plx_hosts_slots_parse(const char *s, int *slots_p)
{
    char *end;
    long v;

    errno = 0;
    v = strtol(s, &end, 10);
    if (errno != 0 || end == s || *end != '\0' || v < 1 || v > 1000000)
        return -1;
    *slots_p = (int)v;
    return 0;
}

/* One entry: "name" or "name:slots". Modifies s. */
static int plx_hosts_entry(struct plx_hostlist *hl, char *s, char *err, size_t errlen)
{
    char *colon = strrchr(s, ':');
    int slots = 1;

    if (colon != NULL) {
        *colon = '\0';
        if (plx_hosts_slots_parse(colon + 1, &slots) != 0) {
            snprintf(err, errlen, "'%.200s:%.40s': the number of slots must be a positive integer",
                     s, colon + 1);
            return -1;
        }
    }
    return plx_hosts_add(hl, s, slots, err, errlen);
}

int plx_hosts_add_list(struct plx_hostlist *hl, const char *spec, char *err, size_t errlen)
{
    char *copy = strdup(spec), *save = NULL;
    int rc = 0, n = 0;

    if (copy == NULL) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    for (char *tok = strtok_r(copy, ",", &save); tok != NULL && rc == 0;
         tok = strtok_r(NULL, ",", &save)) {
        rc = plx_hosts_entry(hl, tok, err, errlen);
        n++;
    }
    if (rc == 0 && n == 0) {
        snprintf(err, errlen, "empty host list");
        rc = -1;
    }
    free(copy);
    return rc;
}

int plx_hosts_add_file(struct plx_hostlist *hl, const char *path, char *err, size_t errlen)
{
    FILE *f = fopen(path, "r");
    char line[1024], e[512];
    int lineno = 0, n = 0;

    if (f == NULL) {
        snprintf(err, errlen, "cannot read host file '%s': %s", path, strerror(errno));
        return -1;
    }
    while (fgets(line, sizeof(line), f) != NULL) {
        char *p = line, *name, *rest;
        lineno++;
        char *hash = strchr(p, '#');
        if (hash != NULL)
            *hash = '\0';
        while (isspace((unsigned char)*p))
            p++;
        name = p;
        while (*p && !isspace((unsigned char)*p))
            p++;
        if (*p)
            *p++ = '\0';
        if (name[0] == '\0')
            continue;
        while (isspace((unsigned char)*p))
            p++;
        rest = p;
        for (char *q = rest + strlen(rest); q > rest && isspace((unsigned char)q[-1]);)
            *--q = '\0';
        int rc;
        if (rest[0] != '\0') {
            /* Open MPI's "name slots=N" */
            int slots;
            if (strncmp(rest, "slots=", 6) != 0 || strchr(name, ':') != NULL
                || plx_hosts_slots_parse(rest + 6, &slots) != 0) {
                snprintf(err, errlen, "%s:%d: expected 'host', 'host:SLOTS' or 'host slots=SLOTS'",
                         path, lineno);
                fclose(f);
                return -1;
            }
            rc = plx_hosts_add(hl, name, slots, e, sizeof(e));
        } else {
            rc = plx_hosts_entry(hl, name, e, sizeof(e));
        }
        if (rc != 0) {
            snprintf(err, errlen, "%s:%d: %s", path, lineno, e);
            fclose(f);
            return -1;
        }
        n++;
    }
    fclose(f);
    if (n == 0) {
        snprintf(err, errlen, "host file '%s' names no host", path);
        return -1;
    }
    return 0;
}

void plx_hosts_free(struct plx_hostlist *hl)
{
    free(hl->h);
    hl->h = NULL;
    hl->n = hl->cap = 0;
}

int plx_hosts_slots(const struct plx_hostlist *hl)
{
    long total = 0;
    for (int i = 0; i < hl->n; i++)
        total += hl->h[i].slots;
    return total > 1000000 ? 1000000 : (int)total;
}

void plx_hosts_place(const struct plx_hostlist *hl, int size, int ppn, int *host_of)
{
    int h = 0, used = 0;

    for (int r = 0; r < size; r++) {
        int cap = ppn > 0 ? ppn : hl->h[h].slots;
        if (used == cap) {
            h = (h + 1) % hl->n;
            used = 0;
        }
        host_of[r] = h;
        used++;
    }
}

/* Appends to buf at *off; -1 when it does not fit. */
static int plx_hosts_append(char *buf, size_t len, size_t *off, const char *fmt, int a, int b,
                            int c)
{
    int n = snprintf(buf + *off, len - *off, fmt, a, b, c);
    if (n < 0 || (size_t)n >= len - *off)
        return -1;
    *off += (size_t)n;
    return 0;
}

int plx_hosts_mapping(const int *node_of, int size, char *buf, size_t len)
{
    size_t off = 0;
    int r = 0;

    if (len < 16)
        return -1;
    off = (size_t)snprintf(buf, len, "(vector");
    while (r < size) {
        /* A block: nodes start, start+1, ... each holding `per` consecutive
         * ranks. */
        int start = node_of[r], per = 0, count = 0;
        while (r + per < size && node_of[r + per] == start)
            per++;
        int q = r;
        for (;;) {
            int k = 0;
            while (q + k < size && k < per && node_of[q + k] == start + count)
                k++;
            if (k != per || (q + k < size && node_of[q + k] == start + count))
                break;
            count++;
            q += per;
        }
        if (count == 0)
            count = 1;          /* cannot happen: the first run always fits */
        if (plx_hosts_append(buf, len, &off, ",(%d,%d,%d)", start, count, per) != 0)
            return -1;
        r += count * per;
    }
    if (off + 2 > len)
        return -1;
    buf[off++] = ')';
    buf[off] = '\0';
    return 0;
}

int plx_hosts_is_local(const char *name)
{
    char me[256];

    if (strcmp(name, "localhost") == 0 || strcmp(name, "127.0.0.1") == 0
        || strcmp(name, "::1") == 0)
        return 1;
    if (gethostname(me, sizeof(me)) != 0)
        return 0;
    me[sizeof(me) - 1] = '\0';
    if (strcmp(name, me) == 0)
        return 1;
    /* "node1" names "node1.cluster.org" and the other way round */
    size_t a = strcspn(name, "."), b = strcspn(me, ".");
    return a == b && strncmp(name, me, a) == 0 && (name[a] == '\0' || me[b] == '\0');
}

/* ---- a Slurm allocation ------------------------------------------------------ */

/* Expands one name of a Slurm host list, "node[01-03,7]x" style (one bracket
 * group; Slurm writes several only on Cray/BlueGene), appending to out. */
static int plx_hosts_slurm_name(char *name, char ***out, int *nout, char *err, size_t errlen)
{
    char *lb = strchr(name, '[');
    if (!lb) {
        *out = realloc(*out, (size_t)(*nout + 1) * sizeof **out);
        (*out)[(*nout)++] = strdup(name);
        return 0;
    }
    char *rb = strchr(lb, ']');
    if (!rb) {
        snprintf(err, errlen, "SLURM_JOB_NODELIST: '%.80s' has no closing ']'", name);
        return -1;
    }
    *lb = '\0';
    *rb = '\0';
    const char *suffix = rb + 1;
    for (char *save = NULL, *r = strtok_r(lb + 1, ",", &save); r; r = strtok_r(NULL, ",", &save)) {
        char *dash = strchr(r, '-');
        int width = (int)(dash ? (size_t)(dash - r) : strlen(r));
        char *end;
        long lo = strtol(r, &end, 10), hi = lo;
        if (dash)
            hi = strtol(dash + 1, &end, 10);
        if (*end != '\0' || lo < 0 || hi < lo || hi - lo > 100000) {
            snprintf(err, errlen, "SLURM_JOB_NODELIST: bad range '%.40s'", r);
            return -1;
        }
        for (long i = lo; i <= hi; i++) {
            char buf[PLX_HOSTS_NAME_MAX + 1];
            snprintf(buf, sizeof buf, "%s%0*ld%s", name, width, i, suffix);
            *out = realloc(*out, (size_t)(*nout + 1) * sizeof **out);
            (*out)[(*nout)++] = strdup(buf);
        }
    }
    return 0;
}

int plx_hosts_add_slurm(struct plx_hostlist *hl, const char *nodelist, const char *per_node, char *err,
                        size_t errlen)
{
    char **names = NULL;
    int n = 0, rc = 0;
    char *list = strdup(nodelist);
    /* split at commas outside brackets */
    int depth = 0;
    for (char *p = list, *start = list; rc == 0; p++) {
        if (*p == '[')
            depth++;
        else if (*p == ']')
            depth--;
        if (*p == '\0' || (*p == ',' && depth == 0)) {
            int last = *p == '\0';
            *p = '\0';
            if (*start)
                rc = plx_hosts_slurm_name(start, &names, &n, err, errlen);
            if (last)
                break;
            start = p + 1;
        }
    }
    /* counts: "2(x3),1" = 2,2,2,1 */
    int i = 0;
    const char *c = per_node;
    while (rc == 0 && c && *c && i < n) {
        char *end;
        long v = strtol(c, &end, 10), rep = 1;
        if (end == c || v < 1) {
            snprintf(err, errlen, "bad slot counts '%.80s' from Slurm", per_node);
            rc = -1;
            break;
        }
        if (strncmp(end, "(x", 2) == 0) {
            rep = strtol(end + 2, &end, 10);
            if (*end != ')' || rep < 1) {
                snprintf(err, errlen, "bad slot counts '%.80s' from Slurm", per_node);
                rc = -1;
                break;
            }
            end++;
        }
        for (long k = 0; k < rep && i < n; k++, i++)
            rc = rc ? rc : plx_hosts_add(hl, names[i], (int)v, err, errlen);
        c = *end == ',' ? end + 1 : end;
    }
    for (; rc == 0 && i < n; i++)   /* no counts left: one slot each */
        rc = plx_hosts_add(hl, names[i], 1, err, errlen);
    for (int k = 0; k < n; k++)
        free(names[k]);
    free(names);
    free(list);
    return rc;
}
