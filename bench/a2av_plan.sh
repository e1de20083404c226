#!/bin/bash
# Alltoallv plans on the runtime against weft's own alltoallv, one matrix:
# a seeded MoE dispatch (`weft traffic moe`, zipf-skewed experts) on RANKS
# ranks over shared memory, run by `weft perf alltoall --traffic F` with
# weft_alltoallv's own pairwise exchange, then with WEFT_PLAN set to the
# alltoallv plan of that matrix of each algorithm (weft plan --traffic F on
# switch:RANKS, and hier and flash on two boxes when RANKS is even), every
# element checked. Prints one line per schedule: time per call (us, the
# slowest rank's mean), algbw and busbw (nccl-tests' alltoall columns, size
# = the busiest row), #wrong, and the time against weft_alltoallv's.
# Never fails on time; exits 1 only when a run fails or a result is wrong.
# Usage: bench/a2av_plan.sh [BUILD_DIR [RANKS [TOKENS [ITERS]]]]
#   (default build, 4 ranks, 4096 tokens of 4 KiB hidden state (about 16
#   MiB a rank), 20 iterations)
set -u
build=${1:-build} n=${2:-4} tokens=${3:-4096} iters=${4:-20}
weft=$build/weft
[ -x "$weft" ] || { echo "bench/a2av_plan.sh: $weft not built" >&2; exit 1; }
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
"$weft" traffic moe --ranks "$n" --experts $((2 * n)) --topk 2 --tokens "$tokens" \
  --hidden-bytes 4096 --skew zipf:1.2 --seed 7 -o "$T/m.tm" >/dev/null || exit 1
"$weft" traffic show "$T/m.tm" | sed 's/^/# /'
# Two boxes of n/2 ranks (fast links inside, a slower network between).
if [ $((n % 2)) = 0 ]; then
  {
    for ((r = 0; r < n; r++)); do echo "node g$r compute host=$((r * 2 / n))"; done
    echo "node nv0 switch"; echo "node nv1 switch"; echo "node net switch"
    for ((r = 0; r < n; r++)); do
      echo "duplex g$r nv$((r * 2 / n)) 300GB/s"; echo "duplex g$r net 50GB/s"
    done
  } >"$T/boxes.topo"
fi
algos="direct pairwise bruck"
for a in $algos; do
  "$weft" plan "switch:$n" --coll alltoall --algo "$a" --traffic "$T/m.tm" -o "$T/$a.plan" \
    >/dev/null || exit 1
done
if [ -f "$T/boxes.topo" ]; then
  for a in hier flash; do
    "$weft" plan "$T/boxes.topo" --coll alltoall --algo "$a" --traffic "$T/m.tm" \
      -o "$T/$a.plan" >/dev/null || exit 1
    algos="$algos $a"
  done
fi
status=0
base=
printf '# %u ranks, shm, uint8, %s iterations\n' "$n" "$iters"
printf '%-26s %12s %10s %10s %8s %10s\n' schedule 'time(us)' 'algbw' 'busbw' '#wrong' 'vs own'
for s in own $algos; do
  if [ "$s" = own ]; then
    out=$(WEFT_TRANSPORT=shm "$weft" launch -n "$n" -- "$weft" perf alltoall \
      --traffic "$T/m.tm" -d uint8 -n "$iters" -w 3 2>&1)
    name="weft_alltoallv (own)"
  else
    out=$(WEFT_TRANSPORT=shm WEFT_PLAN="$T/$s.plan" "$weft" launch -n "$n" -- "$weft" perf \
      alltoall --traffic "$T/m.tm" -d uint8 -n "$iters" -w 3 2>&1)
    name="plan $s"
  fi
  row=$(printf '%s\n' "$out" | grep -v '^#' | grep 'uint8' | head -1)
  if [ -z "$row" ]; then
    printf '%s\n' "$out" >&2
    status=1
    continue
  fi
  # size count type redop root time algbw busbw #wrong ...
  set -- $row
  [ "$9" = 0 ] || status=1
  [ -z "$base" ] && base=$6
  printf '%-26s %12s %10s %10s %8s %9.2fx\n' "$name" "$6" "$7" "$8" "$9" \
    "$(awk -v a="$6" -v b="$base" 'BEGIN { print a / b }')"
done
exit $status
