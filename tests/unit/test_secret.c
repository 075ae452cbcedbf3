/*
 * Unit test of the job secret (src/util/secret.c), shared by the TCP and
 * SCTP transports: 32 hex digits are the bytes themselves (either case),
 * any other text is hashed (deterministic, 128 bits, texts that differ by
 * one character give other bytes), and a new secret's hex text reads back
 * as its bytes.
 */
#include <string.h>
#include "test_util.h"
#include "util/secret.h"

static void hex_text(void)
{
    uint8_t out[16];
    plx_util_secret_from("00112233445566778899aabbccddeeff", out);
    for (int i = 0; i < 16; i++)
        T_CHECK(out[i] == (uint8_t)(0x11 * i), "byte %d is %02x", i, out[i]);
    uint8_t up[16];
    plx_util_secret_from("00112233445566778899AABBCCDDEEFF", up);
    T_CHECK(memcmp(out, up, 16) == 0, "upper-case hex reads as lower-case");
}

static void hashed_text(void)
{
    uint8_t a[16], b[16], c[16], d[16];
    plx_util_secret_from("job-4711", a);
    plx_util_secret_from("job-4711", b);
    plx_util_secret_from("job-4712", c);
    T_CHECK(memcmp(a, b, 16) == 0, "the same text hashes alike");
    T_CHECK(memcmp(a, c, 16) != 0, "texts one character apart hash apart");
    T_CHECK(memcmp(a, a + 8, 8) != 0, "the two halves come from different bases");
    /* 32 characters that are not all hex digits, and 31 or 33 hex digits: hashed */
    plx_util_secret_from("00112233445566778899aabbccddeefg", d);
    T_CHECK(memcmp(d, "\x00\x11\x22\x33", 4) != 0, "a non-hex character makes it text");
    uint8_t s31[16], s33[16];
    plx_util_secret_from("00112233445566778899aabbccddeef", s31);
    plx_util_secret_from("00112233445566778899aabbccddeeff0", s33);
    T_CHECK(memcmp(s31, "\x00\x11\x22\x33", 4) != 0 && memcmp(s33, "\x00\x11\x22\x33", 4) != 0,
            "31 or 33 hex digits are text");
    uint8_t empty[16], zero[16] = { 0 };
    plx_util_secret_from("", empty);
    T_CHECK(memcmp(empty, zero, 16) != 0, "the empty text does not give zeros");
}

static void new_secret(void)
{
    uint8_t a[16], b[16], back[16];
    char hex[33], hex2[33];
    T_CHECK(plx_util_secret_new(a, hex) == 0, "random bytes");
    T_CHECK(strlen(hex) == 32, "32 hex digits, got %zu", strlen(hex));
    plx_util_secret_from(hex, back);
    T_CHECK(memcmp(a, back, 16) == 0, "the published text reads back as the bytes");
    T_CHECK(plx_util_secret_new(b, hex2) == 0 && memcmp(a, b, 16) != 0, "two new secrets differ");
}

int main(void)
{
    hex_text();
    hashed_text();
    new_secret();
    T_DONE("secret");
}
