#!/bin/bash
# libweft_mpi.so under mpirun with tests/mpi/pmpi_layout.c: ranks that give
# the same data different datatypes (served, packed where not contiguous),
# sub-communicators (served), 32/64-bit wrap-around, large counts, count 0,
# operators weft does not have, and an MPI_Iallreduce around a served call.
# With 2, 3 and 4 ranks: first plainly (the program's expectations hold
# under Open MPI), then preloaded with WEFT_LOG=info: every check passes,
# every rank's finalize report equals the counts the program expects, no
# error is logged. Each run has 120 s: a rank that takes another path than
# its peers hangs the job (what the first version of the library did with
# mixed layouts), and must fail the test rather than block it.
# Usage: pmpi_layout.sh PMPI_LAYOUT LIBWEFT_MPI_SO MPIRUN
set -u
prog=$1 lib=$2 mpirun=${3:-mpirun}
. "$(dirname "$0")/lib/mpirun_env.sh"

for np in 2 3 4; do
  mpirun_ranks 120 -np "$np" "$prog"
  rc=$?
  [ $rc = 0 ] || { fail "np $np without preload: exit $rc"; cat "$out" "$err"; }
  grep -Eq "^pmpi_layout: $np ranks, [1-9][0-9]* checks, 0 failed$" "$out" ||
    fail "np $np without preload: no clean tally"

  mpirun_ranks 120 -np "$np" -x LD_PRELOAD="$lib" -x WEFT_LOG=info "$prog"
  rc=$?
  [ $rc = 0 ] || { fail "np $np with preload: exit $rc"; head -40 "$out" "$err"; }
  grep -Eq "^pmpi_layout: $np ranks, [1-9][0-9]* checks, 0 failed$" "$out" ||
    fail "np $np with preload: no clean tally"
  for ((r = 0; r < np; r++)); do
    want=$(sed -n "s/^pmpi_layout: rank $r expects weft\/MPI: //p" "$out")
    [ -n "$want" ] || fail "np $np rank $r: no expectation printed"
    grep -qxF "weft INFO pmpi: rank $r: calls served by weft/passed to MPI: $want" "$err" ||
      { fail "np $np rank $r: report differs from '$want'"; grep "rank $r: calls" "$err"; }
    check_kinds pmpi_layout "$r"
    grep -qxF "weft INFO pmpi: rank $r: on split communicators: Allreduce 2/0, Allgather 2/0, Reduce_scatter_block 2/0, Bcast 2/0, Reduce 2/0, Alltoall 2/0" "$err" ||
      { fail "np $np rank $r: the splits' calls not served"; grep "rank $r: on" "$err"; }
    grep -qxF "weft INFO pmpi: rank $r: MPI_Bcast served by weft" "$err" ||
      fail "np $np rank $r: MPI_Bcast not served"
  done
  if grep -q "ERROR\|WARN" "$err"; then fail "np $np: errors logged"; grep "ERROR\|WARN" "$err"; fi
  echo "np $np: $(grep 'checks' "$out"); rank 0: $(sed -n 's/^weft INFO pmpi: rank 0: calls served by weft\/passed to MPI: //p' "$err")"
done

[ $fails = 0 ] && echo "pmpi_layout: all passed" && exit 0
echo "pmpi_layout: $fails failures"
exit 1
