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
check "list" grep -q "bruck" <<<"$("$weft" plan --list)"

err=$("$weft" plan ring:8 --coll allreduce --algo bruck 2>&1)
check "unsupported algorithm exit 1" test $? -eq 1
check "unsupported message" grep -q "weft: algorithm 'bruck' does not build allreduce (it builds: allgather)" <<<"$err"
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
