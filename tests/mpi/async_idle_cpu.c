/*
 * An idle rank burns no CPU (run with PLEXUS_ASYNC_PROGRESS=1, though it
 * holds with the thread off too). Two 5-second idle periods, each measured
 * from the process's own CPU time in /proc/self/stat (user + system, every
 * thread of the process, the figure `ps` shows):
 *   A. rank 1 is blocked in MPI_Recv while rank 0 sleeps outside MPI, then
 *      sends;
 *   B. both ranks sleep outside MPI, rank 1 with an MPI_Irecv posted (the
 *      progress thread watches the doorbells the whole time).
 * Each rank prints its figures; more than MAX_CPU seconds in a period fails.
 * The threshold is an absence of spinning (a spinning thread takes ~5 s of
 * CPU, or its share of a loaded machine: still well above 1 s), not a speed:
 * the spin-then-yield start of a wait and the sleeps' 100 ms time limit cost
 * a few milliseconds. Only ranks 0 and 1 take part.
 */
#include "plx_test.h"
#include <unistd.h>

#define IDLE_S 5
#define MAX_CPU 0.2

/* utime + stime of this process, in seconds. */
static double cpu_seconds(void)
{
    FILE *f = fopen("/proc/self/stat", "r");
    PLX_CHECK(f != NULL, "open /proc/self/stat");
    char line[2048];
    size_t n = fread(line, 1, sizeof line - 1, f);
    fclose(f);
    line[n] = 0;
    char *p = strrchr(line, ')');       /* the command name may hold spaces */
    PLX_CHECK(p != NULL, "parse /proc/self/stat");
    unsigned long ut = 0, st = 0;
    /* after ")": state(3) ppid pgrp session tty_nr tpgid flags minflt cminflt majflt cmajflt utime(14) stime(15) */
    int got = sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &ut, &st);
    PLX_CHECK(got == 2, "parse utime and stime of /proc/self/stat");
    return (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
}

static void sleep_s(int s)
{
    struct timespec t = { s, 0 };
    while (nanosleep(&t, &t) != 0)
        ;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    plx_test_begin("async_idle_cpu");
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    PLX_CHECK(size >= 2, "needs 2 ranks (has %d)", size);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank < 2) {
        int peer = 1 - rank;
        /* A */
        double c0 = cpu_seconds(), w0 = MPI_Wtime();
        int v = -1;
        if (rank == 1) {
            PLX_CHECK_MPI(MPI_Recv(&v, 1, MPI_INT, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            PLX_CHECK_EQ(v, 42, "value received after the idle period");
        } else {
            sleep_s(IDLE_S);
            v = 42;
        }
        double ca = cpu_seconds() - c0, wa = MPI_Wtime() - w0;
        if (rank == 0)
            PLX_CHECK_MPI(MPI_Send(&v, 1, MPI_INT, peer, 1, MPI_COMM_WORLD));
        /* B */
        MPI_Request r = MPI_REQUEST_NULL;
        int in = -1;
        if (rank == 1)
            PLX_CHECK_MPI(MPI_Irecv(&in, 1, MPI_INT, peer, 2, MPI_COMM_WORLD, &r));
        c0 = cpu_seconds();
        w0 = MPI_Wtime();
        sleep_s(IDLE_S);
        double cb = cpu_seconds() - c0, wb = MPI_Wtime() - w0;
        if (rank == 0) {
            int x = 7;
            PLX_CHECK_MPI(MPI_Send(&x, 1, MPI_INT, peer, 2, MPI_COMM_WORLD));
        } else {
            PLX_CHECK_MPI(MPI_Wait(&r, MPI_STATUS_IGNORE));
            PLX_CHECK_EQ(in, 7, "value received after the second idle period");
        }
        printf("rank %d: CPU %.3f s in %.1f s %s; CPU %.3f s in %.1f s outside MPI with a receive posted\n", rank,
               ca, wa, rank == 1 ? "blocked in MPI_Recv" : "outside MPI", cb, wb);
        fflush(stdout);
        PLX_CHECK(wa >= IDLE_S - 0.5, "period A lasted %.2f s", wa);
        PLX_CHECK(ca < MAX_CPU, "rank %d used %.3f s of CPU in a %.1f s idle period (%s)", rank, ca, wa,
                  rank == 1 ? "blocked in MPI_Recv" : "outside MPI");
        PLX_CHECK(cb < MAX_CPU, "rank %d used %.3f s of CPU in a %.1f s idle period outside MPI", rank, cb, wb);
    }
    return plx_test_finish();
}
