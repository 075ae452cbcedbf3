/*
 * Dynamic-process entry points: name publishing, ports, accept/connect,
 * join, disconnect, get_parent, spawn.
 *
 * Name publishing goes through the launcher's name service (our mpiexec
 * holds the names; Slurm's PMI-2 too).
 *
 * Ports are listening TCP sockets (util/port.h), so that processes of two
 * separately started jobs can meet: the connect root reaches the accept
 * root's socket, and over that socket the two groups swap their members'
 * business cards (core/dynprocs.c: each process of the other job gets an
 * lpid here and the transports learn to reach it), then agree on context
 * ids (the bridge's leaders talk over the socket) and build the
 * intercommunicator. Processes of the same job are recognised in the cards
 * and keep their world lpids. MPI_Comm_join runs the same meeting over the
 * user's socket.
 *
 * Spawn: the root opens a port, asks the launcher to start the children
 * (pm.h's spawn: our mpiexec runs them as a job of their own) with the port
 * in their $PLEXUS_PARENT_PORT, and accepts on it; the children's MPI_Init
 * connects to it over their MPI_COMM_WORLD, and that intercommunicator is
 * their MPI_Comm_get_parent. When the children cannot start, mpiexec
 * connects to the port and says why (PLX_PORT_FAIL), so the root does not
 * wait for ever.
 *
 * The info key "timeout" (seconds) bounds the waits: connect waits 60 s by
 * default, accept for ever (as MPI says), spawn 120 s for its children.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/socket.h>
#include "api/api.h"
#include "api/intercomm.h"
#include "coll/coll.h"
#include "core/datatype.h"
#include "core/request.h"
#include "core/runtime.h"
#include "pm/pm.h"
#include "progress/progress.h"
#include "pt2pt/pt2pt.h"
#include "route/route.h"
#include "util/port.h"
#include "util/util.h"

#pragma weak MPI_Publish_name = PMPI_Publish_name
#pragma weak MPI_Lookup_name = PMPI_Lookup_name
#pragma weak MPI_Unpublish_name = PMPI_Unpublish_name
#pragma weak MPI_Open_port = PMPI_Open_port
#pragma weak MPI_Close_port = PMPI_Close_port
#pragma weak MPI_Comm_accept = PMPI_Comm_accept
#pragma weak MPI_Comm_connect = PMPI_Comm_connect
#pragma weak MPI_Comm_join = PMPI_Comm_join
#pragma weak MPI_Comm_disconnect = PMPI_Comm_disconnect
#pragma weak MPI_Comm_get_parent = PMPI_Comm_get_parent
#pragma weak MPI_Comm_spawn = PMPI_Comm_spawn
#pragma weak MPI_Comm_spawn_multiple = PMPI_Comm_spawn_multiple

#define PLX_DYN_CARD 2048       /* bytes of one business card in the exchange */

struct plx_port {
    struct plx_port *next;
    int fd;                     /* the listening socket */
    char name[MPI_MAX_PORT_NAME];
    struct plx_port_name pn;
};

static struct {
    struct plx_port *ports;
    MPI_Comm parent;            /* MPI_Comm_get_parent's, or MPI_COMM_NULL */
    int count;                  /* plx_dyn_meet: processes asked for (in, at a failing root), then
                                 * the other group's size, or that number after a failure (out) */
} plx_dyn = { .parent = MPI_COMM_NULL };

/* --- name service ------------------------------------------------------ */

static int plx_dyn_name_err(const char *fn, plx_status_t st, int cls, const char *service, const char *what)
{
    if (st == PLX_ERR_UNSUPPORTED)
        return plx_api_err(NULL, fn, cls,
                           "publishing names needs Plexus's mpiexec, which holds them (this process has "
                           "no launcher with a name service: %s)",
                           plx_pm_name());
    if (st == PLX_ERR_ARG)
        return plx_api_err(NULL, fn, cls, "service '%.100s' %s", service, what);
    return plx_api_err(NULL, fn, cls, "the launcher's name service failed on service '%.100s'", service);
}

static int plx_dyn_check_name(const char *fn, const char *service, const char *port, int cls)
{
    if (!service)
        return plx_api_null_arg(NULL, fn, "service_name");
    if (!service[0] || strpbrk(service, " \t\n;=") || strlen(service) >= MPI_MAX_PORT_NAME)
        return plx_api_err(NULL, fn, cls,
                           "service name '%.100s' is empty, too long or holds a space, ';' or '=' (which the "
                           "PMI protocols cannot carry)",
                           service);
    if (port == NULL)
        return plx_api_null_arg(NULL, fn, "port_name");
    return MPI_SUCCESS;
}

