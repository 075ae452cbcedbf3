/*
 * Dynamic-process entry points: name publishing, ports, accept/connect,
 * join, disconnect, get_parent, spawn.
 *
 * What works: MPI_Publish_name / Lookup_name / Unpublish_name through the
 * launcher's name service (our mpiexec holds the names; Slurm's PMI-2 too);
 * MPI_Open_port / Close_port; MPI_Comm_accept / Comm_connect and
 * MPI_Comm_join between processes of one job (the two groups meet as in
 * MPI_Intercomm_create, the roots over MPI_COMM_WORLD's collective context);
 * MPI_Comm_disconnect; MPI_Comm_get_parent (MPI_COMM_NULL: nothing is
 * spawned). Not yet: processes of another job (a port of another mpiexec,
 * a join with a process of another job) and MPI_Comm_spawn, which need
 * the transports to take in world ranks (lpids) at run time: they fail
 * with a message saying so (see the note of issue 16 for what is needed).
 *
 * Ports: "plexus-port:<job>:<world rank>:<number>". A connect sends its
 * root's world rank to the port's owner (tag PLX_COLL_TAG_CONNECT) and
 * waits for the answer (PLX_COLL_TAG_ACCEPT); a request that reaches an
 * accept on another port of the same process waits there for its port. The
 * info key "timeout" (seconds) bounds the wait of both; by default connect
 * waits 60 s, accept for ever (as MPI says).
 */
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

#define PLX_PORT_PREFIX "plexus-port:"

struct plx_port {
    struct plx_port *next;
    int id;
    int npending;
    int pending[64];            /* world ranks of connect roots waiting for an accept */
};

static struct {
    struct plx_port *ports;
    int next_id;
} plx_dyn;

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

static struct plx_port **plx_dyn_port_find(int id)
{
    struct plx_port **pp = &plx_dyn.ports;
    while (*pp && (*pp)->id != id)
        pp = &(*pp)->next;
    return pp;
}

/* Parses a port name: 0 with its world rank and number; -1 when it is not
 * one of ours; -2 when it belongs to another job (job is copied out). */
static int plx_dyn_port_parse(const char *name, int *lpid_p, int *id_p, char *job, size_t joblen)
{
    size_t pl = strlen(PLX_PORT_PREFIX);
    if (strncmp(name, PLX_PORT_PREFIX, pl) != 0)
        return -1;
    const char *j = name + pl, *c1 = strchr(j, ':');
    if (!c1 || (size_t)(c1 - j) >= joblen)
        return -1;
    memcpy(job, j, (size_t)(c1 - j));
    job[c1 - j] = '\0';
    char *end;
    long lpid = strtol(c1 + 1, &end, 10);
    if (*end != ':')
        return -1;
    long id = strtol(end + 1, &end, 10);
    if (*end != '\0' || lpid < 0 || id < 0)
        return -1;
    if (strcmp(job, plx_procs.kvsname) != 0)
        return -2;
    if (lpid >= plx_procs.n)
        return -1;
    *lpid_p = (int)lpid;
    *id_p = (int)id;
    return 0;
}

int PMPI_Open_port(MPI_Info info, char *port_name)
{
    static const char fn[] = "MPI_Open_port";
    (void)info;
    plx_api_lock();
    plx_api_check_init(fn);
    int rc = MPI_SUCCESS;
    if (!port_name) {
        rc = plx_api_null_arg(NULL, fn, "port_name");
    } else {
        struct plx_port *p = plx_calloc(1, sizeof *p);
        p->id = plx_dyn.next_id++;
        p->next = plx_dyn.ports;
        plx_dyn.ports = p;
        snprintf(port_name, MPI_MAX_PORT_NAME, PLX_PORT_PREFIX "%.200s:%d:%d", plx_procs.kvsname, plx_procs.my_lpid,
                 p->id);
    }
    plx_api_unlock();
    return rc;
}

