//! End to end: ASF chosen with parameters through management, listed by `strategy-choice/list`,
//! forwarding to the faster of two upstreams once it has measured them.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use client::control::Controller;
use client::face::{Outcome, Received};
use client::transport::TransportUri;
use client::Face;
use router::{Config, Router};
use wire::nfd::ControlParameters;
use wire::{Data, Interest, Name};

fn n(uri: &str) -> Name {
    Name::from_uri(uri).unwrap()
}

fn connect(r: &Router) -> Face {
    Face::connect(&TransportUri::Unix(r.bound().unix.clone().unwrap())).unwrap()
}

/// A producer of `/asf` registered from its own face at `cost`, answering every Interest after
/// `delay` with one byte of content, `tag`, until `stop`.
fn producer(
    r: &Router,
    cost: u64,
    delay: Duration,
    tag: u8,
    stop: Arc<AtomicBool>,
) -> std::thread::JoinHandle<()> {
    let mut face = connect(r);
    let p = ControlParameters {
        name: Some(n("/asf")),
        cost: Some(cost),
        ..ControlParameters::default()
    };
    Controller::new(&mut face)
        .command("rib", "register", &p)
        .unwrap();
    std::thread::spawn(move || {
        while !stop.load(Ordering::Relaxed) {
            if let Ok(Some(Received::Interest(ip))) = face.recv(Duration::from_millis(100)) {
                std::thread::sleep(delay);
                let mut d = Data::new(ip.interest.name.clone(), vec![tag]);
                d.sign_digest_sha256();
                face.put_data(&d.to_wire(), ip.pit_token).unwrap();
            }
        }
    })
}

#[test]
fn asf_set_through_management_forwards_to_the_faster_upstream() {
    let dir = std::env::temp_dir().join(format!("cascade-asf-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let mut c = Config::default();
    c.listen.unix = dir.join("r.sock").display().to_string();
    c.listen.tcp = String::new();
    c.listen.udp = String::new();
    c.listen.websocket = String::new();
    c.workers.threads = router::config::Threads::One;
    let r = Router::start(&c).unwrap();

    let mut consumer = connect(&r);
    let mut ctl = Controller::new(&mut consumer);
    let strategy = "/localhost/nfd/strategy/asf/v=5/probing-interval~1000/max-timeouts~2";
    let set = |s: &str| ControlParameters {
        name: Some(n("/asf")),
        strategy: Some(n(s)),
        ..ControlParameters::default()
    };
    let ok = ctl
        .command("strategy-choice", "set", &set(strategy))
        .unwrap();
    assert_eq!(ok.strategy, Some(n(strategy)));
    // NFD's answer to a bad parameter: 409 with the strategy's words.
    let bad = "/localhost/nfd/strategy/asf/v=5/probing-interval~10";
    let err = ctl
        .command_response("strategy-choice", "set", &set(bad))
        .unwrap();
    assert_eq!(err.status_code, 409, "{}", err.status_text);
    assert!(err.status_text.contains("Probing interval must be >= 1000"));
    let listed = ctl.strategy_choices().unwrap();
    let asf = listed.iter().find(|s| s.name == n("/asf")).unwrap();
    assert_eq!(asf.strategy, n(strategy));

    // The slow upstream is the cheaper: best-route would use it for ever.
    let stop = Arc::new(AtomicBool::new(false));
    let slow = producer(&r, 1, Duration::from_millis(40), 0xaa, stop.clone());
    let fast = producer(&r, 10, Duration::ZERO, 0xbb, stop.clone());

    // Interests one after the other until the last 20 Data all came from the fast upstream
    // (ASF probes it within 5 s, then prefers it; a probe a second goes to the slow one).
    let deadline = Instant::now() + Duration::from_secs(30);
    let (mut tags, mut i) = (Vec::new(), 0);
    while Instant::now() < deadline {
        i += 1;
        let mut interest = Interest::new(n(&format!("/asf/{i}")), (i as u32).to_be_bytes());
        interest.lifetime_ms = Some(2000);
        if let Ok(Outcome::Data(d)) = consumer.express(&interest) {
            tags.push(d.wire[d.content_range.start]);
        }
        let tail = &tags[tags.len().saturating_sub(20)..];
        if tags.len() >= 40 && tail.iter().filter(|&&t| t == 0xbb).count() >= 19 {
            break;
        }
    }
    stop.store(true, Ordering::Relaxed);
    slow.join().unwrap();
    fast.join().unwrap();
    let tail = &tags[tags.len().saturating_sub(20)..];
    let fast_share = tail.iter().filter(|&&t| t == 0xbb).count();
    assert!(
        fast_share >= 19,
        "the fast upstream answered {fast_share} of the last 20"
    );
    r.stop_handle().stop();
    r.join();
    let _ = std::fs::remove_dir_all(&dir);
}
