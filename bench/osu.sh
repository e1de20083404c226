#!/bin/bash
# Unmodified OSU micro-benchmarks (7.x) and IMB-MPI1 through libweft_mpi.so
# (LD_PRELOAD) against plain Open MPI, in one run (issues 17 and 28;
# docs/interop.md, "OSU and IMB through the library"). Every blocking
# collective latency benchmark found (osu_allreduce, osu_reduce, osu_bcast,
# osu_allgather(v), osu_alltoall(v), osu_gather(v), osu_scatter(v),
# osu_reduce_scatter(_block); IMB-MPI1's benchmarks of the same calls) runs
# at every rank count alternately plain and preloaded, RUNS times each.
# Output: per benchmark and rank count, the weft runs' served/passed counts
# of the benchmark's MPI call (rank 0's finalize report, one per run) and
# the reasons calls were passed to MPI, then one row per message size: the
# median latency under Open MPI alone and under weft (us), and weft / Open
# MPI (below 1: weft faster; OSU's average latency, IMB's t_avg). Gather and
# scatter are not intercepted (MPI's own either way: their ratios show the
# noise of the machine). Last, the load average before and after.
# Never fails on time; exits 1 only when a run fails. Skips (exit 0 with a
# line saying why) when the binaries, mpirun or the library are absent.
# Usage: bench/osu.sh BIN_DIR [BUILD_DIR [RUNS [RANKS ...]]]
#   BIN_DIR holds the OSU build (osu_allreduce ... found below it) and/or
#   IMB-MPI1 (found below it); BUILD_DIR (default build) holds
#   libweft_mpi.so; RUNS default 3; RANKS default 2 4, and 8 16 where the
#   host has that many CPUs. Environment: OSU_MAX (largest size, bytes;
#   default 1048576), OSU_ITERS (default 1000; OSU takes 100 past 8 KiB),
#   OSU_WARMUP (default 100), OSU_ONLY (a regular expression: only the
#   benchmarks it matches, e.g. 'osu_bcast|IMB'). OSU's reductions run with
#   -T mpi_float (its default, MPI_CHAR, is no reduction type for weft).
set -u
dir=${1:-} build=${2:-build} runs=${3:-3}
shift $(($# < 3 ? $# : 3))
ranks=("$@")
if [ ${#ranks[@]} = 0 ]; then
  ranks=(2 4)
  cpus=$(nproc)
  for r in 8 16; do [ "$cpus" -ge "$r" ] && ranks+=("$r"); done
fi
skip() { echo "bench/osu.sh: skipped: $*"; exit 0; }
[ -n "$dir" ] && [ -d "$dir" ] || skip "no binaries folder given or '${dir}' absent"
command -v mpirun > /dev/null || skip "mpirun not found"
lib=$(cd "$build" 2> /dev/null && pwd)/libweft_mpi.so
[ -f "$lib" ] || skip "$build/libweft_mpi.so not built (needs MPI)"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
find_bin() { find "$dir" -name "$1" -type f -perm -u+x 2> /dev/null | head -1; }
max=${OSU_MAX:-1048576} iters=${OSU_ITERS:-1000} warm=${OSU_WARMUP:-100} only=${OSU_ONLY:-.}
load0=$(cut -d' ' -f1-3 /proc/loadavg)
tmp=$(mktemp -d)
trap '[ -n "${OSU_KEEP:-}" ] || rm -rf "$tmp"' EXIT
status=0
# benchmark:MPI call (as the library's report names it; - for calls it does
# not intercept):extra options (+ for a space)
osu=(osu_allreduce:Allreduce:-T+mpi_float osu_reduce:Reduce:-T+mpi_float osu_bcast:Bcast:
  osu_allgather:Allgather: osu_allgatherv:-: osu_alltoall:Alltoall: osu_alltoallv:Alltoallv:
  osu_gather:-: osu_gatherv:-: osu_scatter:-: osu_scatterv:-:
  osu_reduce_scatter:Reduce_scatter:-T+mpi_float
  osu_reduce_scatter_block:Reduce_scatter_block:-T+mpi_float)
imb_calls=(Allreduce Reduce Reduce_scatter Reduce_scatter_block Bcast Allgather Allgatherv Alltoall
  Alltoallv Gather Gatherv Scatter Scatterv)
rows=$tmp/rows
: > "$rows"
# rows: "row KIND BENCH NP SIZE US", one per size of every run.
served() { # served FILE CALL: rank 0's served/passed counts of CALL
  [ "$2" = - ] && { echo "not intercepted"; return; }
  grep -h 'rank 0: calls served' "$1" | tr ',' '\n' | grep -w "$2" | head -1 | awk '{print $NF}'
}
reasons() { # reasons FILE: rank 0's passed calls per reason
  sed -n 's/^weft INFO pmpi: rank 0: \(MPI_[A-Za-z_]* passed to MPI [0-9]* times\? (.*)\)$/  \1/p' "$1" |
    sort -u
}
run_pair() { # run_pair NAME NP OUT-PREFIX PROGRAM ARGS...: plain, then preloaded
  local name=$1 np=$2 pre=$3 kind rc
  shift 3
  for kind in mpi weft; do
    if [ $kind = mpi ]; then
      timeout 900 mpirun -np "$np" "$@" > "$pre.$kind" 2>&1
    else
      timeout 900 mpirun -np "$np" -x LD_PRELOAD="$lib" -x WEFT_LOG=info "$@" > "$pre.$kind" 2>&1
    fi
    rc=$?
    [ $rc = 0 ] || { echo "bench/osu.sh: $kind $name -np $np failed ($rc):"; tail -5 "$pre.$kind"; status=1; }
  done
}
found=0
declare -A counts
for entry in "${osu[@]}"; do
  IFS=: read -r b call extra <<< "$entry"
  [[ $b =~ $only ]] || continue
  bin=$(find_bin "$b")
  [ -n "$bin" ] || { echo "bench/osu.sh: $b not found below $dir, left out"; continue; }
  found=1
  for np in "${ranks[@]}"; do
    for r in $(seq "$runs"); do
      pre=$tmp/$b.$np.$r
      # shellcheck disable=SC2086 # extra is empty or "-T mpi_float"
      run_pair "$b" "$np" "$pre" "$bin" -m "1:$max" -i "$iters" -x "$warm" ${extra//+/ }
      for kind in mpi weft; do
        awk -v k=$kind -v b="$b" -v np="$np" '$1 ~ /^[0-9]+$/ && NF >= 2 && $2 ~ /^[0-9.]+$/ {
          print "row", k, b, np, $1, $2 }' "$pre.$kind" >> "$rows"
      done
      counts[$b.$np]="${counts[$b.$np]:-} $(served "$pre.weft" "$call")"
      reasons "$pre.weft" > "$tmp/reasons.$b.$np"
    done
  done
done
imb=$(find_bin IMB-MPI1)
if [ -n "$imb" ] && [[ IMB-MPI1 =~ $only ]]; then
  found=1
  for np in "${ranks[@]}"; do
    for r in $(seq "$runs"); do
      pre=$tmp/imb.$np.$r
      run_pair IMB-MPI1 "$np" "$pre" "$imb" "${imb_calls[@]}" -npmin "$np" -msglog "0:$(awk -v m="$max" \
        'BEGIN { print int(log(m) / log(2) + 0.5) }')" -iter "$iters" -time 2
      # IMB rows: #bytes #repetitions t_min t_max t_avg (us); t_avg kept.
      for kind in mpi weft; do
        awk -v k=$kind -v np="$np" '/^# Benchmarking/ { b = "IMB_" $3 }
          b != "" && NF >= 5 && $1 ~ /^[0-9]+$/ && $5 ~ /^[0-9.]+$/ { print "row", k, b, np, $1, $5 }' \
          "$pre.$kind" >> "$rows"
      done
      for call in "${imb_calls[@]}"; do
        case $call in Allgatherv | Gather* | Scatter*) c=- ;; *) c=$call ;; esac
        counts[IMB_$call.$np]="${counts[IMB_$call.$np]:-} $(served "$pre.weft" "$c")"
      done
      reasons "$pre.weft" > "$tmp/reasons.imb.$np"
    done
  done
fi
[ $found = 1 ] || skip "neither OSU collectives nor IMB-MPI1 below $dir"
echo "== OSU/IMB latency, Open MPI alone and through libweft_mpi.so: median of $runs alternating runs" \
  "each, us; ratio weft / Open MPI (below 1: weft faster); $(nproc) CPUs"
# The benchmarks in the order they ran, then one table each.
for key in $(awk '$1 == "row" && !seen[$3 "." $4]++ { print $3 "." $4 }' "$rows"); do
  b=${key%.*} np=${key##*.}
  echo
  echo "-- $b, $np ranks; weft served/passed, rank 0, per run:${counts[$key]:- -}"
  rf=$tmp/reasons.$b.$np
  [[ $b == IMB_* ]] && rf=$tmp/reasons.imb.$np
  [ -s "$rf" ] && { echo "  passed to MPI, last run, rank 0:"; cat "$rf"; }
  echo "| bytes | Open MPI us | weft us | weft/OMPI |"
  echo "| ---: | ---: | ---: | ---: |"
  awk -v b="$b" -v np="$np" '
    function median(s,   n, i, j, t, a) {
      n = split(s, a, " ")
      for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] + 0 < a[i] + 0) { t = a[i]; a[i] = a[j]; a[j] = t }
      return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
    }
    $1 == "row" && $3 == b && $4 == np { v[$2 " " $5] = v[$2 " " $5] " " $6; if (!($5 in seen)) { seen[$5] = 1; sz[++ns] = $5 } }
    END {
      for (s = 1; s <= ns; s++) {
        m = ("mpi " sz[s]) in v ? median(v["mpi " sz[s]]) : -1
        w = ("weft " sz[s]) in v ? median(v["weft " sz[s]]) : -1
        if (m < 0 || w < 0) printf "| %s | %s | %s | - |\n", sz[s], m < 0 ? "-" : m, w < 0 ? "-" : w
        else printf "| %s | %.2f | %.2f | %s |\n", sz[s], m, w, (m > 0 ? sprintf("%.2f", w / m) : "-")
      }
    }' "$rows"
done
echo
echo "load average before: $load0; after: $(cut -d' ' -f1-3 /proc/loadavg)"
exit $status
