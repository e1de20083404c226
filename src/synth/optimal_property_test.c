/* Property test of the optimal schedule on random small fabrics (up to 14
 * nodes: ranks, switches joined to ranks and to each other by duplex links
 * of random bandwidth, and some one-way links of random bandwidth between
 * ranks, so many fabrics are asymmetric): the plan of every collective it
 * builds verifies against the fabric, and its per-link throughput equals
 * the exact bound (allreduce: at least the bound, each phase exactly at
 * its own). Fabrics with an unbalanced switch must fail with
 * WEFT_ETOPO instead. Deterministic (a fixed xorshift seed). */
#include <stdio.h>
#include <string.h>

#include "base/testing.h"
#include "weft/synth.h"

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint32_t rnd(uint32_t n)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)(rng % n);
}

static const char *const bws[] = {"10GB/s", "20GB/s", "25GB/s", "40GB/s", "50GB/s", "100GB/s"};

/* Writes a random fabric; *unbalanced is set when a one-way link touches
 * a switch (which then forwards unequal bandwidth). */
static size_t make_fabric(char *buf, size_t size, bool *unbalanced)
{
    uint32_t nr = 2 + rnd(7), ns = rnd(7);
    if (nr + ns > 14)
        ns = 14 - nr;
    size_t at = 0;
    *unbalanced = false;
    for (uint32_t i = 0; i < nr; i++)
        at += (size_t)snprintf(buf + at, size - at, "node r%u compute\n", i);
    for (uint32_t i = 0; i < ns; i++)
        at += (size_t)snprintf(buf + at, size - at, "node s%u switch\n", i);
    /* A backbone so every rank reaches every other: each rank to a switch,
     * or a bidirectional ring of ranks when there is no switch. */
    for (uint32_t i = 0; i < nr; i++) {
        if (ns)
            at += (size_t)snprintf(buf + at, size - at, "duplex r%u s%u %s\n", i, rnd(ns),
                                   bws[rnd(6)]);
        else
            at += (size_t)snprintf(buf + at, size - at, "duplex r%u r%u %s\n", i, (i + 1) % nr,
                                   bws[rnd(6)]);
    }
    for (uint32_t i = 1; i < ns; i++)
        at += (size_t)snprintf(buf + at, size - at, "duplex s%u s%u %s\n", rnd(i), i,
                               bws[rnd(6)]);
    /* Extra links: duplex anywhere, one-way between ranks (asymmetric). */
    uint32_t extra = rnd(5);
    for (uint32_t j = 0; j < extra; j++) {
        uint32_t a = rnd(nr), b = rnd(nr);
        if (a == b)
            continue;
        at += (size_t)snprintf(buf + at, size - at, "link r%u r%u %s\n", a, b, bws[rnd(6)]);
    }
    if (ns && rnd(6) == 0) {
        at += (size_t)snprintf(buf + at, size - at, "link r0 s%u 5GB/s\n", rnd(ns));
        *unbalanced = true;
    }
    return at;
}

int main(void)
{
    char text[4096];
    uint32_t built = 0, rejected = 0;
    for (uint32_t iter = 0; iter < 150; iter++) {
        bool unbalanced;
        size_t len = make_fabric(text, sizeof text, &unbalanced);
        weft_topo *t = NULL;
        weft_diag d;
        if (weft_topo_parse(text, len, "random.topo", &t, &d)) {
            fprintf(stderr, "iter %u: parse: %s\n%s", iter, d.msg, text);
            CHECK(false);
            continue;
        }
        weft_coll coll = iter % 3 == 0   ? WEFT_COLL_ALLREDUCE
                         : iter % 3 == 1 ? WEFT_COLL_REDUCESCATTER
                                         : WEFT_COLL_ALLGATHER;
        weft_optimal_opts o;
        weft_optimal_opts_init(&o);
        o.trees_per_root = iter % 5 == 4 ? 1 + rnd(2) : 0;
        weft_plan *p = NULL;
        weft_optimal info;
        weft_err e = weft_synth_optimal(t, coll, &o, &p, &info, &d);
        if (unbalanced) {
            CHECK_ERR(e, WEFT_ETOPO);
            CHECK_CONTAINS(d.msg, "forwards more bandwidth one way than the other");
            rejected += e == WEFT_ETOPO;
            if (!e) {
                weft_plan_free(p);
                weft_optimal_fini(&info);
            }
            weft_topo_free(t);
            continue;
        }
        if (e) {
            fprintf(stderr, "iter %u %s: %s\n%s", iter, weft_coll_name(coll), d.msg, text);
            CHECK(false);
            weft_topo_free(t);
            continue;
        }
        built++;
        if (weft_plan_verify(p, t, &d)) {
            fprintf(stderr, "iter %u %s: verify: %s\n%s", iter, weft_coll_name(coll), d.msg,
                    text);
            CHECK(false);
        }
        weft_plan_cost c;
        CHECK_ERR(weft_plan_cost_get(p, t, &c, &d), WEFT_OK);
        /* Allreduce is reduce-scatter then allgather, each phase at its
         * own bound; the per-link cost model adds both phases' loads per
         * link without ordering them, so it reaches ab/(a+b) exactly only
         * when one link is a bottleneck of both phases, and is above it
         * otherwise (docs/optimal.md). */
        bool ar = coll == WEFT_COLL_ALLREDUCE;
        int vs = weft_rat_cmp(c.algbw, info.algbw);
        for (uint32_t i = 0; ar && i < info.n_phases && o.trees_per_root == 0; i++)
            CHECK(weft_rat_eq(info.phase[i].algbw, info.phase[i].bound));
        if ((ar ? vs < 0 : vs != 0) ||
            (o.trees_per_root == 0 && !weft_rat_eq(info.algbw, info.bound))) {
            fprintf(stderr, "iter %u %s K=%u: cost %lld/%lld, reported %lld/%lld, bound %lld/%lld\n%s",
                    iter, weft_coll_name(coll), o.trees_per_root, (long long)c.algbw.num,
                    (long long)c.algbw.den, (long long)info.algbw.num,
                    (long long)info.algbw.den, (long long)info.bound.num,
                    (long long)info.bound.den, text);
            CHECK(false);
        }
        CHECK(weft_rat_cmp(info.algbw, info.bound) <= 0);
        weft_plan_free(p);
        weft_optimal_fini(&info);
        weft_topo_free(t);
    }
    /* The generator must exercise both paths. */
    CHECK(built >= 100);
    CHECK(rejected >= 1);
    return weft_test_done();
}
