# weft step: the report, --json keys, --trace, --sweep, bad input and exit codes.
# Run by CTest as: bash step.sh WEFT_BIN SOURCE_DIR SHARED_FIXTURES
WEFT=$1
SRC=$2
. "$SRC/tests/cli/lib/check.sh"

TMP=$(mktemp -d)
trap 'rm -rf "$TMP" "$CHECK_OUT_" "$CHECK_ERR_"' EXIT

GPT="--model gpt-1.7b --global-batch-size 64 --recompute-granularity full"
run step --fabric a100:2 --gpu a100-80g $GPT
expect_rc 0
expect_out_has "model gpt-1.7b: 1.65B parameters (1.65B active), 24 layers, hidden 2304, seq 2048"
expect_out_has "16 x a100-80g, TP 1 PP 1 CP 1 EP 1 DP 16 mbs 1 full bf16, global batch 64, 4 micro-batches"
expect_out_has "dp exposed"
expect_out_has "memory per GPU 28.9 GiB of 80.0: weights 3.1, gradients 6.2, optimizer 18.5, activations 1.2"
# --grad-compression: the DP all-reduce of int8 gradients, its compute and
# bytes saved (docs/step.md, "Gradient compression"); bad values.
run step --fabric a100:2,nicbw=3.125Gbps --gpu a100-80g $GPT --grad-compression int8
expect_rc 0
expect_out_has "step 1.8272 s"
expect_out_has "gradient compression int8, fuse=bucket: 1 of 1 groups compressed (0 on the CPU), 0.0217 s of compression compute (0.0073 on the compute stream), 8.66 GiB a GPU not sent"
expect_out_has "step with no compression 4.7795 s, every bucket compressed on the GPU 1.8272 s, this plan 1.8272 s"
# auto: the search per bucket (top-k at 1 %: one bucket on the CPU).
run step --fabric a100:2,nicbw=3.125Gbps --gpu a100-80g $GPT --overlap-grad-reduce \
    --grad-compression auto:topk:0.01,fuse=bucket
expect_rc 0
expect_out_has "gradient compression auto:topk:0.01, fuse=bucket: 42 of 42 groups compressed (1 on the CPU)"
expect_out_has "step with no compression 4.6382 s, every bucket compressed on the GPU 1.3171 s, this plan 1.3169 s"
expect_out_has "  23-23         1     40.0  cpu sparse-ag     0.2693       0.23   0.3630  0.3886"
run step --fabric a100:2,nicbw=3.125Gbps --gpu a100-80g $GPT --overlap-grad-reduce \
    --grad-compression auto:topk:0.01,fuse=bucket --json
expect_rc 0
for key in '"mode": "auto"' '"fuse": "bucket"' '"on_cpu": 1' '"units": "buckets"' \
    '"place": "cpu"' '"collective": "sparse-ag"' '"exact": true'; do
    expect_out_has "$key"
done
run step --fabric a100:2 --gpu a100-80g $GPT --grad-compression auto,fuse=lots
expect_rc 2
expect_err_has "weft: bad --grad-compression: --grad-compression 'auto,fuse=lots': unknown option 'fuse=lots' (fuse=bucket, fuse=tensor or fuse=dp)"
# --coll-algo: nccl or best (tests/cli/ranking.sh checks what best chooses).
run step --fabric a100:2 --gpu a100-80g $GPT --coll-algo fastest
expect_rc 2
expect_err_has "weft: unknown --coll-algo 'fastest' (expected nccl or best)"
# A DLRM step ranks its embedding all-to-alls' plans (alltoallv of the
# matrix; tests/cli/ranking.sh checks the choice against weft sim).
run step --fabric a100:1 --gpu a100-80g --model dlrm --tables "16*1000x16" --sharding rw \
    --bottom-mlp 8-16 --top-mlp 8-1 --global-batch-size 64 --coll-algo best
