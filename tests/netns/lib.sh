# Shared by the emulated fabrics (fabric.sh, nics.sh): the root and tool
# checks (skip with 77 when they fail), and the namespaces' bookkeeping.
# Source it after setting WEFT; then call netns_begin PREFIX, which sets
# P (the prefix of every namespace name: PREFIX-PID), SW (the switch
# namespace's name, not yet created) and TMP (a fresh folder), and deletes
# every namespace made by mkns, and TMP, on exit, also on failure or
# interrupt.

skip() { echo "SKIP: $*"; exit 77; }
die() { echo "FAIL: $*"; exit 1; }

netns_begin() {
    [ "$(id -u)" = 0 ] || skip "needs root (network namespaces, veth, tc); run it as root"
    command -v ip >/dev/null || skip "needs 'ip' (Debian package iproute2; tools/install-deps.sh)"
    command -v tc >/dev/null || skip "needs 'tc' (Debian package iproute2; tools/install-deps.sh)"
    [ -x "$WEFT" ] || die "weft binary '$WEFT' not found"
    P=$1-$$
    SW=$P-sw
    CREATED=()
    TMP=$(mktemp -d "/tmp/$1.XXXXXX")
    trap netns_cleanup EXIT
    trap 'exit 130' INT TERM
}

netns_cleanup() {
    local ns
    for ns in "${CREATED[@]}"; do ip netns del "$ns" 2>/dev/null; done
    rm -rf "$TMP"
}

# The queue of every tbf, in time at its rate (tc-tbf(8)'s latency: the
# queue holds rate x latency bytes): 1 s, 25 MB at 200 Mbit/s, so that the
# fabric drops nothing, as training fabrics are lossless (InfiniBand's
# credits, RoCE with PFC) and as the simulator's fluid model assumes. With
# 100 ms, three senders into h3's 200 Mbit/s link (the sparse all-reduce's
# all-gather) overflowed it, 190-300 drops per run of bench/sparse_netns.sh,
# whose TCP retransmissions the model has no part for (docs/netns.md, "The
# fabric"). NETNS_TBF_LATENCY overrides it (a tc time: 100ms, 1s).
TBF_QUEUE=${NETNS_TBF_LATENCY:-1s}

# Creates a namespace that is deleted on exit.
mkns() { ip netns add "$1" || die "ip netns add $1"; CREATED+=("$1"); }

# one_nic_hosts: the switch namespace $SW with bridge br0 and hosts $P-h0 ..
# $P-h3, each with one veth eth0 to br0 (198.18.0.(i+1)/24), MTU 9000, the
# veth of host i limited to ${RATES[i]} with bucket ${BURSTS[i]} by tbf in
# both directions (fabric.sh, bench/sparse_netns.sh). Egress of each end:
# host -> switch on eth0, switch -> host on p$i. Then TCP without pacing in
# the hosts (docs/netns.md, "Pacing"): a pacing congestion control (bbr)
# spreads each message at its estimate of the link's rate, so tbf's bucket,
# which the .topo models, never sees the burst a wire-speed sender gives
# it. The first of ${NETNS_TCP_CC:-cubic reno} that a namespace may use
# (net.ipv4.tcp_allowed_congestion_control: a namespace other than the
# first may only pick an allowed one) is set in every host; TCP_CC says
# which.
one_nic_hosts() {
    local i H cc
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
        tc -n "$H" qdisc add dev eth0 root tbf rate ${RATES[$i]} burst ${BURSTS[$i]} latency $TBF_QUEUE ||
            die "tbf on h$i (kernel without sch_tbf?)"
        tc -n "$SW" qdisc add dev p$i root tbf rate ${RATES[$i]} burst ${BURSTS[$i]} latency $TBF_QUEUE ||
            die "tbf on p$i"
    done
    TCP_CC=
    for cc in ${NETNS_TCP_CC:-cubic reno}; do
        ip netns exec "$P-h0" sysctl -qw net.ipv4.tcp_congestion_control=$cc 2>/dev/null &&
            { TCP_CC=$cc; break; }
    done
    if [ -n "$TCP_CC" ]; then
        for i in 1 2 3; do
            ip netns exec "$P-h$i" sysctl -qw net.ipv4.tcp_congestion_control=$TCP_CC ||
                die "cannot set TCP congestion control $TCP_CC in h$i"
        done
    else
        TCP_CC="$(ip netns exec "$P-h0" sysctl -n net.ipv4.tcp_congestion_control) (none of ${NETNS_TCP_CC:-cubic reno} allowed)"
    fi
}

# two_nic_hosts N RATE: the switch namespace $SW with bridges br0 and br1,
# and hosts $P-h0 .. $P-h(N-1), each with two veths, eth0 to br0
# (198.18.0.(i+1)/24) and eth1 to br1 (198.19.0.(i+1)/24), MTU 9000, every
# veth limited to RATE by tbf in both directions (nics.sh, relay.sh).
two_nic_hosts() {
    local n=$1 rate=$2 b i H
    mkns "$SW"
    for b in 0 1; do
        ip -n "$SW" link add br$b type bridge || die "cannot create a bridge (no bridge support?)"
        ip -n "$SW" link set br$b up || die "br$b up"
    done
    for ((i = 0; i < n; i++)); do
        H=$P-h$i
        mkns "$H"
        ip -n "$H" link set lo up || die "lo up in h$i"
        for b in 0 1; do
            ip link add eth$b netns "$H" type veth peer name p$i$b netns "$SW" || die "veth h$i eth$b"
            ip -n "$SW" link set p$i$b mtu 9000 || die "mtu p$i$b"
            ip -n "$H" link set eth$b mtu 9000 || die "mtu eth$b in h$i"
            ip -n "$SW" link set p$i$b master br$b || die "bridge port p$i$b"
            ip -n "$SW" link set p$i$b up || die "p$i$b up"
            ip -n "$H" addr add 198.$((18 + b)).0.$((i + 1))/24 dev eth$b || die "address h$i eth$b"
            ip -n "$H" link set eth$b up || die "eth$b up in h$i"
            tc -n "$H" qdisc add dev eth$b root tbf rate "$rate" burst 64kb latency $TBF_QUEUE ||
                die "tbf on h$i eth$b (kernel without sch_tbf?)"
            tc -n "$SW" qdisc add dev p$i$b root tbf rate "$rate" burst 64kb latency $TBF_QUEUE ||
                die "tbf on p$i$b"
        done
    done
}
