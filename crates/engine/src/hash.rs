//! Keyed name hashing: SipHash-1-3 over every name prefix in one pass, finalized lazily.
//!
//! # Construction
//! The hash of the prefix made of components `c1..ck` is standard SipHash-1-3, under the
//! process's secret 128-bit key, of the byte string `pad8(c1) || pad8(c2) || ... || pad8(ck)`,
//! where `ci` is the component's full TLV (type, length, value) and `pad8` appends zero bytes up
//! to a multiple of 8. TLV elements are self-delimiting, so this encoding is injective: two
//! different prefixes never map to the same byte string, and collisions between prefixes are
//! exactly SipHash collisions under an unknown key, which an attacker cannot aim for (hash
//! flooding needs the key). Because every prefix ends on an 8-byte boundary, the SipHash state
//! after prefix k is just the four state words and the length: one pass over the name keeps the
//! state at every component boundary, and a prefix hash costs only the finalization (one
//! compression round and three finalization rounds) when a lookup asks for it.
//!
//! # Cost sketch
//! A name of 58 characters in 6.66 components is about 80 TLV bytes, 96 after padding: 12
//! SipRounds for compression plus 4 per finalized prefix. A SipRound is 14 simple ALU operations,
//! so hashing a typical name and finalizing the full name and two FIB prefixes is about 24 rounds,
//! around 100 cycles; the tables then cost one or two cache misses each.

use core::cell::Cell;

use wire::NameView;

/// Most component boundaries whose state is kept. FIB prefixes are limited to this depth;
/// longer names are still hashed in full (the full-name hash is always available).
pub const MAX_PREFIX_STATES: usize = 32;

/// The secret SipHash key of this process (one per router, random at start-up).
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct HashKey {
    k0: u64,
    k1: u64,
}

impl core::fmt::Debug for HashKey {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("HashKey(..)") // never print the secret
    }
}

impl HashKey {
    /// A key from 16 secret bytes (the router draws them from the OS at start-up).
    pub fn from_bytes(b: [u8; 16]) -> Self {
        let mut lo = [0u8; 8];
        let mut hi = [0u8; 8];
        lo.copy_from_slice(&b[..8]);
        hi.copy_from_slice(&b[8..]);
        HashKey {
            k0: u64::from_le_bytes(lo),
            k1: u64::from_le_bytes(hi),
        }
    }

    /// A fixed key for deterministic tests and benchmarks.
    pub const fn fixed(k0: u64, k1: u64) -> Self {
        HashKey { k0, k1 }
    }
}

/// SipHash state at a word boundary: the four state words and the bytes absorbed so far.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct SipState {
    v: [u64; 4],
    len: u64,
}

#[inline(always)]
fn sip_round(v: &mut [u64; 4]) {
    v[0] = v[0].wrapping_add(v[1]);
    v[1] = v[1].rotate_left(13);
    v[1] ^= v[0];
    v[0] = v[0].rotate_left(32);
    v[2] = v[2].wrapping_add(v[3]);
    v[3] = v[3].rotate_left(16);
    v[3] ^= v[2];
    v[0] = v[0].wrapping_add(v[3]);
    v[3] = v[3].rotate_left(21);
    v[3] ^= v[0];
    v[2] = v[2].wrapping_add(v[1]);
    v[1] = v[1].rotate_left(17);
    v[1] ^= v[2];
    v[2] = v[2].rotate_left(32);
}

impl SipState {
    #[inline]
    fn new(key: HashKey) -> Self {
        SipState {
            v: [
                key.k0 ^ 0x736f_6d65_7073_6575,
                key.k1 ^ 0x646f_7261_6e64_6f6d,
                key.k0 ^ 0x6c79_6765_6e65_7261,
                key.k1 ^ 0x7465_6462_7974_6573,
            ],
            len: 0,
        }
    }

    #[inline(always)]
    fn word(&mut self, m: u64) {
        self.v[3] ^= m;
        sip_round(&mut self.v);
        self.v[0] ^= m;
    }

