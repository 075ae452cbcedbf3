/*
 * mpit_events.c - MPI_T events: the plexus_unexpected_msg event type and the
 * plexus_clock source.
 *
 * Rank 0 registers a callback (MPI_T_CB_REQUIRE_MPI_RESTRICTED); the last
 * rank sends it three messages (tags 70-72, 10/20/30 ints) before rank 0
 * posts a receive, so each joins the unexpected queue and raises an event.
 * The callback reads every element (MPI_T_event_read), the whole record
 * (MPI_T_event_copy, at the displacements MPI_T_event_get_info gives), the
 * timestamp and source; the test checks source rank, tag, world rank and
 * byte count of each, and that the timestamps lie between two
 * MPI_T_source_get_timestamp readings. A registration with only a
 * REQUIRE_NONE callback is never called (it cannot be, inside MPI). Freeing
 * the registration runs the free callback with its user data; no event is
 * delivered afterwards. Also the enumeration calls and their bad indices.
 */
#include "plx_test.h"

struct seen {
    int n, src[8], tag[8], world[8], ok_copy[8], source[8];
    MPI_Count bytes[8], ts[8];
};

static MPI_Aint disp[4];

static void on_event(MPI_T_event_instance ev, MPI_T_event_registration reg, MPI_T_cb_safety safety, void *user)
{
    (void)reg;
    struct seen *s = user;
    int tag = -1;
    MPI_T_event_read(ev, 1, &tag);
    if (tag < 70 || tag > 72 || s->n >= 8 || safety != MPI_T_CB_REQUIRE_MPI_RESTRICTED)
        return;     /* other traffic (collectives) */
    int i = s->n++;
    s->tag[i] = tag;
    MPI_T_event_read(ev, 0, &s->src[i]);
    MPI_T_event_read(ev, 2, &s->world[i]);
    MPI_T_event_read(ev, 3, &s->bytes[i]);
    MPI_T_event_get_timestamp(ev, &s->ts[i]);
    MPI_T_event_get_source(ev, &s->source[i]);
    char rec[64];
    MPI_T_event_copy(ev, rec);
    int c_src, c_tag;
    MPI_Count c_bytes;
    memcpy(&c_src, rec + disp[0], sizeof c_src);
    memcpy(&c_tag, rec + disp[1], sizeof c_tag);
    memcpy(&c_bytes, rec + disp[3], sizeof c_bytes);
    s->ok_copy[i] = c_src == s->src[i] && c_tag == tag && c_bytes == s->bytes[i];
}

static int never_called;
static void on_event_none(MPI_T_event_instance ev, MPI_T_event_registration reg, MPI_T_cb_safety safety, void *user)
{
    (void)ev, (void)reg, (void)safety, (void)user;
    never_called++;
}

static MPI_Count dropped_seen;
static void on_dropped(MPI_Count count, MPI_T_event_registration reg, int source, MPI_T_cb_safety safety, void *user)
{
    (void)reg, (void)source, (void)safety, (void)user;
    dropped_seen += count;
}

static int freed;
static void on_free(MPI_T_event_registration reg, MPI_T_cb_safety safety, void *user)
{
    (void)reg, (void)safety;
    freed += *(int *)user;
}

