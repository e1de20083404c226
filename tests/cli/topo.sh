# weft topo list|show|stats|dot: exit codes with exact messages, exact
# values for a100:2, JSON validity, show -> stats round trip, atomic -o.
# Run by CTest as: bash topo.sh WEFT_BIN SOURCE_DIR SHARED_FIXTURES
WEFT=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
SRC=$(cd "$2" && pwd)
FIX=$3
. "$SRC/tests/cli/lib/check.sh"

TMP=$(mktemp -d)
trap 'rm -rf "$TMP" "$CHECK_OUT_" "$CHECK_ERR_"' EXIT
cd "$TMP" || exit 1

STATS_USAGE="usage: weft topo stats SPEC [--json] [-o FILE] [fabric options]
run 'weft topo stats --help' for details"
SHOW_USAGE="usage: weft topo show SPEC [-o FILE] [fabric options]
run 'weft topo show --help' for details"
TOPO_USAGE="usage: weft topo COMMAND [ARGS...]
run 'weft topo --help' for the list of commands"

# ---- Usage errors: exit 2, the message, the usage line ------------------

run frob a100:2
expect_rc 2
expect_err "weft: unknown command 'frob'
usage: weft [--log LEVEL] COMMAND [ARGS...]
run 'weft --help' for the list of commands"

run topo
expect_rc 2
expect_err "weft: missing topo command
$TOPO_USAGE"

run topo frob a100:2
expect_rc 2
expect_err "weft: unknown topo command 'frob'
$TOPO_USAGE"

run topo stats a100:2 --bogus
expect_rc 2
expect_err "weft: unknown flag '--bogus'
$STATS_USAGE"

run topo stats --jsn=1 a100:2
expect_rc 2
expect_err "weft: unknown flag '--jsn'
$STATS_USAGE"

run topo stats
expect_rc 2
expect_err "weft: missing SPEC
$STATS_USAGE"
expect_out ""

run topo stats a100:2 ring:4
expect_rc 2
expect_err "weft: unexpected argument 'ring:4'
$STATS_USAGE"

run topo stats a100:2 --json=yes
expect_rc 2
expect_err "weft: flag --json takes no value
$STATS_USAGE"

run topo show a100:2 -o
expect_rc 2
expect_err "weft: flag --output needs a value (FILE)
$SHOW_USAGE"

# A bare number is GB/s, as in presets; the option does not apply to a
# preset, which is a usage error rather than silently ignored.
run topo stats a100:2 --nic-bw 25
expect_rc 2
expect_err "weft: --nic-bw applies only to NCCL topology XML imports, and 'a100:2' is a preset (whose parameters describe it: weft topo list)
$STATS_USAGE"

run topo stats a100:2 --nic-bw 25XB
expect_rc 2
expect_err "weft: bad --nic-bw '25XB': unknown unit (expected a number of GB/s or a number and a unit, e.g. 25, 12.5GB/s or 200Gbps; units: GB/s, Gbps, Gb/s, GiB/s, MB/s, MiB/s, Mbps, Mb/s, TB/s, Tbps)
$STATS_USAGE"

run topo stats a100:2 --nvlink-bw=0GB/s
expect_rc 2
expect_err "weft: bad --nvlink-bw '0GB/s': must be > 0
$STATS_USAGE"

run topo stats a100:2 --hosts 0
expect_rc 2
expect_err "weft: bad --hosts '0': expected an integer from 1 to 1000000
$STATS_USAGE"

run topo stats a100:2 --hosts 2x
expect_rc 2
expect_err "weft: bad --hosts '2x': expected an integer from 1 to 1000000
$STATS_USAGE"

run topo stats a100:2 --net ring
expect_rc 2
expect_err "weft: bad --net 'ring': expected rail or switch
$STATS_USAGE"

# ---- Input errors: exit 1, one line naming what and where ---------------

run topo stats nonexistent.topo
expect_rc 1
expect_err "weft: no such file or preset 'nonexistent.topo' (see weft topo list)"
expect_out ""

printf 'node a compute\nnode b switch\nlink a c 10GB/s\n' >bad.topo
run topo stats bad.topo
expect_rc 1
expect_err "weft: bad.topo:3:8: unknown node 'c' (declare it with 'node' before a link uses it)"
expect_out ""

printf 'node a compute\nduplex a a 10GB/s\n' >loop.topo
run topo show loop.topo
expect_rc 1
expect_err_has "weft: loop.topo:2:"

run topo stats a100:0
expect_rc 1
expect_err "weft: a100:0: boxes must be >= 1"

