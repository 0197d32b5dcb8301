//! The simulation loop: the world (router, faces, clock, one random source), its steps, and
//! the checks after each.

use std::collections::{BTreeMap, VecDeque};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::Ordering;

use engine::table::pit_cs::FaceId;
use wire::{Interest, Limits};

use super::actors::{admin_command, hostile_packet, register, RECENT};
use super::check::on_delivery;
use super::faces::{Role, SimFace};
use super::net::{Routed, SimRouter};
use super::packets::{self, Received, PREFIXES};
use super::rng::Rng;
use super::{fnv, Outcome, SimConfig, SimFailure, SimStats, FNV_OFFSET};

/// First face id the simulation gives (clear of the ids NFD reserves).
const FIRST_FACE_ID: FaceId = 300;

/// Turns of the final drain, a simulated second apart.
const DRAIN_ROUNDS: u64 = 12;

/// Runs `cfg`: its steps, each followed by the checks, then a drain in which the traffic
/// stops and every PIT must empty. A broken invariant, or a panic, ends the run with the seed
/// and the step.
pub fn run(cfg: &SimConfig) -> Result<Outcome, SimFailure> {
    assert!((1..=8).contains(&cfg.workers), "1 to 8 workers");
    let mut sim = Sim::new(cfg.clone());
    let result = catch_unwind(AssertUnwindSafe(|| sim.run_all()));
    let what = match result {
        Ok(Ok(())) => {
            return Ok(Outcome {
                seed: cfg.seed,
                steps: cfg.steps,
                trace_hash: sim.trace,
                stats: sim.stats.clone(),
            })
        }
        Ok(Err(what)) => what,
        Err(panic) => {
            let text = panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_default();
            format!("panic: {text}")
        }
    };
    Err(SimFailure {
        seed: cfg.seed,
        step: sim.step,
        what,
        trace_hash: sim.trace,
    })
}

/// The world.
struct Sim {
    cfg: SimConfig,
    rng: Rng,
    router: SimRouter,
    faces: BTreeMap<FaceId, SimFace>,
    next_id: FaceId,
    step: u64,
    trace: u64,
    stats: SimStats,
    /// The corruption hook fired.
    corrupted: bool,
    /// The L2 bugs planted so far (see [`super::l2::Plants`]).
    planted: super::l2::Plants,
    /// Consumers' recent Interests, for the hostile face's replays.
    recent: VecDeque<Interest>,
    limits: Limits,
}

impl Sim {
    fn new(cfg: SimConfig) -> Self {
        let mut rng = Rng::new(cfg.seed);
        let mut key = [0u8; 16];
        key[..8].copy_from_slice(&rng.next_u64().to_le_bytes());
        key[8..].copy_from_slice(&rng.next_u64().to_le_bytes());
        let router = SimRouter::new(&cfg, key);
        Sim {
            cfg,
            rng,
            router,
            faces: BTreeMap::new(),
            next_id: FIRST_FACE_ID,
            step: 0,
            trace: FNV_OFFSET,
            stats: SimStats::default(),
            corrupted: false,
            planted: super::l2::Plants::default(),
            recent: VecDeque::new(),
            limits: Limits::default(),
        }
    }

    fn now(&self) -> u64 {
        self.router.clock.load(Ordering::Relaxed)
    }

    fn advance(&mut self, ms: u64) {
        self.router.clock.fetch_add(ms, Ordering::Relaxed);
    }

    fn run_all(&mut self) -> Result<(), String> {
        self.setup()?;
        for _ in 0..self.cfg.steps {
            self.step += 1;
            self.one_step()?;
            self.check_bounds()?;
        }
        self.router.l2_checks(true, &mut self.stats)?;
        self.drain()?;
        self.router.l2_checks(true, &mut self.stats)?;
        self.router.l2_final()?;
        self.router.l2_totals(&mut self.stats);
        Ok(())
    }

    /// With L2: one L2 turn (a disk step, perhaps a crash or a restart, the checks).
    fn l2_turn(&mut self) -> Result<(), String> {
        let Some(cfg) = self.cfg.l2 else {
            return Ok(());
        };
        let f = self.cfg.faults;
        let due = |at: Option<u64>, done: bool| !done && at.is_some_and(|s| self.step >= s);
        let p = self.planted;
        let mut plants = super::l2::Plants {
            slot: due(f.plant_at, p.slot),
            unfilter: due(f.unfilter_at, p.unfilter),
            forget: due(f.forget_at, p.forget),
        };
        let before = plants;
        self.router
            .l2_step(&mut self.rng, &cfg, self.step, &mut plants, &mut self.stats)?;
        self.planted.slot |= before.slot && !plants.slot;
        self.planted.unfilter |= before.unfilter && !plants.unfilter;
        self.planted.forget |= before.forget && !plants.forget;
        Ok(())
    }

