/* Benchmark of the optimal all-to-all plan of a skewed matrix at 128, 256
 * and 1,024 ranks (issue 29: weft plan --algo optimal --traffic FILE):
 * h100:16, h100:32 and h100:128 with bench_a2a_bound_skew's MoE dispatch
 * matrices (zipf 1.2, top-2 of 128 experts, or of 2N experts, 4,096
 * tokens of 8 KiB per rank, seed 1). Each case runs in its own child
 * process and prints the wall and CPU seconds of
 * weft_synth_a2a_optimal_opts, the peak memory, the plan's ops and paths,
 * the bound's exact time and whether the plan meets it exactly (its
 * busiest link's load over bandwidth, summed in rationals from the plan's
 * own shares and the matrix's bytes, equals time_exact): first routed by
 * column generation's trees (the default), then by the edge program's flow
 * decomposed (edge_lp, the path before), where that is feasible: 128
 * ranks, and 256 with --old. A plan that misses the bound, or two answers
 * that differ, is printed and the exit status is 1. Never fails on time.
 *
 *   bench_a2a_optimal_skew [--quick] [--old]   (--quick: 128 and 256 only) */
#include <gmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "clock.h"
#include "skew_cases.h"
#include "weft/plan.h"
#include "weft/synth.h"
#include "weft/topo.h"
#include "weft/traffic.h"

/* The plan's time at its own bytes, exactly: the largest over links of
 * (sum over paths through it of share x bytes) / bandwidth, in seconds
 * (bandwidth in GB/s). False when a node name is not the fabric's. */
static bool plan_time(const weft_topo *t, const weft_plan *p, const weft_traffic *m, mpq_t out)
{
    uint32_t nl = weft_topo_num_links(t);
    mpq_t *load = malloc(((size_t)nl + 1) * sizeof *load);
    if (!load)
        return false;
    for (uint32_t l = 0; l < nl; l++)
        mpq_init(load[l]);
    mpq_t q, bw;
    mpq_inits(q, bw, NULL);
    bool ok = true;
    for (uint32_t id = 0; id < weft_plan_num_ops(p) && ok; id++) {
        weft_op op = weft_plan_op(p, id);
        uint64_t bytes = weft_traffic_at(m, op.src_rank.v, op.dst_rank.v);
        for (uint32_t k = 0; k < weft_plan_op_num_paths(p, id) && ok; k++) {
            weft_rat sh = weft_plan_path_share(p, id, k);
            mpq_set_si(q, sh.num, (unsigned long)sh.den);
            mpq_canonicalize(q);
            mpz_mul_ui(mpq_numref(q), mpq_numref(q), bytes);
            mpq_canonicalize(q);
            weft_node_id prev = {0};
            for (uint32_t i = 0; i < weft_plan_path_len(p, id, k) && ok; i++) {
                weft_node_id v;
                ok = weft_topo_find_node(t, weft_plan_path_node(p, id, k, i), &v);
                weft_link_id l;
                if (ok && i > 0) {
                    ok = weft_topo_find_link(t, prev, v, &l);
                    if (ok)
                        mpq_add(load[l.v], load[l.v], q);
                }
                prev = v;
            }
        }
    }
    mpq_set_ui(out, 0, 1);
    for (uint32_t l = 0; l < nl && ok; l++) {
        weft_rat b = weft_topo_link_bw(t, (weft_link_id){l});
        mpq_set_si(bw, b.num, (unsigned long)b.den);
        mpq_canonicalize(bw);
        mpz_mul_ui(mpq_numref(bw), mpq_numref(bw), 1000000000ul);
        mpq_canonicalize(bw);
        mpq_div(q, load[l], bw);
        if (mpq_cmp(q, out) > 0)
            mpq_set(out, q);
    }
    mpq_clears(q, bw, NULL);
    for (uint32_t l = 0; l < nl; l++)
        mpq_clear(load[l]);
    free(load);
    return ok;
}

static int measure(uint32_t boxes, uint32_t experts, bool edge, const char *answer_path)
{
    char spec[32];
    weft_topo *t = NULL;
    weft_traffic m;
    if (skew_case(boxes, experts, spec, &t, &m))
        return 1;
    uint32_t ex = experts ? experts : 2 * weft_topo_num_ranks(t);
    weft_diag d;
    weft_a2a_bound_opts o;
    weft_a2a_bound_opts_init(&o);
    o.edge_lp = edge;
    double w0 = bench_now(), c0 = bench_cpu();
    weft_a2a_bound b;
    weft_plan *p = NULL;
    weft_err e = weft_synth_a2a_optimal_opts(t, &m, &o, &p, &b, &d);
    double w = bench_now() - w0, c = bench_cpu() - c0;
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    bool met = false;
    if (e) {
        printf("%-9s %4u experts  %-6s error: %s\n", spec, ex, edge ? "edge" : "colgen", d.msg);
    } else {
        uint64_t paths = 0;
        for (uint32_t id = 0; id < weft_plan_num_ops(p); id++)
            paths += weft_plan_op_num_paths(p, id);
        mpq_t pt, bt;
        mpq_inits(pt, bt, NULL);
        met =
            plan_time(t, p, &m, pt) && mpq_set_str(bt, b.time_exact, 10) == 0 && mpq_equal(pt, bt);
        printf("%-9s %4u experts  %-6s %8.2f s wall %8.2f s cpu %7.1f MiB peak  %u ops %llu "
               "paths  time %s s, plan %s\n",
               spec, ex, edge ? "edge" : "colgen", w, c, (double)ru.ru_maxrss / 1024.0,
               weft_plan_num_ops(p), (unsigned long long)paths, b.time_exact,
               met ? "at the bound" : "MISSES THE BOUND");
        mpq_clears(pt, bt, NULL);
        FILE *f = fopen(answer_path, "w");
        if (f) {
            fprintf(f, "%s\n", b.time_exact);
            fclose(f);
        }
        weft_plan_free(p);
        weft_a2a_bound_fini(&b);
    }
    fflush(stdout);
    weft_traffic_free(&m);
    weft_topo_free(t);
    return e || !met ? 1 : 0;
}

int main(int argc, char **argv)
{
    return skew_cases(argc, argv, measure, "a2a_opt", "the two plans' bounds are equal",
                      "the two plans' bounds are DIFFERENT");
}
