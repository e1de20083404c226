/* Benchmark of circuit scheduling on optical circuit switches (issue 16).
 *
 *   bench_ocs_sched [HOSTS] [--old]   (default 16 hosts of 8 GPUs: 128 ranks)
 *
 * A MixNet-like fabric, mixnet:hosts=HOSTS (8 GPUs and 8 NICs of 50 GB/s
 * per host, 4 NICs on the packet rails, 4 on one OCS), and a skewed MoE
 * dispatch matrix (weft_traffic_moe: one expert per rank, top-2, 4,096
 * tokens per rank of 8 KiB, Zipf(1.0) popularity, seed 0). For each
 * reconfiguration delay 0, 25 us, 1 ms and 100 ms: the scheduling time
 * (weft_synth_a2a_circuits: the relaxed LP, the decomposition and the
 * candidates; wall and CPU seconds), the configurations kept, the
 * schedule's time and the simulated time of its plan (fluid model,
 * cut-through: the idealised one) on the fabric with that delay. Beside
 * them: the bound (every OCS a switch) and the same matrix on a fat tree
 * of the same hosts and NICs (clos:hosts=HOSTS,gpus=8,nics=8: all 8 NICs
 * on a non-blocking packet fabric), its exact bound and the simulated time
 * of its optimal plan. With --old each delay is scheduled again with the
 * relaxation routed by the edge program (weft_circuit_opts.edge_lp, the
 * path before column generation's trees routed it), its row marked
 * "edge". Prints figures and never fails on time. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "weft/sim.h"
#include "weft/synth.h"
#include "weft/topo.h"
#include "weft/traffic.h"

static weft_topo *preset(const char *spec)
{
    weft_topo *t = NULL;
    weft_diag d;
    weft_diag_clear(&d);
    if (weft_topo_preset(spec, &t, &d)) {
        fprintf(stderr, "bench_ocs_sched: %s: %s\n", spec, d.msg);
        exit(1);
    }
    return t;
}

/* The plan's simulated time for its own bytes (fluid model, cut-through:
 * the idealised one), or -1 where the simulator refuses it. */
static double sim_time(const weft_topo *t, const weft_plan *p)
{
    weft_sim_opts o;
    weft_sim_opts_init(&o);
    o.model = WEFT_SIM_FLUID;
    o.cut_through = true;
    weft_sim_result r;
    weft_diag d;
    weft_diag_clear(&d);
    if (weft_sim_plan(t, p, (uint64_t)(weft_plan_traffic_size(p) + 0.5), &o, &r, &d))
        return -1;
    return r.time_s;
}

int main(int argc, char **argv)
{
    unsigned hosts = 16;
    bool old = false;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--old") == 0)
            old = true;
        else
            hosts = (unsigned)strtoul(argv[i], NULL, 10);
    }
    if (hosts < 2 || hosts > 128) {
        fprintf(stderr, "usage: bench_ocs_sched [HOSTS 2..128] [--old]\n");
        return 2;
    }
    uint32_t ranks = hosts * 8;
    weft_traffic_moe_params mp = {.ranks = ranks,
                                  .experts = ranks,
                                  .topk = 2,
                                  .tokens = 4096,
                                  .hidden_bytes = 8192,
                                  .skew = WEFT_TRAFFIC_SKEW_ZIPF,
                                  .zipf_milli = 1000,
                                  .seed = 0};
    weft_traffic m = {0};
    weft_diag d;
    weft_diag_clear(&d);
    if (weft_traffic_moe(&mp, &m, &d)) {
        fprintf(stderr, "bench_ocs_sched: %s\n", d.msg);
        return 1;
    }
    weft_traffic_stats st;
    weft_traffic_get_stats(&m, &st);
    printf("mixnet:hosts=%u (%u ranks), MoE dispatch top-2 zipf:1 4096 tokens x 8 KiB: "
           "%.1f MB, hottest rank receives %.2f x the mean\n",
           hosts, ranks, (double)st.total / 1e6, st.recv_skew);

    static const struct {
        const char *text;
        double s;
    } delays[] = {{"0", 0}, {"25us", 25e-6}, {"1ms", 1e-3}, {"100ms", 0.1}};
    double bound = 0;
    printf("%-11s %5s %8s %12s %12s %12s %10s %10s\n", "delay", "configs", "rounds", "schedule us",
           "sim us", "packet us", "sched s", "cpu s");
    for (size_t i = 0; i < sizeof delays / sizeof delays[0] * (old ? 2 : 1); i++) {
        size_t k = i % (sizeof delays / sizeof delays[0]);
        char spec[96], label[16];
        snprintf(spec, sizeof spec, "mixnet:hosts=%u,reconfig=%s", hosts, delays[k].text);
        snprintf(label, sizeof label, "%s%s", delays[k].text, i == k ? "" : " edge");
        weft_topo *t = preset(spec);
        weft_plan *p = NULL;
        weft_circuit_sched s;
        weft_circuit_opts co;
        weft_circuit_opts_init(&co);
        co.edge_lp = i != k;
        double w0 = bench_now(), c0 = bench_cpu();
        if (weft_synth_a2a_circuits(t, &m, &co, &p, &s, &d)) {
            fprintf(stderr, "bench_ocs_sched: %s\n", d.msg);
            return 1;
        }
        double w1 = bench_now(), c1 = bench_cpu();
        bound = s.bound_s;
        double sim = sim_time(t, p);
        printf("%-11s %5u %8u %12.3f %12.3f %12.3f %10.2f %10.2f\n", label, s.configs, s.rounds,
               s.time_s * 1e6, sim * 1e6, s.packet_s * 1e6, w1 - w0, c1 - c0);
        fflush(stdout);
        weft_circuit_sched_fini(&s);
        weft_plan_free(p);
        weft_topo_free(t);
    }
    printf("bound (every OCS a switch): %.3f us\n", bound * 1e6);
    char spec[96];
    snprintf(spec, sizeof spec, "clos:hosts=%u,gpus=8,nics=8", hosts);
    weft_topo *ft = preset(spec);
    weft_a2a_bound b;
    weft_plan *fp = NULL;
    double w0 = bench_now();
    if (weft_synth_a2a_optimal_traffic(ft, &m, &fp, &b, &d)) {
        fprintf(stderr, "bench_ocs_sched: %s\n", d.msg);
        return 1;
    }
    double w1 = bench_now();
    double sim = sim_time(ft, fp);
    printf("fat tree %s (8 NICs per host on packet switches): bound %.3f us, optimal plan "
           "simulated %.3f us (%.2f s to plan)\n",
           spec, b.time_s * 1e6, sim * 1e6, w1 - w0);
    weft_plan_free(fp);
    weft_a2a_bound_fini(&b);
    weft_topo_free(ft);
    weft_traffic_free(&m);
    return 0;
}