int PMPI_Publish_name(const char *service_name, MPI_Info info, const char *port_name)
{
    static const char fn[] = "MPI_Publish_name";
    (void)info;
    plx_api_lock();
    plx_api_check_init(fn);
    int rc = plx_dyn_check_name(fn, service_name, port_name, MPI_ERR_SERVICE);
    if (rc == MPI_SUCCESS && (!port_name[0] || strpbrk(port_name, " \t\n;")))
        rc = plx_api_err(NULL, fn, MPI_ERR_PORT, "port name '%.100s' is empty or holds a space or ';'", port_name);
    if (rc == MPI_SUCCESS) {
        plx_status_t st = plx_pm_publish(service_name, port_name);
        if (st != PLX_OK)
            rc = plx_dyn_name_err(fn, st, MPI_ERR_SERVICE, service_name, "is already published");
    }
    plx_api_unlock();
    return rc;
}

int PMPI_Lookup_name(const char *service_name, MPI_Info info, char *port_name)
{
    static const char fn[] = "MPI_Lookup_name";
    (void)info;
    plx_api_lock();
    plx_api_check_init(fn);
    int rc = plx_dyn_check_name(fn, service_name, port_name, MPI_ERR_NAME);
    if (rc == MPI_SUCCESS) {
        plx_status_t st = plx_pm_lookup(service_name, port_name, MPI_MAX_PORT_NAME);
        if (st != PLX_OK)
            rc = plx_dyn_name_err(fn, st, MPI_ERR_NAME, service_name, "is not published");
    }
    plx_api_unlock();
    return rc;
}

int PMPI_Unpublish_name(const char *service_name, MPI_Info info, const char *port_name)
{
    static const char fn[] = "MPI_Unpublish_name";
    (void)info;
    plx_api_lock();
    plx_api_check_init(fn);
    int rc = plx_dyn_check_name(fn, service_name, port_name, MPI_ERR_SERVICE);
    if (rc == MPI_SUCCESS) {
        plx_status_t st = plx_pm_unpublish(service_name);
        if (st != PLX_OK)
            rc = plx_dyn_name_err(fn, st, MPI_ERR_SERVICE, service_name, "is not published");
    }
    plx_api_unlock();
    return rc;
}

/* --- ports ------------------------------------------------------------- */

static struct plx_port **plx_dyn_port_find(const char *name)
{
    struct plx_port **pp = &plx_dyn.ports;
    while (*pp && (!name || strcmp((*pp)->name, name) != 0))
        pp = &(*pp)->next;
    return pp;
}

static struct plx_port *plx_dyn_port_open(void)
{
    struct plx_port *p = plx_calloc(1, sizeof *p);
    p->fd = plx_port_listen(p->name, sizeof p->name);
    if (p->fd < 0 || plx_port_parse(p->name, &p->pn) != 0) {
        if (p->fd >= 0)
            close(p->fd);
        free(p);
        return NULL;
    }
    p->next = plx_dyn.ports;
    plx_dyn.ports = p;
    return p;
}

static void plx_dyn_port_close(struct plx_port **pp)
{
    struct plx_port *p = *pp;
    *pp = p->next;
    close(p->fd);
    free(p);
}

int PMPI_Open_port(MPI_Info info, char *port_name)
{
    static const char fn[] = "MPI_Open_port";
    (void)info;
    plx_api_lock();
    plx_api_check_init(fn);
    int rc = MPI_SUCCESS;
    struct plx_port *p;
    if (!port_name)
        rc = plx_api_null_arg(NULL, fn, "port_name");
    else if (!(p = plx_dyn_port_open()))
        rc = plx_api_err(NULL, fn, MPI_ERR_OTHER, "cannot open a listening socket for the port: %s",
                         strerror(errno));
    else
        snprintf(port_name, MPI_MAX_PORT_NAME, "%s", p->name);
    plx_api_unlock();
    return rc;
}

int PMPI_Close_port(const char *port_name)
{
    static const char fn[] = "MPI_Close_port";
    plx_api_lock();
    plx_api_check_init(fn);
    int rc = MPI_SUCCESS;
    struct plx_port **pp;
    if (!port_name)
        rc = plx_api_null_arg(NULL, fn, "port_name");
    else if (!*(pp = plx_dyn_port_find(port_name)))
        rc = plx_api_err(NULL, fn, MPI_ERR_PORT, "'%.100s' is not a port this process has open", port_name);
    else
        plx_dyn_port_close(pp);
    plx_api_unlock();
    return rc;
}

