/*
 * info.c - MPI_Info objects.
 *
 * create/set/get/get_valuelen/delete/dup/free/get_nkeys/get_nthkey; key numbering
 * (MPI-3.1 9: keys 0..N-1 all defined, numbering stable while the object is not
 * modified); overwrite; value truncation in Info_get; errors: deleting a missing
 * key (MPI_ERR_INFO_NOKEY), over-long key (MPI_ERR_INFO_KEY) and value
 * (MPI_ERR_INFO_VALUE), nthkey out of range (MPI_ERR_ARG); dup independence.
 */
#include "plx_test.h"

#define NKEYS 12

static void key_name(int i, char *buf)
{
    snprintf(buf, MPI_MAX_INFO_KEY, "plexus_key_%d", (i * 7) % NKEYS); /* not in sorted order */
}

static void key_value(int i, int round, char *buf)
{
    snprintf(buf, MPI_MAX_INFO_VAL, "value-%d-round-%d%s", i, round, i % 3 ? "" : "-with a longer tail");
}

static void check_get(MPI_Info info, const char *key, const char *expect, const char *what)
{
    char val[MPI_MAX_INFO_VAL + 1];
    int flag = -1, len = -1;

    PLX_CHECK_MPI(MPI_Info_get_valuelen(info, key, &len, &flag));
    if (!expect) {
        PLX_CHECK(flag == 0, "%s: get_valuelen of absent key '%s' (flag %d)", what, key, flag);
        PLX_CHECK_MPI(MPI_Info_get(info, key, MPI_MAX_INFO_VAL, val, &flag));
        PLX_CHECK(flag == 0, "%s: get of absent key '%s' (flag %d)", what, key, flag);
        return;
    }
    PLX_CHECK(flag == 1, "%s: get_valuelen of '%s' finds it", what, key);
    PLX_CHECK(len == (int)strlen(expect), "%s: valuelen of '%s' (got %d, expected %d)", what, key, len,
              (int)strlen(expect));
    memset(val, 'z', sizeof val);
    PLX_CHECK_MPI(MPI_Info_get(info, key, MPI_MAX_INFO_VAL, val, &flag));
    PLX_CHECK(flag == 1, "%s: get of '%s' finds it", what, key);
    PLX_CHECK_STR(val, expect, what);
}

/* The keys reported by nthkey are exactly `keys` (in some order); returns the order. */
static void check_key_set(MPI_Info info, char keys[][MPI_MAX_INFO_KEY + 1], int n, char order[][MPI_MAX_INFO_KEY + 1],
                          const char *what)
{
    int nkeys = -1, *seen = calloc((size_t)n + 1, sizeof(int));

    PLX_CHECK_MPI(MPI_Info_get_nkeys(info, &nkeys));
    PLX_CHECK(nkeys == n, "%s: nkeys (got %d, expected %d)", what, nkeys, n);
    for (int i = 0; i < n; i++) {
        int found = -1;
        memset(order[i], 'z', MPI_MAX_INFO_KEY);
        order[i][MPI_MAX_INFO_KEY] = '\0';
        PLX_CHECK_MPI(MPI_Info_get_nthkey(info, i, order[i]));
        for (int j = 0; j < n; j++)
            if (strcmp(order[i], keys[j]) == 0)
                found = j;
        PLX_CHECK(found >= 0, "%s: nthkey(%d) = '%s' is one of the keys set", what, i, order[i]);
        PLX_CHECK(seen[found] == 0, "%s: nthkey(%d) = '%s' reported once", what, i, order[i]);
        seen[found] = 1;
    }
    free(seen);
}

