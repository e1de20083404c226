# weft sim --trace: every trace Perfetto can draw, one track per rank and
# per busy link. For several plans (ring, a tree, the optimal plan, hier,
# NCCL's rings and trees in the gpu model), pipelined or not, over a sweep
# of sizes, lib/trace_check.py asserts that on every track the slices nest
# or are disjoint, that a rank has one track and a link one, that async
# events pair up, that every slice is a transfer named "KIND S→D chunk C"
# with args that agree or a segment "K transfers" listing them, and that
# every track is named; its summary gives the events per size on the rank
# and link tracks, the tracks (ranks + busy links) and the most transfers
# in flight at once on one track. Charged compute ops are slices on their
# rank's compute thread, one per compute op of the plan.
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
# time, so every event is one transfer: 4 rank and 8 link tracks.
traced ring "1K: 24 rank events, 48 link events, 12 tracks, at most 1 in flight
1M: 24 rank events, 48 link events, 12 tracks, at most 1 in flight
1G: 24 rank events, 48 link events, 12 tracks, at most 1 in flight
ok" switch:4 --model fluid --algo ring --coll allreduce --size 1K:1G:x1024
# Pipelined (4 slices) double binary tree: slices of one op and of the two
# trees overlap on a rank (3 at once), cut into segments: 8 + 16 tracks
# (the lanes before made 52).
traced dbtree "64K: 84 rank events, 199 link events, 24 tracks, at most 3 in flight
16M: 84 rank events, 199 link events, 24 tracks, at most 3 in flight
ok" switch:8 --algo dbtree --coll allreduce --slices 4 --size 64K:16M:x256
# The optimal allreduce on two DGX A100 boxes: many trees at once.
traced optimal "1M: 1170 rank events, 2167 link events, 112 tracks, at most 29 in flight
256M: 1118 rank events, 2422 link events, 112 tracks, at most 31 in flight
ok" a100:2 --model fluid --algo optimal --coll allreduce --size 1M:256M:x256
# hier with cut-through: ops stream what their deps deliver, so a rank's
# sends overlap (7 at once at 4M) where store and forward keeps them apart;
# at 4K the links' latencies (docs/presets.md) dominate and 2 do.
traced hier "4K: 464 rank events, 576 link events, 112 tracks, at most 2 in flight
4M: 464 rank events, 1024 link events, 112 tracks, at most 7 in flight
ok" a100:2 --algo hier --coll allreduce --cut-through --size 4K:4M:x1024
# A pipelined ring allgather on h100:2: 16 ranks x 15 steps x 8 slices.
traced ring8 "1M: 2906 rank events, 6361 link events, 58 tracks, at most 15 in flight
ok" h100:2 --algo ring --coll allgather --slices 8 --size 1M
# A binomial broadcast tree: ECMP spreads each op over many links.
traced binomial "32M: 12 rank events, 308 link events, 72 tracks, at most 5 in flight
ok" a100:2 --model fluid --algo binomial --coll broadcast --size 32M
# The gpu model (issue 29): NCCL's channels keep every slice of a rank in
# flight at once, so lanes gave each of the 24,960 slices at 1G a track of
# its own; now 16 rank tracks and 96 link tracks, up to 480 transfers at
# once in one segment.
traced gpu_nccl "1G: 3952 rank events, 10784 link events, 112 tracks, at most 480 in flight
ok" a100:2 --model gpu --algo nccl --coll allreduce --size 1G
traced gpu_ring "1M: 930 rank events, 2012 link events, 52 tracks, at most 5 in flight
1G: 944 rank events, 2124 link events, 52 tracks, at most 30 in flight
ok" a100:2 --model gpu --algo ring --coll allreduce --size 1M:1G:x1024

