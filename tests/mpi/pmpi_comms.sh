#!/bin/bash
# libweft_mpi.so under mpirun with tests/mpi/pmpi_comms.c: sub-communicators
# (split with reversed keys and MPI_UNDEFINED, single ranks, dup, create,
# split_type), MPI_Reduce_scatter with unequal counts, every non-blocking
# collective outstanding at once, MPI_Alltoallv with unequal counts and
# displacements, MPI_Alltoallw. With 2, 3 and 4 ranks: first plainly (the
# program's expectations hold under Open MPI), then preloaded with
# WEFT_LOG=info: every check passes, every rank's finalize report and its
# lines per kind of communicator equal the counts the program expects (so
# the calls on every kind of communicator were served), nothing is logged
# at warning or error level. Then `pmpi_comms --mismatch` at 2, 3 and 4
# ranks (through the ring of slots: src/run/pmpi/tiny.c compares counts): an
# MPI_Alltoallv whose counts disagree and an MPI_Reduce_scatter whose
# recvcounts differ on one rank fail on every rank with the same message,
# and the communicator still serves an MPI_Allreduce. Then `pmpi_comms
# --sized` at 3 and 4 ranks under WEFT_PLAN set to an alltoallv plan of its
# matrix (bruck, whose slots hold blocks of several sizes, and direct;
# `weft plan --traffic`, the weft next to the library): byte-exact, the
# report counts every MPI_Alltoallv as served, rank 0 logs the forced plan;
# and `--sized --off` (counts that agree but are not the plan's matrix)
# fails on every rank with the message, the communicator still usable.
# Each run has 120 s, so that a hang fails the test instead of blocking it.
# Usage: pmpi_comms.sh PMPI_COMMS LIBWEFT_MPI_SO MPIRUN
set -u
prog=$1 lib=$2 mpirun=${3:-mpirun}
. "$(dirname "$0")/lib/mpirun_env.sh"

for np in 2 3 4; do
  mpirun_ranks 120 -np "$np" "$prog"
  rc=$?
  [ $rc = 0 ] || { fail "np $np without preload: exit $rc"; head -40 "$out" "$err"; }
  grep -Eq "^pmpi_comms: $np ranks, [1-9][0-9]* checks, 0 failed$" "$out" ||
    fail "np $np without preload: no clean tally"

  mpirun_ranks 120 -np "$np" -x LD_PRELOAD="$lib" -x WEFT_LOG=info "$prog"
  rc=$?
  [ $rc = 0 ] || { fail "np $np with preload: exit $rc"; head -40 "$out" "$err"; }
  grep -Eq "^pmpi_comms: $np ranks, [1-9][0-9]* checks, 0 failed$" "$out" ||
    { fail "np $np with preload: no clean tally"; grep -v "^weft" "$err" | head; }
  for ((r = 0; r < np; r++)); do
    want=$(sed -n "s/^pmpi_comms: rank $r expects weft\/MPI: //p" "$out")
    [ -n "$want" ] || fail "np $np rank $r: no expectation printed"
    grep -qxF "weft INFO pmpi: rank $r: calls served by weft/passed to MPI: $want" "$err" ||
      { fail "np $np rank $r: report differs from '$want'"; grep "rank $r: calls" "$err"; }
    check_kinds pmpi_comms "$r"
    grep -qxF "weft INFO pmpi: rank $r: MPI_Alltoallw passed to MPI (not one predefined contiguous type everywhere)" "$err" ||
      fail "np $np rank $r: the mixed MPI_Alltoallw not logged as passed"
  done
  # Every kind of communicator carried served calls on some rank.
  for kind in world dup split split_type create; do
    grep -q "^weft INFO pmpi: rank [0-9]*: on $kind communicators: .* [1-9][0-9]*/0" "$err" ||
      fail "np $np: nothing served on $kind communicators"
  done
  if grep -q "ERROR\|WARN" "$err"; then fail "np $np: errors logged"; grep "ERROR\|WARN" "$err"; fi
  echo "np $np: $(grep 'checks' "$out")"
  grep "rank 0: on" "$err"
done

# At most 2 weft communicators per process (WEFT_PMPI_COMMS=2): with
# MPI_COMM_WORLD's and the split's held, the split's duplicate stays MPI's
# on every rank (its calls are passed), and every result is still right.
mpirun_ranks 120 -np 3 -x LD_PRELOAD="$lib" -x WEFT_LOG=info -x WEFT_PMPI_COMMS=2 "$prog"
rc=$?
[ $rc = 0 ] || { fail "WEFT_PMPI_COMMS=2: exit $rc"; head -40 "$out" "$err"; }
grep -Eq "^pmpi_comms: 3 ranks, [1-9][0-9]* checks, 0 failed$" "$out" ||
  fail "WEFT_PMPI_COMMS=2: no clean tally"
for ((r = 0; r < 3; r++)); do
  grep -qxF "weft INFO pmpi: rank $r: a dup communicator stays MPI's: a member cannot list its members or holds 2 weft communicators (WEFT_PMPI_COMMS)" "$err" ||
    fail "WEFT_PMPI_COMMS=2: rank $r did not keep the duplicate MPI's"
  grep -qxF "weft INFO pmpi: rank $r: on other communicators: Allreduce 0/1, Allgather 0/1, Bcast 0/1, Alltoall 0/1" "$err" ||
    { fail "WEFT_PMPI_COMMS=2: rank $r's passed calls"; grep "rank $r: on" "$err"; }
done
grep -q "on dup communicators" "$err" && fail "WEFT_PMPI_COMMS=2: a duplicate served"
if grep -q "ERROR\|WARN" "$err"; then fail "WEFT_PMPI_COMMS=2: errors logged"; grep "ERROR\|WARN" "$err"; fi

