/*
 * MPI-IO over POSIX files: file objects, views, the three kinds of file
 * position (explicit offsets, the individual pointer, the shared pointer),
 * atomic mode and two-phase collective buffering (twophase.c).
 *
 * A view maps the file's "data stream" onto file bytes: the stream is the
 * concatenation of the filetype's data, tiled from disp every extent bytes.
 * Offsets and file pointers count etypes of that stream. Filetypes must have
 * monotonically nondecreasing displacements (MPI 3.1 section 13.3), so stream
 * order is file order: a stream range maps to an ascending list of file
 * segments. "external32" is supported for types whose external32 size equals
 * their native size (every fixed-size integer and floating type on LP64):
 * the file layout is then the native one and only byte order changes.
 *
 * The shared file pointer lives in a small side file next to the data file
 * (".<name>.plxshfp.<job>.<rank>.<context>", made at its first use and removed at
 * close), read and advanced under an fcntl lock, so it
 * needs no progress from any other process and works for every process that
 * sees the same file system (one node, or hosts sharing a directory).
 * Atomic mode takes an fcntl lock over the byte range of each access.
 *
 * Errors: functions return 0, a positive errno from the system call that
 * failed, or a negative plx_status_t (communication failure); f->err_what
 * says which step failed and f->err_rank on which rank (collective calls
 * agree on the first failing rank). The API layer (src/api/file.c) makes an
 * MPI error class and message out of that.
 *
 * Nonblocking independent calls run to completion when they are started and
 * hand back a completed request (the I/O is a system call on a local file).
 * Nonblocking collective calls post an exchange of extents and return; the
 * rest runs from the progress engine once every process has started
 * (twophase.c, plx_io_coll_start).
 *
 * Thread rules: under the API lock, like the rest of the library.
 */
#ifndef PLX_IO_H
#define PLX_IO_H

#include <mpi.h>
#include <stddef.h>
#include "core/datatype.h"
#include "core/objects.h"
#include "core/request.h"

enum plx_io_cb_mode { PLX_IO_CB_DISABLE = 0, PLX_IO_CB_ENABLE = 1, PLX_IO_CB_AUTO = 2 };

struct plx_io_hints {
    long long cb_buffer_size;   /* bytes an aggregator handles per round */
    int cb_nodes;               /* aggregators (default: one per node) */
    int cb_read, cb_write;      /* enum plx_io_cb_mode */
    int ind_sieve_write;        /* independent non-contiguous writes read-modify-write (romio_ds_write) */
};

/* A data representation made by MPI_Register_datarep. Used where every basic
 * type it meets has its native size in the file (extent_fn says so): the
 * layout is then the native one and the conversion functions change the
 * bytes only. */
struct plx_io_datarep {
    struct plx_io_datarep *next;
    char name[MPI_MAX_DATAREP_STRING];
    MPI_Datarep_conversion_function *read_fn, *write_fn;   /* NULL: no conversion */
    MPI_Datarep_conversion_function_c *read_fn_c, *write_fn_c;  /* MPI_Register_datarep_c's instead */
    MPI_Datarep_extent_function *extent_fn;
    void *extra_state;
};

struct plx_file {
    struct plx_obj obj;
    struct plx_comm *comm;      /* private duplicate of the opening communicator */
    int fd;
    char *name;                 /* as given to MPI_File_open (prefix stripped) */
    int amode;
    int atomic;
    struct plx_io_hints hints;
    int naggr;
    int *aggr;                  /* comm ranks of the aggregators, ascending */
    struct plx_errhandler *errhandler;

    /* view */
    MPI_Offset disp;
    struct plx_datatype *etype, *filetype;
    int external32;
    const struct plx_io_datarep *drep;  /* a registered representation, or NULL */
    char datarep[MPI_MAX_DATAREP_STRING];
    MPI_Offset fp;              /* individual file pointer, in etypes */

    /* this process wrote to or resized the file since its last successful
     * MPI_File_sync: only then does the sync need an fsync */
    int dirty;

    /* shared file pointer (in etypes of the view): its side file, opened
     * at first use (shfp_fd < 0 before) */
    int shfp_fd;
    char *shfp_name;

    /* split collective in progress */
    int split_active;
    const void *split_buf;
    MPI_Count split_bytes;

    /* the last error: step and rank */
    const char *err_what;
    int err_rank;
};

extern struct plx_objtab plx_file_tab;
/* Handler of MPI_FILE_NULL: used for errors of MPI_File_open/delete and
 * inherited by files opened later (MPI 3.1 section 13.7: MPI_ERRORS_RETURN). */
extern struct plx_errhandler *plx_io_default_errhandler;

/* MPI_File is a pointer-sized opaque (MPICH's ABI); ours carries the handle
 * number, so a stale or garbage handle is recognised without dereferencing. */
static inline MPI_File plx_io_handle_out(const struct plx_file *f)
{
    return (MPI_File)(uintptr_t)(uint32_t)f->obj.handle;
}
static inline struct plx_file *plx_io_lookup(MPI_File fh)
{
    uintptr_t v = (uintptr_t)fh;
    if (v == 0 || v > 0xffffffffu)
        return NULL;
    return plx_obj_lookup(&plx_file_tab, (int)(uint32_t)v);
}

/* --- file objects (file.c) -------------------------------------------------- */
/* amode is checked by the caller. Collective over comm. On success *f_p is a
 * new file with the default view. */
int plx_io_open(struct plx_comm *comm, const char *name, int amode, const struct plx_info *info,
                struct plx_file **f_p, const char **what_p, int *rank_p);
