/*
 * Clock, random bytes, port-range listeners and the descriptor limit for the
 * library and the tools; see util.h.
 */
#include "util/util.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <time.h>

double plx_util_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int plx_util_random(void *buf, size_t len)
{
    uint8_t *b = buf;
    size_t got = 0;
    while (got < len) {
        ssize_t r = getrandom(b + got, len - got, 0);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        got += (size_t)r;
    }
    if (got == len)
        return 0;
    FILE *f = fopen("/dev/urandom", "rb");
    if (!f)
        return -1;
    size_t n = fread(b, 1, len, f);
    fclose(f);
    return n == len ? 0 : -1;
}

int plx_util_port_range_parse(const char *s, int *lo, int *hi)
{
    *lo = *hi = 0;
    if (!s || !s[0])
        return 0;
    char *end;
    long a = strtol(s, &end, 10), b = a;
    if (*end == '-')
        b = strtol(end + 1, &end, 10);
    if (*end || a <= 0 || b > 65535 || a > b)
        return -1;
    *lo = (int)a;
    *hi = (int)b;
    return 0;
}

int plx_util_listen_range(int fd, int family, int lo, int hi, int spread, int backlog)
{
    int nports = lo ? hi - lo + 1 : 1;
    uint32_t start = 0;
    if (lo && spread)
        (void)plx_util_random(&start, sizeof start);
    for (int i = 0; i < nports; i++) {
        int port = lo ? lo + (int)((start + (uint32_t)i) % (uint32_t)nports) : 0;
        struct sockaddr_storage ss;
        memset(&ss, 0, sizeof ss);
        socklen_t len;
        if (family == AF_INET6) {
            struct sockaddr_in6 *a = (struct sockaddr_in6 *)&ss;
            a->sin6_family = AF_INET6;
            a->sin6_addr = in6addr_any;
            a->sin6_port = htons((uint16_t)port);
            len = sizeof *a;
        } else {
            struct sockaddr_in *a = (struct sockaddr_in *)&ss;
            a->sin_family = AF_INET;
            a->sin_addr.s_addr = htonl(INADDR_ANY);
            a->sin_port = htons((uint16_t)port);
            len = sizeof *a;
        }
        if (bind(fd, (struct sockaddr *)&ss, len) == 0 && listen(fd, backlog) == 0) {
            socklen_t sl = sizeof ss;
            if (getsockname(fd, (struct sockaddr *)&ss, &sl) != 0)
                return -1;
            return ntohs(family == AF_INET6 ? ((struct sockaddr_in6 *)&ss)->sin6_port
                                            : ((struct sockaddr_in *)&ss)->sin_port);
        }
        if (errno != EADDRINUSE && errno != EACCES)
            break;
    }
    return -1;
}

int plx_util_raise_nofile(rlim_t need, struct rlimit *orig_p, rlim_t *now_p)
{
    struct rlimit orig, rl;
    if (getrlimit(RLIMIT_NOFILE, &orig) != 0)
        return -1;
    if (orig_p)
        *orig_p = orig;
    if (now_p)
        *now_p = orig.rlim_cur;
    if (orig.rlim_cur >= need)
        return 0;
    rl = orig;
    rl.rlim_cur = need < rl.rlim_max ? need : rl.rlim_max;
    if (setrlimit(RLIMIT_NOFILE, &rl) != 0)
        return 0;
    if (now_p)
        *now_p = rl.rlim_cur;
    return 1;
}
