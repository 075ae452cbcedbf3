/*
 * Shared-memory transport: per-pair single-producer/single-consumer rings
 * inside one segment per receiving process, a doorbell for sleeping
 * receivers, and cross-memory attach for single-copy rendezvous.
 */
#ifndef PLX_SHM_H
#define PLX_SHM_H

#include "transport/transport.h"

/* The component. Its open() is collective over the node's processes (PM
 * fences): it creates, maps and unlinks the segments. One instance. */
extern const struct plx_tp_component plx_shm_component;

#endif
