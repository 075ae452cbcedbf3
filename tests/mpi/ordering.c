/*
 * ordering.c - MPI's non-overtaking rule and wildcard matching order.
 *
 * 1. One sender, one tag, small (8 B) and large (64 KiB, 1 MiB) messages
 *    interleaved: received in send order, with the receives pre-posted and with
 *    them posted after everything was sent (unexpected / rendezvous pending).
 * 2. Every rank sends to rank 0, which receives with MPI_ANY_SOURCE + MPI_ANY_TAG:
 *    per sender, messages arrive in send order.
 * 3. Wildcards mixed with specific receives, half posted before the messages are
 *    sent and half after: with a single sender MPI's matching rules (MPI-3.1 3.5)
 *    make the outcome unique, so each receive is checked against a reference
 *    matcher (receive i takes the earliest unmatched message it matches).
 * Pairs are rank ^ 1 (or self). Data, handshakes and the fan-in each have their
 * own duplicate of WORLD, so no other traffic can match a wildcard receive.
 */
#include "plx_test.h"

static int rank, size, peer;
static MPI_Comm comm, ctrl, fan;

/* Payload: the sequence number in the first 4 bytes, then a pattern. */
static void make_msg(unsigned char *b, size_t n, int from, int seq)
{
    plx_fill(b, n, plx_seed((uint32_t)from, (uint32_t)seq, (uint32_t)n, 5));
    if (n >= sizeof(int))
        memcpy(b, &seq, sizeof(int));
}

static void check_msg(const unsigned char *got, size_t n, int from, int seq, const char *what)
{
    unsigned char *exp = plx_malloc(n);
    int gseq = -1;

    make_msg(exp, n, from, seq);
    if (n >= sizeof(int)) {
        memcpy(&gseq, got, sizeof(int));
        PLX_CHECK(gseq == seq, "%s: from %d, out of order (got seq %d, expected %d)", what, from, gseq, seq);
    }
    PLX_CHECK_MEM(got, exp, n, what);
    free(exp);
}

static void handshake(int tag)
{
    int x = 0, y = 0;
    if (peer != rank)
        PLX_CHECK_MPI(MPI_Sendrecv(&x, 1, MPI_INT, peer, tag, &y, 1, MPI_INT, peer, tag, ctrl, MPI_STATUS_IGNORE));
}

/* ---- 1. mixed sizes, one sender --------------------------------------- */

enum { M = 16, BIG = 1 << 20 };

static size_t mixed_size(int i)
{
    return i % 2 == 0 ? 8 : i % 4 == 1 ? (size_t)BIG : 65536 + 3;
}

