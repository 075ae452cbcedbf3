/*
 * SCTP transport: usrsctp without its threads (PLEXUS_SCTP_THREADS=off, and
 * auto within one node).
 *
 * With its threads, usrsctp reads its UDP socket in a thread of its own and
 * calls back from there, so every message is a hand-off from that thread to
 * the rank's, and a ping behind a stream waits for a CPU at each hand-off:
 * on a 2-CPU machine the head-of-line ping took 2-3x its idle round trip.
 * Here usrsctp is started with usrsctp_init_nothreads and its socket is an
 * AF_CONN one: this file owns the UDP socket (bound to the card's port on
 * every address), the progress engine's poll reads it and feeds each
 * datagram to usrsctp (usrsctp_conninput, which calls plx_sctp_rx_cb right
 * there) and drives usrsctp's timers; usrsctp's output comes back through
 * plx_sctp_conn_out, a sendto. A sleeping wait sleeps on the UDP socket.
 *
 * The cost: AF_CONN gives usrsctp one opaque address per packet for both
 * ends, so an association has one path: no multihoming, no CMT. Each remote
 * UDP endpoint (address, port) is one such address, a "token" registered
 * with usrsctp; the socket is bound to all of them (the AF_CONN wildcard).
 *
 * Liveness: while the rank computes outside MPI nobody polls, and a peer
 * would see no acknowledgements, retransmit and at last give the
 * association up. So a service thread looks every PLX_SCTP_CONN_TICK: if no
 * poll has serviced the stack for that long and the rank is not asleep in
 * MPI (then it wakes on the socket itself, and at least every 100 ms for the
 * timers), it services it. conn_lock keeps one servicer at a time; the poll
 * only tries it.
 *
 * Both ends must be in this mode or both not: the setting is the same for
 * every rank of a job (auto: whether the launcher says all ranks are on one
 * node).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "core/config.h"
#include "core/log.h"
#include "util/util.h"
#include "transport/sctp/sctp_impl.h"

#define PLX_SCTP_CONN_TICK 0.010        /* seconds: the service thread's look */
#define PLX_SCTP_CONN_STALE 0.250       /* ... and it services even with a thread asleep on the socket when
                                         * nobody has for this long (that thread waits for the library lock) */
#define PLX_SCTP_CONN_BUDGET 64         /* datagrams a poll feeds to usrsctp before the engine goes on */
#define PLX_SCTP_CONN_BUCKETS 1024

/* A remote UDP endpoint: usrsctp's AF_CONN address for it. */
struct plx_sctp_conn_ep {
    struct plx_sctp_conn_ep *next;
    struct sockaddr_in sin;
    _Atomic uint32_t local;     /* our address its last datagram came to (network order; 0: none yet):
                                 * replies leave from it, so that it sees them come from the address it
                                 * sent to, whatever route the kernel would pick */
};

static struct {
    int fd;                     /* our UDP socket */
    pthread_mutex_t lock;       /* conn_lock: one servicer at a time */
    pthread_mutex_t tok_lock;   /* the endpoint table */
    struct plx_sctp_conn_ep *tab[PLX_SCTP_CONN_BUCKETS];
    double last;                /* last service (conn_lock) */
    double timers;              /* usrsctp's timers were driven up to then (conn_lock) */
    atomic_int asleep;          /* threads of the rank asleep in MPI, on fd */
    atomic_int stop;
    int thread_up;
    int finished;               /* usrsctp_finish completed: nothing of usrsctp points at an endpoint */
    struct plx_sctp_conn_ep *recent;    /* the last datagram's endpoint (conn_lock) */
    pthread_t thread;
    char pkt[65536];            /* one datagram (conn_lock) */
} plx_sctp_conn = { .fd = -1 };

int plx_sctp_conn_fd(void)
{
    return plx_sctp_conn.fd;
}

static unsigned plx_sctp_conn_hash(const struct sockaddr_in *sin)
{
    return (ntohl(sin->sin_addr.s_addr) * 2654435761u ^ ntohs(sin->sin_port)) % PLX_SCTP_CONN_BUCKETS;
}

void *plx_sctp_conn_token(const struct sockaddr_in *sin)
{
    unsigned h = plx_sctp_conn_hash(sin);
    pthread_mutex_lock(&plx_sctp_conn.tok_lock);
    struct plx_sctp_conn_ep *e = plx_sctp_conn.tab[h];
    while (e && (e->sin.sin_addr.s_addr != sin->sin_addr.s_addr || e->sin.sin_port != sin->sin_port))
        e = e->next;
    if (!e && (e = calloc(1, sizeof *e)) != NULL) {
        e->sin.sin_family = AF_INET;
        e->sin.sin_addr = sin->sin_addr;
        e->sin.sin_port = sin->sin_port;
        e->next = plx_sctp_conn.tab[h];
        plx_sctp_conn.tab[h] = e;
        usrsctp_register_address(e);
    }
    pthread_mutex_unlock(&plx_sctp_conn.tok_lock);
    return e;
}

