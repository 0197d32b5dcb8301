use super::*;

#[test]
fn empty_file_is_the_defaults() {
    assert_eq!(Config::from_toml("").unwrap(), Config::default());
    assert_eq!(Config::default().listen.unix, DEFAULT_UNIX_PATH);
}

#[test]
fn full_file_parses() {
    let c = Config::from_toml(
        r#"
        [listen]
        unix = "/tmp/x.sock"
        tcp = ""
        udp = "127.0.0.1:7000"
        [workers]
        count = 3
        cores = [0, 1, 1]
        mapping = "batch"
        spin_us = 50
        [cs]
        capacity = 1000
        policy = "fifo"
        [pit]
        max_lifetime_ms = 60000
        share_watermark_percent = 75
        [faces]
        max_faces = 100
        max_on_demand_faces = 50
        max_on_demand_per_host = 4
        reassembly_budget_bytes = 1048576
        unproven_send_ratio = 3
        unproven_send_bytes_per_s = 1000000
        [[face]]
        uri = "udp://127.0.0.1:6364"
        [[route]]
        prefix = "/a/b"
        face = "udp://127.0.0.1:6364"
        cost = 10
        [[strategy]]
        prefix = "/m"
        strategy = "/localhost/nfd/strategy/multicast/v=5"
        [store]
        l2_path = "/var/cache/cascade"
        l2_capacity = 1000
        decision = "2lru"
        admission = "write-back"
        prefetch_ahead = false
        back_pressure = false
        "#,
    )
    .unwrap();
    assert_eq!(c.workers.count, 3);
    assert_eq!(c.workers.mapping, Mapping::Batch);
    assert_eq!(c.workers.spin_us, 50);
    assert_eq!(Workers::default().spin_us, DEFAULT_SPIN_US);
    for ok in ["0", "1000"] {
        let c = Config::from_toml(&format!("[workers]\nspin_us = {ok}\n")).unwrap();
        assert_eq!(c.workers.spin_us.to_string(), ok);
    }
    assert_eq!(Workers::default().mapping, Mapping::Content);
    assert_eq!(c.cs.policy, CsPolicy::Fifo);
    let limits = c.pit_limits(1);
    assert_eq!(limits.max_lifetime_ms, 60_000);
    assert_eq!(limits.share_watermark_percent, 75);
    assert_eq!(limits.face_slots, 512); // 256 reserved ids + 2 slots per place for 100 faces
    assert_eq!(c.pit_limits(4).face_slots, 512); // four tables of 25 faces: 456 slots too
    let b = c.face_bounds();
    assert_eq!(b.face_id_quarantine_ms, 70_000);
    assert_eq!((b.max_on_demand_faces, b.max_on_demand_per_host), (50, 4));
    assert_eq!(
        (b.reassembly_budget_bytes, b.unproven_send_ratio),
        (1 << 20, 3)
    );
    assert_eq!(b.unproven_send_bytes_per_s, 1_000_000);
    assert_eq!(Pit::default().max_lifetime_ms, 120_000);
    assert_eq!(c.routes[0].cost, 10);
    assert_eq!(c.listen.tcp, "");
    assert_eq!(c.store.decision, L2Decision::TwoLru);
    assert_eq!(c.store.batch, 10);
    assert_eq!(c.store.admission, L2Admission::WriteBack);
    assert_eq!(Store::default().admission, L2Admission::WriteThrough);
    assert!(!c.store.prefetch_ahead);
    assert!(Store::default().prefetch_ahead);
    assert!(!c.store.back_pressure && Store::default().back_pressure);
    let nb = Config::from_toml(
        "[store]\nbloom = true\nbloom_fp_rate = 0.001\nbloom_capacity = 5000\n\
         aqm = true\nbypass_threshold = 400\nio = \"blocking\"\n",
    )
    .unwrap();
    assert!(nb.store.bloom && nb.store.aqm);
    assert_eq!(nb.store.bloom_fp_rate, 0.001);
    assert_eq!((nb.store.bloom_capacity, nb.store.bloom_bytes), (5000, 0));
    assert_eq!(nb.store.bypass_threshold, 400);
    assert_eq!(nb.store.io, StoreIo::Blocking);
    let d = Store::default();
    assert!(!d.bloom && !d.aqm);
    assert_eq!((d.bypass_threshold, d.io), (64, StoreIo::NonBlocking));
    assert!(!d.ecn && !d.nbcc);
    assert_eq!((d.nbcc_interval_ms, d.nbcc_timeout_ms), (100, 1000));
    let cc = Config::from_toml(
        "[store]
ecn = true
nbcc = true
nbcc_interval_ms = 20
nbcc_timeout_ms = 90
         bypass_threshold = 0
",
    )
    .unwrap();
    assert!(cc.store.ecn && cc.store.nbcc);
    assert_eq!(
        (cc.store.nbcc_interval_ms, cc.store.nbcc_timeout_ms),
        (20, 90)
    );
    assert_eq!(cc.store.bypass_threshold, 0);
}

