/*
 * Packing: moving data between a typed buffer and its packed stream, from
 * any byte of the stream to any other (see datatype.h), plus iovecs of the
 * typed blocks, typed copies and the external32 representation.
 *
 * The walk seeks to a byte of the stream with one division and a binary
 * search over the run prefix sums, then streams block by block; small
 * blocks (1..16 bytes) get fixed-size copies the compiler turns into moves.
 */
#include <float.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "core/datatype.h"
#include "core/plexus.h"

struct plx_dt_pos {
    MPI_Aint elem;
    int run;
    MPI_Aint blk;
    MPI_Aint off;
};

static void plx_dt_seek(const struct plx_datatype *dt, size_t off, struct plx_dt_pos *p)
{
    MPI_Aint size = (MPI_Aint)dt->size;
    p->elem = (MPI_Aint)off / size;
    MPI_Aint rem = (MPI_Aint)off % size;
    int k = 0;
    if (dt->nruns > 1) {
        int lo = 0, hi = dt->nruns - 1;   /* last k with run_pre[k] <= rem */
        while (lo < hi) {
            int mid = (lo + hi + 1) / 2;
            if (dt->run_pre[mid] <= rem)
                lo = mid;
            else
                hi = mid - 1;
        }
        k = lo;
        rem -= dt->run_pre[k];
    }
    p->run = k;
    p->blk = rem / dt->runs[k].len;
    p->off = rem % dt->runs[k].len;
}

static inline void plx_copy_small(char *dst, const char *src, size_t n)
{
    switch (n) {
    case 1: *dst = *src; break;
    case 2: memcpy(dst, src, 2); break;
    case 4: memcpy(dst, src, 4); break;
    case 8: memcpy(dst, src, 8); break;
    case 16: memcpy(dst, src, 16); break;
    default: memcpy(dst, src, n); break;
    }
}

/* The one walk: unpack = 0 copies typed -> stream, 1 stream -> typed. */
static inline size_t plx_dt_walk(char *base, MPI_Aint count, const struct plx_datatype *dt, size_t off, char *stream,
                                 size_t len, int unpack)
{
    size_t total = (size_t)count * (size_t)dt->size;
    if (off >= total || len == 0)
        return 0;
    if (len > total - off)
        len = total - off;
    if (dt->contig) {
        char *t = base + dt->true_lb + off;
        if (unpack)
            memcpy(t, stream, len);
        else
            memcpy(stream, t, len);
        return len;
    }
    struct plx_dt_pos p;
    plx_dt_seek(dt, off, &p);
    size_t left = len;
    const struct plx_dt_run *runs = dt->runs;
    int k = p.run, nruns = dt->nruns;
    MPI_Aint b = p.blk, o = p.off, extent = dt->extent;
    char *el = base + p.elem * extent;
    for (;;) {
        const struct plx_dt_run *r = &runs[k];
        char *blk = el + r->disp + b * r->stride;
        size_t rl = (size_t)r->len;
        for (; b < r->cnt; b++, blk += r->stride) {
            size_t n = rl - (size_t)o;
            if (n > left)
                n = left;
            if (unpack)
                plx_copy_small(blk + o, stream, n);
            else
                plx_copy_small(stream, blk + o, n);
            stream += n;
            left -= n;
            if (left == 0)
                return len;
            o = 0;
        }
        b = 0;
        if (++k == nruns) {
            k = 0;
            el += extent;
        }
    }
}

size_t plx_dt_pack_range(const void *buf, MPI_Aint count, const struct plx_datatype *dt, size_t off, void *out,
                         size_t len)
{
    return plx_dt_walk((char *)buf, count, dt, off, out, len, 0);
}

size_t plx_dt_unpack_range(const void *in, size_t len, void *buf, MPI_Aint count, const struct plx_datatype *dt,
                           size_t off)
{
    return plx_dt_walk(buf, count, dt, off, (char *)in, len, 1);
}

void plx_dt_pack(const void *buf, MPI_Aint count, const struct plx_datatype *dt, void *out)
{
    plx_dt_walk((char *)buf, count, dt, 0, out, (size_t)count * (size_t)dt->size, 0);
}

void plx_dt_unpack(const void *in, size_t bytes, void *buf, const struct plx_datatype *dt)
{
    if (dt->size == 0 || bytes == 0)
        return;
    MPI_Aint count = (MPI_Aint)((bytes + (size_t)dt->size - 1) / (size_t)dt->size);
    plx_dt_walk(buf, count, dt, 0, (char *)in, bytes, 1);
}

