//! Content placement, and the producer that serves the catalogue.
//!
//! A router's share of the catalogue gets into its L2 store the way content gets into any
//! router's store: the router runs alone (a Unix socket, no network), a producer registers
//! the prefix on it, and a consumer fetches every chunk of the share through it, so that each
//! Data is written to L2 as it satisfies its Interest (write-through). The router then stops
//! cleanly, writing its L2 index (and the hashes its bloom filter is rebuilt from); the runs
//! start routers on the same directories with L2 admission off, so every run finds the same
//! placement.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use client::transport::TransportUri;
use client::{Consumer, Face, Outcome, Received};

use super::catalogue::Catalogue;
use super::node::{RouterConf, RouterProc, StoreConf};
use super::scenario::Scenario;
use super::Case;

/// Interests outstanding while placing.
const WINDOW: usize = 32;

/// Fetch passes over a share at most (a pass refetches what an earlier one could not store).
const PASSES: usize = 4;

/// A producer serving the catalogue on a router's Unix socket, on its own thread.
#[derive(Debug)]
pub struct Producer {
    stop: Arc<AtomicBool>,
    served: Arc<AtomicU64>,
    thread: Option<JoinHandle<Result<(), String>>>,
}

impl Producer {
    /// Connects to the router at `sock`, registers the catalogue's prefix and answers every
    /// Interest for a chunk of it, until stopped.
    pub fn start(sock: &Path, cat: &Catalogue) -> Result<Producer, String> {
        let mut face = Face::connect(&TransportUri::Unix(sock.to_path_buf()))
            .map_err(|e| format!("producer: {e}"))?;
        face.register(cat.prefix())
            .map_err(|e| format!("producer: rib/register: {e}"))?;
        let stop = Arc::new(AtomicBool::new(false));
        let served = Arc::new(AtomicU64::new(0));
        let (st, sv, cat) = (Arc::clone(&stop), Arc::clone(&served), cat.clone());
        let thread = std::thread::Builder::new()
            .name("emu-producer".into())
            .spawn(move || serve(&mut face, &cat, &st, &sv))
            .map_err(|e| e.to_string())?;
        Ok(Producer {
            stop,
            served,
            thread: Some(thread),
        })
    }

    /// Data sent so far.
    pub fn served(&self) -> u64 {
        self.served.load(Ordering::Relaxed)
    }

    /// Stops the producer; its error, if it failed.
    pub fn finish(mut self) -> Result<u64, String> {
        self.stop.store(true, Ordering::Relaxed);
        let r = self.thread.take().map_or(Ok(()), |t| {
            t.join().unwrap_or_else(|_| Err("producer panicked".into()))
        });
        r.map(|()| self.served())
    }
}

impl Drop for Producer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn serve(
    face: &mut Face,
    cat: &Catalogue,
    stop: &AtomicBool,
    served: &AtomicU64,
) -> Result<(), String> {
    while !stop.load(Ordering::Relaxed) {
        let got = face
            .recv(Duration::from_millis(50))
            .map_err(|e| format!("producer: {e}"))?;
        let Some(Received::Interest(i)) = got else {
            continue;
        };
        let w = i.interest.name.to_wire();
        let Ok(view) = wire::NameView::decode(&w, &wire::Limits::default()) else {
            continue;
        };
        if let Some(k) = cat.index_of(&view) {
            face.put_data(&cat.data(k), i.pit_token)
                .map_err(|e| format!("producer: {e}"))?;
            served.fetch_add(1, Ordering::Relaxed);
        }
    }
    Ok(())
}

/// The directory of node `name`'s L2 files under `workdir`.
pub fn l2_dir(workdir: &Path, name: &str) -> PathBuf {
    workdir.join(name).join("l2")
}

/// `store.l2_capacity` of a node holding `held` chunks: room for them all, plus a margin so
/// that no placed chunk is evicted.
pub fn l2_capacity(held: u64, workers: usize) -> u64 {
    held + held / 8 + 16 * workers as u64
}

