/*
 * init_env.c - MPI_Init_thread, environment inquiries and predefined attributes.
 *
 * Initialized/Finalized before, during and after; Get_version and
 * Get_library_version callable outside Init..Finalize; thread level queries;
 * Wtime/Wtick; processor name; MPI_TAG_UB, MPI_HOST, MPI_IO, MPI_WTIME_IS_GLOBAL,
 * MPI_UNIVERSE_SIZE, MPI_APPNUM on MPI_COMM_WORLD; Pcontrol; Get_address/Aint_*.
 * MPI_UNIVERSE_SIZE is an optional hint in the standard (MPICH's Hydra sets it only
 * with -usize, Open MPI gives the slot count); --require-universe-size requires it
 * and >= np, --expect-version=X.Y requires exactly that standard version. CMake
 * passes both for Plexus.
 */
#include "plx_test.h"

static void check_version(int want_major, int want_minor)
{
    int major = -1, minor = -1;

    PLX_CHECK_MPI(MPI_Get_version(&major, &minor));
    PLX_CHECK_EQ(major, MPI_VERSION, "MPI_Get_version major == MPI_VERSION of mpi.h");
    PLX_CHECK_EQ(minor, MPI_SUBVERSION, "MPI_Get_version minor == MPI_SUBVERSION of mpi.h");
    PLX_CHECK_GE(major * 100 + minor, 301, "MPI_Get_version (major*100+minor) >= 3.1");
    if (want_major >= 0) {
        PLX_CHECK_EQ(major, want_major, "MPI_Get_version major (--expect-version)");
        PLX_CHECK_EQ(minor, want_minor, "MPI_Get_version minor (--expect-version)");
    }
}

static void check_library_version(void)
{
    char s[MPI_MAX_LIBRARY_VERSION_STRING + 1];
    int len = -1;

    memset(s, 0x7f, sizeof s);
    PLX_CHECK_MPI(MPI_Get_library_version(s, &len));
    PLX_CHECK(len > 0 && len < MPI_MAX_LIBRARY_VERSION_STRING,
              "library version length %d in (0, MPI_MAX_LIBRARY_VERSION_STRING)", len);
    s[MPI_MAX_LIBRARY_VERSION_STRING] = '\0';
    if (!plx_lib_is("Open MPI")) /* Open MPI 4.1 counts the terminating NUL in resultlen */
        PLX_CHECK_EQ(strlen(s), len, "strlen(library version) == resultlen");
}

/* A predefined attribute of MPI_COMM_WORLD; returns `absent` when it is not set
 * and that is allowed. */
static int world_attr(int keyval, const char *name, int required, int absent)
{
    int *val = NULL, flag = -1;

    PLX_CHECK_MPI(MPI_Comm_get_attr(MPI_COMM_WORLD, keyval, &val, &flag));
    PLX_CHECK(flag == 1 || (flag == 0 && !required),
              "predefined attribute %s present on MPI_COMM_WORLD (flag %d)", name, flag);
    if (!flag)
        return absent;
    PLX_CHECK(val != NULL, "attribute %s value pointer non-NULL", name);
    return *val;
}

