//! Framing for stream faces (Unix stream sockets and TCP).
//!
//! On a stream, NDN packets travel as TLV elements back to back with no other framing. ndn-cxx and
//! NFD drop the connection when an element announces more than 8800 bytes
//! ([`wire::MAX_NDN_PACKET_BYTES`]), so a [`StreamFramer`] does the same: it rejects an element as
//! soon as its TLV-TYPE and TLV-LENGTH are in, before the value arrives.
//!
//! **Memory.** A framer owns one buffer of `max_packet_bytes + read_chunk` bytes, allocated once
//! and never grown. Whole elements are handed out as slices of that buffer (no copy). The partial
//! element at the tail is moved to the front of the buffer only when it could not otherwise be
//! completed in the space left, so each byte is copied at most once per `read_chunk` bytes read,
//! and a copy moves less than one packet.
//!
//! **Use.** Read with [`StreamFramer::fill_from`] (or feed with [`StreamFramer::push_bytes`]),
//! then call [`StreamFramer::next_packet`] until it returns `Ok(None)`, then read again.
//!
//! **Errors.** A [`FramingError`] means the byte stream cannot be resynchronised: there is no way
//! to find the start of the next element. The caller must close the face. The framer stays failed:
//! `next_packet` returns the same error again, `push_bytes` accepts nothing and `fill_from`
//! returns an [`std::io::ErrorKind::InvalidData`] error without reading.

use std::fmt;
use std::io;

use wire::packet::frame_len;
use wire::tlv::read_var_number;
use wire::ErrorKind;

/// Default read size for stream faces, in bytes: the buffer holds one largest packet plus this.
pub const DEFAULT_READ_CHUNK: usize = 16 * 1024;

/// Why a stream can no longer be framed. After any of these the face must be closed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FramingError {
    /// An element whose TLV-TYPE, TLV-LENGTH and value add up to more than the limit.
    Oversize {
        /// Total size the element announces (header + value), saturated at `u64::MAX`.
        announced: u64,
        /// The limit (`max_packet_bytes`).
        max: usize,
        /// Byte offset of the element in the stream (bytes received before it).
        stream_offset: u64,
    },
    /// An element header that is not valid TLV: TLV-TYPE 0 or above 2^32-1, or a VAR-NUMBER not
    /// in its shortest form.
    BadHeader {
        /// What is wrong with the header.
        kind: ErrorKind,
        /// Byte offset of the element in the stream (bytes received before it).
        stream_offset: u64,
    },
}

impl fmt::Display for FramingError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FramingError::Oversize {
                announced,
                max,
                stream_offset,
            } => write!(
                f,
                "element at stream offset {stream_offset} announces {announced} bytes, \
                 more than the limit of {max}"
            ),
            FramingError::BadHeader {
                kind,
                stream_offset,
            } => write!(f, "bad TLV header at stream offset {stream_offset}: {kind}"),
        }
    }
}

impl std::error::Error for FramingError {}

/// Per-face framing counters.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct StreamCounters {
    /// Whole elements handed out.
    pub packets: u64,
    /// Bytes in the elements handed out.
    pub bytes: u64,
    /// Framing errors (at most one per framer: the first error is final).
    pub errors: u64,
}

/// Cuts a byte stream into whole TLV elements, in a fixed buffer, without copying them out.
#[derive(Debug)]
pub struct StreamFramer {
    /// Fixed capacity `max_packet_bytes + read_chunk`.
    buf: Box<[u8]>,
    /// First unconsumed byte.
    start: usize,
    /// One past the last byte received.
    end: usize,
    max_packet_bytes: usize,
    /// Bytes consumed from the stream before `buf[start]`.
    consumed: u64,
    failed: Option<FramingError>,
    counters: StreamCounters,
}

impl Default for StreamFramer {
    /// A framer for NDN stream faces: 8800-byte packets, [`DEFAULT_READ_CHUNK`] reads.
    fn default() -> Self {
        Self::new(wire::MAX_NDN_PACKET_BYTES, DEFAULT_READ_CHUNK)
    }
}

