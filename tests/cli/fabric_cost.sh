# Cost and power of fabrics through the weft command (issue 16): weft topo
# cost counts clos:hosts=2,gpus=2,nics=2,leafports=2 by hand (4 NICs, 12
# switch ports, 8 transceivers, 4 DACs, 4 fibers, 4 NVLinks), prices it
# exactly with the sourced defaults (a key with no source still prints '-')
# and under a cost file, an override moves the total by exactly
# count x difference, a bad cost line exits 1 naming file:line:col, and
# weft sim --compare-fabrics ranks fabrics of the same number of ranks by
# time (mismatched ranks: exit 1 with both counts).
# Run by CTest as: bash fabric_cost.sh WEFT_BIN SOURCE_DIR SHARED_FIXTURES
WEFT=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
SRC=$(cd "$2" && pwd)
. "$SRC/tests/cli/lib/check.sh"

TMP=$(mktemp -d)
trap 'rm -rf "$TMP" "$CHECK_OUT_" "$CHECK_ERR_"' EXIT
cd "$TMP" || exit 1

CLOS=clos:hosts=2,gpus=2,nics=2,leafports=2

# ---- weft topo cost: the sourced defaults (docs/cost.md) ------------------
# NIC 400G 1499 $ / 24.9 W, switch port 400G 1090 $ / 940/128 W, transceiver
# 400G 659 $ / 9 W: 4*1499 = 5996, 12*1090 = 13080, 8*659 = 5272 $;
# 4*24.9 + 12*235/32 + 8*9 = 10389/40 W. DACs and fibers have no public
# price, so the $ total is only bounded below by the priced parts' sum
# (5996 + 13080 + 5272 = 24348, a rank's 6087) and names them.
run topo cost $CLOS
expect_rc 0
expect_out "network of $CLOS (4 ranks)
  part         rate  count  \$ each  W each        \$       W
  nic          400g      4    1499   24.90     5996   99.60
  switch_port  400g     12    1090    7.34    13080   88.12
  transceiver  400g      8     659       9     5272      72
  dac          400g      4       -       0        -       0
  fiber        -         4       -       0        -       0
  gpu_link     -         4       0       0        0       0
  total                                     >=24348  259.73
  per rank                                   >=6087   64.93
price (\$) unknown, at least the priced parts' sum: no public figure for dac.400g.usd, fiber.usd (give them in --cost FILE)"
run topo cost $CLOS --json
expect_rc 0
expect_out_has '"w_exact": "10389/40",'
expect_out_has '"w_per_rank_exact": "10389/160",'
expect_out_has '"missing_usd": "dac.400g.usd, fiber.usd",'
expect_out_has '"usd": null,'
expect_out_has '"usd_at_least": 24348,'
expect_out_has '"missing_w": ""'
# Giving only the two missing prices completes the total on the defaults:
# 5996 + 13080 + 5272 + 4*100 + 4*50 = 24948.
printf 'dac.400g.usd = 100\nfiber.usd = 50\n' > two.cost
run topo cost $CLOS --cost two.cost --json
expect_rc 0
expect_out_has '"usd_exact": "24948",'
expect_out_has '"missing_usd": "",'
# An OCS port has a price (520 $) but no public power figure: W stays '-'.
run topo cost mixnet:hosts=2,gpus=4
expect_rc 0
expect_out_has "  ocs_port     -         4     520       -       2080         -"
expect_out_has "  total                                       >=21068  >=264.57"
expect_out_has "power (W) unknown, at least the priced parts' sum: no public figure for ocs_port.w (give them in --cost FILE)"

# ---- a cost file: exact totals, and an override's exact difference --------
cat > q.cost <<'COST'
# quotes (test figures, not list prices)
nic.400g.usd = 1000
nic.400g.w = 20
switch_port.400g.usd = 500
switch_port.400g.w = 10.5
transceiver.400g.usd = 300
dac.400g.usd = 100
fiber.usd = 50
COST
run topo cost $CLOS --cost q.cost --json
expect_rc 0
expect_out_has '"usd_exact": "13000",'
expect_out_has '"w_exact": "278",'
expect_out_has '"usd_per_rank_exact": "3250",'
expect_out_has '"w_per_rank_exact": "139/2",'
expect_out_has '"missing_usd": "",'
sed 's/^nic.400g.usd = 1000$/nic.400g.usd = 1250/' q.cost > q2.cost
run topo cost $CLOS --cost q2.cost --json
expect_out_has '"usd_exact": "14000",' # 4 NICs x 250 more
expect_out_has '"w_exact": "278",'

# ---- bad cost files: exit 1, file:line:col and the reason ----------------
printf 'nic.400g.usd = 1000\n\n  nic.400g.w 20\n' > bad.cost
run topo cost $CLOS --cost bad.cost
expect_rc 1
expect_out ""
expect_err "weft: bad.cost:3:3: expected KEY = VALUE, got 'nic.400g.w 20'"
printf 'ocs_port.usd = 12O\n' > bad2.cost
run topo cost $CLOS --cost bad2.cost
expect_rc 1
expect_err "weft: bad2.cost:1:16: 'ocs_port.usd' needs a non-negative number (such as 1250 or 8.5), not '12O'"
run topo cost $CLOS --cost bad.cost -o out.txt
expect_rc 1
check "no half-written output" test ! -e out.txt

