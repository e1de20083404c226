#!/usr/bin/env bash
# The all-to-all schedules (bruck, hier, flash) from the command line:
# plans that verify, exact limits in plan --compare against the exact
# bound, sim --compare ranking them, and the error for a fabric without
# boxes.
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

for spec in switch:8 a100:2 h100:2 mi250:2 dgx1 clos; do
    for algo in bruck hier flash; do
        case $algo/$spec in
        hier/switch:8 | flash/switch:8 | hier/dgx1 | flash/dgx1) continue ;;
        esac
        "$weft" plan "$spec" --coll alltoall --algo "$algo" -o "$tmp/p.plan" >/dev/null
        check "$algo on $spec verifies" "$weft" verify "$tmp/p.plan" --topo "$spec"
    done
done >/dev/null

# MSCCL XML export of each, read back by content, verifies.
for algo in bruck hier flash; do
    "$weft" plan a100:2 --coll alltoall --algo "$algo" -o "$tmp/$algo.xml" >/dev/null
    check "$algo exports to MSCCL XML" grep -q "<algo " "$tmp/$algo.xml"
    check "$algo MSCCL XML verifies" "$weft" verify "$tmp/$algo.xml" --topo a100:2
done >/dev/null

# a100:2: flash and hier send each rank's S/2 for the other box over its own
# 25 GB/s NIC: 50 GB/s, as direct; bruck on a100:2 is 100/7.
cmp=$("$weft" plan a100:2 --coll alltoall --compare)
check "compare lists flash" grep -q "^  flash .* 50\.000 .* 50 .* 2 " <<<"$cmp"
check "compare lists hier" grep -q "^  hier .* 50\.000 .* 50 .* 2 " <<<"$cmp"
check "compare lists bruck" grep -q "^  bruck .* 14\.286 .* 100/7 .* 4 " <<<"$cmp"
check "compare ranks against the bound" grep -q "^bound: algbw 50.000 GB/s (50, weft bound: maximum concurrent flow); the best limit is 100.0% of it$" <<<"$cmp"
json=$("$weft" plan a100:2 --coll alltoall --compare --json)
check "compare json bound" grep -q '"algbw_exact": "50",' <<<"$(grep -A3 '"bound"' <<<"$json")"
check "compare json flash" grep -q '"algo": "flash"' <<<"$json"
if command -v python3 >/dev/null; then
    check "compare json parses" python3 -m json.tool <<<"$json" >/dev/null
fi

# Bruck on 8 ranks behind a switch: 3 steps of half a rank's data: 200/3.
out=$("$weft" plan switch:8 --coll alltoall --algo bruck)
check "bruck limit on switch:8" grep -q "algbw <= 66.667 GB/s (200/3)" <<<"$out"

sim=$("$weft" sim a100:2 --coll alltoall --compare --size 1M)
for algo in direct pairwise bruck hier flash optimal; do
    check "sim compare ranks $algo" grep -qE "^ +[0-9]+ +$algo " <<<"$sim"
done
check "sim compare has the bound" grep -qE "^ +bound +20\.972 +50\.000 .*\(exact: algbw 50 GB/s\)" <<<"$sim"

# A skewed MoE dispatch (zipf 1.2: rank 0's experts are hot). Every
# schedule builds an alltoallv plan that verifies; flash balances each
# pair of boxes over the 8 NICs and beats direct and hier by 3x in limit.
"$weft" traffic moe --ranks 16 --experts 32 --topk 2 --tokens 256 --hidden-bytes 4096 \
    --skew zipf:1.2 --seed 1 -o "$tmp/moe.txt"
for algo in direct pairwise bruck hier flash; do
    "$weft" plan a100:2 --coll alltoall --algo "$algo" --traffic "$tmp/moe.txt" -o "$tmp/v.plan" >/dev/null
    check "$algo with a traffic matrix verifies" "$weft" verify "$tmp/v.plan" --topo a100:2
done >/dev/null
cmp=$("$weft" plan a100:2 --coll alltoall --compare --traffic "$tmp/moe.txt")
check "skewed compare: flash" grep -q "^  flash .* 28\.381 .* 12800/451 " <<<"$cmp"
check "skewed compare: hier" grep -q "^  hier .* 7\.386 .* 12800/1733 " <<<"$cmp"
check "skewed compare: direct" grep -q "^  direct .* 9\.370 .* 102400/10929 " <<<"$cmp"
check "skewed compare: flash is best" grep -q "^best limit: flash, algbw 28.381 GB/s" <<<"$cmp"
check "skewed compare: the bound" grep -q "^bound: algbw 28.772 GB/s (102400/3559, weft bound: maximum concurrent flow); the best limit is 98.6% of it$" <<<"$cmp"

