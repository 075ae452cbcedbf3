/*
 * The MPI tools interface (MPI_T): control variables, performance variables,
 * categories.
 *
 * Control variables are the rows of the PLEXUS_* settings table
 * (core/config.c), in its order, the same table plexus-info prints: name,
 * help as description, int / bool as MPI_INT, sizes as MPI_UNSIGNED_LONG,
 * strings as MPI_CHAR. A row's `live` field gives the scope: settings read
 * once at MPI_Init are MPI_T_SCOPE_READONLY (set them in the environment);
 * the few read where they are used can be written after MPI_Init (LOCAL, or
 * ALL_EQ when every process must agree). They can also be written before
 * MPI_Init: the value is then put in the process's environment too, which
 * MPI_Init reads again (session 7); after MPI_Finalize a write is refused
 * (MPI_T_ERR_CVAR_SET_NOT_NOW).
 *
 * Performance variables, after MPI_Init (their number grows then):
 *   plexus_unexpected_msgs       LEVEL, bound to a communicator: messages in
 *                                its unexpected queue now
 *   plexus_unexpected_msgs_all   LEVEL: the same over every communicator
 *   plexus_chan_<ch>_<counter>   COUNTER, one per open channel instance (shm,
 *                                tcp0, tcp1, ...) and counter (sent_packets,
 *                                sent_bytes, resent_bytes, recv_packets,
 *                                recv_bytes): an array with one element per
 *                                world rank, what PLEXUS_STATS prints. They
 *                                count while started in a session (each
 *                                handle from its own start), can be reset
 *                                and written.
 *
 * Categories: "plexus" holds the others; control variables fall into one by
 * their name (PLEXUS_SHM_* in plexus_shm, ...), the counters into
 * plexus_channels, the queue lengths into plexus_pt2pt.
 *
 * Events: one type (plexus_unexpected_msg) and one source (plexus_clock),
 * see the events section below.
 *
 * MPI_T calls return their error codes and never call an error handler;
 * they work before MPI_Init and after MPI_Finalize where the standard asks.
 */
#include <mpi.h>
#include <stddef.h>
#include <time.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "api/api.h"
#include "core/config.h"
#include "pt2pt/match.h"
#include "pt2pt/pt2pt.h"
#include "route/route.h"

#pragma weak MPI_T_init_thread = PMPI_T_init_thread
#pragma weak MPI_T_finalize = PMPI_T_finalize
#pragma weak MPI_T_enum_get_info = PMPI_T_enum_get_info
#pragma weak MPI_T_enum_get_item = PMPI_T_enum_get_item
#pragma weak MPI_T_cvar_get_num = PMPI_T_cvar_get_num
#pragma weak MPI_T_cvar_get_info = PMPI_T_cvar_get_info
#pragma weak MPI_T_cvar_get_index = PMPI_T_cvar_get_index
#pragma weak MPI_T_cvar_handle_alloc = PMPI_T_cvar_handle_alloc
#pragma weak MPI_T_cvar_handle_free = PMPI_T_cvar_handle_free
#pragma weak MPI_T_cvar_read = PMPI_T_cvar_read
#pragma weak MPI_T_cvar_write = PMPI_T_cvar_write
#pragma weak MPI_T_pvar_get_num = PMPI_T_pvar_get_num
#pragma weak MPI_T_pvar_get_info = PMPI_T_pvar_get_info
#pragma weak MPI_T_pvar_get_index = PMPI_T_pvar_get_index
#pragma weak MPI_T_pvar_session_create = PMPI_T_pvar_session_create
#pragma weak MPI_T_pvar_session_free = PMPI_T_pvar_session_free
#pragma weak MPI_T_pvar_handle_alloc = PMPI_T_pvar_handle_alloc
#pragma weak MPI_T_pvar_handle_free = PMPI_T_pvar_handle_free
#pragma weak MPI_T_pvar_start = PMPI_T_pvar_start
#pragma weak MPI_T_pvar_stop = PMPI_T_pvar_stop
#pragma weak MPI_T_pvar_read = PMPI_T_pvar_read
#pragma weak MPI_T_pvar_write = PMPI_T_pvar_write
#pragma weak MPI_T_pvar_reset = PMPI_T_pvar_reset
#pragma weak MPI_T_pvar_readreset = PMPI_T_pvar_readreset
#pragma weak MPI_T_category_get_num = PMPI_T_category_get_num
#pragma weak MPI_T_category_get_info = PMPI_T_category_get_info
#pragma weak MPI_T_category_get_index = PMPI_T_category_get_index
#pragma weak MPI_T_category_get_cvars = PMPI_T_category_get_cvars
#pragma weak MPI_T_category_get_pvars = PMPI_T_category_get_pvars
#pragma weak MPI_T_category_get_categories = PMPI_T_category_get_categories
#pragma weak MPI_T_category_changed = PMPI_T_category_changed
#pragma weak MPI_T_category_get_num_events = PMPI_T_category_get_num_events
#pragma weak MPI_T_category_get_events = PMPI_T_category_get_events
#pragma weak MPI_T_event_get_num = PMPI_T_event_get_num
#pragma weak MPI_T_source_get_num = PMPI_T_source_get_num
#pragma weak MPI_T_event_get_info = PMPI_T_event_get_info
#pragma weak MPI_T_event_get_index = PMPI_T_event_get_index
#pragma weak MPI_T_event_handle_alloc = PMPI_T_event_handle_alloc
#pragma weak MPI_T_event_handle_free = PMPI_T_event_handle_free
#pragma weak MPI_T_event_register_callback = PMPI_T_event_register_callback
#pragma weak MPI_T_event_read = PMPI_T_event_read
#pragma weak MPI_T_event_copy = PMPI_T_event_copy
#pragma weak MPI_T_event_get_timestamp = PMPI_T_event_get_timestamp
#pragma weak MPI_T_event_get_source = PMPI_T_event_get_source
#pragma weak MPI_T_source_get_info = PMPI_T_source_get_info
#pragma weak MPI_T_source_get_timestamp = PMPI_T_source_get_timestamp

struct plx_t_cvar_handle {
    int idx;
};

struct plx_t_pvar_handle {
    struct plx_t_pvar_handle *next;     /* in its session */
    int idx, count;
    struct plx_comm *comm;      /* bound communicator (referenced), or NULL */
    int running;
    uint64_t *base, *acc;       /* counters: value at the last start, counted before it */
};

struct plx_t_pvar_session {
    struct plx_t_pvar_handle *handles;
};

