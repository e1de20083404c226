/* The lookup generator and the trace writer (weft/embedding.h; the
 * matrix of its lookups is emb_fwd.c's).
 *
 * A zipf table draws from the cumulative sums of its rows' integer weights
 * (base/rand.h, rank k has floor(2^40 / k^s)): a draw is an exact integer
 * u in [0, total) and a search for the first rank whose sum passes u,
 * started from a guide table (Chen and Asau, 1974: guide[i] is the answer
 * for the least u of the i-th of 2^g slices of [0, 2^bits(total)), 2^g
 * the least power of two >= R), so a draw reads about two sums whatever R
 * (a binary search read 20 sums at 1M rows) and divides by nothing: u's
 * rejection bound and reciprocal are the sampler's (weft__rng_range, made
 * once; weft__rng_below divides twice a draw). The guide has about 4 bytes
 * a row and u is uniform, so the guide entry a draw reads is anywhere in
 * MBs: a wait for memory, then another for the sums it points to. Draws
 * are made DRAWS at a time, each part for all of them before the next
 * part, so that their waits overlap. The weights are made eight ranks at a
 * time (weft__zipf_weights: their chains of products overlap). With more
 * than 2^23 rows the weights are divided by 2^(bits(R - 1) - 23) (at least
 * 1), so that the total stays below 2^64. Tables with the same rows and
 * exponent share one array (8 bytes a row). A uniform table draws its row
 * directly. No floating point anywhere: a (workload, seed) gives the same
 * lookups on every platform. */
#include <inttypes.h>
#include <string.h>

#include "base/alloc.h"
#include "base/intmath.h"
#include "base/par.h"
#include "base/rand.h"
#include "work/emb_internal.h"

__extension__ typedef unsigned __int128 u128;

/* Draws made together (their reads of memory overlap). */
#define DRAWS 64

typedef struct sampler {
    uint64_t rows;
    uint32_t milli;        /* 0: uniform, no array */
    uint64_t *cum;         /* cum[k] = weights of ranks 1..k+1 */
    uint32_t *guide;       /* 2^g entries: the first k with cum[k] > i << shift */
    unsigned shift;        /* u's slice is u >> shift */
    uint64_t mult;         /* rank k (0-based) is row (k * mult) mod rows */
    uint64_t recip;        /* floor((2^64 - 1) / rows): the mod without a division */
    weft__rng_range range; /* u's: [0, rows), or [0, the total weight) */
} sampler;

/* The first number >= floor(R * 0.6180339887...) (at least 1) coprime
 * with R: a bijection of the ranks that spreads the hot ones. */
static uint64_t spread_mult(uint64_t rows)
{
    uint64_t a = (uint64_t)(((u128)rows * 0x9E3779B97F4A7C15u) >> 64);
    if (a == 0)
        a = 1;
    while (weft__gcd64(a, rows) != 1)
        a++;
    return a;
}

/* The zipf weights of ranks 1 .. rows into out, ZIPF_CHUNK ranks a
 * weft__par_for item (each weight depends on its rank alone). */
#define ZIPF_CHUNK 65536

typedef struct zipf_fill {
    weft__zipf z;
    uint64_t rows, *out;
} zipf_fill;

static weft_err zipf_chunk(void *ctx, size_t item, unsigned worker)
{
    const zipf_fill *f = ctx;
    (void)worker;
    uint64_t k0 = (uint64_t)item * ZIPF_CHUNK, count = f->rows - k0;
    weft__zipf_weights(&f->z, k0 + 1, count < ZIPF_CHUNK ? count : ZIPF_CHUNK, f->out + k0);
    return WEFT_OK;
}

