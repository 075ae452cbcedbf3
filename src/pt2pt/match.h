/*
 * Matching: per match context, a queue of posted receives and a queue of
 * unexpected messages, both in arrival order, so MPI's non-overtaking rule
 * holds as long as packets from one sender are delivered in order (the
 * transports guarantee that).
 *
 * Cost: finding a match walks the queue from its head: O(n) in the number of
 * posted receives (or unexpected messages) of that communicator that come
 * before the match. Typical programs keep these short; per-source bins are
 * the planned fix for programs that do not (DESIGN.md, "Point-to-point").
 */
#ifndef PLX_MATCH_H
#define PLX_MATCH_H

#include <stddef.h>
#include <stdint.h>
#include "core/plexus.h"
#include "core/request.h"

struct plx_unexp {
    struct plx_list link;
    int src;                    /* rank in the communicator */
    int tag;
    int lpid;                   /* sender's world rank */
    uint8_t type;               /* PLX_PKT_EAGER or PLX_PKT_RTS */
    uint8_t flags;
    size_t size;                /* message bytes */
    uint64_t sreq;              /* sender's cookie */
    uint64_t addr;              /* RTS: sender's buffer */
    void *data;                 /* EAGER: copy of the payload */
};

struct plx_match_q {
    struct plx_list posted;
    struct plx_list unexp;
};

void plx_match_init(void);
struct plx_match_q *plx_match_q(int ctx);

static inline int plx_match_hit(int want_src, int want_tag, int src, int tag)
{
    return (want_src == src || want_src == MPI_ANY_SOURCE) && (want_tag == tag || want_tag == MPI_ANY_TAG);
}

/* First posted receive matching (src, tag), removed from the queue. */
struct plx_request *plx_match_posted_take(struct plx_match_q *q, int src, int tag);
/* First unexpected message matching (want_src, want_tag); removed if take. */
struct plx_unexp *plx_match_unexp_find(struct plx_match_q *q, int want_src, int want_tag, int take);

#endif
