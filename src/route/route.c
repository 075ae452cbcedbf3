/* Routing (see route.h). */
#include <string.h>
#include "core/config.h"
#include "route/route.h"

const struct plx_transport_ops *plx_route_transports[4];
int plx_route_ntransports;

int plx_route_enabled(const char *name)
{
    const char *list = plx_config.transports;
    if (!list[0])
        return 1;
    size_t n = strlen(name);
    for (const char *p = list; *p;) {
        const char *e = strchr(p, ',');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        if (len == n && !strncmp(p, name, n))
            return 1;
        p += len + (e ? 1 : 0);
    }
    return 0;
}

void plx_route_register(const struct plx_transport_ops *tp)
{
    int i = plx_route_ntransports++;
    while (i > 0 && plx_route_transports[i - 1]->latency_class > tp->latency_class) {
        plx_route_transports[i] = plx_route_transports[i - 1];
        i--;
    }
    plx_route_transports[i] = tp;
}

const struct plx_transport_ops *plx_route_peer(int lpid)
{
    for (int i = 0; i < plx_route_ntransports; i++)
        if (plx_route_transports[i]->reaches(lpid))
            return plx_route_transports[i];
    return NULL;
}
