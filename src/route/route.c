/* Routing (see route.h). */
#include <stdio.h>
#include <string.h>
#include "core/config.h"
#include "core/log.h"
#include "core/runtime.h"
#include "pm/pm.h"
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

/* "node NAME" of a rank, from its PMI card "c<rank>" = "<node>,<pid>". */
static void plx_route_node_name(int lpid, char *buf, size_t len)
{
    char key[PLX_PM_MAX_KEY], val[PLX_PM_MAX_VAL];
    snprintf(key, sizeof key, "c%d", lpid);
    if (plx_pm_get(key, val, sizeof val) != PLX_OK) {
        snprintf(buf, len, "node %d", plx_procs.p[lpid].node_id);
        return;
    }
    char *comma = strrchr(val, ',');
    if (comma)
        *comma = 0;
    snprintf(buf, len, "node %.200s", val);
}

void plx_route_check(void)
{
    for (int lpid = 0; lpid < plx_procs.n; lpid++) {
        if (plx_route_peer(lpid))
            continue;
        char me[256], him[256], have[64] = "";
        plx_route_node_name(plx_procs.my_lpid, me, sizeof me);
        plx_route_node_name(lpid, him, sizeof him);
        for (int i = 0; i < plx_route_ntransports; i++) {
            size_t l = strlen(have);
            snprintf(have + l, sizeof have - l, "%s%s", i ? "," : "", plx_route_transports[i]->name);
        }
        plx_fatal("MPI_Init: no transport reaches rank %d (%s) from rank %d (%s); transports in use: %s "
                  "(PLEXUS_TRANSPORTS=\"%s\"). Ranks on different nodes need tcp",
                  lpid, him, plx_procs.my_lpid, me, have[0] ? have : "none", plx_config.transports);
    }
}
