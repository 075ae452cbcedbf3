/*
 * Which addresses the TCP transport publishes and connects to.
 *
 * PLEXUS_IFACES is a comma-separated list of terms, each an interface name
 * ("eth0") or a CIDR block ("10.1.0.0/16", "fd00::/8"); a leading '^'
 * excludes. An address is selected when
 *   - the list has include terms: it matches one of them and no exclude;
 *   - otherwise (empty, or excludes only): its interface is up, it is not a
 *     loopback address, and it matches no exclude.
 * IPv6 link-local addresses (fe80::/10) are never selected: they need a
 * scope id that means nothing on another host.
 *
 * Business card (PMI key "tcp-<rank>"), one line without spaces:
 *     <port>|<host>|<loopback addrs>|<addrs>      e.g. 40123|n1|127.0.0.1,::1|10.0.0.1,fd00::1
 * A peer on the same node tries the loopback addresses first (empty when
 * PLEXUS_IFACES has include terms: the user chose the interfaces), then the
 * others; a peer on another node tries only the others, in order, and the
 * first that connects and passes the handshake is used. Reachability is
 * tested, not guessed from subnets (subnets only order the attempts).
 */
#ifndef PLX_TCP_IFACE_H
#define PLX_TCP_IFACE_H

#include <net/if.h>
#include <netinet/in.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#define PLX_TCP_IFACE_MAX_RULES 32
#define PLX_TCP_CARD_MAX_ADDRS 16

struct plx_tcp_ipaddr {
    int family;                 /* AF_INET or AF_INET6 */
    uint8_t b[16];              /* network byte order; IPv4 in the first 4 */
};

struct plx_tcp_ifaddr {
    char ifname[IFNAMSIZ];
    struct plx_tcp_ipaddr a;
    int prefix;                 /* netmask length */
    int loopback;               /* IFF_LOOPBACK or 127/8, ::1 */
};

struct plx_tcp_iface_rule {
    int exclude;
    int cidr;                   /* 1: addr/prefix; 0: interface name */
    char name[IFNAMSIZ];
    struct plx_tcp_ipaddr a;
    int prefix;
};

struct plx_tcp_iface_rules {
    int n;
    int ninclude;
    struct plx_tcp_iface_rule r[PLX_TCP_IFACE_MAX_RULES];
};

/* 0, or -1 with a message in err naming the bad term. */
int plx_tcp_iface_rules_parse(const char *spec, struct plx_tcp_iface_rules *rules, char *err, size_t errlen);
int plx_tcp_iface_selected(const struct plx_tcp_iface_rules *rules, const struct plx_tcp_ifaddr *a);
/* Addresses of the interfaces that are up (getifaddrs), at most max. */
int plx_tcp_iface_list(struct plx_tcp_ifaddr *out, int max);

/* Is a inside prefix/len of net? */
int plx_tcp_ip_in_cidr(const struct plx_tcp_ipaddr *a, const struct plx_tcp_ipaddr *net, int prefix);
int plx_tcp_ip_parse(const char *s, struct plx_tcp_ipaddr *a);
void plx_tcp_ip_format(const struct plx_tcp_ipaddr *a, char *buf, size_t len);
/* sockaddr for a:port; returns its length */
socklen_t plx_tcp_ip_sockaddr(const struct plx_tcp_ipaddr *a, int port, struct sockaddr_storage *ss);

struct plx_tcp_card {
    int port;
    char host[64];
    int nlo, naddr;
    struct plx_tcp_ipaddr lo[2];
    struct plx_tcp_ipaddr addr[PLX_TCP_CARD_MAX_ADDRS];
};

/* 0, or -1 when it does not fit in len. */
int plx_tcp_card_format(const struct plx_tcp_card *c, char *buf, size_t len);
/* 0, or -1 when malformed. */
int plx_tcp_card_parse(const char *s, struct plx_tcp_card *c);

#endif
