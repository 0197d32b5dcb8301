//! Certificates answering management's localhop fetches from apps that do not echo PIT tokens.
//!
//! Management fetches a localhop command's certificate chain from the face the command came
//! from, with its own PIT token ([`mgmt::auth::FETCH_TOKEN`]), and the dispatcher hands a Data
//! carrying that token back to management. An app that does not echo PIT tokens (python-ndn's
//! `ndn.app.NDNApp`, which says so) answers with a bare Data, which NFD still matches, since
//! NFD's fetch goes through its own PIT. So each I/O loop remembers the fetches management
//! sent on its faces (face, Interest, until when), and a Data without a PIT token from such a
//! face whose name the fetched name is a prefix of goes to management too, tagged with the
//! token as if the app had echoed it. The Data still goes to its worker as every Data does
//! (which counts it as unsolicited unless a consumer asked for it): nothing is taken from the
//! forwarding plane.
//!
//! Bounds: at most [`MAX_REMEMBERED`] fetches, each until [`FETCH_LIFETIME_MS`] after it was
//! sent (a fetch of the same name on the same face, sent again after a timeout, refreshes its
//! entry); the oldest goes first when more come (management waits for at most [`MAX_PENDING`]
//! commands,
//! each with one fetch at a time, so this does not happen). A Data is looked at only while some
//! fetch is remembered.

use std::collections::VecDeque;

use face::link::encode_link;
use face::lp_frag::{LpHeaders, PitToken};
use face::FaceId;
use mgmt::auth::chain::{FETCH_LIFETIME_MS, MAX_PENDING};
use mgmt::auth::FETCH_TOKEN;
use wire::{tt, DataView, InterestView, Limits, LpPacketView};

/// Fetches remembered per loop at most.
pub const MAX_REMEMBERED: usize = 2 * MAX_PENDING;

/// One fetch management sent.
#[derive(Debug)]
struct Fetch {
    face: FaceId,
    /// The value of the fetched name (its components' TLVs).
    name: Vec<u8>,
    until_ms: u64,
}

/// The fetches an I/O loop sent for management, still waiting for their certificates.
#[derive(Debug, Default)]
pub struct CertFetches {
    fetches: VecDeque<Fetch>,
}