int main(int argc, char **argv)
{
    int provided;
    PLX_CHECK_EQ(MPI_T_event_get_num(&provided), MPI_T_ERR_NOT_INITIALIZED, "before MPI_T_init_thread");
    MPI_T_init_thread(MPI_THREAD_SINGLE, &provided);
    plx_test_init(&argc, &argv, "mpit_events");
    int rank = plx_test_state()->rank, size = plx_test_state()->size, last = size - 1;

    int n = -1, idx = -1, nel = 4, verb, bind, len = 64, dlen = 0;
    char name[64];
    MPI_Datatype types[4];
    PLX_CHECK_MPI(MPI_T_event_get_num(&n));
    PLX_CHECK_EQ(n, 1, "one event type");
    PLX_CHECK_MPI(MPI_T_event_get_info(0, name, &len, &verb, types, disp, &nel, NULL, NULL, NULL, &dlen, &bind));
    PLX_CHECK(!strcmp(name, "plexus_unexpected_msg") && nel == 4 && dlen > 1 && bind == MPI_T_BIND_NO_OBJECT,
              "event info: %s, %d elements", name, nel);
    PLX_CHECK(types[0] == MPI_INT && types[1] == MPI_INT && types[2] == MPI_INT && types[3] == MPI_COUNT,
              "element types");
    PLX_CHECK_MPI(MPI_T_event_get_index("plexus_unexpected_msg", &idx));
    PLX_CHECK_EQ(idx, 0, "index by name");
    PLX_CHECK_EQ(MPI_T_event_get_index("nope", &idx), MPI_T_ERR_INVALID_NAME, "unknown event name");
    PLX_CHECK_EQ(MPI_T_event_get_info(1, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
                 MPI_T_ERR_INVALID_INDEX, "event index 1");
    MPI_T_source_order ord;
    MPI_Count tps = 0, maxt = 0, t0, t1;
    len = sizeof name;
    PLX_CHECK_MPI(MPI_T_source_get_num(&n));
    PLX_CHECK_EQ(n, 1, "one source");
    PLX_CHECK_MPI(MPI_T_source_get_info(0, name, &len, NULL, NULL, &ord, &tps, &maxt, NULL));
    PLX_CHECK(!strcmp(name, "plexus_clock") && ord == MPI_T_SOURCE_ORDERED && tps == 1000000000 && maxt > 0,
              "source info");
    PLX_CHECK_EQ(MPI_T_source_get_timestamp(1, &t0), MPI_T_ERR_INVALID_INDEX, "source index 1");
    int cat = -1, ne = -1, ev0 = -1;
    PLX_CHECK_MPI(MPI_T_category_get_index("plexus_pt2pt", &cat));
    PLX_CHECK_MPI(MPI_T_category_get_num_events(cat, &ne));
    PLX_CHECK_MPI(MPI_T_category_get_events(cat, 1, &ev0));
    PLX_CHECK(ne == 1 && ev0 == 0, "plexus_pt2pt holds the event");
    PLX_CHECK_EQ(MPI_T_event_handle_alloc(5, NULL, MPI_INFO_NULL, NULL), MPI_T_ERR_INVALID_INDEX, "alloc index 5");

    struct seen s;
    memset(&s, 0, sizeof s);
    MPI_T_event_registration reg = MPI_T_EVENT_REGISTRATION_NULL, reg2 = MPI_T_EVENT_REGISTRATION_NULL;
    if (rank == 0) {
        PLX_CHECK_MPI(MPI_T_event_handle_alloc(0, NULL, MPI_INFO_NULL, &reg));
        PLX_CHECK_MPI(MPI_T_event_register_callback(reg, MPI_T_CB_REQUIRE_MPI_RESTRICTED, MPI_INFO_NULL, &s,
                                                    on_event));
        PLX_CHECK_MPI(MPI_T_event_handle_alloc(0, NULL, MPI_INFO_NULL, &reg2));
        PLX_CHECK_MPI(MPI_T_event_register_callback(reg2, MPI_T_CB_REQUIRE_NONE, MPI_INFO_NULL, NULL,
                                                    on_event_none));
        PLX_CHECK_EQ(MPI_T_event_register_callback(reg, (MPI_T_cb_safety)9, MPI_INFO_NULL, NULL, on_event),
                     MPI_T_ERR_INVALID, "bad safety level");
        PLX_CHECK_MPI(MPI_T_event_set_dropped_handler(reg2, on_dropped));
        MPI_Info hi;
        int nk = -1;
        PLX_CHECK_MPI(MPI_T_event_handle_set_info(reg, MPI_INFO_NULL));
        PLX_CHECK_MPI(MPI_T_event_handle_get_info(reg, &hi));
        MPI_Info_get_nkeys(hi, &nk);
        PLX_CHECK_EQ(nk, 0, "no hints are known");
        MPI_Info_free(&hi);
        PLX_CHECK_MPI(MPI_T_event_callback_get_info(reg, MPI_T_CB_REQUIRE_MPI_RESTRICTED, &hi));
        MPI_Info_free(&hi);
        PLX_CHECK_EQ(MPI_T_event_callback_set_info(reg, (MPI_T_cb_safety)9, MPI_INFO_NULL), MPI_T_ERR_INVALID,
                     "callback_set_info: bad level");
    }
    MPI_T_source_get_timestamp(0, &t0);
    MPI_Barrier(MPI_COMM_WORLD);
    int data[3][30];
    MPI_Request rq[3];
    if (rank == last)
        for (int i = 0; i < 3; i++) {
            for (int k = 0; k < 30; k++)
                data[i][k] = i * 100 + k;
            MPI_Isend(data[i], 10 * (i + 1), MPI_INT, 0, 70 + i, MPI_COMM_WORLD, &rq[i]);
        }
    if (rank == 0) {
        int flag = 0;
        MPI_Status st;
        for (int t = 0; t < 10000000 && !flag; t++)     /* progress until the last one is queued */
            MPI_Iprobe(last, 72, MPI_COMM_WORLD, &flag, &st);
        MPI_T_source_get_timestamp(0, &t1);
        int in[30];
        for (int i = 0; i < 3; i++) {
            MPI_Recv(in, 30, MPI_INT, last, 70 + i, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            PLX_CHECK(in[0] == i * 100 && in[10 * (i + 1) - 1] == i * 100 + 10 * (i + 1) - 1, "message %d data", i);
        }
        PLX_CHECK_EQ(s.n, 3, "three events seen");
        for (int i = 0; i < s.n; i++) {
            PLX_CHECK(s.tag[i] == 70 + i && s.src[i] == last && s.world[i] == last &&
                      s.bytes[i] == (MPI_Count)(10 * (i + 1) * sizeof(int)),
                      "event %d: src %d tag %d world %d bytes %lld", i, s.src[i], s.tag[i], s.world[i],
                      (long long)s.bytes[i]);
            PLX_CHECK(s.ok_copy[i] && s.source[i] == 0, "event %d: copy and source", i);
            PLX_CHECK(s.ts[i] >= t0 && s.ts[i] <= t1 && (i == 0 || s.ts[i] >= s.ts[i - 1]),
                      "event %d: timestamp in order and in range", i);
        }
        PLX_CHECK_EQ(never_called, 0, "a REQUIRE_NONE callback is not called inside MPI");
        int token = 7;
        PLX_CHECK_MPI(MPI_T_event_handle_free(reg, &token, on_free));
        PLX_CHECK_EQ(freed, 7, "free callback ran with its user data");
        PLX_CHECK_MPI(MPI_T_event_handle_free(reg2, NULL, NULL));
        PLX_CHECK_GE(dropped_seen, 3, "the REQUIRE_NONE registration's dropped handler got the count at free");
    }
    if (rank == last)
        MPI_Waitall(3, rq, MPI_STATUSES_IGNORE);
    MPI_Barrier(MPI_COMM_WORLD);
    /* after the free: another unexpected message raises nothing */
    if (rank == last)
        MPI_Send(data[0], 1, MPI_INT, 0, 71, MPI_COMM_WORLD);
    if (rank == 0) {
        int in;
        MPI_Recv(&in, 1, MPI_INT, last, 71, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        PLX_CHECK_EQ(s.n, 3, "no event after the registration was freed");
    }
    int rc = plx_test_finish();
    MPI_T_finalize();
    return rc;
}
