/*
 * Frames between mpiexec and plexus-proxy (see wire.h for the protocol).
 */
#include "wire.h"

#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "util/util.h"

#define PLX_WIRE_READ_CHUNK 65536

static void *plx_wire_grow(uint8_t **buf, size_t *cap, size_t need)
{
    size_t ncap = *cap ? *cap : 4096;
    uint8_t *nb;

    if (need <= *cap)
        return *buf;
    while (ncap < need)
        ncap *= 2;
    nb = realloc(*buf, ncap);
    if (nb == NULL) {
        dprintf(2, "plexus: out of memory (%zu bytes for a launcher connection)\n", ncap);
        exit(1);
    }
    *buf = nb;
    *cap = ncap;
    return nb;
}

void plx_wire_init(struct plx_wire_conn *c, int fd, size_t in_limit)
{
    memset(c, 0, sizeof(*c));
    c->fd = fd;
    c->in_limit = in_limit;
}

void plx_wire_close(struct plx_wire_conn *c)
{
    if (c->fd >= 0)
        close(c->fd);
    free(c->in);
    free(c->out);
    plx_wire_init(c, -1, c->in_limit);
}

int plx_wire_read(struct plx_wire_conn *c)
{
    /* Bounded, so one busy peer cannot starve the rest of the event loop. */
    for (int rounds = 0; rounds < 16; rounds++) {
        if (c->in_off > 0 && c->in_off == c->in_len) {
            c->in_off = c->in_len = 0;
        } else if (c->in_off > 0 && c->in_len + PLX_WIRE_READ_CHUNK > c->in_cap) {
            memmove(c->in, c->in + c->in_off, c->in_len - c->in_off);
            c->in_len -= c->in_off;
            c->in_off = 0;
        }
        plx_wire_grow(&c->in, &c->in_cap, c->in_len + PLX_WIRE_READ_CHUNK);
        size_t room = c->in_cap - c->in_len;
        ssize_t n = recv(c->fd, c->in + c->in_len, room, 0);
        if (n > 0) {
            c->in_len += (size_t)n;
            if ((size_t)n < room)
                return 1;           /* drained for now */
            continue;
        }
        if (n == 0)
            return 0;
        if (errno == EINTR)
            continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK)
            return 1;
        return -1;
    }
    return 1;
}

