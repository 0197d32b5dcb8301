#!/usr/bin/env bash
# Coverage-guided fuzzing (libFuzzer) of every parser a peer reaches: the wire decoders and the
# stream framer, NDNLPv2 reassembly, the dispatcher's classifier, management commands and the
# L2 file (fuzz/fuzz_targets/, invariants in fuzz/checks.rs and fuzz/checks_peer.rs).
#
#   scripts/fuzz.sh [TARGET|all] [SECONDS]
#
# TARGET: one of the targets below, or all (default: all, one after the other).
# SECONDS: time per target (default 60).
#
# Works on the stable toolchain and needs neither cargo-fuzz nor nightly: the targets are built
# with plain cargo and the coverage instrumentation cargo-fuzz would ask rustc for
# (-Cpasses=sancov-module and the sanitizer-coverage options, all stable flags), for the host
# triple so that build scripts stay uninstrumented. libfuzzer-sys compiles libFuzzer with the
# system's C++ compiler. With FUZZ_SANITIZER=address, AddressSanitizer is added through
# -Zsanitizer=address, which the stable compiler accepts only under RUSTC_BOOTSTRAP=1 (set here).
#
# Corpora: the committed seeds in fuzz/corpus/TARGET and the reproducers in
# fuzz/artifacts-found/TARGET are read, never written (libFuzzer runs them all first, so a
# fuzzing run also replays the corpus); the inputs libFuzzer finds go to
# fuzz/target/fuzz-corpus/TARGET (git-ignored). A crash leaves its input in
# fuzz/artifacts/TARGET/ (git-ignored); copy it to fuzz/artifacts-found/TARGET/ to keep it as a
# reproducer. `cargo test --workspace` replays seeds and reproducers through the same checks on
# stable without libFuzzer (crates/wire/tests/fuzz_corpus.rs, crates/router/tests/fuzz_corpus.rs).
#
# Environment:
#   FUZZ_SANITIZER  none (default; the fastest) or address
#   FUZZ_RUNS       stop each target after this many executions instead of SECONDS
#                   (e.g. 100000000; SECONDS then only bounds the time)
#   FUZZ_JOBS       parallel fuzzing processes per target (default 1)
#   FUZZ_ARGS       extra libFuzzer flags
# The last line of each target's libFuzzer output and a summary (executions, executions/s,
# result) are printed; the summary is also written to fuzz/target/fuzz-summary.txt.
set -euo pipefail

ALL_TARGETS=(packet name uri frame mgmt stream reassembly dispatch command l2 l2file)
target="${1:-all}"
seconds="${2:-60}"
sanitizer="${FUZZ_SANITIZER:-none}"
jobs="${FUZZ_JOBS:-1}"

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root/fuzz"

if [[ "$target" == all ]]; then
    targets=("${ALL_TARGETS[@]}")
else
    targets=("$target")
fi
for t in "${targets[@]}"; do
    if [[ ! -d "corpus/$t" ]]; then
        echo "fuzz.sh: no seed corpus fuzz/corpus/$t (targets: ${ALL_TARGETS[*]})" >&2
        exit 2
    fi
done

triple="$(rustc -vV | sed -n 's/^host: //p')"
flags=(
    -Cpasses=sancov-module
    -Cllvm-args=-sanitizer-coverage-level=4
    -Cllvm-args=-sanitizer-coverage-inline-8bit-counters
    -Cllvm-args=-sanitizer-coverage-pc-table
    -Cllvm-args=-sanitizer-coverage-trace-compares
    --cfg fuzzing
)
case "$sanitizer" in
none) ;;
address)
    export RUSTC_BOOTSTRAP=1
    flags+=(-Zsanitizer=address)
    ;;
*)
    echo "fuzz.sh: FUZZ_SANITIZER=$sanitizer: expected none or address" >&2
    exit 2
    ;;
esac
export CARGO_TARGET_DIR="$root/fuzz/target/$sanitizer"
echo "== building the fuzz targets (sanitizer: $sanitizer)" >&2
build_start=$(date +%s)
RUSTFLAGS="${flags[*]}" cargo build --release --locked --target "$triple" --bins
echo "== built in $(($(date +%s) - build_start)) s" >&2
bin_dir="$CARGO_TARGET_DIR/$triple/release"

summary="$root/fuzz/target/fuzz-summary.txt"
printf '%-11s %14s %10s  %s\n' target executions exec/s result >"$summary"
failed=()
for t in "${targets[@]}"; do
    work="target/fuzz-corpus/$t"
    mkdir -p "$work" "artifacts/$t"
    dirs=("$work" "corpus/$t")
    if [[ -d "artifacts-found/$t" ]]; then
        dirs+=("artifacts-found/$t")
    fi
    args=(-max_total_time="$seconds" -timeout=10 -print_final_stats=1
        -artifact_prefix="artifacts/$t/")
    if [[ -n "${FUZZ_RUNS:-}" ]]; then
        args+=(-runs="$FUZZ_RUNS")
    fi
    if ((jobs > 1)); then
        args+=(-jobs="$jobs" -workers="$jobs")
    fi
    echo "== fuzzing $t for ${seconds}s${FUZZ_RUNS:+ or $FUZZ_RUNS runs}" >&2
    log="target/fuzz-$t.log"
    result=ok
    # shellcheck disable=SC2086 # FUZZ_ARGS is a list of flags
    if ! "$bin_dir/$t" "${args[@]}" ${FUZZ_ARGS:-} "${dirs[@]}" >"$log" 2>&1; then
        # A signal (Ctrl-C, kill) stops libFuzzer with "run interrupted": not a crash.
        if grep -q 'libFuzzer: run interrupted' "$log"; then
            result=interrupted
        else
            result=CRASH
            failed+=("$t")
        fi
    fi
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
    rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
    grep -E '^(#[0-9]+|INFO: |==[0-9]+==|SUMMARY|.*panicked)' "$log" | tail -3 >&2 || true
    printf '%-11s %14s %10s  %s\n' "$t" "${execs:-?}" "${rate:-?}" "$result" | tee -a "$summary" >&2
done

echo >&2
cat "$summary" >&2
if ((${#failed[@]})); then
    echo "fuzz.sh: crashes in: ${failed[*]} (inputs in fuzz/artifacts/; logs in fuzz/target/fuzz-*.log)" >&2
    exit 1
fi
echo "fuzz.sh: no crashes" >&2
