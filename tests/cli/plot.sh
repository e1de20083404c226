# --plot FILE.svg on weft sim, sim --compare and perf: each file is
# well-formed SVG (read back by lib/svg_check.py with Python's expat
# parser) with one series per algorithm, one point per size, the bound as
# a dashed reference line where weft bound covers the collective, a legend
# and nccl-tests size labels; a file that cannot be written is an input
# error and leaves nothing behind.
# Run by CTest as: bash plot.sh WEFT_BIN SOURCE_DIR SHARED_FIXTURES
WEFT=$1
SRC=$2
. "$SRC/tests/cli/lib/check.sh"
if ! command -v python3 >/dev/null 2>&1; then
    echo "python3 not found: skipped" >&2
    exit 77
fi
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"; rm -f "$CHECK_OUT_" "$CHECK_ERR_"' EXIT

# svg FILE EXPECTED: what svg_check.py reads in FILE.
svg() {
    local got
    got=$(python3 "$SRC/tests/cli/lib/svg_check.py" "$1" 2>&1)
    if [ "$got" = "$2" ]; then pass_; else fail_ "svg_check $1 said:
$got
  expected:
$2"; fi
}

# One algorithm over 6 sizes (1K .. 1M by 4), under its bound: 100 GB/s
# busbw on switch:4 at 100 GB/s per link.
run sim switch:4 --algo ring --coll allreduce --size 1K:1M:x4 --plot "$TMP/ring.svg"
expect_rc 0
expect_out_has "allreduce ring on switch:4: 4 ranks"
svg "$TMP/ring.svg" "x ticks: 1K 2K 4K 8K 16K 32K 64K 128K 256K 512K 1M
bound bound (100.0 GB/s)
series ring: 6 points
legend: bound (100.0 GB/s) | ring"

# --compare: every algorithm that builds allgather on switch:4, 3 sizes.
run sim switch:4 --coll allgather --compare --size 4K:4M:x32 --plot "$TMP/cmp.svg" --csv
expect_rc 0
svg "$TMP/cmp.svg" "x ticks: 4K 8K 16K 32K 64K 128K 256K 512K 1M 2M 4M
bound bound (100.0 GB/s)
series ring: 3 points
series biring: 3 points
series rings:auto: 3 points
series rings:4: 3 points
series hd: 3 points
series rd: 3 points
series bruck: 3 points
series nccl: 3 points
series optimal: 3 points
legend: bound (100.0 GB/s) | ring | biring | rings:auto | rings:4 | hd | rd | bruck | nccl | optimal"

# Eleven algorithms and the bound on a100:2 (issue 29): svg_check.py fails
# the file if two series share a stroke (Tableau 10 alone repeats at the
# eleventh) or the bound is drawn like the frame, on it, or unlabelled.
run sim a100:2 --coll allreduce --compare --size 1M:4M:x4 --plot "$TMP/eleven.svg"
expect_rc 0
svg "$TMP/eleven.svg" "x ticks: 1M 2M 4M
bound bound (325.0 GB/s)
series ring: 2 points
series biring: 2 points
series rings:auto: 2 points
series rings:4: 2 points
series dbtree: 2 points
series hd: 2 points
series rabenseifner: 2 points
series rd: 2 points
series hier: 2 points
series nccl: 2 points
series optimal: 2 points
legend: bound (325.0 GB/s) | ring | biring | rings:auto | rings:4 | dbtree | hd | rabenseifner | rd | hier | nccl | optimal"
check "eleventh series dashed" grep -q 'stroke="#4e79a7" stroke-width="2" stroke-dasharray="8 4"' "$TMP/eleven.svg"
check "bound labelled" grep -q '<text class="label" [^>]*>bound (325.0 GB/s)</text>' "$TMP/eleven.svg"
# The ring plot above: the bound (100 GB/s) is the highest line and a round
# figure; the axis goes to 120 so it is drawn inside the frame.
check "headroom above the bound" grep -q '>120</text>' "$TMP/ring.svg"

# A collective weft bound does not cover has no bound line; a single size
# that is not a power of two sits between the two ticks around it.
run sim switch:4 --algo binomial --coll broadcast --size 3M --plot "$TMP/bc.svg"
expect_rc 0
svg "$TMP/bc.svg" "x ticks: 2M 4M
series binomial: 1 points
legend: binomial"

# perf: out of place and in place, one point per size (8 .. 32K by 8).
run launch -n 2 -- "$WEFT" perf allreduce -b 8 -e 32K -f 8 -n 1 -w 0 --plot "$TMP/perf.svg"
expect_rc 0
expect_out_has "# Out of bounds values : 0 OK"
svg "$TMP/perf.svg" "x ticks: 8 32 128 512 2K 8K 32K
series out-of-place: 5 points
series in-place: 5 points
legend: out-of-place | in-place"
check "perf plot title" grep -q '>weft perf allreduce: 2 ranks, transport shm, measured<' "$TMP/perf.svg"

# Unwritable paths: exit 1 naming the file, nothing left behind.
run sim switch:4 --algo ring --coll allreduce --size 1M --plot "$TMP/no/such.svg"
expect_rc 1
expect_err "weft: cannot write '$TMP/no/such.svg': No such file or directory"
run sim switch:4 --coll allgather --compare --size 1M --plot "$TMP/no/such.svg"
expect_rc 1
expect_err "weft: cannot write '$TMP/no/such.svg': No such file or directory"
expect_out ""

# weft writes SVG only: any other name is a usage error naming the flag and
# the file, found before anything runs (perf: before the ranks connect),
# and nothing is written.
for cmd in "sim switch:4 --algo ring --coll allreduce --size 1M" \
           "sim switch:4 --coll allgather --compare --size 1M"; do
    run $cmd --plot "$TMP/p.png"
    expect_rc 2
    expect_err_has "weft: bad --plot '$TMP/p.png': weft writes plots as SVG only; name the file FILE.svg
usage: weft sim SPEC"
    expect_out ""
done
run perf allreduce -b 8 -e 64 --plot "$TMP/p.svgz"
expect_rc 2
expect_err_has "weft: bad --plot '$TMP/p.svgz': weft writes plots as SVG only; name the file FILE.svg"
run launch -n 2 -- "$WEFT" perf allreduce -b 8 -e 64 -n 1 -w 0 --plot "$TMP/perf.png"
expect_rc 2
expect_err_has "weft: bad --plot '$TMP/perf.png': weft writes plots as SVG only"
# An upper-case extension is still SVG.
run sim switch:4 --algo ring --coll allreduce --size 1M --plot "$TMP/UP.SVG"
expect_rc 0
check "no temporary files left" test "$(ls "$TMP")" = "UP.SVG
bc.svg
cmp.svg
eleven.svg
perf.svg
ring.svg"
finish
