#!/usr/bin/env bash
# Coverage-guided fuzzing of the wire crate's decoders (cargo-fuzz / libFuzzer).
#
#   scripts/fuzz.sh [TARGET] [SECONDS]
#
# TARGET: packet | name | uri | frame | mgmt | all (default: all, one after the other).
# SECONDS: time per target (default 60).
#
# Works on the stable toolchain: cargo-fuzz needs nightly-only rustc flags, which
# RUSTC_BOOTSTRAP=1 unlocks. cargo-fuzz is installed on first use.
#
# Corpora: the committed seeds in fuzz/corpus/TARGET are read, never written; the inputs libFuzzer
# finds go to fuzz/target/fuzz-corpus/TARGET (git-ignored), so the seed corpus stays small.
# Regenerate the seeds with:
#   cargo run -p cascade-wire --example gen_fuzz_corpus
# A crash leaves its input in fuzz/artifacts/TARGET/ (git-ignored). Keep a reproducer by copying it
# to fuzz/artifacts-found/TARGET/: `cargo test -p cascade-wire --test fuzz_corpus` (run by CI)
# replays the seeds and both artifact directories through the same checks (fuzz/checks.rs).
#
# Environment: FUZZ_SANITIZER (default "none": the wire crate has no unsafe code, and without
# AddressSanitizer libFuzzer runs several times faster; set "address" to use it),
# FUZZ_JOBS (parallel fuzzing processes per target, default 1), FUZZ_ARGS (extra libFuzzer flags).
set -euo pipefail

ALL_TARGETS=(packet name uri frame mgmt)
target="${1:-all}"
seconds="${2:-60}"
sanitizer="${FUZZ_SANITIZER:-none}"
jobs="${FUZZ_JOBS:-1}"

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root/fuzz"

if ! cargo fuzz --version >/dev/null 2>&1; then
    echo "fuzz.sh: installing cargo-fuzz" >&2
    cargo install cargo-fuzz --locked
fi

if [[ "$target" == all ]]; then
    targets=("${ALL_TARGETS[@]}")
else
    targets=("$target")
fi

export RUSTC_BOOTSTRAP=1
failed=()
for t in "${targets[@]}"; do
    if [[ ! -d "corpus/$t" ]]; then
        echo "fuzz.sh: no seed corpus fuzz/corpus/$t (targets: ${ALL_TARGETS[*]})" >&2
        exit 2
    fi
    work="target/fuzz-corpus/$t"
    mkdir -p "$work"
    echo "== fuzzing $t for ${seconds}s (sanitizer: $sanitizer)" >&2
    extra=()
    if ((jobs > 1)); then
        extra+=(-jobs="$jobs" -workers="$jobs")
    fi
    # shellcheck disable=SC2086 # FUZZ_ARGS is a list of flags
    if ! cargo fuzz run --sanitizer "$sanitizer" "$t" "$work" "corpus/$t" -- \
        -max_total_time="$seconds" "${extra[@]}" ${FUZZ_ARGS:-}; then
        failed+=("$t")
    fi
done

if ((${#failed[@]})); then
    echo "fuzz.sh: failures in: ${failed[*]} (inputs in fuzz/artifacts/)" >&2
    exit 1
fi
echo "fuzz.sh: no failures" >&2
