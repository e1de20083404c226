/* Topology search over the direct-connect family of Zhao et al. (NSDI'25,
 * arXiv 2202.03356, section 5): for N ranks and degree d, the base graphs
 * of that size and degree, line graphs and degree expansions of smaller
 * bases, and Cartesian products of two bases whose sizes multiply to N and
 * whose degrees add to d; each is scored by its BFB schedule (T_L, T_B)
 * and the Pareto frontier is marked. See weft/synth.h for the contract.
 *
 * The family, as specs the topo module builds (every base carries bw=B):
 *   base(n, k):  ring:n (k = 1), full:n (k = n-1), bipartite:n (n = 2k),
 *                genkautz:n,k, circulant:n with k/2 offsets 1, s, s^2, ...
 *                for the three s nearest n^(2/k) (odd k and even n add the
 *                offset n/2), debruijn:k,j (n = k^j), hypercube:j (n = 2^j,
 *                k = j);
 *   line(base(N/d, d)) and line(line(base(N/d^2, d)));
 *   expand(base(N/m, d/m); m) for every m >= 2 dividing d and N;
 *   product(base(n1, d1); base(N/n1, d - d1)) for n1 <= N/n1 dividing N.
 * A generated graph that is disconnected or otherwise refused (genkautz
 * with d = 1, a circulant whose offsets do not generate Z_n), or of another
 * size (the line graph of a base whose self-loops were dropped has fewer
 * than n' * d ranks), is skipped.
 * Cost: one BFB analysis (O(N^2) time and memory) per candidate. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "base/alloc.h"
#include "weft/synth.h"

typedef struct specs {
    char (*s)[WEFT_DC_SPEC_MAX];
    size_t n, cap;
} specs;

static weft_err push(specs *l, const char *text)
{
    if (strlen(text) >= WEFT_DC_SPEC_MAX)
        return WEFT_OK; /* too long to keep: not a candidate */
    for (size_t i = 0; i < l->n; i++)
        if (strcmp(l->s[i], text) == 0)
            return WEFT_OK;
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 32;
        void *p = weft__realloc(l->s, cap * sizeof *l->s);
        if (!p)
            return WEFT_ENOMEM;
        l->s = p;
        l->cap = cap;
    }
    snprintf(l->s[l->n++], WEFT_DC_SPEC_MAX, "%s", text);
    return WEFT_OK;
}

/* Pushes "OP(a)", "OP(OP(a))", "OP(a;m)" or "OP(a;b)". */
static weft_err push_op(specs *l, const char *op, const char *a, const char *b, uint32_t m,
                        bool twice)
{
    char buf[2 * WEFT_DC_SPEC_MAX + 32];
    if (b)
        snprintf(buf, sizeof buf, "%s(%s;%s)", op, a, b);
    else if (m)
        snprintf(buf, sizeof buf, "%s(%s;%u)", op, a, m);
    else if (twice)
        snprintf(buf, sizeof buf, "%s(%s(%s))", op, op, a);
    else
        snprintf(buf, sizeof buf, "%s(%s)", op, a);
    return push(l, buf);
}

static bool power_of(uint64_t n, uint32_t base, uint32_t *exp)
{
    uint32_t e = 0;
    if (base < 2)
        return false;
    while (n > 1 && n % base == 0) {
        n /= base;
        e++;
    }
    *exp = e;
    return n == 1 && e >= 1;
}

/* Circulant offsets 1, s, s^2, ... (k of them), distinct and <= n/2. */
static weft_err circulants(specs *l, uint32_t n, uint32_t deg, const char *bw)
{
    uint32_t k = deg / 2;
    bool half = deg % 2 == 1;
    if (half && n % 2)
        return WEFT_OK;
    if (n < 3 || k == 0 || k > 8)
        return WEFT_OK;
    double root = k > 1 ? pow((double)n, 1.0 / k) : 1.0;
    for (int delta = -1; delta <= 1; delta++) {
        long s = lround(root) + delta;
        if (k > 1 && s < 2)
            continue;
        char buf[WEFT_DC_SPEC_MAX];
        int at = snprintf(buf, sizeof buf, "circulant:%u", n);
        uint64_t off = 1;
        bool ok = true;
        for (uint32_t i = 0; i < k && ok; i++) {
            if (off > n / 2 || (half && 2 * off == n))
                ok = false;
            else
                at += snprintf(buf + at, sizeof buf - (size_t)at, ",%llu", (unsigned long long)off);
            off *= (uint64_t)s;
        }
        if (half && ok)
            at += snprintf(buf + at, sizeof buf - (size_t)at, ",%u", n / 2);
        if (!ok || at >= (int)sizeof buf - 40)
            continue;
        snprintf(buf + at, sizeof buf - (size_t)at, ",bw=%s", bw);
        weft_err e = push(l, buf);
        if (e)
            return e;
        if (k == 1)
            break;
    }
    return WEFT_OK;
}

