# weft step --model dlrm | dlrm-mlperf: a hand-computed step's parts in
# JSON, usage errors, the preset, the sweep and the trace.
# Run by CTest as: bash step_dlrm.sh WEFT_BIN SOURCE_DIR SHARED_FIXTURES
WEFT=$1
SRC=$2
. "$SRC/tests/cli/lib/check.sh"

TMP=$(mktemp -d)
trap 'rm -rf "$TMP" "$CHECK_OUT_" "$CHECK_ERR_"' EXIT

SMALL="--fabric switch:2,bw=100 --gpu a100-80g --model dlrm --tables 10x4/pool=2,6x4/dtype=fp16
       --bottom-mlp 8-4 --top-mlp 4-1 --dense-features 3 --global-batch-size 4"
# 2 GPUs, 2 samples each. Table 0 (10 x 4 fp32, 2 lookups a sample) on GPU
# 0 sends B*D*E = 32 bytes to each GPU, table 1 (6 x 4 fp16) on GPU 1 16;
# GPU 0 reads N*B*P*D*E = 128 bytes of rows and writes 64 of pooled
# vectors (192), backward reads and writes the rows (320). Dense: 3*8+8 +
# 8*4+4 + (4 + 3 products)*4+4 + 4*1+1 = 105 parameters, 420 bytes.
run step $SMALL --bound --json
expect_rc 0
expect_out_has '"dense_params": 105,'
expect_out_has '"dense_allreduce_bytes": 420,'
expect_out_has '"a2a_bytes": 48,'
expect_out_has '"a2a_max_send": 32,'
expect_out_has '"lookups": 12,'
expect_out_has '"busiest_gpu": 0,'
expect_out_has '"lookup_fwd_bytes": 192,'
expect_out_has '"lookup_bwd_bytes": 320,'
expect_out_has '"table_bytes_max": 160,'
# The bound: GPU 0's 32 bytes at 100 GB/s, as weft bound says.
expect_out_has '"a2a_fwd_bound_s": 3.2e-10,'
printf '32 32\n16 16\n' > "$TMP/fwd.tm"
run bound switch:2,bw=100 --coll alltoall --traffic "$TMP/fwd.tm"
expect_rc 0
expect_out_has "time           3.2e-10 s (exact 1/3125000000 s)"

# Data-parallel: nothing moves; the tables' gradients, 160 + 48 bytes.
run step $SMALL --sharding dp --json
expect_rc 0
expect_out_has '"a2a_bytes": 0,'
expect_out_has '"a2a_fwd_s": 0,'
expect_out_has '"emb_allreduce_bytes": 208,'

run step $SMALL --trace "$TMP/t.json"
expect_rc 0
expect_out_has "dlrm on 2 x a100-80g (switch:2,bw=100): batch 2 per GPU, 2 tables (tw 2)"
check "trace has the all-to-all" grep -q '"name":"a2a fwd"' "$TMP/t.json"

run step $SMALL --sweep
expect_rc 0
expect_out_has "sharding plans by step time"
expect_out_has "  dp  "

# Herald (docs/step.md, "Caches and placement"): two 1-row tables, table 0
# on GPU 0, table 1 on GPU 1, 2 samples a GPU: every sample reads row 0 of
# both. Step 0 (warm-up): each GPU's first sample misses the other GPU's
# row and caches it, the second hits; both GPUs read both rows, so each
# copy is overwritten at the step's end. Step 1 with staleness 2: still
# fresh, 4 hits, nothing forward; backward, per GPU the one row gradient
# (16 bytes; fewer than the 2 bags' pooled gradients).
HER="--fabric switch:2,bw=100 --gpu a100-80g --model dlrm --tables 1x4,1x4 --bottom-mlp 8-4
     --top-mlp 4-1 --dense-features 3 --global-batch-size 4"
