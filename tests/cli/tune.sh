# weft tune: the table it writes (checked against weft sim, candidate by
# candidate), the runtime following it under weft launch (the info report
# lines and exact results), and tables that do not fit: another fabric, a
# corrupt line, usage errors.
# Run by CTest as: bash tune.sh WEFT_BIN SOURCE_DIR SHARED_FIXTURES
WEFT=$1
SRC=$2
. "$SRC/tests/cli/lib/check.sh"
T=$(mktemp -d)
trap 'rm -rf "$T" "$CHECK_OUT_" "$CHECK_ERR_"' EXIT

run tune switch:4 --alpha 5us --colls broadcast,allreduce --sizes 1K:1M:x4 -o "$T/t.tune"
expect_rc 0
expect_out_has "tuning table for switch:4 (4 ranks, model=fluid slices=1 alpha=5e-06) written to $T/t.tune"
check "11 header lines and entries" test "$(grep -c . "$T/t.tune")" = 19
check "header" test "$(sed -n '1p;4p;6p;7p' "$T/t.tune" | tr '\n' '|')" = \
    "weft-tuning 1|fabric switch:4|ranks 4|sim model=fluid slices=1 alpha=5e-06|"
check "allreduce entries first" test "$(sed -n 8p "$T/t.tune" | cut -d' ' -f1-3)" = \
    "entry allreduce 1024"
check "broadcast last" test "$(sed -n 19p "$T/t.tune" | cut -d' ' -f1-3)" = \
    "entry broadcast 1048576"

# Each candidate's time is what weft sim says, and the first is the fastest.
line=$(grep '^entry broadcast 16384 ' "$T/t.tune")
best=""
bt=""
for pair in $(echo "$line" | cut -d' ' -f4-); do
    name=${pair%%=*}
    want=${pair#*=}
    "$WEFT" plan switch:4 --coll broadcast --algo "$name" -o "$T/$name.plan" >/dev/null
    got=$("$WEFT" sim switch:4 --plan "$T/$name.plan" --size 16K --alpha 5us --csv |
          tail -1 | cut -d, -f2)
    LAST="sim switch:4 --plan ($name) --size 16K"
    awk -v a="$got" -v b="$want" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= 1e-8 * b) }' &&
        pass_ || fail_ "table says $want s, weft sim says $got s"
    if [ -z "$bt" ] || awk -v a="$got" -v b="$bt" 'BEGIN { exit !(a < b) }'; then
        bt=$got
        best=$name
    fi
done
first=$(echo "$line" | cut -d' ' -f4 | cut -d= -f1)
LAST="tune: the fastest broadcast at 16K"
[ "$first" = "$best" ] && pass_ || fail_ "table ranks $first first, weft sim says $best"

# Without --alpha or --model: weft sim's default for the fabric, here (no
# arch=) the runtime model, weft's own executor (slices of 256 KiB, 45 us
# per message); the table says so, and its times are weft sim's default.
run tune switch:4 --colls allreduce --sizes 1K:16M:x4 -o "$T/rt.tune"
expect_rc 0
expect_err ""
expect_out_has "tuning table for switch:4 (4 ranks, model=runtime) written to $T/rt.tune"
check "runtime header" test "$(sed -n 7p "$T/rt.tune")" = "sim model=runtime"
line=$(grep '^entry allreduce 65536 ' "$T/rt.tune")
for pair in $(echo "$line" | cut -d' ' -f4-); do
    name=${pair%%=*}
    want=${pair#*=}
    "$WEFT" plan switch:4 --coll allreduce --algo "$name" -o "$T/$name.plan" >/dev/null
    got=$("$WEFT" sim switch:4 --plan "$T/$name.plan" --size 64K --csv | tail -1 | cut -d, -f2)
    LAST="sim switch:4 --plan ($name) --size 64K (runtime model)"
    awk -v a="$got" -v b="$want" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= 1e-8 * b) }' &&
        pass_ || fail_ "table says $want s, weft sim says $got s"
done
# Size-dependent in the runtime model: hd (2 log2 4 = 4 messages of 45 us:
# 180.015 us) at 1 KiB, optimal at 16 MiB (313.693 us against the
# 251.7 us its bound takes: a stream's slices queue behind each other and
# pay the 45 us once per dependent step, as the executor sends them).
check "runtime 1 KiB: hd" test "$(grep '^entry allreduce 1024 ' "$T/rt.tune" | cut -d' ' -f4)" = \
    "hd=0.00018001536"
check "runtime 16 MiB: optimal" test \
    "$(grep '^entry allreduce 16777216 ' "$T/rt.tune" | cut -d' ' -f4)" = "optimal=0.00031369344"
