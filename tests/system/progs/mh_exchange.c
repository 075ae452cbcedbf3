/*
 * mh_exchange: the MPI program of the multi-host system tests
 * (test_multihost.py). Standard MPI only.
 *
 * Usage: mh_exchange MODE [ARG] [ignored...]
 *   init        MPI_Init, Comm_rank/size, Get_processor_name, Finalize; prints
 *               "mh_exchange: rank R of S on HOST" (no message between ranks
 *               beyond what MPI_Init and MPI_Finalize do themselves)
 *   init-abort CODE  like init, without MPI_Finalize: then rank 0 waits 2 s (the
 *               others print meanwhile) and calls MPI_Abort(CODE), the others
 *               sleep. Needs no transport between hosts, only PMI.
 *   pairs [MiB] every pair of ranks exchanges ARG MiB (default 64) both ways
 *               with MPI_Sendrecv, one round per pair in a round-robin
 *               tournament; every byte received is checked against a pattern
 *               that depends on sender, receiver and offset. Prints
 *               "mh_exchange: rank R pairs ok (N peers, M MiB each)"; exit 0 only
 *               if every check passed
 *   ring        print "mh_exchange: rank R ready", then pass a token around
 *               the ring forever (1 KiB messages, checked): only a failure or
 *               the launcher ends it
 *   late FILE   print "ready", wait (without MPI calls) until FILE exists,
 *               then ring: the first connections open only after the test
 *               has had its way with the network
 *   stop R      rank R prints "ready" and stops itself (SIGSTOP) before any
 *               message; every other rank prints "ready" and sends to it: the
 *               connections are accepted by R's kernel, never answered
 *   cut R       ring; after 100 rounds rank R resets its TCP connections
 *               behind MPI's back (shutdown + SO_LINGER 0 on every IP socket
 *               but the PMI one), prints "cut" and sleeps: its peers see a
 *               peer that vanished without finalizing
 *   stray FILE  print "ready", then poll MPI (MPI_Iprobe, any source and tag)
 *               until FILE exists: no message may arrive meanwhile (strangers
 *               are at the ports); then a checked ring of 100 rounds, a
 *               checked 4 MiB exchange with each neighbour, and a last
 *               Iprobe that finds nothing. Prints "mh_exchange: rank R stray ok"
 *   lose V H    a peer is lost while requests to and from it are pending. H is
 *               "return" (MPI_ERRORS_RETURN on MPI_COMM_WORLD) or "fatal" (the
 *               default handler). A checked ring of 10 rounds opens every
 *               connection, then every rank prints "ready"; rank V sleeps (the
 *               test cuts its host off). The others post a receive from V, a
 *               wildcard receive (rank 0 only) and a 1 MiB send to V
 *               (rendezvous), wait for each, then try a blocking send to and
 *               receive from V and MPI_Probe, MPI_Iprobe and MPI_Mprobe of V
 *               (which must not wait forever), cancel an Isend to V and
 *               wait for it, probe (Probe, Iprobe, Mprobe) and receive from
 *               MPI_ANY_SOURCE with no message there, collect the result of
 *               a second thread (MPI_THREAD_MULTIPLE) blocked since "ready"
 *               in MPI_Recv from V, and call MPI_Comm_dup, MPI_Barrier,
 *               MPI_Bcast (root V) and MPI_Allreduce on MPI_COMM_WORLD; for
 *               each they print "mh_exchange: rank R CALL:
 *               class C (NAME): TEXT" (or "CALL: success"), and after a
 *               failed probe "CALL status: source S, tag T, error E". Then
 *               MPIX_Comm_failure_ack, a wildcard Iprobe that must succeed
 *               (finding nothing), and the survivors
 *               exchange 1 MiB each way with their ring neighbours among
 *               themselves, checked, print "mh_exchange: rank R survivors ok",
 *               pass a token around with wildcard receives,
 *               and rank 0 calls MPI_Abort(MPI_COMM_WORLD, 7): the job cannot
 *               finalize without V
 * Extra arguments are ignored (tests add a unique marker for pgrep).
 */
#define _DEFAULT_SOURCE
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>
#include <dirent.h>
#include <pthread.h>

static int rank, size;

static uint64_t pattern(int from, int to, size_t i)
{
    uint64_t x = ((uint64_t)from << 48) ^ ((uint64_t)to << 32) ^ (uint64_t)i;
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    return x;
}

