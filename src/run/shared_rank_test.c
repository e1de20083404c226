/* How well the runtime's table-less ranking (weft_plan_shared_time, in the
 * order of weft_plan_shared_before) picks the plan the simulator finds
 * fastest, against the alpha-beta ranking it replaced.
 *
 * For every classic algorithm without parameters (the runtime's ranked
 * candidates, built at root 0) x collective, on the classic fabrics and
 * the emulated netns fabric (at its links' rates: without tbf's buckets,
 * which the estimate does not model and which make every message of 4 KiB
 * nearly free), at 4 KiB, 1 MiB and 64 MiB: each plan is
 * simulated (weft_sim_plan) and estimated with the slices the plan
 * executor cuts its chunks into (chunk / 256 KiB, 1 .. 32). A case agrees
 * when the pick simulates as fast as the fastest (equal plans such as hd
 * and rabenseifner tie). Asserted: floors on the agreement and on the
 * ratio (pick's simulated time / fastest), and specific cases: on the
 * netns fabric alpha-beta has biring twice as fast as ring while the
 * simulator and the estimate do not, and dbtree is the allreduce to run at
 * 16 MiB; on switch:4 with 1 us links the estimate of a pipelined ring is
 * the simulated time.
 *
 * `shared_rank_test -v [SPEC ...]` prints the table per (fabric,
 * collective, size) and, with -vv, every candidate's three times; with
 * fabrics given it only reports (no floors). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/testing.h"
#include "run/exec_plan.h"
#include "topo/testing_topo.h"
#include "weft/sim.h"
#include "weft/synth.h"

#define NETNS WEFT_SOURCE_DIR "/tests/netns/fabric.topo"

static const char *const fabrics[] = {"ring:8",
                                      "switch:8",
                                      "a100:2",
                                      "h100:2",
                                      "mi250:2",
                                      "torus:4x4",
                                      "clos:hosts=4,gpus=4,nics=2,leafports=2",
                                      NETNS};
#ifdef WEFT_SANITIZE
/* Under the sanitizers 64 MiB (up to 32 slices per op in the simulator)
 * took 2 minutes of the suite on the loaded machine: 96 cases there.
 * Measured with the presets' physical latencies (which made alpha-beta
 * better too): shared 91, alpha-beta 61. */
static const double sizes[] = {4096, 1 << 20};
#define CASES 96
#define FLOOR 82
#define AHEAD 25
#else
static const double sizes[] = {4096, 1 << 20, 64 << 20};
#define CASES 144
#define FLOOR 125
#define AHEAD 50
#endif

#define MAXC 16

static int verbose;

typedef struct tally {
    unsigned cases, agree;
    double worst, sum_log;
    char worst_case[160];
} tally;

static void account(tally *st, double ratio, const char *what)
{
    st->cases++;
    st->agree += ratio <= 1 + 1e-9;
    st->sum_log += log(ratio);
    if (ratio > st->worst) {
        st->worst = ratio;
        snprintf(st->worst_case, sizeof st->worst_case, "%s", what);
    }
}

/* One plan's three times at `size` with the executor's slices. */
static bool times(const weft_topo *t, const weft_plan *p, double size, double *sim, double *ab,
                  weft_plan_shared *sh)
{
    uint32_t slices = weft__exec_plan_slices((uint64_t)size / weft_plan_size_chunks(p));
    weft_sim_opts o;
    weft_sim_opts_init(&o);
    o.slices = slices;
    weft_plan_shared_opts so;
    weft_plan_shared_opts_init(&so);
    so.slices = slices;
    weft_sim_result r;
    weft_diag d;
    weft_err e = weft_sim_plan(t, p, (uint64_t)size, &o, &r, &d);
    if (!e)
        e = weft_plan_alpha_beta(p, t, size, ab, &d);
    if (!e)
        e = weft_plan_shared_time(p, t, size, &so, sh, &d);
    CHECK_ERR(e, WEFT_OK);
    if (e) {
        fprintf(stderr, "%s\n", d.msg);
        return false;
    }
    *sim = r.time_s;
    if (verbose > 1)
        printf("    P=%-2u sim %10.4g  alpha-beta %10.4g  shared %10.4g (steps %.4g, link %.4g, "
               "%u steps)\n",
               slices, *sim, *ab, sh->seconds, sh->steps_s, sh->link_s, sh->steps);
    return true;
}

