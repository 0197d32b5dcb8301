//! Invariants checked on every fuzz input, written once and shared by the cargo-fuzz targets
//! (`fuzz/fuzz_targets/*.rs`) and the stable-toolchain corpus replay
//! (`crates/wire/tests/fuzz_corpus.rs`). Both include this file with `#[path]`.
//!
//! Every `check_*` function accepts arbitrary bytes and panics (with a message naming the broken
//! invariant) when the wire crate misbehaves: a panic inside a decoder, a decoder that accepts a
//! packet it cannot re-encode, or two entry points that disagree.

#![allow(dead_code)] // each fuzz target uses one check

use wire::data::SignatureInfoView;
use wire::nfd::{
    decode_dataset, ChannelStatus, ControlParameters, ControlResponse, CsInfo,
    FaceEventNotification, FaceQueryFilter, FaceStatus, FibEntry, ForwarderStatus, NextHopRecord,
    RibEntry, Route, StrategyChoice,
};
use wire::tlv::{read_var_number, Element, Reader};
use wire::{
    Data, DataView, Interest, InterestView, Limits, LpPacket, LpPacketView, Name, NameView, Packet,
    PacketView,
};

/// The fuzz targets (and `fuzz/corpus/<target>` directories) that have a check here.
pub const TARGETS: &[&str] = &["packet", "name", "uri", "frame", "mgmt"];

/// Runs the check of `target` on `data`. Returns false if `target` is unknown.
pub fn check(target: &str, data: &[u8]) -> bool {
    match target {
        "packet" => check_packet(data),
        "name" => check_name(data),
        "uri" => check_uri(data),
        "frame" => check_frame(data),
        "mgmt" => check_mgmt(data),
        _ => return false,
    }
    true
}

/// `packet`: [`PacketView::decode`] and the typed decoders agree, every accessor of a decoded
/// view is safe to call, and a decoded packet survives `to_packet` → `to_wire` → decode.
pub fn check_packet(data: &[u8]) {
    let limits = Limits::default();
    let res = PacketView::decode(data, &limits);

    // decode_at only shifts error offsets.
    const BASE: usize = 1000;
    match (&res, PacketView::decode_at(data, BASE, &limits)) {
        (Ok(_), Ok(_)) => {}
        (Err(a), Err(b)) => assert_eq!(
            (a.kind, a.offset + BASE),
            (b.kind, b.offset),
            "decode_at({BASE}) reports a different error than decode"
        ),
        (a, b) => panic!("decode and decode_at disagree: {a:?} vs {b:?}"),
    }

    // The typed entry points agree with the generic one.
    let as_interest = match &res {
        Ok(PacketView::Interest(i)) => Some(i.to_interest()),
        _ => None,
    };
    let as_data = match &res {
        Ok(PacketView::Data(d)) => Some(d.to_data()),
        _ => None,
    };
    let as_lp = match &res {
        Ok(PacketView::Lp(l)) => Some(l.to_lp_packet()),
        _ => None,
    };
    assert_eq!(
        InterestView::decode(data, &limits)
            .ok()
            .map(|v| v.to_interest()),
        as_interest,
        "InterestView::decode disagrees with PacketView::decode"
    );
    assert_eq!(Interest::decode(data).ok(), as_interest, "Interest::decode");
    assert_eq!(
        DataView::decode(data, &limits).ok().map(|v| v.to_data()),
        as_data,
        "DataView::decode disagrees with PacketView::decode"
    );
    assert_eq!(Data::decode(data).ok(), as_data, "Data::decode");
    assert_eq!(
        LpPacketView::decode(data, &limits)
            .ok()
            .map(|v| v.to_lp_packet()),
        as_lp,
        "LpPacketView::decode disagrees with PacketView::decode"
    );
    assert_eq!(LpPacket::decode(data).ok(), as_lp, "LpPacket::decode");
    if let Ok(t) = PacketView::peek_type(data) {
        if let Ok(v) = &res {
            let expect = match v {
                PacketView::Interest(_) => wire::tt::INTEREST,
                PacketView::Data(_) => wire::tt::DATA,
                PacketView::Lp(_) => wire::tt::LP_PACKET,
            };
            assert_eq!(t, expect, "peek_type disagrees with decode");
        }
    } else {
        assert!(res.is_err(), "peek_type fails on a decodable packet");
    }

    // Without the parameters-digest check, decoding accepts at least as much.
    let lax = Limits {
        verify_parameters_digest: false,
        ..limits
    };
    match PacketView::decode(data, &lax) {
        Ok(v) => {
            exercise_packet(&v, data, &lax);
            // The fuzzer cannot forge SHA-256 digests, so Interests with parameters only get
            // past the strict decoder rarely; round-trip them here, digest aside.
            match v {
                PacketView::Interest(i) => round_trip_unverified(&i),
                PacketView::Lp(l) => {
                    if let Some(Ok(PacketView::Interest(i))) = l.network_packet(&lax) {
                        round_trip_unverified(&i);
                    }
                }
                PacketView::Data(_) => {}
            }
        }
        Err(e) => assert!(res.is_err(), "accepted only with digest checks on: {e}"),
    }

    if let Ok(v) = res {
        exercise_packet(&v, data, &limits);
        round_trip(&v, &limits);
        if let PacketView::Lp(lp) = v {
            if let Some(Ok(inner)) = lp.network_packet(&limits) {
                round_trip(&inner, &limits);
            }
        }
    }
}

