/* The development data (tests/fixtures/narayanan_sc21_table1.csv): every
 * row of Narayanan et al. SC'21 Table 1 predicted on its a100:B fabric,
 * its error printed, and the errors held to what they measured when
 * WEFT_WORK_GEMM_EFF was fitted (docs/step.md, "Validation"): at most
 * 9.0 % on any row, 4.6 % geometric mean (exp of the mean |ln(pred /
 * published)|). A regression check: a change to the model that moves
 * these figures must say so here and in the docs. Measured 3.29 %
 * geometric mean when fitted; 3.40 % (worst 8.8 %) once the embedding's
 * and the loss's collectives were simulated (every row 0.1-1.0 % slower:
 * communication Megatron-LM really issues; nothing refitted); 3.38 %
 * (worst 9.0 %) once the pipeline's exposure came from playing the
 * 1F1B schedule and CP joined the gradient group; 4.52 % (worst 9.0 %)
 * once NCCL's protocol was chosen per communicator (a pipeline send
 * between two boxes no longer pays the whole fabric's latency model: the
 * PP > 1 rows 0.5-5 % faster; nothing refitted). Unchanged (4.52 %,
 * worst 9.0 %) when GEMMs moved from the data-sheet peak to each GPU's
 * measured matmul ceiling: WEFT_WORK_GEMM_EFF, fitted as 0.78 of A100's
 * peak, is restated as 0.78 / (271.2 / 312) of its ceiling, not refitted
 * (a refit on these rows alone would pick 0.87 of 0.86-0.92 by mean
 * |error|, 3.56 %, but its worst row, 10.0 %, breaks the 9.0 % bound).
 * 4.51 % (worst 8.5 %: the 1.7B row from -9.0 to -8.5 %, the 18.4B row
 * +8.0 -> +8.1 %) once the input embedding's dense weight gradient and
 * the fused cross-entropy's bytes were charged (every row 0-0.6 % slower;
 * nothing refitted). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/testing.h"
#include "topo/testing_topo.h"
#include "weft/work.h"

int main(void)
{
    FILE *f = fopen(WEFT_SOURCE_DIR "/tests/fixtures/narayanan_sc21_table1.csv", "r");
    CHECK(f != NULL);
    if (!f)
        return weft_test_done();
    weft_gpu g;
    CHECK(weft_gpu_find("a100-80g", &g));
    char line[256];
    double sum_log = 0, worst = 0;
    int rows = 0;
    printf("%-8s %6s %5s %12s %12s %8s\n", "params", "gpus", "tp/pp", "published s", "predicted s",
           "error");
    while (fgets(line, sizeof line, f)) {
        if (line[0] == '#' || line[0] == '\n')
            continue;
        double pb, X;
        unsigned a, h, l, tp, pp, n, B;
        if (sscanf(line, "%lf,%u,%u,%u,%u,%u,%u,%u,%lf", &pb, &a, &h, &l, &tp, &pp, &n, &B, &X) !=
            9) {
            CHECK(!"malformed fixture row");
            continue;
        }
        double s = 2048, V = 51200;
        double F = 96.0 * B * s * l * (double)h * h * (1 + s / (6.0 * h) + V / (16.0 * l * h));
        double published = F / (n * X * 1e12);
        char spec[32];
        snprintf(spec, sizeof spec, "a100:%u", n / 8);
        weft_topo *t = weft__test_topo_spec(spec);
        CHECK(t != NULL);
        if (!t)
            continue;
        weft_model m;
        memset(&m, 0, sizeof m);
        m.layers = l;
        m.hidden = h;
        m.heads = a;
        weft_parallel p;
        weft_parallel_init(&p);
        p.tp = tp;
        p.pp = pp;
        p.global_batch = B;
        p.micro_batch = 1;
        p.recompute = WEFT_RECOMPUTE_FULL;
        weft_work_ctx *c = NULL;
        CHECK_ERR(weft_work_ctx_new(t, &g, NULL, &c), WEFT_OK);
        weft_step_result r;
        weft_diag d;
        weft_diag_clear(&d);
        weft_err err = weft_work_step(c, &m, &p, true, NULL, &r, &d);
        CHECK_ERR(err, WEFT_OK);
        if (!err) {
            /* The paper's TFLOP/s count recomputation: our hw_flops. */
            CHECK(fabs(r.counts.hw_flops / F - 1) < 1e-12);
            double e = r.step_s / published - 1;
            printf("%7.1fB %6u %2u/%-2u %12.3f %12.3f %+7.1f%%\n", pb, n, tp, pp, published,
                   r.step_s, 100 * e);
            sum_log += fabs(log(r.step_s / published));
            if (fabs(e) > worst)
                worst = fabs(e);
            rows++;
        } else {
            fprintf(stderr, "%s: %s\n", spec, d.msg);
        }
        weft_work_ctx_free(c);
        weft_topo_free(t);
    }
    fclose(f);
    CHECK_INT(rows, 10);
    double geo = exp(sum_log / (rows ? rows : 1)) - 1;
    printf("worst %.1f%%, geometric mean error %.2f%%\n", 100 * worst, 100 * geo);
    CHECK(worst <= 0.090);
    CHECK(geo <= 0.046);
    return weft_test_done();
}
