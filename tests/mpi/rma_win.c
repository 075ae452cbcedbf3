/*
 * Window objects and bad input:
 *  - attributes (MPI_WIN_BASE, _SIZE, _DISP_UNIT, _CREATE_FLAVOR, _MODEL),
 *    MPI_Win_get_group, names, info keys, user keyvals with copy/delete
 *    callbacks, error handlers (create/set/get/call), MPI_Alloc_mem;
 *  - dynamic windows: attach, put/get through the attached regions'
 *    addresses, detach, overlapping attach;
 *  - shared windows: MPI_Win_shared_query and direct loads and stores of
 *    the neighbours' memory, synchronised by MPI_Win_sync and a barrier;
 *  - every bad input gets its class and a message naming the call, the
 *    rank and (for operations) the target and displacement: an operation
 *    outside an epoch (MPI_ERR_RMA_SYNC), past the window (_RANGE), with
 *    mismatched datatypes (MPI_ERR_TYPE), locking a target twice
 *    (_SYNC, as MPICH), freeing a window inside an epoch (_SYNC), attaching to a
 *    window of another flavour (_FLAVOR), overlapping regions (_ATTACH),
 *    shared_query on a dynamic window (_FLAVOR), MPI_Win_sync
 *    outside a passive-target epoch (_SYNC), an invalid
 *    window (MPI_ERR_WIN); and nothing is written outside the window.
 */
#include "plx_test.h"

static int rank, size;
static int deleted;

static int del_fn(MPI_Win win, int keyval, void *val, void *extra)
{
    (void)win;
    (void)keyval;
    (void)extra;
    deleted += (int)(intptr_t)val;
    return MPI_SUCCESS;
}

static int handler_calls, handler_code;
static void win_handler(MPI_Win *win, int *code, ...)
{
    (void)win;
    handler_calls++;
    handler_code = *code;
}

/* The message of an error code contains all of the words. */
/* ARGS --plexus-messages: the words of Plexus's messages are checked, and the range checks MPICH
 * does not make (it writes past the window) are made */
static int plexus_messages;

static void check_msg(int code, const char *w1, const char *w2, const char *w3)
{
    if (!plexus_messages)
        return;
    char msg[MPI_MAX_ERROR_STRING];
    int len;
    MPI_Error_string(code, msg, &len);
    const char *w[3] = { w1, w2, w3 };
    for (int i = 0; i < 3; i++)
        if (w[i])
            PLX_CHECK(strstr(msg, w[i]) != NULL, "message \"%s\" names \"%s\"", msg, w[i]);
}

