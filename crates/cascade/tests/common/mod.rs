//! Running the `cascade` binary from the CLI tests.

use std::process::{Command, Output};

/// Runs `cascade` with `args`.
pub fn cascade(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_cascade"))
        .args(args)
        .output()
        .expect("run cascade")
}

/// Runs `cascade` with `args`, which must succeed and print one JSON object.
pub fn cascade_json(args: &[&str]) -> serde_json::Value {
    let out = cascade(args);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("one JSON object")
}