expect_rc 0
expect_out_has "collectives chosen (--coll-algo best"
expect_out_has "  alltoallv "
run step --fabric a100:1 --gpu a100-80g --model dlrm --tables "16*1000x16" --sharding rw \
    --bottom-mlp 8-16 --top-mlp 8-1 --global-batch-size 64 --a2a-algo ring
expect_rc 2
expect_err_has "weft: --a2a-algo: 'ring' builds no all-to-all of a traffic matrix (the schedules that do: bruck, direct, pairwise, hier, flash, flash:K, optimal)"
run step --fabric a100:1 --gpu a100-80g --model dlrm --tables "16*1000x16" --sharding rw \
    --bottom-mlp 8-16 --top-mlp 8-1 --global-batch-size 64 --a2a-algo pairwise
expect_rc 0
expect_out_has "collectives run (the all-to-alls of matrices: --a2a-algo pairwise):"
run step --fabric a100:2 --gpu a100-80g $GPT --a2a-algo hier
expect_rc 2
expect_err_has "weft: --a2a-algo needs --model dlrm or dlrm-mlperf"
run step --fabric a100:2 --gpu a100-80g $GPT --coll-algo nccl --json
expect_rc 0
expect_out_has '"chosen": []'
# On a torus a group's ranks reach each other through the other ranks: a
# DP group of 8 on torus:4x4 (ranks 0, 2, ...) keeps them as switches.
run step --fabric torus:4x4 --gpu h100-sxm --model gpt-1.7b --tensor-model-parallel-size 2 \
    --global-batch-size 16 --coll-algo best
expect_rc 0
expect_out_has "  allreduce           4      8       2  hd "
run step --fabric a100:2 --gpu a100-80g $GPT --grad-compression bogus
expect_rc 2
expect_err_has "weft: bad --grad-compression: unknown compressor 'bogus' (none, fp8[:B], int8[:B], qsgd:S, sign, topk:D, dgc:D, randk:D, hash:D, powersgd:R)"
run step --fabric a100:2 --gpu a100-80g $GPT --grad-compression powersgd:4
expect_rc 1
expect_err_has "weft: --grad-compression: the step does not model powersgd (a quantizer or a sparsifier whose GPU kernels are modelled: int8, fp8, qsgd:S, sign, topk:D, dgc:D, randk:D)"
run step --fabric a100:2 --gpu a100-80g $GPT --grad-compression auto:hash:0.01
expect_rc 1
expect_err_has "weft: --grad-compression: the step does not model hash (a quantizer or a sparsifier whose GPU kernels are modelled: int8, fp8, qsgd:S, sign, topk:D, dgc:D, randk:D)"

run step --fabric a100:2 --gpu a100-80g $GPT --json
expect_rc 0
for key in '"step_s": ' '"mfu": ' '"memory_gib": ' '"breakdown": {' '"dp_exposed_s": ' \
    '"ranks": 16' '"params": 1652230656' '"microbatches": 4'; do
    expect_out_has "$key"
done

# The step as a trace: one process per stage, forward and backward slices.
run step --fabric a100:2 --gpu a100-80g --model gpt-1.7b --pipeline-model-parallel-size 4 \
    --global-batch-size 16 --trace "$TMP/step.json"
expect_rc 0
check "trace written" test -s "$TMP/step.json"
check "trace names stage 3" grep -q '"args":{"name":"stage 3"}' "$TMP/step.json"
check "trace has F 0 on stage 0" grep -q '{"name":"F 0","ph":"X","pid":0,"tid":1,"ts":0.000,' "$TMP/step.json"
check "trace has the last backward" grep -q '"name":"B 3","ph":"X","pid":0' "$TMP/step.json"

# A track per busy link group: with TP 2, PP 4, DP 2 on two boxes of 8,
# stages 0-1 are box 0 and 2-3 box 1, so TP, DP and PP load each box's
# NVLink and only the PP sends between stages 1 and 2 its NICs; every
# track nests.
run step --fabric a100:2 --gpu a100-80g --model gpt-1.7b --pipeline-model-parallel-size 4 \
    --tensor-model-parallel-size 2 --global-batch-size 16 --trace "$TMP/links.json"