int PMPI_Close_port(const char *port_name)
{
    static const char fn[] = "MPI_Close_port";
    plx_api_lock();
    plx_api_check_init(fn);
    int rc = MPI_SUCCESS, lpid, id;
    char job[256];
    struct plx_port **pp = NULL;
    if (!port_name)
        rc = plx_api_null_arg(NULL, fn, "port_name");
    else if (plx_dyn_port_parse(port_name, &lpid, &id, job, sizeof job) != 0 || lpid != plx_procs.my_lpid ||
             !*(pp = plx_dyn_port_find(id)))
        rc = plx_api_err(NULL, fn, MPI_ERR_PORT, "'%.100s' is not a port this process has open", port_name);
    else {
        struct plx_port *p = *pp;
        *pp = p->next;
        free(p);
    }
    plx_api_unlock();
    return rc;
}

/* --- accept / connect ----------------------------------------------------- */

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

struct plx_dyn_wait {
    struct plx_request *r;
    double deadline;
};

static int plx_dyn_wait_done(void *arg)
{
    struct plx_dyn_wait *w = arg;
    if (w->r->cc == 0)
        return 1;
    if (w->deadline >= 0 && plx_util_now() > w->deadline)
        return 1;
    usleep(200);                /* a wait that may last long: do not burn the CPU */
    return 0;
}

/* A receive or send on MPI_COMM_WORLD's collective context. */
static struct plx_request *plx_dyn_start(int kind, void *buf, int n, int peer, int tag)
{
    struct plx_request *r = plx_request_new(kind, plx_comm_world);
    r->rank = peer;
    r->tag = tag;
    r->ctx = plx_comm_world->context_id + 1;
    r->buf = buf;
    r->count = n;
    r->dt = plx_dt_lookup(MPI_BYTE);
    r->mode = PLX_MODE_STD;
    plx_status_t st = kind == PLX_REQ_SEND ? plx_pt2pt_send_start(r) : plx_pt2pt_recv_start(r);
    if (st != PLX_OK) {
        r->cc = 0;
        r->st_error = MPI_ERR_OTHER;
    }
    return r;
}

/* Waits for r until the deadline; 1 when it completed (r is freed either way). */
static int plx_dyn_finish(struct plx_request *r, double deadline)
{
    struct plx_dyn_wait w = { r, deadline };
    plx_progress_wait(plx_dyn_wait_done, &w);
    int done = r->cc == 0 && r->st_error == MPI_SUCCESS;
    if (r->cc != 0) {
        plx_pt2pt_cancel(r);
        plx_progress_wait_req(r);
    }
    plx_request_free(r);
    return done;
}

/* Tells a connect root whether its port takes it. */
static void plx_dyn_answer(int lpid, int id, int ok)
{
    int32_t ans[2] = { id, ok };
    struct plx_request *r = plx_dyn_start(PLX_REQ_SEND, ans, sizeof ans, lpid, PLX_COLL_TAG_ACCEPT);
    plx_dyn_finish(r, plx_util_now() + 10);
}

/* At the accept root: the world rank of a connect root for port p, or -1
 * after the timeout. */
static int plx_dyn_accept_root(struct plx_port *p, double deadline)
{
    for (;;) {
        if (p->npending > 0) {
            int lpid = p->pending[0];
            memmove(p->pending, p->pending + 1, (size_t)--p->npending * sizeof(int));
            return lpid;
        }
        int32_t req[2];
        struct plx_request *r = plx_dyn_start(PLX_REQ_RECV, req, sizeof req, MPI_ANY_SOURCE, PLX_COLL_TAG_CONNECT);
        if (!plx_dyn_finish(r, deadline))
            return -1;
        struct plx_port **to = plx_dyn_port_find(req[0]);
        if (*to == p)
            return req[1];
        if (*to && (*to)->npending < 64)
            (*to)->pending[(*to)->npending++] = req[1];     /* for another accept of this process */
        else
            plx_dyn_answer(req[1], req[0], 0);              /* port closed (or too many waiting) */
    }
}

/* Collective tail of accept and connect: the root's result reaches every
 * member, then the two groups meet as in MPI_Intercomm_create. */
