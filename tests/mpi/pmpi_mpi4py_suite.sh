#!/bin/bash
# Runs mpi4py's own test suite (mpi4py 3.1.4's, vendored in tests/mpi4py/,
# on Debian's python3-mpi4py) at 2 and 3 ranks, first plainly, then with
# libweft_mpi.so preloaded (WEFT_LOG=info), and requires:
#   - both runs exit 0 and every rank's unittest summary is "OK";
#   - every rank's outcome of every test (ok, FAIL, ERROR, skipped 'why',
#     from runtests.py's verbose output) is the same plainly and preloaded;
#   - preloaded, MPI is initialized with MPI_THREAD_MULTIPLE (mpi4py's
#     default, which runtests.py keeps), checked by one preloaded rank;
#   - preloaded, every rank's finalize report shows each intercepted
#     collective but MPI_Ibarrier (which weft never serves) served at least
#     once, and on MPI_COMM_WORLD more calls of each served than passed;
#   - nothing is logged at warning or error level.
# It prints rank 0's counts of calls served by weft/passed to MPI.
#
# Modules left out (runtests.py -e, a pattern on the module name), each
# because it cannot run here or tests nothing weft intercepts:
#   test_dynproc   MPI_Comm_connect/MPI_Comm_accept through Open MPI 4.1's
#                  name service (PMIx lookup): one plain run of the suite at
#                  2 ranks as root in a container hung there for 10 min. Not
#                  seen again (16 runs of the module alone at 2 and 3 ranks,
#                  8 more beside 4 busy loops, the suite with it at 2 and 3
#                  ranks plainly and preloaded all passed), but left out so
#                  that a rare hang cannot fail the test; its calls
#                  (intercommunicators) are test_comm_inter's and
#                  test_cco_obj_inter's too.
#   test_spawn     MPI_Comm_spawn: a plain run at 2 ranks passed the
#                  TestSpawnSelf* cases, then hung in
#                  TestSpawnWorld.testCommSpawn (killed after 60 s).
#   test_util_dtlib  mpi4py.util.dtlib, conversions between MPI datatypes and
#                  numpy dtypes, local to each rank (no communication): 9 s
#                  at 2 ranks and 14 s at 3 on 2 cores at load 2.6 (25 s at
#                  load 4), in each of the four runs; the rest takes 6-16 s.
# Skips (77) without Debian's python3-mpi4py and python3-numpy for
# /usr/bin/python3 or with an mpi4py other than 3.1 (the vendored suite is
# 3.1.4's), and without mpirun.
# Usage: pmpi_mpi4py_suite.sh LIBWEFT_MPI_SO MPIRUN
set -u
lib=$1 mpirun=${2:-mpirun}
here=$(dirname "$0")
runtests=$here/../mpi4py/test/runtests.py
mpi4py_why="the vendored suite is mpi4py 3.1.4's"
. "$here/lib/mpi4py_31.sh"
. "$here/lib/mpirun_env.sh"
# 3 ranks on 2 cores: a rank that waits gives its core up (Open MPI's
# mpi_yield_when_idle), plainly and preloaded alike.
export OMPI_MCA_mpi_yield_when_idle=1
excludes=(-e '^test_dynproc$' -e '^test_spawn$' -e '^test_util_dtlib$')
# The intercepted collectives that weft serves (pmpi_tally.h's names but
# MPI_Ibarrier, always passed: weft's barrier would block the caller).
served_names="Allreduce Allgather Reduce_scatter_block Bcast Reduce Alltoall Reduce_scatter
  Alltoallv Alltoallw Iallreduce Iallgather Ireduce_scatter_block Ibcast Ireduce Ialltoall
  Ireduce_scatter Ialltoallv"

# outcomes FILE: "R<tab>TESTID<tab>OUTCOME" for each test of each rank, from the
# ranks' stderr one after another. Each rank opens with runtests.py's banner
# "[R@host] Python ..."; unittest writes "TESTID ... " and, after the test,
# its outcome and a newline; a weft log line written meanwhile ends that
# line, and the outcome comes on a line of its own.
outcomes() {
  awk -v OFS='\t' '
    /^\[[0-9]+@[^]]*\] Python / { r = substr($1, 2); sub(/@.*/, "", r); next }
    /^weft / { next }
    /^test[^ ]* \([^ ]*\) \.\.\. / {
      i = index($0, " ... "); id = substr($0, 1, i - 1); rest = substr($0, i + 5)
      if (rest ~ /^weft /) pending = id; else print r, id, rest
      next
    }
    pending != "" { print r, pending, $0; pending = "" }' "$1"
}

# counts LINE: "NAME served passed" per collective of a report line's tail
# "Allreduce 672/528, Allgather 2003/1014, ...".
counts() { tr ',' '\n' <<<"$1" | sed -n 's/^ *\([A-Za-z_]*\) \([0-9]*\)\/\([0-9]*\)$/\1 \2 \3/p'; }

