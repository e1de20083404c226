# weft perf under weft launch: every collective checked exactly (#wrong 0)
# over shared memory and TCP, the table's shape, and usage errors.
# Run by CTest as: bash perf.sh WEFT_BIN SOURCE_DIR SHARED_FIXTURES
WEFT=$1
SRC=$2
. "$SRC/tests/cli/lib/check.sh"

run launch -n 3 -- "$WEFT" perf allreduce -b 8 -e 64K -f 8 -n 2 -w 1 -c 1
expect_rc 0
expect_out_has "# weft perf allreduce: 3 ranks, transport shm, 2 iterations, 1 warmup, check 1"
expect_out_has "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)"
expect_out_has "
           8             2     float     sum      -1"
expect_out_has "
       32768          8192     float     sum      -1"
expect_out_has "# Out of bounds values : 0 OK"
rows=$(printf '%s\n' "$OUT" | grep -vc '^#')
[ "$rows" = 5 ] && pass_ || fail_ "expected 5 rows (8 .. 32K), got $rows"

# Allgather sizes are the total output, rounded down to whole elements per
# rank: 4913 bytes of int32 over 3 ranks is 4908 bytes, 409 per rank.
run launch -n 3 -- "$WEFT" perf allgather -d int32 -b 4913 -e 4913 -n 1 -w 0
expect_rc 0
expect_out_has "
        4908          1227     int32    none      -1"

for t in shm tcp; do
    for spec in "allreduce -d half -o sum" "allreduce -d int8 -o prod" "allreduce -d uint64 -o min" \
                "allreduce -d bfloat16 -o max" "allgather -d int32" "reducescatter -d double -o sum" \
                "reducescatter -d int16 -o max" "broadcast -d uint8 -r 2" \
                "reduce -d float -o sum -r 1" "reduce -d int8 -o prod -r 2" "reduce -d half -o min" \
                "alltoall -d int32" "alltoall -d bfloat16"; do
        LAST="launch -n 3 perf $spec ($t)"
        WEFT_TRANSPORT=$t run launch -n 3 -- "$WEFT" perf $spec -b 1 -e 100K -f 17 -n 1 -w 0
        expect_rc 0
        expect_out_has "# Out of bounds values : 0 OK"
    done
done

# A plan instead of the ring: sizes are whole chunks (16 B for 4 float
# chunks), every element checked.
for t in shm tcp; do
    LAST="perf --plan ring_allreduce_4.plan ($t)"
    WEFT_TRANSPORT=$t run launch -n 4 -- "$WEFT" perf allreduce -d int32 -b 16 -e 256K -f 16 -n 1 -w 0 \
        --plan "$SRC/tests/fixtures/plans/ring_allreduce_4.plan"
    expect_rc 0
    expect_out_has "check 1, plan"
    expect_out_has "
        4096          1024     int32     sum      -1"
    expect_out_has "# Out of bounds values : 0 OK"
done
run launch -n 4 -- "$WEFT" perf allgather --plan "$SRC/tests/fixtures/plans/ring_allreduce_4.plan"
expect_rc 1
expect_err_has "ring_allreduce_4.plan: the plan is for allreduce, not allgather"
run launch -n 3 -- "$WEFT" perf allreduce --plan "$SRC/tests/fixtures/plans/ring_allreduce_4.plan"
expect_rc 1
expect_err_has "weft: plan: the plan is for 4 ranks, the communicator has 3"

# One rank without a launcher.
run perf allgather -b 1K -e 1K -n 1 -w 0
expect_rc 0
expect_out_has "# weft perf allgather: 1 ranks, transport self"
expect_out_has "
        1024           256     float    none      -1"

# reduce: the size is the root's buffer; alltoall: one rank's input, cut
# into whole elements per peer (1001 bytes of int32 over 3 ranks: 996).
run launch -n 3 -- "$WEFT" perf reduce -d int32 -b 1001 -e 1001 -n 1 -w 0 -r 2 -c 1
expect_rc 0
expect_out_has "
        1000           250     int32     sum       2"
run launch -n 3 -- "$WEFT" perf alltoall -d int32 -b 1001 -e 1001 -n 1 -w 0 -c 1
expect_rc 0
expect_out_has "# weft perf alltoall: 3 ranks"
expect_out_has "
         996           249     int32    none      -1"
expect_out_has "# Out of bounds values : 0 OK"

# A forced algorithm runs (sizes whole chunks: ring has 3 on 3 ranks) and
# one that does not build the collective is named, never replaced.
WEFT_ALGO=ring run launch -n 3 -- "$WEFT" perf allreduce -d int32 -b 12 -e 12K -f 32 -n 1 -w 0 -c 1
expect_rc 0
expect_out_has "# Out of bounds values : 0 OK"
WEFT_ALGO=ring run launch -n 3 -- "$WEFT" perf alltoall -b 12 -e 12 -n 1 -w 0
expect_rc 1
expect_err_has "comm: algorithm ring (WEFT_ALGO) for alltoall on switch:3: "

