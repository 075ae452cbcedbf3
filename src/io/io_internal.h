/*
 * What the files of src/io share and nobody else needs: file segments,
 * staging of user buffers, system calls that finish their job. The module:
 *   file.c      file objects, open/close/sizes/sync, hints, aggregators
 *   view.c      views, data representations, staging of user buffers
 *   access.c    independent access (segments, pwrite/pread, data sieving)
 *   shfp.c      the shared file pointer and ordered access
 *   twophase.c  collective access: two-phase collective buffering
 *   posix.c     POSIX calls that finish their job, byte-range locks
 */
#ifndef PLX_IO_INTERNAL_H
#define PLX_IO_INTERNAL_H

#include "io/io.h"

/* The internal collectives of MPI-IO on a file's private communicator (see
 * coll/coll.h for the tag ranges of the library's own collectives). */
#define PLX_IO_TAG (-4)

/* A piece of an access: len bytes at file offset off, which are bytes
 * [spos, spos+len) of the process's staged data. */
struct plx_io_seg {
    MPI_Offset off;
    MPI_Offset len;
    MPI_Offset spos;
};

/* plx_io_agree on a given tag (a nonblocking access uses its schedule's). */
int plx_io_agree_tag(struct plx_file *f, int rc, int tag);

int plx_io_pwrite_full(int fd, const void *buf, size_t n, MPI_Offset off);
int plx_io_pread_full(int fd, void *buf, size_t n, MPI_Offset off, size_t *got_p);
int plx_io_lock(int fd, short type, MPI_Offset start, MPI_Offset len);

/* The shared pointer's side file (shfp.c): its name, set at open; opened at first use. */
void plx_io_shfp_name(struct plx_file *f);
int plx_io_shfp_open(struct plx_file *f);

int plx_io_segments(const struct plx_file *f, MPI_Offset pos, MPI_Offset n, struct plx_io_seg **segs_p);
int plx_io_write_segs(struct plx_file *f, const struct plx_io_seg *s, int n, const char *data, MPI_Offset bytes);
int plx_io_read_segs(struct plx_file *f, const struct plx_io_seg *s, int n, char *data, MPI_Offset *got_p);

int plx_io_stage_out(const struct plx_file *f, const void *buf, MPI_Aint count, const struct plx_datatype *dt,
                     const char **data_p, char **tmp_p);
char *plx_io_stage_buf(const struct plx_file *f, void *buf, MPI_Aint count, const struct plx_datatype *dt,
                       char **tmp_p);
int plx_io_stage_in(const struct plx_file *f, const char *tmp, size_t got, void *buf, MPI_Aint count,
                    const struct plx_datatype *dt);

#endif
