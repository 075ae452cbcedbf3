/*
 * Shared-memory transport: per-pair single-producer/single-consumer rings
 * inside one segment per receiving process, a doorbell for sleeping
 * receivers, and cross-memory attach for single-copy rendezvous.
 */
#ifndef PLX_SHM_H
#define PLX_SHM_H

#include "transport/transport.h"

extern const struct plx_transport_ops plx_shm_ops;

/* Collective over the node's processes (uses PM fences): creates, maps and
 * unlinks the segments. */
plx_status_t plx_shm_init(void);

#endif
