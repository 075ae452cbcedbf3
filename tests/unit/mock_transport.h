/*
 * A mock transport for the unit tests of pt2pt and the router: one
 * component with NCHAN instances ("mock0".."mockN-1") that reach rank 1
 * (instance 0 also reaches rank 0 itself). Every packet sent is captured in
 * sent[]; zero-copy sends complete at the next mock_poll (as a transport
 * reports from its poll); backlog() is what a channel was given since the
 * last mock_poll, so striping alternates between channels.
 */
#ifndef PLX_TEST_MOCK_TRANSPORT_H
#define PLX_TEST_MOCK_TRANSPORT_H

#include <stdio.h>
#include <string.h>
#include "route/route.h"
#include "transport/transport.h"

#ifndef NCHAN
#define NCHAN 3
#endif

struct sent { int ifc; struct plx_hdr h; uint64_t payload[64]; };
static struct sent sent[8192];
static int nsent;
static const struct plx_tp_upcalls *up;
static struct plx_tp_iface mock_ifc[NCHAN];
static struct plx_tp_comp *mock_pending[1024];
static int nmock_pending;
static size_t mock_given[NCHAN];
static int mock_room = -1;              /* packets the channels take before BUSY; -1: no limit */

static int mock_reaches(struct plx_tp_iface *ifc, int lpid) { return lpid == 1 || (lpid == 0 && ifc == &mock_ifc[0]); }

static plx_status_t mock_send(struct plx_tp_iface *ifc, int lpid, const struct plx_hdr *h, const struct iovec *iov,
                              int n)
{
    if (mock_room == 0)
        return PLX_BUSY;
    if (mock_room > 0)
        mock_room--;
    struct sent *s = &sent[nsent++ % 8192];
    s->ifc = (int)(ifc - mock_ifc);
    s->h = *h;
    size_t off = 0;
    for (int i = 0; i < n && off < sizeof s->payload; i++) {
        size_t m = PLX_MIN(iov[i].iov_len, sizeof s->payload - off);
        memcpy((char *)s->payload + off, iov[i].iov_base, m);
        off += m;
    }
    mock_given[s->ifc] += h->len;
    return PLX_OK;
}

static plx_status_t mock_send_zcopy(struct plx_tp_iface *ifc, int lpid, const struct plx_hdr *h,
                                    const struct iovec *iov, int n, struct plx_tp_comp *comp)
{
    plx_status_t st = mock_send(ifc, lpid, h, iov, n);
    if (st == PLX_OK)
        mock_pending[nmock_pending++] = comp;
    return st;
}

static size_t mock_backlog(struct plx_tp_iface *ifc, int lpid) { return mock_given[ifc - mock_ifc]; }

static const struct plx_tp_ops mock_ops = { .reaches = mock_reaches, .send = mock_send,
                                            .send_zcopy = mock_send_zcopy, .backlog = mock_backlog };
static const struct plx_tp_component mock_comp;

static plx_status_t mock_open(const struct plx_tp_upcalls *u, int needed, struct plx_tp_iface **ifcs, int max, int *n)
{
    up = u;
    for (int k = 0; k < NCHAN; k++) {
        struct plx_tp_iface *ifc = &mock_ifc[k];
        ifc->ops = &mock_ops;
        ifc->comp = &mock_comp;
        ifc->rail = k;
        snprintf(ifc->name, sizeof ifc->name, "mock%d", k);
        ifc->caps = (struct plx_tp_caps){ .max_packet = 1 << 20, .max_iov = 4, .eager_max = 1024,
                                          .eager_credit = 1 << 20, .flags = PLX_TP_RELIABLE | PLX_TP_ZCOPY,
                                          .latency_class = 1 };
        ifcs[k] = ifc;
    }
    *n = NCHAN;
    return PLX_OK;
}

/* Zero-copy writes complete; channels have room again. */
static int mock_poll(void)
{
    int n = nmock_pending;
    nmock_pending = 0;
    for (int i = 0; i < n; i++)
        plx_tp_comp_done(mock_pending[i], PLX_OK);
    memset(mock_given, 0, sizeof mock_given);
    return n;
}

static void mock_finalize(void) {}
static int mock_query(char *msg, size_t len) { snprintf(msg, len, "mock"); return 1; }

static const struct plx_tp_component mock_comp = { .name = "mock", .query = mock_query, .open = mock_open,
                                                   .poll = mock_poll, .finalize = mock_finalize };
static const struct plx_tp_component *const mock_list[] = { &mock_comp };

#endif
