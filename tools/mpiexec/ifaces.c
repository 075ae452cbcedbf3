/*
 * PLEXUS_IFACES for mpiexec (see ifaces.h).
 */
#include "ifaces.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

static int plx_ifaces_ip_parse(const char *s, struct plx_ifaces_ip *ip)
{
    memset(ip, 0, sizeof(*ip));
    ip->family = strchr(s, ':') ? AF_INET6 : AF_INET;
    return inet_pton(ip->family, s, ip->b) == 1 ? 0 : -1;
}

static int plx_ifaces_in_cidr(const struct plx_ifaces_ip *a, const struct plx_ifaces_ip *net,
                              int prefix)
{
    int full = prefix / 8, rest = prefix % 8;

    if (a->family != net->family)
        return 0;
    if (memcmp(a->b, net->b, (size_t)full) != 0)
        return 0;
    if (rest != 0) {
        uint8_t mask = (uint8_t)(0xff << (8 - rest));
        if ((a->b[full] & mask) != (net->b[full] & mask))
            return 0;
    }
    return 1;
}

int plx_ifaces_parse(const char *spec, struct plx_ifaces_rules *rules, char *err, size_t errlen)
{
    const char *p = spec ? spec : "";

    memset(rules, 0, sizeof(*rules));
    while (*p != '\0') {
        char term[128];
        size_t n = strcspn(p, ",");
        const char *next = p[n] == ',' ? p + n + 1 : p + n;

        while (n > 0 && (*p == ' ' || *p == '\t')) {
            p++;
            n--;
        }
        while (n > 0 && (p[n - 1] == ' ' || p[n - 1] == '\t'))
            n--;
        if (n == 0) {
            p = next;
            continue;
        }
        if (n >= sizeof(term)) {
            snprintf(err, errlen, "PLEXUS_IFACES: term \"%.40s...\" is too long", p);
            return -1;
        }
        if (rules->n == PLX_IFACES_MAX_RULES) {
            snprintf(err, errlen, "PLEXUS_IFACES: more than %d terms", PLX_IFACES_MAX_RULES);
            return -1;
        }
        memcpy(term, p, n);
        term[n] = '\0';
        struct plx_ifaces_rule *r = &rules->r[rules->n];
        char *t = term;
        memset(r, 0, sizeof(*r));
        if (*t == '^') {
            r->exclude = 1;
            t++;
        }
        char *slash = strchr(t, '/');
        if (slash != NULL) {
            char *end;
            *slash = '\0';
            long pre = strtol(slash + 1, &end, 10);
            int bad = plx_ifaces_ip_parse(t, &r->ip) != 0 || end == slash + 1 || *end != '\0'
                      || pre < 0 || pre > (r->ip.family == AF_INET ? 32 : 128);
            if (bad) {
                snprintf(err, errlen, "PLEXUS_IFACES: \"%s/%s\" is not a CIDR block (e.g. "
                         "10.1.0.0/16, fd00::/8)", t, slash + 1);
                return -1;
            }
            r->cidr = 1;
            r->prefix = (int)pre;
        } else if (t[0] == '\0' || strlen(t) >= IFNAMSIZ || strchr(t, ':') != NULL) {
            snprintf(err, errlen, "PLEXUS_IFACES: \"%s\" is not an interface name or CIDR "
                     "block", term);
            return -1;
        } else {
            memcpy(r->name, t, strlen(t) + 1);     /* fits: checked above */
        }
        rules->ninclude += !r->exclude;
        rules->n++;
        p = next;
    }
    return 0;
}

static int plx_ifaces_match(const struct plx_ifaces_rule *r, const struct plx_ifaces_addr *a)
{
    return r->cidr ? plx_ifaces_in_cidr(&a->ip, &r->ip, r->prefix)
                   : strcmp(r->name, a->ifname) == 0;
}

static int plx_ifaces_selected(const struct plx_ifaces_rules *rules,
                               const struct plx_ifaces_addr *a)
{
    int included = 0;

    for (int i = 0; i < rules->n; i++) {
        if (!plx_ifaces_match(&rules->r[i], a))
            continue;
        if (rules->r[i].exclude)
            return 0;
        included = 1;
    }
    return rules->ninclude > 0 ? included : !a->loopback;
}

int plx_ifaces_all(struct plx_ifaces_addr *out, int max)
{
    struct ifaddrs *ifa, *i;
    int n = 0;

    if (getifaddrs(&ifa) != 0)
        return -1;
    for (i = ifa; i != NULL && n < max; i = i->ifa_next) {
        struct plx_ifaces_addr *a = &out[n];
        if (i->ifa_addr == NULL || !(i->ifa_flags & IFF_UP))
            continue;
        memset(a, 0, sizeof(*a));
        if (i->ifa_addr->sa_family == AF_INET) {
            a->ip.family = AF_INET;
            memcpy(a->ip.b, &((struct sockaddr_in *)i->ifa_addr)->sin_addr, 4);
            a->loopback = a->ip.b[0] == 127;
        } else if (i->ifa_addr->sa_family == AF_INET6) {
            static const uint8_t v6lo[16] = { [15] = 1 };
            a->ip.family = AF_INET6;
            memcpy(a->ip.b, &((struct sockaddr_in6 *)i->ifa_addr)->sin6_addr, 16);
            if (a->ip.b[0] == 0xfe && (a->ip.b[1] & 0xc0) == 0x80)
                continue;           /* link-local */
            a->loopback = memcmp(a->ip.b, v6lo, 16) == 0;
        } else {
            continue;
        }
        a->loopback |= (i->ifa_flags & IFF_LOOPBACK) != 0;
        snprintf(a->ifname, sizeof(a->ifname), "%s", i->ifa_name);
        n++;
    }
    freeifaddrs(ifa);
    return n;
}

int plx_ifaces_select(const struct plx_ifaces_rules *rules, struct plx_ifaces_addr *out, int max)
{
    struct plx_ifaces_addr all[64];
    int nall = plx_ifaces_all(all, 64), n = 0;

    if (nall < 0)
        return -1;
    if (rules->ninclude > 0) {
        /* In the order of the include terms: the user's order is the order
         * a proxy tries them in. */
        int taken[64] = { 0 };
        for (int k = 0; k < rules->n; k++) {
            if (rules->r[k].exclude)
                continue;
            for (int i = 0; i < nall && n < max; i++) {
                if (!taken[i] && plx_ifaces_match(&rules->r[k], &all[i])
                    && plx_ifaces_selected(rules, &all[i])) {
                    taken[i] = 1;
                    out[n++] = all[i];
                }
            }
        }
        return n;
    }
    /* Non-loopback first: a proxy on another host tries them in order. */
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i < nall && n < max; i++)
            if (all[i].loopback == pass && plx_ifaces_selected(rules, &all[i]))
                out[n++] = all[i];
    if (n == 0 && rules->ninclude == 0) {
        for (int i = 0; i < nall && n < max; i++) {
            int excluded = 0;
            for (int k = 0; k < rules->n; k++)
                excluded |= plx_ifaces_match(&rules->r[k], &all[i]);
            if (all[i].loopback && !excluded)
                out[n++] = all[i];
        }
    }
    return n;
}

void plx_ifaces_format(const struct plx_ifaces_ip *ip, int port, char *buf, size_t len)
{
    char a[INET6_ADDRSTRLEN];

    if (inet_ntop(ip->family, ip->b, a, sizeof(a)) == NULL)
        snprintf(a, sizeof(a), "?");
    if (ip->family == AF_INET6)
        snprintf(buf, len, "[%s]:%d", a, port);
    else
        snprintf(buf, len, "%s:%d", a, port);
}
