# The ranking paths agree (docs/architecture.md, "The schedule registry"):
# on the same fabric and size, `weft plan --algo optimal` ("vs fastest"),
# `weft plan --compare` ("fastest at 1 GiB simulated"), `weft sim
# --compare` (its fastest baseline) name the same baseline with the same
# simulated time; `weft tune` ranks the runtime's candidates (the same
# plans but nccl) with the same times, so its fastest one is the same
# unless NCCL's choice is the fastest; and every path agrees on optimal's
# time. `weft step --coll-algo best` is the fourth path: a Chakra trace
# of one collective of 1 GiB over every rank (one group, the fabric
# itself) chooses what `weft sim --compare` ranks first, with its time to
# the bit, and that is tune's first and optimal's time when it is a plan
# the runtime can run.
# Run by CTest as: bash ranking.sh WEFT_BIN SOURCE_DIR SHARED_FIXTURES
WEFT=$1
SRC=$2
. "$SRC/tests/cli/lib/check.sh"
T=$(mktemp -d)
trap 'rm -rf "$T" "$CHECK_OUT_" "$CHECK_ERR_"' EXIT

# A Chakra trace (tests/fixtures/chakra/gen.py's encoding) of one
# collective of 1 GiB over every rank: $1 prefix, $2 ranks, $3 comm_type
# (0 allreduce, 2 allgather, 7 reducescatter).
one_coll_trace() {
    python3 - "$@" <<'PY'
import sys
prefix, ranks, ctype = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
def varint(v):
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        out.append(b | (0x80 if v else 0))
        if not v:
            return bytes(out)
def key(num, wire): return varint(num << 3 | wire)
def ln(num, data): return key(num, 2) + varint(len(data)) + data
def vi(num, v): return key(num, 0) + varint(v)
def attr_u64(name, v): return ln(10, ln(1, name.encode()) + vi(13, v))
node = (vi(1, 1) + ln(2, b"coll") + vi(3, 7) + attr_u64("comm_type", ctype)
        + attr_u64("comm_size", 1 << 30))
data = bytearray()
for m in (ln(1, b"0.0.4"), node):
    data += varint(len(m)) + m
for r in range(ranks):
    with open("%s.%d.et" % (prefix, r), "wb") as f:
        f.write(data)
PY
}

# The first row of weft sim --compare --json's only size, and the step's
# only choice, as "ALGO|TIME_S" (what ran, its time as printed).
sim_first() {
    python3 -c 'import json,sys; r=json.load(sys.stdin)["sizes"][0]["results"][0]; print("%s|%r" % (r.get("runs", r["algo"]), r["time_s"]))'
}
step_chosen() {
    python3 -c 'import json,sys; c=json.load(sys.stdin)["chosen"]; assert len(c) == 1; print("%s|%r" % (c[0]["algo"], c[0]["time_s"]))'
}

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

    # The step: one collective of 1 GiB over every rank.
    command -v python3 >/dev/null 2>&1 || continue
    ranks=$(sed -nE "1s/.* \(([0-9]+) ranks\).*/\1/p" <<<"$sim")
    case $coll in allreduce) ct=0 ;; allgather) ct=2 ;; reducescatter) ct=7 ;; esac
    mkdir -p "$T/$spec-$coll"
    one_coll_trace "$T/$spec-$coll/one" "$ranks" "$ct"
    want=$("$WEFT" sim "$spec" --coll "$coll" --compare --size 1G --json | sim_first)
    got=$("$WEFT" step --chakra "$T/$spec-$coll/one" --fabric "$spec" --coll-algo best --json | step_chosen)
    LAST="$spec $coll: step --coll-algo best chooses sim --compare's first ($want)"
    if [ -n "$want" ] && [ "$got" = "$want" ]; then pass_; else fail_ "step chose $got"; fi
    s_us=$(us "${got#*|}")
    if [ "${got%%|*}" = optimal ]; then
        check "$spec $coll: the step's optimal takes plan's and tune's $o_us us" \
            test "$s_us" = "$o_us" -a "${first%%=*}" = optimal
    fi
