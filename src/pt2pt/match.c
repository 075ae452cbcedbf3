/* Posted and unexpected queues (see match.h). */
#include "core/objects.h"
#include "pt2pt/match.h"

static struct plx_match_q plx_match_qs[PLX_MAX_CONTEXTS];

void plx_match_init(void)
{
    for (int i = 0; i < PLX_MAX_CONTEXTS; i++) {
        plx_list_init(&plx_match_qs[i].posted);
        plx_list_init(&plx_match_qs[i].unexp);
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

struct plx_unexp *plx_match_unexp_find(struct plx_match_q *q, int want_src, int want_tag, int take)
{
    struct plx_list *pos;
    plx_list_for_each(pos, &q->unexp) {
        struct plx_unexp *u = plx_list_entry(pos, struct plx_unexp, link);
        if (plx_match_hit(want_src, want_tag, u->src, u->tag)) {
            if (take)
                plx_list_remove(pos);
            return u;
        }
    }
    return NULL;
}
