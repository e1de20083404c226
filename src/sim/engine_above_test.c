/* Refilling above the drained level (sim_engine_set_above; engine_rates.c,
 * "Refilling above") against the plain engine (sim_engine_set_plain: every
 * drain refills its whole component, as first written) on random
 * all-to-alls: random fabrics, random sparse matrices of distinct sizes
 * (the DLRM step's sparse row-wise and Herald all-to-alls, whose flows
 * drain one by one), several fabric sizes, per-flow and byte weights.
 * Every flow's start, drain and done times and first rate agree within
 * 1e-12 relative, and the refills above gave rates to fewer flows. A hand
 * case where a region must grow (a flow outside it left above a link's new
 * level), and one where a real change of 1e-11 of a rate must not be taken
 * for rounding. Leaving out links that cannot fill changes nothing. Then
 * the rule that decides where refilling above applies: with a dependency,
 * a queue or cut-through edge, a background class, a token bucket, or
 * plain filling, a run asked to refill above refills whole components, to
 * the bit. */
#include "base/testing.h"
#include "sim/engine.h"
#include "sim/testing_engine.h"

/* An all-to-all on H hosts of G GPUs behind S spines, drawn from seed:
 * GPU i has NVLink up 2i and down 2i + 1 to its host's switch (300 to 450
 * GB/s) and a NIC, tx 2N + 2i and rx 2N + 2i + 1 (25 to 100 GB/s); host h
 * reaches spine s over links 4N + 2(hS + s) up and + 1 down (50 to 200
 * GB/s). A pair in one host crosses NVLink; a pair across hosts is split
 * over two spines (coefficient 0.5 on each spine's links, 1 on the NICs,
 * as hashed ECMP). A quarter of the pairs send nothing (no flow, or every
 * eighth of those a flow of 0 bytes); the others send 1 KB to 1 GB (a
 * distinct size each, nearly surely), weighted 1 or, with `weights`, by
 * their bytes (the fluid model's alltoallv). Latencies 0 to 2 us. */
static sim_engine *a2a(uint32_t H, uint32_t G, uint32_t S, bool weights, uint64_t seed)
{
    uint64_t x = seed;
#define NEXT() sim_test_next(&x)
    uint32_t N = H * G, nl = 4 * N + 2 * H * S;
    double cap[4 * 64 + 2 * 8 * 4];
    for (uint32_t l = 0; l < nl; l++)
        cap[l] = 1e9 * (l < 2 * N   ? 300 + NEXT() % 151
                        : l < 4 * N ? 25 + NEXT() % 76
                                    : 50 + NEXT() % 151);
    sim_engine *e = NULL;
    CHECK_ERR(sim_engine_new(nl, cap, NULL, &e), WEFT_OK);
    if (!e)
        return NULL;
    for (uint32_t a = 0; a < N; a++)
        for (uint32_t b = 0; b < N; b++) {
            if (a == b)
                continue;
            uint32_t links[6], n = 0, r, f, ha = a / G, hb = b / G;
            double coef[6];
            bool none = NEXT() % 4 == 0;
            if (none && NEXT() % 8)
                continue;
            if (ha == hb) {
                links[n] = 2 * a, coef[n++] = 1;
                links[n] = 2 * b + 1, coef[n++] = 1;
            } else {
                uint32_t s1 = NEXT() % S, s2 = (s1 + 1 + NEXT() % (S - 1)) % S;
                links[n] = 2 * N + 2 * a, coef[n++] = 1;
                links[n] = 4 * N + 2 * (ha * S + s1), coef[n++] = 0.5;
                links[n] = 4 * N + 2 * (hb * S + s1) + 1, coef[n++] = 0.5;
                links[n] = 4 * N + 2 * (ha * S + s2), coef[n++] = 0.5;
                links[n] = 4 * N + 2 * (hb * S + s2) + 1, coef[n++] = 0.5;
                links[n] = 2 * N + 2 * b + 1, coef[n++] = 1;
            }
            double bytes = none ? 0 : 1e3 * (1 + NEXT() % 1000) * (1 + NEXT() % 1000);
            CHECK_ERR(sim_engine_add_route(e, n, links, coef, 1e-9 * (NEXT() % 2001), &r), WEFT_OK);
            CHECK_ERR(sim_engine_add_weighted_flow(e, r, bytes, 1,
                                                   weights && bytes > 0 ? bytes / 1e3 : 1, &f),
                      WEFT_OK);
        }
#undef NEXT
    return e;
}

