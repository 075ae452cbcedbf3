/*
 * MPI_Info_*: argument checks around core/info.c. Keys are 1..MPI_MAX_INFO_KEY
 * characters (MPI_ERR_INFO_KEY otherwise), values at most MPI_MAX_INFO_VAL
 * (MPI_ERR_INFO_VALUE). Info calls work before MPI_Init too (MPI 4.0: the
 * info of MPI_Session_init). MPI_INFO_ENV can be read and duplicated but not
 * changed or freed. Info errors are not tied to a communicator, so they go to
 * MPI_COMM_WORLD's error handler.
 */
#include <string.h>
#include "api/api.h"

static int plx_info_check_key(const char *key, const char *fn)
{
    if (!key)
        return plx_api_null_arg(NULL, fn, "key");
    size_t len = strnlen(key, MPI_MAX_INFO_KEY + 1);
    if (len == 0)
        return plx_api_err(NULL, fn, MPI_ERR_INFO_KEY, "argument 'key' is the empty string");
    if (len > MPI_MAX_INFO_KEY)
        return plx_api_err(NULL, fn, MPI_ERR_INFO_KEY, "argument 'key' (\"%.40s...\") is longer than MPI_MAX_INFO_KEY (%d)",
                           key, MPI_MAX_INFO_KEY);
    return MPI_SUCCESS;
}

static int plx_info_check_mutable(const struct plx_info *info, const char *fn)
{
    if (info->obj.builtin)
        return plx_api_err(NULL, fn, MPI_ERR_INFO, "argument 'info' is the predefined MPI_INFO_ENV, which cannot be changed");
    return MPI_SUCCESS;
}

static int plx_info_out(struct plx_info *info, MPI_Info *out, const char *fn)
{
    if (!info)
        return plx_api_err(NULL, fn, MPI_ERR_NO_MEM, "cannot allocate an info handle");
    *out = info->obj.handle;
    return MPI_SUCCESS;
}

#pragma weak MPI_Info_create = PMPI_Info_create
int PMPI_Info_create(MPI_Info *info)
{
    static const char fn[] = "MPI_Info_create";
    int rc;
    plx_api_lock();
    if (!info)          /* also before MPI_Init (MPI 4.0) */
        rc = plx_api_null_arg(NULL, fn, "info");
    else
        rc = plx_info_out(plx_info_new(), info, fn);
    plx_api_unlock();
    return rc;
}

#pragma weak MPI_Info_set = PMPI_Info_set
int PMPI_Info_set(MPI_Info info, const char *key, const char *value)
{
    static const char fn[] = "MPI_Info_set";
    struct plx_info *in;
    int rc;
    plx_api_lock();
    if ((rc = plx_api_info(NULL, info, &in, fn, "info")) || (rc = plx_info_check_mutable(in, fn)) ||
        (rc = plx_info_check_key(key, fn)))
        goto out;
    if (!value) {
        rc = plx_api_null_arg(NULL, fn, "value");
        goto out;
    }
    if (strnlen(value, MPI_MAX_INFO_VAL + 1) > MPI_MAX_INFO_VAL) {
        rc = plx_api_err(NULL, fn, MPI_ERR_INFO_VALUE, "argument 'value' for key \"%s\" is longer than MPI_MAX_INFO_VAL (%d)",
                         key, MPI_MAX_INFO_VAL);
        goto out;
    }
    plx_info_set(in, key, value);
out:
    plx_api_unlock();
    return rc;
}

#pragma weak MPI_Info_get = PMPI_Info_get
int PMPI_Info_get(MPI_Info info, const char *key, int valuelen, char *value, int *flag)
{
    static const char fn[] = "MPI_Info_get";
    struct plx_info *in;
    int rc;
    plx_api_lock();
    if ((rc = plx_api_info(NULL, info, &in, fn, "info")) || (rc = plx_info_check_key(key, fn)))
        goto out;
    if (valuelen < 0) {
        rc = plx_api_err(NULL, fn, MPI_ERR_ARG, "argument 'valuelen' is %d, must be >= 0", valuelen);
        goto out;
    }
    if (!value) {
        rc = plx_api_null_arg(NULL, fn, "value");
        goto out;
    }
    if (!flag) {
        rc = plx_api_null_arg(NULL, fn, "flag");
        goto out;
    }
    const char *v = plx_info_lookup(in, key);
    *flag = v != NULL;
    if (v) {
        /* value has room for valuelen characters plus the terminator */
        size_t n = strlen(v);
        if (n > (size_t)valuelen)
            n = (size_t)valuelen;
        memcpy(value, v, n);
        value[n] = '\0';
    }
out:
    plx_api_unlock();
    return rc;
}

