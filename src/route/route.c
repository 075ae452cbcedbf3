/*
 * The router (see route.h): components and instances, channels per peer,
 * the rules of PLEXUS_ROUTE, striping, and the acknowledgement layer that
 * lets a peer survive the loss of a rail.
 *
 * Acknowledgements (struct plx_rel, on peers with two channels or more that
 * can fail on their own). Sender: link sequence numbers from 1; a record of
 * every packet sent (header, a copy of the payload; for zero-copy DATA a
 * reference into the sender's buffer) in lseq order until the cumulative
 * acknowledgement passes it; at most PLX_REL_WINDOW records, beyond which a
 * send is BUSY. Receiver: rcv_next (every lseq below it arrived) and a
 * bitmap of what arrived above it, within the window; a packet already seen
 * is dropped; the cumulative acknowledgement goes back as an ACK packet
 * when PLX_REL_ACK_EVERY packets are owed, or from the poll once
 * PLX_REL_ACK_DELAY has passed or it has nothing else to do (it rides in
 * no other header: the header stays 32 bytes for every transport). A zero-copy piece completes its
 * send only when it is acknowledged and no write of it is still with a
 * transport. When a channel fails, every record last sent on it goes again
 * on the channels left (same lseq; the receiver drops duplicates). Cost:
 * one copy of each eager payload per packet, on peers with several rails
 * only.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/config.h"
#include "core/log.h"
#include "core/runtime.h"
#include "pm/pm.h"
#include "pt2pt/pt2pt.h"
#include "route/route.h"
#include "transport/shm/shm.h"
#include "transport/tcp/tcp.h"
#ifdef PLX_HAVE_SCTP
#include "transport/sctp/sctp.h"
#endif
#ifdef PLX_HAVE_OFI
#include "transport/ofi/ofi.h"
#endif
#include "util/util.h"

#define PLX_REL_WINDOW 4096             /* unacknowledged packets per peer; power of two */
#define PLX_REL_ACK_EVERY 16            /* packets owed before an ACK goes alone */
#define PLX_REL_ACK_DELAY 100e-6        /* seconds an acknowledgement may wait for a packet to ride on */
#define PLX_ROUTE_RETRY 1.0             /* seconds between probes of a failed channel */
#define PLX_ROUTE_MAX_RULES 16
#define PLX_ROUTE_PIECE_MAX ((size_t)1 << 30)  /* largest DATA piece */

/* The components, in the order of preference for a tie of latency class. */
static const struct plx_tp_component *const plx_route_components[] = {
    &plx_shm_component,
    &plx_tcp_component,
#ifdef PLX_HAVE_SCTP
    &plx_sctp_component,        /* issue 13: started only when PLEXUS_TRANSPORTS or PLEXUS_ROUTE names it */
#endif
#ifdef PLX_HAVE_OFI
    &plx_ofi_component,         /* issue 14: libfabric */
#endif
};
#define PLX_ROUTE_NCOMP (sizeof plx_route_components / sizeof plx_route_components[0])


struct plx_tp_iface *plx_route_ifaces[PLX_ROUTE_MAX_IFACES];
int plx_route_nifaces;

struct plx_route_rule {
    int cls;                    /* PLX_RC_* */
    size_t lo, hi;              /* sizes it applies to, inclusive */
    char target[16];            /* instance ("tcp1") or component ("tcp") name */
    int stripe;                 /* "tcp*": every instance of the component */
    char text[64];              /* as written, for messages */
};

struct plx_rel_rec {
    struct plx_list link;       /* on its peer's unacked list, until acknowledged */
    struct plx_route_peer *rp;
    int cls;
    size_t size;
    struct plx_chan *ch;        /* where it went last; NULL: to be sent again */
    struct plx_tp_comp tc;      /* zero copy: the transport's write of it */
    struct plx_tp_comp *user;   /* zero copy: the sender's completion */
    uint8_t acked, writing;
    struct plx_hdr h;
    const char *zc;             /* zero copy: the sender's bytes */
    size_t plen;                /* copied payload */
    char payload[];
};

struct plx_rel {
    struct plx_route_peer *rp;
    int sender;                 /* we keep records (this side chose acknowledgements) */
    uint32_t next_lseq;
    struct plx_list unacked;
    int nunacked;
    int nresend;                /* records with ch == NULL */
    uint32_t rcv_next;
    uint64_t seen[PLX_REL_WINDOW / 64];
    int owed;
    double owed_since;
    struct plx_list owe_link;   /* on plx_route.owing while owed */
    struct plx_list resend_link;        /* on plx_route.resending while nresend */
};

static struct {
    int init;
    struct plx_route_peer **peers;      /* by world rank, created on first use */
    int npeers;
    struct plx_route_rule rules[PLX_ROUTE_MAX_RULES];
    int nrules;
    int ncomp;                  /* components opened */
    const struct plx_tp_component *comp[8];
    struct plx_tp_upcalls direct;       /* pt2pt's handlers: fate-shared channels */
    struct plx_tp_upcalls routed;       /* the router's wrappers of them */
    struct plx_list owing;
    struct plx_list resending;
    int ndown;                  /* channels down, over every peer */
    int nextra;                 /* peers with extra channels in use (PLEXUS_ROUTE_EXTRA_PEERS) */
    double next_probe;          /* when the poll looks for down channels to probe next */
    int singleton;              /* started without a launcher: shared memory only */
    /* what plx_route_init opens: plx_route_components, or a unit test's */
    const struct plx_tp_component *const *list;
    size_t nlist;
} plx_route = { .list = plx_route_components, .nlist = PLX_ROUTE_NCOMP };

void plx_route_use_components(const struct plx_tp_component *const *list, int n)
{
    plx_route.list = list;
    plx_route.nlist = (size_t)n;
}

int plx_route_enabled(const char *name)
{
    const char *list = plx_config.transports;
    if (!list[0])
        return 1;
    size_t n = strlen(name);
    for (const char *p = list; *p;) {
        const char *e = strchr(p, ',');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        if (len == n && !strncmp(p, name, n))
            return 1;
        p += len + (e ? 1 : 0);
    }
    return 0;
}

/* --- rules ------------------------------------------------------------------- */

static int plx_route_parse_size(const char *s, size_t *out)
{
    char *end;
    unsigned long long x = strtoull(s, &end, 0);
    if (end == s)
        return -1;
    switch (*end) {
    case 'k': case 'K': x <<= 10; end++; break;
    case 'm': case 'M': x <<= 20; end++; break;
    case 'g': case 'G': x <<= 30; end++; break;
    default: break;
    }
    if (*end == 'b' || *end == 'B')
        end++;
    if (*end)
        return -1;
    *out = (size_t)x;
    return 0;
}

static void plx_route_trim(char *s)
{
    char *b = s;
    while (*b == ' ' || *b == '\t')
        b++;
    memmove(s, b, strlen(b) + 1);
    size_t n = strlen(s);
    while (n && (s[n - 1] == ' ' || s[n - 1] == '\t'))
        s[--n] = 0;
}

/* One condition term into r; 0, or -1 (bad token). */
static int plx_route_parse_cond(char *t, struct plx_route_rule *r, int *cls_seen)
{
    plx_route_trim(t);
    if (!strcmp(t, "*"))
        return 0;
    if (!strcmp(t, "pt2pt") || !strcmp(t, "coll") || !strcmp(t, "rma")) {
        int c = t[0] == 'p' ? PLX_RC_PT2PT : t[0] == 'c' ? PLX_RC_COLL : PLX_RC_RMA;
        r->cls = *cls_seen ? r->cls | c : c;
        *cls_seen = 1;
        return 0;
    }
    if (strncmp(t, "size", 4))
        return -1;
    const char *op = t + 4;
    while (*op == ' ')
        op++;
    size_t v;
    if (!strncmp(op, "<=", 2) && !plx_route_parse_size(op + 2, &v)) {
        r->hi = PLX_MIN(r->hi, v);
    } else if (!strncmp(op, ">=", 2) && !plx_route_parse_size(op + 2, &v)) {
        r->lo = PLX_MAX(r->lo, v);
    } else if (op[0] == '<' && !plx_route_parse_size(op + 1, &v) && v > 0) {
        r->hi = PLX_MIN(r->hi, v - 1);
    } else if (op[0] == '>' && !plx_route_parse_size(op + 1, &v)) {
        r->lo = PLX_MAX(r->lo, v + 1);
    } else {
        return -1;
    }
    return 0;
}

