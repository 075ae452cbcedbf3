/*
 * Unit test of the remote-memory fallback (src/route/rma_am.c): put, get,
 * the three atomics and flush over a channel without native remote memory
 * (the mock transport). The test carries each captured request back in as
 * if rank 1 had sent it, so this process is also the target: the operation
 * runs on this process's registered memory and its answer is carried back
 * to the origin. Checked: the memory, the values returned, completion only
 * on the answer, flush waiting for what was issued before it, and a key or
 * range outside the region refused without touching memory.
 */
#include <stdlib.h>
#include <string.h>
#include "core/config.h"
#include "core/runtime.h"
#include "pt2pt/match.h"
#include "pt2pt/pt2pt.h"
#include "route/route.h"
#include "test_util.h"
#include "mock_transport.h"

static int done_count;
static plx_status_t done_status;

static void on_done(struct plx_tp_comp *c)
{
    done_count++;
    done_status = c->status;
}

static void comp_init(struct plx_tp_comp *c)
{
    c->cb = on_done;
    c->count = 0;
    c->status = PLX_OK;
}

/* Carries the captured packets of type t in [from, end) back in as rank 1's. */
static int carry_range(int from, int end, int type)
{
    int n = 0;
    for (int s = from; s < end; s++) {
        if (sent[s].h.type != type)
            continue;
        up->recv[type](&mock_ifc[sent[s].ifc], 1, &sent[s].h, sent[s].payload);
        n++;
    }
    return n;
}

static int carry(int from, int type)
{
    return carry_range(from, nsent, type);
}

/* One operation round trip: request to the "target", answer to the origin. */
static void round_trip(int from)
{
    int mid = nsent;
    carry(from, PLX_PKT_RMA);
    carry(mid, PLX_PKT_RMA_ANS);
}

