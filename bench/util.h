/* bench/util.h — shared helpers for the Plexus benchmark programs.
 *
 * Every benchmark is one .c file plus this header, written against the plain
 * MPI standard so that the same source builds unchanged with any MPI's mpicc
 * (Plexus, Open MPI, MPICH). The probes in bench/limits/ use no MPI: they
 * define BENCH_NO_MPI before including this file.
 *
 * Output format, parsed by bench/plexus_bench/parse.py (keep them in step):
 *   # plexus-bench: <name>          first line, names the program
 *   # <key>: <value>                any number of metadata lines
 *   # columns: <name> <name> ...    once, before the first row
 *   <number> <number> ...           one row per message size (first column)
 *   # error: <text>                 a failed check; the run is invalid
 *   # end                           the program finished normally
 * Column names carry their unit: size_B, latency_us, bw_MBps (1 MB = 1e6 B).
 *
 * Everything here is static inline so that a program using only part of it
 * compiles without unused-function warnings.
 */
#ifndef PLEXUS_BENCH_UTIL_H
#define PLEXUS_BENCH_UTIL_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#ifndef BENCH_NO_MPI
#include <mpi.h>
#else
#include <sched.h>

/* The limit probes (no MPI, two processes): the calling thread on one CPU,
 * best effort. */
static inline void bench_pin(int cpu)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    sched_setaffinity(0, sizeof(set), &set);
}

/* A limit probe's row after `iters` timed rounds of `seconds` in all: MB/s
 * of `window` messages a round (bw), or the half round trip in us. */
static inline void bench_limit_row(int bw, size_t size, int window, int iters, double seconds)
{
    if (bw)
        printf("%zu %.2f\n", size, (double)size * window * iters / seconds / 1e6);
    else
        printf("%zu %.3f\n", size, seconds * 1e6 / (2.0 * iters));
    fflush(stdout);
}
#endif

#define BENCH_KiB ((size_t)1024)
#define BENCH_MiB ((size_t)1024 * 1024)

/* Messages above this size use the "large" iteration counts, as in OSU. */
#define BENCH_LARGE_THRESHOLD ((size_t)8192)

/* Receive windows of distinct buffers are capped to this many bytes; above
 * it the window shrinks (a 16 MiB message gets a window of 4). */
#define BENCH_WINDOW_POOL (64 * BENCH_MiB)

struct bench_opts {
    size_t min_size, max_size; /* -m [min:]max */
    int iters, warmup;         /* -i, -x: messages up to 8 KiB */
    int iters_large;           /* -I: above 8 KiB (default iters/10) */
    int warmup_large;          /* -X: above 8 KiB (default warmup/10) */
    int window;                /* -W: messages in flight for bw tests */
    const char *op;            /* -o: operation, benchmark-specific */
    const char *sync;          /* -s: synchronisation, benchmark-specific */
    double param;              /* -d: number, benchmark-specific */
    int flag;                  /* -b: switch, benchmark-specific */
    int iters_set, warmup_set, iters_large_set, warmup_large_set;
};

static inline void bench_opts_init(struct bench_opts *o, size_t min_size, size_t max_size,
                                   int iters, int warmup)
{
    memset(o, 0, sizeof(*o));
    o->min_size = min_size;
    o->max_size = max_size;
    o->iters = iters;
    o->warmup = warmup;
    o->window = 64;
    o->op = "";
    o->sync = "";
}

/* "4096", "64K", "16M", "1G" -> bytes; returns 0 on success. */
static inline int bench_parse_size(const char *s, size_t *out)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || end == s)
        return -1;
    switch (*end) {
    case 'k': case 'K': v <<= 10; end++; break;
    case 'm': case 'M': v <<= 20; end++; break;
    case 'g': case 'G': v <<= 30; end++; break;
    default: break;
    }
    if (*end == 'B' || *end == 'b')
        end++;
    if (*end != '\0')
        return -1;
    *out = (size_t)v;
    return 0;
}

static inline int bench_parse_range(const char *s, struct bench_opts *o)
{
    const char *colon = strchr(s, ':');
    if (!colon)
        return bench_parse_size(s, &o->max_size);
    char lo[64];
    size_t n = (size_t)(colon - s);
    if (n >= sizeof(lo))
        return -1;
    memcpy(lo, s, n);
    lo[n] = '\0';
    if (n > 0 && bench_parse_size(lo, &o->min_size))
        return -1;
    return bench_parse_size(colon + 1, &o->max_size);
}

static inline int bench_parse_int(const char *s, int *out)
{
    char *end;
    long v = strtol(s, &end, 10);
    if (end == s || *end != '\0' || v < 0 || v > 1000000000L)
        return -1;
    *out = (int)v;
    return 0;
}

