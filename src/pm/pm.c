/*
 * Choice of the process-manager client (pm.h), from what the launcher put
 * in the environment, and the calls of pm.h routed to it:
 *
 *   PMIX_NAMESPACE + PMIX_RANK   PMIx (srun --mpi=pmix, prterun, Open MPI's mpirun)
 *   PMI_FD + PLEXUS_MPIEXEC=1    PMI-1 wire (our mpiexec, even inside an srun step)
 *   PMI_FD + PMI_JOBID           PMI-2 wire (Slurm's srun --mpi=pmi2)
 *   PMI_FD                       PMI-1 wire (MPICH's Hydra)
 *   nothing                      singleton
 *
 * PLEXUS_PMI=pmi1|pmi2|pmix forces one (Hydra serves both wire versions on
 * one PMI_FD). A process that sees a launcher's variables but cannot speak
 * its protocol (a PMIx launcher and a build without libpmix, Slurm without
 * --mpi=pmi2/pmix, Open MPI, PALS, ALPS) refuses, naming the launcher and
 * what is missing: N silent singletons would each think they are rank 0.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pm/pm_impl.h"

static struct {
    const struct plx_pm_ops *ops;
    struct plx_pm_info info;
} plx_pm_g;

static void plx_pm_refuse(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void plx_pm_refuse(const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fprintf(stderr, "plexus: PMI: %s\n", msg);
}

plx_status_t plx_pm_check_kv(const char *key, const char *val, int keylen_max, int vallen_max)
{
    size_t klen = strlen(key);
    if (klen == 0 || klen >= (size_t)keylen_max || strpbrk(key, " =;\n\r\t") != NULL)
        return PLX_ERR_ARG;
    if (val != NULL && (strlen(val) >= (size_t)vallen_max || strpbrk(val, " ;\n\r\t") != NULL))
        return PLX_ERR_ARG;
    return PLX_OK;
}

/* Launchers whose protocol we do not speak. */
static const struct {
    const char *var;
    const char *who;
    const char *advice;
} plx_pm_foreign[] = {
    { "OMPI_COMM_WORLD_SIZE", "Open MPI's mpirun",
      "Plexus programs cannot run under Open MPI's mpirun without its PMIx server; use Plexus's mpiexec" },
    { "PMI_PORT", "a PMI launcher in port mode (mpiexec.hydra -pmi-port?)",
      "PMI port mode is not supported; run without -pmi-port, or use Plexus's mpiexec" },
    { "PALS_RANKID", "HPE/Cray PALS (aprun/mpiexec of Cray PE)", "PALS is not supported; use Plexus's mpiexec" },
    { "ALPS_APP_PE", "Cray ALPS (aprun)", "ALPS is not supported; use Plexus's mpiexec" },
};

/* Slurm's srun without a PMI plugin we speak (--mpi=none): a one-task step
 * really is a singleton, anything else would be N copies of rank 0. */
static plx_status_t plx_pm_check_slurm(void)
{
    const char *job = getenv("SLURM_JOB_ID"), *procid = getenv("SLURM_PROCID");
    const char *step = getenv("SLURM_STEP_ID"), *ntasks = getenv("SLURM_STEP_NUM_TASKS");
    if (!step)
        step = getenv("SLURM_STEPID");
    if (!ntasks)
        ntasks = getenv("SLURM_NTASKS");
    if (!job || !procid || !step)
        return PLX_OK;
    if (ntasks && strcmp(ntasks, "1") == 0)
        return PLX_OK;
    plx_pm_refuse("started by Slurm's srun (SLURM_JOB_ID=%s SLURM_PROCID=%s%s%s) without a PMI this "
                  "library speaks (no PMI_FD, no PMIX_RANK: srun --mpi=none?); refusing to run as a "
                  "singleton, which would start N copies of rank 0. Use srun --mpi=pmi2%s, or Plexus's "
                  "mpiexec inside the allocation.",
                  job, procid, ntasks ? " SLURM_STEP_NUM_TASKS=" : "", ntasks ? ntasks : "",
#ifdef PLX_HAVE_PMIX
                  " or --mpi=pmix"
#else
                  ""
#endif
    );
    return PLX_ERR_PM;
}

