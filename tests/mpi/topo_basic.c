/*
 * Process topologies: Dims_create; Cartesian create/get/rank/coords/shift/
 * sub, Topo_test, Comm_dup keeping the topology, ranks left out of a
 * smaller grid; graph create and queries; distributed graphs, adjacent and
 * gathered; neighbourhood collectives (allgather(v), alltoall(v/w), blocking
 * and nonblocking) on all three kinds, including periodic dimensions of
 * size 1 and 2 where one rank is both neighbours (MPI-4.0 erratum to 3.1:
 * the block sent in one direction lands in the block of the other).
 */
#include "plx_test.h"

static int rank, size;

static void check_dims(int n, int nd, const int *in, const int *want)
{
    int d[4];
    memcpy(d, in, (size_t)nd * sizeof(int));
    PLX_CHECK_MPI(MPI_Dims_create(n, nd, d));
    int ok = 1;
    for (int i = 0; i < nd; i++)
        ok &= d[i] == want[i];
    PLX_CHECK(ok, "Dims_create(%d, %d) gave %d %d %d %d", n, nd, d[0], nd > 1 ? d[1] : 0, nd > 2 ? d[2] : 0,
              nd > 3 ? d[3] : 0);
}

static void test_dims(void)
{
    check_dims(12, 2, (int[]){0, 0}, (int[]){4, 3});
    check_dims(16, 3, (int[]){0, 0, 0}, (int[]){4, 2, 2});
    check_dims(8, 3, (int[]){0, 0, 0}, (int[]){2, 2, 2});
    check_dims(24, 3, (int[]){0, 0, 0}, (int[]){4, 3, 2});
    check_dims(7, 2, (int[]){0, 0}, (int[]){7, 1});
    check_dims(30, 3, (int[]){0, 0, 0}, (int[]){5, 3, 2});
    check_dims(12, 3, (int[]){0, 3, 0}, (int[]){2, 3, 2});
    check_dims(1, 3, (int[]){0, 0, 0}, (int[]){1, 1, 1});
    check_dims(36, 2, (int[]){0, 0}, (int[]){6, 6});
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int bad[2] = {3, 0};
    PLX_CHECK_ERR(MPI_Dims_create(10, 2, bad), MPI_ERR_DIMS);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

static void test_cart(void)
{
    int dims[2] = {0, 0}, periods[2] = {1, 0};
    MPI_Dims_create(size, 2, dims);
    MPI_Comm cart;
    PLX_CHECK_MPI(MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &cart));
    int st = -1, nd = -1;
    MPI_Topo_test(cart, &st);
    PLX_CHECK_EQ(st, MPI_CART, "Topo_test of a Cartesian communicator");
    MPI_Topo_test(MPI_COMM_WORLD, &st);
    PLX_CHECK_EQ(st, MPI_UNDEFINED, "Topo_test of WORLD");
    MPI_Cartdim_get(cart, &nd);
    PLX_CHECK_EQ(nd, 2, "Cartdim_get");
    int gd[2], gp[2], gc[2], cr;
    MPI_Comm_rank(cart, &cr);
    PLX_CHECK_MPI(MPI_Cart_get(cart, 2, gd, gp, gc));
    PLX_CHECK(gd[0] == dims[0] && gd[1] == dims[1] && gp[0] == 1 && gp[1] == 0, "Cart_get dims/periods");
    PLX_CHECK(gc[0] == cr / dims[1] && gc[1] == cr % dims[1], "Cart_get coords are row-major");
    for (int r = 0; r < size; r++) {
        int co[2], back = -1;
        MPI_Cart_coords(cart, r, 2, co);
        MPI_Cart_rank(cart, co, &back);
        PLX_CHECK_EQ(back, r, "Cart_rank(Cart_coords(r))");
    }
    int wrap[2] = {gc[0] + dims[0], gc[1]}, wr = -1;
    MPI_Cart_rank(cart, wrap, &wr);
    PLX_CHECK_EQ(wr, cr, "Cart_rank wraps a periodic dimension");
    int src, dst;
    MPI_Cart_shift(cart, 0, 1, &src, &dst);
    PLX_CHECK_EQ(dst, ((gc[0] + 1) % dims[0]) * dims[1] + gc[1], "Cart_shift periodic dest");
    PLX_CHECK_EQ(src, ((gc[0] - 1 + dims[0]) % dims[0]) * dims[1] + gc[1], "Cart_shift periodic source");
    MPI_Cart_shift(cart, 1, 1, &src, &dst);
    PLX_CHECK_EQ(dst, gc[1] + 1 < dims[1] ? cr + 1 : MPI_PROC_NULL, "Cart_shift non-periodic dest");
    PLX_CHECK_EQ(src, gc[1] > 0 ? cr - 1 : MPI_PROC_NULL, "Cart_shift non-periodic source");
    /* dup keeps the topology */
    MPI_Comm dup;
    MPI_Comm_dup(cart, &dup);
    MPI_Topo_test(dup, &st);
    PLX_CHECK_EQ(st, MPI_CART, "Comm_dup keeps the topology");
    MPI_Cart_get(dup, 2, gd, gp, gc);
    PLX_CHECK(gd[0] == dims[0] && gd[1] == dims[1], "dup'd Cart_get");
    MPI_Comm_free(&dup);
    /* rows: keep dimension 1 */
    MPI_Comm row;
    PLX_CHECK_MPI(MPI_Cart_sub(cart, (int[]){0, 1}, &row));
    int rs = -1, rr = -1;
    MPI_Comm_size(row, &rs);
    MPI_Comm_rank(row, &rr);
    PLX_CHECK_EQ(rs, dims[1], "Cart_sub row size");
    PLX_CHECK_EQ(rr, cr % dims[1], "Cart_sub row rank");
    MPI_Cartdim_get(row, &nd);
    PLX_CHECK_EQ(nd, 1, "Cart_sub keeps one dimension");
    int sum = -1;
    MPI_Allreduce(&cr, &sum, 1, MPI_INT, MPI_SUM, row);
    int first = cr - cr % dims[1];
    PLX_CHECK_EQ(sum, dims[1] * first + dims[1] * (dims[1] - 1) / 2, "Allreduce over a Cart_sub row");
    MPI_Comm_free(&row);
    MPI_Comm_free(&cart);
    /* a grid smaller than the communicator */
    if (size > 1) {
        int d1 = size - 1, p1 = 0;
        MPI_Comm small;
        PLX_CHECK_MPI(MPI_Cart_create(MPI_COMM_WORLD, 1, &d1, &p1, 0, &small));
        PLX_CHECK(rank == size - 1 ? small == MPI_COMM_NULL : small != MPI_COMM_NULL,
                  "ranks outside the grid get MPI_COMM_NULL");
        if (small != MPI_COMM_NULL)
            MPI_Comm_free(&small);
    }
}