# ---- weft sim --compare-fabrics --------------------------------------------
run sim --compare-fabrics torus:2x4,ring:4 --coll allreduce --size 1M
expect_rc 1
expect_out ""
expect_err "weft: --compare-fabrics needs fabrics of the same number of ranks: torus:2x4 has 8, ring:4 has 4"

run sim --compare-fabrics clos:hosts=2,gpus=4,nics=4,leafports=2,mixnet:hosts=2,gpus=4,torus:2x4 \
    --coll alltoall --size 16M --cost q.cost --json
expect_rc 0
expect_out_has '"ranks": 8,'
expect_out_has '"spec": "mixnet:hosts=2,gpus=4",'
# mixnet: the OCS ports' 520 $ default completes its $ (8*1000 + 4*500 +
# 4*100 + 4*520 + 4*300 + 4*50 = 13880); their power has no default.
expect_out_has '"usd_exact": "13880",'
expect_out_has '"missing_w": "ocs_port.w"'
# torus:2x4 is 800G: no public 800G NIC figure, so both are unknown.
expect_out_has '"missing_usd": "nic.800g.usd",'
expect_out_has '"missing_w": "nic.800g.w"'
# clos: 8 NICs, 8 leaf ports + 8 DACs; 4 leaves (one per rail) x 2 spines
# = 8 leaf-spine cables (16 ports, 16 transceivers, 8 fibers):
# 8*1000 + 24*500 + 16*300 + 8*100 + 8*50 = 26000.
expect_out_has '"usd_exact": "26000",'
# Sorted by time: the times in order are non-decreasing.
check "sorted by time" awk -F': ' '/"time_s"/ { t = $2 + 0; if (n++ && t < last) bad = 1; last = t } END { exit bad || n != 3 }' <<<"$OUT"

# Sixteen ranks: rail (h100:2: 16 NICs, 16 rail ports, 16 DACs = 25600 $,
# 16*20 + 16*10.5 = 488 W), fat-tree, MixNet-like (ocs_port given here) and
# torus, all simulated.
cp q.cost q3.cost
printf 'ocs_port.usd = 200\nocs_port.w = 0.5\n' >> q3.cost
run sim --compare-fabrics h100:2,clos:hosts=2,leafports=2,mixnet:hosts=2,torus:4x4,bw=50 \
    --coll alltoall --size 16M --cost q3.cost
expect_rc 0
expect_out_has "alltoall of 16777216 bytes on 16 ranks, best plan per fabric"
expect_out_has "25600   488    1600   30.50"
# mixnet:hosts=2: 16 NICs, 8 rail ports + 8 DACs, 8 OCS ports + 8
# transceivers + 8 fibers: 16000 + 4000 + 800 + 1600 + 2400 + 400 = 25200.
expect_out_has "25200   480    1575      30"
check "four fabrics ranked" test "$(grep -c '^[1-4]  ' <<<"$OUT")" = 4
# An all-to-all on the OCS fabric runs its circuit schedule only (a plan
# without circuits cannot cross the OCS), here of the uniform matrix of
# --size: 4 configurations.
expect_out_has "mixnet:hosts=2            optimal (circuits: 4 configs) (gpu)"
check "no OCS relaxed in an all-to-all" test "$(grep -c ' \* ' <<<"$OUT")" = 0
# An allreduce has no circuit schedule: the row says its plan crossed the
# OCS as a switch.
run sim --compare-fabrics h100:2,mixnet:hosts=2 --coll allreduce --size 1M --json
expect_rc 0
check "mixnet's allreduce crossed the OCS as a switch" \
  awk '/"spec": "mixnet:hosts=2"/ { m = 1 } m && /"ocs_as_switch": true/ { ok = 1 } END { exit !ok }' <<<"$OUT"
check "h100:2 has no OCS" awk '/"spec": "h100:2"/ { m = 1 } m && /"ocs_as_switch"/ { exit !/false/ }' <<<"$OUT"
run sim --compare-fabrics h100:2,mixnet:hosts=2 --coll allreduce --size 1M
expect_rc 0
expect_out_has "* allreduce has no circuit schedule: the plan crossed each OCS as a packet switch, as weft bound relaxes them (optimistic; docs/ocs.md)"

# A file is a fabric of its own; a comma inside a preset's parameters is not.
run topo show full:8,bw=50 -o f8.topo
run sim --compare-fabrics f8.topo,torus:2x4,bw=50 --coll allgather --size 1M --json
expect_rc 0
expect_out_has '"spec": "f8.topo",'
expect_out_has '"spec": "torus:2x4,bw=50",'
run sim --compare-fabrics ,torus:2x4 --coll allreduce --size 1M
expect_rc 2
expect_err_has "weft: --compare-fabrics ',torus:2x4': expected 1 to 64 fabric specs separated by commas"

run sim --compare-fabrics torus:2x4 torus:2x2 --coll allreduce --size 1M
expect_rc 2
expect_err_has "weft: --compare-fabrics names the fabrics; drop SPEC 'torus:2x2'"
run sim --compare-fabrics torus:2x4,full:8 --coll allreduce --size 1M:4M:x2
expect_rc 2
expect_err_has "weft: --compare-fabrics compares at one size, not the sweep '1M:4M:x2'"
run sim ring:4 --coll allreduce --algo ring --size 1M --cost q.cost
expect_rc 2
expect_err_has "weft: --cost prices the fabrics of --compare-fabrics"
run sim --coll allreduce --size 1M
expect_rc 2
expect_err_has "weft: missing SPEC"

finish
