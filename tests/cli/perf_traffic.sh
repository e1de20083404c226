# weft perf alltoall --traffic FILE under weft launch: a skewed matrix and
# a symmetric one (in place) on shared memory and TCP, a seeded MoE
# dispatch from `weft traffic moe`, every element checked (#wrong 0); the
# row's size S is the matrix's total / N, as weft sim's and weft plan's
# (algbw = S / time in both, so they compare); alltoallv plans of the
# matrix (WEFT_PLAN, --plan; --plan alone runs the plan's own matrix), and a
# matrix that is not the plan's; bad matrices and bad combinations of options.
# Run by CTest as: bash perf_traffic.sh WEFT_BIN SOURCE_DIR SHARED_FIXTURES
WEFT=$1
SRC=$2
. "$SRC/tests/cli/lib/check.sh"
T=$(mktemp -d)
trap 'rm -rf "$T" "$CHECK_OUT_" "$CHECK_ERR_"' EXIT

printf '# skewed, 3 ranks: rank 0 sends 4096 bytes to rank 1\n0 4096 400\n1200 40 0\n8 800 4000\n' >"$T/skew.tm"
printf '0 64 8\n64 4 16\n8 16 0\n' >"$T/sym.tm"
for t in shm tcp; do
    LAST="skewed ($t)"
    WEFT_TRANSPORT=$t run launch -n 3 -- "$WEFT" perf alltoall --traffic "$T/skew.tm" -n 2 -w 1
    expect_rc 0
    expect_out_has "# weft perf alltoall: 3 ranks, transport $t, 2 iterations, 1 warmup, check 1, traffic $T/skew.tm, weft_alltoallv"
    expect_out_has "# size: the matrix's total / N (the mean bytes a rank sends, as weft sim); in place: N/A (the matrix is not symmetric)"
    # The matrix moves 10544 bytes: S = 10544 / 3 = 3514.67 bytes, 878.67
    # floats (shown rounded). Rank 2 sends the most, 4808 bytes (issue 29:
    # perf showed that, weft sim S, so their algbw differed by 1.37x).
    expect_out_has "
        3515           879     float    none      -1"
    expect_out_has "       0      N/A     N/A     N/A     N/A"
    expect_out_has "# Out of bounds values : 0 OK"
    rows=$(printf '%s\n' "$OUT" | grep -vc '^#')
    [ "$rows" = 1 ] && pass_ || fail_ "expected one row, got $rows"

    LAST="symmetric, in place ($t)"
    WEFT_TRANSPORT=$t run launch -n 3 -- "$WEFT" perf alltoall --traffic "$T/sym.tm" -d int32 -n 2 -w 1 --json
    expect_rc 0
    expect_out_has '"size": 60'
    expect_out_has '"wrong_total": 0'
    expect_out_has '"ok": true'
    case "$OUT" in *'"in_place": null'*) fail_ "in place not run on a symmetric matrix" ;; *) pass_ ;; esac
done

run traffic moe --ranks 4 --experts 8 --topk 2 --tokens 64 --hidden-bytes 1000 --skew zipf:1.2 --seed 3 -o "$T/moe.tm"
expect_rc 0
run launch -n 4 -- "$WEFT" perf alltoall --traffic "$T/moe.tm" -d uint8 -n 1 -w 0
expect_rc 0
# Every row of a dispatch sums to T*K*H = 128000 bytes.
expect_out_has "
      128000        128000     uint8    none      -1"
expect_out_has "# Out of bounds values : 0 OK"

# One definition of S: weft sim reports the same size for the matrix, and
# perf's algbw is S / time with S exact (not rounded to 3515).
run sim switch:3 --algo direct --coll alltoall --traffic "$T/skew.tm" --json
expect_rc 0
expect_out_has '"size": 3515'
run launch -n 3 -- "$WEFT" perf alltoall --traffic "$T/skew.tm" -n 2 -w 1 --json
expect_rc 0
expect_out_has '"size": 3515'
if command -v python3 >/dev/null 2>&1; then
    check "perf algbw = (10544 / 3) / time" python3 -c '
import json, sys
r = json.loads(sys.argv[1])["rows"][0]["out_of_place"]
sys.exit(0 if abs(r["algbw"] * 1e9 * r["time_s"] - 10544 / 3) < 1e-6 else 1)' "$OUT"
fi

# Bad input: exit 1 naming the file (and line and column where it has them).
run launch -n 2 -- "$WEFT" perf alltoall --traffic "$T/skew.tm"
expect_rc 1
expect_err_has "perf: $T/skew.tm: the matrix has 3 ranks, the job 2"
printf '0 6\n4 0\n' >"$T/odd.tm"
run launch -n 2 -- "$WEFT" perf alltoall --traffic "$T/odd.tm"
expect_rc 1
expect_err_has "perf: $T/odd.tm: rank 0 sends rank 1 6 bytes, not a whole number of float elements (4 bytes each)"
printf '0 4\n-4 0\n' >"$T/neg.tm"
run launch -n 2 -- "$WEFT" perf alltoall --traffic "$T/neg.tm"
expect_rc 1
expect_err_has "$T/neg.tm:2:1: negative entry '-4': bytes must be >= 0"
run launch -n 2 -- "$WEFT" perf alltoall --traffic "$T/missing.tm"
expect_rc 1
expect_err_has "$T/missing.tm"

# Usage errors: exit 2, nothing run.
run perf allreduce --traffic "$T/sym.tm"
expect_rc 2
expect_err_has "--traffic is for alltoall only, not allreduce"
run perf alltoall --traffic "$T/sym.tm" -b 1K
expect_rc 2
expect_err_has "--traffic gives the sizes: -b, -e and -f do not apply"