/// Places node `i`'s share of the catalogue in its store (see the [module docs](self));
/// `progress` is called with the chunks fetched.
pub fn place(
    bin: &Path,
    workdir: &Path,
    s: &Scenario,
    i: usize,
    direct: bool,
    stop: &AtomicBool,
    progress: &dyn Fn(u64),
) -> Result<(), String> {
    let node = &s.nodes[i];
    let cat = Catalogue::new(&s.content);
    let held = s.held_chunks(i);
    let dir = workdir.join(&node.name);
    let l2 = l2_dir(workdir, &node.name);
    std::fs::create_dir_all(&l2).map_err(|e| format!("{}: {e}", l2.display()))?;
    let sock = dir.join("place.sock");
    let conf = RouterConf {
        sock: &sock,
        udp: String::new(),
        udp_mtu: super::net::UDP_MTU,
        upstream: None,
        prefix: &s.content.prefix,
        settings: &s.router,
        store: Some(StoreConf {
            dir: l2,
            capacity: l2_capacity(held, s.router.workers),
            direct,
            placing: true,
        }),
        case: Case::B,
        threshold: s.router.threshold,
        cc: super::Cc::None,
    };
    let mut router = RouterProc::start(bin, None, &node.name, &conf, (&dir, "place"), stop)?;
    let producer = Producer::start(&sock, &cat)?;
    let mut face = Face::connect(&TransportUri::Unix(sock.clone())).map_err(|e| e.to_string())?;
    let chunks = cat.chunks_of(node.holds);
    let mut stored = 0;
    for _ in 0..PASSES {
        fetch_all(&mut face, &cat, chunks.clone(), stop, progress)?;
        stored = wait_stored(&mut face, held, stop)?;
        if stored >= held {
            break;
        }
    }
    producer.finish()?;
    drop(face);
    router.stop()?;
    if stored < held {
        return Err(format!(
            "placement: {} stored {stored} of its {held} chunks",
            node.name
        ));
    }
    Ok(())
}

/// Fetches every chunk of `chunks` through `face`, `WINDOW` at a time.
fn fetch_all(
    face: &mut Face,
    cat: &Catalogue,
    chunks: std::ops::Range<u64>,
    stop: &AtomicBool,
    progress: &dyn Fn(u64),
) -> Result<(), String> {
    let mut c = Consumer::new(face, WINDOW);
    let mut next = chunks.start;
    let mut done = 0;
    loop {
        if stop.load(Ordering::Relaxed) {
            return Err("interrupted".into());
        }
        while next < chunks.end && c.outstanding() < WINDOW {
            let mut i = wire::Interest::new(cat.name(next), client::random_nonce());
            i.lifetime_ms = Some(2000);
            c.express(i).map_err(|e| format!("placement: {e}"))?;
            next += 1;
        }
        match c.next_outcome().map_err(|e| format!("placement: {e}"))? {
            None => return Ok(()),
            Some((_, Outcome::Nack(n))) => {
                return Err(format!(
                    "placement: Nack {:?} for {}",
                    n.reason, n.interest.name
                ))
            }
            Some(_) => {
                done += 1;
                progress(done);
            }
        }
    }
}

/// Waits until the store holds `held` chunks or stops growing; returns what it holds.
fn wait_stored(face: &mut Face, held: u64, stop: &AtomicBool) -> Result<u64, String> {
    let mut last = u64::MAX;
    for _ in 0..100 {
        let tiers = client::Controller::new(face)
            .cs_tiers(Duration::from_secs(2))
            .map_err(|e| format!("placement: cs/tiers: {e}"))?;
        let n: u64 = tiers.iter().map(|t| t.n_entries).sum();
        let in_flight: u64 = tiers.iter().map(|t| t.n_in_flight).sum();
        if n >= held || (n == last && in_flight == 0) || stop.load(Ordering::Relaxed) {
            return Ok(n);
        }
        last = n;
        std::thread::sleep(Duration::from_millis(50));
    }
    Ok(last)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_store_has_room_for_its_share() {
        for held in [0, 1, 10, 10_000] {
            assert!(l2_capacity(held, 1) > held);
        }
        assert_eq!(l2_dir(Path::new("/w"), "R1"), Path::new("/w/R1/l2"));
    }
}
