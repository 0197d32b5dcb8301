//! `cascade decode`: prints TLV elements as indented trees, or as one JSON object per packet.
//!
//! Every packet (Interest, Data, LpPacket) is validated with the `wire` crate first, so what is
//! printed is what the router would accept; the tree itself is drawn from the raw elements, so
//! skipped non-critical elements are shown too.

use std::fmt::Write as _;

use serde_json::{json, Map, Value};
use wire::lp::NackReason;
use wire::packet::frame_len;
use wire::tlv::{read_be, Reader};
use wire::{tt, DataView, InterestView, Limits, LpPacketView, NameView, PacketView};

/// A decoding failure: the message (with its byte offset) for the one-line report.
#[derive(Debug)]
pub struct DecodeFailure(pub String);

/// Parses hex text: ASCII whitespace is ignored, `#` starts a comment to the end of the line.
pub fn parse_hex(text: &str) -> Result<Vec<u8>, DecodeFailure> {
    let mut out = Vec::with_capacity(text.len() / 2);
    let mut high: Option<u8> = None;
    for (lineno, line) in text.lines().enumerate() {
        let line = line.split('#').next().unwrap_or("");
        for (col, ch) in line.char_indices() {
            if ch.is_ascii_whitespace() {
                continue;
            }
            let d = ch.to_digit(16).ok_or_else(|| {
                DecodeFailure(format!(
                    "invalid hex digit {ch:?} at line {}, column {}",
                    lineno + 1,
                    col + 1
                ))
            })? as u8;
            match high.take() {
                Some(h) => out.push(h << 4 | d),
                None => high = Some(d),
            }
        }
    }
    if high.is_some() {
        return Err(DecodeFailure("odd number of hex digits".into()));
    }
    Ok(out)
}

/// Splits `buf` into top-level TLV elements, checking framing (VAR-NUMBERs, lengths).
fn split_elements(buf: &[u8], max_bytes: usize) -> Result<Vec<(usize, &[u8])>, DecodeFailure> {
    let mut out = Vec::new();
    let mut pos = 0;
    while pos < buf.len() {
        match frame_len(&buf[pos..], max_bytes) {
            Ok(Some(n)) => {
                out.push((pos, &buf[pos..pos + n]));
                pos += n;
            }
            Ok(None) => {
                return Err(DecodeFailure(format!(
                    "truncated element at byte offset {pos}"
                )))
            }
            Err(e) => {
                return Err(DecodeFailure(format!(
                    "{} at byte offset {}",
                    e.kind,
                    pos + e.offset
                )))
            }
        }
    }
    Ok(out)
}

/// Decodes every element of `buf` and renders it as text (tree) or JSON lines.
pub fn render(buf: &[u8], json_out: bool, limits: &Limits) -> Result<String, DecodeFailure> {
    let mut out = String::new();
    for (offset, elem) in split_elements(buf, limits.max_packet_bytes)? {
        let typ = PacketView::peek_type(elem).map_err(|e| DecodeFailure(e.to_string()))?;
        let is_packet = matches!(typ, tt::INTEREST | tt::DATA | tt::LP_PACKET);
        if is_packet {
            let p = PacketView::decode_at(elem, offset, limits)
                .map_err(|e| DecodeFailure(e.to_string()))?;
            if let PacketView::Lp(lp) = p {
                if let Some(Err(e)) = lp.network_packet(limits) {
                    return Err(DecodeFailure(format!("in LpPacket fragment: {e}")));
                }
            }
            if json_out {
                out.push_str(&packet_json(&p, limits).to_string());
                out.push('\n');
            } else {
                tree(&mut out, elem, offset, Ctx::Top, 0, limits)?;
            }
        } else if json_out {
            let v = json!({"type": top_type_name(typ), "tlv_type": typ, "length": elem.len()});
            out.push_str(&v.to_string());
            out.push('\n');
        } else {
            tree(&mut out, elem, offset, Ctx::Top, 0, limits)?;
        }
    }
    Ok(out)
}

fn top_type_name(typ: u32) -> String {
    match typ {
        tt::INTEREST => "Interest".into(),
        tt::DATA => "Data".into(),
        tt::LP_PACKET => "LpPacket".into(),
        tt::NAME => "Name".into(),
        tt::CONTROL_PARAMETERS => "ControlParameters".into(),
        tt::CONTROL_RESPONSE => "ControlResponse".into(),
        t => format!("TLV-{t}"),
    }
}

fn hex(b: &[u8]) -> String {
    b.iter()
        .fold(String::with_capacity(b.len() * 2), |mut s, x| {
            let _ = write!(s, "{x:02x}");
            s
        })
}