/// Calls every accessor of a decoded packet and checks what can be checked against `data`.
fn exercise_packet(v: &PacketView<'_>, data: &[u8], limits: &Limits) {
    match v {
        PacketView::Interest(i) => {
            assert_eq!(i.wire(), data, "Interest wire is not the input");
            exercise_interest(i);
        }
        PacketView::Data(d) => {
            assert_eq!(d.wire(), data, "Data wire is not the input");
            exercise_data(d);
        }
        PacketView::Lp(l) => {
            assert_eq!(l.wire(), data, "LpPacket wire is not the input");
            let _ = l.acks().count();
            let _ = l.is_fragmented();
            match (l.fragment(), l.fragment_offset()) {
                (Some(f), Some(off)) => {
                    assert_eq!(data.get(off..off + f.len()), Some(f), "fragment_offset");
                }
                (None, None) => {}
                other => panic!("fragment and fragment_offset disagree: {other:?}"),
            }
            match l.network_packet(limits) {
                None => assert!(
                    l.fragment().is_none() || l.is_fragmented(),
                    "network_packet is None for a whole fragment"
                ),
                Some(Err(_)) => {}
                Some(Ok(inner)) => {
                    let (off, frag) = (l.fragment_offset().unwrap(), l.fragment().unwrap());
                    match inner {
                        PacketView::Interest(i) => {
                            assert_eq!((i.offset(), i.wire()), (off, frag), "inner Interest");
                            exercise_interest(&i);
                        }
                        PacketView::Data(d) => {
                            assert_eq!((d.offset(), d.wire()), (off, frag), "inner Data");
                            exercise_data(&d);
                        }
                        PacketView::Lp(_) => panic!("network_packet returned an LpPacket"),
                    }
                }
            }
        }
    }
}

fn exercise_interest(i: &InterestView<'_>) {
    exercise_name_view(&i.name());
    assert!(!i.name().is_empty(), "Interest with an empty name decoded");
    let _ = (i.can_be_prefix(), i.must_be_fresh(), i.nonce());
    let _ = (i.lifetime_ms(), i.effective_lifetime_ms(), i.app_params());
    for h in i.forwarding_hint() {
        exercise_name_view(&h);
    }
    match (i.hop_limit(), i.hop_limit_value_offset()) {
        (Some(h), Some(off)) => assert_eq!(i.wire().get(off), Some(&h), "hop limit offset"),
        (None, None) => {}
        other => panic!("hop_limit and its offset disagree: {other:?}"),
    }
    if let Some(s) = i.signature_info() {
        exercise_signature_info(&s);
    }
    let _ = i.signature_value();
}

fn exercise_data(d: &DataView<'_>) {
    exercise_name_view(&d.name());
    let _ = (d.content_type(), d.freshness_ms(), d.content());
    if let Some(c) = d.final_block_id() {
        let _ = (c.as_number(), c.to_string());
    }
    exercise_signature_info(&d.signature_info());
    let _ = d.signature_value();
    let signed = d.signed_portion();
    assert!(
        signed.starts_with(d.name().wire()),
        "signed portion does not start with the name"
    );
    let _ = d.verify_digest_sha256();
    let _ = d.implicit_digest();
}

