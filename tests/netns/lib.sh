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

# Creates a namespace that is deleted on exit.
mkns() { ip netns add "$1" || die "ip netns add $1"; CREATED+=("$1"); }

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
            tc -n "$H" qdisc add dev eth$b root tbf rate "$rate" burst 64kb latency 100ms ||
                die "tbf on h$i eth$b (kernel without sch_tbf?)"
            tc -n "$SW" qdisc add dev p$i$b root tbf rate "$rate" burst 64kb latency 100ms ||
                die "tbf on p$i$b"
        done
    done
}
