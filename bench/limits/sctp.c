/* bench/limits/sctp.c — what usrsctp can do between two processes on
 * loopback, over UDP encapsulation, with the same socket set-up as Plexus's
 * SCTP transport (one-to-many socket, receive callback, non-blocking sends,
 * SCTP_NODELAY, path MTU fixed with discovery off): the floor under that
 * transport, and a place to try usrsctp's knobs one at a time.
 *   -o lat: ping-pong, half round trip (0 bytes sends 1);
 *   -o bw:  a window of messages, then a 1-byte ack, as in bench/bw.c.
 *   -o hol: head-of-line, as bench/hol.c measures it through MPI: 8-byte
 *           ping-pongs on stream 0, idle and while the first process
 *           streams the largest size (-m) on stream 1 in pieces of
 *           SCTPX_HOL_PIECE bytes (default 16384), paced as Plexus paces
 *           rendezvous data: a piece goes only while the association holds
 *           less than SCTPX_HOL_PACE bytes (default 32768; 0: no pacing).
 *           The floor under Plexus's SCTP head-of-line figure.
 * The receive callback runs in usrsctp's threads; it copies nothing and
 * hands the message to the main thread through a flag (-s poll: the main
 * thread spins on it) or a flag and an eventfd (-s block: the main thread
 * sleeps in poll() on the eventfd, as Plexus's progress engine does when
 * idle).
 * Knobs (environment): SCTPX_MTU (path MTU, default 16384; 0 = discovery),
 * SCTPX_SACKI=0 (no SACK_IMMEDIATELY flag on sends), SCTPX_NODELAY=0,
 * SCTPX_FRAG (largest message handed to usrsctp_sendv, default 65536:
 * larger messages go as several), SCTPX_MAXSEG (SCTP_MAXSEG: the largest
 * DATA chunk; 0 = usrsctp's default), SCTPX_SACK_DELAY (ms; sysctl) and
 * SCTPX_SACK_FREQ (packets; sysctl).
 * Each process is pinned to its own core when there are two (-b disables);
 * SCTPX_PIN_ALL=1 pins it before usrsctp starts its threads, so that they
 * share the core (as under mpiexec's binding), instead of the main thread
 * alone. SCTPX_YIELD=N: a -s block wait yields N times before it sleeps
 * (Plexus's waits yield up to 50 times).
 * SCTPX_CONN=1: usrsctp without its threads (usrsctp_init_nothreads, an
 * AF_CONN socket): each process reads its own UDP socket and feeds usrsctp
 * (usrsctp_conninput) and drives its timers, all in its one thread, busy
 * polling (-s is ignored). One path per association only: AF_CONN gives
 * usrsctp one opaque address for both ends of a packet, so no multihoming.
 * It shows what the receive threads' hand-offs cost.
 * No MPI; link with -lusrsctp -lpthread.
 * Output rows: size_B latency_us (lat) or size_B bw_MBps (bw)
 */
#define BENCH_NO_MPI
#include "../util.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <usrsctp.h>

static const char usage[] =
    "sctp: usrsctp loopback ping-pong (-o lat, us) or streaming (-o bw, MB/s), UDP encapsulation\n"
    "usage: sctp [-o lat|bw|hol] [-s poll|block] [-b (no pinning)] [-m [min:]max] [-i N] [-x N]\n"
    "           [-I N] [-X N] [-W N]   (knobs: SCTPX_MTU SCTPX_SACKI SCTPX_NODELAY SCTPX_FRAG\n"
    "           SCTPX_MAXSEG SCTPX_SACK_DELAY SCTPX_SACK_FREQ)";

/* bytes received (the callback adds, the main thread waits for a count);
 * -o hol counts the pings (stream 0) apart */
static atomic_size_t rx_bytes, rx_pings;
static atomic_int rx_up, rang, want_room;
static int efd = -1, block, yields;
static int conn_mode, conn_fd = -1;      /* SCTPX_CONN=1 */
static struct sockaddr_in conn_peer;
static char conn_token;                  /* the AF_CONN address: both ends of our one path */
static double conn_t;                    /* usrsctp's timers were last driven then */
static struct socket *so;
static sctp_assoc_t assoc;
static size_t frag = 65536;
static int sacki = 1;

