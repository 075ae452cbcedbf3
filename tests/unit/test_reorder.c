/*
 * Unit test of delivery in any order (src/pt2pt/pt2pt.c over src/route/):
 * the real point-to-point layer and router of rank 0 over a mock transport
 * of three channels (instances) to rank 1. The test plays rank 1: it forges
 * rank 1's packets (eager and rendezvous messages on several tags, a
 * cancel), delivers them over random channels, out of order within a window
 * and some twice, and checks message by message that matching sees them in
 * the order rank 1 sent them: posted receives by tag and by wildcards,
 * probes, unexpected messages, rendezvous data pieces, cancel.
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

#define NCHAN 3
#define NMSG 60
#define RTS_SIZE 3000
#define EAGER_SIZE 16

#include "mock_transport.h"

/* --- rank 1's side ---------------------------------------------------------------- */

static uint32_t next_lseq = 1;

/* Delivers h (+payload) over channel k, as the transport would. */
static void deliver(int k, const struct plx_hdr *h, const void *payload)
{
    up->recv[h->type](&mock_ifc[k], 1, h, payload);
}

struct msg { struct plx_hdr h; uint64_t data[EAGER_SIZE / 8]; struct plx_rts rts; };
static struct msg msgs[NMSG + 4];

static void fill_pattern(char *buf, size_t n, int i)
{
    for (size_t k = 0; k < n; k++)
        buf[k] = (char)(i * 31 + (int)k * 7 + 1);
}

static void make_msg(int i, uint32_t seq, int tag, int rts)
{
    struct msg *m = &msgs[i];
    memset(m, 0, sizeof *m);
    m->h.type = rts ? PLX_PKT_RTS : PLX_PKT_EAGER;
    m->h.ctx = 0;
    m->h.src = 1;
    m->h.tag = tag;
    m->h.seq = seq;
    m->h.sreq = 1000 + (uint64_t)i;
    m->h.lseq = next_lseq++;
    if (rts) {
        m->h.len = sizeof m->rts;
        m->rts.size = RTS_SIZE;
    } else {
        m->h.len = EAGER_SIZE;
        fill_pattern((char *)m->data, EAGER_SIZE, i);
    }
}

static void deliver_msg(int i, int k)
{
    struct msg *m = &msgs[i];
    deliver(k, &m->h, m->h.type == PLX_PKT_RTS ? (const void *)&m->rts : (const void *)m->data);
}

/* Answers every CTS pt2pt sent and not answered yet with the message's
 * data: two pieces, the second first, over different channels, the first
 * twice. */
static char answered[8192];

static void answer_cts(void)
{
    for (int s = 0; s < nsent; s++) {
        if (sent[s].h.type != PLX_PKT_CTS || answered[s])
            continue;
        answered[s] = 1;
        int i = (int)(sent[s].h.sreq - 1000);
        uint64_t rreq = sent[s].payload[0];
        static char buf[RTS_SIZE];
        fill_pattern(buf, RTS_SIZE, i);
        size_t half = RTS_SIZE / 2;
        struct plx_hdr a = { .type = PLX_PKT_DATA, .off = 0, .len = half, .sreq = rreq, .lseq = next_lseq++ };
        struct plx_hdr b = { .type = PLX_PKT_DATA, .off = half, .len = RTS_SIZE - half, .sreq = rreq,
                             .lseq = next_lseq++ };
        deliver(2, &b, buf + half);
        deliver(0, &a, buf);
        deliver(1, &a, buf);    /* a duplicate: dropped by link sequence number */
    }
}

/* --- rank 0's receives ---------------------------------------------------------------- */

static struct plx_comm comm;
static const int lpids[2] = { 0, 1 };
static char rbuf[NMSG + 4][RTS_SIZE];
static struct plx_request reqs[NMSG + 4];

static struct plx_request *post(int slot, int src, int tag)
{
    struct plx_request *r = &reqs[slot];
    plx_request_init_stack(r, PLX_REQ_RECV, &comm);
    r->rank = src;
    r->tag = tag;
    r->ctx = 0;
    r->buf = rbuf[slot];
    r->count = RTS_SIZE;
    r->dt = plx_dt_lookup(MPI_BYTE);
    plx_pt2pt_recv_start(r);
    return r;
}

/* Which message a completed receive got (-1: none or wrong data). */
static int got(struct plx_request *r)
{
    if (r->cc != 0)
        return -1;
    for (int i = 0; i < NMSG + 4; i++) {
        size_t n = msgs[i].h.type == PLX_PKT_RTS ? RTS_SIZE : EAGER_SIZE;
        if (r->st_tag != msgs[i].h.tag || r->st_bytes != n)
            continue;
        char want[RTS_SIZE];
        fill_pattern(want, n, i);
        if (!memcmp(r->buf, want, n))
            return i;
    }
    return -1;
}

