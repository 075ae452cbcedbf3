/*
 * attr.c - communicator attributes and their callbacks.
 *
 * Copy callbacks run on Comm_dup and decide whether the attribute is copied;
 * MPI_COMM_NULL_COPY_FN never copies, MPI_COMM_DUP_FN copies the value; delete
 * callbacks run on Comm_delete_attr, Comm_free and when Comm_set_attr overwrites,
 * and for MPI_COMM_SELF attributes at the start of MPI_Finalize (MPI-3.1 8.7.1).
 * Also the MPI-1 names (Keyval_create, Attr_put/get/delete, Keyval_free).
 */
#include "plx_test.h"

static int rank, size;

struct calls {
    int copies, deletes;
    MPI_Comm last_comm;     /* comm argument of the last callback */
    intptr_t last_val;      /* attribute value of the last delete */
    int last_keyval;
    int bad_extra;          /* extra_state was not what was registered */
};
static struct calls cb;
static int extra_token = 4242;

/* Copies, adding 1000 to the value, so a copy is distinguishable from the original. */
static int copy_plus(MPI_Comm old, int keyval, void *extra, void *in, void *out, int *flag)
{
    cb.copies++;
    cb.last_comm = old;
    cb.last_keyval = keyval;
    if (extra != &extra_token)
        cb.bad_extra++;
    *(void **)out = (void *)((intptr_t)in + 1000);
    *flag = 1;
    return MPI_SUCCESS;
}

/* Declines to copy. */
static int copy_never(MPI_Comm old, int keyval, void *extra, void *in, void *out, int *flag)
{
    cb.copies++;
    *flag = 0;
    return MPI_SUCCESS;
}

static int delete_record(MPI_Comm comm, int keyval, void *val, void *extra)
{
    cb.deletes++;
    cb.last_comm = comm;
    cb.last_val = (intptr_t)val;
    cb.last_keyval = keyval;
    if (extra != &extra_token)
        cb.bad_extra++;
    return MPI_SUCCESS;
}

/* MPI-1 style callbacks have the same shape with MPI_Comm and int keyval. */
static int copy_plus1(MPI_Comm old, int keyval, void *extra, void *in, void *out, int *flag)
{
    return copy_plus(old, keyval, extra, in, out, flag);
}

static int delete_record1(MPI_Comm comm, int keyval, void *val, void *extra)
{
    return delete_record(comm, keyval, val, extra);
}

static intptr_t get_attr(MPI_Comm c, int key, int *flag)
{
    void *v = NULL;
    *flag = -1;
    PLX_CHECK_MPI(MPI_Comm_get_attr(c, key, &v, flag));
    return (intptr_t)v;
}

