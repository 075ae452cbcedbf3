/*
 * PLEXUS_IFACES and IP addresses, for the TCP transport and the launcher;
 * see iface.h.
 */
#include <arpa/inet.h>
#include <ifaddrs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "util/iface.h"

int plx_iface_ip_parse(const char *s, struct plx_iface_ip *a)
{
    memset(a, 0, sizeof *a);
    if (strchr(s, ':')) {
        a->family = AF_INET6;
        return inet_pton(AF_INET6, s, a->b) == 1 ? 0 : -1;
    }
    a->family = AF_INET;
    return inet_pton(AF_INET, s, a->b) == 1 ? 0 : -1;
}

void plx_iface_ip_format(const struct plx_iface_ip *a, char *buf, size_t len)
{
    if (!inet_ntop(a->family, a->b, buf, (socklen_t)len))
        snprintf(buf, len, "?");
}

socklen_t plx_iface_ip_sockaddr(const struct plx_iface_ip *a, int port, struct sockaddr_storage *ss)
{
    memset(ss, 0, sizeof *ss);
    if (a->family == AF_INET) {
        struct sockaddr_in *in = (struct sockaddr_in *)ss;
        in->sin_family = AF_INET;
        in->sin_port = htons((uint16_t)port);
        memcpy(&in->sin_addr, a->b, 4);
        return sizeof *in;
    }
    struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss;
    in6->sin6_family = AF_INET6;
    in6->sin6_port = htons((uint16_t)port);
    memcpy(&in6->sin6_addr, a->b, 16);
    return sizeof *in6;
}

int plx_iface_ip_in_cidr(const struct plx_iface_ip *a, const struct plx_iface_ip *net, int prefix)
{
    if (a->family != net->family)
        return 0;
    int bits = a->family == AF_INET ? 32 : 128;
    if (prefix < 0 || prefix > bits)
        return 0;
    int full = prefix / 8, rest = prefix % 8;
    if (memcmp(a->b, net->b, (size_t)full) != 0)
        return 0;
    if (rest) {
        uint8_t mask = (uint8_t)(0xff << (8 - rest));
        if ((a->b[full] & mask) != (net->b[full] & mask))
            return 0;
    }
    return 1;
}

static int plx_iface_ip_link_local(const struct plx_iface_ip *a)
{
    return a->family == AF_INET6 && a->b[0] == 0xfe && (a->b[1] & 0xc0) == 0x80;
}

static int plx_iface_ip_loopback(const struct plx_iface_ip *a)
{
    static const uint8_t v6lo[16] = { [15] = 1 };
    if (a->family == AF_INET)
        return a->b[0] == 127;
    return memcmp(a->b, v6lo, 16) == 0;
}

int plx_iface_rules_parse(const char *spec, struct plx_iface_rules *rules, char *err, size_t errlen)
{
    memset(rules, 0, sizeof *rules);
    const char *p = spec ? spec : "";
    while (*p) {
        const char *e = strchr(p, ',');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        char term[128];
        if (len >= sizeof term) {
            snprintf(err, errlen, "PLEXUS_IFACES: term \"%.40s...\" is too long", p);
            return -1;
        }
        memcpy(term, p, len);
        term[len] = 0;
        p += len + (e ? 1 : 0);
        char *t = term;
        while (*t == ' ')
            t++;
        for (size_t k = strlen(t); k > 0 && t[k - 1] == ' '; k--)
            t[k - 1] = 0;
        if (!*t)
            continue;
        if (rules->n == PLX_IFACE_MAX_RULES) {
            snprintf(err, errlen, "PLEXUS_IFACES: more than %d terms", PLX_IFACE_MAX_RULES);
            return -1;
        }
        struct plx_iface_rule *r = &rules->r[rules->n];
        memset(r, 0, sizeof *r);
        if (*t == '^') {
            r->exclude = 1;
            t++;
        }
        char *slash = strchr(t, '/');
        if (slash) {
            *slash = 0;
            char *end;
            long pl = strtol(slash + 1, &end, 10);
            if (plx_iface_ip_parse(t, &r->a) != 0 || end == slash + 1 || *end || pl < 0 ||
                pl > (r->a.family == AF_INET ? 32 : 128)) {
                snprintf(err, errlen, "PLEXUS_IFACES: \"%s/%s\" is not a CIDR block (e.g. 10.1.0.0/16, fd00::/8)",
                         t, slash + 1);
                return -1;
            }
            r->cidr = 1;
            r->prefix = (int)pl;
        } else {
            if (!*t || strlen(t) >= IFNAMSIZ) {
                snprintf(err, errlen, "PLEXUS_IFACES: \"%s\" is not an interface name or CIDR block", t);
                return -1;
            }
            snprintf(r->name, sizeof r->name, "%.*s", (int)sizeof r->name - 1, t);
        }
        if (!r->exclude)
            rules->ninclude++;
        rules->n++;
    }
    return 0;
}