impl StreamFramer {
    /// A framer accepting elements of up to `max_packet_bytes` (header included), with a buffer
    /// of `max_packet_bytes + read_chunk` bytes.
    ///
    /// # Panics
    ///
    /// If `max_packet_bytes` or `read_chunk` is 0.
    pub fn new(max_packet_bytes: usize, read_chunk: usize) -> Self {
        assert!(max_packet_bytes > 0, "max_packet_bytes must be positive");
        assert!(read_chunk > 0, "read_chunk must be positive");
        let cap = max_packet_bytes
            .checked_add(read_chunk)
            .expect("buffer size overflows usize");
        StreamFramer {
            buf: vec![0u8; cap].into_boxed_slice(),
            start: 0,
            end: 0,
            max_packet_bytes,
            consumed: 0,
            failed: None,
            counters: StreamCounters::default(),
        }
    }

    /// Largest element accepted, in bytes.
    #[inline]
    pub fn max_packet_bytes(&self) -> usize {
        self.max_packet_bytes
    }

    /// Size of the buffer (fixed for the framer's life).
    #[inline]
    pub fn capacity(&self) -> usize {
        self.buf.len()
    }

    /// Bytes received but not yet handed out (at end of stream: a truncated element).
    #[inline]
    pub fn buffered(&self) -> usize {
        self.end - self.start
    }

    /// The counters so far.
    #[inline]
    pub fn counters(&self) -> StreamCounters {
        self.counters
    }

    /// The framing error, if the stream has failed (the face must then be closed).
    #[inline]
    pub fn error(&self) -> Option<FramingError> {
        self.failed
    }

    /// Reads once from `r` into the free space of the buffer (never more, never growing it).
    ///
    /// Returns what `r.read` returned: `Ok(0)` means end of stream. Errors of `r` (including
    /// `WouldBlock` and `Interrupted`) are passed through unchanged. Call [`Self::next_packet`]
    /// until it returns `Ok(None)` before reading again; if the buffer is still full of whole
    /// elements, this returns an [`io::ErrorKind::InvalidInput`] error without reading. After a
    /// framing error it returns an [`io::ErrorKind::InvalidData`] error without reading.
    pub fn fill_from<R: io::Read>(&mut self, r: &mut R) -> io::Result<usize> {
        if let Some(e) = self.failed {
            return Err(io::Error::new(io::ErrorKind::InvalidData, e));
        }
        self.make_room();
        if self.end == self.buf.len() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "stream framer buffer full: drain next_packet before reading",
            ));
        }
        let n = r.read(&mut self.buf[self.end..])?;
        self.end += n;
        Ok(n)
    }

    /// Copies as much of `data` as fits in the free space; returns how many bytes were taken.
    ///
    /// Takes nothing after a framing error. As with [`Self::fill_from`], drain
    /// [`Self::next_packet`] between calls; after draining, at least `read_chunk` bytes fit.
    pub fn push_bytes(&mut self, data: &[u8]) -> usize {
        if self.failed.is_some() {
            return 0;
        }
        self.make_room();
        let n = data.len().min(self.buf.len() - self.end);
        self.buf[self.end..self.end + n].copy_from_slice(&data[..n]);
        self.end += n;
        n
    }

    /// The next whole element, as a slice of the buffer, or `Ok(None)` when more bytes are needed.
    ///
    /// An element announcing more than `max_packet_bytes` is an error as soon as its header is
    /// in. On an error the face must be closed; the same error is returned on every later call.
    pub fn next_packet(&mut self) -> Result<Option<&[u8]>, FramingError> {
        if let Some(e) = self.failed {
            return Err(e);
        }
        let pending = &self.buf[self.start..self.end];
        match frame_len(pending, self.max_packet_bytes) {
            Ok(None) => {
                if self.start == self.end {
                    // Nothing left: restart at the front for free.
                    self.start = 0;
                    self.end = 0;
                }
                Ok(None)
            }
            Ok(Some(n)) => {
                let at = self.start;
                self.start += n;
                self.consumed += n as u64;
                self.counters.packets += 1;
                self.counters.bytes += n as u64;
                Ok(Some(&self.buf[at..at + n]))
            }
            Err(e) => {
                let err = match e.kind {
                    ErrorKind::Oversize => FramingError::Oversize {
                        announced: announced_len(pending),
                        max: self.max_packet_bytes,
                        stream_offset: self.consumed,
                    },
                    kind => FramingError::BadHeader {
                        kind,
                        stream_offset: self.consumed,
                    },
                };
                self.failed = Some(err);
                self.counters.errors += 1;
                Err(err)
            }
        }
    }

    /// Moves the partial element at `start` to the front, if it could not be completed in the
    /// space left after it.
    fn make_room(&mut self) {
        if self.start == self.end {
            self.start = 0;
            self.end = 0;
            return;
        }
        let needed = header_total(&self.buf[self.start..self.end])
            .unwrap_or(self.max_packet_bytes as u64)
            .min(self.max_packet_bytes as u64) as usize;
        if self.start > 0 && (self.start + needed > self.buf.len() || self.end == self.buf.len()) {
            self.buf.copy_within(self.start..self.end, 0);
            self.end -= self.start;
            self.start = 0;
        }
    }
}

