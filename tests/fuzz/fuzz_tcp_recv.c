/*
 * fuzz_tcp_recv.c - libFuzzer target for the TCP transport's receive side:
 * the handshake check an acceptor applies to a stranger's first 40 bytes
 * (plx_tcp_hello_check, tcp_wire.h) and the packet parser of an open
 * connection (plx_tcp_rx_feed, tcp_recv.c), which takes whatever a
 * connected peer's stream holds.
 *
 * Input: the first 40 bytes are checked as a hello (when there are 40); the
 * rest is a stream fed to a fake open connection from rank 1 in chunks
 * whose sizes the input's bytes choose (a packet cut anywhere). Delivered
 * payloads are read whole (ASan sees a read past them); DATA goes to a
 * 64 KiB buffer at its offset only when it fits. A stream the parser calls
 * corrupt must fail the link and stop delivering; the parser must never
 * crash, leak or touch memory it was not given. Seeds:
 * tests/fuzz/corpus/tcp_recv (packet streams of the kinds a job sends).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "core/runtime.h"
#include "transport/tcp/tcp_impl.h"
#include "transport/tcp/tcp_wire.h"

#define DST_SIZE 65536

static unsigned char dst[DST_SIZE];
static volatile unsigned sink;
static struct plx_tcp_peer peer;
static struct plx_tcp_peer *rail_peers[2];
static struct plx_tcp_card card = { .port = 1, .host = "fuzzhost" };
static int delivered_after_failure;

static void fz_recv(struct plx_tp_iface *ifc, int lpid, const struct plx_hdr *h, const void *payload)
{
    if (peer.conn == NULL)
        delivered_after_failure = 1;
    const unsigned char *p = payload;
    for (uint32_t i = 0; i < h->len; i++)  /* every byte it says it has is readable */
        sink += p[i];
}

static void *fz_place(struct plx_tp_iface *ifc, int lpid, const struct plx_hdr *h, size_t *fit_p)
{
    if (h->off >= DST_SIZE) {
        *fit_p = 0;
        return NULL;
    }
    size_t room = DST_SIZE - (size_t)h->off;
    *fit_p = h->len < room ? h->len : room;
    return dst + h->off;
}

static void fz_placed(struct plx_tp_iface *ifc, int lpid, const struct plx_hdr *h) {}

static struct plx_tp_upcalls up = { .place = fz_place, .placed = fz_placed };

static struct plx_tcp_conn *fz_setup(void)
{
    static struct plx_proc procs[2];
    plx_procs.n = 2;
    plx_procs.my_lpid = 0;
    plx_procs.p = procs;
    procs[1].node_id = 1;
    memset(&plx_tcp, 0, sizeof plx_tcp);
    plx_tcp.lfd = plx_tcp.epfd = -1;
    for (int t = 0; t < PLX_PKT_TYPE_MAX; t++)
        up.recv[t] = fz_recv;
    plx_tcp.up = &up;
    plx_tcp.nrails = plx_tcp.nlo_rails = 1;
    plx_tcp.rails[0].peers = rail_peers;
    plx_list_init(&plx_tcp.failed);
    plx_list_init(&plx_tcp.zombies);
    plx_list_init(&plx_tcp.handshaking);
    plx_list_init(&plx_tcp.waiting);
    plx_list_init(&plx_tcp.wblocked);
    memset(&peer, 0, sizeof peer);
    peer.lpid = 1;
    peer.rail = &plx_tcp.rails[0];
    peer.state = PLX_TCP_P_OPEN;
    peer.card = &card;
    plx_list_init(&peer.sq);
    plx_list_init(&peer.wait_link);
    plx_list_init(&peer.fail_link);
    plx_list_init(&peer.wb_link);
    rail_peers[1] = &peer;
    struct plx_tcp_conn *c = calloc(1, sizeof *c);
    c->fd = -1;
    c->state = PLX_TCP_C_OPEN;
    c->lpid = 1;
    c->peer = &peer;
    c->rx = PLX_TCP_RX_HDR;
    plx_list_init(&c->link);
    peer.conn = c;
    delivered_after_failure = 0;
    return c;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const uint8_t secret[16] = "fuzz-job-secret";
    if (size >= sizeof(struct plx_tcp_hello)) {
        struct plx_tcp_hello h;
        memcpy(&h, data, sizeof h);
        int v = plx_tcp_hello_check(&h, secret, 0, 4, sizeof(struct plx_hdr));
        if (v == PLX_TCP_HELLO_OK && (memcmp(h.secret, secret, 16) || h.src < 0 || h.src >= 4 || h.dst != 0))
            abort();            /* a hello let in that is not this job's rank for rank 0 */
    }
    struct plx_tcp_conn *c = fz_setup();
    size_t at = 0;
    while (at < size && peer.conn == c) {
        size_t n = 1 + data[at] % 97;           /* a chunk of 1-97 bytes, as reads cut the stream */
        n = n < size - at ? n : size - at;
        plx_tcp_rx_feed(c, (const char *)data + at, n);
        at += n;
    }
    if (delivered_after_failure)
        abort();                /* a corrupt stream delivered a packet after failing the link */
    if (peer.conn == c && c->rx == PLX_TCP_RX_PAYLOAD && c->rbuf)
        free(c->rbuf);
    free(peer.fail_why);
    /* a failed link closed the connection: it waits on the zombie list */
    while (!plx_list_empty(&plx_tcp.zombies)) {
        struct plx_tcp_conn *z = plx_list_entry(plx_tcp.zombies.next, struct plx_tcp_conn, link);
        plx_list_remove(&z->link);
        free(z);
    }
    if (peer.conn == c)
        free(c);
    return 0;
}
