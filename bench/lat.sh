#!/bin/bash
# Small-message latency of the served collectives (bench/lat_mpi.c, timed
# as OSU's micro-benchmarks time them) through libweft_mpi.so (LD_PRELOAD)
# beside plain Open MPI, in one run: for every rank count the two are run
# alternately RUNS times, and each line gives, per collective and size,
# the median latency of each and their ratio (weft / Open MPI: below 1 is
# weft faster). Never fails on time; exits 1 only when a run fails. Skips
# (exit 0 with a line saying why) without mpirun or the library.
# Usage: bench/lat.sh [BUILD_DIR [RUNS [ITERS [RANKS...]]]]  (default build
# 5 20000 2; sizes 8 B and 1 KiB, or the bytes listed in LAT_SIZES, e.g.
# LAT_SIZES="8 64 512 4096")
set -u
build=${1:-build} runs=${2:-5} iters=${3:-20000}
shift $(($# < 3 ? $# : 3))
ranks=("$@")
[ ${#ranks[@]} = 0 ] && ranks=(2)
skip() { echo "bench/lat.sh: skipped: $*"; exit 0; }
command -v mpirun > /dev/null || skip "mpirun not found"
lib=$(cd "$build" 2> /dev/null && pwd)/libweft_mpi.so
prog=$(cd "$build" 2> /dev/null && pwd)/bench_lat_mpi
[ -f "$lib" ] && [ -x "$prog" ] || skip "$build/libweft_mpi.so or bench_lat_mpi not built"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
status=0
median() { sort -g | awk '{v[NR] = $1} END {print NR ? v[int((NR + 1) / 2)] : "-"}'; }
for np in "${ranks[@]}"; do
  for ((k = 0; k < runs; k++)); do
    for who in plain weft; do
      pre=()
      [ $who = weft ] && pre=(-x LD_PRELOAD="$lib")
      timeout 600 mpirun -np "$np" "${pre[@]}" "$prog" "$iters" ${LAT_SIZES:-8 1024} > "$tmp/out" 2> /dev/null ||
        { echo "run failed: np $np $who"; status=1; }
      grep -E '^[a-z_]+ [0-9]+: ' "$tmp/out" >> "$tmp/$who"
    done
  done
  echo "$np ranks: collective bytes: weft us / Open MPI us = ratio (medians of $runs)"
  for key in $(awk '{print $1, $2 + 0}' "$tmp/plain" | sort -k1,1 -k2n -u | awk '{print $1 "_" $2 ":"}'); do
    coll=${key%_*} bytes=${key##*_}
    pat="^$coll $bytes"
    w=$(grep "$pat" "$tmp/weft" | awk '{print $3}' | median)
    p=$(grep "$pat" "$tmp/plain" | awk '{print $3}' | median)
    echo "$coll ${bytes%:} B: $w / $p = $(awk -v w="$w" -v p="$p" 'BEGIN {printf "%.2f", (p > 0 ? w / p : 0)}')"
  done
  rm -f "$tmp/plain" "$tmp/weft"
done
exit $status
