//! Notification streams, as NFD publishes `faces/events` and ndn-cxx's `NotificationSubscriber`
//! (the `FaceMonitor` of NLSR, nfd-autoreg, ...) reads them.
//!
//! A stream is a prefix (`/localhost/nfd/faces/events`) under which each notification is a Data
//! named `<prefix>/seq=<n>`, `n` counting from 0. A subscriber first sends an Interest for the
//! bare prefix with CanBePrefix and MustBeFresh, then, after each notification, one for
//! `<prefix>/seq=<n+1>`; when its Interest times out (or a notification does not decode) it
//! starts over with the first kind. So the stream must never answer with anything but a
//! notification: an Interest nothing answers yet waits until the next notification, or until
//! its lifetime passes, and is then dropped in silence.
//!
//! What ndn-cxx's dispatcher does, this does: every notification is kept in a store of the last
//! [`RECENT_NOTIFICATIONS`] (its in-memory storage, FIFO), where it counts as fresh for
//! [`FRESH_MS`]; an Interest is answered at once from that store when a kept notification matches
//! it (by name, CanBePrefix and MustBeFresh; among several, the lowest sequence number), and
//! otherwise waits, as it would in NFD's PIT, for the first notification published that
//! matches it. A waiting Interest is kept once per face, name and selectors (a retransmission
//! replaces it, as an in-record does), and at most [`PENDING_CAPACITY`] wait at once: beyond
//! that an Interest is dropped and counted ([`NotificationStream::refused`]).
//!
//! The stream reads no clock: times are milliseconds on the caller's clock.

use std::collections::VecDeque;

use engine::table::pit_cs::FaceId;
use wire::{tt, Component, InterestView, Name};

/// Notifications kept for Interests that come after them (ndn-cxx's dispatcher keeps 256 Data in
/// its in-memory storage).
pub const RECENT_NOTIFICATIONS: usize = 256;

/// How long a kept notification satisfies MustBeFresh, in milliseconds (the dispatcher's
/// in-memory storage marks a notification stale after 1 s, its FreshnessPeriod).
pub const FRESH_MS: u64 = 1000;

/// Interests waiting for a notification at once, over all faces.
pub const PENDING_CAPACITY: usize = 256;

/// A notification published, as sent.
struct Published {
    name: Name,
    at_ms: u64,
    data: Vec<u8>,
}

/// An Interest waiting for a notification.
struct Pending {
    face: FaceId,
    token: Option<Vec<u8>>,
    name: Name,
    can_be_prefix: bool,
    must_be_fresh: bool,
    expires_ms: u64,
}

impl Pending {
    fn matches(&self, data_name: &Name) -> bool {
        name_matches(&self.name, self.can_be_prefix, data_name)
    }
}

/// Whether an Interest named `interest` (with CanBePrefix `can_be_prefix`) can be answered by a
/// Data named `data`.
fn name_matches(interest: &Name, can_be_prefix: bool, data: &Name) -> bool {
    if can_be_prefix {
        interest.is_prefix_of(data)
    } else {
        interest == data
    }
}

/// Who a published notification goes to now: the faces of the Interests it satisfied, each with
/// the PIT token its Interest carried.
pub type Recipients = Vec<(FaceId, Option<Vec<u8>>)>;

/// One notification stream; see the [module docs](self).
pub struct NotificationStream {
    prefix: Name,
    next_seq: u64,
    recent: VecDeque<Published>,
    pending: Vec<Pending>,
    refused: u64,
    unanswered: u64,
}

impl NotificationStream {
    /// An empty stream under `prefix`, whose first notification will be sequence number 0.
    pub fn new(prefix: Name) -> Self {
        NotificationStream {
            prefix,
            next_seq: 0,
            recent: VecDeque::new(),
            pending: Vec::new(),
            refused: 0,
            unanswered: 0,
        }
    }

    /// The stream's prefix.
    pub fn prefix(&self) -> &Name {
        &self.prefix
    }

    /// The sequence number the next notification will carry.
    pub fn next_sequence(&self) -> u64 {
        self.next_seq
    }

    /// Interests waiting now.
    pub fn pending(&self) -> usize {
        self.pending.len()
    }

    /// Interests dropped so far because [`PENDING_CAPACITY`] were already waiting.
    pub fn refused(&self) -> u64 {
        self.refused
    }