static struct plx_t_pvar_handle plx_t_all_handles;
MPI_T_pvar_handle const MPI_T_PVAR_ALL_HANDLES = &plx_t_all_handles;

static struct {
    int refs;                   /* MPI_T_init_thread calls not yet finalized */
    int config_loaded;          /* by MPI_T itself, before MPI_Init */
} plx_t;

/* --- strings, categories ------------------------------------------------- */

/* MPI_T's string convention: copy at most *len - 1 characters and a NUL when
 * dst and *len are given; *len becomes the length needed, NUL included. */
static void plx_t_str(const char *src, char *dst, int *len)
{
    if (!len)
        return;
    size_t n = strlen(src);
    if (dst && *len > 0) {
        size_t k = n < (size_t)*len - 1 ? n : (size_t)*len - 1;
        memcpy(dst, src, k);
        dst[k] = 0;
    }
    *len = (int)n + 1;
}

enum {
    PLX_CAT_ROOT, PLX_CAT_GENERAL, PLX_CAT_SHM, PLX_CAT_TCP, PLX_CAT_ROUTE, PLX_CAT_COLL, PLX_CAT_PROGRESS,
    PLX_CAT_IO, PLX_CAT_CHANNELS, PLX_CAT_PT2PT, PLX_NCATS
};

static const struct {
    const char *name, *desc;
} plx_t_cats[PLX_NCATS] = {
    [PLX_CAT_ROOT] = { "plexus", "Every variable of Plexus, in the categories below" },
    [PLX_CAT_GENERAL] = { "plexus_general", "Transports in use, interfaces, debugging, process manager" },
    [PLX_CAT_SHM] = { "plexus_shm", "Shared-memory transport" },
    [PLX_CAT_TCP] = { "plexus_tcp", "TCP transport and its rails" },
    [PLX_CAT_ROUTE] = { "plexus_route", "Routing over channels: rules, striping, extra rails" },
    [PLX_CAT_COLL] = { "plexus_coll", "Collective algorithms" },
    [PLX_CAT_PROGRESS] = { "plexus_progress", "Progress engine: how a blocked wait spins, yields and sleeps" },
    [PLX_CAT_IO] = { "plexus_io", "MPI-IO defaults" },
    [PLX_CAT_CHANNELS] = { "plexus_channels", "Per-channel statistics: packets and bytes exchanged with each "
                           "world rank over each transport instance (what PLEXUS_STATS prints)" },
    [PLX_CAT_PT2PT] = { "plexus_pt2pt", "Point-to-point matching: unexpected-message queues" },
};

/* A setting's category, from its name. */
static int plx_t_cvar_cat(int i)
{
    static const struct {
        const char *prefix;
        int cat;
    } map[] = { { "PLEXUS_SHM_", PLX_CAT_SHM }, { "PLEXUS_TCP_", PLX_CAT_TCP }, { "PLEXUS_ROUTE", PLX_CAT_ROUTE },
                { "PLEXUS_COLL_", PLX_CAT_COLL }, { "PLEXUS_SPIN_", PLX_CAT_PROGRESS },
                { "PLEXUS_YIELD_", PLX_CAT_PROGRESS }, { "PLEXUS_IO_", PLX_CAT_IO } };
    for (size_t k = 0; k < sizeof map / sizeof map[0]; k++)
        if (!strncmp(plx_settings[i].name, map[k].prefix, strlen(map[k].prefix)))
            return map[k].cat;
    return PLX_CAT_GENERAL;
}

/* --- init, finalize, enums ------------------------------------------------ */

int PMPI_T_init_thread(int required, int *provided)
{
    plx_api_lock();
    if (!plx_rt.initialized && !plx_t.config_loaded) {
        char err[512];
        if (plx_config_load(err, sizeof err) != 0) {
            plx_api_unlock();
            return MPI_T_ERR_CANNOT_INIT;
        }
        plx_t.config_loaded = 1;
    }
    plx_t.refs++;
    plx_api_unlock();
    if (provided)
        *provided = required < MPI_THREAD_SINGLE ? MPI_THREAD_SINGLE
                  : required > MPI_THREAD_MULTIPLE ? MPI_THREAD_MULTIPLE : required;
    return MPI_SUCCESS;
}

int PMPI_T_finalize(void)
{
    plx_api_lock();
    int rc = plx_t.refs > 0 ? MPI_SUCCESS : MPI_T_ERR_NOT_INITIALIZED;
    if (plx_t.refs > 0)
        plx_t.refs--;
    plx_api_unlock();
    return rc;
}

#define PLX_T_CHECK()                                                                              \
    do {                                                                                           \
        if (plx_t.refs <= 0)                                                                       \
            return MPI_T_ERR_NOT_INITIALIZED;                                                      \
    } while (0)

/* No variable of Plexus has an enumeration type: no MPI_T_enum exists. */
int PMPI_T_enum_get_info(MPI_T_enum enumtype, int *num, char *name, int *name_len)
{
    (void)enumtype, (void)num, (void)name, (void)name_len;
    PLX_T_CHECK();
    return MPI_T_ERR_INVALID_HANDLE;
}

int PMPI_T_enum_get_item(MPI_T_enum enumtype, int indx, int *value, char *name, int *name_len)
{
    (void)enumtype, (void)indx, (void)value, (void)name, (void)name_len;
    PLX_T_CHECK();
    return MPI_T_ERR_INVALID_HANDLE;
}

/* --- control variables ----------------------------------------------------- */

int PMPI_T_cvar_get_num(int *num_cvar)
{
    PLX_T_CHECK();
    if (!num_cvar)
        return MPI_T_ERR_INVALID;
    *num_cvar = (int)plx_nsettings;
    return MPI_SUCCESS;
}

static MPI_Datatype plx_t_cvar_type(const struct plx_setting *s)
{
    switch (s->type) {
    case PLX_SET_SIZE:
        return MPI_UNSIGNED_LONG;   /* size_t */
    case PLX_SET_STRING:
        return MPI_CHAR;
    default:
        return MPI_INT;
    }
}

static int plx_t_cvar_scope(const struct plx_setting *s)
{
    switch (s->live) {
    case PLX_LIVE_LOCAL:
        return MPI_T_SCOPE_LOCAL;
    case PLX_LIVE_ALL_EQ:
        return MPI_T_SCOPE_ALL_EQ;
    default:
        return MPI_T_SCOPE_READONLY;
    }
}

