#!/bin/bash
# weft allreduce against Open MPI's MPI_Allreduce on this host: runs
# bench_run_mpi (bench/run_mpi.c) for 2 and 4 ranks, with Open MPI's default
# rules and with each coll_tuned_allreduce_algorithm forced (1 basic linear,
# 2 nonoverlapping, 3 recursive doubling, 4 ring, 5 segmented ring,
# 6 rabenseifner), then prints per rank count and size weft's median busbw
# over the runs, Open MPI's best busbw and which setting gave it, and the
# ratio; and, at the largest size, weft's busbw against the single-core
# memcpy bound measured in rounds interleaved with weft's calls (the median
# of the per-round ratios over all runs; bench/run_mpi.c's paired_ratio),
# next to the ceiling any allreduce has when the ranks share this host's
# cores.
# Never fails on time; exits 1 only when a run fails (a wrong result).
# Usage: bench/run.sh [BUILD_DIR [MAX_BYTES]]   (default build, 268435456)
set -u
build=${1:-build} max=${2:-268435456}
bin=$build/bench_run_mpi
[ -x "$bin" ] || { echo "bench/run.sh: $bin not built (needs MPI)" >&2; exit 1; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
rows=$(mktemp)
trap 'rm -f "$rows"' EXIT
names=(default "1-basic_linear" "2-nonoverlapping" "3-recursive_doubling" "4-ring" "5-segmented_ring" "6-rabenseifner")
status=0
for np in 2 4; do
  for a in 0 1 2 3 4 5 6; do
    mca=()
    [ $a = 0 ] || mca=(--mca coll_tuned_use_dynamic_rules 1 --mca coll_tuned_allreduce_algorithm $a)
    echo "== mpirun -np $np ${mca[*]} $bin ${names[$a]} $max"
    mpirun -np "$np" "${mca[@]}" "$bin" "${names[$a]}" "$max" | tee -a "$rows" | grep -v '^row\|^memcpy'
    [ "${PIPESTATUS[0]}" = 0 ] || status=1
  done
done
echo
echo "== summary: busbw GB/s; weft = median over its 7 runs, mpi = best setting"
awk '
  $1 == "row" { k = $2 " " $4; w[k] = w[k] " " $5; if ($6 > best[k]) { best[k] = $6; who[k] = $3 }
                if (!(k in seen)) { seen[k] = 1; order[++n] = k } }
  $1 == "memcpy" { mc[$2] = mc[$2] " " $4; big[$2] = big[$2] " " $5; rat[$2] = rat[$2] " " $6
                   ceil[$2] = $7 }
  function median(list,   a, m, i, j, t) {
    m = split(list, a, " ")
    for (i = 1; i <= m; i++) for (j = i + 1; j <= m; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
    return m % 2 ? a[(m + 1) / 2] : (a[m / 2] + a[m / 2 + 1]) / 2
  }
  END {
    printf "%5s %10s %10s %10s %8s  %s\n", "ranks", "bytes", "weft", "mpi-best", "ratio", "mpi setting"
    for (i = 1; i <= n; i++) {
      split(order[i], p, " "); m = median(w[order[i]])
      printf "%5d %10d %10.3f %10.3f %8.2f  %s\n", p[1], p[2], m, best[order[i]],
             (best[order[i]] > 0 ? m / best[order[i]] : 0), who[order[i]]
    }
    for (r in mc)
      printf "ranks %d, largest size: weft busbw %.3f GB/s, single-core copy %.3f GB/s (medians); weft/copy %.2f (median of per-round ratios); ceiling %.2f\n", r, median(big[r]), median(mc[r]), median(rat[r]), ceil[r]
  }' "$rows"
exit $status