/* Every candidate of one fabric, collective and size. */
static void one_case(const char *spec, const weft_topo *t, weft_coll coll, weft_plan **plans,
                     const char **names, int n, double size, tally *ab_t, tally *sh_t)
{
    double sim[MAXC], ab[MAXC];
    weft_plan_shared sh[MAXC];
    int best = -1, pab = -1, psh = -1;
    for (int i = 0; i < n; i++) {
        if (verbose > 1)
            printf("  %s\n", names[i]);
        if (!times(t, plans[i], size, &sim[i], &ab[i], &sh[i]))
            return;
        if (best < 0 || sim[i] < sim[best])
            best = i;
        if (pab < 0 || ab[i] < ab[pab])
            pab = i; /* the old rule: first of the lowest */
        if (psh < 0 || weft_plan_shared_before(&sh[i], &sh[psh]))
            psh = i;
    }
    if (best < 0)
        return;
    char what[160];
    snprintf(what, sizeof what, "%s %s %.0f B", spec, weft_coll_name(coll), size);
    account(ab_t, sim[pab] / sim[best], what);
    account(sh_t, sim[psh] / sim[best], what);
    if (verbose)
        printf("%-40s %-13s %9.0f | %-12s %10.4g | %-12s %5.2fx | %-12s %5.2fx\n", spec,
               weft_coll_name(coll), size, names[best], sim[best] * 1e6, names[pab],
               sim[pab] / sim[best], names[psh], sim[psh] / sim[best]);
}

static void matrix(const char *const *specs, int nf, tally *ab_t, tally *sh_t)
{
    if (verbose)
        printf("%-40s %-13s %9s | %-12s %10s | %-12s %6s | %-12s %6s\n", "fabric", "coll", "size",
               "sim fastest", "us", "alpha-beta", "ratio", "shared", "ratio");
    for (int f = 0; f < nf; f++) {
        weft_topo *t = strcmp(specs[f], NETNS) == 0 ? weft__test_topo_spec_unshaped(NETNS)
                                                    : weft__test_topo_spec(specs[f]);
        CHECK(t != NULL);
        for (int c = 0; t && c < WEFT__COLL_COUNT; c++) {
            weft_plan *plans[MAXC];
            const char *names[MAXC];
            int n = 0;
            for (size_t i = 0; i < weft_classic_count() && n < MAXC; i++) {
                const char *name = weft_classic_get(i)->name;
                if (strchr(name, ':') || weft_classic_get(i)->composite ||
                    !weft_classic_supports(name, (weft_coll)c))
                    continue;
                if (weft_synth_classic(t, name, (weft_coll)c, (weft_rank){0}, &plans[n], NULL))
                    continue; /* e.g. hier without equal hosts: not a candidate either */
                names[n++] = name;
            }
            for (size_t z = 0; n && z < sizeof sizes / sizeof *sizes; z++)
                one_case(strstr(specs[f], "/tests/") ? strstr(specs[f], "tests/") : specs[f], t,
                         (weft_coll)c, plans, names, n, sizes[z], ab_t, sh_t);
            for (int i = 0; i < n; i++)
                weft_plan_free(plans[i]);
        }
        weft_topo_free(t);
    }
    const tally *st[2] = {ab_t, sh_t};
    const char *label[2] = {"alpha-beta", "shared"};
    for (int k = 0; k < 2; k++)
        printf("%-10s: the simulator's fastest in %u of %u cases (%.0f%%); pick / fastest: "
               "geometric mean %.3f, worst %.2fx (%s)\n",
               label[k], st[k]->agree, st[k]->cases,
               st[k]->cases ? 100.0 * st[k]->agree / st[k]->cases : 0,
               st[k]->cases ? exp(st[k]->sum_log / st[k]->cases) : 1, st[k]->worst,
               st[k]->worst_case);
}

static weft_plan *build(const weft_topo *t, const char *algo, weft_coll coll)
{
    weft_plan *p = NULL;
    CHECK_ERR(weft_synth_classic(t, algo, coll, (weft_rank){0}, &p, NULL), WEFT_OK);
    return p;
}

