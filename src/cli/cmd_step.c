/* weft step: one training step of a model on a fabric (weft/work.h). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/file.h"
#include "cli/args.h"
#include "cli/cli.h"
#include "cli/commands.h"
#include "cli/fabric.h"
#include "cli/flagvals.h"
#include "cli/json.h"
#include "cli/megatron_flags.h"
#include "cli/outfile.h"
#include "cli/step_chakra.h"
#include "cli/step_choices.h"
#include "cli/step_ckpt.h"
#include "cli/step_dlrm.h"
#include "cli/table.h"
#include "weft/work.h"

static const cli_opt step_opts[] = {
    {"fabric", 0, "SPEC", "the fabric: a preset (a100:4) or a .topo file (required)"},
    {"gpu", 0, "NAME", "a100-80g, a100-40g, h100-sxm, h200, b200, mi250x or mi300x"},
    {"gpu-file", 0, "FILE", "a GPU described by key = value lines (docs/step.md)"},
    {"chakra", 0, "PREFIX", "run Chakra traces PREFIX.0.et .. PREFIX.(N-1).et instead of a model"},
    {"json", 0, NULL, "print one JSON object instead of the report"},
    {"trace", 0, "FILE", "write the step as a Chrome/Perfetto trace"},
    {"sweep", 0, NULL, "rank every valid parallelism that fits in memory by step time"},
    {"top", 0, "N", "--sweep: print the N fastest that fit (default 10)"},
    {"order", 0, "ORDER", "placement, innermost first (default tp-cp-ep-dp-pp)"},
    {"idle", 0, NULL, "each link group's busy and idle time over the step"},
    {"checkpoint", 0, "SPEC",
     "gemini[:replicas=K,placement=group|ring] or remote[:bw=BW]: checkpoint cost"},
    {"failures-per-day", 0, "F", "--checkpoint: failures a day, for the time lost"},
    {"restart", 0, "S", "--checkpoint: seconds a restart takes (default 0)"},
    {"coll-algo", 0, "nccl|best",
     "how each group's collectives run: what NCCL runs (default), or the\n"
     "fastest schedule weft sim --compare ranks on the group's fabric (an\n"
     "all-to-all of a matrix, as DLRM's: its fastest alltoallv plan)"},
    {NULL, 0, NULL, NULL},
};

static const cli_opt model_opts[] = {
    {"model", 0, "NAME", "a preset (weft step --list-models); flags below override it"},
    {"list-models", 0, NULL, "print the presets and their sources"},
    {"num-layers", 0, "N", "transformer layers"},
    {"hidden-size", 0, "N", "model width"},
    {"ffn-hidden-size", 0, "N", "default 4 x --hidden-size"},
    {"num-attention-heads", 0, "N", "attention heads"},
    {"num-query-groups", 0, "N", "grouped-query attention (default: the heads)"},
    {"kv-channels", 0, "N", "default --hidden-size / --num-attention-heads"},
    {"seq-length", 0, "N", "default 2048"},
    {"vocab-size", 0, "N", "default 51200"},
    {"swiglu", 0, NULL, "gated MLP, no biases, RMSNorm, untied output (llama style)"},
    {"num-experts", 0, "N", "mixture of experts in every layer"},
    {"moe-router-topk", 0, "K", "default 2"},
    {"moe-ffn-hidden-size", 0, "N", "default --ffn-hidden-size"},
    {"moe-layer-freq", 0, "N|([0]*K+[1]*M)",
     "every N-th layer MoE, or K dense layers then M MoE (default 1)"},
    {"untie-embeddings-and-output-weights", 0, NULL, "gpt style with its own output layer"},
    {"multi-latent-attention", 0, NULL, "MLA (DeepSeek-V2/V3)"},
    {"q-lora-rank", 0, "N", "MLA: query down-projection rank (default none)"},
    {"kv-lora-rank", 0, "N", "MLA: key-value latent rank (default 512)"},
    {"qk-head-dim", 0, "N", "MLA: query/key channels per head without rotary (default 128)"},
    {"qk-pos-emb-head-dim", 0, "N", "MLA: rotary query/key channels per head (default 64)"},
    {"v-head-dim", 0, "N", "MLA: value channels per head (default 128)"},
    {NULL, 0, NULL, NULL},
};

static const cli_opt par_opts[] = {
    {"tensor-model-parallel-size", 0, "N", "TP (default 1)"},
    {"pipeline-model-parallel-size", 0, "N", "PP (default 1)"},
    {"num-layers-per-virtual-pipeline-stage", 0, "N", "interleaved 1F1B"},
    {"num-virtual-stages-per-pipeline-rank", 0, "N", "interleaved 1F1B: virtual stages per rank"},
    {"virtual-pipeline-model-parallel-size", 0, "N", "the same (Megatron's older name)"},
    {"decoder-first-pipeline-num-layers", 0, "N", "layers of the first stage (uneven stages)"},
    {"decoder-last-pipeline-num-layers", 0, "N", "layers of the last stage (uneven stages)"},
    {"context-parallel-size", 0, "N", "CP (default 1)"},
    {"expert-model-parallel-size", 0, "N", "EP, inside DP (default 1)"},
    {"sequence-parallel", 0, NULL, "TP all-gather/reduce-scatter instead of all-reduce"},
    {"tp-comm-overlap", 0, NULL,
     "with --sequence-parallel: TP collectives overlapped with the Linear GEMMs (userbuffers)"},
    {"global-batch-size", 0, "N", "sequences per step (default: one micro-batch per DP rank)"},
    {"micro-batch-size", 0, "N", "sequences per micro-batch (default 1)"},
    {"recompute-granularity", 0, "G", "full or selective (default none)"},
    {"checkpoint-activations", 0, NULL, "full recomputation (Megatron-DeepSpeed's name)"},
    {"use-flash-attn", 0, NULL, "fused attention: no score matrix kept or written"},
    {"zero-stage", 0, "N", "DeepSpeed ZeRO 0-3 (Megatron-DeepSpeed; docs/step.md)"},
    {"bf16", 0, NULL, "bf16 (the default)"},
    {"fp16", 0, NULL, "fp16 tensor cores"},
    {"fp8-format", 0, "F", "hybrid or e4m3: fp8 GEMMs"},
    {"use-distributed-optimizer", 0, NULL, "shard the optimizer state over DP"},
    {"overlap-grad-reduce", 0, NULL, "reduce gradients during the last backward"},
    {"moe-skew", 0, "uniform|zipf:S",
     "expert load: balanced (default) or routing drawn as weft traffic moe --skew zipf:S"},
    {"seed", 0, "S", "--moe-skew zipf:S: seed of EP group 0 (group g: S + g; default 0)"},
    {"grad-compression", 0, "C",
     "compress the DP gradients: C (int8, fp8[:B], qsgd:S, sign, topk:D, dgc:D, randk:D)"
     " on every bucket, or auto[:C] to search per group (compress or not, GPU or CPU, which"
     " collective); ,fuse=bucket|tensor|dp groups the tensors (dp: the optimal fusion);"
     " GPU compute: the roofline model of each compressor's kernels (docs/step.md)"},
    {NULL, 0, NULL, NULL},
};

static const cli_optgroup step_group = {"options", step_opts, false};
static const cli_optgroup model_group = {"model (Megatron-LM's flags)", model_opts, false};
static const cli_optgroup par_group = {"parallelism and training (Megatron-LM's flags)", par_opts,
                                       false};

static const cli_syntax step_syntax = {
    .path = "weft step",
    .args = "--fabric SPEC --gpu NAME [--model NAME] [Megatron-LM flags] [--json] "
            "[--trace FILE] [--sweep]\n"
            "       [--idle] [--checkpoint SPEC [--failures-per-day F] [--restart S]]\n"
            "       [--coll-algo nccl|best]\n"
            "       weft step --fabric SPEC --gpu NAME --model dlrm|dlrm-mlperf [--tables SPEC] "
            "[--bottom-mlp W-..] [--top-mlp W-..] [--sharding PLAN] [--sweep]\n"
            "       [--emb-cache ROWS|FRAC[,..]] [--placement herald|random] [--overlap] "
            "[--coll-algo nccl|best] [--a2a-algo NAME]\n"
            "       weft step --chakra PREFIX --fabric SPEC [--gpu NAME] [--json] [--trace FILE]\n"
            "       [--coll-algo nccl|best]",
    .about = "Predicts one training step of a transformer on a fabric: the compute of\n"
             "every layer from the GPU's peak and a roofline with shape-dependent GEMM\n"
             "efficiency, and every collective of the step (TP, CP, DP buckets, PP sends,\n"
             "EP all-to-all, the embedding's and the loss's) simulated on the fabric with\n"
             "all groups of a kind at once (--moe-skew zipf:S: each EP group's routing\n"
             "drawn as weft traffic moe draws it),\n"
             "placed in Megatron's order (TP innermost, then CP, EP, DP, PP). Data\n"
             "parallelism is the fabric's ranks / (TP x PP x CP). Prints the step time,\n"
             "its parts (compute, pipeline bubble, exposed communication per kind,\n"
             "optimizer), MFU and memory per GPU; a configuration that Megatron would\n"
             "reject, or that does not fit in the GPU's memory, is an error naming the\n"
             "flag (exit 1). --sweep ranks every valid (TP, PP, virtual stages, CP, EP,\n"
             "micro-batch, recompute) that fits. docs/step.md has the model.\n"
             "--chakra PREFIX runs Chakra execution traces (ASTRA-sim's workload format),\n"
             "one file per rank of the fabric, on the same engine: compute nodes take\n"
             "their duration (or their FLOPs and bytes on --gpu), collectives are matched\n"
             "across ranks by order within their process group and simulated on the\n"
             "fabric, concurrent ones together; prints the total time, each rank's\n"
             "compute and exposed communication, and the time per kind of collective.\n"
             "--idle adds each link group's idle time in the step; --checkpoint the cost\n"
             "of checkpointing the optimizer state to peers' CPU memory in the NICs' idle\n"
             "time (GEMINI: also simulated, the checkpoint a lower-priority traffic class\n"
             "beside the step's NIC traffic) or to remote storage (docs/step.md\n"
             "\"Checkpoints\").\n"
             "--model dlrm (or the preset dlrm-mlperf, MLPerf's DLRM-DCNv2) predicts a\n"
             "recommendation model's step: embedding lookups at HBM bandwidth, the\n"
             "forward and backward embedding all-to-alls of the sharded tables simulated\n"
             "on the fabric, the dense MLPs' GEMMs and their gradient all-reduce;\n"
             "--sweep ranks sharding plans, the planner's per-table plan among them;\n"
             "--emb-cache and --placement herald model Herald's per-GPU caches and\n"
             "location-aware placement of samples, --overlap hides the all-to-alls\n"
             "behind the bottom MLP (docs/step.md, \"DLRM\").\n",
    .groups = {&step_group, &model_group, &par_group, &cli_dlrm_options, &cli_fabric_options,
               &cli_megatron_other},
    .min_pos = 0,
    .max_pos = 0,
};

#define GIB 1073741824.0

static int u32_flag(const cli_args *a, const char *name, uint32_t *out)
{
    uint64_t x = *out;
    int rc = cli_flag_whole(&step_syntax, a, name, 1, 100000000ull, &x);
    *out = (uint32_t)x;
    return rc;
}

static void list_models(void)
{
    for (size_t i = 0; i < weft_model_count(); i++) {
        const weft_model *m = weft_model_at(i);
        printf("%-14s %s\n", m->name, weft_model_source(i));
    }
    printf("%-14s %s\n", "dlrm", "a DLRM of --tables, --bottom-mlp, --top-mlp (docs/step.md)");
    printf("%-14s %s\n", "dlrm-mlperf",
           "MLPerf Training DLRM-DCNv2, Criteo 1TB (mlcommons/training "
           "recommendation_v2/torchrec_dlrm)");
}

/* The model from --model and the flags. */
static int read_model(const cli_args *a, weft_model *m)
{
    memset(m, 0, sizeof *m);
    const char *name = cli_args_get(a, "model");
    if (name && !weft_model_find(name, m))
        return cli_usage_error(&step_syntax,
                               "unknown --model '%s' (weft step --list-models lists "
                               "them)",
                               name);
    if (!name)
        snprintf(m->name, sizeof m->name, "custom");
    int rc;
    if ((rc = u32_flag(a, "num-layers", &m->layers)) ||
        (rc = u32_flag(a, "hidden-size", &m->hidden)) ||
        (rc = u32_flag(a, "ffn-hidden-size", &m->ffn)) ||
        (rc = u32_flag(a, "num-attention-heads", &m->heads)) ||
        (rc = u32_flag(a, "num-query-groups", &m->query_groups)) ||
        (rc = u32_flag(a, "kv-channels", &m->kv_channels)) ||
        (rc = u32_flag(a, "seq-length", &m->seq)) || (rc = u32_flag(a, "vocab-size", &m->vocab)) ||
        (rc = u32_flag(a, "num-experts", &m->experts)) ||
        (rc = u32_flag(a, "moe-router-topk", &m->topk)) ||
        (rc = u32_flag(a, "moe-ffn-hidden-size", &m->moe_ffn)))
        return rc;
    if (cli_args_has(a, "swiglu"))
        m->swiglu = true;
    if (cli_args_has(a, "untie-embeddings-and-output-weights"))
        m->untie = true;
    if (cli_args_has(a, "multi-latent-attention"))
        m->mla = true;
    if ((rc = u32_flag(a, "q-lora-rank", &m->q_lora)) ||
        (rc = u32_flag(a, "kv-lora-rank", &m->kv_lora)) ||
        (rc = u32_flag(a, "qk-head-dim", &m->qk_head)) ||
        (rc = u32_flag(a, "qk-pos-emb-head-dim", &m->qk_rope)) ||
        (rc = u32_flag(a, "v-head-dim", &m->v_head)))
        return rc;
    const char *lf = cli_args_get(a, "moe-layer-freq");
    if (lf) {
        unsigned long k = 0, n = 0;
        int used = 0;
        char *end;
        errno = 0;
        unsigned long long x = strtoull(lf, &end, 10);
        if (*lf >= '1' && *lf <= '9' && !*end && !errno && x <= 100000000ull) {
            m->moe_freq = (uint32_t)x;
            m->moe_first_dense = 0;
        } else if ((sscanf(lf, "([0]*%lu+[1]*%lu)%n", &k, &n, &used) == 2 ||
                    sscanf(lf, "[0]*%lu+[1]*%lu%n", &k, &n, &used) == 2) &&
                   !lf[used] && n >= 1 && k + n <= 100000000ul) {
            if (k + n != m->layers) {
                cli_error("--moe-layer-freq '%s' gives %lu layers, --num-layers is %u", lf, k + n,
                          m->layers);
                return CLI_EXIT_INPUT;
            }
            m->moe_first_dense = (uint32_t)k;
            m->moe_freq = 1;
        } else {
            return cli_usage_error(&step_syntax,
                                   "bad --moe-layer-freq '%s': a whole number N (every N-th "
                                   "layer) or ([0]*K+[1]*M) (K dense layers, then M MoE)",
                                   lf);
        }
    }
    return CLI_EXIT_OK;
}