    /// The faces (three consumers, two producers of `/p0`, one of each other prefix, the
    /// hostile face, the administrator) and the administrator's first routes.
    fn setup(&mut self) -> Result<(), String> {
        let admin = self.add_face(Role::Admin);
        for _ in 0..3 {
            self.add_face(Role::Consumer);
        }
        for k in std::iter::once(0).chain(0..PREFIXES) {
            self.add_face(Role::Producer(k));
        }
        if self.cfg.faults.hostile {
            let h = self.add_face(Role::Hostile);
            let (verb, p) = register(1, h, 50);
            self.command(admin, "rib", verb, &p)?;
        }
        let producers: Vec<(FaceId, usize)> = self
            .faces
            .values()
            .filter_map(|f| match f.role {
                Role::Producer(k) => Some((f.id, k)),
                _ => None,
            })
            .collect();
        for (id, k) in producers {
            let (verb, p) = register(k, id, 10);
            self.command(admin, "rib", verb, &p)?;
        }
        // Management takes the setup before the traffic starts.
        while self.router.step_mgmt() {
            self.mgmt_effects()?;
        }
        Ok(())
    }

    fn add_face(&mut self, role: Role) -> FaceId {
        let id = self.next_id;
        self.next_id += 1;
        let face = SimFace::new(id, role);
        self.router.face_up(id, face.local);
        self.faces.insert(id, face);
        id
    }

    fn admin(&self) -> FaceId {
        self.faces
            .values()
            .find(|f| f.role == Role::Admin)
            .map_or(0, |f| f.id)
    }

    /// The administrator sends a command.
    fn command(
        &mut self,
        admin: FaceId,
        module: &str,
        verb: &str,
        p: &wire::nfd::ControlParameters,
    ) -> Result<(), String> {
        let i = packets::command(&mut self.rng, module, verb, p);
        let now = self.now();
        let Some(f) = self.faces.get_mut(&admin) else {
            return Ok(());
        };
        let bytes = f.send_interest(&i, None, now);
        self.stats.commands += 1;
        self.send(admin, &bytes)
    }

    /// A face sends a packet: the I/O thread routes it at once.
    fn send(&mut self, face: FaceId, bytes: &[u8]) -> Result<(), String> {
        let local = self.faces.get(&face).is_some_and(|f| f.local);
        self.trace = fnv(fnv(self.trace, &face.to_le_bytes()), bytes);
        self.stats.sent += 1;
        if !self.router.l2.is_empty() {
            self.router.l2_names.note(bytes, &self.limits);
        }
        match self.router.receive(face, local, bytes) {
            Routed::Workers { refused } => self.stats.ring_full += u64::from(refused),
            Routed::Malformed => self.stats.malformed += 1,
            Routed::NoBuffer => return Err("the pool ran out of buffers".into()),
            Routed::Mgmt(_) | Routed::Idle => {}
        }
        Ok(())
    }

    fn one_step(&mut self) -> Result<(), String> {
        self.l2_turn()?;
        let tick = self.rng.below(2);
        self.advance(tick);
        let f = self.cfg.faults;
        match self.rng.below(100) {
            0..=19 => self.consumer_sends(),
            20..=27 if f.hostile => self.hostile_sends(),
            20..=27 => self.consumer_sends(),
            28..=43 => self.face_reads(),
            44..=63 => self.worker_steps(),
            64..=75 => {
                self.drain_outputs();
                Ok(())
            }
            76..=83 => {
                if self.router.step_mgmt() {
                    self.mgmt_effects()?;
                }
                Ok(())
            }
            84..=85 if f.admin => {
                let admin = self.admin();
                let (m, v, p) = admin_command(&mut self.rng, &self.faces);
                self.command(admin, m, v, &p)
            }
            84..=92 => self.producers_release(),
            _ => {
                let ms = if f.clock_jumps && self.rng.chance(5) {
                    1_000 + self.rng.below(4_000)
                } else {
                    1 + self.rng.below(50)
                };
                self.advance(ms);
                Ok(())
            }
        }
    }

