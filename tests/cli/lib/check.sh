# Helpers for the shell tests of the weft command (sourced, not run).
#
#   run ARGS...             runs "$WEFT" ARGS..., keeps stdout in $OUT,
#                           stderr in $ERR and the exit code in $RC
#   expect_rc N             the last run exited with N
#   expect_out TEXT         stdout is exactly TEXT (a trailing newline is
#   expect_err TEXT         stripped from both, as $(...) does)
#   expect_out_has TEXT     stdout contains TEXT
#   expect_err_has TEXT     stderr contains TEXT
#   check DESC CMD...       CMD succeeds
#   progress TEXT           prints "[SECONDS s] TEXT" on stdout at once
#   finish                  prints "N passed, N failed"; exits 1 on failure
#                           (and removes the capture files: call it last)
#
# Every failed expectation prints the command, what was expected and what
# came out, and the script goes on, so one run shows every failure. Every
# `run` prints a progress line first (the seconds since the script began
# and the command), so that a test CTest stops at its TIMEOUT shows in its
# log what it was running and how far it got, rather than nothing.

passed=0
failed=0
LAST=""

fail_() {
    failed=$((failed + 1))
    printf 'FAIL: weft %s\n  %s\n' "$LAST" "$1" >&2
}

pass_() {
    passed=$((passed + 1))
}

# Captures go through two files made once (forks are what makes a shell
# test slow on a busy machine).
CHECK_OUT_=$(mktemp)
CHECK_ERR_=$(mktemp)
trap 'rm -f "$CHECK_OUT_" "$CHECK_ERR_"' EXIT

progress() {
    printf '[%ss] %s\n' "$SECONDS" "$*"
}

run() {
    LAST="$*"
    progress "weft $*"
    "$WEFT" "$@" >"$CHECK_OUT_" 2>"$CHECK_ERR_"
    RC=$?
    OUT=$(<"$CHECK_OUT_")
    ERR=$(<"$CHECK_ERR_")
}

expect_rc() {
    if [ "$RC" = "$1" ]; then pass_; else fail_ "exit code $RC, expected $1 (stderr: $ERR)"; fi
}

expect_out() {
    if [ "$OUT" = "$1" ]; then pass_; else fail_ "stdout:
$OUT
  expected:
$1"; fi
}

expect_err() {
    if [ "$ERR" = "$1" ]; then pass_; else fail_ "stderr:
$ERR
  expected:
$1"; fi
}

expect_out_has() {
    case "$OUT" in
    *"$1"*) pass_ ;;
    *) fail_ "stdout does not contain '$1':
$OUT" ;;
    esac
}

expect_err_has() {
    case "$ERR" in
    *"$1"*) pass_ ;;
    *) fail_ "stderr does not contain '$1':
$ERR" ;;
    esac
}

check() {
    local desc=$1
    shift
    LAST="($desc)"
    if "$@"; then pass_; else fail_ "$desc"; fi
}

finish() {
    # Scripts often set their own EXIT trap, which replaces the one above.
    rm -f "$CHECK_OUT_" "$CHECK_ERR_"
    echo "$passed passed, $failed failed"
    [ "$failed" = 0 ]
    exit $?
}
