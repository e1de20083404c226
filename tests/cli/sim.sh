# weft sim: the ring closed form through the command (table, JSON, CSV),
# sweeps, and every error exit.
# Run by CTest as: bash sim.sh WEFT_BIN SOURCE_DIR SHARED_FIXTURES
WEFT=$1
SRC=$2
. "$SRC/tests/cli/lib/check.sh"

# ring:4 at 100 GB/s, no latency: allreduce of 1 MiB takes 6 steps of
# 256 KiB at 100 GB/s = 15.72864 us; algbw 1048576 / 15.72864e-6 / 1e9.
# CSV: the figures, then the five busiest links (one class: all 4 links
# alike, each busy the whole time).
run sim ring:4 --model fluid --algo ring --coll allreduce --size 1M --csv
expect_rc 0
expect_out "size,time_s,algbw_gbps,busbw_gbps,link1,util1,alike1,link2,util2,alike2,link3,util3,alike3,link4,util4,alike4,link5,util5,alike5,model,proto,slices
1048576,1.572864e-05,66.666666666666657,99.999999999999986,rank0 -> rank1,1,3,,,,,,,,,,,,,fluid,,1"

run sim switch:8,lat=1us --model fluid --algo ring --coll allreduce --size 1K:1M:x16
expect_rc 0
expect_out "allreduce ring on switch:8,lat=1us: 8 ranks, model fluid, 1 slice per transfer, alpha 0 s
    size  time (us)  algbw (GB/s)  busbw (GB/s)
    1024     28.018         0.037         0.064
   16384     28.287         0.579         1.014
  262144     32.588         8.044        14.078
busiest links at 262144 bytes:
  rank0 -> sw0  14.1%  (and 15 alike)"

# allgather of 4K: 3 steps of 1K at 100 GB/s; every link busy all the time.
run sim ring:4 --model fluid --algo ring --coll allgather --size 4K --json
expect_rc 0
expect_out_has '"time_s": 3.072e-08'
expect_out_has '"util": 1'
expect_out_has '"ranks": 4'
# Exact: neither the periodic quotient nor extrapolation was needed.
expect_out_has '"approximated": false,
  "period": 0,
  "defects": 0,
  "extrapolated": false,'

# Pipelining and alpha are passed down: 4 slices, alpha 1 us on ring:4
# allreduce of 1M: 6 steps x 256K / 100 GB/s + (6 + 4 - 1) x 1 us.
run sim ring:4 --algo ring --coll allreduce --size 1M --slices 4 --alpha 1us --csv
expect_rc 0
expect_out_has "1048576,2.4728640000000"

