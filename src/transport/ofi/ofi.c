/*
 * libfabric transport: one component, one instance ("ofi") over one
 * provider/domain, one FI_EP_RDM endpoint.
 *
 * Choosing the provider. fi_getinfo with an RDM endpoint and FI_MSG (plus
 * FI_RMA for zero-copy rendezvous and native remote memory, plus FI_ATOMIC
 * when offered), the provider named by PLEXUS_OFI_PROVIDER (else libfabric's
 * own FI_PROVIDER filter applies), in the order libfabric lists them; the
 * first whose fabric, domain, address vector, completion queue and
 * endpoint all open is used. What fi_getinfo answers is honoured:
 *   - mr_mode: FI_MR_LOCAL (bounce buffers and read destinations are
 *     registered and their descriptors passed), FI_MR_VIRT_ADDR (remote
 *     addresses are virtual addresses; without it, offsets into the
 *     region), FI_MR_PROV_KEY (the provider's key, else ours), FI_MR_ENDPOINT
 *     (regions bound to the endpoint and enabled), FI_MR_ALLOCATED (only
 *     allocated memory is registered: true of every buffer we register);
 *     FI_MR_RAW or keys longer than 8 bytes leave remote memory out;
 *   - FI_CONTEXT / FI_CONTEXT2: every operation's context starts with a
 *     struct fi_context2 we own until it completes;
 *   - inject size: packets that fit go by fi_inject (no completion);
 *   - tagged or not: matching is ours (sequence numbers in the header), so
 *     only FI_MSG is used; FI_TAGGED is reported, not needed.
 *
 * Addresses. Before the card fence each rank publishes "ofi-<rank>" =
 * "<provider>|<hex of fi_getname>" (';' of a layered provider's name as
 * '+': PMI values cannot hold ';'), or "none|<why>". A peer is reached when
 * its card names the same provider (and, for the shm provider, it is on
 * this node); its address goes into the address vector on first send.
 *
 * Wire. Every message is a 16-byte prefix (the sender's world rank: an RDM
 * receive does not say who sent it; the packet's number, by which the
 * receiver restores each sender's order; the fast path's credit), the
 * struct plx_hdr and the payload. Small packets to a busy peer go into a
 * ring of its memory by fi_write instead (fastpath.c). Packets flagged
 * PLX_PKT_F_TRANSPORT are this transport's own:
 *   - DATA|F_TRANSPORT: a rendezvous piece to read, payload struct
 *     plx_ofi_desc (address, key, length, the sender's cookie); the
 *     receiver asks place() where it goes, reads it there with fi_read
 *     (zero copy), calls placed() and answers ACK|F_TRANSPORT with the
 *     cookie, which completes the sender's piece;
 *   - BYE|F_TRANSPORT (type PLX_PKT_PING): finalize (see below);
 *   - CTS|F_TRANSPORT: a fast-path ring offered, CREDIT|F_TRANSPORT: an
 *     empty packet whose prefix carries the fast path's credit (fastpath.c).
 *
 * Registration cache. A rendezvous buffer is registered (page-rounded) on
 * first use and the registration kept for reuse, at most PLX_OFI_MRC_MAX
 * idle ones, least recently used evicted. That is correct only where the
 * provider does not pin pages: the software providers (tcp, sockets, udp,
 * shm, and the rxm/rxd layers over them) check a key and a virtual range
 * and then copy through the process's current mapping, so a region the
 * application frees and whose addresses come back as other memory is read
 * as it is now. A provider that may pin (any other: verbs, psm, efa, ...)
 * gets no cache by default (PLEXUS_OFI_MR_CACHE=auto): each piece is
 * registered when sent and deregistered when the receiver has read it.
 *
 * Progress. The completion queue is opened with a file descriptor as its
 * wait object where the provider offers one; a wait sleeps on it after
 * fi_trywait says nothing is pending. Without one, sleep_prepare returns
 * an fd that is always readable: the wait keeps polling.
 *
 * Finalize. Each rank sends BYE to every peer it sent to or heard from and
 * waits (at most PLX_OFI_BYE_TIMEOUT) for BYE from every peer in that set,
 * growing it as BYEs come, and for its own sends to complete: a peer's BYE
 * comes after everything it sent (send-after-send order), so nothing is
 * lost by closing the endpoint.
 *
 * Thread rules: as every transport, under the library lock.
 */
#include <dlfcn.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>
/* libfabric is opened when a job asks for the ofi transport (or plexus-info
 * asks what it offers), not when the library is loaded: Debian's libfabric
 * links the PSM libraries, whose load-time constructors cost every process
 * about 0.1 s (libinfinipath calibrates its clock with some 400 usleeps,
 * pinned to CPU 0) and install crash handlers. Its six real functions are
 * called through pointers that plx_ofi_dl_open fills (the rest of its API is
 * inline, through the objects' operation tables). */
#include "transport/ofi/ofi_int.h"
#include "core/config.h"
#include "core/log.h"
#include "core/plexus.h"
#include "core/runtime.h"
#include "pm/pm.h"
#include "route/route.h"

/* libfabric links Debian's PSM libraries (libpsm_infinipath, libpsm2),
 * whose constructors install crash handlers for SIGSEGV and its kin when
 * the library is loaded: a rank that crashes then prints their backtrace,
 * drops a "<program>.<time>-<pid>,<host>.btr" file in its directory and
 * exits with status 1, so the launcher can no longer report the signal.
 * Only handlers that live in those libraries are put back to the default,
 * right after libfabric is loaded; the handlers of the application or of a
 * sanitizer are left alone. */
static void plx_ofi_undo_psm_handlers(void)
{
    static const int sigs[] = { SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT };
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
        struct sigaction sa;
        Dl_info di;
        if (sigaction(sigs[i], NULL, &sa) != 0 || sa.sa_handler == SIG_DFL || sa.sa_handler == SIG_IGN)
            continue;
        void *fn = (sa.sa_flags & SA_SIGINFO) ? (void *)sa.sa_sigaction : (void *)sa.sa_handler;
        if (dladdr(fn, &di) && di.dli_fname && (strstr(di.dli_fname, "libpsm") || strstr(di.dli_fname, "infinipath"))) {
            signal(sigs[i], SIG_DFL);
        }
    }
}
#include "transport/ofi/ofi.h"
#include "util/util.h"

static struct {
    void *h;
    int (*getinfo)(uint32_t, const char *, const char *, uint64_t, const struct fi_info *, struct fi_info **);
    void (*freeinfo)(struct fi_info *);
    struct fi_info *(*dupinfo)(const struct fi_info *);
    int (*fabric)(struct fi_fabric_attr *, struct fid_fabric **, void *);
    const char *(*strerror)(int);
    uint32_t (*version)(void);
} plx_ofi_dl;

/* Loads libfabric once; 0 and why (in why[len]) when it cannot. */
static int plx_ofi_dl_open(char *why, size_t len)
{
    if (plx_ofi_dl.h)
        return 1;
    void *h = dlopen("libfabric.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        snprintf(why, len, "cannot load libfabric.so.1: %s", dlerror());
        return 0;
    }
    *(void **)&plx_ofi_dl.getinfo = dlsym(h, "fi_getinfo");
    *(void **)&plx_ofi_dl.freeinfo = dlsym(h, "fi_freeinfo");
    *(void **)&plx_ofi_dl.dupinfo = dlsym(h, "fi_dupinfo");
    *(void **)&plx_ofi_dl.fabric = dlsym(h, "fi_fabric");
    *(void **)&plx_ofi_dl.strerror = dlsym(h, "fi_strerror");
    *(void **)&plx_ofi_dl.version = dlsym(h, "fi_version");
    if (!plx_ofi_dl.getinfo || !plx_ofi_dl.freeinfo || !plx_ofi_dl.dupinfo || !plx_ofi_dl.fabric ||
        !plx_ofi_dl.strerror || !plx_ofi_dl.version) {
        snprintf(why, len, "libfabric.so.1 lacks fi_getinfo, fi_fabric or another function this build uses");
        dlclose(h);
        memset(&plx_ofi_dl, 0, sizeof plx_ofi_dl);
        return 0;
    }
    plx_ofi_dl.h = h;           /* kept loaded until the process ends */
    plx_ofi_undo_psm_handlers();
    return 1;
}

int plx_fi_getinfo(uint32_t version, const char *node, const char *service, uint64_t flags,
                   const struct fi_info *hints, struct fi_info **info)
{
    return plx_ofi_dl.getinfo(version, node, service, flags, hints, info);
}

void plx_fi_freeinfo(struct fi_info *info)
{
    if (plx_ofi_dl.freeinfo)
        plx_ofi_dl.freeinfo(info);
}

struct fi_info *plx_fi_dupinfo(const struct fi_info *info)
{
    return plx_ofi_dl.dupinfo(info);
}

int plx_fi_fabric(struct fi_fabric_attr *attr, struct fid_fabric **fabric, void *context)
{
    return plx_ofi_dl.fabric(attr, fabric, context);
}

const char *plx_fi_strerror(int errnum)
{
    return plx_ofi_dl.strerror ? plx_ofi_dl.strerror(errnum) : "libfabric not loaded";
}

uint32_t plx_fi_version(void)
{
    return plx_ofi_dl.version ? plx_ofi_dl.version() : 0;
}

struct plx_ofi_state plx_ofi = { .cq_fd = -1, .busy_fd = -1 };

static const struct plx_tp_ops plx_ofi_ops;

/* --- which provider ------------------------------------------------------------------ */

/* Does this job want the ofi transport at all? Named in PLEXUS_TRANSPORTS,
 * named by a rule of PLEXUS_ROUTE, or a provider chosen. */
static int plx_ofi_wanted(void)
{
    const char *t = plx_config.transports;
    if (t[0] && plx_route_enabled("ofi"))
        return 1;
    if (!plx_route_enabled("ofi"))
        return 0;
    return strstr(plx_config.route, "ofi") != NULL || plx_config.ofi_provider[0] != 0;
}

/* PLEXUS_OFI_PROVIDER, with '+' for the ';' of a layered name
 * ("tcp+ofi_rxm": a CMake list or a PMI value cannot hold ';'). */
static const char *plx_ofi_prov_wanted(void)
{
    static char name[sizeof plx_config.ofi_provider];
    if (!plx_config.ofi_provider[0])
        return NULL;
    snprintf(name, sizeof name, "%s", plx_config.ofi_provider);
    for (char *d = name; *d; d++)
        if (*d == '+')
            *d = ';';
    return name;
}

/* Providers that copy through the process's mappings and never pin pages. */
static int plx_ofi_prov_software(const char *prov)
{
    static const char *const sw[] = { "tcp", "sockets", "udp", "shm", "net" };
    char buf[64];
    snprintf(buf, sizeof buf, "%s", prov);
    char *save = NULL;
    for (char *p = strtok_r(buf, ";", &save); p; p = strtok_r(NULL, ";", &save)) {
        if (!strncmp(p, "ofi_", 4))
            continue;           /* a utility layer (rxm, rxd) over the core provider */
        int ok = 0;
        for (size_t i = 0; i < sizeof sw / sizeof sw[0]; i++)
            ok |= !strcmp(p, sw[i]);
        if (!ok)
            return 0;
    }
    return 1;
}

