# weft step --chakra: ASTRA-sim's 4-GPU microbenchmark traces take exactly
# the time weft sim gives one collective of 1 MiB on the fabric; the
# hand-built traces (tests/fixtures/chakra/gen.py) run, trace and fail with
# the messages and exit codes promised.
# Run by CTest as: bash chakra.sh WEFT_BIN SOURCE_DIR SHARED_FIXTURES
WEFT=$1
SRC=$2
. "$SRC/tests/cli/lib/check.sh"
FIX="$SRC/tests/fixtures/chakra"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP" "$CHECK_OUT_" "$CHECK_ERR_"' EXIT

# json_get KEY: the number after "KEY": in $OUT.
json_get() {
    printf '%s\n' "$OUT" | sed -n "s/^  \"$1\": \([0-9.e+-]*\),*$/\1/p" | head -1
}

# One collective of 1 MiB, as weft sim times it (ring for allreduce,
# allgather, reducescatter; direct for alltoall), on two fabrics.
for fabric in switch:4 ring:4; do
    for pair in all_reduce:allreduce:ring all_gather:allgather:ring \
        reduce_scatter:reducescatter:ring all_to_all:alltoall:direct; do
        IFS=: read -r file coll algo <<<"$pair"
        run sim "$fabric" --algo "$algo" --coll "$coll" --size 1M --json
        expect_rc 0
        want=$(json_get time_s)
        run step --chakra "$FIX/$file" --fabric "$fabric" --json
        expect_rc 0
        got=$(json_get total_s)
        LAST="$file on $fabric: weft sim $want, weft step --chakra $got"
        if [ -n "$want" ] && [ "$got" = "$want" ]; then pass_; else fail_ "differ"; fi
        expect_out_has "\"calls\": 1,"
        expect_out_has "\"bytes\": 1048576"
    done
done

# The report.
run step --chakra "$FIX/all_reduce" --fabric switch:4
expect_rc 0
expect_out_has "chakra $FIX/all_reduce: 4 ranks, 4 nodes, on switch:4"
expect_out_has "total 0.000286 s (1 batches of concurrent communication, 1 simulations)"
expect_out_has "  allreduce          1  0.000286  1.00"

# The hand-built trace: two groups at once, a send, the trace nests.
run step --chakra "$FIX/small" --fabric "$FIX/two_hosts.topo" --trace "$TMP/small.json" --json
expect_rc 0
expect_out_has '"nodes": 15'
expect_out_has '"batches": 2'
if command -v python3 >/dev/null 2>&1; then
    LAST="trace_check --nest-only small.json"
    got=$(python3 "$SRC/tests/cli/lib/trace_check.py" --nest-only "$TMP/small.json" 2>&1)
    if [ "$got" = "18 slices on 10 tracks
ok" ]; then pass_; else fail_ "$got"; fi
fi
check "rank 1 has a comm track" grep -q '"pid":1,"tid":2,"args":{"name":"comm"}' "$TMP/small.json"
# Both groups and the send cross between the boxes: each box's NICs carry
# the allreduce from 30 us and then the send; no NVLink is busy.
check "NICs of box b1 track" grep -q '"pid":4,"tid":4,"args":{"name":"NICs of box b1"}' "$TMP/small.json"
check "allreduce on the NICs" grep -q '{"name":"allreduce","ph":"X","pid":4,"tid":4,"ts":30.000,"dur":2090.000}' "$TMP/small.json"
check "send on the NICs" grep -q '{"name":"send","ph":"X","pid":4,"tid":2,"ts":2140.000,"dur":1045.000}' "$TMP/small.json"
check "no NVLink track" test "$(grep -c NVLink "$TMP/small.json")" = 0

# Roofline: --gpu is accepted (every node here has its duration).
run step --chakra "$FIX/small" --fabric "$FIX/two_hosts.topo" --gpu h100-sxm
expect_rc 0

# Bad input: exit 1 naming the file and node; no trace left behind.
run step --chakra "$FIX/trunc" --fabric "$FIX/two_hosts.topo" --trace "$TMP/bad.json"
expect_rc 1
expect_err "weft: $FIX/trunc.2.et: offset 91: message runs past the end of the file"
check "no trace of a failed run" test ! -e "$TMP/bad.json"
run step --chakra "$FIX/badtype" --fabric "$FIX/two_hosts.topo"
expect_rc 1
expect_err "weft: $FIX/badtype.1.et: node 6 ('mystery'): unknown node type 12"
run step --chakra "$FIX/deadlock" --fabric "$FIX/two_hosts.topo" --trace "$TMP/bad.json"
expect_rc 1
expect_err "weft: $FIX/deadlock.2.et: node 2 ('grad allreduce'): allreduce of 1000000 bytes (collective 0 of process group '2') is never issued by rank 3 ($FIX/deadlock.3.et): deadlock"
check "no trace of a deadlock" test ! -e "$TMP/bad.json"
run step --chakra "$FIX/mismatch" --fabric "$FIX/two_hosts.topo"
expect_rc 1
expect_err_has "mismatch.1.et: node 2 ('grad allreduce', allreduce of 2000000 bytes) are both collective 0 of process group '1'"
run step --chakra "$FIX/small" --fabric switch:8
expect_rc 1
expect_err_has "weft: $FIX/small.4.et: cannot open: "
run step --chakra "$FIX/small" --fabric switch:2
expect_rc 1
expect_err "weft: $FIX/small.2.et: a trace for rank 2, but the fabric has 2 ranks (0 to 1)"

# 10 MiB of empty Node messages (issue 24: 2.3 GB and seconds before): the
# first is refused with its offset, after the 8 bytes of GlobalMetadata.
{ printf '\007\012\0050.0.4'; head -c 10485760 /dev/zero; } >"$TMP/empty.0.et"
run step --chakra "$TMP/empty" --fabric switch:1
expect_rc 1
expect_err "weft: $TMP/empty.0.et: offset 8: node 0 is an empty message (no id, no type: et_def.proto's defaults, which no Chakra converter writes)"

# Usage errors.
run step --chakra "$FIX/small"
expect_rc 2
expect_err_has "weft: missing --fabric SPEC"
run step --chakra "$FIX/small" --fabric switch:4 --model gpt-1.7b
expect_rc 2
expect_err_has "weft: --chakra runs traces: --model does not apply"

finish
