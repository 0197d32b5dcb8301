#!/usr/bin/env bash
# The L2 store's SIGKILL test at N random points (docs/design.md, "Durability"): a fetch
# through a router with a store, SIGKILL at a random point, a restart on the same store with
# the producer gone, every segment asked for. Each run must serve at least 95 % of the chunks
# the store had acknowledged (counted in n_entries: slot writes completed) and no wrong Data.
#
#   scripts/l2-kill.sh            # N = 100
#   N=20 SEED=7 scripts/l2-kill.sh
#
# N: runs (100); SEED: the random points' seed; MAX_MS: latest kill point after the fetch
# starts (150).
set -eu
cd "$(dirname "$0")/.."
export CASCADE_L2_KILL_RUNS=${N:-100}
export CASCADE_L2_KILL_SEED=${SEED:-24301}
export CASCADE_L2_KILL_MAX_MS=${MAX_MS:-150}
CARGO_INCREMENTAL=0 cargo test -p cascade --test daemon_cli \
    a_router_killed_while_storing -- --nocapture --exact \
    a_router_killed_while_storing_restarts_and_serves_what_its_store_acknowledged
