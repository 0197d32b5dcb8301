//! Congestion marking across the table: the mirrors of UDP faces (sharded routers) mark by
//! their own socket's queue with the face's options and hand their marks to the owner, and
//! the table's default (`face_system.general.enable_congestion_marking`) decides the marking
//! of the faces the table makes itself.
#![cfg(target_os = "linux")]

mod support;

use std::net::UdpSocket;
use std::time::Duration;

use face::table::{bind_udp_group, FaceTable, UdpLink};
use face::{FaceConfig, FaceParams, LinkOptions, PacketKind};
use mio::Poll;
use support::{config, Driver, Sink};
use wire::{Limits, LpPacketView};

fn data(len: usize) -> Vec<u8> {
    let mut d = wire::Data::new(wire::Name::from_uri("/m").unwrap(), vec![7; len]);
    d.sign_digest_sha256();
    d.to_wire()
}

/// A mirror of a face whose threshold is 1,000 bytes: the second packet staged finds the
/// first (1,200 bytes) in its socket's queue and is marked; the owner counts the mark. With
/// the face's marking off, nothing is marked.
#[test]
fn a_mirror_marks_by_its_own_socket_queue_with_the_faces_options() {
    for marking in [true, false] {
        let (group, _) = bind_udp_group("127.0.0.1:0".parse().unwrap(), 2).unwrap();
        let local = group[0].local_addr().unwrap();
        let polls = [Poll::new().unwrap(), Poll::new().unwrap()];
        let mut tables =
            (polls.each_ref()).map(|p| FaceTable::new(p.registry().try_clone().unwrap(), config()));
        let mut sink = Sink::default();
        for (t, s) in tables.iter_mut().zip(group) {
            t.add_udp_socket(s, true).unwrap();
        }
        let [a, b] = &mut tables;
        let peer = UdpSocket::bind("127.0.0.1:0").unwrap();
        peer.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
        let options = LinkOptions {
            congestion_marking: marking,
            default_congestion_threshold_bytes: 1000,
            ..LinkOptions::default()
        };
        let params = FaceParams {
            options,
            ..FaceParams::default()
        };
        let desc = a
            .create_udp(peer.local_addr().unwrap(), &params, &mut sink)
            .unwrap();
        let link: UdpLink = a.get(desc.id).unwrap().udp_link().unwrap();
        assert_eq!((link.local, link.options), (local, options));
        assert!(b.mirror_udp(desc.id, link, 1 << 32));
        let pkt = data(1200);
        assert!(b.send(desc.id, PacketKind::Data, &pkt));
        assert!(b.send(desc.id, PacketKind::Data, &pkt));
        b.flush(&mut sink);
        let mut buf = [0u8; 2000];
        let (n, _) = peer.recv_from(&mut buf).unwrap();
        assert_eq!(&buf[..n], &pkt[..]);
        let (n, _) = peer.recv_from(&mut buf).unwrap();
        if marking {
            let lp = LpPacketView::decode(&buf[..n], &Limits::default()).unwrap();
            assert_eq!(
                (lp.congestion_mark, lp.fragment()),
                (Some(1), Some(&pkt[..]))
            );
        } else {
            assert_eq!(&buf[..n], &pkt[..]);
        }
        let mut sent = Vec::new();
        b.take_mirror_counts(|id, c| sent.push((id, c)));
        assert_eq!(sent.len(), 1);
        assert_eq!(sent[0].1.congestion_marks, u64::from(marking));
        a.add_counts(desc.id, &sent[0].1);
        let owner = a.get(desc.id).unwrap().counters();
        assert_eq!(owner.congestion_marks, u64::from(marking));
    }
}

/// The faces the table makes itself take its default; management's take what they ask.
#[test]
fn the_tables_default_decides_the_marking_of_the_faces_it_makes() {
    for marking in [true, false] {
        let mut d = Driver::new(FaceConfig {
            congestion_marking: marking,
            ..config()
        });
        let s = UdpSocket::bind("127.0.0.1:0").unwrap();
        let addr = s.local_addr().unwrap();
        d.table.add_udp_socket(s, true).unwrap();
        // An on-demand face: a new remote's well-formed packet.
        let remote = UdpSocket::bind("127.0.0.1:0").unwrap();
        remote.send_to(&data(100), addr).unwrap();
        d.until(|d| !d.sink.up.is_empty());
        let id = *d.sink.up.last().unwrap();
        let on_demand = d.table.get(id).unwrap().desc();
        assert_eq!(on_demand.options.congestion_marking, marking);
        // A face management makes with marking on has it whatever the default.
        let other = UdpSocket::bind("127.0.0.1:0").unwrap();
        let asked = (d.table)
            .create_udp(
                other.local_addr().unwrap(),
                &FaceParams::default(),
                &mut d.sink,
            )
            .unwrap();
        assert!(asked.options.congestion_marking);
    }
}