int PMPI_T_cvar_get_info(int cvar_index, char *name, int *name_len, int *verbosity, MPI_Datatype *datatype,
                         MPI_T_enum *enumtype, char *desc, int *desc_len, int *bind, int *scope)
{
    PLX_T_CHECK();
    if (cvar_index < 0 || (size_t)cvar_index >= plx_nsettings)
        return MPI_T_ERR_INVALID_INDEX;
    const struct plx_setting *s = &plx_settings[cvar_index];
    plx_t_str(s->name, name, name_len);
    plx_t_str(s->help, desc, desc_len);
    if (verbosity)
        *verbosity = plx_t_cvar_cat(cvar_index) == PLX_CAT_GENERAL ? MPI_T_VERBOSITY_USER_BASIC
                                                                    : MPI_T_VERBOSITY_TUNER_BASIC;
    if (datatype)
        *datatype = plx_t_cvar_type(s);
    if (enumtype)
        *enumtype = MPI_T_ENUM_NULL;
    if (bind)
        *bind = MPI_T_BIND_NO_OBJECT;
    if (scope)
        *scope = plx_t_cvar_scope(s);
    return MPI_SUCCESS;
}

int PMPI_T_cvar_get_index(const char *name, int *cvar_index)
{
    PLX_T_CHECK();
    if (!name || !cvar_index)
        return MPI_T_ERR_INVALID;
    for (size_t i = 0; i < plx_nsettings; i++)
        if (!strcmp(plx_settings[i].name, name)) {
            *cvar_index = (int)i;
            return MPI_SUCCESS;
        }
    return MPI_T_ERR_INVALID_NAME;
}

int PMPI_T_cvar_handle_alloc(int cvar_index, void *obj_handle, MPI_T_cvar_handle *handle, int *count)
{
    (void)obj_handle;           /* every control variable is bound to no object */
    PLX_T_CHECK();
    if (cvar_index < 0 || (size_t)cvar_index >= plx_nsettings)
        return MPI_T_ERR_INVALID_INDEX;
    if (!handle || !count)
        return MPI_T_ERR_INVALID;
    struct plx_t_cvar_handle *h = malloc(sizeof *h);
    if (!h)
        return MPI_T_ERR_MEMORY;
    h->idx = cvar_index;
    const struct plx_setting *s = &plx_settings[cvar_index];
    *count = s->type == PLX_SET_STRING ? (int)s->len : 1;
    *handle = h;
    return MPI_SUCCESS;
}

int PMPI_T_cvar_handle_free(MPI_T_cvar_handle *handle)
{
    PLX_T_CHECK();
    if (!handle || !*handle)
        return MPI_T_ERR_INVALID_HANDLE;
    free(*handle);
    *handle = MPI_T_CVAR_HANDLE_NULL;
    return MPI_SUCCESS;
}

int PMPI_T_cvar_read(MPI_T_cvar_handle handle, void *buf)
{
    PLX_T_CHECK();
    if (!handle)
        return MPI_T_ERR_INVALID_HANDLE;
    if (!buf)
        return MPI_T_ERR_INVALID;
    const struct plx_setting *s = &plx_settings[handle->idx];
    const void *field = (const char *)&plx_config + s->offset;
    plx_api_lock();
    switch (s->type) {
    case PLX_SET_SIZE:
        *(unsigned long *)buf = (unsigned long)*(const size_t *)field;
        break;
    case PLX_SET_STRING:
        memcpy(buf, field, s->len);
        break;
    default:
        *(int *)buf = *(const int *)field;
        break;
    }
    plx_api_unlock();
    return MPI_SUCCESS;
}

int PMPI_T_cvar_write(MPI_T_cvar_handle handle, const void *buf)
{
    PLX_T_CHECK();
    if (!handle)
        return MPI_T_ERR_INVALID_HANDLE;
    if (!buf)
        return MPI_T_ERR_INVALID;
    const struct plx_setting *s = &plx_settings[handle->idx];
    if (s->live == PLX_LIVE_NO)
        return MPI_T_ERR_CVAR_SET_NEVER;
    if (plx_rt.finalized)
        return MPI_T_ERR_CVAR_SET_NOT_NOW;
    void *field = (char *)&plx_config + s->offset;
    int rc = MPI_SUCCESS;
    plx_api_lock();
    switch (s->type) {
    case PLX_SET_SIZE:
        *(size_t *)field = (size_t) * (const unsigned long *)buf;
        break;
    case PLX_SET_BOOL:
        *(int *)field = *(const int *)buf != 0;
        break;
    case PLX_SET_INT:
        if (*(const int *)buf < 0)
            rc = MPI_T_ERR_INVALID;     /* every live int setting is a count */
        else
            *(int *)field = *(const int *)buf;
        break;
    case PLX_SET_STRING:
        rc = MPI_T_ERR_CVAR_SET_NEVER;  /* no live string setting exists */
        break;
    }
    /* Before MPI_Init, which loads the table from the environment again: the
     * value also goes into this process's environment, so MPI_Init reads it
     * back (and processes it spawns inherit it, as with a variable set by hand). */
    if (rc == MPI_SUCCESS && !plx_rt.initialized) {
        char v[64];
        plx_config_format(s, v, sizeof v);
        if (setenv(s->name, v, 1) != 0)
            rc = MPI_T_ERR_MEMORY;
    }
    plx_api_unlock();
    return rc;
}

/* --- performance variables ------------------------------------------------ */

enum { PLX_PV_UNEXP, PLX_PV_UNEXP_ALL, PLX_PV_NFIXED };

static const char *const plx_t_stat_names[PLX_ST_N] = {
    [PLX_ST_SENT_PKTS] = "sent_packets", [PLX_ST_SENT_BYTES] = "sent_bytes",
    [PLX_ST_RESENT_BYTES] = "resent_bytes", [PLX_ST_RECV_PKTS] = "recv_packets",
    [PLX_ST_RECV_BYTES] = "recv_bytes",
};

/* The channel instances whose counters exist now (0 outside MPI_Init..Finalize). */
static int plx_t_nifaces(void)
{
    return plx_rt.initialized && !plx_rt.finalized ? plx_route_nifaces : 0;
}

static int plx_t_npvars(void)
{
    return PLX_PV_NFIXED + plx_t_nifaces() * PLX_ST_N;
}