/* Parses the common options. Returns 0 to go on, 1 when -h was given (usage
 * printed), -1 on a bad option (message printed). Only the caller's rank 0
 * should print, so pass verbose = (rank == 0). */
static inline int bench_parse(int argc, char **argv, struct bench_opts *o, const char *usage,
                              int verbose)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (a[0] != '-' || a[1] == '\0' || a[2] != '\0')
            goto bad;
        char c = a[1];
        if (c == 'h') {
            if (verbose)
                printf("%s\n"
                       "common options:\n"
                       "  -m [min:]max  message sizes, powers of two (suffixes K M G)\n"
                       "  -i N          timed iterations up to 8 KiB\n"
                       "  -x N          warm-up iterations up to 8 KiB\n"
                       "  -I N          timed iterations above 8 KiB (default -i / 10)\n"
                       "  -X N          warm-up iterations above 8 KiB (default -x / 10)\n"
                       "  -W N          window: messages in flight (bandwidth tests)\n",
                       usage);
            return 1;
        }
        if (c == 'b') {
            o->flag = 1;
            continue;
        }
        if (i + 1 >= argc)
            goto bad;
        const char *v = argv[++i];
        int rc = 0;
        switch (c) {
        case 'm': rc = bench_parse_range(v, o); break;
        case 'i': rc = bench_parse_int(v, &o->iters); o->iters_set = 1; break;
        case 'x': rc = bench_parse_int(v, &o->warmup); o->warmup_set = 1; break;
        case 'I': rc = bench_parse_int(v, &o->iters_large); o->iters_large_set = 1; break;
        case 'X': rc = bench_parse_int(v, &o->warmup_large); o->warmup_large_set = 1; break;
        case 'W': rc = bench_parse_int(v, &o->window); break;
        case 'o': o->op = v; break;
        case 's': o->sync = v; break;
        case 'd': o->param = strtod(v, NULL); break;
        default: goto bad;
        }
        if (rc)
            goto bad;
        continue;
bad:
        if (verbose)
            fprintf(stderr, "bad option '%s' (-h for help)\n", a);
        return -1;
    }
    if (!o->iters_large_set)
        o->iters_large = o->iters / 10 > 2 ? o->iters / 10 : (o->iters < 2 ? o->iters : 2);
    if (!o->warmup_large_set)
        o->warmup_large = o->warmup / 10 > 1 ? o->warmup / 10 : (o->warmup < 1 ? o->warmup : 1);
    if (o->iters < 1)
        o->iters = 1;
    if (o->iters_large < 1)
        o->iters_large = 1;
    if (o->window < 1)
        o->window = 1;
    if (o->min_size > o->max_size) {
        if (verbose)
            fprintf(stderr, "minimum size above maximum\n");
        return -1;
    }
    return 0;
}

static inline int bench_iters(const struct bench_opts *o, size_t size)
{
    return size > BENCH_LARGE_THRESHOLD ? o->iters_large : o->iters;
}

static inline int bench_warmup(const struct bench_opts *o, size_t size)
{
    return size > BENCH_LARGE_THRESHOLD ? o->warmup_large : o->warmup;
}

/* Sizes: min, then doubling (0 is followed by 1) up to max. */
static inline size_t bench_next_size(size_t s)
{
    return s == 0 ? 1 : s * 2;
}

/* Number of messages in flight for a window of distinct receive buffers. */
static inline int bench_window_for(const struct bench_opts *o, size_t size)
{
    if (size == 0)
        return o->window;
    size_t fit = BENCH_WINDOW_POOL / size;
    if (fit < 1)
        fit = 1;
    return (size_t)o->window < fit ? o->window : (int)fit;
}

static inline size_t bench_window_bytes(const struct bench_opts *o)
{
    size_t total = 0;
    for (size_t s = o->min_size; s <= o->max_size; s = bench_next_size(s)) {
        size_t b = s * (size_t)bench_window_for(o, s);
        if (b > total)
            total = b;
        if (s == 0 && o->max_size == 0)
            break;
    }
    return total;
}

/* Page-aligned, touched buffer; never returns NULL (exits instead). */
static inline void *bench_alloc(size_t bytes)
{
    void *p = NULL;
    if (bytes == 0)
        bytes = 1;
    if (posix_memalign(&p, 4096, bytes) != 0 || !p) {
        fprintf(stderr, "bench: cannot allocate %zu bytes\n", bytes);
        exit(2);
    }
    memset(p, 0, bytes);
    return p;
}

/* Fill and check a recognisable byte pattern derived from a key. */
static inline void bench_fill(void *buf, size_t n, unsigned key)
{
    unsigned char *b = buf;
    for (size_t i = 0; i < n; i++)
        b[i] = (unsigned char)(i * 7u + key * 13u + 1u);
}

