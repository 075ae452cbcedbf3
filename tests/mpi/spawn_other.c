/*
 * spawn_other.c - the second program of spawn.c's MPI_Comm_spawn_multiple:
 * checks its parent, MPI_APPNUM (1) and its arguments ("beta", "with
 * space"), and reports them to the parents as spawn.c's children do.
 */
#include "plx_test.h"

int main(int argc, char **argv)
{
    plx_test_init(&argc, &argv, "spawn_other");
    MPI_Comm parent;
    PLX_CHECK_MPI(MPI_Comm_get_parent(&parent));
    PLX_CHECK(parent != MPI_COMM_NULL, "spawn_other runs only as a spawned child");
    int *app, flag, size;
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_APPNUM, &app, &flag);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int args_ok = argc == 3 && !strcmp(argv[1], "beta") && !strcmp(argv[2], "with space");
    int v = (flag ? *app : -9) * 1000 + size * 100 + 2 * args_ok;
    PLX_CHECK_MPI(MPI_Allgather(&v, 1, MPI_INT, NULL, 0, MPI_INT, parent));
    PLX_CHECK_MPI(MPI_Comm_disconnect(&parent));
    return plx_test_finish();
}
