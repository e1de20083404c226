/* Megatron-LM's flags that do not change weft's prediction of a step
 * (cli/megatron_flags.h). Names, value types and choices as Megatron-LM's
 * megatron/training/arguments.py declares them (2024-2025 releases) and
 * Megatron-DeepSpeed's arguments. */
#include "cli/megatron_flags.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

/* metavar: NULL a flag without value, "N" an integer, "X" a number, "S"
 * text, "a|b|c" one of Megatron's choices. help: "" for a training-only
 * flag; otherwise why the step would change and weft does not model it. */
static const cli_opt flags[] = {
    /* Optimizer and schedule: the same work per step. */
    {"lr", 0, "X", ""},
    {"min-lr", 0, "X", ""},
    {"lr-decay-style", 0, "constant|linear|cosine|inverse-square-root|WSD", ""},
    {"lr-decay-iters", 0, "N", ""},
    {"lr-decay-samples", 0, "N", ""},
    {"lr-warmup-iters", 0, "N", ""},
    {"lr-warmup-samples", 0, "N", ""},
    {"lr-warmup-fraction", 0, "X", ""},
    {"lr-warmup-init", 0, "X", ""},
    {"weight-decay", 0, "X", ""},
    {"start-weight-decay", 0, "X", ""},
    {"end-weight-decay", 0, "X", ""},
    {"weight-decay-incr-style", 0, "constant|linear|cosine", ""},
    {"clip-grad", 0, "X", ""},
    {"adam-beta1", 0, "X", ""},
    {"adam-beta2", 0, "X", ""},
    {"adam-eps", 0, "X", ""},
    {"sgd-momentum", 0, "X", ""},
    {"init-method-std", 0, "X", ""},
    {"init-method-xavier-uniform", 0, NULL, ""},
    {"loss-scale", 0, "X", ""},
    {"initial-loss-scale", 0, "X", ""},
    {"min-loss-scale", 0, "X", ""},
    {"loss-scale-window", 0, "X", ""},
    {"hysteresis", 0, "N", ""},
    {"hidden-dropout", 0, "X", ""},
    {"attention-dropout", 0, "X", ""},
    {"accumulate-allreduce-grads-in-fp32", 0, NULL, ""},
    {"attention-softmax-in-fp32", 0, NULL, ""},
    {"fp8-margin", 0, "N", ""},
    {"fp8-interval", 0, "N", ""},
    {"fp8-amax-history-len", 0, "N", ""},
    {"fp8-amax-compute-algo", 0, "most_recent|max", ""},
    {"moe-router-load-balancing-type", 0, "aux_loss|seq_aux_loss|sinkhorn|none", ""},
    {"moe-aux-loss-coeff", 0, "X", ""},
    {"moe-z-loss-coeff", 0, "X", ""},
    {"moe-input-jitter-eps", 0, "X", ""},
    {"moe-router-pre-softmax", 0, NULL, ""},
    /* Length of the run, evaluation, data. */
    {"train-iters", 0, "N", ""},
    {"train-samples", 0, "N", ""},
    {"eval-iters", 0, "N", ""},
    {"eval-interval", 0, "N", ""},
    {"exit-interval", 0, "N", ""},
    {"exit-duration-in-mins", 0, "N", ""},
    {"exit-signal-handler", 0, NULL, ""},
    {"data-path", 0, "S", ""},
    {"split", 0, "S", ""},
    {"data-cache-path", 0, "S", ""},
    {"mock-data", 0, NULL, ""},
    {"num-workers", 0, "N", ""},
    {"dataloader-type", 0, "single|cyclic|external", ""},
    {"vocab-file", 0, "S", ""},
    {"merge-file", 0, "S", ""},
    {"tokenizer-type", 0, "S", ""},
    {"tokenizer-model", 0, "S", ""},
    {"max-position-embeddings", 0, "N", ""},
    {"eod-mask-loss", 0, NULL, ""},
    {"reset-position-ids", 0, NULL, ""},
    {"reset-attention-mask", 0, NULL, ""},
    /* Checkpoints and logging. */
    {"save", 0, "S", ""},
    {"load", 0, "S", ""},
    {"save-interval", 0, "N", ""},
    {"pretrained-checkpoint", 0, "S", ""},
    {"ckpt-format", 0, "torch|torch_dist|zarr", ""},
    {"use-dist-ckpt", 0, NULL, ""},
    {"async-save", 0, NULL, ""},
    {"no-load-optim", 0, NULL, ""},
    {"no-load-rng", 0, NULL, ""},
    {"no-save-optim", 0, NULL, ""},
    {"no-save-rng", 0, NULL, ""},
    {"finetune", 0, NULL, ""},
    {"use-checkpoint-args", 0, NULL, ""},
    {"log-interval", 0, "N", ""},
    {"log-throughput", 0, NULL, ""},
    {"log-params-norm", 0, NULL, ""},
    {"log-num-zeros-in-grad", 0, NULL, ""},
    {"log-timers-to-tensorboard", 0, NULL, ""},
    {"log-validation-ppl-to-tensorboard", 0, NULL, ""},
    {"log-memory-to-tensorboard", 0, NULL, ""},
    {"log-world-size-to-tensorboard", 0, NULL, ""},
    {"log-loss-scale-to-tensorboard", 0, NULL, ""},
    {"log-batch-size-to-tensorboard", 0, NULL, ""},
    {"log-learning-rate-to-tensorboard", 0, NULL, ""},
    {"timing-log-level", 0, "0|1|2", ""},
    {"tensorboard-dir", 0, "S", ""},
    {"tensorboard-log-interval", 0, "N", ""},
    {"wandb-project", 0, "S", ""},
    {"wandb-exp-name", 0, "S", ""},
    {"wandb-save-dir", 0, "S", ""},
    /* Set-up that leaves the step as modelled. */
    {"distributed-backend", 0, "nccl|gloo", ""},
    {"distributed-timeout-minutes", 0, "N", ""},
    {"use-mcore-models", 0, NULL, ""},
    {"use-cpu-initialization", 0, NULL, ""},
    {"group-query-attention", 0, NULL, ""},
    {"use-rotary-position-embeddings", 0, NULL, ""},
    {"rotary-base", 0, "N", ""},
    {"rotary-percent", 0, "X", ""},
    {"norm-epsilon", 0, "X", ""},
    {"apply-layernorm-1p", 0, NULL, ""},
    {"apply-query-key-layer-scaling", 0, NULL, ""},
    {"deterministic-mode", 0, NULL, ""},
    {"check-for-nan-in-loss-and-grad", 0, NULL, ""},
    {"no-check-for-nan-in-loss-and-grad", 0, NULL, ""},
    {"manual-gc", 0, NULL, ""},
    {"manual-gc-interval", 0, "N", ""},
    {"deepspeed", 0, NULL, ""},
    /* Flags that change the step, which weft does not model. */
    {"position-embedding-type", 0, "learned_absolute|rope|none",
     "weft takes the positions from the style (--swiglu: rotary, else learned)"},
    {"normalization", 0, "LayerNorm|RMSNorm",
     "weft takes the norm from the style (--swiglu: RMSNorm, else LayerNorm)"},
    {"disable-bias-linear", 0, NULL, "weft takes the biases from the style (--swiglu: none)"},
    {"qk-layernorm", 0, NULL, "its small norms are not counted"},
    {"make-vocab-size-divisible-by", 0, "N", "weft pads the vocabulary to 128 x TP"},
    {"optimizer", 0, "adam|sgd", "weft models Adam's state and step"},
    {"transformer-impl", 0, "local|transformer_engine",
     "weft times one kernel set, Transformer Engine's fusions included"},
    {"overlap-param-gather", 0, NULL,
     "the distributed optimizer's parameter all-gather is timed after the step"},
    {"recompute-method", 0, "uniform|block", "recomputation applies to every layer"},
    {"recompute-num-layers", 0, "N", "recomputation applies to every layer"},
    {"distribute-saved-activations", 0, NULL, "activations are not split over TP"},
    {"moe-grouped-gemm", 0, NULL, "experts run as separate GEMMs"},
    {"moe-token-dispatcher-type", 0, "allgather|alltoall|alltoall_seq|flex",
     "weft dispatches tokens by all-to-all"},
    {"moe-expert-capacity-factor", 0, "X", "experts take every routed token (no capacity)"},
    {"moe-pad-expert-input-to-capacity", 0, NULL, "experts take every routed token (no capacity)"},
    {"cp-comm-type", 0, "p2p|a2a|allgather|a2a+p2p",
     "CP exchanges keys and values by all-gather and reduce-scatter"},
    {"ddp-bucket-size", 0, "N", "weft uses Megatron's default bucket size"},
    {"deepspeed_config", 0, "S", "weft does not read DeepSpeed's JSON: give --zero-stage"},
    {"partition-activations", 0, NULL, "activations are not split over TP"},
    {"cpu-optimizer", 0, NULL, "the optimizer runs on the GPU"},
    {NULL, 0, NULL, NULL},
};

