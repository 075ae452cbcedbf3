/*
 * PMIx client through libpmix (Debian's libpmix-dev; built when CMake finds
 * it: PLX_HAVE_PMIX). Serves srun --mpi=pmix, PRRTE's prterun and Open
 * MPI's mpirun, which start their tasks with PMIX_NAMESPACE, PMIX_RANK and
 * the address of a PMIx server in the environment.
 *
 * pm.h's key-value space maps onto PMIx_Put/Commit/Fence/Get. PMIx names a
 * value by its owner (namespace, rank), while pm.h's get names only the key:
 * a key that ends in decimal digits is read from the rank they name ("c3",
 * "tcp-3", "shm-ok-3"), any other from rank 0 (the TCP job secret), as
 * pm.h requires of keys. Gets are PMIX_OPTIONAL: a value not yet here
 * (before the fence that brings it) is "not found" at once, as with PMI-1,
 * instead of a request to the owner's server.
 */
#include <pmix.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pm/pm_impl.h"

static struct {
    pmix_proc_t me;
    int size;
} plx_px;

static const struct plx_pm_ops plx_pmix_ops;

static void plx_pmix_err(const char *what, pmix_status_t rc)
{
    fprintf(stderr, "plexus: rank %u: PMIx: %s failed: %s\n", plx_px.me.rank, what, PMIx_Error_string(rc));
}

/* A job-level number (size, appnum, universe) of this namespace. */
static int plx_pmix_job_u32(const char *key, uint32_t *out)
{
    pmix_proc_t wild;
    pmix_value_t *v = NULL;
    PMIX_PROC_LOAD(&wild, plx_px.me.nspace, PMIX_RANK_WILDCARD);
    if (PMIx_Get(&wild, key, NULL, 0, &v) != PMIX_SUCCESS || !v)
        return -1;
    int ok = 0;
    if (v->type == PMIX_UINT32)
        *out = v->data.uint32;
    else if (v->type == PMIX_INT)
        *out = (uint32_t)v->data.integer;
    else
        ok = -1;
    PMIX_VALUE_RELEASE(v);
    return ok;
}

plx_status_t plx_pmix_init(struct plx_pm_info *info_p, const struct plx_pm_ops **ops_p)
{
    pmix_status_t rc = PMIx_Init(&plx_px.me, NULL, 0);
    if (rc != PMIX_SUCCESS) {
        const char *ns = getenv("PMIX_NAMESPACE"), *rank = getenv("PMIX_RANK");
        fprintf(stderr,
                "plexus: PMI: PMIx_Init failed (%s): PMIX_NAMESPACE=%s PMIX_RANK=%s are set, but no PMIx "
                "server answers (was this process started by srun --mpi=pmix, prterun or mpirun, and is it "
                "still running?). Refusing to run as a singleton.\n",
                PMIx_Error_string(rc), ns ? ns : "(unset)", rank ? rank : "(unset)");
        return PLX_ERR_PM;
    }
    struct plx_pm_info info;
    memset(&info, 0, sizeof info);
    uint32_t size = 0, appnum = 0, univ = 0;
    if (plx_pmix_job_u32(PMIX_JOB_SIZE, &size) != 0 || size < 1 || plx_px.me.rank >= size) {
        fprintf(stderr, "plexus: PMI: the PMIx server gives no job size for namespace %s\n", plx_px.me.nspace);
        PMIx_Finalize(NULL, 0);
        return PLX_ERR_PM;
    }
    plx_px.size = (int)size;
    info.rank = (int)plx_px.me.rank;
    info.size = (int)size;
    info.appnum = plx_pmix_job_u32(PMIX_APPNUM, &appnum) == 0 ? (int)appnum : 0;
    info.universe_size = plx_pmix_job_u32(PMIX_UNIV_SIZE, &univ) == 0 && (int)univ > info.size ? (int)univ
                                                                                                 : info.size;
    snprintf(info.kvsname, sizeof info.kvsname, "%s", plx_px.me.nspace);
    *info_p = info;
    *ops_p = &plx_pmix_ops;
    return PLX_OK;
}

static plx_status_t plx_pmix_put(const char *key, const char *val)
{
    plx_status_t st = plx_pm_check_kv(key, val, PLX_PM_MAX_KEY, PLX_PM_MAX_VAL);
    if (st != PLX_OK)
        return st;
    pmix_value_t v;
    PMIX_VALUE_CONSTRUCT(&v);
    v.type = PMIX_STRING;
    v.data.string = (char *)val;
    pmix_status_t rc = PMIx_Put(PMIX_GLOBAL, key, &v);
    if (rc == PMIX_SUCCESS)
        rc = PMIx_Commit();
    if (rc != PMIX_SUCCESS) {
        plx_pmix_err("put", rc);
        return PLX_ERR_PM;
    }
    return PLX_OK;
}

static plx_status_t plx_pmix_fence(void)
{
    pmix_info_t info;
    bool collect = true;
    PMIX_INFO_CONSTRUCT(&info);
    PMIX_INFO_LOAD(&info, PMIX_COLLECT_DATA, &collect, PMIX_BOOL);
    pmix_status_t rc = PMIx_Fence(NULL, 0, &info, 1);
    PMIX_INFO_DESTRUCT(&info);
    if (rc != PMIX_SUCCESS) {
        plx_pmix_err("fence", rc);
        return PLX_ERR_PM;
    }
    return PLX_OK;
}