sim=$("$weft" sim a100:2 --coll alltoall --compare --traffic "$tmp/moe.txt")
check "sim compare traffic: flash next" grep -qE "^ +2 +flash +125\.260 +16\.742 +15\.696 +58\.2% " <<<"$sim"
check "sim compare traffic: the bound" grep -qE "^ +bound +72\.888 +28\.772 .*\(exact: algbw 102400/3559 GB/s\)" <<<"$sim"
check "sim compare traffic: size is total/N" grep -q "size 2097152 (2M)" <<<"$sim"
check "sim compare traffic: bruck simulated" grep -qE "^ +7 +bruck +613\.343 " <<<"$sim"
# flash:auto simulates flash:1, 2, 4 and 8 and keeps the fastest: here one
# box pair's single round, so whole blocks (C=1) already are.
check "sim compare traffic: flash:auto" grep -qE "^ +3 +flash:auto \(C=1\) +125\.260 " <<<"$sim"
check "sim compare traffic: nccl skipped" grep -qE "^ +nccl +nccl has no alltoallv plan" <<<"$sim"
check "sim compare traffic: optimal simulated" grep -qE "^ +1 +optimal +122\.075 +17\.179 " <<<"$sim"

err=$("$weft" plan switch:8 --coll alltoall --algo flash 2>&1 >/dev/null)
rc=$?
check "flash without boxes exits 1" test "$rc" = 1
check "flash without boxes says why" grep -q "^weft: flash all-to-all needs boxes: at least two hosts (host=) of equal size with more than one rank each; this fabric has 8 host groups of one rank (no boxes)$" <<<"$err"
err=$("$weft" plan a100:2 --coll allreduce --algo flash 2>&1 >/dev/null)
check "flash builds alltoall only" grep -q "^weft: algorithm 'flash' does not build allreduce (it builds: alltoall)$" <<<"$err"

# On 32 ranks of 4 boxes, a zipf matrix gives pairs many small rounds:
# cutting blocks into 8 chunks (flash:auto picks C=8) is faster than
# whole blocks (10 %, each protocol simulated and the fastest kept).
"$weft" traffic moe --ranks 32 --experts 64 --topk 8 --tokens 2048 --hidden-bytes 14K \
    --skew zipf:1.0 --seed 1 -o "$tmp/moe32.txt" >/dev/null
sim=$("$weft" sim h100:4 --coll alltoall --compare --traffic "$tmp/moe32.txt")
check "flash:auto picks C=8" grep -qE "^ +2 +flash:auto \(C=8\) +9321\.596 " <<<"$sim"
check "flash whole blocks" grep -qE "^ +3 +flash +10282\.929 " <<<"$sim"

# flash:K cuts every block into K chunks that may span rounds: an alltoallv
# plan of K chunks per block that verifies, and flash:1 is flash.
out=$("$weft" plan a100:2 --coll alltoall --algo flash:4 --traffic "$tmp/moe.txt" -o "$tmp/f4.plan")
check "flash:4: 4 chunks per block" grep -q "16 x 16 blocks of the traffic matrix, 4 chunks each" <<<"$out"
check "flash:4 verifies" "$weft" verify "$tmp/f4.plan" --topo a100:2
"$weft" plan a100:2 --coll alltoall --algo flash:1 --traffic "$tmp/moe.txt" -o "$tmp/f1.plan" >/dev/null
"$weft" plan a100:2 --coll alltoall --algo flash --traffic "$tmp/moe.txt" -o "$tmp/f.plan" >/dev/null
check "flash:1 is flash" cmp -s <(grep -v '^# ' "$tmp/f1.plan" | sed 's/flash:1/flash/') <(grep -v '^# ' "$tmp/f.plan")
err=$("$weft" plan a100:2 --coll alltoall --algo flash:auto 2>&1 >/dev/null)
rc=$?
check "flash:auto exits 1" test "$rc" = 1
check "flash:auto says why" grep -q "^weft: flash:auto: flash takes the chunks per block, flash:1 to flash:64 (none is chosen automatically)$" <<<"$err"
"$weft" plan a100:2 --coll alltoall --algo flash:65 >/dev/null 2>&1
check "flash:65 is a usage error" test "$?" = 2

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