static void test_mixed_sizes(void)
{
    unsigned char *s[M], *r[M];
    MPI_Request sreq[M], rreq[M];
    MPI_Status st[M];

    for (int i = 0; i < M; i++) {
        s[i] = plx_malloc(mixed_size(i));
        r[i] = plx_malloc(BIG);
        make_msg(s[i], mixed_size(i), rank, i);
    }

    /* Pre-posted receives. */
    for (int i = 0; i < M; i++)
        PLX_CHECK_MPI(MPI_Irecv(r[i], BIG, MPI_BYTE, peer, 1, comm, &rreq[i]));
    handshake(1);
    for (int i = 0; i < M; i++)
        PLX_CHECK_MPI(MPI_Isend(s[i], (int)mixed_size(i), MPI_BYTE, peer, 1, comm, &sreq[i]));
    PLX_CHECK_MPI(MPI_Waitall(M, rreq, st));
    PLX_CHECK_MPI(MPI_Waitall(M, sreq, MPI_STATUSES_IGNORE));
    for (int i = 0; i < M; i++) {
        PLX_CHECK_STATUS(st[i], peer, 1, mixed_size(i));
        check_msg(r[i], mixed_size(i), peer, i, "pre-posted, mixed sizes");
    }

    /* Everything sent first; receives posted one by one afterwards, with wildcards. */
    for (int i = 0; i < M; i++)
        PLX_CHECK_MPI(MPI_Isend(s[i], (int)mixed_size(i), MPI_BYTE, peer, 2 + i % 2, comm, &sreq[i]));
    handshake(2);
    for (int i = 0; i < M; i++) {
        PLX_CHECK_MPI(MPI_Recv(r[0], BIG, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, comm, &st[0]));
        PLX_CHECK_STATUS(st[0], peer, 2 + i % 2, mixed_size(i));
        check_msg(r[0], mixed_size(i), peer, i, "posted late with ANY_TAG, mixed sizes");
    }
    PLX_CHECK_MPI(MPI_Waitall(M, sreq, MPI_STATUSES_IGNORE));

    /* Sent first; received with a specific tag that skips every other message. */
    for (int i = 0; i < M; i++)
        PLX_CHECK_MPI(MPI_Isend(s[i], (int)mixed_size(i), MPI_BYTE, peer, 4 + i % 2, comm, &sreq[i]));
    handshake(3);
    for (int pass = 1; pass >= 0; pass--)
        for (int i = pass; i < M; i += 2) {
            PLX_CHECK_MPI(MPI_Recv(r[0], BIG, MPI_BYTE, peer, 4 + pass, comm, &st[0]));
            PLX_CHECK_STATUS(st[0], peer, 4 + pass, mixed_size(i));
            check_msg(r[0], mixed_size(i), peer, i, "by tag, odd tags first");
        }
    PLX_CHECK_MPI(MPI_Waitall(M, sreq, MPI_STATUSES_IGNORE));

    for (int i = 0; i < M; i++) {
        free(s[i]);
        free(r[i]);
    }
}

/* ---- 2. ANY_SOURCE at rank 0 ----------------------------------------- */

enum { K = 40, MID = 128 * 1024 };

static size_t fan_size(int seq)
{
    return seq % 2 ? (size_t)MID : 8;
}

static void test_any_source_fan_in(void)
{
    unsigned char *s[K];
    MPI_Request sreq[K];

    for (int i = 0; i < K; i++) {
        s[i] = plx_malloc(fan_size(i));
        make_msg(s[i], fan_size(i), rank, i);
        PLX_CHECK_MPI(MPI_Isend(s[i], (int)fan_size(i), MPI_BYTE, 0, i, fan, &sreq[i]));
    }
    if (rank == 0) {
        int *next = calloc((size_t)size, sizeof(int));
        unsigned char *r = plx_malloc(MID);
        for (int m = 0; m < K * size; m++) {
            MPI_Status st;
            int src, cnt = -1;
            PLX_CHECK_MPI(MPI_Recv(r, MID, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, fan, &st));
            src = st.MPI_SOURCE;
            PLX_CHECK(src >= 0 && src < size, "ANY_SOURCE status source %d is a rank", src);
            PLX_CHECK(next[src] < K, "no more than %d messages from %d", K, src);
            PLX_CHECK(st.MPI_TAG == next[src], "from %d: tag in send order (got %d, expected %d)", src, st.MPI_TAG,
                      next[src]);
            MPI_Get_count(&st, MPI_BYTE, &cnt);
            PLX_CHECK_EQ(cnt, fan_size(next[src]), "ANY_SOURCE receive count");
            check_msg(r, fan_size(next[src]), src, next[src], "ANY_SOURCE fan-in");
            next[src]++;
        }
        for (int p = 0; p < size; p++)
            PLX_CHECK_EQ(next[p], K, "all messages from every rank");
        free(next);
        free(r);
    }
    PLX_CHECK_MPI(MPI_Waitall(K, sreq, MPI_STATUSES_IGNORE));
    for (int i = 0; i < K; i++)
        free(s[i]);
}

/* ---- 3. mixed wildcard/specific receives against a reference matcher -- */

enum { NM = 40, NTAGS = 4, RMAX = 70000 };

static uint32_t rng_next(uint32_t *x)
{
    *x = *x * 1664525u + 1013904223u;
    return *x >> 8;
}

struct msgdesc {
    int tag;
    size_t n;
};

