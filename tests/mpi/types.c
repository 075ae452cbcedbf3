/*
 * types.c - predefined datatypes and status helpers.
 *
 * Type_size(_x), Type_get_extent(_x), Type_get_true_extent(_x) of the basic types
 * against C's sizeof, and of the pair types (MPI_DOUBLE_INT, ...) against the C
 * structs they describe (size without padding, extent with it); names of
 * predefined types, renaming one; a pair-type message to self (Get_count counts
 * pairs, Get_elements counts basic elements); Status_set_elements(_x) on basic
 * types (for pair types MPICH 4.0 reads the count as pairs, MPI-3.1 as elements).
 */
#include "plx_test.h"

#include <stddef.h>
#include <wchar.h>

struct tdesc {
    MPI_Datatype t;
    const char *name; /* NULL: do not check the name */
    size_t size;
};

static void check_type(MPI_Datatype t, const char *name, size_t size, size_t extent, size_t true_extent)
{
    int sz = -1;
    MPI_Count szx = -1, lbx = -1, extx = -1, tlbx = -1, textx = -1;
    MPI_Aint lb = -1, ext = -1, tlb = -1, text = -1;

    PLX_CHECK_MPI(MPI_Type_size(t, &sz));
    PLX_CHECK(sz == (int)size, "Type_size(%s) (got %d, expected %zu)", name, sz, size);
    PLX_CHECK_MPI(MPI_Type_size_x(t, &szx));
    PLX_CHECK(szx == (MPI_Count)size, "Type_size_x(%s) (got %lld)", name, (long long)szx);
    PLX_CHECK_MPI(MPI_Type_get_extent(t, &lb, &ext));
    PLX_CHECK(lb == 0 && ext == (MPI_Aint)extent, "Type_get_extent(%s) (got lb %ld extent %ld, expected 0 %zu)", name,
              (long)lb, (long)ext, extent);
    PLX_CHECK_MPI(MPI_Type_get_extent_x(t, &lbx, &extx));
    PLX_CHECK(lbx == 0 && extx == (MPI_Count)extent, "Type_get_extent_x(%s) (got %lld %lld)", name, (long long)lbx,
              (long long)extx);
    PLX_CHECK_MPI(MPI_Type_get_true_extent(t, &tlb, &text));
    PLX_CHECK(tlb == 0 && text == (MPI_Aint)true_extent,
              "Type_get_true_extent(%s) (got lb %ld extent %ld, expected 0 %zu)", name, (long)tlb, (long)text,
              true_extent);
    PLX_CHECK_MPI(MPI_Type_get_true_extent_x(t, &tlbx, &textx));
    PLX_CHECK(tlbx == 0 && textx == (MPI_Count)true_extent, "Type_get_true_extent_x(%s)", name);
}

static void check_name(MPI_Datatype t, const char *name)
{
    char got[MPI_MAX_OBJECT_NAME];
    int len = -1;
    PLX_CHECK_MPI(MPI_Type_get_name(t, got, &len));
    PLX_CHECK_STR(got, name, "Type_get_name of a predefined type");
    PLX_CHECK_EQ(len, strlen(name), "Type_get_name length");
}

struct di { double a; int b; };
struct fi { float a; int b; };
struct li { long a; int b; };
struct si { short a; int b; };
struct ldi { long double a; int b; };

