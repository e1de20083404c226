/* Exact tests of the line kernels (reduce.h, weft__reduce_lines_fn) and of
 * weft__shared_combine, which runs them between tile-by-tile heads and
 * tails (coll_shared.c).
 *
 * Every line kernel of every tier this CPU runs, for every dtype and op,
 * is compared byte for byte with the same tier's pair kernel applied in
 * rank order (reduce_test.c checks the pair kernels against a scalar
 * reference): 2 to 7 sources, 1 to 4 destinations, ranges of 0 to 9
 * lines, sources at any offset, with and without streaming stores, and in
 * place (destinations that are sources). Bytes outside the range and the
 * sources must stay untouched. The data are random bits, so the float
 * types meet NaNs, infinities, subnormals and signed zeros, and some
 * elements are copied from one source to another (ties, equal NaNs).
 * weft__shared_combine is checked the same way at lengths that cut lines
 * and elements anywhere, with destinations aligned alike and differently. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/testing.h"
#include "run/coll_shared_core.h"
#include "run/reduce.h"
#include "weft/comm.h"

enum { MAXS = 7, MAXD = 4, MAXBYTES = 64 * 9 + 200, GUARD = 64, SLACK = 64 };

static uint64_t rng_state = 0x2545f4914f6cdd1du;
static uint64_t rng(void)
{
    return weft_test_rng(&rng_state);
}

/* One buffer: GUARD bytes, up to SLACK bytes of offset, the data, GUARD
 * bytes; 64-byte aligned. */
typedef struct buf {
    _Alignas(64) unsigned char b[GUARD + SLACK + MAXBYTES + GUARD];
} buf;

static buf srcs[MAXS], dsts[MAXD], want, before[MAXS + MAXD];

/* Random bits in the sources, with now and then an element copied from
 * source 0. */
static void fill_sources(unsigned char *const *src, uint32_t nsrc, size_t bytes, size_t es)
{
    for (uint32_t q = 0; q < nsrc; q++)
        for (size_t i = 0; i < bytes; i++)
            src[q][i] = (unsigned char)rng();
    for (uint32_t q = 1; q < nsrc; q++)
        for (size_t i = 0; i + es <= bytes; i += es)
            if ((rng() & 7u) == 0)
                memcpy(src[q] + i, src[0] + i, es);
}

/* want[0 .. bytes) = src[0] op ... op src[nsrc - 1] by the pair kernel. */
static void reference(weft__reduce_fn pair, unsigned char *const *src, uint32_t nsrc, size_t bytes,
                      size_t es)
{
    memcpy(want.b, src[0], bytes);
    for (uint32_t q = 1; q < nsrc; q++)
        pair(want.b, src[q], bytes / es);
}

/* The dtype and op under test. */
static weft_dtype g_type;
static weft_redop g_op;

/* The exponent mask and quiet bit of a floating type; false for others. */
static bool nan_bits(weft_dtype t, uint64_t *exp, uint64_t *quiet)
{
    switch (t) {
    case WEFT_HALF:
        *exp = 0x7c00u, *quiet = 0x0200u;
        return true;
    case WEFT_BFLOAT16:
        *exp = 0x7f80u, *quiet = 0x0040u;
        return true;
    case WEFT_FLOAT:
        *exp = 0x7f800000u, *quiet = 0x00400000u;
        return true;
    case WEFT_DOUBLE:
        *exp = 0x7ff0000000000000u, *quiet = 0x0008000000000000u;
        return true;
    default:
        return false;
    }
}

/* Whether got may stand where want (the pair kernels' result) stands at
 * element offset at: the same bits or, for a floating sum or product whose
 * operands include several NaNs, any of them quieted (which one the CPU
 * returns depends on the operand order the compiler chose; docs/run.md). */
static bool element_ok(const unsigned char *got, const unsigned char *expect,
                       unsigned char *const *src, uint32_t nsrc, size_t at, size_t es)
{
    if (memcmp(got, expect, es) == 0)
        return true;
    uint64_t exp, quiet, g = 0, v = 0;
    if ((g_op != WEFT_SUM && g_op != WEFT_PROD) || !nan_bits(g_type, &exp, &quiet))
        return false;
    memcpy(&g, got, es);
    memcpy(&v, expect, es);
    uint64_t mag = exp | (exp - 1); /* everything but the sign */
    if ((v & mag) <= exp)
        return false; /* want is no NaN */
    for (uint32_t q = 0; q < nsrc; q++) {
        uint64_t x = 0;
        memcpy(&x, src[q] + at, es);
        if ((x & mag) > exp && g == (x | quiet))
            return true;
    }
    return false;
}

/* Each destination's whole buffer and its saved copy (set by place). */
static unsigned char *dbase[MAXD];
static const unsigned char *dsaved[MAXD];

/* Mismatches: each destination against want in [lo, hi) and against its
 * saved bytes elsewhere in its whole buffer; each source that is not a
 * destination against its saved bytes. */