fn exercise_signature_info(s: &SignatureInfoView<'_>) {
    if let Some(wire::data::KeyLocatorView::Name(n)) = s.key_locator {
        exercise_name_view(&n);
    }
    let _ = s.to_signature_info();
}

fn exercise_name_view(n: &NameView<'_>) {
    assert_eq!(n.components().count(), n.len(), "component count");
    assert_eq!(n.is_empty(), n.components().next().is_none());
    assert_eq!(n.last(), n.len().checked_sub(1).and_then(|i| n.get(i)));
    assert!(n.is_prefix_of(n));
    assert_eq!(n.cmp(n), core::cmp::Ordering::Equal);
    assert_eq!(n.to_string(), n.to_name().to_string(), "view and owned URI");
}

/// Re-encodes a decoded packet and decodes it again: it must decode, to an equal owned packet,
/// and encoding that must give the same bytes.
fn round_trip(v: &PacketView<'_>, limits: &Limits) {
    let owned = v.to_packet();
    let wire = owned.to_wire();
    // The LpPacket encoder writes Sequence, TxSequence and every Ack as 8 bytes (a received packet
    // may use 1..=8), so a re-encoded LpPacket may legitimately outgrow the size limit.
    let limits = match owned {
        Packet::Lp(_) => Limits {
            max_packet_bytes: usize::MAX,
            ..*limits
        },
        _ => *limits,
    };
    let again = match PacketView::decode(&wire, &limits) {
        Ok(a) => a.to_packet(),
        Err(e) => panic!(
            "re-encoded packet does not decode: {e}\n  owned: {owned:?}\n  re-encoded: {}",
            hex(&wire)
        ),
    };
    // Owned packets keep the recognized elements only: an unknown non-critical element among
    // an Interest's parameters is dropped, and the encoder recomputes the parameters digest over
    // what is kept, so that digest value is compared apart from the rest.
    assert_eq!(
        mask_params_digest(again.clone()),
        mask_params_digest(owned.clone()),
        "decode(to_wire(p)) != p\n  re-encoded: {}",
        hex(&wire)
    );
    assert_eq!(again.to_wire(), wire, "encoding is not stable");
}

fn mask_params_digest(p: Packet) -> Packet {
    match p {
        Packet::Interest(mut i) => {
            for c in &mut i.name.components {
                if u32::from(c.typ) == wire::tt::PARAMETERS_SHA256_DIGEST {
                    c.value.clear();
                }
            }
            Packet::Interest(i)
        }
        p => p,
    }
}

/// Round trip of an Interest decoded without checking its ParametersSha256DigestComponent: the
/// encoder computes the digest, so the re-encoded Interest must pass the strict decoder, and be
/// equal to the original except for the digest value.
fn round_trip_unverified(i: &InterestView<'_>) {
    let owned = i.to_interest();
    let wire = owned.to_wire();
    let again = match InterestView::decode(&wire, &Limits::default()) {
        Ok(a) => a.to_interest(),
        Err(e) => panic!(
            "re-encoded Interest does not decode: {e}\n  owned: {owned:?}\n  re-encoded: {}",
            hex(&wire)
        ),
    };
    let mask = |mut i: Interest| {
        for c in &mut i.name.components {
            if u32::from(c.typ) == wire::tt::PARAMETERS_SHA256_DIGEST {
                c.value.clear();
            }
        }
        i
    };
    assert_eq!(
        mask(again.clone()),
        mask(owned),
        "decode(to_wire(i)) != i (digest aside)\n  re-encoded: {}",
        hex(&wire)
    );
    assert_eq!(again.to_wire(), wire, "Interest encoding is not stable");
}