static void plx_t_pvar_name(int idx, char *buf, size_t len)
{
    if (idx == PLX_PV_UNEXP)
        snprintf(buf, len, "plexus_unexpected_msgs");
    else if (idx == PLX_PV_UNEXP_ALL)
        snprintf(buf, len, "plexus_unexpected_msgs_all");
    else
        snprintf(buf, len, "plexus_chan_%s_%s", plx_route_ifaces[(idx - PLX_PV_NFIXED) / PLX_ST_N]->name,
                 plx_t_stat_names[(idx - PLX_PV_NFIXED) % PLX_ST_N]);
}

int PMPI_T_pvar_get_num(int *num_pvar)
{
    PLX_T_CHECK();
    if (!num_pvar)
        return MPI_T_ERR_INVALID;
    *num_pvar = plx_t_npvars();
    return MPI_SUCCESS;
}

int PMPI_T_pvar_get_info(int pvar_index, char *name, int *name_len, int *verbosity, int *var_class,
                         MPI_Datatype *datatype, MPI_T_enum *enumtype, char *desc, int *desc_len, int *bind,
                         int *readonly, int *continuous, int *atomic)
{
    PLX_T_CHECK();
    if (pvar_index < 0 || pvar_index >= plx_t_npvars())
        return MPI_T_ERR_INVALID_INDEX;
    char nm[96], ds[400];
    int counter = pvar_index >= PLX_PV_NFIXED;
    plx_t_pvar_name(pvar_index, nm, sizeof nm);
    if (pvar_index == PLX_PV_UNEXP)
        snprintf(ds, sizeof ds, "Messages that arrived on the communicator before a matching receive was "
                 "posted and wait in its unexpected queue now");
    else if (pvar_index == PLX_PV_UNEXP_ALL)
        snprintf(ds, sizeof ds, "Messages waiting in the unexpected queues of every communicator now");
    else
        snprintf(ds, sizeof ds, "%s over channel instance %s (%s), one element per world rank; counts "
                 "while started", plx_t_stat_names[(pvar_index - PLX_PV_NFIXED) % PLX_ST_N],
                 plx_route_ifaces[(pvar_index - PLX_PV_NFIXED) / PLX_ST_N]->name,
                 plx_route_ifaces[(pvar_index - PLX_PV_NFIXED) / PLX_ST_N]->detail);
    plx_t_str(nm, name, name_len);
    plx_t_str(ds, desc, desc_len);
    if (verbosity)
        *verbosity = counter ? MPI_T_VERBOSITY_USER_BASIC : MPI_T_VERBOSITY_TUNER_DETAIL;
    if (var_class)
        *var_class = counter ? MPI_T_PVAR_CLASS_COUNTER : MPI_T_PVAR_CLASS_LEVEL;
    if (datatype)
        *datatype = MPI_UNSIGNED_LONG_LONG;
    if (enumtype)
        *enumtype = MPI_T_ENUM_NULL;
    if (bind)
        *bind = pvar_index == PLX_PV_UNEXP ? MPI_T_BIND_MPI_COMM : MPI_T_BIND_NO_OBJECT;
    if (readonly)
        *readonly = !counter;
    if (continuous)
        *continuous = !counter;
    if (atomic)
        *atomic = 0;
    return MPI_SUCCESS;
}

int PMPI_T_pvar_get_index(const char *name, int var_class, int *pvar_index)
{
    PLX_T_CHECK();
    if (!name || !pvar_index)
        return MPI_T_ERR_INVALID;
    for (int i = 0; i < plx_t_npvars(); i++) {
        char nm[96];
        plx_t_pvar_name(i, nm, sizeof nm);
        int cls = i >= PLX_PV_NFIXED ? MPI_T_PVAR_CLASS_COUNTER : MPI_T_PVAR_CLASS_LEVEL;
        if (!strcmp(nm, name) && cls == var_class) {
            *pvar_index = i;
            return MPI_SUCCESS;
        }
    }
    return MPI_T_ERR_INVALID_NAME;
}

int PMPI_T_pvar_session_create(MPI_T_pvar_session *session)
{
    PLX_T_CHECK();
    if (!session)
        return MPI_T_ERR_INVALID;
    struct plx_t_pvar_session *s = calloc(1, sizeof *s);
    if (!s)
        return MPI_T_ERR_MEMORY;
    *session = s;
    return MPI_SUCCESS;
}

static void plx_t_handle_destroy(struct plx_t_pvar_handle *h)
{
    if (h->comm)
        plx_comm_release(h->comm);
    free(h->base);
    free(h->acc);
    free(h);
}

int PMPI_T_pvar_session_free(MPI_T_pvar_session *session)
{
    PLX_T_CHECK();
    if (!session || !*session)
        return MPI_T_ERR_INVALID_SESSION;
    plx_api_lock();
    struct plx_t_pvar_handle *h = (*session)->handles, *next;
    for (; h; h = next) {
        next = h->next;
        plx_t_handle_destroy(h);
    }
    plx_api_unlock();
    free(*session);
    *session = MPI_T_PVAR_SESSION_NULL;
    return MPI_SUCCESS;
}

/* The current values of h's variable into v[0..h->count). Caller holds the lock. */
static void plx_t_current(const struct plx_t_pvar_handle *h, uint64_t *v)
{
    if (h->idx == PLX_PV_UNEXP) {
        v[0] = plx_match_q(h->comm->context_id)->nunexp;
    } else if (h->idx == PLX_PV_UNEXP_ALL) {
        uint64_t n = 0;
        for (int c = 0; c < PLX_MAX_CONTEXTS; c++)
            n += plx_match_q(c)->nunexp;
        v[0] = n;
    } else {
        int ifc = (h->idx - PLX_PV_NFIXED) / PLX_ST_N, st = (h->idx - PLX_PV_NFIXED) % PLX_ST_N;
        for (int r = 0; r < h->count; r++) {
            uint64_t out[PLX_ST_N];
            plx_pt2pt_chan_stats(r, ifc, out);
            v[r] = out[st];
        }
    }
}

