//! The queue from the I/O loops to the management thread, bounded in Interests.
//!
//! Management does far more work per Interest than forwarding (parsing, RIB and FIB updates,
//! signing), so a flood of management Interests must not queue without bound. Only Interests
//! count against the capacity: face events come from the face table, which is bounded itself,
//! and a lost one would leave a route on a destroyed face. As in NFD, an Interest for
//! `/localhost` that arrives on a non-local face violates its scope and is dropped before it
//! reaches management.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::mpsc::{channel, Receiver, RecvTimeoutError, Sender};
use std::sync::Arc;
use std::time::Duration;

use face::FaceId;

use crate::io::MgmtInput;

/// Default of the queue's capacity in Interests.
pub const DEFAULT_MGMT_QUEUE_INTERESTS: usize = 1024;

/// Counters of the management queue.
#[derive(Debug, Default)]
pub struct MgmtQueueStats {
    /// Interests waiting for management now.
    pub pending: AtomicUsize,
    /// Interests refused because the queue held its capacity.
    pub refused_full: AtomicU64,
    /// `/localhost` Interests dropped because they came from a non-local face.
    pub dropped_scope: AtomicU64,
}

/// The I/O loops' end.
#[derive(Debug, Clone)]
pub struct MgmtSender {
    tx: Sender<MgmtInput>,
    stats: Arc<MgmtQueueStats>,
    capacity: usize,
}

/// Management's end.
#[derive(Debug)]
pub struct MgmtReceiver {
    rx: Receiver<MgmtInput>,
    stats: Arc<MgmtQueueStats>,
}

/// A queue that holds at most `capacity` Interests (at least one).
pub fn mgmt_queue(capacity: usize) -> (MgmtSender, MgmtReceiver) {
    let (tx, rx) = channel();
    let stats = Arc::new(MgmtQueueStats::default());
    let sender = MgmtSender {
        tx,
        stats: Arc::clone(&stats),
        capacity: capacity.max(1),
    };
    (sender, MgmtReceiver { rx, stats })
}

impl MgmtSender {
    /// Queues a management Interest received on `face` (`localhost`: its name is under
    /// `/localhost`; `bytes` copies it out of the receive buffer). False if it was dropped: a
    /// `/localhost` Interest from a non-local face, or the queue is full (both counted).
    pub fn interest(
        &self,
        face: FaceId,
        local: bool,
        localhost: bool,
        bytes: impl FnOnce() -> Vec<u8>,
    ) -> bool {
        if localhost && !local {
            self.stats.dropped_scope.fetch_add(1, Ordering::Relaxed);
            return false;
        }
        let pending = self.stats.pending.fetch_add(1, Ordering::AcqRel);
        if pending >= self.capacity {
            self.stats.pending.fetch_sub(1, Ordering::AcqRel);
            self.stats.refused_full.fetch_add(1, Ordering::Relaxed);
            return false;
        }
        let input = MgmtInput::Interest {
            face,
            local,
            bytes: bytes(),
        };
        if self.tx.send(input).is_err() {
            self.stats.pending.fetch_sub(1, Ordering::AcqRel);
            return false;
        }
        true
    }

    /// Tells management about a face event, or asks it for the status figures: never refused
    /// (face events are bounded by the face table, status requests by the HTTP endpoint's
    /// connections). False only when management has stopped.
    pub fn event(&self, event: MgmtInput) -> bool {
        self.tx.send(event).is_ok()
    }

    /// The queue's counters.
    pub fn stats(&self) -> &Arc<MgmtQueueStats> {
        &self.stats
    }
}

impl MgmtReceiver {
    /// The next input, waiting up to `timeout`.
    pub fn recv_timeout(&self, timeout: Duration) -> Result<MgmtInput, RecvTimeoutError> {
        let input = self.rx.recv_timeout(timeout)?;
        if matches!(input, MgmtInput::Interest { .. }) {
            self.stats.pending.fetch_sub(1, Ordering::AcqRel);
        }
        Ok(input)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn i() -> Vec<u8> {
        b"an Interest".to_vec()
    }

    #[test]
    fn holds_at_most_its_capacity_in_interests_and_counts_the_rest() {
        let (tx, rx) = mgmt_queue(3);
        let queued = (0..5).filter(|_| tx.interest(7, true, true, i)).count();
        assert_eq!(queued, 3);
        assert_eq!(tx.stats().refused_full.load(Ordering::Relaxed), 2);
        // Face events are never refused.
        let desc = face::table::FaceDesc {
            id: 9,
            uri: "udp4://127.0.0.1:6363".into(),
            local_uri: "udp4://127.0.0.1:6364".into(),
            local: false,
            persistency: wire::nfd::FacePersistency::OnDemand,
            mtu: None,
            options: Default::default(),
            counters: Default::default(),
        };
        tx.event(MgmtInput::FaceEvent(
            wire::nfd::FaceEventKind::Created,
            Box::new(desc),
        ));
        let (mut interests, mut events) = (0, 0);
        while let Ok(input) = rx.recv_timeout(Duration::ZERO) {
            interests += usize::from(matches!(input, MgmtInput::Interest { face: 7, .. }));
            events += usize::from(matches!(input, MgmtInput::FaceEvent(_, ref d) if d.id == 9));
        }
        assert_eq!((interests, events), (3, 1));
        assert_eq!(tx.stats().pending.load(Ordering::Relaxed), 0);
        assert!(tx.interest(7, true, true, i), "room again once drained");
    }

    #[test]
    fn localhost_from_a_non_local_face_is_dropped_localhop_is_not() {
        let (tx, rx) = mgmt_queue(8);
        assert!(!tx.interest(1, false, true, i));
        assert_eq!(tx.stats().dropped_scope.load(Ordering::Relaxed), 1);
        assert!(
            tx.interest(1, false, false, i),
            "/localhop from a non-local face"
        );
        assert!(tx.interest(2, true, true, i));
        assert!(tx.interest(2, true, false, i));
        let mut n = 0;
        while rx.recv_timeout(Duration::ZERO).is_ok() {
            n += 1;
        }
        assert_eq!(n, 3);
        assert_eq!(tx.stats().pending.load(Ordering::Relaxed), 0);
    }
}
