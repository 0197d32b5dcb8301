//! Prefix announcements, as ndn-cxx's `PrefixAnnouncement` reads them, and what `rib/announce`
//! makes of one (NFD's `RibManager::announceEntry` and its prefix-announcement route).
//!
//! An announcement is a signed Data named `<prefix>/32=PA/<version>/<segment>`, of ContentType
//! PrefixAnn (5), whose Content holds an ExpirationPeriod (milliseconds) and optionally a
//! ValidityPeriod (NotBefore, NotAfter, as `YYYYMMDDThhmmss` UTC). `rib/announce` carries it in
//! the command Interest's ApplicationParameters. The route it makes is of origin prefixann
//! (129), cost 2048, ChildInherit, expiring at the earlier of the expiration period and the end
//! of the validity period (at once if the validity period does not cover now).

use wire::data::content_type;
use wire::tlv::Reader;
use wire::{tt, DataView, Limits, Name};

/// The cost of a route made by a prefix announcement (NFD's `PA_ROUTE_COST`).
pub const PA_ROUTE_COST: u64 = 2048;

/// NotBefore in a ValidityPeriod.
const NOT_BEFORE: u32 = 0xFE;
/// NotAfter in a ValidityPeriod.
const NOT_AFTER: u32 = 0xFF;

/// A prefix announcement's contents.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PrefixAnnouncement {
    /// The announced prefix (the Data name without its last three components).
    pub name: Name,
    /// Its ExpirationPeriod, in milliseconds.
    pub expiration_ms: u64,
    /// Its ValidityPeriod (NotBefore, NotAfter), in milliseconds since the Unix epoch.
    pub validity_ms: Option<(u64, u64)>,
}

impl PrefixAnnouncement {
    /// Reads the announcement from a command's ApplicationParameters (the value that holds
    /// the Data TLV), or says what is wrong with it.
    pub fn from_app_params(app_params: &[u8], limits: &Limits) -> Result<Self, String> {
        let mut r = Reader::new(app_params);
        while let Some(e) = r.next_element() {
            let e = e.map_err(|e| format!("bad ApplicationParameters: {e:?}"))?;
            if e.typ == tt::DATA {
                let d = DataView::from_element(e, limits)
                    .map_err(|e| format!("bad prefix announcement Data: {e:?}"))?;
                return Self::from_data(&d);
            }
        }
        Err("Missing prefix announcement parameter".into())
    }

    /// Reads an announcement Data, as ndn-cxx's `PrefixAnnouncement(Data)` does.
    pub fn from_data(d: &DataView<'_>) -> Result<Self, String> {
        let name = d.name().to_name();
        let n = name.len();
        let comp = |back: usize| &name.components[n - back];
        let structured = n >= 3
            && u32::from(comp(3).typ) == tt::KEYWORD
            && comp(3).value == b"PA"
            && u32::from(comp(2).typ) == tt::VERSION
            && u32::from(comp(1).typ) == tt::SEGMENT;
        if !structured {
            return Err("Data is not a prefix announcement: wrong name structure".into());
        }
        let ct = d.content_type().unwrap_or(content_type::BLOB);
        if ct != content_type::PREFIX_ANN {
            return Err(format!(
                "Data is not a prefix announcement: ContentType is {ct}"
            ));
        }
        let content = d.content().unwrap_or(&[]);
        if content.is_empty() {
            return Err("Prefix announcement is empty".into());
        }
        let bad = |what: &str| format!("Prefix announcement: bad {what}");
        let mut expiration_ms = None;
        let mut validity_ms = None;
        let mut r = Reader::new(content);
        while let Some(e) = r.next_element() {
            let e = e.map_err(|_| bad("Content"))?;
            match e.typ {
                tt::EXPIRATION_PERIOD => {
                    expiration_ms = Some(e.nni().map_err(|_| bad("ExpirationPeriod"))?)
                }
                tt::VALIDITY_PERIOD => {
                    validity_ms = Some(validity(e.value).ok_or_else(|| bad("ValidityPeriod"))?)
                }
                t if t <= 31 || t % 2 == 1 => {
                    return Err(format!("Unrecognized element of critical type {t}"))
                }
                _ => {}
            }
        }
        Ok(PrefixAnnouncement {
            name: name.prefix(n - 3),
            expiration_ms: expiration_ms.ok_or_else(|| bad("ExpirationPeriod"))?,
            validity_ms,
        })
    }

    /// How long the route it makes lives from `now_wall_ms` (Unix milliseconds): the
    /// expiration period, cut at the end of the validity period; 0 if the validity period
    /// does not cover now.
    pub fn lifetime_ms(&self, now_wall_ms: u64) -> u64 {
        match self.validity_ms {
            Some((from, to)) if now_wall_ms < from || now_wall_ms > to => 0,
            Some((_, to)) => self.expiration_ms.min(to - now_wall_ms),
            None => self.expiration_ms,
        }
    }
}