/* PLEXUS_ROUTE into plx_route.rules; 0, or -1 with a message naming the
 * rule and the token. Targets are checked once instances are open. */
static int plx_route_parse(const char *spec, char *err, size_t errlen)
{
    char buf[sizeof plx_config.route];
    snprintf(buf, sizeof buf, "%s", spec);
    plx_route.nrules = 0;
    char *save = NULL;
    for (char *rule = strtok_r(buf, ";", &save); rule; rule = strtok_r(NULL, ";", &save)) {
        plx_route_trim(rule);
        if (!rule[0])
            continue;
        if (plx_route.nrules == PLX_ROUTE_MAX_RULES) {
            snprintf(err, errlen, "PLEXUS_ROUTE has more than %d rules", PLX_ROUTE_MAX_RULES);
            return -1;
        }
        struct plx_route_rule *r = &plx_route.rules[plx_route.nrules];
        memset(r, 0, sizeof *r);
        snprintf(r->text, sizeof r->text, "%s", rule);
        r->cls = PLX_RC_ANY;
        r->hi = SIZE_MAX;
        char *colon = strrchr(rule, ':');
        char *target = rule;
        if (colon) {
            *colon = 0;
            target = colon + 1;
            int cls_seen = 0;
            char *s2 = NULL;
            for (char *t = strtok_r(rule, "&,", &s2); t; t = strtok_r(NULL, "&,", &s2)) {
                if (plx_route_parse_cond(t, r, &cls_seen) != 0) {
                    snprintf(err, errlen, "PLEXUS_ROUTE rule \"%s\": cannot read the condition \"%s\" "
                             "(expected *, pt2pt, coll, rma or size<=N, size>=N, size<N, size>N)", r->text, t);
                    return -1;
                }
            }
        }
        plx_route_trim(target);
        size_t tl = strlen(target);
        if (tl && target[tl - 1] == '*') {
            r->stripe = 1;
            target[--tl] = 0;
        }
        int ok = tl > 0 && tl < sizeof r->target;
        for (size_t i = 0; ok && i < tl; i++)
            ok = (target[i] >= 'a' && target[i] <= 'z') || (target[i] >= '0' && target[i] <= '9');
        if (!ok) {
            snprintf(err, errlen, "PLEXUS_ROUTE rule \"%s\": \"%s%s\" is not a channel or transport name "
                     "(shm, tcp, tcp0, tcp*, ...)", r->text, target, r->stripe ? "*" : "");
            return -1;
        }
        snprintf(r->target, sizeof r->target, "%s", target);
        if (r->lo > r->hi) {
            snprintf(err, errlen, "PLEXUS_ROUTE rule \"%s\": no size satisfies its condition", r->text);
            return -1;
        }
        plx_route.nrules++;
    }
    return 0;
}

/* Issue 13: see route.h. A target names comp when it is comp itself, or
 * one of its instances: comp followed by digits (sctp0). */
int plx_route_rules_all_to(const char *comp)
{
    size_t n = strlen(comp);
    for (int k = 0; k < plx_route.nrules; k++) {
        const struct plx_route_rule *r = &plx_route.rules[k];
        if (strncmp(r->target, comp, n) || strspn(r->target + n, "0123456789") != strlen(r->target + n))
            return 0;
        if (r->cls == PLX_RC_ANY && r->lo == 0 && r->hi == SIZE_MAX)
            return 1;
    }
    return 0;
}

static int plx_route_is_component(const char *name)
{
    for (size_t i = 0; i < plx_route.nlist; i++)
        if (!strcmp(plx_route.list[i]->name, name))
            return 1;
    return 0;
}

/* Does target name this instance (by its name, or its component's)? */
static int plx_route_names(const struct plx_route_rule *r, const struct plx_tp_iface *ifc)
{
    if (r->stripe || plx_route_is_component(r->target))
        return !strcmp(r->target, ifc->comp->name);
    return !strcmp(r->target, ifc->name);
}

/* Every rule's target must be an open instance or component. */
static int plx_route_check_targets(char *err, size_t errlen)
{
    for (int k = 0; k < plx_route.nrules; k++) {
        const struct plx_route_rule *r = &plx_route.rules[k];
        int found = 0;
        for (int i = 0; i < plx_route_nifaces && !found; i++)
            found = plx_route_names(r, plx_route_ifaces[i]);
        if (!found) {
            char have[160] = "";
            for (int i = 0; i < plx_route_nifaces; i++) {
                size_t l = strlen(have);
                snprintf(have + l, sizeof have - l, "%s%s", i ? ", " : "", plx_route_ifaces[i]->name);
            }
            snprintf(err, errlen, "PLEXUS_ROUTE rule \"%s\" names \"%s%s\", which is not a transport or channel "
                     "of this process (open: %s; PLEXUS_TRANSPORTS=\"%s\")", r->text, r->target,
                     r->stripe ? "*" : "", have[0] ? have : "none", plx_config.transports);
            return -1;
        }
    }
    return 0;
}

/* --- peers and channels ----------------------------------------------------------- */

static void plx_rel_create(struct plx_route_peer *rp, int sender)
{
    struct plx_rel *rel = plx_calloc(1, sizeof *rel);
    rel->rp = rp;
    rel->sender = sender;
    rel->next_lseq = 1;
    rel->rcv_next = 1;
    plx_list_init(&rel->unacked);
    plx_list_init(&rel->owe_link);
    plx_list_init(&rel->resend_link);
    rp->rel = rel;
}

/* Issue 14, session 9: the channels of rp (a bit per index) that packets of
 * class cls may take while every channel is up: those of the rules for cls
 * up to the first that covers every size, and, if none covers them all, the
 * defaults (the control channel, and the rails of its transport that large
 * messages are striped over). */
static unsigned plx_route_class_chans(struct plx_route_peer *rp, int cls)
{
    unsigned used = 0;
    for (int k = 0; k < plx_route.nrules; k++) {
        const struct plx_route_rule *r = &plx_route.rules[k];
        if (!(r->cls & cls))
            continue;
        unsigned named = 0;
        for (int c = 0; c < rp->nchan; c++)
            if (plx_route_names(r, rp->chan[c].ifc))
                named |= 1u << c;
        used |= named;
        if (named && r->lo == 0 && r->hi == SIZE_MAX)
            return used;
    }
    for (int c = 0; c < rp->nchan; c++)
        if (&rp->chan[c] == rp->ctl || !strcmp(rp->chan[c].ifc->comp->name, rp->ctl->ifc->comp->name))
            used |= 1u << c;
    return used;
}

/* A peer with several channels where the rules give each operation class
 * exactly one, and no two of those are rails of one transport (the hybrid
 * route: two-sided over TCP, one-sided over ofi): packets of a class all
 * take one channel, in that channel's order, so the acknowledgement layer
 * (a copy of each eager payload, ACK packets, failover records) would buy
 * only failover from one transport to another, which the rules ruled out.
 * Such a peer gets none; the loss of any of its channels is the loss of the
 * peer, as with a single channel. Rails of one transport (PLEXUS_IFACES)
 * keep their failover whatever the rules say. */
static int plx_route_pinned(const struct plx_route_peer *rp)
{
    static const int cls[] = { PLX_RC_PT2PT, PLX_RC_COLL, PLX_RC_RMA };
    unsigned all = 0;
    for (size_t i = 0; i < sizeof cls / sizeof cls[0]; i++) {
        unsigned u = plx_route_class_chans((struct plx_route_peer *)rp, cls[i]);
        if (__builtin_popcount(u) != 1)
            return 0;
        all |= u;
    }
    for (int a = 0; a < rp->nchan; a++)
        for (int b = a + 1; b < rp->nchan; b++)
            if ((all >> a & 1) && (all >> b & 1) &&
                !strcmp(rp->chan[a].ifc->comp->name, rp->chan[b].ifc->comp->name))
                return 0;
    return 1;
}

