/*
 * Views and data representations: the mapping of a view's data stream onto
 * file bytes (and back), the checks a filetype must pass, and the staging of
 * user buffers into the bytes the file holds (packing, external32, the
 * conversion functions of MPI_Register_datarep).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "coll/algo.h"
#include "io/io_internal.h"

/* ---- user data representations ------------------------------------------------ */

static struct plx_io_datarep *plx_io_dreps;

const struct plx_io_datarep *plx_io_datarep_find(const char *name)
{
    for (struct plx_io_datarep *d = plx_io_dreps; d; d = d->next)
        if (!strcmp(d->name, name))
            return d;
    return NULL;
}

int plx_io_datarep_register(const char *name, MPI_Datarep_conversion_function *read_fn,
                            MPI_Datarep_conversion_function *write_fn, MPI_Datarep_extent_function *extent_fn,
                            void *extra_state)
{
    if (!strcmp(name, "native") || !strcmp(name, "internal") || !strcmp(name, "external32") ||
        plx_io_datarep_find(name))
        return EEXIST;
    struct plx_io_datarep *d = plx_calloc(1, sizeof *d);
    snprintf(d->name, sizeof d->name, "%s", name);
    d->read_fn = read_fn;
    d->write_fn = write_fn;
    d->extent_fn = extent_fn;
    d->extra_state = extra_state;
    d->next = plx_io_dreps;
    plx_io_dreps = d;
    return 0;
}

int plx_io_datarep_register_c(const char *name, MPI_Datarep_conversion_function_c *read_fn,
                              MPI_Datarep_conversion_function_c *write_fn, MPI_Datarep_extent_function *extent_fn,
                              void *extra_state)
{
    int e = plx_io_datarep_register(name, NULL, NULL, extent_fn, extra_state);
    if (e == 0) {               /* the new one is first in the list */
        plx_io_dreps->read_fn_c = read_fn;
        plx_io_dreps->write_fn_c = write_fn;
    }
    return e;
}

/* Runs d's read (write: 0) or write conversion on count items of dt; the
 * int form of the function takes at most INT32_MAX of them per call. */
static int plx_io_convert(const struct plx_io_datarep *d, int write, void *userbuf, const struct plx_datatype *dt,
                          MPI_Aint count, void *filebuf)
{
    MPI_Datarep_conversion_function_c *fc = write ? d->write_fn_c : d->read_fn_c;
    if (fc)
        return fc(userbuf, dt->obj.handle, count, filebuf, 0, d->extra_state) == MPI_SUCCESS ? 0 : EOVERFLOW;
    MPI_Datarep_conversion_function *fi = write ? d->write_fn : d->read_fn;
    if (count > INT32_MAX || fi(userbuf, dt->obj.handle, (int)count, filebuf, 0, d->extra_state) != MPI_SUCCESS)
        return EOVERFLOW;
    return 0;
}

int plx_io_datarep_fits(const struct plx_io_datarep *d, const struct plx_datatype *dt)
{
    if (dt->size == 0)
        return 1;
    if (dt->basic == MPI_DATATYPE_NULL)
        return 0;               /* mixed basic types: not handled */
    const struct plx_datatype *b = plx_dt_lookup(dt->basic);
    MPI_Aint ext = -1;
    if (!b || d->extent_fn(dt->basic, &ext, d->extra_state) != MPI_SUCCESS)
        return 0;
    return ext == b->size;
}

/* ---- views ----------------------------------------------------------------- */

static int plx_io_view_contig(const struct plx_file *f)
{
    const struct plx_datatype *ft = f->filetype;
    return ft->nruns == 1 && ft->runs[0].cnt == 1 && ft->runs[0].disp == 0 && ft->runs[0].len == ft->extent;
}

const char *plx_io_view_check(const struct plx_datatype *etype, const struct plx_datatype *ft)
{
    if (etype->size <= 0)
        return "the etype holds no data";
    if (ft->size <= 0)
        return "the filetype holds no data";
    if (ft->size % etype->size)
        return "the filetype's size is not a multiple of the etype's size";
    if (ft->extent <= 0)
        return "the filetype's extent is not positive";
    MPI_Aint end = 0;
    for (int i = 0; i < ft->nruns; i++) {
        const struct plx_dt_run *r = &ft->runs[i];
        if (r->disp < end)
            return "the filetype's displacements are negative or not monotonically nondecreasing";
        if (r->cnt > 1 && r->stride < r->len)
            return "the filetype's displacements are not monotonically nondecreasing";
        end = r->disp + (r->cnt - 1) * r->stride + r->len;
    }
    if (end > ft->extent)
        return "the filetype's data reaches past its extent (its tiles would overlap)";
    return NULL;
}

void plx_io_set_view(struct plx_file *f, MPI_Offset disp, struct plx_datatype *etype, struct plx_datatype *ft,
                     const char *datarep)
{
    plx_dt_addref(etype);
    plx_dt_addref(ft);
    plx_dt_release(f->etype);
    plx_dt_release(f->filetype);
    f->etype = etype;
    f->filetype = ft;
    f->disp = disp;
    f->external32 = !strcmp(datarep, "external32");
    f->drep = plx_io_datarep_find(datarep);
    snprintf(f->datarep, sizeof f->datarep, "%s", datarep);
    f->fp = 0;
}

