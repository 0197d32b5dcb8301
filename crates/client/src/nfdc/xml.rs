//! `status report xml`: nfdc's XML report, element for element as NFD 24.07's nfdc writes it
//! (namespace `ndn:/localhost/nfd/status/1`, its `nfdc-status.xsd`): the general status,
//! channels, faces, FIB, RIB, CS and strategy choices, on one line.

use std::fmt::Write as _;

use wire::nfd::{
    CsInfo, FaceStatus, ForwarderStatus, CS_FLAG_ENABLE_ADMIT, CS_FLAG_ENABLE_SERVE,
    ROUTE_FLAG_CAPTURE, ROUTE_FLAG_CHILD_INHERIT,
};

use super::render::{iso_time, link_str, origin_str, persistency_str, scope_str, Report};

/// Face flag bits, as nfdc names their elements.
const FACE_FLAGS: [(u64, &str); 3] = [
    (1, "localFieldsEnabled"),
    (2, "lpReliabilityEnabled"),
    (4, "congestionMarkingEnabled"),
];

/// Text with XML's five special characters escaped, as nfdc escapes it.
fn text(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '"' => out.push_str("&quot;"),
            '&' => out.push_str("&amp;"),
            '\'' => out.push_str("&apos;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            c => out.push(c),
        }
    }
    out
}

/// An xs:duration of `ns` nanoseconds: `PT<seconds>S`, with milliseconds when there are any.
fn duration_ns(ns: u64) -> String {
    let (s, ms) = (ns / 1_000_000_000, ns % 1_000_000_000 / 1_000_000);
    if ms >= 1 {
        format!("PT{s}.{ms:03}S")
    } else {
        format!("PT{s}S")
    }
}

/// An xs:dateTime of `ms` since the epoch, as ndn-cxx's `toIsoExtendedString`
/// (`YYYY-MM-DDTHH:MM:SS.ffffff`, the fraction left out when it is zero).
fn timestamp(ms: u64) -> String {
    let b = iso_time(ms);
    format!(
        "{}-{}-{}T{}:{}:{}{}",
        &b[0..4],
        &b[4..6],
        &b[6..8],
        &b[9..11],
        &b[11..13],
        &b[13..15],
        &b[15..]
    )
}

/// `<name>`, the flag's empty element, when `on`.
fn flag(s: &mut String, name: &str, on: bool) {
    if on {
        let _ = write!(s, "<{name}/>");
    }
}

/// The packet counters of the general status and of a face.
fn packet_counters(s: &mut String, inc: [u64; 3], out: [u64; 3]) {
    let _ = write!(
        s,
        "<packetCounters><incomingPackets><nInterests>{}</nInterests><nData>{}</nData>\
         <nNacks>{}</nNacks></incomingPackets><outgoingPackets><nInterests>{}</nInterests>\
         <nData>{}</nData><nNacks>{}</nNacks></outgoingPackets></packetCounters>",
        inc[0], inc[1], inc[2], out[0], out[1], out[2]
    );
}

fn general(s: &mut String, g: &ForwarderStatus) {
    let uptime_s = g.current_timestamp.saturating_sub(g.start_timestamp) / 1000;
    let _ = write!(
        s,
        "<generalStatus><version>{}</version><startTime>{}</startTime>\
         <currentTime>{}</currentTime><uptime>PT{uptime_s}S</uptime>\
         <nNameTreeEntries>{}</nNameTreeEntries><nFibEntries>{}</nFibEntries>\
         <nPitEntries>{}</nPitEntries><nMeasurementsEntries>{}</nMeasurementsEntries>\
         <nCsEntries>{}</nCsEntries>",
        text(&g.nfd_version),
        timestamp(g.start_timestamp),
        timestamp(g.current_timestamp),
        g.n_name_tree_entries,
        g.n_fib_entries,
        g.n_pit_entries,
        g.n_measurements_entries,
        g.n_cs_entries
    );
    packet_counters(
        s,
        [g.n_in_interests, g.n_in_data, g.n_in_nacks],
        [g.n_out_interests, g.n_out_data, g.n_out_nacks],
    );
    let _ = write!(
        s,
        "<nSatisfiedInterests>{}</nSatisfiedInterests>\
         <nUnsatisfiedInterests>{}</nUnsatisfiedInterests></generalStatus>",
        g.n_satisfied_interests, g.n_unsatisfied_interests
    );
}

