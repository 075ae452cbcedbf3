/*
 * The TCP business card (PMI key "tcp-<rank>"), one line without spaces:
 *     <port>|<host>|<loopback addrs>|<addrs>      e.g. 40123|n1|127.0.0.1,::1|10.0.0.1,fd00::1
 * Its addresses are those PLEXUS_IFACES selects (util/iface.h); see
 * tcp_card.h for how a peer uses them.
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "transport/tcp/tcp_card.h"

static int plx_tcp_card_addrs(char *buf, size_t len, const struct plx_iface_ip *a, int n)
{
    size_t off = 0;
    for (int i = 0; i < n; i++) {
        char s[INET6_ADDRSTRLEN];
        plx_iface_ip_format(&a[i], s, sizeof s);
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

static int plx_tcp_card_parse_addrs(const char *s, const char *end, struct plx_iface_ip *a, int max, int *n)
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
        if (plx_iface_ip_parse(tmp, &a[*n]) != 0)
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
