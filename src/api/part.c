/*
 * Partitioned point-to-point communication (MPI 4.0): MPI_Psend_init,
 * MPI_Precv_init, MPI_Pready, _range, _list, MPI_Parrived.
 *
 * A partitioned request is a persistent schedule (coll/sched.h) of one
 * entry per partition, all in one round. On the receiving side MPI_Start
 * posts a receive per partition; on the sending side each send entry is
 * gated: MPI_Pready opens it and the partition leaves at once, so partitions
 * move as they become ready, in whatever order the threads ready them, not
 * all at the end. MPI_Parrived asks whether one partition's receive has
 * completed. The request completes when every partition has.
 *
 * Matching. Partition messages travel on the communicator's collective
 * context, in a tag range no collective uses (coll.h: schedules take -16
 * down to about -2^30; this takes INT_MIN up to INT_MIN + 2^29): tag =
 * INT_MIN + channel * 2^17 + partition. Both sides number their
 * partitioned operations per (context id, peer process, user tag) in the order of
 * their init calls, which is MPI's matching order for them, and the channel
 * is that number mixed with the user tag, modulo 4096: two partitioned
 * operations live at once between the same two ranks on one communicator
 * could share a channel only when their numbers collide modulo 4096.
 * Successive MPI_Starts reuse the channel: messages between two ranks on one
 * tag are not overtaken, and a new run starts only after the last completed
 * locally. Limits: at most 2^17 partitions; MPI_ANY_SOURCE and MPI_ANY_TAG
 * are not allowed (MPI 4.0 forbids them here too).
 */
#include <limits.h>
#include <stdlib.h>
#include "api/pt2pt_api.h"
#include "coll/sched.h"
#include "progress/progress.h"

#pragma weak MPI_Psend_init = PMPI_Psend_init
#pragma weak MPI_Precv_init = PMPI_Precv_init
#pragma weak MPI_Pready = PMPI_Pready
#pragma weak MPI_Pready_range = PMPI_Pready_range
#pragma weak MPI_Pready_list = PMPI_Pready_list
#pragma weak MPI_Parrived = PMPI_Parrived

#define PLX_PART_MAX (1 << 17)
#define PLX_PART_CHANNELS 4096

/* Init calls so far per (context, peer process, tag, direction): a short list, walked
 * linearly (O(number of distinct pairs and tags used for partitioned
 * operations); programs use a few). */
struct plx_part_seq {
    struct plx_part_seq *next;
    int ctx, peer, tag, send;
    unsigned n;
};
static struct plx_part_seq *plx_part_seqs;

static unsigned plx_part_next(int ctx, int peer, int tag, int send)
{
    struct plx_part_seq *q;
    for (q = plx_part_seqs; q; q = q->next)
        if (q->ctx == ctx && q->peer == peer && q->tag == tag && q->send == send)
            return q->n++;
    q = plx_calloc(1, sizeof *q);
    q->ctx = ctx, q->peer = peer, q->tag = tag, q->send = send;
    q->next = plx_part_seqs;
    plx_part_seqs = q;
    return q->n++;
}

static int plx_part_tag(unsigned seq, int tag, int partition)
{
    unsigned chan = (seq * 2654435761u + (unsigned)tag * 40503u) % PLX_PART_CHANNELS;
    return INT_MIN + (int)(chan << 17) + partition;
}