/// Total element size announced by a complete header at the start of `buf`, if the header is in.
fn header_total(buf: &[u8]) -> Option<u64> {
    let (_, tn) = read_var_number(buf, 0).ok()?;
    let (len, ln) = read_var_number(&buf[tn..], tn).ok()?;
    Some(len.saturating_add((tn + ln) as u64))
}

/// Total size announced by an oversize element (whose header `frame_len` has already read).
fn announced_len(buf: &[u8]) -> u64 {
    header_total(buf).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;
    use wire::{Data, Interest, Name};

    fn packets() -> Vec<Vec<u8>> {
        vec![
            Interest::new(Name::from_uri("/a").unwrap(), [1; 4]).to_wire(),
            Data::new(Name::from_uri("/a/b").unwrap(), vec![7u8; 300]).to_wire(),
            Interest::new(Name::from_uri("/x/y/z").unwrap(), [2; 4]).to_wire(),
        ]
    }

    #[test]
    fn every_split_point() {
        let pkts = packets();
        let stream: Vec<u8> = pkts.concat();
        for cut in 0..=stream.len() {
            let mut f = StreamFramer::new(1000, 64);
            let mut out = Vec::new();
            for part in [&stream[..cut], &stream[cut..]] {
                let mut rest = part;
                while !rest.is_empty() {
                    let n = f.push_bytes(rest);
                    rest = &rest[n..];
                    while let Some(p) = f.next_packet().unwrap() {
                        out.push(p.to_vec());
                    }
                }
            }
            assert_eq!(out, pkts, "cut at {cut}");
            assert_eq!(f.buffered(), 0);
            assert_eq!(f.counters().packets, 3);
            assert_eq!(f.counters().bytes, stream.len() as u64);
        }
    }

    #[test]
    fn oversize_before_value_and_sticky() {
        let mut f = StreamFramer::new(8800, 64);
        // Data, LENGTH 8797: header 4 bytes -> 8801 total.
        assert_eq!(f.push_bytes(&[0x06, 0xFD, 0x22, 0x5D]), 4);
        let e = f.next_packet().unwrap_err();
        assert_eq!(
            e,
            FramingError::Oversize {
                announced: 8801,
                max: 8800,
                stream_offset: 0
            }
        );
        assert_eq!(f.next_packet().unwrap_err(), e);
        assert_eq!(f.push_bytes(&[0]), 0);
        let err = f.fill_from(&mut &[1u8, 2][..]).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidData);
        assert_eq!(f.counters().errors, 1);
        assert!(e.to_string().contains("8801"));
    }

    #[test]
    fn full_buffer_must_be_drained() {
        let pkt = Interest::new(Name::from_uri("/f").unwrap(), [4; 4]).to_wire();
        let stream = pkt.repeat(40);
        let mut f = StreamFramer::new(100, 20);
        assert_eq!(f.push_bytes(&stream), 120);
        let err = f.fill_from(&mut &stream[..]).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidInput);
        while f.next_packet().unwrap().is_some() {}
        assert!(f.fill_from(&mut &stream[..]).unwrap() >= 20);
    }

    #[test]
    fn compaction_keeps_partial() {
        // Small buffer: 100 + 10. Packets of 60 bytes force compaction often.
        let pkt = Data::new(Name::from_uri("/c").unwrap(), vec![3u8; 50]).to_wire();
        let stream = pkt.repeat(20);
        let mut f = StreamFramer::new(100, 10);
        let mut src = &stream[..];
        let mut n = 0;
        while !src.is_empty() {
            let k = f.push_bytes(&src[..src.len().min(7)]);
            assert!(k > 0);
            src = &src[k..];
            while let Some(p) = f.next_packet().unwrap() {
                assert_eq!(p, &pkt[..]);
                n += 1;
            }
        }
        assert_eq!(n, 20);
        assert_eq!(f.capacity(), 110);
    }
}