static void test_graph(void)
{
    /* a ring: node i is linked to i-1 and i+1 */
    int *index = plx_malloc((size_t)size * sizeof(int)), *edges = plx_malloc(2 * (size_t)size * sizeof(int));
    for (int i = 0; i < size; i++) {
        index[i] = 2 * (i + 1);
        edges[2 * i] = (i - 1 + size) % size;
        edges[2 * i + 1] = (i + 1) % size;
    }
    MPI_Comm g;
    PLX_CHECK_MPI(MPI_Graph_create(MPI_COMM_WORLD, size, index, edges, 0, &g));
    int st, nn, ne;
    MPI_Topo_test(g, &st);
    PLX_CHECK_EQ(st, MPI_GRAPH, "Topo_test of a graph");
    MPI_Graphdims_get(g, &nn, &ne);
    PLX_CHECK(nn == size && ne == 2 * size, "Graphdims_get");
    int *gi = plx_malloc((size_t)size * sizeof(int)), *ge = plx_malloc(2 * (size_t)size * sizeof(int));
    MPI_Graph_get(g, size, 2 * size, gi, ge);
    PLX_CHECK(memcmp(gi, index, (size_t)size * sizeof(int)) == 0 &&
                  memcmp(ge, edges, 2 * (size_t)size * sizeof(int)) == 0, "Graph_get");
    int cnt = -1, nb[2];
    MPI_Graph_neighbors_count(g, rank, &cnt);
    PLX_CHECK_EQ(cnt, 2, "Graph_neighbors_count");
    MPI_Graph_neighbors(g, rank, 2, nb);
    PLX_CHECK(nb[0] == (rank - 1 + size) % size && nb[1] == (rank + 1) % size, "Graph_neighbors");
    /* neighbour allgather on the ring (in-order matching) */
    int mine = 100 + rank, got[2] = {-1, -1};
    PLX_CHECK_MPI(MPI_Neighbor_allgather(&mine, 1, MPI_INT, got, 1, MPI_INT, g));
    PLX_CHECK(got[0] == 100 + nb[0] && got[1] == 100 + nb[1], "Neighbor_allgather on a graph");
    MPI_Comm_free(&g);
    free(index), free(edges), free(gi), free(ge);
}

