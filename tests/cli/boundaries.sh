# Module boundaries: every #include "..." in src/, include/weft/, bench/,
# fuzz/ and tests/ follows the dependency order of docs/architecture.md.
# A violation names the file, the line and the rule it breaks; the checker
# is also run on a small made-up tree with one include of each kind it
# must refuse, so that it is seen to fail. Then the order of the files
# inside each module: tools/file_cycles.py must find exactly the cycles
# docs/architecture.md lists as known, and no other.
# Run by CTest as: bash boundaries.sh WEFT_BIN SOURCE_DIR SHARED_FIXTURES
SRC=$(cd "$2" && pwd)
. "$SRC/tests/cli/lib/check.sh"

TMP=$(mktemp -d)
trap 'rm -rf "$TMP" "$CHECK_OUT_" "$CHECK_ERR_"' EXIT

# The modules a module may include public headers of (itself included).
# Downward only: cli -> (run, sim, synth) -> plan -> topo -> base, and run
# -> synth (the runtime builds the plans it runs without a tuning table);
# choose ranks synth's plans by sim's times, and work and cli ask it.
allowed() {
    case $1 in
    base) echo "base" ;;
    topo) echo "base topo" ;;
    plan) echo "base topo plan" ;;
    synth) echo "base topo plan synth" ;;
    sim) echo "base topo plan sim" ;;
    run) echo "base topo plan synth run" ;;
    choose) echo "base topo plan synth sim choose" ;;
    work) echo "base topo plan synth sim choose work" ;;
    tuner) echo "base topo plan synth tuner" ;;
    cli) echo "base topo plan synth sim choose run work cli" ;;
    esac
}

# The module that implements each public header. A new header must be
# added here, so that its place in the order is decided, not assumed.
owner() {
    case $1 in
    err.h | log.h | rat.h | threads.h) echo base ;;
    topo.h | host.h | maxflow.h | paths.h | cost.h) echo topo ;;
    plan.h | exec_model.h | protocol.h | traffic.h) echo plan ;;
    synth.h | bvn.h | compress.h) echo synth ;;
    sim.h) echo sim ;;
    choose.h) echo choose ;;
    work.h | embedding.h | dlrm.h) echo work ;;
    comm.h | comm_mpi.h | tuning.h | ckpt.h | comm_sparse.h) echo run ;;
    esac
}