# --slice-bytes as weft sim's, in the runtime model and in fluid.
run tune switch:4 --colls allreduce --sizes 1K --slice-bytes 64K -o "$T/sb.tune"
expect_rc 0
check "slice_bytes header" test "$(sed -n 7p "$T/sb.tune")" = "sim model=runtime slice_bytes=65536"
run tune switch:4 --colls allreduce --sizes 1K --model fluid --slice-bytes 64K -o "$T/sbf.tune"
expect_rc 0
check "fluid slice_bytes header" test "$(sed -n 7p "$T/sbf.tune")" = \
    "sim model=fluid slice_bytes=65536 alpha=0"
# --slices still works (tests/netns/fabric.sh calls it): fluid, with weft
# sim's deprecation note.
run tune switch:4 --colls allreduce --sizes 1K --slices 8 -o "$T/sl.tune"
expect_rc 0
expect_err "weft tune: --slices is deprecated: it fixes the slice count at every size (fluid model); use --slice-bytes B"
check "slices header" test "$(sed -n 7p "$T/sl.tune")" = "sim model=fluid slices=8 alpha=0"

# Table to stdout without -o: the same text.
run tune switch:4 --alpha 5us --colls broadcast,allreduce --sizes 1K:1M:x4
expect_rc 0
check "stdout table equals the file" test "$OUT" = "$(cat "$T/t.tune")"

# The runtime follows the table: the report names it and its line.
ar=$(grep -n '^entry allreduce 4096 ' "$T/t.tune")
lno=${ar%%:*}
algo=$(echo "${ar#*:}" | cut -d' ' -f4 | cut -d= -f1)
n=$(echo "${ar#*:}" | wc -w)
n=$((n - 3))
WEFT_FABRIC=switch:4 WEFT_TUNING="$T/t.tune" WEFT_LOG=info \
    run launch -n 4 -- "$WEFT" perf allreduce -b 4K -e 4K -n 2 -w 1 -c 1
expect_rc 0
expect_out_has "# Out of bounds values : 0 OK"
expect_err_has "weft INFO run: rank 0: allreduce 4096 B: $algo (fastest of $n by simulation (table $T/t.tune:$lno) on switch:4 at 4096 B: "
bc=$(grep -n '^entry broadcast 65536 ' "$T/t.tune")
balgo=$(echo "${bc#*:}" | cut -d' ' -f4 | cut -d= -f1)
WEFT_FABRIC=switch:4 WEFT_TUNING="$T/t.tune" WEFT_LOG=info \
    run launch -n 4 -- "$WEFT" perf broadcast -b 64K -e 64K -n 1 -w 0 -c 1 -r 2
expect_rc 0
expect_out_has "# Out of bounds values : 0 OK"
expect_err_has "weft INFO run: rank 0: broadcast 65536 B: $balgo (fastest of "
expect_err_has "(table $T/t.tune:${bc%%:*}) on switch:4 at 65536 B: "
# A collective the table does not rank: alpha-beta, and the report says so.
WEFT_FABRIC=switch:4 WEFT_TUNING="$T/t.tune" WEFT_LOG=info \
    run launch -n 4 -- "$WEFT" perf allgather -b 4K -e 4K -n 1 -w 0 -c 1
expect_rc 0
expect_err_has "(not in the tuning table; fastest of "

# Another fabric: refused at init, naming the table and what to do.
WEFT_FABRIC=switch:2 WEFT_TUNING="$T/t.tune" run launch -n 2 -- "$WEFT" perf allreduce -n 1 -w 0
expect_rc 1
expect_err_has "$T/t.tune: the tuning table is for fabric switch:4 (hash "
expect_err_has ", 4 ranks); switch:2 has hash "
expect_err_has " (2 ranks); run weft tune switch:2"
WEFT_FABRIC=biring:4 WEFT_TUNING="$T/t.tune" run launch -n 4 -- "$WEFT" perf allreduce -n 1 -w 0
expect_rc 1
expect_err_has ", 4 ranks); biring:4 has hash "

# A corrupt line: the file and line are named.
sed 's/^entry allreduce 16384 hd=/entry allreduce 16384 hdx=/' "$T/t.tune" >"$T/bad.tune"
WEFT_FABRIC=switch:4 WEFT_TUNING="$T/bad.tune" run launch -n 4 -- "$WEFT" perf allreduce -n 1 -w 0
expect_rc 1
expect_err_has "$T/bad.tune:10: unknown algorithm 'hdx'"
sed '5s/^hash .*/hash 0123456789abcdef/' "$T/t.tune" >"$T/hash.tune"
WEFT_FABRIC=switch:4 WEFT_TUNING="$T/hash.tune" run launch -n 4 -- "$WEFT" perf allreduce -n 1 -w 0
expect_rc 1
expect_err_has "the tuning table is for fabric switch:4 (hash 0123456789abcdef, 4 ranks); switch:4 has hash "