int main(int argc, char **argv)
{
    plx_test_init(&argc, &argv, "rma_win");
    for (int i = 1; i < argc; i++)
        plexus_messages |= !strcmp(argv[i], "--plexus-messages");
    rank = plx_test_state()->rank;
    size = plx_test_state()->size;
    int right = (rank + 1) % size;
    char rk[32];
    snprintf(rk, sizeof rk, "rank %d", rank);

    /* ---- attributes, group, name, info, keyvals, error handlers ---- */
    int *mem;
    MPI_Win win;
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "no_locks", "false");
    MPI_Info_set(info, "accumulate_ordering", "none");
    PLX_CHECK_MPI(MPI_Win_allocate(100 * sizeof(int), sizeof(int), info, MPI_COMM_WORLD, &mem, &win));
    MPI_Info_free(&info);
    void *vbase;
    MPI_Aint *vsize;
    int *vdisp, *vflav, *vmodel, flag;
    PLX_CHECK_MPI(MPI_Win_get_attr(win, MPI_WIN_BASE, &vbase, &flag));
    PLX_CHECK(flag && vbase == (void *)mem, "MPI_WIN_BASE is the allocated memory");
    PLX_CHECK_MPI(MPI_Win_get_attr(win, MPI_WIN_SIZE, &vsize, &flag));
    PLX_CHECK_EQ(flag ? *vsize : -1, 100 * sizeof(int), "MPI_WIN_SIZE");
    PLX_CHECK_MPI(MPI_Win_get_attr(win, MPI_WIN_DISP_UNIT, &vdisp, &flag));
    PLX_CHECK_EQ(flag ? *vdisp : -1, sizeof(int), "MPI_WIN_DISP_UNIT");
    PLX_CHECK_MPI(MPI_Win_get_attr(win, MPI_WIN_CREATE_FLAVOR, &vflav, &flag));
    PLX_CHECK_EQ(flag ? *vflav : -1, MPI_WIN_FLAVOR_ALLOCATE, "MPI_WIN_CREATE_FLAVOR");
    PLX_CHECK_MPI(MPI_Win_get_attr(win, MPI_WIN_MODEL, &vmodel, &flag));
    PLX_CHECK_EQ(flag ? *vmodel : -1, MPI_WIN_UNIFIED, "MPI_WIN_MODEL");
    MPI_Group g, wg;
    PLX_CHECK_MPI(MPI_Win_get_group(win, &g));
    MPI_Comm_group(MPI_COMM_WORLD, &wg);
    int cmp;
    MPI_Group_compare(g, wg, &cmp);
    PLX_CHECK_EQ(cmp, MPI_IDENT, "window group is the communicator's");
    MPI_Group_free(&g);
    MPI_Group_free(&wg);
    char name[MPI_MAX_OBJECT_NAME];
    int len;
    PLX_CHECK_MPI(MPI_Win_get_name(win, name, &len));
    if (plexus_messages)        /* Open MPI names new windows */
        PLX_CHECK_EQ(len, 0, "a new window has an empty name");
    PLX_CHECK_MPI(MPI_Win_set_name(win, "counters"));
    PLX_CHECK_MPI(MPI_Win_get_name(win, name, &len));
    PLX_CHECK_STR(name, "counters", "window name");
    MPI_Info used;
    PLX_CHECK_MPI(MPI_Win_get_info(win, &used));
    char val[MPI_MAX_INFO_VAL];
    MPI_Info_get(used, "accumulate_ordering", MPI_MAX_INFO_VAL - 1, val, &flag);
    PLX_CHECK(flag && !strcmp(val, "none"), "info accumulate_ordering as given (got %s)", flag ? val : "nothing");
    MPI_Info_get(used, "no_locks", MPI_MAX_INFO_VAL - 1, val, &flag);
    PLX_CHECK(flag && !strcmp(val, "false"), "info no_locks");
    MPI_Info_free(&used);
    int kv;
    PLX_CHECK_MPI(MPI_Win_create_keyval(MPI_WIN_NULL_COPY_FN, del_fn, &kv, NULL));
    PLX_CHECK_MPI(MPI_Win_set_attr(win, kv, (void *)(intptr_t)7));
    void *got;
    PLX_CHECK_MPI(MPI_Win_get_attr(win, kv, &got, &flag));
    PLX_CHECK(flag && got == (void *)(intptr_t)7, "user attribute");
    PLX_CHECK_MPI(MPI_Win_delete_attr(win, kv));
    PLX_CHECK_EQ(deleted, 7, "delete callback on delete");
    PLX_CHECK_MPI(MPI_Win_set_attr(win, kv, (void *)(intptr_t)5));

    MPI_Errhandler eh, cur;
    PLX_CHECK_MPI(MPI_Win_get_errhandler(win, &cur));
    PLX_CHECK_EQ(cur, MPI_ERRORS_ARE_FATAL, "a window's default error handler");
    MPI_Errhandler_free(&cur);
    PLX_CHECK_MPI(MPI_Win_create_errhandler(win_handler, &eh));
    PLX_CHECK_MPI(MPI_Win_set_errhandler(win, eh));
    PLX_CHECK_MPI(MPI_Win_call_errhandler(win, MPI_ERR_OTHER));
    PLX_CHECK_EQ(handler_calls, 1, "user window handler called");
    PLX_CHECK_EQ(handler_code, MPI_ERR_OTHER, "user window handler's code");
    /* an error on the window goes to its handler */
    int rc = MPI_Put(mem, 1, MPI_INT, right, 0, 1, MPI_INT, win);
    PLX_CHECK_EQ(handler_calls, 2, "handler called for a put outside an epoch");
    int cls;
    MPI_Error_class(rc, &cls);
    PLX_CHECK_EQ(cls, MPI_ERR_RMA_SYNC, "class given to the handler");
    MPI_Errhandler_free(&eh);
    PLX_CHECK_MPI(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));

    /* ---- bad input ---- */
    for (int i = 0; i < 100; i++)
        mem[i] = -1;
    MPI_Barrier(MPI_COMM_WORLD);
    int v[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };
    rc = MPI_Put(v, 1, MPI_INT, right, 3, 1, MPI_INT, win);
    PLX_CHECK_ERR(rc, MPI_ERR_RMA_SYNC);
    check_msg(rc, "MPI_Put", rk, "displacement 3");
    PLX_CHECK_MPI(MPI_Win_fence(0, win));
    char tgt[32];
    snprintf(tgt, sizeof tgt, "target %d", right);
    if (plexus_messages) {
        /* MPICH does not check the range: it would write past the window */
        rc = MPI_Put(v, 8, MPI_INT, right, 95, 8, MPI_INT, win);      /* 95..102 of 100 */
        PLX_CHECK_ERR(rc, MPI_ERR_RMA_RANGE);
        check_msg(rc, "MPI_Put", "displacement 95", "past the target's window");
        check_msg(rc, tgt, NULL, NULL);
        rc = MPI_Get(v, 1, MPI_INT, right, -1, 1, MPI_INT, win);
        PLX_CHECK_ERR(rc, MPI_ERR_RMA_RANGE);
    }
    rc = MPI_Accumulate(v, 1, MPI_INT, right, 0, 1, MPI_INT, MPI_NO_OP, win);
    PLX_CHECK_ERR(rc, MPI_ERR_OP);      /* MPI_NO_OP is for the fetching accumulates only */
    if (plexus_messages) {      /* MPICH compares neither the types nor the sizes (and then writes) */
        rc = MPI_Accumulate(v, 2, MPI_INT, right, 0, 1, MPI_DOUBLE, MPI_SUM, win);
        PLX_CHECK_ERR(rc, MPI_ERR_TYPE);
        check_msg(rc, "MPI_Accumulate", tgt, NULL);
        rc = MPI_Put(v, 2, MPI_INT, right, 0, 3, MPI_INT, win);
        PLX_CHECK_ERR(rc, MPI_ERR_TYPE);
    }
    rc = MPI_Put(v, 1, MPI_INT, size + 3, 0, 1, MPI_INT, win);
    PLX_CHECK_ERR(rc, MPI_ERR_RANK);
    rc = MPI_Put(v, 1, MPI_INT, MPI_PROC_NULL, 0, 1, MPI_INT, win);
    PLX_CHECK_MPI(rc);
    if (plexus_messages) {      /* MPI_Win_sync only in a passive-target epoch (MPI 4.1 12.5.4) */
        rc = MPI_Win_sync(win);
        PLX_CHECK_ERR(rc, MPI_ERR_RMA_SYNC);
        check_msg(rc, "MPI_Win_sync", rk, "MPI_Win_fence epoch");
    }
    PLX_CHECK_MPI(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
    /* nothing was written anywhere */
    long long touched = 0;
    for (int i = 0; i < 100; i++)
        touched += mem[i] != -1;
    PLX_CHECK_EQ(touched, 0, "ints written by refused operations");
    rc = MPI_Get(v, 1, MPI_INT, right, 0, 1, MPI_INT, win);
    PLX_CHECK_ERR(rc, MPI_ERR_RMA_SYNC);
    if (plexus_messages) {      /* MPICH asserts (ends the job) on some of these erroneous calls */
        PLX_CHECK_MPI(MPI_Win_lock(MPI_LOCK_SHARED, right, 0, win));
        rc = MPI_Win_lock(MPI_LOCK_EXCLUSIVE, right, 0, win);
        PLX_CHECK_ERR(rc, MPI_ERR_RMA_SYNC);        /* locking a target twice: MPICH's class too */
        check_msg(rc, "MPI_Win_lock", rk, tgt);
        rc = MPI_Win_free(&win);
        PLX_CHECK_ERR(rc, MPI_ERR_RMA_SYNC);
        check_msg(rc, "MPI_Win_free", "epoch", NULL);
        rc = MPI_Win_unlock((right + 1) % size == right ? MPI_PROC_NULL : (right + 1) % size, win);
        if (size > 1)
            PLX_CHECK_ERR(rc, MPI_ERR_RMA_SYNC);
        PLX_CHECK_MPI(MPI_Win_unlock(right, win));
        rc = MPI_Win_complete(win);
        PLX_CHECK_ERR(rc, MPI_ERR_RMA_SYNC);
        rc = MPI_Win_wait(win);
        PLX_CHECK_ERR(rc, MPI_ERR_RMA_SYNC);
        rc = MPI_Win_unlock_all(win);
        PLX_CHECK_ERR(rc, MPI_ERR_RMA_SYNC);
        rc = MPI_Win_flush(right, win);
        PLX_CHECK_ERR(rc, MPI_ERR_RMA_SYNC);
        rc = MPI_Win_sync(win);        /* no epoch at all */
        PLX_CHECK_ERR(rc, MPI_ERR_RMA_SYNC);
        check_msg(rc, "MPI_Win_sync", rk, "no passive-target epoch");
        PLX_CHECK_MPI(MPI_Win_lock(MPI_LOCK_SHARED, right, 0, win));
        PLX_CHECK_MPI(MPI_Win_sync(win));       /* a lock on any one target is a passive-target epoch */
        PLX_CHECK_MPI(MPI_Win_unlock(right, win));
        rc = MPI_Win_lock(99, right, 0, win);
        PLX_CHECK_ERR(rc, MPI_ERR_LOCKTYPE);
        rc = MPI_Win_attach(win, v, sizeof v);
        PLX_CHECK_ERR(rc, MPI_ERR_RMA_FLAVOR);
    }
    MPI_Aint qs;
    int qd;
    void *qb;
    rc = MPI_Win_shared_query(win, MPI_PROC_NULL, &qs, &qd, &qb);
    /* an allocate window on one node is shared here; across nodes it is not (MPI_ERR_RMA_FLAVOR) */
    (void)rc;
    deleted = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    PLX_CHECK_MPI(MPI_Win_free(&win));
    PLX_CHECK_EQ(deleted, 5, "delete callback on free");
    PLX_CHECK_MPI(MPI_Win_free_keyval(&kv));

    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    rc = MPI_Win_fence(0, MPI_WIN_NULL);
    PLX_CHECK_ERR(rc, MPI_ERR_WIN);
    check_msg(rc, "MPI_Win_fence", rk, NULL);
    MPI_Win bogus = MPI_WIN_NULL;
    rc = MPI_Win_free(&bogus);
    PLX_CHECK_ERR(rc, MPI_ERR_WIN);
    if (plexus_messages) {      /* an int handle that names nothing: MPICH ABI only (Open MPI's are pointers) */
        rc = MPI_Win_fence(0, (MPI_Win)0x12345);
        PLX_CHECK_ERR(rc, MPI_ERR_WIN);
    }
    rc = MPI_Win_create(NULL, -1, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    PLX_CHECK_ERR(rc, MPI_ERR_SIZE);
    rc = MPI_Win_allocate(8, 0, MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win);
    PLX_CHECK_ERR(rc, MPI_ERR_DISP);

    /* a window of create flavour: shared_query (MPI 4.1) gives the caller's
     * own memory, and size 0 with a NULL base for memory it cannot load from;
     * data still checked */
    int *cm;
    PLX_CHECK_MPI(MPI_Alloc_mem(64 * sizeof(int), MPI_INFO_NULL, &cm));
    PLX_CHECK_MPI(MPI_Win_create(cm, 64 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
    if (plexus_messages) {      /* MPICH before 4.2.2 refuses create windows */
        PLX_CHECK_MPI(MPI_Win_shared_query(win, rank, &qs, &qd, &qb));
        PLX_CHECK(qs == 64 * (MPI_Aint)sizeof(int) && qd == (int)sizeof(int) && qb == cm,
                  "shared_query of my own create-flavour memory: size %ld, disp_unit %d", (long)qs, qd);
        int other = (rank + 1) % size;
        PLX_CHECK_MPI(MPI_Win_shared_query(win, other, &qs, &qd, &qb));
        PLX_CHECK(other == rank ? qs == 64 * (MPI_Aint)sizeof(int) && qb == cm
                                : (qs == 0 && qb == NULL) || (qs == 64 * (MPI_Aint)sizeof(int) && qb != NULL),
                  "shared_query of rank %d: size %ld (0 and NULL when not load/store reachable)", other, (long)qs);
    }
    PLX_CHECK_MPI(MPI_Win_free(&win));
    PLX_CHECK_MPI(MPI_Free_mem(cm));

    /* ---- dynamic windows ---- */
    PLX_CHECK_MPI(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
    if (plexus_messages) {
        rc = MPI_Win_shared_query(win, 0, &qs, &qd, &qb);
        PLX_CHECK_ERR(rc, MPI_ERR_RMA_FLAVOR);
        check_msg(rc, "MPI_Win_shared_query", rk, NULL);
    }
    long long *r1 = calloc(16, sizeof(long long)), *r2 = calloc(16, sizeof(long long));
    PLX_CHECK_MPI(MPI_Win_attach(win, r1, 16 * sizeof(long long)));
    PLX_CHECK_MPI(MPI_Win_attach(win, r2, 16 * sizeof(long long)));
    if (plexus_messages) {      /* MPICH does not check for overlaps */
        rc = MPI_Win_attach(win, r1 + 4, 8);
        PLX_CHECK_ERR(rc, MPI_ERR_RMA_ATTACH);
    }
    MPI_Aint a[2], *all = malloc((size_t)size * 2 * sizeof(MPI_Aint));
    MPI_Get_address(r1, &a[0]);
    MPI_Get_address(r2, &a[1]);
    MPI_Allgather(a, 2, MPI_AINT, all, 2, MPI_AINT, MPI_COMM_WORLD);
    long long x = 1000 + rank, y = 2000 + rank;
    PLX_CHECK_MPI(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, right, 0, win));
    PLX_CHECK_MPI(MPI_Put(&x, 1, MPI_LONG_LONG, right, all[2 * right] + 3 * 8, 1, MPI_LONG_LONG, win));
    PLX_CHECK_MPI(MPI_Accumulate(&y, 1, MPI_LONG_LONG, right, all[2 * right + 1] + 5 * 8, 1, MPI_LONG_LONG, MPI_SUM,
                                 win));
    PLX_CHECK_MPI(MPI_Win_unlock(right, win));
    MPI_Barrier(MPI_COMM_WORLD);
    int left = (rank + size - 1) % size;
    PLX_CHECK_EQ(r1[3], 1000 + left, "dynamic put into the first region");
    PLX_CHECK_EQ(r2[5], 2000 + left, "dynamic accumulate into the second region");
    PLX_CHECK_MPI(MPI_Win_detach(win, r2));
    MPI_Barrier(MPI_COMM_WORLD);
    if (plexus_messages) {      /* MPICH writes into a detached region */
        /* the detached region is refused by the target: nothing written, the error at unlock */
        PLX_CHECK_MPI(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, right, 0, win));
        rc = MPI_Put(&x, 1, MPI_LONG_LONG, right, all[2 * right + 1], 1, MPI_LONG_LONG, win);
        if (rc == MPI_SUCCESS)
            rc = MPI_Win_unlock(right, win);
        else
            MPI_Win_unlock(right, win);
        PLX_CHECK_ERR(rc, MPI_ERR_RMA_RANGE);
        MPI_Barrier(MPI_COMM_WORLD);
        PLX_CHECK_EQ(r2[0], 0, "a detached region is not written");
        rc = MPI_Win_detach(win, r2);
        PLX_CHECK_ERR(rc, MPI_ERR_RMA_ATTACH);
    }
    PLX_CHECK_MPI(MPI_Win_detach(win, r1));
    PLX_CHECK_MPI(MPI_Win_free(&win));
    free(r1);
    free(r2);
    free(all);

    /* ---- shared windows by direct loads and stores ---- */
    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    int nrank, nsize;
    MPI_Comm_rank(node, &nrank);
    MPI_Comm_size(node, &nsize);
    int *sm;
    if (nsize != size) {        /* ranks on several nodes: no window shared by all of them */
        MPI_Win none;
        rc = MPI_Win_allocate_shared(64, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &sm, &none);
        PLX_CHECK_ERR(rc, MPI_ERR_RMA_SHARED);
        check_msg(rc, "MPI_Win_allocate_shared", rk, "one node");
    }
    MPI_Aint mysize = (MPI_Aint)(nrank + 1) * 16 * sizeof(int);
    PLX_CHECK_MPI(MPI_Win_allocate_shared(mysize, sizeof(int), MPI_INFO_NULL, node, &sm, &win));
    int **peer = malloc((size_t)nsize * sizeof(int *));
    for (int r = 0; r < nsize; r++) {
        MPI_Aint s;
        int du;
        PLX_CHECK_MPI(MPI_Win_shared_query(win, r, &s, &du, &peer[r]));
        PLX_CHECK_EQ(s, (r + 1) * 16 * (int)sizeof(int), "shared_query size");
        PLX_CHECK_EQ(du, sizeof(int), "shared_query disp_unit");
        if (r > 0)
            PLX_CHECK(peer[r] == peer[r - 1] + r * 16, "rank %d's memory follows rank %d's (contiguous)", r, r - 1);
    }
    PLX_CHECK(peer[nrank] == sm, "shared_query of myself is my base");
    PLX_CHECK_MPI(MPI_Win_lock_all(0, win));
    int nright = (nrank + 1) % nsize;
    for (int i = 0; i < 16; i++)
        peer[nright][i] = nrank * 10 + i;      /* a store into the right neighbour's memory */
    PLX_CHECK_MPI(MPI_Win_sync(win));
    MPI_Barrier(node);
    PLX_CHECK_MPI(MPI_Win_sync(win));
    int nleft = (nrank + nsize - 1) % nsize;
    for (int i = 0; i < 16; i++)
        PLX_CHECK_EQ(sm[i], nleft * 10 + i, "a store by the left neighbour, loaded");
    MPI_Barrier(node);
    /* CPU atomics on a word of rank 0, and MPI accumulates on another, together */
    __atomic_fetch_add(&peer[0][8], 1, __ATOMIC_SEQ_CST);
    int one = 1;
    PLX_CHECK_MPI(MPI_Accumulate(&one, 1, MPI_INT, 0, 9, 1, MPI_INT, MPI_SUM, win));
    PLX_CHECK_MPI(MPI_Win_flush_all(win));
    MPI_Barrier(node);
    PLX_CHECK_MPI(MPI_Win_sync(win));
    PLX_CHECK_EQ(peer[0][8], (nsize - 1) * 10 + 8 + nsize, "CPU atomic adds on a shared word");
    PLX_CHECK_EQ(peer[0][9], (nsize - 1) * 10 + 9 + nsize, "MPI_Accumulate on a shared word");
    PLX_CHECK_MPI(MPI_Win_unlock_all(win));
    PLX_CHECK_MPI(MPI_Win_free(&win));
    free(peer);
    MPI_Comm_free(&node);
    return plx_test_finish();
}
