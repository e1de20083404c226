/* Segment names (see segname.h). */
#include "run/transport/shm/segname.h"

#include <stdio.h>
#include <string.h>

#define PREFIX "weft-"

void weft__seg_name_xport(char *buf, size_t len, pid_t pid, uint64_t rnd)
{
    snprintf(buf, len, "/" PREFIX "%d-%016llx", (int)pid, (unsigned long long)rnd);
}

void weft__seg_name_region(char *buf, size_t len, uint64_t tag, uint32_t rank, uint32_t id)
{
    snprintf(buf, len, "/" PREFIX "%016llx-%u-%u", (unsigned long long)tag, rank, id);
}

static int hex_digit(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    return -1; /* the names are written in lower case only */
}

weft__seg_kind weft__seg_name_parse(const char *name, uint64_t *id)
{
    if (strncmp(name, PREFIX, sizeof PREFIX - 1) != 0)
        return WEFT__SEG_OTHER;
    const char *p = name + sizeof PREFIX - 1;
    uint64_t v = 0;
    size_t n = 0;
    while (n < 16 && hex_digit(p[n]) >= 0)
        v = v << 4 | (uint64_t)hex_digit(p[n++]);
    if (n == 16 && p[16] == '-') {
        *id = v;
        return WEFT__SEG_REGION;
    }
    /* A pid: 1 to 10 decimal digits, no leading zero. */
    v = 0;
    n = 0;
    while (n < 10 && p[n] >= '0' && p[n] <= '9')
        v = v * 10 + (uint64_t)(p[n++] - '0');
    if (n == 0 || p[n] != '-' || (n > 1 && p[0] == '0'))
        return WEFT__SEG_OTHER;
    *id = v;
    return WEFT__SEG_XPORT;
}
