/*
 * MPI_THREAD_MULTIPLE: several threads of each rank exchange messages with
 * the partner rank at once, each on its own tag, and one thread blocks in
 * receives that only another thread of the same rank can satisfy (a
 * blocked call must not keep other threads out of MPI). Then two threads of each
 * rank ping-pong with blocking MPI_Send/MPI_Recv on their own tags: each
 * message may be read from the network by the other thread, while its
 * receiver sleeps (registered again with PLEXUS_SPIN_COUNT=1
 * PLEXUS_YIELD_COUNT=1 over TCP, where every wait sleeps at once: the
 * sleeper was not woken and slept out 100 ms a round, which ran past the
 * test's time limit). Then one thread sleeps in a receive while the other
 * ping-pongs inside an attribute delete callback (MPI called with the
 * library lock held: its waits slept out 100 ms a round behind the other
 * thread). The receives of the first part are 400 hand-offs to a thread of
 * the same rank, whose sender stays out of MPI until the receiver has the
 * message (over TCP nothing shows such a message on a socket: the sleeping
 * receiver slept out 100 ms a round). Then a second thread of rank 0 sends
 * what rank 1 waits for before it joins a barrier in which rank 0's main
 * thread waits (a collective that kept the lock deadlocked). Then a thread
 * frees the op of a reduction that the main thread waits in, and creates
 * another (the reduction must use the first), and a user error handler
 * runs for a call that reports before it takes the library lock (the lock
 * was then left held: another thread's call hung). Then threads create
 * communicators at once -- Comm_dup on their own parents, and
 * Comm_create_group with distinct tags on one shared parent -- and pass
 * a token around a ring on each new communicator: two communicators given
 * the same context id would deliver one thread's token to the other.
 * Last, rank 0 duplicates two communicators from two threads at once while
 * the other ranks duplicate them one after the other, in the opposite order
 * of their ids (legal: an allocation must not wait for another one).
 * Checks every value; the check counters are bumped by the main thread only.
 */
#include "plx_test.h"     /* first: it sets the POSIX feature level */
#include <pthread.h>

#define NTHREADS 4
#define ROUNDS 500

#define NEWCOMMS 60
#define BLOCKED_THREADS 2
#define BLOCKED_ROUNDS 2000
#define SELF_ROUNDS 400     /* x 100 ms when a sleeper is not woken: past the time limit */
#define NESTED_ROUNDS 400

static int rank, size, partner;
static int errors[NTHREADS + 1];
static MPI_Comm parents[NTHREADS];
static MPI_Group world_group;

