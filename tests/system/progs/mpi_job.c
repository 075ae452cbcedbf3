/*
 * mpi_job: a small MPI program (standard MPI only) for the launcher tests
 * that need the real library: a correct job, MPI_Abort, an exit without
 * MPI_Finalize, a crash and a hang for --timeout.
 *
 * Usage: mpi_job MODE [VICTIM [CODE]] [ignored...]
 *   hello   allreduce + ring exchange + barrier; every rank checks the results
 *           and prints "mpi_job: rank R of S ok sum=X"; exit 0 only if correct
 *   abort   rank VICTIM calls MPI_Abort(MPI_COMM_WORLD, CODE); the others wait
 *           in MPI_Barrier (forever, unless the launcher kills them)
 *   exit    rank VICTIM calls exit(CODE) after MPI_Init, without MPI_Finalize
 *   segv    rank VICTIM raises SIGSEGV after MPI_Init
 *   hang    rank 0 waits in MPI_Recv(source 1, tag 42) for a message nobody
 *           sends; the others wait in MPI_Barrier: only --timeout ends it
 *   hangprobe the same with MPI_Probe(source 1, tag 43)
 * Extra arguments are ignored (tests add a unique marker for pgrep).
 */
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "hello";
    int victim = argc > 2 ? atoi(argv[2]) : 1;
    int code = argc > 3 ? atoi(argv[3]) : 3;
    int rank, size;

    setvbuf(stdout, NULL, _IOLBF, 0);
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    if (strcmp(mode, "hello") == 0) {
        int sum = -1, from = -1, errors = 0;
        int right = (rank + 1) % size, left = (rank + size - 1) % size;

        MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        if (sum != size * (size - 1) / 2) {
            fprintf(stderr, "mpi_job: rank %d: allreduce sum %d, expected %d\n", rank, sum,
                    size * (size - 1) / 2);
            errors++;
        }
        MPI_Sendrecv(&rank, 1, MPI_INT, right, 7, &from, 1, MPI_INT, left, 7, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
        if (from != left) {
            fprintf(stderr, "mpi_job: rank %d: got %d from the left, expected %d\n", rank,
                    from, left);
            errors++;
        }
        MPI_Barrier(MPI_COMM_WORLD);
        if (errors == 0)
            printf("mpi_job: rank %d of %d ok sum=%d\n", rank, size, sum);
        MPI_Finalize();
        return errors == 0 ? 0 : 1;
    }

    if (rank == victim % size) {
        if (strcmp(mode, "abort") == 0) {
            MPI_Abort(MPI_COMM_WORLD, code);
        } else if (strcmp(mode, "exit") == 0) {
            exit(code);
        } else if (strcmp(mode, "segv") == 0) {
            raise(SIGSEGV);
        }
    }
    if (strcmp(mode, "hang") == 0 && rank == 0) {
        int x;
        MPI_Recv(&x, 1, MPI_INT, 1 % size, 42, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else if (strcmp(mode, "hangprobe") == 0 && rank == 0) {
        MPI_Probe(1 % size, 43, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
        MPI_Barrier(MPI_COMM_WORLD);
    }
    fprintf(stderr, "mpi_job: rank %d: mode %s should not get here\n", rank, mode);
    MPI_Finalize();
    return 1;
}