run step $HER --emb-cache 1,staleness=2 --json
expect_rc 0
# The cache's memory: 1 row of 4 x fp32 = 16 bytes plus 16 of index.
expect_out_has '"table_bytes_max": 16,'
expect_out_has '"cache_bytes": 32,'
expect_out_has '"a2a_bytes": 0,'
expect_out_has '"a2a_bytes_base": 64,'
expect_out_has '"a2a_bwd_bytes": 32,'
expect_out_has '"transfers_base": 4,'
expect_out_has '"transfers": 0,'
expect_out_has '"hits": 4,'
expect_out_has '"stale": 0,'
# Staleness 1: the overwritten copies are stale: each GPU's first sample
# fetches its row again (a synchronisation), the second hits.
run step $HER --emb-cache 1 --json
expect_rc 0
expect_out_has '"transfers": 2,'
expect_out_has '"hits": 2,'
expect_out_has '"stale": 2,'
expect_out_has '"admitted": 2,'
expect_out_has '"a2a_bytes": 32,'
run step $HER --emb-cache 1,staleness=2,policy=lfu,warm=1 --placement herald
expect_rc 0
expect_out_has "herald: cache of 1 row a GPU (lfu, staleness 2, 1 warm-up step), placement herald (no better than as drawn, 0 samples moved)"
expect_out_has "  forward vectors between GPUs 0, without 4: 4 avoided (100.0 %); 0.0 MB, without 0.0 MB"
expect_out_has "  remote lookups 4: 4 hits, 0 stale, 0 rows admitted"
# Row-wise, no cache: the placement alone moves samples to the GPUs that
# hold their rows and never sends more than the drawn assignment.
RW="--fabric a100:1 --gpu a100-80g --model dlrm --tables 8*10Kx16/pool=4/zipf=1.1 --sharding rw
    --bottom-mlp 32-16 --top-mlp 16-1 --global-batch-size 512"
run step $RW --placement herald --json
expect_rc 0
expect_out_has '"placed": true,'
check "placement sends less than the drawn samples" \
    awk -F'[:,]' '/"a2a_bytes":/ {w=$2} /"a2a_bytes_base":/ {b=$2} END {exit !(w < b)}' "$CHECK_OUT_"
# Herald's replay runs on WEFT_THREADS threads: 1 and 3 give the same report
# to the byte (a cache and the placement, 2 warm-up steps).
HT="$RW --emb-cache 64,warm=2 --placement herald --json"
# shellcheck disable=SC2086
ONE=$(WEFT_THREADS=1 "$WEFT" step $HT 2>&1)
# shellcheck disable=SC2086
THREE=$(WEFT_THREADS=3 "$WEFT" step $HT 2>&1)
LAST="WEFT_THREADS=1 and 3: weft step $HT"
check "one thread and three give the same Herald step" test "$ONE" = "$THREE"
check "the Herald step hits its cache" grep -q '"hits": [1-9]' <<<"$ONE"
# The sweep's plans are simulated at once (weft_dlrm_steps): 1 and 3
# threads give the same ranking to the byte.
SW="--fabric a100:2 --gpu a100-80g --model dlrm --tables 8*10Kx16/pool=4/zipf=1.1,4*2Kx16 --bottom-mlp 64-16 --top-mlp 64-1 --global-batch-size 1024 --sweep --json"
# shellcheck disable=SC2086
ONE=$(WEFT_THREADS=1 "$WEFT" step $SW 2>&1)
# shellcheck disable=SC2086
THREE=$(WEFT_THREADS=3 "$WEFT" step $SW 2>&1)
LAST="WEFT_THREADS=1 and 3: weft step $SW"
check "one thread and three give the same sweep" test "$ONE" = "$THREE"
check "the sweep ranks eight plans" test "$(grep -c '"plan":' <<<"$ONE")" = 8
# Overlap: the forward all-to-all beside the bottom MLP.
run step $SMALL --overlap --json
expect_rc 0
expect_out_has '"overlap": true,'
run step $SMALL --overlap --trace "$TMP/o.json"
expect_rc 0
expect_out_has "hidden behind the bottom MLP"
check "overlap trace has the bottom MLP" grep -q '"name":"bottom mlp fwd"' "$TMP/o.json"
# Errors.
run step $HER --emb-cache 1,policy=x
expect_rc 2
expect_err_has "weft: bad --emb-cache '1,policy=x': 'policy=x': expected policy=lru|lfu, staleness=S (0 to 1000000) or warm=K (0 to 1000)"
run step $HER --emb-cache 1.5
expect_rc 2
expect_err_has "weft: bad --emb-cache '1.5': '1.5' is not a fraction in (0, 1]"
run step $HER --emb-cache -3
expect_rc 2
expect_err_has "weft: bad --emb-cache '-3': '-3' is not a number of rows (0 to 2^32) nor a fraction (0.01)"
run step $HER --placement near
expect_rc 2
expect_err_has "weft: bad --placement 'near': random or herald"
run step $HER --sharding rw --rw-dense --placement herald
expect_rc 2
expect_err_has "weft: --emb-cache and --placement herald need the sparse row-wise exchange: drop --rw-dense"
run step --fabric switch:2 --gpu a100-80g --emb-cache 10
expect_rc 2
expect_err_has "weft: --emb-cache needs --model dlrm or dlrm-mlperf"