static int plx_dyn_meet(struct plx_comm *c, int root, int32_t peer_lpid, const char *fn, MPI_Comm *newcomm,
                        int err_at_root)
{
    int32_t msg[2] = { peer_lpid, err_at_root };
    plx_status_t st = plx_coll_bcast(msg, sizeof msg, root, c, PLX_COLL_TAG_DEFAULT);
    if (st != PLX_OK)
        return plx_api_err(c, fn, MPI_ERR_OTHER, "passing on the root's result failed");
    if (msg[1] != MPI_SUCCESS) {
        if (c->rank == root)
            return err_at_root;
        return plx_api_err(c, fn, MPI_ERR_PORT, "the root (rank %d) could not make the connection", root);
    }
    struct plx_bridge b = { .local = c, .leader = root, .peer = plx_comm_world, .remote_leader = msg[0],
                            .ctx = plx_comm_world->context_id + 1, .tag = PLX_COLL_TAG_MEET };
    return plx_intercomm_build(c, &b, fn, newcomm);
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
    int32_t peer = -1;
    int err = MPI_SUCCESS;
    if (c->rank == root) {
        int lpid, id;
        char job[256];
        struct plx_port **pp = NULL;
        if (!port_name || plx_dyn_port_parse(port_name, &lpid, &id, job, sizeof job) != 0 ||
            lpid != plx_procs.my_lpid || !*(pp = plx_dyn_port_find(id))) {
            err = plx_api_err(c, fn, MPI_ERR_PORT, "'%.100s' is not a port this process has open (MPI_Open_port)",
                              port_name ? port_name : "(NULL)");
        } else {
            double t = plx_dyn_timeout(info, -1);
            peer = plx_dyn_accept_root(*pp, t < 0 ? -1 : plx_util_now() + t);
            if (peer < 0)
                err = plx_api_err(c, fn, MPI_ERR_PORT, "no MPI_Comm_connect to port %s within the timeout (%g s)",
                                  port_name, t);
            else
                plx_dyn_answer(peer, id, 1);
        }
    }
    rc = plx_dyn_meet(c, root, peer, fn, newcomm, err);
out:
    plx_api_unlock();
    return rc;
}

int PMPI_Comm_connect(const char *port_name, MPI_Info info, int root, MPI_Comm comm, MPI_Comm *newcomm)
{
    static const char fn[] = "MPI_Comm_connect";
    struct plx_comm *c;
    plx_api_lock();
    int rc = plx_dyn_check(fn, root, comm, newcomm, &c);
    if (rc)
        goto out;
    int32_t peer = -1;
    int err = MPI_SUCCESS;
    if (c->rank == root) {
        int lpid, id;
        char job[256];
        int p = port_name ? plx_dyn_port_parse(port_name, &lpid, &id, job, sizeof job) : -1;
        if (p == -2) {
            err = plx_api_err(c, fn, MPI_ERR_PORT,
                              "port %.100s belongs to another job (%s; this is %s): connecting separately "
                              "started jobs is not supported yet",
                              port_name, job, plx_procs.kvsname);
        } else if (p != 0) {
            err = plx_api_err(c, fn, MPI_ERR_PORT, "'%.100s' is not a port name (from MPI_Open_port)",
                              port_name ? port_name : "(NULL)");
        } else {
            double t = plx_dyn_timeout(info, 60);
            double deadline = t < 0 ? -1 : plx_util_now() + t;
            int32_t req[2] = { id, plx_procs.my_lpid }, ans[2] = { -1, 0 };
            struct plx_request *a = plx_dyn_start(PLX_REQ_RECV, ans, sizeof ans, lpid, PLX_COLL_TAG_ACCEPT);
            plx_dyn_finish(plx_dyn_start(PLX_REQ_SEND, req, sizeof req, lpid, PLX_COLL_TAG_CONNECT), deadline);
            if (!plx_dyn_finish(a, deadline))
                err = plx_api_err(c, fn, MPI_ERR_PORT, "no MPI_Comm_accept on port %s answered within %g s",
                                  port_name, t);
            else if (!ans[1] || ans[0] != id)
                err = plx_api_err(c, fn, MPI_ERR_PORT, "port %s is closed", port_name);
            else
                peer = lpid;
        }
    }
    rc = plx_dyn_meet(c, root, peer, fn, newcomm, err);
out:
    plx_api_unlock();
    return rc;
}

/* --- join ---------------------------------------------------------------- */

