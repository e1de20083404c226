/* Benchmark of the exact all-to-all bound (weft_a2a_bound_compute, docs/bound.md):
 * each case in its own child process (so that the peak RSS is its own) prints
 * the wall and CPU seconds, the peak memory (getrusage maxrss), the LP's size
 * and the exact answer.
 *
 *   bench_a2a_bound [--quick]
 *
 * Cases: the uniform bound on h100:16 and h100:128 (128 and 1,024 GPUs,
 * solved with symmetry: one source per rank orbit), and a skewed MoE
 * dispatch matrix (zipf 1.2, top-2 of 128 experts, 4,096 tokens of 8 KiB)
 * on h100:16, where every one of the 128 ranks is a source; then the
 * optimal all-to-all plan (weft_synth_a2a_optimal: the program on one
 * source with the fabric's rank maps, rank 0's path decomposition mapped to
 * every rank, and the plan) on a100:2, h100:16 and h100:128 (1,024 GPUs,
 * about a million ops), with its exact limit against the bound, and the
 * optimal alltoallv plan of the MoE matrix on a100:2
 * (weft_synth_a2a_optimal_traffic: its exact time at its own size, total /
 * N over its limit, against the bound's time_exact). --quick skips the
 * skewed bound on h100:16 and the h100 plans. Prints figures, never fails
 * on time. */
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "weft/plan.h"
#include "weft/synth.h"
#include "weft/topo.h"
#include "weft/traffic.h"

static int moe(uint32_t ranks, weft_traffic *m)
{
    weft_traffic_moe_params p = {.ranks = ranks,
                                 .experts = 128,
                                 .topk = 2,
                                 .tokens = 4096,
                                 .hidden_bytes = 8192,
                                 .skew = WEFT_TRAFFIC_SKEW_ZIPF,
                                 .zipf_milli = 1200,
                                 .seed = 1};
    weft_diag d;
    if (weft_traffic_moe(&p, m, &d)) {
        fprintf(stderr, "moe: %s\n", d.msg);
        return 1;
    }
    return 0;
}

static int measure_plan(const char *spec, bool skewed)
{
    weft_diag d;
    weft_topo *t = NULL;
    if (weft_topo_preset(spec, &t, &d)) {
        fprintf(stderr, "%s: %s\n", spec, d.msg);
        return 1;
    }
    weft_traffic m = {0, NULL};
    if (skewed && moe(weft_topo_num_ranks(t), &m))
        return 1;
    double w0 = bench_now(), c0 = bench_cpu();
    weft_plan *p = NULL;
    weft_a2a_bound b;
    weft_err e = weft_synth_a2a_optimal_traffic(t, skewed ? &m : NULL, &p, &b, &d);
    double w = bench_now() - w0, c = bench_cpu() - c0;
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    if (e) {
        printf("%-10s %-8s error: %s\n", spec, skewed ? "moe plan" : "plan", d.msg);
    } else if (skewed) {
        weft_plan_cost cost;
        double plan_s = 0;
        if (!weft_plan_cost_get(p, t, &cost, &d))
            plan_s = weft_plan_traffic_size(p) / (weft_rat_to_double(cost.algbw) * 1e9);
        printf("%-10s %-8s %5u ranks  %8.2f s wall %8.2f s cpu  %7.1f MiB peak  %u ops  "
               "plan time %.9g s, bound %s s (%.9g)\n",
               spec, "moe plan", b.ranks, w, c, (double)ru.ru_maxrss / 1024.0, weft_plan_num_ops(p),
               plan_s, b.time_exact, b.time_s);
        weft_a2a_bound_fini(&b);
        weft_plan_free(p);
    } else {
        weft_plan_cost cost;
        char lim[64] = "?";
        if (!weft_plan_cost_get(p, t, &cost, &d))
            weft_rat_format_exact(cost.algbw, lim, sizeof lim);
        printf("%-10s %-8s %5u ranks  %8.2f s wall %8.2f s cpu  %7.1f MiB peak  %u ops  "
               "%u source(s)  plan limit %s GB/s, bound %s GB/s\n",
               spec, "plan", b.ranks, w, c, (double)ru.ru_maxrss / 1024.0, weft_plan_num_ops(p),
               b.sources, lim, b.algbw_exact);
        weft_a2a_bound_fini(&b);
        weft_plan_free(p);
    }
    fflush(stdout);
    weft_traffic_free(&m);
    weft_topo_free(t);
    return e ? 1 : 0;
}

static int measure(const char *spec, bool skewed)
{
    weft_diag d;
    weft_topo *t = NULL;
    if (weft_topo_preset(spec, &t, &d)) {
        fprintf(stderr, "%s: %s\n", spec, d.msg);
        return 1;
    }
    weft_traffic m = {0, NULL};
    if (skewed && moe(weft_topo_num_ranks(t), &m))
        return 1;
    double w0 = bench_now(), c0 = bench_cpu();
    weft_a2a_bound b;
    weft_err e = weft_a2a_bound_compute(t, skewed ? &m : NULL, NULL, &b, &d);
    double w = bench_now() - w0, c = bench_cpu() - c0;
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    if (e) {
        printf("%-10s %-8s error: %s\n", spec, skewed ? "moe" : "uniform", d.msg);
    } else {
        printf("%-10s %-8s %5u ranks  %8.2f s wall %8.2f s cpu  %7.1f MiB peak  LP %u x %u  "
               "%u source(s)  %s %s%s\n",
               spec, skewed ? "moe" : "uniform", b.ranks, w, c, (double)ru.ru_maxrss / 1024.0,
               b.lp_rows, b.lp_cols, b.sources, skewed ? "time_s" : "algbw",
               skewed ? b.time_exact : b.algbw_exact, skewed ? " s" : " GB/s");
        weft_a2a_bound_fini(&b);
    }
    fflush(stdout);
    weft_traffic_free(&m);
    weft_topo_free(t);
    return e ? 1 : 0;
}

int main(int argc, char **argv)
{
    bool quick = argc > 1 && strcmp(argv[1], "--quick") == 0;
    static const struct {
        const char *spec;
        bool skewed, plan;
    } cases[] = {{"h100:16", false, false}, {"h100:128", false, false}, {"h100:16", true, false},
                 {"a100:2", false, true},   {"h100:16", false, true},   {"h100:128", false, true},
                 {"a100:2", true, true}};
    int rc = 0;
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        if (quick && ((cases[i].skewed && !cases[i].plan) ||
                      (cases[i].plan && strcmp(cases[i].spec, "a100:2"))))
            continue;
        pid_t pid = fork();
        if (pid == 0)
            _exit(cases[i].plan ? measure_plan(cases[i].spec, cases[i].skewed)
                                : measure(cases[i].spec, cases[i].skewed));
        int st = 0;
        if (pid < 0 || waitpid(pid, &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st))
            rc = 1;
    }
    return rc;
}