static weft_err sampler_build(sampler *sp, uint64_t rows, uint32_t milli, weft_diag *d)
{
    sp->rows = rows;
    sp->milli = milli;
    sp->cum = NULL;
    sp->guide = NULL;
    sp->mult = spread_mult(rows);
    sp->recip = UINT64_MAX / rows;
    weft__rng_range_init(&sp->range, rows);
    if (!milli)
        return WEFT_OK;
    sp->cum = weft__malloc((size_t)rows * sizeof *sp->cum);
    unsigned g = 0;
    while ((1ull << g) < rows)
        g++;
    sp->guide = weft__malloc(((size_t)1 << g) * sizeof *sp->guide);
    if (!sp->cum || !sp->guide) {
        weft__free(sp->cum);
        weft__free(sp->guide);
        sp->cum = NULL;
        sp->guide = NULL;
        return weft_diag_set(d, WEFT_ENOMEM,
                             "out of memory for the zipf weights of %" PRIu64 " rows", rows);
    }
    unsigned bits = 0;
    while (bits < 64 && ((rows - 1) >> bits) != 0)
        bits++;
    unsigned shift = bits > 23 ? bits - 23 : 0;
    zipf_fill f;
    weft__zipf_init(&f.z, milli);
    f.rows = rows;
    f.out = sp->cum; /* then summed in place */
    size_t chunks = (size_t)((rows + ZIPF_CHUNK - 1) / ZIPF_CHUNK);
    weft__par_for(chunks, weft__par_workers(chunks), zipf_chunk, &f);
    uint64_t sum = 0;
    for (uint64_t k = 0; k < rows; k++) {
        uint64_t w = sp->cum[k] >> shift;
        sum += w ? w : 1; /* <= 2^27 * 2^40 / 2^4 < 2^64 */
        sp->cum[k] = sum;
    }
    weft__rng_range_init(&sp->range, sum);
    unsigned tbits = 0; /* sum < 2^tbits */
    while (tbits < 64 && (sum >> tbits) != 0)
        tbits++;
    sp->shift = tbits > g ? tbits - g : 0;
    uint64_t k = 0;
    for (uint64_t i = 0; i < (1ull << g); i++) {
        uint64_t lo = i << sp->shift;
        while (k < rows - 1 && sp->cum[k] <= lo)
            k++;
        sp->guide[i] = (uint32_t)k;
    }
    return WEFT_OK;
}

/* A draw in three parts, so that a batch of draws waits for memory once:
 * u (a uniform table's row), the guide entry (whose read is started
 * first), then the search (whose first sum's read is started first). */
static uint64_t draw_u(const sampler *sp, weft__rng *g)
{
    uint64_t u = weft__rng_below_range(g, &sp->range);
    if (!sp->cum)
        return u;
    __builtin_prefetch(&sp->guide[u >> sp->shift]);
    return u;
}

/* u's slice starts at or before u, so its guide is no later than the
 * answer. */
static uint64_t draw_guide(const sampler *sp, uint64_t u)
{
    if (!sp->cum)
        return u;
    uint64_t k = sp->guide[u >> sp->shift];
    __builtin_prefetch(&sp->cum[k]);
    return k;
}

static uint64_t draw_row(const sampler *sp, uint64_t u, uint64_t k)
{
    if (!sp->cum)
        return u;
    while (sp->cum[k] <= u)
        k++;
    /* x mod rows for x = k * mult < 2^54 (k, mult < 2^27): the quotient
     * x * recip / 2^64 is short of x / rows by less than 1 + x / 2^64 < 2,
     * so the remainder left is below 2 * rows (Barrett, "Implementing the
     * Rivest Shamir and Adleman public key encryption algorithm on a
     * standard digital signal processor", CRYPTO 1986). */
    uint64_t x = k * sp->mult, r = x - (uint64_t)(((u128)x * sp->recip) >> 64) * sp->rows;
    return r >= sp->rows ? r - sp->rows : r;
}

/* The samplers of w's tables: (*of)[t] indexes (*sps)[]. */
typedef struct samplers {
    sampler *sp;
    uint32_t count;
    uint32_t *of;
} samplers;

static void samplers_free(samplers *s)
{
    for (uint32_t i = 0; i < s->count; i++) {
        weft__free(s->sp[i].cum);
        weft__free(s->sp[i].guide);
    }
    weft__free(s->sp);
    weft__free(s->of);
}

