//! Which thread gets a packet: the I/O thread parses only as far as the name and its hash.
//!
//! - Interests go to the worker that owns their name ([`WorkerMapping`]: a chunk — a name whose
//!   last component is a segment number — by its content name, or by its content name and
//!   batch number, or by its full name; any other name by its full name); a trailing implicit
//!   digest is left out so the Interest meets its Data, whose name has no digest. Data map
//!   by the same function, so a Data without a PIT token reaches its Interest's worker.
//! - Data and Nacks that carry one of our PIT tokens go to the worker that sent the Interest
//!   (workers put a token naming themselves on every Interest they send upstream, as NDN-DPDK
//!   does). Without a token a Nack goes by its Interest's name; a Data goes to the owner of its
//!   name and, when there are several workers, a copy goes to every other worker too, since a
//!   CanBePrefix Interest for a shorter name may wait there.
//! - A CanBePrefix Interest goes to its owner too, unless the owner's L2 surely holds no chunk
//!   under its name and another worker's L2 may: then to that worker (each worker's L2 counts
//!   the prefixes it can answer for in a filter, [`L2Prefixes`]). So with `mapping = "content"`
//!   a restarted router answers version discovery from whichever worker stored the content.
//!   When that worker's L2 has nothing to serve after all, it hands the Interest on to the next
//!   candidate ([`Dispatcher::next_prefix_holder`]).
//! - Interests for `/localhost/nfd` and `/localhop/nfd` go to management, and so do the Data
//!   and Nacks carrying management's certificate-fetch PIT token ([`mgmt::auth::FETCH_TOKEN`]).
//! - Fragments go back to the face for reassembly first.

use std::sync::Arc;

use engine::hash::{full_name_hash, prefix_hash, HashKey};
use engine::partition::worker_of;
use store::CountingBloom;
use wire::tlv::Reader;
use wire::{tt, Limits, LpPacketView, NameView};

use crate::pool::PktKind;

/// First bytes of the PIT token a worker puts on the Interests it sends upstream; the third and
/// last byte is the worker's index.
pub const TOKEN_MAGIC: [u8; 2] = [0xCA, 0x5C];

/// The PIT token of worker `w`.
#[inline]
pub fn worker_token(w: usize) -> [u8; 3] {
    [TOKEN_MAGIC[0], TOKEN_MAGIC[1], w as u8]
}

/// The worker a PIT token names, if it is one of ours and in range.
#[inline]
pub fn token_worker(token: &[u8], workers: usize) -> Option<usize> {
    match token {
        [a, b, w] if [*a, *b] == TOKEN_MAGIC && (*w as usize) < workers => Some(*w as usize),
        _ => None,
    }
}

/// Where a received packet goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Route {
    /// To this worker.
    Worker(usize),
    /// A Data without our token: to `owner`, and a copy to every other worker.
    AllWorkers {
        /// The worker that owns the Data's name.
        owner: usize,
    },
    /// To management (a command or dataset Interest).
    Mgmt {
        /// Under `/localhost/nfd` (only local faces may send it), rather than `/localhop/nfd`.
        localhost: bool,
    },
    /// A fragment: reassemble first, then route the whole packet.
    Reassemble,
    /// An LpPacket without a network packet (IDLE): nothing to do.
    Idle,
    /// Not a packet we can forward.
    Malformed,
}

/// How chunks are spread over workers (the H of Mansilha et al., "Exploiting parallelism in
/// hierarchical content stores for high-speed ICN routers", Computer Networks, 2017). Names
/// that are not chunks always go by their full name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WorkerMapping {
    /// H=Content: a chunk by its content name (the name without the segment), so that a
    /// content and its L2 batches live on one worker.
    Content,
    /// H=Batch: a chunk by its content name and `floor(segment / batch)`, so that the batches
    /// of a popular content spread over the workers (each batch whole on one worker).
    Batch {
        /// Chunks per batch (B, the L2 batch).
        batch: u64,
    },
    /// Every name by its full name: the chunks of one batch scatter over the workers (what
    /// Cascade did before `workers.mapping` existed; kept to reopen stores written then).
    Name,
}

impl WorkerMapping {
    /// The byte recorded for it in an L2 store's key file.
    pub fn code(self) -> u8 {
        match self {
            WorkerMapping::Name => 0,
            WorkerMapping::Content => 1,
            WorkerMapping::Batch { .. } => 2,
        }
    }

