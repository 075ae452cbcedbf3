/*
 * status_large.c - MPI_Status_set_elements_x / MPI_Get_elements_x (and
 * MPI_Get_count) keep every bit of large counts: 2^31, 2^32, 2^62 and values
 * near INT64_MAX round-trip with the cancelled flag both set and clear, and
 * setting the count does not change the flag (nor the flag the count).
 */
#include "plx_test.h"

static void round_trip(MPI_Count n, int cancelled)
{
    MPI_Status st;
    MPI_Count got = -1;
    int flag = -1, cnt = -2;
    memset(&st, 0xa5, sizeof st);
    PLX_CHECK_MPI(MPI_Status_set_cancelled(&st, cancelled));
    PLX_CHECK_MPI(MPI_Status_set_elements_x(&st, MPI_BYTE, n));
    PLX_CHECK_MPI(MPI_Get_elements_x(&st, MPI_BYTE, &got));
    if (got != n)
        plx_test_fail(__FILE__, __LINE__, "count 0x%llx (cancelled %d) came back as 0x%llx",
                      (unsigned long long)n, cancelled, (unsigned long long)got);
    plx_test_pass();
    MPI_Test_cancelled(&st, &flag);
    PLX_CHECK_EQ(flag, cancelled, "cancelled flag kept by MPI_Status_set_elements_x");
    PLX_CHECK_MPI(MPI_Get_count(&st, MPI_BYTE, &cnt));
    PLX_CHECK_EQ(cnt, n > 0x7fffffff ? MPI_UNDEFINED : (int)n, "MPI_Get_count");

    /* flipping the flag keeps the count */
    PLX_CHECK_MPI(MPI_Status_set_cancelled(&st, !cancelled));
    PLX_CHECK_MPI(MPI_Get_elements_x(&st, MPI_BYTE, &got));
    if (got != n)
        plx_test_fail(__FILE__, __LINE__, "count 0x%llx changed to 0x%llx by MPI_Status_set_cancelled",
                      (unsigned long long)n, (unsigned long long)got);
    plx_test_pass();
    MPI_Test_cancelled(&st, &flag);
    PLX_CHECK_EQ(flag, !cancelled, "cancelled flag after flipping it");
}

int main(int argc, char **argv)
{
    plx_test_init(&argc, &argv, "status_large");
    const MPI_Count counts[] = {
        0, 1, 0x7fffffff, (MPI_Count)1 << 31, ((MPI_Count)1 << 31) + 5, (MPI_Count)1 << 32,
        ((MPI_Count)1 << 32) + 1, (MPI_Count)0xffffffff, (MPI_Count)1 << 40, (MPI_Count)1 << 62,
        ((MPI_Count)1 << 62) + 12345, (MPI_Count)0x7654321f71234567, (MPI_Count)0x4000000080000000,
        (MPI_Count)0x7fffffff00000000, INT64_MAX - 1, INT64_MAX,
    };
    for (size_t i = 0; i < sizeof counts / sizeof counts[0]; i++) {
        if (counts[i] == INT64_MAX && plx_lib_is("MPICH"))
            continue;   /* MPICH asserts count * size < MPI_COUNT max */
        round_trip(counts[i], 0);
        round_trip(counts[i], 1);
    }

    /* counts of a 4-byte type: the byte count is 4x the element count */
    MPI_Status st;
    MPI_Count got = -1;
    memset(&st, 0, sizeof st);
    const MPI_Count n4 = ((MPI_Count)1 << 60) + 3;
    PLX_CHECK_MPI(MPI_Status_set_cancelled(&st, 1));
    PLX_CHECK_MPI(MPI_Status_set_elements_x(&st, MPI_INT, n4));
    PLX_CHECK_MPI(MPI_Get_elements_x(&st, MPI_INT, &got));
    if (got != n4)
        plx_test_fail(__FILE__, __LINE__, "MPI_INT count 0x%llx came back as 0x%llx",
                      (unsigned long long)n4, (unsigned long long)got);
    plx_test_pass();
    PLX_CHECK_MPI(MPI_Get_elements_x(&st, MPI_BYTE, &got));
    if (got != 4 * n4)
        plx_test_fail(__FILE__, __LINE__, "bytes of 0x%llx ints: 0x%llx", (unsigned long long)n4,
                      (unsigned long long)got);
    plx_test_pass();
    return plx_test_finish();
}
