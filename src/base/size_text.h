/* A byte count as people read it in weft's reports (internal to weft). */
#ifndef WEFT_BASE_SIZE_TEXT_H
#define WEFT_BASE_SIZE_TEXT_H

#include <stddef.h>
#include <stdint.h>

/* "1048576 (1M)": size in decimal, with its binary suffix (K, M, G) when
 * it is a whole multiple of one; "1000" otherwise. Truncated to len - 1
 * bytes and always terminated (len > 0). */
void weft__size_text(uint64_t size, char *buf, size_t len);

#endif
