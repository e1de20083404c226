/* Training-step benchmark (weft/work.h): the CPU time of one
 * configuration of a 1,024-GPU job (GPT 76.1B, TP 8, PP 4, DP 32 on
 * a100:128, a fresh context: every simulation runs), of a Mixtral-style
 * MoE step on h100:2 (16 GPUs, EP 8; balanced, then with a zipf 1.2
 * expert load, and on h100:16), and of a sweep of GPT-3 175B on
 * a100:64 (every configuration counted, printed per 100). Never fails on
 * time. */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "weft/topo.h"
#include "weft/work.h"

static double cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static weft_topo *load(const char *spec)
{
    weft_topo *t = NULL;
    weft_diag d;
    if (weft_topo_from_spec(spec, NULL, &t, &d)) {
        printf("%s: %s\n", spec, d.msg);
        return NULL;
    }
    return t;
}

static void one(const char *spec, const char *gpu, const char *model, const weft_parallel *p)
{
    weft_topo *t = load(spec);
    weft_gpu g;
    weft_model m;
    if (!t || !weft_gpu_find(gpu, &g) || !weft_model_find(model, &m))
        return;
    double c0 = cpu_now();
    weft_work_ctx *c = NULL;
    weft_step_result r;
    weft_diag d;
    if (weft_work_ctx_new(t, &g, NULL, &c) || weft_work_step(c, &m, p, false, NULL, &r, &d)) {
        printf("%s %s: failed\n", spec, model);
    } else {
        double cpu = cpu_now() - c0;
        printf("%-9s %-14s %4u GPUs  step %.3f s  MFU %.1f%%  ep exposed %.1f%%  %u "
               "simulations  %.4f s cpu\n",
               spec, model, weft_topo_num_ranks(t), r.step_s, 100 * r.mfu,
               100 * r.exposed_s[WEFT_COMM_EP] / r.step_s, r.sims, cpu);
    }
    weft_work_ctx_free(c);
    weft_topo_free(t);
}

int main(void)
{
    weft_parallel p;
    weft_parallel_init(&p);
    p.tp = 8;
    p.pp = 4;
    p.global_batch = 1792;
    p.recompute = WEFT_RECOMPUTE_FULL;
    one("a100:128", "a100-80g", "gpt-76.1b", &p);
    weft_parallel_init(&p);
    p.tp = 2;
    p.ep = 8;
    p.sp = true;
    p.global_batch = 64;
    p.recompute = WEFT_RECOMPUTE_SELECTIVE;
    p.dist_opt = true;
    one("h100:2", "h100-sxm", "mixtral-8x7b", &p);
    /* The same with a skewed expert load (zipf 1.2): every EP group's
     * routing drawn, dispatch and combine simulated as alltoallv plans. */
    p.moe_zipf = true;
    p.moe_zipf_milli = 1200;
    p.moe_seed = 1;
    one("h100:2", "h100-sxm", "mixtral-8x7b", &p);
    /* Mixtral on 128 GPUs (docs/step.md), skewed: 16 EP groups. */
    p.global_batch = 512;
    p.overlap_grad = true;
    one("h100:16", "h100-sxm", "mixtral-8x7b", &p);

    weft_topo *t = load("a100:64");
    weft_gpu g;
    weft_model m;
    if (!t || !weft_gpu_find("a100-80g", &g) || !weft_model_find("gpt3-175b", &m))
        return 0;
    weft_parallel_init(&p);
    p.global_batch = 1536;
    weft_work_ctx *c = NULL;
    weft_sweep_entry *e = NULL;
    size_t n = 0;
    weft_diag d;
    double c0 = cpu_now();
    if (weft_work_ctx_new(t, &g, NULL, &c) || weft_work_sweep(c, &m, &p, &e, &n, &d)) {
        printf("sweep failed\n");
    } else {
        double cpu = cpu_now() - c0;
        printf("sweep gpt3-175b on a100:64: %zu configurations in %.3f s cpu (%.4f s per 100); "
               "best %.3f s\n",
               n, cpu, n ? cpu / (double)n * 100 : 0, n ? e[0].res.step_s : 0);
    }
    weft_work_sweep_free(e);
    weft_work_ctx_free(c);
    weft_topo_free(t);
    return 0;
}