expect_rc 0
for g in "NVLink of box b0" "NVLink of box b1" "NICs of box b0" "NICs of box b1"; do
    check "trace has $g" grep -q "\"args\":{\"name\":\"$g\"}" "$TMP/links.json"
done
check "links process" grep -q '{"name":"process_name","ph":"M","pid":4,"tid":0,"args":{"name":"links"}}' "$TMP/links.json"
check "NICs carry only pp" test "$(grep -o '"name":"[a-z+]*","ph":"X","pid":4,"tid":[24],' "$TMP/links.json" | grep -vc '"name":"pp"')" = 0
check "NVLink of b0 carries tp+pp" grep -q '"name":"tp+pp","ph":"X","pid":4,"tid":1,' "$TMP/links.json"
# A Mixtral-style step whose forwards and backwards abut at times that
# rounding the start and the duration apart made overlap in the file; its
# links carry the EP all-to-all.
run step --fabric h100:16 --gpu h100-sxm --model mixtral-8x7b --tensor-model-parallel-size 2 \
    --expert-model-parallel-size 8 --sequence-parallel --global-batch-size 512 \
    --recompute-granularity selective --use-distributed-optimizer --overlap-grad-reduce \
    --trace "$TMP/moe.json"
expect_rc 0
check "moe links carry ep" grep -q '"name":"tp+ep","ph":"X","pid":1,' "$TMP/moe.json"
if command -v python3 >/dev/null 2>&1; then
    for tr in step links moe; do
        LAST="trace_check --nest-only $tr.json"
        got=$(python3 "$SRC/tests/cli/lib/trace_check.py" --nest-only "$TMP/$tr.json" 2>&1)
        case "$got" in *"
ok") pass_ ;; *) fail_ "$got" ;; esac
    done
fi

# A configuration that does not fit is predicted all the same, with a
# warning and fits: false (a run that really happened must not be refused
# by weft's memory model); a failed step writes no trace.
run step --fabric a100:2 --gpu a100-80g --model gpt3-175b --json
expect_rc 0
expect_err "weft: warning: memory: 3184.1 GiB per GPU (weights 325.2, gradients 650.5, optimizer 1951.5, activations 256.9 GiB) does not fit the a100-80g's 80.0 GiB; predicted anyway (fits: false)"
expect_out_has '"fits": false'
run step --fabric a100:2 --gpu a100-80g --model gpt3-175b --pipeline-model-parallel-size 5 --trace "$TMP/none.json"
expect_rc 1
expect_err "weft: --tensor-model-parallel-size (1) x --pipeline-model-parallel-size (5) x --context-parallel-size (1) = 5 does not divide the fabric's 16 ranks"
check "no trace of a failed step" test ! -e "$TMP/none.json"

# A Megatron-LM launch line pastes: training-only flags are named and
# ignored, flags weft does not model are warned about, and a value
# Megatron itself rejects is still an error.
MEG="--fabric a100:2 --gpu a100-80g --model gpt-1.7b --global-batch-size 64 --recompute-granularity full"
run step $MEG --lr 1.5e-4 --min-lr 1e-5 --lr-decay-style cosine --train-iters 500000 --max-position-embeddings 2048 --data-path /data/my_text_document --split 949,50,1 --tokenizer-type GPT2BPETokenizer --save-interval 1000 --log-interval 10 --use-mcore-models --overlap-param-gather --json
expect_rc 0
expect_err_has "weft: ignored (training only, no effect on the step): --lr, --min-lr, --lr-decay-style, --train-iters, --data-path, --split, --tokenizer-type, --max-position-embeddings, --save-interval, --log-interval, --use-mcore-models"
expect_err_has "weft: warning: --overlap-param-gather changes the step but is not modelled: the distributed optimizer's parameter all-gather is timed after the step"
expect_out_has '"overlap-param-gather"'
expect_out_has '"tp_comm_overlap": false'