static __attribute__((noinline)) struct plx_route_peer *plx_route_peer_create(int lpid)
{
    struct plx_route_peer *rp = plx_calloc(1, sizeof *rp);
    rp->lpid = lpid;
    /* every instance that reaches it; with no rule naming another transport,
     * the lowest latency class only (shared memory to a rank of this node) */
    int best = 1 << 30;
    for (int i = 0; i < plx_route_nifaces; i++) {
        struct plx_tp_iface *ifc = plx_route_ifaces[i];
        if (ifc->ops->reaches(ifc, lpid) && ifc->caps.latency_class < best)
            best = ifc->caps.latency_class;
    }
    for (int i = 0; i < plx_route_nifaces && rp->nchan < PLX_ROUTE_MAX_CHAN; i++) {
        struct plx_tp_iface *ifc = plx_route_ifaces[i];
        if (!ifc->ops->reaches(ifc, lpid))
            continue;
        int named = 0;
        for (int k = 0; k < plx_route.nrules && !named; k++)
            named = plx_route_names(&plx_route.rules[k], ifc);
        if (ifc->caps.latency_class != best && !named)
            continue;
        struct plx_chan *ch = &rp->chan[rp->nchan++];
        ch->ifc = ifc;
        ch->up = 1;
        rp->by_ifc[ifc->id] = ch;
        if (!rp->ctl || ifc->caps.latency_class < rp->ctl->ifc->caps.latency_class)
            rp->ctl = ch;
    }
    int independent = 0;
    for (int c = 0; c < rp->nchan; c++)
        independent += !(rp->chan[c].ifc->caps.flags & PLX_TP_FATE_SHARED);
    if (rp->nchan >= 2 && independent && plx_route_pinned(rp))
        rp->pinned = 1;         /* issue 14, session 9: no acknowledgements (see plx_route_pinned) */
    else if (rp->nchan >= 2 && independent)
        plx_rel_create(rp, 1);
    else if (rp->nchan == 1)
        rp->fast = rp->ctl->ifc;
    if (rp->nchan > 1 && plx_log_debug >= 1) {
        char names[128] = "";
        for (int c = 0; c < rp->nchan; c++) {
            size_t l = strlen(names);
            snprintf(names + l, sizeof names - l, "%s%s", c ? "," : "", rp->chan[c].ifc->name);
        }
        plx_debug(1, "route: rank %d has %d channels (%s)%s", lpid, rp->nchan, names,
                  rp->rel ? ", with acknowledgements" : rp->pinned ? ", one per operation class, no acknowledgements" : "");
    }
    plx_route.peers[lpid] = rp;
    return rp;
}

struct plx_route_peer *plx_route_peer(int lpid)
{
    struct plx_route_peer *rp = plx_route.peers[lpid];
    return plx_likely(rp != NULL) ? rp : plx_route_peer_create(lpid);
}

const struct plx_tp_caps *plx_route_caps(struct plx_route_peer *rp)
{
    return &rp->ctl->ifc->caps;
}

struct plx_tp_iface *plx_route_reader(struct plx_route_peer *rp)
{
    for (int c = 0; c < rp->nchan; c++)
        if ((rp->chan[c].ifc->caps.flags & PLX_TP_READ) && rp->chan[c].up)
            return rp->chan[c].ifc;
    return NULL;
}

/* The first working channel of rp that r names, or NULL. */
static struct plx_chan *plx_route_rule_chan(struct plx_route_peer *rp, const struct plx_route_rule *r)
{
    for (int c = 0; c < rp->nchan; c++)
        if (rp->chan[c].up && plx_route_names(r, rp->chan[c].ifc))
            return &rp->chan[c];
    return NULL;
}

static const struct plx_route_rule *plx_route_match(struct plx_route_peer *rp, int cls, size_t size)
{
    for (int k = 0; k < plx_route.nrules; k++) {
        const struct plx_route_rule *r = &plx_route.rules[k];
        if ((r->cls & cls) && size >= r->lo && size <= r->hi && plx_route_rule_chan(rp, r))
            return r;
    }
    return NULL;
}

/* The channel for one packet of a message of `size` bytes (0: control). A
 * rule whose channels are all down is passed over; with none left, any
 * working channel (failover comes before the rules). */
static struct plx_chan *plx_route_pick(struct plx_route_peer *rp, int cls, size_t size)
{
    const struct plx_route_rule *r = plx_route_match(rp, cls, size);
    if (r)
        return plx_route_rule_chan(rp, r);
    if (rp->ctl && rp->ctl->up)
        return rp->ctl;
    for (int c = 0; c < rp->nchan; c++)
        if (rp->chan[c].up)
            return &rp->chan[c];
    return NULL;
}

/* Issue 14: the instance that does rp's remote-memory operations of `size`
 * bytes natively (PLX_TP_RMA, and PLX_TP_ATOMIC for an atomic), or NULL:
 * the active-message fallback (rma_am.c) then carries them over the channel
 * the rules pick. The first rule for the rma class that matches decides: a
 * native instance it names, else its (non-native) channel. With no rule,
 * native remote memory wins whenever an instance that reaches the peer has
 * it, even one that is not among the peer's message channels (ofi is slower
 * than shm or TCP for messages here, but one-sided operations need no
 * target involvement). */
struct plx_tp_iface *plx_route_rma_native(struct plx_route_peer *rp, size_t size, int atomic)
{
    unsigned need = PLX_TP_RMA | (atomic ? PLX_TP_ATOMIC : 0);
    if (rp->lpid == plx_procs.my_lpid)
        return NULL;            /* oneself: through the fallback's self-delivery, no fabric loopback */
    for (int k = 0; k < plx_route.nrules; k++) {
        const struct plx_route_rule *r = &plx_route.rules[k];
        if (!(r->cls & PLX_RC_RMA) || size < r->lo || size > r->hi)
            continue;
        for (int i = 0; i < plx_route_nifaces; i++) {
            struct plx_tp_iface *ifc = plx_route_ifaces[i];
            if ((ifc->caps.flags & need) == need && plx_route_names(r, ifc) && ifc->ops->reaches(ifc, rp->lpid))
                return ifc;
        }
        if (plx_route_rule_chan(rp, r))
            return NULL;
    }
    for (int i = 0; i < plx_route_nifaces; i++) {
        struct plx_tp_iface *ifc = plx_route_ifaces[i];
        if ((ifc->caps.flags & need) == need && ifc->ops->reaches(ifc, rp->lpid))
            return ifc;
    }
    return NULL;
}

/* Extra channels (the rails beyond a peer's first) cost a connection, memory
 * and descriptors at both ends: a peer gets them for striping only once this
 * process has sent it PLEXUS_ROUTE_EXTRA_BYTES, and at most
 * PLEXUS_ROUTE_EXTRA_PEERS peers get them (the first to get there; MVAPICH's
 * Aptus idea). Until then its messages go over one channel; failover may
 * use any. */
static int plx_route_extra_ok(struct plx_route_peer *rp)
{
    if (plx_likely(rp->extra))
        return 1;
    if (rp->sent_bytes < plx_config.route_extra_bytes || plx_route.nextra >= plx_config.route_extra_peers)
        return 0;
    rp->extra = 1;
    plx_route.nextra++;
    plx_debug(1, "route: rank %d's messages are striped over its %d channels from now on (%d of at most %d "
              "peers)", rp->lpid, rp->nchan, plx_route.nextra, plx_config.route_extra_peers);
    return 1;
}

/* The channels a message of `size` is striped over (working ones only). */
static int plx_route_stripe_set(struct plx_route_peer *rp, int cls, size_t size, struct plx_chan **set)
{
    int n = 0;
    const struct plx_route_rule *r = plx_route_match(rp, cls, size);
    if (r && !r->stripe) {
        set[0] = plx_route_rule_chan(rp, r);
        return 1;
    }
    if (!r && !plx_route_extra_ok(rp)) {     /* (a rule that stripes does so at once) */
        set[0] = plx_route_pick(rp, cls, size);
        return set[0] != NULL;
    }
    const char *comp = r ? r->target : NULL;
    if (!comp) {
        struct plx_chan *one = plx_route_pick(rp, cls, size);
        if (!one)
            return 0;
        if (size < plx_config.route_stripe_min) {
            set[0] = one;
            return 1;
        }
        comp = one->ifc->comp->name;
    }
    for (int c = 0; c < rp->nchan; c++)
        if (rp->chan[c].up && !strcmp(rp->chan[c].ifc->comp->name, comp))
            set[n++] = &rp->chan[c];
    return n;
}

/* --- acknowledgements: receiving ------------------------------------------------ */

