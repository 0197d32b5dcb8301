//! On-disk layout of the L2 file: a superblock, then fixed-size extents of `B` chunk slots.
//!
//! ```text
//! offset 0                      SUPERBLOCK_BYTES          + extent_bytes ...
//! | superblock (4 KiB)          | extent 0: slot 0 .. slot B-1, pad | extent 1 | ...
//! ```
//!
//! An extent holds one *batch*: the chunks of one content name prefix with segments
//! `⌊s/B⌋·B .. ⌊s/B⌋·B + B`, chunk `s` in slot `s mod B`, so a batch is one contiguous read.
//! Every slot starts with a [`SlotHeader`] (64 bytes; bytes 40..48 hold the wall-clock time the
//! chunk was written, in ms since the Unix epoch, 0 if unknown: [`slot_stored_at_ms`]), followed by the chunk's full name (the
//! name TLV's value) and its payload (the Data packet). The header's CRC32C covers the header
//! (with the CRC field zeroed), the name and the payload; a slot whose CRC fails is never served.
//!
//! All integers are little-endian. Slots are multiples of 512 bytes and extents multiples of
//! 4096 bytes, so that every read and write is aligned for `O_DIRECT`.

use std::fmt;

/// Bytes of the superblock at the start of the file.
pub const SUPERBLOCK_BYTES: u64 = 4096;
/// Bytes of a slot header.
pub const SLOT_HEADER_BYTES: usize = 64;
/// Alignment of slots (bytes): the logical block size `O_DIRECT` needs on common devices.
pub const SLOT_ALIGN_BYTES: u32 = 512;
/// Alignment of extents and of the superblock (bytes).
pub const EXTENT_ALIGN_BYTES: u64 = 4096;
/// Largest batch: the in-RAM index keeps one bit per slot in a `u64`.
pub const MAX_BATCH: u32 = 64;

const SUPER_MAGIC: &[u8; 8] = b"CASCL2\0\x01";
const SLOT_MAGIC: u32 = 0x4c53_4343; // "CCSL"
const LAYOUT_VERSION: u32 = 1;

/// The geometry and identity of an L2 file, kept in its superblock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Superblock {
    /// Bytes of one slot (header + name + payload), a multiple of [`SLOT_ALIGN_BYTES`].
    pub slot_bytes: u32,
    /// Slots per extent: the batch size `B`.
    pub batch: u32,
    /// Extents in the file.
    pub extents: u32,
    /// The SipHash key of the batch-key hash (random when the file is created).
    pub hash_key: [u8; 16],
    /// Random identity of this file, repeated in its index file.
    pub file_id: u64,
}

impl Superblock {
    /// Bytes of one extent: `B` slots rounded up to [`EXTENT_ALIGN_BYTES`].
    pub fn extent_bytes(&self) -> u64 {
        let raw = u64::from(self.slot_bytes) * u64::from(self.batch);
        raw.div_ceil(EXTENT_ALIGN_BYTES) * EXTENT_ALIGN_BYTES
    }

    /// File offset of extent `e`.
    pub fn extent_offset(&self, e: u32) -> u64 {
        SUPERBLOCK_BYTES + u64::from(e) * self.extent_bytes()
    }

    /// File offset of slot `slot` of extent `e`.
    pub fn slot_offset(&self, e: u32, slot: u32) -> u64 {
        self.extent_offset(e) + u64::from(slot) * u64::from(self.slot_bytes)
    }

    /// Total file size in bytes.
    pub fn file_bytes(&self) -> u64 {
        self.extent_offset(self.extents)
    }

    /// Largest name + payload a slot holds.
    pub fn slot_capacity_bytes(&self) -> usize {
        self.slot_bytes as usize - SLOT_HEADER_BYTES
    }

    /// Encodes into the first [`SUPERBLOCK_BYTES`] of `out` (CRC32C at bytes 52..56).
    pub fn encode(&self, out: &mut [u8]) {
        let out = &mut out[..SUPERBLOCK_BYTES as usize];
        out.fill(0);
        out[0..8].copy_from_slice(SUPER_MAGIC);
        out[8..12].copy_from_slice(&LAYOUT_VERSION.to_le_bytes());
        out[12..16].copy_from_slice(&self.slot_bytes.to_le_bytes());
        out[16..20].copy_from_slice(&self.batch.to_le_bytes());
        out[20..24].copy_from_slice(&self.extents.to_le_bytes());
        out[24..40].copy_from_slice(&self.hash_key);
        out[40..48].copy_from_slice(&self.file_id.to_le_bytes());
        let crc = crc32c::crc32c(&out[..52]);
        out[52..56].copy_from_slice(&crc.to_le_bytes());
    }

