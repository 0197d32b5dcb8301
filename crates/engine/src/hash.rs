//! Keyed name hashing: SipHash-1-3 over every name prefix in one pass, finalized lazily.
//!
//! # Construction
//! The hash of the prefix made of components `c1..ck` is standard SipHash-1-3, under the
//! process's secret 128-bit key, of the byte string `c1 || c2 || ... || ck`, where `ci` is the
//! component's full TLV (type, length, value): exactly the first bytes of the Name TLV-VALUE.
//! TLV elements are self-delimiting, so this encoding is injective: two different prefixes
//! never map to the same byte string, and collisions between prefixes are exactly SipHash
//! collisions under an unknown key, which an attacker cannot aim for (hash flooding needs the
//! key). One pass over the name's bytes, a word at a time, keeps the four state words after
//! every whole word, and a walk over the TLV headers notes where each component ends; a
//! prefix hash then costs only SipHash's last block (the bytes past its last whole word, read
//! from the name) and finalization (4 SipRounds), and only when a lookup asks for it.
//!
//! # Cost sketch
//! A name of 58 characters in 6.66 components is about 72 TLV bytes: 9 SipRounds of
//! compression (a per-component zero padding, the first design, needed 14), plus 4 per
//! finalized prefix. A SipRound is 14 simple ALU operations, about 4 cycles of dependent
//! latency, so hashing a typical name and finalizing the full name and two FIB prefixes is
//! about 21 rounds, under 100 cycles; a garbage name of 40 components and 400 bytes costs 50
//! rounds of compression, its length's worth and no more.

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

/// SipHash state at a component boundary: the four state words after the whole 8-byte words
/// so far, the bytes past them (little-endian, fewer than 8) and the length in bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct SipState {
    v: [u64; 4],
    tail: u64,
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

/// The little-endian word at `bytes[at..at + 8]`.
#[inline(always)]
fn word_at(bytes: &[u8], at: usize) -> u64 {
    let mut w = [0u8; 8];
    w.copy_from_slice(&bytes[at..at + 8]);
    u64::from_le_bytes(w)
}

/// The `n` (< 8) bytes at `bytes[at..]` as a little-endian word: one load and a mask where 8
/// bytes are readable there, else a byte loop (only at the very end of a name).
#[inline(always)]
fn tail_at(bytes: &[u8], at: usize, n: usize) -> u64 {
    debug_assert!(n < 8);
    if n == 0 {
        0
    } else if at + 8 <= bytes.len() {
        word_at(bytes, at) & (u64::MAX >> (64 - 8 * n))
    } else if at + n >= 8 {
        // The name's last bytes: the word ending with them, shifted down.
        word_at(bytes, at + n - 8) >> (64 - 8 * n)
    } else {
        bytes[at..at + n]
            .iter()
            .enumerate()
            .fold(0u64, |m, (i, &b)| m | u64::from(b) << (8 * i))
    }
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
            tail: 0,
            len: 0,
        }
    }

    #[inline(always)]
    fn word(v: &mut [u64; 4], m: u64) {
        v[3] ^= m;
        sip_round(v);
        v[0] ^= m;
    }

    /// Appends `bytes` after this state's (tail included): the general streaming case.
    fn append(&mut self, bytes: &[u8]) {
        for &b in bytes {
            let at = (self.len % 8) as u32;
            self.tail |= u64::from(b) << (8 * at);
            self.len += 1;
            if at == 7 {
                Self::word(&mut self.v, self.tail);
                self.tail = 0;
            }
        }
    }

    /// SipHash-1-3 finalization: the last block (tail and length), then 3 rounds.
    #[inline]
    fn finish(&self) -> u64 {
        let mut v = self.v;
        let b = self.tail | (self.len & 0xff) << 56;
        Self::word(&mut v, b);
        v[2] ^= 0xff;
        sip_round(&mut v);
        sip_round(&mut v);
        sip_round(&mut v);
        v[0] ^ v[1] ^ v[2] ^ v[3]
    }
}

/// SipHash-1-3 of `bytes` under `key`.
#[inline]
fn sip13(key: HashKey, bytes: &[u8]) -> u64 {
    let mut s = SipState::new(key);
    let whole = bytes.len() / 8;
    for w in 0..whole {
        SipState::word(&mut s.v, word_at(bytes, 8 * w));
    }
    s.tail = tail_at(bytes, 8 * whole, bytes.len() - 8 * whole);
    s.len = bytes.len() as u64;
    s.finish()
}

/// Whole words of a name whose compression state [`PrefixHashes`] keeps (1 KB of name bytes):
/// a prefix ending past them is finalized by absorbing its remaining words from the last kept
/// state.
const KEPT_WORDS: usize = 128;