static struct fi_info *plx_ofi_hints(uint64_t caps, int prov_key)
{
    struct fi_info *h = fi_allocinfo();
    if (!h)
        return NULL;
    h->ep_attr->type = FI_EP_RDM;
    h->caps = caps;
    h->mode = FI_CONTEXT | FI_CONTEXT2;
    h->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_ENDPOINT |
                              (prov_key ? FI_MR_PROV_KEY : 0);
    h->domain_attr->threading = FI_THREAD_DOMAIN;
    const char *p = plx_ofi_prov_wanted();
    if (p)
        h->fabric_attr->prov_name = strdup(p);
    return h;
}

/* Every RDM fi_info this machine offers for what we need, best first
 * (remote memory and atomics, our keys), or NULL with why. */
static struct fi_info *plx_ofi_getinfo(char *why, size_t len)
{
    static const uint64_t caps[] = { FI_MSG | FI_RMA | FI_ATOMIC, FI_MSG | FI_RMA, FI_MSG };
    int last = 0;
    if (!plx_ofi_dl_open(why, len))
        return NULL;
    for (int pk = 0; pk < 2; pk++)
        for (size_t i = 0; i < sizeof caps / sizeof caps[0]; i++) {
            struct fi_info *h = plx_ofi_hints(caps[i], pk), *out = NULL;
            if (!h) {
                snprintf(why, len, "fi_allocinfo failed");
                return NULL;
            }
            last = fi_getinfo(PLX_OFI_API, NULL, NULL, 0, h, &out);
            fi_freeinfo(h);
            if (last == 0 && out)
                return out;
        }
    const char *p = plx_ofi_prov_wanted();
    snprintf(why, len, "no libfabric provider%s%s%s offers a reliable datagram endpoint (FI_EP_RDM) here: "
             "fi_getinfo: %s", p ? " \"" : "", p ? p : "", p ? "\"" : "", fi_strerror(-last));
    return NULL;
}

/* --- opening ---------------------------------------------------------------------------- */

static void plx_ofi_close_all(void)
{
    if (plx_ofi.rx_mr)
        fi_close(&plx_ofi.rx_mr->fid);
    if (plx_ofi.tx_mr)
        fi_close(&plx_ofi.tx_mr->fid);
    plx_ofi.rx_mr = plx_ofi.tx_mr = NULL;
    while (plx_ofi.mrc.next && !plx_list_empty(&plx_ofi.mrc)) {
        struct plx_ofi_mrc *m = plx_list_entry(plx_ofi.mrc.next, struct plx_ofi_mrc, link);
        plx_list_remove(&m->link);
        fi_close(&m->mr->fid);
        free(m);
    }
    if (plx_ofi.ep)
        fi_close(&plx_ofi.ep->fid);
    if (plx_ofi.cq)
        fi_close(&plx_ofi.cq->fid);
    if (plx_ofi.av)
        fi_close(&plx_ofi.av->fid);
    if (plx_ofi.domain)
        fi_close(&plx_ofi.domain->fid);
    if (plx_ofi.fabric)
        fi_close(&plx_ofi.fabric->fid);
    plx_ofi.ep = NULL;
    plx_ofi.cq = NULL;
    plx_ofi.av = NULL;
    plx_ofi.domain = NULL;
    plx_ofi.fabric = NULL;
    plx_ofi.cq_fd = -1;
}

/* Registers [addr, addr+len) with `access`, binding it where FI_MR_ENDPOINT
 * says; 0 or a negative fi_errno. */
static int plx_ofi_mr_reg_at(void *addr, size_t len, uint64_t access, uint64_t key, uint64_t offset,
                             struct fid_mr **mr)
{
    struct iovec v = { addr, len };
    struct fi_mr_attr attr = { .mr_iov = &v, .iov_count = 1, .access = access, .offset = offset,
                               .requested_key = key };
    int rc = fi_mr_regattr(plx_ofi.domain, &attr, 0, mr);
    if (rc)
        return rc;
    if (plx_ofi.mr_mode & FI_MR_ENDPOINT) {
        rc = fi_mr_bind(*mr, &plx_ofi.ep->fid, 0);
        if (!rc)
            rc = fi_mr_enable(*mr);
        if (rc) {
            fi_close(&(*mr)->fid);
            *mr = NULL;
        }
    }
    return rc;
}

/* Registration addressed by offset from 0 where the provider does not use
 * virtual addresses (rendezvous pieces carry their offset). */
int plx_ofi_mr_reg(void *addr, size_t len, uint64_t access, uint64_t key, struct fid_mr **mr)
{
    return plx_ofi_mr_reg_at(addr, len, access, key, 0, mr);
}

/* Our keys for rendezvous and bounce buffers (without FI_MR_PROV_KEY):
 * bit 63 set, so that they never meet the router's keys of remote memory
 * (a generation and a slot, below 2^63), which mem_register requests. */
uint64_t plx_ofi_key_next(void)
{
    return (1ull << 63) | ++plx_ofi.next_key;
}

/* Opens fabric ... endpoint of fi; 0, or -1 with why. */
static int plx_ofi_try(struct fi_info *fi, char *why, size_t len)
{
    const char *step;
    int rc;
    if ((rc = fi_fabric(fi->fabric_attr, &plx_ofi.fabric, NULL))) {
        step = "fi_fabric";
        goto fail;
    }
    if ((rc = fi_domain(plx_ofi.fabric, fi, &plx_ofi.domain, NULL))) {
        step = "fi_domain";
        goto fail;
    }
    struct fi_av_attr av_attr = { .type = fi->domain_attr->av_type };
    if ((rc = fi_av_open(plx_ofi.domain, &av_attr, &plx_ofi.av, NULL))) {
        step = "fi_av_open";
        goto fail;
    }
    struct fi_cq_attr cq_attr = { .format = FI_CQ_FORMAT_MSG, .wait_obj = FI_WAIT_FD,
                                  .size = 4 * (PLX_OFI_NRX + PLX_OFI_NTX) };
    if (fi_cq_open(plx_ofi.domain, &cq_attr, &plx_ofi.cq, NULL) == 0 &&
        fi_control(&plx_ofi.cq->fid, FI_GETWAIT, &plx_ofi.cq_fd) == 0 && plx_ofi.cq_fd >= 0) {
        /* a file descriptor to sleep on */
    } else {
        if (plx_ofi.cq)
            fi_close(&plx_ofi.cq->fid);
        plx_ofi.cq = NULL;
        plx_ofi.cq_fd = -1;
        cq_attr.wait_obj = FI_WAIT_NONE;
        if ((rc = fi_cq_open(plx_ofi.domain, &cq_attr, &plx_ofi.cq, NULL))) {
            step = "fi_cq_open";
            goto fail;
        }
    }
    if ((rc = fi_endpoint(plx_ofi.domain, fi, &plx_ofi.ep, NULL))) {
        step = "fi_endpoint";
        goto fail;
    }
    if ((rc = fi_ep_bind(plx_ofi.ep, &plx_ofi.av->fid, 0))) {
        step = "fi_ep_bind(av)";
        goto fail;
    }
    if ((rc = fi_ep_bind(plx_ofi.ep, &plx_ofi.cq->fid, FI_TRANSMIT | FI_RECV))) {
        step = "fi_ep_bind(cq)";
        goto fail;
    }
    if ((rc = fi_enable(plx_ofi.ep))) {
        step = "fi_enable";
        goto fail;
    }
    return 0;
fail:
    snprintf(why, len, "provider %s (domain %s): %s: %s", fi->fabric_attr->prov_name,
             fi->domain_attr->name ? fi->domain_attr->name : "?", step, fi_strerror(-rc));
    plx_ofi_close_all();
    return -1;
}

/* The buffers: receive buffers posted, bounce buffers free; 0 or -1. */
static int plx_ofi_buffers(char *why, size_t len)
{
    size_t sz = plx_ofi.pkt_max;
    plx_ofi.rxbufs = plx_malloc(sz * PLX_OFI_NRX);
    plx_ofi.txbufs = plx_malloc(sz * PLX_OFI_NTX);
    plx_ofi.tx_ops = plx_calloc(PLX_OFI_NTX, sizeof *plx_ofi.tx_ops);
    if (plx_ofi.mr_mode & FI_MR_LOCAL) {
        int rc = plx_ofi_mr_reg(plx_ofi.rxbufs, sz * PLX_OFI_NRX, FI_RECV, plx_ofi_key_next(), &plx_ofi.rx_mr);
        if (!rc)
            rc = plx_ofi_mr_reg(plx_ofi.txbufs, sz * PLX_OFI_NTX, FI_SEND, plx_ofi_key_next(), &plx_ofi.tx_mr);
        if (rc) {
            snprintf(why, len, "fi_mr_reg of the bounce buffers: %s", fi_strerror(-rc));
            return -1;
        }
    }
    for (int i = 0; i < PLX_OFI_NTX; i++) {
        struct plx_ofi_op *op = &plx_ofi.tx_ops[i];
        op->kind = PLX_OFI_OP_TX;
        op->buf = plx_ofi.txbufs + (size_t)i * sz;
        plx_list_push_back(&plx_ofi.tx_free, &op->link);
    }
    for (int i = 0; i < PLX_OFI_NRX; i++) {
        struct plx_ofi_op *op = &plx_ofi.rx_ops[i];
        op->kind = PLX_OFI_OP_RX;
        op->buf = plx_ofi.rxbufs + (size_t)i * sz;
        int rc;
        do {
            rc = (int)fi_recv(plx_ofi.ep, op->buf, sz, plx_ofi.rx_mr ? fi_mr_desc(plx_ofi.rx_mr) : NULL,
                              FI_ADDR_UNSPEC, op);
        } while (rc == -FI_EAGAIN && fi_cq_read(plx_ofi.cq, NULL, 0) >= -FI_EAGAIN);
        if (rc) {
            snprintf(why, len, "fi_recv: %s", fi_strerror(-rc));
            return -1;
        }
    }
    return 0;
}

static void plx_ofi_card_publish(const char *card)
{
    char key[PLX_PM_MAX_KEY];
    snprintf(key, sizeof key, "ofi-%d", plx_procs.my_lpid);
    if (plx_pm_put(key, card) != PLX_OK)
        plx_warn("ofi: cannot publish the business card");
    else
        plx_debug(2, "ofi: business card %s", card);
}

