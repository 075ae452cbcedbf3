/* Posted receives and unexpected-message bins (see match.h). */
#include <stdlib.h>
#include "core/objects.h"
#include "pt2pt/match.h"

static struct plx_match_q plx_match_qs[PLX_MAX_CONTEXTS];

void plx_match_init(void)
{
    for (int i = 0; i < PLX_MAX_CONTEXTS; i++) {
        plx_list_init(&plx_match_qs[i].posted);
        plx_match_qs[i].bins = NULL;
        plx_match_qs[i].nbins = 0;
        plx_match_qs[i].nunexp = 0;
    }
}

void plx_match_finalize(void)
{
    for (int i = 0; i < PLX_MAX_CONTEXTS; i++) {
        free(plx_match_qs[i].bins);
        plx_match_qs[i].bins = NULL;
        plx_match_qs[i].nbins = 0;
    }
}

struct plx_match_q *plx_match_q(int ctx)
{
    return &plx_match_qs[ctx & (PLX_MAX_CONTEXTS - 1)];
}

struct plx_request *plx_match_posted_take(struct plx_match_q *q, int src, int tag)
{
    struct plx_list *pos;
    plx_list_for_each(pos, &q->posted) {
        struct plx_request *r = plx_list_entry(pos, struct plx_request, link);
        if (plx_match_hit(r->rank, r->tag, src, tag)) {
            plx_list_remove(pos);
            return r;
        }
    }
    return NULL;
}

static void (*plx_match_unexp_hook)(const struct plx_unexp *u);

void plx_match_set_unexp_hook(void (*fn)(const struct plx_unexp *u))
{
    plx_match_unexp_hook = fn;
}

void plx_match_unexp_add(struct plx_match_q *q, struct plx_unexp *u)
{
    if (plx_match_unexp_hook)
        plx_match_unexp_hook(u);
    if (u->src >= q->nbins) {
        int n = q->nbins ? q->nbins : 8;
        while (n <= u->src)
            n *= 2;
        struct plx_list *b = realloc(q->bins, (size_t)n * sizeof *b);
        if (!b)
            abort();
        /* lists point at their heads: re-anchor the moved ones */
        for (int i = 0; i < q->nbins; i++) {
            if (b[i].next == &q->bins[i]) {
                plx_list_init(&b[i]);
            } else {
                b[i].next->prev = &b[i];
                b[i].prev->next = &b[i];
            }
        }
        for (int i = q->nbins; i < n; i++)
            plx_list_init(&b[i]);
        q->bins = b;
        q->nbins = n;
    }
    u->stamp = q->next_stamp++;
    plx_list_push_back(&q->bins[u->src], &u->link);
    q->nunexp++;
}

static struct plx_unexp *plx_match_bin_find(struct plx_list *bin, int want_tag)
{
    struct plx_list *pos;
    plx_list_for_each(pos, bin) {
        struct plx_unexp *u = plx_list_entry(pos, struct plx_unexp, link);
        if (want_tag == MPI_ANY_TAG || u->tag == want_tag)
            return u;
    }
    return NULL;
}

static void plx_match_unexp_remove(struct plx_match_q *q, struct plx_unexp *u)
{
    plx_list_remove(&u->link);
    q->nunexp--;
}

struct plx_unexp *plx_match_unexp_find(struct plx_match_q *q, int want_src, int want_tag, int take)
{
    if (q->nunexp == 0)
        return NULL;
    struct plx_unexp *best = NULL;
    if (want_src != MPI_ANY_SOURCE) {
        if (want_src >= 0 && want_src < q->nbins)
            best = plx_match_bin_find(&q->bins[want_src], want_tag);
    } else {
        for (int s = 0; s < q->nbins; s++) {
            if (plx_list_empty(&q->bins[s]))
                continue;
            struct plx_unexp *u = plx_match_bin_find(&q->bins[s], want_tag);
            if (u && (!best || u->stamp < best->stamp))
                best = u;
        }
    }
    if (best && take)
        plx_match_unexp_remove(q, best);
    return best;
}

struct plx_unexp *plx_match_unexp_take_cookie(struct plx_match_q *q, int lpid, uint64_t sreq)
{
    for (int s = 0; s < q->nbins; s++) {
        struct plx_list *pos;
        plx_list_for_each(pos, &q->bins[s]) {
            struct plx_unexp *u = plx_list_entry(pos, struct plx_unexp, link);
            if (u->lpid == lpid && u->sreq == sreq) {
                plx_match_unexp_remove(q, u);
                return u;
            }
        }
    }
    return NULL;
}
