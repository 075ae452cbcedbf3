/*
 * io_common.h - a scratch directory for the MPI-IO tests: rank 0 makes it
 * under $TMPDIR (or /tmp) and shares its name; io_dir_remove() deletes the
 * files the test names and then the directory, and fails the test when
 * anything else was left in it (such as a side file of the library).
 */
#ifndef IO_COMMON_H
#define IO_COMMON_H

#include "plx_test.h"
#include <dirent.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

static char io_dir[512];

static inline void io_dir_make(void)
{
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0) {
        const char *t = getenv("TMPDIR");
        snprintf(io_dir, sizeof io_dir, "%s/plx_io_XXXXXX", t && *t ? t : "/tmp");
        PLX_CHECK(mkdtemp(io_dir) != NULL, "mkdtemp(%s)", io_dir);
    }
    MPI_Bcast(io_dir, sizeof io_dir, MPI_CHAR, 0, MPI_COMM_WORLD);
}

/* path of a file in the scratch directory */
static inline const char *io_path(char *buf, size_t len, const char *name)
{
    int n = snprintf(buf, len, "%s/%s", io_dir, name);
    PLX_CHECK(n > 0 && (size_t)n < len, "path %s/%s fits in %zu bytes", io_dir, name, len);
    return buf;
}

static inline void io_dir_remove(void)
{
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank != 0)
        return;
    DIR *d = opendir(io_dir);
    PLX_CHECK(d != NULL, "opendir(%s)", io_dir);
    struct dirent *e;
    char left[1024] = "";
    while ((e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        char p[1024];
        snprintf(p, sizeof p, "%s/%s", io_dir, e->d_name);
        if (e->d_name[0] == '.')        /* hidden: not the test's, so the library's */
            snprintf(left + strlen(left), sizeof left - strlen(left), " %s", e->d_name);
        unlink(p);
    }
    closedir(d);
    PLX_CHECK(left[0] == 0, "files left behind in %s:%s", io_dir, left);
    PLX_CHECK(rmdir(io_dir) == 0, "rmdir(%s)", io_dir);
}

/* The whole content of a file (rank-local POSIX read); *n_p its size. */
static inline unsigned char *io_slurp(const char *path, long *n_p)
{
    FILE *fp = fopen(path, "rb");
    PLX_CHECK(fp != NULL, "fopen(%s)", path);
    fseek(fp, 0, SEEK_END);
    long n = ftell(fp);
    fseek(fp, 0, SEEK_SET);
    unsigned char *b = malloc(n ? (size_t)n : 1);
    PLX_CHECK(fread(b, 1, (size_t)n, fp) == (size_t)n, "fread(%s)", path);
    fclose(fp);
    *n_p = n;
    return b;
}

/* The error message of a code contains `needle`. The wording is Plexus's
 * ("MPI_File_open(rank 2): file '/x/y': ..."): other libraries word their
 * messages their own way, so there only the classes are checked. */
#define IO_CHECK_MSG(code, needle)                                                                 \
    do {                                                                                           \
        char io_m_[MPI_MAX_ERROR_STRING];                                                          \
        int io_l_ = 0;                                                                             \
        MPI_Error_string((code), io_m_, &io_l_);                                                   \
        if (plx_lib_is("Plexus"))                                                                  \
            PLX_CHECK(strstr(io_m_, (needle)) != NULL, "error message \"%s\" names \"%s\"",      \
                      io_m_, (needle));                                                            \
    } while (0)

#endif