static unsigned compare(unsigned char *const *dst, uint32_t ndst, unsigned char *const *src,
                        uint32_t nsrc, size_t lo, size_t hi)
{
    unsigned bad = 0;
    size_t es = weft_dtype_size(g_type);
    unsigned char *saved_src[MAXS]; /* the sources as they were (some are destinations) */
    for (uint32_t q = 0; q < nsrc; q++)
        saved_src[q] = before[q].b + (src[q] - srcs[q].b);
    for (uint32_t i = 0; i < ndst; i++) {
        size_t at = (size_t)(dst[i] - dbase[i]);
        for (size_t o = lo; o < hi; o += es)
            bad += !element_ok(dst[i] + o, want.b + o, saved_src, nsrc, o, es);
        bad += memcmp(dbase[i], dsaved[i], at + lo) != 0;
        bad += memcmp(dbase[i] + at + hi, dsaved[i] + at + hi, sizeof(buf) - at - hi) != 0;
    }
    for (uint32_t q = ndst; q < nsrc; q++)
        bad += memcmp(srcs[q].b, before[q].b, sizeof(buf)) != 0;
    for (uint32_t q = 0; q < nsrc && q < ndst; q++)
        if (dst[q] != src[q])
            bad += memcmp(srcs[q].b, before[q].b, sizeof(buf)) != 0;
    return bad;
}

/* Points src and dst into the buffers, at off[i] past the guard (NULL:
 * random offsets): destinations in their own buffers or, in place, the
 * first ones at the sources (which then sit at off[i] too). */
static void place(unsigned char **src, uint32_t nsrc, unsigned char **dst, uint32_t ndst,
                  const size_t *off, bool in_place)
{
    for (uint32_t q = 0; q < nsrc; q++)
        src[q] = srcs[q].b + GUARD + (in_place && off ? off[q % MAXD] : rng() % SLACK);
    for (uint32_t i = 0; i < ndst; i++) {
        if (in_place && i < nsrc) {
            dst[i] = src[i];
            dbase[i] = srcs[i].b;
            dsaved[i] = before[i].b;
        } else {
            dst[i] = dsts[i].b + GUARD + (off ? off[i] : rng() % SLACK);
            dbase[i] = dsts[i].b;
            dsaved[i] = before[MAXS + i].b;
        }
    }
}

/* Fills everything and saves it (after the sources are placed). */
static void prepare(unsigned char *const *src, uint32_t nsrc, size_t bytes, size_t es)
{
    for (uint32_t i = 0; i < MAXD; i++)
        memset(dsts[i].b, 0xa5, sizeof(buf));
    for (uint32_t q = 0; q < MAXS; q++)
        memset(srcs[q].b, 0x5a, sizeof(buf));
    fill_sources(src, nsrc, bytes, es);
    for (uint32_t q = 0; q < MAXS; q++)
        before[q] = srcs[q];
    for (uint32_t i = 0; i < MAXD; i++)
        before[MAXS + i] = dsts[i];
}

static unsigned check_lines(weft__reduce_fn pair, weft__reduce_lines_fn lines, size_t es,
                            uint32_t nsrc, uint32_t ndst, bool nt, bool in_place)
{
    unsigned bad = 0;
    static const size_t nlines[] = {0, 1, 2, 9};
    for (size_t k = 0; k < sizeof nlines / sizeof nlines[0]; k++) {
        /* Streaming: the destinations 64-aligned, begin a line boundary. */
        size_t begin = nt ? 64 : es * (rng() % 8), end = begin + 64 * nlines[k];
        unsigned char *src[MAXS], *dst[MAXD];
        static const size_t aligned[MAXD] = {0, 0, 0, 0};
        place(src, nsrc, dst, ndst, nt ? aligned : NULL, in_place);
        prepare(src, nsrc, end, es);
        reference(pair, src, nsrc, end, es);
        lines(dst, ndst, (const unsigned char *const *)src, nsrc, begin, end, nt);
        if (nt)
            __atomic_thread_fence(__ATOMIC_SEQ_CST);
        bad += compare(dst, ndst, src, nsrc, begin, end);
    }
    return bad;
}

