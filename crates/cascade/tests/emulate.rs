//! `cascade emulate` end to end: a tiny chain of two real routers on loopback UDP ports (no
//! privileges needed), one with network namespaces where they are permitted, and the teardown
//! on Ctrl-C.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_cascade");

/// Two routers: R1 holds contents 0..2 of 6, R2 all of them; the consumer asks for every
/// chunk once. (At 300 Interests/s the Data arrive over 100 ms, not all in one receive batch,
/// so that the throughput, measured between the first and the last Data, is defined.)
fn tiny(requests: u64, rate_pps: u64) -> String {
    format!(
        "name = \"tiny\"\n\
         [content]\nprefix = \"/emu\"\ncontents = 6\nsegments = 5\nsegment_bytes = 4096\n\
         [consumer]\nrequests = {requests}\nrate_pps = {rate_pps}\nlifetime_ms = 4000\nseed = 3\n\
         [router]\nqueue_depth = 64\n\
         [[node]]\nname = \"R1\"\nholds = [0, 2]\n\
         [[node]]\nname = \"R2\"\nholds = [0, 6]\n\
         [[link]]\nbetween = [\"consumer\", \"R1\"]\nrate_mbit = 100\n\
         [[link]]\nbetween = [\"R1\", \"R2\"]\nrate_mbit = 100\n"
    )
}

fn scenario(dir: &Path, text: &str) -> PathBuf {
    let p = dir.join("tiny.toml");
    std::fs::write(&p, text).unwrap();
    p
}

fn emulate(args: &[&str]) -> Output {
    Command::new(BIN)
        .arg("emulate")
        .args(args)
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

/// Checks the JSON lines of a run of every case of the tiny scenario and returns them.
fn check_lines(out: &Output, namespaces: bool) -> Vec<serde_json::Value> {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let lines: Vec<serde_json::Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let cases: Vec<&str> = lines.iter().map(|v| v["case"].as_str().unwrap()).collect();
    assert_eq!(cases, ["A", "B", "C", "D"]);
    for v in &lines {
        assert_eq!(v["cc"], "none");
        assert_eq!(v["namespaces"], namespaces);
        for k in ["throughput_pps", "offered_pps"] {
            assert!(v[k].as_f64().unwrap() > 0.0, "{k}: {v}");
        }
        for k in ["mean", "p50", "p99"] {
            assert!(v["rtt_ms"][k].as_f64().unwrap() > 0.0, "rtt {k}: {v}");
        }
        assert!(v["bypassed"].is_u64() && v["marked"].is_u64(), "{v}");
        // Every chunk came back: R1 answered its share from its store, R2 the rest from its
        // store, through R1.
        assert_eq!(v["sent"], 30);
        assert_eq!(v["received"], 30, "{v}");
        let r = &v["routers"];
        let hits = |i: usize| r[i]["l2_hits"].as_u64().unwrap();
        assert_eq!(r[0]["name"], "R1");
        assert_eq!(hits(0), 10, "R1 holds 2 of 6 contents: {v}");
        assert_eq!(hits(1), 20, "R2 answers the other 4: {v}");
        // status/general counts management's own Interests too (as NFD counts those to its
        // internal face): the emulator's queries and the producer's registration.
        let r2_in = r[1]["in_interests"].as_u64().unwrap();
        assert!((20..=22).contains(&r2_in), "R2 gets the 20 through R1: {v}");
        assert_eq!(v["marked"], 0);
    }
    // Without a bloom filter (case A), R1 asks its store for every name; with one, only for
    // its own, and for each name the filter wrongly said it might hold (a false positive:
    // the filter's keys are drawn at start-up, so a run may have some).
    assert_eq!(lines[0]["routers"][0]["l2_lookups"], 30);
    let r1 = &lines[1]["routers"][0];
    let fps = r1["nbcache"]["bloom_false_positives"].as_u64().unwrap();
    let sure = r1["nbcache"]["bloom_sure_misses"].as_u64().unwrap();
    assert_eq!(r1["l2_lookups"].as_u64().unwrap(), 10 + fps, "{r1}");
    assert_eq!(
        sure + fps,
        20,
        "each of the 20 names R1 lacks is a sure miss or a false positive: {r1}"
    );
    assert!(
        fps <= 5,
        "far more false positives than the filter's target rate: {r1}"
    );
    // A line per run, nothing else on stdout; what was used is said on stderr.
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(
        said.contains(if namespaces { "namespaces" } else { "loopback" }),
        "{said}"
    );
    lines
}

#[test]
fn a_tiny_chain_on_loopback_ports_answers_every_interest() {
    let dir = tempfile::tempdir().unwrap();
    let sc = scenario(dir.path(), &tiny(30, 300));
    let work = dir.path().join("work");
    let out = emulate(&[
        "--scenario",
        sc.to_str().unwrap(),
        "--loopback",
        "--json",
        "--cc",
        "none",
        "--workdir",
        work.to_str().unwrap(),
    ]);
    check_lines(&out, false);
    assert!(!work.exists(), "the working directory is removed");
}

#[test]
fn a_tiny_chain_in_network_namespaces() {
    let probe = format!("cascade-emu-test-{}", std::process::id());
    let ok = Command::new("ip")
        .args(["netns", "add", &probe])
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        println!("skipped: network namespaces are not permitted here (not root, or no `ip`)");
        return;
    }
    let _ = Command::new("ip").args(["netns", "del", &probe]).status();
    let dir = tempfile::tempdir().unwrap();
    let sc = scenario(dir.path(), &tiny(30, 300));
    let out = emulate(&[
        "--scenario",
        sc.to_str().unwrap(),
        "--namespaces",
        "--json",
        "--cc",
        "none",
    ]);
    check_lines(&out, true);
    let left = Command::new("ip").args(["netns", "list"]).output().unwrap();
    let me = format!("cascade-emu-{}", std::process::id());
    assert!(
        !String::from_utf8_lossy(&left.stdout).contains(&me),
        "namespaces left behind"
    );
}

