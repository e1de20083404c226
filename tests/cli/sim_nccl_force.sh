# weft sim --algo nccl with NCCL's choice forced (--nccl-algo, --nccl-proto,
# --nccl-buffsize; docs/sim.md, "Forcing NCCL's choice").
#
# The figures of the A3 Mega development set (tests/fixtures/nccl-tests/
# a3mega-2x8-h100-allreduce.txt), whose `nccl tree simple` and `buffsize
# 8388608` lines make src/sim/devset_test.c run NCCL's tree with Simple
# and a 1 MiB step: its predicted busbw at 16, 32 and 64 MiB (devset_test
# -v; docs/sim.md's table) is 31.313, 58.472 and 99.996 GB/s, and the
# flags give the same rows. src/choose/choose_test.c checks the same
# equality on the times to the bit.
# Run by CTest as: bash sim_nccl_force.sh WEFT_BIN SOURCE_DIR SHARED_FIXTURES
WEFT=$1
. "$2/tests/cli/lib/check.sh"

A3=(sim h100:2,nicbw=25 --algo nccl --coll allreduce)
run "${A3[@]}" --nccl-algo tree --nccl-proto simple --nccl-buffsize 8388608 --size 16M:64M:x2
expect_rc 0
expect_out_has "  16777216   1004.600        16.700        31.313  Simple"
expect_out_has "  33554432   1075.985        31.185        58.472  Simple"
expect_out_has "  67108864   1258.346        53.331        99.996  Simple"
expect_out_has "forced: NCCL_ALGO=tree NCCL_PROTO=Simple NCCL_BUFFSIZE=8388608
NCCL runs at 16777216 (16M): nccl (tree, Simple, dbtree)"
forced=$OUT
# NCCL's spellings, in any case, and 8M for the buffer: the same output.
run "${A3[@]}" --nccl-algo Tree --nccl-proto SIMPLE --nccl-buffsize 8M --size 16M:64M:x2
expect_rc 0
expect_out "$forced"
# NCCL's default buffer (4 MiB: a step of 512 KiB) is another figure.
run "${A3[@]}" --nccl-algo tree --nccl-proto simple --size 16M
expect_out_has "  16777216    579.557        28.948        54.278  Simple"
# NCCL's own choice there is NVLS with a tree between the hosts.
run "${A3[@]}" --size 16M
expect_rc 0
expect_out_has "NCCL runs at 16777216 (16M): nccl (nvls_tree, Simple) in the switch (148.7 us by NCCL's model)"

# NCCL_PROTO alone: NCCL's fastest algorithm with it. On a100:1 at 2 MiB
# NCCL runs the ring with LL128, with Simple forced the ring with Simple.
run sim a100:1 --algo nccl --coll allreduce --size 2M
expect_out_has "NCCL runs at 2097152 (2M): nccl (ring, LL128, rings:28)"
run sim a100:1 --algo nccl --coll allreduce --size 2M --nccl-proto simple
expect_rc 0
expect_out "allreduce nccl on a100:1: 8 ranks, model gpu (NCCL protocols)
     size  time (us)  algbw (GB/s)  busbw (GB/s)   proto
  2097152     65.492        32.021        56.037  Simple
busiest links at 2097152 bytes:
  b0.gpu0 -> b0.nvsw0  23.3%
  b0.gpu1 -> b0.nvsw0  23.3%
  b0.gpu2 -> b0.nvsw0  23.3%
  b0.gpu3 -> b0.nvsw0  23.3%
  b0.gpu4 -> b0.nvsw0  23.3%
forced: NCCL_PROTO=Simple
NCCL runs at 2097152 (2M): nccl (ring, Simple, rings:28)"
# --json names what was forced too (it said nothing of it before).
run sim a100:1 --algo nccl --coll allreduce --size 2M --nccl-proto simple --nccl-buffsize 8M --json
expect_rc 0
expect_out_has '  "size": 2097152,
  "forced": {
    "NCCL_PROTO": "Simple",
    "NCCL_BUFFSIZE": 8388608
  },
  "time_s": 6.549226666666668e-05,'
run sim a100:1 --algo nccl --coll allreduce --size 2M --json
expect_rc 0
check "no forced key without the flags" eval '[[ $OUT != *\"forced\"* ]]'
# An in-network algorithm forced runs in the switch.
run sim h100:1 --algo nccl --coll allreduce --size 1G --nccl-algo nvls
expect_rc 0
expect_out_has "  1073741824   3871.477       277.347       485.357  Simple"
expect_out_has "nccl (nvls, Simple) in the switch"

# Refused by name, exit 2: what weft does not model, bad values, the flags
# without --algo nccl, --proto with --nccl-proto.
run sim a100:1 --algo nccl --coll allreduce --size 1M --nccl-algo collnet
expect_rc 2
expect_err_has "weft: unknown --nccl-algo 'collnet' (weft models ring, tree, nvls, nvls_tree, collnet_direct, collnet_chain and pat)"
run sim a100:1 --algo nccl --coll allreduce --size 1M --nccl-algo p2p
expect_rc 2
expect_err_has "weft: --nccl-algo 'p2p': NCCL runs all-to-all as p2p sends, which it does not tune; there is nothing to force"
run sim a100:1 --algo nccl --coll allreduce --size 1M --nccl-proto ll256
expect_rc 2
expect_err_has "weft: unknown --nccl-proto 'll256' (expected LL, LL128 or Simple)"
run sim a100:1 --algo nccl --coll allreduce --size 1M --nccl-buffsize 4
expect_rc 2
expect_err_has "weft: bad --nccl-buffsize '4': NCCL's buffer holds 8 steps, so at least 8 bytes"
run sim a100:1 --algo ring --coll allreduce --size 1M --nccl-algo ring
expect_rc 2
expect_err_has "weft: --nccl-algo forces NCCL's choice: it needs --algo nccl"
run sim a100:1 --coll allreduce --compare --size 1M --nccl-proto LL
expect_rc 2
expect_err_has "weft: --nccl-proto forces NCCL's choice: it needs --algo nccl"
run sim --compare-fabrics a100:1,h100:1 --coll allreduce --size 1M --nccl-algo ring
expect_rc 2
expect_err_has "weft: --nccl-algo does not go with --compare-fabrics"
run sim a100:1 --algo nccl --coll allreduce --size 1M --nccl-proto LL --proto LL
expect_rc 2
expect_err_has "weft: --proto and --nccl-proto both set the protocol; give one"
# What NCCL does not run on the fabric: exit 1 with the reason.
run sim a100:1 --algo nccl --coll allgather --size 1M --nccl-algo tree
expect_rc 1
expect_err "weft: NCCL's tree runs allreduce only (allgather)"
run sim a100:1 --algo nccl --coll allreduce --size 1M --nccl-algo nvls
expect_rc 1
expect_err "weft: nvls needs an NVSwitch that reduces (reduce=nvls) and sm90+ (allreduce)"
run sim switch:4 --algo nccl --coll allreduce --size 1M --nccl-proto LL128
expect_rc 1
expect_err "weft: nccl: no algorithm runs allreduce with LL128"
run sim a100:1 --algo nccl --coll alltoall --size 1M --nccl-proto LL
expect_rc 1
expect_err "weft: nccl: NCCL does not tune all-to-all (p2p: every pair at once), so no algorithm or protocol is forced there"

finish
