/* The connection handshake (see hello.h). */
#include "run/hello.h"

#include <string.h>

static const char hello_magic[8] = {'W', 'E', 'F', 'T', 'H', 'I', '0', '1'};

static void put32(unsigned char *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

static uint32_t get32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

void weft__hello_encode(const weft__hello *h, unsigned char buf[WEFT__HELLO_BYTES])
{
    memset(buf, 0, WEFT__HELLO_BYTES);
    memcpy(buf, hello_magic, 8);
    put32(buf + 8, h->kind);
    put32(buf + 12, h->rank);
    put32(buf + 16, h->size);
    put32(buf + 20, h->index);
    memcpy(buf + 32, h->secret, WEFT_SECRET_BYTES);
}

bool weft__hello_decode(const unsigned char buf[WEFT__HELLO_BYTES], uint32_t kind,
                        const unsigned char *secret, weft__hello *out, const char **why)
{
    if (memcmp(buf, hello_magic, 8) != 0) {
        *why = "not a weft hello (bad magic)";
        return false;
    }
    if (get32(buf + 8) != kind) {
        *why = "unexpected connection kind";
        return false;
    }
    for (int i = 24; i < 32; i++) {
        if (buf[i]) {
            *why = "malformed hello (reserved bytes set)";
            return false;
        }
    }
    if (secret) {
        unsigned char diff = 0;
        for (size_t i = 0; i < WEFT_SECRET_BYTES; i++)
            diff |= (unsigned char)(buf[32 + i] ^ secret[i]);
        if (diff) {
            *why = "wrong job secret";
            return false;
        }
    }
    out->kind = kind;
    out->rank = get32(buf + 12);
    out->size = get32(buf + 16);
    out->index = get32(buf + 20);
    memcpy(out->secret, buf + 32, WEFT_SECRET_BYTES);
    return true;
}
