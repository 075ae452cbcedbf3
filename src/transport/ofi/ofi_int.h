/*
 * The libfabric transport's shared state and helpers, for its files:
 * ofi.c (provider, endpoint, messages, rendezvous, remote memory) and
 * fastpath.c (the RDMA fast path for small messages). Not for other layers:
 * they know the transport only through ofi.h and the channel interface.
 *
 * Thread rules: as every transport, under the library lock.
 */
#ifndef PLX_OFI_INT_H
#define PLX_OFI_INT_H

#include <stdint.h>
#include <sys/uio.h>
/* libfabric's six real functions go through pointers (ofi.c, plx_ofi_dl_open) */
#define fi_getinfo plx_fi_getinfo
#define fi_freeinfo plx_fi_freeinfo
#define fi_dupinfo plx_fi_dupinfo
#define fi_fabric plx_fi_fabric
#define fi_strerror plx_fi_strerror
#define fi_version plx_fi_version
#include <rdma/fabric.h>
#include <rdma/fi_atomic.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>
#include "core/plexus.h"
#include "transport/transport.h"
#include "util/util.h"
#define PLX_OFI_API FI_VERSION(1, 9)
#define PLX_OFI_NRX 64                  /* receive buffers posted */
#define PLX_OFI_NTX 256                 /* bounce buffers for sends larger than inject */
#define PLX_OFI_CQ_BATCH 16
#define PLX_OFI_MRC_MAX 64              /* idle cached registrations */
#define PLX_OFI_BYE_TIMEOUT 10.0        /* seconds finalize waits for the peers' BYE */
#define PLX_OFI_PAGE 4096
#define PLX_OFI_PKT_MIN (32 * 1024)     /* payload every packet buffer holds, whatever the eager limit */

/* The prefix of every message. */
struct plx_ofi_pfx {
    int32_t lpid;               /* the sender's world rank */
    uint32_t magic;
    uint32_t seq;               /* the packet's number among all sent to that peer, by either path */
    uint32_t ack;               /* packets the sender has taken from the receiver's fast-path ring */
};
#define PLX_OFI_MAGIC 0x504c4f46u    /* "PLOF" */

/* A rendezvous piece the receiver reads. */
struct plx_ofi_desc {
    uint64_t addr;              /* virtual address, or offset into the region (no FI_MR_VIRT_ADDR) */
    uint64_t key;
    uint64_t len;
    uint64_t cookie;            /* the sender's struct plx_ofi_op */
};

enum { PLX_OFI_OP_RX = 1, PLX_OFI_OP_TX, PLX_OFI_OP_READ, PLX_OFI_OP_ZC, PLX_OFI_OP_RMA, PLX_OFI_OP_FPW };

struct plx_ofi_mrc;

/* An operation's context: libfabric's space first. */
struct plx_ofi_op {
    struct fi_context2 fc;
    int kind;
    int lpid;
    struct plx_list link;       /* free list, or a pending list */
    char *buf;                  /* RX/TX: its bounce buffer */
    struct plx_ofi_mrc *mrc;    /* READ: the destination's registration; ZC: the source's */
    struct plx_tp_comp *comp;   /* ZC, RMA */
    struct plx_hdr h;           /* READ: the DATA header placed() reports */
    struct plx_ofi_desc d;      /* READ: what to read */
    void *dst;                  /* READ: where */
    size_t fit;                 /* READ: bytes to read */
    uint64_t *result;           /* RMA atomic: where the old value goes */
    uint64_t abuf[3];           /* RMA atomic: operand, compare, old value */
    void *scratch;              /* element-wise atomic (session 9): old values nobody asked for, freed with the op */
};

/* A cached registration of [lo, hi). */
struct plx_ofi_mrc {
    struct plx_list link;       /* most recently used first */
    uintptr_t lo, hi;
    struct fid_mr *mr;
    void *desc;
    uint64_t key;
    int refs;
};

/* An answer or BYE waiting for room. */
struct plx_ofi_ctl {
    struct plx_list link;
    int lpid;
    struct plx_hdr h;
    uint64_t pl[4];             /* a region query's answer */
    int npl;
};

