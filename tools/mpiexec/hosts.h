/*
 * Host lists and rank placement for mpiexec -hosts / -hostfile / -ppn.
 *
 * A host list is built from "-hosts a,b:2" and from host files (one host per
 * line: "name", "name:SLOTS" or "name slots=SLOTS"; '#' starts a comment).
 * A host named twice is one host whose slots add up. Placement follows
 * Hydra: without -ppn, each host in turn takes as many consecutive ranks as
 * it has slots (1 by default), cycling through the list again when the job
 * has more ranks than slots; with -ppn N, each host in turn takes N.
 *
 * PMI_process_mapping is written in MPICH's "(vector,(node,count,ranks),...)"
 * form, node = index of the host among the hosts that received ranks.
 */
#ifndef PLX_HOSTS_H
#define PLX_HOSTS_H

#include <stddef.h>

#define PLX_HOSTS_NAME_MAX 255

struct plx_host {
    char name[PLX_HOSTS_NAME_MAX + 1];
    int slots;
};

struct plx_hostlist {
    struct plx_host *h;
    int n, cap;
};

/* Adds "a,b:2,c". 0, or -1 with a message in err. */
int plx_hosts_add_list(struct plx_hostlist *hl, const char *spec, char *err, size_t errlen);
/* Adds every host of a host file. 0, or -1 with a message in err. */
int plx_hosts_add_file(struct plx_hostlist *hl, const char *path, char *err, size_t errlen);
/* Adds the hosts of a Slurm allocation: nodelist in Slurm's compressed form
 * ("node[01-03,7],gpu1"), per_node its slot counts ("2(x3),1": from
 * SLURM_TASKS_PER_NODE or SLURM_JOB_CPUS_PER_NODE; NULL: 1 each), as
 * Hydra reads them. 0, or -1 with a message in err. */
int plx_hosts_add_slurm(struct plx_hostlist *hl, const char *nodelist, const char *per_node, char *err,
                        size_t errlen);
void plx_hosts_free(struct plx_hostlist *hl);

/* Total slots (the default job size). */
int plx_hosts_slots(const struct plx_hostlist *hl);

/* host_of[r] = index in hl of rank r's host, for r < size; ppn 0: by slots. */
void plx_hosts_place(const struct plx_hostlist *hl, int size, int ppn, int *host_of);

/* PMI_process_mapping for node_of[0..size). 0, or -1 when it does not fit. */
int plx_hosts_mapping(const int *node_of, int size, char *buf, size_t len);

/* Is this name this machine ("localhost", 127.0.0.1, ::1, our hostname or
 * its first label)? */
int plx_hosts_is_local(const char *name);

/* Only [A-Za-z0-9._@-], not starting with '-': safe on a shell command line
 * and never taken for an option. */
int plx_hosts_name_ok(const char *name);

#endif
