/*
 * Unit test of interface selection (src/util/iface.c), shared by the TCP
 * transport and mpiexec: PLEXUS_IFACES parsing (names, IPv4/IPv6 CIDR,
 * exclusions, errors), which addresses the default and explicit rules
 * select, subnets, socket addresses and how they are printed.
 */
#include <arpa/inet.h>
#include <string.h>
#include "test_util.h"
#include "util/iface.h"

static struct plx_iface_addr mk(const char *ifname, const char *ip, int prefix, int loopback)
{
    struct plx_iface_addr a;
    memset(&a, 0, sizeof a);
    snprintf(a.ifname, sizeof a.ifname, "%s", ifname);
    plx_iface_ip_parse(ip, &a.a);
    a.prefix = prefix;
    a.loopback = loopback;
    return a;
}

static int sel(const char *spec, struct plx_iface_addr a)
{
    struct plx_iface_rules r;
    char err[200];
    if (plx_iface_rules_parse(spec, &r, err, sizeof err) != 0)
        return -1;
    return plx_iface_selected(&r, &a);
}

int main(void)
{
    struct plx_iface_addr lo4 = mk("lo", "127.0.0.1", 8, 1), lo6 = mk("lo", "::1", 128, 1);
    struct plx_iface_addr eth = mk("eth0", "192.0.2.2", 24, 0), eth6 = mk("eth0", "fd00::2", 64, 0);
    struct plx_iface_addr ll6 = mk("eth0", "fe80::fc:ff:fe00:1", 64, 0);
    struct plx_iface_addr dock = mk("docker0", "172.17.0.1", 16, 0), ib = mk("ib0", "10.1.2.3", 16, 0);

    /* default: every non-loopback address, never IPv6 link-local */
    T_CHECK(sel("", eth) == 1 && sel("", eth6) == 1 && sel("", dock) == 1 && sel("", ib) == 1, "default");
    T_CHECK(sel("", lo4) == 0 && sel("", lo6) == 0, "default excludes loopback");
    T_CHECK(sel("", ll6) == 0 && sel("eth0", ll6) == 0 && sel("fe80::/10", ll6) == 0, "link-local never");

    /* exclusions only: default set minus them */
    T_CHECK(sel("^docker0", dock) == 0 && sel("^docker0", eth) == 1 && sel("^docker0", lo4) == 0, "^name");
    T_CHECK(sel("^172.16.0.0/12", dock) == 0 && sel("^172.16.0.0/12", ib) == 1, "^cidr");
    T_CHECK(sel("^fd00::/8", eth6) == 0 && sel("^fd00::/8", eth) == 1, "^cidr6");

    /* includes: only them (loopback too when named) */
    T_CHECK(sel("ib0", ib) == 1 && sel("ib0", eth) == 0 && sel("ib0", dock) == 0, "name");
    T_CHECK(sel("10.0.0.0/8", ib) == 1 && sel("10.0.0.0/8", eth) == 0, "cidr4");
    T_CHECK(sel("10.1.2.3/32", ib) == 1 && sel("10.1.2.4/32", ib) == 0, "host /32");
    T_CHECK(sel("192.0.2.0/23", eth) == 1 && sel("192.0.3.0/24", eth) == 0, "odd prefix");
    T_CHECK(sel("fd00::/8", eth6) == 1 && sel("fd00::/8", eth) == 0, "cidr6 does not match IPv4");
    T_CHECK(sel("lo", lo4) == 1 && sel("lo", lo6) == 1 && sel("127.0.0.0/8", lo4) == 1, "explicit loopback");
    T_CHECK(sel("eth0,^fd00::/8", eth) == 1 && sel("eth0,^fd00::/8", eth6) == 0, "include then exclude");
    T_CHECK(sel(" eth0 , ib0 ", ib) == 1 && sel("eth0,,ib0", eth) == 1, "spaces and empty terms");
    T_CHECK(sel("0.0.0.0/0", ib) == 1 && sel("::/0", eth6) == 1 && sel("::/0", eth) == 0, "/0");

    /* malformed */
    T_CHECK(sel("10.0.0.0/33", ib) == -1 && sel("10.0.0.0/x", ib) == -1 && sel("1.2.3/8", ib) == -1,
            "bad cidr");
    T_CHECK(sel("fd00::/129", eth6) == -1 && sel("averyveryverylongifname0", eth) == -1 && sel("^", eth) == -1,
            "bad terms");

    /* subnet test used to order connection attempts */
    struct plx_iface_ip a, net;
    plx_iface_ip_parse("10.1.200.9", &a);
    plx_iface_ip_parse("10.1.0.0", &net);
    T_CHECK(plx_iface_ip_in_cidr(&a, &net, 16) && !plx_iface_ip_in_cidr(&a, &net, 17), "in cidr");

    /* sockaddr */
    struct plx_iface_ip ip6;
    plx_iface_ip_parse("fd00::2", &ip6);
    struct sockaddr_storage ss;
    T_CHECK(plx_iface_ip_sockaddr(&ip6, 7, &ss) == sizeof(struct sockaddr_in6) &&
            ((struct sockaddr_in6 *)&ss)->sin6_port == htons(7), "sockaddr6");
    /* the sockaddr round trip and how addresses are printed */
    struct sockaddr_storage s4;
    struct plx_iface_ip ip4;
    char buf[80];
    plx_iface_ip_parse("10.1.2.3", &ip4);
    T_CHECK(plx_iface_ip_sockaddr(&ip4, 80, &s4) == sizeof(struct sockaddr_in), "sockaddr4");
    plx_iface_sockaddr_str(&s4, buf, sizeof buf);
    T_CHECK(!strcmp(buf, "10.1.2.3:80"), "sockaddr_str4: %s", buf);
    plx_iface_ip_sockaddr(&ip6, 7, &s4);
    plx_iface_sockaddr_str(&s4, buf, sizeof buf);
    T_CHECK(!strcmp(buf, "[fd00::2]:7"), "sockaddr_str6: %s", buf);
    struct sockaddr_in6 mapped = { .sin6_family = AF_INET6, .sin6_port = htons(9) };
    inet_pton(AF_INET6, "::ffff:192.0.2.1", &mapped.sin6_addr);
    memcpy(&s4, &mapped, sizeof mapped);
    plx_iface_sockaddr_str(&s4, buf, sizeof buf);
    T_CHECK(!strcmp(buf, "192.0.2.1:9"), "v4-mapped printed as IPv4: %s", buf);
    plx_iface_ip_format(&ip6, buf, sizeof buf);
    T_CHECK(!strcmp(buf, "fd00::2"), "format: %s", buf);
    T_DONE("iface");
}
