# weft traffic moe | uniform | show: exact outputs, messages and exit codes.
# Run by CTest as: bash traffic.sh WEFT_BIN SOURCE_DIR SHARED_FIXTURES
WEFT=$1
SRC=$2
. "$SRC/tests/cli/lib/check.sh"

TMP=$(mktemp -d)
trap 'rm -rf "$TMP" "$CHECK_OUT_" "$CHECK_ERR_"' EXIT

run traffic uniform --ranks 3 --size 999
expect_rc 0
expect_out "# uniform all-to-all: 3 ranks, 999 bytes per rank
333 333 333
333 333 333
333 333 333"

run traffic uniform --ranks 3 --size 1000
expect_rc 1
expect_err "weft: size 1000 is not a multiple of 3 ranks (each rank sends size/3 bytes to every rank)"

run traffic uniform --ranks 0 --size 1000
expect_rc 2
expect_err_has "weft: bad --ranks '0': expected a whole number from 1 to 16384"

run traffic uniform --size 1000
expect_rc 2
expect_err_has "weft: missing --ranks"

# A seeded MoE dispatch: the same bytes on every machine (fixed point and an
# own PRNG); every row sums to T*K*H = 100*2*1024.
MOE="--ranks 4 --experts 8 --topk 2 --tokens 100 --hidden-bytes 1K --skew zipf:1.5 --seed 7"
run traffic moe $MOE -o "$TMP/d.tm"
expect_rc 0
expect_out ""
check "dispatch matrix" diff "$TMP/d.tm" - <<'M'
# MoE dispatch (tokens to experts): 4 ranks, 8 experts, top-2, 100 tokens per rank, 1024 bytes per token and expert
# skew zipf:1.500, seed 7 (weft traffic moe)
117760 47104 23552 16384
119808 43008 25600 16384
137216 39936 20480 7168
129024 44032 15360 16384
M

run traffic moe $MOE --combine
expect_rc 0
expect_out "# MoE combine (experts to tokens): 4 ranks, 8 experts, top-2, 100 tokens per rank, 1024 bytes per token and expert
# skew zipf:1.500, seed 7 (weft traffic moe)
117760 119808 137216 129024
47104 43008 39936 44032
23552 25600 20480 15360
16384 16384 7168 16384"

run traffic show "$TMP/d.tm"
expect_rc 0
expect_out "$TMP/d.tm: 4 ranks, 819200 bytes in all (621568 cross ranks), largest entry 137216
send: max 204800 (rank 0), min 204800, mean 204800, skew 1.0000
recv: max 503808 (rank 0), min 56320, mean 204800, skew 2.4600

rank  send_bytes  recv_bytes  self_bytes
   0      204800      503808      117760
   1      204800      174080       43008
   2      204800       84992       20480
   3      204800       56320       16384"

run traffic show "$TMP/d.tm" --json
expect_rc 0
expect_out_has '"ranks": 4,
  "total": 819200,
  "offdiag": 621568,
  "max_entry": 137216,'
expect_out_has '"recv": {
    "max": 503808,
    "max_rank": 0,
    "min": 56320,
    "mean": 204800,
    "skew": 2.46
  },'

# Every token goes to K distinct experts: with K = E each rank gets T*H
# from every rank.
run traffic moe --ranks 2 --experts 4 --topk 4 --tokens 5 --hidden-bytes 3 --skew zipf:2
expect_rc 0
expect_out_has "30 30
30 30"

run traffic moe --ranks 4 --experts 8 --topk 9 --tokens 1 --hidden-bytes 1
expect_rc 2
expect_err_has "weft: --topk 9 is more than the 8 experts (a token goes to K distinct experts)"

run traffic moe --ranks 4 --experts 8 --topk 2 --tokens 1 --hidden-bytes 1 --skew zipf:1.2345
expect_rc 2
expect_err_has "weft: bad --skew 'zipf:1.2345': expected uniform or zipf:S with S from 0 to 8 (at most 3 decimals, e.g. zipf:1.2)"

run traffic moe --ranks 4 --experts 8 --topk 2 --tokens 1099511627776 --hidden-bytes 1G
expect_rc 1
expect_err "weft: 4 ranks x 1099511627776 tokens x 2 experts x 1073741824 bytes are more than 2^64-1 bytes"