static inline int plx_rel_bit(const struct plx_rel *rel, uint32_t lseq)
{
    return (rel->seen[(lseq / 64) % (PLX_REL_WINDOW / 64)] >> (lseq % 64)) & 1;
}

/* Has lseq arrived already? */
static int plx_rel_dup(const struct plx_rel *rel, uint32_t lseq)
{
    int32_t d = (int32_t)(lseq - rel->rcv_next);
    return d < 0 || (d < PLX_REL_WINDOW && plx_rel_bit(rel, lseq));
}

/* The record is acknowledged and no transport holds it: complete its send. */
static void plx_rel_retire(struct plx_rel_rec *rec)
{
    if (rec->user) {
        struct plx_tp_comp *u = rec->user;
        rec->user = NULL;
        plx_tp_comp_done(u, PLX_OK);
    }
    free(rec);
}

static void plx_rel_acked(struct plx_route_peer *rp, uint32_t ack)
{
    struct plx_rel *rel = rp->rel;
    while (!plx_list_empty(&rel->unacked)) {
        struct plx_rel_rec *rec = plx_list_entry(rel->unacked.next, struct plx_rel_rec, link);
        if ((int32_t)(rec->h.lseq - ack) >= 0)
            break;
        plx_debug(3, "route: rank %d acknowledged lseq %u (ack %u)", rp->lpid, rec->h.lseq, ack);
        plx_list_remove(&rec->link);
        rel->nunacked--;
        if (!rec->ch)
            rel->nresend--;
        rec->acked = 1;
        if (!rec->writing)
            plx_rel_retire(rec);
    }
    if (!rel->nresend)
        plx_list_remove(&rel->resend_link);
}

/* Sends what is owed alone, on any working channel. */
static void plx_rel_send_ack(struct plx_route_peer *rp)
{
    struct plx_chan *ch = plx_route_pick(rp, PLX_RC_PT2PT, 0);
    if (!ch)
        return;
    struct plx_hdr h = { .type = PLX_PKT_ACK, .sreq = rp->rel->rcv_next };
    if (ch->ifc->ops->send(ch->ifc, rp->lpid, &h, NULL, 0) == PLX_OK) {
        rp->st_acks_sent++;
        rp->rel->owed = 0;
        plx_list_remove(&rp->rel->owe_link);
    }
}

/* Acknowledgement fields of an arriving packet. Returns 0 when the packet
 * goes no further (a duplicate, or the router's own). `mark`: record its
 * arrival now (else only check: a DATA payload about to be placed). */
static int plx_rel_in(struct plx_route_peer *rp, const struct plx_hdr *h, int mark)
{
    if (!rp->rel)
        plx_rel_create(rp, 0);
    struct plx_rel *rel = rp->rel;
    if (h->type == PLX_PKT_ACK && mark) {
        rp->st_acks_recv++;
        plx_rel_acked(rp, (uint32_t)h->sreq);
    }
    if (!h->lseq)
        return h->type != PLX_PKT_ACK && h->type != PLX_PKT_PING;
    if (plx_rel_dup(rel, h->lseq))
        return 0;
    if (!mark)
        return 1;
    int32_t d = (int32_t)(h->lseq - rel->rcv_next);
    if (d >= PLX_REL_WINDOW)
        plx_fatal("route: packet %u from rank %d is beyond the acknowledgement window (expected from %u)",
                  h->lseq, rp->lpid, rel->rcv_next);
    rel->seen[(h->lseq / 64) % (PLX_REL_WINDOW / 64)] |= 1ull << (h->lseq % 64);
    while (plx_rel_bit(rel, rel->rcv_next)) {
        rel->seen[(rel->rcv_next / 64) % (PLX_REL_WINDOW / 64)] &= ~(1ull << (rel->rcv_next % 64));
        rel->rcv_next++;
    }
    if (rel->owed++ == 0) {
        rel->owed_since = plx_util_now();
        plx_list_push_back(&plx_route.owing, &rel->owe_link);
    }
    if (rel->owed >= PLX_REL_ACK_EVERY)
        plx_rel_send_ack(rp);
    return 1;
}

static inline struct plx_chan *plx_route_chan_of(struct plx_route_peer *rp, struct plx_tp_iface *ifc)
{
    return rp->by_ifc[ifc->id];
}

static void plx_route_count_in(struct plx_route_peer *rp, struct plx_tp_iface *ifc, const struct plx_hdr *h)
{
    struct plx_chan *ch = plx_route_chan_of(rp, ifc);
    if (!ch)
        return;
    ch->st_recv_pkts++;
    if (h->type == PLX_PKT_EAGER || h->type == PLX_PKT_DATA)
        ch->st_recv_bytes += h->len;
}

static void plx_route_recv_slow(struct plx_tp_iface *ifc, int lpid, const struct plx_hdr *h, const void *payload);

/* A fast peer's packets (one channel, no acknowledgements) go straight to
 * pt2pt, whose counters are then the channel's: one indirect call more than
 * a transport calling pt2pt itself, nothing else (TCP, 1-byte streaming). */
static void plx_route_recv(struct plx_tp_iface *ifc, int lpid, const struct plx_hdr *h, const void *payload)
{
    struct plx_route_peer *rp = plx_route.peers[lpid];
    if (plx_likely(rp && rp->fast && !h->lseq && h->type < PLX_PKT_ACK)) {
        plx_route.direct.recv[h->type](ifc, lpid, h, payload);
        return;
    }
    plx_route_recv_slow(ifc, lpid, h, payload);
}

static __attribute__((noinline)) void plx_route_recv_slow(struct plx_tp_iface *ifc, int lpid, const struct plx_hdr *h,
                                                          const void *payload)
{
    struct plx_route_peer *rp = plx_route_peer(lpid);
    if (plx_unlikely(rp->lost))
        return;                 /* a peer given up on: what it still sends is not trusted */
    plx_route_count_in(rp, ifc, h);
    if (plx_unlikely(h->lseq | (h->type >= PLX_PKT_ACK && h->type <= PLX_PKT_PING)) &&
        !plx_rel_in(rp, h, 1))
        return;
    plx_route.direct.recv[h->type](ifc, lpid, h, payload);
}

static void *plx_route_place(struct plx_tp_iface *ifc, int lpid, const struct plx_hdr *h, size_t *fit_p)
{
    struct plx_route_peer *rp = plx_route_peer(lpid);
    if (plx_unlikely(rp->lost) || (h->lseq && !plx_rel_in(rp, h, 0))) {
        plx_debug(3, "route: DATA lseq %u off %llu from rank %d over %s: duplicate", h->lseq,
                  (unsigned long long)h->off, lpid, ifc->name);
        *fit_p = 0;             /* a duplicate: read and dropped */
        return NULL;
    }
    return plx_route.direct.place(ifc, lpid, h, fit_p);
}

static void plx_route_placed(struct plx_tp_iface *ifc, int lpid, const struct plx_hdr *h)
{
    struct plx_route_peer *rp = plx_route_peer(lpid);
    if (plx_unlikely(rp->lost))
        return;
    plx_route_count_in(rp, ifc, h);
    if (h->lseq && !plx_rel_in(rp, h, 1))
        return;
    plx_debug(3, "route: DATA lseq %u off %llu len %llu from rank %d over %s: placed", h->lseq,
              (unsigned long long)h->off, (unsigned long long)h->len, lpid, ifc->name);
    plx_route.direct.placed(ifc, lpid, h);
}

/* --- acknowledgements: sending ------------------------------------------------------ */

static void plx_rel_write_done(struct plx_tp_comp *c)
{
    struct plx_rel_rec *rec = plx_container_of(c, struct plx_rel_rec, tc);
    rec->writing = 0;
    if (rec->acked)
        plx_rel_retire(rec);
}

/* (Re)sends a record on ch. */
/* PLEXUS_STATS: one packet of class cls (PLX_RC_*) and its payload bytes sent on ch. */
static inline void plx_route_count_cls(struct plx_chan *ch, int cls, uint64_t bytes)
{
    int i = cls == PLX_RC_PT2PT ? 0 : cls == PLX_RC_COLL ? 1 : 2;
    ch->st_cls_pkts[i]++;
    ch->st_cls_bytes[i] += bytes;
}

