/*
 * Unit test of the TCP receive parser (src/transport/tcp/tcp_recv.c): bytes
 * of a stream are fed to plx_tcp_rx_feed for a fake open connection (no
 * socket) whose upcalls record what is delivered. Whole packets, several in
 * one read, the same stream cut at every byte boundary and fed a byte at a
 * time; a DATA payload placed through place/placed at the offset the layer
 * above names; a truncated receive (the rest discarded, the stream still in
 * step); and corrupt headers (unknown type, oversize length), which fail the
 * link instead of delivering anything.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/runtime.h"
#include "test_util.h"
#include "transport/tcp/tcp_impl.h"

#define MAXREC 64
#define DST_SIZE 4096

/* What the upcalls saw, in order. */
struct rec {
    int kind;                   /* 'r' recv, 'p' placed */
    struct plx_hdr h;
    size_t plen;
    unsigned char payload[512];
};

static struct rec recs[MAXREC];
static int nrecs, nplace;
static unsigned char dst[DST_SIZE];
static size_t place_fit = (size_t)-1;   /* (size_t)-1: all of it fits */
static int bad_ifc;

static struct plx_tcp_peer peer;
static struct plx_tcp_conn *conn;
static struct plx_tcp_peer *rail_peers[2];
static struct plx_tcp_card card = { .port = 1, .host = "otherhost" };

/* A new record of what reached the upcalls (NULL when full); checks that
 * it came for the channel set up. */
static struct rec *record(struct plx_tp_iface *ifc, int lpid, int kind, const struct plx_hdr *h)
{
    bad_ifc |= ifc != &plx_tcp.rails[0].ifc || lpid != 1;
    if (nrecs == MAXREC)
        return NULL;
    struct rec *r = &recs[nrecs++];
    r->kind = kind;
    r->h = *h;
    r->plen = 0;
    return r;
}

static void on_recv(struct plx_tp_iface *ifc, int lpid, const struct plx_hdr *h, const void *payload)
{
    struct rec *r = record(ifc, lpid, 'r', h);
    if (!r)
        return;
    r->plen = h->len;
    if (h->len && h->len <= sizeof r->payload)
        memcpy(r->payload, payload, h->len);
}

/* DATA goes to dst at its offset; place_fit bytes of it at most. */
static void *on_place(struct plx_tp_iface *ifc, int lpid, const struct plx_hdr *h, size_t *fit_p)
{
    bad_ifc |= ifc != &plx_tcp.rails[0].ifc || lpid != 1;
    nplace++;
    *fit_p = h->len < place_fit ? h->len : place_fit;
    return dst + h->off;
}

static void on_placed(struct plx_tp_iface *ifc, int lpid, const struct plx_hdr *h)
{
    record(ifc, lpid, 'p', h);
}

static struct plx_tp_upcalls up = { .place = on_place, .placed = on_placed };

/* A fresh open connection to rank 1 on rail 0, and empty records. */
static void setup(void)
{
    static struct plx_proc procs[2];
    plx_procs.n = 2;
    plx_procs.my_lpid = 0;
    plx_procs.p = procs;
    plx_procs.nlocal = 1;
    procs[1].node_id = 1;
    memset(&plx_tcp, 0, sizeof plx_tcp);
    plx_tcp.lfd = plx_tcp.epfd = -1;
    snprintf(plx_tcp.host, sizeof plx_tcp.host, "thishost");
    for (int t = 0; t < PLX_PKT_TYPE_MAX; t++)
        up.recv[t] = on_recv;
    plx_tcp.up = &up;
    plx_tcp.nrails = plx_tcp.nlo_rails = 1;
    plx_tcp.rails[0].peers = rail_peers;
    snprintf(plx_tcp.rails[0].ifc.name, sizeof plx_tcp.rails[0].ifc.name, "tcp0");
    plx_list_init(&plx_tcp.failed);
    plx_list_init(&plx_tcp.zombies);
    plx_list_init(&plx_tcp.handshaking);
    plx_list_init(&plx_tcp.waiting);
    plx_list_init(&plx_tcp.wblocked);

    free(peer.fail_why);
    memset(&peer, 0, sizeof peer);
    peer.lpid = 1;
    peer.rail = &plx_tcp.rails[0];
    peer.state = PLX_TCP_P_OPEN;
    peer.card = &card;          /* messages name its host without asking PMI */
    plx_list_init(&peer.sq);
    plx_list_init(&peer.wait_link);
    plx_list_init(&peer.fail_link);
    plx_list_init(&peer.wb_link);
    rail_peers[1] = &peer;

    free(conn);                 /* (a failed link left it on the zombie list: freed here) */
    conn = calloc(1, sizeof *conn);
    conn->fd = -1;
    conn->state = PLX_TCP_C_OPEN;
    conn->lpid = 1;
    conn->peer = &peer;
    conn->rx = PLX_TCP_RX_HDR;
    plx_list_init(&conn->link);
    peer.conn = conn;

    nrecs = nplace = bad_ifc = 0;
    place_fit = (size_t)-1;
    memset(dst, 0xee, sizeof dst);
}