# Compute ops (issue 25): with --compute cpu each charged compute op is a
# slice on its rank's thread "compute" (one per rank: 112 + 16 tracks),
# named after its kind; the checker asserts seconds = bytes x s_per_b
# exactly and dur = seconds to the picosecond. Uncharged (--compute none)
# they stay zero-length "nop R" sends, and no compute slice is drawn.
traced quant_cpu "1M: 336 rank events, 467 link events, 128 tracks, at most 27 in flight
1M: compute aggregate 256, compress 32, decompress 496
ok" a100:2 --algo quant-2shot --compress int8 --coll allreduce --size 1M --compute cpu
traced quant_none "1M: 1120 rank events, 256 link events, 112 tracks, at most 27 in flight
ok" a100:2 --algo quant-2shot --compress int8 --coll allreduce --size 1M
traced sparse_cpu "1M: 360 rank events, 824 link events, 128 tracks, at most 27 in flight
1M: compute aggregate 256, compress 16, decompress 256, fill 16, hash 16
ok" a100:2 --algo sparse-hash --density 0.01 --coll allreduce --size 1M --compute cpu

# compute_match NAME scaled|unscaled PLAN-ARGS...: the trace NAME.json
# (at 1M) has one compute slice per compute op of the plan (at its 1G),
# with the op's id, rank and kind, and (scaled) its bytes scaled by 1M/1G;
# prints the first slice.
compute_match() {
    local name=$1 scaled=$2
    shift 2
    LAST="compute slices of $name.json = compute ops of weft plan $*"
    if ! "$WEFT" plan "$@" -o "$TMP/$name.plan" >/dev/null; then
        fail_ "weft plan failed"
        return
    fi
    local got
    got=$(python3 - "$TMP/$name.plan" "$TMP/$name.json" "$scaled" <<'PY'
import json, re, sys
ops = {}
for line in open(sys.argv[1]):
    m = re.match(r"^op (\d+) nop (\d+) compute=(\w+) bytes=(\d+)", line)
    if m:
        ops[int(m.group(1))] = (int(m.group(2)), m.group(3), int(m.group(4)) / 1024)
evs = [e for e in json.load(open(sys.argv[2]))["traceEvents"] if e.get("cat") == "compute"]
got = {e["args"]["op"]: (e["args"]["rank"], e["name"], e["args"]["bytes"]) for e in evs}
# quant-2shot's bytes scale in proportion (exactly: powers of two); a
# sparse plan is built for its size (its pairs are not in proportion).
scaled = sys.argv[3] == "scaled"
odd = [(o, got.get(o), v) for o, v in sorted(ops.items())
       if o not in got or got[o][:2] != v[:2] or (scaled and got[o][2] != v[2])]
if len(evs) != len(got) or len(got) != len(ops) or odd:
    print("trace %d slices, plan %d compute ops; differ at %s" % (len(evs), len(ops), odd[:3]))
else:
    e = min(evs, key=lambda e: e["args"]["op"])
    a = e["args"]
    print("%d ops; op %d %s: %s bytes x %r s/B = %r s, dur %s us"
          % (len(ops), a["op"], e["name"], a["bytes"], a["s_per_b"], a["seconds"], e["dur"]))
PY
)
    if [ "$got" = "$want" ]; then pass_; else fail_ "got: $got
  expected: $want"; fi
}
want="560 ops; op 720 hash: 31458 bytes x 2.2193333333333333e-09 s/B = 6.9815788e-05 s, dur 69.815788 us"
compute_match sparse_cpu unscaled a100:2 --coll allreduce --algo sparse-hash --density 0.01
want="784 ops; op 720 compress: 983040 bytes x 1.3513513513513514e-09 s/B = 0.0013284324324324326 s, dur 1328.432432 us"
compute_match quant_cpu scaled a100:2 --coll allreduce --algo quant-2shot --compress int8
LAST="no compute slices with --compute none"
if grep -q '"cat":"compute"' "$TMP/quant_none.json"; then fail_ "compute drawn"; else pass_; fi

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