static plx_status_t plx_rel_emit(struct plx_route_peer *rp, struct plx_rel_rec *rec, struct plx_chan *ch)
{
    struct plx_tp_iface *ifc = ch->ifc;
    plx_status_t st;
    if (rec->zc) {
        struct iovec v = { (void *)rec->zc, rec->h.len };
        rec->tc.cb = plx_rel_write_done;
        rec->tc.count = 1;
        rec->tc.status = PLX_OK;
        st = ifc->ops->send_zcopy(ifc, rp->lpid, &rec->h, &v, 1, &rec->tc);
        if (st == PLX_OK)
            rec->writing = 1;
    } else {
        struct iovec v = { rec->payload, rec->plen };
        st = ifc->ops->send(ifc, rp->lpid, &rec->h, &v, rec->plen ? 1 : 0);
    }
    if (st != PLX_OK)
        return st;
    plx_debug(3, "route: %s type %d lseq %u off %llu to rank %d over %s", rec->ch ? "resend" : "send", rec->h.type,
              rec->h.lseq, (unsigned long long)rec->h.off, rp->lpid, ch->ifc->name);
    rec->ch = ch;
    ch->st_sent_pkts++;
    if (rec->h.type == PLX_PKT_EAGER || rec->h.type == PLX_PKT_DATA)
        ch->st_sent_bytes += rec->h.len;
    plx_route_count_cls(ch, rec->cls, rec->zc ? rec->h.len : rec->plen);
    return PLX_OK;
}

static struct plx_rel_rec *plx_rel_rec_new(struct plx_route_peer *rp, int cls, size_t size,
                                           const struct plx_hdr *h, const struct iovec *iov, int iovcnt)
{
    size_t plen = 0;
    for (int i = 0; i < iovcnt; i++)
        plen += iov[i].iov_len;
    struct plx_rel_rec *rec = plx_malloc(sizeof *rec + plen);
    memset(rec, 0, sizeof *rec);
    plx_list_init(&rec->link);
    rec->rp = rp;
    rec->cls = cls;
    rec->size = size;
    rec->h = *h;
    rec->h.lseq = rp->rel->next_lseq;
    rec->plen = plen;
    size_t off = 0;
    for (int i = 0; i < iovcnt; i++) {
        memcpy(rec->payload + off, iov[i].iov_base, iov[i].iov_len);
        off += iov[i].iov_len;
    }
    return rec;
}

static void plx_rel_track(struct plx_route_peer *rp, struct plx_rel_rec *rec)
{
    struct plx_rel *rel = rp->rel;
    rel->next_lseq++;
    if (rel->next_lseq == 0)
        rel->next_lseq = 1;     /* 0 means "not tracked" */
    plx_list_push_back(&rel->unacked, &rec->link);
    rel->nunacked++;
}

plx_status_t plx_route_send_slow(struct plx_route_peer *rp, int cls, size_t size, const struct plx_hdr *h,
                                 const struct iovec *iov, int iovcnt)
{
    if (plx_unlikely(rp->lost))
        return PLX_OK;          /* dropped: pt2pt fails what depended on it */
    struct plx_chan *ch = plx_route_pick(rp, cls, size);
    if (!ch)
        return PLX_BUSY;        /* every channel is down: the last failure reports the peer */
    struct plx_rel *rel = rp->rel;
    if (h->type == PLX_PKT_EAGER)
        rp->sent_bytes += h->len;
    if (!rel || !rel->sender) {
        plx_status_t st = ch->ifc->ops->send(ch->ifc, rp->lpid, h, iov, iovcnt);
        if (st == PLX_OK) {
            ch->st_sent_pkts++;
            if (h->type == PLX_PKT_EAGER || h->type == PLX_PKT_DATA)
                ch->st_sent_bytes += h->len;
            size_t plen = 0;
            for (int i = 0; i < iovcnt; i++)
                plen += iov[i].iov_len;
            plx_route_count_cls(ch, cls, plen);
        }
        return st;
    }
    if (rel->nunacked >= PLX_REL_WINDOW || rel->nresend)
        return PLX_BUSY;        /* (resends go first: their order is older) */
    struct plx_rel_rec *rec = plx_rel_rec_new(rp, cls, size, h, iov, iovcnt);
    plx_status_t st = plx_rel_emit(rp, rec, ch);
    if (st != PLX_OK) {
        free(rec);
        return st;
    }
    plx_rel_track(rp, rec);
    return PLX_OK;
}

/* The channel of the set with the least data not yet on the wire, if it has
 * room for another piece; NULL when all are full. */
static struct plx_chan *plx_route_least_backlog(struct plx_route_peer *rp, struct plx_chan **set, int n,
                                                size_t room)
{
    struct plx_chan *best = NULL;
    size_t best_b = SIZE_MAX;
    for (int i = 0; i < n; i++) {
        struct plx_tp_iface *ifc = set[i]->ifc;
        size_t b = ifc->ops->backlog ? ifc->ops->backlog(ifc, rp->lpid) : 0;
        if (b < best_b) {
            best_b = b;
            best = set[i];
        }
    }
    return best && best_b < room ? best : NULL;
}

plx_status_t plx_route_send_data(struct plx_route_peer *rp, int cls, size_t size, struct plx_hdr *h, const char *buf,
                                 size_t *done, struct plx_tp_comp *comp)
{
    if (plx_unlikely(rp->lost)) {
        *done = size;           /* dropped: pt2pt fails the send */
        return PLX_OK;
    }
    struct plx_chan *set[PLX_ROUTE_MAX_CHAN];
    int n = plx_route_stripe_set(rp, cls, size, set);
    if (n == 0)
        return PLX_BUSY;
    for (int i = 0; i < n; i++)
        if (!set[i]->ifc->ops->send_zcopy)
            return PLX_ERR_UNSUPPORTED;
    struct plx_rel *rel = rp->rel && rp->rel->sender ? rp->rel : NULL;
    /* one channel without acknowledgements: the whole message in one piece
     * (below 4 GiB: the header's length is 32 bits) */
    size_t chunk = n > 1 || rel ? PLX_MIN(PLX_MAX(plx_config.route_chunk, (size_t)4096), PLX_ROUTE_PIECE_MAX)
                                : PLX_ROUTE_PIECE_MAX;
    static unsigned test_pieces;        /* PLEXUS_TEST_ZCOPY_FAIL */
    while (*done < size) {
        struct plx_chan *ch = n == 1 ? set[0] : plx_route_least_backlog(rp, set, n, 2 * chunk);
        if (!ch)
            return PLX_BUSY;
        if (plx_unlikely(plx_config.test_zcopy_fail > 0) && ++test_pieces % (unsigned)plx_config.test_zcopy_fail == 0)
            return PLX_ERR_IO;
        if (rel && (rel->nunacked >= PLX_REL_WINDOW || rel->nresend))
            return PLX_BUSY;
        size_t len = PLX_MIN(chunk, size - *done);
        h->off = *done;
        h->len = (uint32_t)len;
        rp->sent_bytes += len;
        if (rel) {
            struct plx_rel_rec *rec = plx_rel_rec_new(rp, cls, size, h, NULL, 0);
            rec->zc = buf + *done;
            rec->user = comp;
            comp->count++;
            if (plx_rel_emit(rp, rec, ch) != PLX_OK) {
                comp->count--;
                free(rec);
                return PLX_BUSY;
            }
            plx_rel_track(rp, rec);
        } else {
            struct iovec v = { (void *)(buf + *done), len };
            comp->count++;
            plx_status_t st = ch->ifc->ops->send_zcopy(ch->ifc, rp->lpid, h, &v, 1, comp);
            if (st != PLX_OK) {
                comp->count--;
                return st;
            }
            if (!rp->fast) {
                ch->st_sent_pkts++;
                ch->st_sent_bytes += len;
                plx_route_count_cls(ch, cls, len);
            }
        }
        *done += len;
    }
    return PLX_OK;
}

