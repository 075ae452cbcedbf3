/* bench/latency_vs_tcp.c — MPI ping-pong against a plain TCP socket
 * ping-pong between the same two processes, in alternating blocks.
 *
 * Comparing two separate runs (bench/latency, then bench/limits/tcp) on a
 * virtual machine mixes the libraries' difference with the host's drift:
 * here the raw TCP loopback round trip moved between 3.3 and 5.0 us within
 * an hour with nothing else running. This program keeps one pair of
 * processes, on the same cores, and alternates blocks of MPI_Send/MPI_Recv
 * with blocks of send()/recv() on its own TCP connection (TCP_NODELAY,
 * non-blocking calls retried in a busy loop, as in bench/limits/tcp.c). Each
 * block pair gives a ratio; the row reports the medians of the MPI blocks,
 * of the socket blocks and of the ratios. The order inside a pair flips
 * every block, so neither side always runs first.
 *
 * The MPI side uses whatever the library chose for the two ranks: to
 * measure an MPI's TCP path, make it use TCP (Plexus:
 * PLEXUS_TRANSPORTS=tcp; Open MPI: --mca btl tcp,self; MPICH ch4:ofi:
 * FI_PROVIDER=tcp or sockets).
 *
 * Exactly two ranks; rank 0 listens on every address, rank 1 connects to
 * -o ADDR (default 127.0.0.1, i.e. both ranks on one host).
 * -i N is the number of ping-pongs per size and side, split into -d B
 * blocks (default 40). A 0-byte MPI message is compared with a 1-byte
 * socket message (TCP cannot carry an empty one).
 * Output rows: size_B latency_us raw_latency_us ratio
 */
#include "util.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

static const char usage[] =
    "latency_vs_tcp: MPI ping-pong and a TCP socket ping-pong between the same two\n"
    "processes, alternating blocks; half round trips (us) and their ratio\n"
    "usage: latency_vs_tcp [-o ADDR (rank 0's address, default 127.0.0.1)] [-d BLOCKS]\n"
    "                      [-m [min:]max] [-i N] [-x N] [-I N] [-X N]";

/* The socket pair, on ranks 0 and 1 (exactly two ranks): rank 1 connects to
 * addr, where the listen backlog completes the connection, and only once
 * both know that it did does rank 0 accept (an accept() that waited for a
 * rank that failed would hang outside MPI). Returns the socket, or -1 on
 * both ranks. */
static int connect_pair(int rank, const char *addr)
{
    int lfd = -1, fd = -1, port = 0, one = 1;
    if (rank == 0) {
        lfd = socket(AF_INET, SOCK_STREAM, 0);
        struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_ANY) };
        socklen_t len = sizeof(a);
        if (lfd >= 0 && bind(lfd, (struct sockaddr *)&a, sizeof(a)) == 0 && listen(lfd, 1) == 0 &&
            getsockname(lfd, (struct sockaddr *)&a, &len) == 0)
            port = ntohs(a.sin_port);
    }
    MPI_Bcast(&port, 1, MPI_INT, 0, MPI_COMM_WORLD);
    int ok = port != 0;
    if (rank == 1 && ok) {
        struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
        ok = inet_pton(AF_INET, addr, &a.sin_addr) == 1 && (fd = socket(AF_INET, SOCK_STREAM, 0)) >= 0 &&
             connect(fd, (struct sockaddr *)&a, sizeof(a)) == 0;
    }
    MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (rank == 0 && ok)
        fd = accept(lfd, NULL, NULL);
    if (lfd >= 0)
        close(lfd);
    if (!ok && fd >= 0) {
        close(fd);
        fd = -1;
    }
    if (fd >= 0)
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    return fd;
}

