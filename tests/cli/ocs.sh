# Optical circuit switches through the weft command: the mixnet preset's
# bound with every OCS relaxed to a switch (exact: 1600/3 GB/s, NIC-bound,
# docs/presets.md), a .topo with a one-way OCS link and a reconfig= without
# a unit (exit 1, exact messages), and show -> file -> stats round trip.
# Circuit schedules: weft plan --algo optimal --traffic on a mixnet fabric
# gives a plan with circuits that meets the bound at delay 0 and keeps one
# configuration at 1 s; it verifies, and two corrupted copies (a circuit
# removed, a port in two circuits) fail with the exact message and line;
# weft sim --traffic A,B,A runs three all-to-alls and charges the
# reconfiguration between them. --compare and --compare-fabrics name the
# circuit schedule.
# Run by CTest as: bash ocs.sh WEFT_BIN SOURCE_DIR SHARED_FIXTURES
WEFT=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
SRC=$(cd "$2" && pwd)
. "$SRC/tests/cli/lib/check.sh"

TMP=$(mktemp -d)
trap 'rm -rf "$TMP" "$CHECK_OUT_" "$CHECK_ERR_"' EXIT
cd "$TMP" || exit 1

run bound mixnet:hosts=4,nvbw=900 --coll allgather --json
expect_rc 0
expect_out_has '"algbw_exact": "1600/3"'
expect_out_has '"ranks_in": 24'

# Two regions: the packet rails still carry what one region's OCS cannot.
run bound mixnet:hosts=4,nvbw=900,region=2 --coll allreduce --json
expect_rc 0
expect_out_has '"algbw_exact": "800/3"'

printf 'node a compute\nnode b compute\nnode o ocs\nduplex a o 10GB/s\nlink o b 10GB/s\n' >oneway.topo
run bound oneway.topo --coll allgather
expect_rc 1
expect_err "weft: oneway.topo: ocs 'o' has a link to 'b' but none back: an OCS port is a duplex pair (use duplex)"

printf 'node a compute\nnode o ocs reconfig=25\n' >unit.topo
run topo stats unit.topo
expect_rc 1
expect_err "weft: unit.topo:2:23: bad 'reconfig=25' on 'o': missing unit (a delay such as 25us; units ns, us, ms, s)"

run topo show mixnet:hosts=2,gpus=2,ocsnics=1,reconfig=1ms -o m.topo
expect_rc 0
run topo stats m.topo --json
expect_rc 0
expect_out_has '"ocs": 1'
check "m.topo has 'node ocs0 ocs reconfig=1ms'" grep -q '^node ocs0 *ocs *reconfig=1ms$' m.topo

# Circuit schedules (docs/ocs.md).
F=mixnet:hosts=4,gpus=2,ocsnics=1,reconfig=0
run traffic moe --ranks 8 --experts 8 --topk 2 --tokens 256 --hidden-bytes 4K --skew zipf:1 -o m.tm
expect_rc 0
run traffic moe --ranks 8 --experts 8 --topk 2 --tokens 256 --hidden-bytes 4K --skew zipf:1 --seed 3 -o m2.tm
expect_rc 0
run plan "$F" --coll alltoall --traffic m.tm --algo optimal --json -o c0.plan
expect_rc 0
expect_out_has '"configs": 9,'
expect_out_has '"time_s": 6.2464e-05,'
expect_out_has '"bound_s": 6.246399999999999e-05,'
expect_out_has '"rerouted_bytes": 0,'
check "c0.plan has 30 circuits" test "$(grep -c '^circuit ' c0.plan)" = 30
check "c0.plan's first circuit" test "$(grep -m1 '^circuit ' c0.plan)" = 'circuit 0 ocs0 b0.nic1 b1.nic1'
run verify c0.plan --topo "$F"
expect_rc 0
expect_out "ok: alltoall, 8 ranks, 64 ops verified"

sed '0,/^circuit/{/^circuit/d}' c0.plan >bad1.plan
run verify bad1.plan --topo "$F"
expect_rc 1
expect_err "weft: bad1.plan:25: op 10 (rank 1 -> rank 3, in[3] -> out[1]): route path 1 crosses ocs 'ocs0' from b0.nic1 to b1.nic1 in epoch 0, which has no such circuit"
awk '{print} /^circuit/ && !done {print "circuit 0 ocs0 b0.nic1 b3.nic1"; done=1}' c0.plan >bad2.plan
run verify bad2.plan
expect_rc 1
expect_err "weft: bad2.plan:80: epoch 0: port 'b0.nic1' of ocs 'ocs0' sends on two circuits (b0.nic1 -> b1.nic1 and b0.nic1 -> b3.nic1); a port is in at most one circuit each way"

run plan mixnet:hosts=4,gpus=2,ocsnics=1,reconfig=1s --coll alltoall --traffic m.tm --algo optimal --json
expect_rc 0
expect_out_has '"configs": 1,'
expect_out_has '"time_s": 9.576448e-05,'

run sim mixnet:hosts=4,gpus=2,ocsnics=1 --coll alltoall --algo optimal --traffic m.tm,m2.tm,m.tm --model fluid --json
expect_rc 0
expect_out_has '"reconfig_s": 5e-05,'
expect_out_has '"time_s": 0.000298641' # fluid model: links shared by bytes (docs/sim.md)
check "three matrices" test "$(grep -c '"traffic"' "$CHECK_OUT_")" = 3
run sim "$F" --coll alltoall --algo optimal --traffic m.tm,m2.tm --plan c0.plan
expect_rc 2

# --compare and --compare-fabrics run the circuit schedule as optimal and
# say so; the other plans cross the OCS as a switch, and the table says that.
run sim "$F" --coll alltoall --traffic m.tm --compare --model fluid
expect_rc 0
expect_out_has '  1  optimal (circuits: 9 configs)'
expect_out_has 'optimal runs the circuit schedule (docs/ocs.md); the other plans carry no circuits and cross each OCS as a packet switch, as weft bound does'
run sim "$F" --coll alltoall --size 1M --compare --model fluid
expect_rc 0
expect_out_has 'no plan carries circuits (a circuit schedule needs --coll alltoall --traffic FILE): each crosses every OCS as a packet switch, as weft bound does'
run sim --compare-fabrics "$F",clos:hosts=4,gpus=2,nics=2 --coll alltoall --traffic m.tm --model fluid --json
expect_rc 0
expect_out_has '"algo": "optimal (circuits: 9 configs)",'

# A trace of a circuit schedule draws the plan's ops only: its epochs'
# gates and drain markers are engine flows of no op (once read as ops past
# the plan's end: "copy 1849360496->22028").
run sim "$F" --coll alltoall --algo optimal --traffic m.tm --trace circ.json
expect_rc 0
check "the circuit trace names only the plan's 64 ops and 8 ranks" python3 -c '
import json, sys
ev = [e for e in json.load(open("circ.json"))["traceEvents"] if e.get("ph") == "X"]
a = [e["args"] for e in ev if "op" in e.get("args", {})]
sys.exit(not (a and all(x["op"] < 64 and x["src"] < 8 and x["dst"] < 8 for x in a)))'

finish
