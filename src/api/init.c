/* Environment: MPI_Init / MPI_Finalize and friends, time, versions. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "api/api.h"
#include "core/runtime.h"
#include "pm/pm.h"
#include "util/util.h"

#pragma weak MPI_Init = PMPI_Init
#pragma weak MPI_Init_thread = PMPI_Init_thread
#pragma weak MPI_Finalize = PMPI_Finalize
#pragma weak MPI_Initialized = PMPI_Initialized
#pragma weak MPI_Finalized = PMPI_Finalized
#pragma weak MPI_Abort = PMPI_Abort
#pragma weak MPI_Query_thread = PMPI_Query_thread
#pragma weak MPI_Is_thread_main = PMPI_Is_thread_main
#pragma weak MPI_Wtime = PMPI_Wtime
#pragma weak MPI_Wtick = PMPI_Wtick
#pragma weak MPI_Get_processor_name = PMPI_Get_processor_name
#pragma weak MPI_Get_version = PMPI_Get_version
#pragma weak MPI_Get_library_version = PMPI_Get_library_version
#pragma weak MPI_Pcontrol = PMPI_Pcontrol
#pragma weak MPI_Get_address = PMPI_Get_address
#pragma weak MPI_Aint_add = PMPI_Aint_add
#pragma weak MPI_Aint_diff = PMPI_Aint_diff

static int plx_init_common(int *argc, char ***argv, int required, int *provided, const char *fn)
{
    if (plx_rt.initialized && !plx_rt.finalized && plx_session_adopt_world(provided))
        return MPI_SUCCESS;     /* a session started the library: the world model joins it */
    if (plx_rt.initialized || plx_rt.finalized) {
        fprintf(stderr, "plexus: %s called twice (MPI can be initialised once per process)\n", fn);
        return MPI_ERR_OTHER;
    }
    plx_status_t st = plx_runtime_init(argc, argv, required, provided);
    if (st != PLX_OK) {
        fprintf(stderr, "plexus: %s failed on rank %d; the job cannot start (see the messages above)\n", fn,
                plx_rt.world_rank);
        plx_pm_abort(1, "MPI_Init failed");
    }
    plx_dyn_init_parent();      /* a spawned process: connect to the parents */
    return MPI_SUCCESS;
}

int PMPI_Init(int *argc, char ***argv)
{
    return plx_init_common(argc, argv, MPI_THREAD_SINGLE, NULL, "MPI_Init");
}

int PMPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
    return plx_init_common(argc, argv, required, provided, "MPI_Init_thread");
}

int PMPI_Finalize(void)
{
    plx_api_check_init("MPI_Finalize");
    plx_api_lock();
    plx_status_t st = plx_runtime_finalize();
    plx_api_unlock();
    return st == PLX_OK ? MPI_SUCCESS : MPI_ERR_OTHER;
}

int PMPI_Initialized(int *flag)
{
    if (!flag)
        return MPI_ERR_ARG;
    *flag = plx_rt.initialized;
    return MPI_SUCCESS;
}

int PMPI_Finalized(int *flag)
{
    if (!flag)
        return MPI_ERR_ARG;
    *flag = plx_rt.finalized;
    return MPI_SUCCESS;
}

int PMPI_Abort(MPI_Comm comm, int errorcode)
{
    char msg[128];
    snprintf(msg, sizeof msg, "rank %d called MPI_Abort with error code %d", plx_rt.world_rank, errorcode);
    fflush(stdout);     /* the launcher (or the PMI client without one) prints msg */
    plx_pm_abort(errorcode, msg);
}

int PMPI_Query_thread(int *provided)
{
    if (!provided)
        return MPI_ERR_ARG;
    *provided = plx_rt.thread_level;
    return MPI_SUCCESS;
}

int PMPI_Is_thread_main(int *flag)
{
    if (!flag)
        return MPI_ERR_ARG;
    *flag = pthread_equal(pthread_self(), plx_rt.main_thread);
    return MPI_SUCCESS;
}

double PMPI_Wtime(void)
{
    return plx_util_now();
}

double PMPI_Wtick(void)
{
    struct timespec ts;
    clock_getres(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int PMPI_Get_processor_name(char *name, int *resultlen)
{
    if (!name || !resultlen)
        return plx_api_err(NULL, "MPI_Get_processor_name", MPI_ERR_ARG, "argument '%s' is NULL",
                           name ? "resultlen" : "name");
    if (!plx_rt.hostname[0])
        gethostname(plx_rt.hostname, sizeof plx_rt.hostname - 1);
    snprintf(name, MPI_MAX_PROCESSOR_NAME, "%s", plx_rt.hostname);
    *resultlen = (int)strlen(name);
    return MPI_SUCCESS;
}

int PMPI_Get_version(int *version, int *subversion)
{
    if (!version || !subversion)
        return MPI_ERR_ARG;
    *version = MPI_VERSION;
    *subversion = MPI_SUBVERSION;
    return MPI_SUCCESS;
}

int PMPI_Get_library_version(char *version, int *resultlen)
{
    if (!version || !resultlen)
        return MPI_ERR_ARG;
    snprintf(version, MPI_MAX_LIBRARY_VERSION_STRING, "Plexus %s (MPI %d.%d, MPICH ABI), %s build",
             PLX_VERSION_STRING, MPI_VERSION, MPI_SUBVERSION, PLX_BUILD_TYPE);
    *resultlen = (int)strlen(version);
    return MPI_SUCCESS;
}

int PMPI_Pcontrol(const int level, ...)
{
    (void)level;
    return MPI_SUCCESS;
}

int PMPI_Get_address(const void *location, MPI_Aint *address)
{
    if (!address)
        return plx_api_null_arg(NULL, "MPI_Get_address", "address");
    *address = (MPI_Aint)(uintptr_t)location;
    return MPI_SUCCESS;
}

MPI_Aint PMPI_Aint_add(MPI_Aint base, MPI_Aint disp)
{
    return (MPI_Aint)((uintptr_t)base + (uintptr_t)disp);
}

MPI_Aint PMPI_Aint_diff(MPI_Aint addr1, MPI_Aint addr2)
{
    return (MPI_Aint)((uintptr_t)addr1 - (uintptr_t)addr2);
}