    /// Absorbs `bytes` zero-padded to a multiple of 8.
    #[inline]
    fn absorb_padded(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            let mut w = [0u8; 8];
            w.copy_from_slice(c);
            self.word(u64::from_le_bytes(w));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            // Little-endian tail, zero-padded; a byte loop (at most 7) instead of a
            // variable-length copy, which would be a call to memcpy per component.
            let m = rest
                .iter()
                .enumerate()
                .fold(0u64, |m, (i, &b)| m | u64::from(b) << (8 * i));
            self.word(m);
        }
        self.len += bytes.len().div_ceil(8) as u64 * 8;
    }

    /// SipHash-1-3 finalization of a message whose length is a multiple of 8.
    #[inline]
    fn finish(&self) -> u64 {
        let mut v = self.v;
        let b = (self.len & 0xff) << 56;
        v[3] ^= b;
        sip_round(&mut v);
        v[0] ^= b;
        v[2] ^= 0xff;
        sip_round(&mut v);
        sip_round(&mut v);
        sip_round(&mut v);
        v[0] ^ v[1] ^ v[2] ^ v[3]
    }
}

/// The hashes of every prefix of one name, computed in one pass, finalized on demand.
///
/// `prefix(k)` is the hash of the first `k` components (`k` in `0..=len`, 0 being the empty
/// name `/`). Prefixes up to [`MAX_PREFIX_STATES`] keep their state; `full()` is always there.
#[derive(Clone, Debug)]
pub struct PrefixHashes {
    states: [SipState; MAX_PREFIX_STATES + 1],
    ends: [u32; MAX_PREFIX_STATES + 1],
    kept: u8,
    len: u16,
    full: u64,
    full_state: SipState,
    /// Finalized prefix hashes, valid where the bit of `finalized` is set: a lookup asks for the
    /// same prefix several times (prefetch, then probe), and each finalization is 4 SipRounds.
    finals: [Cell<u64>; MAX_PREFIX_STATES + 1],
    finalized: Cell<u64>,
}

impl PrefixHashes {
    /// Hashes every prefix of `name`.
    pub fn new(key: HashKey, name: &NameView<'_>) -> Self {
        let s = SipState::new(key);
        let mut h = PrefixHashes {
            states: [s; MAX_PREFIX_STATES + 1],
            ends: [0; MAX_PREFIX_STATES + 1],
            kept: 0,
            len: 0,
            full: 0,
            full_state: s,
            finals: core::array::from_fn(|_| Cell::new(0)),
            finalized: Cell::new(0),
        };
        h.compute(key, name);
        h
    }

    /// Recomputes in place for another name (the hot path reuses one per batch slot, writing
    /// only the states the name needs instead of a whole new 1.5 KB value).
    #[inline]
    pub fn compute(&mut self, key: HashKey, name: &NameView<'_>) {
        let mut s = SipState::new(key);
        self.states[0] = s;
        self.ends[0] = 0;
        let mut len = 0usize;
        let mut end = 0usize;
        for c in name.components() {
            s.absorb_padded(c.wire);
            len += 1;
            end += c.wire.len();
            if len <= MAX_PREFIX_STATES {
                self.states[len] = s;
                self.ends[len] = end as u32;
            }
        }
        self.kept = len.min(MAX_PREFIX_STATES) as u8;
        self.len = len.min(u16::MAX as usize) as u16;
        self.full = s.finish();
        self.full_state = s;
        self.finalized.set(0);
    }

    /// Number of components of the name.
    #[inline]
    pub fn len(&self) -> usize {
        usize::from(self.len)
    }

    /// True for the empty name.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Hash of the whole name.
    #[inline]
    pub fn full(&self) -> u64 {
        self.full
    }

    /// Byte length, within the Name TLV-VALUE, of the first `k` components (for comparing a
    /// stored prefix with `&name.value()[..n]`); `None` where [`Self::prefix`] is `None`.
    #[inline]
    pub fn prefix_end(&self, k: usize, name: &NameView<'_>) -> Option<usize> {
        if k == self.len() {
            Some(name.value().len())
        } else if k <= usize::from(self.kept) {
            Some(self.ends[k] as usize)
        } else {
            None
        }
    }

    /// Hash of the whole name followed by one more component (its TLV `component_wire`), e.g.
    /// the implicit digest of a Data packet.
    #[inline]
    pub fn extend_full(&self, component_wire: &[u8]) -> u64 {
        let mut s = self.full_state;
        s.absorb_padded(component_wire);
        s.finish()
    }

    /// Hash of the first `k` components; `None` beyond [`MAX_PREFIX_STATES`] (unless `k` is the
    /// whole name) or beyond the name.
    #[inline]
    pub fn prefix(&self, k: usize) -> Option<u64> {
        if k == self.len() {
            Some(self.full)
        } else if k <= usize::from(self.kept) {
            let bit = 1u64 << k;
            if self.finalized.get() & bit != 0 {
                return Some(self.finals[k].get());
            }
            let v = self.states[k].finish();
            self.finals[k].set(v);
            self.finalized.set(self.finalized.get() | bit);
            Some(v)
        } else {
            None
        }
    }
}

