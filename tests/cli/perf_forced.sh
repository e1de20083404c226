# weft perf with a schedule forced through the environment (WEFT_ALGO,
# WEFT_PLAN): the header names it, sizes are rounded down to its chunks as
# for --plan (before, WEFT_ALGO=ring failed at the first size), every
# result is exact; error lines of several ranks stay whole lines; bad flags
# say what was expected.
# Run by CTest as: bash perf_forced.sh WEFT_BIN SOURCE_DIR SHARED_FIXTURES
WEFT=$1
SRC=$2
. "$SRC/tests/cli/lib/check.sh"
PLAN=$SRC/tests/fixtures/plans/ring_allreduce_4.plan

# ring on switch:3 cuts allreduce into 3 chunks: 3 floats = 12 B units.
WEFT_ALGO=ring run launch -n 3 -- "$WEFT" perf allreduce -b 8 -e 1K -f 8 -n 1 -w 0 -c 1
expect_rc 0
expect_out_has "# weft perf allreduce: 3 ranks, transport shm, 1 iterations, 0 warmup, check 1, WEFT_ALGO=ring on switch:3, 3 chunks"
expect_out_has "
           0             0     float     sum      -1"
expect_out_has "
          60            15     float     sum      -1"
expect_out_has "
         504           126     float     sum      -1"
expect_out_has "# Out of bounds values : 0 OK"
rows=$(printf '%s\n' "$OUT" | grep -vc '^#')
[ "$rows" = 3 ] && pass_ || fail_ "expected 3 rows (0, 60, 504), got $rows"

# Per-rank collectives: ring's allgather is one chunk per rank (plan chunks
# 1), so units of 4 ranks x 2 B; over TCP.
WEFT_TRANSPORT=tcp WEFT_ALGO=ring run launch -n 4 -- "$WEFT" perf allgather -d int16 -b 100 -e 100 -n 1 -w 0
expect_rc 0
expect_out_has "check 1, WEFT_ALGO=ring on switch:4
#"
expect_out_has "
          96            48     int16    none      -1"
expect_out_has "# Out of bounds values : 0 OK"

# The fabric names where the algorithm is built; ring allreduce on ring:4
# is 4 chunks of 2 B: 1030 B rounds to 1024.
WEFT_FABRIC=ring:4 WEFT_ALGO=ring run launch -n 4 -- "$WEFT" perf allreduce -d half -o max -b 1030 -e 1030 -n 1 -w 0
expect_rc 0
expect_out_has "WEFT_ALGO=ring on ring:4, 4 chunks"
expect_out_has "
        1024           512      half     max      -1"
expect_out_has "# Out of bounds values : 0 OK"

# A forced plan file: 4 chunks of float = 16 B units.
WEFT_PLAN=$PLAN run launch -n 4 -- "$WEFT" perf allreduce -d int32 -b 20 -e 40 -f 2 -n 1 -w 0
expect_rc 0
expect_out_has "WEFT_PLAN=$PLAN, 4 chunks"
expect_out_has "
          16             4     int32     sum      -1"
expect_out_has "
          32             8     int32     sum      -1"
expect_out_has "# Out of bounds values : 0 OK"

# What the forced schedule cannot run fails with the runtime's message, on
# whole lines (each rank's "weft: " and its message used to be separate
# writes that interleaved: "weft: weft: perf: rank 1: ...").
WEFT_ALGO=ring run launch -n 4 -- "$WEFT" perf alltoall -b 64 -e 64 -n 1 -w 0
expect_rc 1
bad=$(printf '%s\n' "$ERR" | grep -v "^weft: perf: rank [0-3]: comm: algorithm ring (WEFT_ALGO) for alltoall on switch:4: algorithm 'ring' does not build alltoall (it builds: allgather, reducescatter, allreduce, broadcast, reduce)$" |
      grep -v "^weft: launch: rank [0-3] (pid [0-9]*) exited with status 1; the other ranks were stopped$")
[ -z "$bad" ] && pass_ || fail_ "stderr lines not whole: $bad"
WEFT_PLAN=$PLAN run launch -n 4 -- "$WEFT" perf allgather -b 64 -e 64 -n 1 -w 0
expect_rc 1
expect_err_has "comm: the plan $PLAN (WEFT_PLAN) is for allreduce; it cannot run allgather"
# A checkout far deeper than usual (15 folders of 200 characters, about
# 3,000 bytes of path): the header, the runtime's messages and a reader's
# name the plan by its whole path (a 64-byte copy once dropped its start).
deep=$(mktemp -d /tmp/weft-deep.XXXXXX)
dir=$deep
for c in a b c d e f g h i j k l m n o; do dir=$dir/$(printf "%200s" "" | tr ' ' $c); done
mkdir -p "$dir" && cp "$PLAN" "$dir/"
DEEP=$dir/ring_allreduce_4.plan
WEFT_PLAN=$DEEP run launch -n 4 -- "$WEFT" perf allreduce -d int32 -b 16 -e 16 -n 1 -w 0
expect_rc 0
expect_out_has "# weft perf allreduce: 4 ranks, transport shm, 1 iterations, 0 warmup, check 1, WEFT_PLAN=$DEEP, 4 chunks
#"
WEFT_PLAN=$DEEP run launch -n 4 -- "$WEFT" perf allgather -b 64 -e 64 -n 1 -w 0
expect_rc 1
# Whichever rank fails first says it on a whole line (launch stops the rest).
printf '%s\n' "$ERR" | sed 's/^weft: perf: rank [0-3]: //' |
    grep -qxF "comm: the plan $DEEP (WEFT_PLAN) is for allreduce; it cannot run allgather" &&
    pass_ || fail_ "no whole line names the plan $DEEP: $ERR"
