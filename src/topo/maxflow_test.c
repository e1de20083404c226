/* Max-flow: a textbook network with a known answer, random networks against
 * brute-force enumeration of every cut (both algorithms, reused graph),
 * limits, argument errors, overflow and the allocation-failure sweep. */
#include <stdlib.h>

#include "base/alloc.h"
#include "base/testing.h"
#include "weft/maxflow.h"

/* The CLRS network (Figure 26.1): max flow 23 from 0 to 5. */
static const struct {
    uint32_t u, v;
    int64_t c;
} clrs[] = {{0, 1, 16}, {0, 2, 13}, {1, 3, 12}, {2, 1, 4}, {2, 4, 14},
            {3, 2, 9},  {3, 5, 20}, {4, 3, 7},  {4, 5, 4}};

static weft_err build_clrs(weft_maxflow **out)
{
    weft_maxflow *m;
    weft_err e = weft_maxflow_new(6, 2, &m);
    if (e)
        return e;
    for (size_t i = 0; i < sizeof clrs / sizeof clrs[0]; i++) {
        e = weft_maxflow_add_arc(m, clrs[i].u, clrs[i].v, clrs[i].c, NULL);
        if (e)
            goto fail;
    }
    e = weft_maxflow_freeze(m);
    if (e)
        goto fail;
    *out = m;
    return WEFT_OK;
fail:
    weft_maxflow_free(m);
    return e;
}

static weft_err ctor_clrs(void *arg)
{
    return build_clrs((weft_maxflow **)arg);
}

static void dtor_clrs(void *arg)
{
    weft_maxflow_free(*(weft_maxflow **)arg);
}

static const weft_mf_algo algos[] = {WEFT_MF_DINIC, WEFT_MF_PUSH_RELABEL};

/* Capacity of the cut given by side[] (1 = source side), from the arc list. */
static int64_t cut_value(const uint32_t *au, const uint32_t *av, const int64_t *ac, uint32_t na,
                         const uint8_t *side)
{
    int64_t c = 0;
    for (uint32_t a = 0; a < na; a++)
        if (side[au[a]] && !side[av[a]])
            c += ac[a];
    return c;
}

static void test_clrs(void)
{
    weft_maxflow *m = NULL;
    CHECK_ERR(build_clrs(&m), WEFT_OK);
    if (!m)
        return;
    CHECK_INT(weft_maxflow_num_nodes(m), 6);
    CHECK_INT(weft_maxflow_num_arcs(m), 9);
    for (size_t k = 0; k < 2; k++) {
        int64_t f = -1;
        CHECK_ERR(weft_maxflow_run(m, algos[k], 0, 5, -1, &f), WEFT_OK);
        CHECK_INT(f, 23);
        uint8_t side[6];
        uint32_t ns = weft_maxflow_source_side(m, side);
        /* The largest minimum source side is {0, 1, 2, 4}: arcs 1->3 (12),
         * 4->3 (7) and 4->5 (4) cross it. */
        CHECK_INT(ns, 4);
        CHECK(side[0] && side[1] && side[2] && !side[3] && side[4] && !side[5]);
        /* Flow conservation at every inner node. */
        for (uint32_t v = 1; v < 5; v++) {
            int64_t bal = 0;
            for (uint32_t a = 0; a < 9; a++) {
                if (clrs[a].v == v)
                    bal += weft_maxflow_flow(m, a);
                if (clrs[a].u == v)
                    bal -= weft_maxflow_flow(m, a);
            }
            if (algos[k] == WEFT_MF_DINIC)
                CHECK_INT(bal, 0);
            else
                CHECK(bal >= 0); /* a preflow */
        }
    }
    /* Dinic with a limit stops at it. */
    int64_t f = -1;
    CHECK_ERR(weft_maxflow_run(m, WEFT_MF_DINIC, 0, 5, 10, &f), WEFT_OK);
    CHECK_INT(f, 10);
    CHECK_ERR(weft_maxflow_run(m, WEFT_MF_DINIC, 0, 5, 100, &f), WEFT_OK);
    CHECK_INT(f, 23);
    /* Capacities change between runs without rebuilding. */
    weft_maxflow_set_cap(m, 6, 5); /* 3->5: 20 -> 5 */
    CHECK_INT(weft_maxflow_cap(m, 6), 5);
    for (size_t k = 0; k < 2; k++) {
        CHECK_ERR(weft_maxflow_run(m, algos[k], 0, 5, -1, &f), WEFT_OK);
        CHECK_INT(f, 9);
    }
    /* Reverse direction: nothing reaches 0. */
    for (size_t k = 0; k < 2; k++) {
        CHECK_ERR(weft_maxflow_run(m, algos[k], 5, 0, -1, &f), WEFT_OK);
        CHECK_INT(f, 0);
    }
    CHECK_ERR(weft_maxflow_run(m, WEFT_MF_DINIC, 2, 2, -1, &f), WEFT_EINVAL);
    CHECK_ERR(weft_maxflow_run(m, WEFT_MF_DINIC, 0, 6, -1, &f), WEFT_EINVAL);
    CHECK_ERR(weft_maxflow_add_arc(m, 0, 1, 1, NULL), WEFT_EINVAL); /* frozen */
    weft_maxflow_free(m);
}