impl CertFetches {
    /// Whether no fetch waits (then no Data needs a look).
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.fetches.is_empty()
    }

    /// Management sends the link-layer packet `bytes` on `face` at `now_ms`: a certificate
    /// fetch (an Interest with management's fetch token) is remembered.
    pub fn on_send(&mut self, face: FaceId, bytes: &[u8], limits: &Limits, now_ms: u64) {
        if bytes.first() != Some(&(tt::LP_PACKET as u8)) {
            return;
        }
        let Ok(lp) = LpPacketView::decode(bytes, limits) else {
            return;
        };
        let Some(interest) = lp.fragment() else {
            return;
        };
        if lp.pit_token != Some(&FETCH_TOKEN[..]) {
            return;
        }
        let Ok(interest) = InterestView::decode(interest, limits) else {
            return;
        };
        let name = interest.name().value();
        self.fetches
            .retain(|f| f.until_ms > now_ms && (f.face, &f.name[..]) != (face, name));
        if self.fetches.len() == MAX_REMEMBERED {
            self.fetches.pop_front();
        }
        self.fetches.push_back(Fetch {
            face,
            name: name.to_vec(),
            until_ms: now_ms.saturating_add(FETCH_LIFETIME_MS),
        });
    }

    /// A Data `packet` (network layer) that came without a PIT token on `face` at `now_ms`:
    /// if it answers a fetch remembered for that face, the fetch is forgotten and the Data comes
    /// back as the link-layer packet management takes (with its fetch token).
    pub fn answer(
        &mut self,
        face: FaceId,
        packet: &[u8],
        limits: &Limits,
        now_ms: u64,
    ) -> Option<Vec<u8>> {
        self.fetches.retain(|f| f.until_ms > now_ms);
        if !self.fetches.iter().any(|f| f.face == face) {
            return None;
        }
        let data = DataView::decode(packet, limits).ok()?;
        let name = data.name().value();
        let at = self
            .fetches
            .iter()
            .position(|f| f.face == face && name.starts_with(&f.name))?;
        self.fetches.remove(at);
        let headers = LpHeaders {
            pit_token: PitToken::new(&FETCH_TOKEN),
            ..LpHeaders::default()
        };
        let mut tagged = Vec::with_capacity(packet.len() + 16);
        encode_link(&mut tagged, &headers, packet, usize::MAX).then_some(tagged)
    }

    /// [`CertFetches::answer`] for a received link-layer packet, or a network packet and its
    /// link headers: only a Data without a PIT token is looked at.
    pub fn answer_link(
        &mut self,
        face: FaceId,
        headers: Option<&LpHeaders>,
        bytes: &[u8],
        limits: &Limits,
        now_ms: u64,
    ) -> Option<Vec<u8>> {
        let packet = match headers {
            Some(h) if h.pit_token.is_some() => return None,
            Some(_) => bytes,
            None if bytes.first() == Some(&(tt::LP_PACKET as u8)) => {
                let lp = LpPacketView::decode(bytes, limits).ok()?;
                if lp.pit_token.is_some() {
                    return None;
                }
                lp.fragment()?
            }
            None => bytes,
        };
        self.answer(face, packet, limits, now_ms)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicU32, Ordering};
    use wire::{Data, Interest, Name};

    fn fetch(uri: &str, token: Option<&[u8]>) -> Vec<u8> {
        // Each fetch its own nonce, as management's retransmissions have.
        static NONCES: AtomicU32 = AtomicU32::new(1);
        let nonce = NONCES.fetch_add(1, Ordering::Relaxed).to_be_bytes();
        let mut i = Interest::new(Name::from_uri(uri).unwrap(), nonce);
        i.can_be_prefix = true;
        let headers = LpHeaders {
            pit_token: token.and_then(PitToken::new),
            ..LpHeaders::default()
        };
        let mut v = Vec::new();
        assert!(encode_link(&mut v, &headers, &i.to_wire(), usize::MAX));
        v
    }

    fn cert(uri: &str) -> Vec<u8> {
        Data::new(Name::from_uri(uri).unwrap(), vec![1; 8]).to_wire()
    }

    #[test]
    fn a_bare_certificate_from_the_fetched_face_goes_to_management_tagged_once() {
        let (l, mut c) = (Limits::default(), CertFetches::default());
        c.on_send(7, &fetch("/ndn/site/KEY/k1", Some(&FETCH_TOKEN)), &l, 1_000);
        assert!(!c.is_empty());
        // Another face, another name, a name the fetch is not a prefix of: nothing.
        let answer = cert("/ndn/site/KEY/k1/ndn/v=1");
        assert_eq!(c.answer(8, &answer, &l, 1_001), None);
        assert_eq!(c.answer(7, &cert("/ndn/site/KEY/k2/x"), &l, 1_001), None);
        assert_eq!(c.answer(7, &cert("/ndn/site/KEY"), &l, 1_001), None);
        // A component that only starts like the fetched one is another name.
        assert_eq!(c.answer(7, &cert("/ndn/site/KEY/k10/x"), &l, 1_001), None);
        let tagged = c.answer(7, &answer, &l, 1_002).expect("answers the fetch");
        let lp = LpPacketView::decode(&tagged, &l).unwrap();
        assert_eq!(lp.pit_token, Some(&FETCH_TOKEN[..]));
        assert_eq!(lp.fragment(), Some(&answer[..]));
        assert!(c.is_empty(), "answered once");
        assert_eq!(c.answer(7, &answer, &l, 1_003), None);
    }

    #[test]
    fn only_management_fetches_are_remembered_and_only_until_their_lifetime() {
        let (l, mut c) = (Limits::default(), CertFetches::default());
        // An Interest with another token, with none, a Data with the token, garbage: none.
        c.on_send(7, &fetch("/a/KEY/k", Some(b"other")), &l, 0);
        c.on_send(7, &fetch("/a/KEY/k", None), &l, 0);
        c.on_send(7, &cert("/a/KEY/k"), &l, 0);
        c.on_send(7, &[0x64, 0x02, 0x50, 0x00], &l, 0);
        assert!(c.is_empty());
        c.on_send(7, &fetch("/a/KEY/k", Some(&FETCH_TOKEN)), &l, 0);
        let late = FETCH_LIFETIME_MS;
        assert_eq!(c.answer(7, &cert("/a/KEY/k/i/v=1"), &l, late), None);
        assert!(c.is_empty(), "expired");
        // Sent again after a timeout: the entry is refreshed, not doubled.
        c.on_send(7, &fetch("/a/KEY/k", Some(&FETCH_TOKEN)), &l, late);
        c.on_send(7, &fetch("/a/KEY/k", Some(&FETCH_TOKEN)), &l, 2 * late - 1);
        assert_eq!(c.fetches.len(), 1);
        assert!(c
            .answer(7, &cert("/a/KEY/k/i/v=1"), &l, 3 * late - 2)
            .is_some());
    }

    #[test]
    fn a_data_with_a_pit_token_is_not_looked_at_and_the_table_is_bounded() {
        let (l, mut c) = (Limits::default(), CertFetches::default());
        for n in 0..MAX_REMEMBERED + 5 {
            c.on_send(
                7,
                &fetch(&format!("/a/KEY/k{n}"), Some(&FETCH_TOKEN)),
                &l,
                0,
            );
        }
        assert_eq!(c.fetches.len(), MAX_REMEMBERED);
        let oldest = cert("/a/KEY/k0/i/v=1");
        assert_eq!(c.answer(7, &oldest, &l, 1), None, "the oldest went first");
        let newest = cert(&format!("/a/KEY/k{}/i/v=1", MAX_REMEMBERED + 4));
        let mut with_token = Vec::new();
        let headers = LpHeaders {
            pit_token: PitToken::new(b"tok"),
            ..LpHeaders::default()
        };
        assert!(encode_link(&mut with_token, &headers, &newest, usize::MAX));
        assert_eq!(c.answer_link(7, None, &with_token, &l, 1), None);
        assert_eq!(c.answer_link(7, Some(&headers), &newest, &l, 1), None);
        let bare = LpHeaders::default();
        assert!(c.answer_link(7, Some(&bare), &newest, &l, 1).is_some());
        let second = cert(&format!("/a/KEY/k{}/i/v=1", MAX_REMEMBERED + 3));
        let mut in_lp = Vec::new();
        assert!(encode_link(&mut in_lp, &bare, &second, usize::MAX));
        assert!(c.answer_link(7, None, &in_lp, &l, 1).is_some());
        assert!(c
            .answer_link(7, None, &cert("/a/KEY/k5/i"), &l, 1)
            .is_some());
    }
}