static void plx_ofi_init_early(void)
{
    char card[PLX_PM_MAX_VAL];
    plx_list_init(&plx_ofi.tx_free);
    plx_list_init(&plx_ofi.op_free);
    plx_list_init(&plx_ofi.reads);
    plx_list_init(&plx_ofi.ctlq);
    plx_list_init(&plx_ofi.selfq);
    plx_list_init(&plx_ofi.rma_now);
    plx_list_init(&plx_ofi.mrc);
    plx_ofi.wanted = plx_ofi_wanted();
    if (!plx_ofi.wanted)
        return;
    struct fi_info *all = plx_ofi_getinfo(plx_ofi.why, sizeof plx_ofi.why);
    struct fi_info *fi = NULL;
    int spans_nodes = plx_procs.nlocal < plx_procs.n;
    for (struct fi_info *f = all; f; f = f->next) {
        if (spans_nodes && !plx_ofi_prov_wanted() && !strcmp(f->fabric_attr->prov_name, "shm"))
            continue;           /* shared memory reaches this node only */
        if (plx_ofi_try(f, plx_ofi.why, sizeof plx_ofi.why) == 0) {
            fi = f;
            break;
        }
    }
    char addr[256];
    size_t alen = sizeof addr;
    if (fi && fi_getname(&plx_ofi.ep->fid, addr, &alen) != 0) {
        snprintf(plx_ofi.why, sizeof plx_ofi.why, "fi_getname failed");
        plx_ofi_close_all();
        fi = NULL;
    }
    if (!fi) {
        fi_freeinfo(all);
        snprintf(card, sizeof card, "none|%s", plx_ofi.why);
        for (char *d = card; *d; d++)
            if (*d == ' ' || *d == '\t' || *d == '\n' || *d == ';')
                *d = '_';
        plx_ofi_card_publish(card);
        return;
    }
    plx_ofi.info = fi_dupinfo(fi);
    fi_freeinfo(all);
    fi = plx_ofi.info;
    snprintf(plx_ofi.prov, sizeof plx_ofi.prov, "%s", fi->fabric_attr->prov_name);
    plx_ofi.mr_mode = (uint64_t)fi->domain_attr->mr_mode;
    plx_ofi.rma = (fi->caps & FI_RMA) && !(plx_ofi.mr_mode & FI_MR_RAW) && fi->domain_attr->mr_key_size <= 8;
    plx_ofi.atomic = plx_ofi.rma && (fi->caps & FI_ATOMIC);
    plx_ofi.tagged = (fi->caps & FI_TAGGED) != 0;
    plx_ofi.inject_max = fi->tx_attr->inject_size;
    size_t hdr = sizeof(struct plx_ofi_pfx) + sizeof(struct plx_hdr);
    plx_ofi.eager_max = plx_config.ofi_eager_max;
    /* room for the RMA layer's pieces too (16 KiB of data, up to 8 KiB of
     * runs and its header: src/rma/ops.c), which it does not cut to a
     * channel's max_packet (they failed with PLX_ERR_ARG before session 7) */
    plx_ofi.pkt_max = hdr + PLX_MAX(PLX_MAX(plx_ofi.eager_max, (size_t)PLX_OFI_PKT_MIN), sizeof(struct plx_ofi_desc) + 64);
    if (fi->ep_attr->max_msg_size && plx_ofi.pkt_max > fi->ep_attr->max_msg_size) {
        plx_ofi.pkt_max = fi->ep_attr->max_msg_size;
        plx_ofi.eager_max = plx_ofi.pkt_max - hdr;
    }
    plx_ofi.credit = PLX_MAX(plx_config.ofi_eager_credit, plx_ofi.eager_max + 64);
    const char *mc = plx_config.ofi_mr_cache;
    plx_ofi.mrc_on = !strcmp(mc, "on") || (strcmp(mc, "off") && plx_ofi_prov_software(plx_ofi.prov));
    if (plx_ofi_buffers(plx_ofi.why, sizeof plx_ofi.why) != 0) {
        plx_ofi_close_all();
        snprintf(card, sizeof card, "none|%s", plx_ofi.why);
        for (char *d = card; *d; d++)
            if (*d == ' ' || *d == ';')
                *d = '_';
        plx_ofi_card_publish(card);
        return;
    }
    int w = snprintf(card, sizeof card, "%s|", plx_ofi.prov);
    for (char *d = card; *d; d++)
        if (*d == ';')
            *d = '+';
    for (size_t i = 0; i < alen && (size_t)w + 3 < sizeof card; i++)
        w += snprintf(card + w, sizeof card - (size_t)w, "%02x", (unsigned char)addr[i]);
    plx_ofi_card_publish(card);
    if (plx_ofi.cq_fd < 0) {
        plx_ofi.busy_fd = eventfd(1, EFD_CLOEXEC | EFD_NONBLOCK);
    }
    plx_ofi.early_ok = 1;
}

/* --- peers ---------------------------------------------------------------------------- */

/* Reads lpid's card once: is it reached through our provider? */
static struct plx_ofi_peer *plx_ofi_peer(int lpid)
{
    struct plx_ofi_peer *p = &plx_ofi.peers[lpid];
    if (plx_likely(p->state))
        return p;
    p->state = -1;
    char key[PLX_PM_MAX_KEY], val[PLX_PM_MAX_VAL], mine[64];
    snprintf(key, sizeof key, "ofi-%d", lpid);
    if (plx_pm_get(key, val, sizeof val) != PLX_OK)
        return p;
    snprintf(mine, sizeof mine, "%s", plx_ofi.prov);
    for (char *d = mine; *d; d++)
        if (*d == ';')
            *d = '+';
    char *bar = strchr(val, '|');
    if (!bar)
        return p;
    *bar = 0;
    if (strcmp(val, mine)) {
        plx_debug(1, "ofi: rank %d cannot be reached through %s: its card says \"%s|%.200s\"", lpid, plx_ofi.prov,
                  val, bar + 1);
        return p;
    }
    if (!strcmp(plx_ofi.prov, "shm") && plx_procs.p[lpid].node_id != plx_procs.p[plx_procs.my_lpid].node_id)
        return p;
    const char *hex = bar + 1;
    size_t n = strlen(hex) / 2;
    if (n == 0)
        return p;
    p->abuf = plx_malloc(n);
    for (size_t i = 0; i < n; i++) {
        unsigned v;
        if (sscanf(hex + 2 * i, "%2x", &v) != 1) {
            free(p->abuf);
            p->abuf = NULL;
            return p;
        }
        p->abuf[i] = (char)v;
    }
    p->alen = n;
    p->state = 1;
    return p;
}

static int plx_ofi_reaches(struct plx_tp_iface *ifc, int lpid)
{
    return plx_ofi_peer(lpid)->state > 0;
}

/* The peer's address in the address vector; 0 or -1. */
int plx_ofi_addr(int lpid, fi_addr_t *out)
{
    struct plx_ofi_peer *p = plx_ofi_peer(lpid);
    if (plx_likely(p->in_av)) {
        *out = p->addr;
        return 0;
    }
    if (p->state <= 0)
        return -1;
    int rc = fi_av_insert(plx_ofi.av, p->abuf, 1, &p->addr, 0, NULL);
    if (rc != 1) {
        plx_warn("ofi: fi_av_insert of rank %d's address failed (%s)", lpid, rc < 0 ? fi_strerror(-rc) : "0 inserted");
        p->state = -1;
        return -1;
    }
    free(p->abuf);
    p->abuf = NULL;
    p->in_av = 1;
    *out = p->addr;
    return 0;
}

/* --- operation contexts and registrations ------------------------------------------------ */

static struct plx_ofi_op *plx_ofi_op_get(int kind)
{
    struct plx_ofi_op *op;
    if (!plx_list_empty(&plx_ofi.op_free)) {
        op = plx_list_entry(plx_ofi.op_free.next, struct plx_ofi_op, link);
        plx_list_remove(&op->link);
    } else {
        op = plx_malloc(sizeof *op);
    }
    memset(op, 0, sizeof *op);
    plx_list_init(&op->link);
    op->kind = kind;
    return op;
}

static void plx_ofi_op_put(struct plx_ofi_op *op)
{
    free(op->scratch);
    op->scratch = NULL;
    plx_list_push_front(&plx_ofi.op_free, &op->link);
}

static void plx_ofi_mrc_release(struct plx_ofi_mrc *m)
{
    if (!m || --m->refs > 0)
        return;
    if (!plx_ofi.mrc_on) {
        plx_list_remove(&m->link);
        fi_close(&m->mr->fid);
        free(m);
        return;
    }
    if (++plx_ofi.nmrc_idle <= PLX_OFI_MRC_MAX)
        return;
    /* evict the least recently used idle one */
    struct plx_list *pos;
    for (pos = plx_ofi.mrc.prev; pos != &plx_ofi.mrc; pos = pos->prev) {
        struct plx_ofi_mrc *v = plx_list_entry(pos, struct plx_ofi_mrc, link);
        if (v->refs)
            continue;
        plx_list_remove(&v->link);
        fi_close(&v->mr->fid);
        free(v);
        plx_ofi.nmrc_idle--;
        return;
    }
}

/* A registration covering [addr, addr+len), from the cache or new; NULL
 * with *rc on failure. */
static struct plx_ofi_mrc *plx_ofi_mrc_get(const void *addr, size_t len, int *rc)
{
    uintptr_t a = (uintptr_t)addr, e = a + (len ? len : 1);
    if (plx_ofi.mrc_on) {
        struct plx_list *pos;
        plx_list_for_each(pos, &plx_ofi.mrc) {
            struct plx_ofi_mrc *m = plx_list_entry(pos, struct plx_ofi_mrc, link);
            if (m->lo <= a && e <= m->hi) {
                if (m->refs++ == 0)
                    plx_ofi.nmrc_idle--;
                plx_list_remove(&m->link);
                plx_list_push_front(&plx_ofi.mrc, &m->link);
                return m;
            }
        }
    }
    struct plx_ofi_mrc *m = plx_calloc(1, sizeof *m);
    m->lo = a & ~(uintptr_t)(PLX_OFI_PAGE - 1);
    m->hi = (e + PLX_OFI_PAGE - 1) & ~(uintptr_t)(PLX_OFI_PAGE - 1);
    uint64_t access = FI_SEND | FI_RECV | FI_READ | FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE;
    *rc = plx_ofi_mr_reg((void *)m->lo, m->hi - m->lo, access, plx_ofi_key_next(), &m->mr);
    if (*rc) {
        free(m);
        return NULL;
    }
    m->desc = fi_mr_desc(m->mr);
    m->key = fi_mr_key(m->mr);
    m->refs = 1;
    plx_list_push_front(&plx_ofi.mrc, &m->link);
    return m;
}

/* --- sending ------------------------------------------------------------------------------ */

/* One message prefix+hdr+iov to lpid: inject when it fits, else a bounce
 * buffer. PLX_OK or PLX_BUSY (nothing taken), or an error. */
