# The ranking paths agree (docs/architecture.md, "The schedule registry"):
# on the same fabric and size, `weft plan --algo optimal` ("vs fastest"),
# `weft plan --compare` ("fastest at 1 GiB simulated"), `weft sim
# --compare` (its fastest baseline) name the same baseline with the same
# simulated time; `weft tune` ranks the runtime's candidates (the same
# plans but nccl) with the same times, so its fastest one is the same
# unless NCCL's choice is the fastest; and every path agrees on optimal's
# time.
# Run by CTest as: bash ranking.sh WEFT_BIN SOURCE_DIR SHARED_FIXTURES
WEFT=$1
SRC=$2
. "$SRC/tests/cli/lib/check.sh"
T=$(mktemp -d)
trap 'rm -rf "$T" "$CHECK_OUT_" "$CHECK_ERR_"' EXIT

# us with 3 decimals from a tuning table's seconds.
us() { python3 -c 'import sys; print("%.3f" % (float(sys.argv[1]) * 1e6))' "$1"; }

for case in a100:2,allreduce h100:2,allreduce a100:2,allgather dgx1,reducescatter; do
    spec=${case%,*}
    coll=${case#*,}
    echo "# $spec $coll"
    opt=$("$WEFT" plan "$spec" --coll "$coll" --algo optimal)
    line=$(grep '^vs fastest' <<<"$opt")
    # "vs fastest   at 1 GiB simulated (model gpu): optimal T1 us, NAME T2 us; ..."
    o_us=$(sed -E 's/.*: optimal ([0-9.]+) us, .*/\1/' <<<"$line")
    name=$(sed -E 's/.*: optimal [0-9.]+ us, (.*) ([0-9.]+) us; .*/\1/' <<<"$line")
    b_us=$(sed -E 's/.*: optimal [0-9.]+ us, (.*) ([0-9.]+) us; .*/\2/' <<<"$line")
    check "$spec $coll: plan --algo optimal names a fastest baseline" test -n "$name" -a -n "$b_us"

    cmp=$("$WEFT" plan "$spec" --coll "$coll" --compare)
    check "$spec $coll: plan --compare names $name at $b_us us" \
        grep -qF "fastest at 1 GiB simulated (model gpu): $name, $b_us us" <<<"$cmp"

    sim=$("$WEFT" sim "$spec" --coll "$coll" --compare --size 1G)
    check "$spec $coll: sim --compare: optimal at $o_us us" \
        grep -qE "^ +[0-9]+ +optimal +$o_us " <<<"$sim"
    check "$spec $coll: sim --compare: $name its fastest baseline" \
        grep -qF "vs $name, the fastest baseline" <<<"$sim"
    check "$spec $coll: sim --compare: $name at $b_us us" \
        grep -qE "^ +[0-9]+ +$(sed 's/[()]/\\&/g' <<<"$name") +$b_us " <<<"$sim"

    "$WEFT" tune "$spec" --colls "$coll" --sizes 1G:1G:x2 -o "$T/t.tune" >/dev/null
    entry=$(grep "^entry $coll 1073741824 " "$T/t.tune")
    first=$(cut -d' ' -f4 <<<"$entry")
    check "$spec $coll: tune ranks optimal first at $o_us us" \
        test "${first%%=*}" = optimal -a "$(us "${first#*=}")" = "$o_us"
    second=$(cut -d' ' -f5 <<<"$entry")
    t_name=${second%%=*}
    t_us=$(us "${second#*=}")
    check "$spec $coll: tune's fastest baseline $t_name takes what sim --compare says ($t_us us)" \
        grep -qE "^ +[0-9]+ +$t_name( \([0-9]+\))? +$t_us " <<<"$sim"
    # tune ranks the runtime's candidates: the same plans, but not nccl
    # (it builds one of them) nor NCCL's in-switch algorithms (no plan:
    # h100:2 reduces in the NVSwitch, faster than any rank-to-rank plan).
    base=${name%% *}
    if [ "$base" != nccl ]; then
        check "$spec $coll: tune's fastest baseline is $base" test "$t_name" = "$base"
    fi
done

finish
