#!/bin/bash
# weft allreduce against Open MPI's MPI_Allreduce on this host, in one run:
# bench_run_mpi (bench/run_mpi.c) for 2, 4, 8 and 16 ranks (and 32 and 64
# where the host has that many CPUs), each with ordinary (private) buffers
# and with shared ones (weft_comm_alloc), Open MPI with its default rules
# (the vader transport), float sum, sizes 1 KiB to MAX_BYTES in x4 steps.
# Prints each run's table, then for each kind of buffer the ratio table of
# issue 17: rows ranks, columns 1 KiB, 16 KiB, 256 KiB, 4 MiB and 64 MiB
# (those up to MAX_BYTES), each cell weft's busbw / Open MPI's, and per
# rank count and buffer kind at the largest size weft's busbw against the
# single-core memcpy bound (measured in rounds interleaved with weft's
# calls; bench/run_mpi.c's paired_ratio) next to the ceiling any allreduce
# has when the ranks share this host's cores (docs/run.md: n ranks read n
# buffers and write n, on at most min(n, cores) cores), and the measured
# ceiling: the busbw of every rank copying its buffer at once, the memory
# traffic of any allreduce (all-copy), with weft's busbw over it.
# With more ranks than CPUs the ranks are oversubscribed: the figures then
# measure scheduling as much as the algorithms (say so when quoting them).
# Never fails on time; exits 1 only when a run fails (a wrong result).
# Usage: bench/run.sh [BUILD_DIR [MAX_BYTES [RANKS ...]]]
#   (default build, 67108864, 2 4 8 16 and 32 64 where the host has the CPUs)
set -u
build=${1:-build} max=${2:-67108864}
shift $(($# < 2 ? $# : 2))
bin=$build/bench_run_mpi
[ -x "$bin" ] || { echo "bench/run.sh: $bin not built (needs MPI)" >&2; exit 1; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
ranks=("$@")
if [ ${#ranks[@]} = 0 ]; then
  ranks=(2 4 8 16)
  cpus=$(nproc)
  [ "$cpus" -ge 32 ] && ranks+=(32)
  [ "$cpus" -ge 64 ] && ranks+=(64)
fi
rows=$(mktemp)
trap 'rm -f "$rows"' EXIT
status=0
for np in "${ranks[@]}"; do
  for buf in ordinary shared; do
    echo "== mpirun -np $np $bin default $max $buf"
    mpirun -np "$np" "$bin" default "$max" "$buf" | tee -a "$rows" | grep -v '^row\|^memcpy'
    [ "${PIPESTATUS[0]}" = 0 ] || status=1
  done
done
echo
echo "== weft busbw / Open MPI busbw (allreduce, float sum; $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg))"
awk -v max="$max" '
  $1 == "row" { k = $7 " " $2 " " $4; w[k] = $5; m[k] = $6; nr[$2] = 1 }
  $1 == "memcpy" { mc[$8 " " $2] = sprintf("%-8s %5d %10.3f %10.3f %8.2f %8.2f %10.3f %8.2f", $8, $2, $5, $4, $6, $7, $9, $10) }
  END {
    split("1024 16384 262144 4194304 67108864", sz, " ")
    split("1KiB 16KiB 256KiB 4MiB 64MiB", nm, " ")
    nsz = 0
    for (i = 1; i <= 5; i++) if (sz[i] <= max) nsz = i
    nn = 0
    for (r in nr) rk[++nn] = r + 0
    for (i = 1; i <= nn; i++) for (j = i + 1; j <= nn; j++) if (rk[j] < rk[i]) { t = rk[i]; rk[i] = rk[j]; rk[j] = t }
    split("ordinary shared", kinds, " ")
    for (b = 1; b <= 2; b++) {
      printf "\n%s buffers\n| ranks |", kinds[b]
      for (i = 1; i <= nsz; i++) printf " %s |", nm[i]
      printf "\n| --- |"
      for (i = 1; i <= nsz; i++) printf " --- |"
      printf "\n"
      for (i = 1; i <= nn; i++) {
        printf "| %d |", rk[i]
        for (s = 1; s <= nsz; s++) {
          k = kinds[b] " " rk[i] " " sz[s]
          if (k in w && m[k] > 0) printf " %.2f |", w[k] / m[k]; else printf " - |"
        }
        printf "\n"
      }
    }
    printf "\nlargest size: %-8s %5s %10s %10s %8s %8s %10s %8s\n", "buffers", "ranks", "weft", "copy", "ratio", "ceiling", "all-copy", "weft/all"
    for (b = 1; b <= 2; b++) for (i = 1; i <= nn; i++) {
      k = kinds[b] " " rk[i]
      if (k in mc) printf "              %s\n", mc[k]
    }
  }' "$rows"
exit $status
