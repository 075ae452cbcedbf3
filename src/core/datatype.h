/*
 * The datatype engine: predefined and derived datatypes, their flattened
 * form, and packing.
 *
 * Every type, predefined or derived, is described for data movement by a
 * short list of "runs": run i is cnt blocks of len bytes, the first at
 * byte displacement disp from the element's origin and the next ones stride
 * bytes apart. The runs of one element are in typemap order, adjacent
 * blocks merged and regular repetitions folded into one strided run, so a
 * vector is one run and a 3-d subarray one run per plane. Runs are built
 * when a type is constructed, from the runs of its children; packing walks
 * them with a cursor that can start and stop at any byte of the packed
 * stream (partial receives, pipelined packing, iovecs).
 * Known cost: a vector of a child that is itself several runs (say
 * count=1e6 of a padded struct) expands to count x child-runs entries.
 *
 * "contig" means count elements occupy count*size bytes starting at
 * buf + true_lb with no holes; point-to-point moves such data without packing.
 *
 * Lifetime: objects are reference counted (obj.refcount). MPI_Type_free drops
 * the user's reference; a request, a nonblocking collective or a type built
 * on top holds its own, so a freed type in use stays alive (and its handle
 * keeps resolving) until the last user lets go. Predefined types are never
 * freed (addref/release do nothing).
 *
 * For the rest of the library: size, lb, extent, true_lb, true_extent,
 * contig, name, plx_dt_lookup, plx_dt_pack, plx_dt_unpack.
 */
#ifndef PLX_DATATYPE_H
#define PLX_DATATYPE_H

#include <mpi.h>
#include <stddef.h>
#include <sys/uio.h>
#include "core/handle.h"

struct plx_attr;

struct plx_dt_run {
    MPI_Aint disp;              /* first block, from the element's origin */
    MPI_Aint len;               /* bytes per block (> 0) */
    MPI_Aint cnt;               /* blocks (>= 1) */
    MPI_Aint stride;            /* bytes between block starts (when cnt > 1) */
};

struct plx_datatype {
    struct plx_obj obj;
    MPI_Count size;             /* bytes of data in one element */
    MPI_Aint lb, extent;        /* ub = lb + extent */
    MPI_Aint true_lb, true_extent;
    int contig;
    int committed;
    int combiner;               /* MPI_COMBINER_* */
    int sticky_lb, sticky_ub;   /* lb/ub set by a resized type somewhere inside */
    int align;                  /* alignment of the most aligned basic type (struct padding) */
    MPI_Datatype basic;         /* the predefined type every element is made of, or MPI_DATATYPE_NULL */
    MPI_Count nelems;           /* basic elements per element (a pair type counts 2) */

    int nruns;
    struct plx_dt_run *runs;    /* of one element; == &run1 when nruns <= 1 */
    MPI_Aint *run_pre;          /* packed bytes before run i (nruns+1 entries); NULL when nruns <= 1 */
    struct plx_dt_run run1;
    /* Reductions on types built from a padded pair type (MPI_DOUBLE_INT...)
     * walk these runs, whose blocks hold whole pairs with their padding;
     * for every other type they are the runs above. */
    int nopruns;
    struct plx_dt_run *opruns;

    /* Constructor arguments (MPI_Type_get_contents) and the children they
     * name, each referenced. */
    int ni, na, nt;
    int nl;                     /* large counts (a `_c` constructor's values above an int) */
    MPI_Count *larges;
    int *ints;
    MPI_Aint *aints;
    MPI_Datatype *types;
    struct plx_datatype **children;
    /* subarray and darray: the equivalent type they were built as */
    struct plx_datatype *inner;

    char name[MPI_MAX_OBJECT_NAME];
    /* Cached attributes (MPI_Type_set_attr), core/attr.c's list; predefined
     * types may carry them too. Deleted by MPI_Type_free. */
    struct plx_attr *attrs;
};

extern struct plx_objtab plx_datatype_tab;

void plx_datatype_init_builtins(void);

static inline struct plx_datatype *plx_dt_lookup(MPI_Datatype h)
{
    return plx_obj_lookup(&plx_datatype_tab, h);
}

void plx_dt_addref(struct plx_datatype *dt);
void plx_dt_release(struct plx_datatype *dt);

/* Is this a predefined type (MPI_INT, MPI_DOUBLE_INT, ...)? */
static inline int plx_dt_is_builtin(const struct plx_datatype *dt)
{
    return dt->obj.builtin != 0;
}

/* --- constructors ---------------------------------------------------------
 * Each returns a new type (refcount 1, not committed) or NULL on bad
 * arguments / no memory. Arguments are checked by the API layer; negative
 * counts are not accepted here. The child types are referenced. */
struct plx_datatype *plx_dt_contiguous(MPI_Aint count, struct plx_datatype *old);
struct plx_datatype *plx_dt_vector(MPI_Aint count, MPI_Aint blocklen, MPI_Aint stride, int stride_in_bytes,
                                   struct plx_datatype *old);
