/* Traffic matrices and alltoallv plans (issue 14): the time to generate a
 * MoE dispatch matrix for 1,024 ranks (2 experts per rank, 4,096 tokens per
 * rank, each to 8 of the 2,048 experts, 14,336-byte tokens, zipf:1.2: 33.5
 * million expert picks) and to write it as text; and the time to build,
 * verify and cost the direct alltoallv plan of a skewed 128-rank matrix (the
 * same model: 4 experts per rank, top-8, 1,024 tokens of 8 KiB) on a star
 * of 128 ranks, and to simulate it (fluid model). Wall and CPU seconds, and peak memory: on a
 * shared machine the CPU time is the figure to read. Never fails on time.
 * Usage: bench_traffic [RANKS_MOE [RANKS_PLAN]] (defaults 1024 128). */
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>

#include "clock.h"
#include "weft/sim.h"
#include "weft/synth.h"

static long peak_mib(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_maxrss / 1024;
}

static int fail(const char *what, const weft_diag *d)
{
    fprintf(stderr, "bench_traffic: %s: %s\n", what, d->msg);
    return 1;
}

int main(int argc, char **argv)
{
    uint32_t nm = argc > 1 ? (uint32_t)atoi(argv[1]) : 1024;
    uint32_t np = argc > 2 ? (uint32_t)atoi(argv[2]) : 128;
    weft_diag d;
    weft_diag_clear(&d);

    weft_traffic_moe_params mp = {.ranks = nm,
                                  .experts = 2 * nm,
                                  .topk = 8,
                                  .tokens = 4096,
                                  .hidden_bytes = 14336,
                                  .skew = WEFT_TRAFFIC_SKEW_ZIPF,
                                  .zipf_milli = 1200,
                                  .seed = 1};
    weft_traffic m;
    double t0 = bench_now(), c0 = bench_cpu();
    if (weft_traffic_moe(&mp, &m, &d))
        return fail("moe", &d);
    double t1 = bench_now(), c1 = bench_cpu();
    FILE *devnull = fopen("/dev/null", "w");
    if (devnull) {
        weft_traffic_write(devnull, &m, NULL, NULL);
        fclose(devnull);
    }
    double t2 = bench_now(), c2 = bench_cpu();
    weft_traffic_stats st;
    weft_traffic_get_stats(&m, &st);
    printf(
        "moe dispatch %u ranks, %u experts, top-8, 4096 tokens, zipf:1.2: generate %.3f s "
        "wall, %.3f s cpu; write as text %.3f s wall, %.3f s cpu; recv skew %.3f; peak %ld MiB\n",
        nm, 2 * nm, t1 - t0, c1 - c0, t2 - t1, c2 - c1, st.recv_skew, peak_mib());
    weft_traffic_free(&m);

    /* The 128-rank skewed matrix. */
    weft_traffic_moe_params sp = {.ranks = np,
                                  .experts = 4 * np,
                                  .topk = 8,
                                  .tokens = 1024,
                                  .hidden_bytes = 8192,
                                  .skew = WEFT_TRAFFIC_SKEW_ZIPF,
                                  .zipf_milli = 1200,
                                  .seed = 2};
    if (weft_traffic_moe(&sp, &m, &d))
        return fail("moe", &d);
    char spec[32];
    snprintf(spec, sizeof spec, "switch:%u", np);
    weft_topo *t = NULL;
    if (weft_topo_from_spec(spec, NULL, &t, &d))
        return fail("topo", &d);
    weft_plan *p = NULL;
    t0 = bench_now(), c0 = bench_cpu();
    if (weft_synth_classic_traffic(t, "direct", &m, 0, &p, &d))
        return fail("plan", &d);
    t1 = bench_now(), c1 = bench_cpu();
    if (weft_plan_verify(p, t, &d))
        return fail("verify", &d);
    t2 = bench_now(), c2 = bench_cpu();
    weft_plan_cost cost;
    if (weft_plan_cost_get(p, t, &cost, &d))
        return fail("cost", &d);
    double t3 = bench_now(), c3 = bench_cpu();
    weft_sim_opts o;
    weft_sim_opts_init(&o);
    weft_sim_result r;
    double own = weft_plan_traffic_size(p);
    if (weft_sim_plan(t, p, (uint64_t)(own + 0.5), &o, &r, &d))
        return fail("sim", &d);
    double t4 = bench_now(), c4 = bench_cpu();
    printf("direct alltoallv %u ranks (%s, %u ops, skew %.3f): plan %.4f s wall, %.4f s cpu; "
           "verify %.4f s wall, %.4f s cpu; plan+verify %.4f s cpu; cost %.4f s cpu "
           "(algbw %.3f GB/s); sim %.4f s cpu (%.3f us); peak %ld MiB\n",
           np, spec, weft_plan_num_ops(p), (weft_traffic_get_stats(&m, &st), st.recv_skew), t1 - t0,
           c1 - c0, t2 - t1, c2 - c1, c2 - c0, c3 - c2, weft_rat_to_double(cost.algbw), c4 - c3,
           r.time_s * 1e6, peak_mib());
    (void)t3;
    (void)t4;
    weft_plan_free(p);
    weft_topo_free(t);
    weft_traffic_free(&m);
    return 0;
}
