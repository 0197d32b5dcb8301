//! FIB entries: two cache lines holding the prefix and its next hops.

/// Bytes of an entry after its 16-byte header: the prefix from the front, the next hops from
/// the back.
const BODY: usize = 112;

/// Prefix bytes (Name TLV-VALUE) an entry always holds inline, whatever its next hops; a longer
/// prefix is inline when it fits beside them (`len + 8 × next hops <= 112`), else a heap copy.
pub const INLINE_PREFIX: usize = BODY - 8 * MAX_NEXTHOPS;

/// Most next hops a prefix can have (at the back of the entry's body, beside the prefix).
pub const MAX_NEXTHOPS: usize = 7;

/// One next hop of a FIB entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(C)]
pub struct NextHop {
    /// Outgoing face.
    pub face: u32,
    /// Routing cost (lower is better).
    pub cost: u32,
}

const NO_HOP: NextHop = NextHop { face: 0, cost: 0 };

/// The next hops of an entry, sorted by cost (then face): a fixed array with a count, read as a
/// slice (`nexthops.iter()`, `nexthops.len()`, ...).
#[derive(Clone, Copy)]
#[repr(C)]
pub struct NextHops {
    len: u32,
    hops: [NextHop; MAX_NEXTHOPS],
}

impl NextHops {
    /// No next hop.
    pub const EMPTY: NextHops = NextHops {
        len: 0,
        hops: [NO_HOP; MAX_NEXTHOPS],
    };

    /// The first [`MAX_NEXTHOPS`] of `hops` (callers check the limit).
    pub(super) fn new(hops: &[NextHop]) -> Self {
        debug_assert!(hops.len() <= MAX_NEXTHOPS);
        let mut n = NextHops::EMPTY;
        let len = hops.len().min(MAX_NEXTHOPS);
        n.hops[..len].copy_from_slice(&hops[..len]);
        n.len = len as u32;
        n
    }

    /// The next hops as a slice.
    #[inline(always)]
    pub fn as_slice(&self) -> &[NextHop] {
        &self.hops[..(self.len as usize).min(MAX_NEXTHOPS)]
    }
}

impl Default for NextHops {
    fn default() -> Self {
        NextHops::EMPTY
    }
}

impl core::ops::Deref for NextHops {
    type Target = [NextHop];
    #[inline(always)]
    fn deref(&self) -> &[NextHop] {
        self.as_slice()
    }
}

impl<'a> IntoIterator for &'a NextHops {
    type Item = &'a NextHop;
    type IntoIter = core::slice::Iter<'a, NextHop>;
    fn into_iter(self) -> Self::IntoIter {
        self.as_slice().iter()
    }
}

impl PartialEq for NextHops {
    fn eq(&self, other: &Self) -> bool {
        self.as_slice() == other.as_slice()
    }
}

impl Eq for NextHops {}

impl core::fmt::Debug for NextHops {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_list().entries(self.as_slice()).finish()
    }
}

/// One FIB entry, immutable once published. Two cache lines (see the module documentation):
/// the header, then `body` with the prefix at its front and the next hops at its back.
#[repr(C, align(64))]
pub struct FibEntry {
    /// Keyed hash of the prefix ([`crate::hash::name_hash`]).
    pub hash: u64,
    value_len: u32,
    /// Number of components of the prefix.
    pub depth: u8,
    /// Maximum depth of the real prefixes under this prefix (itself included if real). Kept
    /// exact for entries at depth M (the only ones a lookup consults it on); equal to `depth`
    /// elsewhere.
    pub md: u8,
    /// True for an entry that exists only to carry `md` at depth M (no next hops).
    pub is_virtual: bool,
    hop_count: u8,
    /// The prefix bytes (inline) or the address of their heap copy from the front; the next
    /// hops, as `NextHop`s (8 bytes, 4-aligned), in the last `8 × hop_count` bytes.
    body: [u64; BODY / 8],
}

const _: () = {
    assert!(core::mem::size_of::<FibEntry>() == 128);
    assert!(core::mem::offset_of!(FibEntry, body) == 16);
    assert!(core::mem::size_of::<NextHop>() == 8 && core::mem::align_of::<NextHop>() <= 8);
    // A heap prefix's address and every next hop fit the body together.
    assert!(8 + 8 * MAX_NEXTHOPS <= BODY);
};

/// Whether a prefix of `len` bytes is inline in an entry with `hops` next hops.
#[inline(always)]
pub(super) fn is_inline(len: usize, hops: usize) -> bool {
    len + 8 * hops <= BODY
}