/// `threads = "one"` runs one worker inline whatever the cores; `io+workers` never runs
/// inline; `auto` runs inline only with one worker on a machine of at most two cores.
#[test]
fn threads_choose_the_inline_worker() {
    let parse = |t: &str, count: usize| {
        Config::from_toml(&format!("[workers]\nthreads = \"{t}\"\ncount = {count}\n")).unwrap()
    };
    assert_eq!(Workers::default().threads, Threads::Auto);
    for cores in [1, 2, 4, 64] {
        let one = parse("one", 0);
        assert!(one.runs_inline(cores));
        assert_eq!(one.worker_count(cores), 1);
        assert!(!parse("io+workers", 1).runs_inline(cores));
        assert!(!parse("auto", 2).runs_inline(cores));
        assert_eq!(
            parse("auto", 1).runs_inline(cores),
            cores <= AUTO_ONE_THREAD_MAX_CORES
        );
        assert_eq!(
            parse("auto", 0).runs_inline(cores),
            cores <= AUTO_ONE_THREAD_MAX_CORES
        );
        // Sharded: never inline, one loop per worker, one per core by default.
        let sharded = parse("sharded", 0);
        assert_eq!(sharded.thread_mode(cores), Threads::Sharded);
        assert!(!sharded.runs_inline(cores));
        assert_eq!(sharded.worker_count(cores), cores);
        assert_eq!(parse("sharded", 3).worker_count(cores), 3);
        assert_eq!(parse("auto", 2).thread_mode(cores), Threads::IoWorkers);
    }
    for t in [
        Threads::Auto,
        Threads::One,
        Threads::IoWorkers,
        Threads::Sharded,
    ] {
        assert_eq!(parse(t.name(), 1).workers.threads, t);
    }
}

#[test]
fn errors_are_one_line_and_name_the_problem() {
    let cases = [
        ("[cs]\ncapacty = 3\n", "capacty"),
        ("[workers]\ncount = \"x\"\n", "line 2"),
        ("[listen]\nudp = \"nowhere\"\n", "listen.udp"),
        ("[fib]\nm = 0\n", "fib.m"),
        (
            "[[route]]\nprefix = \"/a\"\nface = \"udp://1.2.3.4\"\n",
            "not one of",
        ),
        (
            "[[strategy]]\nprefix = \"/\"\nstrategy = \"self-learning\"\n",
            "strategy /: \"self-learning\": Strategy not registered",
        ),
        ("[[face]]\nuri = \"ether://x\"\n", "unsupported scheme"),
        (
            "[store]\nl2_path = \"/x\"\nl2_capacity = 3\n",
            "store.l2_capacity",
        ),
        ("[store]\nl2_path = \"/x\"\nlcp_p = 2.0\n", "store.lcp_p"),
        ("[store]\nadmission = \"write-around\"\n", "line 2"),
        (
            "[store]\nbloom = true\nbloom_fp_rate = 0.9\n",
            "store.bloom_fp_rate",
        ),
        (
            "[store]\nbypass_threshold = 1048577\n",
            "store.bypass_threshold: 1048577 is outside 0..=1048576",
        ),
        (
            "[store]\nnbcc_interval_ms = 0\n",
            "store.nbcc_interval_ms: 0 is outside 1..=60000",
        ),
        (
            "[store]\nnbcc_timeout_ms = 600001\n",
            "store.nbcc_timeout_ms: 600001 is outside 1..=600000",
        ),
        ("[store]\nnbcc = 1\n", "line 2"),
        ("[store]\nio = \"sometimes\"\n", "line 2"),
        ("[workers]\nmapping = \"random\"\n", "line 2"),
        ("[workers]\nthreads = \"two\"\n", "line 2"),
        (
            "[workers]\nthreads = \"one\"\ncount = 2\n",
            "workers.threads: \"one\" runs one worker, but workers.count is 2",
        ),
        (
            "[workers]\nspin_us = 1001\n",
            "workers.spin_us: 1001 is outside 0..=1000",
        ),
        ("[workers]\nspin_us = -1\n", "line 2"),
        (
            "[pit]\nmax_lifetime_ms = 999\n",
            "pit.max_lifetime_ms: 999 is outside 1000..=3600000",
        ),
        (
            "[pit]\nshare_watermark_percent = 0\n",
            "pit.share_watermark_percent: 0 is outside 1..=100",
        ),
        (
            "[pit]\nshare_watermark_percent = 101\n",
            "pit.share_watermark_percent",
        ),
        (
            "[faces]\nmax_faces = 100\n",
            "faces.max_on_demand_faces: 2048 is not below faces.max_faces (100)",
        ),
        (
            "[faces]\nmax_on_demand_per_host = 0\n",
            "faces.max_on_demand_per_host",
        ),
        (
            "[faces]\nreassembly_budget_bytes = 1000\n",
            "faces.reassembly_budget_bytes",
        ),
    ];
    for (text, needle) in cases {
        let e = Config::from_toml(text).unwrap_err();
        assert!(e.contains(needle), "{text:?} gave {e:?}");
        assert!(!e.contains('\n'), "{e:?}");
    }
}