static plx_status_t plx_ofi_post(int lpid, const struct plx_hdr *h, const struct iovec *iov, int iovcnt,
                                 int delivered)
{
    fi_addr_t dest;
    if (plx_ofi_addr(lpid, &dest) != 0)
        return PLX_ERR_PEER;
    size_t plen = 0;
    for (int i = 0; i < iovcnt; i++)
        plen += iov[i].iov_len;
    size_t total = sizeof(struct plx_ofi_pfx) + sizeof *h + plen;
    if (plx_unlikely(total > plx_ofi.pkt_max))
        return PLX_ERR_ARG;
    struct plx_ofi_peer *p = &plx_ofi.peers[lpid];
    struct plx_ofi_pfx pfx = { .lpid = plx_procs.my_lpid, .magic = PLX_OFI_MAGIC, .seq = p->tx_seq,
                               .ack = p->ring_taken };
    if (p->fout && !delivered) {
        /* the fast path; without room there, send/recv (the number keeps the order) */
        plx_status_t st = plx_ofi_fp_send(lpid, &pfx, h, iov, iovcnt, plen);
        if (st != PLX_ERR_UNSUPPORTED) {
            if (st == PLX_OK) {
                p->tx_seq++;
                p->ack_sent = pfx.ack;
                p->sent = 1;
            }
            return st;
        }
    }
    if (total <= plx_ofi.inject_max && !delivered) {
        char buf[total];
        memcpy(buf, &pfx, sizeof pfx);
        memcpy(buf + sizeof pfx, h, sizeof *h);
        size_t off = sizeof pfx + sizeof *h;
        for (int i = 0; i < iovcnt; i++) {
            memcpy(buf + off, iov[i].iov_base, iov[i].iov_len);
            off += iov[i].iov_len;
        }
        ssize_t rc = fi_inject(plx_ofi.ep, buf, total, dest);
        if (rc == 0) {
            p->tx_seq++;
            p->ack_sent = pfx.ack;
            p->sent = 1;
            return PLX_OK;
        }
        if (rc != -FI_EAGAIN) {
            plx_warn("ofi: fi_inject to rank %d: %s", lpid, fi_strerror((int)-rc));
            return PLX_ERR_IO;
        }
        return PLX_BUSY;
    }
    if (plx_list_empty(&plx_ofi.tx_free))
        return PLX_BUSY;
    struct plx_ofi_op *op = plx_list_entry(plx_ofi.tx_free.next, struct plx_ofi_op, link);
    memcpy(op->buf, &pfx, sizeof pfx);
    memcpy(op->buf + sizeof pfx, h, sizeof *h);
    size_t off = sizeof pfx + sizeof *h;
    for (int i = 0; i < iovcnt; i++) {
        memcpy(op->buf + off, iov[i].iov_base, iov[i].iov_len);
        off += iov[i].iov_len;
    }
    void *desc = plx_ofi.tx_mr ? fi_mr_desc(plx_ofi.tx_mr) : NULL;
    ssize_t rc;
    if (delivered) {            /* completes once the peer has it (finalize's BYE) */
        struct iovec v = { op->buf, total };
        struct fi_msg m = { .msg_iov = &v, .desc = &desc, .iov_count = 1, .addr = dest, .context = op };
        rc = fi_sendmsg(plx_ofi.ep, &m, FI_DELIVERY_COMPLETE | FI_COMPLETION);
    } else {
        rc = fi_send(plx_ofi.ep, op->buf, total, desc, dest, op);
    }
    if (rc == -FI_EAGAIN)
        return PLX_BUSY;
    if (rc) {
        plx_warn("ofi: fi_send to rank %d: %s", lpid, fi_strerror((int)-rc));
        return PLX_ERR_IO;
    }
    op->lpid = lpid;
    plx_list_remove(&op->link);
    plx_ofi.tx_busy++;
    p->tx_seq++;
    p->ack_sent = pfx.ack;
    p->sent = 1;
    return PLX_OK;
}

static void plx_ofi_self_queue(const struct plx_hdr *h, const struct iovec *iov, int iovcnt, const void *zc,
                               struct plx_tp_comp *comp)
{
    size_t plen = 0;
    for (int i = 0; i < iovcnt; i++)
        plen += iov[i].iov_len;
    struct plx_ofi_self *s = plx_malloc(sizeof *s + plen);
    s->h = *h;
    s->zc = zc;
    s->comp = comp;
    size_t off = 0;
    for (int i = 0; i < iovcnt; i++) {
        memcpy(s->payload + off, iov[i].iov_base, iov[i].iov_len);
        off += iov[i].iov_len;
    }
    plx_list_push_back(&plx_ofi.selfq, &s->link);
}

static plx_status_t plx_ofi_send(struct plx_tp_iface *ifc, int lpid, const struct plx_hdr *h,
                                 const struct iovec *iov, int iovcnt)
{
    if (plx_unlikely(lpid == plx_procs.my_lpid)) {
        plx_ofi_self_queue(h, iov, iovcnt, NULL, NULL);
        return PLX_OK;
    }
    return plx_ofi_post(lpid, h, iov, iovcnt, 0);
}

/* Rendezvous DATA: the receiver reads the piece (the last iov entry) from
 * our registered buffer; the piece completes on its ACK. Entries before it
 * (none, from the router) would have to be copied: they are refused. */
static plx_status_t plx_ofi_send_zcopy(struct plx_tp_iface *ifc, int lpid, const struct plx_hdr *h,
                                       const struct iovec *iov, int iovcnt, struct plx_tp_comp *comp)
{
    if (!plx_ofi.rma)
        return PLX_ERR_UNSUPPORTED;     /* no fi_read: the data streams in messages */
    if (iovcnt != 1 || h->type != PLX_PKT_DATA)
        return PLX_ERR_ARG;
    if (plx_unlikely(lpid == plx_procs.my_lpid)) {
        plx_ofi_self_queue(h, NULL, 0, iov[0].iov_base, comp);
        return PLX_OK;
    }
    int rc = 0;
    struct plx_ofi_mrc *m = plx_ofi_mrc_get(iov[0].iov_base, iov[0].iov_len, &rc);
    if (!m) {
        /* the piece (and the rest of the message) then streams in messages:
         * slower, never lost */
        plx_debug(1, "ofi: registering %zu bytes at %p for rank %d failed (fi_mr_reg: %s): the data goes in "
                  "messages", iov[0].iov_len, iov[0].iov_base, lpid, fi_strerror(-rc));
        return PLX_ERR_UNSUPPORTED;
    }
    struct plx_ofi_op *op = plx_ofi_op_get(PLX_OFI_OP_ZC);
    op->lpid = lpid;
    op->mrc = m;
    op->comp = comp;
    uintptr_t a = (uintptr_t)iov[0].iov_base;
    struct plx_ofi_desc d = {
        .addr = (plx_ofi.mr_mode & FI_MR_VIRT_ADDR) ? a : a - m->lo,
        .key = m->key,
        .len = iov[0].iov_len,
        .cookie = (uint64_t)(uintptr_t)op,
    };
    struct plx_hdr w = *h;
    w.flags |= PLX_PKT_F_TRANSPORT;
    w.len = sizeof d;
    struct iovec v = { &d, sizeof d };
    plx_status_t st = plx_ofi_post(lpid, &w, &v, 1, 0);
    if (st != PLX_OK) {
        plx_ofi_mrc_release(m);
        plx_ofi_op_put(op);
    }
    return st;
}

static plx_status_t plx_ofi_ctl_post(const struct plx_ofi_ctl *c)
{
    struct iovec v = { (void *)c->pl, (size_t)c->npl * sizeof c->pl[0] };
    return plx_ofi_post(c->lpid, &c->h, &v, c->npl ? 1 : 0, c->h.type == PLX_PKT_PING);
}

/* A transport-private control packet with npl payload words, queued when
 * there is no room. */
void plx_ofi_ctl_pl(int lpid, uint8_t type, uint64_t cookie, const uint64_t *pl, int npl)
{
    struct plx_ofi_ctl c = { .lpid = lpid, .npl = npl,
                             .h = { .type = type, .flags = PLX_PKT_F_TRANSPORT, .sreq = cookie } };
    c.h.len = (uint32_t)(npl * (int)sizeof c.pl[0]);
    if (npl)
        memcpy(c.pl, pl, (size_t)npl * sizeof c.pl[0]);
    if (plx_list_empty(&plx_ofi.ctlq) && plx_ofi_ctl_post(&c) == PLX_OK)
        return;
    struct plx_ofi_ctl *q = plx_malloc(sizeof *q);
    *q = c;
    plx_list_push_back(&plx_ofi.ctlq, &q->link);
}

static void plx_ofi_ctl(int lpid, uint8_t type, uint64_t cookie)
{
    plx_ofi_ctl_pl(lpid, type, cookie, NULL, 0);
}

static void plx_ofi_region_query(int lpid, uint64_t key);
static int plx_ofi_rpend_poll(void);
static void plx_ofi_region_answer(int lpid, uint64_t key, const uint64_t *pl);

/* --- receiving --------------------------------------------------------------------------- */

static void plx_ofi_read_done(struct plx_ofi_op *op, plx_status_t st)
{
    if (st == PLX_OK) {
        plx_ofi.nreads++;
        plx_ofi.nread_bytes += op->fit;
    }
    plx_ofi_mrc_release(op->mrc);
    plx_ofi.up->placed(&plx_ofi.ifc, op->lpid, &op->h);
    plx_ofi_ctl(op->lpid, PLX_PKT_ACK, op->d.cookie);
    plx_ofi_op_put(op);
}

/* Issues (or re-issues) a rendezvous read; 1 posted or finished, 0 EAGAIN. */
static int plx_ofi_read_issue(struct plx_ofi_op *op)
{
    fi_addr_t src;
    if (plx_ofi_addr(op->lpid, &src) != 0) {
        plx_ofi_read_done(op, PLX_ERR_PEER);
        return 1;
    }
    void *desc = NULL;
    if ((plx_ofi.mr_mode & FI_MR_LOCAL) && !op->mrc) {
        int rc = 0;
        op->mrc = plx_ofi_mrc_get(op->dst, op->fit, &rc);
        if (!op->mrc) {
            char why[256];
            snprintf(why, sizeof why, "ofi: registering the receive buffer (%zu bytes) for rank %d's data: "
                     "fi_mr_reg: %s", op->fit, op->lpid, fi_strerror(-rc));
            plx_ofi.up->link_failed(&plx_ofi.ifc, op->lpid, why, 0);
            plx_ofi_read_done(op, PLX_ERR_NOMEM);
            return 1;
        }
    }
    if (op->mrc)
        desc = op->mrc->desc;
    ssize_t rc = fi_read(plx_ofi.ep, op->dst, op->fit, desc, src, op->d.addr, op->d.key, op);
    if (rc == -FI_EAGAIN)
        return 0;
    if (rc) {
        plx_warn("ofi: fi_read of %zu bytes from rank %d: %s", op->fit, op->lpid, fi_strerror((int)-rc));
        plx_ofi.up->link_failed(&plx_ofi.ifc, op->lpid, "ofi: fi_read failed", 0);
        plx_ofi_read_done(op, PLX_ERR_IO);
    }
    return 1;
}

/* A rendezvous piece to read: where does it go? */
static void plx_ofi_read_start(int lpid, const struct plx_hdr *w, const struct plx_ofi_desc *d)
{
    struct plx_ofi_op *op = plx_ofi_op_get(PLX_OFI_OP_READ);
    op->lpid = lpid;
    op->d = *d;
    op->h = *w;
    op->h.flags &= (uint8_t)~PLX_PKT_F_TRANSPORT;
    op->h.len = (uint32_t)d->len;
    size_t fit = 0;
    op->dst = plx_ofi.up->place(&plx_ofi.ifc, lpid, &op->h, &fit);
    op->fit = op->dst ? PLX_MIN(fit, (size_t)d->len) : 0;
    if (op->fit == 0) {
        plx_ofi_read_done(op, PLX_OK);
        return;
    }
    if (!plx_list_empty(&plx_ofi.reads) || !plx_ofi_read_issue(op))
        plx_list_push_back(&plx_ofi.reads, &op->link);
}

