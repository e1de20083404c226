# One rank's transfer over both NICs of its emulated host, relayed through
# its host-mate (tests/netns/relay.sh, docs/netns.md, "Relaying through
# host-mates"), at 16 MiB: results exact, each NIC of h0 carries 30-70% of
# the relayed plan's bytes, and the relayed plan is at least 1.6x as fast as
# the same broadcast over one NIC (2x is the link limit; the margin is the
# loaded machine's, whose relaying ranks must be scheduled to keep the second
# NIC busy). Skips (77) when not root or without ip/tc.
# Run by CTest as: bash netns_relay.sh WEFT_BIN SOURCE_DIR SHARED_FIXTURES
exec bash "$2/tests/netns/relay.sh" "$1" "$2" 16M 1.6 3
