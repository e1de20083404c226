# Checkpoints in peers' memory under the `weft launch --restart` command
# (src/run/ckpt_restart_test.c runs the same ranks under weft_launch's C
# API): the ranks are ckpt_restart_test's own rank mode (WEFT_RANK set: it
# runs SCENARIO and appends what it saw to $CKPT_TEST_LOG), started and
# restarted by the weft binary.
#
#  kill: 4 ranks sum an allreduce step after step and save their state
#    (the sum and a 196,621-byte pattern whose every byte changes between
#    versions) every step; after each join one rank arms a timer of a
#    random length in a random one of the next 4 steps and dies of SIGALRM
#    wherever it is then (an allreduce, a save in flight, the snapshot
#    copy). weft launch restarts it; every rank checks after each join that
#    its buffers are byte for byte the version restored, and at the end the
#    sum of all 160 steps (4 x 10 x 12880 = 515200). 12 kills over shared
#    memory with ring:2, 8 over TCP with group:1.
#  lost: a rank and the only holder of its replica die together: every
#    rank's join fails with the named error and the job stops with it.
# Run by CTest as: bash ckpt_launch.sh WEFT_BIN SOURCE_DIR SHARED_FIXTURES
WEFT=$1
SRC=$2
. "$SRC/tests/cli/lib/check.sh"

RANKS_BIN=$(dirname "$WEFT")/ckpt_restart_test
LOG=$(mktemp)
if [ ! -x "$RANKS_BIN" ]; then
    LAST="launch (ranks: $RANKS_BIN)"
    fail_ "no $RANKS_BIN: build the ckpt_restart_test target beside weft"
    rm -f "$LOG"
    finish
fi
# A hung rank gives up after 20 s (weft_comm's timeout) instead of holding
# the test to CTest's limit.
export WEFT_TIMEOUT=20 CKPT_TEST_LOG="$LOG"

# kill_trials TRANSPORT PLACEMENT N: N ranks killed and restarted.
kill_trials() {
    : >"$LOG"
    WEFT_TRANSPORT=$1 CKPT_TEST_PLACEMENT=$2 CKPT_TEST_TRIALS=$3 \
        run launch -n 4 --restart "$3" -- "$RANKS_BIN" kill
    expect_rc 0
    check "$3 ranks killed by SIGALRM and restarted" \
        test "$(grep -c 'was killed by signal 14 (Alarm clock); restart' <<<"$ERR")" = "$3"
    expect_err_has "; restart $3 of $3"
    check "no check failed in a rank" test "$(grep -c FAIL "$LOG")" = 0
    check "every restore byte-exact" test "$(grep -c WRONG "$LOG")" = 0
    check "every rank restored after every kill" \
        test "$(grep -c '^restored rank .* exact ' "$LOG")" -ge $(($3 * 4))
    check "the job's sum exact on every rank" \
        test "$(grep -c '^done rank [0-3] generation [0-9]* sum 515200$' "$LOG")" = 4
    if [ "$RC" != 0 ] || grep -q FAIL "$LOG"; then cat "$LOG" >&2; fi
}

kill_trials auto ring:2 12
kill_trials tcp group:1 8

# Rank 2 and the only holder of its replica (rank 3, group:1) die
# together after version 5: the restarted ranks and the others all fail
# to join with the named error, and the job stops.
: >"$LOG"
CKPT_TEST_PLACEMENT=group:1 run launch -n 4 --restart 2 -- "$RANKS_BIN" lost
expect_rc 3
expect_err_has "was killed by signal 9 (Killed); restart 2 of 2"
expect_err_has ") exited with status 3; the other ranks were stopped"
check "the lost replica named" grep -q "ckpt: the checkpoint of rank 2 (version 5) is lost: rank 2 restarted and so did its holder rank 3 (1 replica, group placement)" "$LOG"

rm -f "$LOG"
finish
