/*
 * Process topologies (Cartesian, graph, distributed graph) and the
 * neighbourhood collectives.
 *
 * A topology is kept on its communicator as the value of an internal
 * keyval's attribute: MPI_Comm_dup copies it (MPI 3.1 section 7.4), freeing
 * the communicator frees it, and no field of struct plx_comm is needed. The
 * new communicator of a constructor is made with MPI_Comm_split (no reordering:
 * rank i of the topology is rank i of the old communicator, which the
 * standard allows), so it inherits no attributes.
 *
 * Neighbour order (MPI 3.1 section 7.6): Cartesian, for each dimension the
 * source then the destination of MPI_Cart_shift(d, 1); graph, the edges of
 * MPI_Graph_neighbors; distributed graph, the sources (in) and destinations
 * (out) as given or as gathered by MPI_Dist_graph_create.
 */
#include <mpi.h>
#include <stdlib.h>
#include <string.h>
#include "api/api.h"
#include "api/count.h"
#include "coll/algo.h"
#include "coll/coll.h"
#include "core/datatype.h"

#pragma weak MPI_Dims_create = PMPI_Dims_create
#pragma weak MPI_Cart_create = PMPI_Cart_create
#pragma weak MPI_Cart_get = PMPI_Cart_get
#pragma weak MPI_Cartdim_get = PMPI_Cartdim_get
#pragma weak MPI_Cart_rank = PMPI_Cart_rank
#pragma weak MPI_Cart_coords = PMPI_Cart_coords
#pragma weak MPI_Cart_shift = PMPI_Cart_shift
#pragma weak MPI_Cart_sub = PMPI_Cart_sub
#pragma weak MPI_Cart_map = PMPI_Cart_map
#pragma weak MPI_Topo_test = PMPI_Topo_test
#pragma weak MPI_Graph_create = PMPI_Graph_create
#pragma weak MPI_Graphdims_get = PMPI_Graphdims_get
#pragma weak MPI_Graph_get = PMPI_Graph_get
#pragma weak MPI_Graph_neighbors_count = PMPI_Graph_neighbors_count
#pragma weak MPI_Graph_neighbors = PMPI_Graph_neighbors
#pragma weak MPI_Graph_map = PMPI_Graph_map
#pragma weak MPI_Dist_graph_create_adjacent = PMPI_Dist_graph_create_adjacent
#pragma weak MPI_Dist_graph_create = PMPI_Dist_graph_create
#pragma weak MPI_Dist_graph_neighbors_count = PMPI_Dist_graph_neighbors_count
#pragma weak MPI_Dist_graph_neighbors = PMPI_Dist_graph_neighbors
#pragma weak MPI_Neighbor_allgather = PMPI_Neighbor_allgather
#pragma weak MPI_Neighbor_allgatherv = PMPI_Neighbor_allgatherv
#pragma weak MPI_Neighbor_alltoall = PMPI_Neighbor_alltoall
#pragma weak MPI_Neighbor_alltoallv = PMPI_Neighbor_alltoallv
#pragma weak MPI_Neighbor_alltoallw = PMPI_Neighbor_alltoallw
#pragma weak MPI_Ineighbor_allgather = PMPI_Ineighbor_allgather
#pragma weak MPI_Ineighbor_allgatherv = PMPI_Ineighbor_allgatherv
#pragma weak MPI_Ineighbor_alltoall = PMPI_Ineighbor_alltoall
#pragma weak MPI_Ineighbor_alltoallv = PMPI_Ineighbor_alltoallv
#pragma weak MPI_Ineighbor_alltoallw = PMPI_Ineighbor_alltoallw

/* Distinct addresses for the weight sentinels (declared in mpi.h). */
static int plx_unweighted_mark, plx_weights_empty_mark;
int *const MPI_UNWEIGHTED = &plx_unweighted_mark;
int *const MPI_WEIGHTS_EMPTY = &plx_weights_empty_mark;

struct plx_topo {
    int kind;                   /* MPI_CART, MPI_GRAPH, MPI_DIST_GRAPH */
    int ndims;                  /* cart */
    int *dims, *periods;
    int nnodes, nedges;         /* graph */
    int *index, *edges;
    int nin, nout, weighted;    /* dist graph */
    int *in, *inw, *out, *outw;
};

static int *plx_dup_ints(const int *a, int n)
{
    int *b = plx_malloc(((size_t)n + 1) * sizeof(int));
    if (n > 0)
        memcpy(b, a, (size_t)n * sizeof(int));
    return b;
}

static void plx_topo_free(struct plx_topo *t)
{
    free(t->dims), free(t->periods), free(t->index), free(t->edges);
    free(t->in), free(t->inw), free(t->out), free(t->outw);
    free(t);
}

static struct plx_topo *plx_topo_copy(const struct plx_topo *t)
{
    struct plx_topo *n = plx_calloc(1, sizeof *n);
    *n = *t;
    n->dims = plx_dup_ints(t->dims, t->ndims);
    n->periods = plx_dup_ints(t->periods, t->ndims);
    n->index = plx_dup_ints(t->index, t->nnodes);
    n->edges = plx_dup_ints(t->edges, t->nedges);
    n->in = plx_dup_ints(t->in, t->nin);
    n->inw = plx_dup_ints(t->inw, t->nin);
    n->out = plx_dup_ints(t->out, t->nout);
    n->outw = plx_dup_ints(t->outw, t->nout);
    return n;
}

static int plx_topo_copy_fn(MPI_Comm oldcomm, int keyval, void *extra, void *in, void *out, int *flag)
{
    *(void **)out = plx_topo_copy(in);
    *flag = 1;
    return MPI_SUCCESS;
}

static int plx_topo_delete_fn(MPI_Comm comm, int keyval, void *val, void *extra)
{
    plx_topo_free(val);
    return MPI_SUCCESS;
}

static struct plx_keyval *plx_topo_keyval(void)
{
    static struct plx_keyval *kv;
    if (!kv) {
        kv = plx_keyval_new(PLX_KEYVAL_COMM, plx_topo_copy_fn, plx_topo_delete_fn, NULL);
        kv->freed = 1;      /* invisible to MPI_Comm_get_attr and friends */
        kv->obj.refcount++; /* never released */
    }
    return kv;
}

static struct plx_topo *plx_topo_of(struct plx_comm *c)
{
    struct plx_attr *a = plx_attr_find(c->attrs, plx_topo_keyval());
    return a ? a->value : NULL;
}

/* The communicator of handle h with a topology of this kind (0: any). */
static int plx_topo_comm(MPI_Comm h, int kind, struct plx_comm **c_p, struct plx_topo **t_p, const char *fn)
{
    *t_p = NULL; /* defined on every path, also when an error handler returns */
    int rc = plx_api_comm(h, c_p, fn);
    if (rc)
        return rc;
    struct plx_topo *t = plx_topo_of(*c_p);
    if (!t || (kind && t->kind != kind))
        return plx_api_err(*c_p, fn, MPI_ERR_TOPOLOGY, "the communicator has %s topology",
                           !t ? "no" : kind == MPI_CART ? "no Cartesian" : kind == MPI_GRAPH ? "no graph"
                                                                            : "no distributed graph");
    *t_p = t;
    return MPI_SUCCESS;
}

/* plx_topo_comm, then checks a 'rank' argument: a rank of the communicator
 * (Cartesian) or a node of the graph. */
static int plx_topo_comm_rank(MPI_Comm h, int kind, int rank, struct plx_comm **c_p, struct plx_topo **t_p,
                              const char *fn)
{
    int rc = plx_topo_comm(h, kind, c_p, t_p, fn);
    if (rc)
        return rc;
    int n = kind == MPI_GRAPH ? (*t_p)->nnodes : (*c_p)->size;
    if (rank < 0 || rank >= n)
        return plx_api_err(*c_p, fn, MPI_ERR_RANK, "argument 'rank' is %d (the %s has %d %s)", rank,
                           kind == MPI_GRAPH ? "graph" : "communicator", n, kind == MPI_GRAPH ? "nodes" : "ranks");
    return MPI_SUCCESS;
}

/* An internal collective of a topology call failed: the error names the
 * call; a lost member is MPIX_ERR_PROC_FAILED, anything else says what it was. */
static int plx_topo_coll_err(struct plx_comm *c, const char *fn, plx_status_t st, const char *what)
{
    if (st == PLX_ERR_PROC_FAILED)
        return plx_api_err(c, fn, MPIX_ERR_PROC_FAILED, "%s with the other ranks failed: a member process was lost",
                           what);
    return plx_api_err(c, fn, plx_status_to_class(st), "%s with the other ranks failed (internal status %d)", what,
                       (int)st);
}

/* Splits off the first n ranks of c (no reordering) and attaches t to the
 * new communicator; ranks past n get MPI_COMM_NULL (and t is freed there). */