    /// Its name in the configuration.
    pub fn config_name(code: u8) -> &'static str {
        match code {
            0 => "name",
            1 => "content",
            2 => "batch",
            _ => "unknown",
        }
    }
}

/// The hash that picks the worker for `name` under `mapping`.
pub fn mapping_hash(key: HashKey, name: &NameView<'_>, mapping: WorkerMapping) -> u64 {
    mapping_hash_with(key, name, mapping, || full_name_hash(key, name))
}

/// [`mapping_hash`], taking the full-name hash from `full` where the mapping is by the full
/// name (the dispatcher has computed it already for the worker).
fn mapping_hash_with(
    key: HashKey,
    name: &NameView<'_>,
    mapping: WorkerMapping,
    full: impl FnOnce() -> u64,
) -> u64 {
    // A trailing implicit digest is not part of the Data's name.
    let mut n = name.len();
    if name
        .last()
        .is_some_and(|c| u32::from(c.typ) == tt::IMPLICIT_SHA256_DIGEST)
    {
        n -= 1;
    }
    let seg = n
        .checked_sub(1)
        .and_then(|i| name.get(i))
        .filter(|c| u32::from(c.typ) == tt::SEGMENT);
    match (mapping, seg) {
        (WorkerMapping::Content, Some(_)) => prefix_hash(key, name, n - 1),
        (WorkerMapping::Batch { batch }, Some(c)) if batch > 0 => {
            let base = prefix_hash(key, name, n - 1);
            let b = (c.as_number().unwrap_or(0) / batch).wrapping_mul(0x9E37_79B9_7F4A_7C15);
            base ^ b ^ (b >> 31)
        }
        _ if n == name.len() => full(),
        _ => prefix_hash(key, name, n),
    }
}

/// Per worker, the filter of the name prefixes its L2 can answer CanBePrefix Interests for
/// (written by that worker's L2 only, read by the dispatchers; see
/// [`store::L2File::open_with_filters`]).
pub type L2Prefixes = Arc<[Arc<CountingBloom>]>;

/// The I/O thread's packet classifier.
#[derive(Debug, Clone)]
pub struct Dispatcher {
    key: HashKey,
    workers: usize,
    mapping: WorkerMapping,
    limits: Limits,
    l2_prefixes: Option<L2Prefixes>,
}

fn is_generic(c: Option<wire::ComponentView<'_>>, value: &[u8]) -> bool {
    c.is_some_and(|c| u32::from(c.typ) == tt::GENERIC_COMPONENT && c.value == value)
}

/// True for names under `/localhost/nlsr/rib/register` or `.../unregister`: NLSR's answers
/// to the router's readvertisements, which go to management.
pub fn is_nlsr_answer(name: &NameView<'_>) -> bool {
    is_generic(name.get(0), b"localhost")
        && is_generic(name.get(1), b"nlsr")
        && is_generic(name.get(2), b"rib")
        && (is_generic(name.get(3), b"register") || is_generic(name.get(3), b"unregister"))
}

/// True for names under `/localhop/nfd/rib/register` or `.../unregister`: a hub's answers to
/// the router's prefix propagation, which go to management.
pub fn is_hub_answer(name: &NameView<'_>) -> bool {
    is_generic(name.get(0), b"localhop")
        && is_generic(name.get(1), b"nfd")
        && is_generic(name.get(2), b"rib")
        && (is_generic(name.get(3), b"register") || is_generic(name.get(3), b"unregister"))
}

/// True for names under `/localhost/nfd` or `/localhop/nfd`.
pub fn is_management(name: &NameView<'_>) -> bool {
    let first = name.get(0);
    (is_generic(first, b"localhost") || is_generic(first, b"localhop"))
        && is_generic(name.get(1), b"nfd")
}

impl Dispatcher {
    /// A dispatcher for `workers` workers (at least one).
    pub fn new(key: HashKey, workers: usize, mapping: WorkerMapping, limits: Limits) -> Self {
        assert!((1..=255).contains(&workers));
        Dispatcher {
            key,
            workers,
            mapping,
            limits,
            l2_prefixes: None,
        }
    }

    /// Sends CanBePrefix Interests to a worker whose L2 may answer them when their owner's
    /// cannot (one filter per worker, in order).
    pub fn with_l2_prefixes(mut self, filters: Option<L2Prefixes>) -> Self {
        assert!(filters.as_ref().is_none_or(|f| f.len() == self.workers));
        self.l2_prefixes = filters;
        self
    }

