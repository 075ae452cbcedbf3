/*
 * fuzz_launcher_wire.c - libFuzzer target for what mpiexec reads from a
 * connection to its proxy port (tools/mpiexec/remote.c + wire.c): anyone who
 * can reach the port may connect, and a proxy that passed the secret check
 * still sends frames that must not crash mpiexec whatever they hold.
 *
 * The input is the byte stream of one connection. It is written into a
 * socketpair and mpiexec's own code reads it: plx_remote_pending_ready
 * (frame reassembly, the HELLO checks: magic, secret, proxy id), then, once a
 * proxy is accepted, plx_remote_host_ready (every frame type: STARTED,
 * SPAWN_FAILED, PMI relayed into the real PMI-1 server, whose replies go back
 * as PMI frames, OUTPUT into the real output forwarders, EXIT, LOG, ...),
 * until the stream ends. The job: 4 ranks on 2 hosts (0,2 on host 0; 1,3 on
 * host 1), the proxy secret below. remote.c is included so that its static
 * functions are reachable; what mpiexec.c would do (messages, ending the job)
 * is stubbed to bookkeeping. Seeds: tests/fuzz/corpus/launcher_wire, streams
 * recorded from real proxies (mpiexec --launcher fork -hosts hA,hB -n 4),
 * their secret replaced by this one.
 */
#include "../../tools/mpiexec/remote.c"

#define FZ_SECRET "0123456789abcdef0123456789abcdef"
#define FZ_SIZE 4
#define FZ_HOSTS 2

struct plx_mpiexec plx_mpiexec;
static int fz_devnull = -1;

/* ---- what mpiexec.c provides, reduced to bookkeeping ---- */
double plx_mpiexec_now(void)
{
    return 1000.0;
}
void plx_mpiexec_msg(const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);        /* formats everything, prints nothing */
    va_end(ap);
}
void *plx_mpiexec_xalloc(size_t n)
{
    void *p = calloc(1, n ? n : 1);
    if (!p)
        abort();
    return p;
}
void plx_mpiexec_set_code(int code)
{
    if (!plx_mpiexec.have_code) {
        plx_mpiexec.have_code = 1;
        plx_mpiexec.code = code;
    }
}
void plx_mpiexec_kill_all(int sig)
{
    (void)sig;                  /* no process of the job exists here */
}
void plx_mpiexec_end_job(double grace)
{
    (void)grace;
    plx_mpiexec.phase = PLX_MPIEXEC_ENDING;
}
void plx_mpiexec_fail(int rank, int code, const char *fmt, ...)
{
    (void)rank;
    plx_mpiexec_set_code(code);
    (void)fmt;
}
void plx_mpiexec_rank_exited(int rank, int signaled, int status)
{
    if (rank < 0 || rank >= plx_mpiexec.size || plx_mpiexec.ranks[rank].exited)
        abort();                /* remote.c must have checked the rank */
    plx_mpiexec.ranks[rank].exited = 1;
    plx_mpiexec.ranks[rank].signaled = signaled;
    plx_mpiexec.ranks[rank].status = status;
    plx_mpiexec.nexited++;
}
int plx_mpiexec_exec_status(int err)
{
    return err == 2 ? 127 : 126;
}
const char *plx_mpiexec_rank_name(int rank, char *buf, size_t len)
{
    snprintf(buf, len, "rank %d", rank);
    return buf;
}
_Noreturn void plx_mpiexec_usage_error(const char *fmt, ...)
{
    (void)fmt;
    abort();                    /* not reached from a connection */
}
double plx_mpiexec_min_deadline(double a, double b)
{
    return a == 0 ? b : b == 0 ? a : a < b ? a : b;
}

/* ---- the PMI server's replies go back to the proxy, as in mpiexec ---- */
static int fz_pmi_send(void *ctx, int rank, const char *buf, size_t len)
{
    (void)ctx;
    return plx_mpiexec_remote_pmi_send(rank, buf, len);
}
static void fz_pmi_abort(void *ctx, int rank, int code, const char *msg)
{
    (void)ctx, (void)rank, (void)msg;
    plx_mpiexec_set_code(code);
}
static void fz_pmi_error(void *ctx, int rank, const char *what)
{
    (void)ctx, (void)rank, (void)what;
}

static int fz_ranks_of[FZ_HOSTS][FZ_SIZE / FZ_HOSTS] = {{0, 2}, {1, 3}};   /* round robin, as recorded */