static int read_parallel(const cli_args *a, weft_parallel *p)
{
    weft_parallel_init(p);
    int rc;
    if ((rc = u32_flag(a, "tensor-model-parallel-size", &p->tp)) ||
        (rc = u32_flag(a, "pipeline-model-parallel-size", &p->pp)) ||
        (rc = u32_flag(a, "num-layers-per-virtual-pipeline-stage", &p->layers_per_vstage)) ||
        (rc = u32_flag(a, "context-parallel-size", &p->cp)) ||
        (rc = u32_flag(a, "expert-model-parallel-size", &p->ep)) ||
        (rc = u32_flag(a, "global-batch-size", &p->global_batch)) ||
        (rc = u32_flag(a, "micro-batch-size", &p->micro_batch)) ||
        (rc = u32_flag(a, "decoder-first-pipeline-num-layers", &p->first_stage_layers)) ||
        (rc = u32_flag(a, "decoder-last-pipeline-num-layers", &p->last_stage_layers)))
        return rc;
    static const char *const vflags[2] = {"num-virtual-stages-per-pipeline-rank",
                                          "virtual-pipeline-model-parallel-size"};
    if (cli_args_has(a, vflags[0]) && cli_args_has(a, vflags[1]))
        return cli_usage_error(&step_syntax, "--%s and --%s are one setting: give one", vflags[0],
                               vflags[1]);
    for (int i = 0; i < 2; i++)
        if ((rc = u32_flag(a, vflags[i], &p->vpp)))
            return rc;
    uint64_t zs = 0;
    if ((rc = cli_flag_whole(&step_syntax, a, "zero-stage", 0, 3, &zs)))
        return rc;
    p->zero_stage = (uint32_t)zs;
    p->flash_attn = cli_args_has(a, "use-flash-attn");
    if (!cli_args_get(a, "global-batch-size"))
        p->global_batch = 0; /* one micro-batch per DP rank, set once DP is known */
    p->sp = cli_args_has(a, "sequence-parallel");
    p->tp_comm_overlap = cli_args_has(a, "tp-comm-overlap");
    const char *rg = cli_args_get(a, "recompute-granularity");
    if (rg && !strcmp(rg, "full"))
        p->recompute = WEFT_RECOMPUTE_FULL;
    else if (rg && !strcmp(rg, "selective"))
        p->recompute = WEFT_RECOMPUTE_SELECTIVE;
    else if (rg)
        return cli_usage_error(&step_syntax, "bad --recompute-granularity '%s': full or selective",
                               rg);
    if (cli_args_has(a, "checkpoint-activations")) {
        if (rg && p->recompute != WEFT_RECOMPUTE_FULL)
            return cli_usage_error(&step_syntax,
                                   "--checkpoint-activations is full recomputation: "
                                   "it contradicts --recompute-granularity %s",
                                   rg);
        p->recompute = WEFT_RECOMPUTE_FULL;
    }
    if (cli_args_has(a, "bf16") && cli_args_has(a, "fp16"))
        return cli_usage_error(&step_syntax, "--bf16 and --fp16 exclude each other");
    if (cli_args_has(a, "fp16"))
        p->prec = WEFT_PREC_FP16;
    const char *f8 = cli_args_get(a, "fp8-format");
    if (f8 && strcmp(f8, "hybrid") && strcmp(f8, "e4m3"))
        return cli_usage_error(&step_syntax, "bad --fp8-format '%s': hybrid or e4m3", f8);
    if (f8)
        p->prec = WEFT_PREC_FP8;
    const char *sk = cli_args_get(a, "moe-skew");
    if (sk &&
        (rc = cli_flag_skew(&step_syntax, "--moe-skew", sk, &p->moe_zipf, &p->moe_zipf_milli)))
        return rc;
    if ((rc = cli_flag_whole(&step_syntax, a, "seed", 0, UINT64_MAX, &p->moe_seed)))
        return rc;
    p->dist_opt = cli_args_has(a, "use-distributed-optimizer");
    p->overlap_grad = cli_args_has(a, "overlap-grad-reduce");
    const char *gc = cli_args_get(a, "grad-compression");
    weft_diag gd = {0};
    if (gc && weft_grad_compression_parse(gc, p, &gd))
        return cli_usage_error(&step_syntax, "bad --grad-compression: %s", gd.msg);
    const char *ord = cli_args_get(a, "order");
    if (ord && !weft_parallel_order_parse(ord, p->order))
        return cli_usage_error(&step_syntax,
                               "bad --order '%s': tp, cp, ep, dp and pp once each, innermost "
                               "first, joined by '-' (tp-cp-ep-dp-pp)",
                               ord);
    return CLI_EXIT_OK;
}

