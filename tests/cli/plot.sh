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
check "no temporary files left" test "$(ls "$TMP")" = "bc.svg
cmp.svg
perf.svg
ring.svg"
finish