fn face(s: &mut String, f: &FaceStatus) {
    let _ = write!(
        s,
        "<face><faceId>{}</faceId><remoteUri>{}</remoteUri><localUri>{}</localUri>",
        f.face_id,
        text(&f.uri),
        text(&f.local_uri)
    );
    if let Some(ms) = f.expiration_period {
        let _ = write!(
            s,
            "<expirationPeriod>{}</expirationPeriod>",
            duration_ns(ms * 1_000_000)
        );
    }
    let _ = write!(
        s,
        "<faceScope>{}</faceScope><facePersistency>{}</facePersistency>\
         <linkType>{}</linkType>",
        scope_str(f.face_scope),
        persistency_str(f.face_persistency),
        link_str(f.link_type)
    );
    match (
        f.base_congestion_marking_interval,
        f.default_congestion_threshold,
    ) {
        (None, None) => s.push_str("<congestion/>"),
        (interval, threshold) => {
            s.push_str("<congestion>");
            if let Some(ns) = interval {
                let _ = write!(
                    s,
                    "<baseMarkingInterval>{}</baseMarkingInterval>",
                    duration_ns(ns)
                );
            }
            if let Some(t) = threshold {
                let _ = write!(s, "<defaultThreshold>{t}</defaultThreshold>");
            }
            s.push_str("</congestion>");
        }
    }
    if let Some(m) = f.mtu {
        let _ = write!(s, "<mtu>{m}</mtu>");
    }
    if f.flags == 0 {
        s.push_str("<flags/>");
    } else {
        s.push_str("<flags>");
        for (bit, name) in FACE_FLAGS {
            flag(s, name, f.flags & bit != 0);
        }
        s.push_str("</flags>");
    }
    packet_counters(
        s,
        [f.n_in_interests, f.n_in_data, f.n_in_nacks],
        [f.n_out_interests, f.n_out_data, f.n_out_nacks],
    );
    let _ = write!(
        s,
        "<byteCounters><incomingBytes>{}</incomingBytes><outgoingBytes>{}</outgoingBytes>\
         </byteCounters></face>",
        f.n_in_bytes, f.n_out_bytes
    );
}

fn cs(s: &mut String, c: &CsInfo) {
    let _ = write!(s, "<cs><capacity>{}</capacity>", c.capacity);
    flag(s, "admitEnabled", c.flags & CS_FLAG_ENABLE_ADMIT != 0);
    flag(s, "serveEnabled", c.flags & CS_FLAG_ENABLE_SERVE != 0);
    let _ = write!(
        s,
        "<nEntries>{}</nEntries><nHits>{}</nHits><nMisses>{}</nMisses></cs>",
        c.n_cs_entries, c.n_hits, c.n_misses
    );
}

