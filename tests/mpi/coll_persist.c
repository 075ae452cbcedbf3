/*
 * Persistent collectives (MPI 4.0): every MPI_X_init, including the
 * neighbourhood ones on a periodic ring, started many times with new data
 * each time; odd rounds start them one at a time (MPI_Start + MPI_Wait or
 * polling MPI_Test), even rounds all at once (MPI_Startall + MPI_Waitall,
 * so the schedules run concurrently). Every result element is checked.
 * Then: freeing inactive requests, a restart while active (MPI_ERR_REQUEST),
 * and argument errors of the _init calls.
 */
#include "plx_test.h"

#define N 5            /* elements per rank and block */
#define ROUNDS 24
#define NOPS 22

static int rank, size;

/* value of element i that rank r contributes in round k (and block b) */
static int val(int r, int k, int b, int i)
{
    return r * 10000 + k * 100 + b * 10 + i;
}

struct bufs {
    int bc[N], red_s[N], red_r[N], ar_s[N], ar_r[N], ar_ip[N];
    double armax_s[N], armax_r[N];
    int *ga_r, ga_s[N], *gv_r, *sc_s, sc_r[N], *sv_s, sv_r[N], ag_s[N], *ag_r, *agv_r;
    int *a2a_s, *a2a_r, *a2av_s, *a2av_r, *a2aw_s, *a2aw_r;
    int *rs_s, rs_r[N], *rsb_s, rsb_r[N], scan_s[N], scan_r[N], exs_r[N];
    int nb_s[2 * N], nb_r[2 * N], nbv_r[2 * N], nba_r[2 * N], nbav_r[2 * N], nbaw_r[2 * N];
    int *counts, *displs, *wcounts, *wdispls;
    MPI_Datatype *wtypes;
    int nbc[2], nbd[2], nbcnt[2];
    MPI_Aint nbwd[2];
    MPI_Datatype nbwt[2];
};

static MPI_Comm ring;

static void make_requests(struct bufs *b, MPI_Request *rq, MPI_Info info)
{
    int root = size - 1, k = 0;
    PLX_CHECK_MPI(MPI_Barrier_init(MPI_COMM_WORLD, info, &rq[k++]));
    PLX_CHECK_MPI(MPI_Bcast_init(b->bc, N, MPI_INT, root, MPI_COMM_WORLD, info, &rq[k++]));
    PLX_CHECK_MPI(MPI_Reduce_init(b->red_s, b->red_r, N, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD, info, &rq[k++]));
    PLX_CHECK_MPI(MPI_Allreduce_init(b->ar_s, b->ar_r, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD, info, &rq[k++]));
    PLX_CHECK_MPI(MPI_Allreduce_init(b->armax_s, b->armax_r, N, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD, info,
                                     &rq[k++]));
    PLX_CHECK_MPI(MPI_Allreduce_init(MPI_IN_PLACE, b->ar_ip, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD, info, &rq[k++]));
    PLX_CHECK_MPI(MPI_Gather_init(b->ga_s, N, MPI_INT, b->ga_r, N, MPI_INT, root, MPI_COMM_WORLD, info, &rq[k++]));
    PLX_CHECK_MPI(MPI_Gatherv_init(b->ga_s, N, MPI_INT, b->gv_r, b->counts, b->displs, MPI_INT, 0, MPI_COMM_WORLD,
                                   info, &rq[k++]));
    PLX_CHECK_MPI(MPI_Scatter_init(b->sc_s, N, MPI_INT, b->sc_r, N, MPI_INT, root, MPI_COMM_WORLD, info, &rq[k++]));
    PLX_CHECK_MPI(MPI_Scatterv_init(b->sv_s, b->counts, b->displs, MPI_INT, b->sv_r, N, MPI_INT, 0, MPI_COMM_WORLD,
                                    info, &rq[k++]));
    PLX_CHECK_MPI(MPI_Allgather_init(b->ag_s, N, MPI_INT, b->ag_r, N, MPI_INT, MPI_COMM_WORLD, info, &rq[k++]));
    PLX_CHECK_MPI(MPI_Allgatherv_init(b->ag_s, N, MPI_INT, b->agv_r, b->counts, b->displs, MPI_INT, MPI_COMM_WORLD,
                                      info, &rq[k++]));
    PLX_CHECK_MPI(MPI_Alltoall_init(b->a2a_s, N, MPI_INT, b->a2a_r, N, MPI_INT, MPI_COMM_WORLD, info, &rq[k++]));
    PLX_CHECK_MPI(MPI_Alltoallv_init(b->a2av_s, b->counts, b->displs, MPI_INT, b->a2av_r, b->counts, b->displs,
                                     MPI_INT, MPI_COMM_WORLD, info, &rq[k++]));
    PLX_CHECK_MPI(MPI_Alltoallw_init(b->a2aw_s, b->wcounts, b->wdispls, b->wtypes, b->a2aw_r, b->wcounts,
                                     b->wdispls, b->wtypes, MPI_COMM_WORLD, info, &rq[k++]));
    PLX_CHECK_MPI(MPI_Reduce_scatter_init(b->rs_s, b->rs_r, b->counts, MPI_INT, MPI_SUM, MPI_COMM_WORLD, info,
                                          &rq[k++]));
    PLX_CHECK_MPI(MPI_Reduce_scatter_block_init(b->rsb_s, b->rsb_r, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD, info,
                                                &rq[k++]));
    PLX_CHECK_MPI(MPI_Scan_init(b->scan_s, b->scan_r, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD, info, &rq[k++]));
    PLX_CHECK_MPI(MPI_Exscan_init(b->scan_s, b->exs_r, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD, info, &rq[k++]));
    PLX_CHECK_MPI(MPI_Neighbor_allgather_init(b->nb_s, N, MPI_INT, b->nb_r, N, MPI_INT, ring, info, &rq[k++]));
    PLX_CHECK_MPI(MPI_Neighbor_alltoall_init(b->nb_s, N, MPI_INT, b->nba_r, N, MPI_INT, ring, info, &rq[k++]));
    PLX_CHECK_MPI(MPI_Neighbor_alltoallw_init(b->nb_s, b->nbcnt, b->nbwd, b->nbwt, b->nbaw_r, b->nbcnt, b->nbwd,
                                              b->nbwt, ring, info, &rq[k++]));
    PLX_CHECK_EQ(k, NOPS, "number of persistent operations");
}

