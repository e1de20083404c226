# What a new user trips over first on the command line (issue 18, item 3):
# the format of a written plan follows its name, verify and sim --plan read
# a plan by its content, fabric options that do not apply are refused, an
# import's assumptions are said on stderr, one grammar for sizes,
# bandwidths and times, and usage errors (exit 2) that list what is valid.
# Run by CTest as: bash flags.sh WEFT_BIN SOURCE_DIR SHARED_FIXTURES
WEFT=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
SRC=$(cd "$2" && pwd)
FIX=$(cd "$3" 2>/dev/null && pwd)
. "$SRC/tests/cli/lib/check.sh"

NDV4="$FIX/nccl-topo/azhpc-images_ndv4-topo.xml"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP" "$CHECK_OUT_" "$CHECK_ERR_"' EXIT
cd "$TMP" || exit 1

PLAN_USAGE="usage: weft plan SPEC --coll C [--algo A] [--root R] [-o FILE] [--format weft|json|msccl]
        [--msccl-profile executor|msccl] [--json] [--trees-per-root K] [--dot]
        [--max-ops N] [--traffic FILE]
        [--compress C] [--density D] [--skew zipf:S] [--elem-bytes B]
run 'weft plan --help' for details"
SIM_USAGE="usage: weft sim SPEC (--plan FILE | --algo A --coll C | --coll C --compare) (--size S | --traffic FILE)
        | --compare-fabrics A,B,... --coll C (--size S | --traffic FILE) [--cost FILE]
        [--model fluid|runtime|gpu] [--proto P] [--slice-bytes B] [--alpha T]
        [--nccl-algo A] [--nccl-proto P] [--nccl-buffsize B]
        [--cut-through] [--back-to-back] [--max-ops N] [--json | --csv] [--trace FILE]
        [--plot FILE.svg] [--compress C] [--density D] [--skew zipf:S]
        [--elem-bytes B] [--compute none|cpu|volta|ampere|hopper|blackwell]
run 'weft sim --help' for details"
BOUND_USAGE="usage: weft bound SPEC --coll C [--traffic FILE] [--json]
run 'weft bound --help' for details"
SIZE_GRAMMAR="a number of bytes with an optional unit: K, M, G = 2^10, 2^20, 2^30 (as nccl-tests; also KiB, MiB, GiB), KB, MB, GB = 10^3, 10^6, 10^9; e.g. 4096, 64K, 1.5G, 1GiB"

# ---- -o FILE: the extension names the format ----------------------------
# x.xml was weft text before; now it is MSCCL XML that verify proves.
run plan ring:4 --coll allreduce -o x.xml
expect_rc 0
check "x.xml is MSCCL XML" grep -q '^<algo name="weft_allreduce"' x.xml
run verify x.xml
expect_rc 0
expect_out "ok: allreduce, 4 ranks, 48 ops verified"
expect_err ""
run plan ring:4 --coll allreduce -o x.plan
check "x.plan is weft text" grep -qx 'weft-plan 1' x.plan
run plan ring:4 --coll allreduce -o x.json
check "x.json is JSON" grep -q '^{' x.json
run plan ring:4 --coll allreduce -o X.XML
check "the extension's case does not matter" grep -q '^<algo ' X.XML
run plan ring:4 --coll allreduce -o - --json
expect_rc 0
check "-o - is weft text" grep -qx 'weft-plan 1' <<<"$OUT"