# --tp-comm-overlap (Transformer Engine userbuffers, docs/step.md "TP
# overlap"): NeMo 24.07's Llama 3 70B run on 64 H100s; the same compute,
# TP exposed from 2.4478 s to 0.6572 s (SM contention included), FP8
# all-gathers: 480 GiB sent without, 420 GiB with.
L70="--fabric h100:8 --gpu h100-sxm --model llama3-70b --seq-length 8192 --tensor-model-parallel-size 4 --pipeline-model-parallel-size 4 --context-parallel-size 2 --num-virtual-stages-per-pipeline-rank 5 --global-batch-size 128 --sequence-parallel --use-flash-attn --fp8-format hybrid --use-distributed-optimizer --overlap-grad-reduce"
run step $L70
expect_rc 0
expect_out_has "step 11.3852 s"
expect_out_has "  tp exposed       2.4478  21.5%       2.4478    480.00"
run step $L70 --tp-comm-overlap
expect_rc 0
expect_out_has "64 x h100-sxm, TP 4 PP 4x5 CP 2 EP 1 DP 2 mbs 1 none sp tp-overlap flash fp8, global batch 128, 64 micro-batches"
expect_out_has "step 9.5938 s"
expect_out_has "  compute          8.3978  87.5%            -         -"
expect_out_has "  tp exposed       0.6572   6.8%       2.2052    420.00"
run step $L70 --tp-comm-overlap --json
expect_rc 0
expect_out_has '"tp_comm_overlap": true'
expect_out_has '"tp_exposed_s": 0.65715'
run step --fabric h100:1 --gpu h100-sxm --model llama3-8b --tensor-model-parallel-size 2 --tp-comm-overlap
expect_rc 1
expect_err "weft: --tp-comm-overlap needs --sequence-parallel and --tensor-model-parallel-size > 1 (TP 2, no --sequence-parallel)"
run step $MEG --lr fast
expect_rc 2
expect_err_has "weft: bad --lr 'fast': Megatron-LM takes a number"
run step $MEG --lr-decay-style cubic
expect_rc 2
expect_err_has "weft: bad --lr-decay-style 'cubic': Megatron-LM takes one of constant|linear|cosine|inverse-square-root|WSD"
run step $MEG --train-iters 1e5
expect_rc 2
expect_err_has "weft: bad --train-iters '1e5': Megatron-LM takes an integer"

# Llama 3.1 405B's published layout: 16 stages of 7, 8 x 14, 7 layers.
run step --fabric h100:16 --gpu h100-sxm --model llama3.1-405b --tensor-model-parallel-size 8 --pipeline-model-parallel-size 16 --decoder-first-pipeline-num-layers 7 --decoder-last-pipeline-num-layers 7 --sequence-parallel --use-flash-attn --global-batch-size 16 --use-distributed-optimizer
expect_rc 0
expect_out_has "TP 8 PP 16 first 7 last 7 CP 1 EP 1 DP 1 mbs 1 none sp flash"
run step --fabric h100:16 --gpu h100-sxm --model llama3.1-405b --tensor-model-parallel-size 8 --pipeline-model-parallel-size 16
expect_rc 1
expect_err "weft: --num-layers (126) is not divisible by --pipeline-model-parallel-size (16)"

# DeepSpeed ZeRO: its stages and their checks.
run step --fabric a100:2 --gpu a100-80g --model gpt-1.7b --zero-stage 3 --global-batch-size 32 --json
expect_rc 0
expect_out_has '"fits": true'
run step --fabric a100:2 --gpu a100-80g --model gpt-1.7b --zero-stage 4
expect_rc 2
expect_err_has "weft: bad --zero-stage '4': a whole number from 0 to 3"
run step --fabric a100:2 --gpu a100-80g --model gpt-1.7b --zero-stage 2 --pipeline-model-parallel-size 2
expect_rc 1
expect_err "weft: --zero-stage 2 is incompatible with pipeline parallelism (--pipeline-model-parallel-size 2), as in DeepSpeed: use stage 1"

