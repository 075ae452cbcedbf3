/*
 * TCP transport: one listening socket per process, connections opened lazily
 * on the first packet to a peer and authenticated with the job's secret,
 * non-blocking sockets under one epoll set, writev of queued packets,
 * rendezvous data written from and read into user buffers (zero copy).
 * See tcp.c for the design and tcp_wire.h for the handshake.
 */
#ifndef PLX_TCP_H
#define PLX_TCP_H

#include "transport/transport.h"

/* The component: one instance per rail (see tcp.c). */
extern const struct plx_tp_component plx_tcp_component;

/* PMI key of the job's secret: 32 hex digits (128 bits) used as they are, or
 * any other text from which 128 bits are derived. A launcher that creates one
 * puts it in the KVS before the ranks start; otherwise rank 0 makes one. */
#define PLX_TCP_SECRET_KEY "plexus-job-secret"

/* Before the business-card fence (every rank calls it when PLEXUS_TRANSPORTS
 * allows tcp): opens the listening socket, publishes the card "tcp-<rank>"
 * and, on rank 0, the job secret if the launcher gave none. A local failure
 * is remembered and reported by open(); it never skips the puts other ranks
 * rely on. After the fence, open(): `needed`: some peer will be reached over
 * TCP; when not, the listener is closed and no instance opens. */
void plx_tcp_init_early(void);

/* For plexus-info: can this process open the listening socket, and which
 * addresses would its card carry (PLEXUS_IFACES, PLEXUS_TCP_PORTS)? 1 and a
 * description, or 0 and the reason, in msg. Needs plx_config loaded. */
int plx_tcp_probe(char *msg, size_t len);

#endif
