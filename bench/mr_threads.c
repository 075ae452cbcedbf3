/* bench/mr_threads.c — multi-threaded message rate: the threads variant of
 * mr. With N ranks, rank i < N/2 sends to rank i + N/2 (an odd last rank
 * idles); each rank runs T threads (-d T, default 4) that all communicate at
 * once under MPI_THREAD_MULTIPLE. Thread t of a sender posts a window of
 * MPI_Isend to thread t of its receiver, waits for them, then for a 1-int
 * ack, as in mr.c; the receiver's thread posts the window of MPI_Irecv. Each
 * thread pair has its own communicator (a duplicate per thread, the usual
 * way to keep threads' traffic apart), or with -b they all share
 * MPI_COMM_WORLD and are told apart by tag. Every received message is checked.
 * Reports, per size, the aggregate over all threads and pairs: messages per
 * second (total messages / the slowest thread's time) and MB/s.
 * Output rows: size_B bw_MBps msgs_per_s. Plain MPI: builds with any mpicc.
 */
#include "util.h"
#include <pthread.h>

static const char usage[] =
    "mr_threads: multi-threaded message rate; rank i sends to rank i + N/2, T threads each\n"
    "usage: mr_threads [-m [min:]max] [-i N] [-x N] [-I N] [-X N] [-W window] [-d threads] [-b]\n"
    "  -d T   threads per rank (default 4)\n"
    "  -b     all threads on MPI_COMM_WORLD (tags tell them apart) instead of a communicator each";

#define MRT_MAX_THREADS 64

struct mrt_thread {
    int t;
    MPI_Comm comm;
    int tag;
    char *sbuf, *rbufs;
    MPI_Request *reqs;
    MPI_Status *stats;          /* not MPI_STATUSES_IGNORE: GCC's -Wstringop-overflow misreads it */
    double seconds;
};

static struct bench_opts o;
static int rank, peer, sender, nthreads;
static size_t cur_size;
static pthread_barrier_t start_line;

static void *mrt_run(void *arg)
{
    struct mrt_thread *th = arg;
    size_t size = cur_size;
    int w = bench_window_for(&o, size);
    int iters = bench_iters(&o, size), warmup = bench_warmup(&o, size);
    unsigned key = (unsigned)size * 31u + (unsigned)th->t + 7u;
    int ack = 0;
    double t0 = 0;

    if (sender)
        bench_fill(th->sbuf, size, key);
    pthread_barrier_wait(&start_line);
    for (int i = 0; i < warmup + iters; i++) {
        if (i == warmup)
            t0 = MPI_Wtime();
        if (sender) {
            for (int j = 0; j < w; j++)
                MPI_Isend(th->sbuf, (int)size, MPI_BYTE, peer, th->tag, th->comm, &th->reqs[j]);
            MPI_Waitall(w, th->reqs, th->stats);
            MPI_Recv(&ack, 1, MPI_INT, peer, th->tag + 1, th->comm, MPI_STATUS_IGNORE);
        } else {
            for (int j = 0; j < w; j++)
                MPI_Irecv(th->rbufs + (size_t)j * size, (int)size, MPI_BYTE, peer, th->tag, th->comm,
                          &th->reqs[j]);
            MPI_Waitall(w, th->reqs, th->stats);
            MPI_Send(&ack, 1, MPI_INT, peer, th->tag + 1, th->comm);
        }
    }
    th->seconds = MPI_Wtime() - t0;
    if (!sender)
        for (int j = 0; j < w; j++)
            bench_expect(th->rbufs + (size_t)j * size, size, key, "threaded receive", size);
    return NULL;
}

int main(int argc, char **argv)
{
    int provided = 0;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    bench_opts_init(&o, 1, 64 * BENCH_KiB, 2000, 100);
    o.window = 32;
    int rc = bench_mpi_start(&argc, &argv, &o, usage, 2, 0);
    if (rc) {
        MPI_Finalize();
        return rc - 1;
    }
    rank = bench_mpi_rank();
    int n = bench_mpi_size(), pairs = n / 2;
    nthreads = o.param >= 1 ? (int)o.param : 4;
    if (nthreads > MRT_MAX_THREADS)
        nthreads = MRT_MAX_THREADS;
    if (provided < MPI_THREAD_MULTIPLE) {
        if (rank == 0)
            printf("# plexus-bench: mr_threads\n# error: MPI_THREAD_MULTIPLE not provided (%d)\n", provided);
        MPI_Finalize();
        return 1;
    }
    int active = rank < 2 * pairs;
    sender = rank < pairs;
    peer = sender ? rank + pairs : rank - pairs;

    struct mrt_thread th[MRT_MAX_THREADS];
    pthread_t tid[MRT_MAX_THREADS];
    for (int t = 0; t < nthreads; t++) {
        th[t].t = t;
        if (o.flag) {
            th[t].comm = MPI_COMM_WORLD;
            th[t].tag = 2 * t;
        } else {
            MPI_Comm_dup(MPI_COMM_WORLD, &th[t].comm);   /* collective: every rank, same order */
            th[t].tag = 0;
        }
        th[t].sbuf = bench_alloc(o.max_size ? o.max_size : 1);
        th[t].rbufs = bench_alloc(bench_window_bytes(&o));
        th[t].reqs = bench_alloc(sizeof(MPI_Request) * (size_t)o.window);
        th[t].stats = bench_alloc(sizeof(MPI_Status) * (size_t)o.window);
    }
    pthread_barrier_init(&start_line, NULL, (unsigned)nthreads);

    if (rank == 0) {
        bench_print_header("mr_threads", "multi-threaded window message rate", &o, n);
        printf("# pairs: %d\n# threads: %d\n# window: %d\n# comms: %s\n", pairs, nthreads, o.window,
               o.flag ? "MPI_COMM_WORLD, a tag per thread" : "a duplicate per thread");
        printf("# columns: size_B bw_MBps msgs_per_s\n");
        fflush(stdout);
    }
    for (size_t size = o.min_size; size <= o.max_size; size = bench_next_size(size)) {
        MPI_Barrier(MPI_COMM_WORLD);
        cur_size = size;
        double slowest = 0;
        if (active) {
            for (int t = 0; t < nthreads; t++)
                pthread_create(&tid[t], NULL, mrt_run, &th[t]);
            for (int t = 0; t < nthreads; t++) {
                pthread_join(tid[t], NULL);
                if (sender && th[t].seconds > slowest)
                    slowest = th[t].seconds;
            }
        }
        double worst = 0;
        MPI_Reduce(&slowest, &worst, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
        if (rank == 0) {
            double msgs = (double)pairs * nthreads * bench_window_for(&o, size) * bench_iters(&o, size);
            double rate = worst > 0 ? msgs / worst : 0;
            printf("%zu %.2f %.0f\n", size, rate * (double)size / 1e6, rate);
            fflush(stdout);
        }
        if (size == 0 && o.max_size == 0)
            break;
    }
    if (rank == 0)
        bench_print_end();
    pthread_barrier_destroy(&start_line);
    for (int t = 0; t < nthreads; t++) {
        if (!o.flag)
            MPI_Comm_free(&th[t].comm);
        free(th[t].sbuf);
        free(th[t].rbufs);
        free(th[t].reqs);
        free(th[t].stats);
    }
    MPI_Finalize();
    return 0;
}
