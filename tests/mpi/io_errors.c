/*
 * io_errors.c - MPI-IO errors: the class of each (MPI_ERR_NO_SUCH_FILE,
 * _FILE_EXISTS, _AMODE, _ACCESS, _READ_ONLY, _BAD_FILE, _NO_SPACE, _FILE,
 * _UNSUPPORTED_DATAREP, _TYPE, _COUNT, _ARG, _UNSUPPORTED_OPERATION,
 * _NOT_SAME, _OTHER) and a message naming the call, the rank and the file;
 * error handlers on files: MPI_ERRORS_RETURN by default, user handlers made
 * by MPI_File_create_errhandler called with the file and the code, the
 * handler of MPI_FILE_NULL used for MPI_File_open and inherited by new files,
 * MPI_File_call_errhandler.
 */
#include "io_common.h"
#include <errno.h>
#include <fcntl.h>

static int rank, size;
static char path_exists[600];

#define CHECK_FILE_ERR(call, cls, needle)                                                         \
    do {                                                                                           \
        int ce_rc_ = (call);                                                                       \
        PLX_CHECK_ERR(ce_rc_, cls);                                                                \
        IO_CHECK_MSG(ce_rc_, needle);                                                              \
    } while (0)

static void check_call_rank(int code, const char *call)
{
    char want[128];
    snprintf(want, sizeof want, "%s(rank %d)", call, rank);
    IO_CHECK_MSG(code, want);
}

static void test_open_errors(void)
{
    char p[600], big[600];
    MPI_File fh = (MPI_File)1;
    int rc = MPI_File_open(MPI_COMM_WORLD, io_path(p, sizeof p, "missing"), MPI_MODE_RDONLY, MPI_INFO_NULL, &fh);
    PLX_CHECK_ERR(rc, MPI_ERR_NO_SUCH_FILE);
    IO_CHECK_MSG(rc, p);
    check_call_rank(rc, "MPI_File_open");
    PLX_CHECK(fh == MPI_FILE_NULL, "a failed open leaves MPI_FILE_NULL");

    /* a bad communicator: MPI_FILE_NULL's handler (MPI_ERRORS_RETURN), not the communicator's */
    CHECK_FILE_ERR(MPI_File_open(MPI_COMM_NULL, path_exists, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh), MPI_ERR_COMM,
                   "comm");
    CHECK_FILE_ERR(MPI_File_open(MPI_COMM_WORLD, path_exists, MPI_MODE_CREATE | MPI_MODE_EXCL | MPI_MODE_RDWR,
                                 MPI_INFO_NULL, &fh),
                   MPI_ERR_FILE_EXISTS, path_exists);
    /* amode */
    static const int bad[] = { MPI_MODE_RDONLY | MPI_MODE_CREATE, MPI_MODE_RDWR | MPI_MODE_WRONLY, 0,
                               MPI_MODE_RDWR | MPI_MODE_SEQUENTIAL, MPI_MODE_RDONLY | MPI_MODE_EXCL,
                               MPI_MODE_RDWR | 0x4000 };
    /* MPICH accepts RDONLY|EXCL and unknown bits: Plexus refuses them */
    size_t nbad = plx_lib_is("Plexus") ? sizeof bad / sizeof bad[0] : 4;
    for (size_t i = 0; i < nbad; i++)
        CHECK_FILE_ERR(MPI_File_open(MPI_COMM_WORLD, path_exists, bad[i], MPI_INFO_NULL, &fh), MPI_ERR_AMODE,
                       path_exists);
    /* a directory, an over-long name, an empty name */
    CHECK_FILE_ERR(MPI_File_open(MPI_COMM_WORLD, io_dir, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh), MPI_ERR_BAD_FILE,
                   io_dir);
    memset(big, 'n', 300);
    big[300] = 0;
    CHECK_FILE_ERR(MPI_File_open(MPI_COMM_WORLD, io_path(p, sizeof p, big), MPI_MODE_CREATE | MPI_MODE_RDWR,
                                 MPI_INFO_NULL, &fh),
                   MPI_ERR_BAD_FILE, "File name too long");
    PLX_CHECK_ERR(MPI_File_open(MPI_COMM_WORLD, "", MPI_MODE_RDONLY, MPI_INFO_NULL, &fh), MPI_ERR_BAD_FILE);

    /* permission: a read-only file (as root, /proc/sys files refuse writers) */
    const char *ro = "/proc/sys/kernel/ostype";
    if (geteuid() != 0) {
        ro = io_path(p, sizeof p, "readonly");
        if (rank == 0) {
            FILE *fp = fopen(ro, "w");
            fclose(fp);
            chmod(ro, 0444);
        }
        MPI_Barrier(MPI_COMM_WORLD);
    }
    int fd = open(ro, O_RDWR), e = errno;
    if (fd >= 0)
        close(fd);
    PLX_CHECK(fd < 0 && (e == EACCES || e == EROFS), "%s refuses O_RDWR here (errno %d)", ro, fd < 0 ? e : 0);
    CHECK_FILE_ERR(MPI_File_open(MPI_COMM_WORLD, ro, MPI_MODE_RDWR, MPI_INFO_NULL, &fh),
                   e == EROFS ? MPI_ERR_READ_ONLY : MPI_ERR_ACCESS, ro);
    MPI_Barrier(MPI_COMM_WORLD);

    /* delete */
    if (rank == 0) {
        rc = MPI_File_delete(io_path(p, sizeof p, "missing"), MPI_INFO_NULL);
        PLX_CHECK_ERR(rc, MPI_ERR_NO_SUCH_FILE);
        IO_CHECK_MSG(rc, p);
        check_call_rank(rc, "MPI_File_delete");
    }
    /* different amodes on different ranks */
    if (size > 1) {
        int am = rank == 0 ? MPI_MODE_RDWR : MPI_MODE_RDONLY;
        CHECK_FILE_ERR(MPI_File_open(MPI_COMM_WORLD, path_exists, am, MPI_INFO_NULL, &fh), MPI_ERR_NOT_SAME,
                       path_exists);
    }
}

