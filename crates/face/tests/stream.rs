//! Stream framing: split packets, oversize and bad headers, real Unix and TCP sockets.

use std::io::{self, Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::os::unix::net::UnixStream;
use std::thread;
use std::time::{Duration, Instant};

use face::stream::DEFAULT_READ_CHUNK;
use face::{FramingError, StreamFramer};
use proptest::prelude::*;
use wire::{Data, ErrorKind, Interest, Name, MAX_NDN_PACKET_BYTES};

const TIMEOUT: Duration = Duration::from_secs(10);

/// A Data packet of exactly `size` bytes (for sizes of a Data with name `/s/<seed>` and up).
fn data_of_size(size: usize, seed: u64) -> Vec<u8> {
    let name = Name::from_uri(&format!("/s/{seed}")).unwrap();
    let mut content = size.saturating_sub(40);
    for _ in 0..8 {
        let len = Data::new(name.clone(), vec![seed as u8; content])
            .to_wire()
            .len();
        if len == size {
            return Data::new(name, vec![seed as u8; content]).to_wire();
        }
        content = (content as i64 + size as i64 - len as i64).max(0) as usize;
    }
    // Encoding-width boundaries can make a size unreachable; take the closest below.
    Data::new(name, vec![seed as u8; content]).to_wire()
}

/// Interests and Data of several sizes, including one of exactly 8800 bytes.
fn sample_packets() -> Vec<Vec<u8>> {
    let mut v = vec![
        Interest::new(Name::from_uri("/a").unwrap(), [1; 4]).to_wire(),
        Interest::new(
            Name::from_uri("/ndn/edu/ucla/cascade/video/v=1").unwrap(),
            [2; 4],
        )
        .to_wire(),
        data_of_size(100, 1),
        data_of_size(253, 2),
        data_of_size(1500, 3),
        data_of_size(MAX_NDN_PACKET_BYTES, 4),
        Interest::new(Name::from_uri("/z").unwrap(), [3; 4]).to_wire(),
    ];
    v.push(data_of_size(4000, 5));
    v
}

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// Feeds `chunks` one after another, draining after each push; returns the packets.
fn frame_chunks<'a>(
    f: &mut StreamFramer,
    chunks: impl IntoIterator<Item = &'a [u8]>,
) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    for chunk in chunks {
        let mut rest = chunk;
        while !rest.is_empty() {
            let n = f.push_bytes(rest);
            assert!(n > 0, "no room after draining");
            rest = &rest[n..];
            while let Some(p) = f.next_packet().unwrap() {
                out.push(p.to_vec());
            }
        }
    }
    out
}

#[test]
fn exact_8800_byte_data_is_built() {
    assert_eq!(data_of_size(MAX_NDN_PACKET_BYTES, 4).len(), 8800);
}

#[test]
fn split_at_every_boundary() {
    let pkts = sample_packets();
    for p in &pkts {
        for cut in 0..=p.len() {
            let mut f = StreamFramer::default();
            let out = frame_chunks(&mut f, [&p[..cut], &p[cut..]]);
            assert_eq!(out.len(), 1, "cut {cut} of {}", p.len());
            assert_eq!(&out[0], p);
            assert_eq!(f.buffered(), 0);
        }
    }
    // The whole sequence, cut at every point of the stream.
    let stream = pkts.concat();
    for cut in (0..=stream.len()).step_by(7).chain([stream.len()]) {
        let mut f = StreamFramer::default();
        assert_eq!(frame_chunks(&mut f, [&stream[..cut], &stream[cut..]]), pkts);
    }
}

#[test]
fn many_packets_in_one_read() {
    let small: Vec<Vec<u8>> = (0..200)
        .map(|i| Interest::new(Name::from_uri(&format!("/m/{i}")).unwrap(), [i as u8; 4]).to_wire())
        .collect();
    let stream = small.concat();
    assert!(stream.len() <= DEFAULT_READ_CHUNK);
    let mut f = StreamFramer::default();
    let mut src = &stream[..];
    assert_eq!(f.fill_from(&mut src).unwrap(), stream.len());
    let mut n = 0;
    while let Some(p) = f.next_packet().unwrap() {
        assert_eq!(p, &small[n][..]);
        n += 1;
    }
    assert_eq!(n, 200);
    assert_eq!(f.counters().packets, 200);
    assert_eq!(f.counters().bytes, stream.len() as u64);
    assert_eq!(f.counters().errors, 0);
}

#[test]
fn oversize_is_an_error_before_the_bytes_arrive() {
    let ok = data_of_size(100, 9);
    // Interest of LENGTH 8797: 4 header bytes + 8797 = 8801.
    let mut f = StreamFramer::default();
    f.push_bytes(&ok);
    f.push_bytes(&[0x05, 0xFD, 0x22]);
    assert_eq!(f.next_packet().unwrap().unwrap(), &ok[..]);
    assert_eq!(f.next_packet().unwrap(), None); // LENGTH not in yet
    f.push_bytes(&[0x5D]);
    let e = f.next_packet().unwrap_err();
    assert_eq!(
        e,
        FramingError::Oversize {
            announced: 8801,
            max: 8800,
            stream_offset: ok.len() as u64,
        }
    );
    assert_eq!(f.counters().errors, 1);
    // 8800 exactly is fine.
    let mut f = StreamFramer::default();
    f.push_bytes(&[0x05, 0xFD, 0x22, 0x5C]);
    assert_eq!(f.next_packet().unwrap(), None);
    // A 9-byte LENGTH near u64::MAX saturates.
    let mut f = StreamFramer::default();
    f.push_bytes(&[0x06, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF]);
    assert!(matches!(
        f.next_packet().unwrap_err(),
        FramingError::Oversize {
            announced: u64::MAX,
            ..
        }
    ));
}

