/*
 * Which of this host's addresses mpiexec advertises to its proxies.
 *
 * PLEXUS_IFACES is the one interface setting of Plexus (the TCP transport
 * reads the same variable with the same rules): a comma-separated list of
 * terms, each an interface name ("eth0") or a CIDR block ("10.1.0.0/16",
 * "fd00::/8"); a leading '^' excludes. An address is selected when
 *   - the list has include terms: it matches one of them and no exclude;
 *   - otherwise: its interface is up, it is not loopback, it matches no
 *     exclude.
 * IPv6 link-local addresses are never selected (a scope id means nothing on
 * another host). The proxy tries the advertised addresses in order and keeps
 * the first that connects and accepts its secret: reachability is tested,
 * not guessed.
 */
#ifndef PLX_IFACES_H
#define PLX_IFACES_H

#include <net/if.h>
#include <stddef.h>
#include <stdint.h>

#define PLX_IFACES_MAX_RULES 32

struct plx_ifaces_ip {
    int family;                 /* AF_INET or AF_INET6 */
    uint8_t b[16];              /* network order; IPv4 in the first 4 bytes */
};

struct plx_ifaces_rule {
    int exclude;
    int cidr;                   /* 1: ip/prefix, 0: interface name */
    char name[IFNAMSIZ];
    struct plx_ifaces_ip ip;
    int prefix;
};

struct plx_ifaces_rules {
    int n, ninclude;
    struct plx_ifaces_rule r[PLX_IFACES_MAX_RULES];
};

struct plx_ifaces_addr {
    char ifname[IFNAMSIZ];
    struct plx_ifaces_ip ip;
    int loopback;
};

/* 0, or -1 with a message in err naming the bad term. */
int plx_ifaces_parse(const char *spec, struct plx_ifaces_rules *rules, char *err, size_t errlen);

/* The selected addresses of this host, at most max: in the order of the
 * include terms when there are some, else non-loopback first.
 * When nothing is selected and the rules have no include terms, the
 * loopback addresses are returned (a job on this host only still works).
 * Returns the count, or -1 (getifaddrs failed). */
int plx_ifaces_select(const struct plx_ifaces_rules *rules, struct plx_ifaces_addr *out,
                      int max);

/* Every up address with its interface (for error messages). */
int plx_ifaces_all(struct plx_ifaces_addr *out, int max);

/* "10.0.0.1:port" or "[fd00::1]:port". */
void plx_ifaces_format(const struct plx_ifaces_ip *ip, int port, char *buf, size_t len);

#endif
