//! The unit tests' fake forwarder, and helpers to drive a manager of it.

use std::cell::RefCell;
use std::sync::Arc;
use std::time::Instant;

use engine::fw::strategy::StrategyKind;
use engine::hash::HashKey;
use engine::table::fib::Fib;
use engine::table::pit_cs::{CsPolicy, FaceId};
use face::{FaceCounters, FaceDesc, FaceParams, FaceUpdate, LinkOptions};
use wire::nfd::{ControlParameters, ControlResponse, FacePersistency};
use wire::{DataView, Interest, Limits, Name};

use crate::forwarder::{CreateFaceError, Forwarder, UpdateFaceError, WorkerStats};
use crate::test_support::{cp_component, v03_interest};
use crate::{Manager, ManagerParts};

/// A Data sent: (face, PIT token, bytes).
pub(crate) type Sent = (FaceId, Option<Vec<u8>>, Vec<u8>);

/// A forwarder that records what it is asked and answers from its fields.
#[derive(Default)]
pub(crate) struct Fake {
    pub faces: RefCell<Vec<FaceDesc>>,
    /// What the next `create_face` answers (`None`: a new face).
    pub create: RefCell<Option<CreateFaceError>>,
    /// What `create_face` was asked.
    pub created: RefCell<Vec<(String, FaceParams)>>,
    /// What the next `update_face` answers (`None`: the face after the change).
    pub update: RefCell<Option<UpdateFaceError>>,
    /// What `update_face` was asked.
    pub updated: RefCell<Vec<(FaceId, FaceUpdate)>>,
    pub sent: RefCell<Vec<Sent>>,
    pub destroyed: RefCell<Vec<FaceId>>,
    pub strategies: RefCell<Vec<(Name, Option<StrategyKind>)>>,
    pub cs_configs: RefCell<Vec<(usize, CsPolicy)>>,
    pub instances: RefCell<Vec<(Name, Option<engine::fw::strategy::Strategy>)>>,
    pub cs_flags: RefCell<Vec<(bool, bool)>>,
    pub erase_asked: RefCell<Vec<(Name, usize)>>,
    /// How many entries `cs_erase` finds.
    pub erasable: usize,
    pub stats: Vec<WorkerStats>,
}

pub(crate) fn face(id: FaceId, local: bool) -> FaceDesc {
    FaceDesc {
        id,
        uri: format!("udp4://192.0.2.{id}:6363"),
        local_uri: "udp4://0.0.0.0:6363".into(),
        local,
        persistency: FacePersistency::Persistent,
        mtu: Some(1400),
        options: LinkOptions::default(),
        counters: FaceCounters {
            in_interests: u64::from(id),
            ..FaceCounters::default()
        },
    }
}

impl Forwarder for Fake {
    fn faces(&self) -> Vec<FaceDesc> {
        self.faces.borrow().clone()
    }

    fn channels(&self) -> Vec<String> {
        vec!["tcp4://0.0.0.0:6363".into(), "unix:///run/nfd.sock".into()]
    }

    fn create_face(&self, uri: &str, params: &FaceParams) -> Result<FaceDesc, CreateFaceError> {
        self.created.borrow_mut().push((uri.to_string(), *params));
        if let Some(e) = self.create.borrow_mut().take() {
            return Err(e);
        }
        let mut d = face(self.faces.borrow().len() as FaceId + 1, false);
        d.uri = uri.to_string();
        d.persistency = params.persistency;
        d.mtu = params.mtu.map(|m| m as u64);
        d.options = params.options;
        self.faces.borrow_mut().push(d.clone());
        Ok(d)
    }

    /// Makes every change asked (the face table's refusals are its own tests'), unless told to
    /// answer an error.
    fn update_face(&self, id: FaceId, u: &FaceUpdate) -> Result<FaceDesc, UpdateFaceError> {
        self.updated.borrow_mut().push((id, *u));
        if let Some(e) = self.update.borrow_mut().take() {
            return Err(e);
        }
        let mut faces = self.faces.borrow_mut();
        let f = faces
            .iter_mut()
            .find(|f| f.id == id)
            .ok_or(UpdateFaceError::NotFound)?;
        let o = &mut f.options;
        f.persistency = u.persistency.unwrap_or(f.persistency);
        f.mtu = u.mtu.map(|m| m as u64).or(f.mtu);
        o.local_fields = u.local_fields.unwrap_or(o.local_fields);
        o.lp_reliability = u.lp_reliability.unwrap_or(o.lp_reliability);
        o.congestion_marking = u.congestion_marking.unwrap_or(o.congestion_marking);
        Ok(f.clone())
    }

