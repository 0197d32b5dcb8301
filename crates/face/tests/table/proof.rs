// Proof of address, the budget of what unproven faces are sent, the eviction order of proven
// and unproven faces, and the face-id quarantine (included by `table.rs`).

/// The TxSequence of what `s` receives next (an LpPacket).
fn recv_tx(s: &UdpSocket) -> (Option<u64>, Option<Vec<u8>>) {
    let mut buf = [0u8; 9000];
    let n = s.recv(&mut buf).unwrap();
    let lp = LpPacketView::decode(&buf[..n], &Limits::default()).unwrap();
    (lp.tx_sequence, lp.fragment().map(<[u8]>::to_vec))
}

fn ack(n: u64) -> Vec<u8> {
    wire::LpPacket {
        acks: vec![n],
        ..wire::LpPacket::default()
    }
    .to_wire()
}

#[test]
fn an_ack_of_a_sent_tx_sequence_proves_the_address_and_a_wrong_one_does_not() {
    let mut d = bounded(8, FaceBounds::default());
    let addr = listening_udp(&mut d);
    let peer = remote();
    peer.send_to(&interest(1), addr).unwrap();
    d.until(|d| d.sink.up.len() == 1);
    let id = d.sink.up[0];
    assert!(!d.table.get(id).unwrap().proven());
    let answer = data(100);
    d.table.send(id, PacketKind::Data, &answer);
    d.table.flush(&mut d.sink);
    let (tx, frag) = recv_tx(&peer);
    let tx = tx.expect("numbered while unproven");
    assert_eq!(frag.as_deref(), Some(&answer[..]));
    // A guess (the next one, not sent yet) proves nothing.
    peer.send_to(&ack(tx.wrapping_add(1)), addr).unwrap();
    peer.send_to(&interest(2), addr).unwrap();
    d.until(|d| d.sink.packets.len() == 2);
    assert!(!d.table.get(id).unwrap().proven());
    peer.send_to(&ack(tx), addr).unwrap();
    d.until(|d| d.table.get(id).unwrap().proven());
    assert_eq!(d.table.bound_counters().proven_by_ack, 1);
    assert_eq!(d.sink.changed, vec![id], "the sink hears of the change");
    // Proven: sent as it is.
    d.table.send(id, PacketKind::Data, &answer);
    d.table.flush(&mut d.sink);
    let mut buf = [0u8; 9000];
    let n = peer.recv(&mut buf).unwrap();
    assert_eq!(&buf[..n], &answer[..]);
}

#[test]
fn unproven_faces_share_a_budget_and_get_a_probe_in_place_of_a_drop() {
    let mut d = bounded(
        8,
        FaceBounds {
            // A burst of one largest packet (8,800 bytes), refilled at 1 byte/s.
            unproven_send_bytes_per_s: 10,
            ..FaceBounds::default()
        },
    );
    let addr = listening_udp(&mut d);
    let (first, peer) = (remote(), remote());
    first.send_to(&interest(1), addr).unwrap();
    d.until(|d| d.sink.up.len() == 1);
    // An Interest of 40 bytes or so earns a probe (of 14).
    let long = wire::Interest::new(wire::Name::from_uri("/proof/of/address").unwrap(), [2; 4]);
    peer.send_to(&long.to_wire(), addr).unwrap();
    d.until(|d| d.sink.up.len() == 2);
    let (x, id) = (d.sink.up[0], d.sink.up[1]);
    // The first face takes the burst; the third packet is dropped, the second face's too.
    let big = data(4000);
    for _ in 0..3 {
        d.table.send(x, PacketKind::Data, &big);
    }
    d.table.send(id, PacketKind::Data, &big);
    d.table.flush(&mut d.sink);
    let b = d.table.bound_counters();
    assert_eq!(b.unproven_budget_dropped, 2);
    assert_eq!(d.table.get(x).unwrap().counters().out_data, 2);
    assert_eq!(d.table.get(id).unwrap().counters().out_data, 0);
    // In place of its Data, the second face got a probe; the first, having been sent more
    // than it sent, got none: no more than a byte out per byte in.
    assert_eq!(b.unproven_probes, 1);
    let mut buf = [0u8; 9000];
    let n = peer.recv(&mut buf).unwrap();
    assert_eq!(n, face::table::PROBE_BYTES);
    let lp = LpPacketView::decode(&buf[..n], &Limits::default()).unwrap();
    assert!(lp.tx_sequence.is_some() && lp.fragment().is_none());
    // Probes stop at what the face sent: a byte out per byte in.
    for _ in 0..5 {
        d.table.send(id, PacketKind::Data, &big);
    }
    d.table.flush(&mut d.sink);
    let b = d.table.bound_counters();
    let probes = long.to_wire().len() / face::table::PROBE_BYTES;
    assert!(probes < 6);
    assert_eq!((b.unproven_budget_dropped, b.unproven_probes), (7, probes as u64));
    // Acknowledging the probe proves the address: no bound any more.
    peer.send_to(&ack(lp.tx_sequence.unwrap()), addr).unwrap();
    d.until(|d| d.table.get(id).unwrap().proven());
    d.table.send(id, PacketKind::Data, &big);
    d.table.flush(&mut d.sink);
    assert_eq!(d.table.get(id).unwrap().counters().out_data, 1);
}

