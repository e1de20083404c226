/* Plan simulation benchmark: the optimal plans of a100:2 and mi250:2
 * (allgather, reducescatter, allreduce) at 1 GiB, store and forward with
 * 1 and with P slices, and cut through (weft_sim_opts.cut_through). Prints
 * per run the simulation's CPU seconds (synthesis excluded), events,
 * events per CPU second, and algbw as a share of the exact bound. Never
 * fails on time. Usage: bench_sim_plan [SLICES] (default 128). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "weft/sim.h"
#include "weft/synth.h"
#include "weft/topo.h"

static double cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void run(const char *spec, const weft_topo *t, const weft_plan *p, weft_coll coll,
                double bound, uint32_t slices, bool cut_through)
{
    weft_sim_opts o;
    weft_sim_opts_init(&o);
    o.slices = slices;
    o.cut_through = cut_through;
    weft_sim_result r;
    weft_diag d;
    double c0 = cpu_now();
    if (weft_sim_plan(t, p, 1ull << 30, &o, &r, &d)) {
        printf("%-8s %-13s %s\n", spec, weft_coll_name(coll), d.msg);
        return;
    }
    double cpu = cpu_now() - c0;
    printf("%-8s %-13s %-14s %4u slices  sim %.3f s cpu  %9llu events  %6.2fM ev/cpu-s  "
           "algbw %.3f GB/s = %.2f %% of %.3f\n",
           spec, weft_coll_name(coll), cut_through ? "cut through" : "store+forward", slices, cpu,
           (unsigned long long)r.events, cpu > 0 ? r.events / cpu / 1e6 : 0, r.algbw_gbps,
           100 * r.algbw_gbps / bound, bound);
}

int main(int argc, char **argv)
{
    uint32_t deep = argc > 1 ? (uint32_t)strtoul(argv[1], NULL, 10) : 128;
    static const char *const specs[] = {"a100:2", "mi250:2"};
    static const weft_coll colls[] = {WEFT_COLL_ALLGATHER, WEFT_COLL_REDUCESCATTER,
                                      WEFT_COLL_ALLREDUCE};
    for (size_t s = 0; s < 2; s++) {
        weft_topo *t = NULL;
        weft_diag d;
        if (weft_topo_from_spec(specs[s], NULL, &t, &d)) {
            printf("%s: %s\n", specs[s], d.msg);
            continue;
        }
        for (size_t c = 0; c < 3; c++) {
            weft_plan *p = NULL;
            weft_optimal info;
            memset(&info, 0, sizeof info);
            if (weft_synth_optimal(t, colls[c], NULL, &p, &info, &d)) {
                printf("%s %s: %s\n", specs[s], weft_coll_name(colls[c]), d.msg);
                continue;
            }
            double bound = weft_rat_to_double(info.bound);
            run(specs[s], t, p, colls[c], bound, 1, false);
            if (deep > 1)
                run(specs[s], t, p, colls[c], bound, deep, false);
            run(specs[s], t, p, colls[c], bound, 1, true);
            weft_optimal_fini(&info);
            weft_plan_free(p);
        }
        weft_topo_free(t);
    }
    return 0;
}