# Prints one line per include that breaks a rule, for the tree at $1.
# Internal headers ("module/x.h") may be included only from their own
# module, except base's (allocation, file reading and the test harness are
# every module's utilities). A module's tests (*_test.c) may include its
# internals, the topo test fixtures (topo/testing_topo.h) and any public
# header (the simulator is a yardstick for the runtime's choices). bench/
# measures run's kernels and may include run's internals; fuzz/ and
# tests/ use the public headers only.
violations() {
    (cd "$1" && grep -rn --include='*.c' --include='*.h' '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' \
        src include bench fuzz tests 2>/dev/null) |
    while IFS= read -r hit; do
        file=${hit%%:*}
        rest=${hit#*:}
        line=${rest%%:*}
        inc=${rest#*\"}
        inc=${inc%%\"*}
        case $inc in */*) ;; *) continue ;; esac # a header beside the file
        top=${inc%%/*}
        case $file in
        src/*) mod=${file#src/}; mod=${mod%%/*} ;;
        include/weft/*)
            mod=$(owner "${file#include/weft/}")
            if [ -z "$mod" ]; then
                echo "$file:$line: $file is not a known public header (list it in owner() of tests/cli/boundaries.sh)"
                continue
            fi
            ;;
        bench/*) mod=bench ;;
        *) mod=outside ;;
        esac
        test_file=""
        case $file in *_test.c) test_file=1 ;; esac
        if [ "$top" = weft ]; then
            own=$(owner "${inc#weft/}")
            if [ -z "$own" ]; then
                echo "$file:$line: $inc is not a known public header (list it in owner() of tests/cli/boundaries.sh)"
                continue
            fi
            case $mod in bench | outside) continue ;; esac
            [ -n "$test_file" ] && continue
            case " $(allowed "$mod") " in
            *" $own "*) ;;
            *) echo "$file:$line: $mod may not include $inc ($own is not below $mod; $mod may use: $(allowed "$mod"))" ;;
            esac
            continue
        fi
        case $file in
        include/*)
            echo "$file:$line: a public header includes the internal header $inc"
            continue
            ;;
        esac
        [ "$top" = base ] && continue
        [ "$top" = "$mod" ] && continue
        [ "$mod" = bench ] && [ "$top" = run ] && continue
        if [ -n "$test_file" ] && [ "$inc" = topo/testing_topo.h ]; then
            case " $(allowed "$mod") " in *" topo "*) continue ;; esac
        fi
        echo "$file:$line: $inc is internal to $top; $mod must use a public header (include/weft/)"
    done
}

# The real tree: no violations at all.
LAST="(include check of $SRC)"
got=$(violations "$SRC")
if [ -z "$got" ]; then pass_; else fail_ "includes across module boundaries:
$got"; fi

# A made-up tree that breaks each rule once, and keeps each exception once.
T=$TMP/tree
mkdir -p "$T/src/sim" "$T/src/plan" "$T/src/synth" "$T/src/topo" "$T/include/weft" \
    "$T/bench" "$T/fuzz" "$T/src/run"
printf '#include "topo/paths.h"\n#include "base/alloc.h"\n#include "sim/engine.h"\n' >"$T/src/sim/a.c"
printf '/* x */\n#include "weft/sim.h"\n#include "weft/plan.h"\n' >"$T/src/plan/b.c"
printf '#include "weft/sim.h"\n#include "topo/testing_topo.h"\n#include "plan/plan_internal.h"\n' \
    >"$T/src/synth/c_test.c"
printf '#include "weft/err.h"\n#include "topo/graph_internal.h"\n' >"$T/include/weft/topo.h"
printf '#include "weft/synth.h"\n' >"$T/include/weft/plan.h"
printf '#include "weft/err.h"\n' >"$T/include/weft/new.h"
printf '#include "run/clock.h"\n#include "sim/heap.h"\n' >"$T/bench/b.c"
printf '#include "weft/nowhere.h"\n#include "weft/topo.h"\n' >"$T/fuzz/f.c"
printf '#include "weft/synth.h"\n#include "weft/sim.h"\n' >"$T/src/run/r.c"
printf '#include "plan/plan_internal.h"\n' >"$T/src/topo/t_test.c"
LAST="(include check of a made-up tree)"
got=$(violations "$T" | sort)
want="bench/b.c:2: sim/heap.h is internal to sim; bench must use a public header (include/weft/)
fuzz/f.c:1: weft/nowhere.h is not a known public header (list it in owner() of tests/cli/boundaries.sh)
include/weft/new.h:1: include/weft/new.h is not a known public header (list it in owner() of tests/cli/boundaries.sh)
include/weft/plan.h:1: plan may not include weft/synth.h (synth is not below plan; plan may use: base topo plan)
include/weft/topo.h:2: a public header includes the internal header topo/graph_internal.h
src/plan/b.c:2: plan may not include weft/sim.h (sim is not below plan; plan may use: base topo plan)
src/run/r.c:2: run may not include weft/sim.h (sim is not below run; run may use: base topo plan synth run)
src/sim/a.c:1: topo/paths.h is internal to topo; sim must use a public header (include/weft/)
src/synth/c_test.c:3: plan/plan_internal.h is internal to plan; synth must use a public header (include/weft/)
src/topo/t_test.c:1: plan/plan_internal.h is internal to plan; topo must use a public header (include/weft/)"
if [ "$got" = "$want" ]; then pass_; else fail_ "violations:
$got
  expected:
$want"; fi

# Cycles between the files of a module (docs/architecture.md, "File order").
if ! command -v python3 >/dev/null 2>&1; then
    echo "python3 not found: file cycles not checked" >&2
else
    LAST="(tools/file_cycles.py on every module)"
    got=$(for m in base topo plan synth sim choose run work cli tuner; do
        python3 "$SRC/tools/file_cycles.py" "$SRC" $m | grep '^cycle:'
    done)
    want="cycle: topo/preset topo/preset_basic topo/preset_clos topo/preset_dc topo/preset_gpu topo/preset_net topo/preset_ocs
cycle: synth/optimal synth/optimal_rail
cycle: run/mpi/boot_mpi run/mpi/comm_mpi run/pmpi/comm
cycle: run/pmpi/coll_move run/pmpi/coll_reduce run/pmpi/coll_vector run/pmpi/progress run/pmpi/small run/pmpi/state run/pmpi/tiny
cycle: cli/args cli/group
cycle: cli/cmd_topo cli/topo_stats"
    if [ "$got" = "$want" ]; then pass_; else fail_ "cycles:
$got
  expected:
$want"; fi

    # The tool itself: a call each way is a cycle, a shared type is not.
    mkdir -p "$T/src/m"
    printf 'typedef struct s { int x; } s;\nint a_fn(void);\nint b_fn(void);\n' >"$T/src/m/m.h"
    printf '#include "m/m.h"\nint a_fn(void)\n{\n    return b_fn();\n}\n' >"$T/src/m/a.c"
    printf '#include "m/m.h"\nint b_fn(void)\n{\n    return a_fn();\n}\n' >"$T/src/m/b.c"
    printf '#include "m/m.h"\nint c_fn(s *p)\n{\n    return p->x + b_fn();\n}\n' >"$T/src/m/c.c"
    printf '#include "m/m.h"\nint d_fn(s *p)\n{\n    return p->x;\n}\n' >"$T/src/m/d.c"
    LAST="(tools/file_cycles.py on a made-up module)"
    got=$(python3 "$SRC/tools/file_cycles.py" "$T" m -v)
    rc=$?
    want="cycle: m/a m/b
   m/a -> m/b: b_fn
   m/b -> m/a: a_fn"
    if [ "$got" = "$want" ] && [ $rc = 1 ]; then pass_; else fail_ "exit $rc, output:
$got
  expected:
$want"; fi
    rm "$T/src/m/b.c"
    got=$(python3 "$SRC/tools/file_cycles.py" "$T" m)
    rc=$?
    if [ "$got" = "no cycle in m (3 files)" ] && [ $rc = 0 ]; then pass_; else fail_ "exit $rc, output: $got"; fi
fi

finish