/* Sends again what was waiting for a working channel, oldest first. */
static int plx_rel_resend(struct plx_route_peer *rp)
{
    struct plx_rel *rel = rp->rel;
    int work = 0;
    struct plx_list *pos;
    plx_list_for_each(pos, &rel->unacked) {
        if (!rel->nresend)
            break;
        struct plx_rel_rec *rec = plx_list_entry(pos, struct plx_rel_rec, link);
        if (rec->ch)
            continue;
        struct plx_chan *ch;
        if (rec->h.type == PLX_PKT_DATA) {
            struct plx_chan *set[PLX_ROUTE_MAX_CHAN];
            int n = plx_route_stripe_set(rp, rec->cls, rec->size, set);
            ch = n ? plx_route_least_backlog(rp, set, n, SIZE_MAX) : NULL;
        } else {
            ch = plx_route_pick(rp, rec->cls, rec->h.type == PLX_PKT_EAGER ? rec->size : 0);
        }
        if (!ch || plx_rel_emit(rp, rec, ch) != PLX_OK)
            break;
        ch->st_resent_bytes += rec->h.type == PLX_PKT_EAGER || rec->h.type == PLX_PKT_DATA ? rec->h.len : 0;
        rel->nresend--;
        work++;
    }
    if (!rel->nresend)
        plx_list_remove(&rel->resend_link);
    return work;
}

/* --- channels failing and coming back ------------------------------------------------------ */

static void plx_route_link_up(struct plx_tp_iface *ifc, int lpid)
{
    struct plx_route_peer *rp = plx_route_peer(lpid);
    struct plx_chan *ch = plx_route_chan_of(rp, ifc);
    if (!ch || ch->up || rp->lost)
        return;
    ch->up = 1;
    plx_route.ndown--;
    plx_debug(1, "route: channel %s to rank %d works again", ifc->name, lpid);
}

static void plx_route_link_failed(struct plx_tp_iface *ifc, int lpid, const char *why, int ended)
{
    struct plx_route_peer *rp = plx_route_peer(lpid);
    struct plx_chan *ch = plx_route_chan_of(rp, ifc);
    if (rp->lost)
        return;
    int was_up = ch && ch->up;
    if (was_up) {
        ch->up = 0;
        plx_route.ndown++;
    }
    if (ch) {
        ch->retry_at = plx_util_now() + PLX_ROUTE_RETRY;
        free(ch->why);
        ch->why = plx_strdup(why);
    }
    int left = 0;
    for (int c = 0; c < rp->nchan; c++)
        left += rp->chan[c].up;
    if (rp->pinned && was_up) {
        /* one channel per class, no acknowledgements: nothing to resend */
        rp->lost = 1;
        rp->fast = NULL;
        char msg[1024];
        snprintf(msg, sizeof msg, "channel %s to rank %d failed (%s); each operation class has one channel "
                 "to it (PLEXUS_ROUTE), so there is no failover", ifc->name, lpid, why);
        plx_pt2pt_peer_lost(lpid, msg, ended);
        return;
    }
    if (!left) {
        rp->lost = 1;
        rp->fast = NULL;        /* from now on sends reach the router, which drops them */
        if (rp->nchan < 2) {
            plx_pt2pt_peer_lost(lpid, why, ended);
            return;
        }
        /* every channel's account, on one line: ranks, hosts and each address */
        char msg[4096];
        size_t l = (size_t)snprintf(msg, sizeof msg, "all %d channels to rank %d failed:", rp->nchan, lpid);
        for (int c = 0; c < rp->nchan && l < sizeof msg; c++)
            l += (size_t)snprintf(msg + l, sizeof msg - l, "%s %s: %s", c ? ";" : "", rp->chan[c].ifc->name,
                                  rp->chan[c].why ? rp->chan[c].why : "(no account)");
        plx_pt2pt_peer_lost(lpid, msg, ended);
        return;
    }
    if (!was_up) {             /* a probe of a channel that is down found it still down */
        plx_debug(1, "route: channel %s to rank %d is still down (%s)", ifc->name, lpid, why);
        return;
    }
    plx_warn("route: channel %s to rank %d failed (%s); its traffic goes on over the %d other channel%s", ifc->name,
             lpid, why, left, left > 1 ? "s" : "");
    struct plx_rel *rel = rp->rel;
    if (!rel || !rel->sender)
        return;
    /* what it did not deliver goes again on the others */
    struct plx_list *pos;
    plx_list_for_each(pos, &rel->unacked) {
        struct plx_rel_rec *rec = plx_list_entry(pos, struct plx_rel_rec, link);
        if (rec->ch != ch)
            continue;
        rec->ch = NULL;
        rec->writing = 0;       /* the transport dropped it and will not report it */
        rel->nresend++;
        plx_debug(3, "route: lseq %u to rank %d goes again", rec->h.lseq, lpid);
    }
    if (rel->nresend && plx_list_empty(&rel->resend_link))
        plx_list_push_back(&plx_route.resending, &rel->resend_link);
    plx_rel_resend(rp);
}

/* Down channels whose time has come are probed with a PING: the transport
 * connects again, and link_up (or link_failed) follows. */
static int plx_route_probe_down(double now)
{
    int work = 0;
    for (int lpid = 0; lpid < plx_route.npeers; lpid++) {
        struct plx_route_peer *rp = plx_route.peers[lpid];
        if (!rp || rp->lost)
            continue;
        for (int c = 0; c < rp->nchan; c++) {
            struct plx_chan *ch = &rp->chan[c];
            if (ch->up || now < ch->retry_at)
                continue;
            ch->retry_at = now + PLX_ROUTE_RETRY;
            struct plx_hdr h = { .type = PLX_PKT_PING };
            ch->ifc->ops->send(ch->ifc, lpid, &h, NULL, 0);
            work++;
        }
    }
    return work;
}

/* --- progress ---------------------------------------------------------------------- */

int plx_route_poll(void)
{
    int work = 0;
    for (int i = 0; i < plx_route.ncomp; i++)
        work += plx_route.comp[i]->poll();
    work += plx_route_rma_poll();
    if (plx_likely(plx_list_empty(&plx_route.owing) && plx_list_empty(&plx_route.resending) && !plx_route.ndown))
        return work;
    double now = plx_util_now();
    struct plx_list *pos, *n;
    plx_list_for_each_safe(pos, n, &plx_route.resending) {
        struct plx_rel *rel = plx_container_of(pos, struct plx_rel, resend_link);
        work += plx_rel_resend(rel->rp);
    }
    plx_list_for_each_safe(pos, n, &plx_route.owing) {
        struct plx_rel *rel = plx_container_of(pos, struct plx_rel, owe_link);
        if (now - rel->owed_since < PLX_REL_ACK_DELAY && work)
            continue;
        plx_rel_send_ack(rel->rp);
    }
    if (plx_route.ndown && now >= plx_route.next_probe) {
        plx_route.next_probe = now + PLX_ROUTE_RETRY / 4;
        work += plx_route_probe_down(now);
    }
    return work;
}

int plx_route_sleep_prepare(int *fds, int max)
{
    int n = 0;
    for (int i = 0; i < plx_route.ncomp && n < max; i++) {
        if (!plx_route.comp[i]->sleep_prepare)
            continue;
        int fd = plx_route.comp[i]->sleep_prepare();
        if (fd >= 0)
            fds[n++] = fd;
    }
    return n;
}

void plx_route_sleep_done(void)
{
    for (int i = 0; i < plx_route.ncomp; i++)
        if (plx_route.comp[i]->sleep_done)
            plx_route.comp[i]->sleep_done();
}

int plx_route_cpu_shared(void)
{
    for (int i = 0; i < plx_route.ncomp; i++)
        if (plx_route.comp[i]->cpu_shared && plx_route.comp[i]->cpu_shared())
            return 1;
    return 0;
}

/* --- start-up and finalize -------------------------------------------------------- */

/* Is component c needed by this job? Shared memory carries self-sends, so it
 * runs even when excluded for a lone rank of a node; TCP is needed for ranks
 * on other nodes, and for the ranks of this node when shared memory is
 * excluded (self-sends included), or when a rule names it. */
static int plx_route_needed(const struct plx_tp_component *c)
{
    if (!strcmp(c->name, "shm"))
        return plx_route_enabled("shm") || plx_procs.nlocal == 1;
    int named = 0;
    for (int k = 0; k < plx_route.nrules; k++)
        named |= !strcmp(plx_route.rules[k].target, c->name) ||
                 !strncmp(plx_route.rules[k].target, c->name, strlen(c->name));
    return plx_procs.nlocal < plx_procs.n || (!plx_route_enabled("shm") && plx_procs.nlocal > 1) ||
           (named && plx_procs.n > 1);
}