run plan ring:4 --coll allreduce -o x.xml --format weft
expect_rc 2
expect_err "weft: --format weft contradicts -o 'x.xml', whose extension .xml names MSCCL XML (drop --format, or name the file .plan)
$PLAN_USAGE"
run plan ring:4 --coll allreduce -o x.plan --format json
expect_rc 2
expect_err_has "weft: --format json contradicts -o 'x.plan', whose extension .plan names weft plan text (drop --format, or name the file .json)"
run plan ring:4 --coll allreduce -o x.txt
expect_rc 2
expect_err "weft: cannot tell the format of -o 'x.txt' from its name: end it in .plan (weft text), .xml (MSCCL XML) or .json, or give --format weft|json|msccl
$PLAN_USAGE"
check "nothing written for a refused -o" test ! -e x.txt
run plan ring:4 --coll allreduce -o myplan
expect_rc 0
check "a name without an extension gets weft text" grep -q '^weft-plan 1' myplan
run plan ring:4 --coll allreduce -o x.txt --format msccl
expect_rc 0
check "--format decides for another extension" grep -q '^<algo ' x.txt
run plan ring:4 --coll allreduce --format msccl
expect_rc 2
expect_err_has "weft: --format says how -o FILE is written; give -o FILE (or -o - for standard output)"
run plan ring:4 --coll allreduce --format xml -o x.xml
expect_rc 2
expect_err_has "weft: bad --format 'xml': expected weft, json or msccl"
run plan ring:4 --coll allreduce -o x.plan --msccl-profile msccl
expect_rc 2
expect_err_has "weft: --msccl-profile applies only to MSCCL XML output (-o FILE.xml or --format msccl)"

# ---- Reading: verify and sim --plan both go by content --------------------
# sim --plan read only weft text: an MSCCL file was "x.xml:1:1: expected
# 'weft-plan 1' ...".
run sim ring:4 --model fluid --plan x.xml --size 1M --csv
expect_rc 0
expect_out_has "1048576,1.572864e-05,"
cp x.plan text.xml
cp x.xml msccl.plan
for cmd in "verify text.xml" "sim ring:4 --size 1M --csv --plan text.xml"; do
    run $cmd
    expect_rc 0
    expect_err "weft: warning: 'text.xml' holds weft plan text, not MSCCL XML as its extension .xml says; read as weft plan text"
done
for cmd in "verify msccl.plan" "sim ring:4 --size 1M --csv --plan msccl.plan"; do
    run $cmd
    expect_rc 0
    expect_err "weft: warning: 'msccl.plan' holds MSCCL XML, not weft plan text as its extension .plan says; read as MSCCL XML"
done
run verify x.json
expect_rc 1
expect_err "weft: 'x.json' holds a JSON plan, which weft writes but does not read; write the plan with --format weft (.plan) or msccl (.xml) to verify or simulate it"
run sim ring:4 --plan x.json --size 1M
expect_rc 1
expect_err_has "weft: 'x.json' holds a JSON plan, which weft writes but does not read"

# ---- Fabric options apply to NCCL XML only --------------------------------
# The --nic-bw was ignored: the 25 GB/s answer came with no word.
run bound a100:2 --coll allgather --nic-bw 100GB/s
expect_rc 2
expect_err "weft: --nic-bw applies only to NCCL topology XML imports, and 'a100:2' is a preset (whose parameters describe it: weft topo list)
$BOUND_USAGE"
expect_out ""
printf 'node a compute\nnode b compute\nduplex a b 10GB/s\n' >two.topo
for opt in "--nvlink-bw 300" "--cpu-bw 10" "--hosts 2" "--net rail"; do
    run topo stats two.topo $opt
    expect_rc 2
    expect_err_has "weft: ${opt%% *} applies only to NCCL topology XML imports, and 'two.topo' is a .topo file (which describes every link itself)"
done
run topo stats - --cpu-bw 10 <two.topo
expect_rc 2
expect_err_has "weft: --cpu-bw applies only to NCCL topology XML imports, and '-' is a .topo file (which describes every link itself)"
run bound nosuch.topo --coll allgather --hosts 2
expect_rc 1
expect_err "weft: no such file or preset 'nosuch.topo' (see weft topo list)"
run topo stats a100:2 --hosts 1000001
expect_rc 2
expect_err_has "weft: bad --hosts '1000001': expected an integer from 1 to 1000000"
run topo stats --help
expect_out_has "copies of the box, 1 to 1000000 (default 1)"

