//! `cascade peek`, `poke`, `put`, `get` and `ctl` as a user runs them, against a scripted fake
//! forwarder on a Unix socket: real processes, exit statuses, stdout and one-line errors. The
//! fake forwarder checks the management commands with the real server-side parser
//! (`mgmt::parse_command`) and answers with `mgmt::response_data` / `mgmt::dataset_segments`.
//! (Runs through the real daemon belong to the router's tests.)

use std::io::Write;
use std::os::unix::net::UnixListener;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};
use std::thread::{self, JoinHandle};
use std::time::Duration;

use client::{Face, Received};
use face::{LpHeaders, PitToken};
use wire::lp::Nack;
use wire::nfd::{ControlParameters, FaceStatus};
use wire::{Component, Data, DataView, Interest, InterestView, Limits, NackReason, Name};

fn name(s: &str) -> Name {
    Name::from_uri(s).unwrap()
}

/// A scratch directory, removed on drop.
struct TempDir(PathBuf);

impl TempDir {
    fn new() -> Self {
        let n = client::random_nonce();
        let d = std::env::temp_dir().join(format!(
            "cascade-tools-{}-{:02x}{:02x}{:02x}{:02x}",
            std::process::id(),
            n[0],
            n[1],
            n[2],
            n[3]
        ));
        std::fs::create_dir_all(&d).unwrap();
        TempDir(d)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A fake forwarder serving one connection: `handler` sees each packet and says whether to go
/// on. Its state comes back from `join`.
struct Fake<S> {
    _dir: TempDir,
    uri: String,
    thread: JoinHandle<S>,
}

fn fake<S: Send + 'static>(
    mut state: S,
    mut handler: impl FnMut(&mut S, &mut Face, Received) -> bool + Send + 'static,
) -> Fake<S> {
    let dir = TempDir::new();
    let path = dir.0.join("fwd.sock");
    let listener = UnixListener::bind(&path).unwrap();
    let thread = thread::spawn(move || {
        let (s, _) = listener.accept().unwrap();
        let mut f = Face::from_unix_stream(s, "fake");
        // The idle limit only ends a test whose client died; no result depends on it.
        while let Ok(Some(r)) = f.recv(Duration::from_secs(60)) {
            if !handler(&mut state, &mut f, r) {
                break;
            }
        }
        state
    });
    Fake {
        _dir: dir,
        uri: format!("unix://{}", path.display()),
        thread,
    }
}

fn cascade(args: &[&str], stdin: &[u8]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_cascade"))
        .args(args)
        .env_remove("NDN_CLIENT_TRANSPORT")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn cascade");
    child.stdin.take().unwrap().write_all(stdin).unwrap();
    child.wait_with_output().unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn one_line(o: &Output) -> String {
    let e = stderr(o);
    assert_eq!(e.matches('\n').count(), 1, "not one line: {e:?}");
    e
}

/// Nacks `i` with `reason`, as a forwarder does.
fn nack(face: &mut Face, i: &client::InterestPacket, reason: NackReason) {
    let h = LpHeaders {
        nack: Some(Nack {
            reason: Some(reason),
        }),
        pit_token: i.pit_token,
        ..LpHeaders::default()
    };
    face.send_packet(&i.wire, &h).unwrap();
}

fn signed(n: Name, content: &[u8], meta: Option<wire::MetaInfo>) -> Vec<u8> {
    let mut d = Data::new(n, content.to_vec());
    d.meta_info = meta;
    d.sign_digest_sha256();
    d.to_wire()
}

#[test]
fn peek_prints_content_and_exits_0() {
    let f = fake((), |_, face, r| {
        let Received::Interest(i) = r else {
            return true;
        };
        assert!(i.interest.can_be_prefix && i.interest.must_be_fresh);
        assert_eq!(i.interest.lifetime_ms, Some(1234));
        let d = signed(name("/a/b/c"), b"payload", None);
        face.put_data(&d, i.pit_token).unwrap();
        false
    });
    let uri = f.uri.clone();
    let o = cascade(
        &[
            "peek",
            "/a/b",
            "--can-be-prefix",
            "--must-be-fresh",
            "--lifetime",
            "1234",
            "--payload",
            "--transport",
            &uri,
        ],
        b"",
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(o.stdout, b"payload");
    f.thread.join().unwrap();
}

/// ndnpeek's Interest construction flags (-F, -H, -A, --app-params-file), its default output
/// (the whole Data packet), -v on stderr, and -w cutting the wait short of the lifetime.
#[test]
fn peek_builds_the_interest_and_prints_the_packet_as_ndnpeek() {
    // One peek against a forwarder that answers with a Data: its output, and the Interest.
    let peek = |extra: &[&str]| {
        let f = fake(None, |seen: &mut Option<Interest>, face, r| {
            let Received::Interest(i) = r else {
                return true;
            };
            let d = signed(i.interest.name.clone(), b"payload", None);
            face.put_data(&d, i.pit_token).unwrap();
            *seen = Some(i.interest);
            false
        });
        let mut a = vec![
            "peek",
            "/a",
            "-F",
            "/hint/one",
            "--fwhint",
            "/hint/two",
            "-H",
            "7",
        ];
        a.extend_from_slice(extra);
        a.extend_from_slice(&["--transport", &f.uri]);
        let o = cascade(&a, b"");
        (o, f.thread.join().unwrap().unwrap())
    };
    let dir = TempDir::new();
    let params = dir.0.join("params");
    std::fs::write(&params, b"from a file").unwrap();
    let (o, seen) = peek(&["-A", "aGVsbG8=", "-v"]);
    assert!(o.status.success(), "{}", stderr(&o));
    // The whole Data packet, as received.
    let d = DataView::decode(&o.stdout, &Limits::default()).unwrap();
    assert_eq!(d.content(), Some(&b"payload"[..]));
    let err = stderr(&o);
    assert!(err.starts_with("INTEREST: /a/params-sha256="), "{err}");
    assert!(err.contains("HopLimit=7") && err.contains("\nDATA: /a/params-sha256="));
    assert!(err.contains("\nRTT: ") && err.ends_with(" ms\n"), "{err}");
    let hints = vec![name("/hint/one"), name("/hint/two")];
    assert_eq!(seen.forwarding_hint, hints);
    assert_eq!(seen.hop_limit, Some(7));
    assert_eq!(seen.app_params.as_deref(), Some(&b"hello"[..]));
    let (o, seen) = peek(&["--app-params-file", params.to_str().unwrap(), "-p"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(o.stdout, b"payload");
    assert_eq!(seen.app_params.as_deref(), Some(&b"from a file"[..]));
    // Bad parameters: exit 2, before any connection.
    let o = cascade(&["peek", "/a", "-A", "not base64!"], b"");
    assert_eq!(o.status.code(), Some(2));
    assert!(one_line(&o).contains("invalid ApplicationParameters string"));
    let o = cascade(
        &["peek", "/a", "-A", "aGk=", "--app-params-file", "/x"],
        b"",
    );
    assert_eq!(o.status.code(), Some(2));

    // -w: the Interest keeps its 10 s lifetime, the wait ends after 50 ms.
    let f = fake(None, |lifetime: &mut Option<u64>, _, r| {
        if let Received::Interest(i) = r {
            *lifetime = i.interest.lifetime_ms;
        }
        true
    });
    let o = cascade(
        &[
            "peek",
            "/x",
            "-l",
            "10000",
            "-w",
            "50",
            "-v",
            "--transport",
            &f.uri,
        ],
        b"",
    );
    assert_eq!(o.status.code(), Some(3));
    assert!(stderr(&o).contains("TIMEOUT\n"));
    drop(o);
    assert_eq!(f.thread.join().unwrap(), Some(10_000));
}

#[test]
fn peek_nack_exits_4_and_timeout_exits_3() {
    let f = fake((), |_, face, r| {
        let Received::Interest(i) = r else {
            return true;
        };
        nack(face, &i, NackReason::Congestion);
        false
    });
    let o = cascade(&["peek", "/x", "--transport", &f.uri], b"");
    assert_eq!(o.status.code(), Some(4));
    // As ndnpeek 24.07: nothing on stderr without -v.
    assert_eq!(stderr(&o), "");
    // ndnpeek writes the NackHeader (0x0320) holding NackReason 50 (0x0321).
    assert_eq!(o.stdout, [0xfd, 0x03, 0x20, 5, 0xfd, 0x03, 0x21, 1, 50]);
    f.thread.join().unwrap();
    let f = fake((), |_, face, r| {
        let Received::Interest(i) = r else {
            return true;
        };
        nack(face, &i, NackReason::NoRoute);
        false
    });
    let o = cascade(&["peek", "/x", "-p", "--transport", &f.uri], b"");
    assert_eq!(o.status.code(), Some(4));
    assert_eq!(o.stdout, b"NoRoute\n");
    f.thread.join().unwrap();

    // A forwarder that never answers: the Interest's lifetime runs out.
    let f = fake((), |_, _, _| true);
    let o = cascade(
        &["peek", "/x", "--lifetime", "50", "--transport", &f.uri],
        b"",
    );
    assert_eq!(o.status.code(), Some(3));
    assert_eq!(stderr(&o), "");
    f.thread.join().unwrap();
}

#[test]
fn bad_arguments_exit_2_and_unreachable_forwarder_exits_1() {
    let o = cascade(&["peek", "/x", "--transport", "ftp://host"], b"");
    assert_eq!(o.status.code(), Some(2));
    assert!(one_line(&o).contains("unsupported scheme 'ftp'"));
    let o = cascade(
        &["peek", "/", "--transport", "unix:///nonexistent/x.sock"],
        b"",
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(one_line(&o).contains("has no components"));
    let o = cascade(
        &["ctl", "status", "--transport", "unix:///nonexistent/x.sock"],
        b"",
    );
    assert_eq!(o.status.code(), Some(1));
    assert!(one_line(&o).contains("cannot connect to unix:///nonexistent/x.sock"));
    let o = cascade(&["get", "/x", "-o", "/dev/null", "--init-cwnd", "0.5"], b"");
    assert_eq!(o.status.code(), Some(2));
    assert!(one_line(&o).contains("--init-cwnd"));
    let o = cascade(
        &["get", "/x", "-o", "/dev/null", "--fixed-window", "0"],
        b"",
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(one_line(&o).contains("--fixed-window must be at least 1"));
    let o = cascade(&["put", "/x", "/dev/null", "--segment-size", "9000"], b"");
    assert_eq!(o.status.code(), Some(2));
    assert!(one_line(&o).contains("8800-byte packet limit"));
    // ndnputchunks' and ndncatchunks' -N: typed only; ndnputchunks' -S as ndnpoke's.
    for tool in [
        &["put", "/x", "/dev/null"][..],
        &["get", "/x", "-o", "/dev/null"][..],
    ] {
        let o = cascade(&[tool, &["-N", "marker"]].concat(), b"");
        assert_eq!(o.status.code(), Some(2));
        assert!(one_line(&o).contains("not supported"));
        let o = cascade(&[tool, &["--naming-convention", "other"]].concat(), b"");
        assert_eq!(o.status.code(), Some(2));
    }
    let o = cascade(&["put", "/x", "/dev/null", "-S", "cert:/c"], b"");
    assert_eq!(o.status.code(), Some(1));
    assert!(one_line(&o).contains("cannot sign with cert:/c"));
}

/// Answers management commands: `rib/register` with 200 (parameters echoed), anything else
/// with 404; records every command. A `faces/query` dataset lists face 5 when asked for it.
fn management(
    cmds: &mut Vec<(String, String, ControlParameters)>,
    face: &mut Face,
    i: &client::InterestPacket,
) {
    let n = &i.interest.name;
    if n.len() == 5 && name("/localhost/nfd/faces/query").is_prefix_of(n) {
        let filter = wire::nfd::FaceQueryFilter::decode(&n.components[4].value).unwrap();
        let mut content = Vec::new();
        if filter.face_id == Some(5) {
            FaceStatus {
                face_id: 5,
                uri: "udp4://192.0.2.5:6363".into(),
                local_uri: "udp4://192.0.2.1:6363".into(),
                ..FaceStatus::default()
            }
            .encode(&mut content);
        }
        let segs = mgmt::dataset_segments(n, 1, &content, 8000);
        face.put_data(&segs[0], i.pit_token).unwrap();
        return;
    }
    let v = InterestView::decode(&i.wire, &Limits::default()).unwrap();
    let resp = match mgmt::parse_command(&v, true) {
        Ok(c) => {
            cmds.push((c.module.clone(), c.verb.clone(), c.params.clone()));
            if c.verb == "register" {
                mgmt::ok(c.params)
            } else {
                mgmt::not_found()
            }
        }
        Err(r) => r,
    };
    let d = mgmt::response_data(&v.name().to_name(), &resp);
    face.put_data(&d, i.pit_token).unwrap();
}

/// `cascade ctl ARGS` against a fake forwarder answering as [`management`]: its output and
/// the commands it received.
fn ctl_against_fake(args: &[&str]) -> (Output, Vec<(String, String, ControlParameters)>) {
    let f = fake(Vec::new(), |cmds, face, r| {
        let Received::Interest(i) = r else {
            return true;
        };
        management(cmds, face, &i);
        true
    });
    let o = cascade(&[&["ctl"], args, &["--transport", &f.uri]].concat(), b"");
    (o, f.thread.join().unwrap())
}

#[test]
fn ctl_commands_success_and_failure() {
    // nfdc's grammar: positional prefix and nexthop, then named arguments.
    let (o, cmds) = ctl_against_fake(&["route", "add", "/a", "5", "cost", "7"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(
        String::from_utf8(o.stdout).unwrap(),
        "route-add-accepted prefix=/a nexthop=5 origin=static cost=7 flags=child-inherit \
         expires=never\n"
    );
    assert_eq!(cmds.len(), 1);
    assert_eq!(
        (cmds[0].0.as_str(), cmds[0].1.as_str()),
        ("rib", "register")
    );
    assert_eq!(cmds[0].2.face_id, Some(5));
    assert_eq!(cmds[0].2.origin, Some(255));

    // The face exists; the forwarder refuses to destroy it: nfdc's message, status 1.
    let (o, cmds) = ctl_against_fake(&["face", "destroy", "5"]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(one_line(&o), "Error 404 when destroying face: Not found\n");
    assert_eq!(cmds[0].2.face_id, Some(5));
    // No such face: status 3, nothing sent.
    let (o, cmds) = ctl_against_fake(&["face", "destroy", "9"]);
    assert_eq!(o.status.code(), Some(3));
    assert_eq!(one_line(&o), "Face not found\n");
    assert!(cmds.is_empty());
}

#[test]
fn ctl_face_list_reassembles_a_segmented_dataset() {
    let mut content = Vec::new();
    for id in [1u64, 256, 300] {
        FaceStatus {
            face_id: id,
            uri: format!("udp4://192.0.2.{}:6363", id % 256),
            local_uri: "udp4://0.0.0.0:6363".into(),
            n_in_interests: id * 10,
            ..FaceStatus::default()
        }
        .encode(&mut content);
    }
    let segs = mgmt::dataset_segments(&name("/localhost/nfd/faces/list"), 9, &content, 40);
    assert!(segs.len() > 2);
    let f = fake(0usize, move |served, face, r| {
        let Received::Interest(i) = r else {
            return true;
        };
        let n = &i.interest.name;
        let seg = match n.components.last().and_then(client::face::segment_number) {
            Some(s) if n.len() == 6 => s as usize,
            _ => {
                assert!(i.interest.can_be_prefix && i.interest.must_be_fresh);
                0
            }
        };
        face.put_data(&segs[seg], i.pit_token).unwrap();
        *served += 1;
        *served < segs.len()
    });
    let o = cascade(
        &["ctl", "face", "list", "--json", "--transport", &f.uri],
        b"",
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let ids: Vec<u64> = String::from_utf8(o.stdout)
        .unwrap()
        .lines()
        .map(|l| {
            serde_json::from_str::<serde_json::Value>(l).unwrap()["face_id"]
                .as_u64()
                .unwrap()
        })
        .collect();
    assert_eq!(ids, vec![1, 256, 300]);
    f.thread.join().unwrap();
}

#[test]
fn poke_registers_and_serves_stdin_signed() {
    let f = fake((Vec::new(), None), |(cmds, got), face, r| match r {
        Received::Interest(i) => {
            management(cmds, face, &i);
            // Registered: now ask for the Data, with a PitToken to be echoed.
            let mut ask = Interest::new(name("/poke/me"), [1, 2, 3, 4]);
            ask.must_be_fresh = true;
            let h = LpHeaders {
                pit_token: PitToken::new(b"tk"),
                ..LpHeaders::default()
            };
            face.send_packet(&ask.to_wire(), &h).unwrap();
            true
        }
        Received::Data(d) => {
            *got = Some(d);
            false
        }
        Received::Nack(_) => true,
    });
    let o = cascade(
        &[
            "poke",
            "/poke/me",
            "--freshness",
            "1000",
            "--transport",
            &f.uri,
        ],
        b"stdin content",
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let (cmds, got) = f.thread.join().unwrap();
    assert_eq!(cmds[0].2.name, Some(name("/poke/me")));
    let d = got.expect("Data");
    assert_eq!(d.name, name("/poke/me"));
    assert_eq!(d.content(), b"stdin content");
    assert_eq!(d.freshness_ms, Some(1000));
    assert!(d.digest_valid);
    assert_eq!(d.pit_token, PitToken::new(b"tk"));
}

#[test]
fn poke_timeout_exits_3_saying_nothing_as_ndnpoke() {
    // Registered, then no Interest comes: ndnpoke 24.07 exits 3 with nothing on stderr.
    let f = fake(Vec::new(), |cmds, face, r| {
        if let Received::Interest(i) = r {
            management(cmds, face, &i);
        }
        true
    });
    let o = cascade(
        &["poke", "/quiet", "-w", "100", "--transport", &f.uri],
        b"x",
    );
    assert_eq!(o.status.code(), Some(3));
    assert_eq!(stderr(&o), "");
    let cmds = f.thread.join().unwrap();
    assert_eq!(cmds[0].2.name, Some(name("/quiet")));
}

/// ndnpoke's -u (the Data at once, no registration), -v (the Interests, the registration, the
/// Data sent, on stderr) and -S (ndn-cxx's SigningInfo strings).
#[test]
fn poke_unsolicited_verbose_and_signing_info_as_ndnpoke() {
    // -u: the first packet the forwarder sees is the Data.
    let f = fake(None, |got: &mut Option<client::DataPacket>, _, r| {
        if let Received::Data(d) = r {
            *got = Some(d);
        }
        false
    });
    let o = cascade(
        &["poke", "/u/data", "-u", "-v", "--transport", &f.uri],
        b"pushed",
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).starts_with("DATA: Name: /u/data\n"),
        "{}",
        stderr(&o)
    );
    let d = f
        .thread
        .join()
        .unwrap()
        .expect("the Data, before any Interest");
    assert_eq!(
        (d.name.clone(), d.content()),
        (name("/u/data"), &b"pushed"[..])
    );
    // -v: an Interest the Data cannot satisfy (MustBeFresh, no freshness), then one it can.
    let f = fake(Vec::new(), |cmds, face, r| match r {
        Received::Interest(i) => {
            management(cmds, face, &i);
            let mut fresh = Interest::new(name("/v/data"), [1, 1, 1, 1]);
            fresh.must_be_fresh = true;
            face.send_packet(&fresh.to_wire(), &LpHeaders::default())
                .unwrap();
            let plain = Interest::new(name("/v/data"), [2, 2, 2, 2]);
            face.send_packet(&plain.to_wire(), &LpHeaders::default())
                .unwrap();
            true
        }
        _ => false,
    });
    let sha = "id:/localhost/identity/digest-sha256";
    let o = cascade(
        &["poke", "/v/data", "-v", "-S", sha, "--transport", &f.uri],
        b"x",
    );
    assert!(o.status.success(), "{}", stderr(&o));
    f.thread.join().unwrap();
    let lines: Vec<String> = stderr(&o).lines().map(str::to_string).collect();
    assert_eq!(lines[0], "Prefix registration successful");
    assert!(lines[1].starts_with("INTEREST: /v/data?MustBeFresh&Nonce=01010101"));
    assert_eq!(lines[2], "Interest cannot be satisfied");
    assert!(lines[3].starts_with("INTEREST: /v/data?Nonce=02020202"));
    assert_eq!(lines[4], "DATA: Name: /v/data");
    // -S naming a signer Cascade has no key for: 1; not a SigningInfo: 2; -u with -w: 2.
    for (info, status) in [
        ("id:/my/identity", 1),
        ("key:/k", 1),
        ("nonsense", 2),
        ("x:/y", 2),
    ] {
        let o = cascade(&["poke", "/s", "-S", info], b"");
        assert_eq!(o.status.code(), Some(status), "{info}: {}", stderr(&o));
    }
    let o = cascade(&["poke", "/s", "-u", "-w", "10"], b"");
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn put_once_serves_every_segment_then_exits() {
    let dir = TempDir::new();
    let file = dir.0.join("in.bin");
    let content: Vec<u8> = (0..2500u32).map(|i| (i % 253) as u8).collect();
    std::fs::write(&file, &content).unwrap();
    // After registering, the fake asks for the prefix (discovery), then for each next segment.
    let f = fake((Vec::new(), Vec::new()), |(cmds, got), face, r| {
        let ask = |face: &mut Face, n: Name, cbp: bool| {
            let mut i = Interest::new(n, client::random_nonce());
            i.can_be_prefix = cbp;
            i.must_be_fresh = cbp;
            let h = LpHeaders {
                pit_token: PitToken::new(&[token_for(cbp)]),
                ..LpHeaders::default()
            };
            face.send_packet(&i.to_wire(), &h).unwrap();
        };
        match r {
            Received::Interest(i) => {
                management(cmds, face, &i);
                ask(face, name("/put/file"), true);
                true
            }
            Received::Data(d) => {
                let seg = d.segment().unwrap();
                let last = d.final_segment().unwrap();
                got.push(d.clone());
                if seg < last {
                    let next = d
                        .name
                        .prefix(d.name.len() - 1)
                        .with(Component::segment(seg + 1));
                    ask(face, next, false);
                    true
                } else {
                    false
                }
            }
            Received::Nack(_) => false,
        }
    });
    let o = cascade(
        &[
            "put",
            "/put/file",
            file.to_str().unwrap(),
            "--segment-size",
            "1000",
            "--version",
            "77",
            "--once",
            "-v",
            "--transport",
            &f.uri,
        ],
        b"",
    );
    assert!(o.status.success(), "{}", stderr(&o));
    // -v: each Interest and the Data answering it, as ndnputchunks' verbose output.
    let err = stderr(&o);
    let verbose: Vec<&str> = err
        .lines()
        .filter(|l| !l.starts_with("cascade put:"))
        .collect();
    assert_eq!(verbose.len(), 6, "{err}");
    assert!(verbose[0].starts_with("Interest: /put/file?CanBePrefix&MustBeFresh&Nonce="));
    assert_eq!(verbose[1], "Data: Name: /put/file/v=77/seg=0");
    assert!(verbose[4].starts_with("Interest: /put/file/v=77/seg=2?Nonce="));
    assert_eq!(verbose[5], "Data: Name: /put/file/v=77/seg=2");
    let (_, got) = f.thread.join().unwrap();
    assert_eq!(got.len(), 3);
    let mut joined = Vec::new();
    for (k, d) in got.iter().enumerate() {
        assert_eq!(d.name.to_string(), format!("/put/file/v=77/seg={k}"));
        assert!(d.digest_valid);
        assert!(d.pit_token.is_some());
        let v = DataView::decode(&d.wire, &Limits::default()).unwrap();
        assert_eq!(v.final_block_id().unwrap().to_string(), "seg=2");
        joined.extend_from_slice(d.content());
    }
    assert_eq!(joined, content);
}

/// PitToken the fake puts on discovery (1) and segment (2) Interests.
fn token_for(discovery: bool) -> u8 {
    if discovery {
        1
    } else {
        2
    }
}

/// Runs `cascade get /get/file -o OUT <extra>` against a fake serving 13 segments (RDR
/// metadata first); returns the run, the content served, and the scratch directory.
fn get_file(extra: &[&str]) -> (Output, Vec<u8>, TempDir) {
    let dir = TempDir::new();
    let out = dir.0.join("out.bin");
    let content: Vec<u8> = (0..50_000u32).map(|i| (i * 7 % 251) as u8).collect();
    let segs = client::segment_data(&name("/get/file"), 5, &content, 4000, 1000);
    let n = segs.len();
    let f = fake(0usize, move |answered, face, r| {
        let Received::Interest(i) = r else {
            return true;
        };
        // RDR first: the metadata names the version, then segments are asked for by name.
        if client::rdr::is_metadata_interest(&i.interest, &name("/get/file")) {
            let meta = client::rdr::metadata_data(&name("/get/file"), &name("/get/file/v=5"), 1);
            face.put_data(&meta, i.pit_token).unwrap();
            return true;
        }
        let seg = if i.interest.can_be_prefix {
            0
        } else {
            client::face::segment_number(i.interest.name.components.last().unwrap()).unwrap()
                as usize
        };
        face.put_data(&segs[seg], i.pit_token).unwrap();
        *answered += 1;
        *answered < n
    });
    let mut args = vec!["get", "/get/file", "-o", out.to_str().unwrap()];
    args.extend_from_slice(extra);
    args.extend_from_slice(&["--transport", &f.uri]);
    let o = cascade(&args, b"");
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(std::fs::read(&out).unwrap(), content);
    f.thread.join().unwrap();
    (o, content, dir)
}

#[test]
fn get_writes_the_file_and_reports_json_stats() {
    let (o, _, _dir) = get_file(&["--json"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["name"], "/get/file/v=5");
    assert_eq!(v["segments"], 13);
    assert_eq!(v["bytes"], 50_000);
    assert_eq!(v["rtt_ms"]["samples"], 12);
}

/// The rows of a tab-separated log after its header, as numbers.
fn log_rows(path: &std::path::Path, header: &str) -> Vec<Vec<f64>> {
    let text = std::fs::read_to_string(path).unwrap();
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some(header));
    lines
        .map(|l| l.split('\t').map(|x| x.parse().unwrap()).collect())
        .collect()
}

#[test]
fn get_logs_cwnd_and_rtt_as_ndncatchunks_for_both_adaptive_pipelines() {
    for pipeline in ["cubic", "aimd"] {
        let dir = TempDir::new();
        let (cwnd, rtt) = (dir.0.join("cwnd.tsv"), dir.0.join("rtt.tsv"));
        let args = [
            "-p",
            pipeline,
            "--log-cwnd",
            cwnd.to_str().unwrap(),
            "--log-rtt",
            rtt.to_str().unwrap(),
        ];
        get_file(&args);
        // No loss: each of the 12 segments the pipeline fetched grew the window once.
        let rows = log_rows(&cwnd, "time\tcwndsize");
        assert_eq!(rows.len(), 12, "{pipeline}");
        for w in rows.windows(2) {
            assert!(
                w[0][0] <= w[1][0] && w[0][1] < w[1][1],
                "{pipeline}: {rows:?}"
            );
        }
        assert!(rows.iter().all(|r| r.len() == 2 && r[0] >= 0.0));
        // One RTT sample per segment sent once: segment, rtt, rttvar, srtt, rto (ms).
        let rows = log_rows(&rtt, "segment\trtt\trttvar\tsrtt\trto");
        let mut segs: Vec<u64> = rows.iter().map(|r| r[0] as u64).collect();
        segs.sort();
        assert_eq!(segs, (1..=12).collect::<Vec<u64>>(), "{pipeline}");
        // The RTO is at least the 200 ms minimum, and at least srtt.
        assert!(rows
            .iter()
            .all(|r| r.len() == 5 && r[4] >= 200.0 && r[4] >= r[3]));
    }
    // A file that cannot be created: one line naming the option, exit 4 (ndncatchunks'),
    // before any forwarder is asked.
    let nowhere = ["--transport", "unix:///nonexistent/nfd.sock"];
    let o = cascade(
        &[
            &[
                "get",
                "/x",
                "-o",
                "-",
                "--log-rtt",
                "/nonexistent/dir/rtt.tsv",
            ][..],
            &nowhere,
        ]
        .concat(),
        b"",
    );
    assert_eq!(o.status.code(), Some(4));
    assert!(
        one_line(&o).starts_with("cascade get: --log-rtt: cannot write /nonexistent/dir/rtt.tsv")
    );
    // The output too.
    let o = cascade(
        &[
            &["get", "/x", "-o", "/nonexistent/dir/out.bin"][..],
            &nowhere,
        ]
        .concat(),
        b"",
    );
    assert_eq!(o.status.code(), Some(4));
    assert!(one_line(&o).starts_with("cascade get: cannot create /nonexistent/dir/out.bin"));
    // An unreachable forwarder is no file error, and leaves no file.
    let dir = TempDir::new();
    let out = dir.0.join("out.bin");
    let o = cascade(
        &[&["get", "/x", "-o", out.to_str().unwrap()][..], &nowhere].concat(),
        b"",
    );
    assert_eq!(o.status.code(), Some(1));
    assert!(!out.exists());
}

#[test]
fn get_failure_leaves_no_partial_file() {
    let dir = TempDir::new();
    let out = dir.0.join("out.bin");
    let f = fake((), |_, face, r| {
        let Received::Interest(i) = r else {
            return true;
        };
        // The RDR metadata Interest, then the CanBePrefix discovery it falls back to.
        nack(face, &i, NackReason::NoRoute);
        true
    });
    let o = cascade(
        &[
            "get",
            "/none",
            "-o",
            out.to_str().unwrap(),
            "--transport",
            &f.uri,
        ],
        b"",
    );
    // ndncatchunks exits 1 when a Nack ends the fetch (4 is its status for a file).
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(one_line(&o), "cascade get: Nack (NoRoute) for /none\n");
    assert!(!out.exists());
    f.thread.join().unwrap();
}

/// Runs `cascade get NAME -o OUT` against a producer of `/app/v=1` (3 segments, RDR metadata
/// first) that answers with a Data of ContentType NACK (an application-level Nack) the
/// metadata Interest when `nack_metadata`, and every segment from `nack_from` on. Returns the
/// run and whether the output file exists.
fn get_app_nacked(uri: &str, nack_metadata: bool, nack_from: u64) -> (Output, bool) {
    let dir = TempDir::new();
    let out = dir.0.join("out.bin");
    let meta = |content_type, final_seg: Option<u64>| wire::MetaInfo {
        content_type: Some(content_type),
        freshness_ms: Some(1000),
        final_block_id: final_seg.map(Component::segment),
    };
    let f = fake((), move |_, face, r| {
        let Received::Interest(i) = r else {
            return true;
        };
        let n = i.interest.name.clone();
        let d = if client::rdr::is_metadata_interest(&i.interest, &name("/app")) {
            if nack_metadata {
                let n = n.with(Component::version(7)).with(Component::segment(0));
                signed(n, b"", Some(meta(3, None)))
            } else {
                client::rdr::metadata_data(&name("/app"), &name("/app/v=1"), 7)
            }
        } else {
            let seg = client::face::segment_number(n.components.last().unwrap()).unwrap();
            match seg >= nack_from {
                true => signed(n, b"gone", Some(meta(3, Some(2)))),
                false => signed(n, b"segment", Some(meta(0, Some(2)))),
            }
        };
        // The client exits at the first application Nack with later segments' Interests in
        // flight: answering them may find the connection closed, which ends the serving.
        match face.put_data(&d, i.pit_token) {
            Ok(()) => true,
            Err(client::Error::Closed) => false,
            Err(e) => panic!("answering an Interest: {e}"),
        }
    });
    let args = [
        "get",
        uri,
        "-o",
        out.to_str().unwrap(),
        "--transport",
        &f.uri,
    ];
    let o = cascade(&args, b"");
    f.thread.join().unwrap();
    let exists = out.exists();
    (o, exists)
}

#[test]
fn get_application_nack_exits_3_and_in_discovery_1_as_ndncatchunks() {
    // ndncatchunks 24.07: a segment Data of ContentType NACK ends the fetch with status 3.
    let (o, exists) = get_app_nacked("/app", false, 1);
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    let e = one_line(&o);
    assert!(
        e.starts_with("cascade get: application Nack: /app/v=1/seg="),
        "{e}"
    );
    assert!(
        e.ends_with("(ContentType NACK, 4 bytes of content)\n"),
        "{e}"
    );
    assert!(!exists);
    // The first segment too, asked for by exact name when the name has a version.
    let (o, exists) = get_app_nacked("/app/v=1", false, 0);
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    assert_eq!(
        one_line(&o),
        "cascade get: application Nack: /app/v=1/seg=0 (ContentType NACK, 4 bytes of content)\n"
    );
    assert!(!exists);
    // A metadata Data of ContentType NACK: ndncatchunks' discovery refuses a metadata packet
    // that is not a BLOB, status 1; no fallback discovery follows.
    let (o, exists) = get_app_nacked("/app", true, u64::MAX);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert_eq!(
        one_line(&o),
        "cascade get: protocol error: invalid metadata packet /app/32=metadata/v=7/seg=0: \
         ContentType NACK (an application Nack)\n"
    );
    assert!(!exists);
    // The same producer without Nacks serves the whole object.
    let (o, exists) = get_app_nacked("/app", false, u64::MAX);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(exists);
}

#[test]
fn put_nacks_what_it_cannot_satisfy_and_ignores_what_is_not_its_own() {
    // ndnputchunks 24.07: an Interest its filters take but no segment satisfies gets a Nack
    // without a reason; one for another version goes unanswered.
    let dir = TempDir::new();
    let file = dir.0.join("in.bin");
    std::fs::write(&file, b"one segment").unwrap();
    let f = fake(Vec::new(), |got: &mut Vec<String>, face, r| {
        let ask = |face: &mut Face, uri: &str, cbp: bool| {
            let mut i = Interest::new(name(uri), client::random_nonce());
            i.can_be_prefix = cbp;
            face.send_packet(&i.to_wire(), &LpHeaders::default())
                .unwrap();
        };
        match r {
            Received::Interest(i) => {
                management(&mut Vec::new(), face, &i);
                ask(face, "/put/n/v=5/seg=9", false);
                ask(face, "/put/n/v=6/seg=0", false);
                ask(face, "/put/n/32=metadata", false);
                ask(face, "/put/n/v=5/seg=0", false);
                true
            }
            Received::Nack(n) => {
                let reason = n.reason.map_or("none".into(), |r| format!("{r:?}"));
                got.push(format!("nack {} {reason}", n.interest.name));
                true
            }
            Received::Data(d) => {
                got.push(format!("data {}", d.name));
                false
            }
        }
    });
    let o = cascade(
        &[
            "put",
            "/put/n",
            file.to_str().unwrap(),
            "--version",
            "5",
            "--once",
            "--transport",
            &f.uri,
        ],
        b"",
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("4 Interests, 1 Data sent (0 RDR metadata), 2 Nacked, 1 unanswered"),
        "{}",
        stderr(&o)
    );
    let got = f.thread.join().unwrap();
    assert_eq!(
        got,
        [
            "nack /put/n/v=5/seg=9 none",
            "nack /put/n/32=metadata none",
            "data /put/n/v=5/seg=0"
        ]
    );
}

#[test]
fn every_tool_prints_its_version_as_ndn_tools_do() {
    // ndn-tools print `<program> <version>` for -V/--version and exit 0; nfdc its bare version.
    let v = env!("CARGO_PKG_VERSION");
    for tool in ["peek", "poke", "put", "get", "ping", "pingserver", "decode"] {
        for flag in ["-V", "--version"] {
            let o = cascade(&[tool, flag], b"");
            assert!(o.status.success(), "{tool} {flag}: {}", stderr(&o));
            let out = String::from_utf8_lossy(&o.stdout);
            assert_eq!(out, format!("cascade-{tool} {v}\n"), "{tool} {flag}");
        }
    }
    let o = cascade(&["ctl", "-V"], b"");
    assert_eq!(String::from_utf8_lossy(&o.stdout), format!("{v}\n"));
}

#[test]
fn ping_counts_data_nacks_and_timeouts_as_ndnping_and_sigquit_prints_a_summary() {
    // Probe 20 gets Data, 21 a Nack, 22 nothing (a timeout), 23 Data; SIGQUIT after the first
    // reply prints ndnping's short summary and the run goes on.
    let f = fake((), |_, face, r| {
        let Received::Interest(i) = r else {
            return true;
        };
        let seq = i.interest.name.components.last().unwrap().value.clone();
        match &seq[..] {
            b"21" => nack(face, &i, NackReason::NoRoute),
            b"22" => {}
            _ => face
                .put_data(&signed(i.interest.name.clone(), b"", None), i.pit_token)
                .unwrap(),
        }
        seq != b"23"
    });
    let mut child = Command::new(env!("CARGO_BIN_EXE_cascade"))
        .args([
            "ping", "/p", "-c", "4", "-i", "300", "-o", "200", "-n", "20",
        ])
        .args(["--transport", &f.uri])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = std::io::BufReader::new(child.stdout.take().unwrap());
    let mut lines = Vec::new();
    use std::io::BufRead;
    while lines.len() < 2 {
        let mut l = String::new();
        assert!(stdout.read_line(&mut l).unwrap() > 0, "{lines:?}");
        lines.push(l);
    }
    assert_eq!(lines[0], "PING /p\n");
    assert!(
        lines[1].starts_with("content from /p: seq=20 time="),
        "{lines:?}"
    );
    // SAFETY: kill only sends a signal to the child this test started.
    unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGQUIT) };
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut stdout, &mut rest).unwrap();
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(1), "{rest}");
    assert!(
        rest.lines().any(
            |l| l.starts_with("1/1 packets, 0% lost, 0% nacked, min/avg/max/mdev = ")
                || l.starts_with("1/2 packets")
        ),
        "{rest}"
    );
    assert!(rest.contains("nack from /p: seq=21 time="), "{rest}");
    assert!(rest.contains(" reason=NoRoute\n"), "{rest}");
    assert!(rest.contains("timeout from /p: seq=22\n"), "{rest}");
    assert!(rest.contains("content from /p: seq=23 time="), "{rest}");
    assert!(
        rest.contains("4 packets transmitted, 2 received, 1 nacked, 25% lost, 25% nacked, time "),
        "{rest}"
    );
    f.thread.join().unwrap();
}
