/* Shaped links (burst= peak=, tc-tbf(8)) in the runtime model: the ring and
 * dbtree allreduce plans on the emulated fabric of docs/netns.md
 * (tests/netns/fabric.topo), 64 KiB to 64 MiB, without the shapers (the
 * links at their rates only), with full buckets, and back to back
 * (weft_sim_opts.back_to_back, as weft perf's iterations run). Prints the
 * simulated ms of each and the CPU time of the back-to-back simulation;
 * docs/netns.md compares these figures with the executor. Never fails on
 * time. Usage: bench_sim_shaper [FABRIC.topo] (default
 * tests/netns/fabric.topo, run from the source tree). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "weft/sim.h"
#include "weft/synth.h"
#include "weft/topo.h"

/* The fabric without its shapers: the same nodes and links at their rates. */
static weft_topo *unshaped(const weft_topo *t)
{
    weft_topo_builder *b = NULL;
    weft_topo *out = NULL;
    weft_diag d;
    if (weft_topo_builder_new(&b))
        return NULL;
    for (uint32_t v = 0; v < weft_topo_num_nodes(t); v++) {
        weft_node_id n = {v}, id;
        const char *host = weft_topo_node_attr(t, n, "host");
        if (weft_topo_builder_add_node(b, weft_topo_node_name(t, n), weft_topo_node_kind(t, n),
                                       host, &id))
            goto done;
    }
    for (uint32_t l = 0; l < weft_topo_num_links(t); l++) {
        weft_link_id k = {l};
        if (weft_topo_builder_add_link(b, weft_topo_link_src(t, k), weft_topo_link_dst(t, k),
                                       weft_topo_link_bw(t, k), weft_topo_link_lat(t, k)))
            goto done;
    }
    if (weft_topo_build(b, &out, &d)) /* consumes b */
        out = NULL;
    return out;
done:
    weft_topo_builder_free(b);
    return NULL;
}

static double sim_ms(const weft_topo *t, const weft_plan *p, uint64_t size, bool b2b, double *cpu)
{
    weft_sim_opts o;
    weft_sim_opts_init(&o);
    o.model = WEFT_SIM_RUNTIME;
    o.back_to_back = b2b;
    weft_sim_result r;
    weft_diag d;
    double c0 = bench_cpu();
    if (weft_sim_plan(t, p, size, &o, &r, &d)) {
        fprintf(stderr, "sim: %s\n", d.msg);
        return -1;
    }
    if (cpu)
        *cpu = bench_cpu() - c0;
    return r.time_s * 1e3;
}

int main(int argc, char **argv)
{
    const char *path = argc > 1 ? argv[1] : "tests/netns/fabric.topo";
    weft_topo *t = NULL, *u = NULL;
    weft_diag d;
    if (weft_topo_load_file(path, &t, &d)) {
        printf("%s: %s\n", path, d.msg);
        return 1;
    }
    if (!(u = unshaped(t))) {
        printf("cannot copy %s without its shapers\n", path);
        weft_topo_free(t);
        return 1;
    }
    printf("runtime model on %s, allreduce, ms: links only | full buckets | back to back "
           "(cpu s)\n",
           path);
    static const char *const algos[] = {"ring", "dbtree"};
    for (size_t a = 0; a < 2; a++) {
        weft_plan *p = NULL, *q = NULL;
        if (weft_synth_classic(t, algos[a], WEFT_COLL_ALLREDUCE, (weft_rank){0}, &p, &d) ||
            weft_synth_classic(u, algos[a], WEFT_COLL_ALLREDUCE, (weft_rank){0}, &q, &d)) {
            printf("%s: %s\n", algos[a], d.msg);
            weft_plan_free(p);
            continue;
        }
        for (uint64_t size = 64 << 10; size <= 64 << 20; size *= 4) {
            double cpu = 0;
            double plain = sim_ms(u, q, size, false, NULL), full = sim_ms(t, p, size, false, NULL);
            double b2b = sim_ms(t, p, size, true, &cpu);
            printf("%-7s %9llu B  %9.3f | %9.3f (%+5.1f%%) | %9.3f (%+5.1f%%)  %.4f\n", algos[a],
                   (unsigned long long)size, plain, full, (full - plain) / plain * 100, b2b,
                   (b2b - plain) / plain * 100, cpu);
        }
        weft_plan_free(p);
        weft_plan_free(q);
    }
    weft_topo_free(u);
    weft_topo_free(t);
    return 0;
}
