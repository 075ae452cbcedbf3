/*
 * Routing: which transport serves a peer. Today: shared memory for ranks on
 * this node (PLEXUS_TRANSPORTS can exclude it); other transports register
 * here as they arrive, and the lowest latency class that reaches the peer
 * wins. Per-size and per-operation rules (PLEXUS_ROUTE) come with them.
 */
#ifndef PLX_ROUTE_H
#define PLX_ROUTE_H

#include "transport/transport.h"

/* Transports that initialised and are enabled, lowest latency class first. */
extern const struct plx_transport_ops *plx_route_transports[4];
extern int plx_route_ntransports;

/* Adds tp if PLEXUS_TRANSPORTS allows it (empty = all). */
void plx_route_register(const struct plx_transport_ops *tp);
int plx_route_enabled(const char *name);
const struct plx_transport_ops *plx_route_peer(int lpid);
/* At MPI_Init, once the transports are registered: ends the job, naming
 * both ranks and nodes, if some rank is reached by no transport (instead of
 * a hang later in a barrier that can never complete). O(ranks), no memory. */
void plx_route_check(void);

#endif