#[test]
fn a_producer_behind_the_chain_serves_what_no_store_holds() {
    let dir = tempfile::tempdir().unwrap();
    let text = tiny(30, 300)
        .replace("holds = [0, 6]", "holds = [2, 4]")
        .replace(
            "segment_bytes = 4096\n",
            "segment_bytes = 4096\nproducer_in_run = true\n",
        );
    let sc = scenario(dir.path(), &text);
    let out = emulate(&[
        "--scenario",
        sc.to_str().unwrap(),
        "--loopback",
        "--json",
        "--case",
        "B",
        "--cc",
        "none",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["received"], 30, "{v}");
    let r = &v["routers"];
    assert_eq!(r[0]["l2_hits"], 10, "{v}");
    assert_eq!(r[1]["l2_hits"], 10, "{v}");
    // The other 10 went on to the producer.
    // (plus at most two management Interests: see above)
    let r2_out = r[1]["out_interests"].as_u64().unwrap();
    assert!((10..=12).contains(&r2_out), "{v}");
}

/// `--cc nbcc` and `--cc ecn` run, in the order asked, with the consumer's AIMD window; an
/// unknown congestion control and a bad scenario are usage errors.
#[test]
fn congestion_controls_run_and_bad_scenarios_are_one_line_errors() {
    let dir = tempfile::tempdir().unwrap();
    let sc = scenario(dir.path(), &tiny(30, 300));
    let out = emulate(&[
        "--scenario",
        sc.to_str().unwrap(),
        "--loopback",
        "--json",
        "--case",
        "B",
        "--cc",
        "nbcc",
        "--cc",
        "ecn",
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let lines: Vec<serde_json::Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let ccs: Vec<&str> = lines.iter().map(|v| v["cc"].as_str().unwrap()).collect();
    assert_eq!(ccs, ["nbcc", "ecn"]);
    for v in &lines {
        assert_eq!(v["case"], "B");
        assert!(v["received"].as_u64().unwrap() > 0, "{v}");
        assert!(v["window_max"].as_u64().unwrap() >= 2, "{v}");
        assert!(v["routers"][0]["nbcache"].is_object(), "{v}");
    }
    let out = emulate(&["--scenario", sc.to_str().unwrap(), "--cc", "reno"]);
    assert_eq!(out.status.code(), Some(2));
    let bad = scenario(dir.path(), &tiny(31, 3000));
    let out = emulate(&["--scenario", bad.to_str().unwrap(), "--loopback"]);
    assert_eq!(out.status.code(), Some(2));
    let e = String::from_utf8_lossy(&out.stderr);
    assert!(
        e.contains("consumer.requests") && e.lines().count() == 1,
        "{e}"
    );
}

/// Processes whose command line mentions `needle`.
fn processes_mentioning(needle: &str) -> Vec<String> {
    let mut found = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(cmd) = std::fs::read(e.path().join("cmdline")) else {
            continue;
        };
        let cmd = String::from_utf8_lossy(&cmd).replace('\0', " ");
        if cmd.contains(needle) {
            found.push(cmd);
        }
    }
    found
}

#[test]
fn ctrl_c_stops_the_routers_and_removes_what_was_made() {
    let dir = tempfile::tempdir().unwrap();
    // Slow enough to be interrupted mid-run: 30 Interests over about 15 s.
    let sc = scenario(dir.path(), &tiny(30, 2));
    let work = dir.path().join("work");
    let mut child = Command::new(BIN)
        .args(["emulate", "--loopback", "--case", "B", "--scenario"])
        .arg(&sc)
        .arg("--workdir")
        .arg(&work)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Wait for the run's routers (their configuration files name the working directory).
    let deadline = Instant::now() + Duration::from_secs(60);
    let needle = work.join("R1").join("run-B").display().to_string();
    while processes_mentioning(&needle).is_empty() {
        assert!(Instant::now() < deadline, "the run never started");
        assert!(child.try_wait().unwrap().is_none(), "emulate exited early");
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_millis(300));
    // SAFETY: signalling our own child.
    unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGINT) };
    let out = child.wait_with_output().unwrap();
    let e = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{e}");
    assert!(e.contains("interrupted"), "{e}");
    assert!(!work.exists(), "the working directory is removed");
    let w = work.display().to_string();
    assert!(processes_mentioning(&w).is_empty(), "routers left running");
}