/* Neighbourhood allgatherv and alltoallv: made separately (two more requests) */
static void make_nbv(struct bufs *b, MPI_Request *rq)
{
    PLX_CHECK_MPI(MPI_Neighbor_allgatherv_init(b->nb_s, N, MPI_INT, b->nbv_r, b->nbc, b->nbd, MPI_INT, ring,
                                               MPI_INFO_NULL, &rq[0]));
    PLX_CHECK_MPI(MPI_Neighbor_alltoallv_init(b->nb_s, b->nbc, b->nbd, MPI_INT, b->nbav_r, b->nbc, b->nbd, MPI_INT,
                                              ring, MPI_INFO_NULL, &rq[1]));
}

static void fill(struct bufs *b, int k)
{
    int root = size - 1;
    for (int i = 0; i < N; i++) {
        b->bc[i] = rank == root ? val(root, k, 0, i) : -1;
        b->red_s[i] = b->ar_s[i] = b->ar_ip[i] = b->ga_s[i] = b->ag_s[i] = b->scan_s[i] = val(rank, k, 0, i);
        b->armax_s[i] = (double)val(rank, k, 0, i) * ((rank + k) % 2 ? -1 : 1);
        b->red_r[i] = b->ar_r[i] = b->sc_r[i] = b->sv_r[i] = b->rs_r[i] = b->rsb_r[i] = b->scan_r[i] = -1;
        b->exs_r[i] = -1;
    }
    for (int p = 0; p < size; p++)
        for (int i = 0; i < N; i++) {
            int j = p * N + i;
            b->sc_s[j] = b->sv_s[j] = val(rank, k, p, i);
            b->a2a_s[j] = b->a2av_s[j] = b->a2aw_s[j] = val(rank, k, p, i);
            b->rs_s[j] = b->rsb_s[j] = val(rank, k, p, i);
            b->ga_r[j] = b->gv_r[j] = b->ag_r[j] = b->agv_r[j] = -1;
            b->a2a_r[j] = b->a2av_r[j] = b->a2aw_r[j] = -1;
        }
    for (int i = 0; i < 2 * N; i++) {
        b->nb_s[i] = val(rank, k, i / N, i % N);
        b->nb_r[i] = b->nbv_r[i] = b->nba_r[i] = b->nbav_r[i] = b->nbaw_r[i] = -1;
    }
}

static long long sum_over_ranks(int upto, int k, int b, int i)
{
    long long s = 0;
    for (int r = 0; r < upto; r++)
        s += val(r, k, b, i);
    return s;
}