# Counts beyond 64 bits are refused, not reported as fitting.
run step --fabric a100:2 --gpu a100-80g --num-layers 100000000 --hidden-size 100000000 --num-attention-heads 100000
expect_rc 1
expect_err_has "weft: the model is too large to count in 64 bits"

# Skewed expert load: --moe-skew uniform is the default, byte for byte;
# a zipf routing (seeded) is slower, and the same seed gives the same step.
MOE="--fabric h100:2 --gpu h100-sxm --model mixtral-8x7b --num-layers 4 --expert-model-parallel-size 8 --global-batch-size 16 --recompute-granularity full --use-distributed-optimizer"
run step $MOE
expect_rc 0
cp "$CHECK_OUT_" "$TMP/uniform.txt"
run step $MOE --moe-skew uniform
expect_rc 0
check "--moe-skew uniform is the default" cmp -s "$CHECK_OUT_" "$TMP/uniform.txt"
run step $MOE --moe-skew zipf:1.2 --seed 5 --json
expect_rc 0
cp "$CHECK_OUT_" "$TMP/zipf1.json"
run step $MOE --moe-skew zipf:1.2 --seed 5 --json
expect_rc 0
check "same seed, same step" cmp -s "$CHECK_OUT_" "$TMP/zipf1.json"
expect_out_has '"ep_busiest_tokens": '
u=$(sed -n 's/^step \([0-9.]*\) s.*/\1/p' "$TMP/uniform.txt")
z=$(sed -n 's/.*"step_s": \([0-9.e+-]*\),.*/\1/p' "$TMP/zipf1.json" | head -1)
check "zipf:1.2 is slower than uniform ($z > $u)" awk -v u="$u" -v z="$z" 'BEGIN { exit !(z > u) }'
run step $MOE --moe-skew zipf:9
expect_rc 2
expect_err_has "weft: bad --moe-skew 'zipf:9': expected uniform or zipf:S with S from 0 to 8 (at most 3 decimals, e.g. zipf:1.2)"
run step $MOE --moe-skew zipf:1 --seed -1
expect_rc 2
expect_err_has "weft: bad --seed '-1': a whole number from 0 to 18446744073709551615"

# DeepSeek-V3: MLA and 3 dense layers; the report's 671B / 37B.
run step --fabric h100:32 --gpu h100-sxm --model deepseek-v3 --tensor-model-parallel-size 8 \
    --expert-model-parallel-size 32 --sequence-parallel --recompute-granularity full \
    --use-distributed-optimizer --global-batch-size 256
expect_rc 0
expect_out_has "model deepseek-v3: 671.03B parameters (37.55B active), 61 layers, hidden 7168, seq 4096"
expect_out_has "emb exposed"
expect_out_has "loss exposed"
run step --fabric h100:32 --gpu h100-sxm --model deepseek-v3 --moe-layer-freq '([0]*3+[1]*50)'
expect_rc 1
expect_err "weft: --moe-layer-freq '([0]*3+[1]*50)' gives 53 layers, --num-layers is 61"
run step --fabric h100:32 --gpu h100-sxm --model deepseek-v3 --moe-layer-freq 'every other'
expect_rc 2
expect_err_has "weft: bad --moe-layer-freq 'every other': a whole number N (every N-th layer) or ([0]*K+[1]*M) (K dense layers, then M MoE)"

