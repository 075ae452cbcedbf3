/*
 * rail_exchange: the MPI program of the multirail system tests
 * (test_multirail.py) and of bench/multirail. Standard MPI only (builds with
 * any MPI's mpicc); ranks pair up as (0,1), (2,3), ...
 *
 * Usage: rail_exchange exchange [-n MIB] [-m SIZE] [-g K:FILE]... [-e return|fatal]
 *        rail_exchange sizes [-k N] [-K SIZE] [-l N] [-L SIZE] [-e return|fatal]
 *   (extra arguments are ignored: the tests add a unique marker for pgrep)
 *
 * exchange: each rank sends MIB MiB (default 256) to its partner and receives
 *   as much, in messages of SIZE bytes (default 4M; K and M suffixes), both
 *   directions at once (MPI_Irecv, MPI_Isend, then MPI_Wait on each, per message).
 *   Every byte received is checked against a pattern of (sender, message
 *   index, offset), so a chunk lost, duplicated, misplaced or taken from
 *   another message is caught. After each message a progress line
 *     rail_exchange: rank R msg I/N t=SECONDS wall=EPOCH MBps=RATE
 *   (t since the first message, wall the real-time clock, RATE that message's
 *   bytes both ways over its time) lets a driver cut a link in the middle.
 *   -g K:FILE (up to 8): before message K, print
 *     rail_exchange: rank R gate K waiting for FILE
 *   and wait until FILE exists, calling MPI_Iprobe meanwhile (the library
 *   keeps making progress), then "rail_exchange: rank R gate K open".
 * sizes: N small (-k, default 1000) messages of -K bytes (default 1K), then
 *   N large (-l, default 20) of -L bytes (default 1M), each exchanged both
 *   ways with MPI_Sendrecv and checked the same way (for the route rules).
 *
 * -e return: MPI_ERRORS_RETURN on MPI_COMM_WORLD; a call that fails prints
 *     rail_exchange: rank R CALL failed at message I: class C (NAME): TEXT
 *   and the rank calls MPI_Abort(MPI_COMM_WORLD, 3). The default (fatal)
 *   leaves MPI_ERRORS_ARE_FATAL.
 *
 * Last line of each rank:
 *   rail_exchange: rank R done: checked B bytes in N messages, E errors
 *   (sizes mode: "sizes done: ..."); exit status 0 only without errors.
 * Wrong data is also reported (the first 5 places) on stderr.
 */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAX_GATES 8

static int rank, size, partner;
static int errors_return;
static unsigned long long wrong_reports;

static uint64_t pattern(int from, uint64_t msg, uint64_t word)
{
    uint64_t x = ((uint64_t)(from + 1) << 56) ^ (msg << 36) ^ word;
    x ^= x >> 31;
    x *= 0x9e3779b97f4a7c15ull;
    x ^= x >> 29;
    return x;
}

static void fill(unsigned char *buf, size_t len, int from, uint64_t msg)
{
    size_t words = len / 8;
    uint64_t *w = (uint64_t *)buf;
    for (size_t i = 0; i < words; i++)
        w[i] = pattern(from, msg, i);
    if (len % 8) {
        uint64_t last = pattern(from, msg, words);
        memcpy(buf + words * 8, &last, len % 8);
    }
}

/* Number of wrong bytes in a received message; the first few places go to stderr. */
static unsigned long long check(const unsigned char *buf, size_t len, int from, uint64_t msg)
{
    unsigned long long bad = 0;
    for (size_t off = 0; off < len; off += 8) {
        uint64_t want = pattern(from, msg, off / 8), got = 0;
        size_t n = len - off < 8 ? len - off : 8;
        memcpy(&got, buf + off, n);
        if (n < 8)
            want &= (1ull << (8 * n)) - 1; /* little endian: the first n bytes */
        if (got == want)
            continue;
        for (size_t b = 0; b < n; b++)
            bad += ((got >> (8 * b)) & 0xff) != ((want >> (8 * b)) & 0xff);
        if (wrong_reports++ < 5)
            fprintf(stderr,
                    "rail_exchange: rank %d: message %llu from rank %d wrong at byte %zu: "
                    "0x%016llx instead of 0x%016llx\n",
                    rank, (unsigned long long)msg, from, off, (unsigned long long)got,
                    (unsigned long long)want);
    }
    return bad;
}

static void failed(const char *call, unsigned long long msg, int rc)
{
    char text[MPI_MAX_ERROR_STRING];
    int len = 0, cls = 0;
    MPI_Error_class(rc, &cls);
    MPI_Error_string(rc, text, &len);
    const char *name = "";
#ifdef MPIX_ERR_PROC_FAILED
    if (cls == MPIX_ERR_PROC_FAILED)
        name = "MPIX_ERR_PROC_FAILED";
#endif
    printf("rail_exchange: rank %d %s failed at message %llu: class %d (%s): %s\n", rank, call,
           msg, cls, name, text);
    fflush(stdout);
    MPI_Abort(MPI_COMM_WORLD, 3);
}

