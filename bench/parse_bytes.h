/* Byte counts on the command line of the run benchmarks (bench_run_best,
 * bench_run_small): digits with an optional K, M or G suffix (binary
 * multiples). */
#ifndef WEFT_BENCH_PARSE_BYTES_H
#define WEFT_BENCH_PARSE_BYTES_H

#include <stddef.h>
#include <stdlib.h>

static inline size_t bench_parse_bytes(const char *s)
{
    char *end;
    size_t v = strtoull(s, &end, 10);
    if (*end == 'K')
        v <<= 10;
    if (*end == 'M')
        v <<= 20;
    if (*end == 'G')
        v <<= 30;
    return v;
}

#endif
