/*
 * plx_test.h - checks shared by the MPI test programs in tests/mpi/.
 *
 * The programs are plain MPI-3.1 C: they build and pass under MPICH and Open MPI
 * (tests/mpi/run_with.sh), so a failure under Plexus is a Plexus bug. Each check
 * that passes is counted; the first that fails prints
 *     rank R: FAIL <file>:<line>: <what> (got X, expected Y)
 * and calls MPI_Abort(MPI_COMM_WORLD, 1) (or exit(1) outside Init..Finalize).
 * plx_test_finish() sums the counts on rank 0, prints "<name>: N checks passed"
 * and finalizes. Include this header first: it asks for POSIX (nanosleep).
 */
#ifndef PLX_TEST_H
#define PLX_TEST_H

#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include <mpi.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct plx_test_state {
    const char *name;
    long long checks;
    int rank; /* world rank once known, -1 before MPI_Init */
    int size;
};

static inline struct plx_test_state *plx_test_state(void)
{
    static struct plx_test_state s = {"test", 0, -1, 0};
    return &s;
}

static inline int plx_mpi_active(void)
{
    int init = 0, fin = 0;
    MPI_Initialized(&init);
    MPI_Finalized(&fin);
    return init && !fin;
}

static inline void plx_test_vfail(const char *file, int line, const char *fmt, va_list ap)
{
    const char *base = strrchr(file, '/');
    char msg[1024];

    vsnprintf(msg, sizeof msg, fmt, ap);
    fprintf(stderr, "rank %d: FAIL %s:%d: %s\n", plx_test_state()->rank, base ? base + 1 : file,
            line, msg);
    fflush(stderr);
    fflush(stdout);
    if (plx_mpi_active())
        MPI_Abort(MPI_COMM_WORLD, 1);
    exit(1);
}

static inline void plx_test_fail(const char *file, int line, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    plx_test_vfail(file, line, fmt, ap);
    va_end(ap);
}

static inline void plx_test_pass(void)
{
    plx_test_state()->checks++;
}

/* A readable name for an error code, for failure messages. */
static inline const char *plx_err_name(int code, char *buf, size_t len)
{
    char s[MPI_MAX_ERROR_STRING] = "";
    int cls = -1, n = 0;

    if (plx_mpi_active()) {
        MPI_Error_class(code, &cls);
        MPI_Error_string(code, s, &n);
    }
    snprintf(buf, len, "%d [class %d: %.200s]", code, cls, s);
    return buf;
}

/* Whether the library under test is the one named: its MPI_Get_library_version
 * string starts with `prefix` ("MPICH Version:", "Open MPI"). Used only to skip
 * checks where that library is known to deviate from MPI-3.1 (each such place says
 * what the deviation is), so the check still binds every other library. */
static inline int plx_lib_is(const char *prefix)
{
    char v[MPI_MAX_LIBRARY_VERSION_STRING + 1] = "";
    int len = 0;
    MPI_Get_library_version(v, &len);
    return strncmp(v, prefix, strlen(prefix)) == 0;
}

/* ---- the checks -------------------------------------------------------- */

#define PLX_CHECK(cond, ...)                                                                       \
    do {                                                                                           \
        if (cond)                                                                                  \
            plx_test_pass();                                                                       \
        else                                                                                       \
            plx_test_fail(__FILE__, __LINE__, __VA_ARGS__);                                        \
    } while (0)

/* Integers (any integer type, compared as long long). */
#define PLX_CHECK_EQ(got, expected, what)                                                          \
    do {                                                                                           \
        long long plx_g_ = (long long)(got), plx_e_ = (long long)(expected);                       \
        if (plx_g_ == plx_e_)                                                                      \
            plx_test_pass();                                                                       \
        else                                                                                       \
            plx_test_fail(__FILE__, __LINE__, "%s (got %lld, expected %lld)", what, plx_g_,        \
                          plx_e_);                                                                 \
    } while (0)

#define PLX_CHECK_GE(got, bound, what)                                                             \
    do {                                                                                           \
        long long plx_g_ = (long long)(got), plx_e_ = (long long)(bound);                          \
        if (plx_g_ >= plx_e_)                                                                      \
            plx_test_pass();                                                                       \
        else                                                                                       \
            plx_test_fail(__FILE__, __LINE__, "%s (got %lld, expected >= %lld)", what, plx_g_,     \
                          plx_e_);                                                                 \
    } while (0)

#define PLX_CHECK_STR(got, expected, what)                                                         \
    do {                                                                                           \
        const char *plx_g_ = (got), *plx_e_ = (expected);                                          \
        if (strcmp(plx_g_, plx_e_) == 0)                                                           \
            plx_test_pass();                                                                       \
        else                                                                                       \
            plx_test_fail(__FILE__, __LINE__, "%s (got \"%s\", expected \"%s\")", what, plx_g_,    \
                          plx_e_);                                                                 \
    } while (0)

