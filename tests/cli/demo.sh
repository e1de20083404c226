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
expect_out_has "vs dbtree    algbw 50.000 GB/s (50); optimal is 3.47x"
expect_out_has "== sim: every allreduce schedule on a100:2 at 1 GiB, simulated, vs the bound =="
expect_out_has "allreduce on a100:2 (16 ranks), size 1073741824 (1G), model gpu (NCCL protocols)"
expect_out_has "     bound          6194.664       173.333       325.000    100.0%"
expect_out_has "  1  optimal        6300.351       170.426       319.548     98.3%"
expect_out_has "  9  ring          80557.416        13.329        24.992      7.7%"

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