/// `name`: [`NameView::decode`] agrees with [`Name::decode`]; a decoded name re-encodes to the
/// same bytes and survives the URI form.
pub fn check_name(data: &[u8]) {
    let limits = Limits::default();
    let view = match NameView::decode(data, &limits) {
        Ok(v) => v,
        Err(_) => {
            assert!(Name::decode(data).is_err(), "Name::decode accepts more");
            return;
        }
    };
    exercise_name_view(&view);
    assert_eq!(view.wire(), data);
    let name = view.to_name();
    assert_eq!(
        Name::decode(data).ok().as_ref(),
        Some(&name),
        "Name::decode"
    );
    assert_eq!(name.len(), view.len());
    assert_eq!(name.value_len(), view.value().len(), "value_len");
    // VAR-NUMBERs are minimal and components carry no optional parts: the encoding is unique.
    assert_eq!(
        name.to_wire(),
        data,
        "Name::to_wire differs from the decoded bytes"
    );
    let uri = name.to_string();
    assert_eq!(view.to_string(), uri, "view and owned URI");
    match Name::from_uri(&uri) {
        Ok(back) => assert_eq!(
            back, name,
            "Name::from_uri(name.to_string()) != name; uri {uri}"
        ),
        Err(e) => panic!("printed name does not parse: {uri}: {e}"),
    }
    for c in &name.components {
        let s = c.to_string();
        let parsed = wire::Component::from_uri(&s);
        assert_eq!(parsed.as_ref(), Ok(c), "component URI round trip: {s}");
    }
    for k in 0..=name.len() {
        assert!(name.prefix(k).is_prefix_of(&name));
    }
}

/// `uri`: a name parsed from arbitrary text prints to a URI that parses to the same name, prints
/// the same again, and survives the wire encoding.
pub fn check_uri(data: &[u8]) {
    let Ok(s) = core::str::from_utf8(data) else {
        return;
    };
    let Ok(name) = Name::from_uri(s) else {
        return;
    };
    let printed = name.to_string();
    let again = match Name::from_uri(&printed) {
        Ok(n) => n,
        Err(e) => panic!("{s:?} parses but its URI {printed:?} does not: {e}"),
    };
    assert_eq!(again, name, "input {s:?} printed as {printed:?}");
    assert_eq!(again.to_string(), printed, "printing is not stable");
    let unlimited = Limits {
        max_name_components: usize::MAX,
        max_name_bytes: usize::MAX,
        ..Limits::default()
    };
    let w = name.to_wire();
    match NameView::decode(&w, &unlimited) {
        Ok(v) => assert_eq!(v.to_name(), name, "wire round trip of {s:?}"),
        Err(e) => panic!("name parsed from {s:?} does not decode from its wire form: {e}"),
    }
}

/// `frame`: [`wire::packet::frame_len`] never claims more bytes than the buffer or the limit
/// holds, and `Some(n)` is exactly the first element's TYPE + LENGTH + VALUE.
pub fn check_frame(data: &[u8]) {
    for max in [0, 1, 3, 64, wire::MAX_NDN_PACKET_BYTES, usize::MAX] {
        // What a correct answer must be, computed without overflow.
        let header = read_var_number(data, 0).ok().and_then(|(t, tn)| {
            let (l, ln) = read_var_number(&data[tn..], tn).ok()?;
            Some((t, (tn + ln) as u64, l))
        });
        match wire::packet::frame_len(data, max) {
            Ok(Some(n)) => {
                assert!(n <= data.len(), "frame_len {n} > buffer {}", data.len());
                assert!(n <= max, "frame_len {n} > max_bytes {max}");
                let (_, hl, l) = header.expect("frame_len found a frame without a header");
                assert_eq!(
                    Some(n as u64),
                    hl.checked_add(l),
                    "frame_len is not TYPE+LENGTH+VALUE (max_bytes {max})"
                );
                let e = Reader::new(&data[..n])
                    .read()
                    .expect("the framed bytes are not one element");
                assert_eq!(e.wire.len(), n);
            }
            Ok(None) => {
                if let Some((_, hl, l)) = header {
                    assert!(
                        hl.checked_add(l).is_none_or(|t| t > data.len() as u64),
                        "frame_len wants more bytes but the buffer holds the element"
                    );
                }
            }
            Err(_) => {}
        }
    }
    if PacketView::decode(data, &Limits::default()).is_ok() {
        assert_eq!(
            wire::packet::frame_len(data, wire::MAX_NDN_PACKET_BYTES).ok(),
            Some(Some(data.len())),
            "a decodable packet is not one frame"
        );
    }
}

