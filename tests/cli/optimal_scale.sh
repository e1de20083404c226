#!/usr/bin/env bash
# weft plan --algo optimal at scale: the path that built the plan is
# reported (human and JSON), the rail construction's plans verify against
# the fabric and reach the bound exactly, the fallback says why.
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

# spec, collective, expected exact algbw (the bound), expected method line
while read -r spec coll want method; do
    out=$("$weft" plan "$spec" --coll "$coll" --algo optimal -o "$tmp/p.plan" 2>&1)
    check "$spec $coll: limit $want" grep -q "^limit .*($want)\$" <<<"$out"
    check "$spec $coll: reached the bound" grep -q "^reached .*($want), equal to the bound" <<<"$out"
    check "$spec $coll: method $method" grep -q "^method  *$method" <<<"$out"
    check "$spec $coll: verifies on the fabric" "$weft" verify "$tmp/p.plan" --topo "$spec" >/dev/null
done <<'LIST'
h100:8 allgather 3200/7 rail: 8 boxes of 8 ranks; a ring along each rail
h100:8 reducescatter 3200/7 rail: 8 boxes of 8 ranks
h100:8 allreduce 1600/7 rail: 8 boxes of 8 ranks
a100:4 allgather 800/3 rail: 4 boxes of 8 ranks
mi250:4 allreduce 512/3 rail: 4 boxes of 16 ranks; a ring along each rail between boxes, the box's own tree packing inside each box
a100:2 allgather 1040/3 packing: edge splitting and tree packing (rail: the rail-hierarchical allgather (2 boxes of 8 ranks) reaches 2400/7 GB/s, below the bound 1040/3)
LIST

json=$("$weft" plan h100:16 --coll allreduce --algo optimal --json)
check "json method rail" grep -q '"method": "rail"' <<<"$json"
check "json note" grep -q '"structure_note": "rail: 16 boxes of 8 ranks; a ring along each rail between boxes, direct sends inside each box"' <<<"$json"
check "json exact" grep -q '"algbw_exact": "640/3"' <<<"$json"
json=$("$weft" plan a100:2 --coll allgather --algo optimal --json)
check "json method packing" grep -q '"method": "packing"' <<<"$json"

# --dot draws the rail trees rank to rank (their ops carry no route).
dot=$("$weft" plan h100:5 --coll allgather --algo optimal --dot --root 0)
check "dot rail chain" grep -q '"b0.gpu0" -> "b1.gpu0" \[color=red, penwidth=2, style=dashed, label="x1"\]' <<<"$dot"
check "dot host frames" test "$(grep -c '^  subgraph cluster_host' <<<"$dot")" = 5
check "dot box fan-out" grep -q '"b4.gpu0" -> "b4.gpu7" \[color=red' <<<"$dot"

echo "optimal_scale.sh: $pass passed, $fail failed"
test "$fail" -eq 0
