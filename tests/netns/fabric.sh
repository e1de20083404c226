#!/bin/bash
# An emulated 4-host fabric on one machine (docs/netns.md).
#
# Builds hosts h0..h3, each a network namespace with one veth (eth0, MTU
# 9000) to a bridge in a fifth namespace (the switch), every veth
# rate-limited by tbf in both directions (h0..h2: 1 Gbit/s, h3: 200 Mbit/s),
# with addresses 198.18.0.1 .. 198.18.0.4/24 from the benchmarking range,
# and TCP without pacing (cubic or reno; see TCP_CC below).
# tests/netns/fabric.topo is the same fabric, at the rates TCP payload gets
# through those links, with tbf's buckets as shapers (burst= peak=).
#
# First a calibration: a 2-rank ring allreduce of MAXBYTES between h0 and h3
# (both directions of the slow link at once) measures what share of the
# nominal rates the links deliver on this machine now; cal.topo is
# fabric.topo scaled by it. Then `weft launch -n 4 -- weft perf allreduce`
# with WEFT_NETNS per rank, so only the TCP data sockets live in the
# namespaces (the rendezvous stays on 127.0.0.1 in the root namespace),
# four times:
#   builtin  weft's built-in ring (no fabric given),
#   ring     the ring plan (WEFT_ALGO=ring) through the plan executor,
#   chosen   the plan weft chooses per size (WEFT_FABRIC and a tuning table
#            from `weft tune`, the simulator's ranking), named in the log,
#   ranked   the plan weft chooses without a table (WEFT_FABRIC only: the
#            shared-link estimate), named in the log.
# For each size and run it prints the measured time, the simulator's
# predictions on fabric.topo and on cal.topo (weft sim's default model for
# these CPU hosts, the runtime model: weft's executor, back to back as weft
# perf's iterations run; the slice count it cuts must equal the one the
# executor logged for that size) and their relative errors, ring / chosen
# measured and predicted, and the load average before and after.
#
# Fails when a result is wrong, a run fails, the runtime model's slices
# differ from the executor's, the median |calibrated error| over the
# executor runs (ring, chosen, ranked) of any one size, or over all sizes,
# exceeds AGREE_PCT percent (environment; default 10), or a
# measured ring time beats the fabric's throughput bound by more than
# tbf's burst allows (which would mean the data did not cross the
# rate-limited links). Everything it creates is deleted on exit, also on failure or interrupt. Skips (exit 77) when not
# root or without ip/tc.
#
# usage: [AGREE_PCT=P] fabric.sh WEFT_BIN SOURCE_DIR [MAXBYTES [MINBYTES]]
#        (defaults 10, 4M and 64K; sizes run from MINBYTES to MAXBYTES by
#        factors of 4)
set -u
USAGE="usage: fabric.sh WEFT_BIN SOURCE_DIR [MAXBYTES [MINBYTES]]"
WEFT=${1:?$USAGE}
SRC=${2:?$USAGE}
MAXB=${3:-4M}
MINB=${4:-64K}
AGREE_PCT=${AGREE_PCT:-10}
[[ $AGREE_PCT =~ ^[0-9]+$ ]] || { echo "FAIL: AGREE_PCT='$AGREE_PCT' is not a whole percent"; exit 2; }
TOPO=$SRC/tests/netns/fabric.topo
RATES=(1gbit 1gbit 1gbit 200mbit)
# tbf buckets: about one 9014-byte frame on h3 and two on the others. A
# bucket lets what it holds through at veth speed after an idle moment,
# which a wire does not: with 128 KB and 32 KB, 64-256 KiB dbtree allreduces
# (32-128 KiB messages) measured 28-33% faster than the link rates allow
# (docs/netns.md, "Where the error at 64 KiB came from"). fabric.topo gives
# the same buckets as shapers (burst=), so the simulator runs them too.
BURSTS=(16kb 16kb 16kb 10kb)

