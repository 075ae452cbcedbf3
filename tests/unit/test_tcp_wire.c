/*
 * Unit test of the TCP handshake check (src/transport/tcp/tcp_wire.h): a
 * hello is accepted only with this job's secret, a known version, a rank in
 * range and this process as its destination; every other case gets its own
 * verdict (the transport closes the connection, or for a misdirected peer of
 * this job answers WRONG_PEER).
 */
#include <string.h>
#include "test_util.h"
#include "transport/tcp/tcp_wire.h"
#include "transport/transport.h"

int main(void)
{
    uint8_t secret[16];
    for (int i = 0; i < 16; i++)
        secret[i] = (uint8_t)(i * 37 + 11);
    T_CHECK(sizeof(struct plx_tcp_hello) == 40 && sizeof(struct plx_tcp_ack) == 16, "wire sizes");
    struct plx_tcp_hello h = { .magic = PLX_TCP_MAGIC, .version = PLX_TCP_VERSION,
                               .hdr_size = sizeof(struct plx_hdr), .src = 3, .dst = 1, .size = 8 };
    memcpy(h.secret, secret, 16);
    const unsigned hs = sizeof(struct plx_hdr);
    T_CHECK(plx_tcp_hello_check(&h, secret, 1, 8, hs) == PLX_TCP_HELLO_OK, "good hello");

    struct plx_tcp_hello b = h;
    b.secret[15] ^= 1;
    T_CHECK(plx_tcp_hello_check(&b, secret, 1, 8, hs) == PLX_TCP_HELLO_BAD_SECRET, "one bit of the secret");
    memset(b.secret, 0, 16);
    T_CHECK(plx_tcp_hello_check(&b, secret, 1, 8, hs) == PLX_TCP_HELLO_BAD_SECRET, "zero secret");

    b = h;
    b.magic = 0x20544547;       /* "GET " */
    T_CHECK(plx_tcp_hello_check(&b, secret, 1, 8, hs) == PLX_TCP_HELLO_BAD_MAGIC, "http garbage");
    b = h;
    b.version = PLX_TCP_VERSION + 1;
    T_CHECK(plx_tcp_hello_check(&b, secret, 1, 8, hs) == PLX_TCP_HELLO_BAD_MAGIC, "version");
    T_CHECK(plx_tcp_hello_check(&h, secret, 1, 8, hs + 8) == PLX_TCP_HELLO_BAD_MAGIC, "header size");

    b = h;
    b.src = 8;
    T_CHECK(plx_tcp_hello_check(&b, secret, 1, 8, hs) == PLX_TCP_HELLO_BAD_RANK, "src out of range");
    b.src = -1;
    T_CHECK(plx_tcp_hello_check(&b, secret, 1, 8, hs) == PLX_TCP_HELLO_BAD_RANK, "negative src");
    b.src = 1;
    T_CHECK(plx_tcp_hello_check(&b, secret, 1, 8, hs) == PLX_TCP_HELLO_BAD_RANK, "claims to be me");
    T_CHECK(plx_tcp_hello_check(&h, secret, 1, 4, hs) == PLX_TCP_HELLO_BAD_RANK, "another job size");

    T_CHECK(plx_tcp_hello_check(&h, secret, 2, 8, hs) == PLX_TCP_HELLO_WRONG_PEER, "meant for rank 1");

    /* a forged hello with a wrong secret is refused before its rank is looked at */
    b = h;
    b.secret[0] ^= 0x80;
    b.dst = 5;
    T_CHECK(plx_tcp_hello_check(&b, secret, 1, 8, hs) == PLX_TCP_HELLO_BAD_SECRET,
            "no information for a client without the secret");
    T_DONE("tcp_wire");
}
