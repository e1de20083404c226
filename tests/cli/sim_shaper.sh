# Shaped links (burst= peak=, docs/topo-format.md; docs/sim.md "Shaped
# links") through the command line, on the emulated fabric of
# tests/netns/fabric.topo (tbf's buckets of docs/netns.md): the figures the
# runtime model printed when the shaper was added (bench/sim_shaper prints
# the same table), to 1e-9 relative, and the parser's messages.
#   ring plan, 64 KiB: 4.051 ms on the links alone, 3.597 ms from full
#     buckets (tbf's initial burst), 3.961 ms back to back (weft perf's
#     iterations: a ring keeps h3's link busy, so its buckets start nearly
#     empty);
#   dbtree, 64 KiB: 3.922 ms on the links alone, 2.796 ms from full buckets,
#     the same back to back (its links idle long enough to refill).
# Run by CTest as: bash sim_shaper.sh WEFT_BIN SOURCE_DIR SHARED_FIXTURES
WEFT=$1
. "$2/tests/cli/lib/check.sh"
TOPO=$2/tests/netns/fabric.topo
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT

time_of() { sed -n 's/^  "time_s": \([0-9.e+-]*\),$/\1/p' <<<"$OUT"; }
near() { # DESC GOT WANT
    LAST="$1: time_s $2, pinned $3"
    check "$LAST" awk -v g="$2" -v w="$3" 'BEGIN { d = g - w; if (d < 0) d = -d
        exit !(g != "" && d <= 1e-9 * w) }'
}

sed 's/ burst=.*$//' "$TOPO" >"$T/plain.topo"
run plan "$TOPO" --coll allreduce --algo ring -o "$T/ring.plan"
expect_rc 0
run sim "$T/plain.topo" --plan "$T/ring.plan" --size 64K --json
expect_rc 0
near "ring 64K, links only" "$(time_of)" 0.004051155659427006
run sim "$TOPO" --plan "$T/ring.plan" --size 64K --json
expect_rc 0
expect_out_has '"model": "runtime"'
near "ring 64K, full buckets" "$(time_of)" 0.003596557400169239
run sim "$TOPO" --plan "$T/ring.plan" --size 64K --back-to-back --json
expect_rc 0
near "ring 64K, back to back" "$(time_of)" 0.003961155659427006
# --algo ring on a shaped fabric is the ring plan (buckets are simulated
# for plans), on the plain one the ring on symmetry classes: the same times.
run sim "$TOPO" --algo ring --coll allreduce --size 64K --back-to-back --json
near "--algo ring 64K, back to back" "$(time_of)" 0.003961155659427006
run sim "$T/plain.topo" --algo ring --coll allreduce --size 64K --json
near "--algo ring 64K, links only" "$(time_of)" 0.004051155659427006
run sim "$T/plain.topo" --algo dbtree --coll allreduce --size 64K --json
near "dbtree 64K, links only" "$(time_of)" 0.0039220786154652056
run sim "$TOPO" --algo dbtree --coll allreduce --size 64K --json
near "dbtree 64K, full buckets" "$(time_of)" 0.0027957392110246936
run sim "$TOPO" --algo dbtree --coll allreduce --size 64K --back-to-back --json
near "dbtree 64K, back to back" "$(time_of)" 0.0027957392110246936
# Without shapers --back-to-back changes nothing.
run sim "$T/plain.topo" --plan "$T/ring.plan" --size 64K --back-to-back --json
near "ring 64K, links only, back to back" "$(time_of)" 0.004051155659427006

# topo show writes the shapers back, one duplex line per link pair.
run topo show "$TOPO"
expect_rc 0
expect_out_has "duplex h3 br 0.024817GB/s burst=10165 peak=1.3GB/s"

printf 'node a compute host=0\nnode s switch\nduplex a s 1GB/s 1us burst=16\n' >"$T/bad.topo"
run topo show "$T/bad.topo"
expect_rc 1
expect_err "weft: $T/bad.topo:3:22: burst= needs peak=: a shaper's bucket passes its bytes at the peak rate of the wire under it (tc-tbf(8))"
printf 'node a compute host=0\nnode s switch\nduplex a s 1GB/s burst=16 peak=0.5GB/s\n' >"$T/bad.topo"
run topo show "$T/bad.topo"
expect_rc 1
expect_err "weft: $T/bad.topo:3:27: peak=0.5GB/s must exceed the link's bandwidth '1GB/s'"
finish
