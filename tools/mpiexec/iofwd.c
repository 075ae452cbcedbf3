/*
 * Line-by-line output forwarding (see iofwd.h).
 *
 * Writes to mpiexec's own stdout/stderr are blocking on purpose: if whoever
 * reads mpiexec's output is slow, the ranks are slowed down through their
 * pipes instead of mpiexec buffering without bound. A closed destination
 * (EPIPE) drops the output silently.
 */
#include "iofwd.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

void plx_iofwd_init(struct plx_iofwd *io, int fd, int dest_fd, int rank, int tag)
{
    io->fd = fd;
    io->fed = 0;
    io->dest_fd = dest_fd;
    io->rank = rank;
    io->tag = tag;
    io->at_line_start = 1;
    io->partial_since = 0;
    io->len = 0;
}

static void plx_iofwd_writev(int fd, struct iovec *iov, int cnt)
{
    while (cnt > 0) {
        ssize_t n = writev(fd, iov, cnt);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN) {  /* someone made our stdout non-blocking */
                struct pollfd pfd = { .fd = fd, .events = POLLOUT };
                (void)poll(&pfd, 1, 1000);
                continue;
            }
            return;                 /* EPIPE and friends: drop */
        }
        while (cnt > 0 && (size_t)n >= iov->iov_len) {
            n -= (ssize_t)iov->iov_len;
            iov++;
            cnt--;
        }
        if (cnt > 0) {
            iov->iov_base = (char *)iov->iov_base + n;
            iov->iov_len -= (size_t)n;
        }
    }
}

/* Forwards buf[0..len), prefixing each line when tagging. */
static void plx_iofwd_emit(struct plx_iofwd *io, const char *buf, size_t len)
{
    char prefix[32];
    struct iovec iov[2];

    if (len == 0)
        return;
    if (!io->tag) {
        iov[0].iov_base = (void *)buf;
        iov[0].iov_len = len;
        plx_iofwd_writev(io->dest_fd, iov, 1);
        io->at_line_start = buf[len - 1] == '\n';
        return;
    }
    /* One writev per line: prefix + line. */
    while (len > 0) {
        const char *nl = memchr(buf, '\n', len);
        size_t l = nl ? (size_t)(nl - buf) + 1 : len;
        int cnt = 0;
        if (io->at_line_start) {
            int pl = snprintf(prefix, sizeof(prefix), "[%d] ", io->rank);
            iov[cnt].iov_base = prefix;
            iov[cnt].iov_len = (size_t)pl;
            cnt++;
        }
        iov[cnt].iov_base = (void *)buf;
        iov[cnt].iov_len = l;
        cnt++;
        plx_iofwd_writev(io->dest_fd, iov, cnt);
        io->at_line_start = nl != NULL;
        buf += l;
        len -= l;
    }
}

/* Forwards every complete line held; keeps the partial rest. */
static void plx_iofwd_lines(struct plx_iofwd *io, double now)
{
    size_t end = io->len;

    while (end > 0 && io->buf[end - 1] != '\n')
        end--;
    if (end > 0) {
        plx_iofwd_emit(io, io->buf, end);
        memmove(io->buf, io->buf + end, io->len - end);
        io->len -= end;
        io->partial_since = 0;
    }
    if (io->len == sizeof(io->buf)) {     /* a line longer than the buffer */
        plx_iofwd_emit(io, io->buf, io->len);
        io->len = 0;
    }
    if (io->len > 0 && io->partial_since == 0)
        io->partial_since = now;
}

int plx_iofwd_pump(struct plx_iofwd *io, double now)
{
    /* Bounded: a rank that writes without pause must not starve the others
     * (or the PMI server) of mpiexec's attention. */
    for (int rounds = 0; io->fd >= 0 && rounds < 4; rounds++) {
        ssize_t n = read(io->fd, io->buf + io->len, sizeof(io->buf) - io->len);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN)
                return 1;
            n = 0;                  /* treat errors as EOF */
        }
        if (n == 0) {
            plx_iofwd_close(io);
            return 0;
        }
        io->len += (size_t)n;
        plx_iofwd_lines(io, now);
    }
    return io->fd >= 0;
}

void plx_iofwd_init_fed(struct plx_iofwd *io, int dest_fd, int rank, int tag)
{
    plx_iofwd_init(io, -1, dest_fd, rank, tag);
    io->fed = 1;
}

void plx_iofwd_feed(struct plx_iofwd *io, const char *buf, size_t len, double now)
{
    while (io->fed && len > 0) {
        size_t n = sizeof(io->buf) - io->len;
        if (n > len)
            n = len;
        memcpy(io->buf + io->len, buf, n);
        io->len += n;
        buf += n;
        len -= n;
        plx_iofwd_lines(io, now);   /* always leaves room: a full buffer is emitted */
    }
}

void plx_iofwd_flush_partial(struct plx_iofwd *io, double now, int force)
{
    if (io->len == 0)
        return;
    if (!force && now < io->partial_since + PLX_IOFWD_PARTIAL_DELAY)
        return;
    plx_iofwd_emit(io, io->buf, io->len);
    io->len = 0;
    io->partial_since = 0;
}

double plx_iofwd_deadline(const struct plx_iofwd *io)
{
    return io->len > 0 ? io->partial_since + PLX_IOFWD_PARTIAL_DELAY : 0;
}

void plx_iofwd_close(struct plx_iofwd *io)
{
    plx_iofwd_flush_partial(io, 0, 1);
    if (io->tag && !io->at_line_start)     /* keep tagged lines whole */
        plx_iofwd_emit(io, "\n", 1);
    if (io->fd >= 0) {
        close(io->fd);
        io->fd = -1;
    }
    io->fed = 0;
}