    /// Interests that went unanswered so far: refused, expired, or left by a face that closed
    /// (NFD's forwarder counts each as an unsatisfied Interest).
    pub fn unanswered(&self) -> u64 {
        self.unanswered
    }

    /// An Interest for the stream arrived on `face` (with this PIT token) at `now_ms`: the Data
    /// answering it now, if a kept notification matches it; otherwise the Interest waits (or,
    /// the waiting room being full, is dropped and counted) and nothing is sent.
    pub fn on_interest(
        &mut self,
        face: FaceId,
        token: Option<&[u8]>,
        interest: &InterestView<'_>,
        now_ms: u64,
    ) -> Option<Vec<u8>> {
        let name = interest.name().to_name();
        let (can_be_prefix, must_be_fresh) = (interest.can_be_prefix(), interest.must_be_fresh());
        let kept = self
            .recent
            .iter()
            .filter(|p| !must_be_fresh || now_ms.saturating_sub(p.at_ms) < FRESH_MS)
            .filter(|p| name_matches(&name, can_be_prefix, &p.name))
            .min_by(|a, b| a.name.cmp(&b.name));
        if let Some(p) = kept {
            return Some(p.data.clone());
        }
        let expires_ms = now_ms.saturating_add(interest.effective_lifetime_ms());
        let token = token.map(<[u8]>::to_vec);
        let same = self.pending.iter_mut().find(|p| {
            p.face == face
                && p.name == name
                && p.can_be_prefix == can_be_prefix
                && p.must_be_fresh == must_be_fresh
        });
        if let Some(p) = same {
            p.token = token;
            p.expires_ms = expires_ms;
        } else if self.pending.len() >= PENDING_CAPACITY {
            self.refused += 1;
            self.unanswered += 1;
        } else {
            self.pending.push(Pending {
                face,
                token,
                name,
                can_be_prefix,
                must_be_fresh,
                expires_ms,
            });
        }
        None
    }

    /// Publishes a notification (its Content) at `now_ms`: the Data, named
    /// `<prefix>/seq=<n>`, signed, FreshnessPeriod 1 s, and the waiting Interests it satisfies
    /// (which stop waiting).
    pub fn publish(&mut self, content: Vec<u8>, now_ms: u64) -> (Vec<u8>, Recipients) {
        self.expire(now_ms);
        let seq = Component::number(tt::SEQUENCE_NUM as u16, self.next_seq);
        self.next_seq += 1;
        let name = self.prefix.clone().with(seq);
        let data = crate::signed_data(name.clone(), content, None);
        let mut to = Vec::new();
        self.pending.retain_mut(|p| {
            let hit = p.matches(&name);
            if hit {
                to.push((p.face, p.token.take()));
            }
            !hit
        });
        if self.recent.len() >= RECENT_NOTIFICATIONS {
            self.recent.pop_front();
        }
        self.recent.push_back(Published {
            name,
            at_ms: now_ms,
            data: data.clone(),
        });
        (data, to)
    }

    /// Drops the waiting Interests whose lifetime has passed by `now_ms`.
    pub fn expire(&mut self, now_ms: u64) {
        self.drop_where(|p| p.expires_ms <= now_ms);
    }

    /// Drops the Interests waiting on a face that closed.
    pub fn face_down(&mut self, face: FaceId) {
        self.drop_where(|p| p.face == face);
    }

