#!/bin/bash
# libweft_mpi.so under mpirun: tests/mpi/pmpi_check.c (an ordinary MPI
# program) runs with 2 and 4 ranks, first plainly (the program's own
# expectations hold under Open MPI) and then with the library preloaded and
# WEFT_LOG=info; every check must pass, every rank's finalize report must
# give exactly the served/passed counts the program expects, and each of
# the six collectives must be logged as served by weft. Then, with 4 ranks,
# a forced algorithm (WEFT_ALGO=ring) and a forced plan file (WEFT_PLAN,
# tests/fixtures/plans/ring_allreduce_4.plan) serve MPI_Allreduce: the info
# lines name the algorithm or plan for every size, every result is exact,
# and a count the plan's 4 chunks do not divide goes to MPI with the reason
# logged.
# Usage: pmpi_test.sh PMPI_CHECK LIBWEFT_MPI_SO MPIRUN
set -u
check=$1 lib=$2 mpirun=${3:-mpirun}
. "$(dirname "$0")/lib/mpirun_env.sh"

for np in 2 4; do
  mpirun_ranks 0 -np "$np" "$check"
  rc=$?
  [ $rc = 0 ] || { fail "np $np without preload: exit $rc"; cat "$out" "$err"; }
  grep -Eq "^pmpi_check: $np ranks, [1-9][0-9]* checks, 0 failed$" "$out" ||
    fail "np $np without preload: no clean tally"
  grep -q "weft" "$err" && fail "np $np without preload: weft ran"

  mpirun_ranks 0 -np "$np" -x LD_PRELOAD="$lib" -x WEFT_LOG=info "$check"
  rc=$?
  [ $rc = 0 ] || { fail "np $np with preload: exit $rc"; cat "$out" "$err"; }
  grep -Eq "^pmpi_check: $np ranks, [1-9][0-9]* checks, 0 failed$" "$out" ||
    fail "np $np with preload: no clean tally"
  for ((r = 0; r < np; r++)); do
    want=$(sed -n "s/^pmpi_check: rank $r expects weft\/MPI: //p" "$out")
    [ -n "$want" ] || fail "np $np rank $r: no expectation printed"
    grep -qxF "weft INFO pmpi: rank $r: calls served by weft/passed to MPI: $want" "$err" ||
      { fail "np $np rank $r: report differs from '$want'"; grep "rank $r: calls" "$err"; }
    for c in Allreduce Allgather Reduce_scatter_block Bcast Reduce Alltoall; do
      grep -qxF "weft INFO pmpi: rank $r: MPI_$c served by weft" "$err" ||
        fail "np $np rank $r: MPI_$c not logged as served"
    done
    grep -qxF "weft INFO pmpi: rank $r: MPI_Allreduce passed to MPI (no weft communicator)" "$err" ||
      fail "np $np rank $r: the call on MPI_COMM_SELF not logged as passed"
    check_kinds pmpi_check "$r"
    grep -qxF "weft INFO pmpi: rank $r: on dup communicators: Allreduce 1/0" "$err" ||
      fail "np $np rank $r: the duplicate's call not served"
  done
  if grep -q "ERROR" "$err"; then fail "np $np: errors logged"; grep ERROR "$err"; fi
  echo "np $np: $(grep -c 'served by weft$' "$err") served-lines, tally: $(grep 'checks' "$out")"
done

# Switched off, the library passes every call on and the program still passes.
mpirun_ranks 0 -np 2 -x LD_PRELOAD="$lib" -x WEFT_LOG=info -x WEFT_PMPI=off "$check"
rc=$?
[ $rc = 0 ] || fail "WEFT_PMPI=off: exit $rc"
grep -qxF "weft INFO pmpi: rank 0: weft off, every call goes to MPI: WEFT_PMPI is off" "$err" ||
  fail "WEFT_PMPI=off: not logged"
grep -q "served by weft$" "$err" && fail "WEFT_PMPI=off: weft served a call"

# Forced schedules: pmpi_check --allreduce 4096 3 runs 48 allreduces of 4096
# elements (6 types x 4 operators x in place or not; 1, 2, 4 and 8-byte
# types) and one of 3 ints, which a 4-chunk plan cannot run.
plan=$(cd "$(dirname "$0")/../fixtures/plans" && pwd)/ring_allreduce_4.plan
forced() { # NAME VAR=VALUE REASON-OF-THE-PASS LOG-NAME LOG-REASON
  local name=$1 setting=$2 passwhy=$3 logname=$4 logwhy=$5
  mpirun_ranks 0 -np 4 -x LD_PRELOAD="$lib" -x WEFT_LOG=info -x "$setting" "$check" --allreduce 4096 3
  rc=$?
  [ $rc = 0 ] || { fail "$name: exit $rc"; cat "$out" "$err"; }
  grep -qxF "pmpi_check: 4 ranks, 786444 checks, 0 failed" "$out" ||
    { fail "$name: results"; cat "$out"; }
  for ((r = 0; r < 4; r++)); do
    grep -qxF "weft INFO pmpi: rank $r: calls served by weft/passed to MPI: Allreduce 48/1, Allgather 0/0, Reduce_scatter_block 0/0, Bcast 0/0, Reduce 0/0, Alltoall 0/0, Reduce_scatter 0/0, Alltoallv 0/0, Alltoallw 0/0, Iallreduce 0/0, Iallgather 0/0, Ireduce_scatter_block 0/0, Ibcast 0/0, Ireduce 0/0, Ialltoall 0/0, Ireduce_scatter 0/0, Ialltoallv 0/0, Ibarrier 0/0" "$err" ||
      fail "$name: rank $r's report"
    grep -qxF "weft INFO pmpi: rank $r: MPI_Allreduce passed to MPI ($passwhy)" "$err" ||
      { fail "$name: rank $r: the misfit not passed to MPI with its reason"; grep passed "$err"; }
  done
  for bytes in 4096 8192 16384 32768; do
    [ "$(grep -cxF "weft INFO run: allreduce $bytes B: $logname ($logwhy)" "$err")" = 4 ] ||
      { fail "$name: $bytes B not logged as $logname by every rank"; grep "run:" "$err"; }
  done
  [ "$(grep -c "weft INFO run: allreduce" "$err")" = 16 ] ||
    { fail "$name: other choices logged"; grep "run:" "$err"; }
  if grep -q "ERROR" "$err"; then fail "$name: errors logged"; grep ERROR "$err"; fi
  echo "$name: $(grep -c 'run: allreduce' "$err") choice lines, tally: $(grep 'checks' "$out")"
}
forced "WEFT_ALGO=ring" WEFT_ALGO=ring \
  "comm: count 3 is not a multiple of the 4 chunks of algorithm ring (WEFT_ALGO) for allreduce on switch:4" \
  ring "forced by WEFT_ALGO, on switch:4"
forced "WEFT_PLAN" "WEFT_PLAN=$plan" \
  "comm: count 3 is not a multiple of the 4 chunks of the plan $plan (WEFT_PLAN)" \
  "$plan" "forced by WEFT_PLAN"

[ $fails = 0 ] && echo "pmpi_test: all passed" && exit 0
echo "pmpi_test: $fails failures"
exit 1