# Bad matrix files: file:line:col and the reason, exit 1.
printf '1 2\n3 -4\n' >"$TMP/neg.tm"
run traffic show "$TMP/neg.tm"
expect_rc 1
expect_out ""
expect_err "weft: $TMP/neg.tm:2:3: negative entry '-4': bytes must be >= 0"

printf '# x\n1 2 3\n4 5\n' >"$TMP/short.tm"
run traffic show "$TMP/short.tm"
expect_rc 1
expect_err "weft: $TMP/short.tm:3:4: 2 numbers on this line, expected 3 (as on line 2)"

printf '1 2\n3 4\n5 6\n' >"$TMP/long.tm"
run traffic show "$TMP/long.tm"
expect_rc 1
expect_err "weft: $TMP/long.tm:3:1: more than 2 lines: line 1 has 2 numbers, so the matrix has 2 ranks and 2 lines"

printf '1 2.5\n3 4\n' >"$TMP/frac.tm"
run traffic show "$TMP/frac.tm"
expect_rc 1
expect_err "weft: $TMP/frac.tm:1:3: '2.5' is not a whole number of bytes"

printf '1 99999999999999999999\n3 4\n' >"$TMP/big.tm"
run traffic show "$TMP/big.tm"
expect_rc 1
expect_err "weft: $TMP/big.tm:1:3: '99999999999999999999' is more than 2^64-1 bytes"

run traffic show "$TMP/none.tm"
expect_rc 1
expect_err "weft: $TMP/none.tm: cannot open: No such file or directory"

# -o is atomic: a failed generation leaves an existing file as it was.
echo keep >"$TMP/keep.tm"
run traffic uniform --ranks 3 --size 1000 -o "$TMP/keep.tm"
expect_rc 1
check "file kept" grep -qx keep "$TMP/keep.tm"

# --traffic in plan and sim (alltoall): a skewed matrix on a star of 100 GB/s
# links with 1 us latency. sw0 -> rank3 carries 3,000,000 + 4,000,000 bytes:
# the limit is S / 70 us with S = 11,500,000 / 4 bytes, and the fluid model
# takes 2 us of latency + 70 us.
printf '0 1000000 2000000 3000000\n500000 0 0 0\n0 0 0 4000000\n100000 200000 300000 400000\n' >"$TMP/sk.tm"
run plan switch:4,lat=1us --coll alltoall --traffic "$TMP/sk.tm"
expect_rc 0
expect_out_has "ops          9 (8 transfers between ranks), longest chain 1 steps
chunks       alltoallv: 4 x 4 blocks of the traffic matrix, 1 chunk each; size S = 2875000 bytes per rank (total / N)
limit        algbw <= 41.071 GB/s (575/14)
busiest link sw0 -> rank3 (100 GB/s) carries 56/23 of the data
matrix time  >= 70 us: S / algbw, the whole matrix at the limit"

run plan switch:4,lat=1us --coll alltoall --traffic "$TMP/sk.tm" --json
expect_rc 0
expect_out_has '"algbw_exact": "575/14",
  "traffic": "'"$TMP/sk.tm"'",
  "size": 2875000,
  "traffic_bytes": 11500000,
  "time_s": 7e-05,
  "time_exact": "7/100000",'

run plan switch:4 --coll alltoall --algo pairwise --traffic "$TMP/sk.tm" -o "$TMP/sk.plan"
expect_rc 0
check "traffic lines" grep -qx "traffic 3 0 100000 200000 300000 400000" "$TMP/sk.plan"
run verify "$TMP/sk.plan" --topo switch:4
expect_rc 0
expect_out "ok: alltoall, 4 ranks, 16 ops verified"

run plan switch:4 --coll alltoall --traffic "$TMP/sk.tm" --compare
expect_rc 0
expect_out_has "  direct                          41.071  575/14      1          8    9"

run sim switch:4,lat=1us --algo direct --coll alltoall --traffic "$TMP/sk.tm" --model fluid --json
expect_rc 0
expect_out_has '"size": 2875000,
  "traffic": "'"$TMP/sk.tm"'",
  "time_s": 7.2e-05,'

