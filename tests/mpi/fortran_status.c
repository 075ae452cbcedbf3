/* MPI_Status_c2f / MPI_Status_f2c: a received status survives the round
 * trip through the Fortran layout (MPI_SOURCE at index 2, MPI_TAG at 3,
 * counts kept); bad arguments fail with a message naming the call and the
 * argument. With --strict-classes (Plexus) the class must be MPI_ERR_ARG
 * (MPICH says MPI_ERR_OTHER; the standard names none) and f2c into
 * MPI_STATUS_IGNORE must fail too (MPICH 4.0 writes through it and crashes). */
#include "plx_test.h"

int main(int argc, char **argv)
{
    plx_test_init(&argc, &argv, "fortran_status");
    int strict = 0;
    for (int i = 1; i < argc; i++)
        strict |= strcmp(argv[i], "--strict-classes") == 0;
    struct plx_test_state *s = plx_test_state();
    int next = (s->rank + 1) % s->size, prev = (s->rank + s->size - 1) % s->size;
    double out[7] = { 1, 2, 3, 4, 5, 6, 7 }, in[7];
    MPI_Status st, back;
    PLX_CHECK_MPI(MPI_Sendrecv(out, 7, MPI_DOUBLE, next, 42, in, 7, MPI_DOUBLE, prev, 42,
                               MPI_COMM_WORLD, &st));
    MPI_Fint f[5];
    PLX_CHECK_MPI(MPI_Status_c2f(&st, f));
    PLX_CHECK_EQ(f[2], prev, "Fortran status(MPI_SOURCE)");
    PLX_CHECK_EQ(f[3], 42, "Fortran status(MPI_TAG)");
    memset(&back, 0xff, sizeof back);
    PLX_CHECK_MPI(MPI_Status_f2c(f, &back));
    int count = -1;
    MPI_Get_count(&back, MPI_DOUBLE, &count);
    PLX_CHECK_EQ(count, 7, "count after the round trip");
    PLX_CHECK_EQ(back.MPI_SOURCE, prev, "MPI_SOURCE after the round trip");
    PLX_CHECK_EQ(back.MPI_TAG, 42, "MPI_TAG after the round trip");

    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int err = MPI_Status_c2f(MPI_STATUS_IGNORE, f);
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(err, msg, &len);
    PLX_CHECK(strstr(msg, "MPI_Status_c2f") && strstr(msg, "MPI_STATUS_IGNORE"),
              "message names the call and the argument (got \"%s\")", msg);
    PLX_CHECK(err != MPI_SUCCESS, "MPI_Status_c2f(MPI_STATUS_IGNORE) fails");
    if (strict) {
        PLX_CHECK_ERR(MPI_Status_c2f(MPI_STATUS_IGNORE, f), MPI_ERR_ARG);
        PLX_CHECK_ERR(MPI_Status_f2c(NULL, &back), MPI_ERR_ARG);
        PLX_CHECK_ERR(MPI_Status_f2c(f, MPI_STATUS_IGNORE), MPI_ERR_ARG);
    }
    return plx_test_finish();
}
