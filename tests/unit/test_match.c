/*
 * Unit test of the matching queues (src/pt2pt/match.c): wildcards, order of
 * posted receives and unexpected messages, removal.
 */
#include <stdlib.h>
#include "pt2pt/match.h"
#include "test_util.h"

static struct plx_request reqs[8];

static struct plx_request *post(struct plx_match_q *q, int i, int src, int tag)
{
    struct plx_request *r = &reqs[i];
    r->rank = src;
    r->tag = tag;
    plx_list_push_back(&q->posted, &r->link);
    return r;
}

static struct plx_unexp *arrive(struct plx_match_q *q, int src, int tag, uint64_t id)
{
    struct plx_unexp *u = calloc(1, sizeof *u);
    u->src = src;
    u->tag = tag;
    u->sreq = id;
    plx_match_unexp_add(q, u);
    return u;
}

int main(void)
{
    plx_match_init();
    struct plx_match_q *q = plx_match_q(6);
    T_CHECK(q == plx_match_q(6) && q != plx_match_q(8), "one queue per context");

    /* posted: specific, any-source, any-tag, any-any: earliest match wins */
    struct plx_request *a = post(q, 0, 1, 5);
    struct plx_request *b = post(q, 1, MPI_ANY_SOURCE, 7);
    struct plx_request *c = post(q, 2, 2, MPI_ANY_TAG);
    struct plx_request *d = post(q, 3, MPI_ANY_SOURCE, MPI_ANY_TAG);
    T_CHECK(plx_match_posted_take(q, 2, 7) == b, "(2,7) takes the any-source receive posted before (2,*)");
    T_CHECK(plx_match_posted_take(q, 2, 7) == c, "then (2,*)");
    T_CHECK(plx_match_posted_take(q, 3, 5) == d, "(3,5) only matches (*,*)");
    T_CHECK(plx_match_posted_take(q, 3, 5) == NULL, "nothing left for (3,5)");
    T_CHECK(plx_match_posted_take(q, 1, 5) == a, "(1,5)");
    T_CHECK(plx_list_empty(&q->posted), "posted queue empty");

    /* unexpected: arrival order per source; probe does not remove */
    arrive(q, 1, 5, 100);
    arrive(q, 2, 5, 200);
    arrive(q, 1, 6, 101);
    arrive(q, 1, 5, 102);
    struct plx_unexp *u = plx_match_unexp_find(q, 1, MPI_ANY_TAG, 0);
    T_CHECK(u && u->sreq == 100, "probe (1,*) sees the first from rank 1");
    u = plx_match_unexp_find(q, MPI_ANY_SOURCE, 6, 1);
    T_CHECK(u && u->sreq == 101, "take (*,6)");
    free(u);
    u = plx_match_unexp_find(q, 1, 5, 1);
    T_CHECK(u && u->sreq == 100, "take (1,5) first");
    free(u);
    u = plx_match_unexp_find(q, 1, 5, 1);
    T_CHECK(u && u->sreq == 102, "take (1,5) second");
    free(u);
    u = plx_match_unexp_find(q, MPI_ANY_SOURCE, MPI_ANY_TAG, 1);
    T_CHECK(u && u->sreq == 200, "the one from rank 2 is left");
    free(u);
    T_CHECK(plx_match_unexp_find(q, MPI_ANY_SOURCE, MPI_ANY_TAG, 0) == NULL, "unexpected queue empty");
    T_CHECK(!plx_match_hit(1, 5, 1, 6) && plx_match_hit(MPI_ANY_SOURCE, MPI_ANY_TAG, 9, 9), "hit rules");

    /* many sources: bins grow; any-source takes the earliest arrival */
    for (int i = 0; i < 300; i++)
        arrive(q, (i * 37) % 100, i % 3, (uint64_t)i);
    u = plx_match_unexp_find(q, MPI_ANY_SOURCE, 2, 1);
    T_CHECK(u && u->sreq == 2, "any-source tag 2 is the third arrival (got %lld)", u ? (long long)u->sreq : -1LL);
    free(u);
    u = plx_match_unexp_take_cookie(q, 0, 299);
    T_CHECK(u && u->sreq == 299 && u->src == (299 * 37) % 100, "take by cookie");
    free(u);
    int n = 0;
    uint64_t last = 0;
    int ordered = 1;
    while ((u = plx_match_unexp_find(q, MPI_ANY_SOURCE, MPI_ANY_TAG, 1)) != NULL) {
        if (n && u->sreq < last)
            ordered = 0;
        last = u->sreq;
        free(u);
        n++;
    }
    T_CHECK(n == 298 && ordered, "drained %d in arrival order: %d", n, ordered);
    /* a specific source sees only its own messages, in order */
    arrive(q, 7, 1, 1);
    arrive(q, 8, 1, 2);
    arrive(q, 7, 1, 3);
    u = plx_match_unexp_find(q, 7, 1, 1);
    T_CHECK(u && u->sreq == 1, "source 7 first");
    free(u);
    u = plx_match_unexp_find(q, 7, 1, 1);
    T_CHECK(u && u->sreq == 3, "source 7 second");
    free(u);
    u = plx_match_unexp_find(q, 8, MPI_ANY_TAG, 1);
    T_CHECK(u && u->sreq == 2, "source 8");
    free(u);
    T_DONE("match");
}
