# Files and inputs that once hurt: -o onto devices, FIFOs and symlinks; a
# full disk; endless inputs and headers that ask for gigabytes; binary
# data; plans too large to build; running out of memory.
# Run by CTest as: bash reliability.sh WEFT_BIN SOURCE_DIR SHARED_FIXTURES
WEFT=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
SRC=$(cd "$2" && pwd)
. "$SRC/tests/cli/lib/check.sh"

TMP=$(mktemp -d)
trap 'rm -rf "$TMP" "$CHECK_OUT_" "$CHECK_ERR_"' EXIT
cd "$TMP" || exit 1

# ---- -o FILE: what is there decides how it is written (cli/outfile.h) ----

# A symbolic link stays a link; its target gets the whole new text.
echo old >target.topo
ln -s target.topo link.topo
run topo show ring:2 -o link.topo
expect_rc 0
check "the link is still a link" test -L link.topo
check "the target holds the fabric" grep -q '^duplex' target.topo
check "no temporary file is left" test -z "$(ls | grep '\.tmp\.')"

# A link to nothing is refused and left as it was.
ln -s nowhere dangling.topo
run topo show ring:2 -o dangling.topo
expect_rc 1
expect_err "weft: cannot write 'dangling.topo': a symbolic link to a file that does not exist"
check "the dangling link is untouched" test "$(readlink dangling.topo)" = nowhere

# A FIFO is written through to its reader and stays a FIFO.
mkfifo pipe
cat pipe >from-pipe &
reader=$!
run topo show ring:2 -o pipe
expect_rc 0
[ "$RC" = 0 ] || : >pipe # a weft that never opened the FIFO must not leave cat waiting
wait "$reader"
check "the FIFO is still a FIFO" test -p pipe
check "the reader got the fabric" grep -q '^duplex' from-pipe

# The process's own descriptors are written through a dup(): a file the
# shell opened for appending keeps what it had (a rename over the link's
# target, or a reopen at offset 0, would lose or overwrite it), and
# /dev/stdout itself stays a link.
echo first >log.txt
LAST="topo show ring:2 -o /dev/stdout >> log.txt"
"$WEFT" topo show ring:2 -o /dev/stdout >>log.txt 2>"$CHECK_ERR_"
RC=$?
expect_rc 0
check "the log keeps its first line" test "$(head -n 1 log.txt)" = first
check "the fabric is appended" test "$(sed -n 2p log.txt)" = "# preset ring:2"
check "/dev/stdout is still a link" test -L /dev/stdout
run topo show ring:2 -o /dev/fd/1
expect_rc 0
expect_out_has "duplex rank0 rank1"

# Character devices made here (never the real /dev): null takes the output
# and stays a device; full says why it failed (Linux devices.txt: 1,3 is
# null, 1,7 is full). Without mknod, the system's /dev/null and /dev/full,
# which are only written to.
if mknod null c 1 3 2>/dev/null && mknod full c 1 7 2>/dev/null; then
    null=$TMP/null full=$TMP/full
else
    null=/dev/null full=/dev/full
fi
run topo show a100:1 -o "$null"
expect_rc 0
check "null is still a character device" test -c "$null"
check "/dev/null is still a character device" test -c /dev/null

# A full disk: the reason is given, from the writer of each output.
run topo show ring:2 -o "$full"
expect_rc 1
expect_err "weft: cannot write '$full': No space left on device"
check "full is still a character device" test -c "$full"
# A plan larger than stdio's buffer fails while written, a small one at
# the final flush; both give the reason.
run plan ring:64 --coll allreduce -o "$full"
expect_rc 1
expect_err "weft: cannot write the plan to '$full': No space left on device"
run plan ring:4 --coll allreduce -o "$full"
expect_rc 1
expect_err "weft: cannot write '$full': No space left on device"
run sim ring:64 --coll allreduce --algo ring --size 1M --trace "$full"
expect_rc 1
expect_err "weft: $full: sim: writing the trace failed: No space left on device"
run tune switch:4 --sizes 1K:1M:x2 -o "$full"
expect_rc 1
expect_err "weft: cannot write the tuning table to '$full': No space left on device"
hwloc_xml=$SRC/tests/fixtures/hwloc/synth-2pkg-nic.xml
if "$WEFT" topo host --xml "$hwloc_xml" >/dev/null 2>&1; then # built with hwloc
    run topo host --xml "$hwloc_xml" --hosts 64 -o "$full"
    expect_rc 1
    expect_err "weft: cannot write '$full': No space left on device"
fi

# ---- Inputs without an end are cut at a documented cap ----

run verify /dev/zero
expect_rc 1
expect_err "weft: /dev/zero: larger than 256 MiB, the limit for a .plan file"
WEFT_PLAN=/dev/zero run perf allreduce -b 1K -e 1K -n 1 -w 0
expect_rc 1
expect_err "weft: /dev/zero: larger than 256 MiB, the limit for a .plan file"
printf 'node g0 compute\n' >one.topo
WEFT_FABRIC=one.topo WEFT_TUNING=/dev/zero run perf allreduce -b 1K -e 1K -n 1 -w 0
expect_rc 1
expect_err "weft: /dev/zero: larger than 16 MiB, the limit for a tuning table"
LAST="topo show - < an endless stdin"
yes | "$WEFT" topo show - >"$CHECK_OUT_" 2>"$CHECK_ERR_"
RC=$?
ERR=$(<"$CHECK_ERR_")
expect_rc 1
expect_err "weft: /dev/stdin: larger than 256 MiB, the limit for a .topo file"
# MSCCL XML is streamed, so its bytes are counted as they come.
ln -s /dev/stdin endless.xml
LAST="verify endless.xml < an endless MSCCL program"
(printf '<algo name="x" proto="Simple" nchannels="1" nchunksperloop="2" ngpus="2" coll="allreduce">'
 yes '<!---->') | "$WEFT" verify endless.xml >"$CHECK_OUT_" 2>"$CHECK_ERR_"