static void test_dist_graph(void)
{
    /* in: r-1 and r-2 ; out: r+1 and r+2 (mod size), weighted */
    int in[2] = {(rank - 1 + size) % size, (rank - 2 + 2 * size) % size};
    int out[2] = {(rank + 1) % size, (rank + 2) % size};
    int inw[2] = {10, 20}, outw[2] = {10, 20};
    MPI_Comm dg;
    PLX_CHECK_MPI(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 2, in, inw, 2, out, outw, MPI_INFO_NULL, 0, &dg));
    int st, ind, outd, w;
    MPI_Topo_test(dg, &st);
    PLX_CHECK_EQ(st, MPI_DIST_GRAPH, "Topo_test of a distributed graph");
    MPI_Dist_graph_neighbors_count(dg, &ind, &outd, &w);
    PLX_CHECK(ind == 2 && outd == 2 && w, "Dist_graph_neighbors_count");
    int s[2], sw[2], d[2], dw[2];
    MPI_Dist_graph_neighbors(dg, 2, s, sw, 2, d, dw);
    PLX_CHECK(s[0] == in[0] && s[1] == in[1] && sw[1] == 20 && d[0] == out[0] && dw[0] == 10,
              "Dist_graph_neighbors");
    /* alltoall: block j goes to out[j]; block i comes from in[i], which sent
     * me its block for "+1" (i = 0) or "+2" (i = 1) */
    int sb[2] = {rank * 10 + 0, rank * 10 + 1}, rb[2] = {-1, -1};
    if (size > 2) {
        PLX_CHECK_MPI(MPI_Neighbor_alltoall(sb, 1, MPI_INT, rb, 1, MPI_INT, dg));
        PLX_CHECK(rb[0] == in[0] * 10 + 0 && rb[1] == in[1] * 10 + 1, "Neighbor_alltoall on a distributed graph");
    }
    MPI_Comm_free(&dg);
    /* gathered form: rank 0 names every edge i -> i+1 of the ring */
    int n = rank == 0 ? size : 0;
    int *srcs = plx_malloc((size_t)size * sizeof(int)), *degs = plx_malloc((size_t)size * sizeof(int));
    int *dsts = plx_malloc((size_t)size * sizeof(int)), *wts = plx_malloc((size_t)size * sizeof(int));
    for (int i = 0; i < size; i++) {
        srcs[i] = i;
        degs[i] = 1;
        dsts[i] = (i + 1) % size;
        wts[i] = i + 1;
    }
    PLX_CHECK_MPI(MPI_Dist_graph_create(MPI_COMM_WORLD, n, srcs, degs, dsts, wts, MPI_INFO_NULL, 0, &dg));
    MPI_Dist_graph_neighbors_count(dg, &ind, &outd, &w);
    PLX_CHECK(ind == 1 && outd == 1 && w, "Dist_graph_create degrees");
    MPI_Dist_graph_neighbors(dg, 1, s, sw, 1, d, dw);
    PLX_CHECK(s[0] == (rank - 1 + size) % size && sw[0] == (rank - 1 + size) % size + 1 &&
                  d[0] == (rank + 1) % size && dw[0] == rank + 1,
              "Dist_graph_create neighbours and weights");
    int v = rank, from = -1;
    MPI_Request rq;
    PLX_CHECK_MPI(MPI_Ineighbor_allgather(&v, 1, MPI_INT, &from, 1, MPI_INT, dg, &rq));
    MPI_Wait(&rq, MPI_STATUS_IGNORE);
    PLX_CHECK_EQ(from, (rank - 1 + size) % size, "Ineighbor_allgather on a ring");
    MPI_Comm_free(&dg);
    free(srcs), free(degs), free(dsts), free(wts);
}