/* Appends one packet (header + payload bytes i * mul + add) to s. */
static size_t put(unsigned char *s, size_t at, int type, uint64_t len, uint64_t off, int tag, int add)
{
    struct plx_hdr h = { .type = (uint8_t)type, .len = len, .sreq = 0x1234 + at };
    if (type == PLX_PKT_DATA)
        h.off = off;
    else
        h.tag = tag;
    memcpy(s + at, &h, sizeof h);
    for (uint64_t i = 0; i < len; i++)
        s[at + sizeof h + i] = (unsigned char)(i * 7 + (uint64_t)add);
    return at + sizeof h + len;
}

static int payload_ok(const unsigned char *p, size_t len, int add)
{
    for (size_t i = 0; i < len; i++)
        if (p[i] != (unsigned char)(i * 7 + (size_t)add))
            return 0;
    return 1;
}

/* The stream used for whole, cut and byte-wise feeding: an eager message,
 * a control packet without payload, a DATA piece placed at offset 100, a
 * control packet with a payload, an empty DATA piece, an eager message
 * again (its payload starts unaligned, behind 3 bytes of DATA). */
static size_t mixed(unsigned char *s)
{
    size_t n = 0;
    n = put(s, n, PLX_PKT_EAGER, 200, 0, 5, 1);
    n = put(s, n, PLX_PKT_CREDIT, 0, 0, 0, 0);
    n = put(s, n, PLX_PKT_DATA, 300, 100, 0, 2);
    n = put(s, n, PLX_PKT_CTS, 8, 0, 0, 3);
    n = put(s, n, PLX_PKT_DATA, 0, 0, 0, 0);
    n = put(s, n, PLX_PKT_DATA, 3, 1000, 0, 4);
    n = put(s, n, PLX_PKT_EAGER, 17, 0, 6, 5);
    return n;
}