static void test_copy_delete(void)
{
    int kplus, knull, kdup, knever, flag;
    MPI_Comm parent, child;
    intptr_t v;

    PLX_CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &parent));
    PLX_CHECK_MPI(MPI_Comm_create_keyval(copy_plus, delete_record, &kplus, &extra_token));
    PLX_CHECK_MPI(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, delete_record, &knull, &extra_token));
    PLX_CHECK_MPI(MPI_Comm_create_keyval(MPI_COMM_DUP_FN, MPI_COMM_NULL_DELETE_FN, &kdup, NULL));
    PLX_CHECK_MPI(MPI_Comm_create_keyval(copy_never, MPI_COMM_NULL_DELETE_FN, &knever, NULL));
    PLX_CHECK(kplus != knull && kplus != kdup && knull != kdup && knever != kdup,
              "keyvals are distinct");

    /* Not set yet: flag false. */
    (void)get_attr(parent, kplus, &flag);
    PLX_CHECK_EQ(flag, 0, "Comm_get_attr of an unset keyval");

    PLX_CHECK_MPI(MPI_Comm_set_attr(parent, kplus, (void *)(intptr_t)(10 + rank)));
    PLX_CHECK_MPI(MPI_Comm_set_attr(parent, knull, (void *)(intptr_t)20));
    PLX_CHECK_MPI(MPI_Comm_set_attr(parent, kdup, (void *)(intptr_t)30));
    PLX_CHECK_MPI(MPI_Comm_set_attr(parent, knever, (void *)(intptr_t)40));
    v = get_attr(parent, kplus, &flag);
    PLX_CHECK_EQ(flag, 1, "Comm_get_attr after set: flag");
    PLX_CHECK_EQ(v, 10 + rank, "Comm_get_attr after set: value");
    PLX_CHECK_EQ(cb.deletes, 0, "no delete callback on first set");

    /* Overwrite: the delete callback sees the old value. */
    PLX_CHECK_MPI(MPI_Comm_set_attr(parent, kplus, (void *)(intptr_t)(50 + rank)));
    PLX_CHECK_EQ(cb.deletes, 1, "delete callback on overwrite");
    PLX_CHECK_EQ(cb.last_val, 10 + rank, "delete callback on overwrite gets the old value");
    PLX_CHECK(cb.last_comm == parent, "delete callback on overwrite gets the communicator");
    PLX_CHECK_EQ(cb.last_keyval, kplus, "delete callback gets the keyval");
    v = get_attr(parent, kplus, &flag);
    PLX_CHECK_EQ(v, 50 + rank, "value after overwrite");

    /* Dup: kplus copied (+1000), knull not, kdup same value, knever not. */
    cb.copies = 0;
    PLX_CHECK_MPI(MPI_Comm_dup(parent, &child));
    PLX_CHECK_EQ(cb.copies, 2, "copy callbacks run once per attribute with a user copy fn");
    v = get_attr(child, kplus, &flag);
    PLX_CHECK_EQ(flag, 1, "attribute copied when the copy callback sets flag");
    PLX_CHECK_EQ(v, 1050 + rank, "copied value is what the callback produced");
    (void)get_attr(child, knull, &flag);
    PLX_CHECK_EQ(flag, 0, "MPI_COMM_NULL_COPY_FN: not copied");
    v = get_attr(child, kdup, &flag);
    PLX_CHECK_EQ(flag, 1, "MPI_COMM_DUP_FN: copied");
    PLX_CHECK_EQ(v, 30, "MPI_COMM_DUP_FN: same value");
    (void)get_attr(child, knever, &flag);
    PLX_CHECK_EQ(flag, 0, "copy callback returning flag 0: not copied");
    v = get_attr(parent, kplus, &flag);
    PLX_CHECK_EQ(v, 50 + rank, "parent's value unchanged by the dup");

    /* Attributes are per communicator. */
    PLX_CHECK_MPI(MPI_Comm_set_attr(child, kdup, (void *)(intptr_t)31));
    v = get_attr(parent, kdup, &flag);
    PLX_CHECK_EQ(v, 30, "setting on the child leaves the parent's value");

    /* Delete explicitly: callback with value; then absent. */
    cb.deletes = 0;
    PLX_CHECK_MPI(MPI_Comm_delete_attr(child, kplus));
    PLX_CHECK_EQ(cb.deletes, 1, "delete callback on Comm_delete_attr");
    PLX_CHECK_EQ(cb.last_val, 1050 + rank, "Comm_delete_attr: callback gets the value");
    PLX_CHECK(cb.last_comm == child, "Comm_delete_attr: callback gets the communicator");
    (void)get_attr(child, kplus, &flag);
    PLX_CHECK_EQ(flag, 0, "attribute gone after Comm_delete_attr");

    /* Free the keyval while attributes still use it: they stay usable. */
    {
        int kp = kplus;
        PLX_CHECK_MPI(MPI_Comm_free_keyval(&kplus));
        PLX_CHECK_EQ(kplus, MPI_KEYVAL_INVALID, "Comm_free_keyval sets MPI_KEYVAL_INVALID");
        v = get_attr(parent, kp, &flag);
        PLX_CHECK_EQ(flag, 1, "attribute readable after its keyval is freed");
        PLX_CHECK_EQ(v, 50 + rank, "value readable after its keyval is freed");

        /* Free the parent: delete callbacks for kplus and knull (kdup has the null one). */
        cb.deletes = 0;
        PLX_CHECK_MPI(MPI_Comm_free(&parent));
        PLX_CHECK_EQ(cb.deletes, 2, "Comm_free runs the delete callback of each attribute");
    }
    PLX_CHECK_EQ(cb.bad_extra, 0, "extra_state passed to every callback");

    /* Freeing the child runs nothing (its remaining attributes have null delete fns). */
    cb.deletes = 0;
    PLX_CHECK_MPI(MPI_Comm_free(&child));
    PLX_CHECK_EQ(cb.deletes, 0, "no delete callback for attributes with MPI_COMM_NULL_DELETE_FN");
    PLX_CHECK_MPI(MPI_Comm_free_keyval(&knull));
    PLX_CHECK_MPI(MPI_Comm_free_keyval(&kdup));
    PLX_CHECK_MPI(MPI_Comm_free_keyval(&knever));
}

