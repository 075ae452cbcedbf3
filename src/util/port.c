/*
 * MPI ports as listening TCP sockets (see port.h).
 */
#include "util/port.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include "util/iface.h"
#include "util/util.h"

int plx_port_listen(char *name, size_t len)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    int port = plx_util_listen_range(fd, AF_INET, 0, 0, 0, 64);
    uint8_t r[16];
    if (port < 0 || plx_util_random(r, sizeof r) != 0) {
        close(fd);
        return -1;
    }
    size_t off = (size_t)snprintf(name, len, PLX_PORT_PREFIX "%d:", port);
    for (int i = 0; i < 16; i++)
        off += (size_t)snprintf(name + off, len - off, "%02x", r[i]);
    struct plx_iface_addr a[16];
    int n = plx_iface_list(a, 16), k = 0;
    for (int lo = 0; lo <= 1; lo++)
        for (int i = 0; i < n && k < PLX_PORT_NADDR; i++) {
            if (a[i].a.family != AF_INET || (a[i].loopback != 0) != lo)
                continue;
            char s[48];
            plx_iface_ip_format(&a[i].a, s, sizeof s);
            if (off + strlen(s) + 2 >= len)
                break;
            off += (size_t)snprintf(name + off, len - off, "%c%s", k ? ',' : ':', s);
            k++;
        }
    if (k == 0)
        snprintf(name + off, len - off, ":127.0.0.1");
    return fd;
}

int plx_port_parse(const char *s, struct plx_port_name *pn)
{
    memset(pn, 0, sizeof *pn);
    size_t pl = strlen(PLX_PORT_PREFIX);
    if (!s || strncmp(s, PLX_PORT_PREFIX, pl) != 0)
        return -1;
    char *end;
    long port = strtol(s + pl, &end, 10);
    if (*end != ':' || port <= 0 || port > 65535)
        return -1;
    pn->port = (int)port;
    const char *nonce = end + 1;
    if (strlen(nonce) < 33 || nonce[32] != ':')
        return -1;
    for (int i = 0; i < 32; i++)
        if (!strchr("0123456789abcdef", nonce[i]) || !nonce[i])
            return -1;
    memcpy(pn->nonce, nonce, 32);
    for (const char *a = nonce + 33; *a && pn->naddr < PLX_PORT_NADDR;) {
        const char *c = strchr(a, ',');
        size_t l = c ? (size_t)(c - a) : strlen(a);
        struct plx_iface_ip ip;
        if (l == 0 || l >= sizeof pn->addr[0])
            return -1;
        memcpy(pn->addr[pn->naddr], a, l);
        pn->addr[pn->naddr][l] = 0;
        if (plx_iface_ip_parse(pn->addr[pn->naddr], &ip) != 0)
            return -1;
        pn->naddr++;
        a += l + (c ? 1 : 0);
    }
    return pn->naddr ? 0 : -1;
}

int plx_port_read(int fd, void *buf, size_t n, double deadline)
{
    char *p = buf;
    while (n > 0) {
        if (deadline >= 0) {
            double left = deadline - plx_util_now();
            struct pollfd pf = { .fd = fd, .events = POLLIN };
            if (left <= 0)
                return -1;
            int r = poll(&pf, 1, (int)(left * 1000) + 1);
            if (r < 0 && errno == EINTR)
                continue;
            if (r <= 0)
                return -1;
        }
        ssize_t k = recv(fd, p, n, 0);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return -1;
        p += k;
        n -= (size_t)k;
    }
    return 0;
}

int plx_port_write(int fd, const void *buf, size_t n)
{
    const char *p = buf;
    while (n > 0) {
        ssize_t k = send(fd, p, n, MSG_NOSIGNAL);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return -1;
        p += k;
        n -= (size_t)k;
    }
    return 0;
}

/* A blocking connect bounded by `allowed` seconds; fd or -1 (errno). */
static int plx_port_try(const char *addr, int port, double allowed)
{
    struct plx_iface_ip ip;
    struct sockaddr_storage ss;
    if (plx_iface_ip_parse(addr, &ip) != 0)
        return -1;
    socklen_t sl = plx_iface_ip_sockaddr(&ip, port, &ss);
    int fd = socket(ip.family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    if (connect(fd, (struct sockaddr *)&ss, sl) != 0) {
        if (errno != EINPROGRESS) {
            int e = errno;
            close(fd);
            errno = e;
            return -1;
        }
        struct pollfd pf = { .fd = fd, .events = POLLOUT };
        int err = 0;
        socklen_t el = sizeof err;
        if (poll(&pf, 1, (int)(allowed * 1000) + 1) <= 0) {
            close(fd);
            errno = ETIMEDOUT;
            return -1;
        }
        getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &el);
        if (err) {
            close(fd);
            errno = err;
            return -1;
        }
    }
    int fl = fcntl(fd, F_GETFL);
    fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    return fd;
}

int plx_port_connect(const struct plx_port_name *pn, int kind, const char *msg, double deadline, char *why,
                     size_t whylen)
{
    int refused = 0;
    why[0] = 0;
    for (int i = 0; i < pn->naddr; i++) {
        double left = deadline - plx_util_now();
        if (left <= 0)
            break;
        /* an address of another network may never answer: a share of the time each */
        int fd = plx_port_try(pn->addr[i], pn->port, i + 1 < pn->naddr ? left / 4 : left);
        if (fd < 0) {
            refused |= errno == ECONNREFUSED;
            snprintf(why, whylen, "%s:%d: %s", pn->addr[i], pn->port, strerror(errno));
            continue;
        }
        struct plx_port_hello h = { .magic = PLX_PORT_MAGIC, .version = 1, .kind = (uint16_t)kind };
        memcpy(h.nonce, pn->nonce, 32);
        h.len = msg ? (uint32_t)strlen(msg) : 0;
        if (plx_port_write(fd, &h, sizeof h) != 0 || (h.len && plx_port_write(fd, msg, h.len) != 0)) {
            snprintf(why, whylen, "%s:%d: the connection broke", pn->addr[i], pn->port);
            close(fd);
            continue;
        }
        return fd;
    }
    if (refused)
        snprintf(why, whylen, "nothing listens there (the port is closed)");
    else if (!why[0])
        snprintf(why, whylen, "no address answered in time");
    return -1;
}
