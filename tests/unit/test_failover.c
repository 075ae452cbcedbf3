/*
 * Unit test of the router's sending side on a peer with several channels
 * (src/route/route.c): rank 0's pt2pt and router over the mock transport of
 * three channels to rank 1 (the test plays rank 1). A large message is
 * striped in pieces over the channels; its send completes only once rank 1
 * acknowledges the pieces, not when the channels took them; when one channel
 * fails, every packet it had not delivered is sent again, with the same link
 * sequence number, on the others; a channel that comes back carries pieces
 * again. The extra channels take part only once enough has been sent to the
 * peer (PLEXUS_ROUTE_EXTRA_BYTES).
 */
#include <stdlib.h>
#include <string.h>
#include "core/config.h"
#include "core/datatype.h"
#include "core/objects.h"
#include "core/request.h"
#include "core/runtime.h"
#include "pt2pt/match.h"
#include "pt2pt/pt2pt.h"
#include "route/route.h"
#include "test_util.h"
#include "mock_transport.h"

#define BIG (3 << 20)

static struct plx_comm comm;
static const int lpids[2] = { 0, 1 };
static uint32_t rank1_lseq = 1;

static void start_send(struct plx_request *r, void *buf, size_t n, int tag)
{
    plx_request_init_stack(r, PLX_REQ_SEND, &comm);
    r->rank = 1;
    r->tag = tag;
    r->ctx = 0;
    r->buf = buf;
    r->count = (MPI_Aint)n;
    r->dt = plx_dt_lookup(MPI_BYTE);
    plx_pt2pt_send_start(r);
}

/* The first captured packet of type t from index `from`, or -1. */
static int find(int from, int type)
{
    for (int s = from; s < nsent; s++)
        if (sent[s].h.type == type)
            return s;
    return -1;
}

/* Rank 1's CTS for r (on channel k), then the channels drain until r's data
 * is all out; counts the DATA pieces per channel into on[]. */
static void stream(struct plx_request *r, int k, int on[NCHAN])
{
    uint64_t rreq = 0x7777;
    struct plx_hdr cts = { .type = PLX_PKT_CTS, .len = 8, .sreq = (uint64_t)(uintptr_t)r, .lseq = rank1_lseq++ };
    int before = nsent;
    up->recv[PLX_PKT_CTS](&mock_ifc[k], 1, &cts, &rreq);
    for (int i = 0; i < 20 && r->rndv_done < (size_t)r->count; i++) {
        plx_route_poll();
        plx_pt2pt_flush();
    }
    plx_route_poll();
    for (int c = 0; c < NCHAN; c++)
        on[c] = 0;
    for (int s = before; s < nsent; s++)
        if (sent[s].h.type == PLX_PKT_DATA)
            on[sent[s].ifc]++;
}

/* Rank 1 acknowledges everything below `ack`, on channel k. */
static void ack(int k, uint32_t a)
{
    struct plx_hdr h = { .type = PLX_PKT_ACK, .sreq = a };
    up->recv[PLX_PKT_ACK](&mock_ifc[k], 1, &h, NULL);
}

