/* bench/rma_latency.c — one-sided latency from rank 0 to rank 1's window
 * (MPI_Win_allocate): one MPI_Put or MPI_Get of `size` bytes plus its
 * synchronisation, either
 *   -s fence: MPI_Win_fence on both ranks after every operation, or
 *   -s lock:  MPI_Win_lock(EXCLUSIVE) / op / MPI_Win_unlock on rank 0 while
 *             rank 1 waits in MPI_Barrier (passive target).
 * The data of the last operation is checked.
 * Output rows: size_B latency_us (time per operation + synchronisation).
 */
#include "util.h"

static const char usage[] =
    "rma_latency: MPI_Put / MPI_Get latency, rank 0 -> window on rank 1 (us)\n"
    "usage: rma_latency [-o put|get] [-s fence|lock] [-m [min:]max] [-i N] [-x N] [-I N] [-X N]";

/* Stores into the local window inside an access epoch on ourselves, so the
 * update is visible under either memory model. */
static void fill_window(MPI_Win win, char *base, size_t size, unsigned key, int fence)
{
    int rank = bench_mpi_rank();
    if (fence) {
        MPI_Win_fence(0, win);
        if (rank == 1)
            bench_fill(base, size, key);
        MPI_Win_fence(0, win);
    } else {
        if (rank == 1) {
            MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, win);
            bench_fill(base, size, key);
            MPI_Win_unlock(1, win);
        }
        MPI_Barrier(MPI_COMM_WORLD);
    }
}

int main(int argc, char **argv)
{
    struct bench_opts o;
    MPI_Init(&argc, &argv);
    bench_opts_init(&o, 1, 16 * BENCH_MiB, 1000, 100);
    o.op = "put";
    o.sync = "lock";
    int rc = bench_mpi_start(&argc, &argv, &o, usage, 2, 0);
    int is_put = strcmp(o.op, "put") == 0, fence = strcmp(o.sync, "fence") == 0;
    if (!rc && ((!is_put && strcmp(o.op, "get")) || (!fence && strcmp(o.sync, "lock")))) {
        if (bench_mpi_rank() == 0)
            fprintf(stderr, "-o must be put or get, -s fence or lock\n");
        rc = 2;
    }
    if (rc) {
        MPI_Finalize();
        return rc - 1;
    }
    int rank = bench_mpi_rank();
    char *buf = bench_alloc(o.max_size), *base = NULL;
    MPI_Win win;
    MPI_Win_allocate((MPI_Aint)(o.max_size ? o.max_size : 1), 1, MPI_INFO_NULL, MPI_COMM_WORLD,
                     &base, &win);

    if (rank == 0) {
        char desc[96];
        snprintf(desc, sizeof(desc), "MPI_%s + %s, rank 0 -> window on rank 1",
                 is_put ? "Put" : "Get", fence ? "MPI_Win_fence" : "MPI_Win_lock/unlock");
        bench_print_header(fence ? (is_put ? "put_fence" : "get_fence")
                                 : (is_put ? "put_lock" : "get_lock"),
                           desc, &o, bench_mpi_size());
        printf("# op: %s\n# sync: %s\n", o.op, o.sync);
        printf("# columns: size_B latency_us\n");
        fflush(stdout);
    }
    for (size_t size = o.min_size; size <= o.max_size; size = bench_next_size(size)) {
        int iters = bench_iters(&o, size), warmup = bench_warmup(&o, size);
        unsigned key = (unsigned)size + 3u;
        double t0 = 0.0, t = 0.0;
        if (is_put) {
            if (rank == 0)
                bench_fill(buf, size, key);
            fill_window(win, base, size, 0, fence); /* another pattern */
        } else {
            memset(buf, 0, size);
            fill_window(win, base, size, key, fence);
        }
        if (fence) {
            MPI_Win_fence(0, win);
            for (int i = 0; i < warmup + iters; i++) {
                if (i == warmup)
                    t0 = MPI_Wtime();
                if (rank == 0) {
                    if (is_put)
                        MPI_Put(buf, (int)size, MPI_BYTE, 1, 0, (int)size, MPI_BYTE, win);
                    else
                        MPI_Get(buf, (int)size, MPI_BYTE, 1, 0, (int)size, MPI_BYTE, win);
                }
                MPI_Win_fence(0, win);
            }
            t = MPI_Wtime() - t0;
        } else {
            MPI_Barrier(MPI_COMM_WORLD);
            if (rank == 0) {
                for (int i = 0; i < warmup + iters; i++) {
                    if (i == warmup)
                        t0 = MPI_Wtime();
                    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, win);
                    if (is_put)
                        MPI_Put(buf, (int)size, MPI_BYTE, 1, 0, (int)size, MPI_BYTE, win);
                    else
                        MPI_Get(buf, (int)size, MPI_BYTE, 1, 0, (int)size, MPI_BYTE, win);
                    MPI_Win_unlock(1, win);
                }
                t = MPI_Wtime() - t0;
            }
            MPI_Barrier(MPI_COMM_WORLD);
        }
        if (is_put && rank == 1 && fence) {
            /* the closing fence made the puts visible; no lock epoch in the
             * middle of a fence sequence */
            bench_expect(base, size, key, "put target", size);
        } else if (is_put && rank == 1) {
            MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, win);
            bench_expect(base, size, key, "put target", size);
            MPI_Win_unlock(1, win);
        } else if (!is_put && rank == 0) {
            bench_expect(buf, size, key, "get origin", size);
        }
        if (rank == 0) {
            printf("%zu %.3f\n", size, t * 1e6 / iters);
            fflush(stdout);
        }
        if (size == 0 && o.max_size == 0)
            break;
    }
    if (rank == 0)
        bench_print_end();
    MPI_Win_free(&win);
    free(buf);
    MPI_Finalize();
    return 0;
}
