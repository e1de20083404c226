#!/bin/bash
# Predicted vs measured sparse all-reduce on the emulated fabric of
# tests/netns/fabric.sh (4 hosts in network namespaces behind one bridge,
# h0..h2 at 1 Gbit/s, h3 at 200 Mbit/s, tbf both ways, MTU 9000; the same
# construction, and tests/netns/fabric.topo as its model).
#
# For each density D: `weft perf allreduce --density D` on 4 ranks over TCP,
# one rank per host (WEFT_NETNS), measures weft_allreduce_sparse beside the
# dense weft_allreduce of the same tensor; `weft sim fabric.topo --algo
# sparse-hash --density D --elem-bytes 4` predicts the sparse one, with
# the compute ops of its plan free (wire time only) and, with `--compute
# cpu`, charged at this CPU's rates (bench_sparse_kernels;
# docs/compression.md, "Compute in the plans"), and `--algo ring` the dense
# one (weft's built-in allreduce over TCP is a ring in rounds). Prints
# measured, predicted and their relative errors; and the same call on the
# same 4 ranks over shared memory (no fabric: its local work and
# latencies), the error of the wire-only sim + that, and the packets the
# eight tbf queues dropped during the density's run (none since the
# queues hold 1 s: tests/netns/lib.sh).
# A benchmark: it never fails on time. Skips (exit 77) when not root or
# without ip/tc (tests/netns/lib.sh).
#
# usage: sparse_netns.sh WEFT_BIN SOURCE_DIR [SIZE [DENSITIES]]
#        (defaults 16M and "0.01 0.05 0.1")
set -u
USAGE="usage: sparse_netns.sh WEFT_BIN SOURCE_DIR [SIZE [DENSITIES]]"
WEFT=${1:?$USAGE}
SRC=${2:?$USAGE}
SIZE=${3:-16M}
DENS=${4:-0.01 0.05 0.1}
TOPO=$SRC/tests/netns/fabric.topo
RATES=(1gbit 1gbit 1gbit 200mbit)
BURSTS=(16kb 16kb 16kb 10kb)
. "$SRC/tests/netns/lib.sh"
netns_begin weftsp

one_nic_hosts
cat >"$TMP/rank.sh" <<EOF2
#!/bin/sh
export WEFT_NETNS=/var/run/netns/$P-h\$WEFT_RANK WEFT_SOCKET_IFNAME=eth0
exec "\$@"
EOF2
chmod +x "$TMP/rank.sh"

sim_s() { "$WEFT" sim "$TOPO" --coll allreduce --size "$SIZE" --csv "$@" | tail -1 | cut -d, -f2; }
ring=$(sim_s --algo ring) || die "weft sim ring failed"
echo "# 4 hosts (h0..h2 1 Gbit/s, h3 200 Mbit/s), 4 ranks over TCP, $SIZE of float, load $(cut -d' ' -f1 /proc/loadavg)"
printf "# %8s %11s %9s %7s %9s %7s %9s %7s %10s %9s %7s %6s\n" density "sparse(ms)" "sim(ms)" "err" \
    "+cpu(ms)" "err" "shm(ms)" "err+shm" "dense(ms)" "sim ring" "err" drops
# Packets the root qdisc of device $2 in namespace $1 dropped so far.
qdisc_drops() {
    tc -s -n "$1" qdisc show dev "$2" |
        awk '/dropped/ && !x { sub(",", "", $7); d = $7; x = 1 } END { print d + 0 }'
}
# Packets the tbf queues dropped so far, over both ends of every host's link.
drops() {
    local i n=0
    for i in 0 1 2 3; do
        n=$((n + $(qdisc_drops "$P-h$i" eth0) + $(qdisc_drops "$SW" p$i)))
    done
    echo "$n"
}
for D in $DENS; do
    d0=$(drops)
    WEFT_TRANSPORT=tcp WEFT_TIMEOUT=60 timeout 600 "$WEFT" launch -n 4 -- "$TMP/rank.sh" \
        "$WEFT" perf allreduce --density "$D" -b "$SIZE" -e "$SIZE" -n 3 -w 1 >"$TMP/p.out" 2>&1 ||
        { cat "$TMP/p.out"; die "weft perf --density $D failed"; }
    grep -q "transport tcp" "$TMP/p.out" || { cat "$TMP/p.out"; die "not over TCP"; }
    lost=$(($(drops) - d0))
    row=$(grep -v '^#' "$TMP/p.out" | tail -1)
    [ "$(echo "$row" | awk '{print $NF}')" = 0 ] || { cat "$TMP/p.out"; die "wrong results at $D"; }
    sp=$(sim_s --algo sparse-hash --density "$D" --elem-bytes 4) || die "weft sim sparse-hash failed"
    spc=$(sim_s --algo sparse-hash --density "$D" --elem-bytes 4 --compute cpu) ||
        die "weft sim sparse-hash --compute cpu failed"
    WEFT_TRANSPORT=shm timeout 600 "$WEFT" launch -n 4 -- "$WEFT" perf allreduce --density "$D" \
        -b "$SIZE" -e "$SIZE" -n 3 -w 1 >"$TMP/s.out" 2>&1 || { cat "$TMP/s.out"; die "shm run failed"; }
    shm=$(grep -v '^#' "$TMP/s.out" | tail -1 | awk '{print $8 / 1e3}')
    echo "$row" | awk -v d="$D" -v sp="$sp" -v spc="$spc" -v ring="$ring" -v shm="$shm" -v lost="$lost" '{
        ms = $8 / 1e3; dn = $6 / 1e3; p = sp * 1e3; pc = spc * 1e3
        printf "  %8s %11.1f %9.1f %+6.1f%% %9.1f %+6.1f%% %9.1f %+6.1f%% %10.1f %9.1f %+6.1f%% %6d\n",
            d, ms, p, (ms / p - 1) * 100, pc, (ms / pc - 1) * 100, shm,
            (ms / (p + shm) - 1) * 100, dn, ring * 1e3, (dn / (ring * 1e3) - 1) * 100, lost }'
done
echo "# load after: $(cut -d' ' -f1 /proc/loadavg)"
