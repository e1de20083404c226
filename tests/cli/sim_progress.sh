# weft sim's progress line: quiet when stderr is not a terminal, one
# rewritten line on a terminal (through script(1)) that is erased before
# the table. WEFT_PROGRESS_AFTER=0 draws every step's label at once (the
# default waits a second), so the test does not depend on how fast this
# machine is.
# Run by CTest as: bash sim_progress.sh WEFT_BIN SOURCE_DIR SHARED_FIXTURES
WEFT=$1
SRC=$2
. "$SRC/tests/cli/lib/check.sh"
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT

# About 0.6 s of CPU: every allreduce algorithm on a100:2 with 16 slices.
LONG="sim a100:2 --coll allreduce --size 1G --compare --model fluid --slice-bytes 4M"

# Not a terminal: nothing on stderr.
WEFT_PROGRESS_AFTER=0 run $LONG
expect_rc 0
expect_err ""
expect_out_has "  1  hier "

if ! command -v script >/dev/null 2>&1; then
    echo "script(1) not found: the terminal case is not tested here"
    finish
fi
# A terminal: script gives weft a pseudo-terminal and records what it
# drew. The line names what is being simulated and the elapsed time,
# starts with a carriage return, clears the rest of the line (ESC[K), and
# is erased (CR ESC[K) before the table starts.
WEFT_PROGRESS_AFTER=0 script -qec "'$WEFT' $LONG" /dev/null >"$T/tty" 2>&1
tty_rc=$? # taken at once: the assignment below would reset $?
LAST="$LONG (on a terminal)"
check "exit 0 on a terminal" test "$tty_rc" -eq 0
check "progress names the comparison" grep -q "weft: sim --compare: " "$T/tty"
check "progress shows elapsed seconds" grep -Eq "\([0-9]+ of 11\)  [0-9]+\.[0-9] s" "$T/tty"
esc=$(printf '\033')
cr=$(printf '\r')
check "the line is erased before the table" \
    grep -q "${cr}${esc}\[Kallreduce on a100:2 (16 ranks)" "$T/tty"
check "the table follows" grep -q "  1  hier " "$T/tty"
# A candidate whose plan and settings are those of an earlier one is not
# simulated again (its result is copied, and the line says whose): on
# a100:2 at 1G in the gpu model NCCL's choice is rings:16, the plan that
# rings:auto ran, and rabenseifner's allreduce plan is hd's.
GPU="sim a100:2 --coll allreduce --size 1G --compare"
WEFT_PROGRESS_AFTER=0 script -qec "'$WEFT' $GPU" /dev/null >"$T/gpu" 2>&1
rc=$?
LAST="$GPU (on a terminal)"
check "exit 0 on a terminal" test $rc -eq 0
check "nccl is rings:auto's run" \
    grep -q "sim --compare: nccl at 1073741824 (1G) (10 of 11) is the run of rings:auto " "$T/gpu"
check "rabenseifner is hd's run" \
    grep -q "sim --compare: rabenseifner at 1073741824 (1G) (7 of 11) is the run of hd " "$T/gpu"
check "hd is simulated" grep -q "sim --compare: hd at 1073741824 (1G) (6 of 11) " "$T/gpu"
check "no other candidate is copied" \
    test "$(grep -aEo '[a-z:0-9]+ at [0-9]+ \([0-9A-Z]+\) \([0-9]+ of 11\) is the run of [a-z:0-9]+' "$T/gpu" |
        sort -u | wc -l)" -eq 2
run sim switch:4 --model fluid --coll allgather --size 1M --compare
expect_rc 0
expect_err ""
WEFT_PROGRESS_AFTER=soon run sim switch:4 --model fluid --coll allgather --size 1M --compare
expect_rc 2
expect_err_has "weft: bad WEFT_PROGRESS_AFTER 'soon' (expected seconds >= 0)"
finish
