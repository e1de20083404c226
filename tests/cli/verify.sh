# weft verify: exit codes and exact messages.
# Run by CTest as: bash verify.sh WEFT_BIN SOURCE_DIR SHARED_FIXTURES
WEFT=$1
SRC=$2
. "$SRC/tests/cli/lib/check.sh"

RING="$SRC/tests/fixtures/plans/ring_allreduce_4.plan"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

run verify "$RING"
expect_rc 0
expect_out "ok: allreduce, 4 ranks, 24 ops verified"
expect_err ""

run verify "$RING" --topo biring:4
expect_rc 0
expect_out "ok: allreduce, 4 ranks, 24 ops verified"

run verify --topo=ring:4 "$RING"
expect_rc 1
expect_out ""
expect_err "weft: op 0 (rank 0 -> rank 1, out[0]): route path 2 uses a link rank0 -> rank3, which the topology does not have"

run verify "$RING" --topo ring:8
expect_rc 1
expect_err "weft: the plan has 4 ranks but the topology has 8"

# Drop the dep of op 9 (rank 1 forwards chunk 3 before rank 0 delivered it).
sed 's/^op 9 \(.*\) deps=4 /op 9 \1 /' "$RING" >"$TMP/racy.plan"
run verify "$TMP/racy.plan"
expect_rc 1
expect_err "weft: op 9 (rank 1 -> rank 2, out[3]): rank 1 reads out[3] before op 4 has delivered it"

# Turn the last copy into a reduce: rank 0 gets its own share of chunk 2 twice.
sed 's/^op 23 copy/op 23 reduce/' "$RING" >"$TMP/twice.plan"
run verify "$TMP/twice.plan"
expect_rc 1
expect_err "weft: op 23 (rank 3 -> rank 0, out[2]): the contribution of rank 0 to chunk 2 would be reduced twice"

printf 'weft-plan 1\ncoll allreduce\nranks 2\nchunks 1\nop 0 copy 0:out[0] 1:out[0] deps=3\n' >"$TMP/bad.plan"
run verify "$TMP/bad.plan"
expect_rc 1
expect_err "weft: $TMP/bad.plan:5:34: dep on op 3, which does not exist (the plan has 1 ops)"

run verify "$TMP/none.plan"
expect_rc 1
expect_err "weft: $TMP/none.plan: cannot open: No such file or directory"

run verify
expect_rc 2
expect_err_has "weft: missing PLAN"

run verify "$RING" --frob
expect_rc 2
expect_err_has "weft: unknown flag '--frob'"

run verify --help
expect_rc 0
expect_out_has "usage: weft verify PLAN [--topo SPEC]"
# --json: the verdict as one object, also for a wrong plan (exit 1).
run verify "$RING" --json
expect_rc 0
expect_out '{
  "ok": true,
  "plan": "'"$RING"'",
  "topo": null,
  "coll": "allreduce",
  "ranks": 4,
  "ops": 24,
  "error": null
}'
check "verify --json parses" python3 -m json.tool <<<"$OUT" >/dev/null
run verify "$TMP/twice.plan" --json --topo biring:4
expect_rc 1
expect_err "weft: op 23 (rank 3 -> rank 0, out[2]): the contribution of rank 0 to chunk 2 would be reduced twice"
check "verify --json of a wrong plan" python3 -c '
import json, sys
d = json.loads(sys.argv[1])
assert d["ok"] is False and d["ranks"] == 4 and d["topo"] == "biring:4", d
assert d["error"] == "op 23 (rank 3 -> rank 0, out[2]): the contribution of rank 0 to chunk 2 would be reduced twice", d
' "$OUT"
run verify "$TMP/absent.plan" --json
expect_rc 1
expect_out ""


finish
