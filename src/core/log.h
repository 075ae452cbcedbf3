/*
 * Diagnostics. plx_debug() prints only when PLEXUS_DEBUG is set;
 * plx_warn() and plx_fatal() always print, prefixed with the rank.
 */
#ifndef PLX_LOG_H
#define PLX_LOG_H

#include <stdarg.h>

extern int plx_log_rank;        /* world rank, -1 before init */
extern int plx_log_debug;       /* PLEXUS_DEBUG level */

void plx_debug_print(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void plx_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
_Noreturn void plx_fatal(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#define plx_debug(level, ...) \
    do { if (plx_log_debug >= (level)) plx_debug_print(__VA_ARGS__); } while (0)

#endif
