/*
 * Small things every Plexus file uses: branch hints, container_of, an
 * intrusive doubly-linked list (in the style of Linux list.h, as static inline
 * functions), and aligned allocation helpers.
 */
#ifndef PLX_PLEXUS_H
#define PLX_PLEXUS_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>
#include "core/status.h"

#define plx_likely(x)   __builtin_expect(!!(x), 1)
#define plx_unlikely(x) __builtin_expect(!!(x), 0)
#define PLX_CACHELINE 64
#define PLX_EXPORT __attribute__((visibility("default")))

#define plx_container_of(ptr, type, member) \
    ((type *)((char *)(ptr) - offsetof(type, member)))

#define PLX_ALIGN_UP(x, a) (((x) + ((a) - 1)) & ~((uint64_t)(a) - 1))
#define PLX_MIN(a, b) ((a) < (b) ? (a) : (b))
#define PLX_MAX(a, b) ((a) > (b) ? (a) : (b))

struct plx_list {
    struct plx_list *next, *prev;
};

static inline void plx_list_init(struct plx_list *h) { h->next = h->prev = h; }
static inline bool plx_list_empty(const struct plx_list *h) { return h->next == h; }

static inline void plx_list__insert(struct plx_list *e, struct plx_list *prev, struct plx_list *next)
{
    next->prev = e;
    e->next = next;
    e->prev = prev;
    prev->next = e;
}
static inline void plx_list_push_back(struct plx_list *h, struct plx_list *e) { plx_list__insert(e, h->prev, h); }
static inline void plx_list_push_front(struct plx_list *h, struct plx_list *e) { plx_list__insert(e, h, h->next); }
static inline void plx_list_remove(struct plx_list *e)
{
    e->prev->next = e->next;
    e->next->prev = e->prev;
    e->next = e->prev = e;
}

#define plx_list_entry(ptr, type, member) plx_container_of(ptr, type, member)
#define plx_list_for_each(pos, head) for ((pos) = (head)->next; (pos) != (head); (pos) = (pos)->next)
#define plx_list_for_each_safe(pos, n, head) \
    for ((pos) = (head)->next, (n) = (pos)->next; (pos) != (head); (pos) = (n), (n) = (pos)->next)

void *plx_malloc(size_t n);
void *plx_calloc(size_t n, size_t m);
void *plx_realloc(void *p, size_t n);
char *plx_strdup(const char *s);

#endif
