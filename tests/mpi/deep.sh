#!/bin/bash
# Runs a test script of tests/ from a copy of tests/ in a checkout far
# deeper than usual, TMP/weft-readme.XXXXXX/w/ and 8 folders of 200
# characters (about 1,650 bytes of path): the scripts find their fixtures
# beside themselves, so every path a message names is that deep. pmpi_test
# failed so (its forced plan's path lost its start to a 64-byte copy).
# Usage: deep.sh SCRIPT (relative to tests/) ARGS...
set -u
script=$1
shift
top=$(mktemp -d "${TMPDIR:-/tmp}/weft-readme.XXXXXX")
trap 'rm -rf "$top"' EXIT
dir=$top/w
for c in a b c d e f g h; do dir=$dir/$(printf "%200s" "" | tr ' ' $c); done
mkdir -p "$dir" && cp -r "$(dirname "$0")/.." "$dir/tests" || exit 1
echo "deep.sh: running $script from a ${#dir}-byte folder"
bash "$dir/tests/$script" "$@"