/* Returns the index of the first wrong byte, or -1 when all match. */
static inline long bench_check(const void *buf, size_t n, unsigned key)
{
    const unsigned char *b = buf;
    for (size_t i = 0; i < n; i++)
        if (b[i] != (unsigned char)(i * 7u + key * 13u + 1u))
            return (long)i;
    return -1;
}

static inline double bench_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Busy computation for about `us` microseconds that makes no library call
 * but clock_gettime (which is a vDSO call, not a syscall, on Linux). */
static inline double bench_compute_us(double us)
{
    volatile double acc = 1.0;
    double end = bench_now() + us * 1e-6;
    do {
        for (int k = 0; k < 200; k++)
            acc = acc * 1.0000001 + 1e-9;
    } while (bench_now() < end);
    return acc;
}

static inline void bench_print_header(const char *name, const char *description,
                                      const struct bench_opts *o, int nranks)
{
    printf("# plexus-bench: %s\n", name);
    printf("# description: %s\n", description);
    if (nranks > 0)
        printf("# ranks: %d\n", nranks);
    printf("# sizes: %zu:%zu\n", o->min_size, o->max_size);
    printf("# iterations: %d (above %zu B: %d)\n", o->iters, BENCH_LARGE_THRESHOLD,
           o->iters_large);
    printf("# warmup: %d (above %zu B: %d)\n", o->warmup, BENCH_LARGE_THRESHOLD,
           o->warmup_large);
}

static inline void bench_print_end(void)
{
    printf("# end\n");
    fflush(stdout);
}

#ifndef BENCH_NO_MPI

static inline int bench_mpi_rank(void)
{
    int r;
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    return r;
}

static inline int bench_mpi_size(void)
{
    int n;
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    return n;
}

/* Common start: init, parse, check the rank count. Returns 0 to go on;
 * otherwise the caller should MPI_Finalize and return the value - 1. */
static inline int bench_mpi_start(int *argc, char ***argv, struct bench_opts *o,
                                  const char *usage, int min_ranks, int even_ranks)
{
    int rank = bench_mpi_rank(), n = bench_mpi_size();
    int rc = bench_parse(*argc, *argv, o, usage, rank == 0);
    if (rc == 1)
        return 1; /* help: exit 0 */
    if (rc < 0)
        return 2;
    if (n < min_ranks || (even_ranks && n % 2)) {
        if (rank == 0)
            fprintf(stderr, "this benchmark needs %s%d ranks (got %d)\n",
                    even_ranks ? "an even number of, at least " : "at least ", min_ranks, n);
        return 2;
    }
    return 0;
}

/* Reports a failed data check on stdout (for the runner) and stderr, then
 * aborts the job: a fast wrong answer must never look like a result. */
