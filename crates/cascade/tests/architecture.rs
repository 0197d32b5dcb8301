//! The workspace's architecture rules (docs/architecture.md), checked on the sources:
//! - which workspace crate may depend on which (normal dependencies, read from each crate's
//!   `Cargo.toml`);
//! - `engine` and `model` do no I/O: no sockets, files, spawned threads or clock in their
//!   sources;
//! - the house rules: no source file over 1,200 lines and no function over 120 lines outside
//!   tests; comments cite papers by authors and title, not by the project's internal labels.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

/// The workspace crates, by the dependency key the workspace gives them.
const CRATES: &[&str] = &[
    "wire", "engine", "face", "mgmt", "model", "store", "client", "router", "lab", "cascade",
];

/// For each crate, the workspace crates it may depend on (normal dependencies).
const ALLOWED: &[(&str, &[&str])] = &[
    ("wire", &[]),
    ("model", &[]),
    ("engine", &["wire"]),
    ("face", &["wire"]),
    ("store", &["wire", "engine", "model"]),
    ("mgmt", &["wire", "engine", "face"]),
    ("client", &["wire", "face", "mgmt"]),
    ("router", &["wire", "engine", "face", "mgmt", "store"]),
    (
        "lab",
        &[
            "wire", "engine", "face", "mgmt", "model", "store", "client", "router",
        ],
    ),
    (
        "cascade",
        &[
            "wire", "engine", "face", "mgmt", "model", "store", "client", "router", "lab",
        ],
    ),
];

/// Paths that mean I/O, a spawned thread or a clock in a crate that must have none.
const NO_IO: &[&str] = &[
    "std::fs",
    "std::net",
    "std::process",
    "thread::spawn",
    "thread::Builder",
    "Instant::now",
    "SystemTime",
    "UdpSocket",
    "TcpStream",
    "io_uring",
    "mio::",
];

const MAX_FILE_LINES: usize = 1200;
const MAX_FN_LINES: usize = 120;

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .expect("workspace root")
}

/// The crate directories under `crates/`, by their workspace dependency key.
fn crate_dirs() -> BTreeMap<String, PathBuf> {
    let mut out = BTreeMap::new();
    for entry in fs::read_dir(workspace().join("crates")).expect("crates/") {
        let dir = entry.expect("dir entry").path();
        if dir.join("Cargo.toml").is_file() {
            let key = dir.file_name().unwrap().to_string_lossy().into_owned();
            out.insert(key, dir);
        }
    }
    out
}

