//! The invariants checked on every packet a simulated face receives.
//!
//! - A Data reaches a face only for an Interest that face sent and that the Data satisfies
//!   (the same name, or a longer one under a CanBePrefix Interest), and at most once per
//!   Interest: each Data takes one of the face's pending Interests it satisfies (the most
//!   specific, which never refuses a later Data that a perfect assignment would accept), so
//!   a second Data for one in-record finds none left. Its PIT token is the one an Interest
//!   it satisfies carried; its bytes are the producer's bytes for its name (management's
//!   answers excepted: their names are the commands' own).
//! - A Nack reaches a face only for an Interest it sent: the name and the nonce (the router
//!   Nacks each downstream with its own nonce).
//! - An Interest reaches only a face that a route for it names: a producer only under its own
//!   prefix, the hostile face (which the administrator registers for any prefix), never a
//!   consumer.

use wire::{Limits, Name};

use super::faces::{Role, SimFace};
use super::packets::{canonical_data, decode, prefix, Received};

/// Checks a packet the router sent to `face`, updates the face's pending Interests, and
/// hands back what it was; an error says which invariant broke.
pub fn on_delivery<'a>(
    face: &mut SimFace,
    bytes: &'a [u8],
    limits: &Limits,
) -> Result<Received<'a>, String> {
    let id = face.id;
    let got = decode(bytes, limits).map_err(|e| format!("face {id} got an undecodable {e}"))?;
    match &got {
        Received::Data { data, token } => {
            let name = data.name().to_name();
            let matching: Vec<usize> = (0..face.pending.len())
                .filter(|&i| face.pending[i].satisfied_by(&name))
                .collect();
            // One that carried this token; of those, the most specific (an exact Interest,
            // else the longest CanBePrefix name); of those, the oldest.
            let Some(&take) = matching.iter().max_by_key(|&&i| {
                let p = &face.pending[i];
                let specific = (!p.can_be_prefix, p.name.len());
                (
                    p.token.as_deref() == *token,
                    specific,
                    std::cmp::Reverse(p.seq),
                )
            }) else {
                return Err(format!(
                    "face {id} got Data {} with no Interest of its own pending for it \
                     (unsolicited, or an in-record answered twice)",
                    uri(&name)
                ));
            };
            if !matching
                .iter()
                .any(|&i| face.pending[i].token.as_deref() == *token)
            {
                return Err(format!(
                    "face {id} got Data {} with PIT token {token:02x?}, not one its Interests \
                     carried ({:02x?})",
                    uri(&name),
                    matching
                        .iter()
                        .map(|&i| face.pending[i].token.clone())
                        .collect::<Vec<_>>()
                ));
            }
            if !is_management(&name) && data.wire() != canonical_data(&name).as_slice() {
                return Err(format!(
                    "face {id} got Data {} whose bytes are not the producer's",
                    uri(&name)
                ));
            }
            face.pending.remove(take);
        }
        Received::Nack(i) => {
            let nonce = i.nonce().unwrap_or_default();
            if !face.sent.contains(&(i.name().value().to_vec(), nonce)) {
                return Err(format!(
                    "face {id} got a Nack for {} with nonce {nonce:02x?}, which it never sent",
                    uri(&i.name().to_name())
                ));
            }
            // It answers that Interest (unless a Data was counted against it already).
            let name = i.name().to_name();
            if let Some(at) = face
                .pending
                .iter()
                .position(|p| p.nonce == nonce && p.name == name)
            {
                face.pending.remove(at);
            }
        }
        Received::Interest { interest, .. } => {
            let name = interest.name().to_name();
            let routed = match face.role {
                Role::Consumer | Role::Admin => false,
                Role::Producer(k) => prefix(k).is_prefix_of(&name),
                Role::Hostile => true,
            };
            if !routed {
                return Err(format!(
                    "Interest {} forwarded to face {id} ({:?}), which no route for it names",
                    uri(&name),
                    face.role
                ));
            }
        }
        Received::Idle => {}
    }
    Ok(got)
}

/// Under `/localhost` or `/localhop` (management's answers).
fn is_management(name: &Name) -> bool {
    name.components
        .first()
        .is_some_and(|c| c.value == b"localhost" || c.value == b"localhop")
}

/// A name for messages.
pub fn uri(name: &Name) -> String {
    name.to_string()
}
