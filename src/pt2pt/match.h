/*
 * Matching: per match context, a queue of posted receives and the
 * unexpected messages, so MPI's non-overtaking rule holds as long as
 * packets from one sender are delivered in order (the transports guarantee
 * that).
 *
 * Unexpected messages are kept in one FIFO per source rank (a "bin") and
 * stamped with a per-context arrival counter. A receive from a given source
 * looks only in that source's bin, usually at its head: a flood of 20,000
 * messages from each of 8 ranks costs O(1) per receive, not O(queue).
 * MPI_ANY_SOURCE takes, among the bins' first matches, the one with the
 * lowest stamp: O(number of sources with unexpected messages).
 *
 * Posted receives are one FIFO per context: finding the receive for an
 * arriving message is O(posted receives ahead of it); programs rarely keep
 * many posted, and this is the place to add bins when one does.
 */
#ifndef PLX_MATCH_H
#define PLX_MATCH_H

#include <stddef.h>
#include <stdint.h>
#include "core/plexus.h"
#include "core/request.h"

struct plx_unexp {
    struct plx_list link;       /* in its source's bin */
    uint64_t stamp;             /* arrival order within the context */
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
    struct plx_list *bins;      /* unexpected messages, by source rank */
    int nbins;
    size_t nunexp;
    uint64_t next_stamp;
};

void plx_match_init(void);
void plx_match_finalize(void);
struct plx_match_q *plx_match_q(int ctx);

static inline int plx_match_hit(int want_src, int want_tag, int src, int tag)
{
    return (want_src == src || want_src == MPI_ANY_SOURCE) && (want_tag == tag || want_tag == MPI_ANY_TAG);
}

/* First posted receive matching (src, tag), removed from the queue. */
struct plx_request *plx_match_posted_take(struct plx_match_q *q, int src, int tag);
/* Appends an unexpected message (u->src set) in arrival order. */
void plx_match_unexp_add(struct plx_match_q *q, struct plx_unexp *u);
/* An upcall for every message that joins an unexpected queue (MPI_T's
 * event source, api/mpit.c); NULL: none. Called with the library lock held. */
void plx_match_set_unexp_hook(void (*fn)(const struct plx_unexp *u));
/* First unexpected message matching (want_src, want_tag); removed if take. */
struct plx_unexp *plx_match_unexp_find(struct plx_match_q *q, int want_src, int want_tag, int take);
/* The unexpected message from world rank lpid with cookie sreq, removed;
 * NULL if there is none (cancel). */
struct plx_unexp *plx_match_unexp_take_cookie(struct plx_match_q *q, int lpid, uint64_t sreq);

#endif
