#!/bin/bash
# Disagreeing small calls through the ring of slots (tests/mpi/pmpi_tiny.c
# --mismatch, CTest pmpi_tiny_mismatch_test) at 2, 3 and 4 ranks: an
# allreduce whose counts differ fails on every rank; a broadcast whose
# ranks name different roots and a reduce likewise fail on every rank,
# with the same message, at that call on the ranks that found it (at least
# one) and at the next call on the communicator (an allreduce) on those
# that returned before; a reduce-scatter whose last rank's recvcounts
# differ (the same sum) likewise, in the call on the ranks with a block of
# their own (which compare every rank's recvcounts), at the next call on a
# rank without one (the last at 2 ranks: recvcounts 2 0), which returned
# once its input was out; at 3 and 4 ranks, a reduce of rank 0 to rank 1
# while the others broadcast from rank 2 likewise; the world communicator
# still works after. Each run has
# 120 s, so that a hang fails the test instead of blocking it.
# Usage: pmpi_tiny_mismatch.sh PMPI_TINY LIBWEFT_MPI_SO MPIRUN
set -u
prog=$1 lib=$2 mpirun=${3:-mpirun}
. "$(dirname "$0")/lib/mpirun_env.sh"
# The defaults: small calls go through the ring.
unset WEFT_PMPI_SMALL

ar="comm: ranks disagree on the count of allreduce: rank 0 has 2, rank %d has 3"
bc="comm: ranks disagree on the root of broadcast: rank 0 has 0, rank 1 has 1"
rd="comm: ranks disagree on the root of reduce: rank 0 has 1, rank 1 has 0"
mixmsg="comm: ranks disagree on the collective: rank 0 called reduce, rank 1 broadcast"
rs="comm: ranks disagree on the recvcounts of reduce_scatter: rank 0 has recvcounts[0] = 1, rank %d has 2"
for np in 2 3 4; do
  mpirun_ranks 120 -np "$np" -x LD_PRELOAD="$lib" -x WEFT_LOG=info "$prog" --mismatch
  rc=$?
  [ $rc = 0 ] || { fail "np $np: exit $rc"; head -40 "$out" "$err"; }
  # shellcheck disable=SC2059
  armsg=$(printf "$ar" $((np - 1)))
  for ((r = 0; r < np; r++)); do
    grep -qxF "pmpi_tiny: rank $r: allreduce: call 1 failed" "$out" ||
      { fail "np $np rank $r: the allreduce did not fail"; grep "rank $r:" "$out"; }
    grep -qxF "weft ERROR pmpi: rank $r: MPI_Allreduce failed in weft: $armsg" "$err" ||
      { fail "np $np rank $r: allreduce message"; grep "rank $r: MPI_Allreduce" "$err"; }
    # shellcheck disable=SC2059
    rsmsg=$(printf "$rs" $((np - 1)))
    # The reduce-scatter's last rank has no block of its own at 2 ranks.
    want=1
    [ "$np" = 2 ] && [ "$r" = 1 ] && want=2
    k=$(sed -n "s/^pmpi_tiny: rank $r: reduce_scatter: call \([0-9]*\) failed$/\1/p" "$out")
    call=MPI_Reduce_scatter
    [ "$want" = 2 ] && call=MPI_Allreduce
    [ "$k" = "$want" ] || fail "np $np rank $r: the reduce_scatter failed at call '$k', not $want"
    grep -qxF "weft ERROR pmpi: rank $r: $call failed in weft: $rsmsg" "$err" ||
      { fail "np $np rank $r: reduce_scatter message"; grep "rank $r: MPI_" "$err"; }
    # The broadcast and the reduce: a rank that does not read every slot
    # finds the disagreement in the call when it publishes after a rank
    # that differs, else it fails its next call (an allreduce).
    for c in bcast:MPI_Bcast:bc reduce:MPI_Reduce:rd; do
      IFS=: read -r what call var <<<"$c"
      msg=${!var}
      k=$(sed -n "s/^pmpi_tiny: rank $r: $what: call \([0-9]*\) failed$/\1/p" "$out")
      [ "$k" = 1 ] || [ "$k" = 2 ] || { fail "np $np rank $r: the $what failed at call '$k'"; continue; }
      [ "$k" = 2 ] && call=MPI_Allreduce
      grep -qxF "weft ERROR pmpi: rank $r: $call failed in weft: $msg" "$err" ||
        { fail "np $np rank $r: $what message"; grep "rank $r: MPI_" "$err"; }
    done
    # A reduce to a broadcast's non-root (3 ranks or more): found, on
    # every rank alike (the message of call_agree.h for the collective).
    if [ "$np" -ge 3 ]; then
      k=$(sed -n "s/^pmpi_tiny: rank $r: reduce_to_bcaster: call \([0-9]*\) failed$/\1/p" "$out")
      [ "$k" = 1 ] || [ "$k" = 2 ] || fail "np $np rank $r: the reduce_to_bcaster failed at call '$k'"
      grep -qF "rank $r: MPI_$([ "$k" = 2 ] && echo Allreduce || { [ "$r" = 0 ] && echo Reduce || echo Bcast; }) failed in weft: $mixmsg" "$err" ||
        { fail "np $np rank $r: reduce_to_bcaster message"; grep "rank $r: MPI_" "$err"; }
    fi
    grep -qxF "pmpi_tiny: rank $r: then world allreduce $np" "$out" ||
      fail "np $np rank $r: world allreduce after the mismatches"
  done
  # Of two ranks that differ, the later to publish finds it in the call.
  for what in bcast reduce; do
    grep -q "^pmpi_tiny: rank [0-9]*: $what: call 1 failed$" "$out" ||
      fail "np $np: no rank found the $what's disagreement in the call"
  done
  if [ "$np" -ge 3 ]; then
    grep -q "^pmpi_tiny: rank [0-9]*: reduce_to_bcaster: call 1 failed$" "$out" ||
      fail "np $np: no rank found the reduce_to_bcaster's disagreement in the call"
  fi
  echo "np $np: $(grep -c 'failed in weft' "$err") failed calls logged; $(grep -c ': call 1 failed' "$out") failed at once"
done
[ "$fails" = 0 ] || { echo "pmpi_tiny_mismatch: $fails failures"; exit 1; }
echo "pmpi_tiny_mismatch: ok"