/* Offset addressing (providers without FI_MR_VIRT_ADDR: tcp;ofi_rxm,
 * sockets). The router passes a target's virtual address and key; the
 * provider wants an offset into the region. The first operation on a key
 * asks the target (RMA|F_TRANSPORT, sreq = key) for the region's base,
 * length and provider key (RMA_ANS|F_TRANSPORT, payload: found, provider
 * key, base, length); the origin keeps them per peer, so every later
 * operation on that region is native, and checks its range itself (an
 * access outside the region completes with PLX_ERR_RANGE, never reaching
 * the provider). Operations wait, in issue order, until their key is known. */
struct plx_ofi_rreg {
    uint64_t key, pkey, base, len;
    int state;                  /* 0 asked, 1 known, -1 no such region there */
};
enum { PLX_OFI_R_PUT = 1, PLX_OFI_R_GET, PLX_OFI_R_ATOMIC, PLX_OFI_R_ACC };
struct plx_ofi_rpend {
    struct plx_list link;
    int kind, aop;
    void *local;
    size_t len;
    uint64_t raddr, rkey, operand, compare;
    uint64_t *result;
    struct plx_tp_comp *comp;
    struct plx_tp_acc acc;      /* PLX_OFI_R_ACC (session 9): an element-wise atomic */
};
/* A region registered here, for the queries. */
struct plx_ofi_lreg {
    uint64_t key, pkey;
    uint64_t base, len;
};

struct plx_ofi_flush {
    struct plx_list link;
    struct plx_tp_comp *comp;
};

/* A packet to this process itself (delivered from the poll). */
struct plx_ofi_self {
    struct plx_list link;
    struct plx_hdr h;
    const void *zc;             /* zero copy: the sender's bytes */
    struct plx_tp_comp *comp;
    char payload[];
};

struct plx_ofi_peer {
    int8_t state;               /* 0 card not read, 1 reached, -1 not reached */
    uint8_t in_av, sent, heard, bye_in;
    int rma_out;                /* native remote-memory operations not yet complete */
    uint64_t st_rma_ops, st_rma_bytes;  /* PLEXUS_STATS: native operations issued to it, bytes moved */
    struct plx_list flushes;    /* struct plx_ofi_flush waiting for rma_out to reach 0 */
    struct plx_ofi_rreg *rr;    /* offset addressing: its regions learned so far */
    int nrr, caprr;
    struct plx_list rpend;      /* offset addressing: operations waiting for their region's base */
    uint64_t st_queries;        /* PLEXUS_STATS: regions asked of it */
    uint64_t st_acc_ops, st_acc_elems;  /* PLEXUS_STATS: element-wise atomics issued to it (session 9) */
    fi_addr_t addr;
    /* ordering over both paths (fastpath.c): every packet to a peer is
     * numbered, by send/recv or by its ring; the receiver delivers them in
     * that order, keeping send/recv packets that overtook ring ones */
    uint32_t tx_seq;            /* the number of the next packet to it */
    uint32_t rx_expect;         /* the number of the next packet of it to deliver */
    struct plx_list rx_early;   /* struct plx_ofi_early: its send/recv packets waiting for ring ones */
    uint32_t small_in;          /* small packets of it received by send/recv */
    uint32_t evict_at;          /* small_in when it last tried to take a quiet peer's ring (session 9) */
    uint32_t ack_sent;          /* ring packets of it taken, as last told it */
    uint32_t ring_taken;        /* packets of it taken from its ring here */
    struct plx_ofi_fp_in *fin;  /* the ring it writes into here, or NULL */
    struct plx_ofi_fp_out *fout;/* the ring here writes into it, or NULL */
    char *abuf;                 /* its raw address, until inserted */
    size_t alen;
};

