/* Direct-connect topology search (weft topo search, weft_dc_search_run):
 * the family for N ranks of degree 4 scored by BFB allreduce.
 *
 *   bench_topo_search [N ...]      (default: 64 1024 4096)
 *
 * For each N prints how many fabrics were generated and scored, the Pareto
 * frontier (spec, T_L, T_B) and the search time (wall clock and CPU time,
 * which does not depend on what else the machine runs), then the time of
 * one BFB analysis of genkautz:N,4 and of building its allreduce plan.
 * The issue asks for N up to 4,096 in under a minute. Never fails on time;
 * exits 1 only if a search fails.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "weft/synth.h"

static double clock_s(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int run(uint32_t n)
{
    weft_dc_search s;
    weft_diag d;
    weft_diag_clear(&d);
    double w0 = clock_s(CLOCK_MONOTONIC), c0 = clock_s(CLOCK_PROCESS_CPUTIME_ID);
    weft_err e = weft_dc_search_run(n, 4, WEFT_COLL_ALLREDUCE, weft_rat_int(100), &s, &d);
    double w1 = clock_s(CLOCK_MONOTONIC), c1 = clock_s(CLOCK_PROCESS_CPUTIME_ID);
    if (e) {
        fprintf(stderr, "search N=%u: %s\n", n, d.msg);
        return 1;
    }
    printf("N=%u d=4 allreduce: %zu generated, %zu scored, search %.2f s wall, %.2f s cpu\n", n,
           s.considered, s.count, w1 - w0, c1 - c0);
    for (size_t i = 0; i < s.count; i++) {
        if (!s.cand[i].pareto)
            continue;
        char tb[64];
        weft_rat_format(s.cand[i].tb, tb, sizeof tb);
        printf("  pareto  T_L %4u  T_B %-14s %s\n", s.cand[i].steps, tb, s.cand[i].spec);
    }
    weft_dc_search_fini(&s);
    char spec[64];
    snprintf(spec, sizeof spec, "genkautz:%u,4", n);
    weft_topo *t;
    if (weft_topo_from_spec(spec, NULL, &t, &d))
        return 1;
    weft_bfb b;
    w0 = clock_s(CLOCK_MONOTONIC);
    c0 = clock_s(CLOCK_PROCESS_CPUTIME_ID);
    e = weft_bfb_analyze(t, WEFT_COLL_ALLREDUCE, &b, &d);
    w1 = clock_s(CLOCK_MONOTONIC);
    c1 = clock_s(CLOCK_PROCESS_CPUTIME_ID);
    printf("  bfb analysis of %s allreduce: %.3f s wall, %.3f s cpu\n", spec, w1 - w0, c1 - c0);
    if (n <= 1024) {
        weft_plan *p = NULL;
        w0 = clock_s(CLOCK_MONOTONIC);
        e = weft_synth_bfb(t, WEFT_COLL_ALLREDUCE, 0, &p, &b, &d);
        w1 = clock_s(CLOCK_MONOTONIC);
        if (!e)
            printf("  bfb plan of %s allreduce: %u ops, %.3f s wall\n", spec, weft_plan_num_ops(p),
                   w1 - w0);
        weft_plan_free(p);
    }
    weft_topo_free(t);
    return e ? 1 : 0;
}

int main(int argc, char **argv)
{
    static const uint32_t def[] = {64, 1024, 4096};
    int rc = 0;
    if (argc > 1) {
        for (int i = 1; i < argc; i++)
            rc |= run((uint32_t)strtoul(argv[i], NULL, 10));
    } else {
        for (size_t i = 0; i < sizeof def / sizeof *def; i++)
            rc |= run(def[i]);
    }
    return rc;
}
