#!/usr/bin/env bash
# The L2 restart test with a large file (docs/design.md, "Durability"): `cascade put` + `cascade
# get` of MIB megabytes through a router with a store (write-through, then write-back with a
# 16-entry RAM CS), every chunk stored, SIGTERM, a restart with the producer gone, the file
# fetched again whole by its versioned name.
#
#   scripts/l2-restart.sh         # 100 MiB
#   MIB=20 scripts/l2-restart.sh
set -eu
cd "$(dirname "$0")/.."
export CASCADE_L2_TEST_MIB=${MIB:-100}
CARGO_INCREMENTAL=0 cargo test -p cascade --test daemon_cli restarted_router_serves -- --nocapture
