#!/bin/bash
# libweft_mpi.so under mpirun: tests/mpi/pmpi_check.c (an ordinary MPI
# program) runs with 2 and 4 ranks, first plainly (the program's own
# expectations hold under Open MPI) and then with the library preloaded and
# WEFT_LOG=info; every check must pass, every rank's finalize report must
# give exactly the served/passed counts the program expects, and each of
# the six collectives must be logged as served by weft.
# Usage: pmpi_test.sh PMPI_CHECK LIBWEFT_MPI_SO MPIRUN
set -u
check=$1 lib=$2 mpirun=${3:-mpirun}
if ! command -v "$mpirun" >/dev/null 2>&1; then
  echo "SKIP: mpirun ('$mpirun') is not available"
  exit 77
fi
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
# The sanitizer build's runtime is in the program, not first in the list.
export ASAN_OPTIONS=detect_leaks=0:verify_asan_link_order=0
out=$(mktemp) err=$(mktemp)
trap 'rm -f "$out" "$err"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

for np in 2 4; do
  "$mpirun" -np "$np" "$check" >"$out" 2>"$err"
  rc=$?
  [ $rc = 0 ] || { fail "np $np without preload: exit $rc"; cat "$out" "$err"; }
  grep -Eq "^pmpi_check: $np ranks, [1-9][0-9]* checks, 0 failed$" "$out" ||
    fail "np $np without preload: no clean tally"
  grep -q "weft" "$err" && fail "np $np without preload: weft ran"

  "$mpirun" -np "$np" -x LD_PRELOAD="$lib" -x WEFT_LOG=info "$check" >"$out" 2>"$err"
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
    grep -qxF "weft INFO pmpi: rank $r: MPI_Allreduce passed to MPI (not MPI_COMM_WORLD)" "$err" ||
      fail "np $np rank $r: the duplicate communicator's call not logged as passed"
  done
  if grep -q "ERROR" "$err"; then fail "np $np: errors logged"; grep ERROR "$err"; fi
  echo "np $np: $(grep -c 'served by weft$' "$err") served-lines, tally: $(grep 'checks' "$out")"
done

# Switched off, the library passes every call on and the program still passes.
"$mpirun" -np 2 -x LD_PRELOAD="$lib" -x WEFT_LOG=info -x WEFT_PMPI=off "$check" >"$out" 2>"$err"
rc=$?
[ $rc = 0 ] || fail "WEFT_PMPI=off: exit $rc"
grep -qxF "weft INFO pmpi: rank 0: weft off, every call goes to MPI: WEFT_PMPI is off" "$err" ||
  fail "WEFT_PMPI=off: not logged"
grep -q "served by weft$" "$err" && fail "WEFT_PMPI=off: weft served a call"

[ $fails = 0 ] && echo "pmpi_test: all passed" && exit 0
echo "pmpi_test: $fails failures"
exit 1