[ -d "$SRC" ] || { echo "FAIL: source directory '$SRC' not found"; exit 1; }
# fabric.topo states these buckets as shapers: tc's kb is 1024 bytes of
# frames, burst= counts payload (x 8948/9014, as the rates), rounded.
for i in 0 1 2 3; do
    want=$(awk -v b="${BURSTS[$i]}" 'BEGIN { sub(/kb$/, "", b); printf "%d", b * 1024 * 8948 / 9014 + 0.5 }')
    got=$(awk -v h="h$i" '$1 == "duplex" && $2 == h { for (k = 5; k <= NF; k++)
        if ($k ~ /^burst=/) { sub(/^burst=/, "", $k); print $k } }' "$TOPO")
    [ "$got" = "$want" ] || { echo "FAIL: $TOPO gives h$i burst=$got, tbf's ${BURSTS[$i]} is burst=$want"; exit 1; }
done
. "$SRC/tests/netns/lib.sh"
netns_begin weft

# ---- The fabric -------------------------------------------------------------
# MTU 9000: at 1500 the per-packet work of four ranks' TCP stacks, the bridge
# and tbf on two shared cores kept a bidirectional 200 Mbit/s link at about
# 70% (measured with a plain socket pair); at 9000 both directions run at
# 95%+ and a frame carries 8948 payload bytes in 9014 (what fabric.topo
# gives as the link rates).
one_nic_hosts
echo "# fabric: 4 namespaces $P-h0..h3 behind bridge $SW; h0..h2 ${RATES[0]}, h3 ${RATES[3]} (tbf, both directions, MTU 9000); TCP $TCP_CC"

# ---- Tuning table -------------------------------------------------------------
# The simulator's ranking per size; the runtime follows it (WEFT_TUNING).
"$WEFT" tune "$TOPO" --colls allreduce --sizes "$MINB:$MAXB:x4" --slices 8 -o "$TMP/tune" \
    >"$TMP/tune.out" 2>&1 || { cat "$TMP/tune.out"; die "weft tune failed"; }
"$WEFT" plan "$TOPO" --coll allreduce --compare --json >"$TMP/compare.json" ||
    die "weft plan --compare failed"