/// The workspace crates named in the `[dependencies]` table of a Cargo.toml (not dev- or
/// build-dependencies: tests may use any crate).
fn workspace_deps(manifest: &str) -> Vec<String> {
    let mut in_deps = false;
    let mut deps = Vec::new();
    for line in manifest.lines() {
        let line = line.trim();
        if line.starts_with('[') {
            in_deps = line == "[dependencies]";
            continue;
        }
        if !in_deps || line.is_empty() || line.starts_with('#') {
            continue;
        }
        let key = line.split(['=', '.', ' ']).next().unwrap_or("");
        if CRATES.contains(&key) {
            deps.push(key.to_string());
        }
    }
    deps
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries {
        let path = entry.expect("dir entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// A crate's non-test sources: `src/` and `examples/`, without `tests.rs` files.
fn product_sources(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    rust_files(&dir.join("src"), &mut files);
    rust_files(&dir.join("examples"), &mut files);
    files.retain(|f| f.file_name().is_none_or(|n| n != "tests.rs"));
    files.sort();
    files
}

/// The lines of `src` before its inline test module, if it has one.
fn before_tests(src: &str) -> Vec<&str> {
    let lines: Vec<&str> = src.lines().collect();
    let end = lines
        .windows(2)
        .position(|w| w[0].trim() == "#[cfg(test)]" && w[1].trim_start().starts_with("mod tests"))
        .unwrap_or(lines.len());
    lines[..end].to_vec()
}

/// A line with comments, string and char literals blanked out, for counting braces.
fn code_of(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut chars = line.chars().peekable();
    let mut in_str = false;
    while let Some(c) = chars.next() {
        if in_str {
            match c {
                '\\' => {
                    chars.next();
                }
                '"' => in_str = false,
                _ => {}
            }
            continue;
        }
        match c {
            '/' if chars.peek() == Some(&'/') => break,
            '"' => in_str = true,
            '\'' => {
                // A char literal ('{', '\'', '\u{7b}') or a lifetime ('a): skip a literal.
                let rest: String = chars.clone().take(12).collect();
                let escaped = rest.starts_with('\\');
                let from = if escaped { 2 } else { 1 };
                if let Some(close) = rest.char_indices().skip(from).find(|&(_, c)| c == '\'') {
                    if escaped || close.0 == 1 {
                        for _ in 0..=close.0 {
                            chars.next();
                        }
                        continue;
                    }
                }
                out.push(c);
            }
            _ => out.push(c),
        }
    }
    out
}

/// Functions of more than `max` lines among `lines`: (name, first line, length).
fn long_functions(lines: &[&str], max: usize) -> Vec<(String, usize, usize)> {
    let code: Vec<String> = lines.iter().map(|l| code_of(l)).collect();
    let mut out = Vec::new();
    for (start, line) in code.iter().enumerate() {
        let Some(pos) = line.find("fn ") else {
            continue;
        };
        if pos > 0
            && line[..pos]
                .chars()
                .last()
                .is_some_and(|c| c.is_alphanumeric())
        {
            continue;
        }
        let name: String = line[pos + 3..]
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        if name.is_empty() {
            continue;
        }
        let mut depth = 0i64;
        let mut opened = false;
        for (k, l) in code.iter().enumerate().skip(start) {
            if !opened && l.contains(';') && !l.contains('{') {
                break; // a declaration without a body
            }
            depth += l.matches('{').count() as i64 - l.matches('}').count() as i64;
            opened |= l.contains('{');
            if opened && depth <= 0 {
                let len = k - start + 1;
                if len > max {
                    out.push((name.clone(), start + 1, len));
                }
                break;
            }
        }
    }
    out
}

#[test]
fn crates_depend_only_on_what_the_rules_allow() {
    let dirs = crate_dirs();
    let mut broken = Vec::new();
    for (krate, dir) in &dirs {
        let allowed = ALLOWED
            .iter()
            .find(|(k, _)| k == krate)
            .unwrap_or_else(|| panic!("crate {krate} has no rule in this test"))
            .1;
        let manifest = fs::read_to_string(dir.join("Cargo.toml")).expect("Cargo.toml");
        for dep in workspace_deps(&manifest) {
            if !allowed.contains(&dep.as_str()) {
                broken.push(format!("{krate} depends on {dep}"));
            }
        }
    }
    assert!(broken.is_empty(), "forbidden dependencies: {broken:?}");
}

#[test]
fn the_dependency_reader_sees_workspace_dependencies() {
    let manifest = "[package]\nname = \"x\"\n\n[dependencies]\nwire.workspace = true\n\
                    engine = { workspace = true }\nlibc = \"0.2\"\n\n[dev-dependencies]\n\
                    router.workspace = true\n";
    assert_eq!(workspace_deps(manifest), vec!["wire", "engine"]);
}

#[test]
fn engine_and_model_do_no_io() {
    let dirs = crate_dirs();
    let mut found = Vec::new();
    for krate in ["engine", "model"] {
        for file in product_sources(&dirs[krate]) {
            let src = fs::read_to_string(&file).expect("source");
            for (n, line) in before_tests(&src).iter().enumerate() {
                let code = code_of(line);
                for pat in NO_IO {
                    if code.contains(pat) {
                        found.push(format!("{}:{}: {pat}", file.display(), n + 1));
                    }
                }
            }
        }
    }
    assert!(found.is_empty(), "I/O in engine or model: {found:#?}");
}

#[test]
fn files_and_functions_stay_small_outside_tests() {
    let mut found = Vec::new();
    for dir in crate_dirs().values() {
        for file in product_sources(dir) {
            let src = fs::read_to_string(&file).expect("source");
            let lines = before_tests(&src);
            if lines.len() > MAX_FILE_LINES {
                found.push(format!("{}: {} lines", file.display(), lines.len()));
            }
            for (name, at, len) in long_functions(&lines, MAX_FN_LINES) {
                found.push(format!("{}:{at}: fn {name}, {len} lines", file.display()));
            }
        }
    }
    assert!(found.is_empty(), "too large: {found:#?}");
}

#[test]
fn the_function_measure_counts_bodies() {
    let src =
        "fn a() {\n    let s = \"}\";\n    let c = '{';\n}\nfn b();\nfn c<'a>(x: &'a u8) {\n}\n";
    let lines: Vec<&str> = src.lines().collect();
    assert_eq!(long_functions(&lines, 3), vec![("a".to_string(), 1, 4)]);
    assert!(long_functions(&lines, 4).is_empty());
}

#[test]
fn comments_cite_papers_not_internal_labels() {
    let mut found = Vec::new();
    for dir in crate_dirs().values() {
        let mut files = Vec::new();
        rust_files(dir, &mut files);
        for file in files {
            let src = fs::read_to_string(&file).expect("source");
            for (n, line) in src.lines().enumerate() {
                if let Some(at) = line.find("//") {
                    if internal_label(&line[at..]) {
                        found.push(format!("{}:{}: {}", file.display(), n + 1, line.trim()));
                    }
                }
            }
        }
    }
    assert!(found.is_empty(), "internal labels in comments: {found:#?}");
}

/// Whether a comment cites the project's internal labels: the papers' file numbers, a spec
/// file the repository does not have, or a numbered session or issue.
fn internal_label(comment: &str) -> bool {
    let numbered = |word: &str| {
        comment.match_indices(word).any(|(i, _)| {
            comment[i + word.len()..]
                .chars()
                .next()
                .is_some_and(|c| c.is_ascii_digit())
        })
    };
    ["seed 00", "Seed 00", "SPEC.md"]
        .iter()
        .any(|l| comment.contains(l))
        || ["session ", "Session ", "issue ", "Issue "]
            .iter()
            .any(|w| numbered(w))
}

#[test]
fn the_label_check_tells_labels_from_words() {
    assert!(internal_label(concat!("// as seed", " 002 says")));
    assert!(internal_label(concat!("/// measured in ses", "sion 12")));
    assert!(internal_label(concat!("// see SPEC", ".md §3")));
    assert!(!internal_label(
        "/// So, Narayanan and Oran (ANCS 2013), Algorithm 1"
    ));
    assert!(!internal_label("// one session per consumer"));
}