static int read_gpu(const cli_args *a, weft_gpu *g)
{
    const char *name = cli_args_get(a, "gpu"), *file = cli_args_get(a, "gpu-file");
    if (name && file)
        return cli_usage_error(&step_syntax, "--gpu and --gpu-file exclude each other");
    if (!name && !file)
        return cli_usage_error(&step_syntax, "missing --gpu (a100-80g, a100-40g, h100-sxm, h200, "
                                             "b200, mi250x, mi300x) or --gpu-file");
    if (name) {
        if (weft_gpu_find(name, g))
            return CLI_EXIT_OK;
        return cli_usage_error(&step_syntax,
                               "unknown --gpu '%s' (a100-80g, a100-40g, h100-sxm, h200, b200, "
                               "mi250x, mi300x; --gpu-file for others)",
                               name);
    }
    char *text = NULL;
    size_t len = 0;
    weft_diag d;
    weft_diag_clear(&d);
    weft_err e = weft__file_read(file, 1 << 20, "GPU file", &text, &len, &d);
    if (!e)
        e = weft_gpu_parse(text, len, file, g, &d);
    free(text);
    return e ? cli_fail(e, &d) : CLI_EXIT_OK;
}

static const char *fuse_name(const weft_parallel *p)
{
    uint32_t f = p->grad_fuse ? p->grad_fuse : p->grad_auto ? WEFT_GC_FUSE_DP : WEFT_GC_FUSE_BUCKET;
    return f == WEFT_GC_FUSE_BUCKET ? "bucket" : f == WEFT_GC_FUSE_TENSOR ? "tensor" : "dp";
}