# ... a compute slice whose seconds are not bytes x s_per_b (2^20 x 2^-30
# s is 2^-10 exactly), one lasting 2 ps longer than its seconds, one of
# another rank on rank 0's compute thread.
cat >"$TMP/comp.json" <<'JSON'
{"traceEvents":[
{"name":"process_name","ph":"M","pid":1,"args":{"name":"rank 0"}},
{"name":"thread_name","ph":"M","pid":1,"tid":1,"args":{"name":"compute"}},
{"name":"hash","cat":"compute","ph":"X","pid":1,"tid":1,"ts":0.0,"dur":976.5626,"args":{"op":0,"rank":0,"bytes":1048576,"seconds":0.0009765626,"s_per_b":9.3132257461547852e-10,"source":null}},
{"name":"fill","cat":"compute","ph":"X","pid":1,"tid":1,"ts":1000.0,"dur":976.562502,"args":{"op":1,"rank":0,"bytes":1048576,"seconds":0.0009765625,"s_per_b":9.3132257461547852e-10,"source":null}},
{"name":"fill","cat":"compute","ph":"X","pid":1,"tid":1,"ts":2000.0,"dur":976.5625,"args":{"op":2,"rank":1,"bytes":1048576,"seconds":0.0009765625,"s_per_b":9.3132257461547852e-10,"source":null}}
]}
JSON
LAST="trace_check comp.json"
got=$(python3 "$SRC/tests/cli/lib/trace_check.py" "$TMP/comp.json" 2>&1)
rc=$?
if [ "$rc" = 1 ]; then pass_; else fail_ "exit code $rc, expected 1"; fi
want="trace_check: $TMP/comp.json: compute 'hash': seconds 0.0009765626 is not bytes 1048576 x s_per_b 9.3132257461547852E-10
trace_check: $TMP/comp.json: compute 'fill': dur 976.562502 us is not its seconds 0.0009765625
trace_check: $TMP/comp.json: compute 'fill' of rank 1 on the track of rank 0"
if [ "$got" = "$want" ]; then pass_; else fail_ "trace_check said:
$got
  expected:
$want"; fi

# ... and a trace in lanes (a rank on two tracks, a link on two).
cat >"$TMP/lanes.json" <<'JSON'
{"traceEvents":[
{"name":"process_name","ph":"M","pid":1,"args":{"name":"rank 0"}},
{"name":"thread_name","ph":"M","pid":1,"tid":0,"args":{"name":"sends"}},
{"name":"thread_name","ph":"M","pid":1,"tid":1,"args":{"name":"sends 2"}},
{"name":"process_name","ph":"M","pid":3,"args":{"name":"links"}},
{"name":"thread_name","ph":"M","pid":3,"tid":0,"args":{"name":"r0 -> s0"}},
{"name":"thread_name","ph":"M","pid":3,"tid":1,"args":{"name":"r0 -> s0"}},
{"name":"copy 0→1 chunk 0","ph":"X","pid":1,"tid":0,"ts":0.0,"dur":2.0,"args":{"op":0,"kind":"copy","src":0,"dst":1,"chunk":0,"count":1,"slice":0,"slices":1,"bytes":1}},
{"name":"copy 0→1 chunk 1","ph":"X","pid":1,"tid":1,"ts":1.0,"dur":2.0,"args":{"op":1,"kind":"copy","src":0,"dst":1,"chunk":1,"count":1,"slice":0,"slices":1,"bytes":1}},
{"name":"copy 0→1 chunk 0","ph":"X","pid":3,"tid":0,"ts":0.0,"dur":2.0,"args":{"op":0,"kind":"copy","src":0,"dst":1,"chunk":0,"count":1,"slice":0,"slices":1,"bytes":1}},
{"name":"copy 0→1 chunk 1","ph":"X","pid":3,"tid":1,"ts":1.0,"dur":2.0,"args":{"op":1,"kind":"copy","src":0,"dst":1,"chunk":1,"count":1,"slice":0,"slices":1,"bytes":1}}
]}
JSON
LAST="trace_check lanes.json"
got=$(python3 "$SRC/tests/cli/lib/trace_check.py" "$TMP/lanes.json" 2>&1)
rc=$?
if [ "$rc" = 1 ]; then pass_; else fail_ "exit code $rc, expected 1"; fi
want="trace_check: $TMP/lanes.json: rank 0: 2 tracks, expected one
trace_check: $TMP/lanes.json: links: a link on several tracks: r0 -> s0"
if [ "$got" = "$want" ]; then pass_; else fail_ "trace_check said:
$got
  expected:
$want"; fi
finish
