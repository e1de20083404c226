# Every command shown in README.md and docs/*.md runs as written, and
# prints what the page shows after it (the lines up to the next command or
# the end of the block; where they elide with "...", the lines shown, in
# order)
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

# FILE<TAB>LINE<TAB>KIND<TAB>TEXT<TAB>SHOWN, KIND "run", "skip" or "bare";
# SHOWN: the lines the page shows after a command, up to the next command
# or the end of the block, joined by the character \036 (empty: none).
extract() {
    awk -v OFS='\t' '
        function flush() {
            if (pend != "") print pend, shown
            pend = ""
            shown = ""
            nshown = 0
        }
        /^[ \t]*```/ { fenced = !fenced; flush(); next }
        !fenced { next }
        /^\$ / {
            flush()
            cmd = substr($0, 3)
            pend = FILENAME OFS FNR OFS (cmd ~ /#.*not run in tests: [^ ]/ ? "skip" : "run") OFS cmd
            next
        }
        {
            if (pend != "") shown = (nshown++ ? shown "\036" : "") $0
            line = $0
            while (line ~ /^[A-Za-z_][A-Za-z0-9_]*=[^ ]* /) sub(/^[^ ]* /, "", line)
            if (line !~ /^(build\/)?weft( |$)/) next
            sub(/[ \t]+#.*/, "", line)
            if (line ~ /[][|]|\.\.\.|[A-Z][A-Z][A-Z]/) next   # a synopsis or a log line
            print FILENAME, FNR, "bare", $0, ""
        }
        END { flush() }' "$@"
}

# Whether the output a page shows after a command ($1, lines joined by
# \036) is what the command printed: its stdout, its stderr, or both one
# after the other, line for line (trailing blanks aside). A block that
# elides ("...") is checked by shown_within instead.
shown_matches() {
    local want got
    want=$(printf '%s' "$1" | tr '\036' '\n' | sed 's/[[:space:]]*$//')
    for got in "$(sed 's/[[:space:]]*$//' "$CHECK_OUT_")" \
        "$(sed 's/[[:space:]]*$//' "$CHECK_ERR_")" \
        "$(cat "$CHECK_OUT_" "$CHECK_ERR_" | sed 's/[[:space:]]*$//')"; do
        [ "$want" = "$got" ] && return 0
    done
    return 1
}

# Whether the lines a block that elides ("...") shows appear in what the
# command printed, in the same order (a line holding "..." is itself an
# elision and is skipped): its stdout, its stderr, or both.
shown_within() {
    python3 -c '
import sys
want = [l.rstrip() for l in sys.argv[1].split("\036") if "..." not in l]
out, err = (open(f, errors="replace").read().splitlines() for f in sys.argv[2:4])
def within(got):
    i = 0
    for l in got:
        if i < len(want) and l.rstrip() == want[i]:
            i += 1
    return i == len(want)
sys.exit(0 if within(out) or within(err) or within(out + err) else 1)' "$1" "$CHECK_OUT_" "$CHECK_ERR_"
}

cd "$SRC" || exit 1
shift 3
if [ $# -gt 0 ]; then pages=("$@"); else pages=(README.md docs/*.md); fi
ran=0
skipped=0
page_dir=""
page=""
while IFS=$'\t' read -r file line kind cmd shown; do
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
        if [ -n "$shown" ] && [[ "$shown" != *...* ]] && ! shown_matches "$shown"; then
            fail_ "$file:$line: the page shows other output than the command prints: $cmd
$(diff <(printf '%s' "$shown" | tr '\036' '\n') "$CHECK_OUT_" | head -n 6)"
        elif [ -n "$shown" ] && [[ "$shown" == *...* ]] && ! shown_within "$shown"; then
            fail_ "$file:$line: the page shows lines the command does not print (in that order): $cmd
$(diff <(printf '%s' "$shown" | tr '\036' '\n' | grep -vF '...') "$CHECK_OUT_" | grep '^<' | head -n 6)"
        else
            pass_
        fi
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
