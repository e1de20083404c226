# weft traffic embedding: hand-computed matrices for every sharding, the
# trace reader's errors, usage errors, the trace writer's round trip, and
# the bound and the simulator on the matrices it writes.
# Run by CTest as: bash embedding.sh WEFT_BIN SOURCE_DIR SHARED_FIXTURES
WEFT=$1
SRC=$2
. "$SRC/tests/cli/lib/check.sh"

TMP=$(mktemp -d)
trap 'rm -rf "$TMP" "$CHECK_OUT_" "$CHECK_ERR_"' EXIT

# Table-wise: table 0 (dim 4, fp32) on GPU 0, table 1 (dim 2, fp16) on
# GPU 1, 3 samples a GPU: GPU 0 sends 3*4*4 = 48 to each GPU, GPU 1 3*2*2.
run traffic embedding --gpus 2 --batch 3 --tables "100x4/pool=2,7x2/dtype=fp16"
expect_rc 0
expect_out "# embedding forward (pooled embeddings to the samples' GPUs): 2 GPUs, 3 samples per GPU, 2 tables (tw 2)
# 18 lookups (seed 0); data-parallel gradient all-reduce 0 bytes (weft traffic embedding)
48 48
12 12"

run traffic embedding --gpus 2 --batch 3 --tables "100x4/pool=2,7x2/dtype=fp16" --backward
expect_rc 0
expect_out_has "# embedding backward (pooled gradients to the shards)"
expect_out_has "48 12
48 12"

# Column-wise on 3 GPUs, 2 samples a GPU: table 0 (dim 5, fp32, 2 shards
# of 3 and 2 columns: slots 0, 1), table 1 (table-wise, dim 1, 8 bytes:
# slot 2), table 2 (dim 4, fp16, shards of 2, 1, 1 columns: slots 3, 4, 5).
run traffic embedding --gpus 3 --batch 2 --tables "10x5/shard=cw:2,10x1/dtype=8,10x4/dtype=bf16/shard=cw:3"
expect_rc 0
expect_out_has "3 tables (tw 1, cw 2)"
expect_out_has "32 32 32
20 20 20
20 20 20"

# Row-wise from a trace: 2 GPUs, 2 samples each; table 0 has 5 rows
# (blocks of 3), dim 2, fp32; table 1 4 rows (blocks of 2), dim 1, fp16.
# Sample 0: t0 rows 0,1 (block 0), t1 row 3 (block 1); sample 1: t0 rows
# 2,3 (blocks 0,1); sample 2: t0 row 4 twice (block 1), t1 rows 0..3.
cat >"$TMP/rw.trace" <<'T'
# sample,table,row
0,0,0
0,0,1
0,1,3
1,0,2
1,0,3
2,0,4
2,0,4
2,1,0
2,1,1
2,1,2
2,1,3
T
RW="--gpus 2 --batch 2 --tables 5x2,4x1/dtype=2 --sharding rw"
run traffic embedding $RW --trace "$TMP/rw.trace"
expect_rc 0
expect_out "# embedding forward (pooled embeddings to the samples' GPUs): 2 GPUs, 2 samples per GPU, 2 tables (rw 2)
# 11 lookups (trace $TMP/rw.trace); data-parallel gradient all-reduce 0 bytes (weft traffic embedding)
16 2
10 10"

# TorchRec's dense reduce-scatter: 2*8 + 2*2 from every GPU to every GPU.
run traffic embedding $RW --trace "$TMP/rw.trace" --rw-dense
expect_rc 0
expect_out_has "20 20
20 20"

# Data-parallel: no all-to-all; the all-reduce is 10*3*4 bytes.
run traffic embedding --gpus 2 --batch 1 --tables 10x3 --sharding dp
expect_rc 0
expect_out_has "data-parallel gradient all-reduce 120 bytes"
expect_out_has "0 0
0 0"

