/*
 * Which addresses of a host Plexus uses: the TCP transport publishes them
 * and connects to them, mpiexec gives them to its proxies. One set of rules
 * for both (src/util/ is compiled into the library and the tools).
 *
 * PLEXUS_IFACES is a comma-separated list of terms, each an interface name
 * ("eth0") or a CIDR block ("10.1.0.0/16", "fd00::/8"); a leading '^'
 * excludes. An address is selected when
 *   - the list has include terms: it matches one of them and no exclude;
 *   - otherwise (empty, or excludes only): its interface is up, it is not a
 *     loopback address, and it matches no exclude.
 * IPv6 link-local addresses (fe80::/10) are never selected: they need a
 * scope id that means nothing on another host.
 */
#ifndef PLX_UTIL_IFACE_H
#define PLX_UTIL_IFACE_H

#include <net/if.h>
#include <netinet/in.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#define PLX_IFACE_MAX_RULES 32

struct plx_iface_ip {
    int family;                 /* AF_INET or AF_INET6 */
    uint8_t b[16];              /* network byte order; IPv4 in the first 4 */
};

struct plx_iface_addr {
    char ifname[IFNAMSIZ];
    struct plx_iface_ip a;
    int prefix;                 /* netmask length */
    int loopback;               /* IFF_LOOPBACK or 127/8, ::1 */
};

struct plx_iface_rule {
    int exclude;
    int cidr;                   /* 1: addr/prefix; 0: interface name */
    char name[IFNAMSIZ];
    struct plx_iface_ip a;
    int prefix;
};

struct plx_iface_rules {
    int n;
    int ninclude;
    struct plx_iface_rule r[PLX_IFACE_MAX_RULES];
};

/* 0, or -1 with a message in err naming the bad term. */
int plx_iface_rules_parse(const char *spec, struct plx_iface_rules *rules, char *err, size_t errlen);
int plx_iface_selected(const struct plx_iface_rules *rules, const struct plx_iface_addr *a);
/* Addresses of the interfaces that are up (getifaddrs), at most max. */
int plx_iface_list(struct plx_iface_addr *out, int max);

/* Is a inside prefix/len of net? */
int plx_iface_ip_in_cidr(const struct plx_iface_ip *a, const struct plx_iface_ip *net, int prefix);
int plx_iface_ip_parse(const char *s, struct plx_iface_ip *a);
void plx_iface_ip_format(const struct plx_iface_ip *a, char *buf, size_t len);
/* sockaddr for a:port; returns its length */
socklen_t plx_iface_ip_sockaddr(const struct plx_iface_ip *a, int port, struct sockaddr_storage *ss);

/* The selected addresses of this host, at most max, for a launcher: in the
 * order of the include terms when there are some; otherwise every selected
 * one, and when none is (only loopback is up), the loopback addresses no
 * exclude names, so that a job on this host alone still works. */
int plx_iface_select(const struct plx_iface_rules *rules, struct plx_iface_addr *out, int max);
/* "10.0.0.1:port", "[fd00::1]:port" (an IPv4-mapped address as IPv4). */
void plx_iface_sockaddr_str(const struct sockaddr_storage *ss, char *buf, size_t len);

#endif
