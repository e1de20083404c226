# One formatting dialect (.clang-format, docs/CONTRIBUTING.md "Format"):
# every C file the repository tracks is as clang-format writes it, so a
# change cannot bring another layout in. A file that differs is named with
# the first line clang-format would change. The check is also run on a
# made-up file clang-format would reflow, so that it is seen to fail.
# Skipped (77) without clang-format or outside a git checkout.
# Run by CTest as: bash format.sh WEFT_BIN SOURCE_DIR SHARED_FIXTURES
SRC=$(cd "$2" && pwd)
. "$SRC/tests/cli/lib/check.sh"
command -v clang-format >/dev/null 2>&1 || { echo "clang-format not installed: skipped"; exit 77; }
git -C "$SRC" rev-parse --git-dir >/dev/null 2>&1 || { echo "not a git checkout: skipped"; exit 77; }
T=$(mktemp -d)
trap 'rm -rf "$T" "$CHECK_OUT_" "$CHECK_ERR_"' EXIT

# FILE:LINE of each tracked C file clang-format would change (in $SRC).
unformatted() {
    (cd "$1" && git ls-files -z '*.c' '*.h' | xargs -0 -r clang-format --style=file --dry-run 2>&1 |
        sed -nE 's/^([^:]+):([0-9]+):[0-9]+: warning: code should be clang-formatted.*/\1:\2/p' |
        sort -t: -k1,1 -u)
}

# The checker sees a badly laid out file.
mkdir -p "$T/bad" && cp "$SRC/.clang-format" "$T/bad/" &&
    (cd "$T/bad" && git init -q . && printf 'int  f( int x ){return x;}\n' >bad.c && git add bad.c)
check "a file clang-format would change is found" test "$(unformatted "$T/bad")" = "bad.c:1"

bad=$(unformatted "$SRC")
if [ -n "$bad" ]; then
    echo "not as clang-format writes them (run: clang-format -i FILE):"
    echo "$bad" | head -40
fi
check "every tracked C file is clang-formatted ($(echo "$bad" | grep -c . ) differ)" test -z "$bad"
finish