# Usage errors.
run tune switch:4 --sizes 1000:4000:x2
expect_rc 2
expect_err_has "weft: bad --sizes '1000:4000:x2': MIN and F must be powers of two"
run tune switch:4 --sizes 1K:4K:x3
expect_rc 2
run tune switch:4 --colls allreduce,allfoo
expect_rc 2
expect_err_has "weft: bad --colls: unknown collective 'allfoo'"
run tune switch:4 --slices 0
expect_rc 2
run tune switch:4 --model bogus
expect_rc 2
expect_err_has "weft: unknown --model 'bogus' (expected fluid, runtime or gpu)"
run tune switch:4 --model runtime --alpha 5us
expect_rc 2
expect_err_has "weft: --alpha and --slices set the fluid model; they do not go with --model runtime"
run tune switch:4 --slices 2 --slice-bytes 1K
expect_rc 2
expect_err_has "weft: --slice-bytes replaces --slices; give one"
run tune switch:4 --colls allreduce --sizes 1K --model gpu
expect_rc 1
expect_err_has "sim: the gpu model needs the GPUs' generation, and no compute node of this fabric has arch="
run tune nosuch:4
expect_rc 1
expect_err_has "no such file or preset 'nosuch:4'"
run tune switch:4 --colls allreduce -o /nonexistent/dir/t.tune
expect_rc 1
expect_err_has "/nonexistent/dir/t.tune"
# Size-dependent choices where the fabric says so: on a physical ring with a
# 5 us start per transfer, 1 KiB is latency bound (hd: 2 log2 8 = 6 steps,
# 30.07 us) and 4 MiB bandwidth bound (ring: 143.4 us, hd's exchanges
# crowd the ring's links).
run tune ring:8 --alpha 5us --colls allreduce --sizes 1K:4M:x4096 -o "$T/r.tune"
expect_rc 0
check "1 KiB: hd first" test "$(grep '^entry allreduce 1024 ' "$T/r.tune" | cut -d' ' -f4 | cut -d= -f1)" = hd
check "4 MiB: ring first" test "$(grep '^entry allreduce 4194304 ' "$T/r.tune" | cut -d' ' -f4 | cut -d= -f1)" = ring

# And on a GPU preset (arch=ampere): the gpu model, as weft sim's default.
# a100:2 takes rd (4 steps of LL's latencies, 14.506 us) at 1 KiB, hier
# (LL128) at 1 MiB and the optimal plan (Simple, 137.3 GB/s algbw with
# NVLink at NCCL's 20 of 25 GB/s per link) at 1 GiB.
run tune a100:2 --colls allreduce --sizes 1K:1G:x1024 -o "$T/a.tune"
expect_rc 0
expect_out_has "tuning table for a100:2 (16 ranks, model=gpu) written to $T/a.tune"
check "a100:2 1 KiB: rd first" test "$(grep '^entry allreduce 1024 ' "$T/a.tune" | cut -d' ' -f4)" = rd=1.45056923e-05
check "a100:2 1 MiB: hier first" test "$(grep '^entry allreduce 1048576 ' "$T/a.tune" | cut -d' ' -f4 | cut -d= -f1)" = hier
check "a100:2 1 GiB: optimal first" test "$(grep '^entry allreduce 1073741824 ' "$T/a.tune" | cut -d' ' -f4 | cut -d= -f1)" = optimal

run help tune
expect_rc 0
expect_out_has "usage: weft tune SPEC"
# --json: the rankings as one object; the table goes only to -o FILE.
run tune switch:4 --colls allreduce --sizes 1K:4K:x4 --json
expect_rc 0
check "tune --json" python3 -c '
import json, sys
d = json.loads(sys.argv[1])
assert d["ranks"] == 4 and d["spec"] == "switch:4" and d["output"] is None, d
assert d["sim"] == {"model": "runtime", "slice_bytes": 0, "slices": 1, "alpha_s": 0}, d
assert [(e["coll"], e["bytes"]) for e in d["entries"]] == [("allreduce", 1024), ("allreduce", 4096)], d
for e in d["entries"]:
    t = [r["time_s"] for r in e["ranking"]]
    assert t == sorted(t) and t[0] > 0, e
' "$OUT"
run tune switch:4 --colls allreduce --sizes 1K --json -o "$T/j.tune"
expect_rc 0
check "tune --json -o writes the table" grep -q '^weft-tuning 1$' "$T/j.tune"
check "tune --json -o names the file" python3 -c '
import json, sys
assert json.loads(sys.argv[1])["output"] == sys.argv[2]
' "$OUT" "$T/j.tune"
run tune switch:4 --json -o -
expect_rc 2
expect_err_has "weft: --json and -o - would both write to standard output"


finish
