#!/bin/bash
# Small-message latency of two builds of libweft_mpi.so against plain Open
# MPI, alternated in one session: ROUNDS rounds, each running
# bench_lat_mpi (of BUILD_B) plainly, preloaded with BUILD_A's library and
# with BUILD_B's, at 8 B, 64 B, 256 B and 1 KiB (or LAT_SIZES), every
# collective (or those LAT_COLLS names: bench/lat_mpi.c). Prints, per
# collective and size, the least and the median per-call latency of each
# (us) and each library's ratio to plain Open MPI (least; median). On a
# machine shared with other jobs the least of several runs is the figure
# least disturbed (other work only adds time), the median the typical one.
# Never fails on time; exits 1 only when a run fails. Skips (exit 0 with a
# line saying why) without mpirun, python3 or the libraries.
# Usage: bench/lat_ab.sh BUILD_A BUILD_B [NP [ITERS [ROUNDS]]]  (default
# 2 ranks, 20000 calls, 9 rounds)
set -u
a=${1:-} b=${2:-} np=${3:-2} iters=${4:-20000} rounds=${5:-9}
skip() { echo "bench/lat_ab.sh: skipped: $*"; exit 0; }
command -v mpirun > /dev/null || skip "mpirun not found"
command -v python3 > /dev/null || skip "python3 not found"
liba=$(cd "$a" 2> /dev/null && pwd)/libweft_mpi.so libb=$(cd "$b" 2> /dev/null && pwd)/libweft_mpi.so
prog=$(cd "$b" 2> /dev/null && pwd)/bench_lat_mpi
[ -f "$liba" ] && [ -f "$libb" ] && [ -x "$prog" ] ||
  skip "libweft_mpi.so of '$a' and '$b', or bench_lat_mpi of '$b', not built"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
load0=$(cut -d' ' -f1-3 /proc/loadavg)
status=0
for ((r = 0; r < rounds; r++)); do
  for who in plain A B; do
    pre=()
    [ $who = A ] && pre=(-x LD_PRELOAD="$liba")
    [ $who = B ] && pre=(-x LD_PRELOAD="$libb")
    out=$(timeout 600 mpirun -np "$np" "${pre[@]}" "$prog" "$iters" ${LAT_SIZES:-8 64 256 1024} 2> /dev/null) ||
      { echo "run failed: $who"; status=1; }
    grep -E '^[a-z_]+ [0-9]+: ' <<< "$out" | sed "s/^/$who /" >> "$tmp"
  done
done
echo "$np ranks, $rounds rounds of $iters calls: A = $a, B = $b; us least/median; ratio to Open MPI least; median"
python3 - "$tmp" << 'PY'
import collections, statistics, sys
d = collections.defaultdict(list)
for line in open(sys.argv[1]):
    who, coll, size, us = line.split()
    d[(coll, int(size.rstrip(':')), who)].append(float(us))
print("| collective | bytes | Open MPI | A | B | A / Open MPI | B / Open MPI |")
print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
for coll, size in sorted({(c, s) for c, s, w in d}):
    v = [d[(coll, size, w)] for w in ("plain", "A", "B")]
    if not all(v):
        continue
    m = [(min(x), statistics.median(x)) for x in v]
    cell = lambda x: "%.2f/%.2f" % x
    ratio = lambda x: "%.2f; %.2f" % (x[0] / m[0][0], x[1] / m[0][1])
    print("| %s | %d | %s | %s | %s | %s | %s |" % (coll, size, cell(m[0]), cell(m[1]), cell(m[2]),
                                                  ratio(m[1]), ratio(m[2])))
PY
echo "load average before: $load0; after: $(cut -d' ' -f1-3 /proc/loadavg)"
exit $status