static void test_access_errors(void)
{
    MPI_File fh;
    int buf[16] = { 0 };
    MPI_Status st;
    /* read-only file */
    PLX_CHECK_MPI(MPI_File_open(MPI_COMM_WORLD, path_exists, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh));
    int rc = MPI_File_write(fh, buf, 4, MPI_INT, &st);
    PLX_CHECK_ERR(rc, MPI_ERR_READ_ONLY);
    IO_CHECK_MSG(rc, path_exists);
    check_call_rank(rc, "MPI_File_write");
    CHECK_FILE_ERR(MPI_File_write_at_all(fh, 0, buf, 4, MPI_INT, &st), MPI_ERR_READ_ONLY, "MPI_MODE_RDONLY");
    CHECK_FILE_ERR(MPI_File_iwrite_shared(fh, buf, 4, MPI_INT, &(MPI_Request){ 0 }), MPI_ERR_READ_ONLY, path_exists);
    CHECK_FILE_ERR(MPI_File_set_size(fh, 10), MPI_ERR_READ_ONLY, path_exists);
    /* argument errors */
    CHECK_FILE_ERR(MPI_File_read(fh, buf, -1, MPI_INT, &st), MPI_ERR_COUNT, "count");
    MPI_Datatype unc;
    MPI_Type_contiguous(2, MPI_INT, &unc);
    CHECK_FILE_ERR(MPI_File_read(fh, buf, 1, unc, &st), MPI_ERR_TYPE, "not committed");
    MPI_Type_free(&unc);
    CHECK_FILE_ERR(MPI_File_read_at(fh, -5, buf, 1, MPI_INT, &st), MPI_ERR_ARG, "offset");
    CHECK_FILE_ERR(MPI_File_seek(fh, 0, 12345), MPI_ERR_ARG, "whence");
    CHECK_FILE_ERR(MPI_File_seek(fh, -1, MPI_SEEK_SET), MPI_ERR_ARG, "negative");
    /* views */
    CHECK_FILE_ERR(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "little-endian", MPI_INFO_NULL),
                   MPI_ERR_UNSUPPORTED_DATAREP, "little-endian");
    CHECK_FILE_ERR(MPI_File_set_view(fh, 0, MPI_LONG, MPI_LONG, "external32", MPI_INFO_NULL),
                   MPI_ERR_UNSUPPORTED_DATAREP, "external32");
    MPI_Datatype back;
    int bl[2] = { 1, 1 };
    MPI_Aint disp[2] = { 8, 0 };
    MPI_Datatype ty[2] = { MPI_INT, MPI_INT };
    MPI_Type_create_struct(2, bl, disp, ty, &back);
    MPI_Type_commit(&back);
    CHECK_FILE_ERR(MPI_File_set_view(fh, 0, MPI_INT, back, "native", MPI_INFO_NULL), MPI_ERR_TYPE, "monotonic");
    MPI_Type_free(&back);
    CHECK_FILE_ERR(MPI_File_set_view(fh, 0, MPI_DOUBLE, MPI_INT, "native", MPI_INFO_NULL), MPI_ERR_TYPE, "multiple");
    CHECK_FILE_ERR(MPI_File_set_view(fh, -3, MPI_INT, MPI_INT, "native", MPI_INFO_NULL), MPI_ERR_ARG, "disp");
    PLX_CHECK_MPI(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "native", MPI_INFO_NULL));
    CHECK_FILE_ERR(MPI_File_read(fh, buf, 3, MPI_CHAR, &st), MPI_ERR_TYPE, "etype");
    /* split collectives: one at a time, an end needs its begin */
    CHECK_FILE_ERR(MPI_File_read_all_end(fh, buf, &st), MPI_ERR_OTHER, "no split collective");
    PLX_CHECK_MPI(MPI_File_read_all_begin(fh, buf, 2, MPI_INT));
    CHECK_FILE_ERR(MPI_File_read_at_all_begin(fh, 0, buf + 4, 2, MPI_INT), MPI_ERR_OTHER, "already active");
    PLX_CHECK_MPI(MPI_File_read_all_end(fh, buf, &st));
    /* atomicity must agree */
    if (size > 1)
        CHECK_FILE_ERR(MPI_File_set_atomicity(fh, rank % 2), MPI_ERR_NOT_SAME, path_exists);
    PLX_CHECK_MPI(MPI_File_close(&fh));

    /* write-only file: reads are refused */
    PLX_CHECK_MPI(MPI_File_open(MPI_COMM_WORLD, path_exists, MPI_MODE_WRONLY, MPI_INFO_NULL, &fh));
    CHECK_FILE_ERR(MPI_File_read_at(fh, 0, buf, 1, MPI_INT, &st), MPI_ERR_ACCESS, "MPI_MODE_WRONLY");
    CHECK_FILE_ERR(MPI_File_read_ordered(fh, buf, 1, MPI_INT, &st), MPI_ERR_ACCESS, path_exists);
    PLX_CHECK_MPI(MPI_File_close(&fh));

    /* sequential: only the shared pointer */
    PLX_CHECK_MPI(MPI_File_open(MPI_COMM_WORLD, path_exists, MPI_MODE_WRONLY | MPI_MODE_SEQUENTIAL, MPI_INFO_NULL, &fh));
    CHECK_FILE_ERR(MPI_File_seek(fh, 0, MPI_SEEK_SET), MPI_ERR_UNSUPPORTED_OPERATION, "SEQUENTIAL");
    CHECK_FILE_ERR(MPI_File_write_at(fh, 0, buf, 1, MPI_INT, &st), MPI_ERR_UNSUPPORTED_OPERATION, "SEQUENTIAL");
    PLX_CHECK_MPI(MPI_File_write_ordered(fh, buf, 1, MPI_INT, &st));
    PLX_CHECK_MPI(MPI_File_close(&fh));

    /* a full device: MPI_ERR_NO_SPACE */
    if (access("/dev/full", W_OK) == 0) {
        PLX_CHECK_MPI(MPI_File_open(MPI_COMM_WORLD, "/dev/full", MPI_MODE_WRONLY, MPI_INFO_NULL, &fh));
        rc = MPI_File_write_at(fh, 0, buf, 4, MPI_INT, &st);
        PLX_CHECK_ERR(rc, MPI_ERR_NO_SPACE);
        IO_CHECK_MSG(rc, "/dev/full");
        check_call_rank(rc, "MPI_File_write_at");
        /* every rank hears of the failure of a collective write, even without data */
        rc = MPI_File_write_at_all(fh, 0, buf, rank == 0 ? 4 : 0, MPI_INT, &st);
        PLX_CHECK_ERR(rc, MPI_ERR_NO_SPACE);
        PLX_CHECK_MPI(MPI_File_close(&fh));
    }

    /* invalid handles */
    MPI_Offset sz;
    CHECK_FILE_ERR(MPI_File_get_size(MPI_FILE_NULL, &sz), MPI_ERR_FILE, "MPI_File_get_size");
    PLX_CHECK_MPI(MPI_File_open(MPI_COMM_WORLD, path_exists, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh));
    MPI_File stale = fh;
    PLX_CHECK_MPI(MPI_File_close(&fh));
    PLX_CHECK_ERR(MPI_File_get_size(stale, &sz), MPI_ERR_FILE);
    PLX_CHECK_ERR(MPI_File_close(&fh), MPI_ERR_FILE);
}

