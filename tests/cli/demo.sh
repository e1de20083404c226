# `make demo` (tools/demo.sh) runs to the end and shows every section.
# Run by CTest as: bash demo.sh WEFT_BIN SOURCE_DIR SHARED_FIXTURES
WEFT=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
SRC=$(cd "$2" && pwd)
. "$SRC/tests/cli/lib/check.sh"

LAST="sh tools/demo.sh"
OUT=$(sh "$SRC/tools/demo.sh" "$WEFT" 2>"$CHECK_ERR_")
RC=$?
ERR=$(<"$CHECK_ERR_")
expect_rc 0
expect_err ""
expect_out_has "weft demo: weft "
expect_out_has "== fabric a100:2 =="
expect_out_has "ranks         16"
expect_out_has "injection     325 GB/s per rank (every rank)"
expect_out_has "== bound: the fastest any allgather could run on a100:2 =="
expect_out_has "1040/3"
expect_out_has "== optimal: an allreduce schedule that reaches the bound on a100:2 =="
expect_out_has "reached      algbw 173.333 GB/s (520/3), equal to the bound"
expect_out_has "vs best      algbw 171.429 GB/s (1200/7); optimal is 1.01x vs hier"
expect_out_has "vs nccl      algbw 106.667 GB/s (320/3); optimal is 1.62x vs nccl (ring, Simple, rings:16)"
expect_out_has "== nccl: what NCCL runs for allreduce on a100:2, size by size =="
expect_out_has "NCCL runs at 1024 (1K): nccl (tree, LL, dbtree)"
expect_out_has "           at 1073741824 (1G): nccl (ring, Simple, rings:16)"
expect_out_has "== sim: every allreduce schedule on a100:2 at 1 GiB, simulated, vs the bound =="
expect_out_has "allreduce on a100:2 (16 ranks), size 1073741824 (1G), model gpu (NCCL protocols)"
expect_out_has "      bound                           6194.664       173.333       325.000    100.0%"
expect_out_has "   1  optimal                         7821.467       137.281       257.403     79.2%"
expect_out_has "   3  nccl (ring, Simple, rings:16)  10133.066       105.964       198.683     61.1%"
expect_out_has "  11  ring                           80558.126        13.329        24.991      7.7%"
expect_out_has "optimal is 1.30x vs rings:auto (16), the fastest baseline; 1.30x vs nccl (ring, Simple, rings:16)"

# Another fabric; a broken one stops the demo with weft's exit code.
LAST="sh tools/demo.sh WEFT ring:4"
OUT=$(sh "$SRC/tools/demo.sh" "$WEFT" ring:4 2>/dev/null)
RC=$?
expect_rc 0
expect_out_has "== fabric ring:4 =="
LAST="sh tools/demo.sh WEFT ring:1"
ERR=$(sh "$SRC/tools/demo.sh" "$WEFT" ring:1 2>&1 >/dev/null)
RC=$?
expect_rc 1
expect_err_has "weft: ring:1:"
LAST="sh tools/demo.sh /nonexistent"
ERR=$(sh "$SRC/tools/demo.sh" /nonexistent 2>&1 >/dev/null)
RC=$?
expect_rc 1
expect_err "demo: no weft binary at '/nonexistent' (run 'make' first)"

finish
