//! The HTTP endpoint of a real router: Interests from a UDP peer show in `/status.json` and in
//! `/metrics` (on their face, in the forwarder's counters, in the workers'), with the static
//! route and the strategy choices; on a router of one thread and on a sharded one of two.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream, UdpSocket};
use std::time::{Duration, Instant};

use router::{Config, Router};
use wire::{Interest, Name};

fn get(addr: SocketAddr, path: &str) -> String {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(15))).unwrap();
    write!(s, "GET {path} HTTP/1.1\r\nHost: test\r\n\r\n").unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).unwrap();
    assert!(out.starts_with("HTTP/1.1 200 OK\r\n"), "{out}");
    out.split_once("\r\n\r\n").unwrap().1.to_owned()
}

fn sample(text: &str, series: &str) -> Option<u64> {
    text.lines()
        .find_map(|l| l.strip_prefix(series)?.strip_prefix(' ')?.parse().ok())
}

fn run(threads: router::Threads, workers: usize) {
    let upstream = UdpSocket::bind("127.0.0.1:0").unwrap();
    let up_uri = format!("udp4://{}", upstream.local_addr().unwrap());
    let toml = format!(
        "[listen]\nunix = \"\"\ntcp = \"\"\nudp = \"127.0.0.1:0\"\nwebsocket = \"\"\n[http]\nlisten = \"127.0.0.1:0\"\n\
         [[face]]\nuri = \"{up_uri}\"\n[[route]]\nprefix = \"/up\"\nface = \"{up_uri}\"\ncost = 7\n"
    );
    let mut c = Config::from_toml(&toml).unwrap();
    c.workers.count = workers;
    c.workers.threads = threads;
    let r = Router::start(&c).unwrap();
    let http = r.http_addr().expect("the endpoint listens");
    let peer = UdpSocket::bind("127.0.0.1:0").unwrap();
    let udp = r.bound().udp.unwrap();
    for i in 0..10 {
        let name = Name::from_uri(&format!("/up/{i}")).unwrap();
        peer.send_to(&Interest::new(name, [i as u8; 4]).to_wire(), udp)
            .unwrap();
    }
    // Wait until the ten Interests went upstream.
    upstream
        .set_read_timeout(Some(Duration::from_secs(5)))
        .unwrap();
    let mut buf = [0u8; 9000];
    for _ in 0..10 {
        upstream.recv_from(&mut buf).expect("forwarded upstream");
    }
    let t0 = Instant::now();
    let status: serde_json::Value = loop {
        let v: serde_json::Value = serde_json::from_str(&get(http, "/status.json")).unwrap();
        // A sharded router's loops take in what their mirrors of a UDP face sent from time to
        // time: wait for the ten sends too.
        let settled = v["general"]["n_in_interests"] == 10 && v["general"]["n_out_interests"] == 10;
        if settled || t0.elapsed() > Duration::from_secs(10) {
            break v;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    assert_eq!(status["general"]["n_in_interests"], 10, "{status}");
    assert_eq!(status["workers"].as_array().unwrap().len(), workers);
    let faces = status["faces"].as_array().unwrap();
    let up = faces
        .iter()
        .find(|f| f["remote"] == up_uri.as_str())
        .unwrap();
    // What the endpoint reports is what the dataset reports: the ten sends, a sharded
    // router's mirrors' included once taken in.
    let out = status["general"]["n_out_interests"].as_u64().unwrap();
    assert_eq!(up["n_out_interests"], out, "{status}");
    assert_eq!(out, 10, "{status}");
    assert_eq!(up["persistency"], "permanent");
    let route = status["fib"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["prefix"] == "/up");
    assert_eq!(route.unwrap()["nexthops"][0]["cost"], 7);
    assert_eq!(status["strategies"][0]["prefix"], "/");
    let metrics = get(http, "/metrics");
    assert!(metrics.ends_with("# EOF\n"));
    assert_eq!(
        sample(&metrics, "cascade_forwarder_in_interests_total"),
        Some(10)
    );
    assert_eq!(
        sample(&metrics, "cascade_forwarder_out_interests_total"),
        Some(out)
    );
    let id = &up["face_id"];
    let series = format!("cascade_face_out_interests_total{{face=\"{id}\",remote=\"{up_uri}\"}}");
    assert_eq!(sample(&metrics, &series), Some(out), "{metrics}");
    let engines: u64 = (0..workers)
        .map(|w| {
            sample(
                &metrics,
                &format!("cascade_worker_in_interests_total{{worker=\"{w}\"}}"),
            )
            .unwrap()
        })
        .sum();
    assert_eq!(engines, 10);
    // The peer's datagrams made one on-demand face (the face tables' bounds count it).
    let created = "cascade_face_table_bounds_total{event=\"on_demand_created\"}";
    assert_eq!(sample(&metrics, created), Some(1), "{metrics}");
    let batches = "cascade_worker_batch_seconds_count{worker=\"0\"}";
    assert!(sample(&metrics, batches).unwrap() > 0, "{metrics}");
    r.stop_handle().stop();
    r.join();
}

#[test]
fn a_one_thread_router_reports_its_traffic_over_http() {
    run(router::Threads::One, 1);
}

#[test]
fn a_sharded_router_reports_every_worker_over_http() {
    run(router::Threads::Sharded, 2);
}