/// `mgmt`: every NFD management decoder in `wire::nfd` runs on the input; whatever decodes
/// re-encodes to bytes that decode to an equal value and re-encode identically, and a single
/// entry decodes the same through `decode_dataset`.
pub fn check_mgmt(data: &[u8]) {
    mgmt_round_trip(
        data,
        "ControlParameters",
        ControlParameters::decode,
        |v, o| v.encode(o),
    );
    if let Some(r) = mgmt_round_trip(data, "ControlResponse", ControlResponse::decode, |v, o| {
        v.encode(o)
    }) {
        let _ = r.parameters();
    }
    mgmt_round_trip(data, "ForwarderStatus", ForwarderStatus::decode, |v, o| {
        v.encode(o)
    });
    mgmt_round_trip(data, "NextHopRecord", NextHopRecord::decode, |v, o| {
        v.encode(o)
    });
    mgmt_round_trip(data, "Route", Route::decode, |v, o| v.encode(o));
    mgmt_round_trip(
        data,
        "FaceEventNotification",
        FaceEventNotification::decode,
        |v, o| v.encode(o),
    );
    mgmt_round_trip(data, "FaceQueryFilter", FaceQueryFilter::decode, |v, o| {
        v.encode(o)
    });
    mgmt_entry(
        data,
        "ChannelStatus",
        ChannelStatus::decode,
        ChannelStatus::from_element,
        |v, o| v.encode(o),
    );
    mgmt_entry(
        data,
        "FaceStatus",
        FaceStatus::decode,
        FaceStatus::from_element,
        |v, o| v.encode(o),
    );
    mgmt_entry(
        data,
        "FibEntry",
        FibEntry::decode,
        FibEntry::from_element,
        |v, o| v.encode(o),
    );
    mgmt_entry(
        data,
        "RibEntry",
        RibEntry::decode,
        RibEntry::from_element,
        |v, o| v.encode(o),
    );
    mgmt_entry(
        data,
        "CsInfo",
        CsInfo::decode,
        CsInfo::from_element,
        |v, o| v.encode(o),
    );
    mgmt_entry(
        data,
        "StrategyChoice",
        StrategyChoice::decode,
        StrategyChoice::from_element,
        |v, o| v.encode(o),
    );
}

/// Decodes `data` with `decode`; if that works, checks encode → decode → equal → same bytes.
fn mgmt_round_trip<T: PartialEq + core::fmt::Debug>(
    data: &[u8],
    what: &str,
    decode: impl Fn(&[u8]) -> wire::Result<T>,
    encode: impl Fn(&T, &mut Vec<u8>),
) -> Option<T> {
    let v = decode(data).ok()?;
    let mut wire = Vec::new();
    encode(&v, &mut wire);
    let again = match decode(&wire) {
        Ok(a) => a,
        Err(e) => panic!(
            "re-encoded {what} does not decode: {e}\n  value: {v:?}\n  re-encoded: {}",
            hex(&wire)
        ),
    };
    assert_eq!(
        again,
        v,
        "{what}: decode(encode(v)) != v; re-encoded {}",
        hex(&wire)
    );
    let mut wire2 = Vec::new();
    encode(&again, &mut wire2);
    assert_eq!(wire2, wire, "{what}: encoding is not stable");
    Some(v)
}

/// A dataset entry type: its own round trip, plus `decode_dataset` over the input, which must
/// agree with `decode` on a single entry and survive re-encoding entry by entry.
fn mgmt_entry<T: PartialEq + core::fmt::Debug>(
    data: &[u8],
    what: &str,
    decode: impl Fn(&[u8]) -> wire::Result<T>,
    from_element: impl Fn(Element<'_>) -> wire::Result<T> + Copy,
    encode: impl Fn(&T, &mut Vec<u8>),
) {
    let single = mgmt_round_trip(data, what, decode, &encode);
    let Ok(entries) = decode_dataset(data, from_element) else {
        assert!(
            single.is_none(),
            "{what} decodes but not as a one-entry dataset"
        );
        return;
    };
    if let Some(v) = single {
        assert_eq!(entries.len(), 1, "{what} as a dataset");
        assert_eq!(
            entries[0], v,
            "{what}: decode_dataset disagrees with decode"
        );
    }
    let mut wire = Vec::new();
    for e in &entries {
        encode(e, &mut wire);
    }
    match decode_dataset(&wire, from_element) {
        Ok(again) => assert_eq!(again, entries, "{what} dataset round trip"),
        Err(e) => panic!("re-encoded {what} dataset does not decode: {e}"),
    }
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}