static plx_status_t plx_pm_check_foreign(void)
{
    for (size_t i = 0; i < sizeof plx_pm_foreign / sizeof plx_pm_foreign[0]; i++) {
        const char *v = getenv(plx_pm_foreign[i].var);
        if (!v)
            continue;
        plx_pm_refuse("%s=%s is set but PMI_FD is not: this process was started by %s. Refusing to run "
                      "as a singleton (that would start N copies of rank 0). %s.",
                      plx_pm_foreign[i].var, v, plx_pm_foreign[i].who, plx_pm_foreign[i].advice);
        return PLX_ERR_PM;
    }
    if (getenv("PMI_RANK") || getenv("PMI_SIZE")) {
        plx_pm_refuse("PMI_RANK/PMI_SIZE are set but PMI_FD is not: the launcher speaks a PMI variant "
                      "this library does not support; use Plexus's mpiexec or MPICH's mpiexec.hydra");
        return PLX_ERR_PM;
    }
    return plx_pm_check_slurm();
}

static plx_status_t plx_pm_init_pmix(void)
{
#ifdef PLX_HAVE_PMIX
    return plx_pmix_init(&plx_pm_g.info, &plx_pm_g.ops);
#else
    const char *rank = getenv("PMIX_RANK"), *ns = getenv("PMIX_NAMESPACE");
    plx_pm_refuse("started by a PMIx launcher (srun --mpi=pmix, prterun or Open MPI's mpirun: "
                  "PMIX_NAMESPACE=%s PMIX_RANK=%s) but this Plexus was built without PMIx support "
                  "(libpmix-dev was not found at build time). Rebuild with libpmix-dev installed, or use "
                  "srun --mpi=pmi2 or Plexus's mpiexec. Refusing to run as a singleton.",
                  ns ? ns : "(unset)", rank ? rank : "(unset)");
    return PLX_ERR_PM;
#endif
}

plx_status_t plx_pm_init(struct plx_pm_info *info_p)
{
    if (plx_pm_g.ops) {
        *info_p = plx_pm_g.info;
        return PLX_OK;
    }
    /* PLEXUS_PMI is registered (help, default) in core/config.c's table;
     * read here directly so that this layer stays usable alone (the PMI
     * test program tests/system/progs/pmi_ring.c links src/pm only) */
    const char *want = getenv("PLEXUS_PMI"), *fds = getenv("PMI_FD");
    if (!want || !want[0])
        want = "auto";
    plx_status_t st;
    const char *ours = getenv("PLEXUS_MPIEXEC");
    if (strcmp(want, "auto") == 0 && fds && ours && strcmp(ours, "1") == 0) {
        /* our mpiexec speaks PMI-1, whatever it inherited (it may run
         * inside an srun step with PMIX_* or PMI_JOBID around) */
        st = plx_pmi1_init(fds, &plx_pm_g.info, &plx_pm_g.ops);
    } else if (strcmp(want, "pmix") == 0 ||
        (strcmp(want, "auto") == 0 && getenv("PMIX_RANK") && getenv("PMIX_NAMESPACE"))) {
        st = plx_pm_init_pmix();
    } else if (strcmp(want, "pmi1") == 0 || strcmp(want, "pmi2") == 0 || strcmp(want, "auto") == 0) {
        int v2 = strcmp(want, "pmi2") == 0 || (strcmp(want, "auto") == 0 && getenv("PMI_JOBID"));
        if (fds)
            st = v2 ? plx_pmi2_init(fds, &plx_pm_g.info, &plx_pm_g.ops)
                    : plx_pmi1_init(fds, &plx_pm_g.info, &plx_pm_g.ops);
        else if (strcmp(want, "auto") != 0) {
            plx_pm_refuse("PLEXUS_PMI=%s but PMI_FD is not set: no launcher speaking it started this process",
                          want);
            st = PLX_ERR_PM;
        } else if ((st = plx_pm_check_foreign()) == PLX_OK)
            st = plx_pmi1_init_singleton(&plx_pm_g.info, &plx_pm_g.ops);
    } else {
        plx_pm_refuse("PLEXUS_PMI=%s: expected auto, pmi1, pmi2 or pmix", want);
        st = PLX_ERR_PM;
    }
    if (st != PLX_OK) {
        plx_pm_g.ops = NULL;
        return st;
    }
    *info_p = plx_pm_g.info;
    return PLX_OK;
}