int PMPI_T_pvar_handle_alloc(MPI_T_pvar_session session, int pvar_index, void *obj_handle,
                             MPI_T_pvar_handle *handle, int *count)
{
    PLX_T_CHECK();
    if (!session)
        return MPI_T_ERR_INVALID_SESSION;
    if (pvar_index < 0 || pvar_index >= plx_t_npvars())
        return MPI_T_ERR_INVALID_INDEX;
    if (!handle || !count)
        return MPI_T_ERR_INVALID;
    struct plx_comm *c = NULL;
    plx_api_lock();
    if (pvar_index == PLX_PV_UNEXP) {
        c = obj_handle ? plx_obj_lookup(&plx_comm_tab, *(MPI_Comm *)obj_handle) : NULL;
        if (!c) {
            plx_api_unlock();
            return MPI_T_ERR_INVALID_HANDLE;
        }
        plx_comm_addref(c);
    }
    struct plx_t_pvar_handle *h = calloc(1, sizeof *h);
    int n = pvar_index >= PLX_PV_NFIXED ? plx_procs.n : 1;
    h->idx = pvar_index;
    h->count = n;
    h->comm = c;
    h->base = calloc((size_t)n, sizeof *h->base);
    h->acc = calloc((size_t)n, sizeof *h->acc);
    h->next = session->handles;
    session->handles = h;
    plx_api_unlock();
    *handle = h;
    *count = n;
    return MPI_SUCCESS;
}

/* h, a handle of session (not MPI_T_PVAR_ALL_HANDLES), or NULL. */
static struct plx_t_pvar_handle *plx_t_find(MPI_T_pvar_session session, MPI_T_pvar_handle h)
{
    for (struct plx_t_pvar_handle *x = session->handles; x; x = x->next)
        if (x == h)
            return x;
    return NULL;
}

int PMPI_T_pvar_handle_free(MPI_T_pvar_session session, MPI_T_pvar_handle *handle)
{
    PLX_T_CHECK();
    if (!session)
        return MPI_T_ERR_INVALID_SESSION;
    if (!handle || !*handle || !plx_t_find(session, *handle))
        return MPI_T_ERR_INVALID_HANDLE;
    plx_api_lock();
    struct plx_t_pvar_handle **pp = &session->handles;
    while (*pp != *handle)
        pp = &(*pp)->next;
    *pp = (*handle)->next;
    plx_t_handle_destroy(*handle);
    plx_api_unlock();
    *handle = MPI_T_PVAR_HANDLE_NULL;
    return MPI_SUCCESS;
}

/* start (1) / stop (0) of one counter handle; caller holds the lock. */
static void plx_t_run(struct plx_t_pvar_handle *h, int start)
{
    if (h->running == start)
        return;
    uint64_t *cur = malloc((size_t)h->count * sizeof *cur);
    plx_t_current(h, cur);
    for (int i = 0; i < h->count; i++) {
        if (start)
            h->base[i] = cur[i];
        else
            h->acc[i] += cur[i] - h->base[i];
    }
    free(cur);
    h->running = start;
}

static int plx_t_startstop(MPI_T_pvar_session session, MPI_T_pvar_handle handle, int start)
{
    PLX_T_CHECK();
    if (!session)
        return MPI_T_ERR_INVALID_SESSION;
    plx_api_lock();
    int rc = MPI_SUCCESS;
    if (handle == MPI_T_PVAR_ALL_HANDLES) {
        for (struct plx_t_pvar_handle *h = session->handles; h; h = h->next)
            if (h->idx >= PLX_PV_NFIXED)
                plx_t_run(h, start);
    } else if (!plx_t_find(session, handle)) {
        rc = MPI_T_ERR_INVALID_HANDLE;
    } else if (handle->idx < PLX_PV_NFIXED) {
        rc = MPI_T_ERR_PVAR_NO_STARTSTOP;      /* continuous */
    } else {
        plx_t_run(handle, start);
    }
    plx_api_unlock();
    return rc;
}

int PMPI_T_pvar_start(MPI_T_pvar_session session, MPI_T_pvar_handle handle)
{
    return plx_t_startstop(session, handle, 1);
}

int PMPI_T_pvar_stop(MPI_T_pvar_session session, MPI_T_pvar_handle handle)
{
    return plx_t_startstop(session, handle, 0);
}

/* read (buf) and/or set (to set[], or 0 when set is NULL and reset) */
static int plx_t_access(MPI_T_pvar_session session, MPI_T_pvar_handle handle, void *buf, const void *set,
                        int reset)
{
    PLX_T_CHECK();
    if (!session)
        return MPI_T_ERR_INVALID_SESSION;
    if (handle == MPI_T_PVAR_ALL_HANDLES && reset && !buf) {   /* MPI_T_pvar_reset of them all */
        plx_api_lock();
        for (struct plx_t_pvar_handle *h = session->handles; h; h = h->next)
            if (h->idx >= PLX_PV_NFIXED) {
                plx_t_current(h, h->base);
                memset(h->acc, 0, (size_t)h->count * sizeof *h->acc);
            }
        plx_api_unlock();
        return MPI_SUCCESS;
    }
    if (!plx_t_find(session, handle))
        return MPI_T_ERR_INVALID_HANDLE;
    if ((set || reset) && handle->idx < PLX_PV_NFIXED)
        return MPI_T_ERR_PVAR_NO_WRITE;
    plx_api_lock();
    uint64_t *cur = malloc((size_t)handle->count * sizeof *cur);
    plx_t_current(handle, cur);
    if (buf) {
        uint64_t *out = buf;
        for (int i = 0; i < handle->count; i++)
            out[i] = handle->idx < PLX_PV_NFIXED ? cur[i]
                   : handle->acc[i] + (handle->running ? cur[i] - handle->base[i] : 0);
    }
    if (set || reset) {
        for (int i = 0; i < handle->count; i++) {
            handle->acc[i] = set ? ((const unsigned long long *)set)[i] : 0;
            handle->base[i] = cur[i];
        }
    }
    free(cur);
    plx_api_unlock();
    return MPI_SUCCESS;
}

int PMPI_T_pvar_read(MPI_T_pvar_session session, MPI_T_pvar_handle handle, void *buf)
{
    if (!buf)
        return MPI_T_ERR_INVALID;
    return plx_t_access(session, handle, buf, NULL, 0);
}

int PMPI_T_pvar_write(MPI_T_pvar_session session, MPI_T_pvar_handle handle, const void *buf)
{
    if (!buf)
        return MPI_T_ERR_INVALID;
    return plx_t_access(session, handle, NULL, buf, 0);
}

int PMPI_T_pvar_reset(MPI_T_pvar_session session, MPI_T_pvar_handle handle)
{
    return plx_t_access(session, handle, NULL, NULL, 1);
}

int PMPI_T_pvar_readreset(MPI_T_pvar_session session, MPI_T_pvar_handle handle, void *buf)
{
    if (!buf)
        return MPI_T_ERR_INVALID;
    return plx_t_access(session, handle, buf, NULL, 1);
}

