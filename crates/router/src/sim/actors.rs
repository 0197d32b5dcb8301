//! What the hostile face sends, and which commands the administrator sends.

use std::collections::{BTreeMap, VecDeque};

use engine::table::pit_cs::FaceId;
use wire::nfd::ControlParameters;
use wire::{Interest, Name};

use super::faces::{Role, SimFace};
use super::packets::{self, canonical_data, content_name, prefix, PREFIXES};
use super::rng::Rng;

/// Consumers' Interests the hostile face may replay (same nonce: a duplicate).
pub const RECENT: usize = 32;

/// The hostile face's next packet: garbage, a truncated Interest, a replayed consumer
/// Interest, a flood Interest, an unsolicited Data (with the producer's bytes: a forwarder
/// does not verify signatures, so a forged Data under a served name would be forwarded
/// rightly and is not sent), an Interest it received sent back (a loop), a HopLimit-0
/// Interest, a `/localhost` command (it is not local), a Nack nobody asked for, or a Data
/// under a name nobody serves.
pub fn hostile_packet(
    face: &mut SimFace,
    rng: &mut Rng,
    recent: &VecDeque<Interest>,
    now_ms: u64,
) -> Vec<u8> {
    let room = face.has_room(now_ms);
    match rng.below(10) {
        1 => {
            let mut b = Vec::new();
            Interest::new(content_name(rng, false), rng.nonce()).encode(&mut b);
            b.truncate(rng.index(b.len()));
            b
        }
        2 if room && !recent.is_empty() => {
            let i = recent[rng.index(recent.len())].clone();
            face.send_interest(&i, None, now_ms)
        }
        3 if room => {
            let name = prefix(rng.index(PREFIXES))
                .with_str("flood")
                .with_str(&rng.next_u64().to_string());
            face.send_interest(&Interest::new(name, rng.nonce()), None, now_ms)
        }
        4 => canonical_data(&content_name(rng, false)),
        5 if room && !face.heard.is_empty() => {
            let b = face.heard.pop_front().unwrap_or_default();
            face.note_sent(&b, now_ms);
            b
        }
        6 if room => {
            let mut i = Interest::new(content_name(rng, false), rng.nonce());
            i.hop_limit = Some(0);
            face.send_interest(&i, None, now_ms)
        }
        7 => {
            let p = ControlParameters {
                name: Some(prefix(0)),
                face_id: Some(u64::from(face.id)),
                ..ControlParameters::default()
            };
            let mut b = Vec::new();
            packets::command(rng, "rib", "register", &p).encode(&mut b);
            b
        }
        8 => {
            let mut b = Vec::new();
            Interest::new(content_name(rng, false), rng.nonce()).encode(&mut b);
            packets::nack(&b)
        }
        9 => canonical_data(&Name::new().with_str("evil").with_str("x")),
        _ => {
            let n = rng.index(48);
            let mut b: Vec<u8> = (0..n).map(|_| rng.next_u64() as u8).collect();
            if let Some(first) = b.first_mut() {
                *first = [0x05, 0x06, 0x64, *first][rng.index(4)];
            }
            b
        }
    }
}

/// A route to producer prefix `k` on `face` with this cost.
pub fn register(k: usize, face: FaceId, cost: u64) -> (&'static str, ControlParameters) {
    (
        "register",
        ControlParameters {
            name: Some(prefix(k)),
            face_id: Some(u64::from(face)),
            cost: Some(cost),
            ..ControlParameters::default()
        },
    )
}

/// The administrator's next command: a route added or removed (to a producer or to the
/// hostile face, which loops what it gets), a strategy, a CS erase or capacity, a face
/// destroyed (never its own).
pub fn admin_command(
    rng: &mut Rng,
    faces: &BTreeMap<FaceId, SimFace>,
) -> (&'static str, &'static str, ControlParameters) {
    let upstreams: Vec<(FaceId, Option<usize>)> = faces
        .values()
        .filter_map(|f| match f.role {
            Role::Producer(k) => Some((f.id, Some(k))),
            Role::Hostile => Some((f.id, None)),
            _ => None,
        })
        .collect();
    let (face, k) = upstreams[rng.index(upstreams.len())];
    let k = k.unwrap_or_else(|| rng.index(PREFIXES));
    let mut p = ControlParameters {
        name: Some(prefix(k)),
        ..ControlParameters::default()
    };
    match rng.below(6) {
        0 => {
            let (verb, p) = register(k, face, rng.below(100));
            ("rib", verb, p)
        }
        1 => {
            p.face_id = Some(u64::from(face));
            ("rib", "unregister", p)
        }
        2 => {
            let s = ["multicast", "best-route"][rng.index(2)];
            p.strategy = Name::from_uri(&format!("/localhost/nfd/strategy/{s}")).ok();
            ("strategy-choice", "set", p)
        }
        3 => ("cs", "erase", p),
        4 => {
            let q = ControlParameters {
                capacity: Some(8 + rng.below(120)),
                ..ControlParameters::default()
            };
            ("cs", "config", q)
        }
        _ => {
            let others: Vec<FaceId> = faces
                .values()
                .filter(|f| f.role != Role::Admin)
                .map(|f| f.id)
                .collect();
            let q = ControlParameters {
                face_id: Some(u64::from(others[rng.index(others.len())])),
                ..ControlParameters::default()
            };
            ("faces", "destroy", q)
        }
    }
}