static void *pingpong(void *arg)
{
    int t = (int)(long)arg;
    for (int i = 0; i < ROUNDS; i++) {
        int out = rank * 1000000 + t * 10000 + i, in = -1;
        MPI_Sendrecv(&out, 1, MPI_INT, partner, t, &in, 1, MPI_INT, partner, t, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        if (in != partner * 1000000 + t * 10000 + i)
            errors[t]++;
    }
    return NULL;
}

/* Takes SELF_ROUNDS messages that the main thread sends to this rank itself
 * and answers each: every message reaches a thread that sleeps in MPI_Recv
 * (over TCP a message to self shows on no socket: the sleeper must be
 * woken by the sender). */
static int self_taken;   /* messages the waiter took (atomic) */
static void *waiter(void *arg)
{
    for (int i = 0; i < SELF_ROUNDS; i++) {
        int v = -1;
        MPI_Recv(&v, 1, MPI_INT, rank, 99, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        if (v != 4242 + i)
            errors[NTHREADS]++;
        __atomic_store_n(&self_taken, i + 1, __ATOMIC_RELEASE);
    }
    return arg;
}

/* Blocked in a receive from the partner until the end of the nested test. */
static void *nested_sleeper(void *arg)
{
    int v = -1;
    MPI_Recv(&v, 1, MPI_INT, partner, 300, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    if (v != 300 + partner)
        errors[0]++;
    return arg;
}

/* `rounds` blocking ping-pongs with the partner on `tag`, the even rank
 * sending first; this rank sends mine + i and expects theirs + i. Returns
 * the number of values that were not the partner's. */
static int strict_pingpong(int tag, int rounds, int mine, int theirs)
{
    int wrong = 0;
    for (int i = 0; i < rounds; i++) {
        int out = mine + i, in = -1;
        if (rank % 2 == 0) {
            MPI_Send(&out, 1, MPI_INT, partner, tag, MPI_COMM_WORLD);
            MPI_Recv(&in, 1, MPI_INT, partner, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(&in, 1, MPI_INT, partner, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(&out, 1, MPI_INT, partner, tag, MPI_COMM_WORLD);
        }
        wrong += in != theirs + i;
    }
    return wrong;
}

/* An attribute delete callback that ping-pongs with the partner: MPI called
 * with the library lock already held, while another thread sleeps in MPI
 * (a wait there slept out 100 ms a round behind that thread). */
static int nested_rounds_ok;
static int pingpong_on_delete(MPI_Comm c, int key, void *val, void *extra)
{
    (void)c, (void)key, (void)val, (void)extra;
    nested_rounds_ok = strict_pingpong(301, NESTED_ROUNDS, rank * 100000, partner * 100000) == 0;
    return MPI_SUCCESS;
}

/* Blocking ping-pong with the partner on tag 200 + t: the even rank sends first. */
static void *blocked_pingpong(void *arg)
{
    int t = (int)(long)arg;
    errors[t] += strict_pingpong(200 + t, BLOCKED_ROUNDS, rank * 1000000 + t * 10000, partner * 1000000 + t * 10000);
    return NULL;
}

static void pause_ms(int ms);

/* Sends what rank 1 waits for before it joins a barrier that rank 0's main
 * thread is already in. */
static void *late_sender(void *arg)
{
    pause_ms(50);
    int v = 77;
    MPI_Send(&v, 1, MPI_INT, 1, 500, MPI_COMM_WORLD);
    return arg;
}

/* An op freed and another created while a reduction with the first waits
 * in another thread: the pending reduction must still use the first (MPI:
 * freeing an object in use only marks it). */
static void sum_fn(void *in, void *io, int *len, MPI_Datatype *dt)
{
    (void)dt;
    for (int i = 0; i < *len; i++)
        ((int *)io)[i] += ((int *)in)[i];
}
static void wrong_fn(void *in, void *io, int *len, MPI_Datatype *dt)
{
    (void)in, (void)dt;
    for (int i = 0; i < *len; i++)
        ((int *)io)[i] = -777;
}
static MPI_Op sum_op, wrong_op;
static void *op_freer(void *arg)
{
    pause_ms(100);                      /* the main thread waits in MPI_Allreduce */
    MPI_Op h = sum_op;
    MPI_Op_free(&h);
    MPI_Op_create(wrong_fn, 1, &wrong_op);
    return arg;
}

/* Uses MPI after an error handler ran for a call that reports its error
 * before taking the library lock (the handler path gave back a lock the
 * thread did not hold and took it for good). */
static int handler_ran;
static void count_handler(MPI_Comm *c, int *code, ...)
{
    (void)c, (void)code;
    handler_ran++;
}
static void *self_exchange(void *arg)
{
    int out = 5, in = -1;
    MPI_Sendrecv(&out, 1, MPI_INT, 0, 7, &in, 1, MPI_INT, 0, 7, MPI_COMM_SELF, MPI_STATUS_IGNORE);
    *(int *)arg = in;
    return arg;
}

/* One token around the ring of c, carrying the thread and iteration. */
static int ring_ok(MPI_Comm c, int t, int i)
{
    int n, me;
    MPI_Comm_size(c, &n);
    MPI_Comm_rank(c, &me);
    int out = t * 100000 + i, in = -1;
    MPI_Sendrecv(&out, 1, MPI_INT, (me + 1) % n, 7, &in, 1, MPI_INT, (me + n - 1) % n, 7, c, MPI_STATUS_IGNORE);
    return in == out;
}

static void *creator(void *arg)
{
    int t = (int)(long)arg;
    for (int i = 0; i < NEWCOMMS; i++) {
        MPI_Comm c;
        if (i % 2)
            MPI_Comm_dup(parents[t], &c);
        else
            MPI_Comm_create_group(MPI_COMM_WORLD, world_group, 100 + t, &c);
        if (c == MPI_COMM_NULL || !ring_ok(c, t, i))
            errors[t]++;
        MPI_Comm_free(&c);
    }
    return NULL;
}

static MPI_Comm lo, hi, lo_dup, hi_dup;

static void *dup_lo(void *arg)
{
    MPI_Comm_dup(lo, &lo_dup);
    return arg;
}

static void pause_ms(int ms)
{
    struct timespec t = { 0, ms * 1000000L };
    nanosleep(&t, NULL);
}

static void *dup_hi(void *arg)
{
    pause_ms(100);      /* after dup_lo has started */
    MPI_Comm_dup(hi, &hi_dup);
    return arg;
}

int main(int argc, char **argv)
{
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    plx_test_begin("thread_multiple");
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    PLX_CHECK_EQ(provided, MPI_THREAD_MULTIPLE, "provided thread level");

    pthread_t w;
    pthread_create(&w, NULL, waiter, NULL);
    partner = rank ^ 1;
    pthread_t th[NTHREADS];
    if (partner < size) {
        for (long t = 0; t < NTHREADS; t++)
            pthread_create(&th[t], NULL, pingpong, (void *)t);
        for (int t = 0; t < NTHREADS; t++)
            pthread_join(th[t], NULL);
    }
    for (int i = 0; i < SELF_ROUNDS; i++) {
        int v = 4242 + i;
        pause_ms(1);                    /* the waiter is asleep in MPI_Recv by now */
        MPI_Send(&v, 1, MPI_INT, rank, 99, MPI_COMM_WORLD);
        /* out of MPI until the waiter has it: only the send can wake it */
        while (__atomic_load_n(&self_taken, __ATOMIC_ACQUIRE) <= i)
            sched_yield();
    }
    pthread_join(w, NULL);
    for (int t = 0; t <= NTHREADS; t++)
        PLX_CHECK_EQ(errors[t], 0, "wrong values received by a thread");

    if (partner < size) {
        for (long t = 0; t < BLOCKED_THREADS; t++)
            pthread_create(&th[t], NULL, blocked_pingpong, (void *)t);
        for (int t = 0; t < BLOCKED_THREADS; t++)
            pthread_join(th[t], NULL);
        for (int t = 0; t < BLOCKED_THREADS; t++)
            PLX_CHECK_EQ(errors[t], 0, "wrong values in a blocking ping-pong between threads");
    }

    if (partner < size) {
        errors[0] = 0;
        pthread_t sl;
        pthread_create(&sl, NULL, nested_sleeper, NULL);
        pause_ms(50);                   /* it sleeps in MPI_Recv, watching the sockets */
        int key;
        MPI_Comm c;
        MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, pingpong_on_delete, &key, NULL);
        MPI_Comm_dup(MPI_COMM_SELF, &c);
        MPI_Comm_set_attr(c, key, NULL);
        MPI_Comm_free(&c);              /* runs the ping-pong */
        MPI_Comm_free_keyval(&key);
        PLX_CHECK(nested_rounds_ok, "ping-pong inside an attribute delete callback");
        int v = 300 + rank;
        MPI_Send(&v, 1, MPI_INT, partner, 300, MPI_COMM_WORLD);
        pthread_join(sl, NULL);
        PLX_CHECK_EQ(errors[0], 0, "a thread's receive while another thread was in a callback");
    }

    /* a thread waiting in a (shared-memory) collective lets other threads
     * into MPI: rank 1 joins the barrier only after a message that a
     * second thread of rank 0 sends while rank 0 waits in the barrier */
    if (size > 1) {
        MPI_Comm bc;
        MPI_Comm_dup(MPI_COMM_WORLD, &bc);
        for (int i = 0; i < 4; i++)
            MPI_Barrier(bc);            /* past the set-up of the shared segment */
        if (rank == 0) {
            pthread_t ls;
            pthread_create(&ls, NULL, late_sender, NULL);
            MPI_Barrier(bc);
            pthread_join(ls, NULL);
        } else {
            if (rank == 1) {
                int v = -1;
                MPI_Recv(&v, 1, MPI_INT, 0, 500, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                PLX_CHECK_EQ(v, 77, "message sent by a thread while another waits in a barrier");
            }
            MPI_Barrier(bc);
        }
        MPI_Comm_free(&bc);
    }

    /* freeing an op that a waiting reduction uses; the shared-memory
     * reduction is set up on the third call on a communicator */
    {
        MPI_Comm rc;
        MPI_Comm_dup(MPI_COMM_WORLD, &rc);
        MPI_Op_create(sum_fn, 1, &sum_op);
        int v = 1, out = 0;
        for (int i = 0; i < 3; i++)
            MPI_Allreduce(&v, &out, 1, MPI_INT, sum_op, rc);
        pthread_t fr;
        if (rank == 0)
            pthread_create(&fr, NULL, op_freer, NULL);
        else
            pause_ms(300);              /* rank 0 waits for the others meanwhile */
        v = rank + 10;
        MPI_Allreduce(&v, &out, 1, MPI_INT, sum_op, rc);
        PLX_CHECK_EQ(out, size * 10 + size * (size - 1) / 2, "reduction whose op another thread freed");
        if (rank == 0) {
            pthread_join(fr, NULL);
            MPI_Op_free(&wrong_op);
        } else {
            MPI_Op_free(&sum_op);
        }
        MPI_Comm_free(&rc);
    }

    /* an error reported before the lock is taken, to a user handler */
    {
        MPI_Errhandler eh;
        MPI_Comm_create_errhandler(count_handler, &eh);
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, eh);
        PLX_CHECK(MPI_Type_free(NULL) != MPI_SUCCESS, "MPI_Type_free(NULL) fails");
        PLX_CHECK_EQ(handler_ran, 1, "the error handler ran once");
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
        MPI_Errhandler_free(&eh);
        int in = -1;
        pthread_t se;
        pthread_create(&se, NULL, self_exchange, &in);
        pthread_join(se, NULL);
        PLX_CHECK_EQ(in, 5, "another thread's MPI call after the handler");
    }

    MPI_Comm_group(MPI_COMM_WORLD, &world_group);
    for (int t = 0; t < NTHREADS; t++) {
        MPI_Comm_dup(MPI_COMM_WORLD, &parents[t]);
        errors[t] = 0;
    }
    for (long t = 0; t < NTHREADS; t++)
        pthread_create(&th[t], NULL, creator, (void *)t);
    for (int t = 0; t < NTHREADS; t++)
        pthread_join(th[t], NULL);
    for (int t = 0; t < NTHREADS; t++) {
        PLX_CHECK_EQ(errors[t], 0, "token lost or crossed on communicators created concurrently");
        MPI_Comm_free(&parents[t]);
    }
    MPI_Group_free(&world_group);

    MPI_Comm_dup(MPI_COMM_WORLD, &lo);  /* the lower context id */
    MPI_Comm_dup(MPI_COMM_WORLD, &hi);
    if (rank == 0) {
        pthread_t a, b;
        pthread_create(&a, NULL, dup_lo, NULL);
        pthread_create(&b, NULL, dup_hi, NULL);
        pthread_join(a, NULL);
        pthread_join(b, NULL);
    } else {
        pause_ms(300);  /* rank 0's two allocations are under way */
        MPI_Comm_dup(hi, &hi_dup);
        MPI_Comm_dup(lo, &lo_dup);
    }
    PLX_CHECK(ring_ok(lo_dup, 0, 1) && ring_ok(hi_dup, 1, 2), "token on communicators duplicated in opposite orders");
    MPI_Comm_free(&lo_dup);
    MPI_Comm_free(&hi_dup);
    MPI_Comm_free(&lo);
    MPI_Comm_free(&hi);
    return plx_test_finish();
}