void plx_ofi_deliver(int lpid, const struct plx_hdr *h, const void *payload)
{
    struct plx_ofi_peer *p = &plx_ofi.peers[lpid];
    p->heard = 1;
    if (plx_likely(!(h->flags & PLX_PKT_F_TRANSPORT))) {
        plx_ofi.up->recv[h->type](&plx_ofi.ifc, lpid, h, payload);
        return;
    }
    if (h->type == PLX_PKT_DATA && h->len == sizeof(struct plx_ofi_desc)) {
        struct plx_ofi_desc d;
        memcpy(&d, payload, sizeof d);
        plx_ofi_read_start(lpid, h, &d);
    } else if (h->type == PLX_PKT_ACK) {
        struct plx_ofi_op *op = (struct plx_ofi_op *)(uintptr_t)h->sreq;
        struct plx_tp_comp *c = op->comp;
        plx_ofi_mrc_release(op->mrc);
        plx_ofi_op_put(op);
        plx_tp_comp_done(c, PLX_OK);
    } else if (h->type == PLX_PKT_PING) {
        p->bye_in = 1;
    } else if (h->type == PLX_PKT_CTS || h->type == PLX_PKT_CREDIT) {
        plx_ofi_fp_ctl(lpid, h, payload);
    } else if (h->type == PLX_PKT_RMA) {
        plx_ofi_region_query(lpid, h->sreq);
    } else if (h->type == PLX_PKT_RMA_ANS && h->len == 4 * sizeof(uint64_t)) {
        uint64_t pl[4];
        memcpy(pl, payload, sizeof pl);
        plx_ofi_region_answer(lpid, h->sreq, pl);
    }
}

static int plx_ofi_self_deliver(void)
{
    int work = 0;
    while (!plx_list_empty(&plx_ofi.selfq)) {
        struct plx_ofi_self *s = plx_list_entry(plx_ofi.selfq.next, struct plx_ofi_self, link);
        plx_list_remove(&s->link);
        int me = plx_procs.my_lpid;
        if (s->zc) {
            size_t fit = 0;
            void *dst = plx_ofi.up->place(&plx_ofi.ifc, me, &s->h, &fit);
            if (dst && fit)
                memcpy(dst, s->zc, PLX_MIN(fit, (size_t)s->h.len));
            plx_ofi.up->placed(&plx_ofi.ifc, me, &s->h);
            plx_tp_comp_done(s->comp, PLX_OK);
        } else {
            plx_ofi.up->recv[s->h.type](&plx_ofi.ifc, me, &s->h, s->payload);
        }
        free(s);
        work++;
    }
    return work;
}

static void plx_ofi_repost(struct plx_ofi_op *op)
{
    ssize_t rc;
    int tries = 0;
    while ((rc = fi_recv(plx_ofi.ep, op->buf, plx_ofi.pkt_max, plx_ofi.rx_mr ? fi_mr_desc(plx_ofi.rx_mr) : NULL,
                         FI_ADDR_UNSPEC, op)) == -FI_EAGAIN && ++tries < 1000000)
        ;
    if (rc)
        plx_fatal("ofi: cannot post a receive buffer again: fi_recv: %s", fi_strerror((int)-rc));
}

static void plx_ofi_rma_done(struct plx_ofi_op *op, plx_status_t st);

static void plx_ofi_cq_error(void)
{
    struct fi_cq_err_entry e;
    memset(&e, 0, sizeof e);
    if (fi_cq_readerr(plx_ofi.cq, &e, 0) != 1)
        return;
    struct plx_ofi_op *op = e.op_context;
    char why[512];
    snprintf(why, sizeof why, "ofi (%s): %s (%s)", plx_ofi.prov, fi_strerror(e.err),
             fi_cq_strerror(plx_ofi.cq, e.prov_errno, e.err_data, NULL, 0));
    if (!op) {
        plx_warn("%s", why);
        return;
    }
    switch (op->kind) {
    case PLX_OFI_OP_RX:
        if (e.err != FI_ECANCELED)
            plx_ofi_repost(op);
        break;
    case PLX_OFI_OP_TX:
        plx_ofi.tx_busy--;
        plx_list_push_front(&plx_ofi.tx_free, &op->link);
        plx_ofi.up->link_failed(&plx_ofi.ifc, op->lpid, why, 0);
        break;
    case PLX_OFI_OP_READ:
        /* the data did not arrive: the channel is broken (placed() cannot say so) */
        plx_ofi.up->link_failed(&plx_ofi.ifc, op->lpid, why, 0);
        plx_ofi_read_done(op, PLX_ERR_IO);
        break;
    case PLX_OFI_OP_RMA:
        plx_warn("ofi: remote-memory operation on rank %d: %s", op->lpid, why);
        plx_ofi_rma_done(op, PLX_ERR_IO);
        break;
    case PLX_OFI_OP_FPW:
        plx_ofi_fp_write_done(op, 0);
        plx_ofi.up->link_failed(&plx_ofi.ifc, op->lpid, why, 0);
        break;
    default:
        break;
    }
}

static int plx_ofi_poll(void)
{
    int work = 0;
    if (plx_unlikely(!plx_list_empty(&plx_ofi.selfq)))
        work += plx_ofi_self_deliver();
    struct fi_cq_msg_entry ev[PLX_OFI_CQ_BATCH];
    for (;;) {
        ssize_t n = fi_cq_read(plx_ofi.cq, ev, PLX_OFI_CQ_BATCH);
        if (n == -FI_EAGAIN)
            break;
        if (n == -FI_EAVAIL) {
            plx_ofi_cq_error();
            work++;
            continue;
        }
        if (n < 0) {
            plx_warn("ofi: fi_cq_read: %s", fi_strerror((int)-n));
            break;
        }
        for (ssize_t i = 0; i < n; i++) {
            struct plx_ofi_op *op = ev[i].op_context;
            switch (op->kind) {
            case PLX_OFI_OP_RX: {
                const struct plx_ofi_pfx *pfx = (const struct plx_ofi_pfx *)op->buf;
                const struct plx_hdr *h = (const struct plx_hdr *)(op->buf + sizeof *pfx);
                if (ev[i].len >= sizeof *pfx + sizeof *h && pfx->magic == PLX_OFI_MAGIC && pfx->lpid >= 0 &&
                    pfx->lpid < plx_procs.n && h->type < PLX_PKT_TYPE_MAX &&
                    sizeof *pfx + sizeof *h + h->len <= ev[i].len)
                    plx_ofi_fp_rx(pfx->lpid, pfx, h, h->len);
                else
                    plx_warn("ofi: dropped a malformed message of %zu bytes", (size_t)ev[i].len);
                plx_ofi_repost(op);
                break;
            }
            case PLX_OFI_OP_TX:
                plx_ofi.tx_busy--;
                plx_list_push_front(&plx_ofi.tx_free, &op->link);
                break;
            case PLX_OFI_OP_READ:
                plx_ofi_read_done(op, PLX_OK);
                break;
            case PLX_OFI_OP_RMA:
                plx_ofi_rma_done(op, PLX_OK);
                break;
            case PLX_OFI_OP_FPW:
                plx_ofi_fp_write_done(op, 1);
                break;
            default:
                break;
            }
        }
        work += (int)n;
        if (n < PLX_OFI_CQ_BATCH)
            break;
    }
    /* after the completion queue: reading it is what lands a software
     * provider's writes into the rings */
    if (plx_ofi.fp_nin)
        work += plx_ofi_fp_poll();
    while (plx_unlikely(!plx_list_empty(&plx_ofi.rma_now))) {
        struct plx_ofi_op *op = plx_list_entry(plx_ofi.rma_now.next, struct plx_ofi_op, link);
        plx_list_remove(&op->link);
        plx_ofi_rma_done(op, PLX_OK);
        work++;
    }
    if (plx_unlikely(plx_ofi.nrpend))
        work += plx_ofi_rpend_poll();
    while (plx_unlikely(!plx_list_empty(&plx_ofi.reads))) {
        struct plx_ofi_op *op = plx_list_entry(plx_ofi.reads.next, struct plx_ofi_op, link);
        plx_list_remove(&op->link);
        if (!plx_ofi_read_issue(op)) {
            plx_list_push_front(&plx_ofi.reads, &op->link);
            break;
        }
        work++;
    }
    while (plx_unlikely(!plx_list_empty(&plx_ofi.ctlq))) {
        struct plx_ofi_ctl *c = plx_list_entry(plx_ofi.ctlq.next, struct plx_ofi_ctl, link);
        if (plx_ofi_ctl_post(c) == PLX_BUSY)
            break;
        plx_list_remove(&c->link);
        free(c);
        work++;
    }
    return work;
}

static int plx_ofi_sleep_prepare(void)
{
    if (!plx_list_empty(&plx_ofi.selfq) || !plx_list_empty(&plx_ofi.reads) || !plx_list_empty(&plx_ofi.ctlq) ||
        plx_ofi.nrpend || plx_ofi_fp_pending())
        return plx_ofi.busy_fd >= 0 ? plx_ofi.busy_fd : -1;
    if (plx_ofi.cq_fd >= 0) {
        struct fid *f = &plx_ofi.cq->fid;
        if (fi_trywait(plx_ofi.fabric, &f, 1) == FI_SUCCESS)
            return plx_ofi.cq_fd;
        if (plx_ofi.busy_fd < 0)
            plx_ofi.busy_fd = eventfd(1, EFD_CLOEXEC | EFD_NONBLOCK);
    }
    return plx_ofi.busy_fd;
}

/* --- remote memory ------------------------------------------------------------------------ */

/* An operation is complete at the target: its completion, then the peer's
 * flushes once nothing issued before them is left. */
static void plx_ofi_rma_done(struct plx_ofi_op *op, plx_status_t st)
{
    struct plx_ofi_peer *p = &plx_ofi.peers[op->lpid];
    struct plx_tp_comp *c = op->comp;
    if (op->result && st == PLX_OK)
        *op->result = op->abuf[2];
    plx_ofi_mrc_release(op->mrc);
    plx_ofi_op_put(op);
    p->rma_out--;
    plx_tp_comp_done(c, st);
    while (p->rma_out == 0 && !plx_list_empty(&p->flushes)) {
        struct plx_ofi_flush *f = plx_list_entry(p->flushes.next, struct plx_ofi_flush, link);
        plx_list_remove(&f->link);
        struct plx_tp_comp *fc = f->comp;
        free(f);
        plx_tp_comp_done(fc, PLX_OK);
    }
}

/* The router's key is requested as the region's key (mr->key on entry), so
 * that one key names the region on every channel. */
static plx_status_t plx_ofi_mem_register(struct plx_tp_iface *ifc, void *addr, size_t len, struct plx_tp_mr *mr)
{
    if (!plx_ofi.rma_native)
        return PLX_ERR_UNSUPPORTED;
    struct fid_mr *fmr = NULL;
    uint64_t access = FI_READ | FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE;
    int rc = plx_ofi_mr_reg(addr, len ? len : 1, access, mr->key, &fmr);
    if (rc) {
        plx_warn("ofi: fi_mr_reg of %zu bytes at %p (key %#llx): %s", len, addr, (unsigned long long)mr->key,
                 fi_strerror(-rc));
        return rc == -FI_ENOKEY ? PLX_ERR_ARG : PLX_ERR_NOMEM;
    }
    mr->addr = addr;
    mr->len = len;
    mr->key = fi_mr_key(fmr);
    mr->priv = fmr;
    if (plx_ofi.rma_offset) {
        /* kept for the origins' queries (a linear table: windows are few) */
        if (plx_ofi.nlreg == plx_ofi.caplreg) {
            plx_ofi.caplreg = plx_ofi.caplreg ? 2 * plx_ofi.caplreg : 16;
            plx_ofi.lreg = plx_realloc(plx_ofi.lreg, (size_t)plx_ofi.caplreg * sizeof *plx_ofi.lreg);
        }
        plx_ofi.lreg[plx_ofi.nlreg++] = (struct plx_ofi_lreg){ .key = mr->key, .pkey = fi_mr_key(fmr),
                                                                .base = (uint64_t)(uintptr_t)addr, .len = len };
    }
    return PLX_OK;
}