static void verify(struct bufs *b, int k)
{
    int root = size - 1, bad = 0;
    for (int i = 0; i < N; i++)
        bad += b->bc[i] != val(root, k, 0, i);
    PLX_CHECK_EQ(bad, 0, "Bcast_init data");
    bad = 0;
    for (int i = 0; i < N; i++) {
        long long s = sum_over_ranks(size, k, 0, i);
        if (rank == 0)
            bad += b->red_r[i] != s;
        bad += b->ar_r[i] != s;
        bad += b->ar_ip[i] != s;
        double mx = -1e300;
        for (int r = 0; r < size; r++) {
            double v = (double)val(r, k, 0, i) * ((r + k) % 2 ? -1 : 1);
            mx = v > mx ? v : mx;
        }
        bad += b->armax_r[i] != mx;
        bad += b->scan_r[i] != sum_over_ranks(rank + 1, k, 0, i);
        if (rank > 0)
            bad += b->exs_r[i] != sum_over_ranks(rank, k, 0, i);
        bad += b->sc_r[i] != val(root, k, rank, i);
        bad += b->sv_r[i] != val(0, k, rank, i);
        bad += b->rs_r[i] != sum_over_ranks(size, k, rank, i);
        bad += b->rsb_r[i] != sum_over_ranks(size, k, rank, i);
    }
    PLX_CHECK_EQ(bad, 0, "reductions, scans and scatters");
    bad = 0;
    for (int p = 0; p < size; p++)
        for (int i = 0; i < N; i++) {
            int j = p * N + i;
            if (rank == root)
                bad += b->ga_r[j] != val(p, k, 0, i);
            if (rank == 0)
                bad += b->gv_r[j] != val(p, k, 0, i);
            bad += b->ag_r[j] != val(p, k, 0, i);
            bad += b->agv_r[j] != val(p, k, 0, i);
            bad += b->a2a_r[j] != val(p, k, rank, i);
            bad += b->a2av_r[j] != val(p, k, rank, i);
            bad += b->a2aw_r[j] != val(p, k, rank, i);
        }
    PLX_CHECK_EQ(bad, 0, "gathers and all-to-alls");
    /* ring neighbours: left (source 0) and right (source 1) */
    int left = (rank + size - 1) % size, right = (rank + 1) % size;
    bad = 0;
    for (int i = 0; i < N; i++) {
        bad += b->nb_r[i] != val(left, k, 0, i) || b->nb_r[N + i] != val(right, k, 0, i);
        bad += b->nbv_r[i] != val(left, k, 0, i) || b->nbv_r[N + i] != val(right, k, 0, i);
        /* alltoall: block 0 goes to the left neighbour, block 1 to the right */
        bad += b->nba_r[i] != val(left, k, 1, i) || b->nba_r[N + i] != val(right, k, 0, i);
        bad += b->nbav_r[i] != val(left, k, 1, i) || b->nbav_r[N + i] != val(right, k, 0, i);
        bad += b->nbaw_r[i] != val(left, k, 1, i) || b->nbaw_r[N + i] != val(right, k, 0, i);
    }
    PLX_CHECK_EQ(bad, 0, "neighbourhood collectives on the ring");
}