static void test_basic_types(void)
{
    const struct tdesc basic[] = {
        {MPI_CHAR, "MPI_CHAR", sizeof(char)},
        {MPI_SIGNED_CHAR, "MPI_SIGNED_CHAR", sizeof(signed char)},
        {MPI_UNSIGNED_CHAR, "MPI_UNSIGNED_CHAR", sizeof(unsigned char)},
        {MPI_BYTE, "MPI_BYTE", 1},
        {MPI_WCHAR, "MPI_WCHAR", sizeof(wchar_t)},
        {MPI_SHORT, "MPI_SHORT", sizeof(short)},
        {MPI_UNSIGNED_SHORT, "MPI_UNSIGNED_SHORT", sizeof(unsigned short)},
        {MPI_INT, "MPI_INT", sizeof(int)},
        {MPI_UNSIGNED, "MPI_UNSIGNED", sizeof(unsigned)},
        {MPI_LONG, "MPI_LONG", sizeof(long)},
        {MPI_UNSIGNED_LONG, "MPI_UNSIGNED_LONG", sizeof(unsigned long)},
        {MPI_LONG_LONG, NULL, sizeof(long long)}, /* alias of MPI_LONG_LONG_INT: either name */
        {MPI_UNSIGNED_LONG_LONG, "MPI_UNSIGNED_LONG_LONG", sizeof(unsigned long long)},
        {MPI_FLOAT, "MPI_FLOAT", sizeof(float)},
        {MPI_DOUBLE, "MPI_DOUBLE", sizeof(double)},
        {MPI_LONG_DOUBLE, "MPI_LONG_DOUBLE", sizeof(long double)},
        {MPI_C_BOOL, "MPI_C_BOOL", sizeof(_Bool)},
        {MPI_INT8_T, "MPI_INT8_T", 1},
        {MPI_INT16_T, "MPI_INT16_T", 2},
        {MPI_INT32_T, "MPI_INT32_T", 4},
        {MPI_INT64_T, "MPI_INT64_T", 8},
        {MPI_UINT8_T, "MPI_UINT8_T", 1},
        {MPI_UINT16_T, "MPI_UINT16_T", 2},
        {MPI_UINT32_T, "MPI_UINT32_T", 4},
        {MPI_UINT64_T, "MPI_UINT64_T", 8},
        {MPI_AINT, "MPI_AINT", sizeof(MPI_Aint)},
        {MPI_OFFSET, "MPI_OFFSET", sizeof(MPI_Offset)},
        {MPI_COUNT, "MPI_COUNT", sizeof(MPI_Count)},
        {MPI_PACKED, "MPI_PACKED", 1},
        {MPI_2INT, "MPI_2INT", 2 * sizeof(int)},
    };

    for (size_t i = 0; i < sizeof basic / sizeof basic[0]; i++) {
        const char *nm = basic[i].name ? basic[i].name : "MPI_LONG_LONG";
        check_type(basic[i].t, nm, basic[i].size, basic[i].size, basic[i].size);
        if (basic[i].name)
            check_name(basic[i].t, basic[i].name);
    }
    check_type(MPI_LONG_LONG_INT, "MPI_LONG_LONG_INT", sizeof(long long), sizeof(long long), sizeof(long long));

    /* Pair types: the size has no padding, the extent is the C struct's. */
    check_type(MPI_DOUBLE_INT, "MPI_DOUBLE_INT", sizeof(double) + sizeof(int), sizeof(struct di),
               offsetof(struct di, b) + sizeof(int));
    check_type(MPI_FLOAT_INT, "MPI_FLOAT_INT", sizeof(float) + sizeof(int), sizeof(struct fi),
               offsetof(struct fi, b) + sizeof(int));
    check_type(MPI_LONG_INT, "MPI_LONG_INT", sizeof(long) + sizeof(int), sizeof(struct li),
               offsetof(struct li, b) + sizeof(int));
    check_type(MPI_SHORT_INT, "MPI_SHORT_INT", sizeof(short) + sizeof(int), sizeof(struct si),
               offsetof(struct si, b) + sizeof(int));
    check_type(MPI_LONG_DOUBLE_INT, "MPI_LONG_DOUBLE_INT", sizeof(long double) + sizeof(int), sizeof(struct ldi),
               offsetof(struct ldi, b) + sizeof(int));
    check_name(MPI_DOUBLE_INT, "MPI_DOUBLE_INT");
    check_name(MPI_FLOAT_INT, "MPI_FLOAT_INT");
    check_name(MPI_SHORT_INT, "MPI_SHORT_INT");
}

static void test_rename(void)
{
    char got[MPI_MAX_OBJECT_NAME];
    int len;

    PLX_CHECK_MPI(MPI_Type_set_name(MPI_FLOAT, "plexus float"));
    PLX_CHECK_MPI(MPI_Type_get_name(MPI_FLOAT, got, &len));
    PLX_CHECK_STR(got, "plexus float", "renamed predefined type");
    check_name(MPI_DOUBLE, "MPI_DOUBLE");
    PLX_CHECK_MPI(MPI_Type_set_name(MPI_FLOAT, "MPI_FLOAT"));
    check_name(MPI_FLOAT, "MPI_FLOAT");
}