#pragma weak MPI_Info_get_valuelen = PMPI_Info_get_valuelen
int PMPI_Info_get_valuelen(MPI_Info info, const char *key, int *valuelen, int *flag)
{
    static const char fn[] = "MPI_Info_get_valuelen";
    struct plx_info *in;
    int rc;
    plx_api_lock();
    if ((rc = plx_api_info(NULL, info, &in, fn, "info")) || (rc = plx_info_check_key(key, fn)))
        goto out;
    if (!valuelen) {
        rc = plx_api_null_arg(NULL, fn, "valuelen");
        goto out;
    }
    if (!flag) {
        rc = plx_api_null_arg(NULL, fn, "flag");
        goto out;
    }
    const char *v = plx_info_lookup(in, key);
    *flag = v != NULL;
    if (v)
        *valuelen = (int)strlen(v);
out:
    plx_api_unlock();
    return rc;
}

#pragma weak MPI_Info_delete = PMPI_Info_delete
int PMPI_Info_delete(MPI_Info info, const char *key)
{
    static const char fn[] = "MPI_Info_delete";
    struct plx_info *in;
    int rc;
    plx_api_lock();
    if ((rc = plx_api_info(NULL, info, &in, fn, "info")) || (rc = plx_info_check_mutable(in, fn)) ||
        (rc = plx_info_check_key(key, fn)))
        goto out;
    if (!plx_info_delete(in, key))
        rc = plx_api_err(NULL, fn, MPI_ERR_INFO_NOKEY, "key \"%s\" is not in the info object", key);
out:
    plx_api_unlock();
    return rc;
}

#pragma weak MPI_Info_dup = PMPI_Info_dup
int PMPI_Info_dup(MPI_Info info, MPI_Info *newinfo)
{
    static const char fn[] = "MPI_Info_dup";
    struct plx_info *in;
    int rc;
    plx_api_lock();
    if ((rc = plx_api_info(NULL, info, &in, fn, "info")))
        goto out;
    if (!newinfo) {
        rc = plx_api_null_arg(NULL, fn, "newinfo");
        goto out;
    }
    rc = plx_info_out(plx_info_dup(in), newinfo, fn);
out:
    plx_api_unlock();
    return rc;
}

#pragma weak MPI_Info_free = PMPI_Info_free
int PMPI_Info_free(MPI_Info *info)
{
    static const char fn[] = "MPI_Info_free";
    struct plx_info *in;
    int rc;
    plx_api_lock();
    if (!info) {
        rc = plx_api_null_arg(NULL, fn, "info");
        goto out;
    }
    if ((rc = plx_api_info(NULL, *info, &in, fn, "info")) || (rc = plx_info_check_mutable(in, fn)))
        goto out;
    plx_info_release(in);
    *info = MPI_INFO_NULL;
out:
    plx_api_unlock();
    return rc;
}

#pragma weak MPI_Info_get_nkeys = PMPI_Info_get_nkeys
int PMPI_Info_get_nkeys(MPI_Info info, int *nkeys)
{
    static const char fn[] = "MPI_Info_get_nkeys";
    struct plx_info *in;
    int rc;
    plx_api_lock();
    if ((rc = plx_api_info(NULL, info, &in, fn, "info")))
        goto out;
    if (!nkeys) {
        rc = plx_api_null_arg(NULL, fn, "nkeys");
        goto out;
    }
    *nkeys = in->nkeys;
out:
    plx_api_unlock();
    return rc;
}

#pragma weak MPI_Info_get_nthkey = PMPI_Info_get_nthkey
int PMPI_Info_get_nthkey(MPI_Info info, int n, char *key)
{
    static const char fn[] = "MPI_Info_get_nthkey";
    struct plx_info *in;
    int rc;
    plx_api_lock();
    if ((rc = plx_api_info(NULL, info, &in, fn, "info")))
        goto out;
    if (!key) {
        rc = plx_api_null_arg(NULL, fn, "key");
        goto out;
    }
    if (n < 0 || n >= in->nkeys) {
        rc = plx_api_err(NULL, fn, MPI_ERR_ARG, "argument 'n' is %d, but the info object has %d keys", n, in->nkeys);
        goto out;
    }
    strcpy(key, in->entries[n].key);    /* at most MPI_MAX_INFO_KEY characters */
out:
    plx_api_unlock();
    return rc;
}
