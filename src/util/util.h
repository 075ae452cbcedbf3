/*
 * Small system helpers that the library and the tools (mpiexec,
 * plexus-proxy) both need: the monotonic clock, random bytes, binding a
 * listening socket within a port range, raising the descriptor limit.
 *
 * src/util/ is compiled into libmpi (every .c under src/) and into the tools
 * (tools/mpiexec/CMakeLists.txt), so it uses libc only: nothing from core/,
 * no logging, no plx_config. Errors are return values and errno; the caller
 * words the message.
 */
#ifndef PLX_UTIL_H
#define PLX_UTIL_H

#include <stddef.h>
#include <sys/resource.h>

/* Seconds on CLOCK_MONOTONIC. */
double plx_util_now(void);

/* len random bytes (getrandom, else /dev/urandom): 0, or -1. */
int plx_util_random(void *buf, size_t len);

/* A port range "lo-hi" or one port "p" into lo, hi; an empty string gives
 * 0, 0 (any port). 0, or -1 when it is not a range 1..65535 with lo <= hi. */
int plx_util_port_range_parse(const char *s, int *lo, int *hi);

/* Binds fd, a new stream socket of `family` (AF_INET or AF_INET6), to the
 * wildcard address and a port in lo..hi (lo == 0: a port the kernel picks),
 * and listens with `backlog`. Ports in use (or forbidden) are skipped; with
 * `spread` the walk starts at a random port of the range, so that the
 * processes of one host rarely collide. Returns the port, or -1 with errno
 * from the last attempt. */
int plx_util_listen_range(int fd, int family, int lo, int hi, int spread, int backlog);

/* Raises the soft RLIMIT_NOFILE to `need` (at most the hard limit) when it
 * is lower. *orig_p gets the limit found (for children that should get it
 * back), *now_p the soft limit in effect afterwards (either may be NULL).
 * Returns 1 when the limit was raised, 0 when it was high enough or could
 * not be raised, -1 when it cannot be read. */
int plx_util_raise_nofile(rlim_t need, struct rlimit *orig_p, rlim_t *now_p);

#endif