    fn pick(&mut self, role: impl Fn(Role) -> bool) -> Option<FaceId> {
        let ids: Vec<FaceId> = self
            .faces
            .values()
            .filter(|f| role(f.role))
            .map(|f| f.id)
            .collect();
        (!ids.is_empty()).then(|| ids[self.rng.index(ids.len())])
    }

    fn consumer_sends(&mut self) -> Result<(), String> {
        let Some(id) = self.pick(|r| r == Role::Consumer) else {
            return Ok(());
        };
        let now = self.now();
        let Some(face) = self.faces.get_mut(&id) else {
            return Ok(());
        };
        let Some(bytes) = face.consumer_interest(&mut self.rng, now) else {
            return Ok(());
        };
        if let Ok(Received::Interest { interest, .. }) = packets::decode(&bytes, &self.limits) {
            if self.recent.len() == RECENT {
                self.recent.pop_front();
            }
            self.recent.push_back(interest.to_interest());
        }
        self.send(id, &bytes)
    }

    fn hostile_sends(&mut self) -> Result<(), String> {
        let Some(id) = self.pick(|r| r == Role::Hostile) else {
            return Ok(());
        };
        let now = self.now();
        let Some(face) = self.faces.get_mut(&id) else {
            return Ok(());
        };
        let bytes = hostile_packet(face, &mut self.rng, &self.recent, now);
        self.send(id, &bytes)
    }

    /// A face reads the next packet in its queue: the checks, then its answer (a producer's
    /// Data, the hostile face's later echo).
    fn face_reads(&mut self) -> Result<(), String> {
        let Some(id) = self.pick_with_inbox() else {
            return Ok(());
        };
        self.read_one(id)
    }

    fn pick_with_inbox(&mut self) -> Option<FaceId> {
        let ids: Vec<FaceId> = self
            .faces
            .values()
            .filter(|f| !f.inbox.is_empty())
            .map(|f| f.id)
            .collect();
        (!ids.is_empty()).then(|| ids[self.rng.index(ids.len())])
    }

    fn read_one(&mut self, id: FaceId) -> Result<(), String> {
        let now = self.now();
        let faults = self.cfg.faults.producers;
        let Some(face) = self.faces.get_mut(&id) else {
            return Ok(());
        };
        let Some(bytes) = face.inbox.pop_front() else {
            return Ok(());
        };
        self.stats.checked += 1;
        let answers = match on_delivery(face, &bytes, &self.limits)? {
            Received::Data { .. } => {
                self.stats.data += 1;
                Vec::new()
            }
            Received::Nack(_) => {
                self.stats.nacks += 1;
                Vec::new()
            }
            Received::Interest { interest, token } => match face.role {
                Role::Producer(_) => {
                    face.producer_answer(&interest, token, &mut self.rng, faults, now)
                }
                Role::Hostile => {
                    face.hear(&bytes);
                    Vec::new()
                }
                _ => Vec::new(),
            },
            Received::Idle => Vec::new(),
        };
        for a in answers {
            self.send(id, &a)?;
        }
        Ok(())
    }

    fn producers_release(&mut self) -> Result<(), String> {
        let now = self.now();
        let mut out = Vec::new();
        for f in self.faces.values_mut() {
            out.extend(f.due(now).into_iter().map(|d| (f.id, d)));
        }
        for (id, d) in out {
            self.send(id, &d)?;
        }
        Ok(())
    }

    /// One turn of a worker, then its table sizes against their capacities.
    fn worker_steps(&mut self) -> Result<(), String> {
        let w = self.rng.index(self.cfg.workers);
        if self.router.step_worker(w) {
            self.stats.batches += 1;
        }
        let Some(s) = self.router.snapshot(w) else {
            return Ok(());
        };
        self.stats.max_pit = self.stats.max_pit.max(s.pit_len as u64);
        if s.pit_len > self.router.pit_capacity {
            return Err(format!(
                "worker {w}: {} PIT entries, capacity {}",
                s.pit_len, self.router.pit_capacity
            ));
        }
        if s.cs_len > s.cs_capacity {
            return Err(format!(
                "worker {w}: {} CS entries, capacity {}",
                s.cs_len, s.cs_capacity
            ));
        }
        Ok(())
    }

