# The frame of the weft command: dispatch, global flags, exit codes.
# Run by CTest as: bash frame.sh WEFT_BIN SOURCE_DIR SHARED_FIXTURES
WEFT=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
SRC=$(cd "$2" && pwd)
. "$SRC/tests/cli/lib/check.sh"

USAGE="usage: weft [--log LEVEL] COMMAND [ARGS...]
run 'weft --help' for the list of commands"

run
expect_rc 2
expect_err "weft: missing command
$USAGE"
expect_out ""

run frob
expect_rc 2
expect_err "weft: unknown command 'frob'
$USAGE"

run --frob=1 topo
expect_rc 2
expect_err "weft: unknown flag '--frob'
$USAGE"

run --version
expect_rc 0
expect_out "weft $(sed -n 's/^project(weft VERSION \([0-9.]*\).*/\1/p' "$SRC/CMakeLists.txt")"

for h in --help -h; do
    run $h
    expect_rc 0
    expect_out_has "usage: weft [--log LEVEL] COMMAND [ARGS...]"
    expect_out_has "exit status: 0 success, 1 the input is wrong"
    expect_out_has "  help  "
    expect_err ""
done

# Every registered command has a help that exits 0 and shows its usage.
for cmd in $("$WEFT" --help | sed -n '/^commands:/,/^$/p' | awk 'NF && !/:$/ {print $1}'); do
    run "$cmd" --help
    expect_rc 0
    expect_out_has "usage: weft $cmd"
    run help "$cmd"
    expect_rc 0
    expect_out_has "usage: weft $cmd"
done

run help frob
expect_rc 2
expect_err "weft: unknown command 'frob'
$USAGE"

run --log loud help
expect_rc 2
expect_err "weft: unknown log level 'loud' for --log (error, warn, info, debug, trace)
$USAGE"

run --log
expect_rc 2
expect_err "weft: flag --log needs a value (LEVEL)
$USAGE"

run --log=debug --help
expect_rc 0

LAST="WEFT_LOG=loud weft --help"
OUT=$(WEFT_LOG=loud "$WEFT" --help 2>&1)
RC=$?
ERR=$OUT
expect_rc 2
expect_err "weft: unknown log level 'loud' in WEFT_LOG (error, warn, info, debug, trace)"

# WEFT_THREADS: a whole number from 1 to 256 (weft/threads.h).
for bad in 0 4x 257 -1; do
    LAST="WEFT_THREADS=$bad weft --help"
    OUT=$(WEFT_THREADS=$bad "$WEFT" --help 2>&1)
    RC=$?
    ERR=$OUT
    expect_rc 2
    expect_err "weft: WEFT_THREADS '$bad': a whole number of threads from 1 to 256"
done
LAST="WEFT_THREADS=3 weft --help"
WEFT_THREADS=3 "$WEFT" --help >/dev/null 2>&1
RC=$?
expect_rc 0

LAST="WEFT_LOG=trace weft --help"
WEFT_LOG=trace "$WEFT" --help >/dev/null 2>&1
RC=$?
expect_rc 0

# Output that cannot be written is an error (exit 1), not a silent success.
if [ -w /dev/full ]; then
    LAST="--help >/dev/full"
    ERR=$("$WEFT" --help 2>&1 >/dev/full)
    RC=$?
    expect_rc 1
    expect_err "weft: cannot write to standard output: No space left on device"
fi

finish
