# weft topo host: the hwloc fixtures print exactly their reviewed .topo
# files; this machine as WEFT_FABRIC=host under weft launch (the report
# names it) and tuned by weft tune host. Skips without hwloc built in.
# Run by CTest as: bash host.sh WEFT_BIN SOURCE_DIR SHARED_FIXTURES
WEFT=$1
SRC=$2
. "$SRC/tests/cli/lib/check.sh"
F=$SRC/tests/fixtures/hwloc
T=$(mktemp -d)
trap 'rm -rf "$T" "$CHECK_OUT_" "$CHECK_ERR_"' EXIT

run topo host
if [ "$RC" = 1 ]; then
    expect_err_has "weft: host: weft was built without hwloc"
    [ "$failed" = 0 ] || finish
    echo "skipped: weft was built without hwloc"
    exit 77
fi
expect_rc 0
n=$(printf '%s\n' "$OUT" | grep -c ' compute ')

run topo host --xml "$F/vm-2core.xml"
expect_rc 0
expect_out "$(cat "$F/vm-2core.topo")"
run topo host --xml "$F/synth-2pkg-nic.xml" --hosts 2 -o "$T/r2.topo"
expect_rc 0
check "rail2 fixture" cmp "$T/r2.topo" "$F/synth-2pkg-nic.rail2.topo"
run topo host --xml "$F/synth-2pkg-nic.xml" --ranks numa --hosts 3 --net switch --nic-bw 100Gbps
expect_rc 0
expect_out "$(cat "$F/synth-2pkg-nic.numa3.topo")"
run topo show "host:xml=$F/synth-2pkg-nic.xml,ranks=numa,hosts=3,net=switch,nic-bw=100Gbps"
expect_out "$(cat "$F/synth-2pkg-nic.numa3.topo")"
run topo host --xml "$F/vm-2core.xml" --hosts 2
expect_rc 1
expect_err "weft: host: hwloc does not know the speed of NIC eth0 of hwloc XML vm-2core.xml; give the network bandwidth (nic-bw)"
run topo host --ranks gpu
expect_rc 2
expect_err_has "weft: bad --ranks 'gpu': expected core, numa, package or pu"

# This machine as the runtime's fabric, tuned.
if [ "$n" -ge 2 ] && [ "$n" -le 8 ]; then
    run tune host --colls allreduce --sizes 1K:64K:x4 -o "$T/host.tune"
    expect_rc 0
    WEFT_FABRIC=host WEFT_TUNING="$T/host.tune" WEFT_LOG=info \
        run launch -n "$n" -- "$WEFT" perf allreduce -b 4K -e 4K -n 1 -w 0 -c 1
    expect_rc 0
    expect_out_has "# Out of bounds values : 0 OK"
    expect_err_has "by simulation (table $T/host.tune:"
    expect_err_has ") on host at 4096 B: "
    WEFT_FABRIC=host run launch -n $((n + 1)) -- "$WEFT" perf allreduce -n 1 -w 0
    expect_rc 1
    expect_err_has "comm: the fabric host (WEFT_FABRIC) has $n ranks, the communicator $((n + 1))"
fi
finish
