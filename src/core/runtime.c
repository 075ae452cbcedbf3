/*
 * MPI_Init and MPI_Finalize: the order in which layers come up and go down.
 *
 *   config -> process manager -> router rules and early cards -> business
 *   cards (node, pid) -> matching -> router (opens the transports'
 *   instances) -> point-to-point -> objects (comms, types, ...) -> progress
 *
 * Business card of rank r: key "c<r>" = "<node name>,<pid>", read by the
 * others only when the launcher gives no PMI_process_mapping or node names
 * are set by hand (PLEXUS_NODE_NAME); otherwise nobody reads a card at
 * start-up, and a peer's pid is learned on first contact. The TCP
 * transport publishes its own card ("tcp-<r>", and on rank 0 possibly the
 * job secret) before the same fence, so that no extra fence is needed; it
 * learns after the fence whether any peer needs it.
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "coll/coll.h"
#include "core/config.h"
#include "core/datatype.h"
#include "core/lock.h"
#include "core/log.h"
#include "core/request.h"
#include "core/runtime.h"
#include "pm/pm.h"
#include "progress/progress.h"
#include "pt2pt/match.h"
#include "pt2pt/pt2pt.h"
#include "route/route.h"

struct plx_procs plx_procs;
struct plx_runtime plx_rt = { .world_rank = -1 };
struct plx_lock plx_lock;

int plx_node_id_of(int lpid)
{
    return plx_procs.p[lpid].node_id;
}

void plx_runtime_test_point(const char *point)
{
    const char *at = plx_config.test_die_at;
    size_t n = strlen(point);
    if (at[0] && strncmp(at, point, n) == 0 && at[n] == ':' && atoi(at + n + 1) == plx_procs.my_lpid)
        raise(SIGKILL);
}

static void plx_sanitize(char *s)
{
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') || *s == '-' ||
              *s == '_' || *s == '.'))
            *s = '_';
}

/* Node of every rank from the launcher's PMI_process_mapping, MPICH's
 * "(vector,(node,nodes,ranks),...)": each block gives `ranks` consecutive
 * ranks to each of `nodes` nodes from `node` on; the list repeats until
 * every rank has a node. 0, or -1 when absent or not understood. One get,
 * whatever the job's size: no rank's card is read at start-up. */
static int plx_runtime_nodes_from_mapping(void)
{
    char val[PLX_PM_MAX_VAL];
    if (plx_pm_get("PMI_process_mapping", val, sizeof val) != PLX_OK)
        return -1;
    int blocks[64][3], nb = 0;
    const char *s = strstr(val, "vector");
    if (!s)
        return -1;
    s += 6;
    while (nb < 64 && (s = strchr(s, '(')) != NULL) {
        if (sscanf(s, "(%d,%d,%d)", &blocks[nb][0], &blocks[nb][1], &blocks[nb][2]) != 3 || blocks[nb][0] < 0 ||
            blocks[nb][1] < 1 || blocks[nb][2] < 1)
            return -1;
        nb++;
        s++;
    }
    if (nb == 0)
        return -1;
    int r = 0;
    while (r < plx_procs.n)
        for (int b = 0; b < nb && r < plx_procs.n; b++)
            for (int k = 0; k < blocks[b][1] && r < plx_procs.n; k++)
                for (int c = 0; c < blocks[b][2] && r < plx_procs.n; c++)
                    plx_procs.p[r++].node_id = blocks[b][0] + k;
    return 0;
}

/* My node and my node's ranks, from every rank's node_id. */
static void plx_runtime_local_ranks(void)
{
    int n = plx_procs.n;
    plx_procs.my_node = plx_procs.p[plx_procs.my_lpid].node_id;
    plx_procs.local_lpids = plx_malloc((size_t)n * sizeof(int));
    plx_procs.nlocal = 0;
    for (int r = 0; r < n; r++) {
        plx_procs.p[r].local_index = -1;
        if (plx_procs.p[r].node_id == plx_procs.my_node) {
            if (r == plx_procs.my_lpid)
                plx_procs.my_local_index = plx_procs.nlocal;
            plx_procs.p[r].local_index = plx_procs.nlocal;
            plx_procs.local_lpids[plx_procs.nlocal++] = r;
        }
    }
}

void plx_runtime_node_name(char *node, size_t len)
{
    if (plx_config.node_name[0])
        snprintf(node, len, "%s", plx_config.node_name);
    else
        snprintf(node, len, "%s", plx_rt.hostname);
    plx_sanitize(node);
}