struct plx_ofi_state {
    int wanted, early_ok, open;
    char why[256];              /* why it could not open */
    char prov[64];              /* provider name as libfabric spells it */
    struct fi_info *info;
    struct fid_fabric *fabric;
    struct fid_domain *domain;
    struct fid_av *av;
    struct fid_cq *cq;
    struct fid_ep *ep;
    int cq_fd;                  /* the CQ's wait fd, or -1 */
    int busy_fd;                /* always readable: a wait keeps polling */
    uint64_t mr_mode;
    int rma, atomic, tagged;
    int rma_native;             /* PLX_TP_RMA: our keys (not the provider's) */
    int rma_offset;             /* ... addressed by offset into the region: bases asked of the target */
    struct plx_ofi_lreg *lreg;  /* offset addressing: regions registered here */
    int nlreg, caplreg;
    int nrpend;                 /* operations waiting for a base, all peers */
    size_t inject_max;          /* bytes fi_inject takes (prefix included) */
    size_t pkt_max;             /* prefix + header + payload of one message */
    size_t eager_max, credit;
    int mrc_on;
    uint64_t next_key;
    struct plx_tp_iface ifc;
    const struct plx_tp_upcalls *up;
    struct plx_ofi_peer *peers;
    char *rxbufs, *txbufs;
    struct fid_mr *rx_mr, *tx_mr;
    struct plx_ofi_op rx_ops[PLX_OFI_NRX];
    struct plx_ofi_op *tx_ops;
    struct plx_list tx_free;
    int tx_busy;                /* bounce buffers in flight */
    struct plx_list op_free;    /* READ/ZC/RMA contexts */
    struct plx_list reads;      /* READs that got EAGAIN */
    struct plx_list ctlq;       /* answers waiting for room */
    struct plx_list selfq;
    struct plx_list rma_now;    /* flushes with nothing to wait for: completed by the poll */
    struct plx_list mrc;        /* cached registrations */
    int nmrc_idle;
    uint64_t nread_bytes, nreads;
    /* the fast path (fastpath.c) */
    int fp_cap;                 /* PLEXUS_OFI_FASTPATH_PEERS, 0 when the provider cannot carry it */
    int *fp_in_lpids;           /* peers with a ring here, in the order made */
    int fp_nin;
    int fp_revoking;            /* a ring here is being revoked (at most one at a time) */
    uint64_t fp_revoked;        /* PLEXUS_STATS: rings revoked here */
    struct plx_list fp_retired; /* rings here wrote into, revoked, kept until finalize (their writes) */
    int fp_wbusy;               /* ring writes whose completion has not come */
};

extern struct plx_ofi_state plx_ofi;

/* --- ofi.c, for fastpath.c --------------------------------------------------------------- */

int plx_ofi_mr_reg(void *addr, size_t len, uint64_t access, uint64_t key, struct fid_mr **mr);
uint64_t plx_ofi_key_next(void);
int plx_ofi_addr(int lpid, fi_addr_t *out);
void plx_ofi_ctl_pl(int lpid, uint8_t type, uint64_t cookie, const uint64_t *pl, int npl);
void plx_ofi_deliver(int lpid, const struct plx_hdr *h, const void *payload);

/* --- fastpath.c: the RDMA fast path for small messages ------------------------------------ */

/* At open: whether this provider can carry it, and the cap. */
void plx_ofi_fp_open(void);
/* A packet to lpid by its ring if it has one with room: PLX_OK (sent,
 * numbered), PLX_BUSY (provider full: nothing taken), or PLX_ERR_UNSUPPORTED
 * (no ring, too large or ring full: the caller sends it by send/recv). */
plx_status_t plx_ofi_fp_send(int lpid, const struct plx_ofi_pfx *pfx, const struct plx_hdr *h,
                             const struct iovec *iov, int iovcnt, size_t plen);
/* A packet of lpid that came by send/recv: delivered now or kept in order. */
void plx_ofi_fp_rx(int lpid, const struct plx_ofi_pfx *pfx, const struct plx_hdr *h, size_t plen);
/* The receiver's side of every ring and of kept packets; the work done. */
int plx_ofi_fp_poll(void);
/* Packets kept for order, all peers (a wait must keep polling). */
int plx_ofi_fp_pending(void);
/* A ring write completed (or failed). */
void plx_ofi_fp_write_done(struct plx_ofi_op *op, int ok);
/* Transport-private packets of the fast path: an offer, a credit. */
void plx_ofi_fp_ctl(int lpid, const struct plx_hdr *h, const void *payload);
/* PLEXUS_STATS lines, then every ring closed (before the domain). */
void plx_ofi_fp_finalize(void);

#endif
