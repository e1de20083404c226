# The emulated 4-host fabric (tests/netns/fabric.sh, docs/netns.md) at
# 64 KiB to 1 MiB: namespaces, veth, tbf, weft perf with WEFT_NETNS per
# rank, ring vs the cost model's plan, simulator vs measurement. Skips
# (77) when not root or without ip/tc. The simulator must agree with the
# executor within 25% here (the median over the runs of each size, and over
# all sizes), not the sweep's 10%: the CI machine may carry other load, and
# load alone moved the median to 10.6% (fabric.sh, docs/netns.md); CTest runs
# it alone (RUN_SERIAL in CMakeLists.txt), since a test beside it slowed the
# 64 KiB runs by 26%. The documented sweep keeps 10%.
# Run by CTest as: bash netns.sh WEFT_BIN SOURCE_DIR SHARED_FIXTURES
AGREE_PCT=25 exec bash "$2/tests/netns/fabric.sh" "$1" "$2" 1M