#define CALL(msg, fn, ...)                                                                    \
    do {                                                                                      \
        int rc_ = fn(__VA_ARGS__);                                                            \
        if (rc_ != MPI_SUCCESS)                                                               \
            failed(#fn, (msg), rc_);                                                          \
    } while (0)

static int parse_size(const char *s, size_t *out)
{
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    if (end == s)
        return -1;
    if (*end == 'K' || *end == 'k')
        v <<= 10, end++;
    else if (*end == 'M' || *end == 'm')
        v <<= 20, end++;
    else if (*end == 'G' || *end == 'g')
        v <<= 30, end++;
    if (*end != '\0' || v == 0 || v > (1ull << 31) - 1)
        return -1;
    *out = (size_t)v;
    return 0;
}

static double wall(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void wait_gate(int k, const char *file)
{
    printf("rail_exchange: rank %d gate %d waiting for %s\n", rank, k, file);
    fflush(stdout);
    while (access(file, F_OK) != 0) {
        int flag = 0;
        CALL((unsigned long long)k, MPI_Iprobe, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD,
             &flag, MPI_STATUS_IGNORE);
        if (flag) {
            fprintf(stderr, "rail_exchange: rank %d: a message arrived at gate %d\n", rank, k);
            MPI_Abort(MPI_COMM_WORLD, 4);
        }
        struct timespec ts = { 0, 20 * 1000 * 1000 };
        nanosleep(&ts, NULL);
    }
    printf("rail_exchange: rank %d gate %d open\n", rank, k);
    fflush(stdout);
}

static void *xmalloc(size_t n)
{
    void *p = malloc(n);
    if (p == NULL) {
        fprintf(stderr, "rail_exchange: rank %d: cannot allocate %zu bytes\n", rank, n);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    return p;
}

/* One message of len bytes each way with the partner; returns wrong bytes. */
static unsigned long long exchange_one(unsigned char *sbuf, unsigned char *rbuf, size_t len,
                                       uint64_t msg, int use_sendrecv)
{
    MPI_Status st[2];
    int count = -1;
    fill(sbuf, len, rank, msg);
    memset(rbuf, 0, len);
    int tag = (int)(msg % 30000);
    if (use_sendrecv) {
        CALL(msg, MPI_Sendrecv, sbuf, (int)len, MPI_BYTE, partner, tag, rbuf, (int)len, MPI_BYTE,
             partner, tag, MPI_COMM_WORLD, &st[0]);
    } else {
        MPI_Request req[2];
        CALL(msg, MPI_Irecv, rbuf, (int)len, MPI_BYTE, partner, tag, MPI_COMM_WORLD, &req[0]);
        CALL(msg, MPI_Isend, sbuf, (int)len, MPI_BYTE, partner, tag, MPI_COMM_WORLD, &req[1]);
        /* one MPI_Wait each, so that a failure reports its own class (a
         * Waitall would say MPI_ERR_IN_STATUS) */
        CALL(msg, MPI_Wait, &req[0], &st[0]);
        CALL(msg, MPI_Wait, &req[1], &st[1]);
    }
    MPI_Get_count(&st[0], MPI_BYTE, &count);
    unsigned long long bad = check(rbuf, len, partner, msg);
    if (count != (int)len || st[0].MPI_SOURCE != partner || st[0].MPI_TAG != tag) {
        fprintf(stderr,
                "rail_exchange: rank %d: message %llu: status count %d source %d tag %d, "
                "expected %zu, %d, %d\n",
                rank, (unsigned long long)msg, count, st[0].MPI_SOURCE, st[0].MPI_TAG, len,
                partner, tag);
        bad += len;
    }
    return bad;
}

static int mode_exchange(int argc, char **argv)
{
    size_t total_mib = 256, msg_size = 4u << 20;
    int ngates = 0, gate_at[MAX_GATES];
    const char *gate_file[MAX_GATES];
    int opt;
    while ((opt = getopt(argc, argv, "n:m:g:e:")) != -1) {
        if (opt == 'n') {
            total_mib = (size_t)strtoull(optarg, NULL, 10);
        } else if (opt == 'm') {
            if (parse_size(optarg, &msg_size) != 0)
                goto usage;
        } else if (opt == 'g') {
            char *colon = strchr(optarg, ':');
            if (colon == NULL || ngates == MAX_GATES)
                goto usage;
            gate_at[ngates] = atoi(optarg);
            gate_file[ngates++] = colon + 1;
        } else if (opt != 'e') {
            goto usage;
        }
    }
    if (total_mib == 0)
        goto usage;
    unsigned long long total = (unsigned long long)total_mib << 20;
    unsigned long long nmsg = (total + msg_size - 1) / msg_size;
    unsigned char *sbuf = xmalloc(msg_size), *rbuf = xmalloc(msg_size);
    unsigned long long checked = 0, bad = 0;

    CALL(0ull, MPI_Barrier, MPI_COMM_WORLD);
    double t0 = MPI_Wtime(), tprev = t0;
    for (unsigned long long i = 0; i < nmsg; i++) {
        for (int g = 0; g < ngates; g++)
            if ((unsigned long long)gate_at[g] == i)
                wait_gate(gate_at[g], gate_file[g]);
        if (ngates > 0)
            tprev = MPI_Wtime();
        size_t len = i + 1 < nmsg ? msg_size : (size_t)(total - i * msg_size);
        bad += exchange_one(sbuf, rbuf, len, i, 0);
        checked += len;
        double now = MPI_Wtime();
        printf("rail_exchange: rank %d msg %llu/%llu t=%.3f wall=%.3f MBps=%.1f\n", rank, i + 1,
               nmsg, now - t0, wall(), 2.0 * (double)len / (now - tprev) / 1e6);
        fflush(stdout);
        tprev = now;
    }
    printf("rail_exchange: rank %d done: checked %llu bytes in %llu messages, %llu errors\n",
           rank, checked, nmsg, bad);
    fflush(stdout);
    free(sbuf);
    free(rbuf);
    return bad != 0;
usage:
    fprintf(stderr, "rail_exchange: usage: rail_exchange exchange [-n MIB] [-m SIZE] "
                    "[-g K:FILE]... [-e return|fatal]\n");
    return 2;
}

static int mode_sizes(int argc, char **argv)
{
    size_t small = 1024, large = 1u << 20;
    long nsmall = 1000, nlarge = 20;
    int opt;
    while ((opt = getopt(argc, argv, "k:K:l:L:e:")) != -1) {
        if (opt == 'k')
            nsmall = atol(optarg);
        else if (opt == 'l')
            nlarge = atol(optarg);
        else if (opt == 'K' && parse_size(optarg, &small) == 0)
            ;
        else if (opt == 'L' && parse_size(optarg, &large) == 0)
            ;
        else if (opt != 'e')
            goto usage;
    }
    if (nsmall < 0 || nlarge < 0)
        goto usage;
    size_t maxlen = small > large ? small : large;
    unsigned char *sbuf = xmalloc(maxlen), *rbuf = xmalloc(maxlen);
    unsigned long long checked = 0, bad = 0, msg = 0;
    CALL(0ull, MPI_Barrier, MPI_COMM_WORLD);
    for (long i = 0; i < nsmall; i++, msg++) {
        bad += exchange_one(sbuf, rbuf, small, msg, 1);
        checked += small;
    }
    for (long i = 0; i < nlarge; i++, msg++) {
        bad += exchange_one(sbuf, rbuf, large, msg, 1);
        checked += large;
    }
    printf("rail_exchange: rank %d sizes done: %ld small of %zu bytes, %ld large of %zu bytes, "
           "checked %llu bytes in %llu messages, %llu errors\n",
           rank, nsmall, small, nlarge, large, checked, msg, bad);
    fflush(stdout);
    free(sbuf);
    free(rbuf);
    return bad != 0;
usage:
    fprintf(stderr, "rail_exchange: usage: rail_exchange sizes [-k N] [-K SIZE] [-l N] "
                    "[-L SIZE] [-e return|fatal]\n");
    return 2;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc < 2 || size % 2 != 0) {
        if (rank == 0)
            fprintf(stderr, "rail_exchange: usage: rail_exchange exchange|sizes [options] "
                            "(an even number of ranks)\n");
        MPI_Finalize();
        return 2;
    }
    partner = rank ^ 1;
    for (int i = 2; i + 1 < argc; i++)
        if (strcmp(argv[i], "-e") == 0 && strcmp(argv[i + 1], "return") == 0)
            errors_return = 1;
    if (errors_return)
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    const char *mode = argv[1];
    int rc;
    optind = 2;
    if (strcmp(mode, "exchange") == 0) {
        rc = mode_exchange(argc, argv);
    } else if (strcmp(mode, "sizes") == 0) {
        rc = mode_sizes(argc, argv);
    } else {
        fprintf(stderr, "rail_exchange: unknown mode '%s'\n", mode);
        rc = 2;
    }
    MPI_Finalize();
    return rc;
}
