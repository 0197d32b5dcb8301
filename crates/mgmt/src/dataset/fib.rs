//! `fib/list` as NFD 24.07 lists it, management's own next hops included.
//!
//! NFD's FIB holds next hops to its internal face (FaceId 1) that Cascade's FIB does not:
//! Cascade's management sits behind no face (the I/O loop hands it every Interest under
//! `/localhost/nfd` and `/localhop/nfd`), so they would lead nowhere. They are listed as NFD
//! lists them, so that `nfdc fib list` shows what it shows against NFD:
//!
//! - `/localhost/nfd`, which NFD's start-up inserts;
//! - `<top>/rib` for each management prefix, which NFD's RIB service adds with
//!   `fib/add-nexthop` when it starts;
//! - the FaceId 1 an entry below a management prefix inherits from the route NFD's RIB holds
//!   for the prefix (ChildInherit, cost 0): when the entry has a RIB route, no route of its
//!   own and no ancestor's below the prefix has Capture, and none of them is to FaceId 1.
//!
//! Next hops are listed cheapest first, as NFD's FIB entries keep them (ties in the order they
//! were added).

use wire::nfd::{FibEntry, NextHopRecord};
use wire::Name;

use super::content::INTERNAL_FACE_ID;
use crate::rib::{Rib, FIB_ORIGIN};

/// Every FIB entry, by name, with management's own next hops.
pub(crate) fn fib_entries(rib: &Rib, tops: &[Name]) -> Vec<FibEntry> {
    let mut out: Vec<FibEntry> = rib
        .fib()
        .entries()
        .into_iter()
        .map(|(name, hops)| {
            let mut next_hops: Vec<NextHopRecord> = hops
                .iter()
                .map(|h| NextHopRecord {
                    face_id: u64::from(h.face),
                    cost: u64::from(h.cost),
                })
                .collect();
            if inherits_internal(rib, &name, tops) {
                next_hops.push(internal());
            }
            FibEntry { name, next_hops }
        })
        .collect();
    for name in own_entries(tops) {
        match out.binary_search_by(|e| e.name.cmp(&name)) {
            Ok(i) if !out[i].next_hops.iter().any(is_internal) => out[i].next_hops.push(internal()),
            Ok(_) => {}
            Err(i) => out.insert(
                i,
                FibEntry {
                    name,
                    next_hops: vec![internal()],
                },
            ),
        }
    }
    for e in &mut out {
        e.next_hops.sort_by_key(|h| h.cost);
    }
    out
}

/// How many FIB entries NFD would count: Cascade's, plus those of management's own next hops
/// that Cascade's FIB does not have.
pub(crate) fn fib_len(rib: &Rib, tops: &[Name]) -> u64 {
    let extra = own_entries(tops)
        .iter()
        .filter(|n| rib.next_hops(n).is_empty())
        .count();
    (rib.fib().real_len() + extra) as u64
}

/// The entries NFD's start-up and RIB service make: `/localhost/nfd` and each `<top>/rib`.
pub(crate) fn own_entries(tops: &[Name]) -> Vec<Name> {
    let mut names = Vec::with_capacity(tops.len() + 1);
    for top in tops {
        if top.len() == 2 && top.components[0].value == b"localhost" {
            names.push(top.clone());
        }
        let mut rib = top.clone();
        rib.push(wire::Component::generic(b"rib"));
        names.push(rib);
    }
    names
}

/// True when `name`'s FIB entry inherits the internal face from a management prefix's route.
fn inherits_internal(rib: &Rib, name: &Name, tops: &[Name]) -> bool {
    let Some(top) = tops
        .iter()
        .find(|t| t.is_prefix_of(name) && t.len() < name.len())
    else {
        return false;
    };
    let own = rib.routes(name);
    if !own.iter().any(|r| r.origin != FIB_ORIGIN) {
        return false;
    }
    (top.len() + 1..=name.len()).all(|d| {
        rib.routes(&name.prefix(d))
            .iter()
            .all(|r| !r.captures() && u64::from(r.face) != INTERNAL_FACE_ID)
    })
}

fn internal() -> NextHopRecord {
    NextHopRecord {
        face_id: INTERNAL_FACE_ID,
        cost: 0,
    }
}

fn is_internal(h: &NextHopRecord) -> bool {
    h.face_id == INTERNAL_FACE_ID
}
