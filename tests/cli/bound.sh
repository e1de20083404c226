# weft bound: the must-match optima (human and JSON), the allreduce
# composition, cuts, notes for unbalanced switches and every error exit.
# Run by CTest as: bash bound.sh WEFT_BIN SOURCE_DIR SHARED_FIXTURES
WEFT=$1
SRC=$2
. "$SRC/tests/cli/lib/check.sh"
FIX=$SRC/tests/fixtures

# The optima users asked for, exact, in both output forms.
for pair in a100:1=2400/7 a100:2=1040/3 a100:4=800/3 mi250:1=2400/7 mi250:2=5312/15; do
    spec=${pair%%=*}
    want=${pair#*=}
    run bound "$spec" --coll allgather
    expect_rc 0
    expect_out_has "(exact $want)"
    run bound "$spec" --coll=allgather --json
    expect_rc 0
    expect_out_has "\"algbw_exact\": \"$want\""
done

run bound a100:2 --coll allgather
expect_out "allgather bound on a100:2: 16 ranks
  algbw          346.667 GB/s (exact 1040/3)
  busbw          325 GB/s (exact 325)
  time per byte  0.00288462 ns (exact 3/1040 ns); 1 GiB takes 3.09733 ms
  bottleneck cut: 35 of 36 nodes, 15 of 16 ranks in S
    S = every node except b0.gpu0
  links leaving S: 2, 325 GB/s in all (325)
    b0.nvsw0 -> b0.gpu0  300 GB/s
    b0.nic0 -> b0.gpu0  25 GB/s
  algbw = N * B+(S) / |S ∩ ranks| = 16 * 325 / 15 = 1040/3 GB/s"

# Allreduce says how it is composed.
run bound a100:1 --coll allreduce
expect_rc 0
expect_out_has "allreduce bound on a100:1: 8 ranks, reduce-scatter then allgather"
expect_out_has "(exact 1200/7)"
expect_out_has "algbw_ar = a_rs * a_ag / (a_rs + a_ag) = 2400/7 * 2400/7 / (2400/7 + 2400/7)"
expect_out_has "reducescatter phase: algbw 342.857 GB/s (exact 2400/7)"
expect_out_has "links entering S: 1, 300 GB/s in all (300)"

run bound a100:4 --coll allreduce --json
expect_rc 0
expect_out_has '"algbw_exact": "400/3"'
expect_out_has '"composition": "reduce-scatter then allgather: T_ar = T_rs + T_ag, algbw = a_rs * a_ag / (a_rs + a_ag)"'
if command -v python3 >/dev/null 2>&1; then
    check "bound --json is valid JSON with the contract keys" python3 -c '
import json, sys
d = json.loads(sys.argv[1])
assert d["ranks"] == 32 and d["coll"] == "allreduce"
assert abs(d["algbw"] - 400 / 3) < 1e-9 and d["algbw_exact"] == "400/3"
assert [p["coll"] for p in d["phases"]] == ["reducescatter", "allgather"]
c = d["cut"]
assert c["ranks_in"] == 24 and c["bw_exact"] == "200" and len(c["links"]) == 8
assert all(l["bw_exact"] == "25" for l in c["links"])
assert len(c["nodes"]) == 61 and d["switches_balanced"] is True
' "$OUT"
fi

# Both max-flow algorithms and the plain path agree.
run bound mi250:2 --coll allgather --maxflow dinic --no-symmetry
expect_rc 0
expect_out_has "(exact 5312/15)"

# Imported fabrics, with the fabric options: an NCCL topology dump of an
# Azure NDv4 box given NVLink bandwidth and two boxes (every node but one
# GPU: 300 NVLink + 24 PCIe into it), and an ASTRA-sim torus in GiB/s
# (exact powers of two survive; the allreduce composition fits 64 bits).
SHARED=$3
if [ -f "$SHARED/nccl-topo/azhpc-images_ndv4-topo.xml" ]; then
    run bound "$SHARED/nccl-topo/azhpc-images_ndv4-topo.xml" --coll allgather --nvlink-bw 300GB/s --hosts 2
    expect_rc 0
    expect_out_has "(exact 1728/5)"
    expect_out_has "S = every node except b0.gpu0"
    run bound "$SHARED/astra-sim/tpu_v3_32_2dtorus.yml" --coll allreduce --json
    expect_rc 0
    expect_out_has '"algbw_exact": "2147483648/12109375"'
fi

# Unbalanced switch: computed, with a note.
run bound "$FIX/bound-unbalanced.topo" --coll allgather
expect_rc 0
expect_out_has "(exact 2/3)"
expect_out_has "note: switch sw takes in 200 GB/s but sends out 121/3 GB/s; the bound is still a valid"
run bound "$FIX/bound-unbalanced.topo" --coll allgather --json
expect_out_has '"unbalanced_node": "sw"'

# Errors: exit 1 with what and where, exit 2 for usage.
run bound "$FIX/bound-oneway.topo" --coll allgather
expect_rc 1
expect_err "weft: rank 1 (g1) cannot reach rank 0 (g0): no path of links leads from one to the other, so no collective over all ranks can complete"
expect_out ""
run bound "$FIX/bound-solo.topo" --coll reducescatter
expect_rc 1
expect_err "weft: the fabric has 1 rank; a bound needs at least 2 ranks"
run bound a100:0 --coll allgather
expect_rc 1
expect_err "weft: a100:0: boxes must be >= 1"
run bound a100:2
expect_rc 2
expect_err_has "weft: missing --coll (allgather, reducescatter, allreduce or alltoall)"
run bound a100:2 --coll broadcast
expect_rc 2
expect_err_has "weft: bad --coll 'broadcast': the bound is computed for allgather, reducescatter, allreduce or alltoall"
run bound a100:2 --coll allgather --maxflow simplex
expect_rc 2
expect_err_has "weft: bad --maxflow 'simplex': push-relabel or dinic"
run bound --coll allgather
expect_rc 2
expect_err_has "weft: missing SPEC"
run bound --help
expect_rc 0
expect_out_has "usage: weft bound SPEC --coll C [--traffic FILE] [--json]"

finish