/* An MPI call that must succeed. */
#define PLX_CHECK_MPI(call)                                                                        \
    do {                                                                                           \
        int plx_rc_ = (call);                                                                      \
        if (plx_rc_ == MPI_SUCCESS) {                                                              \
            plx_test_pass();                                                                       \
        } else {                                                                                   \
            char plx_b_[400];                                                                      \
            plx_test_fail(__FILE__, __LINE__, "%s (got %s, expected MPI_SUCCESS)", #call,          \
                          plx_err_name(plx_rc_, plx_b_, sizeof plx_b_));                           \
        }                                                                                          \
    } while (0)

/* An MPI call that must fail with error class `cls` (needs MPI_ERRORS_RETURN). */
#define PLX_CHECK_ERR(call, cls)                                                                   \
    do {                                                                                           \
        int plx_rc_ = (call), plx_c_ = -1;                                                         \
        if (plx_rc_ != MPI_SUCCESS)                                                                \
            MPI_Error_class(plx_rc_, &plx_c_);                                                     \
        if (plx_rc_ != MPI_SUCCESS && plx_c_ == (cls)) {                                           \
            plx_test_pass();                                                                       \
        } else {                                                                                   \
            char plx_b_[400];                                                                      \
            plx_test_fail(__FILE__, __LINE__, "%s (got %s, expected class %s = %d)", #call,        \
                          plx_err_name(plx_rc_, plx_b_, sizeof plx_b_), #cls, (int)(cls));         \
        }                                                                                          \
    } while (0)

/* Source, tag and byte count of a status. */
#define PLX_CHECK_STATUS(st, src, tag, nbytes)                                                     \
    do {                                                                                           \
        int plx_n_ = -2;                                                                           \
        PLX_CHECK_EQ((st).MPI_SOURCE, (src), "status.MPI_SOURCE");                                 \
        PLX_CHECK_EQ((st).MPI_TAG, (tag), "status.MPI_TAG");                                       \
        MPI_Get_count(&(st), MPI_BYTE, &plx_n_);                                                   \
        PLX_CHECK_EQ(plx_n_, (nbytes), "MPI_Get_count(status, MPI_BYTE)");                         \
    } while (0)

/* The status of a null or inactive request, or of MPI_PROC_NULL receives
 * (source/tag per MPI-3.1 3.7.3 and 3.11; count 0). */
#define PLX_CHECK_EMPTY_STATUS(st, src)                                                            \
    do {                                                                                           \
        int plx_n_ = -2, plx_cx_ = -1;                                                             \
        PLX_CHECK_EQ((st).MPI_SOURCE, (src), "empty status.MPI_SOURCE");                           \
        PLX_CHECK_EQ((st).MPI_TAG, MPI_ANY_TAG, "empty status.MPI_TAG");                           \
        MPI_Get_count(&(st), MPI_BYTE, &plx_n_);                                                   \
        PLX_CHECK_EQ(plx_n_, 0, "empty status count");                                             \
        MPI_Test_cancelled(&(st), &plx_cx_);                                                       \
        PLX_CHECK_EQ(plx_cx_, 0, "empty status cancelled");                                        \
    } while (0)

/* ---- data patterns ----------------------------------------------------- */

/* Payload bytes depend on a seed (sender, receiver, size, round) and on the offset,
 * so lost, duplicated, shifted or misdirected data are all caught. */
static inline uint32_t plx_seed(uint32_t a, uint32_t b, uint32_t c, uint32_t d)
{
    uint32_t h = 2166136261u;
    h = (h ^ a) * 16777619u;
    h = (h ^ b) * 16777619u;
    h = (h ^ c) * 16777619u;
    h = (h ^ d) * 16777619u;
    return h ^ (h >> 15);
}

static inline unsigned char plx_pattern_byte(uint32_t seed, size_t off)
{
    uint32_t o = (uint32_t)off;
    uint32_t x = seed * 2654435761u + o * 13u + (o >> 8) * 7u + (o >> 16) * 3u + (o >> 24);
    return (unsigned char)(x ^ (x >> 11));
}

static inline void plx_fill(void *buf, size_t n, uint32_t seed)
{
    unsigned char *p = buf;
    for (size_t i = 0; i < n; i++)
        p[i] = plx_pattern_byte(seed, i);
}

/* Offset of the first wrong byte, or -1. */
static inline long long plx_verify(const void *buf, size_t n, uint32_t seed)
{
    const unsigned char *p = buf;
    for (size_t i = 0; i < n; i++)
        if (p[i] != plx_pattern_byte(seed, i))
            return (long long)i;
    return -1;
}

#define PLX_CHECK_PATTERN(buf, n, seed, what)                                                      \
    do {                                                                                           \
        const unsigned char *plx_p_ = (const unsigned char *)(buf);                                \
        uint32_t plx_s_ = (seed);                                                                  \
        long long plx_o_ = plx_verify(plx_p_, (n), plx_s_);                                        \
        if (plx_o_ < 0)                                                                            \
            plx_test_pass();                                                                       \
        else                                                                                       \
            plx_test_fail(__FILE__, __LINE__,                                                      \
                          "%s: data of %zu bytes wrong at offset %lld (got 0x%02x, expected "      \
                          "0x%02x)",                                                               \
                          what, (size_t)(n), plx_o_, plx_p_[plx_o_],                               \
                          plx_pattern_byte(plx_s_, (size_t)plx_o_));                               \
    } while (0)

/* got[0..n) == expected[0..n), reporting the first differing byte. */
#define PLX_CHECK_MEM(got, expected, n, what)                                                      \
    do {                                                                                           \
        const unsigned char *plx_g_ = (const unsigned char *)(got);                                \
        const unsigned char *plx_e_ = (const unsigned char *)(expected);                           \
        size_t plx_i_ = 0, plx_n_ = (n);                                                           \
        while (plx_i_ < plx_n_ && plx_g_[plx_i_] == plx_e_[plx_i_])                                \
            plx_i_++;                                                                              \
        if (plx_i_ == plx_n_)                                                                      \
            plx_test_pass();                                                                       \
        else                                                                                       \
            plx_test_fail(__FILE__, __LINE__, "%s: data of %zu bytes wrong at offset %zu (got "    \
                          "0x%02x, expected 0x%02x)", what, plx_n_, plx_i_, plx_g_[plx_i_],        \
                          plx_e_[plx_i_]);                                                         \
    } while (0)

/* Every byte of buf[0..n) equals c (guard regions, untouched buffers). */
#define PLX_CHECK_BYTES(buf, n, c, what)                                                           \
    do {                                                                                           \
        const unsigned char *plx_p_ = (const unsigned char *)(buf);                                \
        size_t plx_i_ = 0, plx_n_ = (n);                                                           \
        while (plx_i_ < plx_n_ && plx_p_[plx_i_] == (unsigned char)(c))                            \
            plx_i_++;                                                                              \
        if (plx_i_ == plx_n_)                                                                      \
            plx_test_pass();                                                                       \
        else                                                                                       \
            plx_test_fail(__FILE__, __LINE__, "%s: byte %zu overwritten (got 0x%02x, expected "    \
                          "0x%02x)", what, plx_i_, plx_p_[plx_i_], (unsigned char)(c));            \
    } while (0)

static inline void *plx_malloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p)
        plx_test_fail(__FILE__, __LINE__, "malloc(%zu) failed", n);
    return p;
}