static void plx_ofi_mem_deregister(struct plx_tp_iface *ifc, struct plx_tp_mr *mr)
{
    for (int i = 0; i < plx_ofi.nlreg; i++) {
        if (plx_ofi.lreg[i].key == mr->key && plx_ofi.lreg[i].base == (uint64_t)(uintptr_t)mr->addr) {
            plx_ofi.lreg[i] = plx_ofi.lreg[--plx_ofi.nlreg];
            break;
        }
    }
    if (mr->priv)
        fi_close(&((struct fid_mr *)mr->priv)->fid);
    mr->priv = NULL;
}

/* Target: an origin asks for the region of `key`. */
static void plx_ofi_region_query(int lpid, uint64_t key)
{
    uint64_t pl[4] = { 0, 0, 0, 0 };
    for (int i = 0; i < plx_ofi.nlreg; i++) {
        if (plx_ofi.lreg[i].key == key) {
            pl[0] = 1;
            pl[1] = plx_ofi.lreg[i].pkey;
            pl[2] = plx_ofi.lreg[i].base;
            pl[3] = plx_ofi.lreg[i].len;
            break;
        }
    }
    plx_ofi_ctl_pl(lpid, PLX_PKT_RMA_ANS, key, pl, 4);
}

static struct plx_ofi_rreg *plx_ofi_rreg_find(struct plx_ofi_peer *p, uint64_t key)
{
    for (int i = 0; i < p->nrr; i++)
        if (p->rr[i].key == key)
            return &p->rr[i];
    return NULL;
}

/* Origin: the answer (found, provider key, base, length) to a query. */
static void plx_ofi_region_answer(int lpid, uint64_t key, const uint64_t *pl)
{
    struct plx_ofi_rreg *r = plx_ofi_rreg_find(&plx_ofi.peers[lpid], key);
    if (!r || r->state != 0)
        return;
    r->state = pl[0] ? 1 : -1;
    r->pkey = pl[1];
    r->base = pl[2];
    r->len = pl[3];
}

/* A context for an operation on lpid's memory, with the local buffer
 * registered where FI_MR_LOCAL asks; NULL on failure (*st). */
static struct plx_ofi_op *plx_ofi_rma_op(int lpid, const void *local, size_t len, struct plx_tp_comp *comp,
                                         fi_addr_t *dest, plx_status_t *st)
{
    if (plx_ofi_addr(lpid, dest) != 0) {
        *st = PLX_ERR_PEER;
        return NULL;
    }
    struct plx_ofi_op *op = plx_ofi_op_get(PLX_OFI_OP_RMA);
    op->lpid = lpid;
    op->comp = comp;
    if ((plx_ofi.mr_mode & FI_MR_LOCAL) && local) {
        int rc = 0;
        op->mrc = plx_ofi_mrc_get(local, len, &rc);
        if (!op->mrc) {
            plx_warn("ofi: registering the local buffer (%zu bytes at %p) of an operation on rank %d: %s", len,
                     local, lpid, fi_strerror(-rc));
            plx_ofi_op_put(op);
            *st = PLX_ERR_NOMEM;
            return NULL;
        }
    }
    return op;
}

/* After a post: counted, or refused (BUSY on EAGAIN). */
static plx_status_t plx_ofi_rma_posted(struct plx_ofi_op *op, ssize_t rc, const char *what, size_t bytes)
{
    if (rc == 0) {
        struct plx_ofi_peer *p = &plx_ofi.peers[op->lpid];
        p->rma_out++;
        p->st_rma_ops++;
        p->st_rma_bytes += bytes;
        return PLX_OK;
    }
    plx_ofi_mrc_release(op->mrc);
    int lpid = op->lpid;
    plx_ofi_op_put(op);
    if (rc == -FI_EAGAIN)
        return PLX_BUSY;
    plx_warn("ofi: %s on rank %d: %s", what, lpid, fi_strerror((int)-rc));
    return PLX_ERR_IO;
}

static plx_status_t plx_ofi_put_at(int lpid, const void *local, size_t len, uint64_t raddr, uint64_t rkey,
                                   struct plx_tp_comp *comp)
{
    fi_addr_t dest;
    plx_status_t st;
    struct plx_ofi_op *op = plx_ofi_rma_op(lpid, local, len, comp, &dest, &st);
    if (!op)
        return st;
    void *desc = op->mrc ? op->mrc->desc : NULL;
    struct iovec v = { (void *)local, len };
    struct fi_rma_iov r = { .addr = raddr, .len = len, .key = rkey };
    struct fi_msg_rma m = { .msg_iov = &v, .desc = &desc, .iov_count = 1, .addr = dest, .rma_iov = &r,
                            .rma_iov_count = 1, .context = op };
    /* complete only once it is in the target's memory */
    return plx_ofi_rma_posted(op, fi_writemsg(plx_ofi.ep, &m, FI_DELIVERY_COMPLETE | FI_COMPLETION), "fi_write",
                              len);
}

static plx_status_t plx_ofi_get_at(int lpid, void *local, size_t len, uint64_t raddr, uint64_t rkey,
                                   struct plx_tp_comp *comp)
{
    fi_addr_t dest;
    plx_status_t st;
    struct plx_ofi_op *op = plx_ofi_rma_op(lpid, local, len, comp, &dest, &st);
    if (!op)
        return st;
    ssize_t rc = fi_read(plx_ofi.ep, local, len, op->mrc ? op->mrc->desc : NULL, dest, raddr, rkey, op);
    return plx_ofi_rma_posted(op, rc, "fi_read", len);
}

static plx_status_t plx_ofi_atomic_at(int lpid, int aop, uint64_t operand, uint64_t compare, uint64_t *result,
                                      uint64_t raddr, uint64_t rkey, struct plx_tp_comp *comp)
{
    fi_addr_t dest;
    plx_status_t st;
    struct plx_ofi_op *op = plx_ofi_rma_op(lpid, NULL, 0, comp, &dest, &st);
    if (!op)
        return st;
    op->abuf[0] = operand;
    op->abuf[1] = compare;
    op->result = result;
    if (plx_ofi.mr_mode & FI_MR_LOCAL) {
        int rc = 0;
        op->mrc = plx_ofi_mrc_get(op->abuf, sizeof op->abuf, &rc);
        if (!op->mrc) {
            plx_ofi_op_put(op);
            return PLX_ERR_NOMEM;
        }
    }
    void *desc = op->mrc ? op->mrc->desc : NULL;
    ssize_t rc;
    switch (aop) {
    case PLX_TP_AT_FADD:
    case PLX_TP_AT_SWAP:
        rc = fi_fetch_atomic(plx_ofi.ep, &op->abuf[0], 1, desc, &op->abuf[2], desc, dest, raddr, rkey, FI_UINT64,
                             aop == PLX_TP_AT_FADD ? FI_SUM : FI_ATOMIC_WRITE, op);
        break;
    case PLX_TP_AT_CSWAP:
        rc = fi_compare_atomic(plx_ofi.ep, &op->abuf[0], 1, desc, &op->abuf[1], desc, &op->abuf[2], desc, dest, raddr,
                               rkey, FI_UINT64, FI_CSWAP, op);
        break;
    default:
        plx_ofi_mrc_release(op->mrc);
        plx_ofi_op_put(op);
        return PLX_ERR_ARG;
    }
    return plx_ofi_rma_posted(op, rc, "fi_fetch_atomic/fi_compare_atomic", 8);
}

/* Session 9: an element-wise atomic (fi_atomic, fi_fetch_atomic,
 * fi_compare_atomic) of a->count elements. The buffers are the caller's
 * (acc_valid answers nothing under FI_MR_LOCAL, so none is registered),
 * kept untouched by it until the completion. */
_Static_assert(PLX_TP_AOP_BXOR == (int)FI_BXOR && PLX_TP_AOP_READ == (int)FI_ATOMIC_READ &&
                   PLX_TP_AOP_CSWAP == (int)FI_CSWAP && PLX_TP_ADT_DOUBLE == (int)FI_DOUBLE &&
                   PLX_TP_ADT_DOUBLE_COMPLEX == (int)FI_DOUBLE_COMPLEX,
               "the router's atomic ops and types are numbered as libfabric's");

static plx_status_t plx_ofi_acc_at(int lpid, const struct plx_tp_acc *a, uint64_t raddr, uint64_t rkey,
                                   struct plx_tp_comp *comp)
{
    fi_addr_t dest;
    plx_status_t st;
    struct plx_ofi_op *op = plx_ofi_rma_op(lpid, NULL, 0, comp, &dest, &st);
    if (!op)
        return st;
    enum fi_datatype dt = (enum fi_datatype)a->dt;
    enum fi_op fop = (enum fi_op)a->op;
    ssize_t rc;
    const char *what;
    if (a->kind == PLX_TP_ACC_PLAIN) {
        /* A plain accumulate goes as a fetching atomic whose old values are
         * dropped: its completion then means applied at the target, which
         * fence and flush count on. fi_atomic's own completion is the
         * provider's default (transmit complete), and asking it for
         * FI_DELIVERY_COMPLETE (fi_atomicmsg) made libfabric 1.17's shm
         * provider apply strided runs' elements wrongly here. */
        size_t n = a->count * a->elem;
        void *old = n <= sizeof op->abuf ? (void *)op->abuf : (op->scratch = plx_malloc(n));
        rc = fi_fetch_atomic(plx_ofi.ep, a->in, a->count, NULL, old, NULL, dest, raddr, rkey, dt, fop, op);
        what = "fi_fetch_atomic";
    } else if (a->kind == PLX_TP_ACC_FETCH) {
        /* a read sends no operand: the result buffer stands in for it */
        const void *in = a->op == PLX_TP_AOP_READ ? a->res : a->in;
        rc = fi_fetch_atomic(plx_ofi.ep, in, a->count, NULL, a->res, NULL, dest, raddr, rkey, dt, fop, op);
        what = "fi_fetch_atomic";
    } else {
        rc = fi_compare_atomic(plx_ofi.ep, a->in, a->count, NULL, a->cmp, NULL, a->res, NULL, dest, raddr, rkey, dt,
                               fop, op);
        what = "fi_compare_atomic";
    }
    st = plx_ofi_rma_posted(op, rc, what, a->count * a->elem);
    if (st == PLX_OK) {
        plx_ofi.peers[lpid].st_acc_ops++;
        plx_ofi.peers[lpid].st_acc_elems += a->count;
    }
    return st;
}

/* Where q goes: 1 (*addr, *key: what the provider wants), 0 not known yet
 * (asked), -1 outside every region of the target. */