/* Collective: closes the file (the object stays for the error report);
 * then plx_io_free. */
int plx_io_close(struct plx_file *f);
void plx_io_free(struct plx_file *f);
int plx_io_delete(const char *name);
/* Strips a ROMIO-style file system prefix ("ufs:", "nfs:"...). */
const char *plx_io_strip_prefix(const char *name);
void plx_io_hints_apply(struct plx_file *f, const struct plx_info *info);
/* The hints in use, as a new info object. */
struct plx_info *plx_io_hints_info(const struct plx_file *f);
/* Collective. */
int plx_io_set_size(struct plx_file *f, MPI_Offset size);
int plx_io_preallocate(struct plx_file *f, MPI_Offset size);
int plx_io_get_size(struct plx_file *f, MPI_Offset *size_p);
int plx_io_sync(struct plx_file *f);

/* --- data representations ----------------------------------------------- */
/* 0, or EEXIST when the name is taken (predefined ones included). */
int plx_io_datarep_register(const char *name, MPI_Datarep_conversion_function *read_fn,
                            MPI_Datarep_conversion_function *write_fn, MPI_Datarep_extent_function *extent_fn,
                            void *extra_state);
/* The same with the large-count conversion functions (MPI_Register_datarep_c). */
int plx_io_datarep_register_c(const char *name, MPI_Datarep_conversion_function_c *read_fn,
                              MPI_Datarep_conversion_function_c *write_fn, MPI_Datarep_extent_function *extent_fn,
                              void *extra_state);
const struct plx_io_datarep *plx_io_datarep_find(const char *name);
/* 1 when every basic element of dt has its native size in d (see above). */
int plx_io_datarep_fits(const struct plx_io_datarep *d, const struct plx_datatype *dt);

/* --- views ---------------------------------------------------------------- */
/* Checks only what the API cannot (monotonic filetype): returns 0 or a
 * static text saying what is wrong. */
const char *plx_io_view_check(const struct plx_datatype *etype, const struct plx_datatype *filetype);
/* Installs the view (references the types); resets both file pointers. */
void plx_io_set_view(struct plx_file *f, MPI_Offset disp, struct plx_datatype *etype,
                     struct plx_datatype *filetype, const char *datarep);
/* Absolute byte offset of stream byte pos, and how many stream bytes from
 * there are contiguous in the file (<= max). */
MPI_Offset plx_io_view_map(const struct plx_file *f, MPI_Offset pos, MPI_Offset max, MPI_Offset *contig_p);
/* Stream bytes of the view that lie before absolute file offset off. */
MPI_Offset plx_io_view_bytes_before(const struct plx_file *f, MPI_Offset off);

/* --- data access (access.c, twophase.c, shfp.c) --------------------------------------------------- */
/* One access: count elements of dt at buf, from stream byte position pos
 * (etype offset * etype size). *done_p: bytes moved (short at end of file). */
int plx_io_read(struct plx_file *f, MPI_Offset pos, void *buf, MPI_Aint count, struct plx_datatype *dt,
                MPI_Count *done_p);
int plx_io_write(struct plx_file *f, MPI_Offset pos, const void *buf, MPI_Aint count, struct plx_datatype *dt,
                 MPI_Count *done_p);
/* Collective forms (twophase.c): every process of f->comm calls them. */
int plx_io_read_all(struct plx_file *f, MPI_Offset pos, void *buf, MPI_Aint count, struct plx_datatype *dt,
                    MPI_Count *done_p);
int plx_io_write_all(struct plx_file *f, MPI_Offset pos, const void *buf, MPI_Aint count,
                     struct plx_datatype *dt, MPI_Count *done_p);

/* Nonblocking collective access: a request that the progress engine
 * completes. The two-phase part runs once every process has started the
 * call (their extents are in), inside whatever MPI call drives progress
 * then; make_err turns a failure into the request's MPI error code. The
 * request's status counts the bytes moved. */
struct plx_request *plx_io_coll_start(struct plx_file *f, int is_write, MPI_Offset pos, void *buf,
                                      MPI_Aint count, struct plx_datatype *dt,
                                      int (*make_err)(struct plx_file *f, const char *fn, int rc), const char *fn);

/* Shared file pointer, in etypes. fetch_add returns the old value. */
int plx_io_shfp_fetch_add(struct plx_file *f, MPI_Offset add, MPI_Offset *old_p);
int plx_io_shfp_get(struct plx_file *f, MPI_Offset *v_p);
int plx_io_shfp_set(struct plx_file *f, MPI_Offset v);
/* Back to 0 (a new view); nothing to do when it was never used. */
int plx_io_shfp_reset(struct plx_file *f);
/* Collective: every process's place in rank order for an ordered access of
 * n etypes; advances the shared pointer by the sum. */
int plx_io_shfp_ordered(struct plx_file *f, MPI_Offset n, MPI_Offset *mine_p);

/* A pseudo-errno for "the processes passed different arguments" (MPI_ERR_NOT_SAME). */
#define PLX_IO_E_NOT_SAME 0x10000
/* Collective: *same_p = 1 when every process passed the same v. */
int plx_io_same(struct plx_comm *c, long long v, int *same_p);

/* Collective agreement on an error: returns this process's rc when nonzero,
 * else the first nonzero rc in rank order; f->err_rank says whose it is
 * (err_what is cleared when it is another process's). */
int plx_io_agree(struct plx_file *f, int rc);

#endif