# The trace reader: file:line:col and the reason, exit 1.
bad_trace() { # TEXT MESSAGE
    printf "$1" >"$TMP/bad.trace"
    run traffic embedding $RW --trace "$TMP/bad.trace"
    expect_rc 1
    expect_out ""
    expect_err "weft: $TMP/bad.trace:$2"
}
bad_trace '0,0,0\n0,0,x\n' "2:5: 'x' is not a row number (a whole number from 0)"
bad_trace '0,0\n' "1:4: 2 fields: a lookup is sample,table,row (the row is missing)"
bad_trace '# c\n\n0 ;0,1\n' "3:3: expected ',' after the sample, found ';'"
bad_trace '0,0,1 7\n' "1:7: unexpected '7' after the row: a lookup is sample,table,row"
bad_trace '4,0,0\n' "1:1: sample 4 is beyond the batch: 4 samples (2 GPUs x 2), 0 to 3"
bad_trace '2,0,0\n1,0,0\n' "2:1: sample 1 after sample 2: lookups come in order of samples"
bad_trace '0,2,0\n' "1:3: table 2: the workload has 2 tables, 0 to 1"
bad_trace '0,1,4\n' "1:5: row 4 of table 1: it has 4 rows, 0 to 3"
bad_trace '0,0,-1\n' "1:5: '-1' is not a row number (a whole number from 0)"

run traffic embedding $RW --trace "$TMP/none.trace"
expect_rc 1
expect_err "weft: $TMP/none.trace: cannot open: No such file or directory"

# Usage errors: exit 2.
run traffic embedding --gpus 2 --tables 5x2
expect_rc 2
expect_err_has "weft: missing --batch"
run traffic embedding --gpus 2 --batch 2 --tables "5x2,3*"
expect_rc 2
expect_err_has "weft: bad --tables '5x2,3*': group 2 ('3*'): '' is not ROWSxDIM"
run traffic embedding --gpus 2 --batch 2 --tables "5x2/shard=cw"
expect_rc 2
expect_err_has "weft: bad --tables '5x2/shard=cw': group 1 ('5x2/shard=cw'): shard=cw: expected tw, rw, dp or cw:K (K column shards)"
run traffic embedding --gpus 2 --batch 2 --tables "5x2/size=3"
expect_rc 2
expect_err_has "group 1 ('5x2/size=3'): unknown key 'size' (pool, dtype, zipf or shard)"
run traffic embedding --gpus 2 --batch 2 --tables 5x2 --skew zipf:9
expect_rc 2
expect_err_has "weft: bad --skew 'zipf:9': expected uniform or zipf:S with S from 0 to 8 (at most 3 decimals, e.g. zipf:1.2)"
run traffic embedding --gpus 2 --batch 2 --tables 5x2 --trace "$TMP/rw.trace" --seed 1
expect_rc 2
expect_err_has "weft: --trace takes the lookups from a file: --seed means the generator"
# A workload beyond the library's limits: exit 1.
run traffic embedding --gpus 2 --batch 2 --tables "5x2/shard=cw:3"
expect_rc 1
expect_err "weft: table 0: 3 column shards of 2 columns: must be 1 to 2"
run traffic embedding --gpus 2 --batch 2 --tables "200Mx2/zipf=1"
expect_rc 1
expect_err "weft: table 0: a zipf law over 200000000 rows: the generator's limit is 134217728 rows (8 bytes a row; give a trace instead)"

# The generator's trace gives the generator's matrix; the same seed the
# same bytes.
MIX="--gpus 4 --batch 64 --tables 8*100Kx64/pool=8/zipf=1.05/shard=rw,4*1Kx32,2x128/shard=cw:4,1Mx16/shard=dp"
run traffic embedding $MIX --seed 3 -o "$TMP/f.tm" --write-trace "$TMP/f.trace"
expect_rc 0
run traffic embedding $MIX --trace "$TMP/f.trace" -o "$TMP/t.tm"
expect_rc 0
check "matrix of the trace = matrix of the generator" \
    diff <(grep -v '^#' "$TMP/f.tm") <(grep -v '^#' "$TMP/t.tm")
