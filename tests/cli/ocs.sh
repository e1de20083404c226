# Optical circuit switches through the weft command: the mixnet preset's
# bound with every OCS relaxed to a switch (exact: 1600/3 GB/s, NIC-bound,
# docs/presets.md), a .topo with a one-way OCS link and a reconfig= without
# a unit (exit 1, exact messages), and show -> file -> stats round trip.
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

finish
