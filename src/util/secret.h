/*
 * The job's secret as the transports read it (TCP, SCTP): the PMI key
 * "plexus-job-secret" holds either 32 hex digits, which are the 128 bits
 * themselves, or any other text, which is hashed into 128 bits. A
 * connection's handshake carries these 16 bytes; a peer with other bytes is
 * not of this job. libc only, like the rest of src/util.
 */
#ifndef PLX_UTIL_SECRET_H
#define PLX_UTIL_SECRET_H

#include <stdint.h>

#define PLX_UTIL_SECRET_KEY "plexus-job-secret"

/* The 16 bytes of the secret text val (see above). */
void plx_util_secret_from(const char *val, uint8_t out[16]);

/* A new secret: 16 random bytes into out and, as 32 hex digits and a NUL,
 * into hex (what is published under PLX_UTIL_SECRET_KEY). 0, or -1 with
 * errno when no random bytes could be read. */
int plx_util_secret_new(uint8_t out[16], char hex[33]);

#endif
