/*
 * mpit.c - the MPI tools interface.
 *
 * Before MPI_Init: MPI_T_init_thread, every control variable enumerated
 * (name PLEXUS_*, description, datatype, scope; its index found again by
 * name), one read that shows the environment (the test runs with
 * PLEXUS_TCP_EAGER_MAX=48K), a write refused until MPI_Init. After it: a
 * live variable written and read back (PLEXUS_SPIN_COUNT), a read-only one
 * refused; performance variables enumerated; a session whose per-channel
 * sent_bytes counters move by what this rank sends its partner while
 * started, stay still while stopped, and go to 0 on reset; the unexpected
 * queue length of MPI_COMM_WORLD counting messages sent before their
 * receives; categories: every variable in exactly one, the root holding the
 * rest. Errors: calls before MPI_T_init_thread, bad indices and handles.
 */
#include "plx_test.h"

static int rank, size;

static int find_cvar(const char *name)
{
    int i = -1;
    PLX_CHECK_MPI(MPI_T_cvar_get_index(name, &i));
    return i;
}

static void cvars_before_init(void)
{
    int n = -1;
    PLX_CHECK_MPI(MPI_T_cvar_get_num(&n));
    PLX_CHECK(n >= 30, "MPI_T_cvar_get_num: %d control variables", n);
    for (int i = 0; i < n; i++) {
        char name[128], desc[1024];
        int nl = sizeof name, dl = sizeof desc, verb = -1, bind = -1, scope = -1, idx = -1;
        MPI_Datatype dt = MPI_DATATYPE_NULL;
        MPI_T_enum en = (MPI_T_enum)1;
        PLX_CHECK_MPI(MPI_T_cvar_get_info(i, name, &nl, &verb, &dt, &en, desc, &dl, &bind, &scope));
        PLX_CHECK(!strncmp(name, "PLEXUS_", 7) && nl == (int)strlen(name) + 1, "cvar %d name '%s' (%d)", i, name,
                  nl);
        PLX_CHECK(dl > 20 && strlen(desc) + 1 == (size_t)dl, "cvar %s has a description", name);
        PLX_CHECK(dt == MPI_INT || dt == MPI_UNSIGNED_LONG || dt == MPI_CHAR, "cvar %s datatype", name);
        PLX_CHECK(en == MPI_T_ENUM_NULL && bind == MPI_T_BIND_NO_OBJECT, "cvar %s enum and binding", name);
        PLX_CHECK(scope == MPI_T_SCOPE_READONLY || scope == MPI_T_SCOPE_LOCAL || scope == MPI_T_SCOPE_ALL_EQ,
                  "cvar %s scope %d", name, scope);
        PLX_CHECK(verb >= MPI_T_VERBOSITY_USER_BASIC && verb <= MPI_T_VERBOSITY_MPIDEV_ALL, "cvar %s verbosity",
                  name);
        PLX_CHECK_MPI(MPI_T_cvar_get_index(name, &idx));
        PLX_CHECK_EQ(idx, i, "MPI_T_cvar_get_index finds the variable again");
    }
    /* a short name buffer: truncated, length needed returned */
    char small[8];
    int sl = sizeof small;
    PLX_CHECK_MPI(MPI_T_cvar_get_info(0, small, &sl, NULL, NULL, NULL, NULL, NULL, NULL, NULL));
    PLX_CHECK(strlen(small) == 7 && sl > 8, "truncated name '%s', needed %d", small, sl);

    /* the environment is read: the test runs with PLEXUS_TCP_EAGER_MAX=48K */
    int i = find_cvar("PLEXUS_TCP_EAGER_MAX"), count = -1;
    MPI_T_cvar_handle h;
    PLX_CHECK_MPI(MPI_T_cvar_handle_alloc(i, NULL, &h, &count));
    PLX_CHECK_EQ(count, 1, "cvar count");
    unsigned long v = 0;
    PLX_CHECK_MPI(MPI_T_cvar_read(h, &v));
    PLX_CHECK_EQ(v, 48UL << 10, "PLEXUS_TCP_EAGER_MAX read through MPI_T");
    PLX_CHECK_ERR(MPI_T_cvar_write(h, &v), MPI_T_ERR_CVAR_SET_NEVER);
    PLX_CHECK_MPI(MPI_T_cvar_handle_free(&h));
    PLX_CHECK(h == MPI_T_CVAR_HANDLE_NULL, "cvar handle freed");
    /* a string variable */
    i = find_cvar("PLEXUS_SHM_ALIGN");
    PLX_CHECK_MPI(MPI_T_cvar_handle_alloc(i, NULL, &h, &count));
    PLX_CHECK(count > 4, "string cvar count %d", count);
    char *s = calloc((size_t)count, 1);
    PLX_CHECK_MPI(MPI_T_cvar_read(h, s));
    PLX_CHECK_STR(s, "auto", "PLEXUS_SHM_ALIGN default");
    free(s);
    MPI_T_cvar_handle_free(&h);
    /* a live one can be written before MPI_Init (session 7): read back now, and
     * after MPI_Init (cvars_after_init), which loads the table again */
    i = find_cvar("PLEXUS_SPIN_COUNT");
    PLX_CHECK_MPI(MPI_T_cvar_handle_alloc(i, NULL, &h, &count));
    int spin = 77, spin_back = -1;
    PLX_CHECK_MPI(MPI_T_cvar_write(h, &spin));
    PLX_CHECK_MPI(MPI_T_cvar_read(h, &spin_back));
    PLX_CHECK_EQ(spin_back, 77, "PLEXUS_SPIN_COUNT written before MPI_Init");
    MPI_T_cvar_handle_free(&h);
    PLX_CHECK_ERR(MPI_T_cvar_get_info(n, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
                  MPI_T_ERR_INVALID_INDEX);
    PLX_CHECK_ERR(MPI_T_cvar_get_index("PLEXUS_NO_SUCH", &i), MPI_T_ERR_INVALID_NAME);
}

static void cvars_after_init(void)
{
    int i = find_cvar("PLEXUS_SPIN_COUNT"), count, scope = -1;
    PLX_CHECK_MPI(MPI_T_cvar_get_info(i, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, &scope));
    PLX_CHECK_EQ(scope, MPI_T_SCOPE_LOCAL, "PLEXUS_SPIN_COUNT scope");
    MPI_T_cvar_handle h;
    PLX_CHECK_MPI(MPI_T_cvar_handle_alloc(i, NULL, &h, &count));
    int old = -1, v = 123, back = -1;
    PLX_CHECK_MPI(MPI_T_cvar_read(h, &old));
    PLX_CHECK_EQ(old, 77, "the value written before MPI_Init survives it");
    PLX_CHECK_MPI(MPI_T_cvar_write(h, &v));
    PLX_CHECK_MPI(MPI_T_cvar_read(h, &back));
    PLX_CHECK_EQ(back, 123, "PLEXUS_SPIN_COUNT written and read back");
    MPI_Barrier(MPI_COMM_WORLD);    /* waits with the new value */
    v = -5;
    PLX_CHECK_ERR(MPI_T_cvar_write(h, &v), MPI_T_ERR_INVALID);
    PLX_CHECK_MPI(MPI_T_cvar_write(h, &old));
    MPI_T_cvar_handle_free(&h);
    i = find_cvar("PLEXUS_SHM_EAGER_MAX");
    PLX_CHECK_MPI(MPI_T_cvar_get_info(i, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, &scope));
    PLX_CHECK_EQ(scope, MPI_T_SCOPE_READONLY, "PLEXUS_SHM_EAGER_MAX scope");
    PLX_CHECK_MPI(MPI_T_cvar_handle_alloc(i, NULL, &h, &count));
    unsigned long big = 1;
    PLX_CHECK_ERR(MPI_T_cvar_write(h, &big), MPI_T_ERR_CVAR_SET_NEVER);
    MPI_T_cvar_handle_free(&h);
}

static void pvars(void)
{
    int n = -1;
    PLX_CHECK_MPI(MPI_T_pvar_get_num(&n));
    PLX_CHECK(n >= 2 + 5, "MPI_T_pvar_get_num: %d", n);
    int unexp = -1, nsent = 0, sent_idx[16];
    for (int i = 0; i < n; i++) {
        char name[128], desc[512];
        int nl = sizeof name, dl = sizeof desc, verb, cls = -1, bind = -1, ro = -1, cont = -1, at = -1, idx = -1;
        MPI_Datatype dt;
        MPI_T_enum en;
        PLX_CHECK_MPI(MPI_T_pvar_get_info(i, name, &nl, &verb, &cls, &dt, &en, desc, &dl, &bind, &ro, &cont, &at));
        PLX_CHECK(!strncmp(name, "plexus_", 7) && dl > 10 && dt == MPI_UNSIGNED_LONG_LONG, "pvar %d '%s'", i,
                  name);
        PLX_CHECK_MPI(MPI_T_pvar_get_index(name, cls, &idx));
        PLX_CHECK_EQ(idx, i, "MPI_T_pvar_get_index finds the variable again");
        if (!strcmp(name, "plexus_unexpected_msgs")) {
            unexp = i;
            PLX_CHECK(cls == MPI_T_PVAR_CLASS_LEVEL && bind == MPI_T_BIND_MPI_COMM && ro && cont,
                      "plexus_unexpected_msgs: LEVEL, bound to a communicator, read-only, continuous");
        }
        size_t l = strlen(name);
        if (!strncmp(name, "plexus_chan_", 12) && l > 11 && !strcmp(name + l - 11, "_sent_bytes") && nsent < 16) {
            PLX_CHECK(cls == MPI_T_PVAR_CLASS_COUNTER && bind == MPI_T_BIND_NO_OBJECT && !ro && !cont,
                      "%s: a COUNTER that is started and stopped", name);
            sent_idx[nsent++] = i;
        }
    }
    PLX_CHECK(unexp >= 0 && nsent >= 1, "found the unexpected-queue variable and %d channel counters", nsent);
    PLX_CHECK_ERR(MPI_T_pvar_get_index("plexus_unexpected_msgs", MPI_T_PVAR_CLASS_COUNTER, &n),
                  MPI_T_ERR_INVALID_NAME);

    /* a session: the sent_bytes counters of every channel, summed for the partner */
    MPI_T_pvar_session ses;
    PLX_CHECK_MPI(MPI_T_pvar_session_create(&ses));
    MPI_T_pvar_handle h[16];
    for (int k = 0; k < nsent; k++) {
        int count = -1;
        PLX_CHECK_MPI(MPI_T_pvar_handle_alloc(ses, sent_idx[k], NULL, &h[k], &count));
        PLX_CHECK_EQ(count, size, "a channel counter has one element per world rank");
    }
    unsigned long long *val = calloc((size_t)size, sizeof *val);
    int peer = size > 1 ? rank ^ 1 : 0;
    if (peer >= size)
        peer = rank;    /* the odd one out sends to itself */
    enum { NB = 100000 };
    char *buf = calloc(NB, 1);
#define SENT_TO_PEER(total)                                                                        \
    do {                                                                                           \
        (total) = 0;                                                                               \
        for (int k_ = 0; k_ < nsent; k_++) {                                                       \
            PLX_CHECK_MPI(MPI_T_pvar_read(ses, h[k_], val));                                       \
            (total) += val[peer];                                                                  \
        }                                                                                          \
    } while (0)
    unsigned long long t0, t1, t2, t3;
    SENT_TO_PEER(t0);
    PLX_CHECK_EQ(t0, 0ULL, "a counter not started yet reads 0");
    PLX_CHECK_MPI(MPI_T_pvar_start(ses, MPI_T_PVAR_ALL_HANDLES));
    PLX_CHECK_MPI(MPI_Sendrecv(buf, NB, MPI_BYTE, peer, 1, buf, NB, MPI_BYTE, peer, 1, MPI_COMM_WORLD,
                               MPI_STATUS_IGNORE));
    SENT_TO_PEER(t1);
    PLX_CHECK(t1 >= NB && t1 < 2 * NB, "sent_bytes to rank %d moved by %llu after a %d-byte send", peer, t1, NB);
    PLX_CHECK_MPI(MPI_T_pvar_stop(ses, MPI_T_PVAR_ALL_HANDLES));
    PLX_CHECK_MPI(MPI_Sendrecv(buf, NB, MPI_BYTE, peer, 2, buf, NB, MPI_BYTE, peer, 2, MPI_COMM_WORLD,
                               MPI_STATUS_IGNORE));
    SENT_TO_PEER(t2);
    PLX_CHECK_EQ(t2, t1, "a stopped counter does not move");
    PLX_CHECK_MPI(MPI_T_pvar_start(ses, MPI_T_PVAR_ALL_HANDLES));
    PLX_CHECK_MPI(MPI_Sendrecv(buf, NB / 2, MPI_BYTE, peer, 3, buf, NB, MPI_BYTE, peer, 3, MPI_COMM_WORLD,
                               MPI_STATUS_IGNORE));
    SENT_TO_PEER(t3);
    PLX_CHECK(t3 >= t1 + NB / 2 && t3 < t1 + NB, "restarted counter adds the next send (%llu -> %llu)", t1, t3);
    PLX_CHECK_MPI(MPI_T_pvar_reset(ses, MPI_T_PVAR_ALL_HANDLES));
    SENT_TO_PEER(t0);
    PLX_CHECK_EQ(t0, 0ULL, "reset counters read 0");
    unsigned long long *w = calloc((size_t)size, sizeof *w);
    w[peer] = 5;
    PLX_CHECK_MPI(MPI_T_pvar_write(ses, h[0], w));
    PLX_CHECK_MPI(MPI_T_pvar_readreset(ses, h[0], val));
    PLX_CHECK_EQ(val[peer], 5ULL, "written counter reads back");
    PLX_CHECK_MPI(MPI_T_pvar_read(ses, h[0], val));
    PLX_CHECK_EQ(val[peer], 0ULL, "readreset left 0");
    PLX_CHECK_ERR(MPI_T_pvar_read(ses, MPI_T_PVAR_ALL_HANDLES, val), MPI_T_ERR_INVALID_HANDLE);
    free(w);

    /* unexpected messages on MPI_COMM_WORLD: the partner sends 3 before we receive */
    MPI_Comm world = MPI_COMM_WORLD;
    MPI_T_pvar_handle uh;
    int count = -1;
    PLX_CHECK_ERR(MPI_T_pvar_handle_alloc(ses, unexp, NULL, &uh, &count), MPI_T_ERR_INVALID_HANDLE);
    PLX_CHECK_MPI(MPI_T_pvar_handle_alloc(ses, unexp, &world, &uh, &count));
    PLX_CHECK_EQ(count, 1, "unexpected-queue count");
    PLX_CHECK_ERR(MPI_T_pvar_start(ses, uh), MPI_T_ERR_PVAR_NO_STARTSTOP);
    PLX_CHECK_ERR(MPI_T_pvar_reset(ses, uh), MPI_T_ERR_PVAR_NO_WRITE);
    unsigned long long q = 99;
    PLX_CHECK_MPI(MPI_T_pvar_read(ses, uh, &q));
    PLX_CHECK_EQ(q, 0ULL, "no unexpected messages at first");
    MPI_Barrier(MPI_COMM_WORLD);    /* the partner reads its 0 before we send */
    int m[3] = { 1, 2, 3 }, got[3];
    MPI_Request rq[3];
    for (int k = 0; k < 3; k++)
        PLX_CHECK_MPI(MPI_Isend(&m[k], 1, MPI_INT, peer, 40 + k, MPI_COMM_WORLD, &rq[k]));
    /* drive progress until all three have arrived (a probe of a tag nobody sends) */
    for (int it = 0; q < 3 && it < 2000000; it++) {
        int flag;
        MPI_Iprobe(peer, 99, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
        PLX_CHECK_MPI(MPI_T_pvar_read(ses, uh, &q));
        plx_pause(it);
    }
    PLX_CHECK_EQ(q, 3ULL, "three messages wait in MPI_COMM_WORLD's unexpected queue");
    for (int k = 0; k < 3; k++)
        PLX_CHECK_MPI(MPI_Recv(&got[k], 1, MPI_INT, peer, 40 + k, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    PLX_CHECK_MPI(MPI_Waitall(3, rq, MPI_STATUSES_IGNORE));
    PLX_CHECK_MPI(MPI_T_pvar_read(ses, uh, &q));
    PLX_CHECK_EQ(q, 0ULL, "the queue is empty once they are received");
    PLX_CHECK_MPI(MPI_T_pvar_handle_free(ses, &uh));
    PLX_CHECK(uh == MPI_T_PVAR_HANDLE_NULL, "pvar handle freed");
    PLX_CHECK_MPI(MPI_T_pvar_session_free(&ses));
    PLX_CHECK(ses == MPI_T_PVAR_SESSION_NULL, "session freed");
    free(val);
    free(buf);
}

static void categories(void)
{
    int nc = -1, ncv = -1, npv = -1;
    PLX_CHECK_MPI(MPI_T_category_get_num(&nc));
    MPI_T_cvar_get_num(&ncv);
    MPI_T_pvar_get_num(&npv);
    PLX_CHECK(nc >= 5, "MPI_T_category_get_num: %d", nc);
    int *cv_seen = calloc((size_t)ncv, sizeof *cv_seen), *pv_seen = calloc((size_t)npv, sizeof *pv_seen);
    int root = -1, subs_total = 0;
    for (int c = 0; c < nc; c++) {
        char name[64], desc[256];
        int nl = sizeof name, dl = sizeof desc, ncvars = -1, npvars = -1, ncats = -1;
        PLX_CHECK_MPI(MPI_T_category_get_info(c, name, &nl, desc, &dl, &ncvars, &npvars, &ncats));
        int idx = -1;
        PLX_CHECK_MPI(MPI_T_category_get_index(name, &idx));
        PLX_CHECK_EQ(idx, c, "MPI_T_category_get_index");
        int *l = malloc(((size_t)ncvars + (size_t)npvars + (size_t)ncats + 1) * sizeof *l);
        PLX_CHECK_MPI(MPI_T_category_get_cvars(c, ncvars, l));
        for (int k = 0; k < ncvars; k++)
            cv_seen[l[k]]++;
        PLX_CHECK_MPI(MPI_T_category_get_pvars(c, npvars, l));
        for (int k = 0; k < npvars; k++)
            pv_seen[l[k]]++;
        PLX_CHECK_MPI(MPI_T_category_get_categories(c, ncats, l));
        if (!strcmp(name, "plexus"))
            root = c, subs_total = ncats;
        free(l);
        int ne = -1;
        PLX_CHECK_MPI(MPI_T_category_get_num_events(c, &ne));
        /* the one event type (session 7, tests/mpi/mpit_events.c) is in plexus_pt2pt */
        PLX_CHECK_EQ(ne, !strcmp(name, "plexus_pt2pt"), "events only in plexus_pt2pt");
    }
    PLX_CHECK(root >= 0 && subs_total == nc - 1, "the root category holds the %d others", subs_total);
    for (int i = 0; i < ncv; i++)
        PLX_CHECK(cv_seen[i] == 1, "cvar %d is in %d categories", i, cv_seen[i]);
    for (int i = 0; i < npv; i++)
        PLX_CHECK(pv_seen[i] == 1, "pvar %d is in %d categories", i, pv_seen[i]);
    int tcp = -1, ntcp = -1;
    PLX_CHECK_MPI(MPI_T_category_get_index("plexus_tcp", &tcp));
    PLX_CHECK_MPI(MPI_T_category_get_info(tcp, NULL, NULL, NULL, NULL, &ntcp, NULL, NULL));
    PLX_CHECK(ntcp >= 5, "plexus_tcp holds the PLEXUS_TCP_* variables (%d)", ntcp);
    PLX_CHECK_ERR(MPI_T_category_get_info(nc, NULL, NULL, NULL, NULL, NULL, NULL, NULL), MPI_T_ERR_INVALID_INDEX);
    int upd = -1, ne = -1;
    PLX_CHECK_MPI(MPI_T_category_changed(&upd));
    PLX_CHECK_MPI(MPI_T_event_get_num(&ne));
    PLX_CHECK_EQ(ne, 1, "MPI_T_event_get_num: plexus_unexpected_msg");
    free(cv_seen);
    free(pv_seen);
}

int main(int argc, char **argv)
{
    int n = -1, provided = -1;
    /* nothing works before MPI_T_init_thread */
    if (MPI_T_cvar_get_num(&n) != MPI_T_ERR_NOT_INITIALIZED || MPI_T_finalize() != MPI_T_ERR_NOT_INITIALIZED) {
        fprintf(stderr, "FAIL: MPI_T calls before MPI_T_init_thread must fail with MPI_T_ERR_NOT_INITIALIZED\n");
        return 1;
    }
    if (MPI_T_init_thread(MPI_THREAD_SINGLE, &provided) != MPI_SUCCESS || provided != MPI_THREAD_SINGLE) {
        fprintf(stderr, "FAIL: MPI_T_init_thread\n");
        return 1;
    }
    /* the checks before MPI_Init are counted once it runs */
    plx_test_state()->name = "mpit";
    cvars_before_init();
    plx_test_init(&argc, &argv, "mpit");
    rank = plx_test_state()->rank;
    size = plx_test_state()->size;
    cvars_after_init();
    pvars();
    categories();
    PLX_CHECK_MPI(MPI_T_finalize());
    PLX_CHECK_ERR(MPI_T_cvar_get_num(&n), MPI_T_ERR_NOT_INITIALIZED);
    return plx_test_finish();
}