plx_status_t plx_route_init_early(int singleton)
{
    char err[400];
    plx_route.singleton = singleton;
    if (plx_route_parse(plx_config.route, err, sizeof err) != 0) {
        fprintf(stderr, "plexus: MPI_Init: %s\n", err);
        return PLX_ERR_ARG;
    }
    for (size_t i = 0; i < plx_route.nlist; i++) {
        const struct plx_tp_component *c = plx_route.list[i];
        if (c->init_early && plx_route_enabled(c->name) && !(singleton && strcmp(c->name, "shm")))
            c->init_early();
    }
    return PLX_OK;
}

/* "node NAME" of a rank, from its PMI card "c<rank>" = "<node>,<pid>". */
static void plx_route_node_name(int lpid, char *buf, size_t len)
{
    char key[PLX_PM_MAX_KEY], val[PLX_PM_MAX_VAL];
    snprintf(key, sizeof key, "c%d", lpid);
    if (plx_pm_get(key, val, sizeof val) != PLX_OK) {
        snprintf(buf, len, "node %d", plx_procs.p[lpid].node_id);
        return;
    }
    char *comma = strrchr(val, ',');
    if (comma)
        *comma = 0;
    snprintf(buf, len, "node %.200s", val);
}

/* The names in PLEXUS_TRANSPORTS that this library has no component for,
 * said as "sctp is not built into this library" (a transport of Plexus's
 * that the build left out) or "\"foo\" is not a transport"; "" if none. */
static void plx_route_unbuilt(char *buf, size_t len)
{
    static const char *const known[] = { "shm", "tcp", "sctp", "ofi" };
    size_t l = 0;
    buf[0] = 0;
    for (const char *p = plx_config.transports; *p && l < len;) {
        size_t n = strcspn(p, ",");
        int have = 0, ours = 0;
        for (size_t i = 0; i < plx_route.nlist; i++)
            have |= strlen(plx_route.list[i]->name) == n && !strncmp(plx_route.list[i]->name, p, n);
        for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
            ours |= strlen(known[i]) == n && !strncmp(known[i], p, n);
        if (!have && n)
            l += (size_t)snprintf(buf + l, len - l, ours ? "%s%.*s is not built into this library" :
                                  "%s\"%.*s\" is not a transport", l ? "; " : "", (int)n, p);
        p += n + (p[n] == ',');
    }
}

/* Ends the job, naming both ranks and nodes, if some rank is reached by no
 * instance (instead of a hang later in a barrier that can never complete).
 * O(ranks x instances), no memory: reaches() must not connect. */
static void plx_route_check(void)
{
    char unbuilt[200];
    plx_route_unbuilt(unbuilt, sizeof unbuilt);
    for (int lpid = 0; lpid < plx_procs.n; lpid++) {
        int ok = 0;
        for (int i = 0; i < plx_route_nifaces && !ok; i++)
            ok = plx_route_ifaces[i]->ops->reaches(plx_route_ifaces[i], lpid);
        if (ok)
            continue;
        char me[256], him[256], have[64] = "", net[64] = "";
        plx_route_node_name(plx_procs.my_lpid, me, sizeof me);
        plx_route_node_name(lpid, him, sizeof him);
        for (int i = 0; i < plx_route.ncomp; i++) {
            size_t l = strlen(have);
            snprintf(have + l, sizeof have - l, "%s%s", i ? "," : "", plx_route.comp[i]->name);
        }
        for (size_t i = 0; i < plx_route.nlist; i++) {   /* what reaches other nodes: all but shm */
            size_t l = strlen(net);
            if (!(plx_route.list[i]->flags & PLX_TP_FATE_SHARED))
                snprintf(net + l, sizeof net - l, "%s%s", l ? " or " : "", plx_route.list[i]->name);
        }
        plx_fatal("MPI_Init: no transport reaches rank %d (%s) from rank %d (%s); transports in use: %s "
                  "(PLEXUS_TRANSPORTS=\"%s\"%s%s). Ranks on different nodes need %s",
                  lpid, him, plx_procs.my_lpid, me, have[0] ? have : "none", plx_config.transports,
                  unbuilt[0] ? ": " : "", unbuilt, net[0] ? net : "a network transport");
    }
    if (unbuilt[0] && plx_procs.my_lpid == 0)
        plx_warn("MPI_Init: PLEXUS_TRANSPORTS=\"%s\": %s (plexus-info lists the transports of this build)",
                 plx_config.transports, unbuilt);
}

plx_status_t plx_route_init(void)
{
    plx_pt2pt_upcalls(&plx_route.direct);
    plx_route_rma_upcalls(&plx_route.direct);
    plx_route.direct.link_up = plx_route_link_up;
    plx_route.direct.link_failed = plx_route_link_failed;
    plx_route.direct.peer_failed = plx_pt2pt_peer_failed;
    plx_route.routed = plx_route.direct;
    for (int t = 0; t < PLX_PKT_TYPE_MAX; t++)
        plx_route.routed.recv[t] = plx_route_recv;
    plx_route.routed.place = plx_route_place;
    plx_route.routed.placed = plx_route_placed;
    plx_list_init(&plx_route.owing);
    plx_list_init(&plx_route.resending);
    plx_route.npeers = plx_procs.n;
    plx_route.peers = plx_calloc((size_t)plx_procs.n, sizeof *plx_route.peers);

    for (size_t i = 0; i < plx_route.nlist && plx_route.ncomp < 8; i++) {
        const struct plx_tp_component *c = plx_route.list[i];
        if (!plx_route_enabled(c->name) && !(c->flags & PLX_TP_FATE_SHARED && plx_procs.nlocal == 1))
            continue;
        if (plx_route.singleton && strcmp(c->name, "shm"))
            continue;
        int needed = plx_route_needed(c), n = 0;
        const struct plx_tp_upcalls *up = (c->flags & PLX_TP_FATE_SHARED) ? &plx_route.direct : &plx_route.routed;
        plx_status_t st = c->open(up, needed, plx_route_ifaces + plx_route_nifaces,
                                  PLX_ROUTE_MAX_IFACES - plx_route_nifaces, &n);
        if (st != PLX_OK)
            return st;
        if (n == 0)
            continue;
        for (int k = 0; k < n; k++)
            plx_route_ifaces[plx_route_nifaces + k]->id = plx_route_nifaces + k;
        plx_route_nifaces += n;
        plx_route.comp[plx_route.ncomp++] = c;
    }
    char err[400];
    if (plx_route_check_targets(err, sizeof err) != 0) {
        fprintf(stderr, "plexus: MPI_Init: %s\n", err);
        return PLX_ERR_ARG;
    }
    plx_route_check();
    plx_route.init = 1;
    return PLX_OK;
}

/* --- processes of other jobs, added at run time --------------------------------------- */

plx_status_t plx_route_cards(char *buf, size_t len)
{
    size_t off = 0;
    buf[0] = 0;
    for (size_t i = 0; i < plx_route.nlist; i++) {
        const struct plx_tp_component *c = plx_route.list[i];
        char card[1200];
        if (!c->card || !c->add_peers || !plx_route_enabled(c->name) || c->card(card, sizeof card) != 0)
            continue;
        int w = snprintf(buf + off, len - off, "%s%s=%s", off ? ";" : "", c->name, card);
        if (w < 0 || (size_t)w >= len - off)
            return PLX_ERR_NOSPACE;
        off += (size_t)w;
    }
    return off ? PLX_OK : PLX_ERR_UNSUPPORTED;
}

plx_status_t plx_route_add_peers(int ntotal)
{
    if (ntotal > plx_route.npeers) {
        plx_route.peers = plx_realloc(plx_route.peers, (size_t)ntotal * sizeof *plx_route.peers);
        memset(plx_route.peers + plx_route.npeers, 0, (size_t)(ntotal - plx_route.npeers) * sizeof *plx_route.peers);
        plx_route.npeers = ntotal;
    }
    for (size_t i = 0; i < plx_route.nlist; i++) {
        const struct plx_tp_component *c = plx_route.list[i];
        if (!c->add_peers || !plx_route_enabled(c->name) || plx_route.singleton)
            continue;
        plx_status_t st = c->add_peers(ntotal);
        if (st != PLX_OK)
            return st;
        int open = 0;
        for (int k = 0; k < plx_route.ncomp; k++)
            open |= plx_route.comp[k] == c;
        if (open || plx_route.ncomp >= 8)
            continue;
        /* not needed at MPI_Init (one node): open it now for the new peers */
        int n = 0;
        const struct plx_tp_upcalls *up = (c->flags & PLX_TP_FATE_SHARED) ? &plx_route.direct : &plx_route.routed;
        st = c->open(up, 1, plx_route_ifaces + plx_route_nifaces, PLX_ROUTE_MAX_IFACES - plx_route_nifaces, &n);
        if (st != PLX_OK)
            return st;
        for (int k = 0; k < n; k++)
            plx_route_ifaces[plx_route_nifaces + k]->id = plx_route_nifaces + k;
        plx_route_nifaces += n;
        if (n)
            plx_route.comp[plx_route.ncomp++] = c;
    }
    return plx_pt2pt_add_peers(ntotal);
}

