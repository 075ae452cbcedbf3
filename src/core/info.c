/*
 * Info objects: an ordered list of (key, value) strings. Order is insertion
 * order, which is what MPI_Info_get_nthkey walks; setting an existing key
 * replaces its value in place. Lookups are linear: info objects hold a
 * handful of hints.
 *
 * MPI_INFO_ENV is a static builtin describing how the process was started
 * (MPI 3.1 section 10.3.1 keys: command, argv, maxprocs, host, arch, wdir).
 * Limits (MPI_MAX_INFO_KEY/VAL, empty keys) are checked by api/info.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/utsname.h>
#include "core/log.h"
#include "core/objects.h"

struct plx_objtab plx_info_tab = PLX_OBJTAB_INIT("info", PLX_OBJ_INFO, struct plx_info);

static struct plx_info plx_info_env = {
    .obj = { .handle = MPI_INFO_ENV, .refcount = 1, .live = 1, .builtin = 1 },
};

static struct plx_info_entry *plx_info_find(const struct plx_info *info, const char *key)
{
    for (int i = 0; i < info->nkeys; i++)
        if (!strcmp(info->entries[i].key, key))
            return &info->entries[i];
    return NULL;
}

void plx_info_set(struct plx_info *info, const char *key, const char *value)
{
    struct plx_info_entry *e = plx_info_find(info, key);
    if (e) {
        char *v = plx_strdup(value);
        free(e->value);
        e->value = v;
        return;
    }
    if (info->nkeys == info->cap) {
        int cap = info->cap ? info->cap * 2 : 8;
        struct plx_info_entry *n = realloc(info->entries, (size_t)cap * sizeof *n);
        if (!n)
            plx_fatal("out of memory growing an info object to %d keys", cap);
        info->entries = n;
        info->cap = cap;
    }
    e = &info->entries[info->nkeys++];
    e->key = plx_strdup(key);
    e->value = plx_strdup(value);
}

int plx_info_delete(struct plx_info *info, const char *key)
{
    struct plx_info_entry *e = plx_info_find(info, key);
    if (!e)
        return 0;
    free(e->key);
    free(e->value);
    int i = (int)(e - info->entries);
    memmove(e, e + 1, (size_t)(info->nkeys - i - 1) * sizeof *e);
    info->nkeys--;
    return 1;
}

const char *plx_info_lookup(const struct plx_info *info, const char *key)
{
    if (!info)
        return NULL;
    const struct plx_info_entry *e = plx_info_find(info, key);
    return e ? e->value : NULL;
}

struct plx_info *plx_info_new(void)
{
    return plx_obj_alloc(&plx_info_tab);
}

struct plx_info *plx_info_dup(const struct plx_info *src)
{
    struct plx_info *info = plx_info_new();
    if (!info || !src)
        return info;
    for (int i = 0; i < src->nkeys; i++)
        plx_info_set(info, src->entries[i].key, src->entries[i].value);
    return info;
}

static void plx_info_clear(struct plx_info *info)
{
    for (int i = 0; i < info->nkeys; i++) {
        free(info->entries[i].key);
        free(info->entries[i].value);
    }
    free(info->entries);
    info->entries = NULL;
    info->nkeys = info->cap = 0;
}

void plx_info_release(struct plx_info *info)
{
    if (!info || info->obj.builtin)
        return;
    if (--info->obj.refcount > 0)
        return;
    plx_info_clear(info);
    plx_obj_free(&plx_info_tab, info);
}

/* command = argv[0], argv = the other arguments separated by spaces. */
static void plx_info_env_cmdline(struct plx_info *info)
{
    FILE *f = fopen("/proc/self/cmdline", "r");
    if (!f)
        return;
    char buf[MPI_MAX_INFO_VAL + 1];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    if (!n)
        return;
    size_t first = strlen(buf);
    plx_info_set(info, "command", buf);
    if (first + 1 >= n)
        return;
    char *args = buf + first + 1;
    for (char *p = args; p < buf + n - 1; p++)
        if (*p == '\0')
            *p = ' ';
    plx_info_set(info, "argv", args);
}

void plx_info_init_builtins(int world_size)
{
    struct plx_info *env = &plx_info_env;
    plx_obj_register_builtin(&plx_info_tab, MPI_INFO_ENV, env);
    if (env->nkeys)
        return;
    char buf[MPI_MAX_INFO_VAL + 1];
    plx_info_env_cmdline(env);
    snprintf(buf, sizeof buf, "%d", world_size);
    plx_info_set(env, "maxprocs", buf);
    if (gethostname(buf, sizeof buf - 1) == 0) {
        buf[sizeof buf - 1] = '\0';
        plx_info_set(env, "host", buf);
    }
    struct utsname u;
    if (uname(&u) == 0)
        plx_info_set(env, "arch", u.machine);
    if (getcwd(buf, sizeof buf))
        plx_info_set(env, "wdir", buf);
}

void plx_info_fill_env(struct plx_info *info, int argc, char **argv, int maxprocs, const char *thread_level)
{
    char buf[MPI_MAX_INFO_VAL + 1];
    if (argc > 0 && argv && argv[0]) {
        plx_info_set(info, "command", argv[0]);
        size_t n = 0;
        buf[0] = '\0';
        for (int i = 1; i < argc && argv[i]; i++) {
            int w = snprintf(buf + n, sizeof buf - n, "%s%s", i > 1 ? " " : "", argv[i]);
            if (w < 0 || (size_t)w >= sizeof buf - n)
                break;  /* longer than MPI_MAX_INFO_VAL: the arguments that fit */
            n += (size_t)w;
        }
        if (argc > 1)
            plx_info_set(info, "argv", buf);
    } else {
        plx_info_env_cmdline(info);
    }
    snprintf(buf, sizeof buf, "%d", maxprocs);
    plx_info_set(info, "maxprocs", buf);
    if (gethostname(buf, sizeof buf - 1) == 0) {
        buf[sizeof buf - 1] = '\0';
        plx_info_set(info, "host", buf);
    }
    struct utsname u;
    if (uname(&u) == 0)
        plx_info_set(info, "arch", u.machine);
    if (getcwd(buf, sizeof buf))
        plx_info_set(info, "wdir", buf);
    if (thread_level)
        plx_info_set(info, "thread_level", thread_level);
}
