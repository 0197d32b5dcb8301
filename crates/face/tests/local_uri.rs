//! A face's LocalUri where the listener is the wildcard address, as NFD 24.07 reports it: a
//! TCP face's is its connection's own local endpoint, a unicast UDP face's the endpoint its
//! own socket (bound to the channel's, connected to the remote) gets, the address the kernel
//! picks toward the remote. Loopback addresses other than 127.0.0.1 stand for the non-loopback
//! interfaces (the whole 127.0.0.0/8 is the host's), so no root is needed.
#![cfg(target_os = "linux")]

mod support;

use std::net::{IpAddr, SocketAddr, TcpStream, UdpSocket};

use face::table::Listener;
use support::Driver;

/// The source address the kernel picks toward `remote` for a socket bound to the wildcard:
/// what NFD's connected per-face socket shows.
fn source_toward(remote: SocketAddr) -> IpAddr {
    let probe = UdpSocket::bind("0.0.0.0:0").unwrap();
    probe.connect(remote).unwrap();
    probe.local_addr().unwrap().ip()
}

#[test]
fn an_accepted_tcp_face_shows_the_address_it_was_reached_at() {
    let mut d = Driver::new(support::config());
    let l = mio::net::TcpListener::bind("0.0.0.0:0".parse().unwrap()).unwrap();
    let wildcard = l.local_addr().unwrap();
    d.table.add_listener(Listener::Tcp(l, wildcard)).unwrap();
    // The same listener reached at two of the host's addresses.
    for at in ["127.0.0.2", "127.0.0.1"] {
        let to: SocketAddr = format!("{at}:{}", wildcard.port()).parse().unwrap();
        let client = TcpStream::connect(to).unwrap();
        d.until(|d| {
            d.table
                .list()
                .iter()
                .any(|f| f.uri == format!("tcp4://{}", client.local_addr().unwrap()))
        });
        let faces = d.table.list();
        let f = faces
            .iter()
            .find(|f| f.uri == format!("tcp4://{}", client.local_addr().unwrap()))
            .unwrap();
        assert_eq!(f.local_uri, format!("tcp4://{to}"));
    }
}

#[test]
fn a_udp_face_on_the_wildcard_socket_shows_its_source_address() {
    let mut d = Driver::new(support::config());
    let s = UdpSocket::bind("0.0.0.0:0").unwrap();
    let port = s.local_addr().unwrap().port();
    d.table.add_udp_socket(s, true).unwrap();
    // An on-demand face: a peer on another of the host's addresses sends a Data.
    let peer = UdpSocket::bind("127.0.0.2:0").unwrap();
    let mut data = wire::Data::new(wire::Name::from_uri("/t").unwrap(), vec![7; 100]);
    data.sign_digest_sha256();
    peer.send_to(&data.to_wire(), ("127.0.0.1", port)).unwrap();
    d.until(|d| !d.sink.packets.is_empty());
    let id = d.sink.packets[0].0;
    let desc = d.table.get(id).unwrap().desc();
    let from = peer.local_addr().unwrap();
    assert_eq!(desc.uri, format!("udp4://{from}"));
    let source = source_toward(from);
    assert!(!source.is_unspecified());
    assert_eq!(desc.local_uri, format!("udp4://{source}:{port}"));
    // A face made by management to a remote of no face yet: the same.
    let other = UdpSocket::bind("127.0.0.3:0")
        .unwrap()
        .local_addr()
        .unwrap();
    let made = d
        .table
        .create_udp(other, &face::FaceParams::default(), &mut d.sink)
        .unwrap();
    assert_eq!(
        made.local_uri,
        format!("udp4://{}:{port}", source_toward(other))
    );
}