static const char *gc_place(const weft_gc_group *g)
{
    return !g->compressed ? "dense" : g->cpu ? "cpu" : "gpu";
}

static void json_result(cli_json *j, const weft_parallel *p, const weft_step_result *r,
                        const weft_gc_report *gr)
{
    const weft_counts *c = &r->counts;
    cli_json_kv_double(j, "step_s", r->step_s);
    cli_json_kv_double(j, "mfu", r->mfu);
    cli_json_kv_double(j, "memory_gib", c->mem_total / GIB);
    cli_json_kv_bool(j, "fits", r->fits);
    cli_json_key(j, "breakdown");
    cli_json_begin_object(j);
    cli_json_kv_double(j, "compute_s", r->compute_s);
    cli_json_kv_double(j, "bubble_s", r->bubble_s);
    cli_json_kv_double(j, "optimizer_s", r->optimizer_s);
    for (int k = 0; k < WEFT__COMM_COUNT; k++) {
        char key[32];
        snprintf(key, sizeof key, "%s_exposed_s", weft_comm_kind_name((weft_comm_kind)k));
        cli_json_kv_double(j, key, r->exposed_s[k]);
    }
    cli_json_end_object(j);
    cli_json_key(j, "comm");
    cli_json_begin_object(j);
    for (int k = 0; k < WEFT__COMM_COUNT; k++) {
        cli_json_key(j, weft_comm_kind_name((weft_comm_kind)k));
        cli_json_begin_object(j);
        cli_json_kv_double(j, "time_s", r->comm_s[k]);
        cli_json_kv_double(j, "exposed_s", r->exposed_s[k]);
        cli_json_kv_uint(j, "bytes", r->comm_bytes[k]);
        cli_json_kv_uint(j, "calls", r->comm_calls[k]);
        cli_json_end_object(j);
    }
    cli_json_end_object(j);
    cli_json_kv_double(j, "ep_dispatch_s", r->ep_dispatch_s);
    cli_json_kv_double(j, "ep_combine_s", r->ep_combine_s);
    cli_json_kv_uint(j, "ep_busiest_tokens", r->ep_max_tokens);
    if (p->grad_comp.kind != WEFT_COMP_NONE) {
        char spec[64];
        weft_compressor_format(&p->grad_comp, spec, sizeof spec);
        cli_json_key(j, "grad_compression");
        cli_json_begin_object(j);
        cli_json_kv_string(j, "compressor", spec);
        cli_json_kv_string(j, "mode", p->grad_auto ? "auto" : "always");
        cli_json_kv_string(j, "fuse", fuse_name(p));
        cli_json_kv_double(j, "compute_s", r->compress_s);
        cli_json_kv_double(j, "compute_gpu_stream_s", r->compress_gpu_s);
        cli_json_kv_double(j, "compute_cpu_s", r->compress_cpu_s);
        cli_json_kv_uint(j, "bytes_saved", r->compress_saved_bytes);
        cli_json_kv_uint(j, "groups", r->gc_groups);
        cli_json_kv_uint(j, "compressed", r->gc_compressed);
        cli_json_kv_uint(j, "on_cpu", r->gc_cpu);
        cli_json_kv_double(j, "never_step_s", r->gc_never_step_s);
        cli_json_kv_double(j, "always_step_s", r->gc_always_step_s);
        cli_json_kv_bool(j, "exact", r->gc_exact);
        if (gr) {
            cli_json_kv_string(j, "units", gr->units);
            cli_json_kv_uint(j, "unit_count", gr->nunits);
            cli_json_kv_uint(j, "search_states", gr->states);
            cli_json_key(j, "plan");
            cli_json_begin_array(j);
            for (size_t i = 0; i < gr->n; i++) {
                const weft_gc_group *x = &gr->g[i];
                cli_json_begin_object(j);
                cli_json_kv_uint(j, "first", x->first);
                cli_json_kv_uint(j, "last", x->last);
                cli_json_kv_uint(j, "elems", x->elems);
                cli_json_kv_string(j, "place", gc_place(x));
                cli_json_kv_string(j, "collective", x->coll);
                cli_json_kv_double(j, "ready_s", x->ready_s);
                cli_json_kv_double(j, "compute_s", x->compute_s);
                cli_json_kv_double(j, "comm_start_s", x->comm_start_s);
                cli_json_kv_double(j, "end_s", x->end_s);
                cli_json_kv_uint(j, "bytes", x->bytes);
                cli_json_kv_uint(j, "bytes_saved", x->bytes_saved);
                cli_json_end_object(j);
            }
            cli_json_end_array(j);
        }
        cli_json_end_object(j);
    }
    cli_json_key(j, "memory");
    cli_json_begin_object(j);
    cli_json_kv_uint(j, "weights", c->mem_weights);
    cli_json_kv_uint(j, "gradients", c->mem_grads);
    cli_json_kv_uint(j, "optimizer", c->mem_optim);
    cli_json_kv_uint(j, "activations", c->mem_act);
    cli_json_kv_uint(j, "total", c->mem_total);
    cli_json_end_object(j);
    cli_json_kv_uint(j, "params", c->params);
    cli_json_kv_uint(j, "dp", c->dp);
    cli_json_kv_uint(j, "microbatches", c->microbatches);
    cli_json_kv_double(j, "model_flops", c->model_flops);
    cli_json_kv_double(j, "hw_flops", c->hw_flops);
    cli_json_kv_uint(j, "simulations", r->sims);
    cli_json_kv_uint(j, "simulation_cache_hits", r->sim_hits);
}