static int ext_fn(MPI_Datatype t, MPI_Aint *ext, void *extra)
{
    (void)extra;
    int sz;
    MPI_Type_size(t, &sz);
    *ext = sz;
    return MPI_SUCCESS;
}

static void test_datarep_errors(void)
{
    PLX_CHECK_MPI(MPI_Register_datarep("plx-errs", MPI_CONVERSION_FN_NULL, MPI_CONVERSION_FN_NULL, ext_fn, NULL));
    CHECK_FILE_ERR(MPI_Register_datarep("plx-errs", MPI_CONVERSION_FN_NULL, MPI_CONVERSION_FN_NULL, ext_fn, NULL),
                   MPI_ERR_DUP_DATAREP, "plx-errs");
    CHECK_FILE_ERR(MPI_Register_datarep("external32", MPI_CONVERSION_FN_NULL, MPI_CONVERSION_FN_NULL, ext_fn, NULL),
                   MPI_ERR_DUP_DATAREP, "external32");
    /* a registered representation without conversion is the native layout */
    MPI_File fh;
    PLX_CHECK_MPI(MPI_File_open(MPI_COMM_WORLD, path_exists, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh));
    PLX_CHECK_MPI(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "plx-errs", MPI_INFO_NULL));
    int v[4];
    /* ints 0..size-1 were overwritten by the SEQUENTIAL write_ordered above */
    PLX_CHECK_MPI(MPI_File_read_at(fh, 50, v, 4, MPI_INT, MPI_STATUS_IGNORE));
    PLX_CHECK(v[0] == 50 && v[3] == 53, "read through a registered representation without conversion");
    PLX_CHECK_MPI(MPI_File_close(&fh));
}