# (libweft_mpi.so moves bytes: 2 ints are 8.)
msg="comm: ranks disagree on the counts of alltoallv: rank 1 sends 8 elements (uint8) to rank 0, which expects 4"
# The reduce-scatter is small: the ring of slots compares every rank's
# recvcounts (the ordinary path would find an allreduce against a
# reduce-scatter of blocks).
rsmsg="comm: ranks disagree on the recvcounts of reduce_scatter: rank 0 has recvcounts[0] = 1, rank 1 has 2"
for np in 2 3 4; do
  mpirun_ranks 120 -np "$np" -x LD_PRELOAD="$lib" -x WEFT_LOG=info "$prog" --mismatch
  rc=$?
  [ $rc = 0 ] || { fail "mismatch np $np: exit $rc"; head -40 "$out" "$err"; }
  for ((r = 0; r < np; r++)); do
    grep -qxF "pmpi_comms: rank $r: mismatch failed, reduce_scatter failed, then allreduce $np" "$out" ||
      { fail "mismatch np $np: rank $r"; grep "rank $r" "$out"; }
    grep -qxF "weft ERROR pmpi: rank $r: MPI_Alltoallv failed in weft: $msg" "$err" ||
      { fail "mismatch np $np: rank $r's message"; grep "rank $r: MPI_Alltoallv" "$err"; }
    grep -qxF "weft ERROR pmpi: rank $r: MPI_Reduce_scatter failed in weft: $rsmsg" "$err" ||
      { fail "mismatch np $np: rank $r's reduce_scatter message"; grep "rank $r: MPI_Reduce_scatter" "$err"; }
  done
  echo "mismatch np $np: $(grep -c "mismatch failed, reduce_scatter failed, then allreduce $np" "$out") ranks failed both calls and went on"
done

weft=$(dirname "$lib")/weft
if [ -x "$weft" ]; then
  T=$(mktemp -d)
  trap 'rm -rf "$out" "$err" "$T"' EXIT
  for np in 3 4; do
    # sized_count() of pmpi_comms.c, in bytes (4 per int).
    for ((s = 0; s < np; s++)); do
      row=
      for ((d = 0; d < np; d++)); do row="$row $((((s + 2 * d) % 4 * 60000 + 7 * s + d) * 4))"; done
      echo "$row"
    done >"$T/m$np.tm"
    for algo in bruck direct; do
      plan=$T/$algo$np.plan
      "$weft" plan "switch:$np" --coll alltoall --algo $algo --traffic "$T/m$np.tm" -o "$plan" \
        >/dev/null || fail "sized np $np: weft plan $algo"
      mpirun_ranks 120 -np "$np" -x LD_PRELOAD="$lib" -x WEFT_LOG=info -x WEFT_PLAN="$plan" \
        "$prog" --sized
      rc=$?
      [ $rc = 0 ] || { fail "sized $algo np $np: exit $rc"; head -40 "$out" "$err"; }
      grep -Eq "^pmpi_comms: $np ranks, [1-9][0-9]* checks, 0 failed$" "$out" ||
        { fail "sized $algo np $np: no clean tally"; grep -v "^weft" "$err" | head; }
      grep -q "^weft INFO run: .*alltoallv: $plan (forced by WEFT_PLAN; the call's counts must be its traffic matrix)$" "$err" ||
        fail "sized $algo np $np: the forced plan not logged"
      for ((r = 0; r < np; r++)); do
        want=$(sed -n "s/^pmpi_comms: rank $r expects weft\/MPI: //p" "$out")
        case $want in *"Alltoallv 2/0"*) ;; *) fail "sized np $np rank $r: expects '$want'" ;; esac
        grep -qxF "weft INFO pmpi: rank $r: calls served by weft/passed to MPI: $want" "$err" ||
          { fail "sized $algo np $np rank $r: report differs from '$want'"; grep "rank $r: calls" "$err"; }
      done
      if grep -q "ERROR\|WARN" "$err"; then fail "sized $algo np $np: errors logged"; grep "ERROR\|WARN" "$err"; fi
      echo "sized $algo np $np: $(grep 'checks' "$out")"
    done
  done
  plan=$T/bruck3.plan
  mpirun_ranks 120 -np 3 -x LD_PRELOAD="$lib" -x WEFT_LOG=info -x WEFT_PLAN="$plan" \
    "$prog" --sized --off
  rc=$?
  [ $rc = 0 ] || { fail "sized off: exit $rc"; head -40 "$out" "$err"; }
  # Rank 1 sends rank 0 sized_count(1, 0) + 1 = 60008 ints, 240032 bytes;
  # the matrix 240028.
  msg="comm: the counts of alltoallv differ from the traffic matrix of the plan $plan (WEFT_PLAN): rank 1 sends rank 0 240032 elements of uint8 (240032 bytes), the matrix 240028 bytes"
  for ((r = 0; r < 3; r++)); do
    grep -qxF "pmpi_comms: rank $r: sized failed, then allreduce 3" "$out" ||
      { fail "sized off: rank $r"; grep "rank $r" "$out"; }
    grep -qxF "weft ERROR pmpi: rank $r: MPI_Alltoallv failed in weft: $msg" "$err" ||
      { fail "sized off: rank $r's message"; grep "rank $r: MPI_Alltoallv" "$err"; }
  done
  echo "sized off: $(grep -c 'sized failed, then allreduce 3' "$out") ranks failed the call and went on"
else
  fail "$weft not built (the sized plans are made with it)"
fi

[ $fails = 0 ] && echo "pmpi_comms: all passed" && exit 0
echo "pmpi_comms: $fails failures"
exit 1
