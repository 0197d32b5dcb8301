//! Interop vectors: packets built with the `wire` builders, for cross-checking against an
//! independent NDN implementation (python-ndn, in `tests/interop/test_python_ndn.py`).
//!
//! Prints one JSON object per line: `label`, `kind` (`interest`, `data`, `nack` or `lp`), `hex`
//! (the encoded packet) and the fields the packet is expected to carry, derived from the builder
//! inputs (not from decoding the output). Names are given both as Cascade's NDN URI (`name`) and
//! as the hex of the Name TLV (`name_tlv`), so a reader can compare the bytes as well as the URI
//! form. The JSON is formatted by hand to keep the crate free of extra dependencies.
//!
//! Run with `cargo run -q -p cascade-wire --example interop_vectors`.

use std::fmt::Write as _;

use wire::data::{content_type, signature_type};
use wire::lp::Nack;
use wire::{
    sha256, tlv, tt, Component, Data, Interest, KeyLocator, LpPacket, MetaInfo, NackReason, Name,
    SignatureInfo,
};

/// HMAC key shared with the Python side for the HmacWithSha256 vectors.
const HMAC_KEY: &[u8] = b"cascade-interop-hmac-key";

/// A JSON object under construction: keys in insertion order, values already rendered as JSON.
#[derive(Default)]
struct Obj(Vec<(&'static str, String)>);

impl Obj {
    fn s(mut self, k: &'static str, v: &str) -> Self {
        self.0.push((k, json_str(v)));
        self
    }

    fn n(mut self, k: &'static str, v: u64) -> Self {
        self.0.push((k, v.to_string()));
        self
    }

    fn b(mut self, k: &'static str, v: bool) -> Self {
        self.0.push((k, v.to_string()));
        self
    }

    fn raw(mut self, k: &'static str, v: String) -> Self {
        self.0.push((k, v));
        self
    }

    fn opt_n(self, k: &'static str, v: Option<u64>) -> Self {
        match v {
            Some(v) => self.n(k, v),
            None => self,
        }
    }

    fn render(&self) -> String {
        let mut out = String::from("{");
        for (i, (k, v)) in self.0.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            let _ = write!(out, "{}:{v}", json_str(k));
        }
        out.push('}');
        out
    }
}

fn json_str(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for ch in s.chars() {
        match ch {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if u32::from(c) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn json_array(items: impl IntoIterator<Item = String>) -> String {
    format!("[{}]", items.into_iter().collect::<Vec<_>>().join(","))
}

fn hex(b: &[u8]) -> String {
    b.iter()
        .fold(String::with_capacity(b.len() * 2), |mut s, x| {
            let _ = write!(s, "{x:02x}");
            s
        })
}

fn uri(s: &str) -> Name {
    match Name::from_uri(s) {
        Ok(n) => n,
        Err(e) => panic!("bad URI in a vector: {e}"),
    }
}

fn is_params_digest(c: &Component) -> bool {
    u32::from(c.typ) == tt::PARAMETERS_SHA256_DIGEST
}

/// The ApplicationParameters .. InterestSignatureValue elements, as the spec lays them out.
fn interest_tail(i: &Interest) -> Vec<u8> {
    let mut tail = Vec::new();
    if let Some(p) = &i.app_params {
        tlv::write_tlv(&mut tail, tt::APPLICATION_PARAMETERS, p);
        if let Some(si) = &i.signature_info {
            si.encode(&mut tail, tt::INTEREST_SIGNATURE_INFO);
        }
        if let Some(sv) = &i.signature_value {
            tlv::write_tlv(&mut tail, tt::INTEREST_SIGNATURE_VALUE, sv);
        }
    }
    tail
}

/// The name an Interest goes out with: with parameters, its ParametersSha256DigestComponent is
/// the SHA-256 of everything from ApplicationParameters to the end (packet format v0.3).
fn final_interest_name(i: &Interest) -> Name {
    if i.app_params.is_none() {
        return i.name.clone();
    }
    let digest = Component::parameters_digest(sha256(&[&interest_tail(i)]));
    let mut name = i.name.clone();
    match name.components.iter_mut().find(|c| is_params_digest(c)) {
        Some(c) => *c = digest,
        None => name.push(digest),
    }
    name
}

/// The portion an Interest signature covers: the name components except the parameters digest,
/// then ApplicationParameters and InterestSignatureInfo.
fn interest_signed_portion(i: &Interest) -> Vec<u8> {
    let mut covered = Vec::new();
    for c in i.name.components.iter().filter(|c| !is_params_digest(c)) {
        c.encode(&mut covered);
    }
    if let Some(p) = &i.app_params {
        tlv::write_tlv(&mut covered, tt::APPLICATION_PARAMETERS, p);
    }
    if let Some(si) = &i.signature_info {
        si.encode(&mut covered, tt::INTEREST_SIGNATURE_INFO);
    }
    covered
}

/// The portion a Data signature covers: Name, MetaInfo, Content and SignatureInfo, that is the
/// Data TLV-VALUE without its final SignatureValue element.
fn data_signed_portion(d: &Data) -> Vec<u8> {
    let wire = d.to_wire();
    let header = match tlv::read_var_number(&wire, 0)
        .and_then(|(_, tn)| Ok(tn + tlv::read_var_number(&wire[tn..], tn)?.1))
    {
        Ok(h) => h,
        Err(e) => panic!("the builder wrote a bad Data TLV: {e}"),
    };
    let mut sv = Vec::new();
    tlv::write_tlv(&mut sv, tt::SIGNATURE_VALUE, &d.signature_value);
    wire[header..wire.len() - sv.len()].to_vec()
}

fn hmac_sha256(data: &[u8]) -> Vec<u8> {
    let key = ring::hmac::Key::new(ring::hmac::HMAC_SHA256, HMAC_KEY);
    ring::hmac::sign(&key, data).as_ref().to_vec()
}

fn signature_info_fields(mut o: Obj, si: &SignatureInfo, value: &[u8]) -> Obj {
    o = o.n("signature_type", si.signature_type);
    match &si.key_locator {
        Some(KeyLocator::Name(n)) => {
            o = o.s("key_locator", &n.to_string());
        }
        Some(KeyLocator::KeyDigest(d)) => {
            o = o.s("key_digest", &hex(d));
        }
        None => {}
    }
    o = o.opt_n("signature_time", si.time_ms);
    o = o.opt_n("signature_seq_num", si.seq_num);
    if let Some(n) = &si.nonce {
        o = o.s("signature_nonce", &hex(n));
    }
    o.s("signature_value", &hex(value))
}

fn interest_obj(i: &Interest, signature_valid: Option<bool>) -> Obj {
    let name = final_interest_name(i);
    let mut o = Obj::default()
        .s("kind", "interest")
        .s("hex", &hex(&i.to_wire()))
        .s("name", &name.to_string())
        .s("name_tlv", &hex(&name.to_wire()))
        .b("can_be_prefix", i.can_be_prefix)
        .b("must_be_fresh", i.must_be_fresh)
        .opt_n("nonce", i.nonce.map(|n| u64::from(u32::from_be_bytes(n))))
        .opt_n("lifetime_ms", i.lifetime_ms)
        .opt_n("hop_limit", i.hop_limit.map(u64::from))
        .raw(
            "forwarding_hint",
            json_array(i.forwarding_hint.iter().map(|n| json_str(&n.to_string()))),
        );
    if let Some(p) = &i.app_params {
        o = o.s("app_params", &hex(p));
    }
    if let (Some(si), Some(sv)) = (&i.signature_info, &i.signature_value) {
        o = signature_info_fields(o, si, sv);
    }
    if let Some(v) = signature_valid {
        o = o.b("signature_valid", v);
    }
    o
}

fn data_obj(d: &Data, signature_valid: Option<bool>) -> Obj {
    let wire = d.to_wire();
    let mut o = Obj::default()
        .s("kind", "data")
        .s("hex", &hex(&wire))
        .s("name", &d.name.to_string())
        .s("name_tlv", &hex(&d.name.to_wire()))
        .b("meta_info", d.meta_info.is_some());
    if let Some(m) = &d.meta_info {
        o = o
            .opt_n("content_type", m.content_type)
            .opt_n("freshness_ms", m.freshness_ms);
        if let Some(c) = &m.final_block_id {
            let mut t = Vec::new();
            c.encode(&mut t);
            o = o
                .s("final_block_id", &c.to_string())
                .s("final_block_id_tlv", &hex(&t));
        }
    }
    if let Some(c) = &d.content {
        o = o.s("content", &hex(c));
    }
    o = signature_info_fields(o, &d.signature_info, &d.signature_value);
    if let Some(v) = signature_valid {
        o = o.b("signature_valid", v);
    }
    o.s("implicit_digest", &hex(&sha256(&[&wire])))
}

fn lp_obj(kind: &str, lp: &LpPacket, fragment: Option<Obj>) -> Obj {
    let mut o = Obj::default().s("kind", kind).s("hex", &hex(&lp.to_wire()));
    if let Some(n) = lp.nack {
        o = o.b("nack", true);
        o = match n.reason {
            Some(r) => o.n("nack_reason_code", r.code()),
            None => o.raw("nack_reason_code", "null".into()),
        };
    }
    if let Some(t) = &lp.pit_token {
        o = o.s("pit_token", &hex(t));
    }
    o = o
        .opt_n("sequence", lp.sequence)
        .opt_n("frag_index", lp.frag_index)
        .opt_n("frag_count", lp.frag_count)
        .opt_n("hop_count", lp.hop_count)
        .opt_n("incoming_face_id", lp.incoming_face_id)
        .opt_n("next_hop_face_id", lp.next_hop_face_id)
        .opt_n("cache_policy", lp.cache_policy)
        .opt_n("congestion_mark", lp.congestion_mark)
        .opt_n("tx_sequence", lp.tx_sequence);
    if !lp.acks.is_empty() {
        o = o.raw("acks", json_array(lp.acks.iter().map(u64::to_string)));
    }
    if lp.non_discovery {
        o = o.b("non_discovery", true);
    }
    if let Some(p) = &lp.prefix_announcement {
        o = o.s("prefix_announcement", &hex(p));
    }
    if let Some(f) = &lp.fragment {
        o = o.s("fragment_hex", &hex(f));
    }
    if let Some(f) = fragment {
        o = o.raw("fragment", f.render());
    }
    o
}

fn labelled(label: &str, o: Obj) -> Obj {
    let mut l = Obj::default().s("label", label);
    l.0.extend(o.0);
    l
}

fn interests() -> Vec<(&'static str, Interest, Option<bool>)> {
    let mut v = vec![
        (
            "interest_minimal",
            Interest::new(uri("/a"), [1, 2, 3, 4]),
            None,
        ),
        (
            "interest_every_field",
            Interest {
                name: uri("/ndn/edu/ucla/cascade/v=1/seg=0"),
                can_be_prefix: true,
                must_be_fresh: true,
                forwarding_hint: vec![uri("/ndn/hint/one"), uri("/ndn/hint/two/seq=5")],
                nonce: Some([0xDE, 0xAD, 0xBE, 0xEF]),
                lifetime_ms: Some(12_345),
                hop_limit: Some(64),
                ..Interest::default()
            },
            None,
        ),
        (
            "interest_no_nonce_no_lifetime",
            Interest {
                name: uri("/x/y"),
                ..Interest::default()
            },
            None,
        ),
        (
            "interest_big_numbers",
            Interest {
                name: uri("/seg=18446744073709551615/t=1700000000000000/off=65536/v=256"),
                nonce: Some([0xFF; 4]),
                lifetime_ms: Some(1 << 40),
                hop_limit: Some(0),
                ..Interest::default()
            },
            None,
        ),
        (
            "interest_typed_components",
            Interest::new(
                uri("/32=metadata/300=x/65535=y/9=odd/%00%01%FE%FF/hello%20world/~_.-/seq=7")
                    .with(Component::implicit_digest([0xAB; 32])),
                [0, 0, 0, 1],
            ),
            None,
        ),
        (
            "interest_app_params",
            Interest {
                app_params: Some(b"hello world".to_vec()),
                ..Interest::new(uri("/app/params"), [9, 9, 9, 9])
            },
            None,
        ),
        (
            "interest_app_params_empty",
            Interest {
                app_params: Some(Vec::new()),
                lifetime_ms: Some(1000),
                ..Interest::new(uri("/app/empty"), [7, 7, 7, 7])
            },
            None,
        ),
        (
            "interest_params_digest_mid_name",
            Interest {
                name: uri("/pre")
                    .with(Component::parameters_digest([0; 32]))
                    .with(Component::generic(*b"post")),
                can_be_prefix: true,
                app_params: Some(vec![1, 2, 3]),
                ..Interest::default()
            },
            None,
        ),
    ];
    let mut signed = Interest {
        app_params: Some(b"command".to_vec()),
        signature_info: Some(SignatureInfo {
            signature_type: signature_type::DIGEST_SHA256,
            nonce: Some(vec![1, 2, 3, 4, 5, 6, 7, 8]),
            time_ms: Some(1_700_000_000_000),
            seq_num: Some(42),
            ..SignatureInfo::default()
        }),
        ..Interest::new(uri("/signed/cmd"), [0x10, 0x20, 0x30, 0x40])
    };
    signed.signature_value = Some(sha256(&[&interest_signed_portion(&signed)]).to_vec());
    v.push(("interest_signed_digest", signed, Some(true)));
    let mut hmac = Interest {
        app_params: Some(vec![0xAA; 16]),
        signature_info: Some(SignatureInfo {
            signature_type: signature_type::HMAC_WITH_SHA256,
            key_locator: Some(KeyLocator::Name(uri("/hmac/KEY/%01"))),
            ..SignatureInfo::default()
        }),
        must_be_fresh: true,
        ..Interest::new(uri("/signed/hmac"), [1, 1, 2, 3])
    };
    hmac.signature_value = Some(hmac_sha256(&interest_signed_portion(&hmac)));
    v.push(("interest_signed_hmac", hmac, Some(true)));
    v.push((
        "interest_large_params",
        Interest {
            app_params: Some((0..3000u32).map(|i| (i % 251) as u8).collect()),
            hop_limit: Some(255),
            ..Interest::new(uri("/bulk/upload"), [5, 4, 3, 2])
        },
        None,
    ));
    v
}

fn sample_data() -> Data {
    let mut d = Data::new(uri("/video/v=1/seg=0"), b"Hello, NDN!".to_vec());
    d.meta_info = Some(MetaInfo {
        content_type: Some(content_type::BLOB),
        freshness_ms: Some(10_000),
        final_block_id: Some(Component::segment(0)),
    });
    d.sign_digest_sha256();
    d
}

/// A ValidityPeriod value: NotBefore (254) and NotAfter (255), ISO 8601 basic timestamps.
fn validity_period() -> Vec<u8> {
    let mut v = Vec::new();
    tlv::write_tlv(&mut v, 254, b"20240101T000000");
    tlv::write_tlv(&mut v, 255, b"20340101T000000");
    v
}

fn datas() -> Vec<(&'static str, Data, Option<bool>)> {
    let mut v = vec![("data_digest_meta", sample_data(), Some(true))];

    let mut d = Data {
        name: uri("/empty"),
        ..Data::default()
    };
    d.sign_digest_sha256();
    v.push(("data_no_meta_no_content", d, Some(true)));

    let mut d = Data::new(uri("/e/%00"), Vec::new());
    d.meta_info = Some(MetaInfo::default());
    d.sign_digest_sha256();
    v.push(("data_empty_meta_empty_content", d, Some(true)));

    let mut d = Data::new(uri("/ndn/site/KEY/%01%02/self/v=5"), vec![0x30; 91]);
    d.meta_info = Some(MetaInfo {
        content_type: Some(content_type::KEY),
        freshness_ms: Some(3_600_000),
        final_block_id: Some(Component::generic(*b"last")),
    });
    d.signature_info = SignatureInfo {
        signature_type: signature_type::SHA256_WITH_ECDSA,
        key_locator: Some(KeyLocator::Name(uri("/ndn/site/KEY/%01%02"))),
        validity_period: Some(validity_period()),
        ..SignatureInfo::default()
    };
    d.signature_value = vec![0x5A; 71];
    v.push(("data_ecdsa_key_locator_name", d, None));

    let mut d = Data::new(uri("/link/object"), vec![1, 2, 3]);
    d.meta_info = Some(MetaInfo {
        content_type: Some(content_type::LINK),
        freshness_ms: Some(0),
        final_block_id: None,
    });
    d.signature_info = SignatureInfo {
        signature_type: signature_type::SHA256_WITH_RSA,
        key_locator: Some(KeyLocator::KeyDigest(vec![0xC3; 32])),
        ..SignatureInfo::default()
    };
    d.signature_value = vec![0x11; 256];
    v.push(("data_rsa_key_digest", d, None));

    let mut d = Data::new(uri("/hmac/data/seq=3"), b"authenticated".to_vec());
    d.meta_info = Some(MetaInfo {
        content_type: Some(content_type::NACK),
        ..MetaInfo::default()
    });
    d.signature_info = SignatureInfo {
        signature_type: signature_type::HMAC_WITH_SHA256,
        key_locator: Some(KeyLocator::Name(uri("/hmac/KEY/%01"))),
        ..SignatureInfo::default()
    };
    d.signature_value = vec![0; 32];
    d.signature_value = hmac_sha256(&data_signed_portion(&d));
    v.push(("data_hmac", d, Some(true)));

    let mut d = Data::new(
        uri("/big/object/v=1700000000000/seg=5"),
        (0..6000u32)
            .map(|i| (i * 7 % 256) as u8)
            .collect::<Vec<u8>>(),
    );
    d.meta_info = Some(MetaInfo {
        content_type: Some(1000),
        freshness_ms: Some(1 << 33),
        final_block_id: Some(Component::segment(5)),
    });
    d.sign_digest_sha256();
    v.push(("data_large_content", d, Some(true)));

    let mut d = sample_data();
    d.signature_value[0] ^= 0xFF;
    v.push(("data_digest_corrupted", d, Some(false)));

    // Components whose URI form python-ndn 0.5.2 writes differently from the NDN URI scheme:
    // the empty generic component, period-only components, an empty typed component and a
    // Segment whose value is not a NonNegativeInteger (3 bytes).
    let name = uri("/a")
        .with(Component::generic(Vec::new()))
        .with(Component::generic(*b"."))
        .with(Component::generic(*b"..."))
        .with(Component {
            typ: tt::KEYWORD as u16,
            value: Vec::new(),
        })
        .with(Component {
            typ: tt::SEGMENT as u16,
            value: vec![1, 2, 3],
        });
    let mut d = Data::new(name, b"x".to_vec());
    d.sign_digest_sha256();
    v.push(("data_uri_divergent_components", d, Some(true)));
    v
}

fn nacked_interest() -> Interest {
    Interest {
        can_be_prefix: true,
        lifetime_ms: Some(2000),
        hop_limit: Some(10),
        ..Interest::new(uri("/nacked/prefix/v=2"), [0xCA, 0xFE, 0xBA, 0xBE])
    }
}

fn lps() -> Vec<(&'static str, &'static str, LpPacket, Option<Obj>)> {
    let mut v = Vec::new();
    let i = nacked_interest();
    for (label, reason) in [
        ("nack_congestion", NackReason::Congestion),
        ("nack_duplicate", NackReason::Duplicate),
        ("nack_no_route", NackReason::NoRoute),
        ("nack_unknown_reason_7", NackReason::Other(7)),
    ] {
        v.push((
            label,
            "nack",
            LpPacket::nack(i.to_wire(), reason),
            Some(interest_obj(&i, None)),
        ));
    }
    v.push((
        "nack_without_reason",
        "nack",
        LpPacket {
            nack: Some(Nack { reason: None }),
            fragment: Some(i.to_wire()),
            ..LpPacket::default()
        },
        Some(interest_obj(&i, None)),
    ));
    let pi = Interest {
        app_params: Some(b"params".to_vec()),
        ..Interest::new(uri("/nacked/with/params"), [1, 2, 3, 5])
    };
    v.push((
        "nack_no_route_pit_token_congestion",
        "nack",
        LpPacket {
            pit_token: Some(vec![0xCA, 0xFE]),
            congestion_mark: Some(1),
            ..LpPacket::nack(pi.to_wire(), NackReason::NoRoute)
        },
        Some(interest_obj(&pi, None)),
    ));
    let d = sample_data();
    v.push((
        "lp_data_pit_token",
        "lp",
        LpPacket {
            pit_token: Some(vec![1, 2, 3, 4, 5, 6, 7, 8]),
            congestion_mark: Some(1),
            incoming_face_id: Some(300),
            fragment: Some(d.to_wire()),
            ..LpPacket::default()
        },
        Some(data_obj(&d, Some(true))),
    ));
    let fi = Interest::new(uri("/lp/interest"), [4, 3, 2, 1]);
    v.push((
        "lp_interest_next_hop",
        "lp",
        LpPacket {
            next_hop_face_id: Some(7),
            cache_policy: Some(1),
            tx_sequence: Some(42),
            non_discovery: true,
            fragment: Some(fi.to_wire()),
            ..LpPacket::default()
        },
        Some(interest_obj(&fi, None)),
    ));
    v.push((
        "lp_all_headers",
        "lp",
        LpPacket {
            sequence: Some(0x0102_0304_0506_0708),
            hop_count: Some(3),
            pit_token: Some(vec![0xEE; 32]),
            incoming_face_id: Some(1 << 40),
            cache_policy: Some(1),
            congestion_mark: Some(3),
            acks: vec![11, 12],
            tx_sequence: Some(9),
            non_discovery: true,
            prefix_announcement: Some(vec![0x06, 0x00]),
            fragment: Some(d.to_wire()),
            ..LpPacket::default()
        },
        Some(data_obj(&d, Some(true))),
    ));
    v.push((
        "lp_idle_ack",
        "lp",
        LpPacket {
            acks: vec![5],
            ..LpPacket::default()
        },
        None,
    ));
    let whole = d.to_wire();
    v.push((
        "lp_fragmented",
        "lp",
        LpPacket {
            sequence: Some(100),
            frag_index: Some(0),
            frag_count: Some(2),
            fragment: Some(whole[..whole.len() / 2].to_vec()),
            ..LpPacket::default()
        },
        None,
    ));
    v
}

fn main() {
    let mut lines = Vec::new();
    for (label, i, valid) in interests() {
        lines.push(labelled(label, interest_obj(&i, valid)));
    }
    for (label, d, valid) in datas() {
        lines.push(labelled(label, data_obj(&d, valid)));
    }
    for (label, kind, lp, fragment) in lps() {
        lines.push(labelled(label, lp_obj(kind, &lp, fragment)));
    }
    for l in lines {
        println!("{}", l.render());
    }
}
