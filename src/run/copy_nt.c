/* Streaming copies (see copy_nt.h). */
#include "run/copy_nt.h"

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#if defined(__x86_64__)
#include <immintrin.h>
#include <stdatomic.h>

/* Whole lines with 64-byte streaming stores: one store per line instead
 * of four leaves no line half-written in the write-combining buffers
 * between stores (docs/interop.md has the measurement). d is 64-aligned,
 * body a multiple of 64. */
__attribute__((target("avx512f"))) static void lines_avx512(unsigned char *d,
                                                            const unsigned char *s, size_t body)
{
    for (size_t i = 0; i < body; i += 64)
        _mm512_stream_si512((void *)(d + i), _mm512_loadu_si512((const void *)(s + i)));
}

/* 1 when the CPU has AVX-512F, 0 when not, -1 before the first look. */
static _Atomic int have_avx512 = -1;

static bool use_avx512(void)
{
    int h = atomic_load_explicit(&have_avx512, memory_order_relaxed);
    if (h < 0) {
        __builtin_cpu_init();
        h = __builtin_cpu_supports("avx512f") ? 1 : 0;
        atomic_store_explicit(&have_avx512, h, memory_order_relaxed);
    }
    return h;
}

void weft__copy_nt_unfenced(void *dst, const void *src, size_t n)
{
    unsigned char *d = dst;
    const unsigned char *s = src;
    /* Head up to the destination's next 64-byte boundary, so every
     * streaming store fills whole lines (partial lines are merged in the
     * write-combining buffers, but a line left half-written is flushed as
     * partial writes). */
    size_t head = (size_t)(-(uintptr_t)d & 63);
    if (head > n)
        head = n;
    if (head) { /* no call for the common aligned case: tiles of 512 bytes make many calls */
        memcpy(d, s, head);
        d += head;
        s += head;
        n -= head;
    }
    size_t body = n & ~(size_t)63;
    if (use_avx512()) {
        lines_avx512(d, s, body);
        if (n > body)
            memcpy(d + body, s + body, n - body);
        return;
    }
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
    if (n > body)
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

void weft__copy_nt_fence(void) {}

#endif

void weft__copy_nt(void *dst, const void *src, size_t n)
{
    weft__copy_nt_unfenced(dst, src, n);
    weft__copy_nt_fence();
}
