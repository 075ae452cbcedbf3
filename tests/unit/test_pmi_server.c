/*
 * test_pmi_server.c - tests tools/mpiexec/pmi_server.c against what a
 * stranger on PMI_FD can send (issue 19, found by tests/fuzz/fuzz_pmi_server):
 * a flood of unknown commands gives one reply each but at most a few warning
 * lines on mpiexec's stderr, whose text has no control bytes (no terminal
 * escape sequences); a real rank's lines still get their answers.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../tools/mpiexec/pmi_server.h"
#include "test_util.h"

static int nreplies;
static char last[2048];

static int t_send(void *ctx, int rank, const char *buf, size_t len)
{
    (void)ctx, (void)rank;
    nreplies++;
    snprintf(last, sizeof last, "%.*s", (int)len, buf);
    return 0;
}
static void t_abort(void *ctx, int rank, int code, const char *msg)
{
    (void)ctx, (void)rank, (void)code, (void)msg;
}
static void t_error(void *ctx, int rank, const char *what)
{
    (void)ctx, (void)rank, (void)what;
}

int main(void)
{
    static const int appnum[2] = {0, 0};
    const struct plx_pmisrv_cfg cfg = {.size = 2, .universe_size = 2, .appnum = appnum, .kvsname = "kvs"};
    const struct plx_pmisrv_ops ops = {t_send, t_abort, t_error, NULL};
    struct plx_pmisrv *srv = plx_pmisrv_create(&cfg, &ops, NULL);
    T_CHECK(srv != NULL, "create");

    /* stderr into a file for the duration */
    char path[] = "/tmp/plx_test_pmi_XXXXXX";
    int fd = mkstemp(path), saved = dup(2);
    unlink(path);
    fflush(stderr);
    dup2(fd, 2);
    for (int i = 0; i < 1000; i++) {
        char line[64];
        snprintf(line, sizeof line, "cmd=bogus\x1b[31m%d\n", i);
        plx_pmisrv_input(srv, 1, line, strlen(line));
    }
    plx_pmisrv_input(srv, 1, "mcmd=spawn\nendcmd\nmcmd=spawn\nendcmd\n", 36);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);

    char out[65536];
    ssize_t n = pread(fd, out, sizeof out - 1, 0);
    close(fd);
    out[n > 0 ? n : 0] = '\0';
    int lines = 0, ctl = 0;
    for (ssize_t i = 0; i < n; i++) {
        lines += out[i] == '\n';
        ctl += out[i] != '\n' && (unsigned char)out[i] < 0x20;
    }
    T_CHECK(nreplies == 1002, "every command is answered (got %d replies)", nreplies);
    T_CHECK(lines == 4, "3 warnings and one 'not shown' line for 1002 bad commands (got %d lines:\n%s)", lines,
            out);
    T_CHECK(ctl == 0, "no control bytes reach stderr (%d found)", ctl);
    T_CHECK(strstr(out, "not shown") != NULL, "says that further warnings are not shown");

    /* rank 0 is unaffected */
    nreplies = 0;
    plx_pmisrv_input(srv, 0, "cmd=init pmi_version=1 pmi_subversion=1\ncmd=get_maxes\n", 55);
    T_CHECK(nreplies == 2, "rank 0's init and get_maxes answered (%d)", nreplies);
    T_CHECK(strstr(last, "cmd=maxes") != NULL, "get_maxes answer: %s", last);
    plx_pmisrv_destroy(srv);
    T_DONE("pmi_server");
}