# Megatron's argument checks.
run step --fabric a100:2 --gpu a100-80g --model gpt-1.7b --tensor-model-parallel-size 5
expect_rc 1
expect_err "weft: --tensor-model-parallel-size (5) x --pipeline-model-parallel-size (1) x --context-parallel-size (1) = 5 does not divide the fabric's 16 ranks"
run step --fabric a100:2 --gpu a100-80g --model gpt-1.7b --pipeline-model-parallel-size 16
expect_rc 1
expect_err "weft: --num-layers (24) is not divisible by --pipeline-model-parallel-size (16)"
run step --fabric a100:2 --gpu a100-80g --model gpt-1.7b --global-batch-size 100
expect_rc 1
expect_err "weft: --global-batch-size (100) is not divisible by --micro-batch-size (1) x data-parallel size (16)"
run step --fabric a100:2 --gpu a100-80g --model gpt-1.7b --tensor-model-parallel-size 16
expect_rc 1
expect_err "weft: --num-attention-heads (24) is not divisible by --tensor-model-parallel-size (16)"
run step --fabric a100:2 --gpu a100-80g --model llama3-8b --fp8-format hybrid
expect_rc 1
expect_err "weft: --fp8-format: the a100-80g has no fp8 tensor cores"

# Usage errors.
run step --fabric a100:2 --gpu v100 --model gpt-1.7b
expect_rc 2
expect_err_has "weft: unknown --gpu 'v100' (a100-80g, a100-40g, h100-sxm, h200, b200, mi250x, mi300x; --gpu-file for others)"
run step --gpu a100-80g --model gpt-1.7b
expect_rc 2
expect_err_has "weft: missing --fabric SPEC"
run step --fabric a100:2 --gpu a100-80g --model gpt-1.7b --micro-batch-size 0
expect_rc 2
expect_err_has "weft: bad --micro-batch-size '0': a whole number from 1 to 100000000"
run step --fabric a100:2 --gpu a100-80g --model gpt-1.7b --recompute-granularity some
expect_rc 2
expect_err_has "weft: bad --recompute-granularity 'some': full or selective"
run step --fabric a100:2 --gpu a100-80g --model gpt-1.7b --order tp-dp-pp
expect_rc 2
expect_err_has "weft: bad --order 'tp-dp-pp'"
run step --fabric a100:2 --gpu a100-80g --model gpt-9b
expect_rc 2
expect_err_has "weft: unknown --model 'gpt-9b' (weft step --list-models lists them)"

# A GPU file, and its errors with file:line:col.
printf 'name = myx\nbf16 = 400\nhbm_bw = 3000\nhbm = 96\n' >"$TMP/myx.gpu"
run step --fabric a100:2 --gpu-file "$TMP/myx.gpu" $GPT
expect_rc 0
expect_out_has "16 x myx, TP 1"
printf 'name = myx\nbf16 = lots\n' >"$TMP/bad.gpu"
run step --fabric a100:2 --gpu-file "$TMP/bad.gpu" $GPT
expect_rc 1
expect_err "weft: $TMP/bad.gpu:2:8: bf16: 'lots' is not a positive number"

# The sweep ranks what fits.
run step --fabric a100:2 --gpu a100-80g --model gpt-7.5b --global-batch-size 64 --sweep --top 3
expect_rc 0
expect_out_has "valid configurations of gpt-7.5b on 16 x a100-80g (global batch 64)"
expect_out_has "  1     TP "
run step --fabric a100:2 --gpu a100-80g --model gpt-7.5b --global-batch-size 64 --sweep --top 2 --json
expect_rc 0
expect_out_has '"ranked": ['
expect_out_has '"step_s": '

# Idle time (--idle): busy + idle = the step on every link group, in the
# JSON and on the trace's link tracks ("idle" slices).
run step --fabric a100:2 --gpu a100-80g --model gpt-1.7b --pipeline-model-parallel-size 4 \
    --tensor-model-parallel-size 2 --global-batch-size 16 --idle --json --trace "$TMP/idle.json"
