//! Property tests for `cascade-wire`: encode/decode round trips of names, Interests, Data and
//! NDNLPv2 packets, canonical name ordering, NDN URIs, DigestSha256 signatures, and robustness of
//! the decoders (no panics, sane error offsets) on arbitrary, mutated and truncated input.
//!
//! Each property runs 256 cases (proptest's default; `PROPTEST_CASES=n` runs more). Failure
//! persistence is off so that a failing run writes no files next to the sources; a minimal failing
//! input found here belongs in a plain `#[test]` at the end of this file.
//!
//! Two bugs these properties found (a `frame_len` overflow and a lossy URI for non-shortest
//! number components) are fixed; their minimal inputs stay as regression tests at the end.

use std::cmp::Ordering;

use proptest::collection::vec;
use proptest::prelude::*;
use proptest::sample::select;

use wire::data::{signature_type, SignatureInfoView};
use wire::lp::{Nack, NbccSignal};
use wire::packet::frame_len;
use wire::{
    tlv, Component, Data, DataView, Interest, InterestView, KeyLocator, Limits, LpPacket,
    LpPacketView, MetaInfo, NackReason, Name, NameView, Packet, PacketView, SignatureInfo,
};

// ---------------------------------------------------------------------------------------------
// Generators
// ---------------------------------------------------------------------------------------------