    /// The I/O thread drains the workers' outputs into the faces' queues.
    fn drain_outputs(&mut self) {
        let mut out = Vec::new();
        self.router
            .drain_outputs(|face, bytes| out.push((face, bytes.to_vec())));
        for (face, bytes) in out {
            self.deliver(face, bytes);
        }
    }

    /// Queues a packet on a face (dropped and counted if the face is closed or its queue is
    /// full); the corruption hook may flip its last byte.
    fn deliver(&mut self, id: FaceId, mut bytes: Vec<u8>) {
        self.trace = fnv(fnv(self.trace, &id.to_le_bytes()), &bytes);
        let Some(face) = self.faces.get_mut(&id) else {
            self.stats.to_closed_face += 1;
            return;
        };
        if face.inbox.len() >= self.cfg.face_queue {
            self.stats.face_queue_full += 1;
            return;
        }
        let corrupt = !self.corrupted
            && face.role == Role::Consumer
            && self.cfg.faults.corrupt_at.is_some_and(|s| self.step >= s)
            && matches!(
                packets::decode(&bytes, &self.limits),
                Ok(Received::Data { .. })
            );
        if corrupt {
            self.corrupted = true;
            if let Some(b) = bytes.last_mut() {
                *b ^= 0x5a;
            }
        }
        face.inbox.push_back(bytes);
    }

    /// Carries out what management did: its answers go to the faces; a destroyed face
    /// closes, and a new one of the same role takes its place (a producer's route with it).
    fn mgmt_effects(&mut self) -> Result<(), String> {
        loop {
            let next = self.router.effects.borrow_mut().sent.pop_front();
            let Some((face, bytes)) = next else {
                break;
            };
            self.deliver(face, bytes);
        }
        let destroyed = std::mem::take(&mut self.router.effects.borrow_mut().destroyed);
        for id in destroyed {
            let Some(face) = self.faces.remove(&id) else {
                continue;
            };
            self.stats.destroyed += 1;
            self.router.face_down(id);
            let new = self.add_face(face.role);
            if let Role::Producer(k) = face.role {
                let (verb, p) = register(k, new, 10);
                let admin = self.admin();
                self.command(admin, "rib", verb, &p)?;
            }
        }
        Ok(())
    }

    /// The bounds every step must keep.
    fn check_bounds(&self) -> Result<(), String> {
        for (w, l) in self.router.links.iter().enumerate() {
            if l.input.len() > l.input.capacity() || l.output.len() > l.output.capacity() {
                return Err(format!("worker {w}: a ring over its capacity"));
            }
        }
        if self.router.pool.allocated() > self.cfg.buffers {
            return Err(format!(
                "{} pool buffers allocated, capacity {}",
                self.router.pool.allocated(),
                self.cfg.buffers
            ));
        }
        if self.router.mgmt_pending() > self.cfg.mgmt_queue {
            return Err(format!(
                "{} management Interests waiting, capacity {}",
                self.router.mgmt_pending(),
                self.cfg.mgmt_queue
            ));
        }
        match self
            .faces
            .values()
            .find(|f| f.inbox.len() > self.cfg.face_queue)
        {
            Some(f) => Err(format!("face {}: queue over its capacity", f.id)),
            None => Ok(()),
        }
    }

    /// The traffic stops; the clock moves a second a turn; every worker, management and face
    /// runs until nothing is left; then every PIT must be empty (nothing leaked).
    fn drain(&mut self) -> Result<(), String> {
        for _ in 0..DRAIN_ROUNDS {
            self.step += 1;
            self.advance(1_000);
            for _ in 0..64 {
                let mut busy = self.router.l2_drain();
                for w in 0..self.cfg.workers {
                    busy |= self.router.step_worker(w);
                }
                while self.router.step_mgmt() {
                    self.mgmt_effects()?;
                    busy = true;
                }
                self.drain_outputs();
                while let Some(id) = self.pick_with_inbox() {
                    self.read_one(id)?;
                    busy = true;
                }
                self.producers_release()?;
                self.check_bounds()?;
                if !busy {
                    break;
                }
            }
        }
        for w in 0..self.cfg.workers {
            let pit = self.router.snapshot(w).map_or(0, |s| s.pit_len);
            if pit > 0 {
                return Err(format!(
                    "worker {w}: {pit} PIT entries left after every lifetime passed"
                ));
            }
        }
        Ok(())
    }
}