int plx_wire_next(struct plx_wire_conn *c, int *type_p, struct plx_wire_rd *rd)
{
    size_t avail = c->in_len - c->in_off;
    const uint8_t *p = c->in + c->in_off;
    uint32_t len;

    if (avail < 4)
        return 0;
    len = (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
    if (len == 0 || len > c->in_limit)
        return -1;
    if (avail < 4 + (size_t)len)
        return 0;
    *type_p = p[4];
    rd->p = p + 5;
    rd->left = len - 1;
    rd->bad = 0;
    c->in_off += 4 + (size_t)len;
    return 1;
}

void plx_wire_begin(struct plx_wire_conn *c, int type)
{
    /* Reclaim what was sent before growing. */
    if (c->out_off > 0 && c->out_off == c->out_len)
        c->out_off = c->out_len = 0;
    c->frame_start = c->out_len;
    plx_wire_grow(&c->out, &c->out_cap, c->out_len + 5);
    c->out_len += 4;                /* length, patched by plx_wire_end */
    c->out[c->out_len++] = (uint8_t)type;
}

void plx_wire_bytes(struct plx_wire_conn *c, const void *p, size_t n)
{
    plx_wire_grow(&c->out, &c->out_cap, c->out_len + n);
    if (n > 0)
        memcpy(c->out + c->out_len, p, n);
    c->out_len += n;
}

void plx_wire_u8(struct plx_wire_conn *c, unsigned v)
{
    uint8_t b = (uint8_t)v;
    plx_wire_bytes(c, &b, 1);
}

void plx_wire_u32(struct plx_wire_conn *c, uint32_t v)
{
    uint8_t b[4] = { (uint8_t)(v >> 24), (uint8_t)(v >> 16), (uint8_t)(v >> 8), (uint8_t)v };
    plx_wire_bytes(c, b, 4);
}

void plx_wire_str(struct plx_wire_conn *c, const char *s)
{
    size_t n = s ? strlen(s) : 0;
    plx_wire_u32(c, (uint32_t)n);
    plx_wire_bytes(c, s, n);
}

void plx_wire_end(struct plx_wire_conn *c)
{
    uint32_t len = (uint32_t)(c->out_len - c->frame_start - 4);
    uint8_t *h = c->out + c->frame_start;

    h[0] = (uint8_t)(len >> 24);
    h[1] = (uint8_t)(len >> 16);
    h[2] = (uint8_t)(len >> 8);
    h[3] = (uint8_t)len;
}

int plx_wire_flush(struct plx_wire_conn *c)
{
    while (c->fd >= 0 && c->out_off < c->out_len) {
        ssize_t n = send(c->fd, c->out + c->out_off, c->out_len - c->out_off, MSG_NOSIGNAL);
        if (n > 0) {
            c->out_off += (size_t)n;
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return 0;
        return -1;
    }
    if (c->out_off == c->out_len)
        c->out_off = c->out_len = 0;
    return 0;
}

int plx_wire_flush_wait(struct plx_wire_conn *c, int timeout_ms)
{
    double t0 = plx_util_now();

    for (;;) {
        if (plx_wire_flush(c) != 0)
            return -1;
        if (plx_wire_pending(c) == 0)
            return 0;
        long spent = (long)((plx_util_now() - t0) * 1000);
        if (spent >= timeout_ms)
            return -1;
        struct pollfd pfd = { .fd = c->fd, .events = POLLOUT };
        (void)poll(&pfd, 1, (int)(timeout_ms - spent));
    }
}

unsigned plx_wire_rd_u8(struct plx_wire_rd *rd)
{
    if (rd->left < 1) {
        rd->bad = 1;
        return 0;
    }
    rd->left--;
    return *rd->p++;
}

uint32_t plx_wire_rd_u32(struct plx_wire_rd *rd)
{
    uint32_t v;

    if (rd->left < 4) {
        rd->bad = 1;
        rd->left = 0;
        return 0;
    }
    v = (uint32_t)rd->p[0] << 24 | (uint32_t)rd->p[1] << 16 | (uint32_t)rd->p[2] << 8 | rd->p[3];
    rd->p += 4;
    rd->left -= 4;
    return v;
}

const char *plx_wire_rd_str(struct plx_wire_rd *rd, size_t *len_p)
{
    uint32_t n = plx_wire_rd_u32(rd);
    const char *s;

    if (rd->bad || n > rd->left) {
        rd->bad = 1;
        rd->left = 0;
        *len_p = 0;
        return "";
    }
    s = (const char *)rd->p;
    rd->p += n;
    rd->left -= n;
    *len_p = n;
    return s;
}

char *plx_wire_rd_strdup(struct plx_wire_rd *rd)
{
    size_t n;
    const char *s = plx_wire_rd_str(rd, &n);
    char *d;

    if (rd->bad)
        return NULL;
    d = malloc(n + 1);
    if (d == NULL) {
        dprintf(2, "plexus: out of memory\n");
        exit(1);
    }
    memcpy(d, s, n);
    d[n] = '\0';
    return d;
}

void plx_wire_tune_socket(int fd, unsigned timeout_ms)
{
    int one = 1;
    int idle = 1, intvl = 1;
    int cnt = (int)(timeout_ms / 1000) - 1;

    if (cnt < 1)
        cnt = 1;
    (void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    (void)setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof(one));
    (void)setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof(idle));
    (void)setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &intvl, sizeof(intvl));
    (void)setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &cnt, sizeof(cnt));
}

int plx_wire_stalled(int fd, unsigned timeout_ms)
{
    struct tcp_info ti;
    socklen_t len = sizeof(ti);

    if (fd < 0 || getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &len) != 0)
        return 0;
    /* Segments in flight and no ACK for that long: retransmissions go
     * unanswered. (A zero window leaves nothing in flight: not a stall.) */
    return ti.tcpi_unacked > 0 && ti.tcpi_last_ack_recv >= timeout_ms;
}

int plx_wire_secret_make(char out[PLX_WIRE_SECRET_HEX + 1])
{
    uint8_t b[PLX_WIRE_SECRET_HEX / 2];

    if (plx_util_random(b, sizeof(b)) != 0)
        return -1;
    for (size_t i = 0; i < sizeof(b); i++)
        snprintf(out + 2 * i, 3, "%02x", b[i]);
    return 0;
}

int plx_wire_secret_equal(const char *ours, const char *got, size_t got_len)
{
    unsigned diff = got_len != PLX_WIRE_SECRET_HEX;

    for (size_t i = 0; i < PLX_WIRE_SECRET_HEX; i++)
        diff |= (unsigned)(ours[i] ^ (i < got_len ? got[i] : 0));
    return diff == 0;
}