/// A ValidityPeriod's (NotBefore, NotAfter) in Unix milliseconds.
fn validity(value: &[u8]) -> Option<(u64, u64)> {
    let mut r = Reader::new(value);
    let before = r.read().ok().filter(|e| e.typ == NOT_BEFORE)?;
    let after = r.read().ok().filter(|e| e.typ == NOT_AFTER)?;
    Some((iso_ms(before.value)?, iso_ms(after.value)?))
}

/// `YYYYMMDDThhmmss` (UTC) as Unix milliseconds.
pub fn iso_ms(s: &[u8]) -> Option<u64> {
    let s = std::str::from_utf8(s).ok()?;
    if s.len() != 15 || s.as_bytes()[8] != b'T' {
        return None;
    }
    let num = |a: usize, b: usize| s.get(a..b)?.parse::<u64>().ok();
    let (y, mo, d) = (num(0, 4)?, num(4, 6)?, num(6, 8)?);
    let (h, mi, sec) = (num(9, 11)?, num(11, 13)?, num(13, 15)?);
    if !(1970..=9999).contains(&y) || !(1..=12).contains(&mo) || !(1..=31).contains(&d) {
        return None;
    }
    if h > 23 || mi > 59 || sec > 60 {
        return None;
    }
    let days = days_from_civil(y, mo, d);
    Some(((days * 24 + h) * 60 + mi) * 60_000 + sec * 1000)
}

/// Days from 1970-01-01 to a date of the proleptic Gregorian calendar (year ≥ 1970).
fn days_from_civil(y: u64, m: u64, d: u64) -> u64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y / 400;
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::pa_data;
    use wire::Data;

    pub(crate) fn content(exp: u64, validity: Option<(&str, &str)>) -> Vec<u8> {
        let mut c = Vec::new();
        wire::tlv::write_nni_tlv(&mut c, tt::EXPIRATION_PERIOD, exp);
        if let Some((a, b)) = validity {
            let mut v = Vec::new();
            wire::tlv::write_tlv(&mut v, NOT_BEFORE, a.as_bytes());
            wire::tlv::write_tlv(&mut v, NOT_AFTER, b.as_bytes());
            wire::tlv::write_tlv(&mut c, tt::VALIDITY_PERIOD, &v);
        }
        c
    }

    fn parse(d: &[u8]) -> Result<PrefixAnnouncement, String> {
        PrefixAnnouncement::from_app_params(d, &Limits::default())
    }

    #[test]
    fn dates() {
        assert_eq!(iso_ms(b"19700101T000000"), Some(0));
        assert_eq!(iso_ms(b"20000301T000001"), Some(951_868_801_000));
        assert_eq!(iso_ms(b"20241231T235959"), Some(1_735_689_599_000));
        assert_eq!(iso_ms(b"2024-12-31T23:5"), None);
        assert_eq!(iso_ms(b"20241331T000000"), None);
    }

    #[test]
    fn announcements_parse_as_ndn_cxx_reads_them() {
        let d = pa_data("/ndn/grp", content(60_000, None), content_type::PREFIX_ANN);
        let pa = parse(&d).unwrap();
        assert_eq!(pa.name, Name::from_uri("/ndn/grp").unwrap());
        assert_eq!((pa.expiration_ms, pa.validity_ms), (60_000, None));
        assert_eq!(pa.lifetime_ms(5), 60_000);
        let v = Some(("20200101T000000", "20200101T000010"));
        let pa = parse(&pa_data("/a", content(60_000, v), 5)).unwrap();
        let start = iso_ms(b"20200101T000000").unwrap();
        assert_eq!(pa.lifetime_ms(start + 4_000), 6_000);
        assert_eq!(pa.lifetime_ms(start - 1), 0);
        assert_eq!(pa.lifetime_ms(start + 10_001), 0);
        // Refusals.
        let blob = pa_data("/a", content(1, None), content_type::BLOB);
        assert!(parse(&blob).unwrap_err().contains("ContentType is 0"));
        assert!(parse(&pa_data("/a", Vec::new(), 5))
            .unwrap_err()
            .contains("empty"));
        let mut critical = content(1, None);
        wire::tlv::write_tlv(&mut critical, 0x81, &[]);
        assert!(parse(&pa_data("/a", critical, 5))
            .unwrap_err()
            .contains("critical"));
        let mut plain = Data::new(Name::from_uri("/a/b/c").unwrap(), content(1, None));
        plain.sign_digest_sha256();
        assert!(parse(&plain.to_wire())
            .unwrap_err()
            .contains("name structure"));
        assert!(parse(&[]).unwrap_err().contains("Missing"));
    }
}
