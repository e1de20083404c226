#!/bin/bash
# Disagreeing small calls through the ring of slots (tests/mpi/pmpi_tiny.c
# --mismatch, CTest pmpi_tiny_mismatch_test) at 2, 3 and 4 ranks: an
# allreduce whose counts differ fails on every rank; a broadcast whose
# ranks name different roots and a reduce likewise fail on every rank,
# with the same message, at that call on the ranks that read a peer's slot
# and at the next call on the communicator (an allreduce) on those that
# returned at once; the world communicator still works after. Each run has
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
    # The roots of the broadcast (ranks 0 and 1) read nothing: they fail at
    # the next call; at 3 ranks and more the others at the broadcast.
    want=1 call=MPI_Bcast
    [ "$r" -le 1 ] && want=2 call=MPI_Allreduce
    grep -qxF "pmpi_tiny: rank $r: bcast: call $want failed" "$out" ||
      { fail "np $np rank $r: the broadcast not failed at call $want"; grep "rank $r:" "$out"; }
    grep -qxF "weft ERROR pmpi: rank $r: $call failed in weft: $bc" "$err" ||
      { fail "np $np rank $r: broadcast message"; grep "rank $r: MPI_" "$err"; }
    # No rank of the reduce is its root as it sees it: all fail at call 2.
    grep -qxF "pmpi_tiny: rank $r: reduce: call 2 failed" "$out" ||
      { fail "np $np rank $r: the reduce not failed at call 2"; grep "rank $r:" "$out"; }
    grep -qxF "weft ERROR pmpi: rank $r: MPI_Allreduce failed in weft: $rd" "$err" ||
      { fail "np $np rank $r: reduce message"; grep "rank $r: MPI_" "$err"; }
    grep -qxF "pmpi_tiny: rank $r: then world allreduce $np" "$out" ||
      fail "np $np rank $r: world allreduce after the mismatches"
  done
  echo "np $np: $(grep -c 'failed in weft' "$err") failed calls logged"
done
[ "$fails" = 0 ] || { echo "pmpi_tiny_mismatch: $fails failures"; exit 1; }
echo "pmpi_tiny_mismatch: ok"
