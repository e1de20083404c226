# -o FILE stays all or nothing when weft is killed while writing: the
# signal handler removes FILE.tmp.PID and FILE never appears.
# Run by CTest as: bash atomic.sh WEFT_BIN SOURCE_DIR SHARED_FIXTURES
WEFT=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
SRC=$(cd "$2" && pwd)
. "$SRC/tests/cli/lib/check.sh"

TMP=$(mktemp -d)
trap 'rm -rf "$TMP" "$CHECK_OUT_" "$CHECK_ERR_"' EXIT
cd "$TMP" || exit 1

# A fabric of 32,000 ranks and 256,000 links: some 7 MB of .topo text,
# long enough to catch the writer in the middle.
SPEC='clos:hosts=4000'
for sig in TERM INT; do
    echo keep >big.topo
    # A background job of a script starts with SIGINT ignored, and weft
    # keeps what it inherited as ignored: give it the default back.
    env --default-signal=INT "$WEFT" topo show "$SPEC" -o big.topo &
    pid=$!
    seen=""
    for _ in $(seq 1000); do
        if ls big.topo.tmp.* >/dev/null 2>&1; then
            # Stopped with its temporary file still there, weft is caught
            # mid-write; if it finished or renamed in between, skip.
            if kill -STOP "$pid" 2>/dev/null && ls big.topo.tmp.* >/dev/null 2>&1; then
                seen=1
            else
                kill -CONT "$pid" 2>/dev/null
            fi
            break
        fi
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.01
    done
    if [ -z "$seen" ]; then
        wait "$pid"
        echo "weft finished before its temporary file was seen; skipping SIG$sig"
        continue
    fi
    kill -"$sig" "$pid"
    kill -CONT "$pid"
    wait "$pid"
    RC=$?
    LAST="topo show $SPEC -o big.topo, killed by SIG$sig while writing"
    expect_rc $((128 + $(kill -l "$sig")))
    check "SIG$sig: the temporary file is removed" test -z "$(ls | grep '\.tmp\.')"
    check "SIG$sig: the old file is untouched" test "$(cat big.topo)" = keep
done

# nohup: SIGHUP ignored on entry stays ignored while weft writes, so a
# hangup mid-write neither kills it nor loses the file.
rm -f big.topo
nohup "$WEFT" topo show "$SPEC" -o big.topo >/dev/null 2>&1 &
pid=$!
seen=""
for _ in $(seq 1000); do
    if ls big.topo.tmp.* >/dev/null 2>&1; then
        kill -HUP "$pid" 2>/dev/null && seen=1
        break
    fi
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.01
done
wait "$pid"
RC=$?
LAST="nohup topo show $SPEC -o big.topo, SIGHUP while writing"
if [ -n "$seen" ]; then
    expect_rc 0
    check "nohup, SIGHUP: the whole file is written" \
        test "$(tail -n 1 big.topo | cut -d' ' -f1)" = duplex
else
    echo "weft finished before its temporary file was seen; skipping SIGHUP"
fi

# The same command left alone writes the whole file.
run topo show "$SPEC" -o big.topo
expect_rc 0
check "the whole file is written" test "$(tail -n 1 big.topo | cut -d' ' -f1)" = duplex
check "no temporary file is left" test -z "$(ls | grep '\.tmp\.')"

finish
