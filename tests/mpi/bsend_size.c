/*
 * bsend_size.c - a buffer attached with the standard's sizing formula (the sum
 * of MPI_Pack_size + MPI_BSEND_OVERHEAD over the pending messages, MPI-3.1
 * 3.6.1) is enough for MPI_Bsend, MPI_Ibsend and MPI_Bsend_init + MPI_Start,
 * whatever the message sizes and the buffer's alignment. Also MPI_Cancel of a
 * pending buffered send: either it is cancelled and never received, or it is
 * received whole; and the buffer can be detached afterwards.
 */
#include "plx_test.h"

static int rank, size, peer;

/* the message list: counts of a type */
struct msg {
    int count;
    int use_vec;                /* a strided type (2 ints, stride 3) instead of MPI_CHAR */
};
static const struct msg msgs[] = {
    {1, 0}, {3, 0}, {17, 0}, {5, 1}, {100, 0}, {1, 1}, {20000, 0}, {70000, 0}, {2, 0}, {300, 1},
};
#define NMSG ((int)(sizeof msgs / sizeof msgs[0]))

static MPI_Datatype vec;

static int bytes_of(const struct msg *m)
{
    return m->use_vec ? m->count * 2 * (int)sizeof(int) : m->count;
}

static void fill(const struct msg *m, int k, char *buf)
{
    if (!m->use_vec) {
        plx_fill(buf, (size_t)m->count, plx_seed((uint32_t)rank, (uint32_t)k, 1, 0));
        return;
    }
    int *p = (int *)buf;
    for (int i = 0; i < m->count; i++) {
        p[6 * i] = rank * 1000 + k * 100 + i;
        p[6 * i + 3] = -(rank * 1000 + k * 100 + i);
    }
}

/* every message of the list sent with `how` (0 Bsend, 1 Ibsend, 2 Bsend_init + Start)
 * into a buffer of exactly the standard's size, starting `skew` bytes off alignment */
static void round_of(int how, int skew)
{
    int total = 0;
    for (int k = 0; k < NMSG; k++) {
        int ps = 0;
        PLX_CHECK_MPI(MPI_Pack_size(msgs[k].count, msgs[k].use_vec ? vec : MPI_CHAR, MPI_COMM_WORLD, &ps));
        PLX_CHECK_EQ(ps >= bytes_of(&msgs[k]), 1, "MPI_Pack_size at least the data");
        total += ps + MPI_BSEND_OVERHEAD;
    }
    char *raw = plx_malloc((size_t)total + 16);
    char *buf = raw + skew;
    PLX_CHECK_MPI(MPI_Buffer_attach(buf, total));

    char *data[NMSG];
    MPI_Request req[NMSG];
    for (int k = 0; k < NMSG; k++) {
        const struct msg *m = &msgs[k];
        size_t span = m->use_vec ? (size_t)m->count * 6 * sizeof(int) : (size_t)m->count;
        data[k] = plx_malloc(span);
        fill(m, k, data[k]);
        MPI_Datatype t = m->use_vec ? vec : MPI_CHAR;
        switch (how) {
        case 0:
            PLX_CHECK_MPI(MPI_Bsend(data[k], m->count, t, peer, k, MPI_COMM_WORLD));
            req[k] = MPI_REQUEST_NULL;
            break;
        case 1:
            PLX_CHECK_MPI(MPI_Ibsend(data[k], m->count, t, peer, k, MPI_COMM_WORLD, &req[k]));
            break;
        default:
            PLX_CHECK_MPI(MPI_Bsend_init(data[k], m->count, t, peer, k, MPI_COMM_WORLD, &req[k]));
            PLX_CHECK_MPI(MPI_Start(&req[k]));
        }
    }
    /* the user's buffers may be reused once the sends complete */
    PLX_CHECK_MPI(MPI_Waitall(NMSG, req, MPI_STATUSES_IGNORE));
    for (int k = 0; k < NMSG; k++) {
        if (req[k] != MPI_REQUEST_NULL)
            MPI_Request_free(&req[k]);
        memset(data[k], 0x55, msgs[k].use_vec ? (size_t)msgs[k].count * 6 * sizeof(int) : (size_t)msgs[k].count);
    }
    MPI_Barrier(MPI_COMM_WORLD);   /* nothing was received before every send was started */

    int src = peer;     /* pairs send to each other */
    for (int k = 0; k < NMSG; k++) {
        const struct msg *m = &msgs[k];
        int n = bytes_of(m);
        char *in = plx_malloc((size_t)n);
        MPI_Status st;
        PLX_CHECK_MPI(MPI_Recv(in, n, MPI_BYTE, src, k, MPI_COMM_WORLD, &st));
        PLX_CHECK_STATUS(st, src, k, n);
        if (!m->use_vec) {
            PLX_CHECK_PATTERN(in, (size_t)n, plx_seed((uint32_t)src, (uint32_t)k, 1, 0), "buffered message");
        } else {
            int *p = (int *)in;
            for (int i = 0; i < m->count; i++) {
                PLX_CHECK_EQ(p[2 * i], src * 1000 + k * 100 + i, "strided message, first of pair");
                PLX_CHECK_EQ(p[2 * i + 1], -(src * 1000 + k * 100 + i), "strided message, second of pair");
            }
        }
        free(in);
        free(data[k]);
    }
    void *back = NULL;
    int bsize = -1;
    PLX_CHECK_MPI(MPI_Buffer_detach(&back, &bsize));
    PLX_CHECK(back == buf, "MPI_Buffer_detach returns the attached address");
    PLX_CHECK_EQ(bsize, total, "MPI_Buffer_detach returns the attached size");
    free(raw);
}

