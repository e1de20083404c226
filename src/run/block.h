/* Where block b of n starts when count elements are cut into n nearly
 * equal blocks (count * b / n, rounded down): the cut every collective
 * path uses, so that all agree on who owns which elements. 128-bit
 * arithmetic: count * b overflows 64 bits past 2^57 elements on 128
 * ranks. */
#ifndef WEFT_RUN_BLOCK_H
#define WEFT_RUN_BLOCK_H

#include <stddef.h>
#include <stdint.h>

static inline size_t weft__block_at(size_t count, uint32_t n, uint32_t b)
{
    return (size_t)((unsigned __int128)count * b / n);
}

#endif
