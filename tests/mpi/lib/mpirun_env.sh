# Shared start of the libweft_mpi.so test scripts (sourced, not run), after
# the script has set $mpirun:
#   exits 77 (CTest's skip) when $mpirun is not available;
#   lets Open MPI run as root and oversubscribe the cores;
#   makes the capture files $out and $err, removed on exit;
#   fail TEXT  prints "FAIL: TEXT" and counts it in $fails;
#   mpirun_ranks SECONDS ARGS...  runs "$mpirun" ARGS (0: no time limit).
if ! command -v "$mpirun" >/dev/null 2>&1; then
  echo "SKIP: mpirun ('$mpirun') is not available"
  exit 77
fi
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
# The library serves every size, so that the tests' small calls run weft's
# paths (the ranks inherit it); tests/mpi/pmpi_small.c sets its own sizes.
export WEFT_PMPI_SMALL=0
# The sanitizer build's runtime is in the program, not first in the list.
export ASAN_OPTIONS=detect_leaks=0:verify_asan_link_order=0
out=$(mktemp) err=$(mktemp)
trap 'rm -f "$out" "$err" "$out.mpirun" "$err.mpirun"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
# mpirun_ranks SECONDS ARGS...: runs "$mpirun" ARGS under timeout SECONDS
# with each rank's output in files of its own (--output-filename); then
# $out and $err hold every rank's stdout and stderr, rank after rank, and
# the status is mpirun's. Open MPI forwards the ranks' streams to mpirun's
# own in chunks that can end inside a line, so under load two ranks' lines
# mixed there even though weft writes each line in one write(2)
# (pmpi_deep_test failed so). When no rank wrote a file (mpirun failed
# before starting them), $out and $err are mpirun's own output.
mpirun_ranks() {
  local secs=$1 ofd rc r d
  shift
  ofd=$(mktemp -d)
  timeout "$secs" "$mpirun" --output-filename "$ofd" "$@" >"$out.mpirun" 2>"$err.mpirun"
  rc=$?
  : >"$out"
  : >"$err"
  for ((r = 0; ; r++)); do
    d=$(echo "$ofd"/*/rank.$r)
    [ -d "$d" ] || break
    [ -f "$d/stdout" ] && cat "$d/stdout" >>"$out"
    [ -f "$d/stderr" ] && cat "$d/stderr" >>"$err"
  done
  if [ $r = 0 ]; then
    cp "$out.mpirun" "$out"
    cp "$err.mpirun" "$err"
  fi
  rm -rf "$ofd"
  return $rc
}
# check_kinds PROG RANK: each "PROG: rank R expects on KIND: ..." line of
# $out is the library's "rank R: on KIND communicators: ..." line in $err,
# and the library logs no other kind.
check_kinds() {
  local prog=$1 r=$2 kind want got
  got=$(grep -c "^weft INFO pmpi: rank $r: on [a-z_]* communicators: " "$err")
  [ "$got" = "$(grep -c "^$prog: rank $r expects on " "$out")" ] ||
    { fail "rank $r: $got kinds reported"; grep "rank $r: on" "$err"; }
  while read -r kind want; do
    grep -qxF "weft INFO pmpi: rank $r: on ${kind%:} communicators: $want" "$err" ||
      { fail "rank $r: calls on ${kind%:} communicators differ from '$want'"; grep "rank $r: on" "$err"; }
  done < <(sed -n "s/^$prog: rank $r expects on //p" "$out")
}
