#!/bin/bash
# Unmodified OSU micro-benchmarks (7.x) and IMB-MPI1 through libweft_mpi.so
# (LD_PRELOAD) against plain Open MPI, in one run (issue 17; docs/run.md,
# "Figures"). For every benchmark and rank count the two are run
# alternately RUNS times; each cell is the median OSU latency of weft over
# the median of Open MPI (below 1 is weft faster). The weft runs log at
# info level and the script prints, for each, rank 0's count of calls
# served by weft and passed to MPI for the benchmark's MPI call, so the
# table shows weft served every call ("passed" must be 0).
# Never fails on time; exits 1 only when a run fails. Skips (exit 0 with a
# line saying why) when the binaries, mpirun or the shim are absent.
# Usage: bench/osu.sh BIN_DIR [BUILD_DIR [RUNS [RANKS ...]]]
#   BIN_DIR holds the OSU build (osu_allreduce ... found below it) and/or
#   IMB-MPI1 (found below it); BUILD_DIR default build, RUNS default 3,
#   RANKS default 2 4, and 8 16 32 64 where the host has that many CPUs. Build OSU and IMB outside the tree. OSU runs with
#   -T mpi_float (its default, MPI_CHAR, is no reduction type for weft).
set -u
dir=${1:-} build=${2:-build} runs=${3:-3}
shift $(($# < 3 ? $# : 3))
ranks=("$@")
if [ ${#ranks[@]} = 0 ]; then
  ranks=(2 4)
  cpus=$(nproc)
  for r in 8 16 32 64; do [ "$cpus" -ge "$r" ] && ranks+=("$r"); done
fi
skip() { echo "bench/osu.sh: skipped: $*"; exit 0; }
[ -n "$dir" ] && [ -d "$dir" ] || skip "no binaries folder given or '${dir}' absent"
command -v mpirun > /dev/null || skip "mpirun not found"
lib=$(cd "$build" 2> /dev/null && pwd)/libweft_mpi.so
[ -f "$lib" ] || skip "$build/libweft_mpi.so not built (needs MPI)"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
find_bin() { find "$dir" -name "$1" -type f -perm -u+x 2> /dev/null | head -1; }
sizes="8 1024 65536 1048576 4194304"
iters=${OSU_ITERS:-100} warm=${OSU_WARMUP:-10}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
status=0
# name MPI-call-in-the-report
osu=(osu_allreduce:Allreduce osu_reduce:Reduce osu_bcast:Bcast osu_allgather:Allgather
  osu_reduce_scatter:Reduce_scatter osu_alltoall:Alltoall)
rows=$tmp/rows
: > "$rows"
# rows: "row KIND BENCH NP SIZE US", one per size of every run.
served() { # served FILE CALL: rank 0's served/passed counts of CALL
  grep -h 'rank 0: calls served' "$1" | tr ',' '\n' | grep -w "$2" | head -1 | awk '{print $NF}'
}
found=0
for pair in "${osu[@]}"; do
  b=${pair%%:*} call=${pair#*:}
  bin=$(find_bin "$b")
  [ -n "$bin" ] || { echo "bench/osu.sh: $b not found below $dir, left out"; continue; }
  found=1
  for np in "${ranks[@]}"; do
    for r in $(seq "$runs"); do
      for kind in mpi weft; do
        out=$tmp/$b.$np.$kind.$r
        if [ $kind = mpi ]; then
          timeout 600 mpirun -np "$np" "$bin" -m 8:4194304 -i "$iters" -x "$warm" -T mpi_float > "$out" 2>&1
        else
          timeout 600 mpirun -np "$np" -x LD_PRELOAD="$lib" -x WEFT_LOG=info "$bin" \
            -m 8:4194304 -i "$iters" -x "$warm" -T mpi_float > "$out" 2>&1
        fi
        rc=$?
        [ $rc = 0 ] || { echo "bench/osu.sh: $kind $b -np $np failed ($rc):"; tail -5 "$out"; status=1; }
        awk -v k=$kind -v b="$b" -v np="$np" '$1 ~ /^[0-9]+$/ && NF >= 2 && $2 ~ /^[0-9.]+$/ {
          print "row", k, b, np, $1, $2 }' "$out" >> "$rows"
      done
      echo "== $b -np $np run $r: weft served/passed $call $(served "$tmp/$b.$np.weft.$r" "$call")"
    done
  done
done
imb=$(find_bin IMB-MPI1)
if [ -n "$imb" ]; then
  found=1
  for np in "${ranks[@]}"; do
    for r in $(seq "$runs"); do
      for kind in mpi weft; do
        out=$tmp/imb.$np.$kind.$r
        args=(Allreduce Reduce Reduce_scatter Bcast Allgather Alltoall -npmin "$np" -msglog 3:22
          -iter "$iters" -time 2)
        if [ $kind = mpi ]; then
          timeout 600 mpirun -np "$np" "$imb" "${args[@]}" > "$out" 2>&1
        else
          timeout 600 mpirun -np "$np" -x LD_PRELOAD="$lib" -x WEFT_LOG=info "$imb" "${args[@]}" \
            > "$out" 2>&1
        fi
        rc=$?
        [ $rc = 0 ] || { echo "bench/osu.sh: $kind IMB-MPI1 -np $np failed ($rc):"; tail -5 "$out"; status=1; }
        # IMB rows: #bytes #repetitions t_min t_max t_avg (us); t_avg kept.
        awk -v k=$kind -v np="$np" '/^# Benchmarking/ { b = "IMB_" $3 }
          b != "" && NF >= 5 && $1 ~ /^[0-9]+$/ && $5 ~ /^[0-9.]+$/ { print "row", k, b, np, $1, $5 }' \
          "$out" >> "$rows"
      done
      s=""
      for call in Allreduce Reduce Reduce_scatter Bcast Allgather Alltoall; do
        s="$s $call $(served "$tmp/imb.$np.weft.$r" "$call"),"
      done
      echo "== IMB-MPI1 -np $np run $r: weft served/passed$s"
      grep -h 'not MPI_COMM_WORLD\|passed to MPI (' "$tmp/imb.$np.weft.$r" | sort -u | head -3
    done
  done
fi
[ $found = 1 ] || skip "neither OSU collectives nor IMB-MPI1 below $dir"
echo
echo "== median latency, weft / Open MPI (below 1: weft faster); $(nproc) CPUs," \
  "load $(cut -d' ' -f1-3 /proc/loadavg), $runs runs each, alternating"
awk -v sizes="$sizes" '
  function median(key,   n, i, j, t, a) {
    n = split(v[key], a, " ")
    for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] + 0 < a[i] + 0) { t = a[i]; a[i] = a[j]; a[j] = t }
    return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
  }
  $1 == "row" { k = $2 " " $3 " " $4 " " $5; v[k] = v[k] " " $6; if (!($3 " " $4 in seen)) { seen[$3 " " $4] = 1; order[++no] = $3 " " $4 } }
  END {
    ns = split(sizes, sz, " ")
    printf "| benchmark, ranks |"
    for (s = 1; s <= ns; s++) printf " %s |", (sz[s] >= 1048576 ? sz[s] / 1048576 " MiB" : sz[s] >= 1024 ? sz[s] / 1024 " KiB" : sz[s] " B")
    printf "\n| --- |"
    for (s = 1; s <= ns; s++) printf " --- |"
    printf "\n"
    for (o = 1; o <= no; o++) {
      split(order[o], bn, " ")
      printf "| %s, %s |", bn[1], bn[2]
      for (s = 1; s <= ns; s++) {
        km = "mpi " order[o] " " sz[s]; kw = "weft " order[o] " " sz[s]
        if ((km in v) && (kw in v) && median(km) > 0)
          printf " %.2f (%.1f/%.1f) |", median(kw) / median(km), median(kw), median(km)
        else printf " - |"
      }
      printf "\n"
    }
  }' "$rows"
exit $status