# A plan file with a traffic matrix needs no --size.
run plan switch:4,lat=1us --coll alltoall --traffic "$TMP/sk.tm" -o "$TMP/d.plan"
expect_rc 0
run sim switch:4,lat=1us --plan "$TMP/d.plan" --model fluid --csv
expect_rc 0
expect_out_has "2875000,7.2000000000000002e-05,"

run sim switch:4 --algo direct --coll alltoall --traffic "$TMP/sk.tm" --size 1M
expect_rc 2
expect_err_has "weft: --size and --traffic both give the size: the traffic matrix gives every pair's bytes (drop --size)"

run sim switch:8 --algo direct --coll alltoall --traffic "$TMP/sk.tm"
expect_rc 1
expect_err "weft: $TMP/sk.tm: the traffic matrix has 4 ranks, the fabric switch:8 has 8"

run plan switch:8 --coll alltoall --traffic "$TMP/sk.tm"
expect_rc 1
expect_err "weft: $TMP/sk.tm: the traffic matrix has 4 ranks, the fabric switch:8 has 8"

run plan switch:4 --coll allreduce --traffic "$TMP/sk.tm"
expect_rc 2
expect_err_has "weft: --traffic gives the bytes of an all-to-all; it needs --coll alltoall, not allreduce"

# MSCCL XML: blocks padded to the largest (4 MB) in pieces of their gcd
# (100 kB), only the data moved (docs/msccl.md); the XML is read back and
# verified against the padded matrix before weft plan says so.
run plan switch:4 --coll alltoall --traffic "$TMP/sk.tm" -o "$TMP/sk.xml"
expect_rc 0
expect_out_has "msccl        padded layout (MSCCL chunks are equal): every peer a region of 4000000 bytes (the largest block) in pieces of 100000 bytes; nchunksperloop 160; 9 ops became 9 (runs of at most 71 pieces)
             buffers of 16000000 bytes per rank; padding 52500000 of 64000000 bytes (82.0%), never moved; the XML read back verifies against the padded matrix"
check "padded xml header" grep -q 'nchannels="1" nchunksperloop="160" ngpus="4" coll="alltoall"' "$TMP/sk.xml"

printf '1 2\n3 4 5\n' >"$TMP/bad.tm"
run sim switch:2 --algo direct --coll alltoall --traffic "$TMP/bad.tm"
expect_rc 1
expect_err "weft: $TMP/bad.tm:2:5: more than 2 numbers on this line (line 1 has 2)"

run traffic
expect_rc 2

# The optimal all-to-all plan of the matrix: from the matrix bound's flow,
# its exact time at S (7/100000 s: sw0 -> rank3 carries 7,000,000 bytes at
# 100 GB/s) is the bound's; one op per pair with bytes (8) plus the one
# local block (3 -> 3); it verifies; the fluid cut-through simulation
# drains it in exactly that time.
run bound switch:4 --coll alltoall --traffic "$TMP/sk.tm"
expect_out_has "  time           7e-05 s (exact 7/100000 s)"
run plan switch:4 --coll alltoall --algo optimal --traffic "$TMP/sk.tm" --json
expect_rc 0
expect_out_has '"time_exact": "7/100000",'
expect_out_has '"algbw_exact": "575/14",'
expect_out_has '"ops": 9,'
expect_out_has '"transfers": 8,'
run plan switch:4 --coll alltoall --algo optimal --traffic "$TMP/sk.tm" -o "$TMP/opt.plan"
expect_rc 0
expect_out_has "matrix time  >= 70 us: S / algbw, the whole matrix at the limit"
run verify "$TMP/opt.plan" --topo switch:4
expect_out "ok: alltoall, 4 ranks, 9 ops verified"
run sim switch:4 --coll alltoall --algo optimal --traffic "$TMP/sk.tm" --cut-through --model fluid
expect_rc 0
expect_out_has "  2875000     70.000        41.071        30.804"
run sim switch:4 --coll alltoall --traffic "$TMP/sk.tm" --compare --model fluid
expect_rc 0
expect_out_has "     bound         70.000        41.071        30.804    100.0%  (exact: algbw 575/14 GB/s)"
# Four schedules tie at 70 us; their order is the last bit of rounding.
expect_out_has "  optimal       70.000        41.071        30.804    100.0%  sw0 -> rank3 100.0%"

finish
