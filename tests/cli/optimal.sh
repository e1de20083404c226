#!/usr/bin/env bash
# weft plan --algo optimal: the exact figures of the issue, written plans
# that verify against the fabric, --trees-per-root, --json, --dot, errors.
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

# spec, trees per root (- for the exact k), expected exact allgather algbw
while read -r spec k want; do
    flags=()
    [ "$k" != - ] && flags=(--trees-per-root "$k")
    out=$("$weft" plan "$spec" --coll allgather --algo optimal "${flags[@]}" -o "$tmp/p.plan" 2>&1)
    check "$spec k=$k: limit $want" grep -q "^limit .*($want)\$" <<<"$out"
    check "$spec k=$k: reached" grep -q "^reached .*($want)" <<<"$out"
    check "$spec k=$k: verifies on the fabric" "$weft" verify "$tmp/p.plan" --topo "$spec" >/dev/null
done <<'LIST'
a100:1 - 2400/7
a100:2 - 1040/3
a100:2 1 2400/7
mi250:1 - 2400/7
a100:4 - 800/3
mi250:2 - 5312/15
mi250:2 1 320
LIST

out=$("$weft" plan a100:2 --coll allgather --algo optimal)
check "optimum line" grep -q "^optimum      algbw 346.667 GB/s (1040/3), the exact bound" <<<"$out"
check "k and U" grep -q "allgather: k = 13 per rank, U = 3/5" <<<"$out"
check "best baseline" grep -q "^vs best      algbw 342.857 GB/s (2400/7); optimal is 1.01x vs hier$" <<<"$out"
check "nccl baseline" grep -q "^vs nccl      algbw 213.333 GB/s (640/3); optimal is 1.62x vs nccl (ring, Simple, rings:16)$" <<<"$out"
out=$("$weft" plan a100:2 --coll allgather --algo optimal --trees-per-root 1)
check "forced k below the bound" grep -q "below the bound (trees per root forced)" <<<"$out"
out=$("$weft" plan a100:2 --coll allreduce --algo optimal)
check "allreduce reaches its bound" grep -q "^limit .*(520/3)" <<<"$out"
check "allreduce two phases" grep -q "reducescatter: k = 13" <<<"$out"
check "allreduce vs nccl" grep -q "^vs nccl      algbw 106.667 GB/s (320/3); optimal is 1.62x vs nccl (ring, Simple, rings:16)$" <<<"$out"

json=$("$weft" plan a100:2 --coll reducescatter --algo optimal --json)
check "json algbw_exact" grep -q '"algbw_exact": "1040/3"' <<<"$json"
check "json bound_exact" grep -q '"bound_exact": "1040/3"' <<<"$json"
check "json k" grep -q '"k": 13' <<<"$json"
if command -v python3 >/dev/null; then
    check "json parses" python3 -m json.tool <<<"$json" >/dev/null
fi

dot=$("$weft" plan a100:1 --coll allgather --algo optimal --dot --root 3)
check "dot header" grep -q 'label="allgather trees of rank 3 (k = 1)"' <<<"$dot"
check "dot root filled" grep -q '"b0.gpu3" \[shape=ellipse,style=filled,fillcolor=yellow\]' <<<"$dot"
check "dot tree edges" grep -q 'color=red,penwidth=2' <<<"$dot"

cat >"$tmp/unbal.topo" <<'TOPO'
node a compute
node b compute
node s switch
link a s 10GB/s
link b s 10GB/s
link s a 10GB/s
link s b 5GB/s
link b a 5GB/s
TOPO
err=$("$weft" plan "$tmp/unbal.topo" --coll allgather --algo optimal 2>&1)
check "unbalanced switch exit 1" test $? -eq 1
check "unbalanced switch named" grep -q "optimal: switch 's' forwards more bandwidth one way than the other" <<<"$err"
err=$("$weft" plan ring:4 --coll broadcast --algo optimal 2>&1)
check "broadcast exit 1" test $? -eq 1
check "broadcast message" grep -q "no optimal schedule for broadcast" <<<"$err"
err=$("$weft" plan ring:4 --coll allgather --algo optimal --trees-per-root 0 2>&1)
check "bad K exit 2" test $? -eq 2
err=$("$weft" plan ring:4 --coll allgather --trees-per-root 2 2>&1)
check "K without optimal exit 2" test $? -eq 2

echo "optimal.sh: $pass passed, $fail failed"
test "$fail" -eq 0
