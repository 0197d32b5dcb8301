//! NDNLPv2 fields on the packets the daemon forwards, as NFD 24.07 sets them: a CongestionMark
//! travels with the Interest upstream and with the Data downstream (NFD keeps an incoming
//! packet's mark as a tag that its link service writes on the packet it forwards), and
//! IncomingFaceId names the face a packet came in on, the content store's id (254) only for a
//! Data the CS served, also when the Interest went upstream after a miss in the L2 tier.
//!
//! The apps read the link-layer packets themselves (the client's face keeps neither an
//! Interest's CongestionMark nor a Data's IncomingFaceId); their management commands go through
//! the client's face on the same stream, before any packet is read raw.

mod common;

use std::time::Duration;

use common::{unix_config, wait_stored, App, Scratch};
use router::Router;
use wire::{Interest, Name};

/// NFD's face id for Data served from the content store.
const CONTENT_STORE: u64 = 254;

fn interest(uri: &str, nonce: u32) -> Interest {
    let mut i = Interest::new(Name::from_uri(uri).unwrap(), nonce.to_be_bytes());
    i.lifetime_ms = Some(4000);
    i
}

#[test]
fn a_congestion_mark_travels_upstream_with_its_interest_and_downstream_with_its_data() {
    let dir = Scratch::new("cm");
    let r = Router::start(&unix_config(&dir, "r")).unwrap();
    let mut producer = App::new(&r, "/c", false);
    let mut consumer = App::new(&r, "/app", false);

    consumer.send(interest("/c/x", 1).to_wire(), |lp| {
        lp.congestion_mark = Some(5)
    });
    let got = producer.interest("/c/x");
    assert_eq!(got.lp.congestion_mark, Some(5), "the Interest's mark");
    producer.answer(&got, 1000, 4);
    assert_eq!(
        consumer.data("/c/x").lp.congestion_mark,
        Some(4),
        "the Data's mark"
    );

    // Unmarked, they stay unmarked.
    consumer.send(interest("/c/y", 2).to_wire(), |_| {});
    let got = producer.interest("/c/y");
    assert_eq!(got.lp.congestion_mark, None);
    producer.answer(&got, 1000, 0);
    assert_eq!(consumer.data("/c/y").lp.congestion_mark, None);
    r.stop_handle().stop();
    r.join();
}

#[test]
fn incoming_face_id_is_the_content_store_s_only_for_data_the_cs_served() {
    let dir = Scratch::new("ifi");
    let mut c = unix_config(&dir, "r");
    c.store.l2_path = dir.join("l2").display().to_string();
    c.store.l2_capacity = 4000;
    c.store.batch = 1;
    c.store.prefetch_ahead = false;
    let r = Router::start(&c).unwrap();
    let mut producer = App::new(&r, "/f", true);
    let mut consumer = App::new(&r, "/app", true);
    let fresh_ms = 300;

    // Through the router: each learns the other's face.
    consumer.send(interest("/f/seg=0", 1).to_wire(), |_| {});
    let got = producer.interest("/f/seg=0");
    assert_eq!(got.lp.incoming_face_id, Some(consumer.id));
    producer.answer(&got, fresh_ms, 0);
    let d = consumer.data("/f/seg=0");
    assert_eq!(d.lp.incoming_face_id, Some(producer.id));
    wait_stored(&r, 1);

    // From the RAM CS: the content store's id.
    consumer.send(interest("/f/seg=0", 2).to_wire(), |_| {});
    assert_eq!(
        consumer.data("/f/seg=0").lp.incoming_face_id,
        Some(CONTENT_STORE)
    );

    // Stale in the RAM CS and in L2: a MustBeFresh Interest waits for L2, which misses, and
    // goes upstream from the copy stored meanwhile; its Data comes from the producer.
    std::thread::sleep(Duration::from_millis(fresh_ms + 100));
    let mut i = interest("/f/seg=0", 3);
    i.must_be_fresh = true;
    consumer.send(i.to_wire(), |_| {});
    let got = producer.interest("/f/seg=0");
    assert_eq!(
        got.lp.incoming_face_id,
        Some(consumer.id),
        "after an L2 miss"
    );
    producer.answer(&got, fresh_ms, 0);
    let d = consumer.data("/f/seg=0");
    assert_eq!(d.lp.incoming_face_id, Some(producer.id), "after an L2 miss");
    let stale: u64 = r.snapshots().iter().map(|s| s.l2.unwrap().tier.stale).sum();
    assert_eq!(stale, 1, "L2 was asked and missed");

    // An Interest with a HopLimit goes as a copy (decremented): still the consumer's.
    let mut i = interest("/f/seg=1", 4);
    i.hop_limit = Some(5);
    consumer.send(i.to_wire(), |_| {});
    let got = producer.interest("/f/seg=1");
    assert_eq!(got.lp.incoming_face_id, Some(consumer.id), "HopLimit");
    r.stop_handle().stop();
    r.join();
}