int main(int argc, char **argv)
{
    int flag = -1, provided = -1, rank, size, want_major = -1, want_minor = -1, need_usize = 0;

    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--require-universe-size") == 0)
            need_usize = 1;
        else if (sscanf(argv[i], "--expect-version=%d.%d", &want_major, &want_minor) != 2)
            want_major = -1;
    }

    /* Before MPI_Init: only these few calls are allowed. */
    PLX_CHECK_MPI(MPI_Initialized(&flag));
    PLX_CHECK_EQ(flag, 0, "MPI_Initialized before MPI_Init");
    PLX_CHECK_MPI(MPI_Finalized(&flag));
    PLX_CHECK_EQ(flag, 0, "MPI_Finalized before MPI_Init");
    check_version(want_major, want_minor);
    check_library_version();

    PLX_CHECK_MPI(MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided));
    plx_test_begin("init_env");
    rank = plx_test_state()->rank;
    size = plx_test_state()->size;

    PLX_CHECK(MPI_THREAD_SINGLE < MPI_THREAD_FUNNELED && MPI_THREAD_FUNNELED < MPI_THREAD_SERIALIZED &&
                  MPI_THREAD_SERIALIZED < MPI_THREAD_MULTIPLE,
              "thread level constants are monotonic");
    PLX_CHECK(provided >= MPI_THREAD_SINGLE && provided <= MPI_THREAD_MULTIPLE,
              "MPI_Init_thread provided %d is a thread level", provided);
    {
        int q = -1;
        PLX_CHECK_MPI(MPI_Query_thread(&q));
        PLX_CHECK_EQ(q, provided, "MPI_Query_thread == provided");
        PLX_CHECK_MPI(MPI_Is_thread_main(&flag));
        PLX_CHECK_EQ(flag, 1, "MPI_Is_thread_main on the thread that called Init");
    }
    PLX_CHECK_MPI(MPI_Initialized(&flag));
    PLX_CHECK_EQ(flag, 1, "MPI_Initialized after MPI_Init");
    PLX_CHECK_MPI(MPI_Finalized(&flag));
    PLX_CHECK_EQ(flag, 0, "MPI_Finalized after MPI_Init");
    PLX_CHECK(size >= 1 && rank >= 0 && rank < size, "rank %d of size %d", rank, size);
    check_version(want_major, want_minor);

    /* Clocks. */
    {
        double tick = MPI_Wtick(), t0 = MPI_Wtime(), prev = t0, t1;
        struct timespec ts = {0, 20 * 1000 * 1000};
        int monotonic = 1;

        PLX_CHECK(tick > 0.0 && tick < 1.0, "MPI_Wtick %g in (0, 1)", tick);
        for (int i = 0; i < 100000; i++) {
            double t = MPI_Wtime();
            if (t < prev)
                monotonic = 0;
            prev = t;
        }
        PLX_CHECK(monotonic, "MPI_Wtime never decreases over 100000 calls");
        nanosleep(&ts, NULL);
        t1 = MPI_Wtime();
        PLX_CHECK(t1 - t0 >= 0.019, "MPI_Wtime advances over a 20 ms sleep (%g s)", t1 - t0);
        PLX_CHECK(t1 - t0 < 60.0, "MPI_Wtime is in seconds (20 ms sleep measured %g s)", t1 - t0);
    }

    /* Processor name. */
    {
        char name[MPI_MAX_PROCESSOR_NAME + 1];
        int len = -1;
        memset(name, 0x7f, sizeof name);
        PLX_CHECK_MPI(MPI_Get_processor_name(name, &len));
        PLX_CHECK(len > 0 && len < MPI_MAX_PROCESSOR_NAME, "processor name length %d", len);
        name[MPI_MAX_PROCESSOR_NAME] = '\0';
        PLX_CHECK_EQ(strlen(name), len, "strlen(processor name) == resultlen");
    }
    check_library_version();

    /* Predefined attributes (MPI-3.1 8.1.2, 10.5.1, 10.5.3). */
    {
        int tag_ub = world_attr(MPI_TAG_UB, "MPI_TAG_UB", 1, 0);
        int host = world_attr(MPI_HOST, "MPI_HOST", 1, 0);
        int io = world_attr(MPI_IO, "MPI_IO", 1, 0);
        int wg = world_attr(MPI_WTIME_IS_GLOBAL, "MPI_WTIME_IS_GLOBAL", 1, 0);
        int usize = world_attr(MPI_UNIVERSE_SIZE, "MPI_UNIVERSE_SIZE", need_usize, size);
        int appnum = world_attr(MPI_APPNUM, "MPI_APPNUM", 1, 0);
        int all[2], mx[2];

        PLX_CHECK_GE(tag_ub, 32767, "MPI_TAG_UB");
        PLX_CHECK(host == MPI_PROC_NULL || (host >= 0 && host < size), "MPI_HOST %d is PROC_NULL or a rank",
                  host);
        PLX_CHECK(io == MPI_ANY_SOURCE || io == MPI_PROC_NULL || (io >= 0 && io < size),
                  "MPI_IO %d is ANY_SOURCE, PROC_NULL or a rank", io);
        PLX_CHECK(wg == 0 || wg == 1, "MPI_WTIME_IS_GLOBAL %d is 0 or 1", wg);
        /* A hint (MPI-3.1 10.5.1): Open MPI gives the slot count, below np when oversubscribed. */
        PLX_CHECK_GE(usize, need_usize ? size : 1, "MPI_UNIVERSE_SIZE");
        PLX_CHECK_EQ(appnum, 0, "MPI_APPNUM of a single-program launch");
        /* Same TAG_UB and HOST on every rank. */
        all[0] = tag_ub;
        all[1] = host;
        PLX_CHECK_MPI(MPI_Allreduce(all, mx, 2, MPI_INT, MPI_MAX, MPI_COMM_WORLD));
        PLX_CHECK_EQ(mx[0], tag_ub, "MPI_TAG_UB identical on all ranks");
        PLX_CHECK_EQ(mx[1], host, "MPI_HOST identical on all ranks");
        /* The tag upper bound is usable. */
        {
            int out = 12345 + rank, in = -1;
            MPI_Status st;
            PLX_CHECK_MPI(MPI_Sendrecv(&out, 1, MPI_INT, rank, tag_ub, &in, 1, MPI_INT, rank, tag_ub,
                                       MPI_COMM_WORLD, &st));
            PLX_CHECK_EQ(in, out, "message with tag MPI_TAG_UB received");
            PLX_CHECK_EQ(st.MPI_TAG, tag_ub, "status tag == MPI_TAG_UB");
        }
    }

    PLX_CHECK_MPI(MPI_Pcontrol(1));
    PLX_CHECK_MPI(MPI_Pcontrol(0));

    /* Addresses. */
    {
        double arr[16];
        MPI_Aint a0, a5, back;
        PLX_CHECK_MPI(MPI_Get_address(&arr[0], &a0));
        PLX_CHECK_MPI(MPI_Get_address(&arr[5], &a5));
        PLX_CHECK_EQ(MPI_Aint_diff(a5, a0), 5 * (MPI_Aint)sizeof(double), "MPI_Aint_diff");
        back = MPI_Aint_add(a0, 5 * (MPI_Aint)sizeof(double));
        PLX_CHECK_EQ(back, a5, "MPI_Aint_add");
    }

    PLX_CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    plx_test_report();
    PLX_CHECK_MPI(MPI_Finalize());

    /* After MPI_Finalize: the state queries and version calls still answer. */
    PLX_CHECK_MPI(MPI_Initialized(&flag));
    PLX_CHECK_EQ(flag, 1, "MPI_Initialized after MPI_Finalize");
    PLX_CHECK_MPI(MPI_Finalized(&flag));
    PLX_CHECK_EQ(flag, 1, "MPI_Finalized after MPI_Finalize");
    check_version(want_major, want_minor);
    check_library_version();
    if (rank == 0)
        printf("init_env: checks after MPI_Finalize passed\n");
    return 0;
}