if [ -f "$NDV4" ]; then
    run topo stats "$NDV4" --net rail
    expect_rc 2
    expect_err_has "weft: --net says how the boxes of --hosts N are joined; it needs --hosts 2 or more"
    # Standard input redirected from the dump is an NCCL XML too.
    run topo show - --hosts 2 --nic-bw 25 <"$NDV4"
    expect_rc 0
    expect_out_has "nic0 25 GB/s each way (--nic-bw)"
    # A bare bandwidth is GB/s, as in presets (ring:4,bw=25).
    run topo show "$NDV4" --hosts 2 --nic-bw 25
    expect_rc 0
    expect_out_has "nic0 25 GB/s each way (--nic-bw)"

    # ---- Import assumptions: on stderr, once, from every command ---------
    # No NVLink section: the allreduce bound is 96/7 = 13.71 GB/s, 12x
    # lower than with NVLink, and the command says why.
    ASSUMED="weft: assumed: no NVLink modelled: the file has no <nvlink> elements; pass the NVLink bandwidth (--nvlink-bw)
weft: assumed: CPU to CPU: 16 GB/s each way (NCCL's figure for AMD Zen 1/2, ncclTopoGetInterCpuBw); pass --cpu-bw to override
weft: assumed: latencies: 0 (the file gives none)"
    run bound "$NDV4" --coll allreduce
    expect_rc 0
    expect_out_has "algbw          13.7143 GB/s (exact 96/7)"
    expect_err "$ASSUMED"
    for cmd in "topo stats" "topo dot" "topo show" "plan --coll allreduce" "bound --coll allgather --json" \
        "sim --algo ring --coll allreduce --size 1M" "tune --colls allgather --sizes 1K"; do
        run $cmd "$NDV4"
        expect_rc 0
        expect_err "$ASSUMED"
    done
    run plan "$NDV4" --coll allgather -o nd.plan
    run verify nd.plan --topo "$NDV4"
    expect_rc 0
    expect_out "ok: allgather, 8 ranks, 56 ops verified"
    expect_err "$ASSUMED"
    # What a flag told is no assumption.
    run bound "$NDV4" --coll allreduce --nvlink-bw 300 --cpu-bw 16
    expect_rc 0
    expect_err "weft: assumed: latencies: 0 (the file gives none)"
    run bound "$NDV4" --coll allreduce --hosts 2
    expect_err_has "weft: assumed: network: 2 boxes b0..b1, NIC i of every box to rail switch rail<i>; nic0 24 GB/s each way (its PCIe link: the file gives no NIC speed; pass --nic-bw)"
fi
# A preset assumes nothing.
run bound a100:2 --coll allgather
expect_rc 0
expect_err ""
# A host fabric (hwloc) says what it assumed the same way, reads a bare
# bandwidth as GB/s like every flag, and takes no NCCL options.
VM2="$SRC/tests/fixtures/hwloc/vm-2core.xml"
run topo stats "host:xml=$VM2"
if [ "$RC" = 0 ]; then
    expect_err "weft: assumed: ranks are the 2 cores; each to its NUMA node's memory (mem<i>) 10 GB/s each way (assumed; set rank-bw)"
    run topo stats "host:xml=$VM2,rank-bw=25"
    expect_rc 0
    expect_err ""
    expect_out_has "25 GB/s each way (rank-bw)"
    run topo host --xml "$VM2" --rank-bw 25
    expect_rc 0
    expect_out_has "25 GB/s each way (rank-bw)"
    run topo stats "host:xml=$VM2" --nic-bw 5
    expect_rc 2
    expect_err_has "weft: --nic-bw applies only to NCCL topology XML imports, and 'host:xml=$VM2' is a host fabric (whose keys describe it: host:nic-bw=BW,hosts=N,...)"
fi

# ---- One grammar for sizes, bandwidths and times --------------------------
for s in 1k:1024 1K:1024 1GB:1000000000 1GiB:1073741824 1G:1073741824 1.5G:1610612736 \
    0.5K:512 4096B:4096; do
    run sim ring:4 --algo ring --coll allreduce --csv --size "${s%%:*}"
    expect_rc 0
    expect_out_has "
${s#*:},"
done
# weft perf -b/-e read sizes the same way (one rank, no timing checked).
run perf allreduce -b 1KB -e 1KB -n 1 -w 0 -c 1
expect_rc 0
expect_out_has "        1000           250     float"
run perf allreduce -b 1.5k -e 1.5KiB -n 1 -w 0 -c 1
expect_rc 0
expect_out_has "        1536           384     float"
run perf allreduce -b 1.5
expect_rc 2
expect_err_has "weft: bad -b '1.5': expected $SIZE_GRAMMAR; at most 2^40 bytes"
run sim ring:4 --algo ring --coll allreduce --size 1M:1K:x2
expect_rc 2
expect_err "weft: bad --size '1M:1K:x2': the sweep's end 1024 is below its start 1048576
$SIM_USAGE"
run sim ring:4 --algo ring --coll allreduce --size 1K:1M:x1
expect_rc 2
expect_err_has "weft: bad --size '1K:1M:x1': its factor 'x1' must be a whole number >= 2, e.g. x2 or x4"
run sim ring:4 --algo ring --coll allreduce --size 1.5
expect_rc 2
expect_err_has "weft: bad --size '1.5': not a whole number of bytes"
run sim ring:4 --algo ring --coll allreduce --size 1Kb
expect_rc 2
expect_err_has "weft: bad --size '1Kb': expected $SIZE_GRAMMAR, or a sweep MIN:MAX:xF such as 1K:1G:x4"
run tune ring:4 --sizes 1x:1M:x2
expect_rc 2
expect_err_has "weft: bad --sizes '1x:1M:x2': its start '1x' is not a size (a size is $SIZE_GRAMMAR)"

# --alpha takes a number and a unit, as a .topo file's lat=: the same
# value in any unit; a bare 0 needs none, and is the default.
run sim ring:4 --algo ring --coll allreduce --size 1M --alpha 5us --csv
expect_rc 0
expect_out_has "1048576,4.5728639999999997e-05,"
US_OUT=$OUT
for t in 5000ns 0.005ms 5e-6s; do
    run sim ring:4 --algo ring --coll allreduce --size 1M --alpha "$t" --csv
    expect_rc 0
    expect_out "$US_OUT"
done
run sim ring:4 --algo ring --coll allreduce --size 1M --alpha 0.5ms --csv
expect_rc 0
expect_out_has "1048576,0.0030157286399999997,"
run sim ring:4 --algo ring --coll allreduce --size 1M --model fluid --csv
expect_rc 0
ZERO_OUT=$OUT
expect_out_has "1048576,1.572864e-05,"
for t in 0 0.0 0us; do
    run sim ring:4 --algo ring --coll allreduce --size 1M --alpha "$t" --csv
    expect_rc 0
    expect_out "$ZERO_OUT"
done
# A bare number other than 0 is not taken as seconds: a usage error that
# names the units, in every command that takes --alpha.
for t in 5 5e-6 0.5; do
    run sim ring:4 --algo ring --coll allreduce --size 1M --alpha "$t"
    expect_rc 2
    expect_err_has "weft: bad --alpha '$t': add a unit, one of ns, us, ms, s (e.g. ${t}us, or ${t}s for seconds); only 0 goes without one"
done
run tune ring:4 --colls allreduce --sizes 1K --alpha 5
expect_rc 2
expect_err_has "weft: bad --alpha '5': add a unit, one of ns, us, ms, s (e.g. 5us, or 5s for seconds); only 0 goes without one"
run topo search --ranks 4 --degree 2 --coll allgather --size 1M --alpha 1
expect_rc 2
expect_err_has "weft: bad --alpha '1': add a unit, one of ns, us, ms, s (e.g. 1us, or 1s for seconds); only 0 goes without one"
run sim ring:4 --algo ring --coll allreduce --size 1M --alpha 5sec
expect_rc 2
expect_err_has "weft: bad --alpha '5sec': unknown unit (expected a number and a unit, e.g. 5us or 0.5ms; units: ns, us, ms, s)"
run sim ring:4 --algo ring --coll allreduce --size 1M --alpha -1us
expect_rc 2
expect_err_has "weft: bad --alpha '-1us': must be >= 0"
run tune ring:4 --colls allreduce --sizes 1K --alpha 1us
expect_rc 0
expect_out_has "slices=1 alpha=1e-06"

# A value below what an exact fraction can hold is too small, not too large.
if [ -f "$NDV4" ]; then
    run bound "$NDV4" --coll allgather --nic-bw 1e-30GB/s
    expect_rc 2
    expect_err_has "weft: bad --nic-bw '1e-30GB/s': too small (below the resolution of exact values, fractions of 64-bit integers)"
    run bound "$NDV4" --coll allgather --nic-bw 1e30GB/s
    expect_rc 2
    expect_err_has "weft: bad --nic-bw '1e30GB/s': too large"
fi

# ---- Bad values are usage errors that list the valid ones ------------------
ALGOS="ring, biring, rings:K, dbtree, binomial, hd, rabenseifner, rd, bruck, direct, pairwise, hier, flash, flash:K, relay:K, nccl, optimal, bfb, sparse-ag, quant-2shot, sparse-hash, sparse-range or hier-quant"
run plan ring:4 --coll allreduce --algo nosuch
expect_rc 2
expect_err "weft: unknown --algo 'nosuch': expected $ALGOS (weft plan --list says what each builds)
$PLAN_USAGE"
run sim ring:4 --coll allreduce --algo rings:0 --size 1M
expect_rc 2
expect_err_has "weft: bad --algo 'rings:0': K of rings:K must be an integer from 1 to 64"
run sim ring:4 --coll allsum --algo ring --size 1M
expect_rc 2
expect_err "weft: unknown --coll 'allsum': expected allgather, reducescatter, allreduce, broadcast, reduce or alltoall
$SIM_USAGE"
run tune ring:4 --colls allreduce,allfoo
expect_rc 2
expect_err_has "weft: bad --colls: unknown collective 'allfoo' (expected allgather, reducescatter, allreduce, broadcast, reduce or alltoall, separated by commas)"
# Options the command would silently ignore are refused too.
run plan ring:4 --coll allreduce --root 2
expect_rc 2
expect_err_has "weft: --root applies only to broadcast and reduce (and to --dot), not to allreduce"
run plan ring:4 --coll broadcast --root x
expect_rc 2
expect_err_has "weft: bad --root 'x': expected a rank number (0 to ranks - 1)"
run plan ring:4 --coll broadcast --algo binomial --root 2
expect_rc 0
expect_out_has "(4 ranks, root 2)"
# --max-ops applies to a plan read as to one built, with --algo's message.
run sim ring:4 --plan x.plan --size 1M --max-ops 10
expect_rc 1
expect_err "weft: x.plan allreduce on 4 ranks has more than 10 ops (the limit, --max-ops)"
run sim ring:4 --plan x.plan --size 1M --max-ops 23
expect_rc 1
expect_err "weft: x.plan allreduce on 4 ranks has more than 23 ops (the limit, --max-ops)"
run sim ring:4 --plan x.plan --size 1M --max-ops 24
expect_rc 0
# An algorithm that exists but does not build the collective is the
# input's fault (exit 1), with what it builds.
run plan ring:4 --coll allreduce --algo bruck
expect_rc 1
expect_err "weft: algorithm 'bruck' does not build allreduce (it builds: allgather, alltoall)"

finish