static int handler_calls;
static MPI_File handler_file;
static int handler_code;

static void file_handler(MPI_File *fh, int *code, ...)
{
    handler_calls++;
    handler_file = *fh;
    handler_code = *code;
}

static void test_errhandlers(void)
{
    MPI_File fh;
    MPI_Errhandler eh, got;
    PLX_CHECK_MPI(MPI_File_get_errhandler(MPI_FILE_NULL, &got));
    PLX_CHECK(got == MPI_ERRORS_RETURN, "MPI_FILE_NULL's handler is MPI_ERRORS_RETURN at start");
    MPI_Errhandler_free(&got);
    PLX_CHECK_MPI(MPI_File_create_errhandler(file_handler, &eh));

    PLX_CHECK_MPI(MPI_File_open(MPI_COMM_WORLD, path_exists, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh));
    PLX_CHECK_MPI(MPI_File_set_errhandler(fh, eh));
    PLX_CHECK_MPI(MPI_File_get_errhandler(fh, &got));
    PLX_CHECK(got == eh, "get_errhandler returns the handler set");
    MPI_Errhandler_free(&got);
    int buf[4] = { 0 };
    handler_calls = 0;
    int rc = MPI_File_write(fh, buf, 1, MPI_INT, MPI_STATUS_IGNORE);
    PLX_CHECK_ERR(rc, MPI_ERR_READ_ONLY);
    PLX_CHECK_EQ(handler_calls, 1, "the file's handler ran once");
    PLX_CHECK(handler_file == fh, "the handler got the file");
    PLX_CHECK_EQ(handler_code, rc, "the handler got the code");
    PLX_CHECK_MPI(MPI_File_call_errhandler(fh, MPI_ERR_IO));
    PLX_CHECK_EQ(handler_calls, 2, "MPI_File_call_errhandler ran the handler");
    PLX_CHECK_EQ(handler_code, MPI_ERR_IO, "with the code given");
    PLX_CHECK_MPI(MPI_File_close(&fh));

    /* on MPI_FILE_NULL: open errors, and inherited by new files */
    PLX_CHECK_MPI(MPI_File_set_errhandler(MPI_FILE_NULL, eh));
    char p[600];
    handler_calls = 0;
    rc = MPI_File_open(MPI_COMM_WORLD, io_path(p, sizeof p, "missing"), MPI_MODE_RDONLY, MPI_INFO_NULL, &fh);
    PLX_CHECK_ERR(rc, MPI_ERR_NO_SUCH_FILE);
    PLX_CHECK_EQ(handler_calls, 1, "MPI_FILE_NULL's handler ran for the failed open");
    PLX_CHECK(handler_file == MPI_FILE_NULL, "with MPI_FILE_NULL");
    PLX_CHECK_MPI(MPI_File_open(MPI_COMM_WORLD, path_exists, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh));
    PLX_CHECK_MPI(MPI_File_get_errhandler(fh, &got));
    PLX_CHECK(got == eh, "a new file inherits MPI_FILE_NULL's handler");
    MPI_Errhandler_free(&got);
    PLX_CHECK_MPI(MPI_File_close(&fh));
    PLX_CHECK_MPI(MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_RETURN));

    /* an error of close (DELETE_ON_CLOSE of a file already gone) goes to the file's handler, on every rank */
    char gone[600];
    io_path(gone, sizeof gone, "gone");
    PLX_CHECK_MPI(MPI_File_open(MPI_COMM_WORLD, gone, MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE,
                                MPI_INFO_NULL, &fh));
    PLX_CHECK_MPI(MPI_File_set_errhandler(fh, eh));
    MPI_File before = fh;
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        unlink(gone);
    MPI_Barrier(MPI_COMM_WORLD);
    handler_calls = 0;
    rc = MPI_File_close(&fh);
    PLX_CHECK_ERR(rc, MPI_ERR_NO_SUCH_FILE);
    IO_CHECK_MSG(rc, gone);
    PLX_CHECK_EQ(handler_calls, 1, "the file's handler ran for the failed close");
    PLX_CHECK(handler_file == before, "with the file being closed");
    PLX_CHECK(fh == MPI_FILE_NULL, "the handle is MPI_FILE_NULL after a failed close");
    PLX_CHECK_MPI(MPI_Errhandler_free(&eh));

    /* communicator handlers are not file handlers, and the other way round */
    MPI_Errhandler ceh;
    MPI_Comm_create_errhandler((MPI_Comm_errhandler_function *)file_handler, &ceh);
    PLX_CHECK_ERR(MPI_File_set_errhandler(MPI_FILE_NULL, ceh), MPI_ERR_ARG);
    MPI_Errhandler_free(&ceh);
    PLX_CHECK_MPI(MPI_File_create_errhandler(file_handler, &eh));
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    PLX_CHECK_ERR(MPI_Comm_set_errhandler(MPI_COMM_WORLD, eh), MPI_ERR_ARG);
    MPI_Errhandler_free(&eh);
}

int main(int argc, char **argv)
{
    plx_test_init(&argc, &argv, "io_errors");
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    io_dir_make();
    io_path(path_exists, sizeof path_exists, "exists");
    MPI_File fh;
    PLX_CHECK_MPI(MPI_File_open(MPI_COMM_WORLD, path_exists, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    int v[64];
    for (int i = 0; i < 64; i++)
        v[i] = i;
    PLX_CHECK_MPI(MPI_File_write_at_all(fh, 0, v, rank == 0 ? 64 : 0, MPI_INT, MPI_STATUS_IGNORE));
    PLX_CHECK_MPI(MPI_File_close(&fh));
    test_open_errors();
    test_access_errors();
    test_errhandlers();
    test_datarep_errors();
    io_dir_remove();
    return plx_test_finish();
}