static int plx_topo_attach(struct plx_comm *c, int n, struct plx_topo *t, MPI_Comm *newcomm, const char *fn)
{
    int rc = plx_api_comm_split(c, c->rank < n ? 0 : MPI_UNDEFINED, c->rank, newcomm, fn);
    if (rc != MPI_SUCCESS || *newcomm == MPI_COMM_NULL) {
        plx_topo_free(t);
        return rc;
    }
    struct plx_comm *nc = plx_obj_lookup(&plx_comm_tab, *newcomm);
    return plx_attr_set(&nc->attrs, nc->obj.handle, plx_topo_keyval(), t);
}

/* --- Cartesian ------------------------------------------------------------ */

/* Balanced factorisation of m into k non-increasing factors. "Balanced" is
 * an order on the candidates: the smallest spread (largest minus smallest
 * factor) first, then, among equal spreads, the lexicographically smallest
 * vector (so 20 in 4 is 5,2,2,1, not 5,4,1,1): the choice MPICH makes.
 * m is factored once into its sorted divisors (at most 1536 for an int);
 * the search picks factors from them largest position first and abandons
 * a branch as soon as the spread it must reach exceeds the best found. Every
 * (nnodes <= 1000, ndims 1-5) case takes ~10 ms in all; m = 2^31-1 takes
 * its trial division (46,341 steps). The older search tried every integer
 * below m at every position: seconds for a large prime, and an int overflow
 * gave 1530281023 x 5 for 2^31-1. */
struct plx_dims_search {
    int k;
    const long long *divs;      /* divisors of m, ascending */
    int ndivs;
    long long *cur, *best;
    long long best_spread;      /* -1: nothing found yet */
};

/* x^c <= r, without overflow */
static int plx_pow_le(long long x, int c, long long r)
{
    long long p = 1;
    for (int i = 0; i < c; i++)
        if (__builtin_mul_overflow(p, x, &p) || p > r)
            return 0;
    return 1;
}