/* info "timeout" in seconds; dflt when absent (< 0: for ever). */
static double plx_dyn_timeout(MPI_Info info, double dflt)
{
    struct plx_info *in = info == MPI_INFO_NULL ? NULL : plx_obj_lookup(&plx_info_tab, info);
    const char *v = in ? plx_info_lookup(in, "timeout") : NULL;
    if (!v)
        return dflt;
    char *end;
    double t = strtod(v, &end);
    return end != v && t >= 0 ? t : dflt;
}

/* At an accept (or spawn) root: the socket of the next connection to port
 * p, or -1 after the deadline (< 0: none), or -2 when mpiexec reported that
 * the spawned job failed (its message in why). Keeps the progress engine
 * turning meanwhile, so that traffic of this process to others goes on. */
static int plx_dyn_accept_root(struct plx_port *p, double deadline, char *why, size_t whylen)
{
    for (;;) {
        double left = deadline < 0 ? 0.05 : deadline - plx_util_now();
        if (left <= 0)
            return -1;
        struct pollfd pf = { .fd = p->fd, .events = POLLIN };
        int r = poll(&pf, 1, left > 0.05 ? 50 : (int)(left * 1000) + 1);
        plx_progress_poll();
        if (r <= 0)
            continue;
        int fd = accept4(p->fd, NULL, NULL, SOCK_CLOEXEC);
        if (fd < 0)
            continue;
        struct plx_port_hello h;
        if (plx_port_read(fd, &h, sizeof h, plx_util_now() + 10) != 0 || h.magic != PLX_PORT_MAGIC) {
            close(fd);              /* not one of ours: keep waiting */
            continue;
        }
        uint32_t ans = memcmp(h.nonce, p->pn.nonce, 32) ? PLX_PORT_WRONG : PLX_PORT_OK;
        if (ans == PLX_PORT_OK && h.kind == PLX_PORT_FAIL) {
            size_t n = h.len < whylen ? h.len : whylen - 1;
            if (plx_port_read(fd, why, n, plx_util_now() + 10) != 0)
                n = (size_t)snprintf(why, whylen, "the launcher reported a failure");
            why[n] = 0;
            close(fd);
            return -2;
        }
        if (plx_port_write(fd, &ans, sizeof ans) != 0 || ans != PLX_PORT_OK) {
            close(fd);
            continue;
        }
        return fd;
    }
}

/* The leaders' exchange of a bridge over the socket (both write, then read:
 * the messages are small). */
static plx_status_t plx_dyn_sock_xchg(void *arg, const void *sbuf, size_t sn, void *rbuf, size_t rn)
{
    int fd = *(int *)arg;
    if (plx_port_write(fd, sbuf, sn) != 0 || plx_port_read(fd, rbuf, rn, plx_util_now() + 60) != 0)
        return PLX_ERR_IO;
    return PLX_OK;
}

/* The two groups meet over the roots' socket fd (collective over c; fd only
 * at the root). `first`: this side writes first (the two sides differ).
 * err_at_root: the root's failure so far (then the others fail with cls).
 * Closes fd unless keep_fd. */
