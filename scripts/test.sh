#!/usr/bin/env bash
# The whole test suite: formatting, lints, docs, Rust unit/property/corpus-replay tests, and the
# python-ndn interoperability tests. Works on a fresh machine with Rust and Python 3: it creates
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

step "python-ndn interoperability"
if [ ! -x .venv/bin/python ]; then
  python3 -m venv .venv
fi
.venv/bin/python -m pip install --quiet --disable-pip-version-check -r tests/interop/requirements.txt
cargo build --locked -p cascade
CASCADE_BIN="$PWD/target/debug/cascade" .venv/bin/python -m pytest tests/interop -q
