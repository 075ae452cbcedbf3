/*
 * pmi_ring: exercises the PMI-1 client (src/pm/pmi1.c) alone, without the
 * rest of the library, so the launcher tests run even while libmpi is being
 * written, and the same binary runs under our mpiexec, under MPICH's
 * mpiexec.hydra and as a singleton.
 *
 * Usage: pmi_ring [MODE [VICTIM [CODE]]] [ignored...]
 *   ok        (default) put / fence / get across all ranks, checks every value,
 *             then finalize; prints "pmi_ring: rank R of S ok ..." and exits 0
 *   info      init, print "pmi_ring: info rank=R size=S appnum=A universe=U
 *             kvsname=K singleton=B", finalize
 *   abort     rank VICTIM calls plx_pm_abort(CODE) after the first fence
 *   exit      rank VICTIM exits with CODE after the first fence, no finalize
 *   kill      rank VICTIM kills itself with SIGKILL after the first fence
 *   close     rank VICTIM closes its PMI socket and sleeps
 *   late-exit every rank finalizes, then VICTIM exits with CODE
 *   hang      rank VICTIM never enters the second fence (the others wait)
 * In the failure modes every other rank blocks in a fence that can never
 * complete, so it ends only if the launcher kills it.
 * Extra arguments are ignored (tests add a unique marker for pgrep).
 * Exit status 0 only when every check passed.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pm/pm.h"

static int failures;

#define CHECK(cond, ...)                                                   \
    do {                                                                   \
        if (!(cond)) {                                                     \
            fprintf(stderr, "pmi_ring: rank %d: check failed: ", g_rank);   \
            fprintf(stderr, __VA_ARGS__);                                  \
            fputc('\n', stderr);                                           \
            failures++;                                                    \
        }                                                                  \
    } while (0)

static int g_rank = -1;

static void big_value(char *buf, size_t len, int rank)
{
    /* 1000 characters that depend on the rank, including '=' */
    for (size_t i = 0; i + 1 < len && i < 1000; i++)
        buf[i] = (char)('a' + (int)((i * 7 + (size_t)rank) % 26));
    buf[len < 1001 ? len - 1 : 1000] = '\0';
    buf[10] = '=';
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "ok";
    int victim = argc > 2 ? atoi(argv[2]) : 1;
    int code = argc > 3 ? atoi(argv[3]) : 3;
    struct plx_pm_info info;
    char key[PLX_PM_MAX_KEY], val[PLX_PM_MAX_VAL], want[PLX_PM_MAX_VAL];
    plx_status_t st;

    setvbuf(stdout, NULL, _IOLBF, 0);
    st = plx_pm_init(&info);
    if (st != PLX_OK) {
        fprintf(stderr, "pmi_ring: plx_pm_init failed (%d)\n", (int)st);
        return 2;
    }
    g_rank = info.rank;

    if (strcmp(mode, "info") == 0) {
        printf("pmi_ring: info rank=%d size=%d appnum=%d universe=%d kvsname=%s singleton=%d\n",
               info.rank, info.size, info.appnum, info.universe_size, info.kvsname,
               info.singleton);
        return plx_pm_finalize() == PLX_OK ? 0 : 1;
    }

    /* What the launcher told us must match its environment (when set). */
    if (getenv("PMI_RANK") != NULL && !info.singleton) {
        CHECK(info.rank == atoi(getenv("PMI_RANK")), "rank %d != PMI_RANK", info.rank);
        CHECK(info.size == atoi(getenv("PMI_SIZE")), "size %d != PMI_SIZE", info.size);
    }
    CHECK(info.size >= 1 && info.rank >= 0 && info.rank < info.size, "rank %d size %d",
          info.rank, info.size);
    CHECK(info.kvsname[0] != '\0', "empty kvsname");
    CHECK(info.universe_size >= info.size, "universe %d < size %d", info.universe_size,
          info.size);

    /* round 1 */
    snprintf(key, sizeof(key), "ring.%d", info.rank);
    snprintf(val, sizeof(val), "v%d.%s", info.rank, info.kvsname);
    CHECK(plx_pm_put(key, val) == PLX_OK, "put %s", key);
    snprintf(key, sizeof(key), "big.%d", info.rank);
    big_value(val, sizeof(val), info.rank);
    CHECK(plx_pm_put(key, val) == PLX_OK, "put %s (1000 chars)", key);
    CHECK(plx_pm_put("bad key", "x") == PLX_ERR_ARG, "a key with a space must be refused");
    CHECK(plx_pm_put("badval", "x y") == PLX_ERR_ARG, "a value with a space must be refused");
    CHECK(plx_pm_fence() == PLX_OK, "fence 1");

    if (info.rank == victim) {
        if (strcmp(mode, "abort") == 0) {
            plx_pm_abort(code, "pmi_ring test abort");
        } else if (strcmp(mode, "exit") == 0) {
            fprintf(stderr, "pmi_ring: rank %d exiting with %d without finalize\n", info.rank,
                    code);
            exit(code);
        } else if (strcmp(mode, "kill") == 0) {
            raise(SIGKILL);
        } else if (strcmp(mode, "close") == 0) {
            close(atoi(getenv("PMI_FD")));
            sleep(60);
            return 0;
        } else if (strcmp(mode, "hang") == 0) {
            sleep(600);
            return 0;
        }
    }
    if (strcmp(mode, "ok") != 0 && strcmp(mode, "late-exit") != 0) {
        /* Failure modes: wait for a fence the victim never joins. */
        plx_pm_fence();
        fprintf(stderr, "pmi_ring: rank %d: the fence completed, it should not have\n",
                info.rank);
        return 1;
    }

    int npeers = info.size <= 64 ? info.size : 2;
    for (int i = 0; i < npeers; i++) {
        int p = info.size <= 64 ? i : (info.rank + (i == 0 ? 1 : info.size - 1)) % info.size;
        snprintf(key, sizeof(key), "ring.%d", p);
        snprintf(want, sizeof(want), "v%d.%s", p, info.kvsname);
        st = plx_pm_get(key, val, sizeof(val));
        CHECK(st == PLX_OK && strcmp(val, want) == 0, "get %s: st=%d val=%s want=%s", key,
              (int)st, st == PLX_OK ? val : "-", want);
    }
    int right = (info.rank + 1) % info.size;
    snprintf(key, sizeof(key), "big.%d", right);
    big_value(want, sizeof(want), right);
    st = plx_pm_get(key, val, sizeof(val));
    CHECK(st == PLX_OK && strcmp(val, want) == 0, "get %s (1000 chars): st=%d len=%zu", key,
          (int)st, st == PLX_OK ? strlen(val) : 0);
    char small[16];
    CHECK(plx_pm_get(key, small, sizeof(small)) == PLX_ERR_TRUNCATE,
          "a 1000-char value into 16 bytes must be PLX_ERR_TRUNCATE");
    CHECK(plx_pm_get("no.such.key", val, sizeof(val)) == PLX_ERR_ARG,
          "a missing key must be PLX_ERR_ARG");

    /* round 2: an overwritten key (after a fence: every rank read round 1) */
    CHECK(plx_pm_fence() == PLX_OK, "fence 2");
    snprintf(key, sizeof(key), "ring.%d", info.rank);
    snprintf(val, sizeof(val), "second-%d", info.rank);
    CHECK(plx_pm_put(key, val) == PLX_OK, "re-put %s", key);
    CHECK(plx_pm_fence() == PLX_OK, "fence 3");
    int left = (info.rank + info.size - 1) % info.size;
    snprintf(key, sizeof(key), "ring.%d", left);
    snprintf(want, sizeof(want), "second-%d", left);
    st = plx_pm_get(key, val, sizeof(val));
    CHECK(st == PLX_OK && strcmp(val, want) == 0, "round 2 get %s: st=%d val=%s", key, (int)st,
          st == PLX_OK ? val : "-");

    CHECK(plx_pm_finalize() == PLX_OK, "finalize");
    if (failures == 0)
        printf("pmi_ring: rank %d of %d ok kvsname=%s appnum=%d\n", info.rank, info.size,
               info.kvsname, info.appnum);
    if (strcmp(mode, "late-exit") == 0 && info.rank == victim)
        return code;
    return failures == 0 ? 0 : 1;
}