/// Hash of a whole name, without keeping prefix states (what an I/O thread computes to pick the
/// worker).
pub fn full_name_hash(key: HashKey, name: &NameView<'_>) -> u64 {
    let mut s = SipState::new(key);
    for c in name.components() {
        s.absorb_padded(c.wire);
    }
    s.finish()
}

/// Hash of the name made of the first `k` components of `name`.
pub fn prefix_hash(key: HashKey, name: &NameView<'_>, k: usize) -> u64 {
    let mut s = SipState::new(key);
    for c in name.components().take(k) {
        s.absorb_padded(c.wire);
    }
    s.finish()
}

/// Hash of an owned name (control plane: FIB and strategy-choice updates).
pub fn name_hash(key: HashKey, name: &wire::Name) -> u64 {
    let mut s = SipState::new(key);
    let mut buf = Vec::with_capacity(64);
    for c in &name.components {
        buf.clear();
        c.encode(&mut buf);
        s.absorb_padded(&buf);
    }
    s.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use core::hash::Hasher;
    use wire::{Limits, Name};

    const KEY: HashKey = HashKey::fixed(0x0706_0504_0302_0100, 0x0f0e_0d0c_0b0a_0908);

    fn reference(key: HashKey, name: &Name, k: usize) -> u64 {
        let mut h = siphasher::sip::SipHasher13::new_with_keys(key.k0, key.k1);
        for c in &name.components[..k] {
            let mut b = Vec::new();
            c.encode(&mut b);
            b.resize(b.len().div_ceil(8) * 8, 0);
            h.write(&b);
        }
        h.finish()
    }

    #[test]
    fn matches_reference_siphash13_for_every_prefix() {
        for uri in [
            "/",
            "/a",
            "/com/cisco/ndn",
            "/x/seg=7/%00%01%02%03%04%05%06%07%08",
        ] {
            let name = Name::from_uri(uri).unwrap();
            let w = name.to_wire();
            let v = NameView::decode(&w, &Limits::default()).unwrap();
            let p = PrefixHashes::new(KEY, &v);
            for k in 0..=name.len() {
                assert_eq!(p.prefix(k), Some(reference(KEY, &name, k)), "{uri} k={k}");
                assert_eq!(prefix_hash(KEY, &v, k), reference(KEY, &name, k));
                let end = p.prefix_end(k, &v).unwrap();
                assert_eq!(&v.value()[..end], &name.prefix(k).to_wire()[2..]);
            }
            assert_eq!(p.full(), full_name_hash(KEY, &v));
            assert_eq!(p.full(), name_hash(KEY, &name));
            let extra = wire::Component::segment(9);
            let longer = name.clone().with(extra.clone());
            let mut ew = Vec::new();
            extra.encode(&mut ew);
            assert_eq!(p.extend_full(&ew), name_hash(KEY, &longer));
        }
    }

    #[test]
    fn siphash13_known_answer() {
        // SipHash-1-3 of the empty message under key 00..0f, as computed by the reference crate;
        // our state machine must agree on the empty message too.
        let mut h = siphasher::sip::SipHasher13::new_with_keys(KEY.k0, KEY.k1);
        h.write(&[]);
        assert_eq!(SipState::new(KEY).finish(), h.finish());
    }

    #[test]
    fn long_names_keep_states_up_to_the_limit() {
        let mut name = Name::new();
        for i in 0..40 {
            name.push(wire::Component::generic(format!("c{i}").into_bytes()));
        }
        let w = name.to_wire();
        let v = NameView::decode(&w, &Limits::default()).unwrap();
        let p = PrefixHashes::new(KEY, &v);
        assert_eq!(p.len(), 40);
        assert_eq!(p.prefix(32), Some(reference(KEY, &name, 32)));
        assert_eq!(p.prefix(33), None);
        assert_eq!(p.prefix(40), Some(reference(KEY, &name, 40)));
    }

    #[test]
    fn different_keys_and_names_differ() {
        let a = Name::from_uri("/a/b").unwrap();
        let b = Name::from_uri("/ab").unwrap();
        assert_ne!(name_hash(KEY, &a), name_hash(KEY, &b));
        assert_ne!(name_hash(KEY, &a), name_hash(HashKey::fixed(1, 2), &a));
    }
}