int plx_dt_iov(const void *buf, MPI_Aint count, const struct plx_datatype *dt, size_t off, size_t max_bytes,
               struct iovec *iov, int max_iov, size_t *bytes_p)
{
    size_t total = (size_t)count * (size_t)dt->size;
    *bytes_p = 0;
    if (off >= total || max_bytes == 0 || max_iov <= 0)
        return 0;
    size_t left = PLX_MIN(max_bytes, total - off);
    char *base = (char *)buf;
    if (dt->contig) {
        iov[0].iov_base = base + dt->true_lb + off;
        iov[0].iov_len = left;
        *bytes_p = left;
        return 1;
    }
    struct plx_dt_pos p;
    plx_dt_seek(dt, off, &p);
    int n = 0, k = p.run;
    MPI_Aint b = p.blk, o = p.off;
    char *el = base + p.elem * dt->extent;
    size_t done = 0;
    while (done < left) {
        const struct plx_dt_run *r = &dt->runs[k];
        char *blk = el + r->disp + b * r->stride;
        for (; b < r->cnt && done < left; b++, blk += r->stride) {
            size_t m = PLX_MIN((size_t)(r->len - o), left - done);
            char *at = blk + o;
            if (n > 0 && (char *)iov[n - 1].iov_base + iov[n - 1].iov_len == at) {
                iov[n - 1].iov_len += m;
            } else {
                if (n == max_iov)
                    goto out;
                iov[n].iov_base = at;
                iov[n].iov_len = m;
                n++;
            }
            done += m;
            o = 0;
        }
        b = 0;
        if (++k == dt->nruns) {
            k = 0;
            el += dt->extent;
        }
    }
out:
    *bytes_p = done;
    return n;
}

void plx_dt_copy(const void *sbuf, MPI_Aint scount, const struct plx_datatype *sdt, void *rbuf, MPI_Aint rcount,
                 const struct plx_datatype *rdt)
{
    size_t sb = (size_t)scount * (size_t)sdt->size, rb = (size_t)rcount * (size_t)rdt->size;
    size_t n = PLX_MIN(sb, rb);
    if (n == 0)
        return;
    if (sdt->contig) {
        plx_dt_unpack_range((const char *)sbuf + sdt->true_lb, n, rbuf, rcount, rdt, 0);
        return;
    }
    if (rdt->contig) {
        plx_dt_pack_range(sbuf, scount, sdt, 0, (char *)rbuf + rdt->true_lb, n);
        return;
    }
    /* both scattered: through a bounce buffer, a piece at a time */
    size_t chunk = PLX_MIN(n, (size_t)65536);
    char *tmp = plx_malloc(chunk);
    for (size_t off = 0; off < n; off += chunk) {
        size_t m = PLX_MIN(chunk, n - off);
        plx_dt_pack_range(sbuf, scount, sdt, off, tmp, m);
        plx_dt_unpack_range(tmp, m, rbuf, rcount, rdt, off);
    }
    free(tmp);
}

/* --- external32 -----------------------------------------------------------
 * Each predefined type is one or two fields; a field is stored big-endian
 * with its external32 size (MPI 3.1 table 13.2). */

enum plx_x32_kind { X_RAW, X_SWAP, X_SNARROW, X_UNARROW, X_LDBL };

struct plx_x32_field {
    uint8_t nat, ext, kind;
};

struct plx_x32 {
    int nf;
    struct plx_x32_field f[2];
};

