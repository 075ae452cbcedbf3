/* Demo: every rank says hello, then the ranks pass a token around a ring
 * and check the sum. Build with mpicc, run with mpiexec -n 4 ./hello. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    int rank, size, len;
    char host[MPI_MAX_PROCESSOR_NAME], lib[MPI_MAX_LIBRARY_VERSION_STRING];
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Get_processor_name(host, &len);
    MPI_Get_library_version(lib, &len);
    printf("hello from rank %d of %d on %s\n", rank, size, host);
    fflush(stdout);

    int token = 0;
    if (rank == 0) {
        token = 1;
        if (size > 1) {
            MPI_Send(&token, 1, MPI_INT, 1, 0, MPI_COMM_WORLD);
            MPI_Recv(&token, 1, MPI_INT, size - 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        }
    } else {
        MPI_Recv(&token, 1, MPI_INT, rank - 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        token += rank + 1;
        MPI_Send(&token, 1, MPI_INT, (rank + 1) % size, 0, MPI_COMM_WORLD);
    }
    int expect = size * (size + 1) / 2;
    if (rank == 0)
        printf("ring token: %d (expected %d) %s\n%s\n", token, expect, token == expect ? "OK" : "WRONG", lib);
    MPI_Finalize();
    return token == expect || rank != 0 ? 0 : 1;
}
