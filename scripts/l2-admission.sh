#!/usr/bin/env bash
# Admission back-pressure on and off (docs/performance.md): `cascade put` + `cascade get` of a
# SIZE_MB file (50) through a router with an L2 store (2 workers, write-through, a store large
# enough for the whole file), `[store] back_pressure = true` then `false`, ROUNDS (3) rounds
# interleaved. Prints per run get's goodput, timeouts and retransmissions, and the store's
# chunks, writes, admission drops and iterations held (`cascade ctl cs info --json`, once the writes are done).
#
#   cargo build --release -p cascade
#   flock /tmp/bench.lock scripts/l2-admission.sh
#
# B: the binary (target/release/cascade).
set -u
cd "$(dirname "$0")/.."
B=${B:-$PWD/target/release/cascade}
SIZE_MB=${SIZE_MB:-50}
ROUNDS=${ROUNDS:-3}
D=$(mktemp -d /tmp/cascade-l2-admission.XXXXXX)
PIDS=()
cleanup() {
    for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
    wait 2>/dev/null
    rm -rf "$D"
}
trap cleanup EXIT
head -c $((SIZE_MB << 20)) /dev/urandom > "$D/src.bin"
CHUNKS=$(( (SIZE_MB << 20) / 8000 + 1 ))

# run ON: one router with back_pressure = ON, one put, one get; one line of figures.
run() {
    rm -rf "$D/l2" "$D/out.bin"
    mkdir -p "$D/l2"
    printf '[store]\nl2_path = "%s"\nl2_capacity = %d\nback_pressure = %s\n' \
        "$D/l2" $((CHUNKS * 2 + 1000)) "$1" > "$D/r.toml"
    : > "$D/r.log"
    "$B" run --config "$D/r.toml" --unix "$D/r.sock" --tcp "" --udp 127.0.0.1:0 \
        --websocket "" --http "" --workers 2 2> "$D/r.log" > /dev/null &
    PIDS+=($!)
    for _ in $(seq 100); do
        grep -q "forwarding with" "$D/r.log" && break
        sleep 0.1
    done
    local T="unix://$D/r.sock"
    "$B" put /adm "$D/src.bin" --transport "$T" > /dev/null 2>&1 &
    PIDS+=($!)
    for _ in $(seq 100); do
        "$B" ctl fib list --transport "$T" 2>/dev/null | grep -q /adm && break
        sleep 0.1
    done
    local j cs
    j=$("$B" get /adm -o "$D/out.bin" --json --transport "$T")
    sleep 1
    cs=$("$B" ctl cs info --json --transport "$T")
    local same=differs
    cmp -s "$D/src.bin" "$D/out.bin" && same=byte-exact
    python3 - "$1" "$same" "$j" "$cs" <<'PY'
import json, sys
on, same, j, cs = sys.argv[1], sys.argv[2], json.loads(sys.argv[3]), json.loads(sys.argv[4])
l2 = cs["l2"]
print(f"back_pressure={on:5}  {j['goodput_bps']/1e6:7.0f} Mbit/s  timeouts {j['timeouts']:4}  "
      f"retx {j['retransmissions']:5}  L2 entries {l2['n_entries']:6}  writes {l2['n_writes']:6}  "
      f"admit_dropped {l2['n_admit_dropped']:6}  held {l2['n_input_held']:6}  {same}")
PY
    for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
    wait 2>/dev/null
    PIDS=()
}

echo "cascade put + get of ${SIZE_MB} MiB (${CHUNKS} chunks) through a router with L2 ($B)"
for r in $(seq "$ROUNDS"); do
    echo "round $r"
    run true
    run false
done
