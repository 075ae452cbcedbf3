/*
 * MPI_Isendrecv and MPI_Isendrecv_replace (MPI 4.0): a send and a receive
 * started together, completed by one request whose status is the
 * receive's. Each is a small schedule (coll/sched.h) of user messages on the
 * communicator's point-to-point context: one round holding the send and the
 * receive, which the progress engine advances like a nonblocking
 * collective. The _replace form first copies the buffer into a temporary
 * one (the schedule's local step, run when the round starts), sends that
 * and receives into the buffer.
 */
#include "api/pt2pt_api.h"
#include "coll/sched.h"

#pragma weak MPI_Isendrecv = PMPI_Isendrecv
#pragma weak MPI_Isendrecv_replace = PMPI_Isendrecv_replace

/* Starts s and returns its request; the status of a receive from
 * MPI_PROC_NULL is the empty one with source MPI_PROC_NULL. */
static void plx_isr_start(struct plx_sched *s, int source, MPI_Request *request, const char *fn)
{
    s->fn = fn;
    int ctx = s->comm->context_id;
    struct plx_request *r = plx_sched_start(s);  /* s is gone if it completed at once */
    r->ctx = ctx;
    if (source == MPI_PROC_NULL) {     /* no receive entry: nothing overwrites this */
        r->st_source = MPI_PROC_NULL;
        r->st_tag = MPI_ANY_TAG;
    }
    *request = r->obj.handle;
}

static int plx_isendrecv(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, int dest, int sendtag,
                         void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, int source, int recvtag,
                         MPI_Comm comm, MPI_Request *request, const char *fn)
{
    struct plx_comm *c = NULL, *c2 = NULL;
    struct plx_datatype *sdt = NULL, *rdt = NULL;
    plx_api_lock();
    int rc = plx_api_p2p_check(comm, sendbuf, sendcount, sendtype, dest, sendtag, PLX_DIR_SEND, fn, &c, &sdt);
    if (rc == MPI_SUCCESS)
        rc = plx_api_p2p_check(comm, recvbuf, recvcount, recvtype, source, recvtag, PLX_DIR_RECV, fn, &c2, &rdt);
    if (rc == MPI_SUCCESS && !request)
        rc = plx_api_null_arg(c, fn, "request");
    if (rc == MPI_SUCCESS) {
        struct plx_sched *s = plx_sched_new_p2p(c);
        plx_sched_send_user(s, sendbuf, sendcount, sdt, dest, sendtag);
        plx_sched_recv_user(s, recvbuf, recvcount, rdt, source, recvtag);
        plx_isr_start(s, source, request, fn);
    }
    plx_api_unlock();
    return rc;
}

static int plx_isendrecv_replace(void *buf, MPI_Count count, MPI_Datatype datatype, int dest, int sendtag,
                                 int source, int recvtag, MPI_Comm comm, MPI_Request *request, const char *fn)
{
    struct plx_comm *c = NULL, *c2 = NULL;
    struct plx_datatype *dt = NULL, *dt2 = NULL;
    plx_api_lock();
    int rc = plx_api_p2p_check(comm, buf, count, datatype, dest, sendtag, PLX_DIR_SEND, fn, &c, &dt);
    if (rc == MPI_SUCCESS)
        rc = plx_api_p2p_check(comm, buf, count, datatype, source, recvtag, PLX_DIR_RECV, fn, &c2, &dt2);
    if (rc == MPI_SUCCESS && !request)
        rc = plx_api_null_arg(c, fn, "request");
    if (rc == MPI_SUCCESS) {
        struct plx_sched *s = plx_sched_new_p2p(c);
        if (dest != MPI_PROC_NULL) {
            void *tmp = plx_sched_alloc_layout(s, count, dt);
            plx_sched_copy(s, buf, count, dt, tmp, count, dt);
            plx_sched_send_user(s, tmp, count, dt, dest, sendtag);
        }
        plx_sched_recv_user(s, buf, count, dt, source, recvtag);
        plx_isr_start(s, source, request, fn);
    }
    plx_api_unlock();
    return rc;
}

int PMPI_Isendrecv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag,
                   void *recvbuf, int recvcount, MPI_Datatype recvtype, int source, int recvtag, MPI_Comm comm,
                   MPI_Request *request)
{
    return plx_isendrecv(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype, source, recvtag,
                         comm, request, "MPI_Isendrecv");
}

int PMPI_Isendrecv_replace(void *buf, int count, MPI_Datatype datatype, int dest, int sendtag, int source,
                           int recvtag, MPI_Comm comm, MPI_Request *request)
{
    return plx_isendrecv_replace(buf, count, datatype, dest, sendtag, source, recvtag, comm, request,
                                 "MPI_Isendrecv_replace");
}

/* --- large-count forms (MPI 4.0 `_c`) ----------------------------------- */

#pragma weak MPI_Isendrecv_c = PMPI_Isendrecv_c
#pragma weak MPI_Isendrecv_replace_c = PMPI_Isendrecv_replace_c

int PMPI_Isendrecv_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, int dest, int sendtag,
                     void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, int source, int recvtag, MPI_Comm comm,
                     MPI_Request *request)
{
    return plx_isendrecv(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype, source, recvtag,
                         comm, request, "MPI_Isendrecv_c");
}

int PMPI_Isendrecv_replace_c(void *buf, MPI_Count count, MPI_Datatype datatype, int dest, int sendtag, int source,
                             int recvtag, MPI_Comm comm, MPI_Request *request)
{
    return plx_isendrecv_replace(buf, count, datatype, dest, sendtag, source, recvtag, comm, request,
                                 "MPI_Isendrecv_replace_c");
}