# Alltoallv plans of the matrix (weft plan --traffic): forced by WEFT_PLAN
# (weft_alltoallv runs it) or given with --plan; every element checked.
for a in direct bruck; do
    run plan switch:3 --coll alltoall --algo $a --traffic "$T/skew.tm" -o "$T/$a.plan"
    expect_rc 0
done
run plan switch:3 --coll alltoall --algo pairwise --traffic "$T/sym.tm" -o "$T/sym.plan"
expect_rc 0
run plan switch:3 --coll alltoall --algo direct -o "$T/equal.plan"
expect_rc 0
for t in shm tcp; do
    LAST="WEFT_PLAN bruck ($t)"
    WEFT_TRANSPORT=$t WEFT_PLAN="$T/bruck.plan" WEFT_LOG=info run launch -n 3 -- "$WEFT" perf alltoall --traffic "$T/skew.tm" -n 2 -w 1
    expect_rc 0
    expect_out_has "check 1, traffic $T/skew.tm, weft_alltoallv, WEFT_PLAN=$T/bruck.plan"
    expect_out_has "
        3515           879     float    none      -1"
    expect_out_has "# Out of bounds values : 0 OK"
    expect_err_has "weft INFO run: rank 0: alltoallv: $T/bruck.plan (forced by WEFT_PLAN; the call's counts must be its traffic matrix)"
    check "rank 0 alone logs the forced alltoallv plan" test "$(grep -c 'alltoallv: .*(forced by WEFT_PLAN' <<<"$ERR")" = 1

    LAST="--plan direct ($t)"
    WEFT_TRANSPORT=$t run launch -n 3 -- "$WEFT" perf alltoall --traffic "$T/skew.tm" --plan "$T/direct.plan" -d uint8 -n 2 -w 1
    expect_rc 0
    expect_out_has "traffic $T/skew.tm, plan $T/direct.plan"
    expect_out_has "# Out of bounds values : 0 OK"

    LAST="--plan, symmetric, in place ($t)"
    WEFT_TRANSPORT=$t run launch -n 3 -- "$WEFT" perf alltoall --traffic "$T/sym.tm" --plan "$T/sym.plan" -d int32 -n 2 -w 1 --json
    expect_rc 0
    expect_out_has '"wrong_total": 0'
    case "$OUT" in *'"in_place": null'*) fail_ "in place not run on a symmetric matrix" ;; *) pass_ ;; esac
done

# A forced algorithm or plan of equal chunks leaves weft_alltoallv its own
# schedule: its count exchange no longer goes through the selection, which
# refused it ("algorithm 'pairwise' does not build allgather").
WEFT_ALGO=pairwise run launch -n 3 -- "$WEFT" perf alltoall --traffic "$T/skew.tm" -n 1 -w 0
expect_rc 0
expect_out_has "# Out of bounds values : 0 OK"
WEFT_PLAN="$T/equal.plan" run launch -n 3 -- "$WEFT" perf alltoall --traffic "$T/skew.tm" -n 1 -w 0
expect_rc 0
expect_out_has "traffic $T/skew.tm, weft_alltoallv
"
expect_out_has "# Out of bounds values : 0 OK"

# A matrix that is not the plan's: exit 1 on every rank, one message.
printf '0 4096 400\n1200 40 0\n8 800 4004\n' >"$T/other.tm"
WEFT_PLAN="$T/direct.plan" run launch -n 3 -- "$WEFT" perf alltoall --traffic "$T/other.tm" -n 1 -w 0
expect_rc 1
expect_err_has "comm: the counts of alltoallv differ from the traffic matrix of the plan $T/direct.plan (WEFT_PLAN): rank 2 sends rank 2 1001 elements of float (4004 bytes), the matrix 4000 bytes"
WEFT_PLAN="$T/direct.plan" run launch -n 3 -- "$WEFT" perf alltoall -e 64 -n 1 -w 0
expect_rc 1
expect_err_has "comm: the plan $T/direct.plan (WEFT_PLAN) is an alltoallv plan (a traffic matrix): it runs alltoallv calls, not alltoall"
# An alltoallv plan without --traffic runs its own matrix (skew.tm's).
for a in direct bruck; do
    LAST="--plan $a, no --traffic"
    run launch -n 3 -- "$WEFT" perf alltoall --plan "$T/$a.plan" -n 1 -w 0
    expect_rc 0
    expect_out_has "check 1, traffic of the plan, plan $T/$a.plan"
    expect_out_has "
        3515           879     float    none      -1"
    expect_out_has "# Out of bounds values : 0 OK"
done
run launch -n 2 -- "$WEFT" perf alltoall --plan "$T/direct.plan" -n 1 -w 0
expect_rc 1
expect_err_has "perf: $T/direct.plan: the matrix has 3 ranks, the job 2"
run launch -n 3 -- "$WEFT" perf alltoall --plan "$T/direct.plan" -e 1K -n 1 -w 0
expect_rc 2
expect_err_has "the alltoallv plan $T/direct.plan gives the sizes: -b, -e and -f do not apply"
run launch -n 3 -- "$WEFT" perf alltoall --traffic "$T/skew.tm" --plan "$T/equal.plan" -n 1 -w 0
expect_rc 1
expect_err_has "$T/equal.plan: a plan of equal chunks; with --traffic give an alltoallv plan (weft plan --traffic FILE)"

finish
