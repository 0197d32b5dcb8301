//! `cascade decode` as a user runs it: real process, stdin/file input, exit codes and stderr.

use std::io::Write;
use std::process::{Command, Output, Stdio};

fn cascade(args: &[&str], stdin: &[u8]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_cascade"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn cascade");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(stdin)
        .expect("write stdin");
    child.wait_with_output().expect("wait")
}

const INTEREST_HEX: &str = "05 0b 07 03 08 01 61 0a 04 01 02 03 04 # Interest /a";

#[test]
fn decodes_hex_from_stdin_as_json() {
    let out = cascade(&["decode", "--hex", "--json"], INTEREST_HEX.as_bytes());
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["type"], "Interest");
    assert_eq!(v["name"], "/a");
    assert_eq!(v["nonce"], 0x01020304);
}

#[test]
fn decodes_raw_file_as_tree() {
    let dir = std::env::temp_dir().join(format!("cascade-decode-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("p.bin");
    std::fs::write(
        &path,
        [
            0x05, 0x0b, 0x07, 0x03, 0x08, 0x01, 0x61, 0x0a, 0x04, 1, 2, 3, 4,
        ],
    )
    .unwrap();
    let out = cascade(&["decode", path.to_str().unwrap()], b"");
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.starts_with("Interest [11]\n  Name /a\n  Nonce [4]: 01020304\n"),
        "{text}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn sample_is_three_packets() {
    let out = cascade(&["decode", "--sample", "--json"], b"");
    assert!(out.status.success());
    let types: Vec<String> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["type"].to_string())
        .collect();
    assert_eq!(types, ["\"Interest\"", "\"Data\"", "\"Nack\""]);
}

#[test]
fn malformed_input_exits_2_with_one_line_naming_the_offset() {
    let cases: &[(&[&str], &[u8], &str)] = &[
        (
            &["decode", "--hex"],
            b"05 0b 07 03 08 01 61 0a 03 01 02 03",
            "at byte offset",
        ),
        (
            &["decode", "--hex"],
            b"05 02 07 00",
            "zero components at byte offset 2",
        ),
        (
            &["decode", "--hex"],
            b"05 0b 07",
            "truncated element at byte offset 0",
        ),
        (&["decode", "--hex"], b"0x", "invalid hex digit"),
        (&["decode", "--hex"], b"abc", "odd number of hex digits"),
        (
            &["decode"],
            &[0x05, 0xFD, 0x00, 0x01, 0x00],
            "non-minimal VAR-NUMBER at byte offset 1",
        ),
    ];
    for (args, input, needle) in cases {
        let out = cascade(args, input);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{input:02x?}: {err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.contains(needle), "{err} lacks {needle}");
        assert!(out.stdout.is_empty());
    }
}

#[test]
fn missing_file_is_a_one_line_error() {
    let out = cascade(&["decode", "/nonexistent/cascade.bin"], b"");
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().count(), 1);
    assert!(err.contains("/nonexistent/cascade.bin"));
}

#[test]
fn arbitrary_bytes_never_panic() {
    // A deterministic pseudo-random sweep; the fuzzer covers this far more deeply.
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    for _ in 0..40 {
        let len = (x % 64) as usize;
        let bytes: Vec<u8> = (0..len)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                (x & 0xFF) as u8
            })
            .collect();
        let out = cascade(&["decode", "--json"], &bytes);
        let code = out.status.code();
        assert!(
            matches!(code, Some(0) | Some(2)),
            "{bytes:02x?} gave {code:?}"
        );
    }
}
