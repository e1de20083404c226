# Direct-connect fabrics: the presets and operators on the command line,
# --algo bfb in weft plan and weft sim, and weft topo search (checked on
# N = 16, d = 2, where every figure can be followed by hand).
# Run by CTest as: bash dc.sh WEFT_BIN SOURCE_DIR SHARED_FIXTURES
WEFT=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
SRC=$(cd "$2" && pwd)
. "$SRC/tests/cli/lib/check.sh"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"; rm -f "$CHECK_OUT_" "$CHECK_ERR_"' EXIT

# Presets and operators.
run topo stats 'product(ring:3;line(full:3))' --json
expect_rc 0
expect_out_has '"ranks": 18,'
expect_out_has '"links": 54,' # 3 * 6 + 12 * 3
run topo show 'line(switch:3)'
expect_rc 1
expect_err "weft: line(switch:3): operand 'switch:3' has a switch node 'sw0' (line, expand and product take fabrics of ranks joined directly)"
run topo show genkautz:8,1
expect_rc 1
expect_err "weft: genkautz:8,1: the generated graph is not strongly connected (some rank cannot reach another)"
run topo stats circulant:6,4
expect_rc 1
expect_err "weft: circulant:6,4: j1 must be <= 3"
run topo list --names
expect_out_has "genkautz
circulant
debruijn
bipartite"

# BFB: genkautz:8,2 allgather takes its diameter, 3 steps, at 800/7 GB/s,
# which is weft bound (the two ranks with a dropped self-loop have one
# link in and out: 7 shards over 100 GB/s each).
run plan genkautz:8,2 --coll allgather --algo bfb --json -o "$TMP/gk.plan"
expect_rc 0
expect_out_has '"steps": 3,'
expect_out_has '"algbw_exact": "800/7",'
expect_out_has '"algbw_stepwise_exact": "800/7",'
run verify "$TMP/gk.plan" --topo genkautz:8,2
expect_rc 0
run bound genkautz:8,2 --coll allgather --json
expect_out_has '"algbw_exact": "800/7",'
# K(2,2) = line(full:3): 1 + 2 shard times per byte of a shard, 6 * 100 / 3.
run plan 'line(full:3)' --coll allreduce --algo bfb
expect_rc 0
expect_out_has "bfb          4 steps (T_L), 1 chunks per shard; steps not overlapped: algbw 100.000 GB/s (100)"
run plan switch:4 --coll allgather --algo bfb
expect_rc 1
expect_err "weft: bfb needs ranks joined directly, but 'sw0' is a switch (BFB schedules direct-connect fabrics: no switches)"
run plan full:4 --coll broadcast --algo bfb
expect_rc 1
expect_err "weft: algorithm 'bfb' does not build broadcast (it builds: allgather, reducescatter, allreduce)"
run sim genkautz:8,2 --algo bfb --coll allgather --size 1M --json
expect_rc 0
expect_out_has '"ranks": 8,'

# Search. Degree 2 on 16 ranks: the Pareto frontier holds the line graph
# of the line graph of K(2,2) and of the 4-circulant, which tie (diameter
# 4: T_L 8, T_B 9/8), the line graph
# of the bidirectional 8-ring (10 steps, T_B 1) and the 4 x 4 torus of
# directed rings (12 steps, T_B 2 * 15/32, the bound's). At 1 MiB with
# 1 us a step: 8 us + 9/8 * 1048576 / 100e9 s = 19.80 us.
run topo search --ranks 16 --degree 2 --coll allreduce --size 1M -o "$TMP/best.topo"
expect_rc 0
expect_out "allreduce on 16 ranks of degree 2, links 100 GB/s, alpha 1.00 us: 10 fabrics scored (14 generated), 4 on the Pareto frontier
Pareto frontier (T_L steps; S bytes take T_L * alpha + T_B * S / bw):
  fabric                                T_L    T_B  algbw GB/s  time(1M)
  line(line(bipartite:4,bw=100))          8    9/8      88.889  19.80 us
  line(line(circulant:4,1,bw=100))        8    9/8      88.889  19.80 us
  line(circulant:8,1,bw=100)             10      1     100.000  20.49 us
  product(ring:4,bw=100;ring:4,bw=100)   12  15/16     106.667  21.83 us
best for 1M: line(line(bipartite:4,bw=100)), 19.80 us (T_L 8, T_B 9/8)
ring:        2 parallel rings, 39.83 us (T_L 30, T_B 15/16)
bound:       weft bound of the best fabric: algbw 106.667 GB/s (320/3), 9.83 us of bandwidth time at least"
run topo stats "$TMP/best.topo" --json
expect_out_has '"ranks": 16,'
expect_out_has '"links": 32,'
# Large messages pick the torus: 12 us + 15/16 * 1 GiB / 100 GB/s.
run topo search --ranks 16 --degree 2 --coll allreduce --size 1G --json
expect_rc 0
expect_out_has '"best": "product(ring:4,bw=100;ring:4,bw=100)",'
expect_out_has '"tb_exact": "15/16",'
# Ties stay: at 64 ranks of degree 4, debruijn:4,3 and genkautz:64,4 are
# both at T_L 6, T_B 21/32 (as are the 64-circulant and a product at 14
# steps, T_B 63/128); every fabric at a frontier point is shown.
run topo search --ranks 64 --degree 4 --coll allreduce --size 1M
expect_rc 0
expect_out "allreduce on 64 ranks of degree 4, links 100 GB/s, alpha 1.00 us: 46 fabrics scored (48 generated), 5 on the Pareto frontier
Pareto frontier (T_L steps; S bytes take T_L * alpha + T_B * S / bw):
  fabric                                          T_L     T_B  algbw GB/s  time(1M)
  genkautz:64,4,bw=100                              6   21/32     152.381  12.88 us
  debruijn:4,3,bw=100                               6   21/32     152.381  12.88 us
  line(circulant:16,1,4,bw=100)                     8     1/2     200.000  13.24 us
  circulant:64,1,8,bw=100                          14  63/128     203.175  19.16 us
  product(ring:4,bw=100;circulant:16,1,8,bw=100)   14  63/128     203.175  19.16 us
best for 1M: genkautz:64,4,bw=100, 12.88 us (T_L 6, T_B 21/32)
ring:        4 parallel rings, 131.16 us (T_L 126, T_B 63/128)
bound:       weft bound of the best fabric: algbw 152.381 GB/s (3200/21), 6.88 us of bandwidth time at least"
run topo search --ranks 16 --degree 16 --coll allreduce --size 1M
expect_rc 1
expect_err "weft: degree 16 cannot be reached with 16 ranks (1 <= d < N)"
run topo search --ranks 16 --degree 2 --coll broadcast --size 1M
expect_rc 1
expect_err "weft: the search scores BFB schedules: allgather, reducescatter or allreduce, not broadcast"
run topo search --ranks 16 --degree 2 --coll allreduce
expect_rc 2
expect_err_has "weft: missing --size"
run topo search --ranks x --degree 2 --coll allreduce --size 1M
expect_rc 2
expect_err_has "weft: bad --ranks 'x': expected an integer"
finish