#[test]
fn strategy_names() {
    use engine::fw::strategy::StrategyKind;
    for (s, k) in [
        ("best-route", StrategyKind::BestRoute),
        (
            "/localhost/nfd/strategy/best-route",
            StrategyKind::BestRoute,
        ),
        (
            "/localhost/nfd/strategy/best-route/v=5",
            StrategyKind::BestRoute,
        ),
        (
            "/localhost/nfd/strategy/multicast/%FD%05",
            StrategyKind::Multicast,
        ),
    ] {
        assert_eq!(parse_strategy(s), Some(k), "{s}");
    }
    assert_eq!(parse_strategy("asf"), Some(StrategyKind::Asf));
    assert_eq!(
        parse_strategy("/localhost/nfd/strategy/asf/v=5"),
        Some(StrategyKind::Asf)
    );
    assert_eq!(
        parse_strategy("/localhost/nfd/strategy/self-learning"),
        None
    );
}

#[test]
fn face_uris() {
    assert_eq!(
        parse_face_uri("udp4://127.0.0.1:6364").unwrap(),
        (true, "127.0.0.1:6364".parse().unwrap())
    );
    assert_eq!(
        parse_face_uri("tcp://127.0.0.1").unwrap(),
        (false, "127.0.0.1:6363".parse().unwrap())
    );
    assert_eq!(
        parse_face_uri("udp6://[::1]:7").unwrap(),
        (true, "[::1]:7".parse().unwrap())
    );
    assert!(parse_face_uri("udp6://127.0.0.1:7").is_err());
}

/// Errors about the scheme say so (management answers them 406, the others 400).
#[test]
fn face_uri_errors() {
    for (s, want) in [
        (
            "127.0.0.1:6363",
            "face URI \"127.0.0.1:6363\" lacks a scheme (udp:// or tcp://)",
        ),
        (
            "ether://x",
            "face URI \"ether://x\": unsupported scheme \"ether\"",
        ),
        (
            "unix:///run/x.sock",
            "face URI \"unix:///run/x.sock\": unsupported scheme \"unix\"",
        ),
        (
            "unix://x",
            "face URI \"unix://x\": unsupported scheme \"unix\"",
        ),
        (
            "udp6://127.0.0.1:7",
            "face URI \"udp6://127.0.0.1:7\": no address of the right family",
        ),
        (
            "udp://h:0",
            "face URI \"udp://h:0\": port must be a number from 1 to 65535",
        ),
    ] {
        assert_eq!(parse_face_uri(s).unwrap_err(), want);
    }
    assert!(!parse_face_uri("tcp://[::1").unwrap_err().contains("scheme"));
}

#[test]
fn overrides_win() {
    let mut c = Config::default();
    c.apply(&Overrides {
        unix: Some("/tmp/y".into()),
        workers: Some(5),
        ..Overrides::default()
    });
    assert_eq!(c.listen.unix, "/tmp/y");
    assert_eq!(c.worker_count(2), 5);
    assert_eq!(Config::default().worker_count(2), 1);
    assert_eq!(Config::default().worker_count(8), 7);
}
