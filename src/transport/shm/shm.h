/*
 * Shared-memory transport: one segment per process of a fixed size (a
 * multi-producer inbound queue, queue.h, and a few per-pair rings, ring.h,
 * claimed lazily by the busiest senders), a doorbell for sleeping receivers,
 * and cross-memory attach for single-copy rendezvous.
 */
#ifndef PLX_SHM_H
#define PLX_SHM_H

#include "transport/transport.h"

/* The component. Its init_early() creates and reserves this process's
 * segment before the business-card fence; open() touches no peer: a peer's
 * segment is mapped on first contact. One instance. */
extern const struct plx_tp_component plx_shm_component;

#endif