/// The configuration shared by every property: the default 256 cases, no regression files.
fn config() -> ProptestConfig {
    ProptestConfig {
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

/// Typed component types with special URI or naming-convention meaning.
const TYPED: [u16; 6] = [0x20, 0x32, 0x34, 0x36, 0x38, 0x3A];
/// Types printed as `seg=`, `off=`, `v=`, `t=`, `seq=` when the value is a NonNegativeInteger.
const NUMBER_TYPES: [u16; 5] = [0x32, 0x34, 0x36, 0x38, 0x3A];

/// Component values: arbitrary bytes (incl. empty), all-periods values, URI-significant bytes,
/// and (with `long`) values whose length needs a 3-byte VAR-NUMBER.
fn value_bytes(max: usize, long: bool) -> BoxedStrategy<Vec<u8>> {
    let short = prop_oneof![
        6 => vec(any::<u8>(), 0..=max),
        2 => (0usize..=5).prop_map(|n| vec![b'.'; n]),
        2 => vec(select(b"aZ9-._~%=/+ \x00\xff".to_vec()), 0..=max.min(8)),
    ];
    if long {
        prop_oneof![9 => short, 1 => vec(any::<u8>(), 253..=300)].boxed()
    } else {
        short.boxed()
    }
}

/// A NonNegativeInteger value; skewed towards small numbers.
fn nni() -> impl Strategy<Value = u64> {
    prop_oneof![0u64..=0xFF, 0u64..=0xFFFF, 0u64..=0xFFFF_FFFF, any::<u64>()]
}

/// A name component. Generic (type 8) components dominate; typed ones, number-valued
/// naming-convention components, arbitrary types and 32-byte digest components follow.
/// Type 2 (ParametersSha256Digest) only when `params_digest`.
fn component(max: usize, long: bool, params_digest: bool) -> BoxedStrategy<Component> {
    let digest_types: Vec<u16> = if params_digest { vec![1, 2] } else { vec![1] };
    prop_oneof![
        8 => value_bytes(max, long).prop_map(|value| Component { typ: 8, value }),
        3 => (select(TYPED.to_vec()), value_bytes(max, long))
            .prop_map(|(typ, value)| Component { typ, value }),
        2 => (select(NUMBER_TYPES.to_vec()), nni()).prop_map(|(typ, n)| Component::number(typ, n)),
        2 => (3u16..=u16::MAX, value_bytes(max, long))
            .prop_map(|(typ, value)| Component { typ, value }),
        1 => (select(digest_types), prop::array::uniform32(any::<u8>()))
            .prop_map(|(typ, d)| Component { typ, value: d.to_vec() }),
    ]
    .boxed()
}

/// A name of `len` components, each drawn from [`component`].
fn name(
    len: std::ops::Range<usize>,
    max: usize,
    long: bool,
    params_digest: bool,
) -> BoxedStrategy<Name> {
    vec(component(max, long, params_digest), len)
        .prop_map(|components| Name { components })
        .boxed()
}

prop_compose! {
    /// Two names that often share a prefix: each is a prefix of a common base plus a suffix, with
    /// values from a tiny alphabet so that equal and near-equal components are common.
    fn related_names()(
        base in vec(small_component(), 0..8),
        k1 in 0usize..8, s1 in vec(small_component(), 0..3),
        k2 in 0usize..8, s2 in vec(small_component(), 0..3),
    ) -> (Name, Name) {
        let mk = |k: usize, s: Vec<Component>| {
            let mut c = base[..k.min(base.len())].to_vec();
            c.extend(s);
            Name { components: c }
        };
        (mk(k1, s1), mk(k2, s2))
    }
}

/// A component from a small space (3 types, values of 0..=2 bytes from {0, 1, 0xFF}).
fn small_component() -> impl Strategy<Value = Component> {
    (
        select(vec![8u16, 9, 0x32]),
        vec(select(vec![0u8, 1, 0xFF]), 0..=2),
    )
        .prop_map(|(typ, value)| Component { typ, value })
}

fn key_locator() -> impl Strategy<Value = KeyLocator> {
    prop_oneof![
        name(0..5, 10, false, true).prop_map(KeyLocator::Name),
        vec(any::<u8>(), 0..40).prop_map(KeyLocator::KeyDigest),
    ]
}

prop_compose! {
    /// A SignatureInfo with every field arbitrary.
    fn signature_info()(
        signature_type in nni(),
        key_locator in prop::option::of(key_locator()),
        validity_period in prop::option::of(vec(any::<u8>(), 0..40)),
        nonce in prop::option::of(vec(any::<u8>(), 0..16)),
        time_ms in prop::option::of(nni()),
        seq_num in prop::option::of(nni()),
    ) -> SignatureInfo {
        SignatureInfo { signature_type, key_locator, validity_period, nonce, time_ms, seq_num }
    }
}

prop_compose! {
    /// An Interest: at least one name component and no ParametersSha256Digest component; the
    /// signature elements only with ApplicationParameters.
    fn interest()(
        name in name(1..20, 12, false, false),
        can_be_prefix in any::<bool>(),
        must_be_fresh in any::<bool>(),
        forwarding_hint in vec(name(0..5, 12, false, true), 0..=3),
        nonce in prop::option::of(any::<[u8; 4]>()),
        lifetime_ms in prop::option::of(nni()),
        hop_limit in prop::option::of(any::<u8>()),
        app_params in prop::option::of(vec(any::<u8>(), 0..200)),
        sig in prop::option::of((signature_info(), vec(any::<u8>(), 0..80))),
    ) -> Interest {
        let (signature_info, signature_value) = match (&app_params, sig) {
            (Some(_), Some((si, sv))) => (Some(si), Some(sv)),
            _ => (None, None),
        };
        Interest {
            name, can_be_prefix, must_be_fresh, forwarding_hint, nonce, lifetime_ms, hop_limit,
            app_params, signature_info, signature_value,
        }
    }
}

prop_compose! {
    /// MetaInfo with each field optional.
    fn meta_info()(
        content_type in prop::option::of(nni()),
        freshness_ms in prop::option::of(nni()),
        final_block_id in prop::option::of(component(12, false, true)),
    ) -> MetaInfo {
        MetaInfo { content_type, freshness_ms, final_block_id }
    }
}

fn content() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![4 => vec(any::<u8>(), 0..64), 1 => vec(any::<u8>(), 0..2000)]
}

prop_compose! {
    /// A Data packet with arbitrary fields (not necessarily validly signed).
    fn data()(
        name in name(0..20, 12, false, true),
        meta_info in prop::option::of(meta_info()),
        content in prop::option::of(content()),
        signature_info in signature_info(),
        signature_value in vec(any::<u8>(), 0..80),
    ) -> Data {
        Data { name, meta_info, content, signature_info, signature_value }
    }
}

fn nack_reason() -> impl Strategy<Value = NackReason> {
    prop_oneof![
        Just(NackReason::Congestion),
        Just(NackReason::Duplicate),
        Just(NackReason::NoRoute),
        // Other(50/100/150) is not a canonical value: from_code maps those codes to the named
        // variants, so go through it.
        nni().prop_map(NackReason::from_code),
    ]
}

prop_compose! {
    /// FragIndex/FragCount: FragCount >= 1 and FragIndex < FragCount when both are present.
    fn frag_fields()(
        count in prop::option::of(prop_oneof![1u64..=4, 1u64..=u64::MAX]),
        index in prop::option::of(nni()),
    ) -> (Option<u64>, Option<u64>) {
        (index.map(|i| count.map_or(i, |c| i % c)), count)
    }
}

prop_compose! {
    /// An LpPacket with every field arbitrary.
    fn lp_packet()(
        sequence in prop::option::of(any::<u64>()),
        (frag_index, frag_count) in frag_fields(),
        hop_count in prop::option::of(nni()),
        pit_token in prop::option::of(vec(any::<u8>(), 1..=32)),
        nack in prop::option::of(prop::option::of(nack_reason()).prop_map(|reason| Nack { reason })),
        next_hop_face_id in prop::option::of(nni()),
        incoming_face_id in prop::option::of(nni()),
        cache_policy in prop::option::of(nni()),
        congestion_mark in prop::option::of(nni()),
        acks in vec(any::<u64>(), 0..4),
        tx_sequence in prop::option::of(any::<u64>()),
        non_discovery in any::<bool>(),
        prefix_announcement in prop::option::of(vec(any::<u8>(), 0..40)),
        nbcc in prop::option::of(prop_oneof![Just(NbccSignal::Alpha), Just(NbccSignal::Beta)]),
        fragment in prop::option::of(vec(any::<u8>(), 0..300)),
    ) -> LpPacket {
        LpPacket {
            sequence, frag_index, frag_count, hop_count, pit_token, nack, next_hop_face_id,
            incoming_face_id, cache_policy, congestion_mark, acks, tx_sequence, non_discovery,
            prefix_announcement, nbcc, fragment,
        }
    }
}

/// A valid encoded packet of any kind, including an LpPacket carrying an Interest or Data.
fn valid_packet_wire() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        interest().prop_map(|i| i.to_wire()),
        data().prop_map(|d| d.to_wire()),
        lp_packet().prop_map(|l| l.to_wire()),
        (
            lp_packet(),
            prop_oneof![
                interest().prop_map(|i| i.to_wire()),
                data().prop_map(|mut d| {
                    d.sign_digest_sha256();
                    d.to_wire()
                }),
            ]
        )
            .prop_map(|(mut l, inner)| {
                l.frag_index = None;
                l.frag_count = None;
                l.fragment = Some(inner);
                l.to_wire()
            }),
    ]
}

