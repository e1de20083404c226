# Shared check of the mpi4py test scripts (sourced, not run): exits 77
# (CTest's skip) unless /usr/bin/python3 (Debian's, the programs'
# interpreter) imports numpy and an mpi4py 3.1.x; $mpi4py_why, set by the
# script, says why another version does not do.
version=$(/usr/bin/python3 -c 'import numpy, mpi4py; print(mpi4py.__version__)' 2>/dev/null) || {
  echo "SKIP: /usr/bin/python3 has no mpi4py and numpy (apt-get install python3-mpi4py python3-numpy)"
  exit 77
}
case $version in
  3.1.*) ;;
  *) echo "SKIP: mpi4py $version: $mpi4py_why"; exit 77 ;;
esac
