/* Cupcake's sign under weft's step model (Wang et al., "Cupcake: A
 * Compression Scheduler for Scalable Communication-Efficient Distributed
 * Training", MLSys 2023): on a 16-GPU job (GPT 1.7B, DP 16 on a100:2, two
 * hosts of 8 A100s), compressing the gradients after fusing consecutive
 * tensors (the fusion of least step time, --grad-compression C,fuse=dp)
 * against compressing every tensor alone (per-layer compression,
 * C,fuse=tensor), on three NIC speeds, with the gradients reduced after
 * the backward and during it (--overlap-grad-reduce). Prints both steps,
 * their ratio, the dense step and Megatron's buckets compressed for
 * reference, and auto's step (Espresso's per-group decision with the
 * fusion), with the wall and CPU time of each search (a fresh context:
 * every simulation runs). Never fails on time. */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "weft/topo.h"
#include "weft/work.h"

static double now(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

typedef struct run {
    double step, wall, cpu;
    uint32_t groups, compressed;
} run;

static int step(const char *spec, const weft_gpu *g, const weft_model *m, bool overlap,
                const char *gc, run *out)
{
    weft_topo *t = NULL;
    weft_diag d;
    if (weft_topo_from_spec(spec, NULL, &t, &d)) {
        printf("%s: %s\n", spec, d.msg);
        return 1;
    }
    weft_work_ctx *c = NULL;
    weft_parallel p;
    weft_parallel_init(&p);
    p.global_batch = 64;
    p.recompute = WEFT_RECOMPUTE_FULL;
    p.overlap_grad = overlap;
    int rc = 0;
    if (gc && weft_grad_compression_parse(gc, &p, &d)) {
        printf("%s: %s\n", gc, d.msg);
        rc = 1;
    }
    weft_step_result r;
    double w0 = now(CLOCK_MONOTONIC), c0 = now(CLOCK_PROCESS_CPUTIME_ID);
    if (!rc &&
        (weft_work_ctx_new(t, g, NULL, &c) || weft_work_step(c, m, &p, true, NULL, &r, &d))) {
        printf("%s %s: %s\n", spec, gc ? gc : "dense", d.msg);
        rc = 1;
    }
    out->wall = now(CLOCK_MONOTONIC) - w0;
    out->cpu = now(CLOCK_PROCESS_CPUTIME_ID) - c0;
    if (!rc) {
        out->step = r.step_s;
        out->groups = r.gc_groups;
        out->compressed = r.gc_compressed;
    }
    weft_work_ctx_free(c);
    weft_topo_free(t);
    return rc;
}

int main(void)
{
    static const char *const fab[] = {"a100:2", "a100:2,nicbw=25Gbps", "a100:2,nicbw=3.125Gbps"};
    static const char *const comp[] = {"int8", "sign"};
    weft_gpu g;
    weft_model m;
    if (!weft_gpu_find("a100-80g", &g) || !weft_model_find("gpt-1.7b", &m))
        return 1;
    printf("gpt-1.7b, DP 16 on 16 x a100-80g (2 hosts), global batch 64, full recompute; "
           "step times in s\n");
    printf("%-24s %-7s %-8s %9s %9s %11s %9s %7s %9s %9s %9s\n", "fabric", "overlap", "comp",
           "dense", "buckets", "per-tensor", "fused", "ratio", "auto", "wall s", "cpu s");
    for (size_t f = 0; f < sizeof fab / sizeof *fab; f++)
        for (int ov = 0; ov < 2; ov++)
            for (size_t k = 0; k < sizeof comp / sizeof *comp; k++) {
                char pt[32], fu[32], au[32];
                snprintf(pt, sizeof pt, "%s,fuse=tensor", comp[k]);
                snprintf(fu, sizeof fu, "%s,fuse=dp", comp[k]);
                snprintf(au, sizeof au, "auto:%s", comp[k]);
                run rd, rb, rt, rf, ra;
                if (step(fab[f], &g, &m, ov, NULL, &rd) || step(fab[f], &g, &m, ov, comp[k], &rb) ||
                    step(fab[f], &g, &m, ov, pt, &rt) || step(fab[f], &g, &m, ov, fu, &rf) ||
                    step(fab[f], &g, &m, ov, au, &ra))
                    return 1;
                printf("%-24s %-7s %-8s %9.4f %9.4f %11.4f %9.4f %6.3fx %9.4f %9.2f %9.2f\n",
                       fab[f], ov ? "yes" : "no", comp[k], rd.step, rb.step, rt.step, rf.step,
                       rt.step / rf.step, ra.step, ra.wall, ra.cpu);
                printf("%-24s %-7s %-8s groups: buckets %u, per-tensor %u, fused %u, auto %u "
                       "(%u compressed); fused search %.2f s wall, %.2f s CPU\n",
                       "", "", "", rb.groups, rt.groups, rf.groups, ra.groups, ra.compressed,
                       rf.wall, rf.cpu);
            }
    return 0;
}
