/*
 * MPI ports (MPI_Open_port) as listening TCP sockets, shared by the library
 * (api/dynamic.c: accept, connect, spawn) and mpiexec (which tells a
 * spawning parent that its children could not start).
 *
 * A port name is "plexus-port:<tcp port>:<nonce>:<addr>,<addr>,...": the
 * addresses of the owner's host (others first, loopback last) and 32 hex
 * digits drawn at random, so that a port opened later on the same TCP port
 * is not mistaken for a closed one. A client connects, sends a hello
 * (struct plx_port_hello) and, for a connection, waits for a one-word
 * answer (PLX_PORT_OK, or PLX_PORT_WRONG when the nonce is not that of an
 * open port there). A hello of kind PLX_PORT_FAIL carries a message of
 * `len` bytes after it and gets no answer: the spawn failed.
 */
#ifndef PLX_UTIL_PORT_H
#define PLX_UTIL_PORT_H

#include <stddef.h>
#include <stdint.h>

#define PLX_PORT_PREFIX "plexus-port:"
#define PLX_PORT_MAGIC 0x50584c50u      /* "PLXP" */
#define PLX_PORT_NADDR 8

enum { PLX_PORT_CONNECT = 1, PLX_PORT_FAIL = 2 };
enum { PLX_PORT_OK = 1, PLX_PORT_WRONG = 2 };

struct plx_port_hello {
    uint32_t magic;
    uint16_t version;
    uint16_t kind;
    char nonce[32];
    uint32_t len;               /* PLX_PORT_FAIL: message bytes that follow */
};

struct plx_port_name {
    int port;
    char nonce[33];
    int naddr;
    char addr[PLX_PORT_NADDR][48];
};

/* Opens a listening socket; its name into name (len >= 256). fd or -1. */
int plx_port_listen(char *name, size_t len);
/* 0, or -1 when s is not a port name. */
int plx_port_parse(const char *s, struct plx_port_name *pn);
/* Connects to the port and sends a hello of `kind` (with msg for
 * PLX_PORT_FAIL); tries every address until `deadline` (plx_util_now()).
 * The connected socket (blocking), or -1 with why. */
int plx_port_connect(const struct plx_port_name *pn, int kind, const char *msg, double deadline, char *why,
                     size_t whylen);
/* Blocking full read/write with a deadline (< 0: none): 0, or -1. */
int plx_port_read(int fd, void *buf, size_t n, double deadline);
int plx_port_write(int fd, const void *buf, size_t n);

#endif