static int plx_ofi_resolve(int lpid, const struct plx_ofi_rpend *q, uint64_t *addr, uint64_t *key)
{
    if (!plx_ofi.rma_offset) {
        *addr = q->raddr;
        *key = q->rkey;
        return 1;
    }
    struct plx_ofi_peer *p = &plx_ofi.peers[lpid];
    struct plx_ofi_rreg *r = plx_ofi_rreg_find(p, q->rkey);
    if (!r) {
        if (p->nrr == p->caprr) {
            p->caprr = p->caprr ? 2 * p->caprr : 8;
            p->rr = plx_realloc(p->rr, (size_t)p->caprr * sizeof *p->rr);
        }
        p->rr[p->nrr++] = (struct plx_ofi_rreg){ .key = q->rkey };
        p->st_queries++;
        plx_ofi_ctl(lpid, PLX_PKT_RMA, q->rkey);
        return 0;
    }
    if (r->state == 0)
        return 0;
    size_t len = q->kind == PLX_OFI_R_ATOMIC ? 8 : q->kind == PLX_OFI_R_ACC ? q->acc.count * q->acc.elem : q->len;
    if (r->state < 0 || q->raddr < r->base || len > r->len || q->raddr - r->base > r->len - len)
        return -1;
    *addr = q->raddr - r->base;
    *key = r->pkey;
    return 1;
}

static plx_status_t plx_ofi_rma_go(int lpid, const struct plx_ofi_rpend *q, uint64_t addr, uint64_t key)
{
    switch (q->kind) {
    case PLX_OFI_R_PUT:
        return plx_ofi_put_at(lpid, q->local, q->len, addr, key, q->comp);
    case PLX_OFI_R_GET:
        return plx_ofi_get_at(lpid, q->local, q->len, addr, key, q->comp);
    case PLX_OFI_R_ACC:
        return plx_ofi_acc_at(lpid, &q->acc, addr, key, q->comp);
    default:
        return plx_ofi_atomic_at(lpid, q->aop, q->operand, q->compare, q->result, addr, key, q->comp);
    }
}

/* An operation that will not reach the provider: completes with st, and
 * the peer's flushes once nothing is left before them. */
static void plx_ofi_rma_fail(int lpid, struct plx_tp_comp *c, plx_status_t st)
{
    struct plx_ofi_op *op = plx_ofi_op_get(PLX_OFI_OP_RMA);
    op->lpid = lpid;
    op->comp = c;
    plx_ofi_rma_done(op, st);
}

/* Issues q now, or queues it behind the operations to lpid that wait for a
 * region's base (counted in rma_out, so flush waits for them too). */
static plx_status_t plx_ofi_rma_submit(int lpid, const struct plx_ofi_rpend *q)
{
    struct plx_ofi_peer *p = &plx_ofi.peers[lpid];
    uint64_t addr = 0, key = 0;
    if (plx_list_empty(&p->rpend) && plx_ofi_resolve(lpid, q, &addr, &key) > 0) {
        plx_status_t st = plx_ofi_rma_go(lpid, q, addr, key);
        if (st != PLX_BUSY)
            return st;
        /* no room in the provider now: it waits, and leaves from the poll
         * (the router promises its callers no BUSY) */
    }
    struct plx_ofi_rpend *e = plx_malloc(sizeof *e);
    *e = *q;
    plx_list_push_back(&p->rpend, &e->link);
    p->rma_out++;
    plx_ofi.nrpend++;
    return PLX_OK;
}

/* From the poll: issues what waited for a base, in order; the work done. */
static int plx_ofi_rpend_poll(void)
{
    int work = 0;
    for (int l = 0; l < plx_procs.n && plx_ofi.nrpend; l++) {
        struct plx_ofi_peer *p = &plx_ofi.peers[l];
        while (!plx_list_empty(&p->rpend)) {
            struct plx_ofi_rpend *e = plx_list_entry(p->rpend.next, struct plx_ofi_rpend, link);
            uint64_t addr = 0, key = 0;
            int r = plx_ofi_resolve(l, e, &addr, &key);
            if (r == 0)
                break;
            plx_status_t st = PLX_ERR_RANGE;
            p->rma_out--;       /* counted again by the post */
            if (r > 0 && (st = plx_ofi_rma_go(l, e, addr, key)) == PLX_BUSY) {
                p->rma_out++;
                break;
            }
            plx_list_remove(&e->link);
            plx_ofi.nrpend--;
            if (st != PLX_OK) {
                p->rma_out++;
                plx_ofi_rma_fail(l, e->comp, st);
            }
            free(e);
            work++;
        }
    }
    return work;
}

static plx_status_t plx_ofi_put(struct plx_tp_iface *ifc, int lpid, const void *local, size_t len, uint64_t raddr,
                                uint64_t rkey, struct plx_tp_comp *comp)
{
    struct plx_ofi_rpend q = { .kind = PLX_OFI_R_PUT, .local = (void *)local, .len = len, .raddr = raddr,
                               .rkey = rkey, .comp = comp };
    return plx_ofi_rma_submit(lpid, &q);
}

static plx_status_t plx_ofi_get(struct plx_tp_iface *ifc, int lpid, void *local, size_t len, uint64_t raddr,
                                uint64_t rkey, struct plx_tp_comp *comp)
{
    struct plx_ofi_rpend q = { .kind = PLX_OFI_R_GET, .local = local, .len = len, .raddr = raddr, .rkey = rkey,
                               .comp = comp };
    return plx_ofi_rma_submit(lpid, &q);
}

static plx_status_t plx_ofi_atomic(struct plx_tp_iface *ifc, int lpid, int aop, uint64_t operand, uint64_t compare,
                                   uint64_t *result, uint64_t raddr, uint64_t rkey, struct plx_tp_comp *comp)
{
    if (!plx_ofi.atomic)
        return PLX_ERR_UNSUPPORTED;
    if (aop != PLX_TP_AT_FADD && aop != PLX_TP_AT_SWAP && aop != PLX_TP_AT_CSWAP)
        return PLX_ERR_ARG;
    struct plx_ofi_rpend q = { .kind = PLX_OFI_R_ATOMIC, .aop = aop, .operand = operand, .compare = compare,
                               .result = result, .raddr = raddr, .rkey = rkey, .comp = comp };
    return plx_ofi_rma_submit(lpid, &q);
}

/* Session 9: what the provider's atomics take (fi_atomicvalid and kin,
 * asked once per triple). Nothing under FI_MR_LOCAL: the caller's buffers
 * would need registering on every call. */
static size_t plx_ofi_acc_valid(struct plx_tp_iface *ifc, int kind, int op, int dt, unsigned *flags)
{
    static int16_t known[3][PLX_TP_AOP_CSWAP + 1][PLX_TP_ADT_DOUBLE_COMPLEX + 1];     /* count + 1; 0 unknown */
    (void)ifc;
    *flags = 0;
    if (!plx_ofi.atomic || (plx_ofi.mr_mode & FI_MR_LOCAL) || kind < PLX_TP_ACC_PLAIN ||
        kind > PLX_TP_ACC_COMPARE || op < 0 || op > PLX_TP_AOP_CSWAP || dt < 0 || dt > PLX_TP_ADT_DOUBLE_COMPLEX)
        return 0;
    int16_t *k = &known[kind - 1][op][dt];
    if (!*k) {
        size_t cnt = 0;
        /* a plain accumulate goes as a fetching one (plx_ofi_acc_at) */
        int rc = kind == PLX_TP_ACC_PLAIN || kind == PLX_TP_ACC_FETCH
                     ? fi_fetch_atomicvalid(plx_ofi.ep, (enum fi_datatype)dt, (enum fi_op)op, &cnt)
                     : fi_compare_atomicvalid(plx_ofi.ep, (enum fi_datatype)dt, (enum fi_op)op, &cnt);
        if (rc || cnt == 0)
            cnt = 0;
        *k = (int16_t)(PLX_MIN(cnt, (size_t)4096) + 1);
    }
    const uint64_t all = FI_ORDER_ATOMIC_RAR | FI_ORDER_ATOMIC_RAW | FI_ORDER_ATOMIC_WAR | FI_ORDER_ATOMIC_WAW;
    if ((plx_ofi.info->tx_attr->msg_order & all) == all)
        *flags |= PLX_TP_ACC_ORDERED;
    return (size_t)(*k - 1);
}

static plx_status_t plx_ofi_acc(struct plx_tp_iface *ifc, int lpid, const struct plx_tp_acc *a,
                                struct plx_tp_comp *comp)
{
    unsigned fl;
    if (a->count == 0 || a->count > plx_ofi_acc_valid(ifc, a->kind, a->op, a->dt, &fl))
        return PLX_ERR_UNSUPPORTED;
    struct plx_ofi_rpend q = { .kind = PLX_OFI_R_ACC, .raddr = a->raddr, .rkey = a->rkey, .comp = comp, .acc = *a };
    return plx_ofi_rma_submit(lpid, &q);
}

static plx_status_t plx_ofi_flush(struct plx_tp_iface *ifc, int lpid, struct plx_tp_comp *comp)
{
    struct plx_ofi_peer *p = &plx_ofi.peers[lpid];
    if (p->rma_out == 0) {
        /* nothing outstanding: completed from the poll, as every completion */
        struct plx_ofi_op *op = plx_ofi_op_get(PLX_OFI_OP_RMA);
        op->lpid = lpid;
        op->comp = comp;
        p->rma_out++;
        plx_list_push_back(&plx_ofi.rma_now, &op->link);
        return PLX_OK;
    }
    struct plx_ofi_flush *f = plx_malloc(sizeof *f);
    f->comp = comp;
    plx_list_push_back(&p->flushes, &f->link);
    return PLX_OK;
}

/* --- open and finalize ---------------------------------------------------------------------- */