static int plx_dyn_sock_xfer(int fd, void *buf, size_t n, int out)
{
    char *p = buf;
    while (n > 0) {
        ssize_t k = out ? send(fd, p, n, MSG_NOSIGNAL) : recv(fd, p, n, 0);
        if (k <= 0)
            return -1;
        p += k;
        n -= (size_t)k;
    }
    return 0;
}

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
    /* each side sends its job and world rank; the lower world rank leads */
    struct {
        char job[256];
        int32_t lpid;
    } mine, theirs;
    memset(&mine, 0, sizeof mine);
    snprintf(mine.job, sizeof mine.job, "%s", plx_procs.kvsname);
    mine.lpid = plx_procs.my_lpid;
    if (plx_dyn_sock_xfer(fd, &mine, sizeof mine, 1) != 0 || plx_dyn_sock_xfer(fd, &theirs, sizeof theirs, 0) != 0) {
        rc = plx_api_err(NULL, fn, MPI_ERR_ARG, "socket %d: cannot exchange the join handshake (not a connected "
                         "socket, or the other side is not in MPI_Comm_join)", fd);
        goto out;
    }
    theirs.job[sizeof theirs.job - 1] = '\0';
    if (strcmp(theirs.job, mine.job) != 0) {
        rc = plx_api_err(NULL, fn, MPI_ERR_OTHER,
                         "the process on socket %d belongs to another job (%s; this is %s): joining separately "
                         "started jobs is not supported yet", fd, theirs.job, mine.job);
        goto out;
    }
    if (theirs.lpid == mine.lpid || theirs.lpid < 0 || theirs.lpid >= plx_procs.n) {
        rc = plx_api_err(NULL, fn, MPI_ERR_ARG, "socket %d leads back to this process (world rank %d)", fd,
                         (int)theirs.lpid);
        goto out;
    }
    struct plx_bridge b = { .local = plx_comm_self, .leader = 0, .peer = plx_comm_world,
                            .remote_leader = theirs.lpid, .ctx = plx_comm_world->context_id + 1,
                            .tag = PLX_COLL_TAG_MEET };
    rc = plx_intercomm_build(plx_comm_self, &b, fn, intercomm);
out:
    plx_api_unlock();
    return rc;
}

/* --- disconnect, parent, spawn -------------------------------------------- */

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
    rc = PMPI_Barrier(*comm);
    if (rc == MPI_SUCCESS)
        rc = PMPI_Comm_free(comm);
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
    else
        *parent = MPI_COMM_NULL;    /* no process of a Plexus job is spawned (yet) */
    plx_api_unlock();
    return rc;
}

static int plx_dyn_no_spawn(const char *fn, MPI_Comm comm, int n, int *errcodes)
{
    struct plx_comm *c;
    plx_api_lock();
    int rc = plx_api_intracomm(comm, &c, fn);
    if (rc == MPI_SUCCESS) {
        rc = plx_api_err(c, fn, MPI_ERR_SPAWN,
                         "spawning processes is not supported yet (it needs the transports to take in new "
                         "world ranks at run time)");
        if (errcodes != MPI_ERRCODES_IGNORE)
            for (int i = 0; i < n; i++)
                errcodes[i] = rc;
    }
    plx_api_unlock();
    return rc;
}

int PMPI_Comm_spawn(const char *command, char *argv[], int maxprocs, MPI_Info info, int root, MPI_Comm comm,
                    MPI_Comm *intercomm, int array_of_errcodes[])
{
    (void)command;
    (void)argv;
    (void)info;
    (void)root;
    if (intercomm)
        *intercomm = MPI_COMM_NULL;
    return plx_dyn_no_spawn("MPI_Comm_spawn", comm, maxprocs > 0 ? maxprocs : 0, array_of_errcodes);
}

int PMPI_Comm_spawn_multiple(int count, char *array_of_commands[], char **array_of_argv[],
                             const int array_of_maxprocs[], const MPI_Info array_of_info[], int root,
                             MPI_Comm comm, MPI_Comm *intercomm, int array_of_errcodes[])
{
    (void)array_of_commands;
    (void)array_of_argv;
    (void)array_of_info;
    (void)root;
    int n = 0;
    for (int i = 0; array_of_maxprocs && i < count; i++)
        n += array_of_maxprocs[i] > 0 ? array_of_maxprocs[i] : 0;
    if (intercomm)
        *intercomm = MPI_COMM_NULL;
    return plx_dyn_no_spawn("MPI_Comm_spawn_multiple", comm, n, array_of_errcodes);
}