/* largest x with x^c <= r (r >= 1, c >= 1), by bisection */
static long long plx_iroot(long long r, int c)
{
    if (c == 1 || r <= 1)
        return r;
    long long lo = 1, hi = r;
    while (lo < hi) {
        long long mid = lo + (hi - lo + 1) / 2;
        if (plx_pow_le(mid, c, r))
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

static int plx_dims_better(const struct plx_dims_search *s, long long spread)
{
    if (s->best_spread < 0 || spread < s->best_spread)
        return 1;
    if (spread > s->best_spread)
        return 0;
    for (int i = 0; i < s->k; i++)
        if (s->cur[i] != s->best[i])
            return s->cur[i] < s->best[i];
    return 0;
}

/* positions pos..k-1 multiply to r, each <= maxf */
static void plx_dims_search(struct plx_dims_search *s, int pos, long long r, long long maxf)
{
    int c = s->k - pos;
    if (c == 1) {
        if (r > maxf)
            return;
        s->cur[pos] = r;
        long long spread = s->cur[0] - r;
        if (plx_dims_better(s, spread)) {
            s->best_spread = spread;
            memcpy(s->best, s->cur, (size_t)s->k * sizeof *s->cur);
        }
        return;
    }
    /* this factor d is the largest of the c left: d^c >= r */
    long long lo = plx_iroot(r, c);
    if (plx_pow_le(lo, c, r - 1))
        lo++;                   /* lo^c < r: round up */
    for (int i = 0; i < s->ndivs; i++) {
        long long d = s->divs[i];
        if (d < lo || r % d)
            continue;
        if (d > maxf || d > r)
            break;
        /* the smallest factor left is at most the (c-1)-th root of r/d, so the
         * spread is at least top - that; it only grows with d */
        long long top = pos == 0 ? d : s->cur[0];
        if (s->best_spread >= 0 && top - plx_iroot(r / d, c - 1) > s->best_spread)
            break;
        s->cur[pos] = d;
        plx_dims_search(s, pos + 1, r / d, d);
    }
}

/* The divisors of m in ascending order, from its prime factorisation. */
static int plx_divisors(long long m, long long *divs)
{
    int n = 1;
    divs[0] = 1;
    for (long long p = 2; m > 1; p++) {
        if (p * p > m)
            p = m;              /* what is left is prime */
        if (m % p)
            continue;
        int e = 0;
        while (m % p == 0) {
            m /= p;
            e++;
        }
        int base = n;
        long long pk = 1;
        for (int j = 1; j <= e; j++) {
            pk *= p;
            for (int i = 0; i < base; i++)
                divs[n++] = divs[i] * pk;
        }
    }
    /* insertion sort: at most 1536 entries, once per call */
    for (int i = 1; i < n; i++) {
        long long v = divs[i];
        int j = i;
        for (; j > 0 && divs[j - 1] > v; j--)
            divs[j] = divs[j - 1];
        divs[j] = v;
    }
    return n;
}

int PMPI_Dims_create(int nnodes, int ndims, int dims[])
{
    static const char fn[] = "MPI_Dims_create";
    plx_api_check_init(fn);
    if (ndims < 0 || nnodes <= 0)
        return plx_api_err(NULL, fn, MPI_ERR_DIMS, "nnodes %d and ndims %d must be positive", nnodes, ndims);
    if (ndims > 0 && !dims)
        return plx_api_null_arg(NULL, fn, "dims");
    long fixed = 1;
    int nfree = 0;
    for (int i = 0; i < ndims; i++) {
        if (dims[i] < 0)
            return plx_api_err(NULL, fn, MPI_ERR_DIMS, "dims[%d] is negative (%d)", i, dims[i]);
        if (dims[i] == 0)
            nfree++;
        else if ((fixed *= dims[i]) > nnodes)
            return plx_api_err(NULL, fn, MPI_ERR_DIMS, "the given dimensions multiply to more than nnodes %d",
                               nnodes);
    }
    if (nnodes % fixed)
        return plx_api_err(NULL, fn, MPI_ERR_DIMS, "nnodes %d is not a multiple of the fixed dimensions' product %ld",
                           nnodes, fixed);
    if (nfree == 0) {
        if (fixed != nnodes)
            return plx_api_err(NULL, fn, MPI_ERR_DIMS, "the dimensions multiply to %ld, not %d", fixed, nnodes);
        return MPI_SUCCESS;
    }
    long long m = nnodes / fixed;
    long long divs[1600];       /* an int has at most 1536 divisors */
    long long *cur = plx_malloc((size_t)nfree * sizeof *cur), *best = plx_malloc((size_t)nfree * sizeof *best);
    struct plx_dims_search s = { nfree, divs, plx_divisors(m, divs), cur, best, -1 };
    plx_dims_search(&s, 0, m, m);
    for (int i = 0, k = 0; i < ndims; i++)
        if (dims[i] == 0)
            dims[i] = (int)best[k++];
    free(cur);
    free(best);
    return MPI_SUCCESS;
}

static void plx_cart_coords_of(const struct plx_topo *t, int rank, int *coords)
{
    for (int i = t->ndims - 1; i >= 0; i--) {
        coords[i] = rank % t->dims[i];
        rank /= t->dims[i];
    }
}

/* Rank of coords (wrapped in periodic dimensions); -1 when outside. */
static int plx_cart_rank_of(const struct plx_topo *t, const int *coords)
{
    int r = 0;
    for (int i = 0; i < t->ndims; i++) {
        int c = coords[i];
        if (c < 0 || c >= t->dims[i]) {
            if (!t->periods[i])
                return -1;
            c = ((c % t->dims[i]) + t->dims[i]) % t->dims[i];
        }
        r = r * t->dims[i] + c;
    }
    return r;
}

int PMPI_Cart_create(MPI_Comm comm, int ndims, const int dims[], const int periods[], int reorder,
                     MPI_Comm *newcomm)
{
    static const char fn[] = "MPI_Cart_create";
    struct plx_comm *c = NULL;
    plx_api_lock();
    int rc = plx_api_intracomm(comm, &c, fn);
    if (rc)
        goto out;
    if (!newcomm) {
        rc = plx_api_null_arg(c, fn, "comm_cart");
        goto out;
    }
    if (ndims < 0 || (ndims > 0 && (!dims || !periods))) {
        rc = plx_api_err(c, fn, MPI_ERR_DIMS, "argument 'ndims' is %d or dims/periods are NULL", ndims);
        goto out;
    }
    long n = 1;
    for (int i = 0; i < ndims; i++) {
        if (dims[i] <= 0) {
            rc = plx_api_err(c, fn, MPI_ERR_DIMS, "dims[%d] is %d (must be positive)", i, dims[i]);
            goto out;
        }
        n *= dims[i];
    }
    if (n > c->size) {
        rc = plx_api_err(c, fn, MPI_ERR_TOPOLOGY, "the grid has %ld processes but the communicator only %d", n,
                         c->size);
        goto out;
    }
    struct plx_topo *t = plx_calloc(1, sizeof *t);
    t->kind = MPI_CART;
    t->ndims = ndims;
    t->dims = plx_dup_ints(dims, ndims);
    t->periods = plx_dup_ints(periods, ndims);
    for (int i = 0; i < ndims; i++)
        t->periods[i] = t->periods[i] != 0;
    rc = plx_topo_attach(c, (int)n, t, newcomm, fn);
out:
    plx_api_unlock();
    return rc;
}

int PMPI_Cartdim_get(MPI_Comm comm, int *ndims)
{
    struct plx_comm *c;
    struct plx_topo *t;
    int rc = plx_topo_comm(comm, MPI_CART, &c, &t, "MPI_Cartdim_get");
    if (rc)
        return rc;
    if (!ndims)
        return plx_api_null_arg(c, "MPI_Cartdim_get", "ndims");
    *ndims = t->ndims;
    return MPI_SUCCESS;
}

int PMPI_Cart_get(MPI_Comm comm, int maxdims, int dims[], int periods[], int coords[])
{
    static const char fn[] = "MPI_Cart_get";
    struct plx_comm *c;
    struct plx_topo *t;
    int rc = plx_topo_comm(comm, MPI_CART, &c, &t, fn);
    if (rc)
        return rc;
    int n = PLX_MIN(maxdims, t->ndims);
    if (n > 0 && (!dims || !periods || !coords))
        return plx_api_null_arg(c, fn, !dims ? "dims" : !periods ? "periods" : "coords");
    int *my = plx_malloc(((size_t)t->ndims + 1) * sizeof(int));
    plx_cart_coords_of(t, c->rank, my);
    for (int i = 0; i < n; i++) {
        dims[i] = t->dims[i];
        periods[i] = t->periods[i];
        coords[i] = my[i];
    }
    free(my);
    return MPI_SUCCESS;
}

int PMPI_Cart_rank(MPI_Comm comm, const int coords[], int *rank)
{
    static const char fn[] = "MPI_Cart_rank";
    struct plx_comm *c;
    struct plx_topo *t;
    int rc = plx_topo_comm(comm, MPI_CART, &c, &t, fn);
    if (rc)
        return rc;
    if (!rank || (t->ndims > 0 && !coords))
        return plx_api_null_arg(c, fn, rank ? "coords" : "rank");
    int r = plx_cart_rank_of(t, coords);
    if (r < 0)
        return plx_api_err(c, fn, MPI_ERR_ARG, "coordinates are outside a non-periodic dimension");
    *rank = r;
    return MPI_SUCCESS;
}

int PMPI_Cart_coords(MPI_Comm comm, int rank, int maxdims, int coords[])
{
    static const char fn[] = "MPI_Cart_coords";
    struct plx_comm *c;
    struct plx_topo *t;
    int rc = plx_topo_comm_rank(comm, MPI_CART, rank, &c, &t, fn);
    if (rc)
        return rc;
    if (maxdims < t->ndims)
        return plx_api_err(c, fn, MPI_ERR_ARG, "maxdims %d is less than the %d dimensions", maxdims, t->ndims);
    if (t->ndims > 0 && !coords)
        return plx_api_null_arg(c, fn, "coords");
    plx_cart_coords_of(t, rank, coords);
    return MPI_SUCCESS;
}

int PMPI_Cart_shift(MPI_Comm comm, int direction, int disp, int *source, int *dest)
{
    static const char fn[] = "MPI_Cart_shift";
    struct plx_comm *c;
    struct plx_topo *t;
    int rc = plx_topo_comm(comm, MPI_CART, &c, &t, fn);
    if (rc)
        return rc;
    if (direction < 0 || direction >= t->ndims)
        return plx_api_err(c, fn, MPI_ERR_ARG, "direction %d is not a dimension (0..%d)", direction, t->ndims - 1);
    if (!source || !dest)
        return plx_api_null_arg(c, fn, source ? "rank_dest" : "rank_source");
    int *co = plx_malloc((size_t)t->ndims * sizeof(int));
    plx_cart_coords_of(t, c->rank, co);
    int me = co[direction];
    co[direction] = me + disp;
    int r = plx_cart_rank_of(t, co);
    *dest = r < 0 ? MPI_PROC_NULL : r;
    co[direction] = me - disp;
    r = plx_cart_rank_of(t, co);
    *source = r < 0 ? MPI_PROC_NULL : r;
    free(co);
    return MPI_SUCCESS;
}

int PMPI_Cart_sub(MPI_Comm comm, const int remain_dims[], MPI_Comm *newcomm)
{
    static const char fn[] = "MPI_Cart_sub";
    struct plx_comm *c;
    struct plx_topo *t;
    plx_api_lock();
    int rc = plx_topo_comm(comm, MPI_CART, &c, &t, fn);
    if (rc == MPI_SUCCESS && (!newcomm || (t->ndims > 0 && !remain_dims)))
        rc = plx_api_null_arg(c, fn, newcomm ? "remain_dims" : "newcomm");
    if (rc) {
        plx_api_unlock();
        return rc;
    }
    int *co = plx_malloc(((size_t)t->ndims + 1) * sizeof(int));
    plx_cart_coords_of(t, c->rank, co);
    int color = 0, key = 0, nd = 0;
    struct plx_topo *s = plx_calloc(1, sizeof *s);
    s->kind = MPI_CART;
    s->dims = plx_malloc(((size_t)t->ndims + 1) * sizeof(int));
    s->periods = plx_malloc(((size_t)t->ndims + 1) * sizeof(int));
    for (int i = 0; i < t->ndims; i++) {
        if (remain_dims[i]) {
            key = key * t->dims[i] + co[i];
            s->dims[nd] = t->dims[i];
            s->periods[nd++] = t->periods[i];
        } else {
            color = color * t->dims[i] + co[i];
        }
    }
    s->ndims = nd;
    free(co);
    rc = plx_api_comm_split(c, color, key, newcomm, fn);
    if (rc == MPI_SUCCESS) {
        struct plx_comm *nc = plx_obj_lookup(&plx_comm_tab, *newcomm);
        rc = plx_attr_set(&nc->attrs, nc->obj.handle, plx_topo_keyval(), s);
    } else {
        plx_topo_free(s);
    }
    plx_api_unlock();
    return rc;
}

int PMPI_Cart_map(MPI_Comm comm, int ndims, const int dims[], const int periods[], int *newrank)
{
    static const char fn[] = "MPI_Cart_map";
    struct plx_comm *c;
    int rc = plx_api_intracomm(comm, &c, fn);
    if (rc)
        return rc;
    if (!newrank || (ndims > 0 && !dims))
        return plx_api_null_arg(c, fn, newrank ? "dims" : "newrank");
    long n = 1;
    for (int i = 0; i < ndims; i++) {
        if (dims[i] <= 0)
            return plx_api_err(c, fn, MPI_ERR_DIMS, "dims[%d] is %d", i, dims[i]);
        n *= dims[i];
    }
    if (n > c->size)
        return plx_api_err(c, fn, MPI_ERR_TOPOLOGY, "the grid has %ld processes but the communicator only %d", n,
                           c->size);
    *newrank = c->rank < n ? c->rank : MPI_UNDEFINED;
    return MPI_SUCCESS;
}

int PMPI_Topo_test(MPI_Comm comm, int *status)
{
    struct plx_comm *c;
    int rc = plx_api_comm(comm, &c, "MPI_Topo_test");
    if (rc)
        return rc;
    if (!status)
        return plx_api_null_arg(c, "MPI_Topo_test", "status");
    struct plx_topo *t = plx_topo_of(c);
    *status = t ? t->kind : MPI_UNDEFINED;
    return MPI_SUCCESS;
}

/* --- graph ------------------------------------------------------------------ */

int PMPI_Graph_create(MPI_Comm comm, int nnodes, const int index[], const int edges[], int reorder,
                      MPI_Comm *newcomm)
{
    static const char fn[] = "MPI_Graph_create";
    struct plx_comm *c = NULL;
    plx_api_lock();
    int rc = plx_api_intracomm(comm, &c, fn);
    if (rc == MPI_SUCCESS && !newcomm)
        rc = plx_api_null_arg(c, fn, "comm_graph");
    if (rc == MPI_SUCCESS && (nnodes < 0 || nnodes > c->size))
        rc = plx_api_err(c, fn, MPI_ERR_ARG, "nnodes is %d (the communicator has %d ranks)", nnodes, c->size);
    if (rc == MPI_SUCCESS && nnodes > 0 && (!index || !edges))
        rc = plx_api_null_arg(c, fn, index ? "edges" : "index");
    int nedges = nnodes > 0 && rc == MPI_SUCCESS ? index[nnodes - 1] : 0;
    for (int i = 0; rc == MPI_SUCCESS && i < nnodes; i++)
        if (index[i] < (i ? index[i - 1] : 0))
            rc = plx_api_err(c, fn, MPI_ERR_ARG, "index[%d] = %d decreases", i, index[i]);
    for (int i = 0; rc == MPI_SUCCESS && i < nedges; i++)
        if (edges[i] < 0 || edges[i] >= nnodes)
            rc = plx_api_err(c, fn, MPI_ERR_ARG, "edges[%d] = %d is not a node (0..%d)", i, edges[i], nnodes - 1);
    if (rc == MPI_SUCCESS) {
        struct plx_topo *t = plx_calloc(1, sizeof *t);
        t->kind = MPI_GRAPH;
        t->nnodes = nnodes;
        t->nedges = nedges;
        t->index = plx_dup_ints(index, nnodes);
        t->edges = plx_dup_ints(edges, nedges);
        rc = plx_topo_attach(c, nnodes, t, newcomm, fn);
    }
    plx_api_unlock();
    return rc;
}

int PMPI_Graphdims_get(MPI_Comm comm, int *nnodes, int *nedges)
{
    struct plx_comm *c;
    struct plx_topo *t;
    int rc = plx_topo_comm(comm, MPI_GRAPH, &c, &t, "MPI_Graphdims_get");
    if (rc)
        return rc;
    if (!nnodes || !nedges)
        return plx_api_null_arg(c, "MPI_Graphdims_get", nnodes ? "nedges" : "nnodes");
    *nnodes = t->nnodes;
    *nedges = t->nedges;
    return MPI_SUCCESS;
}

int PMPI_Graph_get(MPI_Comm comm, int maxindex, int maxedges, int index[], int edges[])
{
    struct plx_comm *c;
    struct plx_topo *t;
    int rc = plx_topo_comm(comm, MPI_GRAPH, &c, &t, "MPI_Graph_get");
    if (rc)
        return rc;
    for (int i = 0; i < PLX_MIN(maxindex, t->nnodes); i++)
        index[i] = t->index[i];
    for (int i = 0; i < PLX_MIN(maxedges, t->nedges); i++)
        edges[i] = t->edges[i];
    return MPI_SUCCESS;
}

static int plx_graph_range(const struct plx_topo *t, int rank, int *lo, int *hi)
{
    *lo = rank ? t->index[rank - 1] : 0;
    *hi = t->index[rank];
    return *hi - *lo;
}

int PMPI_Graph_neighbors_count(MPI_Comm comm, int rank, int *nneighbors)
{
    static const char fn[] = "MPI_Graph_neighbors_count";
    struct plx_comm *c;
    struct plx_topo *t;
    int rc = plx_topo_comm_rank(comm, MPI_GRAPH, rank, &c, &t, fn);
    if (rc)
        return rc;
    if (!nneighbors)
        return plx_api_null_arg(c, fn, "nneighbors");
    int lo, hi;
    *nneighbors = plx_graph_range(t, rank, &lo, &hi);
    return MPI_SUCCESS;
}

int PMPI_Graph_neighbors(MPI_Comm comm, int rank, int maxneighbors, int neighbors[])
{
    static const char fn[] = "MPI_Graph_neighbors";
    struct plx_comm *c;
    struct plx_topo *t;
    int rc = plx_topo_comm_rank(comm, MPI_GRAPH, rank, &c, &t, fn);
    if (rc)
        return rc;
    int lo, hi;
    plx_graph_range(t, rank, &lo, &hi);
    for (int i = lo; i < hi && i - lo < maxneighbors; i++)
        neighbors[i - lo] = t->edges[i];
    return MPI_SUCCESS;
}

int PMPI_Graph_map(MPI_Comm comm, int nnodes, const int index[], const int edges[], int *newrank)
{
    static const char fn[] = "MPI_Graph_map";
    struct plx_comm *c;
    int rc = plx_api_intracomm(comm, &c, fn);
    if (rc)
        return rc;
    if (!newrank)
        return plx_api_null_arg(c, fn, "newrank");
    if (nnodes < 1 || nnodes > c->size)
        return plx_api_err(c, fn, MPI_ERR_ARG, "nnodes is %d (the communicator has %d ranks)", nnodes, c->size);
    *newrank = c->rank < nnodes ? c->rank : MPI_UNDEFINED;
    return MPI_SUCCESS;
}

/* --- distributed graph ------------------------------------------------------- */

static int *plx_weights_copy(const int *w, int n)
{
    if (w == MPI_UNWEIGHTED || w == MPI_WEIGHTS_EMPTY || !w) {
        int *o = plx_malloc(((size_t)n + 1) * sizeof(int));
        for (int i = 0; i < n; i++)
            o[i] = 1;
        return o;
    }
    return plx_dup_ints(w, n);
}

int PMPI_Dist_graph_create_adjacent(MPI_Comm comm, int indegree, const int sources[], const int sourceweights[],
                                    int outdegree, const int destinations[], const int destweights[],
                                    MPI_Info info, int reorder, MPI_Comm *newcomm)
{
    static const char fn[] = "MPI_Dist_graph_create_adjacent";
    struct plx_comm *c = NULL;
    plx_api_lock();
    int rc = plx_api_intracomm(comm, &c, fn);
    if (rc == MPI_SUCCESS && !newcomm)
        rc = plx_api_null_arg(c, fn, "comm_dist_graph");
    if (rc == MPI_SUCCESS && (indegree < 0 || outdegree < 0))
        rc = plx_api_err(c, fn, MPI_ERR_ARG, "indegree %d / outdegree %d is negative", indegree, outdegree);
    if (rc == MPI_SUCCESS && ((indegree && !sources) || (outdegree && !destinations)))
        rc = plx_api_null_arg(c, fn, sources ? "destinations" : "sources");
    for (int i = 0; rc == MPI_SUCCESS && i < indegree; i++)
        if (sources[i] < 0 || sources[i] >= c->size)
            rc = plx_api_err(c, fn, MPI_ERR_RANK, "sources[%d] is %d", i, sources[i]);
    for (int i = 0; rc == MPI_SUCCESS && i < outdegree; i++)
        if (destinations[i] < 0 || destinations[i] >= c->size)
            rc = plx_api_err(c, fn, MPI_ERR_RANK, "destinations[%d] is %d", i, destinations[i]);
    if (rc == MPI_SUCCESS) {
        struct plx_topo *t = plx_calloc(1, sizeof *t);
        t->kind = MPI_DIST_GRAPH;
        t->nin = indegree;
        t->nout = outdegree;
        t->in = plx_dup_ints(sources, indegree);
        t->out = plx_dup_ints(destinations, outdegree);
        t->weighted = sourceweights != MPI_UNWEIGHTED;
        t->inw = plx_weights_copy(sourceweights, indegree);
        t->outw = plx_weights_copy(destweights, outdegree);
        rc = plx_topo_attach(c, c->size, t, newcomm, fn);
    }
    plx_api_unlock();
    return rc;
}

/* Each process names some edges; every edge (s, d, w) is sent to s (as an
 * out-edge) and to d (as an in-edge) with an alltoall of counts and an
 * alltoallv of (kind, peer, weight) triples. */
int PMPI_Dist_graph_create(MPI_Comm comm, int n, const int sources[], const int degrees[],
                           const int destinations[], const int weights[], MPI_Info info, int reorder,
                           MPI_Comm *newcomm)
{
    static const char fn[] = "MPI_Dist_graph_create";
    struct plx_comm *c = NULL;
    plx_api_lock();
    int rc = plx_api_intracomm(comm, &c, fn);
    if (rc == MPI_SUCCESS && !newcomm)
        rc = plx_api_null_arg(c, fn, "comm_dist_graph");
    if (rc == MPI_SUCCESS && n < 0)
        rc = plx_api_err(c, fn, MPI_ERR_ARG, "argument 'n' is negative (%d)", n);
    if (rc == MPI_SUCCESS && n > 0 && (!sources || !degrees))
        rc = plx_api_null_arg(c, fn, sources ? "degrees" : "sources");
    long nedges = 0;
    for (int i = 0; rc == MPI_SUCCESS && i < n; i++) {
        if (sources[i] < 0 || sources[i] >= c->size || degrees[i] < 0)
            rc = plx_api_err(c, fn, MPI_ERR_ARG, "sources[%d] = %d / degrees[%d] = %d", i, sources[i], i,
                             degrees[i]);
        nedges += degrees[i];
    }
    for (long e = 0; rc == MPI_SUCCESS && e < nedges; e++)
        if (destinations[e] < 0 || destinations[e] >= c->size)
            rc = plx_api_err(c, fn, MPI_ERR_RANK, "destinations[%ld] is %d", e, destinations[e]);
    if (rc) {
        plx_api_unlock();
        return rc;
    }
    int p = c->size;
    uint64_t any_weighted = weights != MPI_UNWEIGHTED;
    plx_status_t st = plx_coll_allreduce_u64(&any_weighted, 1, PLX_COLL_MAX, c, PLX_COLL_TAG_TOPO);
    if (st != PLX_OK) {
        plx_api_unlock();
        return plx_topo_coll_err(c, fn, st, "agreeing on weights");
    }
    int weighted = weights != MPI_UNWEIGHTED;
    int *scnt = plx_calloc((size_t)p, sizeof(int)), *rcnt = plx_calloc((size_t)p, sizeof(int));
    int *sdis = plx_calloc((size_t)p + 1, sizeof(int)), *rdis = plx_calloc((size_t)p + 1, sizeof(int));
    for (int i = 0, e = 0; i < n; i++)
        for (int k = 0; k < degrees[i]; k++, e++) {
            scnt[sources[i]] += 3;
            scnt[destinations[e]] += 3;
        }
    for (int r = 0; r < p; r++)
        sdis[r + 1] = sdis[r] + scnt[r];
    int *sbuf = plx_malloc(((size_t)sdis[p] + 1) * sizeof(int)), *fill = plx_calloc((size_t)p, sizeof(int));
    for (int i = 0, e = 0; i < n; i++)
        for (int k = 0; k < degrees[i]; k++, e++) {
            int s = sources[i], d = destinations[e], w = weighted ? weights[e] : 1;
            int *o = sbuf + sdis[s] + fill[s];
            o[0] = 0, o[1] = d, o[2] = w;        /* out-edge of s */
            fill[s] += 3;
            o = sbuf + sdis[d] + fill[d];
            o[0] = 1, o[1] = s, o[2] = w;        /* in-edge of d */
            fill[d] += 3;
        }
    /* the counts, then the triples: byte sizes and offsets for plx_coll_alltoallv */
    size_t *sz = plx_malloc(4 * (size_t)p * sizeof *sz), *sb = sz + p, *so = sz + 2 * (size_t)p,
           *ro = sz + 3 * (size_t)p;
    for (int r = 0; r < p; r++) {
        sz[r] = sizeof(int);
        so[r] = (size_t)r * sizeof(int);
    }
    int *rbuf = NULL;
    st = plx_coll_alltoallv(scnt, sz, so, rcnt, sz, so, c, PLX_COLL_TAG_TOPO);
    if (st == PLX_OK) {
        for (int r = 0; r < p; r++) {
            rdis[r + 1] = rdis[r] + rcnt[r];
            sb[r] = (size_t)scnt[r] * sizeof(int);
            so[r] = (size_t)sdis[r] * sizeof(int);
            sz[r] = (size_t)rcnt[r] * sizeof(int);
            ro[r] = (size_t)rdis[r] * sizeof(int);
        }
        rbuf = plx_malloc(((size_t)rdis[p] + 1) * sizeof(int));
        st = plx_coll_alltoallv(sbuf, sb, so, rbuf, sz, ro, c, PLX_COLL_TAG_TOPO);
    }
    free(sz);
    if (st != PLX_OK) {
        free(scnt), free(rcnt), free(sdis), free(rdis), free(sbuf), free(fill), free(rbuf);
        plx_api_unlock();
        return plx_topo_coll_err(c, fn, st, "exchanging the edges");
    }
    struct plx_topo *t = plx_calloc(1, sizeof *t);
    t->kind = MPI_DIST_GRAPH;
    t->weighted = any_weighted != 0;
    for (int i = 0; i < rdis[p]; i += 3) {
        if (rbuf[i])
            t->nin++;
        else
            t->nout++;
    }
    t->in = plx_malloc(((size_t)t->nin + 1) * sizeof(int));
    t->inw = plx_malloc(((size_t)t->nin + 1) * sizeof(int));
    t->out = plx_malloc(((size_t)t->nout + 1) * sizeof(int));
    t->outw = plx_malloc(((size_t)t->nout + 1) * sizeof(int));
    for (int i = 0, ni = 0, no = 0; i < rdis[p]; i += 3) {
        if (rbuf[i]) {
            t->in[ni] = rbuf[i + 1];
            t->inw[ni++] = rbuf[i + 2];
        } else {
            t->out[no] = rbuf[i + 1];
            t->outw[no++] = rbuf[i + 2];
        }
    }
    free(scnt), free(rcnt), free(sdis), free(rdis), free(sbuf), free(fill), free(rbuf);
    rc = plx_topo_attach(c, p, t, newcomm, fn);
    plx_api_unlock();
    return rc;
}

int PMPI_Dist_graph_neighbors_count(MPI_Comm comm, int *indegree, int *outdegree, int *weighted)
{
    static const char fn[] = "MPI_Dist_graph_neighbors_count";
    struct plx_comm *c;
    struct plx_topo *t;
    int rc = plx_topo_comm(comm, MPI_DIST_GRAPH, &c, &t, fn);
    if (rc)
        return rc;
    if (!indegree || !outdegree || !weighted)
        return plx_api_null_arg(c, fn, !indegree ? "indegree" : !outdegree ? "outdegree" : "weighted");
    *indegree = t->nin;
    *outdegree = t->nout;
    *weighted = t->weighted;
    return MPI_SUCCESS;
}

int PMPI_Dist_graph_neighbors(MPI_Comm comm, int maxindegree, int sources[], int sourceweights[],
                              int maxoutdegree, int destinations[], int destweights[])
{
    static const char fn[] = "MPI_Dist_graph_neighbors";
    struct plx_comm *c;
    struct plx_topo *t;
    int rc = plx_topo_comm(comm, MPI_DIST_GRAPH, &c, &t, fn);
    if (rc)
        return rc;
    for (int i = 0; i < PLX_MIN(maxindegree, t->nin); i++) {
        sources[i] = t->in[i];
        if (t->weighted && sourceweights != MPI_UNWEIGHTED && sourceweights)
            sourceweights[i] = t->inw[i];
    }
    for (int i = 0; i < PLX_MIN(maxoutdegree, t->nout); i++) {
        destinations[i] = t->out[i];
        if (t->weighted && destweights != MPI_UNWEIGHTED && destweights)
            destweights[i] = t->outw[i];
    }
    return MPI_SUCCESS;
}

/* --- neighbourhood collectives -------------------------------------------- */

/* In- and out-neighbour lists of c's topology (malloc'd). */
static int plx_neighbors(struct plx_comm *c, struct plx_topo *t, int **in, int *nin, int **out, int *nout)
{
    if (t->kind == MPI_CART) {
        int *co = plx_malloc(((size_t)t->ndims + 1) * sizeof(int));
        int *l = plx_malloc((2 * (size_t)t->ndims + 1) * sizeof(int));
        plx_cart_coords_of(t, c->rank, co);
        for (int d = 0; d < t->ndims; d++) {
            int me = co[d];
            co[d] = me - 1;
            int r = plx_cart_rank_of(t, co);
            l[2 * d] = r < 0 ? MPI_PROC_NULL : r;
            co[d] = me + 1;
            r = plx_cart_rank_of(t, co);
            l[2 * d + 1] = r < 0 ? MPI_PROC_NULL : r;
            co[d] = me;
        }
        free(co);
        *nin = *nout = 2 * t->ndims;
        *in = l;
        *out = plx_dup_ints(l, *nout);
    } else if (t->kind == MPI_GRAPH) {
        int lo, hi;
        int n = plx_graph_range(t, c->rank, &lo, &hi);
        *nin = *nout = n;
        *in = plx_dup_ints(t->edges + lo, n);
        *out = plx_dup_ints(t->edges + lo, n);
    } else {
        *nin = t->nin;
        *nout = t->nout;
        *in = plx_dup_ints(t->in, t->nin);
        *out = plx_dup_ints(t->out, t->nout);
    }
    return MPI_SUCCESS;
}

enum { PLX_NB_ALLGATHER, PLX_NB_ALLGATHERV, PLX_NB_ALLTOALL, PLX_NB_ALLTOALLV, PLX_NB_ALLTOALLW };

/* One implementation for the five neighbourhood collectives and their
 * nonblocking forms (req NULL: blocking). Scalar arguments are used when
 * the per-neighbour arrays are NULL. */
static int plx_neighbor(int kind, const void *sbuf, MPI_Count scount, struct plx_vec scounts,
                        struct plx_vec sdispls, MPI_Datatype stype, const MPI_Datatype *stypes, void *rbuf,
                        MPI_Count rcount, struct plx_vec rcounts, struct plx_vec rdispls, MPI_Datatype rtype,
                        const MPI_Datatype *rtypes, MPI_Comm comm, MPI_Request *req, int nonblocking,
                        const char *fn)
{
    struct plx_comm *c;
    struct plx_topo *t;
    plx_api_lock();
    int rc = plx_topo_comm(comm, 0, &c, &t, fn);
    if (rc == MPI_SUCCESS && nonblocking && !req)
        rc = plx_api_null_arg(c, fn, "request");
    if (rc) {
        plx_api_unlock();
        return rc;
    }
    int *in, *out, nin, nout;
    plx_neighbors(c, t, &in, &nin, &out, &nout);
    MPI_Count *sc = plx_malloc(((size_t)nout + 1) * sizeof(MPI_Count));
    MPI_Count *rc_ = plx_malloc(((size_t)nin + 1) * sizeof(MPI_Count));
    MPI_Aint *sd = plx_malloc(((size_t)nout + 1) * sizeof(MPI_Aint));
    MPI_Aint *rd = plx_malloc(((size_t)nin + 1) * sizeof(MPI_Aint));
    struct plx_datatype **sdts = plx_malloc(((size_t)nout + 1) * sizeof *sdts);
    struct plx_datatype **rdts = plx_malloc(((size_t)nin + 1) * sizeof *rdts);
    for (int j = 0; j < nout && rc == MPI_SUCCESS; j++) {
        MPI_Datatype h = stypes ? stypes[j] : stype;
        sc[j] = scounts.p ? plx_vec_at(scounts, j) : scount;
        sdts[j] = plx_dt_lookup(h);
        if (sc[j] < 0)
            rc = plx_api_err(c, fn, MPI_ERR_COUNT, "send count %lld for neighbour %d is negative", (long long)sc[j],
                             j);
        else if (!sdts[j] || !sdts[j]->committed)
            rc = plx_api_err(c, fn, MPI_ERR_TYPE, "send datatype for neighbour %d is %s (handle 0x%x)", j,
                             sdts[j] ? "not committed" : "not valid", (unsigned)h);
        else
            sd[j] = kind == PLX_NB_ALLTOALLW ? (MPI_Aint)plx_vec_at(sdispls, j)
                  : kind == PLX_NB_ALLTOALLV ? (MPI_Aint)plx_vec_at(sdispls, j) * sdts[j]->extent
                  : kind == PLX_NB_ALLTOALL ? (MPI_Aint)j * scount * sdts[j]->extent : 0;
    }
    for (int i = 0; i < nin && rc == MPI_SUCCESS; i++) {
        MPI_Datatype h = rtypes ? rtypes[i] : rtype;
        rc_[i] = rcounts.p ? plx_vec_at(rcounts, i) : rcount;
        rdts[i] = plx_dt_lookup(h);
        if (rc_[i] < 0)
            rc = plx_api_err(c, fn, MPI_ERR_COUNT, "receive count %lld for neighbour %d is negative",
                             (long long)rc_[i], i);
        else if (!rdts[i] || !rdts[i]->committed)
            rc = plx_api_err(c, fn, MPI_ERR_TYPE, "receive datatype for neighbour %d is %s (handle 0x%x)", i,
                             rdts[i] ? "not committed" : "not valid", (unsigned)h);
        else
            rd[i] = kind == PLX_NB_ALLTOALLW ? (MPI_Aint)plx_vec_at(rdispls, i)
                  : (kind == PLX_NB_ALLTOALLV || kind == PLX_NB_ALLGATHERV)
                      ? (MPI_Aint)plx_vec_at(rdispls, i) * rdts[i]->extent
                  : (MPI_Aint)i * rcount * rdts[i]->extent;
    }
    if (rc == MPI_SUCCESS) {
        struct plx_sched *s = plx_sched_new(c);
        plx_coll_neighbor_sched(s, t->kind == MPI_CART, nin, in, nout, out, sbuf, sc, sd, sdts, rbuf, rc_, rd, rdts);
        if (!nonblocking) {
            int err = plx_sched_run(s);
            rc = err == MPI_SUCCESS ? MPI_SUCCESS : plx_api_err_code(c, err);
        } else if (plx_api_coll_persistent) {
            *req = plx_sched_persist(s)->obj.handle;
        } else {
            *req = plx_sched_start(s)->obj.handle;
        }
    }
    free(in), free(out), free(sc), free(rc_), free(sd), free(rd), free(sdts), free(rdts);
    plx_api_unlock();
    return rc;
}

int PMPI_Neighbor_allgather(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
                            MPI_Datatype rtype, MPI_Comm comm)
{
    return plx_neighbor(PLX_NB_ALLGATHER, sbuf, scount, PLX_VEC_NONE, PLX_VEC_NONE, stype, NULL, rbuf, rcount,
                        PLX_VEC_NONE, PLX_VEC_NONE, rtype, NULL, comm, NULL, 0, "MPI_Neighbor_allgather");
}

int PMPI_Ineighbor_allgather(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
                             MPI_Datatype rtype, MPI_Comm comm, MPI_Request *req)
{
    return plx_neighbor(PLX_NB_ALLGATHER, sbuf, scount, PLX_VEC_NONE, PLX_VEC_NONE, stype, NULL, rbuf, rcount,
                        PLX_VEC_NONE, PLX_VEC_NONE, rtype, NULL, comm, req, 1, "MPI_Ineighbor_allgather");
}

int PMPI_Neighbor_allgatherv(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, const int rcounts[],
                             const int displs[], MPI_Datatype rtype, MPI_Comm comm)
{
    return plx_neighbor(PLX_NB_ALLGATHERV, sbuf, scount, PLX_VEC_NONE, PLX_VEC_NONE, stype, NULL, rbuf, 0,
                        plx_vec_int(rcounts), plx_vec_int(displs), rtype, NULL, comm, NULL, 0,
                        "MPI_Neighbor_allgatherv");
}

int PMPI_Ineighbor_allgatherv(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, const int rcounts[],
                              const int displs[], MPI_Datatype rtype, MPI_Comm comm, MPI_Request *req)
{
    return plx_neighbor(PLX_NB_ALLGATHERV, sbuf, scount, PLX_VEC_NONE, PLX_VEC_NONE, stype, NULL, rbuf, 0,
                        plx_vec_int(rcounts), plx_vec_int(displs), rtype, NULL, comm, req, 1,
                        "MPI_Ineighbor_allgatherv");
}

int PMPI_Neighbor_alltoall(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
                           MPI_Datatype rtype, MPI_Comm comm)
{
    return plx_neighbor(PLX_NB_ALLTOALL, sbuf, scount, PLX_VEC_NONE, PLX_VEC_NONE, stype, NULL, rbuf, rcount,
                        PLX_VEC_NONE, PLX_VEC_NONE, rtype, NULL, comm, NULL, 0, "MPI_Neighbor_alltoall");
}

int PMPI_Ineighbor_alltoall(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
                            MPI_Datatype rtype, MPI_Comm comm, MPI_Request *req)
{
    return plx_neighbor(PLX_NB_ALLTOALL, sbuf, scount, PLX_VEC_NONE, PLX_VEC_NONE, stype, NULL, rbuf, rcount,
                        PLX_VEC_NONE, PLX_VEC_NONE, rtype, NULL, comm, req, 1, "MPI_Ineighbor_alltoall");
}

int PMPI_Neighbor_alltoallv(const void *sbuf, const int scounts[], const int sdispls[], MPI_Datatype stype,
                            void *rbuf, const int rcounts[], const int rdispls[], MPI_Datatype rtype, MPI_Comm comm)
{
    return plx_neighbor(PLX_NB_ALLTOALLV, sbuf, 0, plx_vec_int(scounts), plx_vec_int(sdispls), stype, NULL, rbuf, 0,
                        plx_vec_int(rcounts), plx_vec_int(rdispls), rtype, NULL, comm, NULL, 0,
                        "MPI_Neighbor_alltoallv");
}

int PMPI_Ineighbor_alltoallv(const void *sbuf, const int scounts[], const int sdispls[], MPI_Datatype stype,
                             void *rbuf, const int rcounts[], const int rdispls[], MPI_Datatype rtype, MPI_Comm comm,
                             MPI_Request *req)
{
    return plx_neighbor(PLX_NB_ALLTOALLV, sbuf, 0, plx_vec_int(scounts), plx_vec_int(sdispls), stype, NULL, rbuf, 0,
                        plx_vec_int(rcounts), plx_vec_int(rdispls), rtype, NULL, comm, req, 1,
                        "MPI_Ineighbor_alltoallv");
}

int PMPI_Neighbor_alltoallw(const void *sbuf, const int scounts[], const MPI_Aint sdispls[],
                            const MPI_Datatype stypes[], void *rbuf, const int rcounts[], const MPI_Aint rdispls[],
                            const MPI_Datatype rtypes[], MPI_Comm comm)
{
    return plx_neighbor(PLX_NB_ALLTOALLW, sbuf, 0, plx_vec_int(scounts), plx_vec_aint(sdispls), 0, stypes, rbuf, 0,
                        plx_vec_int(rcounts), plx_vec_aint(rdispls), 0, rtypes, comm, NULL, 0,
                        "MPI_Neighbor_alltoallw");
}

int PMPI_Ineighbor_alltoallw(const void *sbuf, const int scounts[], const MPI_Aint sdispls[],
                             const MPI_Datatype stypes[], void *rbuf, const int rcounts[], const MPI_Aint rdispls[],
                             const MPI_Datatype rtypes[], MPI_Comm comm, MPI_Request *req)
{
    return plx_neighbor(PLX_NB_ALLTOALLW, sbuf, 0, plx_vec_int(scounts), plx_vec_aint(sdispls), 0, stypes, rbuf, 0,
                        plx_vec_int(rcounts), plx_vec_aint(rdispls), 0, rtypes, comm, req, 1,
                        "MPI_Ineighbor_alltoallw");
}

/* Persistent neighbourhood collectives (MPI 4.0): built once, run by every
 * MPI_Start (see the persistent collectives in api/coll.c). */
#define PLX_NB_INIT(call)                                                                          \
    do {                                                                                           \
        int rc_ = plx_api_coll_init_info(comm, info, req, fn);                                     \
        if (rc_)                                                                                   \
            return rc_;                                                                            \
        plx_api_coll_persistent = 1;                                                               \
        rc_ = (call);                                                                              \
        plx_api_coll_persistent = 0;                                                               \
        return rc_;                                                                                \
    } while (0)

#pragma weak MPI_Neighbor_allgather_init = PMPI_Neighbor_allgather_init
#pragma weak MPI_Neighbor_allgatherv_init = PMPI_Neighbor_allgatherv_init
#pragma weak MPI_Neighbor_alltoall_init = PMPI_Neighbor_alltoall_init
#pragma weak MPI_Neighbor_alltoallv_init = PMPI_Neighbor_alltoallv_init
#pragma weak MPI_Neighbor_alltoallw_init = PMPI_Neighbor_alltoallw_init

int PMPI_Neighbor_allgather_init(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
                                 MPI_Datatype rtype, MPI_Comm comm, MPI_Info info, MPI_Request *req)
{
    static const char fn[] = "MPI_Neighbor_allgather_init";
    PLX_NB_INIT(plx_neighbor(PLX_NB_ALLGATHER, sbuf, scount, PLX_VEC_NONE, PLX_VEC_NONE, stype, NULL, rbuf, rcount,
                             PLX_VEC_NONE, PLX_VEC_NONE, rtype, NULL, comm, req, 1, fn));
}

int PMPI_Neighbor_allgatherv_init(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
                                  const int rcounts[], const int displs[], MPI_Datatype rtype, MPI_Comm comm,
                                  MPI_Info info, MPI_Request *req)
{
    static const char fn[] = "MPI_Neighbor_allgatherv_init";
    PLX_NB_INIT(plx_neighbor(PLX_NB_ALLGATHERV, sbuf, scount, PLX_VEC_NONE, PLX_VEC_NONE, stype, NULL, rbuf, 0,
                             plx_vec_int(rcounts), plx_vec_int(displs), rtype, NULL, comm, req, 1, fn));
}

int PMPI_Neighbor_alltoall_init(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
                                MPI_Datatype rtype, MPI_Comm comm, MPI_Info info, MPI_Request *req)
{
    static const char fn[] = "MPI_Neighbor_alltoall_init";
    PLX_NB_INIT(plx_neighbor(PLX_NB_ALLTOALL, sbuf, scount, PLX_VEC_NONE, PLX_VEC_NONE, stype, NULL, rbuf, rcount,
                             PLX_VEC_NONE, PLX_VEC_NONE, rtype, NULL, comm, req, 1, fn));
}

int PMPI_Neighbor_alltoallv_init(const void *sbuf, const int scounts[], const int sdispls[], MPI_Datatype stype,
                                 void *rbuf, const int rcounts[], const int rdispls[], MPI_Datatype rtype,
                                 MPI_Comm comm, MPI_Info info, MPI_Request *req)
{
    static const char fn[] = "MPI_Neighbor_alltoallv_init";
    PLX_NB_INIT(plx_neighbor(PLX_NB_ALLTOALLV, sbuf, 0, plx_vec_int(scounts), plx_vec_int(sdispls), stype, NULL, rbuf,
                             0, plx_vec_int(rcounts), plx_vec_int(rdispls), rtype, NULL, comm, req, 1, fn));
}

int PMPI_Neighbor_alltoallw_init(const void *sbuf, const int scounts[], const MPI_Aint sdispls[],
                                 const MPI_Datatype stypes[], void *rbuf, const int rcounts[],
                                 const MPI_Aint rdispls[], const MPI_Datatype rtypes[], MPI_Comm comm,
                                 MPI_Info info, MPI_Request *req)
{
    static const char fn[] = "MPI_Neighbor_alltoallw_init";
    PLX_NB_INIT(plx_neighbor(PLX_NB_ALLTOALLW, sbuf, 0, plx_vec_int(scounts), plx_vec_aint(sdispls), 0, stypes, rbuf, 0,
                             plx_vec_int(rcounts), plx_vec_aint(rdispls), 0, rtypes, comm, req, 1, fn));
}

/* --- large-count forms (MPI 4.0 `_c`) ----------------------------------- */

#pragma weak MPI_Ineighbor_allgather_c = PMPI_Ineighbor_allgather_c
#pragma weak MPI_Ineighbor_allgatherv_c = PMPI_Ineighbor_allgatherv_c
#pragma weak MPI_Ineighbor_alltoall_c = PMPI_Ineighbor_alltoall_c
#pragma weak MPI_Ineighbor_alltoallv_c = PMPI_Ineighbor_alltoallv_c
#pragma weak MPI_Ineighbor_alltoallw_c = PMPI_Ineighbor_alltoallw_c
#pragma weak MPI_Neighbor_allgather_c = PMPI_Neighbor_allgather_c
#pragma weak MPI_Neighbor_allgather_init_c = PMPI_Neighbor_allgather_init_c
#pragma weak MPI_Neighbor_allgatherv_c = PMPI_Neighbor_allgatherv_c
#pragma weak MPI_Neighbor_allgatherv_init_c = PMPI_Neighbor_allgatherv_init_c
#pragma weak MPI_Neighbor_alltoall_c = PMPI_Neighbor_alltoall_c
#pragma weak MPI_Neighbor_alltoall_init_c = PMPI_Neighbor_alltoall_init_c
#pragma weak MPI_Neighbor_alltoallv_c = PMPI_Neighbor_alltoallv_c
#pragma weak MPI_Neighbor_alltoallv_init_c = PMPI_Neighbor_alltoallv_init_c
#pragma weak MPI_Neighbor_alltoallw_c = PMPI_Neighbor_alltoallw_c
#pragma weak MPI_Neighbor_alltoallw_init_c = PMPI_Neighbor_alltoallw_init_c

int PMPI_Ineighbor_allgather_c(const void *sbuf, MPI_Count scount, MPI_Datatype stype, void *rbuf, MPI_Count rcount,
                               MPI_Datatype rtype, MPI_Comm comm, MPI_Request *req)
{
    return plx_neighbor(PLX_NB_ALLGATHER, sbuf, scount, PLX_VEC_NONE, PLX_VEC_NONE, stype, NULL, rbuf, rcount,
                        PLX_VEC_NONE, PLX_VEC_NONE,
                        rtype, NULL, comm, req, 1, "MPI_Ineighbor_allgather_c");
}

int PMPI_Ineighbor_allgatherv_c(const void *sbuf, MPI_Count scount, MPI_Datatype stype, void *rbuf,
                                const MPI_Count rcounts[], const MPI_Aint displs[], MPI_Datatype rtype, MPI_Comm comm,
                                MPI_Request *req)
{
    return plx_neighbor(PLX_NB_ALLGATHERV, sbuf, scount, PLX_VEC_NONE, PLX_VEC_NONE, stype, NULL, rbuf, 0,
                        plx_vec_count(rcounts),
                        plx_vec_aint(displs), rtype, NULL, comm, req, 1, "MPI_Ineighbor_allgatherv_c");
}

int PMPI_Ineighbor_alltoall_c(const void *sbuf, MPI_Count scount, MPI_Datatype stype, void *rbuf, MPI_Count rcount,
                              MPI_Datatype rtype, MPI_Comm comm, MPI_Request *req)
{
    return plx_neighbor(PLX_NB_ALLTOALL, sbuf, scount, PLX_VEC_NONE, PLX_VEC_NONE, stype, NULL, rbuf, rcount,
                        PLX_VEC_NONE, PLX_VEC_NONE,
                        rtype, NULL, comm, req, 1, "MPI_Ineighbor_alltoall_c");
}

int PMPI_Ineighbor_alltoallv_c(const void *sbuf, const MPI_Count scounts[], const MPI_Aint sdispls[],
                               MPI_Datatype stype, void *rbuf, const MPI_Count rcounts[], const MPI_Aint rdispls[],
                               MPI_Datatype rtype, MPI_Comm comm, MPI_Request *req)
{
    return plx_neighbor(PLX_NB_ALLTOALLV, sbuf, 0, plx_vec_count(scounts), plx_vec_aint(sdispls), stype, NULL, rbuf,
                        0,
                        plx_vec_count(rcounts), plx_vec_aint(rdispls), rtype, NULL, comm, req, 1,
                                      "MPI_Ineighbor_alltoallv_c");
}

int PMPI_Ineighbor_alltoallw_c(const void *sbuf, const MPI_Count scounts[], const MPI_Aint sdispls[],
                               const MPI_Datatype stypes[], void *rbuf, const MPI_Count rcounts[],
                               const MPI_Aint rdispls[], const MPI_Datatype rtypes[], MPI_Comm comm, MPI_Request *req)
{
    return plx_neighbor(PLX_NB_ALLTOALLW, sbuf, 0, plx_vec_count(scounts), plx_vec_aint(sdispls), 0, stypes, rbuf, 0,
                        plx_vec_count(rcounts), plx_vec_aint(rdispls), 0, rtypes, comm, req, 1,
                                      "MPI_Ineighbor_alltoallw_c");
}

int PMPI_Neighbor_allgather_c(const void *sbuf, MPI_Count scount, MPI_Datatype stype, void *rbuf, MPI_Count rcount,
                              MPI_Datatype rtype, MPI_Comm comm)
{
    return plx_neighbor(PLX_NB_ALLGATHER, sbuf, scount, PLX_VEC_NONE, PLX_VEC_NONE, stype, NULL, rbuf, rcount,
                        PLX_VEC_NONE, PLX_VEC_NONE,
                        rtype, NULL, comm, NULL, 0, "MPI_Neighbor_allgather_c");
}

int PMPI_Neighbor_allgather_init_c(const void *sbuf, MPI_Count scount, MPI_Datatype stype, void *rbuf,
                                   MPI_Count rcount, MPI_Datatype rtype, MPI_Comm comm, MPI_Info info,
                                   MPI_Request *req)
{
    static const char fn[] = "MPI_Neighbor_allgather_init_c";
    PLX_NB_INIT(plx_neighbor(PLX_NB_ALLGATHER, sbuf, scount, PLX_VEC_NONE, PLX_VEC_NONE, stype, NULL, rbuf, rcount,
                PLX_VEC_NONE,
                             PLX_VEC_NONE, rtype, NULL, comm, req, 1, fn));
}

int PMPI_Neighbor_allgatherv_c(const void *sbuf, MPI_Count scount, MPI_Datatype stype, void *rbuf,
                               const MPI_Count rcounts[], const MPI_Aint displs[], MPI_Datatype rtype, MPI_Comm comm)
{
    return plx_neighbor(PLX_NB_ALLGATHERV, sbuf, scount, PLX_VEC_NONE, PLX_VEC_NONE, stype, NULL, rbuf, 0,
                        plx_vec_count(rcounts),
                        plx_vec_aint(displs), rtype, NULL, comm, NULL, 0, "MPI_Neighbor_allgatherv_c");
}

int PMPI_Neighbor_allgatherv_init_c(const void *sbuf, MPI_Count scount, MPI_Datatype stype, void *rbuf,
                                    const MPI_Count rcounts[], const MPI_Aint displs[], MPI_Datatype rtype,
                                    MPI_Comm comm, MPI_Info info, MPI_Request *req)
{
    static const char fn[] = "MPI_Neighbor_allgatherv_init_c";
    PLX_NB_INIT(plx_neighbor(PLX_NB_ALLGATHERV, sbuf, scount, PLX_VEC_NONE, PLX_VEC_NONE, stype, NULL, rbuf, 0,
                plx_vec_count(rcounts),
                             plx_vec_aint(displs), rtype, NULL, comm, req, 1, fn));
}

int PMPI_Neighbor_alltoall_c(const void *sbuf, MPI_Count scount, MPI_Datatype stype, void *rbuf, MPI_Count rcount,
                             MPI_Datatype rtype, MPI_Comm comm)
{
    return plx_neighbor(PLX_NB_ALLTOALL, sbuf, scount, PLX_VEC_NONE, PLX_VEC_NONE, stype, NULL, rbuf, rcount,
                        PLX_VEC_NONE, PLX_VEC_NONE,
                        rtype, NULL, comm, NULL, 0, "MPI_Neighbor_alltoall_c");
}

int PMPI_Neighbor_alltoall_init_c(const void *sbuf, MPI_Count scount, MPI_Datatype stype, void *rbuf, MPI_Count rcount,
                                  MPI_Datatype rtype, MPI_Comm comm, MPI_Info info, MPI_Request *req)
{
    static const char fn[] = "MPI_Neighbor_alltoall_init_c";
    PLX_NB_INIT(plx_neighbor(PLX_NB_ALLTOALL, sbuf, scount, PLX_VEC_NONE, PLX_VEC_NONE, stype, NULL, rbuf, rcount,
                PLX_VEC_NONE,
                             PLX_VEC_NONE, rtype, NULL, comm, req, 1, fn));
}

int PMPI_Neighbor_alltoallv_c(const void *sbuf, const MPI_Count scounts[], const MPI_Aint sdispls[],
                              MPI_Datatype stype, void *rbuf, const MPI_Count rcounts[], const MPI_Aint rdispls[],
                              MPI_Datatype rtype, MPI_Comm comm)
{
    return plx_neighbor(PLX_NB_ALLTOALLV, sbuf, 0, plx_vec_count(scounts), plx_vec_aint(sdispls), stype, NULL, rbuf,
                        0,
                        plx_vec_count(rcounts), plx_vec_aint(rdispls), rtype, NULL, comm, NULL, 0,
                                      "MPI_Neighbor_alltoallv_c");
}

int PMPI_Neighbor_alltoallv_init_c(const void *sbuf, const MPI_Count scounts[], const MPI_Aint sdispls[],
                                   MPI_Datatype stype, void *rbuf, const MPI_Count rcounts[], const MPI_Aint rdispls[],
                                   MPI_Datatype rtype, MPI_Comm comm, MPI_Info info, MPI_Request *req)
{
    static const char fn[] = "MPI_Neighbor_alltoallv_init_c";
    PLX_NB_INIT(plx_neighbor(PLX_NB_ALLTOALLV, sbuf, 0, plx_vec_count(scounts), plx_vec_aint(sdispls), stype, NULL,
                rbuf, 0,
                             plx_vec_count(rcounts), plx_vec_aint(rdispls), rtype, NULL, comm, req, 1, fn));
}

int PMPI_Neighbor_alltoallw_c(const void *sbuf, const MPI_Count scounts[], const MPI_Aint sdispls[],
                              const MPI_Datatype stypes[], void *rbuf, const MPI_Count rcounts[],
                              const MPI_Aint rdispls[], const MPI_Datatype rtypes[], MPI_Comm comm)
{
    return plx_neighbor(PLX_NB_ALLTOALLW, sbuf, 0, plx_vec_count(scounts), plx_vec_aint(sdispls), 0, stypes, rbuf, 0,
                        plx_vec_count(rcounts), plx_vec_aint(rdispls), 0, rtypes, comm, NULL, 0,
                                      "MPI_Neighbor_alltoallw_c");
}

int PMPI_Neighbor_alltoallw_init_c(const void *sbuf, const MPI_Count scounts[], const MPI_Aint sdispls[],
                                   const MPI_Datatype stypes[], void *rbuf, const MPI_Count rcounts[],
                                   const MPI_Aint rdispls[], const MPI_Datatype rtypes[], MPI_Comm comm, MPI_Info info,
                                   MPI_Request *req)
{
    static const char fn[] = "MPI_Neighbor_alltoallw_init_c";
    PLX_NB_INIT(plx_neighbor(PLX_NB_ALLTOALLW, sbuf, 0, plx_vec_count(scounts), plx_vec_aint(sdispls), 0, stypes, rbuf,
                0,
                             plx_vec_count(rcounts), plx_vec_aint(rdispls), 0, rtypes, comm, req, 1, fn));
}