static int plx_dyn_meet(struct plx_comm *c, int root, int fd, int first, int err_at_root, int cls, int keep_fd,
                        const char *fn, MPI_Comm *newcomm)
{
    int isroot = c->rank == root;
    int32_t hdr[2] = { err_at_root, 0 };
    int rc = MPI_SUCCESS;
    char *all = NULL, *remote = NULL;
    int *lpids = NULL;
    struct plx_group *rg = NULL;
    char mine[PLX_DYN_CARD] = "";

    /* 1. every member's card to the root */
    if (plx_procs_card(mine, sizeof mine) != PLX_OK)
        mine[0] = 0;
    if (isroot)
        all = plx_calloc((size_t)c->size, PLX_DYN_CARD);
    plx_status_t st = plx_coll_gather(mine, PLX_DYN_CARD, all, root, c, PLX_COLL_TAG_DEFAULT);
    /* 2. the roots swap their groups' cards: [count][cards], count -1: failed */
    if (isroot && hdr[0] == MPI_SUCCESS) {
        int32_t n = c->size, m = -1;
        for (int i = 0; i < c->size && st == PLX_OK; i++)
            if (!all[(size_t)i * PLX_DYN_CARD])
                n = -1;                         /* a member with no transport for other jobs */
        int ok = 1;
        for (int pass = 0; pass < 2 && ok; pass++) {
            if ((pass == 0) == (first != 0)) {
                ok = plx_port_write(fd, &n, sizeof n) == 0 &&
                     (n <= 0 || plx_port_write(fd, all, (size_t)n * PLX_DYN_CARD) == 0);
            } else {
                ok = plx_port_read(fd, &m, sizeof m, plx_util_now() + 60) == 0 && m <= (1 << 20);
                if (ok && m > 0) {
                    remote = plx_malloc((size_t)m * PLX_DYN_CARD);
                    ok = plx_port_read(fd, remote, (size_t)m * PLX_DYN_CARD, plx_util_now() + 60) == 0;
                }
            }
        }
        if (!ok)
            hdr[0] = plx_api_err(c, fn, cls, "the connection to the other group's root broke");
        else if (n < 0)
            hdr[0] = plx_api_err(c, fn, cls, "a process of this group has no transport that reaches other jobs "
                                 "(a singleton, or PLEXUS_TRANSPORTS without tcp and shared memory by name)");
        else if (m <= 0)
            hdr[0] = plx_api_err(c, fn, cls, "the other group could not take part (a process there has no "
                                 "transport that reaches other jobs)");
        hdr[1] = m;
    }
    if (isroot && hdr[0] != MPI_SUCCESS)
        hdr[1] = plx_dyn.count;
    if (st == PLX_OK)
        st = plx_coll_bcast(hdr, sizeof hdr, root, c, PLX_COLL_TAG_DEFAULT);
    plx_dyn.count = hdr[1];
    if (st != PLX_OK) {
        rc = plx_api_err(c, fn, MPI_ERR_OTHER, "passing on the root's result failed");
        goto out;
    }
    if (hdr[0] != MPI_SUCCESS) {
        rc = isroot ? hdr[0]
                    : plx_api_err(c, fn, cls, "the root (rank %d) could not make the connection", root);
        goto out;
    }
    /* 3. the other group's cards to every member, which adds its processes */
    int m = hdr[1];
    if (!isroot)
        remote = plx_malloc((size_t)m * PLX_DYN_CARD);
    if ((st = plx_coll_bcast(remote, (size_t)m * PLX_DYN_CARD, root, c, PLX_COLL_TAG_DEFAULT)) != PLX_OK) {
        rc = plx_api_err(c, fn, MPI_ERR_OTHER, "passing on the other group's cards failed");
        goto out;
    }
    char **cards = plx_malloc((size_t)m * sizeof *cards);
    for (int i = 0; i < m; i++) {
        cards[i] = remote + (size_t)i * PLX_DYN_CARD;
        cards[i][PLX_DYN_CARD - 1] = 0;
    }
    lpids = plx_malloc((size_t)m * sizeof *lpids);
    st = plx_procs_add(m, cards, lpids);
    free(cards);
    if (st != PLX_OK) {
        rc = plx_api_err(c, fn, MPI_ERR_INTERN, "cannot take in the processes of the other group");
        goto out;
    }
    /* 4. context ids agreed over the socket; the intercommunicator */
    rg = plx_group_new(m, lpids);
    struct plx_bridge b = { .local = c, .leader = root, .peer = plx_comm_world, .remote_leader = 0,
                            .ctx = plx_comm_world->context_id + 1, .tag = PLX_COLL_TAG_MEET,
                            .xchg = plx_dyn_sock_xchg, .xarg = &fd };
    rc = plx_intercomm_build_with(c, &b, rg, fn, newcomm);
out:
    if (rg)
        plx_group_release(rg);
    free(lpids);
    free(all);
    free(remote);
    if (isroot && fd >= 0 && !keep_fd)
        close(fd);
    return rc;
}

static int plx_dyn_check(const char *fn, int root, MPI_Comm comm, MPI_Comm *newcomm, struct plx_comm **c_p)
{
    int rc = plx_api_intracomm(comm, c_p, fn);
    if (rc == MPI_SUCCESS && (root < 0 || root >= (*c_p)->size))
        rc = plx_api_err(*c_p, fn, MPI_ERR_ROOT, "argument 'root' is %d but the communicator has %d ranks", root,
                         (*c_p)->size);
    if (rc == MPI_SUCCESS && !newcomm)
        rc = plx_api_null_arg(*c_p, fn, "newcomm");
    return rc;
}

int PMPI_Comm_accept(const char *port_name, MPI_Info info, int root, MPI_Comm comm, MPI_Comm *newcomm)
{
    static const char fn[] = "MPI_Comm_accept";
    struct plx_comm *c;
    plx_api_lock();
    int rc = plx_dyn_check(fn, root, comm, newcomm, &c);
    if (rc)
        goto out;
    int fd = -1, err = MPI_SUCCESS;
    if (c->rank == root) {
        struct plx_port **pp = port_name ? plx_dyn_port_find(port_name) : NULL;
        if (!pp || !*pp) {
            err = plx_api_err(c, fn, MPI_ERR_PORT, "'%.100s' is not a port this process has open (MPI_Open_port)",
                              port_name ? port_name : "(NULL)");
        } else {
            double t = plx_dyn_timeout(info, -1);
            char why[512];
            fd = plx_dyn_accept_root(*pp, t < 0 ? -1 : plx_util_now() + t, why, sizeof why);
            if (fd < 0)
                err = plx_api_err(c, fn, MPI_ERR_PORT, "no MPI_Comm_connect to port %s within the timeout (%g s)",
                                  port_name, t);
        }
    }
    rc = plx_dyn_meet(c, root, fd, 1, err, MPI_ERR_PORT, 0, fn, newcomm);
out:
    plx_api_unlock();
    return rc;
}

