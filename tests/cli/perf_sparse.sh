# weft perf allreduce --density / --compress under weft launch: the sparse
# all-reduce beside the dense one (every element byte-equal: #wrong 0; the
# union of the supports against weft_sparse_part_get's model), skewed, over
# shared memory and TCP; int8 within its bound (#over 0); top-k with error
# feedback; bad combinations of flags.
# Run by CTest as: bash perf_sparse.sh WEFT_BIN SOURCE_DIR SHARED_FIXTURES
WEFT=$1
SRC=$2
. "$SRC/tests/cli/lib/check.sh"

for t in shm tcp; do
    LAST="density 0.01 ($t)"
    WEFT_TRANSPORT=$t run launch -n 3 -- "$WEFT" perf allreduce --density 0.01 -b 400K -e 400K -n 2 -w 1
    expect_rc 0
    expect_out_has "# weft perf allreduce: 3 ranks, transport $t, float sum, 2 iters, 1 warmup"
    expect_out_has "# sparse: weft_allreduce_sparse of k = ceil(n D) pairs a rank, D = 0.01, skew none, hash partition"
    # n = 102400, k = 1024 a rank; the model's union: 3 parts of 34134,
    # 34133, 34133 elements with 342, 341, 341 non-zeros a rank: 34134 (1 -
    # (1 - 342/34134)^3) = 1015.75 -> 1016, and 1013 twice: 3042. The
    # measured union of perf's supports (3 ranks' 1024 drawn apart): 3047.
    expect_out_has "
      409600     102400      1024      3047      3042"
    rows=$(printf '%s\n' "$OUT" | grep -v '^#' | awk '{print $NF}')
    [ "$rows" = 0 ] && pass_ || fail_ "expected #wrong 0, got '$rows'"
done

LAST="zipf skew, 4 ranks"
run launch -n 4 -- "$WEFT" perf allreduce --density 1% --skew zipf:1.1 -b 64K -e 128K -n 1 -w 0
expect_rc 0
expect_out_has "skew zipf:1.1"
expect_out_has "
       65536      16384       164"
rows=$(printf '%s\n' "$OUT" | grep -v '^#' | awk '{s += $NF} END {print NR, s}')
[ "$rows" = "2 0" ] && pass_ || fail_ "expected 2 rows, none wrong, got '$rows'"

LAST="int8:64"
run launch -n 3 -- "$WEFT" perf allreduce --compress int8:64 -b 64K -e 64K -n 1 -w 0
expect_rc 0
expect_out_has "# compressed: int8:64 two-shot (weft_allreduce_int8)"
over=$(printf '%s\n' "$OUT" | grep -v '^#' | awk '{print $NF}')
[ "$over" = 0 ] && pass_ || fail_ "expected #over 0, got '$over'"

LAST="topk"
run launch -n 2 -- "$WEFT" perf allreduce --compress topk:0.05 -b 64K -e 64K -n 3 -w 1
expect_rc 0
expect_out_has "# compressed: topk:0.05 with error feedback (weft_topk_compress)"
expect_out_has "
       65536      16384       820"

LAST="usage errors"
run perf allgather --density 0.01
expect_rc 2
expect_err_has "--density, --skew and --compress are for allreduce, not allgather"
run perf allreduce --density 0.01 --json
expect_rc 2
expect_err_has "--json does not go with --density or --compress"
run perf allreduce --density 0.01 -d int32
expect_rc 2
expect_err_has "--density and --compress reduce float gradients, not -d int32"
run perf allreduce --skew zipf:1
expect_rc 2
expect_err_has "--skew needs --density"
run perf allreduce --density 0.01 --compress int8
expect_rc 2
expect_err_has "give --density D (the sparse all-reduce of a sparse tensor) or --compress C, not both"
run perf allreduce --compress qsgd:4
expect_rc 2
expect_err_has "--compress qsgd:4: the runtime runs int8[:B] and topk:D; the other compressors are modelled only (weft sim --compress)"
run perf allreduce --density 2
expect_rc 2
expect_err_has "bad --density:"
finish