static int plx_iface_rule_match(const struct plx_iface_rule *r, const struct plx_iface_addr *a)
{
    if (r->cidr)
        return plx_iface_ip_in_cidr(&a->a, &r->a, r->prefix);
    return strcmp(r->name, a->ifname) == 0;
}

int plx_iface_selected(const struct plx_iface_rules *rules, const struct plx_iface_addr *a)
{
    if (plx_iface_ip_link_local(&a->a))
        return 0;
    int included = 0;
    for (int i = 0; i < rules->n; i++) {
        if (!plx_iface_rule_match(&rules->r[i], a))
            continue;
        if (rules->r[i].exclude)
            return 0;
        included = 1;
    }
    if (rules->ninclude)
        return included;
    return !a->loopback;
}

static int plx_iface_prefix_len(const struct sockaddr *mask, int family)
{
    if (!mask)
        return family == AF_INET ? 32 : 128;
    const uint8_t *b = family == AF_INET ? (const uint8_t *)&((const struct sockaddr_in *)mask)->sin_addr
                                         : (const uint8_t *)&((const struct sockaddr_in6 *)mask)->sin6_addr;
    int n = family == AF_INET ? 4 : 16, bits = 0;
    for (int i = 0; i < n; i++)
        bits += __builtin_popcount(b[i]);
    return bits;
}

int plx_iface_list(struct plx_iface_addr *out, int max)
{
    struct ifaddrs *ifs;
    if (getifaddrs(&ifs) != 0)
        return 0;
    int n = 0;
    for (struct ifaddrs *i = ifs; i && n < max; i = i->ifa_next) {
        if (!i->ifa_addr || !(i->ifa_flags & IFF_UP))
            continue;
        int fam = i->ifa_addr->sa_family;
        if (fam != AF_INET && fam != AF_INET6)
            continue;
        struct plx_iface_addr *a = &out[n];
        memset(a, 0, sizeof *a);
        snprintf(a->ifname, sizeof a->ifname, "%s", i->ifa_name);
        a->a.family = fam;
        if (fam == AF_INET)
            memcpy(a->a.b, &((struct sockaddr_in *)i->ifa_addr)->sin_addr, 4);
        else
            memcpy(a->a.b, &((struct sockaddr_in6 *)i->ifa_addr)->sin6_addr, 16);
        a->prefix = plx_iface_prefix_len(i->ifa_netmask, fam);
        a->loopback = (i->ifa_flags & IFF_LOOPBACK) || plx_iface_ip_loopback(&a->a);
        n++;
    }
    freeifaddrs(ifs);
    return n;
}

int plx_iface_select(const struct plx_iface_rules *rules, struct plx_iface_addr *out, int max)
{
    struct plx_iface_addr all[64];
    int nall = plx_iface_list(all, 64), n = 0;
    if (rules->ninclude > 0) {
        /* in the order of the include terms: the user's order is the order
         * they are tried in */
        int taken[64] = { 0 };
        for (int k = 0; k < rules->n; k++) {
            if (rules->r[k].exclude)
                continue;
            for (int i = 0; i < nall && n < max; i++) {
                if (!taken[i] && plx_iface_rule_match(&rules->r[k], &all[i]) && plx_iface_selected(rules, &all[i])) {
                    taken[i] = 1;
                    out[n++] = all[i];
                }
            }
        }
        return n;
    }
    for (int i = 0; i < nall && n < max; i++)
        if (plx_iface_selected(rules, &all[i]))
            out[n++] = all[i];
    if (n == 0) {
        /* only excludes, or nothing but loopback is up: loopback, unless excluded */
        for (int i = 0; i < nall && n < max; i++) {
            int excluded = 0;
            for (int k = 0; k < rules->n; k++)
                excluded |= plx_iface_rule_match(&rules->r[k], &all[i]);
            if (all[i].loopback && !excluded && !plx_iface_ip_link_local(&all[i].a))
                out[n++] = all[i];
        }
    }
    return n;
}

void plx_iface_sockaddr_str(const struct sockaddr_storage *ss, char *buf, size_t len)
{
    char ip[INET6_ADDRSTRLEN] = "?";
    int port = 0;
    if (ss->ss_family == AF_INET) {
        const struct sockaddr_in *in = (const struct sockaddr_in *)ss;
        inet_ntop(AF_INET, &in->sin_addr, ip, sizeof ip);
        port = ntohs(in->sin_port);
        snprintf(buf, len, "%s:%d", ip, port);
    } else if (ss->ss_family == AF_INET6) {
        const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)ss;
        port = ntohs(in6->sin6_port);
        if (IN6_IS_ADDR_V4MAPPED(&in6->sin6_addr)) {    /* an IPv4 peer of a dual-stack listener */
            inet_ntop(AF_INET, in6->sin6_addr.s6_addr + 12, ip, sizeof ip);
            snprintf(buf, len, "%s:%d", ip, port);
            return;
        }
        inet_ntop(AF_INET6, &in6->sin6_addr, ip, sizeof ip);
        snprintf(buf, len, "[%s]:%d", ip, port);
    } else {
        snprintf(buf, len, "(unknown address)");
    }
}