run verify "$dir/missing.plan"
expect_rc 1
expect_err "weft: $dir/missing.plan: cannot open: No such file or directory"
rm -rf "$deep"

# A misspelt algorithm fails init (it used to pass init, print the header
# and fail the first call), as does a bad parameter.
WEFT_ALGO=nosuch run launch -n 2 -- "$WEFT" perf allreduce -b 64 -e 64 -n 1 -w 0
expect_rc 1
expect_out ""
expect_err_has "weft: comm: unknown algorithm 'nosuch' (WEFT_ALGO; weft plan --list lists them)"
WEFT_ALGO=rings:0 run launch -n 2 -- "$WEFT" perf allreduce -b 64 -e 64 -n 1 -w 0
expect_rc 1
expect_out ""
expect_err_has "weft: comm: unknown algorithm 'rings:0' (WEFT_ALGO; weft plan --list lists them)"

# Bad flags name the flag, the value and what is expected.
run perf allreduce -b 1X
expect_rc 2
expect_err_has "weft: bad -b '1X': expected a number of bytes with an optional unit: K, M, G = 2^10, 2^20, 2^30 (as nccl-tests; also KiB, MiB, GiB), KB, MB, GB = 10^3, 10^6, 10^9; e.g. 4096, 64K, 1.5G, 1GiB; at most 2^40 bytes"
run perf allreduce -e 2T
expect_rc 2
expect_err_has "weft: bad -e '2T': expected a number of bytes with an optional unit: K, M, G = 2^10, 2^20, 2^30 (as nccl-tests; also KiB, MiB, GiB), KB, MB, GB = 10^3, 10^6, 10^9; e.g. 4096, 64K, 1.5G, 1GiB; at most 2^40 bytes"
run perf allreduce -f 1
expect_rc 2
expect_err_has "weft: bad -f '1': expected an integer 2 .. 1048576"
run perf allreduce -n 0
expect_rc 2
expect_err_has "weft: bad -n '0': expected an integer 1 .. 1073741824"
run perf allreduce -c 2
expect_rc 2
expect_err_has "weft: bad -c '2': expected 0 or 1"
run perf allreduce -o avg
expect_rc 2
expect_err_has "weft: bad -o 'avg': expected sum, prod, min or max"
WEFT_TIMEOUT=1e9 run launch -n 2 -- "$WEFT" perf allreduce
expect_rc 1
expect_err_has "weft: WEFT_TIMEOUT: expected seconds in (0, 4000000], got '1e9'"
run perf reduce -r -1
expect_rc 2
expect_err_has "weft: bad -r '-1': expected a rank 0 .. 4095"

# Once joined, no rank keeps a listening socket: the rendezvous socket weft
# launch handed to rank 0 stayed open for the whole run, where a stranger's
# connection sat unanswered (the transports' listeners close after setup).
# Synchronised on events only (under load the first row once took longer
# than the 10 s this used to wait): the first row read from a FIFO says the
# job has joined; the ranks are then stopped, so they are still there, as
# they were, while their sockets are listed (the job had 15 sizes to go).
if command -v ss >/dev/null; then
    fifo=$(mktemp -u)
    mkfifo "$fifo"
    "$WEFT" launch -n 2 -- "$WEFT" perf allreduce -b 1K -e 32M -n 100 -w 0 -c 0 >"$fifo" 2>&1 &
    lpid=$!
    exec 3<"$fifo"
    seen=""
    while IFS= read -r line <&3; do
        seen+="$line"$'\n'
        [[ $line =~ ^\ *1024\  ]] && break
    done
    ranks=$(pgrep -P $lpid | tr '\n' ' ')
    for r in $ranks; do kill -STOP "$r"; done
    listening=""
    for r in $ranks; do listening+=$(ss -ltnpH | grep "pid=$r,"); done
    LAST="launch -n 2 perf (listening sockets of ranks $ranks)"
    [[ $seen =~ (^|$'\n')\ *1024\  ]] && [ -n "$ranks" ] && pass_ ||
        fail_ "the job did not start: $seen"
    [ -z "$listening" ] && pass_ || fail_ "a rank still listens: $listening"
    kill $lpid 2>/dev/null
    for r in $ranks; do kill -CONT "$r" 2>/dev/null; done
    wait $lpid 2>/dev/null
    exec 3<&-
    rm -f "$fifo"
fi
finish
