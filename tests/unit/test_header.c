/*
 * Unit test of the packet header (src/transport/transport.h): its size and
 * layout are a wire format shared by every transport, so they must not
 * drift; every field must round-trip its full range.
 */
#include <stddef.h>
#include <string.h>
#include "test_util.h"
#include "transport/transport.h"

int main(void)
{
    T_CHECK(sizeof(struct plx_hdr) == 32, "header is %zu bytes", sizeof(struct plx_hdr));
    T_CHECK(offsetof(struct plx_hdr, type) == 0 && offsetof(struct plx_hdr, flags) == 1 &&
            offsetof(struct plx_hdr, ctx) == 2 && offsetof(struct plx_hdr, src) == 4 &&
            offsetof(struct plx_hdr, tag) == 8 && offsetof(struct plx_hdr, seq) == 12 &&
            offsetof(struct plx_hdr, off) == 8 && offsetof(struct plx_hdr, len) == 16 &&
            offsetof(struct plx_hdr, lseq) == 20 && offsetof(struct plx_hdr, sreq) == 24,
            "field offsets");
    struct plx_hdr h = { .type = PLX_PKT_TYPE_MAX - 1, .flags = 0xff, .ctx = 4095, .src = -2,
                         .tag = 0x7fffffff, .seq = 0xffffffffu, .len = 0xfffffffdu, .sreq = ~0ull,
                         .lseq = 0xfffffffeu };
    unsigned char wire[32];
    memcpy(wire, &h, sizeof h);
    struct plx_hdr g;
    memcpy(&g, wire, sizeof g);
    T_CHECK(g.type == PLX_PKT_TYPE_MAX - 1 && g.flags == 0xff && g.ctx == 4095 && g.src == -2 &&
            g.tag == 0x7fffffff && g.seq == 0xffffffffu && g.len == 0xfffffffdu && g.sreq == ~0ull &&
            g.lseq == 0xfffffffeu,
            "round trip");
    struct plx_hdr d = { .type = PLX_PKT_DATA, .off = (1ull << 45) + 9 };
    memcpy(wire, &d, sizeof d);
    memcpy(&g, wire, sizeof g);
    T_CHECK(g.off == (1ull << 45) + 9, "a DATA offset round-trips its 64 bits");
    T_CHECK(sizeof(struct plx_rts) == 16, "RTS payload is %zu bytes", sizeof(struct plx_rts));
    T_CHECK(PLX_PKT_EAGER != 0 && PLX_PKT_TYPE_MAX < 0xff, "types 0 (empty ring slot) and 0xff (wrap) are reserved");
    T_DONE("header");
}