/* Attributes on WORLD and SELF, pointer-valued. */
static void test_pointer_values(void)
{
    int key, flag = -1;
    static double payload[4] = {1.5, 2.5, 3.5, 4.5};
    double *p = NULL;

    PLX_CHECK_MPI(MPI_Comm_create_keyval(MPI_COMM_DUP_FN, MPI_COMM_NULL_DELETE_FN, &key, NULL));
    PLX_CHECK_MPI(MPI_Comm_set_attr(MPI_COMM_WORLD, key, payload));
    PLX_CHECK_MPI(MPI_Comm_get_attr(MPI_COMM_WORLD, key, &p, &flag));
    PLX_CHECK(flag == 1 && p == payload, "pointer attribute round trip on WORLD");
    PLX_CHECK(p[2] == 3.5, "pointer attribute points at the data");
    p = NULL;
    PLX_CHECK_MPI(MPI_Comm_get_attr(MPI_COMM_SELF, key, &p, &flag));
    PLX_CHECK_EQ(flag, 0, "attribute set on WORLD is not on SELF");
    PLX_CHECK_MPI(MPI_Comm_delete_attr(MPI_COMM_WORLD, key));
    PLX_CHECK_MPI(MPI_Comm_get_attr(MPI_COMM_WORLD, key, &p, &flag));
    PLX_CHECK_EQ(flag, 0, "deleted from WORLD");
    PLX_CHECK_MPI(MPI_Comm_free_keyval(&key));

    /* Many keyvals on one communicator. */
    {
        int keys[64];
        MPI_Comm c;
        for (int i = 0; i < 64; i++) {
            PLX_CHECK_MPI(MPI_Comm_create_keyval(MPI_COMM_DUP_FN, MPI_COMM_NULL_DELETE_FN, &keys[i], NULL));
            PLX_CHECK_MPI(MPI_Comm_set_attr(MPI_COMM_WORLD, keys[i], (void *)(intptr_t)(i * 3 + 1)));
        }
        PLX_CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &c));
        for (int i = 63; i >= 0; i--) {
            void *v = NULL;
            PLX_CHECK_MPI(MPI_Comm_get_attr(c, keys[i], &v, &flag));
            PLX_CHECK(flag == 1 && (intptr_t)v == i * 3 + 1, "attribute %d of 64 copied (flag %d, value %ld)",
                      i, flag, (long)(intptr_t)v);
            PLX_CHECK_MPI(MPI_Comm_delete_attr(MPI_COMM_WORLD, keys[i]));
            PLX_CHECK_MPI(MPI_Comm_free_keyval(&keys[i]));
        }
        PLX_CHECK_MPI(MPI_Comm_free(&c));
    }
}

/* The MPI-1 names are deprecated; some mpi.h files (Open MPI's) mark them so. */
#if defined(__GNUC__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
#endif
static void test_mpi1_names(void)
{
    int key, flag = -1;
    MPI_Comm c;
    void *v = NULL;

    cb.copies = cb.deletes = 0;
    PLX_CHECK_MPI(MPI_Keyval_create(copy_plus1, delete_record1, &key, &extra_token));
    PLX_CHECK_MPI(MPI_Attr_put(MPI_COMM_WORLD, key, (void *)(intptr_t)7));
    PLX_CHECK_MPI(MPI_Attr_get(MPI_COMM_WORLD, key, &v, &flag));
    PLX_CHECK(flag == 1 && (intptr_t)v == 7, "Attr_get after Attr_put (flag %d)", flag);
    PLX_CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &c));
    PLX_CHECK_EQ(cb.copies, 1, "MPI-1 copy callback on dup");
    PLX_CHECK_MPI(MPI_Attr_get(c, key, &v, &flag));
    PLX_CHECK(flag == 1 && (intptr_t)v == 1007, "MPI-1 attribute copied (value %ld)", (long)(intptr_t)v);
    PLX_CHECK_MPI(MPI_Attr_delete(c, key));
    PLX_CHECK_EQ(cb.deletes, 1, "MPI-1 delete callback on Attr_delete");
    PLX_CHECK_EQ(cb.last_val, 1007, "MPI-1 delete callback value");
    PLX_CHECK_MPI(MPI_Attr_delete(MPI_COMM_WORLD, key));
    PLX_CHECK_EQ(cb.deletes, 2, "MPI-1 delete callback on WORLD");
    PLX_CHECK_MPI(MPI_Comm_free(&c));
    PLX_CHECK_MPI(MPI_Keyval_free(&key));
    PLX_CHECK_EQ(key, MPI_KEYVAL_INVALID, "Keyval_free sets MPI_KEYVAL_INVALID");

    /* MPI_NULL_COPY_FN / MPI_DUP_FN / MPI_NULL_DELETE_FN */
    {
        int kn, kd;
        PLX_CHECK_MPI(MPI_Keyval_create(MPI_NULL_COPY_FN, MPI_NULL_DELETE_FN, &kn, NULL));
        PLX_CHECK_MPI(MPI_Keyval_create(MPI_DUP_FN, MPI_NULL_DELETE_FN, &kd, NULL));
        PLX_CHECK_MPI(MPI_Attr_put(MPI_COMM_WORLD, kn, (void *)(intptr_t)1));
        PLX_CHECK_MPI(MPI_Attr_put(MPI_COMM_WORLD, kd, (void *)(intptr_t)2));
        PLX_CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &c));
        PLX_CHECK_MPI(MPI_Attr_get(c, kn, &v, &flag));
        PLX_CHECK_EQ(flag, 0, "MPI_NULL_COPY_FN: not copied");
        PLX_CHECK_MPI(MPI_Attr_get(c, kd, &v, &flag));
        PLX_CHECK(flag == 1 && (intptr_t)v == 2, "MPI_DUP_FN: copied");
        PLX_CHECK_MPI(MPI_Comm_free(&c));
        PLX_CHECK_MPI(MPI_Attr_delete(MPI_COMM_WORLD, kn));
        PLX_CHECK_MPI(MPI_Attr_delete(MPI_COMM_WORLD, kd));
        PLX_CHECK_MPI(MPI_Keyval_free(&kn));
        PLX_CHECK_MPI(MPI_Keyval_free(&kd));
    }
}
#if defined(__GNUC__)
#pragma GCC diagnostic pop
#endif

