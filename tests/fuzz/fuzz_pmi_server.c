/*
 * fuzz_pmi_server.c - libFuzzer target for mpiexec's PMI-1 server
 * (tools/mpiexec/pmi_server.c): any bytes a process on PMI_FD can send.
 *
 * The input is split into chunks for four ranks: each chunk starts with a
 * byte whose low 2 bits pick the rank and whose next bit closes that rank's
 * connection after the chunk; the next byte is the chunk length. So lines
 * arrive cut anywhere, interleaved between ranks, with barriers that complete
 * or not. Every reply must be one or more complete lines ("...\n") of
 * printable text; the server must not crash, leak (LeakSanitizer), or read
 * out of bounds. Seeds: tests/fuzz/corpus/pmi_server (lines of a real job).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pmi_server.h"

#define NRANKS 4

static size_t replies;

static int fz_send(void *ctx, int rank, const char *buf, size_t len)
{
    (void)ctx;
    if (rank < 0 || rank >= NRANKS || len == 0 || buf[len - 1] != '\n')
        abort();                /* a reply to no rank, or not a whole line */
    for (size_t i = 0; i < len; i++)
        if (buf[i] == '\0')
            abort();
    replies++;
    return 0;
}

static void fz_abort(void *ctx, int rank, int code, const char *msg)
{
    (void)ctx, (void)code;
    if (rank < 0 || rank >= NRANKS || msg == NULL)
        abort();
    (void)strlen(msg);
}

static void fz_error(void *ctx, int rank, const char *what)
{
    (void)ctx;
    if (rank < 0 || rank >= NRANKS || what == NULL)
        abort();
    (void)strlen(what);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const int appnum[NRANKS] = {0, 0, 1, 1};
    const struct plx_pmisrv_cfg cfg = {
        .size = NRANKS,
        .universe_size = NRANKS,
        .appnum = appnum,
        .kvsname = "plexus-27367-4e26ffa7",     /* as in the recorded seeds */
        .process_mapping = "(vector,(0,2,2))",
        .job_secret = "0123456789abcdef0123456789abcdef",
    };
    const struct plx_pmisrv_ops ops = {fz_send, fz_abort, fz_error, NULL};
    struct plx_pmisrv *srv = plx_pmisrv_create(&cfg, &ops, NULL);
    if (!srv)
        return 0;
    /* a seed that is plain text (a recorded rank's PMI stream) goes to rank 0 whole */
    if (size > 0 && data[0] == 'c') {
        plx_pmisrv_input(srv, 0, (const char *)data, size);
    } else {
        size_t i = 0;
        while (i + 2 <= size) {
            int rank = data[i] & 3, close = data[i] & 4;
            size_t n = data[i + 1];
            i += 2;
            if (n > size - i)
                n = size - i;
            plx_pmisrv_input(srv, rank, (const char *)data + i, n);
            i += n;
            if (close)
                plx_pmisrv_closed(srv, rank);
            (void)plx_pmisrv_state(srv, rank);
            (void)plx_pmisrv_in_barrier(srv, rank);
        }
    }
    (void)plx_pmisrv_barrier_waiting(srv);
    plx_pmisrv_destroy(srv);
    return 0;
}