run topo dot torus:4x0
expect_rc 1
expect_err "weft: torus:4x0: dimension 2 must be >= 2"

# ---- logging: --log and WEFT_LOG reach the library's logger -------------

run topo stats ring:3 --log info
expect_rc 0
expect_err_has "weft INFO cli: loaded ring:3: 3 ranks, 3 nodes, 3 links in "
run --log=info topo stats ring:3
expect_err_has "weft INFO cli: loaded ring:3: 3 ranks, 3 nodes, 3 links in "
run topo stats ring:3
expect_err ""
LAST="WEFT_LOG=info weft topo stats ring:3"
ERR=$(WEFT_LOG=info "$WEFT" topo stats ring:3 2>&1 >/dev/null)
expect_err_has "weft INFO cli: loaded ring:3"
LAST="WEFT_LOG=info weft topo stats ring:3 --log warn"
ERR=$(WEFT_LOG=info "$WEFT" topo stats ring:3 --log warn 2>&1 >/dev/null)
expect_err ""

# ---- topo stats a100:2: exact values ------------------------------------

run topo stats a100:2
expect_rc 0
expect_err ""
expect_out "fabric        a100:2
ranks         16
hosts         2
nodes         36
  compute     16
  switch      4
  nic         16
  ocs         0
links         96 (directed)
injection     325 GB/s per rank (every rank)
ejection      325 GB/s per rank (every rank)
switches      balanced (every switch, nic, ocs sends what it receives)
connectivity  strongly connected (every node reaches every node)

note:
  preset a100:2
  model: ForestColl's a100_topology (github.com/liangyuRain/ForestColl topologies.py)"

run topo stats a100:2 --json
expect_rc 0
JSON=$OUT
if command -v python3 >/dev/null 2>&1; then
    LAST="topo stats a100:2 --json | python3 -m json.tool"
    if printf '%s\n' "$JSON" | python3 -m json.tool >/dev/null; then pass_; else fail_ "invalid JSON"; fi
    # Every key and its exact value; Python compares the parsed document.
    LAST="topo stats a100:2 --json (values)"
    if printf '%s\n' "$JSON" | python3 -c '
import json, sys
d = json.load(sys.stdin)
want = {"spec": "a100:2", "ranks": 16, "nodes": 36, "links": 96, "hosts": 2,
        "nodes_by_kind": {"compute": 16, "switch": 4, "nic": 16, "ocs": 0},
        "min_injection": 325, "min_injection_exact": "325",
        "max_injection": 325, "max_injection_exact": "325",
        "min_ejection": 325, "min_ejection_exact": "325",
        "max_ejection": 325, "max_ejection_exact": "325",
        "switches_balanced": True, "first_unbalanced": None,
        "strongly_connected": True, "ranks_connected": True}
bad = [k for k in want if d.get(k, "MISSING") != want[k]]
if bad:
    sys.exit("wrong: " + ", ".join("%s=%r" % (k, d.get(k, "MISSING")) for k in bad))
if not d["note"].startswith("preset a100:2"):
    sys.exit("note: %r" % d["note"])
'; then pass_; else fail_ "JSON values differ"; fi
else
    for key in '"ranks": 16' '"nodes": 36' '"links": 96' '"hosts": 2' '"min_injection_exact": "325"'; do
        OUT=$JSON
        expect_out_has "$key"
    done
fi

# Exact fractions and an unbalanced switch, from a file.
printf '%s\n' 'node a compute' 'node s switch' 'link a s 10GB/s' 'link s a 5GB/s' \
    'node c compute' 'duplex c s 2400/7GB/s 0.7us' >unbalanced.topo
run topo stats unbalanced.topo
expect_rc 0
expect_out_has "injection     10 GB/s to 2400/7 GB/s (~342.857 GB/s) per rank (min to max)"
expect_out_has "ejection      5 GB/s to 2400/7 GB/s (~342.857 GB/s) per rank (min to max)"
expect_out_has "switches      NOT balanced: s receives 2470/7 GB/s (~352.857 GB/s) but sends 2435/7 GB/s (~347.857 GB/s)"
run topo stats unbalanced.topo --json
expect_out_has '"max_injection": 342.85714285714283,'
expect_out_has '"max_injection_exact": "2400/7",'
expect_out_has '"min_injection": 10,'
expect_out_has '"switches_balanced": false,'
expect_out_has '"first_unbalanced": "s",'

# A ring is connected only one way round; a pair of one-way links is not
# strongly connected when a node cannot be reached back.
printf '%s\n' 'node a compute' 'node b compute' 'node n nic' 'link a b 1GB/s' 'link b a 1GB/s' \
    'link a n 1GB/s' >dangling.topo
