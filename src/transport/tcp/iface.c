/*
 * Interface selection (PLEXUS_IFACES) and the TCP business card; see iface.h.
 */
#include <arpa/inet.h>
#include <ifaddrs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "transport/tcp/iface.h"

int plx_tcp_ip_parse(const char *s, struct plx_tcp_ipaddr *a)
{
    memset(a, 0, sizeof *a);
    if (strchr(s, ':')) {
        a->family = AF_INET6;
        return inet_pton(AF_INET6, s, a->b) == 1 ? 0 : -1;
    }
    a->family = AF_INET;
    return inet_pton(AF_INET, s, a->b) == 1 ? 0 : -1;
}

void plx_tcp_ip_format(const struct plx_tcp_ipaddr *a, char *buf, size_t len)
{
    if (!inet_ntop(a->family, a->b, buf, (socklen_t)len))
        snprintf(buf, len, "?");
}

socklen_t plx_tcp_ip_sockaddr(const struct plx_tcp_ipaddr *a, int port, struct sockaddr_storage *ss)
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

int plx_tcp_ip_in_cidr(const struct plx_tcp_ipaddr *a, const struct plx_tcp_ipaddr *net, int prefix)
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

static int plx_tcp_ip_link_local(const struct plx_tcp_ipaddr *a)
{
    return a->family == AF_INET6 && a->b[0] == 0xfe && (a->b[1] & 0xc0) == 0x80;
}

static int plx_tcp_ip_loopback(const struct plx_tcp_ipaddr *a)
{
    static const uint8_t v6lo[16] = { [15] = 1 };
    if (a->family == AF_INET)
        return a->b[0] == 127;
    return memcmp(a->b, v6lo, 16) == 0;
}

int plx_tcp_iface_rules_parse(const char *spec, struct plx_tcp_iface_rules *rules, char *err, size_t errlen)
{
    memset(rules, 0, sizeof *rules);
    const char *p = spec;
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
        if (rules->n == PLX_TCP_IFACE_MAX_RULES) {
            snprintf(err, errlen, "PLEXUS_IFACES: more than %d terms", PLX_TCP_IFACE_MAX_RULES);
            return -1;
        }
        struct plx_tcp_iface_rule *r = &rules->r[rules->n];
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
            if (plx_tcp_ip_parse(t, &r->a) != 0 || end == slash + 1 || *end || pl < 0 ||
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

static int plx_tcp_rule_match(const struct plx_tcp_iface_rule *r, const struct plx_tcp_ifaddr *a)
{
    if (r->cidr)
        return plx_tcp_ip_in_cidr(&a->a, &r->a, r->prefix);
    return strcmp(r->name, a->ifname) == 0;
}

int plx_tcp_iface_selected(const struct plx_tcp_iface_rules *rules, const struct plx_tcp_ifaddr *a)
{
    if (plx_tcp_ip_link_local(&a->a))
        return 0;
    int included = 0;
    for (int i = 0; i < rules->n; i++) {
        if (!plx_tcp_rule_match(&rules->r[i], a))
            continue;
        if (rules->r[i].exclude)
            return 0;
        included = 1;
    }
    if (rules->ninclude)
        return included;
    return !a->loopback;
}

static int plx_tcp_prefix_len(const struct sockaddr *mask, int family)
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

int plx_tcp_iface_list(struct plx_tcp_ifaddr *out, int max)
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
        struct plx_tcp_ifaddr *a = &out[n];
        memset(a, 0, sizeof *a);
        snprintf(a->ifname, sizeof a->ifname, "%s", i->ifa_name);
        a->a.family = fam;
        if (fam == AF_INET)
            memcpy(a->a.b, &((struct sockaddr_in *)i->ifa_addr)->sin_addr, 4);
        else
            memcpy(a->a.b, &((struct sockaddr_in6 *)i->ifa_addr)->sin6_addr, 16);
        a->prefix = plx_tcp_prefix_len(i->ifa_netmask, fam);
        a->loopback = (i->ifa_flags & IFF_LOOPBACK) || plx_tcp_ip_loopback(&a->a);
        n++;
    }
    freeifaddrs(ifs);
    return n;
}

static int plx_tcp_card_addrs(char *buf, size_t len, const struct plx_tcp_ipaddr *a, int n)
{
    size_t off = 0;
    for (int i = 0; i < n; i++) {
        char s[INET6_ADDRSTRLEN];
        plx_tcp_ip_format(&a[i], s, sizeof s);
        int w = snprintf(buf + off, len - off, "%s%s", i ? "," : "", s);
        if (w < 0 || (size_t)w >= len - off)
            return -1;
        off += (size_t)w;
    }
    if (n == 0 && len)
        buf[0] = 0;
    return (int)off;
}

int plx_tcp_card_format(const struct plx_tcp_card *c, char *buf, size_t len)
{
    char lo[128], addrs[1024];
    if (plx_tcp_card_addrs(lo, sizeof lo, c->lo, c->nlo) < 0 ||
        plx_tcp_card_addrs(addrs, sizeof addrs, c->addr, c->naddr) < 0)
        return -1;
    int w = snprintf(buf, len, "%d|%s|%s|%s", c->port, c->host, lo, addrs);
    return w < 0 || (size_t)w >= len ? -1 : 0;
}

static int plx_tcp_card_parse_addrs(const char *s, const char *end, struct plx_tcp_ipaddr *a, int max, int *n)
{
    *n = 0;
    while (s < end) {
        const char *c = memchr(s, ',', (size_t)(end - s));
        const char *e = c ? c : end;
        char tmp[INET6_ADDRSTRLEN + 1];
        if ((size_t)(e - s) >= sizeof tmp || *n == max)
            return -1;
        memcpy(tmp, s, (size_t)(e - s));
        tmp[e - s] = 0;
        if (plx_tcp_ip_parse(tmp, &a[*n]) != 0)
            return -1;
        (*n)++;
        s = c ? c + 1 : end;
    }
    return 0;
}

int plx_tcp_card_parse(const char *s, struct plx_tcp_card *c)
{
    memset(c, 0, sizeof *c);
    const char *b1 = strchr(s, '|');
    const char *b2 = b1 ? strchr(b1 + 1, '|') : NULL;
    const char *b3 = b2 ? strchr(b2 + 1, '|') : NULL;
    if (!b3)
        return -1;
    char *end;
    long port = strtol(s, &end, 10);
    if (end != b1 || port <= 0 || port > 65535)
        return -1;
    c->port = (int)port;
    size_t hl = (size_t)(b2 - b1 - 1);
    if (hl >= sizeof c->host)
        hl = sizeof c->host - 1;
    memcpy(c->host, b1 + 1, hl);
    c->host[hl] = 0;
    if (plx_tcp_card_parse_addrs(b2 + 1, b3, c->lo, 2, &c->nlo) != 0)
        return -1;
    return plx_tcp_card_parse_addrs(b3 + 1, b3 + 1 + strlen(b3 + 1), c->addr, PLX_TCP_CARD_MAX_ADDRS,
                                    &c->naddr);
}
