/* The job's secret: text to 128 bits, and a new one (see secret.h). */
#include "util/secret.h"

#include <stdio.h>
#include <string.h>
#include "util/util.h"

static int plx_util_hexval(int ch)
{
    if (ch >= '0' && ch <= '9')
        return ch - '0';
    if (ch >= 'a' && ch <= 'f')
        return ch - 'a' + 10;
    if (ch >= 'A' && ch <= 'F')
        return ch - 'A' + 10;
    return -1;
}

/* 32 hex digits are the secret itself; any other text is hashed into 128
 * bits (two FNV-1a streams with different bases, each finished with a
 * splitmix64 mix). The launcher's value carries the entropy; the hash only
 * brings it to the handshake's size. */
void plx_util_secret_from(const char *val, uint8_t out[16])
{
    size_t len = strlen(val);
    int hex = len == 32;
    for (size_t i = 0; hex && i < 32; i++)
        hex = plx_util_hexval(val[i]) >= 0;
    if (hex) {
        for (int i = 0; i < 16; i++)
            out[i] = (uint8_t)(plx_util_hexval(val[2 * i]) << 4 | plx_util_hexval(val[2 * i + 1]));
        return;
    }
    uint64_t h[2] = { 0xcbf29ce484222325ull, 0x84222325cbf29ce4ull };
    for (int k = 0; k < 2; k++) {
        for (size_t i = 0; i < len; i++) {
            h[k] ^= (uint8_t)val[i];
            h[k] *= 0x100000001b3ull;
        }
        uint64_t z = h[k] + 0x9e3779b97f4a7c15ull * (uint64_t)(k + 1);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        h[k] = z ^ (z >> 31);
        memcpy(out + 8 * k, &h[k], 8);
    }
}

int plx_util_secret_new(uint8_t out[16], char hex[33])
{
    if (plx_util_random(out, 16) != 0)
        return -1;
    for (int i = 0; i < 16; i++)
        snprintf(hex + 2 * i, 3, "%02x", out[i]);
    return 0;
}
