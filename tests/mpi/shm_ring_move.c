/*
 * A receiver's per-pair shared-memory ring moves from a sender that went
 * idle to a busy one (issue 15). Run with PLEXUS_SHM_FAST_RINGS=1 on 3+
 * ranks of one node, so rank 0 has one ring for two senders:
 *   1. rank 1 sends a stream to rank 0 (it gets the ring after
 *      PLEXUS_SHM_FAST_AFTER queued messages), then waits in MPI_Recv;
 *   2. rank 2 sends a long stream through the queue: rank 0 asks rank 1 for
 *      the ring back and offers it to rank 2;
 *   3. ranks 1 and 2 send together (rank 1 now through the queue), with a
 *      rendezvous-sized message among them.
 * Every message's contents and per-sender order are checked. The ctest
 * wrapper checks, from PLEXUS_DEBUG=2 output, that rank 1 gave ring 0 of
 * rank 0 back and that rank 2 then got it.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WORDS 16
#define BIG (96 * 1024)

static int errors;

static void fill(int *m, int n, int src, int seq)
{
    for (int i = 0; i < n; i++)
        m[i] = src * 1000003 + seq * 31 + i;
}

static void check(const int *m, int n, int src, int seq, const char *phase)
{
    for (int i = 0; i < n; i++)
        if (m[i] != src * 1000003 + seq * 31 + i) {
            if (errors++ < 10)
                fprintf(stderr, "shm_ring_move: %s: message %d from rank %d: word %d is %d, expected %d\n",
                        phase, seq, src, i, m[i], src * 1000003 + seq * 31 + i);
            return;
        }
}

/* src sends n messages (tag seq order) to rank 0; every 50th is BIG when big. */
static void stream_send(int src, int first, int n, int big)
{
    int *m = malloc(BIG);
    for (int s = first; s < first + n; s++) {
        int len = big && s % 50 == 0 ? BIG / (int)sizeof(int) : WORDS;
        fill(m, len, src, s);
        MPI_Send(m, len, MPI_INT, 0, 7, MPI_COMM_WORLD);
    }
    free(m);
}

static void stream_recv(int src, int first, int n, int big, const char *phase)
{
    int *m = malloc(BIG);
    for (int s = first; s < first + n; s++) {
        int len = big && s % 50 == 0 ? BIG / (int)sizeof(int) : WORDS;
        MPI_Status st;
        MPI_Recv(m, BIG / (int)sizeof(int), MPI_INT, src, 7, MPI_COMM_WORLD, &st);
        int got;
        MPI_Get_count(&st, MPI_INT, &got);
        if (got != len) {
            if (errors++ < 10)
                fprintf(stderr, "shm_ring_move: %s: message %d from rank %d has %d ints, expected %d\n", phase, s,
                        src, got, len);
            continue;
        }
        check(m, len, src, s, phase);
    }
    free(m);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size < 3) {
        if (rank == 0)
            fprintf(stderr, "shm_ring_move: needs at least 3 ranks\n");
        MPI_Finalize();
        return 1;
    }
    const int n1 = 400, n2 = 40000, n3 = 2000;
    int go = 0;
    if (rank == 0) {
        stream_recv(1, 0, n1, 0, "phase 1 (rank 1 alone)");
        MPI_Send(&go, 1, MPI_INT, 2, 8, MPI_COMM_WORLD);      /* rank 2 starts after rank 1 has the ring */
        stream_recv(2, 0, n2, 0, "phase 2 (rank 2 alone)");
        /* phase 3: both at once; wildcard receives, per-sender order checked */
        MPI_Send(&go, 1, MPI_INT, 1, 9, MPI_COMM_WORLD);
        MPI_Send(&go, 1, MPI_INT, 2, 9, MPI_COMM_WORLD);
        int next[3] = { 0, n1, n2 };
        int *m = malloc(BIG);
        for (int k = 0; k < 2 * n3; k++) {
            MPI_Status st;
            MPI_Recv(m, BIG / (int)sizeof(int), MPI_INT, MPI_ANY_SOURCE, 7, MPI_COMM_WORLD, &st);
            int src = st.MPI_SOURCE, got;
            MPI_Get_count(&st, MPI_INT, &got);
            int s = next[src]++;
            int len = s % 50 == 0 ? BIG / (int)sizeof(int) : WORDS;
            if (got != len) {
                if (errors++ < 10)
                    fprintf(stderr, "shm_ring_move: phase 3: message %d from rank %d has %d ints, expected %d\n", s,
                            src, got, len);
                continue;
            }
            check(m, len, src, s, "phase 3 (both)");
        }
        free(m);
        if (next[1] != n1 + n3 || next[2] != n2 + n3) {
            fprintf(stderr, "shm_ring_move: phase 3: %d and %d messages, expected %d each\n", next[1] - n1,
                    next[2] - n2, n3);
            errors++;
        }
    } else if (rank == 1) {
        stream_send(1, 0, n1, 0);
        MPI_Recv(&go, 1, MPI_INT, 0, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);    /* idle: waits in MPI */
        stream_send(1, n1, n3, 1);
    } else if (rank == 2) {
        MPI_Recv(&go, 1, MPI_INT, 0, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        stream_send(2, 0, n2, 0);
        MPI_Recv(&go, 1, MPI_INT, 0, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        stream_send(2, n2, n3, 1);
    }
    int all;
    MPI_Allreduce(&errors, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("shm_ring_move: %d ranks, %d errors\n", size, all);
    MPI_Finalize();
    return all != 0;
}
