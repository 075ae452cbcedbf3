/*
 * SCTP transport: what its files share (sctp.c: the component, the socket,
 * associations and the handshake; sctp_io.c: send queues, the receive
 * queue and the stream parser).
 *
 * Threads: usrsctp runs its own threads (timers, UDP receive) and calls
 * plx_sctp_rx_cb from them. That callback only appends the message to
 * plx_sctp.rxq under rx_lock and writes the eventfd; everything else runs
 * under the library lock from the progress engine (poll) or the layers
 * above (send).
 */
#ifndef PLX_SCTP_IMPL_H
#define PLX_SCTP_IMPL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/socket.h>
#include <usrsctp.h>
#include "core/plexus.h"
#include "transport/sctp/sctp.h"
#include "transport/sctp/sctp_wire.h"
#include "transport/tcp/tcp_card.h"
#include "util/iface.h"

#define PLX_SCTP_MAX_STREAMS 256
#define PLX_SCTP_FINALIZE_SECONDS 10.0    /* finalize waits this long at most for its data to be acknowledged */
#define PLX_SCTP_BYE_WAIT 3.0           /* ... and this long for the peers' BYE */
#define PLX_SCTP_PACE_HOLD 0.005        /* pacing lasts this long after an eager message to or from the peer */
#define PLX_SCTP_PACE_NOTHREADS ((size_t)12 << 10)      /* PLEXUS_SCTP_PACE's default without usrsctp's threads */

/* A message (or a notification) from usrsctp's threads, as received. */
struct plx_sctp_rx {
    struct plx_sctp_rx *next;
    void *data;                 /* usrsctp's buffer (ours to free) */
    size_t len;
    sctp_assoc_t assoc;
    uint16_t sid;
    int notification;
    double t;                   /* when the callback queued it (PLEXUS_DEBUG only, else 0) */
};

/* A packet waiting in a stream's send queue: hdr + copied payload, and for
 * a zero-copy send a reference to the rest. */
struct plx_sctp_sbuf {
    struct plx_list link;
    struct plx_tp_comp *comp;   /* zero copy: completed once all is with usrsctp */
    const char *zc;
    size_t zc_len;
    size_t copied;              /* bytes in data[] (header included) */
    size_t done;                /* bytes handed to usrsctp */
    char data[];
};

/* The parser of one received stream. */
struct plx_sctp_rstream {
    struct plx_hdr h;
    size_t hgot;                /* header bytes so far */
    size_t pgot;                /* payload bytes so far */
    char *dst;                  /* DATA: where its payload goes (place) */
    size_t fit;
    char *buf;                  /* other packets split over messages: reassembly */
};

enum plx_sctp_peer_state {
    PLX_SCTP_P_NONE = 0,        /* never contacted */
    PLX_SCTP_P_CONNECTING,      /* connectx done, waiting for COMM_UP */
    PLX_SCTP_P_HELLO_SENT,      /* waiting for HELLO_ACK */
    PLX_SCTP_P_OPEN,
    PLX_SCTP_P_FAILED,          /* reported; a later send connects again */
};

struct plx_sctp_assoc;

struct plx_sctp_peer {
    int lpid;
    enum plx_sctp_peer_state state;
    struct plx_sctp_assoc *out; /* the association we send on */
    double deadline;            /* connecting: when it is given up */
    int said_bye;               /* it is finalizing: its association may end */
    struct plx_list sq[PLX_SCTP_MAX_STREAMS];   /* per stream, packets not yet with usrsctp */
    size_t queued;              /* bytes in sq (copied and referenced) */
    int nqueued;                /* packets in sq */
    struct plx_list busy_link;  /* on plx_sctp.busy while nqueued */
    struct plx_list fail_link;  /* on plx_sctp.failed while a failure waits to be reported */
    char *fail_why;
    int fail_ended;
    char addrs[160];            /* what we connect to, for messages */
    char host[64];              /* its host (from its card; "?" if it connected to us first) */
    double chatty_until;        /* eager messages went either way lately: rendezvous data is paced until then */
    int paced_wait;             /* its rendezvous data waits for an acknowledgement (want_room) */
};

struct plx_sctp_assoc {
    sctp_assoc_t id;
    int lpid;                   /* -1 until a HELLO or HELLO_ACK says who */
    int ours;                   /* we connected it */
    int auth;                   /* the other side proved the secret */
    int up;                     /* COMM_UP seen, not yet lost */
    double deadline;            /* not yet authenticated: aborted after it */
    struct plx_sctp_rstream *rs;        /* per stream */
    struct plx_list link;       /* on plx_sctp.assocs */
};

