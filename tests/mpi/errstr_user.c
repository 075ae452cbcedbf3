/*
 * errstr_user.c - MPI_Error_string of an error class or code added with
 * MPI_Add_error_class / MPI_Add_error_code and no string set is the empty
 * string (MPI-3.1 8.5); once MPI_Add_error_string sets one it is returned, and
 * the class of a user code is the user class.
 */
#include "plx_test.h"

int main(int argc, char **argv)
{
    plx_test_init(&argc, &argv, "errstr_user");
    int cls, code, code2, c, len = -1;
    char s[MPI_MAX_ERROR_STRING];

    PLX_CHECK_MPI(MPI_Add_error_class(&cls));
    PLX_CHECK_MPI(MPI_Add_error_code(cls, &code));
    PLX_CHECK_MPI(MPI_Add_error_code(cls, &code2));

    memset(s, 'x', sizeof s);
    PLX_CHECK_MPI(MPI_Error_string(cls, s, &len));
    PLX_CHECK_STR(s, "", "string of a new user class");
    PLX_CHECK_EQ(len, 0, "length of the string of a new user class");

    memset(s, 'x', sizeof s);
    len = -1;
    PLX_CHECK_MPI(MPI_Error_string(code, s, &len));
    PLX_CHECK_STR(s, "", "string of a new user code");
    PLX_CHECK_EQ(len, 0, "length of the string of a new user code");

    PLX_CHECK_MPI(MPI_Add_error_string(code, "the flux capacitor is empty"));
    PLX_CHECK_MPI(MPI_Error_string(code, s, &len));
    PLX_CHECK_STR(s, "the flux capacitor is empty", "string set on the code");
    PLX_CHECK_EQ(len, (int)strlen("the flux capacitor is empty"), "its length");
    PLX_CHECK_MPI(MPI_Error_string(code2, s, &len));
    PLX_CHECK_STR(s, "", "the other code of the class keeps the empty string");
    PLX_CHECK_MPI(MPI_Error_string(cls, s, &len));
    PLX_CHECK_STR(s, "", "the class keeps the empty string");
    PLX_CHECK_MPI(MPI_Add_error_string(cls, "class text"));
    PLX_CHECK_MPI(MPI_Error_string(cls, s, &len));
    PLX_CHECK_STR(s, "class text", "string set on the class");

    PLX_CHECK_MPI(MPI_Error_class(code, &c));
    PLX_CHECK_EQ(c, cls, "class of the user code");
    return plx_test_finish();
}