static int env_int(const char *name, int dflt)
{
    const char *v = getenv(name);
    return v && *v ? atoi(v) : dflt;
}

static void ring(void)
{
    if (block && !atomic_exchange(&rang, 1)) {
        uint64_t one = 1;
        if (write(efd, &one, sizeof one) < 0) {
            /* full counter: the waiter wakes anyway */
        }
    }
}

static int rx_cb(struct socket *s, union sctp_sockstore addr, void *data, size_t len,
                 struct sctp_rcvinfo rcv, int flags, void *ulp)
{
    (void)s;
    (void)addr;
    (void)ulp;
    if (!data)
        return 1;
    if (flags & MSG_NOTIFICATION) {
        const union sctp_notification *n = data;
        if (n->sn_header.sn_type == SCTP_ASSOC_CHANGE &&
            n->sn_assoc_change.sac_state == SCTP_COMM_UP) {
            assoc = rcv.rcv_assoc_id ? rcv.rcv_assoc_id : n->sn_assoc_change.sac_assoc_id;
            atomic_store(&rx_up, 1);
        }
    } else if (rcv.rcv_sid == 0) {
        atomic_fetch_add(&rx_pings, 1);
    } else if (rcv.rcv_sid == 2) {
        atomic_store(&rx_up, 2);
    } else {
        atomic_fetch_add(&rx_bytes, len);
    }
    free(data);
    ring();
    return 1;
}

/* usrsctp took acknowledged data off the association (-o hol's pacing) */
static int tx_cb(struct socket *s, uint32_t sb_free, void *ulp)
{
    (void)s;
    (void)sb_free;
    (void)ulp;
    if (atomic_exchange(&want_room, 0))
        ring();
    return 0;
}

/* SCTPX_CONN=1: usrsctp's packets go out here ... */
static int conn_out(void *addr, void *buf, size_t len, uint8_t tos, uint8_t set_df)
{
    (void)addr;
    (void)tos;
    (void)set_df;
    if (sendto(conn_fd, buf, len, 0, (struct sockaddr *)&conn_peer, sizeof conn_peer) < 0)
        return errno;   /* a full socket buffer: SCTP retransmits */
    return 0;
}

/* ... and come in here, with its timers, from the waits */
static void service(void)
{
    if (!conn_mode)
        return;
    static char pkt[65536];
    ssize_t n;
    while ((n = recv(conn_fd, pkt, sizeof pkt, 0)) > 0)
        usrsctp_conninput(&conn_token, pkt, (size_t)n, 0);
    double now = bench_now();
    uint32_t ms = (uint32_t)((now - conn_t) * 1000);
    if (ms) {
        usrsctp_handle_timers(ms);
        conn_t += ms / 1000.0;
    }
}

/* one round of a -s block wait: yield while the budget lasts, then sleep */
static void wait_once(int *budget)
{
    service();
    if (!block)
        return;
    if (*budget > 0) {
        (*budget)--;
        sched_yield();
        return;
    }
    /* read, then let the callback ring again: a ring it skips in between
     * is for data the caller's next look sees */
    struct pollfd p = {.fd = efd, .events = POLLIN};
    poll(&p, 1, 100);
    uint64_t v;
    if (read(efd, &v, sizeof v) < 0) {
        /* EAGAIN: nothing to read */
    }
    atomic_store(&rang, 0);
}

/* Waits until at least want bytes have arrived in all. */
static void rx_wait(size_t want)
{
    int budget = yields;
    while (atomic_load(&rx_bytes) < want)
        wait_once(&budget);
}