int plx_pm_have_pmix(void)
{
#ifdef PLX_HAVE_PMIX
    return 1;
#else
    return 0;
#endif
}

const char *plx_pm_name(void)
{
    return plx_pm_g.ops ? plx_pm_g.ops->name : "none";
}

plx_status_t plx_pm_put(const char *key, const char *val)
{
    return plx_pm_g.ops ? plx_pm_g.ops->put(key, val) : PLX_ERR_INTERN;
}

plx_status_t plx_pm_fence(void)
{
    return plx_pm_g.ops ? plx_pm_g.ops->fence() : PLX_ERR_INTERN;
}

plx_status_t plx_pm_get(const char *key, char *val, size_t len)
{
    return plx_pm_g.ops ? plx_pm_g.ops->get(key, val, len) : PLX_ERR_INTERN;
}

_Noreturn void plx_pm_abort(int code, const char *msg)
{
    if (plx_pm_g.ops)
        plx_pm_g.ops->abort(code, msg);
    fflush(stdout);
    fprintf(stderr, "plexus: aborted with exit code %d%s%s\n", code, msg && msg[0] ? ": " : "", msg ? msg : "");
    fflush(stderr);
    _exit(code);
}

plx_status_t plx_pm_finalize(void)
{
    if (!plx_pm_g.ops)
        return PLX_OK;
    plx_status_t st = plx_pm_g.ops->finalize();
    plx_pm_g.ops = NULL;
    return st;
}

plx_status_t plx_pm_publish(const char *service, const char *port)
{
    if (!plx_pm_g.ops || !plx_pm_g.ops->publish)
        return PLX_ERR_UNSUPPORTED;
    if (plx_pm_check_kv("service", service, PLX_PM_MAX_KEY, PLX_PM_MAX_VAL) != PLX_OK ||
        plx_pm_check_kv("port", port, PLX_PM_MAX_KEY, PLX_PM_MAX_VAL) != PLX_OK || !service[0] || !port[0])
        return PLX_ERR_ARG;
    return plx_pm_g.ops->publish(service, port);
}

plx_status_t plx_pm_lookup(const char *service, char *port, size_t len)
{
    if (!plx_pm_g.ops || !plx_pm_g.ops->lookup)
        return PLX_ERR_UNSUPPORTED;
    if (plx_pm_check_kv("service", service, PLX_PM_MAX_KEY, PLX_PM_MAX_VAL) != PLX_OK || !service[0])
        return PLX_ERR_ARG;
    return plx_pm_g.ops->lookup(service, port, len);
}

plx_status_t plx_pm_unpublish(const char *service)
{
    if (!plx_pm_g.ops || !plx_pm_g.ops->unpublish)
        return PLX_ERR_UNSUPPORTED;
    if (plx_pm_check_kv("service", service, PLX_PM_MAX_KEY, PLX_PM_MAX_VAL) != PLX_OK || !service[0])
        return PLX_ERR_ARG;
    return plx_pm_g.ops->unpublish(service);
}

plx_status_t plx_pm_spawn(int count, struct plx_pm_spawn_cmd *cmds, const char *parent_port, char *err,
                          size_t errlen)
{
    if (!plx_pm_g.ops || !plx_pm_g.ops->spawn)
        return PLX_ERR_UNSUPPORTED;
    return plx_pm_g.ops->spawn(count, cmds, parent_port, err, errlen);
}
