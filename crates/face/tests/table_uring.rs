//! The face table over loopback sockets, driven as a forwarder's I/O thread drives it, its UDP
//! sockets receiving through io_uring (a multishot `recvmsg` over provided buffers).
#![cfg(target_os = "linux")]

const UDP_RX: face::UdpRx = face::UdpRx::Uring { gro: false };

mod support;

include!("table/suite.rs");

/// The sockets really receive through io_uring here (the kernel allows it), so the suite above
/// tested that path.
#[test]
fn the_sockets_receive_through_io_uring() {
    let mut d = Driver::new(config());
    let addr = listening_udp(&mut d);
    assert!(d.table.udp_ring_failure().is_none());
    let peer = remote();
    peer.send_to(&interest(1), addr).unwrap();
    d.until(|d| !d.sink.packets.is_empty());
    let c = d.table.udp_ring_counters().expect("a ring");
    assert_eq!(c.datagrams_in, 1);
}

/// A burst from many remotes, larger than the ring's buffers, gives every remote its on-demand
/// face and every datagram to its face.
#[test]
fn a_burst_from_many_remotes_reaches_each_remotes_face() {
    let mut d = Driver::new(FaceConfig {
        max_faces: 64,
        bounds: FaceBounds {
            max_on_demand_faces: 64,
            max_on_demand_per_host: 64,
            ..FaceBounds::default()
        },
        ..config()
    });
    let addr = listening_udp(&mut d);
    let peers: Vec<UdpSocket> = (0..32).map(|_| remote()).collect();
    let per_peer = 20u32;
    for n in 0..per_peer {
        for p in &peers {
            p.send_to(&interest(n), addr).unwrap();
        }
    }
    let total = peers.len() * per_peer as usize;
    d.until(|d| d.sink.packets.len() >= total);
    assert_eq!(d.sink.packets.len(), total);
    assert_eq!(d.sink.up.len(), peers.len());
    for p in &peers {
        let uri = format!("udp4://{}", p.local_addr().unwrap());
        let f = d
            .table
            .list()
            .into_iter()
            .find(|f| f.uri == uri)
            .expect("its face");
        let got: Vec<&Vec<u8>> = (d.sink.packets.iter())
            .filter(|(id, _, _)| *id == f.id)
            .map(|(_, b, _)| b)
            .collect();
        let want: Vec<Vec<u8>> = (0..per_peer).map(interest).collect();
        assert_eq!(got, want.iter().collect::<Vec<_>>(), "{uri}");
    }
    let c = d.table.udp_ring_counters().unwrap();
    assert!(c.no_buffers >= 1, "{c:?}");
}
