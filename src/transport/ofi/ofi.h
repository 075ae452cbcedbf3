/*
 * libfabric transport (built when libfabric is found: PLX_HAVE_OFI). One
 * reliable-datagram (FI_EP_RDM) endpoint of one provider/domain: eager
 * messages by fi_inject or fi_send from bounce buffers, rendezvous data
 * read by the receiver with fi_read straight from the sender's registered
 * buffer into the receive buffer. See ofi.c for the design.
 */
#ifndef PLX_OFI_H
#define PLX_OFI_H

#include "transport/transport.h"

/* The component: one instance ("ofi"), when PLEXUS_TRANSPORTS names ofi,
 * PLEXUS_ROUTE names it, or PLEXUS_OFI_PROVIDER is set. */
extern const struct plx_tp_component plx_ofi_component;

#endif