static int plx_x32_info(MPI_Datatype h, struct plx_x32 *x)
{
    int sz = (h >> 8) & 0xff;
    x->nf = 1;
    switch (h) {
    case MPI_CHAR: case MPI_SIGNED_CHAR: case MPI_UNSIGNED_CHAR: case MPI_BYTE: case MPI_PACKED:
    case MPI_INT8_T: case MPI_UINT8_T: case MPI_C_BOOL: case MPI_CXX_BOOL: case MPI_CHARACTER:
    case MPI_INTEGER1:
        x->f[0] = (struct plx_x32_field){ 1, 1, X_RAW };
        return 0;
    case MPI_SHORT: case MPI_UNSIGNED_SHORT: case MPI_INT: case MPI_UNSIGNED: case MPI_LONG_LONG_INT:
    case MPI_UNSIGNED_LONG_LONG: case MPI_FLOAT: case MPI_DOUBLE: case MPI_INT16_T: case MPI_INT32_T:
    case MPI_INT64_T: case MPI_UINT16_T: case MPI_UINT32_T: case MPI_UINT64_T: case MPI_AINT: case MPI_OFFSET:
    case MPI_COUNT: case MPI_LOGICAL: case MPI_INTEGER: case MPI_REAL: case MPI_DOUBLE_PRECISION:
    case MPI_INTEGER2: case MPI_INTEGER4: case MPI_INTEGER8: case MPI_REAL4: case MPI_REAL8:
        x->f[0] = (struct plx_x32_field){ (uint8_t)sz, (uint8_t)sz, X_SWAP };
        return 0;
    case MPI_LONG:
        x->f[0] = (struct plx_x32_field){ sizeof(long), 4, sizeof(long) == 4 ? X_SWAP : X_SNARROW };
        return 0;
    case MPI_UNSIGNED_LONG:
        x->f[0] = (struct plx_x32_field){ sizeof(long), 4, sizeof(long) == 4 ? X_SWAP : X_UNARROW };
        return 0;
    case MPI_WCHAR:
        x->f[0] = (struct plx_x32_field){ (uint8_t)sz, 2, sz == 2 ? X_SWAP : X_UNARROW };
        return 0;
#if defined(__SIZEOF_FLOAT128__)
    /* Fortran REAL*16 is IEEE binary128 (gfortran's __float128), not the
     * C long double: external32 is a byte swap */
    case MPI_REAL16:
        x->f[0] = (struct plx_x32_field){ 16, 16, X_SWAP };
        return 0;
    case MPI_COMPLEX32:
        x->nf = 2;
        x->f[0] = x->f[1] = (struct plx_x32_field){ 16, 16, X_SWAP };
        return 0;
    case MPI_LONG_DOUBLE:
#else
    case MPI_LONG_DOUBLE: case MPI_REAL16:
#endif
        x->f[0] = (struct plx_x32_field){ (uint8_t)sz, 16, X_LDBL };
        return 0;
    case MPI_C_FLOAT_COMPLEX: case MPI_C_DOUBLE_COMPLEX: case MPI_CXX_FLOAT_COMPLEX:
    case MPI_CXX_DOUBLE_COMPLEX: case MPI_COMPLEX: case MPI_DOUBLE_COMPLEX: case MPI_COMPLEX8:
    case MPI_COMPLEX16: case MPI_2INT: case MPI_2INTEGER: case MPI_2REAL: case MPI_2DOUBLE_PRECISION:
        x->nf = 2;
        x->f[0] = x->f[1] = (struct plx_x32_field){ (uint8_t)(sz / 2), (uint8_t)(sz / 2), X_SWAP };
        return 0;
    case MPI_C_LONG_DOUBLE_COMPLEX: case MPI_CXX_LONG_DOUBLE_COMPLEX:
#if !defined(__SIZEOF_FLOAT128__)
    case MPI_COMPLEX32:
#endif
        x->nf = 2;
        x->f[0] = x->f[1] = (struct plx_x32_field){ (uint8_t)(sz / 2), 16, X_LDBL };
        return 0;
    case MPI_FLOAT_INT:
        x->nf = 2;
        x->f[0] = (struct plx_x32_field){ 4, 4, X_SWAP };
        break;
    case MPI_DOUBLE_INT:
        x->nf = 2;
        x->f[0] = (struct plx_x32_field){ 8, 8, X_SWAP };
        break;
    case MPI_LONG_INT:
        x->nf = 2;
        x->f[0] = (struct plx_x32_field){ sizeof(long), 4, sizeof(long) == 4 ? X_SWAP : X_SNARROW };
        break;
    case MPI_SHORT_INT:
        x->nf = 2;
        x->f[0] = (struct plx_x32_field){ 2, 2, X_SWAP };
        break;
    case MPI_LONG_DOUBLE_INT:
        x->nf = 2;
        x->f[0] = (struct plx_x32_field){ sizeof(long double), 16, X_LDBL };
        break;
    default:
        return -1;
    }
    x->f[1] = (struct plx_x32_field){ sizeof(int), 4, X_SWAP };
    return 0;
}

