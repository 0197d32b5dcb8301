//! The forwarding path's reads allocate nothing: decoding a packet into a view, walking its name
//! components and reading the fields a forwarder needs are checked under a counting allocator.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

use wire::{Component, Data, Interest, Limits, LpPacket, MetaInfo, NackReason, Name, PacketView};

struct Counting;

static ALLOCS: AtomicUsize = AtomicUsize::new(0);

// SAFETY: forwards to the system allocator unchanged; only counts calls.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCS.fetch_add(1, Ordering::SeqCst);
        // SAFETY: same contract as the caller's.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: same contract as the caller's.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Reads everything a forwarder looks at; returns a checksum so nothing is optimised away.
fn forwarder_reads(buf: &[u8], limits: &Limits) -> u64 {
    let mut acc = 0u64;
    let p = PacketView::decode(buf, limits).expect("valid packet");
    let p = match p {
        PacketView::Lp(lp) => {
            acc += lp.pit_token.map_or(0, |t| t.len() as u64);
            acc += lp.congestion_mark.unwrap_or(0);
            acc += lp.nack.and_then(|n| n.reason).map_or(0, NackReason::code);
            lp.network_packet(limits)
                .expect("has fragment")
                .expect("valid fragment")
        }
        p => p,
    };
    match p {
        PacketView::Interest(i) => {
            for c in i.name().components() {
                acc += u64::from(c.typ) + c.value.len() as u64;
            }
            acc += u64::from(i.can_be_prefix()) + u64::from(i.must_be_fresh());
            acc += i.nonce().map_or(0, |n| u64::from(u32::from_be_bytes(n)));
            acc += i.effective_lifetime_ms() + u64::from(i.hop_limit().unwrap_or(0));
            acc += i.forwarding_hint().map(|n| n.len() as u64).sum::<u64>();
        }
        PacketView::Data(d) => {
            for c in d.name().components() {
                acc += u64::from(c.typ) + c.value.len() as u64;
            }
            acc += d.freshness_ms().unwrap_or(0) + d.content().map_or(0, |c| c.len() as u64);
            acc += d.final_block_id().and_then(|c| c.as_number()).unwrap_or(0);
        }
        PacketView::Lp(_) => unreachable!("fragments hold network packets"),
    }
    acc
}

#[test]
fn decoding_views_does_not_allocate() {
    let name = Name::from_uri("/ndn/edu/ucla/%C1.cs/www/index.html/v=3/seg=12").unwrap();
    let interest = Interest {
        can_be_prefix: true,
        must_be_fresh: true,
        forwarding_hint: vec![Name::from_uri("/isp/a").unwrap()],
        lifetime_ms: Some(2000),
        hop_limit: Some(9),
        ..Interest::new(name.clone(), [1, 2, 3, 4])
    };
    let mut data = Data::new(name, vec![7u8; 1000]);
    data.meta_info = Some(MetaInfo {
        freshness_ms: Some(500),
        final_block_id: Some(Component::segment(12)),
        ..MetaInfo::default()
    });
    data.sign_digest_sha256();
    let lp = LpPacket {
        pit_token: Some(vec![9; 8]),
        congestion_mark: Some(1),
        ..LpPacket::nack(interest.to_wire(), NackReason::Congestion)
    };
    let packets = [interest.to_wire(), data.to_wire(), lp.to_wire()];
    let limits = Limits {
        // Digest verification hashes parameters; these Interests carry none, so it costs nothing,
        // but keep the test about parsing only.
        verify_parameters_digest: false,
        ..Limits::default()
    };
    let mut sums = [0u64; 3];
    let before = ALLOCS.load(Ordering::SeqCst);
    for _ in 0..100 {
        for (s, p) in sums.iter_mut().zip(&packets) {
            *s = s.wrapping_add(forwarder_reads(p, &limits));
        }
    }
    let after = ALLOCS.load(Ordering::SeqCst);
    assert!(sums.iter().all(|&s| s > 0));
    assert_eq!(
        after - before,
        0,
        "decoding views allocated {} times",
        after - before
    );
}
