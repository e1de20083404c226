#!/bin/bash
# Two NICs per emulated host (docs/netns.md, "Two interfaces per host").
#
# Builds hosts h0..h3 (network namespaces), each with two veths: eth0 to
# bridge br0 (198.18.0.x/24) and eth1 to bridge br1 (198.19.0.x/24), both
# bridges in a fifth namespace, every veth limited to 400 Mbit/s by tbf in
# both directions. Runs `weft perf allreduce` (4 ranks, one per host, TCP,
# WEFT_NETNS per rank) with WEFT_SOCKET_IFNAME=eth0 and then eth0,eth1, for
# the built-in ring (lane 0: every connection) and a ring plan (the plan
# executor's lanes, each striped over both NICs). Checks every result and
# that with two interfaces each NIC of h0 carried between 30% and 70% of
# its bytes, with one interface eth1 nothing; prints the times and the
# speedup of two NICs over one.
#
# Skips (exit 77) when not root or without ip/tc; deletes everything it
# created on exit.
#
# usage: nics.sh WEFT_BIN SOURCE_DIR [SIZE]   (default SIZE 4M)
set -u
WEFT=${1:?usage: nics.sh WEFT_BIN SOURCE_DIR [SIZE]}
SRC=${2:?usage: nics.sh WEFT_BIN SOURCE_DIR [SIZE]}
SIZE=${3:-4M}
RATE=400mbit

[ -d "$SRC" ] || { echo "FAIL: source directory '$SRC' not found"; exit 1; }
. "$SRC/tests/netns/lib.sh"
netns_begin weftn

two_nic_hosts 4 "$RATE"
echo "# fabric: 4 namespaces $P-h0..h3, two NICs each (eth0 -> br0, eth1 -> br1), $RATE per NIC and direction"

"$WEFT" plan switch:4 --coll allreduce --algo ring -o "$TMP/ring.plan" >/dev/null ||
    die "weft plan --algo ring failed"
cat >"$TMP/rank.sh" <<EOF
#!/bin/sh
export WEFT_NETNS=/var/run/netns/$P-h\$WEFT_RANK
exec "\$@"
EOF
chmod +x "$TMP/rank.sh"

sent() { # DEV: bytes h0 sent on it so far
    ip -n "$P-h0" -s link show dev "$1" | awk 'f { print $1; exit } /TX:/ { f = 1 }'
}
# NAME IFNAMES [perf options...]: prints "time_us eth0_bytes eth1_bytes".
run() {
    local name=$1 ifs=$2
    shift 2
    local a0 a1 b0 b1
    a0=$(sent eth0)
    a1=$(sent eth1)
    WEFT_SOCKET_IFNAME=$ifs WEFT_TRANSPORT=tcp WEFT_TIMEOUT=20 timeout 60 "$WEFT" launch -n 4 -- \
        "$TMP/rank.sh" "$WEFT" perf allreduce -b "$SIZE" -e "$SIZE" -n 3 -w 1 -c 1 "$@" \
        >"$TMP/$name.out" 2>&1 || { cat "$TMP/$name.out"; die "weft perf ($name) failed"; }
    grep -q "transport tcp" "$TMP/$name.out" || { cat "$TMP/$name.out"; die "$name: not over TCP"; }
    grep -q "# Out of bounds values : 0 OK" "$TMP/$name.out" ||
        { cat "$TMP/$name.out"; die "$name: wrong results"; }
    b0=$(sent eth0)
    b1=$(sent eth1)
    awk '!/^#/ && NF >= 13 { printf "%.0f ", ($6 + $10) / 2; exit }' "$TMP/$name.out"
    echo "$((b0 - a0)) $((b1 - a1))"
}

status=0
printf '%-22s %10s %12s %12s %7s\n' run ms eth0_bytes eth1_bytes eth1
report() { # LABEL TIME E0 E1 MIN MAX: eth1's share must be in [MIN, MAX] percent
    awk -v l="$1" -v t="$2" -v a="$3" -v b="$4" -v lo="$5" -v hi="$6" 'BEGIN {
        share = a + b ? 100 * b / (a + b) : 0
        printf "%-22s %10.2f %12d %12d %6.1f%%\n", l, t / 1e3, a, b, share
        if (share < lo || share > hi) {
            printf "FAIL: %s: eth1 carried %.1f%% of h0'"'"'s bytes, expected %d%% .. %d%%\n", l, share,
                lo, hi
            exit 1
        }
    }' || status=1
}
read -r t1 a0 a1 <<<"$(run one eth0)"
report "builtin, eth0" "$t1" "$a0" "$a1" 0 1
read -r t2 b0 b1 <<<"$(run two eth0,eth1)"
report "builtin, eth0,eth1" "$t2" "$b0" "$b1" 30 70
read -r t3 c0 c1 <<<"$(run plan eth0,eth1 --plan "$TMP/ring.plan")"
report "ring plan, eth0,eth1" "$t3" "$c0" "$c1" 30 70
awk -v a="$t1" -v b="$t2" 'BEGIN { printf "# two NICs / one NIC (built-in ring): %.2fx faster\n", a / b }'
[ $status = 0 ] || exit 1
echo "PASS"
