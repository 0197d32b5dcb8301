//! The simulated faces: consumers, producers, a hostile face and the administrator. Each
//! keeps what the checker needs (the Interests it sent and has not had answered) and makes
//! the packets it sends from the simulation's one random source.

use std::collections::{HashSet, VecDeque};

use engine::table::pit_cs::FaceId;
use wire::{Interest, InterestView, Limits, Name};

use super::packets::{canonical_data, content_name, decode, nack, with_token, Received};
use super::rng::Rng;

/// Interests a face keeps pending at most (its window); a face sends no more until one is
/// answered or long expired.
pub const WINDOW: usize = 256;

/// How long after its lifetime a pending Interest may still be answered (it waited in a ring
/// before the router saw it): only then may a full window forget it.
pub const GRACE_MS: u64 = 120_000;

/// Received Interests the hostile face keeps to send back (a loop).
const HEARD: usize = 16;

/// What a face does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// Sends Interests, checks the Data.
    Consumer,
    /// Answers Interests under producer prefix `k`.
    Producer(usize),
    /// Sends garbage, duplicates, replays, floods; sends back Interests routed to it.
    Hostile,
    /// A local face that sends management commands.
    Admin,
}

/// An Interest a face sent and has not had answered.
#[derive(Debug, Clone)]
pub struct Pending {
    /// Its name.
    pub name: Name,
    /// CanBePrefix.
    pub can_be_prefix: bool,
    /// The PIT token it carried.
    pub token: Option<Vec<u8>>,
    /// Its nonce.
    pub nonce: [u8; 4],
    /// The order the face sent it in.
    pub seq: u64,
    /// Until when a full window keeps it.
    pub keep_until_ms: u64,
}

impl Pending {
    /// Whether a Data named `name` satisfies it.
    pub fn satisfied_by(&self, name: &Name) -> bool {
        if self.can_be_prefix {
            self.name.is_prefix_of(name)
        } else {
            self.name == *name
        }
    }
}

/// One simulated face.
#[derive(Debug)]
pub struct SimFace {
    /// Its id in the router.
    pub id: FaceId,
    /// What it does.
    pub role: Role,
    /// Local scope (may send `/localhost`).
    pub local: bool,
    /// Packets the router sent it, not yet read (its send queue in the router; bounded).
    pub inbox: VecDeque<Vec<u8>>,
    /// Interests sent, not answered.
    pub pending: Vec<Pending>,
    /// A producer's answers held back, with when they go.
    pub delayed: Vec<(u64, Vec<u8>)>,
    /// The hostile face's last received Interests.
    pub heard: VecDeque<Vec<u8>>,
    /// Every Interest it sent, by name (TLV-VALUE) and nonce: a Nack must carry one of them.
    pub sent: HashSet<(Vec<u8>, [u8; 4])>,
}

impl SimFace {
    /// A face with nothing pending.
    pub fn new(id: FaceId, role: Role) -> Self {
        SimFace {
            id,
            role,
            local: role == Role::Admin,
            inbox: VecDeque::new(),
            pending: Vec::new(),
            delayed: Vec::new(),
            heard: VecDeque::new(),
            sent: HashSet::new(),
        }
    }

    /// Whether its window has room at `now_ms` (forgetting long-expired Interests if not).
    pub fn has_room(&mut self, now_ms: u64) -> bool {
        if self.pending.len() < WINDOW {
            return true;
        }
        self.pending.retain(|p| p.keep_until_ms > now_ms);
        self.pending.len() < WINDOW
    }

    /// Records an Interest it sends (with this PIT token) and returns its link-layer bytes.
    pub fn send_interest(&mut self, i: &Interest, token: Option<&[u8]>, now_ms: u64) -> Vec<u8> {
        let mut bytes = Vec::new();
        i.encode(&mut bytes);
        let bytes = with_token(token, &bytes);
        self.note_sent(&bytes, now_ms);
        bytes
    }

    /// Records the Interest in link-layer packet `bytes` as sent and pending (nothing if it is
    /// not one).
    pub fn note_sent(&mut self, bytes: &[u8], now_ms: u64) {
        if let Ok(Received::Interest { interest, token }) = decode(bytes, &Limits::default()) {
            let nonce = interest.nonce().unwrap_or_default();
            self.sent.insert((interest.name().value().to_vec(), nonce));
            self.pending.push(Pending {
                name: interest.name().to_name(),
                can_be_prefix: interest.can_be_prefix(),
                token: token.map(<[u8]>::to_vec),
                nonce,
                seq: self.sent.len() as u64,
                keep_until_ms: now_ms + interest.effective_lifetime_ms() + GRACE_MS,
            });
        }
    }

    /// A consumer's next Interest: a content name (sometimes one it asked for already, a
    /// retransmission with a new nonce), CanBePrefix, MustBeFresh, lifetime and PIT token
    /// drawn from `rng`. `None` if its window is full.
    pub fn consumer_interest(&mut self, rng: &mut Rng, now_ms: u64) -> Option<Vec<u8>> {
        if !self.has_room(now_ms) {
            return None;
        }
        let (name, cbp) = match self.pending.len() {
            n if n > 0 && rng.chance(15) => {
                let p = &self.pending[rng.index(n)];
                (p.name.clone(), p.can_be_prefix)
            }
            _ => {
                let cbp = rng.chance(20);
                (content_name(rng, cbp), cbp)
            }
        };
        let mut i = Interest::new(name, rng.nonce());
        i.can_be_prefix = cbp;
        i.must_be_fresh = rng.chance(30);
        i.lifetime_ms = Some(100 + rng.below(3_900));
        let token = rng.chance(30).then(|| rng.next_u64().to_le_bytes());
        Some(self.send_interest(&i, token.as_ref().map(|t| &t[..4]), now_ms))
    }

    /// A producer's answers to an Interest it received (its PIT token echoed, unless `rng`
    /// drops it: the router then finds the Interest's worker by the Data's name): none
    /// (dropped), one, two (a duplicate), or one held back until a later time.
    pub fn producer_answer(
        &mut self,
        i: &InterestView<'_>,
        token: Option<&[u8]>,
        rng: &mut Rng,
        faults: bool,
        now_ms: u64,
    ) -> Vec<Vec<u8>> {
        let mut name = i.name().to_name();
        if i.can_be_prefix() {
            name.push(wire::Component::segment(rng.below(4)));
        }
        if faults && rng.chance(4) {
            return if rng.chance(50) {
                vec![nack(i.wire())]
            } else {
                Vec::new()
            };
        }
        let token = token.filter(|_| !rng.chance(10));
        let data = with_token(token, &canonical_data(&name));
        if faults && rng.chance(8) {
            self.delayed.push((now_ms + 1 + rng.below(300), data));
            return Vec::new();
        }
        if faults && rng.chance(5) {
            return vec![data.clone(), data];
        }
        vec![data]
    }

    /// The hostile face heard an Interest (it may send it back later: a loop).
    pub fn hear(&mut self, bytes: &[u8]) {
        if self.heard.len() == HEARD {
            self.heard.pop_front();
        }
        self.heard.push_back(bytes.to_vec());
    }

    /// Answers that are due at `now_ms`, in the order they were made.
    pub fn due(&mut self, now_ms: u64) -> Vec<Vec<u8>> {
        let (due, later): (Vec<_>, Vec<_>) =
            self.delayed.drain(..).partition(|(t, _)| *t <= now_ms);
        self.delayed = later;
        due.into_iter().map(|(_, d)| d).collect()
    }
}
