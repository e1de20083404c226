# Every command that takes a SPEC resolves it the same way (cli_load_fabric):
# files of every format, presets, "-" for stdin, the fabric options, and the
# same messages for a SPEC that is nothing.
# Run by CTest as: bash spec.sh WEFT_BIN SOURCE_DIR SHARED_FIXTURES
WEFT=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
SRC=$(cd "$2" && pwd)
FIX=$3
. "$SRC/tests/cli/lib/check.sh"

NDV4="$FIX/nccl-topo/azhpc-images_ndv4-topo.xml"
H100="$FIX/astra-sim/hgx_h100_32gpu.yml"

# The same SPEC errors from every command.
for cmd in "topo stats" "topo show" "topo dot" "bound --coll allgather" \
    "sim --algo ring --coll allgather --size 1M"; do
    run $cmd nosuch.topo
    expect_rc 1
    expect_err "weft: no such file or preset 'nosuch.topo' (see weft topo list)"
    run $cmd a100:0
    expect_rc 1
    expect_err "weft: a100:0: boxes must be >= 1"
    run $cmd a100:2 --hosts 0
    expect_rc 2
    expect_err_has "weft: bad --hosts '0': expected an integer from 1 to 1000000"
    run $cmd --help
    expect_out_has "      --nvlink-bw BW"
done

if [ -f "$NDV4" ]; then
    # NCCL XML with the fabric options: 2 boxes of 8 A100s, NVSwitch at
    # 300 GB/s, PCIe 4.0 x16 NICs (24 GB/s): the allgather optimum is
    # 16 * 324 / 15 = 1728/5 GB/s, exactly.
    run bound "$NDV4" --nvlink-bw 300GB/s --hosts 2 --net rail --coll allgather --json
    expect_rc 0
    expect_out_has '"ranks": 16,'
    expect_out_has '"algbw_exact": "1728/5",'
    run topo stats "$NDV4" --nvlink-bw 300GB/s --hosts 2 --json
    expect_out_has '"min_injection_exact": "324",'
fi
if [ -f "$H100" ]; then
    run sim "$H100" --algo ring --coll allgather --size 1M
    expect_rc 0
    expect_out_has "32 ranks"
    run topo stats "$H100" --json
    expect_out_has '"ranks": 32,'
fi

# "-" is standard input for every command.
LAST="topo show a100:2 | bound - --coll allgather --json"
OUT=$("$WEFT" topo show a100:2 | "$WEFT" bound - --coll allgather --json)
expect_out_has '"algbw_exact": "1040/3",'

finish