/// The end of the component whose TLV starts at `pos` in a validated Name TLV-VALUE (the
/// common one-byte TYPE and LENGTH read directly; anything else, even malformed, ends the
/// walk or goes through the checked VAR-NUMBER reader).
#[inline(always)]
fn component_end(bytes: &[u8], pos: usize) -> usize {
    if let (Some(&t), Some(&l)) = (bytes.get(pos), bytes.get(pos + 1)) {
        if t < 253 && l < 253 {
            return pos + 2 + usize::from(l);
        }
    }
    let slow = || -> Option<usize> {
        let rest = bytes.get(pos..)?;
        let (_, tn) = wire::tlv::read_var_number(rest, pos).ok()?;
        let (l, ln) = wire::tlv::read_var_number(rest.get(tn..)?, pos + tn).ok()?;
        pos.checked_add(tn + ln)?
            .checked_add(usize::try_from(l).ok()?)
    };
    // A view's name was validated: the slow path only sees long components. Never loop
    // forever on a malformed one: end the walk.
    slow().map_or(bytes.len(), |e| e.min(bytes.len()))
}

/// The hashes of every prefix of one name, computed in one pass, finalized on demand.
///
/// `prefix(k, name)` is the hash of the first `k` components (`k` in `0..=len`, 0 being the
/// empty name `/`). Prefixes up to [`MAX_PREFIX_STATES`] components are available; `full()`
/// is always there.
///
/// The pass keeps the compression state after every whole word (up to 128, `KEPT_WORDS`) rather
/// than at every component boundary: the word loop then runs without data-dependent branches
/// (a boundary-driven loop mispredicts about once per component, which dominated the cost of
/// long garbage names), and a prefix's state is the state after its last whole word plus the
/// bytes past it, read from the name when the prefix is finalized.
#[derive(Clone, Debug)]
pub struct PrefixHashes {
    /// `words[w]`: the four state words after absorbing the name's first `w` words.
    words: [[u64; 4]; KEPT_WORDS + 1],
    /// Words kept in `words` (beyond index 0).
    kept_words: u16,
    ends: [u32; MAX_PREFIX_STATES + 1],
    kept: u8,
    len: u16,
    full: u64,
    full_state: SipState,
    /// Finalized prefix hashes, valid where the bit of `finalized` is set: a lookup asks for the
    /// same prefix several times (prefetch, then probe), and each finalization is 4 SipRounds.
    finals: [Cell<u64>; MAX_PREFIX_STATES + 1],
    finalized: Cell<u64>,
    /// The prefix states were computed ([`PrefixHashes::compute`]); after
    /// [`PrefixHashes::set_full`] only the full-name hash is known.
    prefixes: bool,
}

impl PrefixHashes {
    /// Hashes every prefix of `name`.
    pub fn new(key: HashKey, name: &NameView<'_>) -> Self {
        let s = SipState::new(key);
        let mut h = PrefixHashes {
            words: [s.v; KEPT_WORDS + 1],
            kept_words: 0,
            ends: [0; MAX_PREFIX_STATES + 1],
            kept: 0,
            len: 0,
            full: 0,
            full_state: s,
            finals: core::array::from_fn(|_| Cell::new(0)),
            finalized: Cell::new(0),
            prefixes: false,
        };
        h.compute(key, name);
        h
    }

    /// Recomputes in place for another name (the hot path reuses one per batch slot, writing
    /// only the states the name needs).
    #[inline]
    pub fn compute(&mut self, key: HashKey, name: &NameView<'_>) {
        self.compute_states(key, name);
        self.full = self.full_state.finish();
    }

    /// [`PrefixHashes::compute`] for a name whose full-name hash `full` is known already (the
    /// dispatcher computed it to pick the worker): the same states, one finalization fewer.
    /// `full` must be [`full_name_hash`] of `name` under `key` (checked in debug builds).
    #[inline]
    pub fn compute_with_full(&mut self, key: HashKey, name: &NameView<'_>, full: u64) {
        self.compute_states(key, name);
        debug_assert_eq!(self.full_state.finish(), full, "a wrong precomputed hash");
        self.full = full;
    }

    /// Only the full-name hash, known already (see [`PrefixHashes::compute_with_full`]): no
    /// pass over the name. [`PrefixHashes::prefix`] and [`PrefixHashes::prefix_end`] then
    /// answer only for the whole name, and [`PrefixHashes::extend_full`] not at all, until the
    /// next [`PrefixHashes::compute`]. What a Data needs when no CanBePrefix or digest Interest
    /// is pending, and a Nack always.
    #[inline]
    pub fn set_full(&mut self, name: &NameView<'_>, full: u64) {
        self.len = name.len().min(u16::MAX as usize) as u16;
        self.kept = 0;
        self.kept_words = 0;
        self.full = full;
        self.prefixes = false;
        self.finalized.set(0);
    }

