//! Which ControlParameters fields each control command requires and allows, as ndn-cxx's
//! `ControlCommand` classes state them (NFD answers a command that breaks them with 400 "failed in
//! validating parameters", before its manager sees it).
//!
//! A field neither required nor allowed is forbidden. Where a command allows both Flags and
//! Mask, one comes only with the other. A few commands check a value too: `faces/destroy` wants
//! a FaceId other than 0, `cs/erase` a Count other than 0, `strategy-choice/unset` a Name
//! other than `/`.

use wire::nfd::ControlParameters;

/// One ControlParameters field, as a bit.
#[derive(Debug, Clone, Copy)]
#[repr(u16)]
enum Field {
    Name = 1,
    FaceId = 1 << 1,
    Uri = 1 << 2,
    LocalUri = 1 << 3,
    Origin = 1 << 4,
    Cost = 1 << 5,
    Capacity = 1 << 6,
    Count = 1 << 7,
    BaseCongestionMarkingInterval = 1 << 8,
    DefaultCongestionThreshold = 1 << 9,
    Mtu = 1 << 10,
    Flags = 1 << 11,
    Mask = 1 << 12,
    Strategy = 1 << 13,
    ExpirationPeriod = 1 << 14,
    FacePersistency = 1 << 15,
}

use Field as F;

/// The set of `fields`, as bits.
const fn set(fields: &[Field]) -> u16 {
    let mut bits = 0;
    let mut i = 0;
    while i < fields.len() {
        bits |= fields[i] as u16;
        i += 1;
    }
    bits
}

/// The fields present in `p`, as bits.
fn present(p: &ControlParameters) -> u16 {
    let fields = [
        (p.name.is_some(), F::Name),
        (p.face_id.is_some(), F::FaceId),
        (p.uri.is_some(), F::Uri),
        (p.local_uri.is_some(), F::LocalUri),
        (p.origin.is_some(), F::Origin),
        (p.cost.is_some(), F::Cost),
        (p.capacity.is_some(), F::Capacity),
        (p.count.is_some(), F::Count),
        (
            p.base_congestion_marking_interval.is_some(),
            F::BaseCongestionMarkingInterval,
        ),
        (
            p.default_congestion_threshold.is_some(),
            F::DefaultCongestionThreshold,
        ),
        (p.mtu.is_some(), F::Mtu),
        (p.flags.is_some(), F::Flags),
        (p.mask.is_some(), F::Mask),
        (p.strategy.is_some(), F::Strategy),
        (p.expiration_period.is_some(), F::ExpirationPeriod),
        (p.face_persistency.is_some(), F::FacePersistency),
    ];
    fields
        .iter()
        .filter(|(on, _)| *on)
        .fold(0, |bits, (_, f)| bits | *f as u16)
}

/// The fields a command requires and the ones it also allows, by module and verb; `None` for a
/// command NFD does not have.
fn rule(module: &str, verb: &str) -> Option<(u16, u16)> {
    const FACE_OPTIONS: &[Field] = &[
        F::FacePersistency,
        F::BaseCongestionMarkingInterval,
        F::DefaultCongestionThreshold,
        F::Mtu,
        F::Flags,
        F::Mask,
    ];
    const CREATE: u16 = set(FACE_OPTIONS) | F::LocalUri as u16;
    const UPDATE: u16 = set(FACE_OPTIONS) | F::FaceId as u16;
    Some(match (module, verb) {
        ("faces", "create") => (set(&[F::Uri]), CREATE),
        ("faces", "update") => (0, UPDATE),
        ("faces", "destroy") => (set(&[F::FaceId]), 0),
        ("fib", "add-nexthop") => (set(&[F::Name]), set(&[F::FaceId, F::Cost])),
        ("fib", "remove-nexthop") => (set(&[F::Name]), set(&[F::FaceId])),
        ("cs", "config") => (0, set(&[F::Capacity, F::Flags, F::Mask])),
        ("cs", "erase") => (set(&[F::Name]), set(&[F::Count])),
        ("strategy-choice", "set") => (set(&[F::Name, F::Strategy]), 0),
        ("strategy-choice", "unset") => (set(&[F::Name]), 0),
        ("rib", "register") => (
            set(&[F::Name]),
            set(&[F::FaceId, F::Origin, F::Cost, F::Flags, F::ExpirationPeriod]),
        ),
        ("rib", "unregister") => (set(&[F::Name]), set(&[F::FaceId, F::Origin])),
        _ => return None,
    })
}

