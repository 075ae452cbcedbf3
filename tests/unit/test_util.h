/* Minimal checks for the unit tests: count, print what failed, exit code. */
#ifndef PLX_TEST_UTIL_H
#define PLX_TEST_UTIL_H

#include <stdio.h>

static int plx_t_checks, plx_t_failed;

#define T_CHECK(cond, ...)                                                  \
    do {                                                                    \
        plx_t_checks++;                                                     \
        if (!(cond)) {                                                      \
            plx_t_failed++;                                                 \
            fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond); \
            fprintf(stderr, __VA_ARGS__);                                   \
            fprintf(stderr, "\n");                                          \
        }                                                                   \
    } while (0)

#define T_DONE(name)                                                        \
    do {                                                                    \
        printf("%s: %d checks, %d failed\n", name, plx_t_checks, plx_t_failed); \
        return plx_t_failed ? 1 : 0;                                        \
    } while (0)

#endif