    /// Whether the prefix states are there ([`PrefixHashes::compute`], not
    /// [`PrefixHashes::set_full`]).
    #[inline]
    pub fn has_prefixes(&self) -> bool {
        self.prefixes
    }

    /// The word loop and component walk of [`PrefixHashes::compute`], up to the full-name state.
    #[inline(always)]
    fn compute_states(&mut self, key: HashKey, name: &NameView<'_>) {
        let bytes = name.value();
        // Component boundaries: a walk over the TLV headers, the fast path always taken.
        self.ends[0] = 0;
        let mut len = 0usize;
        let mut pos = 0usize;
        while pos < bytes.len() {
            pos = component_end(bytes, pos);
            len += 1;
            if len <= MAX_PREFIX_STATES {
                self.ends[len] = pos as u32;
            }
        }
        let kept = len.min(MAX_PREFIX_STATES);
        // Words: compress every whole word, keeping the states a kept prefix can end in.
        let s = SipState::new(key);
        let mut v = s.v;
        self.words[0] = v;
        let whole = bytes.len() / 8;
        let keep = whole.min(KEPT_WORDS).min(self.ends[kept] as usize / 8);
        for w in 0..keep {
            SipState::word(&mut v, word_at(bytes, 8 * w));
            self.words[w + 1] = v;
        }
        for w in keep..whole {
            SipState::word(&mut v, word_at(bytes, 8 * w));
        }
        let full_state = SipState {
            v,
            tail: tail_at(bytes, 8 * whole, bytes.len() - 8 * whole),
            len: bytes.len() as u64,
        };
        self.kept_words = keep as u16;
        self.kept = kept as u8;
        self.len = len.min(u16::MAX as usize) as u16;
        self.full_state = full_state;
        self.prefixes = true;
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
        } else if k <= usize::from(self.kept) && self.prefixes {
            Some(self.ends[k] as usize)
        } else {
            None
        }
    }

    /// Hash of the whole name followed by one more component (its TLV `component_wire`), e.g.
    /// the implicit digest of a Data packet; `None` after [`PrefixHashes::set_full`].
    #[inline]
    pub fn extend_full(&self, component_wire: &[u8]) -> Option<u64> {
        if !self.prefixes {
            return None;
        }
        let mut s = self.full_state;
        s.append(component_wire);
        Some(s.finish())
    }

    /// Hash of the first `k` components of `name` (the name these hashes were computed for);
    /// `None` beyond [`MAX_PREFIX_STATES`] (unless `k` is the whole name) or beyond the name.
    #[inline]
    pub fn prefix(&self, k: usize, name: &NameView<'_>) -> Option<u64> {
        if k == self.len() {
            return Some(self.full);
        }
        if k > usize::from(self.kept) || !self.prefixes {
            return None;
        }
        let bit = 1u64 << k;
        if self.finalized.get() & bit != 0 {
            return Some(self.finals[k].get());
        }
        let bytes = name.value();
        let end = (self.ends[k] as usize).min(bytes.len());
        let whole = end / 8;
        let from = whole.min(usize::from(self.kept_words));
        let mut v = self.words[from];
        // Only for prefixes ending past the kept words (names over 1 KB).
        for w in from..whole {
            SipState::word(&mut v, word_at(bytes, 8 * w));
        }
        let s = SipState {
            v,
            tail: tail_at(bytes, 8 * whole, end - 8 * whole),
            len: end as u64,
        };
        let h = s.finish();
        self.finals[k].set(h);
        self.finalized.set(self.finalized.get() | bit);
        Some(h)
    }
}

/// Hash of a whole name, without keeping prefix states (what an I/O thread computes to pick the
/// worker): SipHash-1-3 of the Name TLV-VALUE.
pub fn full_name_hash(key: HashKey, name: &NameView<'_>) -> u64 {
    sip13(key, name.value())
}

/// Hash of a whole name given as its Name TLV-VALUE (the components' TLVs): the same value as
/// [`full_name_hash`] and [`PrefixHashes::full`] for that name.
pub fn value_hash(key: HashKey, name_value: &[u8]) -> u64 {
    sip13(key, name_value)
}

/// Hash of the name made of the first `k` components of `name` (all of it if it has fewer).
pub fn prefix_hash(key: HashKey, name: &NameView<'_>, k: usize) -> u64 {
    let end: usize = name.components().take(k).map(|c| c.wire.len()).sum();
    sip13(key, &name.value()[..end])
}

