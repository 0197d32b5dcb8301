#!/usr/bin/env bash
# Bulk transfer under benign load (docs/performance.md): `cascade put` + `cascade get` of a
# SIZE_MB file (100) through one router and through a chain of two, with the consumer on a
# Unix socket and on UDP (the two routers linked over TCP, resp. UDP). Prints, for each case,
# get's goodput, timeouts, retransmissions, congestion marks, window decreases and whether the
# file came back byte-exact; exits non-zero if any case had a timeout or a differing file.
#
#   cargo build --release -p cascade
#   flock /tmp/bench.lock scripts/bench-bulk.sh
#
# B: the binary (target/release/cascade); SIZE_MB: the file's size in MiB (100).
set -u
cd "$(dirname "$0")/.."
B=${B:-$PWD/target/release/cascade}
SIZE_MB=${SIZE_MB:-100}
D=$(mktemp -d /tmp/cascade-bench-bulk.XXXXXX)
PIDS=()
cleanup() {
    for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
    wait 2>/dev/null
    rm -rf "$D"
}
trap cleanup EXIT
head -c $((SIZE_MB << 20)) /dev/urandom > "$D/src.bin"

# start NAME CONFIG: a router on $D/NAME.sock; sets PORT_UDP and PORT_TCP.
start() {
    printf '%s' "$2" > "$D/$1.toml"
    : > "$D/$1.log"
    "$B" run --config "$D/$1.toml" --unix "$D/$1.sock" --tcp 127.0.0.1:0 --udp 127.0.0.1:0 \
        --websocket "" --http "" --workers 2 2> "$D/$1.log" > /dev/null &
    PIDS+=($!)
    for _ in $(seq 100); do
        grep -q "forwarding with" "$D/$1.log" && break
        sleep 0.1
    done
    local line
    line=$(grep "forwarding with" "$D/$1.log")
    PORT_UDP=$(sed -E 's/.* udp ([0-9.:]+).*/\1/' <<< "$line")
    PORT_TCP=$(sed -E 's/.* tcp ([0-9.:]+).*/\1/' <<< "$line")
}

# serve ROUTER: cascade put of the file on ROUTER's socket, until its route is in.
serve() {
    "$B" put /bulk "$D/src.bin" --transport "unix://$D/$1.sock" > /dev/null 2>&1 &
    PIDS+=($!)
    for _ in $(seq 100); do
        "$B" ctl fib list --transport "unix://$D/$1.sock" 2>/dev/null | grep -q /bulk && return
        sleep 0.1
    done
}

FAIL=0
# fetch CASE TRANSPORT: one get, one line of figures.
fetch() {
    rm -f "$D/out.bin"
    local j
    j=$("$B" get /bulk -o "$D/out.bin" --json --transport "$2")
    local same=differs
    cmp -s "$D/src.bin" "$D/out.bin" && same=byte-exact
    python3 - "$1" "$same" "$j" <<'PY'
import json, sys
case, same, j = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
print(f"{case:28} {j['goodput_bps']/1e6:8.0f} Mbit/s  timeouts {j['timeouts']:4}  "
      f"retx {j['retransmissions']:4}  marks {j['congestion_marks']:4}  "
      f"decreases {j['window_decreases']:3}  final cwnd {j['final_cwnd']:7.1f}  {same}")
PY
    grep -q '"timeouts":0,' <<< "$j" || FAIL=1
    [ "$same" = byte-exact ] || FAIL=1
}

stop_all() {
    for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
    wait 2>/dev/null
    PIDS=()
}

echo "cascade put + get of ${SIZE_MB} MiB ($B)"
for consumer in unix udp; do
    start r ""
    serve r
    if [ $consumer = unix ]; then T="unix://$D/r.sock"; else T="udp4://$PORT_UDP"; fi
    fetch "one router, $consumer" "$T"
    stop_all
done
for consumer in unix udp; do
    start r2 ""
    if [ $consumer = unix ]; then L="tcp4://$PORT_TCP"; else L="udp4://$PORT_UDP"; fi
    start r1 "$(printf '[[face]]\nuri = "%s"\n[[route]]\nprefix = "/bulk"\nface = "%s"\n' "$L" "$L")"
    serve r2
    if [ $consumer = unix ]; then T="unix://$D/r1.sock"; else T="udp4://$PORT_UDP"; fi
    fetch "two routers, $consumer (${L%%:*})" "$T"
    stop_all
done
exit $FAIL
