# weft sim --trace: every trace Perfetto can draw. For several plans (ring,
# a tree, the optimal plan, hier), pipelined or not, over a sweep of sizes,
# lib/trace_check.py asserts that on every track the slices nest or are
# disjoint, that async events pair up, that every slice is named "KIND
# S→D chunk C" with args that agree, and that every track is named; its
# summary gives the slices per size (ops x slices on the rank tracks, one
# per link of each route on the link tracks) and the lanes used.
# Run by CTest as: bash trace.sh WEFT_BIN SOURCE_DIR SHARED_FIXTURES
WEFT=$1
SRC=$2
. "$SRC/tests/cli/lib/check.sh"
if ! command -v python3 >/dev/null 2>&1; then
    echo "python3 not found: skipped" >&2
    exit 77
fi
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"; rm -f "$CHECK_OUT_" "$CHECK_ERR_"' EXIT

# traced NAME EXPECTED-SUMMARY WEFT-ARGS...: simulates with --trace, then
# checks the trace and compares the checker's summary.
traced() {
    local name=$1 want=$2
    shift 2
    run sim "$@" --trace "$TMP/$name.json"
    expect_rc 0
    LAST="trace_check $name.json ($*)"
    local got
    got=$(python3 "$SRC/tests/cli/lib/trace_check.py" "$TMP/$name.json" 2>&1)
    if [ "$got" = "$want" ]; then pass_; else fail_ "trace_check said:
$got
  expected:
$want"; fi
}

# The ring allreduce on switch:4: 2(N-1) = 6 steps of 4 ranks = 24 ops, on
# two links each (rank -> sw0 -> rank); every rank sends one slice at a
# time, so one lane per rank and per link.
traced ring "1K: 24 rank slices, 48 link slices, 12 tracks, at most 1 lanes
1M: 24 rank slices, 48 link slices, 12 tracks, at most 1 lanes
1G: 24 rank slices, 48 link slices, 12 tracks, at most 1 lanes
ok" switch:4 --model fluid --algo ring --coll allreduce --size 1K:1G:x1024
# Pipelined (4 slices) double binary tree: slices of one op and of the two
# trees overlap on a rank, so its sends take 3 lanes.
traced dbtree "64K: 112 rank slices, 224 link slices, 52 tracks, at most 3 lanes
16M: 112 rank slices, 224 link slices, 52 tracks, at most 3 lanes
ok" switch:8 --algo dbtree --coll allreduce --slices 4 --size 64K:16M:x256
# The optimal allreduce on two DGX A100 boxes: many trees at once.
traced optimal "1M: 1170 rank slices, 2536 link slices, 1041 tracks, at most 29 lanes
256M: 1170 rank slices, 2536 link slices, 1153 tracks, at most 31 lanes
ok" a100:2 --model fluid --algo optimal --coll allreduce --size 1M:256M:x256
# hier with cut-through: ops stream what their deps deliver, so a rank's
# sends overlap (7 lanes at 4M) where store and forward keeps them apart;
# at 4K the links' latencies (docs/presets.md) dominate and 2 lanes do.
traced hier "4K: 256 rank slices, 576 link slices, 128 tracks, at most 2 lanes
4M: 256 rank slices, 576 link slices, 464 tracks, at most 7 lanes
ok" a100:2 --algo hier --coll allreduce --cut-through --size 4K:4M:x1024
# A pipelined ring allgather on h100:2: 16 ranks x 15 steps x 8 slices.
traced ring8 "1M: 1920 rank slices, 5280 link slices, 402 tracks, at most 15 lanes
ok" h100:2 --algo ring --coll allgather --slices 8 --size 1M
# A binomial broadcast tree: ECMP spreads each op over many links.
traced binomial "32M: 15 rank slices, 254 link slices, 265 tracks, at most 5 lanes
ok" a100:2 --model fluid --algo binomial --coll broadcast --size 32M

# The checker itself fails on a trace Perfetto cannot draw: two slices on
# one track that overlap without nesting, and an unpaired async begin.
cat >"$TMP/bad.json" <<'JSON'
{"traceEvents":[
{"name":"process_name","ph":"M","pid":1,"args":{"name":"rank 0"}},
{"name":"thread_name","ph":"M","pid":1,"tid":0,"args":{"name":"sends"}},
{"name":"copy 0→1 chunk 0","ph":"X","pid":1,"tid":0,"ts":0.0,"dur":2.0,"args":{"op":0,"kind":"copy","src":0,"dst":1,"chunk":0,"count":1,"slice":0,"slices":1,"bytes":1}},
{"name":"copy 0→1 chunk 1","ph":"X","pid":1,"tid":0,"ts":1.0,"dur":2.0,"args":{"op":1,"kind":"copy","src":0,"dst":1,"chunk":1,"count":1,"slice":0,"slices":1,"bytes":1}},
{"name":"x","cat":"c","ph":"b","pid":1,"id":7,"ts":0.0}
]}
JSON
LAST="trace_check bad.json"
got=$(python3 "$SRC/tests/cli/lib/trace_check.py" "$TMP/bad.json" 2>&1)
rc=$?
if [ "$rc" = 1 ]; then pass_; else fail_ "exit code $rc, expected 1"; fi
want="trace_check: $TMP/bad.json: async (1, 'c', 7): 1 begin events without an end
trace_check: $TMP/bad.json: track (1, 0) (rank 0 / sends): slice [1.0, 3.0] 'copy 0→1 chunk 1' overlaps one ending at 2.0"
if [ "$got" = "$want" ]; then pass_; else fail_ "trace_check said:
$got
  expected:
$want"; fi
finish