impl FibEntry {
    pub(super) fn new(
        hash: u64,
        value: &[u8],
        depth: usize,
        md: usize,
        nexthops: NextHops,
    ) -> Self {
        let hops = nexthops.as_slice();
        let mut e = FibEntry {
            hash,
            value_len: u32::try_from(value.len()).expect("prefix longer than 4 GiB"),
            depth: depth as u8,
            md: md as u8,
            is_virtual: hops.is_empty(),
            hop_count: hops.len() as u8,
            body: [0; BODY / 8],
        };
        if is_inline(value.len(), hops.len()) {
            // SAFETY: `is_inline` keeps the prefix inside the body's BODY bytes (in front of
            // the next hops), and the body is plain integers.
            unsafe {
                core::ptr::copy_nonoverlapping(
                    value.as_ptr(),
                    e.body.as_mut_ptr() as *mut u8,
                    value.len(),
                )
            };
        } else {
            // Owned by the entry from here on: freed by `Drop` (the length is `value_len`).
            let heap: Box<[u8]> = value.into();
            e.body[0] = Box::into_raw(heap) as *mut u8 as u64;
        }
        let first = BODY / 8 - hops.len();
        for (i, h) in hops.iter().enumerate() {
            // SAFETY: word `first + i` is inside the body (hops.len() <= MAX_NEXTHOPS), 8-byte
            // aligned, and a `NextHop` is 8 bytes with an alignment of at most 8.
            unsafe { (e.body.as_mut_ptr().add(first + i) as *mut NextHop).write(*h) };
        }
        e
    }

    /// Whether the prefix is inline (else the body's first word addresses its heap copy).
    #[inline(always)]
    pub(super) fn prefix_inline(&self) -> bool {
        is_inline(self.value_len as usize, usize::from(self.hop_count))
    }

    /// The prefix's components back to back (TLV encoded), as in `&name.value()[..prefix_end]`
    /// of a matching Interest name.
    #[inline(always)]
    pub fn value(&self) -> &[u8] {
        let len = self.value_len as usize;
        if self.prefix_inline() {
            // SAFETY: an inline prefix occupies the body's first `len` bytes (`new`; an
            // all-zero entry has length 0).
            unsafe { core::slice::from_raw_parts(self.body.as_ptr() as *const u8, len) }
        } else {
            // SAFETY: the first word is the address of the entry's own heap copy of `len`
            // bytes (`new`), freed only when the entry is dropped.
            unsafe { core::slice::from_raw_parts(self.body[0] as *const u8, len) }
        }
    }

    /// The first and the last cache line of a prefix kept on the heap (`None`: inline).
    #[inline(always)]
    pub(super) fn heap_lines(&self) -> Option<(*const u8, *const u8)> {
        if self.prefix_inline() {
            return None;
        }
        let v = self.value();
        Some((
            v.as_ptr(),
            v.as_ptr().wrapping_add(v.len().saturating_sub(1)),
        ))
    }

    /// Next hops, sorted by cost (then face). Empty for a virtual entry.
    #[inline(always)]
    pub fn nexthops(&self) -> &[NextHop] {
        let n = usize::from(self.hop_count).min(MAX_NEXTHOPS);
        // SAFETY: `new` wrote `hop_count` (<= MAX_NEXTHOPS) next hops into the body's last
        // words, suitably aligned; they are never written again.
        unsafe {
            core::slice::from_raw_parts(self.body.as_ptr().add(BODY / 8 - n) as *const NextHop, n)
        }
    }
}

impl Default for FibEntry {
    fn default() -> Self {
        FibEntry::new(0, &[], 0, 0, NextHops::EMPTY)
    }
}

impl Drop for FibEntry {
    fn drop(&mut self) {
        if !self.prefix_inline() {
            let len = self.value_len as usize;
            // SAFETY: the first word is the address `Box::into_raw` gave for this entry's heap
            // copy of `len` bytes (`new`); it is freed here, exactly once.
            drop(unsafe {
                Box::from_raw(core::ptr::slice_from_raw_parts_mut(
                    self.body[0] as *mut u8,
                    len,
                ))
            });
        }
    }
}

impl core::fmt::Debug for FibEntry {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("FibEntry")
            .field("hash", &format_args!("{:#018x}", self.hash))
            .field("value", &self.value())
            .field("depth", &self.depth)
            .field("md", &self.md)
            .field("is_virtual", &self.is_virtual)
            .field("nexthops", &self.nexthops())
            .finish()
    }
}
