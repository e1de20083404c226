#!/bin/bash
# An emulated 4-host fabric on one machine (docs/netns.md).
#
# Builds hosts h0..h3, each a network namespace with one veth (eth0) to a
# bridge in a fifth namespace (the switch), every veth rate-limited by tbf in
# both directions (h0..h2: 1 Gbit/s, h3: 200 Mbit/s; tests/netns/fabric.topo
# is the same fabric), with addresses 198.18.0.1 .. 198.18.0.4/24 from the
# benchmarking range. Runs `weft launch -n 4 -- weft perf allreduce` with
# WEFT_NETNS per rank, so only the TCP data sockets live in the namespaces
# (the rendezvous stays on 127.0.0.1 in the root namespace), once with the
# built-in ring and once with the plan the cost model ranks best among the
# classic algorithms (weft plan --compare). Prints ring vs chosen plan
# (measured) and the simulator's prediction (weft sim --json) vs the
# measurement with the relative error, per size.
#
# Fails when a result is wrong, a run fails, or a measured ring time beats
# the fabric's throughput bound by more than tbf's burst allows (which would
# mean the data did not cross the rate-limited links). Everything it creates
# is deleted on exit, also on failure or interrupt. Skips (exit 77) when not
# root or without ip/tc.
#
# usage: fabric.sh WEFT_BIN SOURCE_DIR [MAXBYTES]   (default MAXBYTES 4M;
#        sizes run from 256K to MAXBYTES by factors of 4)
set -u
WEFT=${1:?usage: fabric.sh WEFT_BIN SOURCE_DIR [MAXBYTES]}
SRC=${2:?usage: fabric.sh WEFT_BIN SOURCE_DIR [MAXBYTES]}
MAXB=${3:-4M}
TOPO=$SRC/tests/netns/fabric.topo
RATES=(1gbit 1gbit 1gbit 200mbit)
BURSTS=(128kb 128kb 128kb 32kb)

skip() { echo "SKIP: $*"; exit 77; }
[ "$(id -u)" = 0 ] || skip "needs root (network namespaces, veth, tc); run it as root"
command -v ip >/dev/null || skip "needs 'ip' (Debian package iproute2; tools/install-deps.sh)"
command -v tc >/dev/null || skip "needs 'tc' (Debian package iproute2; tools/install-deps.sh)"
[ -x "$WEFT" ] || { echo "FAIL: weft binary '$WEFT' not found"; exit 1; }