MPI_Offset plx_io_view_map(const struct plx_file *f, MPI_Offset pos, MPI_Offset max, MPI_Offset *contig_p)
{
    if (plx_io_view_contig(f)) {
        *contig_p = max;
        return f->disp + pos;
    }
    const struct plx_datatype *ft = f->filetype;
    MPI_Offset tile = pos / ft->size, in = pos % ft->size;
    int i = 0;
    MPI_Offset before = 0;
    if (ft->nruns > 1) {
        int lo = 0, hi = ft->nruns - 1;     /* last run with run_pre <= in */
        while (lo < hi) {
            int mid = (lo + hi + 1) / 2;
            if (ft->run_pre[mid] <= in)
                lo = mid;
            else
                hi = mid - 1;
        }
        i = lo;
        before = ft->run_pre[i];
    }
    const struct plx_dt_run *r = &ft->runs[i];
    MPI_Offset rin = in - before, blk = rin / r->len, bo = rin % r->len;
    *contig_p = PLX_MIN(r->len - bo, max);
    return f->disp + tile * ft->extent + r->disp + blk * r->stride + bo;
}

MPI_Offset plx_io_view_bytes_before(const struct plx_file *f, MPI_Offset off)
{
    const struct plx_datatype *ft = f->filetype;
    if (off <= f->disp)
        return 0;
    MPI_Offset rel = off - f->disp;
    if (plx_io_view_contig(f))
        return rel;
    MPI_Offset tile = rel / ft->extent, rem = rel % ft->extent, n = tile * ft->size;
    for (int i = 0; i < ft->nruns; i++) {
        const struct plx_dt_run *r = &ft->runs[i];
        if (rem <= r->disp)
            break;
        MPI_Offset d = rem - r->disp;
        MPI_Offset nb = r->cnt == 1 ? 1 : PLX_MIN(r->cnt, (d + r->stride - 1) / r->stride);
        n += (nb - 1) * r->len + PLX_MIN(r->len, d - (nb - 1) * (r->cnt == 1 ? 0 : r->stride));
    }
    return n;
}

/* ---- staging: user buffer <-> the bytes that go to the file ------------------ */

/* The file-representation bytes of count elements at buf: buf itself when it
 * is contiguous native data (*tmp_p NULL), else a packed copy (*tmp_p, to free). */
int plx_io_stage_out(const struct plx_file *f, const void *buf, MPI_Aint count, const struct plx_datatype *dt,
                     const char **data_p, char **tmp_p)
{
    size_t n = (size_t)count * (size_t)dt->size;
    *tmp_p = NULL;
    int convert = f->drep && (f->drep->write_fn || f->drep->write_fn_c);
    if (!f->external32 && !convert && dt->contig) {
        *data_p = (const char *)buf + dt->true_lb;
        return 0;
    }
    char *tmp = plx_malloc(n ? n : 1);
    if (convert) {
        if (plx_io_convert(f->drep, 1, (void *)buf, dt, count, tmp)) {
            free(tmp);
            return EOVERFLOW;
        }
    } else if (f->external32) {
        if (plx_dt_pack_external32(buf, count, dt, tmp) < 0) {
            free(tmp);
            return EOVERFLOW;
        }
    } else {
        plx_dt_pack(buf, count, dt, tmp);
    }
    *tmp_p = tmp;
    *data_p = tmp;
    return 0;
}

/* Where read data lands: the user buffer when contiguous native, else a
 * temporary that plx_io_stage_in unpacks. */
char *plx_io_stage_buf(const struct plx_file *f, void *buf, MPI_Aint count, const struct plx_datatype *dt,
                       char **tmp_p)
{
    size_t n = (size_t)count * (size_t)dt->size;
    *tmp_p = NULL;
    if (!f->external32 && !(f->drep && (f->drep->read_fn || f->drep->read_fn_c)) && dt->contig)
        return (char *)buf + dt->true_lb;
    *tmp_p = plx_malloc(n ? n : 1);
    return *tmp_p;
}

int plx_io_stage_in(const struct plx_file *f, const char *tmp, size_t got, void *buf, MPI_Aint count,
                    const struct plx_datatype *dt)
{
    if (!tmp)
        return 0;
    if (f->drep && (f->drep->read_fn || f->drep->read_fn_c)) {
        MPI_Aint whole = dt->size ? (MPI_Aint)(got / (size_t)dt->size) : 0;
        if (whole > count)
            whole = count;
        return whole ? plx_io_convert(f->drep, 0, buf, dt, whole, (void *)tmp) : 0;
    }
    if (f->external32) {
        MPI_Aint whole = dt->size ? (MPI_Aint)(got / (size_t)dt->size) : 0;
        if (whole > count)
            whole = count;
        if (whole && plx_dt_unpack_external32(tmp, buf, whole, dt) < 0)
            return EOVERFLOW;
        return 0;
    }
    plx_dt_unpack(tmp, got, buf, dt);
    return 0;
}