static int plx_x32_ext_size(MPI_Datatype h)
{
    struct plx_x32 x;
    if (plx_x32_info(h, &x) != 0)
        return -1;
    return x.f[0].ext + (x.nf == 2 ? x.f[1].ext : 0);
}

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#define PLX_HOST_BIG 1
#else
#define PLX_HOST_BIG 0
#endif

/* native (host order, n bytes) <-> big-endian */
static void plx_swap_copy(unsigned char *dst, const unsigned char *src, int n)
{
    if (PLX_HOST_BIG) {
        memcpy(dst, src, (size_t)n);
        return;
    }
    for (int i = 0; i < n; i++)
        dst[i] = src[n - 1 - i];
}

static void plx_put_be(unsigned char *dst, uint64_t v, int n)
{
    for (int i = n - 1; i >= 0; i--, v >>= 8)
        dst[i] = (unsigned char)v;
}

static uint64_t plx_get_be(const unsigned char *src, int n)
{
    uint64_t v = 0;
    for (int i = 0; i < n; i++)
        v = (v << 8) | src[i];
    return v;
}

/* long double <-> IEEE binary128, big-endian. */
static void plx_ldbl_to_x32(unsigned char *out, const unsigned char *in)
{
#if LDBL_MANT_DIG == 64
    /* x87 extended: 64-bit mantissa with explicit integer bit, then sign+exp */
    uint64_t m;
    uint16_t se;
    memcpy(&m, in, 8);
    memcpy(&se, in + 8, 2);
    uint64_t frac_hi = (uint64_t)se << 48 | ((m << 1) >> 16);  /* 63 fraction bits, top 48 */
    uint64_t frac_lo = m << 49;
    plx_put_be(out, frac_hi, 8);
    plx_put_be(out + 8, frac_lo, 8);
#elif LDBL_MANT_DIG == 113
    plx_swap_copy(out, in, 16);
#else
    long double v;
    memcpy(&v, in, sizeof v);
    double d = (double)v;
    uint64_t bits;
    memcpy(&bits, &d, 8);
    uint64_t sign = bits >> 63, exp = (bits >> 52) & 0x7ff, frac = bits & 0xfffffffffffffULL;
    uint64_t qexp = exp == 0 ? 0 : exp == 0x7ff ? 0x7fff : exp - 1023 + 16383;
    plx_put_be(out, sign << 63 | qexp << 48 | frac >> 4, 8);
    plx_put_be(out + 8, frac << 60, 8);
#endif
}

static void plx_ldbl_from_x32(unsigned char *out, const unsigned char *in)
{
    uint64_t hi = plx_get_be(in, 8), lo = plx_get_be(in + 8, 8);
#if LDBL_MANT_DIG == 64
    uint16_t se = (uint16_t)(hi >> 48);
    uint64_t frac63 = (hi & 0xffffffffffffULL) << 15 | lo >> 49;
    uint64_t m = frac63 | ((se & 0x7fff) != 0 ? (uint64_t)1 << 63 : 0);
    memset(out, 0, sizeof(long double));
    memcpy(out, &m, 8);
    memcpy(out + 8, &se, 2);
#elif LDBL_MANT_DIG == 113
    (void)hi;
    (void)lo;
    plx_swap_copy(out, in, 16);
#else
    uint64_t sign = hi >> 63, qexp = (hi >> 48) & 0x7fff, frac = (hi & 0xffffffffffffULL) << 4 | lo >> 60;
    uint64_t exp = qexp == 0 ? 0 : qexp == 0x7fff ? 0x7ff : qexp - 16383 + 1023;
    uint64_t bits = sign << 63 | exp << 52 | frac;
    double d;
    memcpy(&d, &bits, 8);
    long double v = d;
    memcpy(out, &v, sizeof v);
#endif
}

struct plx_x32_walk {
    unsigned char *nat;         /* native packed stream */
    unsigned char *ext;         /* external32 stream */
    int to_ext;
    int err;
};