/* One fabric and seed: the plain run against a run refilling above
 * (popping links from the fill heap when `heap`), within 1e-12 on every
 * flow; the largest difference goes to *most. */
static void one_random(const uint32_t fab[3], bool w, uint64_t seed, bool heap, double *most)
{
    sim_engine *a = a2a(fab[0], fab[1], fab[2], w, seed);
    sim_engine *b = a2a(fab[0], fab[1], fab[2], w, seed);
    if (!a || !b)
        return;
    sim_engine_set_plain(a, true);
    sim_engine_set_above(b, true);
    if (heap)
        sim_engine_set_scan(b, 0);
    CHECK_ERR(sim_engine_run(a, 1e-6, NULL), WEFT_OK);
    CHECK_ERR(sim_engine_run(b, 1e-6, NULL), WEFT_OK);
    double worst;
    bool ok = sim_test_close_run(a, b, 1e-12, &worst);
    if (!ok)
        fprintf(stderr, "engine_above_test: %ux%u, %u spines, seed %llu%s%s: %.3g\n", fab[0],
                fab[1], fab[2], (unsigned long long)seed, w ? ", weights" : "",
                heap ? ", heap" : "", worst);
    CHECK(ok);
    *most = worst > *most ? worst : *most;
    sim_engine_stats sa, sb;
    sim_engine_get_stats(a, &sa);
    sim_engine_get_stats(b, &sb);
    /* Fewer flows refilled, on 8 GPUs too (a region is found from the
     * drained flows' links, so it never reaches another component). */
    CHECK(sb.refilled < sa.refilled);
    sim_engine_free(a);
    sim_engine_free(b);
}

/* Links that cannot fill (engine_rates.c): with every host's pairs inside
 * it drained, its NVLink links carry nothing, and the spine links of a
 * fabric whose spines are fast enough cannot fill; leaving them out of the
 * refills changes nothing, to the bit (the same times and first rates,
 * the same refills and flows refilled). */
static void test_prune(void)
{
    static const uint32_t fab[][3] = {{2, 4, 2}, {4, 4, 3}, {4, 8, 4}};
    uint32_t dead = 0;
    for (size_t i = 0; i < sizeof fab / sizeof fab[0]; i++)
        for (int w = 0; w < 2; w++) {
            sim_engine *a = a2a(fab[i][0], fab[i][1], fab[i][2], w, 11 + i);
            sim_engine *b = a2a(fab[i][0], fab[i][1], fab[i][2], w, 11 + i);
            if (!a || !b)
                return;
            sim_engine_set_above(a, true);
            sim_engine_set_above(b, true);
            sim_engine_set_prune(a, false);
            CHECK_ERR(sim_engine_run(a, 1e-6, NULL), WEFT_OK);
            CHECK_ERR(sim_engine_run(b, 1e-6, NULL), WEFT_OK);
            sim_engine_stats sa, sb;
            sim_engine_get_stats(a, &sa);
            sim_engine_get_stats(b, &sb);
            CHECK(sim_test_same_run(a, b));
            CHECK_INT(sa.refilled, sb.refilled);
            CHECK_INT(sa.dead_links, 0);
            dead += sb.dead_links;
            sim_engine_free(a);
            sim_engine_free(b);
        }
    CHECK(dead > 0);
}

/* Fabrics of 8 to 64 GPUs (2 to 8 hosts, 2 to 4 spines), three seeds each
 * (one from 64 GPUs), with and without weights, popping links by a scan of
 * their keys (at most 320 links here) and from the fill heap. */
static void test_random(void)
{
    static const uint32_t fab[][3] = {{2, 4, 2}, {4, 4, 3}, {4, 8, 4}, {8, 4, 2}, {8, 8, 4}};
    double most = 0;
    for (size_t i = 0; i < sizeof fab / sizeof fab[0]; i++)
        for (uint64_t seed = 1; seed <= (fab[i][0] * fab[i][1] > 32 ? 1u : 3u); seed++)
            for (int w = 0; w < 2; w++)
                for (int heap = 0; heap < 2; heap++)
                    one_random(fab[i], w, seed, heap, &most);
    /* The sums in another order move the times, by rounding only. */
    CHECK(most > 0 && most <= 1e-12);
}

