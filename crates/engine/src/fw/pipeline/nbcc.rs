//! Congestion control for NB-Cache: plain ECN and NB-CC (see [`CongestionConfig`]).
//!
//! Nothing here allocates per packet: the per-face state grows only when a face is declared.

use wire::lp::NbccSignal;

use super::*;

/// Listed downstreams looked at per batch or tick for a signal due on an IDLE LpPacket.
const IDLE_SCAN: usize = 16;

/// Congestion control for NB-Cache (Pan et al., "NB-Cache: Non-Blocking In-Network Caching for
/// High-Performance Content Routers", §III-E): plain ECN, or NB-CC with its lazy congestion
/// notification. The store counts as congested while its slow tier has at least
/// [`CongestionConfig::threshold`] lookups waiting ([`SlowTier::waiting`]), looked at once per
/// batch.
///
/// - **ECN** (`ecn` without `nbcc`): every Interest that arrives while the store is congested
///   gets its Data marked (NDNLPv2 CongestionMark) when this engine sends it downstream, whether
///   the Data came from the store or from upstream (a RAM-CS hit included).
/// - **NB-CC** (`nbcc`): marking is delayed until there is no other way: only an Interest that
///   joins the slow tier's queue while it is past the threshold — because no upstream was
///   available to bypass to, or because the bypass (`aqm`) is off — gets its Data marked (with
///   `ecn`; without it nothing is marked and only the signals below run). And the engine tells
///   its downstreams: each round of signals is a Nack-α while congested (a new round every
///   `interval_ms`) and one Nack-β when the queue falls below the threshold again. A round's
///   signal rides, as Cascade's NDNLPv2 field 952 ([`NbccSignal`]), on the next Data this
///   engine sends to each point-to-point face: a face it sends Data to is by definition a
///   downstream, and a field on a packet sent anyway needs no packet of its own and is ignored
///   by a forwarder or application that does not know it. A non-local point-to-point face that
///   sent Interests within the last `timeout_ms` (or had the Nack-α, for the Nack-β) and got no
///   Data carrying the round's signal within half an `interval_ms` of its start gets it alone,
///   on an IDLE LpPacket ([`SendKind::Idle`]): a downstream whose Interests all bypass this
///   router, or that stopped sending any because of the Nack-α, still learns of each round.
///   A face is sent each round at most once, and a Nack-β only if it was sent the Nack-α
///   before. Downstream, a Nack-α makes its
///   face unavailable to bypassed Interests for `timeout_ms` (refreshed by each Nack-α), a
///   Nack-β makes it available again; the strategy picks a bypassed Interest's upstream among
///   the available next hops, and an Interest with none waits for the store (and is marked).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CongestionConfig {
    /// Mark Data with an NDNLPv2 CongestionMark (plain ECN, or NB-CC's lazy marking).
    pub ecn: bool,
    /// NB-CC: Nack-α / Nack-β to downstreams, lazy marking, and bypass only to upstreams that
    /// have not sent a Nack-α.
    pub nbcc: bool,
    /// Slow-tier lookups waiting from which the store counts as congested (0: always, when
    /// there is a slow tier).
    pub threshold: usize,
    /// A new round of Nack-α every this many milliseconds while congested.
    pub interval_ms: u64,
    /// How long a Nack-α received keeps its face unavailable to bypassed Interests.
    pub timeout_ms: u64,
}

impl Default for CongestionConfig {
    fn default() -> Self {
        CongestionConfig {
            ecn: false,
            nbcc: false,
            threshold: 64,
            interval_ms: 100,
            timeout_ms: 1000,
        }
    }
}