static void par_text(const weft_parallel *p, const weft_counts *c, char *buf, size_t n)
{
    char pp[48];
    if (c->vstages > 1)
        snprintf(pp, sizeof pp, "%ux%u", p->pp, c->vstages);
    else
        snprintf(pp, sizeof pp, "%u", p->pp);
    size_t k = strlen(pp);
    if (p->first_stage_layers)
        k += (size_t)snprintf(pp + k, sizeof pp - k, " first %u", p->first_stage_layers);
    if (p->last_stage_layers)
        snprintf(pp + k, sizeof pp - k, " last %u", p->last_stage_layers);
    char z[16] = "";
    if (p->zero_stage)
        snprintf(z, sizeof z, " zero%u", p->zero_stage);
    snprintf(buf, n, "TP %u PP %s CP %u EP %u DP %u mbs %u %s%s%s%s%s", p->tp, pp, p->cp, p->ep,
             c->dp, p->micro_batch, weft_recompute_name(p->recompute), p->sp ? " sp" : "",
             p->tp_comm_overlap ? " tp-overlap" : "", p->flash_attn ? " flash" : "", z);
}

/* The plan's groups, runs of consecutive groups reduced alike merged. */
static void print_gc_plan(const weft_gc_report *gr)
{
    cli_table tb;
    cli_table_init(&tb, 8);
    for (size_t k = 1; k < 8; k++)
        if (k != 3)
            cli_table_align_right(&tb, k);
    cli_table_cell(&tb, "%s", gr->units);
    cli_table_cell(&tb, "groups");
    cli_table_cell(&tb, "M elems");
    cli_table_cell(&tb, "reduced");
    cli_table_cell(&tb, "compute s");
    cli_table_cell(&tb, "GiB saved");
    cli_table_cell(&tb, "start s");
    cli_table_cell(&tb, "end s");
    for (size_t i = 0; i < gr->n;) {
        size_t k = i + 1;
        while (k < gr->n && gr->g[k].compressed == gr->g[i].compressed &&
               gr->g[k].cpu == gr->g[i].cpu && !strcmp(gr->g[k].coll, gr->g[i].coll))
            k++;
        double el = 0, comp = 0, sv = 0;
        for (size_t x = i; x < k; x++) {
            el += (double)gr->g[x].elems;
            comp += gr->g[x].compute_s;
            sv += (double)gr->g[x].bytes_saved;
        }
        cli_table_cell(&tb, "%u-%u", gr->g[i].first, gr->g[k - 1].last);
        cli_table_cell(&tb, "%zu", k - i);
        cli_table_cell(&tb, "%.1f", el / 1e6);
        cli_table_cell(&tb, "%s %s", gc_place(&gr->g[i]), gr->g[i].coll);
        cli_table_cell(&tb, "%.4f", comp);
        cli_table_cell(&tb, "%.2f", sv / GIB);
        cli_table_cell(&tb, "%.4f", gr->g[i].comm_start_s);
        cli_table_cell(&tb, "%.4f", gr->g[k - 1].end_s);
        i = k;
    }
    cli_table_print(&tb, stdout, "  ");
    cli_table_fini(&tb);
}