/* --- categories ------------------------------------------------------------- */

static int plx_t_pvar_cat(int idx)
{
    return idx >= PLX_PV_NFIXED ? PLX_CAT_CHANNELS : PLX_CAT_PT2PT;
}

/* Members of category cat: control variables (kind 0), performance
 * variables (1) or subcategories (2); the first len indices into out
 * (when not NULL). Returns how many there are. */
static int plx_t_members(int cat, int kind, int len, int *out)
{
    int n = 0;
    int total = kind == 0 ? (int)plx_nsettings : kind == 1 ? plx_t_npvars() : PLX_NCATS;
    for (int i = 0; i < total; i++) {
        int in = kind == 0 ? plx_t_cvar_cat(i) == cat : kind == 1 ? plx_t_pvar_cat(i) == cat
                                                                  : cat == PLX_CAT_ROOT && i != PLX_CAT_ROOT;
        if (!in)
            continue;
        if (out && n < len)
            out[n] = i;
        n++;
    }
    return n;
}

int PMPI_T_category_get_num(int *num_cat)
{
    PLX_T_CHECK();
    if (!num_cat)
        return MPI_T_ERR_INVALID;
    *num_cat = PLX_NCATS;
    return MPI_SUCCESS;
}

int PMPI_T_category_get_info(int cat_index, char *name, int *name_len, char *desc, int *desc_len,
                             int *num_cvars, int *num_pvars, int *num_categories)
{
    PLX_T_CHECK();
    if (cat_index < 0 || cat_index >= PLX_NCATS)
        return MPI_T_ERR_INVALID_INDEX;
    plx_t_str(plx_t_cats[cat_index].name, name, name_len);
    plx_t_str(plx_t_cats[cat_index].desc, desc, desc_len);
    if (num_cvars)
        *num_cvars = plx_t_members(cat_index, 0, 0, NULL);
    if (num_pvars)
        *num_pvars = plx_t_members(cat_index, 1, 0, NULL);
    if (num_categories)
        *num_categories = plx_t_members(cat_index, 2, 0, NULL);
    return MPI_SUCCESS;
}

int PMPI_T_category_get_index(const char *name, int *cat_index)
{
    PLX_T_CHECK();
    if (!name || !cat_index)
        return MPI_T_ERR_INVALID;
    for (int i = 0; i < PLX_NCATS; i++)
        if (!strcmp(plx_t_cats[i].name, name)) {
            *cat_index = i;
            return MPI_SUCCESS;
        }
    return MPI_T_ERR_INVALID_NAME;
}

static int plx_t_cat_list(int cat_index, int kind, int len, int indices[])
{
    PLX_T_CHECK();
    if (cat_index < 0 || cat_index >= PLX_NCATS)
        return MPI_T_ERR_INVALID_INDEX;
    if (len < 0 || (len > 0 && !indices))
        return MPI_T_ERR_INVALID;
    plx_t_members(cat_index, kind, len, indices);
    return MPI_SUCCESS;
}

int PMPI_T_category_get_cvars(int cat_index, int len, int indices[])
{
    return plx_t_cat_list(cat_index, 0, len, indices);
}

int PMPI_T_category_get_pvars(int cat_index, int len, int indices[])
{
    return plx_t_cat_list(cat_index, 1, len, indices);
}

int PMPI_T_category_get_categories(int cat_index, int len, int indices[])
{
    return plx_t_cat_list(cat_index, 2, len, indices);
}

/* Categories change only as performance variables appear (MPI_Init) and go
 * (MPI_Finalize): their number is the update number. */
int PMPI_T_category_changed(int *update_number)
{
    PLX_T_CHECK();
    if (!update_number)
        return MPI_T_ERR_INVALID;
    *update_number = plx_t_npvars();
    return MPI_SUCCESS;
}

/* --- events (MPI 4.0) ------------------------------------------------------
 * One event type, plexus_unexpected_msg: a message arrived before a matching
 * receive was posted and joined an unexpected queue (pt2pt/match.c calls
 * up, with the library lock held, from the progress engine). Its elements:
 * source rank in the communicator, tag, sender's world rank (MPI_INT), bytes
 * (MPI_COUNT), in struct plx_t_unexp_ev's layout. One event source,
 * plexus_clock: CLOCK_MONOTONIC in nanoseconds, ordered.
 *
 * Callbacks run inside MPI, lock held: the caller may use only the MPI_T
 * event-instance calls there, so a callback is called when it was registered
 * with MPI_T_CB_REQUIRE_MPI_RESTRICTED or a stricter level (the least strict
 * such one per registration, with that level); a registration with only an
 * MPI_T_CB_REQUIRE_NONE callback gets nothing, and the event is counted as
 * dropped for it; its dropped handler (MPI_T_event_set_dropped_handler) is
 * told the count when the registration is freed, outside MPI. Hints (the
 * _get_info/_set_info calls): none are known; an empty info comes back. The
 * instance accessors take no lock. */

struct plx_t_unexp_ev {
    int src, tag, world;
    MPI_Count bytes;
};

struct plx_t_event_instance {
    int event, source;
    MPI_Count ts;
    struct plx_t_unexp_ev data;
};

struct plx_t_event_registration {
    int event;
    MPI_T_event_cb_function *cb[4];     /* by MPI_T_cb_safety */
    void *user[4];
    MPI_Count dropped;
    MPI_T_event_dropped_cb_function *dropped_fn;
    struct plx_t_event_registration *next;
};

static struct plx_t_event_registration *plx_t_regs;

#define PLX_T_NEVENTS 1
#define PLX_T_NSOURCES 1

static MPI_Count plx_t_clock(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (MPI_Count)t.tv_sec * 1000000000 + t.tv_nsec;
}

static void plx_t_unexp_hook(const struct plx_unexp *u)
{
    struct plx_t_event_instance ev = { .event = 0, .source = 0, .ts = plx_t_clock(),
                                       .data = { u->src, u->tag, u->lpid, (MPI_Count)u->size } };
    for (struct plx_t_event_registration *r = plx_t_regs; r; r = r->next) {
        int lvl = MPI_T_CB_REQUIRE_MPI_RESTRICTED;
        while (lvl <= MPI_T_CB_REQUIRE_ASYNC_SIGNAL_SAFE && !r->cb[lvl])
            lvl++;
        if (lvl > MPI_T_CB_REQUIRE_ASYNC_SIGNAL_SAFE) {
            if (r->cb[MPI_T_CB_REQUIRE_NONE])
                r->dropped++;
            continue;
        }
        r->cb[lvl](&ev, r, (MPI_T_cb_safety)lvl, r->user[lvl]);
    }
}