/* One message on stream sid: 1 sent, 0 usrsctp's buffer is full, -1 error. */
static int send_one(uint16_t sid, const char *buf, size_t n)
{
    struct sctp_sndinfo si = {.snd_sid = sid, .snd_flags = sacki ? SCTP_SACK_IMMEDIATELY : 0,
                              .snd_assoc_id = assoc};
    if (usrsctp_sendv(so, buf, n, NULL, 0, &si, sizeof si, SCTP_SENDV_SNDINFO, 0) >= 0)
        return 1;
    return errno == EWOULDBLOCK || errno == EAGAIN || errno == ENOBUFS ? 0 : -1;
}

static int send_all(const char *buf, size_t n)
{
    struct sctp_sndinfo si = {.snd_sid = 1, .snd_flags = sacki ? SCTP_SACK_IMMEDIATELY : 0,
                              .snd_assoc_id = assoc};
    size_t off = 0;
    do {
        size_t len = n - off < frag ? n - off : frag;
        ssize_t w = usrsctp_sendv(so, buf + off, len, NULL, 0, &si, sizeof si, SCTP_SENDV_SNDINFO, 0);
        if (w < 0 && (errno == EWOULDBLOCK || errno == EAGAIN || errno == ENOBUFS)) {
            service();
            continue;
        }
        if (w < 0)
            return -1;
        off += len;
    } while (off < n);
    return 0;
}

/* --- -o hol ---------------------------------------------------------------------------- */

/* SCTP_GET_SNDBUF_USE: the bytes the association holds for sending (a
 * read-only option that usrsctp.h does not name; Plexus paces with it) */
#ifndef SCTP_GET_SNDBUF_USE
#define SCTP_GET_SNDBUF_USE 0x00001101
struct sctp_sockstat {
    sctp_assoc_t ss_assoc_id;
    uint32_t ss_total_sndbuf;
    uint32_t ss_total_recv_buf;
};
#endif

static size_t outq(void)
{
    struct sctp_sockstat ss = {.ss_assoc_id = assoc};
    socklen_t sl = sizeof ss;
    return usrsctp_getsockopt(so, IPPROTO_SCTP, SCTP_GET_SNDBUF_USE, &ss, &sl) ? 0 : ss.ss_total_sndbuf;
}

/* Hands bulk pieces to usrsctp while the pace allows; -1 on error. The
 * request for the send callback goes before the look, so that an
 * acknowledgement in between is not missed. */
static int pump(const char *buf, size_t bulk, size_t *sent, size_t piece, size_t pace)
{
    while (*sent < bulk) {
        atomic_store(&want_room, 1);
        if (pace && outq() >= pace)
            return 0;
        size_t len = bulk - *sent < piece ? bulk - *sent : piece;
        int r = send_one(1, buf + *sent, len);
        if (r <= 0)
            return r;
        atomic_store(&want_room, 0);
        *sent += len;
    }
    return 0;
}

static int dcmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double pctl(double *v, int n, double p)
{
    qsort(v, (size_t)n, sizeof *v, dcmp);
    return n ? v[(int)(p * (n - 1))] * 1e6 : 0;
}

#define HOL_MAXP 1000000

/* The first process pings and streams; the second answers each ping and
 * acknowledges each whole bulk with one byte on stream 1; a message on
 * stream 2 ends it. */
