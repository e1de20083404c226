# Every command shown in README.md and docs/*.md runs as written
# (docs/CONTRIBUTING.md, "Commands in the documentation"): each line of a
# fenced block that starts with "$ " is run by bash, the files of one page
# in order in one fresh directory, with `weft` and `build/weft` the built
# binary, `tests/` the source tree's and ../shared/fixtures the shared
# fixtures. A command that exits non-zero is
# reported as FILE:LINE with its exit code and the end of its stderr. A
# command that cannot run here ends with the comment "# not run in tests:
# REASON" and is counted as skipped. A fenced line that invokes weft
# without "$ " and is not a synopsis (no SPEC-like placeholder, [, | or
# ...) is an error too, so a runnable example cannot slip past the
# convention.
# Run by CTest as: bash docs.sh WEFT_BIN SOURCE_DIR SHARED_FIXTURES [PAGE...],
# one test per page (cli_docs_NAME, CMakeLists.txt), so that no test holds
# every page's commands; without PAGE, every page in one run. Each command
# prints a progress line as it starts.
WEFT=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
SRC=$(cd "$2" && pwd)
. "$SRC/tests/cli/lib/check.sh"

TMP=$(mktemp -d)
trap 'rm -rf "$TMP" "$CHECK_OUT_" "$CHECK_ERR_"' EXIT
FIX=$3
mkdir -p "$TMP/bin" "$TMP/shared"
ln -s "$WEFT" "$TMP/bin/weft"
# Pages name the shared fixtures as ../shared/fixtures, as from a checkout.
ln -s "$FIX" "$TMP/shared/fixtures"

# FILE<TAB>LINE<TAB>KIND<TAB>TEXT, KIND "run", "skip" or "bare".
extract() {
    awk -v OFS='\t' '
        /^[ \t]*```/ { fenced = !fenced; next }
        !fenced { next }
        /^\$ / {
            cmd = substr($0, 3)
            print FILENAME, FNR, (cmd ~ /#.*not run in tests: [^ ]/ ? "skip" : "run"), cmd
            next
        }
        {
            line = $0
            while (line ~ /^[A-Za-z_][A-Za-z0-9_]*=[^ ]* /) sub(/^[^ ]* /, "", line)
            if (line !~ /^(build\/)?weft( |$)/) next
            sub(/[ \t]+#.*/, "", line)
            if (line ~ /[][|]|\.\.\.|[A-Z][A-Z][A-Z]/) next   # a synopsis or a log line
            print FILENAME, FNR, "bare", $0
        }' "$@"
}

cd "$SRC" || exit 1
shift 3
if [ $# -gt 0 ]; then pages=("$@"); else pages=(README.md docs/*.md); fi
ran=0
skipped=0
page_dir=""
page=""
while IFS=$'\t' read -r file line kind cmd; do
    if [ "$file" != "$page" ]; then
        page=$file
        page_dir="$TMP/$(echo "$file" | tr / _)"
        mkdir -p "$page_dir/build"
        ln -s "$WEFT" "$page_dir/build/weft"
        ln -s "$SRC/tests" "$page_dir/tests"
    fi
    LAST="($file:$line: $cmd)"
    case $kind in
    bare)
        fail_ "$file:$line: a weft command outside the \"\$ \" convention: $cmd"
        continue
        ;;
    skip)
        skipped=$((skipped + 1))
        continue
        ;;
    esac
    progress "$file:$line: $cmd"
    (cd "$page_dir" && PATH="$TMP/bin:$PATH" bash -c "$cmd") >"$CHECK_OUT_" 2>"$CHECK_ERR_" </dev/null
    rc=$?
    ran=$((ran + 1))
    if [ "$rc" = 0 ]; then
        pass_
    else
        fail_ "$file:$line: exit $rc: $cmd
$(tail -n 5 "$CHECK_ERR_")"
    fi
done < <(extract "${pages[@]}")

# The extraction itself must find the pages' commands: the README's quick
# tour alone has eleven.
case " ${pages[*]} " in
*" README.md "*)
    [ "$ran" -ge 11 ] && pass_ || fail_ "only $ran commands found in ${pages[*]}" ;;
esac
echo "docs.sh: ${pages[*]}: $ran commands run, $skipped marked not run in tests"
finish