int plx_route_drop_peers(const int *lpids, int n)
{
    int left = 0;
    for (int i = 0; i < n; i++)
        for (int k = 0; k < plx_route.ncomp; k++)
            if (plx_route.comp[k]->drop_peer && !plx_route.comp[k]->drop_peer(lpids[i]))
                left++;
    return left;
}

void plx_route_finalize(void)
{
    for (int i = 0; i < plx_route.ncomp; i++)
        plx_route.comp[i]->finalize();
    for (int lpid = 0; lpid < plx_route.npeers; lpid++) {
        struct plx_route_peer *rp = plx_route.peers[lpid];
        if (!rp)
            continue;
        for (int c = 0; c < rp->nchan; c++)
            free(rp->chan[c].why);
        if (rp->rel) {
            while (!plx_list_empty(&rp->rel->unacked)) {
                struct plx_rel_rec *rec = plx_list_entry(rp->rel->unacked.next, struct plx_rel_rec, link);
                plx_list_remove(&rec->link);
                free(rec);
            }
            free(rp->rel);
        }
        free(rp);
    }
    free(plx_route.peers);
    const struct plx_tp_component *const *list = plx_route.list;
    size_t nlist = plx_route.nlist;
    memset(&plx_route, 0, sizeof plx_route);
    plx_route.list = list;
    plx_route.nlist = nlist;
    plx_route_nifaces = 0;
    memset(plx_route_ifaces, 0, sizeof plx_route_ifaces);
}

/* --- reporting ---------------------------------------------------------------------- */

static void plx_route_chan_counts(const struct plx_route_peer *rp, const struct plx_chan *ch, const uint64_t p2p[4],
                                  uint64_t out[PLX_ST_N])
{
    out[PLX_ST_SENT_PKTS] = ch->st_sent_pkts;
    out[PLX_ST_SENT_BYTES] = ch->st_sent_bytes;
    out[PLX_ST_RESENT_BYTES] = ch->st_resent_bytes;
    out[PLX_ST_RECV_PKTS] = ch->st_recv_pkts;
    out[PLX_ST_RECV_BYTES] = ch->st_recv_bytes;
    if (rp->fast) {             /* the router does not see a fast peer's sends */
        out[PLX_ST_SENT_PKTS] = p2p[0];
        out[PLX_ST_SENT_BYTES] = p2p[1];
        if (!out[PLX_ST_RECV_PKTS] && !out[PLX_ST_RECV_BYTES]) {   /* nor, on a fate-shared channel, its receives */
            out[PLX_ST_RECV_PKTS] = p2p[2];
            out[PLX_ST_RECV_BYTES] = p2p[3];
        }
    }
}

void plx_route_chan_stats(const struct plx_route_peer *rp, int ifc_id, const uint64_t p2p[4], uint64_t out[PLX_ST_N])
{
    const struct plx_chan *ch = ifc_id >= 0 && ifc_id < PLX_ROUTE_MAX_IFACES ? rp->by_ifc[ifc_id] : NULL;
    if (ch)
        plx_route_chan_counts(rp, ch, p2p, out);
    else
        memset(out, 0, PLX_ST_N * sizeof *out);
}

void plx_route_print_stats(struct plx_route_peer *rp, uint64_t sent, uint64_t sent_bytes, uint64_t recv,
                           uint64_t recv_bytes)
{
    const uint64_t p2p[4] = { sent, sent_bytes, recv, recv_bytes };
    for (int c = 0; c < rp->nchan; c++) {
        const struct plx_chan *ch = &rp->chan[c];
        uint64_t v[PLX_ST_N];
        plx_route_chan_counts(rp, ch, p2p, v);
        if (!v[PLX_ST_SENT_PKTS] && !v[PLX_ST_RECV_PKTS])
            continue;
        plx_warn("stats: rank %d peer %d channel %s: sent %llu packets %llu bytes, resent %llu bytes, "
                 "received %llu packets %llu bytes", plx_procs.my_lpid, rp->lpid, ch->ifc->name,
                 (unsigned long long)v[PLX_ST_SENT_PKTS], (unsigned long long)v[PLX_ST_SENT_BYTES],
                 (unsigned long long)v[PLX_ST_RESENT_BYTES], (unsigned long long)v[PLX_ST_RECV_PKTS],
                 (unsigned long long)v[PLX_ST_RECV_BYTES]);
        if (!rp->fast && (ch->st_cls_pkts[0] | ch->st_cls_pkts[1] | ch->st_cls_pkts[2]))
            plx_warn("stats: rank %d peer %d channel %s by class: sent pt2pt %llu packets %llu bytes, "
                     "coll %llu packets %llu bytes, rma %llu packets %llu bytes", plx_procs.my_lpid, rp->lpid,
                     ch->ifc->name, (unsigned long long)ch->st_cls_pkts[0], (unsigned long long)ch->st_cls_bytes[0],
                     (unsigned long long)ch->st_cls_pkts[1], (unsigned long long)ch->st_cls_bytes[1],
                     (unsigned long long)ch->st_cls_pkts[2], (unsigned long long)ch->st_cls_bytes[2]);
    }
    /* issue 14, session 9: the acknowledgement layer of a peer with several channels */
    if (rp->nchan >= 2)
        plx_warn("stats: rank %d peer %d acknowledgements: %s, %llu packets tracked, %llu ACK packets sent, %llu "
                 "received", plx_procs.my_lpid, rp->lpid,
                 rp->rel && rp->rel->sender ? "on" : rp->pinned ? "none (one channel per operation class)" : "none",
                 (unsigned long long)(rp->rel && rp->rel->sender ? rp->rel->next_lseq - 1 : 0),
                 (unsigned long long)rp->st_acks_sent, (unsigned long long)rp->st_acks_recv);
}

void plx_route_describe(void (*line)(const char *text, void *arg), void *arg)
{
    char buf[1200], msg[1024], err[400];
    for (size_t i = 0; i < PLX_ROUTE_NCOMP; i++) {
        const struct plx_tp_component *c = plx_route_components[i];
        int ok = c->query(msg, sizeof msg);
        snprintf(buf, sizeof buf, "  %-5s %s: %s%s", c->name, ok ? "usable" : "NOT usable", msg,
                 ok && !plx_route_enabled(c->name) ? " (but PLEXUS_TRANSPORTS leaves it out)" : "");
        line(buf, arg);
    }
    line("", arg);
    if (plx_route_parse(plx_config.route, err, sizeof err) != 0) {
        snprintf(buf, sizeof buf, "routing rules: %s", err);
        line(buf, arg);
        return;
    }
    if (!plx_route.nrules) {
        snprintf(buf, sizeof buf, "routing rules: none (PLEXUS_ROUTE empty): shared memory on a node, else "
                 "the fastest transport; messages of %zu bytes and more striped over its rails",
                 plx_config.route_stripe_min);
        line(buf, arg);
        return;
    }
    line("routing rules (first match wins):", arg);
    for (int k = 0; k < plx_route.nrules; k++) {
        const struct plx_route_rule *r = &plx_route.rules[k];
        char lo[32] = "0", hi[32] = "any";
        snprintf(lo, sizeof lo, "%zu", r->lo);
        if (r->hi != SIZE_MAX)
            snprintf(hi, sizeof hi, "%zu", r->hi);
        snprintf(buf, sizeof buf, "  %d. %-30s %s%s%s, sizes %s..%s -> %s%s", k + 1, r->text,
                 r->cls & PLX_RC_PT2PT ? "pt2pt " : "", r->cls & PLX_RC_COLL ? "coll " : "",
                 r->cls & PLX_RC_RMA ? "rma" : "", lo, hi, r->target, r->stripe ? " (striped over its rails)" : "");
        line(buf, arg);
    }
}
