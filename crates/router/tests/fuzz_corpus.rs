//! Replays the fuzz corpus of the parsers a peer reaches beyond the `wire` decoders (the stream
//! framer, NDNLPv2 reassembly, the dispatcher's classifier, management commands, the L2 file)
//! on the stable toolchain, through the same checks as the cargo-fuzz targets
//! (`fuzz/checks_peer.rs`; the replay itself is `fuzz/replay.rs`).

#[path = "../../../fuzz/checks.rs"]
mod checks;
#[path = "../../../fuzz/checks_peer.rs"]
mod checks_peer;
#[path = "../../../fuzz/replay.rs"]
mod replay;

#[test]
fn every_target_has_a_seed_corpus_and_every_corpus_a_check() {
    let fuzz = replay::fuzz_dir(env!("CARGO_MANIFEST_DIR"));
    replay::assert_seed_corpora(&fuzz, checks_peer::TARGETS);
    // A corpus directory without a check would be silently skipped by the replays.
    for entry in std::fs::read_dir(fuzz.join("corpus")).expect("fuzz/corpus") {
        let name = entry.expect("fuzz/corpus entry").file_name();
        let name = name.to_string_lossy();
        assert!(
            checks::TARGETS.contains(&name.as_ref())
                || checks_peer::TARGETS.contains(&name.as_ref()),
            "fuzz/corpus/{name} has no check in fuzz/checks.rs or fuzz/checks_peer.rs"
        );
    }
}

#[test]
fn corpus_replays_cleanly() {
    let fuzz = replay::fuzz_dir(env!("CARGO_MANIFEST_DIR"));
    replay::assert_replays_cleanly(&fuzz, checks_peer::TARGETS, checks_peer::check);
    checks_peer::cleanup();
}

/// Writes the seed corpus of the targets above (each `fuzz/corpus/<target>/` emptied and
/// rewritten from real packets and files, so that the seeds are reproducible):
///
/// ```text
/// cargo test -p cascade-router --test fuzz_corpus -- --ignored write_seed_corpus
/// ```
#[test]
#[ignore = "writes fuzz/corpus; run by hand to regenerate the seeds"]
fn write_seed_corpus() {
    let fuzz = replay::fuzz_dir(env!("CARGO_MANIFEST_DIR"));
    for (target, seeds) in seeds::all(&fuzz) {
        let dir = fuzz.join("corpus").join(target);
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        for (name, bytes) in seeds {
            assert!(checks_peer::check(target, &bytes), "{target}");
            std::fs::write(dir.join(name), bytes).unwrap();
        }
    }
    checks_peer::cleanup();
}

mod seeds {
    use std::path::Path;

    use wire::lp::Nack;
    use wire::nfd::ControlParameters;
    use wire::{Component, Data, Interest, LpPacket, NackReason, Name};

    /// (file name, bytes) of a target's seeds.
    pub type Seeds = Vec<(String, Vec<u8>)>;

    fn name(uri: &str) -> Name {
        Name::from_uri(uri).unwrap()
    }

    fn interest(uri: &str) -> Vec<u8> {
        let mut i = Interest::new(name(uri), [1, 2, 3, 4]);
        i.lifetime_ms = Some(4000);
        i.to_wire()
    }

    fn data(uri: &str, content: usize) -> Vec<u8> {
        let mut d = Data::new(name(uri), vec![0x5a; content]);
        d.sign_digest_sha256();
        d.to_wire()
    }

    fn lp(f: impl FnOnce(&mut LpPacket)) -> Vec<u8> {
        let mut p = LpPacket::default();
        f(&mut p);
        p.to_wire()
    }

    fn seeds(list: Vec<(&str, Vec<u8>)>) -> Seeds {
        list.into_iter().map(|(n, b)| (n.to_string(), b)).collect()
    }

    fn cat(parts: &[&[u8]]) -> Vec<u8> {
        parts.concat()
    }

    /// Every target's seeds.
    pub fn all(fuzz: &Path) -> Vec<(&'static str, Seeds)> {
        vec![
            ("stream", stream()),
            ("reassembly", reassembly()),
            ("dispatch", dispatch(fuzz)),
            ("command", command()),
            ("l2", l2()),
            ("l2file", l2file()),
        ]
    }

