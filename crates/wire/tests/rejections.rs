//! One rejection case per error class, through the single entry point a face uses
//! (`PacketView::decode`), each with the exact error kind and byte offset expected.

use wire::{Error, ErrorKind as K, Limits, PacketView};

fn decode(bytes: &[u8]) -> Result<(), Error> {
    let limits = Limits::default();
    match PacketView::decode(bytes, &limits)? {
        PacketView::Lp(lp) => match lp.network_packet(&limits) {
            Some(r) => r.map(|_| ()),
            None => Ok(()),
        },
        _ => Ok(()),
    }
}

/// Interest /a with the given elements after the Name.
fn interest_with(tail: &[u8]) -> Vec<u8> {
    let mut v = vec![0x05, (5 + tail.len()) as u8, 0x07, 0x03, 0x08, 0x01, b'a'];
    v.extend_from_slice(tail);
    v
}

#[test]
fn every_error_class_is_rejected_at_the_right_offset() {
    let nonce = [0x0A, 0x04, 1, 2, 3, 4];
    let cases: Vec<(&str, Vec<u8>, K, usize)> = vec![
        ("empty input", vec![], K::Truncated, 0),
        (
            "truncated TLV-LENGTH",
            vec![0x05, 0xFD, 0x01],
            K::Truncated,
            1,
        ),
        (
            "length past the buffer",
            vec![0x05, 0x09, 0x07, 0x03],
            K::LengthExceedsBuffer,
            0,
        ),
        (
            "non-minimal TLV-LENGTH",
            vec![0x05, 0xFD, 0x00, 0x05, 0x07, 0x03, 0x08, 0x01, b'a'],
            K::NonMinimalVarNumber,
            1,
        ),
        (
            "non-minimal TLV-TYPE inside",
            interest_with(&[0xFD, 0x00, 0x0A, 0x04, 1, 2, 3, 4]),
            K::NonMinimalVarNumber,
            7,
        ),
        ("TLV-TYPE 0", vec![0x00, 0x00], K::InvalidType(0), 0),
        (
            "TLV-TYPE above 2^32-1",
            vec![0xFF, 0, 0, 0, 1, 0, 0, 0, 0, 0x00],
            K::InvalidType(1 << 32),
            0,
        ),
        (
            "trailing bytes",
            [interest_with(&nonce), vec![0x00]].concat(),
            K::TrailingBytes,
            13,
        ),
        ("not a packet", vec![0x07, 0x00], K::NotAPacket(7), 0),
        (
            "zero-component Interest name",
            vec![0x05, 0x02, 0x07, 0x00],
            K::EmptyName,
            2,
        ),
        (
            "Interest without name",
            vec![0x05, 0x06, 0x0A, 0x04, 1, 2, 3, 4],
            K::Missing(7),
            2,
        ),
        (
            "nonce of 3 bytes",
            interest_with(&[0x0A, 0x03, 1, 2, 3]),
            K::BadLength { typ: 0x0A },
            7,
        ),
        (
            "nonce of 5 bytes",
            interest_with(&[0x0A, 0x05, 1, 2, 3, 4, 5]),
            K::BadLength { typ: 0x0A },
            7,
        ),
        (
            "hop limit of 0 bytes",
            interest_with(&[0x22, 0x00]),
            K::BadLength { typ: 0x22 },
            7,
        ),
        (
            "lifetime of 3 bytes",
            interest_with(&[0x0C, 0x03, 0, 0, 1]),
            K::BadNonNegativeInteger,
            9,
        ),
        (
            "unknown critical (odd)",
            interest_with(&[0x41, 0x00]),
            K::UnknownCritical(0x41),
            7,
        ),
        (
            "unknown critical (<32)",
            interest_with(&[0x0F, 0x00]),
            K::UnknownCritical(0x0F),
            7,
        ),
        (
            "out-of-order critical",
            interest_with(&[0x0A, 0x04, 1, 2, 3, 4, 0x21, 0x00]),
            K::OutOfOrder(0x21),
            13,
        ),
        (
            "repeated nonce",
            interest_with(&[0x0A, 0x04, 1, 2, 3, 4, 0x0A, 0x04, 1, 2, 3, 4]),
            K::OutOfOrder(0x0A),
            13,
        ),
        (
            "component type 0",
            vec![0x05, 0x04, 0x07, 0x02, 0x00, 0x00],
            K::InvalidType(0),
            4,
        ),
        (
            "implicit digest of 1 byte",
            vec![0x05, 0x05, 0x07, 0x03, 0x01, 0x01, 0xAA],
            K::BadLength { typ: 1 },
            4,
        ),
        (
            "params digest without parameters",
            {
                let mut n = vec![0x07, 0x22, 0x02, 0x20];
                n.extend_from_slice(&[0u8; 32]);
                let mut v = vec![0x05, n.len() as u8];
                v.extend_from_slice(&n);
                v
            },
            K::BadParametersDigest,
            4,
        ),
        (
            "bad params digest",
            {
                let mut n = vec![0x07, 0x22, 0x02, 0x20];
                n.extend_from_slice(&[0u8; 32]);
                n.extend_from_slice(&[0x24, 0x01, 0x00]);
                let mut v = vec![0x05, n.len() as u8];
                v.extend_from_slice(&n);
                v
            },
            K::BadParametersDigest,
            4,
        ),
        (
            "Data without SignatureInfo",
            vec![0x06, 0x05, 0x07, 0x03, 0x08, 0x01, b'a'],
            K::Missing(0x16),
            0,
        ),
        (
            "LpPacket field after Fragment",
            vec![0x64, 0x06, 0x50, 0x01, 0xAA, 0x53, 0x01, 0x01],
            K::OutOfOrder(0x53),
            5,
        ),
        (
            "LpPacket unknown non-ignorable field",
            vec![0x64, 0x04, 0xFD, 0x03, 0x21, 0x00],
            K::UnknownCritical(801),
            2,
        ),
        (
            "LpPacket fragment holding a bad Interest",
            vec![0x64, 0x06, 0x50, 0x04, 0x05, 0x02, 0x07, 0x00],
            K::EmptyName,
            6,
        ),
        (
            "oversize packet",
            {
                let mut v = vec![0x06, 0xFD, 0x22, 0x61];
                v.resize(4 + 8801, 0);
                v
            },
            K::Oversize,
            0,
        ),
    ];
    for (what, bytes, kind, offset) in cases {
        let got = decode(&bytes);
        assert_eq!(got, Err(Error::new(kind, offset)), "{what}: {bytes:02x?}");
    }
}

#[test]
fn name_limits_are_configurable() {
    // 40 one-byte components: accepted by default, rejected with a 32-component limit.
    let mut name = Vec::new();
    for _ in 0..40 {
        name.extend_from_slice(&[0x08, 0x01, b'x']);
    }
    let mut pkt = vec![0x05, (name.len() + 2 + 6) as u8, 0x07, name.len() as u8];
    pkt.extend_from_slice(&name);
    pkt.extend_from_slice(&[0x0A, 0x04, 1, 2, 3, 4]);
    assert!(PacketView::decode(&pkt, &Limits::default()).is_ok());
    let tight = Limits {
        max_name_components: 32,
        ..Limits::default()
    };
    let e = PacketView::decode(&pkt, &tight).unwrap_err();
    assert_eq!(e, Error::new(K::TooManyComponents, 4 + 32 * 3));
    let short = Limits {
        max_name_bytes: 100,
        ..Limits::default()
    };
    assert_eq!(
        PacketView::decode(&pkt, &short).unwrap_err(),
        Error::new(K::NameTooLong, 2)
    );
}