static void print_result(const weft_topo *t, const weft_gpu *g, const weft_model *m,
                         const weft_parallel *p, const weft_step_result *r,
                         const weft_gc_report *gr)
{
    const weft_counts *c = &r->counts;
    char par[160];
    par_text(p, c, par, sizeof par);
    printf("model %s: %.2fB parameters (%.2fB active), %u layers, hidden %u, seq %u\n", m->name,
           c->params / 1e9, c->params_active / 1e9, m->layers, m->hidden, m->seq);
    printf("%u x %s, %s %s, global batch %u, %u micro-batches\n", weft_topo_num_ranks(t), g->name,
           par, weft_prec_name(p->prec), p->global_batch, c->microbatches);
    printf("step %.4f s   MFU %.1f%%   %.1f TFLOP/s per GPU (model)\n", r->step_s, 100 * r->mfu,
           c->model_flops / r->step_s / weft_topo_num_ranks(t) / 1e12);
    cli_table tb;
    cli_table_init(&tb, 5);
    for (size_t k = 1; k < 5; k++)
        cli_table_align_right(&tb, k);
    cli_table_cell(&tb, "part");
    cli_table_cell(&tb, "time s");
    cli_table_cell(&tb, "share");
    cli_table_cell(&tb, "simulated s");
    cli_table_cell(&tb, "GiB sent");
    double parts[3] = {r->compute_s, r->bubble_s, r->optimizer_s};
    static const char *const names[3] = {"compute", "pipeline bubble", "optimizer"};
    for (int i = 0; i < 3; i++) {
        cli_table_cell(&tb, "%s", names[i]);
        cli_table_cell(&tb, "%.4f", parts[i]);
        cli_table_cell(&tb, "%.1f%%", 100 * parts[i] / r->step_s);
        cli_table_cell(&tb, "-");
        cli_table_cell(&tb, "-");
    }
    for (int k = 0; k < WEFT__COMM_COUNT; k++) {
        cli_table_cell(&tb, "%s exposed", weft_comm_kind_name((weft_comm_kind)k));
        cli_table_cell(&tb, "%.4f", r->exposed_s[k]);
        cli_table_cell(&tb, "%.1f%%", 100 * r->exposed_s[k] / r->step_s);
        cli_table_cell(&tb, "%.4f", r->comm_s[k]);
        cli_table_cell(&tb, "%.2f", r->comm_bytes[k] / GIB);
    }
    cli_table_print(&tb, stdout, "  ");
    cli_table_fini(&tb);
    if (p->grad_comp.kind != WEFT_COMP_NONE) {
        char spec[64];
        weft_compressor_format(&p->grad_comp, spec, sizeof spec);
        printf("gradient compression %s%s, fuse=%s: %u of %u groups compressed (%u on the CPU), "
               "%.4f s of compression compute (%.4f on the compute stream), %.2f GiB a GPU not "
               "sent\n",
               p->grad_auto ? "auto:" : "", spec, fuse_name(p), r->gc_compressed, r->gc_groups,
               r->gc_cpu, r->compress_s, r->compress_gpu_s, r->compress_saved_bytes / GIB);
        if (r->gc_groups)
            printf("step with no compression %.4f s, every bucket compressed on the GPU %.4f s, "
                   "this plan %.4f s%s\n",
                   r->gc_never_step_s, r->gc_always_step_s, r->step_s,
                   r->gc_exact ? "" : " (search capped: not proven optimal)");
        if (gr && gr->n)
            print_gc_plan(gr);
    }
    printf("memory per GPU %.1f GiB of %.1f: weights %.1f, gradients %.1f, optimizer %.1f, "
           "activations %.1f\n",
           c->mem_total / GIB, g->hbm_bytes / GIB, c->mem_weights / GIB, c->mem_grads / GIB,
           c->mem_optim / GIB, c->mem_act / GIB);
}

