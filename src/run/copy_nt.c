/* Streaming copies (see copy_nt.h). */
#include "run/copy_nt.h"

#include <stdint.h>
#include <string.h>

#if defined(__x86_64__)
#include <emmintrin.h>

void weft__copy_nt_unfenced(void *dst, const void *src, size_t n)
{
    unsigned char *d = dst;
    const unsigned char *s = src;
    /* Head up to the destination's next 64-byte boundary, so every
     * streaming store fills whole lines (partial lines are merged in the
     * write-combining buffers, but a line left half-written is flushed as
     * partial writes). */
    size_t head = (size_t)(-(uintptr_t)d & 63);
    if (head > n) head = n;
    memcpy(d, s, head);
    d += head;
    s += head;
    n -= head;
    size_t body = n & ~(size_t)63;
    for (size_t i = 0; i < body; i += 64) {
        __m128i a = _mm_loadu_si128((const __m128i *)(const void *)(s + i));
        __m128i b = _mm_loadu_si128((const __m128i *)(const void *)(s + i + 16));
        __m128i c = _mm_loadu_si128((const __m128i *)(const void *)(s + i + 32));
        __m128i e = _mm_loadu_si128((const __m128i *)(const void *)(s + i + 48));
        _mm_stream_si128((__m128i *)(void *)(d + i), a);
        _mm_stream_si128((__m128i *)(void *)(d + i + 16), b);
        _mm_stream_si128((__m128i *)(void *)(d + i + 32), c);
        _mm_stream_si128((__m128i *)(void *)(d + i + 48), e);
    }
    memcpy(d + body, s + body, n - body);
}

void weft__copy_nt_fence(void)
{
    /* Streaming stores are weakly ordered: fence them before a later
     * release (a slot head, a returned call) can publish the bytes. */
    _mm_sfence();
}

#else

void weft__copy_nt_unfenced(void *dst, const void *src, size_t n)
{
    memcpy(dst, src, n);
}

void weft__copy_nt_fence(void)
{
}

#endif

void weft__copy_nt(void *dst, const void *src, size_t n)
{
    weft__copy_nt_unfenced(dst, src, n);
    weft__copy_nt_fence();
}
