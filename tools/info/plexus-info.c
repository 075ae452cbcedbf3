/*
 * plexus-info: the version, the build, the transports usable on this
 * machine, and every PLEXUS_* setting with its current value and help.
 */
#include <stdio.h>
#include <string.h>
#include <sys/statvfs.h>
#include <sys/uio.h>
#include <unistd.h>
#include "core/config.h"
#include "pm/pm.h"
#include "route/route.h"
#include "transport/tcp/tcp.h"

static const char *plx_info_cma(void)
{
    /* a read of our own memory tells whether the syscall exists at all;
     * whether peers may read each other is probed at MPI_Init */
    int x = 42, y = 0;
    struct iovec l = { &y, sizeof y }, r = { &x, sizeof x };
    return process_vm_readv(getpid(), &l, 1, &r, 1, 0) == (ssize_t)sizeof x && y == 42
               ? "single-copy (process_vm_readv) available"
               : "process_vm_readv unavailable: pipelined copy";
}

int main(int argc, char **argv)
{
    char err[256];
    if (plx_config_load(err, sizeof err) != 0) {
        fprintf(stderr, "plexus-info: %s\n", err);
        return 1;
    }
    if (argc > 1 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
        printf("usage: plexus-info      print version, build, transports and settings\n");
        return 0;
    }
    printf("Plexus %s (MPI 3.1, MPICH ABI: libmpi.so.12)\n", PLX_VERSION_STRING);
    printf("build: %s, prefix %s, compiled %s %s\n", PLX_BUILD_TYPE, PLX_PREFIX, __DATE__, __TIME__);
    printf("\ntransports:\n");
    struct statvfs v;
    if (statvfs("/dev/shm", &v) == 0)
        printf("  shm   usable: /dev/shm has %llu MiB free; %s\n",
               (unsigned long long)v.f_bavail * v.f_frsize >> 20, plx_info_cma());
    else
        printf("  shm   NOT usable: /dev/shm is missing\n");
    char tcp[1024];
    if (plx_tcp_probe(tcp, sizeof tcp))
        printf("  tcp   usable: %s%s\n", tcp,
               plx_route_enabled("tcp") ? "" : " (but PLEXUS_TRANSPORTS leaves it out)");
    else
        printf("  tcp   NOT usable: %s\n", tcp);
    printf("\nprocess managers: PMI-1 (mpiexec, mpiexec.hydra), PMI-2 (srun --mpi=pmi2), %s\n",
           plx_pm_have_pmix() ? "PMIx (srun --mpi=pmix, prterun)" : "no PMIx (built without libpmix-dev)");
    printf("\nsettings (environment variables):\n");
    for (size_t i = 0; i < plx_nsettings; i++) {
        char val[300];
        plx_config_format(&plx_settings[i], val, sizeof val);
        printf("  %-26s = %-10s (default %s)\n      %s\n", plx_settings[i].name, val, plx_settings[i].defval,
               plx_settings[i].help);
    }
    return 0;
}