#[test]
fn proven_faces_are_evicted_only_after_every_unproven_one() {
    let mut d = bounded(
        8,
        FaceBounds {
            max_on_demand_faces: 2,
            ..FaceBounds::default()
        },
    );
    let addr = listening_udp(&mut d);
    // The first remote proves its address (a Data) and is then the least recently active.
    let proven = remote();
    proven.send_to(&data(10), addr).unwrap();
    d.until(|d| d.sink.up.len() == 1);
    let a = d.sink.up[0];
    assert!(d.table.get(a).unwrap().proven());
    let others: Vec<UdpSocket> = (0..3).map(|_| remote()).collect();
    for (k, s) in others.iter().enumerate() {
        s.send_to(&interest(k as u32), addr).unwrap();
        d.until(|d| d.sink.up.len() == k + 2);
    }
    // Each newcomer evicted the unproven face before it, never the proven one.
    let gone: Vec<FaceId> = d.sink.down.iter().map(|(id, _)| *id).collect();
    assert_eq!(gone, vec![d.sink.up[1], d.sink.up[2]]);
    assert!(d.table.get(a).is_some());
    assert_eq!(d.table.bound_counters().on_demand_evicted, 2);
}

#[test]
fn a_new_remote_waits_only_for_a_slot_not_for_the_quarantine() {
    // Two places: 4 slots; one on-demand face at a time.
    let mut d = bounded(
        2,
        FaceBounds {
            max_on_demand_faces: 1,
            max_on_demand_per_host: 64,
            ..FaceBounds::default()
        },
    );
    let addr = listening_udp(&mut d);
    let space = d.table.face_id_space();
    let reuse_ms = d.table.face_id_reuse_ms();
    assert_eq!(reuse_ms, 1, "130 s over 2^23 generations");
    let span = 2 * face::table::FACE_SLOTS_PER_FACE;
    let peers: Vec<UdpSocket> = (0..span + 2).map(|_| remote()).collect();
    let created_or_refused = |d: &mut Driver, k: usize| {
        d.until(|d| {
            let b = d.table.bound_counters();
            b.on_demand_created + b.on_demand_refused_ids == k as u64
        })
    };
    for (k, s) in peers.iter().enumerate() {
        s.send_to(&interest(k as u32), addr).unwrap();
        created_or_refused(&mut d, k + 1);
    }
    let b = d.table.bound_counters();
    // The clock stands still: every slot closed was freed less than a millisecond ago.
    assert_eq!(b.on_demand_created, span as u64);
    assert_eq!(b.on_demand_refused_ids, 2);
    assert_eq!(b.face_ids_reused_early, 0);
    // A millisecond on (not the quarantine), the oldest slot takes the next remote, with a
    // new generation: its full id is new.
    d.sink.now += reuse_ms;
    peers[0].send_to(&interest(99), addr).unwrap();
    d.until(|d| d.table.bound_counters().on_demand_created == span as u64 + 1);
    let (first, last) = (d.sink.up[0], *d.sink.up.last().unwrap());
    assert_eq!(space.slot(last), space.slot(first));
    assert_eq!(space.generation(last), space.generation(first) + 1);
    assert!(!d.sink.up[..span].contains(&last));
}
