/* Copies whose destination bypasses the caches.
 *
 * A store to a line that is not cached first reads the line from memory
 * (read for ownership), so an ordinary copy into a buffer in main memory
 * costs three transfers per line; non-temporal (streaming) stores write
 * whole lines without reading them, two transfers per line. The built-in
 * collectives write their final results with them when the buffer is too
 * large to stay in the caches anyway (coll_ring.c); for data that will be
 * read again soon they are slower, since the line must come back from
 * memory. */
#ifndef WEFT_RUN_COPY_NT_H
#define WEFT_RUN_COPY_NT_H

#include <stddef.h>

/* memcpy(dst, src, n) for non-overlapping buffers, with streaming stores
 * where the CPU has them (x86-64: SSE2, the baseline); the stores are
 * fenced before it returns, so the bytes are visible to other threads and
 * processes like those of memcpy. Any alignment and length. */
void weft__copy_nt(void *dst, const void *src, size_t n);
/* The same without the fence, for many small copies in a row (a fence per
 * copy would stall each on the stores before it); weft__copy_nt_fence
 * must run before the bytes are published. */
void weft__copy_nt_unfenced(void *dst, const void *src, size_t n);
void weft__copy_nt_fence(void);

#endif