int PMPI_T_category_get_num_events(int cat_index, int *num_events)
{
    PLX_T_CHECK();
    if (cat_index < 0 || cat_index >= PLX_NCATS)
        return MPI_T_ERR_INVALID_INDEX;
    if (!num_events)
        return MPI_T_ERR_INVALID;
    *num_events = cat_index == PLX_CAT_PT2PT ? PLX_T_NEVENTS : 0;
    return MPI_SUCCESS;
}

int PMPI_T_category_get_events(int cat_index, int len, int indices[])
{
    PLX_T_CHECK();
    if (cat_index < 0 || cat_index >= PLX_NCATS)
        return MPI_T_ERR_INVALID_INDEX;
    if (cat_index == PLX_CAT_PT2PT && len > 0) {
        if (!indices)
            return MPI_T_ERR_INVALID;
        indices[0] = 0;
    }
    return MPI_SUCCESS;
}

int PMPI_T_event_get_num(int *num_events)
{
    PLX_T_CHECK();
    if (!num_events)
        return MPI_T_ERR_INVALID;
    *num_events = PLX_T_NEVENTS;
    return MPI_SUCCESS;
}

int PMPI_T_event_get_info(int event_index, char *name, int *name_len, int *verbosity,
                          MPI_Datatype array_of_datatypes[], MPI_Aint array_of_displacements[], int *num_elements,
                          MPI_T_enum *enumtype, MPI_Info *info, char *desc, int *desc_len, int *bind)
{
    PLX_T_CHECK();
    if (event_index < 0 || event_index >= PLX_T_NEVENTS)
        return MPI_T_ERR_INVALID_INDEX;
    static const MPI_Datatype types[4] = { MPI_INT, MPI_INT, MPI_INT, MPI_COUNT };
    const MPI_Aint disp[4] = { offsetof(struct plx_t_unexp_ev, src), offsetof(struct plx_t_unexp_ev, tag),
                               offsetof(struct plx_t_unexp_ev, world), offsetof(struct plx_t_unexp_ev, bytes) };
    plx_t_str("plexus_unexpected_msg", name, name_len);
    plx_t_str("A message arrived before a matching receive was posted and joined an unexpected queue. "
              "Elements: source rank in the communicator, tag, sender's world rank (MPI_INT), bytes (MPI_COUNT)",
              desc, desc_len);
    if (verbosity)
        *verbosity = MPI_T_VERBOSITY_USER_DETAIL;
    /* num_elements is IN/OUT: the arrays hold that many entries */
    if (num_elements) {
        int room = *num_elements;
        for (int i = 0; i < 4 && i < room; i++) {
            if (array_of_datatypes)
                array_of_datatypes[i] = types[i];
            if (array_of_displacements)
                array_of_displacements[i] = disp[i];
        }
        *num_elements = 4;
    }
    if (enumtype)
        *enumtype = MPI_T_ENUM_NULL;
    if (info && PMPI_Info_create(info) != MPI_SUCCESS)
        return MPI_T_ERR_MEMORY;
    if (bind)
        *bind = MPI_T_BIND_NO_OBJECT;
    return MPI_SUCCESS;
}

int PMPI_T_event_get_index(const char *name, int *event_index)
{
    PLX_T_CHECK();
    if (!name || !event_index)
        return MPI_T_ERR_INVALID;
    if (strcmp(name, "plexus_unexpected_msg"))
        return MPI_T_ERR_INVALID_NAME;
    *event_index = 0;
    return MPI_SUCCESS;
}

int PMPI_T_event_handle_alloc(int event_index, void *obj_handle, MPI_Info info,
                              MPI_T_event_registration *event_registration)
{
    (void)obj_handle, (void)info;   /* bound to no object; no hints */
    PLX_T_CHECK();
    if (event_index < 0 || event_index >= PLX_T_NEVENTS)
        return MPI_T_ERR_INVALID_INDEX;
    if (!event_registration)
        return MPI_T_ERR_INVALID;
    struct plx_t_event_registration *r = calloc(1, sizeof *r);
    if (!r)
        return MPI_T_ERR_MEMORY;
    r->event = event_index;
    plx_api_lock();
    r->next = plx_t_regs;
    plx_t_regs = r;
    plx_match_set_unexp_hook(plx_t_unexp_hook);
    plx_api_unlock();
    *event_registration = r;
    return MPI_SUCCESS;
}

int PMPI_T_event_register_callback(MPI_T_event_registration event_registration, MPI_T_cb_safety cb_safety,
                                   MPI_Info info, void *user_data, MPI_T_event_cb_function event_cb_function)
{
    (void)info;
    PLX_T_CHECK();
    if (!event_registration)
        return MPI_T_ERR_INVALID_HANDLE;
    if ((int)cb_safety < MPI_T_CB_REQUIRE_NONE || cb_safety > MPI_T_CB_REQUIRE_ASYNC_SIGNAL_SAFE)
        return MPI_T_ERR_INVALID;
    plx_api_lock();
    event_registration->cb[cb_safety] = event_cb_function;     /* NULL: unregisters that level */
    event_registration->user[cb_safety] = user_data;
    plx_api_unlock();
    return MPI_SUCCESS;
}

int PMPI_T_event_handle_free(MPI_T_event_registration event_registration, void *user_data,
                             MPI_T_event_free_cb_function free_cb_function)
{
    PLX_T_CHECK();
    if (!event_registration)
        return MPI_T_ERR_INVALID_HANDLE;
    plx_api_lock();
    struct plx_t_event_registration **pp = &plx_t_regs;
    while (*pp && *pp != event_registration)
        pp = &(*pp)->next;
    if (!*pp) {
        plx_api_unlock();
        return MPI_T_ERR_INVALID_HANDLE;
    }
    *pp = event_registration->next;
    if (!plx_t_regs)
        plx_match_set_unexp_hook(NULL);
    plx_api_unlock();
    /* no callback of it can run any more: the dropped handler (events that had
     * no callback it could take inside MPI) and the free callback run now,
     * outside MPI */
    if (event_registration->dropped && event_registration->dropped_fn)
        event_registration->dropped_fn(event_registration->dropped, event_registration, 0, MPI_T_CB_REQUIRE_NONE,
                                       event_registration->user[MPI_T_CB_REQUIRE_NONE]);
    if (free_cb_function)
        free_cb_function(event_registration, MPI_T_CB_REQUIRE_NONE, user_data);
    free(event_registration);
    return MPI_SUCCESS;
}