run sim ring:4 --model fluid --algo ring --coll allreduce --size 1Q
expect_rc 2
expect_err_has "weft: bad --size '1Q': expected a number of bytes with an optional unit: K, M, G = 2^10, 2^20, 2^30 (as nccl-tests; also KiB, MiB, GiB), KB, MB, GB = 10^3, 10^6, 10^9; e.g. 4096, 64K, 1.5G, 1GiB, or a sweep MIN:MAX:xF such as 1K:1G:x4"
# An unknown algorithm is a usage error listing the valid ones (it was
# exit 1 pointing at --help, where the list is not).
run sim ring:4 --model fluid --algo tree --coll allreduce --size 1M
expect_rc 2
expect_err_has "weft: unknown --algo 'tree': expected ring, biring, rings:K, dbtree, binomial, hd, rabenseifner, rd, bruck, direct, pairwise, hier, flash, flash:K, relay:K, nccl, optimal, bfb, sparse-ag, quant-2shot, sparse-hash, sparse-range or hier-quant (weft plan --list says what each builds)"
# hier-quant: int8 across hosts on 25 Gb/s a host (docs/compression.md,
# "Hierarchical"); --density is for the sparse rows; one host is an error.
run sim a100:2,nicbw=3.125Gbps --coll allreduce --algo hier-quant --compress int8 --size 256M --csv
expect_rc 0
expect_out_has "268435456,0.04496636"
run sim a100:2 --coll allreduce --algo hier-quant --density 0.01 --size 1M
expect_rc 2
expect_err_has "weft: --density is for the sparse rows; hier-quant quantizes (give --compress int8, fp8[:B], qsgd:S or sign)"
run sim a100:1 --coll allreduce --algo hier-quant --size 1M
expect_rc 1
expect_err_has "hier-quant needs at least two hosts (host=) of equal size; this fabric has 1 host group"
# --compute cpu charges the compute ops the plan places (docs/compression.md,
# "Compute in the plans"): int8 on one CPU thread a rank, and the sparse
# all-reduce on the emulated fabric; none is the default; a GPU
# generation charges a quantizer's ops at the roofline model (int8 on
# ampere's 2039 GB/s: 45.094 ms against 44.966 wire only), and refuses the
# sparse rows; only the compressed and sparse rows have compute.
run sim a100:2,nicbw=3.125Gbps --coll allreduce --algo hier-quant --compress int8 --size 256M --compute cpu --csv
expect_rc 0
expect_out_has "268435456,0.11417705"
run sim a100:2,nicbw=3.125Gbps --coll allreduce --algo hier-quant --compress int8 --size 256M --compute none --csv
expect_rc 0
expect_out_has "268435456,0.04496636"
run sim "$SRC/tests/netns/fabric.topo" --coll allreduce --algo sparse-hash --density 0.1 --elem-bytes 4 --size 16M --compute cpu --csv
expect_rc 0
expect_out_has "16777216,0.463019"
# A compressed plan saved with weft plan -o is marked whole (a `whole`
# line, "whole":true in JSON) and simulates with --plan as with --algo:
# one slice a copy in the runtime model (32 slices, 0.021521169 s, before
# the plan carried the mark).
WT=$(mktemp -d)
run plan a100:2 --coll allreduce --algo quant-2shot --compress int8 -o "$WT/q.plan"
expect_rc 0
check "saved plan marked whole" grep -qx whole "$WT/q.plan"
run plan a100:2 --coll allreduce --algo quant-2shot --compress int8 -o "$WT/q.json"
expect_rc 0
check "JSON marked whole" grep -q '"size":1073741824,"whole":true,"ops":' "$WT/q.json"
run sim a100:2 --plan "$WT/q.plan" --size 1G --model runtime --csv
expect_rc 0
expect_out_has "1073741824,0.022193026512527473,"
expect_out_has ",runtime,,1"
run sim a100:2 --coll allreduce --algo quant-2shot --compress int8 --size 1G --model runtime --csv
expect_rc 0
expect_out_has "1073741824,0.022193026512527473,"
run sim a100:2 --plan "$WT/q.plan" --size 1G --model runtime
expect_rc 0
expect_out_has "allreduce plan on a100:2: 16 ranks, model runtime (whole messages, as weft runs compressed and sparse collectives)"
grep -vx whole "$WT/q.plan" >"$WT/unmarked.plan"
run sim a100:2 --plan "$WT/unmarked.plan" --size 1G --model runtime --csv
expect_rc 0
expect_out_has "1073741824,0.021521169039999993,"
expect_out_has ",runtime,,32"
rm -rf "$WT"
run sim a100:2,nicbw=3.125Gbps --coll allreduce --algo hier-quant --compress int8 --size 256M --compute ampere --csv
expect_rc 0
expect_out_has "268435456,0.045093898"
run sim a100:2 --coll allreduce --algo sparse-hash --size 1M --compute hopper
expect_rc 2
expect_err_has "weft: bad --compute: no GPU rate for the topk plans' hash, aggregate and pack kernels is cited in weft (docs/compression.md, \"Compute cost\"); on hopper only the quantizers (int8, fp8, qsgd, sign) have the roofline model"
run sim a100:2 --coll allreduce --algo quant-2shot --compress qsgd:15 --size 1M --compute tpu
expect_rc 2
expect_err_has "weft: bad --compute: unknown processor 'tpu' (cpu, or a GPU: volta, ampere, hopper, blackwell)"
run sim a100:2 --coll allreduce --algo quant-2shot --compress qsgd:15 --size 1M --compute cpu
expect_rc 2
expect_err_has "weft: bad --compute: the compute of qsgd on cpu is not measured"
run sim a100:2 --coll allreduce --algo ring --size 1M --compute cpu
expect_rc 2
expect_err_has "weft: --compute cpu charges the compute ops of a compressed or sparse plan, at the rates of its compressor: it needs --algo quant-2shot, hier-quant, sparse-ag, sparse-hash or sparse-range"
# --compute none (the default) is accepted with any algorithm.
run sim a100:2 --coll allreduce --algo ring --size 1M --compute none
expect_rc 0
run sim ring:4 --model fluid --algo bruck --coll allreduce --size 1M
expect_rc 1
expect_err_has "algorithm 'bruck' does not build allreduce (it builds: allgather, alltoall)"
# A classic algorithm other than ring is built as a plan and simulated.
run sim switch:4 --model fluid --algo rd --coll allreduce --size 1M
expect_rc 0
expect_out_has "allreduce rd on switch:4: 4 ranks"
run sim a100:2 --model fluid --algo hier --coll allreduce --size 1G --json
expect_rc 0
expect_out_has '"algo": "hier"'
run sim ring:4 --model fluid --algo ring --coll allreduce
expect_rc 2
expect_err_has "missing --size"
# --algo ring is weft plan's ring for every collective it builds:
# broadcast is its pipelined chain 0 -> 1 -> 2 -> 3, three hops of 1M at
# 100 GB/s without slices; the link 3 -> 0 stays idle.
run sim ring:4 --model fluid --algo ring --coll broadcast --size 1M --csv
expect_rc 0
expect_out "size,time_s,algbw_gbps,busbw_gbps,link1,util1,alike1,link2,util2,alike2,link3,util3,alike3,link4,util4,alike4,link5,util5,alike5,model,proto,slices
1048576,3.145728e-05,33.333333333333329,33.333333333333329,rank0 -> rank1,0.33333333333333331,0,rank1 -> rank2,0.33333333333333331,0,rank2 -> rank3,0.33333333333333331,0,rank3 -> rank0,0,0,,,,fluid,,1"
run sim ring:4 --model fluid --algo ring --coll alltoall --size 1M
expect_rc 1
expect_err_has "weft: algorithm 'ring' does not build alltoall (it builds: allgather, reducescatter, allreduce, broadcast, reduce)"
run sim nosuch:4 --model fluid --algo ring --coll allreduce --size 1M
expect_rc 1
expect_err_has "no such file or preset 'nosuch:4'"
# A plan file: the same ring as --algo ring, op by op, and its trace.
PLAN=$SRC/tests/fixtures/sim-ring3-allreduce.plan
run sim ring:3 --model fluid --plan "$PLAN" --size 3M --csv
expect_rc 0
expect_out "size,time_s,algbw_gbps,busbw_gbps,link1,util1,alike1,link2,util2,alike2,link3,util3,alike3,link4,util4,alike4,link5,util5,alike5,model,proto,slices
3145728,4.1943039999999997e-05,75,100,rank0 -> rank1,1.0000000000000002,0,rank1 -> rank2,1.0000000000000002,0,rank2 -> rank0,1.0000000000000002,0,,,,,,,fluid,,1"
run sim ring:3 --model fluid --algo ring --coll allreduce --size 3M --csv
expect_out "size,time_s,algbw_gbps,busbw_gbps,link1,util1,alike1,link2,util2,alike2,link3,util3,alike3,link4,util4,alike4,link5,util5,alike5,model,proto,slices
3145728,4.1943039999999997e-05,75,100,rank0 -> rank1,1.0000000000000002,2,,,,,,,,,,,,,fluid,,1"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
run sim ring:3 --plan "$PLAN" --size 3M --slices 2 --trace "$TMP/t.json" --json
expect_rc 0
expect_out_has '"algo": "plan"'
check "trace written" grep -q '{"name":"reduce 0→1 chunk 0","cat":"reduce","ph":"X","pid":1,"tid":0,"ts":0.000000,"dur":5.242880,"args":{"op":0,"kind":"reduce","src":0,"dst":1,"chunk":0,"count":1,"slice":0,"slices":2,"bytes":524288,"src_buf":"in","src_slot":0,"dst_buf":"in","dst_slot":0}}' "$TMP/t.json"
check "trace names links" grep -q '{"name":"thread_name","ph":"M","pid":4,"tid":2,"args":{"name":"rank2 -> rank0"}}' "$TMP/t.json"
check "trace names ranks by size" grep -q '{"name":"process_name","ph":"M","pid":1,"args":{"name":"3M: rank 0"}}' "$TMP/t.json"
run sim ring:4 --model fluid --plan "$PLAN" --size 3M --trace "$TMP/u.json"
expect_rc 1
expect_err_has "weft: the plan has 3 ranks but the topology has 4"
check "no trace on failure" test ! -e "$TMP/u.json"
run sim ring:3 --model fluid --plan "$PLAN" --algo ring --size 1M
expect_rc 2
expect_err_has "weft: --plan excludes --algo, --coll and --compare"
# With --trace the ring is simulated as weft plan's plan, op by op: the
# same time as the symmetric path, and a trace per op.
run sim ring:3 --model fluid --algo ring --coll allreduce --size 3M --trace "$TMP/v.json" --csv
expect_rc 0
expect_out_has "3145728,4.1943039999999997e-05,75,100,"
check "ring trace written" grep -q '{"name":"reduce 2→0 chunk 0","cat":"reduce","ph":"X","pid":3,"tid":0,"ts":10.485760,"dur":10.485760,"args":{"op":5,' "$TMP/v.json"
run sim ring:3 --model fluid --plan "$TMP/none.plan" --size 1M
expect_rc 1
# --compare: every algorithm that builds allgather on switch:4, and the
# optimal plan, sorted by time under the exact bound (ties keep the order
# of weft plan --list); hier needs hosts and is skipped with the reason.
# On a switch every one of them meets the bound.
run sim switch:4 --model fluid --coll allgather --size 1M --compare
expect_rc 0
expect_out "allgather on switch:4 (4 ranks), size 1048576 (1M), model fluid, 1 slice per transfer, alpha 0 s
  #  algorithm                  time (us)  algbw (GB/s)  busbw (GB/s)  of bound  busiest link
     bound                          7.864       133.333       100.000    100.0%  (exact: algbw 400/3 GB/s)
  1  ring                           7.864       133.333       100.000    100.0%  rank0 -> sw0 100.0%
  2  biring                         7.864       133.333       100.000    100.0%  rank0 -> sw0 100.0%
  3  rings:auto (8)                 7.864       133.333       100.000    100.0%  rank0 -> sw0 100.0%
  4  rings:4                        7.864       133.333       100.000    100.0%  rank0 -> sw0 100.0%
  5  hd                             7.864       133.333       100.000    100.0%  rank0 -> sw0 100.0%
  6  rd                             7.864       133.333       100.000    100.0%  rank0 -> sw0 100.0%
  7  bruck                          7.864       133.333       100.000    100.0%  rank0 -> sw0 100.0%
  8  nccl (pat, Simple, bruck)      7.864       133.333       100.000    100.0%  rank0 -> sw0 100.0%
  9  optimal                        7.864       133.333       100.000    100.0%  rank0 -> sw0 100.0%
