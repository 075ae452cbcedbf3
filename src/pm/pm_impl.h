/*
 * The process-manager clients behind pm.h: one table of functions per
 * protocol (pmi1.c: PMI-1 wire and the singleton; pmi2.c: PMI-2 wire;
 * pmix.c: PMIx through libpmix), chosen once by pm.c from the environment
 * the launcher set. The semantics are pm.h's.
 */
#ifndef PLX_PM_IMPL_H
#define PLX_PM_IMPL_H

#include "pm/pm.h"

struct plx_pm_ops {
    const char *name;           /* "PMI-1", "PMI-2", "PMIx", "singleton" */
    plx_status_t (*put)(const char *key, const char *val);
    plx_status_t (*fence)(void);
    plx_status_t (*get)(const char *key, char *val, size_t len);
    void (*abort)(int code, const char *msg);   /* returns only when it could not */
    plx_status_t (*finalize)(void);
    /* the launcher's name service; NULL: it has none */
    plx_status_t (*publish)(const char *service, const char *port);
    plx_status_t (*lookup)(const char *service, char *port, size_t len);
    plx_status_t (*unpublish)(const char *service);
    /* pm.h's spawn; NULL: this launcher cannot */
    plx_status_t (*spawn)(int count, struct plx_pm_spawn_cmd *cmds, const char *parent_port, char *err,
                          size_t errlen);
};

/* Each init fills info_p and returns its table in *ops_p. */
plx_status_t plx_pmi1_init(const char *fds, struct plx_pm_info *info_p, const struct plx_pm_ops **ops_p);
plx_status_t plx_pmi1_init_singleton(struct plx_pm_info *info_p, const struct plx_pm_ops **ops_p);
plx_status_t plx_pmi2_init(const char *fds, struct plx_pm_info *info_p, const struct plx_pm_ops **ops_p);
#ifdef PLX_HAVE_PMIX
plx_status_t plx_pmix_init(struct plx_pm_info *info_p, const struct plx_pm_ops **ops_p);
#endif

/* Key and value rules shared by the wire protocols (pm.h): PLX_ERR_ARG when
 * the key is empty, too long or holds ' ', '=', ';' or a line end, or the
 * value is too long or holds white space or ';'. val may be NULL. */
plx_status_t plx_pm_check_kv(const char *key, const char *val, int keylen_max, int vallen_max);

#endif
