# In-network reduction: NCCL's NVLS, NVLS-tree and CollNet run in the
# switch (weft_sim_innet) by weft sim --algo nccl, --algo nvls, --compare,
# weft tune's summary and weft step; reduce= in .topo files.
# Run by CTest as: bash innet.sh WEFT_BIN SOURCE_DIR SHARED_FIXTURES
WEFT=$1
SRC=$2
. "$SRC/tests/cli/lib/check.sh"
T=$(mktemp -d)
trap 'rm -rf "$T" "$CHECK_OUT_" "$CHECK_ERR_"' EXIT

# h100:1 allreduce 1 GiB: NCCL runs NVLS (its model: 25 us + 2^30 B / 272
# GB/s = 3972.6 us); the switch's flows give busbw 485.357 GB/s, where the
# ring gave 368.798.
run sim h100:1 --coll allreduce --algo nccl --size 1G
expect_rc 0
expect_out_has "  1073741824   3871.477       277.347       485.357  Simple"
expect_out_has "  b0.gpu0 -> b0.nvsw0  99.0%  (and 15 alike)"
expect_out_has "NCCL runs at 1073741824 (1G): nccl (nvls, Simple) in the switch (3972.6 us by NCCL's model)"
# Below 1,144,840 B NCCL's model keeps the ring with LL.
run sim h100:1 --coll allreduce --algo nccl --size 1M
expect_rc 0
expect_out_has "NCCL runs at 1048576 (1M): nccl (ring, LL, rings:28)"
run sim h100:1 --coll allreduce --algo nvls --size 1G
expect_rc 0
expect_out_has "  1073741824   3871.477       277.347       485.357  Simple"
# h100:2: NVLS-tree (NVLS in each box, two trees between them).
run sim h100:2 --coll allreduce --algo nccl --size 1G
expect_rc 0
expect_out_has "  1073741824   4430.755       242.338       454.384  Simple"
expect_out_has "nccl (nvls_tree, Simple) in the switch"
# --compare: the in-network rows, over the bound, with the note.
run sim h100:1 --coll allreduce --compare --size 1G
expect_rc 0
expect_out_has "   1  nccl (nvls, Simple)   3871.477       277.347       485.357    107.9%  b0.gpu0 -> b0.nvsw0 99.0%
   2  nvls                  3871.477       277.347       485.357    107.9%  b0.gpu0 -> b0.nvsw0 99.0%"
expect_out_has "rows over 100% of the bound reduce in the switch: the bound counts the data ranks send one another, and a switch that reduces moves less (docs/sim.md, \"In-network reduction\")"
run sim h100:2,sharp=1 --coll allreduce --compare --size 1G
expect_rc 0
expect_out_has "  collnet_direct "
expect_out_has "  collnet_chain "
# a100's NVSwitch does not reduce.
run sim a100:1 --coll allreduce --algo nvls --size 1G
expect_rc 1
expect_err "weft: nvls needs an NVSwitch that reduces (reduce=nvls) and sm90+ (allreduce)"
run sim h100:1 --coll allreduce --algo nvls --size 1M --trace "$T/x.json"
expect_rc 1
expect_err "weft: sim: a trace draws a plan's ops; nvls reduces in the switch and has none"
# tune: not a runtime candidate, but said.
run tune h100:1 --colls allreduce --sizes 1M:64M:x4 -o "$T/t.tune"
expect_rc 0
expect_out_has "allreduce: NCCL reduces in the switch from 4194304 B (nvls at 67108864 B: 278.413 us simulated, optimal 329.122 us; not a runtime candidate)"
# step: TP 8 inside the box runs its allreduces in the switch.
run step --fabric h100:1 --gpu h100-sxm --model llama3-8b --tensor-model-parallel-size 8 --global-batch-size 8 --micro-batch-size 1
expect_rc 0
expect_out_has "  tp exposed       0.2851  15.3%       0.2851    112.00"
# .topo: reduce=nvls|sharp, errors name file:line:col.
printf 'node a compute host=h\nnode b compute host=h\nnode s switch host=h reduce=nvls\nduplex a s 100GB/s\nduplex b s 100GB/s\n' > "$T/ok.topo"
run topo show "$T/ok.topo"
expect_rc 0
printf 'node a compute\nnode s switch reduce=yes\n' > "$T/bad.topo"
run topo show "$T/bad.topo"
expect_rc 1
expect_err "weft: $T/bad.topo:2:15: bad 'reduce=yes' on 's': expected nvls, sharp, 0 or 1"
run topo show h100:1
expect_rc 0
expect_out_has "reduce=nvls"
finish