static int run_sweep(weft_work_ctx *ctx, const cli_args *a, const weft_topo *t, const weft_gpu *g,
                     const weft_model *m, const weft_parallel *p)
{
    uint32_t top = 10;
    int rc = u32_flag(a, "top", &top);
    if (rc)
        return rc;
    weft_sweep_entry *e = NULL;
    size_t n = 0;
    weft_diag d;
    weft_diag_clear(&d);
    cli_context_object("sweeping the parallelisms");
    weft_err err = weft_work_sweep(ctx, m, p, &e, &n, &d);
    if (err)
        return cli_fail(err, &d);
    size_t fit = 0;
    while (fit < n && e[fit].res.fits)
        fit++;
    bool json = cli_args_has(a, "json");
    if (json) {
        cli_json j;
        cli_json_init(&j, stdout);
        cli_json_begin_object(&j);
        cli_json_kv_uint(&j, "ranks", weft_topo_num_ranks(t));
        cli_json_kv_string(&j, "gpu", g->name);
        cli_json_kv_uint(&j, "configurations", n);
        cli_json_kv_uint(&j, "fit", fit);
        cli_json_key(&j, "ranked");
        cli_json_begin_array(&j);
        for (size_t i = 0; i < fit && i < top; i++) {
            const weft_parallel *q = &e[i].par;
            cli_json_begin_object(&j);
            cli_json_kv_uint(&j, "tp", q->tp);
            cli_json_kv_uint(&j, "pp", q->pp);
            cli_json_kv_uint(&j, "vstages", e[i].res.counts.vstages);
            cli_json_kv_uint(&j, "cp", q->cp);
            cli_json_kv_uint(&j, "ep", q->ep);
            cli_json_kv_uint(&j, "micro_batch", q->micro_batch);
            cli_json_kv_string(&j, "recompute", weft_recompute_name(q->recompute));
            json_result(&j, q, &e[i].res, NULL);
            cli_json_end_object(&j);
        }
        cli_json_end_array(&j);
        cli_json_end_object(&j);
        rc = cli_json_done(&j);
    } else {
        printf("%zu valid configurations of %s on %u x %s (global batch %u), %zu fit in "
               "memory; the %zu fastest:\n",
               n, m->name, weft_topo_num_ranks(t), g->name, p->global_batch, fit,
               fit < top ? fit : (size_t)top);
        bool gc = p->grad_comp.kind != WEFT_COMP_NONE;
        size_t cols = gc ? 8 : 6;
        cli_table tb;
        cli_table_init(&tb, cols);
        for (size_t k = 2; k < cols; k++)
            cli_table_align_right(&tb, k);
        cli_table_cell(&tb, "rank");
        cli_table_cell(&tb, "parallelism");
        cli_table_cell(&tb, "step s");
        cli_table_cell(&tb, "MFU");
        cli_table_cell(&tb, "GiB");
        cli_table_cell(&tb, "bubble s");
        if (gc) {
            cli_table_cell(&tb, "compressed");
            cli_table_cell(&tb, "dense step s");
        }
        for (size_t i = 0; i < fit && i < top; i++) {
            char par[160];
            par_text(&e[i].par, &e[i].res.counts, par, sizeof par);
            cli_table_cell(&tb, "%zu", i + 1);
            cli_table_cell(&tb, "%s", par);
            cli_table_cell(&tb, "%.4f", e[i].res.step_s);
            cli_table_cell(&tb, "%.1f%%", 100 * e[i].res.mfu);
            cli_table_cell(&tb, "%.1f", e[i].res.counts.mem_total / GIB);
            cli_table_cell(&tb, "%.4f", e[i].res.bubble_s);
            if (gc && e[i].res.gc_groups) {
                cli_table_cell(&tb, "%u/%u", e[i].res.gc_compressed, e[i].res.gc_groups);
                cli_table_cell(&tb, "%.4f", e[i].res.gc_never_step_s);
            } else if (gc) {
                cli_table_cell(&tb, "-");
                cli_table_cell(&tb, "-");
            }
        }
        cli_table_print(&tb, stdout, "  ");
        cli_table_fini(&tb);
    }
    weft_work_sweep_free(e);
    return rc;
}

/* Flag --name, when given, as a number >= 0. */
static int real_flag(const cli_args *a, const char *name, double *out)
{
    const char *v = cli_args_get(a, name);
    if (!v)
        return CLI_EXIT_OK;
    char *end;
    errno = 0;
    double x = strtod(v, &end);
    if (!*v || *end || errno || !(x >= 0) || isinf(x))
        return cli_usage_error(&step_syntax, "bad --%s '%s': a number >= 0", name, v);
    *out = x;
    return CLI_EXIT_OK;
}

