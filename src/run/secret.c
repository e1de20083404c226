/* The per-job secret: generation, hex text. */
#include <errno.h>
#include <string.h>
#include <sys/random.h>

#include "weft/comm.h"

static int hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

bool weft_secret_parse(const char *hex, unsigned char out[WEFT_SECRET_BYTES])
{
    unsigned char tmp[WEFT_SECRET_BYTES];
    if (!hex || strlen(hex) != 2 * WEFT_SECRET_BYTES)
        return false;
    for (size_t i = 0; i < WEFT_SECRET_BYTES; i++) {
        int hi = hexval(hex[2 * i]), lo = hexval(hex[2 * i + 1]);
        if (hi < 0 || lo < 0)
            return false;
        tmp[i] = (unsigned char)(hi << 4 | lo);
    }
    memcpy(out, tmp, sizeof tmp);
    return true;
}

void weft_secret_format(const unsigned char s[WEFT_SECRET_BYTES], char *buf)
{
    static const char digits[] = "0123456789abcdef";
    for (size_t i = 0; i < WEFT_SECRET_BYTES; i++) {
        buf[2 * i] = digits[s[i] >> 4];
        buf[2 * i + 1] = digits[s[i] & 15];
    }
    buf[2 * WEFT_SECRET_BYTES] = '\0';
}

weft_err weft_secret_generate(unsigned char out[WEFT_SECRET_BYTES])
{
    size_t got = 0;
    while (got < WEFT_SECRET_BYTES) {
        ssize_t n = getrandom(out + got, WEFT_SECRET_BYTES - got, 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return WEFT_EIO;
        got += (size_t)n;
    }
    return WEFT_OK;
}