int main(int argc, char **argv)
{
    MPI_Info info, dup;
    char keys[NKEYS][MPI_MAX_INFO_KEY + 1], order[NKEYS][MPI_MAX_INFO_KEY + 1], val[MPI_MAX_INFO_VAL + 1];
    int nkeys = -1, flag = -1;

    plx_test_init(&argc, &argv, "info");
    /* Info errors are not tied to a communicator: MPI-3.1 raises them on WORLD. */
    PLX_CHECK_MPI(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    PLX_CHECK_MPI(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));

    PLX_CHECK_MPI(MPI_Info_create(&info));
    PLX_CHECK(info != MPI_INFO_NULL, "Info_create gives a handle");
    PLX_CHECK_MPI(MPI_Info_get_nkeys(info, &nkeys));
    PLX_CHECK_EQ(nkeys, 0, "new info has no keys");
    check_get(info, "plexus_key_0", NULL, "empty info");

    for (int i = 0; i < NKEYS; i++) {
        key_name(i, keys[i]);
        key_value(i, 0, val);
        PLX_CHECK_MPI(MPI_Info_set(info, keys[i], val));
        PLX_CHECK_MPI(MPI_Info_get_nkeys(info, &nkeys));
        PLX_CHECK_EQ(nkeys, i + 1, "nkeys grows with each new key");
    }
    for (int i = 0; i < NKEYS; i++) {
        key_value(i, 0, val);
        check_get(info, keys[i], val, "value after set");
    }
    check_key_set(info, keys, NKEYS, order, "after set");

    /* Numbering is stable while the info is not modified (reads do not modify). */
    for (int i = NKEYS - 1; i >= 0; i--) {
        char k[MPI_MAX_INFO_KEY + 1];
        PLX_CHECK_MPI(MPI_Info_get_nthkey(info, i, k));
        PLX_CHECK_STR(k, order[i], "nthkey numbering stable across reads");
    }

    /* Overwrite: same count, new value, shorter and longer. */
    PLX_CHECK_MPI(MPI_Info_set(info, keys[3], "x"));
    PLX_CHECK_MPI(MPI_Info_set(info, keys[4], "a much longer value than the one it replaces, 0123456789"));
    PLX_CHECK_MPI(MPI_Info_get_nkeys(info, &nkeys));
    PLX_CHECK_EQ(nkeys, NKEYS, "overwriting keeps nkeys");
    check_get(info, keys[3], "x", "overwritten with a shorter value");
    check_get(info, keys[4], "a much longer value than the one it replaces, 0123456789",
              "overwritten with a longer value");

    /* Info_get with valuelen smaller than the value: truncated, still terminated,
     * and not an error (MPI-3.1 9; MPICH 4.0 truncates but returns MPI_ERR_INFO_VALUE). */
    memset(val, 'z', sizeof val);
    {
        int rc = MPI_Info_get(info, keys[4], 6, val, &flag);
        if (!plx_lib_is("MPICH Version:"))
            PLX_CHECK_EQ(rc, MPI_SUCCESS, "Info_get truncating the value succeeds");
    }
    PLX_CHECK_EQ(flag, 1, "truncated get finds the key");
    PLX_CHECK_STR(val, "a much", "Info_get truncates to valuelen characters");

    /* Keys are case sensitive. */
    PLX_CHECK_MPI(MPI_Info_set(info, "CaseKey", "upper"));
    PLX_CHECK_MPI(MPI_Info_set(info, "casekey", "lower"));
    check_get(info, "CaseKey", "upper", "case-sensitive key CaseKey");
    check_get(info, "casekey", "lower", "case-sensitive key casekey");
    PLX_CHECK_MPI(MPI_Info_delete(info, "CaseKey"));
    PLX_CHECK_MPI(MPI_Info_delete(info, "casekey"));

    /* Dup: equal contents, then independent. */
    PLX_CHECK_MPI(MPI_Info_dup(info, &dup));
    PLX_CHECK(dup != info && dup != MPI_INFO_NULL, "Info_dup gives a new handle");
    check_key_set(dup, keys, NKEYS, order, "dup");
    check_get(dup, keys[3], "x", "dup has the values");
    PLX_CHECK_MPI(MPI_Info_set(dup, keys[3], "changed in dup"));
    PLX_CHECK_MPI(MPI_Info_set(dup, "only_in_dup", "1"));
    PLX_CHECK_MPI(MPI_Info_delete(dup, keys[0]));
    check_get(info, keys[3], "x", "original unchanged by set on dup");
    check_get(info, "only_in_dup", NULL, "original does not see a key added to dup");
    key_value(0, 0, val);
    check_get(info, keys[0], val, "original keeps a key deleted from dup");
    PLX_CHECK_MPI(MPI_Info_set(info, keys[5], "changed in original"));
    key_value(5, 0, val);
    check_get(dup, keys[5], val, "dup unchanged by set on original");
    PLX_CHECK_MPI(MPI_Info_get_nkeys(dup, &nkeys));
    PLX_CHECK_EQ(nkeys, NKEYS, "dup nkeys after add one, delete one");

    /* Delete: count drops, key gone, others intact; missing key is an error. */
    PLX_CHECK_MPI(MPI_Info_delete(info, keys[7]));
    PLX_CHECK_MPI(MPI_Info_get_nkeys(info, &nkeys));
    PLX_CHECK_EQ(nkeys, NKEYS - 1, "nkeys after delete");
    check_get(info, keys[7], NULL, "deleted key");
    key_value(8, 0, val);
    check_get(info, keys[8], val, "other keys survive a delete");
    PLX_CHECK_ERR(MPI_Info_delete(info, keys[7]), MPI_ERR_INFO_NOKEY);
    PLX_CHECK_ERR(MPI_Info_delete(info, "never_set"), MPI_ERR_INFO_NOKEY);
    {
        char rest[NKEYS][MPI_MAX_INFO_KEY + 1];
        int n = 0;
        for (int i = 0; i < NKEYS; i++)
            if (i != 7)
                strcpy(rest[n++], keys[i]);
        check_key_set(info, rest, n, order, "after delete");
    }

    /* Bad arguments. */
    {
        char longkey[2 * MPI_MAX_INFO_KEY + 2];
        char *longval = plx_malloc(2 * MPI_MAX_INFO_VAL + 2);
        char k[MPI_MAX_INFO_KEY + 1];
        memset(longkey, 'k', sizeof longkey - 1);
        longkey[sizeof longkey - 1] = '\0';
        memset(longval, 'v', 2 * MPI_MAX_INFO_VAL + 1);
        longval[2 * MPI_MAX_INFO_VAL + 1] = '\0';
        PLX_CHECK_ERR(MPI_Info_set(info, longkey, "v"), MPI_ERR_INFO_KEY);
        PLX_CHECK_ERR(MPI_Info_set(info, "k", longval), MPI_ERR_INFO_VALUE);
        /* The class for n out of range is not specified: MPICH says MPI_ERR_ARG,
         * Open MPI MPI_ERR_INFO_KEY. */
        for (int bad = -1; bad <= NKEYS + 5; bad += NKEYS + 6) {
            int rc = MPI_Info_get_nthkey(info, bad, k), cls = -1;
            MPI_Error_class(rc, &cls);
            PLX_CHECK(cls == MPI_ERR_ARG || cls == MPI_ERR_INFO_KEY,
                      "Info_get_nthkey(%d) of %d keys: class %d (expected MPI_ERR_ARG or MPI_ERR_INFO_KEY)", bad,
                      NKEYS - 1, cls);
        }
        PLX_CHECK_MPI(MPI_Info_get_nkeys(info, &nkeys));
        PLX_CHECK_EQ(nkeys, NKEYS - 1, "failed sets add no key");
        free(longval);
    }

    PLX_CHECK_MPI(MPI_Info_free(&dup));
    PLX_CHECK(dup == MPI_INFO_NULL, "Info_free sets MPI_INFO_NULL");
    key_value(9, 0, val);
    check_get(info, keys[9], val, "original survives freeing its dup");
    PLX_CHECK_MPI(MPI_Info_free(&info));

    /* Many infos and many keys. */
    {
        MPI_Info many[32];
        char k[32], v[64];
        for (int i = 0; i < 32; i++) {
            PLX_CHECK_MPI(MPI_Info_create(&many[i]));
            for (int j = 0; j <= i; j++) {
                snprintf(k, sizeof k, "k%d", j);
                snprintf(v, sizeof v, "%d:%d", i, j);
                PLX_CHECK_MPI(MPI_Info_set(many[i], k, v));
            }
        }
        for (int i = 31; i >= 0; i--) {
            PLX_CHECK_MPI(MPI_Info_get_nkeys(many[i], &nkeys));
            PLX_CHECK_EQ(nkeys, i + 1, "nkeys of one of many infos");
            snprintf(k, sizeof k, "k%d", i / 2);
            snprintf(v, sizeof v, "%d:%d", i, i / 2);
            check_get(many[i], k, v, "value in one of many infos");
            PLX_CHECK_MPI(MPI_Info_free(&many[i]));
        }
    }
    return plx_test_finish();
}