    /// The worker a CanBePrefix Interest whose name has full-name hash `hash` goes to: its
    /// `owner` if that worker's L2 may hold chunks under the name (or none may), else the
    /// first worker after it whose L2 may (the first candidate; [`Dispatcher::next_prefix_holder`]
    /// gives the next ones).
    fn prefix_holder(&self, owner: usize, hash: u64) -> usize {
        let Some(f) = &self.l2_prefixes else {
            return owner;
        };
        if f[owner].may_contain(hash) {
            return owner;
        }
        (1..self.workers)
            .map(|k| (owner + k) % self.workers)
            .find(|&w| f[w].may_contain(hash))
            .unwrap_or(owner)
    }

    /// The worker a CanBePrefix Interest for `name` goes to after worker `me`'s L2 found no
    /// (fresh) chunk under it: the next candidate in the order the dispatcher
    /// starts (the owner, then the workers after it, modulo their number) whose filter may
    /// hold the name, or `None` when `me` is the last one (it forwards the Interest). Each
    /// hand-on moves strictly forward in that order, so an Interest visits every worker at
    /// most once even while the filters change: the position after the owner is its hop count.
    pub fn next_prefix_holder(&self, me: usize, name: &NameView<'_>) -> Option<usize> {
        let f = self.l2_prefixes.as_ref()?;
        let hash = full_name_hash(self.key, name);
        let owner = self.owner_with(name, || hash);
        let hops = (me + self.workers - owner) % self.workers;
        (hops + 1..self.workers)
            .map(|k| (owner + k) % self.workers)
            .find(|&w| f[w].may_contain(hash))
    }

    /// Whether a worker whose L2 misses a CanBePrefix Interest may hand it on to another
    /// ([`Dispatcher::next_prefix_holder`]): several workers, with prefix filters.
    pub fn hands_on_prefix_misses(&self) -> bool {
        self.workers > 1 && self.l2_prefixes.is_some()
    }

    /// The packet limits it decodes with.
    pub fn limits(&self) -> &Limits {
        &self.limits
    }

    /// Number of workers.
    pub fn workers(&self) -> usize {
        self.workers
    }

    /// The worker that owns `name` (an Interest's name or a Data's).
    pub fn owner(&self, name: &NameView<'_>) -> usize {
        self.owner_with(name, || full_name_hash(self.key, name))
    }

    /// [`Dispatcher::owner`] given the name's full-name hash.
    fn owner_with(&self, name: &NameView<'_>, full: impl FnOnce() -> u64) -> usize {
        if self.workers == 1 {
            return 0;
        }
        worker_of(
            mapping_hash_with(self.key, name, self.mapping, full),
            self.workers,
        )
    }

    /// Classifies one received packet (bare Interest or Data, or an LpPacket).
    pub fn route(&self, bytes: &[u8]) -> Route {
        self.classify(bytes).0
    }

    /// Classifies one received packet and tells what it is.
    pub fn classify(&self, bytes: &[u8]) -> (Route, PktKind) {
        let (route, kind, _) = self.classify_hashed(bytes);
        (route, kind)
    }

    /// [`Dispatcher::classify`], and the full-name hash of the Interest, Data or Nack routed to
    /// a worker ([`engine::hash::full_name_hash`]), which the worker's engine then uses instead
    /// of computing it (the dispatcher of So, Narayanan and Oran, "Named Data Networking on a
    /// Router: Fast and DoS-resistant Forwarding with Hash Tables", ANCS 2013, precomputes it
    /// the same way).
    pub fn classify_hashed(&self, bytes: &[u8]) -> (Route, PktKind, Option<u64>) {
        let Some(&first) = bytes.first() else {
            return (Route::Malformed, PktKind::Other, None);
        };
        if u32::from(first) != tt::LP_PACKET {
            return self.route_network(bytes, None, false);
        }
        let Ok(lp) = LpPacketView::decode(bytes, &self.limits) else {
            return (Route::Malformed, PktKind::Other, None);
        };
        if lp.frag_count.is_some_and(|c| c > 1) {
            return (Route::Reassemble, PktKind::Other, None);
        }
        match (lp.fragment(), lp.nbcc) {
            // An NB-CC signal concerns the face, so every worker's engine takes it: alone on
            // an IDLE packet, or on a Data (whose copies other workers drop after reading it).
            (None, Some(_)) if self.workers > 1 => {
                (Route::AllWorkers { owner: 0 }, PktKind::Other, None)
            }
            (None, Some(_)) => (Route::Worker(0), PktKind::Other, None),
            (None, None) => (Route::Idle, PktKind::Other, None),
            (Some(f), sig) => {
                self.classify_network(f, lp.pit_token, lp.nack.is_some(), sig.is_some())
            }
        }
    }