/// What the congestion control did (per engine).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CongestionCounters {
    /// Nack-α sent (one per face and round).
    pub alpha_sent: u64,
    /// Nack-β sent.
    pub beta_sent: u64,
    /// Of the signals sent, those that went alone on an IDLE LpPacket (no Data to carry them).
    pub idle_sent: u64,
    /// Nack-α received.
    pub alpha_received: u64,
    /// Nack-β received.
    pub beta_received: u64,
    /// Times a Nack-α made an available face unavailable to bypassed Interests.
    pub faces_unavailable: u64,
    /// Interests past the threshold whose eligible upstreams had all sent a Nack-α: they
    /// waited for the store (also counted in [`BypassCounters::queue_no_upstream`]).
    pub bypass_unavailable: u64,
    /// Data this engine marked (a mark that came from upstream is passed on, not counted).
    pub data_marked: u64,
}

/// NB-CC's state of one face.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct CcFace {
    /// The last round this face was sent (or skipped); rounds start at 1.
    round: u64,
    /// The last signal sent to it was a Nack-α.
    alpha_sent: bool,
    /// Bypassed Interests may not go to it before this time (a Nack-α from it).
    unavailable_until_ms: u64,
    /// When it last sent an Interest (NB-CC only).
    last_interest_ms: u64,
    /// It is in [`CcState::listed`].
    pub(super) listed: bool,
}

/// The engine's congestion state.
#[derive(Debug, Default)]
pub(super) struct CcState {
    /// The slow tier was past the threshold when last looked at (start of the batch).
    pub(super) congested: bool,
    /// The current round's signal and number (0: no round yet).
    signal: Option<NbccSignal>,
    round: u64,
    /// When the current Nack-α round began.
    alpha_since_ms: u64,
    /// When the current round (Nack-α or Nack-β) began.
    round_since_ms: u64,
    /// The downstreams that may need a signal on an IDLE LpPacket: faces that sent Interests,
    /// each once (capacity reserved for every declared face, so pushing never allocates).
    pub(super) listed: Vec<FaceId>,
    /// Where the next bounded scan of `listed` starts.
    scan_at: usize,
    /// Packets waiting in front of the engine, counted with the slow tier's queue: a classic
    /// (blocking) router's storage queue is the backlog its waits leave in front of it.
    pub(super) waiting_before: usize,
    /// Per face id (grown by [`Engine::set_face`]).
    pub(super) faces: Vec<CcFace>,
}

/// Where a bypassed Interest could go.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Upstream {
    /// An eligible upstream that has not sent a Nack-α.
    Available,
    /// Eligible upstreams, all of them under a Nack-α.
    Unavailable,
    /// No eligible upstream.
    None,
}

impl Engine {
    /// Sets the congestion control ([`CongestionConfig`]); takes effect at the next batch.
    pub fn set_congestion(&mut self, config: CongestionConfig) {
        self.config.congestion = config;
    }

    /// Tells the engine how many packets wait in front of it (its input ring) when its slow
    /// tier is read blocking, as a classic content router reads its store: they wait for the
    /// storage as much as the reads in flight do, so ECN and NB-CC count them in the storage
    /// queue (Pan et al., "NB-Cache: Non-Blocking In-Network Caching for High-Performance
    /// Content Routers", the classic router of cases A and C). Leave it at 0 otherwise.
    pub fn set_waiting_before(&mut self, packets: usize) {
        self.cc.waiting_before = packets;
    }

    /// Looks at the slow tier's queue (once per batch) and, with NB-CC, starts a new round of
    /// signals when one is due: a Nack-α on becoming congested and every `interval_ms` while
    /// it stays so, a Nack-β on falling below the threshold.
    pub(super) fn cc_update(&mut self, now_ms: u64) {
        let c = self.config.congestion;
        if !(c.ecn || c.nbcc) {
            return;
        }
        let before = self.cc.waiting_before;
        let congested = self
            .slow_tier
            .as_ref()
            .is_some_and(|t| t.waiting() + before >= c.threshold);
        let s = &mut self.cc;
        s.congested = congested;
        if !c.nbcc {
            return;
        }
        let alpha = s.signal == Some(NbccSignal::Alpha);
        if congested && (!alpha || now_ms >= s.alpha_since_ms.saturating_add(c.interval_ms)) {
            s.signal = Some(NbccSignal::Alpha);
            s.alpha_since_ms = now_ms;
            s.round_since_ms = now_ms;
            s.round += 1;
        } else if !congested && alpha {
            s.signal = Some(NbccSignal::Beta);
            s.round_since_ms = now_ms;
            s.round += 1;
        }
    }