/* At a connect root: the socket to the accept root of port_name, or -1
 * with an MPI error in *err_p. */
static int plx_dyn_connect_root(struct plx_comm *c, const char *fn, const char *port_name, double t, int *err_p)
{
    struct plx_port_name pn;
    char why[300];
    if (!port_name || plx_port_parse(port_name, &pn) != 0) {
        *err_p = plx_api_err(c, fn, MPI_ERR_PORT, "'%.100s' is not a port name (from MPI_Open_port)",
                             port_name ? port_name : "(NULL)");
        return -1;
    }
    double deadline = t < 0 ? plx_util_now() + 1e9 : plx_util_now() + t;
    int fd = plx_port_connect(&pn, PLX_PORT_CONNECT, NULL, deadline, why, sizeof why);
    if (fd < 0) {
        *err_p = plx_api_err(c, fn, MPI_ERR_PORT, "cannot reach port %.200s: %s", port_name, why);
        return -1;
    }
    uint32_t ans = 0;
    int r = -1;
    while (r != 0) {                    /* wait for the accept, turning the progress engine */
        r = plx_port_read(fd, &ans, sizeof ans, PLX_MIN(deadline, plx_util_now() + 0.05));
        plx_progress_poll();
        if (r != 0 && plx_util_now() >= deadline)
            break;
        if (r != 0) {
            struct pollfd pf = { .fd = fd, .events = POLLIN };
            if (poll(&pf, 1, 0) > 0 && (pf.revents & (POLLHUP | POLLERR)))
                break;
        }
    }
    if (r != 0 || ans != PLX_PORT_OK) {
        close(fd);
        *err_p = r != 0 ? plx_api_err(c, fn, MPI_ERR_PORT, "no MPI_Comm_accept on port %.200s answered within %g s",
                                      port_name, t)
                        : plx_api_err(c, fn, MPI_ERR_PORT, "port %.200s is closed", port_name);
        return -1;
    }
    return fd;
}

int PMPI_Comm_connect(const char *port_name, MPI_Info info, int root, MPI_Comm comm, MPI_Comm *newcomm)
{
    static const char fn[] = "MPI_Comm_connect";
    struct plx_comm *c;
    plx_api_lock();
    int rc = plx_dyn_check(fn, root, comm, newcomm, &c);
    if (rc)
        goto out;
    int fd = -1, err = MPI_SUCCESS;
    if (c->rank == root)
        fd = plx_dyn_connect_root(c, fn, port_name, plx_dyn_timeout(info, 60), &err);
    rc = plx_dyn_meet(c, root, fd, 0, err, MPI_ERR_PORT, 0, fn, newcomm);
out:
    plx_api_unlock();
    return rc;
}

/* --- join ---------------------------------------------------------------- */

int PMPI_Comm_join(int fd, MPI_Comm *intercomm)
{
    static const char fn[] = "MPI_Comm_join";
    plx_api_lock();
    plx_api_check_init(fn);
    int rc = MPI_SUCCESS;
    if (!intercomm) {
        rc = plx_api_null_arg(NULL, fn, "intercomm");
        goto out;
    }
    /* each side sends its job and world rank: they decide who writes first */
    struct {
        uint32_t magic;
        int32_t wrank;
        char job[256];
    } mine, theirs;
    memset(&mine, 0, sizeof mine);
    mine.magic = PLX_PORT_MAGIC;
    snprintf(mine.job, sizeof mine.job, "%s", plx_procs.kvsname);
    mine.wrank = plx_procs.my_lpid;
    if (plx_port_write(fd, &mine, sizeof mine) != 0 || plx_port_read(fd, &theirs, sizeof theirs, -1) != 0 ||
        theirs.magic != PLX_PORT_MAGIC) {
        rc = plx_api_err(NULL, fn, MPI_ERR_ARG, "socket %d: cannot exchange the join handshake (not a connected "
                         "socket, or the other side is not in MPI_Comm_join)", fd);
        goto out;
    }
    theirs.job[sizeof theirs.job - 1] = '\0';
    uint64_t km = plx_job_key(mine.job), kt = plx_job_key(theirs.job);
    if (km == kt && theirs.wrank == mine.wrank) {
        rc = plx_api_err(NULL, fn, MPI_ERR_ARG, "socket %d leads back to this process (world rank %d)", fd,
                         (int)theirs.wrank);
        goto out;
    }
    int first = km != kt ? km < kt : mine.wrank < theirs.wrank;
    rc = plx_dyn_meet(plx_comm_self, 0, fd, first, MPI_SUCCESS, MPI_ERR_OTHER, 1, fn, intercomm);
out:
    plx_api_unlock();
    return rc;
}

