#!/bin/sh
# Adds the .topo text of every preset to the fuzzing seed corpus.
#
#   sh fuzz/make-corpus.sh [WEFT_BINARY [CORPUS_DIR]]
#
# Defaults: build/weft and fuzz/corpus/topo (relative to the source tree).
# Preset names come from `weft topo list` (the first word of each line that
# does not start with a blank, up to ':' or '['); each preset is shown with
# the first of a few small parameter sets it accepts (NAME:1, NAME:3x3, NAME:4, NAME, NAME:2) and written to
# CORPUS_DIR/preset-SPEC.topo (':' and ',' become '_'). Outputs over 64 KiB
# are skipped: small seeds keep libFuzzer fast. Exits 1 if the binary is
# missing or lists no preset, so a broken setup is not mistaken for success.
set -eu

here=$(cd "$(dirname "$0")/.." && pwd)
weft=${1:-$here/build/weft}
corpus=${2:-$here/fuzz/corpus/topo}
max_bytes=65536

if [ ! -x "$weft" ]; then
    echo "make-corpus: no weft binary at $weft (build it first: make)" >&2
    exit 1
fi
mkdir -p "$corpus"
list=$("$weft" topo list) || {
    echo "make-corpus: '$weft topo list' failed" >&2
    exit 1
}
names=$(printf '%s\n' "$list" | awk '/^[^ \t]/ { print $1 }' | sed 's/[:[].*//' |
    grep -E '^[a-z][a-z0-9_-]*$' | sort -u)
if [ -z "$names" ]; then
    echo "make-corpus: '$weft topo list' named no preset" >&2
    exit 1
fi
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT INT TERM
added=0
for name in $names; do
    shown=""
    for spec in "$name:1" "$name:3x3" "$name:4" "$name" "$name:2"; do
        if "$weft" topo show "$spec" >"$tmp" 2>/dev/null && [ -s "$tmp" ]; then
            shown=$spec
            break
        fi
    done
    if [ -z "$shown" ]; then
        echo "make-corpus: skipped $name (no small parameter set accepted)" >&2
        continue
    fi
    size=$(wc -c <"$tmp")
    if [ "$size" -gt "$max_bytes" ]; then
        echo "make-corpus: skipped $shown ($size bytes > $max_bytes)" >&2
        continue
    fi
    out="$corpus/preset-$(printf '%s' "$shown" | tr ':,' '__').topo"
    cp "$tmp" "$out"
    echo "make-corpus: $shown -> $out ($size bytes)"
    added=$((added + 1))
done
echo "make-corpus: $added preset(s) added to $corpus"