/// How to damage a valid encoding.
#[derive(Debug, Clone)]
enum Mutation {
    Set(prop::sample::Index, u8),
    Xor(prop::sample::Index, u8),
    Truncate(prop::sample::Index),
    Insert(prop::sample::Index, u8),
    Remove(prop::sample::Index),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    use prop::sample::Index;
    prop_oneof![
        (any::<Index>(), any::<u8>()).prop_map(|(i, b)| Mutation::Set(i, b)),
        (any::<Index>(), 1u8..=255).prop_map(|(i, b)| Mutation::Xor(i, b)),
        any::<Index>().prop_map(Mutation::Truncate),
        (any::<Index>(), any::<u8>()).prop_map(|(i, b)| Mutation::Insert(i, b)),
        any::<Index>().prop_map(Mutation::Remove),
    ]
}

fn apply(mut w: Vec<u8>, m: &Mutation) -> Vec<u8> {
    if w.is_empty() {
        return w;
    }
    match m {
        Mutation::Set(i, b) => {
            let i = i.index(w.len());
            w[i] = *b;
        }
        Mutation::Xor(i, b) => {
            let i = i.index(w.len());
            w[i] ^= *b;
        }
        Mutation::Truncate(i) => w.truncate(i.index(w.len())),
        Mutation::Insert(i, b) => {
            let i = i.index(w.len() + 1);
            w.insert(i, *b);
        }
        Mutation::Remove(i) => {
            let i = i.index(w.len());
            w.remove(i);
        }
    }
    w
}

/// A VAR-NUMBER from the interesting values, sometimes in a non-minimal form.
fn interesting_var_number() -> impl Strategy<Value = Vec<u8>> {
    let value = prop_oneof![
        select(vec![
            0u64,
            1,
            5,
            6,
            7,
            100,
            252,
            253,
            0xFFFF,
            0x1_0000,
            0xFFFF_FFFF,
            0x1_0000_0000,
            u64::MAX,
        ]),
        (0u64..32).prop_map(|k| u64::MAX - k),
        0u64..700,
        any::<u64>(),
    ];
    (value, select(vec![0usize, 0, 0, 3, 5, 9])).prop_map(|(v, width)| {
        let mut out = Vec::new();
        match width {
            3 if v <= 0xFFFF => {
                out.push(253);
                out.extend_from_slice(&(v as u16).to_be_bytes());
            }
            5 if v <= 0xFFFF_FFFF => {
                out.push(254);
                out.extend_from_slice(&(v as u32).to_be_bytes());
            }
            9 => {
                out.push(255);
                out.extend_from_slice(&v.to_be_bytes());
            }
            _ => tlv::write_var_number(&mut out, v),
        }
        out
    })
}

prop_compose! {
    /// A TYPE and LENGTH from interesting values, then some bytes, cut at an arbitrary point.
    fn tlv_header_soup()(
        t in interesting_var_number(),
        l in interesting_var_number(),
        tail in vec(any::<u8>(), 0..40),
        cut in any::<prop::sample::Index>(),
    ) -> Vec<u8> {
        let mut b = t;
        b.extend(l);
        b.extend(tail);
        let n = cut.index(b.len() + 1);
        // Keep the whole buffer half of the time.
        if n % 2 == 0 { b } else { b[..n].to_vec() }
    }
}

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