expect_rc 0
expect_out_has '"group": "b0.nvlink",'
expect_out_has '"group": "b1.nic",'
check "idle sums to the step" python3 -c '
import json, sys
j = json.load(open(sys.argv[1])); t = json.load(open(sys.argv[2]))["traceEvents"]
step = round(j["step_s"] * 1e9)
assert len(j["idle"]) == 4
for g in j["idle"]:
    assert round(g["busy_s"] * 1e9) + round(g["idle_s"] * 1e9) == step, g["group"]
    assert abs(sum(b - a for a, b in g["intervals"]) - g["idle_s"]) < 1e-8, g["group"]
idle = [e for e in t if e["name"] == "idle"]
assert len(idle) == sum(len(g["intervals"]) for g in j["idle"]), len(idle)
' "$CHECK_OUT_" "$TMP/idle.json"

# Checkpoints: GPT-1.7B's optimizer state (12 bytes a parameter, DP 2
# unsharded) to one peer box in the NICs' idle time, and to remote storage.
CK="--fabric a100:2 --gpu a100-80g --model gpt-1.7b --pipeline-model-parallel-size 4 --tensor-model-parallel-size 2 --global-batch-size 16"
run step $CK --checkpoint gemini --failures-per-day 2 --restart 300
expect_rc 0
expect_out_has "checkpoint: gemini (2 replicas, group placement)"
expect_out_has "  state      3.06 GB per GPU, 24.5 GB per box; a box sends 24.5 GB at 200.0 GB/s"
expect_out_has "  every      1 iteration at no added step time"
expect_out_has "  P(loss | 2 boxes fail) group 1, ring 1"
# The engine's replay (checkpoint as class-1 flows beside the step's NIC
# traffic) agrees and delays no training flow.
expect_out_has "  engine     every 1 iteration, 0.0000 s added to checkpoint every iteration, training delayed 0 s (class-1 flows beside 2 steps of NIC traffic)"
# DP 16 across the two boxes: the idle time needs two steps; the engine's
# figures are the analytic ones (src/work/ckpt_sim.c says why).
run step --fabric a100:2 --gpu a100-80g --model gpt-1.7b --global-batch-size 64 --checkpoint gemini --json
expect_rc 0
check "engine replay agrees with the analytic plan" python3 -c '
import json, sys
c = json.load(open(sys.argv[1]))["checkpoint"]
e = c["engine"]
assert c["iterations_per_checkpoint"] == 2 and e["iterations_per_checkpoint"] == 2, (c, e)
assert abs(e["added_s_every_iteration"] - c["added_s_every_iteration"]) < 1e-9, (c, e)
assert abs(c["added_s_every_iteration"] - 0.16615189088) < 1e-9 and e["training_delay_s"] == 0, (c, e)
assert e["steps_replayed"] == 3 and e["nic_groups"] == 1, e
' "$CHECK_OUT_"
run step $CK --checkpoint remote:bw=10GB/s --failures-per-day 2 --restart 300 --json
expect_rc 0
expect_out_has '"bytes_gpu": 3059057664,'
expect_out_has '"iterations_per_checkpoint": 1599,'
expect_out_has '"added_s_every_iteration": 2.4472461312,'
run step $CK --checkpoint nvme
expect_rc 2
expect_err_has "weft: --checkpoint 'nvme': unknown kind 'nvme' (gemini or remote)"
run step $CK --checkpoint gemini:replicas=3
expect_rc 2
expect_err_has "weft: --checkpoint 'gemini:replicas=3': replicas=3 but the fabric has 2 boxes"
run step $CK --restart 60
expect_rc 2
expect_err_has "weft: --failures-per-day and --restart need --checkpoint"
run step $CK --checkpoint gemini --failures-per-day lots
expect_rc 2
expect_err_has "weft: bad --failures-per-day 'lots': a number >= 0"
run step --fabric a100:2 --gpu mi300x --model gpt-1.7b --global-batch-size 16 --checkpoint gemini
expect_rc 1
expect_err_has "no host figures (PCIe, host memory) for GPU 'mi300x'"

finish