static void fill(uint64_t *buf, size_t n, int from, int to)
{
    for (size_t i = 0; i < n; i++)
        buf[i] = pattern(from, to, i);
}

/* Number of wrong words (reports the first). */
static size_t check(const uint64_t *buf, size_t n, int from, int to)
{
    size_t bad = 0;
    for (size_t i = 0; i < n; i++) {
        if (buf[i] != pattern(from, to, i)) {
            if (bad == 0)
                fprintf(stderr, "mh_exchange: rank %d: data from rank %d wrong at byte %zu\n",
                        to, from, i * 8);
            bad++;
        }
    }
    return bad;
}

static int mode_pairs(size_t mib)
{
    size_t n = mib * (1u << 20) / sizeof(uint64_t);
    uint64_t *sbuf = malloc(n * sizeof(uint64_t)), *rbuf = malloc(n * sizeof(uint64_t));
    int errors = 0, peers = 0;
    /* Round-robin tournament over an even number of players (a dummy when
     * size is odd): in round k, player p meets (k - p) mod m. */
    int m = size % 2 == 0 ? size : size + 1;

    if (sbuf == NULL || rbuf == NULL) {
        fprintf(stderr, "mh_exchange: rank %d: cannot allocate 2 x %zu MiB\n", rank, mib);
        return 1;
    }
    for (int k = 0; k < m - 1; k++) {
        int peer;
        if (rank == m - 1)
            peer = k;
        else if (rank == k)
            peer = m - 1;
        else
            peer = ((2 * k - rank) % (m - 1) + (m - 1)) % (m - 1);
        if (peer >= size)
            continue;               /* the dummy player: a bye */
        fill(sbuf, n, rank, peer);
        memset(rbuf, 0, n * sizeof(uint64_t));
        MPI_Status st;
        int count = -1;
        MPI_Sendrecv(sbuf, (int)(n * 8), MPI_BYTE, peer, k, rbuf, (int)(n * 8), MPI_BYTE, peer,
                     k, MPI_COMM_WORLD, &st);
        MPI_Get_count(&st, MPI_BYTE, &count);
        if (count != (int)(n * 8) || st.MPI_SOURCE != peer || st.MPI_TAG != k) {
            fprintf(stderr, "mh_exchange: rank %d: from rank %d got count %d source %d tag %d, "
                    "expected %zu, %d, %d\n", rank, peer, count, st.MPI_SOURCE, st.MPI_TAG,
                    n * 8, peer, k);
            errors++;
        }
        peers++;
        errors += check(rbuf, n, peer, rank) != 0;
    }
    free(sbuf);
    free(rbuf);
    if (errors == 0)
        printf("mh_exchange: rank %d pairs ok (%d peers, %zu MiB each)\n", rank, peers, mib);
    return errors != 0;
}

static void wait_for_file(const char *path)
{
    struct stat sb;
    while (stat(path, &sb) != 0)
        usleep(20000);
}

/* Token ring; `cut_rank` resets its connections after 100 rounds (-1: never),
 * `rounds` < 0: forever. Returns the number of errors. */
