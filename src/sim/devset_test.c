/* The gpu model against the development set (tests/fixtures/nccl-tests):
 * published nccl-tests busbw per size, compared with the simulated busbw of
 * two schedules on the fabric the fixture names: `hier` (reduce-scatter in
 * the box, allreduce across boxes, allgather in the box: the shape of
 * NCCL's tree algorithms) and `optimal` (the bound-reaching plan). The
 * error per size is printed (-v: every row); the checks are physical, not
 * fitted: nothing measured beats the exact bound, the optimal plan is
 * predicted at least as fast as what was measured from 64 MiB on (it is
 * the fastest possible schedule, and the measurement ran NCCL's), and
 * every prediction grows with size. docs/sim.md gives the table. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/testing.h"
#include "topo/testing_topo.h"
#include "weft/sim.h"
#include "weft/synth.h"

#define MAX_ROWS 64

typedef struct devset {
    char fabric[128];
    uint32_t n;
    uint64_t size[MAX_ROWS];
    double busbw[MAX_ROWS];
} devset;

static bool load(const char *path, devset *s)
{
    size_t len;
    char *text = weft_test_read_file(path, &len);
    if (!text)
        return false;
    memset(s, 0, sizeof *s);
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
        unsigned long long size;
        double bw;
        if (line[0] == '#')
            continue;
        if (sscanf(line, "fabric %127s", s->fabric) == 1)
            continue;
        if (sscanf(line, "%llu %lf", &size, &bw) == 2 && s->n < MAX_ROWS) {
            s->size[s->n] = size;
            s->busbw[s->n++] = bw;
        }
    }
    free(text);
    return s->fabric[0] && s->n > 0;
}

int main(int argc, char **argv)
{
    bool verbose = argc > 1 && strcmp(argv[1], "-v") == 0;
    devset s;
    CHECK(load(WEFT_SOURCE_DIR "/tests/fixtures/nccl-tests/a3mega-2x8-h100-allreduce.txt", &s));
    CHECK_INT(s.n, 24);
    weft_topo *t = weft__test_topo_spec(s.fabric);
    if (!t || s.n != 24)
        return weft_test_done();
    weft_diag d;
    weft_bound b = {0};
    CHECK_ERR(weft_bound_compute(t, WEFT_BOUND_ALLREDUCE, NULL, &b, &d), WEFT_OK);
    double bound_bus = weft_rat_to_double(b.algbw) * weft_sim_busbw_factor(WEFT_COLL_ALLREDUCE, 16);
    weft_plan *hier = NULL, *opt = NULL;
    CHECK_ERR(weft_synth_classic(t, "hier", WEFT_COLL_ALLREDUCE, (weft_rank){0}, &hier, &d),
              WEFT_OK);
    CHECK_ERR(weft_synth_optimal(t, WEFT_COLL_ALLREDUCE, NULL, &opt, NULL, &d), WEFT_OK);
    weft_sim_opts o;
    weft_sim_opts_init(&o);
    o.model = weft_sim_model_default(t);
    CHECK_INT(o.model, WEFT_SIM_GPU);
    printf("  %s allreduce, bound busbw %.1f GB/s\n", s.fabric, bound_bus);
    printf("  %12s %10s %10s %8s %10s %8s\n", "size", "published", "hier", "err", "optimal",
           "err");
    double last_h = 0, last_o = 0, sum_h = 0, sum_o = 0;
    for (uint32_t i = 0; i < s.n; i++) {
        weft_sim_result rh, ro;
        CHECK_ERR(weft_sim_plan(t, hier, s.size[i], &o, &rh, &d), WEFT_OK);
        CHECK_ERR(weft_sim_plan(t, opt, s.size[i], &o, &ro, &d), WEFT_OK);
        double eh = rh.busbw_gbps / s.busbw[i] - 1, eo = ro.busbw_gbps / s.busbw[i] - 1;
        sum_h += fabs(log(rh.busbw_gbps / s.busbw[i]));
        sum_o += fabs(log(ro.busbw_gbps / s.busbw[i]));
        if (verbose || s.size[i] >= (64u << 20))
            printf("  %12llu %10.2f %10.2f %+7.1f%% %10.2f %+7.1f%%\n",
                   (unsigned long long)s.size[i], s.busbw[i], rh.busbw_gbps, 100 * eh,
                   ro.busbw_gbps, 100 * eo);
        CHECK(s.busbw[i] <= bound_bus);
        if (s.size[i] >= (64u << 20))
            CHECK(ro.busbw_gbps >= s.busbw[i]);
        CHECK(rh.busbw_gbps >= last_h && ro.busbw_gbps >= last_o);
        last_h = rh.busbw_gbps;
        last_o = ro.busbw_gbps;
    }
    printf("  geometric mean |error|: hier %.1f%%, optimal %.1f%%\n",
           100 * (exp(sum_h / s.n) - 1), 100 * (exp(sum_o / s.n) - 1));
    weft_plan_free(hier);
    weft_plan_free(opt);
    weft_bound_fini(&b);
    weft_topo_free(t);
    return weft_test_done();
}