RC=$?
ERR=$(<"$CHECK_ERR_")
expect_rc 1
expect_err "weft: endless.xml: larger than 256 MiB, the limit for an MSCCL XML file"

# ---- Headers are checked against the limits before anything is sized ----

# 63 bytes that asked the verifier for 3.1 GB, and 32 GB with chunks 1e9.
printf 'weft-plan 1\ncoll allreduce\nranks 2\nchunks 100000000\nop 0 nop 0\n' >huge.plan
run verify huge.plan
expect_rc 1
expect_err "weft: huge.plan:5:1: 2 ranks with 100000000 chunks and 0 scratch slots hold 400000000 slots in all; the limit is 67108864"
printf 'weft-plan 1\ncoll allreduce\nranks 8\nchunks 1000000000\n' >huger.plan
run verify huger.plan
expect_rc 1
expect_err "weft: huger.plan:4: 8 ranks with 1000000000 chunks and 0 scratch slots hold 16000000000 slots in all; the limit is 67108864"
# ngpus="1e9" allocated 3.9 GB before the rank limit was checked.
printf '<algo name="x" proto="Simple" nchannels="1" nchunksperloop="1" ngpus="1000000000" coll="allreduce">\n</algo>\n' >huge.xml
run verify huge.xml
expect_rc 1
expect_err "weft: huge.xml:1:1: <algo ngpus=\"1000000000\">: more than 1048576 gpus"
printf '<algo name="x" proto="Simple" nchannels="1" nchunksperloop="67108864" ngpus="1" coll="allreduce">\n<gpu id="0" i_chunks="0" o_chunks="0" s_chunks="0"></gpu>\n</algo>\n' >wide.xml
run verify wide.xml
expect_rc 1
expect_err "weft: wide.xml:1:1: 1 gpus with 67108864 chunks and 0 scratch slots hold 134217728 slots in all; the limit is 67108864"

# ---- Binary data is named as such, not as one long line ----

head -c 100000 /dev/zero >zeros.topo
run topo show zeros.topo
expect_rc 1
expect_err "weft: zeros.topo:1:1: NUL byte (binary data, not text)"
head -c 100000 /dev/zero >zeros.plan
run verify zeros.plan
expect_rc 1
expect_err "weft: zeros.plan:1:1: NUL byte (binary data, not text)"

# ---- weft plan --max-ops: the guard weft sim has, before building ----

# ring:100000 once ran 52 s to 6 GB before failing.
run plan ring:100000 --coll allreduce
expect_rc 1
expect_err "weft: ring allreduce on 100000 ranks has more than 2097152 ops (the limit, --max-ops)"
run plan ring:1100 --coll allreduce --algo optimal
expect_rc 1
expect_err "weft: optimal allreduce on 1100 ranks has at least 2417800 ops, more than 2097152 (the limit, --max-ops)"
# On switch:8 the ring allreduce has 2*8*7 = 112 ops: 112 builds, 111 not.
run plan switch:8 --coll allreduce --max-ops 111 -o m.plan
expect_rc 1
expect_err "weft: ring allreduce on 8 ranks has more than 111 ops (the limit, --max-ops)"
check "no plan after a refused build" test ! -e m.plan
run plan switch:8 --coll allreduce --max-ops 112 -o m.plan
expect_rc 0
check "the plan has 112 ops" test "$(grep -c '^op ' m.plan)" = 112
run plan switch:8 --coll allgather --algo optimal --max-ops 55
expect_rc 1
expect_err "weft: optimal allgather on 8 ranks has at least 56 ops, more than 55 (the limit, --max-ops)"
# --compare leaves out what does not fit: ring (112 ops) and hd (48 ops
# moving 112 chunks) here, not dbtree (28) or rd (48 ops of one chunk).
run plan switch:8 --coll allreduce --compare --max-ops 60
expect_rc 0
expect_out_has "  dbtree "
expect_out_has "  rd "
check "ring is left out" test -z "$(grep '^  ring ' <<<"$OUT")"
check "hd is left out" test -z "$(grep '^  hd ' <<<"$OUT")"
for bad in 0 -1 x 4294967295 12K; do
    run plan switch:8 --coll allreduce --max-ops "$bad"
    expect_rc 2
    expect_err_has "weft: bad --max-ops '$bad' (expected 1 .. 4294967294)"
done

# ---- Out of memory names the command, what it works on and the step ----

# Under a 150 MB address-space limit a 1,000-rank ring allreduce (about 2
# million ops) cannot be built. A sanitizer build cannot start under such
# a limit at all: then this part is skipped.
if (ulimit -v 150000 && "$WEFT" --version) >/dev/null 2>&1; then
    LAST="plan switch:1000 --coll allreduce, ulimit -v 150000"
    (ulimit -v 150000 && exec "$WEFT" plan switch:1000 --coll allreduce) >"$CHECK_OUT_" 2>"$CHECK_ERR_"
    RC=$?
    ERR=$(<"$CHECK_ERR_")
    expect_rc 1
    expect_err "weft: out of memory running 'weft plan switch:1000' (building the plan)"
else
    echo "cannot run weft under ulimit -v (a sanitizer build): out-of-memory case skipped"
fi

finish