static void fz_job_reset(void)
{
    static struct plx_rank ranks[FZ_SIZE];
    static struct plx_mphost hosts[FZ_HOSTS];
    static struct plx_app app;
    static char *argv[] = {"prog", NULL};
    static const int appnum[FZ_SIZE] = {0, 0, 0, 0};
    struct plx_mpiexec *m = &plx_mpiexec;

    if (fz_devnull < 0)
        fz_devnull = open("/dev/null", O_WRONLY | O_CLOEXEC);
    memset(m, 0, sizeof *m);
    m->size = FZ_SIZE;
    m->ranks = ranks;
    m->hosts = hosts;
    m->nhosts = FZ_HOSTS;
    m->multi = 1;
    m->listen_fd = -1;
    m->in_pipe = -1;
    m->host_timeout = 10;
    m->phase = PLX_MPIEXEC_RUNNING;
    app.nprocs = FZ_SIZE;
    app.argv = argv;
    m->apps = &app;
    m->napps = 1;
    memcpy(m->proxy_secret, FZ_SECRET, sizeof FZ_SECRET);
    for (int i = 0; i < PLX_MPIEXEC_PENDING_MAX; i++)
        plx_wire_init(&m->pending[i].conn, -1, PLX_MPIEXEC_HELLO_MAX);
    for (int h = 0; h < FZ_HOSTS; h++) {
        memset(&hosts[h], 0, sizeof hosts[h]);
        snprintf(hosts[h].name, sizeof hosts[h].name, "h%c", 'A' + h);
        hosts[h].nranks = FZ_SIZE / FZ_HOSTS;
        hosts[h].ranks = fz_ranks_of[h];
        plx_wire_init(&hosts[h].conn, -1, PLX_WIRE_FRAME_MAX);
    }
    for (int r = 0; r < FZ_SIZE; r++) {
        memset(&ranks[r], 0, sizeof ranks[r]);
        ranks[r].host = r % FZ_HOSTS;
        ranks[r].local_rank = r / FZ_HOSTS;
        plx_iofwd_init_fed(&ranks[r].out, fz_devnull, r, 1);
        plx_iofwd_init_fed(&ranks[r].err, fz_devnull, r, 1);
    }
    const struct plx_pmisrv_cfg cfg = {
        .size = FZ_SIZE, .universe_size = FZ_SIZE, .appnum = appnum,
        .kvsname = "plexus-27367-4e26ffa7", .process_mapping = "(vector,(0,2,2))",
        .job_secret = FZ_SECRET,
    };
    static const struct plx_pmisrv_ops ops = {fz_pmi_send, fz_pmi_abort, fz_pmi_error, NULL};
    m->pmi = plx_pmisrv_create(&cfg, &ops, NULL);
    if (!m->pmi)
        abort();
}

static void fz_job_end(void)
{
    struct plx_mpiexec *m = &plx_mpiexec;
    for (int i = 0; i < PLX_MPIEXEC_PENDING_MAX; i++)
        plx_wire_close(&m->pending[i].conn);
    for (int h = 0; h < m->nhosts; h++)
        plx_wire_close(&m->hosts[h].conn);
    for (int r = 0; r < m->size; r++) {
        plx_iofwd_close(&m->ranks[r].out);
        plx_iofwd_close(&m->ranks[r].err);
    }
    plx_pmisrv_destroy(m->pmi);
    m->pmi = NULL;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    int sv[2];
    if (size > 131072)
        return 0;               /* the socket's buffer bounds one write */
    signal(SIGPIPE, SIG_IGN);
    fz_job_reset();
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, sv) != 0)
        abort();
    int buf = 1 << 20;
    setsockopt(sv[1], SOL_SOCKET, SO_SNDBUF, &buf, sizeof buf);
    setsockopt(sv[0], SOL_SOCKET, SO_RCVBUF, &buf, sizeof buf);
    size_t off = 0;
    while (off < size) {
        ssize_t n = write(sv[1], data + off, size - off);
        if (n <= 0)
            break;
        off += (size_t)n;
    }
    shutdown(sv[1], SHUT_WR);   /* the stream ends: mpiexec sees EOF */
    struct plx_mpiexec *m = &plx_mpiexec;
    plx_wire_init(&m->pending[0].conn, sv[0], PLX_MPIEXEC_HELLO_MAX);
    snprintf(m->pending[0].peer, sizeof m->pending[0].peer, "fuzzer");
    double now = plx_mpiexec_now();
    plx_remote_pending_ready(0, now);
    for (int h = 0; h < m->nhosts; h++)
        for (int rounds = 0; m->hosts[h].conn.fd >= 0 && rounds < 64; rounds++)
            plx_remote_host_ready(h, POLLIN, now);
    /* invariants: a rank is counted once */
    int exited = 0;
    for (int r = 0; r < m->size; r++)
        exited += m->ranks[r].exited;
    if (exited != m->nexited)
        abort();
    fz_job_end();
    close(sv[1]);
    return 0;
}