static plx_status_t plx_runtime_exchange_cards(void)
{
    char key[PLX_PM_MAX_KEY], val[PLX_PM_MAX_VAL];
    char node[256];
    plx_runtime_node_name(node, sizeof node);
    snprintf(key, sizeof key, "c%d", plx_procs.my_lpid);
    snprintf(val, sizeof val, "%.255s,%d", node, (int)getpid());
    plx_status_t st = plx_pm_put(key, val);
    if (st == PLX_OK)
        st = plx_pm_fence();
    if (st != PLX_OK)
        return st;

    int n = plx_procs.n;
    plx_procs.p = plx_calloc((size_t)n, sizeof *plx_procs.p);
    plx_procs.p[plx_procs.my_lpid].pid = getpid();
    for (int r = 0; r < n; r++)
        plx_procs.p[r].wrank = r;
    /* The launcher's map is enough unless node names are set by hand
     * (PLEXUS_NODE_NAME: set it on every rank, or on none). */
    if (!plx_config.node_name[0] && plx_runtime_nodes_from_mapping() == 0) {
        plx_runtime_local_ranks();
        plx_debug(1, "nodes from the launcher's PMI_process_mapping: no business card read");
        return PLX_OK;
    }
    plx_debug(1, "nodes from every rank's business card (%s)",
              plx_config.node_name[0] ? "PLEXUS_NODE_NAME is set" : "no usable PMI_process_mapping");
    char (*names)[256] = plx_calloc((size_t)n, 256);
    int nnodes = 0;
    int *node_first = plx_calloc((size_t)n, sizeof(int));   /* a member of each node */
    for (int r = 0; r < n; r++) {
        snprintf(key, sizeof key, "c%d", r);
        if (r == plx_procs.my_lpid)
            snprintf(val, sizeof val, "%.255s,%d", node, (int)getpid());
        else if ((st = plx_pm_get(key, val, sizeof val)) != PLX_OK) {
            plx_warn("no business card from rank %d", r);
            break;
        }
        char *comma = strrchr(val, ',');
        if (!comma) {
            st = PLX_ERR_PM;
            break;
        }
        *comma = 0;
        snprintf(names[r], 256, "%.255s", val);
        plx_procs.p[r].pid = (pid_t)atoi(comma + 1);
        int id = -1;
        for (int k = 0; k < nnodes; k++)
            if (!strcmp(names[node_first[k]], names[r]))
                id = k;
        if (id < 0) {
            id = nnodes;
            node_first[nnodes++] = r;
        }
        plx_procs.p[r].node_id = id;
    }
    if (st == PLX_OK)
        plx_runtime_local_ranks();
    free(names);
    free(node_first);
    return st;
}

plx_status_t plx_runtime_init(int *argc, char ***argv, int required, int *provided)
{
    char err[512];
    if (plx_config_load(err, sizeof err) != 0) {
        fprintf(stderr, "plexus: MPI_Init: %s\n", err);
        return PLX_ERR_ARG;
    }
    plx_log_debug = plx_config.debug;
    gethostname(plx_rt.hostname, sizeof plx_rt.hostname - 1);

    struct plx_pm_info pm;
    plx_status_t st = plx_pm_init(&pm);
    if (st != PLX_OK)
        return st;
    plx_rt.world_rank = plx_procs.my_lpid = plx_log_rank = pm.rank;
    plx_rt.world_size = plx_procs.n = pm.size;
    plx_rt.appnum = pm.appnum;
    plx_rt.universe_size = pm.universe_size > 0 ? pm.universe_size : pm.size;
    snprintf(plx_procs.kvsname, sizeof plx_procs.kvsname, "%s", pm.kvsname);
    plx_sanitize(plx_procs.kvsname);
    plx_runtime_test_point("pm");
    plx_procs.ntotal = plx_procs.n;
    plx_procs.my_job_key = plx_job_key(plx_procs.kvsname);

    /* the asynchronous progress thread polls beside the application's
     * threads: the library's thread-safe paths must be on */
    if (required == MPI_THREAD_MULTIPLE || plx_config.async_progress) {
        pthread_mutexattr_t a;
        pthread_mutexattr_init(&a);
        pthread_mutexattr_settype(&a, PTHREAD_MUTEX_RECURSIVE);
        pthread_mutex_init(&plx_lock.mutex, &a);
        pthread_mutexattr_destroy(&a);
        plx_lock.needed = 1;
    }
    plx_rt.thread_level = required < MPI_THREAD_SINGLE ? MPI_THREAD_SINGLE
                        : required > MPI_THREAD_MULTIPLE ? MPI_THREAD_MULTIPLE : required;
    if (provided)
        *provided = plx_rt.thread_level;
    plx_rt.main_thread = pthread_self();

    /* the rules are read, and the components publish their cards, before the card fence */
    if ((st = plx_route_init_early(pm.singleton)) != PLX_OK)
        return st;
    if ((st = plx_runtime_exchange_cards()) != PLX_OK)
        return st;
    plx_runtime_test_point("cards");
    plx_match_init();
    if ((st = plx_route_init()) != PLX_OK)
        return st;
    plx_runtime_test_point("route");
    if ((st = plx_pt2pt_init()) != PLX_OK)
        return st;

    plx_datatype_init_builtins();
    plx_errhandler_init_builtins();
    if ((st = plx_comm_init_builtins(plx_procs.my_lpid, plx_procs.n)) != PLX_OK)
        return st;
    plx_attr_init_builtins();
    plx_progress_init();
    plx_rt.initialized = 1;
    plx_progress_async_start();
    plx_runtime_test_point("init");
    plx_debug(1, "initialised: rank %d of %d, node %d with %d local ranks, job %s", plx_procs.my_lpid,
              plx_procs.n, plx_procs.my_node, plx_procs.nlocal, plx_procs.kvsname);
    return PLX_OK;
}

plx_status_t plx_runtime_finalize(void)
{
    /* Everyone stops sending before anyone tears down: after this barrier
     * no packet is in flight to us that anyone still waits on. */
    /* MPI_COMM_SELF's attributes are deleted first, while MPI still works
     * (MPI 3.1 section 8.7.1): libraries hook their clean-up there. */
    plx_comm_finalize_builtins();
    plx_status_t st = plx_coll_barrier(plx_comm_world, PLX_COLL_TAG_DEFAULT);
    plx_rt.finalized = 1;
    plx_progress_async_stop();
    plx_pt2pt_finalize();
    plx_route_finalize();
    plx_progress_finalize();
    plx_pm_finalize();
    for (int i = plx_procs.n; i < plx_procs.ntotal; i++)
        free(plx_procs.p[i].card);
    free(plx_procs.p);
    free(plx_procs.local_lpids);
    free(plx_procs.jobs);
    return st;
}