    fn drop_where(&mut self, gone: impl Fn(&Pending) -> bool) {
        let before = self.pending.len();
        self.pending.retain(|p| !gone(p));
        self.unanswered += (before - self.pending.len()) as u64;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use wire::{DataView, Interest, Limits};

    fn prefix() -> Name {
        Name::from_uri("/localhost/nfd/faces/events").unwrap()
    }

    fn seq(n: u64) -> Name {
        prefix().with(Component::number(tt::SEQUENCE_NUM as u16, n))
    }

    /// An Interest's wire form: `name`, CanBePrefix and MustBeFresh as the subscriber sets them.
    fn interest(name: Name, first: bool, lifetime_ms: u64) -> Vec<u8> {
        let mut i = Interest::new(name, [1, 2, 3, 4]);
        i.can_be_prefix = first;
        i.must_be_fresh = first;
        i.lifetime_ms = Some(lifetime_ms);
        i.to_wire()
    }

    fn ask(
        s: &mut NotificationStream,
        face: FaceId,
        wire: &[u8],
        token: Option<&[u8]>,
        now: u64,
    ) -> Option<Name> {
        let v = InterestView::decode(wire, &Limits::default()).unwrap();
        s.on_interest(face, token, &v, now).map(|d| data_name(&d))
    }

    fn data_name(d: &[u8]) -> Name {
        DataView::decode(d, &Limits::default())
            .unwrap()
            .name()
            .to_name()
    }

    #[test]
    fn a_subscriber_waits_then_follows_the_sequence() {
        let mut s = NotificationStream::new(prefix());
        // The first Interest: nothing published, it waits (no answer, no error).
        let first = interest(prefix(), true, 60_000);
        assert_eq!(ask(&mut s, 7, &first, Some(&[9]), 0), None);
        assert_eq!(s.pending(), 1);
        // A retransmission from the same face replaces it.
        assert_eq!(ask(&mut s, 7, &first, Some(&[8]), 10), None);
        assert_eq!(s.pending(), 1);
        let (d, to) = s.publish(vec![0xC0, 0x00], 100);
        assert_eq!(data_name(&d), seq(0));
        assert_eq!(to, vec![(7, Some(vec![8]))]);
        assert_eq!(s.pending(), 0);
        let dv = DataView::decode(&d, &Limits::default()).unwrap();
        assert_eq!(dv.content(), Some(&[0xC0, 0x00][..]));
        assert_eq!(dv.freshness_ms(), Some(1000));
        assert!(dv.verify_digest_sha256());
        // Then seq=1: it waits for the next notification, which answers it and only it.
        assert_eq!(
            ask(&mut s, 7, &interest(seq(1), false, 60_000), None, 200),
            None
        );
        let (d, to) = s.publish(vec![1], 300);
        assert_eq!((data_name(&d), to), (seq(1), vec![(7, None)]));
        let (_, to) = s.publish(vec![2], 400);
        assert!(to.is_empty());
        assert_eq!(s.next_sequence(), 3);
    }

    #[test]
    fn kept_notifications_answer_at_once() {
        let mut s = NotificationStream::new(prefix());
        for i in 0..3 {
            s.publish(vec![i], 1000 + u64::from(i) * 400);
        }
        // Fresh (under 1 s old) and matching: the lowest sequence number among them.
        let first = interest(prefix(), true, 4000);
        assert_eq!(ask(&mut s, 1, &first, None, 1500), Some(seq(0)));
        assert_eq!(ask(&mut s, 1, &first, None, 2100), Some(seq(1)));
        assert_eq!(ask(&mut s, 1, &first, None, 2799), Some(seq(2)));
        // All stale: the first Interest waits.
        assert_eq!(ask(&mut s, 1, &first, None, 2800), None);
        // A sequence number asked by name is answered while kept, fresh or not.
        assert_eq!(
            ask(&mut s, 2, &interest(seq(0), false, 4000), None, 9000),
            Some(seq(0))
        );
        assert_eq!(
            ask(&mut s, 2, &interest(seq(3), false, 4000), None, 9000),
            None
        );
        // Only the last RECENT_NOTIFICATIONS are kept.
        for i in 0..RECENT_NOTIFICATIONS {
            s.publish(vec![], 10_000 + i as u64);
        }
        assert_eq!(
            ask(&mut s, 3, &interest(seq(0), false, 4000), None, 20_000),
            None
        );
    }

    #[test]
    fn waiting_interests_expire_go_with_their_face_and_are_bounded() {
        let mut s = NotificationStream::new(prefix());
        let first = interest(prefix(), true, 1000);
        ask(&mut s, 1, &first, None, 0);
        ask(&mut s, 2, &first, None, 500);
        s.expire(1000);
        assert_eq!(s.pending(), 1, "face 1's Interest expired at 1000 ms");
        s.face_down(2);
        assert_eq!((s.pending(), s.unanswered()), (0, 2));
        // A publication past an Interest's lifetime does not answer it.
        ask(&mut s, 3, &first, None, 0);
        assert!(s.publish(vec![], 1000).1.is_empty());
        // The waiting room is bounded; what does not fit is counted.
        for f in 0..PENDING_CAPACITY as FaceId + 5 {
            ask(&mut s, f, &first, None, 2000);
        }
        assert_eq!((s.pending(), s.refused()), (PENDING_CAPACITY, 5));
        assert_eq!(s.unanswered(), 3 + 5);
        let (_, to) = s.publish(vec![], 2001);
        assert_eq!(to.len(), PENDING_CAPACITY);
    }
}
