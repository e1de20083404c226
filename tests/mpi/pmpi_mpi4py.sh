#!/bin/bash
# Runs tests/mpi/pmpi_mpi4py.py with tests/mpi/pmpi_case.sh at 2 and 3
# ranks, plainly and preloaded: checks, served counts and result digests.
# Skips (77) without Debian's python3-mpi4py and python3-numpy for
# /usr/bin/python3 (the program's interpreter), or with an mpi4py other
# than 3.1 (the program's counts of the pickle API are 3.1's).
# Usage: pmpi_mpi4py.sh LIBWEFT_MPI_SO MPIRUN
here=$(dirname "$0")
version=$(/usr/bin/python3 -c 'import numpy, mpi4py; print(mpi4py.__version__)' 2>/dev/null) || {
  echo "SKIP: /usr/bin/python3 has no mpi4py and numpy (apt-get install python3-mpi4py)"
  exit 77
}
case $version in
  3.1.*) ;;
  *) echo "SKIP: mpi4py $version: the expected counts are mpi4py 3.1's"; exit 77 ;;
esac
exec bash "$here/pmpi_case.sh" "$here/pmpi_mpi4py.py" "$1" "$2" "2 3"