static int plx_part_init(int send, void *buf, int partitions, MPI_Count count, MPI_Datatype dtype, int peer,
                         int tag, MPI_Comm comm, MPI_Info info, MPI_Request *request, const char *fn)
{
    struct plx_comm *c = NULL;
    struct plx_datatype *dt = NULL;
    struct plx_info *in;
    plx_api_lock();
    int rc = plx_api_comm(comm, &c, fn);
    if (rc)
        goto out;
    if (partitions < 1 || partitions > PLX_PART_MAX) {
        rc = plx_api_err(c, fn, MPI_ERR_ARG, "argument 'partitions' is %d (1..%d are supported)", partitions,
                         PLX_PART_MAX);
        goto out;
    }
    if (count < 0 || (MPI_Count)partitions * count > (MPI_Count)1 << 62) {
        rc = plx_api_err(c, fn, MPI_ERR_COUNT, "argument 'count' is %lld", (long long)count);
        goto out;
    }
    if (send ? peer == MPI_ANY_SOURCE : (peer == MPI_ANY_SOURCE || tag == MPI_ANY_TAG)) {
        rc = plx_api_err(c, fn, send ? MPI_ERR_RANK : (peer == MPI_ANY_SOURCE ? MPI_ERR_RANK : MPI_ERR_TAG),
                         "MPI_ANY_SOURCE and MPI_ANY_TAG are not allowed in partitioned communication");
        goto out;
    }
    /* the rest as for a send or receive of the whole buffer */
    rc = plx_api_p2p_check(comm, buf, (MPI_Aint)(count > 0 ? 1 : 0), dtype, peer, tag,
                           send ? PLX_DIR_SEND : PLX_DIR_RECV, fn, &c, &dt);
    if (rc)
        goto out;
    if (!dt->committed) {
        rc = plx_api_err(c, fn, MPI_ERR_TYPE, "argument 'datatype' is not committed (call MPI_Type_commit)");
        goto out;
    }
    if (info != MPI_INFO_NULL && (rc = plx_api_info(c, info, &in, fn, "info")))
        goto out;
    if (!request) {
        rc = plx_api_null_arg(c, fn, "request");
        goto out;
    }
    struct plx_sched *s = plx_sched_new_p2p(c);
    s->fn = fn;
    if (peer != MPI_PROC_NULL) {
        /* keyed by the peer's process, not its rank: a context id is reused by
         * later communicators, where rank r may be another process */
        unsigned seq = plx_part_next(c->context_id, c->lpids[peer], tag, send);
        for (int i = 0; i < partitions; i++)
            plx_sched_part(s, send, (char *)buf + (MPI_Aint)i * (MPI_Aint)count * dt->extent, (MPI_Aint)count, dt,
                           peer, plx_part_tag(seq, tag, i), send);
    }
    s->partitions = partitions;
    s->part_send = (uint8_t)send;
    struct plx_request *r = plx_sched_persist(s);
    r->ctx = c->context_id;
    r->rank = peer;
    r->tag = tag;
    *request = r->obj.handle;
out:
    plx_api_unlock();
    return rc;
}

int PMPI_Psend_init(const void *buf, int partitions, MPI_Count count, MPI_Datatype datatype, int dest, int tag,
                    MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    return plx_part_init(1, (void *)buf, partitions, count, datatype, dest, tag, comm, info, request,
                         "MPI_Psend_init");
}

int PMPI_Precv_init(void *buf, int partitions, MPI_Count count, MPI_Datatype datatype, int source, int tag,
                    MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    return plx_part_init(0, buf, partitions, count, datatype, source, tag, comm, info, request, "MPI_Precv_init");
}

/* The active partitioned request of handle h, sending (send) or receiving. */
static int plx_part_req(MPI_Request h, int send, struct plx_sched **s_p, const char *fn)
{
    *s_p = NULL; /* defined on every path, also when an error handler returns */
    plx_api_check_init(fn);
    struct plx_request *r = plx_obj_lookup(&plx_request_tab, h);
    struct plx_sched *s = r && r->kind == PLX_REQ_COLL && r->persistent ? r->ext : NULL;
    if (!s || !s->partitions)
        return plx_api_err(NULL, fn, MPI_ERR_REQUEST, "argument 'request' (handle 0x%x) is not a partitioned request",
                           (unsigned)h);
    if (s->part_send != send)
        return plx_api_err(r->comm, fn, MPI_ERR_REQUEST, "argument 'request' is a partitioned %s request",
                           s->part_send ? "send" : "receive");
    if (!r->active && send)
        return plx_api_err(r->comm, fn, MPI_ERR_REQUEST, "the partitioned request is not active (call MPI_Start)");
    *s_p = s;
    return MPI_SUCCESS;
}