/* --- disconnect, parent -------------------------------------------------- */

/* --- disconnect ---------------------------------------------------------- */

/* The processes of other jobs among c's members (lpids above this job's
 * world), or NULL with *n_p 0. */
static int *plx_dyn_other_jobs(struct plx_comm *c, int *n_p)
{
    const struct plx_group *gs[2] = { c->group, c->remote_group };
    int n = 0, *out = NULL;
    for (int k = 0; k < 2; k++)
        for (int i = 0; gs[k] && i < gs[k]->size; i++)
            if (gs[k]->lpids[i] >= plx_comm_world->size) {
                out = plx_realloc(out, (size_t)(n + 1) * sizeof *out);
                out[n++] = gs[k]->lpids[i];
            }
    *n_p = n;
    return out;
}

struct plx_dyn_drop {
    int *lpids;
    int n;
    double end;
};

/* Crosses off the processes a remaining communicator still holds. */
static void plx_dyn_still_used(void *obj, void *arg)
{
    struct plx_comm *c = obj;
    struct plx_dyn_drop *d = arg;
    for (int i = 0; i < d->n; i++)
        if (d->lpids[i] >= 0 &&
            (plx_group_rank_of_lpid(c->group, d->lpids[i]) != MPI_UNDEFINED ||
             (c->remote_group && plx_group_rank_of_lpid(c->remote_group, d->lpids[i]) != MPI_UNDEFINED)))
            d->lpids[i] = -1;
}

static int plx_dyn_dropped(void *arg)
{
    struct plx_dyn_drop *d = arg;
    return plx_route_drop_peers(d->lpids, d->n) == 0 || plx_util_now() > d->end;
}

/* After MPI_Comm_disconnect: the transports close what reaches processes of
 * other jobs that no communicator holds any more (the other side, in its
 * disconnect, does the same), so neither job's MPI_Finalize waits for the
 * other. Waits up to 10 s for the other side to close; what is still open
 * then is closed at finalize as before. */
static void plx_dyn_drop(int *lpids, int n)
{
    struct plx_dyn_drop d = { .lpids = lpids, .n = 0, .end = plx_util_now() + 10.0 };
    plx_api_lock();
    d.n = n;
    plx_obj_foreach(&plx_comm_tab, plx_dyn_still_used, &d);
    int k = 0;
    for (int i = 0; i < n; i++)
        if (lpids[i] >= 0)
            lpids[k++] = lpids[i];
    d.n = k;
    if (k)
        plx_progress_wait(plx_dyn_dropped, &d);
    plx_api_unlock();
}

int PMPI_Comm_disconnect(MPI_Comm *comm)
{
    static const char fn[] = "MPI_Comm_disconnect";
    struct plx_comm *c;
    plx_api_lock();
    plx_api_check_init(fn);
    int rc = comm ? plx_api_comm(*comm, &c, fn) : plx_api_null_arg(NULL, fn, "comm");
    if (rc == MPI_SUCCESS && c->obj.builtin)
        rc = plx_api_err(c, fn, MPI_ERR_COMM, "argument 'comm' is %s, which cannot be disconnected",
                         c == plx_comm_world ? "MPI_COMM_WORLD" : "MPI_COMM_SELF");
    plx_api_unlock();
    if (rc)
        return rc;
    /* every member has finished its communication on comm once all are here */
    MPI_Comm h = *comm;
    int n = 0, *other = plx_dyn_other_jobs(c, &n);
    rc = PMPI_Barrier(*comm);
    if (rc == MPI_SUCCESS)
        rc = PMPI_Comm_free(comm);
    if (rc == MPI_SUCCESS && h == plx_dyn.parent)
        plx_dyn.parent = MPI_COMM_NULL;
    if (rc == MPI_SUCCESS && n)
        plx_dyn_drop(other, n);
    free(other);
    return rc;
}

