/*
 * A blocked receive wakes up when its message finally comes: ranks 0 and 1
 * ping-pong long enough for the transport to treat the connection as busy
 * (over TCP the hot socket leaves the epoll set), then rank 1 stays away
 * from MPI for a while -- rank 0's wait spins, yields and goes to sleep --
 * before it sends. Repeated, and with a third rank's message arriving in
 * between when there is one. A lost wake-up shows as a hang (the launcher's
 * timeout ends the test); every value is checked.
 */
#include "plx_test.h"
#include <time.h>

#define PINGS 200
#define ROUNDS 3

static void pause_ms(int ms)
{
    struct timespec t = { ms / 1000, (long)(ms % 1000) * 1000000L };
    nanosleep(&t, NULL);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    plx_test_begin("wake");
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size >= 2 && rank < 2) {
        int peer = 1 - rank, bad = 0;
        for (int r = 0; r < ROUNDS; r++) {
            for (int i = 0; i < PINGS; i++) {
                int v = r * 1000 + i, in = -1;
                if (rank == 0) {
                    MPI_Send(&v, 1, MPI_INT, peer, 1, MPI_COMM_WORLD);
                    MPI_Recv(&in, 1, MPI_INT, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                } else {
                    MPI_Recv(&in, 1, MPI_INT, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                    MPI_Send(&v, 1, MPI_INT, peer, 1, MPI_COMM_WORLD);
                }
                bad += in != v;
            }
            int late = -1, other = -1;
            if (rank == 0) {
                if (size > 2)   /* from a third rank while 0 waits for 1 */
                    MPI_Recv(&other, 1, MPI_INT, 2, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                MPI_Recv(&late, 1, MPI_INT, 1, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                PLX_CHECK_EQ(late, 7000 + r, "late message after a long wait");
                if (size > 2)
                    PLX_CHECK_EQ(other, 8000 + r, "message from a third rank during the wait");
            } else {
                pause_ms(300);  /* rank 0 is asleep in its receive by now */
                late = 7000 + r;
                MPI_Send(&late, 1, MPI_INT, 0, 3, MPI_COMM_WORLD);
            }
            MPI_Barrier(MPI_COMM_WORLD);
        }
        PLX_CHECK_EQ(bad, 0, "ping-pong values");
    } else if (size > 2) {
        for (int r = 0; r < ROUNDS; r++) {
            if (rank == 2) {
                pause_ms(100);
                int v = 8000 + r;
                MPI_Send(&v, 1, MPI_INT, 0, 2, MPI_COMM_WORLD);
            }
            MPI_Barrier(MPI_COMM_WORLD);
        }
    }
    return plx_test_finish();
}