# Errors.
run step --fabric switch:2 --gpu a100-80g --tables 10x4
expect_rc 2
expect_err_has "weft: --tables needs --model dlrm or dlrm-mlperf"
run step --fabric switch:2 --gpu a100-80g --model dlrm --tables 10x4 --bottom-mlp 8-4 --top-mlp 4-1
expect_rc 2
expect_err_has "weft: --model dlrm needs --global-batch-size N (samples per step)"
run step --fabric switch:2 --gpu a100-80g --model dlrm --tables 10x4 --bottom-mlp 8-5 --top-mlp 4-1 --global-batch-size 4
expect_rc 1
expect_err "weft: dlrm: table 0: dim 4: must be the bottom MLP's output width 5 (the interaction combines them)"
run step --fabric switch:2 --gpu a100-80g --model dlrm-mlperf --tensor-model-parallel-size 2
expect_rc 2
expect_err_has "weft: --tensor-model-parallel-size does not apply to --model dlrm-mlperf"
run step --fabric switch:2 --gpu a100-80g --model dlrm-mlperf --global-batch-size 3
expect_rc 2
expect_err_has "weft: --global-batch-size 3: must be a multiple of the fabric's 2 GPUs"
run step --fabric switch:2 --gpu a100-80g --model dlrm-mlperf --bottom-mlp 8--4
expect_rc 2
expect_err_has "weft: bad --bottom-mlp '8--4': 1 to 16 widths from 1 to 1000000 joined by '-' (512-256-128)"
run step --fabric switch:2 --gpu a100-80g --model dlrm-mlperf --interaction dcn:0:4
expect_rc 2
expect_err_has "weft: bad --interaction 'dcn:0:4': dot, or dcn:L:R (1 to 64 layers of rank 1 to 65536)"
run step --fabric switch:2 --gpu a100-80g --model dlrm-mlperf --sharding xx
expect_rc 2
expect_err_has "weft: bad --sharding 'xx': tw, rw, dp or cw:K"
run step --fabric switch:2 --gpu a100-80g --model dlrm --bottom-mlp 8-4 --top-mlp 4-1 --global-batch-size 8
expect_rc 2
expect_err_has "weft: --model dlrm needs --tables SPEC"
run step --fabric switch:2 --model dlrm-mlperf
expect_rc 2
expect_err_has "weft: --model dlrm-mlperf needs --gpu NAME"

run step --chakra x --fabric switch:4 --tables 1x1
expect_rc 2
expect_err_has "weft: --chakra runs traces: --tables does not apply"

# The planner's per-table plan beats every uniform plan on the preset.
run step --fabric a100:1 --gpu a100-80g --model dlrm-mlperf --sweep
expect_rc 0
check "the planner's plan ranks first" awk 'NR == 3 {exit $1 != "planner"}' "$CHECK_OUT_"
expect_out_has "planner: rw 2, cw 24 (coordinate descent over 320 plans)"

# The preset: 26 tables, 65,536 samples a step (8,192 a GPU on 8).
run step --fabric a100:1 --gpu a100-80g --model dlrm-mlperf --json
expect_rc 0
expect_out_has '"batch_per_gpu": 8192,'
expect_out_has '"tables": 26,'
expect_out_has '"lookups": 14024704,'
expect_out_has '"dense_params": 16044545,'

finish