    /// Header [max selector, read chunk, piece seed], then a byte stream.
    fn stream() -> Seeds {
        let (i, d) = (interest("/a/b"), data("/a/b", 1000));
        let l = lp(|p| {
            p.pit_token = Some(vec![1, 2, 3]);
            p.fragment = Some(interest("/x"));
        });
        let mut oversize = vec![0x06, 0xfd, 0x27, 0x10];
        oversize.extend_from_slice(&[0; 16]);
        seeds(vec![
            ("three-packets", cat(&[&[3, 15, 7], &i, &d, &l])),
            ("small-chunks", cat(&[&[3, 0, 1], &d, &i])),
            ("truncated-tail", cat(&[&[3, 63, 9], &i, &d[..d.len() / 2]])),
            ("oversize-for-max-300", cat(&[&[1, 20, 3], &i, &d])),
            ("announces-10000", cat(&[&[3, 10, 5], &i, &oversize])),
            ("zero-type", cat(&[&[2, 5, 5], &i, &[0x00, 0x01, 0x00]])),
        ])
    }

    /// Header [budget, capacity, max], then operations (see `check_reassembly`).
    fn reassembly() -> Seeds {
        // Structured pieces: op 0/1 (reassembler A/B), then [remote, base, index, count, len].
        let piece =
            |op: u8, base: u8, index: u8, count: u8, len: u8| vec![op, 0, base, index, count, len];
        let in_order: Vec<u8> = [
            vec![3, 2, 1],
            piece(0, 1, 0, 2, 10),
            piece(0, 1, 1, 2, 10),
            piece(0, 1, 2, 2, 3),
        ]
        .concat();
        let reverse: Vec<u8> = [
            vec![0, 0, 0],
            piece(1, 7, 2, 2, 5),
            piece(1, 7, 0, 2, 5),
            piece(1, 7, 1, 2, 5),
        ]
        .concat();
        // Pieces of two packets interleaved, time passing (op 4: +byte×8 ms), an expiry (op 6).
        let timeouts: Vec<u8> = [
            vec![15, 1, 1],
            piece(0, 2, 0, 3, 40),
            piece(0, 3, 0, 1, 40),
            vec![4, 70],
            vec![6],
            piece(0, 2, 1, 3, 40),
            piece(0, 3, 1, 1, 40),
        ]
        .concat();
        // Raw LpPackets (op 2: [len, bytes]) from a real fragmenter, MTU 200.
        let mut frag = face::Fragmenter::new(200, 77).unwrap();
        let mut raw = vec![8, 3, 1];
        let mut pieces = Vec::new();
        frag.fragment(&data("/r/s", 450), &face::LpHeaders::default(), &mut pieces)
            .unwrap();
        for p in pieces.iter().rev() {
            raw.push(2);
            raw.push(p.len() as u8);
            raw.extend_from_slice(p);
        }
        // Many first fragments of 64 over a small budget.
        let mut flood = vec![0, 7, 1];
        for base in 0..40 {
            flood.extend(piece(base % 2, base, 0, 63, 255));
        }
        seeds(vec![
            ("in-order", in_order),
            ("reverse-order", reverse),
            ("timeouts", timeouts),
            ("fragmenter-mtu-200", raw),
            ("first-fragments-over-budget", flood),
        ])
    }

    /// Packets the I/O thread classifies: the `packet` target's seeds, and routing cases.
    fn dispatch(fuzz: &Path) -> Seeds {
        let mut out = seeds(vec![
            ("mgmt-localhost", interest("/localhost/nfd/faces/list")),
            ("mgmt-localhop", interest("/localhop/nfd/rib/register")),
            ("chunk-interest", {
                let n = name("/video/v=1").with(Component::segment(12));
                Interest::new(n, [5; 4]).to_wire()
            }),
            (
                "data-our-token",
                lp(|p| {
                    p.pit_token = Some(vec![0xCA, 0x5C, 1]);
                    p.fragment = Some(data("/a/b", 10));
                }),
            ),
            (
                "nack-of-interest",
                lp(|p| {
                    p.nack = Some(Nack {
                        reason: Some(NackReason::NoRoute),
                    });
                    p.fragment = Some(interest("/a/c"));
                }),
            ),
            (
                "nack-of-data",
                lp(|p| {
                    p.nack = Some(Nack { reason: None });
                    p.fragment = Some(data("/a/c", 1));
                }),
            ),
            (
                "fragment-1-of-3",
                lp(|p| {
                    p.sequence = Some(10);
                    p.frag_index = Some(1);
                    p.frag_count = Some(3);
                    p.fragment = Some(vec![1, 2, 3]);
                }),
            ),
            ("idle", lp(|_| {})),
        ]);
        for path in replay_files(&fuzz.join("corpus/packet")) {
            let name = format!("packet-{}", path.file_name().unwrap().to_string_lossy());
            out.push((name, std::fs::read(path).unwrap()));
        }
        out
    }

