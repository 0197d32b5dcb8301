// The creation budget of on-demand faces, over loopback sockets, with the driver's clock
// stepped by hand.

/// Sends Interest `n` from `from` and turns the table until it made a face for it or refused
/// it at the budget; whether it made one.
fn new_remote(d: &mut Driver, from: &UdpSocket, addr: SocketAddr, n: u32) -> bool {
    let (up, refused) = (d.sink.up.len(), d.table.bound_counters().on_demand_refused_budget);
    from.send_to(&interest(n), addr).unwrap();
    d.until(|d| {
        d.sink.up.len() > up || d.table.bound_counters().on_demand_refused_budget > refused
    });
    d.sink.up.len() > up
}

#[test]
fn the_creation_budget_refuses_new_remotes_keeps_a_reserve_and_refills() {
    let mut d = bounded(
        32,
        FaceBounds {
            max_on_demand_faces: 16,
            on_demand_faces_per_s: 1,
            on_demand_faces_burst: 4,
            ..FaceBounds::default()
        },
    );
    d.sink.now = 1000;
    let addr = listening_udp(&mut d);
    // One host varying its port: its first face from the whole bucket, the next two down to
    // the reserve (a quarter of 4), the fourth refused.
    let host: Vec<UdpSocket> = (0..4).map(|_| remote_on("127.0.0.1")).collect();
    for (n, s) in host[..3].iter().enumerate() {
        assert!(new_remote(&mut d, s, addr, n as u32), "port {n}");
    }
    assert!(!new_remote(&mut d, &host[3], addr, 3));
    assert_eq!(d.table.bound_counters().on_demand_refused_budget, 1);
    // A new host takes the reserve; then nobody gets a face.
    let new_host = remote_on("127.0.0.2");
    assert!(new_remote(&mut d, &new_host, addr, 4));
    assert!(!new_remote(&mut d, &remote_on("127.0.0.3"), addr, 5));
    assert_eq!(d.table.bound_counters().on_demand_refused_budget, 2);
    // The remotes with a face are not refused: their packets arrive.
    let got = d.sink.packets.len();
    host[0].send_to(&interest(6), addr).unwrap();
    new_host.send_to(&interest(7), addr).unwrap();
    d.until(|d| d.sink.packets.len() == got + 2);
    // A second later the bucket holds one face: the reserve, which a new host takes and the
    // busy host does not.
    d.sink.now += 1000;
    assert!(!new_remote(&mut d, &host[3], addr, 8));
    assert!(new_remote(&mut d, &remote_on("127.0.0.4"), addr, 9));
    let b = d.table.bound_counters();
    assert_eq!((b.on_demand_created, b.on_demand_refused_budget), (5, 3));
    // The sweep tells the driver what the budget refused.
    d.table.sweep(d.sink.now, &mut d.sink);
    assert_eq!(d.sink.bounds.last().map(|b| b.on_demand_refused_budget), Some(3));
    // Once the host has been quiet for HOST_RECENT_MS, the whole bucket is its again.
    d.sink.now += face::table::HOST_RECENT_MS;
    assert!(new_remote(&mut d, &host[3], addr, 10));
}