    /// An Interest came from `face`: with NB-CC, a non-local point-to-point face becomes (or
    /// stays) a downstream that [`Engine::cc_idle_signals`] looks at.
    #[inline]
    pub(super) fn cc_note_interest(&mut self, now_ms: u64, face: FaceId) {
        if !self.config.congestion.nbcc {
            return;
        }
        let info = self.face(face);
        let slot = self.table.face_slot(face);
        let s = &mut self.cc;
        let Some(f) = s.faces.get_mut(slot).filter(|_| self.faces[slot].0 == face) else {
            return;
        };
        if info.local || info.multi_access {
            return;
        }
        f.last_interest_ms = now_ms;
        // Each face is listed once and room is reserved for every face: never allocates.
        if !f.listed && s.listed.len() < s.listed.capacity() {
            f.listed = true;
            s.listed.push(face);
        }
    }

    /// Sends the current round's signal on an IDLE LpPacket to the listed downstreams that have
    /// not had it half an `interval_ms` after the round began (a Nack-α only to a face that
    /// sent Interests within `timeout_ms`, a Nack-β only to one that had the Nack-α), and
    /// forgets the faces that are neither. Looks at most [`IDLE_SCAN`] faces per call, round
    /// robin, so at most that many IDLE packets per call and one per face and round.
    pub(super) fn cc_idle_signals(&mut self, now_ms: u64) {
        let c = self.config.congestion;
        let s = &self.cc;
        let grace_ms = (c.interval_ms / 2).max(1);
        if !c.nbcc || s.round == 0 || now_ms < s.round_since_ms.saturating_add(grace_ms) {
            return;
        }
        let (round, Some(signal)) = (s.round, s.signal) else {
            return;
        };
        for _ in 0..IDLE_SCAN.min(s.listed.len()) {
            let s = &mut self.cc;
            if s.listed.is_empty() {
                break;
            }
            let at = s.scan_at % s.listed.len();
            let face = s.listed[at];
            let slot = self.table.face_slot(face);
            let f = s.faces[slot];
            let recent = f.last_interest_ms.saturating_add(c.timeout_ms) > now_ms;
            if (!recent && !f.alpha_sent) || self.faces[slot].0 != face {
                // No longer a downstream (or closed: its slot names a new face, which is
                // listed afresh when it sends an Interest): the face that took its place in
                // the list is looked at next.
                s.listed.swap_remove(at);
                s.faces[slot].listed = false;
                continue;
            }
            s.scan_at = at + 1;
            if f.round == round || (!recent && signal == NbccSignal::Alpha) {
                continue;
            }
            if let Some(sig) = self.cc_signal_for(face) {
                self.counters.congestion.idle_sent += 1;
                self.actions.push(Action {
                    face,
                    kind: SendKind::Idle,
                    packet: PacketRef::Out(0..0),
                    pit_token: None,
                    congestion_mark: 0,
                    nbcc: Some(sig),
                    incoming: None,
                });
            }
        }
    }