    fn replay_files(dir: &Path) -> Vec<std::path::PathBuf> {
        super::replay::files(dir).unwrap()
    }

    /// Command Interests, signed in either form or not at all.
    fn command() -> Seeds {
        let params = ControlParameters {
            name: Some(name("/example/app")),
            face_id: Some(0),
            origin: Some(0),
            cost: Some(10),
            flags: Some(1),
            ..ControlParameters::default()
        };
        let v03 = |module, verb| {
            client::control::command_interest(
                module,
                verb,
                &params,
                1_700_000_000_000,
                [7; 8],
                [1; 4],
            )
            .to_wire()
        };
        // The older form: ControlParameters, then timestamp, nonce, SignatureInfo, SignatureValue.
        let mut cp = Vec::new();
        params.encode(&mut cp);
        let mut si = Vec::new();
        wire::SignatureInfo {
            signature_type: wire::data::signature_type::DIGEST_SHA256,
            ..wire::SignatureInfo::default()
        }
        .encode(&mut si, wire::tt::SIGNATURE_INFO);
        let mut sv = Vec::new();
        wire::tlv::write_tlv(&mut sv, wire::tt::SIGNATURE_VALUE, &[0xcd; 32]);
        let old = Interest::new(
            name("/localhost/nfd/rib/unregister")
                .with(Component::generic(cp.clone()))
                .with(Component::number(8, 1_700_000_000_000))
                .with(Component::generic(vec![1, 2, 3, 4, 5, 6, 7, 8]))
                .with(Component::generic(si))
                .with(Component::generic(sv)),
            [2; 4],
        )
        .to_wire();
        let unsigned = Interest::new(
            name("/localhost/nfd/faces/create").with(Component::generic(cp)),
            [3; 4],
        )
        .to_wire();
        seeds(vec![
            ("v03-rib-register", v03("rib", "register")),
            ("v03-strategy-set", v03("strategy-choice", "set")),
            ("v03-cs-config", v03("cs", "config")),
            ("old-signed-rib-unregister", old),
            ("unsigned-faces-create", unsigned),
            ("not-a-command", interest("/localhost/nfd/rib")),
        ])
    }

    /// Superblocks, slots and chunk names.
    fn l2() -> Seeds {
        use store::layout::{SlotHeader, Superblock};
        let sb = Superblock {
            slot_bytes: 8704,
            batch: 10,
            extents: 1000,
            hash_key: [7; 16],
            file_id: 42,
        };
        let mut block = vec![0u8; 4096];
        sb.encode(&mut block);
        block.truncate(64); // the rest is zeros and not read
        let n = name("/video/v=1").with(Component::segment(3));
        let mut nv = Vec::new();
        for c in &n.components {
            c.encode(&mut nv);
        }
        let payload = data("/video/v=1/seg=3", 20);
        let h = SlotHeader {
            batch_key: 0x1234,
            segment: 3,
            seq: 9,
            name_len: nv.len() as u16,
            payload_len: payload.len() as u32,
        };
        let mut slot = vec![0u8; 64 + nv.len() + payload.len()];
        h.write(&mut slot, &nv, &payload);
        let mut plain = Vec::new();
        for c in &name("/a/b").components {
            c.encode(&mut plain);
        }
        seeds(vec![
            ("superblock", block),
            ("slot", slot),
            ("chunk-name-segmented", nv),
            ("chunk-name-plain", plain),
        ])
    }

    /// Damage to the template L2 file: [flags, truncation, slot from, slot to], then
    /// (offset, xor) patches or an index file.
    fn l2file() -> Seeds {
        seeds(vec![
            ("intact-with-index", vec![0, 0, 0, 0]),
            ("rebuild", vec![1, 0, 0, 0]),
            ("slot-copied-rebuild", vec![9, 0, 1, 6]),
            ("slot-copied-with-index", vec![8, 0, 2, 13]),
            ("truncated-half", vec![3, 128, 0, 0]),
            (
                "flips-in-slots",
                vec![1, 0, 0, 0, 0x10, 0x48, 0xff, 0x14, 0x80, 0x01],
            ),
            (
                "garbage-index",
                cat(&[&[4, 0, 0, 0], b"CASCIDX1", &[0; 30]]),
            ),
            ("index-patched", vec![16, 0, 0, 0, 0, 30, 0x01, 0, 40, 0x80]),
        ])
    }
}