/* O(tables x distinct laws). */
static weft_err samplers_build(const weft_emb_workload *w, samplers *s, weft_diag *d)
{
    memset(s, 0, sizeof *s);
    s->sp = weft__calloc(w->ntables, sizeof *s->sp);
    s->of = weft__malloc((size_t)w->ntables * sizeof *s->of);
    if (!s->sp || !s->of) {
        samplers_free(s);
        return weft_diag_set(d, WEFT_ENOMEM, "out of memory for %" PRIu32 " tables' samplers",
                             w->ntables);
    }
    for (uint32_t t = 0; t < w->ntables; t++) {
        const weft_emb_table *tb = &w->tables[t];
        uint32_t i = 0;
        while (i < s->count && !(s->sp[i].rows == tb->rows && s->sp[i].milli == tb->zipf_milli))
            i++;
        if (i == s->count) {
            weft_err e = sampler_build(&s->sp[i], tb->rows, tb->zipf_milli, d);
            if (e) {
                samplers_free(s);
                return e;
            }
            s->count++;
        }
        s->of[t] = i;
    }
    return WEFT_OK;
}

struct weft__emb_draws {
    samplers s;
    weft__rng *g; /* per table */
};

weft_err weft__emb_draws_new(const weft_emb_workload *w, weft__emb_draws **out, weft_diag *d)
{
    *out = NULL;
    weft__emb_draws *ds = weft__calloc(1, sizeof *ds);
    if (!ds)
        return weft_diag_set(d, WEFT_ENOMEM, "out of memory for the lookup generator");
    weft_err e = samplers_build(w, &ds->s, d);
    if (e) {
        weft__free(ds);
        return e;
    }
    ds->g = weft__malloc(((size_t)w->ntables + 1) * sizeof *ds->g);
    if (!ds->g) {
        weft__emb_draws_free(ds);
        return weft_diag_set(d, WEFT_ENOMEM, "out of memory for %" PRIu32 " tables' generators",
                             w->ntables);
    }
    for (uint32_t t = 0; t < w->ntables; t++)
        weft__rng_seed(&ds->g[t], w->seed, t);
    *out = ds;
    return WEFT_OK;
}

void weft__emb_draws_free(weft__emb_draws *ds)
{
    if (!ds)
        return;
    if (ds->s.sp)
        samplers_free(&ds->s);
    weft__free(ds->g);
    weft__free(ds);
}

/* DRAWS at a time in three parts, as weft_emb_generate_steps. The
 * table's generator is drawn from a copy on the stack and written back
 * once: two tables' generators share a cache line, and threads drawing
 * neighbouring tables would take it from each other at every draw. */
void weft__emb_draws_table(weft__emb_draws *ds, uint32_t t, uint64_t n, uint64_t *out)
{
    const sampler *sp = &ds->s.sp[ds->s.of[t]];
    weft__rng g = ds->g[t];
    uint64_t u[DRAWS], k[DRAWS];
    for (uint64_t at = 0; at < n; at += DRAWS) {
        uint32_t nq = n - at < DRAWS ? (uint32_t)(n - at) : DRAWS;
        for (uint32_t j = 0; j < nq; j++)
            u[j] = draw_u(sp, &g);
        for (uint32_t j = 0; j < nq; j++)
            k[j] = draw_guide(sp, u[j]);
        for (uint32_t j = 0; j < nq; j++)
            out[at + j] = draw_row(sp, u[j], k[j]);
    }
    ds->g[t] = g;
}

weft_err weft_emb_generate(const weft_emb_workload *w, weft_emb_lookup_fn fn, void *ctx,
                           weft_diag *d)
{
    return weft_emb_generate_steps(w, 1, fn, ctx, d);
}