int PMPI_T_event_read(MPI_T_event_instance event_instance, int element_index, void *buffer)
{
    PLX_T_CHECK();
    if (!event_instance || !buffer)
        return MPI_T_ERR_INVALID;
    const struct plx_t_unexp_ev *d = &event_instance->data;
    switch (element_index) {
    case 0: memcpy(buffer, &d->src, sizeof d->src); break;
    case 1: memcpy(buffer, &d->tag, sizeof d->tag); break;
    case 2: memcpy(buffer, &d->world, sizeof d->world); break;
    case 3: memcpy(buffer, &d->bytes, sizeof d->bytes); break;
    default: return MPI_T_ERR_INVALID_INDEX;
    }
    return MPI_SUCCESS;
}

int PMPI_T_event_copy(MPI_T_event_instance event_instance, void *buffer)
{
    PLX_T_CHECK();
    if (!event_instance || !buffer)
        return MPI_T_ERR_INVALID;
    memcpy(buffer, &event_instance->data, sizeof event_instance->data);
    return MPI_SUCCESS;
}

int PMPI_T_event_get_timestamp(MPI_T_event_instance event_instance, MPI_Count *event_timestamp)
{
    PLX_T_CHECK();
    if (!event_instance || !event_timestamp)
        return MPI_T_ERR_INVALID;
    *event_timestamp = event_instance->ts;
    return MPI_SUCCESS;
}

int PMPI_T_event_get_source(MPI_T_event_instance event_instance, int *source_index)
{
    PLX_T_CHECK();
    if (!event_instance || !source_index)
        return MPI_T_ERR_INVALID;
    *source_index = event_instance->source;
    return MPI_SUCCESS;
}

int PMPI_T_source_get_num(int *num_sources)
{
    PLX_T_CHECK();
    if (!num_sources)
        return MPI_T_ERR_INVALID;
    *num_sources = PLX_T_NSOURCES;
    return MPI_SUCCESS;
}

int PMPI_T_source_get_info(int source_index, char *name, int *name_len, char *desc, int *desc_len,
                           MPI_T_source_order *ordering, MPI_Count *ticks_per_second, MPI_Count *max_ticks,
                           MPI_Info *info)
{
    PLX_T_CHECK();
    if (source_index < 0 || source_index >= PLX_T_NSOURCES)
        return MPI_T_ERR_INVALID_INDEX;
    plx_t_str("plexus_clock", name, name_len);
    plx_t_str("The process's monotonic clock (CLOCK_MONOTONIC) in nanoseconds; events are raised in order",
              desc, desc_len);
    if (ordering)
        *ordering = MPI_T_SOURCE_ORDERED;
    if (ticks_per_second)
        *ticks_per_second = 1000000000;
    if (max_ticks)
        *max_ticks = INT64_MAX;
    if (info && PMPI_Info_create(info) != MPI_SUCCESS)
        return MPI_T_ERR_MEMORY;
    return MPI_SUCCESS;
}

int PMPI_T_source_get_timestamp(int source_index, MPI_Count *timestamp)
{
    PLX_T_CHECK();
    if (source_index < 0 || source_index >= PLX_T_NSOURCES)
        return MPI_T_ERR_INVALID_INDEX;
    if (!timestamp)
        return MPI_T_ERR_INVALID;
    *timestamp = plx_t_clock();
    return MPI_SUCCESS;
}

/* --- registration hints and the dropped handler (events, continued) ------ */

#pragma weak MPI_T_event_handle_get_info = PMPI_T_event_handle_get_info
#pragma weak MPI_T_event_handle_set_info = PMPI_T_event_handle_set_info
#pragma weak MPI_T_event_callback_get_info = PMPI_T_event_callback_get_info
#pragma weak MPI_T_event_callback_set_info = PMPI_T_event_callback_set_info
#pragma weak MPI_T_event_set_dropped_handler = PMPI_T_event_set_dropped_handler

int PMPI_T_event_handle_get_info(MPI_T_event_registration event_registration, MPI_Info *info_used)
{
    PLX_T_CHECK();
    if (!event_registration)
        return MPI_T_ERR_INVALID_HANDLE;
    if (!info_used)
        return MPI_T_ERR_INVALID;
    return PMPI_Info_create(info_used) == MPI_SUCCESS ? MPI_SUCCESS : MPI_T_ERR_MEMORY;
}

int PMPI_T_event_handle_set_info(MPI_T_event_registration event_registration, MPI_Info info)
{
    (void)info;     /* no hint is known: all are ignored */
    PLX_T_CHECK();
    return event_registration ? MPI_SUCCESS : MPI_T_ERR_INVALID_HANDLE;
}

int PMPI_T_event_callback_get_info(MPI_T_event_registration event_registration, MPI_T_cb_safety cb_safety,
                                   MPI_Info *info_used)
{
    PLX_T_CHECK();
    if (!event_registration)
        return MPI_T_ERR_INVALID_HANDLE;
    if ((int)cb_safety < MPI_T_CB_REQUIRE_NONE || cb_safety > MPI_T_CB_REQUIRE_ASYNC_SIGNAL_SAFE || !info_used)
        return MPI_T_ERR_INVALID;
    return PMPI_Info_create(info_used) == MPI_SUCCESS ? MPI_SUCCESS : MPI_T_ERR_MEMORY;
}

int PMPI_T_event_callback_set_info(MPI_T_event_registration event_registration, MPI_T_cb_safety cb_safety,
                                   MPI_Info info)
{
    (void)info;
    PLX_T_CHECK();
    if (!event_registration)
        return MPI_T_ERR_INVALID_HANDLE;
    if ((int)cb_safety < MPI_T_CB_REQUIRE_NONE || cb_safety > MPI_T_CB_REQUIRE_ASYNC_SIGNAL_SAFE)
        return MPI_T_ERR_INVALID;
    return MPI_SUCCESS;
}

int PMPI_T_event_set_dropped_handler(MPI_T_event_registration event_registration,
                                     MPI_T_event_dropped_cb_function dropped_cb_function)
{
    PLX_T_CHECK();
    if (!event_registration)
        return MPI_T_ERR_INVALID_HANDLE;
    plx_api_lock();
    event_registration->dropped_fn = dropped_cb_function;
    plx_api_unlock();
    return MPI_SUCCESS;
}