done

# A DLRM step's embedding all-to-alls under --coll-algo best: the forward
# and backward matrices, as `weft traffic embedding` writes them, each take
# what `weft sim --compare --traffic` ranks first, to the bit, and no more
# than NCCL's direct copies.
if command -v python3 >/dev/null 2>&1; then
    echo "# dlrm on h100:2"
    EMB=(--tables "100*1Mx128/zipf=1.05" --sharding rw)
    step=(step --fabric h100:2 --gpu h100-sxm --model dlrm "${EMB[@]}" --global-batch-size 1024
        --bottom-mlp 512-128 --top-mlp 1024-1 --json)
    "$WEFT" traffic embedding --gpus 16 --batch 64 "${EMB[@]}" -o "$T/fwd.tm"
    "$WEFT" traffic embedding --gpus 16 --batch 64 "${EMB[@]}" --backward -o "$T/bwd.tm"
    fwd=$("$WEFT" sim h100:2 --coll alltoall --compare --traffic "$T/fwd.tm" --json | sim_first)
    bwd=$("$WEFT" sim h100:2 --coll alltoall --compare --traffic "$T/bwd.tm" --json | sim_first)
    "$WEFT" "${step[@]}" --coll-algo best >"$T/best.json"
    "$WEFT" "${step[@]}" >"$T/nccl.json"
    got=$(python3 -c 'import json,sys
j = json.load(open(sys.argv[1]))
c = [x for x in j["chosen"] if x["matrix"]]
print("%s|%r;%s|%r;%r;%r" % (c[0]["algo"], c[0]["time_s"], c[1]["algo"], c[1]["time_s"],
                            j["a2a_fwd_s"], j["a2a_bwd_s"]))' "$T/best.json")
    LAST="dlrm: the forward all-to-all takes sim --compare's first ($fwd)"
    if [ -n "$fwd" ] && [ "$(cut -d';' -f1 <<<"$got")" = "$fwd" ]; then pass_; else fail_ "got $got"; fi
    LAST="dlrm: the backward all-to-all takes sim --compare's first ($bwd)"
    if [ -n "$bwd" ] && [ "$(cut -d';' -f2 <<<"$got")" = "$bwd" ]; then pass_; else fail_ "got $got"; fi
    check "dlrm: the step's all-to-all times are the chosen ones" \
        test "$(cut -d';' -f3 <<<"$got")" = "${fwd#*|}" -a "$(cut -d';' -f4 <<<"$got")" = "${bwd#*|}"
    check "dlrm: best is no slower than NCCL's direct all-to-alls" python3 -c 'import json,sys
b, n = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
assert b["a2a_fwd_s"] <= n["a2a_fwd_s"] and b["a2a_bwd_s"] <= n["a2a_bwd_s"]
assert n["chosen"] == [] and b["step_s"] <= n["step_s"]' "$T/best.json" "$T/nccl.json"
    # --a2a-algo NAME: each all-to-all is NAME's plan of its matrix, what
    # weft sim --algo NAME --traffic times.
    for algo in optimal hier; do
        want=$(for m in fwd bwd; do "$WEFT" sim h100:2 --coll alltoall --algo $algo --traffic "$T/$m.tm" --json |
            python3 -c 'import json,sys; print(repr(json.load(sys.stdin)["time_s"]))'; done | tr '\n' ' ')
        got=$("$WEFT" "${step[@]}" --a2a-algo $algo | python3 -c 'import json,sys
j = json.load(sys.stdin)
assert all(c["algo"] == sys.argv[1] for c in j["chosen"] if c["matrix"])
print("%r %r " % (j["a2a_fwd_s"], j["a2a_bwd_s"]))' $algo)
        LAST="dlrm: --a2a-algo $algo takes weft sim --algo $algo's times ($want)"
        if [ "$got" = "$want" ]; then pass_; else fail_ "got $got"; fi
    done
fi

finish
