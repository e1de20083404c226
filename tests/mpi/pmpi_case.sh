#!/bin/bash
# Runs one libweft_mpi.so test program (tests/mpi/pmpi_*.c that keeps the
# tally of pmpi_tally.h) at the given numbers of ranks: first plainly (the
# program's expectations hold under Open MPI), then preloaded with
# WEFT_LOG=info. Preloaded, every check must pass, every rank's finalize
# report and its lines per kind of communicator must equal the counts the
# program expects, every "PROG: rank R expects log: TEXT" line the program
# prints must be logged as "weft INFO pmpi: rank R: TEXT", and nothing is
# logged at warning or error level; and every "PROG: rank R expects result:
# TEXT" line (a digest of the results) must be the same in both runs. Each
# run has 120 s, so that a hang (a
# rank on another path than its peers) fails the test instead of blocking
# it.
# Usage: pmpi_case.sh PROG LIBWEFT_MPI_SO MPIRUN "NP ..." [ARGS...]
set -u
prog=$1 lib=$2 mpirun=${3:-mpirun} nps=$4
shift 4
name=$(basename "$prog")
. "$(dirname "$0")/lib/mpirun_env.sh"

for np in $nps; do
  mpirun_ranks 120 -np "$np" "$prog" "$@"
  rc=$?
  [ $rc = 0 ] || { fail "np $np without preload: exit $rc"; head -40 "$out" "$err"; }
  grep -Eq "^$name: $np ranks, [1-9][0-9]* checks, 0 failed$" "$out" ||
    fail "np $np without preload: no clean tally"
  plain_results=$(grep "^$name: rank [0-9]* expects result: " "$out" | sort)

  mpirun_ranks 120 -np "$np" -x LD_PRELOAD="$lib" -x WEFT_LOG=info "$prog" "$@"
  rc=$?
  [ $rc = 0 ] || { fail "np $np with preload: exit $rc"; head -40 "$out" "$err"; }
  grep -Eq "^$name: $np ranks, [1-9][0-9]* checks, 0 failed$" "$out" ||
    { fail "np $np with preload: no clean tally"; grep -v "^weft" "$err" | head; }
  [ "$(grep "^$name: rank [0-9]* expects result: " "$out" | sort)" = "$plain_results" ] ||
    { fail "np $np: results differ from those without preload"; echo "$plain_results"; grep "expects result" "$out"; }
  for ((r = 0; r < np; r++)); do
    want=$(sed -n "s/^$name: rank $r expects weft\/MPI: //p" "$out")
    [ -n "$want" ] || fail "np $np rank $r: no expectation printed"
    grep -qxF "weft INFO pmpi: rank $r: calls served by weft/passed to MPI: $want" "$err" ||
      { fail "np $np rank $r: report differs from '$want'"; grep "rank $r: calls" "$err"; }
    check_kinds "$name" "$r"
    while IFS= read -r line; do
      grep -qxF "weft INFO pmpi: rank $r: $line" "$err" ||
        { fail "np $np rank $r: not logged: '$line'"; grep "rank $r: " "$err" | grep -v " on \| calls "; }
    done < <(sed -n "s/^$name: rank $r expects log: //p" "$out")
  done
  if grep -q "ERROR\|WARN" "$err"; then fail "np $np: errors logged"; grep "ERROR\|WARN" "$err"; fi
  echo "np $np: $(grep 'checks' "$out"); rank 0: $(sed -n 's/^weft INFO pmpi: rank 0: calls served by weft\/passed to MPI: //p' "$err")"
  grep -v "checks\|expects" "$out" | head -5
done

[ $fails = 0 ] && echo "$name: all passed" && exit 0
echo "$name: $fails failures"
exit 1