int main(void)
{
    char err[256];
    setenv("PLEXUS_TRANSPORTS", "mock", 1);
    setenv("PLEXUS_ROUTE_EXTRA_BYTES", "5M", 1);
    T_CHECK(plx_config_load(err, sizeof err) == 0, "config: %s", err);
    static struct plx_proc procs[2] = { { .node_id = 0, .local_index = 0 }, { .node_id = 1, .local_index = -1 } };
    plx_procs.n = 2;
    plx_procs.my_lpid = 0;
    plx_procs.p = procs;
    plx_procs.nlocal = 1;
    plx_datatype_init_builtins();
    comm.rank = 0;
    comm.size = 2;
    comm.lpids = lpids;
    plx_match_init();
    plx_route_use_components(mock_list, 1);
    T_CHECK(plx_route_init_early(0) == PLX_OK && plx_route_init() == PLX_OK, "router opens the mock");
    T_CHECK(plx_pt2pt_init() == PLX_OK, "pt2pt init");

    /* an eager message: complete at once (its copy waits for the acknowledgement) */
    static char small[100];
    struct plx_request e;
    start_send(&e, small, sizeof small, 1);
    T_CHECK(e.cc == 0, "an eager send completes when the router has its copy");
    int se = find(0, PLX_PKT_EAGER);
    T_CHECK(se >= 0 && sent[se].h.lseq == 1, "eager packet sent with link sequence number 1");

    /* two large messages before PLEXUS_ROUTE_EXTRA_BYTES (5M) is reached:
     * one channel carries each whole */
    char *big = malloc(BIG);
    for (int i = 0; i < BIG; i++)
        big[i] = (char)(i * 13 + 5);
    struct plx_request w[2];    /* (alive until acknowledged: the router completes them then) */
    for (int m = 0; m < 2; m++) {
        int on1[NCHAN];
        start_send(&w[m], big, BIG, 10 + m);
        stream(&w[m], 0, on1);
        T_CHECK(on1[0] == BIG / (512 << 10) && !on1[1] && !on1[2],
                "message %d before the threshold: every piece on mock0 (%d, %d, %d)", m, on1[0], on1[1], on1[2]);
    }

    /* a large message: RTS, then rank 1's CTS, then pieces over the channels */
    struct plx_request r;
    start_send(&r, big, BIG, 2);
    int srts = find(0, PLX_PKT_RTS);
    T_CHECK(srts >= 0, "RTS sent");
    int before = nsent;
    uint64_t rreq = 0x7777;
    struct plx_hdr cts = { .type = PLX_PKT_CTS, .len = 8, .sreq = (uint64_t)(uintptr_t)&r, .lseq = rank1_lseq++ };
    up->recv[PLX_PKT_CTS](&mock_ifc[2], 1, &cts, &rreq);
    for (int i = 0; i < 20 && r.rndv_done < BIG; i++) {  /* the channels drain; pt2pt streams on */
        plx_route_poll();
        plx_pt2pt_flush();
    }
    plx_route_poll();           /* every write done */
    int pieces = 0, on[NCHAN] = { 0 };
    uint32_t max_lseq = 0;
    for (int s = before; s < nsent; s++)
        if (sent[s].h.type == PLX_PKT_DATA && sent[s].h.sreq == rreq) {
            pieces++;
            on[sent[s].ifc]++;
            if (sent[s].h.lseq > max_lseq)
                max_lseq = sent[s].h.lseq;
        }
    T_CHECK(r.rndv_done == BIG && pieces == BIG / (512 << 10), "%d pieces of 512K sent", pieces);
    T_CHECK(on[0] && on[1] && on[2], "striped over all three channels (%d, %d, %d)", on[0], on[1], on[2]);
    T_CHECK(r.cc != 0, "written but not acknowledged: the send is not complete");

    /* channel 1 fails: its pieces go again, same numbers, on channels 0 and 2 */
    int lost_lseq[64], nlost = 0;
    for (int s = before; s < nsent; s++)
        if (sent[s].h.type == PLX_PKT_DATA && sent[s].ifc == 1)
            lost_lseq[nlost++] = (int)sent[s].h.lseq;
    before = nsent;
    up->link_failed(&mock_ifc[1], 1, "mock1 cut by the test", 0);
    int again = 0;
    for (int s = before; s < nsent; s++) {
        if (sent[s].h.type != PLX_PKT_DATA)
            continue;
        T_CHECK(sent[s].ifc != 1, "nothing goes again on the failed channel");
        for (int k = 0; k < nlost; k++)
            again += (int)sent[s].h.lseq == lost_lseq[k];
    }
    T_CHECK(again == nlost && nlost > 0, "%d of the %d pieces of the failed channel went again", again, nlost);
    T_CHECK(r.cc != 0, "still not acknowledged");

    /* rank 1 acknowledges part, then everything */
    plx_route_poll();
    ack(0, sent[srts].h.lseq + 1);
    T_CHECK(r.cc != 0, "the RTS acknowledged, not the pieces: not complete");
    ack(2, max_lseq + 1);
    T_CHECK(r.cc == 0 && w[0].cc == 0 && w[1].cc == 0, "every piece acknowledged: the sends are complete");

    /* the failed channel comes back and carries pieces again */
    up->link_up(&mock_ifc[1], 1);
    struct plx_request r2;
    start_send(&r2, big, BIG, 3);
    struct plx_hdr cts2 = { .type = PLX_PKT_CTS, .len = 8, .sreq = (uint64_t)(uintptr_t)&r2, .lseq = rank1_lseq++ };
    before = nsent;
    up->recv[PLX_PKT_CTS](&mock_ifc[0], 1, &cts2, &rreq);
    for (int i = 0; i < 20 && r2.rndv_done < BIG; i++) {
        plx_route_poll();
        plx_pt2pt_flush();
    }
    int back = 0;
    for (int s = before; s < nsent; s++)
        back += sent[s].h.type == PLX_PKT_DATA && sent[s].ifc == 1;
    T_CHECK(back > 0, "the channel that came back carries pieces (%d)", back);
    free(big);
    T_DONE("failover");
}