/* Did the mixed stream arrive, each packet once, in order, bytes intact? */
static int mixed_ok(const char *how)
{
    int ok = 1;
#define EXPECT(cond)                                                              \
    do {                                                                          \
        if (!(cond)) {                                                            \
            fprintf(stderr, "  %s: %s\n", how, #cond);                            \
            ok = 0;                                                               \
        }                                                                         \
    } while (0)
    EXPECT(nrecs == 7 && !bad_ifc && nplace == 3);
    if (nrecs != 7)
        return 0;
    EXPECT(recs[0].kind == 'r' && recs[0].h.type == PLX_PKT_EAGER && recs[0].plen == 200 && recs[0].h.tag == 5 &&
           payload_ok(recs[0].payload, 200, 1));
    EXPECT(recs[1].kind == 'r' && recs[1].h.type == PLX_PKT_CREDIT && recs[1].plen == 0);
    EXPECT(recs[2].kind == 'p' && recs[2].h.type == PLX_PKT_DATA && recs[2].h.len == 300 && recs[2].h.off == 100);
    EXPECT(payload_ok(dst + 100, 300, 2) && dst[99] == 0xee && dst[400] == 0xee);
    EXPECT(recs[3].kind == 'r' && recs[3].h.type == PLX_PKT_CTS && recs[3].plen == 8 && payload_ok(recs[3].payload, 8, 3));
    EXPECT(recs[4].kind == 'p' && recs[4].h.len == 0);
    EXPECT(recs[5].kind == 'p' && recs[5].h.len == 3 && payload_ok(dst + 1000, 3, 4) && dst[1003] == 0xee);
    EXPECT(recs[6].kind == 'r' && recs[6].h.type == PLX_PKT_EAGER && recs[6].plen == 17 && recs[6].h.tag == 6 &&
           payload_ok(recs[6].payload, 17, 5));
    EXPECT(conn->rx == PLX_TCP_RX_HDR && conn->rhdr_got == 0 && plx_list_empty(&plx_tcp.failed));
#undef EXPECT
    return ok;
}

int main(void)
{
    static unsigned char s[8192];
    size_t n = mixed(s);

    /* whole packets, all in one read */
    setup();
    plx_tcp_rx_feed(conn, (const char *)s, n);
    T_CHECK(mixed_ok("one read"), "the stream fed in one read");

    /* cut in two at every byte boundary */
    int bad_cuts = 0;
    for (size_t cut = 1; cut < n; cut++) {
        setup();
        plx_tcp_rx_feed(conn, (const char *)s, cut);
        plx_tcp_rx_feed(conn, (const char *)s + cut, n - cut);
        if (!mixed_ok("cut")) {
            if (bad_cuts++ < 3)
                fprintf(stderr, "  (cut at byte %zu of %zu)\n", cut, n);
        }
    }
    T_CHECK(bad_cuts == 0, "%d of %zu cuts delivered wrongly", bad_cuts, n - 1);

    /* a byte at a time */
    setup();
    for (size_t i = 0; i < n; i++)
        plx_tcp_rx_feed(conn, (const char *)s + i, 1);
    T_CHECK(mixed_ok("byte-wise"), "the stream fed a byte at a time");

    /* a truncated receive: 40 of 300 DATA bytes fit, the rest is discarded,
     * placed() comes once, and the packet behind it is read in step */
    for (size_t cut = 0; cut < 2; cut++) {
        setup();
        place_fit = 40;
        size_t m = put(s, 0, PLX_PKT_DATA, 300, 8, 0, 9);
        m = put(s, m, PLX_PKT_EAGER, 33, 0, 77, 10);
        size_t at = cut ? sizeof(struct plx_hdr) + 100 : m;     /* cut inside the discarded part */
        plx_tcp_rx_feed(conn, (const char *)s, at);
        plx_tcp_rx_feed(conn, (const char *)s + at, m - at);
        T_CHECK(nrecs == 2 && recs[0].kind == 'p' && recs[0].h.len == 300 && recs[1].kind == 'r' &&
                    recs[1].h.tag == 77 && recs[1].plen == 33 && payload_ok(recs[1].payload, 33, 10),
                "truncated DATA then eager (%s): %d records", cut ? "cut" : "one read", nrecs);
        T_CHECK(payload_ok(dst + 8, 40, 9) && dst[7] == 0xee && dst[48] == 0xee,
                "only the 40 bytes that fit were placed, at offset 8");
    }

    /* nothing fits (the place upcall gives NULL, 0): all discarded */
    setup();
    place_fit = 0;
    size_t m = put(s, 0, PLX_PKT_DATA, 50, 0, 0, 1);
    m = put(s, m, PLX_PKT_CREDIT, 0, 0, 0, 0);
    plx_tcp_rx_feed(conn, (const char *)s, m);
    T_CHECK(nrecs == 2 && recs[0].kind == 'p' && recs[1].h.type == PLX_PKT_CREDIT && dst[0] == 0xee,
            "DATA with no room discarded whole");

    /* BYE is the transport's own: it marks the peer, nothing goes up */
    setup();
    m = put(s, 0, PLX_TCP_PKT_BYE, 0, 0, 0, 0);
    plx_tcp_rx_feed(conn, (const char *)s, m);
    T_CHECK(nrecs == 0 && peer.bye == 1, "BYE");

    /* corrupt headers: an unknown type (whole in the read, and cut), an
     * oversize length; the link fails, naming it, and nothing is delivered */
    struct {
        int type;
        uint64_t len;
        size_t cut;
        const char *what;
    } bad[] = {
        { 0x77, 0, 0, "packet type 119" },
        { 0x77, 0, 10, "packet type 119" },
        { PLX_PKT_EAGER, (1ull << 30) + 1, 0, "length 1073741825" },
        { PLX_PKT_TYPE_MAX, 4, 5, "packet type" },
    };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        setup();
        m = put(s, 0, PLX_PKT_CREDIT, 0, 0, 0, 0);
        struct plx_hdr h = { .type = (uint8_t)bad[k].type, .len = bad[k].len };
        memcpy(s + m, &h, sizeof h);
        m += sizeof h;
        memset(s + m, 0, 64);
        m += 64;                /* bytes behind it that must not be parsed */
        size_t at = bad[k].cut ? sizeof h + bad[k].cut : m;
        plx_tcp_rx_feed(conn, (const char *)s, at);
        plx_tcp_rx_feed(conn, (const char *)s + at, m - at);
        T_CHECK(nrecs == 1 && recs[0].h.type == PLX_PKT_CREDIT, "corrupt %zu: only the packet before it (%d)", k,
                nrecs);
        T_CHECK(!plx_list_empty(&plx_tcp.failed) && peer.conn == NULL && peer.state == PLX_TCP_P_IDLE &&
                    peer.fail_why && strstr(peer.fail_why, "corrupt") && strstr(peer.fail_why, bad[k].what) &&
                    strstr(peer.fail_why, "rank 1 (host otherhost)") && !peer.fail_ended,
                "corrupt %zu: a link failure naming it: %s", k, peer.fail_why ? peer.fail_why : "(none)");
        T_CHECK(conn->state == PLX_TCP_C_DEAD, "corrupt %zu: the connection is closed", k);
    }

    setup();
    free(conn);
    free(peer.fail_why);
    T_DONE("tcp_recv");
}