static plx_status_t plx_ofi_open(const struct plx_tp_upcalls *up, int needed, struct plx_tp_iface **ifcs, int max,
                                 int *nifc)
{
    *nifc = 0;
    plx_ofi.up = up;
    if (!plx_ofi.wanted)
        return PLX_OK;
    if (!plx_ofi.early_ok) {
        /* one plain message for the job (rank 0's), each rank's at level 2;
         * said by every rank without PLEXUS_DEBUG when ofi was the only
         * transport asked for (MPI_Init then ends: no transport reaches the
         * other ranks, and the first rank to say so ends the job) */
        if (!strcmp(plx_config.transports, "ofi"))
            plx_warn("ofi: cannot be used: %s", plx_ofi.why);     /* each rank: before its own fatal */
        else
            plx_debug(plx_procs.my_lpid == 0 ? 1 : 2, "ofi: not used (the other transports carry the job): %s",
                      plx_ofi.why);
        return PLX_OK;
    }
    if (max < 1) {
        plx_ofi_close_all();
        return PLX_OK;
    }
    plx_ofi.peers = plx_calloc((size_t)plx_procs.n, sizeof *plx_ofi.peers);
    /* itself: messages through the self queue; remote memory through the
     * endpoint's own address (read from its card like any other) */
    for (int l = 0; l < plx_procs.n; l++) {
        plx_list_init(&plx_ofi.peers[l].flushes);
        plx_list_init(&plx_ofi.peers[l].rpend);
        plx_list_init(&plx_ofi.peers[l].rx_early);
    }
    /* Native remote memory needs our keys (the router's key must name the
     * region on every channel). With FI_MR_VIRT_ADDR (shm here) the router's
     * virtual address goes to the provider as it is; without it (tcp;ofi_rxm
     * and sockets answer offset addressing when asked for our keys;
     * registering at offset = address was tried in session 6: the target's
     * tcp provider refused the access and reset the connection) the origin
     * learns each region's base from its owner once (see struct
     * plx_ofi_rreg) and passes offsets. */
    plx_ofi.rma_native = plx_ofi.rma && !(plx_ofi.mr_mode & FI_MR_PROV_KEY) && !(plx_ofi.mr_mode & FI_MR_RAW);
    plx_ofi.rma_offset = plx_ofi.rma_native && !(plx_ofi.mr_mode & FI_MR_VIRT_ADDR);
    if (plx_ofi.atomic) {
        size_t cnt = 0;
        plx_ofi.atomic = fi_fetch_atomicvalid(plx_ofi.ep, FI_UINT64, FI_SUM, &cnt) == 0 && cnt >= 1 &&
                         fi_fetch_atomicvalid(plx_ofi.ep, FI_UINT64, FI_ATOMIC_WRITE, &cnt) == 0 && cnt >= 1 &&
                         fi_compare_atomicvalid(plx_ofi.ep, FI_UINT64, FI_CSWAP, &cnt) == 0 && cnt >= 1;
    }
    plx_ofi.atomic = plx_ofi.atomic && plx_ofi.rma_native;
    struct plx_tp_iface *ifc = &plx_ofi.ifc;
    ifc->ops = &plx_ofi_ops;
    ifc->comp = &plx_ofi_component;
    ifc->rail = 0;
    snprintf(ifc->name, sizeof ifc->name, "ofi");
    const char *dom = plx_ofi.info->domain_attr->name ? plx_ofi.info->domain_attr->name : "";
    snprintf(ifc->detail, sizeof ifc->detail, "%.30s %.30s", plx_ofi.prov, dom);
    /* ordered whatever the provider says: every packet to a peer is numbered
     * and the receiver delivers them in that order (fastpath.c) */
    unsigned flags = PLX_TP_RELIABLE | PLX_TP_ORDERED;
    if (plx_ofi.rma)
        flags |= PLX_TP_ZCOPY;
    if (plx_ofi.rma_native)
        flags |= PLX_TP_RMA;
    if (plx_ofi.atomic)
        flags |= PLX_TP_ATOMIC;
    ifc->caps = (struct plx_tp_caps){
        .max_packet = plx_ofi.pkt_max - sizeof(struct plx_ofi_pfx),
        .max_iov = 7,
        .eager_max = plx_ofi.eager_max,
        .eager_credit = plx_ofi.credit,
        .flags = flags,
        .latency_class = 2,     /* after shared memory and TCP: software providers here */
        .bw_class = 1,
    };
    ifcs[0] = ifc;
    *nifc = 1;
    plx_ofi.open = 1;
    plx_ofi_fp_open();
    plx_debug(1, "ofi: provider %s, domain %s; mr_mode 0x%llx, inject %zu bytes, eager up to %zu bytes, "
              "%s, %s; rendezvous %s; registration cache %s; completion wait: %s", plx_ofi.prov,
              plx_ofi.info->domain_attr->name ? plx_ofi.info->domain_attr->name : "?",
              (unsigned long long)plx_ofi.mr_mode, plx_ofi.inject_max, plx_ofi.eager_max,
              plx_ofi.tagged ? "tagged offered (not needed)" : "untagged",
              plx_ofi.atomic ? "native RMA and 64-bit atomics" : plx_ofi.rma_native ? "native RMA, no atomics" :
              "no native RMA",
              plx_ofi.rma ? "by fi_read (zero copy)" : "streamed in messages",
              plx_ofi.mrc_on ? "on" : "off", plx_ofi.cq_fd >= 0 ? "fd" : "polling");
    (void)needed;
    return PLX_OK;
}

/* BYE to every peer we sent to or heard from; wait for theirs and for our
 * sends to complete. */
static void plx_ofi_goodbye(void)
{
    int n = plx_procs.n, me = plx_procs.my_lpid;
    for (int l = 0; l < n; l++) {
        struct plx_ofi_peer *p = &plx_ofi.peers[l];
        if (l != me && (p->sent || p->heard))
            plx_ofi_ctl(l, PLX_PKT_PING, 0);
    }
    double end = plx_util_now() + PLX_OFI_BYE_TIMEOUT;
    for (;;) {
        plx_ofi_poll();
        int waiting = plx_ofi.tx_busy > 0 || plx_ofi.fp_wbusy > 0 || !plx_list_empty(&plx_ofi.ctlq);
        for (int l = 0; l < n && !waiting; l++) {
            struct plx_ofi_peer *p = &plx_ofi.peers[l];
            if (l == me)
                continue;
            if (p->heard && !p->sent) {
                p->sent = 1;    /* a peer that appeared meanwhile gets its BYE too */
                plx_ofi_ctl(l, PLX_PKT_PING, 0);
            }
            waiting = (p->sent || p->heard) && !p->bye_in;
        }
        if (!waiting)
            break;
        if (plx_util_now() > end) {
            plx_debug(1, "ofi: finalize: gave up waiting for the peers' goodbyes after %.0f s", PLX_OFI_BYE_TIMEOUT);
            break;
        }
    }
}

static void plx_ofi_finalize(void)
{
    if (plx_ofi.open) {
        /* native remote memory is no channel of the router's: its own lines */
        for (int l = 0; plx_config.stats && l < plx_procs.n; l++)
            if (plx_ofi.peers[l].st_rma_ops)
                plx_warn("stats: rank %d peer %d channel ofi: native remote memory %llu operations %llu bytes "
                         "(%llu regions asked for their base); element atomics %llu operations %llu elements",
                         plx_procs.my_lpid, l, (unsigned long long)plx_ofi.peers[l].st_rma_ops,
                         (unsigned long long)plx_ofi.peers[l].st_rma_bytes,
                         (unsigned long long)plx_ofi.peers[l].st_queries,
                         (unsigned long long)plx_ofi.peers[l].st_acc_ops,
                         (unsigned long long)plx_ofi.peers[l].st_acc_elems);
        plx_ofi_goodbye();
        plx_debug(1, "ofi: %llu rendezvous reads, %llu bytes", (unsigned long long)plx_ofi.nreads,
                  (unsigned long long)plx_ofi.nread_bytes);
    }
    plx_ofi_fp_finalize();      /* its lines, then its rings closed before the domain */
    plx_ofi_close_all();
    if (plx_ofi.info)
        fi_freeinfo(plx_ofi.info);
    plx_ofi.info = NULL;
    if (plx_ofi.peers) {
        for (int l = 0; l < plx_procs.n; l++) {
            struct plx_ofi_peer *p = &plx_ofi.peers[l];
            free(p->abuf);
            free(p->rr);
            while (p->rpend.next && !plx_list_empty(&p->rpend)) {
                struct plx_ofi_rpend *e = plx_list_entry(p->rpend.next, struct plx_ofi_rpend, link);
                plx_list_remove(&e->link);
                free(e);
            }
        }
        free(plx_ofi.peers);
    }
    free(plx_ofi.lreg);
    plx_ofi.peers = NULL;
    while (!plx_list_empty(&plx_ofi.op_free)) {
        struct plx_ofi_op *op = plx_list_entry(plx_ofi.op_free.next, struct plx_ofi_op, link);
        plx_list_remove(&op->link);
        free(op);
    }
    while (!plx_list_empty(&plx_ofi.ctlq)) {
        struct plx_ofi_ctl *c = plx_list_entry(plx_ofi.ctlq.next, struct plx_ofi_ctl, link);
        plx_list_remove(&c->link);
        free(c);
    }
    free(plx_ofi.rxbufs);
    free(plx_ofi.txbufs);
    free(plx_ofi.tx_ops);
    if (plx_ofi.busy_fd >= 0)
        close(plx_ofi.busy_fd);
    memset(&plx_ofi, 0, sizeof plx_ofi);
    plx_ofi.cq_fd = plx_ofi.busy_fd = -1;
}

/* plexus-info: which providers open an RDM endpoint here. */
static int plx_ofi_query(char *msg, size_t len)
{
    char why[256];
    if (!plx_ofi_dl_open(msg, len))
        return 0;
    struct fi_info *hints = fi_allocinfo();
    if (!hints) {
        snprintf(msg, len, "fi_allocinfo failed");
        return 0;
    }
    hints->ep_attr->type = FI_EP_RDM;
    hints->caps = FI_MSG;
    hints->mode = FI_CONTEXT | FI_CONTEXT2;
    hints->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_ENDPOINT | FI_MR_PROV_KEY;
    const char *want = plx_ofi_prov_wanted();
    if (want)
        hints->fabric_attr->prov_name = strdup(want);
    struct fi_info *all = NULL;
    int rc = fi_getinfo(PLX_OFI_API, NULL, NULL, 0, hints, &all);
    fi_freeinfo(hints);
    if (rc || !all) {
        snprintf(msg, len, "libfabric %u.%u: no provider%s%s offers FI_EP_RDM (fi_getinfo: %s)",
                 FI_MAJOR(fi_version()), FI_MINOR(fi_version()), want ? " " : "", want ? want : "", fi_strerror(-rc));
        return 0;
    }
    size_t l = (size_t)snprintf(msg, len, "libfabric %u.%u, providers that open an RDM endpoint:",
                                FI_MAJOR(fi_version()), FI_MINOR(fi_version()));
    char seen[512] = "|";
    int nok = 0;
    for (struct fi_info *f = all; f && l < len; f = f->next) {
        char tag[80];
        snprintf(tag, sizeof tag, "|%s|", f->fabric_attr->prov_name);
        if (strstr(seen, tag))
            continue;
        int ok = plx_ofi_try(f, why, sizeof why) == 0;
        plx_ofi_close_all();
        if (!ok)
            continue;
        snprintf(seen + strlen(seen), sizeof seen - strlen(seen), "%s|", f->fabric_attr->prov_name);
        l += (size_t)snprintf(msg + l, len - l, "%s %s", nok ? "," : "", f->fabric_attr->prov_name);
        nok++;
    }
    fi_freeinfo(all);
    if (!nok) {
        snprintf(msg, len, "no provider opens an RDM endpoint here");
        return 0;
    }
    if (l < len)
        snprintf(msg + l, len - l, " (used when PLEXUS_TRANSPORTS names ofi or PLEXUS_OFI_PROVIDER is set)");
    return 1;
}

static const struct plx_tp_ops plx_ofi_ops = {
    .reaches = plx_ofi_reaches,
    .send = plx_ofi_send,
    .send_zcopy = plx_ofi_send_zcopy,
    /* no direct read of a peer's memory outside registered regions: no read_remote */
    .mem_register = plx_ofi_mem_register,
    .mem_deregister = plx_ofi_mem_deregister,
    .put = plx_ofi_put,
    .get = plx_ofi_get,
    .atomic = plx_ofi_atomic,
    .acc_valid = plx_ofi_acc_valid,
    .acc = plx_ofi_acc,
    .flush = plx_ofi_flush,
};

const struct plx_tp_component plx_ofi_component = {
    .name = "ofi",
    .query = plx_ofi_query,
    .init_early = plx_ofi_init_early,
    .open = plx_ofi_open,
    .poll = plx_ofi_poll,
    .sleep_prepare = plx_ofi_sleep_prepare,
    .finalize = plx_ofi_finalize,
};
