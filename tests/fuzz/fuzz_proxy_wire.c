/*
 * fuzz_proxy_wire.c - libFuzzer target for what plexus-proxy reads from its
 * connection to mpiexec (tools/mpiexec/proxy.c + wire.c): the job description
 * (LAUNCH) and every later frame (PMI for a rank, SIGNAL, STDIN, DONE). The
 * proxy dials mpiexec, so these bytes come from whatever answered at that
 * address.
 *
 * The input is the stream from mpiexec. It is written into a socketpair; the
 * proxy's own code reads it: the first frame must be LAUNCH
 * (plx_proxy_launch_parse), then plx_proxy_conn_frames runs the rest, with
 * every local rank's PMI socket and rank 0's stdin pointing at /dev/null. No
 * rank is started (no fork). Where the proxy gives up (a malformed job or
 * frame: it prints why and exits), the harness returns instead. proxy.c is
 * included so that its static functions are reachable. Seeds:
 * tests/fuzz/corpus/proxy_wire, streams recorded from a real mpiexec
 * (mpiexec --launcher fork -hosts hA,hB -n 4).
 *
 * Leaks are not checked here: a proxy that gives up exits, and what it
 * allocated for the job lives as long as the proxy.
 */
#include <setjmp.h>

static jmp_buf fz_jump;
static _Noreturn void fz_exit(int code)
{
    (void)code;
    longjmp(fz_jump, 1);
}
#define exit(code) fz_exit(code)
#define main plx_proxy_main
#include "../../tools/mpiexec/proxy.c"
#undef main
#undef exit

int __lsan_is_turned_off(void);
int __lsan_is_turned_off(void)
{
    return 1;
}

static int fz_devnull = -1, fz_cwd = -1;

/* What the previous input's LAUNCH allocated: the proxy never frees it (it
 * runs one job and exits), so without this each input leaks its job and a
 * minute of fuzzing ran out of memory (2 GB at 330,000 inputs). The
 * forwarded environment's strings, shared by every app, still leak a little. */
static void fz_free_job(struct plx_proxy *p)
{
    for (int a = 0; p->apps && a < p->napps; a++) {
        for (int i = 0; p->apps[a].argv && p->apps[a].argv[i]; i++)
            free(p->apps[a].argv[i]);
        free(p->apps[a].argv);
        free(p->apps[a].env);
    }
    free(p->apps);
    free(p->r);
    free(p->local_of);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct plx_proxy *p = &plx_proxy;
    int sv[2], type;
    struct plx_wire_rd rd;

    if (size > 131072)
        return 0;
    signal(SIGPIPE, SIG_IGN);
    if (fz_devnull < 0) {
        fz_devnull = open("/dev/null", O_WRONLY | O_CLOEXEC);
        fz_cwd = open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    }
    fz_free_job(p);
    memset(p, 0, sizeof *p);
    p->id = 0;
    p->host = "hA";
    p->sigfd = -1;
    p->in_pipe = -1;
    p->timeout_ms = 10000;
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
    shutdown(sv[1], SHUT_WR);
    plx_wire_init(&p->conn, sv[0], PLX_WIRE_FRAME_MAX);
    if (setjmp(fz_jump) == 0) {
        for (int rounds = 0; rounds < 64 && plx_wire_read(&p->conn) > 0; rounds++)
            ;
        if (plx_wire_next(&p->conn, &type, &rd) == 1 && type == PLX_WIRE_LAUNCH) {
            plx_proxy_launch_parse(&rd);
            for (int i = 0; i < p->nlocal; i++) {
                p->r[i].proc.pmi_fd = dup(fz_devnull);  /* replies are written, to nowhere */
                if (p->r[i].has_stdin && p->in_pipe < 0)
                    p->in_pipe = dup(fz_devnull);
            }
            plx_proxy_conn_frames(plx_util_now());
            (void)plx_wire_flush(&p->conn);
        }
    }
    if (fchdir(fz_cwd) != 0)    /* LAUNCH names the ranks' directory */
        abort();
    for (int i = 0; i < p->nlocal && p->r; i++)
        if (p->r[i].proc.pmi_fd >= 0)
            close(p->r[i].proc.pmi_fd);
    if (p->in_pipe >= 0)
        close(p->in_pipe);
    plx_wire_close(&p->conn);
    close(sv[1]);
    return 0;
}
