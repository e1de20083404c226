#!/bin/bash
# Overlap of MPI_Iallreduce with computation (bench/overlap_mpi.c, as
# osu_iallreduce defines it) through libweft_mpi.so (LD_PRELOAD) beside
# plain Open MPI, in one run: for every rank count, size and compute mode
# (TEST 0: a compute loop that calls nothing; 1: the loop calls MPI_Test
# between pieces; 2: the rank sleeps, its CPU free, calling nothing) the two
# are run alternately RUNS times, and each line gives the median overlap
# and the median pure time (MPI_Iallreduce + MPI_Wait) of each. Never fails
# on time; exits 1 only when a run fails. Skips (exit 0 with a line saying
# why) without mpirun or the library.
# Usage: bench/overlap.sh [BUILD_DIR [RUNS [ITERS]]]  (default build 3 50;
# 2 and 4 ranks, 1 MiB and 16 MiB; ITERS / 5 at 16 MiB)
set -u
build=${1:-build} runs=${2:-3} iters=${3:-50}
skip() { echo "bench/overlap.sh: skipped: $*"; exit 0; }
command -v mpirun > /dev/null || skip "mpirun not found"
lib=$(cd "$build" 2> /dev/null && pwd)/libweft_mpi.so
prog=$(cd "$build" 2> /dev/null && pwd)/bench_overlap_mpi
[ -f "$lib" ] && [ -x "$prog" ] || skip "$build/libweft_mpi.so or bench_overlap_mpi not built"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
status=0
median() { sort -g | awk '{v[NR] = $1} END {print NR ? v[int((NR + 1) / 2)] : "-"}'; }
echo "ranks bytes test: overlap weft / Open MPI (median of $runs), pure us weft / Open MPI"
for np in 2 4; do
  for bytes in 1048576 16777216; do
    it=$iters
    [ "$bytes" -gt 1048576 ] && it=$(((iters + 4) / 5))
    for t in 0 1 2; do
      : > /tmp/overlap.$$.weft
      : > /tmp/overlap.$$.plain
      for ((k = 0; k < runs; k++)); do
        for who in plain weft; do
          pre=()
          [ $who = weft ] && pre=(-x LD_PRELOAD="$lib")
          line=$(timeout 600 mpirun -np $np "${pre[@]}" "$prog" $bytes $it $t 2>&1 | tail -1)
          case $line in
            *overlap*) echo "$line" | sed 's/.*pure \([0-9.]*\) us.*overlap \([0-9]*\)%.*/\2 \1/' >> /tmp/overlap.$$.$who ;;
            *) echo "run failed: np $np $who $bytes $t: $line"; status=1 ;;
          esac
        done
      done
      ow=$(cut -d' ' -f1 /tmp/overlap.$$.weft | median)
      op=$(cut -d' ' -f1 /tmp/overlap.$$.plain | median)
      pw=$(cut -d' ' -f2 /tmp/overlap.$$.weft | median)
      pp=$(cut -d' ' -f2 /tmp/overlap.$$.plain | median)
      echo "$np $bytes $t: $ow % / $op %, $pw / $pp"
    done
  done
done
rm -f /tmp/overlap.$$.weft /tmp/overlap.$$.plain
exit $status