    /// Decodes and checks a superblock.
    pub fn decode(b: &[u8]) -> Result<Self, LayoutError> {
        if b.len() < 56 || &b[0..8] != SUPER_MAGIC {
            return Err(LayoutError::NotAnL2File);
        }
        if le32(b, 52) != crc32c::crc32c(&b[..52]) {
            return Err(LayoutError::BadSuperblockChecksum);
        }
        if le32(b, 8) != LAYOUT_VERSION {
            return Err(LayoutError::Version(le32(b, 8)));
        }
        let mut hash_key = [0u8; 16];
        hash_key.copy_from_slice(&b[24..40]);
        let sb = Superblock {
            slot_bytes: le32(b, 12),
            batch: le32(b, 16),
            extents: le32(b, 20),
            hash_key,
            file_id: le64(b, 40),
        };
        sb.validate()?;
        Ok(sb)
    }

    /// Checks the geometry.
    pub fn validate(&self) -> Result<(), LayoutError> {
        if self.batch == 0 || self.batch > MAX_BATCH {
            return Err(LayoutError::Geometry(format!(
                "batch must be 1..={MAX_BATCH}, got {}",
                self.batch
            )));
        }
        if self.slot_bytes % SLOT_ALIGN_BYTES != 0
            || (self.slot_bytes as usize) < SLOT_HEADER_BYTES + 64
        {
            return Err(LayoutError::Geometry(format!(
                "slot_bytes must be a multiple of {SLOT_ALIGN_BYTES} and at least 512, got {}",
                self.slot_bytes
            )));
        }
        if self.extents == 0 || self.extents == u32::MAX {
            return Err(LayoutError::Geometry(format!(
                "extents must be 1..{}, got {}",
                u32::MAX,
                self.extents
            )));
        }
        Ok(())
    }
}

/// The fixed part of a slot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SlotHeader {
    /// Keyed hash of the batch (name prefix + batch number).
    pub batch_key: u64,
    /// Segment number of the chunk.
    pub segment: u64,
    /// Global write sequence number (orders writes across restarts).
    pub seq: u64,
    /// Bytes of the name (the name TLV's value).
    pub name_len: u16,
    /// Bytes of the payload.
    pub payload_len: u32,
}

/// Why a slot cannot be served.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SlotError {
    /// No slot magic: never written (or overwritten by garbage).
    Empty,
    /// Lengths do not fit the slot.
    BadLength,
    /// The CRC32C does not match: corrupt.
    Checksum,
}

impl SlotHeader {
    /// Writes header, name and payload into `slot` (at least `64 + name + payload` bytes) and
    /// fills in the CRC32C. The caller has checked the sizes.
    pub fn write(&self, slot: &mut [u8], name: &[u8], payload: &[u8]) {
        self.write_from(slot, name, payload, true);
    }

    /// Writes the slot; `clear`: zero the whole header first (else bytes 40..64 are kept).
    fn write_from(&self, slot: &mut [u8], name: &[u8], payload: &[u8], clear: bool) {
        let h = &mut slot[..SLOT_HEADER_BYTES];
        h[..40].fill(0);
        if clear {
            h[40..48].fill(0);
        }
        h[48..].fill(0);
        h[0..4].copy_from_slice(&SLOT_MAGIC.to_le_bytes());
        // 4..8: CRC, zero while computing.
        h[8..16].copy_from_slice(&self.batch_key.to_le_bytes());
        h[16..24].copy_from_slice(&self.segment.to_le_bytes());
        h[24..32].copy_from_slice(&self.seq.to_le_bytes());
        h[32..34].copy_from_slice(&self.name_len.to_le_bytes());
        h[36..40].copy_from_slice(&self.payload_len.to_le_bytes());
        let n = SLOT_HEADER_BYTES;
        slot[n..n + name.len()].copy_from_slice(name);
        let p = n + name.len();
        slot[p..p + payload.len()].copy_from_slice(payload);
        let crc = crc32c::crc32c(&slot[..p + payload.len()]);
        slot[4..8].copy_from_slice(&crc.to_le_bytes());
    }

