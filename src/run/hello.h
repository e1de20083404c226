/* The handshake every weft TCP connection opens with.
 *
 * 64 bytes, little-endian: magic "WEFTHI01", kind, rank, size, connection
 * index, 8 reserved zero bytes, the 32-byte job secret. The side that accepts
 * a connection reads exactly these 64 bytes (with a short deadline) and
 * refuses the connection, logging why, unless every field is as expected; it
 * then answers with its own hello, which the connecting side checks the same
 * way, so both ends prove they know the secret. Anything longer, shorter or
 * different is refused: no other bytes are read before the hello passed.
 *
 * The secret travels in clear: it keeps strangers and other jobs out, it does
 * not protect against someone who can watch the network (docs/run.md).
 */
#ifndef WEFT_RUN_HELLO_H
#define WEFT_RUN_HELLO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "weft/comm.h"

#define WEFT__HELLO_BYTES 64
/* How long an accepting side waits for a connection's hello before
 * refusing it. Connections wait side by side (hello_gate.h), so this only
 * bounds what a silent one holds; a real peer writes its hello as soon as
 * it is connected. */
#define WEFT__HELLO_WAIT_NS 1000000000LL

/* BOOT_MISSING: rank 0's answer when the job cannot form because ranks
 * did not join (bootstrap/tcp.c): rank is the first rank missing, index
 * how many are missing, the first 4 secret bytes the milliseconds rank 0
 * waited (little-endian), the other 28 zero. */
enum {
    WEFT__HELLO_BOOT = 1,
    WEFT__HELLO_TCP = 2,
    WEFT__HELLO_BOOT_REPLY = 3,
    WEFT__HELLO_BOOT_MISSING = 4
};

typedef struct weft__hello {
    uint32_t kind, rank, size, index;
    unsigned char secret[WEFT_SECRET_BYTES];
} weft__hello;

void weft__hello_encode(const weft__hello *h, unsigned char buf[WEFT__HELLO_BYTES]);
/* Decodes and checks magic, kind and (when secret is not NULL) the secret,
 * in constant time. On failure writes a short reason ("bad magic", "wrong
 * secret", ...) to why and returns false. */
bool weft__hello_decode(const unsigned char buf[WEFT__HELLO_BYTES], uint32_t kind,
                        const unsigned char *secret, weft__hello *out, const char **why);

#endif