struct plx_sctp_global {
    int initialized;            /* open() set it up */
    int early_ok;
    int usrsctp_up;             /* usrsctp_init was called */
    int spin_useless;           /* it carries all traffic: a wait's spin only delays usrsctp's thread */
    int conn;                   /* usrsctp without its threads (sctp_conn.c): AF_CONN, one path */
    char early_err[256];
    struct socket *so;
    int efd;                    /* eventfd: the callback rang */
    uint16_t udp_port;          /* UDP encapsulation port (= our SCTP port) */
    char host[64];
    struct plx_iface_rules rules;
    int nmy;
    struct plx_iface_addr my[PLX_TCP_CARD_MAX_ADDRS];
    uint8_t secret[16];
    int have_secret;
    const struct plx_tp_upcalls *up;
    struct plx_tp_iface ifc;
    /* settings */
    unsigned streams;
    size_t frag;
    size_t eager_max, credit;
    uint32_t mtu;               /* path MTU of every association (0: discovery) */
    int cmt;
    double timeout;
    /* receive side (rx_lock guards rxq* and is taken by usrsctp's threads) */
    pthread_mutex_t rx_lock;
    struct plx_sctp_rx *rxq, **rxq_tail;
    atomic_int rx_pending;      /* messages in rxq */
    atomic_int rang;            /* eventfd written and not yet read */
    atomic_int want_room;       /* a send found usrsctp's buffer full: the send callback rings */
    /* peers and associations */
    struct plx_sctp_peer **peers;       /* by world rank */
    struct plx_list assocs;
    struct plx_sctp_assoc **by_id;      /* index: association id */
    size_t nby_id;
    struct plx_list busy;       /* peers with queued packets */
    struct plx_list failed;     /* failures to report from poll */
    struct plx_list selfq;      /* packets to ourselves */
    size_t nzc_done, zc_cap;
    struct plx_tp_comp **zc_done;       /* zero-copy sends complete, reported by poll */
    size_t sendq_max;
    char *txbuf;                /* one SCTP message being built */
    int finalizing;
    unsigned npolls;
    int nconnecting;
    uint64_t st_strangers;      /* associations aborted as strangers */
    size_t pace;                /* PLEXUS_SCTP_PACE: rendezvous bytes an association may hold in usrsctp */
    /* PLEXUS_DEBUG=1: where a small message waits (printed at finalize) */
    uint64_t st_paced;          /* flushes of rendezvous data stopped by the pace */
    uint64_t st_small, st_small_ahead;  /* small messages sent, and the bytes usrsctp held before each */
    uint64_t st_small_rx;       /* small messages received ... */
    double st_small_handoff;    /* ... and their seconds from usrsctp's callback to our poll, summed */
};

extern struct plx_sctp_global plx_sctp;

/* sctp.c */
struct plx_sctp_assoc *plx_sctp_assoc_find(sctp_assoc_t id);
void plx_sctp_notification(const struct plx_sctp_rx *m);
void plx_sctp_peer_fail(struct plx_sctp_peer *p, int ended, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
plx_status_t plx_sctp_connect(struct plx_sctp_peer *p);
void plx_sctp_abort(struct plx_sctp_assoc *a, const char *why);
void plx_sctp_on_ctl(struct plx_sctp_assoc *a, const struct plx_hdr *h, const void *payload);
struct plx_sctp_peer *plx_sctp_peer_get(int lpid);

/* Bytes of ours that usrsctp holds for association a: in its stream
 * queues, chunked, or sent and not yet acknowledged. */
size_t plx_sctp_outq(struct plx_sctp_assoc *a);

/* sctp_conn.c: usrsctp without its threads (PLEXUS_SCTP_THREADS) */
/* The UDP socket on a port the kernel picks (*port), usrsctp without
 * threads, the service thread. 0; -1 before usrsctp was started, -2 after
 * (a message in err). */
int plx_sctp_conn_start(int *port, int one_node, char *err, size_t errlen);
void plx_sctp_conn_shutdown(void);
void plx_sctp_conn_release(void);
int plx_sctp_conn_fd(void);
/* usrsctp's AF_CONN address of a remote UDP endpoint (made on first use) */
void *plx_sctp_conn_token(const struct sockaddr_in *sin);
void plx_sctp_conn_format(const void *token, char *buf, size_t len);
/* the poll: what arrived fed to usrsctp, its timers driven; datagrams read */
int plx_sctp_conn_poll(void);
void plx_sctp_conn_sleep(int asleep);

/* sctp_io.c */
int plx_sctp_rx_cb(struct socket *so, union sctp_sockstore addr, void *data, size_t len, struct sctp_rcvinfo rcv,
                   int flags, void *ulp);
int plx_sctp_tx_cb(struct socket *so, uint32_t sb_free, void *ulp);
int plx_sctp_rx_drain(void);
void plx_sctp_unring(void);
int plx_sctp_flush(struct plx_sctp_peer *p);
int plx_sctp_flush_all(void);
plx_status_t plx_sctp_send(struct plx_tp_iface *ifc, int lpid, const struct plx_hdr *hdr, const struct iovec *iov,
                           int iovcnt);
plx_status_t plx_sctp_send_zcopy(struct plx_tp_iface *ifc, int lpid, const struct plx_hdr *hdr,
                                 const struct iovec *iov, int iovcnt, struct plx_tp_comp *comp);
size_t plx_sctp_backlog(struct plx_tp_iface *ifc, int lpid);
/* Queues a transport-private packet on stream 0 (handshake, BYE). */
void plx_sctp_send_ctl(struct plx_sctp_peer *p, struct plx_sctp_assoc *a, uint8_t type, const void *payload,
                       uint32_t len);
void plx_sctp_peer_drop_queue(struct plx_sctp_peer *p, plx_status_t st);
void plx_sctp_assoc_reset_streams(struct plx_sctp_assoc *a);
int plx_sctp_self_deliver(void);

#endif