void plx_sctp_conn_format(const void *token, char *buf, size_t len)
{
    const struct plx_sctp_conn_ep *e = token;
    char a[INET_ADDRSTRLEN] = "?";
    if (e)
        inet_ntop(AF_INET, &e->sin.sin_addr, a, sizeof a);
    snprintf(buf, len, "%s:%u", a, e ? ntohs(e->sin.sin_port) : 0u);
}

/* usrsctp's output (any thread that is inside usrsctp). A full socket
 * buffer loses the packet, as a network would: SCTP sends it again. */
static int plx_sctp_conn_out(void *addr, void *buf, size_t len, uint8_t tos, uint8_t set_df)
{
    (void)tos;
    (void)set_df;
    struct plx_sctp_conn_ep *e = addr;
    struct iovec iov = { .iov_base = buf, .iov_len = len };
    union {
        char b[CMSG_SPACE(sizeof(struct in_pktinfo))];
        struct cmsghdr align;
    } ctl;
    struct msghdr mh = { .msg_name = &e->sin, .msg_namelen = sizeof e->sin, .msg_iov = &iov, .msg_iovlen = 1 };
    uint32_t local = atomic_load_explicit(&e->local, memory_order_relaxed);
    if (local) {
        memset(&ctl, 0, sizeof ctl);
        mh.msg_control = ctl.b;
        mh.msg_controllen = sizeof ctl.b;
        struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
        c->cmsg_level = IPPROTO_IP;
        c->cmsg_type = IP_PKTINFO;
        c->cmsg_len = CMSG_LEN(sizeof(struct in_pktinfo));
        struct in_pktinfo pi = { .ipi_spec_dst.s_addr = local };
        memcpy(CMSG_DATA(c), &pi, sizeof pi);
    }
    if (sendmsg(plx_sctp_conn.fd, &mh, MSG_DONTWAIT) < 0)
        return errno;
    return 0;
}

/* Feeds what arrived to usrsctp and drives its timers; conn_lock held.
 * Returns the datagrams read. */
static int plx_sctp_conn_run(double now)
{
    int n = 0;
    while (n < PLX_SCTP_CONN_BUDGET) {
        struct sockaddr_in from;
        struct iovec iov = { .iov_base = plx_sctp_conn.pkt, .iov_len = sizeof plx_sctp_conn.pkt };
        union {
            char b[CMSG_SPACE(sizeof(struct in_pktinfo))];
            struct cmsghdr align;
        } ctl;
        struct msghdr mh = { .msg_name = &from, .msg_namelen = sizeof from, .msg_iov = &iov, .msg_iovlen = 1,
                             .msg_control = ctl.b, .msg_controllen = sizeof ctl.b };
        ssize_t got = recvmsg(plx_sctp_conn.fd, &mh, MSG_DONTWAIT);
        if (got < 0)
            break;
        n++;
        if (mh.msg_namelen != sizeof from || from.sin_family != AF_INET || (size_t)got < 12)
            continue;           /* not an SCTP packet over IPv4: dropped */
        /* a run of datagrams mostly comes from one peer: its endpoint
         * without the table's lock (endpoints live until finalize) */
        struct plx_sctp_conn_ep *e = plx_sctp_conn.recent;
        if (!e || e->sin.sin_addr.s_addr != from.sin_addr.s_addr || e->sin.sin_port != from.sin_port)
            e = plx_sctp_conn.recent = plx_sctp_conn_token(&from);
        if (!e)
            continue;
        for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c))
            if (c->cmsg_level == IPPROTO_IP && c->cmsg_type == IP_PKTINFO) {
                struct in_pktinfo pi;
                memcpy(&pi, CMSG_DATA(c), sizeof pi);
                atomic_store_explicit(&e->local, pi.ipi_addr.s_addr, memory_order_relaxed);
            }
        usrsctp_conninput(e, plx_sctp_conn.pkt, (size_t)got, 0);
    }
    uint32_t ms = (uint32_t)((now - plx_sctp_conn.timers) * 1000.0);
    if (ms > 0) {
        usrsctp_handle_timers(ms);
        plx_sctp_conn.timers += ms / 1000.0;
    }
    plx_sctp_conn.last = now;
    return n;
}

int plx_sctp_conn_poll(void)
{
    if (pthread_mutex_trylock(&plx_sctp_conn.lock) != 0)
        return 0;               /* the service thread is at it */
    int n = plx_sctp_conn_run(plx_util_now());
    pthread_mutex_unlock(&plx_sctp_conn.lock);
    return n;
}

/* A thread of the rank goes to sleep on the socket (1) or wakes (0):
 * counted under conn_lock, so that a service thread's round has ended (what
 * it queued, the poll before the sleep sees) or will not start. */