    /// Advances time without packets (the worker's tick when no input came): expires PIT
    /// entries, looks at the slow tier's queue ([`Engine::set_congestion`]) and returns the
    /// NB-CC signals due on IDLE LpPackets.
    pub fn tick(&mut self, now_ms: u64) -> Output<'_> {
        self.actions.clear();
        self.out.clear();
        self.advance(now_ms);
        self.cc_update(now_ms);
        self.cc_idle_signals(now_ms);
        Output {
            actions: &self.actions,
            out: &self.out,
        }
    }

    /// The signal a Data sent to `face` carries: the current round's, if the face has not had
    /// it (a Nack-β only to a face that had the Nack-α).
    #[inline]
    pub(super) fn cc_signal_for(&mut self, face: FaceId) -> Option<NbccSignal> {
        if !self.config.congestion.nbcc || self.cc.round == 0 {
            return None;
        }
        let multi_access = self.face(face).multi_access;
        let (round, signal) = (self.cc.round, self.cc.signal?);
        if !self.face_current(face) {
            return None; // closed: its slot may name a new face
        }
        let f = self.cc.faces.get_mut(self.table.face_slot(face))?;
        if f.round == round || multi_access {
            return None;
        }
        f.round = round;
        let alpha = signal == NbccSignal::Alpha;
        if !alpha && !f.alpha_sent {
            return None;
        }
        f.alpha_sent = alpha;
        if alpha {
            self.counters.congestion.alpha_sent += 1;
        } else {
            self.counters.congestion.beta_sent += 1;
        }
        Some(signal)
    }

    /// A Nack-α or Nack-β arrived from `face` (on an IDLE LpPacket or with a packet). Counted
    /// always; acted on with NB-CC only.
    pub fn on_nbcc_signal(&mut self, now_ms: u64, face: FaceId, signal: NbccSignal) {
        let c = self.config.congestion;
        let current = self.face_current(face);
        let k = &mut self.counters.congestion;
        match signal {
            NbccSignal::Alpha => k.alpha_received += 1,
            NbccSignal::Beta => k.beta_received += 1,
        }
        if !c.nbcc || !current {
            return;
        }
        let Some(f) = self.cc.faces.get_mut(self.table.face_slot(face)) else {
            return;
        };
        match signal {
            NbccSignal::Alpha => {
                if f.unavailable_until_ms <= now_ms {
                    k.faces_unavailable += 1;
                }
                f.unavailable_until_ms = now_ms.saturating_add(c.timeout_ms.max(1));
            }
            NbccSignal::Beta => f.unavailable_until_ms = 0,
        }
    }

    /// Whether bypassed Interests may go to `face` at `now_ms`: always without NB-CC, else
    /// unless a Nack-α from it is in force.
    #[inline]
    pub fn bypass_available(&self, face: FaceId, now_ms: u64) -> bool {
        !self.config.congestion.nbcc
            || self
                .cc
                .faces
                .get(self.table.face_slot(face))
                .filter(|_| self.face_current(face))
                .is_none_or(|f| f.unavailable_until_ms <= now_ms)
    }

    /// How many faces a Nack-α holds unavailable to bypassed Interests at `now_ms` (0 without
    /// NB-CC). Walks the faces: for management, not the forwarding path.
    pub fn unavailable_faces(&self, now_ms: u64) -> u64 {
        if !self.config.congestion.nbcc {
            return 0;
        }
        let n = self.cc.faces.iter();
        n.filter(|f| f.unavailable_until_ms > now_ms).count() as u64
    }

    /// Plain ECN marks the Data of every Interest that arrives while the store is congested.
    #[inline]
    pub(super) fn ecn_marks_all(&self) -> bool {
        let c = self.config.congestion;
        c.ecn && !c.nbcc && self.cc.congested
    }

    /// NB-CC (with `ecn`) marks the Data of an Interest that joins the slow tier's queue with
    /// `waiting` lookups ahead of it (and, reading blocking, the backlog in front of the
    /// engine), past the threshold.
    #[inline]
    pub(super) fn nbcc_marks_queued(&self, waiting: usize) -> bool {
        let c = self.config.congestion;
        c.ecn && c.nbcc && waiting + self.cc.waiting_before >= c.threshold
    }

    /// The CongestionMark of a Data sent for PIT entry `p`, given the mark it came with:
    /// the engine's own when the entry was marked (counted), else the incoming one.
    #[inline]
    pub(super) fn data_mark(&mut self, p: u32, incoming: u64) -> u64 {
        if incoming == 0 && self.table.pit(p).cc_mark {
            self.counters.congestion.data_marked += 1;
            1
        } else {
            incoming
        }
    }
}