/* The owner of a key (see the top of this file). */
static uint32_t plx_pmix_owner(const char *key)
{
    size_t n = strlen(key), i = n;
    while (i > 0 && isdigit((unsigned char)key[i - 1]))
        i--;
    if (i == n)
        return 0;
    long r = strtol(key + i, NULL, 10);
    return r >= 0 && r < plx_px.size ? (uint32_t)r : 0;
}

/* PMI_process_mapping, which PMIx does not have, made from the job's node
 * map (PMIx_Resolve_nodes, then PMIx_Resolve_peers on each node: a local
 * look-up per node, no get per rank) as one (node,1,ranks) block per run of
 * consecutive ranks on one node. "Not found" when the map is incomplete or
 * needs more blocks than the reader takes (a cyclic placement): the caller
 * then reads every rank's card as before. */
#define PLX_PMIX_MAP_BLOCKS 64
static plx_status_t plx_pmix_mapping(char *val, size_t len)
{
    char *nodes = NULL;
    if (PMIx_Resolve_nodes(plx_px.me.nspace, &nodes) != PMIX_SUCCESS || !nodes)
        return PLX_ERR_ARG;
    int n = plx_px.size, id = 0, ok = 1;
    int *node_of = malloc((size_t)n * sizeof *node_of);
    if (!node_of) {
        free(nodes);
        return PLX_ERR_NOMEM;
    }
    for (int r = 0; r < n; r++)
        node_of[r] = -1;
    char *save = NULL;
    for (char *name = strtok_r(nodes, ",", &save); name && ok; name = strtok_r(NULL, ",", &save), id++) {
        pmix_proc_t *procs = NULL;
        size_t np = 0;
        if (PMIx_Resolve_peers(name, plx_px.me.nspace, &procs, &np) != PMIX_SUCCESS) {
            ok = 0;
            break;
        }
        for (size_t i = 0; i < np; i++)
            if (procs[i].rank < (pmix_rank_t)n)
                node_of[procs[i].rank] = id;
        if (procs)
            PMIX_PROC_FREE(procs, np);
    }
    free(nodes);
    size_t off = (size_t)snprintf(val, len, "(vector");
    int blocks = 0;
    for (int r = 0; ok && r < n;) {
        int e = r;
        while (e < n && node_of[e] == node_of[r])
            e++;
        if (node_of[r] < 0 || ++blocks > PLX_PMIX_MAP_BLOCKS)
            ok = 0;
        else
            off += (size_t)snprintf(val + off, off < len ? len - off : 0, ",(%d,1,%d)", node_of[r], e - r);
        if (off >= len)
            ok = 0;
        r = e;
    }
    free(node_of);
    if (!ok || off + 2 > len)
        return PLX_ERR_ARG;
    memcpy(val + off, ")", 2);
    return PLX_OK;
}

static plx_status_t plx_pmix_get(const char *key, char *val, size_t len)
{
    plx_status_t st = plx_pm_check_kv(key, NULL, PLX_PM_MAX_KEY, PLX_PM_MAX_VAL);
    if (st != PLX_OK)
        return st;
    if (strcmp(key, "PMI_process_mapping") == 0)
        return plx_pmix_mapping(val, len);
    pmix_proc_t owner;
    PMIX_PROC_LOAD(&owner, plx_px.me.nspace, plx_pmix_owner(key));
    pmix_info_t info;
    bool optional = true;
    PMIX_INFO_CONSTRUCT(&info);
    PMIX_INFO_LOAD(&info, PMIX_OPTIONAL, &optional, PMIX_BOOL);
    pmix_value_t *v = NULL;
    pmix_status_t rc = PMIx_Get(&owner, key, &info, 1, &v);
    PMIX_INFO_DESTRUCT(&info);
    if (rc != PMIX_SUCCESS || !v)
        return PLX_ERR_ARG;         /* not found: the caller decides */
    st = PLX_OK;
    if (v->type != PMIX_STRING || !v->data.string)
        st = PLX_ERR_ARG;
    else if (strlen(v->data.string) >= len)
        st = PLX_ERR_TRUNCATE;
    else
        memcpy(val, v->data.string, strlen(v->data.string) + 1);
    PMIX_VALUE_RELEASE(v);
    return st;
}

static void plx_pmix_abort(int code, const char *msg)
{
    fflush(stdout);
    fprintf(stderr, "plexus: rank %u aborted the job with exit code %d%s%s\n", plx_px.me.rank, code,
            msg && msg[0] ? ": " : "", msg ? msg : "");
    fflush(stderr);
    PMIx_Abort(code, msg ? msg : "", NULL, 0);
    _exit(code);
}

static plx_status_t plx_pmix_finalize(void)
{
    pmix_status_t rc = PMIx_Finalize(NULL, 0);
    if (rc != PMIX_SUCCESS) {
        plx_pmix_err("finalize", rc);
        return PLX_ERR_PM;
    }
    return PLX_OK;
}

static const struct plx_pm_ops plx_pmix_ops = {
    .name = "PMIx",
    .put = plx_pmix_put,
    .fence = plx_pmix_fence,
    .get = plx_pmix_get,
    .abort = plx_pmix_abort,
    .finalize = plx_pmix_finalize,
};
