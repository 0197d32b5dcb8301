#!/usr/bin/env bash
# The whole test suite: formatting, lints, docs, Rust unit/property/corpus-replay tests, a short
# fuzzing run of every fuzz target, and the python-ndn interoperability tests. Works on a fresh machine with Rust and Python 3: it creates
# its own virtualenv (.venv/) for python-ndn and pytest from PyPI.
set -euo pipefail
cd "$(dirname "$0")/.."

step() { printf '\n==> %s\n' "$*"; }

step "cargo fmt --check"
cargo fmt --all -- --check

step "cargo clippy (warnings are errors)"
cargo clippy --workspace --all-targets --locked -- -D warnings

step "cargo doc (broken intra-doc links are errors)"
RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps --locked

step "cargo test"
cargo test --workspace --locked

# Every fuzz target for FUZZ_CI_SECONDS (default 20; 0 skips the step): 70-105 s of build and
# 11 x 20 s of fuzzing on a 2-core machine. The corpus is replayed by `cargo test` above and again
# by libFuzzer before it fuzzes. Needs a C++ compiler (libFuzzer is built from source).
fuzz_seconds="${FUZZ_CI_SECONDS:-20}"
if [ "$fuzz_seconds" != 0 ]; then
  step "fuzzing: each target for ${fuzz_seconds} s"
  bash scripts/fuzz.sh all "$fuzz_seconds"
fi

# --- HTTP endpoint: the status page is checked in headless Chromium (tests/interop/test_http.py);
# Debian's chromium is installed when missing (CI runs as root with apt reachable). ---
if ! command -v chromium >/dev/null 2>&1; then
  step "installing chromium for the status-page test"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium
fi
# --- end HTTP endpoint ---

step "python-ndn interoperability"
if [ ! -x .venv/bin/python ]; then
  python3 -m venv .venv
fi
.venv/bin/python -m pip install --quiet --disable-pip-version-check -r tests/interop/requirements.txt
cargo build --locked -p cascade

# --- NDNts (JavaScript) harness: tests/ndnts, pinned versions from npm (package-lock.json);
# tests/interop/test_ndnts.py drives it against the router (WebSocket and Unix faces).
step "npm ci (tests/ndnts)"
(cd tests/ndnts && npm ci --no-audit --no-fund)
# --- end NDNts

CASCADE_BIN="$PWD/target/debug/cascade" .venv/bin/python -m pytest tests/interop -q