void plx_sctp_conn_sleep(int asleep)
{
    pthread_mutex_lock(&plx_sctp_conn.lock);
    atomic_fetch_add(&plx_sctp_conn.asleep, asleep ? 1 : -1);
    pthread_mutex_unlock(&plx_sctp_conn.lock);
}

static void *plx_sctp_conn_thread(void *arg)
{
    (void)arg;
    struct timespec tick = { 0, (long)(PLX_SCTP_CONN_TICK * 1e9) };
    while (!atomic_load(&plx_sctp_conn.stop)) {
        nanosleep(&tick, NULL);
        if (pthread_mutex_trylock(&plx_sctp_conn.lock) != 0)
            continue;
        /* a thread asleep on the socket services it when it wakes; one that
         * has not for PLX_SCTP_CONN_STALE is stuck behind the library lock
         * (another thread's long call), and the peers would give up */
        double now = plx_util_now(), idle = now - plx_sctp_conn.last;
        if (idle >= (atomic_load(&plx_sctp_conn.asleep) ? PLX_SCTP_CONN_STALE : PLX_SCTP_CONN_TICK))
            plx_sctp_conn_run(now);
        pthread_mutex_unlock(&plx_sctp_conn.lock);
    }
    return NULL;
}

int plx_sctp_conn_start(int *port, int one_node, char *err, size_t errlen)
{
    pthread_mutex_init(&plx_sctp_conn.lock, NULL);
    pthread_mutex_init(&plx_sctp_conn.tok_lock, NULL);
    int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0), one = 1;
    struct sockaddr_in sin = { .sin_family = AF_INET };
    socklen_t sl = sizeof sin;
    if (fd < 0 || bind(fd, (struct sockaddr *)&sin, sizeof sin) != 0 ||
        getsockname(fd, (struct sockaddr *)&sin, &sl) != 0 ||
        setsockopt(fd, IPPROTO_IP, IP_PKTINFO, &one, sizeof one) != 0) {
        snprintf(err, errlen, "UDP socket: %s", strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    *port = ntohs(sin.sin_port);
    /* room for a window of packets while the rank is away from the poll */
    int want = (int)PLX_MIN(2 * plx_config.sctp_sockbuf, (size_t)1 << 30), got = 0;
    socklen_t gl = sizeof got;
    (void)setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &want, sizeof want);
    if (getsockopt(fd, SOL_SOCKET, SO_RCVBUF, &got, &gl) == 0 && got < want)
        (void)setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &want, sizeof want);
    (void)setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &want, sizeof want);
    plx_sctp_conn.fd = fd;
    usrsctp_init_nothreads(0, plx_sctp_conn_out, NULL);
    /* within one node the packets cross loopback only, where usrsctp over
     * UDP skips the CRC too; across nodes the CRC32c stays */
    if (one_node)
        usrsctp_enable_crc32c_offload();
    plx_sctp_conn.timers = plx_sctp_conn.last = plx_util_now();
    int rc = pthread_create(&plx_sctp_conn.thread, NULL, plx_sctp_conn_thread, NULL);
    if (rc != 0) {
        snprintf(err, errlen, "cannot start the SCTP service thread: %s", strerror(rc));
        return -2;              /* usrsctp is up: it must be finished */
    }
    plx_sctp_conn.thread_up = 1;
    return 0;
}

/* After the socket is closed: the service thread stopped, usrsctp finished
 * (its timers driven here, 2 s at most; its last packets go out through the
 * socket), the socket closed. The endpoints stay until
 * plx_sctp_conn_release: notifications still queued may name them. */
void plx_sctp_conn_shutdown(void)
{
    if (plx_sctp_conn.thread_up) {
        atomic_store(&plx_sctp_conn.stop, 1);
        pthread_join(plx_sctp_conn.thread, NULL);
        plx_sctp_conn.thread_up = 0;
    }
    int finished = 0;
    double end = plx_util_now() + 2.0;
    while (plx_util_now() < end) {
        plx_sctp_conn_poll();
        if (usrsctp_finish() == 0) {
            finished = 1;
            break;
        }
        struct timespec t = { 0, 5 * 1000 * 1000 };
        nanosleep(&t, NULL);
    }
    plx_sctp_conn.finished = finished;
    if (!finished)
        plx_debug(1, "sctp: usrsctp_finish did not complete within 2 s");
    if (plx_sctp_conn.fd >= 0) {
        close(plx_sctp_conn.fd);
        plx_sctp_conn.fd = -1;
    }
}

/* At the very end of finalize: the endpoints freed (left if usrsctp did not
 * finish: its state may still point at them). */
void plx_sctp_conn_release(void)
{
    plx_sctp_conn.recent = NULL;
    for (int i = 0; i < PLX_SCTP_CONN_BUCKETS; i++) {
        while (plx_sctp_conn.tab[i]) {
            struct plx_sctp_conn_ep *e = plx_sctp_conn.tab[i];
            plx_sctp_conn.tab[i] = e->next;
            if (plx_sctp_conn.finished)
                free(e);
        }
    }
}