/* A pause for the few loops that poll (Test*, Iprobe) waiting on another rank:
 * 8 ranks share 2 cores, so a poller must leave the CPU to the rank it waits for. */
static inline void plx_pause(int iteration)
{
    if (iteration > 50) {
        struct timespec ts = {0, 50 * 1000};
        nanosleep(&ts, NULL);
    }
}

/* ---- program frame ----------------------------------------------------- */

static inline void plx_test_begin(const char *name)
{
    struct plx_test_state *s = plx_test_state();
    s->name = name;
    MPI_Comm_rank(MPI_COMM_WORLD, &s->rank);
    MPI_Comm_size(MPI_COMM_WORLD, &s->size);
}

static inline void plx_test_init(int *argc, char ***argv, const char *name)
{
    if (MPI_Init(argc, argv) != MPI_SUCCESS)
        plx_test_fail(__FILE__, __LINE__, "MPI_Init failed");
    plx_test_begin(name);
}

/* Sum the passed checks on rank 0 and print them; the caller then finalizes. */
static inline void plx_test_report(void)
{
    struct plx_test_state *s = plx_test_state();
    long long total = 0;

    MPI_Reduce(&s->checks, &total, 1, MPI_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    if (s->rank == 0) {
        printf("%s: %lld checks passed (np=%d)\n", s->name, total, s->size);
        fflush(stdout);
    }
}

static inline int plx_test_finish(void)
{
    plx_test_report();
    MPI_Finalize();
    return 0;
}

/* Peer for pairwise tests: rank ^ 1, or this rank itself when it has no partner. */
static inline int plx_pair_peer(int rank, int size)
{
    int p = rank ^ 1;
    return p < size ? p : rank;
}

#endif /* PLX_TEST_H */