static int hol(int me, char *buf, size_t bulk, int nidle, int rounds)
{
    size_t piece = (size_t)env_int("SCTPX_HOL_PIECE", 16384);
    size_t pace = (size_t)env_int("SCTPX_HOL_PACE", 32768);
    char ping[8] = {0};
    int budget;
    if (me) {
        size_t answered = 0;
        int acked = 0;
        for (;;) {
            budget = yields;
            while (atomic_load(&rx_pings) == answered && atomic_load(&rx_up) == 1 &&
                   !(acked < rounds && atomic_load(&rx_bytes) >= (size_t)(acked + 1) * bulk))
                wait_once(&budget);
            if (atomic_load(&rx_up) != 1)
                return 0;       /* stream 2: the end */
            if (atomic_load(&rx_pings) > answered) {
                while (send_one(0, ping, sizeof ping) == 0)
                    service();
                answered++;
            } else {
                while (send_one(1, ping, 1) == 0)
                    service();
                acked++;
            }
        }
    }
    double *idle = malloc(sizeof(double) * (size_t)nidle), *load = malloc(sizeof(double) * HOL_MAXP);
    int nload = 0;
    size_t expect = 0;
    double bulk_time = 0;
    for (int i = 0; i < 50 + nidle; i++) {
        double t = bench_now();
        if (send_one(0, ping, sizeof ping) < 0)
            return -1;
        expect++;
        budget = yields;
        while (atomic_load(&rx_pings) < expect)
            wait_once(&budget);
        if (i >= 50)
            idle[i - 50] = bench_now() - t;
    }
    for (int r = 0; r < rounds; r++) {
        size_t sent = 0;
        double t0 = bench_now();
        while (sent < bulk) {
            if (pump(buf, bulk, &sent, piece, pace) < 0)
                return -1;
            double t = bench_now();
            if (send_one(0, ping, sizeof ping) < 0)
                return -1;
            expect++;
            budget = yields;
            while (atomic_load(&rx_pings) < expect) {
                if (pump(buf, bulk, &sent, piece, pace) < 0)
                    return -1;
                if (atomic_load(&rx_pings) < expect)
                    wait_once(&budget);
            }
            if (nload < HOL_MAXP)
                load[nload++] = bench_now() - t;
        }
        budget = yields;
        while (atomic_load(&rx_bytes) < (size_t)r + 1)
            wait_once(&budget);
        bulk_time += bench_now() - t0;
    }
    while (send_one(2, ping, 1) == 0)
        service();
    double ri = pctl(idle, nidle, 0.5), rl = pctl(load, nload, 0.5);
    printf("%zu %.1f %.1f %.1f %.1f %.2f %d %.1f\n", bulk, ri, rl, pctl(idle, nidle, 0.9), pctl(load, nload, 0.9),
           ri > 0 ? rl / ri : 0, nload, (double)bulk * rounds / bulk_time / 1e6);
    fflush(stdout);
    free(idle);
    free(load);
    return 0;
}

static int udp_port_pick(void)
{
    int fd = socket(AF_INET, SOCK_DGRAM, 0);
    struct sockaddr_in sin = {.sin_family = AF_INET};
    socklen_t sl = sizeof sin;
    int port = -1;
    if (fd >= 0 && bind(fd, (struct sockaddr *)&sin, sizeof sin) == 0 &&
        getsockname(fd, (struct sockaddr *)&sin, &sl) == 0)
        port = ntohs(sin.sin_port);
    if (fd >= 0)
        close(fd);
    return port;
}