int cli_cmd_step(int argc, char **argv)
{
    cli_args a;
    int rc = cli_args_parse(&step_syntax, argc, argv, &a);
    if (rc != CLI_CONTINUE)
        return rc;
    cli_ckpt_out co;
    memset(&co, 0, sizeof co);
    const char *chakra = cli_args_get(&a, "chakra");
    if (chakra && cli_step_dlrm_flag(&a)) {
        rc = cli_usage_error(&step_syntax, "--chakra runs traces: --%s does not apply",
                             cli_step_dlrm_flag(&a));
        goto free_args;
    }
    if (chakra) {
        weft_gpu g;
        bool has_gpu = cli_args_get(&a, "gpu") || cli_args_get(&a, "gpu-file");
        if (!has_gpu || !(rc = read_gpu(&a, &g)))
            rc = cli_step_chakra(&a, chakra, &step_syntax, has_gpu ? &g : NULL);
        goto free_args;
    }
    if (cli_step_is_dlrm(cli_args_get(&a, "model"))) {
        const cli_optgroup *const foreign[] = {&model_group, &par_group, NULL};
        rc = cli_step_dlrm(&a, &step_syntax, foreign);
        goto free_args;
    }
    const char *dflag = cli_step_dlrm_flag(&a);
    if (dflag) {
        rc = cli_usage_error(&step_syntax, "--%s needs --model dlrm or dlrm-mlperf", dflag);
        goto free_args;
    }
    if (cli_args_has(&a, "list-models")) {
        list_models();
        rc = CLI_EXIT_OK;
        goto free_args;
    }
    const char *spec = cli_args_get(&a, "fabric");
    if (!spec) {
        rc = cli_usage_error(&step_syntax, "missing --fabric SPEC");
        goto free_args;
    }
    weft_gpu g;
    weft_model m;
    weft_parallel p;
    cli_megatron_seen seen;
    if ((rc = read_gpu(&a, &g)) || (rc = read_model(&a, &m)) || (rc = read_parallel(&a, &p)) ||
        (rc = cli_megatron_check(&step_syntax, &a, &seen)))
        goto free_args;
    cli_megatron_report(&seen);
    weft_topo *t = NULL;
    if ((rc = cli_load_fabric(&a, spec, &t)))
        goto free_args;
    weft_model_complete(&m);
    if (!p.global_batch) {
        uint64_t mp = (uint64_t)p.tp * p.pp * p.cp, ranks = weft_topo_num_ranks(t);
        p.global_batch =
            (uint32_t)(mp && ranks % mp == 0 ? ranks / mp * p.micro_batch : p.micro_batch);
    }
    weft_work_ctx *ctx = NULL;
    weft_diag d;
    weft_diag_clear(&d);
    weft_err err = weft_work_ctx_new(t, &g, NULL, &ctx);
    if (err) {
        rc = cli_fail(err, &d);
        goto free_topo;
    }
    if ((rc = cli_step_coll_algo(&step_syntax, &a, ctx)))
        goto free_ctx;
    if (cli_args_has(&a, "sweep")) {
        rc = run_sweep(ctx, &a, t, &g, &m, &p);
        goto free_ctx;
    }
    const char *trace_path = cli_args_get(&a, "trace");
    cli_out out;
    bool traced = false;
    if (trace_path) {
        if ((rc = cli_out_open(&out, trace_path)))
            goto free_ctx;
        traced = true;
    }
    co.idle = cli_args_has(&a, "idle");
    const char *cspec = cli_args_get(&a, "checkpoint");
    if (cspec) {
        weft_diag pd;
        weft_diag_clear(&pd);
        if (weft_ckpt_parse(cspec, &co.spec, &pd)) {
            rc = cli_usage_error(&step_syntax, "%s", pd.msg);
            goto free_ctx;
        }
        co.ckpt = true;
    } else if (cli_args_get(&a, "failures-per-day") || cli_args_get(&a, "restart")) {
        rc = cli_usage_error(&step_syntax, "--failures-per-day and --restart need --checkpoint");
        goto free_ctx;
    }
    if ((rc = real_flag(&a, "failures-per-day", &co.F)) ||
        (rc = real_flag(&a, "restart", &co.restart)))
        goto free_ctx;
    weft_work_ctx_set_trace_idle(ctx, co.idle);
    weft_step_result r;
    cli_context_object("predicting the step");
    err = weft_work_step(ctx, &m, &p, false, traced ? out.f : NULL, &r, &d);
    if (traced) {
        int crc = cli_out_close(&out, err == WEFT_OK);
        if (!err && crc) {
            rc = crc;
            goto free_ctx;
        }
    }
    if (err) {
        rc = cli_fail(err, &d);
        goto free_ctx;
    }
    /* A configuration that ran for real may not fit by weft's memory
     * model: predict it all the same, and say so. */
    if (!r.fits)
        fprintf(stderr,
                "weft: warning: memory: %.1f GiB per GPU (weights %.1f, gradients %.1f, optimizer "
                "%.1f, activations %.1f GiB) does not fit the %s's %.1f GiB; predicted anyway "
                "(fits: false)\n",
                r.counts.mem_total / GIB, r.counts.mem_weights / GIB, r.counts.mem_grads / GIB,
                r.counts.mem_optim / GIB, r.counts.mem_act / GIB, g.name, g.hbm_bytes / GIB);
    if (co.idle || co.ckpt) {
        err = weft_work_idle(ctx, &p, &r, &co.ip, &d);
        if (!err && co.ckpt)
            err = weft_ckpt_plan(&co.spec, &g, &r, &co.ip, co.F, co.restart, &co.cr, &d);
        if (err) {
            rc = cli_fail(err, &d);
            goto free_ctx;
        }
        co.boxes = (uint32_t)(co.ip.n / 2);
        if (co.ckpt && co.spec.kind == WEFT_CKPT_GEMINI && co.spec.replicas > co.boxes) {
            rc = cli_usage_error(&step_syntax,
                                 "--checkpoint '%s': replicas=%u but the fabric "
                                 "has %u boxes",
                                 cspec, co.spec.replicas, co.boxes);
            goto free_ctx;
        }
        if (co.ckpt && co.spec.kind == WEFT_CKPT_GEMINI && co.spec.place == WEFT_CKPT_GROUP &&
            co.boxes % co.spec.replicas) {
            rc = cli_usage_error(&step_syntax,
                                 "--checkpoint '%s': group placement needs the "
                                 "boxes (%u) to be a multiple of replicas=%u",
                                 cspec, co.boxes, co.spec.replicas);
            goto free_ctx;
        }
        if (co.ckpt && co.spec.kind == WEFT_CKPT_GEMINI) {
            if ((err = weft_ckpt_simulate(&g, &co.ip, &co.cr, &co.cs, &d))) {
                rc = cli_fail(err, &d);
                goto free_ctx;
            }
            co.sim = true;
        }
    }
    weft_gc_report gcr;
    memset(&gcr, 0, sizeof gcr);
    if (p.grad_comp.kind != WEFT_COMP_NONE && r.gc_groups &&
        (err = weft_work_grad_plan(ctx, &m, &p, &gcr, &d))) {
        rc = cli_fail(err, &d);
        goto free_ctx;
    }
    if (cli_args_has(&a, "json")) {
        cli_json j;
        cli_json_init(&j, stdout);
        cli_json_begin_object(&j);
        cli_json_kv_uint(&j, "ranks", weft_topo_num_ranks(t));
        cli_json_kv_string(&j, "model", m.name);
        cli_json_kv_string(&j, "gpu", g.name);
        cli_json_kv_bool(&j, "tp_comm_overlap", p.tp_comm_overlap);
        json_result(&j, &p, &r, gcr.g ? &gcr : NULL);
        cli_step_choices_json(&j, ctx);
        cli_step_ckpt_json(&j, &co);
        cli_json_key(&j, "ignored_flags");
        cli_json_begin_array(&j);
        for (size_t i = 0; i < seen.n_ignored; i++)
            cli_json_string(&j, seen.ignored[i]);
        cli_json_end_array(&j);
        cli_json_key(&j, "unmodelled_flags");
        cli_json_begin_array(&j);
        for (size_t i = 0; i < seen.n_unmodelled; i++)
            cli_json_string(&j, seen.unmodelled[i]);
        cli_json_end_array(&j);
        cli_json_end_object(&j);
        rc = cli_json_done(&j);
    } else {
        print_result(t, &g, &m, &p, &r, gcr.g ? &gcr : NULL);
        cli_step_choices_print(ctx, NULL);
        cli_step_ckpt_print(&co);
        rc = CLI_EXIT_OK;
    }
    weft_gc_report_fini(&gcr);
free_ctx:
    weft_idle_profile_fini(&co.ip);
    weft_work_ctx_free(ctx);
free_topo:
    weft_topo_free(t);
free_args:
    cli_args_fini(&a);
    return rc;
}