mpirun_ranks 30 -np 1 -x LD_PRELOAD="$lib" /usr/bin/python3 -c \
  'from mpi4py import MPI; print("thread level", MPI.Query_thread(), "multiple", MPI.THREAD_MULTIPLE)'
level=$(sed -n 's/^thread level \([0-9]*\) multiple \([0-9]*\)$/\1 \2/p' "$out")
read -r got want <<<"$level"
[ -n "$level" ] && [ "$got" = "$want" ] ||
  { fail "preloaded: MPI not initialized with MPI_THREAD_MULTIPLE"; cat "$out" "$err" | head; }

rank0=$'^0\t' # rank 0's lines of outcomes()
for np in 2 3; do
  args=(-np "$np" /usr/bin/python3 "$runtests" --no-builddir -v "${excludes[@]}")
  start=$SECONDS
  mpirun_ranks 120 "${args[@]}"
  rc=$?
  # The plain run is Open MPI and mpi4py alone, the reference: one of them
  # hung once in test_util_pkl5's synchronous send at 2 ranks (121 s, 11 s
  # in the runs before and after). A plain run that times out runs again,
  # once; the preloaded run never does.
  if [ $rc = 124 ]; then
    echo "np $np without preload: timed out (Open MPI alone); run again"
    start=$SECONDS
    mpirun_ranks 120 "${args[@]}"
    rc=$?
  fi
  [ $rc = 0 ] || { fail "np $np without preload: exit $rc"; tail -40 "$err"; }
  plain=$(outcomes "$err")
  plain_summary=$(grep -c '^OK' "$err")
  plain_s=$((SECONDS - start))

  start=$SECONDS
  mpirun_ranks 120 -x LD_PRELOAD="$lib" -x WEFT_LOG=info "${args[@]}"
  rc=$?
  [ $rc = 0 ] || { fail "np $np with preload: exit $rc"; grep -v '^weft' "$err" | tail -40; }
  preload=$(outcomes "$err")
  preload_s=$((SECONDS - start))

  [ "$plain_summary" = "$np" ] || fail "np $np without preload: $plain_summary of $np ranks report OK"
  [ "$(grep -c '^OK' "$err")" = "$np" ] || fail "np $np with preload: not every rank reports OK"
  ran=$(grep -m1 '^Ran [0-9]* tests' "$err" | cut -d' ' -f2)
  [ -n "$ran" ] && [ "$(grep -c "$rank0" <<<"$preload")" = "$ran" ] ||
    fail "np $np: rank 0 ran ${ran:-no} tests, $(grep -c "$rank0" <<<"$preload") outcomes read"
  if [ "$plain" != "$preload" ]; then
    fail "np $np: test outcomes differ (< without preload, > with preload)"
    diff <(echo "$plain") <(echo "$preload") | head -40
  fi

  for ((r = 0; r < np; r++)); do
    total=$(sed -n "s/^weft INFO pmpi: rank $r: calls served by weft\/passed to MPI: //p" "$err")
    world=$(sed -n "s/^weft INFO pmpi: rank $r: on world communicators: //p" "$err")
    [ -n "$total" ] && [ -n "$world" ] || { fail "np $np rank $r: no finalize report"; continue; }
    for name in $served_names; do
      s=0 p=0
      read -r _ s _ < <(counts "$total" | grep "^$name ")
      [ "${s:-0}" -gt 0 ] || fail "np $np rank $r: $name never served ($total)"
      s=0 p=0
      read -r _ s p < <(counts "$world" | grep "^$name ")
      [ "${s:-0}" -gt "${p:-0}" ] || fail "np $np rank $r: $name on world: ${s:-0} served, ${p:-0} passed"
    done
  done
  if grep -q "^weft \(WARN\|ERROR\)" "$err"; then fail "np $np: errors logged"; grep "^weft \(WARN\|ERROR\)" "$err" | head; fi

  echo "np $np: $(grep -c "$rank0" <<<"$plain") tests per rank:" \
    "$(grep "$rank0" <<<"$plain" | cut -f3 | sed "s/^skipped .*/skipped/" | sort | uniq -c | xargs)" \
    "(identical preloaded on $np ranks: $([ "$plain" = "$preload" ] && echo yes || echo no));" \
    "${plain_s} s plainly, ${preload_s} s preloaded"
  grep "^weft INFO pmpi: rank 0: \(calls served\|on [a-z_]* communicators\)" "$err" |
    sed "s/^weft INFO pmpi: /np $np /"
done

[ $fails = 0 ] && echo "pmpi_mpi4py_suite: all passed" && exit 0
echo "pmpi_mpi4py_suite: $fails failures"
exit 1