/* Errors: predefined keyvals are read-only, invalid keyvals are rejected. */
static void test_errors(void)
{
    int *ub = NULL, flag = -1, before, rc;

    PLX_CHECK_MPI(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    PLX_CHECK_MPI(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &ub, &flag));
    before = *ub;
    /* Changing a predefined attribute is erroneous (MPI-3.1 8.1.2); the class is not
     * specified (MPICH: MPI_ERR_KEYVAL, Open MPI: MPI_ERR_OTHER). */
    rc = MPI_Comm_set_attr(MPI_COMM_WORLD, MPI_TAG_UB, (void *)(intptr_t)5);
    PLX_CHECK(rc != MPI_SUCCESS, "Comm_set_attr of MPI_TAG_UB fails");
    rc = MPI_Comm_delete_attr(MPI_COMM_WORLD, MPI_TAG_UB);
    PLX_CHECK(rc != MPI_SUCCESS, "Comm_delete_attr of MPI_TAG_UB fails");
    PLX_CHECK_MPI(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &ub, &flag));
    PLX_CHECK(flag == 1 && *ub == before, "MPI_TAG_UB unchanged after the failed calls");
    if (plx_lib_is("Open MPI")) /* Open MPI 4.1 answers MPI_ERR_OTHER */
        PLX_CHECK(MPI_Comm_set_attr(MPI_COMM_WORLD, MPI_KEYVAL_INVALID, NULL) != MPI_SUCCESS,
                  "Comm_set_attr with MPI_KEYVAL_INVALID fails");
    else
        PLX_CHECK_ERR(MPI_Comm_set_attr(MPI_COMM_WORLD, MPI_KEYVAL_INVALID, NULL), MPI_ERR_KEYVAL);
    PLX_CHECK_MPI(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
}

/* Attributes on MPI_COMM_SELF are deleted when MPI_Finalize starts, while MPI still works. */
static int finalize_seen;
static int self_delete(MPI_Comm comm, int keyval, void *val, void *extra)
{
    int fin = -1;
    MPI_Finalized(&fin);
    if (comm == MPI_COMM_SELF && (intptr_t)val == 99 && fin == 0)
        finalize_seen++;
    return MPI_SUCCESS;
}

int main(int argc, char **argv)
{
    int self_key;

    plx_test_init(&argc, &argv, "attr");
    rank = plx_test_state()->rank;
    size = plx_test_state()->size;

    test_copy_delete();
    test_pointer_values();
    test_mpi1_names();
    test_errors();

    PLX_CHECK_MPI(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, self_delete, &self_key, NULL));
    PLX_CHECK_MPI(MPI_Comm_set_attr(MPI_COMM_SELF, self_key, (void *)(intptr_t)99));
    PLX_CHECK_EQ(finalize_seen, 0, "SELF attribute not deleted before Finalize");

    plx_test_report();
    MPI_Finalize();
    PLX_CHECK_EQ(finalize_seen, 1, "MPI_Finalize deletes MPI_COMM_SELF attributes first");
    if (rank == 0)
        printf("attr: MPI_COMM_SELF attribute deleted by MPI_Finalize\n");
    return 0;
}
