/*
 * The TCP transport's business card (PMI key "tcp-<rank>"), one line without spaces:
 *     <port>|<host>|<loopback addrs>|<addrs>      e.g. 40123|n1|127.0.0.1,::1|10.0.0.1,fd00::1
 * A peer on the same node tries the loopback addresses first (empty when
 * PLEXUS_IFACES has include terms: the user chose the interfaces), then the
 * others; a peer on another node tries only the others, in order, and the
 * first that connects and passes the handshake is used. Reachability is
 * tested, not guessed from subnets (subnets only order the attempts).
 */
#ifndef PLX_TCP_CARD_H
#define PLX_TCP_CARD_H

#include <stddef.h>
#include "util/iface.h"

#define PLX_TCP_CARD_MAX_ADDRS 16

struct plx_tcp_card {
    int port;
    char host[64];
    int nlo, naddr;
    struct plx_iface_ip lo[2];
    struct plx_iface_ip addr[PLX_TCP_CARD_MAX_ADDRS];
};

/* 0, or -1 when it does not fit in len. */
int plx_tcp_card_format(const struct plx_tcp_card *c, char *buf, size_t len);
/* 0, or -1 when malformed. */
int plx_tcp_card_parse(const char *s, struct plx_tcp_card *c);

#endif