/* Pair types in a message: padding skipped, counts in pairs and in basic elements. */
static void test_pair_message(void)
{
    struct di out[3] = {{1.5, 10}, {-2.25, 20}, {1e100, -30}}, in[4];
    MPI_Request req;
    MPI_Status st;
    int cnt = -1;

    memset(in, 0x77, sizeof in);
    PLX_CHECK_MPI(MPI_Isend(out, 3, MPI_DOUBLE_INT, 0, 1, MPI_COMM_SELF, &req));
    PLX_CHECK_MPI(MPI_Recv(in, 4, MPI_DOUBLE_INT, 0, 1, MPI_COMM_SELF, &st));
    PLX_CHECK_MPI(MPI_Wait(&req, MPI_STATUS_IGNORE));
    for (int i = 0; i < 3; i++)
        PLX_CHECK(in[i].a == out[i].a && in[i].b == out[i].b, "MPI_DOUBLE_INT element %d (got %g %d)", i, in[i].a,
                  in[i].b);
    {
        unsigned char guard[sizeof(struct di)];
        memset(guard, 0x77, sizeof guard);
        PLX_CHECK(memcmp(&in[3], guard, sizeof guard) == 0, "element past the message untouched");
    }
    MPI_Get_count(&st, MPI_DOUBLE_INT, &cnt);
    PLX_CHECK_EQ(cnt, 3, "Get_count(MPI_DOUBLE_INT) counts pairs");
    MPI_Get_elements(&st, MPI_DOUBLE_INT, &cnt);
    if (!plx_lib_is("Open MPI")) /* Open MPI 4.1 counts pairs (3): MPI-3.1 5.9.4 defines the pair as a struct */
        PLX_CHECK_EQ(cnt, 6, "Get_elements(MPI_DOUBLE_INT) counts basic elements");
    MPI_Get_count(&st, MPI_BYTE, &cnt);
    PLX_CHECK_EQ(cnt, 3 * (sizeof(double) + sizeof(int)), "Get_count(MPI_BYTE) of 3 MPI_DOUBLE_INT");
}

static void test_status_set_elements(void)
{
    MPI_Status st;
    int cnt = -1;
    MPI_Count c = -1;

    memset(&st, 0, sizeof st);
    PLX_CHECK_MPI(MPI_Status_set_elements(&st, MPI_INT, 5));
    MPI_Get_count(&st, MPI_INT, &cnt);
    PLX_CHECK_EQ(cnt, 5, "Get_count after Status_set_elements(MPI_INT, 5)");
    MPI_Get_elements(&st, MPI_INT, &cnt);
    PLX_CHECK_EQ(cnt, 5, "Get_elements after Status_set_elements(MPI_INT, 5)");
    MPI_Get_count(&st, MPI_BYTE, &cnt);
    PLX_CHECK_EQ(cnt, 5 * sizeof(int), "Get_count(MPI_BYTE) after Status_set_elements(MPI_INT, 5)");
    MPI_Get_count(&st, MPI_DOUBLE, &cnt);
    if (5 * sizeof(int) % sizeof(double))
        PLX_CHECK_EQ(cnt, MPI_UNDEFINED, "Get_count(MPI_DOUBLE) of 5 ints");

    PLX_CHECK_MPI(MPI_Status_set_elements_x(&st, MPI_DOUBLE, 3));
    MPI_Get_elements_x(&st, MPI_DOUBLE, &c);
    PLX_CHECK_EQ(c, 3, "Get_elements_x after Status_set_elements_x(MPI_DOUBLE, 3)");
    MPI_Get_elements_x(&st, MPI_BYTE, &c);
    PLX_CHECK_EQ(c, 3 * sizeof(double), "Get_elements_x(MPI_BYTE)");

    PLX_CHECK_MPI(MPI_Status_set_elements(&st, MPI_BYTE, 7));
    MPI_Get_count(&st, MPI_INT, &cnt);
    PLX_CHECK_EQ(cnt, MPI_UNDEFINED, "Get_count(MPI_INT) of 7 bytes");
    MPI_Get_elements(&st, MPI_INT, &cnt);
    PLX_CHECK_EQ(cnt, MPI_UNDEFINED, "Get_elements(MPI_INT) of 7 bytes");

}

int main(int argc, char **argv)
{
    plx_test_init(&argc, &argv, "types");
    test_basic_types();
    test_rename();
    test_pair_message();
    test_status_set_elements();
    return plx_test_finish();
}