int PMPI_Comm_get_parent(MPI_Comm *parent)
{
    static const char fn[] = "MPI_Comm_get_parent";
    plx_api_lock();
    plx_api_check_init(fn);
    int rc = MPI_SUCCESS;
    if (!parent)
        rc = plx_api_null_arg(NULL, fn, "parent");
    else if (plx_dyn.parent != MPI_COMM_NULL && !plx_obj_lookup(&plx_comm_tab, plx_dyn.parent))
        *parent = plx_dyn.parent = MPI_COMM_NULL;     /* freed by the program */
    else
        *parent = plx_dyn.parent;
    plx_api_unlock();
    return rc;
}

/* At MPI_Init of a spawned process: connect to the parents (collective
 * over MPI_COMM_WORLD). Errors end the job: its parent is waiting. */
void plx_dyn_init_parent(void)
{
    static const char fn[] = "MPI_Init";
    const char *port = getenv("PLEXUS_PARENT_PORT");
    char kv[PLX_PM_MAX_VAL];
    /* under Hydra the port comes as MPICH's preput key (PMI-1 answers a
     * missing key at once; the other protocols are not asked) */
    if ((!port || !port[0]) && !strcmp(plx_pm_name(), "PMI-1") && !getenv("PLEXUS_MPIEXEC") &&
        plx_pm_get("PARENT_ROOT_PORT_NAME", kv, sizeof kv) == PLX_OK)
        port = kv;
    if (!port || !port[0])
        return;
    plx_api_lock();
    int fd = -1, err = MPI_SUCCESS;
    if (plx_comm_world->rank == 0)
        fd = plx_dyn_connect_root(plx_comm_world, fn, port, 60, &err);
    MPI_Comm pc = MPI_COMM_NULL;
    int rc = plx_dyn_meet(plx_comm_world, 0, fd, 0, err, MPI_ERR_SPAWN, 0, fn, &pc);
    plx_api_unlock();
    if (rc != MPI_SUCCESS) {
        fprintf(stderr, "plexus: rank %d of a spawned job cannot connect to its parents (port %s)\n",
                plx_rt.world_rank, port);
        plx_pm_abort(1, "cannot connect to the parents");
    }
    plx_dyn.parent = pc;
}

/* --- spawn ----------------------------------------------------------------- */

