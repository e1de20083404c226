# weft verify on MSCCL XML programs (the shared fixtures), and bad XML.
# Run by CTest as: bash msccl.sh WEFT_BIN SOURCE_DIR SHARED_FIXTURES
WEFT=$1
SRC=$2
FIX=$3/msccl
. "$SRC/tests/cli/lib/check.sh"

TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

run verify "$FIX/ns3-msccl_allreduce_ring_8_1.xml"
expect_rc 0
expect_out "ok: allreduce, 8 ranks, 224 ops verified"

run verify "$FIX/ns3-msccl_allreduce_hierarchical_16_1.xml"
expect_rc 0
expect_out "ok: allreduce, 16 ranks, 960 ops verified"

run verify "$FIX/rccl_allreduce-allpairs-8n-simple.xml"
expect_rc 0
expect_out "ok: allreduce, 8 ranks, 10688 ops verified"

run verify "$FIX/rccl_alltoall-8n-9kb-190kb.xml"
expect_rc 0
expect_out "ok: alltoall, 8 ranks, 240 ops verified"

run verify "$FIX/ns3-msccl_allreduce_ring_2_1.xml"
expect_rc 1
expect_out ""
expect_err "weft: rank 0 out[0]: chunk 0 is not fully reduced at the end (the slot holds chunk 1 with 1 of 2 contributions)"

sed 's/type="rrs"/type="rrx"/' "$FIX/ns3-msccl_allreduce_ring_8_1.xml" >"$TMP/bad.xml"
run verify "$TMP/bad.xml"
expect_rc 1
expect_err "weft: $TMP/bad.xml:5:7: unknown step type 'rrx'"

# weft plan --format msccl: the written program verifies.
run plan a100:2 --coll allreduce -o "$TMP/ring.xml" --format msccl
expect_rc 0
run verify "$TMP/ring.xml"
expect_rc 0
expect_out "ok: allreduce, 16 ranks, 960 ops verified"
check "executor spelling" grep -q 'coll="reducescatter"' <("$WEFT" plan ring:4 --coll reducescatter -o - --format msccl 2>/dev/null)
check "msccl spelling" grep -q 'coll="reduce_scatter"' <("$WEFT" plan ring:4 --coll reducescatter -o - --format msccl --msccl-profile msccl 2>/dev/null)

# One threadblock per rank (receive from the left, send right) with 117
# steps: over the executor's 64; nothing is written.
run plan ring:40 --coll allreduce -o "$TMP/big.xml" --format msccl
expect_rc 1
expect_err "weft: rank 0 threadblock for sends to rank 1 and receives from rank 39 on channel 0 has 117 steps; the executor profile allows 64 per threadblock (MSCCL_MAX_NUM_STEPS)"
check "nothing written" test ! -e "$TMP/big.xml"
run plan ring:40 --coll allreduce -o "$TMP/big.xml" --format msccl --msccl-profile msccl
expect_rc 0
run verify "$TMP/big.xml"
expect_out "ok: allreduce, 40 ranks, 6240 ops verified"

run plan ring:4 --coll allreduce -o "$TMP/x.xml" --format msccl --msccl-profile rccl
expect_rc 2
expect_err_has "bad --msccl-profile 'rccl': expected executor or msccl"
finish
