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
check "dot root filled" grep -q '"b0.gpu3" \[shape=box, style="rounded,filled,bold", fillcolor=yellow, penwidth=2\]' <<<"$dot"
check "dot tree edges" grep -q '"b0.gpu3" -> "b0.gpu4" \[color=red, penwidth=2, style=dashed, label="x1"\]' <<<"$dot"
# Hosts are frames; the legend names the root, each tree group and the styles.
check "dot host cluster" grep -q '^  subgraph cluster_host0 {$' <<<"$dot"
check "dot legend root" grep -q '<td align="left">root: rank 3 (b0.gpu3)</td>' <<<"$dot"
check "dot legend group" grep -q '<tr><td bgcolor="red" width="24"> </td><td align="left">tree group 1: 7 edges, 1 identical tree (edges labelled x1)</td></tr>' <<<"$dot"
check "dot legend dashed" grep -q "rank to rank, over the fabric's shortest paths" <<<"$dot"
dot2=$("$weft" plan a100:2 --coll allreduce --algo optimal --dot --root 0)
check "dot a100:2: two host frames" test "$(grep -c '^  subgraph cluster_host' <<<"$dot2")" = 2
check "dot a100:2: legend of two groups" grep -q 'tree group 2: 15 edges, 12 identical trees (edges labelled x12)' <<<"$dot2"
if command -v dot >/dev/null; then
    check "graphviz lays out the optimal picture" sh -c 'dot -Tsvg >/dev/null' <<<"$dot2"
fi

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

# The fewest trees per root that reach the bound (issue 18): on TE-CCL's
# 2-chassis models one tree per GPU is optimal, where the exact k was 6
# (NDv2, 660 ops) and 10 (DGX-2, 2015 ops).
src=$2
for m in "ndv2-2 25 240" "dgx2-2 4000/31 992"; do
    read -r f want ops <<<"$m"
    out=$("$weft" plan "$src/tests/fixtures/teccl-$f.topo" --coll allgather --algo optimal --json)
    check "teccl-$f: algbw $want" grep -q "^  \"algbw_exact\": \"$want\"," <<<"$out"
    check "teccl-$f: $ops ops" grep -q "^  \"ops\": $ops," <<<"$out"
    check "teccl-$f: k = 1" grep -q '^      "k": 1,' <<<"$out"
done

# An optimal allreduce too long for the executor profile says what works.
err=$("$weft" plan a100:2 --coll allreduce --algo optimal --format msccl -o "$tmp/a.xml" 2>&1)
check "a100:2 optimal msccl export exit 1" test $? -eq 1
check "a100:2 export hint" test "$err" = "weft: rank 0 threadblock for sends to rank 1 and receives from rank 4 on channel 0 has 73 steps; the executor profile allows 64 per threadblock (MSCCL_MAX_NUM_STEPS)
weft: the optimum needs 13 trees per rank here; --trees-per-root 1 exports (480 ops, algbw 171.429 GB/s (1200/7), 98.9% of the bound)"
"$weft" plan a100:2 --coll allreduce --algo optimal --trees-per-root 1 --format msccl -o "$tmp/a.xml" >/dev/null
check "the hinted command exports" test $? -eq 0
err=$("$weft" plan "$src/tests/fixtures/teccl-dgx2-2.topo" --coll allreduce --algo optimal \
    --format msccl -o "$tmp/a.xml" 2>&1)
check "dgx2-2 export hint" grep -qx "weft: one tree per rank is already too long for the executor profile; try --msccl-profile msccl (256 steps per threadblock) or a classic algorithm (--algo ring)" <<<"$err"

echo "optimal.sh: $pass passed, $fail failed"
test "$fail" -eq 0
