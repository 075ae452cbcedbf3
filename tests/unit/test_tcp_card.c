/*
 * Unit test of the TCP business card (src/transport/tcp/tcp_card.c): its
 * round trip and what a malformed card or a small buffer gives.
 */
#include <stdio.h>
#include <sys/socket.h>
#include <string.h>
#include "test_util.h"
#include "transport/tcp/tcp_card.h"

int main(void)
{
    /* card round trip */
    struct plx_tcp_card c, d;
    memset(&c, 0, sizeof c);
    c.port = 40123;
    snprintf(c.host, sizeof c.host, "node-7.example");
    plx_iface_ip_parse("127.0.0.1", &c.lo[c.nlo++]);
    plx_iface_ip_parse("::1", &c.lo[c.nlo++]);
    plx_iface_ip_parse("10.1.2.3", &c.addr[c.naddr++]);
    plx_iface_ip_parse("fd00::2", &c.addr[c.naddr++]);
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

    T_DONE("tcp_card");
}