static int stack_start(int port, int peer_port, uint32_t mtu)
{
    int family = AF_INET;
    if (conn_mode) {
        struct sockaddr_in sin = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
        sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        int rb = 4 << 20;
        conn_fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK, 0);
        if (conn_fd < 0 || bind(conn_fd, (struct sockaddr *)&sin, sizeof sin) ||
            setsockopt(conn_fd, SOL_SOCKET, SO_RCVBUF, &rb, sizeof rb) ||
            setsockopt(conn_fd, SOL_SOCKET, SO_SNDBUF, &rb, sizeof rb))
            return -1;
        conn_peer = sin;
        conn_peer.sin_port = htons((uint16_t)peer_port);
        usrsctp_init_nothreads(0, conn_out, NULL);
        usrsctp_enable_crc32c_offload();    /* as on loopback over UDP, where usrsctp skips the CRC */
        usrsctp_register_address(&conn_token);
        conn_t = bench_now();
        family = AF_CONN;
    } else {
        usrsctp_init((uint16_t)port, NULL, NULL);
    }
    usrsctp_sysctl_set_sctp_sendspace(4u << 20);
    usrsctp_sysctl_set_sctp_recvspace(4u << 20);
    if (getenv("SCTPX_SACK_DELAY"))
        usrsctp_sysctl_set_sctp_delayed_sack_time_default((uint32_t)env_int("SCTPX_SACK_DELAY", 200));
    if (getenv("SCTPX_SACK_FREQ"))
        usrsctp_sysctl_set_sctp_sack_freq_default((uint32_t)env_int("SCTPX_SACK_FREQ", 2));
    so = usrsctp_socket(family, SOCK_SEQPACKET, IPPROTO_SCTP, rx_cb, tx_cb, 1, NULL);
    if (!so)
        return -1;
    usrsctp_set_non_blocking(so, 1);
    struct sctp_event ev = {.se_assoc_id = SCTP_FUTURE_ASSOC, .se_type = SCTP_ASSOC_CHANGE, .se_on = 1};
    int one = 1, nodelay = env_int("SCTPX_NODELAY", 1);
    if (usrsctp_setsockopt(so, IPPROTO_SCTP, SCTP_EVENT, &ev, sizeof ev) ||
        usrsctp_setsockopt(so, IPPROTO_SCTP, SCTP_RECVRCVINFO, &one, sizeof one) ||
        usrsctp_setsockopt(so, IPPROTO_SCTP, SCTP_NODELAY, &nodelay, sizeof nodelay))
        return -1;
    struct sctp_initmsg im = {.sinit_num_ostreams = 16, .sinit_max_instreams = 16};
    usrsctp_setsockopt(so, IPPROTO_SCTP, SCTP_INITMSG, &im, sizeof im);
    int sb = 4 << 20;
    usrsctp_setsockopt(so, SOL_SOCKET, SO_SNDBUF, &sb, sizeof sb);
    usrsctp_setsockopt(so, SOL_SOCKET, SO_RCVBUF, &sb, sizeof sb);
    int maxseg = env_int("SCTPX_MAXSEG", 0);
    if (maxseg) {
        struct sctp_assoc_value av = {.assoc_id = SCTP_FUTURE_ASSOC, .assoc_value = (uint32_t)maxseg};
        if (usrsctp_setsockopt(so, IPPROTO_SCTP, SCTP_MAXSEG, &av, sizeof av))
            return -1;
    }
    if (mtu) {
        struct sctp_paddrparams pp;
        memset(&pp, 0, sizeof pp);
        pp.spp_address.ss_family = (sa_family_t)family;
        pp.spp_assoc_id = SCTP_FUTURE_ASSOC;
        pp.spp_flags = SPP_PMTUD_DISABLE;
        pp.spp_pathmtu = mtu;
        if (usrsctp_setsockopt(so, IPPROTO_SCTP, SCTP_PEER_ADDR_PARAMS, &pp, sizeof pp))
            return -1;
    }
    /* streams by priority, as Plexus has them: -o hol's pings (stream 0)
     * before the bulk (stream 1) that is still queued in usrsctp */
    struct sctp_assoc_value ss = {.assoc_id = SCTP_FUTURE_ASSOC, .assoc_value = SCTP_SS_PRIORITY};
    if (usrsctp_setsockopt(so, IPPROTO_SCTP, SCTP_PLUGGABLE_SS, &ss, sizeof ss))
        return -1;
    if (conn_mode) {
        struct sockaddr_conn sc = {.sconn_family = AF_CONN, .sconn_port = htons(5001), .sconn_addr = &conn_token};
        if (usrsctp_bind(so, (struct sockaddr *)&sc, sizeof sc) || usrsctp_listen(so, 1))
            return -1;
        return 0;
    }
    struct sockaddr_in sin = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (usrsctp_bind(so, (struct sockaddr *)&sin, sizeof sin) || usrsctp_listen(so, 1))
        return -1;
    return 0;
}

