/*
 * SCTP transport over the userland stack usrsctp (UDP encapsulation): one
 * one-to-many socket per process, associations opened lazily and
 * authenticated with the job's secret, one stream per (context, tag) hash,
 * multihoming over every selected interface. Built when libusrsctp is found
 * (PLX_HAVE_SCTP); see sctp.c for the design and sctp_wire.h for the wire.
 */
#ifndef PLX_SCTP_H
#define PLX_SCTP_H

#include "transport/transport.h"

extern const struct plx_tp_component plx_sctp_component;

#endif
