#!/bin/bash
# libweft_mpi.so under Fortran programs: tests/mpi/pmpi_fortran.f90 (`use
# mpi`) and pmpi_fortran08.f90 (`use mpi_f08`), compiled here with Open
# MPI's Fortran wrapper (mpifort beside mpirun, else on PATH) into a
# scratch folder; SKIP (77) when there is no wrapper or it cannot build the
# `use mpi` program (a `use mpi_f08` it cannot build is skipped alone).
# With 2 and 3 ranks, preloaded with WEFT_LOG=info: every check passes and
# every rank's report says weft served the Fortran calls, on MPI_COMM_WORLD
# (Allreduce 3, one in place, Bcast 1, Iallreduce 1) and on the split
# (Allreduce 1), and passed none.
# Usage: pmpi_fortran.sh LIBWEFT_MPI_SO MPIRUN
set -u
lib=$1 mpirun=${2:-mpirun}
. "$(dirname "$0")/lib/mpirun_env.sh"
fc=$(dirname "$(command -v "$mpirun")")/mpifort
[ -x "$fc" ] || fc=$(command -v mpifort) || { echo "SKIP: no mpifort"; exit 77; }
dir=$(mktemp -d)
trap 'rm -rf "$dir" "$out" "$err"' EXIT
src=$(cd "$(dirname "$0")" && pwd)
"$fc" -o "$dir/pmpi_fortran" "$src/pmpi_fortran.f90" 2>"$err" ||
  { echo "SKIP: $fc cannot build a \`use mpi\` program"; cat "$err"; exit 77; }
progs=pmpi_fortran
if "$fc" -o "$dir/pmpi_fortran08" "$src/pmpi_fortran08.f90" 2>"$err"; then
  progs="$progs pmpi_fortran08"
else
  echo "skipped: $fc cannot build a \`use mpi_f08\` program"
fi

for prog in $progs; do
  for np in 2 3; do
    mpirun_ranks 120 -np "$np" -x LD_PRELOAD="$lib" -x WEFT_LOG=info "$dir/$prog"
    rc=$?
    [ $rc = 0 ] || { fail "$prog np $np: exit $rc"; head -40 "$out" "$err"; }
    grep -qxF "$prog: $np ranks, 0 failed" "$out" || { fail "$prog np $np: results"; cat "$out"; }
    for ((r = 0; r < np; r++)); do
      grep -qxF "weft INFO pmpi: rank $r: on world communicators: Allreduce 3/0, Bcast 1/0, Iallreduce 1/0" "$err" ||
        { fail "$prog np $np rank $r: world calls"; grep "rank $r: on" "$err"; }
      grep -qxF "weft INFO pmpi: rank $r: on split communicators: Allreduce 1/0" "$err" ||
        { fail "$prog np $np rank $r: split calls"; grep "rank $r: on" "$err"; }
      [ "$(grep -c "^weft INFO pmpi: rank $r: on " "$err")" = 2 ] ||
        fail "$prog np $np rank $r: other kinds reported"
    done
    if grep -q "ERROR\|WARN\|passed to MPI (" "$err"; then
      fail "$prog np $np: a call passed or an error"; grep "ERROR\|WARN\|passed to MPI (" "$err"
    fi
    echo "$prog np $np: $(cat "$out"); rank 0: $(grep -h "rank 0: on" "$err" | sed 's/.*rank 0: //' | tr '\n' ' ')"
  done
done

[ $fails = 0 ] && echo "pmpi_fortran: all passed" && exit 0
echo "pmpi_fortran: $fails failures"
exit 1