int main(void)
{
    char err[256];
    setenv("PLEXUS_TRANSPORTS", "mock", 1);
    T_CHECK(plx_config_load(err, sizeof err) == 0, "config: %s", err);
    static struct plx_proc procs[2] = { { .node_id = 0, .local_index = 0 }, { .node_id = 1, .local_index = -1 } };
    plx_procs.n = 2;
    plx_procs.my_lpid = 0;
    plx_procs.p = procs;
    plx_procs.nlocal = 1;
    plx_match_init();
    plx_route_use_components(mock_list, 1);
    T_CHECK(plx_route_init_early(0) == PLX_OK && plx_route_init() == PLX_OK, "router opens the mock");
    T_CHECK(plx_pt2pt_init() == PLX_OK, "pt2pt init");
    struct plx_route_peer *rp = plx_route_peer(1);

    static uint64_t window[32], guard_before[4], other[4];
    struct plx_tp_mr mr, mr2;
    T_CHECK(plx_route_mem_register(window, sizeof window, &mr) == PLX_OK && mr.key, "register the window");
    T_CHECK(plx_route_mem_register(other, sizeof other, &mr2) == PLX_OK && mr2.key != mr.key, "a second region");
    uint64_t base = (uint64_t)(uintptr_t)window;

    /* put: complete only when the target has answered */
    struct plx_tp_comp c;
    comp_init(&c);
    uint64_t src[4] = { 11, 22, 33, 44 };
    int from = nsent;
    T_CHECK(plx_route_put(rp, src, sizeof src, base + 8, mr.key, &c) == PLX_OK, "put issued");
    T_CHECK(done_count == 0 && window[1] == 0, "not done before the target ran it");
    round_trip(from);
    T_CHECK(done_count == 1 && done_status == PLX_OK, "put complete after the answer");
    T_CHECK(window[1] == 11 && window[4] == 44 && window[0] == 0 && window[5] == 0, "put wrote words 1-4 only");

    /* get */
    uint64_t dst[3] = { 0 };
    comp_init(&c);
    from = nsent;
    plx_route_get(rp, dst, sizeof dst, base + 16, mr.key, &c);
    round_trip(from);
    T_CHECK(done_count == 2 && dst[0] == 22 && dst[1] == 33 && dst[2] == 44, "get read words 2-4");

    /* atomics: fetch-and-add, swap, compare-and-swap (hit and miss) */
    uint64_t old = 0;
    comp_init(&c);
    from = nsent;
    plx_route_atomic(rp, PLX_TP_AT_FADD, 5, 0, &old, base + 8, mr.key, &c);
    round_trip(from);
    T_CHECK(old == 11 && window[1] == 16, "fetch-and-add: old 11, now %llu", (unsigned long long)window[1]);
    comp_init(&c);
    from = nsent;
    plx_route_atomic(rp, PLX_TP_AT_SWAP, 99, 0, &old, base + 8, mr.key, &c);
    round_trip(from);
    T_CHECK(old == 16 && window[1] == 99, "swap");
    comp_init(&c);
    from = nsent;
    plx_route_atomic(rp, PLX_TP_AT_CSWAP, 7, 99, &old, base + 8, mr.key, &c);
    round_trip(from);
    T_CHECK(old == 99 && window[1] == 7, "compare-and-swap that matches");
    comp_init(&c);
    from = nsent;
    plx_route_atomic(rp, PLX_TP_AT_CSWAP, 1, 99, &old, base + 8, mr.key, &c);
    round_trip(from);
    T_CHECK(old == 7 && window[1] == 7, "compare-and-swap that does not match leaves the word");

    /* flush waits for what was issued before it, whatever order answers come in */
    struct plx_tp_comp a, b, f;
    comp_init(&a);
    comp_init(&b);
    comp_init(&f);
    int before = done_count;
    from = nsent;
    plx_route_put(rp, src, 8, base, mr.key, &a);
    int mid = nsent;
    plx_route_flush(rp, &f);
    plx_route_put(rp, src + 1, 8, base + 8, mr.key, &b);
    int ans_b = nsent;
    carry(mid, PLX_PKT_RMA);            /* the later put is answered first */
    carry(ans_b, PLX_PKT_RMA_ANS);
    T_CHECK(done_count == before + 1, "the later put completes; the flush still waits (%d)", done_count - before);
    int ans_a = nsent;
    carry_range(from, mid, PLX_PKT_RMA);
    carry(ans_a, PLX_PKT_RMA_ANS);
    T_CHECK(done_count == before + 3, "the earlier put answered: it and the flush complete");

    /* outside the region, a stale key: refused, nothing touched */
    comp_init(&c);
    from = nsent;
    plx_route_put(rp, src, sizeof src, base + sizeof window - 8, mr.key, &c);
    round_trip(from);
    T_CHECK(done_status == PLX_ERR_RANGE, "a put past the region's end is refused");
    T_CHECK(guard_before[0] == 0 && other[0] == 0, "nothing written around it");
    struct plx_tp_mr stale = mr2;
    plx_route_mem_deregister(&mr2);
    comp_init(&c);
    from = nsent;
    plx_route_put(rp, src, 8, (uint64_t)(uintptr_t)other, stale.key, &c);
    round_trip(from);
    T_CHECK(done_status == PLX_ERR_RANGE && other[0] == 0, "a deregistered region's key is refused");

    /* no room on the channel: operations wait in issue order and leave from
     * the poll; the caller never sees BUSY, and a flush waits for them */
    struct plx_tp_comp q1, q2, qf;
    comp_init(&q1);
    comp_init(&q2);
    comp_init(&qf);
    window[6] = 100;
    before = done_count;
    from = nsent;
    mock_room = 1;
    T_CHECK(plx_route_atomic(rp, PLX_TP_AT_FADD, 1, 0, &old, base + 48, mr.key, &q1) == PLX_OK, "first atomic issued");
    uint64_t second = 0;
    T_CHECK(plx_route_atomic(rp, PLX_TP_AT_FADD, 10, 0, &second, base + 48, mr.key, &q2) == PLX_OK,
            "an atomic with no room is accepted, not BUSY");
    T_CHECK(plx_route_put(rp, src, 16, base + 56, mr.key, &q2) == PLX_OK, "a put behind it is accepted");
    T_CHECK(plx_route_flush(rp, &qf) == PLX_OK, "flush issued");
    T_CHECK(nsent == from + 1, "only the first went out (%d)", nsent - from);
    T_CHECK(q2.count == 2, "both queued operations count on their completion (%d)", q2.count);
    mid = nsent;
    plx_route_rma_poll();               /* still no room: nothing moves */
    T_CHECK(nsent == mid, "nothing leaves while there is no room");
    mock_room = -1;
    round_trip(from);
    T_CHECK(done_count == before + 1 && old == 100, "the first is answered; the flush still waits");
    mid = nsent;
    T_CHECK(plx_route_rma_poll() == 2 && nsent == mid + 2, "the poll sends the two queued, once room is back");
    T_CHECK(sent[mid].h.type == PLX_PKT_RMA && sent[mid].h.flags == 3 && sent[mid + 1].h.flags == 1,
            "in issue order: the atomic, then the put");
    round_trip(mid);
    T_CHECK(second == 101 && window[6] == 111 && window[7] == 11 && window[8] == 22,
            "both ran once at the target (old %llu, word %llu)", (unsigned long long)second,
            (unsigned long long)window[6]);
    T_CHECK(done_count == before + 3, "the queued pair and the flush complete (%d)", done_count - before);
    T_DONE("rma_am");
}
