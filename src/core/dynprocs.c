/*
 * Processes of other jobs, added at run time: the children of
 * MPI_Comm_spawn, the other side of MPI_Comm_connect/accept and of
 * MPI_Comm_join.
 *
 * The world's processes have lpids 0..n-1 (their world ranks); an added
 * process gets the next free lpid of *this* process (n, n+1, ...), so the
 * same process may have different lpids in different jobs. Its identity
 * everywhere is (job name, world rank), which its business card carries:
 *
 *     <job>|<world rank>|<world size>|<node>|<pid>|<component cards>
 *
 * where the component cards are "shm=<pid>.<fd>" and "tcp=<card>" (route.c
 * collects them from the components that can reach other jobs;
 * ';'-separated). The cards
 * travel over the connection that brought the two jobs together (the
 * library's, not the launcher's: the jobs share no key-value space).
 *
 * An added process gets a node id of its own even when it runs on this
 * host (same_host tells the transports), so node-aware collectives and
 * shared windows, which name their objects after this job, leave it out.
 * On this host the shared-memory transport reaches it when both cards have
 * a "shm=" part (segments by descriptor: "shm_jobs", through the receiver's
 * queue); otherwise, and on other hosts, TCP does (by loopback here).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "core/log.h"
#include "core/runtime.h"
#include "route/route.h"

uint64_t plx_job_key(const char *kvsname)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (const char *s = kvsname; *s; s++) {
        h ^= (uint8_t)*s;
        h *= 0x100000001b3ull;
    }
    return h;
}

static uint64_t plx_procs_key_of(int lpid)
{
    int job = plx_procs.p[lpid].job;
    return job ? plx_procs.jobs[job - 1].key : plx_procs.my_job_key;
}

int plx_proc_before(int a, int b)
{
    uint64_t ka = plx_procs_key_of(a), kb = plx_procs_key_of(b);
    if (ka != kb)
        return ka < kb;
    return plx_procs.p[a].wrank < plx_procs.p[b].wrank;
}

void plx_proc_gid(int lpid, uint64_t gid[2])
{
    gid[0] = plx_procs_key_of(lpid);
    gid[1] = (uint64_t)plx_procs.p[lpid].wrank;
}

int plx_procs_find(const uint64_t gid[2])
{
    if (gid[0] == plx_procs.my_job_key)
        return gid[1] < (uint64_t)plx_procs.n ? (int)gid[1] : -1;
    for (int l = plx_procs.n; l < plx_procs.ntotal; l++)
        if (plx_procs_key_of(l) == gid[0] && (uint64_t)plx_procs.p[l].wrank == gid[1])
            return l;
    return -1;
}

plx_status_t plx_procs_card(char *buf, size_t len)
{
    char node[256], cards[1400];
    plx_status_t st = plx_route_cards(cards, sizeof cards);
    if (st != PLX_OK)
        return st;
    plx_runtime_node_name(node, sizeof node);
    int w = snprintf(buf, len, "%s|%d|%d|%s|%d|%s", plx_procs.kvsname, plx_procs.my_lpid, plx_procs.n, node,
                     (int)getpid(), cards);
    return w < 0 || (size_t)w >= len ? PLX_ERR_NOSPACE : PLX_OK;
}

/* The index (1-based) of job `name` of `size` processes, added if new. */
static int plx_procs_job(const char *name, int size)
{
    for (int k = 0; k < plx_procs.njobs; k++)
        if (!strcmp(plx_procs.jobs[k].name, name))
            return k + 1;
    plx_procs.jobs = plx_realloc(plx_procs.jobs, (size_t)(plx_procs.njobs + 1) * sizeof *plx_procs.jobs);
    struct plx_job *j = &plx_procs.jobs[plx_procs.njobs++];
    snprintf(j->name, sizeof j->name, "%.255s", name);
    j->key = plx_job_key(name);
    j->size = size;
    return plx_procs.njobs;
}

plx_status_t plx_procs_add(int n, char *const *cards, int *lpids)
{
    char mynode[256];
    plx_runtime_node_name(mynode, sizeof mynode);
    int before = plx_procs.ntotal;
    for (int i = 0; i < n; i++) {
        /* split the five leading fields off a copy */
        char copy[2048], *f[6];
        snprintf(copy, sizeof copy, "%s", cards[i]);
        f[0] = copy;
        for (int k = 1; k < 6; k++) {
            char *bar = strchr(f[k - 1], '|');
            if (!bar) {
                plx_warn("a business card of another job is malformed: \"%.200s\"", cards[i]);
                return PLX_ERR_ARG;
            }
            *bar = 0;
            f[k] = bar + 1;
        }
        int wrank = atoi(f[1]), wsize = atoi(f[2]);
        if (wrank < 0 || wsize <= wrank) {
            plx_warn("a business card of another job names rank %d of %d", wrank, wsize);
            return PLX_ERR_ARG;
        }
        if (!strcmp(f[0], plx_procs.kvsname)) {
            if (wrank >= plx_procs.n)
                return PLX_ERR_ARG;
            lpids[i] = wrank;           /* one of ours */
            continue;
        }
        int job = plx_procs_job(f[0], wsize);
        int lpid = -1;
        for (int l = plx_procs.n; l < plx_procs.ntotal && lpid < 0; l++)
            if (plx_procs.p[l].job == job && plx_procs.p[l].wrank == wrank)
                lpid = l;
        if (lpid < 0) {
            lpid = plx_procs.ntotal++;
            plx_procs.p = plx_realloc(plx_procs.p, (size_t)plx_procs.ntotal * sizeof *plx_procs.p);
            struct plx_proc *p = &plx_procs.p[lpid];
            memset(p, 0, sizeof *p);
            p->node_id = (1 << 20) + lpid;
            p->local_index = -1;
            p->pid = (pid_t)atoi(f[4]);
            p->job = job;
            p->wrank = wrank;
            p->card = plx_strdup(f[5]);
            p->same_host = !strcmp(f[3], mynode);
            plx_debug(1, "added process %d of job %s (pid %d, %s) as lpid %d", wrank, f[0], (int)p->pid,
                      p->same_host ? "this host" : f[3], lpid);
        }
        lpids[i] = lpid;
    }
    if (plx_procs.ntotal == before)
        return PLX_OK;
    return plx_route_add_peers(plx_procs.ntotal);
}

const char *plx_procs_comp_card(int lpid, const char *comp, char *buf, size_t len)
{
    if (lpid < plx_procs.n || lpid >= plx_procs.ntotal || !plx_procs.p[lpid].card)
        return NULL;
    size_t cl = strlen(comp);
    for (const char *s = plx_procs.p[lpid].card; *s;) {
        const char *e = strchr(s, ';');
        size_t l = e ? (size_t)(e - s) : strlen(s);
        if (l > cl && !strncmp(s, comp, cl) && s[cl] == '=') {
            snprintf(buf, len, "%.*s", (int)(l - cl - 1), s + cl + 1);
            return buf;
        }
        s += l + (e ? 1 : 0);
    }
    return NULL;
}
