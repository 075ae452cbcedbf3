/*
 * f90_types.c - MPI_Type_create_f90_integer / _real / _complex.
 *
 * The kind chosen for each precision and range (its size), the same handle
 * on every call with the same arguments, the F90 envelope and contents, that
 * the types cannot be freed, data sent with them around the ring, and the
 * error cases (a range or precision no kind has, both MPI_UNDEFINED,
 * negative values).
 */
#include "plx_test.h"

static int rank, size;

static void check_type(MPI_Datatype t, int size_expected, int combiner, int ni, int i0, int i1, const char *what)
{
    int sz = -1, n_i = -1, n_a = -1, n_d = -1, comb = -1, ints[2] = { -9, -9 };
    PLX_CHECK_MPI(MPI_Type_size(t, &sz));
    PLX_CHECK(sz == size_expected, "%s: size %d, expected %d", what, sz, size_expected);
    PLX_CHECK_MPI(MPI_Type_get_envelope(t, &n_i, &n_a, &n_d, &comb));
    PLX_CHECK(comb == combiner && n_i == ni && n_a == 0 && n_d == 0, "%s: envelope %d %d %d combiner %d", what,
              n_i, n_a, n_d, comb);
    PLX_CHECK_MPI(MPI_Type_get_contents(t, 2, 0, 0, ints, NULL, NULL));
    PLX_CHECK(ints[0] == i0 && (ni < 2 || ints[1] == i1), "%s: contents %d %d", what, ints[0], ints[1]);
    MPI_Datatype copy = t;
    PLX_CHECK_ERR(MPI_Type_free(&copy), MPI_ERR_TYPE);
}

int main(int argc, char **argv)
{
    plx_test_init(&argc, &argv, "f90_types");
    rank = plx_test_state()->rank;
    size = plx_test_state()->size;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);

    static const struct { int r, size; } ints[] = { { 0, 1 }, { 2, 1 }, { 3, 2 }, { 4, 2 }, { 5, 4 }, { 9, 4 },
                                                    { 10, 8 }, { 18, 8 } };
    for (size_t i = 0; i < sizeof ints / sizeof ints[0]; i++) {
        MPI_Datatype t, t2;
        char what[64];
        snprintf(what, sizeof what, "f90_integer(%d)", ints[i].r);
        PLX_CHECK_MPI(MPI_Type_create_f90_integer(ints[i].r, &t));
        PLX_CHECK_MPI(MPI_Type_create_f90_integer(ints[i].r, &t2));
        PLX_CHECK(t == t2, "%s: the same handle twice", what);
        check_type(t, ints[i].size, MPI_COMBINER_F90_INTEGER, 1, ints[i].r, 0, what);
    }
    static const struct { int p, r, size; } reals[] = {
        { 6, MPI_UNDEFINED, 4 }, { MPI_UNDEFINED, 37, 4 }, { 3, 20, 4 }, { 7, MPI_UNDEFINED, 8 },
        { 15, 307, 8 }, { 6, 38, 8 }, { 16, MPI_UNDEFINED, 16 }, { 33, 4931, 16 }, { MPI_UNDEFINED, 308, 16 } };
    for (size_t i = 0; i < sizeof reals / sizeof reals[0]; i++) {
        MPI_Datatype t, t2, c;
        char what[64];
        snprintf(what, sizeof what, "f90_real(%d, %d)", reals[i].p, reals[i].r);
        PLX_CHECK_MPI(MPI_Type_create_f90_real(reals[i].p, reals[i].r, &t));
        PLX_CHECK_MPI(MPI_Type_create_f90_real(reals[i].p, reals[i].r, &t2));
        PLX_CHECK(t == t2, "%s: the same handle twice", what);
        check_type(t, reals[i].size, MPI_COMBINER_F90_REAL, 2, reals[i].p, reals[i].r, what);
        snprintf(what, sizeof what, "f90_complex(%d, %d)", reals[i].p, reals[i].r);
        PLX_CHECK_MPI(MPI_Type_create_f90_complex(reals[i].p, reals[i].r, &c));
        PLX_CHECK(c != t, "%s: a complex type differs from the real one", what);
        check_type(c, 2 * reals[i].size, MPI_COMBINER_F90_COMPLEX, 2, reals[i].p, reals[i].r, what);
    }

    /* data: 8-byte integers and doubles around the ring, and a sum */
    MPI_Datatype i8, r8;
    PLX_CHECK_MPI(MPI_Type_create_f90_integer(15, &i8));
    PLX_CHECK_MPI(MPI_Type_create_f90_real(12, MPI_UNDEFINED, &r8));
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    long long si[16], ri[16];
    double sd[16], rd[16];
    for (int i = 0; i < 16; i++)
        si[i] = (long long)rank << 40 | i, sd[i] = rank + i / 8.0;
    MPI_Status st;
    PLX_CHECK_MPI(MPI_Sendrecv(si, 16, i8, next, 1, ri, 16, i8, prev, 1, MPI_COMM_WORLD, &st));
    PLX_CHECK(ri[15] == ((long long)prev << 40 | 15), "f90 integer data");
    int cnt = -1;
    PLX_CHECK_MPI(MPI_Get_count(&st, i8, &cnt));
    PLX_CHECK_EQ(cnt, 16, "MPI_Get_count with an f90 integer type");
    PLX_CHECK_MPI(MPI_Sendrecv(sd, 16, r8, next, 2, rd, 16, r8, prev, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    PLX_CHECK(rd[9] == prev + 9 / 8.0, "f90 real data");
    long long sum = -1, one = rank + 1;
    PLX_CHECK_MPI(MPI_Allreduce(&one, &sum, 1, i8, MPI_SUM, MPI_COMM_WORLD));
    PLX_CHECK_EQ(sum, (long long)size * (size + 1) / 2, "MPI_SUM over an f90 integer type");

    /* errors */
    MPI_Datatype t;
    PLX_CHECK_ERR(MPI_Type_create_f90_integer(19, &t), MPI_ERR_ARG);
    PLX_CHECK_ERR(MPI_Type_create_f90_integer(-1, &t), MPI_ERR_ARG);
    PLX_CHECK_ERR(MPI_Type_create_f90_integer(MPI_UNDEFINED, &t), MPI_ERR_ARG);
    PLX_CHECK_ERR(MPI_Type_create_f90_real(MPI_UNDEFINED, MPI_UNDEFINED, &t), MPI_ERR_ARG);
    PLX_CHECK_ERR(MPI_Type_create_f90_real(34, MPI_UNDEFINED, &t), MPI_ERR_ARG);
    PLX_CHECK_ERR(MPI_Type_create_f90_complex(6, 5000, &t), MPI_ERR_ARG);
    PLX_CHECK_ERR(MPI_Type_create_f90_real(-2, 10, &t), MPI_ERR_ARG);
    PLX_CHECK_ERR(MPI_Type_create_f90_real(6, 10, NULL), MPI_ERR_ARG);
    return plx_test_finish();
}
