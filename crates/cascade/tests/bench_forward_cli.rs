//! `cascade bench forward` as a user runs it, briefly: a router started in-process, driven over
//! UDP and Unix sockets, with the CPU figures that put the router against the generator's own
//! direct exchange, and `--scale` with one row per core.

mod common;

/// The CPU figures of one measurement through the router and of the ceiling run: present,
/// positive, and the total the sum of user and system time.
fn assert_cpu_figures(v: &serde_json::Value) {
    let f = |k: &str| {
        v[k].as_f64()
            .unwrap_or_else(|| panic!("{k} is not a number: {v}"))
    };
    for who in [
        "router_cpu_%_us_per_interest",
        "generator_cpu_%_us_per_interest",
        "ceiling_generator_cpu_%_us_per_exchange",
    ] {
        let total = f(&who.replace("%_", ""));
        let (user, sys) = (f(&who.replace('%', "user")), f(&who.replace('%', "sys")));
        assert!(total > 0.0 && user >= 0.0 && sys >= 0.0, "{who}: {v}");
        assert!(
            (total - user - sys).abs() < 1e-6 * total.max(1.0),
            "{who}: {v}"
        );
    }
    assert!(f("router_to_direct_cpu_ratio") > 0.0, "{v}");
    assert!(f("pct_of_ceiling") > 0.0, "{v}");
    assert!(f("ceiling_per_s") > 0.0, "{v}");
    assert!(v["satisfied"].as_u64().unwrap() > 0, "{v}");
}

#[test]
fn one_run_reports_router_and_generator_cpu_against_the_direct_exchange() {
    for face in ["udp", "unix"] {
        let v = common::cascade_json(&[
            "bench",
            "forward",
            "--face",
            face,
            "--duration",
            "0.2",
            "--json",
        ]);
        assert!(v.is_object(), "{v}");
        assert_eq!(v["face"], face);
        assert_cpu_figures(&v);
        // The fields that were there before the CPU split.
        for k in ["satisfied_per_s", "timeouts", "rtt_us", "ceiling_timeouts"] {
            assert!(!v[k].is_null(), "{k}: {v}");
        }
    }
}

#[test]
fn scale_reports_one_row_per_core() {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let v = common::cascade_json(&["bench", "forward", "--scale", "--duration", "0.2", "--json"]);
    let rows = v.as_array().expect("an array of rows");
    assert_eq!(rows.len(), cores, "{v}");
    for (i, row) in rows.iter().enumerate() {
        assert_eq!(row["workers"].as_u64(), Some(i as u64 + 1), "{row}");
        assert!(row["satisfied_per_s"].as_f64().unwrap() > 0.0, "{row}");
        assert!(row["timeouts"].is_u64(), "{row}");
        assert_cpu_figures(row);
    }
    // The ceiling is measured once, for every row.
    assert!(rows
        .iter()
        .all(|r| r["ceiling_per_s"] == rows[0]["ceiling_per_s"]));
}

#[test]
fn scale_text_prints_the_table_and_refuses_a_fixed_worker_count() {
    let out = common::cascade(&["bench", "forward", "--scale", "--duration", "0.1"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("router/direct"), "{text}");
    assert!(
        text.contains("us of generator CPU per direct exchange"),
        "{text}"
    );
    let out = common::cascade(&["bench", "forward", "--scale", "--workers", "1"]);
    assert_eq!(out.status.code(), Some(2));
}

/// `--threads` sets how the router started here forwards, and the report says which it ran:
/// all forward over UDP and over Unix sockets, and a sharded router reports the share of
/// packets that crossed between its loops.
#[test]
fn threads_choose_one_thread_io_and_worker_threads_or_sharded_loops() {
    for (threads, workers) in [("one", "1"), ("io+workers", "1"), ("sharded", "2")] {
        for face in ["udp", "unix"] {
            let v = common::cascade_json(&[
                "bench",
                "forward",
                "--face",
                face,
                "--threads",
                threads,
                "--workers",
                workers,
                "--no-ceiling",
                "--duration",
                "0.2",
                "--json",
            ]);
            assert_eq!(v["threads"], threads, "{v}");
            assert_eq!(v["workers"].to_string(), workers, "{v}");
            assert!(v["satisfied"].as_u64().unwrap() > 0, "{v}");
            let crossed = v["crossed_loops_pct"].as_f64();
            assert_eq!(crossed.is_some(), threads == "sharded", "{v}");
            assert!(crossed.is_none_or(|c| c > 0.0 && c < 100.0), "{v}");
        }
    }
}