RING_LIMIT=$(awk -F'"' '$2 == "algo" { algo = $4 }
    $2 == "algbw_exact" && algo == "ring" { print $4; exit }' "$TMP/compare.json")
[ -n "$RING_LIMIT" ] || die "no ring in the --compare output"

# ---- Runs -------------------------------------------------------------------------
# Each rank enters its own host's namespace for its data sockets only.
cat >"$TMP/rank.sh" <<EOF
#!/bin/sh
export WEFT_NETNS=/var/run/netns/$P-h\$WEFT_RANK WEFT_SOCKET_IFNAME=eth0
exec "\$@"
EOF
chmod +x "$TMP/rank.sh"
# The calibration's two ranks: rank 0 on h0, rank 1 on h3 (the slow link).
cat >"$TMP/rank2.sh" <<EOF
#!/bin/sh
H=h0; [ "\$WEFT_RANK" = 1 ] && H=h3
export WEFT_NETNS=/var/run/netns/$P-\$H WEFT_SOCKET_IFNAME=eth0
exec "\$@"
EOF
chmod +x "$TMP/rank2.sh"
perf() { # NAME RANKS WRAPPER MIN MAX [VAR=VALUE...]: one weft perf sweep with these settings
    local name=$1 n=$2 wrap=$3 min=$4 max=$5
    shift 5
    env "$@" WEFT_TRANSPORT=tcp WEFT_TIMEOUT=20 WEFT_LOG=debug timeout 600 "$WEFT" launch -n "$n" \
        -- "$wrap" "$WEFT" perf allreduce -b "$min" -e "$max" -f 4 -n 3 -w 1 -c 1 \
        >"$TMP/$name.out" 2>&1 || { cat "$TMP/$name.out"; die "weft perf ($name) failed"; }
    grep -q "transport tcp" "$TMP/$name.out" || { cat "$TMP/$name.out"; die "$name: not over TCP"; }
    grep -q "# Out of bounds values : 0 OK" "$TMP/$name.out" ||
        { cat "$TMP/$name.out"; die "$name: wrong results"; }
    # Rows: size count type redop root | time algbw busbw #wrong (out of place) | in place.
    awk '!/^#/ && !/^weft/ && NF >= 13 {print $1, $6, $10}' "$TMP/$name.out" >"$TMP/$name.t"
    [ -s "$TMP/$name.t" ] || { cat "$TMP/$name.out"; die "$name: no rows in the perf table"; }
}
load() { awk '{print $1}' /proc/loadavg; }
L0=$(load)
T0=$(date +%s)
perf calib 2 "$TMP/rank2.sh" "$MAXB" "$MAXB" WEFT_FABRIC= WEFT_ALGO=ring WEFT_TUNING=
perf builtin 4 "$TMP/rank.sh" "$MINB" "$MAXB" WEFT_FABRIC= WEFT_ALGO= WEFT_TUNING=
perf ring 4 "$TMP/rank.sh" "$MINB" "$MAXB" WEFT_FABRIC="$TOPO" WEFT_ALGO=ring WEFT_TUNING=
perf chosen 4 "$TMP/rank.sh" "$MINB" "$MAXB" WEFT_FABRIC="$TOPO" WEFT_ALGO= WEFT_TUNING="$TMP/tune"
perf ranked 4 "$TMP/rank.sh" "$MINB" "$MAXB" WEFT_FABRIC="$TOPO" WEFT_ALGO= WEFT_TUNING=
T1=$(date +%s)
L1=$(load)

# ---- Report -------------------------------------------------------------------
# Rank 0's executor logs (debug level) "plan allreduce: C chunks of B B, each cut into S
# slices" whenever the chunk size changes; the size of that run is C x B. weft perf
# names the rank after the subsystem ("weft DEBUG run: rank 0: plan allreduce: ...").
slices() { # RUN SIZE
    awk -v s="$2" '/^weft DEBUG run: rank 0: plan allreduce: / {
        c = $8; b = $11; n = $16; if (c * b == s) { print n; exit } }' "$TMP/$1.out"
}
choice() { # RUN SIZE: the algorithm rank 0 logged for this size
    sed -n "s/^weft INFO run: rank 0: allreduce $2 B: \([^ ]*\) (.*/\1/p" "$TMP/$1.out" | head -1
}
# The simulator's default model on these CPU hosts is the runtime model
# (weft's executor: slices from weft/exec_model.h, a per-message cost);
# its CSV ends in model,proto,slices.
sim_csv() { # ARGS...: "time_s model slices" of the last size
    "$WEFT" sim "$@" --csv | tail -1 | awk -F, '{ print $2, $(NF - 2), $NF }'
}
sim_plan() { # TOPO PLAN SIZE LOGGED_SLICES WHAT: simulated seconds; dies unless the
    # model ran is the runtime model and cut the executor's slice count
    local r t m n
    r=$(sim_csv "$1" --plan "$2" --size "$3" --back-to-back) || return 1
    read -r t m n <<<"$r"
    # (on stderr: this runs in a command substitution)
    [ "$m" = runtime ] ||
        { echo "FAIL: weft sim ran model '$m' on $1, not the runtime model" >&2; return 1; }
    [ "$n" = "$4" ] || { echo "FAIL: $5 at $3 bytes: the executor cut $4 slices," \
        "weft sim's runtime model $n" >&2; return 1; }
    echo "$t"
}
mean_s() { # RUN SIZE: measured seconds, out of place and in place averaged
    awk -v s="$2" '$1 == s { printf "%.9g\n", ($2 + $3) / 2e6 }' "$TMP/$1.t"
}

# The calibration: a 2-rank ring allreduce between h0 and h3 moves its bytes
# both ways over h3's link at once, as the 4-rank plans do. Its simulated
# time on the nominal rates over its measured time is the share of those
# rates that TCP through tbf delivered on this machine, now (per-packet and
# scheduling costs; tbf tokens lost while the loaded machine was late to
# dequeue: a bucket holds 1 ms of tokens at most). cal.topo is fabric.topo
# with every link at that share, so the simulator on it predicts what the
# schedules themselves cost, apart from what the emulated links deliver.
{
    echo "node h0 compute host=0"
    echo "node h3 compute host=3"
    echo "node br switch"
    awk '$1 == "duplex" && ($2 == "h0" || $2 == "h3")' "$TOPO"
} >"$TMP/pair.topo"
"$WEFT" plan "$TMP/pair.topo" --coll allreduce --algo ring -o "$TMP/pair.plan" >/dev/null ||
    die "weft plan for the calibration failed"