static int ring(long rounds, int cut_rank)
{
    char token[1024];
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    for (long round = 0; rounds < 0 || round < rounds; round++) {
        if (round == 100 && rank == cut_rank) {
            const char *pmi = getenv("PMI_FD");
            int pmi_fd = pmi ? atoi(pmi) : -1;
            DIR *d = opendir("/proc/self/fd");
            struct dirent *e;
            while (d && (e = readdir(d)) != NULL) {
                int fd = atoi(e->d_name);
                struct sockaddr_storage ss;
                socklen_t sl = sizeof ss;
                if (e->d_name[0] == '.' || fd == pmi_fd || fd == dirfd(d) ||
                    getsockname(fd, (struct sockaddr *)&ss, &sl) != 0 ||
                    (ss.ss_family != AF_INET && ss.ss_family != AF_INET6))
                    continue;
                struct linger lg = { 1, 0 };
                setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof lg);
                shutdown(fd, SHUT_RDWR);
            }
            if (d)
                closedir(d);
            printf("mh_exchange: rank %d cut\n", rank);
            for (;;)
                sleep(60);
        }
        if (rank == 0) {
            memset(token, (int)(round & 0x7f), sizeof(token));
            MPI_Send(token, sizeof(token), MPI_CHAR, next, 1, MPI_COMM_WORLD);
            MPI_Recv(token, sizeof(token), MPI_CHAR, prev, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(token, sizeof(token), MPI_CHAR, prev, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(token, sizeof(token), MPI_CHAR, next, 1, MPI_COMM_WORLD);
        }
        if (token[0] != (char)(round & 0x7f) || token[1023] != token[0]) {
            fprintf(stderr, "mh_exchange: rank %d: token corrupted in round %ld\n", rank, round);
            return 1;
        }
    }
    return 0;
}

static const char *class_name(int cls)
{
#ifdef MPIX_ERR_PROC_FAILED
    if (cls == MPIX_ERR_PROC_FAILED)
        return "MPIX_ERR_PROC_FAILED";
#endif
    return cls == MPI_ERR_OTHER ? "MPI_ERR_OTHER" : cls == MPI_SUCCESS ? "MPI_SUCCESS" : "other";
}

/* Prints what a call returned; 1 if it was an error. */
static int report(const char *call, int rc)
{
    if (rc == MPI_SUCCESS) {
        printf("mh_exchange: rank %d %s: success\n", rank, call);
        return 0;
    }
    char text[MPI_MAX_ERROR_STRING];
    int cls = -1, len = 0;
    MPI_Error_class(rc, &cls);
    MPI_Error_string(rc, text, &len);
    printf("mh_exchange: rank %d %s: class %d (%s): %s\n", rank, call, cls, class_name(cls), text);
    return 1;
}

static int lose_victim;

/* A second thread blocked in MPI_Recv from the lost rank (MPI_THREAD_MULTIPLE). */
static void *lose_thread(void *arg)
{
    char b[8];
    MPI_Status st;
    int rc = MPI_Recv(b, sizeof b, MPI_CHAR, lose_victim, 13, MPI_COMM_WORLD, &st);
    report("MPI_Recv from the lost rank in a second thread", rc);
    *(int *)arg = rc != MPI_SUCCESS;   /* it must fail */
    return NULL;
}

/* What a failed probe left in its status: the lost rank, the tag asked, the code. */
static int report_status(const char *call, int rc, const MPI_Status *st, int tag)
{
    printf("mh_exchange: rank %d %s status: source %d, tag %d, error %s\n", rank, call, st->MPI_SOURCE,
           st->MPI_TAG, st->MPI_ERROR == rc ? "the code returned" : "other");
    return rc == MPI_SUCCESS || st->MPI_SOURCE != lose_victim || st->MPI_TAG != tag || st->MPI_ERROR != rc;
}

static int mode_lose(int victim, const char *handler)
{
    int errors = 0;
    if (strcmp(handler, "return") == 0)
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    errors += ring(10, -1);
    lose_victim = victim;
    pthread_t th;
    int th_failed = 0;
    if (rank != victim)
        pthread_create(&th, NULL, lose_thread, &th_failed);
    printf("mh_exchange: rank %d ready\n", rank);
    if (rank == victim) {
        for (;;)
            sleep(60);
    }
    size_t n = (1u << 20) / sizeof(uint64_t);
    uint64_t *sbuf = malloc(n * 8), *rbuf = malloc(n * 8);
    char small[64];
    MPI_Request rq[3];
    MPI_Status st;
    fill(sbuf, n, rank, victim);
    MPI_Irecv(small, sizeof small, MPI_CHAR, victim, 5, MPI_COMM_WORLD, &rq[0]);
    if (rank == 0)
        MPI_Irecv(small, sizeof small, MPI_CHAR, MPI_ANY_SOURCE, 6, MPI_COMM_WORLD, &rq[1]);
    MPI_Isend(sbuf, (int)(n * 8), MPI_BYTE, victim, 7, MPI_COMM_WORLD, &rq[2]);
    report("MPI_Wait(MPI_Irecv from the lost rank)", MPI_Wait(&rq[0], &st));
    if (rank == 0)
        report("MPI_Wait(MPI_Irecv from MPI_ANY_SOURCE)", MPI_Wait(&rq[1], &st));
    report("MPI_Wait(MPI_Isend of 1 MiB to the lost rank)", MPI_Wait(&rq[2], &st));
    report("MPI_Send to the lost rank", MPI_Send(small, 8, MPI_CHAR, victim, 8, MPI_COMM_WORLD));
    report("MPI_Recv from the lost rank", MPI_Recv(small, 8, MPI_CHAR, victim, 8, MPI_COMM_WORLD, &st));
    int flag = -1;
    MPI_Message msg;
    int prc = MPI_Probe(victim, 8, MPI_COMM_WORLD, &st);
    report("MPI_Probe of the lost rank", prc);
    errors += report_status("MPI_Probe of the lost rank", prc, &st, 8);
    report("MPI_Iprobe of the lost rank", MPI_Iprobe(victim, 8, MPI_COMM_WORLD, &flag, &st));
    errors += flag != 0;
    report("MPI_Mprobe of the lost rank", MPI_Mprobe(victim, 8, MPI_COMM_WORLD, &msg, &st));
    errors += msg != MPI_MESSAGE_NULL;
    MPI_Request cq;     /* the usual clean-up after an error: cancel, then wait */
    MPI_Isend(small, 8, MPI_CHAR, victim, 11, MPI_COMM_WORLD, &cq);
    MPI_Cancel(&cq);
    report("MPI_Wait(MPI_Isend to the lost rank, cancelled)", MPI_Wait(&cq, &st));
    /* wildcards find no message: they fail while the failure is not acknowledged */
    prc = MPI_Probe(MPI_ANY_SOURCE, 12, MPI_COMM_WORLD, &st);
    report("MPI_Probe of MPI_ANY_SOURCE", prc);
    errors += report_status("MPI_Probe of MPI_ANY_SOURCE", prc, &st, 12);
    flag = -1;
    prc = MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st);
    report("MPI_Iprobe of MPI_ANY_SOURCE", prc);
    errors += flag != 0 || report_status("MPI_Iprobe of MPI_ANY_SOURCE", prc, &st, MPI_ANY_TAG);
    msg = MPI_MESSAGE_NO_PROC;
    report("MPI_Mprobe of MPI_ANY_SOURCE", MPI_Mprobe(MPI_ANY_SOURCE, 12, MPI_COMM_WORLD, &msg, &st));
    errors += msg != MPI_MESSAGE_NULL;
    report("MPI_Recv from MPI_ANY_SOURCE", MPI_Recv(small, 8, MPI_CHAR, MPI_ANY_SOURCE, 12, MPI_COMM_WORLD, &st));
    errors += st.MPI_SOURCE != victim;
    pthread_join(th, NULL);
    errors += th_failed == 0;
    MPI_Comm dup = MPI_COMM_NULL;       /* collectives with a lost member: errors, not hangs */
    report("MPI_Comm_dup with the lost rank", MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    errors += dup != MPI_COMM_NULL;
    errors += !report("MPI_Barrier with the lost rank", MPI_Barrier(MPI_COMM_WORLD));
    int one = 1, sum = -1;
    errors += !report("MPI_Bcast from the lost rank", MPI_Bcast(&one, 1, MPI_INT, victim, MPI_COMM_WORLD));
    errors += !report("MPI_Allreduce with the lost rank",
                      MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    /* acknowledged: wildcards wait for the survivors again */
    MPIX_Comm_failure_ack(MPI_COMM_WORLD);
    flag = -1;
    prc = MPI_Iprobe(MPI_ANY_SOURCE, 12, MPI_COMM_WORLD, &flag, &st);
    report("MPI_Iprobe of MPI_ANY_SOURCE after MPIX_Comm_failure_ack", prc);
    errors += prc != MPI_SUCCESS || flag != 0;

    /* the survivors' ring */
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    if (next == victim)
        next = (next + 1) % size;
    if (prev == victim)
        prev = (prev + size - 1) % size;
    fill(sbuf, n, rank, next);
    memset(rbuf, 0, n * 8);
    int rc = MPI_Sendrecv(sbuf, (int)(n * 8), MPI_BYTE, next, 9, rbuf, (int)(n * 8), MPI_BYTE, prev, 9,
                          MPI_COMM_WORLD, &st);
    errors += report("MPI_Sendrecv with the survivors", rc);
    errors += check(rbuf, n, prev, rank) != 0;
    if (errors == 0)
        printf("mh_exchange: rank %d survivors ok\n", rank);
    fflush(stdout);
    /* every survivor has printed before rank 0 ends the job: a token goes
     * once around the survivors' ring after each has printed */
    char b = 0;
    if (rank == 0) {
        rc = MPI_Send(&b, 1, MPI_CHAR, next, 10, MPI_COMM_WORLD);
        rc = rc ? rc : MPI_Recv(&b, 1, MPI_CHAR, MPI_ANY_SOURCE, 10, MPI_COMM_WORLD, &st);
    } else {
        rc = MPI_Recv(&b, 1, MPI_CHAR, MPI_ANY_SOURCE, 10, MPI_COMM_WORLD, &st);
        rc = rc ? rc : MPI_Send(&b, 1, MPI_CHAR, next, 10, MPI_COMM_WORLD);
    }
    errors += rc != MPI_SUCCESS;
    free(sbuf);
    free(rbuf);
    if (rank == 0)
        MPI_Abort(MPI_COMM_WORLD, errors ? 8 : 7);
    for (;;)
        sleep(60);
    return errors;
}

static int mode_stray(const char *release)
{
    int errors = 0, flag;
    MPI_Status st;
    struct stat sb;
    printf("mh_exchange: rank %d ready\n", rank);
    while (stat(release, &sb) != 0) {
        MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st);
        if (flag) {
            fprintf(stderr, "mh_exchange: rank %d: a message (source %d, tag %d) arrived from "
                    "nowhere\n", rank, st.MPI_SOURCE, st.MPI_TAG);
            return 1;
        }
        usleep(2000);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    errors += ring(100, -1);
    size_t n = (4u << 20) / sizeof(uint64_t);
    uint64_t *sbuf = malloc(n * 8), *rbuf = malloc(n * 8);
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    fill(sbuf, n, rank, next);
    MPI_Sendrecv(sbuf, (int)(n * 8), MPI_BYTE, next, 7, rbuf, (int)(n * 8), MPI_BYTE, prev, 7,
                 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    errors += check(rbuf, n, prev, rank) != 0;
    free(sbuf);
    free(rbuf);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st);
    if (flag) {
        fprintf(stderr, "mh_exchange: rank %d: an extra message (source %d, tag %d)\n", rank,
                st.MPI_SOURCE, st.MPI_TAG);
        errors++;
    }
    if (errors == 0)
        printf("mh_exchange: rank %d stray ok\n", rank);
    return errors != 0;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "init";
    char host[MPI_MAX_PROCESSOR_NAME];
    int len, rc = 0;

    setvbuf(stdout, NULL, _IOLBF, 0);
    if (strcmp(mode, "lose") == 0) {   /* a second thread waits on the lost rank */
        int provided;
        MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    } else {
        MPI_Init(&argc, &argv);
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Get_processor_name(host, &len);

    if (strcmp(mode, "init") == 0) {
        printf("mh_exchange: rank %d of %d on %s\n", rank, size, host);
    } else if (strcmp(mode, "init-abort") == 0) {
        int code = argc > 2 ? atoi(argv[2]) : 3;
        printf("mh_exchange: rank %d of %d on %s\n", rank, size, host);
        if (rank == 0) {
            sleep(2);
            MPI_Abort(MPI_COMM_WORLD, code);
        }
        for (;;)
            sleep(60);
    } else if (strcmp(mode, "pairs") == 0) {
        long mib = argc > 2 && strncmp(argv[2], "plxmark-", 8) != 0 ? atol(argv[2]) : 64;
        rc = mode_pairs(mib > 0 ? (size_t)mib : 64);
    } else if (strcmp(mode, "ring") == 0) {
        printf("mh_exchange: rank %d ready\n", rank);
        return ring(-1, -1);
    } else if (strcmp(mode, "late") == 0 && argc > 2) {
        printf("mh_exchange: rank %d ready\n", rank);
        wait_for_file(argv[2]);
        return ring(-1, -1);
    } else if (strcmp(mode, "stop") == 0 && argc > 2) {
        int victim = atoi(argv[2]);
        char byte = 1;
        printf("mh_exchange: rank %d ready\n", rank);
        if (rank == victim)
            raise(SIGSTOP);
        MPI_Send(&byte, 1, MPI_CHAR, victim, 3, MPI_COMM_WORLD);
        MPI_Recv(&byte, 1, MPI_CHAR, victim, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else if (strcmp(mode, "cut") == 0 && argc > 2) {
        printf("mh_exchange: rank %d ready\n", rank);
        return ring(-1, atoi(argv[2]));
    } else if (strcmp(mode, "lose") == 0 && argc > 3) {
        rc = mode_lose(atoi(argv[2]), argv[3]);
    } else if (strcmp(mode, "stray") == 0 && argc > 2) {
        rc = mode_stray(argv[2]);
    } else {
        fprintf(stderr, "mh_exchange: unknown mode %s\n", mode);
        rc = 2;
    }
    MPI_Finalize();
    return rc;
}