static int plx_part_ready(struct plx_sched *s, int p, const char *fn)
{
    if (p < 0 || p >= s->partitions)
        return plx_api_err(s->comm, fn, MPI_ERR_ARG, "partition %d is not one of the request's 0..%d", p,
                           s->partitions - 1);
    if (s->n == 0)              /* to MPI_PROC_NULL */
        return MPI_SUCCESS;
    if (s->ents[p].open)
        return plx_api_err(s->comm, fn, MPI_ERR_ARG, "partition %d is already marked ready", p);
    plx_sched_open(s, p);
    return MPI_SUCCESS;
}

int PMPI_Pready(int partition, MPI_Request request)
{
    static const char fn[] = "MPI_Pready";
    struct plx_sched *s;
    plx_api_lock();
    int rc = plx_part_req(request, 1, &s, fn);
    if (rc == MPI_SUCCESS)
        rc = plx_part_ready(s, partition, fn);
    plx_api_unlock();
    return rc;
}

int PMPI_Pready_range(int partition_low, int partition_high, MPI_Request request)
{
    static const char fn[] = "MPI_Pready_range";
    struct plx_sched *s;
    plx_api_lock();
    int rc = plx_part_req(request, 1, &s, fn);
    if (rc == MPI_SUCCESS && (partition_low > partition_high || partition_low < 0 || partition_high >= s->partitions))
        rc = plx_api_err(s->comm, fn, MPI_ERR_ARG, "range %d..%d is not within the request's partitions 0..%d",
                         partition_low, partition_high, s->partitions - 1);
    for (int p = partition_low; rc == MPI_SUCCESS && p <= partition_high; p++)
        rc = plx_part_ready(s, p, fn);
    plx_api_unlock();
    return rc;
}

int PMPI_Pready_list(int length, const int array_of_partitions[], MPI_Request request)
{
    static const char fn[] = "MPI_Pready_list";
    struct plx_sched *s;
    plx_api_lock();
    int rc = plx_part_req(request, 1, &s, fn);
    if (rc == MPI_SUCCESS && length < 0)
        rc = plx_api_err(s->comm, fn, MPI_ERR_ARG, "argument 'length' is negative (%d)", length);
    if (rc == MPI_SUCCESS && length > 0 && !array_of_partitions)
        rc = plx_api_null_arg(s->comm, fn, "array_of_partitions");
    for (int i = 0; rc == MPI_SUCCESS && i < length; i++)
        rc = plx_part_ready(s, array_of_partitions[i], fn);
    plx_api_unlock();
    return rc;
}

int PMPI_Parrived(MPI_Request request, int partition, int *flag)
{
    static const char fn[] = "MPI_Parrived";
    struct plx_sched *s;
    plx_api_lock();
    int rc = plx_part_req(request, 0, &s, fn);
    if (rc == MPI_SUCCESS && !flag)
        rc = plx_api_null_arg(s->comm, fn, "flag");
    if (rc == MPI_SUCCESS && (partition < 0 || partition >= s->partitions))
        rc = plx_api_err(s->comm, fn, MPI_ERR_ARG, "partition %d is not one of the request's 0..%d", partition,
                         s->partitions - 1);
    if (rc == MPI_SUCCESS) {
        struct plx_request *r = s->req;
        if (!r->active || s->n == 0) {
            *flag = 1;          /* inactive, or from MPI_PROC_NULL: nothing to wait for */
        } else {
            if (!plx_sched_ent_done(s, partition))
                plx_progress_poll();
            *flag = plx_sched_ent_done(s, partition);
        }
    }
    plx_api_unlock();
    return rc;
}