const cli_optgroup cli_megatron_other = {
    "Megatron-LM flags accepted so that a launch line can be pasted (docs/step.md lists which "
    "change nothing and which weft does not model)",
    flags, true};

/* Whether v is one of the '|'-separated choices. */
static bool one_of(const char *choices, const char *v)
{
    size_t n = strlen(v);
    for (const char *c = choices; c;) {
        const char *bar = strchr(c, '|');
        size_t len = bar ? (size_t)(bar - c) : strlen(c);
        if (len == n && !strncmp(c, v, n))
            return true;
        c = bar ? bar + 1 : NULL;
    }
    return false;
}

static int bad_value(const cli_syntax *syn, const cli_opt *o, const char *v)
{
    const char *what = !strcmp(o->metavar, "N")   ? "an integer"
                       : !strcmp(o->metavar, "X") ? "a number"
                                                  : NULL;
    if (what)
        return cli_usage_error(syn, "bad --%s '%s': Megatron-LM takes %s", o->name, v, what);
    return cli_usage_error(syn, "bad --%s '%s': Megatron-LM takes one of %s", o->name, v,
                           o->metavar);
}

int cli_megatron_check(const cli_syntax *syn, const cli_args *a, cli_megatron_seen *seen)
{
    memset(seen, 0, sizeof *seen);
    for (const cli_opt *o = flags; o->name; o++) {
        const char *v = cli_args_get(a, o->name);
        if (!v)
            continue;
        if (o->metavar && strcmp(o->metavar, "S")) {
            char *end;
            errno = 0;
            if (!strcmp(o->metavar, "N"))
                (void)strtoll(v, &end, 10);
            else if (!strcmp(o->metavar, "X"))
                (void)strtod(v, &end);
            else
                end = one_of(o->metavar, v) ? (char *)v + strlen(v) : (char *)v;
            if (!*v || *end || errno)
                return bad_value(syn, o, v);
        }
        if (o->help[0]) {
            if (seen->n_unmodelled < sizeof seen->unmodelled / sizeof *seen->unmodelled)
                seen->unmodelled[seen->n_unmodelled++] = o->name;
        } else if (seen->n_ignored < sizeof seen->ignored / sizeof *seen->ignored) {
            seen->ignored[seen->n_ignored++] = o->name;
        }
    }
    return CLI_EXIT_OK;
}

static const char *why(const char *name)
{
    for (const cli_opt *o = flags; o->name; o++)
        if (!strcmp(o->name, name))
            return o->help;
    return "";
}

void cli_megatron_report(const cli_megatron_seen *seen)
{
    if (seen->n_ignored) {
        fprintf(stderr, "weft: ignored (training only, no effect on the step):");
        for (size_t i = 0; i < seen->n_ignored; i++)
            fprintf(stderr, "%s --%s", i ? "," : "", seen->ignored[i]);
        fprintf(stderr, "\n");
    }
    for (size_t i = 0; i < seen->n_unmodelled; i++)
        fprintf(stderr, "weft: warning: --%s changes the step but is not modelled: %s\n",
                seen->unmodelled[i], why(seen->unmodelled[i]));
}
