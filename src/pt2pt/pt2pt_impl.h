/*
 * Point-to-point, private: the per-peer state shared by pt2pt.c (protocols,
 * incoming packets) and fail.c (lost peers). Nothing outside src/pt2pt
 * includes it.
 */
#ifndef PLX_PT2PT_IMPL_H
#define PLX_PT2PT_IMPL_H

#include "core/objects.h"
#include "core/plexus.h"
#include "core/request.h"
#include "pt2pt/pt2pt.h"
#include "route/route.h"

#define PLX_EAGER_OVERHEAD 64   /* credit charged per eager message besides its bytes */

enum plx_sendq_kind { PLX_SQ_MSG = 1, PLX_SQ_STREAM, PLX_SQ_CTL };

struct plx_ctl {
    struct plx_sendq_item sq;
    struct plx_hdr hdr;
    uint64_t payload[3];
};

/* A matched packet that arrived before its turn (hdr.seq ahead of recv_seq):
 * a channel delivered out of order (several rails, a resend after a
 * failover). Kept, in seq order, until the ones before it have arrived. */
struct plx_early {
    struct plx_list link;
    struct plx_tp_iface *ifc;
    struct plx_hdr h;
    char payload[];
};

struct plx_peer {
    int lpid;
    /* the router's fast peer (one channel, no acknowledgements): its
     * transport's send, called straight (NULL: through the router) */
    plx_status_t (*fast_send)(struct plx_tp_iface *ifc, int lpid, const struct plx_hdr *hdr,
                              const struct iovec *iov, int iovcnt);
    struct plx_tp_iface *fast;
    struct plx_route_peer *rp; /* its channels (NULL fields when nothing reaches it) */
    size_t eager_max;
    size_t max_payload;         /* of one packet on its control channel */
    uint32_t send_seq, recv_seq;
    struct plx_list early;      /* struct plx_early, by seq */
    size_t credit_limit;        /* the transport's eager credit per peer */
    size_t credits;             /* eager bytes we may still send to this peer */
    size_t owed;                /* eager bytes of theirs we consumed, not yet returned */
    struct plx_list sendq;
    struct plx_list busy_link;  /* on plx_p2p.busy while sendq is not empty */
    char *failed;               /* lost for good: the transport's account of it (else NULL) */
    int fail_seq;               /* then: the how-manieth failure it was (1, 2, ...) */
    /* PLEXUS_STATS: matched messages each way */
    uint64_t st_sent, st_sent_bytes, st_sent_rndv;
    uint64_t st_recv, st_recv_bytes;
};

struct plx_p2p_state {
    struct plx_peer **peers;    /* by world rank, allocated on first use */
    int npeers;
    int nfailed;                /* peers with `failed` set: only then is it looked at */
    struct plx_list busy;
    size_t credit_limit;
};
extern struct plx_p2p_state plx_p2p;

/* fail.c: a member of c lost after what c acknowledged, else NULL; r
 * completes with MPIX_ERR_PROC_FAILED and p's account of its loss. */
struct plx_peer *plx_pt2pt_comm_unacked_failure(struct plx_comm *c);
void plx_pt2pt_req_fail(struct plx_request *r, struct plx_peer *p);
/* The source rank c's packets carry, and the world rank of a source rank
 * a receive on c names (see plx_comm.wire_ranks). */
static inline int plx_pt2pt_wire_src(const struct plx_comm *c)
{
    return plx_unlikely(c->wire_ranks != NULL) ? c->wire_ranks[c->rank] : c->rank;
}

static inline int plx_pt2pt_src_lpid(const struct plx_comm *c, int src)
{
    if (plx_unlikely(c->wire_ranks != NULL))
        for (int i = 0; i < c->size; i++)
            if (c->wire_ranks[i] == src)
                return c->lpids[i];
    return c->lpids[src];
}
void plx_pt2pt_send_fail(struct plx_request *r, struct plx_peer *p, plx_status_t st);
void plx_pt2pt_send_set_error(struct plx_request *r, plx_status_t st);

struct plx_peer *plx_pt2pt_peer_create(int lpid);

static inline struct plx_peer *plx_pt2pt_peer_get(int lpid)
{
    struct plx_peer *p = plx_p2p.peers[lpid];
    return plx_likely(p) ? p : plx_pt2pt_peer_create(lpid);
}


#endif