static void errors(struct bufs *b)
{
    MPI_Request rq;
    int x = 0;
    PLX_CHECK_ERR(MPI_Bcast_init(&x, 1, MPI_INT, 0, MPI_COMM_NULL, MPI_INFO_NULL, &rq), MPI_ERR_COMM);
    PLX_CHECK_ERR(MPI_Bcast_init(&x, 1, MPI_INT, size, MPI_COMM_WORLD, MPI_INFO_NULL, &rq), MPI_ERR_ROOT);
    PLX_CHECK_ERR(MPI_Bcast_init(&x, 1, MPI_INT, 0, MPI_COMM_WORLD, MPI_INFO_NULL, NULL), MPI_ERR_ARG);
    PLX_CHECK_ERR(MPI_Allreduce_init(&x, b->ar_r, 1, MPI_INT, MPI_OP_NULL, MPI_COMM_WORLD, MPI_INFO_NULL, &rq),
                  MPI_ERR_OP);
    PLX_CHECK_ERR(MPI_Barrier_init(MPI_COMM_WORLD, (MPI_Info)0x1c00abcd, &rq), MPI_ERR_INFO);
    PLX_CHECK_ERR(MPI_Neighbor_allgather_init(&x, 1, MPI_INT, b->nb_r, 1, MPI_INT, MPI_COMM_WORLD, MPI_INFO_NULL,
                                              &rq), MPI_ERR_TOPOLOGY);
    /* a second start while active */
    PLX_CHECK_MPI(MPI_Barrier_init(MPI_COMM_WORLD, MPI_INFO_NULL, &rq));
    PLX_CHECK_MPI(MPI_Start(&rq));
    PLX_CHECK_ERR(MPI_Start(&rq), MPI_ERR_REQUEST);
    PLX_CHECK_MPI(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    PLX_CHECK(rq != MPI_REQUEST_NULL, "a persistent request survives MPI_Wait");
    /* waiting on an inactive persistent request returns at once */
    PLX_CHECK_MPI(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    PLX_CHECK_MPI(MPI_Request_free(&rq));
    PLX_CHECK(rq == MPI_REQUEST_NULL, "MPI_Request_free clears the handle");
}

int main(int argc, char **argv)
{
    plx_test_init(&argc, &argv, "coll_persist");
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int dims[1] = {size}, periods[1] = {1};
    MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &ring);

    struct bufs *b = calloc(1, sizeof *b);
    size_t tot = (size_t)size * N;
    b->ga_r = plx_malloc(tot * sizeof(int)), b->gv_r = plx_malloc(tot * sizeof(int));
    b->sc_s = plx_malloc(tot * sizeof(int)), b->sv_s = plx_malloc(tot * sizeof(int));
    b->ag_r = plx_malloc(tot * sizeof(int)), b->agv_r = plx_malloc(tot * sizeof(int));
    b->a2a_s = plx_malloc(tot * sizeof(int)), b->a2a_r = plx_malloc(tot * sizeof(int));
    b->a2av_s = plx_malloc(tot * sizeof(int)), b->a2av_r = plx_malloc(tot * sizeof(int));
    b->a2aw_s = plx_malloc(tot * sizeof(int)), b->a2aw_r = plx_malloc(tot * sizeof(int));
    b->rs_s = plx_malloc(tot * sizeof(int)), b->rsb_s = plx_malloc(tot * sizeof(int));
    b->counts = plx_malloc((size_t)size * sizeof(int)), b->displs = plx_malloc((size_t)size * sizeof(int));
    b->wcounts = plx_malloc((size_t)size * sizeof(int)), b->wdispls = plx_malloc((size_t)size * sizeof(int));
    b->wtypes = plx_malloc((size_t)size * sizeof(MPI_Datatype));
    for (int p = 0; p < size; p++) {
        b->counts[p] = N, b->displs[p] = p * N;
        b->wcounts[p] = N, b->wdispls[p] = p * N * (int)sizeof(int), b->wtypes[p] = MPI_INT;
    }
    for (int j = 0; j < 2; j++) {
        b->nbc[j] = N, b->nbd[j] = j * N, b->nbcnt[j] = N;
        b->nbwd[j] = (MPI_Aint)j * N * (MPI_Aint)sizeof(int), b->nbwt[j] = MPI_INT;
    }
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "plx_hint", "ignored");
    MPI_Request rq[NOPS + 2];
    make_requests(b, rq, info);
    make_nbv(b, &rq[NOPS]);
    MPI_Info_free(&info);   /* the requests do not depend on it */
    int nreq = NOPS + 2;

    for (int k = 0; k < ROUNDS; k++) {
        fill(b, k);
        if (k % 2 == 0) {
            PLX_CHECK_MPI(MPI_Startall(nreq, rq));
            PLX_CHECK_MPI(MPI_Waitall(nreq, rq, MPI_STATUSES_IGNORE));
        } else {
            for (int j = 0; j < nreq; j++) {
                PLX_CHECK_MPI(MPI_Start(&rq[j]));
                if (j % 2) {
                    PLX_CHECK_MPI(MPI_Wait(&rq[j], MPI_STATUS_IGNORE));
                } else {
                    int flag = 0;
                    for (int it = 0; !flag; it++) {
                        PLX_CHECK_MPI(MPI_Test(&rq[j], &flag, MPI_STATUS_IGNORE));
                        plx_pause(it);
                    }
                }
            }
        }
        for (int j = 0; j < nreq; j++)
            PLX_CHECK(rq[j] != MPI_REQUEST_NULL, "persistent request kept after completion");
        verify(b, k);
    }
    for (int j = 0; j < nreq; j++)
        PLX_CHECK_MPI(MPI_Request_free(&rq[j]));
    errors(b);
    MPI_Comm_free(&ring);
    return plx_test_finish();
}
