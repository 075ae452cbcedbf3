/* Many ranks on one node (issue 15): a ring exchange both ways (small and
 * rendezvous-sized messages), a pairing across the ring, and allreduces,
 * every value checked. Then what a rank holds: open descriptors and mapped
 * shared-memory segments of Plexus must stay bounded by the peers it talked
 * to (a few dozen), not grow with the job.
 * usage: many_ranks (run with any number of ranks)
 */
#include <dirent.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SMALL 64
#define LARGE (64 * 1024 / (int)sizeof(int))
#define BOUND 64        /* descriptors and segments a rank may hold here */

static int errors, checks;

static void check(int ok, const char *what, int rank, int a, int b)
{
    checks++;
    if (!ok) {
        if (errors < 10)
            fprintf(stderr, "many_ranks: rank %d: %s (%d != %d)\n", rank, what, a, b);
        errors++;
    }
}

static int count_fds(void)
{
    DIR *d = opendir("/proc/self/fd");
    int n = 0;
    if (!d)
        return -1;
    while (readdir(d))
        n++;
    closedir(d);
    return n - 3;       /* ., .., the directory's own descriptor */
}

static int count_segments(void)
{
    FILE *f = fopen("/proc/self/maps", "r");
    char line[512];
    int n = 0;
    if (!f)
        return -1;
    while (fgets(line, sizeof line, f))
        n += strstr(line, "/dev/shm/plexus-") != NULL;
    fclose(f);
    return n;
}

static void exchange(int rank, int to, int from, int count, int tag)
{
    int *out = malloc((size_t)count * sizeof *out), *in = malloc((size_t)count * sizeof *in);
    for (int i = 0; i < count; i++) {
        out[i] = rank * 7919 + i * 31 + tag;
        in[i] = -1;
    }
    MPI_Request rq[2];
    MPI_Irecv(in, count, MPI_INT, from, tag, MPI_COMM_WORLD, &rq[0]);
    MPI_Isend(out, count, MPI_INT, to, tag, MPI_COMM_WORLD, &rq[1]);
    MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
    int bad = 0;
    for (int i = 0; i < count; i++)
        bad += in[i] != from * 7919 + i * 31 + tag;
    check(bad == 0, "ring data", rank, bad, 0);
    free(out);
    free(in);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, n;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    int right = (rank + 1) % n, left = (rank + n - 1) % n;

    for (int round = 0; round < 3; round++) {
        exchange(rank, right, left, SMALL, 10 + round);
        exchange(rank, left, right, SMALL, 20 + round);
    }
    exchange(rank, right, left, LARGE, 30);
    exchange(rank, (rank + n / 2) % n, (rank + n - n / 2) % n, SMALL, 40);

    long sum = 0, me = rank;
    MPI_Allreduce(&me, &sum, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    check(sum == (long)n * (n - 1) / 2, "allreduce sum", rank, (int)sum, n * (n - 1) / 2);
    double v[8], r[8];
    for (int i = 0; i < 8; i++)
        v[i] = rank == n - 1 - i % n ? 1000.0 + i : (double)i;
    MPI_Allreduce(v, r, 8, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    for (int i = 0; i < 8; i++)
        check(r[i] == 1000.0 + i, "allreduce max", rank, (int)r[i], 1000 + i);

    int fds = count_fds(), segs = count_segments();
    check(fds >= 0 && fds <= BOUND, "open descriptors", rank, fds, BOUND);
    check(segs >= 0 && segs <= BOUND, "mapped segments", rank, segs, BOUND);

    int tot[2] = { 0, 0 }, mine[2] = { errors, checks }, maxfd = 0;
    MPI_Reduce(mine, tot, 2, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    MPI_Reduce(&fds, &maxfd, 1, MPI_INT, MPI_MAX, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        if (tot[0])
            printf("many_ranks: %d of %d checks failed (np=%d)\n", tot[0], tot[1], n);
        else
            printf("many_ranks: %d checks passed (np=%d, at most %d descriptors per rank)\n", tot[1], n, maxfd);
    }
    MPI_Finalize();
    return tot[0] != 0;
}