run topo stats dangling.topo
expect_out_has "connectivity  every rank reaches every rank, but not every node every node"
expect_out_has "switches      NOT balanced: n receives 1 GB/s but sends 0 GB/s"
printf '%s\n' 'node a compute' 'node b compute' 'link a b 1GB/s' >oneway.topo
run topo stats oneway.topo --json
expect_out_has '"strongly_connected": false,'
expect_out_has '"ranks_connected": false,'
run topo stats oneway.topo
expect_out_has "connectivity  NOT connected: some rank cannot reach another"
expect_out_has "switches      none (every node is a rank)"

# ---- fabric options reach the NCCL XML importer -------------------------

NDV4="$FIX/nccl-topo/azhpc-images_ndv4-topo.xml"
if [ -f "$NDV4" ]; then
    run topo stats "$NDV4" --json
    expect_rc 0
    expect_out_has '"ranks": 8,'
    expect_out_has '"min_injection_exact": "24",'
    expect_out_has 'no NVLink modelled'
    run topo stats "$NDV4" --nvlink-bw 300GB/s --hosts 2 --net rail --json
    expect_rc 0
    expect_out_has '"ranks": 16,'
    expect_out_has '"hosts": 2,'
    expect_out_has '"min_injection_exact": "324",'
    expect_out_has 'rail switch rail<i>'
    run topo stats "$NDV4" --hosts=2 --net=switch --nic-bw=200Gbps
    expect_rc 0
    expect_out_has "every NIC to one switch net0; nic0 25 GB/s each way (--nic-bw)"
    run topo show "$NDV4" --cpu-bw 1.5GB/s
    expect_out_has "# CPU to CPU: 1.5 GB/s each way"
fi

# ---- show: a file that reads back to the same fabric --------------------

for spec in a100:2 torus:3x2 mi250:2 'clos:hosts=2'; do
    run topo show "$spec"
    expect_rc 0
    printf '%s\n' "$OUT" >shown.topo
    A=$("$WEFT" topo stats "$spec" --json | grep -v '"spec"\|"note"')
    B=$("$WEFT" topo stats shown.topo --json | grep -v '"spec"\|"note"')
    LAST="topo stats $spec vs topo stats (topo show $spec)"
    if [ -n "$A" ] && [ "$A" = "$B" ]; then pass_; else fail_ "stats differ:
$A
---
$B"; fi
done
run topo show a100:2
expect_out_has "# preset a100:2"
expect_out_has "node b0.gpu0"

# "-" reads the fabric from standard input.
LAST="topo show ring:3 | topo stats - --json"
OUT=$("$WEFT" topo show ring:3 | "$WEFT" topo stats - --json)
expect_out_has '"ranks": 3,'
expect_out_has '"spec": "-",'
LAST="printf bad | topo stats -"
ERR=$(printf 'node a compute\nlink a b 1GB/s\n' | "$WEFT" topo stats - 2>&1)
RC=$?
expect_rc 1
expect_err "weft: /dev/stdin:2:8: unknown node 'b' (declare it with 'node' before a link uses it)"

# ---- -o: all or nothing --------------------------------------------------

run topo show a100:2 -o out.topo
expect_rc 0
expect_out ""
check "-o wrote the file" test -s out.topo
check "-o left no temporary file" test -z "$(ls | grep '\.tmp\.')"
check "-o output equals stdout output" cmp -s out.topo <("$WEFT" topo show a100:2)

cp out.topo before.topo
run topo show a100:0 -o out.topo
expect_rc 1
check "a failed command leaves the old file alone" cmp -s out.topo before.topo
run topo show a100:0 -o new.topo
expect_rc 1
check "a failed command creates no file" test ! -e new.topo
run topo show a100:2 -o missing-dir/x.topo
expect_rc 1
expect_err "weft: cannot write 'missing-dir/x.topo': No such file or directory"
mkdir adir
run topo dot a100:2 --output=adir
expect_rc 1
expect_err "weft: cannot write 'adir': Is a directory"
check "nothing left behind in a failed rename" test -z "$(ls | grep '\.tmp\.')"
run topo stats a100:2 --json -o stats.json
expect_rc 0
check "stats -o writes the JSON" grep -q '"ranks": 16' stats.json

# ---- dot ----------------------------------------------------------------