/// Hash of an owned name (control plane: FIB and strategy-choice updates).
pub fn name_hash(key: HashKey, name: &wire::Name) -> u64 {
    let mut buf = Vec::with_capacity(64);
    for c in &name.components {
        c.encode(&mut buf);
    }
    sip13(key, &buf)
}

#[cfg(test)]
mod tests {
    use super::*;
    use core::hash::Hasher;
    use wire::{Limits, Name};

    const KEY: HashKey = HashKey::fixed(0x0706_0504_0302_0100, 0x0f0e_0d0c_0b0a_0908);

    fn reference(key: HashKey, name: &Name, k: usize) -> u64 {
        let mut h = siphasher::sip::SipHasher13::new_with_keys(key.k0, key.k1);
        let mut b = Vec::new();
        for c in &name.components[..k] {
            c.encode(&mut b);
        }
        h.write(&b);
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
                assert_eq!(
                    p.prefix(k, &v),
                    Some(reference(KEY, &name, k)),
                    "{uri} k={k}"
                );
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
            assert_eq!(p.extend_full(&ew), Some(name_hash(KEY, &longer)));
        }
    }

    proptest::proptest! {
        /// Every prefix of random names (components of 0 to 20 bytes, so boundaries fall at
        /// every offset within a word, and tails at the very end of the buffer) agrees with the
        /// reference, and so does the one-more-component extension.
        #[test]
        fn random_names_match_reference(
            comps in proptest::collection::vec(proptest::collection::vec(proptest::num::u8::ANY, 0..20), 0..12),
            extra in proptest::collection::vec(proptest::num::u8::ANY, 0..20),
        ) {
            let mut name = Name::new();
            for c in comps {
                name.push(wire::Component::generic(c));
            }
            let w = name.to_wire();
            let v = NameView::decode(&w, &Limits::default()).unwrap();
            let p = PrefixHashes::new(KEY, &v);
            for k in 0..=name.len() {
                proptest::prop_assert_eq!(p.prefix(k, &v), Some(reference(KEY, &name, k)));
                proptest::prop_assert_eq!(prefix_hash(KEY, &v, k), reference(KEY, &name, k));
            }
            proptest::prop_assert_eq!(p.full(), full_name_hash(KEY, &v));
            let extra = wire::Component::generic(extra);
            let mut ew = Vec::new();
            extra.encode(&mut ew);
            let longer = name.clone().with(extra);
            proptest::prop_assert_eq!(p.extend_full(&ew), Some(name_hash(KEY, &longer)));
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
        assert_eq!(p.prefix(32, &v), Some(reference(KEY, &name, 32)));
        assert_eq!(p.prefix(33, &v), None);
        assert_eq!(p.prefix(40, &v), Some(reference(KEY, &name, 40)));
    }

    #[test]
    fn prefixes_past_the_kept_words_match_reference() {
        // Components of 300 to 700 bytes (three-byte TLV-LENGTHs): boundaries beyond the 1 KB
        // of kept word states, finalized by absorbing the remaining words.
        let mut name = Name::new();
        for (i, n) in [300usize, 700, 5, 511, 9].into_iter().enumerate() {
            name.push(wire::Component::generic(vec![i as u8 ^ 0x5A; n]));
        }
        let w = name.to_wire();
        let v = NameView::decode(&w, &Limits::default()).unwrap();
        let p = PrefixHashes::new(KEY, &v);
        assert_eq!(p.len(), 5);
        for k in 0..=5 {
            assert_eq!(p.prefix(k, &v), Some(reference(KEY, &name, k)), "k={k}");
            let end = p.prefix_end(k, &v).unwrap();
            let mut want = Vec::new();
            for c in &name.components[..k] {
                c.encode(&mut want);
            }
            assert_eq!(&v.value()[..end], &want[..]);
        }
        // A second computation in the same value (the hot path's reuse) starts afresh.
        let short = Name::from_uri("/a/b").unwrap();
        let sw = short.to_wire();
        let sv = NameView::decode(&sw, &Limits::default()).unwrap();
        let mut q = p.clone();
        q.compute(KEY, &sv);
        for k in 0..=2 {
            assert_eq!(q.prefix(k, &sv), Some(reference(KEY, &short, k)));
        }
    }

    #[test]
    fn different_keys_and_names_differ() {
        let a = Name::from_uri("/a/b").unwrap();
        let b = Name::from_uri("/ab").unwrap();
        assert_ne!(name_hash(KEY, &a), name_hash(KEY, &b));
        assert_ne!(name_hash(KEY, &a), name_hash(HashKey::fixed(1, 2), &a));
    }
}
