/* Relay benchmark (FuseLink; docs/netns.md, "Relaying through host-mates"):
 * the predicted gain of relaying a broadcast through the root's host-mates'
 * NICs, relay:auto against relay:1 (the same broadcast through the root's
 * NIC alone), by weft's runtime model (weft_sim_plan, WEFT_SIM_RUNTIME) at
 * 16 MiB, 64 MiB and 256 MiB on the emulated fabric of tests/netns/relay.sh
 * (2 hosts x 2 NICs, one per rank) and on a100:2 and h100:2 (8 GPUs per
 * box, one NIC each). Prints both times and their ratio, and the build
 * time of the plans. The measured figure (a pair over two emulated NICs)
 * needs root and network namespaces: `bash tests/netns/relay.sh build/weft
 * .` prints it. Never fails on time.
 * Usage: bench_relay [RELAY_TOPO] (default tests/netns/relay.topo, run
 * from the source tree). */
#include <stdio.h>

#include "clock.h"
#include "weft/sim.h"
#include "weft/synth.h"
#include "weft/topo.h"

static double sim_s(const weft_topo *t, const weft_plan *p, uint64_t size)
{
    weft_sim_opts o;
    weft_sim_opts_init(&o);
    o.model = WEFT_SIM_RUNTIME;
    weft_sim_result r;
    weft_diag d;
    if (weft_sim_plan(t, p, size, &o, &r, &d)) {
        printf("  sim: %s\n", d.msg);
        return 0;
    }
    return r.time_s;
}

static void fabric(const char *name, const weft_topo *t)
{
    weft_plan *one = NULL, *all = NULL;
    weft_diag d;
    double b0 = bench_now();
    if (weft_synth_classic(t, "relay:1", WEFT_COLL_BROADCAST, (weft_rank){0}, &one, &d) ||
        weft_synth_classic(t, "relay:auto", WEFT_COLL_BROADCAST, (weft_rank){0}, &all, &d)) {
        printf("%-24s %s\n", name, d.msg);
        weft_plan_free(one);
        return;
    }
    double built = bench_now() - b0;
    static const uint64_t sizes[] = {16ull << 20, 64ull << 20, 256ull << 20};
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
        double a = sim_s(t, one, sizes[i]), b = sim_s(t, all, sizes[i]);
        printf("%-24s %5llu MiB  relay:1 %10.3f ms  relay:auto %10.3f ms (%u NICs)  %.2fx  "
               "(plans built in %.1f us)\n",
               name, (unsigned long long)(sizes[i] >> 20), a * 1e3, b * 1e3,
               weft_plan_get_info(all)->chunks, b > 0 ? a / b : 0, built * 1e6);
    }
    weft_plan_free(one);
    weft_plan_free(all);
}

int main(int argc, char **argv)
{
    const char *path = argc > 1 ? argv[1] : "tests/netns/relay.topo";
    const char *specs[] = {path, "a100:2", "h100:2"};
    for (size_t s = 0; s < sizeof specs / sizeof *specs; s++) {
        weft_topo *t = NULL;
        weft_diag d;
        if (weft_topo_from_spec(specs[s], NULL, &t, &d)) {
            printf("%-24s %s\n", specs[s], d.msg);
            continue;
        }
        fabric(specs[s], t);
        weft_topo_free(t);
    }
    return 0;
}