run topo dot a100:2
expect_rc 0
expect_out_has "digraph weft {"
expect_out_has "subgraph cluster_host0 {"
expect_out_has "subgraph cluster_host1 {"
expect_out_has '"b0.gpu0" [shape=box'
expect_out_has '"ib0" [shape=ellipse'
expect_out_has '"b0.nic0" [shape=diamond'
expect_out_has '"b0.gpu0" -> "b0.nvsw0" [label="300 GB/s, 300 ns", dir=both];'
expect_out_has '"b1.nic7" -> "ib1" [label="25 GB/s, 65 ns", dir=both];'
LAST="topo dot a100:2: 48 duplex pairs, drawn once"
n=$(printf '%s\n' "$OUT" | grep -c 'dir=both')
if [ "$n" = 48 ]; then pass_; else fail_ "$n edges with dir=both"; fi
LAST="topo dot a100:2: 36 nodes"
n=$(printf '%s\n' "$OUT" | grep -c '\[shape=')
if [ "$n" = 36 ]; then pass_; else fail_ "$n nodes"; fi
if command -v dot >/dev/null 2>&1; then
    check "graphviz renders topo dot a100:2" sh -c "\"$WEFT\" topo dot a100:2 | dot -Tsvg >a.svg && grep -q '<svg' a.svg"
fi
run topo dot unbalanced.topo
expect_out_has '"a" -> "s" [label="10 GB/s"];'
expect_out_has '"s" -> "a" [label="5 GB/s"];'
expect_out_has '"s" -> "c" [label="2400/7 GB/s, 700 ns", dir=both];'
# Nodes of one host are framed together even when the file interleaves them.
printf '%s\n' 'node x0 compute host=x' 'node y0 compute host=y' 'node s switch' \
    'node x1 compute host=x' 'duplex x0 s 1GB/s' 'duplex y0 s 1GB/s' 'duplex x1 s 1GB/s' >hosts.topo
run topo dot hosts.topo
expect_rc 0
expect_out_has '  subgraph cluster_host0 {
    label="host x";
    style="rounded,filled"; fillcolor="#f5f5f5"; color="#aaaaaa";
    "x0" [shape=box, style="rounded,filled", fillcolor="#cdebc5"];
    "x1" [shape=box, style="rounded,filled", fillcolor="#cdebc5"];
    { rank=same; "x0" -> "x1" [style=invis]; }
  }
  subgraph cluster_host1 {
    label="host y";
    style="rounded,filled"; fillcolor="#f5f5f5"; color="#aaaaaa";
    "y0" [shape=box, style="rounded,filled", fillcolor="#cdebc5"];
  }
  subgraph cluster_tier1 {
    label="tier 1: 1 node"; style=dashed; color="#999999";
    "s" [shape=ellipse, style=filled, fillcolor="#c9daf0"];
  }'
