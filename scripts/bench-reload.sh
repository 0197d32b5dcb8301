#!/usr/bin/env bash
# SIGHUP reload under load (docs/performance.md): `cascade bench forward --attach` against a
# running router, in rounds without and with a loop that rewrites the configuration (a static
# face, a route and a strategy added, then removed) and sends SIGHUP every second. Prints
# satisfied Interests/s, timeouts, Nacks, router drops and RTT for each run.
#
#   cargo build --release -p cascade
#   flock /tmp/bench.lock scripts/bench-reload.sh
#
# B: the binary (target/release/cascade); DUR: seconds per run (10); ROUNDS: rounds (3);
# INTERVAL: seconds between reloads (1); ORDER: the modes of a round ("quiet hup"; "hup quiet"
# to check for an order effect).
set -u
cd "$(dirname "$0")/.."
B=${B:-$PWD/target/release/cascade}
D=$(mktemp -d /tmp/cascade-bench-reload.XXXXXX)
DUR=${DUR:-10}
cat > $D/a.toml <<'T'
[[face]]
uri = "udp4://127.0.0.1:7101"
[[route]]
prefix = "/r/a"
face = "udp4://127.0.0.1:7101"
T
cat > $D/b.toml <<'T'
[[face]]
uri = "udp4://127.0.0.1:7101"
[[face]]
uri = "udp4://127.0.0.1:7102"
[[route]]
prefix = "/r/b"
face = "udp4://127.0.0.1:7102"
cost = 3
[[strategy]]
prefix = "/r/b"
strategy = "multicast"
T
cp $D/a.toml $D/c.toml
$B run -c $D/c.toml --unix $D/r.sock --tcp '' --udp '' 2> $D/router.log & R=$!
sleep 1
for round in $(seq ${ROUNDS:-3}); do
  for mode in ${ORDER:-quiet hup}; do
    L=
    if [ $mode = hup ]; then
      ( n=0; while true; do
          if [ $((n % 2)) = 0 ]; then cp $D/b.toml $D/c.toml; else cp $D/a.toml $D/c.toml; fi
          kill -HUP $R; n=$((n+1)); sleep ${INTERVAL:-1}
        done ) & L=$!
    fi
    $B bench forward --face unix --attach unix://$D/r.sock --duration $DUR --json > $D/$mode-$round.json 2> $D/$mode-$round.err
    [ -n "$L" ] && kill $L && wait $L 2>/dev/null
  done
done
kill $R; wait $R
echo "reloads applied: $(grep -c 'reloaded' $D/router.log), failed: $(grep -c 'reload failed' $D/router.log)"
python3 - "$D" <<'P'
import json, sys, glob
d = sys.argv[1]
for mode in ("quiet", "hup"):
    rows = [json.load(open(f)) for f in sorted(glob.glob(f"{d}/{mode}-*.json"))]
    for r in rows:
        print(mode, "satisfied/s %.0f" % r["satisfied_per_s"], "timeouts", r["timeouts"],
              "nacks", sum(r["nacks"].values()) if r["nacks"] else 0,
              "drops", sum(r["router_drops"].values()) if r["router_drops"] else 0,
              "rtt p99 %.0f us max %.0f us" % (r["rtt_us"]["p99"], r["rtt_us"]["max"]))
P
rm -rf "$D"
