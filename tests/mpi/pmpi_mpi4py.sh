#!/bin/bash
# Runs tests/mpi/pmpi_mpi4py.py with tests/mpi/pmpi_case.sh at 2 and 3
# ranks, plainly and preloaded: checks, served counts and result digests.
# Skips (77) without Debian's python3-mpi4py and python3-numpy for
# /usr/bin/python3 (the program's interpreter), or with an mpi4py other
# than 3.1 (the program's counts of the pickle API are 3.1's).
# Usage: pmpi_mpi4py.sh LIBWEFT_MPI_SO MPIRUN
here=$(dirname "$0")
mpi4py_why="the expected counts are mpi4py 3.1's"
. "$here/lib/mpi4py_31.sh"
exec bash "$here/pmpi_case.sh" "$here/pmpi_mpi4py.py" "$1" "$2" "2 3"