    /// [`Dispatcher::classify_hashed`] of a network packet that came with these link headers
    /// (its PIT token, whether it is a Nack, whether it carries an NB-CC signal), such as a
    /// reassembled one.
    pub fn classify_network(
        &self,
        packet: &[u8],
        token: Option<&[u8]>,
        nack: bool,
        signal: bool,
    ) -> (Route, PktKind, Option<u64>) {
        match self.route_network(packet, token, nack) {
            (Route::Worker(owner), PktKind::Data, h) if signal && self.workers > 1 => {
                (Route::AllWorkers { owner }, PktKind::Data, h)
            }
            r => r,
        }
    }

    fn route_network(
        &self,
        bytes: &[u8],
        token: Option<&[u8]>,
        nack: bool,
    ) -> (Route, PktKind, Option<u64>) {
        const BAD: (Route, PktKind, Option<u64>) = (Route::Malformed, PktKind::Other, None);
        let mut r = Reader::new(bytes);
        let Ok(outer) = r.read() else {
            return BAD;
        };
        if !r.is_empty() {
            return BAD;
        }
        let kind = match outer.typ {
            tt::INTEREST if nack => PktKind::Nack,
            tt::INTEREST => PktKind::Interest,
            tt::DATA if !nack => PktKind::Data,
            _ => return BAD,
        };
        let mut fields = outer.reader();
        let Ok(name_el) = fields.read() else {
            return BAD;
        };
        if name_el.typ != tt::NAME {
            return BAD;
        }
        let Ok(name) = NameView::from_element(name_el, &self.limits) else {
            return BAD;
        };
        if kind == PktKind::Interest && is_management(&name) {
            let localhost = is_generic(name.get(0), b"localhost");
            return (Route::Mgmt { localhost }, kind, None);
        }
        if kind != PktKind::Interest && token == Some(&mgmt::auth::FETCH_TOKEN[..]) {
            // A certificate (or a Nack) for a localhop command's chain, which management
            // fetched.
            return (Route::Mgmt { localhost: false }, kind, None);
        }
        if kind == PktKind::Data && is_nlsr_answer(&name) {
            return (Route::Mgmt { localhost: true }, kind, None);
        }
        if kind == PktKind::Data && is_hub_answer(&name) {
            return (Route::Mgmt { localhost: false }, kind, None);
        }
        let hash = full_name_hash(self.key, &name);
        let full = Some(hash);
        if kind != PktKind::Interest {
            if let Some(w) = token.and_then(|t| token_worker(t, self.workers)) {
                return (Route::Worker(w), kind, full);
            }
        }
        // Mapped by the full name, the owner comes from the same hash: one pass over the name.
        let mut owner = self.owner_with(&name, || hash);
        if kind == PktKind::Interest
            && self.l2_prefixes.is_some()
            && fields.read().is_ok_and(|e| e.typ == tt::CAN_BE_PREFIX)
        {
            owner = self.prefix_holder(owner, hash);
        }
        if kind == PktKind::Data && self.workers > 1 {
            (Route::AllWorkers { owner }, kind, full)
        } else {
            (Route::Worker(owner), kind, full)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use wire::lp::LpPacket;
    use wire::{Component, Data, Interest, Name};

    const KEY: HashKey = HashKey::fixed(1, 2);

    fn d(workers: usize) -> Dispatcher {
        Dispatcher::new(KEY, workers, WorkerMapping::Content, Limits::default())
    }

    fn owner(d: &Dispatcher, name: &Name) -> usize {
        let w = name.to_wire();
        d.owner(&NameView::decode(&w, &Limits::default()).unwrap())
    }

    #[test]
    fn content_mapping_keeps_a_content_on_one_worker() {
        let dd = d(4);
        let mut seen = [false; 4];
        for c in 0..64 {
            let base = Name::from_uri(&format!("/video/{c}/v=1")).unwrap();
            let w = owner(&dd, &base.clone().with(Component::segment(0)));
            seen[w] = true;
            for s in 1..40 {
                let chunk = base.clone().with(Component::segment(s));
                assert_chunk_on(&dd, &chunk, w);
            }
        }
        assert!(seen.iter().all(|&s| s), "contents spread over the workers");
    }

    /// Interest and Data of `chunk` meet on worker `w`, with or without an implicit digest.
    fn assert_chunk_on(dd: &Dispatcher, chunk: &Name, w: usize) {
        assert_eq!(owner(dd, chunk), w, "{chunk}");
        let Route::Worker(wi) = dd.route(&interest(&chunk.to_string())) else {
            panic!("{chunk}: not routed to one worker")
        };
        assert_eq!(wi, w, "{chunk}");
        assert_eq!(
            dd.route(&data(&chunk.to_string())),
            Route::AllWorkers { owner: w }
        );
        let digest = chunk.clone().with(Component::implicit_digest([7; 32]));
        assert_eq!(owner(dd, &digest), w, "{digest}");
    }

    #[test]
    fn batch_mapping_spreads_the_batches_of_one_content() {
        let dd = Dispatcher::new(
            KEY,
            4,
            WorkerMapping::Batch { batch: 10 },
            Limits::default(),
        );
        let base = Name::from_uri("/popular/v=1").unwrap();
        let mut per_worker = [0usize; 4];
        for b in 0..200u64 {
            let w = owner(&dd, &base.clone().with(Component::segment(b * 10)));
            per_worker[w] += 1;
            // Every chunk of a batch on the batch's worker, Interest and Data alike.
            for s in b * 10..b * 10 + 10 {
                let chunk = base.clone().with(Component::segment(s));
                assert_chunk_on(&dd, &chunk, w);
            }
        }
        // 200 batches of one content over 4 workers: each gets a fair share (binomial
        // mean 50, sd 6.1; 25 is 4 sd away).
        assert!(per_worker.iter().all(|&n| n >= 25), "{per_worker:?}");
        // Content mapping puts them all on one worker.
        let dc = d(4);
        let w0 = owner(&dc, &base.clone().with(Component::segment(0)));
        assert!((0..2000).all(|s| owner(&dc, &base.clone().with(Component::segment(s))) == w0));
        // Names that are not chunks go by their full name under every mapping.
        let n = Name::from_uri("/popular/v=1/meta").unwrap();
        assert_eq!(owner(&dd, &n), owner(&dc, &n));
        let full = Dispatcher::new(KEY, 4, WorkerMapping::Name, Limits::default());
        assert_eq!(owner(&full, &n), owner(&dc, &n));
    }

    fn interest(uri: &str) -> Vec<u8> {
        Interest::new(Name::from_uri(uri).unwrap(), [1, 2, 3, 4]).to_wire()
    }

    fn data(uri: &str) -> Vec<u8> {
        Data::new(Name::from_uri(uri).unwrap(), b"x".to_vec()).to_wire()
    }

    fn lp(frag: Vec<u8>, token: Option<&[u8]>, nack: bool) -> Vec<u8> {
        let mut p = if nack {
            LpPacket::nack(frag, wire::NackReason::NoRoute)
        } else {
            LpPacket {
                fragment: Some(frag),
                ..LpPacket::default()
            }
        };
        p.pit_token = token.map(<[u8]>::to_vec);
        p.to_wire()
    }

    #[test]
    fn the_full_name_hash_goes_with_every_packet_for_a_worker() {
        let uri = "/video/v=1/seg=3";
        let w = Name::from_uri(uri).unwrap().to_wire();
        let full =
            engine::hash::full_name_hash(KEY, &NameView::decode(&w, &Limits::default()).unwrap());
        let t = worker_token(1);
        for workers in [1, 4] {
            let dd = d(workers);
            for bytes in [
                interest(uri),
                data(uri),
                lp(interest(uri), None, false),
                lp(interest(uri), None, true),
                lp(data(uri), Some(&t), false),
            ] {
                let (route, _, hash) = dd.classify_hashed(&bytes);
                assert!(matches!(route, Route::Worker(_) | Route::AllWorkers { .. }));
                assert_eq!(hash, Some(full), "{workers} workers, {bytes:02x?}");
            }
            // Management and garbage carry none.
            assert_eq!(
                dd.classify_hashed(&interest("/localhost/nfd/faces/list")).2,
                None
            );
            assert_eq!(dd.classify_hashed(&[0x05, 0x01, 0x00]).2, None);
        }
    }

    #[test]
    fn interest_and_data_meet_on_one_worker() {
        let dd = d(4);
        let mut seen = [false; 4];
        for i in 0..200 {
            let uri = format!("/a/b/{i}");
            let Route::Worker(w) = dd.route(&interest(&uri)) else {
                panic!()
            };
            seen[w] = true;
            assert_eq!(dd.route(&data(&uri)), Route::AllWorkers { owner: w });
            // A Nack without a token goes by its Interest's name.
            assert_eq!(dd.route(&lp(interest(&uri), None, true)), Route::Worker(w));
            // An implicit-digest Interest goes where its Data's name goes.
            let with_digest = Name::from_uri(&uri)
                .unwrap()
                .with(Component::implicit_digest([7; 32]));
            let wire = Interest::new(with_digest, [1, 2, 3, 4]).to_wire();
            assert_eq!(dd.route(&wire), Route::Worker(w));
        }
        assert!(seen.iter().all(|&s| s), "names spread over the workers");
    }

    #[test]
    fn a_can_be_prefix_interest_goes_to_a_worker_whose_l2_may_answer_it() {
        let filters: L2Prefixes = (0..3)
            .map(|_| Arc::new(CountingBloom::with_fp_rate(100, 0.01).unwrap()))
            .collect::<Vec<_>>()
            .into();
        let dd = Dispatcher::new(KEY, 3, WorkerMapping::Content, Limits::default())
            .with_l2_prefixes(Some(filters.clone()));
        let cbp = |uri: &str| {
            let mut i = Interest::new(Name::from_uri(uri).unwrap(), [1, 2, 3, 4]);
            i.can_be_prefix = true;
            i.to_wire()
        };
        let hash = |uri: &str| {
            let w = Name::from_uri(uri).unwrap().to_wire();
            full_name_hash(KEY, &NameView::decode(&w, &Limits::default()).unwrap())
        };
        for c in 0..30 {
            let uri = format!("/files/{c}");
            let Route::Worker(owner) = dd.route(&interest(&uri)) else {
                panic!()
            };
            // Nobody's L2 holds it: the owner.
            assert_eq!(dd.route(&cbp(&uri)), Route::Worker(owner));
            // Another worker's L2 holds chunks under it: there, CanBePrefix only.
            let other = (owner + 1 + c % 2) % 3;
            filters[other].insert(hash(&uri));
            assert_eq!(dd.route(&cbp(&uri)), Route::Worker(other), "{uri}");
            assert_eq!(dd.route(&lp(cbp(&uri), None, false)), Route::Worker(other));
            assert_eq!(dd.route(&interest(&uri)), Route::Worker(owner));
            // The owner's L2 holds some too: the owner.
            filters[owner].insert(hash(&uri));
            assert_eq!(dd.route(&cbp(&uri)), Route::Worker(owner));
            // Without filters, as before.
            assert_eq!(d(3).route(&cbp(&uri)), Route::Worker(owner));
        }
    }

    #[test]
    fn a_prefix_miss_hands_on_to_each_later_candidate_once_in_order() {
        let filters: L2Prefixes = (0..4)
            .map(|_| Arc::new(CountingBloom::with_fp_rate(100, 0.01).unwrap()))
            .collect::<Vec<_>>()
            .into();
        let dd = Dispatcher::new(KEY, 4, WorkerMapping::Content, Limits::default())
            .with_l2_prefixes(Some(filters.clone()));
        let wire = Name::from_uri("/files/x").unwrap().to_wire();
        let name = NameView::decode(&wire, &Limits::default()).unwrap();
        let owner = dd.owner(&name);
        let hash = full_name_hash(KEY, &name);
        // Nobody may hold it: the owner forwards.
        assert_eq!(dd.next_prefix_holder(owner, &name), None);
        // Every worker may: owner, owner+1, owner+2, owner+3, then nobody.
        for f in filters.iter() {
            f.insert(hash);
        }
        let mut at = owner;
        let mut visited = vec![owner];
        while let Some(next) = dd.next_prefix_holder(at, &name) {
            visited.push(next);
            at = next;
        }
        let order: Vec<usize> = (0..4).map(|k| (owner + k) % 4).collect();
        assert_eq!(visited, order);
        // Only the last worker in order may: the owner hands straight to it, and it is last.
        for (k, f) in filters.iter().enumerate() {
            if k != order[3] {
                f.remove(hash);
            }
        }
        assert_eq!(dd.next_prefix_holder(owner, &name), Some(order[3]));
        assert_eq!(dd.next_prefix_holder(order[3], &name), None);
        // Past it in order, an earlier worker is never visited again.
        filters[owner].insert(hash);
        assert_eq!(dd.next_prefix_holder(order[3], &name), None);
        // Without filters nothing is handed on.
        assert_eq!(d(4).next_prefix_holder(owner, &name), None);
    }

    #[test]
    fn our_tokens_pick_the_worker() {
        let dd = d(4);
        let t = worker_token(2);
        assert_eq!(dd.route(&lp(data("/x"), Some(&t), false)), Route::Worker(2));
        assert_eq!(
            dd.route(&lp(interest("/x"), Some(&t), true)),
            Route::Worker(2)
        );
        // Out of range or foreign tokens are ignored.
        let bad = worker_token(9);
        assert!(matches!(
            dd.route(&lp(data("/x"), Some(&bad), false)),
            Route::AllWorkers { .. }
        ));
        assert!(matches!(
            dd.route(&lp(data("/x"), Some(b"abcd"), false)),
            Route::AllWorkers { .. }
        ));
        // One worker: everything to it.
        assert_eq!(d(1).route(&data("/x")), Route::Worker(0));
    }

    #[test]
    fn management_idle_fragments_and_garbage() {
        let dd = d(2);
        assert_eq!(
            dd.route(&interest("/localhost/nfd/rib/list")),
            Route::Mgmt { localhost: true }
        );
        assert_eq!(
            dd.route(&interest("/localhop/nfd/rib/register")),
            Route::Mgmt { localhost: false }
        );
        assert!(matches!(
            dd.route(&interest("/localhost/other")),
            Route::Worker(_)
        ));
        // NLSR's answers to readvertisements go to management; its other Data, and Interests
        // for its commands, are forwarded.
        for verb in ["register", "unregister"] {
            let answer = data(&format!("/localhost/nlsr/rib/{verb}/params"));
            assert_eq!(dd.route(&answer), Route::Mgmt { localhost: true });
            let cmd = interest(&format!("/localhost/nlsr/rib/{verb}/params"));
            assert!(matches!(dd.route(&cmd), Route::Worker(_)));
        }
        // A hub's answers to prefix propagation too (from a non-local face).
        for verb in ["register", "unregister"] {
            let answer = data(&format!("/localhop/nfd/rib/{verb}/params"));
            assert_eq!(dd.route(&answer), Route::Mgmt { localhost: false });
        }
        for other in [
            "/localhost/nlsr/lsdb/list",
            "/localhost/nlsr/rib/list",
            "/localhop/nfd/faces/create",
        ] {
            assert!(!matches!(dd.route(&data(other)), Route::Mgmt { .. }));
        }
        // Certificates (and Nacks) answering management's fetches, by their PIT token: any
        // name; an Interest with that token is forwarded as any other.
        let token = &mgmt::auth::FETCH_TOKEN[..];
        let cert = data("/ndn/site/KEY/k/ndn/v=1");
        assert_eq!(
            dd.route(&lp(cert.clone(), Some(token), false)),
            Route::Mgmt { localhost: false }
        );
        let fetch = interest("/ndn/site/KEY/k");
        assert_eq!(
            dd.route(&lp(fetch.clone(), Some(token), true)),
            Route::Mgmt { localhost: false }
        );
        assert!(matches!(
            dd.route(&lp(fetch, Some(token), false)),
            Route::Worker(_)
        ));
        assert!(!matches!(
            dd.route(&lp(cert, Some(&token[..3]), false)),
            Route::Mgmt { .. }
        ));
        assert_eq!(dd.route(&LpPacket::default().to_wire()), Route::Idle);
        let frag = LpPacket {
            sequence: Some(1),
            frag_index: Some(0),
            frag_count: Some(2),
            fragment: Some(vec![5, 0]),
            ..LpPacket::default()
        };
        assert_eq!(dd.route(&frag.to_wire()), Route::Reassemble);
        for bad in [
            &[][..],
            &[5, 1],
            &[6, 0],
            &[9, 2, 7, 0],
            &[0x64, 2, 0x50, 3],
        ] {
            assert_eq!(dd.route(bad), Route::Malformed, "{bad:?}");
        }
        // A Data inside a Nack is malformed.
        assert_eq!(dd.route(&lp(data("/x"), None, true)), Route::Malformed);
    }
}