P=weft-$$
SW=$P-sw
CREATED=()
TMP=$(mktemp -d /tmp/weft-netns.XXXXXX)
cleanup() {
    local ns
    for ns in "${CREATED[@]}"; do ip netns del "$ns" 2>/dev/null; done
    rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
die() { echo "FAIL: $*"; exit 1; }

# ---- The fabric -------------------------------------------------------------
mkns() { ip netns add "$1" || die "ip netns add $1"; CREATED+=("$1"); }
mkns "$SW"
ip -n "$SW" link add br0 type bridge || die "cannot create a bridge (no bridge support?)"
ip -n "$SW" link set br0 up || die "bridge up"
for i in 0 1 2 3; do
    H=$P-h$i
    mkns "$H"
    ip link add eth0 netns "$H" type veth peer name p$i netns "$SW" || die "veth h$i"
    ip -n "$SW" link set p$i master br0 || die "bridge port p$i"
    ip -n "$SW" link set p$i up || die "p$i up"
    ip -n "$H" addr add 198.18.0.$((i + 1))/24 dev eth0 || die "address of h$i"
    ip -n "$H" link set eth0 up || die "eth0 up in h$i"
    ip -n "$H" link set lo up || die "lo up in h$i"
    # Egress of each end: host -> switch on eth0, switch -> host on p$i.
    tc -n "$H" qdisc add dev eth0 root tbf rate ${RATES[$i]} burst ${BURSTS[$i]} latency 100ms ||
        die "tbf on h$i (kernel without sch_tbf?)"
    tc -n "$SW" qdisc add dev p$i root tbf rate ${RATES[$i]} burst ${BURSTS[$i]} latency 100ms ||
        die "tbf on p$i"
done
echo "# fabric: 4 namespaces $P-h0..h3 behind bridge $SW; h0..h2 ${RATES[0]}, h3 ${RATES[3]} (tbf, both directions)"

# ---- Plans --------------------------------------------------------------------
# The best classic algorithm by the cost model: highest exact limit (a
# fraction "p/q" or an integer), fewer steps on a tie. Output is one key per
# line, "algo" first in each entry.
"$WEFT" plan "$TOPO" --coll allreduce --compare --json >"$TMP/compare.json" ||
    die "weft plan --compare failed"
awk -F'"' '
    $2 == "algo" { algo = $4 }
    $2 == "algbw_exact" { n = split($4, f, "/"); lim = n == 2 ? f[1] / f[2] : f[1]; ex = $4 }
    $2 == "steps" {
        steps = $3; gsub(/[^0-9]/, "", steps)
        if (algo == "ring") print "ring", ex > "/dev/stderr"
        if (best == "" || lim > blim || (lim == blim && steps + 0 < bsteps)) {
            best = algo; blim = lim; bex = ex; bsteps = steps + 0
        }
    }
    END { if (best == "") exit 1; print best, bex }' "$TMP/compare.json" >"$TMP/best" 2>"$TMP/ring" ||
    die "cannot read the --compare output"
read -r ALGO LIMIT <"$TMP/best"
read -r _ RING_LIMIT <"$TMP/ring"
[ -n "$RING_LIMIT" ] || die "no ring in the --compare output"
"$WEFT" plan "$TOPO" --coll allreduce --algo "$ALGO" -o "$TMP/best.plan" >/dev/null ||
    die "weft plan --algo $ALGO failed"
echo "# chosen plan: $ALGO (limit $LIMIT GB/s; ring $RING_LIMIT GB/s)"

# ---- Runs -------------------------------------------------------------------------
# Each rank enters its own host's namespace for its data sockets only.
cat >"$TMP/rank.sh" <<EOF
#!/bin/sh
export WEFT_NETNS=/var/run/netns/$P-h\$WEFT_RANK WEFT_SOCKET_IFNAME=eth0
exec "\$@"
EOF
chmod +x "$TMP/rank.sh"
perf() { # NAME [perf options...]
    local name=$1
    shift
    WEFT_TRANSPORT=tcp WEFT_TIMEOUT=20 timeout 50 "$WEFT" launch -n 4 -- "$TMP/rank.sh" \
        "$WEFT" perf allreduce -b 256K -e "$MAXB" -f 4 -n 3 -w 1 -c 1 "$@" >"$TMP/$name.out" 2>&1 ||
        { cat "$TMP/$name.out"; die "weft perf ($name) failed"; }
    grep -q "transport tcp" "$TMP/$name.out" || { cat "$TMP/$name.out"; die "$name: not over TCP"; }
    grep -q "# Out of bounds values : 0 OK" "$TMP/$name.out" ||
        { cat "$TMP/$name.out"; die "$name: wrong results"; }
}
T0=$(date +%s)
perf ring
perf plan --plan "$TMP/best.plan"
T1=$(date +%s)

# ---- Report -------------------------------------------------------------------
# Rows: size count type redop root | time algbw busbw #wrong (out of place) | in place.
awk '!/^#/ && NF >= 13 {print $1, $6, $10}' "$TMP/ring.out" >"$TMP/ring.t"
awk '!/^#/ && NF >= 13 {print $1, $6, $10}' "$TMP/plan.out" >"$TMP/plan.t"
[ -s "$TMP/ring.t" ] && [ -s "$TMP/plan.t" ] || die "no rows in the perf tables"
status=0
printf '%10s %12s %12s %12s %12s %9s %12s %9s %8s\n' size ring_ms ring_sim_ms "err" \
    "${ALGO}_ms" "" "${ALGO}_sim_ms" "err" speedup
while read -r size rt_o rt_i; do
    read -r psize pt_o pt_i <<<"$(awk -v s="$size" '$1 == s' "$TMP/plan.t")"
    [ "$psize" = "$size" ] || die "size $size missing from the plan run"
    sim_time() { # the first "time_s" of weft sim --json
        "$WEFT" sim "$TOPO" "$@" --size "$size" --json | awk -F'[:,]' '/"time_s"/ {print $2 + 0; exit}'
    }
    rs=$(sim_time --algo ring --coll allreduce)
    ps=$(sim_time --plan "$TMP/best.plan")
    [ -n "$rs" ] && [ -n "$ps" ] || die "weft sim failed at $size bytes"
    # Times in the table are microseconds; out of place and in place averaged.
    awk -v size="$size" -v ro="$rt_o" -v ri="$rt_i" -v po="$pt_o" -v pi="$pt_i" -v rs="$rs" \
        -v ps="$ps" -v rl="$RING_LIMIT" 'BEGIN {
        ring = (ro + ri) / 2e6; plan = (po + pi) / 2e6
        printf "%10d %12.2f %12.2f %11.1f%% %12.2f %9s %12.2f %8.1f%% %7.2fx\n", size, ring * 1e3,
            rs * 1e3, (rs - ring) / ring * 100, plan * 1e3, "", ps * 1e3, (ps - plan) / plan * 100,
            ring / plan
        # The ring cannot beat its throughput bound on this fabric, except for
        # what the tbf buckets (128 KB, 32 KB, full at the start) let through.
        n = split(rl, f, "/"); lim = (n == 2 ? f[1] / f[2] : f[1]) * 1e9
        bound = size / lim
        if (ring < 0.8 * bound - 0.002) {
            printf "FAIL: ring took %.2f ms at %d bytes, below 80%% of its bound %.2f ms: " \
                "the data did not cross the rate-limited links\n", ring * 1e3, size, bound * 1e3
            exit 1
        }
    }' || status=1
done <"$TMP/ring.t"
echo "# err = (simulated - measured) / measured; times average out-of-place and in-place; runs took $((T1 - T0)) s"
[ $status = 0 ] || exit 1
echo "PASS"