static int plx_dyn_spawn(const char *fn, int count, char *cmds[], char **argvs[], const int maxprocs[],
                         const MPI_Info infos[], int root, MPI_Comm comm, MPI_Comm *intercomm, int *errcodes)
{
    struct plx_comm *c;
    plx_api_lock();
    int rc = plx_dyn_check(fn, root, comm, intercomm, &c);
    if (rc)
        goto out;
    int total = 0, fd = -1, err = MPI_SUCCESS;
    int32_t nmiss = 0;          /* errcodes' length when a "soft" key started fewer, else 0 */
    unsigned char *miss = NULL; /* then: 1 for each process that was not started */
    if (c->rank == root) {
        /* the arguments count at the root only */
        if (count <= 0)
            err = plx_api_err(c, fn, MPI_ERR_ARG, "argument 'count' is %d; it must be positive", count);
        for (int i = 0; i < count && err == MPI_SUCCESS; i++) {
            if (!cmds || !cmds[i] || !cmds[i][0])
                err = plx_api_err(c, fn, MPI_ERR_SPAWN, "command %d is NULL or empty", i);
            else if (!maxprocs || maxprocs[i] <= 0)
                err = plx_api_err(c, fn, MPI_ERR_SPAWN, "argument 'maxprocs' of command %d (%s) is %d; it must "
                                  "be positive", i, cmds[i], maxprocs ? maxprocs[i] : 0);
            else
                total += maxprocs[i];
        }
        struct plx_pm_spawn_cmd *sc = plx_calloc((size_t)(count > 0 ? count : 1), sizeof *sc);
        double t = 120;
        for (int i = 0; i < count && err == MPI_SUCCESS; i++) {
            sc[i].cmd = cmds[i];
            sc[i].argv = argvs ? argvs[i] : NULL;
            sc[i].maxprocs = maxprocs[i];
            struct plx_info *in = infos && infos[i] != MPI_INFO_NULL ? plx_obj_lookup(&plx_info_tab, infos[i]) : NULL;
            if (in) {
                sc[i].ninfo = in->nkeys;
                sc[i].keys = plx_calloc((size_t)in->nkeys + 1, sizeof(char *));
                sc[i].vals = plx_calloc((size_t)in->nkeys + 1, sizeof(char *));
                for (int k = 0; k < in->nkeys; k++) {
                    sc[i].keys[k] = in->entries[k].key;
                    sc[i].vals[k] = in->entries[k].value;
                }
                t = plx_dyn_timeout(infos[i], t);
            }
        }
        struct plx_port *p = NULL;
        if (err == MPI_SUCCESS && !(p = plx_dyn_port_open()))
            err = plx_api_err(c, fn, MPI_ERR_SPAWN, "cannot open a port for the children: %s", strerror(errno));
        if (err == MPI_SUCCESS) {
            char why[1024] = "";
            plx_status_t st = plx_pm_spawn(count, sc, p->name, why, sizeof why);
            if (st == PLX_ERR_UNSUPPORTED)
                err = plx_api_err(c, fn, MPI_ERR_SPAWN, "spawning processes needs Plexus's mpiexec, which serves "
                                  "spawn requests (this process's launcher: %s)", plx_pm_name());
            else if (st != PLX_OK)
                err = plx_api_err(c, fn, MPI_ERR_SPAWN, "the launcher did not start the %d process%s: %s", total,
                                  total == 1 ? "" : "es", why[0] ? why : "(no reason given)");
            if (st == PLX_OK) {
                int started = 0;
                for (int i = 0; i < count; i++)
                    started += sc[i].started;
                if (started < total) {
                    /* errcodes has one entry per process asked for, command
                     * by command; those not started get MPI_ERR_SPAWN */
                    nmiss = total;
                    miss = plx_calloc((size_t)total, 1);
                    for (int i = 0, at = 0; i < count; at += sc[i].maxprocs, i++)
                        memset(miss + at + sc[i].started, 1, (size_t)(sc[i].maxprocs - sc[i].started));
                    total = started;
                }
                if ((fd = plx_dyn_accept_root(p, plx_util_now() + t, why, sizeof why)) < 0)
                    err = fd == -2 ? plx_api_err(c, fn, MPI_ERR_SPAWN, "the spawned processes failed: %s", why)
                                   : plx_api_err(c, fn, MPI_ERR_SPAWN, "the %d spawned process%s did not "
                                                 "connect within %g s", total, total == 1 ? "" : "es", t);
            }
        }
        if (p)
            plx_dyn_port_close(plx_dyn_port_find(p->name));
        for (int i = 0; i < count; i++) {
            free(sc[i].keys);
            free(sc[i].vals);
        }
        free(sc);
    }
    *intercomm = MPI_COMM_NULL;
    if (plx_coll_bcast(&nmiss, sizeof nmiss, root, c, PLX_COLL_TAG_DEFAULT) != PLX_OK)
        nmiss = 0;
    if (nmiss > 0 && c->rank != root)
        miss = plx_calloc((size_t)nmiss, 1);
    if (nmiss > 0 && plx_coll_bcast(miss, (size_t)nmiss, root, c, PLX_COLL_TAG_DEFAULT) != PLX_OK)
        nmiss = 0;
    plx_dyn.count = total;
    rc = plx_dyn_meet(c, root, fd, 1, err, MPI_ERR_SPAWN, 0, fn, intercomm);
    if (errcodes != MPI_ERRCODES_IGNORE && rc == MPI_SUCCESS && nmiss > 0) {
        for (int i = 0; i < nmiss; i++)
            errcodes[i] = miss[i] ? MPI_ERR_SPAWN : MPI_SUCCESS;
    } else if (errcodes != MPI_ERRCODES_IGNORE) {
        /* the children's number (or, after a failure, the number asked
         * for) is known everywhere once the meeting is done */
        for (int i = 0; i < plx_dyn.count; i++)
            errcodes[i] = rc;
    }
    free(miss);
out:
    plx_api_unlock();
    return rc;
}

int PMPI_Comm_spawn(const char *command, char *argv[], int maxprocs, MPI_Info info, int root, MPI_Comm comm,
                    MPI_Comm *intercomm, int array_of_errcodes[])
{
    char *cmds[1] = { (char *)command };
    char **argvs[1] = { argv == MPI_ARGV_NULL ? NULL : argv };
    int mp[1] = { maxprocs };
    MPI_Info infos[1] = { info };
    return plx_dyn_spawn("MPI_Comm_spawn", 1, cmds, argvs, mp, infos, root, comm, intercomm, array_of_errcodes);
}

int PMPI_Comm_spawn_multiple(int count, char *array_of_commands[], char **array_of_argv[],
                             const int array_of_maxprocs[], const MPI_Info array_of_info[], int root,
                             MPI_Comm comm, MPI_Comm *intercomm, int array_of_errcodes[])
{
    static const char fn[] = "MPI_Comm_spawn_multiple";
    return plx_dyn_spawn(fn, count, array_of_commands, array_of_argv == MPI_ARGVS_NULL ? NULL : array_of_argv,
                         array_of_maxprocs, array_of_info, root, comm, intercomm, array_of_errcodes);
}
