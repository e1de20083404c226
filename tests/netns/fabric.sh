#!/bin/bash
# An emulated 4-host fabric on one machine (docs/netns.md).
#
# Builds hosts h0..h3, each a network namespace with one veth (eth0, MTU
# 9000) to a bridge in a fifth namespace (the switch), every veth
# rate-limited by tbf in both directions (h0..h2: 1 Gbit/s, h3: 200 Mbit/s),
# with addresses 198.18.0.1 .. 198.18.0.4/24 from the benchmarking range.
# tests/netns/fabric.topo is the same fabric, at the rates TCP payload gets
# through those links.
#
# Runs `weft launch -n 4 -- weft perf allreduce` with WEFT_NETNS per rank, so
# only the TCP data sockets live in the namespaces (the rendezvous stays on
# 127.0.0.1 in the root namespace), three times:
#   builtin  weft's built-in ring (no fabric given),
#   ring     the ring plan (WEFT_ALGO=ring) through the plan executor,
#   chosen   the plan weft chooses per size (WEFT_FABRIC and a tuning table
#            from `weft tune`, the simulator's ranking), named in the log.
# For each size it prints the measured times, the simulator's predictions
# (weft sim, with the slice count the executor logged for that size) and the
# relative errors, and ring / chosen measured and predicted.
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
# MTU 9000: at 1500 the per-packet work of four ranks' TCP stacks, the bridge
# and tbf on two shared cores kept a bidirectional 200 Mbit/s link at about
# 70% (measured with a plain socket pair); at 9000 both directions run at
# 95%+ and a frame carries 8948 payload bytes in 9014 (what fabric.topo
# gives as the link rates).
mkns() { ip netns add "$1" || die "ip netns add $1"; CREATED+=("$1"); }
mkns "$SW"
ip -n "$SW" link add br0 type bridge || die "cannot create a bridge (no bridge support?)"
ip -n "$SW" link set br0 up || die "bridge up"
for i in 0 1 2 3; do
    H=$P-h$i
    mkns "$H"
    ip link add eth0 netns "$H" type veth peer name p$i netns "$SW" || die "veth h$i"
    ip -n "$SW" link set p$i mtu 9000 || die "mtu of p$i"
    ip -n "$H" link set eth0 mtu 9000 || die "mtu of eth0 in h$i"
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
echo "# fabric: 4 namespaces $P-h0..h3 behind bridge $SW; h0..h2 ${RATES[0]}, h3 ${RATES[3]} (tbf, both directions, MTU 9000)"

# ---- Tuning table -------------------------------------------------------------
# The simulator's ranking per size; the runtime follows it (WEFT_TUNING).
"$WEFT" tune "$TOPO" --colls allreduce --sizes "256K:$MAXB:x4" --slices 8 -o "$TMP/tune" \
    >"$TMP/tune.out" 2>&1 || { cat "$TMP/tune.out"; die "weft tune failed"; }
"$WEFT" plan "$TOPO" --coll allreduce --compare --json >"$TMP/compare.json" ||
    die "weft plan --compare failed"
RING_LIMIT=$(awk -F'"' '$2 == "algo" { algo = $4 }
    $2 == "algbw_exact" && algo == "ring" { print $4; exit }' "$TMP/compare.json")
[ -n "$RING_LIMIT" ] || die "no ring in the --compare output"

# ---- Runs -------------------------------------------------------------------------
# Each rank enters its own host's namespace for its data sockets only.
cat >"$TMP/rank.sh" <<EOF
#!/bin/sh
export WEFT_NETNS=/var/run/netns/$P-h\$WEFT_RANK WEFT_SOCKET_IFNAME=eth0
exec "\$@"
EOF
chmod +x "$TMP/rank.sh"
perf() { # NAME [VAR=VALUE...]: one weft perf sweep with these settings
    local name=$1
    shift
    env "$@" WEFT_TRANSPORT=tcp WEFT_TIMEOUT=20 WEFT_LOG=debug timeout 100 "$WEFT" launch -n 4 -- \
        "$TMP/rank.sh" "$WEFT" perf allreduce -b 256K -e "$MAXB" -f 4 -n 3 -w 1 -c 1 \
        >"$TMP/$name.out" 2>&1 || { cat "$TMP/$name.out"; die "weft perf ($name) failed"; }
    grep -q "transport tcp" "$TMP/$name.out" || { cat "$TMP/$name.out"; die "$name: not over TCP"; }
    grep -q "# Out of bounds values : 0 OK" "$TMP/$name.out" ||
        { cat "$TMP/$name.out"; die "$name: wrong results"; }
    # Rows: size count type redop root | time algbw busbw #wrong (out of place) | in place.
    awk '!/^#/ && !/^weft/ && NF >= 13 {print $1, $6, $10}' "$TMP/$name.out" >"$TMP/$name.t"
    [ -s "$TMP/$name.t" ] || { cat "$TMP/$name.out"; die "$name: no rows in the perf table"; }
}
T0=$(date +%s)
perf builtin WEFT_FABRIC= WEFT_ALGO= WEFT_TUNING=
perf ring WEFT_FABRIC="$TOPO" WEFT_ALGO=ring WEFT_TUNING=
perf chosen WEFT_FABRIC="$TOPO" WEFT_ALGO= WEFT_TUNING="$TMP/tune"
T1=$(date +%s)

# ---- Report -------------------------------------------------------------------
# Rank 0's executor logs (debug level) "plan allreduce: C chunks of B B, each cut into S
# slices" whenever the chunk size changes; the size of that run is C x B.
slices() { # RUN SIZE
    awk -v s="$2" '/^weft DEBUG run: plan allreduce: / {
        c = $6; b = $9; n = $14; if (c * b == s) { print n; exit } }' "$TMP/$1.out"
}
chosen_algo() { # SIZE: the algorithm the runtime logged for this size
    sed -n "s/^weft INFO run: allreduce $1 B: \([^ ]*\) (.*/\1/p" "$TMP/chosen.out" | head -1
}
sim_plan() { # PLAN SIZE SLICES
    "$WEFT" sim "$TOPO" --plan "$1" --size "$2" --slices "$3" --csv | tail -1 | cut -d, -f2
}
"$WEFT" plan "$TOPO" --coll allreduce --algo ring -o "$TMP/ring.plan" >/dev/null ||
    die "weft plan --algo ring failed"