CSIZE=$(awk 'NR == 1 {print $1}' "$TMP/calib.t")
CS=$(slices calib "$CSIZE")
[ -n "$CS" ] || die "no slice count logged for the calibration"
CSIM=$(sim_plan "$TMP/pair.topo" "$TMP/pair.plan" "$CSIZE" "$CS" calibration) || exit 1
CMEAS=$(mean_s calib "$CSIZE")
EFF=$(awk -v a="$CSIM" -v b="$CMEAS" 'BEGIN { printf "%.6f", a / b }')
awk -v f="$EFF" '$1 == "duplex" { bw = $4; sub(/GB\/s$/, "", bw); $4 = sprintf("%.6fGB/s", bw * f) }
    { print }' "$TOPO" >"$TMP/cal.topo"
awk -v f="$EFF" 'BEGIN { exit !(f > 0.3 && f <= 1.2) }' ||
    die "calibration: links delivered $EFF of their nominal rate (expected 0.3 .. 1.2)"
awk -v size="$CSIZE" -v m="$CMEAS" -v s="$CSIM" -v f="$EFF" 'BEGIN {
    printf "# calibration: a ring allreduce of %d B between h0 and h3 took %.2f ms, %.2f ms " \
        "simulated on the nominal rates: links deliver %.1f%% of them\n", size, m * 1e3, s * 1e3,
        f * 100 }'

status=0
printf '%9s  %-8s %-7s %6s | %9s | %9s %7s | %9s %7s\n' size run algo slices measured sim err \
    cal-sim err
for size in $(awk '{print $1}' "$TMP/builtin.t"); do
    for run in builtin ring chosen ranked; do
        m=$(mean_s "$run" "$size")
        [ -n "$m" ] || die "size $size missing from the $run run"
        if [ "$run" = builtin ]; then
            # weft sim --algo ring in the default model; the built-in ring
            # (coll_ring.c) is not the executor, so this row is only reported.
            algo=ring sl=-
            sim=$(sim_csv "$TOPO" --algo ring --coll allreduce --size "$size" |
                cut -d' ' -f1)
            cal=$(sim_csv "$TMP/cal.topo" --algo ring --coll allreduce --size "$size" |
                cut -d' ' -f1)
        else
            algo=ring
            [ "$run" = ring ] || algo=$(choice "$run" "$size")
            [ -n "$algo" ] || die "no choice logged for $size bytes ($run)"
            [ -f "$TMP/$algo.plan" ] || "$WEFT" plan "$TOPO" --coll allreduce --algo "$algo" \
                -o "$TMP/$algo.plan" >/dev/null || die "weft plan --algo $algo failed"
            sl=$(slices "$run" "$size")
            [ -n "$sl" ] || die "no slice count logged for $size bytes ($run)"
            sim=$(sim_plan "$TOPO" "$TMP/$algo.plan" "$size" "$sl" "$run") || exit 1
            cal=$(sim_plan "$TMP/cal.topo" "$TMP/$algo.plan" "$size" "$sl" "$run") || exit 1
        fi
        [ -n "$sim" ] && [ -n "$cal" ] || die "weft sim failed at $size bytes ($run)"
        echo "$size $run $algo $sl $m $sim $cal" >>"$TMP/report"
        awk -v size="$size" -v run="$run" -v algo="$algo" -v sl="$sl" -v m="$m" -v s="$sim" \
            -v c="$cal" 'BEGIN {
            printf "%9d  %-8s %-7s %6s | %9.2f | %9.2f %6.1f%% | %9.2f %6.1f%%\n", size, run,
                algo, sl, m * 1e3, s * 1e3, (s - m) / m * 100, c * 1e3, (c - m) / m * 100 }'
    done
done
# A ring cannot beat its throughput bound on this fabric, except for what
# the tbf buckets (16 KB, 10 KB, full at the start) let through.
awk -v rl="$RING_LIMIT" '$2 == "builtin" || $2 == "ring" {
    n = split(rl, f, "/"); lim = (n == 2 ? f[1] / f[2] : f[1]) * 1e9
    bound = $1 / lim
    if ($5 < 0.8 * bound - 0.002) {
        printf "FAIL: the %s ring took %.2f ms at %d bytes, below 80%% of its bound %.2f ms: " \
            "the data did not cross the rate-limited links\n", $2, $5 * 1e3, $1, bound * 1e3
        bad = 1
    } }
    END { exit bad }' "$TMP/report" || status=1
