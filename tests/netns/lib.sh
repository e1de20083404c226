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
