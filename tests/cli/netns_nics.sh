# Two NICs per emulated host (tests/netns/nics.sh, docs/netns.md) at 1 MiB:
# WEFT_SOCKET_IFNAME=eth0,eth1 stripes the built-in ring and the plan
# executor's lanes over both interfaces (each carries 30-70% of the bytes),
# results exact. Skips (77) when not root or without ip/tc.
# Run by CTest as: bash netns_nics.sh WEFT_BIN SOURCE_DIR SHARED_FIXTURES
exec bash "$2/tests/netns/nics.sh" "$1" "$2" 1M