# The simulator against the executor: the median, over every size and
# executor run (ring, chosen, ranked), of |calibrated error| must be within
# AGREE_PCT (10% by default). Single figures move by 10-15% between runs
# of the same plan on this shared machine (docs/netns.md), so a bound per
# figure would fail on the load of others; the median over 3 runs x sizes
# moves less, but on a loaded machine (CTest -j8 beside CPU hogs) it
# reached 10.6% with the model unchanged, which is why the CTest run
# (tests/cli/netns.sh) asks for 25%: still a failure when the model is off
# at most sizes, never one from load. The built-in ring is not the executor
# and is reported only.
# A machine loaded past four times its CPUs (other builds and suites beside
# this one) times the scheduler, not the links: several developers' full
# suites at load 25-28 on 2 CPUs moved the median to 22%, where CTest -j8
# beside six CPU hogs (load about 14) kept it within 10.6%. Past 4x the
# agreement is printed and not judged; everything else still is. CTest on
# CI (2 CPUs, -j2) stays far below.
CPUS=$(nproc 2>/dev/null || echo 1)
JUDGE=1
awk -v a="$L0" -v b="$L1" -v c="$CPUS" 'BEGIN { exit !(a > 4 * c || b > 4 * c) }' && {
    JUDGE=0
    echo "# load average $L0 before, $L1 after on $CPUS CPUs: the agreement below is not judged"
}
# Per size too: the median over that size's executor runs (ring, chosen,
# ranked: one slow run of the three, from the load, does not decide it).
awk -v lim="$AGREE_PCT" -v judge=$JUDGE '
    function median(x, n,    i, j, t) {
        for (i = 2; i <= n; i++) for (j = i; j > 1 && x[j - 1] > x[j]; j--) {
            t = x[j]; x[j] = x[j - 1]; x[j - 1] = t }
        return n % 2 ? x[(n + 1) / 2] : (x[n / 2] + x[n / 2 + 1]) / 2 }
    $2 != "builtin" { m = $5; e = ($7 - m) / m; e = e < 0 ? -e : e; n++; a[n] = e
        if (!($1 in k)) { k[$1] = 0; order[++ns] = $1 }
        k[$1]++; per[$1, k[$1]] = e }
    END { bad = 0
          for (i = 1; i <= ns; i++) { s = order[i]; delete x
              for (j = 1; j <= k[s]; j++) x[j] = per[s, j]
              med = median(x, k[s])
              over = med > lim / 100
              printf "# %9d B: median |cal-sim err| %.1f%% over %d executor runs (limit %d%%)%s\n",
                  s, med * 100, k[s], lim, over ? (judge ? ": FAIL" : ": not judged") : ""
              if (over && judge) bad = 1 }
          med = median(a, n)
          printf "# executor runs: median |cal-sim err| %.1f%% over %d figures (limit %d%%)\n",
              med * 100, n, lim
          if (med > lim / 100 && judge) bad = 1
          exit !(n > 0 && !bad) }' "$TMP/report" ||
    { echo "FAIL: the simulator's runtime model is not within $AGREE_PCT% of the executor (median over all sizes, or over the runs of a size)"; status=1; }
awk '$2 == "ring" { r[$1] = $5; rs[$1] = $6 }
    $2 == "chosen" { c[$1] = $5; cs[$1] = $6; n[$1] = $3 }
    END { for (s in r) printf "# %9d: ring / %s %.2fx measured, %.2fx simulated\n", s, n[s],
        r[s] / c[s], rs[s] / cs[s] }' "$TMP/report" | sort -n -k2
echo "# ms per allreduce (out of place and in place averaged); err = (simulated - measured) / measured"
echo "# builtin: weft's ring schedule (weft sim --algo ring); ring: the ring plan; chosen: the plan"
echo "# of the tuning table (weft tune); ranked: the plan the runtime ranks first without a table"
echo "# (weft_plan_shared_time); sim: weft sim's default (runtime) model on fabric.topo, whose"
echo "# slice counts are checked against the executor's; cal-sim: the same on cal.topo"
echo "# runs took $((T1 - T0)) s; load average (1 min) $L0 before, $L1 after"
[ $status = 0 ] || exit 1
echo "PASS"