static void message_plan(int sender, struct msgdesc *m)
{
    static const size_t choices[] = {8, 1000, RMAX};
    uint32_t x = plx_seed((uint32_t)sender, 77, 0, 0);
    for (int j = 0; j < NM; j++) {
        m[j].tag = (int)(rng_next(&x) % NTAGS);
        m[j].n = choices[rng_next(&x) % 3];
    }
}

static void test_wildcard_mix(int round)
{
    struct msgdesc in[NM], out[NM];
    int rsrc[NM], rtag[NM], expect[NM], taken[NM] = {0};
    unsigned char *s[NM], *r[NM];
    MPI_Request sreq[NM], rreq[NM];
    MPI_Status st[NM];
    uint32_t x = plx_seed((uint32_t)rank, (uint32_t)round, 99, 0);

    message_plan(rank, out);
    message_plan(peer, in);

    /* The receive plan, and what each receive must get. */
    for (int i = 0; i < NM; i++) {
        uint32_t kind = rng_next(&x) % 4;
        rsrc[i] = rng_next(&x) % 2 ? MPI_ANY_SOURCE : peer;
        if (kind == 0) {
            rtag[i] = MPI_ANY_TAG;
        } else { /* the tag of a random still-unmatched message */
            int pick = (int)(rng_next(&x) % (uint32_t)(NM - i)), j = 0;
            for (;; j++)
                if (!taken[j] && pick-- == 0)
                    break;
            rtag[i] = in[j].tag;
        }
        expect[i] = -1;
        for (int j = 0; j < NM && expect[i] < 0; j++)
            if (!taken[j] && (rtag[i] == MPI_ANY_TAG || rtag[i] == in[j].tag))
                expect[i] = j;
        taken[expect[i]] = 1;
    }

    for (int i = 0; i < NM; i++) {
        r[i] = plx_malloc(RMAX);
        s[i] = plx_malloc(out[i].n);
        make_msg(s[i], out[i].n, rank, i);
    }
    for (int i = 0; i < NM / 2; i++)
        PLX_CHECK_MPI(MPI_Irecv(r[i], RMAX, MPI_BYTE, rsrc[i], rtag[i], comm, &rreq[i]));
    handshake(10);
    for (int j = 0; j < NM; j++)
        PLX_CHECK_MPI(MPI_Isend(s[j], (int)out[j].n, MPI_BYTE, peer, out[j].tag, comm, &sreq[j]));
    handshake(11);
    for (int i = NM / 2; i < NM; i++)
        PLX_CHECK_MPI(MPI_Irecv(r[i], RMAX, MPI_BYTE, rsrc[i], rtag[i], comm, &rreq[i]));
    PLX_CHECK_MPI(MPI_Waitall(NM, rreq, st));
    PLX_CHECK_MPI(MPI_Waitall(NM, sreq, MPI_STATUSES_IGNORE));

    for (int i = 0; i < NM; i++) {
        int j = expect[i], gseq = -1;
        memcpy(&gseq, r[i], sizeof(int));
        PLX_CHECK(gseq == j, "receive %d (source %d, tag %d, %s) got message %d, expected %d", i, rsrc[i],
                  rtag[i], i < NM / 2 ? "posted before send" : "posted after send", gseq, j);
        PLX_CHECK_STATUS(st[i], peer, in[j].tag, in[j].n);
        check_msg(r[i], in[j].n, peer, j, "wildcard mix");
    }
    for (int i = 0; i < NM; i++) {
        free(r[i]);
        free(s[i]);
    }
}

int main(int argc, char **argv)
{
    plx_test_init(&argc, &argv, "ordering");
    rank = plx_test_state()->rank;
    size = plx_test_state()->size;
    peer = plx_pair_peer(rank, size);
    PLX_CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &comm));
    PLX_CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &ctrl));
    PLX_CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &fan));

    test_mixed_sizes();
    for (int round = 0; round < 4; round++)
        test_wildcard_mix(round);
    test_any_source_fan_in(); /* on its own communicator: everyone sends to rank 0 */

    PLX_CHECK_MPI(MPI_Comm_free(&fan));
    PLX_CHECK_MPI(MPI_Comm_free(&ctrl));
    PLX_CHECK_MPI(MPI_Comm_free(&comm));
    return plx_test_finish();
}