#[test]
fn bad_headers_are_errors() {
    let cases: [(&[u8], ErrorKind); 3] = [
        (&[0x00, 0x01, 0x00], ErrorKind::InvalidType(0)),
        (
            &[0x06, 0xFD, 0x00, 0x01, 0x00],
            ErrorKind::NonMinimalVarNumber,
        ),
        (&[0xFD, 0x00, 0x05, 0x00], ErrorKind::NonMinimalVarNumber),
    ];
    for (bytes, kind) in cases {
        let mut f = StreamFramer::default();
        f.push_bytes(bytes);
        let e = f.next_packet().unwrap_err();
        assert_eq!(
            e,
            FramingError::BadHeader {
                kind,
                stream_offset: 0
            },
            "{bytes:02x?}"
        );
        assert_eq!(f.next_packet().unwrap_err(), e);
        assert_eq!(f.error(), Some(e));
        assert_eq!(f.push_bytes(&[1]), 0);
    }
}

/// 1000 packets of varied size (deterministic).
fn thousand_packets() -> Vec<Vec<u8>> {
    let mut rng = Rng(0x1234_5678_9ABC_DEF1);
    (0..1000u64)
        .map(|i| match rng.below(4) {
            0 => Interest::new(Name::from_uri(&format!("/i/{i}")).unwrap(), [i as u8; 4]).to_wire(),
            1 => data_of_size(60 + rng.below(1400), i),
            2 => data_of_size(1500 + rng.below(7300), i),
            _ => data_of_size(MAX_NDN_PACKET_BYTES, i),
        })
        .collect()
}

/// Writes `stream` in random-sized chunks, then closes the write side.
fn write_chunks<W: Write>(w: &mut W, stream: &[u8], seed: u64) -> io::Result<()> {
    let mut rng = Rng(seed);
    let mut rest = stream;
    while !rest.is_empty() {
        let n = (1 + rng.below(20_000)).min(rest.len());
        w.write_all(&rest[..n])?;
        rest = &rest[n..];
    }
    w.flush()
}

/// Reads until end of stream through `fill_from`, bounded in time.
fn read_all<R: Read>(r: &mut R) -> Vec<Vec<u8>> {
    let deadline = Instant::now() + TIMEOUT;
    let mut f = StreamFramer::default();
    let mut out = Vec::new();
    loop {
        assert!(Instant::now() < deadline, "stream test timed out");
        match f.fill_from(r) {
            Ok(0) => break,
            Ok(_) => {}
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => panic!("read failed: {e}"),
        }
        while let Some(p) = f.next_packet().unwrap() {
            out.push(p.to_vec());
        }
    }
    assert_eq!(f.buffered(), 0, "truncated element at end of stream");
    out
}

#[test]
fn unix_stream_pair_carries_1000_packets() {
    let pkts = thousand_packets();
    let stream = pkts.concat();
    let (mut a, mut b) = UnixStream::pair().unwrap();
    a.set_write_timeout(Some(TIMEOUT)).unwrap();
    b.set_read_timeout(Some(TIMEOUT)).unwrap();
    let writer = thread::spawn(move || {
        write_chunks(&mut a, &stream, 77).unwrap();
        a.shutdown(Shutdown::Write).unwrap();
    });
    let out = read_all(&mut b);
    writer.join().unwrap();
    assert_eq!(out.len(), 1000);
    assert!(out == pkts);
}

#[test]
fn tcp_loopback_carries_1000_packets() {
    let pkts = thousand_packets();
    let stream = pkts.concat();
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let writer = thread::spawn(move || {
        let mut s = TcpStream::connect_timeout(&addr, TIMEOUT).unwrap();
        s.set_write_timeout(Some(TIMEOUT)).unwrap();
        s.set_nodelay(true).unwrap();
        write_chunks(&mut s, &stream, 99).unwrap();
        s.shutdown(Shutdown::Write).unwrap();
    });
    let (mut s, _) = listener.accept().unwrap();
    s.set_read_timeout(Some(TIMEOUT)).unwrap();
    let out = read_all(&mut s);
    writer.join().unwrap();
    assert_eq!(out.len(), 1000);
    assert!(out == pkts);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Any sequence of valid packets, cut at random points, comes out identical.
    #[test]
    fn random_cuts_reassemble(
        specs in prop::collection::vec((0u8..3, 1usize..MAX_NDN_PACKET_BYTES + 1, any::<u32>()), 1..24),
        cuts in prop::collection::vec(1usize..12_000, 0..40),
    ) {
        let pkts: Vec<Vec<u8>> = specs
            .iter()
            .enumerate()
            .map(|(i, &(kind, size, nonce))| match kind {
                0 => Interest::new(
                    Name::from_uri(&format!("/p/{i}/{size}")).unwrap(),
                    nonce.to_be_bytes(),
                )
                .to_wire(),
                _ => data_of_size(size.max(60), u64::from(nonce)),
            })
            .collect();
        let stream = pkts.concat();
        let mut points: Vec<usize> = cuts.iter().map(|c| c % (stream.len() + 1)).collect();
        points.push(0);
        points.push(stream.len());
        points.sort_unstable();
        let chunks: Vec<&[u8]> = points.windows(2).map(|w| &stream[w[0]..w[1]]).collect();
        let mut f = StreamFramer::default();
        let out = frame_chunks(&mut f, chunks);
        prop_assert_eq!(f.buffered(), 0);
        prop_assert!(out == pkts);
    }
}