    /// [`SlotHeader::write`], recording that the chunk was written at `stored_at_ms` (ms since
    /// the Unix epoch; the freshness of what L2 serves to MustBeFresh Interests counts from it).
    pub fn write_stamped(&self, slot: &mut [u8], name: &[u8], payload: &[u8], stored_at_ms: u64) {
        slot[40..48].copy_from_slice(&stored_at_ms.to_le_bytes());
        self.write_from(slot, name, payload, false);
    }

    /// Parses and verifies a slot: the header, the name and the payload.
    pub fn read(slot: &[u8]) -> Result<(SlotHeader, &[u8], &[u8]), SlotError> {
        if slot.len() < SLOT_HEADER_BYTES || le32(slot, 0) != SLOT_MAGIC {
            return Err(SlotError::Empty);
        }
        let h = SlotHeader {
            batch_key: le64(slot, 8),
            segment: le64(slot, 16),
            seq: le64(slot, 24),
            name_len: u16::from_le_bytes([slot[32], slot[33]]),
            payload_len: le32(slot, 36),
        };
        let end = SLOT_HEADER_BYTES + usize::from(h.name_len) + h.payload_len as usize;
        if end > slot.len() {
            return Err(SlotError::BadLength);
        }
        let stored = le32(slot, 4);
        let mut crc = crc32c::crc32c(&slot[..4]);
        crc = crc32c::crc32c_append(crc, &[0; 4]);
        crc = crc32c::crc32c_append(crc, &slot[8..end]);
        if crc != stored {
            return Err(SlotError::Checksum);
        }
        let name_end = SLOT_HEADER_BYTES + usize::from(h.name_len);
        Ok((h, &slot[SLOT_HEADER_BYTES..name_end], &slot[name_end..end]))
    }
}

/// When the chunk in a verified slot was written (ms since the Unix epoch), 0 if unknown (a
/// slot written without a time).
pub fn slot_stored_at_ms(slot: &[u8]) -> u64 {
    le64(slot, 40)
}

/// A chunk name split for batching: the full name, the prefix shared by the batch and the
/// segment number.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChunkName<'a> {
    /// The whole name TLV value (every component, segment included).
    pub name: &'a [u8],
    /// The components before the segment component (the whole name if it has none).
    pub prefix: &'a [u8],
    /// The segment number (0 for a name whose last component is not a segment).
    pub segment: u64,
}

impl<'a> ChunkName<'a> {
    /// Splits a name TLV value (the components) at its last component if that is a segment
    /// number (type 0x32, NDN naming conventions rev. 3); otherwise the whole name is one
    /// batch of its own with segment 0. `None` for malformed TLV.
    pub fn parse(name: &'a [u8]) -> Option<Self> {
        let mut off = 0;
        let mut last_start = 0;
        let mut last: Option<(u64, &[u8])> = None;
        while off < name.len() {
            let (typ, n1) = wire::tlv::read_var_number(&name[off..], off).ok()?;
            let (len, n2) = wire::tlv::read_var_number(&name[off + n1..], off + n1).ok()?;
            let v = off + n1 + n2;
            let end = v.checked_add(usize::try_from(len).ok()?)?;
            if end > name.len() {
                return None;
            }
            last_start = off;
            last = Some((typ, &name[v..end]));
            off = end;
        }
        match last {
            Some((typ, value)) if typ == u64::from(wire::tt::SEGMENT) => {
                let segment = wire::tlv::read_nni(value, 0).ok()?;
                Some(ChunkName {
                    name,
                    prefix: &name[..last_start],
                    segment,
                })
            }
            _ => Some(ChunkName {
                name,
                prefix: name,
                segment: 0,
            }),
        }
    }
}

/// An L2 file or index problem.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LayoutError {
    /// The file does not start with the L2 superblock magic.
    NotAnL2File,
    /// The superblock's checksum fails.
    BadSuperblockChecksum,
    /// Unknown layout version.
    Version(u32),
    /// Bad geometry.
    Geometry(String),
}

