# weft bound --coll alltoall: the exact maximum concurrent flow (uniform and
# with --traffic), what limits it, and every error exit.
# Run by CTest as: bash a2a_bound.sh WEFT_BIN SOURCE_DIR SHARED_FIXTURES
WEFT=$1
SRC=$2
. "$SRC/tests/cli/lib/check.sh"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"; rm -f "$CHECK_OUT_" "$CHECK_ERR_"' EXIT

# Closed forms: a star of N ranks with links of B: N B / (N - 1); a100:2:
# 8 NICs of 25 GB/s per box carry half of every rank's data: 50 GB/s.
for pair in switch:4,bw=30=40 switch:5=125 a100:2=50 h100:16=160/3 torus:4x4=200 ring:4=200/3; do
    spec=${pair%=*}
    want=${pair##*=}
    run bound "$spec" --coll alltoall
    expect_rc 0
    expect_out_has "(exact $want)"
    run bound "$spec" --coll alltoall --json
    expect_rc 0
    expect_out_has "\"algbw_exact\": \"$want\""
done

run bound a100:2 --coll alltoall
expect_out "alltoall bound on a100:2: 16 ranks, uniform (each rank sends size/N to every rank)
  algbw          50 GB/s (exact 50)
  busbw          46.875 GB/s (algbw x (N-1)/N)
  time per byte  0.02 ns; 1 GiB per rank takes 21.4748 ms
  method         maximum concurrent flow: 1 source, 6 link classes, LP 42 x 97;
                 optimum certified in exact rational arithmetic (rounded simplex values)
  limited by     16 saturated links (positive length in the exact dual):
    the nic -> compute links inside each of 2 hosts (8 per host, 16 in all, 25 GB/s each)"

# Symmetry off: every rank a source, the same exact answer.
run bound a100:2 --coll alltoall --no-symmetry --json
expect_rc 0
expect_out_has '"algbw_exact": "50"'
expect_out_has '"sources": 16'
run bound h100:16 --coll alltoall --json
expect_out_has '"limits": ['
expect_out_has '"class": "the nic -> switch links leaving each of 16 hosts (8 per host, 128 in all, 50 GB/s each)"'

# A skewed matrix: rank 0 sends 300 bytes to rank 1, every other pair 100:
# rank0's 100 GB/s uplink carries 500 bytes, 5 ns.
printf '# skewed\n0 300 100 100\n100 0 100 100\n\n100 100 0 100\n100 100 100 0\n' >"$TMP/m.txt"
run bound switch:4 --coll alltoall --traffic "$TMP/m.txt"
expect_rc 0
expect_out_has "  time           5e-09 s (exact 1/200000000 s)"
expect_out_has "the link rank0 -> sw0 (100 GB/s)"
run bound switch:4 --coll alltoall --traffic "$TMP/m.txt" --json
expect_out_has '"time_exact": "1/200000000"'
expect_out_has '"uniform": false'

# A generated MoE matrix: the time is exact and positive.
run traffic moe --ranks 16 --experts 32 --topk 2 --tokens 256 --hidden-bytes 4096 --skew zipf:1.2 --seed 3 -o "$TMP/moe.txt"
expect_rc 0
run bound a100:2 --coll alltoall --traffic "$TMP/moe.txt" --json
expect_rc 0
expect_out_has '"certified": true'

# Bad input: the matrix's size, a negative entry, a pair with no route, a
# missing file, --traffic without alltoall.
printf '0 1 2\n3 0 4\n5 6 0\n' >"$TMP/m3.txt"
run bound switch:4 --coll alltoall --traffic "$TMP/m3.txt"
expect_rc 1
expect_err "weft: $TMP/m3.txt: the traffic matrix has 3 ranks, the fabric switch:4 has 4"
printf '0 1\n-3 0\n' >"$TMP/neg.txt"
run bound switch:2 --coll alltoall --traffic "$TMP/neg.txt"
expect_rc 1
expect_err "weft: $TMP/neg.txt:2:1: negative entry '-3': bytes must be >= 0"
printf 'node r0 compute\nnode r1 compute\nlink r0 r1 10GB/s\n' >"$TMP/oneway.topo"
printf '0 40\n8 0\n' >"$TMP/back.txt"
run bound "$TMP/oneway.topo" --coll alltoall --traffic "$TMP/back.txt"
expect_rc 1
expect_err "weft: $TMP/back.txt: rank 1 (r1) sends 8 bytes to rank 0 (r0), but no path of links leads from one to the other"
run bound "$TMP/oneway.topo" --coll alltoall
expect_rc 1
expect_err "weft: rank 1 (r1) cannot reach rank 0 (r0): no path of links leads from one to the other, so no all-to-all can complete"
printf '0 40\n0 0\n' >"$TMP/fwd.txt"
run bound "$TMP/oneway.topo" --coll alltoall --traffic "$TMP/fwd.txt"
expect_rc 0
expect_out_has "(exact 1/250000000 s)"
run bound switch:4 --coll alltoall --traffic "$TMP/none.txt"
expect_rc 1
expect_err_has "none.txt"
run bound switch:4 --coll allgather --traffic "$TMP/m.txt"
expect_rc 2
expect_err_has "weft: --traffic is for --coll alltoall"
run bound switch:1 --coll alltoall
expect_rc 1
expect_err "weft: the fabric has 1 rank; an all-to-all bound needs at least 2"
run bound h100:128 --coll alltoall --no-symmetry
expect_rc 1
expect_err "weft: the all-to-all program would have 1024 sources x 6144 links = 6291456 flow variables, more than the 2000000 this solver takes on; symmetry (uniform traffic, without --no-symmetry) makes it one source per rank orbit"

# The optimal plan from the flow: its limit is the bound, it verifies on
# the fabric, and the idealised simulation reaches >= 99.9% of it at 1 GiB.
run plan a100:2 --coll alltoall --algo optimal -o "$TMP/a2a.plan"
expect_rc 0
expect_out_has "limit        algbw <= 50.000 GB/s (50)"
run verify "$TMP/a2a.plan" --topo a100:2
expect_rc 0
expect_out "ok: alltoall, 16 ranks, 256 ops verified"
run sim a100:2 --plan "$TMP/a2a.plan" --size 1G --cut-through --json
expect_rc 0
check "simulated algbw >= 99.9% of 50 GB/s" awk -v o="$OUT" 'BEGIN { if (match(o, /"algbw": [0-9.]+/)) { v = substr(o, RSTART + 9, RLENGTH - 9); exit !(v >= 49.95 && v <= 50) } exit 1 }'
run plan dgx1 --coll alltoall --algo optimal
expect_rc 0
expect_out_has "(75)"

finish