status=0
printf '%9s | %8s %8s %7s | %8s %8s %7s | %-7s %8s %8s %7s | %6s %6s\n' size builtin sim err \
    ring sim err chosen ms sim err r/c sim
while read -r size bo bi; do
    read -r rsize ro ri <<<"$(awk -v s="$size" '$1 == s' "$TMP/ring.t")"
    read -r csize co ci <<<"$(awk -v s="$size" '$1 == s' "$TMP/chosen.t")"
    [ "$rsize" = "$size" ] && [ "$csize" = "$size" ] || die "size $size missing from a run"
    algo=$(chosen_algo "$size")
    [ -n "$algo" ] || die "no choice logged for $size bytes"
    [ -f "$TMP/$algo.plan" ] || "$WEFT" plan "$TOPO" --coll allreduce --algo "$algo" \
        -o "$TMP/$algo.plan" >/dev/null || die "weft plan --algo $algo failed"
    rs=$(slices ring "$size")
    cs=$(slices chosen "$size")
    [ -n "$rs" ] && [ -n "$cs" ] || die "no slice count logged for $size bytes"
    bsim=$("$WEFT" sim "$TOPO" --algo ring --coll allreduce --size "$size" --csv | tail -1 |
        cut -d, -f2)
    rsim=$(sim_plan "$TMP/ring.plan" "$size" "$rs")
    csim=$(sim_plan "$TMP/$algo.plan" "$size" "$cs")
    [ -n "$bsim" ] && [ -n "$rsim" ] && [ -n "$csim" ] || die "weft sim failed at $size bytes"
    # Times in the table are microseconds; out of place and in place averaged.
    awk -v size="$size" -v bo="$bo" -v bi="$bi" -v ro="$ro" -v ri="$ri" -v co="$co" \
        -v ci="$ci" -v bs="$bsim" -v rs="$rsim" -v cs="$csim" -v algo="$algo" \
        -v rl="$RING_LIMIT" 'BEGIN {
        b = (bo + bi) / 2e6; r = (ro + ri) / 2e6; c = (co + ci) / 2e6
        printf "%9d | %8.2f %8.2f %6.1f%% | %8.2f %8.2f %6.1f%% | %-7s %8.2f %8.2f %6.1f%% | %5.2fx %5.2fx\n",
            size, b * 1e3, bs * 1e3, (bs - b) / b * 100, r * 1e3, rs * 1e3, (rs - r) / r * 100,
            algo, c * 1e3, cs * 1e3, (cs - c) / c * 100, r / c, rs / cs
        # A ring cannot beat its throughput bound on this fabric, except for
        # what the tbf buckets (128 KB, 32 KB, full at the start) let through.
        n = split(rl, f, "/"); lim = (n == 2 ? f[1] / f[2] : f[1]) * 1e9
        bound = size / lim
        if (b < 0.8 * bound - 0.002 || r < 0.8 * bound - 0.002) {
            printf "FAIL: a ring took %.2f ms at %d bytes, below 80%% of its bound %.2f ms: " \
                "the data did not cross the rate-limited links\n", (b < r ? b : r) * 1e3, size,
                bound * 1e3
            exit 1
        }
    }' || status=1
done <"$TMP/builtin.t"
echo "# ms per allreduce (out-of-place and in-place averaged); err = (simulated - measured) / measured"
echo "# builtin: weft's ring schedule, simulated as weft sim --algo ring; ring, chosen: plans run by"
echo "# the executor, simulated with its slice count; r/c: ring / chosen, measured and simulated"
echo "# runs took $((T1 - T0)) s"
[ $status = 0 ] || exit 1
echo "PASS"
