#!/usr/bin/env bash
# weft plan: summaries, written plans that verify, --compare, --json and errors.
weft=$1
pass=0
fail=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
check() { # description, then a command that must succeed
    local what=$1
    shift
    if "$@"; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL: $what"; fi
}

out=$("$weft" plan a100:2 --coll allgather 2>&1)
check "ring allgather limit on a100:2" grep -q "algbw <= 26.667 GB/s (80/3)" <<<"$out"
check "busiest link named" grep -q "busiest link b0.gpu7 -> b0.nic7 (25 GB/s) carries 15/16" <<<"$out"

"$weft" plan switch:13 --coll allreduce --algo hd -o "$tmp/hd.plan" >/dev/null
check "plan written" test -s "$tmp/hd.plan"
check "written plan verifies" "$weft" verify "$tmp/hd.plan" --topo switch:13 >/dev/null
"$weft" plan torus:4x4 --coll broadcast --algo binomial --root 5 -o - >"$tmp/b.plan" 2>/dev/null
check "plan to stdout" grep -q "^root 5" "$tmp/b.plan"

json=$("$weft" plan switch:16 --coll allgather --json)
check "json algbw_exact" grep -q '"algbw_exact": "320/3"' <<<"$json"
check "json ranks" grep -q '"ranks": 16' <<<"$json"
check "json steps" grep -q '"steps": 15' <<<"$json"
if command -v python3 >/dev/null; then
    check "json parses" python3 -m json.tool <<<"$json" >/dev/null
fi
cmp=$("$weft" plan a100:2 --coll allreduce --compare)
check "compare lists hier" grep -q "hier .*1200/7" <<<"$cmp"
check "compare lists dbtree" grep -q "dbtree" <<<"$cmp"
check "compare lists rings:auto" grep -q "^  rings:auto (16) .* 320/3 " <<<"$cmp"
check "compare lists nccl" grep -q "^  nccl (ring, Simple, rings:16) .* 320/3 " <<<"$cmp"
check "compare names the best limit" grep -q "^best limit: hier, algbw 171.429 GB/s (the baseline weft plan --algo optimal is measured against)$" <<<"$cmp"
# One estimate: no row's t(S) beats S over its own limit (every algorithm on
# a100:2, where the old alpha-beta columns had ring's t(1G) at 16.55 ms
# against a limit that implies 80.53 ms), and on a fabric with latencies
# t(1K) covers the latency chain: switch:4 with 1 us per hop, 2 hops per
# transfer, so each row's t(1K) >= its steps x 2 us.
check_floor() { # table text, us per step: every row's t(S) >= S / limit, t(1K) >= steps x us
    awk -v per_step="$2" '
        # Seconds, rounded up by half the last printed digit (0.04 us may be 0.0449).
        function sec(v, u) { return (v + 0.005) * (u == "us" ? 1e-6 : u == "ms" ? 1e-3 : 1) }
        /^  [a-z]/ && $0 !~ /algorithm/ {
            n = NF; lim = $(n - 12); steps = $(n - 10)
            t1k = sec($(n-7), $(n-6)); t1m = sec($(n-5), $(n-4))
            t64 = sec($(n-3), $(n-2)); t1g = sec($(n-1), $n)
            if (lim <= 0 || steps <= 0) { print "unreadable: " $0; bad = 1; next }
            if (t1g * lim * 1e9 < 1073741824 * 0.9999 || t64 * lim * 1e9 < 67108864 * 0.9999 ||
                t1m * lim * 1e9 < 1048576 * 0.9999 || t1k * lim * 1e9 < 1024 * 0.9999 ||
                t1k * 1e6 < steps * per_step * 0.9999) { print "below: " $0; bad = 1 }
            rows++
        }
        END { exit bad || rows < 5 }' <<<"$1"
}
check "t(S) >= S / limit on a100:2" check_floor "$cmp" 0
cat >"$tmp/lat.topo" <<'TOPO'
node r0 compute
node r1 compute
node r2 compute
node r3 compute
node sw switch
duplex r0 sw 10GB/s 1us
duplex r1 sw 10GB/s 1us
duplex r2 sw 10GB/s 1us
duplex r3 sw 10GB/s 1us
TOPO
lat=$("$weft" plan "$tmp/lat.topo" --coll allreduce --compare)
check "t(S) >= S / limit and t(1K) >= the latency chain" check_floor "$lat" 2
check "ring t(1K) = 6 steps x 2 us + 1.5 KiB / 10 GB/s" grep -q "^  ring .* 12.15 us " <<<"$lat"
check "list" grep -q "bruck" <<<"$("$weft" plan --list)"

err=$("$weft" plan ring:8 --coll allreduce --algo bruck 2>&1)
check "unsupported algorithm exit 1" test $? -eq 1
check "unsupported message" grep -q "weft: algorithm 'bruck' does not build allreduce (it builds: allgather, alltoall)" <<<"$err"
err=$("$weft" plan ring:8 --coll allsum 2>&1)
check "bad coll exit 2" test $? -eq 2
check "bad coll message" grep -q "weft: unknown --coll 'allsum': expected allgather, reducescatter, allreduce, broadcast, reduce or alltoall" <<<"$err"
"$weft" plan ring:8 --coll allgather --algo nosuch -o "$tmp/x.plan" 2>/dev/null
check "no output file on failure" test ! -e "$tmp/x.plan"
err=$("$weft" plan ring:8 --coll broadcast --root 9 2>&1)
check "bad root exit 1" test $? -eq 1
check "bad root message" grep -q "root 9 is not a rank" <<<"$err"
# --list --json: the algorithms with the collectives they build.
out=$("$weft" plan --list --json)
check "plan --list --json" python3 -c '
import json, sys
d = json.loads(sys.argv[1])
a = {x["name"]: x for x in d["algorithms"]}
assert a["ring"]["colls"] == ["allgather", "reducescatter", "allreduce", "broadcast", "reduce"], a["ring"]
assert all(x["summary"] for x in d["algorithms"]), d
' "$out"


echo "$pass passed, $fail failed"
test "$fail" -eq 0