fn arb_limits() -> impl Strategy<Value = Limits> {
    (
        prop_oneof![0usize..64, 0usize..10_000, Just(usize::MAX)],
        prop_oneof![0usize..4, 0usize..200, Just(usize::MAX)],
        prop_oneof![0usize..16, 0usize..10_000, Just(usize::MAX)],
        any::<bool>(),
    )
        .prop_map(|(p, c, n, v)| Limits {
            max_packet_bytes: p,
            max_name_components: c,
            max_name_bytes: n,
            verify_parameters_digest: v,
        })
}

fn limits() -> Limits {
    Limits::default()
}

/// Canonical order written out: component by component, by type, then value length, then value
/// bytes; a proper prefix first.
fn model_cmp(a: &Name, b: &Name) -> Ordering {
    for (x, y) in a.components.iter().zip(&b.components) {
        let o = x
            .typ
            .cmp(&y.typ)
            .then(x.value.len().cmp(&y.value.len()))
            .then_with(|| x.value.cmp(&y.value));
        if o != Ordering::Equal {
            return o;
        }
    }
    a.len().cmp(&b.len())
}

fn model_is_prefix(a: &Name, b: &Name) -> bool {
    a.len() <= b.len() && a.components[..] == b.components[..a.len()]
}

/// Everything from ApplicationParameters to the end, as `Interest::encode` writes it.
fn interest_tail(i: &Interest) -> Vec<u8> {
    let mut tail = Vec::new();
    if let Some(p) = &i.app_params {
        tlv::write_tlv(&mut tail, 0x24, p);
        if let Some(si) = &i.signature_info {
            si.encode(&mut tail, 0x2C);
        }
        if let Some(sv) = &i.signature_value {
            tlv::write_tlv(&mut tail, 0x2E, sv);
        }
    }
    tail
}

/// Checks that every strict prefix of a whole element is "need more" to `frame_len`, and the whole
/// element is exactly one frame.
fn check_framing(w: &[u8]) -> Result<(), TestCaseError> {
    prop_assert_eq!(frame_len(w, wire::MAX_NDN_PACKET_BYTES), Ok(Some(w.len())));
    let mut stream = w.to_vec();
    stream.extend_from_slice(&[0x05, 0x00]);
    prop_assert_eq!(
        frame_len(&stream, wire::MAX_NDN_PACKET_BYTES),
        Ok(Some(w.len()))
    );
    for n in 0..w.len() {
        prop_assert_eq!(frame_len(&w[..n], wire::MAX_NDN_PACKET_BYTES), Ok(None));
    }
    Ok(())
}

/// Decodes `bytes` as a packet; never panics; an error points inside (or just past) the input;
/// a success converts to an owned packet whose re-encoding decodes and is a fixed point.
fn check_robust(bytes: &[u8]) -> Result<(), TestCaseError> {
    let l = limits();
    match PacketView::decode(bytes, &l) {
        Err(e) => prop_assert!(
            e.offset <= bytes.len(),
            "error {e} beyond the {}-byte input",
            bytes.len()
        ),
        Ok(v) => {
            exercise(&v, bytes.len(), &l)?;
            let p = v.to_packet();
            let w1 = p.to_wire();
            let v1 = PacketView::decode(&w1, &l);
            prop_assert!(
                v1.is_ok(),
                "re-encoding of a decoded packet fails: {:?}",
                v1
            );
            let w2 = v1.unwrap().to_packet().to_wire();
            prop_assert_eq!(w2, w1, "re-encoding is not a fixed point");
        }
    }
    let _ = PacketView::peek_type(bytes);
    let _ = NameView::decode(bytes, &l).map(|n| (n.to_name(), n.to_string()));
    for max in [0, 10, wire::MAX_NDN_PACKET_BYTES, usize::MAX] {
        if let Ok(Some(n)) = frame_len(bytes, max) {
            prop_assert!(n <= bytes.len() && n <= max);
        }
    }
    Ok(())
}