static void plx_x32_field(struct plx_x32_walk *w, const struct plx_x32_field *f)
{
    unsigned char *n = w->nat, *e = w->ext;
    switch (f->kind) {
    case X_RAW:
        if (w->to_ext)
            memcpy(e, n, f->nat);
        else
            memcpy(n, e, f->nat);
        break;
    case X_SWAP:
        if (w->to_ext)
            plx_swap_copy(e, n, f->nat);
        else
            plx_swap_copy(n, e, f->nat);
        break;
    case X_SNARROW:
    case X_UNARROW: {
        if (w->to_ext) {
            uint64_t u = 0;
            int64_t s = 0;
            if (f->nat == 8) {
                memcpy(&u, n, 8);
                s = (int64_t)u;
            } else {
                uint32_t t;
                memcpy(&t, n, 4);
                u = t;
                s = (int32_t)t;
            }
            int bits = f->ext * 8;
            if (f->kind == X_SNARROW) {
                int64_t lim = (int64_t)1 << (bits - 1);
                if (s < -lim || s >= lim)
                    w->err = 1;
                plx_put_be(e, (uint64_t)s, f->ext);
            } else {
                if (u >> bits)
                    w->err = 1;
                plx_put_be(e, u, f->ext);
            }
        } else {
            uint64_t v = plx_get_be(e, f->ext);
            int bits = f->ext * 8;
            if (f->kind == X_SNARROW && (v >> (bits - 1)) & 1)
                v |= ~(uint64_t)0 << bits;   /* sign-extend */
            if (f->nat == 8) {
                memcpy(n, &v, 8);
            } else {
                uint32_t t = (uint32_t)v;
                memcpy(n, &t, 4);
            }
        }
        break;
    }
    case X_LDBL:
        if (w->to_ext)
            plx_ldbl_to_x32(e, n);
        else
            plx_ldbl_from_x32(n, e);
        break;
    }
    w->nat += f->nat;
    w->ext += f->ext;
}

/* Converts reps elements of d, in typemap order. */
static void plx_x32_walk_type(const struct plx_datatype *d, MPI_Count reps, struct plx_x32_walk *w);

static void plx_x32_walk_type(const struct plx_datatype *d, MPI_Count reps, struct plx_x32_walk *w)
{
    if (d->basic != MPI_DATATYPE_NULL) {
        struct plx_datatype *b = plx_dt_lookup(d->basic);
        struct plx_x32 x;
        plx_x32_info(d->basic, &x);
        MPI_Count units = b->size ? reps * d->size / b->size : 0;
        for (MPI_Count u = 0; u < units; u++)
            for (int i = 0; i < x.nf; i++)
                plx_x32_field(w, &x.f[i]);
        return;
    }
    for (MPI_Count r = 0; r < reps; r++) {
        const struct plx_datatype *c;
        MPI_Aint n;
        for (MPI_Aint g = 0; plx_dt_group(d, g, &c, &n); g++)
            plx_x32_walk_type(c, n, w);
    }
}

static MPI_Count plx_x32_size_type(const struct plx_datatype *d)
{
    if (d->basic != MPI_DATATYPE_NULL) {
        struct plx_datatype *b = plx_dt_lookup(d->basic);
        int e = plx_x32_ext_size(d->basic);
        if (e < 0 || !b || b->size == 0)
            return e < 0 ? -1 : 0;
        return d->size / b->size * e;
    }
    MPI_Count total = 0;
    const struct plx_datatype *c;
    MPI_Aint n;
    for (MPI_Aint g = 0; plx_dt_group(d, g, &c, &n); g++) {
        MPI_Count s = plx_x32_size_type(c);
        if (s < 0)
            return -1;
        total += s * n;
    }
    return total;
}

MPI_Count plx_dt_external32_size(const struct plx_datatype *dt, MPI_Aint count)
{
    if (dt->size == 0)
        return 0;
    MPI_Count s = plx_x32_size_type(dt);
    return s < 0 ? -1 : s * count;
}

int plx_dt_pack_external32(const void *buf, MPI_Aint count, const struct plx_datatype *dt, void *out)
{
    size_t bytes = (size_t)count * (size_t)dt->size;
    unsigned char *tmp = plx_malloc(bytes ? bytes : 1);
    plx_dt_pack(buf, count, dt, tmp);
    struct plx_x32_walk w = { tmp, out, 1, 0 };
    plx_x32_walk_type(dt, count, &w);
    free(tmp);
    return w.err ? -1 : 0;
}

int plx_dt_unpack_external32(const void *in, void *buf, MPI_Aint count, const struct plx_datatype *dt)
{
    size_t bytes = (size_t)count * (size_t)dt->size;
    unsigned char *tmp = plx_malloc(bytes ? bytes : 1);
    struct plx_x32_walk w = { tmp, (unsigned char *)in, 0, 0 };
    plx_x32_walk_type(dt, count, &w);
    plx_dt_unpack(tmp, bytes, buf, dt);
    free(tmp);
    return w.err ? -1 : 0;
}