static inline void bench_fail(const char *fmt, ...)
{
    char msg[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    printf("# error: rank %d: %s\n", bench_mpi_rank(), msg);
    fflush(stdout);
    fprintf(stderr, "bench: rank %d: %s\n", bench_mpi_rank(), msg);
    MPI_Abort(MPI_COMM_WORLD, 3);
}

static inline void bench_expect(const void *buf, size_t n, unsigned key, const char *what,
                                size_t size)
{
    long bad = bench_check(buf, n, key);
    if (bad >= 0)
        bench_fail("%s: wrong data at byte %ld of a %zu-byte message", what, bad, size);
}

/* Unidirectional window bandwidth between `sender` and `receiver`: the
 * sender posts a window of MPI_Isend, waits for them, then waits for a small
 * ack; the receiver posts the window of MPI_Irecv into distinct buffers.
 * Returns MB/s on the sender, 0 elsewhere. Other ranks must not call it.
 * (Real status arrays rather than MPI_STATUSES_IGNORE: GCC 12 mistakes
 * MPICH's MPI_STATUSES_IGNORE for a zero-length array and warns.) */
static inline double bench_window_bw(const struct bench_opts *o, size_t size, int sender,
                                     int receiver, char *sbuf, char *rbufs, MPI_Request *reqs,
                                     MPI_Status *stats)
{
    int rank = bench_mpi_rank();
    int w = bench_window_for(o, size);
    int iters = bench_iters(o, size), warmup = bench_warmup(o, size);
    int ack = 0;
    double t0 = 0.0;
    unsigned key = (unsigned)size + 5u;

    if (rank == sender)
        bench_fill(sbuf, size, key);
    for (int i = 0; i < warmup + iters; i++) {
        if (i == warmup)
            t0 = MPI_Wtime();
        if (rank == sender) {
            for (int j = 0; j < w; j++)
                MPI_Isend(sbuf, (int)size, MPI_BYTE, receiver, 100, MPI_COMM_WORLD, &reqs[j]);
            MPI_Waitall(w, reqs, stats);
            MPI_Recv(&ack, 1, MPI_INT, receiver, 101, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
            for (int j = 0; j < w; j++)
                MPI_Irecv(rbufs + (size_t)j * size, (int)size, MPI_BYTE, sender, 100,
                          MPI_COMM_WORLD, &reqs[j]);
            MPI_Waitall(w, reqs, stats);
            MPI_Send(&ack, 1, MPI_INT, sender, 101, MPI_COMM_WORLD);
        }
    }
    double t = MPI_Wtime() - t0;
    if (rank == receiver) {
        for (int j = 0; j < w; j++)
            bench_expect(rbufs + (size_t)j * size, size, key, "bandwidth receive", size);
        return 0.0;
    }
    return t > 0 ? (double)size * w * iters / t / 1e6 : 0.0;
}

/* Collectives: every rank reports its average time per call; rank 0 prints
 * the average, minimum and maximum over ranks, in microseconds. */
static inline void bench_coll_print_header(const char *name, const char *description,
                                           const struct bench_opts *o, const char *timing)
{
    if (bench_mpi_rank() != 0)
        return;
    bench_print_header(name, description, o, bench_mpi_size());
    printf("# timing: %s\n",
           timing ? timing : "each call timed alone, MPI_Barrier between calls (not timed)");
    printf("# columns: size_B avg_us min_us max_us\n");
    fflush(stdout);
}

static inline void bench_coll_report(size_t size, double seconds, int iters)
{
    int n = bench_mpi_size();
    double us = seconds * 1e6 / iters, sum = 0, lo = 0, hi = 0;
    MPI_Reduce(&us, &sum, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    MPI_Reduce(&us, &lo, 1, MPI_DOUBLE, MPI_MIN, 0, MPI_COMM_WORLD);
    MPI_Reduce(&us, &hi, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    if (bench_mpi_rank() == 0) {
        printf("%zu %.3f %.3f %.3f\n", size, sum / n, lo, hi);
        fflush(stdout);
    }
}

#endif /* BENCH_NO_MPI */

#include <sys/socket.h>

/* Sends (writing) or receives exactly n bytes on a socket, retrying on
 * EINTR and, with MSG_DONTWAIT in flags, busy-polling on EAGAIN. 0 or -1. */
static inline int bench_sock_full(int fd, char *buf, size_t n, int writing, int flags)
{
    while (n > 0) {
        ssize_t k = writing ? send(fd, buf, n, flags | MSG_NOSIGNAL) : recv(fd, buf, n, flags);
        if (k < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK))
            continue;
        if (k <= 0)
            return -1;
        buf += k;
        n -= (size_t)k;
    }
    return 0;
}

#include <arpa/inet.h>
#include <netinet/in.h>

/* A listening TCP socket on 127.0.0.1, port chosen by the kernel and
 * written to *addr; -1 with a "# error" line printed when it fails. */
static inline int bench_listen_loopback(struct sockaddr_in *addr)
{
    int lfd = socket(AF_INET, SOCK_STREAM, 0);
    socklen_t alen = sizeof(*addr);
    memset(addr, 0, sizeof(*addr));
    addr->sin_family = AF_INET;
    addr->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (lfd < 0 || bind(lfd, (struct sockaddr *)addr, sizeof(*addr)) || listen(lfd, 1) ||
        getsockname(lfd, (struct sockaddr *)addr, &alen)) {
        printf("# error: cannot listen on 127.0.0.1: %s\n", strerror(errno));
        if (lfd >= 0)
            close(lfd);
        return -1;
    }
    return lfd;
}

#ifdef BENCH_NO_MPI
/* The options of a two-process limit probe (tcp, sctp): bench_parse, then
 * -o lat|bw into *bw_p and -s poll|block into *block_p. -1 to go on, or the
 * exit code (0 after -h, 2 for a bad option). */
static inline int bench_limit_parse(int argc, char **argv, struct bench_opts *o, const char *usage, int with_hol,
                                    int *bw_p, int *block_p)
{
    o->op = "lat";
    int rc = bench_parse(argc, argv, o, usage, 1);
    if (rc)
        return rc < 0 ? 2 : 0;
    *bw_p = strcmp(o->op, "bw") == 0 ? 1 : with_hol && strcmp(o->op, "hol") == 0 ? 2 : 0;
    if (!*bw_p && strcmp(o->op, "lat")) {
        fprintf(stderr, "-o must be lat, bw%s\n", with_hol ? " or hol" : "");
        return 2;
    }
    if (*bw_p && o->min_size == 0)
        o->min_size = 1;
    *block_p = strcmp(o->sync, "block") == 0;
    if (!*block_p && o->sync[0] && strcmp(o->sync, "poll")) {
        fprintf(stderr, "-s must be poll or block\n");
        return 2;
    }
    return -1;
}
#endif

#endif /* PLEXUS_BENCH_UTIL_H */