/// JSON object for one validated packet.
pub fn packet_json(p: &PacketView<'_>, limits: &Limits) -> Value {
    match p {
        PacketView::Interest(i) => interest_json(i),
        PacketView::Data(d) => data_json(d),
        PacketView::Lp(l) => lp_json(l, limits),
    }
}

fn interest_json(i: &InterestView<'_>) -> Value {
    let mut m = Map::new();
    m.insert("type".into(), "Interest".into());
    m.insert("name".into(), i.name().to_string().into());
    m.insert("can_be_prefix".into(), i.can_be_prefix().into());
    m.insert("must_be_fresh".into(), i.must_be_fresh().into());
    if let Some(n) = i.nonce() {
        m.insert("nonce".into(), u32::from_be_bytes(n).into());
    }
    if let Some(l) = i.lifetime_ms() {
        m.insert("lifetime_ms".into(), l.into());
    }
    if let Some(h) = i.hop_limit() {
        m.insert("hop_limit".into(), h.into());
    }
    let hints: Vec<Value> = i.forwarding_hint().map(|n| n.to_string().into()).collect();
    if !hints.is_empty() {
        m.insert("forwarding_hint".into(), hints.into());
    }
    if let Some(p) = i.app_params() {
        m.insert("app_params_len".into(), p.len().into());
    }
    if let Some(s) = i.signature_info() {
        m.insert("signature_type".into(), s.signature_type.into());
    }
    m.insert("size".into(), i.wire().len().into());
    Value::Object(m)
}

fn data_json(d: &DataView<'_>) -> Value {
    let mut m = Map::new();
    m.insert("type".into(), "Data".into());
    m.insert("name".into(), d.name().to_string().into());
    if let Some(c) = d.content_type() {
        m.insert("content_type".into(), c.into());
    }
    if let Some(f) = d.freshness_ms() {
        m.insert("freshness_ms".into(), f.into());
    }
    if let Some(f) = d.final_block_id() {
        m.insert("final_block_id".into(), f.to_string().into());
    }
    m.insert(
        "content_len".into(),
        d.content().map_or(0, <[u8]>::len).into(),
    );
    let si = d.signature_info();
    m.insert("signature_type".into(), si.signature_type.into());
    match si.key_locator {
        Some(wire::data::KeyLocatorView::Name(n)) => {
            m.insert("key_locator".into(), n.to_string().into());
        }
        Some(wire::data::KeyLocatorView::KeyDigest(k)) => {
            m.insert("key_digest".into(), hex(k).into());
        }
        None => {}
    }
    if si.signature_type == wire::data::signature_type::DIGEST_SHA256 {
        m.insert("signature_valid".into(), d.verify_digest_sha256().into());
    }
    m.insert("implicit_digest".into(), hex(&d.implicit_digest()).into());
    m.insert("size".into(), d.wire().len().into());
    Value::Object(m)
}

fn nack_reason_str(r: Option<NackReason>) -> String {
    match r {
        None => "None".into(),
        Some(NackReason::Other(c)) => format!("Unknown({c})"),
        Some(r) => r.as_str().into(),
    }
}