/* The base graphs of n ranks and degree deg. */
static weft_err bases(specs *l, uint32_t n, uint32_t deg, const char *bw)
{
    char buf[WEFT_DC_SPEC_MAX];
    weft_err e = WEFT_OK;
    uint32_t j;
    if (n < 2 || deg == 0 || deg >= n)
        return WEFT_OK;
#define PUSH(...)                                                                                  \
    do {                                                                                           \
        snprintf(buf, sizeof buf, __VA_ARGS__);                                                    \
        if (!e)                                                                                    \
            e = push(l, buf);                                                                      \
    } while (0)
    if (deg == 1)
        PUSH("ring:%u,bw=%s", n, bw);
    if (deg == n - 1)
        PUSH("full:%u,bw=%s", n, bw);
    if (n == 2 * deg && n >= 4)
        PUSH("bipartite:%u,bw=%s", n, bw);
    if (deg >= 2)
        PUSH("genkautz:%u,%u,bw=%s", n, deg, bw);
    if (!e && deg >= 2)
        e = circulants(l, n, deg, bw);
    if (deg >= 2 && power_of(n, deg, &j) && j >= 2)
        PUSH("debruijn:%u,%u,bw=%s", deg, j, bw);
    if (power_of(n, 2, &j) && j == deg && deg >= 3)
        PUSH("hypercube:%u,bw=%s", j, bw);
#undef PUSH
    return e;
}

/* Every candidate spec of the family for (n, deg). */
static weft_err family(specs *out, uint32_t n, uint32_t deg, const char *bw)
{
    specs b = {0};
    weft_err e = bases(out, n, deg, bw);
    /* Line graphs: L(G) has |E(G)| = n' * deg nodes of the same degree. */
    if (!e && n % deg == 0 && deg >= 2) {
        b.n = 0;
        e = bases(&b, n / deg, deg, bw);
        for (size_t i = 0; !e && i < b.n; i++)
            e = push_op(out, "line", b.s[i], NULL, 0, false);
        if (!e && (n / deg) % deg == 0) {
            b.n = 0;
            e = bases(&b, n / deg / deg, deg, bw);
            for (size_t i = 0; !e && i < b.n; i++)
                e = push_op(out, "line", b.s[i], NULL, 0, true);
        }
    }
    /* Degree expansions by m. */
    for (uint32_t m = 2; !e && m <= deg; m++) {
        if (deg % m || n % m)
            continue;
        b.n = 0;
        e = bases(&b, n / m, deg / m, bw);
        for (size_t i = 0; !e && i < b.n; i++)
            e = push_op(out, "expand", b.s[i], NULL, m, false);
    }
    /* Cartesian products of two bases. */
    specs c = {0};
    for (uint64_t n1 = 2; !e && n1 * n1 <= n; n1++) {
        if (n % n1)
            continue;
        uint32_t n2 = (uint32_t)(n / n1);
        for (uint32_t d1 = 1; !e && d1 < deg; d1++) {
            uint32_t d2 = deg - d1;
            if (n1 == n2 && d1 > d2)
                continue;
            b.n = 0;
            c.n = 0;
            e = bases(&b, (uint32_t)n1, d1, bw);
            if (!e)
                e = bases(&c, n2, d2, bw);
            for (size_t i = 0; !e && i < b.n; i++)
                for (size_t k = 0; !e && k < c.n; k++)
                    e = push_op(out, "product", b.s[i], c.s[k], 0, false);
        }
    }
    weft__free(b.s);
    weft__free(c.s);
    return e;
}

void weft_dc_search_fini(weft_dc_search *s)
{
    if (!s)
        return;
    weft__free(s->cand);
    memset(s, 0, sizeof *s);
}