    fn destroy_face(&self, id: FaceId) {
        self.destroyed.borrow_mut().push(id);
    }

    fn send(&self, face: FaceId, pit_token: Option<&[u8]>, data: &[u8]) {
        let token = pit_token.map(<[u8]>::to_vec);
        self.sent.borrow_mut().push((face, token, data.to_vec()));
    }

    fn set_strategy(&self, prefix: &Name, kind: Option<StrategyKind>) {
        self.strategies.borrow_mut().push((prefix.clone(), kind));
    }

    fn set_strategy_instance(&self, prefix: &Name, s: Option<engine::fw::strategy::Strategy>) {
        self.instances.borrow_mut().push((prefix.clone(), s));
        self.set_strategy(prefix, s.map(|s| s.kind));
    }

    fn cs_flags(&self, admit: bool, serve: bool) {
        self.cs_flags.borrow_mut().push((admit, serve));
    }

    fn cs_config(&self, capacity: usize, policy: CsPolicy) {
        self.cs_configs.borrow_mut().push((capacity, policy));
    }

    fn cs_erase(&self, prefix: &Name, limit: usize) -> usize {
        self.erase_asked.borrow_mut().push((prefix.clone(), limit));
        self.erasable.min(limit)
    }

    fn stats(&self) -> Vec<WorkerStats> {
        self.stats.clone()
    }
}

/// A manager of a fake with faces 1 (local) and 2 (not).
pub(crate) fn manager(fake: Fake) -> Manager<Fake> {
    manager_with(fake, crate::RibOptions::default())
}

/// [`manager`] with these RIB options.
pub(crate) fn manager_with(fake: Fake, rib: crate::RibOptions) -> Manager<Fake> {
    fake.faces.replace(vec![face(1, true), face(2, false)]);
    let fib = Arc::new(Fib::new(HashKey::from_bytes([3; 16]), 1024, 4));
    let parts = ManagerParts {
        fib,
        start: Instant::now(),
        cs_capacity: 1000,
        cs_policy: CsPolicy::Lru,
        limits: Limits::default(),
        rib,
    };
    Manager::new(fake, parts)
}

pub(crate) fn name(uri: &str) -> Name {
    Name::from_uri(uri).unwrap()
}

/// The last Data sent, as (face, token, Data bytes).
pub(crate) fn last_sent(m: &Manager<Fake>) -> Sent {
    m.forwarder()
        .sent
        .borrow()
        .last()
        .cloned()
        .expect("an answer")
}

/// Sends a signed command from `from` and decodes the ControlResponse answering it.
pub(crate) fn command(
    m: &mut Manager<Fake>,
    from: FaceId,
    what: &str,
    p: ControlParameters,
) -> ControlResponse {
    let local = m
        .forwarder()
        .faces()
        .iter()
        .any(|f| f.id == from && f.local);
    let interest = v03_interest(&format!("/localhost/nfd/{what}"), cp_component(&p));
    let before = m.forwarder().sent.borrow().len();
    m.on_interest(from, local, &interest);
    assert_eq!(
        m.forwarder().sent.borrow().len(),
        before + 1,
        "{what}: one answer"
    );
    let (to, token, data) = last_sent(m);
    assert_eq!((to, token), (from, None));
    let dv = DataView::decode(&data, &Limits::default()).unwrap();
    ControlResponse::decode(dv.content().unwrap()).unwrap()
}

pub(crate) fn code(r: &ControlResponse) -> (u64, &str) {
    (r.status_code, r.status_text.as_str())
}

pub(crate) fn params(r: &ControlResponse) -> ControlParameters {
    r.parameters().cloned().expect("parameters")
}

/// Fetches a dataset from face 1 and returns its content (one segment).
pub(crate) fn dataset(m: &mut Manager<Fake>, what: &str) -> Vec<u8> {
    let i = Interest::new(name(&format!("/localhost/nfd/{what}")), [1, 2, 3, 4]).to_wire();
    m.on_interest(1, true, &i);
    let (_, _, data) = last_sent(m);
    let dv = DataView::decode(&data, &Limits::default()).unwrap();
    dv.content().unwrap().to_vec()
}
