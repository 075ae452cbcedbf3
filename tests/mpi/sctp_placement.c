/*
 * sctp_placement.c - where a rank's threads may run after MPI_Init.
 *
 * Our mpiexec binds local rank i to one CPU by default and tells the rank
 * the CPUs it was bound from (PLEXUS_MPIEXEC_CPUS). With PLEXUS_SCTP_UNBIND=1,
 * when SCTP carries all of a rank's traffic, the transport gives that
 * binding up for every thread of the process (the rank's own and usrsctp's);
 * by default it keeps it.
 *
 *   sctp_placement unbound   every thread may use exactly the CPUs of
 *                            PLEXUS_MPIEXEC_CPUS (2 or more)
 *   sctp_placement bound     every thread is on one CPU, the same for all
 *                            (the default, PLEXUS_BIND=core set by the
 *                            user, or a job over TCP)
 *
 * Before looking, the ranks exchange a message both ways (checked), so the
 * transport is in use. Exits 77 (skipped) when this host has fewer CPUs than
 * ranks, since mpiexec binds nothing then.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <mpi.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void cpus_str(const cpu_set_t *s, char *buf, size_t len)
{
    size_t l = 0;
    buf[0] = 0;
    for (int c = 0; c < CPU_SETSIZE && l < len; c++)
        if (CPU_ISSET(c, s))
            l += (size_t)snprintf(buf + l, len - l, "%s%d", l ? "," : "", c);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size, bad = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *mode = argc > 1 ? argv[1] : "";
    if (strcmp(mode, "unbound") != 0 && strcmp(mode, "bound") != 0) {
        fprintf(stderr, "usage: sctp_placement unbound|bound\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    if (sysconf(_SC_NPROCESSORS_ONLN) < size) {
        if (rank == 0)
            printf("sctp_placement: fewer CPUs than ranks, mpiexec binds nothing: skipped\n");
        MPI_Finalize();
        return 77;
    }
    int peer = rank ^ 1;
    if (peer < size) {
        int x = 1000 + rank, y = -1;
        MPI_Sendrecv(&x, 1, MPI_INT, peer, 7, &y, 1, MPI_INT, peer, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        if (y != 1000 + peer) {
            fprintf(stderr, "sctp_placement: rank %d: got %d from rank %d, expected %d\n", rank, y, peer,
                    1000 + peer);
            bad = 1;
        }
    }

    const char *from = getenv("PLEXUS_MPIEXEC_CPUS");
    cpu_set_t want;
    CPU_ZERO(&want);
    if (!strcmp(mode, "unbound")) {
        if (!from) {
            fprintf(stderr, "sctp_placement: rank %d: PLEXUS_MPIEXEC_CPUS is not set (mpiexec did not bind "
                    "by default?)\n", rank);
            bad = 1;
        }
        for (const char *p = from; p && *p;) {
            char *end;
            long c = strtol(p, &end, 10);
            if (end == p)
                break;
            CPU_SET((int)c, &want);
            p = *end == ',' ? end + 1 : end;
        }
        if (from && CPU_COUNT(&want) < 2) {
            fprintf(stderr, "sctp_placement: rank %d: PLEXUS_MPIEXEC_CPUS=\"%s\" names fewer than 2 CPUs\n", rank,
                    from);
            bad = 1;
        }
    }

    DIR *d = opendir("/proc/self/task");
    if (!d) {
        perror("sctp_placement: /proc/self/task");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    int nthreads = 0, first_cpu = -1;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        int tid = atoi(e->d_name);
        if (tid <= 0)
            continue;
        cpu_set_t s;
        if (sched_getaffinity(tid, sizeof s, &s) != 0)
            continue;           /* the thread just ended */
        nthreads++;
        char got[256], exp[256];
        cpus_str(&s, got, sizeof got);
        if (!strcmp(mode, "unbound")) {
            if (from && !CPU_EQUAL(&s, &want)) {
                cpus_str(&want, exp, sizeof exp);
                fprintf(stderr, "sctp_placement: rank %d: thread %d may run on CPUs %s, expected %s\n", rank, tid,
                        got, exp);
                bad = 1;
            }
        } else {
            int cpu = -1;
            for (int c = 0; c < CPU_SETSIZE && cpu < 0; c++)
                if (CPU_ISSET(c, &s))
                    cpu = c;
            if (first_cpu < 0)
                first_cpu = cpu;
            if (CPU_COUNT(&s) != 1 || cpu != first_cpu) {
                fprintf(stderr, "sctp_placement: rank %d: thread %d may run on CPUs %s, expected CPU %d alone\n",
                        rank, tid, got, first_cpu);
                bad = 1;
            }
        }
    }
    closedir(d);
    if (nthreads < (!strcmp(mode, "unbound") ? 2 : 1)) {
        fprintf(stderr, "sctp_placement: rank %d: %d threads in /proc/self/task (usrsctp's missing?)\n", rank,
                nthreads);
        bad = 1;
    }
    printf("sctp_placement: rank %d: %d threads checked (%s)%s\n", rank, nthreads, mode, bad ? ": FAILED" : "");
    int any = 0;
    MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    MPI_Finalize();
    return any;
}