# Large fabrics: identical hosts drawn once. h100:16 (280 nodes): host b0
# in detail (8 GPUs, the NVSwitch, 8 NICs, each kind a row in order), the
# other 15 as one summary node, the 8 rails as tier 1, and each rail's 15
# links to the summarised hosts as one line each way: 17 + 1 + 8 nodes.
run topo dot h100:16
expect_rc 0
expect_out_has 'label="h100:16: 128 ranks, 280 nodes, 768 links\n(identical hosts drawn once; weft topo dot --full draws them all)"'
expect_out_has '    label="host b0 (drawn for 16 hosts alike)";'
expect_out_has '    { rank=same; "b0.gpu0" -> "b0.gpu1" -> "b0.gpu2" -> "b0.gpu3" -> "b0.gpu4" -> "b0.gpu5" -> "b0.gpu6" -> "b0.gpu7" [style=invis]; }'
expect_out_has '  "@like host 0" [shape=box3d, style=filled, fillcolor="#e6e6e6", label="×15 more hosts like host b0\nb1 … b15, 8 ranks each"];'
expect_out_has '    label="tier 1: 8 nodes"; style=dashed; color="#999999";'
expect_out_has '  "@like host 0" -> "rail3" [label="×15, 50 GB/s, 65 ns", dir=both, penwidth=2];'
expect_out_has '  "b0.nic3" -> "rail3" [label="50 GB/s, 65 ns", dir=both];'
H16=$OUT
LAST="topo dot h100:16: clusters, nodes, merged edges"
got="$(grep -c 'subgraph cluster_' <<<"$H16") $(grep -c '\[shape=' <<<"$H16") $(grep -c '×15, 50 GB/s' <<<"$H16")"
if [ "$got" = "2 26 8" ]; then pass_; else fail_ "clusters, nodes, merged edges: $got, expected 2 26 8"; fi
run topo dot h100:16 --full
expect_rc 0
LAST="topo dot h100:16 --full: 16 host clusters, 280 nodes"
got="$(grep -c 'subgraph cluster_host' <<<"$OUT") $(grep -c '\[shape=' <<<"$OUT")"
if [ "$got" = "16 280" ]; then pass_; else fail_ "$got, expected 16 280"; fi
# h100:2 (42 nodes) is small: both hosts in detail, nothing merged.
run topo dot h100:2
LAST="topo dot h100:2: drawn whole"
got="$(grep -c 'subgraph cluster_host' <<<"$OUT") $(grep -c '\[shape=' <<<"$OUT") $(grep -c '@like' <<<"$OUT")"
if [ "$got" = "2 42 0" ]; then pass_; else fail_ "$got, expected 2 42 0"; fi
# A 256-GPU rail clos: 31 hosts summarised, the 8 leaves drawn, the 32
# spines one node (a tier over 16 nodes); each leaf's 32 spine links merged:
# 17 + 1 + 8 + 1 nodes.
run topo dot clos:hosts=32
expect_rc 0
expect_out_has '  "@tier 2" [shape=box3d, style=filled, fillcolor="#c9daf0", label="tier 2: 32 switch nodes\nspine0 … spine31"];'
expect_out_has '  "leaf0" -> "@tier 2" [label="×32, 50 GB/s, 65 ns", dir=both, penwidth=2];'
LAST="topo dot clos:hosts=32: nodes"
n=$(grep -c '\[shape=' <<<"$OUT")
if [ "$n" = 27 ]; then pass_; else fail_ "$n nodes, expected 17 + 1 + 8 + 1 = 27"; fi
if command -v dot >/dev/null 2>&1 && command -v python3 >/dev/null 2>&1; then
    # Graphviz lays the collapsed h100:16 out: its SVG parses and has the
    # two clusters and 26 nodes.
    LAST="topo dot h100:16 | dot -Tsvg"
    got=$(printf '%s\n' "$H16" | dot -Tsvg | python3 -c '
import sys, xml.etree.ElementTree as ET
r = ET.parse(sys.stdin).getroot()
g = [e.get("class") for e in r.iter("{http://www.w3.org/2000/svg}g")]
print(g.count("cluster"), g.count("node"))')
    if [ "$got" = "2 26" ]; then pass_; else fail_ "clusters, nodes: $got"; fi
fi
printf '%s\n' 'node "q\ compute' 'node n nic host=h"1' 'duplex "q\ n 1GB/s' >quotes.topo
run topo dot quotes.topo
expect_rc 0
expect_out_has '"\"q\\" -> "n" [label="1 GB/s", dir=both];'
expect_out_has 'label="host h\"1";'

# ---- list ---------------------------------------------------------------

run topo list --names
expect_rc 0
NAMES=$OUT
for p in ring biring full switch torus hypercube a100 h100 mi250 dgx1 clos; do
    OUT=$NAMES
    LAST="topo list --names has $p"
    expect_out_has "$p"
done
run topo list
expect_rc 0
expect_out_has "a100:B[,nvbw=BW][,nicbw=BW][,sharp=0|1]
    ForestColl's A100 model:"
# Every preset is shown with its usage and an indented summary.
LAST="topo list: one usage line per preset"
n=$(printf '%s\n' "$OUT" | grep -c '^[a-z]')
m=$(printf '%s\n' "$NAMES" | grep -c .)
if [ "$n" = "$m" ]; then pass_; else fail_ "$n usage lines for $m presets"; fi
LAST="topo list: no line longer than 78 columns"
n=$(printf '%s\n' "$OUT" | grep '^    ' | awk 'length > 78' | wc -l)
if [ "$n" = 0 ]; then pass_; else fail_ "$n long lines"; fi

# ---- help of every subcommand -------------------------------------------

for sub in list show stats dot; do
    run topo "$sub" --help
    expect_rc 0
    expect_out_has "usage: weft topo $sub"
    expect_out_has "  -h, --help"
done
run topo stats --help
expect_out_has "      --nvlink-bw BW"
run topo --help
expect_rc 0
expect_out_has "  stats   summarise a fabric"
# topo list --json: every preset, as --names lists them.
run topo list --json
expect_rc 0
check "topo list --json" python3 -c '
import json, sys
d = json.loads(sys.argv[1])
names = sys.argv[2].split()
assert [p["name"] for p in d["presets"]] == names, (d, names)
assert all(p["usage"].startswith(p["name"]) and p["summary"] for p in d["presets"]), d
' "$OUT" "$("$WEFT" topo list --names)"
run topo list --json --names
expect_rc 0
check "topo list --json --names" python3 -c '
import json, sys
d = json.loads(sys.argv[1])
assert d["presets"][0] == {"name": "ring"}, d
' "$OUT"


finish
