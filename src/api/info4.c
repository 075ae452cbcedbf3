/*
 * MPI 4.0 info calls: MPI_Info_create_env (also before MPI_Init: the keys
 * of MPI_INFO_ENV for the given command line) and MPI_Info_get_string (the
 * value and its length in one call; a *buflen of 0 asks only the length).
 */
#include <stdlib.h>
#include <string.h>
#include "api/api.h"

#pragma weak MPI_Info_create_env = PMPI_Info_create_env
#pragma weak MPI_Info_get_string = PMPI_Info_get_string

static const char *plx_thread_level_name(int level)
{
    switch (level) {
    case MPI_THREAD_SINGLE:
        return "MPI_THREAD_SINGLE";
    case MPI_THREAD_FUNNELED:
        return "MPI_THREAD_FUNNELED";
    case MPI_THREAD_SERIALIZED:
        return "MPI_THREAD_SERIALIZED";
    default:
        return "MPI_THREAD_MULTIPLE";
    }
}

int PMPI_Info_create_env(int argc, char *argv[], MPI_Info *info)
{
    static const char fn[] = "MPI_Info_create_env";
    if (!info)
        return plx_api_null_arg(NULL, fn, "info");
    if (argc > 0 && !argv)
        return plx_api_null_arg(NULL, fn, "argv");
    plx_api_lock();
    int rc = MPI_SUCCESS;
    struct plx_info *in = plx_info_new();
    if (!in) {
        rc = plx_api_err(NULL, fn, MPI_ERR_NO_MEM, "cannot allocate an info handle");
    } else {
        int up = plx_rt.initialized && !plx_rt.finalized;
        int maxprocs = up ? plx_rt.world_size : 1;
        if (!up) {      /* before MPI_Init: what the launcher announced */
            const char *n = getenv("PMI_SIZE");
            if (n && atoi(n) > 0)
                maxprocs = atoi(n);
        }
        plx_info_fill_env(in, argc, argv, maxprocs, up ? plx_thread_level_name(plx_rt.thread_level) : NULL);
        *info = in->obj.handle;
    }
    plx_api_unlock();
    return rc;
}

int PMPI_Info_get_string(MPI_Info info, const char *key, int *buflen, char *value, int *flag)
{
    static const char fn[] = "MPI_Info_get_string";
    struct plx_info *in;
    int rc;
    plx_api_lock();
    if ((rc = plx_api_info(NULL, info, &in, fn, "info")))
        goto out;
    if (!key) {
        rc = plx_api_null_arg(NULL, fn, "key");
        goto out;
    }
    size_t klen = strnlen(key, MPI_MAX_INFO_KEY + 1);
    if (klen == 0 || klen > MPI_MAX_INFO_KEY) {
        rc = plx_api_err(NULL, fn, MPI_ERR_INFO_KEY, "argument 'key' is %s", klen ? "longer than MPI_MAX_INFO_KEY"
                                                                               : "the empty string");
        goto out;
    }
    if (!buflen || !flag) {
        rc = plx_api_null_arg(NULL, fn, !buflen ? "buflen" : "flag");
        goto out;
    }
    if (*buflen < 0) {
        rc = plx_api_err(NULL, fn, MPI_ERR_ARG, "argument '*buflen' is %d, must be >= 0", *buflen);
        goto out;
    }
    if (*buflen > 0 && !value) {
        rc = plx_api_null_arg(NULL, fn, "value");
        goto out;
    }
    const char *v = plx_info_lookup(in, key);
    *flag = v != NULL;
    if (v) {
        size_t n = strlen(v);
        if (*buflen > 0) {
            size_t k = n < (size_t)*buflen - 1 ? n : (size_t)*buflen - 1;
            memcpy(value, v, k);
            value[k] = '\0';
        }
        *buflen = (int)n + 1;
    }
out:
    plx_api_unlock();
    return rc;
}
