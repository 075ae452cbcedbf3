/*
 * Output forwarding: copies one rank's stdout or stderr pipe to mpiexec's
 * stdout or stderr a whole line at a time, so lines of different ranks never
 * mix, optionally prefixed with "[rank] ".
 *
 * The bytes come from a pipe (a rank of this host) or are fed in by the
 * caller (a rank on another host, whose proxy relays its output).
 *
 * A partial line (a prompt, a progress dot) is held back until its newline,
 * until the buffer fills, or until it has waited PLX_IOFWD_PARTIAL_DELAY
 * seconds; a line continued after such a flush gets no second prefix.
 */
#ifndef PLX_IOFWD_H
#define PLX_IOFWD_H

#include <stddef.h>

#define PLX_IOFWD_BUF 16384
#define PLX_IOFWD_PARTIAL_DELAY 0.2

struct plx_iofwd {
    int fd;                     /* source pipe, -1 once at EOF */
    int fed;                    /* open, bytes come from plx_iofwd_feed */
    int dest_fd;                /* 1 or 2 */
    int rank;
    int tag;                    /* prefix lines with "[rank] " */
    int at_line_start;
    double partial_since;       /* when the held partial line arrived, 0: none */
    size_t len;
    char buf[PLX_IOFWD_BUF];
};

void plx_iofwd_init(struct plx_iofwd *io, int fd, int dest_fd, int rank, int tag);

/* Reads what the pipe has and forwards complete lines. At EOF, forwards the
 * rest, closes the pipe and returns 0; otherwise returns 1. */
int plx_iofwd_pump(struct plx_iofwd *io, double now);

/* Starts an open stream without a pipe: bytes come from plx_iofwd_feed
 * until plx_iofwd_close. */
void plx_iofwd_init_fed(struct plx_iofwd *io, int dest_fd, int rank, int tag);
void plx_iofwd_feed(struct plx_iofwd *io, const char *buf, size_t len, double now);

static inline int plx_iofwd_open(const struct plx_iofwd *io)
{
    return io->fd >= 0 || io->fed;
}

/* Forwards a partial line that has waited long enough (or always: force). */
void plx_iofwd_flush_partial(struct plx_iofwd *io, double now, int force);

/* When flush_partial has work to do, or 0 when nothing is held. */
double plx_iofwd_deadline(const struct plx_iofwd *io);

/* Stops forwarding: forwards what is held and closes the pipe (or ends a
 * fed stream). */
void plx_iofwd_close(struct plx_iofwd *io);

#endif