/* indexed / hindexed / indexed_block / hindexed_block: blocklens == NULL means
 * every block has `blocklen`; displacements in elements of old (not bytes)
 * unless disp_in_bytes. */
struct plx_datatype *plx_dt_indexed(MPI_Aint count, const int *blocklens, int blocklen, const int *idisps,
                                    const MPI_Aint *adisps, struct plx_datatype *old);
struct plx_datatype *plx_dt_struct(MPI_Aint count, const int *blocklens, const MPI_Aint *disps,
                                   struct plx_datatype *const *types);
struct plx_datatype *plx_dt_resized(struct plx_datatype *old, MPI_Aint lb, MPI_Aint extent);
struct plx_datatype *plx_dt_dup(struct plx_datatype *old);
/* The type MPI_Type_create_f90_integer/_real/_complex return: the layout of
 * the predefined base, the F90 combiner with its ni (1 or 2) parameters, no
 * datatypes in its envelope. Predefined in MPI's sense: it is never freed. */
/* d (just built) was made by a `_c` constructor with values that do not fit
 * an int: its contents record them as nl large counts instead of ints, as
 * MPI_Type_get_contents_c returns them (its ints are dropped). */
void plx_dt_record_large(struct plx_datatype *d, int nl, const MPI_Count *v);
struct plx_datatype *plx_dt_f90(int combiner, int ni, const int *ints, struct plx_datatype *base);
/* order: MPI_ORDER_C or MPI_ORDER_FORTRAN. */
struct plx_datatype *plx_dt_subarray(int ndims, const int *sizes, const int *subsizes, const int *starts,
                                     int order, struct plx_datatype *old);
struct plx_datatype *plx_dt_darray(int size, int rank, int ndims, const int *gsizes, const int *distribs,
                                   const int *dargs, const int *psizes, int order, struct plx_datatype *old);

/* --- packing --------------------------------------------------------------
 * The packed stream of count elements is their data in typemap order,
 * count*size bytes. */

/* Packs count elements at buf into out (size*count bytes). */
void plx_dt_pack(const void *buf, MPI_Aint count, const struct plx_datatype *dt, void *out);
/* Unpacks `bytes` packed bytes (may be a partial element count) into buf. */
void plx_dt_unpack(const void *in, size_t bytes, void *buf, const struct plx_datatype *dt);
/* Bytes [off, off+len) of the packed stream of count elements at buf:
 * copied out to `out` (pack) or in from `in` (unpack). len is clipped to
 * the stream; both return the bytes moved. */
size_t plx_dt_pack_range(const void *buf, MPI_Aint count, const struct plx_datatype *dt, size_t off, void *out,
                         size_t len);
size_t plx_dt_unpack_range(const void *in, size_t len, void *buf, MPI_Aint count, const struct plx_datatype *dt,
                           size_t off);
/* The blocks holding bytes [off, off+max_bytes) of the packed stream, as up
 * to max_iov iovecs; returns how many, and the bytes they cover in *bytes_p.
 * For transports that send or receive straight from/into the user's buffer. */
int plx_dt_iov(const void *buf, MPI_Aint count, const struct plx_datatype *dt, size_t off, size_t max_bytes,
               struct iovec *iov, int max_iov, size_t *bytes_p);
/* Typed copy: count_s elements of sdt at sbuf to rbuf as rdt (up to the
 * smaller of the two sizes). */
void plx_dt_copy(const void *sbuf, MPI_Aint scount, const struct plx_datatype *sdt, void *rbuf, MPI_Aint rcount,
                 const struct plx_datatype *rdt);

/* --- counting basic elements --------------------------------------------- */
/* Basic elements in the first `bytes` bytes of a stream of dt elements;
 * MPI_UNDEFINED when bytes does not end on a basic element. */
MPI_Count plx_dt_count_elements(const struct plx_datatype *dt, MPI_Count bytes);
/* Bytes taken by the first n basic elements of such a stream. */
MPI_Count plx_dt_elements_bytes(const struct plx_datatype *dt, MPI_Count n);

/* The typemap of a derived type as a sequence of groups: group i is *n_p
 * copies of *c_p. Returns 0 past the last group (and for predefined types). */
int plx_dt_group(const struct plx_datatype *d, MPI_Aint i, const struct plx_datatype **c_p, MPI_Aint *n_p);

/* --- external32 ----------------------------------------------------------
 * Portable big-endian representation (MPI 3.1 section 13.5.2). */
/* Bytes of count elements in external32; -1 if a type has no external32 form. */
MPI_Count plx_dt_external32_size(const struct plx_datatype *dt, MPI_Aint count);
/* Return 0, or -1 when a value does not fit its external32 size (MPI_ERR_CONVERSION). */
int plx_dt_pack_external32(const void *buf, MPI_Aint count, const struct plx_datatype *dt, void *out);
int plx_dt_unpack_external32(const void *in, void *buf, MPI_Aint count, const struct plx_datatype *dt);

/* Size and alignment facts of a predefined type (0 for a handle that is not one). */
int plx_dt_builtin_align(MPI_Datatype h);

#endif