weft_err weft_emb_generate_steps(const weft_emb_workload *w, uint64_t steps, weft_emb_lookup_fn fn,
                                 void *ctx, weft_diag *d)
{
    weft_err e = weft_emb_check(w, d);
    if (e)
        return e;
    weft__emb_draws *ds;
    if ((e = weft__emb_draws_new(w, &ds, d)))
        return e;
    const samplers *sm = &ds->s;
    weft__rng *g = ds->g;
    u128 all = (u128)w->gpus * w->batch * steps;
    if (all > UINT64_MAX)
        all = UINT64_MAX;
    uint64_t samples = (uint64_t)all;
    /* The lookups in order (sample, table, pooling), DRAWS at a time: each
     * table's generator is drawn from in its lookups' order, so the rows
     * are those of one draw after another. */
    struct {
        uint64_t smp, u, k;
        uint32_t t;
    } q[DRAWS];
    uint64_t smp = 0;
    uint32_t t = 0, p = 0;
    while (t < w->ntables && !w->tables[t].pooling)
        t++;
    if (t == w->ntables) /* no lookups */
        samples = 0;
    while (smp < samples && !e) {
        uint32_t nq = 0;
        for (; nq < DRAWS && smp < samples; nq++) {
            q[nq].smp = smp;
            q[nq].t = t;
            q[nq].u = draw_u(&sm->sp[sm->of[t]], &g[t]);
            if (++p < w->tables[t].pooling)
                continue;
            p = 0;
            do { /* the next table with lookups, in this sample or the next */
                if (++t == w->ntables) {
                    t = 0;
                    smp++;
                }
            } while (!w->tables[t].pooling);
        }
        for (uint32_t j = 0; j < nq; j++)
            q[j].k = draw_guide(&sm->sp[sm->of[q[j].t]], q[j].u);
        for (uint32_t j = 0; j < nq && !e; j++)
            e = fn(ctx, q[j].smp, q[j].t, draw_row(&sm->sp[sm->of[q[j].t]], q[j].u, q[j].k), d);
    }
    weft__emb_draws_free(ds);
    return e;
}

/* ---- the trace writer ---------------------------------------------------- */

typedef struct writer {
    FILE *f;
    char buf[1 << 16];
    size_t len;
} writer;

static bool writer_flush(writer *wr)
{
    bool ok = fwrite(wr->buf, 1, wr->len, wr->f) == wr->len;
    wr->len = 0;
    return ok;
}

static char *put_u64(char *p, uint64_t v)
{
    char tmp[24];
    int n = 0;
    do {
        tmp[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    while (n)
        *p++ = tmp[--n];
    return p;
}

static weft_err to_writer(void *ctx, uint64_t s, uint32_t t, uint64_t r, weft_diag *d)
{
    writer *wr = ctx;
    if (wr->len > sizeof wr->buf - 64 && !writer_flush(wr))
        return weft_diag_set(d, WEFT_EIO, "cannot write the trace");
    char *p = wr->buf + wr->len, *start = p;
    p = put_u64(p, s);
    *p++ = ',';
    p = put_u64(p, t);
    *p++ = ',';
    p = put_u64(p, r);
    *p++ = '\n';
    wr->len += (size_t)(p - start);
    return WEFT_OK;
}

weft_err weft_emb_trace_write(FILE *f, const weft_emb_workload *w, const char *comment,
                              weft_diag *d)
{
    weft_err e = weft_emb_check(w, d);
    if (e)
        return e;
    writer *wr = weft__malloc(sizeof *wr);
    if (!wr)
        return weft_diag_set(d, WEFT_ENOMEM, "out of memory writing a trace");
    wr->f = f;
    wr->len = 0;
    for (const char *c = comment; c && *c;) {
        const char *nl = strchr(c, '\n');
        size_t len = nl ? (size_t)(nl - c) : strlen(c);
        fprintf(f, "# %.*s\n", (int)len, c);
        c += len + (nl != NULL);
    }
    fputs("# sample,table,row\n", f);
    e = weft_emb_generate(w, to_writer, wr, d);
    if (!e && (!writer_flush(wr) || fflush(f) != 0 || ferror(f)))
        e = weft_diag_set(d, WEFT_EIO, "cannot write the trace");
    weft__free(wr);
    return e;
}