weft_err weft_dc_search_run(uint32_t n, uint32_t degree, weft_coll coll, weft_rat bw,
                            weft_dc_search *out, weft_diag *d)
{
    if (n < 2 || n > 8192)
        return weft_diag_set(d, WEFT_EINVAL, "the search takes 2 to 8192 ranks, not %u", n);
    if (degree < 1 || degree >= n)
        return weft_diag_set(d, WEFT_EINVAL,
                             "degree %u cannot be reached with %u ranks (1 <= d < N)", degree, n);
    if (coll != WEFT_COLL_ALLGATHER && coll != WEFT_COLL_REDUCESCATTER &&
        coll != WEFT_COLL_ALLREDUCE)
        return weft_diag_set(d, WEFT_EUNSUPPORTED,
                             "the search scores BFB schedules: allgather, reducescatter or "
                             "allreduce, not %s",
                             weft_coll_name(coll));
    char bwtext[64];
    weft_rat_format_exact(bw, bwtext, sizeof bwtext);
    specs l = {0};
    weft_err e = family(&l, n, degree, bwtext);
    weft_dc_search s;
    memset(&s, 0, sizeof s);
    if (!e && l.n == 0)
        e = weft_diag_set(d, WEFT_EINVAL, "no graph of the family has %u ranks and degree %u", n,
                          degree);
    else if (!e && !(s.cand = weft__calloc(l.n, sizeof *s.cand)))
        e = weft_diag_code(d, WEFT_ENOMEM);
    else if (e)
        weft_diag_code(d, e);
    for (size_t i = 0; !e && i < l.n; i++) {
        weft_topo *t = NULL;
        weft_bfb b;
        weft_err te = weft_topo_from_spec(l.s[i], NULL, &t, NULL);
        if (te == WEFT_ENOMEM) {
            e = weft_diag_code(d, te);
            break;
        }
        if (te)
            continue; /* not a graph of this family (disconnected, ...) */
        /* Line graphs of bases with dropped self-loops (genkautz,
         * debruijn) have fewer ranks than n: not of this size. */
        if (weft_topo_num_ranks(t) != n) {
            weft_topo_free(t);
            continue;
        }
        te = weft_bfb_analyze(t, coll, &b, NULL);
        /* Every node must have out-degree <= degree (products and
         * expansions keep it; this guards the family's arithmetic). */
        uint32_t maxdeg = 0;
        for (uint32_t v = 0; v < weft_topo_num_nodes(t); v++) {
            uint32_t first, count;
            weft_topo_out_links(t, (weft_node_id){v}, &first, &count);
            if (maxdeg < count)
                maxdeg = count;
        }
        weft_topo_free(t);
        if (te == WEFT_ENOMEM) {
            e = weft_diag_code(d, te);
            break;
        }
        if (te || maxdeg > degree)
            continue;
        weft_dc_candidate *c = &s.cand[s.count];
        snprintf(c->spec, sizeof c->spec, "%s", l.s[i]);
        c->steps = b.steps;
        c->algbw_stepwise = b.algbw_stepwise;
        if (weft_rat_div(bw, b.algbw_stepwise, &c->tb))
            continue;
        s.count++;
    }
    s.considered = l.n;
    weft__free(l.s);
    if (!e && s.count == 0)
        e = weft_diag_set(d, WEFT_EINVAL,
                          "no graph of the family with %u ranks and degree %u is connected", n,
                          degree);
    if (e) {
        weft_dc_search_fini(&s);
        return e;
    }
    /* Pareto: no other candidate has T_L <= and T_B <= with one strict.
     * Fabrics at the same point tie and all stay: neither is better, and
     * a user choosing between them wants to see both (debruijn:4,3 and
     * genkautz:64,4 at 64 ranks of degree 4). */
    for (size_t i = 0; i < s.count; i++) {
        bool dominated = false;
        for (size_t k = 0; k < s.count && !dominated; k++) {
            int cb = weft_rat_cmp(s.cand[k].tb, s.cand[i].tb);
            bool le = s.cand[k].steps <= s.cand[i].steps && cb <= 0;
            bool lt = s.cand[k].steps < s.cand[i].steps || cb < 0;
            dominated = le && lt;
        }
        s.cand[i].pareto = !dominated;
    }
    *out = s;
    return WEFT_OK;
}

size_t weft_dc_search_best(const weft_dc_search *s, double bytes, double alpha_s)
{
    size_t best = 0;
    double best_t = 0;
    for (size_t i = 0; i < s->count; i++) {
        double t = weft_dc_time(&s->cand[i], bytes, alpha_s);
        if (i == 0 || t < best_t || (t == best_t && s->cand[i].steps < s->cand[best].steps)) {
            best = i;
            best_t = t;
        }
    }
    return best;
}

double weft_dc_time(const weft_dc_candidate *c, double bytes, double alpha_s)
{
    /* algbw_stepwise is GB/s: bytes / (algbw * 1e9) seconds. */
    return c->steps * alpha_s + bytes / (weft_rat_to_double(c->algbw_stepwise) * 1e9);
}