/* The rule (engine.h, sim_engine_set_above): each of these keeps whole
 * refills, so a run asked to refill above is the run not asked, to the bit
 * (the same refills, times and first rates). */
enum { DEP, QUEUE, CUT, CLASS, BUCKET, PLAIN, NONE };

static void test_rule(int what)
{
    sim_engine *a = a2a(4, 4, 3, false, 7), *b = a2a(4, 4, 3, false, 7);
    if (!a || !b)
        return;
    for (int k = 0; k < 2; k++) {
        sim_engine *e = k ? b : a;
        /* Two more flows of 5 MB on GPU 0's NVLink pair (a cut-through
         * pair must have the same size), f waiting for dep. */
        uint32_t links[2] = {0, 3}, r, dep, f;
        double coef[2] = {1, 1};
        CHECK_ERR(sim_engine_add_route(e, 2, links, coef, 1e-6, &r), WEFT_OK);
        CHECK_ERR(sim_engine_add_flow(e, r, 5e6, 1, &dep), WEFT_OK);
        CHECK_ERR(sim_engine_add_flow(e, r, 5e6, 1, &f), WEFT_OK);
        switch (what) {
        case DEP:
            CHECK_ERR(sim_engine_add_dep(e, f, dep), WEFT_OK);
            break;
        case QUEUE:
            CHECK_ERR(sim_engine_add_queue_dep(e, f, dep), WEFT_OK);
            break;
        case CUT:
            CHECK_ERR(sim_engine_add_ct_dep(e, f, dep), WEFT_OK);
            break;
        case CLASS:
            CHECK_ERR(sim_engine_set_class(e, f, 1), WEFT_OK);
            break;
        case BUCKET:
            CHECK_ERR(sim_engine_set_bucket(e, 0, 1e6, 900e9, 1e6), WEFT_OK);
            break;
        case PLAIN:
            sim_engine_set_plain(e, true);
            break;
        default:
            break;
        }
    }
    sim_engine_set_above(b, true);
    CHECK_ERR(sim_engine_run(a, 1e-6, NULL), WEFT_OK);
    CHECK_ERR(sim_engine_run(b, 1e-6, NULL), WEFT_OK);
    sim_engine_stats sa, sb;
    sim_engine_get_stats(a, &sa);
    sim_engine_get_stats(b, &sb);
    if (what == NONE) {
        /* Nothing keeps it off: it refilled fewer flows. */
        CHECK(sb.refilled < sa.refilled);
    } else {
        bool same = sim_test_same_run(a, b) && sa.refilled == sb.refilled;
        if (!same)
            fprintf(stderr, "engine_above_test: rule %d refilled above\n", what);
        CHECK(same);
    }
    sim_engine_free(a);
    sim_engine_free(b);
}

/* A drain that moves a flow outside the region above its link's new
 * level (engine_rates.c, "Refilling above"; GB/s). Links A 2.25, Q 3 and P
 * 8; flows d (1 MB) and g on A, h on Q, and g, h and p on P (1 GB each).
 * Filling freezes d and g at 1.125 (A), h at 3 (Q), p at 3.875 (P). When d
 * drains, its region is g (A froze it) and p (P, on g's route, froze it):
 * filled alone over what h leaves of P, g rises to 2.25 and p falls to
 * 2.75, below h's 3, which is not max-min fair -- P holds h at 2.875 with p
 * (A at 2.25, then P at (8 - 2.25) / 2). The check brings h in, and every
 * time is the plain engine's; with the region never grown, p drains 135 us
 * late (seen). */
/* test_grow's fabric with link A of cap_a B/s, run plainly and refilling
 * above; every flow's times within 1e-12; p's drain in *p_drain. */
static void grow_case(double cap_a, double *p_drain)
{
    sim_engine *e[2] = {NULL, NULL};
    *p_drain = 0;
    for (int k = 0; k < 2; k++) {
        double cap[3] = {cap_a, 3e9, 8e9};
        uint32_t A = 0, Q = 1, P = 2, r, f;
        CHECK_ERR(sim_engine_new(3, cap, NULL, &e[k]), WEFT_OK);
        if (!e[k])
            return;
        const uint32_t routes[4][2] = {{A, A}, {A, P}, {Q, P}, {P, P}};
        const uint32_t len[4] = {1, 2, 2, 1};
        const double coef[2] = {1, 1};
        for (int i = 0; i < 4; i++) {
            CHECK_ERR(sim_engine_add_route(e[k], len[i], routes[i], coef, 0, &r), WEFT_OK);
            CHECK_ERR(sim_engine_add_flow(e[k], r, i ? 1e9 : 1e6, 1, &f), WEFT_OK);
        }
    }
    sim_engine_set_plain(e[0], true);
    sim_engine_set_above(e[1], true);
    CHECK_ERR(sim_engine_run(e[0], 0, NULL), WEFT_OK);
    CHECK_ERR(sim_engine_run(e[1], 0, NULL), WEFT_OK);
    double worst, s, done;
    CHECK(sim_test_close_run(e[0], e[1], 1e-12, &worst));
    sim_engine_flow_times(e[1], 3, &s, p_drain, &done);
    sim_engine_free(e[0]);
    sim_engine_free(e[1]);
}