int main(int argc, char **argv)
{
    struct bench_opts o;
    bench_opts_init(&o, 0, 1 * BENCH_MiB, 2000, 50);
    int bw;
    int rc = bench_limit_parse(argc, argv, &o, usage, 1, &bw, &block);
    if (rc >= 0)
        return rc;
    uint32_t mtu = (uint32_t)env_int("SCTPX_MTU", 16384);
    sacki = env_int("SCTPX_SACKI", 1);
    frag = (size_t)env_int("SCTPX_FRAG", 65536);
    int port[2] = {udp_port_pick(), udp_port_pick()};
    if (port[0] <= 0 || port[1] <= 0 || port[0] == port[1]) {
        printf("# error: no free UDP ports\n");
        return 1;
    }
    int pinned = !o.flag && sysconf(_SC_NPROCESSORS_ONLN) >= 2;
    int pin_all = pinned && env_int("SCTPX_PIN_ALL", 0);
    yields = env_int("SCTPX_YIELD", 0);
    conn_mode = env_int("SCTPX_CONN", 0);
    if (conn_mode)
        block = 0;
    static const char *const what[] = {"ping-pong, half round trip", "streaming: window of messages then 1-byte ack",
                                       "8-byte round trips, idle and behind a paced stream (as bench/hol.c)"};
    printf("# plexus-bench: %s\n", bw == 2 ? "limit_sctp_hol" : bw ? "limit_sctp_bw" : "limit_sctp_lat");
    printf("# description: usrsctp over UDP loopback %s, one-to-many socket, receive callback\n", what[bw]);
    printf("# sizes: %zu:%zu\n# iterations: %d (above %zu B: %d)\n", o.min_size, o.max_size,
           o.iters, BENCH_LARGE_THRESHOLD, o.iters_large);
    printf("# pinned: %s\n", pin_all ? "cores 0 and 1, usrsctp's threads with them" : pinned ? "cores 0 and 1" : "no");
    printf("# wait: %s, %d yields first\n", conn_mode ? "usrsctp without threads: busy polling our UDP socket"
                                     : block ? "eventfd, poll()" : "busy polling a flag", yields);
    printf("# knobs: mtu %u, maxseg %d, sack_immediately %d, nodelay %d, frag %zu, sack delay %s, sack freq %s\n",
           mtu, env_int("SCTPX_MAXSEG", 0), sacki, env_int("SCTPX_NODELAY", 1), frag,
           getenv("SCTPX_SACK_DELAY") ? getenv("SCTPX_SACK_DELAY") : "default",
           getenv("SCTPX_SACK_FREQ") ? getenv("SCTPX_SACK_FREQ") : "default");
    if (bw == 2)
        printf("# hol: rounds %d, piece %d, pace %d\n# columns: size_B idle_rtt_us loaded_rtt_us idle_p90_us "
               "loaded_p90_us ratio pings bulk_MBps\n",
               env_int("SCTPX_HOL_ROUNDS", 3), env_int("SCTPX_HOL_PIECE", 16384), env_int("SCTPX_HOL_PACE", 32768));
    else
        printf("# columns: size_B %s\n", bw ? "bw_MBps" : "latency_us");
    fflush(stdout);

    pid_t child = fork();
    if (child < 0) {
        perror("fork");
        return 1;
    }
    int me = child == 0;
    if (me)
        prctl(PR_SET_PDEATHSIG, SIGKILL); /* never outlives a parent killed by a timeout */
    if (block && (efd = eventfd(0, EFD_NONBLOCK)) < 0)
        return 1;
    if (pin_all)
        bench_pin(me ? 1 : 0);
    if (stack_start(port[me], port[!me], mtu)) {
        printf("# error: usrsctp set-up failed: %s\n", strerror(errno));
        if (!me)
            kill(child, SIGKILL);
        return 1;
    }
    if (me && conn_mode) {
        struct sockaddr_conn sc = {.sconn_family = AF_CONN, .sconn_port = htons(5001), .sconn_addr = &conn_token};
        struct timespec ts = {0, 100 * 1000 * 1000};
        nanosleep(&ts, NULL); /* the other side's stack is up */
        if (usrsctp_connect(so, (struct sockaddr *)&sc, sizeof sc) && errno != EINPROGRESS) {
            printf("# error: usrsctp_connect: %s\n", strerror(errno));
            _exit(1);
        }
    } else if (me) {
        struct sctp_udpencaps ue = {.sue_assoc_id = SCTP_FUTURE_ASSOC, .sue_port = htons((uint16_t)port[0])};
        struct sockaddr_in sin = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port[0])};
        sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        usrsctp_setsockopt(so, IPPROTO_SCTP, SCTP_REMOTE_UDP_ENCAPS_PORT, &ue, sizeof ue);
        struct timespec ts = {0, 100 * 1000 * 1000};
        nanosleep(&ts, NULL); /* the other side's stack is up */
        if (usrsctp_connectx(so, (struct sockaddr *)&sin, 1, &assoc) && errno != EINPROGRESS)
            _exit(1);
    } else if (!conn_mode) {
        /* the parent learns the child's port only from the association;
         * set the encapsulation port for replies before it comes */
        struct sctp_udpencaps ue = {.sue_assoc_id = SCTP_FUTURE_ASSOC, .sue_port = htons((uint16_t)port[1])};
        usrsctp_setsockopt(so, IPPROTO_SCTP, SCTP_REMOTE_UDP_ENCAPS_PORT, &ue, sizeof ue);
    }
    double end = bench_now() + 10;
    while (!atomic_load(&rx_up) && bench_now() < end) {
        struct timespec ts = {0, 1000 * 1000};
        if (conn_mode)
            service();
        else
            nanosleep(&ts, NULL);
    }
    if (!atomic_load(&rx_up)) {
        if (me)
            _exit(1);
        printf("# error: no association within 10 s\n");
        kill(child, SIGKILL);
        waitpid(child, NULL, 0);
        return 1;
    }
    if (pinned && !pin_all)
        bench_pin(me ? 1 : 0);
    char *buf = bench_alloc(o.max_size ? o.max_size : 1);
    size_t expect = 0;
    int status = 0;
    if (bw == 2) {
        struct sctp_stream_value v = {.assoc_id = assoc, .stream_id = 1, .stream_value = 1};
        usrsctp_setsockopt(so, IPPROTO_SCTP, SCTP_SS_VALUE, &v, sizeof v);
        int err = hol(me, buf, o.max_size ? o.max_size : 1, o.iters, env_int("SCTPX_HOL_ROUNDS", 3));
        if (me)
            _exit(err ? 1 : 0);
        if (err) {
            printf("# error: send failed: %s\n", strerror(errno));
            kill(child, SIGKILL);
            status = 1;
            goto out;
        }
        bench_print_end();
        goto out;
    }
    for (size_t size = o.min_size; size <= o.max_size; size = bench_next_size(size)) {
        int iters = bench_iters(&o, size), warmup = bench_warmup(&o, size);
        size_t n = size ? size : 1;
        int w = bench_window_for(&o, size);
        double t0 = 0.0;
        for (int i = 0; i < warmup + iters; i++) {
            if (i == warmup)
                t0 = bench_now();
            int err = 0;
            if (!bw && !me) {
                err = send_all(buf, n);
                rx_wait(expect += n);
            } else if (!bw) {
                rx_wait(expect += n);
                err = send_all(buf, n);
            } else if (!me) {
                for (int j = 0; j < w && !err; j++)
                    err = send_all(buf, n);
                rx_wait(expect += 1);
            } else {
                rx_wait(expect += n * (size_t)w);
                err = send_all(buf, 1);
            }
            if (err) {
                if (me)
                    _exit(1);
                printf("# error: send failed at size %zu: %s\n", size, strerror(errno));
                status = 1;
                goto out;
            }
        }
        double t = bench_now() - t0;
        if (!me)
            bench_limit_row(bw, size, w, iters, t);
        if (size == 0 && o.max_size == 0)
            break;
    }
    if (me) {
        struct timespec ts = {0, 300 * 1000 * 1000};
        if (conn_mode)
            for (double t_end = bench_now() + 0.3; bench_now() < t_end;)
                service();
        else
            nanosleep(&ts, NULL); /* the last answer acknowledged */
        _exit(0);
    }
    bench_print_end();
out:
    waitpid(child, NULL, 0);
    return status;
}