/* The netns fabric: h3's link at a fifth of the others'. */
static void test_netns(void)
{
    weft_topo *t = weft__test_topo_spec_unshaped(NETNS);
    CHECK(t != NULL);
    if (!t)
        return;
    weft_plan *ring = build(t, "ring", WEFT_COLL_ALLREDUCE);
    weft_plan *biring = build(t, "biring", WEFT_COLL_ALLREDUCE);
    weft_plan *dbtree = build(t, "dbtree", WEFT_COLL_ALLREDUCE);
    double S = 64 << 20, sim_r, sim_b, sim_d, ab_r, ab_b, ab_d;
    weft_plan_shared sh_r, sh_b, sh_d;
    if (ring && biring && dbtree && times(t, ring, S, &sim_r, &ab_r, &sh_r) &&
        times(t, biring, S, &sim_b, &ab_b, &sh_b) && times(t, dbtree, S, &sim_d, &ab_d, &sh_d)) {
        /* Alpha-beta: biring twice as fast as ring, and ahead of dbtree. */
        CHECK(fabs(ab_r / ab_b - 2) < 1e-9);
        CHECK(ab_b < ab_d);
        /* The simulator: biring no faster than ring; dbtree 1.5x ahead. */
        CHECK(sim_b >= sim_r * (1 - 1e-9));
        CHECK(sim_r / sim_d > 1.45 && sim_r / sim_d < 1.55);
        /* The estimate: biring and ring both at h3's link (4.06 s: h3
         * carries 2 x 3/4 of 64 MiB each way at 0.0248 GB/s), dbtree
         * ahead of both, each within 2% of its simulated time. */
        CHECK(fabs(sh_b.seconds / sh_r.seconds - 1) < 1e-9);
        CHECK(fabs(sh_r.link_s - 1.5 * S / 24.817e6) < 1e-9 * sh_r.link_s);
        CHECK(weft_plan_shared_before(&sh_d, &sh_r));
        CHECK(fabs(sh_r.seconds / sim_r - 1) < 0.02);
        CHECK(fabs(sh_b.seconds / sim_b - 1) < 0.02);
        CHECK(fabs(sh_d.seconds / sim_d - 1) < 0.02);
    }
    weft_plan_free(ring);
    weft_plan_free(biring);
    weft_plan_free(dbtree);
    weft_topo_free(t);
}

/* A ring pipelined in 4 slices over 1 us links: the simulator's time is
 * steps x S/N / B + (steps + P - 1) x latency (docs/sim.md), and so is the
 * estimate. */
static void test_pipelined_ring(void)
{
    weft_topo *t = weft__test_topo_spec("switch:4,bw=100,lat=1us");
    weft_plan *p = t ? build(t, "ring", WEFT_COLL_ALLGATHER) : NULL;
    weft_sim_opts o;
    weft_sim_opts_init(&o);
    o.slices = 4;
    weft_sim_result r;
    weft_plan_shared_opts so;
    weft_plan_shared_opts_init(&so);
    so.slices = 4;
    weft_plan_shared s;
    if (p) {
        CHECK_ERR(weft_sim_plan(t, p, 4000000, &o, &r, NULL), WEFT_OK);
        CHECK_ERR(weft_plan_shared_time(p, t, 4e6, &so, &s, NULL), WEFT_OK);
        CHECK(fabs(r.time_s - 42e-6) < 1e-15);
        CHECK(fabs(s.seconds - 42e-6) < 1e-15);
    }
    weft_plan_free(p);
    weft_topo_free(t);
}

int main(int argc, char **argv)
{
    int first = 1;
    while (first < argc && strncmp(argv[first], "-v", 2) == 0)
        verbose += (int)strlen(argv[first++]) - 1;
    tally ab = {0}, sh = {0};
    if (first < argc) { /* a report on the given fabrics */
        matrix((const char *const *)argv + first, argc - first, &ab, &sh);
        return weft_test_done();
    }
    matrix(fabrics, (int)(sizeof fabrics / sizeof *fabrics), &ab, &sh);
    /* Measured: 144 cases, shared 133 (92%), mean 1.007, worst 1.23x
     * (without 64 MiB: 96 cases, shared 87, alpha-beta 43)
     * (mi250:2 allgather 4 KiB: hd's busiest link needs less than hier's,
     * but hier simulates faster); alpha-beta 59 (41%), mean 1.580, worst
     * 6.86x (a100:2 allgather 64 MiB). */
    CHECK_INT(sh.cases, CASES);
    CHECK(sh.agree >= FLOOR);
    CHECK(sh.worst < 1.3);
    CHECK(exp(sh.sum_log / sh.cases) < 1.02);
    CHECK(sh.agree > ab.agree + AHEAD);
    test_netns();
    test_pipelined_ring();
    return weft_test_done();
}