static void test_line_kernels(void)
{
    unsigned tiers = 0;
    for (unsigned tier = 0; tier < WEFT__REDUCE_TIER_COUNT; tier++) {
        if (!weft__reduce_lines_get_tier(WEFT_INT8, WEFT_SUM, (weft__reduce_tier)tier))
            continue;
        tiers++;
        for (unsigned t = 0; t < WEFT__DTYPE_COUNT; t++) {
            for (unsigned op = 0; op < WEFT__REDOP_COUNT; op++) {
                weft__reduce_tier tr = (weft__reduce_tier)tier;
                weft__reduce_fn pair = weft__reduce_get_tier((weft_dtype)t, (weft_redop)op, tr);
                weft__reduce_lines_fn lines =
                    weft__reduce_lines_get_tier((weft_dtype)t, (weft_redop)op, tr);
                CHECK(pair && lines);
                if (!pair || !lines)
                    continue;
                size_t es = weft_dtype_size((weft_dtype)t);
                g_type = (weft_dtype)t;
                g_op = (weft_redop)op;
                unsigned bad = 0;
                for (uint32_t nsrc = 2; nsrc <= MAXS; nsrc += nsrc < 4 ? 1 : 3)
                    for (uint32_t ndst = 1; ndst <= MAXD; ndst++)
                        for (int v = 0; v < 4; v++)
                            bad += check_lines(pair, lines, es, nsrc, ndst, v & 1, v & 2);
                if (bad)
                    fprintf(stderr, "tier %s: %s %s: %u wrong\n", weft__reduce_tier_name(tr),
                            weft_dtype_name((weft_dtype)t), weft_redop_name((weft_redop)op), bad);
                CHECK_INT(bad, 0);
            }
        }
    }
    CHECK(tiers >= 1);
}

/* weft__shared_combine of bytes: the destinations at dst_off (NULL:
 * random, each its own), in place or not, streaming or not. */
static unsigned check_combine(const weft__reducer *red, uint32_t nsrc, uint32_t ndst, size_t bytes,
                              const size_t *dst_off, bool nt, bool in_place)
{
    static _Alignas(64) unsigned char work[WEFT__SHARED_TILE];
    unsigned char *src[MAXS], *dst[MAXD];
    place(src, nsrc, dst, ndst, dst_off, in_place);
    prepare(src, nsrc, bytes, red->es);
    reference(red->pair, src, nsrc, bytes, red->es);
    weft__shared_combine(work, src, nsrc, dst, ndst, bytes, red, nt);
    return compare(dst, ndst, src, nsrc, 0, bytes);
}

static void test_combine(void)
{
    static const weft_dtype types[] = {WEFT_INT8, WEFT_HALF, WEFT_FLOAT, WEFT_DOUBLE};
    static const size_t alike[MAXD] = {8, 8, 8, 8}, apart[MAXD] = {0, 16, 8, 40};
    for (unsigned tier = 0; tier < WEFT__REDUCE_TIER_COUNT; tier++) {
        weft__reduce_tier tr = (weft__reduce_tier)tier;
        if (!weft__reduce_lines_get_tier(WEFT_INT8, WEFT_SUM, tr))
            continue;
        for (size_t k = 0; k < sizeof types / sizeof types[0]; k++) {
            weft_dtype t = types[k];
            g_type = t;
            g_op = (weft_redop)(k % 4);
            weft__reducer red = {.pair = weft__reduce_get_tier(t, (weft_redop)(k % 4), tr),
                                 .lines = weft__reduce_lines_get_tier(t, (weft_redop)(k % 4), tr),
                                 .es = weft_dtype_size(t)};
            unsigned bad = 0;
            for (size_t n = 0; n * red.es <= MAXBYTES; n += 1 + n / 3) {
                for (int v = 0; v < 12; v++) {
                    const size_t *off = v % 3 == 0 ? alike : v % 3 == 1 ? apart : NULL;
                    bad += check_combine(&red, 2 + (uint32_t)(v % 4), 1 + (uint32_t)(v % 3),
                                         n * red.es, off, v & 1, v & 2 && v % 3 == 2);
                }
            }
            if (bad)
                fprintf(stderr, "combine, tier %s: %s: %u wrong\n", weft__reduce_tier_name(tr),
                        weft_dtype_name(t), bad);
            CHECK_INT(bad, 0);
        }
    }
}

static void test_reducer(void)
{
    weft__reducer red;
    CHECK(weft__reducer_get(WEFT_BFLOAT16, WEFT_MAX, &red));
    weft__reduce_tier best = weft__reduce_best_tier();
    CHECK(red.pair == weft__reduce_get_tier(WEFT_BFLOAT16, WEFT_MAX, best));
    CHECK(red.lines == weft__reduce_lines_get_tier(WEFT_BFLOAT16, WEFT_MAX, best));
    CHECK_INT(red.es, 2);
    CHECK(!weft__reducer_get((weft_dtype)12, WEFT_SUM, &red));
    CHECK(red.pair == NULL && red.lines == NULL && red.es == 0);
    CHECK(!weft__reducer_get(WEFT_FLOAT, (weft_redop)4, &red));
    CHECK(weft__reduce_lines_get_tier(WEFT_FLOAT, WEFT_SUM, (weft__reduce_tier)9) == NULL);
    CHECK(weft__reduce_lines_get_tier(WEFT_FLOAT, WEFT_SUM, WEFT__REDUCE_PORTABLE) != NULL);
}

int main(void)
{
    test_reducer();
    test_line_kernels();
    test_combine();
    return weft_test_done();
}
