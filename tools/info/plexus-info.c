/*
 * plexus-info: the version, the build, the transports usable on this
 * machine, and every PLEXUS_* setting with its current value and help.
 */
#include <mpi.h>
#include <stdio.h>
#include <string.h>
#include "core/config.h"
#include "pm/pm.h"
#include "route/route.h"

static void plx_info_line(const char *text, void *arg)
{
    (void)arg;
    printf("%s\n", text);
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
    printf("Plexus %s (MPI %d.%d, MPICH ABI: libmpi.so.12)\n", PLX_VERSION_STRING, MPI_VERSION, MPI_SUBVERSION);
    printf("build: %s, prefix %s, compiled %s %s\n", PLX_BUILD_TYPE, PLX_PREFIX, __DATE__, __TIME__);
    printf("fortran bindings: %s\n", PLX_FORTRAN_INFO);
    printf("\ntransports:\n");
#ifndef PLX_HAVE_SCTP
    printf("  sctp  not built (usrsctp was not found at build time, or PLEXUS_SCTP=OFF: install "
           "libusrsctp-dev and rebuild)\n");
#endif
    plx_route_describe(plx_info_line, NULL);
    printf("\nprocess managers: PMI-1 (mpiexec, mpiexec.hydra), PMI-2 (srun --mpi=pmi2), %s\n",
           plx_pm_have_pmix() ? "PMIx (srun --mpi=pmix, prterun)" : "no PMIx (built without libpmix-dev)");
    printf("\nsettings (environment variables):\n");
    for (size_t i = 0; i < plx_nsettings; i++) {
        char val[300];
        plx_config_format(&plx_settings[i], val, sizeof val);
        static const char *const when[] = { [PLX_LIVE_NO] = "read at MPI_Init",
                                            [PLX_LIVE_LOCAL] = "may also be changed while running (MPI_T)",
                                            [PLX_LIVE_ALL_EQ] = "also while running (MPI_T), equal everywhere" };
        printf("  %-26s = %-10s (default %s; %s)\n      %s\n", plx_settings[i].name, val, plx_settings[i].defval,
               when[plx_settings[i].live], plx_settings[i].help);
    }
    return 0;
}