fn lp_json(l: &LpPacketView<'_>, limits: &Limits) -> Value {
    let mut m = Map::new();
    let inner = l.network_packet(limits).and_then(Result::ok);
    m.insert(
        "type".into(),
        if l.nack.is_some() { "Nack" } else { "LpPacket" }.into(),
    );
    let name = match &inner {
        Some(PacketView::Interest(i)) => Some(i.name()),
        Some(PacketView::Data(d)) => Some(d.name()),
        // A fragment never holds another LpPacket (the decoder refuses it).
        Some(PacketView::Lp(_)) | None => None,
    };
    if let Some(name) = name {
        m.insert("name".into(), name.to_string().into());
    }
    if let Some(n) = l.nack {
        m.insert("nack_reason".into(), nack_reason_str(n.reason).into());
        if let Some(r) = n.reason {
            m.insert("nack_reason_code".into(), r.code().into());
        }
    }
    let nums = [
        ("sequence", l.sequence),
        ("frag_index", l.frag_index),
        ("frag_count", l.frag_count),
        ("hop_count", l.hop_count),
        ("next_hop_face_id", l.next_hop_face_id),
        ("incoming_face_id", l.incoming_face_id),
        ("cache_policy", l.cache_policy),
        ("congestion_mark", l.congestion_mark),
        ("tx_sequence", l.tx_sequence),
    ];
    for (k, v) in nums {
        if let Some(v) = v {
            m.insert(k.into(), v.into());
        }
    }
    if let Some(t) = l.pit_token {
        m.insert("pit_token".into(), hex(t).into());
    }
    let acks: Vec<Value> = l.acks().map(Value::from).collect();
    if !acks.is_empty() {
        m.insert("acks".into(), acks.into());
    }
    if l.non_discovery {
        m.insert("non_discovery".into(), true.into());
    }
    if let Some(p) = l.prefix_announcement {
        m.insert("prefix_announcement_len".into(), p.len().into());
    }
    if let Some(s) = l.nbcc {
        m.insert("nbcc".into(), s.code().into());
    }
    match (&inner, l.fragment()) {
        (Some(p), _) => {
            m.insert("fragment".into(), packet_json(p, limits));
        }
        (None, Some(f)) => {
            m.insert("fragment_len".into(), f.len().into());
        }
        (None, None) => {}
    }
    m.insert("size".into(), l.wire().len().into());
    Value::Object(m)
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Ctx {
    Top,
    Interest,
    ForwardingHint,
    Delegation,
    Data,
    MetaInfo,
    SignatureInfo,
    KeyLocator,
    Lp,
    Nack,
    CachePolicy,
    Opaque,
}

#[derive(Clone, Copy)]
enum Show {
    Container(Ctx),
    Name,
    Component,
    Number(&'static str),
    Flag,
    Bytes,
    Fragment,
}

fn describe(ctx: Ctx, typ: u32) -> Option<(&'static str, Show)> {
    use Show::*;
    Some(match (ctx, typ) {
        (Ctx::Top | Ctx::Opaque, tt::INTEREST) => ("Interest", Container(Ctx::Interest)),
        (Ctx::Top | Ctx::Opaque, tt::DATA) => ("Data", Container(Ctx::Data)),
        (Ctx::Top, tt::LP_PACKET) => ("LpPacket", Container(Ctx::Lp)),
        (_, tt::NAME) if ctx != Ctx::Lp => ("Name", Name),
        (Ctx::Interest, tt::CAN_BE_PREFIX) => ("CanBePrefix", Flag),
        (Ctx::Interest, tt::MUST_BE_FRESH) => ("MustBeFresh", Flag),
        (Ctx::Interest, tt::FORWARDING_HINT) => ("ForwardingHint", Container(Ctx::ForwardingHint)),
        (Ctx::ForwardingHint, tt::DELEGATION) => ("Delegation", Container(Ctx::Delegation)),
        (Ctx::Delegation, tt::PREFERENCE) => ("Preference", Number("")),
        (Ctx::Interest, tt::NONCE) => ("Nonce", Bytes),
        (Ctx::Interest, tt::INTEREST_LIFETIME) => ("InterestLifetime", Number(" ms")),
        (Ctx::Interest, tt::HOP_LIMIT) => ("HopLimit", Number("")),
        (Ctx::Interest, tt::APPLICATION_PARAMETERS) => ("ApplicationParameters", Bytes),
        (Ctx::Interest, tt::INTEREST_SIGNATURE_INFO) => {
            ("InterestSignatureInfo", Container(Ctx::SignatureInfo))
        }
        (Ctx::Interest, tt::INTEREST_SIGNATURE_VALUE) => ("InterestSignatureValue", Bytes),
        (Ctx::Data, tt::META_INFO) => ("MetaInfo", Container(Ctx::MetaInfo)),
        (Ctx::Data, tt::CONTENT) => ("Content", Bytes),
        (Ctx::Data, tt::SIGNATURE_INFO) => ("SignatureInfo", Container(Ctx::SignatureInfo)),
        (Ctx::Data, tt::SIGNATURE_VALUE) => ("SignatureValue", Bytes),
        (Ctx::MetaInfo, tt::CONTENT_TYPE) => ("ContentType", Number("")),
        (Ctx::MetaInfo, tt::FRESHNESS_PERIOD) => ("FreshnessPeriod", Number(" ms")),
        (Ctx::MetaInfo, tt::FINAL_BLOCK_ID) => ("FinalBlockId", Component),
        (Ctx::SignatureInfo, tt::SIGNATURE_TYPE) => ("SignatureType", Number("")),
        (Ctx::SignatureInfo, tt::KEY_LOCATOR) => ("KeyLocator", Container(Ctx::KeyLocator)),
        (Ctx::SignatureInfo, tt::VALIDITY_PERIOD) => ("ValidityPeriod", Bytes),
        (Ctx::SignatureInfo, tt::SIGNATURE_NONCE) => ("SignatureNonce", Bytes),
        (Ctx::SignatureInfo, tt::SIGNATURE_TIME) => ("SignatureTime", Number(" ms")),
        (Ctx::SignatureInfo, tt::SIGNATURE_SEQ_NUM) => ("SignatureSeqNum", Number("")),
        (Ctx::KeyLocator, tt::KEY_DIGEST) => ("KeyDigest", Bytes),
        (Ctx::Lp, tt::LP_FRAGMENT) => ("Fragment", Fragment),
        (Ctx::Lp, tt::LP_SEQUENCE) => ("Sequence", Number("")),
        (Ctx::Lp, tt::LP_FRAG_INDEX) => ("FragIndex", Number("")),
        (Ctx::Lp, tt::LP_FRAG_COUNT) => ("FragCount", Number("")),
        (Ctx::Lp, tt::LP_HOP_COUNT) => ("HopCount", Number("")),
        (Ctx::Lp, tt::LP_PIT_TOKEN) => ("PitToken", Bytes),
        (Ctx::Lp, tt::LP_NACK) => ("Nack", Container(Ctx::Nack)),
        (Ctx::Nack, tt::LP_NACK_REASON) => ("NackReason", Number("")),
        (Ctx::Lp, tt::LP_NEXT_HOP_FACE_ID) => ("NextHopFaceId", Number("")),
        (Ctx::Lp, tt::LP_INCOMING_FACE_ID) => ("IncomingFaceId", Number("")),
        (Ctx::Lp, tt::LP_CACHE_POLICY) => ("CachePolicy", Container(Ctx::CachePolicy)),
        (Ctx::CachePolicy, tt::LP_CACHE_POLICY_TYPE) => ("CachePolicyType", Number("")),
        (Ctx::Lp, tt::LP_CONGESTION_MARK) => ("CongestionMark", Number("")),
        (Ctx::Lp, tt::LP_ACK) => ("Ack", Number("")),
        (Ctx::Lp, tt::LP_TX_SEQUENCE) => ("TxSequence", Number("")),
        (Ctx::Lp, tt::LP_NON_DISCOVERY) => ("NonDiscovery", Flag),
        (Ctx::Lp, tt::LP_PREFIX_ANNOUNCEMENT) => ("PrefixAnnouncement", Bytes),
        _ => return None,
    })
}

const PREVIEW_BYTES: usize = 32;

fn bytes_text(v: &[u8]) -> String {
    let shown = &v[..v.len().min(PREVIEW_BYTES)];
    let mut s = hex(shown);
    if v.len() > PREVIEW_BYTES {
        s.push('…');
    }
    if !v.is_empty() && v.iter().all(|b| b.is_ascii_graphic() || *b == b' ') {
        let text = String::from_utf8_lossy(&v[..v.len().min(PREVIEW_BYTES)]);
        let _ = write!(s, " \"{text}\"");
    }
    s
}

fn tree(
    out: &mut String,
    elem: &[u8],
    offset: usize,
    ctx: Ctx,
    depth: usize,
    limits: &Limits,
) -> Result<(), DecodeFailure> {
    let fail = |e: wire::Error| DecodeFailure(e.to_string());
    let mut r = Reader::with_offset(elem, offset);
    let e = r.read().map_err(fail)?;
    let pad = "  ".repeat(depth);
    let len = e.value.len();
    let Some((label, show)) = describe(ctx, e.typ) else {
        let _ = writeln!(out, "{pad}TLV-{} [{len}]: {}", e.typ, bytes_text(e.value));
        return Ok(());
    };
    match show {
        Show::Container(inner) => {
            let _ = writeln!(out, "{pad}{label} [{len}]");
            let mut sub = e.reader();
            while !sub.is_empty() {
                let child = sub.read().map_err(fail)?;
                tree(out, child.wire, child.offset, inner, depth + 1, limits)?;
            }
        }
        Show::Name => {
            let n = NameView::from_element(e, limits).map_err(fail)?;
            let _ = writeln!(out, "{pad}Name {n}");
        }
        Show::Component => {
            let mut sub = e.reader();
            let c = sub.read().map_err(fail)?;
            let name_wire = [&[0x07, c.wire.len() as u8][..], c.wire].concat();
            let text = NameView::decode(&name_wire, limits)
                .map(|n| n.to_string())
                .unwrap_or_else(|_| bytes_text(c.value));
            let _ = writeln!(out, "{pad}{label} {}", text.trim_start_matches('/'));
        }
        Show::Number(unit) => {
            let v = if e.value.len() <= 8 && !e.value.is_empty() {
                read_be(e.value).to_string()
            } else {
                bytes_text(e.value)
            };
            let extra = if e.typ == tt::LP_NACK_REASON {
                format!(
                    " ({})",
                    nack_reason_str(Some(NackReason::from_code(read_be(e.value))))
                )
            } else {
                String::new()
            };
            let _ = writeln!(out, "{pad}{label} {v}{unit}{extra}");
        }
        Show::Flag => {
            let _ = writeln!(out, "{pad}{label}");
        }
        Show::Bytes => {
            let _ = writeln!(out, "{pad}{label} [{len}]: {}", bytes_text(e.value));
        }
        Show::Fragment => {
            let whole = PacketView::decode_network(e.value, e.value_offset, limits).is_ok();
            if whole {
                let _ = writeln!(out, "{pad}{label} [{len}]");
                tree(out, e.value, e.value_offset, Ctx::Opaque, depth + 1, limits)?;
            } else {
                let _ = writeln!(out, "{pad}{label} [{len}]: {}", bytes_text(e.value));
            }
        }
    }
    Ok(())
}

/// The embedded sample packets `cascade decode --sample` prints: an Interest, a signed Data and
/// a Nack, built with the `wire` builders.
pub fn sample_packets() -> Vec<u8> {
    use wire::{Component, Data, Interest, LpPacket, MetaInfo, Name};
    let name = Name::from_uri("/ndn/edu/ucla/cascade/video").unwrap_or_default();
    let mut out = Vec::new();
    let interest = Interest {
        name: name
            .clone()
            .with(Component::version(1))
            .with(Component::segment(0)),
        can_be_prefix: false,
        must_be_fresh: true,
        nonce: Some([0x12, 0x34, 0x56, 0x78]),
        lifetime_ms: Some(4000),
        hop_limit: Some(32),
        ..Interest::default()
    };
    interest.encode(&mut out);
    let mut data = Data::new(
        name.with(Component::version(1)).with(Component::segment(0)),
        b"Hello, NDN!".to_vec(),
    );
    data.meta_info = Some(MetaInfo {
        content_type: Some(0),
        freshness_ms: Some(10_000),
        final_block_id: Some(Component::segment(0)),
    });
    data.sign_digest_sha256();
    data.encode(&mut out);
    LpPacket {
        pit_token: Some(vec![0xCA, 0xFE]),
        congestion_mark: Some(1),
        ..LpPacket::nack(interest.to_wire(), NackReason::NoRoute)
    }
    .encode(&mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_parsing() {
        assert_eq!(parse_hex("05 0b # comment\n07").unwrap(), [5, 11, 7]);
        assert!(parse_hex("0").unwrap_err().0.contains("odd"));
        assert!(parse_hex("zz").unwrap_err().0.contains("line 1, column 1"));
    }

    #[test]
    fn sample_renders_both_ways() {
        let s = sample_packets();
        let text = render(&s, false, &Limits::default()).unwrap();
        assert!(text.contains("Name /ndn/edu/ucla/cascade/video/v=1/seg=0"));
        assert!(text.contains("NackReason 150 (NoRoute)"));
        let j = render(&s, true, &Limits::default()).unwrap();
        let lines: Vec<Value> = j
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(lines.len(), 3);
        assert_eq!(lines[0]["type"], "Interest");
        assert_eq!(lines[0]["nonce"], 0x12345678);
        assert_eq!(lines[0]["hop_limit"], 32);
        assert_eq!(lines[1]["type"], "Data");
        assert_eq!(lines[1]["content_len"], 11);
        assert_eq!(lines[1]["signature_valid"], true);
        assert_eq!(lines[2]["type"], "Nack");
        assert_eq!(lines[2]["nack_reason"], "NoRoute");
        assert_eq!(lines[2]["pit_token"], "cafe");
        assert_eq!(lines[2]["congestion_mark"], 1);
        assert_eq!(lines[2]["fragment"]["type"], "Interest");
        assert_eq!(lines[2]["name"], lines[0]["name"]);
    }

    #[test]
    fn malformed_input_reports_offset() {
        let mut s = sample_packets();
        let first_len = frame_len(&s, 8800).unwrap().unwrap();
        // Corrupt the second packet's Name TLV type into type 0.
        s[first_len + 2] = 0x00;
        let e = render(&s, true, &Limits::default()).unwrap_err();
        assert!(
            e.0.contains(&format!("byte offset {}", first_len + 2)),
            "{}",
            e.0
        );
        let e = render(&s[..first_len - 1], false, &Limits::default()).unwrap_err();
        assert_eq!(e.0, "truncated element at byte offset 0");
    }
}