optimal is 1.00x vs ring, the fastest baseline; 1.00x vs nccl (pat, Simple, bruck)
skipped:
  hier         hier needs at least two hosts (host=) of equal size with more than one rank each; this fabric has 4 host groups"
# Pipelining is passed to every algorithm: NCCL's double binary tree
# (whole chunks down two trees, store and forward at 1 slice) takes 2x the
# bound at 1 slice and 1.396x with 16.
run sim switch:4 --model fluid --coll allreduce --size 1M --compare --csv
expect_rc 0
expect_out_has "1048576,10,dbtree,3.145728e-05,33.333333333333329,"
run sim switch:4 --coll allreduce --size 1M --compare --slices 16 --csv
expect_rc 0
expect_out_has "1048576,10,dbtree,2.1954560000000002e-05,47.761194029850742,"
# A sweep as CSV: one row per (size, algorithm), the bound as rank 0. On
# the one-way ring:4 the ring is optimal; the others cross links twice.
run sim ring:4 --model fluid --coll allreduce --size 1K:1M:x1024 --compare --csv
expect_rc 0
expect_out "size,rank,algo,time_s,algbw_gbps,busbw_gbps,of_bound
1024,0,bound,1.536e-08,66.666666666666671,100,1
1024,1,ring,1.536e-08,66.666666666666657,99.999999999999986,0.99999999999999978
1024,2,optimal,1.536e-08,66.666666666666657,99.999999999999986,0.99999999999999978
1024,3,biring,3.072e-08,33.333333333333329,49.999999999999993,0.49999999999999989
1024,4,rings:auto,3.072e-08,33.333333333333329,49.999999999999993,0.49999999999999989
1024,5,rings:4,3.072e-08,33.333333333333329,49.999999999999993,0.49999999999999989
1024,6,hd,3.072e-08,33.333333333333329,49.999999999999993,0.49999999999999989
1024,7,rabenseifner,3.072e-08,33.333333333333329,49.999999999999993,0.49999999999999989
1024,8,nccl,3.9680000000000002e-08,25.806451612903224,38.709677419354833,0.38709677419354832
1024,9,rd,4.0959999999999998e-08,25,37.5,0.375
1024,10,dbtree,5.1199999999999995e-08,20,30,0.29999999999999999
1048576,0,bound,1.572864e-05,66.666666666666671,100,1
1048576,1,ring,1.572864e-05,66.666666666666657,99.999999999999986,0.99999999999999978
1048576,2,optimal,1.572864e-05,66.666666666666657,99.999999999999986,0.99999999999999978
1048576,3,biring,3.145728e-05,33.333333333333329,49.999999999999993,0.49999999999999989
1048576,4,rings:auto,3.145728e-05,33.333333333333329,49.999999999999993,0.49999999999999989
1048576,5,rings:4,3.145728e-05,33.333333333333329,49.999999999999993,0.49999999999999989
1048576,6,hd,3.145728e-05,33.333333333333329,49.999999999999993,0.49999999999999989
1048576,7,rabenseifner,3.145728e-05,33.333333333333329,49.999999999999993,0.49999999999999989
1048576,8,nccl,3.145728e-05,33.333333333333329,49.999999999999993,0.49999999999999989
1048576,9,rd,4.1943039999999997e-05,25,37.5,0.375
1048576,10,dbtree,5.2428799999999995e-05,20,30,0.29999999999999999"
# weft bound does not cover broadcast: no bound row, and the reason.
run sim ring:4 --model fluid --coll broadcast --size 1M --compare
expect_rc 0
expect_out_has "  1  ring                             31.457        33.333        33.333         -  rank0 -> rank1 33.3%"
expect_out_has "no bound: weft bound covers allgather, reducescatter and allreduce, not broadcast"
# JSON: the fastest at the last size under the usual keys, the bound, one
# entry per size with every algorithm and its busiest links, the skipped.
run sim switch:4 --model fluid --coll allgather --size 1M --compare --json
expect_rc 0
expect_out_has '"algo": "ring",
  "size": 1048576,
  "time_s": 7.86432e-06,'