check "17920 lookups in the trace" test "$(grep -vc '^#' "$TMP/f.trace")" = 17920
check "64,000,000 bytes of all-reduce" grep -q "all-reduce 64000000 bytes" "$TMP/f.tm"
# The table-wise part (tables of 32 fp32 columns in slots 0-3: GPUs 0-3,
# 64*32*4 = 8192 to every GPU) and the column-wise part (2 tables of 4
# shards of 32 columns in slots 4-11: 2 shards a GPU, 2*8192) are exact:
# 24576 in every entry. The rest is row-wise: each of a GPU's 64 samples
# x 8 tables sends 64*4 = 256 bytes from each block its 8 rows hit, at
# least 1 and at most 4 (the GPUs): exactly 1682 in column 0 (seeded).
fixed=$((64 * 32 * 4 * 3))
check "each column: 1 to 4 blocks a bag" awk -v f="$fixed" '
    !/^#/ { for (j = 1; j <= NF; j++) col[j] += $j - f; n = NF }
    END { for (j = 1; j <= n; j++) if (col[j] % 256 || col[j] < 512*256 || col[j] > 4*512*256) exit 1
          exit col[1] != 1682 * 256 }' "$TMP/f.tm"

# The bound and the simulator take the file: on switch:4 (100 GB/s links)
# the bound is the busiest rank's bytes across the switch over 100 GB/s,
# and the optimal schedule's simulated time equals it.
busiest=$(awk 'BEGIN { n = 0; m = 0 } !/^#/ { for (j = 1; j <= NF; j++) if (j != n + 1) { r[n] += $j; c[j - 1] += $j }; n++ }
    END { for (i = 0; i < n; i++) { if (r[i] > m) m = r[i]; if (c[i] > m) m = c[i] }; print m + 0 }' \
    "$TMP/f.tm")
run bound switch:4 --coll alltoall --traffic "$TMP/f.tm" --json
expect_rc 0
bound_s=$(printf '%s\n' "$OUT" | sed -n 's/.*"time_s": \(.*\),/\1/p')
check "bound = $busiest bytes / 100 GB/s (got $bound_s s)" \
    awk -v t="$bound_s" -v b="$busiest" 'BEGIN { exit !(t > 0 && (t - b / 1e11) ^ 2 < (1e-12 * t) ^ 2) }'
bound_exact=$(printf '%s\n' "$OUT" | sed -n 's/.*"time_exact": "\(.*\)",/\1/p')
run plan switch:4 --coll alltoall --algo optimal --traffic "$TMP/f.tm" --json
expect_rc 0
expect_out_has "\"time_exact\": \"$bound_exact\","
run sim switch:4 --algo optimal --coll alltoall --traffic "$TMP/f.tm" --model fluid --json
expect_rc 0
sim_s=$(printf '%s\n' "$OUT" | sed -n 's/^  "time_s": \(.*\),/\1/p')
check "optimal simulated ($sim_s s) = the bound ($bound_s s)" \
    awk -v d="$sim_s" -v b="$bound_s" 'BEGIN { exit !((d - b) ^ 2 < (1e-9 * b) ^ 2) }'
run sim switch:4 --algo direct --coll alltoall --traffic "$TMP/f.tm" --model fluid --json
expect_rc 0
direct_s=$(printf '%s\n' "$OUT" | sed -n 's/^  "time_s": \(.*\),/\1/p')
check "direct ($direct_s s) is no faster than the bound ($bound_s s)" \
    awk -v d="$direct_s" -v b="$bound_s" 'BEGIN { exit !(d >= b * (1 - 1e-12)) }'
# The backward matrix is the transpose: the same bound on a symmetric star.
run traffic embedding $MIX --seed 3 --backward -o "$TMP/b.tm"
expect_rc 0
run bound switch:4 --coll alltoall --traffic "$TMP/b.tm" --json
expect_rc 0
expect_out_has "\"time_s\": $bound_s,"
# A matrix of another size than the fabric is refused.
run bound switch:8 --coll alltoall --traffic "$TMP/f.tm"
expect_rc 1
expect_err_has "the traffic matrix has 4 ranks, the fabric switch:8 has 8"

finish