impl fmt::Display for LayoutError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NotAnL2File => f.write_str("not a Cascade L2 file (bad superblock magic)"),
            Self::BadSuperblockChecksum => f.write_str("the L2 superblock's checksum fails"),
            Self::Version(v) => write!(f, "unknown L2 layout version {v}"),
            Self::Geometry(s) => write!(f, "bad L2 geometry: {s}"),
        }
    }
}

impl std::error::Error for LayoutError {}

pub(crate) fn le32(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

pub(crate) fn le64(b: &[u8], at: usize) -> u64 {
    let mut x = [0u8; 8];
    x.copy_from_slice(&b[at..at + 8]);
    u64::from_le_bytes(x)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sb() -> Superblock {
        Superblock {
            slot_bytes: 8704,
            batch: 10,
            extents: 7,
            hash_key: [3; 16],
            file_id: 99,
        }
    }

    #[test]
    fn superblock_round_trips_and_rejects_damage() {
        let s = sb();
        let mut buf = vec![0u8; SUPERBLOCK_BYTES as usize];
        s.encode(&mut buf);
        assert_eq!(Superblock::decode(&buf), Ok(s));
        assert_eq!(s.extent_bytes(), 90_112); // 87,040 rounded up to 4 KiB
        assert_eq!(s.extent_offset(2), 4096 + 2 * 90_112);
        assert_eq!(s.slot_offset(1, 3), 4096 + 90_112 + 3 * 8704);
        buf[20] ^= 1;
        assert_eq!(
            Superblock::decode(&buf),
            Err(LayoutError::BadSuperblockChecksum)
        );
        buf[0] = b'X';
        assert_eq!(Superblock::decode(&buf), Err(LayoutError::NotAnL2File));
        for bad in [
            Superblock { batch: 0, ..s },
            Superblock { batch: 65, ..s },
            Superblock {
                slot_bytes: 8700,
                ..s
            },
            Superblock { extents: 0, ..s },
        ] {
            assert!(bad.validate().is_err(), "{bad:?}");
        }
    }

    #[test]
    fn slot_round_trips_and_every_flipped_byte_is_caught() {
        let h = SlotHeader {
            batch_key: 0xdead_beef,
            segment: 42,
            seq: 7,
            name_len: 5,
            payload_len: 300,
        };
        let name = b"\x08\x03abc";
        let payload: Vec<u8> = (0..300u32).map(|i| i as u8).collect();
        let mut slot = vec![0xaa_u8; 512];
        h.write(&mut slot, name, &payload);
        let (got, n, p) = SlotHeader::read(&slot).unwrap();
        assert_eq!((got, n, p), (h, &name[..], &payload[..]));
        let covered = SLOT_HEADER_BYTES + name.len() + payload.len();
        for i in 0..covered {
            let mut bad = slot.clone();
            bad[i] ^= 0x10;
            assert!(
                SlotHeader::read(&bad).is_err(),
                "flip at byte {i} not caught"
            );
        }
        // Bytes past the payload are not covered (stale padding).
        let mut pad = slot.clone();
        pad[covered + 3] ^= 0xff;
        assert!(SlotHeader::read(&pad).is_ok());
        assert_eq!(SlotHeader::read(&[0u8; 512]), Err(SlotError::Empty));
        let mut long = slot.clone();
        long[36..40].copy_from_slice(&10_000u32.to_le_bytes());
        assert_eq!(SlotHeader::read(&long), Err(SlotError::BadLength));
    }

    #[test]
    fn chunk_names_split_at_the_segment_component() {
        // /a/b/seg=300: 08 01 'a' 08 01 'b' 32 02 01 2c
        let name = [8, 1, b'a', 8, 1, b'b', 0x32, 2, 1, 0x2c];
        let c = ChunkName::parse(&name).unwrap();
        assert_eq!(c.prefix, &name[..6]);
        assert_eq!(c.segment, 300);
        assert_eq!(c.name, &name[..]);
        // No segment component: the whole name, segment 0.
        let plain = [8, 1, b'a', 8, 1, b'b'];
        let c = ChunkName::parse(&plain).unwrap();
        assert_eq!((c.prefix, c.segment), (&plain[..], 0));
        // Truncated TLV.
        assert!(ChunkName::parse(&[8, 5, b'a']).is_none());
    }
}
