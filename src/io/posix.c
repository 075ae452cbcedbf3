/*
 * The POSIX calls MPI-IO is made of, wrapped so that they finish their job:
 * whole pwrite/pread through short transfers and EINTR, fcntl byte-range
 * locks (atomic mode, the shared pointer, data sieving).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "io/io_internal.h"


int plx_io_pwrite_full(int fd, const void *buf, size_t n, MPI_Offset off)
{
    const char *p = buf;
    while (n > 0) {
        ssize_t w = pwrite(fd, p, n, (off_t)off);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return errno;
        }
        p += w;
        n -= (size_t)w;
        off += w;
    }
    return 0;
}

/* Reads up to n bytes; *got_p < n only at end of file. */
int plx_io_pread_full(int fd, void *buf, size_t n, MPI_Offset off, size_t *got_p)
{
    char *p = buf;
    size_t got = 0;
    while (got < n) {
        ssize_t r = pread(fd, p + got, n - got, (off_t)(off + (MPI_Offset)got));
        if (r < 0) {
            if (errno == EINTR)
                continue;
            *got_p = got;
            return errno;
        }
        if (r == 0)
            break;
        got += (size_t)r;
    }
    *got_p = got;
    return 0;
}

/* fcntl byte-range lock (F_RDLCK, F_WRLCK or F_UNLCK); len 0 = to the end. */
int plx_io_lock(int fd, short type, MPI_Offset start, MPI_Offset len)
{
    struct flock fl = { .l_type = type, .l_whence = SEEK_SET, .l_start = (off_t)start, .l_len = (off_t)len };
    while (fcntl(fd, F_SETLKW, &fl) < 0) {
        if (errno != EINTR)
            return errno;
    }
    return 0;
}
