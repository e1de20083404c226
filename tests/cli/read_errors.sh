# Files named by the user that cannot be read: a directory, a missing file,
# a path through a file. Every loader names the path and the reason
# (base/file.h), from the command line and from the environment.
# Run by CTest as: bash read_errors.sh WEFT_BIN SOURCE_DIR SHARED_FIXTURES
WEFT=$1
SRC=$2
. "$SRC/tests/cli/lib/check.sh"

TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
mkdir "$TMP/dir.plan" "$TMP/dir.xml" "$TMP/dir.topo"
: >"$TMP/file"

# Plans: weft verify (weft text and MSCCL XML), weft sim --plan, weft perf
# --plan and WEFT_PLAN (one rank, no launcher).
run verify "$TMP/dir.plan"
expect_rc 1
expect_err "weft: $TMP/dir.plan: is a directory"

run verify "$TMP/dir.xml"
expect_rc 1
expect_err "weft: $TMP/dir.xml: is a directory"

run verify "$TMP/file/x.plan"
expect_rc 1
expect_err "weft: $TMP/file/x.plan: cannot open: Not a directory"

run sim ring:4 --plan "$TMP/dir.plan" --size 1M
expect_rc 1
expect_err "weft: $TMP/dir.plan: is a directory"

run perf allreduce --plan "$TMP/dir.plan" -b 1K -e 1K -n 1 -w 0
expect_rc 1
expect_err "weft: $TMP/dir.plan: is a directory"

WEFT_PLAN=$TMP run perf allreduce -b 1K -e 1K -n 1 -w 0
expect_rc 1
expect_err "weft: $TMP: is a directory"

# Topologies: a .topo path that is a directory is not taken for a file.
run topo show "$TMP/dir.topo"
expect_rc 1
expect_err "weft: $TMP/dir.topo: is a directory"

finish