/* n ping-pongs of size bytes; rank 0 starts. Returns seconds. */
static double mpi_block(int rank, char *sbuf, char *rbuf, size_t size, int n)
{
    double t0 = MPI_Wtime();
    for (int i = 0; i < n; i++) {
        if (rank == 0) {
            MPI_Send(sbuf, (int)size, MPI_BYTE, 1, 1, MPI_COMM_WORLD);
            MPI_Recv(rbuf, (int)size, MPI_BYTE, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(rbuf, (int)size, MPI_BYTE, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(sbuf, (int)size, MPI_BYTE, 0, 1, MPI_COMM_WORLD);
        }
    }
    return MPI_Wtime() - t0;
}

static double raw_block(int rank, int fd, char *sbuf, char *rbuf, size_t size, int n)
{
    size_t len = size ? size : 1;
    double t0 = MPI_Wtime();
    for (int i = 0; i < n; i++) {
        int err = rank == 0 ? bench_sock_full(fd, sbuf, len, 1, MSG_DONTWAIT) ||
                                  bench_sock_full(fd, rbuf, len, 0, MSG_DONTWAIT)
                            : bench_sock_full(fd, rbuf, len, 0, MSG_DONTWAIT) ||
                                  bench_sock_full(fd, sbuf, len, 1, MSG_DONTWAIT);
        if (err) {
            /* the peer may be inside an MPI block by now: end the job */
            printf("# error: rank %d: the TCP socket failed: %s\n", rank, strerror(errno));
            fflush(stdout);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
    }
    return MPI_Wtime() - t0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof(*v), cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

int main(int argc, char **argv)
{
    struct bench_opts o;
    MPI_Init(&argc, &argv);
    bench_opts_init(&o, 0, 1024, 20000, 1000);
    o.param = 40;
    int rc = bench_mpi_start(&argc, &argv, &o, usage, 2, 0);
    if (rc) {
        MPI_Finalize();
        return rc - 1;
    }
    int rank = bench_mpi_rank();
    const char *addr = o.op[0] ? o.op : "127.0.0.1";
    int blocks = (int)o.param;
    if (blocks < 1 || blocks > 100000) {
        if (rank == 0)
            printf("# error: -d %g: the number of blocks must be 1..100000\n", o.param);
        MPI_Finalize();
        return 1;
    }
    if (bench_mpi_size() != 2) {
        /* more ranks would spin in collectives on the same cores */
        if (rank == 0)
            printf("# error: latency_vs_tcp runs with exactly 2 ranks (got %d)\n", bench_mpi_size());
        MPI_Finalize();
        return 1;
    }
    int fd = connect_pair(rank, addr);
    if (fd < 0) {
        if (rank == 0)
            printf("# error: no TCP connection between ranks 0 and 1 (rank 1 connects to %s)\n", addr);
        MPI_Finalize();
        return 1;
    }
    size_t maxb = o.max_size ? o.max_size : 1;
    char *sbuf = bench_alloc(maxb), *rbuf = bench_alloc(maxb);
    double *tm = malloc(sizeof(double) * (size_t)blocks), *tr = malloc(sizeof(double) * (size_t)blocks),
           *ratio = malloc(sizeof(double) * (size_t)blocks);

    if (rank == 0) {
        bench_print_header("latency_vs_tcp", "MPI and TCP socket ping-pong, alternating blocks", &o,
                           bench_mpi_size());
        printf("# socket: rank 1 connects to %s, TCP_NODELAY, non-blocking calls polled\n", addr);
        printf("# blocks: %d per size and side; rows are medians over blocks\n", blocks);
        printf("# columns: size_B latency_us raw_latency_us ratio\n");
        fflush(stdout);
    }
    for (size_t size = o.min_size; size <= o.max_size; size = bench_next_size(size)) {
        int iters = bench_iters(&o, size), warmup = bench_warmup(&o, size);
        int per = iters / blocks > 0 ? iters / blocks : 1;
        bench_fill(sbuf, size ? size : 1, (unsigned)(size + (size_t)rank));
        memset(rbuf, 0, maxb);
        MPI_Barrier(MPI_COMM_WORLD);
        mpi_block(rank, sbuf, rbuf, size, warmup);
        raw_block(rank, fd, sbuf, rbuf, size, warmup);
        for (int b = 0; b < blocks; b++) {
            if (b % 2 == 0) {
                tm[b] = mpi_block(rank, sbuf, rbuf, size, per);
                tr[b] = raw_block(rank, fd, sbuf, rbuf, size, per);
            } else {
                tr[b] = raw_block(rank, fd, sbuf, rbuf, size, per);
                tm[b] = mpi_block(rank, sbuf, rbuf, size, per);
            }
            ratio[b] = tm[b] / tr[b];
        }
        bench_expect(rbuf, size ? size : 1, (unsigned)(size + (size_t)(1 - rank)), "ping-pong", size);
        if (rank == 0) {
            double scale = 1e6 / (2.0 * per);
            double mm = median(tm, blocks) * scale, mr = median(tr, blocks) * scale;
            printf("%zu %.3f %.3f %.3f\n", size, mm, mr, median(ratio, blocks));
            fflush(stdout);
        }
        if (size == 0 && o.max_size == 0)
            break;
    }
    if (rank == 0)
        bench_print_end();
    if (fd >= 0)
        close(fd);
    free(tm);
    free(tr);
    free(ratio);
    free(sbuf);
    free(rbuf);
    MPI_Finalize();
    return 0;
}