static void test_errors(void)
{
    weft_maxflow *m = NULL;
    CHECK_ERR(weft_maxflow_new(0, 0, &m), WEFT_EINVAL);
    CHECK_ERR(weft_maxflow_new(3, 0, &m), WEFT_OK);
    if (!m)
        return;
    int64_t f;
    CHECK_ERR(weft_maxflow_run(m, WEFT_MF_DINIC, 0, 1, -1, &f), WEFT_EINVAL); /* not frozen */
    CHECK_ERR(weft_maxflow_add_arc(m, 0, 0, 1, NULL), WEFT_EINVAL);
    CHECK_ERR(weft_maxflow_add_arc(m, 0, 3, 1, NULL), WEFT_EINVAL);
    CHECK_ERR(weft_maxflow_add_arc(m, 0, 1, -1, NULL), WEFT_EINVAL);
    uint32_t a0 = 9, a1 = 9;
    CHECK_ERR(weft_maxflow_add_arc(m, 0, 1, INT64_MAX, &a0), WEFT_OK);
    CHECK_ERR(weft_maxflow_add_arc(m, 0, 2, 1, &a1), WEFT_OK);
    CHECK_INT(a0, 0);
    CHECK_INT(a1, 1);
    CHECK_ERR(weft_maxflow_freeze(m), WEFT_OK);
    CHECK_ERR(weft_maxflow_freeze(m), WEFT_EINVAL);
    /* INT64_MAX + 1 leaves the source: refused rather than wrapped. */
    CHECK_ERR(weft_maxflow_run(m, WEFT_MF_DINIC, 0, 1, -1, &f), WEFT_EOVERFLOW);
    weft_maxflow_set_cap(m, 1, 0);
    CHECK_ERR(weft_maxflow_run(m, WEFT_MF_PUSH_RELABEL, 0, 1, -1, &f), WEFT_OK);
    CHECK_INT(f, INT64_MAX);
    weft_maxflow_free(m);
    weft_maxflow_free(NULL);
}

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;

static uint32_t rnd(uint32_t n)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (uint32_t)(rng_state % n);
}

/* Random networks of up to 10 nodes: the flow equals the smallest cut over
 * every subset holding s and not t, for both algorithms, and the reported
 * source side is a minimum cut. */
static void test_random(void)
{
    int mismatches = 0, cases = 0;
    for (int iter = 0; iter < 300; iter++) {
        uint32_t n = 2 + rnd(9);
        uint32_t na = 0, au[60], av[60];
        int64_t ac[60];
        weft_maxflow *m = NULL;
        if (weft_maxflow_new(n, 0, &m)) {
            CHECK(0);
            return;
        }
        uint32_t want = rnd(40) + 1;
        for (uint32_t i = 0; i < want && na < 60; i++) {
            uint32_t u = rnd(n), v = rnd(n);
            if (u == v)
                continue;
            /* Large capacities exercise the int64 paths too. */
            int64_t c = rnd(4) == 0 ? (int64_t)rnd(1000000) * 1000000007 : rnd(20);
            au[na] = u;
            av[na] = v;
            ac[na] = c;
            CHECK_ERR(weft_maxflow_add_arc(m, u, v, c, NULL), WEFT_OK);
            na++;
        }
        CHECK_ERR(weft_maxflow_freeze(m), WEFT_OK);
        for (int pair = 0; pair < 3; pair++) {
            uint32_t s = rnd(n), t = rnd(n);
            if (s == t)
                continue;
            int64_t best = INT64_MAX;
            uint8_t side[16];
            for (uint32_t mask = 0; mask < (1u << n); mask++) {
                if (!(mask >> s & 1) || (mask >> t & 1))
                    continue;
                for (uint32_t v = 0; v < n; v++)
                    side[v] = mask >> v & 1;
                int64_t c = cut_value(au, av, ac, na, side);
                if (c < best)
                    best = c;
            }
            for (size_t k = 0; k < 2; k++) {
                int64_t f = -1;
                cases++;
                if (weft_maxflow_run(m, algos[k], s, t, -1, &f) != WEFT_OK || f != best) {
                    mismatches++;
                    fprintf(stderr, "iter %d n %u s %u t %u algo %zu: flow %lld, cut %lld\n", iter,
                            n, s, t, k, (long long)f, (long long)best);
                    continue;
                }
                weft_maxflow_source_side(m, side);
                if (!side[s] || side[t] || cut_value(au, av, ac, na, side) != best)
                    mismatches++;
                /* With a limit below the maximum Dinic stops there. */
                if (algos[k] == WEFT_MF_DINIC && best > 1) {
                    weft_maxflow_run(m, algos[k], s, t, best / 2, &f);
                    if (f != best / 2)
                        mismatches++;
                }
            }
        }
        weft_maxflow_free(m);
    }
    CHECK(cases > 1000);
    CHECK_INT(mismatches, 0);
}

int main(void)
{
    test_clrs();
    test_errors();
    test_random();
    weft_maxflow *m = NULL;
    CHECK(weft_test_oom_sweep("maxflow build", ctor_clrs, dtor_clrs, &m) > 5);
    return weft_test_done();
}
