// A C++ MPI program (the C API from C++), for the installed mpicxx: every
// rank contributes a vector; the sums and a ring exchange are checked.
#include <mpi.h>

#include <cstdio>
#include <string>
#include <vector>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank = -1, size = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    std::vector<long> mine(64), sum(64);
    for (std::size_t i = 0; i < mine.size(); i++)
        mine[i] = (long)(rank + 1) * (long)(i + 1);
    MPI_Allreduce(mine.data(), sum.data(), (int)sum.size(), MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    int bad = 0;
    long ranks_sum = (long)size * (size + 1) / 2;
    for (std::size_t i = 0; i < sum.size(); i++)
        bad += sum[i] != ranks_sum * (long)(i + 1);
    std::string out = "from " + std::to_string(rank), in(32, '\0');
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    MPI_Status st;
    MPI_Sendrecv(out.c_str(), (int)out.size() + 1, MPI_CHAR, next, 7, &in[0], (int)in.size(), MPI_CHAR,
                 prev, 7, MPI_COMM_WORLD, &st);
    bad += std::string(in.c_str()) != "from " + std::to_string(prev);
    int total = 0;
    MPI_Reduce(&bad, &total, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0)
        std::printf(total == 0 ? "cxx_job: %d ranks, checks passed\n" : "cxx_job: %d ranks, %d checks FAILED\n",
                    size, total);
    MPI_Finalize();
    return total != 0;
}
