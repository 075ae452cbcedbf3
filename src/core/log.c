/* Diagnostics output: one line per message, rank-prefixed, to stderr. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "core/log.h"
#include "core/plexus.h"
#include "pm/pm.h"

int plx_log_rank = -1;
int plx_log_debug = 0;

static void plx_log_vprint(const char *kind, const char *fmt, va_list ap)
{
    char line[2048];
    int n = snprintf(line, sizeof line, "plexus[%d]: %s", plx_log_rank, kind);
    if (n < 0 || (size_t)n >= sizeof line)
        n = 0;
    int m = vsnprintf(line + n, sizeof line - (size_t)n - 1, fmt, ap);
    if (m < 0)
        m = 0;
    size_t len = strlen(line);
    if (len == 0 || line[len - 1] != '\n') {
        line[len++] = '\n';
        line[len] = 0;
    }
    /* one write so lines from concurrent ranks do not interleave */
    ssize_t w = write(2, line, len);
    (void)w;
}

void plx_debug_print(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    plx_log_vprint("debug: ", fmt, ap);
    va_end(ap);
}

void plx_warn(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    plx_log_vprint("", fmt, ap);
    va_end(ap);
}

_Noreturn void plx_fatal(const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    char line[1100];
    snprintf(line, sizeof line, "rank %d: fatal: %s", plx_log_rank, msg);
    plx_pm_abort(1, line);
}

void *plx_malloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (plx_unlikely(!p))
        plx_fatal("out of memory allocating %zu bytes", n);
    return p;
}

void *plx_calloc(size_t n, size_t m)
{
    void *p = calloc(n ? n : 1, m ? m : 1);
    if (plx_unlikely(!p))
        plx_fatal("out of memory allocating %zu x %zu bytes", n, m);
    return p;
}

void *plx_realloc(void *p, size_t n)
{
    void *q = realloc(p, n ? n : 1);
    if (plx_unlikely(!q))
        plx_fatal("out of memory reallocating %zu bytes", n);
    return q;
}

char *plx_strdup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *p = plx_malloc(n);
    memcpy(p, s, n);
    return p;
}