/* On a Cartesian grid, block 2d (from the - side) holds what the - neighbour
 * sent in the + direction (its block 2d+1), and the other way round. */
static void test_cart_neighbors(int ndims, const int *dims, const int *periods, const char *what)
{
    MPI_Comm cart;
    MPI_Cart_create(MPI_COMM_WORLD, ndims, dims, periods, 0, &cart);
    if (cart == MPI_COMM_NULL)
        return;
    int cr;
    MPI_Comm_rank(cart, &cr);
    int nb = 2 * ndims, K = 3;
    /* MPICH 4.0 (Debian 12) predates the fix of its neighbourhood alltoalls
     * for periodic dimensions of size 1 or 2 (pmodels/mpich#2194, fixed
     * upstream later): there the data checks bind the other libraries only. */
    int degenerate = 0;
    for (int d = 0; d < ndims; d++)
        degenerate |= periods[d] && dims[d] <= 2;
    int check = !(degenerate && plx_lib_is("MPICH Version:"));
    int *src = plx_malloc((size_t)nb * sizeof(int));
    for (int d = 0; d < ndims; d++)
        MPI_Cart_shift(cart, d, 1, &src[2 * d], &src[2 * d + 1]);
    int *sb = plx_malloc((size_t)nb * K * sizeof(int)), *rb = plx_malloc((size_t)nb * K * sizeof(int));
    for (int j = 0; j < nb; j++)
        for (int k = 0; k < K; k++)
            sb[j * K + k] = cr * 1000 + j * 10 + k;
    for (int i = 0; i < nb * K; i++)
        rb[i] = -1;
    PLX_CHECK_MPI(MPI_Neighbor_alltoall(sb, K, MPI_INT, rb, K, MPI_INT, cart));
    int ok = 1;
    for (int i = 0; i < nb; i++)
        for (int k = 0; k < K; k++)
            ok &= rb[i * K + k] == (src[i] == MPI_PROC_NULL ? -1 : src[i] * 1000 + (i ^ 1) * 10 + k);
    PLX_CHECK(ok || !check, "Neighbor_alltoall on %s", what);
    /* the nonblocking form delivers the same blocks */
    for (int i = 0; i < nb * K; i++)
        rb[i] = -1;
    MPI_Request rq;
    PLX_CHECK_MPI(MPI_Ineighbor_alltoall(sb, K, MPI_INT, rb, K, MPI_INT, cart, &rq));
    MPI_Wait(&rq, MPI_STATUS_IGNORE);
    ok = 1;
    for (int i = 0; i < nb; i++)
        for (int k = 0; k < K; k++)
            ok &= rb[i * K + k] == (src[i] == MPI_PROC_NULL ? -1 : src[i] * 1000 + (i ^ 1) * 10 + k);
    PLX_CHECK(ok || !check, "Ineighbor_alltoall on %s", what);
    /* allgather: every neighbour's one block */
    int mine = 7000 + cr;
    for (int i = 0; i < nb; i++)
        rb[i] = -1;
    PLX_CHECK_MPI(MPI_Neighbor_allgather(&mine, 1, MPI_INT, rb, 1, MPI_INT, cart));
    ok = 1;
    for (int i = 0; i < nb; i++)
        ok &= rb[i] == (src[i] == MPI_PROC_NULL ? -1 : 7000 + src[i]);
    PLX_CHECK(ok, "Neighbor_allgather on %s", what);
    /* alltoallv: block j carries j+1 ints, received at displacement 5*i */
    int *sc = plx_malloc((size_t)nb * sizeof(int)), *sd = plx_malloc((size_t)nb * sizeof(int));
    int *rc = plx_malloc((size_t)nb * sizeof(int)), *rd = plx_malloc((size_t)nb * sizeof(int));
    int *big = plx_malloc((size_t)nb * 5 * sizeof(int)), *rbig = plx_malloc((size_t)nb * 5 * sizeof(int));
    for (int j = 0; j < nb; j++) {
        sc[j] = (j % 2) + 1;
        sd[j] = 5 * j;
        rc[j] = ((j ^ 1) % 2) + 1; /* what the neighbour sends in the opposite direction */
        rd[j] = 5 * j;
        for (int k = 0; k < 5; k++)
            big[5 * j + k] = cr * 1000 + j * 10 + k;
    }
    for (int i = 0; i < nb * 5; i++)
        rbig[i] = -1;
    PLX_CHECK_MPI(MPI_Neighbor_alltoallv(big, sc, sd, MPI_INT, rbig, rc, rd, MPI_INT, cart));
    ok = 1;
    for (int i = 0; i < nb; i++)
        for (int k = 0; k < 5; k++) {
            int want = src[i] == MPI_PROC_NULL || k >= rc[i] ? -1 : src[i] * 1000 + (i ^ 1) * 10 + k;
            ok &= rbig[5 * i + k] == want;
        }
    PLX_CHECK(ok || !check, "Neighbor_alltoallv on %s", what);
    /* alltoallw: byte displacements, a different type for odd neighbours */
    MPI_Aint *sda = plx_malloc((size_t)nb * sizeof(MPI_Aint)), *rda = plx_malloc((size_t)nb * sizeof(MPI_Aint));
    MPI_Datatype *st = plx_malloc((size_t)nb * sizeof(MPI_Datatype)), *rt = plx_malloc((size_t)nb * sizeof(MPI_Datatype));
    MPI_Datatype two;
    MPI_Type_contiguous(2, MPI_INT, &two);
    MPI_Type_commit(&two);
    int *wsc = plx_malloc((size_t)nb * sizeof(int)), *wrc = plx_malloc((size_t)nb * sizeof(int));
    for (int j = 0; j < nb; j++) {
        sda[j] = 5 * j * (MPI_Aint)sizeof(int);
        rda[j] = 5 * j * (MPI_Aint)sizeof(int);
        st[j] = MPI_INT;
        wsc[j] = 2;
        rt[j] = j % 2 ? two : MPI_INT;
        wrc[j] = j % 2 ? 1 : 2;
    }
    for (int i = 0; i < nb * 5; i++)
        rbig[i] = -1;
    PLX_CHECK_MPI(MPI_Neighbor_alltoallw(big, wsc, sda, st, rbig, wrc, rda, rt, cart));
    ok = 1;
    for (int i = 0; i < nb; i++)
        for (int k = 0; k < 5; k++) {
            int want = src[i] == MPI_PROC_NULL || k >= 2 ? -1 : src[i] * 1000 + (i ^ 1) * 10 + k;
            ok &= rbig[5 * i + k] == want;
        }
    PLX_CHECK(ok || !check, "Neighbor_alltoallw on %s", what);
    MPI_Type_free(&two);
    free(src), free(sb), free(rb), free(sc), free(sd), free(rc), free(rd), free(big), free(rbig);
    free(sda), free(rda), free(st), free(rt), free(wsc), free(wrc);
    MPI_Comm_free(&cart);
}

int main(int argc, char **argv)
{
    plx_test_init(&argc, &argv, "topo_basic");
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    test_dims();
    test_cart();
    test_graph();
    test_dist_graph();
    int d2[2] = {0, 0};
    MPI_Dims_create(size, 2, d2);
    test_cart_neighbors(2, d2, (int[]){1, 1}, "a periodic 2-d grid");
    test_cart_neighbors(2, d2, (int[]){0, 0}, "a non-periodic 2-d grid");
    test_cart_neighbors(3, (int[]){1, size, 1}, (int[]){1, 0, 1}, "a grid with periodic dimensions of size 1");
    test_cart_neighbors(1, (int[]){size}, (int[]){1}, "a periodic ring");
    return plx_test_finish();
}
