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

run tune switch:4 --alpha 5e-6 --colls broadcast,allreduce --sizes 1K:1M:x4 -o "$T/t.tune"
expect_rc 0
expect_out_has "tuning table for switch:4 (4 ranks, slices=1 alpha=5e-06) written to $T/t.tune"
check "11 header lines and entries" test "$(grep -c . "$T/t.tune")" = 19
check "header" test "$(sed -n '1p;4p;6p;7p' "$T/t.tune" | tr '\n' '|')" = \
    "weft-tuning 1|fabric switch:4|ranks 4|sim slices=1 alpha=5e-06|"
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
    got=$("$WEFT" sim switch:4 --plan "$T/$name.plan" --size 16K --alpha 5e-6 --csv |
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

# Table to stdout without -o: the same text.
run tune switch:4 --alpha 5e-6 --colls broadcast,allreduce --sizes 1K:1M:x4
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
run tune ring:8 --alpha 5e-6 --colls allreduce --sizes 1K:4M:x4096 -o "$T/r.tune"
expect_rc 0
check "1 KiB: hd first" test "$(grep '^entry allreduce 1024 ' "$T/r.tune" | cut -d' ' -f4 | cut -d= -f1)" = hd
check "4 MiB: ring first" test "$(grep '^entry allreduce 4194304 ' "$T/r.tune" | cut -d' ' -f4 | cut -d= -f1)" = ring

# And on a GPU preset with its physical latencies: a100:2 takes rd (4
# steps of hop latencies) at 1 KiB and hier (the best limit, 1200/7 GB/s)
# at 1 GiB.
run tune a100:2 --colls allreduce --sizes 1K:1G:x1024 -o "$T/a.tune"
expect_rc 0
check "a100:2 1 KiB: rd first" test "$(grep '^entry allreduce 1024 ' "$T/a.tune" | cut -d' ' -f4 | cut -d= -f1)" = rd
check "a100:2 1 GiB: hier first" test "$(grep '^entry allreduce 1073741824 ' "$T/a.tune" | cut -d' ' -f4 | cut -d= -f1)" = hier

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
