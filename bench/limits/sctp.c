/* bench/limits/sctp.c — what usrsctp can do between two processes on
 * loopback, over UDP encapsulation, with the same socket set-up as Plexus's
 * SCTP transport (one-to-many socket, receive callback, non-blocking sends,
 * SCTP_NODELAY, path MTU fixed with discovery off): the floor under that
 * transport, and a place to try usrsctp's knobs one at a time.
 *   -o lat: ping-pong, half round trip (0 bytes sends 1);
 *   -o bw:  a window of messages, then a 1-byte ack, as in bench/bw.c.
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
 * Each process is pinned to its own core when there are two (-b disables).
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
    "usage: sctp [-o lat|bw] [-s poll|block] [-b (no pinning)] [-m [min:]max] [-i N] [-x N]\n"
    "           [-I N] [-X N] [-W N]   (knobs: SCTPX_MTU SCTPX_SACKI SCTPX_NODELAY SCTPX_FRAG\n"
    "           SCTPX_MAXSEG SCTPX_SACK_DELAY SCTPX_SACK_FREQ)";

/* bytes received (the callback adds, the main thread waits for a count) */
static atomic_size_t rx_bytes;
static atomic_int rx_up, rang;
static int efd = -1, block;
static struct socket *so;
static sctp_assoc_t assoc;
static size_t frag = 65536;
static int sacki = 1;

static int env_int(const char *name, int dflt)
{
    const char *v = getenv(name);
    return v && *v ? atoi(v) : dflt;
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
    } else {
        atomic_fetch_add(&rx_bytes, len);
    }
    free(data);
    if (block && !atomic_exchange(&rang, 1)) {
        uint64_t one = 1;
        if (write(efd, &one, sizeof one) < 0) {
            /* full counter: the waiter wakes anyway */
        }
    }
    return 1;
}

/* Waits until at least want bytes have arrived in all. */
static void rx_wait(size_t want)
{
    while (atomic_load(&rx_bytes) < want) {
        if (!block)
            continue;
        struct pollfd p = {.fd = efd, .events = POLLIN};
        atomic_store(&rang, 0);
        if (atomic_load(&rx_bytes) >= want)
            break;
        poll(&p, 1, 100);
        uint64_t v;
        if (read(efd, &v, sizeof v) < 0) {
            /* EAGAIN: nothing to read */
        }
    }
}

static int send_all(const char *buf, size_t n)
{
    struct sctp_sndinfo si = {.snd_sid = 1, .snd_flags = sacki ? SCTP_SACK_IMMEDIATELY : 0,
                              .snd_assoc_id = assoc};
    size_t off = 0;
    do {
        size_t len = n - off < frag ? n - off : frag;
        ssize_t w = usrsctp_sendv(so, buf + off, len, NULL, 0, &si, sizeof si, SCTP_SENDV_SNDINFO, 0);
        if (w < 0 && (errno == EWOULDBLOCK || errno == EAGAIN || errno == ENOBUFS))
            continue;
        if (w < 0)
            return -1;
        off += len;
    } while (off < n);
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

static int stack_start(int port, uint32_t mtu)
{
    usrsctp_init((uint16_t)port, NULL, NULL);
    usrsctp_sysctl_set_sctp_sendspace(4u << 20);
    usrsctp_sysctl_set_sctp_recvspace(4u << 20);
    if (getenv("SCTPX_SACK_DELAY"))
        usrsctp_sysctl_set_sctp_delayed_sack_time_default((uint32_t)env_int("SCTPX_SACK_DELAY", 200));
    if (getenv("SCTPX_SACK_FREQ"))
        usrsctp_sysctl_set_sctp_sack_freq_default((uint32_t)env_int("SCTPX_SACK_FREQ", 2));
    so = usrsctp_socket(AF_INET, SOCK_SEQPACKET, IPPROTO_SCTP, rx_cb, NULL, 0, NULL);
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
        pp.spp_address.ss_family = AF_INET;
        pp.spp_assoc_id = SCTP_FUTURE_ASSOC;
        pp.spp_flags = SPP_PMTUD_DISABLE;
        pp.spp_pathmtu = mtu;
        if (usrsctp_setsockopt(so, IPPROTO_SCTP, SCTP_PEER_ADDR_PARAMS, &pp, sizeof pp))
            return -1;
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
    int rc = bench_limit_parse(argc, argv, &o, usage, &bw, &block);
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
    printf("# plexus-bench: %s\n", bw ? "limit_sctp_bw" : "limit_sctp_lat");
    printf("# description: usrsctp over UDP loopback %s, one-to-many socket, receive callback\n",
           bw ? "streaming: window of messages then 1-byte ack" : "ping-pong, half round trip");
    printf("# sizes: %zu:%zu\n# iterations: %d (above %zu B: %d)\n", o.min_size, o.max_size,
           o.iters, BENCH_LARGE_THRESHOLD, o.iters_large);
    printf("# pinned: %s\n", pinned ? "cores 0 and 1" : "no");
    printf("# wait: %s\n", block ? "eventfd, poll()" : "busy polling a flag");
    printf("# knobs: mtu %u, maxseg %d, sack_immediately %d, nodelay %d, frag %zu, sack delay %s, sack freq %s\n",
           mtu, env_int("SCTPX_MAXSEG", 0), sacki, env_int("SCTPX_NODELAY", 1), frag,
           getenv("SCTPX_SACK_DELAY") ? getenv("SCTPX_SACK_DELAY") : "default",
           getenv("SCTPX_SACK_FREQ") ? getenv("SCTPX_SACK_FREQ") : "default");
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
    if (stack_start(port[me], mtu)) {
        printf("# error: usrsctp set-up failed: %s\n", strerror(errno));
        if (!me)
            kill(child, SIGKILL);
        return 1;
    }
    if (me) {
        struct sctp_udpencaps ue = {.sue_assoc_id = SCTP_FUTURE_ASSOC, .sue_port = htons((uint16_t)port[0])};
        struct sockaddr_in sin = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port[0])};
        sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        usrsctp_setsockopt(so, IPPROTO_SCTP, SCTP_REMOTE_UDP_ENCAPS_PORT, &ue, sizeof ue);
        struct timespec ts = {0, 100 * 1000 * 1000};
        nanosleep(&ts, NULL); /* the other side's stack is up */
        if (usrsctp_connectx(so, (struct sockaddr *)&sin, 1, &assoc) && errno != EINPROGRESS)
            _exit(1);
    } else {
        /* the parent learns the child's port only from the association;
         * set the encapsulation port for replies before it comes */
        struct sctp_udpencaps ue = {.sue_assoc_id = SCTP_FUTURE_ASSOC, .sue_port = htons((uint16_t)port[1])};
        usrsctp_setsockopt(so, IPPROTO_SCTP, SCTP_REMOTE_UDP_ENCAPS_PORT, &ue, sizeof ue);
    }
    double end = bench_now() + 10;
    while (!atomic_load(&rx_up) && bench_now() < end) {
        struct timespec ts = {0, 1000 * 1000};
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
    if (pinned)
        bench_pin(me ? 1 : 0);
    char *buf = bench_alloc(o.max_size ? o.max_size : 1);
    size_t expect = 0;
    int status = 0;
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
        nanosleep(&ts, NULL); /* the last answer acknowledged */
        _exit(0);
    }
    bench_print_end();
out:
    waitpid(child, NULL, 0);
    return status;
}