int main(void)
{
    char err[256];
    setenv("PLEXUS_TRANSPORTS", "mock", 1);
    T_CHECK(plx_config_load(err, sizeof err) == 0, "config: %s", err);
    static struct plx_proc procs[2];
    procs[0].node_id = 0;
    procs[1].node_id = 1;
    procs[0].local_index = 0;
    procs[1].local_index = -1;
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
    T_CHECK(plx_route_peer(1)->nchan == NCHAN && plx_route_peer(1)->rel, "rank 1: %d channels, acknowledged",
            plx_route_peer(1)->nchan);

    /* rank 1 sends NMSG messages on tags 5, 6, 7, every fourth by rendezvous */
    for (int i = 0; i < NMSG; i++)
        make_msg(i, (uint32_t)i, 5 + i % 3, i % 4 == 3);

    /* a probe sees nothing while the first message is missing */
    deliver_msg(1, 1);
    int found = 1;
    plx_pt2pt_iprobe(&comm, 0, 1, MPI_ANY_TAG, &found, MPI_STATUS_IGNORE);
    T_CHECK(!found, "message 1 arrived before 0: a probe must not see it");
    deliver_msg(0, 2);
    MPI_Status st;
    plx_pt2pt_iprobe(&comm, 0, 1, MPI_ANY_TAG, &found, &st);
    T_CHECK(found && st.MPI_TAG == msgs[0].h.tag, "then the probe sees message 0 (tag %d)", st.MPI_TAG);

    /* receives posted before the rest arrives: 5 for tag 6, 5 wildcards */
    for (int k = 0; k < 5; k++)
        post(k, 1, 6);
    for (int k = 5; k < 10; k++)
        post(k, MPI_ANY_SOURCE, MPI_ANY_TAG);

    /* the rest: in blocks of 6 delivered backwards, on random channels,
     * every fifth twice (same link sequence number) */
    srand(7);
    for (int b = 2; b < NMSG; b += 6) {
        int e = PLX_MIN(b + 6, NMSG);
        for (int i = e - 1; i >= b; i--) {
            deliver_msg(i, rand() % NCHAN);
            if (i % 5 == 0)
                deliver_msg(i, rand() % NCHAN);
        }
        answer_cts();
    }
    answer_cts();

    /* expected, by MPI's rules: messages 0 and 1 had arrived (unexpected)
     * when the receives were posted, each post takes the earliest match;
     * the later messages, in send order, meet the posted receives in
     * posting order; the rest stay unexpected, in order */
    int expect[10], used[NMSG] = { 0 }, pending[10], npending = 0;
    for (int k = 0; k < 10; k++) {
        expect[k] = -1;
        for (int i = 0; i < 2 && expect[k] < 0; i++)
            if (!used[i] && (k >= 5 || msgs[i].h.tag == 6)) {
                expect[k] = i;
                used[i] = 1;
            }
        if (expect[k] < 0)
            pending[npending++] = k;
    }
    for (int i = 2; i < NMSG; i++)
        for (int j = 0; j < npending; j++) {
            int k = pending[j];
            if (expect[k] < 0 && (k >= 5 || msgs[i].h.tag == 6)) {
                expect[k] = i;
                used[i] = 1;
                break;
            }
        }
    for (int k = 0; k < 10; k++)
        T_CHECK(got(&reqs[k]) == expect[k], "posted receive %d got message %d, expected %d", k, got(&reqs[k]),
                expect[k]);

    /* the unexpected ones, by tag then by wildcard, in send order */
    int slot = 10;
    for (int tag = 7; tag >= 5; tag -= 2) {
        for (int i = 0; i < NMSG; i++) {
            if (used[i] || msgs[i].h.tag != tag)
                continue;
            struct plx_request *r = post(slot++, 1, tag);
            answer_cts();
            T_CHECK(got(r) == i, "receive for tag %d got %d, expected %d", tag, got(r), i);
            used[i] = 1;
        }
    }
    for (int i = 0; i < NMSG && slot < NMSG; i++) {
        if (used[i])
            continue;
        struct plx_request *r = post(slot++, MPI_ANY_SOURCE, MPI_ANY_TAG);
        answer_cts();
        T_CHECK(got(r) == i, "wildcard receive got %d, expected %d", got(r), i);
        used[i] = 1;
    }

    /* cancel, delivered before the message it cancels: sequenced, so the
     * message is matched first, then withdrawn */
    make_msg(NMSG, NMSG, 9, 0);
    struct plx_hdr cancel = { .type = PLX_PKT_CANCEL_REQ, .ctx = 0, .seq = NMSG + 1, .len = 4,
                              .sreq = msgs[NMSG].h.sreq, .lseq = next_lseq++ };
    int32_t src1 = 1;
    make_msg(NMSG + 1, NMSG + 2, 9, 0);
    int before = nsent;
    deliver(2, &cancel, &src1);
    deliver_msg(NMSG + 1, 1);
    deliver_msg(NMSG, 0);
    int ans = 0;
    for (int s = before; s < nsent; s++)
        if (sent[s].h.type == PLX_PKT_CANCEL_ANS && sent[s].h.sreq == msgs[NMSG].h.sreq)
            ans = (sent[s].h.flags & PLX_PKT_F_CANCELLED) ? 1 : -1;
    T_CHECK(ans == 1, "the cancel found its message and withdrew it (answer %d)", ans);
    struct plx_request *r = post(NMSG + 2, 1, 9);
    T_CHECK(got(r) == NMSG + 1, "the next receive on tag 9 gets the message after the cancelled one (%d)", got(r));

    /* acknowledgements went back to rank 1 and cover everything it sent */
    uint32_t acked = 0;
    for (int s = 0; s < nsent; s++)
        if (sent[s].h.type == PLX_PKT_ACK && sent[s].h.sreq > acked)
            acked = (uint32_t)sent[s].h.sreq;
    plx_route_poll();
    for (int s = 0; s < nsent; s++)
        if (sent[s].h.type == PLX_PKT_ACK && sent[s].h.sreq > acked)
            acked = (uint32_t)sent[s].h.sreq;
    T_CHECK(acked == next_lseq, "rank 0 acknowledged every link sequence number (%u of %u)", acked, next_lseq - 1);
    T_DONE("reorder");
}