static void test_grow(void)
{
    /* By hand: p, the first to drain after d, at 8/9 ms plus what is left
     * of it (1 GB less 3.875 GB/s x 8/9 ms) at 2.875 GB/s. */
    double dr, t1 = 1e6 / 1.125e9;
    grow_case(2.25e9, &dr);
    CHECK_REL(dr, t1 + (1e9 - 3.875e9 * t1) / 2.875e9, 1e-12);
    /* A near tie is no tie (TIE_TOL, engine_rates.c): with A at 2 GB/s + 2
     * B/s, g rises to 2 GB/s + 2 B/s and the region leaves p at 3 GB/s - 2
     * B/s, h above it by 7e-10 of its rate; the check must still take h
     * in (P holds both at 3 GB/s - 1 B/s): a TIE_TOL of 1e-6 ends h and p
     * off by some 3e-10 of their times (seen), beyond the 1e-12 above. */
    t1 = 1e6 / (1e9 + 1);
    grow_case(2e9 + 2, &dr);
    CHECK_REL(dr, t1 + (1e9 - (4e9 - 1) * t1) / (3e9 - 1), 1e-12);
}

/* A real change below rounding's usual size is still a change (KEEP_TOL,
 * engine_rates.c): x shares link P (1 GB/s) with y, which a link of 0.02
 * B/s holds at 0.01 B/s beside z; when z drains (0.001 B, at 0.1 s) y
 * doubles and x loses 0.01 B/s, 1e-11 of its rate, which moves its drain
 * by 9e-12 of its time: a refill above that kept x's old rate (a KEEP_TOL
 * of 1e-10) would be off by that (seen), the plain engine is not. */
static void test_keep(void)
{
    sim_engine *e[2] = {NULL, NULL};
    for (int k = 0; k < 2; k++) {
        double cap[2] = {1e9, 0.02};
        uint32_t P = 0, L = 1, r, f;
        CHECK_ERR(sim_engine_new(2, cap, NULL, &e[k]), WEFT_OK);
        if (!e[k])
            return;
        const uint32_t routes[3][2] = {{P, P}, {P, L}, {L, L}};
        const uint32_t len[3] = {1, 2, 1};
        const double coef[2] = {1, 1}, bytes[3] = {1e9, 1, 0.001};
        for (int i = 0; i < 3; i++) {
            CHECK_ERR(sim_engine_add_route(e[k], len[i], routes[i], coef, 0, &r), WEFT_OK);
            CHECK_ERR(sim_engine_add_flow(e[k], r, bytes[i], 1, &f), WEFT_OK);
        }
    }
    sim_engine_set_plain(e[0], true);
    sim_engine_set_above(e[1], true);
    CHECK_ERR(sim_engine_run(e[0], 0, NULL), WEFT_OK);
    CHECK_ERR(sim_engine_run(e[1], 0, NULL), WEFT_OK);
    double worst;
    CHECK(sim_test_close_run(e[0], e[1], 1e-12, &worst));
    /* By hand: x at 1e9 - 0.01 B/s until 0.1 s, then 1e9 - 0.02. */
    double s, dr, done, t1 = 0.001 / 0.01, left = 1e9 - (1e9 - 0.01) * t1;
    sim_engine_flow_times(e[1], 0, &s, &dr, &done);
    CHECK_REL(dr, t1 + left / (1e9 - 0.02), 1e-13);
    sim_engine_free(e[0]);
    sim_engine_free(e[1]);
}

int main(void)
{
    test_random();
    test_grow();
    test_keep();
    test_prune();
    for (int what = DEP; what <= NONE; what++)
        test_rule(what);
    return weft_test_done();
}
