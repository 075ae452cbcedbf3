/*
 * Unit test of TCP interface selection and business cards
 * (src/transport/tcp/iface.c): PLEXUS_IFACES parsing (names, IPv4/IPv6 CIDR,
 * exclusions, errors), which addresses the default and explicit rules
 * select, and the card's round trip.
 */
#include <arpa/inet.h>
#include <string.h>
#include "test_util.h"
#include "transport/tcp/iface.h"

static struct plx_tcp_ifaddr mk(const char *ifname, const char *ip, int prefix, int loopback)
{
    struct plx_tcp_ifaddr a;
    memset(&a, 0, sizeof a);
    snprintf(a.ifname, sizeof a.ifname, "%s", ifname);
    plx_tcp_ip_parse(ip, &a.a);
    a.prefix = prefix;
    a.loopback = loopback;
    return a;
}

static int sel(const char *spec, struct plx_tcp_ifaddr a)
{
    struct plx_tcp_iface_rules r;
    char err[200];
    if (plx_tcp_iface_rules_parse(spec, &r, err, sizeof err) != 0)
        return -1;
    return plx_tcp_iface_selected(&r, &a);
}

int main(void)
{
    struct plx_tcp_ifaddr lo4 = mk("lo", "127.0.0.1", 8, 1), lo6 = mk("lo", "::1", 128, 1);
    struct plx_tcp_ifaddr eth = mk("eth0", "192.0.2.2", 24, 0), eth6 = mk("eth0", "fd00::2", 64, 0);
    struct plx_tcp_ifaddr ll6 = mk("eth0", "fe80::fc:ff:fe00:1", 64, 0);
    struct plx_tcp_ifaddr dock = mk("docker0", "172.17.0.1", 16, 0), ib = mk("ib0", "10.1.2.3", 16, 0);

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

    /* card round trip */
    struct plx_tcp_card c, d;
    memset(&c, 0, sizeof c);
    c.port = 40123;
    snprintf(c.host, sizeof c.host, "node-7.example");
    plx_tcp_ip_parse("127.0.0.1", &c.lo[c.nlo++]);
    plx_tcp_ip_parse("::1", &c.lo[c.nlo++]);
    plx_tcp_ip_parse("10.1.2.3", &c.addr[c.naddr++]);
    plx_tcp_ip_parse("fd00::2", &c.addr[c.naddr++]);
    char buf[1024];
    T_CHECK(plx_tcp_card_format(&c, buf, sizeof buf) == 0, "format");
    T_CHECK(strcmp(buf, "40123|node-7.example|127.0.0.1,::1|10.1.2.3,fd00::2") == 0, "card text %s", buf);
    T_CHECK(strpbrk(buf, " \t\n") == NULL, "no whitespace on the PMI wire");
    T_CHECK(plx_tcp_card_parse(buf, &d) == 0, "parse");
    T_CHECK(d.port == 40123 && !strcmp(d.host, "node-7.example") && d.nlo == 2 && d.naddr == 2, "fields");
    T_CHECK(!memcmp(&d.addr[1], &c.addr[1], sizeof d.addr[1]) && d.addr[1].family == AF_INET6, "IPv6 addr");
    T_CHECK(plx_tcp_card_parse("5|h||", &d) == 0 && d.nlo == 0 && d.naddr == 0, "no addresses");
    T_CHECK(plx_tcp_card_parse("5|h|", &d) == -1 && plx_tcp_card_parse("0|h||", &d) == -1 &&
            plx_tcp_card_parse("5|h||1.2.3.400", &d) == -1 && plx_tcp_card_parse("none|x", &d) == -1,
            "malformed cards");
    T_CHECK(plx_tcp_card_format(&c, buf, 20) == -1, "too small a buffer");

    /* subnet test used to order connection attempts */
    struct plx_tcp_ipaddr a, net;
    plx_tcp_ip_parse("10.1.200.9", &a);
    plx_tcp_ip_parse("10.1.0.0", &net);
    T_CHECK(plx_tcp_ip_in_cidr(&a, &net, 16) && !plx_tcp_ip_in_cidr(&a, &net, 17), "in cidr");

    /* sockaddr */
    struct sockaddr_storage ss;
    T_CHECK(plx_tcp_ip_sockaddr(&c.addr[1], 7, &ss) == sizeof(struct sockaddr_in6) &&
            ((struct sockaddr_in6 *)&ss)->sin6_port == htons(7), "sockaddr6");
    T_DONE("tcp_iface");
}