/// Calls the accessors of a decoded packet (they must not panic on anything decode accepted).
fn exercise(v: &PacketView<'_>, len: usize, l: &Limits) -> Result<(), TestCaseError> {
    match v {
        PacketView::Interest(i) => {
            let _ = (i.name().to_string(), i.effective_lifetime_ms());
            // The last component recorded while validating is the iterator's last.
            prop_assert_eq!(i.name().last(), i.name().components().last());
            for h in i.forwarding_hint() {
                prop_assert_eq!(h.last(), h.components().last());
            }
            if let Some(off) = i.hop_limit_value_offset() {
                prop_assert_eq!(Some(i.wire()[off]), i.hop_limit());
            }
        }
        PacketView::Data(d) => {
            let _ = (d.verify_digest_sha256(), d.implicit_digest(), d.to_data());
            prop_assert!(d.signed_portion().len() <= d.wire().len());
        }
        PacketView::Lp(lp) => {
            let _: Vec<u64> = lp.acks().collect();
            if let Some(off) = lp.fragment_offset() {
                prop_assert!(off <= len);
            }
            match lp.network_packet(l) {
                Some(Err(e)) => prop_assert!(e.offset <= len, "fragment error {e} beyond input"),
                Some(Ok(inner)) => {
                    prop_assert!(!matches!(inner, PacketView::Lp(_)));
                    exercise(&inner, len, l)?;
                }
                None => {}
            }
        }
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// 1. Names
// ---------------------------------------------------------------------------------------------

proptest! {
    #![proptest_config(config())]

    /// Name -> TLV -> NameView -> Name is the identity, and the view agrees on length and
    /// components.
    #[test]
    fn name_wire_round_trip(n in name(0..20, 12, true, true)) {
        let w = n.to_wire();
        let v = NameView::decode(&w, &limits()).unwrap();
        prop_assert_eq!(v.len(), n.len());
        prop_assert_eq!(v.is_empty(), n.is_empty());
        prop_assert_eq!(v.wire(), &w[..]);
        prop_assert_eq!(v.to_name(), n.clone());
        prop_assert_eq!(Name::decode(&w).unwrap(), n.clone());
        for (i, c) in v.components().enumerate() {
            prop_assert_eq!(c.to_component(), n.components[i].clone());
            prop_assert_eq!(v.get(i), Some(c));
        }
        prop_assert_eq!(v.last().map(|c| c.to_component()), n.components.last().cloned());
        // The view prints the same URI as the owned name.
        prop_assert_eq!(v.to_string(), n.to_string());
    }

    /// Name -> URI -> Name is the identity.
    #[test]
    fn name_uri_round_trip(n in name(0..20, 12, true, true)) {
        let uri = n.to_string();
        let back = Name::from_uri(&uri);
        prop_assert_eq!(back, Ok(n.clone()), "URI {}", uri);
        // The `ndn:` scheme and a trailing slash are accepted too.
        prop_assert_eq!(Name::from_uri(&format!("ndn:{uri}")), Ok(n.clone()));
        if !n.is_empty() {
            prop_assert_eq!(Name::from_uri(&format!("{uri}/")), Ok(n.clone()));
        }
        for c in &n.components {
            prop_assert_eq!(Component::from_uri(&c.to_string()), Ok(c.clone()));
        }
    }

    /// Ord on Name, Ord on NameView and the written-out canonical order agree, and so do the
    /// equalities.
    #[test]
    fn name_canonical_order(
        (a, b) in prop_oneof![
            related_names(),
            (name(0..6, 6, false, true), name(0..6, 6, false, true)),
        ]
    ) {
        let (wa, wb) = (a.to_wire(), b.to_wire());
        let (va, vb) = (
            NameView::decode(&wa, &limits()).unwrap(),
            NameView::decode(&wb, &limits()).unwrap(),
        );
        let expect = model_cmp(&a, &b);
        prop_assert_eq!(a.cmp(&b), expect);
        prop_assert_eq!(va.cmp(&vb), expect);
        prop_assert_eq!(b.cmp(&a), expect.reverse());
        prop_assert_eq!(vb.cmp(&va), expect.reverse());
        prop_assert_eq!(a == b, expect == Ordering::Equal);
        prop_assert_eq!(va == vb, expect == Ordering::Equal);
        for (x, y) in a.components.iter().zip(&b.components) {
            prop_assert_eq!(x.cmp(y), x.as_view().cmp(&y.as_view()));
        }
    }

    /// NameView::is_prefix_of agrees with Name::is_prefix_of and with the definition.
    #[test]
    fn name_prefix_agrees(
        (a, b) in prop_oneof![
            3 => related_names(),
            1 => (name(0..6, 6, false, true), name(0..6, 6, false, true)),
        ]
    ) {
        let (wa, wb) = (a.to_wire(), b.to_wire());
        let (va, vb) = (
            NameView::decode(&wa, &limits()).unwrap(),
            NameView::decode(&wb, &limits()).unwrap(),
        );
        prop_assert_eq!(a.is_prefix_of(&b), model_is_prefix(&a, &b));
        prop_assert_eq!(va.is_prefix_of(&vb), model_is_prefix(&a, &b));
        prop_assert_eq!(vb.is_prefix_of(&va), model_is_prefix(&b, &a));
        prop_assert!(va.is_prefix_of(&va) && a.is_prefix_of(&a));
        let p = b.prefix(a.len());
        prop_assert!(p.is_prefix_of(&b));
    }
}

// ---------------------------------------------------------------------------------------------
// 2. Interests
// ---------------------------------------------------------------------------------------------

proptest! {
    #![proptest_config(config())]

    /// Interest -> encode -> InterestView -> Interest -> encode gives the same bytes, and every
    /// field decodes to what was put in (the name gaining a ParametersSha256Digest component when
    /// there are ApplicationParameters).
    #[test]
    fn interest_round_trip(i in interest()) {
        let w = i.to_wire();
        let v = InterestView::decode(&w, &limits());
        prop_assert!(v.is_ok(), "decode failed: {:?}", v);
        let v = v.unwrap();
        let back = v.to_interest();
        prop_assert_eq!(back.to_wire(), w.clone());
        prop_assert_eq!(Interest::decode(&w).unwrap(), back.clone());

        let mut expect_name = i.name.clone();
        if i.app_params.is_some() {
            let tail = interest_tail(&i);
            prop_assert!(w.ends_with(&tail));
            expect_name.push(Component::parameters_digest(wire::sha256(&[&tail])));
        }
        prop_assert_eq!(&back.name, &expect_name);
        prop_assert_eq!(v.name().to_name(), expect_name.clone());
        prop_assert_eq!(v.can_be_prefix(), i.can_be_prefix);
        prop_assert_eq!(v.must_be_fresh(), i.must_be_fresh);
        prop_assert_eq!(&back.forwarding_hint, &i.forwarding_hint);
        prop_assert_eq!(v.nonce(), i.nonce);
        prop_assert_eq!(v.lifetime_ms(), i.lifetime_ms);
        prop_assert_eq!(v.effective_lifetime_ms(), i.lifetime_ms.unwrap_or(4000));
        prop_assert_eq!(v.hop_limit(), i.hop_limit);
        if let Some(off) = v.hop_limit_value_offset() {
            prop_assert_eq!(Some(w[off]), i.hop_limit);
        }
        prop_assert_eq!(v.app_params(), i.app_params.as_deref());
        prop_assert_eq!(
            v.signature_info().map(|s: SignatureInfoView<'_>| s.to_signature_info()),
            i.signature_info.clone()
        );
        prop_assert_eq!(v.signature_value(), i.signature_value.as_deref());
        // With the digest component in the name, the decoded Interest is a fixed point.
        let mut with_digest = i.clone();
        with_digest.name = expect_name;
        prop_assert_eq!(back, with_digest);

        // The generic entry point and stream framing see the same packet.
        prop_assert!(matches!(PacketView::decode(&w, &limits()), Ok(PacketView::Interest(_))));
        check_framing(&w)?;
    }
}

// ---------------------------------------------------------------------------------------------
// 3. Data
// ---------------------------------------------------------------------------------------------

proptest! {
    #![proptest_config(config())]

    /// Data -> encode -> DataView -> Data is the identity.
    #[test]
    fn data_round_trip(d in data()) {
        let w = d.to_wire();
        let v = DataView::decode(&w, &limits());
        prop_assert!(v.is_ok(), "decode failed: {:?}", v);
        let v = v.unwrap();
        prop_assert_eq!(v.to_data(), d.clone());
        prop_assert_eq!(Data::decode(&w).unwrap(), d.clone());
        prop_assert_eq!(v.to_data().to_wire(), w.clone());
        prop_assert_eq!(v.content(), d.content.as_deref());
        prop_assert_eq!(v.signature_value(), &d.signature_value[..]);
        prop_assert_eq!(v.implicit_digest(), wire::sha256(&[&w]));
        let full = d.full_name();
        prop_assert_eq!(full.len(), d.name.len() + 1);
        prop_assert_eq!(&full.components[d.name.len()].value[..], &v.implicit_digest()[..]);
        // The signed portion is the Data value minus the SignatureValue element.
        let mut sv = Vec::new();
        tlv::write_tlv(&mut sv, 0x17, &d.signature_value);
        let outer = tlv::Reader::new(&w).read().unwrap();
        prop_assert_eq!(v.signed_portion(), &w[outer.value_offset..w.len() - sv.len()]);
        prop_assert!(matches!(PacketView::decode(&w, &limits()), Ok(PacketView::Data(_))));
        check_framing(&w)?;
    }

    /// DigestSha256: a signed Data verifies; flipping any bit pattern of any one Content byte
    /// makes it fail to verify.
    #[test]
    fn data_digest_signature(
        mut d in data(),
        c in vec(any::<u8>(), 1..500),
        at in any::<prop::sample::Index>(),
        mask in 1u8..=255,
    ) {
        d.content = Some(c.clone());
        d.sign_digest_sha256();
        prop_assert_eq!(d.signature_info.signature_type, signature_type::DIGEST_SHA256);
        let w = d.to_wire();
        let v = DataView::decode(&w, &limits()).unwrap();
        prop_assert!(v.verify_digest_sha256());
        prop_assert_eq!(v.to_data(), d.clone());

        // Locate the Content value: it ends where SignatureInfo and SignatureValue begin.
        let mut trailer = Vec::new();
        d.signature_info.encode(&mut trailer, 0x16);
        tlv::write_tlv(&mut trailer, 0x17, &d.signature_value);
        let end = w.len() - trailer.len();
        let start = end - c.len();
        prop_assert_eq!(&w[start..end], &c[..]);

        let mut bad = w.clone();
        bad[start + at.index(c.len())] ^= mask;
        // (Decoding cannot fail here, but if it did that would be acceptable too.)
        if let Ok(v) = DataView::decode(&bad, &limits()) {
            prop_assert!(!v.verify_digest_sha256());
        }
        // A different signature type never verifies as DigestSha256.
        let mut other = d.clone();
        other.signature_info.signature_type = 1;
        let w = other.to_wire();
        prop_assert!(!DataView::decode(&w, &limits()).unwrap().verify_digest_sha256());
    }
}

// ---------------------------------------------------------------------------------------------
// 4. LpPackets
// ---------------------------------------------------------------------------------------------

proptest! {
    #![proptest_config(config())]

    /// LpPacket -> encode -> LpPacketView -> LpPacket is the identity.
    #[test]
    fn lp_packet_round_trip(lp in lp_packet()) {
        let w = lp.to_wire();
        let v = LpPacketView::decode(&w, &limits());
        prop_assert!(v.is_ok(), "decode failed: {:?}", v);
        let v = v.unwrap();
        prop_assert_eq!(v.to_lp_packet(), lp.clone());
        prop_assert_eq!(LpPacket::decode(&w).unwrap(), lp.clone());
        prop_assert_eq!(v.to_lp_packet().to_wire(), w.clone());
        prop_assert_eq!(v.fragment(), lp.fragment.as_deref());
        if let (Some(off), Some(f)) = (v.fragment_offset(), &lp.fragment) {
            prop_assert_eq!(&w[off..off + f.len()], &f[..]);
        }
        prop_assert_eq!(v.is_fragmented(), lp.frag_count.is_some_and(|c| c > 1));
        prop_assert_eq!(v.acks().collect::<Vec<_>>(), lp.acks.clone());
        prop_assert!(matches!(PacketView::decode(&w, &limits()), Ok(PacketView::Lp(_))));
        check_framing(&w)?;
    }

    /// An Interest or Data carried whole in an LpPacket comes back out unchanged.
    #[test]
    fn lp_carries_network_packets(
        mut lp in lp_packet(),
        inner in prop_oneof![
            interest().prop_map(Packet::Interest),
            data().prop_map(Packet::Data),
        ],
    ) {
        let iw = inner.to_wire();
        lp.fragment = Some(iw.clone());
        lp.frag_index = None;
        lp.frag_count = None;
        let w = lp.to_wire();
        let Ok(PacketView::Lp(v)) = PacketView::decode(&w, &limits()) else {
            return Err(TestCaseError::fail("not an LpPacket"));
        };
        let net = v.network_packet(&limits());
        prop_assert!(matches!(net, Some(Ok(_))), "{:?}", net);
        let pv = net.unwrap().unwrap();
        prop_assert_eq!(pv.to_packet().to_wire(), iw.clone());
        let off = v.fragment_offset().unwrap();
        let inner_off = match pv {
            PacketView::Interest(i) => i.offset(),
            PacketView::Data(d) => d.offset(),
            PacketView::Lp(_) => usize::MAX,
        };
        prop_assert_eq!(inner_off, off);
        prop_assert_eq!(&w[off..off + iw.len()], &iw[..]);
    }
}

// ---------------------------------------------------------------------------------------------
// 5. Robustness
// ---------------------------------------------------------------------------------------------

proptest! {
    #![proptest_config(config())]

    /// Arbitrary bytes: decoding never panics and errors point inside the input.
    #[test]
    fn decode_arbitrary_bytes(bytes in vec(any::<u8>(), 0..600)) {
        check_robust(&bytes)?;
    }

    /// Arbitrary bytes behind a plausible packet header (so that the decoders get past the
    /// outer element more often).
    #[test]
    fn decode_arbitrary_value(
        typ in select(vec![0x05u8, 0x06, 0x64]),
        value in vec(
            prop_oneof![
                any::<u8>(),
                select(vec![0x07u8, 0x08, 0x01, 0x02, 0x0A, 0x14, 0x15, 0x16, 0x17, 0x1B,
                            0x1C, 0x1E, 0x24, 0x2C, 0x2E, 0x50, 0x51, 0x62, 0xFD])
            ],
            0..250,
        ),
    ) {
        let mut b = Vec::new();
        tlv::write_tlv(&mut b, u32::from(typ), &value);
        check_robust(&b)?;
    }

    /// Valid encodings with one byte changed, inserted or removed, or truncated.
    #[test]
    fn decode_mutated_packets(w in valid_packet_wire(), ms in vec(mutation(), 1..=3)) {
        let mut b = w;
        for m in &ms {
            b = apply(b, m);
        }
        check_robust(&b)?;
    }

    /// Any limits: decoding valid or damaged packets never panics and errors point inside the
    /// input; a packet over a limit is rejected.
    #[test]
    fn decode_with_arbitrary_limits(
        w in valid_packet_wire(),
        ms in vec(mutation(), 0..=2),
        l in arb_limits(),
    ) {
        let mut b = w;
        for m in &ms {
            b = apply(b, m);
        }
        match PacketView::decode(&b, &l) {
            Err(e) => prop_assert!(e.offset <= b.len(), "error {e} beyond the {}-byte input", b.len()),
            Ok(v) => {
                prop_assert!(b.len() <= l.max_packet_bytes);
                exercise(&v, b.len(), &l)?;
                let _ = v.to_packet();
            }
        }
    }

    /// Every prefix of a valid encoding is rejected (or, for frame_len, "need more").
    #[test]
    fn truncated_packets_rejected(w in valid_packet_wire(), at in any::<prop::sample::Index>()) {
        let n = at.index(w.len());
        let b = &w[..n];
        prop_assert!(PacketView::decode(b, &limits()).is_err());
        prop_assert_eq!(frame_len(b, wire::MAX_NDN_PACKET_BYTES), Ok(None));
        check_robust(b)?;
    }

    /// frame_len never panics, and a frame it reports is the announced TYPE+LENGTH+VALUE size
    /// and fits in the buffer.
    #[test]
    fn frame_len_sane(
        b in prop_oneof![tlv_header_soup(), vec(any::<u8>(), 0..600)],
        max in prop_oneof![
            Just(wire::MAX_NDN_PACKET_BYTES),
            Just(usize::MAX),
            Just(0usize),
            any::<usize>(),
        ],
    ) {
        if let Ok(Some(n)) = frame_len(&b, max) {
            prop_assert!(n <= b.len() && n <= max);
            // The frame is exactly one TLV element.
            let mut r = tlv::Reader::new(&b[..n]);
            let e = r.read();
            prop_assert!(e.is_ok() && r.is_empty(), "frame_len said {n}, element {:?}", e);
        }
        check_robust(&b)?;
    }

    /// NDN URIs: parsing arbitrary text never panics, and a parsed name prints to a URI that
    /// parses back to it.
    #[test]
    fn uri_parse_arbitrary(
        s in prop_oneof![
            any::<String>(),
            "(ndn:)?(/[a-z0-9.%=A-F~-]{0,6}){0,5}/?",
            "(/(seg|v|t|off|seq|sha256digest|params-sha256|8|1|2|65535|65536|0)=[0-9a-f.%]{0,66}){1,3}",
        ]
    ) {
        if let Ok(n) = Name::from_uri(&s) {
                let uri = n.to_string();
            prop_assert_eq!(Name::from_uri(&uri), Ok(n), "{:?} -> {}", s, uri);
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Regressions (minimal inputs found by the properties above, now fixed)
// ---------------------------------------------------------------------------------------------

/// Regression (found by the properties): `/50=%00a` (Segment component `32 02 00 61`) prints as `/seg=97`, which parses
/// back as `32 01 61`. The keyword form should be used only for the shortest encoding.
#[test]
fn uri_keeps_non_shortest_number_width() {
    for value in [
        vec![0x00, 0x61],
        vec![0, 0, 0, 1],
        vec![0, 0, 0, 0, 0, 0, 0, 0],
    ] {
        let n = Name::new().with(Component { typ: 0x32, value });
        let uri = n.to_string();
        assert_eq!(Name::from_uri(&uri), Ok(n), "URI {uri}");
    }
}

/// Regression (found by the properties): an element header announcing a LENGTH near `u64::MAX` overflows `frame_len`'s
/// size computation: "attempt to add with overflow" with overflow checks; without them the sum
/// wraps and a 10-byte buffer is reported as holding a whole 9-byte frame. Expected: Oversize.
#[test]
fn frame_len_length_overflow_is_oversize() {
    let mut b = vec![0x05, 0xFF];
    b.extend_from_slice(&u64::MAX.to_be_bytes());
    for max in [wire::MAX_NDN_PACKET_BYTES, usize::MAX] {
        let r = std::panic::catch_unwind(|| frame_len(&b, max));
        assert!(
            matches!(
                r,
                Ok(Err(wire::Error {
                    kind: wire::ErrorKind::Oversize,
                    ..
                }))
            ),
            "frame_len({b:02x?}, {max}) = {r:?}"
        );
    }
}
