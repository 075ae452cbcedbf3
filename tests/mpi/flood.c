/*
 * flood.c - many unexpected messages into one rank.
 *
 * Every rank (rank 0 too) Isends 20,000 small messages to rank 0, with a 256 KiB
 * message every 1000th, then enters a Barrier; only after it does rank 0 start
 * receiving, so the messages pile up as unexpected (or held back by flow control:
 * the sends are nonblocking, so the program is correct either way). Rank 0 then
 * receives them with specific source and tag, tag by tag in send order; a second,
 * smaller flood is received sender by sender in reverse tag order (deep searches
 * of the unexpected queue).
 * --count=N sets the messages per rank. The default, min(20000, 80000/np^2),
 * is 20,000 up to 2 ranks and less beyond, because MPICH 4.0 with 8 ranks on 2
 * cores needs over 10 minutes for 8 x 20,000 (linear unexpected queue, busy
 * polling). CMake passes --count=20000 for Plexus at every size.
 */
#include "plx_test.h"

static int rank, size;

enum { LARGE = 256 * 1024, SMALL_INTS = 4 };

static int is_large(int i)
{
    return i % 1000 == 500;
}

static void small_payload(int *p, int src, int i)
{
    p[0] = src;
    p[1] = i;
    p[2] = ~i;
    p[3] = src * 65599 + i;
}

static void flood(MPI_Comm comm, int n, int reverse)
{
    int *small = plx_malloc(sizeof(int) * SMALL_INTS * (size_t)n);
    unsigned char *large = NULL, *rlarge = plx_malloc(LARGE);
    MPI_Request *reqs = plx_malloc(sizeof(MPI_Request) * (size_t)n);
    int nlarge = 0;

    for (int i = 0; i < n; i++)
        nlarge += is_large(i);
    if (nlarge)
        large = plx_malloc((size_t)LARGE * (size_t)nlarge);
    for (int i = 0, l = 0; i < n; i++) {
        if (is_large(i)) {
            unsigned char *b = large + (size_t)LARGE * (size_t)l++;
            plx_fill(b, LARGE, plx_seed((uint32_t)rank, (uint32_t)i, LARGE, 6));
            PLX_CHECK_MPI(MPI_Isend(b, LARGE, MPI_BYTE, 0, i, comm, &reqs[i]));
        } else {
            int *p = small + (size_t)SMALL_INTS * (size_t)i;
            small_payload(p, rank, i);
            PLX_CHECK_MPI(MPI_Isend(p, SMALL_INTS, MPI_INT, 0, i, comm, &reqs[i]));
        }
    }
    PLX_CHECK_MPI(MPI_Barrier(comm));

    if (rank == 0) {
        /* Forward: tag by tag, each sender in turn (1, ..., size-1, then myself).
         * Reverse: sender by sender, last tag first. */
        long long checked = 0;
        for (int a = 0; a < (reverse ? size : n); a++) {
            for (int b = 0; b < (reverse ? n : size); b++) {
                int src = (1 + (reverse ? a : b)) % size, i = reverse ? n - 1 - b : a, cnt = -1;
                MPI_Status st;
                if (is_large(i)) {
                    PLX_CHECK_MPI(MPI_Recv(rlarge, LARGE, MPI_BYTE, src, i, comm, &st));
                    MPI_Get_count(&st, MPI_BYTE, &cnt);
                    PLX_CHECK_EQ(cnt, LARGE, "large message size");
                    PLX_CHECK_PATTERN(rlarge, LARGE, plx_seed((uint32_t)src, (uint32_t)i, LARGE, 6),
                                      "large message in the flood");
                } else {
                    int got[SMALL_INTS + 1], exp[SMALL_INTS];
                    small_payload(exp, src, i);
                    PLX_CHECK_MPI(MPI_Recv(got, SMALL_INTS + 1, MPI_INT, src, i, comm, &st));
                    MPI_Get_count(&st, MPI_INT, &cnt);
                    /* Counted once at the end; a failure names the message. */
                    if (cnt != SMALL_INTS || memcmp(got, exp, sizeof exp) != 0 || st.MPI_SOURCE != src ||
                        st.MPI_TAG != i)
                        plx_test_fail(__FILE__, __LINE__,
                                      "flood message %d from %d: count %d, payload {%d,%d,%d,%d}, status %d/%d "
                                      "(expected count %d, payload {%d,%d,%d,%d})",
                                      i, src, cnt, got[0], got[1], got[2], got[3], st.MPI_SOURCE, st.MPI_TAG,
                                      SMALL_INTS, exp[0], exp[1], exp[2], exp[3]);
                    checked++;
                }
            }
        }
        PLX_CHECK(checked == (long long)(n - nlarge) * size,
                  "%lld small messages checked (expected %lld)", checked, (long long)(n - nlarge) * size);
    }
    PLX_CHECK_MPI(MPI_Waitall(n, reqs, MPI_STATUSES_IGNORE));
    free(small);
    free(large);
    free(rlarge);
    free(reqs);
}

int main(int argc, char **argv)
{
    int n;
    MPI_Comm comm;

    plx_test_init(&argc, &argv, "flood");
    rank = plx_test_state()->rank;
    size = plx_test_state()->size;
    n = 80000 / (size * size);
    n = n > 20000 ? 20000 : n;
    for (int i = 1; i < argc; i++)
        if (strncmp(argv[i], "--count=", 8) == 0)
            n = atoi(argv[i] + 8);
    PLX_CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &comm));

    flood(comm, n, 0);
    flood(comm, n / 10, 1);

    PLX_CHECK_MPI(MPI_Comm_free(&comm));
    return plx_test_finish();
}