expect_out_has '"algbw_exact": "400/3"'
expect_out_has '"algo": "optimal",
          "time_s": 7.86432e-06,'
expect_out_has '"skipped": [
    {
      "algo": "hier",
      "reason": "hier needs at least two hosts'
# A candidate that --compare does not simulate again (nccl at 1G on a100:2
# is rings:16, the plan rings:auto ran; rabenseifner's plan is hd's) has
# the figures that simulating it alone gives, bit for bit.
run sim a100:2 --coll allreduce --size 1G --compare --csv
expect_rc 0
# (The rings:16 plan has 7,680 flows and runs on its 219 symmetry classes:
# 0.010133065944905602 s flow by flow, --no-symmetry; rounding apart.)
expect_out_has "1073741824,2,rings:auto,0.010133065944905609,105.96416028850803,198.68280054095254,0.61133169397216169
1073741824,3,nccl,0.010133065944905609,105.96416028850803,198.68280054095254,0.61133169397216169"
CMP=$OUT
for a in nccl rings:auto hd rabenseifner; do
    run sim a100:2 --algo $a --coll allreduce --size 1G --csv
    expect_rc 0
    row=$(printf '%s\n' "$OUT" | sed -n 2p | cut -d, -f2-4)
    check "$a alone gives $row, as in --compare" grep -q ",$a,$row," <<<"$CMP"
done

run sim switch:4 --model fluid --coll allgather --size 1M --compare --algo ring
expect_rc 2
expect_err_has "weft: --compare simulates every algorithm; drop --algo"
run sim switch:4 --model fluid --coll allgather --size 1M --compare --trace "$TMP/w.json"
expect_rc 2
expect_err_has "weft: --trace draws one schedule; it does not go with --compare"
run sim switch:4 --model fluid --size 1M --compare
expect_rc 2
expect_err_has "weft: missing --coll"
run sim switch:1 --model fluid --coll allgather --size 1M --compare
expect_rc 1
expect_err_has "weft: sim --compare: no algorithm builds allgather on switch:1"
# --max-ops: plans over the limit are not built. On switch:8 the ring
# allreduce has 2*8*7 = 112 ops: 112 builds, 111 does not; the hd
# allreduce has 48 ops moving 112 chunks (so 50 stops it), and optimal's
# allgather needs at least 8*7 = 56 ops. --algo ring needs no plan.
run sim switch:8 --model fluid --algo ring --coll allreduce --size 1M --max-ops 111 --trace "$TMP/m.json"
expect_rc 1
expect_err "weft: ring allreduce on 8 ranks has more than 111 ops (the limit, --max-ops)"
check "no trace after a refused plan" test ! -e "$TMP/m.json"
run sim switch:8 --model fluid --algo ring --coll allreduce --size 1M --max-ops 112 --trace "$TMP/m.json"
expect_rc 0
run sim switch:8 --model fluid --algo ring --coll allreduce --size 1M --max-ops 1 --csv
expect_rc 0
expect_out_has "1048576,"
run sim switch:8 --model fluid --algo hd --coll allreduce --size 1M --max-ops 50
expect_rc 1
expect_err "weft: hd allreduce on 8 ranks has more than 50 ops (the limit, --max-ops)"
run sim switch:8 --model fluid --coll allgather --size 1M --compare --max-ops 55
expect_rc 0
expect_out_has "  1  ring "
expect_out_has "  optimal      optimal allgather on 8 ranks has at least 56 ops, more than 55 (the limit, --max-ops)"
expect_out_has "  biring       biring allgather on 8 ranks has more than 55 ops (the limit, --max-ops)"
for bad in 0 -1 x 4294967295 12K; do
  run sim switch:8 --model fluid --algo ring --coll allreduce --size 1M --max-ops "$bad"
  expect_rc 2
  expect_err_has "weft: bad --max-ops '$bad' (expected 1 .. 4294967294)"
done
# --algo optimal: the optimal plan on its own, at the bound here.
run sim switch:4 --algo optimal --coll allgather --size 1M --slices 16 --csv
expect_rc 0
expect_out_has "1048576,7.8643199999999999e-06,133.33333333333331,"
# JSON sweeps carry each size's own busiest links.
run sim ring:4 --model fluid --algo ring --coll allgather --size 1K:4K:x4 --json
expect_rc 0
expect_out_has '"sweep": [
    {
      "size": 1024,
      "time_s": 7.68e-09,
      "algbw": 133.33333333333331,
      "busbw": 99.99999999999999,
      "slices": 1,
      "busiest": [
        {
          "link": "rank0 -> rank1",
          "alike": 4,'
# ---- models (docs/sim.md, "Models") -------------------------------------

# A fabric whose GPUs name their arch= runs the gpu model by default: the
# protocol NCCL's rule picks per size. a100:2 ring allreduce of 1 KiB: LL,
# 6.6 us of launch, then 30 steps of 0.6 us per NVLink hop (2.7 us per
# network hop) plus the links' 0.6 us (1.43 us), and each step's 32 bytes
# at LL's 39/200 of the links, NVLink at NCCL's 20 of its 25 GB/s per link:
# 51.608 us (51.601 at NVLink's line rate).
run sim a100:2 --algo ring --coll allreduce --size 1K:1G:x1024
expect_rc 0
expect_out_has "allreduce ring on a100:2: 16 ranks, model gpu (NCCL protocols)
        size  time (us)  algbw (GB/s)  busbw (GB/s)   proto
        1024     51.608         0.020         0.037      LL"
expect_out_has "  1073741824  "
expect_out_has "  Simple
busiest links"
run sim a100:2 --algo ring --coll allreduce --size 1K --json
expect_out_has '"model": "gpu",'
expect_out_has '"proto": "LL",'
# Elsewhere weft's own executor: 6 steps of 1 slice, 45 us per message, plus
# 6 x 256 B at 100 GB/s: 270.01536 us.
run sim switch:4 --algo ring --coll allreduce --size 1K --csv
expect_rc 0
expect_out_has "1024,0.00027001535999999999,"
expect_out_has ",runtime,,1"
# Its slices follow the size: 64 MiB / 4 ranks = 16 MiB chunks, 32 slices.
run sim switch:4 --algo ring --coll allreduce --size 64M --json
expect_out_has '"slices": 32,'
run sim switch:4 --algo ring --coll allreduce --size 64M --slice-bytes 1M --json
expect_out_has '"slices": 16,'
run sim switch:4 --model gpu --algo ring --coll allreduce --size 1K
expect_rc 1
expect_err "weft: sim: the gpu model needs the GPUs' generation, and no compute node of this fabric has arch= (volta, ampere, hopper, blackwell)"
run sim switch:4 --model gpu --alpha 1us --algo ring --coll allreduce --size 1K
expect_rc 2
expect_err_has "weft: --alpha, --slices and --cut-through set the fluid model; they do not go with --model gpu"
run sim switch:4 --model packet --algo ring --coll allreduce --size 1K
expect_rc 2
expect_err_has "weft: unknown --model 'packet' (expected fluid, runtime or gpu)"
run sim switch:4 --slice-bytes 0 --algo ring --coll allreduce --size 1K
expect_rc 2
expect_err_has "weft: bad --slice-bytes '0': must be > 0 (expected a number of bytes"
run sim switch:4 --slice-bytes 1M --slices 2 --algo ring --coll allreduce --size 1K
expect_rc 2
expect_err_has "weft: --slice-bytes replaces --slices; give one"
# The trace says how every size was simulated.
run sim a100:2 --algo hier --coll allreduce --size 1K:1G:x1024 --trace "$TMP/m.json"
expect_rc 0
check "trace metadata names the model" grep -q '"metadata":{"model":"gpu","runs":\[{"size":1024,"model":"gpu","proto":"LL","slices":1},{"size":1048576,"model":"gpu","proto":"LL128","slices":1},{"size":1073741824,"model":"gpu","proto":"Simple","slices":1}\]}}' "$TMP/m.json"
# --proto forces a protocol, in the gpu model only.
run sim a100:2 --proto ll128 --algo ring --coll allreduce --size 1K --csv
expect_out_has ",gpu,LL128,"
run sim switch:4 --proto LL --algo ring --coll allreduce --size 1K
expect_rc 2
expect_err_has "weft: --proto is the gpu model's; this runs the runtime model"
run sim a100:2 --proto LL64 --algo ring --coll allreduce --size 1K
expect_rc 2
expect_err_has "weft: unknown --proto 'LL64' (expected LL, LL128 or Simple)"
# --slices still works (it selects the fluid model) and says it is
# deprecated.
run sim switch:4 --slices 3 --algo ring --coll allreduce --size 1K
expect_rc 0
expect_out_has "allreduce ring on switch:4: 4 ranks, model fluid, 3 slices per transfer, alpha 0 s"
expect_err "weft sim: --slices is deprecated: it fixes the slice count at every size (fluid model); use --slice-bytes B"

# A plan `weft plan --algo nccl` writes keeps NCCL's tree's per-step
# forwarding (its `forward` line): read back by `sim --plan` with Simple it
# takes what `sim --algo nccl` gives, where NCCL runs that tree with Simple
# (a100:64 at 1 GiB); without the line it would be faster.
run plan a100:64 --coll allreduce --algo nccl -o "$TMP/tree.plan"
expect_rc 0
check "the plan carries the tree's step" grep -qx 'forward 524288 8.9' "$TMP/tree.plan"
run sim a100:64 --algo nccl --coll allreduce --size 1G --csv
expect_out_has "1073741824,0.01386198848672"
run sim a100:64 --plan "$TMP/tree.plan" --proto simple --size 1G --csv
expect_out_has "1073741824,0.01386198848672"
grep -v '^forward' "$TMP/tree.plan" >"$TMP/bare.plan"
run sim a100:64 --plan "$TMP/bare.plan" --proto simple --size 1G --csv
expect_out_has "1073741824,0.01102358323999"

finish