run perf gather
expect_rc 2
expect_err_has "weft: bad COLL 'gather': allreduce, allgather, reducescatter, broadcast, reduce or alltoall"
run perf allreduce -b 1X
expect_rc 2
expect_err_has "weft: bad -b '1X'"
run perf allreduce -d int128
expect_rc 2
expect_err_has "weft: bad -d 'int128'"
run perf allreduce -b 2K -e 1K
expect_rc 2
expect_err_has "weft: -b 2048 is larger than -e 1024"
run perf broadcast -r 3 -e 8
expect_rc 1
expect_err_has "weft: perf: root 3 is not a rank (0 .. 0)"
WEFT_SIZE=2 WEFT_RANK=0 run perf allreduce
expect_rc 1
expect_err_has "weft: WEFT_ADDR: expected host:port, got '(unset)'"

# One rank in place moves nothing: N/A rather than a rate of the call's
# overhead (45,491 GB/s once); out of place is a local copy, busbw 0.
run perf allreduce -b 1K -e 1K -n 1 -w 0
expect_rc 0
row=$(printf '%s\n' "$OUT" | grep -v '^#')
case "$row" in
*"     N/A     N/A       0") pass_ ;;
*) fail_ "one-rank row: in place should be N/A, got: $row" ;;
esac
check "out-of-place busbw 0.00 with one rank" grep -q '^ *1024 .* 0\.00       0 ' <<<"$row"
run perf broadcast -b 1K -e 1K -n 1 -w 0 --json
expect_rc 0
check "one-rank JSON: in place null, out of place a number" python3 -c '
import json, sys
d = json.loads(sys.argv[1])
r = d["rows"][0]
assert d["ranks"] == 1 and d["transport"] == "self", d
assert r["in_place"]["algbw"] is None and r["in_place"]["busbw"] is None, r
assert r["out_of_place"]["algbw"] > 0 and r["out_of_place"]["busbw"] == r["out_of_place"]["algbw"], r
' "$OUT"

# nccl-tests' -g, -t, -a, -z, -G, -N: the neutral values run, -a and -z
# as nccl-tests, -N repeats the sweep.
run launch -n 2 -- "$WEFT" perf allreduce -b 1K -e 2K -n 1 -w 0 -g 1 -t 1 -G 0 -a 1 -z 1 -N 2
expect_rc 0
expect_out_has "
# time: mean over ranks (-a 1), a barrier after each call, timed (-z 1)
#"
rows=$(printf '%s\n' "$OUT" | grep -vc '^#')
[ "$rows" = 4 ] && pass_ || fail_ "expected 4 rows (2 sizes, 2 cycles), got $rows"
for z in 0 2 3; do
    for av in 0 2 3; do
        run launch -n 2 -- "$WEFT" perf reduce -b 64 -e 64 -n 1 -w 0 -a $av -z $z
        expect_rc 0
        expect_out_has "# Out of bounds values : 0 OK"
    done
done
run perf allreduce -g 2
expect_rc 2
expect_err_has "weft: bad -g '2': expected 1: weft perf drives one rank per process and no GPU; start N ranks with 'weft launch -n N --'"
run perf allreduce -t 8
expect_rc 2
expect_err_has "weft: bad -t '8': expected 1: each weft perf process is one rank, not one per thread; start N ranks with 'weft launch -n N --'"
run perf allreduce -G 10
expect_rc 2
expect_err_has "weft: bad -G '10': expected 0: the runtime runs on CPUs and has no CUDA graph to capture"
run perf allreduce -a 4
expect_rc 2
expect_err_has "weft: bad -a '4': expected 0 (rank 0), 1 (mean), 2 (least) or 3 (largest)"
run perf allreduce -z 5
expect_rc 2
expect_err_has "weft: bad -z '5': expected 0, 1, 2 or 3"
run perf allreduce -N -1
expect_rc 2
expect_err_has "weft: bad -N '-1': expected an integer 0 .. 1073741824 (0: until killed)"
run perf allreduce -N 0 --json
expect_rc 2
expect_err_has "weft: -N 0 runs until killed, so --json would never complete its object; give a number of cycles"

# --json: one object from rank 0 alone, every row, exact checks.
run launch -n 3 -- "$WEFT" perf allgather -d int32 -b 4913 -e 9826 -n 1 -w 0 -N 2 --json
expect_rc 0
check "perf --json" python3 -c '
import json, sys
d = json.loads(sys.argv[1])
assert d["coll"] == "allgather" and d["ranks"] == 3 and d["cycles"] == 2, d
assert [(r["cycle"], r["size"], r["count"]) for r in d["rows"]] == \
    [(0, 4908, 1227), (0, 9816, 2454), (1, 4908, 1227), (1, 9816, 2454)], d["rows"]
assert all(r[h]["wrong"] == 0 and r[h]["algbw"] > 0 for r in d["rows"]
           for h in ("out_of_place", "in_place")), d["rows"]
assert d["ok"] is True and d["error"] is None and d["wrong_total"] == 0, d
' "$OUT"

# Log lines of several ranks say whose they are.
WEFT_LOG=info run launch -n 2 -- "$WEFT" perf allreduce -b 1K -e 1K -n 1 -w 0
expect_rc 0
expect_err_has "weft INFO run: rank 0: allreduce 1024 B: builtin (no fabric configured (WEFT_FABRIC))"
expect_err_has "weft INFO run: rank 1: allreduce 1024 B: builtin (no fabric configured (WEFT_FABRIC))"
unprefixed=$(printf '%s\n' "$ERR" | grep -vc '^weft [A-Z]* [a-z]*: rank [01]: ')
[ "$unprefixed" = 0 ] && pass_ || fail_ "$unprefixed log lines without a rank"

finish