/* the case of the report: one 1-byte message, Pack_size + MPI_BSEND_OVERHEAD attached */
static void one_byte(void)
{
    int ps = 0;
    PLX_CHECK_MPI(MPI_Pack_size(1, MPI_CHAR, MPI_COMM_WORLD, &ps));
    int total = ps + MPI_BSEND_OVERHEAD;
    char *buf = plx_malloc((size_t)total), c = 'a', in = 0;
    MPI_Request req;
    PLX_CHECK_MPI(MPI_Buffer_attach(buf, total));
    PLX_CHECK_MPI(MPI_Ibsend(&c, 1, MPI_CHAR, peer, 900, MPI_COMM_WORLD, &req));
    PLX_CHECK_MPI(MPI_Wait(&req, MPI_STATUS_IGNORE));
    PLX_CHECK_MPI(MPI_Recv(&in, 1, MPI_CHAR, peer, 900, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    PLX_CHECK_EQ(in, 'a', "1-byte Ibsend");
    PLX_CHECK_MPI(MPI_Bsend_init(&c, 1, MPI_CHAR, peer, 901, MPI_COMM_WORLD, &req));
    for (int i = 0; i < 3; i++) {
        c = (char)('b' + i);
        PLX_CHECK_MPI(MPI_Start(&req));
        PLX_CHECK_MPI(MPI_Wait(&req, MPI_STATUS_IGNORE));
        PLX_CHECK_MPI(MPI_Recv(&in, 1, MPI_CHAR, peer, 901, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        PLX_CHECK_EQ(in, 'b' + i, "1-byte Bsend_init + Start");
    }
    MPI_Request_free(&req);
    void *back;
    int bsize;
    PLX_CHECK_MPI(MPI_Buffer_detach(&back, &bsize));
    free(buf);
}

/* MPI_Cancel of a pending buffered send */
static void cancel_pending(void)
{
    const int n = 100000;   /* large: pending until the receiver asks */
    int ps = 0;
    PLX_CHECK_MPI(MPI_Pack_size(n, MPI_CHAR, MPI_COMM_WORLD, &ps));
    char *buf = plx_malloc((size_t)ps + MPI_BSEND_OVERHEAD), *out = plx_malloc((size_t)n),
         *in = plx_malloc((size_t)n);
    plx_fill(out, (size_t)n, plx_seed((uint32_t)rank, 77, 0, 0));
    PLX_CHECK_MPI(MPI_Buffer_attach(buf, ps + MPI_BSEND_OVERHEAD));
    MPI_Request req;
    MPI_Status st;
    int cancelled = -1, peer_cancelled = -1, flag = 1;
    PLX_CHECK_MPI(MPI_Ibsend(out, n, MPI_CHAR, peer, 77, MPI_COMM_WORLD, &req));
    PLX_CHECK_MPI(MPI_Cancel(&req));
    PLX_CHECK_MPI(MPI_Wait(&req, &st));
    PLX_CHECK_MPI(MPI_Test_cancelled(&st, &cancelled));
    PLX_CHECK_MPI(MPI_Sendrecv(&cancelled, 1, MPI_INT, peer, 78, &peer_cancelled, 1, MPI_INT, peer, 78,
                               MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    if (peer_cancelled) {
        MPI_Barrier(MPI_COMM_WORLD);
        PLX_CHECK_MPI(MPI_Iprobe(peer, 77, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE));
        PLX_CHECK_EQ(flag, 0, "a cancelled buffered send is not received");
    } else {
        PLX_CHECK_MPI(MPI_Recv(in, n, MPI_CHAR, peer, 77, MPI_COMM_WORLD, &st));
        PLX_CHECK_STATUS(st, peer, 77, n);
        PLX_CHECK_PATTERN(in, (size_t)n, plx_seed((uint32_t)peer, 77, 0, 0), "not-cancelled buffered send");
        MPI_Barrier(MPI_COMM_WORLD);
    }
    void *back;
    int bsize;
    PLX_CHECK_MPI(MPI_Buffer_detach(&back, &bsize));   /* returns: the block was given back */
    PLX_CHECK_EQ(bsize, ps + MPI_BSEND_OVERHEAD, "detached size");
    MPI_Barrier(MPI_COMM_WORLD);
    free(buf);
    free(out);
    free(in);
}

int main(int argc, char **argv)
{
    plx_test_init(&argc, &argv, "bsend_size");
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    peer = plx_pair_peer(rank, size);
    PLX_CHECK_MPI(MPI_Type_vector(2, 1, 3, MPI_INT, &vec));
    PLX_CHECK_MPI(MPI_Type_commit(&vec));
    /* the vector's extent is 4 ints; consecutive elements start 4 ints apart,
     * so use a resized type whose elements are 6 ints apart as fill() lays them */
    MPI_Datatype v6;
    PLX_CHECK_MPI(MPI_Type_create_resized(vec, 0, 6 * (MPI_Aint)sizeof(int), &v6));
    PLX_CHECK_MPI(MPI_Type_commit(&v6));
    MPI_Type_free(&vec);
    vec = v6;

    one_byte();
    for (int how = 0; how < 3; how++)
        for (int skew = 0; skew < 16; skew += 5)
            round_of(how, skew);
    cancel_pending();
    MPI_Type_free(&vec);
    return plx_test_finish();
}