/// The whole report, as `nfdc status report xml` prints it (no final newline, as nfdc 24.07).
pub(super) fn report(r: &Report) -> String {
    let mut s =
        String::from("<?xml version=\"1.0\"?><nfdStatus xmlns=\"ndn:/localhost/nfd/status/1\">");
    general(&mut s, &r.general);
    s.push_str("<channels>");
    for c in &r.channels {
        let _ = write!(
            s,
            "<channel><localUri>{}</localUri></channel>",
            text(&c.local_uri)
        );
    }
    s.push_str("</channels><faces>");
    for f in &r.faces {
        face(&mut s, f);
    }
    s.push_str("</faces><fib>");
    for e in &r.fib {
        let _ = write!(
            s,
            "<fibEntry><prefix>{}</prefix><nextHops>",
            text(&e.name.to_string())
        );
        for h in &e.next_hops {
            let _ = write!(
                s,
                "<nextHop><faceId>{}</faceId><cost>{}</cost></nextHop>",
                h.face_id, h.cost
            );
        }
        s.push_str("</nextHops></fibEntry>");
    }
    s.push_str("</fib><rib>");
    for e in &r.rib {
        let _ = write!(
            s,
            "<ribEntry><prefix>{}</prefix><routes>",
            text(&e.name.to_string())
        );
        for rt in &e.routes {
            let _ = write!(
                s,
                "<route><faceId>{}</faceId><origin>{}</origin><cost>{}</cost>",
                rt.face_id,
                origin_str(rt.origin),
                rt.cost
            );
            if rt.flags == 0 {
                s.push_str("<flags/>");
            } else {
                s.push_str("<flags>");
                flag(
                    &mut s,
                    "childInherit",
                    rt.flags & ROUTE_FLAG_CHILD_INHERIT != 0,
                );
                flag(&mut s, "ribCapture", rt.flags & ROUTE_FLAG_CAPTURE != 0);
                s.push_str("</flags>");
            }
            if let Some(ms) = rt.expiration_period {
                let _ = write!(s, "<expirationPeriod>PT{}S</expirationPeriod>", ms / 1000);
            }
            s.push_str("</route>");
        }
        s.push_str("</routes></ribEntry>");
    }
    s.push_str("</rib>");
    cs(&mut s, &r.cs);
    s.push_str("<strategyChoices>");
    for c in &r.strategies {
        let _ = write!(
            s,
            "<strategyChoice><namespace>{}</namespace><strategy><name>{}</name></strategy>\
             </strategyChoice>",
            text(&c.name.to_string()),
            text(&c.strategy.to_string())
        );
    }
    s.push_str("</strategyChoices></nfdStatus>");
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use wire::nfd::{
        ChannelStatus, FacePersistency, FaceScope, FibEntry, LinkType, NextHopRecord, RibEntry,
        Route, StrategyChoice,
    };
    use wire::Name;

    fn name(s: &str) -> Name {
        Name::from_uri(s).unwrap()
    }

    fn report_of() -> Report {
        Report {
            general: ForwarderStatus {
                nfd_version: "cascade-0.1.0".into(),
                start_timestamp: 1_795_533_631_250,
                current_timestamp: 1_795_533_691_000,
                n_name_tree_entries: 7,
                n_fib_entries: 2,
                n_pit_entries: 1,
                n_cs_entries: 3,
                n_in_interests: 10,
                n_in_data: 4,
                n_out_interests: 5,
                n_out_data: 9,
                n_satisfied_interests: 8,
                ..ForwarderStatus::default()
            },
            channels: vec![ChannelStatus {
                local_uri: "udp4://0.0.0.0:6363".into(),
            }],
            faces: vec![FaceStatus {
                face_id: 260,
                uri: "tcp4://192.0.2.1:6363".into(),
                local_uri: "tcp4://192.0.2.2:40000".into(),
                expiration_period: Some(1_500),
                face_scope: FaceScope::NonLocal,
                face_persistency: FacePersistency::Persistent,
                link_type: LinkType::PointToPoint,
                base_congestion_marking_interval: Some(100_000_000),
                default_congestion_threshold: Some(65_536),
                mtu: Some(8800),
                n_in_interests: 1,
                n_out_data: 1,
                n_in_bytes: 40,
                n_out_bytes: 90,
                flags: 5,
                ..FaceStatus::default()
            }],
            fib: vec![FibEntry {
                name: name("/a"),
                next_hops: vec![NextHopRecord {
                    face_id: 260,
                    cost: 10,
                }],
            }],
            rib: vec![RibEntry {
                name: name("/a<&>"),
                routes: vec![
                    Route {
                        face_id: 260,
                        origin: 65,
                        cost: 10,
                        flags: ROUTE_FLAG_CHILD_INHERIT | ROUTE_FLAG_CAPTURE,
                        expiration_period: Some(59_999),
                    },
                    Route {
                        face_id: 1,
                        origin: 0,
                        cost: 0,
                        flags: 0,
                        expiration_period: None,
                    },
                ],
            }],
            cs: CsInfo {
                capacity: 100,
                flags: CS_FLAG_ENABLE_ADMIT,
                n_cs_entries: 3,
                n_hits: 2,
                n_misses: 1,
            },
            strategies: vec![StrategyChoice {
                name: name("/"),
                strategy: name("/localhost/nfd/strategy/best-route/v=5"),
            }],
        }
    }

    /// Every section as NFD 24.07's nfdc writes it (its `formatItemXml`s, by hand).
    #[test]
    fn the_report_is_nfdcs_xml() {
        let x = report(&report_of());
        let head = "<?xml version=\"1.0\"?><nfdStatus xmlns=\"ndn:/localhost/nfd/status/1\">\
            <generalStatus><version>cascade-0.1.0</version>\
            <startTime>2026-11-24T15:20:31.250000</startTime>\
            <currentTime>2026-11-24T15:21:31</currentTime><uptime>PT59S</uptime>\
            <nNameTreeEntries>7</nNameTreeEntries><nFibEntries>2</nFibEntries>\
            <nPitEntries>1</nPitEntries><nMeasurementsEntries>0</nMeasurementsEntries>\
            <nCsEntries>3</nCsEntries><packetCounters><incomingPackets><nInterests>10</nInterests>\
            <nData>4</nData><nNacks>0</nNacks></incomingPackets><outgoingPackets>\
            <nInterests>5</nInterests><nData>9</nData><nNacks>0</nNacks></outgoingPackets>\
            </packetCounters><nSatisfiedInterests>8</nSatisfiedInterests>\
            <nUnsatisfiedInterests>0</nUnsatisfiedInterests></generalStatus>\
            <channels><channel><localUri>udp4://0.0.0.0:6363</localUri></channel></channels>";
        assert!(x.starts_with(head), "{x}");
        let face = "<faces><face><faceId>260</faceId><remoteUri>tcp4://192.0.2.1:6363</remoteUri>\
            <localUri>tcp4://192.0.2.2:40000</localUri><expirationPeriod>PT1.500S</expirationPeriod>\
            <faceScope>non-local</faceScope><facePersistency>persistent</facePersistency>\
            <linkType>point-to-point</linkType><congestion><baseMarkingInterval>PT0.100S\
            </baseMarkingInterval><defaultThreshold>65536</defaultThreshold></congestion>\
            <mtu>8800</mtu><flags><localFieldsEnabled/><congestionMarkingEnabled/></flags>\
            <packetCounters><incomingPackets><nInterests>1</nInterests><nData>0</nData>\
            <nNacks>0</nNacks></incomingPackets><outgoingPackets><nInterests>0</nInterests>\
            <nData>1</nData><nNacks>0</nNacks></outgoingPackets></packetCounters>\
            <byteCounters><incomingBytes>40</incomingBytes><outgoingBytes>90</outgoingBytes>\
            </byteCounters></face></faces>";
        assert!(x.contains(face), "{x}");
        let fib = "<fib><fibEntry><prefix>/a</prefix><nextHops><nextHop><faceId>260</faceId>\
            <cost>10</cost></nextHop></nextHops></fibEntry></fib>";
        assert!(x.contains(fib), "{x}");
        let rib = "<rib><ribEntry><prefix>/a%3C%26%3E</prefix><routes><route><faceId>260</faceId>\
            <origin>client</origin><cost>10</cost><flags><childInherit/><ribCapture/></flags>\
            <expirationPeriod>PT59S</expirationPeriod></route><route><faceId>1</faceId>\
            <origin>app</origin><cost>0</cost><flags/></route></routes></ribEntry></rib>";
        assert!(x.contains(rib), "{x}");
        let tail = "<cs><capacity>100</capacity><admitEnabled/><nEntries>3</nEntries>\
            <nHits>2</nHits><nMisses>1</nMisses></cs><strategyChoices><strategyChoice>\
            <namespace>/</namespace><strategy><name>/localhost/nfd/strategy/best-route/v=5\
            </name></strategy></strategyChoice></strategyChoices></nfdStatus>";
        assert!(x.ends_with(tail), "{x}");
        // A face without congestion settings or flags: the empty elements.
        let mut r = report_of();
        r.faces[0].base_congestion_marking_interval = None;
        r.faces[0].default_congestion_threshold = None;
        r.faces[0].flags = 0;
        r.faces[0].expiration_period = None;
        let x = report(&r);
        assert!(
            x.contains("<linkType>point-to-point</linkType><congestion/><mtu>8800</mtu><flags/>")
        );
        assert!(!x.contains("<expirationPeriod>PT1"));
        assert_eq!(text("a\"&'<>b"), "a&quot;&amp;&apos;&lt;&gt;b");
    }
}