/// Whether `p` is valid for `<module>/<verb>` (a command NFD does not have is not judged here).
pub fn valid(module: &str, verb: &str, p: &ControlParameters) -> bool {
    let Some((required, allowed)) = rule(module, verb) else {
        return true;
    };
    let has = present(p);
    let flags_mask = set(&[F::Flags, F::Mask]);
    let paired = allowed & flags_mask != flags_mask || p.flags.is_some() == p.mask.is_some();
    let value_ok = match (module, verb) {
        ("faces", "destroy") => p.face_id != Some(0),
        ("cs", "erase") => p.count != Some(0),
        ("strategy-choice", "unset") => p.name.as_ref().is_some_and(|n| !n.is_empty()),
        _ => true,
    };
    has & required == required && has & !(required | allowed) == 0 && paired && value_ok
}

#[cfg(test)]
mod tests {
    use super::*;
    use wire::Name;

    fn name() -> Option<Name> {
        Some(Name::from_uri("/a").unwrap())
    }

    #[test]
    fn required_allowed_and_forbidden_fields() {
        let none = ControlParameters::default();
        let named = ControlParameters {
            name: name(),
            ..none.clone()
        };
        assert!(!valid("rib", "register", &none), "Name required");
        assert!(valid("rib", "register", &named));
        let with_uri = ControlParameters {
            uri: Some("udp4://192.0.2.1:6363".into()),
            ..named.clone()
        };
        assert!(!valid("rib", "register", &with_uri), "Uri forbidden");
        let flags_only = ControlParameters {
            flags: Some(1),
            ..named.clone()
        };
        assert!(
            valid("rib", "register", &flags_only),
            "no Mask in rib/register"
        );
        assert!(!valid("fib", "add-nexthop", &flags_only), "Flags forbidden");
        let create = ControlParameters {
            uri: Some("udp4://192.0.2.1:6363".into()),
            flags: Some(1),
            ..none.clone()
        };
        assert!(!valid("faces", "create", &create), "Flags without Mask");
        let create = ControlParameters {
            mask: Some(1),
            mtu: Some(1400),
            local_uri: Some("dev://eth0".into()),
            ..create
        };
        assert!(valid("faces", "create", &create));
        assert!(
            !valid("faces", "update", &create),
            "LocalUri and Uri forbidden"
        );
        assert!(valid("faces", "update", &none));
        assert!(valid("cs", "config", &none));
        assert!(valid("nope", "verb", &with_uri), "not judged");
    }

    #[test]
    fn values_checked() {
        let face = |id| ControlParameters {
            face_id: Some(id),
            ..ControlParameters::default()
        };
        assert!(!valid("faces", "destroy", &face(0)));
        assert!(valid("faces", "destroy", &face(300)));
        let erase = |count| ControlParameters {
            name: name(),
            count,
            ..ControlParameters::default()
        };
        assert!(!valid("cs", "erase", &erase(Some(0))));
        assert!(valid("cs", "erase", &erase(None)));
        let unset = |n: &str| ControlParameters {
            name: Some(Name::from_uri(n).unwrap()),
            ..ControlParameters::default()
        };
        assert!(!valid("strategy-choice", "unset", &unset("/")));
        assert!(valid("strategy-choice", "unset", &unset("/a")));
    }
}
