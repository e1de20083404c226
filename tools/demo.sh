#!/bin/sh
# `make demo`: what weft says about one fabric, section by section.
#
#   sh tools/demo.sh [WEFT_BINARY] [SPEC]     (defaults: build/weft, a100:2)
#
# Each capability adds one section: a function section_NAME that prints a
# heading with `heading` and runs the weft commands that show it, plus one
# line in the list at the bottom. Sections run in order; the first command
# that fails stops the demo with its exit code, so a broken capability
# cannot hide behind a pretty summary.
set -eu

WEFT=${1:-build/weft}
SPEC=${2:-a100:2}

if [ ! -x "$WEFT" ]; then
    echo "demo: no weft binary at '$WEFT' (run 'make' first)" >&2
    exit 1
fi

heading() {
    printf '\n== %s ==\n\n' "$1"
}

# The fabric: what it is made of and how much each rank can send.
section_fabric() {
    heading "fabric $SPEC"
    "$WEFT" topo stats "$SPEC"
}

# The best any schedule could do: the exact optimum and what limits it.
section_bound() {
    heading "bound: the fastest any allgather could run on $SPEC"
    "$WEFT" bound "$SPEC" --coll allgather
}

# A schedule that reaches the bound: trees packed per rank (a reduce-scatter
# then an allgather), compared with the best baseline (nccl, rings at NCCL's
# channel count, the classic algorithms) and with what NCCL runs.
section_optimal() {
    heading "optimal: an allreduce schedule that reaches the bound on $SPEC"
    "$WEFT" plan "$SPEC" --coll allreduce --algo optimal
}

# The classic algorithms' throughput limits side by side.
section_plans() {
    heading "plans: classic allgather and allreduce schedules on $SPEC"
    "$WEFT" plan "$SPEC" --coll allgather --compare
    echo
    "$WEFT" plan "$SPEC" --coll allreduce --compare
}

# What NCCL would run: its channels and its choice of algorithm and
# protocol per size, from its own tuning model, simulated.
section_nccl() {
    heading "nccl: what NCCL runs for allreduce on $SPEC, size by size"
    "$WEFT" sim "$SPEC" --coll allreduce --algo nccl --size 1K:1G:x32
}

# Every schedule simulated with links shared fairly, sorted by time under
# the exact bound, executed as NCCL would run it on these GPUs (the gpu
# model, docs/sim.md): the protocol NCCL picks for the size, its per-hop
# and launch latencies, data forwarded as it arrives, so that trees fill:
# the optimal plan then comes within its latencies of the bound.
section_sim() {
    heading "sim: every allreduce schedule on $SPEC at 1 GiB, simulated, vs the bound"
    "$WEFT" sim "$SPEC" --coll allreduce --size 1G --compare
}

echo "weft demo: $("$WEFT" --version) on $SPEC"
section_fabric
section_bound
section_optimal
section_plans
section_nccl
section_sim
